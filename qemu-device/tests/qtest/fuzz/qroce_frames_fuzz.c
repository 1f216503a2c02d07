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
 *   ./qemu-fuzz-x86_64 --fuzz-target=qroce-frames FILE
 * QROCE_FRAMES_LOG=1 prints the frames it delivers, QROCE_FRAMES_ARGS adds
 * to QEMU's command line (e.g. "-trace qroce_*").
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "fuzz.h"
#include "qroce_fuzz.h"
#include "hw/net/qroce/roce_wire.h"

#define SEPARATOR "FUZZ"
#define CQ_LOG2 10
#define NQP 6

/*
 * Guest-physical layout (the machine has 512 MiB; the command queue and
 * its completions are at 0x01000000, qroce_fuzz.h).
 */
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

enum { Q_RC4, Q_RC6, Q_UC, Q_UD, Q_GSI, Q_SRQ };
#define PEER_QPN(i) (0x11 + (i))

typedef struct {
    QRoceFuzz f;
    uint32_t pdn, cqn, key, srqn, ahn;
    uint32_t qpn[NQP];
    bool v6[NQP];
} Dev;

static Dev d;
static bool log_frames;

static void zero(uint64_t addr, size_t len)
{
    qroce_fuzz_zero(&d.f, addr, len);
}

static void wr(uint32_t reg, uint32_t val)
{
    qroce_fuzz_wr(&d.f, reg, val);
}

static void ring(uint32_t off, uint32_t obj, uint32_t val)
{
    qroce_fuzz_ring(&d.f, off, obj, val);
}

static int cmd(struct qroce_cmd *c, uint32_t *out)
{
    return qroce_fuzz_cmd(&d.f, c, out);
}

static void must(int st, const char *what)
{
    qroce_fuzz_must(&d.f, st, what);
}

static void post_recvs(uint64_t ring_addr)
{
    qroce_fuzz_put_recvs(&d.f, ring_addr, A_MR, d.key);
}

static void create_qp(int i, uint8_t type, bool srq)
{
    d.qpn[i] = qroce_fuzz_mk_qp(&d.f, type, d.pdn, d.cqn, srq ? d.srqn : 0,
                                A_QP(i));
    qroce_fuzz_connect(&d.f, d.qpn[i], type, d.v6[i], PEER_QPN(i));
    if (!srq) {
        post_recvs(A_QP(i) + 0x1000);
        ring(QROCE_DB_RQ, d.qpn[i], 16);
    }
}

/* Requests in flight on QP 0: their responses are what frames can hit. */
static void post_requests(void)
{
    ring(QROCE_DB_SQ, d.qpn[Q_RC4],
         qroce_fuzz_put_requests(&d.f, A_QP(Q_RC4), 0, A_MR, d.key));
}

static void setup(QTestState *s)
{
    struct qroce_cmd c;
    struct qroce_eth_desc desc;
    uint32_t out[6];
    int j;

    memset(&d, 0, sizeof(d));
    d.f.name = "qroce-frames";
    d.f.log = log_frames;
    qroce_fuzz_open(&d.f, s);
    qroce_fuzz_enable(&d.f);

    memset(&c, 0, sizeof(c));
    c.hdr.opcode = QROCE_CMD_ALLOC_PD;
    must(cmd(&c, out), "ALLOC_PD");
    d.pdn = out[0];
    for (j = 0; j < 2; j++) {
        memset(&c, 0, sizeof(c));
        c.hdr.opcode = QROCE_CMD_CREATE_EQ;
        c.create_eq.eqn = cpu_to_le32(j);
        c.create_eq.log2_entries = 8;
        c.create_eq.ring = qroce_fuzz_bt(j ? A_EQ1 : A_EQ0, 1);
        zero(j ? A_EQ1 : A_EQ0, 4096);
        must(cmd(&c, NULL), "CREATE_EQ");
    }
    memset(&c, 0, sizeof(c));
    zero(A_CQ, 10 * 4096);
    c.hdr.opcode = QROCE_CMD_CREATE_CQ;
    c.create_cq.eqn = cpu_to_le32(1);
    c.create_cq.log2_entries = CQ_LOG2;
    c.create_cq.ring = qroce_fuzz_bt(A_CQ,
                                     ((32u << CQ_LOG2) + 64 + 4095) / 4096);
    must(cmd(&c, out), "CREATE_CQ");
    d.cqn = out[0];
    ring(QROCE_DB_CQ_ARM, d.cqn, QROCE_CQ_ARM_NEXT);
    for (j = 0; j < 2; j++) {
        memset(&c, 0, sizeof(c));
        c.hdr.opcode = QROCE_CMD_SET_GID;
        c.set_gid.type = QROCE_GID_ROCE_V2;
        c.set_gid.index = cpu_to_le32(j);
        memcpy(c.set_gid.gid, j ? qroce_fuzz_gid_v6 : qroce_fuzz_gid_v4, 16);
        must(cmd(&c, NULL), "SET_GID");
    }
    memset(&c, 0, sizeof(c));
    c.hdr.opcode = QROCE_CMD_REG_MR;
    c.reg_mr.pdn = cpu_to_le32(d.pdn);
    c.reg_mr.access = cpu_to_le32(QROCE_ACCESS_MASK);
    c.reg_mr.iova = cpu_to_le64(A_MR);
    c.reg_mr.length = cpu_to_le64(MR_LEN);
    c.reg_mr.pages = qroce_fuzz_bt(A_MR, MR_PAGES);
    must(cmd(&c, out), "REG_MR");
    d.key = out[0];
    memset(&c, 0, sizeof(c));
    c.hdr.opcode = QROCE_CMD_CREATE_AH;
    c.create_ah.pdn = cpu_to_le32(d.pdn);
    qroce_fuzz_peer_av(&c.create_ah.av, false);
    must(cmd(&c, out), "CREATE_AH");
    d.ahn = out[0];
    memset(&c, 0, sizeof(c));
    c.hdr.opcode = QROCE_CMD_CREATE_SRQ;
    c.create_srq.pdn = cpu_to_le32(d.pdn);
    c.create_srq.log2_entries = 6;
    c.create_srq.wqe_shift = 6;
    c.create_srq.limit = cpu_to_le32(8);
    c.create_srq.ring = qroce_fuzz_bt(A_SRQ, 1);
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
    qroce_fuzz_flush(&d.f);
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
    qroce_fuzz_deliver(&d.f, buf, len);
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
    memcpy(buf, qroce_fuzz_dev_mac, 6);
    memcpy(buf + 6, qroce_fuzz_peer_mac, 6);
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
    p.dmac = o.flags & F_OTHER_MAC ? other_mac : qroce_fuzz_dev_mac;
    p.smac = qroce_fuzz_peer_mac;
    p.sgid = v6 ? qroce_fuzz_peer_v6 : qroce_fuzz_peer_v4;
    p.dgid = v6 ? qroce_fuzz_gid_v6 : qroce_fuzz_gid_v4;
    p.tclass = (o.bits & 0x30) >> 4;
    p.hop_limit = 64;
    p.sport = 0xc000 | qi;
    p.opcode = o.opcode;
    p.se = o.bits & 1;
    p.ackreq = o.bits & 2;
    p.dqpn = o.flags & F_RAW_QPN ? o.dqpn & 0xffffff : d.qpn[qi];
    p.psn = (o.flags & F_RAW_PSN ? o.psn :
             (resp ? QROCE_FUZZ_SQ_PSN : QROCE_FUZZ_RQ_PSN) +
             (int32_t)o.psn) & 0xffffff;
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
                  qi == Q_GSI ? 0x80010000 : QROCE_FUZZ_QKEY;
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
    qtest_clock_step_next(d.f.qts);
    qroce_fuzz_flush(&d.f);
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
    qroce_fuzz_flush(&d.f);
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
    qroce_fuzz_close(&d.f);
}

static GString *qroce_frames_cmdline(FuzzTarget *t)
{
    return qroce_fuzz_cmdline("", "QROCE_FRAMES_ARGS");
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
