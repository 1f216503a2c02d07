/*
 * qroce-mcast: UD multicast with two QPs on one group.
 *
 *   qroce-mcast [-d DEVICE] [-g GID_INDEX] recv GROUP N
 *   qroce-mcast [-d DEVICE] [-g GID_INDEX] send GROUP N
 *
 * GROUP is an IPv4 or IPv6 multicast address (a sender of IPv6 needs -g
 * with an IPv6 GID).  recv: two UD QPs attach to the
 * group, and each must receive the N messages of one sender ("attached"
 * is printed when they are ready); then QP B detaches ("detached" is
 * printed) and, from a second sender's N messages, A must receive all and
 * B none.  Every message's bytes are checked: a sequence number and a
 * pattern derived from it.  send: N messages of SIZE bytes to the group
 * (QP 0xFFFFFF), each completion checked.  Prints PASS/FAIL lines; exits
 * 1 if a check failed, 2 on a set-up error.
 */
#include <arpa/inet.h>
#include <getopt.h>
#include <poll.h>
#include <unistd.h>
#include "qr_verbs.h"

#define QKEY 0x1ab2c3d4u
#define SIZE 512
#define GRH 40
#define MAXN 256
#define SLOT (GRH + SIZE)

static struct ibv_cq *mcq;
static union ibv_gid group;

static struct ibv_qp *ud_qp(void)
{
    return make_ud_qp(mcq, QKEY, MAXN);
}

static uint8_t pattern(uint32_t seq, unsigned i)
{
    return (uint8_t)(seq * 131 + i * 7 + 1);
}

/* QP @which (0 or 1) posts @n receives into its half of the buffer. */
static void post_recvs(struct ibv_qp *qp, int which, int n)
{
    for (int i = 0; i < n; i++) {
        uint8_t *slot = buf + ((size_t)which * MAXN + i) * SLOT;
        struct ibv_sge sge = { (uintptr_t)slot, SLOT, mr->lkey };
        struct ibv_recv_wr wr = { .wr_id = (uint64_t)which << 32 | i,
                                  .sg_list = &sge, .num_sge = 1 }, *bad;

        if (ibv_post_recv(qp, &wr, &bad)) {
            die("post_recv");
        }
    }
}

/*
 * Receive until both QPs have @want[0] and @want[1] good messages or
 * @ms pass; counts in @got, a bad message counted in @bad.
 */
static void collect(const int want[2], int got[2], int *bad, int ms)
{
    struct ibv_wc wc[16];
    struct timespec t0, t;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        int n = ibv_poll_cq(mcq, 16, wc);

        for (int k = 0; k < n; k++) {
            int which = wc[k].wr_id >> 32, i = wc[k].wr_id & 0xffffffff;
            uint8_t *msg = buf + ((size_t)which * MAXN + i) * SLOT + GRH;
            uint32_t seq;
            int ok = wc[k].status == IBV_WC_SUCCESS &&
                     wc[k].byte_len == GRH + SIZE &&
                     (wc[k].wc_flags & IBV_WC_GRH);

            memcpy(&seq, msg, 4);
            for (unsigned j = 4; ok && j < SIZE; j++) {
                ok = msg[j] == pattern(seq, j);
            }
            if (ok) {
                got[which]++;
            } else {
                (*bad)++;
            }
        }
        if (got[0] >= want[0] && got[1] >= want[1]) {
            return;
        }
        clock_gettime(CLOCK_MONOTONIC, &t);
        if ((t.tv_sec - t0.tv_sec) * 1000 +
            (t.tv_nsec - t0.tv_nsec) / 1000000 > ms) {
            return;
        }
        usleep(1000);
    }
}

static int do_recv(int n)
{
    struct ibv_qp *q[2] = { ud_qp(), ud_qp() };
    int got[2] = { 0, 0 }, bad = 0, want[2] = { n, n };
    char msg[160];

    post_recvs(q[0], 0, MAXN);
    post_recvs(q[1], 1, MAXN);
    check(!ibv_attach_mcast(q[0], &group, 0), "QP A attaches to the group");
    check(!ibv_attach_mcast(q[1], &group, 0), "QP B attaches to the group");
    check(ibv_attach_mcast(q[0], &group, 0) == 0,
          "attaching A again succeeds and changes nothing");
    printf("attached\n");
    fflush(stdout);
    collect(want, got, &bad, 60000);
    snprintf(msg, sizeof(msg), "first sender: A got %d, B got %d of %d, %d bad",
             got[0], got[1], n, bad);
    check(got[0] == n && got[1] == n && !bad, msg);

    check(!ibv_detach_mcast(q[1], &group, 0), "QP B detaches");
    check(ibv_detach_mcast(q[1], &group, 0) != 0,
          "detaching B again fails");
    memset(got, 0, sizeof(got));
    want[1] = 0;
    printf("detached\n");
    fflush(stdout);
    collect(want, got, &bad, 60000);
    /* whatever B would wrongly get arrives with A's */
    want[0] = n + 1;
    collect(want, got, &bad, 1000);
    snprintf(msg, sizeof(msg), "second sender: A got %d of %d, B got %d, %d bad",
             got[0], n, got[1], bad);
    check(got[0] == n && got[1] == 0 && !bad, msg);
    check(!ibv_detach_mcast(q[0], &group, 0), "QP A detaches");
    return failed;
}

static int do_send(int n)
{
    struct ibv_qp *qp = ud_qp();
    struct ibv_ah_attr aa = {
        .is_global = 1, .port_num = 1,
        .grh = { .dgid = group, .sgid_index = gid_index, .hop_limit = 1 },
    };
    struct ibv_ah *ah = ibv_create_ah(pd, &aa);
    struct ibv_wc wc;
    int done = 0, errs = 0;
    char msg[120];

    if (!ah) {
        die("create_ah for the group");
    }
    for (int i = 0; i < n; i++) {
        uint8_t *p = buf + (size_t)(i % MAXN) * SIZE;
        uint32_t seq = i;
        struct ibv_sge sge = { (uintptr_t)p, SIZE, mr->lkey };
        struct ibv_send_wr wr = {
            .wr_id = i, .sg_list = &sge, .num_sge = 1,
            .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
            .wr.ud = { .ah = ah, .remote_qpn = 0xffffff,
                       .remote_qkey = QKEY },
        }, *bad;

        memcpy(p, &seq, 4);
        for (unsigned j = 4; j < SIZE; j++) {
            p[j] = pattern(seq, j);
        }
        if (ibv_post_send(qp, &wr, &bad)) {
            die("post_send");
        }
        /* one at a time: a receiver is not flooded (UD has no flow control) */
        if (!poll1(mcq, &wc)) {
            break;
        }
        done++;
        errs += wc.status != IBV_WC_SUCCESS;
        usleep(2000);
    }
    snprintf(msg, sizeof(msg), "%d of %d sends to the group completed, %d in error",
             done, n, errs);
    check(done == n && !errs, msg);
    return failed;
}

int main(int argc, char **argv)
{
    const char *dev = "qroce_0";
    struct in_addr a;
    int c, n;

    while ((c = getopt(argc, argv, "d:g:")) != -1) {
        switch (c) {
        case 'd': dev = optarg; break;
        case 'g': gid_index = atoi(optarg); break;
        default: goto usage;
        }
    }
    if (argc - optind != 3 || (n = atoi(argv[optind + 2])) < 1 || n > MAXN ||
        (strcmp(argv[optind], "recv") && strcmp(argv[optind], "send"))) {
        goto usage;
    }
    /* an IPv4 group as an IPv4-mapped GID, or an IPv6 group as it is */
    memset(&group, 0, sizeof(group));
    if (inet_pton(AF_INET, argv[optind + 1], &a) == 1) {
        group.raw[10] = group.raw[11] = 0xff;
        memcpy(&group.raw[12], &a, 4);
    } else if (inet_pton(AF_INET6, argv[optind + 1], group.raw) != 1) {
        goto usage;
    }
    open_dev(dev);
    /* room for both QPs' receives: a buffer of our own */
    ibv_dereg_mr(mr);
    free(buf);
    buf = calloc(2 * MAXN, SLOT);
    mr = buf ? ibv_reg_mr(pd, buf, (size_t)2 * MAXN * SLOT,
                          IBV_ACCESS_LOCAL_WRITE) : NULL;
    if (!mr) {
        die("buffer");
    }
    mcq = ibv_create_cq(ctx, 4 * MAXN, NULL, NULL, 0);
    if (!mcq) {
        die("create_cq");
    }
    return strcmp(argv[optind], "recv") ? do_send(n) : do_recv(n);
usage:
    fprintf(stderr, "usage: qroce-mcast [-d DEVICE] [-g GID_INDEX] recv|send GROUP N (1..%d)\n", MAXN);
    return 2;
}
