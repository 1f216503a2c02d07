/*
 * qtests of qroce: shared receive queues: the SRQ objects and their
 * checks, MODIFY_SRQ that resizes, and an SRQ shared by two RC QPs whose
 * messages from a peer on the wire interleave.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "libqtest.h"
#include "libqos/qroce.h"

/* CREATE_SRQ's checks, QUERY_SRQ, MODIFY_SRQ of the limit: the SRQ. */
static uint32_t srq_create_checks(QRoce *t, uint32_t pdn)
{
    struct qroce_cmd c;
    uint64_t ring;
    uint32_t out[6], srqn;

    ring = qroce_pages(t, 1);
    memset(&c, 0, sizeof(c));
    c.hdr.opcode = QROCE_CMD_CREATE_SRQ;
    c.create_srq.pdn = cpu_to_le32(pdn + 1);
    c.create_srq.uar = cpu_to_le32(3);
    c.create_srq.log2_entries = 7;
    c.create_srq.wqe_shift = 5;
    c.create_srq.limit = cpu_to_le32(16);
    c.create_srq.ring = qroce_bt(ring, 1);
    g_assert_cmpuint(qroce_cmd(t, &c, NULL), ==, QROCE_CMD_ERR_HANDLE);
    c.create_srq.pdn = cpu_to_le32(pdn);
    c.create_srq.log2_entries = 8;          /* 8 KiB in a 4 KiB ring */
    g_assert_cmpuint(qroce_cmd(t, &c, NULL), ==, QROCE_CMD_ERR_PARAM);
    c.create_srq.log2_entries = 7;
    c.create_srq.wqe_shift = 10;
    g_assert_cmpuint(qroce_cmd(t, &c, NULL), ==, QROCE_CMD_ERR_PARAM);
    c.create_srq.wqe_shift = 5;
    c.create_srq.cqn = cpu_to_le32(1);      /* XRC only */
    g_assert_cmpuint(qroce_cmd(t, &c, NULL), ==, QROCE_CMD_ERR_PARAM);
    c.create_srq.cqn = 0;
    c.create_srq.limit = cpu_to_le32(128);  /* not below the size */
    g_assert_cmpuint(qroce_cmd(t, &c, NULL), ==, QROCE_CMD_ERR_PARAM);
    c.create_srq.limit = cpu_to_le32(16);
    g_assert_cmpuint(qroce_cmd(t, &c, out), ==, QROCE_CMD_OK);
    srqn = out[0];
    g_assert_cmpuint(srqn, >, 0);
    g_assert_cmpuint(qroce_cmd_simple(t, QROCE_CMD_QUERY_SRQ, srqn, out), ==,
                     0);
    g_assert_cmpuint(out[0], ==, 16);
    g_assert_cmpuint(out[1], ==, 0);
    memset(&c, 0, sizeof(c));
    c.hdr.opcode = QROCE_CMD_MODIFY_SRQ;
    c.modify_srq.srqn = cpu_to_le32(srqn);
    c.modify_srq.limit = cpu_to_le32(200);
    g_assert_cmpuint(qroce_cmd(t, &c, NULL), ==, QROCE_CMD_ERR_PARAM);
    c.modify_srq.limit = cpu_to_le32(4);
    g_assert_cmpuint(qroce_cmd(t, &c, NULL), ==, QROCE_CMD_OK);
    g_assert_cmpuint(qroce_cmd_simple(t, QROCE_CMD_QUERY_SRQ, srqn, out), ==,
                     0);
    g_assert_cmpuint(out[0], ==, 4);
    c.modify_srq.srqn = cpu_to_le32(srqn + 1);
    g_assert_cmpuint(qroce_cmd(t, &c, NULL), ==, QROCE_CMD_ERR_HANDLE);
    return srqn;
}

/* A QP on SRQ @srqn: only with the SRQ flag, when FEATURES says SRQs work. */
static void srq_qp_checks(QRoce *t, uint32_t pdn, uint32_t cqn,
                          uint32_t srqn)
{
    struct qroce_cmd c = { .hdr.opcode = QROCE_CMD_CREATE_QP };
    uint32_t out[6];

    c.create_qp.pdn = cpu_to_le32(pdn);
    c.create_qp.send_cqn = cpu_to_le32(cqn);
    c.create_qp.recv_cqn = cpu_to_le32(cqn);
    c.create_qp.srqn = cpu_to_le32(srqn);
    c.create_qp.type = QROCE_QPT_RC;
    c.create_qp.sq_log2_entries = 4;
    c.create_qp.sq_wqe_shift = 6;
    c.create_qp.sq = qroce_bt(qroce_pages(t, 1), 1);
    g_assert_cmpuint(qroce_cmd(t, &c, NULL), ==, QROCE_CMD_ERR_PARAM);
    c.create_qp.flags = QROCE_CREATE_QP_SRQ;
    if (qroce_rd(t, QROCE_REG_FEATURES) & QROCE_FEAT_SRQ) {
        c.create_qp.srqn = cpu_to_le32(srqn + 1);
        g_assert_cmpuint(qroce_cmd(t, &c, NULL), ==, QROCE_CMD_ERR_HANDLE);
        c.create_qp.srqn = cpu_to_le32(srqn);
        g_assert_cmpuint(qroce_cmd(t, &c, out), ==, QROCE_CMD_OK);
        g_assert_cmpuint(qroce_cmd_simple(t, QROCE_CMD_DESTROY_SRQ, srqn,
                                          NULL), ==, QROCE_CMD_ERR_BUSY);
        c.hdr.opcode = QROCE_CMD_DESTROY_QP;
        c.qpn.qpn = cpu_to_le32(out[0]);
        g_assert_cmpuint(qroce_cmd(t, &c, NULL), ==, QROCE_CMD_OK);
    } else {
        g_assert_cmpuint(qroce_cmd(t, &c, NULL), ==, QROCE_CMD_ERR_PARAM);
    }
}

/*
 * SRQ objects: CREATE, QUERY, MODIFY and DESTROY_SRQ and their checks,
 * the SRQ doorbell, the PD and QPs an SRQ keeps busy.
 */
static void test_srq(QRoce *t)
{
    uint32_t pdn, srqn, bad, cqn;

    qroce_enable(t);
    g_assert_cmpuint(qroce_rd(t, QROCE_REG_CAP_MAX_SRQ), ==,
                     QROCE_DEF_MAX_SRQ);
    pdn = qroce_alloc_pd(t);
    srqn = srq_create_checks(t, pdn);
    /* doorbells: its page only, never past the ring */
    bad = qroce_cnt(t, QROCE_CNT_BAD_DOORBELLS);
    qroce_db(t, 3 * QROCE_DB_PAGE_SIZE + QROCE_DB_SRQ, srqn, 128);
    qroce_db(t, 2 * QROCE_DB_PAGE_SIZE + QROCE_DB_SRQ, srqn, 1);
    qroce_db(t, 3 * QROCE_DB_PAGE_SIZE + QROCE_DB_SRQ, srqn, 129);
    g_assert_cmpuint(qroce_wait_cnt_stable(t, QROCE_CNT_BAD_DOORBELLS), ==,
                     bad + 2);
    /* a PD with an SRQ is busy */
    g_assert_cmpuint(qroce_cmd_simple(t, QROCE_CMD_DEALLOC_PD, pdn, NULL), ==,
                     QROCE_CMD_ERR_BUSY);
    qroce_mk_eq(t, 1);
    cqn = qroce_mk_cq(t, 1);
    srq_qp_checks(t, pdn, cqn, srqn);
    g_assert_cmpuint(qroce_cmd_simple(t, QROCE_CMD_DESTROY_CQ, cqn, NULL), ==,
                     0);
    g_assert_cmpuint(qroce_cmd_simple(t, QROCE_CMD_DESTROY_SRQ, srqn, NULL),
                     ==, 0);
    g_assert_cmpuint(qroce_cmd_simple(t, QROCE_CMD_DESTROY_SRQ, srqn, NULL),
                     ==, QROCE_CMD_ERR_HANDLE);
    g_assert_cmpuint(qroce_cmd_simple(t, QROCE_CMD_QUERY_SRQ, srqn, NULL), ==,
                     QROCE_CMD_ERR_HANDLE);
    g_assert_cmpuint(qroce_cmd_simple(t, QROCE_CMD_DEALLOC_PD, pdn, NULL), ==,
                     0);
}

/* An SRQ of 2^@log2 32-byte WQEs on @pdn: its number; its ring in *@ring. */
static uint32_t mk_srq(QRoce *t, uint32_t pdn, uint8_t log2, uint64_t *ring)
{
    struct qroce_cmd c = { .hdr.opcode = QROCE_CMD_CREATE_SRQ };
    uint32_t out[6];

    *ring = qroce_pages(t, 1);
    c.create_srq.pdn = cpu_to_le32(pdn);
    c.create_srq.log2_entries = log2;
    c.create_srq.wqe_shift = 5;
    c.create_srq.ring = qroce_bt(*ring, 1);
    g_assert_cmpuint(qroce_cmd(t, &c, out), ==, QROCE_CMD_OK);
    return out[0];
}

/* A QP of @type whose receives come from SRQ @srqn. */
static uint32_t srq_qp(QRoce *t, uint8_t type, uint32_t pdn, uint32_t cqn,
                       uint32_t srqn)
{
    struct qroce_cmd c = { .hdr.opcode = QROCE_CMD_CREATE_QP };
    uint32_t out[6];

    c.create_qp.pdn = cpu_to_le32(pdn);
    c.create_qp.send_cqn = c.create_qp.recv_cqn = cpu_to_le32(cqn);
    c.create_qp.srqn = cpu_to_le32(srqn);
    c.create_qp.type = type;
    c.create_qp.flags = QROCE_CREATE_QP_SRQ;
    c.create_qp.sq_log2_entries = 4;
    c.create_qp.sq_wqe_shift = 6;
    c.create_qp.sq = qroce_bt(qroce_pages(t, 1), 1);
    g_assert_cmpuint(qroce_cmd(t, &c, out), ==, QROCE_CMD_OK);
    return out[0];
}

/* Is any of the @n bytes of guest memory at @a not zero? */
static bool guest_nonzero(QRoce *t, uint64_t a, size_t n)
{
    g_autofree uint8_t *p = g_malloc(n);

    qtest_memread(t->qts, a, p, n);
    while (n--) {
        if (p[n]) {
            return true;
        }
    }
    return false;
}

/* MODIFY_SRQ of @mask: a new ring of 2^@log2 (@npages at @ring), @limit. */
static int srq_resize(QRoce *t, uint32_t srqn, uint32_t mask,
                      uint32_t limit, uint8_t log2, uint64_t ring,
                      uint32_t npages, uint8_t rsvd)
{
    struct qroce_cmd c = { .hdr.opcode = QROCE_CMD_MODIFY_SRQ };

    c.modify_srq.srqn = cpu_to_le32(srqn);
    c.modify_srq.limit = cpu_to_le32(limit);
    c.modify_srq.attr_mask = cpu_to_le32(mask);
    c.modify_srq.log2_entries = log2;
    c.modify_srq.rsvd[1] = rsvd;
    c.modify_srq.ring = qroce_bt(ring, npages);
    return qroce_cmd(t, &c, NULL);
}

/* RECVs @from..@to-1 (200 bytes each) on an SRQ ring, and its doorbell. */
static void srq_fill(QRoce *t, uint64_t ring, uint8_t log2, uint32_t srqn,
                     uint32_t from, uint32_t to, uint64_t buf, uint32_t key)
{
    uint32_t i;

    for (i = from; i < to; i++) {
        qroce_put_recv(t, ring, log2, i, buf + 4096 + i * 200, 200, key);
    }
    qroce_db(t, QROCE_DB_SRQ, srqn, to);
}

/* UD SENDs @from..@to-1 of 100 bytes from QP @a to QP @b, Q_Key 0x2222. */
static void ud_burst(QRoce *t, uint64_t sq, uint32_t a, uint32_t ahn,
                     uint32_t b, uint32_t from, uint32_t to, uint64_t buf,
                     uint32_t key)
{
    uint32_t i;

    for (i = from; i < to; i++) {
        qroce_post_ud(t, sq, i, ahn, b, 0x2222, buf, 100, key);
    }
    qroce_db(t, QROCE_DB_SQ, a, to);
}

/* The receive CQE of QP @qpn after CQ index *@ci (others are skipped). */
static void srq_next_recv(QRoce *t, uint64_t cq, uint32_t *ci,
                          uint32_t qpn, struct qroce_cqe *e)
{
    do {
        qroce_wait_entry(t, cq, sizeof(*e), 6, (*ci)++, e);
    } while (le32_to_cpu(e->qpn) != qpn);
}

/*
 * MODIFY_SRQ with MAX_WR: four RECVs posted on a 4-entry SRQ, two
 * consumed, two more posted; a ring too small for the four left, a bad
 * size, a limit not below the new size, a ring of the wrong size,
 * reserved bits, an unknown attribute and no such SRQ are refused and
 * change nothing; then an 8-entry ring gets them at the slots of their
 * indexes, the old ring is no longer read, and eight SENDs complete on
 * WQEs 2..9 in order.
 */
static void test_srq_resize(QRoce *t)
{
    struct qroce_cqe e;
    uint8_t w1[32], w2[32];
    uint64_t cq, buf, sqa, rqa, ring, nring;
    uint32_t pdn, cqn, key, a, b, ahn, srqn, out[6], i, ci = 0;

    qroce_objs_setup(t, QROCE_ACCESS_LOCAL_WRITE, &pdn, &cqn, &cq, &buf, &key);
    g_assert_true(qroce_rd(t, QROCE_REG_FEATURES) & QROCE_FEAT_RESIZE_SRQ);
    ahn = qroce_mk_self_ah(t, pdn);
    qroce_ud_qp(t, QROCE_QPT_UD, pdn, cqn, 0x1111, &a, &sqa, &rqa);
    srqn = mk_srq(t, pdn, 2, &ring);
    b = srq_qp(t, QROCE_QPT_UD, pdn, cqn, srqn);
    qroce_ud_ready(t, b, QROCE_QPT_UD, 0x2222);

    srq_fill(t, ring, 2, srqn, 0, 4, buf, key);
    ud_burst(t, sqa, a, ahn, b, 0, 2, buf, key);
    for (i = 0; i < 2; i++) {
        srq_next_recv(t, cq, &ci, b, &e);
        g_assert_cmpuint(le32_to_cpu(e.wqe_index), ==, i);
        g_assert_true(e.flags & QROCE_CQE_F_SRQ);
    }
    srq_fill(t, ring, 2, srqn, 4, 6, buf, key);

    nring = qroce_pages(t, 1);
    g_assert_cmpuint(srq_resize(t, srqn, QROCE_SRQ_ATTR_MAX_WR, 0, 1, nring,
                                1, 0), ==, QROCE_CMD_ERR_PARAM); /* 2 < 4 */
    g_assert_cmpuint(srq_resize(t, srqn, QROCE_SRQ_ATTR_MAX_WR, 0, 0, nring,
                                1, 0), ==, QROCE_CMD_ERR_PARAM);
    g_assert_cmpuint(srq_resize(t, srqn, QROCE_SRQ_ATTR_MAX_WR, 0,
                                QROCE_WQ_MAX_LOG2 + 1, nring, 1, 0), ==,
                     QROCE_CMD_ERR_PARAM);
    g_assert_cmpuint(srq_resize(t, srqn, QROCE_SRQ_ATTR_MAX_WR |
                                QROCE_SRQ_ATTR_LIMIT, 8, 3, nring, 1, 0), ==,
                     QROCE_CMD_ERR_PARAM);      /* limit not below 8 */
    g_assert_cmpuint(srq_resize(t, srqn, QROCE_SRQ_ATTR_MAX_WR, 0, 3, nring,
                                2, 0), ==, QROCE_CMD_ERR_PARAM); /* 2 pages */
    g_assert_cmpuint(srq_resize(t, srqn, QROCE_SRQ_ATTR_MAX_WR, 0, 3, nring,
                                1, 1), ==, QROCE_CMD_ERR_PARAM);
    g_assert_cmpuint(srq_resize(t, srqn, 0x4, 0, 3, nring, 1, 0), ==,
                     QROCE_CMD_ERR_PARAM);
    g_assert_cmpuint(srq_resize(t, srqn + 1, QROCE_SRQ_ATTR_MAX_WR, 0, 3,
                                nring, 1, 0), ==, QROCE_CMD_ERR_HANDLE);
    g_assert_cmpuint(qroce_cmd_simple(t, QROCE_CMD_QUERY_SRQ, srqn, out), ==,
                     0);
    g_assert_cmpuint(out[1], ==, 2);
    g_assert_false(guest_nonzero(t, nring, 256));

    g_assert_cmpuint(srq_resize(t, srqn, QROCE_SRQ_ATTR_MAX_WR |
                                QROCE_SRQ_ATTR_LIMIT, 3, 3, nring, 1, 0), ==,
                     QROCE_CMD_OK);
    g_assert_cmpuint(qroce_cmd_simple(t, QROCE_CMD_QUERY_SRQ, srqn, out), ==,
                     0);
    g_assert_cmpuint(out[0], ==, 3);
    for (i = 2; i < 6; i++) {
        qtest_memread(t->qts, ring + (i & 3) * 32, w1, 32);
        qtest_memread(t->qts, nring + (i & 7) * 32, w2, 32);
        g_assert_true(!memcmp(w1, w2, 32));
    }
    g_assert_false(guest_nonzero(t, nring, 2 * 32));  /* 0, 1: consumed */
    g_assert_false(guest_nonzero(t, nring + 6 * 32, 2 * 32));
    qtest_memset(t->qts, ring, 0, 4096);     /* the old ring is not read */
    srq_fill(t, nring, 3, srqn, 6, 10, buf, key);
    ud_burst(t, sqa, a, ahn, b, 2, 10, buf, key);
    for (i = 2; i < 10; i++) {
        srq_next_recv(t, cq, &ci, b, &e);
        g_assert_cmpuint(e.status, ==, QROCE_WC_SUCCESS);
        g_assert_cmpuint(le32_to_cpu(e.wqe_index), ==, i);
        g_assert_cmpuint(le32_to_cpu(e.byte_len), ==, 140);
    }
}

/* A SEND packet from the peer whose payload is (@seed + i) & 0xff. */
static void peer_send_pat(QRocePeer *pr, uint32_t qpn, uint32_t psn, uint8_t op,
                          uint32_t len, uint8_t seed, bool ackreq)
{
    uint8_t f[2048];
    RocePktOut o;
    size_t hl;
    uint32_t i;

    qroce_peer_out(pr, &o, qpn, psn, op);
    o.ackreq = ackreq;
    hl = roce_hdr_len(op, false);
    for (i = 0; i < len; i++) {
        f[hl + i] = seed + i;
    }
    qroce_peer_send_frame(pr, f, roce_build(f, &o, len));
}

/* The next ACK or NAK from the device, for @qpn's peer QP @dqpn. */
static uint8_t peer_next_ack(QRocePeer *pr, uint32_t dqpn, uint32_t *psn)
{
    uint8_t f[2048];
    RocePktIn p;

    do {
        qroce_peer_recv(pr, f, &p);
    } while (p.opcode != ROCE_ACK || p.dqpn != dqpn);
    *psn = p.psn;
    return p.aeth_syndrome;
}

/* Guest bytes at @addr are (@seed + i) & 0xff for i < @len. */
static void check_pat(QRoce *t, uint64_t addr, uint32_t len, uint8_t seed)
{
    g_autofree uint8_t *b = g_malloc(len);
    uint32_t i;

    qtest_memread(t->qts, addr, b, len);
    for (i = 0; i < len; i++) {
        g_assert_cmphex(b[i], ==, (uint8_t)(seed + i));
    }
}

/* The next receive CQE: QP @qpn, SRQ WQE @idx, @status, @len bytes. */
static void srq_recv_cqe(QRoce *t, uint64_t cq, uint32_t *ci,
                         uint32_t qpn, uint32_t idx, uint8_t status,
                         uint32_t len)
{
    struct qroce_cqe e;

    qroce_wait_entry(t, cq, sizeof(e), 6, (*ci)++, &e);
    g_assert_cmpuint(le32_to_cpu(e.qpn), ==, qpn);
    g_assert_cmpuint(e.status, ==, status);
    g_assert_true(e.flags & QROCE_CQE_F_SRQ);
    g_assert_false(e.flags & QROCE_CQE_F_SQ);
    g_assert_cmpuint(le32_to_cpu(e.wqe_index), ==, idx);
    if (status == QROCE_WC_SUCCESS) {
        g_assert_cmpuint(le32_to_cpu(e.byte_len), ==, len);
    }
}

#define SS_BUF(i)   (rbuf + (i) * 1024)     /* SRQ WQE i's 1 KiB buffer */

/*
 * Two RC QPs on one SRQ, path MTU 256.  (a) A SEND of 712 bytes to QP A
 * (FIRST, MIDDLE, LAST) with a SEND_ONLY to QP B between its packets: A's
 * message keeps SRQ WQE 0 that its FIRST took, B takes WQE 1; every byte
 * and both lengths are right.  (b) With one WQE left, A's FIRST takes it
 * and B's SEND_ONLY finds the SRQ dry: B gets an RNR NAK, A's message
 * still lands whole in its WQE; B's retry completes once a WQE is posted.
 * (c) A's FIRST takes a WQE and A goes to ERR: that WQE is flushed on A
 * (the SRQ's others stay for B).
 */
static void test_srq_shared_message(QRoce *t)
{
    QRocePeer *pr = &t->peer;
    uint64_t cq, buf, ring, rbuf;
    uint32_t pdn, cqn, key, rkey, srqn, a, b, out[6], psn, i, ci = 0;
    uint8_t syn;

    qroce_objs_setup(t, QROCE_ACCESS_LOCAL_WRITE, &pdn, &cqn, &cq, &buf, &key);
    rbuf = qroce_pages(t, 8);
    rkey = qroce_mk_mr(t, pdn, rbuf, 8, QROCE_ACCESS_LOCAL_WRITE);
    srqn = mk_srq(t, pdn, 3, &ring);
    a = srq_qp(t, QROCE_QPT_RC, pdn, cqn, srqn);
    b = srq_qp(t, QROCE_QPT_RC, pdn, cqn, srqn);
    qroce_peer_connect(t, pr, a, 0x77);
    qroce_peer_connect(t, pr, b, 0x78);
    for (i = 0; i < 2; i++) {
        qroce_put_recv(t, ring, 3, i, SS_BUF(i), 1024, rkey);
    }
    qroce_db(t, QROCE_DB_SRQ, srqn, 2);

    /* (a) */
    peer_send_pat(pr, a, 1000, ROCE_SEND_FIRST, 256, 0x10, false);
    peer_send_pat(pr, b, 1000, ROCE_SEND_ONLY, 100, 0x80, true);
    g_assert_cmphex(peer_next_ack(pr, 0x78, &psn), ==,
                    ROCE_AETH_ACK_NO_CREDIT);
    srq_recv_cqe(t, cq, &ci, b, 1, QROCE_WC_SUCCESS, 100);
    check_pat(t, SS_BUF(1), 100, 0x80);
    peer_send_pat(pr, a, 1001, ROCE_SEND_MIDDLE, 256, 0x10, false);
    peer_send_pat(pr, a, 1002, ROCE_SEND_LAST, 200, 0x10, true);
    g_assert_cmphex(peer_next_ack(pr, 0x77, &psn), ==,
                    ROCE_AETH_ACK_NO_CREDIT);
    g_assert_cmpuint(psn, ==, 1002);
    srq_recv_cqe(t, cq, &ci, a, 0, QROCE_WC_SUCCESS, 712);
    check_pat(t, SS_BUF(0), 256, 0x10);
    check_pat(t, SS_BUF(0) + 256, 256, 0x10);
    check_pat(t, SS_BUF(0) + 512, 200, 0x10);

    /* (b) */
    qroce_put_recv(t, ring, 3, 2, SS_BUF(2), 1024, rkey);
    qroce_db(t, QROCE_DB_SRQ, srqn, 3);
    peer_send_pat(pr, a, 1003, ROCE_SEND_FIRST, 256, 0x20, false);
    peer_send_pat(pr, b, 1001, ROCE_SEND_ONLY, 64, 0x90, true);
    syn = peer_next_ack(pr, 0x78, &psn);
    g_assert_cmphex(syn & 0xe0, ==, ROCE_AETH_RNR);
    g_assert_cmpuint(psn, ==, 1001);
    peer_send_pat(pr, a, 1004, ROCE_SEND_MIDDLE, 256, 0x40, false);
    peer_send_pat(pr, a, 1005, ROCE_SEND_LAST, 10, 0x60, true);
    g_assert_cmphex(peer_next_ack(pr, 0x77, &psn), ==,
                    ROCE_AETH_ACK_NO_CREDIT);
    srq_recv_cqe(t, cq, &ci, a, 2, QROCE_WC_SUCCESS, 522);
    check_pat(t, SS_BUF(2), 256, 0x20);
    check_pat(t, SS_BUF(2) + 256, 256, 0x40);
    check_pat(t, SS_BUF(2) + 512, 10, 0x60);
    qroce_put_recv(t, ring, 3, 3, SS_BUF(3), 1024, rkey);
    qroce_db(t, QROCE_DB_SRQ, srqn, 4);
    peer_send_pat(pr, b, 1001, ROCE_SEND_ONLY, 64, 0x90, true);
    g_assert_cmphex(peer_next_ack(pr, 0x78, &psn), ==,
                    ROCE_AETH_ACK_NO_CREDIT);
    srq_recv_cqe(t, cq, &ci, b, 3, QROCE_WC_SUCCESS, 64);
    check_pat(t, SS_BUF(3), 64, 0x90);

    /* (c) */
    for (i = 4; i < 6; i++) {
        qroce_put_recv(t, ring, 3, i, SS_BUF(i), 1024, rkey);
    }
    qroce_db(t, QROCE_DB_SRQ, srqn, 6);
    peer_send_pat(pr, a, 1006, ROCE_SEND_FIRST, 256, 0x30, false);
    peer_send_pat(pr, b, 1002, ROCE_SEND_ONLY, 32, 0xa0, true);
    g_assert_cmphex(peer_next_ack(pr, 0x78, &psn), ==,
                    ROCE_AETH_ACK_NO_CREDIT);
    srq_recv_cqe(t, cq, &ci, b, 5, QROCE_WC_SUCCESS, 32);
    g_assert_cmpuint(qroce_modify(t, a, QROCE_QP_ATTR_STATE, QROCE_QPS_ERR,
                                  NULL), ==, 0);
    srq_recv_cqe(t, cq, &ci, a, 4, QROCE_WC_WR_FLUSH_ERR, 0);
    g_assert_cmpuint(qroce_cmd_simple(t, QROCE_CMD_QUERY_SRQ, srqn, out), ==,
                     0);
    g_assert_cmpuint(out[1], ==, 6);
}

/* MODIFY_SRQ of @srqn to a ring of 2^14 32-byte WQEs at @ring. */
static void srq_resize_cmd(struct qroce_cmd *c, uint32_t srqn, uint64_t ring)
{
    memset(c, 0, sizeof(*c));
    c->hdr.opcode = QROCE_CMD_MODIFY_SRQ;
    c->modify_srq.srqn = cpu_to_le32(srqn);
    c->modify_srq.attr_mask = cpu_to_le32(QROCE_SRQ_ATTR_MAX_WR);
    c->modify_srq.log2_entries = 14;
    c->modify_srq.ring = qroce_bt(ring, 128);
}

/*
 * MODIFY_SRQ counts each WQE it moves in the command queue's work budget
 * (2^16 table pages or entries a run): with a full SRQ of 16 384 WQEs,
 * four resizes in a row end the run and the NOP posted with them is read
 * only after that run's interrupt (qroce_cmds_split()); one resize and a
 * NOP run together.
 */
static void test_srq_resize_yields(QRoce *t)
{
    struct qroce_cmd c[5] = { [4] = { .hdr.opcode = QROCE_CMD_NOP } };
    uint64_t ring[2];
    uint32_t out[6], srqn, pdn, i;
    int st[5];

    qroce_enable(t);
    pdn = qroce_alloc_pd(t);
    ring[0] = qroce_pages(t, 128);
    ring[1] = qroce_pages(t, 128);
    c[0].hdr.opcode = QROCE_CMD_CREATE_SRQ;
    c[0].create_srq.pdn = cpu_to_le32(pdn);
    c[0].create_srq.log2_entries = 14;
    c[0].create_srq.wqe_shift = 5;
    c[0].create_srq.ring = qroce_bt(ring[0], 128);
    g_assert_cmpuint(qroce_cmd(t, &c[0], out), ==, QROCE_CMD_OK);
    srqn = out[0];
    qroce_db(t, QROCE_DB_SRQ, srqn, 1u << 14);

    srq_resize_cmd(&c[3], srqn, ring[1]);
    g_assert_false(qroce_cmds_split(t, &c[3], 2, st));
    g_assert_cmpint(st[0], ==, QROCE_CMD_OK);
    g_assert_cmpint(st[1], ==, QROCE_CMD_OK);
    for (i = 0; i < 4; i++) {
        srq_resize_cmd(&c[i], srqn, ring[i % 2]);
    }
    g_assert_true(qroce_cmds_split(t, c, 5, st));
    for (i = 0; i < 5; i++) {
        g_assert_cmpint(st[i], ==, QROCE_CMD_OK);
    }
}

static const QRoceCase cases[] = {
    { "srq/create-modify-doorbell-busy-checks", test_srq, NULL, NULL },
    { "srq/resize-moves-posted-wqes", test_srq_resize, NULL, NULL },
    { "srq/resizes-of-a-full-srq-end-the-queue-run", test_srq_resize_yields,
      NULL, NULL },
    { "srq/message-keeps-its-wqe-between-qps", test_srq_shared_message, NULL,
      qroce_peer_prepare },
};

static void register_qroce_srq_tests(void)
{
    qroce_add_tests(cases, ARRAY_SIZE(cases));
}

libqos_init(register_qroce_srq_tests);
