/*
 * qroce: the RC transport.
 *
 * Requester: doorbells only queue the QP; a bottom half reads send WQEs,
 * segments them at the path MTU and sends RoCEv2 packets, at most
 * RC_BUDGET packets per run.  Every sent message is kept (WQE index, PSN
 * range) until an ACK covers it; send completions are written then, in
 * order.  A retry timer, sequence NAKs and RNR NAKs rewind to the oldest
 * unacknowledged message (go-back-N).
 *
 * Responder: packets are checked as rxe checks them (destination is a
 * local GID, QP exists and is RC and ready, addresses match the QP's AV,
 * P_Key, ICRC) and dropped silently otherwise; in-sequence SENDs are
 * scattered into the RECV WQE, duplicates are ACKed again, a gap gets one
 * sequence NAK, a missing RECV WQE gets an RNR NAK.
 *
 * RDMA READ and the atomics: the requester keeps at most max_rd_atomic of
 * them outstanding and takes READ responses and atomic ACKs as implicit
 * ACKs of everything before them.  The responder executes them when they
 * arrive in sequence and queues its answers (READ response streams, atomic
 * ACKs, and the ACKs that must not overtake them) on a per-QP queue of
 * max_dest_rd_atomic resources that the bottom half drains with the same
 * packet budget as the send queues.  Atomics run in the device's one
 * thread, so they are atomic against every other QP of the device
 * (IBV_ATOMIC_HCA); a duplicate atomic is answered from a history of the
 * last results, never executed twice; a duplicate READ is read again.
 * FLUSH and ATOMIC WRITE (IBTA 1.5) go the way of a READ of no bytes:
 * counted against max_rd_atomic, answered with an empty READ response,
 * and a duplicate is answered again, not executed again.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "qroce_data_xport.h"
#include "qroce_data_common.h"
#include "qroce_data_cc.h"
#include "qroce_ctrl_objs.h"
#include "qroce_ring.h"
#include "trace.h"

#define RC_ACK_EVERY    64      /* AckReq inside long messages */
#define RC_MAX_BACKOFF  6       /* the timeout doubles at most 6 times */

enum {
    RC_KIND_PLAIN,              /* SEND or WRITE: an ACK completes it */
    RC_KIND_READ,               /* completes with its last READ response */
    RC_KIND_ATOMIC,             /* completes with its atomic ACK */
    RC_KIND_LOCAL,              /* REG_MR, LOCAL_INV: no PSNs, executed once */
};

enum {
    RC_RSP_ACK,
    RC_RSP_READ,
    RC_RSP_ATOMIC,
};

/* RNR timer values of the IB spec, in microseconds. */
static const uint32_t rnr_usec[32] = {
    655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960,
    1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720,
    40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
};

static void rc_send_ack(QRoceState *s, QRoceQP *qp, uint8_t syndrome,
                        uint32_t psn)
{
    RocePktOut o = {};
    uint8_t sgid[16];

    if (!qroce_dp_addr(s, qp, &o, sgid)) {
        return;
    }
    o.opcode = ROCE_ACK;
    o.psn = psn;
    o.aeth_syndrome = syndrome;
    o.aeth_msn = qp->rc.msn & 0xffffff;
    trace_qroce_rc_ack_tx(qp->qpn, syndrome, psn);
    if (syndrome == ROCE_AETH_NAK_SEQ) {
        qroce_count(s, QROCE_CNT_ROCE_SEQ_NAKS);
    } else if (ROCE_AETH_TYPE(syndrome) == 1) {
        qroce_count(s, QROCE_CNT_ROCE_RNR_NAKS);
    }
    qroce_dp_tx(s, qp, &o, 0);
}

/*
 * The local ACK timeout: 4.096 us x 2^timeout, no less than the device's
 * floor (min-ack-timeout-us, for TCG guests), doubled for each timeout in
 * a row.
 */
static int64_t rc_ack_timeout_ns(QRoceQP *qp)
{
    QRoceState *s = qp->rc.s;
    int64_t ns = 4096LL << MIN(qp->timeout, 31);

    ns = MAX(ns, (int64_t)s->min_ack_timeout_us * 1000);
    return ns << MIN(qp->rc.backoff, RC_MAX_BACKOFF);
}

static void rc_arm_timer(QRoceQP *qp)
{
    if (qp->rc.nsent && qp->timeout && !qp->rc.rnr_wait) {
        timer_mod(qp->rc.timer, rc_now() + rc_ack_timeout_ns(qp));
    } else if (!qp->rc.nsent && !qp->rc.rnr_wait) {
        timer_del(qp->rc.timer);
    }
}

static uint32_t rc_read_pkts(QRoceQP *qp, uint32_t len)
{
    return len ? DIV_ROUND_UP(len, rc_mtu(qp)) : 1;
}

/* Add a sent message to the in-flight list. */
static QRoceRcInflight *rc_inflight_add(QRoceQP *qp, uint32_t idx,
                                        const RcWqe *w, uint8_t cqe_opcode,
                                        uint8_t kind)
{
    QRoceRcQP *r = &qp->rc;
    QRoceRcInflight *e = &r->inflight[(r->inflight_head + r->nsent) %
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
    e->done = kind != RC_KIND_PLAIN;
    r->nsent++;
    r->nsent_hi = MAX(r->nsent_hi, r->nsent);
    if (kind == RC_KIND_READ || kind == RC_KIND_ATOMIC) {
        r->nrd++;
    }
    return e;
}

/*
 * A FLUSH (FETH and RETH) or an ATOMIC WRITE (RETH and the WQE's 8 bytes
 * as payload): an in-flight READ of no bytes, which the empty READ
 * response that answers it completes.  *@paylen: the payload's length.
 */
static QRoceRcInflight *rc_empty_read_req(QRoceState *s, QRoceQP *qp,
                                          uint32_t idx, const RcWqe *w,
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
        memcpy(s->rc->pkt + roce_hdr_len(o->opcode,
                                         !roce_gid_is_v4(o->dgid)),
               &w->hdr.rdma.compare_add, 8);
    }
    return rc_inflight_add(qp, idx, w, flush ? QROCE_CQE_FLUSH :
                           QROCE_CQE_ATOMIC_WRITE, RC_KIND_READ);
}

/*
 * Send a READ request or an atomic (one packet, no payload), or a FLUSH
 * or an ATOMIC WRITE.
 */
static void rc_send_rd_atomic(QRoceState *s, QRoceQP *qp, uint32_t idx,
                              const RcWqe *w, RocePktOut *o)
{
    QRoceRcQP *r = &qp->rc;
    uint8_t op = w->hdr.opcode;
    QRoceRcInflight *e;
    uint32_t paylen = 0;

    o->reth_va = le64_to_cpu(w->hdr.rdma.remote_addr);
    o->reth_rkey = le32_to_cpu(w->hdr.rdma.rkey);
    o->psn = r->npsn;
    o->ackreq = true;
    if (op == QROCE_WR_RDMA_READ) {
        o->opcode = ROCE_READ_REQ;
        o->reth_len = w->len;
        e = rc_inflight_add(qp, idx, w, QROCE_CQE_RDMA_READ, RC_KIND_READ);
        e->last_psn = psn_add(r->npsn, rc_read_pkts(qp, w->len) - 1);
    } else if (rc_op_empty_read(op)) {
        e = rc_empty_read_req(s, qp, idx, w, o, &paylen);
    } else if (op == QROCE_WR_ATOMIC_CMP_SWP) {
        o->opcode = ROCE_CMP_SWAP;
        o->atomic_compare = le64_to_cpu(w->hdr.rdma.compare_add);
        o->atomic_swap_add = le64_to_cpu(w->hdr.rdma.swap);
        e = rc_inflight_add(qp, idx, w, QROCE_CQE_CMP_SWP, RC_KIND_ATOMIC);
    } else {
        o->opcode = ROCE_FETCH_ADD;
        o->atomic_swap_add = le64_to_cpu(w->hdr.rdma.compare_add);
        e = rc_inflight_add(qp, idx, w, QROCE_CQE_FETCH_ADD, RC_KIND_ATOMIC);
    }
    r->npsn = psn_add(e->last_psn, 1);
    r->sq_sent++;
    qroce_dp_tx(s, qp, o, paylen);
}

/* The in-flight entry of the message being segmented, if any. */
static QRoceRcInflight *rc_cur_inflight(QRoceQP *qp)
{
    QRoceRcQP *r = &qp->rc;

    if (!r->nsent) {
        return NULL;
    }
    return &r->inflight[(r->inflight_head + r->nsent - 1) %
                        (1u << qp->sq.log2)];
}

static bool rc_op_sends(uint8_t op)
{
    return op == QROCE_WR_SEND || op == QROCE_WR_SEND_IMM ||
           op == QROCE_WR_SEND_INV || op == QROCE_WR_RDMA_WRITE ||
           op == QROCE_WR_RDMA_WRITE_IMM;
}

/* Ask again for the part of READ @e that has not arrived. */
static void rc_send_read_rest(QRoceState *s, QRoceQP *qp, const RcWqe *w,
                              const QRoceRcInflight *e, RocePktOut *o)
{
    QRoceRcQP *r = &qp->rc;

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
 * (cwnd PSNs past the oldest unacknowledged one, at most RC_WINDOW) and
 * the in-flight list (one entry per SQ WQE).
 */
static bool rc_window_open(QRoceQP *qp, bool first)
{
    QRoceRcQP *r = &qp->rc;
    uint32_t win = MAX(r->cwnd / RC_CWND_ONE, 1);

    if (first && r->nsent >= (1u << qp->sq.log2)) {
        return false;
    }
    return psn_cmp(r->npsn, psn_add(r->una_psn, win)) < 0;
}

/* A send WQE that cannot be sent: complete it in error when it is next. */
static bool rc_sq_fail(QRoceState *s, QRoceQP *qp, uint32_t idx, int st)
{
    QRoceRcQP *r = &qp->rc;

    if (r->nsent && r->inflight[r->inflight_head].idx != idx) {
        return false;       /* complete in order: wait for the ACKs */
    }
    r->wqe_off = 0;
    qroce_dp_sq_error(s, qp, idx, st);
    return true;
}

/* Send one packet of a SEND or WRITE message: true if it went. */
static bool rc_send_seg(QRoceState *s, QRoceQP *qp, uint32_t idx, RcWqe *w,
                        bool first, RocePktOut *o)
{
    QRoceRcQP *r = &qp->rc;
    bool write = w->hdr.opcode == QROCE_WR_RDMA_WRITE ||
                 w->hdr.opcode == QROCE_WR_RDMA_WRITE_IMM;
    uint32_t n = MIN(rc_mtu(qp), w->len - r->wqe_off);
    uint8_t *payload;

    qroce_dp_seg_opcode(w, r->wqe_off, n, o);
    o->psn = r->npsn;
    payload = s->rc->pkt + roce_hdr_len(o->opcode, !roce_gid_is_v4(o->dgid));
    if (qroce_dp_wqe_copy(s, qp, w, r->wqe_off, payload, n, false)) {
        rc_sq_fail(s, qp, idx, QROCE_WC_LOC_PROT_ERR);
        return false;
    }
    if (first) {
        rc_inflight_add(qp, idx, w, write ? QROCE_CQE_RDMA_WRITE :
                        QROCE_CQE_SEND, RC_KIND_PLAIN);
    }
    r->wqe_off += n;
    if (r->wqe_off == w->len) {
        rc_cur_inflight(qp)->last_psn = r->npsn;
        rc_cur_inflight(qp)->done = true;
        o->ackreq = true;
        o->se = w->hdr.flags & QROCE_WQE_SOLICITED;
        r->wqe_off = 0;
        r->sq_sent++;
    } else {
        /* ask for ACKs often enough to keep the window open */
        uint32_t half = MAX(r->cwnd / RC_CWND_ONE / 2, 1);

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
static void rc_retire_locals(QRoceState *s, QRoceQP *qp)
{
    QRoceRcQP *r = &qp->rc;

    while (r->nsent && r->inflight[r->inflight_head].kind == RC_KIND_LOCAL) {
        QRoceRcInflight *e = &r->inflight[r->inflight_head];

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
                        const RcWqe *w)
{
    QRoceRcQP *r = &qp->rc;
    QRoceRcInflight *e;
    int st = qroce_dp_local_exec(s, qp, idx, w);

    if (st != QROCE_WC_SUCCESS) {
        rc_sq_fail(s, qp, idx, st);
        return false;
    }
    e = rc_inflight_add(qp, idx, w, qroce_dp_local_cqe_opcode(w->hdr.opcode),
                        RC_KIND_LOCAL);
    e->first_psn = r->npsn;
    e->last_psn = psn_sub(r->npsn, 1);
    r->sq_sent++;
    rc_retire_locals(s, qp);
    return true;
}

/*
 * Going forward again after a rewind, the SQ reaches a local operation
 * that was executed before (its in-flight entry is still recorded): take
 * the entry back instead of executing it twice.
 */
static bool rc_local_replayed(QRoceState *s, QRoceQP *qp, uint32_t idx)
{
    QRoceRcQP *r = &qp->rc;
    QRoceRcInflight *e;

    if (r->nsent >= r->nsent_hi) {
        return false;
    }
    e = &r->inflight[(r->inflight_head + r->nsent) % (1u << qp->sq.log2)];
    if (e->idx != idx || e->kind != RC_KIND_LOCAL) {
        return false;
    }
    trace_qroce_wqe_local_replayed(qp->qpn, idx);
    r->nsent++;
    r->sq_sent++;
    rc_retire_locals(s, qp);
    return true;
}

/* Send from the SQ; returns true if it stopped for the budget. */
static bool rc_sq_process(QRoceState *s, QRoceQP *qp, int *budget)
{
    QRoceRcQP *r = &qp->rc;
    uint32_t max_rd = MAX(qp->max_rd_atomic, 1);
    RcWqe *w;

    while (qp->state == QROCE_QPS_RTS &&
           r->sq_sent - qp->sq.ci < qp->sq.pi - qp->sq.ci && !r->rnr_wait) {
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
                                first && !resume ? NULL : rc_cur_inflight(qp),
                                &w);
        if (st == QROCE_WC_SUCCESS && !rc_op_sends(w->hdr.opcode) &&
            !rc_op_reads(w->hdr.opcode) && !qroce_dp_op_local(w->hdr.opcode)) {
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
                rc_arm_timer(qp);
            }
            continue;
        }
        if (first && r->nrd &&
            ((w->hdr.flags & QROCE_WQE_FENCE) ||
             (rc_op_reads(w->hdr.opcode) && r->nrd >= max_rd))) {
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
            trace_qroce_rc_wqe(qp->qpn, idx, w->hdr.opcode, w->len);
        }
        if (rc_op_reads(w->hdr.opcode)) {
            rc_send_rd_atomic(s, qp, idx, w, &o);
        } else if (!rc_send_seg(s, qp, idx, w, first, &o)) {
            return false;
        }
        (*budget)--;
        if (!timer_pending(r->timer)) {
            rc_arm_timer(qp);
        }
    }
    return false;
}

static bool rc_rsp_process(QRoceState *s, QRoceQP *qp, int *budget);

/*
 * Go back to the oldest unacknowledged PSN (go-back-N): into the middle of
 * a SEND or WRITE message when the responder has its first packets (it
 * keeps a message's state across a gap), to the start of a READ or an
 * atomic.  A READ that had responses will be asked again whole.
 */
static void rc_rewind(QRoceState *s, QRoceQP *qp)
{
    QRoceRcQP *r = &qp->rc;
    QRoceRcInflight *e;
    uint32_t target, last;

    if (!r->nsent) {
        r->wqe_off = 0;
        return;
    }
    e = &r->inflight[r->inflight_head];
    /* a message still being segmented has sent up to npsn - 1 */
    last = (e->idx == r->sq_sent && r->wqe_off) ? r->npsn : e->last_psn;
    target = e->first_psn;
    if (e->kind == RC_KIND_PLAIN && psn_cmp(r->una_psn, e->first_psn) > 0 &&
        psn_cmp(r->una_psn, last) <= 0) {
        target = r->una_psn;
    } else if (e->kind == RC_KIND_READ && e->resp_off) {
        /* ask for the rest of a READ (the responses already in stay) */
        target = psn_add(e->first_psn, e->resp_off / rc_mtu(qp));
    } else {
        e->resp_off = 0;
    }
    trace_qroce_rc_rewind(qp->qpn, e->idx, target, r->npsn);
    r->sq_hi = qroce_sq_sent_bound(qp);     /* sent: the guest's no more */
    r->npsn = r->una_psn = target;
    r->sq_sent = e->idx;
    r->wqe_off = e->kind == RC_KIND_PLAIN ?
                 psn_sub(target, e->first_psn) * rc_mtu(qp) : 0;
    /* a resumed message or READ keeps its entry */
    r->nsent = r->wqe_off || e->resp_off ? 1 : 0;
    r->nrd = e->resp_off ? 1 : 0;
    r->resync = true;
}

/* The retry or RNR timer expired (run from the bottom half). */
void qroce_rc_timeout(QRoceState *s, QRoceQP *qp)
{
    QRoceRcQP *r = &qp->rc;

    if (qp->state != QROCE_QPS_RTS) {
        return;
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
    rc_rewind(s, qp);
}

bool qroce_rc_process(QRoceState *s, QRoceQP *qp, int *budget)
{
    return rc_rsp_process(s, qp, budget) || rc_sq_process(s, qp, budget);
}

/* Retire the oldest in-flight message, with a CQE if it is signaled. */
static void rc_complete_head(QRoceState *s, QRoceQP *qp)
{
    QRoceRcQP *r = &qp->rc;
    QRoceRcInflight *e = &r->inflight[r->inflight_head];

    if (e->signaled) {
        qroce_dp_cqe(s, qp, true, e->idx, e->cqe_opcode, QROCE_WC_SUCCESS,
                     e->kind == RC_KIND_ATOMIC ? 8 : e->len, false, 0, false);
    }
    if (e->kind == RC_KIND_READ || e->kind == RC_KIND_ATOMIC) {
        r->nrd--;
    }
    qp->sq.ci = e->idx + 1;
    r->inflight_head = (r->inflight_head + 1) % (1u << qp->sq.log2);
    r->nsent--;
    r->nsent_hi--;
    r->retry_left = qp->retry_cnt;
    r->rnr_left = qp->rnr_retry;
    r->resync = false;
}

/* The responder has everything before @una: forward progress. */
static void rc_progress(QRoceState *s, QRoceQP *qp, uint32_t una)
{
    QRoceRcQP *r = &qp->rc;

    if (psn_cmp(una, r->una_psn) > 0) {
        qroce_cc_acked(s, qp, una);
        r->una_psn = una;
        r->resync = false;
        r->backoff = 0;
        r->retry_left = qp->retry_cnt;
    }
}

/*
 * Complete the SENDs and WRITEs that @acked (inclusive) acknowledges, up to
 * the first READ or atomic, which only its own response completes.  Returns
 * false if such a READ or atomic lies wholly before @acked: its responses
 * were lost.
 */
static bool rc_ack_upto(QRoceState *s, QRoceQP *qp, uint32_t acked)
{
    QRoceRcQP *r = &qp->rc;

    while (r->nsent) {
        QRoceRcInflight *e = &r->inflight[r->inflight_head];

        if (psn_cmp(e->last_psn, acked) > 0 ||
            (e->idx == r->sq_sent && r->wqe_off)) {
            break;
        }
        if (e->kind == RC_KIND_READ || e->kind == RC_KIND_ATOMIC) {
            return false;
        }
        rc_complete_head(s, qp);
    }
    return true;
}

/*
 * A response says something was lost: halve the congestion window and go
 * back to the oldest unacknowledged PSN, if retries are left -- once per
 * loss; later stale responses are ignored until one makes progress (or
 * the timer fires).
 */
static void rc_retry(QRoceState *s, QRoceQP *qp)
{
    QRoceRcQP *r = &qp->rc;

    if (r->resync) {
        return;
    }
    if (r->retry_left-- <= 0 && r->nsent) {
        qroce_dp_sq_error(s, qp, r->inflight[r->inflight_head].idx,
                          QROCE_WC_RETRY_EXC_ERR);
        return;
    }
    qroce_cc_cwnd_cut(s, qp, false);
    rc_rewind(s, qp);
    rc_arm_timer(qp);
    qroce_dp_schedule(s, qp);
}

/*
 * The READ or atomic WQE @e, in the QP's copy, read once for all the
 * responses that fill it; NULL if the guest rewrote it meanwhile.
 */
static RcWqe *rc_cached_wqe(QRoceState *s, QRoceQP *qp,
                            const QRoceRcInflight *e)
{
    QRoceRcQP *r = &qp->rc;

    if (!r->rdw_valid || r->rdw_idx != e->idx) {
        r->rdw_valid = false;
        if (qroce_dp_read_wqe(s, qp, e->idx, r->rdw) != QROCE_WC_SUCCESS) {
            return NULL;
        }
        if (r->rdw->len != e->len || r->rdw->hdr.opcode != e->wqe_opcode) {
            trace_qroce_ub_wqe_changed(qp->qpn, e->idx);
            return NULL;
        }
        r->rdw_valid = true;
        r->rdw_idx = e->idx;
    }
    return r->rdw;
}

/* A READ response or atomic ACK for the in-flight message at the head. */
static void rc_read_response(QRoceState *s, QRoceQP *qp, RocePktIn *p)
{
    QRoceRcQP *r = &qp->rc;
    QRoceRcInflight *e;
    uint32_t mtu = rc_mtu(qp);
    uint8_t op = p->opcode;
    bool atomic = op == ROCE_ATOMIC_ACK;
    bool last = op == ROCE_READ_RESP_LAST || op == ROCE_READ_RESP_ONLY ||
                atomic;
    uint32_t expect;
    RcWqe *w;

    /* Everything before this PSN is implicitly acknowledged. */
    if (!rc_ack_upto(s, qp, psn_add(p->psn, 0xffffff))) {
        rc_retry(s, qp);
        return;
    }
    if (!r->nsent) {
        return;
    }
    e = &r->inflight[r->inflight_head];
    if (e->kind != (atomic ? RC_KIND_ATOMIC : RC_KIND_READ) ||
        psn_cmp(p->psn, e->first_psn) < 0 ||
        psn_cmp(p->psn, e->last_psn) > 0) {
        qroce_dp_drop(s, "response does not match the oldest request");
        return;
    }
    expect = psn_add(e->first_psn, e->resp_off / mtu);
    if (p->psn != expect) {
        if (psn_cmp(p->psn, expect) > 0) {
            rc_retry(s, qp);            /* a response was lost */
        }
        return;                         /* else a duplicate */
    }
    trace_qroce_rc_ack_rx(qp->qpn, p->aeth_syndrome, p->psn);
    r->resync = false;
    if (ROCE_AETH_TYPE(p->aeth_syndrome) != 0 &&
        op != ROCE_READ_RESP_MIDDLE) {
        qroce_dp_sq_error(s, qp, e->idx, QROCE_WC_BAD_RESP_ERR);
        return;
    }
    if (atomic) {
        uint8_t v[8];

        stq_le_p(v, p->atomic_orig);
        w = rc_cached_wqe(s, qp, e);
        if (p->paylen || !w || qroce_dp_wqe_copy(s, qp, w, 0, v, 8, true)) {
            qroce_dp_sq_error(s, qp, e->idx, p->paylen ? QROCE_WC_BAD_RESP_ERR :
                              QROCE_WC_LOC_PROT_ERR);
            return;
        }
    } else {
        /* the answer to a READ asked again starts with FIRST or ONLY */
        bool first_ok = e->resp_off == 0 ?
                        (op == ROCE_READ_RESP_FIRST ||
                         op == ROCE_READ_RESP_ONLY) :
                        (op != ROCE_READ_RESP_ONLY || p->paylen <= mtu);
        uint32_t left = e->len - e->resp_off;

        if (!first_ok || p->paylen > mtu || (last && p->paylen != left) ||
            (!last && (p->paylen != mtu || left <= mtu))) {
            qroce_dp_sq_error(s, qp, e->idx, QROCE_WC_BAD_RESP_ERR);
            return;
        }
        w = rc_cached_wqe(s, qp, e);
        if (!w || (p->paylen &&
                   qroce_dp_wqe_copy(s, qp, w, e->resp_off,
                                     (uint8_t *)p->payload, p->paylen,
                                     true))) {
            qroce_dp_sq_error(s, qp, e->idx, QROCE_WC_LOC_PROT_ERR);
            return;
        }
        e->resp_off += p->paylen;
    }
    rc_progress(s, qp, psn_add(p->psn, 1));
    if (last) {
        r->rdw_valid = false;
        rc_complete_head(s, qp);
        rc_retire_locals(s, qp);
        rc_arm_timer(qp);
        qroce_dp_schedule(s, qp);     /* room for more READs and atomics */
    } else if (qp->timeout) {
        /* progress: a long READ is not a timeout */
        timer_mod(r->timer, rc_now() + rc_ack_timeout_ns(qp));
    }
}

/*
 * After going back, an ACK may cover packets sent before the rewind and
 * not sent again yet (the responder had them; an ACK was lost): skip
 * ahead to the first PSN not acknowledged instead of sending them again.
 * Only SEND and WRITE messages whose packets were all sent are skipped.
 */
static void rc_fast_forward(QRoceQP *qp, uint32_t acked)
{
    QRoceRcQP *r = &qp->rc;
    uint32_t depth = 1u << qp->sq.log2, mtu = rc_mtu(qp);

    /* never past the producer index: only WQEs still posted are passed */
    while (psn_cmp(acked, r->npsn) >= 0 &&
           r->sq_sent - qp->sq.ci < qp->sq.pi - qp->sq.ci) {
        QRoceRcInflight *e;

        if (r->wqe_off) {
            e = rc_cur_inflight(qp);        /* the message being resent */
        } else if (r->nsent < r->nsent_hi) {
            e = &r->inflight[(r->inflight_head + r->nsent) % depth];
            if (e->idx == r->sq_sent && e->kind == RC_KIND_LOCAL) {
                r->nsent++;         /* executed once already: pass it */
                r->sq_sent++;
                continue;
            }
            if (e->idx != r->sq_sent || e->kind != RC_KIND_PLAIN ||
                !e->done || psn_cmp(e->first_psn, r->npsn)) {
                return;
            }
            r->nsent++;
        } else {
            return;
        }
        if (!e->done || e->kind != RC_KIND_PLAIN) {
            return;
        }
        if (psn_cmp(acked, e->last_psn) >= 0) {
            r->npsn = psn_add(e->last_psn, 1);
            r->sq_sent = e->idx + 1;
            r->wqe_off = 0;
        } else {
            r->npsn = psn_add(acked, 1);
            r->sq_sent = e->idx;
            r->wqe_off = psn_sub(r->npsn, e->first_psn) * mtu;
        }
    }
}

/* An ACK or NAK for our requests. */
void qroce_rc_requester_rx(QRoceState *s, QRoceQP *qp, RocePktIn *p)
{
    QRoceRcQP *r = &qp->rc;
    uint8_t syn = p->aeth_syndrome;
    uint32_t acked;

    /*
     * Only PSNs we sent and that are not acknowledged yet: ACKs up to the
     * highest PSN ever sent, responses up to the next PSN to send.
     */
    if (psn_cmp(p->psn, r->una_psn) < 0 ||
        psn_cmp(p->psn, p->opcode == ROCE_ACK ? r->hi_psn : r->npsn) >= 0) {
        if (!(p->opcode == ROCE_ACK && ROCE_AETH_TYPE(syn) == 3 &&
              p->psn == r->hi_psn)) {
            return;
        }
    }
    if (p->opcode != ROCE_ACK) {
        rc_read_response(s, qp, p);
        return;
    }
    trace_qroce_rc_ack_rx(qp->qpn, syn, p->psn);
    /* An ACK acknowledges p->psn; a NAK everything before it. */
    acked = ROCE_AETH_TYPE(syn) == 0 ? p->psn : psn_add(p->psn, 0xffffff);
    rc_fast_forward(qp, acked);
    if (psn_cmp(acked, r->npsn) >= 0) {
        acked = psn_add(r->npsn, 0xffffff);     /* no further than sent */
    }
    if (!rc_ack_upto(s, qp, acked)) {
        rc_retry(s, qp);        /* READ responses or atomic ACK lost */
        return;
    }
    rc_progress(s, qp, psn_add(acked, 1));
    switch (ROCE_AETH_TYPE(syn)) {
    case 0:
        break;
    case 1:                                     /* RNR NAK */
        if (qp->rnr_retry != 7 && r->rnr_left-- <= 0 && r->nsent) {
            qroce_dp_sq_error(s, qp, r->inflight[r->inflight_head].idx,
                              QROCE_WC_RNR_RETRY_EXC_ERR);
            return;
        }
        rc_rewind(s, qp);
        r->rnr_wait = true;
        timer_mod(r->timer, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) +
                  rnr_usec[syn & 0x1f] * 1000LL);
        return;
    case 3:
        if (syn == ROCE_AETH_NAK_SEQ) {
            rc_retry(s, qp);
            return;
        }
        if (r->nsent) {
            int st = syn == ROCE_AETH_NAK_INV ? QROCE_WC_REM_INV_REQ_ERR :
                     syn == ROCE_AETH_NAK_ACCESS ? QROCE_WC_REM_ACCESS_ERR :
                     QROCE_WC_REM_OP_ERR;

            qroce_dp_sq_error(s, qp, r->inflight[r->inflight_head].idx, st);
        }
        return;
    default:
        return;
    }
    rc_arm_timer(qp);
    qroce_dp_schedule(s, qp);
}

/* Refuse a request: NAK it and move the QP to ERR. */
static void rc_resp_fatal(QRoceState *s, QRoceQP *qp, uint8_t syndrome,
                          uint32_t psn, uint8_t event)
{
    qp->rc.rsp_count = 0;
    rc_send_ack(s, qp, syndrome, psn);
    qp->rc.in_msg = false;
    qroce_qp_set_error(s, qp, event);
}

/*
 * Send the next packet of the oldest queued response; false when it had
 * to give up (the QP went to ERR).
 */
static bool rc_rsp_one(QRoceState *s, QRoceQP *qp, QRoceRcRsp *e)
{
    QRoceRcQP *r = &qp->rc;
    uint32_t mtu = rc_mtu(qp);
    RocePktOut o = {};
    uint8_t sgid[16];
    uint32_t n;

    switch (e->kind) {
    case RC_RSP_ACK:
        rc_send_ack(s, qp, e->syndrome, e->psn);
        e->off = e->len = 0;
        return true;
    case RC_RSP_ATOMIC:
        if (!qroce_dp_addr(s, qp, &o, sgid)) {
            break;
        }
        o.opcode = ROCE_ATOMIC_ACK;
        o.psn = e->psn;
        o.aeth_syndrome = ROCE_AETH_ACK_NO_CREDIT;
        o.aeth_msn = r->msn & 0xffffff;
        o.atomic_orig = e->orig;
        qroce_dp_tx(s, qp, &o, 0);
        e->off = e->len = 0;
        return true;
    case RC_RSP_READ:
        if (!qroce_dp_addr(s, qp, &o, sgid)) {
            break;
        }
        n = MIN(mtu, e->len - e->off);
        if (e->len <= mtu) {
            o.opcode = ROCE_READ_RESP_ONLY;
        } else if (e->off == 0) {
            o.opcode = ROCE_READ_RESP_FIRST;
        } else if (e->off + n == e->len) {
            o.opcode = ROCE_READ_RESP_LAST;
        } else {
            o.opcode = ROCE_READ_RESP_MIDDLE;
        }
        o.psn = e->psn;
        o.aeth_syndrome = ROCE_AETH_ACK_NO_CREDIT;
        o.aeth_msn = r->msn & 0xffffff;
        if (n) {
            QRoceMR *mr;
            uint8_t *payload = s->rc->pkt +
                               roce_hdr_len(o.opcode, !roce_gid_is_v4(o.dgid));

            /* the MR may have gone since the request was checked */
            if (qroce_rkey_check(s, qp, e->rkey, e->va + e->off, n,
                                 QROCE_ACCESS_REMOTE_READ, &mr) ||
                qroce_mr_rw(s, mr, e->va + e->off, payload, n, false)) {
                rc_resp_fatal(s, qp, ROCE_AETH_NAK_ACCESS, e->psn,
                              QROCE_EQE_QP_ACCESS_ERR);
                return false;
            }
        }
        qroce_dp_tx(s, qp, &o, n);
        e->off += n;
        e->psn = psn_add(e->psn, 1);
        return true;
    }
    rc_resp_fatal(s, qp, ROCE_AETH_NAK_OP, e->psn, QROCE_EQE_QP_FATAL);
    return false;
}

/* Drain the response queue; returns true if it stopped for the budget. */
static bool rc_rsp_process(QRoceState *s, QRoceQP *qp, int *budget)
{
    QRoceRcQP *r = &qp->rc;

    while (r->rsp_count) {
        QRoceRcRsp *e = &r->rspq[r->rsp_head];

        if (qp->state < QROCE_QPS_RTR || qp->state == QROCE_QPS_ERR) {
            r->rsp_count = 0;
            break;
        }
        if (*budget <= 0) {
            return true;
        }
        if (e->kind == RC_RSP_READ && !qroce_dc_may_send(s, qp)) {
            return false;       /* paced: the timer runs it again */
        }
        (*budget)--;
        if (!rc_rsp_one(s, qp, e)) {
            break;
        }
        if (e->off >= e->len) {
            r->rsp_head = (r->rsp_head + 1) % QROCE_RC_RSPQ;
            r->rsp_count--;
        }
    }
    return false;
}

/*
 * Queue a response behind the ones still being sent.  With nothing queued
 * an ACK goes out at once, and a READ starts at once (the rest of a long
 * one follows from the bottom half).
 */
static void rc_rsp_push(QRoceState *s, QRoceQP *qp, const QRoceRcRsp *e)
{
    QRoceRcQP *r = &qp->rc;
    int budget = 4;

    if (e->kind == RC_RSP_ACK && r->rsp_count) {
        QRoceRcRsp *t = &r->rspq[(r->rsp_head + r->rsp_count - 1) %
                                 QROCE_RC_RSPQ];

        if (t->kind == RC_RSP_ACK && t->syndrome == e->syndrome &&
            e->syndrome == ROCE_AETH_ACK_NO_CREDIT) {
            t->psn = e->psn;            /* one ACK covers both */
            return;
        }
    }
    if (r->rsp_count == QROCE_RC_RSPQ) {
        qroce_dp_drop(s, "response queue full");  /* the requester retries */
        return;
    }
    r->rspq[(r->rsp_head + r->rsp_count) % QROCE_RC_RSPQ] = *e;
    r->rsp_count++;
    if (r->rsp_count == 1 && !rc_rsp_process(s, qp, &budget)) {
        return;
    }
    qroce_dp_schedule(s, qp);
}

static void rc_push_ack(QRoceState *s, QRoceQP *qp, uint8_t syndrome,
                        uint32_t psn)
{
    QRoceRcRsp e = { .kind = RC_RSP_ACK, .syndrome = syndrome,
                     .first_psn = psn, .psn = psn, .len = 1 };

    rc_rsp_push(s, qp, &e);
}

/*
 * Forget queued responses to requests from @psn on: they are asked again.
 * A READ still streaming whose responses reach @psn stops too: the
 * request asked again restarts it there (after a lost response).
 */
static void rc_rsp_trim(QRoceQP *qp, uint32_t psn)
{
    QRoceRcQP *r = &qp->rc;

    while (r->rsp_count) {
        QRoceRcRsp *t = &r->rspq[(r->rsp_head + r->rsp_count - 1) %
                                 QROCE_RC_RSPQ];

        if (psn_cmp(t->first_psn, psn) < 0 &&
            (t->kind != RC_RSP_READ ||
             psn_cmp(psn, psn_add(t->first_psn,
                                  rc_read_pkts(qp, t->len))) >= 0)) {
            break;
        }
        r->rsp_count--;
    }
}

static uint32_t rc_rd_atomic_queued(QRoceQP *qp)
{
    QRoceRcQP *r = &qp->rc;
    uint32_t i, n = 0;

    for (i = 0; i < r->rsp_count; i++) {
        if (r->rspq[(r->rsp_head + i) % QROCE_RC_RSPQ].kind != RC_RSP_ACK) {
            n++;
        }
    }
    return n;
}

/*
 * A new FLUSH at level RANGE or MR: the MR needs ACCESS_FLUSH_GLOBAL and,
 * at level RANGE, must hold the range (a memory window cannot give the
 * flush right, so its key is refused).  Persistent placement is a right
 * no MR of this device has (guest RAM is not persistent memory): an
 * access NAK, as for an MR without the flag.  Data is placed as it
 * arrives, so there is nothing more to do.  0, or the syndrome of the
 * NAK that refuses it.
 */
static uint8_t rc_flush_exec(QRoceState *s, QRoceQP *qp, RocePktIn *p)
{
    bool range = ROCE_FETH_LEVEL(p->feth) == QROCE_FLUSH_RANGE;
    uint8_t type = ROCE_FETH_TYPE(p->feth);
    QRoceMR *mr;

    if (!type || (type & ~(QROCE_FLUSH_GLOBAL | QROCE_FLUSH_PERSISTENT)) ||
        ROCE_FETH_LEVEL(p->feth) > QROCE_FLUSH_MR || p->paylen) {
        return ROCE_AETH_NAK_INV;
    }
    if ((type & QROCE_FLUSH_PERSISTENT) ||
        qroce_mr_check(s, p->reth_rkey, qp->pdn, range ? p->reth_va : 0,
                       range ? p->reth_len : 0, QROCE_ACCESS_FLUSH_GLOBAL,
                       &mr)) {
        return ROCE_AETH_NAK_ACCESS;
    }
    return 0;
}

/*
 * A new ATOMIC WRITE: 8 bytes at an aligned address, written with one
 * access.  0, or the syndrome of the NAK that refuses it.
 */
static uint8_t rc_atomic_write_exec(QRoceState *s, QRoceQP *qp, RocePktIn *p)
{
    QRoceMR *mr;

    if (!(qp->access_flags & QROCE_ACCESS_REMOTE_WRITE) ||
        p->reth_len != 8 || p->paylen != 8 || (p->reth_va & 7)) {
        return ROCE_AETH_NAK_INV;
    }
    if (qroce_rkey_check(s, qp, p->reth_rkey, p->reth_va, 8,
                         QROCE_ACCESS_REMOTE_WRITE, &mr) ||
        qroce_mr_rw(s, mr, p->reth_va, (void *)p->payload, 8, true)) {
        return ROCE_AETH_NAK_ACCESS;
    }
    return 0;
}

/*
 * A FLUSH or an ATOMIC WRITE, new (@dup false) or asked again: answered
 * with a READ response of no payload, like a READ of 0 bytes.  One asked
 * again is answered again, not executed again.  Returns false if it was
 * refused and the QP moved to ERR.
 */
static bool rc_empty_read_rx(QRoceState *s, QRoceQP *qp, RocePktIn *p,
                             bool dup)
{
    QRoceRcQP *r = &qp->rc;
    QRoceRcRsp e = { .kind = RC_RSP_READ, .first_psn = p->psn,
                     .psn = p->psn };
    uint8_t syn;

    if (dup) {
        rc_rsp_trim(qp, p->psn);
        rc_rsp_push(s, qp, &e);
        return true;
    }
    if (rc_rd_atomic_queued(qp) >= MAX(qp->max_dest_rd_atomic, 1)) {
        syn = ROCE_AETH_NAK_INV;
    } else if (p->opcode == ROCE_FLUSH) {
        syn = rc_flush_exec(s, qp, p);
    } else {
        syn = rc_atomic_write_exec(s, qp, p);
    }
    trace_qroce_rc_empty_read(qp->qpn, p->opcode, p->psn, p->reth_va,
                              p->reth_len, p->feth, syn);
    if (syn) {
        rc_resp_fatal(s, qp, syn, p->psn, syn == ROCE_AETH_NAK_INV ?
                      QROCE_EQE_QP_REQ_ERR : QROCE_EQE_QP_ACCESS_ERR);
        return false;
    }
    r->epsn = psn_add(r->epsn, 1);
    r->msn++;
    rc_rsp_push(s, qp, &e);
    return true;
}

/*
 * A READ request or an atomic, new (@dup false) or asked again.  Returns
 * false if it was refused and the QP moved to ERR.
 */
static bool rc_rd_atomic_rx(QRoceState *s, QRoceQP *qp, RocePktIn *p,
                            bool dup)
{
    QRoceRcQP *r = &qp->rc;
    bool read = p->opcode == ROCE_READ_REQ;
    uint32_t need = read ? QROCE_ACCESS_REMOTE_READ :
                           QROCE_ACCESS_REMOTE_ATOMIC;
    QRoceRcRsp e = { .kind = read ? RC_RSP_READ : RC_RSP_ATOMIC,
                     .first_psn = p->psn, .psn = p->psn, .va = p->reth_va,
                     .rkey = p->reth_rkey, .len = read ? p->reth_len : 1 };
    QRoceMR *mr;
    uint8_t v[8];
    uint64_t orig;
    uint32_t i;

    if (p->opcode == ROCE_FLUSH || p->opcode == ROCE_ATOMIC_WRITE) {
        return rc_empty_read_rx(s, qp, p, dup);
    }
    if (dup) {
        rc_rsp_trim(qp, p->psn);
        if (!read) {
            for (i = 0; i < QROCE_DEF_MAX_RD_ATOM; i++) {
                if (r->ahist[i].valid && r->ahist[i].psn == p->psn) {
                    e.orig = r->ahist[i].orig;
                    rc_rsp_push(s, qp, &e);
                    return true;
                }
            }
            qroce_dp_drop(s, "duplicate atomic without a recorded result");
            return true;
        }
        /* a READ asked again is read again, if it still may be */
        if (!(qp->access_flags & need) || p->paylen ||
            p->reth_len > QROCE_DEF_MAX_MSG ||
            psn_cmp(psn_add(p->psn, rc_read_pkts(qp, p->reth_len)),
                    r->epsn) > 0 ||
            (p->reth_len && qroce_rkey_check(s, qp, p->reth_rkey,
                                             p->reth_va, p->reth_len, need,
                                             &mr))) {
            qroce_dp_drop(s, "duplicate READ out of range");
            return true;
        }
        rc_rsp_push(s, qp, &e);
        return true;
    }
    if (!(qp->access_flags & need) || p->paylen ||
        rc_rd_atomic_queued(qp) >= MAX(qp->max_dest_rd_atomic, 1) ||
        (read && p->reth_len > QROCE_DEF_MAX_MSG) ||
        (!read && (p->reth_va & 7))) {
        rc_resp_fatal(s, qp, ROCE_AETH_NAK_INV, p->psn, QROCE_EQE_QP_REQ_ERR);
        return false;
    }
    if (e.len && qroce_rkey_check(s, qp, p->reth_rkey, p->reth_va,
                                  read ? p->reth_len : 8, need, &mr)) {
        rc_resp_fatal(s, qp, ROCE_AETH_NAK_ACCESS, p->psn,
                      QROCE_EQE_QP_ACCESS_ERR);
        return false;
    }
    if (!read) {
        if (qroce_mr_rw(s, mr, p->reth_va, v, 8, false)) {
            rc_resp_fatal(s, qp, ROCE_AETH_NAK_ACCESS, p->psn,
                          QROCE_EQE_QP_ACCESS_ERR);
            return false;
        }
        orig = ldq_le_p(v);
        if (p->opcode == ROCE_FETCH_ADD) {
            stq_le_p(v, orig + p->atomic_swap_add);
        } else if (orig == p->atomic_compare) {
            stq_le_p(v, p->atomic_swap_add);
        }
        if (ldq_le_p(v) != orig &&
            qroce_mr_rw(s, mr, p->reth_va, v, 8, true)) {
            rc_resp_fatal(s, qp, ROCE_AETH_NAK_ACCESS, p->psn,
                          QROCE_EQE_QP_ACCESS_ERR);
            return false;
        }
        e.orig = orig;
        r->ahist[r->ahist_next] = (QRoceRcAtomicHist) {
            .valid = true, .psn = p->psn, .orig = orig,
        };
        r->ahist_next = (r->ahist_next + 1) % QROCE_DEF_MAX_RD_ATOM;
    }
    r->epsn = psn_add(r->epsn, read ? rc_read_pkts(qp, p->reth_len) : 1);
    r->msn++;
    rc_rsp_push(s, qp, &e);
    return true;
}

/*
 * A request out of sequence: a gap gets one sequence NAK, a duplicate
 * READ or atomic is answered again, another duplicate gets an ACK if it
 * asks for one.
 */
static void rc_responder_oos(QRoceState *s, QRoceQP *qp, RocePktIn *p,
                             bool rd_atomic)
{
    QRoceRcQP *r = &qp->rc;

    if (psn_cmp(p->psn, r->epsn) > 0) {
        if (!r->nak_sent) {
            r->nak_sent = true;
            rc_push_ack(s, qp, ROCE_AETH_NAK_SEQ, r->epsn);
        }
    } else if (rd_atomic) {
        qroce_count(s, QROCE_CNT_ROCE_DUP_REQS);
        rc_rd_atomic_rx(s, qp, p, true);
    } else {
        /* the ACK was lost: answer the packets that ask for one */
        qroce_count(s, QROCE_CNT_ROCE_DUP_REQS);
        if (p->ackreq) {
            rc_push_ack(s, qp, ROCE_AETH_ACK_NO_CREDIT,
                        psn_add(r->epsn, 0xffffff));
        }
    }
}

/*
 * Check an in-sequence SEND or WRITE packet against the message in
 * progress and, for the first packet of a WRITE, its RETH (which is then
 * recorded).  False if it was refused: NAKed, the QP in ERR.
 */
static bool rc_responder_check(QRoceState *s, QRoceQP *qp, RocePktIn *p,
                               bool write, bool first, bool last)
{
    QRoceRcQP *r = &qp->rc;
    uint8_t op = p->opcode;

    if ((op > ROCE_WRITE_ONLY_IMM && op != ROCE_SEND_LAST_INV &&
         op != ROCE_SEND_ONLY_INV) ||
        (write && !(qp->access_flags & QROCE_ACCESS_REMOTE_WRITE))) {
        /* not a request opcode; WRITE needs the access */
        rc_resp_fatal(s, qp, ROCE_AETH_NAK_INV, p->psn, QROCE_EQE_QP_REQ_ERR);
        return false;
    }
    if (first == r->in_msg || (!first && write != r->in_write) ||
        (!last && p->paylen != rc_mtu(qp)) || p->paylen > rc_mtu(qp)) {
        rc_resp_fatal(s, qp, ROCE_AETH_NAK_INV, p->psn, QROCE_EQE_QP_REQ_ERR);
        return false;
    }
    if (first && write) {
        QRoceMR *mr;

        if (p->reth_len > QROCE_DEF_MAX_MSG ||
            (last && p->paylen != p->reth_len) ||
            (!last && p->reth_len <= p->paylen)) {
            rc_resp_fatal(s, qp, ROCE_AETH_NAK_INV, p->psn,
                          QROCE_EQE_QP_REQ_ERR);
            return false;
        }
        /* a WRITE of 0 bytes needs no valid rkey (IBA C9-88) */
        if (p->reth_len &&
            qroce_rkey_check(s, qp, p->reth_rkey, p->reth_va, p->reth_len,
                             QROCE_ACCESS_REMOTE_WRITE, &mr)) {
            rc_resp_fatal(s, qp, ROCE_AETH_NAK_ACCESS, p->psn,
                          QROCE_EQE_QP_ACCESS_ERR);
            return false;
        }
        r->wr_va = p->reth_va;
        r->wr_rkey = p->reth_rkey;
        r->wr_len = p->reth_len;
    }
    if (write && !first &&
        (last ? r->recv_off + p->paylen != r->wr_len :
                r->recv_off + p->paylen >= r->wr_len)) {
        /* the message is longer or shorter than its RETH said */
        rc_resp_fatal(s, qp, ROCE_AETH_NAK_INV, p->psn, QROCE_EQE_QP_REQ_ERR);
        return false;
    }
    return true;
}

/*
 * Place the payload of a checked SEND or WRITE packet: into the WRITE's
 * MR or the RECV WQE.  False if that failed: the QP went to ERR.
 */
static bool rc_responder_place(QRoceState *s, QRoceQP *qp, RocePktIn *p,
                               bool write)
{
    QRoceRcQP *r = &qp->rc;
    int st;

    if (write) {
        QRoceMR *mr;

        st = QROCE_WC_SUCCESS;
        if (p->paylen &&
            (qroce_rkey_check(s, qp, r->wr_rkey, r->wr_va + r->recv_off,
                              p->paylen, QROCE_ACCESS_REMOTE_WRITE, &mr) ||
             qroce_mr_rw(s, mr, r->wr_va + r->recv_off, (void *)p->payload,
                         p->paylen, true))) {
            rc_resp_fatal(s, qp, ROCE_AETH_NAK_ACCESS, p->psn,
                          QROCE_EQE_QP_ACCESS_ERR);
            return false;
        }
    } else {
        st = qroce_dp_scatter(s, qp, r->recv_off, p->payload, p->paylen);
    }
    if (st != QROCE_WC_SUCCESS) {
        qroce_dp_recv_cqe(s, qp, QROCE_CQE_RECV, st, r->recv_off, false, 0,
                          false);
        rc_resp_fatal(s, qp, st == QROCE_WC_LOC_LEN_ERR ? ROCE_AETH_NAK_INV :
                      ROCE_AETH_NAK_OP, p->psn, QROCE_EQE_QP_FATAL);
        return false;
    }
    return true;
}

/*
 * The whole of a SEND with Invalidate is placed: invalidate its rkey (a
 * VALID fast-registration MR of the QP's PD, or a type 2 window bound to
 * the QP).  False if that failed: the
 * RECV WQE completed with REM_INV_REQ_ERR, the request NAKed (invalid
 * request), the QP in ERR.
 */
static bool rc_responder_inv(QRoceState *s, QRoceQP *qp, RocePktIn *p)
{
    const char *why = NULL;
    int st = qroce_key_inv(s, qp, p->ieth, &why);

    trace_qroce_remote_inv(qp->qpn, p->ieth, st);
    if (st == QROCE_WC_SUCCESS) {
        return true;
    }
    trace_qroce_ub_remote_inv(qp->qpn, p->ieth, why ? why : "?");
    qroce_dp_recv_cqe(s, qp, QROCE_CQE_RECV, QROCE_WC_REM_INV_REQ_ERR,
                      qp->rc.recv_off, false, 0, false);
    rc_resp_fatal(s, qp, ROCE_AETH_NAK_INV, p->psn, QROCE_EQE_QP_REQ_ERR);
    return false;
}

/*
 * inject-rnr-nak, inject-access-nak: answer the first packet of a new
 * request with an RNR NAK (SEND only) or a remote access NAK.  True if
 * it was answered so.
 */
static bool rc_inject_nak(QRoceState *s, QRoceQP *qp, RocePktIn *p,
                          bool send)
{
    bool match = !s->inj_nak_qpn || s->inj_nak_qpn == qp->qpn;

    if (send && qroce_inject(s, &s->inj_rnr_nak, match, "rnr-nak",
                             qp->qpn)) {
        rc_push_ack(s, qp, ROCE_AETH_RNR | qp->min_rnr_timer, p->psn);
        return true;
    }
    if (qroce_inject(s, &s->inj_access_nak, match, "access-nak", qp->qpn)) {
        rc_resp_fatal(s, qp, ROCE_AETH_NAK_ACCESS, p->psn,
                      QROCE_EQE_QP_ACCESS_ERR);
        return true;
    }
    return false;
}

void qroce_rc_responder_rx(QRoceState *s, QRoceQP *qp, RocePktIn *p)
{
    QRoceRcQP *r = &qp->rc;
    uint8_t op = p->opcode;
    bool rd_atomic = op == ROCE_READ_REQ || op == ROCE_CMP_SWAP ||
                     op == ROCE_FETCH_ADD || op == ROCE_FLUSH ||
                     op == ROCE_ATOMIC_WRITE;
    bool write = op >= ROCE_WRITE_FIRST && op <= ROCE_WRITE_ONLY_IMM;
    bool first = qroce_dp_op_first(op), last = qroce_dp_op_last(op);
    bool needs_wqe = !write || p->has_imm;

    if (p->psn != r->epsn) {
        rc_responder_oos(s, qp, p, rd_atomic);
        return;
    }
    r->nak_sent = false;
    if ((first || rd_atomic) && !r->in_msg &&
        rc_inject_nak(s, qp, p, first && !write && !rd_atomic)) {
        return;
    }
    if (rd_atomic) {
        if (r->in_msg) {
            rc_resp_fatal(s, qp, ROCE_AETH_NAK_INV, p->psn,
                          QROCE_EQE_QP_REQ_ERR);
            return;
        }
        rc_rd_atomic_rx(s, qp, p, false);
        return;
    }
    if (!rc_responder_check(s, qp, p, write, first, last)) {
        return;
    }
    /* a SEND takes its RECV WQE at its first packet, WRITE_IMM at its last */
    if (((first && !write) || (last && needs_wqe)) &&
        !qroce_dp_recv_take(s, qp)) {
        rc_push_ack(s, qp, ROCE_AETH_RNR | qp->min_rnr_timer, p->psn);
        return;
    }
    if (first) {
        r->recv_off = 0;
        r->in_msg = true;
        r->in_write = write;
    }
    if (!rc_responder_place(s, qp, p, write)) {
        return;
    }
    r->recv_off += p->paylen;
    r->epsn = psn_add(r->epsn, 1);
    if (last) {
        if (p->has_ieth && !rc_responder_inv(s, qp, p)) {
            return;
        }
        qroce_dp_msg_received(s, qp, p, write);
        r->msn++;
        r->in_msg = false;
    }
    if (p->ackreq) {
        rc_push_ack(s, qp, ROCE_AETH_ACK_NO_CREDIT, p->psn);
    }
}
