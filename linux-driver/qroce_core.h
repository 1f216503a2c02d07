/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * qroce: the interface between the Ethernet PCI driver, qroce_en.ko
 * (drivers/net/ethernet/qroce/ in a kernel tree), and the RDMA driver,
 * qroce_ib.ko (drivers/infiniband/hw/qroce/), which it binds to through
 * the auxiliary bus, as ice/irdma and bnxt_en/bnxt_re do.  The hardware
 * itself is ../include/qroce_hw.h, for both.
 *
 * The boundary:
 *
 * qroce_en owns the PCI function and everything of which the device has
 * one: the BARs, MSI-X, reset and enable, the capability registers, the
 * command queue, EQ 0 on vector 0 (command completions and async
 * events), the health check and the 64-bit counters, failure handling
 * (reset, recovery by probing the function again), and the netdev with
 * its rings, receive filter, link and vector 1.  It needs nothing of
 * ib_core.  Once its netdev is registered it adds the auxiliary device
 * "qroce_en.rdma.<n>" (struct qroce_aux_dev), which carries the struct
 * qroce_core below; remove deletes it before anything else goes.
 *
 * qroce_ib is an auxiliary_driver for "qroce_en.rdma".  Bound, it owns
 * the ib_device and every verbs object, the completion EQs (EQ 1 + i on
 * comp_irq[i], the vectors qroce_en allocated and handed out, as ice
 * does for irdma), the kernel's doorbell page 0 and the user doorbell
 * pages 1.. of BAR 2.  It reaches the device only through struct
 * qroce_core: registers through @regs, commands through
 * ops->cmd_exec(), the counters through ops->stats_read(); EQ 0's events
 * and the device's failure reach it through the struct qroce_ulp it
 * registers with ops->register_ulp().
 *
 * Neither module links against the other: qroce_ib calls qroce_en only
 * through the function pointers of struct qroce_core_ops, qroce_en calls
 * qroce_ib only through those of struct qroce_ulp_ops.  So either loads
 * first (qroce_ib binds when the auxiliary device appears) and either
 * unloads first: removing qroce_en deletes the auxiliary device, which
 * unbinds qroce_ib (the ib_device goes) while all of qroce_en is still
 * there; removing qroce_ib leaves the netdev running.
 *
 * The rules for qroce_ib:
 *  - struct qroce_core and everything it points to is valid from probe to
 *    the end of remove, not after; the netdev is registered throughout.
 *  - by the end of remove it has released what it holds of the device:
 *    ib_unregister_device() destroys the verbs objects, it destroys its
 *    completion EQs and frees their interrupts, and unregisters its ulp.
 *  - ulp callbacks run under rcu_read_lock() and must not sleep:
 *    async_event() in the hard interrupt of vector 0, dev_fatal() from a
 *    work item once the failed device has been reset.
 *  - once @dead is set (a command timed out, STATUS.FATAL, lost events)
 *    commands fail at once with -EIO; @reset_done completes when the
 *    device can no longer write host memory.
 */
#ifndef QROCE_CORE_H
#define QROCE_CORE_H

#include <linux/auxiliary_bus.h>
#include <linux/completion.h>
#include <linux/io.h>
#include <linux/netdevice.h>
#include <linux/pci.h>

#include "qroce_hw.h"

/* the auxiliary device: "qroce_en.rdma.<n>" */
#define QROCE_AUX_RDMA		"rdma"
/* completion vectors (and EQs) handed to the RDMA driver */
#define QROCE_NUM_CEQS		1

struct qroce_core;
struct qroce_ulp;

/* What the capability registers said at probe (hw-spec section 10). */
struct qroce_caps {
	u8 mac[ETH_ALEN];
	u32 features;		/* QROCE_FEAT_* */
	u32 max_qp, max_cq, max_mr, max_pd, max_ah, max_srq;
	u32 max_qp_wr, max_cqe, max_sge, max_inline;
	u32 max_rd_atom, page_sizes, max_gid, max_msg;
	u32 max_frmr_pages;
	u32 link_mbps;		/* port line rate, 0: not reported */
	u32 max_mcast_grp, max_mcast_qp_attach;
	u64 max_mr_size;
	u32 dm_size;		/* device memory (BAR 5), bytes; 0: none */
};

/* Implemented by qroce_en, called by qroce_ib while it is bound. */
struct qroce_core_ops {
	/* a command and its six result words; sleeps */
	int (*cmd_exec)(struct qroce_core *core, struct qroce_cmd *cmd,
			u32 *out);
	/* the same in atomic context: -EBUSY, or -ETIMEDOUT after a bound */
	int (*cmd_exec_atomic)(struct qroce_core *core, struct qroce_cmd *cmd,
			       u32 *out);
	/* the device lost state (an EQ overflowed): reset and recover it */
	void (*dev_fatal)(struct qroce_core *core, const char *why);
	/* the QROCE_CNT_NUM counters, 64 bits wide, brought up to date */
	void (*stats_read)(struct qroce_core *core, u64 *val);
	/* EQ 0's events and the failure go to @ulp from now on */
	void (*register_ulp)(struct qroce_core *core, struct qroce_ulp *ulp);
	/* ... and no more: no callback runs once this returns */
	void (*unregister_ulp)(struct qroce_core *core);
};

/* Implemented by qroce_ib; see the rules above. */
struct qroce_ulp_ops {
	/* an EQE of EQ 0 other than an overflow: QP, CQ, SRQ, port events */
	void (*async_event)(struct qroce_ulp *ulp, const struct qroce_eqe *e);
	/* the device failed and has been reset; @dead is set */
	void (*dev_fatal)(struct qroce_ulp *ulp);
};

/* Embedded in the RDMA driver's device, found with container_of(). */
struct qroce_ulp {
	const struct qroce_ulp_ops *ops;
};

/* What the auxiliary device carries: one PCI function's shared core. */
struct qroce_core {
	const struct qroce_core_ops *ops;
	struct pci_dev *pdev;		/* the DMA device too */
	struct net_device *netdev;
	void __iomem *regs;		/* BAR 0 */
	void __iomem *db;		/* BAR 2, doorbell page 0 (kernel) */
	resource_size_t db_bar_start;	/* BAR 2's address, user pages 1.. */
	resource_size_t dm_bar_start;	/* BAR 5's, if caps.dm_size */
	struct qroce_caps caps;
	unsigned int comp_irq[QROCE_NUM_CEQS];	/* for EQ 1 + i */
	const char * const *stat_names;	/* QROCE_CNT_NUM, for stats_read */
	bool dead;			/* commands fail: READ_ONCE() */
	struct completion reset_done;	/* the dead device has been reset */
};

struct qroce_aux_dev {
	struct auxiliary_device adev;
	struct qroce_core *core;
};

static inline struct qroce_core *qroce_aux_core(struct auxiliary_device *a)
{
	return container_of(a, struct qroce_aux_dev, adev)->core;
}

static inline bool qroce_core_dead(const struct qroce_core *core)
{
	return READ_ONCE(core->dead);
}

static inline u32 qroce_rd(const struct qroce_core *core, u32 reg)
{
	return readl(core->regs + reg);
}

static inline void qroce_wr(const struct qroce_core *core, u32 reg, u32 val)
{
	writel(val, core->regs + reg);
}

static inline void qroce_wr64(const struct qroce_core *core, u32 lo, u64 val)
{
	writel(lower_32_bits(val), core->regs + lo);
	writel(upper_32_bits(val), core->regs + lo + 4);
}

/*
 * CREATE_EQ for EQ @eqn, 2^@log2 entries in a physically contiguous ring
 * at @dma: EQ 0 is qroce_en's, the completion EQs are qroce_ib's.
 */
static inline void qroce_create_eq_cmd(struct qroce_cmd *cmd, u32 eqn,
				       u32 log2, dma_addr_t dma)
{
	size_t size = sizeof(struct qroce_eqe) << log2;

	cmd->hdr.opcode = QROCE_CMD_CREATE_EQ;
	cmd->create_eq.eqn = cpu_to_le32(eqn);
	cmd->create_eq.log2_entries = log2;
	cmd->create_eq.ring.addr = cpu_to_le64(dma);
	cmd->create_eq.ring.npages = cpu_to_le32(DIV_ROUND_UP(size, PAGE_SIZE));
	cmd->create_eq.ring.page_shift = PAGE_SHIFT;
	cmd->create_eq.ring.level = QROCE_BT_CONTIG;
}

#endif
