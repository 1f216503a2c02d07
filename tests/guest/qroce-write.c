/*
 * qroce-write: RDMA WRITE correctness through the device.
 *
 *   qroce-write [-d DEVICE] [-g GID_INDEX] [-n ROUNDS] [-s SEED]
 *
 * QP a writes into an MR that QP b's side registered with remote write
 * (both QPs on one device, so the frames loop back inside it): random
 * sizes (up to 64 KiB, many packets), random offsets, SGE lists of 1 to 4
 * entries; each target is compared byte for byte with what was sent, and
 * the bytes around it must be untouched.  WRITE with immediate consumes a
 * receive and reports the immediate and the length.  A wrong rkey, a range
 * outside the MR and an MR without remote write end in
 * IBV_WC_REM_ACCESS_ERR with the target unchanged.
 */
#include <getopt.h>
#include "qr_verbs.h"

#define BIG (256 * 1024)

static uint8_t *src, *dst;
static struct ibv_mr *src_mr, *dst_mr, *ro_mr;

static int write_wr(struct ibv_qp *qp, struct ibv_sge *sg, int n,
                    uint64_t raddr, uint32_t rkey, int imm, uint64_t id)
{
    struct ibv_send_wr wr = {
        .wr_id = id, .sg_list = sg, .num_sge = n,
        .opcode = imm ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE,
        .send_flags = IBV_SEND_SIGNALED,
        .imm_data = htobe32(0x51524f43),
        .wr.rdma = { .remote_addr = raddr, .rkey = rkey },
    }, *bad;

    return ibv_post_send(qp, &wr, &bad);
}

/* Random writes: returns the number of rounds that compared equal. */
static int random_writes(struct pair *p, int rounds, unsigned int *seed)
{
    struct ibv_wc wc;
    int r, good = 0;

    for (r = 0; r < rounds; r++) {
        struct ibv_sge sg[4];
        uint32_t len = 1 + rand_r(seed) % (64 * 1024);
        uint32_t soff = rand_r(seed) % (BIG - len - 16);
        uint32_t doff = 8 + rand_r(seed) % (BIG - len - 16);
        int nsg = 1 + rand_r(seed) % 4, i, ok;
        uint32_t left = len, o = soff;

        for (i = 0; i < nsg; i++) {
            uint32_t k = i == nsg - 1 ? left : left / (nsg - i);

            sg[i].addr = (uintptr_t)src + o;
            sg[i].length = k;
            sg[i].lkey = src_mr->lkey;
            o += k;
            left -= k;
        }
        for (i = 0; i < (int)len; i++) {
            src[soff + i] = (uint8_t)rand_r(seed);
        }
        memset(dst, 0xa5, BIG);
        if (write_wr(p->a, sg, nsg, (uintptr_t)dst + doff, dst_mr->rkey, 0,
                     r)) {
            break;
        }
        if (!poll1(p->cq, &wc) || wc.status != IBV_WC_SUCCESS ||
            wc.opcode != IBV_WC_RDMA_WRITE || wc.wr_id != (uint64_t)r) {
            printf("round %d: completion %s\n", r,
                   ibv_wc_status_str(wc.status));
            break;
        }
        ok = !memcmp(dst + doff, src + soff, len) &&
             dst[doff - 1] == 0xa5 && dst[doff + len] == 0xa5;
        if (!ok) {
            printf("round %d: %u bytes at %u differ\n", r, len, doff);
            break;
        }
        good++;
    }
    return good;
}

/* A write that must fail with REM_ACCESS_ERR and change nothing. */
static void bad_write(const char *what, uint64_t raddr, uint32_t rkey)
{
    struct ibv_sge sg = { (uintptr_t)src, 100, 0 };
    struct ibv_wc wc;
    struct pair p;
    char msg[160];
    int n;

    sg.lkey = src_mr->lkey;
    make_pair(&p);
    memset(dst, 0x5a, BIG);
    memset(src, 0x11, 100);
    write_wr(p.a, &sg, 1, raddr, rkey, 0, 1);
    n = poll1(p.cq, &wc);
    snprintf(msg, sizeof(msg), "%s: write completes with remote access error (got %s)",
             what, n ? ibv_wc_status_str(wc.status) : "nothing");
    check(n && wc.status == IBV_WC_REM_ACCESS_ERR, msg);
    for (n = 0; n < BIG && dst[n] == 0x5a; n++) {
    }
    snprintf(msg, sizeof(msg), "%s: target memory unchanged", what);
    check(n == BIG, msg);
    ibv_destroy_qp(p.a);
    ibv_destroy_qp(p.b);
    ibv_destroy_cq(p.cq);
}

int main(int argc, char **argv)
{
    const char *dev = "qroce_0";
    unsigned int seed = 1;
    int rounds = 200, c, good, n;
    struct ibv_wc wc;
    struct pair p;
    char msg[120];

    while ((c = getopt(argc, argv, "d:g:n:s:")) != -1) {
        switch (c) {
        case 'd':
            dev = optarg;
            break;
        case 'g':
            gid_index = atoi(optarg);
            break;
        case 'n':
            rounds = atoi(optarg);
            break;
        case 's':
            seed = strtoul(optarg, NULL, 0);
            break;
        default:
            fprintf(stderr, "usage: qroce-write [-d DEVICE] [-g GID_INDEX] "
                    "[-n ROUNDS] [-s SEED]\n");
            return 2;
        }
    }
    open_dev(dev);
    src = calloc(1, BIG);
    dst = calloc(1, BIG);
    if (!src || !dst) {
        die("calloc");
    }
    src_mr = ibv_reg_mr(pd, src, BIG, IBV_ACCESS_LOCAL_WRITE);
    dst_mr = ibv_reg_mr(pd, dst, BIG, IBV_ACCESS_LOCAL_WRITE |
                        IBV_ACCESS_REMOTE_WRITE);
    ro_mr = ibv_reg_mr(pd, dst, BIG, IBV_ACCESS_LOCAL_WRITE |
                       IBV_ACCESS_REMOTE_READ);
    if (!src_mr || !dst_mr || !ro_mr) {
        die("ibv_reg_mr");
    }

    make_pair(&p);
    good = random_writes(&p, rounds, &seed);
    snprintf(msg, sizeof(msg), "%d of %d random multi-SGE writes arrived intact",
             good, rounds);
    check(good == rounds, msg);

    /* WRITE with immediate: data lands, a receive completes with the imm */
    {
        struct ibv_sge sg = { (uintptr_t)src, 3000, src_mr->lkey };
        int got_send = 0, got_recv = 0, i;

        memset(dst, 0, BIG);
        post_recv(p.b, (uintptr_t)buf, 64, 77);
        write_wr(p.a, &sg, 1, (uintptr_t)dst + 100, dst_mr->rkey, 1, 78);
        for (i = 0; i < 2 && poll1(p.cq, &wc); i++) {
            if (wc.wr_id == 78 && wc.status == IBV_WC_SUCCESS) {
                got_send = 1;
            }
            if (wc.wr_id == 77 && wc.status == IBV_WC_SUCCESS &&
                wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM &&
                (wc.wc_flags & IBV_WC_WITH_IMM) &&
                be32toh(wc.imm_data) == 0x51524f43 && wc.byte_len == 3000) {
                got_recv = 1;
            }
        }
        check(got_send, "write with immediate: send completes");
        check(got_recv, "write with immediate: receive has the immediate and 3000 bytes");
        check(!memcmp(dst + 100, src, 3000), "write with immediate: bytes arrived");
    }
    ibv_destroy_qp(p.a);
    ibv_destroy_qp(p.b);
    ibv_destroy_cq(p.cq);

    bad_write("wrong rkey", (uintptr_t)dst, dst_mr->rkey ^ 0x4400);
    bad_write("range outside the MR", (uintptr_t)dst + BIG - 50,
              dst_mr->rkey);
    bad_write("MR without remote write", (uintptr_t)dst, ro_mr->rkey);

    /* a QP without remote write access refuses writes */
    qp_access = 0;
    make_pair(&p);
    {
        struct ibv_sge sg = { (uintptr_t)src, 10, src_mr->lkey };

        memset(dst, 0x5a, 16);
        write_wr(p.a, &sg, 1, (uintptr_t)dst, dst_mr->rkey, 0, 5);
        n = poll1(p.cq, &wc);
        check(n && wc.status == IBV_WC_REM_INV_REQ_ERR,
              "QP without remote write access: invalid request error");
        check(dst[0] == 0x5a && dst[9] == 0x5a,
              "QP without remote write access: target unchanged");
    }
    return failed;
}
