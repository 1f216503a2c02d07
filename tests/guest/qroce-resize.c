/*
 * qroce-resize: ibv_resize_cq keeps every completion, in order, once.
 *
 *   qroce-resize [-d DEVICE] [-g GID_INDEX]
 *
 * An RC pair looped back through the device shares one small CQ.  Each
 * round posts RECVs on B and SENDs from A, waits until their CQEs are in
 * the CQ, polls a few, resizes the CQ, and polls the rest: every SEND and
 * RECV must complete exactly once, each kind in the order posted, and the
 * CQ must report the new size.  Rounds: grow with CQEs outstanding,
 * shrink with CQEs outstanding, shrink below what is outstanding (EINVAL,
 * nothing lost), and traffic after the resizes.  Prints PASS/FAIL lines;
 * exits 1 if a check failed, 2 on a set-up error.
 */
#include <getopt.h>
#include <unistd.h>
#include "qr_verbs.h"

static struct ibv_cq *cq;
static struct ibv_qp *qa, *qb;
static uint64_t next_send = 1, next_recv = 1001;  /* the next ids expected */
static uint64_t post_id = 1;

/* @n RECVs on B and @n SENDs from A; wait until their 2n CQEs are in. */
static void post_round(int n)
{
    for (int i = 0; i < n; i++) {
        if (post_recv(qb, (uintptr_t)buf + 4096, 64, 1000 + post_id) ||
            post_send(qa, (uintptr_t)buf, 64, mr->lkey, post_id)) {
            die("post");
        }
        post_id++;
    }
    usleep(300000);     /* loopback: the device is done long before */
}

/* Poll @n completions, checking each against the ids expected next. */
static int take(int n, const char *when)
{
    struct ibv_wc wc;
    char msg[160];
    int bad = 0, got = 0;

    for (int i = 0; i < n; i++) {
        if (!poll1(cq, &wc)) {
            break;
        }
        got++;
        if (wc.status != IBV_WC_SUCCESS) {
            bad++;
        } else if (wc.opcode == IBV_WC_SEND) {
            bad += wc.wr_id != next_send++;
        } else if (wc.opcode == IBV_WC_RECV) {
            bad += wc.wr_id != next_recv++;
        } else {
            bad++;
        }
    }
    snprintf(msg, sizeof(msg), "%s: %d of %d completions, %d wrong or out of order",
             when, got, n, bad);
    check(got == n && !bad, msg);
    return got;
}

/* Nothing more in the CQ. */
static void empty(const char *when)
{
    struct ibv_wc wc;
    char msg[120];

    usleep(100000);
    snprintf(msg, sizeof(msg), "%s: no completion left over", when);
    check(ibv_poll_cq(cq, 1, &wc) == 0, msg);
}

static void resize(int cqe, int want_err, const char *when)
{
    char msg[160];
    int err = ibv_resize_cq(cq, cqe);

    snprintf(msg, sizeof(msg), "%s: ibv_resize_cq(%d) returns %d (want %d), cqe %d",
             when, cqe, err, want_err, cq->cqe);
    check(err == want_err && (err || cq->cqe >= cqe), msg);
}

int main(int argc, char **argv)
{
    const char *dev = "qroce_0";
    int c;

    while ((c = getopt(argc, argv, "d:g:")) != -1) {
        switch (c) {
        case 'd': dev = optarg; break;
        case 'g': gid_index = atoi(optarg); break;
        default:
            fprintf(stderr, "usage: qroce-resize [-d DEVICE] [-g GID_INDEX]\n");
            return 2;
        }
    }
    open_dev(dev);
    qp_depth = 16;
    cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
    if (!cq) {
        die("ibv_create_cq");
    }
    qa = make_qp(cq);
    qb = make_qp(cq);
    connect_qp(qa, qb->qp_num);
    connect_qp(qb, qa->qp_num);

    post_round(6);
    take(2, "grow, before");
    resize(100, 0, "grow with 10 CQEs outstanding");
    take(10, "grow, after");
    empty("grow");

    post_round(6);
    take(3, "shrink, before");
    resize(12, 0, "shrink with 9 CQEs outstanding");
    take(9, "shrink, after");
    empty("shrink");

    post_round(5);
    resize(4, EINVAL, "shrink below the 10 CQEs outstanding");
    take(10, "after the refused resize");
    empty("refused resize");

    post_round(3);
    take(6, "traffic after the resizes");
    empty("traffic");
    return failed;
}
