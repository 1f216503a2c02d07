/*
 * qroce: object and buffer tables (qroce_objects.c) -- the control path
 * creates and destroys objects, the data path looks them up: lookups by
 * handle, memory-region checks and access, the GID table, and loading
 * buffer tables from the guest.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef HW_NET_QROCE_OBJECTS_H
#define HW_NET_QROCE_OBJECTS_H

#include "qroce.h"
#include "qroce_odp.h"

/* Buffer tables: load a guest table (a QROCE_CMD_* status), free one. */
int qroce_bt_load(QRoceState *s, const struct qroce_bt *gbt,
                  const uint64_t *inline_pages, bool allow_inline,
                  bool allow_phys, QRoceBT *bt);
void qroce_bt_free(QRoceState *s, QRoceBT *bt);
/* Does table @gbt hold exactly the pages of @bytes from offset @fpo? */
bool qroce_bt_exact(const struct qroce_bt *gbt, uint64_t fpo, uint64_t bytes);
/* The table of a ring of @bytes (CQ, EQ, WQ); a QROCE_CMD_* status. */
int qroce_ring_bt(QRoceState *s, const struct qroce_bt *gbt, uint64_t bytes,
                  QRoceBT *bt);
/* A work queue of 2^@log2 WQEs of 2^@shift bytes; a QROCE_CMD_* status. */
int qroce_wq_load(QRoceState *s, const struct qroce_bt *gbt, uint8_t log2,
                  uint8_t shift, uint8_t min_shift, uint8_t max_shift,
                  QRoceWQ *wq);

/*
 * The state budget (state-budget-mb): take @bytes of it (false if that
 * would pass it), give them back.
 */
bool qroce_state_take(QRoceState *s, size_t bytes);
void qroce_state_give(QRoceState *s, size_t bytes);
/*
 * Object tables (QRoceTable in qroce.h).  get: the object numbered @n or
 * NULL; next: the first number >= @n in use, or t->max; free_number: a
 * number >= @first not in use, from @from on and then from @first (late
 * reuse), 0 if none; alloc: a zeroed object for free number @n, charged
 * to the budget (NULL if it is spent); free: the object @n and its charge;
 * stamp: the word of number @n that outlives its objects (NULL before the
 * number's chunk exists: 0 then).
 */
void qroce_tbl_init(QRoceTable *t, uint32_t max, size_t size);
void qroce_tbl_fini(QRoceTable *t);
void *qroce_tbl_get(const QRoceTable *t, uint32_t n);
uint32_t qroce_tbl_next(const QRoceTable *t, uint32_t n);
uint32_t qroce_tbl_free_number(const QRoceTable *t, uint32_t first,
                               uint32_t from);
void *qroce_tbl_alloc(QRoceState *s, QRoceTable *t, uint32_t n);
void qroce_tbl_free(QRoceState *s, QRoceTable *t, uint32_t n);
uint32_t *qroce_tbl_stamp(QRoceTable *t, uint32_t n);
uint32_t *qroce_tbl_stamp_make(QRoceState *s, QRoceTable *t, uint32_t n);
#define QROCE_TBL_FOREACH(t, n) \
    for ((n) = qroce_tbl_next((t), 0); (n) < (t)->max; \
         (n) = qroce_tbl_next((t), (n) + 1))

/* Lookups: NULL if there is no such valid object. */
QRoceQP *qroce_qp_get(QRoceState *s, uint32_t qpn);
bool qroce_gid_is_mcast(const uint8_t gid[16]);
void qroce_mcast_mac(const uint8_t gid[16], uint8_t mac[6]);
QRoceMcast *qroce_mcast_find(QRoceState *s, const uint8_t gid[16]);
int qroce_mcast_attach(QRoceState *s, const uint8_t gid[16], uint32_t qpn);
bool qroce_mcast_detach(QRoceState *s, const uint8_t gid[16], uint32_t qpn);
void qroce_mcast_detach_all(QRoceState *s, uint32_t qpn);
QRoceCQ *qroce_cq_get(QRoceState *s, uint32_t cqn);
QRoceAH *qroce_ah_get(QRoceState *s, uint32_t ahn);
QRoceSRQ *qroce_srq_get(QRoceState *s, uint32_t srqn);
QRocePD *qroce_pd_get(QRoceState *s, uint32_t pdn);
QRoceMR *qroce_mr_get(QRoceState *s, uint32_t key);
/* The WQ @qp receives into: its SRQ's (*srq set) or its own RQ (NULL). */
QRoceWQ *qroce_qp_recv_wq(QRoceState *s, QRoceQP *qp, QRoceSRQ **srq);
/* Call after advancing srq->wq.ci: raises SRQ_LIMIT when it is due. */
void qroce_srq_consumed(QRoceState *s, QRoceSRQ *srq);
/* May @len bytes at @va of MR @key be used so?  A QROCE_WC_* status. */
int qroce_mr_check(QRoceState *s, uint32_t key, uint32_t pdn, uint64_t va,
                   uint64_t len, uint32_t need_access, QRoceMR **out);
/*
 * The same for a remote access of @qp with @key (an rkey): an MR, or a
 * bound window of @qp's PD (type 2: bound to @qp) whose range and access
 * allow it; *@out is then the window's MR, as for qroce_mr_rw().
 */
int qroce_rkey_check(QRoceState *s, QRoceQP *qp, uint32_t key, uint64_t *va,
                     uint64_t len, uint32_t need_access, QRoceMR **out);
/*
 * Copy @len bytes at @va of @mr (checked) to or from @buf: 0, -1, or
 * QROCE_RW_FAULT (an ODP page is absent: *@miss, if not NULL, says where;
 * its end is va + len, which the caller may widen to its whole request).
 * @buf NULL only checks that the pages are there (and writable,
 * @to_guest).
 */
int qroce_mr_rw(QRoceState *s, QRoceMR *mr, uint64_t va, void *buf,
                uint64_t len, bool to_guest, QRoceOdpMiss *miss);
/* The window in the slot @key's index names, whatever its variant. */
QRoceMR *qroce_mw_get(QRoceState *s, uint32_t key);
/*
 * BIND_MW work request @w of @qp (docs/hw-spec.md §9): a QROCE_WC_*
 * status, *@why the field at fault.  qroce_mw_unbind() unbinds a window
 * (DEALLOC_MW, LOCAL_INV, a rebind); qroce_mw_qp_gone() unbinds the type
 * 2 windows bound to a QP being destroyed.
 */
int qroce_mw_bind(QRoceState *s, QRoceQP *qp, const struct qroce_send_wqe *w,
                  const char **why);
void qroce_mw_unbind(QRoceState *s, QRoceMR *mw);
void qroce_mw_qp_gone(QRoceState *s, uint32_t qpn);
/*
 * LOCAL_INV or a received SEND with Invalidate on @qp: a bound type 2
 * window of @qp, or a VALID fast-registration MR of its PD.
 */
int qroce_key_inv(QRoceState *s, QRoceQP *qp, uint32_t key, const char **why);
/*
 * Fast registration (ALLOC_MR): the slot @key's index names if it holds
 * a fast-registration MR, whatever its state and variant.
 */
QRoceMR *qroce_frmr_get(QRoceState *s, uint32_t key);
/* Make @mr a FREE fast-registration MR for @max_pages; QROCE_CMD_*. */
int qroce_frmr_alloc(QRoceState *s, QRoceMR *mr, uint32_t max_pages);
/* Free an MR of either kind and its pages (DEREG_MR, reset). */
void qroce_mr_free(QRoceState *s, QRoceMR *mr);
/*
 * The REG_MR and LOCAL_INV work requests (and a received SEND with
 * Invalidate) of a QP of PD @pdn: a QROCE_WC_* status; when refused,
 * *@why names the field at fault.
 */
int qroce_frmr_reg(QRoceState *s, uint32_t pdn,
                   const struct qroce_send_wqe *w, const char **why);
int qroce_frmr_inv(QRoceState *s, uint32_t pdn, uint32_t key,
                   const char **why);
bool qroce_gid_get(QRoceState *s, unsigned idx, uint8_t gid[16]);
int qroce_gid_find(QRoceState *s, const uint8_t gid[16]);

#endif
