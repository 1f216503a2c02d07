/*
 * qroce: RoCEv2 transport engine interface.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef HW_NET_QROCE_RC_H
#define HW_NET_QROCE_RC_H

#include "qemu/queue.h"

typedef struct QRoceState QRoceState;
typedef struct QRoceQP QRoceQP;
struct RcWqe;

/*
 * The responder's output, in PSN order: READ responses still to stream,
 * atomic ACKs and ACK/NAKs that must not overtake them.  Sized for
 * QROCE_DEF_MAX_RD_ATOM reads/atomics, an ACK after each and spare NAKs.
 */
#define QROCE_RC_RSPQ   40

typedef struct QRoceRcRsp {
    uint8_t kind;           /* RC_RSP_* in qroce_rc.c */
    uint8_t syndrome;       /* ACK/NAK: AETH syndrome */
    uint32_t first_psn;     /* PSN of the request */
    uint32_t psn;           /* next PSN to send */
    uint64_t va;            /* READ: remote address of byte 0 */
    uint32_t rkey, len, off;    /* READ: length, bytes already sent */
    uint64_t orig;          /* ATOMIC: value before the operation */
} QRoceRcRsp;

/* Executed atomics, so that a duplicate gets the same answer. */
typedef struct QRoceRcAtomicHist {
    bool valid;
    uint32_t psn;
    uint64_t orig;
} QRoceRcAtomicHist;

/* Per-QP transport state. */
typedef struct QRoceRcQP {
    /* scheduling */
    QTAILQ_ENTRY(QRoceQP) runq_link;
    bool on_runq;           /* queued on the engine's run queue */
    bool timer_fired;       /* the retry/RNR timer expired: handle in the BH */
    /* requester */
    uint32_t npsn;          /* next PSN to send */
    uint32_t hi_psn;        /* one past the highest PSN ever sent */
    uint32_t una_psn;       /* oldest unacknowledged PSN */
    uint32_t wqe_off;       /* bytes of the current send WQE already sent */
    uint32_t sq_sent;       /* SQ WQEs fully sent (>= sq.ci) */
    uint32_t nsent;         /* entries in the in-flight list */
    uint32_t nsent_hi;      /* entries still recorded after a rewind */
    struct QRoceRcInflight *inflight;   /* ring of sent, unacked WQEs */
    uint32_t inflight_head;
    uint32_t nrd;           /* READs and atomics among them */
    int retry_left, rnr_left;
    bool rnr_wait;          /* resume sending when the timer fires */
    bool resync;            /* rewound: ignore stale responses until progress */
    struct QEMUTimer *timer;
    /*
     * The send WQE being segmented, copied at its first packet (a QP
     * context's copy: the guest may rewrite the ring meanwhile), and the
     * READ/atomic WQE that responses are written to.
     */
    struct RcWqe *txw, *rdw;
    uint32_t txw_idx, rdw_idx;
    bool txw_valid, rdw_valid;
    /* loss recovery: congestion window in PSNs (8 fractional bits) */
    uint32_t cwnd, ssthresh;
    uint32_t cut_psn;       /* no window cut by a CNP before una passes it */
    uint32_t backoff;       /* consecutive timeouts: the timeout doubles */
    /* DCQCN reaction point (rates in bit/s, alpha in 1/1024) */
    uint64_t rate_cur, rate_tgt;
    uint32_t alpha;
    uint32_t dc_t, dc_bc;   /* timer and byte-counter stages since a cut */
    uint64_t dc_bytes;
    int64_t dc_alpha_at, dc_timer_at;
    bool dc_cnp_seen;       /* a CNP since the last alpha update */
    int64_t pace_at;        /* earliest time of the next packet */
    int64_t meas_at;        /* start of the current rate measurement */
    uint64_t meas_bytes, meas_rate;
    struct QEMUTimer *pace_timer;
    /* DCQCN notification point */
    int64_t cnp_at;         /* earliest time of the next CNP to send */
    QRoceState *s;
    /* responder */
    uint32_t epsn;          /* expected PSN */
    uint32_t msn;
    uint32_t recv_off;      /* bytes of the current message received */
    bool in_msg;            /* between FIRST and LAST of a message */
    bool in_write;          /* ... and that message is an RDMA WRITE */
    uint64_t wr_va;         /* RDMA WRITE target (from the RETH) */
    uint32_t wr_rkey, wr_len;
    bool nak_sent;          /* one sequence NAK per gap */
    QRoceRcRsp rspq[QROCE_RC_RSPQ];
    uint32_t rsp_head, rsp_count;
    QRoceRcAtomicHist ahist[QROCE_DEF_MAX_RD_ATOM];
    uint32_t ahist_next;
} QRoceRcQP;

void qroce_rc_init(QRoceState *s);
void qroce_rc_reset(QRoceState *s);
void qroce_rc_fini(QRoceState *s);
void qroce_rc_qp_create(QRoceState *s, QRoceQP *qp);
void qroce_rc_qp_modify(QRoceState *s, QRoceQP *qp, uint32_t old_state,
                        uint32_t attr_mask);
void qroce_rc_qp_destroy(QRoceState *s, QRoceQP *qp);
void qroce_rc_sq_doorbell(QRoceState *s, QRoceQP *qp);
void qroce_rc_rq_doorbell(QRoceState *s, QRoceQP *qp);
/* A frame from the wire (@wire) or from the device itself. */
bool qroce_rc_rx(QRoceState *s, const uint8_t *frame, size_t len, bool wire);

#endif
