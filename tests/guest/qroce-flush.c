/*
 * qroce-flush: RDMA FLUSH and ATOMIC WRITE (IBTA 1.5) between two guests.
 *
 *   qroce-flush [-d DEV] [-g GID_INDEX] [-p PORT] [-s SEED] -l
 *   qroce-flush [-d DEV] [-g GID_INDEX] [-p PORT] [-s SEED] SERVER
 *
 * The server (-l) registers a target MR with IBV_ACCESS_FLUSH_GLOBAL and
 * one without, and sends their addresses and rkeys over TCP.  The client
 * checks that the device reports FLUSH_GLOBAL and ATOMIC_WRITE, makes an
 * RC QP with ibv_wr_flush and ibv_wr_atomic_write, then: RDMA WRITEs a
 * random buffer into the target, FLUSHes the range and the whole MR
 * (IBV_WC_FLUSH), ATOMIC WRITEs 8 bytes (IBV_WC_ATOMIC_WRITE), READs the
 * target back and compares; sends the image it expects, which the server
 * compares with its memory; a FLUSH to the MR without FLUSH_GLOBAL
 * completes with IBV_WC_REM_ACCESS_ERR and the server finds that MR
 * unchanged; a persistent FLUSH (on a looped-back pair) is posted and
 * completes with IBV_WC_REM_ACCESS_ERR.  One PASS or FAIL line per
 * check, from each side; exit status 0 if all passed.
 */
#include <endian.h>
#include <getopt.h>
#include "qr_verbs.h"
#include "qr_tcp.h"

#define TSIZE 4096
#define AW_OFF 1024             /* where the ATOMIC WRITE lands */
#define DEV_FLUSH_GLOBAL (1ULL << 38)   /* IB_UVERBS_DEVICE_FLUSH_GLOBAL */
#define DEV_ATOMIC_WRITE (1ULL << 40)   /* IB_UVERBS_DEVICE_ATOMIC_WRITE */

struct wire_info {              /* exchanged over TCP, network order */
    uint32_t qpn, psn, rkey, nrkey;
    uint64_t addr, naddr;
    uint8_t gid[16];
};

static struct ibv_cq *cq;
static struct ibv_qp *qp;
static struct ibv_qp_ex *qpx;

/* An RC QP whose ibv_wr_* include FLUSH and ATOMIC WRITE, in INIT. */
static void make_qp_ex(void)
{
    struct ibv_qp_init_attr_ex ia = {
        .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
        .cap = { .max_send_wr = 16, .max_recv_wr = 4, .max_send_sge = 1,
                 .max_recv_sge = 1 },
        .comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
        .pd = pd,
        .send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE |
                          IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_FLUSH |
                          IBV_QP_EX_WITH_ATOMIC_WRITE,
    };
    struct ibv_qp_attr a = {
        .qp_state = IBV_QPS_INIT, .port_num = 1,
        .qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
    };

    qp = ibv_create_qp_ex(ctx, &ia);
    check(qp != NULL, "RC QP with IBV_QP_EX_WITH_FLUSH and _ATOMIC_WRITE");
    if (!qp) {
        exit(1);
    }
    qpx = ibv_qp_to_qp_ex(qp);
    if (!qpx || !qpx->wr_flush || !qpx->wr_atomic_write ||
        ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
                      IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)) {
        die("ibv_qp_to_qp_ex/modify to INIT");
    }
}

/* The completion of @id: its status, or -1 if none came or another did. */
static int wait_wc(uint64_t id, enum ibv_wc_opcode *op)
{
    struct ibv_wc wc;

    if (!poll1(cq, &wc)) {
        printf("wr %llu: no completion\n", (unsigned long long)id);
        return -1;
    }
    if (wc.wr_id != id) {
        printf("wr %llu: got wr %llu\n", (unsigned long long)id,
               (unsigned long long)wc.wr_id);
        return -1;
    }
    *op = wc.opcode;
    return wc.status;
}

/* A batch of one work request, posted: 0 or the errno wr_complete gave. */
static int post_one(uint64_t id, int (*fill)(const void *), const void *arg)
{
    ibv_wr_start(qpx);
    qpx->wr_id = id;
    qpx->wr_flags = IBV_SEND_SIGNALED;
    fill(arg);
    return ibv_wr_complete(qpx);
}

/* The target, as both sides see it */
struct target {
    uint32_t rkey, lkey;
    uint64_t raddr, laddr;
    uint32_t len;
    uint8_t type, level;
    uint8_t v[8];
};

static int fill_write(const void *p)
{
    const struct target *t = p;

    ibv_wr_rdma_write(qpx, t->rkey, t->raddr);
    ibv_wr_set_sge(qpx, t->lkey, t->laddr, t->len);
    return 0;
}

static int fill_read(const void *p)
{
    const struct target *t = p;

    ibv_wr_rdma_read(qpx, t->rkey, t->raddr);
    ibv_wr_set_sge(qpx, t->lkey, t->laddr, t->len);
    return 0;
}

static int fill_flush(const void *p)
{
    const struct target *t = p;

    ibv_wr_flush(qpx, t->rkey, t->raddr, t->len, t->type, t->level);
    return 0;
}

static int fill_aw(const void *p)
{
    const struct target *t = p;

    ibv_wr_atomic_write(qpx, t->rkey, t->raddr, t->v);
    return 0;
}

/* Post one request and check its completion: status @want, opcode @op. */
static void expect(uint64_t id, int (*fill)(const void *),
                   const struct target *t, enum ibv_wc_status want,
                   enum ibv_wc_opcode op, const char *what)
{
    enum ibv_wc_opcode got_op = 0;
    char msg[200];
    int err = post_one(id, fill, t), st = -1;

    if (!err) {
        st = wait_wc(id, &got_op);
    }
    snprintf(msg, sizeof(msg), "%s: %s", what,
             err ? strerror(err) : st < 0 ? "no completion" :
             ibv_wc_status_str(st));
    check(!err && st == (int)want && (want != IBV_WC_SUCCESS || got_op == op),
          msg);
}

static void caps_check(void)
{
    struct ibv_device_attr_ex a = {};
    char msg[120];
    int err = ibv_query_device_ex(ctx, NULL, &a);

    snprintf(msg, sizeof(msg),
             "device_cap_flags_ex 0x%llx: FLUSH_GLOBAL and ATOMIC_WRITE",
             (unsigned long long)a.device_cap_flags_ex);
    check(!err && (a.device_cap_flags_ex & DEV_FLUSH_GLOBAL) &&
          (a.device_cap_flags_ex & DEV_ATOMIC_WRITE), msg);
}

/*
 * A persistent FLUSH is posted, goes on the wire and is refused by the
 * responder (a pair of this device looped back) with a remote access
 * error: no MR of the device is persistent memory, not even one with
 * IBV_ACCESS_FLUSH_GLOBAL.  The client's first QP is in ERR by now.
 */
static void persistent_flush(void)
{
    struct ibv_mr *fmr = ibv_reg_mr(pd, buf, BUF, IBV_ACCESS_LOCAL_WRITE |
                                    IBV_ACCESS_REMOTE_WRITE |
                                    IBV_ACCESS_FLUSH_GLOBAL);
    struct target t = { .raddr = (uintptr_t)buf, .len = 8,
                        .type = IBV_FLUSH_PERSISTENT,
                        .level = IBV_FLUSH_RANGE };
    struct ibv_qp *b;

    if (!fmr) {
        die("ibv_reg_mr FLUSH_GLOBAL");
    }
    t.rkey = fmr->rkey;
    make_qp_ex();
    b = qp;
    make_qp_ex();
    connect_qp(qp, b->qp_num);
    connect_qp(b, qp->qp_num);
    expect(8, fill_flush, &t, IBV_WC_REM_ACCESS_ERR, IBV_WC_FLUSH,
           "persistent FLUSH to a FLUSH_GLOBAL MR: IBV_WC_REM_ACCESS_ERR");
}

static int client(int fd, const struct wire_info *peer, unsigned int seed)
{
    uint8_t *img = calloc(1, TSIZE), *back = calloc(1, TSIZE);
    struct ibv_mr *imr, *bmr;
    struct target t = {};
    uint64_t rc;
    int i;

    imr = ibv_reg_mr(pd, img, TSIZE, IBV_ACCESS_LOCAL_WRITE);
    bmr = ibv_reg_mr(pd, back, TSIZE, IBV_ACCESS_LOCAL_WRITE);
    if (!imr || !bmr) {
        die("ibv_reg_mr");
    }
    for (i = 0; i < TSIZE; i++) {
        img[i] = (uint8_t)rand_r(&seed);
    }
    t = (struct target){ .rkey = ntohl(peer->rkey), .lkey = imr->lkey,
                         .raddr = be64toh(peer->addr),
                         .laddr = (uintptr_t)img, .len = TSIZE,
                         .type = IBV_FLUSH_GLOBAL, .level = IBV_FLUSH_RANGE };
    expect(1, fill_write, &t, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE,
           "RDMA WRITE of 4096 random bytes");
    expect(2, fill_flush, &t, IBV_WC_SUCCESS, IBV_WC_FLUSH,
           "FLUSH of the range: IBV_WC_FLUSH");
    t.level = IBV_FLUSH_MR;
    t.len = 0;
    expect(3, fill_flush, &t, IBV_WC_SUCCESS, IBV_WC_FLUSH,
           "FLUSH of the MR: IBV_WC_FLUSH");
    t.raddr += AW_OFF;
    for (i = 0; i < 8; i++) {
        t.v[i] = (uint8_t)rand_r(&seed);
    }
    expect(4, fill_aw, &t, IBV_WC_SUCCESS, IBV_WC_ATOMIC_WRITE,
           "ATOMIC WRITE of 8 bytes: IBV_WC_ATOMIC_WRITE");
    memcpy(img + AW_OFF, t.v, 8);
    t = (struct target){ .rkey = ntohl(peer->rkey), .lkey = bmr->lkey,
                         .raddr = be64toh(peer->addr),
                         .laddr = (uintptr_t)back, .len = TSIZE };
    memset(back, 0xa5, TSIZE);
    expect(5, fill_read, &t, IBV_WC_SUCCESS, IBV_WC_RDMA_READ,
           "RDMA READ of the target back");
    check(!memcmp(back, img, TSIZE),
          "READ back equals the WRITE with the 8 ATOMIC WRITE bytes in it");
    /* the server compares its memory with the image */
    if (qr_xfer(fd, img, TSIZE, 1)) {
        die("image");
    }
    t = (struct target){ .rkey = ntohl(peer->nrkey),
                         .raddr = be64toh(peer->naddr), .len = TSIZE,
                         .type = IBV_FLUSH_GLOBAL, .level = IBV_FLUSH_RANGE };
    expect(7, fill_flush, &t, IBV_WC_REM_ACCESS_ERR, IBV_WC_FLUSH,
           "FLUSH to an MR without FLUSH_GLOBAL: IBV_WC_REM_ACCESS_ERR");
    persistent_flush();
    rc = htobe64(failed);
    if (qr_xfer(fd, &rc, 8, 1) || qr_xfer(fd, &rc, 8, 0)) {
        die("report");
    }
    return failed || be64toh(rc);
}

static int server(int fd, uint8_t *tgt, uint8_t *ntgt)
{
    uint8_t *img = malloc(TSIZE);
    uint64_t rc;
    int i, same = 1;

    if (!img || qr_xfer(fd, img, TSIZE, 0)) {
        die("image");
    }
    check(!memcmp(tgt, img, TSIZE),
          "server: target memory equals the client's WRITE + ATOMIC WRITE");
    if (qr_xfer(fd, &rc, 8, 0)) {
        die("report");
    }
    for (i = 0; i < TSIZE; i++) {
        same &= ntgt[i] == 0x77;
    }
    check(same, "server: the MR without FLUSH_GLOBAL is unchanged");
    check(!be64toh(rc), "server: the client passed its checks");
    rc = htobe64(failed);
    qr_xfer(fd, &rc, 8, 1);
    return failed;
}

int main(int argc, char **argv)
{
    const char *dev = "qroce_0";
    unsigned int seed = 1;
    int port = 18520, serve = 0, c, fd, rc;
    struct wire_info me = {}, peer;
    uint8_t *tgt = NULL, *ntgt = NULL;
    union ibv_gid gid;
    uint64_t go = 0;

    while ((c = getopt(argc, argv, "d:g:p:s:l")) != -1) {
        if (qr_common_opt(c, &dev)) {
            continue;
        }
        if (c == 'p') {
            port = atoi(optarg);
        } else if (c == 's') {
            seed = strtoul(optarg, NULL, 0);
        } else if (c == 'l') {
            serve = 1;
        } else {
            goto usage;
        }
    }
    if (port <= 0 || port > 65535 || argc - optind != !serve) {
        goto usage;
    }
    open_dev(dev);
    cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
    if (!cq || ibv_query_gid(ctx, 1, gid_index, &gid)) {
        die("ibv_create_cq/ibv_query_gid");
    }
    if (!serve) {
        caps_check();
    }
    make_qp_ex();
    if (serve) {
        struct ibv_mr *tmr, *nmr;

        tgt = aligned_alloc(4096, TSIZE);
        ntgt = aligned_alloc(4096, TSIZE);
        if (!tgt || !ntgt) {
            die("aligned_alloc");
        }
        memset(tgt, 0, TSIZE);
        memset(ntgt, 0x77, TSIZE);
        tmr = ibv_reg_mr(pd, tgt, TSIZE, IBV_ACCESS_LOCAL_WRITE |
                         IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
                         IBV_ACCESS_FLUSH_GLOBAL);
        check(tmr != NULL, "server: ibv_reg_mr with IBV_ACCESS_FLUSH_GLOBAL");
        nmr = ibv_reg_mr(pd, ntgt, TSIZE, IBV_ACCESS_LOCAL_WRITE |
                         IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
        if (!tmr || !nmr) {
            die("ibv_reg_mr");
        }
        me.rkey = htonl(tmr->rkey);
        me.addr = htobe64((uintptr_t)tgt);
        me.nrkey = htonl(nmr->rkey);
        me.naddr = htobe64((uintptr_t)ntgt);
    }
    me.qpn = htonl(qp->qp_num);
    me.psn = htonl(serve ? 1000 : 2000);
    memcpy(me.gid, gid.raw, 16);
    fd = qr_tcp("qroce-flush", serve ? NULL : argv[optind], port);
    if (qr_xfer(fd, &me, sizeof(me), 1) ||
        qr_xfer(fd, &peer, sizeof(peer), 0)) {
        die("exchange");
    }
    memcpy(gid.raw, peer.gid, 16);
    connect_to(qp, ntohl(peer.qpn), &gid, ntohl(peer.psn), ntohl(me.psn));
    /* both ready: go */
    if (qr_xfer(fd, &go, 8, 1) || qr_xfer(fd, &go, 8, 0)) {
        die("sync");
    }
    rc = serve ? server(fd, tgt, ntgt) : client(fd, &peer, seed);
    close(fd);
    return rc;

usage:
    fprintf(stderr, "usage: qroce-flush [-d DEVICE] [-g GID_INDEX] "
            "[-p PORT] [-s SEED] (-l | SERVER)\n");
    return 2;
}
