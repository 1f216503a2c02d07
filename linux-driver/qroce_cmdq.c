// SPDX-License-Identifier: GPL-2.0-only
/*
 * qroce command queue: the driver's half of the control path.
 *
 * At most `size` commands are outstanding (a semaphore of credits).  Each
 * command carries a cookie that names its waiter; the completion with the
 * same cookie wakes it.  Until the interrupt is wired, waiters poll; after
 * that, vector 0 completes them.  A command that does not complete within
 * QROCE_CMD_TIMEOUT_MS marks the queue dead, and every later command fails
 * at once with -EIO.
 */
#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include "qroce.h"

struct qroce_cmd_wait {
	struct completion done;
	u32 cookie;
	u8 status;
	u32 out[6];
};

static int qroce_status_to_errno(u8 status)
{
	static const int map[] = {
		[QROCE_CMD_OK] = 0,
		[QROCE_CMD_ERR_OPCODE] = -EOPNOTSUPP,
		[QROCE_CMD_ERR_PARAM] = -EINVAL,
		[QROCE_CMD_ERR_HANDLE] = -ENOENT,
		[QROCE_CMD_ERR_NORES] = -ENOMEM,
		[QROCE_CMD_ERR_STATE] = -EINVAL,
		[QROCE_CMD_ERR_DMA] = -EFAULT,
		[QROCE_CMD_ERR_BUSY] = -EBUSY,
		[QROCE_CMD_ERR_INTERNAL] = -EIO,
	};

	if (status >= ARRAY_SIZE(map))
		return -EIO;
	return map[status];
}

int qroce_cmdq_init(struct qroce_dev *dev)
{
	struct qroce_cmdq *q = &dev->cmdq;
	struct device *dmadev = &dev->pdev->dev;

	q->size = 1u << QROCE_CMDQ_LOG2;
	q->ring = dma_alloc_coherent(dmadev, q->size * QROCE_CMD_SIZE,
				     &q->ring_dma, GFP_KERNEL);
	if (!q->ring)
		return -ENOMEM;
	q->comp = dma_alloc_coherent(dmadev, q->size * QROCE_CMD_COMP_SIZE,
				     &q->comp_dma, GFP_KERNEL);
	if (!q->comp)
		goto err_free_ring;
	q->wait = kcalloc(q->size, sizeof(*q->wait), GFP_KERNEL);
	if (!q->wait)
		goto err_free_comp;
	spin_lock_init(&q->lock);
	sema_init(&q->credits, q->size);
	q->pi = 0;
	q->ci = 0;
	q->dead = false;
	q->use_irq = false;

	qroce_wr64(dev, QROCE_REG_CMDQ_BASE_LO, q->ring_dma);
	qroce_wr64(dev, QROCE_REG_CMDQ_CQ_LO, q->comp_dma);
	qroce_wr(dev, QROCE_REG_CMDQ_LOG2, QROCE_CMDQ_LOG2);
	return 0;

err_free_comp:
	dma_free_coherent(dmadev, q->size * QROCE_CMD_COMP_SIZE, q->comp,
			  q->comp_dma);
err_free_ring:
	dma_free_coherent(dmadev, q->size * QROCE_CMD_SIZE, q->ring,
			  q->ring_dma);
	return -ENOMEM;
}

void qroce_cmdq_destroy(struct qroce_dev *dev)
{
	struct qroce_cmdq *q = &dev->cmdq;
	struct device *dmadev = &dev->pdev->dev;

	kfree(q->wait);
	dma_free_coherent(dmadev, q->size * QROCE_CMD_COMP_SIZE, q->comp,
			  q->comp_dma);
	dma_free_coherent(dmadev, q->size * QROCE_CMD_SIZE, q->ring,
			  q->ring_dma);
}

/* Consume completions; called from the vector 0 handler and by pollers. */
void qroce_cmdq_complete(struct qroce_dev *dev)
{
	struct qroce_cmdq *q = &dev->cmdq;
	unsigned long flags;

	spin_lock_irqsave(&q->lock, flags);
	for (;;) {
		u32 slot = q->ci & (q->size - 1);
		struct qroce_cmd_comp *c = &q->comp[slot];
		struct qroce_cmd_wait *w;

		if ((READ_ONCE(c->owner) & QROCE_OWNER_BIT) !=
		    qroce_owner_for(q->ci, QROCE_CMDQ_LOG2))
			break;
		dma_rmb();
		w = q->wait[slot];
		q->wait[slot] = NULL;
		q->ci++;
		if (!w || w->cookie != le32_to_cpu(c->cookie)) {
			dev_err_ratelimited(&dev->pdev->dev,
					    "command completion %u has an unknown cookie\n",
					    slot);
			continue;
		}
		w->status = c->status;
		memcpy(w->out, c->out, sizeof(w->out));
		complete(&w->done);
	}
	spin_unlock_irqrestore(&q->lock, flags);
}

/* Put @cmd on the ring with @w as its waiter; the caller holds a credit. */
static int qroce_cmd_post(struct qroce_dev *dev, struct qroce_cmd *cmd,
			  struct qroce_cmd_wait *w, u32 *slotp)
{
	struct qroce_cmdq *q = &dev->cmdq;
	unsigned long flags;
	u32 slot;

	init_completion(&w->done);
	spin_lock_irqsave(&q->lock, flags);
	if (q->dead) {
		spin_unlock_irqrestore(&q->lock, flags);
		up(&q->credits);
		return -EIO;
	}
	slot = q->pi & (q->size - 1);
	w->cookie = ++q->next_cookie;
	cmd->hdr.cookie = cpu_to_le32(w->cookie);
	q->wait[slot] = w;
	memcpy(&q->ring[slot], cmd, sizeof(*cmd));
	q->pi++;
	dma_wmb();
	qroce_wr(dev, QROCE_REG_CMDQ_PI, q->pi);
	spin_unlock_irqrestore(&q->lock, flags);
	*slotp = slot;
	return 0;
}

/* After waiting: give the credit back and return the command's result. */
static int qroce_cmd_finish(struct qroce_dev *dev, struct qroce_cmd *cmd,
			    struct qroce_cmd_wait *w, u32 slot, bool done,
			    u32 *out)
{
	struct qroce_cmdq *q = &dev->cmdq;
	unsigned long flags;
	int i;

	if (!done) {
		qroce_cmdq_complete(dev);
		spin_lock_irqsave(&q->lock, flags);
		done = try_wait_for_completion(&w->done);
		if (!done) {
			if (q->wait[slot] == w)
				q->wait[slot] = NULL;
			q->dead = true;
		}
		spin_unlock_irqrestore(&q->lock, flags);
	}
	if (!done) {
		dev_err(&dev->pdev->dev,
			"command 0x%x timed out; command queue is dead\n",
			cmd->hdr.opcode);
		return -EIO;
	}
	up(&q->credits);
	if (out)
		for (i = 0; i < 6; i++)
			out[i] = le32_to_cpu((__force __le32)w->out[i]);
	if (w->status != QROCE_CMD_OK)
		dev_dbg(&dev->pdev->dev, "command 0x%x: status %u\n",
			cmd->hdr.opcode, w->status);
	return qroce_status_to_errno(w->status);
}

int qroce_cmd_exec(struct qroce_dev *dev, struct qroce_cmd *cmd, u32 *out)
{
	struct qroce_cmdq *q = &dev->cmdq;
	struct qroce_cmd_wait w;
	unsigned long deadline;
	bool done;
	u32 slot;
	int err;

	if (READ_ONCE(q->dead))
		return -EIO;
	if (down_timeout(&q->credits, msecs_to_jiffies(QROCE_CMD_TIMEOUT_MS)))
		return -EBUSY;
	err = qroce_cmd_post(dev, cmd, &w, &slot);
	if (err)
		return err;

	deadline = jiffies + msecs_to_jiffies(QROCE_CMD_TIMEOUT_MS);
	if (READ_ONCE(q->use_irq)) {
		unsigned long tmo = msecs_to_jiffies(QROCE_CMD_TIMEOUT_MS);

		done = wait_for_completion_timeout(&w.done, tmo) != 0;
	} else {
		for (;;) {
			qroce_cmdq_complete(dev);
			done = try_wait_for_completion(&w.done);
			if (done || !time_before(jiffies, deadline))
				break;
			usleep_range(20, 100);
		}
	}
	return qroce_cmd_finish(dev, cmd, &w, slot, done, out);
}

/*
 * The same for callers that must not sleep (ib_cm creates and destroys
 * address handles in atomic context): a free credit or -EBUSY at once,
 * then the completion is polled for at most QROCE_CMD_ATOMIC_TIMEOUT_US.
 */
int qroce_cmd_exec_atomic(struct qroce_dev *dev, struct qroce_cmd *cmd,
			  u32 *out)
{
	struct qroce_cmdq *q = &dev->cmdq;
	struct qroce_cmd_wait w;
	bool done = false;
	u32 slot, us;
	int err;

	if (READ_ONCE(q->dead))
		return -EIO;
	if (down_trylock(&q->credits))
		return -EBUSY;
	err = qroce_cmd_post(dev, cmd, &w, &slot);
	if (err)
		return err;
	for (us = 0; us < QROCE_CMD_ATOMIC_TIMEOUT_US; us += 5) {
		qroce_cmdq_complete(dev);
		done = try_wait_for_completion(&w.done);
		if (done)
			break;
		udelay(5);
	}
	return qroce_cmd_finish(dev, cmd, &w, slot, done, out);
}
