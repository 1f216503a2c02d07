/*
 * libqos driver for qroce (see qroce.h): a driver node "qroce" on any PCI
 * bus, so that the tests run on every machine that has one, and what the
 * tests drive the device with, as the Linux driver's probe, verbs and
 * completion paths would.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "../libqtest.h"
#include "qobject/qdict.h"
#include "qobject/qnum.h"
#include "qobject/qbool.h"
#include "qobject/qstring.h"
#include "hw/pci/pci_regs.h"
#include "qroce.h"

const uint8_t qroce_dev_mac[6] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 };

/* ---- the graph node ---- */

static void qroce_foreach(QPCIDevice *dev, int devfn, void *data)
{
    *(QPCIDevice *)data = *dev;
    g_free(dev);
}

static void *qroce_get_driver(void *obj, const char *interface)
{
    QRocePCI *q = obj;

    if (!g_strcmp0(interface, "qroce")) {
        return q;
    }
    if (!g_strcmp0(interface, "pci-device")) {
        return &q->dev;
    }
    fprintf(stderr, "%s not present in qroce\n", interface);
    g_assert_not_reached();
}

static void *qroce_create(void *pci_bus, QGuestAllocator *alloc, void *addr)
{
    QRocePCI *q = g_new0(QRocePCI, 1);
    QPCIAddress *a = addr;

    qpci_device_foreach(pci_bus, a->vendor_id, a->device_id, qroce_foreach,
                        &q->dev);
    g_assert(q->dev.bus);
    q->obj.get_driver = qroce_get_driver;
    return &q->obj;
}

static void qroce_register_nodes(void)
{
    QPCIAddress addr = {
        .vendor_id = QROCE_PCI_VENDOR_ID,
        .device_id = QROCE_PCI_DEVICE_ID,
    };
    QOSGraphEdgeOptions opts = {
        .extra_device_opts = "id=qroce0,mac=52:54:00:12:34:56",
    };

    add_qpci_address(&opts, &addr);
    qos_node_create_driver("qroce", qroce_create);
    qos_node_consumes("qroce", "pci-bus", &opts);
}

libqos_init(qroce_register_nodes);

/* ---- the tests in the graph: a QEMU of their own each ---- */

static void qroce_free(void *opaque)
{
    QRoce *t = opaque;

    if (t->peer.fd >= 0) {
        close(t->peer.fd);
    }
    if (t->peer.qemu_fd >= 0) {
        close(t->peer.qemu_fd);
    }
    g_free(t->args);
    g_free(t->cmdline);
    g_free(t->data);
    g_free(t);
}

/*
 * qos-test's "before": the test's arguments on its QEMU's command line,
 * and the QRoce the test gets, which holds what they name.
 */
static void *qroce_before(GString *cmd_line, void *arg)
{
    QRoce *t = g_new0(QRoce, 1);

    t->c = arg;
    t->peer.fd = -1;
    t->peer.qemu_fd = -1;
    t->args = t->c->prepare ? t->c->prepare(t) :
              g_strdup(t->c->args ? t->c->args : "");
    g_test_queue_destroy(qroce_free, t);
    /* a fresh QEMU for every test: no state carried over in guest RAM */
    g_string_append_printf(cmd_line, " -name qroce-test-%s %s",
                           t->c->name, t->args);
    /* QROCE_QTEST_IOTHREAD set: the same test, the engine in an IOThread */
    if (qroce_iothread()) {
        g_string_append(cmd_line, " -object iothread,id=qroce-io"
                        " -global qroce.iothread=qroce-io");
    }
    t->cmdline = g_strdup(cmd_line->str);   /* for a migration's target */
    return t;
}

static void qroce_run(void *obj, void *data, QGuestAllocator *alloc)
{
    QRoce *t = data;

    qroce_start(t, obj, alloc);
    if (t->peer.qemu_fd >= 0) {
        close(t->peer.qemu_fd);     /* QEMU has its own copy now */
        t->peer.qemu_fd = -1;
    }
    t->c->fn(t);
    qroce_stop(t);
}

void qroce_add_tests(const QRoceCase *cases, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++) {
        QOSGraphTestOptions opts = {
            .before = qroce_before,
            .arg = (void *)&cases[i],
        };

        qos_add_test(cases[i].name, "qroce", qroce_run, &opts);
    }
}

/* ---- device, registers, doorbells ---- */

/* Take over the device qos-test started, as a driver's probe does. */
void qroce_start(QRoce *t, QRocePCI *node, QGuestAllocator *alloc)
{
    t->dev = &node->dev;
    t->bus = t->dev->bus;
    t->qts = t->bus->qts;
    t->alloc = alloc;
    t->regs = qpci_iomap(t->dev, QROCE_BAR_REGS, NULL);
    t->db = qpci_iomap(t->dev, QROCE_BAR_DB, NULL);
    t->mapped = true;
    qpci_device_enable(t->dev);
    qpci_msix_enable(t->dev);
}

/* The device goes back to qos-test, which ends that QEMU. */
void qroce_stop(QRoce *t)
{
    if (!t->mapped) {
        return;
    }
    t->mapped = false;
    qpci_msix_disable(t->dev);
    qpci_iounmap(t->dev, t->regs);
    qpci_iounmap(t->dev, t->db);
}

uint32_t qroce_rd(QRoce *t, uint32_t reg)
{
    return qpci_io_readl(t->dev, t->regs, reg);
}

void qroce_wr(QRoce *t, uint32_t reg, uint32_t val)
{
    qpci_io_writel(t->dev, t->regs, reg, val);
}

/* Counter @n (QROCE_CNT_*). */
uint32_t qroce_cnt(QRoce *t, int n)
{
    return qroce_rd(t, QROCE_REG_CNT(n));
}

/* The doorbell at @off of the doorbell BAR, for object @obj. */
void qroce_db(QRoce *t, uint64_t off, uint32_t obj, uint32_t val)
{
    qpci_io_writeq(t->dev, t->db, off, qroce_db_value(obj, val));
}

/* MSI-X vector 0 writes its message to guest address @addr. */
static void qroce_msix_target(QRoce *t, uint64_t addr)
{
    uint64_t off = t->dev->msix_table_off;
    QPCIBar bar = t->dev->msix_table_bar;

    qpci_io_writel(t->dev, bar, off + PCI_MSIX_ENTRY_LOWER_ADDR, addr);
    qpci_io_writel(t->dev, bar, off + PCI_MSIX_ENTRY_UPPER_ADDR, addr >> 32);
}

/*
 * Point MSI-X vector 0 at a word of guest memory and unmask it: the
 * device's message lands there, as it would reach a driver's handler.
 */
static void qroce_msix_setup(QRoce *t)
{
    uint64_t off = t->dev->msix_table_off;
    QPCIBar bar = t->dev->msix_table_bar;
    uint32_t ctrl;

    t->msi = guest_alloc(t->alloc, 4);
    qtest_writel(t->qts, t->msi, 0);
    qroce_msix_target(t, t->msi);
    qpci_io_writel(t->dev, bar, off + PCI_MSIX_ENTRY_DATA, QROCE_MSI_DATA);
    ctrl = qpci_io_readl(t->dev, bar, off + PCI_MSIX_ENTRY_VECTOR_CTRL);
    qpci_io_writel(t->dev, bar, off + PCI_MSIX_ENTRY_VECTOR_CTRL,
                   ctrl & ~PCI_MSIX_ENTRY_CTRL_MASKBIT);
}

/* Wait for vector 0's message, as a driver waits for its interrupt. */
bool qroce_msix_wait(QRoce *t)
{
    int64_t end = qroce_deadline();

    while (qtest_readl(t->qts, t->msi) != QROCE_MSI_DATA) {
        if (!qroce_wait_more(end)) {
            return false;
        }
    }
    qtest_writel(t->qts, t->msi, 0);
    return true;
}

/* Reset, program a command queue, enable; the device must be READY. */
void qroce_enable(QRoce *t)
{
    qroce_wr(t, QROCE_REG_CTRL, QROCE_CTRL_RESET);
    g_assert_cmphex(qroce_rd(t, QROCE_REG_STATUS), ==, 0);
    t->cmdq = qroce_pages(t, 1);
    t->comp = qroce_pages(t, 1);
    t->pi = 0;
    qroce_msix_setup(t);
    qroce_wr(t, QROCE_REG_CMDQ_BASE_LO, t->cmdq);
    qroce_wr(t, QROCE_REG_CMDQ_BASE_HI, t->cmdq >> 32);
    qroce_wr(t, QROCE_REG_CMDQ_CQ_LO, t->comp);
    qroce_wr(t, QROCE_REG_CMDQ_CQ_HI, t->comp >> 32);
    qroce_wr(t, QROCE_REG_CMDQ_LOG2, QROCE_CMDQ_LOG2);
    qroce_wr(t, QROCE_REG_CTRL, QROCE_CTRL_ENABLE);
    g_assert_cmphex(qroce_rd(t, QROCE_REG_STATUS) & QROCE_STATUS_READY, ==,
                    QROCE_STATUS_READY);
}

/* @n zeroed 4 KiB pages of guest memory, page aligned. */
uint64_t qroce_pages(QRoce *t, unsigned n)
{
    /* guest_alloc is not page aligned: take a page more and align */
    uint64_t a = guest_alloc(t->alloc, (n + 1) * 4096);

    a = QEMU_ALIGN_UP(a, 4096);
    qtest_memset(t->qts, a, 0, n * 4096);
    return a;
}

/* A buffer table of @npages contiguous 4 KiB pages at @addr. */
struct qroce_bt qroce_bt(uint64_t addr, uint32_t npages)
{
    return (struct qroce_bt){ cpu_to_le64(addr), cpu_to_le32(npages), 12,
                              QROCE_BT_CONTIG, 0 };
}

/* ---- waiting on the device ---- */

/* The end of a wait that starts now. */
/*
 * The engine runs in an IOThread (QROCE_QTEST_IOTHREAD): it works while
 * the test does, so what it does after a doorbell is seen at some point,
 * not before the next qtest command.
 */
bool qroce_iothread(void)
{
    return g_getenv("QROCE_QTEST_IOTHREAD") != NULL;
}

int64_t qroce_deadline(void)
{
    return g_get_monotonic_time() + QROCE_TIMEOUT_US;
}

/*
 * Between two looks at what a test waits for: a pause of QROCE_POLL_US
 * (QEMU runs meanwhile; the virtual clock stands still); false once
 * @deadline has passed.
 */
bool qroce_wait_more(int64_t deadline)
{
    if (g_get_monotonic_time() > deadline) {
        return false;
    }
    g_usleep(QROCE_POLL_US);
    return true;
}

/* Wait until counter @n reaches at least @v. */
void qroce_wait_cnt(QRoce *t, int n, uint32_t v)
{
    int64_t end = qroce_deadline();

    while (qroce_cnt(t, n) < v && qroce_wait_more(end)) {
        continue;
    }
    g_assert_cmpuint(qroce_cnt(t, n), >=, v);
}

/*
 * Wait until counter @n stops moving: the same before and after a
 * command, whose bottom half runs after the engine's if that is pending
 * (so the engine has nothing left to do, or is held back); its value.
 * With the engine in an IOThread nothing orders the two, so the counter
 * must also stay the same over 0.2 s of commands.
 */
uint32_t qroce_wait_cnt_stable(QRoce *t, int n)
{
    int64_t end = qroce_deadline(), still = 0;
    uint32_t v;

    for (;;) {
        v = qroce_cnt(t, n);
        qroce_sync(t);
        if (qroce_cnt(t, n) != v) {
            still = 0;
        } else if (!qroce_iothread()) {
            return v;
        } else if (!still) {
            still = g_get_monotonic_time() + 200 * 1000;
        } else if (g_get_monotonic_time() > still) {
            return v;
        }
        g_assert(qroce_wait_more(end));
    }
}

/* Wait until register @reg reads @val. */
void qroce_wait_reg(QRoce *t, uint32_t reg, uint32_t val)
{
    int64_t end = qroce_deadline();

    while (qroce_rd(t, reg) != val && qroce_wait_more(end)) {
        continue;
    }
    g_assert_cmpuint(qroce_rd(t, reg), ==, val);
}

/* Entry @idx of a ring of 2^@log2 entries of @size: is it the device's? */
bool qroce_entry_ready(QRoce *t, uint64_t ring, unsigned size, uint8_t log2,
                       uint32_t idx)
{
    uint8_t owner;

    qtest_memread(t->qts, ring + (uint64_t)(idx & ((1u << log2) - 1)) * size
                  + size - 1, &owner, 1);
    return (owner & QROCE_OWNER_BIT) == qroce_owner_for(idx, log2);
}

/* Wait for entry @idx of a ring of 2^@log2 entries of @size bytes. */
void qroce_wait_entry(QRoce *t, uint64_t ring, unsigned size, uint8_t log2,
                      uint32_t idx, void *e)
{
    int64_t end = qroce_deadline();

    while (!qroce_entry_ready(t, ring, size, log2, idx)) {
        g_assert(qroce_wait_more(end));
    }
    qtest_memread(t->qts, ring + (uint64_t)(idx & ((1u << log2) - 1)) * size,
                  e, size);
}

/* Wait for CQE @idx of a 64-entry CQ. */
void qroce_wait_cqe(QRoce *t, uint64_t ring, uint32_t idx,
                    struct qroce_cqe *cqe)
{
    qroce_wait_entry(t, ring, sizeof(*cqe), 6, idx, cqe);
}

/* The next CQE of @qpn's send queue in a 64-entry CQ, from entry *@idx. */
void qroce_next_send_cqe(QRoce *t, uint64_t ring, uint32_t *idx,
                         uint32_t qpn, struct qroce_cqe *cqe)
{
    for (;;) {
        qroce_wait_cqe(t, ring, (*idx)++, cqe);
        if (le32_to_cpu(cqe->qpn) == qpn && (cqe->flags & QROCE_CQE_F_SQ)) {
            return;
        }
    }
}

/* ---- commands and objects ---- */

/* Write command @c at the next slot of the queue and ring its doorbell. */
void qroce_cmd_post(QRoce *t, const struct qroce_cmd *c)
{
    uint32_t slot = t->pi & ((1u << QROCE_CMDQ_LOG2) - 1);

    qtest_memwrite(t->qts, t->cmdq + slot * QROCE_CMD_SIZE, c, sizeof(*c));
    t->pi++;
    qroce_wr(t, QROCE_REG_CMDQ_PI, t->pi);
}

/* Post one command, wait for its completion; return its status. */
int qroce_cmd(QRoce *t, struct qroce_cmd *c, uint32_t *out)
{
    uint32_t slot = t->pi & ((1u << QROCE_CMDQ_LOG2) - 1);
    uint64_t caddr = t->comp + slot * QROCE_CMD_COMP_SIZE;
    struct qroce_cmd_comp comp;
    int i;

    c->hdr.cookie = cpu_to_le32(0x1000 + t->pi);
    qroce_cmd_post(t, c);
    /*
     * Sleep on the interrupt, then look at the completion, as the driver
     * does; vector 0 also carries async events, so a message may come
     * for something else: wait again then.
     */
    for (i = 0; i < 100; i++) {
        g_assert(qroce_msix_wait(t));
        qtest_memread(t->qts, caddr, &comp, sizeof(comp));
        if ((comp.owner & QROCE_OWNER_BIT) ==
            qroce_owner_for(t->pi - 1, QROCE_CMDQ_LOG2)) {
            break;
        }
    }
    g_assert_cmpint(i, <, 100);
    g_assert_cmphex(le32_to_cpu(comp.cookie), ==, 0x1000 + t->pi - 1);
    g_assert_cmpint(comp.opcode, ==, c->hdr.opcode);
    g_assert_cmpuint(qroce_rd(t, QROCE_REG_CMDQ_CI), ==, t->pi);
    if (out) {
        for (i = 0; i < 6; i++) {
            out[i] = le32_to_cpu(comp.out[i]);
        }
    }
    return comp.status;
}

/*
 * Post the @n commands @c (n >= 2) with one doorbell and wait for their
 * completions, their statuses in @st.  Meanwhile MSI-X vector 0, which the
 * device raises at the end of each command-queue run that completed
 * something, writes its message over the last command's cookie: true if
 * that command was read after such an interrupt, that is if the device
 * ended its run (yielded) before it, false if it ran in the same run as
 * the others.
 */
bool qroce_cmds_split(QRoce *t, struct qroce_cmd *c, unsigned n, int *st)
{
    uint32_t mask = (1u << QROCE_CMDQ_LOG2) - 1, first = t->pi, i;
    struct qroce_cmd_comp comp;
    uint32_t cookie;

    g_assert(n >= 2 && n <= mask + 1);
    for (i = 0; i < n; i++) {
        c[i].hdr.cookie = cpu_to_le32(0x1000 + first + i);
        qtest_memwrite(t->qts, t->cmdq + ((first + i) & mask) * QROCE_CMD_SIZE,
                       &c[i], sizeof(c[i]));
    }
    qroce_msix_target(t, t->cmdq + ((first + n - 1) & mask) * QROCE_CMD_SIZE
                      + offsetof(struct qroce_cmd_hdr, cookie));
    t->pi += n;
    qroce_wr(t, QROCE_REG_CMDQ_PI, t->pi);
    for (i = 0; i < n; i++) {
        int64_t end = qroce_deadline();

        for (;;) {
            qtest_memread(t->qts, t->comp + ((first + i) & mask) *
                          QROCE_CMD_COMP_SIZE, &comp, sizeof(comp));
            if ((comp.owner & QROCE_OWNER_BIT) ==
                qroce_owner_for(first + i, QROCE_CMDQ_LOG2)) {
                break;
            }
            g_assert(qroce_wait_more(end));
        }
        g_assert_cmpint(comp.opcode, ==, c[i].hdr.opcode);
        st[i] = comp.status;
    }
    /* every run has ended: no message is still to come */
    qroce_msix_target(t, t->msi);
    qtest_writel(t->qts, t->msi, 0);
    cookie = le32_to_cpu(comp.cookie);
    if (cookie != QROCE_MSI_DATA) {
        g_assert_cmphex(cookie, ==, 0x1000 + first + n - 1);
    }
    return cookie == QROCE_MSI_DATA;
}

/* A command that names one object (or none): its status. */
int qroce_cmd_simple(QRoce *t, uint8_t op, uint32_t handle, uint32_t *out)
{
    struct qroce_cmd c = { .hdr.opcode = op };

    c.handle.handle = cpu_to_le32(handle);
    return qroce_cmd(t, &c, out);
}

/*
 * Let the device catch up: a NOP goes through the command queue's bottom
 * half, which runs after every bottom half already scheduled (the engine
 * after a doorbell, the loopback, Ethernet TX); its completion says they
 * have run.  For a check that something did not happen.
 */
void qroce_sync(QRoce *t)
{
    g_assert_cmpuint(qroce_cmd_simple(t, QROCE_CMD_NOP, 0, NULL), ==,
                     QROCE_CMD_OK);
}

uint32_t qroce_alloc_pd(QRoce *t)
{
    uint32_t out[6];

    g_assert_cmpuint(qroce_cmd_simple(t, QROCE_CMD_ALLOC_PD, 0, out), ==, 0);
    return out[0];
}

/* EQ @eqn of 256 entries: its ring. */
uint64_t qroce_mk_eq(QRoce *t, uint32_t eqn)
{
    struct qroce_cmd c = { .hdr.opcode = QROCE_CMD_CREATE_EQ };
    uint64_t ring = qroce_pages(t, 1);

    c.create_eq.eqn = cpu_to_le32(eqn);
    c.create_eq.log2_entries = 8;
    c.create_eq.ring = qroce_bt(ring, 1);
    g_assert_cmpuint(qroce_cmd(t, &c, NULL), ==, QROCE_CMD_OK);
    return ring;
}

/* A CQ of 2^@log2 entries on EQ @eqn: its number, its ring in *@ring. */
uint32_t qroce_mk_cq_ring(QRoce *t, uint32_t eqn, uint8_t log2,
                          uint64_t *ring)
{
    struct qroce_cmd c = { .hdr.opcode = QROCE_CMD_CREATE_CQ };
    uint32_t out[6];
    uint32_t np = DIV_ROUND_UP((sizeof(struct qroce_cqe) << log2) +
                               sizeof(struct qroce_cq_rec), 4096);

    *ring = qroce_pages(t, np);
    c.create_cq.eqn = cpu_to_le32(eqn);
    c.create_cq.log2_entries = log2;
    c.create_cq.ring = qroce_bt(*ring, np);
    g_assert_cmpuint(qroce_cmd(t, &c, out), ==, QROCE_CMD_OK);
    return out[0];
}

/* A 64-entry CQ on EQ @eqn. */
uint32_t qroce_mk_cq(QRoce *t, uint32_t eqn)
{
    uint64_t ring;

    return qroce_mk_cq_ring(t, eqn, 6, &ring);
}

/*
 * CREATE_QP with 16-entry rings of its own (SQ WQEs of 2^t->sq_shift
 * bytes, flags t->qp_flags); their addresses in *@sq, *@rq.
 */
int qroce_mk_qp_rings(QRoce *t, uint8_t type, uint32_t pdn, uint32_t scqn,
                      uint32_t rcqn, uint32_t uar, uint32_t *qpn,
                      uint64_t *sq, uint64_t *rq)
{
    struct qroce_cmd c = { .hdr.opcode = QROCE_CMD_CREATE_QP };
    uint32_t out[6] = {};
    int st;

    *sq = qroce_pages(t, 1);
    *rq = qroce_pages(t, 1);
    c.create_qp.pdn = cpu_to_le32(pdn);
    c.create_qp.send_cqn = cpu_to_le32(scqn);
    c.create_qp.recv_cqn = cpu_to_le32(rcqn);
    c.create_qp.uar = cpu_to_le32(uar);
    c.create_qp.type = type;
    c.create_qp.flags = t->qp_flags;
    c.create_qp.sq_log2_entries = 4;
    c.create_qp.sq_wqe_shift = t->sq_shift ? t->sq_shift : 6;
    c.create_qp.rq_log2_entries = 4;
    c.create_qp.rq_wqe_shift = 5;
    c.create_qp.sq = qroce_bt(*sq, 1);
    c.create_qp.rq = qroce_bt(*rq, 1);
    st = qroce_cmd(t, &c, out);
    *qpn = out[0];
    return st;
}

int qroce_mk_qp(QRoce *t, uint8_t type, uint32_t pdn, uint32_t cqn,
                uint32_t uar, uint32_t *qpn)
{
    uint64_t sq, rq;

    return qroce_mk_qp_rings(t, type, pdn, cqn, cqn, uar, qpn, &sq, &rq);
}

/* REG_MR of @npages contiguous 4 KiB pages at @buf (iova = address). */
uint32_t qroce_mk_mr(QRoce *t, uint32_t pdn, uint64_t buf, uint32_t npages,
                     uint32_t access)
{
    struct qroce_cmd c = { .hdr.opcode = QROCE_CMD_REG_MR };
    uint32_t out[6];

    c.reg_mr.pdn = cpu_to_le32(pdn);
    c.reg_mr.access = cpu_to_le32(access);
    c.reg_mr.iova = cpu_to_le64(buf);
    c.reg_mr.length = cpu_to_le64((uint64_t)npages << 12);
    c.reg_mr.pages = qroce_bt(buf, npages);
    g_assert_cmpuint(qroce_cmd(t, &c, out), ==, 0);
    return out[0];
}

/* ALLOC_MR (fast registration) of @max_pages: it ends in @status. */
uint32_t qroce_alloc_mr(QRoce *t, uint32_t pdn, uint32_t max_pages,
                        int status)
{
    struct qroce_cmd c = { .hdr.opcode = QROCE_CMD_ALLOC_MR };
    uint32_t out[6] = {};

    c.alloc_mr.pdn = cpu_to_le32(pdn);
    c.alloc_mr.max_pages = cpu_to_le32(max_pages);
    g_assert_cmpuint(qroce_cmd(t, &c, out), ==, status);
    return out[0];
}

/* A page list in guest memory. */
uint64_t qroce_pbl(QRoce *t, const uint64_t *pages, unsigned n)
{
    uint64_t pbl = qroce_pages(t, 1);
    unsigned i;

    for (i = 0; i < n; i++) {
        qtest_writeq(t->qts, pbl + 8 * i, pages[i]);
    }
    return pbl;
}

/* MODIFY_QP with plausible values for every attribute named in @mask. */
int qroce_modify(QRoce *t, uint32_t qpn, uint32_t mask, uint8_t state,
                 struct qroce_cmd *tweak)
{
    struct qroce_cmd c = { .hdr.opcode = QROCE_CMD_MODIFY_QP };

    if (tweak) {
        c = *tweak;
        c.hdr.opcode = QROCE_CMD_MODIFY_QP;
    } else {
        c.modify_qp.path_mtu = 3;     /* 1024 */
        c.modify_qp.timeout = 14;
        c.modify_qp.retry_cnt = 7;
        c.modify_qp.rnr_retry = 7;
        c.modify_qp.min_rnr_timer = 12;
        c.modify_qp.max_rd_atomic = 1;
        c.modify_qp.max_dest_rd_atomic = 1;
        c.modify_qp.access_flags = cpu_to_le32(QROCE_ACCESS_REMOTE_WRITE);
        c.modify_qp.qkey = cpu_to_le32(0x11111111);
        c.modify_qp.sq_psn = cpu_to_le32(0x123456);
        c.modify_qp.rq_psn = cpu_to_le32(0x654321);
        c.modify_qp.dest_qpn = cpu_to_le32(2);
        c.modify_qp.av.net_type = QROCE_NET_IPV4;
        c.modify_qp.av.sgid_index = 0;
        c.modify_qp.av.hop_limit = 64;
    }
    c.modify_qp.qpn = cpu_to_le32(qpn);
    c.modify_qp.attr_mask = cpu_to_le32(mask);
    c.modify_qp.new_state = state;
    return qroce_cmd(t, &c, NULL);
}

/* The state QUERY_QP reports. */
uint32_t qroce_qp_state(QRoce *t, uint32_t qpn)
{
    struct qroce_cmd c = { .hdr.opcode = QROCE_CMD_QUERY_QP };
    uint32_t out[6];

    c.qpn.qpn = cpu_to_le32(qpn);
    g_assert_cmpuint(qroce_cmd(t, &c, out), ==, QROCE_CMD_OK);
    return out[0];
}

/*
 * QP @qpn's state once it is @want, or what it is when time runs out:
 * the engine acts on a recorded (bad) doorbell in its own run, which with
 * an IOThread nothing orders against the next QUERY_QP command.
 */
uint32_t qroce_wait_qp_state(QRoce *t, uint32_t qpn, uint32_t want)
{
    int64_t end = qroce_deadline();
    uint32_t st;

    while ((st = qroce_qp_state(t, qpn)) != want && qroce_wait_more(end)) {
        continue;
    }
    return st;
}

/* GID 0: 10.0.0.1, RoCE v2. */
void qroce_set_gid0(QRoce *t)
{
    struct qroce_cmd c = { .hdr.opcode = QROCE_CMD_SET_GID };

    c.set_gid.type = QROCE_GID_ROCE_V2;
    c.set_gid.index = cpu_to_le32(0);
    c.set_gid.gid[10] = c.set_gid.gid[11] = 0xff;
    c.set_gid.gid[12] = 10;
    c.set_gid.gid[15] = 1;
    g_assert_cmpuint(qroce_cmd(t, &c, NULL), ==, QROCE_CMD_OK);
}

/* The address of the device itself: 10.0.0.1 (GID 0) at its own MAC. */
void qroce_self_av(struct qroce_av *av)
{
    memset(av, 0, sizeof(*av));
    av->dgid[10] = av->dgid[11] = 0xff;
    av->dgid[12] = 10;
    av->dgid[15] = 1;
    memcpy(av->dmac, qroce_dev_mac, 6);
    av->hop_limit = 64;
    av->net_type = QROCE_NET_IPV4;
}

/* An AH on @pdn to the device itself. */
uint32_t qroce_mk_self_ah(QRoce *t, uint32_t pdn)
{
    struct qroce_cmd c = { .hdr.opcode = QROCE_CMD_CREATE_AH };
    uint32_t out[6];

    c.create_ah.pdn = cpu_to_le32(pdn);
    qroce_self_av(&c.create_ah.av);
    g_assert_cmpuint(qroce_cmd(t, &c, out), ==, 0);
    return out[0];
}

/* An enabled device with a PD (its number) and EQs 0 and 1. */
uint32_t qroce_base_setup(QRoce *t)
{
    uint32_t pdn;

    qroce_enable(t);
    pdn = qroce_alloc_pd(t);
    qroce_mk_eq(t, 0);
    qroce_mk_eq(t, 1);
    return pdn;
}

/*
 * An enabled device with a PD, EQs 0 and 1, a 64-entry CQ on EQ 1, GID 0
 * = 10.0.0.1 and a two-page MR with @access.
 */
void qroce_objs_setup(QRoce *t, uint32_t access, uint32_t *pdn,
                      uint32_t *cqn, uint64_t *cq_ring, uint64_t *buf,
                      uint32_t *key)
{
    *pdn = qroce_base_setup(t);
    *cqn = qroce_mk_cq_ring(t, 1, 6, cq_ring);
    qroce_set_gid0(t);
    *buf = qroce_pages(t, 2);
    *key = qroce_mk_mr(t, *pdn, *buf, 2, access);
}

/* ---- connecting QPs ---- */

/*
 * An RC QP to RTS towards QP @dest at @av, path MTU 256, with @access:
 * its RNR NAKs ask for @rnr_timer, it waits @timeout and retries @retry
 * times (and RNR retries 7), @rd_atomic READs or atomics in flight each
 * way.
 */
static void qroce_rc_to_rts(QRoce *t, uint32_t qpn, uint32_t dest,
                            const struct qroce_av *av, uint32_t my_psn,
                            uint32_t dest_psn, uint32_t access,
                            uint8_t rnr_timer, uint8_t timeout, uint8_t retry,
                            uint8_t rd_atomic)
{
    struct qroce_cmd c;

    memset(&c, 0, sizeof(c));
    c.modify_qp.access_flags = cpu_to_le32(access);
    g_assert_cmpuint(qroce_modify(t, qpn, QROCE_RC_INIT, QROCE_QPS_INIT, &c),
                     ==, 0);
    memset(&c, 0, sizeof(c));
    c.modify_qp.path_mtu = QROCE_MTU_256;
    c.modify_qp.dest_qpn = cpu_to_le32(dest);
    c.modify_qp.rq_psn = cpu_to_le32(dest_psn);
    c.modify_qp.min_rnr_timer = rnr_timer;
    c.modify_qp.max_dest_rd_atomic = rd_atomic;
    c.modify_qp.av = *av;
    g_assert_cmpuint(qroce_modify(t, qpn, QROCE_RC_RTR, QROCE_QPS_RTR, &c),
                     ==, 0);
    memset(&c, 0, sizeof(c));
    c.modify_qp.timeout = timeout;
    c.modify_qp.retry_cnt = retry;
    c.modify_qp.rnr_retry = 7;
    c.modify_qp.max_rd_atomic = rd_atomic;
    c.modify_qp.sq_psn = cpu_to_le32(my_psn);
    g_assert_cmpuint(qroce_modify(t, qpn, QROCE_RC_RTS, QROCE_QPS_RTS, &c),
                     ==, 0);
}

/*
 * An RC QP to RTS towards QP @dest of the device itself, with local and
 * remote write, no READs or atomics.
 */
void qroce_rc_connect(QRoce *t, uint32_t qpn, uint32_t dest,
                      uint32_t my_psn, uint32_t dest_psn)
{
    struct qroce_av av;

    qroce_self_av(&av);
    qroce_rc_to_rts(t, qpn, dest, &av, my_psn, dest_psn,
                    QROCE_ACCESS_LOCAL_WRITE | QROCE_ACCESS_REMOTE_WRITE,
                    1, 14, 7, 0);
}

/*
 * An RC QP to RTS towards QP @dest at @av with remote read and atomics
 * too, one READ or atomic in flight each way: its RNR NAKs ask for
 * @rnr_timer, it waits @timeout and retries @retry times.
 */
static void qroce_rc_connect_av(QRoce *t, uint32_t qpn, uint32_t dest,
                                const struct qroce_av *av, uint32_t my_psn,
                                uint32_t dest_psn, uint8_t rnr_timer,
                                uint8_t timeout, uint8_t retry)
{
    qroce_rc_to_rts(t, qpn, dest, av, my_psn, dest_psn,
                    QROCE_ACCESS_LOCAL_WRITE | QROCE_ACCESS_REMOTE_WRITE |
                    QROCE_ACCESS_REMOTE_READ | QROCE_ACCESS_REMOTE_ATOMIC,
                    rnr_timer, timeout, retry, 1);
}

/* qroce_rc_connect_av() towards the device itself. */
void qroce_rc_connect_ex(QRoce *t, uint32_t qpn, uint32_t dest,
                         uint32_t my_psn, uint32_t dest_psn,
                         uint8_t rnr_timer, uint8_t timeout, uint8_t retry)
{
    struct qroce_av av;

    qroce_self_av(&av);
    qroce_rc_connect_av(t, qpn, dest, &av, my_psn, dest_psn, rnr_timer,
                        timeout, retry);
}

/*
 * Two RC QPs with rings of their own on CQ @cqn, connected to each other
 * as qroce_rc_connect_ex() does (PSNs 100 and 200); B's RNR NAKs ask for
 * @b_rnr_timer.
 */
void qroce_rc_pair(QRoce *t, uint32_t pdn, uint32_t cqn, uint8_t b_rnr_timer,
                   QRoceQP *a, QRoceQP *b)
{
    memset(a, 0, sizeof(*a));
    memset(b, 0, sizeof(*b));
    g_assert_cmpuint(qroce_mk_qp_rings(t, QROCE_QPT_RC, pdn, cqn, cqn, 0,
                                       &a->qpn, &a->sq, &a->rq), ==, 0);
    g_assert_cmpuint(qroce_mk_qp_rings(t, QROCE_QPT_RC, pdn, cqn, cqn, 0,
                                       &b->qpn, &b->sq, &b->rq), ==, 0);
    a->cqn = b->cqn = cqn;
    qroce_rc_connect_ex(t, a->qpn, b->qpn, 100, 200, 1, 14, 7);
    qroce_rc_connect_ex(t, b->qpn, a->qpn, 200, 100, b_rnr_timer, 14, 7);
}

/* A UC QP to RTS towards @dest at @av, both PSNs @psn. */
void qroce_uc_connect_av(QRoce *t, uint32_t qpn, uint32_t dest,
                         const struct qroce_av *av, uint32_t psn)
{
    struct qroce_cmd c;

    memset(&c, 0, sizeof(c));
    c.modify_qp.access_flags = cpu_to_le32(QROCE_ACCESS_LOCAL_WRITE |
                                           QROCE_ACCESS_REMOTE_WRITE);
    g_assert_cmpuint(qroce_modify(t, qpn, QROCE_QP_ATTR_STATE |
                                  QROCE_QP_ATTR_PKEY_INDEX |
                                  QROCE_QP_ATTR_PORT |
                                  QROCE_QP_ATTR_ACCESS_FLAGS,
                                  QROCE_QPS_INIT, &c), ==, 0);
    memset(&c, 0, sizeof(c));
    c.modify_qp.path_mtu = QROCE_MTU_256;
    c.modify_qp.dest_qpn = cpu_to_le32(dest);
    c.modify_qp.rq_psn = cpu_to_le32(psn);
    c.modify_qp.av = *av;
    g_assert_cmpuint(qroce_modify(t, qpn, QROCE_QP_ATTR_STATE |
                                  QROCE_QP_ATTR_AV | QROCE_QP_ATTR_PATH_MTU |
                                  QROCE_QP_ATTR_DEST_QPN |
                                  QROCE_QP_ATTR_RQ_PSN,
                                  QROCE_QPS_RTR, &c), ==, 0);
    memset(&c, 0, sizeof(c));
    c.modify_qp.sq_psn = cpu_to_le32(psn);
    g_assert_cmpuint(qroce_modify(t, qpn, QROCE_QP_ATTR_STATE |
                                  QROCE_QP_ATTR_SQ_PSN, QROCE_QPS_RTS, &c),
                     ==, 0);
}

/* A UC QP to RTS towards QP @dest of the device itself, PSNs 500. */
void qroce_uc_connect(QRoce *t, uint32_t qpn, uint32_t dest)
{
    struct qroce_av av;

    qroce_self_av(&av);
    qroce_uc_connect_av(t, qpn, dest, &av, 500);
}

/* A UD or GSI QP to RTS with @qkey. */
void qroce_ud_ready(QRoce *t, uint32_t qpn, uint8_t type, uint32_t qkey)
{
    struct qroce_cmd c;

    memset(&c, 0, sizeof(c));
    c.modify_qp.qkey = cpu_to_le32(qkey);
    g_assert_cmpuint(qroce_modify(t, qpn, QROCE_QP_ATTR_STATE |
                                  QROCE_QP_ATTR_PKEY_INDEX |
                                  QROCE_QP_ATTR_QKEY |
                                  (type == QROCE_QPT_UD ?
                                   QROCE_QP_ATTR_PORT : 0),
                                  QROCE_QPS_INIT, &c), ==, 0);
    memset(&c, 0, sizeof(c));
    g_assert_cmpuint(qroce_modify(t, qpn, QROCE_QP_ATTR_STATE, QROCE_QPS_RTR,
                                  &c), ==, 0);
    c.modify_qp.sq_psn = cpu_to_le32(7);
    g_assert_cmpuint(qroce_modify(t, qpn, QROCE_QP_ATTR_STATE |
                                  QROCE_QP_ATTR_SQ_PSN, QROCE_QPS_RTS, &c),
                     ==, 0);
}

/* A UD or GSI QP with rings of its own, in RTS with @qkey. */
void qroce_ud_qp(QRoce *t, uint8_t type, uint32_t pdn, uint32_t cqn,
                 uint32_t qkey, uint32_t *qpn, uint64_t *sq, uint64_t *rq)
{
    g_assert_cmpuint(qroce_mk_qp_rings(t, type, pdn, cqn, cqn, 0, qpn, sq,
                                       rq), ==, 0);
    qroce_ud_ready(t, *qpn, type, qkey);
}

/* ---- work requests ---- */

/* Write send WQE @idx (64-byte stride): header @h and one SGE. */
void qroce_put_send_wqe(QRoce *t, uint64_t sq, uint32_t idx,
                        const struct qroce_send_wqe *h, uint64_t addr,
                        uint32_t len, uint32_t lkey)
{
    struct {
        struct qroce_send_wqe h;
        struct qroce_sge sge;
    } w = { .h = *h };

    w.h.num_sge = 1;
    w.sge.addr = cpu_to_le64(addr);
    w.sge.length = cpu_to_le32(len);
    w.sge.lkey = cpu_to_le32(lkey);
    qtest_memwrite(t->qts, sq + (idx & 15) * 64, &w, sizeof(w));
}

/* A SEND of @len bytes at @addr as WQE @idx. */
void qroce_post_send(QRoce *t, uint64_t sq, uint32_t idx, uint64_t addr,
                     uint32_t len, uint32_t lkey, uint8_t flags)
{
    struct qroce_send_wqe h = { .opcode = QROCE_WR_SEND, .flags = flags };

    qroce_put_send_wqe(t, sq, idx, &h, addr, len, lkey);
}

/* A RECV WQE of one SGE at index @idx of a ring of 2^@log2 32-byte WQEs. */
void qroce_put_recv(QRoce *t, uint64_t ring, uint8_t log2, uint32_t idx,
                    uint64_t addr, uint32_t len, uint32_t lkey)
{
    struct {
        struct qroce_recv_wqe h;
        struct qroce_sge sge;
    } w = {};

    w.h.num_sge = 1;
    w.h.srq_tag = cpu_to_le32(idx);     /* an SRQ's CQE names it */
    w.sge.addr = cpu_to_le64(addr);
    w.sge.length = cpu_to_le32(len);
    w.sge.lkey = cpu_to_le32(lkey);
    qtest_memwrite(t->qts, ring + (idx & ((1u << log2) - 1)) * 32, &w,
                   sizeof(w));
}

/* A RECV WQE at index @idx of a 16-entry RQ. */
void qroce_post_recv(QRoce *t, uint64_t rq, uint32_t idx, uint64_t addr,
                     uint32_t len, uint32_t lkey)
{
    qroce_put_recv(t, rq, 4, idx, addr, len, lkey);
}

/* A UD SEND with immediate 0xabcd0000 | @idx, to QP @dqpn through @ahn. */
void qroce_post_ud(QRoce *t, uint64_t sq, uint32_t idx, uint32_t ahn,
                   uint32_t dqpn, uint32_t qkey, uint64_t addr, uint32_t len,
                   uint32_t lkey)
{
    struct qroce_send_wqe h = {
        .opcode = QROCE_WR_SEND_IMM,
        .flags = QROCE_WQE_SIGNALED,
    };

    stl_be_p(&h.imm_data, 0xabcd0000 | idx);
    h.ud.ahn = cpu_to_le32(ahn);
    h.ud.remote_qpn = cpu_to_le32(dqpn);
    h.ud.remote_qkey = cpu_to_le32(qkey);
    qroce_put_send_wqe(t, sq, idx, &h, addr, len, lkey);
}

/* ---- an environment of QPs with CQs of their own ---- */

void qroce_env_setup(QRoceEnv *e, QRoce *t)
{
    e->t = t;
    e->pdn = qroce_base_setup(t);
    qroce_set_gid0(t);
    e->buf = qroce_pages(t, 4);
    e->key = qroce_mk_mr(t, e->pdn, e->buf, 4, QROCE_ACCESS_LOCAL_WRITE |
                         QROCE_ACCESS_REMOTE_WRITE |
                         QROCE_ACCESS_REMOTE_READ);
}

/* A QP of @type on @pdn with a 64-entry CQ of its own. */
void qroce_env_qp(QRoceEnv *e, uint8_t type, uint32_t pdn, QRoceQP *q)
{
    memset(q, 0, sizeof(*q));
    q->cqn = qroce_mk_cq_ring(e->t, 1, 6, &q->cq);
    g_assert_cmpuint(qroce_mk_qp_rings(e->t, type, pdn, q->cqn, q->cqn, 0,
                                       &q->qpn, &q->sq, &q->rq), ==, 0);
}

/* A connected RC pair; B's RNR NAKs ask for @b_rnr_timer. */
void qroce_env_pair(QRoceEnv *e, QRoceQP *a, QRoceQP *b, uint8_t b_rnr_timer)
{
    qroce_env_qp(e, QROCE_QPT_RC, e->pdn, a);
    qroce_env_qp(e, QROCE_QPT_RC, e->pdn, b);
    qroce_rc_connect_ex(e->t, a->qpn, b->qpn, 100, 200, 1, 14, 7);
    qroce_rc_connect_ex(e->t, b->qpn, a->qpn, 200, 100, b_rnr_timer, 14, 7);
}

/* A lone RC QP of @pdn in RTS (connected to itself: it sends nothing). */
void qroce_env_lone(QRoceEnv *e, uint32_t pdn, QRoceQP *q)
{
    qroce_env_qp(e, QROCE_QPT_RC, pdn, q);
    qroce_rc_connect_ex(e->t, q->qpn, q->qpn, 100, 100, 1, 14, 7);
}

/* The SQ doorbell: every WQE put so far. */
void qroce_env_ring(QRoceEnv *e, QRoceQP *q)
{
    qroce_db(e->t, QROCE_DB_SQ, q->qpn, q->sqi);
}

/* WQE @h at the next SQ slot, with one SGE if @lkey is not 0. */
void qroce_env_put(QRoceEnv *e, QRoceQP *q, const struct qroce_send_wqe *h,
                   uint64_t addr, uint32_t len, uint32_t lkey)
{
    if (lkey) {
        qroce_put_send_wqe(e->t, q->sq, q->sqi, h, addr, len, lkey);
    } else {
        qtest_memwrite(e->t->qts, q->sq + (q->sqi & 15) * 64, h, sizeof(*h));
    }
    q->sqi++;
}

/* A REG_MR WQE (fast registration) of @key. */
void qroce_env_put_reg(QRoceEnv *e, QRoceQP *q, uint32_t key, uint64_t iova,
                       uint64_t pbl, uint32_t len, uint16_t npages,
                       uint8_t shift, uint32_t access)
{
    struct qroce_send_wqe h = { .opcode = QROCE_WR_REG_MR,
                                .flags = QROCE_WQE_SIGNALED };

    h.reg.iova = cpu_to_le64(iova);
    h.reg.pbl_addr = cpu_to_le64(pbl);
    h.reg.length = cpu_to_le32(len);
    h.reg.key = cpu_to_le32(key);
    h.reg.access = cpu_to_le32(access);
    h.reg.npages = cpu_to_le16(npages);
    h.reg.page_shift = shift;
    qroce_env_put(e, q, &h, 0, 0, 0);
}

/* LOCAL_INV, or SEND_INV of @len bytes of buf, of @key. */
void qroce_env_put_inv(QRoceEnv *e, QRoceQP *q, uint8_t opcode, uint32_t key,
                       uint32_t len)
{
    struct qroce_send_wqe h = { .opcode = opcode,
                                .flags = QROCE_WQE_SIGNALED };

    h.imm_data = cpu_to_le32(key);
    qroce_env_put(e, q, &h, e->buf, len,
                  opcode == QROCE_WR_SEND_INV ? e->key : 0);
}

/* An RDMA WRITE or READ of @len bytes at @laddr (in buf's MR). */
void qroce_env_put_rdma(QRoceEnv *e, QRoceQP *q, uint8_t opcode,
                        uint64_t raddr, uint32_t rkey, uint64_t laddr,
                        uint32_t len)
{
    struct qroce_send_wqe h = { .opcode = opcode,
                                .flags = QROCE_WQE_SIGNALED };

    h.rdma.remote_addr = cpu_to_le64(raddr);
    h.rdma.rkey = cpu_to_le32(rkey);
    qroce_env_put(e, q, &h, laddr, len, e->key);
}

/* The next CQE of @q: its status, and its opcode if it succeeded. */
void qroce_env_cqe(QRoceEnv *e, QRoceQP *q, uint8_t opcode, uint8_t status,
                   struct qroce_cqe *cqe)
{
    struct qroce_cqe c;

    cqe = cqe ? cqe : &c;
    qroce_wait_cqe(e->t, q->cq, q->ci++, cqe);
    g_assert_cmpuint(le32_to_cpu(cqe->qpn), ==, q->qpn);
    g_assert_cmpuint(cqe->status, ==, status);
    if (status == QROCE_WC_SUCCESS) {
        g_assert_cmphex(cqe->opcode, ==, opcode);
    }
}

/*
 * Run what was posted on @q: a CQE with @status, the QP in ERR, the
 * device still answering commands.
 */
void qroce_env_expect_err(QRoceEnv *e, QRoceQP *q, uint8_t status)
{
    qroce_env_ring(e, q);
    qroce_env_cqe(e, q, 0, status, NULL);
    g_assert_cmpuint(qroce_qp_state(e->t, q->qpn), ==, QROCE_QPS_ERR);
    g_assert_cmpuint(qroce_cmd_simple(e->t, QROCE_CMD_NOP, 0, NULL), ==, 0);
    g_assert_cmphex(qroce_rd(e->t, QROCE_REG_STATUS), ==, QROCE_STATUS_READY);
}

/* A signaled SEND of @len bytes of buf, rung at once. */
void qroce_env_send(QRoceEnv *e, QRoceQP *q, uint32_t len)
{
    struct qroce_send_wqe h = { .opcode = QROCE_WR_SEND,
                                .flags = QROCE_WQE_SIGNALED };

    qroce_env_put(e, q, &h, e->buf, len, e->key);
    qroce_env_ring(e, q);
}

/* RECV WQE @idx (4 KiB at buf + 8 KiB), rung at once. */
void qroce_env_recv(QRoceEnv *e, QRoceQP *q, uint32_t idx)
{
    qroce_post_recv(e->t, q->rq, idx, e->buf + 8192, 4096, e->key);
    qroce_db(e->t, QROCE_DB_RQ, q->qpn, idx + 1);
}

/* ---- the peer on the wire ---- */

/* A UDP socket on the loopback, at a free port (in *@port). */
int qroce_udp_socket(uint16_t *port)
{
    struct sockaddr_in a = { .sin_family = AF_INET };
    socklen_t len = sizeof(a);
    int fd = socket(AF_INET, SOCK_DGRAM, 0);

    g_assert_cmpint(fd, >=, 0);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    g_assert_cmpint(bind(fd, (struct sockaddr *)&a, sizeof(a)), ==, 0);
    g_assert_cmpint(getsockname(fd, (struct sockaddr *)&a, &len), ==, 0);
    *port = ntohs(a.sin_port);
    return fd;
}

/*
 * A QRoceCase's prepare: the peer's socket in t->peer and a free port for
 * QEMU's end; the arguments that put the device on a -netdev dgram
 * between them.
 */
char *qroce_peer_prepare(QRoce *t)
{
    static const uint8_t mac[6] = { 0x52, 0x54, 0x00, 0xaa, 0xbb, 0xcc };
    struct timeval tv = { .tv_sec = 10 };
    uint16_t myport, qport;
    int tmp = qroce_udp_socket(&qport);
    QRocePeer *pr = &t->peer;

    memset(pr, 0, sizeof(*pr));
    pr->qemu_fd = -1;
    memcpy(pr->mac, mac, 6);
    close(tmp);                 /* a free port for QEMU's end */
    pr->fd = qroce_udp_socket(&myport);
    setsockopt(pr->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    pr->qemu = (struct sockaddr_in){ .sin_family = AF_INET,
                                     .sin_port = htons(qport),
                                     .sin_addr.s_addr =
                                         htonl(INADDR_LOOPBACK) };
    pr->gid[10] = pr->gid[11] = 0xff;
    memcpy(pr->dev_gid, pr->gid, 16);
    pr->gid[12] = 10;
    pr->gid[15] = 2;            /* 10.0.0.2 */
    pr->dev_gid[12] = 10;
    pr->dev_gid[15] = 1;        /* 10.0.0.1, the device's GID 0 */
    return g_strdup_printf("-netdev dgram,id=n0,local.type=inet,"
                           "local.host=127.0.0.1,local.port=%u,"
                           "remote.type=inet,remote.host=127.0.0.1,"
                           "remote.port=%u -global qroce.netdev=n0",
                           qport, myport);
}

/* A packet from the peer to the device's QP @dqpn. */
void qroce_peer_out(QRocePeer *pr, RocePktOut *o, uint32_t dqpn,
                    uint32_t psn, uint8_t opcode)
{
    memset(o, 0, sizeof(*o));
    o->dmac = qroce_dev_mac;
    o->smac = pr->mac;
    o->sgid = pr->gid;
    o->dgid = pr->dev_gid;
    o->hop_limit = 64;
    o->sport = 0xc000;
    o->dqpn = dqpn;
    o->psn = psn;
    o->opcode = opcode;
}

/* The peer sends the @n bytes at @f as one frame. */
void qroce_peer_send_frame(QRocePeer *pr, const void *f, size_t n)
{
    g_assert_cmpint(sendto(pr->fd, f, n, 0, (struct sockaddr *)&pr->qemu,
                           sizeof(pr->qemu)), ==, n);
}

/* Send a frame with @len bytes of payload (0x5a); @bad_csum spoils IPv4. */
void qroce_peer_send(QRocePeer *pr, RocePktOut *o, uint32_t len,
                     bool bad_csum)
{
    uint8_t f[2048];
    size_t n;

    memset(f + roce_hdr_len(o->opcode, false), 0x5a, len);
    n = roce_build(f, o, len);
    if (bad_csum) {
        f[ROCE_ETH_HLEN + 10] ^= 0x55;
    }
    qroce_peer_send_frame(pr, f, n);
}

/* The next RoCE frame from the device (within 10 s). */
void qroce_peer_recv(QRocePeer *pr, uint8_t *f, RocePktIn *p)
{
    for (;;) {
        ssize_t n = recv(pr->fd, f, 2048, 0);

        g_assert_cmpint(n, >, 0);
        if (roce_parse(f, n, p) == 0) {
            return;
        }
    }
}

/* The address of the peer: 10.0.0.2 at its MAC. */
void qroce_peer_av(QRocePeer *pr, struct qroce_av *av)
{
    memset(av, 0, sizeof(*av));
    memcpy(av->dgid, pr->gid, 16);
    memcpy(av->dmac, pr->mac, 6);
    av->hop_limit = 64;
    av->net_type = QROCE_NET_IPV4;
}

/*
 * An RC QP to RTS towards the peer's QP @dqpn: PSNs 2000 out, 1000 in,
 * remote read too, one READ or atomic in flight each way.
 */
void qroce_peer_connect(QRoce *t, QRocePeer *pr, uint32_t qpn,
                        uint32_t dqpn)
{
    struct qroce_av av;

    qroce_peer_av(pr, &av);
    qroce_rc_connect_av(t, qpn, dqpn, &av, 2000, 1000, 0, 14, 7);
}

/*
 * An RC QP with rings of its own (*@sq, *@rq) on CQ @cqn, connected to
 * the peer's QP @dqpn by qroce_peer_connect(): its number.
 */
uint32_t qroce_peer_qp(QRoce *t, QRocePeer *pr, uint32_t pdn, uint32_t cqn,
                       uint32_t dqpn, uint64_t *sq, uint64_t *rq)
{
    uint32_t qpn;

    g_assert_cmpuint(qroce_mk_qp_rings(t, QROCE_QPT_RC, pdn, cqn, cqn, 0,
                                       &qpn, sq, rq), ==, 0);
    qroce_peer_connect(t, pr, qpn, dqpn);
    return qpn;
}

/* ---- the Ethernet function's rings ---- */

uint16_t qroce_eth_desc_flags(QRoce *t, uint64_t ring, unsigned i)
{
    struct qroce_eth_desc d;

    qtest_memread(t->qts, ring + i * sizeof(d), &d, sizeof(d));
    return le16_to_cpu(d.flags);
}

void qroce_eth_put_desc(QRoce *t, uint64_t ring, unsigned i, uint64_t addr,
                        uint16_t len)
{
    struct qroce_eth_desc d = { cpu_to_le64(addr), cpu_to_le16(len), 0, 0 };

    qtest_memwrite(t->qts, ring + i * sizeof(d), &d, sizeof(d));
}

/* ---- the device's properties (qom-set, qom-get) ---- */

/* qom-set of @val (its reference is taken): true if QEMU accepted it */
bool qroce_qom_set(QRoce *t, const char *prop, QObject *val)
{
    QDict *rsp = qtest_qmp(t->qts, "{'execute': 'qom-set', 'arguments': {"
                           "'path': %s, 'property': %s, 'value': %p}}",
                           QROCE_PATH, prop, val);
    bool ok = qdict_haskey(rsp, "return");

    qobject_unref(rsp);
    return ok;
}

/* qom-get: the value, a reference the caller drops */
QObject *qroce_qom_get(QRoce *t, const char *prop)
{
    QDict *rsp = qtest_qmp(t->qts, "{'execute': 'qom-get', 'arguments': {"
                           "'path': %s, 'property': %s}}", QROCE_PATH, prop);
    QObject *v = qdict_get(rsp, "return");

    g_assert(v);
    qobject_ref(v);
    qobject_unref(rsp);
    return v;
}

void qroce_qom_set_int(QRoce *t, const char *prop, int64_t val)
{
    g_assert(qroce_qom_set(t, prop, QOBJECT(qnum_from_int(val))));
}

void qroce_qom_set_bool(QRoce *t, const char *prop, bool val)
{
    g_assert(qroce_qom_set(t, prop, QOBJECT(qbool_from_bool(val))));
}

bool qroce_qom_set_str(QRoce *t, const char *prop, const char *val)
{
    return qroce_qom_set(t, prop, QOBJECT(qstring_from_str(val)));
}

int64_t qroce_qom_get_int(QRoce *t, const char *prop)
{
    QObject *o = qroce_qom_get(t, prop);
    int64_t v = qnum_get_int(qobject_to(QNum, o));

    qobject_unref(o);
    return v;
}

bool qroce_qom_get_bool(QRoce *t, const char *prop)
{
    QObject *o = qroce_qom_get(t, prop);
    bool v = qbool_get_bool(qobject_to(QBool, o));

    qobject_unref(o);
    return v;
}

char *qroce_qom_get_str(QRoce *t, const char *prop)
{
    QObject *o = qroce_qom_get(t, prop);
    char *v = g_strdup(qstring_get_str(qobject_to(QString, o)));

    qobject_unref(o);
    return v;
}
