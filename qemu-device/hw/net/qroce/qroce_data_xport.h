/*
 * qroce: the transports -- RC (qroce_data_rc_{req,comp,resp}.c), UC
 * (qroce_data_uc.c), UD and GSI (qroce_data_ud.c).  Only the scheduler
 * (qroce_data.c) calls them, through its table of QRoceTransportOps; they
 * call only qroce_data_common.c and the layers below, and not each other
 * (RC's three parts call each other one way: see qroce_data_rc.h).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef HW_NET_QROCE_DATA_XPORT_H
#define HW_NET_QROCE_DATA_XPORT_H

#include "qroce.h"
#include "roce_wire.h"

/*
 * process: send (and for RC answer) from @qp with *@budget packets; true
 * if it stopped for the budget.  rx: a request for @qp, its state checked.
 */
bool qroce_rc_process(QRoceState *s, QRoceQP *qp, int *budget);
void qroce_rc_timeout(QRoceState *s, QRoceQP *qp);
void qroce_rc_requester_rx(QRoceState *s, QRoceQP *qp, RocePktIn *p);
void qroce_rc_responder_rx(QRoceState *s, QRoceQP *qp, RocePktIn *p);

bool qroce_uc_sq_process(QRoceState *s, QRoceQP *qp, int *budget);
void qroce_uc_rx(QRoceState *s, QRoceQP *qp, RocePktIn *p);

bool qroce_ud_sq_process(QRoceState *s, QRoceQP *qp, int *budget);
void qroce_ud_rx(QRoceState *s, QRoceQP *qp, RocePktIn *p);

#endif
