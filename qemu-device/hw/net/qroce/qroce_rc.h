/*
 * qroce: RoCEv2 transport engine interface.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef HW_NET_QROCE_RC_H
#define HW_NET_QROCE_RC_H

typedef struct QRoceState QRoceState;
typedef struct QRoceQP QRoceQP;

/* Per-QP transport state. */
typedef struct QRoceRcQP {
    /* requester */
    uint32_t npsn;          /* next PSN to send */
    uint32_t una_psn;       /* oldest unacknowledged PSN */
    uint32_t wqe_off;       /* bytes of the current send WQE already sent */
    uint32_t sq_sent;       /* SQ WQEs fully sent (>= sq.ci) */
    uint32_t nsent;         /* entries in the in-flight list */
    struct QRoceRcInflight *inflight;   /* ring of sent, unacked WQEs */
    uint32_t inflight_head;
    int retry_left, rnr_left;
    bool rnr_wait;          /* resume sending when the timer fires */
    bool need_sched;        /* queued on the engine's run queue */
    struct QEMUTimer *timer;
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
bool qroce_rc_rx(QRoceState *s, const uint8_t *frame, size_t len);

#endif
