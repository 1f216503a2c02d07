/*
 * qroce: the control path (qroce_ctrl.c) -- the command ring, its
 * dispatch table and the commands that create and destroy objects.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef HW_NET_QROCE_CTRL_H
#define HW_NET_QROCE_CTRL_H

#include "qroce.h"

/* The command bottom half: run the commands the guest posted. */
void qroce_cmd_bh(void *opaque);
/* STATUS.FATAL with FATAL_CODE @code: the device stops. */
void qroce_fatal(QRoceState *s, uint32_t code);
/* Destroy every object (function reset). */
void qroce_ctrl_reset(QRoceState *s);

#endif
