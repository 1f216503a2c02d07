/*
 * qtests of qroce: migration.  A device with objects of every kind is
 * migrated through a file to a second QEMU: its objects introspection
 * dump is the same there, and RDMA WRITE and READ between its QPs work
 * on the destination with every byte compared.  After a move the device
 * announces its GIDs on the wire, and a QP connected to a peer goes on
 * with its PSNs.  A destination whose object limits differ refuses the
 * stream and keeps running.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include <sys/un.h>
#include "qemu/bswap.h"
#include "libqtest.h"
#include "qobject/qdict.h"
#include "qobject/qstring.h"
#include "qobject/qlist.h"
#include "qobject/qjson.h"
#include "qapi/error.h"
#include "libqos/qroce.h"

/*
 * The status of the last migration of @qts once it has ended: completed,
 * failed or cancelled.
 */
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
        if (!strcmp(status, "completed") || !strcmp(status, "failed") ||
            !strcmp(status, "cancelled")) {
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

/* Migrate to a new QEMU, which the driver then talks to: that QEMU. */
static QTestState *move_to_new(QRoce *t)
{
    g_autofree char *file = g_strdup_printf("%s/qroce-mig-%d",
                                            g_get_tmp_dir(), getpid());
    g_autofree char *st = NULL;
    QTestState *dst;

    st = migrate_via(t, file, "", &dst);
    unlink(file);
    g_assert_cmpstr(st, ==, "completed");
    rebind(t, dst);
    return dst;
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

/* Objects for a test: a connected RC pair that has moved @len bytes. */
static void busy_pair(QRoce *t, QRoceEnv *e, QRoceQP *a, QRoceQP *b,
                      uint32_t len, uint8_t seed)
{
    qroce_env_setup(e, t);
    qroce_env_pair(e, a, b, 1);
    write_read(e, a, len, seed);
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

/*
 * Device memory moves: bytes the guest wrote through BAR5 and bytes an
 * RDMA WRITE put there are on the destination, and the MR on it goes on
 * serving READs there; a destination with another dm-size refuses the
 * stream and the source runs on.
 */
static void test_dm_moves(QRoce *t)
{
    g_autofree char *file = g_strdup_printf("%s/qroce-mig-%d",
                                            g_get_tmp_dir(), getpid());
    g_autofree char *st = NULL;
    QTestState *src = t->qts, *dst;
    uint8_t pat[512], pat2[512], got[512];
    struct qroce_cmd c = { .hdr.opcode = QROCE_CMD_REG_MR };
    uint32_t out[6], key, i;
    QRoceEnv e;
    QRoceQP a, b;
    QPCIBar dm;

    qroce_env_setup(&e, t);
    qroce_env_pair(&e, &a, &b, 1);
    dm = qpci_iomap(t->dev, QROCE_BAR_DM, NULL);
    for (i = 0; i < sizeof(pat); i++) {
        pat[i] = i * 5 + 1;
        pat2[i] = i * 3 + 2;
    }
    qpci_memwrite(t->dev, dm, 0, pat, sizeof(pat));
    c.reg_mr.pdn = cpu_to_le32(e.pdn);
    c.reg_mr.access = cpu_to_le32(QROCE_ACCESS_LOCAL_WRITE |
                                  QROCE_ACCESS_REMOTE_WRITE |
                                  QROCE_ACCESS_REMOTE_READ);
    c.reg_mr.length = cpu_to_le64(8192);
    c.reg_mr.pages.level = QROCE_BT_DM;
    g_assert_cmpuint(qroce_cmd(t, &c, out), ==, QROCE_CMD_OK);
    key = out[0];
    qtest_memwrite(t->qts, e.buf, pat2, sizeof(pat2));
    qroce_env_put_rdma(&e, &a, QROCE_WR_RDMA_WRITE, 4096, key, e.buf,
                       sizeof(pat2));
    qroce_env_ring(&e, &a);
    qroce_env_cqe(&e, &a, QROCE_CQE_RDMA_WRITE, QROCE_WC_SUCCESS, NULL);

    /* another dm-size: refused, the source goes on */
    st = migrate_via(t, file, "-global qroce.dm-size=131072", &dst);
    unlink(file);
    g_assert_cmpstr(st, ==, "failed");
    qtest_quit(dst);
    qtest_qmp_assert_success(t->qts, "{'execute': 'cont'}");
    g_free(st);

    st = migrate_via(t, file, "", &dst);
    unlink(file);
    g_assert_cmpstr(st, ==, "completed");
    rebind(t, dst);
    qpci_memread(t->dev, dm, 0, got, sizeof(got));
    g_assert_true(!memcmp(got, pat, sizeof(got)));
    qpci_memread(t->dev, dm, 4096, got, sizeof(got));
    g_assert_true(!memcmp(got, pat2, sizeof(got)));
    qroce_env_put_rdma(&e, &a, QROCE_WR_RDMA_READ, 0, key, e.buf + 8192,
                       sizeof(pat));
    qroce_env_ring(&e, &a);
    qroce_env_cqe(&e, &a, QROCE_CQE_RDMA_READ, QROCE_WC_SUCCESS, NULL);
    qtest_memread(t->qts, e.buf + 8192, got, sizeof(got));
    g_assert_true(!memcmp(got, pat, sizeof(got)));
    qtest_quit(dst);
    rebind(t, src);
}

/*
 * An ODP MR of 0 bytes (no pages) that REG_MR accepted moves with the
 * rest: the destination takes the stream, and the MR's key is still
 * valid there (DEREG_MR succeeds once).
 */
static void test_odp_empty_moves(QRoce *t)
{
    struct qroce_cmd c = { .hdr.opcode = QROCE_CMD_REG_MR };
    QTestState *src = t->qts, *dst;
    uint32_t out[6];
    QRoceEnv e;

    qroce_env_setup(&e, t);
    c.reg_mr.pdn = cpu_to_le32(e.pdn);
    c.reg_mr.access = cpu_to_le32(QROCE_ACCESS_LOCAL_WRITE);
    c.reg_mr.iova = cpu_to_le64(0x10000);
    c.reg_mr.pages.level = QROCE_BT_ODP;
    c.reg_mr.pages.page_shift = QROCE_ODP_PAGE_SHIFT;
    g_assert_cmpuint(qroce_cmd(t, &c, out), ==, QROCE_CMD_OK);
    dst = move_to_new(t);
    g_assert_cmpuint(qroce_cmd_simple(t, QROCE_CMD_DEREG_MR, out[0], NULL), ==,
                     QROCE_CMD_OK);
    g_assert_cmpuint(qroce_cmd_simple(t, QROCE_CMD_DEREG_MR, out[0], NULL), ==,
                     QROCE_CMD_ERR_HANDLE);
    qtest_quit(dst);
    rebind(t, src);
}

/* GID 1: 2001:db8::1, RoCE v2, an IPv6 one. */
static void set_gid1_v6(QRoce *t)
{
    struct qroce_cmd c = { .hdr.opcode = QROCE_CMD_SET_GID };

    c.set_gid.type = QROCE_GID_ROCE_V2;
    c.set_gid.index = cpu_to_le32(1);
    c.set_gid.gid[0] = 0x20;
    c.set_gid.gid[1] = 0x01;
    c.set_gid.gid[2] = 0x0d;
    c.set_gid.gid[3] = 0xb8;
    c.set_gid.gid[15] = 1;
    g_assert_cmpuint(qroce_cmd(t, &c, NULL), ==, QROCE_CMD_OK);
}

/* The ones' complement sum of @n bytes, as the Internet checksum adds. */
static uint32_t csum_add(uint32_t sum, const uint8_t *p, size_t n)
{
    size_t i;

    for (i = 0; i < n; i += 2) {
        sum += (p[i] << 8) | (i + 1 < n ? p[i + 1] : 0);
    }
    return sum;
}

/*
 * Is @f a gratuitous ARP from the device for 10.0.0.1: a broadcast ARP
 * request whose sender is the device's MAC and address, and whose target
 * is that same address?
 */
static bool is_garp(const uint8_t *f, ssize_t n, const uint8_t *v4)
{
    static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

    return n >= 42 && !memcmp(f, bcast, 6) &&
           !memcmp(f + 6, qroce_dev_mac, 6) && f[12] == 0x08 &&
           f[13] == 0x06 && f[20] == 0 && f[21] == 1 &&
           !memcmp(f + 22, qroce_dev_mac, 6) && !memcmp(f + 28, v4, 4) &&
           !memcmp(f + 38, v4, 4);
}

/*
 * Is @f an unsolicited neighbour advertisement of @gid: to all nodes,
 * hop limit 255, ICMPv6 type 136 with Override and not Solicited, target
 * @gid, the device's MAC as target link-layer address, checksum right?
 */
static bool is_unsolicited_na(const uint8_t *f, ssize_t n, const uint8_t *gid)
{
    static const uint8_t all_nodes[16] = { 0xff, 0x02, [15] = 1 };
    const uint8_t *ip6 = f + 14, *na = ip6 + 40;
    uint32_t sum;

    if (n < 14 + 40 + 32 || f[12] != 0x86 || f[13] != 0xdd ||
        ip6[6] != 58 || ip6[7] != 255 || na[0] != 136) {
        return false;
    }
    sum = csum_add(csum_add(0, ip6 + 8, 32), na, 32) + 32 + 58;
    while (sum >> 16) {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    return sum == 0xffff && !memcmp(ip6 + 8, gid, 16) &&
           !memcmp(ip6 + 24, all_nodes, 16) && (na[4] & 0xe0) == 0x20 &&
           !memcmp(na + 8, gid, 16) && na[24] == 2 && na[25] == 1 &&
           !memcmp(na + 26, qroce_dev_mac, 6) &&
           f[0] == 0x33 && f[1] == 0x33 && f[5] == 1;
}

/* A SEND of 64 bytes from QP @qpn to the peer: its PSN there, then ACKed. */
static uint32_t send_to_peer(QRoce *t, uint64_t sq, uint32_t idx,
                             uint32_t qpn, uint64_t buf, uint32_t key,
                             uint64_t cq, uint32_t *ci)
{
    QRocePeer *pr = &t->peer;
    struct qroce_cqe cqe;
    uint8_t f[2048];
    RocePktIn p;
    RocePktOut o;

    qroce_post_send(t, sq, idx, buf, 64, key, QROCE_WQE_SIGNALED);
    qroce_db(t, QROCE_DB_SQ, qpn, idx + 1);
    qroce_peer_recv(pr, f, &p);
    g_assert_cmpuint(p.opcode, ==, ROCE_SEND_ONLY);
    g_assert_cmpuint(p.dqpn, ==, 0x77);
    qroce_peer_out(pr, &o, qpn, p.psn, ROCE_ACK);
    o.aeth_syndrome = ROCE_AETH_ACK_NO_CREDIT;
    qroce_peer_send(pr, &o, 0, false);
    qroce_next_send_cqe(t, cq, ci, qpn, &cqe);
    g_assert_cmpuint(cqe.status, ==, QROCE_WC_SUCCESS);
    return p.psn;
}

/*
 * The move as a snapshot: saved to a file, the source lets go of its
 * netdev, a new QEMU with the same -netdev (the same UDP port) loads it.
 * In QEMU's announce rounds after the load, the device sends a gratuitous
 * ARP for its IPv4 GID and an unsolicited neighbour advertisement for its
 * IPv6 GID (besides QEMU's RARP), and its QP to the peer goes on: the
 * next SEND carries the next PSN.
 */
static void test_announce(QRoce *t)
{
    g_autofree char *file = g_strdup_printf("%s/qroce-mig-%d",
                                            g_get_tmp_dir(), getpid());
    g_autofree char *uri = g_strdup_printf("file:%s", file);
    g_autofree char *st = NULL;
    static const uint8_t v4[4] = { 10, 0, 0, 1 };
    static const uint8_t v6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };
    QRocePeer *pr = &t->peer;
    QTestState *src = t->qts;
    uint64_t cq, buf, sq, rq;
    uint32_t pdn, cqn, key, qpn, psn, ci = 0;
    int64_t deadline;
    bool garp = false, na = false;
    uint8_t f[2048];

    qroce_objs_setup(t, QROCE_ACCESS_LOCAL_WRITE, &pdn, &cqn, &cq, &buf, &key);
    set_gid1_v6(t);
    qpn = qroce_peer_qp(t, pr, pdn, cqn, 0x77, &sq, &rq);
    psn = send_to_peer(t, sq, 0, qpn, buf, key, cq, &ci);

    qtest_qmp_assert_success(src, "{'execute': 'migrate', 'arguments': {"
                             "'uri': %s}}", uri);
    st = mig_wait(src);
    g_assert_cmpstr(st, ==, "completed");
    g_free(st);
    /* the stopped source lets go of its end of the wire (its UDP port) */
    qtest_qmp_assert_success(src, "{'execute': 'netdev_del', "
                             "'arguments': {'id': 'n0'}}");
    /* what the source sent before it stopped is not an announcement */
    while (recv(pr->fd, f, sizeof(f), MSG_DONTWAIT) > 0) {
        /* drain */
    }
    rebind(t, qtest_initf("%s -incoming defer", t->cmdline));
    qtest_qmp_assert_success(t->qts, "{'execute': 'migrate-incoming', "
                             "'arguments': {'uri': %s, "
                             "'exit-on-error': false}}", uri);
    st = mig_wait(t->qts);
    unlink(file);
    g_assert_cmpstr(st, ==, "completed");

    deadline = qroce_deadline();
    while (!(garp && na)) {
        ssize_t n = recv(pr->fd, f, sizeof(f), MSG_DONTWAIT);

        if (n <= 0) {
            g_assert_true(qroce_wait_more(deadline));
            continue;
        }
        garp |= is_garp(f, n, v4);
        na |= is_unsolicited_na(f, n, v6);
    }
    /* the QP goes on: the peer skips frames that are not RoCE */
    g_assert_cmpuint(send_to_peer(t, sq, 1, qpn, buf + 64, key, cq, &ci), ==,
                     (psn + 1) & 0xffffff);

    qtest_quit(t->qts);
    rebind(t, src);
}

/*
 * A command posted while the VM is stopped waits (the device does no work
 * then), goes with the VM to the destination and completes there once,
 * when the guest runs again: one completion, one PD more.
 */
static void test_cmd_outstanding(QRoce *t)
{
    g_autofree char *file = g_strdup_printf("%s/qroce-mig-%d",
                                            g_get_tmp_dir(), getpid());
    g_autofree char *st = NULL;
    struct qroce_cmd c = { .hdr.opcode = QROCE_CMD_ALLOC_PD };
    uint32_t mask = (1u << QROCE_CMDQ_LOG2) - 1, idx, pdn, cmds;
    struct qroce_cmd_comp comp;
    QTestState *src = t->qts, *dst;
    uint64_t caddr;
    int64_t end;

    pdn = qroce_base_setup(t);
    idx = t->pi;
    caddr = t->comp + (idx & mask) * QROCE_CMD_COMP_SIZE;
    cmds = qroce_cnt(t, QROCE_CNT_CMDS);
    qtest_qmp_assert_success(src, "{'execute': 'stop'}");
    c.hdr.cookie = cpu_to_le32(0x1000 + idx);
    qroce_cmd_post(t, &c);
    /* two monitor round trips: a bottom half scheduled before has run */
    qtest_qmp_assert_success(src, "{'execute': 'query-status'}");
    qtest_qmp_assert_success(src, "{'execute': 'query-status'}");
    g_assert_cmpuint(qroce_rd(t, QROCE_REG_CMDQ_CI), ==, idx);
    g_assert_cmpuint(qroce_cnt(t, QROCE_CNT_CMDS), ==, cmds);

    st = migrate_via(t, file, "", &dst);
    unlink(file);
    g_assert_cmpstr(st, ==, "completed");
    rebind(t, dst);
    /* the source was stopped: so is the destination, and the command waits */
    qtest_qmp_assert_success(dst, "{'execute': 'query-status'}");
    g_assert_cmpuint(qroce_rd(t, QROCE_REG_CMDQ_CI), ==, idx);
    qtest_qmp_assert_success(dst, "{'execute': 'cont'}");
    end = qroce_deadline();
    for (;;) {
        qtest_memread(dst, caddr, &comp, sizeof(comp));
        if ((comp.owner & QROCE_OWNER_BIT) ==
            qroce_owner_for(idx, QROCE_CMDQ_LOG2)) {
            break;
        }
        g_assert_true(qroce_wait_more(end));
    }
    g_assert_cmphex(le32_to_cpu(comp.cookie), ==, 0x1000 + idx);
    g_assert_cmpuint(comp.status, ==, QROCE_CMD_OK);
    g_assert_true(qroce_msix_wait(t));  /* and its interrupt */
    /* once: one command counted, the next PD number, then the next */
    g_assert_cmpuint(qroce_rd(t, QROCE_REG_CMDQ_CI), ==, t->pi);
    g_assert_cmpuint(qroce_cnt(t, QROCE_CNT_CMDS), ==, cmds + 1);
    g_assert_cmpuint(le32_to_cpu(comp.out[0]), ==, pdn + 1);
    g_assert_cmpuint(qroce_alloc_pd(t), ==, pdn + 2);

    qtest_quit(dst);
    rebind(t, src);
}

/*
 * A doorbell rung for a WRITE just after the stop is not acted on while
 * the VM is stopped; it goes with the VM and the WRITE is done on the
 * destination once: the bytes land, one CQE, no second.
 */
static void test_doorbell_at_stop(QRoce *t)
{
    g_autofree char *file = g_strdup_printf("%s/qroce-mig-%d",
                                            g_get_tmp_dir(), getpid());
    g_autofree char *st = NULL;
    uint8_t pat[1500], got[1500];
    QTestState *src = t->qts, *dst;
    QRoceEnv e;
    QRoceQP a, b;
    unsigned i;

    qroce_env_setup(&e, t);
    qroce_env_pair(&e, &a, &b, 1);
    for (i = 0; i < sizeof(pat); i++) {
        pat[i] = i * 11 + 3;
    }
    qtest_memwrite(src, e.buf, pat, sizeof(pat));
    qtest_memset(src, e.buf + 4096, 0, sizeof(pat));
    qtest_qmp_assert_success(src, "{'execute': 'stop'}");
    qroce_env_put_rdma(&e, &a, QROCE_WR_RDMA_WRITE, e.buf + 4096, e.key,
                       e.buf, sizeof(pat));
    qroce_env_ring(&e, &a);
    qtest_qmp_assert_success(src, "{'execute': 'query-status'}");
    qtest_qmp_assert_success(src, "{'execute': 'query-status'}");
    g_assert_false(qroce_entry_ready(t, a.cq, sizeof(struct qroce_cqe), 6,
                                     a.ci));
    qtest_memread(src, e.buf + 4096, got, sizeof(got));
    g_assert_cmpuint(got[0], ==, 0);

    st = migrate_via(t, file, "", &dst);
    unlink(file);
    g_assert_cmpstr(st, ==, "completed");
    rebind(t, dst);
    qtest_qmp_assert_success(dst, "{'execute': 'cont'}");
    qroce_env_cqe(&e, &a, QROCE_CQE_RDMA_WRITE, QROCE_WC_SUCCESS, NULL);
    qtest_memread(dst, e.buf + 4096, got, sizeof(got));
    g_assert_true(!memcmp(got, pat, sizeof(pat)));
    qroce_sync(t);
    g_assert_false(qroce_entry_ready(t, a.cq, sizeof(struct qroce_cqe), 6,
                                     a.ci));
    write_read(&e, &a, 600, 7);

    qtest_quit(dst);
    rebind(t, src);
}

/*
 * A live migration cancelled half way leaves the source running with its
 * QPs: the stream goes to a socket nobody reads, so the move stays
 * active until migrate_cancel; then the status is cancelled, the VM runs
 * and a WRITE and a READ work right afterwards.
 */
static void test_cancelled(QRoce *t)
{
    g_autofree char *path = g_strdup_printf("%s/qroce-mig-%d.sock",
                                            g_get_tmp_dir(), getpid());
    g_autofree char *uri = g_strdup_printf("unix:%s", path);
    g_autofree char *st = NULL;
    struct sockaddr_un sun = { .sun_family = AF_UNIX };
    QTestState *src = t->qts;
    int64_t end;
    QRoceEnv e;
    QRoceQP a, b;
    int lfd;

    busy_pair(t, &e, &a, &b, 1000, 8);
    g_assert_cmpuint(strlen(path), <, sizeof(sun.sun_path));
    strcpy(sun.sun_path, path);
    unlink(path);
    lfd = socket(AF_UNIX, SOCK_STREAM, 0);
    g_assert_cmpint(lfd, >=, 0);
    g_assert_cmpint(bind(lfd, (struct sockaddr *)&sun, sizeof(sun)), ==, 0);
    g_assert_cmpint(listen(lfd, 1), ==, 0);
    qtest_qmp_assert_success(src, "{'execute': 'migrate', "
                             "'arguments': {'uri': %s}}", uri);
    end = qroce_deadline();
    for (;;) {
        QDict *rsp = qtest_qmp(src, "{'execute': 'query-migrate'}");
        QDict *ret = qdict_get_qdict(rsp, "return");
        bool active = ret && qdict_haskey(ret, "status") &&
                      !strcmp(qdict_get_str(ret, "status"), "active");

        qobject_unref(rsp);
        if (active) {
            break;
        }
        g_assert_true(qroce_wait_more(end));
    }
    qtest_qmp_assert_success(src, "{'execute': 'migrate_cancel'}");
    st = mig_wait(src);
    g_assert_cmpstr(st, ==, "cancelled");
    close(lfd);
    unlink(path);
    qtest_qmp_assert_success(src, "{'execute': 'query-status'}");
    write_read(&e, &a, 3000, 9);
    write_read(&e, &b, 200, 10);
}

/*
 * Where the device's section starts in a saved stream: the offset of its
 * version, after QEMU's section header (type, section id, the id string
 * "PATH/qroce" with its length, instance id).
 */
static size_t qroce_section(const uint8_t *b, size_t n)
{
    size_t i;

    for (i = 1; i + 6 + 8 <= n; i++) {
        if (!memcmp(b + i, "/qroce", 6) && i >= 1) {
            size_t start = i, len;

            while (start > 0 && b[start - 1] >= 0x20 && b[start - 1] < 0x7f) {
                start--;
            }
            len = i + 6 - start;
            if (start >= 1 && b[start - 1] == len) {
                return i + 6 + 4;
            }
        }
    }
    return 0;
}

/* Load @buf (@n bytes) in a new QEMU: the status of the incoming side. */
static char *load_bytes(QRoce *t, const char *file, const uint8_t *buf,
                        size_t n, QTestState **dst)
{
    g_autofree char *uri = g_strdup_printf("file:%s", file);

    g_assert_true(g_file_set_contents(file, (const char *)buf, n, NULL));
    *dst = qtest_initf("%s -incoming defer", t->cmdline);
    qtest_qmp_assert_success(*dst, "{'execute': 'migrate-incoming', "
                             "'arguments': {'uri': %s, "
                             "'exit-on-error': false}}", uri);
    return mig_wait(*dst);
}

/*
 * The saved stream of @t's device (in *@n bytes): the offset of the
 * device's section in it.
 */
static size_t saved_stream(QRoce *t, const char *file, uint8_t **b, gsize *n)
{
    g_autofree char *st = NULL;
    QTestState *dst;
    size_t v;

    st = migrate_via(t, file, "", &dst);
    g_assert_cmpstr(st, ==, "completed");
    qtest_quit(dst);
    g_assert_true(g_file_get_contents(file, (char **)b, n, NULL));
    unlink(file);
    v = qroce_section(*b, *n);
    g_assert_cmpuint(v, >, 0);
    return v;
}

/*
 * A stream of a newer version of the device, one cut inside the device's
 * section and one whose section is overwritten are each refused by a
 * new QEMU, which keeps running; the source runs on and moves data.
 */
static void test_bad_streams(QRoce *t)
{
    g_autofree char *file = g_strdup_printf("%s/qroce-mig-%d",
                                            g_get_tmp_dir(), getpid());
    g_autofree char *bad = g_strdup_printf("%s.bad", file);
    g_autofree char *st = NULL;
    g_autofree uint8_t *b = NULL;
    uint8_t *copy;
    gsize n;
    size_t v;
    QTestState *dst;
    QRoceEnv e;
    QRoceQP a, q;
    int k;

    busy_pair(t, &e, &a, &q, 2000, 5);
    v = saved_stream(t, file, &b, &n);
    g_assert_cmpuint(ldl_be_p(b + v), ==, 2);  /* the device's version */

    for (k = 0; k < 3; k++) {
        g_autofree char *r = NULL;

        copy = g_memdup2(b, n);
        if (k == 0) {
            stl_be_p(copy + v, 3);              /* a newer device */
            r = load_bytes(t, bad, copy, n, &dst);
        } else if (k == 1) {
            r = load_bytes(t, bad, copy, v + 4 + 300, &dst);   /* cut */
        } else {
            memset(copy + v + 4, 0xff, 256);    /* overwritten */
            r = load_bytes(t, bad, copy, n, &dst);
        }
        g_free(copy);
        unlink(bad);
        g_assert_cmpstr(r, ==, "failed");
        qtest_qmp_assert_success(dst, "{'execute': 'query-status'}");
        qtest_quit(dst);
    }
    qtest_qmp_assert_success(t->qts, "{'execute': 'cont'}");
    write_read(&e, &a, 700, 6);
}

/* ODP_MAP of MR @key's pages 0..3 to the 4 pages at @pages. */
static void odp_map4(QRoce *t, uint32_t key, uint64_t pages)
{
    struct qroce_cmd c = { .hdr.opcode = QROCE_CMD_ODP_MAP };
    uint64_t e[4], list = qroce_pages(t, 1);
    int i;

    for (i = 0; i < 4; i++) {
        e[i] = cpu_to_le64((pages + i * 4096) | QROCE_ODP_PRESENT |
                           QROCE_ODP_WRITE);
    }
    qtest_memwrite(t->qts, list, e, sizeof(e));
    c.odp_map.key = cpu_to_le32(key);
    c.odp_map.npages = cpu_to_le32(4);
    c.odp_map.list = cpu_to_le64(list);
    g_assert_cmpuint(qroce_cmd(t, &c, NULL), ==, QROCE_CMD_OK);
}

/* Wait for a page fault of @qpn's @side: its token. */
static uint32_t odp_wait_fault(QRoce *t, uint32_t qpn, uint32_t side)
{
    struct qroce_cmd c = { .hdr.opcode = QROCE_CMD_ODP_QUERY };
    int64_t deadline = qroce_deadline();
    uint32_t out[6];

    c.odp_pf.qpn = cpu_to_le32(qpn);
    c.odp_pf.side = cpu_to_le32(side);
    do {
        g_assert_cmpuint(qroce_cmd(t, &c, out), ==, QROCE_CMD_OK);
        if (out[0] == QROCE_PF_PENDING) {
            return out[5] & QROCE_PF_TOKEN_MASK;
        }
    } while (qroce_wait_more(deadline));
    g_assert_not_reached();
}

/*
 * An ODP MR (hw-spec §4b) moves as an ODP MR, its entries do not: a READ
 * of what was written into it before the move faults on the destination;
 * mapped again (the same guest pages) and resumed, it reads those bytes.
 */
static void test_odp_moves(QRoce *t)
{
    struct qroce_cmd c = { .hdr.opcode = QROCE_CMD_REG_MR };
    uint32_t out[6], key, i;
    uint8_t pat[600], got[600];
    QTestState *src = t->qts, *dst;
    uint64_t pages;
    QRoceEnv e;
    QRoceQP a, b;

    qroce_env_setup(&e, t);
    qroce_env_pair(&e, &a, &b, 1);
    pages = qroce_pages(t, 4);
    c.reg_mr.pdn = cpu_to_le32(e.pdn);
    c.reg_mr.access = cpu_to_le32(QROCE_ACCESS_LOCAL_WRITE |
                                  QROCE_ACCESS_REMOTE_WRITE |
                                  QROCE_ACCESS_REMOTE_READ);
    c.reg_mr.iova = cpu_to_le64(0x10000);
    c.reg_mr.length = cpu_to_le64(4 * 4096);
    c.reg_mr.pages.level = QROCE_BT_ODP;
    c.reg_mr.pages.page_shift = QROCE_ODP_PAGE_SHIFT;
    g_assert_cmpuint(qroce_cmd(t, &c, out), ==, QROCE_CMD_OK);
    key = out[0];
    odp_map4(t, key, pages);
    for (i = 0; i < sizeof(pat); i++) {
        pat[i] = i * 9 + 4;
    }
    qtest_memwrite(t->qts, e.buf, pat, sizeof(pat));
    qroce_env_put_rdma(&e, &a, QROCE_WR_RDMA_WRITE, 0x10000 + 4000, key,
                       e.buf, sizeof(pat));
    qroce_env_ring(&e, &a);
    qroce_env_cqe(&e, &a, QROCE_CQE_RDMA_WRITE, QROCE_WC_SUCCESS, NULL);

    dst = move_to_new(t);
    qroce_env_put_rdma(&e, &a, QROCE_WR_RDMA_READ, 0x10000 + 4000, key,
                       e.buf + 8192, sizeof(pat));
    qroce_env_ring(&e, &a);
    i = odp_wait_fault(t, b.qpn, QROCE_PF_RESP);
    odp_map4(t, key, pages);
    c = (struct qroce_cmd) { .hdr.opcode = QROCE_CMD_ODP_RESUME };
    c.odp_pf.qpn = cpu_to_le32(b.qpn);
    c.odp_pf.side = cpu_to_le32(QROCE_PF_RESP);
    c.odp_pf.token = cpu_to_le32(i);
    g_assert_cmpuint(qroce_cmd(t, &c, NULL), ==, QROCE_CMD_OK);
    qtest_clock_step(t->qts, 1000 * 1000);          /* the RNR timer */
    qroce_env_cqe(&e, &a, QROCE_CQE_RDMA_READ, QROCE_WC_SUCCESS, NULL);
    qtest_memread(t->qts, e.buf + 8192, got, sizeof(got));
    g_assert_true(!memcmp(got, pat, sizeof(got)));
    qtest_quit(dst);
    rebind(t, src);
}

/*
 * Fast-registration MRs move with room for all their pages: on the
 * destination one that was never registered, one registered with fewer
 * pages and invalidated, and one still VALID are each registered again
 * with all 8 pages (before the fix: a NULL write or a heap overflow), and
 * WRITEs through the new keys land in the first and the last page.
 */
static void frmr_reg8(QRoceEnv *e, QRoceQP *b, uint32_t key, uint64_t pbl)
{
    qroce_env_put_reg(e, b, key, 0x100000, pbl, 8 * 4096, 8, 12,
                      QROCE_ACCESS_LOCAL_WRITE | QROCE_ACCESS_REMOTE_WRITE);
    qroce_env_ring(e, b);
    qroce_env_cqe(e, b, QROCE_CQE_REG_MR, QROCE_WC_SUCCESS, NULL);
}

static void frmr_write_is(QRoceEnv *e, QRoceQP *a, uint32_t key,
                          uint64_t off, uint64_t page, uint8_t seed)
{
    uint8_t pat[1000], got[1000];
    uint32_t i;

    for (i = 0; i < sizeof(pat); i++) {
        pat[i] = i * 5 + seed;
    }
    qtest_memwrite(e->t->qts, e->buf, pat, sizeof(pat));
    qroce_env_put_rdma(e, a, QROCE_WR_RDMA_WRITE, 0x100000 + off, key, e->buf,
                       sizeof(pat));
    qroce_env_ring(e, a);
    qroce_env_cqe(e, a, QROCE_CQE_RDMA_WRITE, QROCE_WC_SUCCESS, NULL);
    qtest_memread(e->t->qts, page + (off & 4095), got, sizeof(got));
    g_assert_true(!memcmp(got, pat, sizeof(got)));
}

static void test_frmr_moves(QRoce *t)
{
    QTestState *src = t->qts, *dst;
    uint64_t tgt, pg[8], pbl;
    uint32_t key[3], i, regs;
    QRoceEnv e;
    QRoceQP a, b;

    qroce_env_setup(&e, t);
    qroce_env_pair(&e, &a, &b, 1);
    tgt = qroce_pages(t, 8);
    for (i = 0; i < 8; i++) {
        pg[i] = tgt + (7 - i) * 4096;     /* scattered: last page first */
    }
    pbl = qroce_pbl(t, pg, 8);
    for (i = 0; i < 3; i++) {
        key[i] = qroce_alloc_mr(t, e.pdn, 8, QROCE_CMD_OK);
    }
    /* key 1: registered with 2 pages, then invalidated (FREE again) */
    qroce_env_put_reg(&e, &b, key[1] | 1, 0x100000, pbl, 2 * 4096, 2, 12,
                      QROCE_ACCESS_LOCAL_WRITE);
    qroce_env_put_inv(&e, &b, QROCE_WR_LOCAL_INV, key[1] | 1, 0);
    qroce_env_ring(&e, &b);
    qroce_env_cqe(&e, &b, QROCE_CQE_REG_MR, QROCE_WC_SUCCESS, NULL);
    qroce_env_cqe(&e, &b, QROCE_CQE_LOCAL_INV, QROCE_WC_SUCCESS, NULL);
    /* key 2: VALID with 1 page at the move */
    qroce_env_put_reg(&e, &b, key[2] | 1, 0x100000, pbl, 4096, 1, 12,
                      QROCE_ACCESS_LOCAL_WRITE | QROCE_ACCESS_REMOTE_WRITE);
    qroce_env_ring(&e, &b);
    qroce_env_cqe(&e, &b, QROCE_CQE_REG_MR, QROCE_WC_SUCCESS, NULL);

    regs = qroce_cnt(t, QROCE_CNT_FAST_REGS);
    g_assert_cmpuint(regs, ==, 2);
    dst = move_to_new(t);
    g_assert_cmpuint(qroce_cnt(t, QROCE_CNT_FAST_REGS), ==, regs);
    frmr_write_is(&e, &a, key[2] | 1, 40, pg[0], 1);
    qroce_env_put_inv(&e, &b, QROCE_WR_LOCAL_INV, key[2] | 1, 0);
    qroce_env_ring(&e, &b);
    qroce_env_cqe(&e, &b, QROCE_CQE_LOCAL_INV, QROCE_WC_SUCCESS, NULL);
    for (i = 0; i < 3; i++) {
        frmr_reg8(&e, &b, key[i] | 2, pbl);
        frmr_write_is(&e, &a, key[i] | 2, 100, pg[0], 2 + i);
        frmr_write_is(&e, &a, key[i] | 2, 7 * 4096 + 2000, pg[7], 5 + i);
    }
    g_assert_cmpuint(qroce_cnt(t, QROCE_CNT_FAST_REGS), ==, regs + 3);
    qtest_quit(dst);
    rebind(t, src);
}

/*
 * Where a field of an object sits in a saved stream, found by what is
 * unique to the object from the device's section (@v) on: @needle, of
 * @len bytes, occurs once there; its offset.
 */
static size_t find_once(const uint8_t *b, size_t n, size_t v,
                        const void *needle, size_t len)
{
    size_t i, at = 0, hits = 0;

    for (i = v; i + len <= n; i++) {
        if (!memcmp(b + i, needle, len)) {
            at = hits++ ? at : i;
        }
    }
    g_assert_cmpuint(hits, ==, 1);
    return at;
}

/* The first @needle from @v on. */
static size_t find_first(const uint8_t *b, size_t n, size_t v,
                         const char *needle)
{
    size_t i, len = strlen(needle);

    for (i = v; i + len <= n; i++) {
        if (!memcmp(b + i, needle, len)) {
            return i;
        }
    }
    g_assert_not_reached();
}

/*
 * Offset of the record of the object whose first ring page is @ring
 * (the QP's SQ, the CQ's ring): @head bytes of fields precede its
 * buffer table (npages, page_shift, phys, then the pages).  The record
 * starts with the table's number and valid, then the object's number.
 */
static size_t record_of(const uint8_t *b, size_t n, size_t v, uint64_t ring,
                        size_t head, uint32_t num)
{
    uint8_t be[8];
    size_t at, rec;

    stq_be_p(be, ring);
    at = find_once(b, n, v, be, 8);
    g_assert_cmpuint(at, >=, v + head + 6);
    rec = at - 6 - head;
    g_assert_cmpuint(ldl_be_p(b + rec), ==, num);
    g_assert_cmpuint(b[rec + 4], ==, 1);
    g_assert_cmpuint(ldl_be_p(b + rec + 5), ==, num);
    return rec;
}

/* The device @qts drives has no object: a refused stream left nothing. */
static void no_objects(QTestState *qts)
{
    g_autofree char *js = objects(qts);
    QDict *d = qobject_to(QDict, qobject_from_json(js, &error_abort));
    const char *k[] = { "eqs", "cqs", "qps", "mrs", "srqs" };
    int i;

    for (i = 0; i < ARRAY_SIZE(k); i++) {
        g_assert_true(qlist_empty(qdict_get_qlist(d, k[i])));
    }
    qobject_unref(d);
}

/* QP record: number, valid, qpn, pdn, type, state, uar, flags, ..., srqn */
#define QP_HEAD         41
#define QP_TYPE         13
#define QP_FLAGS        25
#define QP_SRQN         37
/* CQ record: number, valid, cqn, uar, eqn, log2 */
#define CQ_HEAD         18

typedef struct StreamEdit {
    const char *what;
    uint32_t off;       /* from the QP record; ~0: the AH, ~1: the CQ */
    uint32_t val;
    bool ok;            /* the edited stream is still taken */
} StreamEdit;

/*
 * Streams edited on purpose: a QP type past the last transport, a QP on
 * an SRQ numbered 0, a congestion window of 0, an AH on a PD that does
 * not exist are each refused, the destination keeps running and holds no
 * object; a CQ whose reference count says no QP uses it is taken with
 * the count derived from the QPs (its destroy is refused as busy).
 */
static void test_edited_streams(QRoce *t)
{
    g_autofree char *file = g_strdup_printf("%s/qroce-mig-%d",
                                            g_get_tmp_dir(), getpid());
    g_autofree char *bad = g_strdup_printf("%s.bad", file);
    g_autofree char *st = NULL, *before = NULL;
    g_autofree uint8_t *b = NULL;
    static const uint8_t dgid[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                      0xff, 0xff, 10, 77, 66, 55 };
    struct qroce_cmd c = { .hdr.opcode = QROCE_CMD_CREATE_AH };
    const StreamEdit edits[] = {
        { "QP type 9", QP_TYPE, 9 },
        { "QP on SRQ 0", QP_FLAGS, QROCE_CREATE_QP_SRQ },
        { "congestion window 0", 0, 0 },
        { "AH on PD 0x7fff", ~0u, 0x7fff },
        { "CQ refs 0", ~1u, 0, true },
    };
    uint8_t key[21];
    size_t v, qp, cq, ah, cc;
    QTestState *src = t->qts, *dst;
    QRoceEnv e;
    QRoceQP a, q;
    gsize n;
    int k;

    busy_pair(t, &e, &a, &q, 2000, 7);
    c.create_ah.pdn = cpu_to_le32(e.pdn);
    qroce_self_av(&c.create_ah.av);
    memcpy(c.create_ah.av.dgid, dgid, 16);
    g_assert_cmpuint(qroce_cmd(t, &c, NULL), ==, QROCE_CMD_OK);
    before = objects(t->qts);
    v = saved_stream(t, file, &b, &n);
    qp = record_of(b, n, v, a.sq, QP_HEAD, a.qpn);
    cq = record_of(b, n, v, a.cq, CQ_HEAD, a.cqn);
    cq += CQ_HEAD + 6 + 8 * ldl_be_p(b + cq + CQ_HEAD) + 13;    /* refs */
    g_assert_cmpuint(ldl_be_p(b + cq), ==, 2);      /* A's SQ and RQ */
    key[0] = 1;
    stl_be_p(key + 1, e.pdn);
    memcpy(key + 5, dgid, 16);
    ah = find_once(b, n, v, key, sizeof(key)) + 1;
    cc = find_first(b, n, qp, "qroce/qp-congestion") + 19 + 4;
    g_assert_cmpuint(ldl_be_p(b + cc), >=, 256);    /* the window: cwnd */

    for (k = 0; k < ARRAY_SIZE(edits); k++) {
        const StreamEdit *x = &edits[k];
        g_autofree uint8_t *copy = g_memdup2(b, n);
        g_autofree char *r = NULL;

        if (x->off == ~0u) {
            stl_be_p(copy + ah, x->val);
        } else if (x->off == ~1u) {
            stl_be_p(copy + cq, x->val);
        } else if (x->off) {
            stl_be_p(copy + qp + x->off, ldl_be_p(copy + qp + x->off) |
                     x->val);
            stl_be_p(copy + qp + QP_SRQN, 0);
        } else {
            stl_be_p(copy + cc, 0);
        }
        r = load_bytes(t, bad, copy, n, &dst);
        unlink(bad);
        g_test_message("%s: %s", x->what, r);
        g_assert_cmpstr(r, ==, x->ok ? "completed" : "failed");
        qtest_qmp_assert_success(dst, "{'execute': 'query-status'}");
        if (x->ok) {
            g_autofree char *after = objects(dst);

            g_assert_cmpstr(after, ==, before);
            rebind(t, dst);
            g_assert_cmpuint(qroce_cmd_simple(t, QROCE_CMD_DESTROY_CQ, a.cqn,
                                              NULL), ==, QROCE_CMD_ERR_BUSY);
            rebind(t, src);
        } else {
            no_objects(dst);
        }
        qtest_quit(dst);
    }
}

static const QRoceCase cases[] = {
    { "migration/objects-and-qps-move-to-a-new-qemu", test_objects_move },
    { "migration/other-object-limits-refuse-the-stream", test_limits_differ },
    { "migration/the-device-announces-its-gids-and-its-qps-go-on",
      test_announce, NULL, qroce_peer_prepare },
    { "migration/a-command-outstanding-at-the-move-completes-once-there",
      test_cmd_outstanding },
    { "migration/newer-cut-or-overwritten-streams-are-refused",
      test_bad_streams },
    { "migration/a-doorbell-rung-at-the-stop-is-acted-on-once-after",
      test_doorbell_at_stop },
    { "migration/a-cancelled-move-leaves-the-source-running",
      test_cancelled },
    { "migration/device-memory-and-its-mrs-move", test_dm_moves },
    { "migration/odp-mrs-move-their-entries-fault-again", test_odp_moves },
    { "migration/an-odp-mr-of-0-bytes-moves", test_odp_empty_moves },
    { "migration/fast-registration-mrs-register-all-their-pages-after",
      test_frmr_moves },
    { "migration/edited-streams-are-refused-by-field-or-derived",
      test_edited_streams },
};

static void register_qroce_migration_tests(void)
{
    qroce_add_tests(cases, ARRAY_SIZE(cases));
}

libqos_init(register_qroce_migration_tests);
