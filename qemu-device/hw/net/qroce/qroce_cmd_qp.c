/*
 * qroce: the commands of queue pairs: CREATE_QP, MODIFY_QP (the state
 * machine), QUERY_QP, DESTROY_QP (docs/hw-spec.md §3).  Each checks every
 * value the guest supplies before use and answers with a status.
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

int qroce_cmd_create_qp(QRoceState *s, const struct qroce_cmd *c,
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

int qroce_cmd_modify_qp(QRoceState *s, const struct qroce_cmd *c,
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

int qroce_cmd_query_qp(QRoceState *s, const struct qroce_cmd *c,
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

void qroce_qp_free(QRoceState *s, QRoceQP *qp)
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

int qroce_cmd_destroy_qp(QRoceState *s, const struct qroce_cmd *c,
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
