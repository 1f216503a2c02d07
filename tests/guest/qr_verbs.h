/*
 * Helpers shared by the guest test programs: one device, QPs connected to
 * each other through the device (loopback), polling with a time limit.
 */
#ifndef QR_VERBS_H
#define QR_VERBS_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
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

static inline void check(int ok, const char *what)
{
    printf("%s %s\n", ok ? "PASS" : "FAIL", what);
    if (!ok) {
        failed = 1;
    }
}

static inline void die(const char *what)
{
    fprintf(stderr, "qroce-neg: %s: %s\n", what, strerror(errno));
    exit(2);
}

static int qp_access = IBV_ACCESS_REMOTE_WRITE;
static int qp_sge = 2;          /* max_send_sge and max_recv_sge */
static int qp_depth = 8;        /* max_send_wr and max_recv_wr */
static int qp_rd_atom = 1;      /* max_rd_atomic and max_dest_rd_atomic */
static int qp_retry = 7;        /* retry_cnt */
static int qp_timeout = 14;     /* local ACK timeout: 4.096 us << 14 */
static int qp_rnr_timer = 12;   /* min_rnr_timer (12: 0.64 ms) */

static inline struct ibv_qp *make_qp(struct ibv_cq *cq)
{
    struct ibv_qp_init_attr ia = {
        .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
        .cap = { .max_send_wr = qp_depth, .max_recv_wr = qp_depth,
                 .max_send_sge = qp_sge, .max_recv_sge = qp_sge },
    };
    struct ibv_qp_attr a = {
        .qp_state = IBV_QPS_INIT, .port_num = 1,
        .qp_access_flags = qp_access,
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

/* An RC QP that receives from @srq, in INIT. */
static inline struct ibv_qp *make_srq_qp(struct ibv_cq *cq, struct ibv_srq *srq)
{
    struct ibv_qp_init_attr ia = {
        .send_cq = cq, .recv_cq = cq, .srq = srq, .qp_type = IBV_QPT_RC,
        .cap = { .max_send_wr = 8, .max_send_sge = 1 },
    };
    struct ibv_qp_attr a = {
        .qp_state = IBV_QPS_INIT, .port_num = 1,
        .qp_access_flags = IBV_ACCESS_REMOTE_WRITE,
    };
    struct ibv_qp *qp = ibv_create_qp(pd, &ia);

    if (!qp || ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
                             IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)) {
        die("QP on the SRQ");
    }
    return qp;
}

/*
 * Connect @qp to QP @remote at @dgid: RTR with @rq_psn, RTS with @sq_psn,
 * path MTU @mtu.
 */
static inline void connect_to_mtu(struct ibv_qp *qp, uint32_t remote,
                                  const union ibv_gid *dgid, uint32_t rq_psn,
                                  uint32_t sq_psn, enum ibv_mtu mtu)
{
    struct ibv_qp_attr a = {
        .qp_state = IBV_QPS_RTR, .path_mtu = mtu,
        .dest_qp_num = remote, .rq_psn = rq_psn,
        .max_dest_rd_atomic = qp_rd_atom, .min_rnr_timer = qp_rnr_timer,
        .ah_attr = { .is_global = 1, .port_num = 1, .grh = {
                     .dgid = *dgid, .hop_limit = 64,
                     .sgid_index = gid_index } },
    };

    if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
                      IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                      IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)) {
        die("modify to RTR");
    }
    memset(&a, 0, sizeof(a));
    a.qp_state = IBV_QPS_RTS;
    a.sq_psn = sq_psn;
    a.timeout = qp_timeout;
    a.retry_cnt = qp_retry;
    a.rnr_retry = 7;
    a.max_rd_atomic = qp_rd_atom;
    if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
                      IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                      IBV_QP_MAX_QP_RD_ATOMIC)) {
        die("modify to RTS");
    }
}

/* connect_to_mtu() at path MTU 1024 */
static inline void connect_to(struct ibv_qp *qp, uint32_t remote,
                              const union ibv_gid *dgid, uint32_t rq_psn,
                              uint32_t sq_psn)
{
    connect_to_mtu(qp, remote, dgid, rq_psn, sq_psn, IBV_MTU_1024);
}

/* Connect @qp to @remote on this device (loopback), PSNs 100. */
static inline void connect_qp(struct ibv_qp *qp, uint32_t remote)
{
    union ibv_gid gid;

    if (ibv_query_gid(ctx, 1, gid_index, &gid)) {
        die("ibv_query_gid");
    }
    connect_to(qp, remote, &gid, 100, 100);
}

static inline void make_pair(struct pair *p)
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

static inline void free_pair(struct pair *p)
{
    ibv_destroy_qp(p->a);
    ibv_destroy_qp(p->b);
    ibv_destroy_cq(p->cq);
}

/* A UD QP in RTS on @cq (both sides) with Q_Key @qkey, @depth WRs each way. */
static inline struct ibv_qp *make_ud_qp(struct ibv_cq *cq, uint32_t qkey,
                                        uint32_t depth)
{
    struct ibv_qp_init_attr ia = {
        .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UD,
        .cap = { .max_send_wr = depth, .max_recv_wr = depth,
                 .max_send_sge = 1, .max_recv_sge = 1 },
    };
    struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
                             .qkey = qkey };
    struct ibv_qp *qp = ibv_create_qp(pd, &ia);

    if (!qp || ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
                             IBV_QP_PORT | IBV_QP_QKEY)) {
        die("UD QP");
    }
    a.qp_state = IBV_QPS_RTR;
    if (ibv_modify_qp(qp, &a, IBV_QP_STATE)) {
        die("UD QP to RTR");
    }
    a.qp_state = IBV_QPS_RTS;
    a.sq_psn = 0;
    if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN)) {
        die("UD QP to RTS");
    }
    return qp;
}

/*
 * Device counter @name (hw_counters in sysfs, per port or per device), or
 * -1 if it is not there.  The kernel caches the values for 10 ms.
 */
static inline long long hw_counter(const char *name)
{
    const char *dev = ibv_get_device_name(ctx->device);
    char path[256];
    long long v;
    FILE *f;
    int i;

    for (i = 0; i < 2; i++) {
        snprintf(path, sizeof(path), i ?
                 "/sys/class/infiniband/%s/hw_counters/%s" :
                 "/sys/class/infiniband/%s/ports/1/hw_counters/%s",
                 dev, name);
        f = fopen(path, "r");
        if (!f) {
            continue;
        }
        if (fscanf(f, "%lld", &v) != 1) {
            v = -1;
        }
        fclose(f);
        if (v >= 0) {
            return v;
        }
    }
    return -1;
}

/* Poll one completion within @secs seconds (0 if none came). */
static inline int poll_within(struct ibv_cq *cq, struct ibv_wc *wc,
                              int secs)
{
    struct timespec t0, t;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        int n = ibv_poll_cq(cq, 1, wc);

        if (n) {
            return n;
        }
        clock_gettime(CLOCK_MONOTONIC, &t);
        if (t.tv_sec - t0.tv_sec > secs) {
            return 0;
        }
    }
}

/* Poll one completion within 5 s. */
static inline int poll1(struct ibv_cq *cq, struct ibv_wc *wc)
{
    return poll_within(cq, wc, 5);
}

/* Post @wr on @qp and wait for one completion: its status (and *@wc). */
static inline enum ibv_wc_status run_wr(struct ibv_qp *qp, struct ibv_cq *cq,
                                        struct ibv_send_wr *wr,
                                        struct ibv_wc *wc)
{
    struct ibv_send_wr *bad;
    struct ibv_wc w;

    wc = wc ? wc : &w;
    if (ibv_post_send(qp, wr, &bad) || !poll1(cq, wc)) {
        return IBV_WC_GENERAL_ERR;
    }
    return wc->status;
}

static inline int post_send(struct ibv_qp *qp, uint64_t addr, uint32_t len,
                     uint32_t lkey, uint64_t id)
{
    struct ibv_sge sge = { .addr = addr, .length = len, .lkey = lkey };
    struct ibv_send_wr wr = {
        .wr_id = id, .sg_list = &sge, .num_sge = 1,
        .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
    }, *bad;

    return ibv_post_send(qp, &wr, &bad);
}

static inline int post_recv(struct ibv_qp *qp, uint64_t addr, uint32_t len,
                     uint64_t id)
{
    struct ibv_sge sge = { .addr = addr, .length = len, .lkey = mr->lkey };
    struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 },
                       *bad;

    return ibv_post_recv(qp, &wr, &bad);
}

/*
 * The options every program takes, from getopt() returning @c: -d DEVICE
 * (into *@dev) and -g GID_INDEX.  False if @c is neither.
 */
static inline int qr_common_opt(int c, const char **dev)
{
    if (c == 'd') {
        *dev = optarg;
    } else if (c == 'g') {
        gid_index = atoi(optarg);
    } else {
        return 0;
    }
    return 1;
}

/* Open DEVICE by name; sets ctx, pd, buf and mr. */
static inline void open_dev(const char *dev)
{
    struct ibv_device **list = ibv_get_device_list(NULL);
    int i;

    for (i = 0; list && list[i]; i++) {
        if (!strcmp(ibv_get_device_name(list[i]), dev)) {
            ctx = ibv_open_device(list[i]);
        }
    }
    if (list) {
        ibv_free_device_list(list);
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
}

#endif
