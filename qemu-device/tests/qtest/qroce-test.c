/*
 * qtests for the qroce device: the register file, reset and enable, the
 * command queue and its error statuses, the QP state machine per QP type,
 * SRQ objects, doorbell checks, the Ethernet function through a -netdev
 * dgram whose other end is this test, and garbage writes to every register
 * and doorbell.  No guest OS: the test drives the BARs and guest
 * memory directly.  It includes the same hardware header as the device.
 *
 * The tests run on the libqos graph (libqos/qroce.c, the "qroce" node on
 * a PCI bus), in qos-test: qos-test starts a QEMU with the device for each
 * test, with the extra arguments the test's entry in qroce_cases[] gives
 * (some are made just before, such as a socket the test talks through),
 * and start() takes that device over.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "libqtest.h"
#include "qobject/qdict.h"
#include "qobject/qlist.h"
#include "qobject/qjson.h"
#include "qobject/qnum.h"
#include "qobject/qbool.h"
#include "qobject/qstring.h"
#include "qapi/error.h"
#include "hw/pci/pci_regs.h"
#include "libqos/qgraph.h"
#include "libqos/qroce.h"
#include "qroce_hw.h"
/* the device's wire codec, on its own, to build and parse a peer's frames */
#define ROCE_WIRE_STANDALONE
#include "../../hw/net/qroce/roce_wire.c"

typedef struct QRoceTest {
    QTestState *qts;
    QGuestAllocator *alloc;
    QPCIBus *bus;
    QPCIDevice *dev;
    QPCIBar regs, db;
    uint64_t cmdq, comp;
    uint32_t pi;
    uint64_t msi;           /* where MSI-X vector 0 writes its message */
} QRoceTest;

/* The message of MSI-X vector 0 (command completions, async events). */
#define MSI_DATA 0x51c0

#define CMDQ_LOG2 4

/* The graph test running now: its device and allocator, its arguments. */
static QRocePCI *g_node;
static QGuestAllocator *g_alloc;
static char *g_extra;

/*
 * Take over the device qos-test started, which had @extra on its command
 * line (qroce_before() put it there), and enable it as a driver would.
 */
static void start(QRoceTest *t, const char *extra)
{
    g_assert(g_node);
    g_assert_cmpstr(extra, ==, g_extra);
    memset(t, 0, sizeof(*t));
    t->dev = &g_node->dev;
    t->bus = t->dev->bus;
    t->qts = t->bus->qts;
    t->alloc = g_alloc;
    t->regs = qpci_iomap(t->dev, QROCE_BAR_REGS, NULL);
    t->db = qpci_iomap(t->dev, QROCE_BAR_DB, NULL);
    qpci_device_enable(t->dev);
    qpci_msix_enable(t->dev);
}

/*
 * Point MSI-X vector 0 at a word of guest memory and unmask it: the
 * device's message lands there, as it would reach a driver's handler.
 */
static void msix_setup(QRoceTest *t)
{
    uint64_t off = t->dev->msix_table_off;
    QPCIBar bar = t->dev->msix_table_bar;
    uint32_t ctrl;

    t->msi = guest_alloc(t->alloc, 4);
    qtest_writel(t->qts, t->msi, 0);
    qpci_io_writel(t->dev, bar, off + PCI_MSIX_ENTRY_LOWER_ADDR, t->msi);
    qpci_io_writel(t->dev, bar, off + PCI_MSIX_ENTRY_UPPER_ADDR,
                   t->msi >> 32);
    qpci_io_writel(t->dev, bar, off + PCI_MSIX_ENTRY_DATA, MSI_DATA);
    ctrl = qpci_io_readl(t->dev, bar, off + PCI_MSIX_ENTRY_VECTOR_CTRL);
    qpci_io_writel(t->dev, bar, off + PCI_MSIX_ENTRY_VECTOR_CTRL,
                   ctrl & ~PCI_MSIX_ENTRY_CTRL_MASKBIT);
}

/* Wait for vector 0's message, as a driver waits for its interrupt. */
static bool msix_wait(QRoceTest *t)
{
    int i;

    for (i = 0; i < 10000; i++) {
        if (qtest_readl(t->qts, t->msi) == MSI_DATA) {
            qtest_writel(t->qts, t->msi, 0);
            return true;
        }
    }
    return false;
}

/* The device goes back to qos-test, which ends that QEMU. */
static void stop(QRoceTest *t)
{
    qpci_msix_disable(t->dev);
    qpci_iounmap(t->dev, t->regs);
    qpci_iounmap(t->dev, t->db);
}

static uint32_t rd(QRoceTest *t, uint32_t reg)
{
    return qpci_io_readl(t->dev, t->regs, reg);
}

static void wr(QRoceTest *t, uint32_t reg, uint32_t val)
{
    qpci_io_writel(t->dev, t->regs, reg, val);
}

/* Reset, program a command queue, enable; the device must be READY. */
static void enable(QRoceTest *t)
{
    wr(t, QROCE_REG_CTRL, QROCE_CTRL_RESET);
    g_assert_cmphex(rd(t, QROCE_REG_STATUS), ==, 0);
    /* guest_alloc is not page aligned: take a page more and align */
    t->cmdq = guest_alloc(t->alloc, 8192);
    t->cmdq = QEMU_ALIGN_UP(t->cmdq, 4096);
    t->comp = guest_alloc(t->alloc, 8192);
    t->comp = QEMU_ALIGN_UP(t->comp, 4096);
    qtest_memset(t->qts, t->comp, 0, QROCE_CMD_COMP_SIZE << CMDQ_LOG2);
    t->pi = 0;
    msix_setup(t);
    wr(t, QROCE_REG_CMDQ_BASE_LO, t->cmdq);
    wr(t, QROCE_REG_CMDQ_BASE_HI, t->cmdq >> 32);
    wr(t, QROCE_REG_CMDQ_CQ_LO, t->comp);
    wr(t, QROCE_REG_CMDQ_CQ_HI, t->comp >> 32);
    wr(t, QROCE_REG_CMDQ_LOG2, CMDQ_LOG2);
    wr(t, QROCE_REG_CTRL, QROCE_CTRL_ENABLE);
    g_assert_cmphex(rd(t, QROCE_REG_STATUS) & QROCE_STATUS_READY, ==,
                    QROCE_STATUS_READY);
}

/* Post one command, wait for its completion; return its status. */
static int cmd(QRoceTest *t, struct qroce_cmd *c, uint32_t *out)
{
    uint32_t slot = t->pi & ((1u << CMDQ_LOG2) - 1);
    uint64_t caddr = t->comp + slot * QROCE_CMD_COMP_SIZE;
    struct qroce_cmd_comp comp;
    int i;

    c->hdr.cookie = cpu_to_le32(0x1000 + t->pi);
    qtest_memwrite(t->qts, t->cmdq + slot * QROCE_CMD_SIZE, c, sizeof(*c));
    t->pi++;
    wr(t, QROCE_REG_CMDQ_PI, t->pi);
    /*
     * Sleep on the interrupt, then look at the completion, as the driver
     * does; vector 0 also carries async events, so a message may come
     * for something else: wait again then.
     */
    for (i = 0; i < 100; i++) {
        g_assert(msix_wait(t));
        qtest_memread(t->qts, caddr, &comp, sizeof(comp));
        if ((comp.owner & QROCE_OWNER_BIT) ==
            qroce_owner_for(t->pi - 1, CMDQ_LOG2)) {
            break;
        }
    }
    g_assert_cmpint(i, <, 100);
    g_assert_cmphex(le32_to_cpu(comp.cookie), ==, 0x1000 + t->pi - 1);
    g_assert_cmpint(comp.opcode, ==, c->hdr.opcode);
    g_assert_cmpuint(rd(t, QROCE_REG_CMDQ_CI), ==, t->pi);
    if (out) {
        for (i = 0; i < 6; i++) {
            out[i] = le32_to_cpu(comp.out[i]);
        }
    }
    return comp.status;
}

static int simple(QRoceTest *t, uint8_t op, uint32_t handle, uint32_t *out)
{
    struct qroce_cmd c = { .hdr.opcode = op };

    c.handle.handle = cpu_to_le32(handle);
    return cmd(t, &c, out);
}

static uint64_t page(QRoceTest *t, unsigned n)
{
    uint64_t a = guest_alloc(t->alloc, (n + 1) * 4096);

    a = QEMU_ALIGN_UP(a, 4096);
    qtest_memset(t->qts, a, 0, n * 4096);
    return a;
}

static void test_registers(void)
{
    QRoceTest t;

    start(&t, "");
    g_assert_cmphex(rd(&t, QROCE_REG_MAGIC), ==, QROCE_MAGIC_VALUE);
    g_assert_cmpuint(rd(&t, QROCE_REG_VERSION), ==, QROCE_SPEC_VERSION);
    g_assert_true(rd(&t, QROCE_REG_FEATURES) & QROCE_FEAT_RC);
    g_assert_cmphex(rd(&t, QROCE_REG_MAC_LO), ==, 0x12005452);
    g_assert_cmphex(rd(&t, QROCE_REG_MAC_HI), ==, 0x5634);
    g_assert_cmpuint(rd(&t, QROCE_REG_CAP_MAX_QP), ==, QROCE_DEF_MAX_QP);
    g_assert_cmpuint(rd(&t, QROCE_REG_CAP_MAX_SGE), ==, QROCE_MAX_SGE);
    g_assert_cmphex(rd(&t, QROCE_REG_CAP_PAGE_SIZES), ==, 0x3ff000);
    g_assert_cmpuint(rd(&t, QROCE_REG_CAP_MAX_GID), ==, QROCE_DEF_MAX_GID);
    g_assert_cmpuint(rd(&t, QROCE_REG_CAP_LINK_MBPS), ==, 100000);
    /* no netdev: link down */
    g_assert_cmphex(rd(&t, QROCE_REG_PORT_STATUS) & QROCE_PORT_LINK_UP, ==, 0);
    /* read-only and unknown registers ignore writes */
    wr(&t, QROCE_REG_MAGIC, 0xdeadbeef);
    g_assert_cmphex(rd(&t, QROCE_REG_MAGIC), ==, QROCE_MAGIC_VALUE);
    wr(&t, QROCE_REG_CAP_MAX_QP, 7);
    g_assert_cmpuint(rd(&t, QROCE_REG_CAP_MAX_QP), ==, QROCE_DEF_MAX_QP);
    wr(&t, 0x3ffc, 0x12345678);
    g_assert_cmphex(rd(&t, 0x3ffc), ==, 0);
    /* MTU: in range accepted, out of range ignored */
    wr(&t, QROCE_REG_ETH_MTU, 4200);
    g_assert_cmpuint(rd(&t, QROCE_REG_ETH_MTU), ==, 4200);
    wr(&t, QROCE_REG_ETH_MTU, 9001);
    g_assert_cmpuint(rd(&t, QROCE_REG_ETH_MTU), ==, 4200);
    stop(&t);
}

static void test_reset_enable(void)
{
    QRoceTest t;

    start(&t, "");
    /* ENABLE with no command queue configured: FATAL, code 2 */
    wr(&t, QROCE_REG_CTRL, QROCE_CTRL_ENABLE);
    g_assert_cmphex(rd(&t, QROCE_REG_STATUS), ==, QROCE_STATUS_FATAL);
    g_assert_cmpuint(rd(&t, QROCE_REG_FATAL_CODE), ==,
                     QROCE_FATAL_CMDQ_CONFIG);
    /* RESET clears it; a proper configuration gets READY */
    enable(&t);
    g_assert_cmpuint(simple(&t, QROCE_CMD_NOP, 0, NULL), ==, QROCE_CMD_OK);
    /* RESET again drops READY and the ring configuration */
    wr(&t, QROCE_REG_CTRL, QROCE_CTRL_RESET);
    g_assert_cmphex(rd(&t, QROCE_REG_STATUS), ==, 0);
    g_assert_cmphex(rd(&t, QROCE_REG_CMDQ_BASE_LO), ==, 0);
    g_assert_cmpuint(rd(&t, QROCE_REG_CMDQ_CI), ==, 0);
    stop(&t);
}

static void test_commands(void)
{
    QRoceTest t;
    struct qroce_cmd c;
    uint32_t out[6], pdn, cqn, qpn, key;
    uint64_t eqring, cqring, sq, rq, buf;

    start(&t, "");
    enable(&t);

    memset(&c, 0, sizeof(c));
    c.hdr.opcode = 0x7f;
    g_assert_cmpuint(cmd(&t, &c, NULL), ==, QROCE_CMD_ERR_OPCODE);
    memset(&c, 0, sizeof(c));
    c.hdr.opcode = QROCE_CMD_NOP;
    c.hdr.flags = 1;
    g_assert_cmpuint(cmd(&t, &c, NULL), ==, QROCE_CMD_ERR_PARAM);

    /* PD */
    g_assert_cmpuint(simple(&t, QROCE_CMD_ALLOC_PD, 0, out), ==, 0);
    pdn = out[0];
    g_assert_cmpuint(pdn, >, 0);
    g_assert_cmpuint(simple(&t, QROCE_CMD_DEALLOC_PD, 999, NULL), ==,
                     QROCE_CMD_ERR_HANDLE);
    g_assert_cmpuint(simple(&t, QROCE_CMD_DEALLOC_PD, 1u << 30, NULL), ==,
                     QROCE_CMD_ERR_HANDLE);

    /* EQ: size out of range, then a good one */
    eqring = page(&t, 1);
    memset(&c, 0, sizeof(c));
    c.hdr.opcode = QROCE_CMD_CREATE_EQ;
    c.create_eq.eqn = cpu_to_le32(1);
    c.create_eq.log2_entries = 2;
    c.create_eq.ring.addr = cpu_to_le64(eqring);
    c.create_eq.ring.npages = cpu_to_le32(1);
    c.create_eq.ring.page_shift = 12;
    c.create_eq.ring.level = QROCE_BT_CONTIG;
    g_assert_cmpuint(cmd(&t, &c, NULL), ==, QROCE_CMD_ERR_PARAM);
    c.create_eq.log2_entries = 8;
    g_assert_cmpuint(cmd(&t, &c, NULL), ==, QROCE_CMD_OK);
    g_assert_cmpuint(cmd(&t, &c, NULL), ==, QROCE_CMD_ERR_BUSY);

    /* CQ: a ring too small for its entries, a misaligned page, then OK */
    cqring = page(&t, 2);
    memset(&c, 0, sizeof(c));
    c.hdr.opcode = QROCE_CMD_CREATE_CQ;
    c.create_cq.eqn = cpu_to_le32(1);
    c.create_cq.log2_entries = 8;     /* 8 KiB + 64 B: needs 3 pages */
    c.create_cq.ring.addr = cpu_to_le64(cqring);
    c.create_cq.ring.npages = cpu_to_le32(2);
    c.create_cq.ring.page_shift = 12;
    c.create_cq.ring.level = QROCE_BT_CONTIG;
    g_assert_cmpuint(cmd(&t, &c, NULL), ==, QROCE_CMD_ERR_PARAM);
    c.create_cq.log2_entries = 6;     /* 2 KiB + 64 B: one page, exactly */
    c.create_cq.ring.npages = cpu_to_le32(2);
    g_assert_cmpuint(cmd(&t, &c, NULL), ==, QROCE_CMD_ERR_PARAM);
    c.create_cq.ring.npages = cpu_to_le32(1);
    c.create_cq.ring.addr = cpu_to_le64(cqring + 8);
    g_assert_cmpuint(cmd(&t, &c, NULL), ==, QROCE_CMD_ERR_PARAM);
    c.create_cq.ring.addr = cpu_to_le64(cqring);
    c.create_cq.eqn = cpu_to_le32(3);  /* no such EQ */
    g_assert_cmpuint(cmd(&t, &c, NULL), ==, QROCE_CMD_ERR_HANDLE);
    c.create_cq.eqn = cpu_to_le32(1);
    g_assert_cmpuint(cmd(&t, &c, out), ==, QROCE_CMD_OK);
    cqn = out[0];

    /* QP: bad PD, then OK; its state machine */
    sq = page(&t, 1);
    rq = page(&t, 1);
    memset(&c, 0, sizeof(c));
    c.hdr.opcode = QROCE_CMD_CREATE_QP;
    c.create_qp.pdn = cpu_to_le32(pdn + 100);
    c.create_qp.send_cqn = cpu_to_le32(cqn);
    c.create_qp.recv_cqn = cpu_to_le32(cqn);
    c.create_qp.type = QROCE_QPT_RC;
    c.create_qp.sq_log2_entries = 6;
    c.create_qp.sq_wqe_shift = 6;
    c.create_qp.rq_log2_entries = 7;
    c.create_qp.rq_wqe_shift = 5;
    c.create_qp.sq = (struct qroce_bt){ cpu_to_le64(sq), cpu_to_le32(1), 12,
                                        QROCE_BT_CONTIG, 0 };
    c.create_qp.rq = (struct qroce_bt){ cpu_to_le64(rq), cpu_to_le32(1), 12,
                                        QROCE_BT_CONTIG, 0 };
    g_assert_cmpuint(cmd(&t, &c, NULL), ==, QROCE_CMD_ERR_HANDLE);
    c.create_qp.pdn = cpu_to_le32(pdn);
    c.create_qp.sq_wqe_shift = 11;
    g_assert_cmpuint(cmd(&t, &c, NULL), ==, QROCE_CMD_ERR_PARAM);
    c.create_qp.sq_wqe_shift = 6;
    g_assert_cmpuint(cmd(&t, &c, out), ==, QROCE_CMD_OK);
    qpn = out[0];
    g_assert_cmpuint(qpn, >=, 2);
    g_assert_cmpuint(simple(&t, QROCE_CMD_DESTROY_CQ, cqn, NULL), ==,
                     QROCE_CMD_ERR_BUSY);

    memset(&c, 0, sizeof(c));
    c.hdr.opcode = QROCE_CMD_MODIFY_QP;
    c.modify_qp.qpn = cpu_to_le32(qpn);
    c.modify_qp.attr_mask = cpu_to_le32(QROCE_QP_ATTR_STATE);
    c.modify_qp.new_state = QROCE_QPS_RTR;   /* RESET -> RTR: illegal */
    g_assert_cmpuint(cmd(&t, &c, NULL), ==, QROCE_CMD_ERR_STATE);
    c.modify_qp.new_state = QROCE_QPS_INIT;  /* required attrs missing */
    g_assert_cmpuint(cmd(&t, &c, NULL), ==, QROCE_CMD_ERR_STATE);
    c.modify_qp.attr_mask = cpu_to_le32(QROCE_QP_ATTR_STATE |
                                        QROCE_QP_ATTR_PKEY_INDEX |
                                        QROCE_QP_ATTR_PORT |
                                        QROCE_QP_ATTR_ACCESS_FLAGS);
    c.modify_qp.access_flags = cpu_to_le32(0x100);   /* unknown flag */
    g_assert_cmpuint(cmd(&t, &c, NULL), ==, QROCE_CMD_ERR_PARAM);
    c.modify_qp.access_flags = cpu_to_le32(QROCE_ACCESS_REMOTE_WRITE);
    g_assert_cmpuint(cmd(&t, &c, NULL), ==, QROCE_CMD_OK);
    memset(&c, 0, sizeof(c));
    c.hdr.opcode = QROCE_CMD_QUERY_QP;
    c.qpn.qpn = cpu_to_le32(qpn);
    g_assert_cmpuint(cmd(&t, &c, out), ==, QROCE_CMD_OK);
    g_assert_cmpuint(out[0], ==, QROCE_QPS_INIT);
    /* INIT -> RTR needs an AV whose source GID exists: none is set */
    memset(&c, 0, sizeof(c));
    c.hdr.opcode = QROCE_CMD_MODIFY_QP;
    c.modify_qp.qpn = cpu_to_le32(qpn);
    c.modify_qp.attr_mask = cpu_to_le32(QROCE_QP_ATTR_STATE |
        QROCE_QP_ATTR_AV | QROCE_QP_ATTR_PATH_MTU | QROCE_QP_ATTR_DEST_QPN |
        QROCE_QP_ATTR_RQ_PSN | QROCE_QP_ATTR_MAX_DEST_RD_ATOMIC |
        QROCE_QP_ATTR_MIN_RNR_TIMER);
    c.modify_qp.new_state = QROCE_QPS_RTR;
    c.modify_qp.path_mtu = QROCE_MTU_4096;
    c.modify_qp.av.net_type = QROCE_NET_IPV4;
    g_assert_cmpuint(cmd(&t, &c, NULL), ==, QROCE_CMD_ERR_PARAM);
    memset(&c, 0, sizeof(c));
    c.hdr.opcode = QROCE_CMD_SET_GID;
    c.set_gid.type = QROCE_GID_ROCE_V2;
    c.set_gid.index = cpu_to_le32(QROCE_DEF_MAX_GID);
    g_assert_cmpuint(cmd(&t, &c, NULL), ==, QROCE_CMD_ERR_PARAM);
    c.set_gid.index = cpu_to_le32(1);
    c.set_gid.gid[10] = c.set_gid.gid[11] = 0xff;
    c.set_gid.gid[12] = 10;
    c.set_gid.gid[15] = 1;
    g_assert_cmpuint(cmd(&t, &c, NULL), ==, QROCE_CMD_OK);
    memset(&c, 0, sizeof(c));
    c.hdr.opcode = QROCE_CMD_MODIFY_QP;
    c.modify_qp.qpn = cpu_to_le32(qpn);
    c.modify_qp.attr_mask = cpu_to_le32(QROCE_QP_ATTR_STATE |
        QROCE_QP_ATTR_AV | QROCE_QP_ATTR_PATH_MTU | QROCE_QP_ATTR_DEST_QPN |
        QROCE_QP_ATTR_RQ_PSN);
    c.modify_qp.new_state = QROCE_QPS_RTR;
    c.modify_qp.path_mtu = QROCE_MTU_4096;
    c.modify_qp.av.net_type = QROCE_NET_IPV4;
    c.modify_qp.av.sgid_index = 1;
    /* RC also requires MAX_DEST_RD_ATOMIC and MIN_RNR_TIMER (UC does not) */
    g_assert_cmpuint(cmd(&t, &c, NULL), ==, QROCE_CMD_ERR_STATE);
    c.modify_qp.attr_mask = cpu_to_le32(QROCE_QP_ATTR_STATE |
        QROCE_QP_ATTR_AV | QROCE_QP_ATTR_PATH_MTU | QROCE_QP_ATTR_DEST_QPN |
        QROCE_QP_ATTR_RQ_PSN | QROCE_QP_ATTR_MAX_DEST_RD_ATOMIC |
        QROCE_QP_ATTR_MIN_RNR_TIMER);
    c.modify_qp.path_mtu = QROCE_MTU_4096 + 1;
    c.modify_qp.av.net_type = QROCE_NET_IPV4;
    c.modify_qp.av.sgid_index = 1;
    g_assert_cmpuint(cmd(&t, &c, NULL), ==, QROCE_CMD_ERR_PARAM);
    c.modify_qp.path_mtu = QROCE_MTU_4096;
    g_assert_cmpuint(cmd(&t, &c, NULL), ==, QROCE_CMD_OK);

    /* MR: inline page list; a PD with an MR is busy; keys go stale */
    buf = page(&t, 2);
    memset(&c, 0, sizeof(c));
    c.hdr.opcode = QROCE_CMD_REG_MR;
    c.reg_mr.pdn = cpu_to_le32(pdn);
    c.reg_mr.access = cpu_to_le32(QROCE_ACCESS_LOCAL_WRITE);
    c.reg_mr.iova = cpu_to_le64(0x7f0000001000ULL);
    c.reg_mr.length = cpu_to_le64(8192);
    c.reg_mr.pages = (struct qroce_bt){ 0, cpu_to_le32(2), 12,
                                        QROCE_BT_INLINE, 0 };
    c.reg_mr.inline_pages[0] = cpu_to_le64(buf);
    c.reg_mr.inline_pages[1] = cpu_to_le64(buf + 4096 + 8); /* misaligned */
    g_assert_cmpuint(cmd(&t, &c, NULL), ==, QROCE_CMD_ERR_PARAM);
    c.reg_mr.inline_pages[1] = cpu_to_le64(buf + 4096);
    c.reg_mr.length = cpu_to_le64(8193);                    /* too long */
    g_assert_cmpuint(cmd(&t, &c, NULL), ==, QROCE_CMD_ERR_PARAM);
    /* first_page_offset + length wraps around */
    c.reg_mr.iova = 0;
    c.reg_mr.first_page_offset = cpu_to_le32(0x800);
    c.reg_mr.length = cpu_to_le64(-0x400ULL);
    g_assert_cmpuint(cmd(&t, &c, NULL), ==, QROCE_CMD_ERR_PARAM);
    c.reg_mr.first_page_offset = cpu_to_le32(4096);        /* not < page */
    c.reg_mr.length = cpu_to_le64(4096);
    g_assert_cmpuint(cmd(&t, &c, NULL), ==, QROCE_CMD_ERR_PARAM);
    c.reg_mr.first_page_offset = 0;
    c.reg_mr.iova = cpu_to_le64(-0x1000ULL);                /* iova wraps */
    c.reg_mr.length = cpu_to_le64(8192);
    g_assert_cmpuint(cmd(&t, &c, NULL), ==, QROCE_CMD_ERR_PARAM);
    c.reg_mr.iova = cpu_to_le64(0x7f0000001000ULL);
    c.reg_mr.length = cpu_to_le64(8192);
    g_assert_cmpuint(cmd(&t, &c, out), ==, QROCE_CMD_OK);
    key = out[0];
    g_assert_cmpuint(simple(&t, QROCE_CMD_DEALLOC_PD, pdn, NULL), ==,
                     QROCE_CMD_ERR_BUSY);
    memset(&c, 0, sizeof(c));
    c.hdr.opcode = QROCE_CMD_DEREG_MR;
    c.key.key = cpu_to_le32(key);
    g_assert_cmpuint(cmd(&t, &c, NULL), ==, QROCE_CMD_OK);
    g_assert_cmpuint(cmd(&t, &c, NULL), ==, QROCE_CMD_ERR_HANDLE);

    /* AH: needs a valid source GID; GIDs can be deleted */
    memset(&c, 0, sizeof(c));
    c.hdr.opcode = QROCE_CMD_CREATE_AH;
    c.create_ah.pdn = cpu_to_le32(pdn);
    c.create_ah.av.net_type = QROCE_NET_IPV4;
    c.create_ah.av.sgid_index = 5;
    g_assert_cmpuint(cmd(&t, &c, NULL), ==, QROCE_CMD_ERR_PARAM);
    c.create_ah.av.sgid_index = 1;
    c.create_ah.av.net_type = 7;
    g_assert_cmpuint(cmd(&t, &c, NULL), ==, QROCE_CMD_ERR_PARAM);
    c.create_ah.av.net_type = QROCE_NET_IPV4;
    g_assert_cmpuint(cmd(&t, &c, out), ==, QROCE_CMD_OK);
    g_assert_cmpuint(simple(&t, QROCE_CMD_DESTROY_AH, out[0], NULL), ==, 0);
    g_assert_cmpuint(simple(&t, QROCE_CMD_DESTROY_AH, out[0], NULL), ==,
                     QROCE_CMD_ERR_HANDLE);
    g_assert_cmpuint(simple(&t, QROCE_CMD_DEL_GID, 1, NULL), ==, 0);
    g_assert_cmpuint(simple(&t, QROCE_CMD_DEL_GID, 1, NULL), ==,
                     QROCE_CMD_ERR_HANDLE);
    g_assert_cmpuint(simple(&t, QROCE_CMD_DEL_GID, 99, NULL), ==,
                     QROCE_CMD_ERR_PARAM);
    /* an EQ with CQs on it is busy */
    g_assert_cmpuint(simple(&t, QROCE_CMD_DESTROY_EQ, 1, NULL), ==,
                     QROCE_CMD_ERR_BUSY);
    g_assert_cmpuint(simple(&t, QROCE_CMD_DESTROY_EQ, 9, NULL), ==,
                     QROCE_CMD_ERR_HANDLE);

    /* tear down in order */
    memset(&c, 0, sizeof(c));
    c.hdr.opcode = QROCE_CMD_DESTROY_QP;
    c.qpn.qpn = cpu_to_le32(qpn);
    g_assert_cmpuint(cmd(&t, &c, NULL), ==, QROCE_CMD_OK);
    g_assert_cmpuint(cmd(&t, &c, NULL), ==, QROCE_CMD_ERR_HANDLE);
    g_assert_cmpuint(simple(&t, QROCE_CMD_DESTROY_CQ, cqn, NULL), ==, 0);
    g_assert_cmpuint(simple(&t, QROCE_CMD_DEALLOC_PD, pdn, NULL), ==, 0);
    g_assert_cmpuint(simple(&t, QROCE_CMD_DESTROY_EQ, 1, NULL), ==, 0);
    g_assert_cmpuint(rd(&t, QROCE_REG_CNT(QROCE_CNT_CMD_ERRS)), >=, 25);
    stop(&t);
}

static void test_garbage(void)
{
    QRoceTest t;
    GRand *r = g_rand_new_with_seed(0x51524f43);
    uint32_t off;
    int i;

    start(&t, "");
    enable(&t);
    /* every register offset, random values, twice over */
    for (i = 0; i < 2; i++) {
        for (off = 0; off < QROCE_REGS_SIZE; off += 4) {
            if (off == QROCE_REG_CTRL && i == 1) {
                continue;
            }
            wr(&t, off, g_rand_int(r));
        }
    }
    /* random 64-bit doorbells across the doorbell BAR */
    for (i = 0; i < 4096; i++) {
        uint64_t o = (g_rand_int(r) % QROCE_DB_BAR_SIZE) & ~7ull;

        qpci_io_writeq(t.dev, t.db, o, ((uint64_t)g_rand_int(r) << 32) |
                       g_rand_int_range(r, 0, 2048));
    }
    /* commands of random bytes */
    enable(&t);
    for (i = 0; i < 200; i++) {
        struct qroce_cmd c;
        int j;

        for (j = 0; j < sizeof(c); j++) {
            ((uint8_t *)&c)[j] = g_rand_int(r);
        }
        c.hdr.opcode %= QROCE_CMD_MAX + 2;
        cmd(&t, &c, NULL);
    }
    /* still alive: registers answer, a fresh queue serves a NOP */
    g_assert_cmphex(rd(&t, QROCE_REG_MAGIC), ==, QROCE_MAGIC_VALUE);
    enable(&t);
    g_assert_cmpuint(simple(&t, QROCE_CMD_NOP, 0, NULL), ==, QROCE_CMD_OK);
    g_rand_free(r);
    stop(&t);
}

/* ---- helpers for the QP, doorbell and Ethernet tests ---- */

static void mk_eq(QRoceTest *t, uint32_t eqn, uint64_t *ring)
{
    struct qroce_cmd c = { .hdr.opcode = QROCE_CMD_CREATE_EQ };

    *ring = page(t, 1);
    c.create_eq.eqn = cpu_to_le32(eqn);
    c.create_eq.log2_entries = 8;
    c.create_eq.ring = (struct qroce_bt){ cpu_to_le64(*ring), cpu_to_le32(1),
                                          12, QROCE_BT_CONTIG, 0 };
    g_assert_cmpuint(cmd(t, &c, NULL), ==, QROCE_CMD_OK);
}

static uint32_t mk_cq(QRoceTest *t, uint32_t eqn)
{
    struct qroce_cmd c = { .hdr.opcode = QROCE_CMD_CREATE_CQ };
    uint64_t ring = page(t, 1);
    uint32_t out[6];

    c.create_cq.eqn = cpu_to_le32(eqn);
    c.create_cq.log2_entries = 6;
    c.create_cq.ring = (struct qroce_bt){ cpu_to_le64(ring), cpu_to_le32(1),
                                          12, QROCE_BT_CONTIG, 0 };
    g_assert_cmpuint(cmd(t, &c, out), ==, QROCE_CMD_OK);
    return out[0];
}

/* SQ WQE stride of the QPs mk_qp_rings() makes: 2^6, or this when set */
static uint8_t sq_shift_override;
static uint8_t qp_flags_extra;     /* QROCE_CREATE_QP_* for the next QPs */

/* CREATE_QP with 16-entry rings of its own; their addresses in *sq, *rq. */
static int mk_qp_rings(QRoceTest *t, uint8_t type, uint32_t pdn,
                       uint32_t scqn, uint32_t rcqn, uint32_t uar,
                       uint32_t *qpn, uint64_t *sq, uint64_t *rq)
{
    struct qroce_cmd c = { .hdr.opcode = QROCE_CMD_CREATE_QP };
    uint32_t out[6] = {};
    int st;

    *sq = page(t, 1);
    *rq = page(t, 1);
    c.create_qp.pdn = cpu_to_le32(pdn);
    c.create_qp.send_cqn = cpu_to_le32(scqn);
    c.create_qp.recv_cqn = cpu_to_le32(rcqn);
    c.create_qp.uar = cpu_to_le32(uar);
    c.create_qp.type = type;
    c.create_qp.flags = qp_flags_extra;
    c.create_qp.sq_log2_entries = 4;
    c.create_qp.sq_wqe_shift = sq_shift_override ? sq_shift_override : 6;
    c.create_qp.rq_log2_entries = 4;
    c.create_qp.rq_wqe_shift = 5;
    c.create_qp.sq = (struct qroce_bt){ cpu_to_le64(*sq), cpu_to_le32(1), 12,
                                        QROCE_BT_CONTIG, 0 };
    c.create_qp.rq = (struct qroce_bt){ cpu_to_le64(*rq), cpu_to_le32(1), 12,
                                        QROCE_BT_CONTIG, 0 };
    st = cmd(t, &c, out);
    *qpn = out[0];
    return st;
}

static int mk_qp(QRoceTest *t, uint8_t type, uint32_t pdn, uint32_t cqn,
                 uint32_t uar, uint32_t *qpn)
{
    uint64_t sq, rq;

    return mk_qp_rings(t, type, pdn, cqn, cqn, uar, qpn, &sq, &rq);
}

/* REG_MR of @npages contiguous 4 KiB pages at @buf (iova = address). */
static uint32_t mk_mr(QRoceTest *t, uint32_t pdn, uint64_t buf,
                      uint32_t npages, uint32_t access)
{
    struct qroce_cmd c = { .hdr.opcode = QROCE_CMD_REG_MR };
    uint32_t out[6];

    c.reg_mr.pdn = cpu_to_le32(pdn);
    c.reg_mr.access = cpu_to_le32(access);
    c.reg_mr.iova = cpu_to_le64(buf);
    c.reg_mr.length = cpu_to_le64((uint64_t)npages << 12);
    c.reg_mr.pages = (struct qroce_bt){ cpu_to_le64(buf), cpu_to_le32(npages),
                                        12, QROCE_BT_CONTIG, 0 };
    g_assert_cmpuint(cmd(t, &c, out), ==, 0);
    return out[0];
}

/* MODIFY_QP with plausible values for every attribute named in @mask. */
static int modify(QRoceTest *t, uint32_t qpn, uint32_t mask, uint8_t state,
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
    return cmd(t, &c, NULL);
}

static uint32_t query_state(QRoceTest *t, uint32_t qpn)
{
    struct qroce_cmd c = { .hdr.opcode = QROCE_CMD_QUERY_QP };
    uint32_t out[6];

    c.qpn.qpn = cpu_to_le32(qpn);
    g_assert_cmpuint(cmd(t, &c, out), ==, QROCE_CMD_OK);
    return out[0];
}

static void set_gid0(QRoceTest *t)
{
    struct qroce_cmd c = { .hdr.opcode = QROCE_CMD_SET_GID };

    c.set_gid.type = QROCE_GID_ROCE_V2;
    c.set_gid.index = cpu_to_le32(0);
    c.set_gid.gid[10] = c.set_gid.gid[11] = 0xff;
    c.set_gid.gid[12] = 10;
    c.set_gid.gid[15] = 1;
    g_assert_cmpuint(cmd(t, &c, NULL), ==, QROCE_CMD_OK);
}

#define M(x) QROCE_QP_ATTR_##x
#define RC_INIT (M(STATE) | M(PKEY_INDEX) | M(PORT) | M(ACCESS_FLAGS))
#define RC_RTR  (M(STATE) | M(AV) | M(PATH_MTU) | M(DEST_QPN) | M(RQ_PSN) | \
                 M(MAX_DEST_RD_ATOMIC) | M(MIN_RNR_TIMER))
#define RC_RTS  (M(STATE) | M(TIMEOUT) | M(RETRY_CNT) | M(RNR_RETRY) | \
                 M(SQ_PSN) | M(MAX_QP_RD_ATOMIC))

/* The state machine, per QP type, as ib_modify_qp_is_ok() has it. */
static void test_qp_states(void)
{
    QRoceTest t;
    struct qroce_cmd c;
    uint64_t eq;
    uint32_t out[6], pdn, cqn, rc, uc, ud, gsi, x;

    start(&t, "");
    enable(&t);
    g_assert_cmpuint(simple(&t, QROCE_CMD_ALLOC_PD, 0, out), ==, 0);
    pdn = out[0];
    mk_eq(&t, 1, &eq);
    cqn = mk_cq(&t, 1);
    set_gid0(&t);
    g_assert_cmpuint(mk_qp(&t, QROCE_QPT_RC, pdn, cqn, 0, &rc), ==, 0);
    g_assert_cmpuint(mk_qp(&t, QROCE_QPT_UC, pdn, cqn, 0, &uc), ==, 0);
    g_assert_cmpuint(mk_qp(&t, QROCE_QPT_UD, pdn, cqn, 0, &ud), ==, 0);
    g_assert_cmpuint(mk_qp(&t, QROCE_QPT_GSI, pdn, cqn, 0, &gsi), ==, 0);
    g_assert_cmpuint(gsi, ==, 1);
    g_assert_cmpuint(mk_qp(&t, QROCE_QPT_GSI, pdn, cqn, 0, &x), ==,
                     QROCE_CMD_ERR_BUSY);
    g_assert_cmpuint(mk_qp(&t, 4, pdn, cqn, 0, &x), ==, QROCE_CMD_ERR_PARAM);
    g_assert_cmpuint(mk_qp(&t, QROCE_QPT_RC, pdn, cqn, QROCE_DB_PAGES, &x),
                     ==, QROCE_CMD_ERR_PARAM);
    /* a PD with QPs is busy */
    g_assert_cmpuint(simple(&t, QROCE_CMD_DEALLOC_PD, pdn, NULL), ==,
                     QROCE_CMD_ERR_BUSY);

    /* RC */
    g_assert_cmpuint(modify(&t, rc, M(STATE), QROCE_QPS_ERR, NULL), ==,
                     QROCE_CMD_ERR_STATE);           /* RESET -> ERR */
    g_assert_cmpuint(modify(&t, rc, M(STATE), QROCE_QPS_RESET, NULL), ==, 0);
    g_assert_cmpuint(modify(&t, rc, RC_INIT | M(QKEY), QROCE_QPS_INIT, NULL),
                     ==, QROCE_CMD_ERR_STATE);       /* QKEY is not RC's */
    g_assert_cmpuint(modify(&t, rc, RC_INIT & ~M(PORT), QROCE_QPS_INIT, NULL),
                     ==, QROCE_CMD_ERR_STATE);
    g_assert_cmpuint(modify(&t, rc, RC_INIT | M(CUR_STATE), QROCE_QPS_INIT,
                            NULL), ==, QROCE_CMD_ERR_STATE);
    g_assert_cmpuint(modify(&t, rc, 1u << 21 | RC_INIT, QROCE_QPS_INIT, NULL),
                     ==, QROCE_CMD_ERR_PARAM);       /* unknown attribute */
    g_assert_cmpuint(modify(&t, rc, RC_INIT, QROCE_QPS_INIT, NULL), ==, 0);
    g_assert_cmpuint(modify(&t, rc, M(STATE) | M(ACCESS_FLAGS),
                            QROCE_QPS_INIT, NULL), ==, 0);   /* INIT->INIT */
    g_assert_cmpuint(modify(&t, rc, RC_INIT, QROCE_QPS_RTS, NULL), ==,
                     QROCE_CMD_ERR_STATE);           /* INIT -> RTS */
    g_assert_cmpuint(modify(&t, rc, RC_RTR | M(TIMEOUT), QROCE_QPS_RTR, NULL),
                     ==, QROCE_CMD_ERR_STATE);       /* not allowed here */
    memset(&c, 0, sizeof(c));
    c.modify_qp.path_mtu = 6;
    c.modify_qp.av.net_type = QROCE_NET_IPV4;
    g_assert_cmpuint(modify(&t, rc, RC_RTR, QROCE_QPS_RTR, &c), ==,
                     QROCE_CMD_ERR_PARAM);           /* path MTU 8192 */
    c.modify_qp.path_mtu = QROCE_MTU_256;
    c.modify_qp.min_rnr_timer = 32;
    g_assert_cmpuint(modify(&t, rc, RC_RTR, QROCE_QPS_RTR, &c), ==,
                     QROCE_CMD_ERR_PARAM);
    c.modify_qp.min_rnr_timer = 0;
    c.modify_qp.rq_psn = cpu_to_le32(1u << 24);
    g_assert_cmpuint(modify(&t, rc, RC_RTR, QROCE_QPS_RTR, &c), ==,
                     QROCE_CMD_ERR_PARAM);
    c.modify_qp.rq_psn = 0;
    c.modify_qp.dest_qpn = cpu_to_le32(1u << 24);
    g_assert_cmpuint(modify(&t, rc, RC_RTR, QROCE_QPS_RTR, &c), ==,
                     QROCE_CMD_ERR_PARAM);
    c.modify_qp.dest_qpn = 0;
    c.modify_qp.max_dest_rd_atomic = QROCE_DEF_MAX_RD_ATOM + 1;
    g_assert_cmpuint(modify(&t, rc, RC_RTR, QROCE_QPS_RTR, &c), ==,
                     QROCE_CMD_ERR_PARAM);
    c.modify_qp.max_dest_rd_atomic = 0;
    c.modify_qp.av.sgid_index = 3;                  /* no such GID */
    g_assert_cmpuint(modify(&t, rc, RC_RTR, QROCE_QPS_RTR, &c), ==,
                     QROCE_CMD_ERR_PARAM);
    c.modify_qp.av.sgid_index = 0;
    c.modify_qp.rsvd1 = 1;                          /* reserved */
    g_assert_cmpuint(modify(&t, rc, RC_RTR, QROCE_QPS_RTR, &c), ==,
                     QROCE_CMD_ERR_PARAM);
    c.modify_qp.rsvd1 = 0;
    g_assert_cmpuint(modify(&t, rc, RC_RTR, QROCE_QPS_RTR, &c), ==, 0);
    g_assert_cmpuint(query_state(&t, rc), ==, QROCE_QPS_RTR);
    g_assert_cmpuint(modify(&t, rc, RC_RTS & ~M(TIMEOUT), QROCE_QPS_RTS,
                            NULL), ==, QROCE_CMD_ERR_STATE);
    memset(&c, 0, sizeof(c));
    c.modify_qp.retry_cnt = 8;
    g_assert_cmpuint(modify(&t, rc, RC_RTS, QROCE_QPS_RTS, &c), ==,
                     QROCE_CMD_ERR_PARAM);
    c.modify_qp.retry_cnt = 7;
    c.modify_qp.sq_psn = cpu_to_le32(0xffffff);
    c.modify_qp.cur_state = QROCE_QPS_RTS;          /* wrong current state */
    g_assert_cmpuint(modify(&t, rc, RC_RTS | M(CUR_STATE), QROCE_QPS_RTS, &c),
                     ==, QROCE_CMD_ERR_STATE);
    c.modify_qp.cur_state = QROCE_QPS_RTR;
    g_assert_cmpuint(modify(&t, rc, RC_RTS | M(CUR_STATE), QROCE_QPS_RTS, &c),
                     ==, 0);
    g_assert_cmpuint(query_state(&t, rc), ==, QROCE_QPS_RTS);
    g_assert_cmpuint(modify(&t, rc, M(STATE) | M(MIN_RNR_TIMER),
                            QROCE_QPS_RTS, NULL), ==, 0);    /* RTS->RTS */
    g_assert_cmpuint(modify(&t, rc, M(STATE) | M(PATH_MTU), QROCE_QPS_RTS,
                            NULL), ==, QROCE_CMD_ERR_STATE);
    g_assert_cmpuint(modify(&t, rc, M(STATE) | M(EN_SQD_ASYNC), QROCE_QPS_SQD,
                            NULL), ==, 0);
    g_assert_cmpuint(modify(&t, rc, M(STATE) | M(PATH_MTU), QROCE_QPS_SQD,
                            NULL), ==, QROCE_CMD_ERR_STATE);
    g_assert_cmpuint(modify(&t, rc, M(STATE) | M(TIMEOUT) | M(AV),
                            QROCE_QPS_SQD, NULL), ==, 0);    /* SQD->SQD */
    g_assert_cmpuint(modify(&t, rc, M(STATE), QROCE_QPS_RTS, NULL), ==, 0);
    g_assert_cmpuint(modify(&t, rc, M(STATE), QROCE_QPS_SQE, NULL), ==,
                     QROCE_CMD_ERR_STATE);
    g_assert_cmpuint(modify(&t, rc, M(STATE) | M(TIMEOUT), QROCE_QPS_ERR,
                            NULL), ==, QROCE_CMD_ERR_STATE);
    g_assert_cmpuint(modify(&t, rc, M(STATE), QROCE_QPS_ERR, NULL), ==, 0);
    g_assert_cmpuint(modify(&t, rc, M(STATE), QROCE_QPS_RTS, NULL), ==,
                     QROCE_CMD_ERR_STATE);
    g_assert_cmpuint(modify(&t, rc, M(STATE), QROCE_QPS_ERR, NULL), ==, 0);
    g_assert_cmpuint(modify(&t, rc, M(STATE), 7, NULL), ==,
                     QROCE_CMD_ERR_PARAM);
    g_assert_cmpuint(modify(&t, rc, M(STATE), QROCE_QPS_RESET, NULL), ==, 0);
    g_assert_cmpuint(query_state(&t, rc), ==, QROCE_QPS_RESET);

    /* UC: no responder resources, RNR timer, retries */
    g_assert_cmpuint(modify(&t, uc, RC_INIT, QROCE_QPS_INIT, NULL), ==, 0);
    g_assert_cmpuint(modify(&t, uc, RC_RTR, QROCE_QPS_RTR, NULL), ==,
                     QROCE_CMD_ERR_STATE);
    g_assert_cmpuint(modify(&t, uc, M(STATE) | M(AV) | M(PATH_MTU) |
                            M(DEST_QPN) | M(RQ_PSN), QROCE_QPS_RTR, NULL), ==,
                     0);
    g_assert_cmpuint(modify(&t, uc, RC_RTS, QROCE_QPS_RTS, NULL), ==,
                     QROCE_CMD_ERR_STATE);
    g_assert_cmpuint(modify(&t, uc, M(STATE) | M(SQ_PSN), QROCE_QPS_RTS,
                            NULL), ==, 0);

    /* UD: Q_Key at INIT, nothing required at RTR */
    g_assert_cmpuint(modify(&t, ud, RC_INIT, QROCE_QPS_INIT, NULL), ==,
                     QROCE_CMD_ERR_STATE);
    g_assert_cmpuint(modify(&t, ud, M(STATE) | M(PKEY_INDEX) | M(PORT) |
                            M(QKEY), QROCE_QPS_INIT, NULL), ==, 0);
    g_assert_cmpuint(modify(&t, ud, M(STATE) | M(AV), QROCE_QPS_RTR, NULL),
                     ==, QROCE_CMD_ERR_STATE);
    g_assert_cmpuint(modify(&t, ud, M(STATE), QROCE_QPS_RTR, NULL), ==, 0);
    g_assert_cmpuint(modify(&t, ud, M(STATE), QROCE_QPS_RTS, NULL), ==,
                     QROCE_CMD_ERR_STATE);
    g_assert_cmpuint(modify(&t, ud, M(STATE) | M(SQ_PSN) | M(QKEY),
                            QROCE_QPS_RTS, NULL), ==, 0);

    /* GSI: as ib_mad drives it -- no port attribute */
    g_assert_cmpuint(modify(&t, gsi, M(STATE) | M(PKEY_INDEX) | M(PORT) |
                            M(QKEY), QROCE_QPS_INIT, NULL), ==,
                     QROCE_CMD_ERR_STATE);
    g_assert_cmpuint(modify(&t, gsi, M(STATE) | M(PKEY_INDEX) | M(QKEY),
                            QROCE_QPS_INIT, NULL), ==, 0);
    g_assert_cmpuint(modify(&t, gsi, M(STATE), QROCE_QPS_RTR, NULL), ==, 0);
    g_assert_cmpuint(modify(&t, gsi, M(STATE) | M(SQ_PSN), QROCE_QPS_RTS,
                            NULL), ==, 0);
    g_assert_cmpuint(query_state(&t, gsi), ==, QROCE_QPS_RTS);

    /* RESET of the whole device frees every object */
    enable(&t);
    g_assert_cmpuint(simple(&t, QROCE_CMD_DESTROY_QP, rc, NULL), ==,
                     QROCE_CMD_ERR_HANDLE);
    g_assert_cmpuint(simple(&t, QROCE_CMD_DESTROY_CQ, cqn, NULL), ==,
                     QROCE_CMD_ERR_HANDLE);
    g_assert_cmpuint(simple(&t, QROCE_CMD_DEALLOC_PD, pdn, NULL), ==,
                     QROCE_CMD_ERR_HANDLE);
    stop(&t);
}

static uint64_t dbq(uint32_t obj, uint32_t val)
{
    return ((uint64_t)val << 32) | obj;
}

/* Doorbells: only on the QP's page, never beyond the ring. */
static void test_doorbells(void)
{
    QRoceTest t;
    struct qroce_eqe e;
    uint64_t eq0, eq1;
    uint32_t out[6], pdn, cqn, qpn, bad;

    start(&t, "");
    enable(&t);
    g_assert_cmpuint(simple(&t, QROCE_CMD_ALLOC_PD, 0, out), ==, 0);
    pdn = out[0];
    mk_eq(&t, 0, &eq0);
    mk_eq(&t, 1, &eq1);
    cqn = mk_cq(&t, 1);
    g_assert_cmpuint(mk_qp(&t, QROCE_QPT_RC, pdn, cqn, 5, &qpn), ==, 0);
    g_assert_cmpuint(modify(&t, qpn, RC_INIT, QROCE_QPS_INIT, NULL), ==, 0);

    bad = rd(&t, QROCE_REG_CNT(QROCE_CNT_BAD_DOORBELLS));
    /* the wrong page, a 32-bit write, an unknown offset, a missing QP */
    qpci_io_writeq(t.dev, t.db, 4 * QROCE_DB_PAGE_SIZE + QROCE_DB_RQ,
                   dbq(qpn, 1));
    qpci_io_writel(t.dev, t.db, 5 * QROCE_DB_PAGE_SIZE + QROCE_DB_RQ, qpn);
    qpci_io_writeq(t.dev, t.db, 5 * QROCE_DB_PAGE_SIZE + 0x800, dbq(qpn, 1));
    qpci_io_writeq(t.dev, t.db, 5 * QROCE_DB_PAGE_SIZE + QROCE_DB_RQ,
                   dbq(qpn + 1, 1));
    qpci_io_writeq(t.dev, t.db, 5 * QROCE_DB_PAGE_SIZE + QROCE_DB_CQ_ARM,
                   dbq(cqn, 1));                    /* the CQ is on page 0 */
    g_assert_cmpuint(rd(&t, QROCE_REG_CNT(QROCE_CNT_BAD_DOORBELLS)), ==,
                     bad + 5);
    g_assert_cmpuint(query_state(&t, qpn), ==, QROCE_QPS_INIT);
    /* a consumer index the CQ never produced */
    qpci_io_writeq(t.dev, t.db, QROCE_DB_CQ_CI, dbq(cqn, 1000));
    g_assert_cmpuint(rd(&t, QROCE_REG_CNT(QROCE_CNT_BAD_DOORBELLS)), ==,
                     bad + 6);
    /* 17 receive WQEs in a ring of 16: the QP goes to ERR, QP_FATAL */
    qpci_io_writeq(t.dev, t.db, 5 * QROCE_DB_PAGE_SIZE + QROCE_DB_RQ,
                   dbq(qpn, 17));
    g_assert_cmpuint(query_state(&t, qpn), ==, QROCE_QPS_ERR);
    qtest_memread(t.qts, eq0, &e, sizeof(e));
    g_assert_cmpuint(e.owner & QROCE_OWNER_BIT, ==, qroce_owner_for(0, 8));
    g_assert_cmpuint(e.type, ==, QROCE_EQE_QP_FATAL);
    g_assert_cmpuint(le32_to_cpu(e.handle), ==, qpn);
    stop(&t);
}
/* ---- the RC engine through the device: two QPs, looped back inside ---- */

static uint32_t mk_cq_ring(QRoceTest *t, uint32_t eqn, uint8_t log2,
                           uint64_t *ring)
{
    struct qroce_cmd c = { .hdr.opcode = QROCE_CMD_CREATE_CQ };
    uint32_t out[6];

    uint32_t np = DIV_ROUND_UP((sizeof(struct qroce_cqe) << log2) +
                               sizeof(struct qroce_cq_rec), 4096);

    *ring = page(t, np);
    c.create_cq.eqn = cpu_to_le32(eqn);
    c.create_cq.log2_entries = log2;
    c.create_cq.ring = (struct qroce_bt){ cpu_to_le64(*ring), cpu_to_le32(np),
                                          12, QROCE_BT_CONTIG, 0 };
    g_assert_cmpuint(cmd(t, &c, out), ==, QROCE_CMD_OK);
    return out[0];
}

/* Wait for entry @idx of a ring of 2^@log2 entries of @size bytes. */
static void wait_entry(QRoceTest *t, uint64_t ring, unsigned size,
                       uint8_t log2, uint32_t idx, void *e)
{
    uint64_t a = ring + (uint64_t)(idx & ((1u << log2) - 1)) * size;
    int i;

    for (i = 0; i < 20000; i++) {
        qtest_memread(t->qts, a, e, size);
        if ((((uint8_t *)e)[size - 1] & QROCE_OWNER_BIT) ==
            qroce_owner_for(idx, log2)) {
            return;
        }
        g_usleep(100);
    }
    g_assert_not_reached();
}

static bool entry_ready(QRoceTest *t, uint64_t ring, unsigned size,
                        uint8_t log2, uint32_t idx)
{
    uint8_t owner;

    qtest_memread(t->qts, ring + (uint64_t)(idx & ((1u << log2) - 1)) * size
                  + size - 1, &owner, 1);
    return (owner & QROCE_OWNER_BIT) == qroce_owner_for(idx, log2);
}

/* The address of the device itself: 10.0.0.1 (GID 0) at its own MAC. */
static void self_av(struct qroce_av *av)
{
    memset(av, 0, sizeof(*av));
    av->dgid[10] = av->dgid[11] = 0xff;
    av->dgid[12] = 10;
    av->dgid[15] = 1;
    memcpy(av->dmac, "\x52\x54\x00\x12\x34\x56", 6);
    av->hop_limit = 64;
    av->net_type = QROCE_NET_IPV4;
}

static void qp_connect(QRoceTest *t, uint32_t qpn, uint32_t dest,
                       uint32_t my_psn, uint32_t dest_psn)
{
    struct qroce_cmd c;

    memset(&c, 0, sizeof(c));
    c.modify_qp.access_flags = cpu_to_le32(QROCE_ACCESS_LOCAL_WRITE |
                                           QROCE_ACCESS_REMOTE_WRITE);
    g_assert_cmpuint(modify(t, qpn, RC_INIT, QROCE_QPS_INIT, &c), ==, 0);
    memset(&c, 0, sizeof(c));
    c.modify_qp.path_mtu = QROCE_MTU_256;
    c.modify_qp.dest_qpn = cpu_to_le32(dest);
    c.modify_qp.rq_psn = cpu_to_le32(dest_psn);
    c.modify_qp.min_rnr_timer = 1;
    self_av(&c.modify_qp.av);
    g_assert_cmpuint(modify(t, qpn, RC_RTR, QROCE_QPS_RTR, &c), ==, 0);
    memset(&c, 0, sizeof(c));
    c.modify_qp.timeout = 14;
    c.modify_qp.retry_cnt = 7;
    c.modify_qp.rnr_retry = 7;
    c.modify_qp.sq_psn = cpu_to_le32(my_psn);
    g_assert_cmpuint(modify(t, qpn, RC_RTS, QROCE_QPS_RTS, &c), ==, 0);
}

/* Write send WQE @idx (64-byte stride): header @h and one SGE. */
static void put_send_wqe(QRoceTest *t, uint64_t sq, uint32_t idx,
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

static void post_send(QRoceTest *t, uint64_t sq, uint32_t idx, uint64_t addr,
                      uint32_t len, uint32_t lkey, uint8_t flags)
{
    struct qroce_send_wqe h = { .opcode = QROCE_WR_SEND, .flags = flags };

    put_send_wqe(t, sq, idx, &h, addr, len, lkey);
}

/* A RECV WQE of one SGE at index @idx of a ring of 2^@log2 32-byte WQEs. */
static void put_recv(QRoceTest *t, uint64_t ring, uint8_t log2, uint32_t idx,
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

static void post_recv(QRoceTest *t, uint64_t rq, uint32_t idx, uint64_t addr,
                      uint32_t len, uint32_t lkey)
{
    put_recv(t, rq, 4, idx, addr, len, lkey);
}

/*
 * SEND from QP a to QP b on the same device (the frames never leave it):
 * CQEs with the right owner bits and WQE indexes, the payload, the COMP
 * event of an armed CQ only, and a CQ overrun ending in CQ_ERR.
 */
static void test_rc_loopback(void)
{
    QRoceTest t;
    struct qroce_cqe cqe;
    struct qroce_eqe e;
    uint64_t eq0, eq1, cqa_ring, cqb_ring, buf, sqa, rqb, sq, rq;
    uint32_t out[6], pdn, cqa, cqb, a, b, key, i;
    uint8_t pattern[1000], got[1000];

    start(&t, "");
    enable(&t);
    g_assert_cmpuint(simple(&t, QROCE_CMD_ALLOC_PD, 0, out), ==, 0);
    pdn = out[0];
    mk_eq(&t, 0, &eq0);
    mk_eq(&t, 1, &eq1);
    cqa = mk_cq_ring(&t, 1, 1, &cqa_ring);     /* 2 entries */
    cqb = mk_cq_ring(&t, 1, 6, &cqb_ring);
    set_gid0(&t);
    buf = page(&t, 2);
    key = mk_mr(&t, pdn, buf, 2, QROCE_ACCESS_LOCAL_WRITE);

    g_assert_cmpuint(mk_qp_rings(&t, QROCE_QPT_RC, pdn, cqa, cqa, 0, &a, &sqa,
                                 &rq), ==, 0);
    g_assert_cmpuint(mk_qp_rings(&t, QROCE_QPT_RC, pdn, cqb, cqb, 0, &b, &sq,
                                 &rqb), ==, 0);
    qp_connect(&t, a, b, 100, 200);
    qp_connect(&t, b, a, 200, 100);

    for (i = 0; i < sizeof(pattern); i++) {
        pattern[i] = i * 13 + 1;
    }
    qtest_memwrite(t.qts, buf, pattern, sizeof(pattern));
    for (i = 0; i < 4; i++) {
        post_recv(&t, rqb, i, buf + 4096 + i * 1000, 1000, key);
    }
    qpci_io_writeq(t.dev, t.db, QROCE_DB_RQ, qroce_db_value(b, 4));
    /* arm B's CQ, not A's */
    qpci_io_writeq(t.dev, t.db, QROCE_DB_CQ_ARM,
                   qroce_db_value(cqb, QROCE_CQ_ARM_NEXT | 0));

    post_send(&t, sqa, 0, buf, 1000, key, QROCE_WQE_SIGNALED);
    qpci_io_writeq(t.dev, t.db, QROCE_DB_SQ, qroce_db_value(a, 1));
    wait_entry(&t, cqb_ring, sizeof(cqe), 6, 0, &cqe);
    g_assert_cmpuint(cqe.status, ==, QROCE_WC_SUCCESS);
    g_assert_cmpuint(cqe.opcode, ==, QROCE_CQE_RECV);
    g_assert_cmpuint(le32_to_cpu(cqe.qpn), ==, b);
    g_assert_cmpuint(le32_to_cpu(cqe.wqe_index), ==, 0);
    g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, 1000);
    qtest_memread(t.qts, buf + 4096, got, sizeof(got));
    g_assert_true(!memcmp(got, pattern, sizeof(got)));
    wait_entry(&t, cqa_ring, sizeof(cqe), 1, 0, &cqe);
    g_assert_cmpuint(cqe.status, ==, QROCE_WC_SUCCESS);
    g_assert_cmpuint(cqe.opcode, ==, QROCE_CQE_SEND);
    g_assert_cmpuint(le32_to_cpu(cqe.qpn), ==, a);
    g_assert_cmpuint(le32_to_cpu(cqe.wqe_index), ==, 0);
    /* one COMP event, for B's CQ; the CQ is disarmed after it */
    wait_entry(&t, eq1, sizeof(e), 8, 0, &e);
    g_assert_cmpuint(e.type, ==, QROCE_EQE_COMP);
    g_assert_cmpuint(le32_to_cpu(e.handle), ==, cqb);
    g_assert_false(entry_ready(&t, eq1, sizeof(e), 8, 1));

    /*
     * A's CQ holds 2 and its consumer index (the record after the ring)
     * stays 0: the second CQE fits, the third is an overrun -> CQ_ERR.
     */
    post_send(&t, sqa, 1, buf, 10, key, QROCE_WQE_SIGNALED);
    post_send(&t, sqa, 2, buf, 10, key, QROCE_WQE_SIGNALED);
    qpci_io_writeq(t.dev, t.db, QROCE_DB_SQ, qroce_db_value(a, 3));
    wait_entry(&t, cqb_ring, sizeof(cqe), 6, 2, &cqe);
    wait_entry(&t, cqa_ring, sizeof(cqe), 1, 1, &cqe);
    g_assert_cmpuint(le32_to_cpu(cqe.wqe_index), ==, 1);
    wait_entry(&t, eq0, sizeof(e), 8, 0, &e);
    g_assert_cmpuint(e.type, ==, QROCE_EQE_CQ_ERR);
    g_assert_cmpuint(le32_to_cpu(e.handle), ==, cqa);
    /* slot 0 of A's CQ still holds the first CQE (owner of round 0) */
    qtest_memread(t.qts, cqa_ring, &cqe, sizeof(cqe));
    g_assert_cmpuint(le32_to_cpu(cqe.wqe_index), ==, 0);
    g_assert_false(entry_ready(&t, eq1, sizeof(e), 8, 1));
    g_assert_cmpuint(rd(&t, QROCE_REG_CNT(QROCE_CNT_ROCE_TX_PKTS)), >=, 3);
    stop(&t);
}

/*
 * A started, enabled device with a PD, EQs 0 and 1, a 64-entry CQ on EQ 1,
 * GID 0 = 10.0.0.1 and a two-page MR with local write.
 */
static void objs_setup(QRoceTest *t, uint32_t access, uint32_t *pdn,
                       uint32_t *cqn, uint64_t *cq_ring, uint64_t *buf,
                       uint32_t *key)
{
    uint64_t eq0, eq1;
    uint32_t out[6];

    enable(t);
    g_assert_cmpuint(simple(t, QROCE_CMD_ALLOC_PD, 0, out), ==, 0);
    *pdn = out[0];
    mk_eq(t, 0, &eq0);
    mk_eq(t, 1, &eq1);
    *cqn = mk_cq_ring(t, 1, 6, cq_ring);
    set_gid0(t);
    *buf = page(t, 2);
    *key = mk_mr(t, *pdn, *buf, 2, access);
}

static void loopback_setup(QRoceTest *t, uint32_t *pdn, uint32_t *cqn,
                           uint64_t *cq_ring, uint64_t *buf, uint32_t *key)
{
    start(t, "");
    objs_setup(t, QROCE_ACCESS_LOCAL_WRITE, pdn, cqn, cq_ring, buf, key);
}

/* ---- UD and GSI through the device, looped back inside it ---- */

/* An AH on @pdn to the device itself. */
static uint32_t mk_self_ah(QRoceTest *t, uint32_t pdn)
{
    struct qroce_cmd c = { .hdr.opcode = QROCE_CMD_CREATE_AH };
    uint32_t out[6];

    c.create_ah.pdn = cpu_to_le32(pdn);
    self_av(&c.create_ah.av);
    g_assert_cmpuint(cmd(t, &c, out), ==, 0);
    return out[0];
}

/* A UD or GSI QP to RTS with @qkey. */
static void ud_ready(QRoceTest *t, uint32_t qpn, uint8_t type, uint32_t qkey)
{
    struct qroce_cmd c;

    memset(&c, 0, sizeof(c));
    c.modify_qp.qkey = cpu_to_le32(qkey);
    g_assert_cmpuint(modify(t, qpn, M(STATE) | M(PKEY_INDEX) | M(QKEY) |
                            (type == QROCE_QPT_UD ? M(PORT) : 0),
                            QROCE_QPS_INIT, &c), ==, 0);
    memset(&c, 0, sizeof(c));
    g_assert_cmpuint(modify(t, qpn, M(STATE), QROCE_QPS_RTR, &c), ==, 0);
    c.modify_qp.sq_psn = cpu_to_le32(7);
    g_assert_cmpuint(modify(t, qpn, M(STATE) | M(SQ_PSN), QROCE_QPS_RTS,
                            &c), ==, 0);
}

static void ud_qp(QRoceTest *t, uint8_t type, uint32_t pdn, uint32_t cqn,
                  uint32_t qkey, uint32_t *qpn, uint64_t *sq, uint64_t *rq)
{
    g_assert_cmpuint(mk_qp_rings(t, type, pdn, cqn, cqn, 0, qpn, sq, rq), ==,
                     0);
    ud_ready(t, *qpn, type, qkey);
}

static void post_ud(QRoceTest *t, uint64_t sq, uint32_t idx, uint32_t ahn,
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
    put_send_wqe(t, sq, idx, &h, addr, len, lkey);
}

/*
 * UD SENDs between two UD QPs and to the GSI QP: the GRH area and payload
 * of the RECV, the CQE's flags, source QP, source MAC and immediate; a
 * wrong Q_Key, a missing AH and a message over the UD MTU; a RECV buffer
 * too small for GRH and payload.
 */
static void test_ud_loopback(void)
{
    QRoceTest t;
    struct qroce_cqe cqe;
    uint64_t cq_ring, buf, sqa, rqa, sqb, rqb, sqg, rqg;
    uint32_t pdn, cqn, a, b, g, key, ahn, drops, i, j;
    uint32_t ci = 0, sa = 0, rb = 0;
    uint8_t pattern[1100], got[1200];

    loopback_setup(&t, &pdn, &cqn, &cq_ring, &buf, &key);
    g_assert_true(rd(&t, QROCE_REG_FEATURES) & QROCE_FEAT_UD);
    ahn = mk_self_ah(&t, pdn);

    ud_qp(&t, QROCE_QPT_UD, pdn, cqn, 0x1111, &a, &sqa, &rqa);
    ud_qp(&t, QROCE_QPT_UD, pdn, cqn, 0x2222, &b, &sqb, &rqb);
    ud_qp(&t, QROCE_QPT_GSI, pdn, cqn, 0x80010000, &g, &sqg, &rqg);
    g_assert_cmpuint(g, ==, 1);
    for (i = 0; i < sizeof(pattern); i++) {
        pattern[i] = i * 7 + 3;
    }
    qtest_memwrite(t.qts, buf, pattern, sizeof(pattern));
    post_recv(&t, rqb, 0, buf + 4096, 1200, key);
    post_recv(&t, rqb, 1, buf + 4096, 60, key);   /* too small for 40 + 100 */
    qpci_io_writeq(t.dev, t.db, QROCE_DB_RQ, qroce_db_value(b, 2));
    post_recv(&t, rqg, 0, buf + 4096, 296, key);
    qpci_io_writeq(t.dev, t.db, QROCE_DB_RQ, qroce_db_value(g, 1));

    /* a -> b: 1000 bytes with immediate */
    post_ud(&t, sqa, sa, ahn, b, 0x2222, buf, 1000, key);
    qpci_io_writeq(t.dev, t.db, QROCE_DB_SQ, qroce_db_value(a, ++sa));
    for (i = 0; i < 2; i++) {
        wait_entry(&t, cq_ring, sizeof(cqe), 6, ci++, &cqe);
        g_assert_cmpuint(cqe.status, ==, QROCE_WC_SUCCESS);
        if (cqe.flags & QROCE_CQE_F_SQ) {
            g_assert_cmpuint(le32_to_cpu(cqe.qpn), ==, a);
            g_assert_cmpuint(cqe.opcode, ==, QROCE_CQE_SEND);
            continue;
        }
        g_assert_cmpuint(le32_to_cpu(cqe.qpn), ==, b);
        g_assert_cmpuint(cqe.opcode, ==, QROCE_CQE_RECV);
        g_assert_cmpuint(le32_to_cpu(cqe.wqe_index), ==, rb++);
        g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, 40 + 1000);
        g_assert_cmpuint(cqe.flags, ==, QROCE_CQE_F_GRH | QROCE_CQE_F_IPV4 |
                         QROCE_CQE_F_IMM);
        g_assert_cmpuint(le32_to_cpu(cqe.src_qp), ==, a);
        g_assert_cmphex((uint32_t)ldl_be_p(&cqe.imm_data), ==, 0xabcd0000);
        g_assert_true(!memcmp(cqe.smac, "\x52\x54\x00\x12\x34\x56", 6));
        qtest_memread(t.qts, buf + 4096, got, 1040);
        /* GRH area: 20 zero bytes, then the IPv4 header from 10.0.0.1 */
        for (j = 0; j < 20; j++) {
            g_assert_cmpuint(got[j], ==, 0);
        }
        g_assert_cmpuint(got[20], ==, 0x45);
        g_assert_cmpuint(got[29], ==, 17);
        g_assert_true(!memcmp(got + 32, "\x0a\x00\x00\x01", 4));
        g_assert_true(!memcmp(got + 36, "\x0a\x00\x00\x01", 4));
        g_assert_true(!memcmp(got + 40, pattern, 1000));
    }

    /* a wrong Q_Key is dropped and counted; no RECV is consumed */
    drops = rd(&t, QROCE_REG_CNT(QROCE_CNT_ROCE_RX_DROPS));
    post_ud(&t, sqa, sa, ahn, b, 0x2223, buf, 10, key);
    qpci_io_writeq(t.dev, t.db, QROCE_DB_SQ, qroce_db_value(a, ++sa));
    wait_entry(&t, cq_ring, sizeof(cqe), 6, ci++, &cqe);
    g_assert_true(cqe.flags & QROCE_CQE_F_SQ);
    g_assert_cmpuint(cqe.status, ==, QROCE_WC_SUCCESS);
    g_usleep(20000);
    g_assert_false(entry_ready(&t, cq_ring, sizeof(cqe), 6, ci));
    g_assert_cmpuint(rd(&t, QROCE_REG_CNT(QROCE_CNT_ROCE_RX_DROPS)), ==,
                     drops + 1);

    /*
     * GSI QP to GSI QP (QPN 1) with the GSI Q_Key: a 256-byte MAD.  (A UD
     * QP cannot send it: a Q_Key with bit 31 set means the QP's own.)
     */
    post_ud(&t, sqg, 0, ahn, 1, 0x80010000, buf + 1, 256, key);
    qpci_io_writeq(t.dev, t.db, QROCE_DB_SQ, qroce_db_value(g, 1));
    for (i = 0; i < 2; i++) {
        wait_entry(&t, cq_ring, sizeof(cqe), 6, ci++, &cqe);
        g_assert_cmpuint(cqe.status, ==, QROCE_WC_SUCCESS);
        if (!(cqe.flags & QROCE_CQE_F_SQ)) {
            g_assert_cmpuint(le32_to_cpu(cqe.qpn), ==, 1);
            g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, 296);
            g_assert_cmpuint(le32_to_cpu(cqe.src_qp), ==, 1);
            qtest_memread(t.qts, buf + 4096 + 40, got, 256);
            g_assert_true(!memcmp(got, pattern + 1, 256));
        }
    }

    /* a RECV too small for GRH and payload: LOC_LEN_ERR, b goes to ERR */
    post_ud(&t, sqa, sa, ahn, b, 0x2222, buf, 100, key);
    qpci_io_writeq(t.dev, t.db, QROCE_DB_SQ, qroce_db_value(a, ++sa));
    for (i = 0; i < 2; i++) {
        wait_entry(&t, cq_ring, sizeof(cqe), 6, ci++, &cqe);
        if (cqe.flags & QROCE_CQE_F_SQ) {
            g_assert_cmpuint(cqe.status, ==, QROCE_WC_SUCCESS);
        } else {
            g_assert_cmpuint(le32_to_cpu(cqe.qpn), ==, b);
            g_assert_cmpuint(le32_to_cpu(cqe.wqe_index), ==, 1);
            g_assert_cmpuint(cqe.status, ==, QROCE_WC_LOC_LEN_ERR);
        }
    }
    g_assert_cmpuint(query_state(&t, b), ==, QROCE_QPS_ERR);

    /* a message over the UD MTU (1024 at Ethernet MTU 1500) */
    post_ud(&t, sqg, 1, ahn, a, 0x1111, buf, 1025, key);
    qpci_io_writeq(t.dev, t.db, QROCE_DB_SQ, qroce_db_value(g, 2));
    wait_entry(&t, cq_ring, sizeof(cqe), 6, ci++, &cqe);
    g_assert_true(cqe.flags & QROCE_CQE_F_SQ);
    g_assert_cmpuint(le32_to_cpu(cqe.qpn), ==, 1);
    g_assert_cmpuint(cqe.status, ==, QROCE_WC_LOC_LEN_ERR);
    g_assert_cmpuint(query_state(&t, g), ==, QROCE_QPS_ERR);

    /* an AH number that names nothing */
    post_ud(&t, sqa, sa, ahn + 1, b, 0x2222, buf, 10, key);
    qpci_io_writeq(t.dev, t.db, QROCE_DB_SQ, qroce_db_value(a, ++sa));
    wait_entry(&t, cq_ring, sizeof(cqe), 6, ci++, &cqe);
    g_assert_true(cqe.flags & QROCE_CQE_F_SQ);
    g_assert_cmpuint(cqe.status, ==, QROCE_WC_LOC_QP_OP_ERR);
    g_assert_cmpuint(query_state(&t, a), ==, QROCE_QPS_ERR);
    stop(&t);
}

/* ---- UC through the device, looped back inside it ---- */

/* A UC QP to RTS towards @dest at @av, both PSNs @psn. */
static void uc_connect_av(QRoceTest *t, uint32_t qpn, uint32_t dest,
                          const struct qroce_av *av, uint32_t psn)
{
    struct qroce_cmd c;

    memset(&c, 0, sizeof(c));
    c.modify_qp.access_flags = cpu_to_le32(QROCE_ACCESS_LOCAL_WRITE |
                                           QROCE_ACCESS_REMOTE_WRITE);
    g_assert_cmpuint(modify(t, qpn, M(STATE) | M(PKEY_INDEX) | M(PORT) |
                            M(ACCESS_FLAGS), QROCE_QPS_INIT, &c), ==, 0);
    memset(&c, 0, sizeof(c));
    c.modify_qp.path_mtu = QROCE_MTU_256;
    c.modify_qp.dest_qpn = cpu_to_le32(dest);
    c.modify_qp.rq_psn = cpu_to_le32(psn);
    c.modify_qp.av = *av;
    g_assert_cmpuint(modify(t, qpn, M(STATE) | M(AV) | M(PATH_MTU) |
                            M(DEST_QPN) | M(RQ_PSN), QROCE_QPS_RTR, &c), ==,
                     0);
    memset(&c, 0, sizeof(c));
    c.modify_qp.sq_psn = cpu_to_le32(psn);
    g_assert_cmpuint(modify(t, qpn, M(STATE) | M(SQ_PSN), QROCE_QPS_RTS, &c),
                     ==, 0);
}

static void uc_connect(QRoceTest *t, uint32_t qpn, uint32_t dest)
{
    struct qroce_av av;

    self_av(&av);
    uc_connect_av(t, qpn, dest, &av, 500);
}

/*
 * UC SENDs over several packets: the sender completes without an ACK; a
 * message with no RECV WQE is dropped (no RNR, no error) and the next one
 * lands; an RDMA READ on UC is refused with LOC_QP_OP_ERR.
 */
static void test_uc_loopback(void)
{
    QRoceTest t;
    struct qroce_send_wqe h = {};
    struct qroce_cqe cqe;
    uint64_t cq_ring, buf, sqa, rqa, sqb, rqb;
    uint32_t pdn, cqn, a, b, key, drops, i, ci = 0;
    uint8_t pattern[1000], got[1000];

    loopback_setup(&t, &pdn, &cqn, &cq_ring, &buf, &key);
    g_assert_true(rd(&t, QROCE_REG_FEATURES) & QROCE_FEAT_UC);
    g_assert_cmpuint(mk_qp_rings(&t, QROCE_QPT_UC, pdn, cqn, cqn, 0, &a, &sqa,
                                 &rqa), ==, 0);
    g_assert_cmpuint(mk_qp_rings(&t, QROCE_QPT_UC, pdn, cqn, cqn, 0, &b, &sqb,
                                 &rqb), ==, 0);
    uc_connect(&t, a, b);
    uc_connect(&t, b, a);
    for (i = 0; i < sizeof(pattern); i++) {
        pattern[i] = i * 5 + 9;
    }
    qtest_memwrite(t.qts, buf, pattern, sizeof(pattern));

    /* no RECV WQE on b: 1000 bytes (4 packets) sent, completed, dropped */
    drops = rd(&t, QROCE_REG_CNT(QROCE_CNT_ROCE_RX_DROPS));
    post_send(&t, sqa, 0, buf, 1000, key, QROCE_WQE_SIGNALED);
    qpci_io_writeq(t.dev, t.db, QROCE_DB_SQ, qroce_db_value(a, 1));
    wait_entry(&t, cq_ring, sizeof(cqe), 6, ci++, &cqe);
    g_assert_true(cqe.flags & QROCE_CQE_F_SQ);
    g_assert_cmpuint(cqe.status, ==, QROCE_WC_SUCCESS);
    g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, 1000);
    g_usleep(20000);
    g_assert_false(entry_ready(&t, cq_ring, sizeof(cqe), 6, ci));
    g_assert_cmpuint(rd(&t, QROCE_REG_CNT(QROCE_CNT_ROCE_RX_DROPS)), ==,
                     drops + 4);
    g_assert_cmpuint(query_state(&t, b), ==, QROCE_QPS_RTS);

    /* with a RECV WQE the next message lands whole */
    post_recv(&t, rqb, 0, buf + 4096, 1000, key);
    qpci_io_writeq(t.dev, t.db, QROCE_DB_RQ, qroce_db_value(b, 1));
    post_send(&t, sqa, 1, buf, 1000, key, QROCE_WQE_SIGNALED);
    qpci_io_writeq(t.dev, t.db, QROCE_DB_SQ, qroce_db_value(a, 2));
    for (i = 0; i < 2; i++) {
        wait_entry(&t, cq_ring, sizeof(cqe), 6, ci++, &cqe);
        g_assert_cmpuint(cqe.status, ==, QROCE_WC_SUCCESS);
        if (!(cqe.flags & QROCE_CQE_F_SQ)) {
            g_assert_cmpuint(le32_to_cpu(cqe.qpn), ==, b);
            g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, 1000);
        }
    }
    qtest_memread(t.qts, buf + 4096, got, sizeof(got));
    g_assert_true(!memcmp(got, pattern, sizeof(got)));

    /* RDMA READ has no UC opcode */
    h.opcode = QROCE_WR_RDMA_READ;
    h.flags = QROCE_WQE_SIGNALED;
    put_send_wqe(&t, sqa, 2, &h, buf, 8, key);
    qpci_io_writeq(t.dev, t.db, QROCE_DB_SQ, qroce_db_value(a, 3));
    wait_entry(&t, cq_ring, sizeof(cqe), 6, ci++, &cqe);
    g_assert_cmpuint(cqe.status, ==, QROCE_WC_LOC_QP_OP_ERR);
    g_assert_cmpuint(query_state(&t, a), ==, QROCE_QPS_ERR);
    stop(&t);
}

/*
 * Random WQEs on a connected pair: random SQ and RQ contents (half of the
 * SGEs pointing into a real MR), random producer indexes, CQ doorbells and
 * timer expiries.  The device must keep answering and tear down cleanly.
 */
static void test_garbage_wqes(void)
{
    QRoceTest t;
    /* QROCE_FUZZ=SEED:ROUNDS for longer runs by hand */
    const char *env = g_getenv("QROCE_FUZZ");
    unsigned seed = 0x57514553, rounds = 8;
    GRand *r;
    struct qroce_cmd c;
    uint64_t eq0, eq1, cqa_ring, cqb_ring, buf, sq[2], rq[2];
    uint32_t out[6], pdn, cq[2], qp[2], key, keys[3], ahn, round, i, j;

    if (env) {
        sscanf(env, "%u:%u", &seed, &rounds);
    }
    r = g_rand_new_with_seed(seed);

    start(&t, "");
    enable(&t);
    g_assert_cmpuint(simple(&t, QROCE_CMD_ALLOC_PD, 0, out), ==, 0);
    pdn = out[0];
    mk_eq(&t, 0, &eq0);
    mk_eq(&t, 1, &eq1);
    set_gid0(&t);
    buf = page(&t, 2);
    key = mk_mr(&t, pdn, buf, 2, QROCE_ACCESS_LOCAL_WRITE |
                QROCE_ACCESS_REMOTE_WRITE);
    ahn = mk_self_ah(&t, pdn);
    /* a second MR, read-only, and a key that names nothing */
    keys[0] = key;
    keys[1] = mk_mr(&t, pdn, buf + 4096, 1, 0);
    keys[2] = key ^ 0x100;
    sq_shift_override = 7;          /* room for 5 SGEs or 80 inline bytes */
    for (round = 0; round < rounds; round++) {
        /* RC, UC and UD pairs in turn */
        uint8_t type = round % 3 == 0 ? QROCE_QPT_RC :
                       round % 3 == 1 ? QROCE_QPT_UC : QROCE_QPT_UD;
        uint8_t ring[4096];

        cq[0] = mk_cq_ring(&t, 1, 2, &cqa_ring);
        cq[1] = mk_cq_ring(&t, 1, 6, &cqb_ring);
        for (i = 0; i < 2; i++) {
            g_assert_cmpuint(mk_qp_rings(&t, type, pdn, cq[i], cq[i],
                                         0, &qp[i], &sq[i], &rq[i]), ==, 0);
        }
        for (i = 0; i < 2; i++) {
            if (type == QROCE_QPT_RC) {
                qp_connect(&t, qp[i], qp[!i], 10 * round, 10 * round);
            } else if (type == QROCE_QPT_UC) {
                uc_connect(&t, qp[i], qp[!i]);
            } else {
                ud_ready(&t, qp[i], type, 0x1111);
            }
        }
        for (i = 0; i < 2; i++) {
            uint64_t rings[2] = { sq[i], rq[i] };
            unsigned k;

            for (k = 0; k < 2; k++) {
                unsigned stride = k ? 32 : 128;

                for (j = 0; j < sizeof(ring); j++) {
                    ring[j] = g_rand_int(r);
                }
                for (j = 0; j < 16; j++) {
                    uint8_t *w = ring + j * stride;
                    struct qroce_sge *sge =
                        (struct qroce_sge *)(w + (k ? 16 : 48));
                    unsigned nsge = k ? 1 : g_rand_int_range(r, 0, 6), n;

                    bool good = j < 4 || g_rand_int_range(r, 0, 4) != 0;

                    if (good || g_rand_boolean(r)) {
                        if (!k) {
                            struct qroce_send_wqe *h = (void *)w;

                            w[0] = g_rand_int_range(r, 0, QROCE_WR_MAX + 1);
                            /* every flag, INLINE and FENCE included */
                            w[1] &= QROCE_WQE_SIGNALED | QROCE_WQE_SOLICITED |
                                    QROCE_WQE_INLINE | QROCE_WQE_FENCE;
                            w[2] = nsge;
                            h->inline_len = cpu_to_le32(
                                g_rand_int_range(r, 0, 100));
                            if (type == QROCE_QPT_UD) {
                                h->ud.ahn = cpu_to_le32(ahn);
                                h->ud.remote_qpn = cpu_to_le32(qp[!i]);
                                h->ud.remote_qkey = cpu_to_le32(0x1111);
                            } else {
                                h->rdma.remote_addr = cpu_to_le64(buf +
                                    g_rand_int_range(r, 0, 8192));
                                h->rdma.rkey = cpu_to_le32(
                                    keys[g_rand_int_range(r, 0, 3)]);
                            }
                        } else {
                            w[0] = 1;
                        }
                        if (good && !k) {
                            /* well formed: SEND or WRITE, in the MR */
                            w[0] = g_rand_boolean(r) ? QROCE_WR_SEND :
                                   QROCE_WR_RDMA_WRITE;
                            w[2] = nsge = g_rand_int_range(r, 1, 4);
                            if ((w[1] & QROCE_WQE_INLINE) &&
                                type != QROCE_QPT_UD) {
                                w[1] &= ~QROCE_WQE_INLINE;
                            }
                            ((struct qroce_send_wqe *)w)->rdma.rkey =
                                cpu_to_le32(key);
                        }
                        for (n = 0; n < MAX(nsge, 1); n++) {
                            sge[n].addr = cpu_to_le64(buf +
                                g_rand_int_range(r, 0, good ? 4096 : 8192));
                            sge[n].length = cpu_to_le32(
                                g_rand_int_range(r, 0, good ? 1024 : 4096));
                            sge[n].lkey = cpu_to_le32(good ? key :
                                keys[g_rand_int_range(r, 0, 3)]);
                        }
                    }
                }
                qtest_memwrite(t.qts, rings[k], ring, 16 * stride);
            }
        }
        /* the first four WQEs are well formed: send them, then garbage */
        for (i = 0; i < 2; i++) {
            qpci_io_writeq(t.dev, t.db, QROCE_DB_RQ, qroce_db_value(qp[i], 4));
            qpci_io_writeq(t.dev, t.db, QROCE_DB_SQ, qroce_db_value(qp[i], 4));
        }
        qtest_clock_step(t.qts, 1000000000LL);
        for (j = 0; j < 64; j++) {
            unsigned which = g_rand_int_range(r, 0, 6);
            uint32_t obj = g_rand_boolean(r) ? qp[j & 1] : cq[j & 1];

            /* producer indexes near the ring, or anywhere in 32 bits */
            qpci_io_writeq(t.dev, t.db, which * 8,
                           qroce_db_value(obj, g_rand_int_range(r, 0, 8) ?
                                          g_rand_int_range(r, 0, 40) :
                                          g_rand_int(r)));
            if ((j & 15) == 15) {
                qtest_clock_step(t.qts, 2000000000LL);
            }
        }
        /* the engine's timers fire, retries run out */
        for (j = 0; j < 10; j++) {
            qtest_clock_step(t.qts, 5000000000LL);
        }
        g_assert_cmphex(rd(&t, QROCE_REG_MAGIC), ==, QROCE_MAGIC_VALUE);
        g_assert_cmpuint(simple(&t, QROCE_CMD_NOP, 0, NULL), ==, 0);
        query_state(&t, qp[0]);
        query_state(&t, qp[1]);
        if (round + 1 == rounds) {
            break;      /* the last pair is torn down below */
        }
        for (i = 0; i < 2; i++) {
            memset(&c, 0, sizeof(c));
            c.hdr.opcode = QROCE_CMD_DESTROY_QP;
            c.qpn.qpn = cpu_to_le32(qp[i]);
            g_assert_cmpuint(cmd(&t, &c, NULL), ==, QROCE_CMD_OK);
            g_assert_cmpuint(simple(&t, QROCE_CMD_DESTROY_CQ, cq[i], NULL),
                             ==, 0);
        }
    }
    g_test_message("RoCE packets sent %u, received %u, CQEs in error %u, "
                   "bad doorbells %u",
                   rd(&t, QROCE_REG_CNT(QROCE_CNT_ROCE_TX_PKTS)),
                   rd(&t, QROCE_REG_CNT(QROCE_CNT_ROCE_RX_PKTS)),
                   rd(&t, QROCE_REG_CNT(QROCE_CNT_CQE_ERRS)),
                   rd(&t, QROCE_REG_CNT(QROCE_CNT_BAD_DOORBELLS)));
    g_assert_cmpuint(rd(&t, QROCE_REG_CNT(QROCE_CNT_ROCE_TX_PKTS)), >, 0);
    sq_shift_override = 0;
    g_assert_cmpuint(simple(&t, QROCE_CMD_DEREG_MR, keys[1], NULL), ==, 0);
    for (i = 0; i < 2; i++) {
        memset(&c, 0, sizeof(c));
        c.hdr.opcode = QROCE_CMD_DESTROY_QP;
        c.qpn.qpn = cpu_to_le32(qp[i]);
        g_assert_cmpuint(cmd(&t, &c, NULL), ==, QROCE_CMD_OK);
        g_assert_cmpuint(simple(&t, QROCE_CMD_DESTROY_CQ, cq[i], NULL), ==, 0);
    }
    memset(&c, 0, sizeof(c));
    c.hdr.opcode = QROCE_CMD_DEREG_MR;
    c.key.key = cpu_to_le32(key);
    g_assert_cmpuint(cmd(&t, &c, NULL), ==, QROCE_CMD_OK);
    g_assert_cmpuint(simple(&t, QROCE_CMD_DESTROY_AH, ahn, NULL), ==, 0);
    g_assert_cmpuint(simple(&t, QROCE_CMD_DEALLOC_PD, pdn, NULL), ==, 0);
    g_rand_free(r);
    stop(&t);
}

/* An async EQ of 16 entries: the 17th event is lost, then reported. */
static void test_eq_overflow(void)
{
    QRoceTest t;
    struct qroce_cmd c;
    struct qroce_eqe e;
    uint64_t eq0 = 0, eq1;
    uint32_t out[6], pdn, cqn, qp[18], i;

    start(&t, "");
    enable(&t);
    g_assert_cmpuint(simple(&t, QROCE_CMD_ALLOC_PD, 0, out), ==, 0);
    pdn = out[0];
    memset(&c, 0, sizeof(c));
    c.hdr.opcode = QROCE_CMD_CREATE_EQ;
    c.create_eq.log2_entries = QROCE_EQ_MIN_LOG2;
    eq0 = page(&t, 1);
    c.create_eq.ring = (struct qroce_bt){ cpu_to_le64(eq0), cpu_to_le32(1),
                                          12, QROCE_BT_CONTIG, 0 };
    g_assert_cmpuint(cmd(&t, &c, NULL), ==, QROCE_CMD_OK);
    mk_eq(&t, 1, &eq1);
    cqn = mk_cq(&t, 1);
    for (i = 0; i < 18; i++) {
        g_assert_cmpuint(mk_qp(&t, QROCE_QPT_RC, pdn, cqn, 0, &qp[i]), ==, 0);
        g_assert_cmpuint(modify(&t, qp[i], RC_INIT, QROCE_QPS_INIT, NULL), ==,
                         0);
    }
    /* 17 QP_FATAL events: RQ producer indexes past the ring */
    for (i = 0; i < 17; i++) {
        qpci_io_writeq(t.dev, t.db, QROCE_DB_RQ, qroce_db_value(qp[i], 17));
    }
    for (i = 0; i < 16; i++) {
        wait_entry(&t, eq0, sizeof(e), QROCE_EQ_MIN_LOG2, i, &e);
        g_assert_cmpuint(e.type, ==, QROCE_EQE_QP_FATAL);
        g_assert_cmpuint(le32_to_cpu(e.handle), ==, qp[i]);
    }
    /* the 17th did not overwrite entry 0 */
    g_assert_false(entry_ready(&t, eq0, sizeof(e), QROCE_EQ_MIN_LOG2, 16));
    /* a consumer index ahead of the producer is refused */
    wr(&t, QROCE_REG_EQ_CI(0), 17);
    qpci_io_writeq(t.dev, t.db, QROCE_DB_RQ, qroce_db_value(qp[17], 17));
    g_assert_false(entry_ready(&t, eq0, sizeof(e), QROCE_EQ_MIN_LOG2, 16));
    /* consume everything: the next event comes after an EQ_OVERFLOW */
    wr(&t, QROCE_REG_EQ_CI(0), 16);
    g_assert_cmpuint(modify(&t, qp[17], QROCE_QP_ATTR_STATE, QROCE_QPS_RESET,
                            NULL), ==, 0);
    g_assert_cmpuint(modify(&t, qp[17], RC_INIT, QROCE_QPS_INIT, NULL), ==,
                     0);
    qpci_io_writeq(t.dev, t.db, QROCE_DB_RQ, qroce_db_value(qp[17], 17));
    wait_entry(&t, eq0, sizeof(e), QROCE_EQ_MIN_LOG2, 16, &e);
    g_assert_cmpuint(e.type, ==, QROCE_EQE_EQ_OVERFLOW);
    g_assert_cmpuint(le32_to_cpu(e.handle), ==, 0);
    wait_entry(&t, eq0, sizeof(e), QROCE_EQ_MIN_LOG2, 17, &e);
    g_assert_cmpuint(e.type, ==, QROCE_EQE_QP_FATAL);
    g_assert_cmpuint(le32_to_cpu(e.handle), ==, qp[17]);
    stop(&t);
}

#undef M


/* ---- the audit of 30bbaa3: one test per finding (docs/security.md) ---- */

#define M(x) QROCE_QP_ATTR_##x

static void qp_connect_ex(QRoceTest *t, uint32_t qpn, uint32_t dest,
                          uint32_t my_psn, uint32_t dest_psn,
                          uint8_t rnr_timer, uint8_t timeout, uint8_t retry)
{
    struct qroce_cmd c;

    memset(&c, 0, sizeof(c));
    c.modify_qp.access_flags = cpu_to_le32(QROCE_ACCESS_LOCAL_WRITE |
                                           QROCE_ACCESS_REMOTE_WRITE |
                                           QROCE_ACCESS_REMOTE_READ);
    g_assert_cmpuint(modify(t, qpn, RC_INIT, QROCE_QPS_INIT, &c), ==, 0);
    memset(&c, 0, sizeof(c));
    c.modify_qp.path_mtu = QROCE_MTU_256;
    c.modify_qp.dest_qpn = cpu_to_le32(dest);
    c.modify_qp.rq_psn = cpu_to_le32(dest_psn);
    c.modify_qp.min_rnr_timer = rnr_timer;
    c.modify_qp.max_dest_rd_atomic = 1;
    self_av(&c.modify_qp.av);
    g_assert_cmpuint(modify(t, qpn, RC_RTR, QROCE_QPS_RTR, &c), ==, 0);
    memset(&c, 0, sizeof(c));
    c.modify_qp.timeout = timeout;
    c.modify_qp.retry_cnt = retry;
    c.modify_qp.rnr_retry = 7;
    c.modify_qp.max_rd_atomic = 1;
    c.modify_qp.sq_psn = cpu_to_le32(my_psn);
    g_assert_cmpuint(modify(t, qpn, RC_RTS, QROCE_QPS_RTS, &c), ==, 0);
}

/* Wait until counter @n reaches at least @v. */
static void wait_cnt(QRoceTest *t, int n, uint32_t v)
{
    int i;

    for (i = 0; i < 5000 && rd(t, QROCE_REG_CNT(n)) < v; i++) {
        g_usleep(1000);
    }
    g_assert_cmpuint(rd(t, QROCE_REG_CNT(n)), >=, v);
}

/* The next CQE of @qpn's send queue in a 64-entry CQ, from entry *@idx. */
static void next_send_cqe(QRoceTest *t, uint64_t ring, uint32_t *idx,
                          uint32_t qpn, struct qroce_cqe *cqe)
{
    for (;;) {
        wait_entry(t, ring, sizeof(*cqe), 6, (*idx)++, cqe);
        if (le32_to_cpu(cqe->qpn) == qpn && (cqe->flags & QROCE_CQE_F_SQ)) {
            return;
        }
    }
}

/*
 * Finding 1: a message is sent from the QP's copy of its WQE.  A 4 KiB
 * WRITE with immediate stops at its last packet (RNR: no RECV yet); the
 * guest rewrites the WQE as 8 bytes of inline data and another QP sends
 * meanwhile.  The message must resume where it stopped, with the bytes of
 * the WQE as it was posted.
 */
static void test_audit_wqe_snapshot(void)
{
    QRoceTest t;
    struct qroce_send_wqe h = { .opcode = QROCE_WR_RDMA_WRITE_IMM,
                                .flags = QROCE_WQE_SIGNALED };
    struct {
        struct qroce_send_wqe h;
        uint8_t inl[8];
    } evil = {};
    struct qroce_cqe cqe;
    uint64_t cq, buf, tgt, sqa, rqa, sqb, rqb;
    uint32_t pdn, cqn, key, rkey, a, b, idx = 0, i;
    uint8_t pat[4096], got[4096];

    loopback_setup(&t, &pdn, &cqn, &cq, &buf, &key);
    tgt = page(&t, 2);
    rkey = mk_mr(&t, pdn, tgt, 2, QROCE_ACCESS_LOCAL_WRITE |
                 QROCE_ACCESS_REMOTE_WRITE);
    g_assert_cmpuint(mk_qp_rings(&t, QROCE_QPT_RC, pdn, cqn, cqn, 0, &a, &sqa,
                                 &rqa), ==, 0);
    g_assert_cmpuint(mk_qp_rings(&t, QROCE_QPT_RC, pdn, cqn, cqn, 0, &b, &sqb,
                                 &rqb), ==, 0);
    /* B's RNR NAKs ask for 655 ms (timer 0): time to rewrite the WQE */
    qp_connect_ex(&t, a, b, 100, 200, 1, 14, 7);
    qp_connect_ex(&t, b, a, 200, 100, 0, 14, 7);
    for (i = 0; i < sizeof(pat); i++) {
        pat[i] = i * 29 + 3;
    }
    qtest_memwrite(t.qts, buf, pat, sizeof(pat));
    h.rdma.remote_addr = cpu_to_le64(tgt);
    h.rdma.rkey = cpu_to_le32(rkey);
    put_send_wqe(&t, sqa, 0, &h, buf, sizeof(pat), key);
    qpci_io_writeq(t.dev, t.db, QROCE_DB_SQ, qroce_db_value(a, 1));
    wait_cnt(&t, QROCE_CNT_ROCE_RNR_NAKS, 1);

    evil.h = h;
    evil.h.flags |= QROCE_WQE_INLINE;
    evil.h.inline_len = cpu_to_le32(8);
    qtest_memwrite(t.qts, sqa, &evil, sizeof(evil));
    /* another QP segments a message meanwhile */
    h.opcode = QROCE_WR_RDMA_WRITE;
    h.rdma.remote_addr = cpu_to_le64(tgt + 4096);
    put_send_wqe(&t, sqb, 0, &h, buf + 4096, 1000, key);
    qpci_io_writeq(t.dev, t.db, QROCE_DB_SQ, qroce_db_value(b, 1));
    next_send_cqe(&t, cq, &idx, b, &cqe);
    g_assert_cmpuint(cqe.status, ==, QROCE_WC_SUCCESS);

    post_recv(&t, rqb, 0, buf + 4096, 64, key);
    qpci_io_writeq(t.dev, t.db, QROCE_DB_RQ, qroce_db_value(b, 1));
    qtest_clock_step(t.qts, 700 * 1000 * 1000);     /* the RNR timer */
    next_send_cqe(&t, cq, &idx, a, &cqe);
    g_assert_cmpuint(cqe.status, ==, QROCE_WC_SUCCESS);
    g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, sizeof(pat));
    qtest_memread(t.qts, tgt, got, sizeof(got));
    g_assert_true(!memcmp(got, pat, sizeof(got)));
    stop(&t);
}

/* Finding 2: buffer tables cover exactly their object; a device-wide cap. */
static void test_audit_bt_limits(void)
{
    QRoceTest t;
    struct qroce_cmd c;
    uint64_t eq, buf;
    uint32_t out[6], pdn;

    start(&t, "-global qroce.max-bt-pages=64");
    enable(&t);
    g_assert_cmpuint(simple(&t, QROCE_CMD_ALLOC_PD, 0, out), ==, 0);
    pdn = out[0];
    mk_eq(&t, 1, &eq);
    memset(&c, 0, sizeof(c));
    c.hdr.opcode = QROCE_CMD_CREATE_CQ;
    c.create_cq.eqn = cpu_to_le32(1);
    c.create_cq.log2_entries = 6;
    c.create_cq.ring = (struct qroce_bt){ cpu_to_le64(page(&t, 1)),
                                          cpu_to_le32(1u << 20), 12,
                                          QROCE_BT_CONTIG, 0 };
    g_assert_cmpuint(cmd(&t, &c, NULL), ==, QROCE_CMD_ERR_PARAM);
    memset(&c, 0, sizeof(c));
    buf = page(&t, 8);
    c.hdr.opcode = QROCE_CMD_REG_MR;
    c.reg_mr.pdn = cpu_to_le32(pdn);
    c.reg_mr.iova = cpu_to_le64(buf);
    c.reg_mr.length = cpu_to_le64(4096);
    c.reg_mr.pages = (struct qroce_bt){ cpu_to_le64(buf),
                                        cpu_to_le32(1u << 20), 12,
                                        QROCE_BT_CONTIG, 0 };
    g_assert_cmpuint(cmd(&t, &c, NULL), ==, QROCE_CMD_ERR_PARAM);
    /* 64 pages in all: the EQ holds one, so 64 more do not fit */
    c.reg_mr.length = cpu_to_le64(64 * 4096);
    c.reg_mr.pages.npages = cpu_to_le32(64);
    g_assert_cmpuint(cmd(&t, &c, NULL), ==, QROCE_CMD_ERR_NORES);
    c.reg_mr.length = cpu_to_le64(8 * 4096);
    c.reg_mr.pages.npages = cpu_to_le32(8);
    g_assert_cmpuint(cmd(&t, &c, NULL), ==, QROCE_CMD_OK);
    stop(&t);
}

/*
 * Finding 3: a doorbell only records.  A 16384-WQE SQ of a QP in ERR is
 * flushed by the engine, not inside the MMIO write: right after the
 * doorbell the last flush CQE is not there yet; later every one is.
 */
static void test_audit_doorbell_budget(void)
{
    QRoceTest t;
    struct qroce_cmd c = { .hdr.opcode = QROCE_CMD_CREATE_QP };
    struct qroce_cqe cqe;
    uint64_t eq, cq, sq;
    uint32_t out[6], pdn, cqn, qpn;

    start(&t, "");
    enable(&t);
    g_assert_cmpuint(simple(&t, QROCE_CMD_ALLOC_PD, 0, out), ==, 0);
    pdn = out[0];
    mk_eq(&t, 1, &eq);
    cqn = mk_cq_ring(&t, 1, 15, &cq);
    sq = page(&t, 256);
    c.create_qp.pdn = cpu_to_le32(pdn);
    c.create_qp.send_cqn = cpu_to_le32(cqn);
    c.create_qp.recv_cqn = cpu_to_le32(cqn);
    c.create_qp.type = QROCE_QPT_RC;
    c.create_qp.sq_log2_entries = 14;
    c.create_qp.sq_wqe_shift = 6;
    c.create_qp.rq_log2_entries = 4;
    c.create_qp.rq_wqe_shift = 5;
    c.create_qp.sq = (struct qroce_bt){ cpu_to_le64(sq), cpu_to_le32(256), 12,
                                        QROCE_BT_CONTIG, 0 };
    c.create_qp.rq = (struct qroce_bt){ cpu_to_le64(page(&t, 1)),
                                        cpu_to_le32(1), 12,
                                        QROCE_BT_CONTIG, 0 };
    g_assert_cmpuint(cmd(&t, &c, out), ==, QROCE_CMD_OK);
    qpn = out[0];
    g_assert_cmpuint(modify(&t, qpn, RC_INIT, QROCE_QPS_INIT, NULL), ==, 0);
    g_assert_cmpuint(modify(&t, qpn, QROCE_QP_ATTR_STATE, QROCE_QPS_ERR,
                            NULL), ==, 0);
    qpci_io_writeq(t.dev, t.db, QROCE_DB_SQ, qroce_db_value(qpn, 16384));
    g_assert_false(entry_ready(&t, cq, sizeof(cqe), 15, 16383));
    wait_entry(&t, cq, sizeof(cqe), 15, 16383, &cqe);
    g_assert_cmpuint(cqe.status, ==, QROCE_WC_WR_FLUSH_ERR);
    g_assert_cmpuint(le32_to_cpu(cqe.wqe_index), ==, 16383);
    stop(&t);
}

/*
 * Finding 4: an SQ producer index behind the WQEs already sent is a bad
 * doorbell (QP to ERR), not an order to send WQEs never posted.
 */
static void test_audit_sq_pi_back(void)
{
    QRoceTest t;
    uint64_t cq, buf, sqa, rqa, sqb, rqb;
    uint32_t pdn, cqn, key, a, b, bad, tx;

    loopback_setup(&t, &pdn, &cqn, &cq, &buf, &key);
    g_assert_cmpuint(mk_qp_rings(&t, QROCE_QPT_RC, pdn, cqn, cqn, 0, &a, &sqa,
                                 &rqa), ==, 0);
    g_assert_cmpuint(mk_qp_rings(&t, QROCE_QPT_RC, pdn, cqn, cqn, 0, &b, &sqb,
                                 &rqb), ==, 0);
    qp_connect_ex(&t, a, b, 100, 200, 1, 14, 7);   /* B stays in RESET */
    post_send(&t, sqa, 0, buf, 10, key, QROCE_WQE_SIGNALED);
    post_send(&t, sqa, 1, buf, 10, key, QROCE_WQE_SIGNALED);
    post_send(&t, sqa, 2, buf, 10, key, QROCE_WQE_SIGNALED);
    qpci_io_writeq(t.dev, t.db, QROCE_DB_SQ, qroce_db_value(a, 3));
    wait_cnt(&t, QROCE_CNT_ROCE_TX_PKTS, 3);
    bad = rd(&t, QROCE_REG_CNT(QROCE_CNT_BAD_DOORBELLS));
    qpci_io_writeq(t.dev, t.db, QROCE_DB_SQ, qroce_db_value(a, 1));
    g_assert_cmpuint(rd(&t, QROCE_REG_CNT(QROCE_CNT_BAD_DOORBELLS)), ==,
                     bad + 1);
    g_assert_cmpuint(query_state(&t, a), ==, QROCE_QPS_ERR);
    tx = rd(&t, QROCE_REG_CNT(QROCE_CNT_ROCE_TX_PKTS));
    g_assert_cmpuint(tx, <=, 4);
    stop(&t);
}

/*
 * Findings 5 and 7: a CQ whose ring is the device's own doorbell BAR.  A
 * QP on it exhausts its retries (the timer path): the error CQE is not
 * written into MMIO (no stray doorbell, no DMA from the timer) and the CQ
 * reports CQ_ERR.
 */
static void test_audit_dma_mmio(void)
{
    QRoceTest t;
    struct qroce_cmd c = { .hdr.opcode = QROCE_CMD_CREATE_CQ };
    struct qroce_eqe e;
    uint64_t eq0, eq1, buf, sq, rq, bar;
    uint32_t out[6], pdn, cqn, mmio_cqn, key, a, bad;

    start(&t, "");
    enable(&t);
    g_assert_cmpuint(simple(&t, QROCE_CMD_ALLOC_PD, 0, out), ==, 0);
    pdn = out[0];
    mk_eq(&t, 0, &eq0);
    mk_eq(&t, 1, &eq1);
    set_gid0(&t);
    cqn = mk_cq(&t, 1);
    bar = t.db.addr;
    g_assert_cmphex(bar & 0xfff, ==, 0);
    c.create_cq.eqn = cpu_to_le32(1);
    c.create_cq.log2_entries = 6;
    c.create_cq.ring = (struct qroce_bt){ cpu_to_le64(bar), cpu_to_le32(1), 12,
                                          QROCE_BT_CONTIG, 0 };
    g_assert_cmpuint(cmd(&t, &c, out), ==, QROCE_CMD_OK);
    mmio_cqn = out[0];
    buf = page(&t, 1);
    key = mk_mr(&t, pdn, buf, 1, QROCE_ACCESS_LOCAL_WRITE);
    g_assert_cmpuint(mk_qp_rings(&t, QROCE_QPT_RC, pdn, mmio_cqn, cqn, 0, &a,
                                 &sq, &rq), ==, 0);
    /* to a QP that does not exist: every try is lost; no retries */
    qp_connect_ex(&t, a, 999, 100, 200, 1, 1, 0);
    bad = rd(&t, QROCE_REG_CNT(QROCE_CNT_BAD_DOORBELLS));
    post_send(&t, sq, 0, buf, 10, key, QROCE_WQE_SIGNALED);
    qpci_io_writeq(t.dev, t.db, QROCE_DB_SQ, qroce_db_value(a, 1));
    qtest_clock_step(t.qts, 100 * 1000 * 1000);     /* the retry timer */
    wait_entry(&t, eq0, sizeof(e), 8, 0, &e);
    g_assert_cmpuint(e.type, ==, QROCE_EQE_CQ_ERR);
    g_assert_cmpuint(le32_to_cpu(e.handle), ==, mmio_cqn);
    g_assert_cmpuint(rd(&t, QROCE_REG_CNT(QROCE_CNT_BAD_DOORBELLS)), ==, bad);
    stop(&t);
}

/* Finding 6: CMDQ_LOG2 out of range is refused when written. */
static void test_audit_cmdq_log2(void)
{
    QRoceTest t;

    start(&t, "");
    wr(&t, QROCE_REG_CTRL, QROCE_CTRL_RESET);
    wr(&t, QROCE_REG_CMDQ_LOG2, 40);
    g_assert_cmpuint(rd(&t, QROCE_REG_CMDQ_LOG2), ==, 0);
    wr(&t, QROCE_REG_CMDQ_PI, 1);           /* not enabled: ignored */
    wr(&t, QROCE_REG_CMDQ_BASE_LO, 0x100000);
    wr(&t, QROCE_REG_CMDQ_CQ_LO, 0x101000);
    wr(&t, QROCE_REG_CTRL, QROCE_CTRL_ENABLE);
    g_assert_cmphex(rd(&t, QROCE_REG_STATUS) & QROCE_STATUS_FATAL, ==,
                    QROCE_STATUS_FATAL);
    g_assert_cmpuint(rd(&t, QROCE_REG_FATAL_CODE), ==,
                     QROCE_FATAL_CMDQ_CONFIG);
    stop(&t);
}

/* Finding 7: payload DMA from an address that is not guest RAM fails. */
static void test_audit_dma_hole(void)
{
    QRoceTest t;
    struct qroce_cmd c = { .hdr.opcode = QROCE_CMD_REG_MR };
    struct qroce_cqe cqe;
    uint64_t cq, buf, sqa, rqa, sqb, rqb, hole = 0x4000000000ULL;
    uint32_t out[6], pdn, cqn, key, hkey, a, b, idx = 0;

    loopback_setup(&t, &pdn, &cqn, &cq, &buf, &key);
    c.reg_mr.pdn = cpu_to_le32(pdn);
    c.reg_mr.access = cpu_to_le32(QROCE_ACCESS_LOCAL_WRITE);
    c.reg_mr.iova = cpu_to_le64(hole);
    c.reg_mr.length = cpu_to_le64(4096);
    c.reg_mr.pages = (struct qroce_bt){ 0, cpu_to_le32(1), 12,
                                        QROCE_BT_INLINE, 0 };
    c.reg_mr.inline_pages[0] = cpu_to_le64(hole);
    g_assert_cmpuint(cmd(&t, &c, out), ==, QROCE_CMD_OK);
    hkey = out[0];
    g_assert_cmpuint(mk_qp_rings(&t, QROCE_QPT_RC, pdn, cqn, cqn, 0, &a, &sqa,
                                 &rqa), ==, 0);
    g_assert_cmpuint(mk_qp_rings(&t, QROCE_QPT_RC, pdn, cqn, cqn, 0, &b, &sqb,
                                 &rqb), ==, 0);
    qp_connect_ex(&t, a, b, 100, 200, 1, 14, 7);
    qp_connect_ex(&t, b, a, 200, 100, 1, 14, 7);
    post_recv(&t, rqb, 0, buf, 4096, key);
    qpci_io_writeq(t.dev, t.db, QROCE_DB_RQ, qroce_db_value(b, 1));
    post_send(&t, sqa, 0, hole, 100, hkey, QROCE_WQE_SIGNALED);
    qpci_io_writeq(t.dev, t.db, QROCE_DB_SQ, qroce_db_value(a, 1));
    next_send_cqe(&t, cq, &idx, a, &cqe);
    g_assert_cmpuint(cqe.status, ==, QROCE_WC_LOC_PROT_ERR);
    stop(&t);
}

/*
 * Finding 9: keys and QPNs come back late.  300 registrations of one MR
 * slot's worth give 300 different keys; three QPs created and destroyed
 * in turn get three QPNs.
 */
static void test_audit_key_reuse(void)
{
    QRoceTest t;
    g_autoptr(GHashTable) keys = g_hash_table_new(NULL, NULL);
    uint64_t cq, buf;
    uint32_t pdn, cqn, key, k, qpn[3], i;

    loopback_setup(&t, &pdn, &cqn, &cq, &buf, &key);
    for (i = 0; i < 300; i++) {
        k = mk_mr(&t, pdn, buf, 1, QROCE_ACCESS_LOCAL_WRITE);
        g_assert_false(g_hash_table_contains(keys, GUINT_TO_POINTER(k)));
        g_hash_table_add(keys, GUINT_TO_POINTER(k));
        g_assert_cmpuint(simple(&t, QROCE_CMD_DEREG_MR, k, NULL), ==, 0);
    }
    for (i = 0; i < 3; i++) {
        g_assert_cmpuint(mk_qp(&t, QROCE_QPT_RC, pdn, cqn, 0, &qpn[i]), ==, 0);
        g_assert_cmpuint(simple(&t, QROCE_CMD_DESTROY_QP, qpn[i], NULL), ==,
                         0);
    }
    g_assert_cmpuint(qpn[0], !=, qpn[1]);
    g_assert_cmpuint(qpn[1], !=, qpn[2]);
    g_assert_cmpuint(qpn[0], !=, qpn[2]);
    stop(&t);
}
#undef M

/* ---- Ethernet function, through a -netdev dgram the test is peer of ---- */

static int udp_socket(uint16_t *port)
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

static uint16_t desc_flags(QRoceTest *t, uint64_t ring, unsigned i)
{
    struct qroce_eth_desc d;

    qtest_memread(t->qts, ring + i * sizeof(d), &d, sizeof(d));
    return le16_to_cpu(d.flags);
}

static void put_desc(QRoceTest *t, uint64_t ring, unsigned i, uint64_t addr,
                     uint16_t len)
{
    struct qroce_eth_desc d = { cpu_to_le64(addr), cpu_to_le16(len), 0, 0 };

    qtest_memwrite(t->qts, ring + i * sizeof(d), &d, sizeof(d));
}

static void wait_reg(QRoceTest *t, uint32_t reg, uint32_t val)
{
    int i;

    for (i = 0; i < 5000 && rd(t, reg) != val; i++) {
        g_usleep(1000);
    }
    g_assert_cmpuint(rd(t, reg), ==, val);
}

/* test_ethernet's end of the wire, made before its QEMU starts. */
static int g_eth_fd;

static char *eth_prepare(void)
{
    uint16_t myport;

    g_eth_fd = udp_socket(&myport);
    return g_strdup_printf("-netdev dgram,id=n0,local.type=inet,"
                           "local.host=127.0.0.1,local.port=0,"
                           "remote.type=inet,remote.host=127.0.0.1,"
                           "remote.port=%u -global qroce.netdev=n0", myport);
}

static void test_ethernet(void)
{
    QRoceTest t;
    int fd = g_eth_fd;
    const char *args = g_extra;
    uint8_t frame[1514], got[2048];
    struct sockaddr_in qemu_addr;
    socklen_t alen = sizeof(qemu_addr);
    uint64_t txr, rxr, buf, rbuf[3];
    struct qroce_eth_desc d;
    struct timeval tv = { .tv_sec = 10 };
    ssize_t n;
    int i;

    start(&t, args);
    /* a netdev: the link is up */
    g_assert_cmphex(rd(&t, QROCE_REG_PORT_STATUS) & QROCE_PORT_LINK_UP, ==,
                    QROCE_PORT_LINK_UP);
    enable(&t);
    txr = page(&t, 1);
    rxr = page(&t, 1);
    buf = page(&t, 1);
    wr(&t, QROCE_REG_TXQ_BASE_LO, txr);
    wr(&t, QROCE_REG_TXQ_BASE_HI, txr >> 32);
    wr(&t, QROCE_REG_TXQ_LOG2, 3);
    wr(&t, QROCE_REG_RXQ_BASE_LO, rxr);
    wr(&t, QROCE_REG_RXQ_BASE_HI, rxr >> 32);
    wr(&t, QROCE_REG_RXQ_LOG2, 20);             /* out of range: ignored */
    g_assert_cmpuint(rd(&t, QROCE_REG_RXQ_LOG2), ==, 0);
    wr(&t, QROCE_REG_RXQ_LOG2, 3);
    wr(&t, QROCE_REG_ETH_CTRL, QROCE_ETH_CTRL_TX_EN | QROCE_ETH_CTRL_RX_EN);
    /* ring geometry is frozen while the ring is on */
    wr(&t, QROCE_REG_TXQ_LOG2, 4);
    g_assert_cmpuint(rd(&t, QROCE_REG_TXQ_LOG2), ==, 3);

    /* TX: a good frame, then one too long, then one shorter than a header */
    for (i = 0; i < sizeof(frame); i++) {
        frame[i] = i * 7;
    }
    memcpy(frame, "\x52\x54\x00\xaa\xbb\xcc\x52\x54\x00\x12\x34\x56\x08\x00",
           14);
    qtest_memwrite(t.qts, buf, frame, sizeof(frame));
    put_desc(&t, txr, 0, buf, sizeof(frame));
    put_desc(&t, txr, 1, buf, QROCE_ETH_MAX_FRAME + 1);
    put_desc(&t, txr, 2, buf, 10);
    wr(&t, QROCE_REG_TXQ_PI, 9);                /* more than the ring */
    g_assert_cmpuint(rd(&t, QROCE_REG_TXQ_CI), ==, 0);
    wr(&t, QROCE_REG_TXQ_PI, 3);
    wait_reg(&t, QROCE_REG_TXQ_CI, 3);
    g_assert_cmphex(desc_flags(&t, txr, 0), ==, QROCE_ETH_DESC_DONE);
    g_assert_cmphex(desc_flags(&t, txr, 1), ==,
                    QROCE_ETH_DESC_DONE | QROCE_ETH_DESC_ERR);
    g_assert_cmphex(desc_flags(&t, txr, 2), ==,
                    QROCE_ETH_DESC_DONE | QROCE_ETH_DESC_ERR);
    g_assert_cmphex(rd(&t, QROCE_REG_ETH_IRQ) & QROCE_ETH_IRQ_TX, ==,
                    QROCE_ETH_IRQ_TX);
    wr(&t, QROCE_REG_ETH_IRQ, QROCE_ETH_IRQ_TX);
    g_assert_cmphex(rd(&t, QROCE_REG_ETH_IRQ) & QROCE_ETH_IRQ_TX, ==, 0);
    g_assert_cmpuint(rd(&t, QROCE_REG_CNT(QROCE_CNT_ETH_TX_FRAMES)), ==, 1);
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    n = recvfrom(fd, got, sizeof(got), 0, (struct sockaddr *)&qemu_addr,
                 &alen);
    g_assert_cmpint(n, ==, sizeof(frame));
    g_assert_true(!memcmp(got, frame, sizeof(frame)));

    /* RX: no buffer posted yet -> dropped and counted */
    memcpy(frame, "\x52\x54\x00\x12\x34\x56\x52\x54\x00\xaa\xbb\xcc\x08\x00",
           14);
    g_assert_cmpint(sendto(fd, frame, 100, 0, (struct sockaddr *)&qemu_addr,
                           alen), ==, 100);
    wait_reg(&t, QROCE_REG_CNT(QROCE_CNT_ETH_RX_DROPS), 1);
    /* post a 2 KiB buffer and a 64-byte one */
    rbuf[0] = buf;
    rbuf[1] = buf + 2048;
    put_desc(&t, rxr, 0, rbuf[0], 2048);
    put_desc(&t, rxr, 1, rbuf[1], 64);
    wr(&t, QROCE_REG_RXQ_PI, 2);
    g_assert_cmpint(sendto(fd, frame, sizeof(frame), 0,
                           (struct sockaddr *)&qemu_addr, alen), ==,
                    sizeof(frame));
    wait_reg(&t, QROCE_REG_RXQ_CI, 1);
    qtest_memread(t.qts, rxr, &d, sizeof(d));
    g_assert_cmpuint(le16_to_cpu(d.len), ==, sizeof(frame));
    g_assert_cmphex(le16_to_cpu(d.flags), ==, QROCE_ETH_DESC_DONE);
    qtest_memread(t.qts, rbuf[0], got, sizeof(frame));
    g_assert_true(!memcmp(got, frame, sizeof(frame)));
    g_assert_cmphex(rd(&t, QROCE_REG_ETH_IRQ) & QROCE_ETH_IRQ_RX, ==,
                    QROCE_ETH_IRQ_RX);
    /* a frame for another MAC is filtered; then truncation into 64 bytes */
    frame[5] = 0x57;
    sendto(fd, frame, 200, 0, (struct sockaddr *)&qemu_addr, alen);
    frame[5] = 0x56;
    sendto(fd, frame, 200, 0, (struct sockaddr *)&qemu_addr, alen);
    wait_reg(&t, QROCE_REG_RXQ_CI, 2);
    qtest_memread(t.qts, rxr + sizeof(d), &d, sizeof(d));
    g_assert_cmpuint(le16_to_cpu(d.len), ==, 64);
    g_assert_cmphex(le16_to_cpu(d.flags), ==,
                    QROCE_ETH_DESC_DONE | QROCE_ETH_DESC_ERR);
    g_assert_cmpuint(rd(&t, QROCE_REG_CNT(QROCE_CNT_ETH_RX_FRAMES)), ==, 2);
    /* RESET turns the rings off */
    wr(&t, QROCE_REG_CTRL, QROCE_CTRL_RESET);
    g_assert_cmpuint(rd(&t, QROCE_REG_ETH_CTRL), ==, 0);
    g_assert_cmpuint(rd(&t, QROCE_REG_RXQ_CI), ==, 0);
    close(fd);
    stop(&t);
}

/* SRQ objects: commands, their checks and the SRQ doorbell. */


/*
 * The wire fault knobs at run time (qom-set): with every frame dropped a
 * SEND is not delivered and the drops are counted; with the knob back at
 * 0 the retry timer sends it again and it completes.
 */
static void test_fault_knobs(void)
{
    QRoceTest t;
    QDict *rsp;
    struct qroce_cqe cqe;
    uint64_t cq, buf, sqa, rqa, sqb, rqb;
    uint32_t pdn, cqn, key, a, b, idx = 0;
    const char *path = "/machine/peripheral/qroce0";

    loopback_setup(&t, &pdn, &cqn, &cq, &buf, &key);
    g_assert_cmpuint(mk_qp_rings(&t, QROCE_QPT_RC, pdn, cqn, cqn, 0, &a, &sqa,
                                 &rqa), ==, 0);
    g_assert_cmpuint(mk_qp_rings(&t, QROCE_QPT_RC, pdn, cqn, cqn, 0, &b, &sqb,
                                 &rqb), ==, 0);
    qp_connect_ex(&t, a, b, 100, 200, 1, 14, 7);
    qp_connect_ex(&t, b, a, 200, 100, 1, 14, 7);
    rsp = qtest_qmp(t.qts, "{'execute': 'qom-set', 'arguments': {"
                    "'path': %s, 'property': 'tx-drop-ppm', "
                    "'value': 1000000}}", path);
    g_assert(qdict_haskey(rsp, "return"));
    qobject_unref(rsp);
    rsp = qtest_qmp(t.qts, "{'execute': 'qom-get', 'arguments': {"
                    "'path': %s, 'property': 'tx-drop-ppm'}}", path);
    g_assert_cmpint(qdict_get_int(rsp, "return"), ==, 1000000);
    qobject_unref(rsp);

    post_recv(&t, rqb, 0, buf + 4096, 1000, key);
    qpci_io_writeq(t.dev, t.db, QROCE_DB_RQ, qroce_db_value(b, 1));
    post_send(&t, sqa, 0, buf, 1000, key, QROCE_WQE_SIGNALED);
    qpci_io_writeq(t.dev, t.db, QROCE_DB_SQ, qroce_db_value(a, 1));
    wait_cnt(&t, QROCE_CNT_WIRE_FAULTS, 1);
    g_assert_false(entry_ready(&t, cq, sizeof(cqe), 6, 0));
    g_assert_cmpuint(rd(&t, QROCE_REG_CNT(QROCE_CNT_ROCE_RX_PKTS)), ==, 0);

    rsp = qtest_qmp(t.qts, "{'execute': 'qom-set', 'arguments': {"
                    "'path': %s, 'property': 'tx-drop-ppm', 'value': 0}}",
                    path);
    g_assert(qdict_haskey(rsp, "return"));
    qobject_unref(rsp);
    qtest_clock_step(t.qts, 200 * 1000 * 1000);     /* the retry timer */
    next_send_cqe(&t, cq, &idx, a, &cqe);
    g_assert_cmpuint(cqe.status, ==, QROCE_WC_SUCCESS);
    g_assert_cmpuint(rd(&t, QROCE_REG_CNT(QROCE_CNT_ROCE_RETRANS)), >=, 1);
    stop(&t);
}

/* ---- finding 8: frames from a peer on the wire (a -netdev dgram) ---- */

#define M(x) QROCE_QP_ATTR_##x

typedef struct Peer {
    int fd;
    struct sockaddr_in qemu;
    uint8_t mac[6], gid[16], dev_gid[16];
} Peer;

static const uint8_t dev_mac[6] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 };

static void peer_out(Peer *pr, RocePktOut *o, uint32_t dqpn, uint32_t psn,
                     uint8_t opcode)
{
    memset(o, 0, sizeof(*o));
    o->dmac = dev_mac;
    o->smac = pr->mac;
    o->sgid = pr->gid;
    o->dgid = pr->dev_gid;
    o->hop_limit = 64;
    o->sport = 0xc000;
    o->dqpn = dqpn;
    o->psn = psn;
    o->opcode = opcode;
}

/* Send a frame with @len bytes of payload (0x5a); @bad_csum spoils IPv4. */
static void peer_send(Peer *pr, RocePktOut *o, uint32_t len, bool bad_csum)
{
    uint8_t f[2048];
    size_t n;

    memset(f + roce_hdr_len(o->opcode, false), 0x5a, len);
    n = roce_build(f, o, len);
    if (bad_csum) {
        f[ROCE_ETH_HLEN + 10] ^= 0x55;
    }
    g_assert_cmpint(sendto(pr->fd, f, n, 0, (struct sockaddr *)&pr->qemu,
                           sizeof(pr->qemu)), ==, n);
}

/* The next RoCE frame from the device (within 10 s). */
static void peer_recv(Peer *pr, uint8_t *f, RocePktIn *p)
{
    for (;;) {
        ssize_t n = recv(pr->fd, f, 2048, 0);

        g_assert_cmpint(n, >, 0);
        if (roce_parse(f, n, p) == 0) {
            return;
        }
    }
}

/*
 * Start the device on a -netdev dgram whose other end is @pr's socket:
 * the peer is 10.0.0.2 (52:54:00:aa:bb:cc), the device's GID 0 10.0.0.1.
 */
/* The peer of the test running now, made before its QEMU starts. */
static Peer g_peer;

/*
 * The peer's socket and a free port for QEMU's end: the peer is 10.0.0.2
 * (52:54:00:aa:bb:cc), the device's GID 0 10.0.0.1.  The arguments that
 * put the device on a -netdev dgram between them.
 */
static char *peer_prepare(void)
{
    struct timeval tv = { .tv_sec = 10 };
    uint16_t myport, qport;
    int tmp = udp_socket(&qport);
    static const uint8_t mac[6] = { 0x52, 0x54, 0x00, 0xaa, 0xbb, 0xcc };
    Peer *pr = &g_peer;

    memset(pr, 0, sizeof(*pr));
    memcpy(pr->mac, mac, 6);
    close(tmp);                 /* a free port for QEMU's end */
    pr->fd = udp_socket(&myport);
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

/* The device, on the wire to the peer peer_prepare() made. */
static void peer_start(QRoceTest *t, Peer *pr)
{
    *pr = g_peer;
    start(t, g_extra);
}

static void peer_connect(QRoceTest *t, Peer *pr, uint32_t qpn, uint32_t dqpn)
{
    struct qroce_cmd c;

    memset(&c, 0, sizeof(c));
    c.modify_qp.access_flags = cpu_to_le32(QROCE_ACCESS_LOCAL_WRITE |
                                           QROCE_ACCESS_REMOTE_WRITE |
                                           QROCE_ACCESS_REMOTE_READ);
    g_assert_cmpuint(modify(t, qpn, RC_INIT, QROCE_QPS_INIT, &c), ==, 0);
    memset(&c, 0, sizeof(c));
    c.modify_qp.path_mtu = QROCE_MTU_256;
    c.modify_qp.dest_qpn = cpu_to_le32(dqpn);
    c.modify_qp.rq_psn = cpu_to_le32(1000);
    c.modify_qp.max_dest_rd_atomic = 1;
    memcpy(c.modify_qp.av.dgid, pr->gid, 16);
    memcpy(c.modify_qp.av.dmac, pr->mac, 6);
    c.modify_qp.av.hop_limit = 64;
    c.modify_qp.av.net_type = QROCE_NET_IPV4;
    g_assert_cmpuint(modify(t, qpn, RC_RTR, QROCE_QPS_RTR, &c), ==, 0);
    memset(&c, 0, sizeof(c));
    c.modify_qp.timeout = 14;
    c.modify_qp.retry_cnt = 7;
    c.modify_qp.rnr_retry = 7;
    c.modify_qp.max_rd_atomic = 1;
    c.modify_qp.sq_psn = cpu_to_le32(2000);
    g_assert_cmpuint(modify(t, qpn, RC_RTS, QROCE_QPS_RTS, &c), ==, 0);
}

/* ---- back-pressure: a wire that is slower than the device ---- */

#define BP_WQES     16
#define BP_MSG      (256 * 1024)                    /* 1024 frames at 256 */
#define BP_FRAMES   (BP_WQES * BP_MSG / 256)        /* > QEMU's 10000 */

static int g_bp_fd, g_bp_qemu_fd;

/*
 * The device on a stream socket (a socketpair) the test reads only when
 * it chooses: while it does not, the socket fills and the netdev must
 * hold frames back.  The peer's addresses are g_peer's.
 */
static char *bp_prepare(void)
{
    int sv[2];

    g_assert_cmpint(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), ==, 0);
    g_bp_fd = sv[0];
    g_bp_qemu_fd = sv[1];
    g_free(peer_prepare());     /* addresses only: its UDP socket is unused */
    close(g_peer.fd);
    return g_strdup_printf("-netdev socket,id=n0,fd=%d "
                           "-global qroce.netdev=n0", sv[1]);
}

static void read_full(int fd, void *buf, size_t len)
{
    size_t got = 0;

    while (got < len) {
        ssize_t n = recv(fd, (uint8_t *)buf + got, len - got, 0);

        g_assert_cmpint(n, >, 0);
        got += n;
    }
}

/* The next RoCE frame from the stream socket (4-byte length, then it). */
static void bp_recv(uint8_t *f, RocePktIn *p)
{
    uint32_t len;

    for (;;) {
        read_full(g_bp_fd, &len, 4);
        len = be32_to_cpu(len);
        g_assert_cmpuint(len, <=, 2048);
        read_full(g_bp_fd, f, len);
        if (roce_parse(f, len, p) == 0) {
            return;
        }
    }
}

static void uc_peer_connect(QRoceTest *t, Peer *pr, uint32_t qpn)
{
    struct qroce_av av = { .hop_limit = 64, .net_type = QROCE_NET_IPV4 };

    memcpy(av.dgid, pr->gid, 16);
    memcpy(av.dmac, pr->mac, 6);
    uc_connect_av(t, qpn, 0x77, &av, 2000);
}

/*
 * UC SENDs of more frames than QEMU's netdev queue holds, to a peer that
 * does not read yet: the device stops sending (the WQEs stay incomplete,
 * fewer frames built) instead of having the netdev drop them; when the
 * peer reads, every frame arrives, in PSN order, and every WQE completes.
 */
static void test_wire_backpressure(void)
{
    struct timeval tv = { .tv_sec = 10 };
    QRoceTest t;
    Peer pr;
    struct qroce_cqe cqe;
    RocePktIn p;
    uint8_t f[2048];
    uint64_t cq, buf, big, sq, rq;
    uint32_t pdn, cqn, key, bkey, qpn, sent, i;

    peer_start(&t, &pr);
    close(g_bp_qemu_fd);
    setsockopt(g_bp_fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    objs_setup(&t, QROCE_ACCESS_LOCAL_WRITE, &pdn, &cqn, &cq, &buf, &key);
    big = page(&t, BP_MSG / 4096);
    bkey = mk_mr(&t, pdn, big, BP_MSG / 4096, QROCE_ACCESS_LOCAL_WRITE);
    g_assert_cmpuint(mk_qp_rings(&t, QROCE_QPT_UC, pdn, cqn, cqn, 0, &qpn, &sq,
                                 &rq), ==, 0);
    uc_peer_connect(&t, &pr, qpn);
    for (i = 0; i < BP_WQES; i++) {
        post_send(&t, sq, i, big, BP_MSG, bkey, QROCE_WQE_SIGNALED);
    }
    qpci_io_writeq(t.dev, t.db, QROCE_DB_SQ, qroce_db_value(qpn, BP_WQES));

    /* nobody reads: the device stops well short of the last frame */
    g_usleep(300 * 1000);
    sent = rd(&t, QROCE_REG_CNT(QROCE_CNT_ROCE_TX_PKTS));
    g_assert_cmpuint(sent, >, 0);
    g_assert_cmpuint(sent, <, BP_FRAMES / 2);
    g_assert_false(entry_ready(&t, cq, sizeof(cqe), 6, BP_WQES - 1));

    /* the peer reads: all of them arrive, in order, none lost */
    for (i = 0; i < BP_FRAMES; i++) {
        bp_recv(f, &p);
        g_assert_cmpuint(p.psn, ==, (2000 + i) & 0xffffff);
        g_assert_cmphex(p.opcode, ==, ROCE_UC | (i % 1024 == 0 ?
                        ROCE_SEND_FIRST : i % 1024 == 1023 ?
                        ROCE_SEND_LAST : ROCE_SEND_MIDDLE));
    }
    for (i = 0; i < BP_WQES; i++) {
        wait_entry(&t, cq, sizeof(cqe), 6, i, &cqe);
        g_assert_cmpuint(cqe.status, ==, QROCE_WC_SUCCESS);
        g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, BP_MSG);
    }
    g_assert_cmpuint(rd(&t, QROCE_REG_CNT(QROCE_CNT_ROCE_TX_PKTS)), ==,
                     BP_FRAMES);
    close(g_bp_fd);
    stop(&t);
}

/* REREG_MR of @key with @flags, PD @pdn, @access, @npages at @buf. */
static int rereg(QRoceTest *t, uint32_t key, uint32_t flags, uint32_t pdn,
                 uint32_t access, uint64_t buf, uint32_t npages)
{
    struct qroce_cmd c = { .hdr.opcode = QROCE_CMD_REREG_MR };

    c.rereg_mr.key = cpu_to_le32(key);
    c.rereg_mr.flags = cpu_to_le32(flags);
    c.rereg_mr.mr.pdn = cpu_to_le32(pdn);
    c.rereg_mr.mr.access = cpu_to_le32(access);
    c.rereg_mr.mr.iova = cpu_to_le64(buf);
    c.rereg_mr.mr.length = cpu_to_le64(2 << 12);
    c.rereg_mr.mr.pages = (struct qroce_bt){ cpu_to_le64(buf),
                                             cpu_to_le32(npages), 12,
                                             QROCE_BT_CONTIG, 0 };
    return cmd(t, &c, NULL);
}

/*
 * REREG_MR: refused for an unknown key, a fast-registration MR, no or
 * unknown flags, a missing PD, bad access and a page table that is not
 * the MR's; moving an MR to another PD holds that PD (DEALLOC_PD is
 * BUSY) and releases the old one; new pages keep the key.
 */
static void test_rereg_mr(void)
{
    QRoceTest t;
    uint64_t cq, buf, nbuf;
    uint32_t out[6], pdn, pd2, cqn, key, frmr;
    struct qroce_cmd c = { .hdr.opcode = QROCE_CMD_ALLOC_MR };

    loopback_setup(&t, &pdn, &cqn, &cq, &buf, &key);
    g_assert_true(rd(&t, QROCE_REG_FEATURES) & QROCE_FEAT_REREG_MR);
    g_assert_cmpuint(simple(&t, QROCE_CMD_ALLOC_PD, 0, out), ==, 0);
    pd2 = out[0];
    c.alloc_mr.pdn = cpu_to_le32(pdn);
    c.alloc_mr.max_pages = cpu_to_le32(4);
    g_assert_cmpuint(cmd(&t, &c, out), ==, 0);
    frmr = out[0];
    nbuf = page(&t, 2);

    g_assert_cmpuint(rereg(&t, key + 1, QROCE_REREG_PD, pd2, 0, 0, 0), ==,
                     QROCE_CMD_ERR_HANDLE);
    g_assert_cmpuint(rereg(&t, frmr, QROCE_REREG_PD, pd2, 0, 0, 0), ==,
                     QROCE_CMD_ERR_HANDLE);
    g_assert_cmpuint(rereg(&t, key, 0, pd2, 0, 0, 0), ==,
                     QROCE_CMD_ERR_PARAM);
    g_assert_cmpuint(rereg(&t, key, 8, pd2, 0, 0, 0), ==,
                     QROCE_CMD_ERR_PARAM);
    g_assert_cmpuint(rereg(&t, key, QROCE_REREG_PD, 999, 0, 0, 0), ==,
                     QROCE_CMD_ERR_HANDLE);
    g_assert_cmpuint(rereg(&t, key, QROCE_REREG_ACCESS, 0, 0x200, 0, 0), ==,
                     QROCE_CMD_ERR_PARAM);
    g_assert_cmpuint(rereg(&t, key, QROCE_REREG_TRANS, 0, 0, nbuf, 1), ==,
                     QROCE_CMD_ERR_PARAM);      /* 1 page for 8 KiB */

    g_assert_cmpuint(rereg(&t, key, QROCE_REREG_PD, pd2, 0, 0, 0), ==, 0);
    g_assert_cmpuint(simple(&t, QROCE_CMD_DEALLOC_PD, pd2, out), ==,
                     QROCE_CMD_ERR_BUSY);
    g_assert_cmpuint(rereg(&t, key, QROCE_REREG_PD | QROCE_REREG_TRANS |
                           QROCE_REREG_ACCESS, pdn,
                           QROCE_ACCESS_LOCAL_WRITE |
                           QROCE_ACCESS_REMOTE_READ, nbuf, 2), ==, 0);
    g_assert_cmpuint(simple(&t, QROCE_CMD_DEALLOC_PD, pd2, out), ==, 0);
    g_assert_cmpuint(simple(&t, QROCE_CMD_DEREG_MR, key, out), ==, 0);
    stop(&t);
}

/* RESIZE_CQ of @cqn to a new ring of 2^@log2 at @ring, consumer at @ci. */
static int resize_cq(QRoceTest *t, uint32_t cqn, uint32_t ci, uint8_t log2,
                     uint64_t ring, uint8_t rsvd)
{
    struct qroce_cmd c = { .hdr.opcode = QROCE_CMD_RESIZE_CQ };
    uint32_t np = DIV_ROUND_UP((sizeof(struct qroce_cqe) << log2) +
                               sizeof(struct qroce_cq_rec), 4096);

    c.resize_cq.cqn = cpu_to_le32(cqn);
    c.resize_cq.ci = cpu_to_le32(ci);
    c.resize_cq.log2_entries = log2;
    c.resize_cq.rsvd[3] = rsvd;
    c.resize_cq.ring = (struct qroce_bt){ cpu_to_le64(ring), cpu_to_le32(np),
                                          12, QROCE_BT_CONTIG, 0 };
    return cmd(t, &c, NULL);
}

/*
 * RESIZE_CQ: with one of six CQEs taken, the other five move in order to
 * the start of the new ring with first-pass owner bits, and the next CQE
 * follows them; a consumer index ahead of the producer, a ring too small
 * for what is outstanding, a bad size, reserved bits and no such CQ are
 * refused and change nothing.
 */
static void test_cq_resize(void)
{
    QRoceTest t;
    struct qroce_cqe old[6], e;
    uint64_t cq, buf, sqa, rqa, sqb, rqb, nring, small;
    uint32_t pdn, cqn, key, a, b, ahn, i;

    loopback_setup(&t, &pdn, &cqn, &cq, &buf, &key);
    g_assert_true(rd(&t, QROCE_REG_FEATURES) & QROCE_FEAT_RESIZE_CQ);
    ahn = mk_self_ah(&t, pdn);
    ud_qp(&t, QROCE_QPT_UD, pdn, cqn, 0x1111, &a, &sqa, &rqa);
    ud_qp(&t, QROCE_QPT_UD, pdn, cqn, 0x2222, &b, &sqb, &rqb);
    for (i = 0; i < 4; i++) {
        post_recv(&t, rqb, i, buf + 4096, 200, key);
    }
    qpci_io_writeq(t.dev, t.db, QROCE_DB_RQ, qroce_db_value(b, 4));
    for (i = 0; i < 3; i++) {
        post_ud(&t, sqa, i, ahn, b, 0x2222, buf, 100, key);
    }
    qpci_io_writeq(t.dev, t.db, QROCE_DB_SQ, qroce_db_value(a, 3));
    for (i = 0; i < 6; i++) {
        wait_entry(&t, cq, sizeof(e), 6, i, &old[i]);
    }

    nring = page(&t, 1);
    small = page(&t, 1);
    g_assert_cmpuint(resize_cq(&t, cqn, 7, 4, nring, 0), ==,
                     QROCE_CMD_ERR_PARAM);          /* ahead of the producer */
    g_assert_cmpuint(resize_cq(&t, cqn, 1, 2, small, 0), ==,
                     QROCE_CMD_ERR_PARAM);          /* 4 entries for 5 */
    g_assert_cmpuint(resize_cq(&t, cqn, 1, 0, small, 0), ==,
                     QROCE_CMD_ERR_PARAM);
    g_assert_cmpuint(resize_cq(&t, cqn, 1, 4, nring, 1), ==,
                     QROCE_CMD_ERR_PARAM);
    g_assert_cmpuint(resize_cq(&t, 999, 1, 4, nring, 0), ==,
                     QROCE_CMD_ERR_HANDLE);
    g_assert_false(entry_ready(&t, small, sizeof(e), 2, 0));

    g_assert_cmpuint(resize_cq(&t, cqn, 1, 4, nring, 0), ==, QROCE_CMD_OK);
    for (i = 0; i < 5; i++) {
        wait_entry(&t, nring, sizeof(e), 4, i, &e);
        g_assert_true(!memcmp(&e, &old[i + 1], sizeof(e) - 1));
    }
    g_assert_false(entry_ready(&t, nring, sizeof(e), 4, 5));

    /* the next completion follows them in the new ring */
    post_ud(&t, sqa, 3, ahn, b, 0x2222, buf, 100, key);
    qpci_io_writeq(t.dev, t.db, QROCE_DB_SQ, qroce_db_value(a, 4));
    for (i = 5; i < 7; i++) {
        wait_entry(&t, nring, sizeof(e), 4, i, &e);
        g_assert_cmpuint(e.status, ==, QROCE_WC_SUCCESS);
    }
    stop(&t);
}

/* ---- SRQ resize: MODIFY_SRQ with MAX_WR ---- */

/* Is any of the @n bytes of guest memory at @a not zero? */
static bool qroce_nz_guest(QRoceTest *t, uint64_t a, size_t n)
{
    g_autofree uint8_t *p = g_malloc(n);

    qtest_memread(t->qts, a, p, n);
    while (n--) {
        if (p[n]) {
            return true;
        }
    }
    return false;
}

static int srq_resize(QRoceTest *t, uint32_t srqn, uint32_t mask,
                      uint32_t limit, uint8_t log2, uint64_t ring,
                      uint32_t npages, uint8_t rsvd)
{
    struct qroce_cmd c = { .hdr.opcode = QROCE_CMD_MODIFY_SRQ };

    c.modify_srq.srqn = cpu_to_le32(srqn);
    c.modify_srq.limit = cpu_to_le32(limit);
    c.modify_srq.attr_mask = cpu_to_le32(mask);
    c.modify_srq.log2_entries = log2;
    c.modify_srq.rsvd[1] = rsvd;
    c.modify_srq.ring = (struct qroce_bt){ cpu_to_le64(ring),
                                           cpu_to_le32(npages), 12,
                                           QROCE_BT_CONTIG, 0 };
    return cmd(t, &c, NULL);
}

/* RECVs @from..@to-1 (200 bytes each) on an SRQ ring, and its doorbell. */
static void srq_fill(QRoceTest *t, uint64_t ring, uint8_t log2, uint32_t srqn,
                     uint32_t from, uint32_t to, uint64_t buf, uint32_t key)
{
    uint32_t i;

    for (i = from; i < to; i++) {
        put_recv(t, ring, log2, i, buf + 4096 + i * 200, 200, key);
    }
    qpci_io_writeq(t->dev, t->db, QROCE_DB_SRQ, qroce_db_value(srqn, to));
}

/* UD SENDs @from..@to-1 of 100 bytes from QP @a to QP @b, Q_Key 0x2222. */
static void ud_burst(QRoceTest *t, uint64_t sq, uint32_t a, uint32_t ahn,
                     uint32_t b, uint32_t from, uint32_t to, uint64_t buf,
                     uint32_t key)
{
    uint32_t i;

    for (i = from; i < to; i++) {
        post_ud(t, sq, i, ahn, b, 0x2222, buf, 100, key);
    }
    qpci_io_writeq(t->dev, t->db, QROCE_DB_SQ, qroce_db_value(a, to));
}

/* The receive CQE of QP @qpn after CQ index *@ci (others are skipped). */
static void srq_next_recv(QRoceTest *t, uint64_t cq, uint32_t *ci,
                          uint32_t qpn, struct qroce_cqe *e)
{
    do {
        wait_entry(t, cq, sizeof(*e), 6, (*ci)++, e);
    } while (le32_to_cpu(e->qpn) != qpn);
}

/*
 * MODIFY_SRQ with MAX_WR: four RECVs posted on a 4-entry SRQ, two
 * consumed, two more posted; a ring too small for the four left, a bad
 * size, a limit not below the new size, a ring of the wrong size,
 * reserved bits, an unknown attribute and no such SRQ are refused and
 * change nothing; then an 8-entry ring gets them at the slots of their
 * indexes, the old ring is no longer read, and eight SENDs complete on
 * WQEs 2..9 in order.
 */
static void test_srq_resize(void)
{
    QRoceTest t;
    struct qroce_cmd c = { .hdr.opcode = QROCE_CMD_CREATE_SRQ };
    struct qroce_cqe e;
    uint8_t w1[32], w2[32];
    uint64_t cq, buf, sqa, rqa, ring, nring, sqb;
    uint32_t pdn, cqn, key, a, b, ahn, srqn, out[6], i, ci = 0;

    loopback_setup(&t, &pdn, &cqn, &cq, &buf, &key);
    g_assert_true(rd(&t, QROCE_REG_FEATURES) & QROCE_FEAT_RESIZE_SRQ);
    ahn = mk_self_ah(&t, pdn);
    ud_qp(&t, QROCE_QPT_UD, pdn, cqn, 0x1111, &a, &sqa, &rqa);
    ring = page(&t, 1);
    c.create_srq.pdn = cpu_to_le32(pdn);
    c.create_srq.log2_entries = 2;
    c.create_srq.wqe_shift = 5;
    c.create_srq.ring = (struct qroce_bt){ cpu_to_le64(ring), cpu_to_le32(1),
                                           12, QROCE_BT_CONTIG, 0 };
    g_assert_cmpuint(cmd(&t, &c, out), ==, QROCE_CMD_OK);
    srqn = out[0];
    sqb = page(&t, 1);
    memset(&c, 0, sizeof(c));
    c.hdr.opcode = QROCE_CMD_CREATE_QP;
    c.create_qp.pdn = cpu_to_le32(pdn);
    c.create_qp.send_cqn = c.create_qp.recv_cqn = cpu_to_le32(cqn);
    c.create_qp.srqn = cpu_to_le32(srqn);
    c.create_qp.type = QROCE_QPT_UD;
    c.create_qp.flags = QROCE_CREATE_QP_SRQ;
    c.create_qp.sq_log2_entries = 4;
    c.create_qp.sq_wqe_shift = 6;
    c.create_qp.sq = (struct qroce_bt){ cpu_to_le64(sqb), cpu_to_le32(1), 12,
                                        QROCE_BT_CONTIG, 0 };
    g_assert_cmpuint(cmd(&t, &c, out), ==, QROCE_CMD_OK);
    b = out[0];
    ud_ready(&t, b, QROCE_QPT_UD, 0x2222);

    srq_fill(&t, ring, 2, srqn, 0, 4, buf, key);
    ud_burst(&t, sqa, a, ahn, b, 0, 2, buf, key);
    for (i = 0; i < 2; i++) {
        srq_next_recv(&t, cq, &ci, b, &e);
        g_assert_cmpuint(le32_to_cpu(e.wqe_index), ==, i);
        g_assert_true(e.flags & QROCE_CQE_F_SRQ);
    }
    srq_fill(&t, ring, 2, srqn, 4, 6, buf, key);

    nring = page(&t, 1);
    g_assert_cmpuint(srq_resize(&t, srqn, QROCE_SRQ_ATTR_MAX_WR, 0, 1, nring,
                                1, 0), ==, QROCE_CMD_ERR_PARAM); /* 2 < 4 */
    g_assert_cmpuint(srq_resize(&t, srqn, QROCE_SRQ_ATTR_MAX_WR, 0, 0, nring,
                                1, 0), ==, QROCE_CMD_ERR_PARAM);
    g_assert_cmpuint(srq_resize(&t, srqn, QROCE_SRQ_ATTR_MAX_WR, 0,
                                QROCE_WQ_MAX_LOG2 + 1, nring, 1, 0), ==,
                     QROCE_CMD_ERR_PARAM);
    g_assert_cmpuint(srq_resize(&t, srqn, QROCE_SRQ_ATTR_MAX_WR |
                                QROCE_SRQ_ATTR_LIMIT, 8, 3, nring, 1, 0), ==,
                     QROCE_CMD_ERR_PARAM);      /* limit not below 8 */
    g_assert_cmpuint(srq_resize(&t, srqn, QROCE_SRQ_ATTR_MAX_WR, 0, 3, nring,
                                2, 0), ==, QROCE_CMD_ERR_PARAM); /* 2 pages */
    g_assert_cmpuint(srq_resize(&t, srqn, QROCE_SRQ_ATTR_MAX_WR, 0, 3, nring,
                                1, 1), ==, QROCE_CMD_ERR_PARAM);
    g_assert_cmpuint(srq_resize(&t, srqn, 0x4, 0, 3, nring, 1, 0), ==,
                     QROCE_CMD_ERR_PARAM);
    g_assert_cmpuint(srq_resize(&t, srqn + 1, QROCE_SRQ_ATTR_MAX_WR, 0, 3,
                                nring, 1, 0), ==, QROCE_CMD_ERR_HANDLE);
    g_assert_cmpuint(simple(&t, QROCE_CMD_QUERY_SRQ, srqn, out), ==, 0);
    g_assert_cmpuint(out[1], ==, 2);
    g_assert_false(qroce_nz_guest(&t, nring, 256));

    g_assert_cmpuint(srq_resize(&t, srqn, QROCE_SRQ_ATTR_MAX_WR |
                                QROCE_SRQ_ATTR_LIMIT, 3, 3, nring, 1, 0), ==,
                     QROCE_CMD_OK);
    g_assert_cmpuint(simple(&t, QROCE_CMD_QUERY_SRQ, srqn, out), ==, 0);
    g_assert_cmpuint(out[0], ==, 3);
    for (i = 2; i < 6; i++) {
        qtest_memread(t.qts, ring + (i & 3) * 32, w1, 32);
        qtest_memread(t.qts, nring + (i & 7) * 32, w2, 32);
        g_assert_true(!memcmp(w1, w2, 32));
    }
    g_assert_false(qroce_nz_guest(&t, nring, 2 * 32));  /* 0, 1: consumed */
    g_assert_false(qroce_nz_guest(&t, nring + 6 * 32, 2 * 32));
    qtest_memset(t.qts, ring, 0, 4096);     /* the old ring is not read */
    srq_fill(&t, nring, 3, srqn, 6, 10, buf, key);
    ud_burst(&t, sqa, a, ahn, b, 2, 10, buf, key);
    for (i = 2; i < 10; i++) {
        srq_next_recv(&t, cq, &ci, b, &e);
        g_assert_cmpuint(e.status, ==, QROCE_WC_SUCCESS);
        g_assert_cmpuint(le32_to_cpu(e.wqe_index), ==, i);
        g_assert_cmpuint(le32_to_cpu(e.byte_len), ==, 140);
    }
    stop(&t);
}

/* ---- UD multicast: ATTACH_MCAST, DETACH_MCAST, delivery ---- */

static int mcast_cmd(QRoceTest *t, uint8_t op, uint32_t qpn,
                     const uint8_t gid[16], uint32_t rsvd)
{
    struct qroce_cmd c = { .hdr.opcode = op };

    c.mcast.qpn = cpu_to_le32(qpn);
    c.mcast.rsvd = cpu_to_le32(rsvd);
    memcpy(c.mcast.gid, gid, 16);
    return cmd(t, &c, NULL);
}

/* The peer sends a 100-byte UD SEND to group @ip (a.b.c.d) at MAC @mac. */
static void peer_mcast(Peer *pr, const uint8_t ip[4], const uint8_t mac[6],
                       uint32_t qkey)
{
    RocePktOut o;
    uint8_t gid[16] = { [10] = 0xff, [11] = 0xff };

    memcpy(gid + 12, ip, 4);
    peer_out(pr, &o, 0xffffff, 0, ROCE_UD_SEND_ONLY);
    o.dmac = mac;
    o.dgid = gid;
    o.deth_qkey = qkey;
    o.deth_sqp = 0x55;
    peer_send(pr, &o, 100, false);
}

/*
 * A group of two UD QPs gets each multicast packet on both, each taking a
 * RECV; a group of another host, or the right group at a wrong MAC, is
 * not taken; after a detach only the QP left gets it.  Errors: an RC QP,
 * a unicast GID, no such QP, reserved bits, a detach of a QP not
 * attached; attaching twice succeeds.
 */
static void test_mcast(void)
{
    static const uint8_t ip[4] = { 239, 1, 1, 1 }, other[4] = { 239, 9, 9, 9 };
    static const uint8_t mac[6] = { 0x01, 0x00, 0x5e, 0x01, 0x01, 0x01 };
    static const uint8_t mac_other[6] = { 0x01, 0x00, 0x5e, 0x09, 0x09, 0x09 };
    static const uint8_t bad_mac[6] = { 0x01, 0x00, 0x5e, 0x7f, 0x01, 0x01 };
    uint8_t gid[16] = { [10] = 0xff, [11] = 0xff }, ucast[16];
    QRoceTest t;
    Peer pr;
    struct qroce_cqe cqe;
    uint64_t cq, buf, sqa, rqa, sqb, rqb, sqr, rqr;
    uint32_t out[6], pdn, cqn, key, a, b, r, i, ci = 0, seen = 0;

    memcpy(gid + 12, ip, 4);
    memcpy(ucast, gid, 16);
    ucast[12] = 10;
    peer_start(&t, &pr);
    objs_setup(&t, QROCE_ACCESS_LOCAL_WRITE, &pdn, &cqn, &cq, &buf, &key);
    g_assert_true(rd(&t, QROCE_REG_FEATURES) & QROCE_FEAT_MCAST);
    g_assert_cmpuint(rd(&t, QROCE_REG_CAP_MAX_MCAST_GRP), ==, 64);
    g_assert_cmpuint(rd(&t, QROCE_REG_CAP_MAX_MCAST_QP_ATTACH), ==, 8);
    ud_qp(&t, QROCE_QPT_UD, pdn, cqn, 0x1234, &a, &sqa, &rqa);
    ud_qp(&t, QROCE_QPT_UD, pdn, cqn, 0x1234, &b, &sqb, &rqb);
    g_assert_cmpuint(mk_qp_rings(&t, QROCE_QPT_RC, pdn, cqn, cqn, 0, &r, &sqr,
                                 &rqr), ==, 0);

    g_assert_cmpuint(mcast_cmd(&t, QROCE_CMD_ATTACH_MCAST, r, gid, 0), ==,
                     QROCE_CMD_ERR_PARAM);
    g_assert_cmpuint(mcast_cmd(&t, QROCE_CMD_ATTACH_MCAST, a, ucast, 0), ==,
                     QROCE_CMD_ERR_PARAM);
    g_assert_cmpuint(mcast_cmd(&t, QROCE_CMD_ATTACH_MCAST, 999, gid, 0), ==,
                     QROCE_CMD_ERR_HANDLE);
    g_assert_cmpuint(mcast_cmd(&t, QROCE_CMD_ATTACH_MCAST, a, gid, 1), ==,
                     QROCE_CMD_ERR_PARAM);
    g_assert_cmpuint(mcast_cmd(&t, QROCE_CMD_DETACH_MCAST, a, gid, 0), ==,
                     QROCE_CMD_ERR_PARAM);
    g_assert_cmpuint(mcast_cmd(&t, QROCE_CMD_ATTACH_MCAST, a, gid, 0), ==, 0);
    g_assert_cmpuint(mcast_cmd(&t, QROCE_CMD_ATTACH_MCAST, a, gid, 0), ==, 0);
    g_assert_cmpuint(mcast_cmd(&t, QROCE_CMD_ATTACH_MCAST, b, gid, 0), ==, 0);

    for (i = 0; i < 3; i++) {
        post_recv(&t, rqa, i, buf + 256 * i, 256, key);
        post_recv(&t, rqb, i, buf + 4096 + 256 * i, 256, key);
    }
    qpci_io_writeq(t.dev, t.db, QROCE_DB_RQ, qroce_db_value(a, 3));
    qpci_io_writeq(t.dev, t.db, QROCE_DB_RQ, qroce_db_value(b, 3));

    /* another group, then our group at a wrong MAC: neither is taken */
    peer_mcast(&pr, other, mac_other, 0x1234);
    peer_mcast(&pr, ip, bad_mac, 0x1234);
    peer_mcast(&pr, ip, mac, 0x1234);
    for (i = 0; i < 2; i++) {
        wait_entry(&t, cq, sizeof(cqe), 6, ci++, &cqe);
        g_assert_cmpuint(cqe.status, ==, QROCE_WC_SUCCESS);
        g_assert_cmpuint(cqe.opcode, ==, QROCE_CQE_RECV);
        g_assert_cmpuint(le32_to_cpu(cqe.wqe_index), ==, 0);
        g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, 40 + 100);
        g_assert_cmpuint(le32_to_cpu(cqe.src_qp), ==, 0x55);
        r = le32_to_cpu(cqe.qpn);
        seen |= r == a ? 1 : r == b ? 2 : 4;
    }
    g_assert_cmpuint(seen, ==, 3);
    g_usleep(20000);
    g_assert_false(entry_ready(&t, cq, sizeof(cqe), 6, ci));

    /* B leaves: only A gets the next one, with its second RECV */
    g_assert_cmpuint(mcast_cmd(&t, QROCE_CMD_DETACH_MCAST, b, gid, 0), ==, 0);
    g_assert_cmpuint(mcast_cmd(&t, QROCE_CMD_DETACH_MCAST, b, gid, 0), ==,
                     QROCE_CMD_ERR_PARAM);
    peer_mcast(&pr, ip, mac, 0x1234);
    wait_entry(&t, cq, sizeof(cqe), 6, ci++, &cqe);
    g_assert_cmpuint(le32_to_cpu(cqe.qpn), ==, a);
    g_assert_cmpuint(le32_to_cpu(cqe.wqe_index), ==, 1);
    g_usleep(20000);
    g_assert_false(entry_ready(&t, cq, sizeof(cqe), 6, ci));

    /* A destroyed: it leaves the group, which goes; nothing is taken */
    g_assert_cmpuint(simple(&t, QROCE_CMD_DESTROY_QP, a, out), ==, 0);
    g_assert_cmpuint(mcast_cmd(&t, QROCE_CMD_DETACH_MCAST, b, gid, 0), ==,
                     QROCE_CMD_ERR_PARAM);
    peer_mcast(&pr, ip, mac, 0x1234);
    g_usleep(50000);
    g_assert_false(entry_ready(&t, cq, sizeof(cqe), 6, ci));
    close(pr.fd);
    stop(&t);
}


/* CREATE_AH on @pdn to group @gid at @mac: the status, the AH in *@ahn. */
static int mk_mcast_ah(QRoceTest *t, uint32_t pdn, const uint8_t gid[16],
                       const uint8_t mac[6], uint32_t *ahn)
{
    struct qroce_cmd c = { .hdr.opcode = QROCE_CMD_CREATE_AH };
    uint32_t out[6] = {};
    int st;

    c.create_ah.pdn = cpu_to_le32(pdn);
    self_av(&c.create_ah.av);
    memcpy(c.create_ah.av.dgid, gid, 16);
    memcpy(c.create_ah.av.dmac, mac, 6);
    st = cmd(t, &c, out);
    *ahn = out[0];
    return st;
}

/*
 * The device's own multicast sends, as rxe and mlx5 do them: the frame
 * goes on the wire to the group's MAC with DQP 0xFFFFFF, and every QP of
 * the device attached to the group gets a copy, the sender too unless it
 * was created with BLOCK_MCAST_LB (a UD flag only).  The wire's echo of
 * our own frame is not a second copy; a member without a RECV drops its
 * copy of a peer's packet and counts it.  An AH to a group must hold
 * the group's MAC.
 */
static void test_mcast_loop(void)
{
    static const uint8_t ip[4] = { 239, 1, 1, 1 };
    static const uint8_t mac[6] = { 0x01, 0x00, 0x5e, 0x01, 0x01, 0x01 };
    static const uint8_t gid6[16] = { 0xff, 0x0e, [12] = 0x80, 1, 2, 3 };
    static const uint8_t mac6[6] = { 0x33, 0x33, 0x80, 1, 2, 3 };
    uint8_t gid[16] = { [10] = 0xff, [11] = 0xff }, f[2048];
    QRoceTest t;
    Peer pr;
    RocePktOut o;
    RocePktIn p;
    struct qroce_cqe cqe;
    uint64_t cq, buf, sqa, rqa, sqb, rqb, sqr, rqr;
    uint32_t pdn, cqn, key, a, b, r, ahn, i, drops, ci = 0;
    uint32_t got_a = 0, got_b = 0;

    memcpy(gid + 12, ip, 4);
    peer_start(&t, &pr);
    objs_setup(&t, QROCE_ACCESS_LOCAL_WRITE, &pdn, &cqn, &cq, &buf, &key);
    ud_qp(&t, QROCE_QPT_UD, pdn, cqn, 0x1234, &a, &sqa, &rqa);
    qp_flags_extra = QROCE_CREATE_QP_BLOCK_MCAST_LB;
    g_assert_cmpuint(mk_qp_rings(&t, QROCE_QPT_RC, pdn, cqn, cqn, 0, &r, &sqr,
                                 &rqr), ==, QROCE_CMD_ERR_PARAM);
    ud_qp(&t, QROCE_QPT_UD, pdn, cqn, 0x1234, &b, &sqb, &rqb);
    qp_flags_extra = 0;
    g_assert_cmpuint(mcast_cmd(&t, QROCE_CMD_ATTACH_MCAST, a, gid, 0), ==, 0);
    g_assert_cmpuint(mcast_cmd(&t, QROCE_CMD_ATTACH_MCAST, b, gid, 0), ==, 0);
    /* an AH to a group must name the group's MAC (IPv4 01:00:5e, IPv6 33:33) */
    g_assert_cmpuint(mk_mcast_ah(&t, pdn, gid, dev_mac, &ahn), ==,
                     QROCE_CMD_ERR_PARAM);
    g_assert_cmpuint(mk_mcast_ah(&t, pdn, gid6, mac, &ahn), ==,
                     QROCE_CMD_ERR_PARAM);
    g_assert_cmpuint(mk_mcast_ah(&t, pdn, gid6, mac6, &ahn), ==, 0);
    g_assert_cmpuint(mk_mcast_ah(&t, pdn, gid, mac, &ahn), ==, 0);
    for (i = 0; i < 2; i++) {
        post_recv(&t, rqa, i, buf + 4096 + 256 * i, 256, key);
        post_recv(&t, rqb, i, buf + 4096 + 512 + 256 * i, 256, key);
    }
    qpci_io_writeq(t.dev, t.db, QROCE_DB_RQ, qroce_db_value(a, 2));
    qpci_io_writeq(t.dev, t.db, QROCE_DB_RQ, qroce_db_value(b, 2));

    /* A sends: the group's frame on the wire, a copy for A and for B */
    post_ud(&t, sqa, 0, ahn, 0xffffff, 0x1234, buf, 64, key);
    qpci_io_writeq(t.dev, t.db, QROCE_DB_SQ, qroce_db_value(a, 1));
    peer_recv(&pr, f, &p);
    g_assert_true(!memcmp(f, mac, 6));
    g_assert_cmphex(p.dqpn, ==, 0xffffff);
    g_assert_true(!memcmp(p.dgid, gid, 16));
    g_assert_cmpuint(p.deth_sqp, ==, a);
    g_assert_cmpuint(p.paylen, ==, 64);
    for (i = 0; i < 3; i++) {
        wait_entry(&t, cq, sizeof(cqe), 6, ci++, &cqe);
        g_assert_cmpuint(cqe.status, ==, QROCE_WC_SUCCESS);
        if (cqe.flags & QROCE_CQE_F_SQ) {
            g_assert_cmpuint(le32_to_cpu(cqe.qpn), ==, a);
            continue;
        }
        g_assert_cmpuint(le32_to_cpu(cqe.src_qp), ==, a);
        g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, 40 + 64);
        got_a += le32_to_cpu(cqe.qpn) == a;
        got_b += le32_to_cpu(cqe.qpn) == b;
    }
    g_assert_cmpuint(got_a, ==, 1);
    g_assert_cmpuint(got_b, ==, 1);

    /* B blocks its own copies: only A gets B's send */
    post_ud(&t, sqb, 0, ahn, 0xffffff, 0x1234, buf, 64, key);
    qpci_io_writeq(t.dev, t.db, QROCE_DB_SQ, qroce_db_value(b, 1));
    peer_recv(&pr, f, &p);
    g_assert_cmpuint(p.deth_sqp, ==, b);
    for (i = 0; i < 2; i++) {
        wait_entry(&t, cq, sizeof(cqe), 6, ci++, &cqe);
        g_assert_cmpuint(cqe.status, ==, QROCE_WC_SUCCESS);
        g_assert_cmpuint(le32_to_cpu(cqe.qpn), ==,
                         cqe.flags & QROCE_CQE_F_SQ ? b : a);
        if (!(cqe.flags & QROCE_CQE_F_SQ)) {
            g_assert_cmpuint(le32_to_cpu(cqe.src_qp), ==, b);
            g_assert_cmpuint(le32_to_cpu(cqe.wqe_index), ==, 1);
        }
    }
    g_usleep(20000);
    g_assert_false(entry_ready(&t, cq, sizeof(cqe), 6, ci));

    /*
     * An echo of our own frame from the wire is ignored; a peer's frame
     * reaches B (its second RECV) and A, out of RECVs, drops it.
     */
    drops = rd(&t, QROCE_REG_CNT(QROCE_CNT_ROCE_RX_DROPS));
    peer_out(&pr, &o, 0xffffff, 0, ROCE_UD_SEND_ONLY);
    o.dmac = mac;
    o.smac = dev_mac;
    o.dgid = gid;
    o.deth_qkey = 0x1234;
    o.deth_sqp = a;
    peer_send(&pr, &o, 100, false);
    peer_mcast(&pr, ip, mac, 0x1234);
    wait_entry(&t, cq, sizeof(cqe), 6, ci++, &cqe);
    g_assert_cmpuint(le32_to_cpu(cqe.qpn), ==, b);
    g_assert_cmpuint(le32_to_cpu(cqe.src_qp), ==, 0x55);
    g_assert_cmpuint(le32_to_cpu(cqe.wqe_index), ==, 1);
    wait_cnt(&t, QROCE_CNT_ROCE_RX_DROPS, drops + 1);
    g_usleep(20000);
    g_assert_false(entry_ready(&t, cq, sizeof(cqe), 6, ci));
    g_assert_cmpuint(rd(&t, QROCE_REG_CNT(QROCE_CNT_ROCE_RX_DROPS)), ==,
                     drops + 1);
    close(pr.fd);
    stop(&t);
}

/*
 * The group table's bounds are device properties, read back as CAP
 * registers: with 2 groups of 2 QPs, a third QP in a group and a third
 * group are ERR_NORES (attaching a member again still succeeds); a
 * detach or a DESTROY_QP makes room again.
 */
static void test_mcast_limits(void)
{
    uint8_t g1[16] = { [10] = 0xff, [11] = 0xff, 239, 1, 1, 1 };
    uint8_t g2[16], g3[16];
    QRoceTest t;
    uint64_t cq, buf, sq, rq;
    uint32_t out[6], pdn, cqn, key, a, b, c;

    memcpy(g2, g1, 16);
    g2[15] = 2;
    memcpy(g3, g1, 16);
    g3[15] = 3;
    start(&t, "-global qroce.mcast-max-groups=2 "
          "-global qroce.mcast-max-qp-attach=2");
    objs_setup(&t, QROCE_ACCESS_LOCAL_WRITE, &pdn, &cqn, &cq, &buf, &key);
    g_assert_cmpuint(rd(&t, QROCE_REG_CAP_MAX_MCAST_GRP), ==, 2);
    g_assert_cmpuint(rd(&t, QROCE_REG_CAP_MAX_MCAST_QP_ATTACH), ==, 2);
    ud_qp(&t, QROCE_QPT_UD, pdn, cqn, 0x1234, &a, &sq, &rq);
    ud_qp(&t, QROCE_QPT_UD, pdn, cqn, 0x1234, &b, &sq, &rq);
    ud_qp(&t, QROCE_QPT_UD, pdn, cqn, 0x1234, &c, &sq, &rq);

    g_assert_cmpuint(mcast_cmd(&t, QROCE_CMD_ATTACH_MCAST, a, g1, 0), ==, 0);
    g_assert_cmpuint(mcast_cmd(&t, QROCE_CMD_ATTACH_MCAST, b, g1, 0), ==, 0);
    g_assert_cmpuint(mcast_cmd(&t, QROCE_CMD_ATTACH_MCAST, c, g1, 0), ==,
                     QROCE_CMD_ERR_NORES);
    g_assert_cmpuint(mcast_cmd(&t, QROCE_CMD_ATTACH_MCAST, a, g1, 0), ==, 0);
    g_assert_cmpuint(mcast_cmd(&t, QROCE_CMD_ATTACH_MCAST, a, g2, 0), ==, 0);
    g_assert_cmpuint(mcast_cmd(&t, QROCE_CMD_ATTACH_MCAST, a, g3, 0), ==,
                     QROCE_CMD_ERR_NORES);
    g_assert_cmpuint(mcast_cmd(&t, QROCE_CMD_DETACH_MCAST, a, g2, 0), ==, 0);
    g_assert_cmpuint(mcast_cmd(&t, QROCE_CMD_ATTACH_MCAST, a, g3, 0), ==, 0);

    /* A goes: g3 with it, and g1 has room for C */
    g_assert_cmpuint(simple(&t, QROCE_CMD_DESTROY_QP, a, out), ==, 0);
    g_assert_cmpuint(mcast_cmd(&t, QROCE_CMD_ATTACH_MCAST, c, g1, 0), ==, 0);
    g_assert_cmpuint(mcast_cmd(&t, QROCE_CMD_ATTACH_MCAST, c, g2, 0), ==, 0);
    g_assert_cmpuint(mcast_cmd(&t, QROCE_CMD_ATTACH_MCAST, b, g3, 0), ==,
                     QROCE_CMD_ERR_NORES);
    stop(&t);
}

/* The MC_HASH bin of @mac: CRC-32 LE from ~0, no inversion, top 6 bits. */
static unsigned mc_bin(const uint8_t mac[6])
{
    uint32_t crc = 0xffffffff;
    int i, j;

    for (i = 0; i < 6; i++) {
        for (j = 0; j < 8; j++) {
            crc = (crc >> 1) ^ (((crc ^ (mac[i] >> j)) & 1) ? 0xedb88320 : 0);
        }
    }
    return crc >> QROCE_MC_HASH_SHIFT;
}

/* The peer sends a 100-byte IPv4 frame to @mac. */
static void peer_eth(Peer *pr, const uint8_t mac[6])
{
    uint8_t f[100] = { [12] = 0x08 };

    memcpy(f, mac, 6);
    memcpy(f + 6, pr->mac, 6);
    g_assert_cmpint(sendto(pr->fd, f, sizeof(f), 0,
                           (struct sockaddr *)&pr->qemu, sizeof(pr->qemu)),
                    ==, sizeof(f));
}

/*
 * The Ethernet function's receive filter (§11): with MC_FILTER a
 * multicast frame is taken only in a bin set in MC_HASH, or with
 * ALLMULTI or PROMISC; broadcast always; without MC_FILTER every
 * multicast frame, as after reset, which clears MC_HASH.
 */
static void test_eth_mc_filter(void)
{
    static const uint8_t m1[6] = { 0x01, 0x00, 0x5e, 0x00, 0x00, 0x01 };
    static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
    uint8_t m2[6] = { 0x33, 0x33, 0xff, 0x00, 0x00, 0x01 }, got[6];
    QRoceTest t;
    Peer pr;
    uint64_t rxr, buf, bit;
    uint32_t ctrl = QROCE_ETH_CTRL_TX_EN | QROCE_ETH_CTRL_RX_EN;
    unsigned i;

    while (mc_bin(m2) == mc_bin(m1)) {
        m2[5]++;
    }
    bit = 1ULL << mc_bin(m1);
    peer_start(&t, &pr);
    enable(&t);
    rxr = page(&t, 1);
    buf = page(&t, 2);
    wr(&t, QROCE_REG_RXQ_BASE_LO, rxr);
    wr(&t, QROCE_REG_RXQ_BASE_HI, rxr >> 32);
    wr(&t, QROCE_REG_RXQ_LOG2, 3);
    for (i = 0; i < 8; i++) {
        put_desc(&t, rxr, i, buf + 512 * i, 512);
    }
    wr(&t, QROCE_REG_RXQ_PI, 8);
    wr(&t, QROCE_REG_MC_HASH_LO, bit);
    wr(&t, QROCE_REG_MC_HASH_HI, bit >> 32);
    g_assert_cmphex(rd(&t, QROCE_REG_MC_HASH_LO) |
                    (uint64_t)rd(&t, QROCE_REG_MC_HASH_HI) << 32, ==, bit);
    wr(&t, QROCE_REG_ETH_CTRL, ctrl | QROCE_ETH_CTRL_MC_FILTER);

    /* m2 is not taken; m1 and broadcast are, in that order */
    g_assert_cmpuint(rd(&t, QROCE_REG_CNT(QROCE_CNT_ETH_RX_FILTERED)), ==, 0);
    peer_eth(&pr, m2);
    peer_eth(&pr, m1);
    peer_eth(&pr, bcast);
    wait_reg(&t, QROCE_REG_RXQ_CI, 2);
    qtest_memread(t.qts, buf, got, 6);
    g_assert_true(!memcmp(got, m1, 6));
    qtest_memread(t.qts, buf + 512, got, 6);
    g_assert_true(!memcmp(got, bcast, 6));

    /* ALLMULTI, PROMISC, and MC_FILTER off each take m2 */
    wr(&t, QROCE_REG_ETH_CTRL, ctrl | QROCE_ETH_CTRL_MC_FILTER |
       QROCE_ETH_CTRL_ALLMULTI);
    peer_eth(&pr, m2);
    wait_reg(&t, QROCE_REG_RXQ_CI, 3);
    wr(&t, QROCE_REG_ETH_CTRL, ctrl | QROCE_ETH_CTRL_MC_FILTER |
       QROCE_ETH_CTRL_PROMISC);
    peer_eth(&pr, m2);
    wait_reg(&t, QROCE_REG_RXQ_CI, 4);
    wr(&t, QROCE_REG_ETH_CTRL, ctrl);
    peer_eth(&pr, m2);
    wait_reg(&t, QROCE_REG_RXQ_CI, 5);
    for (i = 2; i < 5; i++) {
        qtest_memread(t.qts, buf + 512 * i, got, 6);
        g_assert_true(!memcmp(got, m2, 6));
    }
    g_usleep(20000);
    g_assert_cmpuint(rd(&t, QROCE_REG_RXQ_CI), ==, 5);
    g_assert_cmpuint(rd(&t, QROCE_REG_CNT(QROCE_CNT_ETH_RX_FILTERED)), ==, 1);

    wr(&t, QROCE_REG_CTRL, QROCE_CTRL_RESET);
    g_assert_cmphex(rd(&t, QROCE_REG_MC_HASH_LO), ==, 0);
    g_assert_cmphex(rd(&t, QROCE_REG_MC_HASH_HI), ==, 0);
    close(pr.fd);
    stop(&t);
}
/*
 * Finding 8, receive-path checks: a frame to another MAC and one with a
 * bad IPv4 checksum are not taken (the next good one gets the RECV WQE);
 * a WRITE MIDDLE that reaches the RETH length is a NAK (invalid request);
 * a READ response longer than the path MTU fails the READ.
 */
static void test_audit_rx_frames(void)
{
    QRoceTest t;
    Peer pr;
    struct qroce_send_wqe h = { .opcode = QROCE_WR_RDMA_READ,
                                .flags = QROCE_WQE_SIGNALED };
    struct qroce_cqe cqe;
    RocePktOut o;
    RocePktIn p;
    uint8_t f[2048];
    uint64_t cq, buf, sq, rq, sq2, rq2;
    uint32_t pdn, cqn, key, qpn, qpn2, idx = 0;

    peer_start(&t, &pr);
    objs_setup(&t, QROCE_ACCESS_LOCAL_WRITE | QROCE_ACCESS_REMOTE_WRITE |
               QROCE_ACCESS_REMOTE_READ, &pdn, &cqn, &cq, &buf, &key);
    g_assert_cmpuint(mk_qp_rings(&t, QROCE_QPT_RC, pdn, cqn, cqn, 0, &qpn, &sq,
                                 &rq), ==, 0);
    peer_connect(&t, &pr, qpn, 0x77);
    post_recv(&t, rq, 0, buf, 1024, key);
    post_recv(&t, rq, 1, buf + 1024, 1024, key);
    qpci_io_writeq(t.dev, t.db, QROCE_DB_RQ, qroce_db_value(qpn, 2));

    /* to another MAC: not ours; then the same PSN to us */
    peer_out(&pr, &o, qpn, 1000, ROCE_SEND_ONLY);
    o.dmac = (const uint8_t *)"\x52\x54\x00\x99\x99\x99";
    peer_send(&pr, &o, 100, false);
    peer_out(&pr, &o, qpn, 1000, ROCE_SEND_ONLY);
    o.ackreq = true;
    peer_send(&pr, &o, 200, false);
    peer_recv(&pr, f, &p);
    g_assert_cmphex(p.opcode, ==, ROCE_ACK);
    g_assert_cmphex(p.aeth_syndrome, ==, ROCE_AETH_ACK_NO_CREDIT);
    g_assert_cmpuint(p.psn, ==, 1000);
    wait_entry(&t, cq, sizeof(cqe), 6, idx++, &cqe);
    g_assert_cmpuint(cqe.status, ==, QROCE_WC_SUCCESS);
    g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, 200);

    /* a bad IPv4 header checksum (the ICRC does not cover it) */
    peer_out(&pr, &o, qpn, 1001, ROCE_SEND_ONLY);
    peer_send(&pr, &o, 150, true);
    o.ackreq = true;
    peer_send(&pr, &o, 250, false);
    peer_recv(&pr, f, &p);
    g_assert_cmphex(p.aeth_syndrome, ==, ROCE_AETH_ACK_NO_CREDIT);
    g_assert_cmpuint(p.psn, ==, 1001);
    wait_entry(&t, cq, sizeof(cqe), 6, idx++, &cqe);
    g_assert_cmpuint(cqe.status, ==, QROCE_WC_SUCCESS);
    g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, 250);

    /* WRITE of 512 bytes: FIRST 256, then a MIDDLE that ends it */
    peer_out(&pr, &o, qpn, 1002, ROCE_WRITE_FIRST);
    o.reth_va = buf + 4096;
    o.reth_rkey = key;
    o.reth_len = 512;
    peer_send(&pr, &o, 256, false);
    peer_out(&pr, &o, qpn, 1003, ROCE_WRITE_MIDDLE);
    o.ackreq = true;
    peer_send(&pr, &o, 256, false);
    peer_recv(&pr, f, &p);
    g_assert_cmphex(p.opcode, ==, ROCE_ACK);
    g_assert_cmphex(p.aeth_syndrome, ==, ROCE_AETH_NAK_INV);
    g_assert_cmpuint(p.psn, ==, 1003);

    /* a READ of 512 bytes answered by one response of 512 (MTU 256) */
    g_assert_cmpuint(mk_qp_rings(&t, QROCE_QPT_RC, pdn, cqn, cqn, 0, &qpn2,
                                 &sq2, &rq2), ==, 0);
    peer_connect(&t, &pr, qpn2, 0x78);
    h.rdma.remote_addr = cpu_to_le64(0x10000);
    h.rdma.rkey = cpu_to_le32(0x1234);
    put_send_wqe(&t, sq2, 0, &h, buf + 2048, 512, key);
    qpci_io_writeq(t.dev, t.db, QROCE_DB_SQ, qroce_db_value(qpn2, 1));
    do {
        peer_recv(&pr, f, &p);
    } while (p.opcode != ROCE_READ_REQ);
    g_assert_cmpuint(p.reth_len, ==, 512);
    peer_out(&pr, &o, qpn2, p.psn, ROCE_READ_RESP_ONLY);
    o.aeth_syndrome = ROCE_AETH_ACK_NO_CREDIT;
    peer_send(&pr, &o, 512, false);
    next_send_cqe(&t, cq, &idx, qpn2, &cqe);
    g_assert_cmpuint(cqe.status, ==, QROCE_WC_BAD_RESP_ERR);

    /*
     * Malformed frames: good frames of every opcode to a fresh QP, with
     * random bytes changed and random lengths; the device must stay up.
     */
    {
        static const uint8_t ops[] = {
            ROCE_SEND_FIRST, ROCE_SEND_MIDDLE, ROCE_SEND_LAST,
            ROCE_SEND_ONLY_IMM, ROCE_WRITE_FIRST, ROCE_WRITE_ONLY,
            ROCE_READ_REQ, ROCE_READ_RESP_FIRST, ROCE_READ_RESP_ONLY,
            ROCE_ACK, ROCE_ATOMIC_ACK, ROCE_CMP_SWAP, ROCE_FETCH_ADD,
            ROCE_UD_SEND_ONLY, ROCE_CNP, ROCE_SEND_LAST_INV,
            ROCE_SEND_ONLY_INV,
        };
        GRand *r = g_rand_new_with_seed(0x72786672);
        uint32_t qpn3, k, n;
        uint64_t sq3, rq3;

        g_assert_cmpuint(mk_qp_rings(&t, QROCE_QPT_RC, pdn, cqn, cqn, 0,
                                     &qpn3, &sq3, &rq3), ==, 0);
        peer_connect(&t, &pr, qpn3, 0x79);
        for (k = 0; k < 600; k++) {
            uint8_t fr[2048];
            size_t len;

            peer_out(&pr, &o, g_rand_boolean(r) ? qpn3 : qpn2,
                     1000 + g_rand_int_range(r, 0, 8),
                     ops[g_rand_int_range(r, 0, ARRAY_SIZE(ops))]);
            o.ackreq = g_rand_boolean(r);
            o.reth_va = buf + g_rand_int_range(r, 0, 8192);
            o.reth_rkey = g_rand_boolean(r) ? key : g_rand_int(r);
            o.reth_len = g_rand_int_range(r, 0, 2048);
            o.aeth_syndrome = g_rand_int(r);
            len = g_rand_int_range(r, 0, 300);
            memset(fr + roce_hdr_len(o.opcode, false), 0x33, len);
            len = roce_build(fr, &o, len);
            for (n = g_rand_int_range(r, 0, 4); n; n--) {
                fr[g_rand_int_range(r, 0, len)] = g_rand_int(r);
            }
            if (g_rand_int_range(r, 0, 4) == 0) {
                len = g_rand_int_range(r, 1, len + 1);
            }
            sendto(pr.fd, fr, len, 0, (struct sockaddr *)&pr.qemu,
                   sizeof(pr.qemu));
        }
        g_rand_free(r);
        qtest_clock_step(t.qts, 10 * 1000 * 1000 * 1000LL);
        g_assert_cmphex(rd(&t, QROCE_REG_MAGIC), ==, QROCE_MAGIC_VALUE);
        g_assert_cmpuint(simple(&t, QROCE_CMD_NOP, 0, NULL), ==, 0);
        g_assert_cmpuint(rd(&t, QROCE_REG_CNT(QROCE_CNT_ROCE_RX_DROPS)), >,
                         0);
    }
    close(pr.fd);
    stop(&t);
}
/* ---- an SRQ shared by two RC QPs: a message owns its RECV WQE ---- */

/* A SEND packet from the peer whose payload is (@seed + i) & 0xff. */
static void peer_send_pat(Peer *pr, uint32_t qpn, uint32_t psn, uint8_t op,
                          uint32_t len, uint8_t seed, bool ackreq)
{
    uint8_t f[2048];
    RocePktOut o;
    size_t hl, n;
    uint32_t i;

    peer_out(pr, &o, qpn, psn, op);
    o.ackreq = ackreq;
    hl = roce_hdr_len(op, false);
    for (i = 0; i < len; i++) {
        f[hl + i] = seed + i;
    }
    n = roce_build(f, &o, len);
    g_assert_cmpint(sendto(pr->fd, f, n, 0, (struct sockaddr *)&pr->qemu,
                           sizeof(pr->qemu)), ==, n);
}

/* The next ACK or NAK from the device, for @qpn's peer QP @dqpn. */
static uint8_t peer_next_ack(Peer *pr, uint32_t dqpn, uint32_t *psn)
{
    uint8_t f[2048];
    RocePktIn p;

    do {
        peer_recv(pr, f, &p);
    } while (p.opcode != ROCE_ACK || p.dqpn != dqpn);
    *psn = p.psn;
    return p.aeth_syndrome;
}

/* Guest bytes at @addr are (@seed + i) & 0xff for i < @len. */
static void check_pat(QRoceTest *t, uint64_t addr, uint32_t len, uint8_t seed)
{
    g_autofree uint8_t *b = g_malloc(len);
    uint32_t i;

    qtest_memread(t->qts, addr, b, len);
    for (i = 0; i < len; i++) {
        g_assert_cmphex(b[i], ==, (uint8_t)(seed + i));
    }
}

/* An RC QP whose receives come from SRQ @srqn. */
static uint32_t srq_rc_qp(QRoceTest *t, uint32_t pdn, uint32_t cqn,
                          uint32_t srqn)
{
    struct qroce_cmd c = { .hdr.opcode = QROCE_CMD_CREATE_QP };
    uint32_t out[6];

    c.create_qp.pdn = cpu_to_le32(pdn);
    c.create_qp.send_cqn = c.create_qp.recv_cqn = cpu_to_le32(cqn);
    c.create_qp.srqn = cpu_to_le32(srqn);
    c.create_qp.type = QROCE_QPT_RC;
    c.create_qp.flags = QROCE_CREATE_QP_SRQ;
    c.create_qp.sq_log2_entries = 4;
    c.create_qp.sq_wqe_shift = 6;
    c.create_qp.sq = (struct qroce_bt){ cpu_to_le64(page(t, 1)),
                                        cpu_to_le32(1), 12,
                                        QROCE_BT_CONTIG, 0 };
    g_assert_cmpuint(cmd(t, &c, out), ==, QROCE_CMD_OK);
    return out[0];
}

/* The next receive CQE: QP @qpn, SRQ WQE @idx, @status, @len bytes. */
static void srq_recv_cqe(QRoceTest *t, uint64_t cq, uint32_t *ci,
                         uint32_t qpn, uint32_t idx, uint8_t status,
                         uint32_t len)
{
    struct qroce_cqe e;

    wait_entry(t, cq, sizeof(e), 6, (*ci)++, &e);
    g_assert_cmpuint(le32_to_cpu(e.qpn), ==, qpn);
    g_assert_cmpuint(e.status, ==, status);
    g_assert_true(e.flags & QROCE_CQE_F_SRQ);
    g_assert_false(e.flags & QROCE_CQE_F_SQ);
    g_assert_cmpuint(le32_to_cpu(e.wqe_index), ==, idx);
    if (status == QROCE_WC_SUCCESS) {
        g_assert_cmpuint(le32_to_cpu(e.byte_len), ==, len);
    }
}

#define SS_BUF(i)   (rbuf + (i) * 1024)     /* SRQ WQE i's 1 KiB buffer */

/*
 * Two RC QPs on one SRQ, path MTU 256.  (a) A SEND of 712 bytes to QP A
 * (FIRST, MIDDLE, LAST) with a SEND_ONLY to QP B between its packets: A's
 * message keeps SRQ WQE 0 that its FIRST took, B takes WQE 1; every byte
 * and both lengths are right.  (b) With one WQE left, A's FIRST takes it
 * and B's SEND_ONLY finds the SRQ dry: B gets an RNR NAK, A's message
 * still lands whole in its WQE; B's retry completes once a WQE is posted.
 * (c) A's FIRST takes a WQE and A goes to ERR: that WQE is flushed on A
 * (the SRQ's others stay for B).
 */
static void test_srq_shared_message(void)
{
    QRoceTest t;
    Peer pr;
    struct qroce_cmd c = { .hdr.opcode = QROCE_CMD_CREATE_SRQ };
    uint64_t cq, buf, ring, rbuf;
    uint32_t pdn, cqn, key, rkey, srqn, a, b, out[6], psn, i, ci = 0;
    uint8_t syn;

    peer_start(&t, &pr);
    objs_setup(&t, QROCE_ACCESS_LOCAL_WRITE, &pdn, &cqn, &cq, &buf, &key);
    rbuf = page(&t, 8);
    rkey = mk_mr(&t, pdn, rbuf, 8, QROCE_ACCESS_LOCAL_WRITE);
    ring = page(&t, 1);
    c.create_srq.pdn = cpu_to_le32(pdn);
    c.create_srq.log2_entries = 3;
    c.create_srq.wqe_shift = 5;
    c.create_srq.ring = (struct qroce_bt){ cpu_to_le64(ring), cpu_to_le32(1),
                                           12, QROCE_BT_CONTIG, 0 };
    g_assert_cmpuint(cmd(&t, &c, out), ==, QROCE_CMD_OK);
    srqn = out[0];
    a = srq_rc_qp(&t, pdn, cqn, srqn);
    b = srq_rc_qp(&t, pdn, cqn, srqn);
    peer_connect(&t, &pr, a, 0x77);
    peer_connect(&t, &pr, b, 0x78);
    for (i = 0; i < 2; i++) {
        put_recv(&t, ring, 3, i, SS_BUF(i), 1024, rkey);
    }
    qpci_io_writeq(t.dev, t.db, QROCE_DB_SRQ, qroce_db_value(srqn, 2));

    /* (a) */
    peer_send_pat(&pr, a, 1000, ROCE_SEND_FIRST, 256, 0x10, false);
    peer_send_pat(&pr, b, 1000, ROCE_SEND_ONLY, 100, 0x80, true);
    g_assert_cmphex(peer_next_ack(&pr, 0x78, &psn), ==,
                    ROCE_AETH_ACK_NO_CREDIT);
    srq_recv_cqe(&t, cq, &ci, b, 1, QROCE_WC_SUCCESS, 100);
    check_pat(&t, SS_BUF(1), 100, 0x80);
    peer_send_pat(&pr, a, 1001, ROCE_SEND_MIDDLE, 256, 0x10, false);
    peer_send_pat(&pr, a, 1002, ROCE_SEND_LAST, 200, 0x10, true);
    g_assert_cmphex(peer_next_ack(&pr, 0x77, &psn), ==,
                    ROCE_AETH_ACK_NO_CREDIT);
    g_assert_cmpuint(psn, ==, 1002);
    srq_recv_cqe(&t, cq, &ci, a, 0, QROCE_WC_SUCCESS, 712);
    check_pat(&t, SS_BUF(0), 256, 0x10);
    check_pat(&t, SS_BUF(0) + 256, 256, 0x10);
    check_pat(&t, SS_BUF(0) + 512, 200, 0x10);

    /* (b) */
    put_recv(&t, ring, 3, 2, SS_BUF(2), 1024, rkey);
    qpci_io_writeq(t.dev, t.db, QROCE_DB_SRQ, qroce_db_value(srqn, 3));
    peer_send_pat(&pr, a, 1003, ROCE_SEND_FIRST, 256, 0x20, false);
    peer_send_pat(&pr, b, 1001, ROCE_SEND_ONLY, 64, 0x90, true);
    syn = peer_next_ack(&pr, 0x78, &psn);
    g_assert_cmphex(syn & 0xe0, ==, ROCE_AETH_RNR);
    g_assert_cmpuint(psn, ==, 1001);
    peer_send_pat(&pr, a, 1004, ROCE_SEND_MIDDLE, 256, 0x40, false);
    peer_send_pat(&pr, a, 1005, ROCE_SEND_LAST, 10, 0x60, true);
    g_assert_cmphex(peer_next_ack(&pr, 0x77, &psn), ==,
                    ROCE_AETH_ACK_NO_CREDIT);
    srq_recv_cqe(&t, cq, &ci, a, 2, QROCE_WC_SUCCESS, 522);
    check_pat(&t, SS_BUF(2), 256, 0x20);
    check_pat(&t, SS_BUF(2) + 256, 256, 0x40);
    check_pat(&t, SS_BUF(2) + 512, 10, 0x60);
    put_recv(&t, ring, 3, 3, SS_BUF(3), 1024, rkey);
    qpci_io_writeq(t.dev, t.db, QROCE_DB_SRQ, qroce_db_value(srqn, 4));
    peer_send_pat(&pr, b, 1001, ROCE_SEND_ONLY, 64, 0x90, true);
    g_assert_cmphex(peer_next_ack(&pr, 0x78, &psn), ==,
                    ROCE_AETH_ACK_NO_CREDIT);
    srq_recv_cqe(&t, cq, &ci, b, 3, QROCE_WC_SUCCESS, 64);
    check_pat(&t, SS_BUF(3), 64, 0x90);

    /* (c) */
    for (i = 4; i < 6; i++) {
        put_recv(&t, ring, 3, i, SS_BUF(i), 1024, rkey);
    }
    qpci_io_writeq(t.dev, t.db, QROCE_DB_SRQ, qroce_db_value(srqn, 6));
    peer_send_pat(&pr, a, 1006, ROCE_SEND_FIRST, 256, 0x30, false);
    peer_send_pat(&pr, b, 1002, ROCE_SEND_ONLY, 32, 0xa0, true);
    g_assert_cmphex(peer_next_ack(&pr, 0x78, &psn), ==,
                    ROCE_AETH_ACK_NO_CREDIT);
    srq_recv_cqe(&t, cq, &ci, b, 5, QROCE_WC_SUCCESS, 32);
    g_assert_cmpuint(modify(&t, a, M(STATE), QROCE_QPS_ERR, NULL), ==, 0);
    srq_recv_cqe(&t, cq, &ci, a, 4, QROCE_WC_WR_FLUSH_ERR, 0);
    g_assert_cmpuint(simple(&t, QROCE_CMD_QUERY_SRQ, srqn, out), ==, 0);
    g_assert_cmpuint(out[1], ==, 6);
    close(pr.fd);
    stop(&t);
}
#undef SS_BUF

/*
 * An SQ producer index lowered after a rewind: three SENDs go out, the
 * peer answers the first with an RNR NAK (the requester goes back to WQE
 * 0 and waits, with the virtual clock standing still), then the guest
 * writes PI 1 -- behind WQEs already sent once.  It is a bad doorbell (the
 * QP to ERR, its three WQEs flushed), not a smaller SQ; an ACK of all
 * three PSNs that arrives afterwards does not carry the engine past the
 * producer index into slots never posted.
 */
static void test_sq_pi_after_rewind(void)
{
    QRoceTest t;
    Peer pr;
    RocePktOut o;
    RocePktIn p;
    struct qroce_cqe cqe;
    uint8_t f[2048];
    uint64_t cq, buf, sq, rq;
    uint32_t pdn, cqn, key, qpn, bad, tx, i, ci = 0;

    peer_start(&t, &pr);
    objs_setup(&t, QROCE_ACCESS_LOCAL_WRITE, &pdn, &cqn, &cq, &buf, &key);
    g_assert_cmpuint(mk_qp_rings(&t, QROCE_QPT_RC, pdn, cqn, cqn, 0, &qpn, &sq,
                                 &rq), ==, 0);
    peer_connect(&t, &pr, qpn, 0x77);
    for (i = 0; i < 3; i++) {
        post_send(&t, sq, i, buf, 10, key, QROCE_WQE_SIGNALED);
    }
    qpci_io_writeq(t.dev, t.db, QROCE_DB_SQ, qroce_db_value(qpn, 3));
    for (i = 0; i < 3; i++) {
        peer_recv(&pr, f, &p);
        g_assert_cmpuint(p.psn, ==, 2000 + i);
    }
    peer_out(&pr, &o, qpn, 2000, ROCE_ACK);
    o.aeth_syndrome = ROCE_AETH_RNR | 31;   /* 491 ms: virtual, frozen */
    peer_send(&pr, &o, 0, false);
    wait_cnt(&t, QROCE_CNT_ROCE_RX_PKTS, 1);
    bad = rd(&t, QROCE_REG_CNT(QROCE_CNT_BAD_DOORBELLS));
    qpci_io_writeq(t.dev, t.db, QROCE_DB_SQ, qroce_db_value(qpn, 1));
    g_assert_cmpuint(rd(&t, QROCE_REG_CNT(QROCE_CNT_BAD_DOORBELLS)), ==,
                     bad + 1);
    g_assert_cmpuint(query_state(&t, qpn), ==, QROCE_QPS_ERR);
    peer_out(&pr, &o, qpn, 2002, ROCE_ACK);
    o.aeth_syndrome = ROCE_AETH_ACK_NO_CREDIT;
    peer_send(&pr, &o, 0, false);
    for (i = 0; i < 3; i++) {
        wait_entry(&t, cq, sizeof(cqe), 6, ci++, &cqe);
        g_assert_cmpuint(le32_to_cpu(cqe.qpn), ==, qpn);
        g_assert_cmpuint(le32_to_cpu(cqe.wqe_index), ==, i);
        g_assert_cmpuint(cqe.status, ==, QROCE_WC_WR_FLUSH_ERR);
    }
    tx = rd(&t, QROCE_REG_CNT(QROCE_CNT_ROCE_TX_PKTS));
    qtest_clock_step(t.qts, 2 * 1000 * 1000 * 1000LL);
    g_assert_cmpuint(simple(&t, QROCE_CMD_NOP, 0, NULL), ==, 0);
    g_assert_cmpuint(rd(&t, QROCE_REG_CNT(QROCE_CNT_ROCE_TX_PKTS)), ==, tx);
    close(pr.fd);
    stop(&t);
}

#undef M

static void test_srq(void)
{
    QRoceTest t;
    struct qroce_cmd c;
    uint64_t ring;
    uint32_t out[6], pdn, srqn, bad, cqn;

    start(&t, "");
    enable(&t);
    g_assert_cmpuint(rd(&t, QROCE_REG_CAP_MAX_SRQ), ==, QROCE_DEF_MAX_SRQ);
    g_assert_cmpuint(simple(&t, QROCE_CMD_ALLOC_PD, 0, out), ==, 0);
    pdn = out[0];
    ring = page(&t, 1);
    memset(&c, 0, sizeof(c));
    c.hdr.opcode = QROCE_CMD_CREATE_SRQ;
    c.create_srq.pdn = cpu_to_le32(pdn + 1);
    c.create_srq.uar = cpu_to_le32(3);
    c.create_srq.log2_entries = 7;
    c.create_srq.wqe_shift = 5;
    c.create_srq.limit = cpu_to_le32(16);
    c.create_srq.ring = (struct qroce_bt){ cpu_to_le64(ring), cpu_to_le32(1),
                                           12, QROCE_BT_CONTIG, 0 };
    g_assert_cmpuint(cmd(&t, &c, NULL), ==, QROCE_CMD_ERR_HANDLE);
    c.create_srq.pdn = cpu_to_le32(pdn);
    c.create_srq.log2_entries = 8;          /* 8 KiB in a 4 KiB ring */
    g_assert_cmpuint(cmd(&t, &c, NULL), ==, QROCE_CMD_ERR_PARAM);
    c.create_srq.log2_entries = 7;
    c.create_srq.wqe_shift = 10;
    g_assert_cmpuint(cmd(&t, &c, NULL), ==, QROCE_CMD_ERR_PARAM);
    c.create_srq.wqe_shift = 5;
    c.create_srq.cqn = cpu_to_le32(1);      /* XRC only */
    g_assert_cmpuint(cmd(&t, &c, NULL), ==, QROCE_CMD_ERR_PARAM);
    c.create_srq.cqn = 0;
    c.create_srq.limit = cpu_to_le32(128);  /* not below the size */
    g_assert_cmpuint(cmd(&t, &c, NULL), ==, QROCE_CMD_ERR_PARAM);
    c.create_srq.limit = cpu_to_le32(16);
    g_assert_cmpuint(cmd(&t, &c, out), ==, QROCE_CMD_OK);
    srqn = out[0];
    g_assert_cmpuint(srqn, >, 0);
    g_assert_cmpuint(simple(&t, QROCE_CMD_QUERY_SRQ, srqn, out), ==, 0);
    g_assert_cmpuint(out[0], ==, 16);
    g_assert_cmpuint(out[1], ==, 0);
    memset(&c, 0, sizeof(c));
    c.hdr.opcode = QROCE_CMD_MODIFY_SRQ;
    c.modify_srq.srqn = cpu_to_le32(srqn);
    c.modify_srq.limit = cpu_to_le32(200);
    g_assert_cmpuint(cmd(&t, &c, NULL), ==, QROCE_CMD_ERR_PARAM);
    c.modify_srq.limit = cpu_to_le32(4);
    g_assert_cmpuint(cmd(&t, &c, NULL), ==, QROCE_CMD_OK);
    g_assert_cmpuint(simple(&t, QROCE_CMD_QUERY_SRQ, srqn, out), ==, 0);
    g_assert_cmpuint(out[0], ==, 4);
    c.modify_srq.srqn = cpu_to_le32(srqn + 1);
    g_assert_cmpuint(cmd(&t, &c, NULL), ==, QROCE_CMD_ERR_HANDLE);
    /* doorbells: its page only, never past the ring */
    bad = rd(&t, QROCE_REG_CNT(QROCE_CNT_BAD_DOORBELLS));
    qpci_io_writeq(t.dev, t.db, 3 * QROCE_DB_PAGE_SIZE + QROCE_DB_SRQ,
                   ((uint64_t)128 << 32) | srqn);
    qpci_io_writeq(t.dev, t.db, 2 * QROCE_DB_PAGE_SIZE + QROCE_DB_SRQ,
                   ((uint64_t)1 << 32) | srqn);
    qpci_io_writeq(t.dev, t.db, 3 * QROCE_DB_PAGE_SIZE + QROCE_DB_SRQ,
                   ((uint64_t)129 << 32) | srqn);
    g_assert_cmpuint(rd(&t, QROCE_REG_CNT(QROCE_CNT_BAD_DOORBELLS)), ==,
                     bad + 2);
    /* a PD with an SRQ is busy */
    g_assert_cmpuint(simple(&t, QROCE_CMD_DEALLOC_PD, pdn, NULL), ==,
                     QROCE_CMD_ERR_BUSY);
    /* a QP on the SRQ: only when FEATURES says SRQs work */
    memset(&c, 0, sizeof(c));
    c.hdr.opcode = QROCE_CMD_CREATE_EQ;
    c.create_eq.eqn = cpu_to_le32(1);
    c.create_eq.log2_entries = 8;
    c.create_eq.ring = (struct qroce_bt){ cpu_to_le64(page(&t, 1)),
                                          cpu_to_le32(1), 12,
                                          QROCE_BT_CONTIG, 0 };
    g_assert_cmpuint(cmd(&t, &c, NULL), ==, 0);
    memset(&c, 0, sizeof(c));
    c.hdr.opcode = QROCE_CMD_CREATE_CQ;
    c.create_cq.eqn = cpu_to_le32(1);
    c.create_cq.log2_entries = 6;
    c.create_cq.ring = (struct qroce_bt){ cpu_to_le64(page(&t, 1)),
                                          cpu_to_le32(1), 12,
                                          QROCE_BT_CONTIG, 0 };
    g_assert_cmpuint(cmd(&t, &c, out), ==, 0);
    cqn = out[0];
    memset(&c, 0, sizeof(c));
    c.hdr.opcode = QROCE_CMD_CREATE_QP;
    c.create_qp.pdn = cpu_to_le32(pdn);
    c.create_qp.send_cqn = cpu_to_le32(cqn);
    c.create_qp.recv_cqn = cpu_to_le32(cqn);
    c.create_qp.srqn = cpu_to_le32(srqn);
    c.create_qp.type = QROCE_QPT_RC;
    c.create_qp.sq_log2_entries = 4;
    c.create_qp.sq_wqe_shift = 6;
    c.create_qp.sq = (struct qroce_bt){ cpu_to_le64(page(&t, 1)),
                                        cpu_to_le32(1), 12,
                                        QROCE_BT_CONTIG, 0 };
    g_assert_cmpuint(cmd(&t, &c, NULL), ==, QROCE_CMD_ERR_PARAM); /* no flag */
    c.create_qp.flags = QROCE_CREATE_QP_SRQ;
    if (rd(&t, QROCE_REG_FEATURES) & QROCE_FEAT_SRQ) {
        c.create_qp.srqn = cpu_to_le32(srqn + 1);
        g_assert_cmpuint(cmd(&t, &c, NULL), ==, QROCE_CMD_ERR_HANDLE);
        c.create_qp.srqn = cpu_to_le32(srqn);
        g_assert_cmpuint(cmd(&t, &c, out), ==, QROCE_CMD_OK);
        g_assert_cmpuint(simple(&t, QROCE_CMD_DESTROY_SRQ, srqn, NULL), ==,
                         QROCE_CMD_ERR_BUSY);
        c.hdr.opcode = QROCE_CMD_DESTROY_QP;
        c.qpn.qpn = cpu_to_le32(out[0]);
        g_assert_cmpuint(cmd(&t, &c, NULL), ==, QROCE_CMD_OK);
    } else {
        g_assert_cmpuint(cmd(&t, &c, NULL), ==, QROCE_CMD_ERR_PARAM);
    }
    g_assert_cmpuint(simple(&t, QROCE_CMD_DESTROY_CQ, cqn, NULL), ==, 0);
    g_assert_cmpuint(simple(&t, QROCE_CMD_DESTROY_SRQ, srqn, NULL), ==, 0);
    g_assert_cmpuint(simple(&t, QROCE_CMD_DESTROY_SRQ, srqn, NULL), ==,
                     QROCE_CMD_ERR_HANDLE);
    g_assert_cmpuint(simple(&t, QROCE_CMD_QUERY_SRQ, srqn, NULL), ==,
                     QROCE_CMD_ERR_HANDLE);
    g_assert_cmpuint(simple(&t, QROCE_CMD_DEALLOC_PD, pdn, NULL), ==, 0);
    stop(&t);
}

/* ---- fast registration: ALLOC_MR, REG_MR/LOCAL_INV WQEs, SEND_INV ---- */

#define M(x) QROCE_QP_ATTR_##x
#define FR_LW QROCE_ACCESS_LOCAL_WRITE
#define FR_RW QROCE_ACCESS_REMOTE_WRITE
#define FR_RR QROCE_ACCESS_REMOTE_READ

/* A QP with a 64-entry CQ of its own; WQEs posted, CQEs seen so far */
typedef struct FrQP {
    uint32_t qpn, cqn, ci, sqi;
    uint64_t sq, rq, cq;
} FrQP;

typedef struct FrEnv {
    QRoceTest t;
    uint32_t pdn, key;      /* key: REG_MR command, 4 pages at buf */
    uint64_t buf;
} FrEnv;

static void fr_setup(FrEnv *e, const char *extra)
{
    uint64_t eq0, eq1;
    uint32_t out[6];

    start(&e->t, extra);
    enable(&e->t);
    g_assert_cmpuint(simple(&e->t, QROCE_CMD_ALLOC_PD, 0, out), ==, 0);
    e->pdn = out[0];
    mk_eq(&e->t, 0, &eq0);
    mk_eq(&e->t, 1, &eq1);
    set_gid0(&e->t);
    e->buf = page(&e->t, 4);
    e->key = mk_mr(&e->t, e->pdn, e->buf, 4, FR_LW | FR_RW | FR_RR);
}

static void fr_qp(FrEnv *e, uint8_t type, uint32_t pdn, FrQP *q)
{
    memset(q, 0, sizeof(*q));
    q->cqn = mk_cq_ring(&e->t, 1, 6, &q->cq);
    g_assert_cmpuint(mk_qp_rings(&e->t, type, pdn, q->cqn, q->cqn, 0,
                                 &q->qpn, &q->sq, &q->rq), ==, 0);
}

/* A connected RC pair; B's RNR NAKs ask for @b_rnr_timer. */
static void fr_pair(FrEnv *e, FrQP *a, FrQP *b, uint8_t b_rnr_timer)
{
    fr_qp(e, QROCE_QPT_RC, e->pdn, a);
    fr_qp(e, QROCE_QPT_RC, e->pdn, b);
    qp_connect_ex(&e->t, a->qpn, b->qpn, 100, 200, 1, 14, 7);
    qp_connect_ex(&e->t, b->qpn, a->qpn, 200, 100, b_rnr_timer, 14, 7);
}

/* A lone RC QP of @pdn in RTS (connected to itself: it sends nothing). */
static void fr_lone(FrEnv *e, uint32_t pdn, FrQP *q)
{
    fr_qp(e, QROCE_QPT_RC, pdn, q);
    qp_connect_ex(&e->t, q->qpn, q->qpn, 100, 100, 1, 14, 7);
}

static void fr_ring(FrEnv *e, FrQP *q)
{
    qpci_io_writeq(e->t.dev, e->t.db, QROCE_DB_SQ,
                   qroce_db_value(q->qpn, q->sqi));
}

/* WQE @h at the next SQ slot, with one SGE if @lkey is not 0. */
static void fr_put(FrEnv *e, FrQP *q, const struct qroce_send_wqe *h,
                   uint64_t addr, uint32_t len, uint32_t lkey)
{
    if (lkey) {
        put_send_wqe(&e->t, q->sq, q->sqi, h, addr, len, lkey);
    } else {
        qtest_memwrite(e->t.qts, q->sq + (q->sqi & 15) * 64, h, sizeof(*h));
    }
    q->sqi++;
}

static void fr_put_reg(FrEnv *e, FrQP *q, uint32_t key, uint64_t iova,
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
    fr_put(e, q, &h, 0, 0, 0);
}

static void fr_put_inv(FrEnv *e, FrQP *q, uint8_t opcode, uint32_t key,
                       uint32_t len)
{
    struct qroce_send_wqe h = { .opcode = opcode,
                                .flags = QROCE_WQE_SIGNALED };

    h.imm_data = cpu_to_le32(key);
    fr_put(e, q, &h, e->buf, len, opcode == QROCE_WR_SEND_INV ? e->key : 0);
}

static void fr_put_rdma(FrEnv *e, FrQP *q, uint8_t opcode, uint64_t raddr,
                        uint32_t rkey, uint64_t laddr, uint32_t len)
{
    struct qroce_send_wqe h = { .opcode = opcode,
                                .flags = QROCE_WQE_SIGNALED };

    h.rdma.remote_addr = cpu_to_le64(raddr);
    h.rdma.rkey = cpu_to_le32(rkey);
    fr_put(e, q, &h, laddr, len, e->key);
}

/* The next CQE of @q: its status, and its opcode if it succeeded. */
static void fr_cqe(FrEnv *e, FrQP *q, uint8_t opcode, uint8_t status,
                   struct qroce_cqe *cqe)
{
    struct qroce_cqe c;

    cqe = cqe ? cqe : &c;
    wait_entry(&e->t, q->cq, sizeof(*cqe), 6, q->ci++, cqe);
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
static void fr_expect_err(FrEnv *e, FrQP *q, uint8_t status)
{
    fr_ring(e, q);
    fr_cqe(e, q, 0, status, NULL);
    g_assert_cmpuint(query_state(&e->t, q->qpn), ==, QROCE_QPS_ERR);
    g_assert_cmpuint(simple(&e->t, QROCE_CMD_NOP, 0, NULL), ==, 0);
    g_assert_cmphex(rd(&e->t, QROCE_REG_STATUS), ==, QROCE_STATUS_READY);
}

static uint32_t fr_alloc(FrEnv *e, uint32_t pdn, uint32_t max_pages,
                         int status)
{
    struct qroce_cmd c = { .hdr.opcode = QROCE_CMD_ALLOC_MR };
    uint32_t out[6] = {};

    c.alloc_mr.pdn = cpu_to_le32(pdn);
    c.alloc_mr.max_pages = cpu_to_le32(max_pages);
    g_assert_cmpuint(cmd(&e->t, &c, out), ==, status);
    return out[0];
}

/* A page list in guest memory. */
static uint64_t fr_pbl(FrEnv *e, const uint64_t *pages, unsigned n)
{
    uint64_t pbl = page(&e->t, 1);
    unsigned i;

    for (i = 0; i < n; i++) {
        qtest_writeq(e->t.qts, pbl + 8 * i, pages[i]);
    }
    return pbl;
}

/* A REG_MR WQE on a lone QP of @pdn that fails with @status. */
static void fr_reg_err(FrEnv *e, uint32_t pdn, uint32_t key, uint64_t iova,
                       uint64_t pbl, uint32_t len, uint16_t npages,
                       uint8_t shift, uint32_t access, uint8_t status)
{
    FrQP q;

    fr_lone(e, pdn, &q);
    fr_put_reg(e, &q, key, iova, pbl, len, npages, shift, access);
    fr_expect_err(e, &q, status);
}

/*
 * (a) ALLOC_MR, a REG_MR WQE of three scattered pages at an iova that is
 * not page aligned, an RDMA WRITE across a page boundary and a READ back
 * through its rkey; (b) LOCAL_INV, then the same WRITE is a remote access
 * error; (c) registered again with a new key variant: the new rkey works,
 * the old one fails.
 */
static void test_frmr_rdma(void)
{
    FrEnv e;
    FrQP a, b, a2, b2;
    struct qroce_cqe cqe;
    uint64_t tgt, pg[3], pbl, iova = 0x7000100, va = iova + 3800;
    uint32_t fkey, rkey1, rkey2, i;
    uint8_t pat[1000], got[1000];

    fr_setup(&e, "");
    g_assert_true(rd(&e.t, QROCE_REG_FEATURES) & QROCE_FEAT_FRMR);
    g_assert_cmpuint(rd(&e.t, QROCE_REG_CAP_MAX_FRMR_PAGES), ==,
                     QROCE_DEF_MAX_FRMR_PAGES);
    tgt = page(&e.t, 6);
    pg[0] = tgt + 4 * 4096;
    pg[1] = tgt + 1 * 4096;
    pg[2] = tgt + 2 * 4096;
    pbl = fr_pbl(&e, pg, 3);
    fkey = fr_alloc(&e, e.pdn, 8, QROCE_CMD_OK);
    g_assert_cmphex(fkey & 0xff, ==, 0);
    fr_pair(&e, &a, &b, 1);
    for (i = 0; i < sizeof(pat); i++) {
        pat[i] = i * 7 + 5;
    }
    qtest_memwrite(e.t.qts, e.buf, pat, sizeof(pat));

    /* (a) B loads the MR with variant 0x01 */
    rkey1 = fkey | 0x01;
    fr_put_reg(&e, &b, rkey1, iova, pbl, 2 * 4096 + 0x500, 3, 12,
               FR_LW | FR_RW | FR_RR);
    fr_ring(&e, &b);
    fr_cqe(&e, &b, QROCE_CQE_REG_MR, QROCE_WC_SUCCESS, &cqe);
    g_assert_true(cqe.flags & QROCE_CQE_F_SQ);
    /* the device keeps its own copy of the page list */
    qtest_writeq(e.t.qts, pbl, 0);
    /* 3800 bytes into the MR: 0x100 + 3800 = 4056 into its first page */
    fr_put_rdma(&e, &a, QROCE_WR_RDMA_WRITE, va, rkey1, e.buf, 1000);
    fr_ring(&e, &a);
    fr_cqe(&e, &a, QROCE_CQE_RDMA_WRITE, QROCE_WC_SUCCESS, NULL);
    qtest_memread(e.t.qts, pg[0] + 4056, got, 40);
    qtest_memread(e.t.qts, pg[1], got + 40, 960);
    g_assert_true(!memcmp(got, pat, sizeof(got)));
    fr_put_rdma(&e, &a, QROCE_WR_RDMA_READ, va, rkey1, e.buf + 8192, 1000);
    fr_ring(&e, &a);
    fr_cqe(&e, &a, QROCE_CQE_RDMA_READ, QROCE_WC_SUCCESS, &cqe);
    g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, 1000);
    qtest_memread(e.t.qts, e.buf + 8192, got, sizeof(got));
    g_assert_true(!memcmp(got, pat, sizeof(got)));

    /* (b) LOCAL_INV: the MR is FREE, the WRITE is refused remotely */
    fr_put_inv(&e, &b, QROCE_WR_LOCAL_INV, rkey1, 0);
    fr_ring(&e, &b);
    fr_cqe(&e, &b, QROCE_CQE_LOCAL_INV, QROCE_WC_SUCCESS, NULL);
    fr_put_rdma(&e, &a, QROCE_WR_RDMA_WRITE, va, rkey1, e.buf, 1000);
    fr_ring(&e, &a);
    fr_cqe(&e, &a, 0, QROCE_WC_REM_ACCESS_ERR, NULL);
    g_assert_cmpuint(query_state(&e.t, a.qpn), ==, QROCE_QPS_ERR);

    /* (c) variant 0x02 on a new pair: the new rkey works, the old fails */
    fr_pair(&e, &a2, &b2, 1);
    rkey2 = fkey | 0x02;
    qtest_writeq(e.t.qts, pbl, pg[0]);
    fr_put_reg(&e, &b2, rkey2, iova, pbl, 3 * 4096 - 0x100, 3, 12,
               FR_LW | FR_RW);
    fr_ring(&e, &b2);
    fr_cqe(&e, &b2, QROCE_CQE_REG_MR, QROCE_WC_SUCCESS, NULL);
    /* 0x100 + 8000 = 8256: 64 bytes into the third page */
    fr_put_rdma(&e, &a2, QROCE_WR_RDMA_WRITE, iova + 8000, rkey2, e.buf,
                1000);
    fr_ring(&e, &a2);
    fr_cqe(&e, &a2, QROCE_CQE_RDMA_WRITE, QROCE_WC_SUCCESS, NULL);
    qtest_memread(e.t.qts, pg[2] + 64, got, sizeof(got));
    g_assert_true(!memcmp(got, pat, sizeof(got)));
    fr_put_rdma(&e, &a2, QROCE_WR_RDMA_WRITE, va, rkey1, e.buf, 1000);
    fr_ring(&e, &a2);
    fr_cqe(&e, &a2, 0, QROCE_WC_REM_ACCESS_ERR, NULL);
    /* DEREG_MR of a VALID MR; then its key names nothing */
    g_assert_cmpuint(simple(&e.t, QROCE_CMD_DEREG_MR, rkey2, NULL), ==, 0);
    g_assert_cmpuint(simple(&e.t, QROCE_CMD_DEREG_MR, rkey2, NULL), ==,
                     QROCE_CMD_ERR_HANDLE);
    stop(&e.t);
}

/*
 * An RDMA WRITE and a READ of 0 bytes with rkey 0 and address 0 complete
 * successfully (IBA C9-88: no rkey check without data), as ib_srpt's
 * zero-length WRITE needs; one byte to the same rkey is a remote access
 * error.
 */
static void test_zero_length_rdma(void)
{
    FrEnv e;
    FrQP a, b;

    fr_setup(&e, "");
    fr_pair(&e, &a, &b, 1);
    fr_put_rdma(&e, &a, QROCE_WR_RDMA_WRITE, 0, 0, e.buf, 0);
    fr_ring(&e, &a);
    fr_cqe(&e, &a, QROCE_CQE_RDMA_WRITE, QROCE_WC_SUCCESS, NULL);
    fr_put_rdma(&e, &a, QROCE_WR_RDMA_READ, 0, 0, e.buf, 0);
    fr_ring(&e, &a);
    fr_cqe(&e, &a, QROCE_CQE_RDMA_READ, QROCE_WC_SUCCESS, NULL);
    g_assert_cmpuint(query_state(&e.t, b.qpn), ==, QROCE_QPS_RTS);
    fr_put_rdma(&e, &a, QROCE_WR_RDMA_WRITE, 0, 0, e.buf, 1);
    fr_ring(&e, &a);
    fr_cqe(&e, &a, 0, QROCE_WC_REM_ACCESS_ERR, NULL);
    stop(&e.t);
}

/*
 * (d) SEND with Invalidate: A's SEND_INV (two packets, the IETH on the
 * last) invalidates B's MR: the RECV CQE has INV and the rkey.  Every
 * frame goes twice (tx-dup-ppm): the duplicate is only ACKed, it does not
 * invalidate again.  The same rkey again fails with REM_INV_REQ_ERR on
 * both sides; so does the key of an MR made by the REG_MR command.  On UC
 * the local operations work and SEND_INV is refused.
 */
static void test_frmr_send_inv(void)
{
    FrEnv e;
    FrQP a, b, a2, b2, u1, u2, d;
    struct qroce_send_wqe hs = { .opcode = QROCE_WR_SEND,
                                 .flags = QROCE_WQE_SIGNALED };
    struct qroce_cqe cqe;
    uint64_t pg[1], pbl;
    uint32_t fkey, fkey2, rkey;

    fr_setup(&e, "-global qroce.tx-dup-ppm=1000000");
    fkey = fr_alloc(&e, e.pdn, 4, QROCE_CMD_OK);
    fr_pair(&e, &a, &b, 1);
    pg[0] = e.buf + 3 * 4096;
    pbl = fr_pbl(&e, pg, 1);
    rkey = fkey | 0x5a;
    fr_put_reg(&e, &b, rkey, 0x10000, pbl, 4096, 1, 12, FR_LW | FR_RW);
    fr_ring(&e, &b);
    fr_cqe(&e, &b, QROCE_CQE_REG_MR, QROCE_WC_SUCCESS, NULL);
    post_recv(&e.t, b.rq, 0, e.buf + 4096, 1024, e.key);
    post_recv(&e.t, b.rq, 1, e.buf + 5120, 1024, e.key);
    post_recv(&e.t, b.rq, 2, e.buf + 6144, 1024, e.key);
    qpci_io_writeq(e.t.dev, e.t.db, QROCE_DB_RQ, qroce_db_value(b.qpn, 3));

    fr_put_inv(&e, &a, QROCE_WR_SEND_INV, rkey, 300);
    fr_ring(&e, &a);
    fr_cqe(&e, &a, QROCE_CQE_SEND, QROCE_WC_SUCCESS, NULL);
    fr_cqe(&e, &b, QROCE_CQE_RECV, QROCE_WC_SUCCESS, &cqe);
    g_assert_cmphex(cqe.flags & (QROCE_CQE_F_INV | QROCE_CQE_F_IMM), ==,
                    QROCE_CQE_F_INV);
    g_assert_cmphex(le32_to_cpu(cqe.imm_data), ==, rkey);
    g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, 300);
    g_assert_cmpuint(le32_to_cpu(cqe.wqe_index), ==, 0);
    g_assert_cmpuint(rd(&e.t, QROCE_REG_CNT(QROCE_CNT_ROCE_DUP_REQS)), >=, 1);
    g_assert_cmpuint(query_state(&e.t, b.qpn), ==, QROCE_QPS_RTS);
    /* a plain SEND takes the next RECV WQE */
    fr_put(&e, &a, &hs, e.buf, 100, e.key);
    fr_ring(&e, &a);
    fr_cqe(&e, &a, QROCE_CQE_SEND, QROCE_WC_SUCCESS, NULL);
    fr_cqe(&e, &b, QROCE_CQE_RECV, QROCE_WC_SUCCESS, &cqe);
    g_assert_cmpuint(le32_to_cpu(cqe.wqe_index), ==, 1);
    g_assert_false(cqe.flags & QROCE_CQE_F_INV);
    /* the same rkey again: the MR is FREE */
    fr_put_inv(&e, &a, QROCE_WR_SEND_INV, rkey, 100);
    fr_ring(&e, &a);
    fr_cqe(&e, &a, 0, QROCE_WC_REM_INV_REQ_ERR, NULL);
    fr_cqe(&e, &b, 0, QROCE_WC_REM_INV_REQ_ERR, &cqe);
    g_assert_cmpuint(le32_to_cpu(cqe.wqe_index), ==, 2);
    g_assert_cmpuint(query_state(&e.t, a.qpn), ==, QROCE_QPS_ERR);
    g_assert_cmpuint(query_state(&e.t, b.qpn), ==, QROCE_QPS_ERR);

    /* an MR of the REG_MR command cannot be invalidated */
    fr_pair(&e, &a2, &b2, 1);
    post_recv(&e.t, b2.rq, 0, e.buf + 4096, 1024, e.key);
    qpci_io_writeq(e.t.dev, e.t.db, QROCE_DB_RQ, qroce_db_value(b2.qpn, 1));
    fr_put_inv(&e, &a2, QROCE_WR_SEND_INV, e.key, 10);
    fr_ring(&e, &a2);
    fr_cqe(&e, &a2, 0, QROCE_WC_REM_INV_REQ_ERR, NULL);
    fr_cqe(&e, &b2, 0, QROCE_WC_REM_INV_REQ_ERR, NULL);

    /* UC: REG_MR and LOCAL_INV work, SEND_INV is not a UC operation */
    fkey2 = fr_alloc(&e, e.pdn, 1, QROCE_CMD_OK);
    fr_qp(&e, QROCE_QPT_UC, e.pdn, &u1);
    fr_qp(&e, QROCE_QPT_UC, e.pdn, &u2);
    uc_connect(&e.t, u1.qpn, u2.qpn);
    uc_connect(&e.t, u2.qpn, u1.qpn);
    fr_put_reg(&e, &u1, fkey2 | 7, 0x20000, pbl, 4096, 1, 12, FR_LW);
    fr_put_inv(&e, &u1, QROCE_WR_LOCAL_INV, fkey2 | 7, 0);
    fr_ring(&e, &u1);
    fr_cqe(&e, &u1, QROCE_CQE_REG_MR, QROCE_WC_SUCCESS, NULL);
    fr_cqe(&e, &u1, QROCE_CQE_LOCAL_INV, QROCE_WC_SUCCESS, NULL);
    fr_put_inv(&e, &u1, QROCE_WR_SEND_INV, fkey2 | 7, 10);
    fr_expect_err(&e, &u1, QROCE_WC_LOC_QP_OP_ERR);

    /* UD: the same local operations */
    fr_qp(&e, QROCE_QPT_UD, e.pdn, &d);
    ud_ready(&e.t, d.qpn, QROCE_QPT_UD, 0x1111);
    fr_put_reg(&e, &d, fkey2 | 8, 0x20000, pbl, 4096, 1, 12, FR_LW);
    fr_put_inv(&e, &d, QROCE_WR_LOCAL_INV, fkey2 | 8, 0);
    fr_ring(&e, &d);
    fr_cqe(&e, &d, QROCE_CQE_REG_MR, QROCE_WC_SUCCESS, NULL);
    fr_cqe(&e, &d, QROCE_CQE_LOCAL_INV, QROCE_WC_SUCCESS, NULL);
    fr_put_inv(&e, &d, QROCE_WR_LOCAL_INV, fkey2 | 8, 0);
    fr_expect_err(&e, &d, QROCE_WC_LOC_PROT_ERR);
    stop(&e.t);
}

/*
 * A local operation runs once, even when go-back-N replays the WQEs
 * around it.  A's SQ: a SEND that B answers with an RNR NAK (no RECV
 * yet), a REG_MR, a WRITE through the rkey it made, a LOCAL_INV of
 * another MR: all executed before the NAK comes back (B's sequence NAK
 * for the WRITE shows it was sent).  After the RNR wait A sends from the
 * SEND again: had it executed REG_MR or LOCAL_INV twice, they would fail
 * (the MR not FREE, not VALID).
 */
static void test_frmr_replay(void)
{
    FrEnv e;
    FrQP a, b;
    struct qroce_send_wqe h = { .opcode = QROCE_WR_SEND,
                                .flags = QROCE_WQE_SIGNALED };
    uint64_t pg[2], pbl;
    uint32_t fkey, fkey2, i;
    uint8_t pat[1000], got[1000];

    fr_setup(&e, "");
    fkey = fr_alloc(&e, e.pdn, 2, QROCE_CMD_OK);
    fkey2 = fr_alloc(&e, e.pdn, 1, QROCE_CMD_OK);
    fr_pair(&e, &a, &b, 0);         /* B's RNR NAKs ask for 655 ms */
    pg[0] = e.buf + 2 * 4096;
    pg[1] = e.buf + 3 * 4096;
    pbl = fr_pbl(&e, pg, 2);
    for (i = 0; i < sizeof(pat); i++) {
        pat[i] = i * 11 + 1;
    }
    qtest_memwrite(e.t.qts, e.buf, pat, sizeof(pat));
    fr_put_reg(&e, &a, fkey2 | 1, 0x30000, pbl, 4096, 1, 12, FR_LW);
    fr_ring(&e, &a);
    fr_cqe(&e, &a, QROCE_CQE_REG_MR, QROCE_WC_SUCCESS, NULL);

    fr_put(&e, &a, &h, e.buf, 100, e.key);
    fr_put_reg(&e, &a, fkey | 0x11, 0x40000, pbl, 8192, 2, 12,
               FR_LW | FR_RW);
    fr_put_rdma(&e, &a, QROCE_WR_RDMA_WRITE, 0x40000 + 4000, fkey | 0x11,
                e.buf, 1000);
    fr_put_inv(&e, &a, QROCE_WR_LOCAL_INV, fkey2 | 1, 0);
    fr_ring(&e, &a);
    wait_cnt(&e.t, QROCE_CNT_ROCE_RNR_NAKS, 1);
    wait_cnt(&e.t, QROCE_CNT_ROCE_SEQ_NAKS, 1);
    g_assert_false(entry_ready(&e.t, a.cq, sizeof(struct qroce_cqe), 6,
                               a.ci));
    post_recv(&e.t, b.rq, 0, e.buf + 4096, 1024, e.key);
    qpci_io_writeq(e.t.dev, e.t.db, QROCE_DB_RQ, qroce_db_value(b.qpn, 1));
    qtest_clock_step(e.t.qts, 700 * 1000 * 1000);   /* the RNR timer */
    fr_cqe(&e, &a, QROCE_CQE_SEND, QROCE_WC_SUCCESS, NULL);
    fr_cqe(&e, &a, QROCE_CQE_REG_MR, QROCE_WC_SUCCESS, NULL);
    fr_cqe(&e, &a, QROCE_CQE_RDMA_WRITE, QROCE_WC_SUCCESS, NULL);
    fr_cqe(&e, &a, QROCE_CQE_LOCAL_INV, QROCE_WC_SUCCESS, NULL);
    fr_cqe(&e, &b, QROCE_CQE_RECV, QROCE_WC_SUCCESS, NULL);
    g_assert_cmpuint(rd(&e.t, QROCE_REG_CNT(QROCE_CNT_ROCE_RETRANS)), >=, 1);
    /* 4000 bytes into the MR: 96 in the first page, 904 in the second */
    qtest_memread(e.t.qts, pg[0] + 4000, got, 96);
    qtest_memread(e.t.qts, pg[1], got + 96, 904);
    g_assert_true(!memcmp(got, pat, sizeof(got)));
    g_assert_cmpuint(query_state(&e.t, a.qpn), ==, QROCE_QPS_RTS);
    /* fkey2 is FREE (invalidated once), fkey VALID (registered once) */
    fr_put_inv(&e, &a, QROCE_WR_LOCAL_INV, fkey | 0x11, 0);
    fr_ring(&e, &a);
    fr_cqe(&e, &a, QROCE_CQE_LOCAL_INV, QROCE_WC_SUCCESS, NULL);
    fr_put_inv(&e, &a, QROCE_WR_LOCAL_INV, fkey2 | 1, 0);
    fr_expect_err(&e, &a, QROCE_WC_LOC_PROT_ERR);
    stop(&e.t);
}

/*
 * (e) What ALLOC_MR, REG_MR and LOCAL_INV refuse, each with the spec's
 * status; after each the QP is in ERR and the device healthy.
 */
static void test_frmr_errors(void)
{
    FrEnv e;
    FrQP q;
    struct qroce_send_wqe hw = { .opcode = QROCE_WR_RDMA_WRITE,
                                 .flags = QROCE_WQE_SIGNALED };
    uint64_t pg[2], pbl, bad, hole = 0x4000000000ULL;
    uint32_t out[6], fkey, k, pdn2, pdn3;

    fr_setup(&e, "-global qroce.max-bt-pages=1000");
    fr_alloc(&e, e.pdn, 0, QROCE_CMD_ERR_PARAM);
    fr_alloc(&e, e.pdn, QROCE_DEF_MAX_FRMR_PAGES + 1, QROCE_CMD_ERR_PARAM);
    fr_alloc(&e, 999, 4, QROCE_CMD_ERR_HANDLE);
    /* the page arrays count in max-bt-pages, and come back at DEREG_MR */
    k = fr_alloc(&e, e.pdn, QROCE_DEF_MAX_FRMR_PAGES, QROCE_CMD_OK);
    fr_alloc(&e, e.pdn, QROCE_DEF_MAX_FRMR_PAGES, QROCE_CMD_ERR_NORES);
    g_assert_cmpuint(simple(&e.t, QROCE_CMD_DEREG_MR, k, NULL), ==, 0);
    k = fr_alloc(&e, e.pdn, QROCE_DEF_MAX_FRMR_PAGES, QROCE_CMD_OK);
    g_assert_cmpuint(simple(&e.t, QROCE_CMD_DEREG_MR, k, NULL), ==, 0);
    /* DEREG_MR of a FREE MR; a PD with an MR is busy until then */
    g_assert_cmpuint(simple(&e.t, QROCE_CMD_ALLOC_PD, 0, out), ==, 0);
    pdn3 = out[0];
    k = fr_alloc(&e, pdn3, 1, QROCE_CMD_OK);
    g_assert_cmpuint(simple(&e.t, QROCE_CMD_DEALLOC_PD, pdn3, NULL), ==,
                     QROCE_CMD_ERR_BUSY);
    g_assert_cmpuint(simple(&e.t, QROCE_CMD_DEREG_MR, k, NULL), ==, 0);
    g_assert_cmpuint(simple(&e.t, QROCE_CMD_DEALLOC_PD, pdn3, NULL), ==, 0);

    g_assert_cmpuint(simple(&e.t, QROCE_CMD_ALLOC_PD, 0, out), ==, 0);
    pdn2 = out[0];
    fkey = fr_alloc(&e, e.pdn, 2, QROCE_CMD_OK);
    pg[0] = e.buf + 2 * 4096;
    pg[1] = e.buf + 3 * 4096;
    pbl = fr_pbl(&e, pg, 2);
    pg[1] += 0x800;
    bad = fr_pbl(&e, pg, 2);
    /* LOC_LEN_ERR: the pages, their list and the range */
    fr_reg_err(&e, e.pdn, fkey | 1, 0, pbl, 4096, 3, 12, FR_LW,
               QROCE_WC_LOC_LEN_ERR);           /* npages over max_pages */
    fr_reg_err(&e, e.pdn, fkey | 1, 0, pbl, 0, 0, 12, FR_LW,
               QROCE_WC_LOC_LEN_ERR);           /* npages 0 */
    fr_reg_err(&e, e.pdn, fkey | 1, 0, bad, 8192, 2, 12, FR_LW,
               QROCE_WC_LOC_LEN_ERR);           /* a page not aligned */
    fr_reg_err(&e, e.pdn, fkey | 1, 0, hole, 8192, 2, 12, FR_LW,
               QROCE_WC_LOC_LEN_ERR);           /* list outside RAM */
    fr_reg_err(&e, e.pdn, fkey | 1, 0, pbl + 4, 8192, 2, 12, FR_LW,
               QROCE_WC_LOC_LEN_ERR);           /* list not 8-aligned */
    fr_reg_err(&e, e.pdn, fkey | 1, 0x100, pbl, 8192, 2, 12, FR_LW,
               QROCE_WC_LOC_LEN_ERR);           /* range not covered */
    fr_reg_err(&e, e.pdn, fkey | 1, 0, pbl, 4096, 1, 11, FR_LW,
               QROCE_WC_LOC_LEN_ERR);           /* page size 2 KiB */
    fr_reg_err(&e, e.pdn, fkey | 1, 0, pbl, 4096, 1, 22, FR_LW,
               QROCE_WC_LOC_LEN_ERR);           /* page size 4 MiB */
    /* LOC_PROT_ERR: key, PD, access */
    fr_reg_err(&e, e.pdn, fkey | 1, 0, pbl, 8192, 2, 12, FR_RW,
               QROCE_WC_LOC_PROT_ERR);          /* remote write alone */
    fr_reg_err(&e, e.pdn, fkey | 1, 0, pbl, 8192, 2, 12, 0x200,
               QROCE_WC_LOC_PROT_ERR);          /* unknown access bit */
    fr_reg_err(&e, pdn2, fkey | 1, 0, pbl, 8192, 2, 12, FR_LW,
               QROCE_WC_LOC_PROT_ERR);          /* the QP's PD is another */
    fr_reg_err(&e, e.pdn, e.key, 0, pbl, 8192, 2, 12, FR_LW,
               QROCE_WC_LOC_PROT_ERR);          /* a REG_MR command MR */
    fr_reg_err(&e, e.pdn, 0xfff00, 0, pbl, 8192, 2, 12, FR_LW,
               QROCE_WC_LOC_PROT_ERR);          /* no such MR */

    /* the MR stayed FREE: its key gives no local access */
    fr_lone(&e, e.pdn, &q);
    fr_put(&e, &q, &hw, 0x10, 16, fkey);
    fr_expect_err(&e, &q, QROCE_WC_LOC_PROT_ERR);
    /* ... until REG_MR; then once more is refused (not FREE) */
    fr_lone(&e, e.pdn, &q);
    fr_put_reg(&e, &q, fkey | 1, 0x10, pbl, 8000, 2, 12, FR_LW);
    fr_ring(&e, &q);
    fr_cqe(&e, &q, QROCE_CQE_REG_MR, QROCE_WC_SUCCESS, NULL);
    fr_put_reg(&e, &q, fkey | 2, 0x10, pbl, 8000, 2, 12, FR_LW);
    fr_expect_err(&e, &q, QROCE_WC_LOC_PROT_ERR);
    /* LOCAL_INV: the variant, the kind of MR, the PD */
    fr_lone(&e, e.pdn, &q);
    fr_put_inv(&e, &q, QROCE_WR_LOCAL_INV, fkey | 2, 0);
    fr_expect_err(&e, &q, QROCE_WC_LOC_PROT_ERR);
    fr_lone(&e, e.pdn, &q);
    fr_put_inv(&e, &q, QROCE_WR_LOCAL_INV, e.key, 0);
    fr_expect_err(&e, &q, QROCE_WC_LOC_PROT_ERR);
    fr_lone(&e, pdn2, &q);
    fr_put_inv(&e, &q, QROCE_WR_LOCAL_INV, fkey | 1, 0);
    fr_expect_err(&e, &q, QROCE_WC_LOC_PROT_ERR);
    /*
     * The VALID MR gives local access through its key (a WRITE from it to
     * the QP itself); a LOCAL_INV behind a READ retires with the READ;
     * then the key gives no access, and a second LOCAL_INV is refused.
     */
    fr_lone(&e, e.pdn, &q);
    hw.rdma.remote_addr = cpu_to_le64(e.buf);
    hw.rdma.rkey = cpu_to_le32(e.key);
    fr_put(&e, &q, &hw, 0x10, 16, fkey | 1);
    fr_put_rdma(&e, &q, QROCE_WR_RDMA_READ, e.buf + 64, e.key, e.buf + 128,
                16);
    fr_put_inv(&e, &q, QROCE_WR_LOCAL_INV, fkey | 1, 0);
    fr_ring(&e, &q);
    fr_cqe(&e, &q, QROCE_CQE_RDMA_WRITE, QROCE_WC_SUCCESS, NULL);
    fr_cqe(&e, &q, QROCE_CQE_RDMA_READ, QROCE_WC_SUCCESS, NULL);
    fr_cqe(&e, &q, QROCE_CQE_LOCAL_INV, QROCE_WC_SUCCESS, NULL);
    fr_put(&e, &q, &hw, 0x10, 16, fkey | 1);
    fr_expect_err(&e, &q, QROCE_WC_LOC_PROT_ERR);
    fr_lone(&e, e.pdn, &q);
    fr_put_inv(&e, &q, QROCE_WR_LOCAL_INV, fkey | 1, 0);
    fr_expect_err(&e, &q, QROCE_WC_LOC_PROT_ERR);   /* FREE already */
    /*
     * FENCE: a LOCAL_INV of the MR a READ lands in waits for the READ
     * (without it the MR would be gone when the response comes back).
     */
    fr_lone(&e, e.pdn, &q);
    fr_put_reg(&e, &q, fkey | 2, 0x10, pbl, 8000, 2, 12, FR_LW);
    hw.opcode = QROCE_WR_RDMA_READ;
    fr_put(&e, &q, &hw, 0x10, 16, fkey | 2);
    fr_put_inv(&e, &q, QROCE_WR_LOCAL_INV, fkey | 2, 0);
    qtest_writeb(e.t.qts, q.sq + ((q.sqi - 1) & 15) * 64 + 1,
                 QROCE_WQE_SIGNALED | QROCE_WQE_FENCE);
    fr_ring(&e, &q);
    fr_cqe(&e, &q, QROCE_CQE_REG_MR, QROCE_WC_SUCCESS, NULL);
    fr_cqe(&e, &q, QROCE_CQE_RDMA_READ, QROCE_WC_SUCCESS, NULL);
    fr_cqe(&e, &q, QROCE_CQE_LOCAL_INV, QROCE_WC_SUCCESS, NULL);
    g_assert_cmpuint(simple(&e.t, QROCE_CMD_DEREG_MR, fkey | 2, NULL), ==, 0);
    stop(&e.t);
}

/* ---- FLUSH and ATOMIC WRITE (IBTA 1.5) ---- */

#define FR_FL QROCE_ACCESS_FLUSH_GLOBAL

static void fa_put_aw(FrEnv *e, FrQP *q, uint64_t raddr, uint32_t rkey,
                      const uint8_t v[8])
{
    struct qroce_send_wqe h = { .opcode = QROCE_WR_ATOMIC_WRITE,
                                .flags = QROCE_WQE_SIGNALED };

    h.rdma.remote_addr = cpu_to_le64(raddr);
    h.rdma.rkey = cpu_to_le32(rkey);
    memcpy(&h.rdma.compare_add, v, 8);
    fr_put(e, q, &h, 0, 0, 0);
}

static void fa_put_flush(FrEnv *e, FrQP *q, uint64_t raddr, uint32_t rkey,
                         uint32_t len, uint8_t type, uint8_t level)
{
    struct qroce_send_wqe h = { .opcode = QROCE_WR_FLUSH,
                                .flags = QROCE_WQE_SIGNALED };

    h.flush.remote_addr = cpu_to_le64(raddr);
    h.flush.rkey = cpu_to_le32(rkey);
    h.flush.length = cpu_to_le32(len);
    h.flush.type = type;
    h.flush.level = level;
    fr_put(e, q, &h, 0, 0, 0);
}

/* The 8 bytes at @a are @v (and the 8 bytes either side are @around). */
static void fa_check8(FrEnv *e, uint64_t a, const uint8_t v[8],
                      uint8_t around)
{
    uint8_t got[24], side[8];

    qtest_memread(e->t.qts, a - 8, got, sizeof(got));
    memset(side, around, 8);
    g_assert_true(!memcmp(got + 8, v, 8));
    g_assert_true(!memcmp(got, side, 8));
    g_assert_true(!memcmp(got + 16, side, 8));
}

/*
 * Through the device (loopback): ATOMIC_WRITE lands its 8 bytes as they
 * are in the WQE; FLUSH of a range and of the whole MR complete with CQE
 * opcode FLUSH; WRITE, FLUSH, ATOMIC_WRITE and a READ of the written
 * bytes posted at once complete in order (max_rd_atomic 1).  Errors: a
 * FLUSH to an MR without ACCESS_FLUSH_GLOBAL or outside the MR is
 * REM_ACCESS_ERR, a persistent FLUSH and a misaligned ATOMIC_WRITE are
 * REM_INV_REQ_ERR, ATOMIC_WRITE to an MR without remote write is
 * REM_ACCESS_ERR; the target is unchanged.  UC and UD refuse both with
 * LOC_QP_OP_ERR.
 */
static void test_flush_atomic_write(void)
{
    static const uint8_t v1[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
    static const uint8_t v2[8] = { 0xf0, 0xe1, 0xd2, 0xc3,
                                   0xb4, 0xa5, 0x96, 0x87 };
    FrEnv e;
    FrQP a, b, q;
    struct qroce_cqe cqe;
    uint64_t tgt, nofl;
    uint32_t tkey, nkey, rokey;
    uint8_t pat[100], got[100];
    unsigned i;

    fr_setup(&e, "");
    g_assert_true(rd(&e.t, QROCE_REG_FEATURES) & QROCE_FEAT_FLUSH);
    g_assert_true(rd(&e.t, QROCE_REG_FEATURES) & QROCE_FEAT_ATOMIC_WRITE);
    tgt = page(&e.t, 2);
    tkey = mk_mr(&e.t, e.pdn, tgt, 2, FR_LW | FR_RW | FR_RR | FR_FL);
    nofl = page(&e.t, 1);
    nkey = mk_mr(&e.t, e.pdn, nofl, 1, FR_LW | FR_RW | FR_RR);
    rokey = mk_mr(&e.t, e.pdn, nofl, 1, FR_RR | FR_FL);
    qtest_memset(e.t.qts, nofl, 0x77, 4096);
    fr_pair(&e, &a, &b, 1);

    /* ATOMIC_WRITE: the 8 bytes, nothing around them */
    fa_put_aw(&e, &a, tgt + 64, tkey, v1);
    fr_ring(&e, &a);
    fr_cqe(&e, &a, QROCE_CQE_ATOMIC_WRITE, QROCE_WC_SUCCESS, &cqe);
    g_assert_true(cqe.flags & QROCE_CQE_F_SQ);
    fa_check8(&e, tgt + 64, v1, 0);

    /* FLUSH of a range, then of the whole MR (address and length unused) */
    fa_put_flush(&e, &a, tgt + 100, tkey, 4000, QROCE_FLUSH_GLOBAL,
                 QROCE_FLUSH_RANGE);
    fa_put_flush(&e, &a, 0, tkey, 0, QROCE_FLUSH_GLOBAL, QROCE_FLUSH_MR);
    fr_ring(&e, &a);
    fr_cqe(&e, &a, QROCE_CQE_FLUSH, QROCE_WC_SUCCESS, NULL);
    fr_cqe(&e, &a, QROCE_CQE_FLUSH, QROCE_WC_SUCCESS, NULL);

    /* WRITE, FLUSH, ATOMIC_WRITE, READ back: in order, each right */
    for (i = 0; i < sizeof(pat); i++) {
        pat[i] = i * 13 + 1;
    }
    qtest_memwrite(e.t.qts, e.buf, pat, sizeof(pat));
    fr_put_rdma(&e, &a, QROCE_WR_RDMA_WRITE, tgt + 4096, tkey, e.buf,
                sizeof(pat));
    fa_put_flush(&e, &a, tgt + 4096, tkey, sizeof(pat), QROCE_FLUSH_GLOBAL,
                 QROCE_FLUSH_RANGE);
    fa_put_aw(&e, &a, tgt + 4096 + 16, tkey, v2);
    fr_put_rdma(&e, &a, QROCE_WR_RDMA_READ, tgt + 4096, tkey, e.buf + 8192,
                sizeof(pat));
    fr_ring(&e, &a);
    fr_cqe(&e, &a, QROCE_CQE_RDMA_WRITE, QROCE_WC_SUCCESS, NULL);
    fr_cqe(&e, &a, QROCE_CQE_FLUSH, QROCE_WC_SUCCESS, NULL);
    fr_cqe(&e, &a, QROCE_CQE_ATOMIC_WRITE, QROCE_WC_SUCCESS, NULL);
    fr_cqe(&e, &a, QROCE_CQE_RDMA_READ, QROCE_WC_SUCCESS, &cqe);
    g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, sizeof(pat));
    memcpy(pat + 16, v2, 8);
    qtest_memread(e.t.qts, e.buf + 8192, got, sizeof(got));
    g_assert_true(!memcmp(got, pat, sizeof(pat)));
    qtest_memread(e.t.qts, tgt + 4096, got, sizeof(got));
    g_assert_true(!memcmp(got, pat, sizeof(pat)));
    g_assert_cmpuint(query_state(&e.t, a.qpn), ==, QROCE_QPS_RTS);
    g_assert_cmpuint(query_state(&e.t, b.qpn), ==, QROCE_QPS_RTS);

    /* an MR without ACCESS_FLUSH_GLOBAL, at either level */
    fr_pair(&e, &a, &b, 1);
    fa_put_flush(&e, &a, nofl, nkey, 64, QROCE_FLUSH_GLOBAL,
                 QROCE_FLUSH_RANGE);
    fr_expect_err(&e, &a, QROCE_WC_REM_ACCESS_ERR);
    fr_pair(&e, &a, &b, 1);
    fa_put_flush(&e, &a, 0, nkey, 0, QROCE_FLUSH_GLOBAL, QROCE_FLUSH_MR);
    fr_expect_err(&e, &a, QROCE_WC_REM_ACCESS_ERR);
    /* a range past the end of the MR */
    fr_pair(&e, &a, &b, 1);
    fa_put_flush(&e, &a, tgt + 4096, tkey, 4097, QROCE_FLUSH_GLOBAL,
                 QROCE_FLUSH_RANGE);
    fr_expect_err(&e, &a, QROCE_WC_REM_ACCESS_ERR);
    /*
     * persistent placement (alone or with global): no MR has that right,
     * a remote access error; type 0 is an invalid request
     */
    fr_pair(&e, &a, &b, 1);
    fa_put_flush(&e, &a, tgt, tkey, 8, QROCE_FLUSH_PERSISTENT,
                 QROCE_FLUSH_RANGE);
    fr_expect_err(&e, &a, QROCE_WC_REM_ACCESS_ERR);
    fr_pair(&e, &a, &b, 1);
    fa_put_flush(&e, &a, tgt, tkey, 8,
                 QROCE_FLUSH_GLOBAL | QROCE_FLUSH_PERSISTENT, QROCE_FLUSH_MR);
    fr_expect_err(&e, &a, QROCE_WC_REM_ACCESS_ERR);
    fr_pair(&e, &a, &b, 1);
    fa_put_flush(&e, &a, tgt, tkey, 8, 0, QROCE_FLUSH_MR);
    fr_expect_err(&e, &a, QROCE_WC_REM_INV_REQ_ERR);
    g_assert_cmpuint(query_state(&e.t, b.qpn), ==, QROCE_QPS_ERR);

    /* ATOMIC_WRITE: misaligned, to an MR without remote write */
    fr_pair(&e, &a, &b, 1);
    fa_put_aw(&e, &a, tgt + 64 + 4, tkey, v2);
    fr_expect_err(&e, &a, QROCE_WC_REM_INV_REQ_ERR);
    fa_check8(&e, tgt + 64, v1, 0);
    fr_pair(&e, &a, &b, 1);
    fa_put_aw(&e, &a, nofl + 64, rokey, v2);
    fr_expect_err(&e, &a, QROCE_WC_REM_ACCESS_ERR);
    qtest_memread(e.t.qts, nofl + 56, got, 24);
    for (i = 0; i < 24; i++) {
        g_assert_cmphex(got[i], ==, 0x77);
    }

    /* not on UC or UD */
    fr_qp(&e, QROCE_QPT_UC, e.pdn, &q);
    uc_connect(&e.t, q.qpn, q.qpn);
    fa_put_flush(&e, &q, tgt, tkey, 8, QROCE_FLUSH_GLOBAL, QROCE_FLUSH_RANGE);
    fr_expect_err(&e, &q, QROCE_WC_LOC_QP_OP_ERR);
    fr_qp(&e, QROCE_QPT_UC, e.pdn, &q);
    uc_connect(&e.t, q.qpn, q.qpn);
    fa_put_aw(&e, &q, tgt + 64, tkey, v2);
    fr_expect_err(&e, &q, QROCE_WC_LOC_QP_OP_ERR);
    fr_qp(&e, QROCE_QPT_UD, e.pdn, &q);
    ud_ready(&e.t, q.qpn, QROCE_QPT_UD, 0x11111111);
    fa_put_flush(&e, &q, tgt, tkey, 8, QROCE_FLUSH_GLOBAL, QROCE_FLUSH_MR);
    fr_expect_err(&e, &q, QROCE_WC_LOC_QP_OP_ERR);
    fr_qp(&e, QROCE_QPT_UD, e.pdn, &q);
    ud_ready(&e.t, q.qpn, QROCE_QPT_UD, 0x11111111);
    fa_put_aw(&e, &q, tgt + 64, tkey, v2);
    fr_expect_err(&e, &q, QROCE_WC_LOC_QP_OP_ERR);
    fa_check8(&e, tgt + 64, v1, 0);
    stop(&e.t);
}

/* The peer's next frame that is not an ACK nor a CNP. */
static void fa_peer_req(Peer *pr, uint8_t *f, RocePktIn *p)
{
    do {
        peer_recv(pr, f, p);
    } while (p->opcode == ROCE_ACK || p->opcode == ROCE_CNP);
}

/* The device's answer to the peer's request @psn: a READ response, empty */
static void fa_peer_empty_resp(Peer *pr, uint32_t psn)
{
    uint8_t f[2048];
    RocePktIn p;

    peer_recv(pr, f, &p);
    g_assert_cmphex(p.opcode, ==, ROCE_READ_RESP_ONLY);
    g_assert_cmpuint(p.psn, ==, psn);
    g_assert_cmpuint(p.paylen, ==, 0);
    g_assert_cmpuint(ROCE_AETH_TYPE(p.aeth_syndrome), ==, 0);
}

/*
 * On the wire, against a peer: the device's FLUSH is opcode 0x1C with the
 * FETH (type, level) and RETH, its ATOMIC WRITE 0x1D with a RETH of
 * length 8 and the WQE's 8 bytes; empty READ responses complete them.
 * As responder the device answers the peer's ATOMIC WRITE with an empty
 * READ response, and a duplicate again without writing; a FLUSH too; a
 * FLUSH with another placement type gets an Invalid Request NAK.
 */
static void test_flush_atomic_write_wire(void)
{
    static const uint8_t v[8] = { 0x10, 0x32, 0x54, 0x76,
                                  0x98, 0xba, 0xdc, 0xfe };
    QRoceTest t;
    Peer pr;
    struct qroce_send_wqe h = { .flags = QROCE_WQE_SIGNALED };
    struct qroce_cqe cqe;
    RocePktOut o;
    RocePktIn p;
    uint8_t f[2048], got[8], side[8];
    uint64_t cq, buf, sq, rq;
    uint32_t pdn, cqn, key, qpn, idx = 0;

    peer_start(&t, &pr);
    objs_setup(&t, QROCE_ACCESS_LOCAL_WRITE | QROCE_ACCESS_REMOTE_WRITE |
               QROCE_ACCESS_REMOTE_READ | QROCE_ACCESS_FLUSH_GLOBAL, &pdn,
               &cqn, &cq, &buf, &key);
    g_assert_cmpuint(mk_qp_rings(&t, QROCE_QPT_RC, pdn, cqn, cqn, 0, &qpn, &sq,
                                 &rq), ==, 0);
    peer_connect(&t, &pr, qpn, 0x77);

    /* requester: FLUSH (MR level), then ATOMIC WRITE */
    h.opcode = QROCE_WR_FLUSH;
    h.flush.remote_addr = cpu_to_le64(0x123456789000ull);
    h.flush.rkey = cpu_to_le32(0xabcd);
    h.flush.length = cpu_to_le32(0x10000);
    h.flush.type = QROCE_FLUSH_GLOBAL;
    h.flush.level = QROCE_FLUSH_MR;
    qtest_memwrite(t.qts, sq, &h, sizeof(h));
    memset(&h, 0, sizeof(h));
    h.opcode = QROCE_WR_ATOMIC_WRITE;
    h.flags = QROCE_WQE_SIGNALED;
    h.rdma.remote_addr = cpu_to_le64(0x2000);
    h.rdma.rkey = cpu_to_le32(0x5678);
    memcpy(&h.rdma.compare_add, v, 8);
    qtest_memwrite(t.qts, sq + 64, &h, sizeof(h));
    qpci_io_writeq(t.dev, t.db, QROCE_DB_SQ, qroce_db_value(qpn, 2));
    fa_peer_req(&pr, f, &p);
    g_assert_cmphex(p.opcode, ==, ROCE_FLUSH);
    g_assert_cmpuint(p.psn, ==, 2000);
    g_assert_cmphex(p.feth, ==, 0x11);      /* level MR << 4 | GLOBAL */
    g_assert_cmphex(p.reth_va, ==, 0x123456789000ull);
    g_assert_cmphex(p.reth_rkey, ==, 0xabcd);
    g_assert_cmphex(p.reth_len, ==, 0x10000);
    g_assert_cmpuint(p.paylen, ==, 0);
    g_assert_true(p.icrc_ok);
    peer_out(&pr, &o, qpn, 2000, ROCE_READ_RESP_ONLY);
    o.aeth_syndrome = ROCE_AETH_ACK_NO_CREDIT;
    peer_send(&pr, &o, 0, false);
    next_send_cqe(&t, cq, &idx, qpn, &cqe);
    g_assert_cmpuint(cqe.status, ==, QROCE_WC_SUCCESS);
    g_assert_cmphex(cqe.opcode, ==, QROCE_CQE_FLUSH);
    /* max_rd_atomic 1: the ATOMIC WRITE went only now */
    fa_peer_req(&pr, f, &p);
    g_assert_cmphex(p.opcode, ==, ROCE_ATOMIC_WRITE);
    g_assert_cmpuint(p.psn, ==, 2001);
    g_assert_cmphex(p.reth_va, ==, 0x2000);
    g_assert_cmphex(p.reth_rkey, ==, 0x5678);
    g_assert_cmpuint(p.reth_len, ==, 8);
    g_assert_cmpuint(p.paylen, ==, 8);
    g_assert_true(!memcmp(p.payload, v, 8));
    g_assert_true(p.icrc_ok);
    peer_out(&pr, &o, qpn, 2001, ROCE_READ_RESP_ONLY);
    o.aeth_syndrome = ROCE_AETH_ACK_NO_CREDIT;
    peer_send(&pr, &o, 0, false);
    next_send_cqe(&t, cq, &idx, qpn, &cqe);
    g_assert_cmpuint(cqe.status, ==, QROCE_WC_SUCCESS);
    g_assert_cmphex(cqe.opcode, ==, QROCE_CQE_ATOMIC_WRITE);

    /* responder: ATOMIC WRITE of 8 x 0x5a, answered, written */
    peer_out(&pr, &o, qpn, 1000, ROCE_ATOMIC_WRITE);
    o.reth_va = buf + 808;
    o.reth_rkey = key;
    o.reth_len = 8;
    peer_send(&pr, &o, 8, false);
    fa_peer_empty_resp(&pr, 1000);
    memset(side, 0x5a, 8);
    qtest_memread(t.qts, buf + 808, got, 8);
    g_assert_true(!memcmp(got, side, 8));
    g_assert_cmphex(qtest_readq(t.qts, buf + 800), ==, 0);
    g_assert_cmphex(qtest_readq(t.qts, buf + 816), ==, 0);
    /* asked again (its response lost): answered, not written again */
    qtest_writeq(t.qts, buf + 808, 0x1111111111111111ull);
    peer_send(&pr, &o, 8, false);
    fa_peer_empty_resp(&pr, 1000);
    g_assert_cmphex(qtest_readq(t.qts, buf + 808), ==, 0x1111111111111111ull);
    /* FLUSH of a range, and of the MR */
    peer_out(&pr, &o, qpn, 1001, ROCE_FLUSH);
    o.feth = ROCE_FETH(QROCE_FLUSH_GLOBAL, QROCE_FLUSH_RANGE);
    o.reth_va = buf;
    o.reth_rkey = key;
    o.reth_len = 8192;
    peer_send(&pr, &o, 0, false);
    fa_peer_empty_resp(&pr, 1001);
    peer_out(&pr, &o, qpn, 1002, ROCE_FLUSH);
    o.feth = ROCE_FETH(QROCE_FLUSH_GLOBAL, QROCE_FLUSH_MR);
    o.reth_rkey = key;
    peer_send(&pr, &o, 0, false);
    fa_peer_empty_resp(&pr, 1002);
    /* a FLUSH of the persistent type: remote access NAK, the QP to ERR */
    peer_out(&pr, &o, qpn, 1003, ROCE_FLUSH);
    o.feth = ROCE_FETH(QROCE_FLUSH_PERSISTENT, QROCE_FLUSH_RANGE);
    o.reth_va = buf;
    o.reth_rkey = key;
    o.reth_len = 8;
    peer_send(&pr, &o, 0, false);
    peer_recv(&pr, f, &p);
    g_assert_cmphex(p.opcode, ==, ROCE_ACK);
    g_assert_cmphex(p.aeth_syndrome, ==, ROCE_AETH_NAK_ACCESS);
    g_assert_cmpuint(p.psn, ==, 1003);
    g_assert_cmpuint(query_state(&t, qpn), ==, QROCE_QPS_ERR);
    close(pr.fd);
    stop(&t);
}
#undef M

/* ---- memory windows ---- */

static uint32_t mw_alloc(FrEnv *e, uint32_t pdn, uint32_t type, int status)
{
    struct qroce_cmd c = { .hdr.opcode = QROCE_CMD_ALLOC_MW };
    uint32_t out[6] = {};

    c.alloc_mw.pdn = cpu_to_le32(pdn);
    c.alloc_mw.type = cpu_to_le32(type);
    g_assert_cmpuint(cmd(&e->t, &c, out), ==, status);
    return out[0];
}

static void mw_put_bind(FrEnv *e, FrQP *q, uint32_t mw, uint32_t new_key,
                        uint32_t mr, uint64_t addr, uint64_t len,
                        uint32_t access)
{
    struct qroce_send_wqe h = { .opcode = QROCE_WR_BIND_MW,
                                .flags = QROCE_WQE_SIGNALED };

    h.bind.mw_key = cpu_to_le32(mw);
    h.bind.new_key = cpu_to_le32(new_key);
    h.bind.mr_lkey = cpu_to_le32(mr);
    h.bind.addr = cpu_to_le64(addr);
    h.bind.length = cpu_to_le64(len);
    h.bind.access = cpu_to_le32(access);
    fr_put(e, q, &h, 0, 0, 0);
}

/* BIND_MW on @q that completes with @status (success: QP stays in RTS). */
static void mw_bind(FrEnv *e, FrQP *q, uint32_t mw, uint32_t new_key,
                    uint32_t mr, uint64_t addr, uint64_t len, uint32_t access,
                    uint8_t status)
{
    mw_put_bind(e, q, mw, new_key, mr, addr, len, access);
    if (status != QROCE_WC_SUCCESS) {
        fr_expect_err(e, q, status);
        return;
    }
    fr_ring(e, q);
    fr_cqe(e, q, QROCE_CQE_BIND_MW, QROCE_WC_SUCCESS, NULL);
}

/* A WRITE of @len bytes of e->buf from @a through @rkey: its status. */
static void mw_write(FrEnv *e, FrQP *a, uint64_t va, uint32_t rkey,
                     uint32_t len, uint8_t status)
{
    fr_put_rdma(e, a, QROCE_WR_RDMA_WRITE, va, rkey, e->buf, len);
    fr_ring(e, a);
    fr_cqe(e, a, QROCE_CQE_RDMA_WRITE, status, NULL);
}

/*
 * A type 2 window over a fast-registration MR: LOCAL_INV of the MR and a
 * new REG_MR with the same key over another page leave the window
 * unusable (nothing reaches the new page through it), and the window no
 * longer keeps the MR from DEREG_MR.
 */
static void mw_over_frmr(FrEnv *e)
{
    FrQP a, b;
    uint64_t pg[2] = { page(&e->t, 1), page(&e->t, 1) };
    uint64_t pbl0 = fr_pbl(e, pg, 1), pbl1 = fr_pbl(e, pg + 1, 1);
    uint32_t fkey = fr_alloc(e, e->pdn, 1, QROCE_CMD_OK) | 0x01;
    uint32_t kw = mw_alloc(e, e->pdn, 2, QROCE_CMD_OK);
    uint8_t pat[64], got[64], zero[64] = {};
    unsigned i;

    for (i = 0; i < sizeof(pat); i++) {
        pat[i] = i * 13 + 1;
    }
    fr_pair(e, &a, &b, 1);
    fr_put_reg(e, &b, fkey, 0x9000, pbl0, 4096, 1, 12,
               FR_LW | QROCE_ACCESS_MW_BIND);
    fr_ring(e, &b);
    fr_cqe(e, &b, QROCE_CQE_REG_MR, QROCE_WC_SUCCESS, NULL);
    mw_bind(e, &b, kw, kw + 1, fkey, 0x9000, 4096, FR_RW, QROCE_WC_SUCCESS);
    mw_write(e, &a, 0x9000, kw + 1, 64, QROCE_WC_SUCCESS);
    qtest_memread(e->t.qts, pg[0], got, sizeof(got));
    g_assert_true(!memcmp(got, pat, sizeof(got)));
    fr_put_inv(e, &b, QROCE_WR_LOCAL_INV, fkey, 0);
    fr_ring(e, &b);
    fr_cqe(e, &b, QROCE_CQE_LOCAL_INV, QROCE_WC_SUCCESS, NULL);
    fr_put_reg(e, &b, fkey, 0x9000, pbl1, 4096, 1, 12,
               FR_LW | QROCE_ACCESS_MW_BIND);
    fr_ring(e, &b);
    fr_cqe(e, &b, QROCE_CQE_REG_MR, QROCE_WC_SUCCESS, NULL);
    qtest_memwrite(e->t.qts, pg[1], zero, sizeof(zero));
    mw_write(e, &a, 0x9000, kw + 1, 64, QROCE_WC_REM_ACCESS_ERR);
    qtest_memread(e->t.qts, pg[1], got, sizeof(got));
    g_assert_true(!memcmp(got, zero, sizeof(got)));
    g_assert_cmpuint(simple(&e->t, QROCE_CMD_DEREG_MR, fkey, NULL), ==, 0);
    g_assert_cmpuint(simple(&e->t, QROCE_CMD_DEALLOC_MW, kw + 1, NULL), ==,
                     0);
}

/*
 * Windows of both types over an MR with MW_BIND: a bound window gives
 * exactly its range and access, type 2 only to the QP that bound it;
 * binds that break a rule fail with MW_BIND_ERR; LOCAL_INV and SEND with
 * Invalidate unbind a type 2 window (and refuse a type 1); a type 1
 * window is bound again with a new key (the old one stops working) and
 * unbound with length 0; an MR with windows bound cannot be deregistered.
 */
static void test_mw(void)
{
    FrEnv e;
    FrQP a, b, a2, b2, a3, b3, a4, b4;
    struct qroce_cqe cqe;
    uint64_t tgt, win;
    uint32_t tkey, k1, k2, w1, w2, w1b;
    uint8_t pat[512], got[512], zero[512] = {};
    unsigned i;

    fr_setup(&e, g_extra);
    g_assert_true(rd(&e.t, QROCE_REG_FEATURES) & QROCE_FEAT_MW);
    tgt = page(&e.t, 2);
    tkey = mk_mr(&e.t, e.pdn, tgt, 2, FR_LW | QROCE_ACCESS_MW_BIND);
    for (i = 0; i < sizeof(pat); i++) {
        pat[i] = i * 13 + 1;
    }
    qtest_memwrite(e.t.qts, e.buf, pat, sizeof(pat));
    k1 = mw_alloc(&e, e.pdn, 1, QROCE_CMD_OK);
    k2 = mw_alloc(&e, e.pdn, 2, QROCE_CMD_OK);
    mw_alloc(&e, e.pdn, 3, QROCE_CMD_ERR_PARAM);
    mw_alloc(&e, 999, 1, QROCE_CMD_ERR_HANDLE);
    win = tgt + 1024;

    /* type 2 bound by B: A writes inside it, not past it */
    fr_pair(&e, &a, &b, 1);
    w2 = (k2 & ~0xffu) | ((k2 + 1) & 0xff);
    mw_bind(&e, &b, k2, w2, tkey, win, 1024, FR_RW | FR_RR,
            QROCE_WC_SUCCESS);
    mw_write(&e, &a, win + 512, w2, 512, QROCE_WC_SUCCESS);
    qtest_memread(e.t.qts, win + 512, got, sizeof(got));
    g_assert_true(!memcmp(got, pat, sizeof(got)));
    /* the window's key before the bind, and the MR's own key: refused */
    g_assert_cmpuint(simple(&e.t, QROCE_CMD_DEREG_MR, tkey, NULL), ==,
                     QROCE_CMD_ERR_BUSY);
    g_assert_cmpuint(simple(&e.t, QROCE_CMD_DEREG_MR, w2, NULL), ==,
                     QROCE_CMD_ERR_PARAM);
    mw_write(&e, &a, win + 513, w2, 512, QROCE_WC_REM_ACCESS_ERR);

    /* another QP may not use it; binding it again fails */
    fr_pair(&e, &a2, &b2, 1);
    qtest_memwrite(e.t.qts, win, zero, sizeof(zero));
    mw_write(&e, &a2, win, w2, 64, QROCE_WC_REM_ACCESS_ERR);
    qtest_memread(e.t.qts, win, got, sizeof(got));
    g_assert_true(!memcmp(got, zero, sizeof(got)));
    fr_pair(&e, &a4, &b4, 1);
    mw_bind(&e, &b4, w2, w2 + 1, tkey, win, 64, FR_RW,
            QROCE_WC_MW_BIND_ERR);

    /* type 1, read only, bound by one QP and used from another pair */
    fr_pair(&e, &a3, &b3, 1);
    w1 = (k1 & ~0xffu) | 0x10;
    mw_bind(&e, &b3, k1, w1, tkey, tgt, 4096, FR_RR, QROCE_WC_SUCCESS);
    fr_put_rdma(&e, &a3, QROCE_WR_RDMA_READ, win + 512, w1, e.buf + 4096,
                512);
    fr_ring(&e, &a3);
    fr_cqe(&e, &a3, QROCE_CQE_RDMA_READ, QROCE_WC_SUCCESS, &cqe);
    qtest_memread(e.t.qts, e.buf + 4096, got, sizeof(got));
    g_assert_true(!memcmp(got, pat, sizeof(got)));
    /* bound again with a new key: the old key stops working */
    w1b = (k1 & ~0xffu) | 0x11;
    mw_bind(&e, &b3, w1, w1b, tkey, tgt, 8192, FR_RR | FR_RW,
            QROCE_WC_SUCCESS);
    fr_put_rdma(&e, &a3, QROCE_WR_RDMA_READ, tgt, w1b, e.buf + 4096, 8);
    fr_ring(&e, &a3);
    fr_cqe(&e, &a3, QROCE_CQE_RDMA_READ, QROCE_WC_SUCCESS, NULL);
    mw_write(&e, &a3, tgt, w1, 8, QROCE_WC_REM_ACCESS_ERR);
    /* LOCAL_INV refuses a type 1 window */
    fr_pair(&e, &a4, &b4, 1);
    fr_put_inv(&e, &b4, QROCE_WR_LOCAL_INV, w1b, 0);
    fr_expect_err(&e, &b4, QROCE_WC_LOC_PROT_ERR);

    /* binds against the rules: no MW_BIND, outside the MR, bad access */
    fr_pair(&e, &a4, &b4, 1);
    mw_bind(&e, &b4, w1b, w1b + 1, e.key, e.buf, 64, FR_RR,
            QROCE_WC_MW_BIND_ERR);
    fr_pair(&e, &a4, &b4, 1);
    mw_bind(&e, &b4, w1b, w1b + 1, tkey, tgt + 4096, 8192, FR_RR,
            QROCE_WC_MW_BIND_ERR);
    fr_pair(&e, &a4, &b4, 1);
    mw_bind(&e, &b4, w1b, w1b + 1, tkey, tgt, 64, FR_LW | FR_RR,
            QROCE_WC_MW_BIND_ERR);
    /* a type 1 window unbinds with length 0 */
    fr_pair(&e, &a4, &b4, 1);
    mw_bind(&e, &b4, w1b, w1b + 1, tkey, 0, 0, 0, QROCE_WC_SUCCESS);
    mw_write(&e, &a4, tgt, w1b + 1, 8, QROCE_WC_REM_ACCESS_ERR);

    /*
     * type 2 on a fresh pair: SEND with Invalidate from the peer unbinds
     * it (the RECV CQE names it); bound again, LOCAL_INV unbinds it.
     */
    fr_pair(&e, &a4, &b4, 1);
    k2 = mw_alloc(&e, e.pdn, 2, QROCE_CMD_OK);
    mw_bind(&e, &b4, k2, k2 + 1, tkey, win, 64, FR_RW, QROCE_WC_SUCCESS);
    mw_write(&e, &a4, win, k2 + 1, 64, QROCE_WC_SUCCESS);
    post_recv(&e.t, b4.rq, 0, e.buf + 8192, 1024, e.key);
    qpci_io_writeq(e.t.dev, e.t.db, QROCE_DB_RQ, qroce_db_value(b4.qpn, 1));
    fr_put_inv(&e, &a4, QROCE_WR_SEND_INV, k2 + 1, 100);
    fr_ring(&e, &a4);
    fr_cqe(&e, &a4, QROCE_CQE_SEND, QROCE_WC_SUCCESS, NULL);
    fr_cqe(&e, &b4, QROCE_CQE_RECV, QROCE_WC_SUCCESS, &cqe);
    g_assert_true(cqe.flags & QROCE_CQE_F_INV);
    g_assert_cmphex(le32_to_cpu(cqe.imm_data), ==, k2 + 1);
    mw_bind(&e, &b4, k2 + 1, k2 + 2, tkey, win, 64, FR_RW,
            QROCE_WC_SUCCESS);
    fr_put_inv(&e, &b4, QROCE_WR_LOCAL_INV, k2 + 2, 0);
    fr_ring(&e, &b4);
    fr_cqe(&e, &b4, QROCE_CQE_LOCAL_INV, QROCE_WC_SUCCESS, NULL);
    qtest_memwrite(e.t.qts, win, zero, 64);
    mw_write(&e, &a4, win, k2 + 2, 64, QROCE_WC_REM_ACCESS_ERR);
    qtest_memread(e.t.qts, win, got, 64);
    g_assert_true(!memcmp(got, zero, 64));

    mw_over_frmr(&e);

    /* DEALLOC_MW of every window frees the MR for DEREG_MR */
    g_assert_cmpuint(simple(&e.t, QROCE_CMD_DEALLOC_MW, k2, NULL), ==, 0);
    g_assert_cmpuint(simple(&e.t, QROCE_CMD_DEREG_MR, tkey, NULL), ==,
                     QROCE_CMD_ERR_BUSY);  /* the first type 2 window */
    g_assert_cmpuint(simple(&e.t, QROCE_CMD_DEALLOC_MW, w2, NULL), ==, 0);
    g_assert_cmpuint(simple(&e.t, QROCE_CMD_DEALLOC_MW, w1b, NULL), ==, 0);
    g_assert_cmpuint(simple(&e.t, QROCE_CMD_DEALLOC_MW, w1b, NULL), ==,
                     QROCE_CMD_ERR_HANDLE);
    g_assert_cmpuint(simple(&e.t, QROCE_CMD_DEALLOC_MW, tkey, NULL), ==,
                     QROCE_CMD_ERR_HANDLE);
    g_assert_cmpuint(simple(&e.t, QROCE_CMD_DEREG_MR, tkey, NULL), ==, 0);
    stop(&e.t);
}

/* ---- fault injection and introspection (docs/hw-spec.md §17) ---- */

#define QROCE_PATH "/machine/peripheral/qroce0"
#define M(x) QROCE_QP_ATTR_##x

/* qom-set of @val (its reference is taken): true if QEMU accepted it */
static bool qom_set(QRoceTest *t, const char *prop, QObject *val)
{
    QDict *rsp = qtest_qmp(t->qts, "{'execute': 'qom-set', 'arguments': {"
                           "'path': %s, 'property': %s, 'value': %p}}",
                           QROCE_PATH, prop, val);
    bool ok = qdict_haskey(rsp, "return");

    qobject_unref(rsp);
    return ok;
}

/* qom-get: the value, a reference the caller drops */
static QObject *qom_get(QRoceTest *t, const char *prop)
{
    QDict *rsp = qtest_qmp(t->qts, "{'execute': 'qom-get', 'arguments': {"
                           "'path': %s, 'property': %s}}", QROCE_PATH, prop);
    QObject *v = qdict_get(rsp, "return");

    g_assert(v);
    qobject_ref(v);
    qobject_unref(rsp);
    return v;
}

static void qom_set_int(QRoceTest *t, const char *prop, int64_t val)
{
    g_assert(qom_set(t, prop, QOBJECT(qnum_from_int(val))));
}

static void qom_set_bool(QRoceTest *t, const char *prop, bool val)
{
    g_assert(qom_set(t, prop, QOBJECT(qbool_from_bool(val))));
}

static bool qom_set_str(QRoceTest *t, const char *prop, const char *val)
{
    return qom_set(t, prop, QOBJECT(qstring_from_str(val)));
}

static int64_t qom_get_int(QRoceTest *t, const char *prop)
{
    QObject *o = qom_get(t, prop);
    int64_t v = qnum_get_int(qobject_to(QNum, o));

    qobject_unref(o);
    return v;
}

static bool qom_get_bool(QRoceTest *t, const char *prop)
{
    QObject *o = qom_get(t, prop);
    bool v = qbool_get_bool(qobject_to(QBool, o));

    qobject_unref(o);
    return v;
}

static char *qom_get_str(QRoceTest *t, const char *prop)
{
    QObject *o = qom_get(t, prop);
    char *v = g_strdup(qstring_get_str(qobject_to(QString, o)));

    qobject_unref(o);
    return v;
}

static uint32_t injected(QRoceTest *t)
{
    return rd(t, QROCE_REG_CNT(QROCE_CNT_INJECTED_FAULTS));
}


/* ---- DCQCN: the congestion window's reaction to CNPs ---- */

/*
 * The device's next @n request packets, PSNs @psn on, and then nothing:
 * its congestion window is full.
 */
static void cw_window(Peer *pr, uint32_t psn, uint32_t n)
{
    struct timeval quiet = { .tv_usec = 300 * 1000 }, tv = { .tv_sec = 10 };
    uint8_t f[2048];
    RocePktIn p;
    uint32_t i;

    for (i = 0; i < n; i++) {
        peer_recv(pr, f, &p);
        g_assert_cmpuint(p.psn, ==, psn + i);
        g_assert_true(p.opcode == ROCE_SEND_FIRST ||
                      p.opcode == ROCE_SEND_MIDDLE);
    }
    setsockopt(pr->fd, SOL_SOCKET, SO_RCVTIMEO, &quiet, sizeof(quiet));
    g_assert_cmpint(recv(pr->fd, f, sizeof(f), 0), <, 0);
    setsockopt(pr->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

static void cw_send(Peer *pr, uint32_t qpn, uint32_t psn, uint8_t opcode)
{
    RocePktOut o;

    peer_out(pr, &o, qpn, psn, opcode);
    o.aeth_syndrome = ROCE_AETH_ACK_NO_CREDIT;
    peer_send(pr, &o, 0, false);
}

/* A fresh RC QP to the peer, streaming a 256 KiB SEND: its first window. */
static uint32_t cw_qp(QRoceTest *t, Peer *pr, uint32_t pdn, uint32_t cqn,
                      uint64_t big, uint32_t bkey)
{
    uint64_t sq, rq;
    uint32_t qpn;

    g_assert_cmpuint(mk_qp_rings(t, QROCE_QPT_RC, pdn, cqn, cqn, 0, &qpn, &sq,
                                 &rq), ==, 0);
    peer_connect(t, pr, qpn, 0x77);
    post_send(t, sq, 0, big, BP_MSG, bkey, QROCE_WQE_SIGNALED);
    qpci_io_writeq(t->dev, t->db, QROCE_DB_SQ, qroce_db_value(qpn, 1));
    cw_window(pr, 2000, 16);            /* the initial window */
    return qpn;
}

/*
 * DCQCN's window (docs/hw-spec.md section 14), against a peer that ACKs
 * whole windows by hand, with QEMU's virtual clock (and so the rate
 * timers) standing still: two CNPs in one window cut the window of a new
 * QP once, by half (16 -> 8, then +2 for the 16 PSNs acknowledged); each
 * window acknowledged without a CNP grows it by one PSN and decays the
 * window's alpha by 1/16, so that after eight quiet windows a CNP cuts
 * 18 PSNs by alpha / 2 = 608 / 2048 to 12.66, not to 9, and the 18 PSNs
 * acknowledged then open 14.  With dcqcn off, the CNP is counted and the
 * window keeps growing (16 -> 32).
 */
static void test_cnp_window(void)
{
    QRoceTest t;
    Peer pr;
    uint64_t cq, buf, big;
    uint32_t pdn, cqn, key, bkey, qpn, psn = 2016, w = 10, k;

    peer_start(&t, &pr);
    objs_setup(&t, QROCE_ACCESS_LOCAL_WRITE, &pdn, &cqn, &cq, &buf, &key);
    big = page(&t, BP_MSG / 4096);
    bkey = mk_mr(&t, pdn, big, BP_MSG / 4096, QROCE_ACCESS_LOCAL_WRITE);
    qpn = cw_qp(&t, &pr, pdn, cqn, big, bkey);
    cw_send(&pr, qpn, 0, ROCE_CNP);
    cw_send(&pr, qpn, 0, ROCE_CNP);
    cw_send(&pr, qpn, 2015, ROCE_ACK);
    cw_window(&pr, psn, w);
    for (k = 0; k < 8; k++) {
        cw_send(&pr, qpn, psn + w - 1, ROCE_ACK);
        psn += w++;
        cw_window(&pr, psn, w);
    }
    g_assert_cmpuint(w, ==, 18);
    cw_send(&pr, qpn, 0, ROCE_CNP);
    cw_send(&pr, qpn, 0, ROCE_CNP);
    cw_send(&pr, qpn, psn + w - 1, ROCE_ACK);
    cw_window(&pr, psn + w, 14);
    g_assert_cmpuint(rd(&t, QROCE_REG_CNT(QROCE_CNT_CNP_HANDLED)), ==, 4);
    g_assert_cmpuint(rd(&t, QROCE_REG_CNT(QROCE_CNT_RATE_CUTS)), ==, 4);

    qom_set_bool(&t, "dcqcn", false);
    qpn = cw_qp(&t, &pr, pdn, cqn, big, bkey);
    cw_send(&pr, qpn, 0, ROCE_CNP);
    cw_send(&pr, qpn, 2015, ROCE_ACK);
    cw_window(&pr, 2016, 32);
    g_assert_cmpuint(rd(&t, QROCE_REG_CNT(QROCE_CNT_CNP_HANDLED)), ==, 5);
    g_assert_cmpuint(rd(&t, QROCE_REG_CNT(QROCE_CNT_RATE_CUTS)), ==, 4);
    stop(&t);
}

/*
 * inject-cmd-fail: the next command of one opcode fails with the chosen
 * status, others and the one after succeed.  inject-cmd-swallow: a
 * command is consumed without a completion, the next one completes.
 */
/*
 * A bad doorbell is only recorded by the MMIO handler.  With the engine
 * stalled (inject-stall-us; the virtual clock stands still) the QP keeps
 * its state, no event is written and its doorbells are ignored; when the
 * engine runs, the QP goes to ERR with one QP_FATAL event.
 */
static void test_bad_doorbell_deferred(void)
{
    QRoceTest t;
    struct qroce_eqe e;
    uint64_t eq0, eq1;
    uint32_t out[6], pdn, cqn, qpn, bad;

    start(&t, "");
    enable(&t);
    g_assert_cmpuint(simple(&t, QROCE_CMD_ALLOC_PD, 0, out), ==, 0);
    pdn = out[0];
    mk_eq(&t, 0, &eq0);
    mk_eq(&t, 1, &eq1);
    cqn = mk_cq(&t, 1);
    g_assert_cmpuint(mk_qp(&t, QROCE_QPT_RC, pdn, cqn, 5, &qpn), ==, 0);
    g_assert_cmpuint(modify(&t, qpn, RC_INIT, QROCE_QPS_INIT, NULL), ==, 0);
    qom_set_int(&t, "inject-stall-us", 1000 * 1000);
    bad = rd(&t, QROCE_REG_CNT(QROCE_CNT_BAD_DOORBELLS));
    qpci_io_writeq(t.dev, t.db, 5 * QROCE_DB_PAGE_SIZE + QROCE_DB_RQ,
                   dbq(qpn, 17));
    g_assert_cmpuint(rd(&t, QROCE_REG_CNT(QROCE_CNT_BAD_DOORBELLS)), ==,
                     bad + 1);
    g_assert_cmpuint(query_state(&t, qpn), ==, QROCE_QPS_INIT);
    qtest_memread(t.qts, eq0, &e, sizeof(e));
    g_assert_cmpuint(e.owner & QROCE_OWNER_BIT, !=, qroce_owner_for(0, 8));
    qpci_io_writeq(t.dev, t.db, 5 * QROCE_DB_PAGE_SIZE + QROCE_DB_RQ,
                   dbq(qpn, 40));
    g_assert_cmpuint(rd(&t, QROCE_REG_CNT(QROCE_CNT_BAD_DOORBELLS)), ==,
                     bad + 1);

    qtest_clock_step(t.qts, 1000 * 1000 * 1000LL);
    g_assert_cmpuint(query_state(&t, qpn), ==, QROCE_QPS_ERR);
    qtest_memread(t.qts, eq0, &e, sizeof(e));
    g_assert_cmpuint(e.owner & QROCE_OWNER_BIT, ==, qroce_owner_for(0, 8));
    g_assert_cmpuint(e.type, ==, QROCE_EQE_QP_FATAL);
    g_assert_cmpuint(le32_to_cpu(e.handle), ==, qpn);
    qtest_memread(t.qts, eq0 + sizeof(e), &e, sizeof(e));
    g_assert_cmpuint(e.owner & QROCE_OWNER_BIT, !=, qroce_owner_for(1, 8));
    stop(&t);
}

static void test_inject_cmd(void)
{
    QRoceTest t;
    struct qroce_cmd c = { .hdr.opcode = QROCE_CMD_NOP };
    uint32_t out[6], slot;
    int i;

    start(&t, "-global qroce.inject-cmd-status=4");
    enable(&t);
    g_assert_cmpint(qom_get_int(&t, "inject-cmd-opcode"), ==, 256);
    g_assert_cmpint(qom_get_int(&t, "inject-cmd-status"), ==, 4);
    qom_set_int(&t, "inject-cmd-opcode", QROCE_CMD_ALLOC_PD);
    qom_set_int(&t, "inject-cmd-status", QROCE_CMD_ERR_NORES);
    qom_set_int(&t, "inject-cmd-fail", 1);
    g_assert_cmpuint(simple(&t, QROCE_CMD_NOP, 0, NULL), ==, QROCE_CMD_OK);
    g_assert_cmpuint(simple(&t, QROCE_CMD_ALLOC_PD, 0, NULL), ==,
                     QROCE_CMD_ERR_NORES);
    g_assert_cmpuint(simple(&t, QROCE_CMD_ALLOC_PD, 0, out), ==, QROCE_CMD_OK);
    g_assert_cmpuint(out[0], ==, 1);   /* the failed one allocated nothing */
    g_assert_cmpint(qom_get_int(&t, "inject-cmd-fail"), ==, 0);
    g_assert_cmpuint(injected(&t), ==, 1);
    g_assert_cmpuint(rd(&t, QROCE_REG_CNT(QROCE_CNT_CMD_ERRS)), ==, 1);

    /* any opcode, two in a row */
    qom_set_int(&t, "inject-cmd-opcode", 256);
    qom_set_int(&t, "inject-cmd-status", QROCE_CMD_ERR_INTERNAL);
    qom_set_int(&t, "inject-cmd-fail", 2);
    g_assert_cmpuint(simple(&t, QROCE_CMD_NOP, 0, NULL), ==,
                     QROCE_CMD_ERR_INTERNAL);
    g_assert_cmpuint(simple(&t, QROCE_CMD_DEALLOC_PD, 1, NULL), ==,
                     QROCE_CMD_ERR_INTERNAL);
    g_assert_cmpuint(simple(&t, QROCE_CMD_DEALLOC_PD, 1, NULL), ==,
                     QROCE_CMD_OK);
    g_assert_cmpuint(injected(&t), ==, 3);

    /* swallowed: CMDQ_CI moves, no completion entry */
    qom_set_int(&t, "inject-cmd-swallow", 1);
    slot = t.pi & ((1u << CMDQ_LOG2) - 1);
    c.hdr.cookie = cpu_to_le32(0xdead);
    qtest_memwrite(t.qts, t.cmdq + slot * QROCE_CMD_SIZE, &c, sizeof(c));
    t.pi++;
    wr(&t, QROCE_REG_CMDQ_PI, t.pi);
    for (i = 0; i < 1000 && rd(&t, QROCE_REG_CMDQ_CI) != t.pi; i++) {
        g_usleep(1000);
    }
    g_assert_cmpuint(rd(&t, QROCE_REG_CMDQ_CI), ==, t.pi);
    g_assert_false(entry_ready(&t, t.comp, QROCE_CMD_COMP_SIZE, CMDQ_LOG2,
                               t.pi - 1));
    g_assert_cmpuint(injected(&t), ==, 4);
    g_assert_cmpint(qom_get_int(&t, "inject-cmd-swallow"), ==, 0);
    /* the queue is not stuck: the next command completes */
    g_assert_cmpuint(simple(&t, QROCE_CMD_NOP, 0, NULL), ==, QROCE_CMD_OK);
    g_assert_false(entry_ready(&t, t.comp, QROCE_CMD_COMP_SIZE, CMDQ_LOG2,
                               t.pi - 2));
    stop(&t);
}

static void fi_send(FrEnv *e, FrQP *q, uint32_t len)
{
    struct qroce_send_wqe h = { .opcode = QROCE_WR_SEND,
                                .flags = QROCE_WQE_SIGNALED };

    fr_put(e, q, &h, e->buf, len, e->key);
    fr_ring(e, q);
}

static void fi_recv(FrEnv *e, FrQP *q, uint32_t idx)
{
    post_recv(&e->t, q->rq, idx, e->buf + 8192, 4096, e->key);
    qpci_io_writeq(e->t.dev, e->t.db, QROCE_DB_RQ,
                   qroce_db_value(q->qpn, idx + 1));
}

/* inject-wqe-err: N send WQEs of a QP, or of any, end in the status. */
static void test_inject_wqe(void)
{
    FrEnv e;
    FrQP a, b, c;

    fr_setup(&e, "");
    fr_pair(&e, &a, &b, 1);
    fr_lone(&e, e.pdn, &c);
    qom_set_int(&e.t, "inject-wqe-qpn", b.qpn);     /* not a's */
    qom_set_int(&e.t, "inject-wqe-status", QROCE_WC_LOC_PROT_ERR);
    qom_set_int(&e.t, "inject-wqe-err", 1);
    fi_recv(&e, &b, 0);
    fi_send(&e, &a, 100);
    fr_cqe(&e, &a, QROCE_CQE_SEND, QROCE_WC_SUCCESS, NULL);
    fr_cqe(&e, &b, QROCE_CQE_RECV, QROCE_WC_SUCCESS, NULL);
    g_assert_cmpuint(injected(&e.t), ==, 0);
    fi_send(&e, &b, 100);
    fr_cqe(&e, &b, 0, QROCE_WC_LOC_PROT_ERR, NULL);
    g_assert_cmpuint(query_state(&e.t, b.qpn), ==, QROCE_QPS_ERR);
    g_assert_cmpuint(injected(&e.t), ==, 1);
    g_assert_cmpint(qom_get_int(&e.t, "inject-wqe-err"), ==, 0);

    /* two WQEs of any QP, the default status */
    qom_set_int(&e.t, "inject-wqe-qpn", 0);
    qom_set_int(&e.t, "inject-wqe-status", QROCE_WC_GENERAL_ERR);
    qom_set_int(&e.t, "inject-wqe-err", 2);
    fi_send(&e, &a, 100);
    fr_cqe(&e, &a, 0, QROCE_WC_GENERAL_ERR, NULL);
    fi_send(&e, &c, 100);
    fr_cqe(&e, &c, 0, QROCE_WC_GENERAL_ERR, NULL);
    g_assert_cmpuint(query_state(&e.t, c.qpn), ==, QROCE_QPS_ERR);
    g_assert_cmpuint(injected(&e.t), ==, 3);
    /* only the first SEND and its ACK went on the wire */
    g_assert_cmpuint(rd(&e.t, QROCE_REG_CNT(QROCE_CNT_ROCE_RX_PKTS)), ==, 2);

    /*
     * The chosen WQE waits for the one before it (lost, retransmitted):
     * it keeps its fault, and no second count is used.
     */
    fr_pair(&e, &a, &b, 1);
    fi_recv(&e, &b, 0);
    qom_set_int(&e.t, "tx-drop-ppm", 1000000);
    fi_send(&e, &a, 100);
    wait_cnt(&e.t, QROCE_CNT_WIRE_FAULTS, 1);
    qom_set_int(&e.t, "inject-wqe-qpn", a.qpn);
    qom_set_int(&e.t, "inject-wqe-status", QROCE_WC_LOC_PROT_ERR);
    qom_set_int(&e.t, "inject-wqe-err", 2);
    fi_send(&e, &a, 100);
    wait_cnt(&e.t, QROCE_CNT_INJECTED_FAULTS, 4);
    g_assert_false(entry_ready(&e.t, a.cq, sizeof(struct qroce_cqe), 6, 0));
    qom_set_int(&e.t, "tx-drop-ppm", 0);
    qtest_clock_step(e.t.qts, 200 * 1000 * 1000);   /* the retry timer */
    fr_cqe(&e, &a, QROCE_CQE_SEND, QROCE_WC_SUCCESS, NULL);
    fr_cqe(&e, &a, 0, QROCE_WC_LOC_PROT_ERR, NULL);
    g_assert_cmpuint(injected(&e.t), ==, 4);
    g_assert_cmpint(qom_get_int(&e.t, "inject-wqe-err"), ==, 1);
    stop(&e.t);
}

/*
 * inject-rnr-nak: the responder answers one SEND with an RNR NAK, the
 * requester retries after the RNR timer and succeeds.  inject-access-nak:
 * the requester's WQE ends in REM_ACCESS_ERR, the responder in ERR.
 */
static void test_inject_nak(void)
{
    FrEnv e;
    FrQP a, b;
    uint32_t rnr;

    fr_setup(&e, "");
    fr_pair(&e, &a, &b, 1);
    qom_set_int(&e.t, "inject-nak-qpn", b.qpn);
    qom_set_int(&e.t, "inject-rnr-nak", 1);
    rnr = rd(&e.t, QROCE_REG_CNT(QROCE_CNT_ROCE_RNR_NAKS));
    fi_recv(&e, &b, 0);
    fi_send(&e, &a, 600);
    wait_cnt(&e.t, QROCE_CNT_ROCE_RNR_NAKS, rnr + 1);
    g_assert_false(entry_ready(&e.t, b.cq, sizeof(struct qroce_cqe), 6, 0));
    qtest_clock_step(e.t.qts, 1000 * 1000);         /* the RNR timer */
    fr_cqe(&e, &a, QROCE_CQE_SEND, QROCE_WC_SUCCESS, NULL);
    fr_cqe(&e, &b, QROCE_CQE_RECV, QROCE_WC_SUCCESS, NULL);
    g_assert_cmpuint(rd(&e.t, QROCE_REG_CNT(QROCE_CNT_ROCE_RNR_NAKS)), ==,
                     rnr + 1);
    g_assert_cmpuint(injected(&e.t), ==, 1);

    qom_set_int(&e.t, "inject-access-nak", 1);
    fi_recv(&e, &b, 1);
    fi_send(&e, &a, 100);
    fr_cqe(&e, &a, 0, QROCE_WC_REM_ACCESS_ERR, NULL);
    g_assert_cmpuint(query_state(&e.t, a.qpn), ==, QROCE_QPS_ERR);
    g_assert_cmpuint(query_state(&e.t, b.qpn), ==, QROCE_QPS_ERR);
    g_assert_cmpuint(injected(&e.t), ==, 2);
    g_assert_cmpint(qom_get_int(&e.t, "inject-access-nak"), ==, 0);
    stop(&e.t);
}

/* The next entry of EQ 0 (256 entries at @eq0, from *@idx). */
static void eq0_next(QRoceTest *t, uint64_t eq0, uint32_t *idx,
                     uint8_t type, uint32_t handle)
{
    struct qroce_eqe ev;

    wait_entry(t, eq0, sizeof(ev), 8, (*idx)++, &ev);
    g_assert_cmphex(ev.type, ==, type);
    g_assert_cmpuint(le32_to_cpu(ev.handle), ==, handle);
}

/* inject-event: each kind appears on EQ 0, with its effect. */
static void test_inject_events(void)
{
    QRoceTest t;
    uint64_t eq0, eq1;
    uint32_t out[6], pdn, cqn, qpn, idx = 0;
    char *last, *got;

    start(&t, "");
    enable(&t);
    g_assert_cmpuint(simple(&t, QROCE_CMD_ALLOC_PD, 0, out), ==, 0);
    pdn = out[0];
    mk_eq(&t, 0, &eq0);
    mk_eq(&t, 1, &eq1);
    cqn = mk_cq(&t, 1);
    g_assert_cmpuint(mk_qp(&t, QROCE_QPT_RC, pdn, cqn, 0, &qpn), ==, 0);
    g_assert_cmpuint(modify(&t, qpn, RC_INIT, QROCE_QPS_INIT, NULL), ==, 0);

    g_assert_true(qom_set_str(&t, "inject-event", "port-down"));
    eq0_next(&t, eq0, &idx, QROCE_EQE_PORT_DOWN, 1);
    g_assert_true(qom_set_str(&t, "inject-event", "port-up"));
    eq0_next(&t, eq0, &idx, QROCE_EQE_PORT_ACTIVE, 1);
    last = g_strdup_printf("qp-fatal:%u", qpn);
    g_assert_true(qom_set_str(&t, "inject-event", last));
    eq0_next(&t, eq0, &idx, QROCE_EQE_QP_FATAL, qpn);
    g_assert_cmpuint(query_state(&t, qpn), ==, QROCE_QPS_ERR);
    g_free(last);
    last = g_strdup_printf("cq-err:%u", cqn);
    g_assert_true(qom_set_str(&t, "inject-event", last));
    eq0_next(&t, eq0, &idx, QROCE_EQE_CQ_ERR, cqn);
    got = qom_get_str(&t, "inject-event");
    g_assert_cmpstr(got, ==, last);
    g_free(got);
    g_free(last);
    /* refused: no such QP, no such event; nothing raised */
    g_assert_false(qom_set_str(&t, "inject-event", "qp-fatal:999"));
    g_assert_false(qom_set_str(&t, "inject-event", "cq-err"));
    g_assert_false(qom_set_str(&t, "inject-event", "meteor"));
    g_assert_false(entry_ready(&t, eq0, sizeof(struct qroce_eqe), 8, idx));
    g_assert_cmpuint(injected(&t), ==, 4);

    g_assert_true(qom_set_str(&t, "inject-event", "device-fatal"));
    g_assert_cmphex(rd(&t, QROCE_REG_STATUS), ==, QROCE_STATUS_FATAL);
    g_assert_cmpuint(rd(&t, QROCE_REG_FATAL_CODE), ==, QROCE_FATAL_INJECTED);
    g_assert_true(msix_wait(&t));
    g_assert_cmpuint(injected(&t), ==, 5);
    /* a reset recovers */
    enable(&t);
    g_assert_cmpuint(simple(&t, QROCE_CMD_NOP, 0, NULL), ==, QROCE_CMD_OK);
    stop(&t);
}

/* link-up: PORT_STATUS, PORT_DOWN / PORT_ACTIVE on EQ 0, ETH_IRQ.LINK. */
static void test_inject_link(void)
{
    QRoceTest t;
    uint64_t eq0;
    uint32_t idx = 0;

    start(&t, "-netdev hubport,id=n0,hubid=0 -global qroce.netdev=n0");
    enable(&t);
    mk_eq(&t, 0, &eq0);
    g_assert_true(qom_get_bool(&t, "link-up"));
    g_assert_cmphex(rd(&t, QROCE_REG_PORT_STATUS) & QROCE_PORT_LINK_UP, ==,
                    QROCE_PORT_LINK_UP);
    wr(&t, QROCE_REG_ETH_IRQ, 0xffffffff);
    qom_set_bool(&t, "link-up", false);
    g_assert_cmphex(rd(&t, QROCE_REG_PORT_STATUS) & QROCE_PORT_LINK_UP, ==, 0);
    eq0_next(&t, eq0, &idx, QROCE_EQE_PORT_DOWN, 1);
    g_assert_cmphex(rd(&t, QROCE_REG_ETH_IRQ) & QROCE_ETH_IRQ_LINK, ==,
                    QROCE_ETH_IRQ_LINK);
    g_assert_false(qom_get_bool(&t, "link-up"));
    qom_set_bool(&t, "link-up", true);
    g_assert_cmphex(rd(&t, QROCE_REG_PORT_STATUS) & QROCE_PORT_LINK_UP, ==,
                    QROCE_PORT_LINK_UP);
    eq0_next(&t, eq0, &idx, QROCE_EQE_PORT_ACTIVE, 1);
    g_assert_cmpuint(injected(&t), ==, 2);
    stop(&t);
}

/* inject-stall-us: the QP sends nothing for the time, then resumes. */
static void test_inject_stall(void)
{
    FrEnv e;
    FrQP a, b;
    uint32_t tx;

    fr_setup(&e, "");
    fr_pair(&e, &a, &b, 1);
    qom_set_int(&e.t, "inject-stall-qpn", a.qpn);
    qom_set_int(&e.t, "inject-stall-us", 1000);
    g_assert_cmpint(qom_get_int(&e.t, "inject-stall-us"), ==, 1000);
    tx = rd(&e.t, QROCE_REG_CNT(QROCE_CNT_ROCE_TX_PKTS));
    fi_recv(&e, &b, 0);
    fi_send(&e, &a, 100);
    g_usleep(50 * 1000);
    g_assert_cmpuint(simple(&e.t, QROCE_CMD_NOP, 0, NULL), ==, 0);
    qtest_clock_step(e.t.qts, 900 * 1000);
    g_usleep(20 * 1000);
    g_assert_cmpuint(rd(&e.t, QROCE_REG_CNT(QROCE_CNT_ROCE_TX_PKTS)), ==, tx);
    g_assert_false(entry_ready(&e.t, a.cq, sizeof(struct qroce_cqe), 6, 0));
    qtest_clock_step(e.t.qts, 200 * 1000);          /* past the stall */
    fr_cqe(&e, &a, QROCE_CQE_SEND, QROCE_WC_SUCCESS, NULL);
    fr_cqe(&e, &b, QROCE_CQE_RECV, QROCE_WC_SUCCESS, NULL);
    g_assert_cmpuint(rd(&e.t, QROCE_REG_CNT(QROCE_CNT_ROCE_TX_PKTS)), >, tx);
    g_assert_cmpuint(injected(&e.t), ==, 1);
    stop(&e.t);
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

static QDict *objects(QRoceTest *t)
{
    char *js = qom_get_str(t, "objects");
    QDict *d = qobject_to(QDict, qobject_from_json(js, &error_abort));

    g_assert(d);
    g_free(js);
    return d;
}

/* "objects": a QP with its state and PSNs, a CQ with its indices, an MR. */
static void test_objects(void)
{
    FrEnv e;
    FrQP a, b;
    QDict *o, *q, *cq;

    fr_setup(&e, "");
    fr_pair(&e, &a, &b, 1);
    o = objects(&e.t);
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
    fi_recv(&e, &b, 0);
    fi_send(&e, &a, 600);
    fr_cqe(&e, &a, QROCE_CQE_SEND, QROCE_WC_SUCCESS, NULL);
    fr_cqe(&e, &b, QROCE_CQE_RECV, QROCE_WC_SUCCESS, NULL);
    o = objects(&e.t);
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
                    ==, rd(&e.t, QROCE_REG_CNT(QROCE_CNT_CMDS)));
    qobject_unref(o);
    stop(&e.t);
}

/*
 * The driver's mistakes are traced by name: bad command fields, a
 * doorbell to a missing object, a misaligned ring, a write to a
 * read-only register (qroce_ub_*, through the log trace backend).
 */
/* test_ub_traces' trace log, made before its QEMU starts. */
static char *g_ub_log;

static char *ub_prepare(void)
{
    int fd = g_file_open_tmp("qroce-ub-XXXXXX", &g_ub_log, NULL);

    g_assert(fd >= 0);
    close(fd);
    return g_strdup_printf("-D %s -trace enable=qroce_ub_*", g_ub_log);
}

static void test_ub_traces(void)
{
    QRoceTest t;
    struct qroce_cmd c = { .hdr.opcode = QROCE_CMD_CREATE_EQ };
    g_autofree char *log = g_ub_log;
    gchar *text = NULL;
    uint64_t ring;

    g_ub_log = NULL;
    start(&t, g_extra);
    enable(&t);
    g_assert_cmpuint(simple(&t, QROCE_CMD_DESTROY_QP, 77, NULL), ==,
                     QROCE_CMD_ERR_HANDLE);
    ring = page(&t, 2) + 8;
    c.create_eq.eqn = cpu_to_le32(0);
    c.create_eq.log2_entries = 8;
    c.create_eq.ring = (struct qroce_bt){ cpu_to_le64(ring), cpu_to_le32(1),
                                          12, QROCE_BT_CONTIG, 0 };
    g_assert_cmpuint(cmd(&t, &c, NULL), ==, QROCE_CMD_ERR_PARAM);
    c.create_eq.log2_entries = 30;
    g_assert_cmpuint(cmd(&t, &c, NULL), ==, QROCE_CMD_ERR_PARAM);
    memset(&c, 0, sizeof(c));
    c.hdr.opcode = QROCE_CMD_CREATE_CQ;
    g_assert_cmpuint(cmd(&t, &c, NULL), ==, QROCE_CMD_ERR_PARAM);
    wr(&t, QROCE_REG_MAGIC, 1);
    qpci_io_writeq(t.dev, t.db, QROCE_DB_SQ, qroce_db_value(99, 1));
    stop(&t);

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

#undef M

/*
 * The tests, each with the arguments its QEMU needs: fixed ones, or a
 * function that makes them (and what the test will use) just before.
 */
typedef struct QRoceCase {
    const char *name;
    void (*fn)(void);
    const char *args;
    char *(*prepare)(void);
} QRoceCase;

static const QRoceCase qroce_cases[] = {
    { "registers", test_registers, NULL, NULL },
    { "reset-enable", test_reset_enable, NULL, NULL },
    { "commands", test_commands, NULL, NULL },
    { "garbage", test_garbage, NULL, NULL },
    { "qp-states", test_qp_states, NULL, NULL },
    { "doorbells", test_doorbells, NULL, NULL },
    { "srq", test_srq, NULL, NULL },
    { "rc-loopback", test_rc_loopback, NULL, NULL },
    { "ud-loopback", test_ud_loopback, NULL, NULL },
    { "uc-loopback", test_uc_loopback, NULL, NULL },
    { "garbage-wqes", test_garbage_wqes, NULL, NULL },
    { "eq-overflow", test_eq_overflow, NULL, NULL },
    { "ethernet", test_ethernet, NULL, eth_prepare },
    { "audit/wqe-snapshot", test_audit_wqe_snapshot, NULL, NULL },
    { "audit/bt-limits", test_audit_bt_limits,
      "-global qroce.max-bt-pages=64", NULL },
    { "audit/doorbell-budget", test_audit_doorbell_budget, NULL, NULL },
    { "audit/sq-pi-back", test_audit_sq_pi_back, NULL, NULL },
    { "sq-pi-after-rewind", test_sq_pi_after_rewind, NULL, peer_prepare },
    { "audit/dma-mmio", test_audit_dma_mmio, NULL, NULL },
    { "audit/cmdq-log2", test_audit_cmdq_log2, NULL, NULL },
    { "audit/dma-hole", test_audit_dma_hole, NULL, NULL },
    { "audit/key-reuse", test_audit_key_reuse, NULL, NULL },
    { "audit/rx-frames", test_audit_rx_frames, NULL, peer_prepare },
    { "mcast", test_mcast, NULL, peer_prepare },
    { "mcast-loop", test_mcast_loop, NULL, peer_prepare },
    { "mcast-limits", test_mcast_limits,
      "-global qroce.mcast-max-groups=2 -global qroce.mcast-max-qp-attach=2",
      NULL },
    { "eth-mc-filter", test_eth_mc_filter, NULL, peer_prepare },
    { "wire-backpressure", test_wire_backpressure, NULL, bp_prepare },
    { "cnp-window", test_cnp_window, NULL, peer_prepare },
    { "cq-resize", test_cq_resize, NULL, NULL },
    { "srq-resize", test_srq_resize, NULL, NULL },
    { "srq-shared-message", test_srq_shared_message, NULL, peer_prepare },
    { "rereg-mr", test_rereg_mr, NULL, NULL },
    { "fault-knobs", test_fault_knobs, NULL, NULL },
    { "frmr/rdma", test_frmr_rdma, NULL, NULL },
    { "frmr/send-inv", test_frmr_send_inv,
      "-global qroce.tx-dup-ppm=1000000", NULL },
    { "frmr/replay", test_frmr_replay, NULL, NULL },
    { "zero-length-rdma", test_zero_length_rdma, NULL, NULL },
    { "mw", test_mw, NULL, NULL },
    { "frmr/errors", test_frmr_errors,
      "-global qroce.max-bt-pages=1000", NULL },
    { "flush-atomic-write", test_flush_atomic_write, NULL, NULL },
    { "flush-atomic-write-wire", test_flush_atomic_write_wire, NULL,
      peer_prepare },
    { "inject/cmd", test_inject_cmd,
      "-global qroce.inject-cmd-status=4", NULL },
    { "inject/wqe", test_inject_wqe, NULL, NULL },
    { "inject/nak", test_inject_nak, NULL, NULL },
    { "inject/events", test_inject_events, NULL, NULL },
    { "inject/link", test_inject_link,
      "-netdev hubport,id=n0,hubid=0 -global qroce.netdev=n0", NULL },
    { "inject/stall", test_inject_stall, NULL, NULL },
    { "bad-doorbell-deferred", test_bad_doorbell_deferred, NULL, NULL },
    { "objects", test_objects, NULL, NULL },
    { "ub-traces", test_ub_traces, NULL, ub_prepare },
};

/* qos-test's "before": this test's arguments on its QEMU's command line. */
static void *qroce_before(GString *cmd_line, void *arg)
{
    const QRoceCase *c = arg;

    g_free(g_extra);
    g_extra = c->prepare ? c->prepare() : g_strdup(c->args ? c->args : "");
    /* a fresh QEMU for every test: no state carried over in guest RAM */
    g_string_append_printf(cmd_line, " -name qroce-test-%s %s",
                           c->name, g_extra);
    return arg;
}

static void qroce_run(void *obj, void *data, QGuestAllocator *alloc)
{
    const QRoceCase *c = data;

    g_node = obj;
    g_alloc = alloc;
    c->fn();
    g_node = NULL;
    g_alloc = NULL;
}

static void qroce_register_tests(void)
{
    size_t i;

    for (i = 0; i < ARRAY_SIZE(qroce_cases); i++) {
        QOSGraphTestOptions opts = {
            .before = qroce_before,
            .arg = (void *)&qroce_cases[i],
        };

        qos_add_test(qroce_cases[i].name, "qroce", qroce_run, &opts);
    }
}

libqos_init(qroce_register_tests);
