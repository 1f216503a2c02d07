// SPDX-License-Identifier: GPL-2.0-only
/*
 * qroce_en: EQ 0, the async event queue, on vector 0 with the command
 * completions.  Its events are the RDMA driver's (QP, CQ, SRQ and port
 * events), passed on to the one bound, if any; an overflow is the
 * device's failure.  The completion EQs 1.. are the RDMA driver's own.
 */
#include <linux/dma-mapping.h>
#include "qroce_en.h"

/*
 * The ring is allocated before the device is enabled and vector 0 is
 * requested, and freed only after the interrupt is freed and the device
 * is reset: the handler never reads a freed ring, and the device never
 * writes one.  CREATE_EQ and DESTROY_EQ run in between.
 */
int qroce_aeq_alloc(struct qroce_en *en)
{
	struct qroce_eq *eq = &en->aeq;

	eq->ring = dma_alloc_coherent(&en->core.pdev->dev,
				      sizeof(struct qroce_eqe) << QROCE_AEQ_LOG2,
				      &eq->dma, GFP_KERNEL);
	if (!eq->ring)
		return -ENOMEM;
	eq->log2 = QROCE_AEQ_LOG2;
	eq->ci = 0;
	eq->created = false;
	return 0;
}

void qroce_aeq_free(struct qroce_en *en)
{
	struct qroce_eq *eq = &en->aeq;

	dma_free_coherent(&en->core.pdev->dev,
			  sizeof(struct qroce_eqe) << eq->log2, eq->ring,
			  eq->dma);
	eq->ring = NULL;
}

int qroce_aeq_create(struct qroce_en *en)
{
	struct qroce_eq *eq = &en->aeq;
	struct qroce_cmd cmd = {};
	int err;

	memset(eq->ring, 0, sizeof(struct qroce_eqe) << eq->log2);
	eq->ci = 0;
	qroce_create_eq_cmd(&cmd, QROCE_EQN_ASYNC, eq->log2, eq->dma);
	err = qroce_cmd_exec(en, &cmd, NULL);
	if (err)
		return err;
	WRITE_ONCE(eq->created, true);
	return 0;
}

void qroce_aeq_destroy(struct qroce_en *en)
{
	if (!en->aeq.created)
		return;
	WRITE_ONCE(en->aeq.created, false);
	qroce_simple_cmd(en, QROCE_CMD_DESTROY_EQ, QROCE_EQN_ASYNC);
}

static void qroce_aeq_poll(struct qroce_en *en)
{
	struct qroce_eq *eq = &en->aeq;
	struct qroce_eqe *e;
	int n = 0;

	if (!READ_ONCE(eq->created))
		return;
	for (;;) {
		e = &eq->ring[eq->ci & ((1u << eq->log2) - 1)];
		if ((READ_ONCE(e->owner) & QROCE_OWNER_BIT) !=
		    qroce_owner_for(eq->ci, eq->log2))
			break;
		dma_rmb();
		if (e->type == QROCE_EQE_EQ_OVERFLOW)
			/* lost events: waiters could hang, the state is unknown */
			qroce_dev_fatal(en, "event queue overflow");
		else
			qroce_ulp_async(en, e);
		eq->ci++;
		n++;
	}
	if (n)
		qroce_wr(&en->core, QROCE_REG_EQ_CI(QROCE_EQN_ASYNC), eq->ci);
}

irqreturn_t qroce_irq_cmd(int irq, void *data)
{
	struct qroce_en *en = data;

	qroce_cmdq_complete(en);
	qroce_aeq_poll(en);
	return IRQ_HANDLED;
}
