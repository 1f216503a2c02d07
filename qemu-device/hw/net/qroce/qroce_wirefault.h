/*
 * qroce: wire faults (qroce_wirefault.c), below the port.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef HW_NET_QROCE_WIREFAULT_H
#define HW_NET_QROCE_WIREFAULT_H

#include "qroce.h"

/* Where a frame goes next: the wire, or up to the device. */
typedef void QRoceFrameFn(QRoceState *s, const uint8_t *buf, size_t len);

/* Is any fault knob of direction @dir (QROCE_DIR_*) on? */
bool qroce_faults_on(QRoceState *s, int dir);
/* Offset of the BTH of a RoCEv2 frame, or 0 if it is not one. */
size_t qroce_roce_bth(const uint8_t *f, size_t len);
/*
 * Pass RoCE frame @buf (ours to change) through the fault knobs of @dir
 * on its way to @out: dropped, corrupted, held back or sent twice.
 */
void qroce_fault_stage(QRoceState *s, int dir, uint8_t *buf, size_t len,
                       QRoceFrameFn *out);
/* The frames held back (reorder knob) go on: TX to @tx, RX to @rx. */
void qroce_fault_release(QRoceState *s, QRoceFrameFn *tx, QRoceFrameFn *rx);

#endif
