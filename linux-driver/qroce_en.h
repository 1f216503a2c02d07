/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * qroce_en: the Ethernet PCI driver of the qroce emulated RoCEv2 NIC.  It
 * owns the PCI function and shares its core with the RDMA driver through
 * an auxiliary device (qroce_core.h).  The device interface is
 * ../include/qroce_hw.h (docs/hw-spec.md).
 */
#ifndef QROCE_EN_H
#define QROCE_EN_H

#include <linux/interrupt.h>
#include <linux/semaphore.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>

#include "qroce_core.h"

#define QROCE_CMDQ_LOG2		6
#define QROCE_CMD_TIMEOUT_MS	5000
#define QROCE_CMD_ATOMIC_TIMEOUT_US 500000
#define QROCE_HEALTH_PERIOD_MS	1000
/* recovery: a pause for users to see the event, the least gap between two */
#define QROCE_RECOVER_DELAY_MS	500
#define QROCE_RECOVER_GAP_MS	3000
#define QROCE_AEQ_LOG2		8
#define QROCE_ETH_RING_LOG2	8

struct qroce_en;
struct qroce_cmd_wait;
struct qroce_cmd_orphan;

/* The command queue; core.dead says whether it still works. */
struct qroce_cmdq {
	struct qroce_cmd *ring;
	struct qroce_cmd_comp *comp;
	dma_addr_t ring_dma, comp_dma;
	u32 size;
	u32 pi;			/* next slot to fill */
	u32 ci;			/* next completion to read */
	spinlock_t lock;	/* pi, ci, waiters, core.dead */
	struct semaphore credits;
	bool use_irq;
	u32 next_cookie;
	struct qroce_cmd_wait **wait;	/* per slot */
	struct qroce_cmd_orphan *orphan; /* per slot: polled, given up on */
	u32 *stale_ah;			/* AHs created by orphaned commands */
	u32 nstale_ah;
	bool gc_stopped;
	struct work_struct gc_work;	/* destroys stale_ah[] */
};

/* EQ 0: the async events, on vector 0 with the command completions. */
struct qroce_eq {
	struct qroce_eqe *ring;
	dma_addr_t dma;
	u32 log2;
	u32 ci;
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

struct qroce_en {
	struct qroce_core core;		/* what the RDMA driver sees */
	struct qroce_aux_dev *aux;	/* "qroce_en.rdma.<aux_id>" */
	int aux_id;
	struct qroce_ulp __rcu *ulp;	/* the bound RDMA driver's */
	struct qroce_cmdq cmdq;
	struct qroce_eq aeq;
	bool removing;		/* remove has begun: no recovery */

	/* failure handling: qroce_dev_fatal(), qroce_fatal_work() (qroce_fatal_wq) */
	struct work_struct fatal_work;
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

static inline struct qroce_en *to_qen(struct qroce_core *core)
{
	return container_of(core, struct qroce_en, core);
}

/* The DMA device: the PCI function. */
static inline struct device *qroce_dmadev(struct qroce_en *en)
{
	return &en->core.pdev->dev;
}

/* The command queue is dead: commands fail at once. */
static inline bool qroce_dead(struct qroce_en *en)
{
	return qroce_core_dead(&en->core);
}

/* qroce_en_cmdq.c */
int qroce_cmdq_init(struct qroce_en *en);
void qroce_cmdq_destroy(struct qroce_en *en);
void qroce_cmdq_complete(struct qroce_en *en);
int qroce_cmd_exec(struct qroce_en *en, struct qroce_cmd *cmd, u32 *out);
int qroce_cmd_exec_atomic(struct qroce_en *en, struct qroce_cmd *cmd,
			  u32 *out);
int qroce_simple_cmd(struct qroce_en *en, u8 opcode, u32 handle);
void qroce_dev_fatal(struct qroce_en *en, const char *why);
void qroce_cmdq_stop_gc(struct qroce_en *en);

/* qroce_en_eq.c */
int qroce_aeq_alloc(struct qroce_en *en);
void qroce_aeq_free(struct qroce_en *en);
int qroce_aeq_create(struct qroce_en *en);
void qroce_aeq_destroy(struct qroce_en *en);
irqreturn_t qroce_irq_cmd(int irq, void *data);

/* qroce_en_eth.c: the netdev, and the counters (ethtool -S) */
int qroce_eth_init(struct qroce_en *en);
void qroce_eth_destroy(struct qroce_en *en);
extern const char * const qroce_stat_names[QROCE_CNT_NUM];
void qroce_stats_update(struct qroce_en *en);
void qroce_stats_resync(struct qroce_en *en);
void qroce_stats_read(struct qroce_en *en, u64 *val);

/* qroce_en_aux.c: the auxiliary device and the RDMA driver's calls */
int qroce_aux_add(struct qroce_en *en);
void qroce_aux_del(struct qroce_en *en);
void qroce_ulp_async(struct qroce_en *en, const struct qroce_eqe *e);
void qroce_ulp_fatal(struct qroce_en *en);

extern struct workqueue_struct *qroce_fatal_wq;

#endif
