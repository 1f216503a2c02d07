/*
 * qroce-srq: a shared receive queue in one guest, QPs looped back through
 * the device.  Receives on a QP attached to the SRQ come from it in order,
 * with their wr_id and data; the QP's own post_recv is refused; the limit
 * event fires once, when fewer WQEs than the limit remain, and disarms the
 * limit; a QP on the SRQ that goes to ERR raises LAST_WQE_REACHED and
 * leaves the SRQ's WQEs to the other QPs; an SRQ in use cannot be
 * destroyed.  Prints PASS/FAIL lines; exit status 1 if any failed.
 *
 * usage: qroce-srq [-d DEVICE] [-g GID_INDEX]
 */
#include <poll.h>
#include <unistd.h>
#include "qr_verbs.h"

#define SLOT 256

/* The next async event within @ms, acknowledged; its type or -1. */
static int async_event(int ms, void **element)
{
    struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
    struct ibv_async_event ev;

    if (poll(&pfd, 1, ms) != 1 || ibv_get_async_event(ctx, &ev)) {
        return -1;
    }
    *element = ev.element.srq;  /* a union: the srq, qp or cq */
    ibv_ack_async_event(&ev);
    return ev.event_type;
}

/*
 * Send @len bytes of pattern @seed from @from; the receive must complete
 * on @to with @id and the bytes in SRQ slot @slot.
 */
static int send_one(struct ibv_cq *cq, struct ibv_qp *from, struct ibv_qp *to,
                    uint32_t len, uint8_t seed, uint64_t id, int slot)
{
    uint8_t *src = buf, *dst = buf + 4096 + slot * SLOT;
    struct ibv_wc wc[2];
    int i, n = 0, got_recv = 0, got_send = 0;

    for (i = 0; i < (int)len; i++) {
        src[i] = (uint8_t)(seed + i * 11);
    }
    if (post_send(from, (uintptr_t)src, len, mr->lkey, 1)) {
        return 0;
    }
    while (n < 2 && poll1(cq, &wc[n])) {
        if (wc[n].status != IBV_WC_SUCCESS) {
            printf("  completion status %s\n",
                   ibv_wc_status_str(wc[n].status));
            return 0;
        }
        if (wc[n].opcode == IBV_WC_RECV) {
            got_recv = wc[n].wr_id == id && wc[n].qp_num == to->qp_num &&
                       wc[n].byte_len == len;
        } else {
            got_send = 1;
        }
        n++;
    }
    return got_recv && got_send && !memcmp(src, dst, len);
}

int main(int argc, char **argv)
{
    const char *dev = "qroce_0";
    struct ibv_srq_init_attr sa = { .attr = { .max_wr = 16, .max_sge = 1 } };
    struct ibv_srq_attr attr = {};
    struct ibv_qp_attr qa = { .qp_state = IBV_QPS_ERR };
    struct ibv_qp *a, *b, *c, *d;
    struct ibv_srq *srq;
    struct ibv_cq *cq;
    void *el;
    int opt, i, ok;

    while ((opt = getopt(argc, argv, "d:g:")) != -1) {
        if (opt == 'd') {
            dev = optarg;
        } else if (opt == 'g') {
            gid_index = atoi(optarg);
        } else {
            fprintf(stderr, "usage: qroce-srq [-d DEVICE] [-g GID_INDEX]\n");
            return 2;
        }
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    open_dev(dev);
    cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
    srq = ibv_create_srq(pd, &sa);
    if (!cq || !srq) {
        die("ibv_create_srq");
    }
    check(!ibv_query_srq(srq, &attr) && attr.max_wr >= 16 &&
          attr.srq_limit == 0, "query_srq: max_wr >= 16, no limit");

    a = make_qp(cq);
    b = make_srq_qp(cq, srq);
    connect_qp(a, b->qp_num);
    connect_qp(b, a->qp_num);
    errno = 0;
    check(post_recv(b, (uintptr_t)buf + 4096, SLOT, 1) != 0,
          "post_recv on a QP attached to an SRQ is refused");

    for (i = 0; i < 8; i++) {
        struct ibv_sge sge = {
            .addr = (uintptr_t)buf + 4096 + i * SLOT, .length = SLOT,
            .lkey = mr->lkey,
        };
        struct ibv_recv_wr wr = { .wr_id = 200 + i, .sg_list = &sge,
                                  .num_sge = 1 }, *bad;

        if (ibv_post_srq_recv(srq, &wr, &bad)) {
            die("ibv_post_srq_recv");
        }
    }
    attr.srq_limit = 4;
    check(!ibv_modify_srq(srq, &attr, IBV_SRQ_LIMIT) &&
          !ibv_query_srq(srq, &attr) && attr.srq_limit == 4,
          "modify_srq arms the limit at 4");

    /* 8 posted, limit 4: no event after 3 receives (5 left) */
    ok = 1;
    for (i = 0; i < 3; i++) {
        ok &= send_one(cq, a, b, 10 + 50 * i, i, 200 + i, i);
    }
    check(ok, "3 SENDs land in the SRQ's WQEs 200..202 in order, bytes equal");
    check(async_event(200, &el) == -1, "no limit event with 5 WQEs left");
    ok = send_one(cq, a, b, SLOT, 3, 203, 3) &&
         send_one(cq, a, b, 1, 4, 204, 4);
    check(ok, "2 more SENDs: WQEs 203, 204");
    check(async_event(5000, &el) == IBV_EVENT_SRQ_LIMIT_REACHED && el == srq,
          "SRQ_LIMIT_REACHED with 3 WQEs left");
    check(!ibv_query_srq(srq, &attr) && attr.srq_limit == 0,
          "the event disarmed the limit");
    errno = 0;
    check(ibv_destroy_srq(srq) != 0, "destroy_srq while a QP uses it fails");

    /* b to ERR: LAST_WQE_REACHED; the SRQ's WQEs go to the next QP */
    check(!ibv_modify_qp(b, &qa, IBV_QP_STATE), "QP on the SRQ to ERR");
    ok = 0;
    for (i = 0; i < 3 && !ok; i++) {
        ok = async_event(5000, &el) == IBV_EVENT_QP_LAST_WQE_REACHED &&
             el == b;
    }
    check(ok, "QP_LAST_WQE_REACHED for it");
    c = make_qp(cq);
    d = make_srq_qp(cq, srq);
    connect_qp(c, d->qp_num);
    connect_qp(d, c->qp_num);
    check(send_one(cq, c, d, 100, 5, 205, 5),
          "another QP on the SRQ receives into WQE 205");

    ibv_destroy_qp(a);
    ibv_destroy_qp(b);
    ibv_destroy_qp(c);
    ibv_destroy_qp(d);
    check(!ibv_destroy_srq(srq), "destroy_srq once no QP uses it");
    ibv_destroy_cq(cq);
    ibv_dereg_mr(mr);
    ibv_dealloc_pd(pd);
    ibv_close_device(ctx);
    return failed;
}
