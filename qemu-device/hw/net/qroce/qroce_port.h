/*
 * qroce: the port (qroce_port.c) -- the wire fault knobs of
 * docs/hw-spec.md §15, the loopback queue for frames to the device's own
 * MAC, and the netdev.  It is the lowest layer but the codec: received
 * frames go up through the functions installed with qroce_port_set_*_rx(),
 * never by a call into a higher file.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef HW_NET_QROCE_PORT_H
#define HW_NET_QROCE_PORT_H

#include "qemu/iov.h"
#include "qroce.h"

void qroce_port_init(QRoceState *s);
void qroce_port_fini(QRoceState *s);
/* Drop queued loopback frames and frames held back by a fault. */
void qroce_port_reset(QRoceState *s);
/* The VM runs again after a stop: kick the queues (§18). */
void qroce_port_resume(QRoceState *s);
/*
 * Where received frames go up: the data path installs the RoCE receiver
 * (qroce_data_init), which gets every frame first -- from the wire, or
 * from the loopback queue with wire false -- and returns true if it was
 * RoCE for this device; the shell installs the Ethernet function's, which
 * gets the others from the wire.  Both are set at realize, before a frame
 * can arrive.
 */
void qroce_port_set_roce_rx(QRoceState *s, QRoceRoceRxFn *fn);
void qroce_port_set_eth_rx(QRoceState *s, QRoceEthRxFn *fn);
/*
 * Called (from the netdev's callback or the loopback BH) when the port
 * takes frames again after qroce_port_busy(); the data path installs it.
 * The port wakes the Ethernet TX bottom half itself.
 */
void qroce_port_set_tx_ready(QRoceState *s, QRoceTxReadyFn *fn);
/*
 * True while the netdev holds frames it could not send yet, or the
 * loopback queue is above its high mark: senders wait for the wake-up.
 */
bool qroce_port_busy(QRoceState *s);
/* A non-RoCE frame (the Ethernet function's) to the netdev. */
void qroce_port_send(QRoceState *s, const uint8_t *buf, size_t len);
/* A frame to the wire, through the TX fault knobs and the loopback queue. */
void qroce_wire_tx(QRoceState *s, const struct iovec *iov, int iovcnt);
/* Main loop, BQL and lock held: send what the engine left in out_q. */
void qroce_port_out(QRoceState *s);
/* NetClientInfo.announce: a GARP or unsolicited NA per GID (§18) */
void qroce_port_announce(NetClientState *nc);
/* NetClientInfo.receive */
ssize_t qroce_port_receive(NetClientState *nc, const uint8_t *buf,
                           size_t size);

#endif
