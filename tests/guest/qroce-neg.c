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
#include <getopt.h>
#include "qr_verbs.h"

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
    /*
     * the QP is now in error: the receive never matched, nothing else
     * came (the send failed before anything went out, so a second is
     * ample)
     */
    n = poll_within(p.cq, &wc, 1);
    snprintf(msg, sizeof(msg), "%s: no receive completed on the peer", what);
    check(n == 0, msg);
    ibv_destroy_qp(p.a);
    ibv_destroy_qp(p.b);
    ibv_destroy_cq(p.cq);
}

/* the device enforces PDs, and a deregistered key is stale */
static void foreign_and_stale_keys(void)
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

/* a QP still in INIT (on @p's CQ) takes no send work */
static void post_in_init(struct pair *p)
{
    struct ibv_qp_init_attr qi;
    struct ibv_qp_attr qa;
    struct ibv_wc wc;
    struct ibv_qp *a = make_qp(p->cq);
    int n;

    n = post_send(a, (uintptr_t)buf, 64, mr->lkey, 7);
    check(n == EINVAL, "post_send on a QP in INIT fails with EINVAL");
    check(ibv_query_qp(a, &qa, IBV_QP_STATE, &qi) == 0 &&
          qa.qp_state == IBV_QPS_INIT, "that QP is still in INIT");
    check(poll_within(p->cq, &wc, 1) == 0, "and it made no completion");
    ibv_destroy_qp(a);
}

/* another pair on the same device still works, bytes intact */
static void good_pair(struct pair *p)
{
    int i, got_send = 0, got_recv = 0;
    struct ibv_wc wc;

    for (i = 0; i < BUF / 2; i++) {
        buf[i] = (uint8_t)(i * 7 + 3);
    }
    memset(buf + BUF / 2, 0, BUF / 2);
    post_recv(p->b, (uintptr_t)buf + BUF / 2, BUF / 2, 20);
    check(post_send(p->a, (uintptr_t)buf, 3000, mr->lkey, 10) == 0,
          "good pair: post_send");
    for (i = 0; i < 2; i++) {
        if (!poll1(p->cq, &wc)) {
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
}

/* moving a QP to ERR flushes its posted receives */
static void err_flushes_receives(struct pair *p)
{
    struct ibv_qp_attr qa = { .qp_state = IBV_QPS_ERR };
    struct ibv_wc wc;
    int n;

    post_recv(p->b, (uintptr_t)buf + BUF / 2, 64, 30);
    post_recv(p->b, (uintptr_t)buf + BUF / 2, 64, 31);
    check(ibv_modify_qp(p->b, &qa, IBV_QP_STATE) == 0, "modify to ERR");
    n = poll1(p->cq, &wc);
    check(n && wc.wr_id == 30 && wc.status == IBV_WC_WR_FLUSH_ERR,
          "first posted receive flushed with WR_FLUSH_ERR");
    n = poll1(p->cq, &wc);
    check(n && wc.wr_id == 31 && wc.status == IBV_WC_WR_FLUSH_ERR,
          "second posted receive flushed with WR_FLUSH_ERR");
}

/*
 * ERR then RESET: the flush CQEs not yet polled go with the reset (as
 * on mlx5), so the QP's next life starts with an empty CQ
 */
static void reset_drops_flushes(struct pair *p)
{
    struct ibv_qp_attr qa = { .qp_state = IBV_QPS_ERR };
    struct ibv_wc wc;

    post_recv(p->b, (uintptr_t)buf + BUF / 2, 64, 32);
    ibv_modify_qp(p->b, &qa, IBV_QP_STATE);
    usleep(200000);             /* the device flushes meanwhile */
    qa.qp_state = IBV_QPS_RESET;
    check(ibv_modify_qp(p->b, &qa, IBV_QP_STATE) == 0, "modify ERR -> RESET");
    check(ibv_poll_cq(p->cq, 1, &wc) == 0,
          "RESET drops the QP's unpolled flush CQEs from its CQ");
}

int main(int argc, char **argv)
{
    const char *dev = "qroce_0";
    struct pair p;
    int c;

    while ((c = getopt(argc, argv, "d:g:")) != -1) {
        if (!qr_common_opt(c, &dev)) {
            fprintf(stderr, "usage: qroce-neg [-d DEVICE] [-g GID_INDEX]\n");
            return 2;
        }
    }
    open_dev(dev);

    bad_send("bad lkey", mr->lkey ^ 0x5500, (uintptr_t)buf, 64,
             IBV_WC_LOC_PROT_ERR);
    bad_send("SGE past the end of its MR", mr->lkey,
             (uintptr_t)buf + BUF - 16, 64, IBV_WC_LOC_PROT_ERR);
    foreign_and_stale_keys();
    make_pair(&p);
    post_in_init(&p);
    good_pair(&p);
    err_flushes_receives(&p);
    reset_drops_flushes(&p);

    ibv_destroy_qp(p.a);
    ibv_destroy_qp(p.b);
    ibv_destroy_cq(p.cq);
    ibv_dereg_mr(mr);
    ibv_dealloc_pd(pd);
    ibv_close_device(ctx);
    return failed;
}
