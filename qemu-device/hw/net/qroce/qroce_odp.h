/*
 * qroce: on-demand paging (docs/hw-spec.md §4b).  An ODP MR's table
 * starts empty; an access that meets an absent entry stops where it is
 * and raises a page fault for the driver, which fills the table (ODP_MAP)
 * and lets the QP go on (ODP_RESUME).  The table is qroce_ring.c's (the
 * layer that reaches guest memory), the faults the data path's
 * (qroce_data_common.c), the commands qroce_odp.c's.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef HW_NET_QROCE_ODP_H
#define HW_NET_QROCE_ODP_H

#include "qroce.h"

/* qroce_bt_rw() and qroce_mr_rw(): an ODP entry is absent (s->odp_miss_*) */
#define QROCE_RW_FAULT (-2)

/* An empty table of @npages pages in @bt (REG_MR); a QROCE_CMD_* status. */
int qroce_odp_init(QRoceState *s, QRoceBT *bt, uint64_t npages);
/* Drop every entry (and the table itself with @free). */
void qroce_odp_clear(QRoceState *s, QRoceBT *bt, bool free);
/*
 * Bytes [@off, @off + @len) of an ODP table, copied to or from @buf, or
 * only checked (@buf NULL): 0, -1 (outside it, or not guest RAM) or
 * QROCE_RW_FAULT, with the first absent byte's offset in s->odp_miss_off.
 */
int qroce_odp_rw(QRoceState *s, const QRoceBT *bt, uint64_t off, void *buf,
                 uint64_t len, bool to_guest);
/*
 * Entry @page := @e: 1 if it became present, 0 if not, -1 if a new chunk
 * would pass max-bt-pages.
 */
int qroce_odp_set(QRoceState *s, QRoceBT *bt, uint64_t page, uint64_t e);
/* Clear pages [@first, @last]: how many were present. */
uint64_t qroce_odp_clear_range(QRoceState *s, QRoceBT *bt, uint64_t first,
                               uint64_t last);

/*
 * The access s->odp_miss_* describes stopped @side of @qp; it needed the
 * range up to @end (exclusive, in the MR's addresses).  True: the QP
 * waits for the fault (raised now, or already outstanding).  False: the
 * driver could not resolve a fault on this range: the access fails.
 */
bool qroce_odp_fault(QRoceState *s, QRoceQP *qp, int side, uint64_t end);
/* Is @side of @qp waiting for a fault? */
static inline bool qroce_odp_waiting(const QRoceQP *qp, int side)
{
    return qp->pf[side].state == QROCE_PF_PENDING;
}
/* The QP left RTS/RTR (ERR, RESET, destroyed): its faults are forgotten. */
void qroce_odp_qp_reset(QRoceQP *qp);

/* The commands (qroce_ctrl.c's table). */
int qroce_cmd_odp_map(QRoceState *s, const struct qroce_cmd *c,
                      uint32_t *out);
int qroce_cmd_odp_unmap(QRoceState *s, const struct qroce_cmd *c,
                        uint32_t *out);
int qroce_cmd_odp_query(QRoceState *s, const struct qroce_cmd *c,
                        uint32_t *out);
int qroce_cmd_odp_resume(QRoceState *s, const struct qroce_cmd *c,
                         uint32_t *out);

#endif
