/*
 * qroce-verb: run one control verb and report what it returned, with
 * errno, so that a test can check how a device's refusal reaches the
 * application (docs/fault-injection.md).
 *
 *   qroce-verb [-d DEVICE] pd|cq|mr|qp|qp-efault
 *
 * Creates what the named object needs (a PD; a CQ; a PD and an MR of one
 * page; a PD, a CQ and an RC QP), then the object, and prints
 * "VERB: ok" or "VERB: failed, errno N (TEXT)".  Exits 0 on success, 1
 * when the verb failed, 2 when something it needed failed first.
 *
 * qp-efault: CREATE_QP through the write() command ABI, the provider's
 * request built here, with the driver's part of the response on a
 * read-only page: the driver has made the QP and published it when its
 * copy of the response fails, and must take it all back.  Prints
 * "create_qp (response not writable): failed, errno 14 (...)", then makes
 * an RC QP the usual way ("create_qp: ok"), destroys everything and
 * exits 0 if both went so.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <getopt.h>
#include <sys/mman.h>
#include <unistd.h>
#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>
#include "qroce-abi.h"
#include "qroce_hw.h"

static int report(const char *verb, int ok, int err)
{
    if (ok) {
        printf("%s: ok\n", verb);
        return 0;
    }
    printf("%s: failed, errno %d (%s)\n", verb, err, strerror(err));
    return 1;
}

static struct ibv_context *open_dev(const char *name)
{
    struct ibv_device **l = ibv_get_device_list(NULL);
    struct ibv_context *c = NULL;

    for (int i = 0; l && l[i]; i++) {
        if (!strcmp(ibv_get_device_name(l[i]), name)) {
            c = ibv_open_device(l[i]);
        }
    }
    if (l) {
        ibv_free_device_list(l);
    }
    return c;
}

static void usage(void)
{
    fprintf(stderr, "usage: qroce-verb [-d DEVICE] pd|cq|mr|qp|qp-efault\n");
    exit(2);
}

/* The command of qp-efault: the write() header, the core's and ours. */
struct efault_cmd {
    struct ib_uverbs_cmd_hdr hdr;
    struct ib_uverbs_create_qp cmd;
    struct qroce_create_qp_req req;
};

/*
 * CREATE_QP of an RC QP on @pd and @cq by write() on the command file,
 * rings of 8 WQEs of the smallest stride at @sq and @rq (a page each),
 * the response ending at @resp_end with the driver's part past it: the
 * command's errno, 0 if it succeeded.
 */
static int create_qp_write(struct ibv_context *ctx, struct ibv_pd *pd,
                           struct ibv_cq *cq, void *sq, void *rq,
                           uint8_t *resp_end, long psz)
{
    struct efault_cmd c = { .hdr = {
        .command = IB_USER_VERBS_CMD_CREATE_QP,
        .in_words = sizeof(c) / 4,
        .out_words = (sizeof(struct ib_uverbs_create_qp_resp) +
                      sizeof(struct qroce_create_qp_resp)) / 4,
    } };

    c.cmd.response = (uintptr_t)(resp_end -
                                 sizeof(struct ib_uverbs_create_qp_resp));
    c.cmd.user_handle = 1;
    c.cmd.pd_handle = pd->handle;
    c.cmd.send_cq_handle = cq->handle;
    c.cmd.recv_cq_handle = cq->handle;
    c.cmd.max_send_wr = 8;
    c.cmd.max_recv_wr = 8;
    c.cmd.max_send_sge = 1;
    c.cmd.max_recv_sge = 1;
    c.cmd.qp_type = IBV_QPT_RC;
    c.req.sq_buf_addr = (uintptr_t)sq;
    c.req.rq_buf_addr = (uintptr_t)rq;
    c.req.sq_buf_size = psz;
    c.req.rq_buf_size = psz;
    c.req.sq_log2_entries = 3;
    c.req.rq_log2_entries = 3;
    c.req.sq_wqe_shift = QROCE_SQ_WQE_MIN_SHIFT;
    c.req.rq_wqe_shift = QROCE_RQ_WQE_MIN_SHIFT;
    return write(ctx->cmd_fd, &c, sizeof(c)) < 0 ? errno : 0;
}

/* qp-efault (see the top): 0 if it went as it should, 1 if not. */
static int qp_efault(struct ibv_context *ctx, struct ibv_pd *pd,
                     struct ibv_cq *cq)
{
    long psz = sysconf(_SC_PAGESIZE);
    uint8_t *m = mmap(NULL, 4 * psz, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    struct ibv_qp_init_attr ia = {
        .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
        .cap = { .max_send_wr = 8, .max_recv_wr = 8,
                 .max_send_sge = 1, .max_recv_sge = 1 },
    };
    struct ibv_qp *qp;
    int err, bad;

    /* pages: the rings, the core's response, the driver's (read-only) */
    if (m == MAP_FAILED || mprotect(m + 3 * psz, psz, PROT_READ)) {
        perror("qroce-verb: mmap");
        return 2;
    }
    err = create_qp_write(ctx, pd, cq, m, m + psz, m + 3 * psz, psz);
    bad = report("create_qp (response not writable)", !err, err) != 1 ||
          err != EFAULT;
    qp = ibv_create_qp(pd, &ia);
    bad |= report("create_qp", qp != NULL, errno);
    if (qp && ibv_destroy_qp(qp)) {
        bad = 1;
    }
    if (ibv_destroy_cq(cq) || ibv_dealloc_pd(pd) || ibv_close_device(ctx)) {
        bad = 1;
    }
    return bad;
}

int main(int argc, char **argv)
{
    const char *dev = "qroce_0", *what;
    static char page[4096];
    struct ibv_context *ctx;
    struct ibv_pd *pd = NULL;
    struct ibv_cq *cq = NULL;
    int c;

    while ((c = getopt(argc, argv, "d:")) != -1) {
        if (c != 'd') {
            usage();
        }
        dev = optarg;
    }
    if (optind + 1 != argc) {
        usage();
    }
    what = argv[optind];
    if (strcmp(what, "pd") && strcmp(what, "cq") && strcmp(what, "mr") &&
        strcmp(what, "qp") && strcmp(what, "qp-efault")) {
        usage();
    }
    ctx = open_dev(dev);
    if (!ctx) {
        fprintf(stderr, "qroce-verb: cannot open %s\n", dev);
        return 2;
    }
    if (!strcmp(what, "cq")) {
        cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
        return report("create_cq", cq != NULL, errno);
    }
    pd = ibv_alloc_pd(ctx);
    if (!strcmp(what, "pd")) {
        return report("alloc_pd", pd != NULL, errno);
    }
    if (!pd) {
        fprintf(stderr, "qroce-verb: alloc_pd: %s\n", strerror(errno));
        return 2;
    }
    if (!strcmp(what, "mr")) {
        struct ibv_mr *mr = ibv_reg_mr(pd, page, sizeof(page),
                                       IBV_ACCESS_LOCAL_WRITE);

        return report("reg_mr", mr != NULL, errno);
    }
    cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
    if (!cq) {
        fprintf(stderr, "qroce-verb: create_cq: %s\n", strerror(errno));
        return 2;
    }
    if (!strcmp(what, "qp-efault")) {
        return qp_efault(ctx, pd, cq);
    }
    struct ibv_qp_init_attr ia = {
        .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
        .cap = { .max_send_wr = 8, .max_recv_wr = 8,
                 .max_send_sge = 1, .max_recv_sge = 1 },
    };
    struct ibv_qp *qp = ibv_create_qp(pd, &ia);

    return report("create_qp", qp != NULL, errno);
}
