/*
 * qroce: what the transports share -- the run queue they put QPs on,
 * addressing and sending packets, reading, checking and copying send
 * WQEs, scattering into RECV WQEs, completions, and the move of a QP to
 * ERR.  It sits below the transports and the scheduler and calls neither.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/main-loop.h"
#include "qemu/bswap.h"
#include "qroce_data_common.h"
#include "qroce_data_cc.h"
#include "qroce_objects.h"
#include "qroce_ring.h"
#include "qroce_port.h"
#include "qroce_odp.h"
#include "trace.h"

void qroce_dp_cqe(QRoceState *s, QRoceQP *qp, bool sq, uint32_t idx,
                  uint8_t opcode, uint8_t status, uint32_t len, bool imm,
                  uint32_t imm_wire, bool solicited)
{
    QRoceCQ *cq = qroce_cq_get(s, sq ? qp->scqn : qp->rcqn);
    struct qroce_cqe cqe = {
        .wqe_index = cpu_to_le32(idx),
        .qpn = cpu_to_le32(qp->qpn),
        .byte_len = cpu_to_le32(len),
        .opcode = opcode,
        .status = status,
        .flags = (sq ? QROCE_CQE_F_SQ : 0) | (imm ? QROCE_CQE_F_IMM : 0),
    };

    if (imm) {
        stl_be_p(&cqe.imm_data, imm_wire);
    }
    if (cq) {
        qroce_cq_post(s, cq, &cqe, solicited);
    }
}

int qroce_dp_inject_wqe(QRoceState *s, QRoceQP *qp, uint32_t idx)
{
    QRoceQPXport *r = &qp->xp;
    QRoceParams *p = &s->params;

    /* a WQE that must wait for earlier ones is fetched again: same fault */
    if (r->inj_status && r->inj_idx == idx) {
        return r->inj_status;
    }
    /* one sent again after a loss was already spared: not now */
    if ((int32_t)(idx - r->inj_next) < 0) {
        return QROCE_WC_SUCCESS;
    }
    r->inj_next = idx + 1;
    if (!qroce_inject(s, &p->inj_wqe_err,
                      !p->inj_wqe_qpn || p->inj_wqe_qpn == qp->qpn,
                      "wqe-err", qp->qpn)) {
        return QROCE_WC_SUCCESS;
    }
    r->inj_idx = idx;
    r->inj_status = p->inj_wqe_status &&
                    p->inj_wqe_status <= QROCE_WC_GENERAL_ERR ?
                    p->inj_wqe_status : QROCE_WC_GENERAL_ERR;
    return r->inj_status;
}

void qroce_dp_drop(QRoceState *s, const char *why)
{
    qroce_count(s, QROCE_CNT_ROCE_RX_DROPS);
    trace_qroce_roce_drop(why);
}

/* ------------------------------------------------------------------ */
/* Sending                                                             */
/* ------------------------------------------------------------------ */

/* Fill the address part of an outgoing packet from the QP's AV. */
bool qroce_dp_addr(QRoceState *s, QRoceQP *qp, RocePktOut *o,
                   uint8_t sgid[16])
{
    if (!qroce_gid_get(s, qp->av.sgid_index, sgid)) {
        return false;
    }
    o->dmac = qp->av.dmac;
    o->smac = qroce_mac(s);
    o->sgid = sgid;
    o->dgid = qp->av.dgid;
    o->tclass = qp->av.traffic_class;
    o->hop_limit = qp->av.hop_limit ? qp->av.hop_limit : 64;
    o->flow_label = qp->av.flow_label;
    o->sport = qp_udp_sport(qp->qpn);
    o->dqpn = qp->dest_qpn;
    return true;
}

void qroce_dp_tx(QRoceState *s, QRoceQP *qp, RocePktOut *o, uint32_t paylen)
{
    struct iovec iov;
    QRoceQPXport *r = &qp->xp;
    bool request = o->opcode != ROCE_ACK && o->opcode != ROCE_CNP &&
                   (o->opcode < ROCE_READ_RESP_FIRST ||
                    o->opcode > ROCE_ATOMIC_ACK);

    if (s->params.ecn) {
        o->tclass = (o->tclass & ~ROCE_ECN_MASK) | ROCE_ECN_ECT0;
    }
    iov.iov_base = s->eng->pkt;
    iov.iov_len = roce_build(s->eng->pkt, o, paylen);
    trace_qroce_roce_tx(qp->qpn, o->opcode, o->psn, paylen);
    qroce_count(s, QROCE_CNT_ROCE_TX_PKTS);
    if (request && qp->type == QROCE_QPT_RC) {
        if (psn_cmp(o->psn, r->hi_psn) < 0) {
            qroce_count(s, QROCE_CNT_ROCE_RETRANS);
        } else {
            r->hi_psn = psn_add(o->psn, 1);
        }
    }
    if (o->opcode != ROCE_CNP) {
        qroce_dc_sent(s, qp, iov.iov_len);
    }
    qroce_wire_tx(s, &iov, 1);
}

/* Refuse send WQE @idx of @qp: trace @field and @val (§17), return @st. */
static int qroce_dp_wqe_bad(QRoceQP *qp, uint32_t idx, const char *field,
                            uint64_t val, int st)
{
    trace_qroce_ub_wqe(qp->qpn, idx, field, val, st);
    return st;
}

/* Read send WQE @idx and check it; returns a QROCE_WC_* status. */
int qroce_dp_read_wqe(QRoceState *s, QRoceQP *qp, uint32_t idx, QRoceWqe *w)
{
    uint64_t off = (uint64_t)(idx & ((1u << qp->sq.log2) - 1)) <<
                   qp->sq.wqe_shift;
    uint32_t stride = 1u << qp->sq.wqe_shift;
    uint64_t total = 0;
    uint32_t access;
    int i;

    if (qroce_bt_rw(s, &qp->sq.bt, off, &w->hdr, sizeof(w->hdr), false)) {
        return qroce_dp_wqe_bad(qp, idx, "SQ ring", off,
                                QROCE_WC_LOC_QP_OP_ERR);
    }
    w->len = 0;
    if (!wr_op_has(w->hdr.opcode, qp->type == QROCE_QPT_RC ? QROCE_WROP_RC :
                                  qp->type == QROCE_QPT_UC ? QROCE_WROP_UC :
                                  QROCE_WROP_UD)) {
        return qroce_dp_wqe_bad(qp, idx, "opcode (for the QP's type)",
                                w->hdr.opcode, QROCE_WC_LOC_QP_OP_ERR);
    }
    if (qroce_dp_op_local(w->hdr.opcode)) {
        return QROCE_WC_SUCCESS;    /* no SGEs: qroce_dp_local_exec() */
    }
    if (wr_op_empty_read(w->hdr.opcode)) {
        /* no SGEs either: what they send is in the header */
        if (w->hdr.opcode == QROCE_WR_FLUSH &&
            (w->hdr.flush.type > 0xf || w->hdr.flush.level > 3)) {
            return qroce_dp_wqe_bad(qp, idx, "flush type/level",
                                    w->hdr.flush.type << 8 |
                                    w->hdr.flush.level,
                                    QROCE_WC_LOC_QP_OP_ERR);
        }
        return QROCE_WC_SUCCESS;
    }
    /* READ responses and atomic results are written to the SGEs */
    access = wr_op_reads(w->hdr.opcode) ? QROCE_ACCESS_LOCAL_WRITE : 0;
    if ((w->hdr.flags & QROCE_WQE_INLINE) && access) {
        return qroce_dp_wqe_bad(qp, idx, "flags (INLINE READ/atomic)",
                                w->hdr.flags, QROCE_WC_LOC_QP_OP_ERR);
    }
    if (w->hdr.flags & QROCE_WQE_INLINE) {
        uint32_t n = le32_to_cpu(w->hdr.inline_len);

        if (n > QROCE_MAX_INLINE || sizeof(w->hdr) + n > stride ||
            qroce_bt_rw(s, &qp->sq.bt, off + sizeof(w->hdr), w->inl, n,
                        false)) {
            return qroce_dp_wqe_bad(qp, idx, "inline_len", n,
                                    QROCE_WC_LOC_LEN_ERR);
        }
        w->len = n;
        return QROCE_WC_SUCCESS;
    }
    if (w->hdr.num_sge > QROCE_MAX_SGE ||
        sizeof(w->hdr) + w->hdr.num_sge * sizeof(struct qroce_sge) > stride ||
        qroce_bt_rw(s, &qp->sq.bt, off + sizeof(w->hdr), w->sge,
                    w->hdr.num_sge * sizeof(struct qroce_sge), false)) {
        return qroce_dp_wqe_bad(qp, idx, "num_sge", w->hdr.num_sge,
                                QROCE_WC_LOC_LEN_ERR);
    }
    for (i = 0; i < w->hdr.num_sge; i++) {
        QRoceMR *mr;
        /*
         * What is sent is checked before it is sent.  Where a READ's or an
         * atomic's answer goes is checked when it is placed, as hardware
         * does: the request goes out (and an atomic executes) first.  An
         * SGE of 0 bytes names no memory: its key is not looked at.
         */
        int st = access || !w->sge[i].length ? QROCE_WC_SUCCESS :
                 qroce_mr_check(s, le32_to_cpu(w->sge[i].lkey), qp->pdn,
                                le64_to_cpu(w->sge[i].addr),
                                le32_to_cpu(w->sge[i].length), access, &mr);

        if (st != QROCE_WC_SUCCESS) {
            return qroce_dp_wqe_bad(qp, idx, "sge lkey",
                                    le32_to_cpu(w->sge[i].lkey), st);
        }
        total += le32_to_cpu(w->sge[i].length);
    }
    if (total > QROCE_DEF_MAX_MSG ||
        (wr_op_has(w->hdr.opcode, QROCE_WROP_ATOMIC) && total != 8)) {
        return qroce_dp_wqe_bad(qp, idx, "sge lengths", total,
                                QROCE_WC_LOC_LEN_ERR);
    }
    w->len = total;
    return QROCE_WC_SUCCESS;
}

/*
 * Copy bytes [off, off + n) of the WQE's SGE list to @buf, or from @buf
 * into it (@to_guest: READ responses, atomic results); @buf NULL only
 * checks that ODP pages are there.  An absent one raises the send side's
 * page fault: QROCE_RW_FAULT, the WQE waits (-1 if the fault could not
 * be resolved).
 */
int qroce_dp_wqe_copy(QRoceState *s, QRoceQP *qp, QRoceWqe *w, uint32_t off,
                      uint8_t *buf, uint32_t n, bool to_guest)
{
    uint32_t access = to_guest ? QROCE_ACCESS_LOCAL_WRITE : 0;
    int i, ret;

    if (w->hdr.flags & QROCE_WQE_INLINE) {
        if (to_guest || off > w->len || n > w->len - off) {
            return -1;
        }
        if (buf) {
            memcpy(buf, w->inl + off, n);
        }
        return 0;
    }
    for (i = 0; i < w->hdr.num_sge && n; i++) {
        uint32_t len = le32_to_cpu(w->sge[i].length);
        uint64_t addr = le64_to_cpu(w->sge[i].addr);
        QRoceMR *mr;
        uint32_t k;
        QRoceOdpMiss miss;

        if (off >= len) {
            off -= len;
            continue;
        }
        k = MIN(n, len - off);
        if (qroce_mr_check(s, le32_to_cpu(w->sge[i].lkey), qp->pdn,
                           addr + off, k, access, &mr)) {
            return -1;
        }
        ret = qroce_mr_rw(s, mr, addr + off, buf, k, to_guest, &miss);
        if (ret == QROCE_RW_FAULT) {
            miss.end = addr + len;
            return qroce_dp_odp_fault(s, qp, QROCE_PF_REQ, &miss) ?
                   QROCE_RW_FAULT : -1;
        }
        if (ret) {
            return -1;
        }
        buf = buf ? buf + k : NULL;
        n -= k;
        off = 0;
    }
    return n ? -1 : 0;
}

/* Complete send WQE @idx with an error, then move the QP to ERR. */
void qroce_dp_sq_error(QRoceState *s, QRoceQP *qp, uint32_t idx, int status)
{
    trace_qroce_sq_wqe_err(qp->qpn, idx, status);
    qroce_dp_cqe(s, qp, true, idx, QROCE_CQE_SEND, status, 0, false, 0, false);
    qp->sq.ci = idx + 1;
    qp->xp.sq_sent = qp->xp.sq_hi = qp->sq.ci;
    qp->xp.nsent = qp->xp.nsent_hi = 0;
    qp->xp.nrd = 0;
    qroce_qp_set_error(s, qp, 0);
}

int qroce_dp_local_exec(QRoceState *s, QRoceQP *qp, uint32_t idx,
                        const QRoceWqe *w)
{
    uint8_t op = w->hdr.opcode;
    uint32_t key;
    const char *why = NULL;
    int st;

    if (op == QROCE_WR_REG_MR) {
        key = le32_to_cpu(w->hdr.reg.key);
        trace_qroce_wqe_reg_mr(qp->qpn, idx, key,
                               le64_to_cpu(w->hdr.reg.iova),
                               le32_to_cpu(w->hdr.reg.length),
                               le16_to_cpu(w->hdr.reg.npages),
                               w->hdr.reg.page_shift,
                               le32_to_cpu(w->hdr.reg.access));
        st = qroce_frmr_reg(s, qp->pdn, &w->hdr, &why);
    } else if (op == QROCE_WR_BIND_MW) {
        key = le32_to_cpu(w->hdr.bind.mw_key);
        trace_qroce_wqe_bind_mw(qp->qpn, idx, key,
                                le32_to_cpu(w->hdr.bind.new_key),
                                le32_to_cpu(w->hdr.bind.mr_lkey),
                                le64_to_cpu(w->hdr.bind.addr),
                                le64_to_cpu(w->hdr.bind.length),
                                le32_to_cpu(w->hdr.bind.access));
        st = qroce_mw_bind(s, qp, &w->hdr, &why);
    } else {
        key = le32_to_cpu(w->hdr.imm_data);
        trace_qroce_wqe_local_inv(qp->qpn, idx, key);
        st = qroce_key_inv(s, qp, key, &why);
    }
    if (st != QROCE_WC_SUCCESS) {
        trace_qroce_ub_wqe_field(qp->qpn, idx, qroce_wr_ops[op].name, key,
                                 why ? why : "?");
    }
    return st;
}

bool qroce_dp_sq_local(QRoceState *s, QRoceQP *qp, uint32_t idx,
                       const QRoceWqe *w)
{
    int st = qroce_dp_local_exec(s, qp, idx, w);

    if (st != QROCE_WC_SUCCESS) {
        qp->xp.wqe_off = 0;
        qroce_dp_sq_error(s, qp, idx, st);
        return false;
    }
    if ((w->hdr.flags & QROCE_WQE_SIGNALED) ||
        (qp->flags & QROCE_CREATE_QP_SIG_ALL)) {
        qroce_dp_cqe(s, qp, true, idx,
                     qroce_dp_cqe_opcode(w->hdr.opcode),
                     QROCE_WC_SUCCESS, 0, false, 0, false);
    }
    qp->sq.ci = idx + 1;
    qp->xp.sq_sent = qp->sq.ci;
    return true;
}

/*
 * Send WQE @idx, checked, in the QP's copy: read from the guest at the
 * first packet of its message (@first) and never again while it is being
 * segmented.  Going back into a message already in flight (@e, after a
 * loss) reads it again, and the WQE read must still be the one recorded
 * (opcode and length): a guest that rewrote it gets an error.
 */
int qroce_dp_fetch_wqe(QRoceState *s, QRoceQP *qp, uint32_t idx, bool first,
                       const QRoceInflight *e, QRoceWqe **out)
{
    QRoceQPXport *r = &qp->xp;
    int st;

    *out = r->txw;
    if (!first && r->txw_valid && r->txw_idx == idx) {
        return QROCE_WC_SUCCESS;
    }
    r->txw_valid = false;
    st = qroce_dp_read_wqe(s, qp, idx, r->txw);
    if (st == QROCE_WC_SUCCESS && first) {
        st = qroce_dp_inject_wqe(s, qp, idx);
    }
    if (st != QROCE_WC_SUCCESS) {
        return st;
    }
    if (!first && (!e || e->idx != idx || e->len != r->txw->len ||
                   e->wqe_opcode != r->txw->hdr.opcode)) {
        trace_qroce_ub_wqe_changed(qp->qpn, idx);
        return QROCE_WC_LOC_QP_OP_ERR;
    }
    r->txw_valid = true;
    r->txw_idx = idx;
    return QROCE_WC_SUCCESS;
}

/*
 * The RC opcode of the packet of a SEND or WRITE message that carries
 * @n bytes from offset @off of @len; the RETH with the first WRITE packet,
 * the IETH with the last packet of a SEND with Invalidate.
 */
void qroce_dp_seg_opcode(const QRoceWqe *w, uint32_t off, uint32_t n,
                         RocePktOut *o)
{
    bool imm = wr_op_has(w->hdr.opcode, QROCE_WROP_IMM);
    bool write = wr_op_has(w->hdr.opcode, QROCE_WROP_REMOTE);
    bool inv = wr_op_has(w->hdr.opcode, QROCE_WROP_INV);
    bool first = off == 0, last = off + n == w->len;

    if (first && last) {
        o->opcode = write ? (imm ? ROCE_WRITE_ONLY_IMM : ROCE_WRITE_ONLY) :
                    inv ? ROCE_SEND_ONLY_INV :
                    (imm ? ROCE_SEND_ONLY_IMM : ROCE_SEND_ONLY);
    } else if (first) {
        o->opcode = write ? ROCE_WRITE_FIRST : ROCE_SEND_FIRST;
    } else if (last) {
        o->opcode = write ? (imm ? ROCE_WRITE_LAST_IMM : ROCE_WRITE_LAST) :
                    inv ? ROCE_SEND_LAST_INV :
                    (imm ? ROCE_SEND_LAST_IMM : ROCE_SEND_LAST);
    } else {
        o->opcode = write ? ROCE_WRITE_MIDDLE : ROCE_SEND_MIDDLE;
    }
    if (write && first) {
        o->reth_va = le64_to_cpu(w->hdr.rdma.remote_addr);
        o->reth_rkey = le32_to_cpu(w->hdr.rdma.rkey);
        o->reth_len = w->len;
    }
    o->imm = ldl_be_p(&w->hdr.imm_data);
    o->ieth = le32_to_cpu(w->hdr.imm_data);     /* the rkey, SEND_INV */
}

/* ------------------------------------------------------------------ */
/* Receiving                                                           */
/* ------------------------------------------------------------------ */

/* Does RC/UC SEND or WRITE opcode @op (low 5 bits) start / end a message? */
bool qroce_dp_op_first(uint8_t op)
{
    return op == ROCE_SEND_FIRST || op == ROCE_SEND_ONLY ||
           op == ROCE_SEND_ONLY_IMM || op == ROCE_SEND_ONLY_INV ||
           op == ROCE_WRITE_FIRST || op == ROCE_WRITE_ONLY ||
           op == ROCE_WRITE_ONLY_IMM;
}

bool qroce_dp_op_last(uint8_t op)
{
    return op == ROCE_SEND_LAST || op == ROCE_SEND_LAST_IMM ||
           op == ROCE_SEND_ONLY || op == ROCE_SEND_ONLY_IMM ||
           op == ROCE_SEND_LAST_INV || op == ROCE_SEND_ONLY_INV ||
           op == ROCE_WRITE_LAST || op == ROCE_WRITE_LAST_IMM ||
           op == ROCE_WRITE_ONLY || op == ROCE_WRITE_ONLY_IMM;
}

/*
 * Take the next RECV WQE of @qp's RQ or SRQ for the message that starts
 * now, unless the QP already holds one (a UC message dropped half way
 * leaves its WQE for the next).  The header and SGEs are copied into the
 * QP and the queue advances at once, so that another QP on the SRQ takes
 * the next WQE.  False if none is posted.  A WQE that cannot be read is
 * taken all the same and completes in error (its status is kept).
 */
int qroce_dp_write_place(QRoceState *s, QRoceQP *qp, const RocePktIn *p,
                         QRoceOdpMiss *miss)
{
    QRoceQPXport *r = &qp->xp;
    uint64_t va = r->wr_va + r->recv_off;
    QRoceMR *mr;
    int ret;

    if (!p->paylen) {
        return 0;
    }
    if (qroce_rkey_check(s, qp, r->wr_rkey, &va, p->paylen,
                         QROCE_ACCESS_REMOTE_WRITE, &mr)) {
        return -1;
    }
    ret = qroce_mr_rw(s, mr, va, (void *)p->payload, p->paylen, true, miss);
    miss->end = va + (r->wr_len - r->recv_off);
    return ret;
}

uint64_t qroce_dp_recv_room(const QRoceQP *qp)
{
    uint64_t room = 0;
    int i;

    for (i = 0; i < qp->xp.rwqe_nsge; i++) {
        room += le32_to_cpu(qp->xp.rwqe_sge[i].length);
    }
    return room;
}

bool qroce_dp_recv_take(QRoceState *s, QRoceQP *qp)
{
    QRoceQPXport *r = &qp->xp;
    QRoceSRQ *srq;
    QRoceWQ *wq = qroce_qp_recv_wq(s, qp, &srq);
    uint64_t base = (uint64_t)(wq->ci & ((1u << wq->log2) - 1)) <<
                    wq->wqe_shift;
    struct qroce_recv_wqe h;

    if (r->rwqe_held) {
        return true;
    }
    if (wq->ci == wq->pi) {
        return false;
    }
    r->rwqe_status = QROCE_WC_SUCCESS;
    r->rwqe_nsge = 0;
    memset(&h, 0, sizeof(h));
    if (qroce_bt_rw(s, &wq->bt, base, &h, sizeof(h), false) ||
        h.num_sge > QROCE_MAX_SGE ||
        sizeof(h) + h.num_sge * sizeof(r->rwqe_sge[0]) >
        (1u << wq->wqe_shift) ||
        qroce_bt_rw(s, &wq->bt, base + sizeof(h), r->rwqe_sge,
                    h.num_sge * sizeof(r->rwqe_sge[0]), false)) {
        trace_qroce_ub_recv_wqe(qp->qpn, wq->ci, srq ? srq->srqn : 0,
                                h.num_sge);
        r->rwqe_status = QROCE_WC_LOC_QP_OP_ERR;
    } else {
        r->rwqe_nsge = h.num_sge;
    }
    r->rwqe_held = true;
    r->rwqe_srq = srq != NULL;
    r->rwqe_idx = wq->ci;
    /* an SRQ's WQEs complete out of order: the CQE names the tag */
    r->rwqe_cqe_idx = srq ? le32_to_cpu(h.srq_tag) : wq->ci;
    r->rwqe_pdn = srq ? srq->pdn : qp->pdn;   /* an SRQ's WQEs: its PD */
    trace_qroce_recv_take(qp->qpn, wq->ci, srq ? srq->srqn : 0,
                          r->rwqe_nsge);
    wq->ci++;
    if (srq) {
        qroce_srq_consumed(s, srq);
    }
    return true;
}

/*
 * Scatter @n bytes at offset @off of the RECV WQE the QP holds: a
 * QROCE_WC_* status, or QROCE_RW_FAULT: an ODP page is absent, the
 * receive side waits for its page fault (the packet is not placed).
 */
int qroce_dp_scatter(QRoceState *s, QRoceQP *qp, uint32_t off,
                     const uint8_t *src, uint32_t n)
{
    QRoceQPXport *r = &qp->xp;
    int i;

    if (!r->rwqe_held) {
        return QROCE_WC_LOC_QP_OP_ERR;
    }
    if (r->rwqe_status != QROCE_WC_SUCCESS) {
        return r->rwqe_status;
    }
    for (i = 0; i < r->rwqe_nsge && n; i++) {
        uint32_t len = le32_to_cpu(r->rwqe_sge[i].length);
        uint64_t addr = le64_to_cpu(r->rwqe_sge[i].addr);
        QRoceMR *mr;
        uint32_t k;
        QRoceOdpMiss miss;
        int st;

        if (off >= len) {
            off -= len;
            continue;
        }
        k = MIN(n, len - off);
        st = qroce_mr_check(s, le32_to_cpu(r->rwqe_sge[i].lkey),
                            r->rwqe_pdn, addr + off, k,
                            QROCE_ACCESS_LOCAL_WRITE, &mr);
        if (st) {
            return st;
        }
        st = qroce_mr_rw(s, mr, addr + off, (void *)src, k, true, &miss);
        miss.end = addr + len;
        if (st == QROCE_RW_FAULT &&
            qroce_dp_odp_fault(s, qp, QROCE_PF_RESP, &miss)) {
            return QROCE_RW_FAULT;
        }
        if (st) {
            return QROCE_WC_LOC_PROT_ERR;
        }
        src += k;
        n -= k;
        off = 0;
    }
    return n ? QROCE_WC_LOC_LEN_ERR : QROCE_WC_SUCCESS;
}

/*
 * Write the CQE of the RECV WQE the QP holds (@cqe without its index) and
 * let the WQE go.  Nothing if it holds none (callers take one first).
 */
void qroce_dp_recv_complete(QRoceState *s, QRoceQP *qp,
                            struct qroce_cqe *cqe, bool solicited)
{
    QRoceQPXport *r = &qp->xp;
    QRoceCQ *cq = qroce_cq_get(s, qp->rcqn);

    if (!r->rwqe_held) {
        qroce_dp_drop(s, "a receive completion without a RECV WQE");
        return;
    }
    cqe->wqe_index = cpu_to_le32(r->rwqe_cqe_idx);
    cqe->qpn = cpu_to_le32(qp->qpn);
    if (r->rwqe_srq) {
        cqe->flags |= QROCE_CQE_F_SRQ;
    }
    r->rwqe_held = false;
    if (cq) {
        qroce_cq_post(s, cq, cqe, solicited);
    }
}

/* The same for an RC RECV: opcode, status, length, immediate. */
void qroce_dp_recv_cqe(QRoceState *s, QRoceQP *qp, uint8_t opcode,
                       uint8_t status, uint32_t len, bool imm,
                       uint32_t imm_wire, bool solicited)
{
    struct qroce_cqe cqe = {
        .byte_len = cpu_to_le32(len),
        .opcode = opcode,
        .status = status,
        .flags = imm ? QROCE_CQE_F_IMM : 0,
    };

    if (imm) {
        stl_be_p(&cqe.imm_data, imm_wire);
    }
    qroce_dp_recv_complete(s, qp, &cqe, solicited);
}

/*
 * The last packet of a SEND or WRITE message is in: a SEND or a WRITE with
 * immediate completes its RECV WQE; a SEND with Invalidate (its rkey
 * invalidated by the transport) names the rkey in the CQE.
 */
void qroce_dp_msg_received(QRoceState *s, QRoceQP *qp, RocePktIn *p,
                           bool write)
{
    if (p->has_ieth) {
        struct qroce_cqe cqe = {
            .byte_len = cpu_to_le32(qp->xp.recv_off),
            .imm_data = cpu_to_le32(p->ieth),
            .opcode = QROCE_CQE_RECV,
            .flags = QROCE_CQE_F_INV,
        };

        qroce_dp_recv_complete(s, qp, &cqe, p->se);
    } else if (!write || p->has_imm) {
        qroce_dp_recv_cqe(s, qp,
                          write ? QROCE_CQE_RECV_RDMA_IMM : QROCE_CQE_RECV,
                          QROCE_WC_SUCCESS, qp->xp.recv_off, p->has_imm,
                          p->imm, p->se);
    }
    qp->xp.in_msg = false;
}

void qroce_dp_qp_to_err(QRoceState *s, QRoceQP *qp, uint32_t old_state)
{
    QRoceQPXport *r = &qp->xp;

    qroce_odp_qp_reset(qp);
    timer_del(r->timer);
    timer_del(r->pace_timer);
    r->timer_fired = false;
    r->nsent = r->nsent_hi = 0;
    r->nrd = 0;
    r->rsp_count = 0;
    r->rnr_wait = false;
    r->txw_valid = r->rdw_valid = false;
    r->sq_sent = r->sq_hi = qp->sq.ci;
    r->wqe_off = 0;
    if ((qp->flags & QROCE_CREATE_QP_SRQ) && old_state != QROCE_QPS_ERR) {
        /* the SRQ's WQEs stay; the QP will take no more of them */
        qroce_async_event(s, QROCE_EQE_QP_LAST_WQE, qp->qpn, 0);
    }
    qroce_dp_schedule(s, qp);   /* the engine flushes the WQs */
}

/* Move a QP to ERR on the device's own initiative. */
void qroce_qp_set_error(QRoceState *s, QRoceQP *qp, uint8_t event)
{
    uint32_t old = qp->state;

    if (old == QROCE_QPS_ERR || old == QROCE_QPS_RESET) {
        return;
    }
    qp->state = QROCE_QPS_ERR;
    if (event) {
        qroce_async_event(s, event, qp->qpn, 0);
    }
    qroce_dp_qp_to_err(s, qp, old);
}

bool qroce_dp_odp_fault(QRoceState *s, QRoceQP *qp, int side,
                        const QRoceOdpMiss *miss)
{
    int f = qroce_odp_fault(s, qp, side, miss);

    if (f == QROCE_ODP_RAISE) {
        qroce_async_event(s, QROCE_EQE_PAGE_FAULT, qp->qpn, side);
    }
    return f != QROCE_ODP_FAILED;
}
