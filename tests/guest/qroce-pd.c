/*
 * Parent domains and thread domains in one guest (two RC QPs on one
 * device, connected through the device):
 *
 * - a parent domain with a thread domain and the program's allocator: the
 *   rings of the CQ (ibv_create_cq_ex with IBV_CQ_INIT_ATTR_MASK_PD), the
 *   QPs' send and receive queues and an SRQ come from that allocator (each
 *   call counted by resource type, page-aligned, inside the program's
 *   pool), SEND/RECV through the SRQ and RDMA WRITE move bytes that are
 *   compared, a CQ resize takes a new ring from the allocator and gives
 *   the old one back, and every ring is given back on destroy;
 * - an allocator that answers IBV_ALLOCATOR_USE_DEFAULT: the provider's
 *   own memory, and the free callback is never called;
 * - an allocator that returns NULL (ENOMEM) or memory off a page boundary
 *   (EINVAL, and that memory is given back);
 * - what must be refused: a parent domain over a parent domain, a CQ whose
 *   domain is a plain PD, deallocating a PD or a TD that a parent domain
 *   still names (EBUSY), unknown comp_mask bits;
 * - a parent domain that a CQ, a QP or an SRQ still uses cannot be
 *   deallocated (EBUSY, as mlx5): their destroy gives their rings back
 *   through its allocator; once the last is gone it can, and every ring
 *   came back through the free callback.
 *
 * Usage: qroce-pd [-d DEV] [-g GID_INDEX]; prints PASS/FAIL lines, exits 1
 * if anything failed.
 */
#include <sys/mman.h>
#include "qr_verbs.h"

#define POOL (4u << 20)
#define NTYPES 8

/* The program's allocator: a bump allocator over an mmapped pool. */
struct pool {
    uint8_t *base;
    size_t used;
    int mode;                   /* 0 pool, 1 default, 2 NULL, 3 misaligned */
    int allocs, frees, bad_align;
    int by_type[NTYPES];
    uint64_t type_base;
    void *live[64];
    int nlive;
    uint8_t *last[NTYPES];      /* the newest ring of each type */
    size_t last_size[NTYPES];
};

static struct pool pool;

static void *pool_alloc(struct ibv_pd *p, void *pd_context, size_t size,
                        size_t alignment, uint64_t type)
{
    struct pool *pl = pd_context;
    size_t off;
    void *ptr;

    (void)p;
    pl->allocs++;
    if (!pl->type_base) {
        pl->type_base = type & ~0xffffffffull;
    }
    if ((type & 0xffffffffull) < NTYPES) {
        pl->by_type[type & 0xffffffffull]++;
    }
    if (!alignment || (alignment & (alignment - 1))) {
        pl->bad_align++;
    }
    switch (pl->mode) {
    case 1:
        return IBV_ALLOCATOR_USE_DEFAULT;
    case 2:
        return NULL;
    default:
        break;
    }
    off = (pl->used + alignment - 1) & ~(alignment - 1);
    if (pl->mode == 3) {
        off += 64;              /* off the boundary the provider asked for */
    }
    if (off + size > POOL || pl->nlive == 64) {
        return NULL;
    }
    pl->used = off + size;
    ptr = pl->base + off;
    pl->live[pl->nlive++] = ptr;
    if ((type & 0xffffffffull) < NTYPES) {
        pl->last[type & 0xffffffffull] = ptr;
        pl->last_size[type & 0xffffffffull] = size;
    }
    return ptr;
}

static void pool_free(struct ibv_pd *p, void *pd_context, void *ptr,
                      uint64_t type)
{
    struct pool *pl = pd_context;
    int i;

    (void)p;
    (void)type;
    pl->frees++;
    for (i = 0; i < pl->nlive; i++) {
        if (pl->live[i] == ptr) {
            pl->live[i] = pl->live[--pl->nlive];
            return;
        }
    }
    printf("free of %p, which the pool never gave\n", ptr);
    pl->bad_align++;
}

static struct ibv_pd *make_parent(struct ibv_td *td)
{
    struct ibv_parent_domain_init_attr a = {
        .pd = pd, .td = td,
        .comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |
                     IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT,
        .alloc = pool_alloc, .free = pool_free, .pd_context = &pool,
    };

    return ibv_alloc_parent_domain(ctx, &a);
}

static struct ibv_cq_ex *make_cq(struct ibv_pd *par, int cqe)
{
    struct ibv_cq_init_attr_ex a = {
        .cqe = cqe, .wc_flags = IBV_WC_STANDARD_FLAGS,
        .comp_mask = IBV_CQ_INIT_ATTR_MASK_PD, .parent_domain = par,
    };

    return ibv_create_cq_ex(ctx, &a);
}

/* An RC QP on @par in INIT: with @srq no receive queue of its own. */
static struct ibv_qp *make_pqp(struct ibv_pd *par, struct ibv_cq *cq,
                               struct ibv_srq *srq)
{
    struct ibv_qp_init_attr_ex ia = {
        .send_cq = cq, .recv_cq = cq, .srq = srq, .qp_type = IBV_QPT_RC,
        .cap = { .max_send_wr = 16, .max_recv_wr = srq ? 0 : 16,
                 .max_send_sge = 1, .max_recv_sge = 1 },
        .comp_mask = IBV_QP_INIT_ATTR_PD, .pd = par,
    };
    struct ibv_qp_attr a = {
        .qp_state = IBV_QPS_INIT, .port_num = 1,
        .qp_access_flags = IBV_ACCESS_REMOTE_WRITE,
    };
    struct ibv_qp *qp = ibv_create_qp_ex(ctx, &ia);

    if (qp && ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
                            IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)) {
        ibv_destroy_qp(qp);
        return NULL;
    }
    return qp;
}

/* Does the newest ring of @type hold anything but zeros? */
static int written(int type)
{
    size_t i;

    for (i = 0; pool.last[type] && i < pool.last_size[type]; i++) {
        if (pool.last[type][i]) {
            return 1;
        }
    }
    return 0;
}

/*
 * Traffic through a parent domain with a thread domain: SENDs through an
 * SRQ and RDMA WRITEs, every byte compared.  0 if all of it arrived.
 */
static int traffic(struct ibv_pd *par, struct ibv_cq_ex *cqx,
                   struct ibv_srq *srq, struct ibv_qp *qa, struct ibv_qp *qb)
{
    struct ibv_cq *cq = ibv_cq_ex_to_cq(cqx);
    struct ibv_mr *wmr;
    struct ibv_wc wc;
    int i, bad = 0;

    /* the MR on the parent domain: the protection domain's */
    wmr = ibv_reg_mr(par, buf, BUF, IBV_ACCESS_LOCAL_WRITE |
                     IBV_ACCESS_REMOTE_WRITE);
    if (!wmr) {
        printf("ibv_reg_mr on the parent domain: %s\n", strerror(errno));
        return 1;
    }
    for (i = 0; i < 8; i++) {
        struct ibv_sge sge = { .addr = (uintptr_t)buf + 4096 + i * 256,
                               .length = 256, .lkey = wmr->lkey };
        struct ibv_recv_wr wr = { .wr_id = 100 + i, .sg_list = &sge,
                                  .num_sge = 1 }, *badr;

        if (ibv_post_srq_recv(srq, &wr, &badr)) {
            printf("ibv_post_srq_recv: %s\n", strerror(errno));
            bad = 1;
        }
    }
    for (i = 0; i < 8 && !bad; i++) {
        struct ibv_sge sge = { .addr = (uintptr_t)buf + i * 256,
                               .length = 256, .lkey = wmr->lkey };
        struct ibv_send_wr wr = { .wr_id = i, .sg_list = &sge,
                                  .num_sge = 1, .opcode = IBV_WR_SEND,
                                  .send_flags = IBV_SEND_SIGNALED }, *bads;

        memset(buf + i * 256, 0x30 + i, 256);
        if (ibv_post_send(i & 1 ? qb : qa, &wr, &bads)) {
            printf("ibv_post_send: %s\n", strerror(errno));
            bad = 1;
        }
    }
    for (i = 0; i < 16 && !bad; i++) {
        if (poll1(cq, &wc) != 1 || wc.status != IBV_WC_SUCCESS) {
            printf("completion %d: %s\n", i,
                   ibv_wc_status_str(wc.status));
            bad = 1;
        }
    }
    /* each message landed whole in one receive buffer */
    for (i = 0; i < 8 && !bad; i++) {
        uint8_t *r = buf + 4096 + i * 256;
        int j;

        for (j = 1; j < 256; j++) {
            if (r[j] != r[0]) {
                break;
            }
        }
        if (j < 256 || r[0] < 0x30 || r[0] > 0x37) {
            printf("receive buffer %d holds no whole message\n", i);
            bad = 1;
        }
    }
    if (!bad) {
        struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = 2048,
                               .lkey = wmr->lkey };
        struct ibv_send_wr wr = {
            .wr_id = 50, .sg_list = &sge, .num_sge = 1,
            .opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
            .wr.rdma = { .remote_addr = (uintptr_t)buf + 6144,
                         .rkey = wmr->rkey },
        }, *bads;

        for (i = 0; i < 2048; i++) {
            buf[i] = (uint8_t)(i * 7 + 3);
        }
        if (ibv_post_send(qa, &wr, &bads) || poll1(cq, &wc) != 1 ||
            wc.status != IBV_WC_SUCCESS || memcmp(buf, buf + 6144, 2048)) {
            printf("RDMA WRITE through the parent domain failed\n");
            bad = 1;
        }
    }
    ibv_dereg_mr(wmr);
    return bad;
}

/*
 * A CQ, an SRQ and two QPs on it made through @par (with @pooled, the
 * pool's allocator in the mode pool.mode says), traffic, a CQ resize, then
 * all of it destroyed.
 */
static void rings(struct ibv_pd *par, int pooled, const char *tag)
{
    struct ibv_srq_init_attr sa = { .attr = { .max_wr = 16, .max_sge = 1 } };
    struct ibv_cq_ex *cqx = make_cq(par, 32);
    struct ibv_srq *srq = NULL;
    struct ibv_qp *qa = NULL, *qb = NULL;
    char what[160];
    int ok;

    if (cqx) {
        srq = ibv_create_srq(par, &sa);
    }
    if (srq) {
        qa = make_pqp(par, ibv_cq_ex_to_cq(cqx), srq);
        qb = make_pqp(par, ibv_cq_ex_to_cq(cqx), srq);
    }
    ok = cqx && srq && qa && qb;
    snprintf(what, sizeof(what), "%s: CQ, SRQ and two QPs on the parent domain",
             tag);
    check(ok, what);
    if (!ok) {
        printf("errno %d (%s)\n", errno, strerror(errno));
    }
    if (ok) {
        connect_qp(qa, qb->qp_num);
        connect_qp(qb, qa->qp_num);
        snprintf(what, sizeof(what),
                 "%s: SEND through the SRQ and RDMA WRITE, bytes compared",
                 tag);
        check(!traffic(par, cqx, srq, qa, qb), what);
        if (pooled && pool.mode == 0) {
            check(written(1) && written(3) && written(4),
                  "the WQEs and the device's CQEs are in the pool's rings");
        }
    }
    if (pooled && pool.mode == 0) {
        int before = pool.allocs, fb = pool.frees;

        check(ok && ibv_resize_cq(ibv_cq_ex_to_cq(cqx), 200) == 0 &&
              pool.allocs == before + 1 && pool.frees == fb + 1,
              "ibv_resize_cq: a new ring from the allocator, the old one "
              "given back");
    }
    if (qa) {
        ibv_destroy_qp(qa);
    }
    if (qb) {
        ibv_destroy_qp(qb);
    }
    if (srq) {
        ibv_destroy_srq(srq);
    }
    if (cqx) {
        ibv_destroy_cq(ibv_cq_ex_to_cq(cqx));
    }
}

/*
 * A parent domain with the pool's allocator, a CQ, a QP (send and receive
 * rings) and an SRQ through it: ibv_dealloc_pd refuses it with EBUSY as
 * long as any of them is left, and succeeds after; each of the four rings
 * went back through pool_free.
 */
static void busy_parent(void)
{
    struct ibv_srq_init_attr sa = { .attr = { .max_wr = 16, .max_sge = 1 } };
    int a0 = pool.allocs, f0 = pool.frees, busy[3], r;
    struct ibv_pd *bpd = make_parent(NULL);
    struct ibv_cq_ex *cqx = bpd ? make_cq(bpd, 8) : NULL;
    struct ibv_qp *qp = cqx ? make_pqp(bpd, ibv_cq_ex_to_cq(cqx), NULL) :
                        NULL;
    struct ibv_srq *srq = qp ? ibv_create_srq(bpd, &sa) : NULL;

    check(srq && pool.allocs == a0 + 4,
          "a parent domain with the allocator: a CQ, a QP and an SRQ "
          "through it, 4 rings from the pool");
    if (!srq) {
        printf("errno %d (%s)\n", errno, strerror(errno));
        return;
    }
    busy[0] = ibv_dealloc_pd(bpd);
    ibv_destroy_qp(qp);
    busy[1] = ibv_dealloc_pd(bpd);
    ibv_destroy_srq(srq);
    busy[2] = ibv_dealloc_pd(bpd);
    printf("ibv_dealloc_pd with CQ, QP and SRQ: %d, CQ and SRQ: %d, CQ: %d\n",
           busy[0], busy[1], busy[2]);
    check(busy[0] == EBUSY,
          "ibv_dealloc_pd of a parent domain with a CQ, a QP and an SRQ on "
          "it: EBUSY");
    check(busy[1] == EBUSY && busy[2] == EBUSY,
          "... still EBUSY with the CQ and the SRQ left, and with the CQ "
          "alone");
    ibv_destroy_cq(ibv_cq_ex_to_cq(cqx));
    r = ibv_dealloc_pd(bpd);
    check(r == 0, "ibv_dealloc_pd once the last of them is destroyed");
    printf("pool: %d allocs, %d frees since, %d live\n", pool.allocs - a0,
           pool.frees - f0, pool.nlive);
    check(pool.frees == f0 + 4 && pool.nlive == 0,
          "the free callback ran for each of the 4 rings");
}

/* 1: the pool gives every ring */
static void pool_gives_rings(struct ibv_pd *par)
{
    pool.mode = 0;
    rings(par, 1, "pool allocator");
    check(pool.by_type[1] == 2 && pool.by_type[2] == 0 &&
          pool.by_type[3] == 1 && pool.by_type[4] == 2,
          "allocator called for 2 send queues, 1 SRQ, 2 CQ rings (create, "
          "resize), no receive queue (the QPs use the SRQ)");
    printf("allocs %d frees %d live %d by type sq %d rq %d srq %d cq %d, "
           "type base %#llx\n", pool.allocs, pool.frees, pool.nlive,
           pool.by_type[1], pool.by_type[2], pool.by_type[3],
           pool.by_type[4], (unsigned long long)pool.type_base);
    check(pool.allocs == pool.frees && pool.nlive == 0 && !pool.bad_align,
          "every ring given back to the allocator, page-aligned requests");
}

/* a QP with its own receive queue: the RQ ring from the pool too */
static void pool_gives_rq_ring(struct ibv_pd *par)
{
    struct ibv_cq_ex *cqx = make_cq(par, 8);
    struct ibv_qp *qp = cqx ? make_pqp(par, ibv_cq_ex_to_cq(cqx), NULL) :
                        NULL;
    int live = pool.nlive;

    check(qp && pool.by_type[2] == 1 && live == 3,
          "a QP without an SRQ: send and receive rings and the CQ's "
          "from the pool");
    if (qp) {
        ibv_destroy_qp(qp);
    }
    if (cqx) {
        ibv_destroy_cq(ibv_cq_ex_to_cq(cqx));
    }
    check(pool.nlive == 0, "... and all three given back");
}

/* 2: the allocator answers "use your own" */
static void allocator_use_default(struct ibv_pd *par)
{
    int fb;

    pool.mode = 1;
    fb = pool.frees;
    rings(par, 1, "IBV_ALLOCATOR_USE_DEFAULT");
    check(pool.frees == fb && pool.nlive == 0,
          "IBV_ALLOCATOR_USE_DEFAULT: the provider's memory, free never "
          "called");
}

/* 3: NULL, and memory off a page boundary */
static void allocator_failures(struct ibv_pd *par)
{
    struct ibv_cq_ex *cqx;

    pool.mode = 2;
    errno = 0;
    cqx = make_cq(par, 8);
    check(!cqx && errno == ENOMEM, "an allocator that returns NULL: "
          "ibv_create_cq_ex fails with ENOMEM");
    if (cqx) {
        ibv_destroy_cq(ibv_cq_ex_to_cq(cqx));
    }
    pool.mode = 3;
    errno = 0;
    cqx = make_cq(par, 8);
    check(!cqx && errno == EINVAL && pool.nlive == 0,
          "memory off a page boundary: EINVAL, and it is given back");
    if (cqx) {
        ibv_destroy_cq(ibv_cq_ex_to_cq(cqx));
    }
    pool.mode = 0;
}

/* 4: what must be refused */
static void refusals(struct ibv_pd *par)
{
    struct ibv_parent_domain_init_attr a = { .pd = par };
    struct ibv_cq_init_attr_ex ca = {
        .cqe = 8, .wc_flags = IBV_WC_STANDARD_FLAGS,
        .comp_mask = IBV_CQ_INIT_ATTR_MASK_PD, .parent_domain = pd,
    };
    struct ibv_td_init_attr tda = { .comp_mask = 1 };
    struct ibv_cq_ex *cqx;
    struct ibv_pd *par2;

    errno = 0;
    par2 = ibv_alloc_parent_domain(ctx, &a);
    check(!par2 && errno == EINVAL,
          "a parent domain over a parent domain: EINVAL");
    a.pd = pd;
    a.comp_mask = 1u << 7;
    errno = 0;
    par2 = ibv_alloc_parent_domain(ctx, &a);
    check(!par2 && errno == EOPNOTSUPP,
          "an unknown comp_mask bit: EOPNOTSUPP");
    errno = 0;
    cqx = ibv_create_cq_ex(ctx, &ca);
    check(!cqx && errno == EINVAL,
          "a CQ whose domain is a plain PD: EINVAL");
    if (cqx) {
        ibv_destroy_cq(ibv_cq_ex_to_cq(cqx));
    }
    errno = 0;
    check(!ibv_alloc_td(ctx, &tda) && errno == EOPNOTSUPP,
          "ibv_alloc_td with an unknown comp_mask bit: EOPNOTSUPP");
}

/* a parent domain without allocator or TD: plain rings, with locks; it,
 * or NULL */
static struct ibv_pd *plain_parent(void)
{
    struct ibv_parent_domain_init_attr a = { .pd = pd };
    struct ibv_pd *par2;

    par2 = ibv_alloc_parent_domain(ctx, &a);
    check(par2 != NULL, "a parent domain with neither TD nor allocator");
    if (par2) {
        int ab = pool.allocs;

        rings(par2, 0, "no allocator");
        check(pool.allocs == ab, "... the pool never asked");
    }
    return par2;
}

/* 5: a PD or TD a parent domain names stays until the parent goes */
static void release_domains(struct ibv_pd *par, struct ibv_pd *par2,
                            struct ibv_td *td)
{
    if (ibv_dereg_mr(mr)) {
        die("ibv_dereg_mr");
    }
    check(ibv_dealloc_pd(pd) == EBUSY,
          "ibv_dealloc_pd of a PD that parent domains name: EBUSY");
    check(ibv_dealloc_td(td) == EBUSY,
          "ibv_dealloc_td of a TD that a parent domain names: EBUSY");
    check(ibv_dealloc_pd(par) == 0 && (!par2 || ibv_dealloc_pd(par2) == 0),
          "the parent domains deallocated");
    check(ibv_dealloc_td(td) == 0 && ibv_dealloc_pd(pd) == 0,
          "then the TD and the PD");
}

int main(int argc, char **argv)
{
    const char *dev = "qroce_0";
    struct ibv_td_init_attr tda = {};
    struct ibv_td *td;
    struct ibv_pd *par, *par2;
    int c;

    while ((c = getopt(argc, argv, "d:g:")) != -1) {
        if (!qr_common_opt(c, &dev)) {
            fprintf(stderr, "usage: qroce-pd [-d DEV] [-g GID_INDEX]\n");
            return 2;
        }
    }
    open_dev(dev);
    pool.base = mmap(NULL, POOL, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (pool.base == MAP_FAILED) {
        die("mmap");
    }

    td = ibv_alloc_td(ctx, &tda);
    check(td != NULL, "ibv_alloc_td");
    par = make_parent(td);
    check(par != NULL, "ibv_alloc_parent_domain with a TD and allocators");
    if (!td || !par) {
        return 1;
    }
    pool_gives_rings(par);
    pool_gives_rq_ring(par);
    allocator_use_default(par);
    allocator_failures(par);
    refusals(par);
    par2 = plain_parent();
    /* a parent domain stays while what was made through it does */
    busy_parent();
    release_domains(par, par2, td);
    ibv_close_device(ctx);
    return failed;
}
