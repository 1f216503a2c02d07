/*
 * qroce: the commands of protection domains, memory regions and windows:
 * ALLOC_PD, DEALLOC_PD, REG_MR, ALLOC_MR, DEREG_MR, REREG_MR, ALLOC_MW,
 * DEALLOC_MW (docs/hw-spec.md §3).  Each checks every value the guest
 * supplies before use and answers with a status.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/bswap.h"
#include "qroce_cmd.h"
#include "qroce_objects.h"
#include "qroce_data.h"
#include "qroce_ring.h"
#include "trace.h"

int qroce_cmd_alloc_pd(QRoceState *s, const struct qroce_cmd *c,
                       uint32_t *out)
{
    uint32_t i;

    for (i = 1; i < s->params.max_pd; i++) {
        if (!s->pd[i].valid) {
            s->pd[i].valid = true;
            s->pd[i].refs = 0;
            out[0] = i;
            return QROCE_CMD_OK;
        }
    }
    return qroce_cmd_bad(c, "pdn", s->params.max_pd, FULL, QROCE_CMD_ERR_NORES);
}

int qroce_cmd_dealloc_pd(QRoceState *s, const struct qroce_cmd *c,
                         uint32_t *out)
{
    uint32_t pdn = le32_to_cpu(c->handle.handle);
    QRocePD *pd = qroce_pd_get(s, pdn);

    if (!pd) {
        return qroce_cmd_bad(c, "pdn", pdn, NOOBJ, QROCE_CMD_ERR_HANDLE);
    }
    if (pd->refs) {
        return qroce_cmd_bad(c, "pdn", pdn, "MRs, QPs, AHs or SRQs use it",
                             QROCE_CMD_ERR_BUSY);
    }
    pd->valid = false;
    return QROCE_CMD_OK;
}

/*
 * An MR slot for a new MR of PD @pdn: the next free one after the last
 * one given (a key comes back late), in *@mr, its index in *@idx.  A
 * QROCE_CMD_* status.
 */
static int qroce_mr_slot(QRoceState *s, const struct qroce_cmd *c,
                         uint32_t pdn, QRoceMR **mr, uint32_t *idx)
{
    uint32_t i, stamp;

    if (!qroce_pd_get(s, pdn)) {
        return qroce_cmd_bad(c, "pdn", pdn, NOOBJ, QROCE_CMD_ERR_HANDLE);
    }
    i = qroce_tbl_free_number(&s->mrs, 1, s->next_mr);
    *mr = i ? qroce_tbl_alloc(s, &s->mrs, i) : NULL;
    if (!*mr) {
        return qroce_cmd_bad(c, "key", s->mrs.max, i ? BUDGET : FULL,
                             QROCE_CMD_ERR_NORES);
    }
    s->next_mr = i + 1;
    stamp = *qroce_tbl_stamp(&s->mrs, i);
    (*mr)->idx = i;
    (*mr)->variant = stamp & 0xff;  /* keys of the slot stay unique */
    (*mr)->gen = stamp >> 8;
    *idx = i;
    return QROCE_CMD_OK;
}

/*
 * REG_MR on device memory (QROCE_BT_DM): the MR's bytes are
 * dm[addr, addr + length), which must lie inside the device's memory; no
 * page list.  A QROCE_CMD_* status.
 */
static int qroce_reg_mr_dm(QRoceState *s, const struct qroce_cmd *c,
                           QRoceBT *bt)
{
    const struct qroce_cmd_reg_mr *p = &c->reg_mr;
    uint64_t off = le64_to_cpu(p->pages.addr);
    uint64_t length = le64_to_cpu(p->length);

    memset(bt, 0, sizeof(*bt));
    if (!s->dm) {
        return qroce_cmd_bad(c, "pages.level", p->pages.level,
                             "the device has no device memory",
                             QROCE_CMD_ERR_PARAM);
    }
    if (p->pages.npages || p->pages.page_shift || p->pages.rsvd ||
        p->first_page_offset) {
        return qroce_cmd_bad(c, "pages", le32_to_cpu(p->pages.npages),
                             "a DM table has no pages, shift or offset",
                             QROCE_CMD_ERR_PARAM);
    }
    if (off > s->params.dm_size || length > s->params.dm_size - off) {
        return qroce_cmd_bad(c, "pages.addr", off,
                             "past the end of device memory",
                             QROCE_CMD_ERR_PARAM);
    }
    bt->dm = true;
    bt->dm_off = off;
    bt->dm_len = length;
    return QROCE_CMD_OK;
}

/*
 * REG_MR with on-demand paging (QROCE_BT_ODP): an empty table of the
 * MR's 4 KiB pages, or of the whole address space (implicit: iova 0,
 * length 2^64 - 1).  A QROCE_CMD_* status.
 */
static int qroce_reg_mr_odp(QRoceState *s, const struct qroce_cmd *c,
                            QRoceBT *bt)
{
    const struct qroce_cmd_reg_mr *p = &c->reg_mr;
    uint64_t iova = le64_to_cpu(p->iova), length = le64_to_cpu(p->length);
    uint32_t fpo = le32_to_cpu(p->first_page_offset);
    bool implicit = !iova && length == UINT64_MAX;

    memset(bt, 0, sizeof(*bt));
    if (p->pages.addr || p->pages.npages || p->pages.rsvd ||
        p->pages.page_shift != QROCE_ODP_PAGE_SHIFT) {
        return qroce_cmd_bad(c, "pages", le32_to_cpu(p->pages.npages),
                             "an ODP table has no pages, 4 KiB shift",
                             QROCE_CMD_ERR_PARAM);
    }
    if (fpo >= (1u << QROCE_ODP_PAGE_SHIFT) || (implicit && fpo)) {
        return qroce_cmd_bad(c, "first_page_offset", fpo, RANGE,
                             QROCE_CMD_ERR_PARAM);
    }
    return qroce_odp_init(s, bt, implicit ?
                          1ull << (64 - QROCE_ODP_PAGE_SHIFT) :
                          DIV_ROUND_UP(fpo + length,
                                       1ull << QROCE_ODP_PAGE_SHIFT));
}

/* REG_MR's page table, loaded into @mr; a QROCE_CMD_* status. */
static int qroce_reg_mr_pages(QRoceState *s, const struct qroce_cmd *c,
                              QRoceMR *mr)
{
    const struct qroce_cmd_reg_mr *p = &c->reg_mr;
    uint32_t access = le32_to_cpu(p->access);
    int st;

    if (p->pages.level == QROCE_BT_DM) {
        return qroce_reg_mr_dm(s, c, &mr->bt);
    }
    if (p->pages.level == QROCE_BT_ODP) {
        return qroce_reg_mr_odp(s, c, &mr->bt);
    }
    if (!p->length && !p->pages.npages && p->pages.level == QROCE_BT_CONTIG &&
        !p->pages.addr && !p->pages.rsvd && !p->first_page_offset) {
        /* 0 bytes: no pages; only accesses of 0 bytes reach it */
        memset(&mr->bt, 0, sizeof(mr->bt));
        mr->bt.page_shift = QROCE_BT_MIN_PAGE_SHIFT;
        return QROCE_CMD_OK;
    }
    if (!qroce_bt_exact(&p->pages, le32_to_cpu(p->first_page_offset),
                        le64_to_cpu(p->length))) {
        /* the table covers exactly the MR */
        return qroce_cmd_bad(c, "pages.npages", le32_to_cpu(p->pages.npages),
                             "not the MR's pages", QROCE_CMD_ERR_PARAM);
    }
    st = qroce_bt_load(s, &p->pages, p->inline_pages, true, true, &mr->bt);
    if (st != QROCE_CMD_OK) {
        return st;
    }
    if (mr->bt.phys && (access & ~QROCE_ACCESS_LOCAL_WRITE)) {
        return qroce_cmd_bad(c, "access", access, "remote access to a PHYS MR",
                             QROCE_CMD_ERR_PARAM);
    }
    return QROCE_CMD_OK;
}

int qroce_cmd_reg_mr(QRoceState *s, const struct qroce_cmd *c,
                     uint32_t *out)
{
    const struct qroce_cmd_reg_mr *p = &c->reg_mr;
    uint32_t pdn = le32_to_cpu(p->pdn);
    uint32_t access = le32_to_cpu(p->access);
    uint64_t iova = le64_to_cpu(p->iova);
    uint64_t length = le64_to_cpu(p->length);
    uint32_t fpo = le32_to_cpu(p->first_page_offset);
    QRoceMR *mr = NULL;
    uint32_t i = 0;
    int st;

    if (access & ~QROCE_ACCESS_MASK) {
        return qroce_cmd_bad(c, "access", access, RANGE, QROCE_CMD_ERR_PARAM);
    }
    if (p->rsvd) {
        return qroce_cmd_bad(c, "rsvd", p->rsvd, MBZ, QROCE_CMD_ERR_PARAM);
    }
    if (iova + length < iova) {
        return qroce_cmd_bad(c, "length", length, "iova + length wraps",
                             QROCE_CMD_ERR_PARAM);
    }
    st = qroce_mr_slot(s, c, pdn, &mr, &i);
    if (st != QROCE_CMD_OK) {
        return st;
    }
    st = qroce_reg_mr_pages(s, c, mr);
    if (st != QROCE_CMD_OK) {
        qroce_mr_free(s, mr);
        return st;
    }
    mr->variant++;
    mr->key = (i << QROCE_MR_KEY_INDEX_SHIFT) | mr->variant;
    mr->pdn = pdn;
    mr->access = access;
    mr->iova = iova;
    mr->length = length;
    mr->first_page_offset = fpo;
    mr->valid = true;
    s->pd[pdn].refs++;
    out[0] = mr->key;
    return QROCE_CMD_OK;
}

/*
 * ALLOC_MR: a FREE fast-registration MR with room for @max_pages page
 * addresses, its key of variant 0; REG_MR work requests load it.
 */
int qroce_cmd_alloc_mr(QRoceState *s, const struct qroce_cmd *c,
                       uint32_t *out)
{
    const struct qroce_cmd_alloc_mr *p = &c->alloc_mr;
    uint32_t pdn = le32_to_cpu(p->pdn);
    uint32_t max_pages = le32_to_cpu(p->max_pages);
    QRoceMR *mr = NULL;
    uint32_t i = 0;
    int st;

    if (max_pages == 0 || max_pages > QROCE_DEF_MAX_FRMR_PAGES) {
        return qroce_cmd_bad(c, "max_pages", max_pages,
                             "0 or above CAP_MAX_FRMR_PAGES",
                             QROCE_CMD_ERR_PARAM);
    }
    st = qroce_mr_slot(s, c, pdn, &mr, &i);
    if (st != QROCE_CMD_OK) {
        return st;
    }
    st = qroce_frmr_alloc(s, mr, max_pages);
    if (st != QROCE_CMD_OK) {
        qroce_mr_free(s, mr);
        return st;
    }
    mr->key = i << QROCE_MR_KEY_INDEX_SHIFT;
    mr->pdn = pdn;
    mr->valid = true;
    s->pd[pdn].refs++;
    out[0] = mr->key;
    trace_qroce_alloc_mr(mr->key, pdn, max_pages);
    return QROCE_CMD_OK;
}

/*
 * DEREG_MR.  A fast-registration MR is named by its index alone: its
 * variant is the consumer's (REG_MR work requests), and one that never
 * executed must not leave the MR undeletable.
 */
int qroce_cmd_dereg_mr(QRoceState *s, const struct qroce_cmd *c,
                       uint32_t *out)
{
    uint32_t key = le32_to_cpu(c->key.key);
    QRoceMR *mr = qroce_mr_get(s, key);

    if (!mr) {
        mr = qroce_frmr_get(s, key);
    }
    if (!mr) {
        return qroce_cmd_bad(c, "key", key, qroce_mw_get(s, key) ?
                             "a memory window (DEALLOC_MW)" : NOOBJ,
                             qroce_mw_get(s, key) ? QROCE_CMD_ERR_PARAM :
                             QROCE_CMD_ERR_HANDLE);
    }
    if (mr->mw_refs) {
        return qroce_cmd_bad(c, "key", key, "memory windows bound to it",
                             QROCE_CMD_ERR_BUSY);
    }
    s->pd[mr->pdn].refs--;
    qroce_mr_free(s, mr);
    return QROCE_CMD_OK;
}

/* ALLOC_MW: an unbound window of type 1 or 2 in a PD, in an MR slot. */
int qroce_cmd_alloc_mw(QRoceState *s, const struct qroce_cmd *c,
                       uint32_t *out)
{
    uint32_t pdn = le32_to_cpu(c->alloc_mw.pdn);
    uint32_t type = le32_to_cpu(c->alloc_mw.type);
    QRoceMR *mw = NULL;
    uint32_t i = 0;
    int st;

    if (type != 1 && type != 2) {
        return qroce_cmd_bad(c, "type", type, RANGE, QROCE_CMD_ERR_PARAM);
    }
    st = qroce_mr_slot(s, c, pdn, &mw, &i);
    if (st != QROCE_CMD_OK) {
        return st;
    }
    mw->variant++;
    mw->key = (i << QROCE_MR_KEY_INDEX_SHIFT) | mw->variant;
    mw->pdn = pdn;
    mw->mw_type = type;
    mw->valid = true;
    s->pd[pdn].refs++;
    out[0] = mw->key;
    trace_qroce_alloc_mw(mw->key, pdn, type);
    return QROCE_CMD_OK;
}

/* DEALLOC_MW: named by its index (its variant is the consumer's). */
int qroce_cmd_dealloc_mw(QRoceState *s, const struct qroce_cmd *c,
                         uint32_t *out)
{
    uint32_t key = le32_to_cpu(c->key.key);
    QRoceMR *mw = qroce_mw_get(s, key);

    if (!mw) {
        return qroce_cmd_bad(c, "key", key, NOOBJ, QROCE_CMD_ERR_HANDLE);
    }
    qroce_mw_unbind(s, mw);
    s->pd[mw->pdn].refs--;
    mw->variant = mw->key & 0xff;   /* the next key of the slot differs */
    qroce_mr_free(s, mw);
    return QROCE_CMD_OK;
}

/* REREG_MR's TRANS part: the new range checked, its pages in *@bt. */
static int qroce_rereg_trans(QRoceState *s, const struct qroce_cmd *c,
                             QRoceBT *bt)
{
    const struct qroce_cmd_reg_mr *p = &c->rereg_mr.mr;
    uint64_t iova = le64_to_cpu(p->iova);
    uint64_t length = le64_to_cpu(p->length);

    if (p->rsvd) {
        return qroce_cmd_bad(c, "rsvd", p->rsvd, MBZ, QROCE_CMD_ERR_PARAM);
    }
    if (iova + length < iova) {
        return qroce_cmd_bad(c, "length", length, "iova + length wraps",
                             QROCE_CMD_ERR_PARAM);
    }
    if (!qroce_bt_exact(&p->pages, le32_to_cpu(p->first_page_offset),
                        length)) {
        return qroce_cmd_bad(c, "pages.npages", le32_to_cpu(p->pages.npages),
                             "not the MR's pages", QROCE_CMD_ERR_PARAM);
    }
    return qroce_bt_load(s, &p->pages, p->inline_pages, true, true, bt);
}

/*
 * REREG_MR: an MR of the REG_MR command gets new pages and range, PD or
 * access in place, keeping its key; on any error it stays as it was.
 */
int qroce_cmd_rereg_mr(QRoceState *s, const struct qroce_cmd *c,
                       uint32_t *out)
{
    const struct qroce_cmd_rereg_mr *p = &c->rereg_mr;
    uint32_t key = le32_to_cpu(p->key), flags = le32_to_cpu(p->flags);
    QRoceMR *mr = qroce_mr_get(s, key);
    uint32_t pdn, access;
    QRoceBT bt;
    int st;

    if (!mr || mr->frmr) {
        return qroce_cmd_bad(c, "key", key, mr ? "a fast-registration MR" :
                             NOOBJ, QROCE_CMD_ERR_HANDLE);
    }
    if (mr->mw_refs) {
        return qroce_cmd_bad(c, "key", key, "memory windows bound to it",
                             QROCE_CMD_ERR_BUSY);
    }
    if (!flags || (flags & ~(QROCE_REREG_TRANS | QROCE_REREG_PD |
                             QROCE_REREG_ACCESS))) {
        return qroce_cmd_bad(c, "flags", flags, RANGE, QROCE_CMD_ERR_PARAM);
    }
    pdn = flags & QROCE_REREG_PD ? le32_to_cpu(p->mr.pdn) : mr->pdn;
    access = flags & QROCE_REREG_ACCESS ? le32_to_cpu(p->mr.access) :
             mr->access;
    if (!qroce_pd_get(s, pdn)) {
        return qroce_cmd_bad(c, "pdn", pdn, NOOBJ, QROCE_CMD_ERR_HANDLE);
    }
    if (access & ~QROCE_ACCESS_MASK) {
        return qroce_cmd_bad(c, "access", access, RANGE, QROCE_CMD_ERR_PARAM);
    }
    memset(&bt, 0, sizeof(bt));
    if (flags & QROCE_REREG_TRANS) {
        st = qroce_rereg_trans(s, c, &bt);
        if (st != QROCE_CMD_OK) {
            return st;
        }
    }
    if ((flags & QROCE_REREG_TRANS ? bt.phys : mr->bt.phys) &&
        (access & ~QROCE_ACCESS_LOCAL_WRITE)) {
        qroce_bt_free(s, &bt);
        return qroce_cmd_bad(c, "access", access, "remote access to a PHYS MR",
                             QROCE_CMD_ERR_PARAM);
    }
    if (flags & QROCE_REREG_TRANS) {
        qroce_bt_free(s, &mr->bt);
        mr->bt = bt;
        mr->iova = le64_to_cpu(p->mr.iova);
        mr->length = le64_to_cpu(p->mr.length);
        mr->first_page_offset = le32_to_cpu(p->mr.first_page_offset);
    }
    s->pd[mr->pdn].refs--;
    s->pd[pdn].refs++;
    mr->pdn = pdn;
    mr->access = access;
    mr->gen++;              /* no windows are bound (ERR_BUSY above) */
    return QROCE_CMD_OK;
}
