/*
 * qroce-rdma: RDMA READ and atomics, checked byte for byte.
 *
 *   qroce-rdma [-d DEV] [-g GID_INDEX] [-n ROUNDS] [-s SEED] [-L]
 *       checks in one guest, QPs connected through the device (loopback);
 *       -L (a lossy wire): without the remote error checks
 *   qroce-rdma [-d DEV] [-g GID_INDEX] [-p PORT] [-a N] [-k N] [-W S] [-B] -l
 *   qroce-rdma [-d DEV] [-g GID_INDEX] [-p PORT] [-a N] [-k N] [-W S] [-B]
 *              SERVER
 *       two guests: the server (-l) holds a counter and a lock word; both
 *       sides do N FETCH_ADDs (-a, default 10000) on the counter and K
 *       (-k, default 500) increments of a second counter under a lock
 *       taken with CMP_SWAP.  The server's own operations go through a
 *       loopback QP on its device, the client's over the wire; the server
 *       prints the verdict.  With -W S, the client then, for S seconds
 *       of its own clock, WRITEs random patterns (1 byte to 64 KiB, at
 *       random offsets) into a 1 MiB region of the server and READs each
 *       back, every byte compared; at the end the server's region must
 *       hash as the client's copy of what it wrote.  A completion may take
 *       60 s in this phase (a guest migrated meanwhile, docs/harness.md).
 *       With -B, the memory of that phase (the server's region, the
 *       client's buffers) is dma-bufs: memfds exported by udmabuf and
 *       registered with ibv_reg_dmabuf_mr.  With -O, it is untouched
 *       anonymous memory registered with IBV_ACCESS_ON_DEMAND: every first
 *       access is a page fault of the device the driver resolves.
 *
 * One guest: random buffers written with multi-SGE RDMA WRITEs at random
 * sizes and offsets are READ back through other random SGE lists and
 * compared; several READs outstanding at once; a zero-length READ; a 16 MiB
 * READ; FETCH_ADD and CMP_SWAP results and memory, pipelined atomics; a
 * wrong rkey, a range outside the MR, an MR without remote read or remote
 * atomic end in IBV_WC_REM_ACCESS_ERR, a misaligned atomic and a QP without
 * remote read in IBV_WC_REM_INV_REQ_ERR, with the bytes on both sides
 * unchanged; local SGE errors complete with a local error.
 */
#define _GNU_SOURCE             /* memfd_create, file seals */
#include <arpa/inet.h>
#include <fcntl.h>
#include <getopt.h>
#include <sys/mman.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stddef.h>
#include <sys/socket.h>
#include <unistd.h>
#include "qr_verbs.h"
#include "qr_tcp.h"
#include "qr_dmabuf.h"

#define BIG (1024 * 1024)
#define HUGE (16 * 1024 * 1024)

static int lossy;               /* -L: skip the remote error checks */
static uint8_t *src, *dst, *back;
static struct ibv_mr *src_mr, *dst_mr, *back_mr, *wo_mr, *noatom_mr, *ro_mr;

static int post_rdma(struct ibv_qp *qp, enum ibv_wr_opcode op,
                     struct ibv_sge *sg, int n, uint64_t raddr, uint32_t rkey,
                     uint64_t id)
{
    struct ibv_send_wr wr = {
        .wr_id = id, .sg_list = sg, .num_sge = n, .opcode = op,
        .send_flags = IBV_SEND_SIGNALED,
        .wr.rdma = { .remote_addr = raddr, .rkey = rkey },
    }, *bad;

    return ibv_post_send(qp, &wr, &bad);
}

static int post_atomic(struct ibv_qp *qp, enum ibv_wr_opcode op,
                       uint64_t *res, uint32_t lkey, uint64_t raddr,
                       uint32_t rkey, uint64_t cmp_add, uint64_t swap,
                       uint64_t id)
{
    struct ibv_sge sg = { (uintptr_t)res, 8, lkey };
    struct ibv_send_wr wr = {
        .wr_id = id, .sg_list = &sg, .num_sge = 1, .opcode = op,
        .send_flags = IBV_SEND_SIGNALED,
        .wr.atomic = { .remote_addr = raddr, .compare_add = cmp_add,
                       .swap = swap, .rkey = rkey },
    }, *bad;

    return ibv_post_send(qp, &wr, &bad);
}

/* Wait for the completion of @id; false (and a line) if it is not good. */
static int done_ok(struct ibv_cq *cq, uint64_t id, enum ibv_wc_opcode op)
{
    struct ibv_wc wc;

    if (!poll1(cq, &wc)) {
        printf("wr %llu: no completion\n", (unsigned long long)id);
        return 0;
    }
    if (wc.status != IBV_WC_SUCCESS || wc.wr_id != id || wc.opcode != op) {
        printf("wr %llu: got wr %llu status %s opcode %d\n",
               (unsigned long long)id, (unsigned long long)wc.wr_id,
               ibv_wc_status_str(wc.status), wc.opcode);
        return 0;
    }
    return 1;
}

/* Split [base, base + len) of @mr into @n SGEs of random sizes. */
static int split(struct ibv_sge *sg, int n, uint8_t *base, uint32_t len,
                 uint32_t lkey, unsigned int *seed)
{
    uint32_t left = len, o = 0;
    int i;

    for (i = 0; i < n; i++) {
        uint32_t k = i == n - 1 ? left : rand_r(seed) % (left + 1);

        sg[i].addr = (uintptr_t)base + o;
        sg[i].length = k;
        sg[i].lkey = lkey;
        o += k;
        left -= k;
    }
    return n;
}

/* WRITE random bytes, READ them back into another place; rounds passed. */
static int write_read_back(struct pair *p, int rounds, unsigned int *seed)
{
    int r, good = 0;

    for (r = 0; r < rounds; r++) {
        struct ibv_sge ws[16], rs[16];
        uint32_t len = rand_r(seed) % 4 ? rand_r(seed) % (128 * 1024) :
                       rand_r(seed) % 64;
        uint32_t soff = rand_r(seed) % (BIG - len);
        uint32_t doff = rand_r(seed) % (BIG - len);
        uint32_t boff = 8 + rand_r(seed) % (BIG - len - 16);
        int nw = 1 + rand_r(seed) % 16, nr = 1 + rand_r(seed) % 16;
        uint32_t i;

        for (i = 0; i < len; i++) {
            src[soff + i] = (uint8_t)rand_r(seed);
        }
        memset(back, 0xa5, BIG);
        split(ws, nw, src + soff, len, src_mr->lkey, seed);
        split(rs, nr, back + boff, len, back_mr->lkey, seed);
        /* both at once: the responder runs them in order */
        if (post_rdma(p->a, IBV_WR_RDMA_WRITE, ws, nw, (uintptr_t)dst + doff,
                      dst_mr->rkey, 2 * r) ||
            post_rdma(p->a, IBV_WR_RDMA_READ, rs, nr, (uintptr_t)dst + doff,
                      dst_mr->rkey, 2 * r + 1)) {
            printf("round %d: post failed: %s\n", r, strerror(errno));
            break;
        }
        if (!done_ok(p->cq, 2 * r, IBV_WC_RDMA_WRITE) ||
            !done_ok(p->cq, 2 * r + 1, IBV_WC_RDMA_READ)) {
            break;
        }
        if (memcmp(back + boff, src + soff, len) ||
            back[boff - 1] != 0xa5 || back[boff + len] != 0xa5) {
            printf("round %d: %u bytes read back at %u differ\n", r, len,
                   boff);
            break;
        }
        good++;
    }
    return good;
}

/* @n READs posted in one chain, completed in order, each compared. */
static int outstanding_reads(struct pair *p, int n, unsigned int *seed)
{
    struct ibv_send_wr wr[16], *bad;
    struct ibv_sge sg[16];
    uint32_t len[16], off[16];
    int i, good = 0;

    for (i = 0; i < BIG; i++) {
        dst[i] = (uint8_t)rand_r(seed);
    }
    memset(back, 0, BIG);
    for (i = 0; i < n; i++) {
        len[i] = 1 + rand_r(seed) % 20000;
        off[i] = i * (BIG / 16);
        sg[i] = (struct ibv_sge){ (uintptr_t)back + off[i], len[i],
                                  back_mr->lkey };
        wr[i] = (struct ibv_send_wr){
            .wr_id = 100 + i, .sg_list = &sg[i], .num_sge = 1,
            .opcode = IBV_WR_RDMA_READ, .send_flags = IBV_SEND_SIGNALED,
            .next = i + 1 < n ? &wr[i + 1] : NULL,
            .wr.rdma = { .remote_addr = (uintptr_t)dst + off[i] + 3,
                         .rkey = dst_mr->rkey },
        };
    }
    if (ibv_post_send(p->a, wr, &bad)) {
        printf("post of %d reads failed: %s\n", n, strerror(errno));
        return 0;
    }
    for (i = 0; i < n; i++) {
        if (!done_ok(p->cq, 100 + i, IBV_WC_RDMA_READ)) {
            return good;
        }
        if (memcmp(back + off[i], dst + off[i] + 3, len[i])) {
            printf("read %d: bytes differ\n", i);
            return good;
        }
        good++;
    }
    return good;
}

/* An operation that must fail with @want; returns 1 if it did. */
static int expect_fail(struct pair *p, struct ibv_send_wr *wr,
                       enum ibv_wc_status want)
{
    struct ibv_send_wr *bad;
    struct ibv_wc wc;
    int n;

    if (ibv_post_send(p->a, wr, &bad)) {
        printf("post failed: %s\n", strerror(errno));
        return 0;
    }
    n = poll1(p->cq, &wc);
    if (!n || wc.status != want) {
        printf("wanted %s, got %s\n", ibv_wc_status_str(want),
               n ? ibv_wc_status_str(wc.status) : "no completion");
        return 0;
    }
    return 1;
}

/*
 * A request on a fresh pair that must fail with @want and leave both the
 * remote bytes (dst, 0x5a) and the local ones (back, 0xc3) as they were.
 */
static void bad_op(const char *what, enum ibv_wr_opcode op, uint64_t raddr,
                   uint32_t rkey, uint32_t len, enum ibv_wc_status want)
{
    struct ibv_sge sg = { (uintptr_t)back, len, back_mr->lkey };
    struct ibv_send_wr wr = {
        .wr_id = 9, .sg_list = &sg, .num_sge = 1, .opcode = op,
        .send_flags = IBV_SEND_SIGNALED,
    };
    struct pair p;
    char msg[160];
    int ok, i;

    if (op == IBV_WR_RDMA_READ) {
        wr.wr.rdma.remote_addr = raddr;
        wr.wr.rdma.rkey = rkey;
    } else {
        wr.wr.atomic.remote_addr = raddr;
        wr.wr.atomic.rkey = rkey;
        wr.wr.atomic.compare_add = 0x5a5a5a5a5a5a5a5aull;
        wr.wr.atomic.swap = 1;
    }
    make_pair(&p);
    memset(dst, 0x5a, BIG);
    memset(back, 0xc3, BIG);
    ok = expect_fail(&p, &wr, want);
    snprintf(msg, sizeof(msg), "%s: %s", what, ibv_wc_status_str(want));
    check(ok, msg);
    for (i = 0; i < BIG && dst[i] == 0x5a && back[i] == 0xc3; i++) {
    }
    snprintf(msg, sizeof(msg), "%s: remote and local bytes unchanged", what);
    check(i == BIG, msg);
    free_pair(&p);
}

static void atomics(struct pair *p)
{
    uint64_t *t = (uint64_t *)(dst + 4096), *res = (uint64_t *)back;
    uint64_t ra = (uintptr_t)t;
    int ok, i;

    *t = 5;
    res[0] = 0;
    ok = !post_atomic(p->a, IBV_WR_ATOMIC_FETCH_AND_ADD, res, back_mr->lkey,
                      ra, dst_mr->rkey, 7, 0, 1) &&
         done_ok(p->cq, 1, IBV_WC_FETCH_ADD);
    check(ok && res[0] == 5 && *t == 12,
          "FETCH_ADD 7 on 5: returns 5, memory 12");
    ok = !post_atomic(p->a, IBV_WR_ATOMIC_CMP_AND_SWP, res, back_mr->lkey, ra,
                      dst_mr->rkey, 12, 0x1122334455667788ull, 2) &&
         done_ok(p->cq, 2, IBV_WC_COMP_SWAP);
    check(ok && res[0] == 12 && *t == 0x1122334455667788ull,
          "CMP_SWAP equal: returns the old value, memory swapped");
    ok = !post_atomic(p->a, IBV_WR_ATOMIC_CMP_AND_SWP, res, back_mr->lkey, ra,
                      dst_mr->rkey, 12, 99, 3) &&
         done_ok(p->cq, 3, IBV_WC_COMP_SWAP);
    check(ok && res[0] == 0x1122334455667788ull &&
          *t == 0x1122334455667788ull,
          "CMP_SWAP unequal: returns the value, memory unchanged");
    *t = ~0ull;
    ok = !post_atomic(p->a, IBV_WR_ATOMIC_FETCH_AND_ADD, res, back_mr->lkey,
                      ra, dst_mr->rkey, 2, 0, 4) &&
         done_ok(p->cq, 4, IBV_WC_FETCH_ADD);
    check(ok && res[0] == ~0ull && *t == 1, "FETCH_ADD wraps at 2^64");

    /* pipelined: results in order, each the sum before it */
    *t = 1000;
    for (i = 0; i < 16 && ok; i++) {
        ok = !post_atomic(p->a, IBV_WR_ATOMIC_FETCH_AND_ADD, &res[i],
                          back_mr->lkey, ra, dst_mr->rkey, i, 0, 10 + i);
    }
    for (i = 0; i < 16 && ok; i++) {
        ok = done_ok(p->cq, 10 + i, IBV_WC_FETCH_ADD) &&
             res[i] == 1000 + (uint64_t)i * (i - 1) / 2;
    }
    check(ok && *t == 1000 + 16 * 15 / 2,
          "16 FETCH_ADDs in flight: results in order, sum right");
}

/* src, dst, back and their MRs, with the views of dst and src without
 * some access (wo_mr, noatom_mr, ro_mr) */
static void register_local_mrs(void)
{
    src = calloc(1, BIG);
    dst = calloc(1, BIG);
    back = calloc(1, BIG);
    if (!src || !dst || !back) {
        die("calloc");
    }
    src_mr = ibv_reg_mr(pd, src, BIG, IBV_ACCESS_LOCAL_WRITE);
    back_mr = ibv_reg_mr(pd, back, BIG, IBV_ACCESS_LOCAL_WRITE);
    dst_mr = ibv_reg_mr(pd, dst, BIG, IBV_ACCESS_LOCAL_WRITE |
                        IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
                        IBV_ACCESS_REMOTE_ATOMIC);
    wo_mr = ibv_reg_mr(pd, dst, BIG, IBV_ACCESS_LOCAL_WRITE |
                       IBV_ACCESS_REMOTE_WRITE);
    noatom_mr = ibv_reg_mr(pd, dst, BIG, IBV_ACCESS_LOCAL_WRITE |
                           IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
    ro_mr = ibv_reg_mr(pd, src, BIG, 0);
    if (!src_mr || !back_mr || !dst_mr || !wo_mr || !noatom_mr || !ro_mr) {
        die("ibv_reg_mr");
    }
}

static void zero_length_read(struct pair *p)
{
    struct ibv_sge sg = { (uintptr_t)back, 0, back_mr->lkey };

    check(!post_rdma(p->a, IBV_WR_RDMA_READ, &sg, 0, (uintptr_t)dst, 0,
                     50) && done_ok(p->cq, 50, IBV_WC_RDMA_READ),
          "zero-length READ completes");
}

/* One READ of 16 MiB, compared byte for byte. */
static void huge_read(struct pair *p)
{
    uint8_t *h = malloc(HUGE), *hb = malloc(HUGE);
    struct ibv_mr *hm, *hbm;
    struct ibv_sge sg;
    struct ibv_wc wc;
    int i, ok;

    if (!h || !hb) {
        die("malloc");
    }
    for (i = 0; i < HUGE; i++) {
        h[i] = (uint8_t)(i * 7 + (i >> 13));
    }
    memset(hb, 0, HUGE);
    hm = ibv_reg_mr(pd, h, HUGE, IBV_ACCESS_LOCAL_WRITE |
                    IBV_ACCESS_REMOTE_READ);
    hbm = ibv_reg_mr(pd, hb, HUGE, IBV_ACCESS_LOCAL_WRITE);
    if (!hm || !hbm) {
        die("ibv_reg_mr 16 MiB");
    }
    sg = (struct ibv_sge){ (uintptr_t)hb, HUGE, hbm->lkey };
    ok = !post_rdma(p->a, IBV_WR_RDMA_READ, &sg, 1, (uintptr_t)h,
                    hm->rkey, 51);
    /* 16 MiB through the emulated device may take a while */
    for (i = 0; ok && i < 12 && !poll1(p->cq, &wc); i++) {
    }
    ok = ok && i < 12 && wc.status == IBV_WC_SUCCESS && wc.wr_id == 51;
    check(ok && !memcmp(h, hb, HUGE), "16 MiB READ arrives intact");
    ibv_dereg_mr(hm);
    ibv_dereg_mr(hbm);
    free(h);
    free(hb);
}

/*
 * Local errors: a READ into an MR without local write, a short atomic.
 * Each leaves its QP in error: @p is freed and made anew between them,
 * and freed at the end.
 */
static void local_errors(struct pair *p)
{
    {
        struct ibv_sge sg = { (uintptr_t)src, 64, ro_mr->lkey };
        struct ibv_send_wr wr = {
            .wr_id = 60, .sg_list = &sg, .num_sge = 1,
            .opcode = IBV_WR_RDMA_READ, .send_flags = IBV_SEND_SIGNALED,
            .wr.rdma = { (uintptr_t)dst, dst_mr->rkey },
        };

        check(expect_fail(p, &wr, IBV_WC_LOC_PROT_ERR),
              "READ into an MR without local write: local protection error");
    }
    free_pair(p);
    make_pair(p);
    {
        struct ibv_sge sg = { (uintptr_t)back, 4, back_mr->lkey };
        struct ibv_send_wr wr = {
            .wr_id = 61, .sg_list = &sg, .num_sge = 1,
            .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
            .send_flags = IBV_SEND_SIGNALED,
            .wr.atomic = { .remote_addr = (uintptr_t)dst,
                           .rkey = dst_mr->rkey, .compare_add = 1 },
        };

        memset(dst, 0, 8);
        check(expect_fail(p, &wr, IBV_WC_LOC_LEN_ERR) && dst[0] == 0,
              "atomic with a 4-byte result SGE: local length error");
    }
    free_pair(p);
}

/* Remote errors: each a bad_op() on a pair of its own. */
static void remote_errors(void)
{
    bad_op("READ, wrong rkey", IBV_WR_RDMA_READ, (uintptr_t)dst,
           dst_mr->rkey ^ 0x4400, 100, IBV_WC_REM_ACCESS_ERR);
    bad_op("READ, range outside the MR", IBV_WR_RDMA_READ,
           (uintptr_t)dst + BIG - 50, dst_mr->rkey, 100,
           IBV_WC_REM_ACCESS_ERR);
    bad_op("READ, MR without remote read", IBV_WR_RDMA_READ, (uintptr_t)dst,
           wo_mr->rkey, 100, IBV_WC_REM_ACCESS_ERR);
    bad_op("FETCH_ADD, wrong rkey", IBV_WR_ATOMIC_FETCH_AND_ADD,
           (uintptr_t)dst, dst_mr->rkey ^ 0x4400, 8, IBV_WC_REM_ACCESS_ERR);
    bad_op("FETCH_ADD, MR without remote atomic", IBV_WR_ATOMIC_FETCH_AND_ADD,
           (uintptr_t)dst + 64, noatom_mr->rkey, 8, IBV_WC_REM_ACCESS_ERR);
    bad_op("CMP_SWAP, range outside the MR", IBV_WR_ATOMIC_CMP_AND_SWP,
           (uintptr_t)dst + BIG, dst_mr->rkey, 8, IBV_WC_REM_ACCESS_ERR);
    bad_op("CMP_SWAP, misaligned address", IBV_WR_ATOMIC_CMP_AND_SWP,
           (uintptr_t)dst + 12, dst_mr->rkey, 8, IBV_WC_REM_INV_REQ_ERR);
    qp_access = IBV_ACCESS_REMOTE_WRITE;
    bad_op("READ, QP without remote read", IBV_WR_RDMA_READ, (uintptr_t)dst,
           dst_mr->rkey, 100, IBV_WC_REM_INV_REQ_ERR);
    bad_op("FETCH_ADD, QP without remote atomic", IBV_WR_ATOMIC_FETCH_AND_ADD,
           (uintptr_t)dst, dst_mr->rkey, 8, IBV_WC_REM_INV_REQ_ERR);
}

static int local_checks(int rounds, unsigned int seed)
{
    struct pair p;
    char msg[160];
    int good;

    register_local_mrs();
    qp_access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
                IBV_ACCESS_REMOTE_ATOMIC;
    qp_sge = 16;
    qp_depth = 16;
    qp_rd_atom = 16;
    make_pair(&p);

    good = write_read_back(&p, rounds, &seed);
    snprintf(msg, sizeof(msg),
             "%d of %d random multi-SGE WRITEs read back intact", good,
             rounds);
    check(good == rounds, msg);

    good = outstanding_reads(&p, 16, &seed);
    snprintf(msg, sizeof(msg), "%d of 16 READs in flight at once intact",
             good);
    check(good == 16, msg);

    zero_length_read(&p);
    huge_read(&p);
    atomics(&p);
    local_errors(&p);
    if (lossy) {
        /*
         * On a lossy wire the NAK of a remote error may be lost, and the
         * responder's QP is in ERR by then: the requester ends with
         * RETRY_EXC_ERR, as hardware does.  Those checks need a clean wire.
         */
        return failed;
    }
    remote_errors();
    return failed;
}

/* ---- two guests ------------------------------------------------------ */

struct wire_info {              /* exchanged over TCP, network order */
    uint32_t qpn, psn, rkey, pat_rkey;
    uint64_t addr, pat_addr;
    uint8_t gid[16];
};

#define PAT_LEN (1024 * 1024)   /* -W: the server's pattern region */
#define PAT_MAX (64 * 1024)     /* the largest WRITE of a round */

struct shared {                 /* the server's memory both sides work on */
    uint64_t counter;           /* FETCH_ADD target */
    uint64_t lock;              /* 0 free, else the holder's id */
    uint64_t locked_counter;    /* read and written under the lock */
};

struct worker {
    struct ibv_qp *qp;
    struct ibv_cq *cq;
    uint64_t raddr;             /* struct shared on the server */
    uint32_t rkey;
    uint64_t *res;              /* 8 bytes in res_mr */
    uint32_t lkey;
};

static int op(struct worker *w, enum ibv_wr_opcode o, uint64_t off,
              uint64_t cmp_add, uint64_t swap, uint64_t *old)
{
    static uint64_t id;
    enum ibv_wc_opcode want = o == IBV_WR_ATOMIC_CMP_AND_SWP ?
                              IBV_WC_COMP_SWAP : IBV_WC_FETCH_ADD;

    if (post_atomic(w->qp, o, w->res, w->lkey, w->raddr + off, w->rkey,
                    cmp_add, swap, ++id) || !done_ok(w->cq, id, want)) {
        return -1;
    }
    *old = *w->res;
    return 0;
}

static int rw(struct worker *w, enum ibv_wr_opcode o, uint64_t off)
{
    static uint64_t id = 1ull << 40;
    struct ibv_sge sg = { (uintptr_t)w->res, 8, w->lkey };

    return post_rdma(w->qp, o, &sg, 1, w->raddr + off, w->rkey, ++id) ||
           !done_ok(w->cq, id, o == IBV_WR_RDMA_READ ? IBV_WC_RDMA_READ :
                                                       IBV_WC_RDMA_WRITE) ?
           -1 : 0;
}

/* @n FETCH_ADD 1; @olds gets each returned value.  -1 on a failure. */
static int add_loop(struct worker *w, int n, uint64_t *olds)
{
    int i;

    for (i = 0; i < n; i++) {
        if (op(w, IBV_WR_ATOMIC_FETCH_AND_ADD,
               offsetof(struct shared, counter), 1, 0, &olds[i])) {
            return -1;
        }
    }
    return 0;
}

/* @k times: take the lock (CMP_SWAP 0 -> me), READ, WRITE +1, release. */
static int lock_loop(struct worker *w, int k, uint64_t me)
{
    uint64_t old;
    int i;

    for (i = 0; i < k; i++) {
        do {
            if (op(w, IBV_WR_ATOMIC_CMP_AND_SWP,
                   offsetof(struct shared, lock), 0, me, &old)) {
                return -1;
            }
        } while (old != 0);
        if (rw(w, IBV_WR_RDMA_READ, offsetof(struct shared, locked_counter))) {
            return -1;
        }
        (*w->res)++;
        if (rw(w, IBV_WR_RDMA_WRITE, offsetof(struct shared, locked_counter)) ||
            op(w, IBV_WR_ATOMIC_CMP_AND_SWP, offsetof(struct shared, lock),
               me, 0, &old)) {
            return -1;
        }
        if (old != me) {
            printf("lock held by %llu while %llu released it\n",
                   (unsigned long long)old, (unsigned long long)me);
            return -1;
        }
    }
    return 0;
}

/* FNV-1a over @n bytes: the pattern region, compared across the wire. */
static uint64_t fnv(const uint8_t *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;

    while (n--) {
        h = (h ^ *p++) * 0x100000001b3ull;
    }
    return h;
}

/* One RDMA WRITE or READ of @len bytes at @off of the region, waited on. */
static int pat_op(struct worker *w, enum ibv_wr_opcode o, uint8_t *buf,
                  uint32_t lkey, uint64_t raddr, uint32_t rkey, uint32_t off,
                  uint32_t len, uint64_t id)
{
    struct ibv_sge sg = { (uintptr_t)buf + off, len, lkey };
    struct timespec t0, t;
    struct ibv_wc wc;
    int n;

    if (post_rdma(w->qp, o, &sg, 1, raddr + off, rkey, id)) {
        printf("pattern wr %llu: post failed\n", (unsigned long long)id);
        return -1;
    }
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (!(n = ibv_poll_cq(w->cq, 1, &wc))) {
        clock_gettime(CLOCK_MONOTONIC, &t);
        if (t.tv_sec - t0.tv_sec > 60) {
            printf("pattern wr %llu: no completion in 60 s\n",
                   (unsigned long long)id);
            return -1;
        }
    }
    if (n < 0 || wc.status != IBV_WC_SUCCESS || wc.wr_id != id) {
        printf("pattern wr %llu: got wr %llu status %s\n",
               (unsigned long long)id, (unsigned long long)wc.wr_id,
               ibv_wc_status_str(wc.status));
        return -1;
    }
    return 0;
}

/*
 * -W: for @secs seconds, a random pattern WRITTEN into the server's
 * region at a random offset and READ back, compared byte for byte; then
 * the whole region READ and compared with @shadow, the client's copy of
 * what it wrote.  The number of rounds, or -1 on a failure.
 */
static int64_t pat_longest_us, pat_total_us;  /* the rounds' times */

static int64_t us_since(const struct timespec *a)
{
    struct timespec b;

    clock_gettime(CLOCK_MONOTONIC, &b);
    return (b.tv_sec - a->tv_sec) * 1000000 + (b.tv_nsec - a->tv_nsec) / 1000;
}

static int dmabufs;             /* -B: the pattern phase's memory */
static int odp;                 /* -O: ... or ODP MRs */

/*
 * @len bytes (whole pages, zeroed) at *@va and an MR on them with
 * @access: with -B a memfd that udmabuf exports as a dma-buf, registered
 * with ibv_reg_dmabuf_mr at the address it is mapped at; else the heap.
 */
static struct ibv_mr *pat_mem(size_t len, int access, uint8_t **va)
{
    struct ibv_mr *m;
    int fd;

    if (odp) {
        *va = mmap(NULL, len, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (*va == MAP_FAILED) {
            die("mmap");
        }
        m = ibv_reg_mr(pd, *va, len, access | IBV_ACCESS_ON_DEMAND);
        if (m) {
            printf("ODP MR of %zu bytes: lkey 0x%x\n", len, m->lkey);
        }
        return m;
    }
    if (!dmabufs) {
        *va = calloc(1, len);
        return *va ? ibv_reg_mr(pd, *va, len, access) : NULL;
    }
    fd = qr_udmabuf(len, va);
    if (fd < 0) {
        die("a udmabuf of a memfd");
    }
    m = ibv_reg_dmabuf_mr(pd, 0, len, (uintptr_t)*va, fd, access);
    if (m) {
        printf("dma-buf MR of %zu bytes: lkey 0x%x\n", len, m->lkey);
    }
    return m;
}

static long pat_loop(struct worker *w, uint64_t raddr, uint32_t rkey,
                     uint8_t *shadow, int secs)
{
    uint8_t *out, *in;
    struct ibv_mr *omr, *imr;
    struct timespec t0, t, r0;
    unsigned int seed = 7;
    uint64_t id = 1ull << 50;
    long rounds = 0;
    uint32_t i;

    omr = pat_mem(PAT_LEN, IBV_ACCESS_LOCAL_WRITE, &out);
    imr = pat_mem(PAT_LEN, IBV_ACCESS_LOCAL_WRITE, &in);
    if (!omr || !imr) {
        die("pattern buffers");
    }
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        uint32_t len = 1 + rand_r(&seed) % PAT_MAX;
        uint32_t off = rand_r(&seed) % (PAT_LEN - len + 1);
        uint8_t b = rand_r(&seed);

        for (i = 0; i < len; i++) {
            out[off + i] = b + i * 13 + (i >> 8);
        }
        memset(in + off, ~b, len);
        clock_gettime(CLOCK_MONOTONIC, &r0);
        if (pat_op(w, IBV_WR_RDMA_WRITE, out, omr->lkey, raddr, rkey, off,
                   len, ++id) ||
            pat_op(w, IBV_WR_RDMA_READ, in, imr->lkey, raddr, rkey, off,
                   len, ++id)) {
            return -1;
        }
        if (memcmp(in + off, out + off, len)) {
            printf("pattern round %ld: %u bytes at %u read back different\n",
                   rounds, len, off);
            return -1;
        }
        memcpy(shadow + off, out + off, len);
        {
            int64_t us = us_since(&r0);

            pat_total_us += us;
            if (us > pat_longest_us) {
                pat_longest_us = us;
            }
        }
        rounds++;
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while (t.tv_sec - t0.tv_sec < secs);
    memset(in, 0x5a, PAT_LEN);
    for (i = 0; i < PAT_LEN; i += PAT_MAX) {
        if (pat_op(w, IBV_WR_RDMA_READ, in, imr->lkey, raddr, rkey, i,
                   PAT_MAX, ++id)) {
            return -1;
        }
    }
    if (memcmp(in, shadow, PAT_LEN)) {
        printf("pattern: the region read whole differs from what was "
               "written\n");
        return -1;
    }
    return rounds;
}

/* One side of the two-guest test, what its steps share. */
struct tg {
    int serve;                  /* -l: the server */
    int fd;                     /* the TCP connection to the other side */
    struct ibv_cq *cq;
    struct ibv_qp *qp;          /* connected to the other side */
    struct shared *sh;          /* the server's: what both sides work on */
    struct ibv_mr *sh_mr, *res_mr;
    uint8_t *pat;               /* the server's -W region */
    uint64_t *olds, *res;
    struct wire_info me, peer;
    struct worker w;
};

/* The CQ, result buffers and the QP to the other side; our GID in @gid. */
static void tg_setup(struct tg *s, int adds, union ibv_gid *gid)
{
    s->cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
    s->res = calloc(1, 4096);
    s->olds = calloc(2 * adds + 1, sizeof(*s->olds));
    if (!s->cq || !s->res || !s->olds) {
        die("ibv_create_cq");
    }
    s->res_mr = ibv_reg_mr(pd, s->res, 4096, IBV_ACCESS_LOCAL_WRITE);
    qp_access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
                IBV_ACCESS_REMOTE_ATOMIC;
    qp_rd_atom = 4;
    s->qp = make_qp(s->cq);
    if (!s->res_mr || ibv_query_gid(ctx, 1, gid_index, gid)) {
        die("ibv_reg_mr/ibv_query_gid");
    }
}

/* The server's struct shared and pattern region, announced in s->me. */
static void tg_server_memory(struct tg *s)
{
    struct ibv_mr *pat_mr;

    s->sh = aligned_alloc(4096, 4096);
    if (!s->sh) {
        die("aligned_alloc");
    }
    memset(s->sh, 0, 4096);
    s->sh_mr = ibv_reg_mr(pd, s->sh, 4096, IBV_ACCESS_LOCAL_WRITE |
                          IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
                          IBV_ACCESS_REMOTE_ATOMIC);
    if (!s->sh_mr) {
        die("ibv_reg_mr");
    }
    s->me.rkey = htonl(s->sh_mr->rkey);
    s->me.addr = htobe64((uintptr_t)s->sh);
    pat_mr = pat_mem(PAT_LEN, IBV_ACCESS_LOCAL_WRITE |
                     IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
                     &s->pat);
    if (!pat_mr) {
        die("ibv_reg_mr (pattern region)");
    }
    s->me.pat_rkey = htonl(pat_mr->rkey);
    s->me.pat_addr = htobe64((uintptr_t)s->pat);
}

/*
 * Exchange wire_info with the other side (@server, or wait for it if
 * NULL), connect the QP to it, and set up the worker: over the wire on
 * the client, through a loopback pair on the server.
 */
static void tg_connect(struct tg *s, const char *server, int port,
                       union ibv_gid *gid)
{
    struct ibv_qp *la, *lb;

    s->me.qpn = htonl(s->qp->qp_num);
    s->me.psn = htonl(s->serve ? 1000 : 2000);
    memcpy(s->me.gid, gid->raw, 16);
    s->fd = qr_tcp("qroce-rdma", server, port);
    if (qr_xfer(s->fd, &s->me, sizeof(s->me), 1) ||
        qr_xfer(s->fd, &s->peer, sizeof(s->peer), 0)) {
        die("exchange");
    }
    memcpy(gid->raw, s->peer.gid, 16);
    connect_to(s->qp, ntohl(s->peer.qpn), gid, ntohl(s->peer.psn),
               ntohl(s->me.psn));
    if (s->serve) {
        /* the server's own operations: a loopback pair on its device */
        la = make_qp(s->cq);
        lb = make_qp(s->cq);
        connect_qp(la, lb->qp_num);
        connect_qp(lb, la->qp_num);
        s->w = (struct worker){ la, s->cq, (uintptr_t)s->sh, s->sh_mr->rkey,
                                s->res, s->res_mr->lkey };
    } else {
        s->w = (struct worker){ s->qp, s->cq, be64toh(s->peer.addr),
                                ntohl(s->peer.rkey), s->res,
                                s->res_mr->lkey };
    }
}

/*
 * The client's end: its status @rc, its FETCH_ADD results and the hash
 * of what it wrote (0 if nothing) to the server, a summary printed; the
 * exit code, 1 if either side failed.
 */
static int tg_client_report(struct tg *s, int adds, int locks, int wsecs,
                            int rc, long rounds, uint8_t *shadow)
{
    uint64_t h = htobe64(shadow && rounds > 0 ? fnv(shadow, PAT_LEN) : 0);
    uint64_t done;
    int i;

    for (i = 0; i < adds; i++) {
        s->olds[i] = htobe64(s->olds[i]);
    }
    done = htobe64(rc);
    if (qr_xfer(s->fd, &done, 8, 1) || qr_xfer(s->fd, s->olds, 8 * adds, 1) ||
        qr_xfer(s->fd, &h, 8, 1) || qr_xfer(s->fd, &done, 8, 0)) {
        die("report");
    }
    printf("client: %d FETCH_ADDs and %d locked increments done\n", adds,
           locks);
    if (wsecs > 0) {
        printf("client: %ld WRITE/READ pattern rounds, each read back "
               "the same\n", rounds);
        printf("client: rounds took %lld us at most, %lld us on "
               "average\n", (long long)pat_longest_us,
               (long long)(rounds > 0 ? pat_total_us / rounds : 0));
    }
    return rc || be64toh(done);
}

/* Every value 0 .. 2 * @adds - 1 was returned exactly once in @olds. */
static void check_fetch_add_results(const uint64_t *olds, int adds)
{
    uint8_t *seen = calloc(1, 2 * adds);
    char msg[200];
    int dup = 0, i;

    for (i = 0; seen && i < 2 * adds; i++) {
        if (olds[i] >= 2ull * adds || seen[olds[i]]++) {
            dup++;
        }
    }
    snprintf(msg, sizeof(msg),
             "FETCH_ADD results are 0..%d, each once (%d out of place)",
             2 * adds - 1, dup);
    check(seen && !dup, msg);
    free(seen);
}

/*
 * The server's end: the client's status, FETCH_ADD results and pattern
 * hash received, the verdict checked and sent back; the exit code.
 */
static int tg_server_verdict(struct tg *s, int adds, int locks, int rc)
{
    uint64_t done = 0, h = 0;
    char msg[200];
    int i;

    if (qr_xfer(s->fd, &done, 8, 0) || qr_xfer(s->fd, s->olds, 8 * adds, 0) ||
        qr_xfer(s->fd, &h, 8, 0)) {
        die("report");
    }
    h = be64toh(h);
    if (h) {
        snprintf(msg, sizeof(msg), "the pattern region (1 MiB) is what the "
                 "client wrote: hash %016llx, the client's %016llx",
                 (unsigned long long)fnv(s->pat, PAT_LEN),
                 (unsigned long long)h);
        check(fnv(s->pat, PAT_LEN) == h, msg);
    }
    for (i = 0; i < adds; i++) {
        s->olds[i] = be64toh(s->olds[i]);
    }
    check(!rc && !done, "both sides completed every operation");
    snprintf(msg, sizeof(msg), "2 x %d FETCH_ADD on one address: counter %llu",
             adds, (unsigned long long)s->sh->counter);
    check(s->sh->counter == 2ull * adds, msg);
    check_fetch_add_results(s->olds, adds);
    snprintf(msg, sizeof(msg),
             "CMP_SWAP lock: 2 x %d increments under it give %llu, lock %llu",
             locks, (unsigned long long)s->sh->locked_counter,
             (unsigned long long)s->sh->lock);
    check(s->sh->locked_counter == 2ull * locks && s->sh->lock == 0, msg);
    done = htobe64(failed);
    qr_xfer(s->fd, &done, 8, 1);
    close(s->fd);
    return failed;
}

static int two_guests(const char *server, int port, int adds, int locks,
                      int wsecs)
{
    struct tg s = { .serve = server == NULL };
    uint8_t *shadow = NULL;
    union ibv_gid gid;
    uint64_t done = 0;
    long rounds = 0;
    int rc = 0;

    tg_setup(&s, adds, &gid);
    if (s.serve) {
        tg_server_memory(&s);
    }
    tg_connect(&s, server, port, &gid);
    /* both ready: go */
    if (qr_xfer(s.fd, &done, 8, 1) || qr_xfer(s.fd, &done, 8, 0)) {
        die("sync");
    }
    if (add_loop(&s.w, adds, s.olds + (s.serve ? adds : 0)) ||
        lock_loop(&s.w, locks, s.serve ? 1 : 2)) {
        printf("FAIL %s: an operation failed\n", s.serve ? "server" : "client");
        rc = 1;
    }
    if (!s.serve && !rc && wsecs > 0) {
        shadow = calloc(1, PAT_LEN);
        if (!shadow) {
            die("calloc");
        }
        rounds = pat_loop(&s.w, be64toh(s.peer.pat_addr),
                          ntohl(s.peer.pat_rkey), shadow, wsecs);
        if (rounds < 0) {
            printf("FAIL client: a WRITE/READ pattern round failed\n");
            rc = 1;
        }
    }
    if (!s.serve) {
        return tg_client_report(&s, adds, locks, wsecs, rc, rounds, shadow);
    }
    return tg_server_verdict(&s, adds, locks, rc);
}

int main(int argc, char **argv)
{
    const char *dev = "qroce_0";
    unsigned int seed = 1;
    int rounds = 100, port = 18516, adds = 10000, locks = 500, serve = 0, c;
    int wsecs = 0;

    while ((c = getopt(argc, argv, "d:g:n:s:p:a:k:W:lLBO")) != -1) {
        switch (c) {
        case 'B':
            dmabufs = 1;
            break;
        case 'O':
            odp = 1;
            break;
        case 'L':
            lossy = 1;
            break;
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
        case 'p':
            port = atoi(optarg);
            break;
        case 'a':
            adds = atoi(optarg);
            break;
        case 'k':
            locks = atoi(optarg);
            break;
        case 'W':
            wsecs = atoi(optarg);
            break;
        case 'l':
            serve = 1;
            break;
        default:
            goto usage;
        }
    }
    if (rounds < 0 || adds < 1 || locks < 0 || wsecs < 0 || port <= 0 ||
        port > 65535 ||
        argc - optind > !serve) {
        goto usage;
    }
    open_dev(dev);
    if (serve || optind < argc) {
        return two_guests(serve ? NULL : argv[optind], port, adds, locks,
                          wsecs);
    }
    return local_checks(rounds, seed);

usage:
    fprintf(stderr,
            "usage: qroce-rdma [-d DEVICE] [-g GID_INDEX] [-n ROUNDS] [-s SEED] [-L]\n"
            "       qroce-rdma [-d DEVICE] [-g GID_INDEX] [-p PORT] [-a ADDS] "
            "[-k LOCKS] [-W SECONDS] [-B | -O] (-l | SERVER)\n");
    return 2;
}
