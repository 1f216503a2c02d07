/*
 * qroce: what the transports (qroce_data_rc.c, qroce_data_uc.c,
 * qroce_data_ud.c) share, below them in qroce_data_common.c: the engine's
 * state, building and sending packets, reading and copying send WQEs,
 * scattering into RECV WQEs, completions.  Nothing here calls a transport
 * or the scheduler (qroce_data.c).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef HW_NET_QROCE_DATA_COMMON_H
#define HW_NET_QROCE_DATA_COMMON_H

#include "qemu/timer.h"
#include "qroce.h"
#include "roce_wire.h"

#define RC_WINDOW       128     /* unacknowledged PSNs */
#define RC_CWND_ONE     256     /* the congestion window's fixed point */

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
    /* inject-stall-us: QP @stall_qpn (0: all) sends nothing until then */
    int64_t stall_until;
    uint32_t stall_qpn;
    QEMUTimer *stall_timer;
} QRoceRc;

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

static inline uint32_t rc_mtu(QRoceQP *qp)
{
    return 128u << qp->path_mtu;
}

static inline uint16_t rc_sport(uint32_t qpn)
{
    return 0xc000 | ((qpn * 0x9e370001u) >> 18);
}

static inline int64_t rc_now(void)
{
    return qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
}

static inline bool rc_op_reads(uint8_t op)
{
    return op == QROCE_WR_RDMA_READ || op == QROCE_WR_ATOMIC_CMP_SWP ||
           op == QROCE_WR_ATOMIC_FETCH_ADD;
}

/* A local operation: executed by the device, nothing goes on the wire. */
static inline bool qroce_dp_op_local(uint8_t op)
{
    return op == QROCE_WR_REG_MR || op == QROCE_WR_LOCAL_INV;
}

static inline uint8_t qroce_dp_local_cqe_opcode(uint8_t op)
{
    return op == QROCE_WR_REG_MR ? QROCE_CQE_REG_MR : QROCE_CQE_LOCAL_INV;
}

/* Put @qp on the run queue; qroce_data.c's bottom half runs it. */
void qroce_dp_schedule(QRoceState *s, QRoceQP *qp);
void qroce_dp_cqe(QRoceState *s, QRoceQP *qp, bool sq, uint32_t idx,
                  uint8_t opcode, uint8_t status, uint32_t len, bool imm,
                  uint32_t imm_wire, bool solicited);
/* Count and trace a received packet that is dropped. */
/*
 * inject-wqe-err: the status send WQE @idx of @qp, which the engine
 * starts now, is to complete with (QROCE_WC_SUCCESS: none).
 */
int qroce_dp_inject_wqe(QRoceState *s, QRoceQP *qp, uint32_t idx);
void qroce_dp_drop(QRoceState *s, const char *why);
/* Fill the address part of an outgoing packet from the QP's AV. */
bool qroce_dp_addr(QRoceState *s, QRoceQP *qp, RocePktOut *o,
                   uint8_t sgid[16]);
/* Build packet @o around the payload already in s->rc->pkt and send it. */
void qroce_dp_tx(QRoceState *s, QRoceQP *qp, RocePktOut *o, uint32_t paylen);
/* Read send WQE @idx and check it; returns a QROCE_WC_* status. */
int qroce_dp_read_wqe(QRoceState *s, QRoceQP *qp, uint32_t idx, RcWqe *w);
int qroce_dp_wqe_copy(QRoceState *s, QRoceQP *qp, RcWqe *w, uint32_t off,
                      uint8_t *buf, uint32_t n, bool to_guest);
void qroce_dp_sq_error(QRoceState *s, QRoceQP *qp, uint32_t idx, int status);
/*
 * Execute local operation WQE @idx (REG_MR, LOCAL_INV) of @qp; a
 * QROCE_WC_* status.  qroce_dp_sq_local() also completes it as UC and UD
 * do (a CQE if signaled, or an error CQE and the QP to ERR): false if it
 * failed.
 */
int qroce_dp_local_exec(QRoceState *s, QRoceQP *qp, uint32_t idx,
                        const RcWqe *w);
bool qroce_dp_sq_local(QRoceState *s, QRoceQP *qp, uint32_t idx,
                       const RcWqe *w);
int qroce_dp_fetch_wqe(QRoceState *s, QRoceQP *qp, uint32_t idx, bool first,
                       const QRoceRcInflight *e, RcWqe **out);
void qroce_dp_seg_opcode(const RcWqe *w, uint32_t off, uint32_t n,
                         RocePktOut *o);
bool qroce_dp_op_first(uint8_t op);
bool qroce_dp_op_last(uint8_t op);
int qroce_dp_scatter(QRoceState *s, QRoceQP *qp, uint32_t off,
                     const uint8_t *src, uint32_t n);
bool qroce_dp_recv_empty(QRoceState *s, QRoceQP *qp);
void qroce_dp_recv_complete(QRoceState *s, QRoceQP *qp,
                            struct qroce_cqe *cqe, bool solicited);
void qroce_dp_recv_cqe(QRoceState *s, QRoceQP *qp, uint8_t opcode,
                       uint8_t status, uint32_t len, bool imm,
                       uint32_t imm_wire, bool solicited);
void qroce_dp_msg_received(QRoceState *s, QRoceQP *qp, RocePktIn *p,
                           bool write);
/*
 * @qp has entered ERR (from @old_state): stop its timers and transfers;
 * the scheduler flushes its WQs.
 */
void qroce_dp_qp_to_err(QRoceState *s, QRoceQP *qp, uint32_t old_state);
/* Move a QP to ERR on the device's own initiative. */
void qroce_qp_set_error(QRoceState *s, QRoceQP *qp, uint8_t event);

#endif
