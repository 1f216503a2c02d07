/*
 * qroce: the Ethernet function (qroce_eth.c) -- its TX and RX descriptor
 * rings.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef HW_NET_QROCE_ETH_H
#define HW_NET_QROCE_ETH_H

#include "qroce.h"

/* The TX bottom half: send the frames the guest posted. */
void qroce_eth_tx_bh(void *opaque);
/* A frame that is not RoCE for the device (a QRoceEthRxFn for the port). */
void qroce_eth_receive(QRoceState *s, const uint8_t *buf, size_t size);
/* Raise Ethernet interrupt causes @cause. */
void qroce_eth_irq(QRoceState *s, uint32_t cause);

#endif
