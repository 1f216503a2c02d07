// SPDX-License-Identifier: GPL-2.0 or OpenIB.org BSD (MIT) See COPYING file
/*
 * libqroce control path, queue pairs and what serves them: QPs (their
 * rings, the context's QPN table the poller looks them up in), shared
 * receive queues, address handles and multicast groups.  Posting is the
 * data path's (qroce_post.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <util/util.h>
#include <ccan/minmax.h>

#include "qroce.h"
#include "qroce_abi.h"

/* ------------------------------------------------------------------ */
/* QP                                                                  */
/* ------------------------------------------------------------------ */

/*
 * A work queue of at least @n WQEs of @stride bytes, its ring from @pd's
 * allocator if it is a parent domain with one (@type says which ring);
 * with a thread domain its lock is off.  0 or an errno.
 */
static int qroce_wq_init(struct qroce_wq *wq, struct qroce_pd *pd,
			 uint64_t type, uint32_t n, uint32_t stride)
{
	wq->log2 = qroce_log2_up(max_t(uint32_t, n, 1));
	wq->shift = qroce_log2_up(stride);
	wq->buf = qroce_alloc_ring(pd, type,
				   (size_t)1 << (wq->log2 + wq->shift),
				   &wq->buf_size, &wq->mem);
	if (!wq->buf)
		return errno;
	wq->wrid = calloc(1u << wq->log2, sizeof(uint64_t));
	if (!wq->wrid) {
		qroce_free_ring(wq->buf, &wq->mem);
		return ENOMEM;
	}
	qroce_spin_init(&wq->lock, pd && pd->td);
	return 0;
}

static void qroce_wq_fini(struct qroce_wq *wq)
{
	if (!wq->wrid)
		return;		/* never set up (a QP's RQ with an SRQ) */
	qroce_spin_destroy(&wq->lock);
	qroce_free_ring(wq->buf, &wq->mem);
	free(wq->wrid);
}

/*
 * Check a QP's requested capabilities against the context's limits and
 * size its WQEs: 0, or the errno for ibv_create_qp().
 */
static int qroce_qp_check(struct qroce_context *ctx,
			  struct ibv_qp_init_attr_ex *attr,
			  uint32_t *sbytes, uint32_t *rbytes)
{
	struct ibv_qp_cap *cap = &attr->cap;

	uint32_t flags = attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS ?
			 attr->create_flags : 0;

	/* a UD QP may block its own multicast copies (the kernel checks) */
	if (attr->qp_type == IBV_QPT_UD)
		flags &= ~(uint32_t)IBV_QP_CREATE_BLOCK_SELF_MCAST_LB;
	/* other create flags: accepted with none set, as rxe does */
	if (attr->comp_mask & ~(uint32_t)(IBV_QP_INIT_ATTR_PD |
					  IBV_QP_INIT_ATTR_SEND_OPS_FLAGS |
					  IBV_QP_INIT_ATTR_CREATE_FLAGS) ||
	    !(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || flags ||
	    !qroce_send_ops(attr->qp_type))
		return EOPNOTSUPP;
	if ((attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
	    attr->send_ops_flags & ~qroce_send_ops(attr->qp_type))
		return EOPNOTSUPP;
	if (cap->max_send_sge > ctx->max_sge ||
	    cap->max_recv_sge > ctx->max_sge ||
	    cap->max_inline_data > ctx->max_inline ||
	    cap->max_send_wr > (1u << QROCE_WQ_MAX_LOG2) ||
	    cap->max_recv_wr > (1u << QROCE_WQ_MAX_LOG2))
		return EINVAL;
	*sbytes = sizeof(struct qroce_send_wqe) +
		  max_t(uint32_t, cap->max_send_sge * sizeof(struct qroce_sge),
			cap->max_inline_data);
	*rbytes = sizeof(struct qroce_recv_wqe) +
		  max_t(uint32_t, 1, cap->max_recv_sge) *
		  sizeof(struct qroce_sge);
	*sbytes = max_t(uint32_t, *sbytes, 1u << QROCE_SQ_WQE_MIN_SHIFT);
	*rbytes = max_t(uint32_t, *rbytes, 1u << QROCE_RQ_WQE_MIN_SHIFT);
	if (qroce_log2_up(*sbytes) > ctx->sq_wqe_max_shift ||
	    qroce_log2_up(*rbytes) > ctx->rq_wqe_max_shift)
		return EINVAL;
	return 0;
}

/*
 * Allocate a QP's rings and report in attr->cap what they really hold.
 * With an SRQ the QP has no RQ ring.
 */
static int qroce_qp_rings(struct qroce_context *ctx, struct qroce_qp *qp,
			  struct ibv_qp_init_attr_ex *attr,
			  uint32_t sbytes, uint32_t rbytes)
{
	struct ibv_qp_cap *cap = &attr->cap;
	struct qroce_pd *pd = qroce_parent(attr->pd);
	int err;

	qp->pd = pd;
	err = qroce_wq_init(&qp->sq, pd, QROCE_RES_TYPE_SQ, cap->max_send_wr,
			    sbytes);
	if (err)
		return err;
	if (attr->srq) {
		/* receives come from the SRQ: no RQ ring */
		qp->srq = to_qsrq(attr->srq);
		cap->max_recv_wr = 0;
		cap->max_recv_sge = 0;
	} else {
		err = qroce_wq_init(&qp->rq, pd, QROCE_RES_TYPE_RQ,
				    cap->max_recv_wr, rbytes);
		if (err) {
			qroce_wq_fini(&qp->sq);
			return err;
		}
		cap->max_recv_wr = 1u << qp->rq.log2;
		cap->max_recv_sge = min_t(uint32_t, ctx->max_sge,
					  ((1u << qp->rq.shift) -
					   sizeof(struct qroce_recv_wqe)) /
					  sizeof(struct qroce_sge));
	}
	cap->max_send_wr = 1u << qp->sq.log2;
	cap->max_send_sge = min_t(uint32_t, ctx->max_sge,
				  ((1u << qp->sq.shift) -
				   sizeof(struct qroce_send_wqe)) /
				  sizeof(struct qroce_sge));
	cap->max_inline_data = min_t(uint32_t, ctx->max_inline,
				     (1u << qp->sq.shift) -
				     sizeof(struct qroce_send_wqe));
	qp->max_send_sge = cap->max_send_sge;
	qp->max_recv_sge = cap->max_recv_sge;
	qp->max_inline = cap->max_inline_data;
	qp->sig_all = attr->sq_sig_all;
	return 0;
}

/* The rings of the request, as the driver's create_qp reads them. */
static void qroce_qp_req(struct qroce_qp *qp, struct qroce_create_qp_req *r)
{
	r->sq_buf_addr = (uintptr_t)qp->sq.buf;
	r->rq_buf_addr = (uintptr_t)qp->rq.buf;
	r->sq_buf_size = qp->sq.buf_size;
	r->rq_buf_size = qp->rq.buf_size;
	r->sq_log2_entries = qp->sq.log2;
	r->rq_log2_entries = qp->rq.log2;
	r->sq_wqe_shift = qp->sq.shift;
	r->rq_wqe_shift = qp->srq ? QROCE_RQ_WQE_MIN_SHIFT : qp->rq.shift;
}

/* Enter @qp in the table at @qpn, making its chunk if need be; an errno. */
static int qroce_qp_table_set(struct qroce_context *ctx, uint32_t qpn,
			      struct qroce_qp *qp)
{
	struct qroce_qp **chunk;

	if (qpn >= QROCE_QP_TABLE_SIZE) {
		verbs_err(&ctx->ibv_ctx, "qroce: QPN %u out of range\n", qpn);
		return EINVAL;
	}
	pthread_mutex_lock(&ctx->qp_table_mutex);
	chunk = ctx->qp_table[qpn >> QROCE_QP_CHUNK_SHIFT];
	if (!chunk) {
		chunk = calloc(QROCE_QP_CHUNK, sizeof(*chunk));
		if (!chunk) {
			pthread_mutex_unlock(&ctx->qp_table_mutex);
			return ENOMEM;
		}
		atomic_store_explicit((_Atomic(struct qroce_qp **) *)
				      &ctx->qp_table[qpn >> QROCE_QP_CHUNK_SHIFT],
				      chunk, memory_order_release);
	}
	atomic_store_explicit((_Atomic(struct qroce_qp *) *)
			      &chunk[qpn & (QROCE_QP_CHUNK - 1)],
			      qp, memory_order_release);
	pthread_mutex_unlock(&ctx->qp_table_mutex);
	return 0;
}

/* Take QP @qpn out of the table; the caller holds the table mutex. */
static void qroce_qp_table_clear(struct qroce_context *ctx, uint32_t qpn)
{
	struct qroce_qp **chunk = ctx->qp_table[qpn >> QROCE_QP_CHUNK_SHIFT];

	atomic_store_explicit((_Atomic(struct qroce_qp *) *)
			      &chunk[qpn & (QROCE_QP_CHUNK - 1)],
			      NULL, memory_order_relaxed);
}

/*
 * CREATE_QP to the kernel; with create flags (even none set) through the
 * extended command, which the plain one cannot carry.  Sets qp->qpn.
 */
static int qroce_qp_cmd(struct ibv_context *ibctx, struct qroce_qp *qp,
			struct ibv_qp_init_attr_ex *attr)
{
	int err;

	if (attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) {
		struct uqroce_create_qp_ex cmd = {};
		struct uqroce_create_qp_ex_resp resp = {};

		qroce_qp_req(qp, &cmd.drv_payload);
		err = ibv_cmd_create_qp_ex2(ibctx, &qp->vqp, attr,
					    &cmd.ibv_cmd, sizeof(cmd),
					    &resp.ibv_resp, sizeof(resp), NULL);
		qp->qpn = resp.qpn;
	} else {
		struct uqroce_create_qp cmd = {};
		struct uqroce_create_qp_resp resp = {};

		qroce_qp_req(qp, &cmd.drv_payload);
		err = ibv_cmd_create_qp_ex(ibctx, &qp->vqp, attr, &cmd.ibv_cmd,
					   sizeof(cmd), &resp.ibv_resp,
					   sizeof(resp));
		qp->qpn = resp.qpn;
	}
	return err;
}

static struct ibv_qp *qroce_create_qp_common(struct ibv_context *ibctx,
					     struct ibv_qp_init_attr_ex *attr)
{
	struct qroce_context *ctx = to_qctx(ibctx);
	uint32_t sbytes, rbytes;
	struct qroce_qp *qp;
	int err;

	err = qroce_qp_check(ctx, attr, &sbytes, &rbytes);
	if (err) {
		errno = err;
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (!qp) {
		errno = ENOMEM;
		return NULL;
	}
	err = qroce_qp_rings(ctx, qp, attr, sbytes, rbytes);
	if (err)
		goto err_free;

	err = qroce_qp_cmd(ibctx, qp, attr);
	if (err)
		goto err_rings;
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		qroce_qp_ex_ops(qp, attr->send_ops_flags);
		qp->vqp.comp_mask |= VERBS_QP_EX;
	}
	err = qroce_qp_table_set(ctx, qp->qpn, qp);
	if (err) {
		ibv_cmd_destroy_qp(&qp->vqp.qp);
		goto err_rings;
	}
	qroce_parent_get(qp->pd);
	return &qp->vqp.qp;

err_rings:
	qroce_wq_fini(&qp->rq);
	qroce_wq_fini(&qp->sq);
err_free:
	free(qp);
	errno = err;
	return NULL;
}

static struct ibv_qp *qroce_create_qp(struct ibv_pd *pd,
				      struct ibv_qp_init_attr *attr)
{
	struct ibv_qp_init_attr_ex attr_ex = {};
	struct ibv_qp *qp;

	memcpy(&attr_ex, attr, sizeof(*attr));
	attr_ex.comp_mask = IBV_QP_INIT_ATTR_PD;
	attr_ex.pd = pd;
	qp = qroce_create_qp_common(pd->context, &attr_ex);
	if (qp)
		memcpy(attr, &attr_ex, sizeof(*attr));
	return qp;
}

static struct ibv_qp *qroce_create_qp_ex(struct ibv_context *ibctx,
					 struct ibv_qp_init_attr_ex *attr)
{
	return qroce_create_qp_common(ibctx, attr);
}

/* Lock a QP's send and receive CQs in CQN order; once if they are one. */
static void qroce_lock_cqs(struct qroce_cq *scq, struct qroce_cq *rcq)
{
	if (scq == rcq) {
		qroce_spin_lock(&scq->lock);
	} else if (scq->cqn < rcq->cqn) {
		qroce_spin_lock(&scq->lock);
		qroce_spin_lock(&rcq->lock);
	} else {
		qroce_spin_lock(&rcq->lock);
		qroce_spin_lock(&scq->lock);
	}
}

static void qroce_unlock_cqs(struct qroce_cq *scq, struct qroce_cq *rcq)
{
	qroce_spin_unlock(&scq->lock);
	if (rcq != scq)
		qroce_spin_unlock(&rcq->lock);
}

static int qroce_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
			   int mask)
{
	struct qroce_qp *qp = to_qqp(ibqp);
	struct qroce_cq *scq = to_qcq(ibqp->send_cq);
	struct qroce_cq *rcq = to_qcq(ibqp->recv_cq);
	struct ibv_modify_qp cmd = {};
	int err;

	err = ibv_cmd_modify_qp(ibqp, attr, mask, &cmd, sizeof(cmd));
	if (err)
		return err;
	if ((mask & IBV_QP_STATE) && attr->qp_state == IBV_QPS_RESET) {
		/*
		 * As mlx5: the QP's CQEs still in its CQs go (a WQE flushed
		 * before the reset must not complete in the QP's next life),
		 * and SRQ WQEs they name are retired.
		 */
		qroce_lock_cqs(scq, rcq);
		qroce_cq_clean(rcq, qp->qpn, qp->srq);
		if (scq != rcq)
			qroce_cq_clean(scq, qp->qpn, NULL);
		qroce_unlock_cqs(scq, rcq);
		qroce_spin_lock(&qp->sq.lock);
		qp->sq.pi = qp->sq.ci = 0;
		qroce_spin_unlock(&qp->sq.lock);
		if (!qp->srq) {
			qroce_spin_lock(&qp->rq.lock);
			qp->rq.pi = qp->rq.ci = 0;
			qroce_spin_unlock(&qp->rq.lock);
		}
	}
	return 0;
}

static int qroce_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
			  int mask, struct ibv_qp_init_attr *init)
{
	struct ibv_query_qp cmd;

	return ibv_cmd_query_qp(ibqp, attr, mask, init, &cmd, sizeof(cmd));
}

static int qroce_destroy_qp(struct ibv_qp *ibqp)
{
	struct qroce_context *ctx = to_qctx(ibqp->context);
	struct qroce_qp *qp = to_qqp(ibqp);
	struct qroce_cq *scq = to_qcq(ibqp->send_cq);
	struct qroce_cq *rcq = to_qcq(ibqp->recv_cq);
	int err;

	/*
	 * The device may give this QPN to a new QP as soon as the destroy is
	 * done; the table mutex keeps any new QP of this context out of the
	 * table, and so without CQEs, until this one's are cleaned out.
	 * Pollers look QPs up under their CQ's lock: with both locks held no
	 * poller is using this QP, and afterwards none finds it or its CQEs.
	 */
	pthread_mutex_lock(&ctx->qp_table_mutex);
	err = ibv_cmd_destroy_qp(ibqp);
	if (err) {
		pthread_mutex_unlock(&ctx->qp_table_mutex);
		return err;
	}
	qroce_lock_cqs(scq, rcq);
	qroce_qp_table_clear(ctx, qp->qpn);
	qroce_cq_clean(rcq, qp->qpn, qp->srq);
	if (scq != rcq)
		qroce_cq_clean(scq, qp->qpn, NULL);
	qroce_unlock_cqs(scq, rcq);
	pthread_mutex_unlock(&ctx->qp_table_mutex);
	qroce_wq_fini(&qp->sq);
	qroce_wq_fini(&qp->rq);
	qroce_parent_put(qp->pd);
	free(qp);
	return 0;
}

/* ------------------------------------------------------------------ */
/* SRQ                                                                 */
/* ------------------------------------------------------------------ */

/*
 * Give @srq @n tags (never fewer than it has: outstanding WQEs keep
 * theirs across a resize); the new ones go on the free stack.
 */
static int qroce_srq_tags_grow(struct qroce_srq *srq, uint32_t n)
{
	struct qroce_srq_tag *tags;
	uint32_t *free_tags, i;

	if (n <= srq->ntags)
		return 0;
	tags = realloc(srq->tags, n * sizeof(*tags));
	if (!tags)
		return ENOMEM;
	srq->tags = tags;
	free_tags = realloc(srq->free_tags, n * sizeof(*free_tags));
	if (!free_tags)
		return ENOMEM;
	srq->free_tags = free_tags;
	memset(tags + srq->ntags, 0, (n - srq->ntags) * sizeof(*tags));
	for (i = n; i > srq->ntags; i--)
		free_tags[srq->nfree++] = i - 1;
	srq->ntags = n;
	return 0;
}

static struct ibv_srq *qroce_create_srq(struct ibv_pd *pd,
					struct ibv_srq_init_attr *init)
{
	struct qroce_context *ctx = to_qctx(pd->context);
	struct uqroce_create_srq cmd = {};
	struct uqroce_create_srq_resp resp = {};
	struct ibv_srq_attr *attr = &init->attr;
	struct qroce_srq *srq;
	uint32_t bytes;
	int err;

	if (attr->max_sge > ctx->max_sge ||
	    attr->max_wr > (1u << QROCE_WQ_MAX_LOG2)) {
		errno = EINVAL;
		return NULL;
	}
	bytes = sizeof(struct qroce_recv_wqe) +
		max_t(uint32_t, 1, attr->max_sge) * sizeof(struct qroce_sge);
	bytes = max_t(uint32_t, bytes, 1u << QROCE_RQ_WQE_MIN_SHIFT);
	if (qroce_log2_up(bytes) > ctx->rq_wqe_max_shift) {
		errno = EINVAL;
		return NULL;
	}
	srq = calloc(1, sizeof(*srq));
	if (!srq) {
		errno = ENOMEM;
		return NULL;
	}
	srq->pd = qroce_parent(pd);
	err = qroce_wq_init(&srq->wq, srq->pd, QROCE_RES_TYPE_SRQ,
			    attr->max_wr, bytes);
	if (err)
		goto err_free;
	err = qroce_srq_tags_grow(srq, 1u << srq->wq.log2);
	if (err)
		goto err_wq;
	attr->max_wr = 1u << srq->wq.log2;
	attr->max_sge = min_t(uint32_t, ctx->max_sge,
			      ((1u << srq->wq.shift) -
			       sizeof(struct qroce_recv_wqe)) /
			      sizeof(struct qroce_sge));
	srq->max_sge = attr->max_sge;
	cmd.buf_addr = (uintptr_t)srq->wq.buf;
	cmd.buf_size = srq->wq.buf_size;
	cmd.log2_entries = srq->wq.log2;
	cmd.wqe_shift = srq->wq.shift;
	err = ibv_cmd_create_srq(pd, &srq->vsrq.srq, init, &cmd.ibv_cmd,
				 sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	if (err)
		goto err_tags;
	srq->srqn = resp.srqn;
	qroce_parent_get(srq->pd);
	return &srq->vsrq.srq;

err_tags:
	free(srq->tags);
	free(srq->free_tags);
err_wq:
	qroce_wq_fini(&srq->wq);
err_free:
	free(srq);
	errno = err;
	return NULL;
}

/*
 * After a resize: the new ring (*@buf, @size bytes) replaces the SRQ's,
 * which is handed back to be freed.  The tags stay as they are (the
 * WQEs carry them to the new ring).  Called with the SRQ's lock held.
 */
static void qroce_srq_move(struct qroce_srq *srq, uint32_t log2, size_t size,
			   void **buf, struct qroce_ring_mem *mem)
{
	struct qroce_wq *wq = &srq->wq;
	struct qroce_ring_mem omem = wq->mem;
	void *obuf = wq->buf;

	wq->buf = *buf;
	wq->mem = *mem;
	wq->buf_size = size;
	wq->log2 = log2;
	*buf = obuf;
	*mem = omem;
}

/*
 * IBV_SRQ_MAX_WR: a new ring of the same stride; the device moves the
 * WQEs not yet consumed to it, each to the slot of its free-running
 * index, and wr_ids and polled marks move the same way here.  The SRQ's
 * lock is held throughout, so nothing is posted or retired under the
 * device.
 */
static int qroce_resize_srq(struct qroce_srq *srq, struct ibv_srq_attr *attr,
			    int mask)
{
	struct uqroce_modify_srq cmd = {};
	struct qroce_wq *wq = &srq->wq;
	struct qroce_ring_mem mem;
	uint32_t log2;
	size_t size;
	void *buf;
	int err;

	if (!attr->max_wr || attr->max_wr > (1u << QROCE_WQ_MAX_LOG2))
		return EINVAL;
	log2 = max_t(uint32_t, 1, qroce_log2_up(attr->max_wr));
	if ((mask & IBV_SRQ_LIMIT) && attr->srq_limit >= (1u << log2))
		return EINVAL;
	buf = qroce_alloc_ring(srq->pd, QROCE_RES_TYPE_SRQ,
			       (size_t)1 << (log2 + wq->shift), &size, &mem);
	if (!buf)
		return errno;
	qroce_spin_lock(&wq->lock);
	err = qroce_srq_tags_grow(srq, 1u << log2);
	if (err)
		goto out_unlock;
	err = EINVAL;
	if (wq->pi - wq->ci > (1u << log2))
		goto out_unlock;
	cmd.buf_addr = (uintptr_t)buf;
	cmd.buf_size = size;
	cmd.log2_entries = log2;
	err = ibv_cmd_modify_srq(&srq->vsrq.srq, attr, mask, &cmd.ibv_cmd,
				 sizeof(cmd));
	if (!err)
		qroce_srq_move(srq, log2, size, &buf, &mem);
out_unlock:
	qroce_spin_unlock(&wq->lock);
	qroce_free_ring(buf, &mem);
	return err;
}

static int qroce_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr,
			    int mask)
{
	struct ibv_modify_srq cmd;

	if (mask & IBV_SRQ_MAX_WR)
		return qroce_resize_srq(to_qsrq(ibsrq), attr, mask);
	return ibv_cmd_modify_srq(ibsrq, attr, mask, &cmd, sizeof(cmd));
}

static int qroce_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr)
{
	struct ibv_query_srq cmd;

	return ibv_cmd_query_srq(ibsrq, attr, &cmd, sizeof(cmd));
}

static int qroce_destroy_srq(struct ibv_srq *ibsrq)
{
	struct qroce_srq *srq = to_qsrq(ibsrq);
	int err = ibv_cmd_destroy_srq(ibsrq);

	if (err)
		return err;
	free(srq->tags);
	free(srq->free_tags);
	qroce_wq_fini(&srq->wq);
	qroce_parent_put(srq->pd);
	free(srq);
	return 0;
}

/* ------------------------------------------------------------------ */
/* AH                                                                  */
/* ------------------------------------------------------------------ */

static struct ibv_ah *qroce_create_ah(struct ibv_pd *pd,
				      struct ibv_ah_attr *attr)
{
	struct uqroce_create_ah_resp resp = {};
	struct qroce_ah *ah = calloc(1, sizeof(*ah));
	int err;

	if (!ah) {
		errno = ENOMEM;
		return NULL;
	}
	err = ibv_cmd_create_ah(pd, &ah->ibv_ah, attr, &resp.ibv_resp,
				sizeof(resp));
	if (err) {
		free(ah);
		errno = err;
		return NULL;
	}
	ah->ahn = resp.ahn;
	return &ah->ibv_ah;
}

static int qroce_destroy_ah(struct ibv_ah *ibah)
{
	int err = ibv_cmd_destroy_ah(ibah);

	if (!err)
		free(container_of(ibah, struct qroce_ah, ibv_ah));
	return err;
}

/* Multicast groups: the kernel driver gives them to the device. */
static int qroce_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
			      uint16_t lid)
{
	return ibv_cmd_attach_mcast(qp, gid, lid);
}

static int qroce_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
			      uint16_t lid)
{
	return ibv_cmd_detach_mcast(qp, gid, lid);
}

const struct verbs_context_ops qroce_qp_ops = {
	.attach_mcast = qroce_attach_mcast,
	.create_ah = qroce_create_ah,
	.create_qp = qroce_create_qp,
	.create_qp_ex = qroce_create_qp_ex,
	.create_srq = qroce_create_srq,
	.destroy_ah = qroce_destroy_ah,
	.destroy_qp = qroce_destroy_qp,
	.destroy_srq = qroce_destroy_srq,
	.detach_mcast = qroce_detach_mcast,
	.modify_qp = qroce_modify_qp,
	.modify_srq = qroce_modify_srq,
	.query_qp = qroce_query_qp,
	.query_srq = qroce_query_srq,
};
