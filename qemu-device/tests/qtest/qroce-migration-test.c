/*
 * qtests of qroce: migration.  A device with objects of every kind is
 * migrated through a file to a second QEMU: its objects introspection
 * dump is the same there, and RDMA WRITE and READ between its QPs work
 * on the destination with every byte compared.  A destination whose
 * object limits differ refuses the stream and keeps running.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "libqtest.h"
#include "qobject/qdict.h"
#include "qobject/qstring.h"
#include "libqos/qroce.h"

/* The status of the last migration of @qts, "completed" at the latest. */
static char *mig_wait(QTestState *qts)
{
    int64_t deadline = qroce_deadline();
    char *status = NULL;

    do {
        QDict *rsp = qtest_qmp(qts, "{'execute': 'query-migrate'}");
        QDict *ret = qdict_get_qdict(rsp, "return");

        g_free(status);
        status = g_strdup(ret && qdict_haskey(ret, "status") ?
                          qdict_get_str(ret, "status") : "none");
        qobject_unref(rsp);
        if (!strcmp(status, "completed") || !strcmp(status, "failed")) {
            return status;
        }
    } while (qroce_wait_more(deadline));
    return status;
}

static char *objects(QTestState *qts)
{
    QDict *rsp = qtest_qmp(qts, "{'execute': 'qom-get', 'arguments': {"
                           "'path': %s, 'property': 'x-objects'}}",
                           QROCE_PATH);
    char *s = g_strdup(qstring_get_str(qobject_to(QString,
                                                  qdict_get(rsp, "return"))));

    qobject_unref(rsp);
    return s;
}

/* Save the source to @file; a QEMU with @extra args loads it: its status. */
static char *migrate_via(QRoce *t, const char *file, const char *extra,
                         QTestState **dst)
{
    g_autofree char *uri = g_strdup_printf("file:%s", file);
    g_autofree char *st = NULL;

    qtest_qmp_assert_success(t->qts, "{'execute': 'migrate', 'arguments': {"
                             "'uri': %s}}", uri);
    st = mig_wait(t->qts);
    g_assert_cmpstr(st, ==, "completed");
    *dst = qtest_initf("%s %s -incoming defer", t->cmdline, extra);
    qtest_qmp_assert_success(*dst, "{'execute': 'migrate-incoming', "
                             "'arguments': {'uri': %s, "
                             "'exit-on-error': false}}", uri);
    return mig_wait(*dst);
}

/* The driver now talks to @qts: the same BARs, the same guest memory. */
static void rebind(QRoce *t, QTestState *qts)
{
    t->qts = qts;
    t->bus->qts = qts;
}

/* An SRQ of 16 32-byte WQEs on @pdn (it stays empty). */
static uint32_t mk_srq(QRoce *t, uint32_t pdn)
{
    struct qroce_cmd c = { .hdr.opcode = QROCE_CMD_CREATE_SRQ };
    uint32_t out[6];

    c.create_srq.pdn = cpu_to_le32(pdn);
    c.create_srq.log2_entries = 4;
    c.create_srq.wqe_shift = 5;
    c.create_srq.ring = qroce_bt(qroce_pages(t, 1), 1);
    g_assert_cmpuint(qroce_cmd(t, &c, out), ==, QROCE_CMD_OK);
    return out[0];
}

/* WRITE @len bytes of a pattern from A's buffer to B's, READ them back. */
static void write_read(QRoceEnv *e, QRoceQP *a, uint32_t len, uint8_t seed)
{
    g_autofree uint8_t *pat = g_malloc(len);
    g_autofree uint8_t *got = g_malloc(len);
    uint32_t i;

    for (i = 0; i < len; i++) {
        pat[i] = i * 7 + seed;
    }
    qtest_memwrite(e->t->qts, e->buf, pat, len);
    qtest_memset(e->t->qts, e->buf + 4096, 0, len);
    qtest_memset(e->t->qts, e->buf + 8192, 0, len);
    qroce_env_put_rdma(e, a, QROCE_WR_RDMA_WRITE, e->buf + 4096, e->key,
                       e->buf, len);
    qroce_env_ring(e, a);
    qroce_env_cqe(e, a, QROCE_CQE_RDMA_WRITE, QROCE_WC_SUCCESS, NULL);
    qtest_memread(e->t->qts, e->buf + 4096, got, len);
    g_assert_true(!memcmp(got, pat, len));
    qroce_env_put_rdma(e, a, QROCE_WR_RDMA_READ, e->buf + 4096, e->key,
                       e->buf + 8192, len);
    qroce_env_ring(e, a);
    qroce_env_cqe(e, a, QROCE_CQE_RDMA_READ, QROCE_WC_SUCCESS, NULL);
    qtest_memread(e->t->qts, e->buf + 8192, got, len);
    g_assert_true(!memcmp(got, pat, len));
}

/*
 * Objects of every kind (PD, EQs, CQs, RC QPs that moved data, a UD QP,
 * an SRQ with a QP on it, an MR, a fast-registration MR, an AH), then
 * the move: the same dump on the destination, and the QPs go on there.
 */
static void test_objects_move(QRoce *t)
{
    g_autofree char *file = g_strdup_printf("%s/qroce-mig-%d",
                                            g_get_tmp_dir(), getpid());
    g_autofree char *before = NULL, *after = NULL, *later = NULL;
    g_autofree char *st = NULL;
    QTestState *src = t->qts, *dst;
    QRoceEnv e;
    QRoceQP a, b, ud;
    uint32_t srqn;

    qroce_env_setup(&e, t);
    qroce_env_pair(&e, &a, &b, 1);
    qroce_env_qp(&e, QROCE_QPT_UD, e.pdn, &ud);
    qroce_ud_ready(t, ud.qpn, QROCE_QPT_UD, 0x1234);
    srqn = mk_srq(t, e.pdn);
    g_assert_cmpuint(srqn, >, 0);
    qroce_alloc_mr(t, e.pdn, 8, QROCE_CMD_OK);
    qroce_mk_self_ah(t, e.pdn);
    write_read(&e, &a, 3000, 1);

    before = objects(src);
    st = migrate_via(t, file, "", &dst);
    unlink(file);
    g_assert_cmpstr(st, ==, "completed");
    rebind(t, dst);
    after = objects(dst);
    g_assert_cmpstr(after, ==, before);
    /* the same QPs move data on the destination, PSNs carried on */
    write_read(&e, &a, 4096, 2);
    write_read(&e, &a, 100, 3);
    later = objects(dst);
    g_assert_cmpstr(later, !=, before);

    qtest_quit(dst);
    rebind(t, src);
}

/*
 * A destination started with other object limits refuses the stream by
 * name and keeps running; the source, stopped after the save, runs on.
 */
static void test_limits_differ(QRoce *t)
{
    g_autofree char *file = g_strdup_printf("%s/qroce-mig-%d",
                                            g_get_tmp_dir(), getpid());
    g_autofree char *st = NULL;
    QTestState *dst;
    QRoceEnv e;
    QRoceQP a, b;

    qroce_env_setup(&e, t);
    qroce_env_pair(&e, &a, &b, 1);
    st = migrate_via(t, file, "-global qroce.max-qp=4096", &dst);
    unlink(file);
    g_assert_cmpstr(st, ==, "failed");
    qtest_qmp_assert_success(dst, "{'execute': 'query-status'}");
    qtest_quit(dst);
    qtest_qmp_assert_success(t->qts, "{'execute': 'cont'}");
    write_read(&e, &a, 512, 4);
}

static const QRoceCase cases[] = {
    { "migration/objects-and-qps-move-to-a-new-qemu", test_objects_move },
    { "migration/other-object-limits-refuse-the-stream", test_limits_differ },
};

static void register_qroce_migration_tests(void)
{
    qroce_add_tests(cases, ARRAY_SIZE(cases));
}

libqos_init(register_qroce_migration_tests);
