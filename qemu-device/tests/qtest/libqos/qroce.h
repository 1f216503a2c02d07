/*
 * qroce's node in the libqos graph: the PCI function that
 * tests/qtest/qroce-test.c drives.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef QTEST_LIBQOS_QROCE_H
#define QTEST_LIBQOS_QROCE_H

#include "qgraph.h"
#include "pci.h"

typedef struct QRocePCI {
    QOSGraphObject obj;
    QPCIDevice dev;
} QRocePCI;

#endif
