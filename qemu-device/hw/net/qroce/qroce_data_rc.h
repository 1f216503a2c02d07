/*
 * qroce: the RC transport's three parts and what they share.
 *
 * The requester (qroce_data_rc_req.c) segments send WQEs into packets,
 * keeps each sent message in flight and goes back on a loss.  The
 * completer (qroce_data_rc_comp.c) takes the peer's ACKs, NAKs, READ
 * responses and atomic ACKs and writes the send completions.  The
 * responder (qroce_data_rc_resp.c) checks and executes the peer's
 * requests and queues its answers.  Calls run one way: completer to
 * requester to responder.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef HW_NET_QROCE_DATA_RC_H
#define HW_NET_QROCE_DATA_RC_H

#include "qroce_data_state.h"

/* Packets of a READ of @len bytes (a READ of none still takes one). */
static inline uint32_t rc_read_pkts(QRoceQP *qp, uint32_t len)
{
    return len ? DIV_ROUND_UP(len, qp_mtu(qp)) : 1;
}

/* Requester: the retry timer, the message being sent, going back. */
int64_t qroce_rc_ack_timeout_ns(QRoceQP *qp);
void qroce_rc_arm_timer(QRoceQP *qp);
QRoceInflight *qroce_rc_cur_inflight(QRoceQP *qp);
void qroce_rc_retire_locals(QRoceState *s, QRoceQP *qp);
void qroce_rc_rewind(QRoceState *s, QRoceQP *qp);

/* Responder: send queued answers; true if it stopped for the budget. */
bool qroce_rc_rsp_process(QRoceState *s, QRoceQP *qp, int *budget);

#endif
