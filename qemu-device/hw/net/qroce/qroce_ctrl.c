/*
 * qroce: the control path -- the command ring (docs/hw-spec.md), a table
 * of commands indexed by opcode, and the commands, which create, change
 * and destroy the objects of qroce_objects.c and tell the data path
 * about QPs.
 *
 * Every value the guest supplies is checked before use: bad input ends in
 * a command error status or FATAL, logged with LOG_GUEST_ERROR -- never
 * an abort.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/main-loop.h"
#include "qemu/bswap.h"
#include "qroce_ctrl.h"
#include "qroce_objects.h"
#include "qroce_data.h"
#include "qroce_ring.h"
#include "qroce_odp.h"
#include "trace.h"

#define QROCE_CMD_BUDGET    64      /* commands per bottom-half run */
#define QROCE_CMD_WORK_BUDGET (1u << 16)    /* table pages per run */

/* ------------------------------------------------------------------ */
/* Commands                                                            */
/* ------------------------------------------------------------------ */

typedef int (*QRoceCmdFn)(QRoceState *s, const struct qroce_cmd *c,
                          uint32_t *out);

/* The first byte of @p[@n] that is not zero, 0 if all are (MBZ fields). */
static uint8_t qroce_nz(const uint8_t *p, size_t n)
{
    while (n--) {
        if (*p++) {
            return p[-1];
        }
    }
    return 0;
}

static const char *qroce_cmd_name(uint8_t opcode);

/*
 * Refuse command @c with status @st: trace the driver's mistake, the
 * field and its value (qroce_ub_cmd_field, docs/hw-spec.md §17).
 */
static int qroce_cmd_bad(const struct qroce_cmd *c, const char *field,
                         uint64_t val, const char *why, int st)
{
    trace_qroce_ub_cmd_field(qroce_cmd_name(c->hdr.opcode), field, val, why);
    return st;
}

#define RANGE "out of range"
#define MBZ "must be zero"
#define NOOBJ "names no object"
#define FULL "object table full"
#define BUDGET "state-budget-mb spent"

static int qroce_cmd_nop(QRoceState *s, const struct qroce_cmd *c,
                         uint32_t *out)
{
    return QROCE_CMD_OK;
}

static int qroce_cmd_create_eq(QRoceState *s, const struct qroce_cmd *c,
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

static int qroce_cmd_destroy_eq(QRoceState *s, const struct qroce_cmd *c,
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

static int qroce_cmd_alloc_pd(QRoceState *s, const struct qroce_cmd *c,
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

static int qroce_cmd_dealloc_pd(QRoceState *s, const struct qroce_cmd *c,
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

static int qroce_cmd_create_cq(QRoceState *s, const struct qroce_cmd *c,
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
static int qroce_cmd_resize_cq(QRoceState *s, const struct qroce_cmd *c,
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

static int qroce_cmd_destroy_cq(QRoceState *s, const struct qroce_cmd *c,
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

/*
 * Check CREATE_QP's fields and the SRQ it names (in *@srq, NULL without
 * QROCE_CREATE_QP_SRQ).  Returns a QROCE_CMD_* status.
 */
static int qroce_create_qp_check(QRoceState *s, const struct qroce_cmd *c,
                                 QRoceSRQ **srq)
{
    const struct qroce_cmd_create_qp *p = &c->create_qp;
    uint32_t uar = le32_to_cpu(p->uar);
    bool use_srq = p->flags & QROCE_CREATE_QP_SRQ;
    uint32_t bad_flags = p->flags & ~(QROCE_CREATE_QP_SIG_ALL |
                                      QROCE_CREATE_QP_SRQ |
                                      QROCE_CREATE_QP_BLOCK_MCAST_LB);

    *srq = NULL;
    if (p->type > QROCE_QPT_GSI) {
        return qroce_cmd_bad(c, "type", p->type, RANGE, QROCE_CMD_ERR_PARAM);
    }
    if (uar >= QROCE_DB_PAGES) {
        return qroce_cmd_bad(c, "uar", uar, RANGE, QROCE_CMD_ERR_PARAM);
    }
    if (bad_flags || qroce_nz(p->rsvd, sizeof(p->rsvd))) {
        return qroce_cmd_bad(c, bad_flags ? "flags" : "rsvd", bad_flags ?
                             bad_flags : qroce_nz(p->rsvd, sizeof(p->rsvd)),
                             MBZ, QROCE_CMD_ERR_PARAM);
    }
    if ((p->flags & QROCE_CREATE_QP_BLOCK_MCAST_LB) &&
        p->type != QROCE_QPT_UD) {
        return qroce_cmd_bad(c, "flags", p->flags, "multicast flag, not UD",
                             QROCE_CMD_ERR_PARAM);
    }
    if (!use_srq && p->srqn) {
        return qroce_cmd_bad(c, "srqn", le32_to_cpu(p->srqn),
                             "without the SRQ flag", QROCE_CMD_ERR_PARAM);
    }
    if (use_srq) {
        /* RC/UC/UD only; the QP has no RQ of its own */
        if (p->type == QROCE_QPT_GSI) {
            return qroce_cmd_bad(c, "type", p->type, "GSI with an SRQ",
                                 QROCE_CMD_ERR_PARAM);
        }
        if (p->rq_log2_entries || p->rq.addr || p->rq.npages ||
            p->rq.level || p->rq.rsvd) {
            return qroce_cmd_bad(c, "rq", le64_to_cpu(p->rq.addr),
                                 "an RQ with an SRQ", QROCE_CMD_ERR_PARAM);
        }
        *srq = qroce_srq_get(s, le32_to_cpu(p->srqn));
        if (!*srq) {
            return qroce_cmd_bad(c, "srqn", le32_to_cpu(p->srqn), NOOBJ,
                                 QROCE_CMD_ERR_HANDLE);
        }
    }
    return QROCE_CMD_OK;
}

/*
 * The QPN of a new QP of @type in *@qpn: 1 for the GSI QP.  Returns a
 * QROCE_CMD_* status.
 */
static int qroce_qp_alloc_qpn(QRoceState *s, const struct qroce_cmd *c,
                              uint8_t type, uint32_t *qpn)
{
    if (type == QROCE_QPT_GSI) {
        if (qroce_tbl_get(&s->qps, 1)) {
            return qroce_cmd_bad(c, "type", type, "the GSI QP exists",
                                 QROCE_CMD_ERR_BUSY);
        }
        *qpn = 1;
        return QROCE_CMD_OK;
    }
    /* the next free QPN after the last one given: reused late */
    *qpn = qroce_tbl_free_number(&s->qps, 2, s->next_qpn);
    if (!*qpn) {
        return qroce_cmd_bad(c, "qpn", s->qps.max, FULL, QROCE_CMD_ERR_NORES);
    }
    return QROCE_CMD_OK;
}

/* Load the SQ and, without an SRQ, the RQ of @qp. */
static int qroce_qp_load_wqs(QRoceState *s,
                             const struct qroce_cmd_create_qp *p,
                             bool use_srq, QRoceQP *qp)
{
    int st;

    st = qroce_wq_load(s, &p->sq, p->sq_log2_entries, p->sq_wqe_shift,
                       QROCE_SQ_WQE_MIN_SHIFT, QROCE_SQ_WQE_MAX_SHIFT, &qp->sq);
    if (st != QROCE_CMD_OK) {
        return st;
    }
    if (!use_srq) {
        st = qroce_wq_load(s, &p->rq, p->rq_log2_entries, p->rq_wqe_shift,
                           QROCE_RQ_WQE_MIN_SHIFT, QROCE_RQ_WQE_MAX_SHIFT,
                           &qp->rq);
        if (st != QROCE_CMD_OK) {
            qroce_bt_free(s, &qp->sq.bt);
            return st;
        }
    }
    return QROCE_CMD_OK;
}

static int qroce_cmd_create_qp(QRoceState *s, const struct qroce_cmd *c,
                               uint32_t *out)
{
    const struct qroce_cmd_create_qp *p = &c->create_qp;
    uint32_t pdn = le32_to_cpu(p->pdn);
    uint32_t uar = le32_to_cpu(p->uar);
    QRoceCQ *scq = qroce_cq_get(s, le32_to_cpu(p->send_cqn));
    QRoceCQ *rcq = qroce_cq_get(s, le32_to_cpu(p->recv_cqn));
    QRocePD *pd = qroce_pd_get(s, pdn);
    QRoceSRQ *srq;
    QRoceQP *qp = NULL;
    uint32_t qpn;
    int st;

    st = qroce_create_qp_check(s, c, &srq);
    if (st != QROCE_CMD_OK) {
        return st;
    }
    if (!pd || !scq || !rcq) {
        return qroce_cmd_bad(c, !pd ? "pdn" : !scq ? "send_cqn" : "recv_cqn",
                             !pd ? pdn : le32_to_cpu(!scq ? p->send_cqn :
                                                     p->recv_cqn),
                             NOOBJ, QROCE_CMD_ERR_HANDLE);
    }
    st = qroce_qp_alloc_qpn(s, c, p->type, &qpn);
    if (st != QROCE_CMD_OK) {
        return st;
    }
    qp = qroce_tbl_alloc(s, &s->qps, qpn);
    if (!qp) {
        return qroce_cmd_bad(c, "qpn", qpn, BUDGET, QROCE_CMD_ERR_NORES);
    }
    st = qroce_qp_load_wqs(s, p, srq != NULL, qp);
    if (st == QROCE_CMD_OK && !qroce_state_take(s, qroce_data_qp_bytes(qp))) {
        qroce_bt_free(s, &qp->sq.bt);
        qroce_bt_free(s, &qp->rq.bt);
        st = qroce_cmd_bad(c, "sq_log2_entries", p->sq_log2_entries, BUDGET,
                           QROCE_CMD_ERR_NORES);
    }
    if (st != QROCE_CMD_OK) {
        qroce_tbl_free(s, &s->qps, qpn);
        return st;
    }
    qp->qpn = qpn;
    qp->pdn = pdn;
    qp->type = p->type;
    qp->uar = uar;
    qp->flags = p->flags;
    qp->scqn = scq->cqn;
    qp->rcqn = rcq->cqn;
    qp->state = QROCE_QPS_RESET;
    qp->valid = true;
    pd->refs++;
    scq->refs++;
    rcq->refs++;
    if (srq) {
        qp->srqn = srq->srqn;
        srq->refs++;
    }
    qroce_data_qp_create(s, qp);
    if (qpn > 1) {
        s->next_qpn = qpn + 1;  /* a create that failed took no number */
    }
    out[0] = qpn;
    return QROCE_CMD_OK;
}

#define A(x) QROCE_QP_ATTR_##x

#define T_RC QROCE_QPT_RC

#define T_UC QROCE_QPT_UC

#define T_UD QROCE_QPT_UD

#define T_GSI QROCE_QPT_GSI

typedef struct QRoceQpTrans {
    bool valid;
    uint32_t req[QROCE_QPT_GSI + 1], opt[QROCE_QPT_GSI + 1];  /* by type */
} QRoceQpTrans;

/*
 * The IB QP state machine: the valid transitions and, per QP type, the
 * attributes each one requires and the ones it allows -- the table of the
 * kernel's ib_modify_qp_is_ok() for the types this device has.  Note that
 * RESET -> ERR is not a valid transition; every other state may go to
 * RESET or ERR, with no attribute but the state.
 */
static const QRoceQpTrans
qroce_qp_trans[QROCE_QPS_ERR + 1][QROCE_QPS_ERR + 1] = {
    [QROCE_QPS_RESET] = {
        [QROCE_QPS_RESET] = { .valid = true },
        [QROCE_QPS_INIT] = { .valid = true,
            .req = {
                [T_UD] = A(PKEY_INDEX) | A(PORT) | A(QKEY),
                [T_UC] = A(PKEY_INDEX) | A(PORT) | A(ACCESS_FLAGS),
                [T_RC] = A(PKEY_INDEX) | A(PORT) | A(ACCESS_FLAGS),
                [T_GSI] = A(PKEY_INDEX) | A(QKEY),
            } },
    },
    [QROCE_QPS_INIT] = {
        [QROCE_QPS_RESET] = { .valid = true },
        [QROCE_QPS_ERR] = { .valid = true },
        [QROCE_QPS_INIT] = { .valid = true,
            .opt = {
                [T_UD] = A(PKEY_INDEX) | A(PORT) | A(QKEY),
                [T_UC] = A(PKEY_INDEX) | A(PORT) | A(ACCESS_FLAGS),
                [T_RC] = A(PKEY_INDEX) | A(PORT) | A(ACCESS_FLAGS),
                [T_GSI] = A(PKEY_INDEX) | A(QKEY),
            } },
        [QROCE_QPS_RTR] = { .valid = true,
            .req = {
                [T_UC] = A(AV) | A(PATH_MTU) | A(DEST_QPN) | A(RQ_PSN),
                [T_RC] = A(AV) | A(PATH_MTU) | A(DEST_QPN) | A(RQ_PSN) |
                       A(MAX_DEST_RD_ATOMIC) | A(MIN_RNR_TIMER),
            },
            .opt = {
                [T_UD] = A(PKEY_INDEX) | A(QKEY),
                [T_UC] = A(ALT_PATH) | A(ACCESS_FLAGS) | A(PKEY_INDEX),
                [T_RC] = A(ALT_PATH) | A(ACCESS_FLAGS) | A(PKEY_INDEX),
                [T_GSI] = A(PKEY_INDEX) | A(QKEY),
            } },
    },
    [QROCE_QPS_RTR] = {
        [QROCE_QPS_RESET] = { .valid = true },
        [QROCE_QPS_ERR] = { .valid = true },
        [QROCE_QPS_RTS] = { .valid = true,
            .req = {
                [T_UD] = A(SQ_PSN),
                [T_UC] = A(SQ_PSN),
                [T_RC] = A(TIMEOUT) | A(RETRY_CNT) | A(RNR_RETRY) | A(SQ_PSN) |
                       A(MAX_QP_RD_ATOMIC),
                [T_GSI] = A(SQ_PSN),
            },
            .opt = {
                [T_UD] = A(CUR_STATE) | A(QKEY),
                [T_UC] = A(CUR_STATE) | A(ALT_PATH) | A(ACCESS_FLAGS) |
                       A(PATH_MIG_STATE),
                [T_RC] = A(CUR_STATE) | A(ALT_PATH) | A(ACCESS_FLAGS) |
                       A(MIN_RNR_TIMER) | A(PATH_MIG_STATE),
                [T_GSI] = A(CUR_STATE) | A(QKEY),
            } },
    },
    [QROCE_QPS_RTS] = {
        [QROCE_QPS_RESET] = { .valid = true },
        [QROCE_QPS_ERR] = { .valid = true },
        [QROCE_QPS_RTS] = { .valid = true,
            .opt = {
                [T_UD] = A(CUR_STATE) | A(QKEY),
                [T_UC] = A(CUR_STATE) | A(ACCESS_FLAGS) | A(ALT_PATH) |
                       A(PATH_MIG_STATE),
                [T_RC] = A(CUR_STATE) | A(ACCESS_FLAGS) | A(ALT_PATH) |
                       A(PATH_MIG_STATE) | A(MIN_RNR_TIMER),
                [T_GSI] = A(CUR_STATE) | A(QKEY),
            } },
        [QROCE_QPS_SQD] = { .valid = true,
            .opt = {
                [T_UD] = A(EN_SQD_ASYNC),
                [T_UC] = A(EN_SQD_ASYNC),
                [T_RC] = A(EN_SQD_ASYNC),
                [T_GSI] = A(EN_SQD_ASYNC),
            } },
    },
    [QROCE_QPS_SQD] = {
        [QROCE_QPS_RESET] = { .valid = true },
        [QROCE_QPS_ERR] = { .valid = true },
        [QROCE_QPS_RTS] = { .valid = true,
            .opt = {
                [T_UD] = A(CUR_STATE) | A(QKEY),
                [T_UC] = A(CUR_STATE) | A(ALT_PATH) | A(ACCESS_FLAGS) |
                       A(PATH_MIG_STATE),
                [T_RC] = A(CUR_STATE) | A(ALT_PATH) | A(ACCESS_FLAGS) |
                       A(MIN_RNR_TIMER) | A(PATH_MIG_STATE),
                [T_GSI] = A(CUR_STATE) | A(QKEY),
            } },
        [QROCE_QPS_SQD] = { .valid = true,
            .opt = {
                [T_UD] = A(PKEY_INDEX) | A(QKEY),
                [T_UC] = A(AV) | A(ALT_PATH) | A(ACCESS_FLAGS) |
                       A(PKEY_INDEX) | A(PATH_MIG_STATE),
                [T_RC] = A(PORT) | A(AV) | A(TIMEOUT) | A(RETRY_CNT) |
                       A(RNR_RETRY) | A(MAX_QP_RD_ATOMIC) |
                       A(MAX_DEST_RD_ATOMIC) | A(ALT_PATH) |
                       A(ACCESS_FLAGS) | A(PKEY_INDEX) | A(MIN_RNR_TIMER) |
                       A(PATH_MIG_STATE),
                [T_GSI] = A(PKEY_INDEX) | A(QKEY),
            } },
    },
    [QROCE_QPS_SQE] = {
        [QROCE_QPS_RESET] = { .valid = true },
        [QROCE_QPS_ERR] = { .valid = true },
        [QROCE_QPS_RTS] = { .valid = true,
            .opt = {
                [T_UD] = A(CUR_STATE) | A(QKEY),
                [T_UC] = A(CUR_STATE) | A(ACCESS_FLAGS),
                [T_GSI] = A(CUR_STATE) | A(QKEY),
            } },
    },
    [QROCE_QPS_ERR] = {
        [QROCE_QPS_RESET] = { .valid = true },
        [QROCE_QPS_ERR] = { .valid = true },
    },
};

static bool qroce_qp_trans_ok(uint32_t type, uint32_t cur, uint32_t next,
                              uint32_t mask)
{
    const QRoceQpTrans *t;
    uint32_t req, opt;

    if (type > QROCE_QPT_GSI || cur > QROCE_QPS_ERR || next > QROCE_QPS_ERR) {
        return false;
    }
    if ((mask & A(CUR_STATE)) && cur != QROCE_QPS_RTR &&
        cur != QROCE_QPS_RTS && cur != QROCE_QPS_SQD &&
        cur != QROCE_QPS_SQE) {
        return false;
    }
    t = &qroce_qp_trans[cur][next];
    if (!t->valid) {
        return false;
    }
    req = t->req[type];
    opt = t->opt[type];
    if ((mask & req) != req) {
        return false;
    }
    return !(mask & ~(req | opt | A(STATE)));
}

#undef T_RC

#undef T_UC

#undef T_UD

#undef T_GSI

#undef A

/* Check MODIFY_QP's attribute values before changing anything. */
static int qroce_modify_qp_check(QRoceState *s, const struct qroce_cmd *c,
                                 uint32_t mask)
{
    const struct qroce_cmd_modify_qp *p = &c->modify_qp;
    const struct {
        uint32_t attr;
        bool bad;
        const char *field;
        uint64_t val;
    } chk[] = {
        { QROCE_QP_ATTR_PATH_MTU, p->path_mtu < QROCE_MTU_256 ||
          p->path_mtu > QROCE_MTU_4096, "path_mtu", p->path_mtu },
        { QROCE_QP_ATTR_RETRY_CNT, p->retry_cnt > 7, "retry_cnt",
          p->retry_cnt },
        { QROCE_QP_ATTR_RNR_RETRY, p->rnr_retry > 7, "rnr_retry",
          p->rnr_retry },
        { QROCE_QP_ATTR_MIN_RNR_TIMER, p->min_rnr_timer > 31,
          "min_rnr_timer", p->min_rnr_timer },
        { QROCE_QP_ATTR_TIMEOUT, p->timeout > 31, "timeout", p->timeout },
        { QROCE_QP_ATTR_MAX_QP_RD_ATOMIC,
          p->max_rd_atomic > QROCE_DEF_MAX_RD_ATOM, "max_rd_atomic",
          p->max_rd_atomic },
        { QROCE_QP_ATTR_MAX_DEST_RD_ATOMIC,
          p->max_dest_rd_atomic > QROCE_DEF_MAX_RD_ATOM,
          "max_dest_rd_atomic", p->max_dest_rd_atomic },
        { QROCE_QP_ATTR_ACCESS_FLAGS,
          le32_to_cpu(p->access_flags) & ~QROCE_QP_ACCESS_MASK,
          "access_flags", le32_to_cpu(p->access_flags) },
        { QROCE_QP_ATTR_SQ_PSN, le32_to_cpu(p->sq_psn) >> 24, "sq_psn",
          le32_to_cpu(p->sq_psn) },
        { QROCE_QP_ATTR_RQ_PSN, le32_to_cpu(p->rq_psn) >> 24, "rq_psn",
          le32_to_cpu(p->rq_psn) },
        { QROCE_QP_ATTR_DEST_QPN, le32_to_cpu(p->dest_qpn) >> 24,
          "dest_qpn", le32_to_cpu(p->dest_qpn) },
        { QROCE_QP_ATTR_AV, p->av.net_type != QROCE_NET_IPV4 &&
          p->av.net_type != QROCE_NET_IPV6, "av.net_type", p->av.net_type },
        { QROCE_QP_ATTR_AV, p->av.rsvd, "av.rsvd", p->av.rsvd },
    };
    uint8_t gid[16];
    size_t i;

    for (i = 0; i < ARRAY_SIZE(chk); i++) {
        if ((mask & chk[i].attr) && chk[i].bad) {
            return qroce_cmd_bad(c, chk[i].field, chk[i].val, RANGE,
                                 QROCE_CMD_ERR_PARAM);
        }
    }
    if ((mask & QROCE_QP_ATTR_AV) &&
        !qroce_gid_get(s, p->av.sgid_index, gid)) {
        return qroce_cmd_bad(c, "av.sgid_index", p->av.sgid_index,
                             "no such GID", QROCE_CMD_ERR_PARAM);
    }
    return QROCE_CMD_OK;
}

/* Copy the attributes of @mask into @qp. */
static void qroce_modify_qp_apply(QRoceQP *qp,
                                  const struct qroce_cmd_modify_qp *p,
                                  uint32_t mask)
{
    if (mask & QROCE_QP_ATTR_PATH_MTU) {
        qp->path_mtu = p->path_mtu;
    }
    if (mask & QROCE_QP_ATTR_TIMEOUT) {
        qp->timeout = p->timeout;
    }
    if (mask & QROCE_QP_ATTR_RETRY_CNT) {
        qp->retry_cnt = p->retry_cnt;
    }
    if (mask & QROCE_QP_ATTR_RNR_RETRY) {
        qp->rnr_retry = p->rnr_retry;
    }
    if (mask & QROCE_QP_ATTR_MIN_RNR_TIMER) {
        qp->min_rnr_timer = p->min_rnr_timer;
    }
    if (mask & QROCE_QP_ATTR_MAX_QP_RD_ATOMIC) {
        qp->max_rd_atomic = p->max_rd_atomic;
    }
    if (mask & QROCE_QP_ATTR_MAX_DEST_RD_ATOMIC) {
        qp->max_dest_rd_atomic = p->max_dest_rd_atomic;
    }
    if (mask & QROCE_QP_ATTR_ACCESS_FLAGS) {
        qp->access_flags = le32_to_cpu(p->access_flags);
    }
    if (mask & QROCE_QP_ATTR_QKEY) {
        qp->qkey = le32_to_cpu(p->qkey);
    }
    if (mask & QROCE_QP_ATTR_SQ_PSN) {
        qp->sq_psn = le32_to_cpu(p->sq_psn);
    }
    if (mask & QROCE_QP_ATTR_RQ_PSN) {
        qp->rq_psn = le32_to_cpu(p->rq_psn);
    }
    if (mask & QROCE_QP_ATTR_DEST_QPN) {
        qp->dest_qpn = le32_to_cpu(p->dest_qpn);
    }
    if (mask & QROCE_QP_ATTR_AV) {
        memcpy(qp->av.dgid, p->av.dgid, 16);
        memcpy(qp->av.dmac, p->av.dmac, 6);
        qp->av.sgid_index = p->av.sgid_index;
        qp->av.hop_limit = p->av.hop_limit;
        qp->av.traffic_class = p->av.traffic_class;
        qp->av.net_type = p->av.net_type;
        qp->av.flow_label = le32_to_cpu(p->av.flow_label) & 0xfffff;
    }
}

static int qroce_cmd_modify_qp(QRoceState *s, const struct qroce_cmd *c,
                               uint32_t *out)
{
    const struct qroce_cmd_modify_qp *p = &c->modify_qp;
    QRoceQP *qp = qroce_qp_get(s, le32_to_cpu(p->qpn));
    uint32_t mask = le32_to_cpu(p->attr_mask);
    uint32_t unknown = mask & ~((QROCE_QP_ATTR_DEST_QPN << 1) - 1);
    uint32_t cur, next;

    if (!qp) {
        return qroce_cmd_bad(c, "qpn", le32_to_cpu(p->qpn), NOOBJ,
                             QROCE_CMD_ERR_HANDLE);
    }
    if (unknown) {
        return qroce_cmd_bad(c, "attr_mask", unknown, "unknown attributes",
                             QROCE_CMD_ERR_PARAM);
    }
    if (qroce_nz(p->rsvd0, sizeof(p->rsvd0)) || p->rsvd1) {
        return qroce_cmd_bad(c, "rsvd", p->rsvd1 ? p->rsvd1 :
                             qroce_nz(p->rsvd0, sizeof(p->rsvd0)), MBZ,
                             QROCE_CMD_ERR_PARAM);
    }
    cur = qp->state;
    if (mask & QROCE_QP_ATTR_CUR_STATE) {
        if (p->cur_state > QROCE_QPS_ERR) {
            return qroce_cmd_bad(c, "cur_state", p->cur_state, RANGE,
                                 QROCE_CMD_ERR_PARAM);
        }
        if (p->cur_state != cur) {
            return qroce_cmd_bad(c, "cur_state", p->cur_state,
                                 "not the QP's state", QROCE_CMD_ERR_STATE);
        }
    }
    next = (mask & QROCE_QP_ATTR_STATE) ? p->new_state : cur;
    if (next > QROCE_QPS_ERR) {
        return qroce_cmd_bad(c, "new_state", next, RANGE,
                             QROCE_CMD_ERR_PARAM);
    }
    if (!qroce_qp_trans_ok(qp->type, cur, next, mask)) {
        trace_qroce_ub_qp_trans(qp->qpn, qp->type, cur, next, mask);
        return qroce_cmd_bad(c, "attr_mask", mask,
                             "transition or attributes not allowed",
                             QROCE_CMD_ERR_STATE);
    }
    /* Check every value before changing anything. */
    if (qroce_modify_qp_check(s, c, mask) != QROCE_CMD_OK) {
        return QROCE_CMD_ERR_PARAM;
    }
    qroce_modify_qp_apply(qp, p, mask);
    qp->state = next;
    trace_qroce_qp_state(qp->qpn, cur, next, mask);
    qroce_data_qp_modify(s, qp, cur, mask);
    return QROCE_CMD_OK;
}

static int qroce_cmd_query_qp(QRoceState *s, const struct qroce_cmd *c,
                              uint32_t *out)
{
    QRoceQP *qp = qroce_qp_get(s, le32_to_cpu(c->qpn.qpn));

    if (!qp) {
        return qroce_cmd_bad(c, "qpn", le32_to_cpu(c->qpn.qpn), NOOBJ,
                             QROCE_CMD_ERR_HANDLE);
    }
    out[0] = qp->state;
    out[1] = qp->xp.npsn;
    out[2] = qp->xp.epsn;
    out[3] = qp->sq.ci;
    out[4] = qp->rq.ci;
    return QROCE_CMD_OK;
}

static void qroce_qp_free(QRoceState *s, QRoceQP *qp)
{
    qroce_state_give(s, qroce_data_qp_bytes(qp));
    qroce_data_qp_destroy(s, qp);
    qroce_bt_free(s, &qp->sq.bt);
    qroce_bt_free(s, &qp->rq.bt);
    s->pd[qp->pdn].refs--;
    qroce_cq_get(s, qp->scqn)->refs--;
    qroce_cq_get(s, qp->rcqn)->refs--;
    if (qp->flags & QROCE_CREATE_QP_SRQ) {
        qroce_srq_get(s, qp->srqn)->refs--;
    }
    qroce_tbl_free(s, &s->qps, qp->qpn);
}

static int qroce_cmd_destroy_qp(QRoceState *s, const struct qroce_cmd *c,
                                uint32_t *out)
{
    QRoceQP *qp = qroce_qp_get(s, le32_to_cpu(c->qpn.qpn));

    if (!qp) {
        return qroce_cmd_bad(c, "qpn", le32_to_cpu(c->qpn.qpn), NOOBJ,
                             QROCE_CMD_ERR_HANDLE);
    }
    qroce_mcast_detach_all(s, qp->qpn);
    qroce_mw_qp_gone(s, qp->qpn);
    qroce_qp_free(s, qp);
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

static int qroce_cmd_reg_mr(QRoceState *s, const struct qroce_cmd *c,
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
static int qroce_cmd_alloc_mr(QRoceState *s, const struct qroce_cmd *c,
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
static int qroce_cmd_dereg_mr(QRoceState *s, const struct qroce_cmd *c,
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
static int qroce_cmd_alloc_mw(QRoceState *s, const struct qroce_cmd *c,
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
static int qroce_cmd_dealloc_mw(QRoceState *s, const struct qroce_cmd *c,
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
static int qroce_cmd_rereg_mr(QRoceState *s, const struct qroce_cmd *c,
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

static int qroce_cmd_create_ah(QRoceState *s, const struct qroce_cmd *c,
                               uint32_t *out)
{
    const struct qroce_cmd_create_ah *p = &c->create_ah;
    uint32_t pdn = le32_to_cpu(p->pdn);
    QRocePD *pd = qroce_pd_get(s, pdn);
    uint8_t gid[16];
    uint32_t i;

    if (p->rsvd || p->av.rsvd) {
        return qroce_cmd_bad(c, p->rsvd ? "rsvd" : "av.rsvd",
                             p->rsvd ? p->rsvd : p->av.rsvd, MBZ,
                             QROCE_CMD_ERR_PARAM);
    }
    if (p->av.net_type != QROCE_NET_IPV4 && p->av.net_type != QROCE_NET_IPV6) {
        return qroce_cmd_bad(c, "av.net_type", p->av.net_type, RANGE,
                             QROCE_CMD_ERR_PARAM);
    }
    if (!pd) {
        return qroce_cmd_bad(c, "pdn", pdn, NOOBJ, QROCE_CMD_ERR_HANDLE);
    }
    if (!qroce_gid_get(s, p->av.sgid_index, gid)) {
        return qroce_cmd_bad(c, "av.sgid_index", p->av.sgid_index,
                             "no such GID", QROCE_CMD_ERR_PARAM);
    }
    if (qroce_gid_is_mcast(p->av.dgid)) {
        uint8_t mac[6];

        qroce_mcast_mac(p->av.dgid, mac);
        if (memcmp(mac, p->av.dmac, 6)) {
            return qroce_cmd_bad(c, "av.dmac", ldl_be_p(p->av.dmac + 2),
                                 "not the multicast GID's MAC",
                                 QROCE_CMD_ERR_PARAM);
        }
    }
    for (i = 1; i < s->params.max_ah; i++) {
        if (!s->ah[i].valid) {
            QRoceAH *ah = &s->ah[i];

            memcpy(ah->av.dgid, p->av.dgid, 16);
            memcpy(ah->av.dmac, p->av.dmac, 6);
            ah->av.sgid_index = p->av.sgid_index;
            ah->av.hop_limit = p->av.hop_limit;
            ah->av.traffic_class = p->av.traffic_class;
            ah->av.net_type = p->av.net_type;
            ah->av.flow_label = le32_to_cpu(p->av.flow_label) & 0xfffff;
            ah->pdn = pdn;
            ah->valid = true;
            pd->refs++;
            out[0] = i;
            return QROCE_CMD_OK;
        }
    }
    return qroce_cmd_bad(c, "ahn", s->params.max_ah, FULL, QROCE_CMD_ERR_NORES);
}

static int qroce_cmd_destroy_ah(QRoceState *s, const struct qroce_cmd *c,
                                uint32_t *out)
{
    QRoceAH *ah = qroce_ah_get(s, le32_to_cpu(c->handle.handle));

    if (!ah) {
        return qroce_cmd_bad(c, "ahn", le32_to_cpu(c->handle.handle), NOOBJ,
                             QROCE_CMD_ERR_HANDLE);
    }
    s->pd[ah->pdn].refs--;
    memset(ah, 0, sizeof(*ah));
    return QROCE_CMD_OK;
}

static int qroce_cmd_create_srq(QRoceState *s, const struct qroce_cmd *c,
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

static int qroce_cmd_modify_srq(QRoceState *s, const struct qroce_cmd *c,
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

static int qroce_cmd_query_srq(QRoceState *s, const struct qroce_cmd *c,
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

static int qroce_cmd_destroy_srq(QRoceState *s, const struct qroce_cmd *c,
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

static int qroce_cmd_set_gid(QRoceState *s, const struct qroce_cmd *c,
                             uint32_t *out)
{
    const struct qroce_cmd_set_gid *p = &c->set_gid;
    uint32_t idx = le32_to_cpu(p->index);

    if (idx >= QROCE_DEF_MAX_GID) {
        return qroce_cmd_bad(c, "index", idx, RANGE, QROCE_CMD_ERR_PARAM);
    }
    if (p->type != QROCE_GID_ROCE_V2) {
        return qroce_cmd_bad(c, "type", p->type, "not RoCEv2",
                             QROCE_CMD_ERR_PARAM);
    }
    if (qroce_nz(p->rsvd, sizeof(p->rsvd))) {
        return qroce_cmd_bad(c, "rsvd", qroce_nz(p->rsvd, sizeof(p->rsvd)),
                             MBZ, QROCE_CMD_ERR_PARAM);
    }
    s->gid[idx].valid = true;
    s->gid[idx].type = p->type;
    memcpy(s->gid[idx].gid, p->gid, 16);
    return QROCE_CMD_OK;
}

/* ATTACH_MCAST and DETACH_MCAST: the QP (a UD one) and the group's GID. */
static int qroce_cmd_mcast_args(const struct qroce_cmd *c, QRoceQP *qp)
{
    const struct qroce_cmd_mcast *p = &c->mcast;

    if (!qp) {
        return qroce_cmd_bad(c, "qpn", le32_to_cpu(p->qpn), NOOBJ,
                             QROCE_CMD_ERR_HANDLE);
    }
    if (qp->type != QROCE_QPT_UD) {
        return qroce_cmd_bad(c, "qpn", qp->qpn, "not a UD QP",
                             QROCE_CMD_ERR_PARAM);
    }
    if (p->rsvd) {
        return qroce_cmd_bad(c, "rsvd", le32_to_cpu(p->rsvd), MBZ,
                             QROCE_CMD_ERR_PARAM);
    }
    if (!qroce_gid_is_mcast(p->gid)) {
        return qroce_cmd_bad(c, "gid", ldl_be_p(p->gid + 12),
                             "not a multicast GID", QROCE_CMD_ERR_PARAM);
    }
    return QROCE_CMD_OK;
}

/* ATTACH_MCAST and DETACH_MCAST (the opcode tells which). */
static int qroce_cmd_mcast(QRoceState *s, const struct qroce_cmd *c,
                           uint32_t *out)
{
    QRoceQP *qp = qroce_qp_get(s, le32_to_cpu(c->mcast.qpn));
    int st = qroce_cmd_mcast_args(c, qp);

    if (st) {
        return st;
    }
    if (c->hdr.opcode == QROCE_CMD_ATTACH_MCAST) {
        st = qroce_mcast_attach(s, c->mcast.gid, qp->qpn);
        return st ? qroce_cmd_bad(c, "gid", ldl_be_p(c->mcast.gid + 12),
                                  "the group table or the group is full", st)
                  : QROCE_CMD_OK;
    }
    if (!qroce_mcast_detach(s, c->mcast.gid, qp->qpn)) {
        return qroce_cmd_bad(c, "qpn", qp->qpn, "not attached to the group",
                             QROCE_CMD_ERR_PARAM);
    }
    return QROCE_CMD_OK;
}

static int qroce_cmd_del_gid(QRoceState *s, const struct qroce_cmd *c,
                             uint32_t *out)
{
    uint32_t idx = le32_to_cpu(c->handle.handle);

    if (idx >= QROCE_DEF_MAX_GID) {
        return qroce_cmd_bad(c, "index", idx, RANGE, QROCE_CMD_ERR_PARAM);
    }
    if (!s->gid[idx].valid) {
        return qroce_cmd_bad(c, "index", idx, NOOBJ, QROCE_CMD_ERR_HANDLE);
    }
    memset(&s->gid[idx], 0, sizeof(s->gid[idx]));
    return QROCE_CMD_OK;
}

typedef struct QRoceCmdDesc {
    const char *name;
    QRoceCmdFn fn;
} QRoceCmdDesc;

static const QRoceCmdDesc qroce_cmds[QROCE_CMD_MAX] = {
    [QROCE_CMD_NOP] = { "NOP", qroce_cmd_nop },
    [QROCE_CMD_CREATE_EQ] = { "CREATE_EQ", qroce_cmd_create_eq },
    [QROCE_CMD_DESTROY_EQ] = { "DESTROY_EQ", qroce_cmd_destroy_eq },
    [QROCE_CMD_ALLOC_PD] = { "ALLOC_PD", qroce_cmd_alloc_pd },
    [QROCE_CMD_DEALLOC_PD] = { "DEALLOC_PD", qroce_cmd_dealloc_pd },
    [QROCE_CMD_CREATE_CQ] = { "CREATE_CQ", qroce_cmd_create_cq },
    [QROCE_CMD_DESTROY_CQ] = { "DESTROY_CQ", qroce_cmd_destroy_cq },
    [QROCE_CMD_CREATE_QP] = { "CREATE_QP", qroce_cmd_create_qp },
    [QROCE_CMD_MODIFY_QP] = { "MODIFY_QP", qroce_cmd_modify_qp },
    [QROCE_CMD_QUERY_QP] = { "QUERY_QP", qroce_cmd_query_qp },
    [QROCE_CMD_DESTROY_QP] = { "DESTROY_QP", qroce_cmd_destroy_qp },
    [QROCE_CMD_REG_MR] = { "REG_MR", qroce_cmd_reg_mr },
    [QROCE_CMD_DEREG_MR] = { "DEREG_MR", qroce_cmd_dereg_mr },
    [QROCE_CMD_ALLOC_MR] = { "ALLOC_MR", qroce_cmd_alloc_mr },
    [QROCE_CMD_CREATE_AH] = { "CREATE_AH", qroce_cmd_create_ah },
    [QROCE_CMD_DESTROY_AH] = { "DESTROY_AH", qroce_cmd_destroy_ah },
    [QROCE_CMD_SET_GID] = { "SET_GID", qroce_cmd_set_gid },
    [QROCE_CMD_DEL_GID] = { "DEL_GID", qroce_cmd_del_gid },
    [QROCE_CMD_CREATE_SRQ] = { "CREATE_SRQ", qroce_cmd_create_srq },
    [QROCE_CMD_MODIFY_SRQ] = { "MODIFY_SRQ", qroce_cmd_modify_srq },
    [QROCE_CMD_QUERY_SRQ] = { "QUERY_SRQ", qroce_cmd_query_srq },
    [QROCE_CMD_DESTROY_SRQ] = { "DESTROY_SRQ", qroce_cmd_destroy_srq },
    [QROCE_CMD_ATTACH_MCAST] = { "ATTACH_MCAST", qroce_cmd_mcast },
    [QROCE_CMD_DETACH_MCAST] = { "DETACH_MCAST", qroce_cmd_mcast },
    [QROCE_CMD_RESIZE_CQ] = { "RESIZE_CQ", qroce_cmd_resize_cq },
    [QROCE_CMD_REREG_MR] = { "REREG_MR", qroce_cmd_rereg_mr },
    [QROCE_CMD_ALLOC_MW] = { "ALLOC_MW", qroce_cmd_alloc_mw },
    [QROCE_CMD_DEALLOC_MW] = { "DEALLOC_MW", qroce_cmd_dealloc_mw },
    [QROCE_CMD_ODP_MAP] = { "ODP_MAP", qroce_cmd_odp_map },
    [QROCE_CMD_ODP_UNMAP] = { "ODP_UNMAP", qroce_cmd_odp_unmap },
    [QROCE_CMD_ODP_QUERY] = { "ODP_QUERY", qroce_cmd_odp_query },
    [QROCE_CMD_ODP_RESUME] = { "ODP_RESUME", qroce_cmd_odp_resume },
};

/*
 * Run one command (or fail it as x-inject-cmd-fail asks): its status, its
 * table entry in *@dp (NULL for an unknown opcode).
 */
static int qroce_cmd_exec(QRoceState *s, const struct qroce_cmd *cmd,
                          uint32_t *out, const QRoceCmdDesc **dp)
{
    QRoceParams *p = &s->params;
    uint8_t op = cmd->hdr.opcode;
    const QRoceCmdDesc *d = op < QROCE_CMD_MAX ? &qroce_cmds[op] : NULL;

    *dp = d;
    if (qroce_inject(s, &p->inj_cmd_fail,
                     p->inj_cmd_opcode > 0xff || p->inj_cmd_opcode == op,
                     "cmd-fail", op)) {
        return p->inj_cmd_status ? p->inj_cmd_status : QROCE_CMD_ERR_INTERNAL;
    }
    if (!d || !d->fn) {
        return qroce_cmd_bad(cmd, "opcode", op, "unknown opcode",
                             QROCE_CMD_ERR_OPCODE);
    }
    if (cmd->hdr.flags || cmd->hdr.rsvd) {
        return qroce_cmd_bad(cmd, cmd->hdr.flags ? "flags" : "rsvd",
                             cmd->hdr.flags ? cmd->hdr.flags : cmd->hdr.rsvd,
                             "must be zero", QROCE_CMD_ERR_PARAM);
    }
    return d->fn(s, cmd, out);
}

static const char *qroce_cmd_name(uint8_t opcode)
{
    return opcode < QROCE_CMD_MAX && qroce_cmds[opcode].name ?
           qroce_cmds[opcode].name : "?";
}

#undef RANGE
#undef MBZ
#undef NOOBJ
#undef FULL

void qroce_fatal(QRoceState *s, uint32_t code)
{
    QROCE_GUEST_ERR(qroce_fatal, "device fatal, code %u", code);
    qroce_reg_mask(s, QROCE_REG_STATUS, QROCE_STATUS_READY,
                   QROCE_STATUS_FATAL);
    qroce_reg_set(s, QROCE_REG_FATAL_CODE, code);
}

void qroce_cmd_bh(void *opaque)
{
    QRoceState *s = opaque;
    QROCE_LOCKED(s);
    uint32_t log2 = qroce_reg(s, QROCE_REG_CMDQ_LOG2);
    uint32_t size = 1u << log2;
    int budget = QROCE_CMD_BUDGET;
    bool done = false;
    uint32_t ci;

    if (s->quiesced) {
        return;                 /* the VM is stopped: it waits (§18) */
    }
    s->bt_work = 0;
    while (qroce_ready(s) &&
           (ci = qroce_reg(s, QROCE_REG_CMDQ_CI)) !=
           qroce_reg(s, QROCE_REG_CMDQ_PI)) {
        uint32_t slot = ci & (size - 1);
        struct qroce_cmd cmd;
        struct qroce_cmd_comp comp = {};
        uint32_t out[6] = {};
        const QRoceCmdDesc *d = NULL;
        uint64_t caddr = qroce_reg64(s, QROCE_REG_CMDQ_CQ_LO) +
                         (uint64_t)slot * sizeof(comp);
        int st, i;

        if (budget-- == 0) {
            qemu_bh_schedule(s->cmd_bh);
            break;
        }
        if (!qroce_dma_read(s, qroce_reg64(s, QROCE_REG_CMDQ_BASE_LO) +
                            (uint64_t)slot * sizeof(cmd), &cmd, sizeof(cmd))) {
            qroce_fatal(s, QROCE_FATAL_CMDQ_DMA);
            break;
        }
        if (qroce_inject(s, &s->params.inj_cmd_swallow, true, "cmd-swallow",
                         cmd.hdr.opcode)) {
            /* consumed, never completed */
            qroce_reg_set(s, QROCE_REG_CMDQ_CI, ci + 1);
            continue;
        }
        st = qroce_cmd_exec(s, &cmd, out, &d);
        if (st != QROCE_CMD_OK) {
            qroce_count(s, QROCE_CNT_CMD_ERRS);
            QROCE_GUEST_ERR(qroce_ub_cmd, "command %s (0x%x) failed with "
                            "status %d", d && d->name ? d->name : "?",
                            cmd.hdr.opcode, st);
        }
        qroce_count(s, QROCE_CNT_CMDS);
        trace_qroce_cmd(ci, cmd.hdr.opcode,
                        le32_to_cpu(cmd.hdr.cookie), st, out[0]);
        comp.cookie = cmd.hdr.cookie;
        comp.status = st;
        comp.opcode = cmd.hdr.opcode;
        for (i = 0; i < 6; i++) {
            comp.out[i] = cpu_to_le32(out[i]);
        }
        /* body first (everything but the owner byte), then the owner */
        if (!qroce_dma_write(s, caddr + 8, comp.out, sizeof(comp.out)) ||
            !qroce_dma_write(s, caddr, &comp, 7)) {
            qroce_fatal(s, QROCE_FATAL_CMDQ_DMA);
            break;
        }
        comp.owner = qroce_owner_for(ci, log2);
        smp_wmb(); /* the completion is visible before its owner byte */
        if (!qroce_dma_write(s, caddr + 7, &comp.owner, 1)) {
            qroce_fatal(s, QROCE_FATAL_CMDQ_DMA);
            break;
        }
        qroce_reg_set(s, QROCE_REG_CMDQ_CI, ci + 1);
        done = true;
        if (s->bt_work >= QROCE_CMD_WORK_BUDGET) {
            /* long commands: yield to the guest, go on next time */
            qemu_bh_schedule(s->cmd_bh);
            break;
        }
    }
    if (done) {
        qroce_irq(s, QROCE_MSIX_VEC_CMD);
    }
}

void qroce_ctrl_reset(QRoceState *s)
{
    uint32_t i;

    QROCE_TBL_FOREACH(&s->qps, i) {
        qroce_qp_free(s, qroce_tbl_get(&s->qps, i));
    }
    QROCE_TBL_FOREACH(&s->cqs, i) {
        qroce_bt_free(s, &((QRoceCQ *)qroce_tbl_get(&s->cqs, i))->bt);
        qroce_tbl_free(s, &s->cqs, i);
    }
    QROCE_TBL_FOREACH(&s->mrs, i) {
        /* keys stay unique across resets: the stamps stay */
        qroce_mr_free(s, qroce_tbl_get(&s->mrs, i));
    }
    QROCE_TBL_FOREACH(&s->srqs, i) {
        qroce_bt_free(s, &((QRoceSRQ *)qroce_tbl_get(&s->srqs, i))->wq.bt);
        qroce_tbl_free(s, &s->srqs, i);
    }
    for (i = 0; i < QROCE_NUM_EQS; i++) {
        qroce_bt_free(s, &s->eq[i].bt);
    }
    memset(s->eq, 0, sizeof(s->eq));
    memset(s->pd, 0, sizeof(*s->pd) * s->params.max_pd);
    memset(s->ah, 0, sizeof(*s->ah) * s->params.max_ah);
    memset(s->gid, 0, sizeof(s->gid));
    for (i = 0; i < s->params.mcast_max_groups; i++) {
        s->mcast[i].nqp = 0;
    }
    /*
     * Nothing holds translation memory now.  A migration stream cut short
     * may have left rings it loaded uncounted: the count starts over.
     */
    s->bt_pages = 0;
}
