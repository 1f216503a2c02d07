/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * qroce_ib: the RDMA driver of the qroce emulated RoCEv2 NIC, bound to the
 * auxiliary device the Ethernet driver (qroce_en) adds; it reaches the
 * device through the struct qroce_core it carries (qroce_core.h).  The
 * device interface is ../include/qroce_hw.h (docs/hw-spec.md).
 */
#ifndef QROCE_H
#define QROCE_H

#include <linux/idr.h>
#include <linux/xarray.h>
#include <linux/mutex.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_umem.h>

#include "qroce_core.h"
#include "qroce-abi.h"

#define QROCE_CEQ_LOG2		10
#define QROCE_CEQ_BYTES		(sizeof(struct qroce_eqe) << QROCE_CEQ_LOG2)

struct qroce_dev;

/* A completion EQ: EQ 1 + i on the vector core->comp_irq[i]. */
struct qroce_ceq {
	struct qroce_dev *dev;
	struct qroce_eqe *ring;
	dma_addr_t dma;
	u32 eqn;
	u32 ci;
	bool created;
};

struct qroce_dev {
	struct ib_device ibdev;
	struct qroce_core *core;	/* the Ethernet driver's */
	struct pci_dev *pdev;		/* core->pdev, the DMA device */
	struct net_device *netdev;	/* core->netdev */
	struct qroce_caps caps;		/* core->caps */
	struct qroce_ulp ulp;		/* EQ 0's events, from qroce_en */
	struct qroce_ceq ceq[QROCE_NUM_CEQS];
	struct ida uar_ida;
	struct xarray qp_xa;		/* qpn -> qroce_qp */
	struct mutex qp_mutex;		/* QPN reuse vs CQ clean-up */
	struct xarray cq_xa;		/* cqn -> qroce_cq */
	struct xarray srq_xa;		/* srqn -> qroce_srq */
	struct xarray odp_xa;		/* key -> ODP qroce_mr (qroce_odp.c) */
	struct workqueue_struct *odp_wq;	/* page faults */
	/* device memory (qroce_dm.c): its pages, a bit each, and a mapping */
	unsigned long *dm_map;
	u32 dm_pages;
	struct mutex dm_lock;		/* dm_map */
	void __iomem *dm_kva;
	bool ib_registered;
	/* the counters' names (from qroce_en) for rdma statistic */
	struct rdma_stat_desc stat_descs[QROCE_CNT_NUM];
};

/* The command queue is dead: commands fail at once, destroys succeed. */
static inline bool qroce_dead(struct qroce_dev *dev)
{
	return qroce_core_dead(dev->core);
}

/*
 * The result of a destroy command.  Once the command queue is dead, the
 * device has dropped every object with its reset: the destroy succeeds
 * (ULPs must not see "shouldn't fail" destroys fail, and nothing of the
 * host's may leak), but only after that reset (@wait_reset), so that no
 * memory the device could still write is freed before.
 */
static inline int qroce_destroyed(struct qroce_dev *dev, int err,
				  bool wait_reset)
{
	if (!err || !qroce_dead(dev))
		return err;
	if (wait_reset)
		wait_for_completion(&dev->core->reset_done);
	return 0;
}

static inline struct qroce_dev *to_qdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct qroce_dev, ibdev);
}

/* Commands go through the Ethernet driver's command queue. */
static inline int qroce_cmd_exec(struct qroce_dev *dev, struct qroce_cmd *cmd,
				 u32 *out)
{
	return dev->core->ops->cmd_exec(dev->core, cmd, out);
}

static inline int qroce_cmd_exec_atomic(struct qroce_dev *dev,
					struct qroce_cmd *cmd, u32 *out)
{
	return dev->core->ops->cmd_exec_atomic(dev->core, cmd, out);
}

/* qroce_ctrl.c */
int qroce_simple_cmd_out(struct qroce_dev *dev, u8 opcode, u32 handle,
			 u32 *out);
int qroce_simple_cmd(struct qroce_dev *dev, u8 opcode, u32 handle);

/* qroce_cq.c: events */
void qroce_handle_comp(struct qroce_dev *dev, u32 cqn);
void qroce_handle_async(struct qroce_dev *dev, const struct qroce_eqe *eqe);
void qroce_kick_cqs(struct qroce_dev *dev);

#endif
