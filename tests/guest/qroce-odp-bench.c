/*
 * Benchmark, not a test: what on-demand paging costs, against a pinned MR,
 * in one run.  Two RC QPs on one device, connected to each other through
 * the device (loopback); QP A RDMA WRITEs a pinned, pre-touched source
 * buffer, one signalled WRITE of CHUNK bytes at a time (post, wait for its
 * completion, next), over a whole target region of SIZE on QP B's side.
 * The responder answers a device page fault with an RNR NAK and the
 * requester retries, so the QPs retry RNR forever (rnr_retry 7) with the
 * shortest RNR timer (min_rnr_timer 1).  Each pass is timed with
 * CLOCK_MONOTONIC from the first post to the last completion:
 *
 *   pinned          the target is a normal MR over memory memset before
 *                   registration, written once to warm up and then
 *                   measured: the reference
 *   odp-first       a fresh, untouched anonymous mapping registered with
 *                   IBV_ACCESS_ON_DEMAND, written once: every page faults
 *                   in.  Also the device counter odp_faults over the pass
 *                   (sysfs, read 50 ms after the pass: the kernel caches
 *                   hw_counters for 10 ms) and faults / pass seconds
 *   odp-again       the same ODP region written a second time: its pages
 *                   are present
 *   odp-prefetched  another fresh ODP region, ibv_advise_mr PREFETCH_WRITE
 *                   with IBV_ADVISE_MR_FLAG_FLUSH over all of it first
 *                   (timed on its own: prefetch_ms), then written
 *
 * Each pass writes a different pseudo-random pattern; after it the target
 * memory is compared with the source (memcmp over the region).  A WRITE
 * that does not complete successfully, or a region that does not hold the
 * source's bytes, prints "FAIL ..." and exits 1 before any figure of that
 * pass.  MB/s is 10^6 bytes per second.  Output, one line per measure:
 *
 *   odp-bench pinned mbps V
 *   odp-bench odp-first mbps V faults N faults_per_s V
 *   odp-bench odp-again mbps V
 *   odp-bench odp-prefetched mbps V prefetch_ms V
 *   odp-bench ratio first/pinned X again/pinned Y prefetched/pinned Z
 *
 * (ratios of MB/s; faults and faults_per_s are -1 if the counter is not
 * there), after a "#" line saying what was run.
 *
 * Usage: qroce-odp-bench [-d DEV] [-g GID_INDEX] [-s MIB] [-c CHUNK_KIB]
 *        [-m MTU]
 *   defaults qroce_0, 1, 64 MiB, 1024 KiB, path MTU 1024 (as qroce-odp).
 * Exits 0 with figures, 1 on a FAIL, 2 on a set-up error.
 */
#include <sched.h>
#include <sys/mman.h>
#include "qr_verbs.h"

#define MIB (1ul << 20)
#define MAX_MIB 2048            /* one ibv_sge covers the region */
#define QP_TIMEOUT 20           /* 4.096 us << 20: about 4 s */
#define WAIT_S 60               /* per completion: faults are slow here */
#define SPIN_S 0.001            /* then yield to the fault work */

#define ODP_ACC (IBV_ACCESS_ON_DEMAND | IBV_ACCESS_LOCAL_WRITE | \
                 IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)
#define PIN_ACC (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
                 IBV_ACCESS_REMOTE_READ)

static const char *usage =
    "usage: qroce-odp-bench [-d DEV] [-g GID_INDEX] [-s MIB] "
    "[-c CHUNK_KIB] [-m MTU]\n";

static struct pair bp;          /* bp.a writes into bp.b's MRs */
static size_t len;              /* of the source and of each target */
static size_t chunk;            /* bytes per WRITE */
static uint8_t *src;            /* pinned, touched */
static struct ibv_mr *src_mr;
static enum ibv_mtu path_mtu = IBV_MTU_1024;

static double now(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

/* odp_faults, after waiting out the kernel's 10 ms hw_counters cache. */
static long long faults(void)
{
    usleep(50000);
    return hw_counter("odp_faults");
}

/* How much a (32-bit wrapping) counter went up from @a to @b; -1 if absent. */
static long long up(long long a, long long b)
{
    if (a < 0 || b < 0) {
        return -1;
    }
    return (b - a) & 0xffffffffll;
}

/* RTR and RTS towards @remote on this device: short RNR timer, no limit. */
static void bench_connect(struct ibv_qp *qp, uint32_t remote)
{
    union ibv_gid gid;

    if (ibv_query_gid(ctx, 1, gid_index, &gid)) {
        die("ibv_query_gid");
    }
    qp_rnr_timer = 1;
    qp_timeout = QP_TIMEOUT;
    qp_retry = 7;
    connect_to_mtu(qp, remote, &gid, 200, 200, path_mtu);
}

/*
 * One completion within WAIT_S seconds: spin, and after SPIN_S yield the
 * CPU at each empty poll, so that the driver's fault work can run (the
 * guest has one CPU).  1 if there is one, else 0 (or < 0 on an error).
 */
static int wait1(struct ibv_wc *wc)
{
    double t0 = now(), t;

    for (;;) {
        int n = ibv_poll_cq(bp.cq, 1, wc);

        if (n) {
            return n;
        }
        t = now() - t0;
        if (t > WAIT_S) {
            return 0;
        }
        if (t > SPIN_S) {
            sched_yield();
        }
    }
}

/* An anonymous private mapping of @len bytes nobody has touched. */
static uint8_t *fresh(void)
{
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

    if (p == MAP_FAILED) {
        die("mmap");
    }
    return p;
}

/* The source gets a pseudo-random pattern from @seed (xorshift64). */
static void pattern(uint64_t seed)
{
    uint64_t x = seed * 0x9e3779b97f4a7c15ull | 1;
    uint64_t *w = (uint64_t *)src;
    size_t i;

    for (i = 0; i < len / 8; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        w[i] = x;
    }
}

/*
 * The whole source into @dst (rkey @rkey), one signalled WRITE of @chunk
 * bytes at a time; seconds from the first post to the last completion.
 * Any failure is a FAIL: exit 1.
 */
static double write_all(const char *name, uint8_t *dst, uint32_t rkey)
{
    double t0 = now();
    size_t off;

    for (off = 0; off < len; off += chunk) {
        uint32_t n = len - off < chunk ? len - off : chunk;
        struct ibv_sge sge = { .addr = (uintptr_t)(src + off), .length = n,
                               .lkey = src_mr->lkey };
        struct ibv_send_wr wr = { .wr_id = off, .sg_list = &sge,
                                  .num_sge = 1,
                                  .opcode = IBV_WR_RDMA_WRITE,
                                  .send_flags = IBV_SEND_SIGNALED }, *bad;
        struct ibv_wc wc;
        int r;

        wr.wr.rdma.remote_addr = (uintptr_t)(dst + off);
        wr.wr.rdma.rkey = rkey;
        if (ibv_post_send(bp.a, &wr, &bad)) {
            printf("FAIL %s: ibv_post_send of the WRITE at offset %zu\n",
                   name, off);
            exit(1);
        }
        r = wait1(&wc);
        if (r != 1) {
            printf("FAIL %s: the WRITE at offset %zu: %s\n", name, off,
                   r ? "ibv_poll_cq failed" : "no completion");
            exit(1);
        }
        if (wc.status != IBV_WC_SUCCESS || wc.wr_id != off ||
            wc.opcode != IBV_WC_RDMA_WRITE) {
            printf("FAIL %s: the WRITE at offset %zu: %s (wr_id %llu, "
                   "opcode %d)\n", name, off, ibv_wc_status_str(wc.status),
                   (unsigned long long)wc.wr_id, wc.opcode);
            exit(1);
        }
    }
    return now() - t0;
}

/* Does @dst hold the source's bytes?  If not, FAIL: exit 1. */
static void verify(const char *name, const uint8_t *dst)
{
    size_t i;

    if (!memcmp(dst, src, len)) {
        return;
    }
    for (i = 0; i < len && dst[i] == src[i]; i++) {
    }
    printf("FAIL %s: the target differs from the source at offset %zu of "
           "%zu (0x%02x, not 0x%02x)\n", name, i, len, dst[i], src[i]);
    exit(1);
}

static double mbps(double secs)
{
    return secs > 0 ? len / 1e6 / secs : 0;
}

static struct ibv_mr *reg(uint8_t *p, int access, const char *what)
{
    struct ibv_mr *m = ibv_reg_mr(pd, p, len, access);

    if (!m) {
        die(what);
    }
    return m;
}

static void drop(struct ibv_mr *m, uint8_t *p)
{
    if (ibv_dereg_mr(m)) {
        die("ibv_dereg_mr");
    }
    munmap(p, len);
}

/* The device must do ODP for RDMA WRITE on RC: else a set-up error. */
static void need_odp(void)
{
    struct ibv_device_attr_ex attr;
    struct ibv_odp_caps *oc = &attr.odp_caps;

    if (ibv_query_device_ex(ctx, NULL, &attr)) {
        die("ibv_query_device_ex");
    }
    if (!(oc->general_caps & IBV_ODP_SUPPORT) ||
        !(oc->per_transport_caps.rc_odp_caps & IBV_ODP_SUPPORT_WRITE)) {
        fprintf(stderr, "qroce-odp-bench: %s: no on-demand paging for RC "
                "RDMA WRITE\n", ibv_get_device_name(ctx->device));
        exit(2);
    }
}

static void options(int argc, char **argv, const char **dev)
{
    unsigned long mib = 64, kib = 1024, m = 1024;
    char *end;
    int c;

    while ((c = getopt(argc, argv, "d:g:s:c:m:")) != -1) {
        if (qr_common_opt(c, dev)) {
            continue;
        }
        if (c != 's' && c != 'c' && c != 'm') {
            fputs(usage, stderr);
            exit(2);
        }
        errno = 0;
        *(c == 's' ? &mib : c == 'c' ? &kib : &m) = strtoul(optarg, &end,
                                                            10);
        if (errno || *end || !*optarg) {
            fputs(usage, stderr);
            exit(2);
        }
    }
    if (optind != argc || mib < 1 || mib > MAX_MIB || kib < 1) {
        fputs(usage, stderr);
        exit(2);
    }
    switch (m) {
    case 256: path_mtu = IBV_MTU_256; break;
    case 512: path_mtu = IBV_MTU_512; break;
    case 1024: path_mtu = IBV_MTU_1024; break;
    case 2048: path_mtu = IBV_MTU_2048; break;
    case 4096: path_mtu = IBV_MTU_4096; break;
    default:
        fprintf(stderr, "qroce-odp-bench: -m: 256, 512, 1024, 2048 or "
                "4096\n");
        exit(2);
    }
    len = mib * MIB;
    chunk = kib > len / 1024 ? len : kib * 1024;
}

/* The QP pair of the passes, connected, and the pinned, touched source. */
static void bench_setup(void)
{
    qp_access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
    bp.cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
    if (!bp.cq) {
        die("ibv_create_cq");
    }
    bp.a = make_qp(bp.cq);
    bp.b = make_qp(bp.cq);
    bench_connect(bp.a, bp.b->qp_num);
    bench_connect(bp.b, bp.a->qp_num);

    src = fresh();
    pattern(1);                 /* touches every page of the source */
    src_mr = reg(src, IBV_ACCESS_LOCAL_WRITE, "ibv_reg_mr of the source");
}

/* pinned: memory touched before registration; its MB/s */
static double pass_pinned(void)
{
    struct ibv_mr *tm;
    double secs, pin;
    uint8_t *t;

    t = fresh();
    memset(t, 0, len);
    tm = reg(t, PIN_ACC, "ibv_reg_mr of the pinned target");
    /*
     * a first pass, not counted, warms what the emulator does once per
     * guest page (the host's own first touch, its translation caches), as
     * the ODP passes later find pages this one freed already warm
     */
    write_all("pinned", t, tm->rkey);
    secs = write_all("pinned", t, tm->rkey);
    verify("pinned", t);
    pin = mbps(secs);
    printf("odp-bench pinned mbps %.1f\n", pin);
    fflush(stdout);
    drop(tm, t);
    return pin;
}

/* odp-first: every page faults in; then odp-again over the same; the MB/s
 * of the first pass, of the second in *@again */
static double pass_odp_first_again(double *again)
{
    struct ibv_mr *tm;
    long long f0, f1, nf;
    double secs, first;
    uint8_t *t;

    t = fresh();
    tm = reg(t, ODP_ACC, "ibv_reg_mr of the ODP target");
    pattern(2);
    f0 = faults();
    secs = write_all("odp-first", t, tm->rkey);
    f1 = faults();
    verify("odp-first", t);
    first = mbps(secs);
    nf = up(f0, f1);
    printf("odp-bench odp-first mbps %.1f faults %lld faults_per_s %.1f\n",
           first, nf, nf >= 0 && secs > 0 ? nf / secs : -1.0);
    fflush(stdout);

    pattern(3);
    secs = write_all("odp-again", t, tm->rkey);
    verify("odp-again", t);
    *again = mbps(secs);
    printf("odp-bench odp-again mbps %.1f\n", *again);
    fflush(stdout);
    drop(tm, t);
    return first;
}

/* odp-prefetched: the whole region mapped by ibv_advise_mr first; its
 * MB/s.  A failed prefetch is a FAIL: exit 1. */
static double pass_odp_prefetched(void)
{
    struct ibv_sge sge;
    struct ibv_mr *tm;
    double secs, pre, pre_ms;
    uint8_t *t;
    int r;

    t = fresh();
    tm = reg(t, ODP_ACC, "ibv_reg_mr of the ODP target to prefetch");
    sge = (struct ibv_sge){ .addr = (uintptr_t)t, .length = len,
                            .lkey = tm->lkey };
    secs = now();
    r = ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
                      IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1);
    pre_ms = (now() - secs) * 1000;
    if (r) {
        printf("FAIL odp-prefetched: ibv_advise_mr PREFETCH_WRITE: %d (%s)\n",
               r, strerror(r));
        exit(1);
    }
    pattern(4);
    secs = write_all("odp-prefetched", t, tm->rkey);
    verify("odp-prefetched", t);
    pre = mbps(secs);
    printf("odp-bench odp-prefetched mbps %.1f prefetch_ms %.1f\n", pre,
           pre_ms);
    drop(tm, t);
    return pre;
}

int main(int argc, char **argv)
{
    const char *dev = "qroce_0";
    double pin, first, again, pre;

    options(argc, argv, &dev);
    open_dev(dev);
    need_odp();
    bench_setup();
    printf("# odp-bench: %s, GID index %d, region %zu MiB, WRITEs of %zu "
           "KiB one at a time, path MTU %d\n", dev, gid_index, len / MIB,
           chunk / 1024, 128 << path_mtu);
    fflush(stdout);

    pin = pass_pinned();
    first = pass_odp_first_again(&again);
    pre = pass_odp_prefetched();
    printf("odp-bench ratio first/pinned %.2f again/pinned %.2f "
           "prefetched/pinned %.2f\n", pin > 0 ? first / pin : 0,
           pin > 0 ? again / pin : 0, pin > 0 ? pre / pin : 0);
    fflush(stdout);

    drop(src_mr, src);
    if (ibv_destroy_qp(bp.a) || ibv_destroy_qp(bp.b) ||
        ibv_destroy_cq(bp.cq) || ibv_dereg_mr(mr) || ibv_dealloc_pd(pd) ||
        ibv_close_device(ctx)) {
        die("tearing down");
    }
    return 0;
}
