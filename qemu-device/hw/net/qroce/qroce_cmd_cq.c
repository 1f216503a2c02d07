/*
 * qroce: the commands of event queues and completion queues: CREATE_EQ,
 * DESTROY_EQ, CREATE_CQ, RESIZE_CQ, DESTROY_CQ (docs/hw-spec.md §3).
 * Each checks every value the guest supplies before use and answers with
 * a status.
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

int qroce_cmd_create_eq(QRoceState *s, const struct qroce_cmd *c,
                        uint32_t *out)
{
    const struct qroce_cmd_create_eq *p = &c->create_eq;
    uint32_t eqn = le32_to_cpu(p->eqn);
    QRoceEQ *eq;
    int st;

    if (eqn >= QROCE_NUM_EQS) {
        return qroce_cmd_bad(c, "eqn", eqn, RANGE, QROCE_CMD_ERR_PARAM);
    }
    if (p->log2_entries < QROCE_EQ_MIN_LOG2 ||
        p->log2_entries > QROCE_EQ_MAX_LOG2) {
        return qroce_cmd_bad(c, "log2_entries", p->log2_entries, RANGE,
                             QROCE_CMD_ERR_PARAM);
    }
    if (qroce_nz(p->rsvd, sizeof(p->rsvd))) {
        return qroce_cmd_bad(c, "rsvd", qroce_nz(p->rsvd, sizeof(p->rsvd)),
                             MBZ, QROCE_CMD_ERR_PARAM);
    }
    eq = &s->eq[eqn];
    if (eq->valid) {
        return qroce_cmd_bad(c, "eqn", eqn, "the EQ exists",
                             QROCE_CMD_ERR_BUSY);
    }
    st = qroce_ring_bt(s, &p->ring, (uint64_t)sizeof(struct qroce_eqe)
                       << p->log2_entries, &eq->bt);
    if (st != QROCE_CMD_OK) {
        return st;
    }
    eq->log2 = p->log2_entries;
    eq->pi = eq->ci = 0;
    eq->overflowed = false;
    eq->valid = true;
    return QROCE_CMD_OK;
}

int qroce_cmd_destroy_eq(QRoceState *s, const struct qroce_cmd *c,
                         uint32_t *out)
{
    uint32_t eqn = le32_to_cpu(c->handle.handle);
    uint32_t i;

    if (eqn >= QROCE_NUM_EQS || !s->eq[eqn].valid) {
        return qroce_cmd_bad(c, "eqn", eqn, NOOBJ, QROCE_CMD_ERR_HANDLE);
    }
    QROCE_TBL_FOREACH(&s->cqs, i) {
        if (qroce_cq_get(s, i)->eqn == eqn) {
            return qroce_cmd_bad(c, "eqn", eqn, "a CQ still uses it",
                                 QROCE_CMD_ERR_BUSY);
        }
    }
    qroce_bt_free(s, &s->eq[eqn].bt);
    memset(&s->eq[eqn], 0, sizeof(s->eq[eqn]));
    return QROCE_CMD_OK;
}

/* A CQ's size and reserved bytes, as CREATE_CQ and RESIZE_CQ give them. */
static int qroce_cq_args(const struct qroce_cmd *c, uint8_t log2,
                         const uint8_t *rsvd, size_t n)
{
    if (log2 < 1 || log2 > QROCE_CQ_MAX_LOG2) {
        return qroce_cmd_bad(c, "log2_entries", log2, RANGE,
                             QROCE_CMD_ERR_PARAM);
    }
    if (qroce_nz(rsvd, n)) {
        return qroce_cmd_bad(c, "rsvd", qroce_nz(rsvd, n), MBZ,
                             QROCE_CMD_ERR_PARAM);
    }
    return QROCE_CMD_OK;
}

int qroce_cmd_create_cq(QRoceState *s, const struct qroce_cmd *c,
                        uint32_t *out)
{
    const struct qroce_cmd_create_cq *p = &c->create_cq;
    uint32_t eqn = le32_to_cpu(p->eqn);
    uint32_t uar = le32_to_cpu(p->uar);
    QRoceCQ *cq = NULL;
    uint32_t i;
    int st;

    if (eqn == QROCE_EQN_ASYNC || eqn >= QROCE_NUM_EQS) {
        return qroce_cmd_bad(c, "eqn", eqn, "EQ 0 or out of range",
                             QROCE_CMD_ERR_PARAM);
    }
    if (uar >= QROCE_DB_PAGES) {
        return qroce_cmd_bad(c, "uar", uar, RANGE, QROCE_CMD_ERR_PARAM);
    }
    st = qroce_cq_args(c, p->log2_entries, p->rsvd, sizeof(p->rsvd));
    if (st) {
        return st;
    }
    if (!s->eq[eqn].valid) {
        return qroce_cmd_bad(c, "eqn", eqn, NOOBJ, QROCE_CMD_ERR_HANDLE);
    }
    i = qroce_tbl_free_number(&s->cqs, 1, 1);
    cq = i ? qroce_tbl_alloc(s, &s->cqs, i) : NULL;
    if (!cq) {
        return qroce_cmd_bad(c, "cqn", s->cqs.max, i ? BUDGET : FULL,
                             QROCE_CMD_ERR_NORES);
    }
    st = qroce_ring_bt(s, &p->ring, ((uint64_t)sizeof(struct qroce_cqe)
                       << p->log2_entries) + sizeof(struct qroce_cq_rec),
                       &cq->bt);
    if (st != QROCE_CMD_OK) {
        qroce_tbl_free(s, &s->cqs, i);
        return st;
    }
    cq->cqn = i;
    cq->uar = uar;
    cq->eqn = eqn;
    cq->log2 = p->log2_entries;
    cq->valid = true;
    out[0] = i;
    return QROCE_CMD_OK;
}

/* Copy the @n CQEs of @cq from @ci on to entries 0.. of ring @bt. */
static bool qroce_cq_copy(QRoceState *s, QRoceCQ *cq, uint32_t ci, uint32_t n,
                          const QRoceBT *bt, uint8_t log2)
{
    struct qroce_cqe e;
    uint32_t k, mask = (1u << cq->log2) - 1;

    /* each CQE (two DMA accesses) counts in the run's budget as a page */
    s->bt_work += n;
    for (k = 0; k < n; k++) {
        if (qroce_bt_rw(s, &cq->bt, (uint64_t)((ci + k) & mask) * sizeof(e),
                        &e, sizeof(e), false) < 0) {
            return false;
        }
        e.owner = qroce_owner_for(k, log2);
        if (qroce_bt_rw(s, bt, (uint64_t)k * sizeof(e), &e, sizeof(e),
                        true) < 0) {
            return false;
        }
    }
    return true;
}

/*
 * RESIZE_CQ: the CQEs the consumer has not taken (from ci to the producer
 * index) move in order to the start of the new ring, which replaces the
 * old one; on any error the CQ stays as it was.
 */
int qroce_cmd_resize_cq(QRoceState *s, const struct qroce_cmd *c,
                        uint32_t *out)
{
    const struct qroce_cmd_resize_cq *p = &c->resize_cq;
    uint32_t cqn = le32_to_cpu(p->cqn), ci = le32_to_cpu(p->ci), n;
    QRoceCQ *cq = qroce_cq_get(s, cqn);
    QRoceBT bt;
    int st;

    if (!cq) {
        return qroce_cmd_bad(c, "cqn", cqn, NOOBJ, QROCE_CMD_ERR_HANDLE);
    }
    st = qroce_cq_args(c, p->log2_entries, p->rsvd, sizeof(p->rsvd));
    if (st) {
        return st;
    }
    if (cq->error) {
        return qroce_cmd_bad(c, "cqn", cqn, "CQ in error", QROCE_CMD_ERR_STATE);
    }
    n = cq->pi - ci;
    if (n > (1u << cq->log2)) {
        return qroce_cmd_bad(c, "ci", ci, "not within a ring of the producer",
                             QROCE_CMD_ERR_PARAM);
    }
    if (n >= (1u << p->log2_entries)) {
        return qroce_cmd_bad(c, "log2_entries", p->log2_entries,
                             "smaller than the CQEs outstanding",
                             QROCE_CMD_ERR_PARAM);
    }
    memset(&bt, 0, sizeof(bt));
    st = qroce_ring_bt(s, &p->ring, ((uint64_t)sizeof(struct qroce_cqe)
                       << p->log2_entries) + sizeof(struct qroce_cq_rec), &bt);
    if (st != QROCE_CMD_OK) {
        return st;
    }
    if (!qroce_cq_copy(s, cq, ci, n, &bt, p->log2_entries)) {
        qroce_bt_free(s, &bt);
        return qroce_cmd_bad(c, "ring", cqn, "CQE copy failed",
                             QROCE_CMD_ERR_DMA);
    }
    qroce_bt_free(s, &cq->bt);
    cq->bt = bt;
    cq->log2 = p->log2_entries;
    cq->pi = n;
    cq->ci_seen = 0;
    return QROCE_CMD_OK;
}

int qroce_cmd_destroy_cq(QRoceState *s, const struct qroce_cmd *c,
                         uint32_t *out)
{
    uint32_t cqn = le32_to_cpu(c->handle.handle);
    QRoceCQ *cq = qroce_cq_get(s, cqn);

    if (!cq) {
        return qroce_cmd_bad(c, "cqn", cqn, NOOBJ, QROCE_CMD_ERR_HANDLE);
    }
    if (cq->refs) {
        return qroce_cmd_bad(c, "cqn", cqn, "QPs use it", QROCE_CMD_ERR_BUSY);
    }
    qroce_bt_free(s, &cq->bt);
    qroce_tbl_free(s, &s->cqs, cqn);
    return QROCE_CMD_OK;
}
