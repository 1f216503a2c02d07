// SPDX-License-Identifier: GPL-2.0-only
/*
 * qroce_en: PCI probe and remove, failure handling and recovery.
 *
 * Probe runs in two phases: the hardware comes up (BARs, reset, command
 * queue, MSI-X, EQ 0), then the netdev is registered and the auxiliary
 * device for the RDMA driver is added (qroce_en_aux.c).  Remove undoes it
 * in reverse order.
 */
#include <linux/module.h>
#include <linux/delay.h>
#include "qroce_en.h"

static const struct pci_device_id qroce_pci_ids[] = {
	{ PCI_DEVICE(QROCE_PCI_VENDOR_ID, QROCE_PCI_DEVICE_ID) },
	{ }
};
MODULE_DEVICE_TABLE(pci, qroce_pci_ids);

static bool recover = true;
module_param(recover, bool, 0644);
MODULE_PARM_DESC(recover,
		 "after a device failure, probe the reset device again (default: on)");

/*
 * Recovery runs on a workqueue of the module's own, so that the device's
 * remove (which flushes the device's work items) can run inside it, and
 * module exit can drain it before the driver goes away.
 */
static struct workqueue_struct *qroce_recover_wq;
static bool qroce_unloading;
static unsigned long qroce_last_recovery;

struct qroce_recovery {
	struct work_struct work;
	struct pci_dev *pdev;
};

static int qroce_hw_reset(struct qroce_en *en)
{
	int i;

	qroce_wr(&en->core, QROCE_REG_CTRL, QROCE_CTRL_RESET);
	for (i = 0; i < 1000; i++) {
		if (!(qroce_rd(&en->core, QROCE_REG_STATUS) &
		      (QROCE_STATUS_RESETTING | QROCE_STATUS_READY)))
			return 0;
		usleep_range(100, 200);
	}
	return -ETIMEDOUT;
}

static int qroce_hw_enable(struct qroce_en *en)
{
	u32 st = 0;
	int i;

	qroce_wr(&en->core, QROCE_REG_CTRL, QROCE_CTRL_ENABLE);
	for (i = 0; i < 1000; i++) {
		st = qroce_rd(&en->core, QROCE_REG_STATUS);
		if (st & (QROCE_STATUS_READY | QROCE_STATUS_FATAL))
			break;
		usleep_range(100, 200);
	}
	if (!(st & QROCE_STATUS_READY)) {
		dev_err(qroce_dmadev(en), "device did not become ready (status 0x%x, fatal code %u)\n",
			st, qroce_rd(&en->core, QROCE_REG_FATAL_CODE));
		return -EIO;
	}
	return 0;
}

static void qroce_read_caps(struct qroce_core *c)
{
	struct qroce_caps *caps = &c->caps;
	u32 lo = qroce_rd(c, QROCE_REG_MAC_LO);
	u32 hi = qroce_rd(c, QROCE_REG_MAC_HI);

	caps->mac[0] = lo;
	caps->mac[1] = lo >> 8;
	caps->mac[2] = lo >> 16;
	caps->mac[3] = lo >> 24;
	caps->mac[4] = hi;
	caps->mac[5] = hi >> 8;
	caps->features = qroce_rd(c, QROCE_REG_FEATURES);
	caps->max_qp = qroce_rd(c, QROCE_REG_CAP_MAX_QP);
	caps->max_cq = qroce_rd(c, QROCE_REG_CAP_MAX_CQ);
	caps->max_mr = qroce_rd(c, QROCE_REG_CAP_MAX_MR);
	caps->max_pd = qroce_rd(c, QROCE_REG_CAP_MAX_PD);
	caps->max_ah = qroce_rd(c, QROCE_REG_CAP_MAX_AH);
	caps->max_srq = qroce_rd(c, QROCE_REG_CAP_MAX_SRQ);
	caps->max_qp_wr = qroce_rd(c, QROCE_REG_CAP_MAX_QP_WR);
	caps->max_cqe = qroce_rd(c, QROCE_REG_CAP_MAX_CQE);
	caps->max_sge = qroce_rd(c, QROCE_REG_CAP_MAX_SGE);
	caps->max_inline = qroce_rd(c, QROCE_REG_CAP_MAX_INLINE);
	caps->max_rd_atom = qroce_rd(c, QROCE_REG_CAP_MAX_RD_ATOM);
	caps->page_sizes = qroce_rd(c, QROCE_REG_CAP_PAGE_SIZES);
	caps->max_gid = qroce_rd(c, QROCE_REG_CAP_MAX_GID);
	caps->max_msg = qroce_rd(c, QROCE_REG_CAP_MAX_MSG);
	/* a REG_MR WQE has 16 bits for its page count */
	caps->max_frmr_pages = min_t(u32, U16_MAX,
				     qroce_rd(c, QROCE_REG_CAP_MAX_FRMR_PAGES));
	caps->link_mbps = qroce_rd(c, QROCE_REG_CAP_LINK_MBPS);
	caps->max_mcast_grp = qroce_rd(c, QROCE_REG_CAP_MAX_MCAST_GRP);
	caps->max_mcast_qp_attach =
		qroce_rd(c, QROCE_REG_CAP_MAX_MCAST_QP_ATTACH);
	caps->max_mr_size = qroce_rd(c, QROCE_REG_CAP_MAX_MR_SIZE_LO) |
		((u64)qroce_rd(c, QROCE_REG_CAP_MAX_MR_SIZE_HI) << 32);
	/* device memory: only as much as BAR 5 really has */
	caps->dm_size = 0;
	if (caps->features & QROCE_FEAT_DM) {
		u32 dm = qroce_rd(c, QROCE_REG_CAP_DM_SIZE);

		if (dm && is_power_of_2(dm) && dm >= PAGE_SIZE &&
		    pci_resource_len(c->pdev, QROCE_BAR_DM) >= dm) {
			caps->dm_size = dm;
			c->dm_bar_start = pci_resource_start(c->pdev,
							     QROCE_BAR_DM);
		}
	}
}

/*
 * After a failure, as a NIC driver's health recovery does: remove and
 * probe the device again, so that its users see IB_EVENT_DEVICE_FATAL,
 * then a new netdev and auxiliary device (and ib_device, if the RDMA
 * driver is loaded).  A device that fails again within
 * QROCE_RECOVER_GAP_MS stays failed.
 */
static void qroce_recover_work(struct work_struct *work)
{
	struct qroce_recovery *r = container_of(work, struct qroce_recovery,
						work);
	int err;

	/* the users that got the event close the device meanwhile */
	msleep(QROCE_RECOVER_DELAY_MS);
	if (!READ_ONCE(qroce_unloading)) {
		dev_info(&r->pdev->dev, "recovering: probing the device again\n");
		err = device_reprobe(&r->pdev->dev);
		if (err)
			dev_err(&r->pdev->dev, "recovery failed: %d\n", err);
	}
	pci_dev_put(r->pdev);
	kfree(r);
}

static void qroce_recover_later(struct qroce_en *en)
{
	struct qroce_recovery *r;

	if (!recover || READ_ONCE(en->removing) || READ_ONCE(qroce_unloading))
		return;
	if (qroce_last_recovery &&
	    time_before(jiffies, qroce_last_recovery +
			msecs_to_jiffies(QROCE_RECOVER_GAP_MS))) {
		dev_err(qroce_dmadev(en), "failed again within %u ms: not recovering\n",
			QROCE_RECOVER_GAP_MS);
		return;
	}
	r = kzalloc_obj(*r, GFP_KERNEL);
	if (!r)
		return;
	qroce_last_recovery = jiffies;
	INIT_WORK(&r->work, qroce_recover_work);
	r->pdev = pci_dev_get(en->core.pdev);
	queue_work(qroce_recover_wq, &r->work);
}

/*
 * The device failed (qroce_dev_fatal): reset it so that it writes no more
 * guest memory, let the RDMA driver's destroy verbs waiting for that go
 * on, and tell the RDMA driver, which wakes its kernel CQs' consumers
 * (their outstanding work requests complete with flush errors) and has
 * ib_core pass IB_EVENT_DEVICE_FATAL to every ULP and user context.
 */
static void qroce_fatal_work(struct work_struct *work)
{
	struct qroce_en *en = container_of(work, struct qroce_en,
					   fatal_work);
	u32 st = qroce_rd(&en->core, QROCE_REG_STATUS);

	dev_err(qroce_dmadev(en), "status 0x%x, fatal code %u: resetting\n",
		st, qroce_rd(&en->core, QROCE_REG_FATAL_CODE));
	qroce_stats_update(en);
	if (qroce_hw_reset(en))
		dev_err(qroce_dmadev(en), "reset did not complete\n");
	qroce_stats_resync(en);
	complete_all(&en->core.reset_done);
	qroce_ulp_fatal(en);
	qroce_recover_later(en);
}

/*
 * Once a period: a device that set STATUS.FATAL answers no command and
 * raises no interrupt, so look; and fold the 32-bit counters into their
 * 64-bit sums often enough that none wraps twice between two reads.
 */
static void qroce_health_work(struct work_struct *work)
{
	struct qroce_en *en = container_of(to_delayed_work(work),
					   struct qroce_en, health_work);

	if (qroce_dead(en))
		return;
	if (qroce_rd(&en->core, QROCE_REG_STATUS) & QROCE_STATUS_FATAL)
		qroce_dev_fatal(en, "device reports FATAL");
	else
		qroce_stats_update(en);
	schedule_delayed_work(&en->health_work,
			      msecs_to_jiffies(QROCE_HEALTH_PERIOD_MS));
}

static void qroce_health_start(struct qroce_en *en)
{
	qroce_stats_resync(en);
	schedule_delayed_work(&en->health_work,
			      msecs_to_jiffies(QROCE_HEALTH_PERIOD_MS));
}

static void qroce_health_stop(struct qroce_en *en)
{
	cancel_delayed_work_sync(&en->health_work);
}

/*
 * Vector 0 (commands, EQ 0) is this driver's; vector 1 belongs to the
 * netdev, which requests it; vectors 2.. are allocated here and handed to
 * the RDMA driver (core.comp_irq[]) for its completion EQs.
 */
static int qroce_irqs_init(struct qroce_en *en)
{
	struct pci_dev *pdev = en->core.pdev;
	int i, err;

	err = pci_alloc_irq_vectors(pdev, QROCE_MSIX_VEC_COMP0 + QROCE_NUM_CEQS,
				    QROCE_MSIX_VEC_COMP0 + QROCE_NUM_CEQS,
				    PCI_IRQ_MSIX);
	if (err < 0)
		return err;
	err = request_irq(pci_irq_vector(pdev, QROCE_MSIX_VEC_CMD),
			  qroce_irq_cmd, 0, "qroce-cmd", en);
	if (err) {
		pci_free_irq_vectors(pdev);
		return err;
	}
	for (i = 0; i < QROCE_NUM_CEQS; i++)
		en->core.comp_irq[i] = pci_irq_vector(pdev,
						      QROCE_MSIX_VEC_COMP0 + i);
	return 0;
}

static void qroce_irqs_destroy(struct qroce_en *en)
{
	struct pci_dev *pdev = en->core.pdev;

	free_irq(pci_irq_vector(pdev, QROCE_MSIX_VEC_CMD), en);
	pci_free_irq_vectors(pdev);
}

/* The software side of a new device: locks, work items. */
static void qroce_en_init(struct qroce_en *en, struct pci_dev *pdev)
{
	en->core.pdev = pdev;
	pci_set_drvdata(pdev, en);
	spin_lock_init(&en->tx_lock);
	spin_lock_init(&en->stats_lock);
	INIT_WORK(&en->fatal_work, qroce_fatal_work);
	INIT_DELAYED_WORK(&en->health_work, qroce_health_work);
	init_completion(&en->core.reset_done);
}

/* Enable the function, map its BARs, and check that it is a qroce. */
static int qroce_pci_init(struct qroce_en *en)
{
	struct pci_dev *pdev = en->core.pdev;
	struct qroce_core *c = &en->core;
	u32 magic, version;
	int err;

	err = pci_enable_device(pdev);
	if (err)
		return err;
	err = pci_request_regions(pdev, KBUILD_MODNAME);
	if (err)
		goto err_disable;
	pci_set_master(pdev);
	err = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (err)
		goto err_release;
	c->regs = pci_iomap(pdev, QROCE_BAR_REGS, 0);
	if (!c->regs) {
		err = -ENOMEM;
		goto err_release;
	}
	c->db = pci_iomap_range(pdev, QROCE_BAR_DB, 0, QROCE_DB_PAGE_SIZE);
	if (!c->db) {
		err = -ENOMEM;
		goto err_unmap_regs;
	}
	c->db_bar_start = pci_resource_start(pdev, QROCE_BAR_DB);

	magic = qroce_rd(c, QROCE_REG_MAGIC);
	version = qroce_rd(c, QROCE_REG_VERSION);
	if (magic != QROCE_MAGIC_VALUE || version != QROCE_SPEC_VERSION) {
		dev_err(&pdev->dev, "not a qroce v%u device (magic 0x%x version %u)\n",
			QROCE_SPEC_VERSION, magic, version);
		err = -ENODEV;
		goto err_unmap_db;
	}
	return 0;

err_unmap_db:
	pci_iounmap(pdev, c->db);
err_unmap_regs:
	pci_iounmap(pdev, c->regs);
err_release:
	pci_release_regions(pdev);
err_disable:
	pci_disable_device(pdev);
	return err;
}

static void qroce_pci_fini(struct qroce_en *en)
{
	struct pci_dev *pdev = en->core.pdev;

	pci_iounmap(pdev, en->core.db);
	pci_iounmap(pdev, en->core.regs);
	pci_release_regions(pdev);
	pci_disable_device(pdev);
}

/*
 * Probe: phase 1 brings the hardware up, phase 2 registers the netdev and
 * adds the auxiliary device (the RDMA driver, if loaded, binds to it
 * there).  Every step is undone by the label of the same name, in reverse
 * order, and remove is the same unwinding from the top.  Rings the device
 * writes (command completions, EQ 0) are allocated before it is enabled
 * and freed after it is reset; interrupt handlers are requested after the
 * rings exist and freed before they go.
 */
static int qroce_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct qroce_en *en;
	int err;

	en = kzalloc_obj(*en, GFP_KERNEL);
	if (!en)
		return -ENOMEM;
	qroce_en_init(en, pdev);

	/* Phase 1: the hardware. */
	err = qroce_pci_init(en);
	if (err)
		goto err_free_en;
	err = qroce_hw_reset(en);
	if (err)
		goto err_pci;
	qroce_read_caps(&en->core);
	err = qroce_cmdq_init(en);
	if (err)
		goto err_pci;
	err = qroce_aeq_alloc(en);
	if (err)
		goto err_cmdq;
	err = qroce_hw_enable(en);
	if (err)
		goto err_aeq_free;
	err = qroce_irqs_init(en);
	if (err)
		goto err_reset;
	WRITE_ONCE(en->cmdq.use_irq, true);
	err = qroce_aeq_create(en);
	if (err)
		goto err_irqs;
	qroce_health_start(en);

	/* Phase 2: the netdev, then the RDMA function beside it. */
	err = qroce_eth_init(en);
	if (err)
		goto err_health;
	err = qroce_aux_add(en);
	if (err)
		goto err_eth;
	dev_info(&pdev->dev, "qroce %pM: %s, RDMA function %s\n",
		 en->core.caps.mac, netdev_name(en->core.netdev),
		 dev_name(&en->aux->adev.dev));
	return 0;

err_eth:
	qroce_eth_destroy(en);
err_health:
	/* no address handle is destroyed any more, none is left to */
	qroce_cmdq_stop_gc(en);
	qroce_health_stop(en);
	qroce_aeq_destroy(en);
err_irqs:
	WRITE_ONCE(en->cmdq.use_irq, false);
	qroce_irqs_destroy(en);
err_reset:
	/* no command runs any more: a failure handler may still */
	flush_work(&en->fatal_work);
	qroce_hw_reset(en);
err_aeq_free:
	qroce_aeq_free(en);
err_cmdq:
	qroce_cmdq_destroy(en);
err_pci:
	qroce_pci_fini(en);
err_free_en:
	kfree(en);
	return err;
}

static void qroce_remove(struct pci_dev *pdev)
{
	struct qroce_en *en = pci_get_drvdata(pdev);

	WRITE_ONCE(en->removing, true);
	/* the RDMA driver's remove runs in here: the ib_device goes first */
	qroce_aux_del(en);
	qroce_eth_destroy(en);
	qroce_cmdq_stop_gc(en);
	qroce_health_stop(en);
	qroce_aeq_destroy(en);
	WRITE_ONCE(en->cmdq.use_irq, false);
	qroce_irqs_destroy(en);
	flush_work(&en->fatal_work);
	qroce_hw_reset(en);
	qroce_aeq_free(en);
	qroce_cmdq_destroy(en);
	qroce_pci_fini(en);
	kfree(en);
}

static struct pci_driver qroce_pci_driver = {
	.name = KBUILD_MODNAME,
	.id_table = qroce_pci_ids,
	.probe = qroce_probe,
	.remove = qroce_remove,
};

static int __init qroce_en_module_init(void)
{
	int err;

	qroce_recover_wq = alloc_workqueue("qroce_recover", WQ_UNBOUND, 1);
	if (!qroce_recover_wq)
		return -ENOMEM;
	err = -ENOMEM;
	qroce_fatal_wq = alloc_workqueue("qroce_fatal",
					 WQ_UNBOUND | WQ_MEM_RECLAIM, 0);
	if (!qroce_fatal_wq)
		goto err_recover_wq;
	err = pci_register_driver(&qroce_pci_driver);
	if (err)
		goto err_fatal_wq;
	return 0;

err_fatal_wq:
	destroy_workqueue(qroce_fatal_wq);
err_recover_wq:
	destroy_workqueue(qroce_recover_wq);
	return err;
}

static void __exit qroce_en_module_exit(void)
{
	/*
	 * No recovery starts from here on; removing the devices flushes
	 * their failure handlers, the last that could queue one; a queued
	 * one then finds qroce_unloading set and does nothing.
	 */
	WRITE_ONCE(qroce_unloading, true);
	pci_unregister_driver(&qroce_pci_driver);
	destroy_workqueue(qroce_fatal_wq);
	destroy_workqueue(qroce_recover_wq);
}

module_init(qroce_en_module_init);
module_exit(qroce_en_module_exit);
