// SPDX-License-Identifier: GPL-2.0-only
/*
 * qroce Ethernet function: a plain netdev over one TX and one RX ring of
 * single-buffer descriptors (hw-spec section 11), NAPI on vector 1.
 */
#include <linux/crc32.h>
#include <linux/etherdevice.h>
#include <linux/ethtool.h>
#include <linux/dma-mapping.h>
#include "qroce.h"

struct qroce_netpriv {
	struct qroce_dev *dev;
};

static struct qroce_dev *qroce_nd(struct net_device *nd)
{
	return ((struct qroce_netpriv *)netdev_priv(nd))->dev;
}

static int qroce_rx_post(struct qroce_dev *dev, u32 idx)
{
	struct qroce_eth_ring *r = &dev->rx;
	u32 slot = idx & ((1u << r->log2) - 1);
	struct sk_buff *skb;
	dma_addr_t dma;

	skb = netdev_alloc_skb_ip_align(dev->netdev, QROCE_ETH_MAX_FRAME);
	if (!skb)
		return -ENOMEM;
	dma = dma_map_single(&dev->pdev->dev, skb->data, QROCE_ETH_MAX_FRAME,
			     DMA_FROM_DEVICE);
	if (dma_mapping_error(&dev->pdev->dev, dma)) {
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

static void qroce_rx_refill(struct qroce_dev *dev)
{
	struct qroce_eth_ring *r = &dev->rx;
	u32 size = 1u << r->log2;
	bool posted = false;

	while (r->pi - r->ci < size) {
		if (qroce_rx_post(dev, r->pi))
			break;
		r->pi++;
		posted = true;
	}
	if (posted) {
		dma_wmb();
		qroce_wr(dev, QROCE_REG_RXQ_PI, r->pi);
	}
}

static int qroce_rx_poll(struct qroce_dev *dev, int budget)
{
	struct qroce_eth_ring *r = &dev->rx;
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
		dma_unmap_single(&dev->pdev->dev, r->buf_dma[slot],
				 QROCE_ETH_MAX_FRAME, DMA_FROM_DEVICE);
		r->skb[slot] = NULL;
		r->ci++;
		done++;
		if ((flags & QROCE_ETH_DESC_ERR) || len < ETH_HLEN ||
		    len > QROCE_ETH_MAX_FRAME) {
			dev->netdev->stats.rx_errors++;
			dev_kfree_skb_any(skb);
			continue;
		}
		skb_put(skb, len);
		skb->protocol = eth_type_trans(skb, dev->netdev);
		dev->netdev->stats.rx_packets++;
		dev->netdev->stats.rx_bytes += len;
		napi_gro_receive(&dev->napi, skb);
	}
	qroce_rx_refill(dev);
	return done;
}

static void qroce_tx_clean(struct qroce_dev *dev)
{
	struct qroce_eth_ring *r = &dev->tx;
	u32 mask = (1u << r->log2) - 1;
	unsigned int pkts = 0, bytes = 0;

	spin_lock(&dev->tx_lock);
	while (r->ci != r->pi) {
		u32 slot = r->ci & mask;
		struct qroce_eth_desc *d = &r->desc[slot];
		struct sk_buff *skb = r->skb[slot];

		if (!(le16_to_cpu(READ_ONCE(d->flags)) & QROCE_ETH_DESC_DONE))
			break;
		dma_rmb();
		dma_unmap_single(&dev->pdev->dev, r->buf_dma[slot], skb->len,
				 DMA_TO_DEVICE);
		if (le16_to_cpu(d->flags) & QROCE_ETH_DESC_ERR) {
			dev->netdev->stats.tx_errors++;
		} else {
			pkts++;
			bytes += skb->len;
		}
		dev_consume_skb_any(skb);
		r->skb[slot] = NULL;
		r->ci++;
	}
	dev->netdev->stats.tx_packets += pkts;
	dev->netdev->stats.tx_bytes += bytes;
	if (netif_queue_stopped(dev->netdev) &&
	    r->pi - r->ci < (1u << r->log2))
		netif_wake_queue(dev->netdev);
	spin_unlock(&dev->tx_lock);
}

static int qroce_napi_poll(struct napi_struct *napi, int budget)
{
	struct qroce_dev *dev = container_of(napi, struct qroce_dev, napi);
	int done;

	qroce_wr(dev, QROCE_REG_ETH_IRQ, QROCE_ETH_IRQ_TX | QROCE_ETH_IRQ_RX);
	qroce_tx_clean(dev);
	done = qroce_rx_poll(dev, budget);
	if (done < budget)
		napi_complete_done(napi, done);
	return done;
}

static void qroce_update_carrier(struct qroce_dev *dev)
{
	if (qroce_rd(dev, QROCE_REG_PORT_STATUS) & QROCE_PORT_LINK_UP)
		netif_carrier_on(dev->netdev);
	else
		netif_carrier_off(dev->netdev);
}

/*
 * Vector 1.  It is requested once the netdev exists and freed before the
 * netdev is, so dev->netdev is always valid here.
 */
static irqreturn_t qroce_irq_eth(int irq, void *data)
{
	struct qroce_dev *dev = data;

	if (qroce_rd(dev, QROCE_REG_ETH_IRQ) & QROCE_ETH_IRQ_LINK) {
		qroce_wr(dev, QROCE_REG_ETH_IRQ, QROCE_ETH_IRQ_LINK);
		qroce_update_carrier(dev);
	}
	napi_schedule(&dev->napi);
	return IRQ_HANDLED;
}

static netdev_tx_t qroce_xmit(struct sk_buff *skb, struct net_device *nd)
{
	struct qroce_dev *dev = qroce_nd(nd);
	struct qroce_eth_ring *r = &dev->tx;
	u32 slot;
	dma_addr_t dma;

	if (skb_linearize(skb) || skb->len > QROCE_ETH_MAX_FRAME) {
		nd->stats.tx_dropped++;
		dev_kfree_skb_any(skb);
		return NETDEV_TX_OK;
	}
	dma = dma_map_single(&dev->pdev->dev, skb->data, skb->len,
			     DMA_TO_DEVICE);
	if (dma_mapping_error(&dev->pdev->dev, dma)) {
		nd->stats.tx_dropped++;
		dev_kfree_skb_any(skb);
		return NETDEV_TX_OK;
	}
	spin_lock_bh(&dev->tx_lock);
	slot = r->pi & ((1u << r->log2) - 1);
	r->skb[slot] = skb;
	r->buf_dma[slot] = dma;
	r->desc[slot].addr = cpu_to_le64(dma);
	r->desc[slot].len = cpu_to_le16(skb->len);
	r->desc[slot].flags = 0;
	r->pi++;
	dma_wmb();
	qroce_wr(dev, QROCE_REG_TXQ_PI, r->pi);
	if (r->pi - r->ci >= (1u << r->log2))
		netif_stop_queue(nd);
	spin_unlock_bh(&dev->tx_lock);
	return NETDEV_TX_OK;
}

static int qroce_ring_alloc(struct qroce_dev *dev, struct qroce_eth_ring *r)
{
	size_t n = 1u << QROCE_ETH_RING_LOG2;

	r->log2 = QROCE_ETH_RING_LOG2;
	r->pi = 0;
	r->ci = 0;
	r->desc = dma_alloc_coherent(&dev->pdev->dev, n * sizeof(*r->desc),
				     &r->dma, GFP_KERNEL);
	r->skb = kcalloc(n, sizeof(*r->skb), GFP_KERNEL);
	r->buf_dma = kcalloc(n, sizeof(*r->buf_dma), GFP_KERNEL);
	if (!r->desc || !r->skb || !r->buf_dma)
		return -ENOMEM;
	return 0;
}

static void qroce_ring_free(struct qroce_dev *dev, struct qroce_eth_ring *r,
			    enum dma_data_direction dir)
{
	u32 i, n = 1u << r->log2;

	if (r->skb) {
		for (i = 0; i < n; i++) {
			if (!r->skb[i])
				continue;
			dma_unmap_single(&dev->pdev->dev, r->buf_dma[i],
					 dir == DMA_TO_DEVICE ? r->skb[i]->len :
					 QROCE_ETH_MAX_FRAME, dir);
			dev_kfree_skb_any(r->skb[i]);
		}
	}
	kfree(r->skb);
	kfree(r->buf_dma);
	if (r->desc)
		dma_free_coherent(&dev->pdev->dev, n * sizeof(*r->desc),
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
	struct qroce_dev *dev = qroce_nd(nd);
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
	qroce_wr(dev, QROCE_REG_MC_HASH_LO, lower_32_bits(hash));
	qroce_wr(dev, QROCE_REG_MC_HASH_HI, upper_32_bits(hash));
	qroce_wr(dev, QROCE_REG_ETH_CTRL, ctrl);
}

static int qroce_open(struct net_device *nd)
{
	struct qroce_dev *dev = qroce_nd(nd);
	int err;

	err = qroce_ring_alloc(dev, &dev->tx);
	if (err)
		goto err_free;
	err = qroce_ring_alloc(dev, &dev->rx);
	if (err)
		goto err_free;
	qroce_wr64(dev, QROCE_REG_TXQ_BASE_LO, dev->tx.dma);
	qroce_wr(dev, QROCE_REG_TXQ_LOG2, dev->tx.log2);
	qroce_wr64(dev, QROCE_REG_RXQ_BASE_LO, dev->rx.dma);
	qroce_wr(dev, QROCE_REG_RXQ_LOG2, dev->rx.log2);
	netif_addr_lock_bh(nd);
	qroce_set_rx_mode(nd);
	netif_addr_unlock_bh(nd);
	qroce_rx_refill(dev);
	napi_enable(&dev->napi);
	qroce_update_carrier(dev);
	netif_start_queue(nd);
	return 0;

err_free:
	qroce_ring_free(dev, &dev->rx, DMA_FROM_DEVICE);
	qroce_ring_free(dev, &dev->tx, DMA_TO_DEVICE);
	return err;
}

static int qroce_stop(struct net_device *nd)
{
	struct qroce_dev *dev = qroce_nd(nd);

	netif_stop_queue(nd);
	napi_disable(&dev->napi);
	qroce_wr(dev, QROCE_REG_ETH_CTRL, 0);
	qroce_ring_free(dev, &dev->rx, DMA_FROM_DEVICE);
	qroce_ring_free(dev, &dev->tx, DMA_TO_DEVICE);
	netif_carrier_off(nd);
	return 0;
}

static int qroce_change_mtu(struct net_device *nd, int mtu)
{
	struct qroce_dev *dev = qroce_nd(nd);

	WRITE_ONCE(nd->mtu, mtu);
	qroce_wr(dev, QROCE_REG_ETH_MTU, mtu);
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
	struct qroce_dev *dev = qroce_nd(nd);

	strscpy(info->driver, QROCE_DRV_NAME, sizeof(info->driver));
	strscpy(info->bus_info, pci_name(dev->pdev), sizeof(info->bus_info));
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
	struct qroce_dev *dev = qroce_nd(nd);

	ethtool_link_ksettings_zero_link_mode(ks, supported);
	ethtool_link_ksettings_zero_link_mode(ks, advertising);
	ks->base.speed = dev->cap_link_mbps ? dev->cap_link_mbps :
					      SPEED_UNKNOWN;
	ks->base.duplex = dev->cap_link_mbps ? DUPLEX_FULL : DUPLEX_UNKNOWN;
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
		ethtool_puts(&data, qroce_stat_name(i));
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

int qroce_eth_init(struct qroce_dev *dev)
{
	unsigned int irq = pci_irq_vector(dev->pdev, QROCE_MSIX_VEC_ETH);
	struct net_device *nd;
	int err;

	nd = alloc_etherdev(sizeof(struct qroce_netpriv));
	if (!nd)
		return -ENOMEM;
	((struct qroce_netpriv *)netdev_priv(nd))->dev = dev;
	SET_NETDEV_DEV(nd, &dev->pdev->dev);
	nd->netdev_ops = &qroce_netdev_ops;
	nd->ethtool_ops = &qroce_ethtool_ops;
	nd->min_mtu = QROCE_ETH_MIN_MTU;
	nd->max_mtu = QROCE_ETH_MAX_MTU;
	eth_hw_addr_set(nd, dev->mac);
	netif_napi_add(nd, &dev->napi, qroce_napi_poll);
	netif_carrier_off(nd);
	dev->netdev = nd;
	err = request_irq(irq, qroce_irq_eth, 0, "qroce-eth", dev);
	if (err)
		goto err_napi;
	err = register_netdev(nd);
	if (err)
		goto err_irq;
	return 0;

err_irq:
	free_irq(irq, dev);
err_napi:
	netif_napi_del(&dev->napi);
	dev->netdev = NULL;
	free_netdev(nd);
	return err;
}

void qroce_eth_destroy(struct qroce_dev *dev)
{
	struct net_device *nd = dev->netdev;

	unregister_netdev(nd);
	free_irq(pci_irq_vector(dev->pdev, QROCE_MSIX_VEC_ETH), dev);
	netif_napi_del(&dev->napi);
	dev->netdev = NULL;
	free_netdev(nd);
}
