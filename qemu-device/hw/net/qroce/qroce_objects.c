/*
 * qroce: the object tables (PD, CQ, QP, MR, SRQ, AH, GID) as the data path
 * reads them, and the buffer tables that describe guest memory.
 *
 * Every value the guest supplies is checked before use.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "qemu/bitops.h"
#include "qroce_objects.h"
#include "qroce_odp.h"
#include "qroce_ring.h"
#include "trace.h"

/* ------------------------------------------------------------------ */
/* Buffer tables                                                       */
/* ------------------------------------------------------------------ */

void qroce_bt_free(QRoceState *s, QRoceBT *bt)
{
    qroce_odp_clear(s, bt, true);
    if (bt->pages) {
        s->bt_pages -= bt->npages;
    }
    g_free(bt->pages);
    memset(bt, 0, sizeof(*bt));
}

/* Refuse a buffer table: trace @field and @val (§17); returns @st. */
static int qroce_bt_bad(const char *field, uint64_t val, const char *why,
                        int st)
{
    trace_qroce_ub_bt_field(field, val, why);
    return st;
}

/*
 * The page list of a LIST2 table at @addr: a list of the pages that hold
 * the page list.  Returns a QROCE_CMD_* status.
 */
static int qroce_bt_read_list2(QRoceState *s, uint64_t addr, QRoceBT *bt)
{
    uint32_t npages = bt->npages;
    uint32_t nl1 = DIV_ROUND_UP(npages, QROCE_BT_L2_ENTRIES);
    g_autofree uint64_t *l1 = g_new(uint64_t, nl1);
    uint32_t i;

    if (addr & 7) {
        return qroce_bt_bad("LIST2 addr", addr, "not 8-byte aligned",
                            QROCE_CMD_ERR_PARAM);
    }
    if (!qroce_dma_read(s, addr, l1, (uint64_t)nl1 * 8)) {
        return qroce_bt_bad("LIST2 addr", addr, "not readable",
                            QROCE_CMD_ERR_DMA);
    }
    for (i = 0; i < nl1; i++) {
        uint32_t n = MIN(QROCE_BT_L2_ENTRIES,
                         npages - i * QROCE_BT_L2_ENTRIES);
        uint64_t p = le64_to_cpu(l1[i]);

        if ((p & 0xfff) ||
            !qroce_dma_read(s, p, bt->pages + i * QROCE_BT_L2_ENTRIES,
                            (uint64_t)n * 8)) {
            return qroce_bt_bad("LIST2 page", p,
                                "not 4 KiB aligned or not readable",
                                QROCE_CMD_ERR_DMA);
        }
    }
    for (i = 0; i < npages; i++) {
        bt->pages[i] = le64_to_cpu(bt->pages[i]);
    }
    return QROCE_CMD_OK;
}

/*
 * Fill bt->pages (bt->npages of 2^bt->page_shift bytes) as table @gbt's
 * level says.  Returns a QROCE_CMD_* status.
 */
static int qroce_bt_fill(QRoceState *s, const struct qroce_bt *gbt,
                         const uint64_t *inline_pages, bool allow_inline,
                         QRoceBT *bt)
{
    uint64_t addr = le64_to_cpu(gbt->addr);
    uint32_t npages = bt->npages;
    uint8_t shift = bt->page_shift;
    uint32_t i;

    switch (gbt->level) {
    case QROCE_BT_CONTIG:
        if (addr & ((1ULL << shift) - 1)) {
            return qroce_bt_bad("CONTIG addr", addr, "not page aligned",
                                QROCE_CMD_ERR_PARAM);
        }
        for (i = 0; i < npages; i++) {
            bt->pages[i] = addr + ((uint64_t)i << shift);
        }
        return QROCE_CMD_OK;
    case QROCE_BT_INLINE:
        if (!allow_inline || npages > QROCE_BT_MAX_INLINE || addr) {
            return qroce_bt_bad("INLINE npages", npages,
                                "not REG_MR, over 4 pages or addr set",
                                QROCE_CMD_ERR_PARAM);
        }
        for (i = 0; i < npages; i++) {
            bt->pages[i] = le64_to_cpu(inline_pages[i]);
        }
        return QROCE_CMD_OK;
    case QROCE_BT_LIST1:
        if (addr & 7) {
            return qroce_bt_bad("LIST1 addr", addr, "not 8-byte aligned",
                                QROCE_CMD_ERR_PARAM);
        }
        if (!qroce_dma_read(s, addr, bt->pages, (uint64_t)npages * 8)) {
            return qroce_bt_bad("LIST1 addr", addr, "not readable",
                                QROCE_CMD_ERR_DMA);
        }
        for (i = 0; i < npages; i++) {
            bt->pages[i] = le64_to_cpu(bt->pages[i]);
        }
        return QROCE_CMD_OK;
    case QROCE_BT_LIST2:
        return qroce_bt_read_list2(s, addr, bt);
    default:
        return qroce_bt_bad("level", gbt->level, "out of range",
                            QROCE_CMD_ERR_PARAM);
    }
}

/*
 * Copy a guest buffer table into @bt.  @inline_pages holds the page list
 * of an INLINE table (REG_MR only).  Returns a QROCE_CMD_* status.
 */
int qroce_bt_load(QRoceState *s, const struct qroce_bt *gbt,
                  const uint64_t *inline_pages, bool allow_inline,
                  bool allow_phys, QRoceBT *bt)
{
    uint32_t npages = le32_to_cpu(gbt->npages);
    uint8_t shift = gbt->page_shift;
    uint64_t mask;
    uint32_t i;
    int st;

    memset(bt, 0, sizeof(*bt));
    if (gbt->rsvd) {
        return qroce_bt_bad("rsvd", gbt->rsvd, "must be zero",
                            QROCE_CMD_ERR_PARAM);
    }
    if (gbt->level == QROCE_BT_PHYS) {
        if (!allow_phys) {
            return qroce_bt_bad("level", gbt->level, "PHYS is for REG_MR",
                                QROCE_CMD_ERR_PARAM);
        }
        bt->phys = true;
        return QROCE_CMD_OK;
    }
    if (shift < QROCE_BT_MIN_PAGE_SHIFT || shift > QROCE_BT_MAX_PAGE_SHIFT) {
        return qroce_bt_bad("page_shift", shift, "out of range",
                            QROCE_CMD_ERR_PARAM);
    }
    if (npages == 0 || npages > QROCE_BT_MAX_PAGES) {
        return qroce_bt_bad("npages", npages, "out of range",
                            QROCE_CMD_ERR_PARAM);
    }
    mask = (1ULL << shift) - 1;
    if (s->bt_pages + npages > s->params.max_bt_pages) {
        /* the device's translation memory is full (max-bt-pages) */
        trace_qroce_ub_bt("translation memory full", npages, s->bt_pages);
        return QROCE_CMD_ERR_NORES;
    }
    bt->pages = g_try_new(uint64_t, npages);
    if (!bt->pages) {
        return QROCE_CMD_ERR_NORES;
    }
    s->bt_pages += npages;
    s->bt_work += npages;
    bt->npages = npages;
    bt->page_shift = shift;

    st = qroce_bt_fill(s, gbt, inline_pages, allow_inline, bt);
    for (i = 0; st == QROCE_CMD_OK && i < npages; i++) {
        if (bt->pages[i] & mask) {
            st = qroce_bt_bad("page address", bt->pages[i],
                              "not aligned to the page size",
                              QROCE_CMD_ERR_PARAM);
        }
    }
    if (st != QROCE_CMD_OK) {
        qroce_bt_free(s, bt);
    }
    return st;
}

/* ------------------------------------------------------------------ */
/* Object tables and the state budget                                  */
/* ------------------------------------------------------------------ */

bool qroce_state_take(QRoceState *s, size_t bytes)
{
    uint64_t budget = (uint64_t)s->params.state_budget_mb << 20;

    if (bytes > budget || s->state_bytes > budget - bytes) {
        trace_qroce_state_budget(bytes, s->state_bytes, budget);
        return false;
    }
    s->state_bytes += bytes;
    return true;
}

void qroce_state_give(QRoceState *s, size_t bytes)
{
    assert(s->state_bytes >= bytes);
    s->state_bytes -= bytes;
}

void qroce_tbl_init(QRoceTable *t, uint32_t max, size_t size)
{
    t->max = max;
    t->size = size;
    t->count = 0;
    t->chunk = g_new0(QRoceTableChunk *,
                      DIV_ROUND_UP(max, QROCE_TBL_CHUNK));
    t->used = bitmap_new(max);
}

void qroce_tbl_fini(QRoceTable *t)
{
    uint32_t i;

    for (i = 0; i < DIV_ROUND_UP(t->max, QROCE_TBL_CHUNK); i++) {
        if (t->chunk[i]) {
            for (uint32_t k = 0; k < QROCE_TBL_CHUNK; k++) {
                g_free(t->chunk[i]->obj[k]);
            }
            g_free(t->chunk[i]);
        }
    }
    g_free(t->chunk);
    g_free(t->used);
    memset(t, 0, sizeof(*t));
}

void *qroce_tbl_get(const QRoceTable *t, uint32_t n)
{
    QRoceTableChunk *c;

    if (n >= t->max) {
        return NULL;
    }
    c = t->chunk[n >> QROCE_TBL_CHUNK_SHIFT];
    return c ? c->obj[n & (QROCE_TBL_CHUNK - 1)] : NULL;
}

uint32_t qroce_tbl_next(const QRoceTable *t, uint32_t n)
{
    return n >= t->max ? t->max : find_next_bit(t->used, t->max, n);
}

uint32_t qroce_tbl_free_number(const QRoceTable *t, uint32_t first,
                               uint32_t from)
{
    uint32_t n;

    if (from < first || from >= t->max) {
        from = first;
    }
    n = find_next_zero_bit(t->used, t->max, from);
    if (n >= t->max) {
        n = find_next_zero_bit(t->used, from, first);
    }
    return n < t->max && n >= first && !test_bit(n, t->used) ? n : 0;
}

uint32_t *qroce_tbl_stamp(QRoceTable *t, uint32_t n)
{
    QRoceTableChunk *c = t->chunk[n >> QROCE_TBL_CHUNK_SHIFT];

    return c ? &c->stamp[n & (QROCE_TBL_CHUNK - 1)] : NULL;
}

/* The chunk of number @n, made (and charged) if it has none yet. */
static QRoceTableChunk *qroce_tbl_chunk(QRoceState *s, QRoceTable *t,
                                        uint32_t n)
{
    QRoceTableChunk **c = &t->chunk[n >> QROCE_TBL_CHUNK_SHIFT];

    if (!*c) {
        if (!qroce_state_take(s, sizeof(**c))) {
            return NULL;
        }
        *c = g_try_new0(QRoceTableChunk, 1);
        if (!*c) {
            qroce_state_give(s, sizeof(**c));
        }
    }
    return *c;
}

/* The stamp word of number @n, its chunk made if it has none (migration). */
uint32_t *qroce_tbl_stamp_make(QRoceState *s, QRoceTable *t, uint32_t n)
{
    QRoceTableChunk *c = qroce_tbl_chunk(s, t, n);

    return c ? &c->stamp[n & (QROCE_TBL_CHUNK - 1)] : NULL;
}

void *qroce_tbl_alloc(QRoceState *s, QRoceTable *t, uint32_t n)
{
    QRoceTableChunk *c;
    void *obj;

    assert(n < t->max && !test_bit(n, t->used));
    c = qroce_tbl_chunk(s, t, n);
    if (!c || !qroce_state_take(s, t->size)) {
        return NULL;
    }
    obj = g_try_malloc0(t->size);
    if (!obj) {
        qroce_state_give(s, t->size);
        return NULL;
    }
    c->obj[n & (QROCE_TBL_CHUNK - 1)] = obj;
    set_bit(n, t->used);
    t->count++;
    return obj;
}

void qroce_tbl_free(QRoceState *s, QRoceTable *t, uint32_t n)
{
    QRoceTableChunk *c = t->chunk[n >> QROCE_TBL_CHUNK_SHIFT];

    assert(n < t->max && c && test_bit(n, t->used));
    g_free(c->obj[n & (QROCE_TBL_CHUNK - 1)]);
    c->obj[n & (QROCE_TBL_CHUNK - 1)] = NULL;
    clear_bit(n, t->used);
    t->count--;
    qroce_state_give(s, t->size);
}

/* ------------------------------------------------------------------ */
/* Objects                                                             */
/* ------------------------------------------------------------------ */

QRoceQP *qroce_qp_get(QRoceState *s, uint32_t qpn)
{
    QRoceQP *qp = qroce_tbl_get(&s->qps, qpn);

    return qp && qp->valid ? qp : NULL;
}

QRoceCQ *qroce_cq_get(QRoceState *s, uint32_t cqn)
{
    QRoceCQ *cq = qroce_tbl_get(&s->cqs, cqn);

    return cq && cq->valid ? cq : NULL;
}

QRoceAH *qroce_ah_get(QRoceState *s, uint32_t ahn)
{
    if (ahn >= s->params.max_ah || !s->ah[ahn].valid) {
        return NULL;
    }
    return &s->ah[ahn];
}

QRoceSRQ *qroce_srq_get(QRoceState *s, uint32_t srqn)
{
    QRoceSRQ *srq = qroce_tbl_get(&s->srqs, srqn);

    return srq && srq->valid ? srq : NULL;
}

QRoceWQ *qroce_qp_recv_wq(QRoceState *s, QRoceQP *qp, QRoceSRQ **srq)
{
    QRoceSRQ *q = NULL;

    if (qp->flags & QROCE_CREATE_QP_SRQ) {
        q = qroce_srq_get(s, qp->srqn);
    }
    if (srq) {
        *srq = q;
    }
    return q ? &q->wq : &qp->rq;
}

void qroce_srq_consumed(QRoceState *s, QRoceSRQ *srq)
{
    if (srq->limit && srq->wq.pi - srq->wq.ci < srq->limit) {
        srq->limit = 0;         /* one event per arming (MODIFY_SRQ) */
        qroce_async_event(s, QROCE_EQE_SRQ_LIMIT, srq->srqn, 0);
    }
}

QRocePD *qroce_pd_get(QRoceState *s, uint32_t pdn)
{
    if (pdn >= s->params.max_pd || !s->pd[pdn].valid) {
        return NULL;
    }
    return &s->pd[pdn];
}

/* The MR or window in the slot @key's index names, whatever its kind. */
static QRoceMR *qroce_mr_slot_get(QRoceState *s, uint32_t key)
{
    QRoceMR *mr = qroce_tbl_get(&s->mrs, key >> QROCE_MR_KEY_INDEX_SHIFT);

    return mr && mr->valid ? mr : NULL;
}

QRoceMR *qroce_mr_get(QRoceState *s, uint32_t key)
{
    QRoceMR *mr = qroce_mr_slot_get(s, key);

    return mr && !mr->mw_type && mr->key == key ? mr : NULL;
}

QRoceMR *qroce_mw_get(QRoceState *s, uint32_t key)
{
    QRoceMR *mr = qroce_mr_slot_get(s, key);

    return mr && mr->mw_type ? mr : NULL;
}

QRoceMR *qroce_frmr_get(QRoceState *s, uint32_t key)
{
    QRoceMR *mr = qroce_mr_slot_get(s, key);

    return mr && mr->frmr ? mr : NULL;
}

int qroce_mr_check(QRoceState *s, uint32_t key, uint32_t pdn, uint64_t va,
                   uint64_t len, uint32_t need_access, QRoceMR **out)
{
    QRoceMR *mr = qroce_mr_get(s, key);

    *out = mr;
    /* a FREE fast-registration MR gives no access of any kind */
    if (!mr || mr->pdn != pdn || (mr->frmr && !mr->frmr_valid)) {
        return QROCE_WC_LOC_PROT_ERR;
    }
    if ((mr->access & need_access) != need_access) {
        return QROCE_WC_LOC_PROT_ERR;
    }
    if (len == 0 || mr->bt.phys) {
        return QROCE_WC_SUCCESS;
    }
    if (va < mr->iova || va - mr->iova > mr->length ||
        len > mr->length - (va - mr->iova)) {
        return QROCE_WC_LOC_PROT_ERR;
    }
    return QROCE_WC_SUCCESS;
}

/* Is [va, va + len) inside [base, base + size)? */
static bool qroce_range_in(uint64_t va, uint64_t len, uint64_t base,
                           uint64_t size)
{
    return va >= base && va - base <= size && len <= size - (va - base);
}

int qroce_rkey_check(QRoceState *s, QRoceQP *qp, uint32_t key, uint64_t *va,
                     uint64_t len, uint32_t need_access, QRoceMR **out)
{
    QRoceMR *mw = qroce_mw_get(s, key);

    if (!mw) {
        return qroce_mr_check(s, key, qp->pdn, *va, len, need_access, out);
    }
    *out = NULL;
    if (mw->key != key || !mw->mw_bound || mw->pdn != qp->pdn ||
        (mw->mw_type == 2 && mw->mw_qpn != qp->qpn) ||
        (mw->access & need_access) != need_access ||
        (len && !qroce_range_in(*va, len, mw->iova, mw->length))) {
        return QROCE_WC_LOC_PROT_ERR;
    }
    /* the MR's address of it (a zero-based window's start at 0) */
    *va = *va - mw->iova + mw->mw_base;
    /*
     * The MR under it must be the registration it was bound to: gone,
     * FREE, invalidated or registered again (even with the same key)
     * refuses.
     */
    if (qroce_mr_check(s, mw->mw_mr_key, qp->pdn, *va, len, 0, out) ||
        (*out)->gen != mw->mw_mr_gen) {
        *out = NULL;
        return QROCE_WC_LOC_PROT_ERR;
    }
    return QROCE_WC_SUCCESS;
}

/*
 * @mr's translation or state changes: windows bound to it so far are
 * left unusable (qroce_rkey_check() compares the gen) and no longer keep
 * it from being deregistered.
 */
static void qroce_mr_new_gen(QRoceMR *mr)
{
    mr->gen = (mr->gen + 1) & QROCE_MR_GEN_MASK;
    mr->mw_refs = 0;
}

int qroce_mr_rw(QRoceState *s, QRoceMR *mr, uint64_t va, void *buf,
                uint64_t len, bool to_guest, QRoceOdpMiss *miss)
{
    uint64_t off = va - mr->iova + mr->first_page_offset;
    uint64_t at;
    int ret;

    if (!buf && !mr->bt.is_odp) {
        return 0;           /* a probe: only ODP tables have holes */
    }
    if (mr->bt.phys) {
        return qroce_bt_rw(s, &mr->bt, va, buf, len, to_guest);
    }
    if (!mr->bt.is_odp) {
        return qroce_bt_rw(s, &mr->bt, off, buf, len, to_guest);
    }
    if (!mr->bt.odp) {
        return -1;
    }
    ret = qroce_odp_rw(s, &mr->bt, off, buf, len, to_guest, &at);
    if (ret == QROCE_RW_FAULT && miss) {
        *miss = (QRoceOdpMiss) {
            .key = mr->key, .write = to_guest, .va = va + (at - off),
            .end = va + len,
        };
    }
    return ret;
}

/* ------------------------------------------------------------------ */
/* Fast registration                                                   */
/* ------------------------------------------------------------------ */

int qroce_frmr_alloc(QRoceState *s, QRoceMR *mr, uint32_t max_pages)
{
    if (s->bt_pages + max_pages > s->params.max_bt_pages) {
        trace_qroce_ub_bt("translation memory full", max_pages, s->bt_pages);
        return QROCE_CMD_ERR_NORES;
    }
    memset(&mr->bt, 0, sizeof(mr->bt));
    mr->bt.pages = g_try_new0(uint64_t, max_pages);
    if (!mr->bt.pages) {
        return QROCE_CMD_ERR_NORES;
    }
    s->bt_pages += max_pages;
    mr->max_pages = max_pages;
    mr->frmr = true;
    mr->frmr_valid = false;
    return QROCE_CMD_OK;
}

void qroce_mr_free(QRoceState *s, QRoceMR *mr)
{
    if (mr->frmr) {
        s->bt_pages -= mr->max_pages;
        g_free(mr->bt.pages);
    } else {
        qroce_bt_free(s, &mr->bt);
    }
    /*
     * the slot's next keys and generations differ from this MR's: a key
     * or a window bound to it never names the next MR of the slot
     */
    *qroce_tbl_stamp(&s->mrs, mr->idx) =
        mr->variant | ((mr->gen + 1) & QROCE_MR_GEN_MASK) << 8;
    qroce_tbl_free(s, &s->mrs, mr->idx);
}

/* Remote write and atomic access need local write (ib_check_mr_access). */
static bool qroce_access_ok(uint32_t access)
{
    return !(access & ~QROCE_ACCESS_MASK) &&
           (!(access & (QROCE_ACCESS_REMOTE_WRITE |
                        QROCE_ACCESS_REMOTE_ATOMIC)) ||
            (access & QROCE_ACCESS_LOCAL_WRITE));
}

/*
 * The page list of a REG_MR work request into @mr's own copy: @npages
 * addresses at @pbl, each aligned to the page size (@mask + 1).  A
 * QROCE_WC_* status, *@why the field at fault.
 */
static int qroce_frmr_load_pages(QRoceState *s, QRoceMR *mr, uint64_t pbl,
                                 uint32_t npages, uint64_t mask,
                                 const char **why)
{
    uint32_t i;

    if ((pbl & 7) ||
        !qroce_dma_read(s, pbl, mr->bt.pages, (uint64_t)npages * 8)) {
        *why = "pbl_addr";
        return QROCE_WC_LOC_LEN_ERR;
    }
    for (i = 0; i < npages; i++) {
        mr->bt.pages[i] = le64_to_cpu(mr->bt.pages[i]);
        if (mr->bt.pages[i] & mask) {
            *why = "page address";
            return QROCE_WC_LOC_LEN_ERR;
        }
    }
    return QROCE_WC_SUCCESS;
}

int qroce_frmr_reg(QRoceState *s, uint32_t pdn,
                   const struct qroce_send_wqe *w, const char **why)
{
    uint32_t key = le32_to_cpu(w->reg.key);
    uint32_t access = le32_to_cpu(w->reg.access);
    uint32_t npages = le16_to_cpu(w->reg.npages);
    uint8_t shift = w->reg.page_shift;
    uint64_t iova = le64_to_cpu(w->reg.iova);
    uint64_t length = le32_to_cpu(w->reg.length);
    QRoceMR *mr = qroce_frmr_get(s, key);
    uint64_t mask;
    int st;

    *why = !mr ? "key" : mr->pdn != pdn ? "pd" :
           mr->frmr_valid ? "state (not FREE)" :
           !qroce_access_ok(access) ? "access" : NULL;
    if (*why) {
        return QROCE_WC_LOC_PROT_ERR;
    }
    if (npages == 0 || npages > mr->max_pages) {
        *why = "npages";
        return QROCE_WC_LOC_LEN_ERR;
    }
    if (shift < QROCE_BT_MIN_PAGE_SHIFT || shift > QROCE_BT_MAX_PAGE_SHIFT) {
        *why = "page_shift";
        return QROCE_WC_LOC_LEN_ERR;
    }
    mask = (1ULL << shift) - 1;
    if (iova + length < iova ||
        (iova & mask) + length > ((uint64_t)npages << shift)) {
        *why = "length";
        return QROCE_WC_LOC_LEN_ERR;
    }
    st = qroce_frmr_load_pages(s, mr, le64_to_cpu(w->reg.pbl_addr), npages,
                               mask, why);
    if (st != QROCE_WC_SUCCESS) {
        return st;
    }
    mr->key = key;
    mr->access = access;
    mr->iova = iova;
    mr->length = length;
    mr->first_page_offset = iova & mask;
    mr->bt.npages = npages;
    mr->bt.page_shift = shift;
    mr->frmr_valid = true;
    qroce_mr_new_gen(mr);
    qroce_count(s, QROCE_CNT_FAST_REGS);
    return QROCE_WC_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* Memory windows                                                      */
/* ------------------------------------------------------------------ */

/* Unbind window @mw: its MR (if still there) loses a reference. */
void qroce_mw_unbind(QRoceState *s, QRoceMR *mw)
{
    QRoceMR *mr = qroce_mr_slot_get(s, mw->mw_mr_key);

    if (mw->mw_bound && mr && mr->gen == mw->mw_mr_gen && mr->mw_refs) {
        mr->mw_refs--;
    }
    mw->mw_bound = false;
    mw->mw_qpn = mw->mw_mr_key = mw->mw_mr_gen = 0;
    mw->iova = mw->length = mw->mw_base = 0;
    mw->access = 0;
}

void qroce_mw_qp_gone(QRoceState *s, uint32_t qpn)
{
    uint32_t i;

    QROCE_TBL_FOREACH(&s->mrs, i) {
        QRoceMR *mw = qroce_tbl_get(&s->mrs, i);

        if (mw->valid && mw->mw_type == 2 && mw->mw_bound &&
            mw->mw_qpn == qpn) {
            qroce_mw_unbind(s, mw);
        }
    }
}

/* Why a BIND_MW of @mw to @mr for @qp is refused, or NULL. */
static const char *qroce_mw_bind_bad(QRoceQP *qp, QRoceMR *mw, QRoceMR *mr,
                                     uint32_t access, uint64_t addr,
                                     uint64_t length)
{
    uint32_t remote = QROCE_ACCESS_REMOTE_WRITE | QROCE_ACCESS_REMOTE_READ |
                      QROCE_ACCESS_REMOTE_ATOMIC;

    if (qp->type != QROCE_QPT_RC && qp->type != QROCE_QPT_UC) {
        return "QP type (RC and UC bind windows)";
    }
    if (!mw || mw->pdn != qp->pdn) {
        return "mw_key";
    }
    if (mw->mw_type == 2 && mw->mw_bound) {
        return "state (a type 2 window bound already)";
    }
    if (mw->mw_type == 2 && !length) {
        return "length (0 unbinds type 1 windows only)";
    }
    if (!length) {
        return NULL;
    }
    if (!mr || mr->pdn != qp->pdn || (mr->frmr && !mr->frmr_valid) ||
        !(mr->access & QROCE_ACCESS_MW_BIND) || mr->bt.phys) {
        return "mr_lkey";
    }
    if ((access & ~(remote | QROCE_ACCESS_ZERO_BASED)) ||
        ((access & (QROCE_ACCESS_REMOTE_WRITE | QROCE_ACCESS_REMOTE_ATOMIC)) &&
         !(mr->access & QROCE_ACCESS_LOCAL_WRITE))) {
        return "access";
    }
    if (addr + length < addr ||
        !qroce_range_in(addr, length, mr->iova, mr->length)) {
        return "range (outside the MR)";
    }
    return NULL;
}

int qroce_mw_bind(QRoceState *s, QRoceQP *qp, const struct qroce_send_wqe *w,
                  const char **why)
{
    uint32_t mw_key = le32_to_cpu(w->bind.mw_key);
    uint32_t new_key = le32_to_cpu(w->bind.new_key);
    uint32_t mr_key = le32_to_cpu(w->bind.mr_lkey);
    uint32_t access = le32_to_cpu(w->bind.access);
    uint64_t addr = le64_to_cpu(w->bind.addr);
    uint64_t length = le64_to_cpu(w->bind.length);
    QRoceMR *mw = qroce_mw_get(s, mw_key);
    QRoceMR *mr = qroce_mr_get(s, mr_key);

    if (mw && mw->mw_type == 2 && mw->key != mw_key) {
        mw = NULL;              /* type 2: the whole key names it */
    }
    *why = qroce_mw_bind_bad(qp, mw, mr, access, addr, length);
    if (*why) {
        return QROCE_WC_MW_BIND_ERR;
    }
    qroce_mw_unbind(s, mw);     /* type 1: a new bind replaces the old */
    /* the key portion (variant byte) of new_key; the index stays */
    mw->key = (mw->key & ~QROCE_MR_VARIANT_MASK) |
              (new_key & QROCE_MR_VARIANT_MASK);
    if (length) {
        mw->mw_bound = true;
        mw->mw_qpn = qp->qpn;
        mw->mw_mr_key = mr_key;
        mw->mw_mr_gen = mr->gen;
        mw->mw_base = addr;
        mw->iova = access & QROCE_ACCESS_ZERO_BASED ? 0 : addr;
        mw->length = length;
        mw->access = access & ~QROCE_ACCESS_ZERO_BASED;
        mr->mw_refs++;
    }
    return QROCE_WC_SUCCESS;
}

int qroce_key_inv(QRoceState *s, QRoceQP *qp, uint32_t key, const char **why)
{
    QRoceMR *mw = qroce_mw_get(s, key);

    if (mw) {
        *why = mw->key != key ? "key" : mw->pdn != qp->pdn ? "pd" :
               mw->mw_type != 2 ? "a type 1 window" :
               !mw->mw_bound ? "state (not bound)" :
               mw->mw_qpn != qp->qpn ? "a window bound to another QP" : NULL;
        if (*why) {
            return QROCE_WC_LOC_PROT_ERR;
        }
        qroce_mw_unbind(s, mw);
        return QROCE_WC_SUCCESS;
    }
    return qroce_frmr_inv(s, qp->pdn, key, why);
}

int qroce_frmr_inv(QRoceState *s, uint32_t pdn, uint32_t key,
                   const char **why)
{
    QRoceMR *mr = qroce_frmr_get(s, key);

    *why = !mr || mr->key != key ? "key" : mr->pdn != pdn ? "pd" :
           !mr->frmr_valid ? "state (not VALID)" : NULL;
    if (*why) {
        return QROCE_WC_LOC_PROT_ERR;
    }
    mr->frmr_valid = false;
    mr->bt.npages = 0;
    mr->access = 0;
    mr->iova = mr->length = 0;
    mr->first_page_offset = 0;
    qroce_mr_new_gen(mr);
    return QROCE_WC_SUCCESS;
}

bool qroce_gid_get(QRoceState *s, unsigned idx, uint8_t gid[16])
{
    if (idx >= QROCE_DEF_MAX_GID || !s->gid[idx].valid) {
        return false;
    }
    memcpy(gid, s->gid[idx].gid, 16);
    return true;
}

int qroce_gid_find(QRoceState *s, const uint8_t gid[16])
{
    int i;

    for (i = 0; i < QROCE_DEF_MAX_GID; i++) {
        if (s->gid[i].valid && !memcmp(s->gid[i].gid, gid, 16)) {
            return i;
        }
    }
    return -1;
}

/* ------------------------------------------------------------------ */
/* Multicast groups                                                    */
/* ------------------------------------------------------------------ */

/* A multicast GID: IPv6 ff00::/8, or IPv4-mapped 224.0.0.0/4. */
bool qroce_gid_is_mcast(const uint8_t gid[16])
{
    static const uint8_t v4[12] = { [10] = 0xff, [11] = 0xff };

    if (!memcmp(gid, v4, sizeof(v4))) {
        return (gid[12] & 0xf0) == 0xe0;
    }
    return gid[0] == 0xff;
}

/*
 * The Ethernet MAC of multicast GID @gid: 01:00:5e and the low 23 bits of
 * an IPv4 group, 33:33 and the low 32 bits of an IPv6 one (RFC 1112, 2464).
 */
void qroce_mcast_mac(const uint8_t gid[16], uint8_t mac[6])
{
    static const uint8_t v4[12] = { [10] = 0xff, [11] = 0xff };

    if (!memcmp(gid, v4, sizeof(v4))) {
        mac[0] = 0x01;
        mac[1] = 0x00;
        mac[2] = 0x5e;
        mac[3] = gid[13] & 0x7f;
        mac[4] = gid[14];
        mac[5] = gid[15];
        return;
    }
    mac[0] = mac[1] = 0x33;
    memcpy(mac + 2, gid + 12, 4);
}

/* The group of @gid, or NULL. */
QRoceMcast *qroce_mcast_find(QRoceState *s, const uint8_t gid[16])
{
    unsigned i;

    for (i = 0; i < s->params.mcast_max_groups; i++) {
        if (s->mcast[i].nqp && !memcmp(s->mcast[i].gid, gid, 16)) {
            return &s->mcast[i];
        }
    }
    return NULL;
}

/*
 * Attach QP @qpn to the group of @gid, making the group if needed: a
 * QROCE_CMD_* status (ERR_NORES when the table or the group is full).
 * Attaching twice changes nothing.
 */
int qroce_mcast_attach(QRoceState *s, const uint8_t gid[16], uint32_t qpn)
{
    QRoceMcast *g = qroce_mcast_find(s, gid);
    unsigned i;

    if (!g) {
        for (i = 0; i < s->params.mcast_max_groups && !g; i++) {
            if (!s->mcast[i].nqp) {
                g = &s->mcast[i];
            }
        }
        if (!g) {
            return QROCE_CMD_ERR_NORES;
        }
        memcpy(g->gid, gid, 16);
    }
    for (i = 0; i < g->nqp; i++) {
        if (g->qpn[i] == qpn) {
            return QROCE_CMD_OK;
        }
    }
    if (g->nqp == s->params.mcast_max_qp_attach) {
        return QROCE_CMD_ERR_NORES;
    }
    g->qpn[g->nqp++] = qpn;
    return QROCE_CMD_OK;
}

/* Detach QP @qpn from the group of @gid: false if it was not attached. */
bool qroce_mcast_detach(QRoceState *s, const uint8_t gid[16], uint32_t qpn)
{
    QRoceMcast *g = qroce_mcast_find(s, gid);
    unsigned i;

    for (i = 0; g && i < g->nqp; i++) {
        if (g->qpn[i] == qpn) {
            g->qpn[i] = g->qpn[--g->nqp];
            return true;
        }
    }
    return false;
}

/* QP @qpn leaves every group (it is being destroyed). */
void qroce_mcast_detach_all(QRoceState *s, uint32_t qpn)
{
    unsigned i;

    for (i = 0; i < s->params.mcast_max_groups; i++) {
        if (s->mcast[i].nqp) {
            qroce_mcast_detach(s, s->mcast[i].gid, qpn);
        }
    }
}

/* ------------------------------------------------------------------ */
/* Buffer tables of new objects                                        */
/* ------------------------------------------------------------------ */

/* Does table @gbt hold exactly the pages of @bytes from offset @fpo? */
bool qroce_bt_exact(const struct qroce_bt *gbt, uint64_t fpo,
                    uint64_t bytes)
{
    uint8_t shift = gbt->page_shift;

    if (gbt->level == QROCE_BT_PHYS) {
        return true;
    }
    if (shift < QROCE_BT_MIN_PAGE_SHIFT || shift > QROCE_BT_MAX_PAGE_SHIFT) {
        qroce_bt_bad("page_shift", shift, "out of range", 0);
        return false;
    }
    if (bytes > ((uint64_t)QROCE_BT_MAX_PAGES << shift) ||
        fpo >= (1ULL << shift) ||
        le32_to_cpu(gbt->npages) !=
        MAX(1, DIV_ROUND_UP(fpo + bytes, 1ULL << shift))) {
        trace_qroce_ub_bt("table does not match its object",
                          le32_to_cpu(gbt->npages), bytes);
        return false;
    }
    return true;
}

int qroce_ring_bt(QRoceState *s, const struct qroce_bt *gbt,
                  uint64_t bytes, QRoceBT *bt)
{
    /* exactly the pages the ring needs: no more, no less */
    if (!qroce_bt_exact(gbt, 0, bytes)) {
        memset(bt, 0, sizeof(*bt));
        return QROCE_CMD_ERR_PARAM;
    }
    return qroce_bt_load(s, gbt, NULL, false, false, bt);
}

int qroce_wq_load(QRoceState *s, const struct qroce_bt *gbt,
                  uint8_t log2, uint8_t shift, uint8_t min_shift,
                  uint8_t max_shift, QRoceWQ *wq)
{
    memset(wq, 0, sizeof(*wq));
    if (log2 > QROCE_WQ_MAX_LOG2) {
        return qroce_bt_bad("ring log2_entries", log2, "out of range",
                            QROCE_CMD_ERR_PARAM);
    }
    if (shift < min_shift || shift > max_shift) {
        return qroce_bt_bad("ring wqe_shift", shift, "out of range",
                            QROCE_CMD_ERR_PARAM);
    }
    wq->log2 = log2;
    wq->wqe_shift = shift;
    return qroce_ring_bt(s, gbt, 1ULL << (log2 + shift), &wq->bt);
}
