// SPDX-License-Identifier: GPL-2.0-only
/*
 * qroce event queues: EQ 0 carries async events (vector 0, shared with
 * command completions); EQ 1.. carry completion events (vectors 2..).
 */
#include <linux/dma-mapping.h>
#include "qroce.h"

static int qroce_eq_create(struct qroce_dev *dev, struct qroce_eq *eq,
			   u32 eqn, u32 log2)
{
	size_t size = sizeof(struct qroce_eqe) << log2;
	struct qroce_cmd cmd = {};
	int err;

	eq->ring = dma_alloc_coherent(&dev->pdev->dev, size, &eq->dma,
				      GFP_KERNEL);
	if (!eq->ring)
		return -ENOMEM;
	eq->dev = dev;
	eq->log2 = log2;
	eq->ci = 0;
	eq->eqn = eqn;
	cmd.hdr.opcode = QROCE_CMD_CREATE_EQ;
	cmd.create_eq.eqn = cpu_to_le32(eqn);
	cmd.create_eq.log2_entries = log2;
	cmd.create_eq.ring.addr = cpu_to_le64(eq->dma);
	cmd.create_eq.ring.npages = cpu_to_le32(DIV_ROUND_UP(size, PAGE_SIZE));
	cmd.create_eq.ring.page_shift = PAGE_SHIFT;
	cmd.create_eq.ring.level = QROCE_BT_CONTIG;
	err = qroce_cmd_exec(dev, &cmd, NULL);
	if (err) {
		dma_free_coherent(&dev->pdev->dev, size, eq->ring, eq->dma);
		eq->ring = NULL;
		return err;
	}
	eq->created = true;
	return 0;
}

static void qroce_eq_destroy(struct qroce_dev *dev, struct qroce_eq *eq)
{
	struct qroce_cmd cmd = {};

	if (!eq->ring)
		return;
	if (eq->created) {
		cmd.hdr.opcode = QROCE_CMD_DESTROY_EQ;
		cmd.handle.handle = cpu_to_le32(eq->eqn);
		qroce_cmd_exec(dev, &cmd, NULL);
	}
	dma_free_coherent(&dev->pdev->dev, sizeof(struct qroce_eqe) << eq->log2,
			  eq->ring, eq->dma);
	eq->ring = NULL;
	eq->created = false;
}

int qroce_eqs_init(struct qroce_dev *dev)
{
	int i, err;

	err = qroce_eq_create(dev, &dev->aeq, QROCE_EQN_ASYNC, QROCE_AEQ_LOG2);
	if (err)
		return err;
	for (i = 0; i < QROCE_NUM_CEQS; i++) {
		err = qroce_eq_create(dev, &dev->ceq[i], i + 1, QROCE_CEQ_LOG2);
		if (err)
			goto err_destroy;
	}
	return 0;

err_destroy:
	while (--i >= 0)
		qroce_eq_destroy(dev, &dev->ceq[i]);
	qroce_eq_destroy(dev, &dev->aeq);
	return err;
}

void qroce_eqs_destroy(struct qroce_dev *dev)
{
	int i;

	for (i = 0; i < QROCE_NUM_CEQS; i++)
		qroce_eq_destroy(dev, &dev->ceq[i]);
	qroce_eq_destroy(dev, &dev->aeq);
}

/* Return the next valid EQE or NULL. */
static struct qroce_eqe *qroce_eq_next(struct qroce_eq *eq)
{
	struct qroce_eqe *e = &eq->ring[eq->ci & ((1u << eq->log2) - 1)];

	if ((READ_ONCE(e->owner) & QROCE_OWNER_BIT) !=
	    qroce_owner_for(eq->ci, eq->log2))
		return NULL;
	dma_rmb();
	return e;
}

static void qroce_eq_poll(struct qroce_dev *dev, struct qroce_eq *eq,
			  bool async)
{
	struct qroce_eqe *e;
	int n = 0;

	if (!eq->created)
		return;
	while ((e = qroce_eq_next(eq))) {
		if (async)
			qroce_handle_async(dev, e);
		else if (e->type == QROCE_EQE_COMP)
			qroce_handle_comp(dev, le32_to_cpu(e->handle));
		eq->ci++;
		n++;
	}
	if (n)
		qroce_wr(dev, QROCE_REG_EQ_CI(eq->eqn), eq->ci);
}

irqreturn_t qroce_irq_cmd(int irq, void *data)
{
	struct qroce_dev *dev = data;

	qroce_cmdq_complete(dev);
	qroce_eq_poll(dev, &dev->aeq, true);
	return IRQ_HANDLED;
}

irqreturn_t qroce_irq_comp(int irq, void *data)
{
	struct qroce_eq *eq = data;

	qroce_eq_poll(eq->dev, eq, false);
	return IRQ_HANDLED;
}
