// SPDX-License-Identifier: GPL-2.0-only
/*
 * qroce_en: the RDMA function.  For each PCI function this driver adds an
 * auxiliary device "qroce_en.rdma.<n>" carrying its struct qroce_core;
 * the RDMA driver (qroce_ib.ko) binds to it, calls in through
 * qroce_core_ops and gets EQ 0's events through the struct qroce_ulp it
 * registers (qroce_core.h has the rules).  Neither module links against
 * the other, so either loads and unloads first.
 */
#include <linux/idr.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include "qroce_en.h"

static DEFINE_IDA(qroce_aux_ida);

static int qroce_op_cmd_exec(struct qroce_core *core, struct qroce_cmd *cmd,
			     u32 *out)
{
	return qroce_cmd_exec(to_qen(core), cmd, out);
}

static int qroce_op_cmd_exec_atomic(struct qroce_core *core,
				    struct qroce_cmd *cmd, u32 *out)
{
	return qroce_cmd_exec_atomic(to_qen(core), cmd, out);
}

static void qroce_op_dev_fatal(struct qroce_core *core, const char *why)
{
	qroce_dev_fatal(to_qen(core), why);
}

static void qroce_op_stats_read(struct qroce_core *core, u64 *val)
{
	qroce_stats_read(to_qen(core), val);
}

static void qroce_op_register_ulp(struct qroce_core *core,
				  struct qroce_ulp *ulp)
{
	rcu_assign_pointer(to_qen(core)->ulp, ulp);
}

/* Callbacks run under rcu_read_lock(): none runs once this returns. */
static void qroce_op_unregister_ulp(struct qroce_core *core)
{
	RCU_INIT_POINTER(to_qen(core)->ulp, NULL);
	synchronize_rcu();
}

static const struct qroce_core_ops qroce_core_ops = {
	.cmd_exec = qroce_op_cmd_exec,
	.cmd_exec_atomic = qroce_op_cmd_exec_atomic,
	.dev_fatal = qroce_op_dev_fatal,
	.stats_read = qroce_op_stats_read,
	.register_ulp = qroce_op_register_ulp,
	.unregister_ulp = qroce_op_unregister_ulp,
};

/* An event of EQ 0 (hard interrupt): the RDMA driver's, if one is bound. */
void qroce_ulp_async(struct qroce_en *en, const struct qroce_eqe *e)
{
	struct qroce_ulp *ulp;

	rcu_read_lock();
	ulp = rcu_dereference(en->ulp);
	if (ulp)
		ulp->ops->async_event(ulp, e);
	rcu_read_unlock();
}

/* The device failed and has been reset (qroce_fatal_work). */
void qroce_ulp_fatal(struct qroce_en *en)
{
	struct qroce_ulp *ulp;

	rcu_read_lock();
	ulp = rcu_dereference(en->ulp);
	if (ulp)
		ulp->ops->dev_fatal(ulp);
	rcu_read_unlock();
}

static void qroce_aux_release(struct device *dev)
{
	kfree(container_of(dev, struct qroce_aux_dev, adev.dev));
}

/*
 * The auxiliary device, a child of the PCI function.  Once it is added the
 * RDMA driver may bind at any time (at once, within this call, if it is
 * loaded), so the core it carries must be complete: the netdev is
 * registered before.
 */
int qroce_aux_add(struct qroce_en *en)
{
	struct qroce_aux_dev *aux;
	int err;

	en->core.ops = &qroce_core_ops;
	en->core.stat_names = qroce_stat_names;
	en->aux_id = ida_alloc(&qroce_aux_ida, GFP_KERNEL);
	if (en->aux_id < 0)
		return en->aux_id;
	aux = kzalloc_obj(*aux, GFP_KERNEL);
	if (!aux) {
		err = -ENOMEM;
		goto err_ida;
	}
	aux->core = &en->core;
	aux->adev.name = QROCE_AUX_RDMA;
	aux->adev.id = en->aux_id;
	aux->adev.dev.parent = qroce_dmadev(en);
	aux->adev.dev.release = qroce_aux_release;
	err = auxiliary_device_init(&aux->adev);
	if (err)
		goto err_free;
	err = auxiliary_device_add(&aux->adev);
	if (err)
		goto err_uninit;
	en->aux = aux;
	return 0;

err_uninit:
	/* the release function frees it */
	auxiliary_device_uninit(&aux->adev);
	goto err_ida;
err_free:
	kfree(aux);
err_ida:
	ida_free(&qroce_aux_ida, en->aux_id);
	return err;
}

/*
 * Delete the auxiliary device: the RDMA driver, if bound, is unbound
 * within this call (its ib_device unregistered, its EQs destroyed, its
 * ulp unregistered), so nothing of it is left when this returns.
 */
void qroce_aux_del(struct qroce_en *en)
{
	auxiliary_device_delete(&en->aux->adev);
	auxiliary_device_uninit(&en->aux->adev);
	en->aux = NULL;
	ida_free(&qroce_aux_ida, en->aux_id);
}
