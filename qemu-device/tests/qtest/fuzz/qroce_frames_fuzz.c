/*
 * qroce-frames: libFuzzer target for the receive path of the qroce device.
 *
 * Every input starts from a device set up as a driver would: command queue,
 * EQ 0 and 1, one CQ, a PD, GIDs 0 (10.0.0.1) and 1 (fd00::1), a 64 KiB MR
 * with every access right, an AH, an SRQ, the Ethernet RX ring, and six QPs
 * in RTS (RC over IPv4, RC over IPv6, UC, UD, the GSI QP, RC on the SRQ),
 * each with receive WQEs posted; QP 0 has a SEND, an RDMA WRITE, an RDMA
 * READ and two atomics in flight, so responses have something to match.
 * Then the fuzzer's bytes arrive as frames from the wire: they enter the
 * netdev (a hub port the device is the only other member of) exactly as a
 * backend delivers a received frame, qemu_send_packet() on the backend's
 * NetClientState.
 *
 * Input: operations separated by "FUZZ"; the first byte of each is the
 * opcode (modulo OP_MAX):
 *   OP_RAW     the rest is a whole Ethernet frame, sent as is
 *   OP_ROCE    struct roce_op, then payload: a RoCEv2 frame built with
 *              the device's own builder (right lengths, IPv4 checksum and
 *              ICRC), addressed to one of the QPs above with PSNs relative
 *              to the ones it expects, then optionally corrupted/truncated
 *   OP_STEP    advance the virtual clock to the next timer (retransmit,
 *              RNR, ACK coalescing timers)
 *   OP_DB      a doorbell on one of the QPs or the CQ (struct db_op)
 *   OP_ETH     the rest after an Ethernet header to the device's MAC with
 *              the given EtherType (non-RoCE path: the Ethernet RX ring)
 *
 * A crashing input replays with
 *   build/qemu-fuzz/qemu-fuzz-x86_64 --fuzz-target=qroce-frames FILE
 * QROCE_FRAMES_LOG=1 prints the frames it delivers, QROCE_FRAMES_ARGS adds
 * to QEMU's command line (e.g. "-trace qroce_*").
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "tests/qtest/libqtest.h"
#include "tests/qtest/libqos/pci-pc.h"
#include "net/net.h"
#include "fuzz.h"
#include "qroce_hw.h"
#include "hw/net/qroce/roce_wire.h"

#define SEPARATOR "FUZZ"
#define CMDQ_LOG2 4
#define CQ_LOG2 10
#define NQP 6

/* Guest-physical layout (the machine has 512 MiB). */
#define A_CMDQ      0x01000000ULL
#define A_COMP      0x01001000ULL
#define A_EQ0       0x01002000ULL
#define A_EQ1       0x01003000ULL
#define A_CQ        0x01004000ULL   /* 32 KiB + the consumer record */
#define A_SRQ       0x0100e000ULL
#define A_ETH_RX    0x0100f000ULL
#define A_QP(i)     (0x01010000ULL + (i) * 0x2000ULL)    /* SQ, then RQ */
#define A_ETH_BUF   0x01020000ULL   /* 8 x 2 KiB */
#define A_MR        0x01100000ULL
#define MR_PAGES    16
#define MR_LEN      (MR_PAGES * 4096)

static const uint8_t dev_mac[6] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 };
static const uint8_t peer_mac[6] = { 0x52, 0x54, 0x00, 0xaa, 0xbb, 0x01 };
static const uint8_t gid_v4[16] = { [10] = 0xff, [11] = 0xff, [12] = 10,
                                    [15] = 1 };
static const uint8_t peer_v4[16] = { [10] = 0xff, [11] = 0xff, [12] = 10,
                                     [15] = 2 };
static const uint8_t gid_v6[16] = { 0xfd, [15] = 1 };
static const uint8_t peer_v6[16] = { 0xfd, [15] = 2 };

enum { Q_RC4, Q_RC6, Q_UC, Q_UD, Q_GSI, Q_SRQ };
#define SQ_PSN 0x100
#define RQ_PSN 0x200
#define PEER_QPN(i) (0x11 + (i))
#define QKEY 0x1111

typedef struct {
    QTestState *qts;
    QPCIBus *bus;
    QPCIDevice *dev;
    QPCIBar regs, db;
    NetClientState *wire;       /* the backend side of the device's netdev */
    uint32_t pi;
    uint32_t pdn, cqn, key, srqn, ahn;
    uint32_t qpn[NQP];
    bool v6[NQP];
} Dev;

static Dev d;
static bool log_frames;

/*
 * Zero guest memory.  Not qtest_memset(): its in-process wrapper
 * (tests/qtest/fuzz/qtest_wrappers.c, QEMU 10.0) leaks the buffer it
 * fills, 14 KiB per input here, which ends every run out of memory.
 */
static void zero(uint64_t addr, size_t len)
{
    static const uint8_t z[4096];

    while (len) {
        size_t n = MIN(len, sizeof(z));

        qtest_memwrite(d.qts, addr, z, n);
        addr += n;
        len -= n;
    }
}

static void find_dev(QPCIDevice *dev, int devfn, void *data)
{
    *(QPCIDevice **)data = dev;
}

static void wr(uint32_t reg, uint32_t val)
{
    qpci_io_writel(d.dev, d.regs, reg, val);
}

static void ring(uint32_t off, uint32_t obj, uint32_t val)
{
    qpci_io_writeq(d.dev, d.db, off, qroce_db_value(obj, val));
}

/* One command; its status (0xff if it never completed). */
static int cmd(struct qroce_cmd *c, uint32_t *out)
{
    uint32_t slot = d.pi & ((1u << CMDQ_LOG2) - 1);
    uint64_t caddr = A_COMP + slot * QROCE_CMD_COMP_SIZE;
    struct qroce_cmd_comp comp;
    int i;

    c->hdr.cookie = cpu_to_le32(d.pi);
    qtest_memwrite(d.qts, A_CMDQ + slot * QROCE_CMD_SIZE, c, sizeof(*c));
    d.pi++;
    wr(QROCE_REG_CMDQ_PI, d.pi);
    for (i = 0; i < 100; i++) {
        flush_events(d.qts);
        qtest_memread(d.qts, caddr, &comp, sizeof(comp));
        if ((comp.owner & QROCE_OWNER_BIT) ==
            qroce_owner_for(d.pi - 1, CMDQ_LOG2)) {
            if (out) {
                for (i = 0; i < 6; i++) {
                    out[i] = le32_to_cpu(comp.out[i]);
                }
            }
            return comp.status;
        }
    }
    return 0xff;
}

/*
 * Set-up steps must succeed: a failure is a bug of this target or the
 * device, reported (and crashing) on the first input.
 */
static void must(int st, const char *what)
{
    if (st != QROCE_CMD_OK) {
        fprintf(stderr, "qroce-frames: set-up step %s failed: status %d\n",
                what, st);
        abort();
    }
}

static struct qroce_bt bt(uint64_t addr, uint32_t npages)
{
    return (struct qroce_bt){ cpu_to_le64(addr), cpu_to_le32(npages), 12,
                              QROCE_BT_CONTIG, 0 };
}

static void peer_av(struct qroce_av *av, bool v6)
{
    memset(av, 0, sizeof(*av));
    memcpy(av->dgid, v6 ? peer_v6 : peer_v4, 16);
    memcpy(av->dmac, peer_mac, 6);
    av->sgid_index = v6;
    av->hop_limit = 64;
    av->net_type = v6 ? QROCE_NET_IPV6 : QROCE_NET_IPV4;
}

static void modify(uint32_t qpn, uint32_t mask, uint8_t state,
                   struct qroce_cmd *c)
{
    c->hdr.opcode = QROCE_CMD_MODIFY_QP;
    c->modify_qp.qpn = cpu_to_le32(qpn);
    c->modify_qp.attr_mask = cpu_to_le32(mask);
    c->modify_qp.new_state = state;
    must(cmd(c, NULL), "MODIFY_QP");
}

#define M(x) QROCE_QP_ATTR_##x

static void connect_qp(int i, uint8_t type)
{
    struct qroce_cmd c;
    uint32_t qpn = d.qpn[i];

    memset(&c, 0, sizeof(c));
    if (type == QROCE_QPT_UD || type == QROCE_QPT_GSI) {
        c.modify_qp.qkey = cpu_to_le32(type == QROCE_QPT_GSI ? 0x80010000
                                                             : QKEY);
        modify(qpn, M(STATE) | M(PKEY_INDEX) | M(QKEY) |
               (type == QROCE_QPT_UD ? M(PORT) : 0), QROCE_QPS_INIT, &c);
        memset(&c, 0, sizeof(c));
        modify(qpn, M(STATE), QROCE_QPS_RTR, &c);
        memset(&c, 0, sizeof(c));
        c.modify_qp.sq_psn = cpu_to_le32(SQ_PSN);
        modify(qpn, M(STATE) | M(SQ_PSN), QROCE_QPS_RTS, &c);
        return;
    }
    c.modify_qp.access_flags = cpu_to_le32(QROCE_QP_ACCESS_MASK);
    modify(qpn, M(STATE) | M(PKEY_INDEX) | M(PORT) | M(ACCESS_FLAGS),
           QROCE_QPS_INIT, &c);
    memset(&c, 0, sizeof(c));
    c.modify_qp.path_mtu = 3;                 /* 1024 */
    c.modify_qp.dest_qpn = cpu_to_le32(PEER_QPN(i));
    c.modify_qp.rq_psn = cpu_to_le32(RQ_PSN);
    c.modify_qp.min_rnr_timer = 1;
    c.modify_qp.max_dest_rd_atomic = 4;
    peer_av(&c.modify_qp.av, d.v6[i]);
    modify(qpn, type == QROCE_QPT_RC ?
           M(STATE) | M(AV) | M(PATH_MTU) | M(DEST_QPN) | M(RQ_PSN) |
           M(MAX_DEST_RD_ATOMIC) | M(MIN_RNR_TIMER) :
           M(STATE) | M(AV) | M(PATH_MTU) | M(DEST_QPN) | M(RQ_PSN),
           QROCE_QPS_RTR, &c);
    memset(&c, 0, sizeof(c));
    c.modify_qp.timeout = 14;
    c.modify_qp.retry_cnt = 7;
    c.modify_qp.rnr_retry = 7;
    c.modify_qp.max_rd_atomic = 4;
    c.modify_qp.sq_psn = cpu_to_le32(SQ_PSN);
    modify(qpn, type == QROCE_QPT_RC ?
           M(STATE) | M(TIMEOUT) | M(RETRY_CNT) | M(RNR_RETRY) | M(SQ_PSN) |
           M(MAX_QP_RD_ATOMIC) : M(STATE) | M(SQ_PSN), QROCE_QPS_RTS, &c);
}

/* 16 receive WQEs of two SGEs each (64-byte stride) at @ring. */
static void post_recvs(uint64_t ring_addr)
{
    struct {
        struct qroce_recv_wqe h;
        struct qroce_sge sge[2];
    } w;
    int j;

    for (j = 0; j < 16; j++) {
        memset(&w, 0, sizeof(w));
        w.h.num_sge = 2;
        w.sge[0].addr = cpu_to_le64(A_MR + j * 2048);
        w.sge[0].length = cpu_to_le32(1024);
        w.sge[0].lkey = cpu_to_le32(d.key);
        w.sge[1].addr = cpu_to_le64(A_MR + j * 2048 + 1024);
        w.sge[1].length = cpu_to_le32(1024);
        w.sge[1].lkey = cpu_to_le32(d.key);
        qtest_memwrite(d.qts, ring_addr + j * 64, &w, sizeof(w));
    }
}

static void create_qp(int i, uint8_t type, bool srq)
{
    struct qroce_cmd c = { .hdr.opcode = QROCE_CMD_CREATE_QP };
    uint32_t out[6];

    c.create_qp.pdn = cpu_to_le32(d.pdn);
    c.create_qp.send_cqn = cpu_to_le32(d.cqn);
    c.create_qp.recv_cqn = cpu_to_le32(d.cqn);
    c.create_qp.type = type;
    c.create_qp.sq_log2_entries = 4;
    c.create_qp.sq_wqe_shift = 6;
    c.create_qp.sq = bt(A_QP(i), 1);
    if (srq) {
        c.create_qp.flags = QROCE_CREATE_QP_SRQ;
        c.create_qp.srqn = cpu_to_le32(d.srqn);
    } else {
        c.create_qp.rq_log2_entries = 4;
        c.create_qp.rq_wqe_shift = 6;
        c.create_qp.rq = bt(A_QP(i) + 0x1000, 1);
    }
    must(cmd(&c, out), "CREATE_QP");
    d.qpn[i] = out[0];
    connect_qp(i, type);
    if (!srq) {
        post_recvs(A_QP(i) + 0x1000);
        ring(QROCE_DB_RQ, d.qpn[i], 16);
    }
}

/* Requests in flight on QP 0: their responses are what frames can hit. */
static void post_requests(void)
{
    static const struct { uint8_t op; uint32_t len; } wr_list[] = {
        { QROCE_WR_SEND, 3000 },
        { QROCE_WR_RDMA_WRITE, 1500 },
        { QROCE_WR_RDMA_READ, 2000 },
        { QROCE_WR_ATOMIC_FETCH_ADD, 8 },
        { QROCE_WR_ATOMIC_CMP_SWP, 8 },
    };
    struct {
        struct qroce_send_wqe h;
        struct qroce_sge sge;
    } w;
    int j;

    for (j = 0; j < ARRAY_SIZE(wr_list); j++) {
        memset(&w, 0, sizeof(w));
        w.h.opcode = wr_list[j].op;
        w.h.flags = QROCE_WQE_SIGNALED;
        w.h.num_sge = 1;
        w.h.rdma.remote_addr = cpu_to_le64(0x7f0000000000ULL + j * 0x10000);
        w.h.rdma.rkey = cpu_to_le32(0x1234);
        w.h.rdma.compare_add = cpu_to_le64(1);
        w.h.rdma.swap = cpu_to_le64(2);
        w.sge.addr = cpu_to_le64(A_MR + 0x8000 + j * 0x1000);
        w.sge.length = cpu_to_le32(wr_list[j].len);
        w.sge.lkey = cpu_to_le32(d.key);
        qtest_memwrite(d.qts, A_QP(Q_RC4) + j * 64, &w, sizeof(w));
    }
    ring(QROCE_DB_SQ, d.qpn[Q_RC4], ARRAY_SIZE(wr_list));
}

static void setup(QTestState *s)
{
    struct qroce_cmd c;
    struct qroce_eth_desc desc;
    uint32_t out[6];
    int j;

    memset(&d, 0, sizeof(d));
    d.qts = s;
    d.wire = qemu_find_netdev("n0");
    g_assert(d.wire);
    d.bus = qpci_new_pc(s, NULL);
    qpci_device_foreach(d.bus, QROCE_PCI_VENDOR_ID, QROCE_PCI_DEVICE_ID,
                        find_dev, &d.dev);
    g_assert(d.dev);
    d.regs = qpci_iomap(d.dev, QROCE_BAR_REGS, NULL);
    d.db = qpci_iomap(d.dev, QROCE_BAR_DB, NULL);
    qpci_device_enable(d.dev);

    wr(QROCE_REG_CTRL, QROCE_CTRL_RESET);
    zero(A_CMDQ, 0x2000);
    wr(QROCE_REG_CMDQ_BASE_LO, A_CMDQ);
    wr(QROCE_REG_CMDQ_BASE_HI, 0);
    wr(QROCE_REG_CMDQ_CQ_LO, A_COMP);
    wr(QROCE_REG_CMDQ_CQ_HI, 0);
    wr(QROCE_REG_CMDQ_LOG2, CMDQ_LOG2);
    wr(QROCE_REG_CTRL, QROCE_CTRL_ENABLE);

    memset(&c, 0, sizeof(c));
    c.hdr.opcode = QROCE_CMD_ALLOC_PD;
    must(cmd(&c, out), "ALLOC_PD");
    d.pdn = out[0];
    for (j = 0; j < 2; j++) {
        memset(&c, 0, sizeof(c));
        c.hdr.opcode = QROCE_CMD_CREATE_EQ;
        c.create_eq.eqn = cpu_to_le32(j);
        c.create_eq.log2_entries = 8;
        c.create_eq.ring = bt(j ? A_EQ1 : A_EQ0, 1);
        zero(j ? A_EQ1 : A_EQ0, 4096);
        must(cmd(&c, NULL), "CREATE_EQ");
    }
    memset(&c, 0, sizeof(c));
    zero(A_CQ, 10 * 4096);
    c.hdr.opcode = QROCE_CMD_CREATE_CQ;
    c.create_cq.eqn = cpu_to_le32(1);
    c.create_cq.log2_entries = CQ_LOG2;
    c.create_cq.ring = bt(A_CQ, ((32u << CQ_LOG2) + 64 + 4095) / 4096);
    must(cmd(&c, out), "CREATE_CQ");
    d.cqn = out[0];
    ring(QROCE_DB_CQ_ARM, d.cqn, QROCE_CQ_ARM_NEXT);
    for (j = 0; j < 2; j++) {
        memset(&c, 0, sizeof(c));
        c.hdr.opcode = QROCE_CMD_SET_GID;
        c.set_gid.type = QROCE_GID_ROCE_V2;
        c.set_gid.index = cpu_to_le32(j);
        memcpy(c.set_gid.gid, j ? gid_v6 : gid_v4, 16);
        must(cmd(&c, NULL), "SET_GID");
    }
    memset(&c, 0, sizeof(c));
    c.hdr.opcode = QROCE_CMD_REG_MR;
    c.reg_mr.pdn = cpu_to_le32(d.pdn);
    c.reg_mr.access = cpu_to_le32(QROCE_ACCESS_MASK);
    c.reg_mr.iova = cpu_to_le64(A_MR);
    c.reg_mr.length = cpu_to_le64(MR_LEN);
    c.reg_mr.pages = bt(A_MR, MR_PAGES);
    must(cmd(&c, out), "REG_MR");
    d.key = out[0];
    memset(&c, 0, sizeof(c));
    c.hdr.opcode = QROCE_CMD_CREATE_AH;
    c.create_ah.pdn = cpu_to_le32(d.pdn);
    peer_av(&c.create_ah.av, false);
    must(cmd(&c, out), "CREATE_AH");
    d.ahn = out[0];
    memset(&c, 0, sizeof(c));
    c.hdr.opcode = QROCE_CMD_CREATE_SRQ;
    c.create_srq.pdn = cpu_to_le32(d.pdn);
    c.create_srq.log2_entries = 6;
    c.create_srq.wqe_shift = 6;
    c.create_srq.limit = cpu_to_le32(8);
    c.create_srq.ring = bt(A_SRQ, 1);
    must(cmd(&c, out), "CREATE_SRQ");
    d.srqn = out[0];
    post_recvs(A_SRQ);
    ring(QROCE_DB_SRQ, d.srqn, 16);

    d.v6[Q_RC6] = true;
    create_qp(Q_RC4, QROCE_QPT_RC, false);
    create_qp(Q_RC6, QROCE_QPT_RC, false);
    create_qp(Q_UC, QROCE_QPT_UC, false);
    create_qp(Q_UD, QROCE_QPT_UD, false);
    create_qp(Q_GSI, QROCE_QPT_GSI, false);
    create_qp(Q_SRQ, QROCE_QPT_RC, true);

    /* the Ethernet function: 8 receive buffers of 2 KiB */
    for (j = 0; j < 8; j++) {
        desc = (struct qroce_eth_desc){ cpu_to_le64(A_ETH_BUF + j * 2048),
                                        cpu_to_le16(2048), 0, 0 };
        qtest_memwrite(s, A_ETH_RX + j * sizeof(desc), &desc, sizeof(desc));
    }
    wr(QROCE_REG_RXQ_BASE_LO, A_ETH_RX);
    wr(QROCE_REG_RXQ_BASE_HI, 0);
    wr(QROCE_REG_RXQ_LOG2, 3);
    wr(QROCE_REG_ETH_CTRL, QROCE_ETH_CTRL_RX_EN);
    wr(QROCE_REG_RXQ_PI, 8);

    post_requests();
    flush_events(s);
}

/* ---- operations ---- */

enum { OP_RAW, OP_ROCE, OP_STEP, OP_DB, OP_ETH, OP_MAX };

#define F_V6        0x01    /* IPv6 (else the QP's own family) */
#define F_RAW_QPN   0x02    /* dqpn as given, not a set-up QP */
#define F_RAW_PSN   0x04    /* psn as given, not relative */
#define F_RAW_RKEY  0x08    /* rkey as given, not the MR's */
#define F_RAW_VA    0x10    /* va as given, not an offset in the MR */
#define F_CORRUPT   0x20    /* xor a byte after building */
#define F_TRUNC     0x40    /* cut the frame short */
#define F_OTHER_MAC 0x80    /* to a MAC that is not the device's */

struct QEMU_PACKED roce_op {
    uint8_t flags;
    uint8_t qp;             /* index into the set-up QPs */
    uint8_t opcode;         /* BTH opcode */
    uint8_t bits;           /* 1 SE, 2 AckReq, 4 use DETH source = GSI, */
                            /* 0x30: ECN codepoint */
    uint32_t dqpn;
    uint32_t psn;           /* signed delta, or raw */
    uint64_t va;
    uint32_t rkey;
    uint32_t len;           /* RETH DMA length */
    uint8_t syndrome;
    uint8_t corrupt_xor;
    uint16_t corrupt_off;
    uint32_t msn;
    uint32_t imm;
    uint64_t swap_add, compare, orig;
    uint32_t qkey, sqp;
    uint16_t trunc;
};

struct QEMU_PACKED db_op {
    uint8_t which;          /* SQ, RQ, SRQ, CQ_ARM, CQ_CI */
    uint8_t qp;
    uint32_t val;
};

static void deliver(const uint8_t *buf, size_t len)
{
    if (log_frames) {
        size_t i;

        fprintf(stderr, "[frame %zu]", len);
        for (i = 0; i < len; i++) {
            fprintf(stderr, "%s%02x", i % 32 ? "" : "\n  ", buf[i]);
        }
        fprintf(stderr, "\n");
    }
    /* as a backend does with a frame it received */
    qemu_send_packet(d.wire, buf, len);
    flush_events(d.qts);
    if (log_frames) {
        fprintf(stderr, "  roce rx %u, rx drops %u, icrc errors %u, "
                "eth rx %u, eth drops %u\n",
                qpci_io_readl(d.dev, d.regs,
                              QROCE_REG_CNT(QROCE_CNT_ROCE_RX_PKTS)),
                qpci_io_readl(d.dev, d.regs,
                              QROCE_REG_CNT(QROCE_CNT_ROCE_RX_DROPS)),
                qpci_io_readl(d.dev, d.regs,
                              QROCE_REG_CNT(QROCE_CNT_ROCE_ICRC_ERRS)),
                qpci_io_readl(d.dev, d.regs,
                              QROCE_REG_CNT(QROCE_CNT_ETH_RX_FRAMES)),
                qpci_io_readl(d.dev, d.regs,
                              QROCE_REG_CNT(QROCE_CNT_ETH_RX_DROPS)));
    }
}

static void op_raw(const uint8_t *data, size_t len)
{
    if (len) {
        deliver(data, MIN(len, QROCE_ETH_MAX_FRAME + 64));
    }
}

static void op_eth(const uint8_t *data, size_t len)
{
    uint8_t buf[2048];

    if (len < 2) {
        return;
    }
    len = MIN(len - 2, sizeof(buf) - ROCE_ETH_HLEN);
    memcpy(buf, dev_mac, 6);
    memcpy(buf + 6, peer_mac, 6);
    memcpy(buf + 12, data, 2);
    memcpy(buf + ROCE_ETH_HLEN, data + 2, len);
    deliver(buf, ROCE_ETH_HLEN + len);
}

static void op_roce(const uint8_t *data, size_t len)
{
    static uint8_t buf[ROCE_MAX_HDRS + 4096 + 64];
    static const uint8_t other_mac[6] = { 0x52, 0x54, 0x00, 0x99, 0, 1 };
    struct roce_op o = {};
    RocePktOut p = {};
    uint32_t paylen, qi;
    size_t hlen, flen;
    bool v6, resp;

    memcpy(&o, data, MIN(len, sizeof(o)));
    data += MIN(len, sizeof(o));
    len -= MIN(len, sizeof(o));
    paylen = MIN(len, 4096);

    qi = o.qp % NQP;
    v6 = (o.flags & F_V6) || d.v6[qi];
    resp = o.opcode >= ROCE_READ_RESP_FIRST && o.opcode <= ROCE_ATOMIC_ACK;
    p.dmac = o.flags & F_OTHER_MAC ? other_mac : dev_mac;
    p.smac = peer_mac;
    p.sgid = v6 ? peer_v6 : peer_v4;
    p.dgid = v6 ? gid_v6 : gid_v4;
    p.tclass = (o.bits & 0x30) >> 4;
    p.hop_limit = 64;
    p.sport = 0xc000 | qi;
    p.opcode = o.opcode;
    p.se = o.bits & 1;
    p.ackreq = o.bits & 2;
    p.dqpn = o.flags & F_RAW_QPN ? o.dqpn & 0xffffff : d.qpn[qi];
    p.psn = (o.flags & F_RAW_PSN ? o.psn :
             (resp ? SQ_PSN : RQ_PSN) + (int32_t)o.psn) & 0xffffff;
    p.reth_va = o.flags & F_RAW_VA ? o.va : A_MR + o.va % (MR_LEN + 64);
    p.reth_rkey = o.flags & F_RAW_RKEY ? o.rkey : d.key;
    p.reth_len = o.len;
    p.aeth_syndrome = o.syndrome;
    p.aeth_msn = o.msn & 0xffffff;
    p.imm = o.imm;
    p.ieth = p.reth_rkey;           /* SEND with Invalidate (0x16, 0x17) */
    p.atomic_orig = o.orig;
    p.atomic_swap_add = o.swap_add;
    p.atomic_compare = o.compare;
    p.deth_qkey = o.flags & F_RAW_QPN ? o.qkey :
                  qi == Q_GSI ? 0x80010000 : QKEY;
    p.deth_sqp = (o.bits & 4 ? 1 : o.sqp) & 0xffffff;

    hlen = roce_hdr_len(p.opcode, v6);
    memcpy(buf + hlen, data, paylen);
    flen = roce_build(buf, &p, paylen);
    if (o.flags & F_CORRUPT) {
        buf[o.corrupt_off % flen] ^= o.corrupt_xor | 1;
    }
    if (o.flags & F_TRUNC) {
        flen -= o.trunc % flen;
    }
    deliver(buf, flen);
}

static void op_step(const uint8_t *data, size_t len)
{
    qtest_clock_step_next(d.qts);
    flush_events(d.qts);
}

static void op_db(const uint8_t *data, size_t len)
{
    static const uint32_t off[] = { QROCE_DB_SQ, QROCE_DB_RQ, QROCE_DB_SRQ,
                                    QROCE_DB_CQ_ARM, QROCE_DB_CQ_CI };
    struct db_op o = {};
    uint32_t obj, which;

    memcpy(&o, data, MIN(len, sizeof(o)));
    which = o.which % ARRAY_SIZE(off);
    obj = which == 2 ? d.srqn : which >= 3 ? d.cqn : d.qpn[o.qp % NQP];
    ring(off[which], obj, o.val);
    flush_events(d.qts);
}

static void qroce_frames_fuzz(QTestState *s, const unsigned char *data,
                              size_t size)
{
    static void (*const ops[OP_MAX])(const uint8_t *, size_t) = {
        [OP_RAW] = op_raw, [OP_ROCE] = op_roce, [OP_STEP] = op_step,
        [OP_DB] = op_db, [OP_ETH] = op_eth,
    };
    const unsigned char *cmd_p = data, *next;
    size_t len;

    setup(s);
    while (cmd_p && size) {
        next = memmem(cmd_p, size, SEPARATOR, strlen(SEPARATOR));
        len = next ? next - cmd_p : size;
        if (len) {
            ops[cmd_p[0] % OP_MAX](cmd_p + 1, len - 1);
        }
        if (!next) {
            break;
        }
        size -= len + strlen(SEPARATOR);
        cmd_p = next + strlen(SEPARATOR);
    }
    flush_events(s);
    g_free(d.dev);
    qpci_free_pc(d.bus);
    fuzz_reset(s);
}

static GString *qroce_frames_cmdline(FuzzTarget *t)
{
    GString *cmd_line = g_string_new(TARGET_NAME);

    g_string_append(cmd_line, " -display none -machine q35,accel=qtest "
                    "-m 512M -nodefaults "
                    "-device qroce,netdev=n0,mac=52:54:00:12:34:56 "
                    "-netdev hubport,id=n0,hubid=0 ");
    if (getenv("QROCE_FRAMES_ARGS")) {     /* e.g. -trace qroce_* */
        g_string_append(cmd_line, getenv("QROCE_FRAMES_ARGS"));
    }
    return cmd_line;
}

static void qroce_frames_pre_fuzz(QTestState *s)
{
    log_frames = getenv("QROCE_FRAMES_LOG") != NULL;
}

static void register_qroce_frames(void)
{
    fuzz_add_target(&(FuzzTarget){
        .name = "qroce-frames",
        .description = "qroce, set up with QPs of every type in RTS: the "
                       "input as frames from the wire",
        .get_init_cmdline = qroce_frames_cmdline,
        .pre_fuzz = qroce_frames_pre_fuzz,
        .fuzz = qroce_frames_fuzz,
    });
}

fuzz_target_init(register_qroce_frames);
