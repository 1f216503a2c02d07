/*
 * qroce-srq-resize: ibv_modify_srq(IBV_SRQ_MAX_WR) keeps every posted
 * receive, in order, once.
 *
 *   qroce-srq-resize [-d DEVICE] [-g GID_INDEX]
 *
 * An RC pair looped back through the device: A sends, B receives from a
 * 4-entry SRQ.  After a first round (so that the indexes are past the
 * ring and land in other slots of the new one), with one receive
 * consumed but not yet polled and three still posted, the SRQ grows to
 * 16: the full 16 (counting the one not
 * polled) can then be posted and no more, and all 16 complete in order
 * with their own buffers' data.  A shrink below the receives posted
 * fails with EINVAL and loses none; a shrink that fits works; a limit
 * not below the new size is refused.  Prints PASS/FAIL lines; exits 1 if
 * a check failed, 2 on a set-up error.
 */
#include <getopt.h>
#include <unistd.h>
#include "qr_verbs.h"

#define SLOT 256        /* receive buffers: 16 slots from buf + 4096 */
#define LEN 64

static struct ibv_cq *cq;
static struct ibv_qp *qa, *qb;
static struct ibv_srq *srq;
static uint64_t next_recv = 96, next_send = 1, post_id = 96, send_id = 1;

static uint8_t *slot(uint64_t id)
{
    return buf + 4096 + (id % 16) * SLOT;
}

/* Post @n receives on the SRQ; how many were taken. */
static int post_recvs(int n)
{
    int i;

    for (i = 0; i < n; i++) {
        struct ibv_sge sge = {
            .addr = (uintptr_t)slot(post_id), .length = SLOT,
            .lkey = mr->lkey,
        };
        struct ibv_recv_wr wr = { .wr_id = post_id, .sg_list = &sge,
                                  .num_sge = 1 }, *bad;

        if (ibv_post_srq_recv(srq, &wr, &bad)) {
            break;
        }
        memset(slot(post_id), 0, SLOT);
        post_id++;
    }
    return i;
}

/* @n SENDs from A, each of LEN bytes of a pattern of its receive's id. */
static void send_n(int n)
{
    for (int i = 0; i < n; i++) {
        uint64_t rid = 95 + send_id;    /* the n-th SEND, the n-th RECV */
        uint8_t *src = buf + 64 * (send_id % 32);

        for (int k = 0; k < LEN; k++) {
            src[k] = (uint8_t)(rid * 7 + k);
        }
        if (post_send(qa, (uintptr_t)src, LEN, mr->lkey, send_id++)) {
            die("post_send");
        }
        usleep(20000);  /* one at a time: each source slot is reused */
    }
    usleep(200000);
}

/*
 * Poll @n SENDs and @n RECVs: each kind in order, each RECV with its
 * receive's own data.
 */
static void take(int n, const char *when)
{
    struct ibv_wc wc;
    char msg[200];
    int bad = 0, got = 0;

    for (int i = 0; i < 2 * n && poll1(cq, &wc); i++) {
        got++;
        if (wc.status != IBV_WC_SUCCESS) {
            bad++;
        } else if (wc.opcode == IBV_WC_SEND) {
            bad += wc.wr_id != next_send++;
        } else if (wc.opcode == IBV_WC_RECV) {
            uint8_t want[LEN];

            for (int k = 0; k < LEN; k++) {
                want[k] = (uint8_t)(wc.wr_id * 7 + k);
            }
            bad += wc.wr_id != next_recv++ || wc.byte_len != LEN ||
                   memcmp(slot(wc.wr_id), want, LEN);
        } else {
            bad++;
        }
    }
    usleep(100000);
    snprintf(msg, sizeof(msg), "%s: %d of %d completions, %d wrong or out "
             "of order, none left over", when, got, 2 * n, bad);
    check(got == 2 * n && !bad && ibv_poll_cq(cq, 1, &wc) == 0, msg);
}

static void resize(uint32_t max_wr, int want_err, uint32_t want_size,
                   const char *when)
{
    struct ibv_srq_attr a = { .max_wr = max_wr };
    char msg[200];
    int err = ibv_modify_srq(srq, &a, IBV_SRQ_MAX_WR);

    memset(&a, 0, sizeof(a));
    ibv_query_srq(srq, &a);
    snprintf(msg, sizeof(msg), "%s: modify_srq(max_wr %u) returns %d "
             "(want %d), max_wr %u (want %u)", when, max_wr, err, want_err,
             a.max_wr, want_size);
    check(err == want_err && a.max_wr == want_size, msg);
}

int main(int argc, char **argv)
{
    struct ibv_srq_init_attr sa = { .attr = { .max_wr = 4, .max_sge = 1 } };
    struct ibv_srq_attr a;
    const char *dev = "qroce_0";
    struct ibv_wc wc;
    int c;

    while ((c = getopt(argc, argv, "d:g:")) != -1) {
        switch (c) {
        case 'd': dev = optarg; break;
        case 'g': gid_index = atoi(optarg); break;
        default:
            fprintf(stderr, "usage: qroce-srq-resize [-d DEVICE] "
                    "[-g GID_INDEX]\n");
            return 2;
        }
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    open_dev(dev);
    qp_depth = 32;
    cq = ibv_create_cq(ctx, 128, NULL, NULL, 0);
    srq = ibv_create_srq(pd, &sa);
    if (!cq || !srq) {
        die("ibv_create_srq");
    }
    qa = make_qp(cq);
    qb = make_srq_qp(cq, srq);
    connect_qp(qa, qb->qp_num);
    connect_qp(qb, qa->qp_num);

    /* one round first, so that the indexes move to other slots below */
    post_recvs(4);
    send_n(4);
    take(4, "a first round on the 4-entry SRQ");

    /* 4 posted, 1 consumed and not polled: grow to 16 */
    check(post_recvs(5) == 4, "a 4-entry SRQ takes 4 receives");
    send_n(1);
    resize(16, 0, 16, "grow with 1 receive unpolled and 3 posted");
    check(post_recvs(13) == 12, "then it takes 12 more, not 13");
    send_n(15);
    take(16, "grow");

    /* shrink below what is posted: refused, nothing lost */
    check(post_recvs(3) == 3, "3 more posted");
    resize(2, EINVAL, 16, "shrink below the 3 receives posted");
    send_n(3);
    take(3, "after the refused shrink");

    /* shrink that fits */
    check(post_recvs(2) == 2, "2 more posted");
    resize(4, 0, 4, "shrink to 4 with 2 receives posted");
    check(post_recvs(3) == 2, "then it takes 2 more, not 3");
    send_n(4);
    take(4, "shrink");

    memset(&a, 0, sizeof(a));
    a.max_wr = 8;
    a.srq_limit = 8;
    check(ibv_modify_srq(srq, &a, IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT) == EINVAL,
          "a limit not below the new size is refused");
    check(ibv_poll_cq(cq, 1, &wc) == 0, "no completion left over");

    ibv_destroy_qp(qa);
    ibv_destroy_qp(qb);
    ibv_destroy_srq(srq);
    ibv_destroy_cq(cq);
    return failed;
}
