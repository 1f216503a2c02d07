/*
 * qroce: the RoCEv2 transport engine (RC, UC, UD and the GSI QP).
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
 *
 * UC QPs segment and reassemble like RC with no ACKs, retries or READs:
 * a send WQE completes once sent, a damaged message is dropped.
 *
 * UD and GSI QPs share the run queue and the packet budget: each send WQE
 * is one UD SEND_ONLY packet to the address of its AH, completed once
 * sent; a received UD packet fills a RECV WQE with the GRH area and the
 * payload, or is dropped (no QP, wrong Q_Key, no RECV WQE, too long).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/timer.h"
#include "qemu/main-loop.h"
#include "qemu/bswap.h"
#include "qroce.h"
#include "roce_wire.h"
#include "trace.h"

#define RC_BUDGET       64      /* packets per bottom-half run */
#define RC_QUANTUM      16      /* packets per QP per turn */
#define RC_WINDOW       128     /* unacknowledged PSNs */
#define RC_ACK_EVERY    64      /* AckReq inside long messages */
#define RC_FLUSH_BUDGET 256     /* flush CQEs per QP per bottom-half run */
#define RC_CWND_ONE     256     /* the congestion window's fixed point */
#define RC_CWND_INIT    16      /* PSNs before the first ACK */
#define RC_MAX_BACKOFF  6       /* the timeout doubles at most 6 times */
#define RC_PACE_BURST_NS 100000 /* a paced QP may send 100 us ahead */

enum {
    RC_KIND_PLAIN,              /* SEND or WRITE: an ACK completes it */
    RC_KIND_READ,               /* completes with its last READ response */
    RC_KIND_ATOMIC,             /* completes with its atomic ACK */
};

enum {
    RC_RSP_ACK,
    RC_RSP_READ,
    RC_RSP_ATOMIC,
};

typedef struct QRoceRcInflight {
    uint32_t idx;               /* SQ WQE counter */
    uint32_t first_psn, last_psn;
    uint32_t len;
    uint32_t resp_off;          /* READ: bytes received so far */
    uint8_t cqe_opcode;
    uint8_t wqe_opcode;         /* to recognise the WQE when re-read */
    uint8_t kind;               /* RC_KIND_* */
    bool signaled;
    bool done;                  /* all its request packets were sent */
} QRoceRcInflight;

typedef struct RcWqe {
    struct qroce_send_wqe hdr;
    struct qroce_sge sge[QROCE_MAX_SGE];
    uint8_t inl[QROCE_MAX_INLINE];
    uint32_t len;
} RcWqe;

typedef struct QRoceRc {
    QEMUBH *bh;
    QTAILQ_HEAD(, QRoceQP) runq;
    uint8_t *pkt;               /* one frame */
    /* congestion point: RoCE frames received since the engine last ran */
    uint32_t rx_burst;
    QEMUBH *burst_bh;
} QRoceRc;

/* RNR timer values of the IB spec, in microseconds. */
static const uint32_t rnr_usec[32] = {
    655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960,
    1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720,
    40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
};

static inline int32_t psn_cmp(uint32_t a, uint32_t b)
{
    return (int32_t)((a - b) << 8);
}

static inline uint32_t psn_add(uint32_t a, uint32_t n)
{
    return (a + n) & 0xffffff;
}

static inline uint32_t psn_sub(uint32_t a, uint32_t b)
{
    return (a - b) & 0xffffff;
}

static uint32_t rc_mtu(QRoceQP *qp)
{
    return 128u << qp->path_mtu;
}

static uint16_t rc_sport(uint32_t qpn)
{
    return 0xc000 | ((qpn * 0x9e370001u) >> 18);
}

static void rc_schedule(QRoceState *s, QRoceQP *qp)
{
    QRoceRc *rc = s->rc;

    if (!qp->rc.on_runq) {
        qp->rc.on_runq = true;
        QTAILQ_INSERT_TAIL(&rc->runq, qp, rc.runq_link);
    }
    qemu_bh_schedule(rc->bh);
}

static void rc_unschedule(QRoceState *s, QRoceQP *qp)
{
    if (qp->rc.on_runq) {
        QTAILQ_REMOVE(&s->rc->runq, qp, rc.runq_link);
        qp->rc.on_runq = false;
    }
}

static int64_t rc_now(void)
{
    return qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
}

/* ------------------------------------------------------------------ */
/* DCQCN reaction point                                                */
/* ------------------------------------------------------------------ */

static uint64_t dc_mbps(uint32_t mbps)
{
    return (uint64_t)mbps * 1000000;
}

static void dc_reset(QRoceState *s, QRoceQP *qp)
{
    QRoceRcQP *r = &qp->rc;

    r->rate_cur = r->rate_tgt = dc_mbps(s->dcqcn_line_mbps);
    r->alpha = 1024;
    r->dc_t = r->dc_bc = 0;
    r->dc_bytes = 0;
    r->dc_alpha_at = r->dc_timer_at = 0;
    r->dc_cnp_seen = false;
    r->pace_at = 0;
    r->meas_at = 0;
    r->meas_bytes = r->meas_rate = 0;
}

/* A rate increase event (timer or byte counter). */
static void dc_increase(QRoceState *s, QRoceQP *qp)
{
    QRoceRcQP *r = &qp->rc;
    uint64_t line = dc_mbps(s->dcqcn_line_mbps);
    uint32_t f = s->dcqcn_f;

    if (r->rate_cur >= line) {
        return;
    }
    if (MAX(r->dc_t, r->dc_bc) < f) {
        /* fast recovery: halfway back to the rate before the cut */
    } else if (MIN(r->dc_t, r->dc_bc) > f) {
        r->rate_tgt += dc_mbps(s->dcqcn_hai_mbps) *
                       (MIN(r->dc_t, r->dc_bc) - f);
    } else {
        r->rate_tgt += dc_mbps(s->dcqcn_ai_mbps);
    }
    r->rate_tgt = MIN(r->rate_tgt, line);
    r->rate_cur = MIN((r->rate_tgt + r->rate_cur) / 2, line);
    trace_qroce_dcqcn_rate(qp->qpn, r->rate_cur / 1000000,
                           r->rate_tgt / 1000000, r->alpha);
}

/* Bring the alpha and rate timers up to @now (they run lazily). */
static void dc_advance(QRoceState *s, QRoceQP *qp, int64_t now)
{
    QRoceRcQP *r = &qp->rc;
    int64_t k = (int64_t)MAX(s->dcqcn_alpha_us, 1) * 1000;
    int64_t t = (int64_t)MAX(s->dcqcn_timer_us, 1) * 1000;
    int n;

    if (!r->dc_alpha_at) {
        r->dc_alpha_at = now + k;
        r->dc_timer_at = now + t;
        return;
    }
    for (n = 0; now >= r->dc_alpha_at && n < 64; n++) {
        if (!r->dc_cnp_seen) {
            r->alpha = r->alpha * (1024 - MIN(s->dcqcn_g, 1024)) / 1024;
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
        r->rate_cur = r->rate_tgt = dc_mbps(s->dcqcn_line_mbps);
        r->dc_timer_at = now + t;
    }
}

/* A CNP for this QP: cut the rate by alpha / 2. */
static void dc_cnp(QRoceState *s, QRoceQP *qp)
{
    QRoceRcQP *r = &qp->rc;
    int64_t now = rc_now();
    uint32_t g = MIN(s->dcqcn_g, 1024);

    qroce_count(s, QROCE_CNT_CNP_HANDLED);
    if (!s->dcqcn) {
        return;
    }
    dc_advance(s, qp, now);
    /*
     * An emulated port has no fixed speed: a QP still at the line rate
     * starts from the rate it really sent at in the last milliseconds.
     */
    if (r->rate_cur >= dc_mbps(s->dcqcn_line_mbps)) {
        if (r->meas_rate) {
            r->rate_cur = MIN(r->rate_cur, r->meas_rate);
        }
        r->alpha = 1024;        /* a flow's first cut halves it */
    }
    r->rate_tgt = r->rate_cur;
    r->rate_cur = r->rate_cur * (2048 - r->alpha) / 2048;
    r->rate_cur = MAX(r->rate_cur, dc_mbps(MAX(s->dcqcn_min_mbps, 1)));
    /*
     * The window shrinks by the same factor (as DCTCP's does): a rate
     * limit alone lags an RTT of an emulated guest by many rate periods.
     */
    if (psn_cmp(r->una_psn, r->cut_psn) >= 0) {
        /* at most once a window: the CNPs of one window are one signal */
        r->cwnd = MAX((uint64_t)r->cwnd * (2048 - r->alpha) / 2048,
                      2 * RC_CWND_ONE);
        r->ssthresh = r->cwnd;
        r->cut_psn = r->npsn;
    }
    r->alpha = (r->alpha * (1024 - g) + g * 1024) / 1024;
    r->dc_t = r->dc_bc = 0;
    r->dc_bytes = 0;
    r->dc_cnp_seen = true;
    r->dc_alpha_at = now + (int64_t)MAX(s->dcqcn_alpha_us, 1) * 1000;
    r->dc_timer_at = now + (int64_t)MAX(s->dcqcn_timer_us, 1) * 1000;
    qroce_count(s, QROCE_CNT_RATE_CUTS);
    trace_qroce_dcqcn_cut(qp->qpn, r->rate_cur / 1000000,
                          r->rate_tgt / 1000000, r->alpha);
}

/*
 * May @qp send now?  A QP below the line rate sends at most
 * RC_PACE_BURST_NS ahead of its rate; otherwise its pacing timer is
 * armed and the engine leaves it until then.
 */
static bool dc_may_send(QRoceState *s, QRoceQP *qp)
{
    QRoceRcQP *r = &qp->rc;
    int64_t now;

    if (!s->dcqcn || r->rate_cur >= dc_mbps(s->dcqcn_line_mbps)) {
        return true;
    }
    now = rc_now();
    dc_advance(s, qp, now);
    if (r->pace_at <= now + RC_PACE_BURST_NS) {
        return true;
    }
    timer_mod(r->pace_timer, r->pace_at - RC_PACE_BURST_NS);
    return false;
}

/* Account a sent frame of @bytes to the QP's rate. */
static void dc_sent(QRoceState *s, QRoceQP *qp, size_t bytes)
{
    QRoceRcQP *r = &qp->rc;
    uint64_t bc = (uint64_t)MAX(s->dcqcn_byte_kb, 1) * 1024;
    int64_t now;

    if (!s->dcqcn) {
        return;
    }
    /* the rate really sent at, measured over 1 ms periods */
    now = rc_now();
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
    if (r->rate_cur >= dc_mbps(s->dcqcn_line_mbps)) {
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

static void rc_pace_timer(void *opaque)
{
    QRoceQP *qp = opaque;

    rc_schedule(qp->rc.s, qp);
}

static void rc_cqe(QRoceState *s, QRoceQP *qp, bool sq, uint32_t idx,
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

static void rc_drop(QRoceState *s, const char *why)
{
    qroce_count(s, QROCE_CNT_ROCE_RX_DROPS);
    trace_qroce_rc_drop(why);
}

/* ------------------------------------------------------------------ */
/* Sending                                                             */
/* ------------------------------------------------------------------ */

/* Fill the address part of an outgoing packet from the QP's AV. */
static bool rc_addr(QRoceState *s, QRoceQP *qp, RocePktOut *o,
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
    o->sport = rc_sport(qp->qpn);
    o->dqpn = qp->dest_qpn;
    return true;
}

static void rc_tx(QRoceState *s, QRoceQP *qp, RocePktOut *o, uint32_t paylen)
{
    struct iovec iov;
    QRoceRcQP *r = &qp->rc;
    bool request = o->opcode != ROCE_ACK && o->opcode != ROCE_CNP &&
                   (o->opcode < ROCE_READ_RESP_FIRST ||
                    o->opcode > ROCE_ATOMIC_ACK);

    if (s->ecn) {
        o->tclass = (o->tclass & ~ROCE_ECN_MASK) | ROCE_ECN_ECT0;
    }
    iov.iov_base = s->rc->pkt;
    iov.iov_len = roce_build(s->rc->pkt, o, paylen);
    trace_qroce_rc_tx(qp->qpn, o->opcode, o->psn, paylen);
    qroce_count(s, QROCE_CNT_ROCE_TX_PKTS);
    if (request && qp->type == QROCE_QPT_RC) {
        if (psn_cmp(o->psn, r->hi_psn) < 0) {
            qroce_count(s, QROCE_CNT_ROCE_RETRANS);
        } else {
            r->hi_psn = psn_add(o->psn, 1);
        }
    }
    if (o->opcode != ROCE_CNP) {
        dc_sent(s, qp, iov.iov_len);
    }
    qroce_wire_tx(s, &iov, 1);
}

static void rc_send_ack(QRoceState *s, QRoceQP *qp, uint8_t syndrome,
                        uint32_t psn)
{
    RocePktOut o = {};
    uint8_t sgid[16];

    if (!rc_addr(s, qp, &o, sgid)) {
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
    rc_tx(s, qp, &o, 0);
}

/* Read send WQE @idx and check it; returns a QROCE_WC_* status. */
static bool rc_op_reads(uint8_t op)
{
    return op == QROCE_WR_RDMA_READ || op == QROCE_WR_ATOMIC_CMP_SWP ||
           op == QROCE_WR_ATOMIC_FETCH_ADD;
}

static int rc_read_wqe(QRoceState *s, QRoceQP *qp, uint32_t idx, RcWqe *w)
{
    uint64_t off = (uint64_t)(idx & ((1u << qp->sq.log2) - 1)) <<
                   qp->sq.wqe_shift;
    uint32_t stride = 1u << qp->sq.wqe_shift;
    uint64_t total = 0;
    uint32_t access;
    int i;

    if (qroce_bt_rw(s, &qp->sq.bt, off, &w->hdr, sizeof(w->hdr), false)) {
        return QROCE_WC_LOC_QP_OP_ERR;
    }
    w->len = 0;
    /* READ responses and atomic results are written to the SGEs */
    access = rc_op_reads(w->hdr.opcode) ? QROCE_ACCESS_LOCAL_WRITE : 0;
    if ((w->hdr.flags & QROCE_WQE_INLINE) && access) {
        return QROCE_WC_LOC_QP_OP_ERR;
    }
    if (w->hdr.flags & QROCE_WQE_INLINE) {
        uint32_t n = le32_to_cpu(w->hdr.inline_len);

        if (n > QROCE_MAX_INLINE || sizeof(w->hdr) + n > stride ||
            qroce_bt_rw(s, &qp->sq.bt, off + sizeof(w->hdr), w->inl, n,
                        false)) {
            return QROCE_WC_LOC_LEN_ERR;
        }
        w->len = n;
        return QROCE_WC_SUCCESS;
    }
    if (w->hdr.num_sge > QROCE_MAX_SGE ||
        sizeof(w->hdr) + w->hdr.num_sge * sizeof(struct qroce_sge) > stride ||
        qroce_bt_rw(s, &qp->sq.bt, off + sizeof(w->hdr), w->sge,
                    w->hdr.num_sge * sizeof(struct qroce_sge), false)) {
        return QROCE_WC_LOC_LEN_ERR;
    }
    for (i = 0; i < w->hdr.num_sge; i++) {
        QRoceMR *mr;
        int st = qroce_mr_check(s, le32_to_cpu(w->sge[i].lkey), qp->pdn,
                                le64_to_cpu(w->sge[i].addr),
                                le32_to_cpu(w->sge[i].length), access, &mr);

        if (st != QROCE_WC_SUCCESS) {
            return st;
        }
        total += le32_to_cpu(w->sge[i].length);
    }
    if (total > QROCE_DEF_MAX_MSG ||
        (w->hdr.opcode >= QROCE_WR_ATOMIC_CMP_SWP && total != 8)) {
        return QROCE_WC_LOC_LEN_ERR;
    }
    w->len = total;
    return QROCE_WC_SUCCESS;
}

/*
 * Copy bytes [off, off + n) of the WQE's SGE list to @buf, or from @buf
 * into it (@to_guest: READ responses, atomic results).
 */
static int rc_wqe_copy(QRoceState *s, QRoceQP *qp, RcWqe *w, uint32_t off,
                       uint8_t *buf, uint32_t n, bool to_guest)
{
    uint32_t access = to_guest ? QROCE_ACCESS_LOCAL_WRITE : 0;
    int i;

    if (w->hdr.flags & QROCE_WQE_INLINE) {
        if (to_guest || off > w->len || n > w->len - off) {
            return -1;
        }
        memcpy(buf, w->inl + off, n);
        return 0;
    }
    for (i = 0; i < w->hdr.num_sge && n; i++) {
        uint32_t len = le32_to_cpu(w->sge[i].length);
        uint64_t addr = le64_to_cpu(w->sge[i].addr);
        QRoceMR *mr;
        uint32_t k;

        if (off >= len) {
            off -= len;
            continue;
        }
        k = MIN(n, len - off);
        if (qroce_mr_check(s, le32_to_cpu(w->sge[i].lkey), qp->pdn,
                           addr + off, k, access, &mr) ||
            qroce_mr_rw(s, mr, addr + off, buf, k, to_guest)) {
            return -1;
        }
        buf += k;
        n -= k;
        off = 0;
    }
    return n ? -1 : 0;
}

/* Complete send WQE @idx with an error, then move the QP to ERR. */
static void rc_sq_error(QRoceState *s, QRoceQP *qp, uint32_t idx, int status)
{
    trace_qroce_rc_wqe_err(qp->qpn, idx, status);
    rc_cqe(s, qp, true, idx, QROCE_CQE_SEND, status, 0, false, 0, false);
    qp->sq.ci = idx + 1;
    qp->rc.sq_sent = qp->sq.ci;
    qp->rc.nsent = qp->rc.nsent_hi = 0;
    qp->rc.nrd = 0;
    qroce_qp_set_error(s, qp, 0);
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

/* Congestion window: grow by @n acknowledged PSNs (slow start, then AIMD). */
static void rc_cwnd_grow(QRoceQP *qp, uint32_t n)
{
    QRoceRcQP *r = &qp->rc;

    if (r->cwnd < r->ssthresh) {
        r->cwnd += n * RC_CWND_ONE;
    } else {
        r->cwnd += MAX(n * RC_CWND_ONE * RC_CWND_ONE / r->cwnd, 1);
    }
    r->cwnd = MIN(r->cwnd, RC_WINDOW * RC_CWND_ONE);
}

/* A loss: halve the window (a sequence NAK) or start over (a timeout). */
static void rc_cwnd_cut(QRoceState *s, QRoceQP *qp, bool timeout)
{
    QRoceRcQP *r = &qp->rc;

    r->ssthresh = MAX(r->cwnd / 2, 2 * RC_CWND_ONE);
    r->cwnd = timeout ? 2 * RC_CWND_ONE : r->ssthresh;
    trace_qroce_rc_cwnd(qp->qpn, r->cwnd / RC_CWND_ONE,
                        r->ssthresh / RC_CWND_ONE, timeout);
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
    if (kind != RC_KIND_PLAIN) {
        r->nrd++;
    }
    return e;
}

/* Send a READ request or an atomic: one packet, no payload. */
static void rc_send_rd_atomic(QRoceState *s, QRoceQP *qp, uint32_t idx,
                              const RcWqe *w, RocePktOut *o)
{
    QRoceRcQP *r = &qp->rc;
    uint8_t op = w->hdr.opcode;
    QRoceRcInflight *e;

    o->reth_va = le64_to_cpu(w->hdr.rdma.remote_addr);
    o->reth_rkey = le32_to_cpu(w->hdr.rdma.rkey);
    o->psn = r->npsn;
    o->ackreq = true;
    if (op == QROCE_WR_RDMA_READ) {
        o->opcode = ROCE_READ_REQ;
        o->reth_len = w->len;
        e = rc_inflight_add(qp, idx, w, QROCE_CQE_RDMA_READ, RC_KIND_READ);
        e->last_psn = psn_add(r->npsn, rc_read_pkts(qp, w->len) - 1);
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
    rc_tx(s, qp, o, 0);
}

/*
 * Send WQE @idx, checked, in the QP's copy: read from the guest at the
 * first packet of its message (@first) and never again while it is being
 * segmented.  Going back into a message already in flight (@e, after a
 * loss) reads it again, and the WQE read must still be the one recorded
 * (opcode and length): a guest that rewrote it gets an error.
 */
static int rc_fetch_wqe(QRoceState *s, QRoceQP *qp, uint32_t idx, bool first,
                        const QRoceRcInflight *e, RcWqe **out)
{
    QRoceRcQP *r = &qp->rc;
    int st;

    *out = r->txw;
    if (!first && r->txw_valid && r->txw_idx == idx) {
        return QROCE_WC_SUCCESS;
    }
    r->txw_valid = false;
    st = rc_read_wqe(s, qp, idx, r->txw);
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
           op == QROCE_WR_RDMA_WRITE || op == QROCE_WR_RDMA_WRITE_IMM;
}

/*
 * The RC opcode of the packet of a SEND or WRITE message that carries
 * @n bytes from offset @off of @len; the RETH with the first WRITE packet.
 */
static void rc_seg_opcode(const RcWqe *w, uint32_t off, uint32_t n,
                          RocePktOut *o)
{
    bool imm = w->hdr.opcode == QROCE_WR_SEND_IMM ||
               w->hdr.opcode == QROCE_WR_RDMA_WRITE_IMM;
    bool write = w->hdr.opcode == QROCE_WR_RDMA_WRITE ||
                 w->hdr.opcode == QROCE_WR_RDMA_WRITE_IMM;
    bool first = off == 0, last = off + n == w->len;

    if (first && last) {
        o->opcode = write ? (imm ? ROCE_WRITE_ONLY_IMM : ROCE_WRITE_ONLY) :
                    (imm ? ROCE_SEND_ONLY_IMM : ROCE_SEND_ONLY);
    } else if (first) {
        o->opcode = write ? ROCE_WRITE_FIRST : ROCE_SEND_FIRST;
    } else if (last) {
        o->opcode = write ? (imm ? ROCE_WRITE_LAST_IMM : ROCE_WRITE_LAST) :
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
    rc_tx(s, qp, o, 0);
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
    rc_sq_error(s, qp, idx, st);
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

    rc_seg_opcode(w, r->wqe_off, n, o);
    o->psn = r->npsn;
    payload = s->rc->pkt + roce_hdr_len(o->opcode, !roce_gid_is_v4(o->dgid));
    if (rc_wqe_copy(s, qp, w, r->wqe_off, payload, n, false)) {
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
    rc_tx(s, qp, o, n);
    return true;
}

/* Send from the SQ; returns true if it stopped for the budget. */
static bool rc_sq_process(QRoceState *s, QRoceQP *qp, int *budget)
{
    QRoceRcQP *r = &qp->rc;
    uint32_t max_rd = MAX(qp->max_rd_atomic, 1);
    RcWqe *w;

    while (qp->state == QROCE_QPS_RTS && r->sq_sent != qp->sq.pi &&
           !r->rnr_wait) {
        uint32_t idx = r->sq_sent;
        bool first = r->wqe_off == 0, resume;
        RocePktOut o = {};
        uint8_t sgid[16];
        int st;

        if (*budget <= 0) {
            return true;
        }
        if (!rc_window_open(qp, first) || !dc_may_send(s, qp)) {
            break;              /* wait for ACKs, or for the rate */
        }
        /* the rest of a READ whose first responses arrived */
        resume = first && r->nsent &&
                 r->inflight[r->inflight_head].idx == idx;
        st = rc_fetch_wqe(s, qp, idx, first && !resume,
                          first && !resume ? NULL : rc_cur_inflight(qp), &w);
        if (st == QROCE_WC_SUCCESS && !rc_op_sends(w->hdr.opcode) &&
            !rc_op_reads(w->hdr.opcode)) {
            st = QROCE_WC_LOC_QP_OP_ERR;
        }
        if (st == QROCE_WC_SUCCESS && r->wqe_off && r->wqe_off >= w->len) {
            st = QROCE_WC_LOC_QP_OP_ERR;    /* cannot happen: be sure */
        }
        if (st == QROCE_WC_SUCCESS && !rc_addr(s, qp, &o, sgid)) {
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
static bool ud_sq_process(QRoceState *s, QRoceQP *qp, int *budget);
static bool uc_sq_process(QRoceState *s, QRoceQP *qp, int *budget);

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
static void rc_timeout(QRoceState *s, QRoceQP *qp)
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
        rc_sq_error(s, qp, r->inflight[r->inflight_head].idx,
                    QROCE_WC_RETRY_EXC_ERR);
        return;
    }
    r->backoff++;
    rc_cwnd_cut(s, qp, true);
    rc_rewind(s, qp);
}

static void rc_timer(void *opaque)
{
    QRoceQP *qp = opaque;

    /* DMA and interrupts only from the guarded bottom half */
    qp->rc.timer_fired = true;
    rc_schedule(qp->rc.s, qp);
}

/* Complete every posted, unconsumed WQE of @wq with WR_FLUSH_ERR. */
static bool rc_flush_wq(QRoceState *s, QRoceQP *qp, QRoceWQ *wq, bool sq,
                        int *budget)
{
    while (wq->ci != wq->pi) {
        if (*budget <= 0) {
            return true;
        }
        (*budget)--;
        rc_cqe(s, qp, sq, wq->ci, sq ? QROCE_CQE_SEND : QROCE_CQE_RECV,
               QROCE_WC_WR_FLUSH_ERR, 0, false, 0, false);
        wq->ci++;
    }
    return false;
}

/* A QP in ERR: flush its SQ and RQ, a budget at a time. */
static bool rc_flush(QRoceState *s, QRoceQP *qp, int *budget)
{
    bool more = rc_flush_wq(s, qp, &qp->sq, true, budget);

    qp->rc.sq_sent = qp->sq.ci;
    if (!(qp->flags & QROCE_CREATE_QP_SRQ)) {
        more |= rc_flush_wq(s, qp, &qp->rq, false, budget);
    }
    return more;
}

static bool rc_process(QRoceState *s, QRoceQP *qp, int *budget)
{
    return rc_rsp_process(s, qp, budget) || rc_sq_process(s, qp, budget);
}

/* How the engine runs a QP of each type. */
typedef struct QRoceTransport {
    const char *name;
    bool (*process)(QRoceState *s, QRoceQP *qp, int *budget);
} QRoceTransport;

static const QRoceTransport rc_transports[QROCE_QPT_GSI + 1] = {
    [QROCE_QPT_RC] = { "RC", rc_process },
    [QROCE_QPT_UC] = { "UC", uc_sq_process },
    [QROCE_QPT_UD] = { "UD", ud_sq_process },
    [QROCE_QPT_GSI] = { "GSI", ud_sq_process },
};

/* Run one QP; true if it has more to do. */
static bool rc_qp_run(QRoceState *s, QRoceQP *qp, int *budget)
{
    if (qp->rc.timer_fired) {
        qp->rc.timer_fired = false;
        rc_timeout(s, qp);
    }
    if (qp->state == QROCE_QPS_ERR) {
        return rc_flush(s, qp, budget);
    }
    return rc_transports[qp->type].process(s, qp, budget);
}

/*
 * The engine: each QP queued by a doorbell, a response, a timer or a
 * flush runs in turn, with RC_BUDGET packets (or flush CQEs) a run.
 */
static void rc_bh(void *opaque)
{
    QRoceState *s = opaque;
    QRoceRc *rc = s->rc;
    int budget = RC_BUDGET;
    QRoceQP *qp, *last = QTAILQ_LAST(&rc->runq);

    /* round robin: a QP with more to do goes to the back of the queue */
    while (budget > 0 && last && (qp = QTAILQ_FIRST(&rc->runq))) {
        int quantum = MIN(budget, RC_QUANTUM), left = quantum;

        rc_unschedule(s, qp);
        if (rc_qp_run(s, qp, &left)) {
            rc_schedule(s, qp);
        }
        budget -= quantum - left;
        if (qp == last) {
            break;
        }
    }
    if (!QTAILQ_EMPTY(&rc->runq)) {
        qemu_bh_schedule(rc->bh);
    }
}

/* Retire the oldest in-flight message, with a CQE if it is signaled. */
static void rc_complete_head(QRoceState *s, QRoceQP *qp)
{
    QRoceRcQP *r = &qp->rc;
    QRoceRcInflight *e = &r->inflight[r->inflight_head];

    if (e->signaled) {
        rc_cqe(s, qp, true, e->idx, e->cqe_opcode, QROCE_WC_SUCCESS,
               e->kind == RC_KIND_ATOMIC ? 8 : e->len, false, 0, false);
    }
    if (e->kind != RC_KIND_PLAIN) {
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
static void rc_progress(QRoceQP *qp, uint32_t una)
{
    QRoceRcQP *r = &qp->rc;

    if (psn_cmp(una, r->una_psn) > 0) {
        rc_cwnd_grow(qp, psn_sub(una, r->una_psn));
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
        if (e->kind != RC_KIND_PLAIN) {
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
        rc_sq_error(s, qp, r->inflight[r->inflight_head].idx,
                    QROCE_WC_RETRY_EXC_ERR);
        return;
    }
    rc_cwnd_cut(s, qp, false);
    rc_rewind(s, qp);
    rc_arm_timer(qp);
    rc_schedule(s, qp);
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
        if (rc_read_wqe(s, qp, e->idx, r->rdw) != QROCE_WC_SUCCESS) {
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
        rc_drop(s, "response does not match the oldest request");
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
        rc_sq_error(s, qp, e->idx, QROCE_WC_BAD_RESP_ERR);
        return;
    }
    if (atomic) {
        uint8_t v[8];

        stq_le_p(v, p->atomic_orig);
        w = rc_cached_wqe(s, qp, e);
        if (p->paylen || !w || rc_wqe_copy(s, qp, w, 0, v, 8, true)) {
            rc_sq_error(s, qp, e->idx, p->paylen ? QROCE_WC_BAD_RESP_ERR :
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
            rc_sq_error(s, qp, e->idx, QROCE_WC_BAD_RESP_ERR);
            return;
        }
        w = rc_cached_wqe(s, qp, e);
        if (!w || (p->paylen &&
                   rc_wqe_copy(s, qp, w, e->resp_off, (uint8_t *)p->payload,
                               p->paylen, true))) {
            rc_sq_error(s, qp, e->idx, QROCE_WC_LOC_PROT_ERR);
            return;
        }
        e->resp_off += p->paylen;
    }
    rc_progress(qp, psn_add(p->psn, 1));
    if (last) {
        r->rdw_valid = false;
        rc_complete_head(s, qp);
        rc_arm_timer(qp);
        rc_schedule(s, qp);     /* room for more READs and atomics */
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

    while (psn_cmp(acked, r->npsn) >= 0) {
        QRoceRcInflight *e;

        if (r->wqe_off) {
            e = rc_cur_inflight(qp);        /* the message being resent */
        } else if (r->nsent < r->nsent_hi) {
            e = &r->inflight[(r->inflight_head + r->nsent) % depth];
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
static void rc_requester_rx(QRoceState *s, QRoceQP *qp, RocePktIn *p)
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
    rc_progress(qp, psn_add(acked, 1));
    switch (ROCE_AETH_TYPE(syn)) {
    case 0:
        break;
    case 1:                                     /* RNR NAK */
        if (qp->rnr_retry != 7 && r->rnr_left-- <= 0 && r->nsent) {
            rc_sq_error(s, qp, r->inflight[r->inflight_head].idx,
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
            rc_sq_error(s, qp, r->inflight[r->inflight_head].idx,
                        syn == ROCE_AETH_NAK_INV ? QROCE_WC_REM_INV_REQ_ERR :
                        syn == ROCE_AETH_NAK_ACCESS ? QROCE_WC_REM_ACCESS_ERR :
                        QROCE_WC_REM_OP_ERR);
        }
        return;
    default:
        return;
    }
    rc_arm_timer(qp);
    rc_schedule(s, qp);
}

/* ------------------------------------------------------------------ */
/* Responder                                                           */
/* ------------------------------------------------------------------ */

/* Does RC/UC SEND or WRITE opcode @op (low 5 bits) start / end a message? */
static bool rc_op_first(uint8_t op)
{
    return op == ROCE_SEND_FIRST || op == ROCE_SEND_ONLY ||
           op == ROCE_SEND_ONLY_IMM || op == ROCE_WRITE_FIRST ||
           op == ROCE_WRITE_ONLY || op == ROCE_WRITE_ONLY_IMM;
}

static bool rc_op_last(uint8_t op)
{
    return op == ROCE_SEND_LAST || op == ROCE_SEND_LAST_IMM ||
           op == ROCE_SEND_ONLY || op == ROCE_SEND_ONLY_IMM ||
           op == ROCE_WRITE_LAST || op == ROCE_WRITE_LAST_IMM ||
           op == ROCE_WRITE_ONLY || op == ROCE_WRITE_ONLY_IMM;
}

/* Scatter @n bytes at offset @off of the current RECV WQE. */
static int rc_scatter(QRoceState *s, QRoceQP *qp, uint32_t off,
                      const uint8_t *src, uint32_t n)
{
    QRoceSRQ *srq;
    QRoceWQ *wq = qroce_qp_recv_wq(s, qp, &srq);
    /* an SRQ's WQEs name MRs of the SRQ's PD */
    uint32_t pdn = srq ? srq->pdn : qp->pdn;
    uint64_t base = (uint64_t)(wq->ci & ((1u << wq->log2) - 1)) <<
                    wq->wqe_shift;
    struct qroce_recv_wqe h;
    struct qroce_sge sge[QROCE_MAX_SGE];
    int i;

    if (qroce_bt_rw(s, &wq->bt, base, &h, sizeof(h), false) ||
        h.num_sge > QROCE_MAX_SGE ||
        sizeof(h) + h.num_sge * sizeof(sge[0]) > (1u << wq->wqe_shift) ||
        qroce_bt_rw(s, &wq->bt, base + sizeof(h), sge,
                    h.num_sge * sizeof(sge[0]), false)) {
        return QROCE_WC_LOC_QP_OP_ERR;
    }
    for (i = 0; i < h.num_sge && n; i++) {
        uint32_t len = le32_to_cpu(sge[i].length);
        uint64_t addr = le64_to_cpu(sge[i].addr);
        QRoceMR *mr;
        uint32_t k;
        int st;

        if (off >= len) {
            off -= len;
            continue;
        }
        k = MIN(n, len - off);
        st = qroce_mr_check(s, le32_to_cpu(sge[i].lkey), pdn, addr + off,
                            k, QROCE_ACCESS_LOCAL_WRITE, &mr);
        if (st) {
            return st;
        }
        if (qroce_mr_rw(s, mr, addr + off, (void *)src, k, true)) {
            return QROCE_WC_LOC_PROT_ERR;
        }
        src += k;
        n -= k;
        off = 0;
    }
    return n ? QROCE_WC_LOC_LEN_ERR : QROCE_WC_SUCCESS;
}

/* No RECV WQE posted on the QP's RQ or SRQ. */
static bool rc_recv_empty(QRoceState *s, QRoceQP *qp)
{
    QRoceWQ *wq = qroce_qp_recv_wq(s, qp, NULL);

    return wq->ci == wq->pi;
}

/*
 * Write the CQE of the current RECV WQE (@cqe without its index) and
 * consume the WQE, from the RQ or the SRQ (whose limit event may be due).
 */
static void rc_recv_complete(QRoceState *s, QRoceQP *qp,
                             struct qroce_cqe *cqe, bool solicited)
{
    QRoceSRQ *srq;
    QRoceWQ *wq = qroce_qp_recv_wq(s, qp, &srq);
    QRoceCQ *cq = qroce_cq_get(s, qp->rcqn);

    cqe->wqe_index = cpu_to_le32(wq->ci);
    cqe->qpn = cpu_to_le32(qp->qpn);
    if (srq) {
        cqe->flags |= QROCE_CQE_F_SRQ;
    }
    wq->ci++;
    if (cq) {
        qroce_cq_post(s, cq, cqe, solicited);
    }
    if (srq) {
        qroce_srq_consumed(s, srq);
    }
}

/* The same for an RC RECV: opcode, status, length, immediate. */
static void rc_recv_cqe(QRoceState *s, QRoceQP *qp, uint8_t opcode,
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
    rc_recv_complete(s, qp, &cqe, solicited);
}

/*
 * The last packet of a SEND or WRITE message is in: a SEND or a WRITE with
 * immediate completes its RECV WQE.
 */
static void rc_msg_received(QRoceState *s, QRoceQP *qp, RocePktIn *p,
                            bool write)
{
    if (!write || p->has_imm) {
        rc_recv_cqe(s, qp, write ? QROCE_CQE_RECV_RDMA_IMM : QROCE_CQE_RECV,
                    QROCE_WC_SUCCESS, qp->rc.recv_off, p->has_imm, p->imm,
                    p->se);
    }
    qp->rc.in_msg = false;
}

/* ------------------------------------------------------------------ */
/* UD and GSI                                                          */
/* ------------------------------------------------------------------ */

#define UD_GSI_QKEY     0x80010000u
#define UD_MAD_SIZE     256     /* the largest payload QP1 accepts */

/*
 * The largest UD message: the IB MTU that fits the Ethernet MTU with the
 * largest RoCEv2 headers, as the driver reports the port's active MTU.
 */
static uint32_t ud_mtu(QRoceState *s)
{
    uint32_t room = s->eth_mtu > 100 ? s->eth_mtu - 100 : 0;
    uint32_t mtu;

    for (mtu = 4096; mtu > 256 && mtu > room; mtu >>= 1) {
        /* next smaller IB MTU */
    }
    return mtu;
}

/*
 * Send from a UD or GSI SQ: every WQE is one packet, completed as soon as
 * it is on the wire.  Returns true if it stopped for the budget.
 */
static bool ud_sq_process(QRoceState *s, QRoceQP *qp, int *budget)
{
    QRoceRcQP *r = &qp->rc;
    RcWqe w;

    while (qp->state == QROCE_QPS_RTS && qp->sq.ci != qp->sq.pi) {
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
        st = rc_read_wqe(s, qp, idx, &w);
        if (st == QROCE_WC_SUCCESS && w.hdr.opcode != QROCE_WR_SEND &&
            w.hdr.opcode != QROCE_WR_SEND_IMM) {
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
            rc_sq_error(s, qp, idx, st);
            return false;
        }
        trace_qroce_rc_wqe(qp->qpn, idx, w.hdr.opcode, w.len);
        imm = w.hdr.opcode == QROCE_WR_SEND_IMM;
        o.opcode = imm ? ROCE_UD_SEND_ONLY_IMM : ROCE_UD_SEND_ONLY;
        o.dmac = ah->av.dmac;
        o.smac = qroce_mac(s);
        o.sgid = sgid;
        o.dgid = ah->av.dgid;
        o.tclass = ah->av.traffic_class;
        o.hop_limit = ah->av.hop_limit ? ah->av.hop_limit : 64;
        o.flow_label = ah->av.flow_label;
        o.sport = rc_sport(qp->qpn);
        o.dqpn = le32_to_cpu(w.hdr.ud.remote_qpn) & 0xffffff;
        o.psn = r->npsn;
        o.se = w.hdr.flags & QROCE_WQE_SOLICITED;
        o.imm = ldl_be_p(&w.hdr.imm_data);
        /* a Q_Key with the high bit set means "the QP's own" (ib_mad) */
        qkey = le32_to_cpu(w.hdr.ud.remote_qkey);
        o.deth_qkey = qkey & 0x80000000u ? qp->qkey : qkey;
        o.deth_sqp = qp->qpn;
        payload = s->rc->pkt + roce_hdr_len(o.opcode, !roce_gid_is_v4(o.dgid));
        if (rc_wqe_copy(s, qp, &w, 0, payload, w.len, false)) {
            rc_sq_error(s, qp, idx, QROCE_WC_LOC_PROT_ERR);
            return false;
        }
        r->npsn = psn_add(r->npsn, 1);
        rc_tx(s, qp, &o, w.len);
        if ((w.hdr.flags & QROCE_WQE_SIGNALED) ||
            (qp->flags & QROCE_CREATE_QP_SIG_ALL)) {
            rc_cqe(s, qp, true, idx, QROCE_CQE_SEND, QROCE_WC_SUCCESS, w.len,
                   false, 0, false);
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
static void ud_rx(QRoceState *s, QRoceQP *qp, RocePktIn *p)
{
    uint8_t grh[40];
    struct qroce_cqe cqe = {};
    int st;

    if (qp->state < QROCE_QPS_RTR || qp->state == QROCE_QPS_ERR) {
        rc_drop(s, "UD packet to a QP not ready");
        return;
    }
    if (p->deth_qkey != qp->qkey ||
        (qp->type == QROCE_QPT_GSI && p->deth_qkey != UD_GSI_QKEY)) {
        rc_drop(s, "Q_Key mismatch");
        return;
    }
    if (p->paylen > ud_mtu(s) ||
        (qp->type == QROCE_QPT_GSI && p->paylen > UD_MAD_SIZE)) {
        rc_drop(s, "UD packet longer than the MTU");
        return;
    }
    if (rc_recv_empty(s, qp)) {
        rc_drop(s, "no RECV WQE for a UD packet");
        return;
    }
    if (p->ipv6) {
        memcpy(grh, p->l3, sizeof(grh));
    } else {
        memset(grh, 0, 20);
        memcpy(grh + 20, p->l3, 20);
    }
    st = rc_scatter(s, qp, 0, grh, sizeof(grh));
    if (st == QROCE_WC_SUCCESS) {
        st = rc_scatter(s, qp, sizeof(grh), p->payload, p->paylen);
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
    rc_recv_complete(s, qp, &cqe, p->se);
    if (st != QROCE_WC_SUCCESS) {
        /* a receive that failed puts the QP in the error state */
        qroce_qp_set_error(s, qp, QROCE_EQE_QP_FATAL);
    }
}

/* ------------------------------------------------------------------ */
/* UC                                                                  */
/* ------------------------------------------------------------------ */

/*
 * Send from a UC SQ: SENDs and RDMA WRITEs segmented at the path MTU like
 * RC, with UC opcodes, no AckReq and nothing kept for retransmission: a
 * WQE completes when its last packet is on the wire.  Returns true if it
 * stopped for the budget.
 */
static bool uc_sq_process(QRoceState *s, QRoceQP *qp, int *budget)
{
    QRoceRcQP *r = &qp->rc;
    QRoceRc *rc = s->rc;
    uint32_t mtu = rc_mtu(qp);
    RcWqe *w;

    while (qp->state == QROCE_QPS_RTS && qp->sq.ci != qp->sq.pi) {
        uint32_t idx = qp->sq.ci, n;
        bool write, first = r->wqe_off == 0;
        RocePktOut o = {};
        uint8_t sgid[16];
        uint8_t *payload;
        int st;

        if (*budget <= 0) {
            return true;
        }
        if (!dc_may_send(s, qp)) {
            break;              /* paced: the timer runs it again */
        }
        st = rc_fetch_wqe(s, qp, idx, first, NULL, &w);
        if (st == QROCE_WC_SUCCESS && w->hdr.opcode != QROCE_WR_SEND &&
            w->hdr.opcode != QROCE_WR_SEND_IMM &&
            w->hdr.opcode != QROCE_WR_RDMA_WRITE &&
            w->hdr.opcode != QROCE_WR_RDMA_WRITE_IMM) {
            st = QROCE_WC_LOC_QP_OP_ERR;    /* no READ or atomics on UC */
        }
        if (st == QROCE_WC_SUCCESS && !rc_addr(s, qp, &o, sgid)) {
            st = QROCE_WC_LOC_QP_OP_ERR;
        }
        if (st != QROCE_WC_SUCCESS) {
            r->wqe_off = 0;
            rc_sq_error(s, qp, idx, st);
            return false;
        }
        if (first) {
            trace_qroce_rc_wqe(qp->qpn, idx, w->hdr.opcode, w->len);
        }
        write = w->hdr.opcode == QROCE_WR_RDMA_WRITE ||
                w->hdr.opcode == QROCE_WR_RDMA_WRITE_IMM;
        n = MIN(mtu, w->len - r->wqe_off);
        rc_seg_opcode(w, r->wqe_off, n, &o);
        o.opcode |= ROCE_UC;
        o.psn = r->npsn;
        payload = rc->pkt + roce_hdr_len(o.opcode, !roce_gid_is_v4(o.dgid));
        if (rc_wqe_copy(s, qp, w, r->wqe_off, payload, n, false)) {
            /* a message cut short: the responder drops what it got */
            r->wqe_off = 0;
            rc_sq_error(s, qp, idx, QROCE_WC_LOC_PROT_ERR);
            return false;
        }
        r->wqe_off += n;
        if (r->wqe_off == w->len) {
            o.se = w->hdr.flags & QROCE_WQE_SOLICITED;
            r->wqe_off = 0;
        }
        r->npsn = psn_add(r->npsn, 1);
        rc_tx(s, qp, &o, n);
        (*budget)--;
        if (!r->wqe_off) {
            if ((w->hdr.flags & QROCE_WQE_SIGNALED) ||
                (qp->flags & QROCE_CREATE_QP_SIG_ALL)) {
                rc_cqe(s, qp, true, idx, write ? QROCE_CQE_RDMA_WRITE :
                       QROCE_CQE_SEND, QROCE_WC_SUCCESS, w->len, false, 0,
                       false);
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
static void uc_rx(QRoceState *s, QRoceQP *qp, RocePktIn *p)
{
    QRoceRcQP *r = &qp->rc;
    uint8_t op = p->opcode & 0x1f;
    bool write = op >= ROCE_WRITE_FIRST && op <= ROCE_WRITE_ONLY_IMM;
    bool first = rc_op_first(op), last = rc_op_last(op);
    bool needs_wqe = !write || p->has_imm;
    QRoceMR *mr;
    int st;

    if (p->psn != r->epsn || first) {
        /* a new message, or a gap: whatever was in progress is lost */
        r->in_msg = false;
        r->epsn = p->psn;
    }
    r->epsn = psn_add(r->epsn, 1);
    if (first != !r->in_msg || (!first && write != r->in_write) ||
        (!last && p->paylen != rc_mtu(qp)) || p->paylen > rc_mtu(qp)) {
        r->in_msg = false;
        rc_drop(s, "UC packet outside a message, or malformed");
        return;
    }
    if (first) {
        if ((write && !(qp->access_flags & QROCE_ACCESS_REMOTE_WRITE)) ||
            (!write && rc_recv_empty(s, qp)) ||
            (write && (p->reth_len > QROCE_DEF_MAX_MSG ||
                       (last && p->paylen != p->reth_len) ||
                       (!last && p->reth_len <= p->paylen) ||
                       qroce_mr_check(s, p->reth_rkey, qp->pdn, p->reth_va,
                                      p->reth_len, QROCE_ACCESS_REMOTE_WRITE,
                                      &mr)))) {
            rc_drop(s, "UC message refused (access, key or no RECV WQE)");
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
        (last && needs_wqe && rc_recv_empty(s, qp))) {
        r->in_msg = false;
        rc_drop(s, "UC WRITE length mismatch or no RECV WQE for its immediate");
        return;
    }
    if (write) {
        if (p->paylen &&
            (qroce_mr_check(s, r->wr_rkey, qp->pdn, r->wr_va + r->recv_off,
                            p->paylen, QROCE_ACCESS_REMOTE_WRITE, &mr) ||
             qroce_mr_rw(s, mr, r->wr_va + r->recv_off, (void *)p->payload,
                         p->paylen, true))) {
            r->in_msg = false;
            rc_drop(s, "UC WRITE outside the MR");
            return;
        }
    } else {
        st = rc_scatter(s, qp, r->recv_off, p->payload, p->paylen);
        if (st != QROCE_WC_SUCCESS) {
            /* the RECV WQE is too small or bad: it completes in error */
            rc_recv_cqe(s, qp, QROCE_CQE_RECV, st, r->recv_off, false, 0,
                        false);
            r->in_msg = false;
            qroce_qp_set_error(s, qp, QROCE_EQE_QP_FATAL);
            return;
        }
    }
    r->recv_off += p->paylen;
    if (last) {
        rc_msg_received(s, qp, p, write);
        r->in_msg = false;
    }
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
        if (!rc_addr(s, qp, &o, sgid)) {
            break;
        }
        o.opcode = ROCE_ATOMIC_ACK;
        o.psn = e->psn;
        o.aeth_syndrome = ROCE_AETH_ACK_NO_CREDIT;
        o.aeth_msn = r->msn & 0xffffff;
        o.atomic_orig = e->orig;
        rc_tx(s, qp, &o, 0);
        e->off = e->len = 0;
        return true;
    case RC_RSP_READ:
        if (!rc_addr(s, qp, &o, sgid)) {
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
            if (qroce_mr_check(s, e->rkey, qp->pdn, e->va + e->off, n,
                               QROCE_ACCESS_REMOTE_READ, &mr) ||
                qroce_mr_rw(s, mr, e->va + e->off, payload, n, false)) {
                rc_resp_fatal(s, qp, ROCE_AETH_NAK_ACCESS, e->psn,
                              QROCE_EQE_QP_ACCESS_ERR);
                return false;
            }
        }
        rc_tx(s, qp, &o, n);
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
        if (e->kind == RC_RSP_READ && !dc_may_send(s, qp)) {
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
        rc_drop(s, "response queue full");  /* the requester retries */
        return;
    }
    r->rspq[(r->rsp_head + r->rsp_count) % QROCE_RC_RSPQ] = *e;
    r->rsp_count++;
    if (r->rsp_count == 1 && !rc_rsp_process(s, qp, &budget)) {
        return;
    }
    rc_schedule(s, qp);
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
            rc_drop(s, "duplicate atomic without a recorded result");
            return true;
        }
        /* a READ asked again is read again, if it still may be */
        if (!(qp->access_flags & need) || p->paylen ||
            p->reth_len > QROCE_DEF_MAX_MSG ||
            psn_cmp(psn_add(p->psn, rc_read_pkts(qp, p->reth_len)),
                    r->epsn) > 0 ||
            (p->reth_len && qroce_mr_check(s, p->reth_rkey, qp->pdn,
                                           p->reth_va, p->reth_len, need,
                                           &mr))) {
            rc_drop(s, "duplicate READ out of range");
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
    if (e.len && qroce_mr_check(s, p->reth_rkey, qp->pdn, p->reth_va,
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

static void rc_responder_rx(QRoceState *s, QRoceQP *qp, RocePktIn *p)
{
    QRoceRcQP *r = &qp->rc;
    uint8_t op = p->opcode;
    bool rd_atomic = op == ROCE_READ_REQ || op == ROCE_CMP_SWAP ||
                     op == ROCE_FETCH_ADD;
    bool write = op >= ROCE_WRITE_FIRST && op <= ROCE_WRITE_ONLY_IMM;
    bool first = rc_op_first(op), last = rc_op_last(op);
    bool needs_wqe = !write || p->has_imm;
    int st;

    if (p->psn != r->epsn) {
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
        return;
    }
    r->nak_sent = false;
    if (rd_atomic) {
        if (r->in_msg) {
            rc_resp_fatal(s, qp, ROCE_AETH_NAK_INV, p->psn,
                          QROCE_EQE_QP_REQ_ERR);
            return;
        }
        rc_rd_atomic_rx(s, qp, p, false);
        return;
    }
    if (op > ROCE_WRITE_ONLY_IMM ||
        (write && !(qp->access_flags & QROCE_ACCESS_REMOTE_WRITE))) {
        /* not a request opcode; WRITE needs the access */
        rc_resp_fatal(s, qp, ROCE_AETH_NAK_INV, p->psn, QROCE_EQE_QP_REQ_ERR);
        return;
    }
    if (first == r->in_msg || (!first && write != r->in_write) ||
        (!last && p->paylen != rc_mtu(qp)) || p->paylen > rc_mtu(qp)) {
        rc_resp_fatal(s, qp, ROCE_AETH_NAK_INV, p->psn, QROCE_EQE_QP_REQ_ERR);
        return;
    }
    if (first && write) {
        QRoceMR *mr;

        if (p->reth_len > QROCE_DEF_MAX_MSG ||
            (last && p->paylen != p->reth_len) ||
            (!last && p->reth_len <= p->paylen)) {
            rc_resp_fatal(s, qp, ROCE_AETH_NAK_INV, p->psn,
                          QROCE_EQE_QP_REQ_ERR);
            return;
        }
        if (qroce_mr_check(s, p->reth_rkey, qp->pdn, p->reth_va, p->reth_len,
                           QROCE_ACCESS_REMOTE_WRITE, &mr)) {
            rc_resp_fatal(s, qp, ROCE_AETH_NAK_ACCESS, p->psn,
                          QROCE_EQE_QP_ACCESS_ERR);
            return;
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
        return;
    }
    if (((first && !write) || (last && needs_wqe)) &&
        rc_recv_empty(s, qp)) {
        rc_push_ack(s, qp, ROCE_AETH_RNR | qp->min_rnr_timer, p->psn);
        return;
    }
    if (first) {
        r->recv_off = 0;
        r->in_msg = true;
        r->in_write = write;
    }
    if (write) {
        QRoceMR *mr;

        st = QROCE_WC_SUCCESS;
        if (p->paylen &&
            (qroce_mr_check(s, r->wr_rkey, qp->pdn, r->wr_va + r->recv_off,
                            p->paylen, QROCE_ACCESS_REMOTE_WRITE, &mr) ||
             qroce_mr_rw(s, mr, r->wr_va + r->recv_off, (void *)p->payload,
                         p->paylen, true))) {
            rc_resp_fatal(s, qp, ROCE_AETH_NAK_ACCESS, p->psn,
                          QROCE_EQE_QP_ACCESS_ERR);
            return;
        }
    } else {
        st = rc_scatter(s, qp, r->recv_off, p->payload, p->paylen);
    }
    if (st != QROCE_WC_SUCCESS) {
        rc_recv_cqe(s, qp, QROCE_CQE_RECV, st, r->recv_off, false, 0, false);
        rc_resp_fatal(s, qp, st == QROCE_WC_LOC_LEN_ERR ? ROCE_AETH_NAK_INV :
                      ROCE_AETH_NAK_OP, p->psn, QROCE_EQE_QP_FATAL);
        return;
    }
    r->recv_off += p->paylen;
    r->epsn = psn_add(r->epsn, 1);
    if (last) {
        rc_msg_received(s, qp, p, write);
        r->msn++;
        r->in_msg = false;
    }
    if (p->ackreq) {
        rc_push_ack(s, qp, ROCE_AETH_ACK_NO_CREDIT, p->psn);
    }
}

/* ------------------------------------------------------------------ */
/* Congestion: the congestion and notification points                  */
/* ------------------------------------------------------------------ */

static void rc_burst_bh(void *opaque)
{
    QRoceState *s = opaque;

    s->rc->rx_burst = 0;
}

/*
 * Congestion point: a frame that arrives while more than ecn-threshold
 * RoCE frames came in since the engine last ran (the receive backlog of
 * the port) is marked CE, as a switch marks when its queue towards this
 * port is long.  Only ECN-capable frames are marked.
 */
static bool rc_congested(QRoceState *s, RocePktIn *p, bool wire)
{
    QRoceRc *rc = s->rc;

    if (!wire) {
        return p->ecn == ROCE_ECN_CE;   /* loopback: no port queue */
    }
    if (rc->rx_burst++ == 0) {
        qemu_bh_schedule(rc->burst_bh);
    }
    if (p->ecn == ROCE_ECN_CE) {
        return true;                    /* marked on the way */
    }
    if (p->ecn != ROCE_ECN_NOT_ECT && s->ecn_threshold &&
        rc->rx_burst > s->ecn_threshold) {
        qroce_count(s, QROCE_CNT_ECN_MARKED);
        trace_qroce_ecn_mark(p->dqpn, p->psn, rc->rx_burst);
        return true;
    }
    return false;
}

/*
 * Notification point: a CE-marked request or READ response on @qp sends
 * a CNP to the QP at the other end, at most one per cnp-interval-us.
 */
static void rc_notify(QRoceState *s, QRoceQP *qp)
{
    QRoceRcQP *r = &qp->rc;
    int64_t now = rc_now();
    RocePktOut o = {};
    uint8_t sgid[16];

    if (now < r->cnp_at || !rc_addr(s, qp, &o, sgid)) {
        return;
    }
    r->cnp_at = now + (int64_t)s->cnp_interval_us * 1000;
    o.opcode = ROCE_CNP;
    o.psn = 0;
    qroce_count(s, QROCE_CNT_CNP_SENT);
    trace_qroce_cnp_tx(qp->qpn, qp->dest_qpn);
    rc_tx(s, qp, &o, 0);
}

/* Checks common to every RoCE packet: false if it is dropped. */
static bool rc_rx_check(QRoceState *s, int ret, RocePktIn *p)
{
    if (ret < 0) {
        rc_drop(s, ret == ROCE_ERR_CSUM ? "bad IPv4 header checksum" :
                "malformed");
        return false;
    }
    if (!p->icrc_ok) {
        qroce_count(s, QROCE_CNT_ROCE_ICRC_ERRS);
        rc_drop(s, "bad ICRC");
        return false;
    }
    if (p->tver || p->pkey != 0xffff) {
        rc_drop(s, "TVer or P_Key");
        return false;
    }
    return true;
}

/* The QP's AV names the packet's addresses (RC and UC). */
static bool rc_rx_addr_ok(QRoceState *s, QRoceQP *qp, RocePktIn *p)
{
    uint8_t sgid[16];

    return !memcmp(p->sgid, qp->av.dgid, 16) &&
           qroce_gid_get(s, qp->av.sgid_index, sgid) &&
           !memcmp(p->dgid, sgid, 16);
}

bool qroce_rc_rx(QRoceState *s, const uint8_t *frame, size_t len, bool wire)
{
    RocePktIn p;
    QRoceQP *qp;
    bool ce;
    int ret = roce_parse(frame, len, &p);

    if (ret == ROCE_NOT_ROCE) {
        return false;
    }
    if (memcmp(frame, qroce_mac(s), 6) || qroce_gid_find(s, p.dgid) < 0) {
        return false;       /* not for us: a plain Ethernet or UDP frame */
    }
    qroce_count(s, QROCE_CNT_ROCE_RX_PKTS);
    if (!rc_rx_check(s, ret, &p)) {
        return true;
    }
    qp = qroce_qp_get(s, p.dqpn);
    if (!qp) {
        rc_drop(s, "no such QP");
        return true;
    }
    ce = rc_congested(s, &p, wire);
    if ((p.opcode >> 5) == 3 &&
        (qp->type == QROCE_QPT_UD || qp->type == QROCE_QPT_GSI)) {
        trace_qroce_rc_rx(qp->qpn, p.opcode, p.psn, p.paylen);
        ud_rx(s, qp, &p);
        return true;
    }
    if ((p.opcode != ROCE_CNP &&
         (p.opcode >> 5) != (qp->type == QROCE_QPT_UC ? 1 : 0)) ||
        (qp->type != QROCE_QPT_RC && qp->type != QROCE_QPT_UC)) {
        rc_drop(s, "no such RC or UC QP");
        return true;
    }
    if (!rc_rx_addr_ok(s, qp, &p)) {
        rc_drop(s, "addresses differ from the QP's AV");
        return true;
    }
    trace_qroce_rc_rx(qp->qpn, p.opcode, p.psn, p.paylen);
    if (p.opcode == ROCE_CNP) {
        trace_qroce_cnp_rx(qp->qpn);
        dc_cnp(s, qp);
        return true;
    }
    if (ce && p.opcode != ROCE_ACK && p.opcode != ROCE_ATOMIC_ACK &&
        qp->state >= QROCE_QPS_RTR && qp->state != QROCE_QPS_ERR) {
        rc_notify(s, qp);
    }
    if (p.opcode >= ROCE_READ_RESP_FIRST && p.opcode <= ROCE_ATOMIC_ACK) {
        if (qp->state != QROCE_QPS_RTS && qp->state != QROCE_QPS_SQD) {
            rc_drop(s, "response to a QP not in RTS");
            return true;
        }
        rc_requester_rx(s, qp, &p);
        return true;
    }
    if (qp->state < QROCE_QPS_RTR || qp->state == QROCE_QPS_ERR) {
        rc_drop(s, "request to a QP not ready");
        return true;
    }
    if (qp->type == QROCE_QPT_UC) {
        uc_rx(s, qp, &p);
        return true;
    }
    rc_responder_rx(s, qp, &p);
    return true;
}

/* ------------------------------------------------------------------ */
/* QP lifecycle                                                        */
/* ------------------------------------------------------------------ */

static void rc_reset_qp(QRoceState *s, QRoceQP *qp)
{
    QRoceRcQP *r = &qp->rc;

    timer_del(r->timer);
    timer_del(r->pace_timer);
    r->timer_fired = false;
    r->npsn = r->una_psn = r->hi_psn = qp->sq_psn;
    r->wqe_off = 0;
    r->sq_sent = qp->sq.ci;
    r->nsent = r->nsent_hi = 0;
    r->inflight_head = 0;
    r->retry_left = qp->retry_cnt;
    r->rnr_left = qp->rnr_retry;
    r->rnr_wait = false;
    r->resync = false;
    r->txw_valid = r->rdw_valid = false;
    r->cwnd = RC_CWND_INIT * RC_CWND_ONE;
    r->ssthresh = RC_WINDOW * RC_CWND_ONE;
    r->cut_psn = qp->sq_psn;
    r->backoff = 0;
    dc_reset(s, qp);
    r->cnp_at = 0;
    r->epsn = qp->rq_psn;
    r->msn = 0;
    r->recv_off = 0;
    r->in_msg = false;
    r->nak_sent = false;
    r->nrd = 0;
    r->rsp_head = r->rsp_count = 0;
    memset(r->ahist, 0, sizeof(r->ahist));
    r->ahist_next = 0;
}

void qroce_rc_qp_create(QRoceState *s, QRoceQP *qp)
{
    qp->rc.s = s;
    qp->rc.timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, rc_timer, qp);
    qp->rc.pace_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, rc_pace_timer, qp);
    qp->rc.inflight = g_new0(QRoceRcInflight, 1u << qp->sq.log2);
    qp->rc.txw = g_new0(RcWqe, 1);
    qp->rc.rdw = g_new0(RcWqe, 1);
    rc_reset_qp(s, qp);
}

void qroce_rc_qp_modify(QRoceState *s, QRoceQP *qp, uint32_t old_state,
                        uint32_t attr_mask)
{
    QRoceRcQP *r = &qp->rc;

    if (qp->state == QROCE_QPS_ERR) {
        timer_del(r->timer);
        timer_del(r->pace_timer);
        r->timer_fired = false;
        r->nsent = r->nsent_hi = 0;
        r->nrd = 0;
        r->rsp_count = 0;
        r->rnr_wait = false;
        r->txw_valid = r->rdw_valid = false;
        r->sq_sent = qp->sq.ci;
        r->wqe_off = 0;
        if ((qp->flags & QROCE_CREATE_QP_SRQ) && old_state != QROCE_QPS_ERR) {
            /* the SRQ's WQEs stay; the QP will take no more of them */
            qroce_async_event(s, QROCE_EQE_QP_LAST_WQE, qp->qpn, 0);
        }
        rc_schedule(s, qp);     /* the engine flushes the WQs */
        return;
    }
    if (qp->state == QROCE_QPS_RESET) {
        qp->sq.pi = qp->sq.ci = 0;
        qp->rq.pi = qp->rq.ci = 0;
        rc_reset_qp(s, qp);
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
        rc_schedule(s, qp);
    }
}

void qroce_rc_qp_destroy(QRoceState *s, QRoceQP *qp)
{
    rc_unschedule(s, qp);
    if (qp->rc.timer) {
        timer_free(qp->rc.timer);
        qp->rc.timer = NULL;
    }
    if (qp->rc.pace_timer) {
        timer_free(qp->rc.pace_timer);
        qp->rc.pace_timer = NULL;
    }
    g_free(qp->rc.inflight);
    g_free(qp->rc.txw);
    g_free(qp->rc.rdw);
    qp->rc.inflight = NULL;
    qp->rc.txw = qp->rc.rdw = NULL;
}

/*
 * Doorbells only record: the engine sends, or flushes a QP in ERR, from
 * its bottom half with a budget.
 */
void qroce_rc_sq_doorbell(QRoceState *s, QRoceQP *qp)
{
    rc_schedule(s, qp);
}

void qroce_rc_rq_doorbell(QRoceState *s, QRoceQP *qp)
{
    if (qp->state == QROCE_QPS_ERR) {
        rc_schedule(s, qp);
    }
}

void qroce_rc_init(QRoceState *s)
{
    QRoceRc *rc = g_new0(QRoceRc, 1);

    QTAILQ_INIT(&rc->runq);
    rc->pkt = g_malloc(QROCE_ETH_MAX_FRAME + 64);
    rc->bh = qemu_bh_new_guarded(rc_bh, s,
                                 &DEVICE(s)->mem_reentrancy_guard);
    rc->burst_bh = qemu_bh_new_guarded(rc_burst_bh, s,
                                       &DEVICE(s)->mem_reentrancy_guard);
    s->rc = rc;
}

void qroce_rc_reset(QRoceState *s)
{
    QRoceQP *qp, *next;

    QTAILQ_FOREACH_SAFE(qp, &s->rc->runq, rc.runq_link, next) {
        rc_unschedule(s, qp);
    }
    s->rc->rx_burst = 0;
}

void qroce_rc_fini(QRoceState *s)
{
    qemu_bh_delete(s->rc->bh);
    qemu_bh_delete(s->rc->burst_bh);
    g_free(s->rc->pkt);
    g_free(s->rc);
    s->rc = NULL;
}
