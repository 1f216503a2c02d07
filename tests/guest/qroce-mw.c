/*
 * qroce-mw: memory windows of type 1 and 2, as the device enforces them.
 *
 *   qroce-mw [-d DEVICE] [-g GID_INDEX]
 *
 * A target buffer T is registered with MW_BIND and local write only: no
 * remote access through its own key.  RC pairs looped back through the
 * device (a sends to b; a fresh pair after each refused access, which puts
 * a QP in error) write into T through windows:
 *  - type 1 (ibv_bind_mw on b): a write inside the window lands, one past
 *    its end is refused with a remote access error and T is unchanged; a
 *    second bind gives a new rkey and the old one is refused;
 *  - type 2 (IBV_WR_BIND_MW on b): a write lands; after b's LOCAL_INV it
 *    is refused; bound again, a SEND with Invalidate from a unbinds it
 *    (b's receive completion names the rkey) and the next write is
 *    refused; a write from a QP it is not bound to is refused;
 *  - the same through ibv_wr_bind_mw and ibv_wr_local_inv;
 *  - a bind over an MR without MW_BIND fails with MW_BIND_ERR;
 *  - T cannot be deregistered while a window is bound to it (EBUSY), and
 *    can after ibv_dealloc_mw.
 * Prints PASS/FAIL lines; exits 1 if a check failed, 2 on a set-up error.
 */
#include <getopt.h>
#include "qr_verbs.h"

#define SZ 8192

static uint8_t *tbuf;
static struct ibv_mr *tmr;

/* RDMA WRITE @len bytes of @fill from @p's a to @raddr through @rkey. */
static enum ibv_wc_status write_to(struct pair *p, uint64_t raddr,
                                   uint32_t rkey, uint8_t fill, uint32_t len)
{
    struct ibv_sge sge = { (uintptr_t)buf, len, mr->lkey };
    struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
                              .opcode = IBV_WR_RDMA_WRITE,
                              .send_flags = IBV_SEND_SIGNALED };

    memset(buf, fill, len);
    wr.wr.rdma.remote_addr = raddr;
    wr.wr.rdma.rkey = rkey;
    return run_wr(p->a, p->cq, &wr, NULL);
}

/* Are @len bytes of T at @off all @v? */
static int t_is(size_t off, uint8_t v, size_t len)
{
    size_t i;

    for (i = 0; i < len; i++) {
        if (tbuf[off + i] != v) {
            return 0;
        }
    }
    return 1;
}

/* A type 2 bind of @mw on @qp over T[@off, +@len): the status. */
static enum ibv_wc_status bind2(struct pair *p, struct ibv_mw *mw,
                                struct ibv_mr *m, size_t off, size_t len,
                                struct ibv_wc *wc)
{
    struct ibv_send_wr wr = { .wr_id = 2, .opcode = IBV_WR_BIND_MW,
                              .send_flags = IBV_SEND_SIGNALED };

    wr.bind_mw.mw = mw;
    wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
    wr.bind_mw.bind_info = (struct ibv_mw_bind_info){
        m, (uintptr_t)tbuf + off, len, IBV_ACCESS_REMOTE_WRITE };
    return run_wr(p->b, p->cq, &wr, wc);
}

/*
 * Post SEND with Invalidate @wr on @p's a: true if it completed and b's
 * receive completed too (in *@rwc), in whichever order they come.
 */
static int send_inv(struct pair *p, struct ibv_send_wr *wr,
                    struct ibv_wc *rwc)
{
    struct ibv_send_wr *bad;
    struct ibv_wc wc[2];
    int i, sent = 0, got = 0;

    if (ibv_post_send(p->a, wr, &bad)) {
        return 0;
    }
    for (i = 0; i < 2; i++) {
        if (!poll1(p->cq, &wc[i])) {
            return 0;
        }
        if (wc[i].opcode == IBV_WC_RECV) {
            *rwc = wc[i];
            got = 1;
        } else {
            sent = wc[i].status == IBV_WC_SUCCESS && wc[i].wr_id == wr->wr_id;
        }
    }
    return sent && got;
}

static void type1(struct ibv_mw *mw)
{
    struct ibv_mw_bind b = { .wr_id = 9, .send_flags = IBV_SEND_SIGNALED,
        .bind_info = { tmr, (uintptr_t)tbuf + 1024, 2048,
                       IBV_ACCESS_REMOTE_WRITE } };
    uint32_t k0 = mw->rkey, k1;
    struct pair p, q;
    struct ibv_wc wc = {};

    make_pair(&p);
    check(!ibv_bind_mw(p.b, mw, &b) && poll1(p.cq, &wc) &&
          wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_BIND_MW &&
          wc.wr_id == 9 && mw->rkey != k0,
          "type 1: ibv_bind_mw completes as IBV_WC_BIND_MW, new rkey");
    k1 = mw->rkey;
    check(write_to(&p, (uintptr_t)tbuf + 1024 + 1536, k1, 0x11, 512) ==
          IBV_WC_SUCCESS && t_is(1024 + 1536, 0x11, 512),
          "type 1: a WRITE inside the window lands");
    check(write_to(&p, (uintptr_t)tbuf + 1024 + 1600, k1, 0x22, 512) ==
          IBV_WC_REM_ACCESS_ERR && t_is(1024 + 1536, 0x11, 512) &&
          t_is(3072, 0, 512),
          "type 1: a WRITE past its end: REM_ACCESS_ERR, T unchanged");
    free_pair(&p);
    make_pair(&q);
    b.bind_info.addr = (uintptr_t)tbuf;
    check(!ibv_bind_mw(q.b, mw, &b) && poll1(q.cq, &wc) &&
          wc.status == IBV_WC_SUCCESS && mw->rkey != k1 &&
          write_to(&q, (uintptr_t)tbuf, mw->rkey, 0x33, 64) ==
          IBV_WC_SUCCESS && t_is(0, 0x33, 64),
          "type 1: bound again by another QP, its new rkey works");
    check(write_to(&q, (uintptr_t)tbuf, k1, 0x44, 64) ==
          IBV_WC_REM_ACCESS_ERR && t_is(0, 0x33, 64),
          "type 1: the rkey of the earlier bind is refused");
    free_pair(&q);
}

static void type2(struct ibv_mw *mw)
{
    struct ibv_send_wr inv = { .wr_id = 3, .opcode = IBV_WR_LOCAL_INV,
                               .send_flags = IBV_SEND_SIGNALED };
    struct ibv_sge sge = { (uintptr_t)buf, 16, mr->lkey };
    struct ibv_send_wr sinv = { .wr_id = 4, .sg_list = &sge, .num_sge = 1,
                                .opcode = IBV_WR_SEND_WITH_INV,
                                .send_flags = IBV_SEND_SIGNALED };
    struct pair p, q, r;
    struct ibv_wc wc = {};
    uint32_t k;

    make_pair(&p);
    check(bind2(&p, mw, tmr, 4096, 1024, &wc) == IBV_WC_SUCCESS &&
          wc.opcode == IBV_WC_BIND_MW,
          "type 2: IBV_WR_BIND_MW completes as IBV_WC_BIND_MW");
    k = mw->rkey;
    check(write_to(&p, (uintptr_t)tbuf + 4096, k, 0x55, 1024) ==
          IBV_WC_SUCCESS && t_is(4096, 0x55, 1024),
          "type 2: a WRITE through it lands");
    inv.invalidate_rkey = k;
    check(run_wr(p.b, p.cq, &inv, &wc) == IBV_WC_SUCCESS &&
          wc.opcode == IBV_WC_LOCAL_INV,
          "type 2: IBV_WR_LOCAL_INV on its QP completes");
    check(write_to(&p, (uintptr_t)tbuf + 4096, k, 0x66, 64) ==
          IBV_WC_REM_ACCESS_ERR && t_is(4096, 0x55, 1024),
          "type 2: after LOCAL_INV a WRITE is refused, T unchanged");
    free_pair(&p);

    make_pair(&q);
    check(bind2(&q, mw, tmr, 4096, 1024, NULL) == IBV_WC_SUCCESS,
          "type 2: bound again after the invalidation");
    k = mw->rkey;
    sinv.invalidate_rkey = k;
    check(!post_recv(q.b, (uintptr_t)buf + 4096, 64, 5) &&
          send_inv(&q, &sinv, &wc) && wc.status == IBV_WC_SUCCESS &&
          (wc.wc_flags & IBV_WC_WITH_INV) && wc.invalidated_rkey == k,
          "type 2: SEND with Invalidate: the receive names the rkey");
    check(write_to(&q, (uintptr_t)tbuf + 4096, k, 0x77, 64) ==
          IBV_WC_REM_ACCESS_ERR && t_is(4096, 0x55, 1024),
          "type 2: after SEND with Invalidate a WRITE is refused");
    free_pair(&q);

    make_pair(&q);
    make_pair(&r);
    check(bind2(&q, mw, tmr, 4096, 1024, NULL) == IBV_WC_SUCCESS &&
          write_to(&r, (uintptr_t)tbuf + 4096, mw->rkey, 0x88, 64) ==
          IBV_WC_REM_ACCESS_ERR && t_is(4096, 0x55, 1024),
          "type 2: a QP it is not bound to may not use it");
    free_pair(&r);
    free_pair(&q);
}

/* An RC QP made with ibv_create_qp_ex for the ibv_wr_* API, in INIT. */
static struct ibv_qp *make_qp_ex(struct ibv_cq *cq)
{
    struct ibv_qp_init_attr_ex ia = {
        .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC, .pd = pd,
        .cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1,
                 .max_recv_sge = 1 },
        .comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
        .send_ops_flags = IBV_QP_EX_WITH_BIND_MW |
                          IBV_QP_EX_WITH_LOCAL_INV |
                          IBV_QP_EX_WITH_RDMA_WRITE,
    };
    struct ibv_qp_attr a = {
        .qp_state = IBV_QPS_INIT, .port_num = 1,
        .qp_access_flags = IBV_ACCESS_REMOTE_WRITE,
    };
    struct ibv_qp *qp = ibv_create_qp_ex(ctx, &ia);

    if (!qp || ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
                             IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)) {
        die("ibv_create_qp_ex");
    }
    return qp;
}

/*
 * The same for a type 2 window through the ibv_wr_* API: ibv_wr_bind_mw
 * and ibv_wr_local_inv on b, WRITEs from a.
 */
static void wr_api(struct ibv_mw *mw)
{
    struct ibv_mw_bind_info info = { tmr, (uintptr_t)tbuf + 6144, 512,
                                     IBV_ACCESS_REMOTE_WRITE };
    struct ibv_qp_ex *bx;
    struct pair p;
    struct ibv_wc wc = {};
    uint32_t k = ibv_inc_rkey(mw->rkey);
    int ok;

    p.cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
    if (!p.cq) {
        die("ibv_create_cq");
    }
    p.a = make_qp_ex(p.cq);
    p.b = make_qp_ex(p.cq);
    connect_qp(p.a, p.b->qp_num);
    connect_qp(p.b, p.a->qp_num);
    bx = ibv_qp_to_qp_ex(p.b);
    ibv_wr_start(bx);
    bx->wr_id = 21;
    bx->wr_flags = IBV_SEND_SIGNALED;
    ibv_wr_bind_mw(bx, mw, k, &info);
    ok = !ibv_wr_complete(bx) && poll1(p.cq, &wc) &&
         wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_BIND_MW &&
         wc.wr_id == 21 && mw->rkey == k;
    check(ok && write_to(&p, (uintptr_t)tbuf + 6144, k, 0x99, 512) ==
          IBV_WC_SUCCESS && t_is(6144, 0x99, 512),
          "ibv_wr_bind_mw: bound, a WRITE through it lands");
    ibv_wr_start(bx);
    bx->wr_id = 22;
    bx->wr_flags = IBV_SEND_SIGNALED;
    ibv_wr_local_inv(bx, k);
    check(!ibv_wr_complete(bx) && poll1(p.cq, &wc) &&
          wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_LOCAL_INV &&
          write_to(&p, (uintptr_t)tbuf + 6144, k, 0xaa, 8) ==
          IBV_WC_REM_ACCESS_ERR && t_is(6144, 0x99, 512),
          "ibv_wr_local_inv: unbound, the next WRITE is refused");
    free_pair(&p);
}

int main(int argc, char **argv)
{
    const char *dev = "qroce_0";
    struct ibv_device_attr_ex attr = {};
    struct ibv_mw *mw1, *mw2, *mw3, *mw4;
    struct pair p;
    int c;

    while ((c = getopt(argc, argv, "d:g:")) != -1) {
        if (c == 'd') {
            dev = optarg;
        } else if (c == 'g') {
            gid_index = atoi(optarg);
        } else {
            fprintf(stderr, "usage: qroce-mw [-d DEVICE] [-g GID_INDEX]\n");
            return 2;
        }
    }
    open_dev(dev);
    qp_access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
    tbuf = calloc(1, SZ);
    tmr = tbuf ? ibv_reg_mr(pd, tbuf, SZ, IBV_ACCESS_LOCAL_WRITE |
                            IBV_ACCESS_MW_BIND) : NULL;
    if (!tmr) {
        die("ibv_reg_mr (MW_BIND)");
    }
    check(!ibv_query_device_ex(ctx, NULL, &attr) &&
          (attr.orig_attr.device_cap_flags & IBV_DEVICE_MEM_WINDOW) &&
          (attr.orig_attr.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B) &&
          attr.orig_attr.max_mw > 0,
          "ibv_query_device: MEM_WINDOW, MEM_WINDOW_TYPE_2B, max_mw");
    mw1 = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
    mw2 = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
    mw3 = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
    mw4 = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
    if (!mw1 || !mw2 || !mw3 || !mw4) {
        die("ibv_alloc_mw");
    }
    type1(mw1);
    type2(mw2);
    wr_api(mw4);

    make_pair(&p);
    check(bind2(&p, mw3, mr, 0, 64, NULL) == IBV_WC_MW_BIND_ERR,
          "a bind over an MR without MW_BIND: IBV_WC_MW_BIND_ERR");
    free_pair(&p);
    errno = 0;
    check(ibv_dereg_mr(tmr) == EBUSY,
          "ibv_dereg_mr with a window bound: EBUSY");
    check(!ibv_dealloc_mw(mw1) && !ibv_dealloc_mw(mw2) &&
          !ibv_dealloc_mw(mw3) && !ibv_dealloc_mw(mw4) &&
          !ibv_dereg_mr(tmr),
          "ibv_dealloc_mw, then ibv_dereg_mr succeeds");
    return failed;
}
