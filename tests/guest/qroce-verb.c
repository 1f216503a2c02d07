/*
 * qroce-verb: run one control verb and report what it returned, with
 * errno, so that a test can check how a device's refusal reaches the
 * application (docs/fault-injection.md).
 *
 *   qroce-verb [-d DEVICE] pd|cq|mr|qp
 *
 * Creates what the named object needs (a PD; a CQ; a PD and an MR of one
 * page; a PD, a CQ and an RC QP), then the object, and prints
 * "VERB: ok" or "VERB: failed, errno N (TEXT)".  Exits 0 on success, 1
 * when the verb failed, 2 when something it needed failed first.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <getopt.h>
#include <infiniband/verbs.h>

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
    fprintf(stderr, "usage: qroce-verb [-d DEVICE] pd|cq|mr|qp\n");
    exit(2);
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
        strcmp(what, "qp")) {
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
    struct ibv_qp_init_attr ia = {
        .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
        .cap = { .max_send_wr = 8, .max_recv_wr = 8,
                 .max_send_sge = 1, .max_recv_sge = 1 },
    };
    struct ibv_qp *qp = ibv_create_qp(pd, &ia);

    return report("create_qp", qp != NULL, errno);
}
