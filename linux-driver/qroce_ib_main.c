// SPDX-License-Identifier: GPL-2.0-only
/*
 * qroce_ib: the auxiliary driver.  It binds to the "qroce_en.rdma.<n>"
 * device the Ethernet driver adds for each qroce PCI function, creates
 * the completion EQs on the vectors handed to it and registers the
 * ib_device qroce_<n> on the function's netdev; remove undoes it in
 * reverse order, leaving the netdev running.  Loaded before qroce_en, it
 * binds when the device appears.
 */
#include <linux/dma-mapping.h>
#include <linux/module.h>
#include <net/addrconf.h>
#include "qroce_verbs.h"

/* ------------------------------------------------------------------ */
/* Completion EQs                                                      */
/* ------------------------------------------------------------------ */

static irqreturn_t qroce_irq_comp(int irq, void *data)
{
	struct qroce_ceq *eq = data;
	struct qroce_dev *dev = eq->dev;
	u32 mask = (1u << QROCE_CEQ_LOG2) - 1;
	struct qroce_eqe *e;
	int n = 0;

	if (!READ_ONCE(eq->created))
		return IRQ_HANDLED;
	for (;;) {
		e = &eq->ring[eq->ci & mask];
		if ((READ_ONCE(e->owner) & QROCE_OWNER_BIT) !=
		    qroce_owner_for(eq->ci, QROCE_CEQ_LOG2))
			break;
		dma_rmb();
		if (e->type == QROCE_EQE_EQ_OVERFLOW)
			/* lost events: waiters could hang, the state is unknown */
			dev->core->ops->dev_fatal(dev->core,
						  "completion EQ overflow");
		else if (e->type == QROCE_EQE_COMP)
			qroce_handle_comp(dev, le32_to_cpu(e->handle));
		eq->ci++;
		n++;
	}
	if (n)
		qroce_wr(dev->core, QROCE_REG_EQ_CI(eq->eqn), eq->ci);
	return IRQ_HANDLED;
}

/*
 * The ring is zeroed (no entry valid) before the interrupt is requested,
 * the EQ created after; the handler reads the ring only while the EQ is
 * created, and its interrupt is freed before the ring.
 */
static int qroce_ceq_create(struct qroce_dev *dev, unsigned int i)
{
	struct qroce_ceq *eq = &dev->ceq[i];
	struct qroce_cmd cmd = {};
	int err;

	eq->dev = dev;
	eq->eqn = 1 + i;
	eq->ci = 0;
	eq->ring = dma_alloc_coherent(&dev->pdev->dev, QROCE_CEQ_BYTES,
				      &eq->dma, GFP_KERNEL);
	if (!eq->ring)
		return -ENOMEM;
	err = request_irq(dev->core->comp_irq[i], qroce_irq_comp, 0,
			  "qroce-comp", eq);
	if (err)
		goto err_free;
	qroce_create_eq_cmd(&cmd, eq->eqn, QROCE_CEQ_LOG2, eq->dma);
	err = qroce_cmd_exec(dev, &cmd, NULL);
	if (err)
		goto err_irq;
	WRITE_ONCE(eq->created, true);
	return 0;

err_irq:
	free_irq(dev->core->comp_irq[i], eq);
err_free:
	dma_free_coherent(&dev->pdev->dev, QROCE_CEQ_BYTES, eq->ring, eq->dma);
	eq->ring = NULL;
	return err;
}

/*
 * After DESTROY_EQ the device writes the ring no more.  If the command
 * failed, the ring is freed only once the device has been reset: a dead
 * device is being reset anyway; a live one that refuses (a CQ still on
 * the EQ) is in a state nobody knows, and is failed for recovery.
 */
static void qroce_ceq_destroy(struct qroce_dev *dev, unsigned int i)
{
	struct qroce_ceq *eq = &dev->ceq[i];
	int err;

	WRITE_ONCE(eq->created, false);
	err = qroce_simple_cmd(dev, QROCE_CMD_DESTROY_EQ, eq->eqn);
	if (err && !qroce_dead(dev))
		dev->core->ops->dev_fatal(dev->core,
					  "completion EQ not destroyed");
	free_irq(dev->core->comp_irq[i], eq);
	qroce_destroyed(dev, err, true);
	dma_free_coherent(&dev->pdev->dev, QROCE_CEQ_BYTES, eq->ring, eq->dma);
	eq->ring = NULL;
}

static int qroce_ceqs_create(struct qroce_dev *dev)
{
	int i, err;

	for (i = 0; i < QROCE_NUM_CEQS; i++) {
		err = qroce_ceq_create(dev, i);
		if (err)
			goto err_destroy;
	}
	return 0;

err_destroy:
	while (--i >= 0)
		qroce_ceq_destroy(dev, i);
	return err;
}

static void qroce_ceqs_destroy(struct qroce_dev *dev)
{
	int i;

	for (i = QROCE_NUM_CEQS - 1; i >= 0; i--)
		qroce_ceq_destroy(dev, i);
}

/* ------------------------------------------------------------------ */
/* What the Ethernet driver tells: EQ 0's events, the device's failure  */
/* ------------------------------------------------------------------ */

static void qroce_ulp_async_event(struct qroce_ulp *ulp,
				  const struct qroce_eqe *e)
{
	qroce_handle_async(container_of(ulp, struct qroce_dev, ulp), e);
}

/*
 * The device failed and has been reset: wake every kernel CQ's consumer
 * (their outstanding work requests complete with flush errors, see
 * qroce_poll_cq), and tell ib_core, which passes IB_EVENT_DEVICE_FATAL to
 * every ULP and user context.  The Ethernet driver then recovers the
 * function, which unbinds this driver and binds it again.
 */
static void qroce_ulp_dev_fatal(struct qroce_ulp *ulp)
{
	struct qroce_dev *dev = container_of(ulp, struct qroce_dev, ulp);
	struct ib_event ev = {
		.device = &dev->ibdev,
		.event = IB_EVENT_DEVICE_FATAL,
		.element.port_num = 1,
	};

	qroce_kick_cqs(dev);
	if (READ_ONCE(dev->ib_registered))
		ib_dispatch_event(&ev);
}

static const struct qroce_ulp_ops qroce_ulp_ops = {
	.async_event = qroce_ulp_async_event,
	.dev_fatal = qroce_ulp_dev_fatal,
};

/* ------------------------------------------------------------------ */
/* The ib_device                                                       */
/* ------------------------------------------------------------------ */

static int qroce_ib_register(struct qroce_dev *dev)
{
	struct ib_device *ibdev = &dev->ibdev;
	int err, i;

	for (i = 0; i < QROCE_CNT_NUM; i++)
		dev->stat_descs[i].name = dev->core->stat_names[i];
	ibdev->node_type = RDMA_NODE_IB_CA;
	ibdev->phys_port_cnt = 1;
	ibdev->num_comp_vectors = QROCE_NUM_CEQS;
	strscpy(ibdev->node_desc, "qroce", sizeof(ibdev->node_desc));
	addrconf_addr_eui48((u8 *)&ibdev->node_guid, dev->caps.mac);
	ib_set_device_ops(ibdev, &qroce_dev_ops);
	ib_set_device_ops(ibdev, &qroce_cq_ops);
	ib_set_device_ops(ibdev, &qroce_qp_ops);
	ib_set_device_ops(ibdev, &qroce_srq_ops);
	ib_set_device_ops(ibdev, &qroce_odp_ops);
	ib_set_device_ops(ibdev, &qroce_restrack_ops);
	ibdev->driver_def = qroce_ib_defs;
	err = qroce_dm_init(dev);
	if (err)
		return err;
	err = ib_device_set_netdev(ibdev, dev->netdev, 1);
	if (err)
		goto err_dm;
	dma_set_max_seg_size(&dev->pdev->dev, UINT_MAX);
	/*
	 * under the PCI function in sysfs, as a hardware device sits:
	 * rdma-core's udev rules name it by its parent's bus address
	 */
	ibdev->dev.parent = &dev->pdev->dev;
	err = ib_register_device(ibdev, "qroce_%d", &dev->pdev->dev);
	if (err)
		goto err_netdev;
	WRITE_ONCE(dev->ib_registered, true);
	return 0;

err_netdev:
	/* the port holds a reference that unregister_netdev would wait for */
	ib_device_set_netdev(ibdev, NULL, 1);
err_dm:
	qroce_dm_fini(dev);
	return err;
}

/*
 * ib_core destroys every object first, a user context's too (its process
 * keeps nothing of the device: disassociate_ucontext).  An address handle
 * a timed-out atomic command left in the device is the Ethernet driver's
 * to destroy (qroce_en_cmdq.c).
 */
static void qroce_ib_unregister(struct qroce_dev *dev)
{
	WRITE_ONCE(dev->ib_registered, false);
	ib_unregister_device(&dev->ibdev);
	ib_device_set_netdev(&dev->ibdev, NULL, 1);
	qroce_dm_fini(dev);
}

/* ------------------------------------------------------------------ */
/* Probe and remove                                                    */
/* ------------------------------------------------------------------ */

static struct qroce_dev *qroce_dev_alloc(struct qroce_core *core)
{
	struct qroce_dev *dev;

	dev = ib_alloc_device(qroce_dev, ibdev);
	if (!dev)
		return NULL;
	dev->core = core;
	dev->pdev = core->pdev;
	dev->netdev = core->netdev;
	dev->caps = core->caps;
	dev->ulp.ops = &qroce_ulp_ops;
	ida_init(&dev->uar_ida);
	xa_init_flags(&dev->qp_xa, XA_FLAGS_LOCK_IRQ);
	xa_init_flags(&dev->cq_xa, XA_FLAGS_LOCK_IRQ);
	xa_init_flags(&dev->srq_xa, XA_FLAGS_LOCK_IRQ);
	xa_init(&dev->odp_xa);
	mutex_init(&dev->qp_mutex);
	/* page faults are resolved here; reclaim may wait for them */
	dev->odp_wq = alloc_workqueue("qroce_odp", WQ_UNBOUND | WQ_MEM_RECLAIM,
				      0);
	if (!dev->odp_wq) {
		ib_dealloc_device(&dev->ibdev);
		return NULL;
	}
	return dev;
}

static void qroce_dev_free(struct qroce_dev *dev)
{
	ida_destroy(&dev->uar_ida);
	xa_destroy(&dev->qp_xa);
	xa_destroy(&dev->cq_xa);
	xa_destroy(&dev->srq_xa);
	xa_destroy(&dev->odp_xa);
	destroy_workqueue(dev->odp_wq);
	mutex_destroy(&dev->qp_mutex);
	ib_dealloc_device(&dev->ibdev);
}

/*
 * EQ 0's events come from the ulp registration on; they need nothing but
 * the object tables, empty until the ib_device is registered.  Every step
 * is undone by the label of the same name, in reverse order, and remove
 * is the same unwinding from the top.
 */
static int qroce_ib_probe(struct auxiliary_device *adev,
			  const struct auxiliary_device_id *id)
{
	struct qroce_core *core = qroce_aux_core(adev);
	struct qroce_dev *dev;
	int err;

	dev = qroce_dev_alloc(core);
	if (!dev)
		return -ENOMEM;
	auxiliary_set_drvdata(adev, dev);
	core->ops->register_ulp(core, &dev->ulp);
	err = qroce_ceqs_create(dev);
	if (err)
		goto err_ulp;
	err = qroce_ib_register(dev);
	if (err)
		goto err_ceqs;
	dev_info(&adev->dev, "%s on %s\n", dev_name(&dev->ibdev.dev),
		 netdev_name(dev->netdev));
	return 0;

err_ceqs:
	qroce_ceqs_destroy(dev);
err_ulp:
	core->ops->unregister_ulp(core);
	qroce_dev_free(dev);
	return err;
}

static void qroce_ib_remove(struct auxiliary_device *adev)
{
	struct qroce_dev *dev = auxiliary_get_drvdata(adev);
	struct qroce_core *core = dev->core;

	qroce_ib_unregister(dev);
	qroce_ceqs_destroy(dev);
	core->ops->unregister_ulp(core);
	qroce_dev_free(dev);
}

static const struct auxiliary_device_id qroce_ib_id_table[] = {
	{ .name = "qroce_en." QROCE_AUX_RDMA },
	{ }
};
MODULE_DEVICE_TABLE(auxiliary, qroce_ib_id_table);

static struct auxiliary_driver qroce_ib_driver = {
	.probe = qroce_ib_probe,
	.remove = qroce_ib_remove,
	.id_table = qroce_ib_id_table,
};
module_auxiliary_driver(qroce_ib_driver);
