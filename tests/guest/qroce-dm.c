/*
 * Device memory in one guest (two RC QPs on one device, connected through
 * the device):
 *
 * - ibv_query_device_ex reports max_dm_size; ibv_alloc_dm gives memory
 *   that reads back as zeros, ibv_memcpy_to_dm/_from_dm move bytes, and
 *   refuse offsets and lengths that are not 4-byte aligned or leave the
 *   allocation; two allocations never overlap; the pool runs out at
 *   max_dm_size and comes back on ibv_free_dm;
 * - an MR on it (ibv_reg_dm_mr, zero-based) is the target of RDMA WRITE,
 *   READ and both atomics, the gather list of a SEND and the scatter list
 *   of a RECV, every byte compared; a WRITE past its end is a remote
 *   access error that changes nothing; ibv_reg_dm_mr past the allocation
 *   or without IBV_ACCESS_ZERO_BASED fails; ibv_free_dm with an MR on it
 *   is refused (EBUSY).
 *
 * Usage: qroce-dm [-d DEV] [-g GID_INDEX]; prints PASS/FAIL lines, exits 1
 * if anything failed.
 */
#include "qr_verbs.h"

#define DM_LEN (64 << 10)
#define DM_ACC (IBV_ACCESS_ZERO_BASED | IBV_ACCESS_LOCAL_WRITE | \
                IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
                IBV_ACCESS_REMOTE_ATOMIC)

static struct ibv_cq *cq;
static struct ibv_qp *qa, *qb;
static struct ibv_mr *hmr;      /* the host buffer, remote access too */

static struct ibv_dm *dm_alloc(size_t len)
{
    struct ibv_alloc_dm_attr a = { .length = len };

    return ibv_alloc_dm(ctx, &a);
}

/* One work request on @qp and its completion: the status, or -1. */
static int post1(struct ibv_qp *qp, struct ibv_send_wr *wr)
{
    struct ibv_send_wr *bad;
    struct ibv_wc wc;

    wr->send_flags |= IBV_SEND_SIGNALED;
    if (ibv_post_send(qp, wr, &bad) || poll1(cq, &wc) != 1) {
        return -1;
    }
    return wc.status;
}

static int rdma(struct ibv_qp *qp, enum ibv_wr_opcode op, uint64_t laddr,
                uint32_t lkey, uint32_t len, uint64_t raddr, uint32_t rkey)
{
    struct ibv_sge sge = { .addr = laddr, .length = len, .lkey = lkey };
    struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
                              .opcode = op };

    wr.wr.rdma.remote_addr = raddr;
    wr.wr.rdma.rkey = rkey;
    return post1(qp, &wr);
}

static int atomic(enum ibv_wr_opcode op, uint64_t raddr, uint32_t rkey,
                  uint64_t add_or_cmp, uint64_t swap)
{
    struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = 8,
                           .lkey = hmr->lkey };
    struct ibv_send_wr wr = { .wr_id = 2, .sg_list = &sge, .num_sge = 1,
                              .opcode = op };

    wr.wr.atomic.remote_addr = raddr;
    wr.wr.atomic.rkey = rkey;
    wr.wr.atomic.compare_add = add_or_cmp;
    wr.wr.atomic.swap = swap;
    return post1(qa, &wr);
}

static void fill(uint8_t *p, size_t n, unsigned seed)
{
    size_t i;

    for (i = 0; i < n; i++) {
        p[i] = (uint8_t)(i * seed + (i >> 8) + 1);
    }
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

/* The allocation API: bounds, alignment, zeroing, no overlap, the pool. */
static void api(uint64_t max)
{
    static uint8_t a[DM_LEN], b[DM_LEN];
    struct ibv_dm *d1 = dm_alloc(DM_LEN), *d2 = dm_alloc(100);
    struct ibv_dm *many[64];
    int n = 0, i;

    check(d1 && d2, "ibv_alloc_dm of 64 KiB and of 100 bytes");
    if (!d1 || !d2) {
        return;
    }
    memset(a, 0xee, sizeof(a));
    check(!ibv_memcpy_from_dm(a, d1, 0, DM_LEN) && all_zero(a, DM_LEN),
          "a new allocation reads as zeros");
    fill(a, DM_LEN, 7);
    fill(b, 100, 13);
    check(!ibv_memcpy_to_dm(d1, 0, a, DM_LEN) &&
          !ibv_memcpy_to_dm(d2, 0, b, 100),
          "ibv_memcpy_to_dm into both");
    memset(a + DM_LEN / 2, 0, DM_LEN / 2);
    check(!ibv_memcpy_from_dm(a + DM_LEN / 2, d1, DM_LEN / 2, DM_LEN / 2) &&
          !ibv_memcpy_from_dm(b + 200, d2, 0, 100),
          "ibv_memcpy_from_dm from both");
    fill(a, DM_LEN / 2, 7);
    {
        static uint8_t want[DM_LEN];

        fill(want, DM_LEN, 7);
        check(!memcmp(a, want, DM_LEN) && !memcmp(b, b + 200, 100),
              "each allocation holds its own bytes (no overlap)");
    }
    check(ibv_memcpy_to_dm(d2, 2, b, 4) == EINVAL &&
          ibv_memcpy_to_dm(d2, 0, b, 6) == EINVAL &&
          ibv_memcpy_from_dm(b, d2, 1, 4) == EINVAL,
          "offsets and lengths not 4-byte aligned: EINVAL");
    check(ibv_memcpy_to_dm(d2, 100, b, 4) == EINVAL &&
          ibv_memcpy_from_dm(b, d2, 0, 104) == EINVAL &&
          ibv_memcpy_to_dm(d1, DM_LEN - 4, b, 8) == EINVAL,
          "past the allocation: EINVAL");
    errno = 0;
    check(!dm_alloc(max + 4096) && errno,
          "ibv_alloc_dm of more than max_dm_size fails");
    {
        struct ibv_alloc_dm_attr at = { .length = 64, .comp_mask = 1 };

        errno = 0;
        check(!ibv_alloc_dm(ctx, &at) && errno == EINVAL,
              "ibv_alloc_dm with an unknown comp_mask bit: EINVAL");
    }
    /* the rest of the pool in 16 KiB pieces, then no more */
    while (n < 64 && (many[n] = dm_alloc(16384)) != NULL) {
        n++;
    }
    printf("the pool gave %d more allocations of 16 KiB\n", n);
    check(n == (int)((max - DM_LEN - 4096) / 16384),
          "the pool runs out at max_dm_size (each allocation whole pages)");
    check(!ibv_free_dm(d1), "ibv_free_dm");
    for (i = 0; i < 4; i++) {
        many[n] = dm_alloc(16384);
        if (!many[n]) {
            break;
        }
        n++;
    }
    check(i == 4, "the freed 64 KiB comes back as four 16 KiB allocations");
    for (i = 0; i < n; i++) {
        memset(a, 0xee, 16384);
        if (ibv_memcpy_from_dm(a, many[i], 0, 16384) ||
            !all_zero(a, 16384)) {
            break;
        }
    }
    check(i == n, "... and every one of them reads as zeros");
    while (n > 0) {
        ibv_free_dm(many[--n]);
    }
    ibv_free_dm(d2);
}

/* Traffic with an MR on device memory. */
static void traffic(void)
{
    static uint8_t pat[DM_LEN], got[DM_LEN];
    struct ibv_dm *d = dm_alloc(DM_LEN);
    struct ibv_mr *dmr;
    struct ibv_recv_wr rwr, *rbad;
    struct ibv_sge rsge;
    struct ibv_wc wc;
    uint64_t v;

    if (!d) {
        check(0, "ibv_alloc_dm for traffic");
        return;
    }
    errno = 0;
    check(!ibv_reg_dm_mr(pd, d, 0, DM_LEN + 4, DM_ACC) && errno,
          "ibv_reg_dm_mr past the allocation fails");
    errno = 0;
    check(!ibv_reg_dm_mr(pd, d, 0, DM_LEN,
                         DM_ACC & ~IBV_ACCESS_ZERO_BASED) && errno,
          "ibv_reg_dm_mr without IBV_ACCESS_ZERO_BASED fails");
    dmr = ibv_reg_dm_mr(pd, d, 0, DM_LEN, DM_ACC);
    check(dmr != NULL, "ibv_reg_dm_mr of the whole allocation");
    if (!dmr) {
        ibv_free_dm(d);
        return;
    }

    /* WRITE 8 KiB into it at va 1024 */
    fill(buf, 8192, 5);
    check(rdma(qa, IBV_WR_RDMA_WRITE, (uintptr_t)buf, hmr->lkey, 8192, 1024,
               dmr->rkey) == IBV_WC_SUCCESS &&
          !ibv_memcpy_from_dm(got, d, 1024, 8192) && !memcmp(got, buf, 8192),
          "RDMA WRITE into device memory, bytes compared");
    /* READ what ibv_memcpy_to_dm put at va 32768 */
    fill(pat, 8192, 9);
    ibv_memcpy_to_dm(d, 32768, pat, 8192);
    memset(buf, 0, 8192);
    check(rdma(qa, IBV_WR_RDMA_READ, (uintptr_t)buf, hmr->lkey, 8192, 32768,
               dmr->rkey) == IBV_WC_SUCCESS && !memcmp(buf, pat, 8192),
          "RDMA READ from device memory, bytes compared");
    /* atomics on va 16 */
    v = 1000;
    ibv_memcpy_to_dm(d, 16, &v, 8);
    check(atomic(IBV_WR_ATOMIC_FETCH_AND_ADD, 16, dmr->rkey, 234, 0) ==
          IBV_WC_SUCCESS && *(uint64_t *)buf == 1000 &&
          !ibv_memcpy_from_dm(&v, d, 16, 8) && v == 1234,
          "FETCH_AND_ADD on device memory: 1000 + 234");
    check(atomic(IBV_WR_ATOMIC_CMP_AND_SWP, 16, dmr->rkey, 1234, 77) ==
          IBV_WC_SUCCESS && *(uint64_t *)buf == 1234 &&
          !ibv_memcpy_from_dm(&v, d, 16, 8) && v == 77,
          "CMP_AND_SWP on device memory: 1234 -> 77");
    /* SEND gathered from device memory, received in host memory */
    rsge = (struct ibv_sge){ .addr = (uintptr_t)buf + 4096, .length = 4096,
                             .lkey = hmr->lkey };
    rwr = (struct ibv_recv_wr){ .wr_id = 7, .sg_list = &rsge, .num_sge = 1 };
    memset(buf + 4096, 0, 4096);
    check(!ibv_post_recv(qb, &rwr, &rbad) &&
          rdma(qa, IBV_WR_SEND, 32768, dmr->lkey, 4096, 0, 0) ==
          IBV_WC_SUCCESS && poll1(cq, &wc) == 1 &&
          wc.status == IBV_WC_SUCCESS && !memcmp(buf + 4096, pat, 4096),
          "SEND whose gather list is device memory");
    /* ... and the other way: received into device memory */
    rsge = (struct ibv_sge){ .addr = 49152, .length = 4096,
                             .lkey = dmr->lkey };
    fill(buf, 4096, 3);
    check(!ibv_post_recv(qb, &rwr, &rbad) &&
          rdma(qa, IBV_WR_SEND, (uintptr_t)buf, hmr->lkey, 4096, 0, 0) ==
          IBV_WC_SUCCESS && poll1(cq, &wc) == 1 &&
          wc.status == IBV_WC_SUCCESS &&
          !ibv_memcpy_from_dm(got, d, 49152, 4096) && !memcmp(got, buf, 4096),
          "RECV whose scatter list is device memory");
    check(ibv_free_dm(d) == EBUSY, "ibv_free_dm with an MR on it: EBUSY");
    /* past the end: refused, nothing written (QP A goes to error) */
    ibv_memcpy_from_dm(pat, d, DM_LEN - 4096, 4096);
    check(rdma(qa, IBV_WR_RDMA_WRITE, (uintptr_t)buf, hmr->lkey, 8192,
               DM_LEN - 4096, dmr->rkey) == IBV_WC_REM_ACCESS_ERR &&
          !ibv_memcpy_from_dm(got, d, DM_LEN - 4096, 4096) &&
          !memcmp(got, pat, 4096),
          "RDMA WRITE past the MR's end: remote access error, nothing "
          "written");
    check(!ibv_dereg_mr(dmr) && !ibv_free_dm(d),
          "ibv_dereg_mr, then ibv_free_dm");
}

int main(int argc, char **argv)
{
    const char *dev = "qroce_0";
    struct ibv_device_attr_ex attr;
    struct pair p;
    int c;

    while ((c = getopt(argc, argv, "d:g:")) != -1) {
        if (!qr_common_opt(c, &dev)) {
            fprintf(stderr, "usage: qroce-dm [-d DEV] [-g GID_INDEX]\n");
            return 2;
        }
    }
    open_dev(dev);
    if (ibv_query_device_ex(ctx, NULL, &attr)) {
        die("ibv_query_device_ex");
    }
    printf("max_dm_size %llu\n", (unsigned long long)attr.max_dm_size);
    check(attr.max_dm_size >= 4 * DM_LEN,
          "ibv_query_device_ex: max_dm_size of 256 KiB or more");
    if (attr.max_dm_size < 4 * DM_LEN) {
        return 1;
    }
    api(attr.max_dm_size);

    ibv_dereg_mr(mr);
    free(buf);
    buf = calloc(1, 65536);
    hmr = ibv_reg_mr(pd, buf, 65536, IBV_ACCESS_LOCAL_WRITE |
                     IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
                     IBV_ACCESS_REMOTE_ATOMIC);
    if (!buf || !hmr) {
        die("ibv_reg_mr");
    }
    mr = hmr;
    qp_access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
                IBV_ACCESS_REMOTE_ATOMIC;
    make_pair(&p);
    cq = p.cq;
    qa = p.a;
    qb = p.b;
    traffic();
    return failed;
}
