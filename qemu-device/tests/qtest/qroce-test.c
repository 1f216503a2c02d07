/*
 * qtests for the qroce device: the register file, reset and enable, the
 * command queue and its error statuses, and garbage writes to every
 * register and doorbell.  No guest OS: the test drives the BARs and guest
 * memory directly.  It includes the same hardware header as the device.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "libqtest.h"
#include "libqos/pci-pc.h"
#include "libqos/malloc-pc.h"
#include "qroce_hw.h"

typedef struct QRoceTest {
    QTestState *qts;
    QGuestAllocator alloc;
    QPCIBus *bus;
    QPCIDevice *dev;
    QPCIBar regs, db;
    uint64_t cmdq, comp;
    uint32_t pi;
} QRoceTest;

#define CMDQ_LOG2 4

static void find_dev(QPCIDevice *dev, int devfn, void *data)
{
    *(QPCIDevice **)data = dev;
}

static void start(QRoceTest *t, const char *extra)
{
    memset(t, 0, sizeof(*t));
    t->qts = qtest_initf("-machine q35 -nodefaults "
                         "-device qroce,mac=52:54:00:12:34:56 %s", extra);
    pc_alloc_init(&t->alloc, t->qts, ALLOC_NO_FLAGS);
    t->bus = qpci_new_pc(t->qts, &t->alloc);
    qpci_device_foreach(t->bus, QROCE_PCI_VENDOR_ID, QROCE_PCI_DEVICE_ID,
                        find_dev, &t->dev);
    g_assert(t->dev);
    t->regs = qpci_iomap(t->dev, QROCE_BAR_REGS, NULL);
    t->db = qpci_iomap(t->dev, QROCE_BAR_DB, NULL);
    qpci_device_enable(t->dev);
}

static void stop(QRoceTest *t)
{
    g_free(t->dev);
    qpci_free_pc(t->bus);
    alloc_destroy(&t->alloc);
    qtest_quit(t->qts);
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
    t->cmdq = guest_alloc(&t->alloc, 8192);
    t->cmdq = QEMU_ALIGN_UP(t->cmdq, 4096);
    t->comp = guest_alloc(&t->alloc, 8192);
    t->comp = QEMU_ALIGN_UP(t->comp, 4096);
    qtest_memset(t->qts, t->comp, 0, QROCE_CMD_COMP_SIZE << CMDQ_LOG2);
    t->pi = 0;
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
    for (i = 0; i < 10000; i++) {
        qtest_memread(t->qts, caddr, &comp, sizeof(comp));
        if ((comp.owner & QROCE_OWNER_BIT) ==
            qroce_owner_for(t->pi - 1, CMDQ_LOG2)) {
            break;
        }
    }
    g_assert_cmpint(i, <, 10000);
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
    uint64_t a = guest_alloc(&t->alloc, (n + 1) * 4096);

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
    c.create_cq.log2_entries = 6;
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
        QROCE_QP_ATTR_RQ_PSN);
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
    /* SRQs are not in this version of the model */
    g_assert_cmpuint(simple(&t, QROCE_CMD_CREATE_SRQ, 0, NULL), ==,
                     QROCE_CMD_ERR_OPCODE);
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

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/qroce/registers", test_registers);
    qtest_add_func("/qroce/reset-enable", test_reset_enable);
    qtest_add_func("/qroce/commands", test_commands);
    qtest_add_func("/qroce/garbage", test_garbage);
    return g_test_run();
}
