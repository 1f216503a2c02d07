/*
 * qroce: the UD transport, for UD and GSI QPs.  They share the run queue
 * and the packet budget: each send WQE is one UD SEND_ONLY packet to the
 * address of its AH, completed once sent; a received UD packet fills a
 * RECV WQE with the GRH area and the payload, or is dropped (no QP, wrong
 * Q_Key, no RECV WQE, too long).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "qroce_data_xport.h"
#include "qroce_data_common.h"
#include "qroce_objects.h"
#include "qroce_odp.h"
#include "trace.h"

#define UD_GSI_QKEY     0x80010000u

#define UD_MAD_SIZE     256     /* the largest payload QP1 accepts */

/*
 * The largest UD message: the IB MTU that fits the Ethernet MTU with the
 * largest RoCEv2 headers, as the driver reports the port's active MTU.
 */
static uint32_t ud_mtu(QRoceState *s)
{
    uint32_t eth = qroce_reg(s, QROCE_REG_ETH_MTU);
    uint32_t room = eth > 100 ? eth - 100 : 0;
    uint32_t mtu;

    for (mtu = 4096; mtu > 256 && mtu > room; mtu >>= 1) {
        /* next smaller IB MTU */
    }
    return mtu;
}

/*
 * Send from a UD or GSI SQ: every WQE is one packet, completed as soon as
 * it is on the wire, or a local operation (REG_MR, LOCAL_INV), completed
 * when executed.  Returns true if it stopped for the budget.
 */
bool qroce_ud_sq_process(QRoceState *s, QRoceQP *qp, int *budget)
{
    QRoceQPXport *r = &qp->xp;
    QRoceWqe w;

    while (qp->state == QROCE_QPS_RTS && qp->sq.ci != qp->sq.pi &&
           !qroce_odp_waiting(qp, QROCE_PF_REQ)) {
        uint32_t idx = qp->sq.ci, qkey;
        RocePktOut o = {};
        QRoceAH *ah = NULL;
        uint8_t sgid[16];
        uint8_t *payload;
        bool imm;
        int st;

        if (*budget <= 0) {
            return true;
        }
        st = qroce_dp_read_wqe(s, qp, idx, &w);
        if (st == QROCE_WC_SUCCESS) {
            st = qroce_dp_inject_wqe(s, qp, idx);
        }
        if (st == QROCE_WC_SUCCESS && qroce_dp_op_local(w.hdr.opcode)) {
            if (!qroce_dp_sq_local(s, qp, idx, &w)) {
                return false;
            }
            (*budget)--;
            continue;
        }
        if (st == QROCE_WC_SUCCESS && !wr_op_has(w.hdr.opcode, QROCE_WROP_UD)) {
            st = QROCE_WC_LOC_QP_OP_ERR;
        }
        if (st == QROCE_WC_SUCCESS && w.len > ud_mtu(s)) {
            st = QROCE_WC_LOC_LEN_ERR;
        }
        if (st == QROCE_WC_SUCCESS) {
            ah = qroce_ah_get(s, le32_to_cpu(w.hdr.ud.ahn));
            if (!ah || ah->pdn != qp->pdn ||
                !qroce_gid_get(s, ah->av.sgid_index, sgid)) {
                st = QROCE_WC_LOC_QP_OP_ERR;
            }
        }
        if (st != QROCE_WC_SUCCESS) {
            qroce_dp_sq_error(s, qp, idx, st);
            return false;
        }
        trace_qroce_sq_wqe(qp->qpn, idx, w.hdr.opcode, w.len);
        imm = wr_op_has(w.hdr.opcode, QROCE_WROP_IMM);
        o.opcode = imm ? ROCE_UD_SEND_ONLY_IMM : ROCE_UD_SEND_ONLY;
        o.dmac = ah->av.dmac;
        o.smac = qroce_mac(s);
        o.sgid = sgid;
        o.dgid = ah->av.dgid;
        o.tclass = ah->av.traffic_class;
        o.hop_limit = ah->av.hop_limit ? ah->av.hop_limit : 64;
        o.flow_label = ah->av.flow_label;
        o.sport = qp_udp_sport(qp->qpn);
        o.dqpn = le32_to_cpu(w.hdr.ud.remote_qpn) & 0xffffff;
        o.psn = r->npsn;
        o.se = w.hdr.flags & QROCE_WQE_SOLICITED;
        o.imm = ldl_be_p(&w.hdr.imm_data);
        /* a Q_Key with the high bit set means "the QP's own" (ib_mad) */
        qkey = le32_to_cpu(w.hdr.ud.remote_qkey);
        o.deth_qkey = qkey & 0x80000000u ? qp->qkey : qkey;
        o.deth_sqp = qp->qpn;
        payload = s->eng->pkt + roce_hdr_len(o.opcode, !roce_gid_is_v4(o.dgid));
        st = qroce_dp_wqe_copy(s, qp, &w, 0, payload, w.len, false);
        if (st == QROCE_RW_FAULT) {
            return false;   /* waits for its page fault, at this WQE */
        }
        if (st) {
            qroce_dp_sq_error(s, qp, idx, QROCE_WC_LOC_PROT_ERR);
            return false;
        }
        r->npsn = psn_add(r->npsn, 1);
        qroce_dp_tx(s, qp, &o, w.len);
        if ((w.hdr.flags & QROCE_WQE_SIGNALED) ||
            (qp->flags & QROCE_CREATE_QP_SIG_ALL)) {
            qroce_dp_cqe(s, qp, true, idx, QROCE_CQE_SEND, QROCE_WC_SUCCESS,
                         w.len, false, 0, false);
        }
        qp->sq.ci = idx + 1;
        r->sq_sent = qp->sq.ci;
        (*budget)--;
    }
    return false;
}

/*
 * A UD SEND for a UD or GSI QP: the 40-byte GRH area of the RECV WQE gets
 * the IPv6 header, or 20 zero bytes and the IPv4 header; the payload
 * follows it.  There is no RNR for UD: without a RECV WQE the packet is
 * dropped, as it is when the Q_Key does not match.
 */
void qroce_ud_rx(QRoceState *s, QRoceQP *qp, RocePktIn *p)
{
    uint8_t grh[40];
    struct qroce_cqe cqe = {};
    int st;

    if (qp->state < QROCE_QPS_RTR || qp->state == QROCE_QPS_ERR) {
        qroce_dp_drop(s, "UD packet to a QP not ready");
        return;
    }
    if (p->deth_qkey != qp->qkey ||
        (qp->type == QROCE_QPT_GSI && p->deth_qkey != UD_GSI_QKEY)) {
        qroce_dp_drop(s, "Q_Key mismatch");
        return;
    }
    if (p->paylen > ud_mtu(s) ||
        (qp->type == QROCE_QPT_GSI && p->paylen > UD_MAD_SIZE)) {
        qroce_dp_drop(s, "UD packet longer than the MTU");
        return;
    }
    if (!qroce_dp_recv_take(s, qp)) {
        qroce_dp_drop(s, "no RECV WQE for a UD packet");
        return;
    }
    if (qp->xp.rwqe_status == QROCE_WC_SUCCESS &&
        qroce_dp_recv_room(qp) < sizeof(grh) + p->paylen) {
        /* UD is unreliable: lost, the RECV WQE stays for the next one */
        qroce_dp_drop(s, "UD message longer than the RECV WQE");
        return;
    }
    if (p->ipv6) {
        memcpy(grh, p->l3, sizeof(grh));
    } else {
        memset(grh, 0, 20);
        memcpy(grh + 20, p->l3, 20);
    }
    st = qroce_dp_scatter(s, qp, 0, grh, sizeof(grh));
    if (st == QROCE_WC_SUCCESS) {
        st = qroce_dp_scatter(s, qp, sizeof(grh), p->payload, p->paylen);
    }
    if (st == QROCE_RW_FAULT) {
        /* UD is unreliable: lost, the RECV WQE stays for the next one */
        qroce_dp_drop(s, "UD packet to an absent ODP page");
        return;
    }
    cqe.byte_len = cpu_to_le32(st ? 0 : sizeof(grh) + p->paylen);
    cqe.src_qp = cpu_to_le32(p->deth_sqp);
    cqe.opcode = QROCE_CQE_RECV;
    cqe.status = st;
    cqe.flags = QROCE_CQE_F_GRH | (p->ipv6 ? 0 : QROCE_CQE_F_IPV4) |
                (p->has_imm ? QROCE_CQE_F_IMM : 0);
    if (p->has_imm) {
        stl_be_p(&cqe.imm_data, p->imm);
    }
    memcpy(cqe.smac, p->smac, 6);
    qroce_dp_recv_complete(s, qp, &cqe, p->se);
    if (st != QROCE_WC_SUCCESS) {
        /* a receive that failed puts the QP in the error state */
        qroce_qp_set_error(s, qp, QROCE_EQE_QP_FATAL);
    }
}
