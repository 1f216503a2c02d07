/*
 * The provider's extended verbs in one guest (two RC QPs on one device,
 * connected through the device): ibv_create_cq_ex polled with
 * ibv_start_poll/ibv_next_poll/ibv_end_poll, ibv_create_qp_ex with ibv_wr_*
 * (send with an inline data list, send with immediate and an SGE list,
 * unsignaled RDMA WRITE retired by a signaled WRITE with immediate,
 * wr_abort, a batch dropped by wr_complete on an error, SQ full), and the
 * attributes the provider must refuse.
 *
 * Usage: qroce-prov [-d DEV] [-g GID_INDEX]; prints PASS/FAIL lines, exits
 * 1 if anything failed.
 */
#include <pthread.h>
#include <unistd.h>
#include "qr_verbs.h"
#include "qroce_hw.h"

#define NRECV 8

struct comp {
    uint64_t wr_id;
    enum ibv_wc_status status;
    enum ibv_wc_opcode opcode;
    uint32_t byte_len, qp_num, flags;
    __be32 imm;
};

static struct ibv_cq_ex *cqx;
static struct ibv_mr *rmr;      /* remote-writable view of buf */
static uint8_t *dst_base;       /* receive slots of the threaded test */

/* Collect up to @n completions with the extended API within @ms. */
static int poll_ex(struct comp *c, int n, int ms)
{
    struct ibv_poll_cq_attr pa = {};
    struct timespec t0, t;
    int got = 0;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (got < n) {
        int r = ibv_start_poll(cqx, &pa);

        if (r == 0) {
            do {
                c[got].wr_id = cqx->wr_id;
                c[got].status = cqx->status;
                c[got].opcode = ibv_wc_read_opcode(cqx);
                c[got].byte_len = ibv_wc_read_byte_len(cqx);
                c[got].qp_num = ibv_wc_read_qp_num(cqx);
                c[got].flags = ibv_wc_read_wc_flags(cqx);
                c[got].imm = ibv_wc_read_imm_data(cqx);
                got++;
            } while (got < n && ibv_next_poll(cqx) == 0);
            ibv_end_poll(cqx);
        } else if (r != ENOENT) {
            printf("ibv_start_poll: %d\n", r);
            return got;
        }
        clock_gettime(CLOCK_MONOTONIC, &t);
        if ((t.tv_sec - t0.tv_sec) * 1000 +
            (t.tv_nsec - t0.tv_nsec) / 1000000 > ms) {
            break;
        }
    }
    return got;
}

static struct comp *find(struct comp *c, int n, uint64_t id)
{
    int i;

    for (i = 0; i < n; i++) {
        if (c[i].wr_id == id) {
            return &c[i];
        }
    }
    return NULL;
}

static int all_ok(struct comp *c, int n)
{
    int i;

    for (i = 0; i < n; i++) {
        if (c[i].status != IBV_WC_SUCCESS) {
            printf("wr_id %llu status %s\n", (unsigned long long)c[i].wr_id,
                   ibv_wc_status_str(c[i].status));
            return 0;
        }
    }
    return 1;
}

/*
 * 7: one thread posts NMSG sends (every 4th signaled, retrying while the
 * SQ is full) while main polls the shared CQ and reposts receives: the
 * SQ's producer and consumer move in different threads.
 */
#define NMSG 400
static struct ibv_qp *t_qa;

static void *poster(void *arg)
{
    uint32_t i;

    (void)arg;
    for (i = 0; i < NMSG; i++) {
        uint32_t *slot = (uint32_t *)(buf + 2048 + 4 * (i % 64));
        struct ibv_sge s = { .addr = (uintptr_t)slot, .length = 4,
                             .lkey = mr->lkey };
        struct ibv_send_wr wr = {
            .wr_id = 1000 + i, .sg_list = &s, .num_sge = 1,
            .opcode = IBV_WR_SEND,
            .send_flags = i % 4 == 3 ? IBV_SEND_SIGNALED : 0,
        }, *bad;
        int r;

        /* a slot is rewritten only 64 sends later: by then it is sent,
         * since the SQ holds 8 */
        *slot = i;
        while ((r = ibv_post_send(t_qa, &wr, &bad)) == ENOMEM) {
            sched_yield();
        }
        if (r) {
            printf("poster: post_send %u: %d\n", i, r);
            return (void *)1;
        }
    }
    return NULL;
}

static int threaded(struct ibv_qp *qa, struct ibv_qp *qb)
{
    struct ibv_cq *cq = ibv_cq_ex_to_cq(cqx);
    uint32_t recvd = 0, sends = 0, bad_order = 0;
    struct timespec t0, t;
    pthread_t th;
    void *ret;
    int i;

    t_qa = qa;
    for (i = 0; i < NRECV; i++) {
        post_recv(qb, (uintptr_t)(dst_base + 4 * i), 4, 2000 + i);
    }
    if (pthread_create(&th, NULL, poster, NULL)) {
        return 0;
    }
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (recvd < NMSG || sends < NMSG / 4) {
        struct ibv_wc wc[8];
        int n = ibv_poll_cq(cq, 8, wc);

        for (i = 0; i < n; i++) {
            if (wc[i].status != IBV_WC_SUCCESS) {
                printf("wr_id %llu: %s\n", (unsigned long long)wc[i].wr_id,
                       ibv_wc_status_str(wc[i].status));
                return 0;
            }
            if (wc[i].opcode == IBV_WC_SEND) {
                sends++;
                continue;
            }
            {
                uint32_t k = wc[i].wr_id - 2000;
                uint32_t *v = (uint32_t *)(dst_base + 4 * k);

                bad_order += *v != recvd;
                recvd++;
                post_recv(qb, (uintptr_t)v, 4, wc[i].wr_id);
            }
        }
        clock_gettime(CLOCK_MONOTONIC, &t);
        if (t.tv_sec - t0.tv_sec > 60) {
            printf("timeout: %u received, %u send completions\n", recvd,
                   sends);
            break;
        }
    }
    pthread_join(th, &ret);
    printf("%u messages received in order (%u out of order), %u send "
           "completions\n", recvd, bad_order, sends);
    return !ret && recvd == NMSG && sends == NMSG / 4 && !bad_order;
}

/* What the steps of main share: the two QPs, A's wr_* view, the buffers. */
struct prov {
    struct ibv_qp *qa, *qb;
    struct ibv_qp_ex *x;
    uint8_t *src, *dst;
    uint32_t max_send_sge;      /* what create_qp_ex reported for A */
};

/* The remote-writable MR and the layout of buf; fills @t's src and dst. */
static void setup_buffers(struct prov *t)
{
    int i;

    rmr = ibv_reg_mr(pd, buf, BUF, IBV_ACCESS_LOCAL_WRITE |
                     IBV_ACCESS_REMOTE_WRITE);
    if (!rmr) {
        die("ibv_reg_mr remote");
    }
    t->src = buf;               /* 0..4095: what A sends */
    t->dst = buf + 4096;        /* 4096..: B's receive buffers, 256 each */
    dst_base = buf + 2048 + 256; /* 8 x 4 bytes after the poster's slots */
    for (i = 0; i < 4096; i++) {
        t->src[i] = (uint8_t)(i * 7 + 3);
    }
}

/* CQ: refused attributes, then the one we use (into cqx) */
static void create_cq_ex(void)
{
    struct ibv_cq_init_attr_ex ca = {};

    ca.cqe = 64;
    ca.wc_flags = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
    errno = 0;
    check(!ibv_create_cq_ex(ctx, &ca) && errno == EOPNOTSUPP,
          "create_cq_ex with completion timestamps: EOPNOTSUPP");
    ca.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM |
                  IBV_WC_EX_WITH_QP_NUM | IBV_WC_EX_WITH_SRC_QP;
    cqx = ibv_create_cq_ex(ctx, &ca);
    if (!cqx) {
        die("ibv_create_cq_ex");
    }
    check(cqx->start_poll && ibv_cq_ex_to_cq(cqx)->cqe >= 64,
          "create_cq_ex: extended poll ops and >= 64 CQEs");
}

/* QP A through create_qp_ex with the ibv_wr_* API, after the refusals */
static void create_qp_a(struct prov *t)
{
    struct ibv_qp_init_attr_ex ia = {};

    ia.send_cq = ia.recv_cq = ibv_cq_ex_to_cq(cqx);
    ia.qp_type = IBV_QPT_RC;
    ia.cap.max_send_wr = 8;
    ia.cap.max_recv_wr = 8;
    ia.cap.max_send_sge = 4;
    ia.cap.max_recv_sge = 1;
    ia.cap.max_inline_data = 64;
    ia.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
    ia.pd = pd;
    ia.send_ops_flags = IBV_QP_EX_WITH_TSO;     /* no LSO on RoCE QPs */
    errno = 0;
    check(!ibv_create_qp_ex(ctx, &ia) && errno == EOPNOTSUPP,
          "create_qp_ex with TSO: EOPNOTSUPP");
    ia.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
                        IBV_QP_EX_WITH_RDMA_WRITE |
                        IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
                        IBV_QP_EX_WITH_RDMA_READ |
                        IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
                        IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD;
    /* create flags: none set is accepted (as on rxe), any set refused */
    ia.comp_mask |= IBV_QP_INIT_ATTR_CREATE_FLAGS;
    ia.create_flags = IBV_QP_CREATE_SCATTER_FCS;
    errno = 0;
    check(!ibv_create_qp_ex(ctx, &ia) && errno == EOPNOTSUPP,
          "create_qp_ex with a create flag: EOPNOTSUPP");
    ia.create_flags = 0;
    t->qa = ibv_create_qp_ex(ctx, &ia);
    if (!t->qa) {
        die("ibv_create_qp_ex with CREATE_FLAGS and no flag set");
    }
    check(ia.cap.max_send_wr == 8 && ia.cap.max_send_sge >= 4 &&
          ia.cap.max_inline_data >= 64, "create_qp_ex reports its caps");
    t->max_send_sge = ia.cap.max_send_sge;
}

/* A to INIT, where a batch of send work fails as a whole */
static void qp_a_init(struct prov *t)
{
    struct ibv_qp_ex *x = t->x;
    struct ibv_qp_attr a = {};

    a.qp_state = IBV_QPS_INIT;
    a.port_num = 1;
    a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
    if (ibv_modify_qp(t->qa, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
                      IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)) {
        die("modify A to INIT");
    }
    /* a QP in INIT takes no send work: the batch fails as a whole */
    ibv_wr_start(x);
    x->wr_id = 99;
    x->wr_flags = IBV_SEND_SIGNALED;
    ibv_wr_send(x);
    ibv_wr_set_sge(x, mr->lkey, (uintptr_t)t->src, 8);
    check(ibv_wr_complete(x) == EINVAL, "wr_complete in INIT: EINVAL");
}

/* B, a plain QP, connected to A, with its NRECV receives posted */
static void connect_qp_b(struct prov *t)
{
    int i;

    qp_access = IBV_ACCESS_REMOTE_WRITE;
    t->qb = make_qp(ibv_cq_ex_to_cq(cqx));
    connect_qp(t->qa, t->qb->qp_num);
    connect_qp(t->qb, t->qa->qp_num);
    for (i = 0; i < NRECV; i++) {
        if (post_recv(t->qb, (uintptr_t)(t->dst + 256 * i), 256, 100 + i)) {
            die("post_recv");
        }
    }
}

/* 1: inline send from two pieces, then send with immediate from SGEs */
static void test_inline_and_send_imm(struct prov *t)
{
    struct ibv_qp_ex *x = t->x;
    uint8_t *src = t->src, *dst = t->dst;
    struct ibv_data_buf d[2] = {
        { .addr = (void *)"hello, ", .length = 7 },
        { .addr = (void *)"world", .length = 5 },
    };
    struct ibv_sge s[3] = {
        { .addr = (uintptr_t)src, .length = 10, .lkey = mr->lkey },
        { .addr = (uintptr_t)(src + 100), .length = 20, .lkey = mr->lkey },
        { .addr = (uintptr_t)(src + 1000), .length = 30, .lkey = mr->lkey },
    };
    struct comp c[16], *p;
    int n, r;

    ibv_wr_start(x);
    x->wr_id = 1;
    x->wr_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
    ibv_wr_send(x);
    ibv_wr_set_inline_data_list(x, 2, d);
    x->wr_id = 2;
    x->wr_flags = IBV_SEND_SIGNALED;
    ibv_wr_send_imm(x, htobe32(0x12345678));
    ibv_wr_set_sge_list(x, 3, s);
    r = ibv_wr_complete(x);
    check(r == 0, "wr_complete of an inline send and a send_imm");
    n = poll_ex(c, 4, 5000);
    check(n == 4 && all_ok(c, n), "4 successful completions, extended poll");
    p = find(c, n, 1);
    check(p && p->opcode == IBV_WC_SEND && p->qp_num == t->qa->qp_num,
          "inline send: SEND completion on A");
    p = find(c, n, 100);
    check(p && p->opcode == IBV_WC_RECV && p->byte_len == 12 &&
          !(p->flags & IBV_WC_WITH_IMM) && p->qp_num == t->qb->qp_num &&
          !memcmp(dst, "hello, world", 12),
          "inline data list arrives: 12 bytes \"hello, world\"");
    p = find(c, n, 101);
    check(p && p->opcode == IBV_WC_RECV && p->byte_len == 60 &&
          (p->flags & IBV_WC_WITH_IMM) && p->imm == htobe32(0x12345678) &&
          !memcmp(dst + 256, src, 10) &&
          !memcmp(dst + 256 + 10, src + 100, 20) &&
          !memcmp(dst + 256 + 30, src + 1000, 30),
          "send_imm: 60 bytes gathered from 3 SGEs, immediate 0x12345678");
}

/* 2: unsignaled WRITE, signaled WRITE_IMM (retires both) */
static void test_write_then_write_imm(struct prov *t)
{
    struct ibv_qp_ex *x = t->x;
    uint8_t *src = t->src;
    uint8_t *w1 = buf + 6144, *w2 = buf + 7168;
    struct comp c[16], *p;
    int n;

    memset(w1, 0, 2048);
    ibv_wr_start(x);
    x->wr_id = 3;
    x->wr_flags = 0;
    ibv_wr_rdma_write(x, rmr->rkey, (uintptr_t)w1);
    ibv_wr_set_sge(x, mr->lkey, (uintptr_t)(src + 200), 300);
    x->wr_id = 4;
    x->wr_flags = IBV_SEND_SIGNALED;
    ibv_wr_rdma_write_imm(x, rmr->rkey, (uintptr_t)w2, htobe32(0xabcd));
    ibv_wr_set_sge(x, mr->lkey, (uintptr_t)(src + 600), 50);
    check(ibv_wr_complete(x) == 0, "wr_complete of WRITE + WRITE_IMM");
    n = poll_ex(c, 3, 3000);
    check(n == 2 && all_ok(c, n), "2 completions (the unsignaled WRITE has none)");
    p = find(c, n, 4);
    check(p && p->opcode == IBV_WC_RDMA_WRITE && !find(c, n, 3),
          "signaled WRITE_IMM completes on A");
    p = find(c, n, 102);
    check(p && p->opcode == IBV_WC_RECV_RDMA_WITH_IMM &&
          (p->flags & IBV_WC_WITH_IMM) && p->imm == htobe32(0xabcd) &&
          p->byte_len == 50,
          "B: RECV_RDMA_WITH_IMM, 50 bytes, immediate 0xabcd");
    check(!memcmp(w1, src + 200, 300) && !memcmp(w2, src + 600, 50),
          "both WRITEs landed");
}

/* 3: wr_abort posts nothing; the next post works and its wr_id shows */
static void test_wr_abort(struct prov *t)
{
    struct ibv_qp_ex *x = t->x;
    uint8_t *src = t->src, *dst = t->dst;
    struct comp c[16];
    int n;

    ibv_wr_start(x);
    x->wr_id = 5;
    x->wr_flags = IBV_SEND_SIGNALED;
    ibv_wr_send(x);
    ibv_wr_set_sge(x, mr->lkey, (uintptr_t)src, 16);
    ibv_wr_abort(x);
    check(post_send(t->qa, (uintptr_t)(src + 16), 16, mr->lkey, 6) == 0,
          "post_send after wr_abort");
    n = poll_ex(c, 3, 2000);
    check(n == 2 && all_ok(c, n) && find(c, n, 6) && find(c, n, 103) &&
          !find(c, n, 5) && !memcmp(dst + 3 * 256, src + 16, 16),
          "aborted WR never ran; the next one did (wr_id 6, recv 103)");
}

/* 4: an error in the batch drops all of it */
static void test_failed_batches(struct prov *t)
{
    struct ibv_qp_ex *x = t->x;
    uint8_t *src = t->src;
    /* one more SGE than the QP reported it takes */
    uint32_t ns = t->max_send_sge + 1;
    struct ibv_sge s[QROCE_MAX_SGE + 1];
    struct comp c[16];
    int i, n;

    for (i = 0; i < (int)ns; i++) {
        s[i].addr = (uintptr_t)src;
        s[i].length = 1;
        s[i].lkey = mr->lkey;
    }
    ibv_wr_start(x);
    x->wr_id = 7;
    x->wr_flags = IBV_SEND_SIGNALED;
    ibv_wr_send(x);
    ibv_wr_set_sge(x, mr->lkey, (uintptr_t)src, 4);
    x->wr_id = 8;
    ibv_wr_send(x);
    ibv_wr_set_sge_list(x, ns, s);
    check(ibv_wr_complete(x) == EINVAL, "max_send_sge + 1 SGEs: EINVAL");
    ibv_wr_start(x);
    x->wr_id = 9;
    x->wr_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
    ibv_wr_send(x);
    ibv_wr_set_inline_data(x, src, 4096);
    check(ibv_wr_complete(x) == EINVAL, "4096 inline bytes: EINVAL");
    ibv_wr_start(x);
    for (i = 0; i < 9; i++) {
        x->wr_id = 10 + i;
        x->wr_flags = 0;
        ibv_wr_send(x);
        ibv_wr_set_sge(x, mr->lkey, (uintptr_t)src, 1);
    }
    check(ibv_wr_complete(x) == ENOMEM, "9 WRs on an 8-deep SQ: ENOMEM");
    n = poll_ex(c, 1, 1000);
    check(n == 0, "nothing from the failed batches reached the wire");
}

/* 5: the same CQ through plain ibv_poll_cq after all that */
static void test_plain_poll(struct prov *t)
{
    struct ibv_wc wc;
    int r;

    check(post_send(t->qa, (uintptr_t)t->src, 33, mr->lkey, 20) == 0,
          "post_send again");
    r = poll1(ibv_cq_ex_to_cq(cqx), &wc) + poll1(ibv_cq_ex_to_cq(cqx), &wc);
    check(r == 2 && !memcmp(t->dst + 4 * 256, t->src, 33),
          "ibv_poll_cq on the extended CQ: both completions");
}

/* 6: the plain post_send: inline data, a zero-length send, bad opcode */
static void test_plain_post_send(struct prov *t)
{
    uint8_t *src = t->src, *dst = t->dst;
    struct ibv_sge s[2] = {
        { .addr = (uintptr_t)(src + 50), .length = 20 },
        { .addr = (uintptr_t)(src + 90), .length = 9 },
    };
    struct ibv_send_wr wr = {
        .wr_id = 30, .sg_list = s, .num_sge = 2, .opcode = IBV_WR_SEND,
        .send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE,
    }, wr0 = {
        .wr_id = 31, .opcode = IBV_WR_SEND_WITH_IMM,
        .imm_data = htobe32(7), .send_flags = IBV_SEND_SIGNALED,
    }, *bad = NULL;
    struct comp c[16], *p;
    int n;

    wr.next = &wr0;
    memset(dst + 5 * 256, 0, 512);
    check(ibv_post_send(t->qa, &wr, &bad) == 0, "post_send inline + empty send");
    n = poll_ex(c, 4, 5000);
    check(n == 4 && all_ok(c, n), "4 completions");
    p = find(c, n, 105);
    check(p && p->byte_len == 29 && !memcmp(dst + 5 * 256, src + 50, 20) &&
          !memcmp(dst + 5 * 256 + 20, src + 90, 9),
          "inline post_send: 29 bytes from 2 pieces (no lkey needed)");
    p = find(c, n, 106);
    check(p && p->byte_len == 0 && (p->flags & IBV_WC_WITH_IMM) &&
          p->imm == htobe32(7), "zero-length send with immediate");
    wr0.opcode = IBV_WR_TSO;
    wr0.next = NULL;
    check(ibv_post_send(t->qa, &wr0, &bad) == EINVAL && bad == &wr0,
          "post_send TSO: EINVAL, bad_wr set");
}

/* 7: poster thread + polling thread (B's 8 receives used up above:
 * 100..106 consumed, 107 left; start from a fresh set) */
static void test_two_threads(struct prov *t)
{
    struct ibv_wc wc;

    /* drain B's last receive with one more send */
    post_send(t->qa, (uintptr_t)t->src, 1, mr->lkey, 40);
    poll1(ibv_cq_ex_to_cq(cqx), &wc);
    poll1(ibv_cq_ex_to_cq(cqx), &wc);
    check(threaded(t->qa, t->qb), "400 sends from a second thread, polled "
          "and received in order in the first");
}

int main(int argc, char **argv)
{
    const char *dev = "qroce_0";
    struct prov t = {};
    int opt;

    while ((opt = getopt(argc, argv, "d:g:")) != -1) {
        qr_common_opt(opt, &dev);       /* -d, -g; any other is ignored */
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    open_dev(dev);
    setup_buffers(&t);
    create_cq_ex();
    create_qp_a(&t);
    t.x = ibv_qp_to_qp_ex(t.qa);
    check(t.x && t.x->wr_send && t.x->wr_rdma_write_imm &&
          t.x->wr_atomic_fetch_add,
          "ibv_qp_to_qp_ex gives the wr_* ops asked for");
    if (!t.x) {
        return 1;
    }
    qp_a_init(&t);
    connect_qp_b(&t);
    test_inline_and_send_imm(&t);
    test_write_then_write_imm(&t);
    test_wr_abort(&t);
    test_failed_batches(&t);
    test_plain_poll(&t);
    test_plain_post_send(&t);
    test_two_threads(&t);

    ibv_destroy_qp(t.qa);
    ibv_destroy_qp(t.qb);
    ibv_destroy_cq(ibv_cq_ex_to_cq(cqx));
    ibv_dereg_mr(rmr);
    ibv_dereg_mr(mr);
    ibv_dealloc_pd(pd);
    ibv_close_device(ctx);
    return failed;
}
