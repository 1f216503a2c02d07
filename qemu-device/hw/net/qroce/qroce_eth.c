/*
 * qroce: the Ethernet function -- a TX and an RX descriptor ring for the
 * frames that are not RoCE for the device (docs/hw-spec.md).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/main-loop.h"
#include "qemu/bswap.h"
#include "net/eth.h"
#include "qroce_eth.h"
#include "qroce_ring.h"
#include "qroce_port.h"
#include "trace.h"

#define QROCE_TX_BUDGET     128     /* Ethernet frames per run */

void qroce_eth_irq(QRoceState *s, uint32_t cause)
{
    qroce_reg_mask(s, QROCE_REG_ETH_IRQ, 0, cause);
    qroce_irq(s, QROCE_MSIX_VEC_ETH);
}

void qroce_eth_tx_bh(void *opaque)
{
    QRoceState *s = opaque;
    QROCE_LOCKED(s);
    uint32_t log2 = qroce_reg(s, QROCE_REG_TXQ_LOG2);
    uint32_t slots = 1u << log2;
    int budget = QROCE_TX_BUDGET;
    bool done = false;
    uint8_t *buf = NULL;
    uint32_t ci;

    if (s->quiesced) {
        return;
    }
    while ((qroce_reg(s, QROCE_REG_ETH_CTRL) & QROCE_ETH_CTRL_TX_EN) &&
           log2 && (ci = qroce_reg(s, QROCE_REG_TXQ_CI)) !=
           qroce_reg(s, QROCE_REG_TXQ_PI)) {
        uint64_t daddr = qroce_reg64(s, QROCE_REG_TXQ_BASE_LO) +
                         (uint64_t)(ci & (slots - 1)) * 16;
        struct qroce_eth_desc d;
        uint16_t len, flags = QROCE_ETH_DESC_DONE;

        if (budget-- == 0) {
            qemu_bh_schedule(s->tx_bh);
            break;
        }
        if (qroce_port_busy(s)) {
            break;      /* the port schedules us again when it drains */
        }
        if (!qroce_dma_read(s, daddr, &d, sizeof(d))) {
            QROCE_GUEST_ERR(qroce_ub_eth_ring, "%s", "TX ring unreadable");
            qroce_reg_mask(s, QROCE_REG_ETH_CTRL, QROCE_ETH_CTRL_TX_EN, 0);
            break;
        }
        len = le16_to_cpu(d.len);
        if (!buf) {
            buf = g_malloc(QROCE_ETH_MAX_FRAME);
        }
        if (len < ETH_HLEN || len > QROCE_ETH_MAX_FRAME ||
            !qroce_dma_read(s, le64_to_cpu(d.addr), buf, len)) {
            QROCE_GUEST_ERR(qroce_ub_eth_desc, "TX descriptor %u: length %u "
                            "or buffer refused", ci, (unsigned)len);
            flags |= QROCE_ETH_DESC_ERR;
        } else {
            trace_qroce_eth_tx(ci, len);
            qroce_count(s, QROCE_CNT_ETH_TX_FRAMES);
            qroce_port_send(s, buf, len);
        }
        d.flags = cpu_to_le16(flags);
        if (!qroce_dma_write(s, daddr + 10, &d.flags, 2)) {
            QROCE_GUEST_ERR(qroce_ub_eth_ring, "%s", "TX ring not writable");
            qroce_reg_mask(s, QROCE_REG_ETH_CTRL, QROCE_ETH_CTRL_TX_EN, 0);
            break;
        }
        qroce_reg_set(s, QROCE_REG_TXQ_CI, ci + 1);
        done = true;
    }
    g_free(buf);
    if (done) {
        qroce_eth_irq(s, QROCE_ETH_IRQ_TX);
    }
}

static bool qroce_rx_ready(QRoceState *s)
{
    uint32_t log2 = qroce_reg(s, QROCE_REG_RXQ_LOG2);
    uint32_t posted = qroce_reg(s, QROCE_REG_RXQ_PI) -
                      qroce_reg(s, QROCE_REG_RXQ_CI);

    return qroce_ready(s) &&
           (qroce_reg(s, QROCE_REG_ETH_CTRL) & QROCE_ETH_CTRL_RX_EN) &&
           log2 && posted && posted <= (1u << log2);
}

/*
 * Our MAC and broadcast; multicast unless MC_FILTER is on without
 * ALLMULTI, then only a MAC whose CRC bin is set in MC_HASH; everything
 * in PROMISC.  The RoCE engine took its groups' frames before this.
 */
static bool qroce_eth_accept(QRoceState *s, const uint8_t *buf)
{
    uint32_t ctrl = qroce_reg(s, QROCE_REG_ETH_CTRL);
    uint32_t bin;

    if (ctrl & QROCE_ETH_CTRL_PROMISC) {
        return true;
    }
    if (!(buf[0] & 1)) {
        return !memcmp(buf, s->conf.macaddr.a, ETH_ALEN);
    }
    if (is_broadcast_ether_addr(buf) ||
        (ctrl & QROCE_ETH_CTRL_ALLMULTI) ||
        !(ctrl & QROCE_ETH_CTRL_MC_FILTER)) {
        return true;
    }
    bin = net_crc32_le(buf, ETH_ALEN) >> QROCE_MC_HASH_SHIFT;
    if (!(qroce_reg64(s, QROCE_REG_MC_HASH_LO) & (1ULL << bin))) {
        qroce_count(s, QROCE_CNT_ETH_RX_FILTERED);
        trace_qroce_eth_mc_filtered(bin);
        return false;
    }
    return true;
}

static void qroce_eth_rx(QRoceState *s, const uint8_t *buf, size_t size)
{
    uint32_t ci = qroce_reg(s, QROCE_REG_RXQ_CI);
    uint32_t slots = 1u << qroce_reg(s, QROCE_REG_RXQ_LOG2);
    uint64_t daddr;
    struct qroce_eth_desc d;
    uint16_t flags = QROCE_ETH_DESC_DONE;
    size_t n;

    if (!qroce_rx_ready(s)) {
        qroce_count(s, QROCE_CNT_ETH_RX_DROPS);
        trace_qroce_wrn_eth_rx_drop(size);
        return;
    }
    daddr = qroce_reg64(s, QROCE_REG_RXQ_BASE_LO) +
            (uint64_t)(ci & (slots - 1)) * 16;
    if (!qroce_dma_read(s, daddr, &d, sizeof(d))) {
        QROCE_GUEST_ERR(qroce_ub_eth_ring, "%s", "RX ring unreadable");
        qroce_reg_mask(s, QROCE_REG_ETH_CTRL, QROCE_ETH_CTRL_RX_EN, 0);
        return;
    }
    n = MIN(size, le16_to_cpu(d.len));
    if (n < size) {
        flags |= QROCE_ETH_DESC_ERR;
    }
    if (!qroce_dma_write(s, le64_to_cpu(d.addr), buf, n)) {
        QROCE_GUEST_ERR(qroce_ub_eth_ring, "%s", "RX buffer not writable");
        flags |= QROCE_ETH_DESC_ERR;
        n = 0;
    }
    d.len = cpu_to_le16(n);
    d.flags = cpu_to_le16(flags);
    if (!qroce_dma_write(s, daddr + 8, &d.len, 4)) {
        QROCE_GUEST_ERR(qroce_ub_eth_ring, "%s", "RX ring not writable");
        qroce_reg_mask(s, QROCE_REG_ETH_CTRL, QROCE_ETH_CTRL_RX_EN, 0);
        return;
    }
    trace_qroce_eth_rx(ci, size);
    qroce_count(s, QROCE_CNT_ETH_RX_FRAMES);
    qroce_reg_set(s, QROCE_REG_RXQ_CI, ci + 1);
    qroce_eth_irq(s, QROCE_ETH_IRQ_RX);
}

void qroce_eth_receive(QRoceState *s, const uint8_t *buf, size_t size)
{
    if (qroce_eth_accept(s, buf)) {
        qroce_eth_rx(s, buf, size);
    }
}
