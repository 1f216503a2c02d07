/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * qroce: Linux driver for the qroce emulated RoCEv2 NIC.
 * The device interface is ../include/qroce_hw.h (docs/hw-spec.md).
 */
#ifndef QROCE_H
#define QROCE_H

#include <linux/pci.h>
#include <linux/netdevice.h>
#include <linux/idr.h>
#include <linux/xarray.h>
#include <linux/semaphore.h>
#include <linux/mutex.h>
#include <linux/completion.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_umem.h>

#include "qroce_hw.h"
#include "qroce-abi.h"

#define QROCE_DRV_NAME		"qroce"
#define QROCE_CMDQ_LOG2		6
#define QROCE_CMD_TIMEOUT_MS	5000
#define QROCE_CMD_ATOMIC_TIMEOUT_US 500000
#define QROCE_HEALTH_PERIOD_MS	1000
/* recovery: a pause for users to see the event, the least gap between two */
#define QROCE_RECOVER_DELAY_MS	500
#define QROCE_RECOVER_GAP_MS	3000
#define QROCE_AEQ_LOG2		8
#define QROCE_CEQ_LOG2		10
#define QROCE_NUM_CEQS		1
#define QROCE_ETH_RING_LOG2	8
#define QROCE_RX_BUF_SIZE	(QROCE_ETH_MAX_FRAME + NET_IP_ALIGN)

struct qroce_dev;
struct qroce_cmd_wait;
struct qroce_cmd_orphan;

/* A DMA-coherent buffer and its buffer table, for device-owned rings. */
struct qroce_dma_buf {
	void *va;
	dma_addr_t dma;
	size_t size;
};

struct qroce_cmdq {
	struct qroce_cmd *ring;
	struct qroce_cmd_comp *comp;
	dma_addr_t ring_dma, comp_dma;
	u32 size;
	u32 pi;			/* next slot to fill */
	u32 ci;			/* next completion to read */
	spinlock_t lock;	/* pi, ci, waiters */
	struct semaphore credits;
	bool use_irq;
	bool dead;
	u32 next_cookie;
	struct qroce_cmd_wait **wait;	/* per slot */
	struct qroce_cmd_orphan *orphan; /* per slot: polled, given up on */
	u32 *stale_ah;			/* AHs created by orphaned commands */
	u32 nstale_ah;
	bool gc_stopped;
	struct work_struct gc_work;	/* destroys stale_ah[] */
};

struct qroce_eq {
	struct qroce_dev *dev;
	struct qroce_eqe *ring;
	dma_addr_t dma;
	u32 log2;
	u32 ci;
	u32 eqn;
	bool created;
};

struct qroce_eth_ring {
	struct qroce_eth_desc *desc;
	dma_addr_t dma;
	u32 log2;
	u32 pi, ci;
	struct sk_buff **skb;
	dma_addr_t *buf_dma;
};

struct qroce_dev {
	struct ib_device ibdev;
	struct pci_dev *pdev;
	struct net_device *netdev;
	void __iomem *regs;
	void __iomem *db;		/* doorbell BAR, page 0 mapped */
	resource_size_t db_bar_start;
	struct qroce_cmdq cmdq;
	struct qroce_eq aeq;
	struct qroce_eq ceq[QROCE_NUM_CEQS];
	struct ida uar_ida;
	struct xarray qp_xa;		/* qpn -> qroce_qp */
	struct mutex qp_mutex;		/* QPN reuse vs CQ clean-up */
	struct xarray cq_xa;		/* cqn -> qroce_cq */
	struct xarray srq_xa;		/* srqn -> qroce_srq */
	spinlock_t db_lock;		/* kernel doorbell page */

	/* capabilities read at probe */
	u32 cap_max_qp, cap_max_cq, cap_max_mr, cap_max_pd, cap_max_ah;
	u32 cap_max_srq;
	u32 cap_max_qp_wr, cap_max_cqe, cap_max_sge, cap_max_inline;
	u32 features;		/* QROCE_FEAT_* */
	u32 cap_max_rd_atom, cap_page_sizes, cap_max_gid, cap_max_msg;
	u32 cap_max_frmr_pages;
	u32 cap_link_mbps;	/* port line rate, 0: not reported */
	u32 cap_max_mcast_grp, cap_max_mcast_qp_attach;
	u64 cap_max_mr_size;
	u8 mac[ETH_ALEN];
	bool ib_registered;
	bool removing;		/* remove has begun: no recovery */

	/* failure handling: qroce_dev_fatal(), qroce_fatal_work() */
	struct work_struct fatal_work;
	struct completion reset_done;	/* the dead device has been reset */
	struct delayed_work health_work;

	/* the 32-bit device counters, accumulated into 64 bits */
	spinlock_t stats_lock;		/* cnt_last, cnt */
	u32 cnt_last[QROCE_CNT_NUM];
	u64 cnt[QROCE_CNT_NUM];

	/* Ethernet function */
	struct napi_struct napi;
	struct qroce_eth_ring tx, rx;
	spinlock_t tx_lock;		/* tx ring */
};

/* The command queue is dead: commands fail at once, destroys succeed. */
static inline bool qroce_dead(struct qroce_dev *dev)
{
	return READ_ONCE(dev->cmdq.dead);
}

static inline struct qroce_dev *to_qdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct qroce_dev, ibdev);
}

static inline u32 qroce_rd(struct qroce_dev *dev, u32 reg)
{
	return readl(dev->regs + reg);
}

static inline void qroce_wr(struct qroce_dev *dev, u32 reg, u32 val)
{
	writel(val, dev->regs + reg);
}

static inline void qroce_wr64(struct qroce_dev *dev, u32 lo, u64 val)
{
	writel(lower_32_bits(val), dev->regs + lo);
	writel(upper_32_bits(val), dev->regs + lo + 4);
}

/* qroce_cmdq.c */
int qroce_cmdq_init(struct qroce_dev *dev);
void qroce_cmdq_destroy(struct qroce_dev *dev);
void qroce_cmdq_complete(struct qroce_dev *dev);
int qroce_cmd_exec(struct qroce_dev *dev, struct qroce_cmd *cmd, u32 *out);
int qroce_cmd_exec_atomic(struct qroce_dev *dev, struct qroce_cmd *cmd,
			  u32 *out);
int qroce_simple_cmd_out(struct qroce_dev *dev, u8 opcode, u32 handle,
			 u32 *out);
int qroce_simple_cmd(struct qroce_dev *dev, u8 opcode, u32 handle);
void qroce_dev_fatal(struct qroce_dev *dev, const char *why);
void qroce_cmdq_stop_gc(struct qroce_dev *dev);

/* qroce_eq.c */
int qroce_eqs_alloc(struct qroce_dev *dev);
void qroce_eqs_free(struct qroce_dev *dev);
int qroce_eqs_create(struct qroce_dev *dev);
void qroce_eqs_destroy(struct qroce_dev *dev);
irqreturn_t qroce_irq_cmd(int irq, void *data);
irqreturn_t qroce_irq_comp(int irq, void *data);

/* qroce_eth.c */
int qroce_eth_init(struct qroce_dev *dev);
void qroce_eth_destroy(struct qroce_dev *dev);

/* qroce_ctrl.c (registration, counters) and qroce_cq.c (events) */
int qroce_ib_register(struct qroce_dev *dev);
void qroce_ib_unregister(struct qroce_dev *dev);
void qroce_handle_comp(struct qroce_dev *dev, u32 cqn);
void qroce_handle_async(struct qroce_dev *dev, const struct qroce_eqe *eqe);
void qroce_kick_cqs(struct qroce_dev *dev);
void qroce_stats_update(struct qroce_dev *dev);
void qroce_stats_resync(struct qroce_dev *dev);
void qroce_stats_read(struct qroce_dev *dev, u64 *val);
const char *qroce_stat_name(unsigned int i);

#endif
