/*
 * qroce: debugging the device from outside (docs/hw-spec.md §14, §15 and
 * §17): the run-time knobs (QOM properties that may change while the
 * device runs), fault injection events (x-inject-event) and the
 * x-objects dump of every object and counter.
 * Nothing here is used by a guest driver.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/main-loop.h"
#include "qemu/cutils.h"
#include "qapi/error.h"
#include "qapi/visitor.h"
#include "qobject/qdict.h"
#include "qobject/qlist.h"
#include "qobject/qjson.h"
#include "hw/pci/pci_device.h"
#include "qroce.h"
#include "qroce_debug.h"
#include "qroce_regs.h"
#include "qroce_ctrl.h"
#include "qroce_eth.h"
#include "qroce_data.h"
#include "qroce_ring.h"
#include "qroce_port.h"
#include "qroce_data_common.h"
#include "qroce_objects.h"
#include "trace.h"

/* ------------------------------------------------------------------ */
/* Fault injection: events (docs/hw-spec.md §17)                        */
/* ------------------------------------------------------------------ */

static bool qroce_inject_event(QRoceState *s, const char *what, size_t len,
                               uint64_t n, Error **errp)
{
    QRoceQP *qp;
    QRoceCQ *cq;

#define IS(x) (len == strlen(x) && !strncmp(what, x, len))
    if (IS("port-down") || IS("port-up")) {
        qroce_async_event(s, IS("port-up") ? QROCE_EQE_PORT_ACTIVE :
                          QROCE_EQE_PORT_DOWN, 1, 0);
        n = 1;
    } else if (IS("qp-fatal")) {
        qp = n <= UINT32_MAX ? qroce_qp_get(s, n) : NULL;
        if (!qp || qp->state == QROCE_QPS_RESET) {
            error_setg(errp, "qroce: x-inject-event: no QP %" PRIu64
                       " out of RESET", n);
            return false;
        }
        if (qp->state == QROCE_QPS_ERR) {
            qroce_async_event(s, QROCE_EQE_QP_FATAL, qp->qpn, 0);
        } else {
            qroce_qp_set_error(s, qp, QROCE_EQE_QP_FATAL);
        }
    } else if (IS("cq-err")) {
        cq = n <= UINT32_MAX ? qroce_cq_get(s, n) : NULL;
        if (!cq) {
            error_setg(errp, "qroce: x-inject-event: no CQ %" PRIu64, n);
            return false;
        }
        cq->error = true;
        qroce_async_event(s, QROCE_EQE_CQ_ERR, cq->cqn, 0);
    } else if (IS("device-fatal")) {
        qroce_fatal(s, QROCE_FATAL_INJECTED);
        qroce_irq(s, QROCE_MSIX_VEC_CMD);
        n = 0;
    } else {
        error_setg(errp, "qroce: x-inject-event: port-down, port-up, "
                   "qp-fatal:QPN, cq-err:CQN or device-fatal");
        return false;
    }
#undef IS
    qroce_count(s, QROCE_CNT_INJECTED_FAULTS);
    trace_qroce_inject(what, n, 0);
    return true;
}

/* ------------------------------------------------------------------ */
/* Introspection: the "x-objects" property (docs/hw-spec.md §17)        */
/* ------------------------------------------------------------------ */

/* unsized: the check below fails the build if a counter has no name */
static const char *const qroce_cnt_names[] = {
    "eth_tx_frames", "eth_rx_frames", "eth_rx_drops", "roce_tx_pkts",
    "roce_rx_pkts", "roce_rx_drops", "roce_icrc_errs", "roce_seq_naks",
    "roce_rnr_naks", "roce_retrans", "roce_dup_reqs", "cmds", "cmd_errs",
    "bad_doorbells", "cqe_errs", "cnp_sent", "cnp_handled", "ecn_marked",
    "rate_cuts", "wire_faults", "injected_faults", "eth_rx_filtered",
    "odp_faults", "odp_pages_mapped", "odp_pages_unmapped", "fast_regs",
};

QEMU_BUILD_BUG_ON(ARRAY_SIZE(qroce_cnt_names) != QROCE_CNT_NUM);

static const char *const qroce_qpt_names[] = { "RC", "UC", "UD", "GSI" };
static const char *const qroce_qps_names[] = {
    "RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR",
};

static QDict *qroce_info_qp(const QRoceQP *qp)
{
    const QRoceQPXport *r = &qp->xp;
    QDict *d = qdict_new(), *sq = qdict_new(), *rq = qdict_new();

    qdict_put_int(d, "qpn", qp->qpn);
    qdict_put_str(d, "type", qp->type < ARRAY_SIZE(qroce_qpt_names) ?
                  qroce_qpt_names[qp->type] : "?");
    qdict_put_str(d, "state", qp->state < ARRAY_SIZE(qroce_qps_names) ?
                  qroce_qps_names[qp->state] : "?");
    qdict_put_int(d, "pdn", qp->pdn);
    qdict_put_int(d, "scqn", qp->scqn);
    qdict_put_int(d, "rcqn", qp->rcqn);
    qdict_put_int(d, "srqn", qp->srqn);
    qdict_put_int(d, "dest_qpn", qp->dest_qpn);
    qdict_put_int(sq, "pi", qp->sq.pi);
    qdict_put_int(sq, "ci", qp->sq.ci);
    qdict_put_int(sq, "sent", r->sq_sent);
    qdict_put(d, "sq", sq);
    qdict_put_int(rq, "pi", qp->rq.pi);
    qdict_put_int(rq, "ci", qp->rq.ci);
    qdict_put(d, "rq", rq);
    qdict_put_int(d, "sq_psn", qp->sq_psn);
    qdict_put_int(d, "rq_psn", qp->rq_psn);
    qdict_put_int(d, "npsn", r->npsn);
    qdict_put_int(d, "una_psn", r->una_psn);
    qdict_put_int(d, "epsn", r->epsn);
    qdict_put_int(d, "outstanding", r->nsent);
    return d;
}

static QDict *qroce_info_cq(const QRoceCQ *cq)
{
    QDict *d = qdict_new();

    qdict_put_int(d, "cqn", cq->cqn);
    qdict_put_int(d, "eqn", cq->eqn);
    qdict_put_int(d, "log2", cq->log2);
    qdict_put_int(d, "pi", cq->pi);
    qdict_put_int(d, "ci_seen", cq->ci_seen);
    qdict_put_int(d, "arm", cq->arm);
    qdict_put_bool(d, "error", cq->error);
    qdict_put_int(d, "refs", cq->refs);
    return d;
}

static QDict *qroce_info_mr(const QRoceMR *mr)
{
    QDict *d = qdict_new();

    qdict_put_int(d, "key", mr->key);
    qdict_put_int(d, "pdn", mr->pdn);
    qdict_put_int(d, "iova", mr->iova);
    qdict_put_int(d, "length", mr->length);
    qdict_put_int(d, "access", mr->access);
    qdict_put_bool(d, "frmr", mr->frmr);
    qdict_put_bool(d, "valid", mr->mw_type ? mr->mw_bound :
                   !mr->frmr || mr->frmr_valid);
    qdict_put_int(d, "mw_type", mr->mw_type);       /* 0: an MR */
    if (mr->mw_type) {
        qdict_put_int(d, "mw_qpn", mr->mw_qpn);
        qdict_put_int(d, "mw_mr_key", mr->mw_mr_key);
    } else {
        qdict_put_int(d, "mw_refs", mr->mw_refs);
    }
    return d;
}

static QDict *qroce_info_srq(const QRoceSRQ *srq)
{
    QDict *d = qdict_new();

    qdict_put_int(d, "srqn", srq->srqn);
    qdict_put_int(d, "pdn", srq->pdn);
    qdict_put_int(d, "limit", srq->limit);
    qdict_put_int(d, "pi", srq->wq.pi);
    qdict_put_int(d, "ci", srq->wq.ci);
    return d;
}

static QDict *qroce_info_eq(const QRoceEQ *eq, uint32_t eqn)
{
    QDict *d = qdict_new();

    qdict_put_int(d, "eqn", eqn);
    qdict_put_int(d, "log2", eq->log2);
    qdict_put_int(d, "pi", eq->pi);
    qdict_put_int(d, "ci", eq->ci);
    return d;
}

/* A QList of the objects of table @tab, each described by @fn. */
#define QROCE_INFO_LIST(tab, fn) ({                                     \
    QList *l_ = qlist_new();                                            \
    uint32_t i_;                                                        \
    QROCE_TBL_FOREACH(tab, i_) {                                        \
        qlist_append(l_, fn(qroce_tbl_get(tab, i_)));                   \
    }                                                                   \
    l_; })

/* The device's objects and counters as one JSON object. */
static char *qroce_objects_json(QRoceState *s)
{
    QDict *d = qdict_new(), *cnt = qdict_new();
    QList *eqs = qlist_new();
    GString *js;
    uint32_t i;

    qdict_put_int(d, "status", qroce_reg(s, QROCE_REG_STATUS));
    qdict_put_int(d, "fatal_code", qroce_reg(s, QROCE_REG_FATAL_CODE));
    for (i = 0; i < QROCE_CNT_NUM; i++) {
        qdict_put_int(cnt, qroce_cnt_names[i], s->cnt[i]);
    }
    qdict_put(d, "counters", cnt);
    for (i = 0; i < QROCE_NUM_EQS; i++) {
        if (s->eq[i].valid) {
            qlist_append(eqs, qroce_info_eq(&s->eq[i], i));
        }
    }
    qdict_put(d, "eqs", eqs);
    qdict_put(d, "cqs", QROCE_INFO_LIST(&s->cqs, qroce_info_cq));
    qdict_put(d, "qps", QROCE_INFO_LIST(&s->qps, qroce_info_qp));
    qdict_put(d, "mrs", QROCE_INFO_LIST(&s->mrs, qroce_info_mr));
    qdict_put(d, "srqs", QROCE_INFO_LIST(&s->srqs, qroce_info_srq));
    qdict_put_int(d, "state_bytes", s->state_bytes);
    js = qobject_to_json(QOBJECT(d));
    qobject_unref(d);
    return g_string_free(js, false);
}

/*
 * The knobs a test or a developer turns while the guest runs (qom-set),
 * or sets at start (-device qroce,NAME=VALUE): congestion control, the
 * ACK timeout floor, wire faults.  docs/hw-spec.md §14 and §15.
 */
typedef struct QRoceKnob {
    const char *name;
    size_t off;             /* in QRoceParams */
    uint32_t def;
    void (*apply)(QRoceState *s);   /* run when set on a realized device */
} QRoceKnob;

#define KNOB(n, f, d) { n, offsetof(QRoceParams, f), d, NULL }
#define KNOB_APPLY(n, f, d, a) { n, offsetof(QRoceParams, f), d, a }

static void qroce_apply_stall(QRoceState *s)
{
    if (s->params.inj_stall_us) {
        qroce_count(s, QROCE_CNT_INJECTED_FAULTS);
    }
    qroce_data_stall(s, s->params.inj_stall_qpn, s->params.inj_stall_us);
}

static const QRoceKnob qroce_knobs[] = {
    KNOB("x-min-ack-timeout-us", min_ack_timeout_us, 4000),
    KNOB("retry-backoff", retry_backoff, 0),
    KNOB("ecn-threshold", ecn_threshold, 16),
    KNOB("cnp-interval-us", cnp_interval_us, 50),
    KNOB("dcqcn-line-mbps", dcqcn_line_mbps, 100000),
    KNOB("dcqcn-min-mbps", dcqcn_min_mbps, 10),
    KNOB("dcqcn-ai-mbps", dcqcn_ai_mbps, 5),
    KNOB("dcqcn-hai-mbps", dcqcn_hai_mbps, 50),
    KNOB("dcqcn-g", dcqcn_g, 4),
    KNOB("dcqcn-alpha-us", dcqcn_alpha_us, 55),
    KNOB("dcqcn-timer-us", dcqcn_timer_us, 55),
    KNOB("dcqcn-byte-kb", dcqcn_byte_kb, 1024),
    KNOB("dcqcn-f", dcqcn_f, 5),
    KNOB("dcqcn-wnd-g", dcqcn_wnd_g, 64),
    KNOB("x-tx-drop-ppm", fault_ppm[QROCE_DIR_TX][QROCE_FAULT_DROP], 0),
    KNOB("x-tx-dup-ppm", fault_ppm[QROCE_DIR_TX][QROCE_FAULT_DUP], 0),
    KNOB("x-tx-reorder-ppm", fault_ppm[QROCE_DIR_TX][QROCE_FAULT_REORDER], 0),
    KNOB("x-tx-corrupt-ppm", fault_ppm[QROCE_DIR_TX][QROCE_FAULT_CORRUPT], 0),
    KNOB("x-rx-drop-ppm", fault_ppm[QROCE_DIR_RX][QROCE_FAULT_DROP], 0),
    KNOB("x-rx-dup-ppm", fault_ppm[QROCE_DIR_RX][QROCE_FAULT_DUP], 0),
    KNOB("x-rx-reorder-ppm", fault_ppm[QROCE_DIR_RX][QROCE_FAULT_REORDER], 0),
    KNOB("x-rx-corrupt-ppm", fault_ppm[QROCE_DIR_RX][QROCE_FAULT_CORRUPT], 0),
    /* fault injection for driver tests, §17 */
    KNOB("x-inject-cmd-fail", inj_cmd_fail, 0),
    KNOB("x-inject-cmd-opcode", inj_cmd_opcode, 256),
    KNOB("x-inject-cmd-status", inj_cmd_status, QROCE_CMD_ERR_INTERNAL),
    KNOB("x-inject-cmd-swallow", inj_cmd_swallow, 0),
    KNOB("x-inject-wqe-err", inj_wqe_err, 0),
    KNOB("x-inject-wqe-qpn", inj_wqe_qpn, 0),
    KNOB("x-inject-wqe-status", inj_wqe_status, QROCE_WC_GENERAL_ERR),
    KNOB("x-inject-rnr-nak", inj_rnr_nak, 0),
    KNOB("x-inject-access-nak", inj_access_nak, 0),
    KNOB("x-inject-nak-qpn", inj_nak_qpn, 0),
    KNOB("x-inject-stall-qpn", inj_stall_qpn, 0),
    KNOB_APPLY("x-inject-stall-us", inj_stall_us, 0, qroce_apply_stall),
};

#undef KNOB
#undef KNOB_APPLY

static uint32_t *qroce_knob_ptr(QRoceState *s, const QRoceKnob *k)
{
    return (uint32_t *)((uint8_t *)&s->params + k->off);
}

static void qroce_knob_get(Object *obj, Visitor *v, const char *name,
                           void *opaque, Error **errp)
{
    const QRoceKnob *k = opaque;

    visit_type_uint32(v, name, qroce_knob_ptr(QROCE(obj), k), errp);
}

static void qroce_knob_set(Object *obj, Visitor *v, const char *name,
                           void *opaque, Error **errp)
{
    const QRoceKnob *k = opaque;
    uint32_t val;
    QROCE_LOCKED(QROCE(obj));

    if (!visit_type_uint32(v, name, &val, errp)) {
        return;
    }
    *qroce_knob_ptr(QROCE(obj), k) = val;
    if (DEVICE(obj)->realized) {
        k->apply(QROCE(obj));
    }
}

/* x-inject-event: raise one now (§17); "port-down", "qp-fatal:5", ... */
static void qroce_set_inject_event(Object *obj, const char *value,
                                   Error **errp)
{
    QRoceState *s = QROCE(obj);
    const char *arg = strchr(value, ':');
    size_t len = arg ? (size_t)(arg - value) : strlen(value);
    uint64_t n = 0;
    QROCE_LOCKED(s);

    if (!DEVICE(obj)->realized) {
        error_setg(errp, "qroce: x-inject-event works on a running device");
        return;
    }
    if (arg && qemu_strtou64(arg + 1, NULL, 0, &n)) {
        error_setg(errp, "qroce: x-inject-event: bad number in '%s'", value);
        return;
    }
    if (!qroce_inject_event(s, value, len, n, errp)) {
        return;
    }
    g_free(s->params.inj_event);
    s->params.inj_event = g_strdup(value);
}

static char *qroce_get_inject_event(Object *obj, Error **errp)
{
    const char *ev = QROCE(obj)->params.inj_event;

    return g_strdup(ev ? ev : "");
}

static char *qroce_get_objects(Object *obj, Error **errp)
{
    QROCE_LOCKED(QROCE(obj));

    return qroce_objects_json(QROCE(obj));
}

void qroce_debug_init(Object *obj)
{
    QRoceState *s = QROCE(obj);
    size_t i;

    for (i = 0; i < ARRAY_SIZE(qroce_knobs); i++) {
        uint32_t *v = qroce_knob_ptr(s, &qroce_knobs[i]);

        *v = qroce_knobs[i].def;
        if (qroce_knobs[i].apply) {
            object_property_add(obj, qroce_knobs[i].name, "uint32",
                                qroce_knob_get, qroce_knob_set, NULL,
                                (void *)&qroce_knobs[i]);
        } else {
            object_property_add_uint32_ptr(obj, qroce_knobs[i].name, v,
                                           OBJ_PROP_FLAG_READWRITE);
        }
    }
    object_property_add_str(obj, "x-inject-event", qroce_get_inject_event,
                            qroce_set_inject_event);
    object_property_add_str(obj, "x-objects", qroce_get_objects, NULL);
    object_property_add_uint64_ptr(obj, "x-fault-seed", &s->params.fault_seed,
                                   OBJ_PROP_FLAG_READWRITE);
}
