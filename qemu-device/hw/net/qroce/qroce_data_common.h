/*
 * qroce: what the transports (qroce_data_rc_*.c, qroce_data_uc.c,
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

#include "qroce_data_state.h"
#include "qroce_odp.h"

/*
 * A work-request opcode's properties, from the one table of them
 * (qroce_wr_ops[], include/qroce_hw.h).
 */
static inline bool wr_op_has(uint8_t op, unsigned int flags)
{
    return qroce_wr_op_flags(op) & flags;
}

/*
 * FLUSH and ATOMIC_WRITE (RC only): no SGEs, answered with an empty READ
 * response, and like a READ they count against max_rd_atomic.
 */
static inline bool wr_op_empty_read(uint8_t op)
{
    return (qroce_wr_op_flags(op) & (QROCE_WROP_RD_ATOMIC |
                                     QROCE_WROP_NO_SGE)) ==
           (QROCE_WROP_RD_ATOMIC | QROCE_WROP_NO_SGE);
}

/* Answered by a READ or atomic response: counts against max_rd_atomic. */
static inline bool wr_op_reads(uint8_t op)
{
    return wr_op_has(op, QROCE_WROP_RD_ATOMIC);
}

/* A local operation: executed by the device, nothing goes on the wire. */
static inline bool qroce_dp_op_local(uint8_t op)
{
    return wr_op_has(op, QROCE_WROP_LOCAL);
}

/* The CQE opcode of a send WQE of opcode @op. */
static inline uint8_t qroce_dp_cqe_opcode(uint8_t op)
{
    return op < QROCE_WR_MAX ? qroce_wr_ops[op].cqe_opcode : QROCE_CQE_SEND;
}

void qroce_dp_cqe(QRoceState *s, QRoceQP *qp, bool sq, uint32_t idx,
                  uint8_t opcode, uint8_t status, uint32_t len, bool imm,
                  uint32_t imm_wire, bool solicited);
/* Count and trace a received packet that is dropped. */
/*
 * x-inject-wqe-err: the status send WQE @idx of @qp, which the engine
 * starts now, is to complete with (QROCE_WC_SUCCESS: none).
 */
int qroce_dp_inject_wqe(QRoceState *s, QRoceQP *qp, uint32_t idx);
void qroce_dp_drop(QRoceState *s, const char *why);
/* Fill the address part of an outgoing packet from the QP's AV. */
bool qroce_dp_addr(QRoceState *s, QRoceQP *qp, RocePktOut *o,
                   uint8_t sgid[16]);
/* Build packet @o around the payload already in s->eng->pkt and send it. */
void qroce_dp_tx(QRoceState *s, QRoceQP *qp, RocePktOut *o, uint32_t paylen);
/* Read send WQE @idx and check it; returns a QROCE_WC_* status. */
int qroce_dp_read_wqe(QRoceState *s, QRoceQP *qp, uint32_t idx, QRoceWqe *w);
int qroce_dp_wqe_copy(QRoceState *s, QRoceQP *qp, QRoceWqe *w, uint32_t off,
                      uint8_t *buf, uint32_t n, bool to_guest);
void qroce_dp_sq_error(QRoceState *s, QRoceQP *qp, uint32_t idx, int status);
/*
 * Execute local operation WQE @idx (REG_MR, LOCAL_INV, BIND_MW) of @qp; a
 * QROCE_WC_* status.  qroce_dp_sq_local() also completes it as UC and UD
 * do (a CQE if signaled, or an error CQE and the QP to ERR): false if it
 * failed.
 */
int qroce_dp_local_exec(QRoceState *s, QRoceQP *qp, uint32_t idx,
                        const QRoceWqe *w);
bool qroce_dp_sq_local(QRoceState *s, QRoceQP *qp, uint32_t idx,
                       const QRoceWqe *w);
int qroce_dp_fetch_wqe(QRoceState *s, QRoceQP *qp, uint32_t idx, bool first,
                       const QRoceInflight *e, QRoceWqe **out);
void qroce_dp_seg_opcode(const QRoceWqe *w, uint32_t off, uint32_t n,
                         RocePktOut *o);
bool qroce_dp_op_first(uint8_t op);
bool qroce_dp_op_last(uint8_t op);
/*
 * Receives: a message takes a RECV WQE into the QP (false: none posted),
 * scatters into it and completes it; the SRQ's other QPs take the next.
 */
bool qroce_dp_recv_take(QRoceState *s, QRoceQP *qp);
/*
 * The payload of an RDMA WRITE packet, placed where the message has got
 * to (wr_va + recv_off through wr_rkey): 0, -1 (the key, range or access
 * refuses it) or QROCE_RW_FAULT, with *@miss saying where (its end: where
 * the message ends), for the page fault.
 */
int qroce_dp_write_place(QRoceState *s, QRoceQP *qp, const RocePktIn *p,
                         QRoceOdpMiss *miss);
/*
 * The ODP access @miss stopped @side of @qp: true if the QP waits for the
 * page fault (raised now, as a PAGE_FAULT event, or outstanding already),
 * false if the driver could not resolve it (the access fails).
 */
bool qroce_dp_odp_fault(QRoceState *s, QRoceQP *qp, int side,
                        const QRoceOdpMiss *miss);
/* The bytes the RECV WQE taken into the QP holds (its SGEs' lengths). */
uint64_t qroce_dp_recv_room(const QRoceQP *qp);
int qroce_dp_scatter(QRoceState *s, QRoceQP *qp, uint32_t off,
                     const uint8_t *src, uint32_t n);
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
