// SPDX-License-Identifier: GPL-2.0-only
/*
 * qroce_en: the Ethernet function, a plain netdev over one TX and one RX
 * ring of single-buffer descriptors (hw-spec section 11), NAPI on vector
 * 1; and the device's counters, which ethtool -S shows here and the RDMA
 * driver's hw_counters through qroce_core_ops.
 */
#include <linux/crc32.h>
#include <linux/etherdevice.h>
#include <linux/ethtool.h>
#include <linux/dma-mapping.h>
#include "qroce_en.h"

struct qroce_netpriv {
	struct qroce_en *en;
};

static struct qroce_en *qroce_nd(struct net_device *nd)
{
	return ((struct qroce_netpriv *)netdev_priv(nd))->en;
}

static int qroce_rx_post(struct qroce_en *en, u32 idx)
{
	struct qroce_eth_ring *r = &en->rx;
	u32 slot = idx & ((1u << r->log2) - 1);
	struct sk_buff *skb;
	dma_addr_t dma;

	skb = netdev_alloc_skb_ip_align(en->core.netdev, QROCE_ETH_MAX_FRAME);
	if (!skb)
		return -ENOMEM;
	dma = dma_map_single(qroce_dmadev(en), skb->data, QROCE_ETH_MAX_FRAME,
			     DMA_FROM_DEVICE);
	if (dma_mapping_error(qroce_dmadev(en), dma)) {
		dev_kfree_skb_any(skb);
		return -ENOMEM;
	}
	r->skb[slot] = skb;
	r->buf_dma[slot] = dma;
	r->desc[slot].addr = cpu_to_le64(dma);
	r->desc[slot].len = cpu_to_le16(QROCE_ETH_MAX_FRAME);
	r->desc[slot].flags = 0;
	return 0;
}

static void qroce_rx_refill(struct qroce_en *en)
{
	struct qroce_eth_ring *r = &en->rx;
	u32 size = 1u << r->log2;
	bool posted = false;

	while (r->pi - r->ci < size) {
		if (qroce_rx_post(en, r->pi))
			break;
		r->pi++;
		posted = true;
	}
	if (posted) {
		dma_wmb();
		qroce_wr(&en->core, QROCE_REG_RXQ_PI, r->pi);
	}
}

static int qroce_rx_poll(struct qroce_en *en, int budget)
{
	struct net_device *nd = en->core.netdev;
	struct qroce_eth_ring *r = &en->rx;
	u32 mask = (1u << r->log2) - 1;
	int done = 0;

	while (done < budget && r->ci != r->pi) {
		u32 slot = r->ci & mask;
		struct qroce_eth_desc *d = &r->desc[slot];
		struct sk_buff *skb = r->skb[slot];
		u16 flags = le16_to_cpu(READ_ONCE(d->flags));
		u16 len;

		if (!(flags & QROCE_ETH_DESC_DONE))
			break;
		dma_rmb();
		len = le16_to_cpu(d->len);
		dma_unmap_single(qroce_dmadev(en), r->buf_dma[slot],
				 QROCE_ETH_MAX_FRAME, DMA_FROM_DEVICE);
		r->skb[slot] = NULL;
		r->ci++;
		done++;
		if ((flags & QROCE_ETH_DESC_ERR) || len < ETH_HLEN ||
		    len > QROCE_ETH_MAX_FRAME) {
			nd->stats.rx_errors++;
			dev_kfree_skb_any(skb);
			continue;
		}
		skb_put(skb, len);
		skb->protocol = eth_type_trans(skb, nd);
		nd->stats.rx_packets++;
		nd->stats.rx_bytes += len;
		napi_gro_receive(&en->napi, skb);
	}
	qroce_rx_refill(en);
	return done;
}

static void qroce_tx_clean(struct qroce_en *en)
{
	struct net_device *nd = en->core.netdev;
	struct qroce_eth_ring *r = &en->tx;
	u32 mask = (1u << r->log2) - 1;
	unsigned int pkts = 0, bytes = 0;

	spin_lock(&en->tx_lock);
	while (r->ci != r->pi) {
		u32 slot = r->ci & mask;
		struct qroce_eth_desc *d = &r->desc[slot];
		struct sk_buff *skb = r->skb[slot];

		if (!(le16_to_cpu(READ_ONCE(d->flags)) & QROCE_ETH_DESC_DONE))
			break;
		dma_rmb();
		dma_unmap_single(qroce_dmadev(en), r->buf_dma[slot], skb->len,
				 DMA_TO_DEVICE);
		if (le16_to_cpu(d->flags) & QROCE_ETH_DESC_ERR) {
			nd->stats.tx_errors++;
		} else {
			pkts++;
			bytes += skb->len;
		}
		dev_consume_skb_any(skb);
		r->skb[slot] = NULL;
		r->ci++;
	}
	nd->stats.tx_packets += pkts;
	nd->stats.tx_bytes += bytes;
	if (netif_queue_stopped(nd) && r->pi - r->ci < (1u << r->log2))
		netif_wake_queue(nd);
	spin_unlock(&en->tx_lock);
}

static int qroce_napi_poll(struct napi_struct *napi, int budget)
{
	struct qroce_en *en = container_of(napi, struct qroce_en, napi);
	int done;

	qroce_wr(&en->core, QROCE_REG_ETH_IRQ,
		 QROCE_ETH_IRQ_TX | QROCE_ETH_IRQ_RX);
	qroce_tx_clean(en);
	done = qroce_rx_poll(en, budget);
	if (done < budget)
		napi_complete_done(napi, done);
	return done;
}

static void qroce_update_carrier(struct qroce_en *en)
{
	if (qroce_rd(&en->core, QROCE_REG_PORT_STATUS) & QROCE_PORT_LINK_UP)
		netif_carrier_on(en->core.netdev);
	else
		netif_carrier_off(en->core.netdev);
}

/*
 * Vector 1.  It is requested once the netdev exists and freed before the
 * netdev is, so en->core.netdev is always valid here.
 */
static irqreturn_t qroce_irq_eth(int irq, void *data)
{
	struct qroce_en *en = data;

	if (qroce_rd(&en->core, QROCE_REG_ETH_IRQ) & QROCE_ETH_IRQ_LINK) {
		qroce_wr(&en->core, QROCE_REG_ETH_IRQ, QROCE_ETH_IRQ_LINK);
		qroce_update_carrier(en);
	}
	napi_schedule(&en->napi);
	return IRQ_HANDLED;
}

static netdev_tx_t qroce_xmit(struct sk_buff *skb, struct net_device *nd)
{
	struct qroce_en *en = qroce_nd(nd);
	struct qroce_eth_ring *r = &en->tx;
	u32 slot;
	dma_addr_t dma;

	if (skb_linearize(skb) || skb->len > QROCE_ETH_MAX_FRAME) {
		nd->stats.tx_dropped++;
		dev_kfree_skb_any(skb);
		return NETDEV_TX_OK;
	}
	dma = dma_map_single(qroce_dmadev(en), skb->data, skb->len,
			     DMA_TO_DEVICE);
	if (dma_mapping_error(qroce_dmadev(en), dma)) {
		nd->stats.tx_dropped++;
		dev_kfree_skb_any(skb);
		return NETDEV_TX_OK;
	}
	spin_lock_bh(&en->tx_lock);
	slot = r->pi & ((1u << r->log2) - 1);
	r->skb[slot] = skb;
	r->buf_dma[slot] = dma;
	r->desc[slot].addr = cpu_to_le64(dma);
	r->desc[slot].len = cpu_to_le16(skb->len);
	r->desc[slot].flags = 0;
	r->pi++;
	dma_wmb();
	qroce_wr(&en->core, QROCE_REG_TXQ_PI, r->pi);
	if (r->pi - r->ci >= (1u << r->log2))
		netif_stop_queue(nd);
	spin_unlock_bh(&en->tx_lock);
	return NETDEV_TX_OK;
}

static int qroce_ring_alloc(struct qroce_en *en, struct qroce_eth_ring *r)
{
	size_t n = 1u << QROCE_ETH_RING_LOG2;

	r->log2 = QROCE_ETH_RING_LOG2;
	r->pi = 0;
	r->ci = 0;
	r->desc = dma_alloc_coherent(qroce_dmadev(en), n * sizeof(*r->desc),
				     &r->dma, GFP_KERNEL);
	r->skb = kcalloc(n, sizeof(*r->skb), GFP_KERNEL);
	r->buf_dma = kcalloc(n, sizeof(*r->buf_dma), GFP_KERNEL);
	if (!r->desc || !r->skb || !r->buf_dma)
		return -ENOMEM;
	return 0;
}

static void qroce_ring_free(struct qroce_en *en, struct qroce_eth_ring *r,
			    enum dma_data_direction dir)
{
	u32 i, n = 1u << r->log2;

	if (r->skb) {
		for (i = 0; i < n; i++) {
			if (!r->skb[i])
				continue;
			dma_unmap_single(qroce_dmadev(en), r->buf_dma[i],
					 dir == DMA_TO_DEVICE ? r->skb[i]->len :
					 QROCE_ETH_MAX_FRAME, dir);
			dev_kfree_skb_any(r->skb[i]);
		}
	}
	kfree(r->skb);
	kfree(r->buf_dma);
	if (r->desc)
		dma_free_coherent(qroce_dmadev(en), n * sizeof(*r->desc),
				  r->desc, r->dma);
	memset(r, 0, sizeof(*r));
}

/*
 * The receive filter, with the rings on: PROMISC and ALLMULTI from the
 * netdev's flags, and MC_HASH with the CRC bin of each address on its
 * multicast list (IPv4 groups, IPv6 neighbour discovery); a frame for
 * another address in a set bin reaches the stack, which drops it.  The
 * RoCE engine takes the frames of its groups whatever this says.
 */
static void qroce_set_rx_mode(struct net_device *nd)
{
	struct qroce_en *en = qroce_nd(nd);
	u32 ctrl = QROCE_ETH_CTRL_TX_EN | QROCE_ETH_CTRL_RX_EN |
		   QROCE_ETH_CTRL_MC_FILTER;
	struct netdev_hw_addr *ha;
	u64 hash = 0;

	if (!netif_running(nd))
		return;
	if (nd->flags & IFF_PROMISC)
		ctrl |= QROCE_ETH_CTRL_PROMISC;
	if (nd->flags & IFF_ALLMULTI)
		ctrl |= QROCE_ETH_CTRL_ALLMULTI;
	netdev_for_each_mc_addr(ha, nd)
		hash |= 1ULL << (ether_crc_le(ETH_ALEN, ha->addr) >>
				 QROCE_MC_HASH_SHIFT);
	qroce_wr(&en->core, QROCE_REG_MC_HASH_LO, lower_32_bits(hash));
	qroce_wr(&en->core, QROCE_REG_MC_HASH_HI, upper_32_bits(hash));
	qroce_wr(&en->core, QROCE_REG_ETH_CTRL, ctrl);
}

static int qroce_open(struct net_device *nd)
{
	struct qroce_en *en = qroce_nd(nd);
	int err;

	err = qroce_ring_alloc(en, &en->tx);
	if (err)
		goto err_free;
	err = qroce_ring_alloc(en, &en->rx);
	if (err)
		goto err_free;
	qroce_wr64(&en->core, QROCE_REG_TXQ_BASE_LO, en->tx.dma);
	qroce_wr(&en->core, QROCE_REG_TXQ_LOG2, en->tx.log2);
	qroce_wr64(&en->core, QROCE_REG_RXQ_BASE_LO, en->rx.dma);
	qroce_wr(&en->core, QROCE_REG_RXQ_LOG2, en->rx.log2);
	netif_addr_lock_bh(nd);
	qroce_set_rx_mode(nd);
	netif_addr_unlock_bh(nd);
	qroce_rx_refill(en);
	napi_enable(&en->napi);
	qroce_update_carrier(en);
	netif_start_queue(nd);
	return 0;

err_free:
	qroce_ring_free(en, &en->rx, DMA_FROM_DEVICE);
	qroce_ring_free(en, &en->tx, DMA_TO_DEVICE);
	return err;
}

static int qroce_stop(struct net_device *nd)
{
	struct qroce_en *en = qroce_nd(nd);

	netif_stop_queue(nd);
	napi_disable(&en->napi);
	qroce_wr(&en->core, QROCE_REG_ETH_CTRL, 0);
	qroce_ring_free(en, &en->rx, DMA_FROM_DEVICE);
	qroce_ring_free(en, &en->tx, DMA_TO_DEVICE);
	netif_carrier_off(nd);
	return 0;
}

static int qroce_change_mtu(struct net_device *nd, int mtu)
{
	struct qroce_en *en = qroce_nd(nd);

	WRITE_ONCE(nd->mtu, mtu);
	qroce_wr(&en->core, QROCE_REG_ETH_MTU, mtu);
	return 0;
}

static const struct net_device_ops qroce_netdev_ops = {
	.ndo_open = qroce_open,
	.ndo_stop = qroce_stop,
	.ndo_start_xmit = qroce_xmit,
	.ndo_change_mtu = qroce_change_mtu,
	.ndo_set_rx_mode = qroce_set_rx_mode,
	.ndo_validate_addr = eth_validate_addr,
};

static void qroce_get_drvinfo(struct net_device *nd,
			      struct ethtool_drvinfo *info)
{
	struct qroce_en *en = qroce_nd(nd);

	strscpy(info->driver, KBUILD_MODNAME, sizeof(info->driver));
	strscpy(info->bus_info, pci_name(en->core.pdev),
		sizeof(info->bus_info));
	/* the device has no firmware: report the spec version it implements */
	snprintf(info->fw_version, sizeof(info->fw_version), "spec %u",
		 QROCE_SPEC_VERSION);
	info->n_stats = QROCE_CNT_NUM;
}

/*
 * A virtual port at a fixed line rate (CAP_LINK_MBPS): full duplex, no
 * autonegotiation.  ib_get_eth_speed() turns the speed into the IB port's
 * active_speed and active_width.
 */
static int qroce_get_link_ksettings(struct net_device *nd,
				    struct ethtool_link_ksettings *ks)
{
	u32 mbps = qroce_nd(nd)->core.caps.link_mbps;

	ethtool_link_ksettings_zero_link_mode(ks, supported);
	ethtool_link_ksettings_zero_link_mode(ks, advertising);
	ks->base.speed = mbps ? mbps : SPEED_UNKNOWN;
	ks->base.duplex = mbps ? DUPLEX_FULL : DUPLEX_UNKNOWN;
	ks->base.port = PORT_OTHER;
	ks->base.autoneg = AUTONEG_DISABLE;
	return 0;
}

static int qroce_get_sset_count(struct net_device *nd, int sset)
{
	return sset == ETH_SS_STATS ? QROCE_CNT_NUM : -EOPNOTSUPP;
}

static void qroce_get_strings(struct net_device *nd, u32 sset, u8 *data)
{
	unsigned int i;

	if (sset != ETH_SS_STATS)
		return;
	for (i = 0; i < QROCE_CNT_NUM; i++)
		ethtool_puts(&data, qroce_stat_names[i]);
}

static void qroce_get_ethtool_stats(struct net_device *nd,
				    struct ethtool_stats *stats, u64 *data)
{
	qroce_stats_read(qroce_nd(nd), data);
}

static const struct ethtool_ops qroce_ethtool_ops = {
	.get_drvinfo = qroce_get_drvinfo,
	.get_link = ethtool_op_get_link,
	.get_link_ksettings = qroce_get_link_ksettings,
	.get_sset_count = qroce_get_sset_count,
	.get_strings = qroce_get_strings,
	.get_ethtool_stats = qroce_get_ethtool_stats,
};

int qroce_eth_init(struct qroce_en *en)
{
	unsigned int irq = pci_irq_vector(en->core.pdev, QROCE_MSIX_VEC_ETH);
	struct net_device *nd;
	int err;

	nd = alloc_etherdev(sizeof(struct qroce_netpriv));
	if (!nd)
		return -ENOMEM;
	((struct qroce_netpriv *)netdev_priv(nd))->en = en;
	SET_NETDEV_DEV(nd, qroce_dmadev(en));
	nd->netdev_ops = &qroce_netdev_ops;
	nd->ethtool_ops = &qroce_ethtool_ops;
	nd->min_mtu = QROCE_ETH_MIN_MTU;
	nd->max_mtu = QROCE_ETH_MAX_MTU;
	eth_hw_addr_set(nd, en->core.caps.mac);
	netif_napi_add(nd, &en->napi, qroce_napi_poll);
	netif_carrier_off(nd);
	en->core.netdev = nd;
	err = request_irq(irq, qroce_irq_eth, 0, "qroce-eth", en);
	if (err)
		goto err_napi;
	err = register_netdev(nd);
	if (err)
		goto err_irq;
	return 0;

err_irq:
	free_irq(irq, en);
err_napi:
	netif_napi_del(&en->napi);
	en->core.netdev = NULL;
	free_netdev(nd);
	return err;
}

void qroce_eth_destroy(struct qroce_en *en)
{
	struct net_device *nd = en->core.netdev;

	unregister_netdev(nd);
	free_irq(pci_irq_vector(en->core.pdev, QROCE_MSIX_VEC_ETH), en);
	netif_napi_del(&en->napi);
	en->core.netdev = NULL;
	free_netdev(nd);
}

/* ------------------------------------------------------------------ */
/* Counters (ethtool -S; rdma statistic and hw_counters through the     */
/* RDMA driver)                                                         */
/* ------------------------------------------------------------------ */

/*
 * Unsized here, sized QROCE_CNT_NUM in qroce_en.h: the two disagree, and
 * the build fails, if the last counter has no name (a missing one would
 * oops ib_core's hw_counters setup).
 */
const char * const qroce_stat_names[] = {
	[QROCE_CNT_ETH_TX_FRAMES] = "eth_tx_frames",
	[QROCE_CNT_ETH_RX_FRAMES] = "eth_rx_frames",
	[QROCE_CNT_ETH_RX_DROPS] = "eth_rx_drops",
	[QROCE_CNT_ROCE_TX_PKTS] = "roce_tx_pkts",
	[QROCE_CNT_ROCE_RX_PKTS] = "roce_rx_pkts",
	[QROCE_CNT_ROCE_RX_DROPS] = "roce_rx_drops",
	[QROCE_CNT_ROCE_ICRC_ERRS] = "roce_icrc_errs",
	[QROCE_CNT_ROCE_SEQ_NAKS] = "roce_seq_naks",
	[QROCE_CNT_ROCE_RNR_NAKS] = "roce_rnr_naks",
	[QROCE_CNT_ROCE_RETRANS] = "roce_retrans",
	[QROCE_CNT_ROCE_DUP_REQS] = "roce_dup_reqs",
	[QROCE_CNT_CMDS] = "cmds",
	[QROCE_CNT_CMD_ERRS] = "cmd_errs",
	[QROCE_CNT_BAD_DOORBELLS] = "bad_doorbells",
	[QROCE_CNT_CQE_ERRS] = "cqe_errs",
	[QROCE_CNT_CNP_SENT] = "cnp_sent",
	[QROCE_CNT_CNP_HANDLED] = "cnp_handled",
	[QROCE_CNT_ECN_MARKED] = "ecn_marked",
	[QROCE_CNT_RATE_CUTS] = "rate_cuts",
	[QROCE_CNT_WIRE_FAULTS] = "wire_faults",
	[QROCE_CNT_INJECTED_FAULTS] = "injected_faults",
	[QROCE_CNT_ETH_RX_FILTERED] = "eth_rx_filtered",
	[QROCE_CNT_ODP_FAULTS] = "odp_faults",
	[QROCE_CNT_ODP_PAGES_MAPPED] = "odp_pages_mapped",
	[QROCE_CNT_ODP_PAGES_UNMAPPED] = "odp_pages_unmapped",
	[QROCE_CNT_FAST_REGS] = "fast_regs",
};

/*
 * The device's counters are 32 bits wide and wrap.  Each read adds the
 * distance from the previous read (modulo 2^32) to a 64-bit sum; the
 * health work reads them every QROCE_HEALTH_PERIOD_MS, far more often than
 * any of them can wrap.
 */
void qroce_stats_update(struct qroce_en *en)
{
	unsigned long flags;
	u32 now;
	int i;

	spin_lock_irqsave(&en->stats_lock, flags);
	for (i = 0; i < QROCE_CNT_NUM; i++) {
		now = qroce_rd(&en->core, QROCE_REG_CNT(i));
		en->cnt[i] += (u32)(now - en->cnt_last[i]);
		en->cnt_last[i] = now;
	}
	spin_unlock_irqrestore(&en->stats_lock, flags);
}

/* Take the registers as they are now as the base (probe, after a reset). */
void qroce_stats_resync(struct qroce_en *en)
{
	unsigned long flags;
	int i;

	spin_lock_irqsave(&en->stats_lock, flags);
	for (i = 0; i < QROCE_CNT_NUM; i++)
		en->cnt_last[i] = qroce_rd(&en->core, QROCE_REG_CNT(i));
	spin_unlock_irqrestore(&en->stats_lock, flags);
}

/* The 64-bit counters, brought up to date. */
void qroce_stats_read(struct qroce_en *en, u64 *val)
{
	unsigned long flags;
	int i;

	qroce_stats_update(en);
	spin_lock_irqsave(&en->stats_lock, flags);
	for (i = 0; i < QROCE_CNT_NUM; i++)
		val[i] = en->cnt[i];
	spin_unlock_irqrestore(&en->stats_lock, flags);
}
