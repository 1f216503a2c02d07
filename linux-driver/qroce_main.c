// SPDX-License-Identifier: GPL-2.0-only
/*
 * qroce: PCI probe and remove.
 *
 * Probe runs in two phases: the hardware comes up (BARs, reset, command
 * queue, MSI-X, event queues), then the netdev and the ib_device are
 * registered.  Remove undoes it in reverse order.
 */
#include <linux/module.h>
#include <linux/delay.h>
#include "qroce.h"

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

static int qroce_hw_reset(struct qroce_dev *dev)
{
	int i;

	qroce_wr(dev, QROCE_REG_CTRL, QROCE_CTRL_RESET);
	for (i = 0; i < 1000; i++) {
		if (!(qroce_rd(dev, QROCE_REG_STATUS) &
		      (QROCE_STATUS_RESETTING | QROCE_STATUS_READY)))
			return 0;
		usleep_range(100, 200);
	}
	return -ETIMEDOUT;
}

static int qroce_hw_enable(struct qroce_dev *dev)
{
	u32 st = 0;
	int i;

	qroce_wr(dev, QROCE_REG_CTRL, QROCE_CTRL_ENABLE);
	for (i = 0; i < 1000; i++) {
		st = qroce_rd(dev, QROCE_REG_STATUS);
		if (st & (QROCE_STATUS_READY | QROCE_STATUS_FATAL))
			break;
		usleep_range(100, 200);
	}
	if (!(st & QROCE_STATUS_READY)) {
		dev_err(&dev->pdev->dev, "device did not become ready (status 0x%x, fatal code %u)\n",
			st, qroce_rd(dev, QROCE_REG_FATAL_CODE));
		return -EIO;
	}
	return 0;
}

static void qroce_read_caps(struct qroce_dev *dev)
{
	u32 lo = qroce_rd(dev, QROCE_REG_MAC_LO);
	u32 hi = qroce_rd(dev, QROCE_REG_MAC_HI);

	dev->mac[0] = lo;
	dev->mac[1] = lo >> 8;
	dev->mac[2] = lo >> 16;
	dev->mac[3] = lo >> 24;
	dev->mac[4] = hi;
	dev->mac[5] = hi >> 8;
	dev->features = qroce_rd(dev, QROCE_REG_FEATURES);
	dev->cap_max_qp = qroce_rd(dev, QROCE_REG_CAP_MAX_QP);
	dev->cap_max_cq = qroce_rd(dev, QROCE_REG_CAP_MAX_CQ);
	dev->cap_max_mr = qroce_rd(dev, QROCE_REG_CAP_MAX_MR);
	dev->cap_max_pd = qroce_rd(dev, QROCE_REG_CAP_MAX_PD);
	dev->cap_max_ah = qroce_rd(dev, QROCE_REG_CAP_MAX_AH);
	dev->cap_max_srq = qroce_rd(dev, QROCE_REG_CAP_MAX_SRQ);
	dev->cap_max_qp_wr = qroce_rd(dev, QROCE_REG_CAP_MAX_QP_WR);
	dev->cap_max_cqe = qroce_rd(dev, QROCE_REG_CAP_MAX_CQE);
	dev->cap_max_sge = qroce_rd(dev, QROCE_REG_CAP_MAX_SGE);
	dev->cap_max_inline = qroce_rd(dev, QROCE_REG_CAP_MAX_INLINE);
	dev->cap_max_rd_atom = qroce_rd(dev, QROCE_REG_CAP_MAX_RD_ATOM);
	dev->cap_page_sizes = qroce_rd(dev, QROCE_REG_CAP_PAGE_SIZES);
	dev->cap_max_gid = qroce_rd(dev, QROCE_REG_CAP_MAX_GID);
	dev->cap_max_msg = qroce_rd(dev, QROCE_REG_CAP_MAX_MSG);
	/* a REG_MR WQE has 16 bits for its page count */
	dev->cap_max_frmr_pages = min_t(u32, U16_MAX,
					qroce_rd(dev, QROCE_REG_CAP_MAX_FRMR_PAGES));
	dev->cap_link_mbps = qroce_rd(dev, QROCE_REG_CAP_LINK_MBPS);
	dev->cap_max_mcast_grp = qroce_rd(dev, QROCE_REG_CAP_MAX_MCAST_GRP);
	dev->cap_max_mcast_qp_attach =
		qroce_rd(dev, QROCE_REG_CAP_MAX_MCAST_QP_ATTACH);
	dev->cap_max_mr_size = qroce_rd(dev, QROCE_REG_CAP_MAX_MR_SIZE_LO) |
		((u64)qroce_rd(dev, QROCE_REG_CAP_MAX_MR_SIZE_HI) << 32);
}

/*
 * After a failure, as a NIC driver's health recovery does: remove and
 * probe the device again, so that its users see IB_EVENT_DEVICE_FATAL,
 * then a new ib_device and netdev.  A device that fails again within
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

static void qroce_recover_later(struct qroce_dev *dev)
{
	struct qroce_recovery *r;

	if (!recover || READ_ONCE(dev->removing) || READ_ONCE(qroce_unloading))
		return;
	if (qroce_last_recovery &&
	    time_before(jiffies, qroce_last_recovery +
			msecs_to_jiffies(QROCE_RECOVER_GAP_MS))) {
		dev_err(&dev->pdev->dev, "failed again within %u ms: not recovering\n",
			QROCE_RECOVER_GAP_MS);
		return;
	}
	r = kzalloc(sizeof(*r), GFP_KERNEL);
	if (!r)
		return;
	qroce_last_recovery = jiffies;
	INIT_WORK(&r->work, qroce_recover_work);
	r->pdev = pci_dev_get(dev->pdev);
	queue_work(qroce_recover_wq, &r->work);
}

/*
 * The device failed (qroce_dev_fatal): reset it so that it writes no more
 * guest memory, let the destroy verbs waiting for that go on, wake every
 * kernel CQ's consumer (their outstanding work requests complete with
 * flush errors, see qroce_poll_cq), and tell ib_core, which passes
 * IB_EVENT_DEVICE_FATAL to every ULP and user context.
 */
static void qroce_fatal_work(struct work_struct *work)
{
	struct qroce_dev *dev = container_of(work, struct qroce_dev,
					     fatal_work);
	struct ib_event ev = {
		.device = &dev->ibdev,
		.event = IB_EVENT_DEVICE_FATAL,
		.element.port_num = 1,
	};
	u32 st = qroce_rd(dev, QROCE_REG_STATUS);

	dev_err(&dev->pdev->dev, "status 0x%x, fatal code %u: resetting\n",
		st, qroce_rd(dev, QROCE_REG_FATAL_CODE));
	qroce_stats_update(dev);
	if (qroce_hw_reset(dev))
		dev_err(&dev->pdev->dev, "reset did not complete\n");
	qroce_stats_resync(dev);
	complete_all(&dev->reset_done);
	qroce_kick_cqs(dev);
	if (READ_ONCE(dev->ib_registered))
		ib_dispatch_event(&ev);
	qroce_recover_later(dev);
}

/*
 * Once a period: a device that set STATUS.FATAL answers no command and
 * raises no interrupt, so look; and fold the 32-bit counters into their
 * 64-bit sums often enough that none wraps twice between two reads.
 */
static void qroce_health_work(struct work_struct *work)
{
	struct qroce_dev *dev = container_of(to_delayed_work(work),
					     struct qroce_dev, health_work);

	if (qroce_dead(dev))
		return;
	if (qroce_rd(dev, QROCE_REG_STATUS) & QROCE_STATUS_FATAL)
		qroce_dev_fatal(dev, "device reports FATAL");
	else
		qroce_stats_update(dev);
	schedule_delayed_work(&dev->health_work,
			      msecs_to_jiffies(QROCE_HEALTH_PERIOD_MS));
}

static void qroce_health_start(struct qroce_dev *dev)
{
	qroce_stats_resync(dev);
	schedule_delayed_work(&dev->health_work,
			      msecs_to_jiffies(QROCE_HEALTH_PERIOD_MS));
}

static void qroce_health_stop(struct qroce_dev *dev)
{
	cancel_delayed_work_sync(&dev->health_work);
}

/*
 * Vectors 0 (commands, async EQ) and 2.. (completion EQs); vector 1 belongs
 * to the Ethernet function, which requests it with its netdev.
 */
static int qroce_irqs_init(struct qroce_dev *dev)
{
	struct pci_dev *pdev = dev->pdev;
	int i, err;

	err = pci_alloc_irq_vectors(pdev, QROCE_MSIX_VEC_COMP0 + QROCE_NUM_CEQS,
				    QROCE_MSIX_VEC_COMP0 + QROCE_NUM_CEQS,
				    PCI_IRQ_MSIX);
	if (err < 0)
		return err;
	err = request_irq(pci_irq_vector(pdev, QROCE_MSIX_VEC_CMD),
			  qroce_irq_cmd, 0, "qroce-cmd", dev);
	if (err)
		goto err_free_vectors;
	for (i = 0; i < QROCE_NUM_CEQS; i++) {
		err = request_irq(pci_irq_vector(pdev, QROCE_MSIX_VEC_COMP0 + i),
				  qroce_irq_comp, 0, "qroce-comp", &dev->ceq[i]);
		if (err)
			goto err_free_comp;
	}
	return 0;

err_free_comp:
	while (--i >= 0)
		free_irq(pci_irq_vector(pdev, QROCE_MSIX_VEC_COMP0 + i),
			 &dev->ceq[i]);
	free_irq(pci_irq_vector(pdev, QROCE_MSIX_VEC_CMD), dev);
err_free_vectors:
	pci_free_irq_vectors(pdev);
	return err;
}

static void qroce_irqs_destroy(struct qroce_dev *dev)
{
	struct pci_dev *pdev = dev->pdev;
	int i;

	for (i = QROCE_NUM_CEQS - 1; i >= 0; i--)
		free_irq(pci_irq_vector(pdev, QROCE_MSIX_VEC_COMP0 + i),
			 &dev->ceq[i]);
	free_irq(pci_irq_vector(pdev, QROCE_MSIX_VEC_CMD), dev);
	pci_free_irq_vectors(pdev);
}

/* The software side of a new device: object tables, locks, work items. */
static void qroce_dev_init(struct qroce_dev *dev, struct pci_dev *pdev)
{
	dev->pdev = pdev;
	pci_set_drvdata(pdev, dev);
	ida_init(&dev->uar_ida);
	xa_init_flags(&dev->qp_xa, XA_FLAGS_LOCK_IRQ);
	xa_init_flags(&dev->cq_xa, XA_FLAGS_LOCK_IRQ);
	xa_init_flags(&dev->srq_xa, XA_FLAGS_LOCK_IRQ);
	spin_lock_init(&dev->db_lock);
	spin_lock_init(&dev->tx_lock);
	spin_lock_init(&dev->stats_lock);
	mutex_init(&dev->qp_mutex);
	INIT_WORK(&dev->fatal_work, qroce_fatal_work);
	INIT_DELAYED_WORK(&dev->health_work, qroce_health_work);
	init_completion(&dev->reset_done);
}

static void qroce_dev_free(struct qroce_dev *dev)
{
	ida_destroy(&dev->uar_ida);
	xa_destroy(&dev->qp_xa);
	xa_destroy(&dev->cq_xa);
	xa_destroy(&dev->srq_xa);
	mutex_destroy(&dev->qp_mutex);
	ib_dealloc_device(&dev->ibdev);
}

/* Enable the function, map its BARs, and check that it is a qroce. */
static int qroce_pci_init(struct qroce_dev *dev)
{
	struct pci_dev *pdev = dev->pdev;
	u32 magic, version;
	int err;

	err = pci_enable_device(pdev);
	if (err)
		return err;
	err = pci_request_regions(pdev, QROCE_DRV_NAME);
	if (err)
		goto err_disable;
	pci_set_master(pdev);
	err = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (err)
		goto err_release;
	dev->regs = pci_iomap(pdev, QROCE_BAR_REGS, 0);
	if (!dev->regs) {
		err = -ENOMEM;
		goto err_release;
	}
	dev->db = pci_iomap_range(pdev, QROCE_BAR_DB, 0, QROCE_DB_PAGE_SIZE);
	if (!dev->db) {
		err = -ENOMEM;
		goto err_unmap_regs;
	}
	dev->db_bar_start = pci_resource_start(pdev, QROCE_BAR_DB);

	magic = qroce_rd(dev, QROCE_REG_MAGIC);
	version = qroce_rd(dev, QROCE_REG_VERSION);
	if (magic != QROCE_MAGIC_VALUE || version != QROCE_SPEC_VERSION) {
		dev_err(&pdev->dev, "not a qroce v%u device (magic 0x%x version %u)\n",
			QROCE_SPEC_VERSION, magic, version);
		err = -ENODEV;
		goto err_unmap_db;
	}
	return 0;

err_unmap_db:
	pci_iounmap(pdev, dev->db);
err_unmap_regs:
	pci_iounmap(pdev, dev->regs);
err_release:
	pci_release_regions(pdev);
err_disable:
	pci_disable_device(pdev);
	return err;
}

static void qroce_pci_fini(struct qroce_dev *dev)
{
	struct pci_dev *pdev = dev->pdev;

	pci_iounmap(pdev, dev->db);
	pci_iounmap(pdev, dev->regs);
	pci_release_regions(pdev);
	pci_disable_device(pdev);
}

/*
 * Probe: phase 1 brings the hardware up, phase 2 registers the netdev and
 * the ib_device.  Every step is undone by the label of the same name, in
 * reverse order, and remove is the same unwinding from the top.  Rings the
 * device writes (command completions, EQs) are allocated before it is
 * enabled and freed after it is reset; interrupt handlers are requested
 * after the rings exist and freed before they go.
 */
static int qroce_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct qroce_dev *dev;
	int err;

	dev = ib_alloc_device(qroce_dev, ibdev);
	if (!dev)
		return -ENOMEM;
	qroce_dev_init(dev, pdev);

	/* Phase 1: the hardware. */
	err = qroce_pci_init(dev);
	if (err)
		goto err_free_dev;
	err = qroce_hw_reset(dev);
	if (err)
		goto err_pci;
	qroce_read_caps(dev);
	err = qroce_cmdq_init(dev);
	if (err)
		goto err_pci;
	err = qroce_eqs_alloc(dev);
	if (err)
		goto err_cmdq;
	err = qroce_hw_enable(dev);
	if (err)
		goto err_eqs_free;
	err = qroce_irqs_init(dev);
	if (err)
		goto err_reset;
	WRITE_ONCE(dev->cmdq.use_irq, true);
	err = qroce_eqs_create(dev);
	if (err)
		goto err_irqs;
	qroce_health_start(dev);

	/* Phase 2: the netdev, then the ib_device on top of it. */
	err = qroce_eth_init(dev);
	if (err)
		goto err_health;
	err = qroce_ib_register(dev);
	if (err)
		goto err_eth;
	dev_info(&pdev->dev, "qroce %pM: %s on %s\n", dev->mac,
		 dev_name(&dev->ibdev.dev), netdev_name(dev->netdev));
	return 0;

err_eth:
	qroce_eth_destroy(dev);
err_health:
	qroce_health_stop(dev);
	qroce_eqs_destroy(dev);
err_irqs:
	WRITE_ONCE(dev->cmdq.use_irq, false);
	qroce_irqs_destroy(dev);
err_reset:
	/* no command runs any more: a failure handler may still */
	flush_work(&dev->fatal_work);
	qroce_hw_reset(dev);
err_eqs_free:
	qroce_eqs_free(dev);
err_cmdq:
	qroce_cmdq_destroy(dev);
err_pci:
	qroce_pci_fini(dev);
err_free_dev:
	qroce_dev_free(dev);
	return err;
}

static void qroce_remove(struct pci_dev *pdev)
{
	struct qroce_dev *dev = pci_get_drvdata(pdev);

	WRITE_ONCE(dev->removing, true);
	qroce_ib_unregister(dev);
	qroce_eth_destroy(dev);
	qroce_health_stop(dev);
	qroce_eqs_destroy(dev);
	WRITE_ONCE(dev->cmdq.use_irq, false);
	qroce_irqs_destroy(dev);
	flush_work(&dev->fatal_work);
	qroce_hw_reset(dev);
	qroce_eqs_free(dev);
	qroce_cmdq_destroy(dev);
	qroce_pci_fini(dev);
	qroce_dev_free(dev);
}

static struct pci_driver qroce_pci_driver = {
	.name = QROCE_DRV_NAME,
	.id_table = qroce_pci_ids,
	.probe = qroce_probe,
	.remove = qroce_remove,
};

static int __init qroce_init(void)
{
	int err;

	qroce_recover_wq = alloc_workqueue("qroce_recover", WQ_UNBOUND, 1);
	if (!qroce_recover_wq)
		return -ENOMEM;
	err = pci_register_driver(&qroce_pci_driver);
	if (err)
		goto err_wq;
	return 0;

err_wq:
	destroy_workqueue(qroce_recover_wq);
	return err;
}

static void __exit qroce_exit(void)
{
	/*
	 * No recovery starts from here on; removing the devices flushes
	 * their failure handlers, the last that could queue one; a queued
	 * one then finds qroce_unloading set and does nothing.
	 */
	WRITE_ONCE(qroce_unloading, true);
	pci_unregister_driver(&qroce_pci_driver);
	destroy_workqueue(qroce_recover_wq);
}

module_init(qroce_init);
module_exit(qroce_exit);

MODULE_DESCRIPTION("qroce emulated RoCEv2 RDMA NIC");
MODULE_LICENSE("GPL");
MODULE_AUTHOR("qroce");
