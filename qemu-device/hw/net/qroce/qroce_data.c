/*
 * qroce: the data path -- the scheduler (all of it: the run queue's two
 * operations are inline in qroce_data_state.h, for every layer of the
 * engine to queue a QP) and the entry points of the RoCEv2 transport
 * engine: doorbells, received frames, QPs' lives.
 *
 * Doorbells, responses, timers and flushes only queue a QP; a bottom half
 * runs the queued QPs in turn, ENGINE_QUANTUM packets each and
 * ENGINE_BUDGET a run, through the table of transports (RC in
 * qroce_data_rc_*.c, qroce_data_uc.c, qroce_data_ud.c) indexed by QP
 * type; a QP in ERR is flushed here.
 * Received frames come up from the port, are checked here and handed to
 * the QP's transport; the CNPs of the notification point go out from here.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/main-loop.h"
#include "qemu/timer.h"
#include "qemu/aio-wait.h"
#include "qroce_data.h"
#include "qroce_data_xport.h"
#include "qroce_data_common.h"
#include "qroce_data_cc.h"
#include "qroce_data_rc.h"
#include "qroce_objects.h"
#include "qroce_port.h"
#include "qroce_odp.h"
#include "trace.h"

#define ENGINE_BUDGET       64      /* packets per bottom-half run */
#define ENGINE_QUANTUM      16      /* packets per QP per turn */
#define ENGINE_INLINE_BUDGET 4      /* packets a doorbell sends itself */
#define ENGINE_FLUSH_BUDGET 256     /* flush CQEs per QP per bottom-half run */
#define CC_CWND_INIT    16      /* PSNs before the first ACK */

/*
 * The engine's timers run in the main loop even with iothread=: they only
 * queue the QP, and the main loop is where QPs are destroyed.
 */
static void qp_pace_timer(void *opaque)
{
    QRoceQP *qp = opaque;
    QROCE_LOCKED(qp->xp.s);

    qroce_dp_schedule(qp->xp.s, qp);
}

static void qp_retry_timer(void *opaque)
{
    QRoceQP *qp = opaque;
    QROCE_LOCKED(qp->xp.s);

    /* DMA and interrupts only from the guarded bottom half */
    qp->xp.timer_fired = true;
    qroce_dp_schedule(qp->xp.s, qp);
}

/* Complete every posted, unconsumed WQE of @wq with WR_FLUSH_ERR. */
static bool qp_flush_wq(QRoceState *s, QRoceQP *qp, QRoceWQ *wq, bool sq,
                        int *budget)
{
    if (wq->pi - wq->ci > (1u << wq->log2)) {
        /* consumed past the producer index: nothing posted is left */
        wq->ci = wq->pi;
        return false;
    }
    while (wq->ci != wq->pi) {
        if (*budget <= 0) {
            return true;
        }
        (*budget)--;
        qroce_dp_cqe(s, qp, sq, wq->ci, sq ? QROCE_CQE_SEND : QROCE_CQE_RECV,
                     QROCE_WC_WR_FLUSH_ERR, 0, false, 0, false);
        wq->ci++;
    }
    return false;
}

/*
 * A QP in ERR: flush its SQ, the RECV WQE a message had taken (from the
 * RQ or the SRQ: it is the QP's now) and its RQ, a budget at a time.
 */
static bool qp_flush(QRoceState *s, QRoceQP *qp, int *budget)
{
    bool more = qp_flush_wq(s, qp, &qp->sq, true, budget);

    qp->xp.sq_sent = qp->xp.sq_hi = qp->sq.ci;
    if (qp->xp.rwqe_held && *budget > 0) {
        (*budget)--;
        trace_qroce_recv_flush_held(qp->qpn, qp->xp.rwqe_idx);
        qroce_dp_recv_cqe(s, qp, QROCE_CQE_RECV, QROCE_WC_WR_FLUSH_ERR, 0,
                          false, 0, false);
    }
    more |= qp->xp.rwqe_held;
    if (!(qp->flags & QROCE_CREATE_QP_SRQ)) {
        more |= qp_flush_wq(s, qp, &qp->rq, false, budget);
    }
    return more;
}

/*
 * How the engine runs a QP of each type.  @opclass: the BTH opcode class
 * (opcode >> 5) of the packets the transport takes.  @connected: the QP
 * has an AV that received packets must match, and takes CNPs.
 * process: send (and answer) with a packet budget; true if it stopped for
 * the budget.  timeout: its retry/RNR timer fired (NULL: never armed).
 * rx_response: ACKs, NAKs and responses to its requests (NULL: none).
 * rx: requests, in a ready state for a connected QP.
 */
typedef struct QRoceTransportOps {
    const char *name;
    uint8_t opclass;
    bool connected;
    bool (*process)(QRoceState *s, QRoceQP *qp, int *budget);
    void (*timeout)(QRoceState *s, QRoceQP *qp);
    void (*rx_response)(QRoceState *s, QRoceQP *qp, RocePktIn *p);
    void (*rx)(QRoceState *s, QRoceQP *qp, RocePktIn *p);
} QRoceTransportOps;

static const QRoceTransportOps qroce_transports[QROCE_QPT_GSI + 1] = {
    [QROCE_QPT_RC] = {
        .name = "RC", .opclass = 0, .connected = true,
        .process = qroce_rc_process, .timeout = qroce_rc_timeout,
        .rx_response = qroce_rc_requester_rx, .rx = qroce_rc_responder_rx,
    },
    [QROCE_QPT_UC] = {
        .name = "UC", .opclass = 1, .connected = true,
        .process = qroce_uc_sq_process, .rx = qroce_uc_rx,
    },
    [QROCE_QPT_UD] = {
        .name = "UD", .opclass = 3,
        .process = qroce_ud_sq_process, .rx = qroce_ud_rx,
    },
    [QROCE_QPT_GSI] = {
        .name = "GSI", .opclass = 3,
        .process = qroce_ud_sq_process, .rx = qroce_ud_rx,
    },
};

static bool qp_stalled(QRoceState *s, QRoceQP *qp)
{
    QRoceEngine *eng = s->eng;

    return eng->stall_until && engine_now() < eng->stall_until &&
           (!eng->stall_qpn || eng->stall_qpn == qp->qpn);
}

/* The stall ended: run every QP again (the timer only schedules). */
static void engine_stall_timer(void *opaque)
{
    QRoceState *s = opaque;
    uint32_t i;
    QROCE_LOCKED(s);

    s->eng->stall_until = 0;
    QROCE_TBL_FOREACH(&s->qps, i) {
        QRoceQP *qp = qroce_tbl_get(&s->qps, i);

        if (qp->valid && qp->state != QROCE_QPS_RESET) {
            qroce_dp_schedule(s, qp);
        }
    }
}

void qroce_data_stall(QRoceState *s, uint32_t qpn, uint32_t us)
{
    QRoceEngine *eng = s->eng;

    trace_qroce_inject_stall(qpn, us);
    eng->stall_qpn = qpn;
    eng->stall_until = engine_now() + (int64_t)us * 1000;
    timer_mod(eng->stall_timer, eng->stall_until);
}

/* Run one QP; true if it has more to do. */
static bool engine_qp_run(QRoceState *s, QRoceQP *qp, int *budget)
{
    const QRoceTransportOps *t = &qroce_transports[qp->type];

    if (qp_stalled(s, qp)) {
        return false;       /* engine_stall_timer() queues it again */
    }
    if (qp->xp.db_fatal) {
        /* the doorbell handler only recorded it: the event goes from here */
        qp->xp.db_fatal = false;
        qroce_qp_set_error(s, qp, QROCE_EQE_QP_FATAL);
    }

    if (qp->xp.timer_fired) {
        qp->xp.timer_fired = false;
        if (t->timeout) {
            t->timeout(s, qp);
        }
    }
    if (qp->state == QROCE_QPS_ERR) {
        return qp_flush(s, qp, budget);
    }
    return t->process(s, qp, budget);
}

/*
 * The engine: each QP queued by a doorbell, a response, a timer or a
 * flush runs in turn, with ENGINE_BUDGET packets (or flush CQEs) a run.
 */
static void engine_bh(void *opaque)
{
    QRoceState *s = opaque;
    QRoceEngine *eng = s->eng;
    int budget = ENGINE_BUDGET;
    QRoceQP *qp, *last;
    QROCE_LOCKED(s);

    if (s->quiesced) {
        return;                 /* qroce_data_resume() runs us */
    }
    last = QTAILQ_LAST(&eng->runq);
    /* round robin: a QP with more to do goes to the back of the queue */
    while (budget > 0 && last && (qp = QTAILQ_FIRST(&eng->runq))) {
        int quantum = MIN(budget, ENGINE_QUANTUM), left = quantum;

        if (qroce_port_busy(s)) {
            return;     /* engine_tx_ready() runs us when the wire drains */
        }
        engine_unschedule(s, qp);
        if (engine_qp_run(s, qp, &left)) {
            qroce_dp_schedule(s, qp);
        }
        budget -= quantum - left;
        if (qp == last) {
            break;
        }
    }
    if (!QTAILQ_EMPTY(&eng->runq)) {
        qemu_bh_schedule(eng->bh);
    }
}

/*
 * Notification point: a CE-marked request or READ response on @qp sends
 * a CNP to the QP at the other end, at most one per cnp-interval-us.
 */
static void engine_notify(QRoceState *s, QRoceQP *qp)
{
    QRoceQPXport *r = &qp->xp;
    int64_t now = engine_now();
    RocePktOut o = {};
    uint8_t sgid[16];

    if (now < r->cnp_at || !qroce_dp_addr(s, qp, &o, sgid)) {
        return;
    }
    r->cnp_at = now + (int64_t)s->params.cnp_interval_us * 1000;
    o.opcode = ROCE_CNP;
    o.psn = 0;
    qroce_count(s, QROCE_CNT_CNP_SENT);
    trace_qroce_cnp_tx(qp->qpn, qp->dest_qpn);
    qroce_dp_tx(s, qp, &o, 0);
}

/*
 * The end of a receive backlog: the QPs whose frames the congestion point
 * marked get a CNP each (the notification point), if they are still
 * there and connected.
 */
static void engine_burst_bh(void *opaque)
{
    QRoceState *s = opaque;
    uint32_t qpns[QROCE_CC_BURST_QPS];
    uint32_t i, n;
    QROCE_LOCKED(s);

    if (s->quiesced) {
        return;
    }
    n = qroce_cc_burst_end(s, qpns);

    for (i = 0; i < n; i++) {
        QRoceQP *qp = qroce_qp_get(s, qpns[i]);

        if (qp && qroce_transports[qp->type].connected &&
            qp->state >= QROCE_QPS_RTR && qp->state != QROCE_QPS_ERR) {
            engine_notify(s, qp);
        }
    }
}

/* Checks common to every RoCE packet: false if it is dropped. */
static bool rx_check(QRoceState *s, int ret, RocePktIn *p)
{
    if (ret < 0) {
        qroce_dp_drop(s, ret == ROCE_ERR_CSUM ? "bad IPv4 header checksum" :
                      "malformed");
        return false;
    }
    if (!p->icrc_ok) {
        qroce_count(s, QROCE_CNT_ROCE_ICRC_ERRS);
        qroce_dp_drop(s, "bad ICRC");
        return false;
    }
    if (p->tver || p->pkey != 0xffff) {
        qroce_dp_drop(s, "TVer or P_Key");
        return false;
    }
    return true;
}

/* The QP's AV names the packet's addresses (RC and UC). */
static bool rx_addr_ok(QRoceState *s, QRoceQP *qp, RocePktIn *p)
{
    uint8_t sgid[16];

    return !memcmp(p->sgid, qp->av.dgid, 16) &&
           qroce_gid_get(s, qp->av.sgid_index, sgid) &&
           !memcmp(p->dgid, sgid, 16);
}

#define ROCE_MCAST_QPN 0xffffffu

/* The frame's destination MAC is the multicast mapping of @gid's address. */
static bool mcast_mac_ok(const uint8_t *mac, const uint8_t gid[16])
{
    uint8_t want[6];

    qroce_mcast_mac(gid, want);
    return !memcmp(mac, want, 6);
}

/*
 * A frame to a multicast MAC: a UD packet to QP 0xFFFFFF for a group this
 * device holds goes to every QP attached to it (each takes a RECV WQE);
 * true if it was RoCE for a group here, false for the Ethernet function.
 * The device's own sends come back through the port's loop (!@wire), not
 * as a wire's echo, and skip a sender that blocks its own copies.
 */
static bool qroce_mcast_rx(QRoceState *s, const uint8_t *frame, int ret,
                           RocePktIn *p, bool wire)
{
    uint32_t qpn[QROCE_MCAST_MAX_QP_ATTACH], n, i;
    QRoceMcast *g;
    QRoceQP *qp;

    if (ret < 0 || p->dqpn != ROCE_MCAST_QPN) {
        return false;
    }
    g = qroce_mcast_find(s, p->dgid);
    if (!g || !mcast_mac_ok(frame, p->dgid)) {
        return false;       /* a group of another host */
    }
    if (wire && !memcmp(frame + 6, qroce_mac(s), 6)) {
        trace_qroce_mcast_echo(p->deth_sqp);
        return true;        /* a hub's echo: the loop delivered it */
    }
    qroce_count(s, QROCE_CNT_ROCE_RX_PKTS);
    if (!rx_check(s, ret, p)) {
        return true;
    }
    if ((p->opcode >> 5) != qroce_transports[QROCE_QPT_UD].opclass) {
        qroce_dp_drop(s, "not a UD packet to a multicast group");
        return true;
    }
    /* the list as it is now: a delivery must not see it change */
    n = g->nqp;
    memcpy(qpn, g->qpn, n * sizeof(qpn[0]));
    for (i = 0; i < n; i++) {
        qp = qroce_qp_get(s, qpn[i]);
        if (!wire && qp && qp->qpn == p->deth_sqp &&
            (qp->flags & QROCE_CREATE_QP_BLOCK_MCAST_LB)) {
            continue;       /* its own send, and it blocks those */
        }
        if (qp && qp->type == QROCE_QPT_UD) {
            trace_qroce_roce_rx(qp->qpn, p->opcode, p->psn, p->paylen);
            qroce_transports[qp->type].rx(s, qp, p);
        }
    }
    return true;
}

/*
 * A frame from the wire (@wire) or from the device itself, from the port:
 * true if it was RoCE for this device.
 */
static bool qroce_data_rx(QRoceState *s, const uint8_t *frame, size_t len,
                          bool wire)
{
    const QRoceTransportOps *t;
    RocePktIn p;
    QRoceQP *qp;
    bool ce;
    int ret = roce_parse(frame, len, &p);

    if (ret == ROCE_NOT_ROCE) {
        return false;
    }
    if (frame[0] & 1) {
        return qroce_mcast_rx(s, frame, ret, &p, wire);
    }
    if (memcmp(frame, qroce_mac(s), 6) || qroce_gid_find(s, p.dgid) < 0) {
        return false;       /* not for us: a plain Ethernet or UDP frame */
    }
    qroce_count(s, QROCE_CNT_ROCE_RX_PKTS);
    if (!rx_check(s, ret, &p)) {
        return true;
    }
    qp = qroce_qp_get(s, p.dqpn);
    if (!qp) {
        qroce_dp_drop(s, "no such QP");
        return true;
    }
    ce = qroce_cc_congested(s, &p, wire);
    t = &qroce_transports[qp->type];
    if ((p.opcode >> 5) == t->opclass && !t->connected) {
        trace_qroce_roce_rx(qp->qpn, p.opcode, p.psn, p.paylen);
        t->rx(s, qp, &p);
        return true;
    }
    if ((p.opcode != ROCE_CNP && (p.opcode >> 5) != t->opclass) ||
        !t->connected) {
        qroce_dp_drop(s, "no such RC or UC QP");
        return true;
    }
    if (!rx_addr_ok(s, qp, &p)) {
        qroce_dp_drop(s, "addresses differ from the QP's AV");
        return true;
    }
    trace_qroce_roce_rx(qp->qpn, p.opcode, p.psn, p.paylen);
    if (p.opcode == ROCE_CNP) {
        trace_qroce_cnp_rx(qp->qpn);
        qroce_dc_cnp(s, qp);
        return true;
    }
    if (ce && p.opcode != ROCE_ACK && p.opcode != ROCE_ATOMIC_ACK &&
        qp->state >= QROCE_QPS_RTR && qp->state != QROCE_QPS_ERR) {
        engine_notify(s, qp);
    }
    if (t->rx_response &&
        p.opcode >= ROCE_READ_RESP_FIRST && p.opcode <= ROCE_ATOMIC_ACK) {
        if (qp->state != QROCE_QPS_RTS && qp->state != QROCE_QPS_SQD) {
            qroce_dp_drop(s, "response to a QP not in RTS");
            return true;
        }
        t->rx_response(s, qp, &p);
        return true;
    }
    if (qp->state < QROCE_QPS_RTR || qp->state == QROCE_QPS_ERR) {
        qroce_dp_drop(s, "request to a QP not ready");
        return true;
    }
    t->rx(s, qp, &p);
    return true;
}

/* ------------------------------------------------------------------ */
/* QP lifecycle                                                        */
/* ------------------------------------------------------------------ */

static void qp_xport_reset(QRoceState *s, QRoceQP *qp)
{
    QRoceQPXport *r = &qp->xp;

    qroce_odp_qp_reset(qp);
    timer_del(r->timer);
    timer_del(r->pace_timer);
    r->timer_fired = false;
    r->db_fatal = false;
    r->npsn = r->una_psn = r->hi_psn = qp->sq_psn;
    r->wqe_off = 0;
    r->sq_sent = r->sq_hi = qp->sq.ci;
    r->nsent = r->nsent_hi = 0;
    r->inflight_head = 0;
    r->retry_left = qp->retry_cnt;
    r->rnr_left = qp->rnr_retry;
    r->rnr_wait = false;
    r->resync = false;
    r->txw_valid = r->rdw_valid = false;
    r->cwnd = CC_CWND_INIT * CC_CWND_ONE;
    r->ssthresh = QROCE_WINDOW * CC_CWND_ONE;
    r->cut_psn = qp->sq_psn;
    r->backoff = 0;
    qroce_dc_reset(s, qp);
    r->cnp_at = 0;
    r->epsn = qp->rq_psn;
    r->msn = 0;
    r->recv_off = 0;
    r->in_msg = false;
    r->rwqe_held = false;       /* RESET discards WQEs without completions */
    r->nak_sent = false;
    r->nrd = 0;
    r->rsp_head = r->rsp_count = 0;
    memset(r->ahist, 0, sizeof(r->ahist));
    r->ahist_next = 0;
    r->inj_status = 0;
    r->inj_next = qp->sq.ci;
}

size_t qroce_data_qp_bytes(const QRoceQP *qp)
{
    return (sizeof(QRoceInflight) << qp->sq.log2) + 2 * sizeof(QRoceWqe) +
           2 * sizeof(QEMUTimer);
}

void qroce_data_qp_create(QRoceState *s, QRoceQP *qp)
{
    qp->xp.s = s;
    qp->xp.timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, qp_retry_timer, qp);
    qp->xp.pace_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, qp_pace_timer, qp);
    qp->xp.inflight_n = 1u << qp->sq.log2;
    qp->xp.inflight = g_new0(QRoceInflight, qp->xp.inflight_n);
    qp->xp.txw = g_new0(QRoceWqe, 1);
    qp->xp.rdw = g_new0(QRoceWqe, 1);
    qp_xport_reset(s, qp);
}

/*
 * Migration: a QP about to be loaded gets what its fields are loaded into
 * (timers, the WQE copies; the in-flight ring comes with the stream), and
 * a loaded one goes back on the run queue if it was on it.
 */
void qroce_data_qp_load_prepare(QRoceState *s, QRoceQP *qp)
{
    qp->xp.s = s;
    qp->xp.timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, qp_retry_timer, qp);
    qp->xp.pace_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, qp_pace_timer, qp);
    qp->xp.txw = g_new0(QRoceWqe, 1);
    qp->xp.rdw = g_new0(QRoceWqe, 1);
}

void qroce_data_qp_loaded(QRoceState *s, QRoceQP *qp)
{
    if (qp->xp.mig_runq) {
        qp->xp.mig_runq = false;
        qroce_dp_schedule(s, qp);
    }
}

void qroce_data_qp_modify(QRoceState *s, QRoceQP *qp, uint32_t old_state,
                          uint32_t attr_mask)
{
    QRoceQPXport *r = &qp->xp;

    if (qp->state == QROCE_QPS_ERR) {
        qroce_dp_qp_to_err(s, qp, old_state);
        return;
    }
    if (qp->state == QROCE_QPS_RESET) {
        qp->sq.pi = qp->sq.ci = 0;
        qp->rq.pi = qp->rq.ci = 0;
        qp_xport_reset(s, qp);
        return;
    }
    if (attr_mask & QROCE_QP_ATTR_RQ_PSN) {
        r->epsn = qp->rq_psn;
    }
    if (attr_mask & QROCE_QP_ATTR_SQ_PSN) {
        r->npsn = r->una_psn = r->hi_psn = qp->sq_psn;
    }
    if (attr_mask & QROCE_QP_ATTR_RETRY_CNT) {
        r->retry_left = qp->retry_cnt;
    }
    if (attr_mask & QROCE_QP_ATTR_RNR_RETRY) {
        r->rnr_left = qp->rnr_retry;
    }
    if (qp->state == QROCE_QPS_RTS && qp->sq.pi != r->sq_sent) {
        qroce_dp_schedule(s, qp);
    }
}

void qroce_data_qp_destroy(QRoceState *s, QRoceQP *qp)
{
    engine_unschedule(s, qp);
    if (qp->xp.timer) {
        timer_free(qp->xp.timer);
        qp->xp.timer = NULL;
    }
    if (qp->xp.pace_timer) {
        timer_free(qp->xp.pace_timer);
        qp->xp.pace_timer = NULL;
    }
    g_free(qp->xp.inflight);
    g_free(qp->xp.txw);
    g_free(qp->xp.rdw);
    qp->xp.inflight = NULL;
    qp->xp.txw = qp->xp.rdw = NULL;
}

/*
 * An SQ doorbell.  With the engine in the main loop and nothing queued,
 * the vCPU that rang it for a QP in RTS sends the QP's first
 * ENGINE_INLINE_BUDGET packets itself (a small message whole), as e1000
 * transmits from its TDT write: it holds the BQL and the lock, and the
 * engine's DMA reaches guest RAM only.  The message then leaves without
 * waking the main loop, which on a host whose cores are all busy can wait
 * a scheduler slice for one.  The rest, and every other case (an
 * IOThread, a busy engine or wire, a QP already queued or not in RTS:
 * flushes never run here), goes to the bottom half.
 */
void qroce_data_sq_doorbell(QRoceState *s, QRoceQP *qp)
{
    int left = ENGINE_INLINE_BUDGET;

    if (s->iothread || s->quiesced || !bql_locked() ||
        qp->state != QROCE_QPS_RTS || qp->xp.on_runq ||
        !QTAILQ_EMPTY(&s->eng->runq) || qroce_port_busy(s)) {
        qroce_dp_schedule(s, qp);
        return;
    }
    trace_qroce_engine_inline(qp->qpn);
    if (engine_qp_run(s, qp, &left)) {
        qroce_dp_schedule(s, qp);
    }
}

/*
 * A doorbell the guest had no right to ring (a producer index that
 * overruns the ring or takes back sent WQEs): the QP goes to ERR with a
 * QP_FATAL event, but from the engine, not from the MMIO handler, which
 * writes no guest memory and raises no interrupt.
 */
void qroce_data_bad_doorbell(QRoceState *s, QRoceQP *qp)
{
    qp->xp.db_fatal = true;
    qroce_dp_schedule(s, qp);
}

/*
 * ODP_RESUME ended a page fault of @qp: run it again.  The retry timer,
 * held while the send side waited, starts again for what is in flight.
 */
void qroce_data_odp_resumed(QRoceState *s, QRoceQP *qp)
{
    if (qp->type == QROCE_QPT_RC && qp->state == QROCE_QPS_RTS &&
        qp->xp.nsent && !timer_pending(qp->xp.timer)) {
        qroce_rc_arm_timer(qp);
    }
    qroce_dp_schedule(s, qp);
}

bool qroce_data_qp_doomed(QRoceQP *qp)
{
    return qp->xp.db_fatal;
}

void qroce_data_rq_doorbell(QRoceState *s, QRoceQP *qp)
{
    if (qp->state == QROCE_QPS_ERR) {
        qroce_dp_schedule(s, qp);
    }
}

/* The port drained what it held back: run the queued QPs again. */
static void engine_tx_ready(QRoceState *s)
{
    if (!QTAILQ_EMPTY(&s->eng->runq)) {
        qemu_bh_schedule(s->eng->bh);
    }
}

static void engine_nop(void *opaque)
{
}

void qroce_data_kick(QRoceState *s)
{
    qemu_bh_schedule(s->eng->bh);
}

/* The VM runs again: the engine's bottom halves pick up what waited. */
void qroce_data_resume(QRoceState *s)
{
    qemu_bh_schedule(s->eng->bh);
    qemu_bh_schedule(s->eng->burst_bh);
}

void qroce_data_init(QRoceState *s)
{
    QRoceEngine *eng = g_new0(QRoceEngine, 1);

    QTAILQ_INIT(&eng->runq);
    eng->pkt = g_malloc(QROCE_ETH_MAX_FRAME + 64);
    if (s->iothread) {
        /*
         * Not guarded: the guard is a flag of the device that a doorbell in
         * a vCPU thread would find set while the engine runs here.  The
         * engine's DMA reaches guest RAM only (qroce_dma_copy()), so it
         * cannot re-enter the device.
         */
        eng->bh = aio_bh_new(s->eng_ctx, engine_bh, s);
    } else {
        eng->bh = qemu_bh_new_guarded(engine_bh, s,
                                      &DEVICE(s)->mem_reentrancy_guard);
    }
    eng->burst_bh = qemu_bh_new_guarded(engine_burst_bh, s,
                                        &DEVICE(s)->mem_reentrancy_guard);
    eng->stall_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, engine_stall_timer, s);
    s->eng = eng;
    qroce_port_set_roce_rx(s, qroce_data_rx);
    qroce_port_set_tx_ready(s, engine_tx_ready);
}

void qroce_data_reset(QRoceState *s)
{
    QRoceQP *qp, *next;

    QTAILQ_FOREACH_SAFE(qp, &s->eng->runq, xp.runq_link, next) {
        engine_unschedule(s, qp);
    }
    s->eng->rx_burst = s->eng->burst_nqp = 0;
    s->eng->stall_until = 0;
    timer_del(s->eng->stall_timer);
}

void qroce_data_fini(QRoceState *s)
{
    qroce_port_set_tx_ready(s, NULL);   /* the netdev's queue is purged later */
    qemu_bh_delete(s->eng->bh);
    if (s->iothread) {
        /* a run of the engine that already started ends first */
        aio_wait_bh_oneshot(s->eng_ctx, engine_nop, NULL);
    }
    qemu_bh_delete(s->eng->burst_bh);
    timer_free(s->eng->stall_timer);
    g_free(s->eng->pkt);
    g_free(s->eng);
    s->eng = NULL;
}
