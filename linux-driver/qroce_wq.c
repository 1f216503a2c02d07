// SPDX-License-Identifier: GPL-2.0-only
/*
 * qroce work queues: what the QP, SRQ and CQ files share below them, so
 * that none of those three calls another in a circle: the WQE slot and
 * SGE writers of the kernel post paths, posting receive WQEs into an RQ
 * or SRQ ring, and retiring SRQ WQEs as their CQEs are polled.
 */
#include "qroce_verbs.h"

/* The WQE slot for the next post on @wq. */
void *qroce_wq_slot(struct qroce_wq *wq)
{
	return wq->ring.va + ((wq->pi & ((1u << wq->log2) - 1)) << wq->shift);
}

void qroce_put_sges(struct qroce_sge *sge, const struct ib_sge *sg, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		sge[i].addr = cpu_to_le64(sg[i].addr);
		sge[i].length = cpu_to_le32(sg[i].length);
		sge[i].lkey = cpu_to_le32(sg[i].lkey);
	}
}

/*
 * Write receive WQEs for @wr on @wq (of a QP's RQ or an SRQ) and ring
 * doorbell @db for object @obj; the caller holds the queue's lock.
 */
int qroce_post_recv_wq(struct qroce_dev *dev, struct qroce_wq *wq,
		       u32 max_sge, u32 db, u32 obj,
		       const struct ib_recv_wr *wr,
		       const struct ib_recv_wr **bad)
{
	int err = 0;

	for (; wr; wr = wr->next) {
		struct qroce_recv_wqe *w;

		if (wq->pi - wq->ci >= (1u << wq->log2)) {
			err = -ENOMEM;
			break;
		}
		if (wr->num_sge > max_sge) {
			err = -EINVAL;
			break;
		}
		w = qroce_wq_slot(wq);
		memset(w, 0, sizeof(*w));
		w->num_sge = wr->num_sge;
		qroce_put_sges((struct qroce_sge *)(w + 1), wr->sg_list,
			       wr->num_sge);
		wq->wrid[wq->pi & ((1u << wq->log2) - 1)] = wr->wr_id;
		wq->pi++;
	}
	if (err)
		*bad = wr;
	dma_wmb();
	qroce_db_ring(dev, db, obj, wq->pi);
	return err;
}

/*
 * The CQE of SRQ WQE @idx was polled: its wr_id, and free the slots that
 * are now polled in order.  Nonzero if @idx is not outstanding.
 */
int qroce_srq_retire(struct qroce_srq *srq, u32 idx, u64 *wr_id)
{
	struct qroce_wq *wq = &srq->wq;
	unsigned long flags;
	int err = 0;
	u32 mask;

	spin_lock_irqsave(&srq->lock, flags);
	mask = (1u << wq->log2) - 1;	/* a resize may change it */
	if (idx - wq->ci >= wq->pi - wq->ci || srq->done[idx & mask]) {
		err = -EINVAL;
	} else {
		*wr_id = wq->wrid[idx & mask];
		srq->done[idx & mask] = 1;
		while (wq->ci != wq->pi && srq->done[wq->ci & mask])
			srq->done[wq->ci++ & mask] = 0;
	}
	spin_unlock_irqrestore(&srq->lock, flags);
	return err;
}
