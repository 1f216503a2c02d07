// SPDX-License-Identifier: GPL-2.0-only
/*
 * qroce event queues: EQ 0 carries async events (vector 0, shared with
 * command completions); EQ 1.. carry completion events (vectors 2..).
 */
#include <linux/dma-mapping.h>
#include "qroce.h"

/*
 * EQ rings are allocated before the device is enabled and its interrupts
 * are requested, and freed only after the interrupts are freed and the
 * device is reset: a handler never reads a freed ring, and the device never
 * writes one.  CREATE_EQ and DESTROY_EQ run in between.
 */
static int qroce_eq_alloc(struct qroce_dev *dev, struct qroce_eq *eq, u32 eqn,
			  u32 log2)
{
	eq->ring = dma_alloc_coherent(&dev->pdev->dev,
				      sizeof(struct qroce_eqe) << log2,
				      &eq->dma, GFP_KERNEL);
	if (!eq->ring)
		return -ENOMEM;
	eq->dev = dev;
	eq->log2 = log2;
	eq->ci = 0;
	eq->eqn = eqn;
	eq->created = false;
	return 0;
}

static void qroce_eq_free(struct qroce_dev *dev, struct qroce_eq *eq)
{
	if (!eq->ring)
		return;
	dma_free_coherent(&dev->pdev->dev, sizeof(struct qroce_eqe) << eq->log2,
			  eq->ring, eq->dma);
	eq->ring = NULL;
}

int qroce_eqs_alloc(struct qroce_dev *dev)
{
	int i, err;

	err = qroce_eq_alloc(dev, &dev->aeq, QROCE_EQN_ASYNC, QROCE_AEQ_LOG2);
	if (err)
		return err;
	for (i = 0; i < QROCE_NUM_CEQS; i++) {
		err = qroce_eq_alloc(dev, &dev->ceq[i], i + 1, QROCE_CEQ_LOG2);
		if (err)
			goto err_free;
	}
	return 0;

err_free:
	while (--i >= 0)
		qroce_eq_free(dev, &dev->ceq[i]);
	qroce_eq_free(dev, &dev->aeq);
	return err;
}

void qroce_eqs_free(struct qroce_dev *dev)
{
	int i;

	for (i = QROCE_NUM_CEQS - 1; i >= 0; i--)
		qroce_eq_free(dev, &dev->ceq[i]);
	qroce_eq_free(dev, &dev->aeq);
}

static int qroce_eq_create(struct qroce_dev *dev, struct qroce_eq *eq)
{
	size_t size = sizeof(struct qroce_eqe) << eq->log2;
	struct qroce_cmd cmd = {};
	int err;

	memset(eq->ring, 0, size);
	eq->ci = 0;
	cmd.hdr.opcode = QROCE_CMD_CREATE_EQ;
	cmd.create_eq.eqn = cpu_to_le32(eq->eqn);
	cmd.create_eq.log2_entries = eq->log2;
	cmd.create_eq.ring.addr = cpu_to_le64(eq->dma);
	cmd.create_eq.ring.npages = cpu_to_le32(DIV_ROUND_UP(size, PAGE_SIZE));
	cmd.create_eq.ring.page_shift = PAGE_SHIFT;
	cmd.create_eq.ring.level = QROCE_BT_CONTIG;
	err = qroce_cmd_exec(dev, &cmd, NULL);
	if (err)
		return err;
	WRITE_ONCE(eq->created, true);
	return 0;
}

static void qroce_eq_destroy(struct qroce_dev *dev, struct qroce_eq *eq)
{
	if (!eq->created)
		return;
	WRITE_ONCE(eq->created, false);
	qroce_simple_cmd(dev, QROCE_CMD_DESTROY_EQ, eq->eqn);
}

int qroce_eqs_create(struct qroce_dev *dev)
{
	int i, err;

	err = qroce_eq_create(dev, &dev->aeq);
	if (err)
		return err;
	for (i = 0; i < QROCE_NUM_CEQS; i++) {
		err = qroce_eq_create(dev, &dev->ceq[i]);
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

	for (i = QROCE_NUM_CEQS - 1; i >= 0; i--)
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

	if (!READ_ONCE(eq->created))
		return;
	while ((e = qroce_eq_next(eq))) {
		if (e->type == QROCE_EQE_EQ_OVERFLOW)
			/* lost events: waiters could hang, the state is unknown */
			qroce_dev_fatal(dev, "event queue overflow");
		else if (async)
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
