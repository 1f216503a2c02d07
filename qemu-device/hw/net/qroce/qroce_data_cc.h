/*
 * qroce: congestion control (qroce_data_cc.c), docs/hw-spec.md §14 -- the
 * congestion window, the congestion point (ECN marking of received
 * frames) and the DCQCN reaction point (rate, pacing).  It sends nothing:
 * the CNPs of the notification point go out from qroce_data.c.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef HW_NET_QROCE_DATA_CC_H
#define HW_NET_QROCE_DATA_CC_H

#include "qroce.h"
#include "roce_wire.h"

/* DCQCN reaction point */
void qroce_dc_reset(QRoceState *s, QRoceQP *qp);
void qroce_dc_cnp(QRoceState *s, QRoceQP *qp);
bool qroce_dc_may_send(QRoceState *s, QRoceQP *qp);
void qroce_dc_sent(QRoceState *s, QRoceQP *qp, size_t bytes);
/* the congestion window */
void qroce_cc_acked(QRoceState *s, QRoceQP *qp, uint32_t una);
void qroce_cc_cwnd_cut(QRoceState *s, QRoceQP *qp, bool timeout);
/* congestion point */
bool qroce_cc_congested(QRoceState *s, RocePktIn *p, bool wire);
uint32_t qroce_cc_burst_end(QRoceState *s, uint32_t *qpns);

#endif
