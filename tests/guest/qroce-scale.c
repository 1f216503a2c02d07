/*
 * qroce-scale: many QPs.
 *
 *   qroce-scale [-d DEV] [-g GID] churn N    create and destroy N QPs in turn
 *   qroce-scale [-d DEV] [-g GID] hold N     hold N QPs at once
 *   qroce-scale [-d DEV] [-g GID] budget     create QPs until the device
 *                                            refuses; it must be ENOMEM
 *   qroce-scale [-d DEV] [-g GID] idle N S   hold N QPs for S seconds (a
 *                                            benchmark reads memory then)
 *   qroce-scale [-d DEV] [-g GID] rate N     N create+destroy; prints QPs/s
 *   qroce-scale [-d DEV] [-g GID] -l pairs N         N RC pairs: server
 *   qroce-scale [-d DEV] [-g GID] pairs N SERVER_IP  ... client
 *   qroce-scale [-d DEV] [-g GID] [-w W] -l stream N SECONDS   N RC pairs:
 *                                            server
 *   qroce-scale [-d DEV] [-g GID] [-w W] stream N SECONDS SERVER_IP
 *                                            ... client: 64 KiB RDMA
 *                                            WRITEs on every pair at once
 *
 * Prints a PASS or FAIL line per check; exit status 0 only if all passed.
 * The QPs of churn, hold and budget receive from one SRQ, so that each
 * costs the guest one ring page.  pairs moves a 4 KiB message each way on
 * every pair, each with a pattern of its own, and compares every byte.
 *
 * stream connects N pairs as pairs does, at the port's active path MTU,
 * then the client keeps W WRITEs of 64 KiB in flight on every QP (default
 * 128 / N, at least 1: the same 128 in flight as perftest's default depth
 * for one QP, spread over the QPs) for SECONDS, each into a 64 KiB slot of
 * the server's per QP, and counts the bytes each QP completed.  One line
 *   stream: N QPs S s: total MB/s X, per-QP min Y max Z MB/s, Jain J
 * (MB = 10^6 bytes; Jain's fairness index (sum x)^2 / (N sum x^2): 1 when
 * every QP moved the same, 1/N when one moved everything), then a PASS
 * line if every completion was a successful RDMA WRITE (FAIL and the
 * first errors otherwise).  WRITEs still in flight 10 s after the end are
 * said ("... still in flight ...: left") and left.
 * The bytes are not compared: it is a bandwidth mode.
 */
#include <getopt.h>
#include "qr_verbs.h"
#include "qr_tcp.h"

#define PORT 18540
#define MSG 4096
#define WMSG 65536              /* stream: one RDMA WRITE */
#define INFLIGHT 128            /* stream: WRITEs in flight over all QPs */

static struct ibv_cq *cq;
static struct ibv_srq *srq;
static long window;             /* stream: WRITEs in flight per QP (-w) */

/* An RC QP on the SRQ, with one send WQE: the smallest there is. */
static struct ibv_qp *small_qp(void)
{
    struct ibv_qp_init_attr ia = {
        .send_cq = cq, .recv_cq = cq, .srq = srq, .qp_type = IBV_QPT_RC,
        .cap = { .max_send_wr = 1, .max_send_sge = 1 },
    };

    return ibv_create_qp(pd, &ia);
}

static void small_setup(void)
{
    struct ibv_srq_init_attr sa = { .attr = { .max_wr = 16, .max_sge = 1 } };

    cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
    srq = ibv_create_srq(pd, &sa);
    if (!cq || !srq) {
        die("CQ and SRQ");
    }
}

static uint32_t max_qp(void)
{
    struct ibv_device_attr da;

    if (ibv_query_device(ctx, &da)) {
        die("ibv_query_device");
    }
    return da.max_qp;
}

/* N QPs created and destroyed in turn: QPNs come back late and wrap. */
static void churn(long n)
{
    uint32_t prev = 0, lo = UINT32_MAX, hi = 0, wraps = 0, max = max_qp();
    long i;
    char what[200];

    for (i = 0; i < n; i++) {
        struct ibv_qp *qp = small_qp();

        if (!qp) {
            fprintf(stderr, "QP %ld: ibv_create_qp: %s\n", i, strerror(errno));
            break;
        }
        if (qp->qp_num < prev) {
            wraps++;
        }
        if (qp->qp_num == prev) {
            fprintf(stderr, "QP %ld: QPN %u given twice in a row\n", i, prev);
            break;
        }
        prev = qp->qp_num;
        lo = qp->qp_num < lo ? qp->qp_num : lo;
        hi = qp->qp_num > hi ? qp->qp_num : hi;
        if (ibv_destroy_qp(qp)) {
            die("ibv_destroy_qp");
        }
    }
    /* max_qp QPs: QPNs 2 .. max_qp + 1 (0 is none, 1 the GSI QP) */
    snprintf(what, sizeof(what), "churn: %ld of %ld QPs created and "
             "destroyed, QPNs %u..%u (max_qp %u), %u wraps", i, n, lo, hi,
             max, wraps);
    check(i == n && lo >= 2 && hi <= max + 1 && (n <= (long)max || wraps > 0),
          what);
}

static double now_s(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

/* N create+destroy of the smallest QP, timed: "rate R QPs/s". */
static void rate(long n)
{
    double t0 = now_s(), dt;
    long i;

    for (i = 0; i < n; i++) {
        struct ibv_qp *qp = small_qp();

        if (!qp || ibv_destroy_qp(qp)) {
            die("create+destroy");
        }
    }
    dt = now_s() - t0;
    printf("rate %.0f QPs/s (%ld in %.2f s)\n", n / dt, n, dt);
}

/* N idle QPs held for S seconds: "held N" once they all exist. */
static void idle(long n, long secs)
{
    struct ibv_qp **qp = calloc(n, sizeof(*qp));
    long i;

    if (!qp) {
        die("calloc");
    }
    for (i = 0; i < n; i++) {
        qp[i] = small_qp();
        if (!qp[i]) {
            die("ibv_create_qp");
        }
    }
    printf("held %ld\n", n);
    sleep(secs);
    for (i = 0; i < n; i++) {
        ibv_destroy_qp(qp[i]);
    }
    free(qp);
}

/* N QPs at once, every QPN different. */
static void hold(long n)
{
    struct ibv_qp **qp = calloc(n, sizeof(*qp));
    uint8_t *seen = calloc(1u << 24, 1);
    long i, made, dup = 0;
    char what[200];

    if (!qp || !seen) {
        die("calloc");
    }
    for (made = 0; made < n; made++) {
        qp[made] = small_qp();
        if (!qp[made]) {
            fprintf(stderr, "QP %ld: ibv_create_qp: %s\n", made,
                    strerror(errno));
            break;
        }
        dup += seen[qp[made]->qp_num]++ != 0;
    }
    snprintf(what, sizeof(what), "hold: %ld of %ld QPs at once, %ld QPNs "
             "given twice", made, n, dup);
    check(made == n && dup == 0, what);
    for (i = 0; i < made; i++) {
        if (ibv_destroy_qp(qp[i])) {
            die("ibv_destroy_qp");
        }
    }
    free(qp);
    free(seen);
}

/*
 * QPs until the device's state budget is spent: ENOMEM, nothing else;
 * then a QP destroyed makes room for one new, and all go.
 */
static void budget(void)
{
    long cap = 1 << 20, made, i;
    struct ibv_qp **qp = calloc(cap, sizeof(*qp));
    int err = 0, again;
    char what[200];

    if (!qp) {
        die("calloc");
    }
    for (made = 0; made < cap; made++) {
        qp[made] = small_qp();
        if (!qp[made]) {
            err = errno;
            break;
        }
    }
    snprintf(what, sizeof(what), "budget: QP %ld refused with %s", made,
             strerror(err));
    check(made > 0 && made < cap && err == ENOMEM, what);
    again = made > 0 && !ibv_destroy_qp(qp[made - 1]) &&
            (qp[made - 1] = small_qp()) != NULL;
    check(again, "budget: one QP destroyed, a new one takes its place");
    for (i = 0; i < made - !again; i++) {
        if (ibv_destroy_qp(qp[i])) {
            die("ibv_destroy_qp");
        }
    }
    free(qp);
}

/* The byte at @off of pair @i's message going @dir (0: to the server). */
static uint8_t pattern(long i, int dir, uint32_t off)
{
    return (uint8_t)(i * 131 + off * 7 + dir * 89 + (off >> 8));
}

static void fill(uint8_t *p, long i, int dir)
{
    for (uint32_t k = 0; k < MSG; k++) {
        p[k] = pattern(i, dir, k);
    }
}

static long bad_bytes(const uint8_t *p, long i, int dir)
{
    long bad = 0;

    for (uint32_t k = 0; k < MSG; k++) {
        bad += p[k] != pattern(i, dir, k);
    }
    return bad;
}

struct side {
    long n;
    struct ibv_qp **qp;
    struct ibv_mr *mr;
    uint8_t *rx, *tx;           /* n messages each */
    int fd;
};

/* Post pair @i's receive (into rx) or send (from tx) of one message. */
static int post(struct side *sd, long i, int send)
{
    struct ibv_sge sge = {
        .addr = (uintptr_t)(send ? sd->tx : sd->rx) + (size_t)i * MSG,
        .length = MSG, .lkey = sd->mr->lkey,
    };
    struct ibv_send_wr swr = {
        .wr_id = i, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
        .send_flags = IBV_SEND_SIGNALED,
    }, *sbad;
    struct ibv_recv_wr rwr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 },
                       *rbad;

    return send ? ibv_post_send(sd->qp[i], &swr, &sbad) :
                  ibv_post_recv(sd->qp[i], &rwr, &rbad);
}

/*
 * Poll @sends send and @recvs receive completions, each matched to its
 * pair by wr_id and QPN; the bad ones counted in *@bad.  -1 if they stop.
 */
static int poll_all(struct side *sd, long sends, long recvs, long *bad)
{
    struct ibv_wc wc;

    while (sends + recvs > 0) {
        int recv;

        if (!poll1(cq, &wc)) {
            fprintf(stderr, "pairs: %ld sends and %ld receives missing\n",
                    sends, recvs);
            return -1;
        }
        recv = wc.opcode == IBV_WC_RECV;
        if (wc.status != IBV_WC_SUCCESS ||
            (!recv && wc.opcode != IBV_WC_SEND) ||
            (long)wc.wr_id >= sd->n ||
            wc.qp_num != sd->qp[wc.wr_id]->qp_num ||
            (recv && wc.byte_len != MSG)) {
            fprintf(stderr, "pairs: status %d opcode %d wr_id %lu qp %u "
                    "len %u\n", wc.status, wc.opcode,
                    (unsigned long)wc.wr_id, wc.qp_num, wc.byte_len);
            (*bad)++;
        }
        *(recv ? &recvs : &sends) -= 1;
    }
    return 0;
}

/*
 * Create and connect the N QPs of one side, a receive posted on each:
 * @depth WQEs on each queue, a CQ for @depth completions per QP, the
 * QPs at path MTU @mtu.
 */
static void pairs_setup(struct side *sd, long n, const char *host,
                        long depth, enum ibv_mtu mtu)
{
    size_t bytes = (size_t)n * MSG * 2;
    union ibv_gid gid, rgid;
    uint32_t *qpn = calloc(n, sizeof(*qpn)), *rqpn = calloc(n, sizeof(*rqpn));
    long i;

    sd->n = n;
    sd->qp = calloc(n, sizeof(*sd->qp));
    sd->rx = aligned_alloc(4096, bytes);
    cq = ibv_create_cq(ctx, depth * n + 16, NULL, NULL, 0);
    if (!qpn || !rqpn || !sd->qp || !sd->rx || !cq) {
        die("pairs: memory or CQ");
    }
    sd->tx = sd->rx + (size_t)n * MSG;
    sd->mr = ibv_reg_mr(pd, sd->rx, bytes, IBV_ACCESS_LOCAL_WRITE);
    qp_depth = depth;
    qp_sge = 1;
    if (!sd->mr || ibv_query_gid(ctx, 1, gid_index, &gid)) {
        die("pairs: MR or GID");
    }
    for (i = 0; i < n; i++) {
        sd->qp[i] = make_qp(cq);
        qpn[i] = sd->qp[i]->qp_num;
    }
    sd->fd = qr_tcp("qroce-scale", host, PORT);
    if (qr_xfer(sd->fd, &gid, sizeof(gid), 1) ||
        qr_xfer(sd->fd, qpn, n * sizeof(*qpn), 1) ||
        qr_xfer(sd->fd, &rgid, sizeof(rgid), 0) ||
        qr_xfer(sd->fd, rqpn, n * sizeof(*rqpn), 0)) {
        die("pairs: the peer went");
    }
    for (i = 0; i < n; i++) {
        connect_to_mtu(sd->qp[i], rqpn[i], &rgid, 100, 100, mtu);
        if (post(sd, i, 0)) {
            die("pairs: ibv_post_recv");
        }
    }
    free(qpn);
    free(rqpn);
}

/* Send pattern @dir on every pair. */
static void send_all(struct side *sd, int dir)
{
    for (long i = 0; i < sd->n; i++) {
        fill(sd->tx + (size_t)i * MSG, i, dir);
        if (post(sd, i, 1)) {
            die("pairs: ibv_post_send");
        }
    }
}

static long bad_messages(struct side *sd, int dir)
{
    long bad = 0;

    for (long i = 0; i < sd->n; i++) {
        bad += bad_bytes(sd->rx + (size_t)i * MSG, i, dir) != 0;
    }
    return bad;
}

/*
 * N RC pairs: the client sends a message on each, the server checks
 * every byte and answers on each, the client checks the answers.
 */
static void pairs(long n, const char *host)
{
    struct side sd;
    long bad = 0, wrong;
    char go = 'g', what[200];
    int server = !host;

    pairs_setup(&sd, n, host, 2, IBV_MTU_1024);
    /* every receive of both sides is posted before anything is sent */
    if (qr_xfer(sd.fd, &go, 1, 1) || qr_xfer(sd.fd, &go, 1, 0)) {
        die("pairs: the peer went");
    }
    if (!server) {
        send_all(&sd, 0);
    }
    if (poll_all(&sd, server ? 0 : n, server ? n : 0, &bad)) {
        bad++;
    }
    if (server) {
        send_all(&sd, 1);
        if (poll_all(&sd, n, 0, &bad)) {
            bad++;
        }
    } else if (poll_all(&sd, 0, n, &bad)) {
        bad++;
    }
    wrong = bad_messages(&sd, server ? 0 : 1);
    snprintf(what, sizeof(what), "pairs: %ld RC QPs, a %d-byte message "
             "each way on each: %ld bad completions, %ld messages with a "
             "wrong byte", n, MSG, bad, wrong);
    check(bad == 0 && wrong == 0, what);
    /* the peer may not go before this side has all its completions */
    if (qr_xfer(sd.fd, &go, 1, 1) || qr_xfer(sd.fd, &go, 1, 0)) {
        die("pairs: the peer went");
    }
    for (long i = 0; i < n; i++) {
        if (ibv_destroy_qp(sd.qp[i])) {
            die("ibv_destroy_qp");
        }
    }
}

/* Where stream's WRITEs go: the server's region, a 64 KiB slot per QP. */
struct target {
    uint64_t addr;
    uint32_t rkey;
};

/* Post a 64 KiB WRITE on QP @i, from its slot of @mr into its slot of @t. */
static int post_write(struct side *sd, struct ibv_mr *mr,
                      const struct target *t, long i)
{
    struct ibv_sge sge = {
        .addr = (uintptr_t)mr->addr + (size_t)i * WMSG,
        .length = WMSG, .lkey = mr->lkey,
    };
    struct ibv_send_wr wr = {
        .wr_id = i, .sg_list = &sge, .num_sge = 1,
        .opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
        .wr.rdma = { .remote_addr = t->addr + (uint64_t)i * WMSG,
                     .rkey = t->rkey },
    }, *bad;

    return ibv_post_send(sd->qp[i], &wr, &bad);
}

/*
 * The client's side of stream: window WRITEs in flight on every QP until
 * @secs have passed, the bytes of the completions until then counted per
 * QP in @bytes; then what is in flight drains, for DRAIN seconds at most
 * (what is left then is said and left).  *@bad counts the completions
 * that are not a successful WRITE of their QP (that QP gets no more) and
 * those of a QP with nothing in flight.  Returns the seconds measured:
 * @secs, or less if every QP failed before.
 */
#define DRAIN 10

static double stream_run(struct side *sd, struct ibv_mr *mr,
                         const struct target *t, long secs, uint64_t *bytes,
                         long *bad)
{
    struct ibv_wc wc[64];
    uint8_t *dead = calloc(sd->n, 1);
    long *out = calloc(sd->n, sizeof(*out));
    long inflight = 0, i, k;
    double t0 = now_s(), end = t0 + secs, now = t0;
    int got;

    if (!dead || !out) {
        die("calloc");
    }
    for (i = 0; i < sd->n; i++) {
        for (k = 0; k < window; k++) {
            if (post_write(sd, mr, t, i)) {
                die("stream: ibv_post_send");
            }
            out[i]++;
            inflight++;
        }
    }
    while (inflight > 0) {
        got = ibv_poll_cq(cq, 64, wc);
        if (got < 0) {
            die("stream: ibv_poll_cq");
        }
        now = now_s();
        if (!got && now >= end + DRAIN) {
            printf("stream: %ld WRITEs still in flight %d s after the end: "
                   "left\n", inflight, DRAIN);
            break;
        }
        for (k = 0; k < got; k++) {
            i = (long)wc[k].wr_id;
            if (i < 0 || i >= sd->n || wc[k].qp_num != sd->qp[i]->qp_num ||
                !out[i]) {
                if (++*bad <= 10) {
                    fprintf(stderr, "stream: a completion (status %d) of "
                            "wr_id %lu qp %u, which has nothing in flight\n",
                            wc[k].status, (unsigned long)wc[k].wr_id,
                            wc[k].qp_num);
                }
                continue;
            }
            out[i]--;
            inflight--;
            if (wc[k].status != IBV_WC_SUCCESS ||
                wc[k].opcode != IBV_WC_RDMA_WRITE) {
                if (++*bad <= 10) {
                    fprintf(stderr, "stream: QP %u: status %d (%s) opcode "
                            "%d\n", wc[k].qp_num, wc[k].status,
                            ibv_wc_status_str(wc[k].status), wc[k].opcode);
                }
                dead[i] = 1;
                continue;
            }
            if (now >= end) {
                continue;
            }
            bytes[i] += WMSG;
            if (dead[i]) {
                continue;
            }
            if (post_write(sd, mr, t, i)) {
                fprintf(stderr, "stream: QP %ld: ibv_post_send: %s\n", i,
                        strerror(errno));
                (*bad)++;
                dead[i] = 1;
                continue;
            }
            out[i]++;
            inflight++;
        }
    }
    free(dead);
    free(out);
    return (now < end ? now : end) - t0;
}

/* Print the client's figures: total and per-QP MB/s, Jain's index. */
static void stream_report(long n, double dt, const uint64_t *bytes)
{
    double sum = 0, sum2 = 0, lo = -1, hi = 0, x;

    for (long i = 0; i < n; i++) {
        x = dt > 0 ? bytes[i] / dt / 1e6 : 0;
        sum += x;
        sum2 += x * x;
        lo = (lo < 0 || x < lo) ? x : lo;
        hi = x > hi ? x : hi;
    }
    printf("stream: %ld QPs %.1f s: total MB/s %.2f, per-QP min %.2f max "
           "%.2f MB/s, Jain %.3f\n", n, dt, sum, lo, hi,
           sum2 > 0 ? sum * sum / (n * sum2) : 0);
}

/*
 * N RC pairs at the port's active MTU; the client WRITEs 64 KiB at a
 * time on all of them for @secs and reports; the server holds its QPs
 * and its region until the client says it is done.
 */
static void stream(long n, long secs, const char *host)
{
    size_t len = (size_t)n * WMSG;
    uint8_t *region = aligned_alloc(4096, len);
    uint64_t *bytes = calloc(n, sizeof(*bytes));
    struct ibv_port_attr pa;
    struct target t = { 0 };
    struct ibv_mr *mr;
    struct side sd;
    int server = !host;
    long bad = 0;
    double dt;
    char go = 'g';

    if (!region || !bytes || ibv_query_port(ctx, 1, &pa)) {
        die("stream: memory or port");
    }
    if (!window) {
        window = INFLIGHT / n > 0 ? INFLIGHT / n : 1;
    }
    memset(region, server ? 0 : 0x5a, len);
    mr = ibv_reg_mr(pd, region, len, IBV_ACCESS_LOCAL_WRITE |
                    (server ? IBV_ACCESS_REMOTE_WRITE : 0));
    if (!mr) {
        die("stream: ibv_reg_mr");
    }
    pairs_setup(&sd, n, host, window, pa.active_mtu);
    t.addr = (uintptr_t)region;
    t.rkey = mr->rkey;
    if (qr_xfer(sd.fd, &t, sizeof(t), server) ||
        qr_xfer(sd.fd, &go, 1, 1) || qr_xfer(sd.fd, &go, 1, 0)) {
        die("stream: the peer went");
    }
    printf("stream: %s, %ld QPs, %ld WRITE%s of %d bytes in flight on each, "
           "path MTU %d\n", server ? "server" : "client", n, window,
           window > 1 ? "s" : "", WMSG, 128 << pa.active_mtu);
    if (!server) {
        dt = stream_run(&sd, mr, &t, secs, bytes, &bad);
        stream_report(n, dt, bytes);
        check(bad == 0, "stream: every completion a successful RDMA WRITE");
    }
    /* the client says it is done, the server answers */
    if (qr_xfer(sd.fd, &go, 1, !server) || qr_xfer(sd.fd, &go, 1, server)) {
        die("stream: the peer went");
    }
    for (long i = 0; i < n; i++) {
        if (ibv_destroy_qp(sd.qp[i])) {
            die("ibv_destroy_qp");
        }
    }
    free(bytes);
}

static void usage(void)
{
    fprintf(stderr, "usage: qroce-scale [-d DEV] [-g GID] churn N | hold N "
            "| budget | rate N | idle N SECONDS | [-l] pairs N [SERVER_IP] "
            "| [-w W] [-l] stream N SECONDS [SERVER_IP]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    const char *dev = "qroce_0";
    int c, listen = 0;
    long n = 0;

    setvbuf(stdout, NULL, _IOLBF, 0);
    while ((c = getopt(argc, argv, "d:g:lw:")) != -1) {
        if (c == 'l') {
            listen = 1;
        } else if (c == 'w') {
            window = strtol(optarg, NULL, 0);
            if (window < 1 || window > 1024) {
                usage();
            }
        } else if (!qr_common_opt(c, &dev)) {
            usage();
        }
    }
    if (optind >= argc) {
        usage();
    }
    if (optind + 1 < argc) {
        n = strtol(argv[optind + 1], NULL, 0);
    }
    open_dev(dev);
    if (!strcmp(argv[optind], "churn") && n > 0) {
        small_setup();
        churn(n);
    } else if (!strcmp(argv[optind], "hold") && n > 0) {
        small_setup();
        hold(n);
    } else if (!strcmp(argv[optind], "rate") && n > 0) {
        small_setup();
        rate(n);
    } else if (!strcmp(argv[optind], "idle") && n > 0 && optind + 3 == argc) {
        small_setup();
        idle(n, strtol(argv[optind + 2], NULL, 0));
    } else if (!strcmp(argv[optind], "budget")) {
        small_setup();
        budget();
    } else if (!strcmp(argv[optind], "pairs") && n > 0 &&
               (listen ? optind + 2 == argc : optind + 3 == argc)) {
        pairs(n, listen ? NULL : argv[optind + 2]);
    } else if (!strcmp(argv[optind], "stream") && n > 0 &&
               (listen ? optind + 3 == argc : optind + 4 == argc) &&
               strtol(argv[optind + 2], NULL, 0) > 0) {
        stream(n, strtol(argv[optind + 2], NULL, 0),
               listen ? NULL : argv[optind + 3]);
    } else {
        usage();
    }
    return failed;
}
