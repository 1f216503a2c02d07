/*
 * qroce: rings (qroce_ring.c) -- buffer-table reads and writes, CQ and EQ
 * posting with the owner bit, interrupts and asynchronous events.  Below
 * the control and data paths; calls nothing above it.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef HW_NET_QROCE_RING_H
#define HW_NET_QROCE_RING_H

#include "qroce.h"
#include "qroce_dma.h"

/* MSI-X vector @vector, if MSI-X is enabled. */
void qroce_irq(QRoceState *s, unsigned vector);
/* The interrupts the engine left for the main loop (qroce.h, "Threads"). */
void qroce_irq_flush(QRoceState *s);
void qroce_out_bh(void *opaque);
/* Bytes [offset, offset + len) of the buffer described by @bt; 0 or -1. */
int qroce_bt_rw(QRoceState *s, const QRoceBT *bt, uint64_t offset, void *buf,
                uint64_t len, bool to_guest);
/* An event on the asynchronous EQ. */
void qroce_async_event(QRoceState *s, uint8_t type, uint32_t handle,
                       uint32_t data);
/* Write @cqe (owner byte last), then a completion event if the CQ is armed. */
void qroce_cq_post(QRoceState *s, QRoceCQ *cq, struct qroce_cqe *cqe,
                   bool solicited);

/*
 * A fault knob (docs/hw-spec.md §17): if its count *@n is not 0 and the
 * object @obj @match-es its filter, use one, count and trace it (@what
 * names the knob): true if the fault is to be injected.
 */
bool qroce_inject(QRoceState *s, uint32_t *n, bool match, const char *what,
                  uint32_t obj);
#endif
