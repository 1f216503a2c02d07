/*
 * qroce: migration and snapshots (qroce_migration.c) -- the device's
 * VMState, which the shell (qroce_pci.c) registers as its dc->vmsd.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef HW_NET_QROCE_MIGRATION_H
#define HW_NET_QROCE_MIGRATION_H

#include "migration/vmstate.h"
#include "qroce.h"

extern const VMStateDescription vmstate_qroce;

/* The VM runs: a section that did not load whole resets the device. */
void qroce_mig_resume(QRoceState *s);

#endif
