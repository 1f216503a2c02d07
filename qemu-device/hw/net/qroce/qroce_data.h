/*
 * qroce: the data path (qroce_data.c) -- what the shell, the register
 * file and the control path call: engine set-up, QP lifecycle hooks and
 * doorbells.  Received frames reach it through the port (qroce_port.h).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef HW_NET_QROCE_DATA_H
#define HW_NET_QROCE_DATA_H

#include "qroce.h"

void qroce_data_init(QRoceState *s);
/* The VM runs again after a stop: kick the engine (§18). */
void qroce_data_resume(QRoceState *s);
/* Run the engine soon, from any thread (doorbells left in db_box). */
void qroce_data_kick(QRoceState *s);
void qroce_data_reset(QRoceState *s);
void qroce_data_fini(QRoceState *s);
/*
 * What the engine allocates for @qp at qroce_data_qp_create() (its SQ
 * loaded): the control path charges it to the state budget.
 */
size_t qroce_data_qp_bytes(const QRoceQP *qp);
void qroce_data_qp_create(QRoceState *s, QRoceQP *qp);
/* Migration: before a QP's fields are loaded, and after (qroce_migration.c) */
void qroce_data_qp_load_prepare(QRoceState *s, QRoceQP *qp);
void qroce_data_qp_loaded(QRoceState *s, QRoceQP *qp);
void qroce_data_qp_modify(QRoceState *s, QRoceQP *qp, uint32_t old_state,
                          uint32_t attr_mask);
void qroce_data_qp_destroy(QRoceState *s, QRoceQP *qp);
void qroce_data_sq_doorbell(QRoceState *s, QRoceQP *qp);
void qroce_data_rq_doorbell(QRoceState *s, QRoceQP *qp);
/* A bad producer index: record it; the engine moves the QP to ERR. */
void qroce_data_bad_doorbell(QRoceState *s, QRoceQP *qp);
/* Whether a bad doorbell is recorded and the QP not yet moved to ERR. */
bool qroce_data_qp_doomed(QRoceQP *qp);
/* ODP_RESUME ended a page fault of @qp: it runs again. */
void qroce_data_odp_resumed(QRoceState *s, QRoceQP *qp);

/*
 * Stall the engine of QP @qpn (0: every QP) for @us microseconds from
 * now (x-inject-stall-us, docs/hw-spec.md §17); 0 ends a stall.
 */
void qroce_data_stall(QRoceState *s, uint32_t qpn, uint32_t us);
#endif
