/*
 * qroce: DMA (qroce_dma.c) -- guest memory access restricted to guest
 * RAM, through the vIOMMU when there is one.  Calls nothing above it.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef HW_NET_QROCE_DMA_H
#define HW_NET_QROCE_DMA_H

#include "qroce.h"

/*
 * Payload to or from guest memory (guest RAM only); false if any part of
 * the range is not guest RAM.
 */
bool qroce_dma_copy(QRoceState *s, uint64_t addr, void *buf, uint64_t len,
                    bool to_guest);

static inline bool qroce_dma_read(QRoceState *s, uint64_t addr, void *buf,
                                  uint64_t len)
{
    return qroce_dma_copy(s, addr, buf, len, false);
}

static inline bool qroce_dma_write(QRoceState *s, uint64_t addr,
                                   const void *buf, uint64_t len)
{
    return qroce_dma_copy(s, addr, (void *)buf, len, true);
}

#endif
