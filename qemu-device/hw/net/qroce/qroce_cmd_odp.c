/*
 * qroce: the on-demand paging commands (docs/hw-spec.md §4b): ODP_MAP and
 * ODP_UNMAP fill and clear an ODP MR's table (qroce_odp.c), ODP_QUERY
 * and ODP_RESUME read and end a QP's page fault (raised by the data
 * path).  Commands and the engine both run
 * under the device's lock, so once ODP_UNMAP completes no access uses
 * what it removed.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qroce_cmd.h"
#include "qroce_objects.h"
#include "qroce_ring.h"
#include "qroce_data.h"
#include "qroce_odp.h"
#include "trace.h"

/* ------------------------------------------------------------------ */
/* Commands                                                            */
/* ------------------------------------------------------------------ */

/* The ODP MR @key names, pages [@first, @first + @n) inside it. */
static int odp_mr(QRoceState *s, const struct qroce_cmd *c, uint32_t key,
                  uint64_t first, uint64_t n, QRoceMR **out)
{
    QRoceMR *mr = qroce_mr_get(s, key);

    if (!mr) {
        return qroce_cmd_bad(c, "key", key, "names no MR",
                             QROCE_CMD_ERR_HANDLE);
    }
    if (!mr->bt.is_odp || !mr->bt.odp) {
        return qroce_cmd_bad(c, "key", key, "not an ODP MR",
                             QROCE_CMD_ERR_PARAM);
    }
    if (first >= mr->bt.odp_npages || n > mr->bt.odp_npages - first) {
        return qroce_cmd_bad(c, "first", first, "past the MR's pages",
                             QROCE_CMD_ERR_PARAM);
    }
    *out = mr;
    return QROCE_CMD_OK;
}

int qroce_cmd_odp_map(QRoceState *s, const struct qroce_cmd *c,
                      uint32_t *out)
{
    const struct qroce_cmd_odp_map *p = &c->odp_map;
    uint32_t n = le32_to_cpu(p->npages), i, mapped = 0;
    uint64_t first = le64_to_cpu(p->first);
    uint64_t e[QROCE_ODP_MAX_MAP];
    QRoceMR *mr;
    int st;

    if (!n || n > QROCE_ODP_MAX_MAP) {
        return qroce_cmd_bad(c, "npages", n, "out of range",
                             QROCE_CMD_ERR_PARAM);
    }
    st = odp_mr(s, c, le32_to_cpu(p->key), first, n, &mr);
    if (st != QROCE_CMD_OK) {
        return st;
    }
    if (!qroce_dma_copy(s, le64_to_cpu(p->list), e, n * sizeof(e[0]),
                        false)) {
        return qroce_cmd_bad(c, "list", le64_to_cpu(p->list), "not guest RAM",
                             QROCE_CMD_ERR_DMA);
    }
    for (i = 0; i < n; i++) {
        e[i] = le64_to_cpu(e[i]);
        if ((e[i] & ((1ull << QROCE_ODP_PAGE_SHIFT) - 1) & ~QROCE_ODP_FLAGS) ||
            (e[i] && !(e[i] & QROCE_ODP_PRESENT))) {
            return qroce_cmd_bad(c, "entry", e[i], "bad low bits",
                                 QROCE_CMD_ERR_PARAM);
        }
    }
    for (i = 0; i < n; i++) {
        int m = qroce_odp_set(s, &mr->bt, first + i, e[i]);

        if (m < 0) {
            st = QROCE_CMD_ERR_NORES;   /* the entries before stay */
            break;
        }
        mapped += m;
    }
    s->cnt[QROCE_CNT_ODP_PAGES_MAPPED] += mapped;
    trace_qroce_odp_map(mr->key, first, n, mapped);
    return st;
}

int qroce_cmd_odp_unmap(QRoceState *s, const struct qroce_cmd *c,
                        uint32_t *out)
{
    const struct qroce_cmd_odp_unmap *p = &c->odp_unmap;
    uint64_t first = le64_to_cpu(p->first), n = le64_to_cpu(p->npages);
    uint64_t cleared;
    QRoceMR *mr;
    int st;

    if (p->rsvd) {
        return qroce_cmd_bad(c, "rsvd", p->rsvd, "must be zero",
                             QROCE_CMD_ERR_PARAM);
    }
    if (!n) {
        return QROCE_CMD_OK;
    }
    st = odp_mr(s, c, le32_to_cpu(p->key), first, n, &mr);
    if (st != QROCE_CMD_OK) {
        return st;
    }
    cleared = qroce_odp_clear_range(s, &mr->bt, first, first + n - 1);
    s->cnt[QROCE_CNT_ODP_PAGES_UNMAPPED] += cleared;
    trace_qroce_odp_unmap(mr->key, first, n, cleared);
    return QROCE_CMD_OK;
}

static int odp_pf(QRoceState *s, const struct qroce_cmd *c, QRoceQP **qp,
                  QRocePF **f)
{
    const struct qroce_cmd_odp_pf *p = &c->odp_pf;
    uint32_t side = le32_to_cpu(p->side);

    *qp = qroce_qp_get(s, le32_to_cpu(p->qpn));
    if (!*qp) {
        return qroce_cmd_bad(c, "qpn", le32_to_cpu(p->qpn), "names no QP",
                             QROCE_CMD_ERR_HANDLE);
    }
    if (side > QROCE_PF_RESP) {
        return qroce_cmd_bad(c, "side", side, "out of range",
                             QROCE_CMD_ERR_PARAM);
    }
    *f = &(*qp)->pf[side];
    return QROCE_CMD_OK;
}

int qroce_cmd_odp_query(QRoceState *s, const struct qroce_cmd *c,
                        uint32_t *out)
{
    QRoceQP *qp;
    QRocePF *f;
    int st = odp_pf(s, c, &qp, &f);

    if (st != QROCE_CMD_OK) {
        return st;
    }
    out[0] = f->state;
    out[1] = f->key;
    out[2] = (uint32_t)f->va;
    out[3] = f->va >> 32;
    out[4] = f->len;
    out[5] = f->token | (f->write ? QROCE_PF_WRITE : 0);
    return QROCE_CMD_OK;
}

int qroce_cmd_odp_resume(QRoceState *s, const struct qroce_cmd *c,
                         uint32_t *out)
{
    const struct qroce_cmd_odp_pf *p = &c->odp_pf;
    uint32_t status = le32_to_cpu(p->status);
    QRoceQP *qp;
    QRocePF *f;
    int st = odp_pf(s, c, &qp, &f);

    if (st != QROCE_CMD_OK) {
        return st;
    }
    if (status > QROCE_PF_RESUME_ERR) {
        return qroce_cmd_bad(c, "status", status, "out of range",
                             QROCE_CMD_ERR_PARAM);
    }
    if (f->state != QROCE_PF_PENDING ||
        f->token != le32_to_cpu(p->token)) {
        /* gone (the QP left RTS, was reset) or a fault since: no harm */
        return qroce_cmd_bad(c, "token", le32_to_cpu(p->token),
                             "no such fault outstanding", QROCE_CMD_ERR_STATE);
    }
    f->state = status ? QROCE_PF_FAILED : QROCE_PF_NONE;
    trace_qroce_odp_resume(qp->qpn, le32_to_cpu(p->side), f->token, status);
    qroce_data_odp_resumed(s, qp);
    return QROCE_CMD_OK;
}
