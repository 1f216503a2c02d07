/*
 * What qroce's fuzz targets share (qroce_fuzz.h): the device on the PCI
 * bus, its registers, doorbells and command queue, QPs brought to RTS,
 * and frames delivered from the wire.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "fuzz.h"
#include "qroce_fuzz.h"

const uint8_t qroce_fuzz_dev_mac[6] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 };
const uint8_t qroce_fuzz_peer_mac[6] = { 0x52, 0x54, 0x00, 0xaa, 0xbb, 0x01 };
const uint8_t qroce_fuzz_gid_v4[16] = { [10] = 0xff, [11] = 0xff, [12] = 10,
                                        [15] = 1 };
const uint8_t qroce_fuzz_peer_v4[16] = { [10] = 0xff, [11] = 0xff, [12] = 10,
                                         [15] = 2 };
const uint8_t qroce_fuzz_gid_v6[16] = { 0xfd, [15] = 1 };
const uint8_t qroce_fuzz_peer_v6[16] = { 0xfd, [15] = 2 };

/*
 * QEMU's command line: q35 with 512 MiB, the device with @props (",..."
 * or "") on hub port n0, and what environment variable @env adds (e.g.
 * "-trace qroce_*").
 */
GString *qroce_fuzz_cmdline(const char *props, const char *env)
{
    GString *cmd_line = g_string_new(TARGET_NAME);

    g_string_append_printf(cmd_line, " -display none "
                           "-machine q35,accel=qtest -m 512M -nodefaults "
                           "-device qroce,netdev=n0,mac=52:54:00:12:34:56%s "
                           "-netdev hubport,id=n0,hubid=0 ", props);
    if (getenv(env)) {
        g_string_append(cmd_line, getenv(env));
    }
    return cmd_line;
}

static void find_dev(QPCIDevice *dev, int devfn, void *data)
{
    *(QPCIDevice **)data = dev;
}

/* The device on a new PCI bus: BAR0 and BAR2 mapped, memory and bus master. */
void qroce_fuzz_open(QRoceFuzz *f, QTestState *s)
{
    f->qts = s;
    f->wire = qemu_find_netdev("n0");
    g_assert(f->wire);
    f->bus = qpci_new_pc(s, NULL);
    f->dev = NULL;
    qpci_device_foreach(f->bus, QROCE_PCI_VENDOR_ID, QROCE_PCI_DEVICE_ID,
                        find_dev, &f->dev);
    g_assert(f->dev);
    f->regs = qpci_iomap(f->dev, QROCE_BAR_REGS, NULL);
    f->db = qpci_iomap(f->dev, QROCE_BAR_DB, NULL);
    qpci_device_enable(f->dev);
    qroce_fuzz_flush(f);            /* what the last input left waiting */
}

/*
 * Run what is pending, with a wire that takes every frame the device
 * sends.  The hub has no other member, so a frame the device sends
 * waits in the hub port's queue, and the device holds back everything
 * else until it goes (qroce_port_busy()): left there, the first frame of
 * a run would stop the device's sending for good, CTRL.RESET and system
 * resets included.  Each round drops what waits, as a wire takes it (the
 * device hears that it went), and runs the main loop again.
 */
void qroce_fuzz_flush(QRoceFuzz *f)
{
    int i;

    for (i = 0; i < 8; i++) {
        qemu_purge_queued_packets(f->wire->peer);
        flush_events(f->qts);
    }
}

/* The end of an input: what it left runs, then a system reset. */
void qroce_fuzz_close(QRoceFuzz *f)
{
    qroce_fuzz_flush(f);
    g_free(f->dev);
    f->dev = NULL;
    qpci_free_pc(f->bus);
    f->bus = NULL;
    fuzz_reset(f->qts);
}

/*
 * Zero guest memory.  Not qtest_memset(): its in-process wrapper
 * (tests/qtest/fuzz/qtest_wrappers.c, QEMU 10.0 and 11.1) leaks the
 * buffer it fills, 14 KiB per input in qroce-frames, which ends every
 * run out of memory.
 */
void qroce_fuzz_zero(QRoceFuzz *f, uint64_t addr, size_t len)
{
    static const uint8_t z[4096];

    while (len) {
        size_t n = MIN(len, sizeof(z));

        qtest_memwrite(f->qts, addr, z, n);
        addr += n;
        len -= n;
    }
}

uint32_t qroce_fuzz_rd(QRoceFuzz *f, uint32_t reg)
{
    return qpci_io_readl(f->dev, f->regs, reg);
}

void qroce_fuzz_wr(QRoceFuzz *f, uint32_t reg, uint32_t val)
{
    qpci_io_writel(f->dev, f->regs, reg, val);
}

void qroce_fuzz_ring(QRoceFuzz *f, uint32_t off, uint32_t obj, uint32_t val)
{
    qpci_io_writeq(f->dev, f->db, off, qroce_db_value(obj, val));
}

/* CTRL.RESET, then the command queue at QROCE_FUZZ_CMDQ and ENABLE. */
void qroce_fuzz_enable(QRoceFuzz *f)
{
    qroce_fuzz_wr(f, QROCE_REG_CTRL, QROCE_CTRL_RESET);
    f->pi = 0;
    qroce_fuzz_zero(f, QROCE_FUZZ_CMDQ, 0x2000);
    qroce_fuzz_wr(f, QROCE_REG_CMDQ_BASE_LO, QROCE_FUZZ_CMDQ);
    qroce_fuzz_wr(f, QROCE_REG_CMDQ_BASE_HI, 0);
    qroce_fuzz_wr(f, QROCE_REG_CMDQ_CQ_LO, QROCE_FUZZ_COMP);
    qroce_fuzz_wr(f, QROCE_REG_CMDQ_CQ_HI, 0);
    qroce_fuzz_wr(f, QROCE_REG_CMDQ_LOG2, QROCE_FUZZ_CMDQ_LOG2);
    qroce_fuzz_wr(f, QROCE_REG_CTRL, QROCE_CTRL_ENABLE);
}

/* One command; its status (0xff if it never completed). */
int qroce_fuzz_cmd(QRoceFuzz *f, struct qroce_cmd *c, uint32_t *out)
{
    uint32_t slot = f->pi & ((1u << QROCE_FUZZ_CMDQ_LOG2) - 1);
    uint64_t caddr = QROCE_FUZZ_COMP + slot * QROCE_CMD_COMP_SIZE;
    struct qroce_cmd_comp comp;
    int i;

    c->hdr.cookie = cpu_to_le32(f->pi);
    qtest_memwrite(f->qts, QROCE_FUZZ_CMDQ + slot * QROCE_CMD_SIZE, c,
                   sizeof(*c));
    f->pi++;
    qroce_fuzz_wr(f, QROCE_REG_CMDQ_PI, f->pi);
    for (i = 0; i < 100; i++) {
        qroce_fuzz_flush(f);
        qtest_memread(f->qts, caddr, &comp, sizeof(comp));
        if ((comp.owner & QROCE_OWNER_BIT) ==
            qroce_owner_for(f->pi - 1, QROCE_FUZZ_CMDQ_LOG2)) {
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
 * Set-up steps must succeed: a failure is a bug of the target or the
 * device, reported (and crashing) on the first input.
 */
void qroce_fuzz_must(QRoceFuzz *f, int st, const char *what)
{
    if (st != QROCE_CMD_OK) {
        fprintf(stderr, "%s: set-up step %s failed: status %d\n", f->name,
                what, st);
        abort();
    }
}

struct qroce_bt qroce_fuzz_bt(uint64_t addr, uint32_t npages)
{
    return (struct qroce_bt){ cpu_to_le64(addr), cpu_to_le32(npages), 12,
                              QROCE_BT_CONTIG, 0 };
}

void qroce_fuzz_peer_av(struct qroce_av *av, bool v6)
{
    memset(av, 0, sizeof(*av));
    memcpy(av->dgid, v6 ? qroce_fuzz_peer_v6 : qroce_fuzz_peer_v4, 16);
    memcpy(av->dmac, qroce_fuzz_peer_mac, 6);
    av->sgid_index = v6;
    av->hop_limit = 64;
    av->net_type = v6 ? QROCE_NET_IPV6 : QROCE_NET_IPV4;
}

/* MODIFY_QP of @qpn to @state with @mask and the attributes in @c. */
void qroce_fuzz_modify(QRoceFuzz *f, uint32_t qpn, uint32_t mask,
                       uint8_t state, struct qroce_cmd *c)
{
    c->hdr.opcode = QROCE_CMD_MODIFY_QP;
    c->modify_qp.qpn = cpu_to_le32(qpn);
    c->modify_qp.attr_mask = cpu_to_le32(mask);
    c->modify_qp.new_state = state;
    qroce_fuzz_must(f, qroce_fuzz_cmd(f, c, NULL), "MODIFY_QP");
}

#define M(x) QROCE_QP_ATTR_##x
#define RC_RTR  (M(STATE) | M(AV) | M(PATH_MTU) | M(DEST_QPN) | M(RQ_PSN))

static void connect_ud(QRoceFuzz *f, uint32_t qpn, uint8_t type)
{
    struct qroce_cmd c;
    uint32_t mask = M(STATE) | M(PKEY_INDEX) | M(QKEY);

    memset(&c, 0, sizeof(c));
    c.modify_qp.qkey = cpu_to_le32(type == QROCE_QPT_GSI ?
                                   QROCE_FUZZ_GSI_QKEY : QROCE_FUZZ_QKEY);
    mask |= type == QROCE_QPT_UD ? M(PORT) : 0;
    qroce_fuzz_modify(f, qpn, mask, QROCE_QPS_INIT, &c);
    memset(&c, 0, sizeof(c));
    qroce_fuzz_modify(f, qpn, M(STATE), QROCE_QPS_RTR, &c);
    memset(&c, 0, sizeof(c));
    c.modify_qp.sq_psn = cpu_to_le32(QROCE_FUZZ_SQ_PSN);
    qroce_fuzz_modify(f, qpn, M(STATE) | M(SQ_PSN), QROCE_QPS_RTS, &c);
}

/*
 * QP @qpn of @type to RTS: RC and UC connected to the peer's @dest_qpn
 * over IPv4 (GID 0) or IPv6 (GID 1), UD and GSI with their Q_Key.
 */
void qroce_fuzz_connect(QRoceFuzz *f, uint32_t qpn, uint8_t type, bool v6,
                        uint32_t dest_qpn)
{
    bool rc = type == QROCE_QPT_RC;
    struct qroce_cmd c;

    if (type == QROCE_QPT_UD || type == QROCE_QPT_GSI) {
        connect_ud(f, qpn, type);
        return;
    }
    memset(&c, 0, sizeof(c));
    c.modify_qp.access_flags = cpu_to_le32(QROCE_QP_ACCESS_MASK);
    qroce_fuzz_modify(f, qpn, M(STATE) | M(PKEY_INDEX) | M(PORT) |
                      M(ACCESS_FLAGS), QROCE_QPS_INIT, &c);
    memset(&c, 0, sizeof(c));
    c.modify_qp.path_mtu = 3;                 /* 1024 */
    c.modify_qp.dest_qpn = cpu_to_le32(dest_qpn);
    c.modify_qp.rq_psn = cpu_to_le32(QROCE_FUZZ_RQ_PSN);
    c.modify_qp.min_rnr_timer = 1;
    c.modify_qp.max_dest_rd_atomic = 4;
    qroce_fuzz_peer_av(&c.modify_qp.av, v6);
    qroce_fuzz_modify(f, qpn, rc ? RC_RTR | M(MAX_DEST_RD_ATOMIC) |
                      M(MIN_RNR_TIMER) : RC_RTR, QROCE_QPS_RTR, &c);
    memset(&c, 0, sizeof(c));
    c.modify_qp.timeout = 14;
    c.modify_qp.retry_cnt = 7;
    c.modify_qp.rnr_retry = 7;
    c.modify_qp.max_rd_atomic = 4;
    c.modify_qp.sq_psn = cpu_to_le32(QROCE_FUZZ_SQ_PSN);
    qroce_fuzz_modify(f, qpn, rc ? M(STATE) | M(TIMEOUT) | M(RETRY_CNT) |
                      M(RNR_RETRY) | M(SQ_PSN) | M(MAX_QP_RD_ATOMIC) :
                      M(STATE) | M(SQ_PSN), QROCE_QPS_RTS, &c);
}

/*
 * CREATE_QP of @type on @pdn and CQ @cqn: an SQ of 16 64-byte WQEs at
 * @rings, then an RQ of as many at @rings + 4 KiB, or SRQ @srqn if it
 * is not 0.  Its QPN.
 */
uint32_t qroce_fuzz_mk_qp(QRoceFuzz *f, uint8_t type, uint32_t pdn,
                          uint32_t cqn, uint32_t srqn, uint64_t rings)
{
    struct qroce_cmd c = { .hdr.opcode = QROCE_CMD_CREATE_QP };
    uint32_t out[6];

    c.create_qp.pdn = cpu_to_le32(pdn);
    c.create_qp.send_cqn = cpu_to_le32(cqn);
    c.create_qp.recv_cqn = cpu_to_le32(cqn);
    c.create_qp.type = type;
    c.create_qp.sq_log2_entries = 4;
    c.create_qp.sq_wqe_shift = 6;
    c.create_qp.sq = qroce_fuzz_bt(rings, 1);
    if (srqn) {
        c.create_qp.flags = QROCE_CREATE_QP_SRQ;
        c.create_qp.srqn = cpu_to_le32(srqn);
    } else {
        c.create_qp.rq_log2_entries = 4;
        c.create_qp.rq_wqe_shift = 6;
        c.create_qp.rq = qroce_fuzz_bt(rings + 0x1000, 1);
    }
    qroce_fuzz_must(f, qroce_fuzz_cmd(f, &c, out), "CREATE_QP");
    return out[0];
}

/*
 * 16 receive WQEs of two SGEs each (64-byte stride) at @ring, WQE j
 * taking 2 KiB at @buf + j * 2 KiB through @key.
 */
void qroce_fuzz_put_recvs(QRoceFuzz *f, uint64_t ring, uint64_t buf,
                          uint32_t key)
{
    struct {
        struct qroce_recv_wqe h;
        struct qroce_sge sge[2];
    } w;
    int j;

    for (j = 0; j < 16; j++) {
        memset(&w, 0, sizeof(w));
        w.h.num_sge = 2;
        w.sge[0].addr = cpu_to_le64(buf + j * 2048);
        w.sge[0].length = cpu_to_le32(1024);
        w.sge[0].lkey = cpu_to_le32(key);
        w.sge[1].addr = cpu_to_le64(buf + j * 2048 + 1024);
        w.sge[1].length = cpu_to_le32(1024);
        w.sge[1].lkey = cpu_to_le32(key);
        qtest_memwrite(f->qts, ring + j * 64, &w, sizeof(w));
    }
}

/*
 * A SEND, an RDMA WRITE, an RDMA READ and two atomics to the peer in
 * SQ slots @slot.. of the 16 at @sq, from @buf + 32 KiB on through
 * @key: their responses are what frames from the wire can hit.  How many.
 */
unsigned qroce_fuzz_put_requests(QRoceFuzz *f, uint64_t sq, unsigned slot,
                                 uint64_t buf, uint32_t key)
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
    unsigned j;

    for (j = 0; j < ARRAY_SIZE(wr_list); j++) {
        memset(&w, 0, sizeof(w));
        w.h.opcode = wr_list[j].op;
        w.h.flags = QROCE_WQE_SIGNALED;
        w.h.num_sge = 1;
        w.h.rdma.remote_addr = cpu_to_le64(0x7f0000000000ULL + j * 0x10000);
        w.h.rdma.rkey = cpu_to_le32(0x1234);
        w.h.rdma.compare_add = cpu_to_le64(1);
        w.h.rdma.swap = cpu_to_le64(2);
        w.sge.addr = cpu_to_le64(buf + 0x8000 + j * 0x1000);
        w.sge.length = cpu_to_le32(wr_list[j].len);
        w.sge.lkey = cpu_to_le32(key);
        qtest_memwrite(f->qts, sq + ((slot + j) & 15) * 64, &w, sizeof(w));
    }
    return ARRAY_SIZE(wr_list);
}

/* A frame from the wire, as a netdev backend delivers one it received. */
void qroce_fuzz_deliver(QRoceFuzz *f, const uint8_t *buf, size_t len)
{
    if (f->log) {
        size_t i;

        fprintf(stderr, "[frame %zu]", len);
        for (i = 0; i < len; i++) {
            fprintf(stderr, "%s%02x", i % 32 ? "" : "\n  ", buf[i]);
        }
        fprintf(stderr, "\n");
    }
    qemu_send_packet(f->wire, buf, len);
    qroce_fuzz_flush(f);
    if (f->log) {
        fprintf(stderr, "  roce rx %u, rx drops %u, icrc errors %u, "
                "eth rx %u, eth drops %u\n",
                qroce_fuzz_rd(f, QROCE_REG_CNT(QROCE_CNT_ROCE_RX_PKTS)),
                qroce_fuzz_rd(f, QROCE_REG_CNT(QROCE_CNT_ROCE_RX_DROPS)),
                qroce_fuzz_rd(f, QROCE_REG_CNT(QROCE_CNT_ROCE_ICRC_ERRS)),
                qroce_fuzz_rd(f, QROCE_REG_CNT(QROCE_CNT_ETH_RX_FRAMES)),
                qroce_fuzz_rd(f, QROCE_REG_CNT(QROCE_CNT_ETH_RX_DROPS)));
    }
}
