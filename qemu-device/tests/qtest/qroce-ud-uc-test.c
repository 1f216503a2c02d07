/*
 * qtests of qroce: UD (and the GSI QP) and UC through the device, looped
 * back inside it, and UD multicast: groups, delivery from a peer on the
 * wire and the device's own multicast sends.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "libqtest.h"
#include "libqos/qroce.h"

/*
 * The two CQEs of a 1000-byte UD SEND with immediate from QP @a to QP @b
 * (its first RECV, at buf + 4 KiB): the GRH area and payload of the
 * RECV, the CQE's flags, source QP, source MAC and immediate.
 */
static void ud_check_send_imm(QRoce *t, uint64_t cq_ring, uint32_t *ci,
                              uint32_t a, uint32_t b, uint64_t buf,
                              const uint8_t *pattern)
{
    struct qroce_cqe cqe;
    uint8_t got[1200];
    uint32_t i, j;

    for (i = 0; i < 2; i++) {
        qroce_wait_entry(t, cq_ring, sizeof(cqe), 6, (*ci)++, &cqe);
        g_assert_cmpuint(cqe.status, ==, QROCE_WC_SUCCESS);
        if (cqe.flags & QROCE_CQE_F_SQ) {
            g_assert_cmpuint(le32_to_cpu(cqe.qpn), ==, a);
            g_assert_cmpuint(cqe.opcode, ==, QROCE_CQE_SEND);
            continue;
        }
        g_assert_cmpuint(le32_to_cpu(cqe.qpn), ==, b);
        g_assert_cmpuint(cqe.opcode, ==, QROCE_CQE_RECV);
        g_assert_cmpuint(le32_to_cpu(cqe.wqe_index), ==, 0);
        g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, 40 + 1000);
        g_assert_cmpuint(cqe.flags, ==, QROCE_CQE_F_GRH | QROCE_CQE_F_IPV4 |
                         QROCE_CQE_F_IMM);
        g_assert_cmpuint(le32_to_cpu(cqe.src_qp), ==, a);
        g_assert_cmphex((uint32_t)ldl_be_p(&cqe.imm_data), ==, 0xabcd0000);
        g_assert_true(!memcmp(cqe.smac, "\x52\x54\x00\x12\x34\x56", 6));
        qtest_memread(t->qts, buf + 4096, got, 1040);
        /* GRH area: 20 zero bytes, then the IPv4 header from 10.0.0.1 */
        for (j = 0; j < 20; j++) {
            g_assert_cmpuint(got[j], ==, 0);
        }
        g_assert_cmpuint(got[20], ==, 0x45);
        g_assert_cmpuint(got[29], ==, 17);
        g_assert_true(!memcmp(got + 32, "\x0a\x00\x00\x01", 4));
        g_assert_true(!memcmp(got + 36, "\x0a\x00\x00\x01", 4));
        g_assert_true(!memcmp(got + 40, pattern, 1000));
    }
}

/* The two CQEs of a 256-byte MAD from the GSI QP to itself. */
static void ud_check_gsi_mad(QRoce *t, uint64_t cq_ring, uint32_t *ci,
                             uint64_t buf, const uint8_t *pattern)
{
    struct qroce_cqe cqe;
    uint8_t got[256];
    uint32_t i;

    for (i = 0; i < 2; i++) {
        qroce_wait_entry(t, cq_ring, sizeof(cqe), 6, (*ci)++, &cqe);
        g_assert_cmpuint(cqe.status, ==, QROCE_WC_SUCCESS);
        if (!(cqe.flags & QROCE_CQE_F_SQ)) {
            g_assert_cmpuint(le32_to_cpu(cqe.qpn), ==, 1);
            g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, 296);
            g_assert_cmpuint(le32_to_cpu(cqe.src_qp), ==, 1);
            qtest_memread(t->qts, buf + 4096 + 40, got, 256);
            g_assert_true(!memcmp(got, pattern + 1, 256));
        }
    }
}

/*
 * UD SENDs between two UD QPs and to the GSI QP: the GRH area and payload
 * of the RECV, the CQE's flags, source QP, source MAC and immediate; a
 * wrong Q_Key, a missing AH and a message over the UD MTU; a message
 * longer than the RECV buffer is dropped and the buffer kept.
 */
static void test_ud_loopback(QRoce *t)
{
    struct qroce_cqe cqe;
    uint64_t cq_ring, buf, sqa, rqa, sqb, rqb, sqg, rqg;
    uint32_t pdn, cqn, a, b, g, key, ahn, drops, i;
    uint32_t ci = 0, sa = 0;
    uint8_t pattern[1100];

    qroce_objs_setup(t, QROCE_ACCESS_LOCAL_WRITE, &pdn, &cqn, &cq_ring, &buf,
                     &key);
    g_assert_true(qroce_rd(t, QROCE_REG_FEATURES) & QROCE_FEAT_UD);
    ahn = qroce_mk_self_ah(t, pdn);

    qroce_ud_qp(t, QROCE_QPT_UD, pdn, cqn, 0x1111, &a, &sqa, &rqa);
    qroce_ud_qp(t, QROCE_QPT_UD, pdn, cqn, 0x2222, &b, &sqb, &rqb);
    qroce_ud_qp(t, QROCE_QPT_GSI, pdn, cqn, 0x80010000, &g, &sqg, &rqg);
    g_assert_cmpuint(g, ==, 1);
    for (i = 0; i < sizeof(pattern); i++) {
        pattern[i] = i * 7 + 3;
    }
    qtest_memwrite(t->qts, buf, pattern, sizeof(pattern));
    qroce_post_recv(t, rqb, 0, buf + 4096, 1200, key);
    qroce_post_recv(t, rqb, 1, buf + 4096, 60,
                    key); /* too small for 40 + 100 */
    qroce_db(t, QROCE_DB_RQ, b, 2);
    qroce_post_recv(t, rqg, 0, buf + 4096, 296, key);
    qroce_db(t, QROCE_DB_RQ, g, 1);

    /* a -> b: 1000 bytes with immediate */
    qroce_post_ud(t, sqa, sa, ahn, b, 0x2222, buf, 1000, key);
    qroce_db(t, QROCE_DB_SQ, a, ++sa);
    ud_check_send_imm(t, cq_ring, &ci, a, b, buf, pattern);

    /* a wrong Q_Key is dropped and counted; no RECV is consumed */
    drops = qroce_cnt(t, QROCE_CNT_ROCE_RX_DROPS);
    qroce_post_ud(t, sqa, sa, ahn, b, 0x2223, buf, 10, key);
    qroce_db(t, QROCE_DB_SQ, a, ++sa);
    qroce_wait_entry(t, cq_ring, sizeof(cqe), 6, ci++, &cqe);
    g_assert_true(cqe.flags & QROCE_CQE_F_SQ);
    g_assert_cmpuint(cqe.status, ==, QROCE_WC_SUCCESS);
    qroce_wait_cnt(t, QROCE_CNT_ROCE_RX_DROPS, drops + 1);
    g_assert_false(qroce_entry_ready(t, cq_ring, sizeof(cqe), 6, ci));
    g_assert_cmpuint(qroce_cnt(t, QROCE_CNT_ROCE_RX_DROPS), ==,
                     drops + 1);

    /*
     * GSI QP to GSI QP (QPN 1) with the GSI Q_Key: a 256-byte MAD.  (A UD
     * QP cannot send it: a Q_Key with bit 31 set means the QP's own.)
     */
    qroce_post_ud(t, sqg, 0, ahn, 1, 0x80010000, buf + 1, 256, key);
    qroce_db(t, QROCE_DB_SQ, g, 1);
    ud_check_gsi_mad(t, cq_ring, &ci, buf, pattern);

    /*
     * A message longer than the RECV holds (40 + 100 > 60) is dropped and
     * counted, as hardware drops it: the RECV stays and the next message
     * that fits (40 + 20) completes on it; b stays in RTS.
     */
    drops = qroce_cnt(t, QROCE_CNT_ROCE_RX_DROPS);
    qroce_post_ud(t, sqa, sa, ahn, b, 0x2222, buf, 100, key);
    qroce_db(t, QROCE_DB_SQ, a, ++sa);
    qroce_wait_entry(t, cq_ring, sizeof(cqe), 6, ci++, &cqe);
    g_assert_true(cqe.flags & QROCE_CQE_F_SQ);
    g_assert_cmpuint(cqe.status, ==, QROCE_WC_SUCCESS);
    qroce_wait_cnt(t, QROCE_CNT_ROCE_RX_DROPS, drops + 1);
    g_assert_false(qroce_entry_ready(t, cq_ring, sizeof(cqe), 6, ci));
    qroce_post_ud(t, sqa, sa, ahn, b, 0x2222, buf + 7, 20, key);
    qroce_db(t, QROCE_DB_SQ, a, ++sa);
    for (i = 0; i < 2; i++) {
        qroce_wait_entry(t, cq_ring, sizeof(cqe), 6, ci++, &cqe);
        g_assert_cmpuint(cqe.status, ==, QROCE_WC_SUCCESS);
        if (!(cqe.flags & QROCE_CQE_F_SQ)) {
            g_assert_cmpuint(le32_to_cpu(cqe.qpn), ==, b);
            g_assert_cmpuint(le32_to_cpu(cqe.wqe_index), ==, 1);
            g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, 60);
        }
    }
    g_assert_cmpuint(qroce_qp_state(t, b), ==, QROCE_QPS_RTS);

    /* a message over the UD MTU (1024 at Ethernet MTU 1500) */
    qroce_post_ud(t, sqg, 1, ahn, a, 0x1111, buf, 1025, key);
    qroce_db(t, QROCE_DB_SQ, g, 2);
    qroce_wait_entry(t, cq_ring, sizeof(cqe), 6, ci++, &cqe);
    g_assert_true(cqe.flags & QROCE_CQE_F_SQ);
    g_assert_cmpuint(le32_to_cpu(cqe.qpn), ==, 1);
    g_assert_cmpuint(cqe.status, ==, QROCE_WC_LOC_LEN_ERR);
    g_assert_cmpuint(qroce_qp_state(t, g), ==, QROCE_QPS_ERR);

    /* an AH number that names nothing */
    qroce_post_ud(t, sqa, sa, ahn + 1, b, 0x2222, buf, 10, key);
    qroce_db(t, QROCE_DB_SQ, a, ++sa);
    qroce_wait_entry(t, cq_ring, sizeof(cqe), 6, ci++, &cqe);
    g_assert_true(cqe.flags & QROCE_CQE_F_SQ);
    g_assert_cmpuint(cqe.status, ==, QROCE_WC_LOC_QP_OP_ERR);
    g_assert_cmpuint(qroce_qp_state(t, a), ==, QROCE_QPS_ERR);
}

/*
 * UC SENDs over several packets: the sender completes without an ACK; a
 * message with no RECV WQE is dropped (no RNR, no error) and the next one
 * lands; an RDMA READ on UC is refused with LOC_QP_OP_ERR.
 */
static void test_uc_loopback(QRoce *t)
{
    struct qroce_send_wqe h = {};
    struct qroce_cqe cqe;
    uint64_t cq_ring, buf, sqa, rqa, sqb, rqb;
    uint32_t pdn, cqn, a, b, key, drops, i, ci = 0;
    uint8_t pattern[1000], got[1000];

    qroce_objs_setup(t, QROCE_ACCESS_LOCAL_WRITE, &pdn, &cqn, &cq_ring, &buf,
                     &key);
    g_assert_true(qroce_rd(t, QROCE_REG_FEATURES) & QROCE_FEAT_UC);
    g_assert_cmpuint(qroce_mk_qp_rings(t, QROCE_QPT_UC, pdn, cqn, cqn, 0, &a,
                                       &sqa, &rqa), ==, 0);
    g_assert_cmpuint(qroce_mk_qp_rings(t, QROCE_QPT_UC, pdn, cqn, cqn, 0, &b,
                                       &sqb, &rqb), ==, 0);
    qroce_uc_connect(t, a, b);
    qroce_uc_connect(t, b, a);
    for (i = 0; i < sizeof(pattern); i++) {
        pattern[i] = i * 5 + 9;
    }
    qtest_memwrite(t->qts, buf, pattern, sizeof(pattern));

    /* no RECV WQE on b: 1000 bytes (4 packets) sent, completed, dropped */
    drops = qroce_cnt(t, QROCE_CNT_ROCE_RX_DROPS);
    qroce_post_send(t, sqa, 0, buf, 1000, key, QROCE_WQE_SIGNALED);
    qroce_db(t, QROCE_DB_SQ, a, 1);
    qroce_wait_entry(t, cq_ring, sizeof(cqe), 6, ci++, &cqe);
    g_assert_true(cqe.flags & QROCE_CQE_F_SQ);
    g_assert_cmpuint(cqe.status, ==, QROCE_WC_SUCCESS);
    g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, 1000);
    qroce_wait_cnt(t, QROCE_CNT_ROCE_RX_DROPS, drops + 4);
    g_assert_false(qroce_entry_ready(t, cq_ring, sizeof(cqe), 6, ci));
    g_assert_cmpuint(qroce_cnt(t, QROCE_CNT_ROCE_RX_DROPS), ==,
                     drops + 4);
    g_assert_cmpuint(qroce_qp_state(t, b), ==, QROCE_QPS_RTS);

    /* with a RECV WQE the next message lands whole */
    qroce_post_recv(t, rqb, 0, buf + 4096, 1000, key);
    qroce_db(t, QROCE_DB_RQ, b, 1);
    qroce_post_send(t, sqa, 1, buf, 1000, key, QROCE_WQE_SIGNALED);
    qroce_db(t, QROCE_DB_SQ, a, 2);
    for (i = 0; i < 2; i++) {
        qroce_wait_entry(t, cq_ring, sizeof(cqe), 6, ci++, &cqe);
        g_assert_cmpuint(cqe.status, ==, QROCE_WC_SUCCESS);
        if (!(cqe.flags & QROCE_CQE_F_SQ)) {
            g_assert_cmpuint(le32_to_cpu(cqe.qpn), ==, b);
            g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, 1000);
        }
    }
    qtest_memread(t->qts, buf + 4096, got, sizeof(got));
    g_assert_true(!memcmp(got, pattern, sizeof(got)));

    /* RDMA READ has no UC opcode */
    h.opcode = QROCE_WR_RDMA_READ;
    h.flags = QROCE_WQE_SIGNALED;
    qroce_put_send_wqe(t, sqa, 2, &h, buf, 8, key);
    qroce_db(t, QROCE_DB_SQ, a, 3);
    qroce_wait_entry(t, cq_ring, sizeof(cqe), 6, ci++, &cqe);
    g_assert_cmpuint(cqe.status, ==, QROCE_WC_LOC_QP_OP_ERR);
    g_assert_cmpuint(qroce_qp_state(t, a), ==, QROCE_QPS_ERR);
}

/* ATTACH_MCAST or DETACH_MCAST of QP @qpn and group @gid: the status. */
static int mcast_cmd(QRoce *t, uint8_t op, uint32_t qpn,
                     const uint8_t gid[16], uint32_t rsvd)
{
    struct qroce_cmd c = { .hdr.opcode = op };

    c.mcast.qpn = cpu_to_le32(qpn);
    c.mcast.rsvd = cpu_to_le32(rsvd);
    memcpy(c.mcast.gid, gid, 16);
    return qroce_cmd(t, &c, NULL);
}

/* The peer sends a 100-byte UD SEND to group @ip (a.b.c.d) at MAC @mac. */
static void peer_mcast(QRocePeer *pr, const uint8_t ip[4], const uint8_t mac[6],
                       uint32_t qkey)
{
    RocePktOut o;
    uint8_t gid[16] = { [10] = 0xff, [11] = 0xff };

    memcpy(gid + 12, ip, 4);
    qroce_peer_out(pr, &o, 0xffffff, 0, ROCE_UD_SEND_ONLY);
    o.dmac = mac;
    o.dgid = gid;
    o.deth_qkey = qkey;
    o.deth_sqp = 0x55;
    qroce_peer_send(pr, &o, 100, false);
}

/*
 * A group of two UD QPs gets each multicast packet on both, each taking a
 * RECV; a group of another host, or the right group at a wrong MAC, is
 * not taken; after a detach only the QP left gets it.  Errors: an RC QP,
 * a unicast GID, no such QP, reserved bits, a detach of a QP not
 * attached; attaching twice succeeds.
 */
static void test_mcast(QRoce *t)
{
    static const uint8_t ip[4] = { 239, 1, 1, 1 }, other[4] = { 239, 9, 9, 9 };
    static const uint8_t mac[6] = { 0x01, 0x00, 0x5e, 0x01, 0x01, 0x01 };
    static const uint8_t mac_other[6] = { 0x01, 0x00, 0x5e, 0x09, 0x09, 0x09 };
    static const uint8_t bad_mac[6] = { 0x01, 0x00, 0x5e, 0x7f, 0x01, 0x01 };
    uint8_t gid[16] = { [10] = 0xff, [11] = 0xff }, ucast[16];
    QRocePeer *pr = &t->peer;
    struct qroce_cqe cqe;
    uint64_t cq, buf, sqa, rqa, sqb, rqb, sqr, rqr;
    uint32_t out[6], pdn, cqn, key, a, b, r, i, ci = 0, seen = 0, eth_drops;

    memcpy(gid + 12, ip, 4);
    memcpy(ucast, gid, 16);
    ucast[12] = 10;
    qroce_objs_setup(t, QROCE_ACCESS_LOCAL_WRITE, &pdn, &cqn, &cq, &buf, &key);
    g_assert_true(qroce_rd(t, QROCE_REG_FEATURES) & QROCE_FEAT_MCAST);
    g_assert_cmpuint(qroce_rd(t, QROCE_REG_CAP_MAX_MCAST_GRP), ==, 64);
    g_assert_cmpuint(qroce_rd(t, QROCE_REG_CAP_MAX_MCAST_QP_ATTACH), ==, 8);
    qroce_ud_qp(t, QROCE_QPT_UD, pdn, cqn, 0x1234, &a, &sqa, &rqa);
    qroce_ud_qp(t, QROCE_QPT_UD, pdn, cqn, 0x1234, &b, &sqb, &rqb);
    g_assert_cmpuint(qroce_mk_qp_rings(t, QROCE_QPT_RC, pdn, cqn, cqn, 0, &r,
                                       &sqr, &rqr), ==, 0);

    g_assert_cmpuint(mcast_cmd(t, QROCE_CMD_ATTACH_MCAST, r, gid, 0), ==,
                     QROCE_CMD_ERR_PARAM);
    g_assert_cmpuint(mcast_cmd(t, QROCE_CMD_ATTACH_MCAST, a, ucast, 0), ==,
                     QROCE_CMD_ERR_PARAM);
    g_assert_cmpuint(mcast_cmd(t, QROCE_CMD_ATTACH_MCAST, 999, gid, 0), ==,
                     QROCE_CMD_ERR_HANDLE);
    g_assert_cmpuint(mcast_cmd(t, QROCE_CMD_ATTACH_MCAST, a, gid, 1), ==,
                     QROCE_CMD_ERR_PARAM);
    g_assert_cmpuint(mcast_cmd(t, QROCE_CMD_DETACH_MCAST, a, gid, 0), ==,
                     QROCE_CMD_ERR_PARAM);
    g_assert_cmpuint(mcast_cmd(t, QROCE_CMD_ATTACH_MCAST, a, gid, 0), ==, 0);
    g_assert_cmpuint(mcast_cmd(t, QROCE_CMD_ATTACH_MCAST, a, gid, 0), ==, 0);
    g_assert_cmpuint(mcast_cmd(t, QROCE_CMD_ATTACH_MCAST, b, gid, 0), ==, 0);

    for (i = 0; i < 3; i++) {
        qroce_post_recv(t, rqa, i, buf + 256 * i, 256, key);
        qroce_post_recv(t, rqb, i, buf + 4096 + 256 * i, 256, key);
    }
    qroce_db(t, QROCE_DB_RQ, a, 3);
    qroce_db(t, QROCE_DB_RQ, b, 3);

    /* another group, then our group at a wrong MAC: neither is taken */
    peer_mcast(pr, other, mac_other, 0x1234);
    peer_mcast(pr, ip, bad_mac, 0x1234);
    peer_mcast(pr, ip, mac, 0x1234);
    for (i = 0; i < 2; i++) {
        qroce_wait_entry(t, cq, sizeof(cqe), 6, ci++, &cqe);
        g_assert_cmpuint(cqe.status, ==, QROCE_WC_SUCCESS);
        g_assert_cmpuint(cqe.opcode, ==, QROCE_CQE_RECV);
        g_assert_cmpuint(le32_to_cpu(cqe.wqe_index), ==, 0);
        g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, 40 + 100);
        g_assert_cmpuint(le32_to_cpu(cqe.src_qp), ==, 0x55);
        r = le32_to_cpu(cqe.qpn);
        seen |= r == a ? 1 : r == b ? 2 : 4;
    }
    g_assert_cmpuint(seen, ==, 3);
    /* the group's frame came last: the device has had them all */
    qroce_sync(t);
    g_assert_false(qroce_entry_ready(t, cq, sizeof(cqe), 6, ci));

    /* B leaves: only A gets the next one, with its second RECV */
    g_assert_cmpuint(mcast_cmd(t, QROCE_CMD_DETACH_MCAST, b, gid, 0), ==, 0);
    g_assert_cmpuint(mcast_cmd(t, QROCE_CMD_DETACH_MCAST, b, gid, 0), ==,
                     QROCE_CMD_ERR_PARAM);
    peer_mcast(pr, ip, mac, 0x1234);
    qroce_wait_entry(t, cq, sizeof(cqe), 6, ci++, &cqe);
    g_assert_cmpuint(le32_to_cpu(cqe.qpn), ==, a);
    g_assert_cmpuint(le32_to_cpu(cqe.wqe_index), ==, 1);
    qroce_sync(t);
    g_assert_false(qroce_entry_ready(t, cq, sizeof(cqe), 6, ci));

    /*
     * A destroyed: it leaves the group, which goes; nothing is taken (a
     * frame for a group the device does not hold is the Ethernet
     * function's, which has no ring: a drop there)
     */
    g_assert_cmpuint(qroce_cmd_simple(t, QROCE_CMD_DESTROY_QP, a, out), ==, 0);
    g_assert_cmpuint(mcast_cmd(t, QROCE_CMD_DETACH_MCAST, b, gid, 0), ==,
                     QROCE_CMD_ERR_PARAM);
    eth_drops = qroce_cnt(t, QROCE_CNT_ETH_RX_DROPS);
    peer_mcast(pr, ip, mac, 0x1234);
    qroce_wait_cnt(t, QROCE_CNT_ETH_RX_DROPS, eth_drops + 1);
    qroce_sync(t);
    g_assert_false(qroce_entry_ready(t, cq, sizeof(cqe), 6, ci));
}

/* CREATE_AH on @pdn to group @gid at @mac: the status, the AH in *@ahn. */
static int mk_mcast_ah(QRoce *t, uint32_t pdn, const uint8_t gid[16],
                       const uint8_t mac[6], uint32_t *ahn)
{
    struct qroce_cmd c = { .hdr.opcode = QROCE_CMD_CREATE_AH };
    uint32_t out[6] = {};
    int st;

    c.create_ah.pdn = cpu_to_le32(pdn);
    qroce_self_av(&c.create_ah.av);
    memcpy(c.create_ah.av.dgid, gid, 16);
    memcpy(c.create_ah.av.dmac, mac, 6);
    st = qroce_cmd(t, &c, out);
    *ahn = out[0];
    return st;
}

/*
 * UD QP @a sends to the group @gid (IPv4, at @mac) through @ahn: the
 * group's frame goes on the wire, and @a and @b get a copy each.
 */
static void mcast_loop_send(QRoce *t, uint64_t cq, uint32_t *ci, uint64_t sqa,
                            uint32_t a, uint32_t b, uint32_t ahn,
                            const uint8_t gid[16], const uint8_t mac[6],
                            uint64_t buf, uint32_t key)
{
    QRocePeer *pr = &t->peer;
    struct qroce_cqe cqe;
    uint8_t f[2048];
    RocePktIn p;
    uint32_t i, got_a = 0, got_b = 0;

    qroce_post_ud(t, sqa, 0, ahn, 0xffffff, 0x1234, buf, 64, key);
    qroce_db(t, QROCE_DB_SQ, a, 1);
    qroce_peer_recv(pr, f, &p);
    g_assert_true(!memcmp(f, mac, 6));
    g_assert_cmphex(p.dqpn, ==, 0xffffff);
    g_assert_true(!memcmp(p.dgid, gid, 16));
    g_assert_cmpuint(p.deth_sqp, ==, a);
    g_assert_cmpuint(p.paylen, ==, 64);
    for (i = 0; i < 3; i++) {
        qroce_wait_entry(t, cq, sizeof(cqe), 6, (*ci)++, &cqe);
        g_assert_cmpuint(cqe.status, ==, QROCE_WC_SUCCESS);
        if (cqe.flags & QROCE_CQE_F_SQ) {
            g_assert_cmpuint(le32_to_cpu(cqe.qpn), ==, a);
            continue;
        }
        g_assert_cmpuint(le32_to_cpu(cqe.src_qp), ==, a);
        g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, 40 + 64);
        got_a += le32_to_cpu(cqe.qpn) == a;
        got_b += le32_to_cpu(cqe.qpn) == b;
    }
    g_assert_cmpuint(got_a, ==, 1);
    g_assert_cmpuint(got_b, ==, 1);
}

/*
 * The device's own multicast sends, as rxe and mlx5 do them: the frame
 * goes on the wire to the group's MAC with DQP 0xFFFFFF, and every QP of
 * the device attached to the group gets a copy, the sender too unless it
 * was created with BLOCK_MCAST_LB (a UD flag only).  The wire's echo of
 * our own frame is not a second copy; a member without a RECV drops its
 * copy of a peer's packet and counts it.  An AH to a group must hold
 * the group's MAC.
 */
static void test_mcast_loop(QRoce *t)
{
    static const uint8_t ip[4] = { 239, 1, 1, 1 };
    static const uint8_t mac[6] = { 0x01, 0x00, 0x5e, 0x01, 0x01, 0x01 };
    static const uint8_t gid6[16] = { 0xff, 0x0e, [12] = 0x80, 1, 2, 3 };
    static const uint8_t mac6[6] = { 0x33, 0x33, 0x80, 1, 2, 3 };
    uint8_t gid[16] = { [10] = 0xff, [11] = 0xff }, f[2048];
    QRocePeer *pr = &t->peer;
    RocePktOut o;
    RocePktIn p;
    struct qroce_cqe cqe;
    uint64_t cq, buf, sqa, rqa, sqb, rqb, sqr, rqr;
    uint32_t pdn, cqn, key, a, b, r, ahn, i, drops, ci = 0;

    memcpy(gid + 12, ip, 4);
    qroce_objs_setup(t, QROCE_ACCESS_LOCAL_WRITE, &pdn, &cqn, &cq, &buf, &key);
    qroce_ud_qp(t, QROCE_QPT_UD, pdn, cqn, 0x1234, &a, &sqa, &rqa);
    t->qp_flags = QROCE_CREATE_QP_BLOCK_MCAST_LB;
    g_assert_cmpuint(qroce_mk_qp_rings(t, QROCE_QPT_RC, pdn, cqn, cqn, 0, &r,
                                       &sqr, &rqr), ==, QROCE_CMD_ERR_PARAM);
    qroce_ud_qp(t, QROCE_QPT_UD, pdn, cqn, 0x1234, &b, &sqb, &rqb);
    t->qp_flags = 0;
    g_assert_cmpuint(mcast_cmd(t, QROCE_CMD_ATTACH_MCAST, a, gid, 0), ==, 0);
    g_assert_cmpuint(mcast_cmd(t, QROCE_CMD_ATTACH_MCAST, b, gid, 0), ==, 0);
    /* an AH to a group must name the group's MAC (IPv4 01:00:5e, IPv6 33:33) */
    g_assert_cmpuint(mk_mcast_ah(t, pdn, gid, qroce_dev_mac, &ahn), ==,
                     QROCE_CMD_ERR_PARAM);
    g_assert_cmpuint(mk_mcast_ah(t, pdn, gid6, mac, &ahn), ==,
                     QROCE_CMD_ERR_PARAM);
    g_assert_cmpuint(mk_mcast_ah(t, pdn, gid6, mac6, &ahn), ==, 0);
    g_assert_cmpuint(mk_mcast_ah(t, pdn, gid, mac, &ahn), ==, 0);
    for (i = 0; i < 2; i++) {
        qroce_post_recv(t, rqa, i, buf + 4096 + 256 * i, 256, key);
        qroce_post_recv(t, rqb, i, buf + 4096 + 512 + 256 * i, 256, key);
    }
    qroce_db(t, QROCE_DB_RQ, a, 2);
    qroce_db(t, QROCE_DB_RQ, b, 2);

    /* A sends: the group's frame on the wire, a copy for A and for B */
    mcast_loop_send(t, cq, &ci, sqa, a, b, ahn, gid, mac, buf, key);

    /* B blocks its own copies: only A gets B's send */
    qroce_post_ud(t, sqb, 0, ahn, 0xffffff, 0x1234, buf, 64, key);
    qroce_db(t, QROCE_DB_SQ, b, 1);
    qroce_peer_recv(pr, f, &p);
    g_assert_cmpuint(p.deth_sqp, ==, b);
    for (i = 0; i < 2; i++) {
        qroce_wait_entry(t, cq, sizeof(cqe), 6, ci++, &cqe);
        g_assert_cmpuint(cqe.status, ==, QROCE_WC_SUCCESS);
        g_assert_cmpuint(le32_to_cpu(cqe.qpn), ==,
                         cqe.flags & QROCE_CQE_F_SQ ? b : a);
        if (!(cqe.flags & QROCE_CQE_F_SQ)) {
            g_assert_cmpuint(le32_to_cpu(cqe.src_qp), ==, b);
            g_assert_cmpuint(le32_to_cpu(cqe.wqe_index), ==, 1);
        }
    }
    qroce_sync(t);
    g_assert_false(qroce_entry_ready(t, cq, sizeof(cqe), 6, ci));

    /*
     * An echo of our own frame from the wire is ignored; a peer's frame
     * reaches B (its second RECV) and A, out of RECVs, drops it.
     */
    drops = qroce_cnt(t, QROCE_CNT_ROCE_RX_DROPS);
    qroce_peer_out(pr, &o, 0xffffff, 0, ROCE_UD_SEND_ONLY);
    o.dmac = mac;
    o.smac = qroce_dev_mac;
    o.dgid = gid;
    o.deth_qkey = 0x1234;
    o.deth_sqp = a;
    qroce_peer_send(pr, &o, 100, false);
    peer_mcast(pr, ip, mac, 0x1234);
    qroce_wait_entry(t, cq, sizeof(cqe), 6, ci++, &cqe);
    g_assert_cmpuint(le32_to_cpu(cqe.qpn), ==, b);
    g_assert_cmpuint(le32_to_cpu(cqe.src_qp), ==, 0x55);
    g_assert_cmpuint(le32_to_cpu(cqe.wqe_index), ==, 1);
    qroce_wait_cnt(t, QROCE_CNT_ROCE_RX_DROPS, drops + 1);
    qroce_sync(t);
    g_assert_false(qroce_entry_ready(t, cq, sizeof(cqe), 6, ci));
    g_assert_cmpuint(qroce_cnt(t, QROCE_CNT_ROCE_RX_DROPS), ==,
                     drops + 1);
}

/*
 * The group table's bounds are device properties, read back as CAP
 * registers: with 2 groups of 2 QPs, a third QP in a group and a third
 * group are ERR_NORES (attaching a member again still succeeds); a
 * detach or a DESTROY_QP makes room again.
 */
static void test_mcast_limits(QRoce *t)
{
    uint8_t g1[16] = { [10] = 0xff, [11] = 0xff, 239, 1, 1, 1 };
    uint8_t g2[16], g3[16];
    uint64_t cq, buf, sq, rq;
    uint32_t out[6], pdn, cqn, key, a, b, c;

    memcpy(g2, g1, 16);
    g2[15] = 2;
    memcpy(g3, g1, 16);
    g3[15] = 3;
    qroce_objs_setup(t, QROCE_ACCESS_LOCAL_WRITE, &pdn, &cqn, &cq, &buf, &key);
    g_assert_cmpuint(qroce_rd(t, QROCE_REG_CAP_MAX_MCAST_GRP), ==, 2);
    g_assert_cmpuint(qroce_rd(t, QROCE_REG_CAP_MAX_MCAST_QP_ATTACH), ==, 2);
    qroce_ud_qp(t, QROCE_QPT_UD, pdn, cqn, 0x1234, &a, &sq, &rq);
    qroce_ud_qp(t, QROCE_QPT_UD, pdn, cqn, 0x1234, &b, &sq, &rq);
    qroce_ud_qp(t, QROCE_QPT_UD, pdn, cqn, 0x1234, &c, &sq, &rq);

    g_assert_cmpuint(mcast_cmd(t, QROCE_CMD_ATTACH_MCAST, a, g1, 0), ==, 0);
    g_assert_cmpuint(mcast_cmd(t, QROCE_CMD_ATTACH_MCAST, b, g1, 0), ==, 0);
    g_assert_cmpuint(mcast_cmd(t, QROCE_CMD_ATTACH_MCAST, c, g1, 0), ==,
                     QROCE_CMD_ERR_NORES);
    g_assert_cmpuint(mcast_cmd(t, QROCE_CMD_ATTACH_MCAST, a, g1, 0), ==, 0);
    g_assert_cmpuint(mcast_cmd(t, QROCE_CMD_ATTACH_MCAST, a, g2, 0), ==, 0);
    g_assert_cmpuint(mcast_cmd(t, QROCE_CMD_ATTACH_MCAST, a, g3, 0), ==,
                     QROCE_CMD_ERR_NORES);
    g_assert_cmpuint(mcast_cmd(t, QROCE_CMD_DETACH_MCAST, a, g2, 0), ==, 0);
    g_assert_cmpuint(mcast_cmd(t, QROCE_CMD_ATTACH_MCAST, a, g3, 0), ==, 0);

    /* A goes: g3 with it, and g1 has room for C */
    g_assert_cmpuint(qroce_cmd_simple(t, QROCE_CMD_DESTROY_QP, a, out), ==, 0);
    g_assert_cmpuint(mcast_cmd(t, QROCE_CMD_ATTACH_MCAST, c, g1, 0), ==, 0);
    g_assert_cmpuint(mcast_cmd(t, QROCE_CMD_ATTACH_MCAST, c, g2, 0), ==, 0);
    g_assert_cmpuint(mcast_cmd(t, QROCE_CMD_ATTACH_MCAST, b, g3, 0), ==,
                     QROCE_CMD_ERR_NORES);
}

static const QRoceCase cases[] = {
    { "ud-uc/ud-send-grh-qkey-mtu-ah-checks", test_ud_loopback, NULL,
      NULL },
    { "ud-uc/uc-send-without-recv-dropped-no-read", test_uc_loopback, NULL,
      NULL },
    { "ud-uc/mcast-group-delivery-from-wire", test_mcast, NULL,
      qroce_peer_prepare },
    { "ud-uc/mcast-own-sends-loop-to-members", test_mcast_loop, NULL,
      qroce_peer_prepare },
    { "ud-uc/mcast-group-limits-are-properties", test_mcast_limits,
      "-global qroce.mcast-max-groups=2 -global qroce.mcast-max-qp-attach=2",
      NULL },
};

static void register_qroce_ud_uc_tests(void)
{
    qroce_add_tests(cases, ARRAY_SIZE(cases));
}

libqos_init(register_qroce_ud_uc_tests);
