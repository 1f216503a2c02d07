/*
 * On-demand paging in one guest (RC QPs on one device, connected through
 * the device; a page fault on the responder side is answered with an RNR
 * NAK and the requester retries, so the QPs retry RNR forever):
 *
 * - ibv_query_device_ex reports ODP with SEND, RECV, WRITE, READ and
 *   ATOMIC for RC (else FAIL and stop), implicit ODP, and SEND and RECV
 *   for UD; the hw_counters odp_faults, odp_pages_mapped and
 *   odp_pages_unmapped are there and move as each step says below;
 * - an untouched 256 MiB anonymous region registered with
 *   IBV_ACCESS_ON_DEMAND takes RDMA WRITEs of 1 MiB every 16 MiB, one
 *   across the 128 MiB boundary, one of its last byte, each compared in
 *   memory; RDMA READs give the bytes back, and zeros where nothing was
 *   written; faults and mapped pages grow;
 * - ODP memory on the local side: the gather list of a SEND (untouched,
 *   and written by the CPU after registration), the scatter list of an
 *   RDMA READ and of a RECV;
 * - FETCH_AND_ADD and CMP_AND_SWP on a page nobody touched;
 * - madvise(MADV_DONTNEED) and munmap + mmap MAP_FIXED inside the region
 *   unmap the device's pages: READ then gives zeros, a WRITE lands in the
 *   new pages;
 * - a hole in an ODP MR (munmap after registration): a WRITE into it is a
 *   remote access error that puts the requester in ERR, a SEND gathered
 *   from it a local error (each on a fresh pair); the first pair goes on;
 * - an implicit ODP MR (NULL, SIZE_MAX) reaches any address: WRITE, READ
 *   and SEND through its keys;
 * - ibv_advise_mr PREFETCH_WRITE with FLUSH maps a whole MR, after which
 *   a WRITE raises no fault; PREFETCH on the implicit MR; a bad lkey fails;
 * - ibv_advise_mr on dma-buf MRs (a udmabuf of a memfd, ibv_reg_dmabuf_mr),
 *   which are not ODP MRs but share their table, as mlx5 answers it:
 *   PREFETCH_WRITE on a writable one maps it (0) and a WRITE then lands,
 *   PREFETCH_WRITE on a read-only one is EPERM, PREFETCH on it 0, a range
 *   past its end EFAULT; the process lives on (the driver once took the
 *   ODP umem of a dma-buf MR, which it has not: an oops);
 * - everything is destroyed cleanly.
 *
 * Usage: qroce-odp [-d DEV] [-g GID_INDEX]; prints PASS/FAIL lines, exits 1
 * if anything failed, 2 on a set-up error.
 */
#define _GNU_SOURCE             /* memfd_create, file seals */
#include <sys/mman.h>
#include "qr_verbs.h"
#include "qr_dmabuf.h"

#define MIB (1ul << 20)
#define SRV_LEN (256 * MIB)     /* the big ODP region */
#define CBUF_LEN (4 * MIB)      /* the pinned client buffer */
#define SBUF_LEN (1 * MIB)      /* the pinned receive buffer */
#define ATOM_OFF (105 * MIB + 0x1238)   /* 8-byte aligned, never touched */
#define ZERO_OFF (204 * MIB)    /* never written */
#define MADV_OFF (20 * MIB)     /* 4 MiB for the madvise step */
#define REMAP_OFF (136 * MIB)   /* 2 MiB for the munmap/mmap step */
#define AGAIN_OFF (44 * MIB + 77)       /* the pair works after the errors */
#define QP_TIMEOUT 20           /* 4.096 us << 20: about 4 s */
#define WAIT_S 60               /* per completion: faults are slow here */
#define BAD_LKEY 0xffffff00u    /* an MR index far past any device's */

#define ODP_ACC (IBV_ACCESS_ON_DEMAND | IBV_ACCESS_LOCAL_WRITE | \
                 IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
                 IBV_ACCESS_REMOTE_ATOMIC)
#define PIN_ACC (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
                 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

static struct pair p1, p2, p3;  /* p1 throughout; p2, p3 end in error */
static uint8_t *srv;            /* the big ODP region ... */
static struct ibv_mr *omr;      /* ... and its MR */
static uint8_t *cbuf, *sbuf;    /* pinned: client side, receive side */
static struct ibv_mr *cmr, *smr;
static uint8_t *want;           /* expected bytes, unregistered */
static struct ibv_mr *mrs[16];   /* deregistered at the end */
static int nmrs;
static long pagesz;

struct cnt {
    long long faults, mapped, unmapped;
};

/*
 * The three ODP counters.  The kernel caches hw_counters for 10 ms, so
 * wait past that first: a read right after the previous one could show
 * the old values.
 */
static struct cnt snap(void)
{
    struct cnt c;

    usleep(50000);
    c.faults = hw_counter("odp_faults");
    c.mapped = hw_counter("odp_pages_mapped");
    c.unmapped = hw_counter("odp_pages_unmapped");
    return c;
}

/* How much a (32-bit wrapping) counter went up from @a to @b; -1 if absent. */
static long long up(long long a, long long b)
{
    if (a < 0 || b < 0) {
        return -1;
    }
    return (b - a) & 0xffffffffll;
}

static void show(const char *when, struct cnt a, struct cnt b)
{
    printf("%s: odp_faults +%lld, odp_pages_mapped +%lld, "
           "odp_pages_unmapped +%lld\n", when, up(a.faults, b.faults),
           up(a.mapped, b.mapped), up(a.unmapped, b.unmapped));
}

static const char *st(int status)
{
    return status < 0 ? "no completion" : ibv_wc_status_str(status);
}

/* Poll one completion for up to WAIT_S seconds, sleeping a little between. */
static int poll60(struct ibv_cq *cq, struct ibv_wc *wc)
{
    struct timespec t0, t;
    long ms;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        int n = ibv_poll_cq(cq, 1, wc);

        if (n) {
            return n;
        }
        clock_gettime(CLOCK_MONOTONIC, &t);
        ms = (t.tv_sec - t0.tv_sec) * 1000 +
             (t.tv_nsec - t0.tv_nsec) / 1000000;
        if (ms > WAIT_S * 1000) {
            return 0;
        }
        if (ms > 2) {
            usleep(200);        /* let the fault handler in the kernel run */
        }
    }
}

/* RTR and RTS towards @remote on this device: short RNR timer, no limit. */
static void odp_connect(struct ibv_qp *qp, uint32_t remote)
{
    union ibv_gid gid;

    if (ibv_query_gid(ctx, 1, gid_index, &gid)) {
        die("ibv_query_gid");
    }
    qp_rnr_timer = 1;
    qp_timeout = QP_TIMEOUT;
    qp_retry = 7;
    connect_to_mtu(qp, remote, &gid, 100, 100, IBV_MTU_1024);
}

static void odp_pair(struct pair *p)
{
    p->cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
    if (!p->cq) {
        die("ibv_create_cq");
    }
    p->a = make_qp(p->cq);
    p->b = make_qp(p->cq);
    odp_connect(p->a, p->b->qp_num);
    odp_connect(p->b, p->a->qp_num);
}

static struct ibv_mr *keep(struct ibv_mr *m)
{
    if (m) {
        mrs[nmrs++] = m;
    }
    return m;
}

/* An anonymous private mapping nobody has touched. */
static uint8_t *fresh(size_t len)
{
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

    if (p == MAP_FAILED) {
        die("mmap");
    }
    return p;
}

/* Pseudo-random bytes from @seed (xorshift64). */
static void fill(uint8_t *p, size_t n, uint64_t seed)
{
    uint64_t x = seed * 0x9e3779b97f4a7c15ull | 1;
    size_t i;

    for (i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        p[i] = (uint8_t)(x >> 32);
    }
}

/* Does @p hold the @n bytes fill() makes from @seed? */
static int holds(const uint8_t *p, size_t n, uint64_t seed)
{
    fill(want, n, seed);
    return !memcmp(p, want, n);
}

static int all_zero(const uint8_t *p, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++) {
        if (p[i]) {
            return 0;
        }
    }
    return 1;
}

/* One signalled work request on @p's A and its completion: status or -1. */
static int post1(struct pair *p, struct ibv_send_wr *wr)
{
    struct ibv_send_wr *bad;
    struct ibv_wc wc;

    wr->send_flags |= IBV_SEND_SIGNALED;
    if (ibv_post_send(p->a, wr, &bad) || poll60(p->cq, &wc) != 1) {
        printf("  no completion\n");
        return -1;
    }
    if (wc.status != IBV_WC_SUCCESS) {
        printf("  completion: %s\n", st(wc.status));
    }
    return wc.status;
}

static int rdma(struct pair *p, enum ibv_wr_opcode op, const void *laddr,
                uint32_t lkey, uint32_t len, const void *raddr, uint32_t rkey)
{
    struct ibv_sge sge = { .addr = (uintptr_t)laddr, .length = len,
                           .lkey = lkey };
    struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
                              .opcode = op };

    wr.wr.rdma.remote_addr = (uintptr_t)raddr;
    wr.wr.rdma.rkey = rkey;
    return post1(p, &wr);
}

/* An atomic from p1's A on the big region at @off; old value into cbuf. */
static int atomic(enum ibv_wr_opcode op, size_t off, uint64_t add_or_cmp,
                  uint64_t swap)
{
    struct ibv_sge sge = { .addr = (uintptr_t)cbuf, .length = 8,
                           .lkey = cmr->lkey };
    struct ibv_send_wr wr = { .wr_id = 2, .sg_list = &sge, .num_sge = 1,
                              .opcode = op };

    wr.wr.atomic.remote_addr = (uintptr_t)(srv + off);
    wr.wr.atomic.rkey = omr->rkey;
    wr.wr.atomic.compare_add = add_or_cmp;
    wr.wr.atomic.swap = swap;
    return post1(&p1, &wr);
}

/*
 * A SEND of @len bytes at @saddr (@skey) on @p's A, received by its B at
 * @raddr (@rkey): true when both complete successfully and the receive
 * has @len bytes.
 */
static int send_recv(struct pair *p, const void *saddr, uint32_t skey,
                     void *raddr, uint32_t rkey, uint32_t len)
{
    struct ibv_sge ss = { .addr = (uintptr_t)saddr, .length = len,
                          .lkey = skey };
    struct ibv_sge rs = { .addr = (uintptr_t)raddr, .length = len,
                          .lkey = rkey };
    struct ibv_send_wr sw = { .wr_id = 22, .sg_list = &ss, .num_sge = 1,
                              .opcode = IBV_WR_SEND,
                              .send_flags = IBV_SEND_SIGNALED }, *sbad;
    struct ibv_recv_wr rw = { .wr_id = 21, .sg_list = &rs, .num_sge = 1 },
                       *rbad;
    int sent = -1, got = -1, i;
    uint32_t bytes = 0;

    if (ibv_post_recv(p->b, &rw, &rbad) || ibv_post_send(p->a, &sw, &sbad)) {
        printf("  post failed\n");
        return 0;
    }
    for (i = 0; i < 2; i++) {
        struct ibv_wc wc;

        if (poll60(p->cq, &wc) != 1) {
            break;
        }
        if (wc.wr_id == 21) {
            got = wc.status;
            bytes = wc.byte_len;
        } else {
            sent = wc.status;
        }
    }
    if (sent != IBV_WC_SUCCESS || got != IBV_WC_SUCCESS || bytes != len) {
        printf("  send: %s; receive: %s, %u bytes\n", st(sent), st(got),
               bytes);
        return 0;
    }
    return 1;
}

/* Is @qp in the error state (waiting up to 2 s for it)? */
static int in_error(struct ibv_qp *qp)
{
    struct ibv_qp_attr a;
    struct ibv_qp_init_attr ia;
    int i;

    for (i = 0; i < 200; i++) {
        if (ibv_query_qp(qp, &a, IBV_QP_STATE, &ia)) {
            return 0;
        }
        if (a.qp_state == IBV_QPS_ERR) {
            return 1;
        }
        usleep(10000);
    }
    printf("  QP state %d\n", a.qp_state);
    return 0;
}

/* Offset of the k-th 1 MiB write: one every 16 MiB, various alignments. */
static size_t chunk_off(int k)
{
    return k * 16 * MIB + 2 * MIB + (k * 1237) % 4096;
}

/* 2. The big untouched region: WRITEs everywhere, READs back, zeros. */
static void big_region(void)
{
    size_t cross = 128 * MIB - 300007, cross_len = MIB + 13;
    static const int back[] = { 0, 5, 11, 15 };
    struct cnt c0, c1;
    int ok, k;

    omr = keep(ibv_reg_mr(pd, srv, SRV_LEN, ODP_ACC));
    check(omr != NULL,
          "ibv_reg_mr of an untouched 256 MiB region, IBV_ACCESS_ON_DEMAND");
    if (!omr) {
        die("the ODP region");
    }
    c0 = snap();
    ok = 1;
    for (k = 0; k < 16 && ok; k++) {
        fill(cbuf, MIB, chunk_off(k));
        ok = rdma(&p1, IBV_WR_RDMA_WRITE, cbuf, cmr->lkey, MIB,
                  srv + chunk_off(k), omr->rkey) == IBV_WC_SUCCESS &&
             !memcmp(srv + chunk_off(k), cbuf, MIB);
        if (!ok) {
            printf("  the write at offset %zu\n", chunk_off(k));
        }
    }
    check(ok, "RDMA WRITE of 1 MiB every 16 MiB into the untouched region, "
          "bytes compared in memory");
    fill(cbuf, cross_len, cross);
    check(rdma(&p1, IBV_WR_RDMA_WRITE, cbuf, cmr->lkey, cross_len,
               srv + cross, omr->rkey) == IBV_WC_SUCCESS &&
          !memcmp(srv + cross, cbuf, cross_len),
          "RDMA WRITE of 1 MiB + 13 across the 128 MiB boundary, unaligned, "
          "bytes compared");
    cbuf[0] = 0xa5;
    check(rdma(&p1, IBV_WR_RDMA_WRITE, cbuf, cmr->lkey, 1,
               srv + SRV_LEN - 1, omr->rkey) == IBV_WC_SUCCESS &&
          srv[SRV_LEN - 1] == 0xa5,
          "RDMA WRITE of the region's last byte");

    ok = 1;
    for (k = 0; k < 4 && ok; k++) {
        memset(cbuf, 0xee, MIB);
        ok = rdma(&p1, IBV_WR_RDMA_READ, cbuf, cmr->lkey, MIB,
                  srv + chunk_off(back[k]), omr->rkey) == IBV_WC_SUCCESS &&
             holds(cbuf, MIB, chunk_off(back[k]));
    }
    memset(cbuf, 0xee, cross_len + 1);
    ok = ok && rdma(&p1, IBV_WR_RDMA_READ, cbuf, cmr->lkey, cross_len,
                    srv + cross, omr->rkey) == IBV_WC_SUCCESS &&
         holds(cbuf, cross_len, cross) && cbuf[cross_len] == 0xee;
    ok = ok && rdma(&p1, IBV_WR_RDMA_READ, cbuf, cmr->lkey, 1,
                    srv + SRV_LEN - 1, omr->rkey) == IBV_WC_SUCCESS &&
         cbuf[0] == 0xa5;
    check(ok, "RDMA READ back of written ranges (the boundary one and the "
          "last byte too), bytes compared");
    memset(cbuf, 0xee, MIB);
    check(rdma(&p1, IBV_WR_RDMA_READ, cbuf, cmr->lkey, MIB, srv + ZERO_OFF,
               omr->rkey) == IBV_WC_SUCCESS && all_zero(cbuf, MIB),
          "RDMA READ of a never-written 1 MiB of the region: zeros");
    c1 = snap();
    show("big region", c0, c1);
    check(up(c0.faults, c1.faults) > 0 && up(c0.mapped, c1.mapped) > 0,
          "odp_faults and odp_pages_mapped grew");
}

/* 3. ODP memory on the requester's side, and under a RECV. */
static void local_side(void)
{
    uint8_t *l = fresh(4 * MIB);
    struct ibv_mr *lmr = keep(ibv_reg_mr(pd, l, 4 * MIB,
                                         IBV_ACCESS_ON_DEMAND |
                                         IBV_ACCESS_LOCAL_WRITE));
    struct cnt c0, c1;

    check(lmr != NULL, "ibv_reg_mr of an untouched 4 MiB client buffer, "
          "IBV_ACCESS_ON_DEMAND");
    if (!lmr) {
        return;
    }
    c0 = snap();
    memset(sbuf, 0xee, 65536);
    check(send_recv(&p1, l, lmr->lkey, sbuf, smr->lkey, 65536) &&
          all_zero(sbuf, 65536),
          "SEND gathered from untouched ODP memory: the receiver gets zeros");
    /* the CPU writes the pages; the device has still not mapped them */
    fill(l + MIB, 256 << 10, 31);
    memset(sbuf, 0xee, 256 << 10);
    check(send_recv(&p1, l + MIB, lmr->lkey, sbuf, smr->lkey, 256 << 10) &&
          holds(sbuf, 256 << 10, 31),
          "SEND gathered from ODP memory the CPU wrote after registration, "
          "bytes compared");
    check(rdma(&p1, IBV_WR_RDMA_READ, l + 2 * MIB, lmr->lkey, MIB,
               srv + chunk_off(5), omr->rkey) == IBV_WC_SUCCESS &&
          holds(l + 2 * MIB, MIB, chunk_off(5)),
          "RDMA READ into an untouched ODP buffer, bytes compared");
    fill(cbuf, 256 << 10, 37);
    check(send_recv(&p1, cbuf, cmr->lkey, l + 3 * MIB, lmr->lkey,
                    256 << 10) &&
          holds(l + 3 * MIB, 256 << 10, 37),
          "RECV scattered into an untouched ODP buffer, bytes compared");
    c1 = snap();
    show("local side", c0, c1);
    check(up(c0.faults, c1.faults) > 0 && up(c0.mapped, c1.mapped) > 0,
          "odp_faults and odp_pages_mapped grew for the client-side buffer");
}

/* 4. Atomics on a page nobody touched. */
static void atomics(void)
{
    const uint64_t add = 0x0102030405060708ull, swap = 0xfeedfacecafebeefull;
    struct cnt c0, c1;
    uint64_t v;

    c0 = snap();
    memset(cbuf, 0xee, 8);
    check(atomic(IBV_WR_ATOMIC_FETCH_AND_ADD, ATOM_OFF, add, 0) ==
          IBV_WC_SUCCESS && !memcmp(cbuf, &(uint64_t){ 0 }, 8),
          "FETCH_AND_ADD on an untouched ODP page: old value 0");
    c1 = snap();
    memset(cbuf, 0xee, 8);
    check(atomic(IBV_WR_ATOMIC_CMP_AND_SWP, ATOM_OFF, add, swap) ==
          IBV_WC_SUCCESS && !memcmp(cbuf, &add, 8),
          "CMP_AND_SWP on it: old value is the sum, swapped");
    memcpy(&v, srv + ATOM_OFF, 8);
    printf("memory after the atomics: 0x%016llx\n", (unsigned long long)v);
    check(v == swap, "the region's memory holds the swapped value");
    show("atomics", c0, c1);
    check(up(c0.faults, c1.faults) > 0, "odp_faults grew for the atomic");
}

/* 5. madvise(MADV_DONTNEED) on a range the device has mapped. */
static void dontneed(void)
{
    uint8_t *r = srv + MADV_OFF;
    size_t len = 4 * MIB;
    struct cnt c0, c1;

    fill(cbuf, len, 41);
    check(rdma(&p1, IBV_WR_RDMA_WRITE, cbuf, cmr->lkey, len, r, omr->rkey) ==
          IBV_WC_SUCCESS && !memcmp(r, cbuf, len),
          "RDMA WRITE of 4 MiB before madvise, bytes compared");
    c0 = snap();
    check(!madvise(r, len, MADV_DONTNEED), "madvise(MADV_DONTNEED) on it");
    c1 = snap();
    show("madvise", c0, c1);
    check(up(c0.unmapped, c1.unmapped) > 0,
          "odp_pages_unmapped grew on madvise(MADV_DONTNEED)");
    memset(cbuf, 0xee, len);
    check(rdma(&p1, IBV_WR_RDMA_READ, cbuf, cmr->lkey, len, r, omr->rkey) ==
          IBV_WC_SUCCESS && all_zero(cbuf, len),
          "RDMA READ after madvise: zeros, not the old pattern");
    fill(cbuf, len, 43);
    check(rdma(&p1, IBV_WR_RDMA_WRITE, cbuf, cmr->lkey, len, r, omr->rkey) ==
          IBV_WC_SUCCESS && holds(r, len, 43),
          "RDMA WRITE of a new pattern after madvise, bytes compared");
}

/* 6. munmap part of the region and map new pages at the same address. */
static void remap(void)
{
    uint8_t *r = srv + REMAP_OFF;
    size_t len = 2 * MIB;
    struct cnt c0, c1;
    void *m;

    fill(cbuf, len, 47);
    check(rdma(&p1, IBV_WR_RDMA_WRITE, cbuf, cmr->lkey, len, r, omr->rkey) ==
          IBV_WC_SUCCESS && !memcmp(r, cbuf, len),
          "RDMA WRITE of 2 MiB before munmap, bytes compared");
    c0 = snap();
    m = MAP_FAILED;
    if (!munmap(r, len)) {
        m = mmap(r, len, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    }
    check(m == r, "munmap of 2 MiB inside the region, mmap MAP_FIXED there");
    if (m != r) {
        die("mmap MAP_FIXED");
    }
    c1 = snap();
    show("munmap", c0, c1);
    check(up(c0.unmapped, c1.unmapped) > 0,
          "odp_pages_unmapped grew on munmap");
    memset(cbuf, 0xee, len);
    check(rdma(&p1, IBV_WR_RDMA_READ, cbuf, cmr->lkey, len, r, omr->rkey) ==
          IBV_WC_SUCCESS && all_zero(cbuf, len),
          "RDMA READ of the new mapping: zeros, not the old pages' bytes");
    fill(cbuf, len, 53);
    check(rdma(&p1, IBV_WR_RDMA_WRITE, cbuf, cmr->lkey, len, r, omr->rkey) ==
          IBV_WC_SUCCESS && holds(r, len, 53),
          "RDMA WRITE lands in the new mapping, bytes compared");
}

/* 7. An ODP MR over a range that is partly not mapped at all. */
static void hole(void)
{
    uint8_t *h, *gap;
    struct ibv_mr *hmr;
    int s;

    /* the pairs first: creating them may mmap, which could fill the hole */
    odp_pair(&p2);
    odp_pair(&p3);
    h = fresh(8 * MIB);
    gap = h + 4 * MIB;
    hmr = keep(ibv_reg_mr(pd, h, 8 * MIB, ODP_ACC));
    check(hmr && !munmap(gap, 4 * MIB),
          "ibv_reg_mr of 8 MiB, IBV_ACCESS_ON_DEMAND, then munmap of its "
          "last 4 MiB");
    if (!hmr) {
        return;
    }

    fill(cbuf, 65536, 59);
    s = rdma(&p2, IBV_WR_RDMA_WRITE, cbuf, cmr->lkey, 65536, gap + 8192,
             hmr->rkey);
    printf("RDMA WRITE into the hole: %s (remote access error expected)\n",
           st(s));
    check(s > IBV_WC_SUCCESS, "RDMA WRITE into the MR's unmapped part fails");
    check(s == IBV_WC_REM_ACCESS_ERR, "... with a remote access error");
    check(in_error(p2.a), "... and the requester's QP is in IBV_QPS_ERR");

    fill(cbuf, 65536, 61);
    check(rdma(&p1, IBV_WR_RDMA_WRITE, cbuf, cmr->lkey, 65536,
               srv + AGAIN_OFF, omr->rkey) == IBV_WC_SUCCESS &&
          holds(srv + AGAIN_OFF, 65536, 61),
          "the first pair still works: RDMA WRITE, bytes compared");

    {
        struct ibv_sge rs = { .addr = (uintptr_t)sbuf, .length = 65536,
                              .lkey = smr->lkey };
        struct ibv_recv_wr rw = { .wr_id = 31, .sg_list = &rs,
                                  .num_sge = 1 }, *rbad;
        struct ibv_sge ss = { .addr = (uintptr_t)(gap + 4096),
                              .length = 4096, .lkey = hmr->lkey };
        struct ibv_send_wr sw = { .wr_id = 32, .sg_list = &ss, .num_sge = 1,
                                  .opcode = IBV_WR_SEND,
                                  .send_flags = IBV_SEND_SIGNALED }, *sbad;
        struct ibv_wc wc;

        s = -1;
        if (!ibv_post_recv(p3.b, &rw, &rbad) &&
            !ibv_post_send(p3.a, &sw, &sbad) && poll60(p3.cq, &wc) == 1) {
            s = wc.wr_id == 32 ? (int)wc.status : IBV_WC_SUCCESS;
            if (wc.wr_id != 32) {
                printf("  the receiver got %s first\n", st(wc.status));
            }
        }
        printf("SEND gathered from the hole: %s (local protection or "
               "access error expected)\n", st(s));
        check(s > IBV_WC_SUCCESS,
              "SEND gathered from the MR's unmapped part fails");
        check(s == IBV_WC_LOC_PROT_ERR || s == IBV_WC_LOC_ACCESS_ERR,
              "... with a local protection or access error");
        check(in_error(p3.a), "... and that QP is in IBV_QPS_ERR too");
    }
}

/* 8. An implicit ODP MR: every address of the process through one key. */
static void implicit(void)
{
    struct ibv_mr *imr = ibv_reg_mr(pd, NULL, SIZE_MAX,
                                    IBV_ACCESS_ON_DEMAND |
                                    IBV_ACCESS_LOCAL_WRITE |
                                    IBV_ACCESS_REMOTE_WRITE |
                                    IBV_ACCESS_REMOTE_READ);
    uint8_t *a, *m;

    check(imr != NULL, "ibv_reg_mr(NULL, SIZE_MAX, IBV_ACCESS_ON_DEMAND): "
          "an implicit ODP MR");
    if (!imr) {
        return;
    }
    a = fresh(8 * MIB);
    m = malloc(256 << 10);
    if (!m) {
        die("malloc");
    }

    fill(cbuf, MIB, 67);
    check(rdma(&p1, IBV_WR_RDMA_WRITE, cbuf, cmr->lkey, MIB, a + 3 * MIB + 111,
               imr->rkey) == IBV_WC_SUCCESS &&
          holds(a + 3 * MIB + 111, MIB, 67),
          "RDMA WRITE through the implicit rkey into untouched memory, "
          "bytes compared");
    fill(a + 6 * MIB, 512 << 10, 71);
    memset(cbuf, 0xee, 512 << 10);
    check(rdma(&p1, IBV_WR_RDMA_READ, cbuf, cmr->lkey, 512 << 10, a + 6 * MIB,
               imr->rkey) == IBV_WC_SUCCESS && holds(cbuf, 512 << 10, 71),
          "RDMA READ through the implicit rkey, bytes compared");
    fill(m, 256 << 10, 73);
    memset(sbuf, 0xee, 256 << 10);
    check(send_recv(&p1, m, imr->lkey, sbuf, smr->lkey, 256 << 10) &&
          holds(sbuf, 256 << 10, 73),
          "SEND gathered from malloc'd memory through the implicit lkey, "
          "bytes compared");
    {
        struct ibv_sge sge = { .addr = (uintptr_t)a, .length = MIB,
                               .lkey = imr->lkey };
        int r = ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH,
                              IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1);

        if (r) {
            printf("  ibv_advise_mr: %d (%s)\n", r, strerror(r));
        }
        check(r == 0, "ibv_advise_mr PREFETCH on the implicit MR");
    }
    check(!ibv_dereg_mr(imr), "ibv_dereg_mr of the implicit MR");
    free(m);
    munmap(a, 8 * MIB);
}

/* 9. Prefetch a whole explicit MR, then use it without faults. */
static void prefetch(void)
{
    size_t len = 16 * MIB;
    uint8_t *q = fresh(len), *w = q + 5 * MIB + 123;
    struct ibv_mr *pmr = keep(ibv_reg_mr(pd, q, len, ODP_ACC));
    struct ibv_sge sge;
    struct cnt c0, c1, c2;
    int r;

    check(pmr != NULL, "ibv_reg_mr of an untouched 16 MiB region, "
          "IBV_ACCESS_ON_DEMAND");
    if (!pmr) {
        return;
    }
    c0 = snap();
    sge = (struct ibv_sge){ .addr = (uintptr_t)q, .length = len,
                            .lkey = pmr->lkey };
    r = ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
                      IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1);
    if (r) {
        printf("  ibv_advise_mr: %d (%s)\n", r, strerror(r));
    }
    check(r == 0, "ibv_advise_mr PREFETCH_WRITE with FLUSH on all of it");
    c1 = snap();
    show("prefetch", c0, c1);
    check(up(c0.mapped, c1.mapped) >= (long long)len / pagesz,
          "odp_pages_mapped grew by at least 16 MiB of pages");
    fill(cbuf, MIB, 79);
    check(rdma(&p1, IBV_WR_RDMA_WRITE, cbuf, cmr->lkey, MIB, w, pmr->rkey) ==
          IBV_WC_SUCCESS && holds(w, MIB, 79),
          "RDMA WRITE into the prefetched MR, bytes compared");
    c2 = snap();
    show("write after prefetch", c1, c2);
    check(up(c1.faults, c2.faults) == 0,
          "... and no page fault for it (odp_faults unchanged)");

    sge.lkey = BAD_LKEY;
    sge.length = 4096;
    r = ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
                      IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1);
    printf("ibv_advise_mr with a bad lkey: %d\n", r);
    check(r != 0, "ibv_advise_mr with a bad lkey fails");
}

/* ibv_advise_mr on @sge with @advice and FLUSH: 0 or an errno, printed. */
static int advise(enum ibv_advise_mr_advice advice, struct ibv_sge sge)
{
    int r = ibv_advise_mr(pd, advice, IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1);

    printf("  ibv_advise_mr(%s): %d (%s)\n",
           advice == IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE ? "PREFETCH_WRITE" :
           "PREFETCH", r, strerror(r));
    return r;
}

/* 10. Prefetch on dma-buf MRs: mapped whole, or refused, never an oops. */
static void dmabuf_prefetch(void)
{
    const size_t len = 2 * MIB;
    uint8_t *d = NULL, *r = NULL, *w;
    int dfd = qr_udmabuf(len, &d), rfd = qr_udmabuf(len, &r);
    struct ibv_mr *dmr = NULL, *rmr = NULL;

    if (dfd >= 0 && rfd >= 0) {
        dmr = keep(ibv_reg_dmabuf_mr(pd, 0, len, (uintptr_t)d, dfd, PIN_ACC));
        rmr = keep(ibv_reg_dmabuf_mr(pd, 0, len, (uintptr_t)r, rfd,
                                     IBV_ACCESS_REMOTE_READ));
    }
    check(dmr && rmr, "ibv_reg_dmabuf_mr of two 2 MiB udmabufs, one "
          "writable, one read-only");
    if (!dmr || !rmr) {
        printf("  errno %d (%s)\n", errno, strerror(errno));
        return;
    }
    check(advise(IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
                 (struct ibv_sge){ .addr = (uintptr_t)d, .length = len,
                                   .lkey = dmr->lkey }) == 0,
          "ibv_advise_mr PREFETCH_WRITE with FLUSH on the writable dma-buf "
          "MR: 0, as mlx5 (it maps the buffer)");
    w = d + MIB + 4096 + 17;
    fill(cbuf, 65536, 83);
    check(rdma(&p1, IBV_WR_RDMA_WRITE, cbuf, cmr->lkey, 65536, w,
               dmr->rkey) == IBV_WC_SUCCESS && holds(w, 65536, 83),
          "RDMA WRITE into the prefetched dma-buf MR, bytes compared");
    check(advise(IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
                 (struct ibv_sge){ .addr = (uintptr_t)r, .length = 4096,
                                   .lkey = rmr->lkey }) == EPERM,
          "ibv_advise_mr PREFETCH_WRITE on the read-only dma-buf MR: EPERM");
    check(advise(IBV_ADVISE_MR_ADVICE_PREFETCH,
                 (struct ibv_sge){ .addr = (uintptr_t)r, .length = 4096,
                                   .lkey = rmr->lkey }) == 0,
          "ibv_advise_mr PREFETCH on the read-only dma-buf MR: 0");
    check(advise(IBV_ADVISE_MR_ADVICE_PREFETCH,
                 (struct ibv_sge){ .addr = (uintptr_t)d + len, .length = 4096,
                                   .lkey = dmr->lkey }) == EFAULT,
          "ibv_advise_mr PREFETCH past the end of the dma-buf MR: EFAULT");
}

/* 11. Everything goes away cleanly. */
static void cleanup(void)
{
    struct pair *ps[3] = { &p1, &p2, &p3 };
    int bad = 0, i;

    for (i = 0; i < nmrs; i++) {
        bad |= ibv_dereg_mr(mrs[i]) != 0;
    }
    check(!bad, "ibv_dereg_mr of every MR");
    bad = 0;
    for (i = 0; i < 3; i++) {
        bad |= ibv_destroy_qp(ps[i]->a) != 0;
        bad |= ibv_destroy_qp(ps[i]->b) != 0;
    }
    check(!bad, "ibv_destroy_qp of all six QPs");
    bad = 0;
    for (i = 0; i < 3; i++) {
        bad |= ibv_destroy_cq(ps[i]->cq) != 0;
    }
    check(!bad, "ibv_destroy_cq of all three CQs");
    check(!ibv_dealloc_pd(pd), "ibv_dealloc_pd");
    check(!ibv_close_device(ctx), "ibv_close_device");
}

int main(int argc, char **argv)
{
    const uint32_t need = IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV |
                          IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_READ |
                          IBV_ODP_SUPPORT_ATOMIC;
    const uint32_t ud = IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV;
    const char *dev = "qroce_0";
    struct ibv_device_attr_ex attr;
    struct ibv_odp_caps *oc;
    struct cnt c;
    int c_opt;

    while ((c_opt = getopt(argc, argv, "d:g:")) != -1) {
        if (!qr_common_opt(c_opt, &dev)) {
            fprintf(stderr, "usage: qroce-odp [-d DEV] [-g GID_INDEX]\n");
            return 2;
        }
    }
    pagesz = sysconf(_SC_PAGESIZE);
    open_dev(dev);
    if (ibv_query_device_ex(ctx, NULL, &attr)) {
        die("ibv_query_device_ex");
    }
    oc = &attr.odp_caps;
    printf("odp caps: general 0x%llx, rc 0x%x, ud 0x%x\n",
           (unsigned long long)oc->general_caps,
           oc->per_transport_caps.rc_odp_caps,
           oc->per_transport_caps.ud_odp_caps);
    check((oc->general_caps & IBV_ODP_SUPPORT) &&
          (oc->per_transport_caps.rc_odp_caps & need) == need,
          "odp caps: IBV_ODP_SUPPORT, RC SEND RECV WRITE READ ATOMIC");
    if (failed) {
        return 1;
    }
    check(!!(oc->general_caps & IBV_ODP_SUPPORT_IMPLICIT),
          "odp caps: IBV_ODP_SUPPORT_IMPLICIT");
    check((oc->per_transport_caps.ud_odp_caps & ud) == ud,
          "odp caps: UD SEND RECV");

    c = snap();
    printf("odp_faults %lld, odp_pages_mapped %lld, odp_pages_unmapped %lld\n",
           c.faults, c.mapped, c.unmapped);
    check(c.faults >= 0 && c.mapped >= 0 && c.unmapped >= 0,
          "hw_counters odp_faults, odp_pages_mapped, odp_pages_unmapped");

    keep(mr);                   /* open_dev()'s, unused here */
    cbuf = malloc(CBUF_LEN);
    sbuf = malloc(SBUF_LEN);
    want = malloc(CBUF_LEN);
    if (!cbuf || !sbuf || !want) {
        die("malloc");
    }
    cmr = keep(ibv_reg_mr(pd, cbuf, CBUF_LEN, PIN_ACC));
    smr = keep(ibv_reg_mr(pd, sbuf, SBUF_LEN, IBV_ACCESS_LOCAL_WRITE));
    if (!cmr || !smr) {
        die("ibv_reg_mr");
    }
    qp_access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
                IBV_ACCESS_REMOTE_ATOMIC;
    qp_rd_atom = 4;
    odp_pair(&p1);
    srv = fresh(SRV_LEN);

    big_region();
    local_side();
    atomics();
    dontneed();
    remap();
    hole();
    implicit();
    prefetch();
    dmabuf_prefetch();
    cleanup();
    return failed;
}
