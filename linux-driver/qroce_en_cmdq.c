// SPDX-License-Identifier: GPL-2.0-only
/*
 * qroce command queue: the driver's half of the control path.
 *
 * At most `size` commands are outstanding (a semaphore of credits).  Each
 * command carries a cookie that names its waiter; the completion with the
 * same cookie wakes it.  Until the interrupt is wired, waiters poll; after
 * that, vector 0 completes them.
 *
 * One queue serves the whole device: this driver's commands (EQ 0) and,
 * through qroce_core_ops, the RDMA driver's.
 *
 * A command that does not complete within QROCE_CMD_TIMEOUT_MS means the
 * device is gone: qroce_dev_fatal() marks the queue dead (core.dead),
 * fails every waiter, and has the device reset (qroce_en_main.c); every
 * later command fails at once with -EIO, and the RDMA driver's destroy
 * verbs then succeed without the device (qroce_destroyed() in
 * qroce_ctrl.c).  A command polled from atomic context gives up after
 * QROCE_CMD_ATOMIC_TIMEOUT_US without killing the queue: its slot is
 * orphaned, and its completion, when it comes, returns the credit (and an
 * address handle it created is destroyed, here, for as long as the
 * function is bound: the RDMA driver may come and go meanwhile).
 */
#include <linux/module.h>
#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include "qroce_en.h"

/*
 * The failure handler resets the device; RDMA memory reclaim (an ODP MMU
 * notifier, a dma-buf eviction) may wait for that reset, so it runs on a
 * queue with a rescuer (module init, qroce_en_main.c).
 */
struct workqueue_struct *qroce_fatal_wq;

struct qroce_cmd_wait {
	struct completion done;
	u32 cookie;
	u8 status;
	u32 out[6];
};

/* A polled command its caller stopped waiting for. */
struct qroce_cmd_orphan {
	u32 cookie;
	u8 opcode;
	bool set;
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

static void qroce_cmdq_gc_work(struct work_struct *work);

int qroce_cmdq_init(struct qroce_en *en)
{
	struct qroce_cmdq *q = &en->cmdq;
	struct device *dmadev = &en->core.pdev->dev;

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
	q->orphan = kcalloc(q->size, sizeof(*q->orphan), GFP_KERNEL);
	q->stale_ah = kcalloc(q->size, sizeof(*q->stale_ah), GFP_KERNEL);
	if (!q->orphan || !q->stale_ah)
		goto err_free_wait;
	q->nstale_ah = 0;
	q->gc_stopped = false;
	INIT_WORK(&q->gc_work, qroce_cmdq_gc_work);
	spin_lock_init(&q->lock);
	sema_init(&q->credits, q->size);
	q->pi = 0;
	q->ci = 0;
	en->core.dead = false;
	q->use_irq = false;

	qroce_wr64(&en->core, QROCE_REG_CMDQ_BASE_LO, q->ring_dma);
	qroce_wr64(&en->core, QROCE_REG_CMDQ_CQ_LO, q->comp_dma);
	qroce_wr(&en->core, QROCE_REG_CMDQ_LOG2, QROCE_CMDQ_LOG2);
	return 0;

err_free_wait:
	kfree(q->stale_ah);
	kfree(q->orphan);
	kfree(q->wait);
err_free_comp:
	dma_free_coherent(dmadev, q->size * QROCE_CMD_COMP_SIZE, q->comp,
			  q->comp_dma);
err_free_ring:
	dma_free_coherent(dmadev, q->size * QROCE_CMD_SIZE, q->ring,
			  q->ring_dma);
	return -ENOMEM;
}

void qroce_cmdq_destroy(struct qroce_en *en)
{
	struct qroce_cmdq *q = &en->cmdq;
	struct device *dmadev = &en->core.pdev->dev;

	kfree(q->stale_ah);
	kfree(q->orphan);
	kfree(q->wait);
	dma_free_coherent(dmadev, q->size * QROCE_CMD_COMP_SIZE, q->comp,
			  q->comp_dma);
	dma_free_coherent(dmadev, q->size * QROCE_CMD_SIZE, q->ring,
			  q->ring_dma);
}

/*
 * Address handles whose CREATE_AH completed after its caller gave up: the
 * device has them, nobody else knows them.  Destroyed here, in process
 * context.
 */
static void qroce_cmdq_gc_work(struct work_struct *work)
{
	struct qroce_cmdq *q = container_of(work, struct qroce_cmdq, gc_work);
	struct qroce_en *en = container_of(q, struct qroce_en, cmdq);
	unsigned long flags;
	u32 ahn;

	for (;;) {
		spin_lock_irqsave(&q->lock, flags);
		if (!q->nstale_ah) {
			spin_unlock_irqrestore(&q->lock, flags);
			return;
		}
		ahn = q->stale_ah[--q->nstale_ah];
		spin_unlock_irqrestore(&q->lock, flags);
		qroce_simple_cmd(en, QROCE_CMD_DESTROY_AH, ahn);
	}
}

/* No more orphan clean-up: remove, the RDMA driver is gone for good. */
void qroce_cmdq_stop_gc(struct qroce_en *en)
{
	struct qroce_cmdq *q = &en->cmdq;
	unsigned long flags;

	spin_lock_irqsave(&q->lock, flags);
	q->gc_stopped = true;
	spin_unlock_irqrestore(&q->lock, flags);
	cancel_work_sync(&q->gc_work);
}

/* The completion of an orphaned slot: the credit, and what it created. */
static void qroce_cmd_orphan_done(struct qroce_en *en, u32 slot,
				  const struct qroce_cmd_comp *c)
{
	struct qroce_cmdq *q = &en->cmdq;
	struct qroce_cmd_orphan *o = &q->orphan[slot];

	o->set = false;
	if (o->cookie != le32_to_cpu(c->cookie))
		dev_err_ratelimited(&en->core.pdev->dev,
				    "command completion %u has an unknown cookie\n",
				    slot);
	if (o->opcode == QROCE_CMD_CREATE_AH && c->status == QROCE_CMD_OK &&
	    !q->gc_stopped && q->nstale_ah < q->size) {
		q->stale_ah[q->nstale_ah++] = le32_to_cpu(c->out[0]);
		schedule_work(&q->gc_work);
	}
	up(&q->credits);
}

/* Consume completions; called from the vector 0 handler and by pollers. */
void qroce_cmdq_complete(struct qroce_en *en)
{
	struct qroce_cmdq *q = &en->cmdq;
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
		if (!w && q->orphan[slot].set) {
			qroce_cmd_orphan_done(en, slot, c);
			continue;
		}
		if (!w || w->cookie != le32_to_cpu(c->cookie)) {
			dev_err_ratelimited(&en->core.pdev->dev,
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
static int qroce_cmd_post(struct qroce_en *en, struct qroce_cmd *cmd,
			  struct qroce_cmd_wait *w, u32 *slotp)
{
	struct qroce_cmdq *q = &en->cmdq;
	unsigned long flags;
	u32 slot;

	init_completion(&w->done);
	spin_lock_irqsave(&q->lock, flags);
	if (en->core.dead) {
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
	qroce_wr(&en->core, QROCE_REG_CMDQ_PI, q->pi);
	spin_unlock_irqrestore(&q->lock, flags);
	*slotp = slot;
	return 0;
}

/*
 * The device stopped answering, reported FATAL, or lost events: no command
 * will complete again.  Fail every waiter now, refuse new commands, and have
 * the device reset and the RDMA driver told (qroce_fatal_work).  Any
 * context.
 */
void qroce_dev_fatal(struct qroce_en *en, const char *why)
{
	struct qroce_cmdq *q = &en->cmdq;
	struct qroce_cmd_wait *w;
	unsigned long flags;
	bool first;
	u32 i;

	spin_lock_irqsave(&q->lock, flags);
	first = !en->core.dead;
	WRITE_ONCE(en->core.dead, true);
	for (i = 0; i < q->size; i++) {
		w = q->wait[i];
		if (!w)
			continue;
		q->wait[i] = NULL;
		w->status = QROCE_CMD_ERR_INTERNAL;
		complete(&w->done);
	}
	spin_unlock_irqrestore(&q->lock, flags);
	if (first) {
		dev_err(&en->core.pdev->dev, "device failed (%s): resetting it\n",
			why);
		queue_work(qroce_fatal_wq, &en->fatal_work);
	}
}

/*
 * After waiting: give the credit back and return the command's result.  A
 * command that did not complete kills the queue, unless it was polled
 * (@polled): then its slot is orphaned and keeps the credit until the
 * device completes it.
 */
static int qroce_cmd_finish(struct qroce_en *en, struct qroce_cmd *cmd,
			    struct qroce_cmd_wait *w, u32 slot, bool done,
			    bool polled, u32 *out)
{
	struct qroce_cmdq *q = &en->cmdq;
	unsigned long flags;
	int i;

	if (!done) {
		qroce_cmdq_complete(en);
		spin_lock_irqsave(&q->lock, flags);
		done = try_wait_for_completion(&w->done);
		if (!done && q->wait[slot] == w) {
			q->wait[slot] = NULL;
			if (polled) {
				q->orphan[slot].cookie = w->cookie;
				q->orphan[slot].opcode = cmd->hdr.opcode;
				q->orphan[slot].set = true;
			}
		}
		spin_unlock_irqrestore(&q->lock, flags);
	}
	if (!done && polled) {
		dev_warn_ratelimited(&en->core.pdev->dev,
				     "polled command 0x%x did not complete in %u us\n",
				     cmd->hdr.opcode,
				     QROCE_CMD_ATOMIC_TIMEOUT_US);
		return -ETIMEDOUT;
	}
	if (!done) {
		dev_err(&en->core.pdev->dev, "command 0x%x timed out\n",
			cmd->hdr.opcode);
		qroce_dev_fatal(en, "command timeout");
		return -EIO;
	}
	up(&q->credits);
	if (out)
		for (i = 0; i < 6; i++)
			out[i] = le32_to_cpu((__force __le32)w->out[i]);
	if (w->status != QROCE_CMD_OK)
		dev_dbg(&en->core.pdev->dev, "command 0x%x: status %u\n",
			cmd->hdr.opcode, w->status);
	return qroce_status_to_errno(w->status);
}

int qroce_cmd_exec(struct qroce_en *en, struct qroce_cmd *cmd, u32 *out)
{
	struct qroce_cmdq *q = &en->cmdq;
	struct qroce_cmd_wait w;
	unsigned long deadline;
	bool done;
	u32 slot;
	int err;

	if (qroce_dead(en))
		return -EIO;
	if (down_timeout(&q->credits, msecs_to_jiffies(QROCE_CMD_TIMEOUT_MS)))
		return -EBUSY;
	err = qroce_cmd_post(en, cmd, &w, &slot);
	if (err)
		return err;

	deadline = jiffies + msecs_to_jiffies(QROCE_CMD_TIMEOUT_MS);
	if (READ_ONCE(q->use_irq)) {
		unsigned long tmo = msecs_to_jiffies(QROCE_CMD_TIMEOUT_MS);

		done = wait_for_completion_timeout(&w.done, tmo) != 0;
	} else {
		for (;;) {
			qroce_cmdq_complete(en);
			done = try_wait_for_completion(&w.done);
			if (done || !time_before(jiffies, deadline))
				break;
			usleep_range(20, 100);
		}
	}
	return qroce_cmd_finish(en, cmd, &w, slot, done, false, out);
}

/*
 * The same for callers that must not sleep (ib_cm creates and destroys
 * address handles in atomic context): a free credit or -EBUSY at once,
 * then the completion is polled for at most QROCE_CMD_ATOMIC_TIMEOUT_US.
 */
int qroce_cmd_exec_atomic(struct qroce_en *en, struct qroce_cmd *cmd,
			  u32 *out)
{
	struct qroce_cmdq *q = &en->cmdq;
	struct qroce_cmd_wait w;
	bool done = false;
	u32 slot, us;
	int err;

	if (qroce_dead(en))
		return -EIO;
	if (down_trylock(&q->credits))
		return -EBUSY;
	err = qroce_cmd_post(en, cmd, &w, &slot);
	if (err)
		return err;
	for (us = 0; us < QROCE_CMD_ATOMIC_TIMEOUT_US; us += 5) {
		qroce_cmdq_complete(en);
		done = try_wait_for_completion(&w.done);
		if (done)
			break;
		udelay(5);
	}
	return qroce_cmd_finish(en, cmd, &w, slot, done, true, out);
}

/* A command whose only input is an object handle. */
int qroce_simple_cmd(struct qroce_en *en, u8 opcode, u32 handle)
{
	struct qroce_cmd cmd = {};

	cmd.hdr.opcode = opcode;
	cmd.handle.handle = cpu_to_le32(handle);
	return qroce_cmd_exec(en, &cmd, NULL);
}

/*
 * The module's identity is with its first file, so that the module links
 * whichever of its files a build has.
 */
MODULE_DESCRIPTION("qroce emulated RoCEv2 NIC: Ethernet and PCI core");
MODULE_LICENSE("GPL");
MODULE_AUTHOR("qroce");
