/*
 * qtests of qroce: the register file, reset and enable, doorbells and
 * what the device does with bad ones, writes of garbage to every
 * register, doorbell and command, and the traces of a guest's mistakes.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "libqtest.h"
#include "libqos/qroce.h"

/* Identity and CAP registers; writes to read-only ones; the MTU's range. */
static void test_registers(QRoce *t)
{
    g_assert_cmphex(qroce_rd(t, QROCE_REG_MAGIC), ==, QROCE_MAGIC_VALUE);
    g_assert_cmpuint(qroce_rd(t, QROCE_REG_VERSION), ==, QROCE_SPEC_VERSION);
    g_assert_true(qroce_rd(t, QROCE_REG_FEATURES) & QROCE_FEAT_RC);
    g_assert_cmphex(qroce_rd(t, QROCE_REG_MAC_LO), ==, 0x12005452);
    g_assert_cmphex(qroce_rd(t, QROCE_REG_MAC_HI), ==, 0x5634);
    g_assert_cmpuint(qroce_rd(t, QROCE_REG_CAP_MAX_QP), ==, QROCE_DEF_MAX_QP);
    g_assert_cmpuint(qroce_rd(t, QROCE_REG_CAP_MAX_SGE), ==, QROCE_MAX_SGE);
    g_assert_cmphex(qroce_rd(t, QROCE_REG_CAP_PAGE_SIZES), ==, 0x3ff000);
    g_assert_cmpuint(qroce_rd(t, QROCE_REG_CAP_MAX_GID), ==,
                     QROCE_DEF_MAX_GID);
    g_assert_cmpuint(qroce_rd(t, QROCE_REG_CAP_LINK_MBPS), ==, 100000);
    /* no netdev: link down */
    g_assert_cmphex(qroce_rd(t, QROCE_REG_PORT_STATUS) & QROCE_PORT_LINK_UP,
                    ==, 0);
    /* read-only and unknown registers ignore writes */
    qroce_wr(t, QROCE_REG_MAGIC, 0xdeadbeef);
    g_assert_cmphex(qroce_rd(t, QROCE_REG_MAGIC), ==, QROCE_MAGIC_VALUE);
    qroce_wr(t, QROCE_REG_CAP_MAX_QP, 7);
    g_assert_cmpuint(qroce_rd(t, QROCE_REG_CAP_MAX_QP), ==, QROCE_DEF_MAX_QP);
    qroce_wr(t, 0x3ffc, 0x12345678);
    g_assert_cmphex(qroce_rd(t, 0x3ffc), ==, 0);
    /* MTU: in range accepted, out of range ignored */
    qroce_wr(t, QROCE_REG_ETH_MTU, 4200);
    g_assert_cmpuint(qroce_rd(t, QROCE_REG_ETH_MTU), ==, 4200);
    qroce_wr(t, QROCE_REG_ETH_MTU, 9001);
    g_assert_cmpuint(qroce_rd(t, QROCE_REG_ETH_MTU), ==, 4200);
}

/* ENABLE needs a command queue; RESET clears a FATAL and the queue. */
static void test_reset_enable(QRoce *t)
{
    /* ENABLE with no command queue configured: FATAL, code 2 */
    qroce_wr(t, QROCE_REG_CTRL, QROCE_CTRL_ENABLE);
    g_assert_cmphex(qroce_rd(t, QROCE_REG_STATUS), ==, QROCE_STATUS_FATAL);
    g_assert_cmpuint(qroce_rd(t, QROCE_REG_FATAL_CODE), ==,
                     QROCE_FATAL_CMDQ_CONFIG);
    /* RESET clears it; a proper configuration gets READY */
    qroce_enable(t);
    g_assert_cmpuint(qroce_cmd_simple(t, QROCE_CMD_NOP, 0, NULL), ==,
                     QROCE_CMD_OK);
    /* RESET again drops READY and the ring configuration */
    qroce_wr(t, QROCE_REG_CTRL, QROCE_CTRL_RESET);
    g_assert_cmphex(qroce_rd(t, QROCE_REG_STATUS), ==, 0);
    g_assert_cmphex(qroce_rd(t, QROCE_REG_CMDQ_BASE_LO), ==, 0);
    g_assert_cmpuint(qroce_rd(t, QROCE_REG_CMDQ_CI), ==, 0);
}

/*
 * Random values to every register, random doorbells, commands of random
 * bytes: the device keeps answering and serves a fresh queue.
 */
static void test_garbage(QRoce *t)
{
    GRand *r = g_rand_new_with_seed(0x51524f43);
    uint32_t off;
    int i;

    qroce_enable(t);
    /* every register offset, random values, twice over */
    for (i = 0; i < 2; i++) {
        for (off = 0; off < QROCE_REGS_SIZE; off += 4) {
            if (off == QROCE_REG_CTRL && i == 1) {
                continue;
            }
            qroce_wr(t, off, g_rand_int(r));
        }
    }
    /* random 64-bit doorbells across the doorbell BAR */
    for (i = 0; i < 4096; i++) {
        uint64_t o = (g_rand_int(r) % QROCE_DB_BAR_SIZE) & ~7ull;

        qpci_io_writeq(t->dev, t->db, o, ((uint64_t)g_rand_int(r) << 32) |
                       g_rand_int_range(r, 0, 2048));
    }
    /* commands of random bytes */
    qroce_enable(t);
    for (i = 0; i < 200; i++) {
        struct qroce_cmd c;
        int j;

        for (j = 0; j < sizeof(c); j++) {
            ((uint8_t *)&c)[j] = g_rand_int(r);
        }
        c.hdr.opcode %= QROCE_CMD_MAX + 2;
        qroce_cmd(t, &c, NULL);
    }
    /* still alive: registers answer, a fresh queue serves a NOP */
    g_assert_cmphex(qroce_rd(t, QROCE_REG_MAGIC), ==, QROCE_MAGIC_VALUE);
    qroce_enable(t);
    g_assert_cmpuint(qroce_cmd_simple(t, QROCE_CMD_NOP, 0, NULL), ==,
                     QROCE_CMD_OK);
    g_rand_free(r);
}

/*
 * An enabled device with a PD, EQs 0 and 1, a CQ, and an RC QP in INIT
 * whose doorbells are on page 5: its number; EQ 0's ring in *@eq0.
 */
static uint32_t qp_on_page5(QRoce *t, uint64_t *eq0, uint32_t *cqn)
{
    uint32_t pdn, qpn;

    qroce_enable(t);
    pdn = qroce_alloc_pd(t);
    *eq0 = qroce_mk_eq(t, 0);
    qroce_mk_eq(t, 1);
    *cqn = qroce_mk_cq(t, 1);
    g_assert_cmpuint(qroce_mk_qp(t, QROCE_QPT_RC, pdn, *cqn, 5, &qpn), ==, 0);
    g_assert_cmpuint(qroce_modify(t, qpn, QROCE_RC_INIT, QROCE_QPS_INIT,
                                  NULL), ==, 0);
    return qpn;
}

/* Doorbells: only on the QP's page, never beyond the ring. */
static void test_doorbells(QRoce *t)
{
    struct qroce_eqe e;
    uint64_t eq0, page5 = 5 * QROCE_DB_PAGE_SIZE;
    uint32_t cqn, qpn, bad;

    qpn = qp_on_page5(t, &eq0, &cqn);
    bad = qroce_cnt(t, QROCE_CNT_BAD_DOORBELLS);
    /* the wrong page, a 32-bit write, an unknown offset, a missing QP */
    qroce_db(t, 4 * QROCE_DB_PAGE_SIZE + QROCE_DB_RQ, qpn, 1);
    qpci_io_writel(t->dev, t->db, page5 + QROCE_DB_RQ, qpn);
    qroce_db(t, page5 + 0x800, qpn, 1);
    qroce_db(t, page5 + QROCE_DB_RQ, qpn + 1, 1);
    qroce_db(t, page5 + QROCE_DB_CQ_ARM, cqn, 1);   /* the CQ is on page 0 */
    g_assert_cmpuint(qroce_wait_cnt_stable(t, QROCE_CNT_BAD_DOORBELLS), ==,
                     bad + 5);
    g_assert_cmpuint(qroce_qp_state(t, qpn), ==, QROCE_QPS_INIT);
    /* a consumer index the CQ never produced */
    qroce_db(t, QROCE_DB_CQ_CI, cqn, 1000);
    g_assert_cmpuint(qroce_wait_cnt_stable(t, QROCE_CNT_BAD_DOORBELLS), ==,
                     bad + 6);
    /* 17 receive WQEs in a ring of 16: the QP goes to ERR, QP_FATAL */
    qroce_db(t, page5 + QROCE_DB_RQ, qpn, 17);
    g_assert_cmpuint(qroce_wait_qp_state(t, qpn, QROCE_QPS_ERR), ==,
                     QROCE_QPS_ERR);
    qtest_memread(t->qts, eq0, &e, sizeof(e));
    g_assert_cmpuint(e.owner & QROCE_OWNER_BIT, ==, qroce_owner_for(0, 8));
    g_assert_cmpuint(e.type, ==, QROCE_EQE_QP_FATAL);
    g_assert_cmpuint(le32_to_cpu(e.handle), ==, qpn);
}

/*
 * A bad doorbell is only recorded by the MMIO handler.  With the engine
 * stalled (x-inject-stall-us; the virtual clock stands still) the QP keeps
 * its state, no event is written and its doorbells are ignored; when the
 * engine runs, the QP goes to ERR with one QP_FATAL event.
 */
static void test_bad_doorbell_deferred(QRoce *t)
{
    struct qroce_eqe e;
    uint64_t eq0, page5 = 5 * QROCE_DB_PAGE_SIZE;
    uint32_t cqn, qpn, bad;

    qpn = qp_on_page5(t, &eq0, &cqn);
    qroce_qom_set_int(t, "x-inject-stall-us", 1000 * 1000);
    bad = qroce_cnt(t, QROCE_CNT_BAD_DOORBELLS);
    qroce_db(t, page5 + QROCE_DB_RQ, qpn, 17);
    g_assert_cmpuint(qroce_wait_cnt_stable(t, QROCE_CNT_BAD_DOORBELLS), ==,
                     bad + 1);
    g_assert_cmpuint(qroce_qp_state(t, qpn), ==, QROCE_QPS_INIT);
    qtest_memread(t->qts, eq0, &e, sizeof(e));
    g_assert_cmpuint(e.owner & QROCE_OWNER_BIT, !=, qroce_owner_for(0, 8));
    qroce_db(t, page5 + QROCE_DB_RQ, qpn, 40);
    g_assert_cmpuint(qroce_wait_cnt_stable(t, QROCE_CNT_BAD_DOORBELLS), ==,
                     bad + 1);

    qtest_clock_step(t->qts, 1000 * 1000 * 1000LL);
    g_assert_cmpuint(qroce_wait_qp_state(t, qpn, QROCE_QPS_ERR), ==,
                     QROCE_QPS_ERR);
    qtest_memread(t->qts, eq0, &e, sizeof(e));
    g_assert_cmpuint(e.owner & QROCE_OWNER_BIT, ==, qroce_owner_for(0, 8));
    g_assert_cmpuint(e.type, ==, QROCE_EQE_QP_FATAL);
    g_assert_cmpuint(le32_to_cpu(e.handle), ==, qpn);
    qtest_memread(t->qts, eq0 + sizeof(e), &e, sizeof(e));
    g_assert_cmpuint(e.owner & QROCE_OWNER_BIT, !=, qroce_owner_for(1, 8));
}

/* test_ub_traces' trace log (in t->data), made before its QEMU starts. */
static char *ub_prepare(QRoce *t)
{
    char *log;
    int fd = g_file_open_tmp("qroce-ub-XXXXXX", &log, NULL);

    g_assert(fd >= 0);
    close(fd);
    t->data = log;
    return g_strdup_printf("-D %s -trace enable=qroce_ub_*", log);
}

/*
 * The driver's mistakes are traced by name: bad command fields, a
 * doorbell to a missing object, a misaligned ring, a write to a
 * read-only register (qroce_ub_*, through the log trace backend).
 */
static void test_ub_traces(QRoce *t)
{
    struct qroce_cmd c = { .hdr.opcode = QROCE_CMD_CREATE_EQ };
    const char *log = t->data;
    gchar *text = NULL;
    uint64_t ring;

    qroce_enable(t);
    g_assert_cmpuint(qroce_cmd_simple(t, QROCE_CMD_DESTROY_QP, 77, NULL), ==,
                     QROCE_CMD_ERR_HANDLE);
    ring = qroce_pages(t, 2) + 8;
    c.create_eq.eqn = cpu_to_le32(0);
    c.create_eq.log2_entries = 8;
    c.create_eq.ring = qroce_bt(ring, 1);
    g_assert_cmpuint(qroce_cmd(t, &c, NULL), ==, QROCE_CMD_ERR_PARAM);
    c.create_eq.log2_entries = 30;
    g_assert_cmpuint(qroce_cmd(t, &c, NULL), ==, QROCE_CMD_ERR_PARAM);
    memset(&c, 0, sizeof(c));
    c.hdr.opcode = QROCE_CMD_CREATE_CQ;
    g_assert_cmpuint(qroce_cmd(t, &c, NULL), ==, QROCE_CMD_ERR_PARAM);
    qroce_wr(t, QROCE_REG_MAGIC, 1);
    qroce_db(t, QROCE_DB_SQ, 99, 1);
    qroce_stop(t);

    g_assert_true(g_file_get_contents(log, &text, NULL, NULL));
    g_assert_nonnull(strstr(text, "DESTROY_QP: bad qpn 0x4d: names no "
                            "object"));
    g_assert_nonnull(strstr(text, "buffer table: bad CONTIG addr"));
    g_assert_nonnull(strstr(text, "CREATE_EQ: bad log2_entries 0x1e"));
    g_assert_nonnull(strstr(text, "CREATE_CQ: bad eqn 0x0"));
    g_assert_nonnull(strstr(text, "register 0x0 <- 0x1: read-only"));
    g_assert_nonnull(strstr(text, "page 0 SQ of QP 99 value 1: no such QP"));
    g_free(text);
    unlink(log);
}

static const QRoceCase cases[] = {
    { "regs/ids-caps-read-only-and-mtu-range", test_registers, NULL, NULL },
    { "regs/enable-without-cmdq-is-fatal-reset-clears", test_reset_enable,
      NULL, NULL },
    { "regs/random-writes-leave-device-working", test_garbage, NULL, NULL },
    { "regs/doorbell-wrong-page-or-past-ring-refused", test_doorbells, NULL,
      NULL },
    { "regs/bad-doorbell-acted-on-by-engine-not-mmio",
      test_bad_doorbell_deferred, NULL, NULL },
    { "regs/guest-errors-traced-by-name", test_ub_traces, NULL, ub_prepare },
};

static void register_qroce_regs_tests(void)
{
    qroce_add_tests(cases, ARRAY_SIZE(cases));
}

libqos_init(register_qroce_regs_tests);
