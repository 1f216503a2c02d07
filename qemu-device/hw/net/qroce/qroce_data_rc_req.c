/*
 * qroce: the RC transport's requester.
 *
 * Doorbells only queue the QP; a bottom half reads send WQEs, segments
 * them at the path MTU and sends RoCEv2 packets, at most ENGINE_BUDGET
 * packets per run.  Every sent message is kept (WQE index, PSN range) in
 * the in-flight ring until the completer sees it acknowledged.  The retry
 * timer, sequence NAKs and RNR NAKs rewind to the oldest unacknowledged
 * message (go-back-N).
 *
 * RDMA READ and the atomics: at most max_rd_atomic of them are
 * outstanding.  FLUSH and ATOMIC WRITE (IBTA 1.5) go the way of a READ of
 * no bytes: counted against max_rd_atomic and completed by an empty READ
 * response.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "qroce_data_xport.h"
#include "qroce_data_rc.h"
#include "qroce_data_common.h"
#include "qroce_data_cc.h"
#include "qroce_objects.h"
#include "qroce_ring.h"
#include "qroce_odp.h"
#include "trace.h"

#define RC_ACK_EVERY    64      /* AckReq inside long messages */
#define RC_MAX_BACKOFF  6       /* retry-backoff: at most 6 doublings */

/*
 * The local ACK timeout: 4.096 us x 2^timeout, no less than the device's
 * floor (x-min-ack-timeout-us, for TCG guests).  As on hardware it stays
 * the same from one retry to the next, so that retry_cnt retries end in
 * timeout x (retry_cnt + 1); the retry-backoff property lets it double
 * with each timeout in a row, at most that many times.
 */
int64_t qroce_rc_ack_timeout_ns(QRoceQP *qp)
{
    QRoceState *s = qp->xp.s;
    int64_t ns = 4096LL << MIN(qp->timeout, 31);

    ns = MAX(ns, (int64_t)s->params.min_ack_timeout_us * 1000);
    return ns << MIN(qp->xp.backoff,
                     MIN(s->params.retry_backoff, RC_MAX_BACKOFF));
}

void qroce_rc_arm_timer(QRoceQP *qp)
{
    if (qp->xp.nsent && qp->timeout && !qp->xp.rnr_wait) {
        timer_mod(qp->xp.timer, engine_now() + qroce_rc_ack_timeout_ns(qp));
    } else if (!qp->xp.nsent && !qp->xp.rnr_wait) {
        timer_del(qp->xp.timer);
    }
}

/* Add a sent message to the in-flight list. */
static QRoceInflight *rc_inflight_add(QRoceQP *qp, uint32_t idx,
                                      const QRoceWqe *w, uint8_t cqe_opcode,
                                      uint8_t kind)
{
    QRoceQPXport *r = &qp->xp;
    QRoceInflight *e = &r->inflight[(r->inflight_head + r->nsent) %
                                      (1u << qp->sq.log2)];

    e->idx = idx;
    e->first_psn = e->last_psn = r->npsn;
    e->len = w->len;
    e->resp_off = 0;
    e->cqe_opcode = cqe_opcode;
    e->wqe_opcode = w->hdr.opcode;
    e->kind = kind;
    e->signaled = (w->hdr.flags & QROCE_WQE_SIGNALED) ||
                  (qp->flags & QROCE_CREATE_QP_SIG_ALL);
    e->done = kind != INFL_PLAIN;
    r->nsent++;
    r->nsent_hi = MAX(r->nsent_hi, r->nsent);
    if (kind == INFL_READ || kind == INFL_ATOMIC) {
        r->nrd++;
    }
    return e;
}

/*
 * A FLUSH (FETH and RETH) or an ATOMIC WRITE (RETH and the WQE's 8 bytes
 * as payload): an in-flight READ of no bytes, which the empty READ
 * response that answers it completes.  *@paylen: the payload's length.
 */
static QRoceInflight *rc_empty_read_req(QRoceState *s, QRoceQP *qp,
                                        uint32_t idx, const QRoceWqe *w,
                                        RocePktOut *o, uint32_t *paylen)
{
    bool flush = w->hdr.opcode == QROCE_WR_FLUSH;

    if (flush) {
        o->opcode = ROCE_FLUSH;
        o->feth = ROCE_FETH(w->hdr.flush.type, w->hdr.flush.level);
        o->reth_va = le64_to_cpu(w->hdr.flush.remote_addr);
        o->reth_rkey = le32_to_cpu(w->hdr.flush.rkey);
        o->reth_len = le32_to_cpu(w->hdr.flush.length);
        *paylen = 0;
    } else {
        o->opcode = ROCE_ATOMIC_WRITE;
        o->reth_len = *paylen = 8;
        memcpy(s->eng->pkt + roce_hdr_len(o->opcode,
                                          !roce_gid_is_v4(o->dgid)),
               &w->hdr.rdma.compare_add, 8);
    }
    return rc_inflight_add(qp, idx, w, flush ? QROCE_CQE_FLUSH :
                           QROCE_CQE_ATOMIC_WRITE, INFL_READ);
}

/*
 * Send a READ request or an atomic (one packet, no payload), or a FLUSH
 * or an ATOMIC WRITE.
 */
static void rc_send_rd_atomic(QRoceState *s, QRoceQP *qp, uint32_t idx,
                              const QRoceWqe *w, RocePktOut *o)
{
    QRoceQPXport *r = &qp->xp;
    uint8_t op = w->hdr.opcode;
    QRoceInflight *e;
    uint32_t paylen = 0;

    o->reth_va = le64_to_cpu(w->hdr.rdma.remote_addr);
    o->reth_rkey = le32_to_cpu(w->hdr.rdma.rkey);
    o->psn = r->npsn;
    o->ackreq = true;
    if (op == QROCE_WR_RDMA_READ) {
        o->opcode = ROCE_READ_REQ;
        o->reth_len = w->len;
        e = rc_inflight_add(qp, idx, w, QROCE_CQE_RDMA_READ, INFL_READ);
        e->last_psn = psn_add(r->npsn, rc_read_pkts(qp, w->len) - 1);
    } else if (wr_op_empty_read(op)) {
        e = rc_empty_read_req(s, qp, idx, w, o, &paylen);
    } else if (op == QROCE_WR_ATOMIC_CMP_SWP) {
        o->opcode = ROCE_CMP_SWAP;
        o->atomic_compare = le64_to_cpu(w->hdr.rdma.compare_add);
        o->atomic_swap_add = le64_to_cpu(w->hdr.rdma.swap);
        e = rc_inflight_add(qp, idx, w, QROCE_CQE_CMP_SWP, INFL_ATOMIC);
    } else {
        o->opcode = ROCE_FETCH_ADD;
        o->atomic_swap_add = le64_to_cpu(w->hdr.rdma.compare_add);
        e = rc_inflight_add(qp, idx, w, QROCE_CQE_FETCH_ADD, INFL_ATOMIC);
    }
    r->npsn = psn_add(e->last_psn, 1);
    r->sq_sent++;
    qroce_dp_tx(s, qp, o, paylen);
}

/* The in-flight entry of the message being segmented, if any. */
QRoceInflight *qroce_rc_cur_inflight(QRoceQP *qp)
{
    QRoceQPXport *r = &qp->xp;

    if (!r->nsent) {
        return NULL;
    }
    return &r->inflight[(r->inflight_head + r->nsent - 1) %
                        (1u << qp->sq.log2)];
}

static bool rc_op_sends(uint8_t op)
{
    return wr_op_has(op, QROCE_WROP_PAYLOAD);
}

/* Ask again for the part of READ @e that has not arrived. */
static void rc_send_read_rest(QRoceState *s, QRoceQP *qp, const QRoceWqe *w,
                              const QRoceInflight *e, RocePktOut *o)
{
    QRoceQPXport *r = &qp->xp;

    o->opcode = ROCE_READ_REQ;
    o->psn = r->npsn;
    o->ackreq = true;
    o->reth_va = le64_to_cpu(w->hdr.rdma.remote_addr) + e->resp_off;
    o->reth_rkey = le32_to_cpu(w->hdr.rdma.rkey);
    o->reth_len = e->len - e->resp_off;
    r->npsn = psn_add(e->last_psn, 1);
    r->sq_sent++;
    qroce_dp_tx(s, qp, o, 0);
}

/*
 * Whether the window lets the next packet go: the congestion window
 * (cwnd PSNs past the oldest unacknowledged one, at most QROCE_WINDOW) and
 * the in-flight list (one entry per SQ WQE).
 */
static bool rc_window_open(QRoceQP *qp, bool first)
{
    QRoceQPXport *r = &qp->xp;
    uint32_t win = MAX(r->cwnd / CC_CWND_ONE, 1);

    if (first && r->nsent >= (1u << qp->sq.log2)) {
        return false;
    }
    return psn_cmp(r->npsn, psn_add(r->una_psn, win)) < 0;
}

/* A send WQE that cannot be sent: complete it in error when it is next. */
static bool rc_sq_fail(QRoceState *s, QRoceQP *qp, uint32_t idx, int st)
{
    QRoceQPXport *r = &qp->xp;

    if (r->nsent && r->inflight[r->inflight_head].idx != idx) {
        return false;       /* complete in order: wait for the ACKs */
    }
    r->wqe_off = 0;
    qroce_dp_sq_error(s, qp, idx, st);
    return true;
}

/* Send one packet of a SEND or WRITE message: true if it went. */
static bool rc_send_seg(QRoceState *s, QRoceQP *qp, uint32_t idx, QRoceWqe *w,
                        bool first, RocePktOut *o)
{
    QRoceQPXport *r = &qp->xp;
    uint32_t n = MIN(qp_mtu(qp), w->len - r->wqe_off);
    uint8_t *payload;
    int ret;

    qroce_dp_seg_opcode(w, r->wqe_off, n, o);
    o->psn = r->npsn;
    payload = s->eng->pkt + roce_hdr_len(o->opcode, !roce_gid_is_v4(o->dgid));
    ret = qroce_dp_wqe_copy(s, qp, w, r->wqe_off, payload, n, false);
    if (ret == QROCE_RW_FAULT) {
        return false;   /* waits for its page fault, here */
    }
    if (ret) {
        rc_sq_fail(s, qp, idx, QROCE_WC_LOC_PROT_ERR);
        return false;
    }
    if (first) {
        rc_inflight_add(qp, idx, w, qroce_dp_cqe_opcode(w->hdr.opcode),
                        INFL_PLAIN);
    }
    r->wqe_off += n;
    if (r->wqe_off == w->len) {
        qroce_rc_cur_inflight(qp)->last_psn = r->npsn;
        qroce_rc_cur_inflight(qp)->done = true;
        o->ackreq = true;
        o->se = w->hdr.flags & QROCE_WQE_SOLICITED;
        r->wqe_off = 0;
        r->sq_sent++;
    } else {
        /* ask for ACKs often enough to keep the window open */
        uint32_t half = MAX(r->cwnd / CC_CWND_ONE / 2, 1);

        o->ackreq = psn_add(r->npsn, 1) % RC_ACK_EVERY == 0 ||
                    (psn_sub(r->npsn, r->una_psn) + 1) % half == 0;
    }
    r->npsn = psn_add(r->npsn, 1);
    qroce_dp_tx(s, qp, o, n);
    return true;
}

/*
 * Retire the local operations at the head of the in-flight list: nothing
 * before them is outstanding any more.
 */
void qroce_rc_retire_locals(QRoceState *s, QRoceQP *qp)
{
    QRoceQPXport *r = &qp->xp;

    while (r->nsent && r->inflight[r->inflight_head].kind == INFL_LOCAL) {
        QRoceInflight *e = &r->inflight[r->inflight_head];

        if (e->signaled) {
            qroce_dp_cqe(s, qp, true, e->idx, e->cqe_opcode,
                         QROCE_WC_SUCCESS, 0, false, 0, false);
        }
        qp->sq.ci = e->idx + 1;
        r->inflight_head = (r->inflight_head + 1) % (1u << qp->sq.log2);
        r->nsent--;
        r->nsent_hi--;
    }
}

/*
 * Local operation @w (REG_MR, LOCAL_INV) at SQ index @idx: executed now,
 * once; it completes in SQ order, after the messages before it, from an
 * in-flight entry with no PSNs (last_psn is the PSN before it, so the ACK
 * of the message before it retires it too).  A rewind does not execute it
 * again: rc_local_replayed() takes its entry back.  False if it failed.
 */
static bool rc_local_op(QRoceState *s, QRoceQP *qp, uint32_t idx,
                        const QRoceWqe *w)
{
    QRoceQPXport *r = &qp->xp;
    QRoceInflight *e;
    int st = qroce_dp_local_exec(s, qp, idx, w);

    if (st != QROCE_WC_SUCCESS) {
        rc_sq_fail(s, qp, idx, st);
        return false;
    }
    e = rc_inflight_add(qp, idx, w, qroce_dp_cqe_opcode(w->hdr.opcode),
                        INFL_LOCAL);
    e->first_psn = r->npsn;
    e->last_psn = psn_sub(r->npsn, 1);
    r->sq_sent++;
    qroce_rc_retire_locals(s, qp);
    return true;
}

/*
 * Going forward again after a rewind, the SQ reaches a local operation
 * that was executed before (its in-flight entry is still recorded): take
 * the entry back instead of executing it twice.
 */
static bool rc_local_replayed(QRoceState *s, QRoceQP *qp, uint32_t idx)
{
    QRoceQPXport *r = &qp->xp;
    QRoceInflight *e;

    if (r->nsent >= r->nsent_hi) {
        return false;
    }
    e = &r->inflight[(r->inflight_head + r->nsent) % (1u << qp->sq.log2)];
    if (e->idx != idx || e->kind != INFL_LOCAL) {
        return false;
    }
    trace_qroce_wqe_local_replayed(qp->qpn, idx);
    r->nsent++;
    r->sq_sent++;
    qroce_rc_retire_locals(s, qp);
    return true;
}

/* Send from the SQ; returns true if it stopped for the budget. */
static bool rc_sq_process(QRoceState *s, QRoceQP *qp, int *budget)
{
    QRoceQPXport *r = &qp->xp;
    uint32_t max_rd = MAX(qp->max_rd_atomic, 1);
    QRoceWqe *w;

    while (qp->state == QROCE_QPS_RTS &&
           r->sq_sent - qp->sq.ci < qp->sq.pi - qp->sq.ci && !r->rnr_wait &&
           !qroce_odp_waiting(qp, QROCE_PF_REQ)) {
        uint32_t idx = r->sq_sent;
        bool first = r->wqe_off == 0, resume;
        RocePktOut o = {};
        uint8_t sgid[16];
        int st;

        if (*budget <= 0) {
            return true;
        }
        if (first && rc_local_replayed(s, qp, idx)) {
            continue;
        }
        if (!rc_window_open(qp, first) || !qroce_dc_may_send(s, qp)) {
            break;              /* wait for ACKs, or for the rate */
        }
        /* the rest of a READ whose first responses arrived */
        resume = first && r->nsent &&
                 r->inflight[r->inflight_head].idx == idx;
        st = qroce_dp_fetch_wqe(s, qp, idx, first && !resume,
                                first && !resume ? NULL :
                                qroce_rc_cur_inflight(qp), &w);
        if (st == QROCE_WC_SUCCESS && !rc_op_sends(w->hdr.opcode) &&
            !wr_op_reads(w->hdr.opcode) && !qroce_dp_op_local(w->hdr.opcode)) {
            st = QROCE_WC_LOC_QP_OP_ERR;
        }
        if (st == QROCE_WC_SUCCESS && r->wqe_off && r->wqe_off >= w->len) {
            st = QROCE_WC_LOC_QP_OP_ERR;    /* cannot happen: be sure */
        }
        if (st == QROCE_WC_SUCCESS && !qroce_dp_addr(s, qp, &o, sgid)) {
            st = QROCE_WC_LOC_QP_OP_ERR;    /* source GID went away */
        }
        if (st != QROCE_WC_SUCCESS) {
            if (!rc_sq_fail(s, qp, idx, st)) {
                break;
            }
            return false;
        }
        if (resume) {
            rc_send_read_rest(s, qp, w, &r->inflight[r->inflight_head], &o);
            (*budget)--;
            if (!timer_pending(r->timer)) {
                qroce_rc_arm_timer(qp);
            }
            continue;
        }
        if (first && r->nrd &&
            ((w->hdr.flags & QROCE_WQE_FENCE) ||
             (wr_op_reads(w->hdr.opcode) && r->nrd >= max_rd))) {
            break;          /* fence, or max_rd_atomic outstanding */
        }
        if (qroce_dp_op_local(w->hdr.opcode)) {
            if (!rc_local_op(s, qp, idx, w)) {
                return false;
            }
            (*budget)--;
            continue;
        }
        if (first) {
            trace_qroce_sq_wqe(qp->qpn, idx, w->hdr.opcode, w->len);
        }
        /*
         * ODP pages where the answer goes are faulted in before it is
         * asked; a bad local key there is found when the answer is placed
         * (LOC_PROT_ERR then), not here
         */
        st = wr_op_reads(w->hdr.opcode) && w->len ?
             qroce_dp_wqe_copy(s, qp, w, 0, NULL, w->len, true) : 0;
        if (st == QROCE_RW_FAULT) {
            break;
        }
        if (wr_op_reads(w->hdr.opcode)) {
            rc_send_rd_atomic(s, qp, idx, w, &o);
        } else if (!rc_send_seg(s, qp, idx, w, first, &o)) {
            return false;
        }
        (*budget)--;
        if (!timer_pending(r->timer)) {
            qroce_rc_arm_timer(qp);
        }
    }
    return false;
}


/*
 * Go back to the oldest unacknowledged PSN (go-back-N): into the middle of
 * a SEND or WRITE message when the responder has its first packets (it
 * keeps a message's state across a gap), to the start of a READ or an
 * atomic.  A READ that had responses will be asked again whole.
 */
void qroce_rc_rewind(QRoceState *s, QRoceQP *qp)
{
    QRoceQPXport *r = &qp->xp;
    QRoceInflight *e;
    uint32_t target, last;

    if (!r->nsent) {
        r->wqe_off = 0;
        return;
    }
    e = &r->inflight[r->inflight_head];
    /* a message still being segmented has sent up to npsn - 1 */
    last = (e->idx == r->sq_sent && r->wqe_off) ? r->npsn : e->last_psn;
    target = e->first_psn;
    if (e->kind == INFL_PLAIN && psn_cmp(r->una_psn, e->first_psn) > 0 &&
        psn_cmp(r->una_psn, last) <= 0) {
        target = r->una_psn;
    } else if (e->kind == INFL_READ && e->resp_off) {
        /* ask for the rest of a READ (the responses already in stay) */
        target = psn_add(e->first_psn, e->resp_off / qp_mtu(qp));
    } else {
        e->resp_off = 0;
    }
    trace_qroce_rc_rewind(qp->qpn, e->idx, target, r->npsn);
    r->sq_hi = qroce_sq_sent_bound(qp);     /* sent: the guest's no more */
    r->npsn = r->una_psn = target;
    r->sq_sent = e->idx;
    r->wqe_off = e->kind == INFL_PLAIN ?
                 psn_sub(target, e->first_psn) * qp_mtu(qp) : 0;
    /* a resumed message or READ keeps its entry */
    r->nsent = r->wqe_off || e->resp_off ? 1 : 0;
    r->nrd = e->resp_off ? 1 : 0;
    r->resync = true;
}

/* The retry or RNR timer expired (run from the bottom half). */
void qroce_rc_timeout(QRoceState *s, QRoceQP *qp)
{
    QRoceQPXport *r = &qp->xp;

    if (qp->state != QROCE_QPS_RTS) {
        return;
    }
    if (qroce_odp_waiting(qp, QROCE_PF_REQ)) {
        return;     /* no retry counted: ODP_RESUME arms the timer again */
    }
    if (r->rnr_wait) {
        r->rnr_wait = false;
        return;
    }
    if (!r->nsent && !r->wqe_off) {
        return;
    }
    trace_qroce_rc_timeout(qp->qpn, r->inflight[r->inflight_head].idx,
                           r->retry_left);
    if (r->retry_left-- <= 0) {
        qroce_dp_sq_error(s, qp, r->inflight[r->inflight_head].idx,
                          QROCE_WC_RETRY_EXC_ERR);
        return;
    }
    r->backoff++;
    qroce_cc_cwnd_cut(s, qp, true);
    qroce_rc_rewind(s, qp);
}

bool qroce_rc_process(QRoceState *s, QRoceQP *qp, int *budget)
{
    return qroce_rc_rsp_process(s, qp, budget) ||
           rc_sq_process(s, qp, budget);
}
