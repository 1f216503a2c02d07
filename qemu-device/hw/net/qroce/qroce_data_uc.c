/*
 * qroce: the UC transport.  UC QPs segment and reassemble like RC with no
 * ACKs, retries or READs: a send WQE completes once sent, a damaged
 * message is dropped.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qroce_data_xport.h"
#include "qroce_data_common.h"
#include "qroce_data_cc.h"
#include "qroce_objects.h"
#include "qroce_odp.h"
#include "trace.h"

/*
 * Send from a UC SQ: SENDs and RDMA WRITEs segmented at the path MTU like
 * RC, with UC opcodes, no AckReq and nothing kept for retransmission: a
 * WQE completes when its last packet is on the wire, a local operation
 * (REG_MR, LOCAL_INV) when it is executed.  Returns true if it stopped for
 * the budget.
 */
bool qroce_uc_sq_process(QRoceState *s, QRoceQP *qp, int *budget)
{
    QRoceQPXport *r = &qp->xp;
    QRoceEngine *eng = s->eng;
    uint32_t mtu = qp_mtu(qp);
    QRoceWqe *w;

    while (qp->state == QROCE_QPS_RTS && qp->sq.ci != qp->sq.pi &&
           !qroce_odp_waiting(qp, QROCE_PF_REQ)) {
        uint32_t idx = qp->sq.ci, n;
        bool first = r->wqe_off == 0;
        RocePktOut o = {};
        uint8_t sgid[16];
        uint8_t *payload;
        int st;

        if (*budget <= 0) {
            return true;
        }
        if (!qroce_dc_may_send(s, qp)) {
            break;              /* paced: the timer runs it again */
        }
        st = qroce_dp_fetch_wqe(s, qp, idx, first, NULL, &w);
        if (st == QROCE_WC_SUCCESS && qroce_dp_op_local(w->hdr.opcode)) {
            if (!qroce_dp_sq_local(s, qp, idx, w)) {
                return false;
            }
            (*budget)--;
            continue;
        }
        if (st == QROCE_WC_SUCCESS &&
            !wr_op_has(w->hdr.opcode, QROCE_WROP_UC)) {
            st = QROCE_WC_LOC_QP_OP_ERR;    /* no READ or atomics on UC */
        }
        if (st == QROCE_WC_SUCCESS && !qroce_dp_addr(s, qp, &o, sgid)) {
            st = QROCE_WC_LOC_QP_OP_ERR;
        }
        if (st != QROCE_WC_SUCCESS) {
            r->wqe_off = 0;
            qroce_dp_sq_error(s, qp, idx, st);
            return false;
        }
        if (first) {
            trace_qroce_sq_wqe(qp->qpn, idx, w->hdr.opcode, w->len);
        }
        n = MIN(mtu, w->len - r->wqe_off);
        qroce_dp_seg_opcode(w, r->wqe_off, n, &o);
        o.opcode |= ROCE_UC;
        o.psn = r->npsn;
        payload = eng->pkt + roce_hdr_len(o.opcode, !roce_gid_is_v4(o.dgid));
        st = qroce_dp_wqe_copy(s, qp, w, r->wqe_off, payload, n, false);
        if (st == QROCE_RW_FAULT) {
            return false;   /* waits for its page fault, here */
        }
        if (st) {
            /* a message cut short: the responder drops what it got */
            r->wqe_off = 0;
            qroce_dp_sq_error(s, qp, idx, QROCE_WC_LOC_PROT_ERR);
            return false;
        }
        r->wqe_off += n;
        if (r->wqe_off == w->len) {
            o.se = w->hdr.flags & QROCE_WQE_SOLICITED;
            r->wqe_off = 0;
        }
        r->npsn = psn_add(r->npsn, 1);
        qroce_dp_tx(s, qp, &o, n);
        (*budget)--;
        if (!r->wqe_off) {
            if ((w->hdr.flags & QROCE_WQE_SIGNALED) ||
                (qp->flags & QROCE_CREATE_QP_SIG_ALL)) {
                qroce_dp_cqe(s, qp, true, idx,
                             qroce_dp_cqe_opcode(w->hdr.opcode),
                             QROCE_WC_SUCCESS, w->len, false, 0, false);
            }
            qp->sq.ci = idx + 1;
            r->sq_sent = qp->sq.ci;
        }
    }
    return false;
}

/*
 * A UC packet, checked as RC's (AV, state) by the caller.  There are no
 * ACKs: a packet out of sequence, a message without a RECV WQE, a WRITE
 * the MR does not allow, or a malformed message is dropped silently up to
 * the next FIRST or ONLY packet (the RECV WQE is reused for it).
 */
void qroce_uc_rx(QRoceState *s, QRoceQP *qp, RocePktIn *p)
{
    QRoceQPXport *r = &qp->xp;
    uint8_t op = p->opcode & 0x1f;
    bool write = op >= ROCE_WRITE_FIRST && op <= ROCE_WRITE_ONLY_IMM;
    bool first = qroce_dp_op_first(op), last = qroce_dp_op_last(op);
    bool needs_wqe = !write || p->has_imm;
    uint64_t va = p->reth_va;
    QRoceMR *mr;
    int st;

    if (p->psn != r->epsn || first) {
        /* a new message, or a gap: whatever was in progress is lost */
        r->in_msg = false;
        r->epsn = p->psn;
    }
    r->epsn = psn_add(r->epsn, 1);
    if (first != !r->in_msg || (!first && write != r->in_write) ||
        (!last && p->paylen != qp_mtu(qp)) || p->paylen > qp_mtu(qp)) {
        r->in_msg = false;
        qroce_dp_drop(s, "UC packet outside a message, or malformed");
        return;
    }
    if (first) {
        if ((write && !(qp->access_flags & QROCE_ACCESS_REMOTE_WRITE)) ||
            (!write && !qroce_dp_recv_take(s, qp)) ||
            (write && (p->reth_len > QROCE_DEF_MAX_MSG ||
                       (last && p->paylen != p->reth_len) ||
                       (!last && p->reth_len <= p->paylen) ||
                       (p->reth_len &&
                        qroce_rkey_check(s, qp, p->reth_rkey, &va,
                                         p->reth_len,
                                         QROCE_ACCESS_REMOTE_WRITE, &mr))))) {
            qroce_dp_drop(s, "UC message refused (access, key or no RECV WQE)");
            return;
        }
        r->in_msg = true;
        r->in_write = write;
        r->recv_off = 0;
        if (write) {
            r->wr_va = p->reth_va;
            r->wr_rkey = p->reth_rkey;
            r->wr_len = p->reth_len;
        }
    }
    if ((write && last && r->recv_off + p->paylen != r->wr_len) ||
        (write && !last && r->recv_off + p->paylen >= r->wr_len) ||
        (last && needs_wqe && !qroce_dp_recv_take(s, qp))) {
        r->in_msg = false;
        qroce_dp_drop(s, "UC WRITE length mismatch or no RECV WQE for its "
                      "immediate");
        return;
    }
    if (write) {
        QRoceOdpMiss miss;

        st = qroce_dp_write_place(s, qp, p, &miss);
        if (st == QROCE_RW_FAULT) {
            /* UC is unreliable: the message is lost, the page comes in */
            qroce_dp_odp_fault(s, qp, QROCE_PF_RESP, &miss);
        }
        if (st) {
            r->in_msg = false;
            qroce_dp_drop(s, "UC WRITE outside the MR or to an absent page");
            return;
        }
    } else {
        st = qroce_dp_scatter(s, qp, r->recv_off, p->payload, p->paylen);
        if (st == QROCE_RW_FAULT) {
            r->in_msg = false;      /* the RECV WQE stays for the next */
            qroce_dp_drop(s, "UC SEND to an absent ODP page");
            return;
        }
        if (st != QROCE_WC_SUCCESS) {
            /* the RECV WQE is too small or bad: it completes in error */
            qroce_dp_recv_cqe(s, qp, QROCE_CQE_RECV, st, r->recv_off, false, 0,
                              false);
            r->in_msg = false;
            qroce_qp_set_error(s, qp, QROCE_EQE_QP_FATAL);
            return;
        }
    }
    r->recv_off += p->paylen;
    if (last) {
        qroce_dp_msg_received(s, qp, p, write);
        r->in_msg = false;
    }
}
