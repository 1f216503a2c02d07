/*
 * qroce: the data path engine's state and the PSN and clock helpers that
 * the transports' shared code (qroce_data_common.c) and congestion
 * control (qroce_data_cc.c) both use.  Types and inline functions only:
 * a header at the bottom of the data path, so that neither of those
 * files takes anything from the other but through its functions, which
 * run one way (common calls cc).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef HW_NET_QROCE_DATA_STATE_H
#define HW_NET_QROCE_DATA_STATE_H

#include "qemu/timer.h"
#include "qemu/main-loop.h"
#include "qroce.h"

#define QROCE_CC_BURST_QPS 16   /* QPs a receive backlog tracks */
#define QROCE_WINDOW       128     /* unacknowledged PSNs */
#define CC_CWND_ONE     256     /* the congestion window's fixed point */

/* What completes an in-flight message (QRoceInflight.kind). */
enum {
    INFL_PLAIN,                 /* SEND or WRITE: an ACK completes it */
    INFL_READ,                  /* completes with its last READ response */
    INFL_ATOMIC,                /* completes with its atomic ACK */
    INFL_LOCAL,                 /* REG_MR, LOCAL_INV: no PSNs, executed once */
};

typedef struct QRoceInflight {
    uint32_t idx;               /* SQ WQE counter */
    uint32_t first_psn, last_psn;
    uint32_t len;
    uint32_t resp_off;          /* READ: bytes received so far */
    uint8_t cqe_opcode;
    uint8_t wqe_opcode;         /* to recognise the WQE when re-read */
    uint8_t kind;               /* INFL_* */
    bool signaled;
    bool done;                  /* all its request packets were sent */
} QRoceInflight;

typedef struct QRoceWqe {
    struct qroce_send_wqe hdr;
    struct qroce_sge sge[QROCE_MAX_SGE];
    uint8_t inl[QROCE_MAX_INLINE];
    uint32_t len;
} QRoceWqe;

typedef struct QRoceEngine {
    QEMUBH *bh;
    QTAILQ_HEAD(, QRoceQP) runq;
    uint8_t *pkt;               /* one frame */
    /*
     * congestion point: RoCE frames received since the engine last ran,
     * and the QPs that data frames among them were for, with how many of
     * their ECN-capable frames came past ecn-threshold
     */
    uint32_t rx_burst;
    uint32_t burst_nqp;
    uint32_t burst_qpn[QROCE_CC_BURST_QPS];
    uint32_t burst_over[QROCE_CC_BURST_QPS];
    QEMUBH *burst_bh;
    /* x-inject-stall-us: QP @stall_qpn (0: all) sends nothing until then */
    int64_t stall_until;
    uint32_t stall_qpn;
    QEMUTimer *stall_timer;
} QRoceEngine;

/*
 * The run queue (qroce_data.c, the scheduler, runs it): its two
 * operations are here, at the bottom of the data path, because a
 * doorbell, an ACK that opens the window, a timer or a QP going to ERR
 * -- from any layer of the engine -- only queues a QP.
 */
static inline void qroce_dp_schedule(QRoceState *s, QRoceQP *qp)
{
    QRoceEngine *eng = s->eng;

    if (!qp->xp.on_runq) {
        qp->xp.on_runq = true;
        QTAILQ_INSERT_TAIL(&eng->runq, qp, xp.runq_link);
    }
    qemu_bh_schedule(eng->bh);
}

static inline void engine_unschedule(QRoceState *s, QRoceQP *qp)
{
    if (qp->xp.on_runq) {
        QTAILQ_REMOVE(&s->eng->runq, qp, xp.runq_link);
        qp->xp.on_runq = false;
    }
}

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

static inline uint32_t qp_mtu(QRoceQP *qp)
{
    return 128u << qp->path_mtu;
}

static inline uint16_t qp_udp_sport(uint32_t qpn)
{
    return 0xc000 | ((qpn * 0x9e370001u) >> 18);
}

static inline int64_t engine_now(void)
{
    return qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
}

#endif
