/*
 * qroce-neg: bad work requests get the right error, and nothing else breaks.
 *
 *   qroce-neg [-d DEVICE] [-g GID_INDEX]
 *
 * Two RC QP pairs on one device, each connected to itself through the
 * device (loopback).  On pair A: a SEND with a bad lkey, a SEND whose SGE
 * runs past its MR, and a post on a QP in INIT.  Pair B then carries a
 * SEND/RECV whose bytes are compared.  Prints PASS/FAIL lines; exits 1 if
 * any check failed, 2 on a set-up error.
 */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <infiniband/verbs.h>

#define BUF 8192

struct pair {
    struct ibv_cq *cq;
    struct ibv_qp *a, *b;       /* a sends to b */
};

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_mr *mr;
static uint8_t *buf;
static int gid_index = 1;
static int failed;

static void check(int ok, const char *what)
{
    printf("%s %s\n", ok ? "PASS" : "FAIL", what);
    if (!ok) {
        failed = 1;
    }
}

static void die(const char *what)
{
    fprintf(stderr, "qroce-neg: %s: %s\n", what, strerror(errno));
    exit(2);
}

static struct ibv_qp *make_qp(struct ibv_cq *cq)
{
    struct ibv_qp_init_attr ia = {
        .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
        .cap = { .max_send_wr = 8, .max_recv_wr = 8,
                 .max_send_sge = 2, .max_recv_sge = 2 },
    };
    struct ibv_qp_attr a = {
        .qp_state = IBV_QPS_INIT, .port_num = 1,
        .qp_access_flags = IBV_ACCESS_REMOTE_WRITE,
    };
    struct ibv_qp *qp = ibv_create_qp(pd, &ia);

    if (!qp) {
        die("ibv_create_qp");
    }
    if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
                      IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)) {
        die("modify to INIT");
    }
    return qp;
}

/* Connect @qp to @remote on this device: RTR then RTS. */
static void connect_qp(struct ibv_qp *qp, uint32_t remote)
{
    union ibv_gid gid;
    struct ibv_qp_attr a = {
        .qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
        .dest_qp_num = remote, .rq_psn = 100, .max_dest_rd_atomic = 1,
        .min_rnr_timer = 12,
        .ah_attr = { .is_global = 1, .port_num = 1,
                     .grh = { .hop_limit = 1, .sgid_index = gid_index } },
    };

    if (ibv_query_gid(ctx, 1, gid_index, &gid)) {
        die("ibv_query_gid");
    }
    a.ah_attr.grh.dgid = gid;
    if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
                      IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                      IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)) {
        die("modify to RTR");
    }
    memset(&a, 0, sizeof(a));
    a.qp_state = IBV_QPS_RTS;
    a.sq_psn = 100;
    a.timeout = 14;
    a.retry_cnt = 7;
    a.rnr_retry = 7;
    a.max_rd_atomic = 1;
    if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
                      IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                      IBV_QP_MAX_QP_RD_ATOMIC)) {
        die("modify to RTS");
    }
}

static void make_pair(struct pair *p)
{
    p->cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
    if (!p->cq) {
        die("ibv_create_cq");
    }
    p->a = make_qp(p->cq);
    p->b = make_qp(p->cq);
    connect_qp(p->a, p->b->qp_num);
    connect_qp(p->b, p->a->qp_num);
}

/* Poll one completion within 5 s. */
static int poll1(struct ibv_cq *cq, struct ibv_wc *wc)
{
    struct timespec t0, t;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        int n = ibv_poll_cq(cq, 1, wc);

        if (n) {
            return n;
        }
        clock_gettime(CLOCK_MONOTONIC, &t);
        if (t.tv_sec - t0.tv_sec > 5) {
            return 0;
        }
    }
}

static int post_send(struct ibv_qp *qp, uint64_t addr, uint32_t len,
                     uint32_t lkey, uint64_t id)
{
    struct ibv_sge sge = { .addr = addr, .length = len, .lkey = lkey };
    struct ibv_send_wr wr = {
        .wr_id = id, .sg_list = &sge, .num_sge = 1,
        .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
    }, *bad;

    return ibv_post_send(qp, &wr, &bad);
}

static int post_recv(struct ibv_qp *qp, uint64_t addr, uint32_t len,
                     uint64_t id)
{
    struct ibv_sge sge = { .addr = addr, .length = len, .lkey = mr->lkey };
    struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 },
                       *bad;

    return ibv_post_recv(qp, &wr, &bad);
}

/* Send from @p->a with @lkey/@len; expect @status on the send CQE. */
static void bad_send(const char *what, uint32_t lkey, uint64_t addr,
                     uint32_t len, enum ibv_wc_status status)
{
    struct pair p;
    struct ibv_wc wc;
    char msg[160];
    int n;

    make_pair(&p);
    post_recv(p.b, (uintptr_t)buf + BUF / 2, BUF / 2, 2);
    if (post_send(p.a, addr, len, lkey, 1)) {
        snprintf(msg, sizeof(msg), "%s: ibv_post_send failed", what);
        check(0, msg);
        return;
    }
    n = poll1(p.cq, &wc);
    snprintf(msg, sizeof(msg), "%s: send completes with %s (got %s)", what,
             ibv_wc_status_str(status),
             n ? ibv_wc_status_str(wc.status) : "nothing");
    check(n && wc.wr_id == 1 && wc.status == status, msg);
    /* the QP is now in error: the receive never matched, nothing else came */
    n = poll1(p.cq, &wc);
    snprintf(msg, sizeof(msg), "%s: no receive completed on the peer", what);
    check(n == 0, msg);
    ibv_destroy_qp(p.a);
    ibv_destroy_qp(p.b);
    ibv_destroy_cq(p.cq);
}

int main(int argc, char **argv)
{
    const char *dev = "qroce_0";
    struct ibv_device **list;
    struct ibv_qp_attr qa;
    struct ibv_qp_init_attr qi;
    struct ibv_wc wc;
    struct pair p;
    int i, n, c, got_send = 0, got_recv = 0;

    while ((c = getopt(argc, argv, "d:g:")) != -1) {
        switch (c) {
        case 'd':
            dev = optarg;
            break;
        case 'g':
            gid_index = atoi(optarg);
            break;
        default:
            fprintf(stderr, "usage: qroce-neg [-d DEVICE] [-g GID_INDEX]\n");
            return 2;
        }
    }
    list = ibv_get_device_list(NULL);
    for (i = 0; list && list[i]; i++) {
        if (!strcmp(ibv_get_device_name(list[i]), dev)) {
            ctx = ibv_open_device(list[i]);
        }
    }
    if (!ctx) {
        die(dev);
    }
    pd = ibv_alloc_pd(ctx);
    buf = calloc(1, BUF);
    if (!pd || !buf) {
        die("ibv_alloc_pd");
    }
    mr = ibv_reg_mr(pd, buf, BUF, IBV_ACCESS_LOCAL_WRITE);
    if (!mr) {
        die("ibv_reg_mr");
    }

    bad_send("bad lkey", mr->lkey ^ 0x5500, (uintptr_t)buf, 64,
             IBV_WC_LOC_PROT_ERR);
    bad_send("SGE past the end of its MR", mr->lkey,
             (uintptr_t)buf + BUF - 16, 64, IBV_WC_LOC_PROT_ERR);
    {
        /* the device enforces PDs: an MR of another PD is refused */
        struct ibv_pd *pd2 = ibv_alloc_pd(ctx);
        struct ibv_mr *mr2 = pd2 ? ibv_reg_mr(pd2, buf, BUF, 0) : NULL;
        struct ibv_mr *mr3;
        uint32_t stale;

        if (!mr2) {
            die("second PD and MR");
        }
        bad_send("MR of another PD", mr2->lkey, (uintptr_t)buf, 64,
                 IBV_WC_LOC_PROT_ERR);
        ibv_dereg_mr(mr2);
        ibv_dealloc_pd(pd2);
        /* a deregistered key is stale, even when its slot is reused */
        mr3 = ibv_reg_mr(pd, buf, BUF, IBV_ACCESS_LOCAL_WRITE);
        if (!mr3) {
            die("ibv_reg_mr");
        }
        stale = mr3->lkey;
        ibv_dereg_mr(mr3);
        mr3 = ibv_reg_mr(pd, buf, BUF, IBV_ACCESS_LOCAL_WRITE);
        if (!mr3) {
            die("ibv_reg_mr");
        }
        check(mr3->lkey != stale, "a re-registered MR gets a new key");
        bad_send("stale lkey after dereg", stale, (uintptr_t)buf, 64,
                 IBV_WC_LOC_PROT_ERR);
        ibv_dereg_mr(mr3);
    }

    /* a QP still in INIT takes no send work */
    make_pair(&p);
    {
        struct pair q;

        q.cq = p.cq;
        q.a = make_qp(p.cq);
        n = post_send(q.a, (uintptr_t)buf, 64, mr->lkey, 7);
        check(n == EINVAL, "post_send on a QP in INIT fails with EINVAL");
        check(ibv_query_qp(q.a, &qa, IBV_QP_STATE, &qi) == 0 &&
              qa.qp_state == IBV_QPS_INIT, "that QP is still in INIT");
        check(poll1(p.cq, &wc) == 0, "and it made no completion");
        ibv_destroy_qp(q.a);
    }

    /* another pair on the same device still works, bytes intact */
    for (i = 0; i < BUF / 2; i++) {
        buf[i] = (uint8_t)(i * 7 + 3);
    }
    memset(buf + BUF / 2, 0, BUF / 2);
    post_recv(p.b, (uintptr_t)buf + BUF / 2, BUF / 2, 20);
    check(post_send(p.a, (uintptr_t)buf, 3000, mr->lkey, 10) == 0,
          "good pair: post_send");
    for (i = 0; i < 2; i++) {
        if (!poll1(p.cq, &wc)) {
            break;
        }
        if (wc.wr_id == 10 && wc.status == IBV_WC_SUCCESS &&
            wc.opcode == IBV_WC_SEND) {
            got_send = 1;
        }
        if (wc.wr_id == 20 && wc.status == IBV_WC_SUCCESS &&
            wc.opcode == IBV_WC_RECV && wc.byte_len == 3000) {
            got_recv = 1;
        }
    }
    check(got_send, "good pair: send completes successfully");
    check(got_recv, "good pair: receive completes with 3000 bytes");
    check(!memcmp(buf, buf + BUF / 2, 3000), "good pair: bytes received equal bytes sent");

    /* moving a QP to ERR flushes its posted receives */
    post_recv(p.b, (uintptr_t)buf + BUF / 2, 64, 30);
    post_recv(p.b, (uintptr_t)buf + BUF / 2, 64, 31);
    qa.qp_state = IBV_QPS_ERR;
    check(ibv_modify_qp(p.b, &qa, IBV_QP_STATE) == 0, "modify to ERR");
    n = poll1(p.cq, &wc);
    check(n && wc.wr_id == 30 && wc.status == IBV_WC_WR_FLUSH_ERR,
          "first posted receive flushed with WR_FLUSH_ERR");
    n = poll1(p.cq, &wc);
    check(n && wc.wr_id == 31 && wc.status == IBV_WC_WR_FLUSH_ERR,
          "second posted receive flushed with WR_FLUSH_ERR");

    ibv_destroy_qp(p.a);
    ibv_destroy_qp(p.b);
    ibv_destroy_cq(p.cq);
    ibv_dereg_mr(mr);
    ibv_dealloc_pd(pd);
    ibv_close_device(ctx);
    ibv_free_device_list(list);
    return failed;
}
