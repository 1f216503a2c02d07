/*
 * qtests of qroce: RC through the device: SENDs looped back inside it,
 * completions and events, zero-length RDMA, FLUSH and ATOMIC WRITE
 * (IBTA 1.5) looped back and against a peer on the wire.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "libqtest.h"
#include "libqos/qroce.h"

/*
 * SEND from QP a to QP b on the same device (the frames never leave it):
 * CQEs with the right owner bits and WQE indexes, the payload, the COMP
 * event of an armed CQ only, and a CQ overrun ending in CQ_ERR.
 */
static void test_rc_loopback(QRoce *t)
{
    struct qroce_cqe cqe;
    struct qroce_eqe e;
    uint64_t eq0, eq1, cqa_ring, cqb_ring, buf, sqa, rqb, sq, rq;
    uint32_t pdn, cqa, cqb, a, b, key, i;
    uint8_t pattern[1000], got[1000];

    qroce_enable(t);
    pdn = qroce_alloc_pd(t);
    eq0 = qroce_mk_eq(t, 0);
    eq1 = qroce_mk_eq(t, 1);
    cqa = qroce_mk_cq_ring(t, 1, 1, &cqa_ring);     /* 2 entries */
    cqb = qroce_mk_cq_ring(t, 1, 6, &cqb_ring);
    qroce_set_gid0(t);
    buf = qroce_pages(t, 2);
    key = qroce_mk_mr(t, pdn, buf, 2, QROCE_ACCESS_LOCAL_WRITE);

    g_assert_cmpuint(qroce_mk_qp_rings(t, QROCE_QPT_RC, pdn, cqa, cqa, 0, &a,
                                       &sqa, &rq), ==, 0);
    g_assert_cmpuint(qroce_mk_qp_rings(t, QROCE_QPT_RC, pdn, cqb, cqb, 0, &b,
                                       &sq, &rqb), ==, 0);
    qroce_rc_connect(t, a, b, 100, 200);
    qroce_rc_connect(t, b, a, 200, 100);

    for (i = 0; i < sizeof(pattern); i++) {
        pattern[i] = i * 13 + 1;
    }
    qtest_memwrite(t->qts, buf, pattern, sizeof(pattern));
    for (i = 0; i < 4; i++) {
        qroce_post_recv(t, rqb, i, buf + 4096 + i * 1000, 1000, key);
    }
    qroce_db(t, QROCE_DB_RQ, b, 4);
    /* arm B's CQ, not A's */
    qroce_db(t, QROCE_DB_CQ_ARM, cqb, QROCE_CQ_ARM_NEXT | 0);

    qroce_post_send(t, sqa, 0, buf, 1000, key, QROCE_WQE_SIGNALED);
    qroce_db(t, QROCE_DB_SQ, a, 1);
    qroce_wait_entry(t, cqb_ring, sizeof(cqe), 6, 0, &cqe);
    g_assert_cmpuint(cqe.status, ==, QROCE_WC_SUCCESS);
    g_assert_cmpuint(cqe.opcode, ==, QROCE_CQE_RECV);
    g_assert_cmpuint(le32_to_cpu(cqe.qpn), ==, b);
    g_assert_cmpuint(le32_to_cpu(cqe.wqe_index), ==, 0);
    g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, 1000);
    qtest_memread(t->qts, buf + 4096, got, sizeof(got));
    g_assert_true(!memcmp(got, pattern, sizeof(got)));
    qroce_wait_entry(t, cqa_ring, sizeof(cqe), 1, 0, &cqe);
    g_assert_cmpuint(cqe.status, ==, QROCE_WC_SUCCESS);
    g_assert_cmpuint(cqe.opcode, ==, QROCE_CQE_SEND);
    g_assert_cmpuint(le32_to_cpu(cqe.qpn), ==, a);
    g_assert_cmpuint(le32_to_cpu(cqe.wqe_index), ==, 0);
    /* one COMP event, for B's CQ; the CQ is disarmed after it */
    qroce_wait_entry(t, eq1, sizeof(e), 8, 0, &e);
    g_assert_cmpuint(e.type, ==, QROCE_EQE_COMP);
    g_assert_cmpuint(le32_to_cpu(e.handle), ==, cqb);
    g_assert_false(qroce_entry_ready(t, eq1, sizeof(e), 8, 1));

    /*
     * A's CQ holds 2 and its consumer index (the record after the ring)
     * stays 0: the second CQE fits, the third is an overrun -> CQ_ERR.
     */
    qroce_post_send(t, sqa, 1, buf, 10, key, QROCE_WQE_SIGNALED);
    qroce_post_send(t, sqa, 2, buf, 10, key, QROCE_WQE_SIGNALED);
    qroce_db(t, QROCE_DB_SQ, a, 3);
    qroce_wait_entry(t, cqb_ring, sizeof(cqe), 6, 2, &cqe);
    qroce_wait_entry(t, cqa_ring, sizeof(cqe), 1, 1, &cqe);
    g_assert_cmpuint(le32_to_cpu(cqe.wqe_index), ==, 1);
    qroce_wait_entry(t, eq0, sizeof(e), 8, 0, &e);
    g_assert_cmpuint(e.type, ==, QROCE_EQE_CQ_ERR);
    g_assert_cmpuint(le32_to_cpu(e.handle), ==, cqa);
    /* slot 0 of A's CQ still holds the first CQE (owner of round 0) */
    qtest_memread(t->qts, cqa_ring, &cqe, sizeof(cqe));
    g_assert_cmpuint(le32_to_cpu(cqe.wqe_index), ==, 0);
    g_assert_false(qroce_entry_ready(t, eq1, sizeof(e), 8, 1));
    g_assert_cmpuint(qroce_cnt(t, QROCE_CNT_ROCE_TX_PKTS), >=, 3);
}

/*
 * An RDMA WRITE and a READ of 0 bytes with rkey 0 and address 0 complete
 * successfully (IBA C9-88: no rkey check without data), as ib_srpt's
 * zero-length WRITE needs; one byte to the same rkey is a remote access
 * error.
 */
static void test_zero_length_rdma(QRoce *t)
{
    QRoceEnv e;
    QRoceQP a, b;

    qroce_env_setup(&e, t);
    qroce_env_pair(&e, &a, &b, 1);
    qroce_env_put_rdma(&e, &a, QROCE_WR_RDMA_WRITE, 0, 0, e.buf, 0);
    qroce_env_ring(&e, &a);
    qroce_env_cqe(&e, &a, QROCE_CQE_RDMA_WRITE, QROCE_WC_SUCCESS, NULL);
    qroce_env_put_rdma(&e, &a, QROCE_WR_RDMA_READ, 0, 0, e.buf, 0);
    qroce_env_ring(&e, &a);
    qroce_env_cqe(&e, &a, QROCE_CQE_RDMA_READ, QROCE_WC_SUCCESS, NULL);
    g_assert_cmpuint(qroce_qp_state(e.t, b.qpn), ==, QROCE_QPS_RTS);
    qroce_env_put_rdma(&e, &a, QROCE_WR_RDMA_WRITE, 0, 0, e.buf, 1);
    qroce_env_ring(&e, &a);
    qroce_env_cqe(&e, &a, 0, QROCE_WC_REM_ACCESS_ERR, NULL);
}

#define FR_LW QROCE_ACCESS_LOCAL_WRITE
#define FR_RW QROCE_ACCESS_REMOTE_WRITE
#define FR_RR QROCE_ACCESS_REMOTE_READ
#define FR_FL QROCE_ACCESS_FLUSH_GLOBAL

/* An ATOMIC WRITE of the 8 bytes at @v. */
static void fa_put_aw(QRoceEnv *e, QRoceQP *q, uint64_t raddr, uint32_t rkey,
                      const uint8_t v[8])
{
    struct qroce_send_wqe h = { .opcode = QROCE_WR_ATOMIC_WRITE,
                                .flags = QROCE_WQE_SIGNALED };

    h.rdma.remote_addr = cpu_to_le64(raddr);
    h.rdma.rkey = cpu_to_le32(rkey);
    memcpy(&h.rdma.compare_add, v, 8);
    qroce_env_put(e, q, &h, 0, 0, 0);
}

/* A FLUSH of @type (placement) at @level. */
static void fa_put_flush(QRoceEnv *e, QRoceQP *q, uint64_t raddr, uint32_t rkey,
                         uint32_t len, uint8_t type, uint8_t level)
{
    struct qroce_send_wqe h = { .opcode = QROCE_WR_FLUSH,
                                .flags = QROCE_WQE_SIGNALED };

    h.flush.remote_addr = cpu_to_le64(raddr);
    h.flush.rkey = cpu_to_le32(rkey);
    h.flush.length = cpu_to_le32(len);
    h.flush.type = type;
    h.flush.level = level;
    qroce_env_put(e, q, &h, 0, 0, 0);
}

/* The 8 bytes at @a are @v (and the 8 bytes either side are @around). */
static void fa_check8(QRoceEnv *e, uint64_t a, const uint8_t v[8],
                      uint8_t around)
{
    uint8_t got[24], side[8];

    qtest_memread(e->t->qts, a - 8, got, sizeof(got));
    memset(side, around, 8);
    g_assert_true(!memcmp(got + 8, v, 8));
    g_assert_true(!memcmp(got, side, 8));
    g_assert_true(!memcmp(got + 16, side, 8));
}

/* What test_flush_atomic_write() flushes and writes to. */
typedef struct FaTarget {
    uint64_t tgt;       /* two pages, every access and ACCESS_FLUSH_GLOBAL */
    uint64_t nofl;      /* one page of 0x77 */
    uint32_t tkey;
    uint32_t nkey;      /* nofl without ACCESS_FLUSH_GLOBAL */
    uint32_t rokey;     /* nofl with remote read and flush only */
} FaTarget;

static const uint8_t fa_v1[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
static const uint8_t fa_v2[8] = { 0xf0, 0xe1, 0xd2, 0xc3,
                                  0xb4, 0xa5, 0x96, 0x87 };

/* WRITE, FLUSH, ATOMIC_WRITE and a READ back posted at once: in order. */
static void fa_in_order(QRoceEnv *e, QRoceQP *a, QRoceQP *b,
                        const FaTarget *f)
{
    struct qroce_cqe cqe;
    uint64_t tgt = f->tgt;
    uint32_t tkey = f->tkey;
    uint8_t pat[100], got[100];
    unsigned i;

    for (i = 0; i < sizeof(pat); i++) {
        pat[i] = i * 13 + 1;
    }
    qtest_memwrite(e->t->qts, e->buf, pat, sizeof(pat));
    qroce_env_put_rdma(e, a, QROCE_WR_RDMA_WRITE, tgt + 4096, tkey, e->buf,
                       sizeof(pat));
    fa_put_flush(e, a, tgt + 4096, tkey, sizeof(pat), QROCE_FLUSH_GLOBAL,
                 QROCE_FLUSH_RANGE);
    fa_put_aw(e, a, tgt + 4096 + 16, tkey, fa_v2);
    qroce_env_put_rdma(e, a, QROCE_WR_RDMA_READ, tgt + 4096, tkey,
                       e->buf + 8192, sizeof(pat));
    qroce_env_ring(e, a);
    qroce_env_cqe(e, a, QROCE_CQE_RDMA_WRITE, QROCE_WC_SUCCESS, NULL);
    qroce_env_cqe(e, a, QROCE_CQE_FLUSH, QROCE_WC_SUCCESS, NULL);
    qroce_env_cqe(e, a, QROCE_CQE_ATOMIC_WRITE, QROCE_WC_SUCCESS, NULL);
    qroce_env_cqe(e, a, QROCE_CQE_RDMA_READ, QROCE_WC_SUCCESS, &cqe);
    g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, sizeof(pat));
    memcpy(pat + 16, fa_v2, 8);
    qtest_memread(e->t->qts, e->buf + 8192, got, sizeof(got));
    g_assert_true(!memcmp(got, pat, sizeof(pat)));
    qtest_memread(e->t->qts, tgt + 4096, got, sizeof(got));
    g_assert_true(!memcmp(got, pat, sizeof(pat)));
    g_assert_cmpuint(qroce_qp_state(e->t, a->qpn), ==, QROCE_QPS_RTS);
    g_assert_cmpuint(qroce_qp_state(e->t, b->qpn), ==, QROCE_QPS_RTS);
}

/*
 * FLUSH without the right, out of range, of another placement type;
 * ATOMIC_WRITE misaligned or without remote write: the errors, and the
 * targets unchanged.
 */
static void fa_errors(QRoceEnv *e, const FaTarget *f)
{
    QRoceQP a, b;
    uint64_t tgt = f->tgt, nofl = f->nofl;
    uint32_t tkey = f->tkey, nkey = f->nkey, rokey = f->rokey;
    uint8_t got[24];
    unsigned i;

    /* an MR without ACCESS_FLUSH_GLOBAL, at either level */
    qroce_env_pair(e, &a, &b, 1);
    fa_put_flush(e, &a, nofl, nkey, 64, QROCE_FLUSH_GLOBAL,
                 QROCE_FLUSH_RANGE);
    qroce_env_expect_err(e, &a, QROCE_WC_REM_ACCESS_ERR);
    qroce_env_pair(e, &a, &b, 1);
    fa_put_flush(e, &a, 0, nkey, 0, QROCE_FLUSH_GLOBAL, QROCE_FLUSH_MR);
    qroce_env_expect_err(e, &a, QROCE_WC_REM_ACCESS_ERR);
    /* a range past the end of the MR */
    qroce_env_pair(e, &a, &b, 1);
    fa_put_flush(e, &a, tgt + 4096, tkey, 4097, QROCE_FLUSH_GLOBAL,
                 QROCE_FLUSH_RANGE);
    qroce_env_expect_err(e, &a, QROCE_WC_REM_ACCESS_ERR);
    /*
     * persistent placement (alone or with global): no MR has that right,
     * a remote access error; type 0 is an invalid request
     */
    qroce_env_pair(e, &a, &b, 1);
    fa_put_flush(e, &a, tgt, tkey, 8, QROCE_FLUSH_PERSISTENT,
                 QROCE_FLUSH_RANGE);
    qroce_env_expect_err(e, &a, QROCE_WC_REM_ACCESS_ERR);
    qroce_env_pair(e, &a, &b, 1);
    fa_put_flush(e, &a, tgt, tkey, 8,
                 QROCE_FLUSH_GLOBAL | QROCE_FLUSH_PERSISTENT, QROCE_FLUSH_MR);
    qroce_env_expect_err(e, &a, QROCE_WC_REM_ACCESS_ERR);
    qroce_env_pair(e, &a, &b, 1);
    fa_put_flush(e, &a, tgt, tkey, 8, 0, QROCE_FLUSH_MR);
    qroce_env_expect_err(e, &a, QROCE_WC_REM_INV_REQ_ERR);
    g_assert_cmpuint(qroce_qp_state(e->t, b.qpn), ==, QROCE_QPS_ERR);

    /* ATOMIC_WRITE: misaligned, to an MR without remote write */
    qroce_env_pair(e, &a, &b, 1);
    fa_put_aw(e, &a, tgt + 64 + 4, tkey, fa_v2);
    qroce_env_expect_err(e, &a, QROCE_WC_REM_INV_REQ_ERR);
    fa_check8(e, tgt + 64, fa_v1, 0);
    qroce_env_pair(e, &a, &b, 1);
    fa_put_aw(e, &a, nofl + 64, rokey, fa_v2);
    qroce_env_expect_err(e, &a, QROCE_WC_REM_ACCESS_ERR);
    qtest_memread(e->t->qts, nofl + 56, got, 24);
    for (i = 0; i < 24; i++) {
        g_assert_cmphex(got[i], ==, 0x77);
    }
}

/* Neither FLUSH nor ATOMIC_WRITE on UC or UD. */
static void fa_not_uc_ud(QRoceEnv *e, const FaTarget *f)
{
    QRoceQP q;
    uint64_t tgt = f->tgt;
    uint32_t tkey = f->tkey;

    qroce_env_qp(e, QROCE_QPT_UC, e->pdn, &q);
    qroce_uc_connect(e->t, q.qpn, q.qpn);
    fa_put_flush(e, &q, tgt, tkey, 8, QROCE_FLUSH_GLOBAL, QROCE_FLUSH_RANGE);
    qroce_env_expect_err(e, &q, QROCE_WC_LOC_QP_OP_ERR);
    qroce_env_qp(e, QROCE_QPT_UC, e->pdn, &q);
    qroce_uc_connect(e->t, q.qpn, q.qpn);
    fa_put_aw(e, &q, tgt + 64, tkey, fa_v2);
    qroce_env_expect_err(e, &q, QROCE_WC_LOC_QP_OP_ERR);
    qroce_env_qp(e, QROCE_QPT_UD, e->pdn, &q);
    qroce_ud_ready(e->t, q.qpn, QROCE_QPT_UD, 0x11111111);
    fa_put_flush(e, &q, tgt, tkey, 8, QROCE_FLUSH_GLOBAL, QROCE_FLUSH_MR);
    qroce_env_expect_err(e, &q, QROCE_WC_LOC_QP_OP_ERR);
    qroce_env_qp(e, QROCE_QPT_UD, e->pdn, &q);
    qroce_ud_ready(e->t, q.qpn, QROCE_QPT_UD, 0x11111111);
    fa_put_aw(e, &q, tgt + 64, tkey, fa_v2);
    qroce_env_expect_err(e, &q, QROCE_WC_LOC_QP_OP_ERR);
}

/*
 * Through the device (loopback): ATOMIC_WRITE lands its 8 bytes as they
 * are in the WQE; FLUSH of a range and of the whole MR complete with CQE
 * opcode FLUSH; WRITE, FLUSH, ATOMIC_WRITE and a READ of the written
 * bytes posted at once complete in order (max_rd_atomic 1).  Errors: a
 * FLUSH to an MR without ACCESS_FLUSH_GLOBAL or outside the MR is
 * REM_ACCESS_ERR, a persistent FLUSH and a misaligned ATOMIC_WRITE are
 * REM_INV_REQ_ERR, ATOMIC_WRITE to an MR without remote write is
 * REM_ACCESS_ERR; the target is unchanged.  UC and UD refuse both with
 * LOC_QP_OP_ERR.
 */
static void test_flush_atomic_write(QRoce *t)
{
    QRoceEnv e;
    QRoceQP a, b;
    FaTarget f;
    struct qroce_cqe cqe;

    qroce_env_setup(&e, t);
    g_assert_true(qroce_rd(e.t, QROCE_REG_FEATURES) & QROCE_FEAT_FLUSH);
    g_assert_true(qroce_rd(e.t, QROCE_REG_FEATURES) & QROCE_FEAT_ATOMIC_WRITE);
    f.tgt = qroce_pages(e.t, 2);
    f.tkey = qroce_mk_mr(e.t, e.pdn, f.tgt, 2, FR_LW | FR_RW | FR_RR | FR_FL);
    f.nofl = qroce_pages(e.t, 1);
    f.nkey = qroce_mk_mr(e.t, e.pdn, f.nofl, 1, FR_LW | FR_RW | FR_RR);
    f.rokey = qroce_mk_mr(e.t, e.pdn, f.nofl, 1, FR_RR | FR_FL);
    qtest_memset(e.t->qts, f.nofl, 0x77, 4096);
    qroce_env_pair(&e, &a, &b, 1);

    /* ATOMIC_WRITE: the 8 bytes, nothing around them */
    fa_put_aw(&e, &a, f.tgt + 64, f.tkey, fa_v1);
    qroce_env_ring(&e, &a);
    qroce_env_cqe(&e, &a, QROCE_CQE_ATOMIC_WRITE, QROCE_WC_SUCCESS, &cqe);
    g_assert_true(cqe.flags & QROCE_CQE_F_SQ);
    fa_check8(&e, f.tgt + 64, fa_v1, 0);

    /* FLUSH of a range, then of the whole MR (address and length unused) */
    fa_put_flush(&e, &a, f.tgt + 100, f.tkey, 4000, QROCE_FLUSH_GLOBAL,
                 QROCE_FLUSH_RANGE);
    fa_put_flush(&e, &a, 0, f.tkey, 0, QROCE_FLUSH_GLOBAL, QROCE_FLUSH_MR);
    qroce_env_ring(&e, &a);
    qroce_env_cqe(&e, &a, QROCE_CQE_FLUSH, QROCE_WC_SUCCESS, NULL);
    qroce_env_cqe(&e, &a, QROCE_CQE_FLUSH, QROCE_WC_SUCCESS, NULL);

    fa_in_order(&e, &a, &b, &f);
    fa_errors(&e, &f);
    fa_not_uc_ud(&e, &f);
    fa_check8(&e, f.tgt + 64, fa_v1, 0);
}

/* The peer's next frame that is not an ACK nor a CNP. */
static void fa_peer_req(QRocePeer *pr, uint8_t *f, RocePktIn *p)
{
    do {
        qroce_peer_recv(pr, f, p);
    } while (p->opcode == ROCE_ACK || p->opcode == ROCE_CNP);
}

/* The device's answer to the peer's request @psn: a READ response, empty */
static void fa_peer_empty_resp(QRocePeer *pr, uint32_t psn)
{
    uint8_t f[2048];
    RocePktIn p;

    qroce_peer_recv(pr, f, &p);
    g_assert_cmphex(p.opcode, ==, ROCE_READ_RESP_ONLY);
    g_assert_cmpuint(p.psn, ==, psn);
    g_assert_cmpuint(p.paylen, ==, 0);
    g_assert_cmpuint(ROCE_AETH_TYPE(p.aeth_syndrome), ==, 0);
}

/* The value test_flush_atomic_write_wire()'s ATOMIC WRITE carries. */
static const uint8_t fa_wire_v[8] = { 0x10, 0x32, 0x54, 0x76,
                                      0x98, 0xba, 0xdc, 0xfe };

/* Requester: FLUSH (MR level), then ATOMIC WRITE, each as on the wire. */
static void fa_wire_requester(QRoce *t, QRocePeer *pr, uint64_t cq,
                              uint64_t sq, uint32_t qpn)
{
    struct qroce_send_wqe h = { .flags = QROCE_WQE_SIGNALED };
    const uint8_t *v = fa_wire_v;
    struct qroce_cqe cqe;
    RocePktOut o;
    RocePktIn p;
    uint8_t f[2048];
    uint32_t idx = 0;

    h.opcode = QROCE_WR_FLUSH;
    h.flush.remote_addr = cpu_to_le64(0x123456789000ull);
    h.flush.rkey = cpu_to_le32(0xabcd);
    h.flush.length = cpu_to_le32(0x10000);
    h.flush.type = QROCE_FLUSH_GLOBAL;
    h.flush.level = QROCE_FLUSH_MR;
    qtest_memwrite(t->qts, sq, &h, sizeof(h));
    memset(&h, 0, sizeof(h));
    h.opcode = QROCE_WR_ATOMIC_WRITE;
    h.flags = QROCE_WQE_SIGNALED;
    h.rdma.remote_addr = cpu_to_le64(0x2000);
    h.rdma.rkey = cpu_to_le32(0x5678);
    memcpy(&h.rdma.compare_add, v, 8);
    qtest_memwrite(t->qts, sq + 64, &h, sizeof(h));
    qroce_db(t, QROCE_DB_SQ, qpn, 2);
    fa_peer_req(pr, f, &p);
    g_assert_cmphex(p.opcode, ==, ROCE_FLUSH);
    g_assert_cmpuint(p.psn, ==, 2000);
    g_assert_cmphex(p.feth, ==, 0x11);      /* level MR << 4 | GLOBAL */
    g_assert_cmphex(p.reth_va, ==, 0x123456789000ull);
    g_assert_cmphex(p.reth_rkey, ==, 0xabcd);
    g_assert_cmphex(p.reth_len, ==, 0x10000);
    g_assert_cmpuint(p.paylen, ==, 0);
    g_assert_true(p.icrc_ok);
    qroce_peer_out(pr, &o, qpn, 2000, ROCE_READ_RESP_ONLY);
    o.aeth_syndrome = ROCE_AETH_ACK_NO_CREDIT;
    qroce_peer_send(pr, &o, 0, false);
    qroce_next_send_cqe(t, cq, &idx, qpn, &cqe);
    g_assert_cmpuint(cqe.status, ==, QROCE_WC_SUCCESS);
    g_assert_cmphex(cqe.opcode, ==, QROCE_CQE_FLUSH);
    /* max_rd_atomic 1: the ATOMIC WRITE went only now */
    fa_peer_req(pr, f, &p);
    g_assert_cmphex(p.opcode, ==, ROCE_ATOMIC_WRITE);
    g_assert_cmpuint(p.psn, ==, 2001);
    g_assert_cmphex(p.reth_va, ==, 0x2000);
    g_assert_cmphex(p.reth_rkey, ==, 0x5678);
    g_assert_cmpuint(p.reth_len, ==, 8);
    g_assert_cmpuint(p.paylen, ==, 8);
    g_assert_true(!memcmp(p.payload, v, 8));
    g_assert_true(p.icrc_ok);
    qroce_peer_out(pr, &o, qpn, 2001, ROCE_READ_RESP_ONLY);
    o.aeth_syndrome = ROCE_AETH_ACK_NO_CREDIT;
    qroce_peer_send(pr, &o, 0, false);
    qroce_next_send_cqe(t, cq, &idx, qpn, &cqe);
    g_assert_cmpuint(cqe.status, ==, QROCE_WC_SUCCESS);
    g_assert_cmphex(cqe.opcode, ==, QROCE_CQE_ATOMIC_WRITE);
}

/*
 * Responder: the peer's ATOMIC WRITE, again (not written twice), FLUSHes
 * of a range and of the MR, and of the persistent type (a NAK).
 */
static void fa_wire_responder(QRoce *t, QRocePeer *pr, uint32_t qpn,
                              uint64_t buf, uint32_t key)
{
    RocePktOut o;
    RocePktIn p;
    uint8_t f[2048], got[8], side[8];

    /* ATOMIC WRITE of 8 x 0x5a, answered, written */
    qroce_peer_out(pr, &o, qpn, 1000, ROCE_ATOMIC_WRITE);
    o.reth_va = buf + 808;
    o.reth_rkey = key;
    o.reth_len = 8;
    qroce_peer_send(pr, &o, 8, false);
    fa_peer_empty_resp(pr, 1000);
    memset(side, 0x5a, 8);
    qtest_memread(t->qts, buf + 808, got, 8);
    g_assert_true(!memcmp(got, side, 8));
    g_assert_cmphex(qtest_readq(t->qts, buf + 800), ==, 0);
    g_assert_cmphex(qtest_readq(t->qts, buf + 816), ==, 0);
    /* asked again (its response lost): answered, not written again */
    qtest_writeq(t->qts, buf + 808, 0x1111111111111111ull);
    qroce_peer_send(pr, &o, 8, false);
    fa_peer_empty_resp(pr, 1000);
    g_assert_cmphex(qtest_readq(t->qts, buf + 808), ==, 0x1111111111111111ull);
    /* FLUSH of a range, and of the MR */
    qroce_peer_out(pr, &o, qpn, 1001, ROCE_FLUSH);
    o.feth = ROCE_FETH(QROCE_FLUSH_GLOBAL, QROCE_FLUSH_RANGE);
    o.reth_va = buf;
    o.reth_rkey = key;
    o.reth_len = 8192;
    qroce_peer_send(pr, &o, 0, false);
    fa_peer_empty_resp(pr, 1001);
    qroce_peer_out(pr, &o, qpn, 1002, ROCE_FLUSH);
    o.feth = ROCE_FETH(QROCE_FLUSH_GLOBAL, QROCE_FLUSH_MR);
    o.reth_rkey = key;
    qroce_peer_send(pr, &o, 0, false);
    fa_peer_empty_resp(pr, 1002);
    /* a FLUSH of the persistent type: remote access NAK, the QP to ERR */
    qroce_peer_out(pr, &o, qpn, 1003, ROCE_FLUSH);
    o.feth = ROCE_FETH(QROCE_FLUSH_PERSISTENT, QROCE_FLUSH_RANGE);
    o.reth_va = buf;
    o.reth_rkey = key;
    o.reth_len = 8;
    qroce_peer_send(pr, &o, 0, false);
    qroce_peer_recv(pr, f, &p);
    g_assert_cmphex(p.opcode, ==, ROCE_ACK);
    g_assert_cmphex(p.aeth_syndrome, ==, ROCE_AETH_NAK_ACCESS);
    g_assert_cmpuint(p.psn, ==, 1003);
    g_assert_cmpuint(qroce_qp_state(t, qpn), ==, QROCE_QPS_ERR);
}

/*
 * On the wire, against a peer: the device's FLUSH is opcode 0x1C with the
 * FETH (type, level) and RETH, its ATOMIC WRITE 0x1D with a RETH of
 * length 8 and the WQE's 8 bytes; empty READ responses complete them.
 * As responder the device answers the peer's ATOMIC WRITE with an empty
 * READ response, and a duplicate again without writing; a FLUSH too; a
 * FLUSH with another placement type gets an Invalid Request NAK.
 */
static void test_flush_atomic_write_wire(QRoce *t)
{
    QRocePeer *pr = &t->peer;
    uint64_t cq, buf, sq, rq;
    uint32_t pdn, cqn, key, qpn;

    qroce_objs_setup(t, QROCE_ACCESS_LOCAL_WRITE | QROCE_ACCESS_REMOTE_WRITE |
                     QROCE_ACCESS_REMOTE_READ | QROCE_ACCESS_FLUSH_GLOBAL,
                     &pdn, &cqn, &cq, &buf, &key);
    qpn = qroce_peer_qp(t, pr, pdn, cqn, 0x77, &sq, &rq);
    fa_wire_requester(t, pr, cq, sq, qpn);
    fa_wire_responder(t, pr, qpn, buf, key);
}

/* ---- where the verbs leave a choice: as hardware does (issue 34) ---- */

/* The local ACK timeout of QP attribute timeout 18: 4.096 us x 2^18. */
#define T18 (4096LL << 18)

/*
 * A QP connected to one that never answers (left in RESET): one SEND,
 * then the virtual clock a timeout at a time; the retransmissions that
 * each expiry of the timer caused, in @at[k] for the k-th step (up to
 * @steps), and the step at which RETRY_EXC_ERR came (0: not by then).
 */
static int retry_until_error(QRoceEnv *e, int steps, uint32_t *at)
{
    struct qroce_cqe cqe;
    QRoceQP a, b;
    uint32_t r0, tx0;
    int k;

    qroce_env_qp(e, QROCE_QPT_RC, e->pdn, &a);
    qroce_env_qp(e, QROCE_QPT_RC, e->pdn, &b);
    qroce_rc_connect_ex(e->t, a.qpn, b.qpn, 100, 200, 1, 18, 5);
    r0 = qroce_cnt(e->t, QROCE_CNT_ROCE_RETRANS);
    tx0 = qroce_cnt(e->t, QROCE_CNT_ROCE_TX_PKTS);
    qroce_env_put(e, &a, &(struct qroce_send_wqe){ .opcode = QROCE_WR_SEND,
                  .flags = QROCE_WQE_SIGNALED }, e->buf, 64, e->key);
    qroce_env_ring(e, &a);
    qroce_wait_cnt(e->t, QROCE_CNT_ROCE_TX_PKTS, tx0 + 1);
    for (k = 1; k <= steps; k++) {
        qtest_clock_step(e->t->qts, T18);
        qroce_wait_cnt_stable(e->t, QROCE_CNT_ROCE_RETRANS);
        at[k] = qroce_cnt(e->t, QROCE_CNT_ROCE_RETRANS) - r0;
        if (qroce_entry_ready(e->t, a.cq, sizeof(cqe), 6, 0)) {
            qroce_wait_entry(e->t, a.cq, sizeof(cqe), 6, 0, &cqe);
            g_assert_cmpuint(cqe.status, ==, QROCE_WC_RETRY_EXC_ERR);
            return k;
        }
    }
    return 0;
}

/*
 * Retry exhaustion takes timeout x (retry_cnt + 1): with timeout 18
 * (1.07 s) and retry_cnt 5 the SEND ends in RETRY_EXC_ERR at the sixth
 * expiry, one retransmission at each of the five before.  With the
 * retry-backoff property at 6 the timeout doubles instead: by 6 timeouts
 * only the expiries at 1 and 3 have happened.
 */
static void test_retry_timing(QRoce *t)
{
    uint32_t at[64] = { 0 };
    QRoceEnv e;
    int k;

    qroce_env_setup(&e, t);
    g_assert_cmpint(retry_until_error(&e, 8, at), ==, 6);
    for (k = 1; k <= 5; k++) {
        g_assert_cmpuint(at[k], ==, k);
    }
    qtest_qmp_assert_success(t->qts, "{'execute': 'qom-set', 'arguments': {"
                             "'path': %s, 'property': 'retry-backoff', "
                             "'value': 6}}", QROCE_PATH);
    memset(at, 0, sizeof(at));
    g_assert_cmpint(retry_until_error(&e, 63, at), ==, 63);
    g_assert_cmpuint(at[6], ==, 2);
    g_assert_cmpuint(at[62], ==, 5);
}

/* One READ or atomic of 8 bytes from A to @raddr/@rkey into @lkey's. */
static void put_rd_atomic(QRoceEnv *e, QRoceQP *a, uint8_t op, uint64_t raddr,
                          uint32_t rkey, uint32_t lkey)
{
    struct qroce_send_wqe h = { .opcode = op, .flags = QROCE_WQE_SIGNALED };

    h.rdma.remote_addr = cpu_to_le64(raddr);
    h.rdma.rkey = cpu_to_le32(rkey);
    h.rdma.compare_add = cpu_to_le64(5);
    qroce_env_put(e, a, &h, e->buf + 8192, 8, lkey);
    qroce_env_ring(e, a);
}

/*
 * Where a bad local key is caught.  A READ or an atomic names in its SGE
 * where the answer goes: with a bad lkey and a bad rkey the request goes
 * out and the responder's NAK ends it (REM_ACCESS_ERR); with only the
 * lkey bad the request goes out, a FETCH_ADD executes at the responder,
 * and placing the answer ends it (LOC_PROT_ERR).  A SEND's bad lkey is
 * caught before anything is sent.
 */
static void test_local_key_order(QRoce *t)
{
    static const uint8_t ops[] = { QROCE_WR_RDMA_READ,
                                   QROCE_WR_ATOMIC_FETCH_ADD,
                                   QROCE_WR_ATOMIC_CMP_SWP };
    uint32_t tkey, bad, tx;
    uint64_t tgt;
    QRoceEnv e;
    QRoceQP a, b;
    int i;

    qroce_env_setup(&e, t);
    tgt = qroce_pages(t, 1);
    tkey = qroce_mk_mr(t, e.pdn, tgt, 1, QROCE_ACCESS_LOCAL_WRITE |
                       QROCE_ACCESS_REMOTE_READ | QROCE_ACCESS_REMOTE_ATOMIC);
    bad = e.key + 0x10000;      /* no such MR */
    for (i = 0; i < ARRAY_SIZE(ops); i++) {
        qroce_env_pair(&e, &a, &b, 1);
        tx = qroce_cnt(t, QROCE_CNT_ROCE_TX_PKTS);
        put_rd_atomic(&e, &a, ops[i], tgt, tkey + 0x10000, bad);
        qroce_env_cqe(&e, &a, 0, QROCE_WC_REM_ACCESS_ERR, NULL);
        g_assert_cmpuint(qroce_cnt(t, QROCE_CNT_ROCE_TX_PKTS), >, tx);

        qroce_env_pair(&e, &a, &b, 1);
        qtest_writeq(t->qts, tgt, 5);
        tx = qroce_cnt(t, QROCE_CNT_ROCE_TX_PKTS);
        put_rd_atomic(&e, &a, ops[i], tgt, tkey, bad);
        qroce_env_cqe(&e, &a, 0, QROCE_WC_LOC_PROT_ERR, NULL);
        g_assert_cmpuint(qroce_cnt(t, QROCE_CNT_ROCE_TX_PKTS), >, tx);
        /* FETCH_ADD 5 to 5, CMP_SWP 5 == 5 -> swap 0: both executed */
        g_assert_cmphex(qtest_readq(t->qts, tgt), ==,
                        ops[i] == QROCE_WR_ATOMIC_FETCH_ADD ? 10 :
                        ops[i] == QROCE_WR_ATOMIC_CMP_SWP ? 0 : 5);
    }
    qroce_env_pair(&e, &a, &b, 1);
    tx = qroce_cnt(t, QROCE_CNT_ROCE_TX_PKTS);
    qroce_env_put(&e, &a, &(struct qroce_send_wqe){ .opcode = QROCE_WR_SEND,
                  .flags = QROCE_WQE_SIGNALED }, e.buf, 64, bad);
    qroce_env_ring(&e, &a);
    qroce_env_cqe(&e, &a, 0, QROCE_WC_LOC_PROT_ERR, NULL);
    g_assert_cmpuint(qroce_cnt(t, QROCE_CNT_ROCE_TX_PKTS), ==, tx);
}

/*
 * Arming for any completion, then for solicited ones only, before any
 * event: the stronger request stays, and an unsolicited completion
 * raises the event.
 */
static void test_arm_any_then_solicited(QRoce *t)
{
    struct qroce_eqe ev;
    struct qroce_cqe cqe;
    uint64_t eq1, cq, buf, sq, rq;
    uint32_t pdn, cqn, a, key;

    qroce_enable(t);
    pdn = qroce_alloc_pd(t);
    qroce_mk_eq(t, 0);
    eq1 = qroce_mk_eq(t, 1);
    cqn = qroce_mk_cq_ring(t, 1, 6, &cq);
    qroce_set_gid0(t);
    buf = qroce_pages(t, 1);
    key = qroce_mk_mr(t, pdn, buf, 1, QROCE_ACCESS_LOCAL_WRITE);
    g_assert_cmpuint(qroce_mk_qp_rings(t, QROCE_QPT_RC, pdn, cqn, cqn, 0, &a,
                                       &sq, &rq), ==, 0);
    qroce_rc_connect(t, a, a, 100, 100);
    qroce_post_recv(t, rq, 0, buf + 2048, 1024, key);
    qroce_db(t, QROCE_DB_RQ, a, 1);
    qroce_db(t, QROCE_DB_CQ_ARM, cqn, QROCE_CQ_ARM_NEXT | 0);
    qroce_db(t, QROCE_DB_CQ_ARM, cqn, QROCE_CQ_ARM_SOLICITED | 0);
    qroce_post_send(t, sq, 0, buf, 100, key, QROCE_WQE_SIGNALED);
    qroce_db(t, QROCE_DB_SQ, a, 1);
    qroce_wait_entry(t, cq, sizeof(cqe), 6, 0, &cqe);
    g_assert_cmpuint(cqe.status, ==, QROCE_WC_SUCCESS);
    qroce_wait_entry(t, eq1, sizeof(ev), 8, 0, &ev);
    g_assert_cmpuint(ev.type, ==, QROCE_EQE_COMP);
    g_assert_cmpuint(le32_to_cpu(ev.handle), ==, cqn);
    /* one event, then disarmed */
    qroce_wait_entry(t, cq, sizeof(cqe), 6, 1, &cqe);
    g_assert_false(qroce_entry_ready(t, eq1, sizeof(ev), 8, 1));
}

static const QRoceCase cases[] = {
    { "rc/send-loopback-cqes-events-cq-overrun", test_rc_loopback, NULL,
      NULL },
    { "rc/zero-length-rdma-needs-no-rkey", test_zero_length_rdma, NULL,
      NULL },
    { "rc/flush-and-atomic-write-loopback", test_flush_atomic_write, NULL,
      NULL },
    { "rc/flush-and-atomic-write-on-the-wire", test_flush_atomic_write_wire,
      NULL, qroce_peer_prepare },
    { "rc/retry-exhaustion-in-timeout-times-retries", test_retry_timing },
    { "rc/bad-local-key-of-a-read-or-atomic-caught-at-placement",
      test_local_key_order },
    { "rc/arm-any-then-solicited-keeps-any", test_arm_any_then_solicited },
};

static void register_qroce_rc_tests(void)
{
    qroce_add_tests(cases, ARRAY_SIZE(cases));
}

libqos_init(register_qroce_rc_tests);
