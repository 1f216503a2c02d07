/*
 * qroce: on-demand paging (qroce_odp.c), below the rings: ODP tables and
 * the QPs' page-fault state.  Calls nothing above it.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef HW_NET_QROCE_ODP_H
#define HW_NET_QROCE_ODP_H

#include "qroce.h"

/* qroce_bt_rw() and qroce_mr_rw(): an ODP entry is absent */
#define QROCE_RW_FAULT (-2)

/*
 * Where an access to an ODP MR stopped (qroce_mr_rw()): the MR's key, the
 * first absent byte's address in the MR's addresses, the direction, and
 * the end of the range the access needed (exclusive; set by the data
 * path, which knows the whole request).
 */
typedef struct QRoceOdpMiss {
    uint32_t key;
    bool write;
    uint64_t va;
    uint64_t end;
} QRoceOdpMiss;

/* An empty table of @npages pages in @bt (REG_MR); a QROCE_CMD_* status. */
int qroce_odp_init(QRoceState *s, QRoceBT *bt, uint64_t npages);
/* Drop every entry (and the table itself with @free). */
void qroce_odp_clear(QRoceState *s, QRoceBT *bt, bool free);
/*
 * Bytes [@off, @off + @len) of an ODP table, copied to or from @buf, or
 * only checked (@buf NULL): 0, -1 (outside it, or not guest RAM) or
 * QROCE_RW_FAULT, with the first absent byte's offset in *@miss_off (if
 * not NULL).
 */
int qroce_odp_rw(QRoceState *s, const QRoceBT *bt, uint64_t off, void *buf,
                 uint64_t len, bool to_guest, uint64_t *miss_off);
/*
 * Entry @page := @e: 1 if it became present, 0 if not, -1 if a new chunk
 * would pass max-bt-pages.
 */
int qroce_odp_set(QRoceState *s, QRoceBT *bt, uint64_t page, uint64_t e);
/* Clear pages [@first, @last]: how many were present. */
uint64_t qroce_odp_clear_range(QRoceState *s, QRoceBT *bt, uint64_t first,
                               uint64_t last);

/*
 * The access @m describes stopped @side of @qp.  QROCE_ODP_RAISE: a new
 * fault, which the caller raises (a PAGE_FAULT event); QROCE_ODP_WAIT:
 * one is outstanding already; either way the QP waits for it.
 * QROCE_ODP_FAILED: the driver could not resolve a fault on this range,
 * the access fails.
 */
enum { QROCE_ODP_WAIT, QROCE_ODP_RAISE, QROCE_ODP_FAILED };
int qroce_odp_fault(QRoceState *s, QRoceQP *qp, int side,
                    const QRoceOdpMiss *m);
/* Is @side of @qp waiting for a fault? */
static inline bool qroce_odp_waiting(const QRoceQP *qp, int side)
{
    return qp->pf[side].state == QROCE_PF_PENDING;
}
/* The QP left RTS/RTR (ERR, RESET, destroyed): its faults are forgotten. */
void qroce_odp_qp_reset(QRoceQP *qp);

#endif
