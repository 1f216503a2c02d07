/*
 * qtests of qroce: memory regions and windows: REREG_MR, fast
 * registration (ALLOC_MR, REG_MR and LOCAL_INV WQEs, SEND with
 * Invalidate), memory windows of both types, and MRs on device memory
 * (BAR5).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "libqtest.h"
#include "libqos/qroce.h"

#define FR_LW QROCE_ACCESS_LOCAL_WRITE
#define FR_RW QROCE_ACCESS_REMOTE_WRITE
#define FR_RR QROCE_ACCESS_REMOTE_READ

/* REREG_MR of @key with @flags, PD @pdn, @access, @npages at @buf. */
static int rereg(QRoce *t, uint32_t key, uint32_t flags, uint32_t pdn,
                 uint32_t access, uint64_t buf, uint32_t npages)
{
    struct qroce_cmd c = { .hdr.opcode = QROCE_CMD_REREG_MR };

    c.rereg_mr.key = cpu_to_le32(key);
    c.rereg_mr.flags = cpu_to_le32(flags);
    c.rereg_mr.mr.pdn = cpu_to_le32(pdn);
    c.rereg_mr.mr.access = cpu_to_le32(access);
    c.rereg_mr.mr.iova = cpu_to_le64(buf);
    c.rereg_mr.mr.length = cpu_to_le64(2 << 12);
    c.rereg_mr.mr.pages = qroce_bt(buf, npages);
    return qroce_cmd(t, &c, NULL);
}

/*
 * REREG_MR: refused for an unknown key, a fast-registration MR, no or
 * unknown flags, a missing PD, bad access and a page table that is not
 * the MR's; moving an MR to another PD holds that PD (DEALLOC_PD is
 * BUSY) and releases the old one; new pages keep the key.
 */
static void test_rereg_mr(QRoce *t)
{
    uint64_t cq, buf, nbuf;
    uint32_t out[6], pdn, pd2, cqn, key, frmr;

    qroce_objs_setup(t, QROCE_ACCESS_LOCAL_WRITE, &pdn, &cqn, &cq, &buf, &key);
    g_assert_true(qroce_rd(t, QROCE_REG_FEATURES) & QROCE_FEAT_REREG_MR);
    pd2 = qroce_alloc_pd(t);
    frmr = qroce_alloc_mr(t, pdn, 4, QROCE_CMD_OK);
    nbuf = qroce_pages(t, 2);

    g_assert_cmpuint(rereg(t, key + 1, QROCE_REREG_PD, pd2, 0, 0, 0), ==,
                     QROCE_CMD_ERR_HANDLE);
    g_assert_cmpuint(rereg(t, frmr, QROCE_REREG_PD, pd2, 0, 0, 0), ==,
                     QROCE_CMD_ERR_HANDLE);
    g_assert_cmpuint(rereg(t, key, 0, pd2, 0, 0, 0), ==,
                     QROCE_CMD_ERR_PARAM);
    g_assert_cmpuint(rereg(t, key, 8, pd2, 0, 0, 0), ==,
                     QROCE_CMD_ERR_PARAM);
    g_assert_cmpuint(rereg(t, key, QROCE_REREG_PD, 999, 0, 0, 0), ==,
                     QROCE_CMD_ERR_HANDLE);
    g_assert_cmpuint(rereg(t, key, QROCE_REREG_ACCESS, 0, 0x200, 0, 0), ==,
                     QROCE_CMD_ERR_PARAM);
    g_assert_cmpuint(rereg(t, key, QROCE_REREG_TRANS, 0, 0, nbuf, 1), ==,
                     QROCE_CMD_ERR_PARAM);      /* 1 page for 8 KiB */

    g_assert_cmpuint(rereg(t, key, QROCE_REREG_PD, pd2, 0, 0, 0), ==, 0);
    g_assert_cmpuint(qroce_cmd_simple(t, QROCE_CMD_DEALLOC_PD, pd2, out), ==,
                     QROCE_CMD_ERR_BUSY);
    g_assert_cmpuint(rereg(t, key, QROCE_REREG_PD | QROCE_REREG_TRANS |
                           QROCE_REREG_ACCESS, pdn,
                           QROCE_ACCESS_LOCAL_WRITE |
                           QROCE_ACCESS_REMOTE_READ, nbuf, 2), ==, 0);
    g_assert_cmpuint(qroce_cmd_simple(t, QROCE_CMD_DEALLOC_PD, pd2, out), ==,
                     0);
    g_assert_cmpuint(qroce_cmd_simple(t, QROCE_CMD_DEREG_MR, key, out), ==, 0);
}

/* An RDMA READ on @q of @len bytes at @va, @rkey: they are @want. */
static void read_is(QRoceEnv *e, QRoceQP *q, uint64_t va, uint32_t rkey,
                    const uint8_t *want, uint32_t len)
{
    g_autofree uint8_t *got = g_malloc(len);
    struct qroce_cqe cqe;

    qroce_env_put_rdma(e, q, QROCE_WR_RDMA_READ, va, rkey, e->buf + 8192,
                       len);
    qroce_env_ring(e, q);
    qroce_env_cqe(e, q, QROCE_CQE_RDMA_READ, QROCE_WC_SUCCESS, &cqe);
    g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, len);
    qtest_memread(e->t->qts, e->buf + 8192, got, len);
    g_assert_true(!memcmp(got, want, len));
}

/* A REG_MR WQE on a lone QP of @pdn that fails with @status. */
static void fr_reg_err(QRoceEnv *e, uint32_t pdn, uint32_t key, uint64_t iova,
                       uint64_t pbl, uint32_t len, uint16_t npages,
                       uint8_t shift, uint32_t access, uint8_t status)
{
    QRoceQP q;

    qroce_env_lone(e, pdn, &q);
    qroce_env_put_reg(e, &q, key, iova, pbl, len, npages, shift, access);
    qroce_env_expect_err(e, &q, status);
}

/*
 * (a) ALLOC_MR, a REG_MR WQE of three scattered pages at an iova that is
 * not page aligned, an RDMA WRITE across a page boundary and a READ back
 * through its rkey; (b) LOCAL_INV, then the same WRITE is a remote access
 * error; (c) registered again with a new key variant: the new rkey works,
 * the old one fails.
 */
static void test_frmr_rdma(QRoce *t)
{
    QRoceEnv e;
    QRoceQP a, b, a2, b2;
    struct qroce_cqe cqe;
    uint64_t tgt, pg[3], pbl, iova = 0x7000100, va = iova + 3800;
    uint32_t fkey, rkey1, rkey2, i;
    uint8_t pat[1000], got[1000];

    qroce_env_setup(&e, t);
    g_assert_true(qroce_rd(e.t, QROCE_REG_FEATURES) & QROCE_FEAT_FRMR);
    g_assert_cmpuint(qroce_rd(e.t, QROCE_REG_CAP_MAX_FRMR_PAGES), ==,
                     QROCE_DEF_MAX_FRMR_PAGES);
    tgt = qroce_pages(e.t, 6);
    pg[0] = tgt + 4 * 4096;
    pg[1] = tgt + 1 * 4096;
    pg[2] = tgt + 2 * 4096;
    pbl = qroce_pbl(e.t, pg, 3);
    fkey = qroce_alloc_mr(e.t, e.pdn, 8, QROCE_CMD_OK);
    g_assert_cmphex(fkey & 0xff, ==, 0);
    qroce_env_pair(&e, &a, &b, 1);
    for (i = 0; i < sizeof(pat); i++) {
        pat[i] = i * 7 + 5;
    }
    qtest_memwrite(e.t->qts, e.buf, pat, sizeof(pat));

    /* (a) B loads the MR with variant 0x01 */
    rkey1 = fkey | 0x01;
    qroce_env_put_reg(&e, &b, rkey1, iova, pbl, 2 * 4096 + 0x500, 3, 12,
                      FR_LW | FR_RW | FR_RR);
    qroce_env_ring(&e, &b);
    qroce_env_cqe(&e, &b, QROCE_CQE_REG_MR, QROCE_WC_SUCCESS, &cqe);
    g_assert_true(cqe.flags & QROCE_CQE_F_SQ);
    /* the device keeps its own copy of the page list */
    qtest_writeq(e.t->qts, pbl, 0);
    /* 3800 bytes into the MR: 0x100 + 3800 = 4056 into its first page */
    qroce_env_put_rdma(&e, &a, QROCE_WR_RDMA_WRITE, va, rkey1, e.buf, 1000);
    qroce_env_ring(&e, &a);
    qroce_env_cqe(&e, &a, QROCE_CQE_RDMA_WRITE, QROCE_WC_SUCCESS, NULL);
    qtest_memread(e.t->qts, pg[0] + 4056, got, 40);
    qtest_memread(e.t->qts, pg[1], got + 40, 960);
    g_assert_true(!memcmp(got, pat, sizeof(got)));
    read_is(&e, &a, va, rkey1, pat, sizeof(pat));

    /* (b) LOCAL_INV: the MR is FREE, the WRITE is refused remotely */
    qroce_env_put_inv(&e, &b, QROCE_WR_LOCAL_INV, rkey1, 0);
    qroce_env_ring(&e, &b);
    qroce_env_cqe(&e, &b, QROCE_CQE_LOCAL_INV, QROCE_WC_SUCCESS, NULL);
    qroce_env_put_rdma(&e, &a, QROCE_WR_RDMA_WRITE, va, rkey1, e.buf, 1000);
    qroce_env_ring(&e, &a);
    qroce_env_cqe(&e, &a, 0, QROCE_WC_REM_ACCESS_ERR, NULL);
    g_assert_cmpuint(qroce_qp_state(e.t, a.qpn), ==, QROCE_QPS_ERR);

    /* (c) variant 0x02 on a new pair: the new rkey works, the old fails */
    qroce_env_pair(&e, &a2, &b2, 1);
    rkey2 = fkey | 0x02;
    qtest_writeq(e.t->qts, pbl, pg[0]);
    qroce_env_put_reg(&e, &b2, rkey2, iova, pbl, 3 * 4096 - 0x100, 3, 12,
                      FR_LW | FR_RW);
    qroce_env_ring(&e, &b2);
    qroce_env_cqe(&e, &b2, QROCE_CQE_REG_MR, QROCE_WC_SUCCESS, NULL);
    /* 0x100 + 8000 = 8256: 64 bytes into the third page */
    qroce_env_put_rdma(&e, &a2, QROCE_WR_RDMA_WRITE, iova + 8000, rkey2, e.buf,
                       1000);
    qroce_env_ring(&e, &a2);
    qroce_env_cqe(&e, &a2, QROCE_CQE_RDMA_WRITE, QROCE_WC_SUCCESS, NULL);
    qtest_memread(e.t->qts, pg[2] + 64, got, sizeof(got));
    g_assert_true(!memcmp(got, pat, sizeof(got)));
    qroce_env_put_rdma(&e, &a2, QROCE_WR_RDMA_WRITE, va, rkey1, e.buf, 1000);
    qroce_env_ring(&e, &a2);
    qroce_env_cqe(&e, &a2, 0, QROCE_WC_REM_ACCESS_ERR, NULL);
    /* DEREG_MR of a VALID MR; then its key names nothing */
    g_assert_cmpuint(qroce_cmd_simple(e.t, QROCE_CMD_DEREG_MR, rkey2, NULL), ==,
                     0);
    g_assert_cmpuint(qroce_cmd_simple(e.t, QROCE_CMD_DEREG_MR, rkey2, NULL), ==,
                     QROCE_CMD_ERR_HANDLE);
}

/* On @q: a REG_MR WQE of one page at 0x20000 with key @key, LOCAL_INV. */
static void frmr_reg_and_inv(QRoceEnv *e, QRoceQP *q, uint32_t key,
                             uint64_t pbl)
{
    qroce_env_put_reg(e, q, key, 0x20000, pbl, 4096, 1, 12, FR_LW);
    qroce_env_put_inv(e, q, QROCE_WR_LOCAL_INV, key, 0);
    qroce_env_ring(e, q);
    qroce_env_cqe(e, q, QROCE_CQE_REG_MR, QROCE_WC_SUCCESS, NULL);
    qroce_env_cqe(e, q, QROCE_CQE_LOCAL_INV, QROCE_WC_SUCCESS, NULL);
}

/*
 * (d) SEND with Invalidate: A's SEND_INV (two packets, the IETH on the
 * last) invalidates B's MR: the RECV CQE has INV and the rkey.  Every
 * frame goes twice (x-tx-dup-ppm): the duplicate is only ACKed, it does not
 * invalidate again.  The same rkey again fails with REM_INV_REQ_ERR on
 * both sides; so does the key of an MR made by the REG_MR command.  On UC
 * the local operations work and SEND_INV is refused.
 */
static void test_frmr_send_inv(QRoce *t)
{
    QRoceEnv e;
    QRoceQP a, b, a2, b2, u1, u2, d;
    struct qroce_send_wqe hs = { .opcode = QROCE_WR_SEND,
                                 .flags = QROCE_WQE_SIGNALED };
    struct qroce_cqe cqe;
    uint64_t pg[1], pbl;
    uint32_t fkey, fkey2, rkey;

    qroce_env_setup(&e, t);
    fkey = qroce_alloc_mr(e.t, e.pdn, 4, QROCE_CMD_OK);
    qroce_env_pair(&e, &a, &b, 1);
    pg[0] = e.buf + 3 * 4096;
    pbl = qroce_pbl(e.t, pg, 1);
    rkey = fkey | 0x5a;
    qroce_env_put_reg(&e, &b, rkey, 0x10000, pbl, 4096, 1, 12, FR_LW | FR_RW);
    qroce_env_ring(&e, &b);
    qroce_env_cqe(&e, &b, QROCE_CQE_REG_MR, QROCE_WC_SUCCESS, NULL);
    qroce_post_recv(e.t, b.rq, 0, e.buf + 4096, 1024, e.key);
    qroce_post_recv(e.t, b.rq, 1, e.buf + 5120, 1024, e.key);
    qroce_post_recv(e.t, b.rq, 2, e.buf + 6144, 1024, e.key);
    qroce_db(e.t, QROCE_DB_RQ, b.qpn, 3);

    qroce_env_put_inv(&e, &a, QROCE_WR_SEND_INV, rkey, 300);
    qroce_env_ring(&e, &a);
    qroce_env_cqe(&e, &a, QROCE_CQE_SEND, QROCE_WC_SUCCESS, NULL);
    qroce_env_cqe(&e, &b, QROCE_CQE_RECV, QROCE_WC_SUCCESS, &cqe);
    g_assert_cmphex(cqe.flags & (QROCE_CQE_F_INV | QROCE_CQE_F_IMM), ==,
                    QROCE_CQE_F_INV);
    g_assert_cmphex(le32_to_cpu(cqe.imm_data), ==, rkey);
    g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, 300);
    g_assert_cmpuint(le32_to_cpu(cqe.wqe_index), ==, 0);
    g_assert_cmpuint(qroce_cnt(e.t, QROCE_CNT_ROCE_DUP_REQS), >=, 1);
    g_assert_cmpuint(qroce_qp_state(e.t, b.qpn), ==, QROCE_QPS_RTS);
    /* a plain SEND takes the next RECV WQE */
    qroce_env_put(&e, &a, &hs, e.buf, 100, e.key);
    qroce_env_ring(&e, &a);
    qroce_env_cqe(&e, &a, QROCE_CQE_SEND, QROCE_WC_SUCCESS, NULL);
    qroce_env_cqe(&e, &b, QROCE_CQE_RECV, QROCE_WC_SUCCESS, &cqe);
    g_assert_cmpuint(le32_to_cpu(cqe.wqe_index), ==, 1);
    g_assert_false(cqe.flags & QROCE_CQE_F_INV);
    /* the same rkey again: the MR is FREE */
    qroce_env_put_inv(&e, &a, QROCE_WR_SEND_INV, rkey, 100);
    qroce_env_ring(&e, &a);
    qroce_env_cqe(&e, &a, 0, QROCE_WC_REM_INV_REQ_ERR, NULL);
    qroce_env_cqe(&e, &b, 0, QROCE_WC_REM_INV_REQ_ERR, &cqe);
    g_assert_cmpuint(le32_to_cpu(cqe.wqe_index), ==, 2);
    g_assert_cmpuint(qroce_qp_state(e.t, a.qpn), ==, QROCE_QPS_ERR);
    g_assert_cmpuint(qroce_qp_state(e.t, b.qpn), ==, QROCE_QPS_ERR);

    /* an MR of the REG_MR command cannot be invalidated */
    qroce_env_pair(&e, &a2, &b2, 1);
    qroce_post_recv(e.t, b2.rq, 0, e.buf + 4096, 1024, e.key);
    qroce_db(e.t, QROCE_DB_RQ, b2.qpn, 1);
    qroce_env_put_inv(&e, &a2, QROCE_WR_SEND_INV, e.key, 10);
    qroce_env_ring(&e, &a2);
    qroce_env_cqe(&e, &a2, 0, QROCE_WC_REM_INV_REQ_ERR, NULL);
    qroce_env_cqe(&e, &b2, 0, QROCE_WC_REM_INV_REQ_ERR, NULL);

    /* UC: REG_MR and LOCAL_INV work, SEND_INV is not a UC operation */
    fkey2 = qroce_alloc_mr(e.t, e.pdn, 1, QROCE_CMD_OK);
    qroce_env_qp(&e, QROCE_QPT_UC, e.pdn, &u1);
    qroce_env_qp(&e, QROCE_QPT_UC, e.pdn, &u2);
    qroce_uc_connect(e.t, u1.qpn, u2.qpn);
    qroce_uc_connect(e.t, u2.qpn, u1.qpn);
    frmr_reg_and_inv(&e, &u1, fkey2 | 7, pbl);
    qroce_env_put_inv(&e, &u1, QROCE_WR_SEND_INV, fkey2 | 7, 10);
    qroce_env_expect_err(&e, &u1, QROCE_WC_LOC_QP_OP_ERR);

    /* UD: the same local operations */
    qroce_env_qp(&e, QROCE_QPT_UD, e.pdn, &d);
    qroce_ud_ready(e.t, d.qpn, QROCE_QPT_UD, 0x1111);
    frmr_reg_and_inv(&e, &d, fkey2 | 8, pbl);
    qroce_env_put_inv(&e, &d, QROCE_WR_LOCAL_INV, fkey2 | 8, 0);
    qroce_env_expect_err(&e, &d, QROCE_WC_LOC_PROT_ERR);
}

/*
 * A local operation runs once, even when go-back-N replays the WQEs
 * around it.  A's SQ: a SEND that B answers with an RNR NAK (no RECV
 * yet), a REG_MR, a WRITE through the rkey it made, a LOCAL_INV of
 * another MR: all executed before the NAK comes back (B's sequence NAK
 * for the WRITE shows it was sent).  After the RNR wait A sends from the
 * SEND again: had it executed REG_MR or LOCAL_INV twice, they would fail
 * (the MR not FREE, not VALID).
 */
static void test_frmr_replay(QRoce *t)
{
    QRoceEnv e;
    QRoceQP a, b;
    struct qroce_send_wqe h = { .opcode = QROCE_WR_SEND,
                                .flags = QROCE_WQE_SIGNALED };
    uint64_t pg[2], pbl;
    uint32_t fkey, fkey2, i;
    uint8_t pat[1000], got[1000];

    qroce_env_setup(&e, t);
    fkey = qroce_alloc_mr(e.t, e.pdn, 2, QROCE_CMD_OK);
    fkey2 = qroce_alloc_mr(e.t, e.pdn, 1, QROCE_CMD_OK);
    qroce_env_pair(&e, &a, &b, 0);         /* B's RNR NAKs ask for 655 ms */
    pg[0] = e.buf + 2 * 4096;
    pg[1] = e.buf + 3 * 4096;
    pbl = qroce_pbl(e.t, pg, 2);
    for (i = 0; i < sizeof(pat); i++) {
        pat[i] = i * 11 + 1;
    }
    qtest_memwrite(e.t->qts, e.buf, pat, sizeof(pat));
    qroce_env_put_reg(&e, &a, fkey2 | 1, 0x30000, pbl, 4096, 1, 12, FR_LW);
    qroce_env_ring(&e, &a);
    qroce_env_cqe(&e, &a, QROCE_CQE_REG_MR, QROCE_WC_SUCCESS, NULL);

    qroce_env_put(&e, &a, &h, e.buf, 100, e.key);
    qroce_env_put_reg(&e, &a, fkey | 0x11, 0x40000, pbl, 8192, 2, 12,
                      FR_LW | FR_RW);
    qroce_env_put_rdma(&e, &a, QROCE_WR_RDMA_WRITE, 0x40000 + 4000, fkey | 0x11,
                       e.buf, 1000);
    qroce_env_put_inv(&e, &a, QROCE_WR_LOCAL_INV, fkey2 | 1, 0);
    qroce_env_ring(&e, &a);
    qroce_wait_cnt(e.t, QROCE_CNT_ROCE_RNR_NAKS, 1);
    qroce_wait_cnt(e.t, QROCE_CNT_ROCE_SEQ_NAKS, 1);
    g_assert_false(
        qroce_entry_ready(e.t, a.cq, sizeof(struct qroce_cqe), 6, a.ci));
    qroce_post_recv(e.t, b.rq, 0, e.buf + 4096, 1024, e.key);
    qroce_db(e.t, QROCE_DB_RQ, b.qpn, 1);
    qtest_clock_step(e.t->qts, 700 * 1000 * 1000);   /* the RNR timer */
    qroce_env_cqe(&e, &a, QROCE_CQE_SEND, QROCE_WC_SUCCESS, NULL);
    qroce_env_cqe(&e, &a, QROCE_CQE_REG_MR, QROCE_WC_SUCCESS, NULL);
    qroce_env_cqe(&e, &a, QROCE_CQE_RDMA_WRITE, QROCE_WC_SUCCESS, NULL);
    qroce_env_cqe(&e, &a, QROCE_CQE_LOCAL_INV, QROCE_WC_SUCCESS, NULL);
    qroce_env_cqe(&e, &b, QROCE_CQE_RECV, QROCE_WC_SUCCESS, NULL);
    g_assert_cmpuint(qroce_cnt(e.t, QROCE_CNT_ROCE_RETRANS), >=, 1);
    /* 4000 bytes into the MR: 96 in the first page, 904 in the second */
    qtest_memread(e.t->qts, pg[0] + 4000, got, 96);
    qtest_memread(e.t->qts, pg[1], got + 96, 904);
    g_assert_true(!memcmp(got, pat, sizeof(got)));
    g_assert_cmpuint(qroce_qp_state(e.t, a.qpn), ==, QROCE_QPS_RTS);
    /* fkey2 is FREE (invalidated once), fkey VALID (registered once) */
    qroce_env_put_inv(&e, &a, QROCE_WR_LOCAL_INV, fkey | 0x11, 0);
    qroce_env_ring(&e, &a);
    qroce_env_cqe(&e, &a, QROCE_CQE_LOCAL_INV, QROCE_WC_SUCCESS, NULL);
    qroce_env_put_inv(&e, &a, QROCE_WR_LOCAL_INV, fkey2 | 1, 0);
    qroce_env_expect_err(&e, &a, QROCE_WC_LOC_PROT_ERR);
}

/* ALLOC_MR's checks; its page array counts in max-bt-pages until DEREG. */
static void frmr_alloc_errors(QRoceEnv *e)
{
    uint32_t k, pdn3;

    qroce_alloc_mr(e->t, e->pdn, 0, QROCE_CMD_ERR_PARAM);
    qroce_alloc_mr(e->t, e->pdn, QROCE_DEF_MAX_FRMR_PAGES + 1,
                   QROCE_CMD_ERR_PARAM);
    qroce_alloc_mr(e->t, 999, 4, QROCE_CMD_ERR_HANDLE);
    /* the page arrays count in max-bt-pages, and come back at DEREG_MR */
    k = qroce_alloc_mr(e->t, e->pdn, QROCE_DEF_MAX_FRMR_PAGES, QROCE_CMD_OK);
    qroce_alloc_mr(e->t, e->pdn, QROCE_DEF_MAX_FRMR_PAGES, QROCE_CMD_ERR_NORES);
    g_assert_cmpuint(qroce_cmd_simple(e->t, QROCE_CMD_DEREG_MR, k, NULL), ==,
                     0);
    k = qroce_alloc_mr(e->t, e->pdn, QROCE_DEF_MAX_FRMR_PAGES, QROCE_CMD_OK);
    g_assert_cmpuint(qroce_cmd_simple(e->t, QROCE_CMD_DEREG_MR, k, NULL), ==,
                     0);
    /* DEREG_MR of a FREE MR; a PD with an MR is busy until then */
    pdn3 = qroce_alloc_pd(e->t);
    k = qroce_alloc_mr(e->t, pdn3, 1, QROCE_CMD_OK);
    g_assert_cmpuint(qroce_cmd_simple(e->t, QROCE_CMD_DEALLOC_PD, pdn3, NULL),
                     ==, QROCE_CMD_ERR_BUSY);
    g_assert_cmpuint(qroce_cmd_simple(e->t, QROCE_CMD_DEREG_MR, k, NULL), ==,
                     0);
    g_assert_cmpuint(qroce_cmd_simple(e->t, QROCE_CMD_DEALLOC_PD, pdn3, NULL),
                     ==, 0);
}

/* REG_MR WQEs that fail: LOC_LEN_ERR for the pages, LOC_PROT_ERR else. */
static void frmr_reg_errors(QRoceEnv *e, uint32_t fkey, uint64_t pbl,
                            uint64_t bad, uint32_t pdn2)
{
    uint64_t hole = 0x4000000000ULL;

    /* LOC_LEN_ERR: the pages, their list and the range */
    fr_reg_err(e, e->pdn, fkey | 1, 0, pbl, 4096, 3, 12, FR_LW,
               QROCE_WC_LOC_LEN_ERR);           /* npages over max_pages */
    fr_reg_err(e, e->pdn, fkey | 1, 0, pbl, 0, 0, 12, FR_LW,
               QROCE_WC_LOC_LEN_ERR);           /* npages 0 */
    fr_reg_err(e, e->pdn, fkey | 1, 0, bad, 8192, 2, 12, FR_LW,
               QROCE_WC_LOC_LEN_ERR);           /* a page not aligned */
    fr_reg_err(e, e->pdn, fkey | 1, 0, hole, 8192, 2, 12, FR_LW,
               QROCE_WC_LOC_LEN_ERR);           /* list outside RAM */
    fr_reg_err(e, e->pdn, fkey | 1, 0, pbl + 4, 8192, 2, 12, FR_LW,
               QROCE_WC_LOC_LEN_ERR);           /* list not 8-aligned */
    fr_reg_err(e, e->pdn, fkey | 1, 0x100, pbl, 8192, 2, 12, FR_LW,
               QROCE_WC_LOC_LEN_ERR);           /* range not covered */
    fr_reg_err(e, e->pdn, fkey | 1, 0, pbl, 4096, 1, 11, FR_LW,
               QROCE_WC_LOC_LEN_ERR);           /* page size 2 KiB */
    fr_reg_err(e, e->pdn, fkey | 1, 0, pbl, 4096, 1, 22, FR_LW,
               QROCE_WC_LOC_LEN_ERR);           /* page size 4 MiB */
    /* LOC_PROT_ERR: key, PD, access */
    fr_reg_err(e, e->pdn, fkey | 1, 0, pbl, 8192, 2, 12, FR_RW,
               QROCE_WC_LOC_PROT_ERR);          /* remote write alone */
    fr_reg_err(e, e->pdn, fkey | 1, 0, pbl, 8192, 2, 12, 0x200,
               QROCE_WC_LOC_PROT_ERR);          /* unknown access bit */
    fr_reg_err(e, pdn2, fkey | 1, 0, pbl, 8192, 2, 12, FR_LW,
               QROCE_WC_LOC_PROT_ERR);          /* the QP's PD is another */
    fr_reg_err(e, e->pdn, e->key, 0, pbl, 8192, 2, 12, FR_LW,
               QROCE_WC_LOC_PROT_ERR);          /* a REG_MR command MR */
    fr_reg_err(e, e->pdn, 0xfff00, 0, pbl, 8192, 2, 12, FR_LW,
               QROCE_WC_LOC_PROT_ERR);          /* no such MR */
}

/*
 * Access through a fast-registration MR's key only while it is VALID;
 * LOCAL_INV only of a VALID one of the QP's PD.  @hw: a WRITE WQE.
 */
static void frmr_key_state(QRoceEnv *e, uint32_t fkey, uint64_t pbl,
                           uint32_t pdn2, struct qroce_send_wqe *hw)
{
    QRoceQP q;

    /* the MR stayed FREE: its key gives no local access */
    qroce_env_lone(e, e->pdn, &q);
    qroce_env_put(e, &q, hw, 0x10, 16, fkey);
    qroce_env_expect_err(e, &q, QROCE_WC_LOC_PROT_ERR);
    /* ... until REG_MR; then once more is refused (not FREE) */
    qroce_env_lone(e, e->pdn, &q);
    qroce_env_put_reg(e, &q, fkey | 1, 0x10, pbl, 8000, 2, 12, FR_LW);
    qroce_env_ring(e, &q);
    qroce_env_cqe(e, &q, QROCE_CQE_REG_MR, QROCE_WC_SUCCESS, NULL);
    qroce_env_put_reg(e, &q, fkey | 2, 0x10, pbl, 8000, 2, 12, FR_LW);
    qroce_env_expect_err(e, &q, QROCE_WC_LOC_PROT_ERR);
    /* LOCAL_INV: the variant, the kind of MR, the PD */
    qroce_env_lone(e, e->pdn, &q);
    qroce_env_put_inv(e, &q, QROCE_WR_LOCAL_INV, fkey | 2, 0);
    qroce_env_expect_err(e, &q, QROCE_WC_LOC_PROT_ERR);
    qroce_env_lone(e, e->pdn, &q);
    qroce_env_put_inv(e, &q, QROCE_WR_LOCAL_INV, e->key, 0);
    qroce_env_expect_err(e, &q, QROCE_WC_LOC_PROT_ERR);
    qroce_env_lone(e, pdn2, &q);
    qroce_env_put_inv(e, &q, QROCE_WR_LOCAL_INV, fkey | 1, 0);
    qroce_env_expect_err(e, &q, QROCE_WC_LOC_PROT_ERR);
    /*
     * The VALID MR gives local access through its key (a WRITE from it to
     * the QP itself); a LOCAL_INV behind a READ retires with the READ;
     * then the key gives no access, and a second LOCAL_INV is refused.
     */
    qroce_env_lone(e, e->pdn, &q);
    hw->rdma.remote_addr = cpu_to_le64(e->buf);
    hw->rdma.rkey = cpu_to_le32(e->key);
    qroce_env_put(e, &q, hw, 0x10, 16, fkey | 1);
    qroce_env_put_rdma(e, &q, QROCE_WR_RDMA_READ, e->buf + 64, e->key,
                       e->buf + 128, 16);
    qroce_env_put_inv(e, &q, QROCE_WR_LOCAL_INV, fkey | 1, 0);
    qroce_env_ring(e, &q);
    qroce_env_cqe(e, &q, QROCE_CQE_RDMA_WRITE, QROCE_WC_SUCCESS, NULL);
    qroce_env_cqe(e, &q, QROCE_CQE_RDMA_READ, QROCE_WC_SUCCESS, NULL);
    qroce_env_cqe(e, &q, QROCE_CQE_LOCAL_INV, QROCE_WC_SUCCESS, NULL);
    qroce_env_put(e, &q, hw, 0x10, 16, fkey | 1);
    qroce_env_expect_err(e, &q, QROCE_WC_LOC_PROT_ERR);
    qroce_env_lone(e, e->pdn, &q);
    qroce_env_put_inv(e, &q, QROCE_WR_LOCAL_INV, fkey | 1, 0);
    qroce_env_expect_err(e, &q, QROCE_WC_LOC_PROT_ERR);   /* FREE already */
}

/*
 * (e) What ALLOC_MR, REG_MR and LOCAL_INV refuse, each with the spec's
 * status; after each the QP is in ERR and the device healthy.
 */
static void test_frmr_errors(QRoce *t)
{
    QRoceEnv e;
    QRoceQP q;
    struct qroce_send_wqe hw = { .opcode = QROCE_WR_RDMA_WRITE,
                                 .flags = QROCE_WQE_SIGNALED };
    uint64_t pg[2], pbl, bad;
    uint32_t fkey, pdn2;

    qroce_env_setup(&e, t);
    frmr_alloc_errors(&e);
    pdn2 = qroce_alloc_pd(e.t);
    fkey = qroce_alloc_mr(e.t, e.pdn, 2, QROCE_CMD_OK);
    pg[0] = e.buf + 2 * 4096;
    pg[1] = e.buf + 3 * 4096;
    pbl = qroce_pbl(e.t, pg, 2);
    pg[1] += 0x800;
    bad = qroce_pbl(e.t, pg, 2);
    frmr_reg_errors(&e, fkey, pbl, bad, pdn2);
    frmr_key_state(&e, fkey, pbl, pdn2, &hw);
    /*
     * FENCE: a LOCAL_INV of the MR a READ lands in waits for the READ
     * (without it the MR would be gone when the response comes back).
     */
    qroce_env_lone(&e, e.pdn, &q);
    qroce_env_put_reg(&e, &q, fkey | 2, 0x10, pbl, 8000, 2, 12, FR_LW);
    hw.opcode = QROCE_WR_RDMA_READ;
    qroce_env_put(&e, &q, &hw, 0x10, 16, fkey | 2);
    qroce_env_put_inv(&e, &q, QROCE_WR_LOCAL_INV, fkey | 2, 0);
    qtest_writeb(e.t->qts, q.sq + ((q.sqi - 1) & 15) * 64 + 1,
                 QROCE_WQE_SIGNALED | QROCE_WQE_FENCE);
    qroce_env_ring(&e, &q);
    qroce_env_cqe(&e, &q, QROCE_CQE_REG_MR, QROCE_WC_SUCCESS, NULL);
    qroce_env_cqe(&e, &q, QROCE_CQE_RDMA_READ, QROCE_WC_SUCCESS, NULL);
    qroce_env_cqe(&e, &q, QROCE_CQE_LOCAL_INV, QROCE_WC_SUCCESS, NULL);
    g_assert_cmpuint(qroce_cmd_simple(e.t, QROCE_CMD_DEREG_MR, fkey | 2, NULL),
                     ==, 0);
}

/* ALLOC_MW of @type on @pdn: it ends in @status; the window's key. */
static uint32_t mw_alloc(QRoceEnv *e, uint32_t pdn, uint32_t type, int status)
{
    struct qroce_cmd c = { .hdr.opcode = QROCE_CMD_ALLOC_MW };
    uint32_t out[6] = {};

    c.alloc_mw.pdn = cpu_to_le32(pdn);
    c.alloc_mw.type = cpu_to_le32(type);
    g_assert_cmpuint(qroce_cmd(e->t, &c, out), ==, status);
    return out[0];
}

/* A BIND_MW WQE: window @mw, as @new_key, over @len bytes of MR @mr. */
static void mw_put_bind(QRoceEnv *e, QRoceQP *q, uint32_t mw, uint32_t new_key,
                        uint32_t mr, uint64_t addr, uint64_t len,
                        uint32_t access)
{
    struct qroce_send_wqe h = { .opcode = QROCE_WR_BIND_MW,
                                .flags = QROCE_WQE_SIGNALED };

    h.bind.mw_key = cpu_to_le32(mw);
    h.bind.new_key = cpu_to_le32(new_key);
    h.bind.mr_lkey = cpu_to_le32(mr);
    h.bind.addr = cpu_to_le64(addr);
    h.bind.length = cpu_to_le64(len);
    h.bind.access = cpu_to_le32(access);
    qroce_env_put(e, q, &h, 0, 0, 0);
}

/* BIND_MW on @q that completes with @status (success: QP stays in RTS). */
static void mw_bind(QRoceEnv *e, QRoceQP *q, uint32_t mw, uint32_t new_key,
                    uint32_t mr, uint64_t addr, uint64_t len, uint32_t access,
                    uint8_t status)
{
    mw_put_bind(e, q, mw, new_key, mr, addr, len, access);
    if (status != QROCE_WC_SUCCESS) {
        qroce_env_expect_err(e, q, status);
        return;
    }
    qroce_env_ring(e, q);
    qroce_env_cqe(e, q, QROCE_CQE_BIND_MW, QROCE_WC_SUCCESS, NULL);
}

/* A WRITE of @len bytes of e->buf from @a through @rkey: its status. */
static void mw_write(QRoceEnv *e, QRoceQP *a, uint64_t va, uint32_t rkey,
                     uint32_t len, uint8_t status)
{
    qroce_env_put_rdma(e, a, QROCE_WR_RDMA_WRITE, va, rkey, e->buf, len);
    qroce_env_ring(e, a);
    qroce_env_cqe(e, a, QROCE_CQE_RDMA_WRITE, status, NULL);
}

/*
 * A type 2 window over a fast-registration MR: LOCAL_INV of the MR and a
 * new REG_MR with the same key over another page leave the window
 * unusable (nothing reaches the new page through it), and the window no
 * longer keeps the MR from DEREG_MR.
 */
static void mw_over_frmr(QRoceEnv *e)
{
    QRoceQP a, b;
    uint64_t pg[2] = { qroce_pages(e->t, 1), qroce_pages(e->t, 1) };
    uint64_t pbl0 = qroce_pbl(e->t, pg, 1), pbl1 = qroce_pbl(e->t, pg + 1, 1);
    uint32_t fkey = qroce_alloc_mr(e->t, e->pdn, 1, QROCE_CMD_OK) | 0x01;
    uint32_t kw = mw_alloc(e, e->pdn, 2, QROCE_CMD_OK);
    uint8_t pat[64], got[64], zero[64] = {};
    unsigned i;

    for (i = 0; i < sizeof(pat); i++) {
        pat[i] = i * 13 + 1;
    }
    qroce_env_pair(e, &a, &b, 1);
    qroce_env_put_reg(e, &b, fkey, 0x9000, pbl0, 4096, 1, 12,
                      FR_LW | QROCE_ACCESS_MW_BIND);
    qroce_env_ring(e, &b);
    qroce_env_cqe(e, &b, QROCE_CQE_REG_MR, QROCE_WC_SUCCESS, NULL);
    mw_bind(e, &b, kw, kw + 1, fkey, 0x9000, 4096, FR_RW, QROCE_WC_SUCCESS);
    mw_write(e, &a, 0x9000, kw + 1, 64, QROCE_WC_SUCCESS);
    qtest_memread(e->t->qts, pg[0], got, sizeof(got));
    g_assert_true(!memcmp(got, pat, sizeof(got)));
    qroce_env_put_inv(e, &b, QROCE_WR_LOCAL_INV, fkey, 0);
    qroce_env_ring(e, &b);
    qroce_env_cqe(e, &b, QROCE_CQE_LOCAL_INV, QROCE_WC_SUCCESS, NULL);
    qroce_env_put_reg(e, &b, fkey, 0x9000, pbl1, 4096, 1, 12,
                      FR_LW | QROCE_ACCESS_MW_BIND);
    qroce_env_ring(e, &b);
    qroce_env_cqe(e, &b, QROCE_CQE_REG_MR, QROCE_WC_SUCCESS, NULL);
    qtest_memwrite(e->t->qts, pg[1], zero, sizeof(zero));
    mw_write(e, &a, 0x9000, kw + 1, 64, QROCE_WC_REM_ACCESS_ERR);
    qtest_memread(e->t->qts, pg[1], got, sizeof(got));
    g_assert_true(!memcmp(got, zero, sizeof(got)));
    g_assert_cmpuint(qroce_cmd_simple(e->t, QROCE_CMD_DEREG_MR, fkey, NULL), ==,
                     0);
    g_assert_cmpuint(qroce_cmd_simple(e->t, QROCE_CMD_DEALLOC_MW, kw + 1, NULL),
                     ==, 0);
}

/* The MR windows are bound in: two pages with MW_BIND, and its key. */
typedef struct MwTarget {
    uint64_t tgt, win;          /* the MR; a 1 KiB window 1 KiB into it */
    uint32_t tkey;
    uint8_t pat[512];           /* at buf */
} MwTarget;

/*
 * A type 2 window bound by B: A writes inside it, not past it; another
 * QP may not use it, nor bind it again.  Its key.
 */
static uint32_t mw_type2(QRoceEnv *e, MwTarget *m, uint32_t k2)
{
    QRoceQP a, b, a2, b2, a4, b4;
    uint64_t win = m->win;
    uint32_t tkey = m->tkey, w2;
    uint8_t got[512], zero[512] = {};
    const uint8_t *pat = m->pat;

    /* type 2 bound by B: A writes inside it, not past it */
    qroce_env_pair(e, &a, &b, 1);
    w2 = (k2 & ~0xffu) | ((k2 + 1) & 0xff);
    mw_bind(e, &b, k2, w2, tkey, win, 1024, FR_RW | FR_RR,
            QROCE_WC_SUCCESS);
    mw_write(e, &a, win + 512, w2, 512, QROCE_WC_SUCCESS);
    qtest_memread(e->t->qts, win + 512, got, sizeof(got));
    g_assert_true(!memcmp(got, pat, sizeof(got)));
    /* the window's key before the bind, and the MR's own key: refused */
    g_assert_cmpuint(qroce_cmd_simple(e->t, QROCE_CMD_DEREG_MR, tkey, NULL), ==,
                     QROCE_CMD_ERR_BUSY);
    g_assert_cmpuint(qroce_cmd_simple(e->t, QROCE_CMD_DEREG_MR, w2, NULL), ==,
                     QROCE_CMD_ERR_PARAM);
    mw_write(e, &a, win + 513, w2, 512, QROCE_WC_REM_ACCESS_ERR);

    /* another QP may not use it; binding it again fails */
    qroce_env_pair(e, &a2, &b2, 1);
    qtest_memwrite(e->t->qts, win, zero, sizeof(zero));
    mw_write(e, &a2, win, w2, 64, QROCE_WC_REM_ACCESS_ERR);
    qtest_memread(e->t->qts, win, got, sizeof(got));
    g_assert_true(!memcmp(got, zero, sizeof(got)));
    qroce_env_pair(e, &a4, &b4, 1);
    mw_bind(e, &b4, w2, w2 + 1, tkey, win, 64, FR_RW,
            QROCE_WC_MW_BIND_ERR);
    return w2;
}

/*
 * A type 1 window, read only, bound by one QP and used from another
 * pair; bound again with a new key, the old key stops working; LOCAL_INV
 * refuses it.  Its key.
 */
static uint32_t mw_type1(QRoceEnv *e, MwTarget *m, uint32_t k1)
{
    QRoceQP a3, b3, a4, b4;
    struct qroce_cqe cqe;
    uint64_t tgt = m->tgt, win = m->win;
    uint32_t tkey = m->tkey, w1, w1b;
    uint8_t got[512];
    const uint8_t *pat = m->pat;

    qroce_env_pair(e, &a3, &b3, 1);
    w1 = (k1 & ~0xffu) | 0x10;
    mw_bind(e, &b3, k1, w1, tkey, tgt, 4096, FR_RR, QROCE_WC_SUCCESS);
    qroce_env_put_rdma(e, &a3, QROCE_WR_RDMA_READ, win + 512, w1, e->buf + 4096,
                       512);
    qroce_env_ring(e, &a3);
    qroce_env_cqe(e, &a3, QROCE_CQE_RDMA_READ, QROCE_WC_SUCCESS, &cqe);
    qtest_memread(e->t->qts, e->buf + 4096, got, sizeof(got));
    g_assert_true(!memcmp(got, pat, sizeof(got)));
    /* bound again with a new key: the old key stops working */
    w1b = (k1 & ~0xffu) | 0x11;
    mw_bind(e, &b3, w1, w1b, tkey, tgt, 8192, FR_RR | FR_RW,
            QROCE_WC_SUCCESS);
    qroce_env_put_rdma(e, &a3, QROCE_WR_RDMA_READ, tgt, w1b, e->buf + 4096, 8);
    qroce_env_ring(e, &a3);
    qroce_env_cqe(e, &a3, QROCE_CQE_RDMA_READ, QROCE_WC_SUCCESS, NULL);
    mw_write(e, &a3, tgt, w1, 8, QROCE_WC_REM_ACCESS_ERR);
    /* LOCAL_INV refuses a type 1 window */
    qroce_env_pair(e, &a4, &b4, 1);
    qroce_env_put_inv(e, &b4, QROCE_WR_LOCAL_INV, w1b, 0);
    qroce_env_expect_err(e, &b4, QROCE_WC_LOC_PROT_ERR);
    return w1b;
}

/* Binds of type 1 window @w1b against the rules; a bind of length 0. */
static void mw_binds(QRoceEnv *e, MwTarget *m, uint32_t w1b)
{
    QRoceQP a4, b4;
    uint64_t tgt = m->tgt;
    uint32_t tkey = m->tkey;

    /* binds against the rules: no MW_BIND, outside the MR, bad access */
    qroce_env_pair(e, &a4, &b4, 1);
    mw_bind(e, &b4, w1b, w1b + 1, e->key, e->buf, 64, FR_RR,
            QROCE_WC_MW_BIND_ERR);
    qroce_env_pair(e, &a4, &b4, 1);
    mw_bind(e, &b4, w1b, w1b + 1, tkey, tgt + 4096, 8192, FR_RR,
            QROCE_WC_MW_BIND_ERR);
    qroce_env_pair(e, &a4, &b4, 1);
    mw_bind(e, &b4, w1b, w1b + 1, tkey, tgt, 64, FR_LW | FR_RR,
            QROCE_WC_MW_BIND_ERR);
    /* a type 1 window unbinds with length 0 */
    qroce_env_pair(e, &a4, &b4, 1);
    mw_bind(e, &b4, w1b, w1b + 1, tkey, 0, 0, 0, QROCE_WC_SUCCESS);
    mw_write(e, &a4, tgt, w1b + 1, 8, QROCE_WC_REM_ACCESS_ERR);
}

/*
 * A new type 2 window on a fresh pair: SEND with Invalidate from the
 * peer unbinds it (the RECV CQE names it); bound again, LOCAL_INV
 * unbinds it.  Its key.
 */
static uint32_t mw_type2_invalidate(QRoceEnv *e, MwTarget *m)
{
    QRoceQP a4, b4;
    struct qroce_cqe cqe;
    uint64_t win = m->win;
    uint32_t tkey = m->tkey, k2;
    uint8_t got[512], zero[512] = {};

    qroce_env_pair(e, &a4, &b4, 1);
    k2 = mw_alloc(e, e->pdn, 2, QROCE_CMD_OK);
    mw_bind(e, &b4, k2, k2 + 1, tkey, win, 64, FR_RW, QROCE_WC_SUCCESS);
    mw_write(e, &a4, win, k2 + 1, 64, QROCE_WC_SUCCESS);
    qroce_post_recv(e->t, b4.rq, 0, e->buf + 8192, 1024, e->key);
    qroce_db(e->t, QROCE_DB_RQ, b4.qpn, 1);
    qroce_env_put_inv(e, &a4, QROCE_WR_SEND_INV, k2 + 1, 100);
    qroce_env_ring(e, &a4);
    qroce_env_cqe(e, &a4, QROCE_CQE_SEND, QROCE_WC_SUCCESS, NULL);
    qroce_env_cqe(e, &b4, QROCE_CQE_RECV, QROCE_WC_SUCCESS, &cqe);
    g_assert_true(cqe.flags & QROCE_CQE_F_INV);
    g_assert_cmphex(le32_to_cpu(cqe.imm_data), ==, k2 + 1);
    mw_bind(e, &b4, k2 + 1, k2 + 2, tkey, win, 64, FR_RW,
            QROCE_WC_SUCCESS);
    qroce_env_put_inv(e, &b4, QROCE_WR_LOCAL_INV, k2 + 2, 0);
    qroce_env_ring(e, &b4);
    qroce_env_cqe(e, &b4, QROCE_CQE_LOCAL_INV, QROCE_WC_SUCCESS, NULL);
    qtest_memwrite(e->t->qts, win, zero, 64);
    mw_write(e, &a4, win, k2 + 2, 64, QROCE_WC_REM_ACCESS_ERR);
    qtest_memread(e->t->qts, win, got, 64);
    g_assert_true(!memcmp(got, zero, 64));
    return k2;
}

/*
 * Windows of both types over an MR with MW_BIND: a bound window gives
 * exactly its range and access, type 2 only to the QP that bound it;
 * binds that break a rule fail with MW_BIND_ERR; LOCAL_INV and SEND with
 * Invalidate unbind a type 2 window (and refuse a type 1); a type 1
 * window is bound again with a new key (the old one stops working) and
 * unbound with length 0; an MR with windows bound cannot be deregistered.
 */
static void test_mw(QRoce *t)
{
    QRoceEnv e;
    MwTarget m;
    uint32_t tkey, k1, k2, w2, w1b;
    unsigned i;

    qroce_env_setup(&e, t);
    g_assert_true(qroce_rd(e.t, QROCE_REG_FEATURES) & QROCE_FEAT_MW);
    m.tgt = qroce_pages(e.t, 2);
    m.tkey = tkey = qroce_mk_mr(e.t, e.pdn, m.tgt, 2,
                                FR_LW | QROCE_ACCESS_MW_BIND);
    for (i = 0; i < sizeof(m.pat); i++) {
        m.pat[i] = i * 13 + 1;
    }
    qtest_memwrite(e.t->qts, e.buf, m.pat, sizeof(m.pat));
    k1 = mw_alloc(&e, e.pdn, 1, QROCE_CMD_OK);
    k2 = mw_alloc(&e, e.pdn, 2, QROCE_CMD_OK);
    mw_alloc(&e, e.pdn, 3, QROCE_CMD_ERR_PARAM);
    mw_alloc(&e, 999, 1, QROCE_CMD_ERR_HANDLE);
    m.win = m.tgt + 1024;

    w2 = mw_type2(&e, &m, k2);
    w1b = mw_type1(&e, &m, k1);
    mw_binds(&e, &m, w1b);
    k2 = mw_type2_invalidate(&e, &m);
    mw_over_frmr(&e);

    /* DEALLOC_MW of every window frees the MR for DEREG_MR */
    g_assert_cmpuint(qroce_cmd_simple(e.t, QROCE_CMD_DEALLOC_MW, k2, NULL), ==,
                     0);
    g_assert_cmpuint(qroce_cmd_simple(e.t, QROCE_CMD_DEREG_MR, tkey, NULL), ==,
                     QROCE_CMD_ERR_BUSY);  /* the first type 2 window */
    g_assert_cmpuint(qroce_cmd_simple(e.t, QROCE_CMD_DEALLOC_MW, w2, NULL), ==,
                     0);
    g_assert_cmpuint(qroce_cmd_simple(e.t, QROCE_CMD_DEALLOC_MW, w1b, NULL), ==,
                     0);
    g_assert_cmpuint(qroce_cmd_simple(e.t, QROCE_CMD_DEALLOC_MW, w1b, NULL), ==,
                     QROCE_CMD_ERR_HANDLE);
    g_assert_cmpuint(qroce_cmd_simple(e.t, QROCE_CMD_DEALLOC_MW, tkey, NULL),
                     ==, QROCE_CMD_ERR_HANDLE);
    g_assert_cmpuint(qroce_cmd_simple(e.t, QROCE_CMD_DEREG_MR, tkey, NULL), ==,
                     0);
}

/* REG_MR on device memory: bytes [@off, @off + @len) of BAR5, zero-based. */
static int dm_reg(QRoce *t, uint32_t pdn, uint64_t off, uint64_t len,
                  uint32_t access, uint32_t npages, uint32_t *key)
{
    struct qroce_cmd c = { .hdr.opcode = QROCE_CMD_REG_MR };
    uint32_t out[6] = {};
    int st;

    c.reg_mr.pdn = cpu_to_le32(pdn);
    c.reg_mr.access = cpu_to_le32(access);
    c.reg_mr.length = cpu_to_le64(len);
    c.reg_mr.pages.addr = cpu_to_le64(off);
    c.reg_mr.pages.npages = cpu_to_le32(npages);
    c.reg_mr.pages.level = QROCE_BT_DM;
    st = qroce_cmd(t, &c, out);
    if (key) {
        *key = out[0];
    }
    return st;
}

/*
 * Device memory (hw-spec §4a): FEATURES and CAP_DM_SIZE say it is there
 * and BAR5 is that big; an MR on it (zero-based, at 4 KiB into it) is the
 * target of an RDMA WRITE, seen through BAR5, and the source of an RDMA
 * READ of what was written through BAR5; a WRITE past the MR's end is a
 * remote access error and leaves the bytes after it alone; REG_MR with a
 * range past the end of device memory, with pages, or of a window's
 * access is refused; a device reset zeroes it.
 */
static void test_dm(QRoce *t)
{
    QRoceEnv e;
    QRoceQP a, b, a2, b2;
    uint32_t key, size = QROCE_DEF_DM_SIZE, i;
    uint64_t bar_size = 0;
    uint8_t pat[1000], got[1000], zero[1000] = {};
    QPCIBar dm;

    qroce_env_setup(&e, t);
    g_assert_true(qroce_rd(e.t, QROCE_REG_FEATURES) & QROCE_FEAT_DM);
    g_assert_cmpuint(qroce_rd(e.t, QROCE_REG_CAP_DM_SIZE), ==, size);
    dm = qpci_iomap(e.t->dev, QROCE_BAR_DM, &bar_size);
    g_assert_cmpuint(bar_size, ==, size);

    for (i = 0; i < sizeof(pat); i++) {
        pat[i] = i * 11 + 3;
    }
    /* what the guest writes through BAR5 */
    qpci_memwrite(e.t->dev, dm, 4096 + 8192, pat, sizeof(pat));
    g_assert_cmpuint(dm_reg(e.t, e.pdn, 4096, 16384,
                            FR_LW | FR_RW | FR_RR, 0, &key), ==, 0);
    qroce_env_pair(&e, &a, &b, 1);
    qtest_memwrite(e.t->qts, e.buf, pat, sizeof(pat));

    /* a WRITE to zero-based va 100 lands at 4096 + 100 of BAR5 */
    qroce_env_put_rdma(&e, &a, QROCE_WR_RDMA_WRITE, 100, key, e.buf, 1000);
    qroce_env_ring(&e, &a);
    qroce_env_cqe(&e, &a, QROCE_CQE_RDMA_WRITE, QROCE_WC_SUCCESS, NULL);
    qpci_memread(e.t->dev, dm, 4096 + 100, got, sizeof(got));
    g_assert_true(!memcmp(got, pat, sizeof(got)));

    /* a READ of va 8192: the bytes written through BAR5 */
    read_is(&e, &a, 8192, key, pat, sizeof(pat));

    /* past the MR's end (16384): refused, the next bytes untouched */
    qroce_env_put_rdma(&e, &a, QROCE_WR_RDMA_WRITE, 16384 - 500, key, e.buf,
                       1000);
    qroce_env_ring(&e, &a);
    qroce_env_cqe(&e, &a, 0, QROCE_WC_REM_ACCESS_ERR, NULL);
    qpci_memread(e.t->dev, dm, 4096 + 16384 - 500, got, 1000);
    g_assert_true(!memcmp(got, zero, sizeof(got)));

    /* what REG_MR refuses on device memory */
    g_assert_cmpuint(dm_reg(e.t, e.pdn, size - 4096, 8192, FR_LW, 0, NULL),
                     ==, QROCE_CMD_ERR_PARAM);
    g_assert_cmpuint(dm_reg(e.t, e.pdn, size + 4096, 0, FR_LW, 0, NULL),
                     ==, QROCE_CMD_ERR_PARAM);
    g_assert_cmpuint(dm_reg(e.t, e.pdn, UINT64_MAX - 10, 100, FR_LW, 0,
                            NULL), ==, QROCE_CMD_ERR_PARAM);
    g_assert_cmpuint(dm_reg(e.t, e.pdn, 0, 4096, FR_LW, 1, NULL), ==,
                     QROCE_CMD_ERR_PARAM);
    /* the whole of it, and none of it, are fine */
    g_assert_cmpuint(dm_reg(e.t, e.pdn, 0, size, FR_LW, 0, NULL), ==, 0);
    g_assert_cmpuint(dm_reg(e.t, e.pdn, size, 0, FR_LW, 0, NULL), ==, 0);

    /* the same on a new pair after DEREG_MR: the key names nothing */
    g_assert_cmpuint(qroce_cmd_simple(e.t, QROCE_CMD_DEREG_MR, key, NULL), ==,
                     0);
    qroce_env_pair(&e, &a2, &b2, 1);
    qroce_env_put_rdma(&e, &a2, QROCE_WR_RDMA_WRITE, 100, key, e.buf, 100);
    qroce_env_ring(&e, &a2);
    qroce_env_cqe(&e, &a2, 0, QROCE_WC_REM_ACCESS_ERR, NULL);

    /* a device reset leaves nothing of the last driver's */
    qroce_wr(e.t, QROCE_REG_CTRL, QROCE_CTRL_RESET);
    g_assert_cmphex(qroce_rd(e.t, QROCE_REG_STATUS), ==, 0);
    qpci_memread(e.t->dev, dm, 4096 + 100, got, sizeof(got));
    g_assert_true(!memcmp(got, zero, sizeof(got)));
    qpci_iounmap(e.t->dev, dm);
}

/* dm-size=0: no FEATURES bit, no capability, REG_MR on DM refused. */
static void test_dm_none(QRoce *t)
{
    uint32_t pdn;

    qroce_base_setup(t);
    pdn = qroce_alloc_pd(t);
    g_assert_false(qroce_rd(t, QROCE_REG_FEATURES) & QROCE_FEAT_DM);
    g_assert_cmpuint(qroce_rd(t, QROCE_REG_CAP_DM_SIZE), ==, 0);
    g_assert_cmpuint(dm_reg(t, pdn, 0, 4096, FR_LW, 0, NULL), ==,
                     QROCE_CMD_ERR_PARAM);
}

/* ---- on-demand paging (hw-spec §4b) ---- */

#define ODP_IOVA 0x7f0000100000ull

typedef struct OdpEnv {
    QRoceEnv e;
    uint64_t eq0;               /* EQ 0: 256 entries */
    uint32_t eqi;               /* the next entry to look at */
    uint32_t key;               /* a 4-page ODP MR at ODP_IOVA */
    uint64_t pages;             /* 4 pages the tests map into it */
} OdpEnv;

/* The environment of qroce_env_setup(), with EQ 0 kept, and the ODP MR. */
static void odp_setup(OdpEnv *o, QRoce *t)
{
    struct qroce_cmd c = { .hdr.opcode = QROCE_CMD_REG_MR };
    uint32_t out[6] = {};

    memset(o, 0, sizeof(*o));
    o->e.t = t;
    qroce_enable(t);
    o->e.pdn = qroce_alloc_pd(t);
    o->eq0 = qroce_mk_eq(t, 0);
    qroce_mk_eq(t, 1);
    qroce_set_gid0(t);
    o->e.buf = qroce_pages(t, 4);
    o->e.key = qroce_mk_mr(t, o->e.pdn, o->e.buf, 4, FR_LW | FR_RW | FR_RR);
    o->pages = qroce_pages(t, 4);
    g_assert_true(qroce_rd(t, QROCE_REG_FEATURES) & QROCE_FEAT_ODP);
    c.reg_mr.pdn = cpu_to_le32(o->e.pdn);
    c.reg_mr.access = cpu_to_le32(FR_LW | FR_RW | FR_RR);
    c.reg_mr.iova = cpu_to_le64(ODP_IOVA);
    c.reg_mr.length = cpu_to_le64(4 * 4096);
    c.reg_mr.pages.level = QROCE_BT_ODP;
    c.reg_mr.pages.page_shift = QROCE_ODP_PAGE_SHIFT;
    g_assert_cmpuint(qroce_cmd(t, &c, out), ==, 0);
    o->key = out[0];
}

/* The next event of EQ 0 is a page fault of @side of @qpn: its record. */
static void odp_fault_is(OdpEnv *o, uint32_t qpn, uint32_t side,
                         uint32_t *out)
{
    struct qroce_cmd c = { .hdr.opcode = QROCE_CMD_ODP_QUERY };
    struct qroce_eqe ev;

    qroce_wait_entry(o->e.t, o->eq0, sizeof(ev), 8, o->eqi++, &ev);
    g_assert_cmpuint(ev.type, ==, QROCE_EQE_PAGE_FAULT);
    g_assert_cmpuint(le32_to_cpu(ev.handle), ==, qpn);
    g_assert_cmpuint(le32_to_cpu(ev.data), ==, side);
    c.odp_pf.qpn = cpu_to_le32(qpn);
    c.odp_pf.side = cpu_to_le32(side);
    g_assert_cmpuint(qroce_cmd(o->e.t, &c, out), ==, 0);
    g_assert_cmpuint(out[0], ==, QROCE_PF_PENDING);
    g_assert_cmphex(out[1], ==, o->key);
}

static int odp_resume(OdpEnv *o, uint32_t qpn, uint32_t side, uint32_t token,
                      uint32_t status)
{
    struct qroce_cmd c = { .hdr.opcode = QROCE_CMD_ODP_RESUME };

    c.odp_pf.qpn = cpu_to_le32(qpn);
    c.odp_pf.side = cpu_to_le32(side);
    c.odp_pf.token = cpu_to_le32(token & QROCE_PF_TOKEN_MASK);
    c.odp_pf.status = cpu_to_le32(status);
    return qroce_cmd(o->e.t, &c, NULL);
}

/* ODP_MAP of MR page @first + i to @pages' page (n - 1 - i): reversed. */
static int odp_map(OdpEnv *o, uint32_t key, uint64_t first, uint32_t n,
                   uint64_t flags)
{
    struct qroce_cmd c = { .hdr.opcode = QROCE_CMD_ODP_MAP };
    uint64_t e[4], list = qroce_pages(o->e.t, 1);
    uint32_t i;

    for (i = 0; i < n && i < 4; i++) {
        e[i] = cpu_to_le64((o->pages + (n - 1 - i) * 4096) | flags);
    }
    qtest_memwrite(o->e.t->qts, list, e, sizeof(e));
    c.odp_map.key = cpu_to_le32(key);
    c.odp_map.npages = cpu_to_le32(n);
    c.odp_map.first = cpu_to_le64(first);
    c.odp_map.list = cpu_to_le64(list);
    return qroce_cmd(o->e.t, &c, NULL);
}

static int odp_unmap(OdpEnv *o, uint64_t first, uint64_t n)
{
    struct qroce_cmd c = { .hdr.opcode = QROCE_CMD_ODP_UNMAP };

    c.odp_unmap.key = cpu_to_le32(o->key);
    c.odp_unmap.first = cpu_to_le64(first);
    c.odp_unmap.npages = cpu_to_le64(n);
    return qroce_cmd(o->e.t, &c, NULL);
}

/*
 * The protocol on the responder's side: a WRITE into an ODP MR with no
 * pages raises a page fault naming the QP, the key, the range and
 * "write", and is answered RNR NAK (no CQE yet); ODP_MAP's checks; once
 * mapped (in reverse order) and resumed the WRITE completes and its bytes
 * are in the pages the table names; a READ brings them back; ODP_UNMAP of
 * two pages makes the next READ there fault again; a stale token is
 * refused.
 */
static void test_odp_fault_map_resume(QRoce *t)
{
    OdpEnv o;
    QRoceQP a, b;
    uint32_t out[6], i;
    uint8_t pat[8000], got[8000];

    odp_setup(&o, t);
    qroce_env_pair(&o.e, &a, &b, 1);
    for (i = 0; i < sizeof(pat); i++) {
        pat[i] = i * 7 + 1;
    }
    qtest_memwrite(t->qts, o.e.buf, pat, sizeof(pat));
    qroce_env_put_rdma(&o.e, &a, QROCE_WR_RDMA_WRITE, ODP_IOVA + 100, o.key,
                       o.e.buf, sizeof(pat));
    qroce_env_ring(&o.e, &a);
    odp_fault_is(&o, b.qpn, QROCE_PF_RESP, out);
    g_assert_cmphex((uint64_t)out[3] << 32 | out[2], ==, ODP_IOVA + 100);
    g_assert_cmpuint(out[4], ==, sizeof(pat));
    g_assert_true(out[5] & QROCE_PF_WRITE);
    g_assert_false(qroce_entry_ready(t, a.cq, sizeof(struct qroce_cqe), 6,
                                     a.ci));
    g_assert_cmpuint(qroce_wait_cnt_stable(t, QROCE_CNT_ODP_FAULTS), ==, 1);

    /* what ODP_MAP and ODP_RESUME refuse */
    g_assert_cmpuint(odp_map(&o, o.key, 0, 4, 0x4), ==, QROCE_CMD_ERR_PARAM);
    g_assert_cmpuint(odp_map(&o, o.key, 0, 4, QROCE_ODP_WRITE), ==,
                     QROCE_CMD_ERR_PARAM);
    g_assert_cmpuint(odp_map(&o, o.key, 1, 4, QROCE_ODP_PRESENT), ==,
                     QROCE_CMD_ERR_PARAM);
    g_assert_cmpuint(odp_map(&o, o.key, 0, 0, QROCE_ODP_PRESENT), ==,
                     QROCE_CMD_ERR_PARAM);
    g_assert_cmpuint(odp_map(&o, o.e.key, 0, 1, QROCE_ODP_PRESENT), ==,
                     QROCE_CMD_ERR_PARAM);
    g_assert_cmpuint(odp_map(&o, o.key + 0x100, 0, 1, QROCE_ODP_PRESENT), ==,
                     QROCE_CMD_ERR_HANDLE);
    g_assert_cmpuint(odp_resume(&o, b.qpn, QROCE_PF_RESP, out[5] + 1, 0), ==,
                     QROCE_CMD_ERR_STATE);
    g_assert_cmpuint(odp_resume(&o, b.qpn, 2, out[5], 0), ==,
                     QROCE_CMD_ERR_PARAM);

    g_assert_cmpuint(odp_map(&o, o.key, 0, 4, QROCE_ODP_PRESENT |
                             QROCE_ODP_WRITE), ==, 0);
    g_assert_cmpuint(qroce_wait_cnt_stable(t, QROCE_CNT_ODP_PAGES_MAPPED), ==,
                     4);
    g_assert_cmpuint(odp_resume(&o, b.qpn, QROCE_PF_RESP, out[5], 0), ==, 0);
    qtest_clock_step(t->qts, 1000 * 1000);          /* the RNR timer */
    qroce_env_cqe(&o.e, &a, QROCE_CQE_RDMA_WRITE, QROCE_WC_SUCCESS, NULL);
    /* MR page 0 is the last of the 4 pages, page 1 the third */
    qtest_memread(t->qts, o.pages + 3 * 4096 + 100, got, 4096 - 100);
    g_assert_true(!memcmp(got, pat, 4096 - 100));
    qtest_memread(t->qts, o.pages + 2 * 4096, got, sizeof(pat) - 3996);
    g_assert_true(!memcmp(got, pat + 3996, sizeof(pat) - 3996));
    read_is(&o.e, &a, ODP_IOVA + 100, o.key, pat, sizeof(pat));

    /* pages 1 and 2 go: a READ there faults again, a read this time */
    g_assert_cmpuint(odp_unmap(&o, 1, 2), ==, 0);
    g_assert_cmpuint(qroce_wait_cnt_stable(t, QROCE_CNT_ODP_PAGES_UNMAPPED),
                     ==, 2);
    qroce_env_put_rdma(&o.e, &a, QROCE_WR_RDMA_READ, ODP_IOVA + 4096, o.key,
                       o.e.buf + 8192, 100);
    qroce_env_ring(&o.e, &a);
    odp_fault_is(&o, b.qpn, QROCE_PF_RESP, out);
    g_assert_false(out[5] & QROCE_PF_WRITE);
    g_assert_cmpuint(odp_map(&o, o.key, 0, 4, QROCE_ODP_PRESENT), ==, 0);
    g_assert_cmpuint(odp_resume(&o, b.qpn, QROCE_PF_RESP, out[5], 0), ==, 0);
    qtest_clock_step(t->qts, 1000 * 1000);          /* the RNR timer */
    qroce_env_cqe(&o.e, &a, QROCE_CQE_RDMA_READ, QROCE_WC_SUCCESS, NULL);
    qtest_memread(t->qts, o.e.buf + 8192, got, 100);
    g_assert_true(!memcmp(got, pat + 4096 - 100, 100));
}

/*
 * The send side, and a driver that does not answer: a SEND gathered from
 * an absent ODP page stops that QP with a page fault and no CQE; the
 * device answers commands and another pair moves data meanwhile; ERR
 * flushes the WQE and forgets the fault (its RESUME is refused).  A
 * fault resumed with an error fails the access: a WRITE into an absent
 * page then completes with a remote access error.
 */
static void test_odp_silent_and_failed(QRoce *t)
{
    OdpEnv o;
    QRoceQP a, b, c, d;
    struct qroce_cmd q = { .hdr.opcode = QROCE_CMD_ODP_QUERY };
    uint32_t out[6];

    odp_setup(&o, t);
    qroce_env_pair(&o.e, &a, &b, 1);
    qroce_env_pair(&o.e, &c, &d, 1);
    qroce_env_recv(&o.e, &b, 0);
    qroce_env_put(&o.e, &a, &(struct qroce_send_wqe) {
                      .opcode = QROCE_WR_SEND, .flags = QROCE_WQE_SIGNALED },
                  ODP_IOVA, 512, o.key);
    qroce_env_ring(&o.e, &a);
    odp_fault_is(&o, a.qpn, QROCE_PF_REQ, out);
    g_assert_false(out[5] & QROCE_PF_WRITE);
    g_usleep(200 * 1000);
    qtest_clock_step(t->qts, 2000 * 1000 * 1000LL); /* no timer ends it */
    g_assert_false(qroce_entry_ready(t, a.cq, sizeof(struct qroce_cqe), 6,
                                     a.ci));
    g_assert_cmpuint(qroce_cmd_simple(t, QROCE_CMD_NOP, 0, NULL), ==, 0);
    qroce_env_put_rdma(&o.e, &c, QROCE_WR_RDMA_WRITE, o.e.buf + 4096,
                       o.e.key, o.e.buf, 64);
    qroce_env_ring(&o.e, &c);
    qroce_env_cqe(&o.e, &c, QROCE_CQE_RDMA_WRITE, QROCE_WC_SUCCESS, NULL);

    g_assert_cmpuint(qroce_modify(t, a.qpn, QROCE_QP_ATTR_STATE,
                                  QROCE_QPS_ERR, NULL), ==, 0);
    qroce_env_cqe(&o.e, &a, 0, QROCE_WC_WR_FLUSH_ERR, NULL);
    q.odp_pf.qpn = cpu_to_le32(a.qpn);
    g_assert_cmpuint(qroce_cmd(t, &q, out), ==, 0);
    g_assert_cmpuint(out[0], ==, QROCE_PF_NONE);
    g_assert_cmpuint(odp_resume(&o, a.qpn, QROCE_PF_REQ, out[5], 0), ==,
                     QROCE_CMD_ERR_STATE);
    g_assert_cmpuint(qroce_cmd_simple(t, QROCE_CMD_DESTROY_QP, a.qpn, NULL),
                     ==, 0);

    /* resolution fails: the WRITE is refused as an access error */
    qroce_env_put_rdma(&o.e, &c, QROCE_WR_RDMA_WRITE, ODP_IOVA + 8192, o.key,
                       o.e.buf, 64);
    qroce_env_ring(&o.e, &c);
    odp_fault_is(&o, d.qpn, QROCE_PF_RESP, out);
    g_assert_cmpuint(odp_resume(&o, d.qpn, QROCE_PF_RESP, out[5],
                                QROCE_PF_RESUME_ERR), ==, 0);
    qtest_clock_step(t->qts, 1000 * 1000);          /* the RNR timer */
    qroce_env_cqe(&o.e, &c, 0, QROCE_WC_REM_ACCESS_ERR, NULL);
    g_assert_cmpuint(qroce_wait_qp_state(t, d.qpn, QROCE_QPS_ERR), ==,
                     QROCE_QPS_ERR);
    g_assert_cmpuint(qroce_cmd_simple(t, QROCE_CMD_DEREG_MR, o.key, NULL), ==,
                     0);
}

/*
 * A bind takes the key portion of the new R_Key only: its low 8 bits
 * replace the window's, its upper 24 bits (another index here) are not
 * looked at, for type 2 and for type 1.  The window answers to its own
 * index with the new byte, not to the key the consumer passed.
 */
static void test_mw_key_byte(QRoce *t)
{
    QRoceEnv e;
    QRoceQP a, b;
    uint64_t tgt;
    uint32_t tkey, k, nk, want;
    int type;

    qroce_env_setup(&e, t);
    tgt = qroce_pages(t, 1);
    tkey = qroce_mk_mr(t, e.pdn, tgt, 1, FR_LW | QROCE_ACCESS_MW_BIND);
    for (type = 1; type <= 2; type++) {
        k = mw_alloc(&e, e.pdn, type, QROCE_CMD_OK);
        nk = (k + (5 << 8)) & ~0xffu;
        nk |= 0x37 + type;
        want = (k & ~0xffu) | (nk & 0xff);
        qroce_env_pair(&e, &a, &b, 1);
        mw_bind(&e, &b, k, nk, tkey, tgt, 4096, FR_RW, QROCE_WC_SUCCESS);
        mw_write(&e, &a, tgt + 100, want, 64, QROCE_WC_SUCCESS);
        mw_write(&e, &a, tgt + 100, nk, 64, QROCE_WC_REM_ACCESS_ERR);
    }
}

/*
 * A zero-based type 2 window: its addresses start at 0, whatever the
 * MR's are.  A WRITE at 100 through it lands 100 bytes into the range it
 * was bound to; the MR's own address of that byte is outside the window.
 */
static void test_mw_zero_based(QRoce *t)
{
    uint8_t pat[64], got[64];
    QRoceEnv e;
    QRoceQP a, b;
    uint64_t tgt;
    uint32_t tkey, k, w;
    int i;

    qroce_env_setup(&e, t);
    tgt = qroce_pages(t, 1);
    tkey = qroce_mk_mr(t, e.pdn, tgt, 1, FR_LW | QROCE_ACCESS_MW_BIND);
    k = mw_alloc(&e, e.pdn, 2, QROCE_CMD_OK);
    w = (k & ~0xffu) | 0x21;
    for (i = 0; i < sizeof(pat); i++) {
        pat[i] = i * 11 + 2;
    }
    qtest_memwrite(t->qts, e.buf, pat, sizeof(pat));
    qroce_env_pair(&e, &a, &b, 1);
    mw_bind(&e, &b, k, w, tkey, tgt + 1024, 512,
            FR_RW | QROCE_ACCESS_ZERO_BASED, QROCE_WC_SUCCESS);
    mw_write(&e, &a, 100, w, 64, QROCE_WC_SUCCESS);
    qtest_memread(t->qts, tgt + 1024 + 100, got, sizeof(got));
    g_assert_true(!memcmp(got, pat, sizeof(got)));
    mw_write(&e, &a, 480, w, 64, QROCE_WC_REM_ACCESS_ERR);   /* past 512 */
    qroce_env_pair(&e, &a, &b, 1);
    mw_write(&e, &a, tgt + 1024, w, 8, QROCE_WC_REM_ACCESS_ERR);
}

/*
 * An MR of 0 bytes (REG_MR with length 0 and no pages): its key is valid;
 * SENDs, RECVs, WRITEs and READs of 0 bytes to and from it, at its
 * address or far outside it, complete; 1 byte is refused.
 */
static void test_zero_length_mr(QRoce *t)
{
    struct qroce_cmd c = { .hdr.opcode = QROCE_CMD_REG_MR };
    struct qroce_cqe cqe;
    uint32_t out[6], zk;
    QRoceEnv e;
    QRoceQP a, b;

    qroce_env_setup(&e, t);
    c.reg_mr.pdn = cpu_to_le32(e.pdn);
    c.reg_mr.access = cpu_to_le32(FR_LW | FR_RW | FR_RR);
    c.reg_mr.iova = cpu_to_le64(0x5000);
    c.reg_mr.pages.level = QROCE_BT_CONTIG;
    c.reg_mr.pages.page_shift = 12;
    g_assert_cmpuint(qroce_cmd(t, &c, out), ==, QROCE_CMD_OK);
    zk = out[0];
    qroce_env_pair(&e, &a, &b, 1);
    qroce_post_recv(t, b.rq, 0, 0x5000, 0, zk);
    qroce_db(t, QROCE_DB_RQ, b.qpn, 1);
    qroce_env_put(&e, &a, &(struct qroce_send_wqe){ .opcode = QROCE_WR_SEND,
                  .flags = QROCE_WQE_SIGNALED }, 0x7777000, 0, zk);
    qroce_env_ring(&e, &a);
    qroce_env_cqe(&e, &a, QROCE_CQE_SEND, QROCE_WC_SUCCESS, NULL);
    qroce_env_cqe(&e, &b, QROCE_CQE_RECV, QROCE_WC_SUCCESS, &cqe);
    g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, 0);
    qroce_env_put_rdma(&e, &a, QROCE_WR_RDMA_WRITE, 0x9999000, zk, e.buf, 0);
    qroce_env_ring(&e, &a);
    qroce_env_cqe(&e, &a, QROCE_CQE_RDMA_WRITE, QROCE_WC_SUCCESS, NULL);
    qroce_env_put(&e, &a, &(struct qroce_send_wqe){
                  .opcode = QROCE_WR_RDMA_READ, .flags = QROCE_WQE_SIGNALED,
                  .rdma.remote_addr = cpu_to_le64(0x5000),
                  .rdma.rkey = cpu_to_le32(zk) }, 0x5001, 0, zk);
    qroce_env_ring(&e, &a);
    qroce_env_cqe(&e, &a, QROCE_CQE_RDMA_READ, QROCE_WC_SUCCESS, NULL);
    mw_write(&e, &a, 0x5000, zk, 1, QROCE_WC_REM_ACCESS_ERR);
    g_assert_cmpuint(qroce_cmd_simple(t, QROCE_CMD_DEREG_MR, zk, NULL), ==, 0);
}

static const QRoceCase cases[] = {
    { "mr/rereg-checks-and-moves-pd-pages-access", test_rereg_mr, NULL,
      NULL },
    { "mr/frmr-reg-rdma-local-inv-rekey", test_frmr_rdma, NULL, NULL },
    { "mr/frmr-send-with-invalidate-once", test_frmr_send_inv,
      "-global qroce.x-tx-dup-ppm=1000000", NULL },
    { "mr/frmr-local-ops-run-once-on-replay", test_frmr_replay, NULL, NULL },
    { "mr/frmr-errors-and-their-statuses", test_frmr_errors,
      "-global qroce.max-bt-pages=1000", NULL },
    { "mr/mw-bind-access-invalidate-dealloc", test_mw, NULL, NULL },
    { "mr/mw-bind-takes-the-key-byte-of-the-new-rkey", test_mw_key_byte },
    { "mr/mw-type2-zero-based", test_mw_zero_based },
    { "mr/zero-length-mr-and-zero-byte-access", test_zero_length_mr },
    { "mr/dm-write-read-bounds-reset", test_dm, NULL, NULL },
    { "mr/dm-none-with-dm-size-0", test_dm_none, "-global qroce.dm-size=0",
      NULL },
    { "mr/odp-fault-map-resume-unmap", test_odp_fault_map_resume, NULL, NULL },
    { "mr/odp-driver-silent-and-failed", test_odp_silent_and_failed, NULL,
      NULL },
};

static void register_qroce_mr_tests(void)
{
    qroce_add_tests(cases, ARRAY_SIZE(cases));
}

libqos_init(register_qroce_mr_tests);
