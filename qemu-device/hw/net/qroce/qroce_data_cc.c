/*
 * qroce: congestion control (docs/hw-spec.md §14) -- the congestion
 * window of RC loss recovery, the congestion point that marks received
 * frames CE, and the DCQCN reaction point that cuts and restores a QP's
 * rate and paces it.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/main-loop.h"
#include "qroce_data_cc.h"
#include "qroce_data_state.h"
#include "trace.h"

#define CC_PACE_BURST_NS 100000 /* a paced QP may send 100 us ahead */

/* ------------------------------------------------------------------ */
/* DCQCN reaction point                                                */
/* ------------------------------------------------------------------ */

static uint64_t dc_mbps(uint32_t mbps)
{
    return (uint64_t)mbps * 1000000;
}

void qroce_dc_reset(QRoceState *s, QRoceQP *qp)
{
    QRoceQPXport *r = &qp->xp;

    r->rate_cur = r->rate_tgt = dc_mbps(s->params.dcqcn_line_mbps);
    r->alpha = 1024;
    r->dc_t = r->dc_bc = 0;
    r->dc_bytes = 0;
    r->dc_alpha_at = r->dc_timer_at = 0;
    r->dc_cnp_seen = false;
    r->pace_at = 0;
    r->meas_at = 0;
    r->meas_bytes = r->meas_rate = 0;
    r->walpha = 1024;
    r->wnd_end = r->npsn;
    r->wnd_cnp = false;
}

/* A rate increase event (timer or byte counter). */
static void dc_increase(QRoceState *s, QRoceQP *qp)
{
    QRoceQPXport *r = &qp->xp;
    uint64_t line = dc_mbps(s->params.dcqcn_line_mbps);
    uint32_t f = s->params.dcqcn_f;

    if (r->rate_cur >= line) {
        return;
    }
    if (MAX(r->dc_t, r->dc_bc) < f) {
        /* fast recovery: halfway back to the rate before the cut */
    } else if (MIN(r->dc_t, r->dc_bc) > f) {
        r->rate_tgt += dc_mbps(s->params.dcqcn_hai_mbps) *
                       (MIN(r->dc_t, r->dc_bc) - f);
    } else {
        r->rate_tgt += dc_mbps(s->params.dcqcn_ai_mbps);
    }
    r->rate_tgt = MIN(r->rate_tgt, line);
    r->rate_cur = MIN((r->rate_tgt + r->rate_cur) / 2, line);
    trace_qroce_dcqcn_rate(qp->qpn, r->rate_cur / 1000000,
                           r->rate_tgt / 1000000, r->alpha);
}

/* Bring the alpha and rate timers up to @now (they run lazily). */
static void dc_advance(QRoceState *s, QRoceQP *qp, int64_t now)
{
    QRoceQPXport *r = &qp->xp;
    int64_t k = (int64_t)MAX(s->params.dcqcn_alpha_us, 1) * 1000;
    int64_t t = (int64_t)MAX(s->params.dcqcn_timer_us, 1) * 1000;
    int n;

    if (!r->dc_alpha_at) {
        r->dc_alpha_at = now + k;
        r->dc_timer_at = now + t;
        return;
    }
    for (n = 0; now >= r->dc_alpha_at && n < 64; n++) {
        if (!r->dc_cnp_seen) {
            r->alpha = r->alpha * (1024 - MIN(s->params.dcqcn_g, 1024)) / 1024;
        }
        r->dc_cnp_seen = false;
        r->dc_alpha_at += k;
    }
    if (now >= r->dc_alpha_at) {
        r->alpha = 0;           /* idle for long: alpha has decayed */
        r->dc_alpha_at = now + k;
    }
    for (n = 0; now >= r->dc_timer_at && n < 64; n++) {
        r->dc_t++;
        dc_increase(s, qp);
        r->dc_timer_at += t;
    }
    if (now >= r->dc_timer_at) {
        r->rate_cur = r->rate_tgt = dc_mbps(s->params.dcqcn_line_mbps);
        r->dc_timer_at = now + t;
    }
}

/* A CNP for this QP: cut the rate by alpha / 2. */
void qroce_dc_cnp(QRoceState *s, QRoceQP *qp)
{
    QRoceQPXport *r = &qp->xp;
    int64_t now = engine_now();
    uint32_t g = MIN(s->params.dcqcn_g, 1024);

    qroce_count(s, QROCE_CNT_CNP_HANDLED);
    if (!s->params.dcqcn) {
        return;
    }
    dc_advance(s, qp, now);
    /*
     * An emulated port has no fixed speed: a QP still at the line rate
     * starts from the rate it really sent at in the last milliseconds.
     */
    if (r->rate_cur >= dc_mbps(s->params.dcqcn_line_mbps)) {
        if (r->meas_rate) {
            r->rate_cur = MIN(r->rate_cur, r->meas_rate);
        }
        r->alpha = 1024;        /* a flow's first cut halves it */
    }
    r->rate_tgt = r->rate_cur;
    r->rate_cur = r->rate_cur * (2048 - r->alpha) / 2048;
    r->rate_cur = MAX(r->rate_cur, dc_mbps(MAX(s->params.dcqcn_min_mbps, 1)));
    /*
     * The window shrinks too, as DCTCP's does, by its own alpha: a rate
     * limit alone lags the round trip of an emulated guest (milliseconds)
     * by many rate periods, and the rate's alpha, kept on the rate
     * clocks, has decayed long before the next round trip.
     */
    r->wnd_cnp = true;
    if (psn_cmp(r->una_psn, r->cut_psn) >= 0) {
        /* at most once a window: the CNPs of one window are one signal */
        r->cwnd = MAX((uint64_t)r->cwnd * (2048 - r->walpha) / 2048,
                      2 * CC_CWND_ONE);
        r->ssthresh = r->cwnd;
        r->cut_psn = r->npsn;
        trace_qroce_cc_cwnd(qp->qpn, r->cwnd / CC_CWND_ONE,
                            r->ssthresh / CC_CWND_ONE, false);
    }
    r->alpha = (r->alpha * (1024 - g) + g * 1024) / 1024;
    r->dc_t = r->dc_bc = 0;
    r->dc_bytes = 0;
    r->dc_cnp_seen = true;
    r->dc_alpha_at = now + (int64_t)MAX(s->params.dcqcn_alpha_us, 1) * 1000;
    r->dc_timer_at = now + (int64_t)MAX(s->params.dcqcn_timer_us, 1) * 1000;
    qroce_count(s, QROCE_CNT_RATE_CUTS);
    trace_qroce_dcqcn_cut(qp->qpn, r->rate_cur / 1000000,
                          r->rate_tgt / 1000000, r->alpha);
}

/*
 * May @qp send now?  A QP below the line rate sends at most
 * CC_PACE_BURST_NS ahead of its rate; otherwise its pacing timer is
 * armed and the engine leaves it until then.
 */
bool qroce_dc_may_send(QRoceState *s, QRoceQP *qp)
{
    QRoceQPXport *r = &qp->xp;
    int64_t now;

    if (!s->params.dcqcn || r->rate_cur >= dc_mbps(s->params.dcqcn_line_mbps)) {
        return true;
    }
    now = engine_now();
    dc_advance(s, qp, now);
    if (r->pace_at <= now + CC_PACE_BURST_NS) {
        return true;
    }
    timer_mod(r->pace_timer, r->pace_at - CC_PACE_BURST_NS);
    return false;
}

/* Account a sent frame of @bytes to the QP's rate. */
void qroce_dc_sent(QRoceState *s, QRoceQP *qp, size_t bytes)
{
    QRoceQPXport *r = &qp->xp;
    uint64_t bc = (uint64_t)MAX(s->params.dcqcn_byte_kb, 1) * 1024;
    int64_t now;

    if (!s->params.dcqcn) {
        return;
    }
    /* the rate really sent at, measured over 1 ms periods */
    now = engine_now();
    r->meas_bytes += bytes;
    if (now - r->meas_at >= 1000000) {
        if (now - r->meas_at < 10000000) {
            r->meas_rate = r->meas_bytes * 8 * 1000000000ULL /
                           (now - r->meas_at);
        } else {
            r->meas_rate = 0;           /* idle: nothing to go by */
        }
        r->meas_at = now;
        r->meas_bytes = 0;
    }
    if (r->rate_cur >= dc_mbps(s->params.dcqcn_line_mbps)) {
        return;
    }
    r->pace_at = MAX(r->pace_at, now) +
                 (int64_t)(bytes * 8 * 1000000000ULL / MAX(r->rate_cur, 1));
    r->dc_bytes += bytes;
    if (r->dc_bytes >= bc) {
        r->dc_bytes -= bc;
        r->dc_bc++;
        dc_increase(s, qp);
    }
}

/* ------------------------------------------------------------------ */
/* Congestion window                                                   */
/* ------------------------------------------------------------------ */

/*
 * The responder has everything before @una, past the QP's oldest
 * unacknowledged PSN: grow the congestion window by the PSNs acknowledged
 * (slow start, then additive increase), and once a window has been
 * acknowledged, update the window's alpha from whether a CNP came in it
 * (DCTCP's estimate, with CNPs for marks: walpha = (1 - g) walpha + g F).
 */
void qroce_cc_acked(QRoceState *s, QRoceQP *qp, uint32_t una)
{
    QRoceQPXport *r = &qp->xp;
    uint32_t n = psn_sub(una, r->una_psn);
    uint32_t g = MIN(s->params.dcqcn_wnd_g, 1024);

    if (psn_cmp(una, r->wnd_end) >= 0) {
        r->walpha = (r->walpha * (1024 - g) + (r->wnd_cnp ? g * 1024 : 0)) /
                    1024;
        r->wnd_cnp = false;
        r->wnd_end = r->npsn;
    }

    if (r->cwnd < r->ssthresh) {
        r->cwnd += n * CC_CWND_ONE;
    } else {
        r->cwnd += MAX(n * CC_CWND_ONE * CC_CWND_ONE / r->cwnd, 1);
    }
    r->cwnd = MIN(r->cwnd, QROCE_WINDOW * CC_CWND_ONE);
}

/* A loss: halve the window (a sequence NAK) or start over (a timeout). */
void qroce_cc_cwnd_cut(QRoceState *s, QRoceQP *qp, bool timeout)
{
    QRoceQPXport *r = &qp->xp;

    r->ssthresh = MAX(r->cwnd / 2, 2 * CC_CWND_ONE);
    r->cwnd = timeout ? 2 * CC_CWND_ONE : r->ssthresh;
    trace_qroce_cc_cwnd(qp->qpn, r->cwnd / CC_CWND_ONE,
                        r->ssthresh / CC_CWND_ONE, timeout);
}

/* ------------------------------------------------------------------ */
/* Congestion point                                                    */
/* ------------------------------------------------------------------ */

/*
 * Congestion point, per frame: a frame marked CE on the way counts as
 * congested at once.  Otherwise the frame joins the port's receive backlog
 * (the RoCE frames that came in since the engine last ran): the QPs that
 * its data frames (requests and READ responses, not ACKs or CNPs) are for,
 * and for each how many ECN-capable ones came past ecn-threshold.  Whether
 * the device marks them is decided when the backlog ends.
 */
bool qroce_cc_congested(QRoceState *s, RocePktIn *p, bool wire)
{
    QRoceEngine *eng = s->eng;
    uint32_t i;

    if (!wire) {
        return p->ecn == ROCE_ECN_CE;   /* loopback: no port queue */
    }
    if (eng->rx_burst++ == 0) {
        qemu_bh_schedule(eng->burst_bh);
    }
    if (p->ecn == ROCE_ECN_CE) {
        return true;                    /* marked on the way */
    }
    if (p->opcode == ROCE_ACK || p->opcode == ROCE_ATOMIC_ACK ||
        p->opcode == ROCE_CNP) {
        return false;
    }
    for (i = 0; i < eng->burst_nqp && eng->burst_qpn[i] != p->dqpn; i++) {
        /* find the QP */
    }
    if (i == eng->burst_nqp) {
        if (i == QROCE_CC_BURST_QPS) {
            return false;               /* more QPs than tracked */
        }
        eng->burst_qpn[i] = p->dqpn;
        eng->burst_over[i] = 0;
        eng->burst_nqp++;
    }
    if (p->ecn != ROCE_ECN_NOT_ECT && s->params.ecn_threshold &&
        eng->rx_burst > s->params.ecn_threshold) {
        eng->burst_over[i]++;
    }
    return false;
}

/*
 * Congestion point, when a backlog ends: if data frames of two QPs or
 * more were in it (fan-in, what builds a switch's queue), every frame that
 * came past ecn-threshold is marked CE, and the QPs they were for are
 * returned in @qpns for a CNP each -- also the QP whose frames led the
 * backlog before the next one joined.  One QP's frames alone are not
 * marked: its own window bounds them (a port holds a window) and its loss
 * recovery handles the rest.
 */
uint32_t qroce_cc_burst_end(QRoceState *s, uint32_t *qpns)
{
    QRoceEngine *eng = s->eng;
    uint32_t i, n = 0;

    if (eng->burst_nqp >= 2) {
        for (i = 0; i < eng->burst_nqp; i++) {
            if (!eng->burst_over[i]) {
                continue;
            }
            s->cnt[QROCE_CNT_ECN_MARKED] += eng->burst_over[i];
            trace_qroce_ecn_mark(eng->burst_qpn[i], eng->burst_over[i],
                                 eng->rx_burst);
            qpns[n++] = eng->burst_qpn[i];
        }
    }
    eng->rx_burst = eng->burst_nqp = 0;
    return n;
}
