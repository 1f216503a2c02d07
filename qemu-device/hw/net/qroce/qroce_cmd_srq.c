/*
 * qroce: the commands of shared receive queues: CREATE_SRQ, MODIFY_SRQ
 * (arm and resize), QUERY_SRQ, DESTROY_SRQ (docs/hw-spec.md §3).  Each
 * checks every value the guest supplies before use and answers with a
 * status.
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

int qroce_cmd_create_srq(QRoceState *s, const struct qroce_cmd *c,
                         uint32_t *out)
{
    const struct qroce_cmd_create_srq *p = &c->create_srq;
    uint32_t pdn = le32_to_cpu(p->pdn);
    uint32_t uar = le32_to_cpu(p->uar);
    uint32_t limit = le32_to_cpu(p->limit);
    QRocePD *pd = qroce_pd_get(s, pdn);
    QRoceSRQ *srq = NULL;
    uint32_t i;
    int st;

    /* cqn is for XRC SRQs, which this device does not have: MBZ */
    if (uar >= QROCE_DB_PAGES) {
        return qroce_cmd_bad(c, "uar", uar, RANGE, QROCE_CMD_ERR_PARAM);
    }
    if (p->cqn || p->rsvd || p->rsvd1) {
        return qroce_cmd_bad(c, p->cqn ? "cqn" : "rsvd",
                             p->cqn ? le32_to_cpu(p->cqn) :
                             p->rsvd ? p->rsvd : p->rsvd1, MBZ,
                             QROCE_CMD_ERR_PARAM);
    }
    if (p->log2_entries < 1 || p->log2_entries > QROCE_WQ_MAX_LOG2) {
        return qroce_cmd_bad(c, "log2_entries", p->log2_entries, RANGE,
                             QROCE_CMD_ERR_PARAM);
    }
    if (limit >= (1u << p->log2_entries)) {
        return qroce_cmd_bad(c, "limit", limit, "not below the size",
                             QROCE_CMD_ERR_PARAM);
    }
    if (!pd) {
        return qroce_cmd_bad(c, "pdn", pdn, NOOBJ, QROCE_CMD_ERR_HANDLE);
    }
    i = qroce_tbl_free_number(&s->srqs, 1, 1);
    srq = i ? qroce_tbl_alloc(s, &s->srqs, i) : NULL;
    if (!srq) {
        return qroce_cmd_bad(c, "srqn", s->srqs.max, i ? BUDGET : FULL,
                             QROCE_CMD_ERR_NORES);
    }
    st = qroce_wq_load(s, &p->ring, p->log2_entries, p->wqe_shift,
                       QROCE_RQ_WQE_MIN_SHIFT, QROCE_RQ_WQE_MAX_SHIFT,
                       &srq->wq);
    if (st != QROCE_CMD_OK) {
        qroce_tbl_free(s, &s->srqs, i);
        return st;
    }
    srq->srqn = i;
    srq->pdn = pdn;
    srq->uar = uar;
    srq->limit = limit;
    srq->valid = true;
    pd->refs++;
    out[0] = i;
    return QROCE_CMD_OK;
}

/*
 * Copy the WQEs of @srq posted and not yet consumed (ci to pi) to ring
 * @wq, each to the slot of its free-running index.
 */
static bool qroce_srq_copy(QRoceState *s, QRoceSRQ *srq, const QRoceWQ *wq)
{
    uint8_t w[1u << QROCE_RQ_WQE_MAX_SHIFT];
    uint32_t len = 1u << wq->wqe_shift, idx;
    uint32_t om = (1u << srq->wq.log2) - 1, nm = (1u << wq->log2) - 1;
    uint8_t sh = wq->wqe_shift;

    for (idx = srq->wq.ci; idx != srq->wq.pi; idx++) {
        if (qroce_bt_rw(s, &srq->wq.bt, (uint64_t)(idx & om) << sh, w, len,
                        false) < 0 ||
            qroce_bt_rw(s, &wq->bt, (uint64_t)(idx & nm) << sh, w, len,
                        true) < 0) {
            return false;
        }
    }
    /*
     * the copy is work like loading pages: each WQE (two DMA accesses)
     * counts in the run's budget as one page does
     */
    s->bt_work += srq->wq.pi - srq->wq.ci;
    return true;
}

/*
 * MODIFY_SRQ with MAX_WR: a new ring, which must hold the WQEs still
 * posted and be above the limit (@limit, the one in force after the
 * command).  Nothing changes on error.
 */
static int qroce_srq_resize(QRoceState *s, const struct qroce_cmd *c,
                            QRoceSRQ *srq, uint32_t limit)
{
    const struct qroce_cmd_modify_srq *p = &c->modify_srq;
    uint32_t n = srq->wq.pi - srq->wq.ci;
    QRoceWQ wq;
    int st;

    if (p->log2_entries < 1 || p->log2_entries > QROCE_WQ_MAX_LOG2) {
        return qroce_cmd_bad(c, "log2_entries", p->log2_entries,
                             "out of range", QROCE_CMD_ERR_PARAM);
    }
    if (n > (1u << p->log2_entries)) {
        return qroce_cmd_bad(c, "log2_entries", p->log2_entries,
                             "smaller than the WQEs posted",
                             QROCE_CMD_ERR_PARAM);
    }
    if (limit >= (1u << p->log2_entries)) {
        return qroce_cmd_bad(c, "limit", limit, "not below the new size",
                             QROCE_CMD_ERR_PARAM);
    }
    st = qroce_wq_load(s, &p->ring, p->log2_entries, srq->wq.wqe_shift,
                       QROCE_RQ_WQE_MIN_SHIFT, QROCE_RQ_WQE_MAX_SHIFT, &wq);
    if (st != QROCE_CMD_OK) {
        return st;
    }
    if (!qroce_srq_copy(s, srq, &wq)) {
        qroce_bt_free(s, &wq.bt);
        return qroce_cmd_bad(c, "ring", srq->srqn, "WQE copy failed",
                             QROCE_CMD_ERR_DMA);
    }
    qroce_bt_free(s, &srq->wq.bt);
    srq->wq.bt = wq.bt;
    srq->wq.log2 = wq.log2;
    return QROCE_CMD_OK;
}

int qroce_cmd_modify_srq(QRoceState *s, const struct qroce_cmd *c,
                         uint32_t *out)
{
    const struct qroce_cmd_modify_srq *p = &c->modify_srq;
    QRoceSRQ *srq = qroce_srq_get(s, le32_to_cpu(p->srqn));
    uint32_t mask = le32_to_cpu(p->attr_mask) ?: QROCE_SRQ_ATTR_LIMIT;
    uint32_t limit = mask & QROCE_SRQ_ATTR_LIMIT ? le32_to_cpu(p->limit)
                                                 : srq ? srq->limit : 0;
    int st;

    if (!srq) {
        return qroce_cmd_bad(c, "srqn", le32_to_cpu(p->srqn), NOOBJ,
                             QROCE_CMD_ERR_HANDLE);
    }
    if (mask & ~(QROCE_SRQ_ATTR_MAX_WR | QROCE_SRQ_ATTR_LIMIT)) {
        return qroce_cmd_bad(c, "attr_mask", mask, "unknown attribute",
                             QROCE_CMD_ERR_PARAM);
    }
    if (qroce_nz(p->rsvd, sizeof(p->rsvd))) {
        return qroce_cmd_bad(c, "rsvd", qroce_nz(p->rsvd, sizeof(p->rsvd)),
                             MBZ, QROCE_CMD_ERR_PARAM);
    }
    if (mask & QROCE_SRQ_ATTR_MAX_WR) {
        st = qroce_srq_resize(s, c, srq, limit);
        if (st != QROCE_CMD_OK) {
            return st;
        }
    } else if (limit >= (1u << srq->wq.log2)) {
        return qroce_cmd_bad(c, "limit", limit, "not below the size",
                             QROCE_CMD_ERR_PARAM);
    }
    if (mask & QROCE_SRQ_ATTR_LIMIT) {
        srq->limit = limit; /* (re)arms the limit event; 0 disarms */
    }
    return QROCE_CMD_OK;
}

int qroce_cmd_query_srq(QRoceState *s, const struct qroce_cmd *c,
                        uint32_t *out)
{
    QRoceSRQ *srq = qroce_srq_get(s, le32_to_cpu(c->handle.handle));

    if (!srq) {
        return qroce_cmd_bad(c, "srqn", le32_to_cpu(c->handle.handle), NOOBJ,
                             QROCE_CMD_ERR_HANDLE);
    }
    out[0] = srq->limit;
    out[1] = srq->wq.ci;
    return QROCE_CMD_OK;
}

int qroce_cmd_destroy_srq(QRoceState *s, const struct qroce_cmd *c,
                          uint32_t *out)
{
    QRoceSRQ *srq = qroce_srq_get(s, le32_to_cpu(c->handle.handle));

    if (!srq) {
        return qroce_cmd_bad(c, "srqn", le32_to_cpu(c->handle.handle), NOOBJ,
                             QROCE_CMD_ERR_HANDLE);
    }
    if (srq->refs) {
        return qroce_cmd_bad(c, "srqn", srq->srqn, "QPs use it",
                             QROCE_CMD_ERR_BUSY);
    }
    s->pd[srq->pdn].refs--;
    qroce_bt_free(s, &srq->wq.bt);
    qroce_tbl_free(s, &s->srqs, srq->srqn);
    return QROCE_CMD_OK;
}
