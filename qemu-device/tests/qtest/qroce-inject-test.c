/*
 * qtests of qroce: fault injection and introspection (docs/hw-spec.md
 * §17), through the device's QOM properties: the wire's fault knobs,
 * failed and swallowed commands, WQEs that end in error, NAKs, events, the
 * link, stalls, and the "x-objects" view of the device's state.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "libqtest.h"
#include "qobject/qdict.h"
#include "qobject/qlist.h"
#include "qobject/qjson.h"
#include "qapi/error.h"
#include "libqos/qroce.h"

/*
 * The wire fault knobs at run time (qom-set): with every frame dropped a
 * SEND is not delivered and the drops are counted; with the knob back at
 * 0 the retry timer sends it again and it completes.
 */
static void test_fault_knobs(QRoce *t)
{
    struct qroce_cqe cqe;
    QRoceQP a, b;
    uint64_t cq, buf;
    uint32_t pdn, cqn, key, idx = 0;

    qroce_objs_setup(t, QROCE_ACCESS_LOCAL_WRITE, &pdn, &cqn, &cq, &buf, &key);
    qroce_rc_pair(t, pdn, cqn, 1, &a, &b);
    qroce_qom_set_int(t, "x-tx-drop-ppm", 1000000);
    g_assert_cmpint(qroce_qom_get_int(t, "x-tx-drop-ppm"), ==, 1000000);

    qroce_post_recv(t, b.rq, 0, buf + 4096, 1000, key);
    qroce_db(t, QROCE_DB_RQ, b.qpn, 1);
    qroce_post_send(t, a.sq, 0, buf, 1000, key, QROCE_WQE_SIGNALED);
    qroce_db(t, QROCE_DB_SQ, a.qpn, 1);
    qroce_wait_cnt(t, QROCE_CNT_WIRE_FAULTS, 1);
    g_assert_false(qroce_entry_ready(t, cq, sizeof(cqe), 6, 0));
    g_assert_cmpuint(qroce_cnt(t, QROCE_CNT_ROCE_RX_PKTS), ==, 0);

    qroce_qom_set_int(t, "x-tx-drop-ppm", 0);
    qtest_clock_step(t->qts, 200 * 1000 * 1000);     /* the retry timer */
    qroce_next_send_cqe(t, cq, &idx, a.qpn, &cqe);
    g_assert_cmpuint(cqe.status, ==, QROCE_WC_SUCCESS);
    g_assert_cmpuint(qroce_cnt(t, QROCE_CNT_ROCE_RETRANS), >=, 1);
}

/* The faults the inject-* knobs made so far. */
static uint32_t injected(QRoce *t)
{
    return qroce_cnt(t, QROCE_CNT_INJECTED_FAULTS);
}

/*
 * x-inject-cmd-fail: the next command of one opcode fails with the chosen
 * status, others and the one after succeed.  x-inject-cmd-swallow: a
 * command is consumed without a completion, the next one completes.
 */
static void test_inject_cmd(QRoce *t)
{
    struct qroce_cmd c = { .hdr.opcode = QROCE_CMD_NOP };
    uint32_t out[6];

    qroce_enable(t);
    g_assert_cmpint(qroce_qom_get_int(t, "x-inject-cmd-opcode"), ==, 256);
    g_assert_cmpint(qroce_qom_get_int(t, "x-inject-cmd-status"), ==, 4);
    qroce_qom_set_int(t, "x-inject-cmd-opcode", QROCE_CMD_ALLOC_PD);
    qroce_qom_set_int(t, "x-inject-cmd-status", QROCE_CMD_ERR_NORES);
    qroce_qom_set_int(t, "x-inject-cmd-fail", 1);
    g_assert_cmpuint(qroce_cmd_simple(t, QROCE_CMD_NOP, 0, NULL), ==,
                     QROCE_CMD_OK);
    g_assert_cmpuint(qroce_cmd_simple(t, QROCE_CMD_ALLOC_PD, 0, NULL), ==,
                     QROCE_CMD_ERR_NORES);
    g_assert_cmpuint(qroce_cmd_simple(t, QROCE_CMD_ALLOC_PD, 0, out), ==,
                     QROCE_CMD_OK);
    g_assert_cmpuint(out[0], ==, 1);   /* the failed one allocated nothing */
    g_assert_cmpint(qroce_qom_get_int(t, "x-inject-cmd-fail"), ==, 0);
    g_assert_cmpuint(injected(t), ==, 1);
    g_assert_cmpuint(qroce_cnt(t, QROCE_CNT_CMD_ERRS), ==, 1);

    /* any opcode, two in a row */
    qroce_qom_set_int(t, "x-inject-cmd-opcode", 256);
    qroce_qom_set_int(t, "x-inject-cmd-status", QROCE_CMD_ERR_INTERNAL);
    qroce_qom_set_int(t, "x-inject-cmd-fail", 2);
    g_assert_cmpuint(qroce_cmd_simple(t, QROCE_CMD_NOP, 0, NULL), ==,
                     QROCE_CMD_ERR_INTERNAL);
    g_assert_cmpuint(qroce_cmd_simple(t, QROCE_CMD_DEALLOC_PD, 1, NULL), ==,
                     QROCE_CMD_ERR_INTERNAL);
    g_assert_cmpuint(qroce_cmd_simple(t, QROCE_CMD_DEALLOC_PD, 1, NULL), ==,
                     QROCE_CMD_OK);
    g_assert_cmpuint(injected(t), ==, 3);

    /* swallowed: CMDQ_CI moves, no completion entry */
    qroce_qom_set_int(t, "x-inject-cmd-swallow", 1);
    c.hdr.cookie = cpu_to_le32(0xdead);
    qroce_cmd_post(t, &c);
    qroce_wait_reg(t, QROCE_REG_CMDQ_CI, t->pi);
    g_assert_false(qroce_entry_ready(t, t->comp, QROCE_CMD_COMP_SIZE,
                                     QROCE_CMDQ_LOG2, t->pi - 1));
    g_assert_cmpuint(injected(t), ==, 4);
    g_assert_cmpint(qroce_qom_get_int(t, "x-inject-cmd-swallow"), ==, 0);
    /* the queue is not stuck: the next command completes */
    g_assert_cmpuint(qroce_cmd_simple(t, QROCE_CMD_NOP, 0, NULL), ==,
                     QROCE_CMD_OK);
    g_assert_false(qroce_entry_ready(t, t->comp, QROCE_CMD_COMP_SIZE,
                                     QROCE_CMDQ_LOG2, t->pi - 2));
}

/* x-inject-wqe-err: N send WQEs of a QP, or of any, end in the status. */
static void test_inject_wqe(QRoce *t)
{
    QRoceEnv e;
    QRoceQP a, b, c;

    qroce_env_setup(&e, t);
    qroce_env_pair(&e, &a, &b, 1);
    qroce_env_lone(&e, e.pdn, &c);
    qroce_qom_set_int(e.t, "x-inject-wqe-qpn", b.qpn);     /* not a's */
    qroce_qom_set_int(e.t, "x-inject-wqe-status", QROCE_WC_LOC_PROT_ERR);
    qroce_qom_set_int(e.t, "x-inject-wqe-err", 1);
    qroce_env_recv(&e, &b, 0);
    qroce_env_send(&e, &a, 100);
    qroce_env_cqe(&e, &a, QROCE_CQE_SEND, QROCE_WC_SUCCESS, NULL);
    qroce_env_cqe(&e, &b, QROCE_CQE_RECV, QROCE_WC_SUCCESS, NULL);
    g_assert_cmpuint(injected(e.t), ==, 0);
    qroce_env_send(&e, &b, 100);
    qroce_env_cqe(&e, &b, 0, QROCE_WC_LOC_PROT_ERR, NULL);
    g_assert_cmpuint(qroce_qp_state(e.t, b.qpn), ==, QROCE_QPS_ERR);
    g_assert_cmpuint(injected(e.t), ==, 1);
    g_assert_cmpint(qroce_qom_get_int(e.t, "x-inject-wqe-err"), ==, 0);

    /* two WQEs of any QP, the default status */
    qroce_qom_set_int(e.t, "x-inject-wqe-qpn", 0);
    qroce_qom_set_int(e.t, "x-inject-wqe-status", QROCE_WC_GENERAL_ERR);
    qroce_qom_set_int(e.t, "x-inject-wqe-err", 2);
    qroce_env_send(&e, &a, 100);
    qroce_env_cqe(&e, &a, 0, QROCE_WC_GENERAL_ERR, NULL);
    qroce_env_send(&e, &c, 100);
    qroce_env_cqe(&e, &c, 0, QROCE_WC_GENERAL_ERR, NULL);
    g_assert_cmpuint(qroce_qp_state(e.t, c.qpn), ==, QROCE_QPS_ERR);
    g_assert_cmpuint(injected(e.t), ==, 3);
    /* only the first SEND and its ACK went on the wire */
    g_assert_cmpuint(qroce_cnt(e.t, QROCE_CNT_ROCE_RX_PKTS), ==, 2);

    /*
     * The chosen WQE waits for the one before it (lost, retransmitted):
     * it keeps its fault, and no second count is used.
     */
    qroce_env_pair(&e, &a, &b, 1);
    qroce_env_recv(&e, &b, 0);
    qroce_qom_set_int(e.t, "x-tx-drop-ppm", 1000000);
    qroce_env_send(&e, &a, 100);
    qroce_wait_cnt(e.t, QROCE_CNT_WIRE_FAULTS, 1);
    qroce_qom_set_int(e.t, "x-inject-wqe-qpn", a.qpn);
    qroce_qom_set_int(e.t, "x-inject-wqe-status", QROCE_WC_LOC_PROT_ERR);
    qroce_qom_set_int(e.t, "x-inject-wqe-err", 2);
    qroce_env_send(&e, &a, 100);
    qroce_wait_cnt(e.t, QROCE_CNT_INJECTED_FAULTS, 4);
    g_assert_false(
        qroce_entry_ready(e.t, a.cq, sizeof(struct qroce_cqe), 6, 0));
    qroce_qom_set_int(e.t, "x-tx-drop-ppm", 0);
    qtest_clock_step(e.t->qts, 200 * 1000 * 1000);   /* the retry timer */
    qroce_env_cqe(&e, &a, QROCE_CQE_SEND, QROCE_WC_SUCCESS, NULL);
    qroce_env_cqe(&e, &a, 0, QROCE_WC_LOC_PROT_ERR, NULL);
    g_assert_cmpuint(injected(e.t), ==, 4);
    g_assert_cmpint(qroce_qom_get_int(e.t, "x-inject-wqe-err"), ==, 1);
}

/*
 * x-inject-rnr-nak: the responder answers one SEND with an RNR NAK, the
 * requester retries after the RNR timer and succeeds.  x-inject-access-nak:
 * the requester's WQE ends in REM_ACCESS_ERR, the responder in ERR.
 */
static void test_inject_nak(QRoce *t)
{
    QRoceEnv e;
    QRoceQP a, b;
    uint32_t rnr;

    qroce_env_setup(&e, t);
    qroce_env_pair(&e, &a, &b, 1);
    qroce_qom_set_int(e.t, "x-inject-nak-qpn", b.qpn);
    qroce_qom_set_int(e.t, "x-inject-rnr-nak", 1);
    rnr = qroce_cnt(e.t, QROCE_CNT_ROCE_RNR_NAKS);
    qroce_env_recv(&e, &b, 0);
    qroce_env_send(&e, &a, 600);
    qroce_wait_cnt(e.t, QROCE_CNT_ROCE_RNR_NAKS, rnr + 1);
    g_assert_false(
        qroce_entry_ready(e.t, b.cq, sizeof(struct qroce_cqe), 6, 0));
    qtest_clock_step(e.t->qts, 1000 * 1000);         /* the RNR timer */
    qroce_env_cqe(&e, &a, QROCE_CQE_SEND, QROCE_WC_SUCCESS, NULL);
    qroce_env_cqe(&e, &b, QROCE_CQE_RECV, QROCE_WC_SUCCESS, NULL);
    g_assert_cmpuint(qroce_cnt(e.t, QROCE_CNT_ROCE_RNR_NAKS), ==,
                     rnr + 1);
    g_assert_cmpuint(injected(e.t), ==, 1);

    qroce_qom_set_int(e.t, "x-inject-access-nak", 1);
    qroce_env_recv(&e, &b, 1);
    qroce_env_send(&e, &a, 100);
    qroce_env_cqe(&e, &a, 0, QROCE_WC_REM_ACCESS_ERR, NULL);
    g_assert_cmpuint(qroce_qp_state(e.t, a.qpn), ==, QROCE_QPS_ERR);
    g_assert_cmpuint(qroce_qp_state(e.t, b.qpn), ==, QROCE_QPS_ERR);
    g_assert_cmpuint(injected(e.t), ==, 2);
    g_assert_cmpint(qroce_qom_get_int(e.t, "x-inject-access-nak"), ==, 0);
}

/* The next entry of EQ 0 (256 entries at @eq0, from *@idx). */
static void eq0_next(QRoce *t, uint64_t eq0, uint32_t *idx,
                     uint8_t type, uint32_t handle)
{
    struct qroce_eqe ev;

    qroce_wait_entry(t, eq0, sizeof(ev), 8, (*idx)++, &ev);
    g_assert_cmphex(ev.type, ==, type);
    g_assert_cmpuint(le32_to_cpu(ev.handle), ==, handle);
}

/* x-inject-event: each kind appears on EQ 0, with its effect. */
static void test_inject_events(QRoce *t)
{
    uint64_t eq0;
    uint32_t pdn, cqn, qpn, idx = 0;
    char *last, *got;

    qroce_enable(t);
    pdn = qroce_alloc_pd(t);
    eq0 = qroce_mk_eq(t, 0);
    qroce_mk_eq(t, 1);
    cqn = qroce_mk_cq(t, 1);
    g_assert_cmpuint(qroce_mk_qp(t, QROCE_QPT_RC, pdn, cqn, 0, &qpn), ==, 0);
    g_assert_cmpuint(qroce_modify(t, qpn, QROCE_RC_INIT, QROCE_QPS_INIT, NULL),
                     ==, 0);

    g_assert_true(qroce_qom_set_str(t, "x-inject-event", "port-down"));
    eq0_next(t, eq0, &idx, QROCE_EQE_PORT_DOWN, 1);
    g_assert_true(qroce_qom_set_str(t, "x-inject-event", "port-up"));
    eq0_next(t, eq0, &idx, QROCE_EQE_PORT_ACTIVE, 1);
    last = g_strdup_printf("qp-fatal:%u", qpn);
    g_assert_true(qroce_qom_set_str(t, "x-inject-event", last));
    eq0_next(t, eq0, &idx, QROCE_EQE_QP_FATAL, qpn);
    g_assert_cmpuint(qroce_qp_state(t, qpn), ==, QROCE_QPS_ERR);
    g_free(last);
    last = g_strdup_printf("cq-err:%u", cqn);
    g_assert_true(qroce_qom_set_str(t, "x-inject-event", last));
    eq0_next(t, eq0, &idx, QROCE_EQE_CQ_ERR, cqn);
    got = qroce_qom_get_str(t, "x-inject-event");
    g_assert_cmpstr(got, ==, last);
    g_free(got);
    g_free(last);
    /* refused: no such QP, no such event; nothing raised */
    g_assert_false(qroce_qom_set_str(t, "x-inject-event", "qp-fatal:999"));
    g_assert_false(qroce_qom_set_str(t, "x-inject-event", "cq-err"));
    g_assert_false(qroce_qom_set_str(t, "x-inject-event", "meteor"));
    g_assert_false(qroce_entry_ready(t, eq0, sizeof(struct qroce_eqe), 8, idx));
    g_assert_cmpuint(injected(t), ==, 4);

    g_assert_true(qroce_qom_set_str(t, "x-inject-event", "device-fatal"));
    g_assert_cmphex(qroce_rd(t, QROCE_REG_STATUS), ==, QROCE_STATUS_FATAL);
    g_assert_cmpuint(qroce_rd(t, QROCE_REG_FATAL_CODE), ==,
                     QROCE_FATAL_INJECTED);
    g_assert_true(qroce_msix_wait(t));
    g_assert_cmpuint(injected(t), ==, 5);
    /* a reset recovers */
    qroce_enable(t);
    g_assert_cmpuint(qroce_cmd_simple(t, QROCE_CMD_NOP, 0, NULL), ==,
                     QROCE_CMD_OK);
}

/* x-link-up: PORT_STATUS, PORT_DOWN / PORT_ACTIVE on EQ 0, ETH_IRQ.LINK. */
static void test_inject_link(QRoce *t)
{
    uint64_t eq0;
    uint32_t idx = 0;

    qroce_enable(t);
    eq0 = qroce_mk_eq(t, 0);
    g_assert_true(qroce_qom_get_bool(t, "x-link-up"));
    g_assert_cmphex(qroce_rd(t, QROCE_REG_PORT_STATUS) & QROCE_PORT_LINK_UP, ==,
                    QROCE_PORT_LINK_UP);
    qroce_wr(t, QROCE_REG_ETH_IRQ, 0xffffffff);
    qroce_qom_set_bool(t, "x-link-up", false);
    g_assert_cmphex(qroce_rd(t, QROCE_REG_PORT_STATUS) & QROCE_PORT_LINK_UP, ==,
                    0);
    eq0_next(t, eq0, &idx, QROCE_EQE_PORT_DOWN, 1);
    g_assert_cmphex(qroce_rd(t, QROCE_REG_ETH_IRQ) & QROCE_ETH_IRQ_LINK, ==,
                    QROCE_ETH_IRQ_LINK);
    g_assert_false(qroce_qom_get_bool(t, "x-link-up"));
    qroce_qom_set_bool(t, "x-link-up", true);
    g_assert_cmphex(qroce_rd(t, QROCE_REG_PORT_STATUS) & QROCE_PORT_LINK_UP, ==,
                    QROCE_PORT_LINK_UP);
    eq0_next(t, eq0, &idx, QROCE_EQE_PORT_ACTIVE, 1);
    g_assert_cmpuint(injected(t), ==, 2);
}

/* x-inject-stall-us: the QP sends nothing for the time, then resumes. */
static void test_inject_stall(QRoce *t)
{
    QRoceEnv e;
    QRoceQP a, b;
    uint32_t tx;

    qroce_env_setup(&e, t);
    qroce_env_pair(&e, &a, &b, 1);
    qroce_qom_set_int(e.t, "x-inject-stall-qpn", a.qpn);
    qroce_qom_set_int(e.t, "x-inject-stall-us", 1000);
    g_assert_cmpint(qroce_qom_get_int(e.t, "x-inject-stall-us"), ==, 1000);
    tx = qroce_cnt(e.t, QROCE_CNT_ROCE_TX_PKTS);
    qroce_env_recv(&e, &b, 0);
    qroce_env_send(&e, &a, 100);
    /*
     * The engine has run since the doorbell (a command completes only
     * after it: qroce_sync()) and held the QP; 900 us later it still does.
     */
    g_assert_cmpuint(qroce_cmd_simple(e.t, QROCE_CMD_NOP, 0, NULL), ==, 0);
    qtest_clock_step(e.t->qts, 900 * 1000);
    qroce_sync(e.t);
    g_assert_cmpuint(qroce_cnt(e.t, QROCE_CNT_ROCE_TX_PKTS), ==, tx);
    g_assert_false(
        qroce_entry_ready(e.t, a.cq, sizeof(struct qroce_cqe), 6, 0));
    qtest_clock_step(e.t->qts, 200 * 1000);          /* past the stall */
    qroce_env_cqe(&e, &a, QROCE_CQE_SEND, QROCE_WC_SUCCESS, NULL);
    qroce_env_cqe(&e, &b, QROCE_CQE_RECV, QROCE_WC_SUCCESS, NULL);
    g_assert_cmpuint(qroce_cnt(e.t, QROCE_CNT_ROCE_TX_PKTS), >, tx);
    g_assert_cmpuint(injected(e.t), ==, 1);
}

/* The entry of @list whose @key is @val (NULL if none). */
static QDict *json_find(QList *list, const char *key, int64_t val)
{
    const QListEntry *ent;

    QLIST_FOREACH_ENTRY(list, ent) {
        QDict *d = qobject_to(QDict, qlist_entry_obj(ent));

        if (d && qdict_get_int(d, key) == val) {
            return d;
        }
    }
    return NULL;
}

static QDict *objects(QRoce *t)
{
    char *js = qroce_qom_get_str(t, "x-objects");
    QDict *d = qobject_to(QDict, qobject_from_json(js, &error_abort));

    g_assert(d);
    g_free(js);
    return d;
}

/* "x-objects": a QP with its state and PSNs, a CQ with its indices, an MR. */
static void test_objects(QRoce *t)
{
    QRoceEnv e;
    QRoceQP a, b;
    QDict *o, *q, *cq;

    qroce_env_setup(&e, t);
    qroce_env_pair(&e, &a, &b, 1);
    o = objects(e.t);
    q = json_find(qdict_get_qlist(o, "qps"), "qpn", a.qpn);
    g_assert(q);
    g_assert_cmpstr(qdict_get_str(q, "type"), ==, "RC");
    g_assert_cmpstr(qdict_get_str(q, "state"), ==, "RTS");
    g_assert_cmpint(qdict_get_int(q, "sq_psn"), ==, 100);
    g_assert_cmpint(qdict_get_int(q, "rq_psn"), ==, 200);
    g_assert_cmpint(qdict_get_int(q, "npsn"), ==, 100);
    g_assert_cmpint(qdict_get_int(q, "dest_qpn"), ==, b.qpn);
    g_assert(json_find(qdict_get_qlist(o, "mrs"), "key", e.key));
    g_assert(json_find(qdict_get_qlist(o, "eqs"), "eqn", 0));
    cq = json_find(qdict_get_qlist(o, "cqs"), "cqn", a.cqn);
    g_assert(cq);
    g_assert_cmpint(qdict_get_int(cq, "log2"), ==, 6);
    g_assert_cmpint(qdict_get_int(cq, "pi"), ==, 0);
    qobject_unref(o);

    /* 600 bytes at MTU 256: three packets, one CQE on each side */
    qroce_env_recv(&e, &b, 0);
    qroce_env_send(&e, &a, 600);
    qroce_env_cqe(&e, &a, QROCE_CQE_SEND, QROCE_WC_SUCCESS, NULL);
    qroce_env_cqe(&e, &b, QROCE_CQE_RECV, QROCE_WC_SUCCESS, NULL);
    o = objects(e.t);
    q = json_find(qdict_get_qlist(o, "qps"), "qpn", a.qpn);
    g_assert_cmpint(qdict_get_int(q, "npsn"), ==, 103);
    g_assert_cmpint(qdict_get_int(q, "una_psn"), ==, 103);
    g_assert_cmpint(qdict_get_int(q, "outstanding"), ==, 0);
    g_assert_cmpint(qdict_get_int(qdict_get_qdict(q, "sq"), "ci"), ==, 1);
    q = json_find(qdict_get_qlist(o, "qps"), "qpn", b.qpn);
    g_assert_cmpint(qdict_get_int(q, "epsn"), ==, 103);
    g_assert_cmpint(qdict_get_int(qdict_get_qdict(q, "rq"), "ci"), ==, 1);
    cq = json_find(qdict_get_qlist(o, "cqs"), "cqn", a.cqn);
    g_assert_cmpint(qdict_get_int(cq, "pi"), ==, 1);
    g_assert_cmpint(qdict_get_int(qdict_get_qdict(o, "counters"), "cmds"),
                    ==, qroce_cnt(e.t, QROCE_CNT_CMDS));
    qobject_unref(o);
}

static const QRoceCase cases[] = {
    { "inject/tx-drop-knob-loses-frames-retry-delivers", test_fault_knobs,
      NULL, NULL },
    { "inject/cmd-fails-or-is-swallowed", test_inject_cmd,
      "-global qroce.x-inject-cmd-status=4", NULL },
    { "inject/wqe-ends-in-chosen-status", test_inject_wqe, NULL, NULL },
    { "inject/rnr-nak-retried-access-nak-fatal", test_inject_nak, NULL,
      NULL },
    { "inject/events-reach-eq0-with-their-effect", test_inject_events, NULL,
      NULL },
    { "inject/link-down-up-events-and-irq", test_inject_link,
      "-netdev hubport,id=n0,hubid=0 -global qroce.netdev=n0", NULL },
    { "inject/stall-holds-qp-until-its-time", test_inject_stall, NULL,
      NULL },
    { "inject/objects-show-qp-cq-mr-state", test_objects, NULL, NULL },
};

static void register_qroce_inject_tests(void)
{
    qroce_add_tests(cases, ARRAY_SIZE(cases));
}

libqos_init(register_qroce_inject_tests);
