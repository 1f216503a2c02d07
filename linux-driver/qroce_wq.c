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
 * Keep @wr_id for receive WQE @w at ring index @idx: by ring slot for an
 * RQ, under a free tag the WQE carries for SRQ @srq.  -ENOMEM when the
 * SRQ has as many WQEs outstanding as it has tags.
 */
static int qroce_recv_keep(struct qroce_wq *wq, struct qroce_srq *srq,
			   struct qroce_recv_wqe *w, u32 idx, u64 wr_id)
{
	struct qroce_srq_tag *t;
	u32 tag;

	if (!srq) {
		wq->wrid[idx & ((1u << wq->log2) - 1)] = wr_id;
		return 0;
	}
	if (!srq->nfree)
		return -ENOMEM;
	tag = srq->free_tags[--srq->nfree];
	t = &srq->tags[tag];
	t->wr_id = wr_id;
	t->idx = idx;
	t->busy = true;
	w->srq_tag = cpu_to_le32(tag);
	return 0;
}

/*
 * Write receive WQEs for @wr on @wq (of a QP's RQ, or @srq's ring) and
 * ring doorbell @db for object @obj; the caller holds the queue's lock.
 */
int qroce_post_recv_wq(struct qroce_dev *dev, struct qroce_wq *wq,
		       struct qroce_srq *srq, u32 max_sge, u32 db, u32 obj,
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
		err = qroce_recv_keep(wq, srq, w, wq->pi, wr->wr_id);
		if (err)
			break;
		w->num_sge = wr->num_sge;
		qroce_put_sges((struct qroce_sge *)(w + 1), wr->sg_list,
			       wr->num_sge);
		wq->pi++;
	}
	if (err)
		*bad = wr;
	dma_wmb();
	qroce_db_ring(dev, db, obj, wq->pi);
	return err;
}

/*
 * The CQE of the SRQ WQE with tag @tag was polled: its wr_id; the tag is
 * free again, and the ring slots up to the one it was posted at (the
 * device takes WQEs in order).  Nonzero if @tag is not outstanding.
 */
int qroce_srq_retire(struct qroce_srq *srq, u32 tag, u64 *wr_id)
{
	struct qroce_srq_tag *t;
	unsigned long flags;
	int err = 0;

	spin_lock_irqsave(&srq->lock, flags);
	if (tag >= srq->ntags || !srq->tags[tag].busy) {
		err = -EINVAL;
	} else {
		t = &srq->tags[tag];
		*wr_id = t->wr_id;
		t->busy = false;
		srq->free_tags[srq->nfree++] = tag;
		if ((s32)(t->idx + 1 - srq->wq.ci) > 0)
			srq->wq.ci = t->idx + 1;
	}
	spin_unlock_irqrestore(&srq->lock, flags);
	return err;
}

/*
 * Give a kernel SRQ @n tags: *@tags and *@free_tags (allocated by the
 * caller for @n, or NULL to allocate here) take over the old ones, which
 * are handed back to be freed; tags in use stay as they are.  The caller
 * holds the SRQ's lock if others may use it.
 */
void qroce_srq_tags_grow(struct qroce_srq *srq, u32 n,
			 struct qroce_srq_tag **tags, u32 **free_tags)
{
	u32 i;

	if (n <= srq->ntags)
		return;
	if (srq->ntags) {
		memcpy(*tags, srq->tags, srq->ntags * sizeof(**tags));
		memcpy(*free_tags, srq->free_tags,
		       srq->nfree * sizeof(**free_tags));
	}
	memset(*tags + srq->ntags, 0, (n - srq->ntags) * sizeof(**tags));
	for (i = n; i > srq->ntags; i--)
		(*free_tags)[srq->nfree++] = i - 1;
	swap(srq->tags, *tags);
	swap(srq->free_tags, *free_tags);
	srq->ntags = n;
}
