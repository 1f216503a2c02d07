/*
 * qroce: the register file (BAR0) and the doorbells (BAR2), qroce_regs.c.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef HW_NET_QROCE_REGS_H
#define HW_NET_QROCE_REGS_H

#include "system/memory.h"
#include "qroce.h"

extern const MemoryRegionOps qroce_reg_ops;
extern const MemoryRegionOps qroce_db_ops;

/* Before the first doorbell: the lock's hook that applies queued ones. */
void qroce_regs_init(QRoceState *s);

/*
 * Function reset (CTRL.RESET, device reset): the data path, the port and
 * the objects, then the registers.
 */
void qroce_reset_state(QRoceState *s);

#endif
