/*
 * qtests of qroce: the command queue, each command and the status of
 * each error, the QP state machine per QP type, EQ overflow and CQ resize.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "libqtest.h"
#include "libqos/qroce.h"

#define M(x) QROCE_QP_ATTR_##x

/* Unknown opcodes and header flags are refused. */
static void commands_bad_header(QRoce *t)
{
    struct qroce_cmd c;

    memset(&c, 0, sizeof(c));
    c.hdr.opcode = 0x7f;
    g_assert_cmpuint(qroce_cmd(t, &c, NULL), ==, QROCE_CMD_ERR_OPCODE);
    memset(&c, 0, sizeof(c));
    c.hdr.opcode = QROCE_CMD_NOP;
    c.hdr.flags = 1;
    g_assert_cmpuint(qroce_cmd(t, &c, NULL), ==, QROCE_CMD_ERR_PARAM);
}

/* PD: a number; DEALLOC_PD of one that does not exist. */
static uint32_t commands_pd(QRoce *t)
{
    uint32_t pdn;

    pdn = qroce_alloc_pd(t);
    g_assert_cmpuint(pdn, >, 0);
    g_assert_cmpuint(qroce_cmd_simple(t, QROCE_CMD_DEALLOC_PD, 999, NULL), ==,
                     QROCE_CMD_ERR_HANDLE);
    g_assert_cmpuint(qroce_cmd_simple(t, QROCE_CMD_DEALLOC_PD, 1u << 30, NULL),
                     ==, QROCE_CMD_ERR_HANDLE);
    return pdn;
}

/* EQ: a size out of range, a good one, the same EQ again. */
static void commands_eq(QRoce *t)
{
    struct qroce_cmd c;
    uint64_t eqring;

    eqring = qroce_pages(t, 1);
    memset(&c, 0, sizeof(c));
    c.hdr.opcode = QROCE_CMD_CREATE_EQ;
    c.create_eq.eqn = cpu_to_le32(1);
    c.create_eq.log2_entries = 2;
    c.create_eq.ring.addr = cpu_to_le64(eqring);
    c.create_eq.ring.npages = cpu_to_le32(1);
    c.create_eq.ring.page_shift = 12;
    c.create_eq.ring.level = QROCE_BT_CONTIG;
    g_assert_cmpuint(qroce_cmd(t, &c, NULL), ==, QROCE_CMD_ERR_PARAM);
    c.create_eq.log2_entries = 8;
    g_assert_cmpuint(qroce_cmd(t, &c, NULL), ==, QROCE_CMD_OK);
    g_assert_cmpuint(qroce_cmd(t, &c, NULL), ==, QROCE_CMD_ERR_BUSY);
}

/* CQ: a ring too small for its entries, a misaligned page, no such EQ. */
static uint32_t commands_cq(QRoce *t)
{
    struct qroce_cmd c;
    uint32_t out[6], cqn;
    uint64_t cqring;

    cqring = qroce_pages(t, 2);
    memset(&c, 0, sizeof(c));
    c.hdr.opcode = QROCE_CMD_CREATE_CQ;
    c.create_cq.eqn = cpu_to_le32(1);
    c.create_cq.log2_entries = 8;     /* 8 KiB + 64 B: needs 3 pages */
    c.create_cq.ring.addr = cpu_to_le64(cqring);
    c.create_cq.ring.npages = cpu_to_le32(2);
    c.create_cq.ring.page_shift = 12;
    c.create_cq.ring.level = QROCE_BT_CONTIG;
    g_assert_cmpuint(qroce_cmd(t, &c, NULL), ==, QROCE_CMD_ERR_PARAM);
    c.create_cq.log2_entries = 6;     /* 2 KiB + 64 B: one page, exactly */
    c.create_cq.ring.npages = cpu_to_le32(2);
    g_assert_cmpuint(qroce_cmd(t, &c, NULL), ==, QROCE_CMD_ERR_PARAM);
    c.create_cq.ring.npages = cpu_to_le32(1);
    c.create_cq.ring.addr = cpu_to_le64(cqring + 8);
    g_assert_cmpuint(qroce_cmd(t, &c, NULL), ==, QROCE_CMD_ERR_PARAM);
    c.create_cq.ring.addr = cpu_to_le64(cqring);
    c.create_cq.eqn = cpu_to_le32(3);  /* no such EQ */
    g_assert_cmpuint(qroce_cmd(t, &c, NULL), ==, QROCE_CMD_ERR_HANDLE);
    c.create_cq.eqn = cpu_to_le32(1);
    g_assert_cmpuint(qroce_cmd(t, &c, out), ==, QROCE_CMD_OK);
    cqn = out[0];
    return cqn;
}

/* QP: a bad PD, a bad WQE size; its CQ is busy; RESET -> INIT. */
static uint32_t commands_qp(QRoce *t, uint32_t pdn, uint32_t cqn)
{
    struct qroce_cmd c;
    uint32_t out[6], qpn;
    uint64_t sq, rq;

    sq = qroce_pages(t, 1);
    rq = qroce_pages(t, 1);
    memset(&c, 0, sizeof(c));
    c.hdr.opcode = QROCE_CMD_CREATE_QP;
    c.create_qp.pdn = cpu_to_le32(pdn + 100);
    c.create_qp.send_cqn = cpu_to_le32(cqn);
    c.create_qp.recv_cqn = cpu_to_le32(cqn);
    c.create_qp.type = QROCE_QPT_RC;
    c.create_qp.sq_log2_entries = 6;
    c.create_qp.sq_wqe_shift = 6;
    c.create_qp.rq_log2_entries = 7;
    c.create_qp.rq_wqe_shift = 5;
    c.create_qp.sq = qroce_bt(sq, 1);
    c.create_qp.rq = qroce_bt(rq, 1);
    g_assert_cmpuint(qroce_cmd(t, &c, NULL), ==, QROCE_CMD_ERR_HANDLE);
    c.create_qp.pdn = cpu_to_le32(pdn);
    c.create_qp.sq_wqe_shift = 11;
    g_assert_cmpuint(qroce_cmd(t, &c, NULL), ==, QROCE_CMD_ERR_PARAM);
    c.create_qp.sq_wqe_shift = 6;
    g_assert_cmpuint(qroce_cmd(t, &c, out), ==, QROCE_CMD_OK);
    qpn = out[0];
    g_assert_cmpuint(qpn, >=, 2);
    g_assert_cmpuint(qroce_cmd_simple(t, QROCE_CMD_DESTROY_CQ, cqn, NULL), ==,
                     QROCE_CMD_ERR_BUSY);

    memset(&c, 0, sizeof(c));
    c.hdr.opcode = QROCE_CMD_MODIFY_QP;
    c.modify_qp.qpn = cpu_to_le32(qpn);
    c.modify_qp.attr_mask = cpu_to_le32(QROCE_QP_ATTR_STATE);
    c.modify_qp.new_state = QROCE_QPS_RTR;   /* RESET -> RTR: illegal */
    g_assert_cmpuint(qroce_cmd(t, &c, NULL), ==, QROCE_CMD_ERR_STATE);
    c.modify_qp.new_state = QROCE_QPS_INIT;  /* required attrs missing */
    g_assert_cmpuint(qroce_cmd(t, &c, NULL), ==, QROCE_CMD_ERR_STATE);
    c.modify_qp.attr_mask = cpu_to_le32(QROCE_QP_ATTR_STATE |
                                        QROCE_QP_ATTR_PKEY_INDEX |
                                        QROCE_QP_ATTR_PORT |
                                        QROCE_QP_ATTR_ACCESS_FLAGS);
    c.modify_qp.access_flags = cpu_to_le32(0x100);   /* unknown flag */
    g_assert_cmpuint(qroce_cmd(t, &c, NULL), ==, QROCE_CMD_ERR_PARAM);
    c.modify_qp.access_flags = cpu_to_le32(QROCE_ACCESS_REMOTE_WRITE);
    g_assert_cmpuint(qroce_cmd(t, &c, NULL), ==, QROCE_CMD_OK);
    memset(&c, 0, sizeof(c));
    c.hdr.opcode = QROCE_CMD_QUERY_QP;
    c.qpn.qpn = cpu_to_le32(qpn);
    g_assert_cmpuint(qroce_cmd(t, &c, out), ==, QROCE_CMD_OK);
    g_assert_cmpuint(out[0], ==, QROCE_QPS_INIT);
    return qpn;
}

/* SET_GID; INIT -> RTR needs a source GID, RC's attributes, a good MTU. */
static void commands_qp_rtr(QRoce *t, uint32_t qpn)
{
    struct qroce_cmd c;

    /* INIT -> RTR needs an AV whose source GID exists: none is set */
    memset(&c, 0, sizeof(c));
    c.hdr.opcode = QROCE_CMD_MODIFY_QP;
    c.modify_qp.qpn = cpu_to_le32(qpn);
    c.modify_qp.attr_mask = cpu_to_le32(
        QROCE_QP_ATTR_STATE | QROCE_QP_ATTR_AV | QROCE_QP_ATTR_PATH_MTU |
        QROCE_QP_ATTR_DEST_QPN | QROCE_QP_ATTR_RQ_PSN |
        QROCE_QP_ATTR_MAX_DEST_RD_ATOMIC | QROCE_QP_ATTR_MIN_RNR_TIMER);
    c.modify_qp.new_state = QROCE_QPS_RTR;
    c.modify_qp.path_mtu = QROCE_MTU_4096;
    c.modify_qp.av.net_type = QROCE_NET_IPV4;
    g_assert_cmpuint(qroce_cmd(t, &c, NULL), ==, QROCE_CMD_ERR_PARAM);
    memset(&c, 0, sizeof(c));
    c.hdr.opcode = QROCE_CMD_SET_GID;
    c.set_gid.type = QROCE_GID_ROCE_V2;
    c.set_gid.index = cpu_to_le32(QROCE_DEF_MAX_GID);
    g_assert_cmpuint(qroce_cmd(t, &c, NULL), ==, QROCE_CMD_ERR_PARAM);
    c.set_gid.index = cpu_to_le32(1);
    c.set_gid.gid[10] = c.set_gid.gid[11] = 0xff;
    c.set_gid.gid[12] = 10;
    c.set_gid.gid[15] = 1;
    g_assert_cmpuint(qroce_cmd(t, &c, NULL), ==, QROCE_CMD_OK);
    memset(&c, 0, sizeof(c));
    c.hdr.opcode = QROCE_CMD_MODIFY_QP;
    c.modify_qp.qpn = cpu_to_le32(qpn);
    c.modify_qp.attr_mask = cpu_to_le32(
        QROCE_QP_ATTR_STATE | QROCE_QP_ATTR_AV | QROCE_QP_ATTR_PATH_MTU |
        QROCE_QP_ATTR_DEST_QPN | QROCE_QP_ATTR_RQ_PSN);
    c.modify_qp.new_state = QROCE_QPS_RTR;
    c.modify_qp.path_mtu = QROCE_MTU_4096;
    c.modify_qp.av.net_type = QROCE_NET_IPV4;
    c.modify_qp.av.sgid_index = 1;
    /* RC also requires MAX_DEST_RD_ATOMIC and MIN_RNR_TIMER (UC does not) */
    g_assert_cmpuint(qroce_cmd(t, &c, NULL), ==, QROCE_CMD_ERR_STATE);
    c.modify_qp.attr_mask = cpu_to_le32(
        QROCE_QP_ATTR_STATE | QROCE_QP_ATTR_AV | QROCE_QP_ATTR_PATH_MTU |
        QROCE_QP_ATTR_DEST_QPN | QROCE_QP_ATTR_RQ_PSN |
        QROCE_QP_ATTR_MAX_DEST_RD_ATOMIC | QROCE_QP_ATTR_MIN_RNR_TIMER);
    c.modify_qp.path_mtu = QROCE_MTU_4096 + 1;
    c.modify_qp.av.net_type = QROCE_NET_IPV4;
    c.modify_qp.av.sgid_index = 1;
    g_assert_cmpuint(qroce_cmd(t, &c, NULL), ==, QROCE_CMD_ERR_PARAM);
    c.modify_qp.path_mtu = QROCE_MTU_4096;
    g_assert_cmpuint(qroce_cmd(t, &c, NULL), ==, QROCE_CMD_OK);
}

/* MR: an inline page list and what it may not be; the PD is busy. */
static void commands_mr(QRoce *t, uint32_t pdn)
{
    struct qroce_cmd c;
    uint32_t out[6], key;
    uint64_t buf;

    buf = qroce_pages(t, 2);
    memset(&c, 0, sizeof(c));
    c.hdr.opcode = QROCE_CMD_REG_MR;
    c.reg_mr.pdn = cpu_to_le32(pdn);
    c.reg_mr.access = cpu_to_le32(QROCE_ACCESS_LOCAL_WRITE);
    c.reg_mr.iova = cpu_to_le64(0x7f0000001000ULL);
    c.reg_mr.length = cpu_to_le64(8192);
    c.reg_mr.pages = (struct qroce_bt){ 0, cpu_to_le32(2), 12,
                                        QROCE_BT_INLINE, 0 };
    c.reg_mr.inline_pages[0] = cpu_to_le64(buf);
    c.reg_mr.inline_pages[1] = cpu_to_le64(buf + 4096 + 8); /* misaligned */
    g_assert_cmpuint(qroce_cmd(t, &c, NULL), ==, QROCE_CMD_ERR_PARAM);
    c.reg_mr.inline_pages[1] = cpu_to_le64(buf + 4096);
    c.reg_mr.length = cpu_to_le64(8193);                    /* too long */
    g_assert_cmpuint(qroce_cmd(t, &c, NULL), ==, QROCE_CMD_ERR_PARAM);
    /* first_page_offset + length wraps around */
    c.reg_mr.iova = 0;
    c.reg_mr.first_page_offset = cpu_to_le32(0x800);
    c.reg_mr.length = cpu_to_le64(-0x400ULL);
    g_assert_cmpuint(qroce_cmd(t, &c, NULL), ==, QROCE_CMD_ERR_PARAM);
    c.reg_mr.first_page_offset = cpu_to_le32(4096);        /* not < page */
    c.reg_mr.length = cpu_to_le64(4096);
    g_assert_cmpuint(qroce_cmd(t, &c, NULL), ==, QROCE_CMD_ERR_PARAM);
    c.reg_mr.first_page_offset = 0;
    c.reg_mr.iova = cpu_to_le64(-0x1000ULL);                /* iova wraps */
    c.reg_mr.length = cpu_to_le64(8192);
    g_assert_cmpuint(qroce_cmd(t, &c, NULL), ==, QROCE_CMD_ERR_PARAM);
    c.reg_mr.iova = cpu_to_le64(0x7f0000001000ULL);
    c.reg_mr.length = cpu_to_le64(8192);
    g_assert_cmpuint(qroce_cmd(t, &c, out), ==, QROCE_CMD_OK);
    key = out[0];
    g_assert_cmpuint(qroce_cmd_simple(t, QROCE_CMD_DEALLOC_PD, pdn, NULL), ==,
                     QROCE_CMD_ERR_BUSY);
    memset(&c, 0, sizeof(c));
    c.hdr.opcode = QROCE_CMD_DEREG_MR;
    c.key.key = cpu_to_le32(key);
    g_assert_cmpuint(qroce_cmd(t, &c, NULL), ==, QROCE_CMD_OK);
    g_assert_cmpuint(qroce_cmd(t, &c, NULL), ==, QROCE_CMD_ERR_HANDLE);
}

/* AH: a valid source GID and network type; DEL_GID; a busy EQ. */
static void commands_ah_gid(QRoce *t, uint32_t pdn)
{
    struct qroce_cmd c;
    uint32_t out[6];

    memset(&c, 0, sizeof(c));
    c.hdr.opcode = QROCE_CMD_CREATE_AH;
    c.create_ah.pdn = cpu_to_le32(pdn);
    c.create_ah.av.net_type = QROCE_NET_IPV4;
    c.create_ah.av.sgid_index = 5;
    g_assert_cmpuint(qroce_cmd(t, &c, NULL), ==, QROCE_CMD_ERR_PARAM);
    c.create_ah.av.sgid_index = 1;
    c.create_ah.av.net_type = 7;
    g_assert_cmpuint(qroce_cmd(t, &c, NULL), ==, QROCE_CMD_ERR_PARAM);
    c.create_ah.av.net_type = QROCE_NET_IPV4;
    g_assert_cmpuint(qroce_cmd(t, &c, out), ==, QROCE_CMD_OK);
    g_assert_cmpuint(qroce_cmd_simple(t, QROCE_CMD_DESTROY_AH, out[0], NULL),
                     ==, 0);
    g_assert_cmpuint(qroce_cmd_simple(t, QROCE_CMD_DESTROY_AH, out[0], NULL),
                     ==, QROCE_CMD_ERR_HANDLE);
    g_assert_cmpuint(qroce_cmd_simple(t, QROCE_CMD_DEL_GID, 1, NULL), ==, 0);
    g_assert_cmpuint(qroce_cmd_simple(t, QROCE_CMD_DEL_GID, 1, NULL), ==,
                     QROCE_CMD_ERR_HANDLE);
    g_assert_cmpuint(qroce_cmd_simple(t, QROCE_CMD_DEL_GID, 99, NULL), ==,
                     QROCE_CMD_ERR_PARAM);
    /* an EQ with CQs on it is busy */
    g_assert_cmpuint(qroce_cmd_simple(t, QROCE_CMD_DESTROY_EQ, 1, NULL), ==,
                     QROCE_CMD_ERR_BUSY);
    g_assert_cmpuint(qroce_cmd_simple(t, QROCE_CMD_DESTROY_EQ, 9, NULL), ==,
                     QROCE_CMD_ERR_HANDLE);
}

/*
 * Every command, with the status each error gets: PD, EQ, CQ, QP, MR, AH
 * and GID, the objects that keep others busy, and a teardown in order.
 */
static void test_commands(QRoce *t)
{
    struct qroce_cmd c;
    uint32_t pdn, cqn, qpn;

    qroce_enable(t);
    commands_bad_header(t);
    pdn = commands_pd(t);
    commands_eq(t);
    cqn = commands_cq(t);
    qpn = commands_qp(t, pdn, cqn);
    commands_qp_rtr(t, qpn);
    commands_mr(t, pdn);
    commands_ah_gid(t, pdn);

    /* tear down in order */
    memset(&c, 0, sizeof(c));
    c.hdr.opcode = QROCE_CMD_DESTROY_QP;
    c.qpn.qpn = cpu_to_le32(qpn);
    g_assert_cmpuint(qroce_cmd(t, &c, NULL), ==, QROCE_CMD_OK);
    g_assert_cmpuint(qroce_cmd(t, &c, NULL), ==, QROCE_CMD_ERR_HANDLE);
    g_assert_cmpuint(qroce_cmd_simple(t, QROCE_CMD_DESTROY_CQ, cqn, NULL), ==,
                     0);
    g_assert_cmpuint(qroce_cmd_simple(t, QROCE_CMD_DEALLOC_PD, pdn, NULL), ==,
                     0);
    g_assert_cmpuint(qroce_cmd_simple(t, QROCE_CMD_DESTROY_EQ, 1, NULL), ==, 0);
    g_assert_cmpuint(qroce_cnt(t, QROCE_CNT_CMD_ERRS), >=, 25);
}

/* The QPs of test_qp_states(), one of each type, on one PD and CQ. */
typedef struct QPStates {
    uint32_t pdn, cqn, rc, uc, ud, gsi;
} QPStates;

/* One QP of each type; the GSI QP is QP 1, and only one; bad CREATE_QPs. */
static void qp_states_create(QRoce *t, QPStates *q)
{
    uint32_t x;

    qroce_enable(t);
    q->pdn = qroce_alloc_pd(t);
    qroce_mk_eq(t, 1);
    q->cqn = qroce_mk_cq(t, 1);
    qroce_set_gid0(t);
    g_assert_cmpuint(qroce_mk_qp(t, QROCE_QPT_RC, q->pdn, q->cqn, 0, &q->rc),
                     ==, 0);
    g_assert_cmpuint(qroce_mk_qp(t, QROCE_QPT_UC, q->pdn, q->cqn, 0, &q->uc),
                     ==, 0);
    g_assert_cmpuint(qroce_mk_qp(t, QROCE_QPT_UD, q->pdn, q->cqn, 0, &q->ud),
                     ==, 0);
    g_assert_cmpuint(qroce_mk_qp(t, QROCE_QPT_GSI, q->pdn, q->cqn, 0, &q->gsi),
                     ==, 0);
    g_assert_cmpuint(q->gsi, ==, 1);
    g_assert_cmpuint(qroce_mk_qp(t, QROCE_QPT_GSI, q->pdn, q->cqn, 0, &x), ==,
                     QROCE_CMD_ERR_BUSY);
    g_assert_cmpuint(qroce_mk_qp(t, 4, q->pdn, q->cqn, 0, &x), ==,
                     QROCE_CMD_ERR_PARAM);
    g_assert_cmpuint(qroce_mk_qp(t, QROCE_QPT_RC, q->pdn, q->cqn,
                                 QROCE_DB_PAGES, &x), ==, QROCE_CMD_ERR_PARAM);
    /* a PD with QPs is busy */
    g_assert_cmpuint(qroce_cmd_simple(t, QROCE_CMD_DEALLOC_PD, q->pdn, NULL),
                     ==, QROCE_CMD_ERR_BUSY);
}

/* RC from RESET to RTR: required and allowed attributes, their ranges. */
static void qp_states_rc_to_rtr(QRoce *t, uint32_t rc)
{
    struct qroce_cmd c;

    g_assert_cmpuint(qroce_modify(t, rc, M(STATE), QROCE_QPS_ERR, NULL), ==,
                     QROCE_CMD_ERR_STATE);           /* RESET -> ERR */
    g_assert_cmpuint(qroce_modify(t, rc, M(STATE), QROCE_QPS_RESET, NULL), ==,
                     0);
    g_assert_cmpuint(qroce_modify(t, rc, QROCE_RC_INIT | M(QKEY),
                                  QROCE_QPS_INIT, NULL),
                     ==, QROCE_CMD_ERR_STATE); /* QKEY is not RC's */
    g_assert_cmpuint(qroce_modify(t, rc, QROCE_RC_INIT & ~M(PORT),
                                  QROCE_QPS_INIT, NULL),
                     ==, QROCE_CMD_ERR_STATE);
    g_assert_cmpuint(qroce_modify(t, rc, QROCE_RC_INIT | M(CUR_STATE),
                                  QROCE_QPS_INIT, NULL),
                     ==, QROCE_CMD_ERR_STATE);
    g_assert_cmpuint(qroce_modify(t, rc, 1u << 21 | QROCE_RC_INIT,
                                  QROCE_QPS_INIT, NULL),
                     ==, QROCE_CMD_ERR_PARAM); /* unknown attribute */
    g_assert_cmpuint(qroce_modify(t, rc, QROCE_RC_INIT, QROCE_QPS_INIT, NULL),
                     ==, 0);
    g_assert_cmpuint(qroce_modify(t, rc, M(STATE) | M(ACCESS_FLAGS),
                                  QROCE_QPS_INIT, NULL),
                     ==, 0); /* INIT->INIT */
    g_assert_cmpuint(qroce_modify(t, rc, QROCE_RC_INIT, QROCE_QPS_RTS, NULL),
                     ==, QROCE_CMD_ERR_STATE); /* INIT -> RTS */
    g_assert_cmpuint(qroce_modify(t, rc, QROCE_RC_RTR | M(TIMEOUT),
                                  QROCE_QPS_RTR, NULL),
                     ==, QROCE_CMD_ERR_STATE); /* not allowed here */
    memset(&c, 0, sizeof(c));
    c.modify_qp.path_mtu = 6;
    c.modify_qp.av.net_type = QROCE_NET_IPV4;
    g_assert_cmpuint(qroce_modify(t, rc, QROCE_RC_RTR, QROCE_QPS_RTR, &c), ==,
                     QROCE_CMD_ERR_PARAM);           /* path MTU 8192 */
    c.modify_qp.path_mtu = QROCE_MTU_256;
    c.modify_qp.min_rnr_timer = 32;
    g_assert_cmpuint(qroce_modify(t, rc, QROCE_RC_RTR, QROCE_QPS_RTR, &c), ==,
                     QROCE_CMD_ERR_PARAM);
    c.modify_qp.min_rnr_timer = 0;
    c.modify_qp.rq_psn = cpu_to_le32(1u << 24);
    g_assert_cmpuint(qroce_modify(t, rc, QROCE_RC_RTR, QROCE_QPS_RTR, &c), ==,
                     QROCE_CMD_ERR_PARAM);
    c.modify_qp.rq_psn = 0;
    c.modify_qp.dest_qpn = cpu_to_le32(1u << 24);
    g_assert_cmpuint(qroce_modify(t, rc, QROCE_RC_RTR, QROCE_QPS_RTR, &c), ==,
                     QROCE_CMD_ERR_PARAM);
    c.modify_qp.dest_qpn = 0;
    c.modify_qp.max_dest_rd_atomic = QROCE_DEF_MAX_RD_ATOM + 1;
    g_assert_cmpuint(qroce_modify(t, rc, QROCE_RC_RTR, QROCE_QPS_RTR, &c), ==,
                     QROCE_CMD_ERR_PARAM);
    c.modify_qp.max_dest_rd_atomic = 0;
    c.modify_qp.av.sgid_index = 3;                  /* no such GID */
    g_assert_cmpuint(qroce_modify(t, rc, QROCE_RC_RTR, QROCE_QPS_RTR, &c), ==,
                     QROCE_CMD_ERR_PARAM);
    c.modify_qp.av.sgid_index = 0;
    c.modify_qp.rsvd1 = 1;                          /* reserved */
    g_assert_cmpuint(qroce_modify(t, rc, QROCE_RC_RTR, QROCE_QPS_RTR, &c), ==,
                     QROCE_CMD_ERR_PARAM);
    c.modify_qp.rsvd1 = 0;
    g_assert_cmpuint(qroce_modify(t, rc, QROCE_RC_RTR, QROCE_QPS_RTR, &c), ==,
                     0);
    g_assert_cmpuint(qroce_qp_state(t, rc), ==, QROCE_QPS_RTR);
}

/* RC from RTR to RTS, SQD, ERR and back to RESET. */
static void qp_states_rc_from_rtr(QRoce *t, uint32_t rc)
{
    struct qroce_cmd c;

    g_assert_cmpuint(qroce_modify(t, rc, QROCE_RC_RTS & ~M(TIMEOUT),
                                  QROCE_QPS_RTS, NULL),
                     ==, QROCE_CMD_ERR_STATE);
    memset(&c, 0, sizeof(c));
    c.modify_qp.retry_cnt = 8;
    g_assert_cmpuint(qroce_modify(t, rc, QROCE_RC_RTS, QROCE_QPS_RTS, &c), ==,
                     QROCE_CMD_ERR_PARAM);
    c.modify_qp.retry_cnt = 7;
    c.modify_qp.sq_psn = cpu_to_le32(0xffffff);
    c.modify_qp.cur_state = QROCE_QPS_RTS;          /* wrong current state */
    g_assert_cmpuint(qroce_modify(t, rc, QROCE_RC_RTS | M(CUR_STATE),
                                  QROCE_QPS_RTS, &c), ==, QROCE_CMD_ERR_STATE);
    c.modify_qp.cur_state = QROCE_QPS_RTR;
    g_assert_cmpuint(qroce_modify(t, rc, QROCE_RC_RTS | M(CUR_STATE),
                                  QROCE_QPS_RTS, &c), ==, 0);
    g_assert_cmpuint(qroce_qp_state(t, rc), ==, QROCE_QPS_RTS);
    g_assert_cmpuint(qroce_modify(t, rc, M(STATE) | M(MIN_RNR_TIMER),
                                  QROCE_QPS_RTS, NULL), ==, 0); /* RTS->RTS */
    g_assert_cmpuint(qroce_modify(t, rc, M(STATE) | M(PATH_MTU), QROCE_QPS_RTS,
                                  NULL), ==, QROCE_CMD_ERR_STATE);
    g_assert_cmpuint(qroce_modify(t, rc, M(STATE) | M(EN_SQD_ASYNC),
                                  QROCE_QPS_SQD, NULL), ==, 0);
    g_assert_cmpuint(qroce_modify(t, rc, M(STATE) | M(PATH_MTU), QROCE_QPS_SQD,
                                  NULL), ==, QROCE_CMD_ERR_STATE);
    g_assert_cmpuint(qroce_modify(t, rc, M(STATE) | M(TIMEOUT) | M(AV),
                                  QROCE_QPS_SQD, NULL), ==, 0); /* SQD->SQD */
    g_assert_cmpuint(qroce_modify(t, rc, M(STATE), QROCE_QPS_RTS, NULL), ==, 0);
    g_assert_cmpuint(qroce_modify(t, rc, M(STATE), QROCE_QPS_SQE, NULL), ==,
                     QROCE_CMD_ERR_STATE);
    g_assert_cmpuint(qroce_modify(t, rc, M(STATE) | M(TIMEOUT), QROCE_QPS_ERR,
                                  NULL), ==, QROCE_CMD_ERR_STATE);
    g_assert_cmpuint(qroce_modify(t, rc, M(STATE), QROCE_QPS_ERR, NULL), ==, 0);
    g_assert_cmpuint(qroce_modify(t, rc, M(STATE), QROCE_QPS_RTS, NULL), ==,
                     QROCE_CMD_ERR_STATE);
    g_assert_cmpuint(qroce_modify(t, rc, M(STATE), QROCE_QPS_ERR, NULL), ==, 0);
    g_assert_cmpuint(qroce_modify(t, rc, M(STATE), 7, NULL), ==,
                     QROCE_CMD_ERR_PARAM);
    g_assert_cmpuint(qroce_modify(t, rc, M(STATE), QROCE_QPS_RESET, NULL), ==,
                     0);
    g_assert_cmpuint(qroce_qp_state(t, rc), ==, QROCE_QPS_RESET);
}

/* UC: no responder resources, RNR timer, retries at RTR and RTS. */
static void qp_states_uc(QRoce *t, uint32_t uc)
{
    g_assert_cmpuint(qroce_modify(t, uc, QROCE_RC_INIT, QROCE_QPS_INIT, NULL),
                     ==, 0);
    g_assert_cmpuint(qroce_modify(t, uc, QROCE_RC_RTR, QROCE_QPS_RTR, NULL), ==,
                     QROCE_CMD_ERR_STATE);
    g_assert_cmpuint(qroce_modify(t, uc,
                                  M(STATE) | M(AV) | M(PATH_MTU) | M(DEST_QPN) |
                                      M(RQ_PSN),
                                  QROCE_QPS_RTR, NULL), ==, 0);
    g_assert_cmpuint(qroce_modify(t, uc, QROCE_RC_RTS, QROCE_QPS_RTS, NULL), ==,
                     QROCE_CMD_ERR_STATE);
    g_assert_cmpuint(qroce_modify(t, uc, M(STATE) | M(SQ_PSN), QROCE_QPS_RTS,
                                  NULL), ==, 0);
}

/* UD and GSI: a Q_Key at INIT, nothing at RTR; GSI without a port. */
static void qp_states_ud_gsi(QRoce *t, uint32_t ud, uint32_t gsi)
{
    /* UD: Q_Key at INIT, nothing required at RTR */
    g_assert_cmpuint(qroce_modify(t, ud, QROCE_RC_INIT, QROCE_QPS_INIT, NULL),
                     ==, QROCE_CMD_ERR_STATE);
    g_assert_cmpuint(qroce_modify(t, ud,
                                  M(STATE) | M(PKEY_INDEX) | M(PORT) | M(QKEY),
                                  QROCE_QPS_INIT, NULL), ==, 0);
    g_assert_cmpuint(qroce_modify(t, ud, M(STATE) | M(AV), QROCE_QPS_RTR, NULL),
                     ==, QROCE_CMD_ERR_STATE);
    g_assert_cmpuint(qroce_modify(t, ud, M(STATE), QROCE_QPS_RTR, NULL), ==, 0);
    g_assert_cmpuint(qroce_modify(t, ud, M(STATE), QROCE_QPS_RTS, NULL), ==,
                     QROCE_CMD_ERR_STATE);
    g_assert_cmpuint(qroce_modify(t, ud, M(STATE) | M(SQ_PSN) | M(QKEY),
                                  QROCE_QPS_RTS, NULL), ==, 0);

    /* GSI: as ib_mad drives it -- no port attribute */
    g_assert_cmpuint(qroce_modify(t, gsi,
                                  M(STATE) | M(PKEY_INDEX) | M(PORT) | M(QKEY),
                                  QROCE_QPS_INIT, NULL),
                     ==, QROCE_CMD_ERR_STATE);
    g_assert_cmpuint(qroce_modify(t, gsi, M(STATE) | M(PKEY_INDEX) | M(QKEY),
                                  QROCE_QPS_INIT, NULL), ==, 0);
    g_assert_cmpuint(qroce_modify(t, gsi, M(STATE), QROCE_QPS_RTR, NULL), ==,
                     0);
    g_assert_cmpuint(qroce_modify(t, gsi, M(STATE) | M(SQ_PSN), QROCE_QPS_RTS,
                                  NULL), ==, 0);
    g_assert_cmpuint(qroce_qp_state(t, gsi), ==, QROCE_QPS_RTS);
}

/* The state machine, per QP type, as ib_modify_qp_is_ok() has it. */
static void test_qp_states(QRoce *t)
{
    QPStates q;

    qp_states_create(t, &q);
    qp_states_rc_to_rtr(t, q.rc);
    qp_states_rc_from_rtr(t, q.rc);
    qp_states_uc(t, q.uc);
    qp_states_ud_gsi(t, q.ud, q.gsi);

    /* RESET of the whole device frees every object */
    qroce_enable(t);
    g_assert_cmpuint(qroce_cmd_simple(t, QROCE_CMD_DESTROY_QP, q.rc, NULL), ==,
                     QROCE_CMD_ERR_HANDLE);
    g_assert_cmpuint(qroce_cmd_simple(t, QROCE_CMD_DESTROY_CQ, q.cqn, NULL), ==,
                     QROCE_CMD_ERR_HANDLE);
    g_assert_cmpuint(qroce_cmd_simple(t, QROCE_CMD_DEALLOC_PD, q.pdn, NULL), ==,
                     QROCE_CMD_ERR_HANDLE);
}

/* An async EQ of 16 entries: the 17th event is lost, then reported. */
static void test_eq_overflow(QRoce *t)
{
    struct qroce_cmd c;
    struct qroce_eqe e;
    uint64_t eq0 = 0;
    uint32_t pdn, cqn, qp[18], i;

    qroce_enable(t);
    pdn = qroce_alloc_pd(t);
    memset(&c, 0, sizeof(c));
    c.hdr.opcode = QROCE_CMD_CREATE_EQ;
    c.create_eq.log2_entries = QROCE_EQ_MIN_LOG2;
    eq0 = qroce_pages(t, 1);
    c.create_eq.ring = qroce_bt(eq0, 1);
    g_assert_cmpuint(qroce_cmd(t, &c, NULL), ==, QROCE_CMD_OK);
    qroce_mk_eq(t, 1);
    cqn = qroce_mk_cq(t, 1);
    for (i = 0; i < 18; i++) {
        g_assert_cmpuint(qroce_mk_qp(t, QROCE_QPT_RC, pdn, cqn, 0, &qp[i]), ==,
                         0);
        g_assert_cmpuint(qroce_modify(t, qp[i], QROCE_RC_INIT, QROCE_QPS_INIT,
                                      NULL), ==, 0);
    }
    /* 17 QP_FATAL events: RQ producer indexes past the ring */
    for (i = 0; i < 17; i++) {
        qroce_db(t, QROCE_DB_RQ, qp[i], 17);
    }
    for (i = 0; i < 16; i++) {
        qroce_wait_entry(t, eq0, sizeof(e), QROCE_EQ_MIN_LOG2, i, &e);
        g_assert_cmpuint(e.type, ==, QROCE_EQE_QP_FATAL);
        g_assert_cmpuint(le32_to_cpu(e.handle), ==, qp[i]);
    }
    /* the 17th did not overwrite entry 0 */
    g_assert_false(qroce_entry_ready(t, eq0, sizeof(e), QROCE_EQ_MIN_LOG2, 16));
    /* a consumer index ahead of the producer is refused */
    qroce_wr(t, QROCE_REG_EQ_CI(0), 17);
    qroce_db(t, QROCE_DB_RQ, qp[17], 17);
    g_assert_false(qroce_entry_ready(t, eq0, sizeof(e), QROCE_EQ_MIN_LOG2, 16));
    /* consume everything: the next event comes after an EQ_OVERFLOW */
    qroce_wr(t, QROCE_REG_EQ_CI(0), 16);
    g_assert_cmpuint(qroce_modify(t, qp[17], QROCE_QP_ATTR_STATE,
                                  QROCE_QPS_RESET, NULL), ==, 0);
    g_assert_cmpuint(qroce_modify(t, qp[17], QROCE_RC_INIT, QROCE_QPS_INIT,
                                  NULL), ==, 0);
    qroce_db(t, QROCE_DB_RQ, qp[17], 17);
    qroce_wait_entry(t, eq0, sizeof(e), QROCE_EQ_MIN_LOG2, 16, &e);
    g_assert_cmpuint(e.type, ==, QROCE_EQE_EQ_OVERFLOW);
    g_assert_cmpuint(le32_to_cpu(e.handle), ==, 0);
    qroce_wait_entry(t, eq0, sizeof(e), QROCE_EQ_MIN_LOG2, 17, &e);
    g_assert_cmpuint(e.type, ==, QROCE_EQE_QP_FATAL);
    g_assert_cmpuint(le32_to_cpu(e.handle), ==, qp[17]);
}

/* RESIZE_CQ of @cqn to a new ring of 2^@log2 at @ring, consumer at @ci. */
static int resize_cq(QRoce *t, uint32_t cqn, uint32_t ci, uint8_t log2,
                     uint64_t ring, uint8_t rsvd)
{
    struct qroce_cmd c = { .hdr.opcode = QROCE_CMD_RESIZE_CQ };
    uint32_t np = DIV_ROUND_UP((sizeof(struct qroce_cqe) << log2) +
                               sizeof(struct qroce_cq_rec), 4096);

    c.resize_cq.cqn = cpu_to_le32(cqn);
    c.resize_cq.ci = cpu_to_le32(ci);
    c.resize_cq.log2_entries = log2;
    c.resize_cq.rsvd[3] = rsvd;
    c.resize_cq.ring = qroce_bt(ring, np);
    return qroce_cmd(t, &c, NULL);
}

/*
 * RESIZE_CQ: with one of six CQEs taken, the other five move in order to
 * the start of the new ring with first-pass owner bits, and the next CQE
 * follows them; a consumer index ahead of the producer, a ring too small
 * for what is outstanding, a bad size, reserved bits and no such CQ are
 * refused and change nothing.
 */
static void test_cq_resize(QRoce *t)
{
    struct qroce_cqe old[6], e;
    uint64_t cq, buf, sqa, rqa, sqb, rqb, nring, small;
    uint32_t pdn, cqn, key, a, b, ahn, i;

    qroce_objs_setup(t, QROCE_ACCESS_LOCAL_WRITE, &pdn, &cqn, &cq, &buf, &key);
    g_assert_true(qroce_rd(t, QROCE_REG_FEATURES) & QROCE_FEAT_RESIZE_CQ);
    ahn = qroce_mk_self_ah(t, pdn);
    qroce_ud_qp(t, QROCE_QPT_UD, pdn, cqn, 0x1111, &a, &sqa, &rqa);
    qroce_ud_qp(t, QROCE_QPT_UD, pdn, cqn, 0x2222, &b, &sqb, &rqb);
    for (i = 0; i < 4; i++) {
        qroce_post_recv(t, rqb, i, buf + 4096, 200, key);
    }
    qroce_db(t, QROCE_DB_RQ, b, 4);
    for (i = 0; i < 3; i++) {
        qroce_post_ud(t, sqa, i, ahn, b, 0x2222, buf, 100, key);
    }
    qroce_db(t, QROCE_DB_SQ, a, 3);
    for (i = 0; i < 6; i++) {
        qroce_wait_entry(t, cq, sizeof(e), 6, i, &old[i]);
    }

    nring = qroce_pages(t, 1);
    small = qroce_pages(t, 1);
    g_assert_cmpuint(resize_cq(t, cqn, 7, 4, nring, 0), ==,
                     QROCE_CMD_ERR_PARAM);          /* ahead of the producer */
    g_assert_cmpuint(resize_cq(t, cqn, 1, 2, small, 0), ==,
                     QROCE_CMD_ERR_PARAM);          /* 4 entries for 5 */
    g_assert_cmpuint(resize_cq(t, cqn, 1, 0, small, 0), ==,
                     QROCE_CMD_ERR_PARAM);
    g_assert_cmpuint(resize_cq(t, cqn, 1, 4, nring, 1), ==,
                     QROCE_CMD_ERR_PARAM);
    g_assert_cmpuint(resize_cq(t, 999, 1, 4, nring, 0), ==,
                     QROCE_CMD_ERR_HANDLE);
    g_assert_false(qroce_entry_ready(t, small, sizeof(e), 2, 0));

    g_assert_cmpuint(resize_cq(t, cqn, 1, 4, nring, 0), ==, QROCE_CMD_OK);
    for (i = 0; i < 5; i++) {
        qroce_wait_entry(t, nring, sizeof(e), 4, i, &e);
        g_assert_true(!memcmp(&e, &old[i + 1], sizeof(e) - 1));
    }
    g_assert_false(qroce_entry_ready(t, nring, sizeof(e), 4, 5));

    /* the next completion follows them in the new ring */
    qroce_post_ud(t, sqa, 3, ahn, b, 0x2222, buf, 100, key);
    qroce_db(t, QROCE_DB_SQ, a, 4);
    for (i = 5; i < 7; i++) {
        qroce_wait_entry(t, nring, sizeof(e), 4, i, &e);
        g_assert_cmpuint(e.status, ==, QROCE_WC_SUCCESS);
    }
}

/* A RESIZE_CQ of @cqn to a ring of 2^16 at @ring, consumer at @ci. */
static void resize_cq_cmd(struct qroce_cmd *c, uint32_t cqn, uint32_t ci,
                          uint64_t ring)
{
    uint32_t np = DIV_ROUND_UP((sizeof(struct qroce_cqe) << 16) +
                               sizeof(struct qroce_cq_rec), 4096);

    memset(c, 0, sizeof(*c));
    c->hdr.opcode = QROCE_CMD_RESIZE_CQ;
    c->resize_cq.cqn = cpu_to_le32(cqn);
    c->resize_cq.ci = cpu_to_le32(ci);
    c->resize_cq.log2_entries = 16;
    c->resize_cq.ring = qroce_bt(ring, np);
}

/*
 * RESIZE_CQ counts each CQE it moves in the command queue's work budget
 * (2^16 table pages or entries a run), so that one command does not hold
 * the device for seconds: a resize that moves 65 535 CQEs ends the run,
 * and the NOP posted with it is read only after that run's interrupt
 * (qroce_cmds_split()); one that moves 16 does not.  The consumer index
 * a ring behind the producer makes the device move 65 535 entries that
 * were never written, as a guest may.
 */
static void test_cq_resize_yields(QRoce *t)
{
    struct qroce_cmd c[2] = { {}, { .hdr.opcode = QROCE_CMD_NOP } };
    uint64_t ring, other;
    uint32_t cqn;
    int st[2];

    qroce_enable(t);
    qroce_mk_eq(t, 1);
    cqn = qroce_mk_cq_ring(t, 1, 16, &ring);
    other = qroce_pages(t, 513);
    resize_cq_cmd(&c[0], cqn, -16, other);
    g_assert_false(qroce_cmds_split(t, c, 2, st));
    g_assert_cmpint(st[0], ==, QROCE_CMD_OK);
    g_assert_cmpint(st[1], ==, QROCE_CMD_OK);
    /* 16 CQEs outstanding: a consumer index 65 535 behind */
    resize_cq_cmd(&c[0], cqn, 16 - 65535, ring);
    g_assert_true(qroce_cmds_split(t, c, 2, st));
    g_assert_cmpint(st[0], ==, QROCE_CMD_OK);
    g_assert_cmpint(st[1], ==, QROCE_CMD_OK);
}

#define BUDGET_QPS 2048

/* QPs of 16-entry rings until CREATE_QP fails; their QPNs in @qpn. */
static uint32_t qps_until_full(QRoce *t, uint32_t pdn, uint32_t cqn,
                               uint32_t *qpn)
{
    uint32_t n;
    int st = 0;

    for (n = 0; n < BUDGET_QPS; n++) {
        st = qroce_mk_qp(t, QROCE_QPT_RC, pdn, cqn, 5, &qpn[n]);
        if (st) {
            break;
        }
    }
    g_assert_cmpuint(st, ==, QROCE_CMD_ERR_NORES);
    return n;
}

/*
 * max-qp at its limit, 2^24, costs nothing up front: QPs take device
 * memory one by one from state-budget-mb (1 MiB here) until CREATE_QP
 * fails with ERR_NORES, which changes nothing.  A destroyed QP makes room
 * for one more, which does not take its QPN (numbers come back late);
 * with all destroyed, as many fit again.
 */
static void test_qp_budget(QRoce *t)
{
    uint32_t *qpn = g_new(uint32_t, BUDGET_QPS), pdn, cqn, n, i, more;

    qroce_enable(t);
    g_assert_cmpuint(qroce_rd(t, QROCE_REG_CAP_MAX_QP), ==, 1u << 24);
    pdn = qroce_alloc_pd(t);
    qroce_mk_eq(t, 1);
    cqn = qroce_mk_cq(t, 1);
    n = qps_until_full(t, pdn, cqn, qpn);
    g_assert_cmpuint(n, >, 16);
    for (i = 0; i < n; i++) {
        g_assert_cmpuint(qpn[i], ==, i + 2);
    }
    g_assert_cmpuint(qroce_cmd_simple(t, QROCE_CMD_DESTROY_QP, qpn[0], NULL),
                     ==, QROCE_CMD_OK);
    g_assert_cmpuint(qroce_mk_qp(t, QROCE_QPT_RC, pdn, cqn, 5, &qpn[0]), ==,
                     QROCE_CMD_OK);
    g_assert_cmpuint(qpn[0], ==, n + 2);
    g_assert_cmpuint(qroce_mk_qp(t, QROCE_QPT_RC, pdn, cqn, 5, &more), ==,
                     QROCE_CMD_ERR_NORES);
    g_assert_cmpuint(qroce_qp_state(t, qpn[n - 1]), ==, QROCE_QPS_RESET);
    for (i = 0; i < n; i++) {
        g_assert_cmpuint(qroce_cmd_simple(t, QROCE_CMD_DESTROY_QP, qpn[i],
                                          NULL), ==, QROCE_CMD_OK);
    }
    g_assert_cmpuint(qps_until_full(t, pdn, cqn, qpn), ==, n);
    g_assert_cmpuint(qpn[0], ==, n + 3);
    g_free(qpn);
}

static const QRoceCase cases[] = {
    { "cmd/statuses-of-each-command", test_commands, NULL, NULL },
    { "cmd/qp-state-machine-per-type", test_qp_states, NULL, NULL },
    { "cmd/eq-overflow-loses-event-then-reports-it", test_eq_overflow, NULL,
      NULL },
    { "cmd/cq-resize-moves-outstanding-cqes", test_cq_resize, NULL, NULL },
    { "cmd/cq-resize-of-a-full-ring-ends-the-queue-run",
      test_cq_resize_yields, NULL, NULL },
    { "cmd/qps-allocated-one-by-one-within-state-budget", test_qp_budget,
      "-global qroce.max-qp=16777216 -global qroce.state-budget-mb=1", NULL },
};

static void register_qroce_cmd_tests(void)
{
    qroce_add_tests(cases, ARRAY_SIZE(cases));
}

libqos_init(register_qroce_cmd_tests);
