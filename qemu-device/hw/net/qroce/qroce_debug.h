/*
 * qroce: debugging the device from outside (qroce_debug.c): run-time
 * knobs, fault injection events, the x-objects dump.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef HW_NET_QROCE_DEBUG_H
#define HW_NET_QROCE_DEBUG_H

#include "qroce.h"

/* Add the knobs and the x-* properties to the instance @obj. */
void qroce_debug_init(Object *obj);

#endif
