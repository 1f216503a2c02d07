/*
 * qroce: the register file (BAR0) and the doorbells (BAR2).  Registers
 * are dispatched through static const tables indexed by register number;
 * the values the device keeps are in QRoceState.regs (qroce_reg()), so
 * reset clears them in one place.  A doorbell is decoded here and handed
 * to the object or QP it names.
 * The layout is include/qroce_hw.h and docs/hw-spec.md.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/main-loop.h"
#include "qemu/bswap.h"
#include "qroce_regs.h"
#include "qroce_ctrl.h"
#include "qroce_objects.h"
#include "qroce_data.h"
#include "qroce_data_common.h"
#include "qroce_port.h"
#include "trace.h"

/* A register value refused: register name, value, why. */
#define REG_BAD(reg, val, why) \
    QROCE_GUEST_ERR(qroce_ub_reg, "%s = 0x%" PRIx64 ": %s", reg, \
                    (uint64_t)(val), why)

/* ------------------------------------------------------------------ */
/* Reset                                                               */
/* ------------------------------------------------------------------ */

void qroce_reset_state(QRoceState *s)
{
    qroce_data_reset(s);
    qroce_port_reset(s);
    qroce_ctrl_reset(s);

    /* device memory holds nothing of the last driver's */
    if (s->dm) {
        memset(s->dm, 0, s->params.dm_size);
        memory_region_set_dirty(&s->dm_mr, 0, s->params.dm_size);
    }
    /* every register is 0 after reset but ETH_MTU */
    memset(s->regs, 0, sizeof(s->regs));
    qroce_reg_set(s, QROCE_REG_ETH_MTU, 1500);
}

static void qroce_enable(QRoceState *s)
{
    uint64_t base = qroce_reg64(s, QROCE_REG_CMDQ_BASE_LO);
    uint64_t cq = qroce_reg64(s, QROCE_REG_CMDQ_CQ_LO);
    uint32_t log2 = qroce_reg(s, QROCE_REG_CMDQ_LOG2);

    if (qroce_reg(s, QROCE_REG_STATUS) & QROCE_STATUS_FATAL) {
        return;
    }
    if (!base || !cq || (base & 0xfff) || (cq & 0xfff) || log2 < 1 ||
        log2 > QROCE_CMDQ_MAX_LOG2) {
        if (!base || (base & 0xfff)) {
            REG_BAD("CMDQ_BASE", base, "zero or not 4 KiB aligned at ENABLE");
        } else if (!cq || (cq & 0xfff)) {
            REG_BAD("CMDQ_CQ", cq, "zero or not 4 KiB aligned at ENABLE");
        } else {
            REG_BAD("CMDQ_LOG2", log2, "out of range at ENABLE");
        }
        qroce_fatal(s, QROCE_FATAL_CMDQ_CONFIG);
        return;
    }
    qroce_reg_mask(s, QROCE_REG_STATUS, 0, QROCE_STATUS_READY);
    qemu_bh_schedule(s->cmd_bh);
}

/* ------------------------------------------------------------------ */
/* Register file                                                       */
/* ------------------------------------------------------------------ */

typedef uint32_t (*QRoceRegRead)(QRoceState *s, hwaddr addr);

typedef void (*QRoceRegWrite)(QRoceState *s, hwaddr addr, uint32_t val);

static uint32_t qroce_rd_const(QRoceState *s, hwaddr addr)
{
    switch (addr) {
    case QROCE_REG_MAGIC:
        return QROCE_MAGIC_VALUE;
    case QROCE_REG_VERSION:
        return QROCE_SPEC_VERSION;
    case QROCE_REG_FEATURES:
        return QROCE_FEAT_RC | QROCE_FEAT_UD | QROCE_FEAT_UC |
               QROCE_FEAT_IPV6 | QROCE_FEAT_ATOMIC | QROCE_FEAT_SRQ |
               QROCE_FEAT_FRMR | QROCE_FEAT_MCAST |
               QROCE_FEAT_RESIZE_CQ | QROCE_FEAT_REREG_MR |
               QROCE_FEAT_RESIZE_SRQ | QROCE_FEAT_MW |
               QROCE_FEAT_FLUSH | QROCE_FEAT_ATOMIC_WRITE | QROCE_FEAT_ODP |
               (s->params.dm_size ? QROCE_FEAT_DM : 0);
    case QROCE_REG_CAP_MAX_QP:
        return s->params.max_qp;
    case QROCE_REG_CAP_MAX_CQ:
        return s->params.max_cq;
    case QROCE_REG_CAP_MAX_MR:
        return s->params.max_mr;
    case QROCE_REG_CAP_MAX_PD:
        return s->params.max_pd;
    case QROCE_REG_CAP_MAX_SRQ:
        return s->params.max_srq;
    case QROCE_REG_CAP_MAX_AH:
        return s->params.max_ah;
    case QROCE_REG_CAP_MAX_QP_WR:
        return 1u << QROCE_WQ_MAX_LOG2;
    case QROCE_REG_CAP_MAX_CQE:
        return (1u << QROCE_CQ_MAX_LOG2) - 1;
    case QROCE_REG_CAP_MAX_SGE:
        return QROCE_MAX_SGE;
    case QROCE_REG_CAP_MAX_INLINE:
        return QROCE_MAX_INLINE;
    case QROCE_REG_CAP_MAX_RD_ATOM:
        return QROCE_DEF_MAX_RD_ATOM;
    case QROCE_REG_CAP_MAX_MR_SIZE_LO:
        return 0;
    case QROCE_REG_CAP_MAX_MR_SIZE_HI:
        return 1u << 8;             /* 2^40 bytes */
    case QROCE_REG_CAP_PAGE_SIZES:
        return ((1u << (QROCE_BT_MAX_PAGE_SHIFT + 1)) - 1) &
               ~((1u << QROCE_BT_MIN_PAGE_SHIFT) - 1);
    case QROCE_REG_CAP_MAX_GID:
        return QROCE_DEF_MAX_GID;
    case QROCE_REG_CAP_MAX_MSG:
        return QROCE_DEF_MAX_MSG;
    case QROCE_REG_CAP_MAX_MTU:
        return 4096;
    case QROCE_REG_CAP_MAX_FRMR_PAGES:
        return QROCE_DEF_MAX_FRMR_PAGES;
    case QROCE_REG_CAP_LINK_MBPS:
        return s->params.dcqcn_line_mbps;
    case QROCE_REG_CAP_MAX_MCAST_GRP:
        return s->params.mcast_max_groups;
    case QROCE_REG_CAP_MAX_MCAST_QP_ATTACH:
        return s->params.mcast_max_qp_attach;
    case QROCE_REG_CAP_DM_SIZE:
        return s->params.dm_size;
    case QROCE_REG_MAC_LO:
        return ldl_le_p(s->conf.macaddr.a);
    case QROCE_REG_MAC_HI:
        return lduw_le_p(s->conf.macaddr.a + 4);
    }
    return 0;
}

/* A register kept in QRoceState.regs: its value as it is. */
static uint32_t qroce_rd_reg(QRoceState *s, hwaddr addr)
{
    return qroce_reg(s, addr);
}

static uint32_t qroce_rd_port(QRoceState *s, hwaddr addr)
{
    return qroce_link_up(s) ? QROCE_PORT_LINK_UP | (100 << 8) : 0;
}

static uint32_t qroce_rd_cnt(QRoceState *s, hwaddr addr)
{
    return s->cnt[(addr - QROCE_REG_CNT_BASE) / 4];
}

static void qroce_wr_ctrl(QRoceState *s, hwaddr addr, uint32_t val)
{
    if (val & QROCE_CTRL_RESET) {
        trace_qroce_reset();
        qroce_reset_state(s);
        return;
    }
    if ((val & QROCE_CTRL_ENABLE) &&
        !(qroce_reg(s, QROCE_REG_CTRL) & QROCE_CTRL_ENABLE)) {
        qroce_reg_set(s, QROCE_REG_CTRL, QROCE_CTRL_ENABLE);
        qroce_enable(s);
    } else if (!(val & QROCE_CTRL_ENABLE)) {
        qroce_reg_set(s, QROCE_REG_CTRL, 0);
        qroce_reg_mask(s, QROCE_REG_STATUS, QROCE_STATUS_READY, 0);
    }
}

static void qroce_wr_mtu(QRoceState *s, hwaddr addr, uint32_t val)
{
    if (val < QROCE_ETH_MIN_MTU || val > QROCE_ETH_MAX_MTU) {
        REG_BAD("ETH_MTU", val, "out of range");
        return;
    }
    qroce_reg_set(s, QROCE_REG_ETH_MTU, val);
}

static void qroce_wr_cmdq(QRoceState *s, hwaddr addr, uint32_t val)
{
    if (addr == QROCE_REG_CMDQ_PI) {
        trace_qroce_cmdq_doorbell(val);
        if (!qroce_ready(s)) {
            REG_BAD("CMDQ_PI", val, "device not enabled");
            return;
        }
        qroce_reg_set(s, QROCE_REG_CMDQ_PI, val);
        if (val - qroce_reg(s, QROCE_REG_CMDQ_CI) >
            (1u << qroce_reg(s, QROCE_REG_CMDQ_LOG2))) {
            REG_BAD("CMDQ_PI", val, "overruns the ring");
            qroce_fatal(s, QROCE_FATAL_CMDQ_CONFIG);
            return;
        }
        qemu_bh_schedule(s->cmd_bh);
        return;
    }
    if (qroce_ready(s)) {
        REG_BAD("CMDQ", val, "reconfigured while enabled");
        return;
    }
    if (addr == QROCE_REG_CMDQ_LOG2 &&
        (val < 1 || val > QROCE_CMDQ_MAX_LOG2)) {
        REG_BAD("CMDQ_LOG2", val, "out of range");
        val = 0;                /* enabling now fails with CMDQ_CONFIG */
    }
    qroce_reg_set(s, addr, val);    /* CMDQ_BASE, CMDQ_CQ, CMDQ_LOG2 */
}

static void qroce_wr_eth_ctrl(QRoceState *s, uint32_t val)
{
    val &= QROCE_ETH_CTRL_TX_EN | QROCE_ETH_CTRL_RX_EN |
           QROCE_ETH_CTRL_PROMISC | QROCE_ETH_CTRL_ALLMULTI |
           QROCE_ETH_CTRL_MC_FILTER;
    qroce_reg_set(s, QROCE_REG_ETH_CTRL, val);
    if (!(val & QROCE_ETH_CTRL_TX_EN)) {
        qroce_reg_set(s, QROCE_REG_TXQ_CI, 0);
        qroce_reg_set(s, QROCE_REG_TXQ_PI, 0);
    }
    if (!(val & QROCE_ETH_CTRL_RX_EN)) {
        qroce_reg_set(s, QROCE_REG_RXQ_CI, 0);
        qroce_reg_set(s, QROCE_REG_RXQ_PI, 0);
    }
    qemu_bh_schedule(s->tx_bh);
}

/* TXQ_PI, RXQ_PI: a producer index no more than a ring ahead */
static bool qroce_wr_eth_pi(QRoceState *s, const char *reg, hwaddr pi,
                            hwaddr ci, hwaddr log2, uint32_t val)
{
    if (val - qroce_reg(s, ci) > (1u << qroce_reg(s, log2))) {
        REG_BAD(reg, val, "overruns the ring");
        return false;
    }
    qroce_reg_set(s, pi, val);
    return true;
}

static void qroce_wr_eth(QRoceState *s, hwaddr addr, uint32_t val)
{
    uint32_t ctrl = qroce_reg(s, QROCE_REG_ETH_CTRL);

    switch (addr) {
    case QROCE_REG_ETH_CTRL:
        qroce_wr_eth_ctrl(s, val);
        return;
    case QROCE_REG_ETH_IRQ:
        qroce_reg_mask(s, QROCE_REG_ETH_IRQ, val, 0);   /* write 1 to clear */
        return;
    case QROCE_REG_MC_HASH_LO:
    case QROCE_REG_MC_HASH_HI:
        qroce_reg_set(s, addr, val);
        return;
    case QROCE_REG_TXQ_PI:
        if (qroce_wr_eth_pi(s, "TXQ_PI", QROCE_REG_TXQ_PI, QROCE_REG_TXQ_CI,
                            QROCE_REG_TXQ_LOG2, val)) {
            qemu_bh_schedule(s->tx_bh);
        }
        return;
    case QROCE_REG_RXQ_PI:
        if (qroce_wr_eth_pi(s, "RXQ_PI", QROCE_REG_RXQ_PI, QROCE_REG_RXQ_CI,
                            QROCE_REG_RXQ_LOG2, val)) {
            qemu_flush_queued_packets(qemu_get_queue(s->nic));
        }
        return;
    }
    /* Ring geometry may change only while the ring is disabled. */
    if (addr >= QROCE_REG_TXQ_BASE_LO && addr <= QROCE_REG_TXQ_LOG2 &&
        (ctrl & QROCE_ETH_CTRL_TX_EN)) {
        REG_BAD("TXQ", val, "ring changed while TX_EN");
        return;
    }
    if (addr >= QROCE_REG_RXQ_BASE_LO && addr <= QROCE_REG_RXQ_LOG2 &&
        (ctrl & QROCE_ETH_CTRL_RX_EN)) {
        REG_BAD("RXQ", val, "ring changed while RX_EN");
        return;
    }
    if ((addr == QROCE_REG_TXQ_LOG2 || addr == QROCE_REG_RXQ_LOG2) &&
        (val < QROCE_ETH_RING_MIN_LOG2 || val > QROCE_ETH_RING_MAX_LOG2)) {
        REG_BAD(addr == QROCE_REG_TXQ_LOG2 ? "TXQ_LOG2" : "RXQ_LOG2",
                val, "out of range");
        val = 0;
    }
    qroce_reg_set(s, addr, val);    /* TXQ_BASE, TXQ_LOG2, RXQ_... */
}

static void qroce_wr_eq_ci(QRoceState *s, hwaddr addr, uint32_t val)
{
    unsigned eqn = (addr - QROCE_REG_EQ_CI_BASE) / 4;
    QRoceEQ *eq = &s->eq[eqn];

    if (!eq->valid || eq->pi - val > (1u << eq->log2)) {
        REG_BAD("EQ_CI", val,
                !eq->valid ? "no such EQ" : "beyond the EQ's producer");
        return;
    }
    eq->ci = val;
}

#define QROCE_REG_SLOTS (QROCE_REGS_SIZE / 4)
#define R(reg) [QROCE_REG_##reg / 4]

/* The handler of each register, by register number (offset / 4). */
static const QRoceRegRead qroce_readops[QROCE_REG_SLOTS] = {
    R(MAGIC) = qroce_rd_const,
    R(VERSION) = qroce_rd_const,
    R(FEATURES) = qroce_rd_const,
    R(MAC_LO) = qroce_rd_const,
    R(MAC_HI) = qroce_rd_const,
    [QROCE_REG_CAP_MAX_QP / 4 ... QROCE_REG_CAP_DM_SIZE / 4] =
        qroce_rd_const,
    R(STATUS) = qroce_rd_reg,
    R(CTRL) = qroce_rd_reg,
    R(PORT_STATUS) = qroce_rd_port,
    R(ETH_MTU) = qroce_rd_reg,
    R(FATAL_CODE) = qroce_rd_reg,
    R(CMDQ_BASE_LO) = qroce_rd_reg,
    R(CMDQ_BASE_HI) = qroce_rd_reg,
    R(CMDQ_LOG2) = qroce_rd_reg,
    R(CMDQ_CI) = qroce_rd_reg,
    R(CMDQ_CQ_LO) = qroce_rd_reg,
    R(CMDQ_CQ_HI) = qroce_rd_reg,
    R(ETH_CTRL) = qroce_rd_reg,
    R(TXQ_BASE_LO) = qroce_rd_reg,
    R(TXQ_BASE_HI) = qroce_rd_reg,
    R(TXQ_LOG2) = qroce_rd_reg,
    R(TXQ_CI) = qroce_rd_reg,
    R(RXQ_BASE_LO) = qroce_rd_reg,
    R(RXQ_BASE_HI) = qroce_rd_reg,
    R(RXQ_LOG2) = qroce_rd_reg,
    R(RXQ_CI) = qroce_rd_reg,
    R(ETH_IRQ) = qroce_rd_reg,
    R(MC_HASH_LO) = qroce_rd_reg,
    R(MC_HASH_HI) = qroce_rd_reg,
    [QROCE_REG_CNT(0) / 4 ... QROCE_REG_CNT(QROCE_CNT_NUM - 1) / 4] =
        qroce_rd_cnt,
};

static const QRoceRegWrite qroce_writeops[QROCE_REG_SLOTS] = {
    R(CTRL) = qroce_wr_ctrl,
    R(ETH_MTU) = qroce_wr_mtu,
    R(CMDQ_BASE_LO) = qroce_wr_cmdq,
    R(CMDQ_BASE_HI) = qroce_wr_cmdq,
    R(CMDQ_LOG2) = qroce_wr_cmdq,
    R(CMDQ_PI) = qroce_wr_cmdq,
    R(CMDQ_CQ_LO) = qroce_wr_cmdq,
    R(CMDQ_CQ_HI) = qroce_wr_cmdq,
    R(ETH_CTRL) = qroce_wr_eth,
    R(TXQ_BASE_LO) = qroce_wr_eth,
    R(TXQ_BASE_HI) = qroce_wr_eth,
    R(TXQ_LOG2) = qroce_wr_eth,
    R(TXQ_PI) = qroce_wr_eth,
    R(RXQ_BASE_LO) = qroce_wr_eth,
    R(RXQ_BASE_HI) = qroce_wr_eth,
    R(RXQ_LOG2) = qroce_wr_eth,
    R(RXQ_PI) = qroce_wr_eth,
    R(ETH_IRQ) = qroce_wr_eth,
    R(MC_HASH_LO) = qroce_wr_eth,
    R(MC_HASH_HI) = qroce_wr_eth,
    [QROCE_REG_EQ_CI(0) / 4 ... QROCE_REG_EQ_CI(QROCE_NUM_EQS - 1) / 4] =
        qroce_wr_eq_ci,
};
#undef R

static uint64_t qroce_reg_read(void *opaque, hwaddr addr, unsigned size)
{
    QRoceState *s = opaque;
    QRoceRegRead fn = qroce_readops[addr / 4];
    uint32_t val;
    QROCE_LOCKED(s);

    if (!fn) {
        QROCE_GUEST_ERR(qroce_ub_reg_read, "read of unknown register 0x%"
                        PRIx64, (uint64_t)addr);
        return 0;
    }
    val = fn(s, addr);
    trace_qroce_reg_read(addr, val);
    return val;
}

static void qroce_reg_write(void *opaque, hwaddr addr, uint64_t val,
                            unsigned size)
{
    QRoceState *s = opaque;
    QRoceRegWrite fn = qroce_writeops[addr / 4];
    QROCE_LOCKED(s);

    if (!fn) {
        QROCE_GUEST_ERR(qroce_ub_reg_write, "register 0x%" PRIx64 " <- 0x%"
                        PRIx64 ": %s", (uint64_t)addr, val,
                        qroce_readops[addr / 4] ? "read-only register" :
                        "no register there");
        return;
    }
    trace_qroce_reg_write(addr, val);
    fn(s, addr, val);
}

const MemoryRegionOps qroce_reg_ops = {
    .read = qroce_reg_read,
    .write = qroce_reg_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = {
        .min_access_size = 4,
        .max_access_size = 4,
    },
    .impl = {
        .min_access_size = 4,
        .max_access_size = 4,
    },
};

/* ------------------------------------------------------------------ */
/* Doorbells (BAR2)                                                    */
/* ------------------------------------------------------------------ */

/* A doorbell refused: page, object kind and number, value, why. */
#define DB_BAD(page, what, obj, val, why) \
    QROCE_GUEST_ERR(qroce_ub_doorbell, "page %u %s %u value %u: %s", \
                    (unsigned)(page), what, obj, val, why)

static void qroce_db_bad(QRoceState *s, unsigned page, hwaddr off,
                         uint64_t val, const char *why)
{
    static const char *const kind[] = {
        [QROCE_DB_SQ / 8] = "SQ of QP", [QROCE_DB_RQ / 8] = "RQ of QP",
        [QROCE_DB_SRQ / 8] = "SRQ", [QROCE_DB_CQ_ARM / 8] = "CQ_ARM of CQ",
        [QROCE_DB_CQ_CI / 8] = "CQ_CI of CQ",
    };
    const char *what = off % 8 == 0 && off / 8 < ARRAY_SIZE(kind) ?
                       kind[off / 8] : "unknown doorbell, object";

    qroce_count(s, QROCE_CNT_BAD_DOORBELLS);
    DB_BAD(page, what, (uint32_t)val, (uint32_t)(val >> 32), why);
}

static void qroce_db_wq(QRoceState *s, unsigned page, QRoceQP *qp,
                        QRoceWQ *wq, bool sq, uint32_t pi)
{
    const char *why = NULL;

    if (qroce_data_qp_doomed(qp)) {
        DB_BAD(page, sq ? "SQ of QP" : "RQ of QP", qp->qpn, pi,
               "ignored: the QP is going to ERR");
        return;
    }
    if (pi - wq->ci > (1u << wq->log2)) {
        why = "producer index overruns the ring";
    } else if (sq && pi - wq->ci < qroce_sq_sent_bound(qp) - wq->ci) {
        why = "producer index behind WQEs already sent";
    }
    if (why) {
        qroce_count(s, QROCE_CNT_BAD_DOORBELLS);
        DB_BAD(page, sq ? "SQ of QP" : "RQ of QP", qp->qpn, pi, why);
        qroce_data_bad_doorbell(s, qp);
        return;
    }
    wq->pi = pi;
    if (sq) {
        qroce_data_sq_doorbell(s, qp);
    } else {
        qroce_data_rq_doorbell(s, qp);
    }
}

static void qroce_db_apply(QRoceState *s, hwaddr addr, uint64_t val,
                           unsigned size)
{
    unsigned page = addr >> QROCE_DB_PAGE_SHIFT;
    hwaddr off = addr & (QROCE_DB_PAGE_SIZE - 1);
    uint32_t obj = val, v = val >> 32;
    QRoceQP *qp;
    QRoceCQ *cq;
    QRoceSRQ *srq;

    trace_qroce_doorbell(page, off, obj, v);
    if (size != 8) {
        qroce_db_bad(s, page, off, val, "not a 64-bit write");
        return;
    }
    switch (off) {
    case QROCE_DB_SQ:
    case QROCE_DB_RQ:
        qp = qroce_qp_get(s, obj);
        if (!qp || qp->uar != page) {
            qroce_db_bad(s, page, off, val, "no such QP on this page");
            return;
        }
        if (off == QROCE_DB_RQ && (qp->flags & QROCE_CREATE_QP_SRQ)) {
            qroce_db_bad(s, page, off, val, "the QP receives from an SRQ");
            return;
        }
        qroce_db_wq(s, page, qp, off == QROCE_DB_SQ ? &qp->sq : &qp->rq,
                    off == QROCE_DB_SQ, v);
        return;
    case QROCE_DB_SRQ:
        srq = qroce_srq_get(s, obj);
        if (!srq || srq->uar != page) {
            qroce_db_bad(s, page, off, val, "no such SRQ on this page");
        } else if (v - srq->wq.ci > (1u << srq->wq.log2)) {
            qroce_db_bad(s, page, off, val, "SRQ producer index overruns "
                         "the ring");
        } else {
            srq->wq.pi = v;
        }
        return;
    case QROCE_DB_CQ_ARM:
    case QROCE_DB_CQ_CI:
        cq = qroce_cq_get(s, obj);
        if (!cq || cq->uar != page) {
            qroce_db_bad(s, page, off, val, "no such CQ on this page");
            return;
        }
        if (off == QROCE_DB_CQ_ARM) {
            /* an arm adds to one in force: NEXT outlasts SOLICITED */
            cq->arm |= v & (QROCE_CQ_ARM_NEXT | QROCE_CQ_ARM_SOLICITED);
            /* the consumer index travels as its 24 low bits */
            cq->ci_seen = cq->pi - ((cq->pi - v) & QROCE_CQ_ARM_CI_MASK);
        } else if (cq->pi - v > (1u << cq->log2)) {
            qroce_db_bad(s, page, off, val, "CQ consumer index beyond the "
                         "producer");
        } else {
            cq->ci_seen = v;
        }
        return;
    default:
        qroce_db_bad(s, page, off, val, "unknown doorbell");
    }
}

/* Apply, in order, the doorbells that found the lock busy; lock held. */
static void qroce_db_drain(QRoceState *s)
{
    QRoceDoorbell box[QROCE_DB_BOX];
    uint32_t i, n;

    qemu_spin_lock(&s->db_spin);
    n = s->db_n;
    memcpy(box, s->db_box, n * sizeof(box[0]));
    qatomic_set(&s->db_n, 0);
    qemu_spin_unlock(&s->db_spin);
    for (i = 0; i < n; i++) {
        qroce_db_apply(s, box[i].addr, box[i].val, box[i].size);
    }
}

/*
 * A doorbell never waits for the engine, which may hold the device's
 * lock in its IOThread: if the lock is busy the doorbell goes into db_box
 * and the engine's bottom half, scheduled here, applies it once the lock
 * is free (or whoever takes it first does).  Doorbells of one vCPU are
 * applied in the order it wrote them.  Only a full box (64 doorbells
 * behind) waits for the lock.
 */
static void qroce_db_write(void *opaque, hwaddr addr, uint64_t val,
                           unsigned size)
{
    QRoceState *s = opaque;

    if (qemu_rec_mutex_trylock(&s->lock)) {
        bool queued = false;

        qemu_spin_lock(&s->db_spin);
        if (s->db_n < QROCE_DB_BOX) {
            s->db_box[s->db_n] = (QRoceDoorbell) {
                .addr = addr, .size = size, .val = val,
            };
            qatomic_set(&s->db_n, s->db_n + 1);
            queued = true;
        }
        qemu_spin_unlock(&s->db_spin);
        if (queued) {
            trace_qroce_doorbell_deferred(addr, val);
            qroce_data_kick(s);
            return;
        }
        qemu_rec_mutex_lock(&s->lock);
    }
    qroce_lock_enter(s);
    qroce_db_apply(s, addr, val, size);
    qroce_unlock(s);
}

void qroce_regs_init(QRoceState *s)
{
    s->db_drain = qroce_db_drain;
}

static uint64_t qroce_db_read(void *opaque, hwaddr addr, unsigned size)
{
    return 0;
}

const MemoryRegionOps qroce_db_ops = {
    .read = qroce_db_read,
    .write = qroce_db_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = {
        .min_access_size = 1,
        .max_access_size = 8,
    },
    .impl = {
        .min_access_size = 1,
        .max_access_size = 8,
    },
};
