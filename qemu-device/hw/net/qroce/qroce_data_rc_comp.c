/*
 * qroce: the RC transport's completer.
 *
 * ACKs, NAKs, READ responses and atomic ACKs for the requester's
 * messages.  A READ response or an atomic ACK is also an implicit ACK of
 * everything sent before it.  Completions are written in send-queue
 * order as messages are acknowledged; a NAK or a gap sends the requester
 * back (go-back-N) and an RNR NAK makes it wait the time the peer asked.
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

/* RNR timer values of the IB spec, in microseconds. */
static const uint32_t rnr_usec[32] = {
    655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960,
    1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720,
    40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
};

/* Retire the oldest in-flight message, with a CQE if it is signaled. */
static void rc_complete_head(QRoceState *s, QRoceQP *qp)
{
    QRoceQPXport *r = &qp->xp;
    QRoceInflight *e = &r->inflight[r->inflight_head];

    if (e->signaled) {
        qroce_dp_cqe(s, qp, true, e->idx, e->cqe_opcode, QROCE_WC_SUCCESS,
                     e->kind == INFL_ATOMIC ? 8 : e->len, false, 0, false);
    }
    if (e->kind == INFL_READ || e->kind == INFL_ATOMIC) {
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
    QRoceQPXport *r = &qp->xp;

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
    QRoceQPXport *r = &qp->xp;

    while (r->nsent) {
        QRoceInflight *e = &r->inflight[r->inflight_head];

        if (psn_cmp(e->last_psn, acked) > 0 ||
            (e->idx == r->sq_sent && r->wqe_off)) {
            break;
        }
        if (e->kind == INFL_READ || e->kind == INFL_ATOMIC) {
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
    QRoceQPXport *r = &qp->xp;

    if (r->resync) {
        return;
    }
    if (r->retry_left-- <= 0 && r->nsent) {
        qroce_dp_sq_error(s, qp, r->inflight[r->inflight_head].idx,
                          QROCE_WC_RETRY_EXC_ERR);
        return;
    }
    qroce_cc_cwnd_cut(s, qp, false);
    qroce_rc_rewind(s, qp);
    qroce_rc_arm_timer(qp);
    qroce_dp_schedule(s, qp);
}

/*
 * The READ or atomic WQE @e, in the QP's copy, read once for all the
 * responses that fill it; NULL if the guest rewrote it meanwhile.
 */
static QRoceWqe *rc_cached_wqe(QRoceState *s, QRoceQP *qp,
                               const QRoceInflight *e)
{
    QRoceQPXport *r = &qp->xp;

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
    QRoceQPXport *r = &qp->xp;
    QRoceInflight *e;
    uint32_t mtu = qp_mtu(qp);
    uint8_t op = p->opcode;
    bool atomic = op == ROCE_ATOMIC_ACK;
    bool last = op == ROCE_READ_RESP_LAST || op == ROCE_READ_RESP_ONLY ||
                atomic;
    uint32_t expect;
    QRoceWqe *w;
    int ret;

    /* Everything before this PSN is implicitly acknowledged. */
    if (!rc_ack_upto(s, qp, psn_add(p->psn, 0xffffff))) {
        rc_retry(s, qp);
        return;
    }
    if (!r->nsent) {
        return;
    }
    e = &r->inflight[r->inflight_head];
    if (e->kind != (atomic ? INFL_ATOMIC : INFL_READ) ||
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
        ret = p->paylen || !w ? -1 : qroce_dp_wqe_copy(s, qp, w, 0, v, 8, true);
        if (ret == QROCE_RW_FAULT) {
            return;     /* not placed: asked again once the page is in */
        }
        if (ret) {
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
        ret = !w ? -1 : !p->paylen ? 0 :
              qroce_dp_wqe_copy(s, qp, w, e->resp_off, (uint8_t *)p->payload,
                                p->paylen, true);
        if (ret == QROCE_RW_FAULT) {
            return;     /* not placed: asked again once the page is in */
        }
        if (ret) {
            qroce_dp_sq_error(s, qp, e->idx, QROCE_WC_LOC_PROT_ERR);
            return;
        }
        e->resp_off += p->paylen;
    }
    rc_progress(s, qp, psn_add(p->psn, 1));
    if (last) {
        r->rdw_valid = false;
        rc_complete_head(s, qp);
        qroce_rc_retire_locals(s, qp);
        qroce_rc_arm_timer(qp);
        qroce_dp_schedule(s, qp);     /* room for more READs and atomics */
    } else if (qp->timeout) {
        /* progress: a long READ is not a timeout */
        timer_mod(r->timer, engine_now() + qroce_rc_ack_timeout_ns(qp));
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
    QRoceQPXport *r = &qp->xp;
    uint32_t depth = 1u << qp->sq.log2, mtu = qp_mtu(qp);

    /* never past the producer index: only WQEs still posted are passed */
    while (psn_cmp(acked, r->npsn) >= 0 &&
           r->sq_sent - qp->sq.ci < qp->sq.pi - qp->sq.ci) {
        QRoceInflight *e;

        if (r->wqe_off) {
            e = qroce_rc_cur_inflight(qp);        /* the message being resent */
        } else if (r->nsent < r->nsent_hi) {
            e = &r->inflight[(r->inflight_head + r->nsent) % depth];
            if (e->idx == r->sq_sent && e->kind == INFL_LOCAL) {
                r->nsent++;         /* executed once already: pass it */
                r->sq_sent++;
                continue;
            }
            if (e->idx != r->sq_sent || e->kind != INFL_PLAIN ||
                !e->done || psn_cmp(e->first_psn, r->npsn)) {
                return;
            }
            r->nsent++;
        } else {
            return;
        }
        if (!e->done || e->kind != INFL_PLAIN) {
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
    QRoceQPXport *r = &qp->xp;
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
        qroce_rc_rewind(s, qp);
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
    qroce_rc_arm_timer(qp);
    qroce_dp_schedule(s, qp);
}
