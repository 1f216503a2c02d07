// SPDX-License-Identifier: GPL-2.0 or OpenIB.org BSD (MIT) See COPYING file
/*
 * libqroce verbs.  Control verbs go to the kernel (ibv_cmd_*); post, poll
 * and arm write rings in this process's memory and the doorbell page.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <ccan/array_size.h>
#include <util/mmio.h>
#include <util/util.h>
#include <ccan/minmax.h>
#include <ccan/ilog.h>

#include "qroce.h"
#include "qroce_abi.h"

static void *qroce_alloc_ring(size_t size, size_t *out_size)
{
	size_t psz = sysconf(_SC_PAGESIZE);
	void *p;

	size = (size + psz - 1) & ~(psz - 1);
	if (posix_memalign(&p, psz, size))
		return NULL;
	memset(p, 0, size);
	*out_size = size;
	return p;
}

static void qroce_db(struct qroce_context *ctx, uint32_t off, uint32_t obj,
		     uint32_t val)
{
	mmio_write64_le((uint8_t *)ctx->db + off,
			htole64(qroce_db_value(obj, val)));
}

static unsigned int qroce_log2_up(uint32_t n)
{
	return n <= 1 ? 0 : ilog32(n - 1);
}

/* ------------------------------------------------------------------ */
/* Device, port, PD, MR                                                */
/* ------------------------------------------------------------------ */

static int qroce_query_device(struct ibv_context *ctx,
			      const struct ibv_query_device_ex_input *input,
			      struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ib_uverbs_ex_query_device_resp resp;
	size_t resp_size = sizeof(resp);

	return ibv_cmd_query_device_any(ctx, input, attr, attr_size, &resp,
					&resp_size);
}

static int qroce_query_port(struct ibv_context *ctx, uint8_t port,
			    struct ibv_port_attr *attr)
{
	struct ibv_query_port cmd;

	return ibv_cmd_query_port(ctx, port, attr, &cmd, sizeof(cmd));
}

static struct ibv_pd *qroce_alloc_pd(struct ibv_context *ctx)
{
	struct uqroce_alloc_pd_resp resp = {};
	struct ibv_alloc_pd cmd;
	struct ibv_pd *pd = calloc(1, sizeof(*pd));
	int err;

	if (!pd) {
		errno = ENOMEM;
		return NULL;
	}
	err = ibv_cmd_alloc_pd(ctx, pd, &cmd, sizeof(cmd), &resp.ibv_resp,
			       sizeof(resp));
	if (err) {
		free(pd);
		errno = err;
		return NULL;
	}
	return pd;
}

static int qroce_dealloc_pd(struct ibv_pd *pd)
{
	int err = ibv_cmd_dealloc_pd(pd);

	if (!err)
		free(pd);
	return err;
}

static struct ibv_mr *qroce_reg_mr(struct ibv_pd *pd, void *addr,
				   size_t length, uint64_t hca_va, int access)
{
	struct ib_uverbs_reg_mr_resp resp;
	struct ibv_reg_mr cmd;
	struct verbs_mr *vmr = calloc(1, sizeof(*vmr));
	int err;

	if (!vmr) {
		errno = ENOMEM;
		return NULL;
	}
	err = ibv_cmd_reg_mr(pd, addr, length, hca_va, access, vmr, &cmd,
			     sizeof(cmd), &resp, sizeof(resp));
	if (err) {
		free(vmr);
		errno = err;
		return NULL;
	}
	return &vmr->ibv_mr;
}

static int qroce_dereg_mr(struct verbs_mr *vmr)
{
	int err = ibv_cmd_dereg_mr(vmr);

	if (!err)
		free(vmr);
	return err;
}

/* ------------------------------------------------------------------ */
/* CQ                                                                  */
/* ------------------------------------------------------------------ */

static struct ibv_cq *qroce_create_cq(struct ibv_context *ibctx, int cqe,
				      struct ibv_comp_channel *channel,
				      int comp_vector)
{
	struct uqroce_create_cq cmd = {};
	struct uqroce_create_cq_resp resp = {};
	struct qroce_cq *cq;
	uint32_t log2;
	int err;

	if (cqe < 1 || cqe >= (1 << QROCE_CQ_MAX_LOG2)) {
		errno = EINVAL;
		return NULL;
	}
	cq = calloc(1, sizeof(*cq));
	if (!cq) {
		errno = ENOMEM;
		return NULL;
	}
	log2 = max_t(uint32_t, 1, qroce_log2_up(cqe + 1));
	cq->log2 = log2;
	cq->buf = qroce_alloc_ring((sizeof(struct qroce_cqe) << log2) +
				   sizeof(struct qroce_cq_rec), &cq->buf_size);
	if (!cq->buf) {
		errno = ENOMEM;
		goto err_free;
	}
	cq->cqes = cq->buf;
	cq->rec = (struct qroce_cq_rec *)(cq->cqes + (1u << log2));
	pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);
	cmd.buf_addr = (uintptr_t)cq->buf;
	cmd.buf_size = cq->buf_size;
	cmd.log2_entries = log2;
	err = ibv_cmd_create_cq(ibctx, (1 << log2) - 1, channel, comp_vector,
				&cq->vcq.cq, &cmd.ibv_cmd, sizeof(cmd),
				&resp.ibv_resp, sizeof(resp));
	if (err) {
		errno = err;
		goto err_ring;
	}
	cq->cqn = resp.cqn;
	return &cq->vcq.cq;

err_ring:
	free(cq->buf);
err_free:
	free(cq);
	return NULL;
}

static int qroce_destroy_cq(struct ibv_cq *ibcq)
{
	struct qroce_cq *cq = to_qcq(ibcq);
	int err = ibv_cmd_destroy_cq(ibcq);

	if (err)
		return err;
	pthread_spin_destroy(&cq->lock);
	free(cq->buf);
	free(cq);
	return 0;
}

static const enum ibv_wc_opcode qroce_wc_opcode[] = {
	[QROCE_CQE_SEND] = IBV_WC_SEND,
	[QROCE_CQE_RDMA_WRITE] = IBV_WC_RDMA_WRITE,
	[QROCE_CQE_RDMA_READ] = IBV_WC_RDMA_READ,
	[QROCE_CQE_CMP_SWP] = IBV_WC_COMP_SWAP,
	[QROCE_CQE_FETCH_ADD] = IBV_WC_FETCH_ADD,
	[QROCE_CQE_RECV] = IBV_WC_RECV,
	[QROCE_CQE_RECV_RDMA_IMM] = IBV_WC_RECV_RDMA_WITH_IMM,
};

static struct qroce_cqe *qroce_next_cqe(struct qroce_cq *cq)
{
	struct qroce_cqe *e = &cq->cqes[cq->ci & ((1u << cq->log2) - 1)];

	if ((atomic_load_explicit((_Atomic(uint8_t) *)&e->owner,
				  memory_order_relaxed) & QROCE_OWNER_BIT) !=
	    qroce_owner_for(cq->ci, cq->log2))
		return NULL;
	udma_from_device_barrier();
	return e;
}

/*
 * Consume one CQE: find its QP and WQE.  Returns the QP, or NULL for a CQE
 * that names no QP of this context (it is skipped).
 */
static struct qroce_qp *qroce_cqe_qp(struct qroce_cq *cq,
				     struct qroce_cqe *e, uint64_t *wr_id)
{
	struct qroce_context *ctx = to_qctx(cq->vcq.cq.context);
	uint32_t qpn = le32toh(e->qpn);
	uint32_t idx = le32toh(e->wqe_index);
	struct qroce_qp *qp;
	struct qroce_wq *wq;

	if (qpn >= ctx->qp_table_size)
		return NULL;
	qp = ctx->qp_table[qpn];
	if (!qp)
		return NULL;
	wq = (e->flags & QROCE_CQE_F_SQ) ? &qp->sq : &qp->rq;
	if (idx - wq->ci >= wq->pi - wq->ci)
		return NULL;
	*wr_id = wq->wrid[idx & ((1u << wq->log2) - 1)];
	/* a send CQE also retires the unsignaled WQEs before it */
	wq->ci = idx + 1;
	return qp;
}

static void qroce_cq_advance(struct qroce_cq *cq)
{
	cq->ci++;
	atomic_store_explicit((_Atomic(uint32_t) *)&cq->rec->ci,
			      htole32(cq->ci), memory_order_relaxed);
}

static int qroce_poll_cq(struct ibv_cq *ibcq, int n, struct ibv_wc *wc)
{
	struct qroce_cq *cq = to_qcq(ibcq);
	int done = 0;

	pthread_spin_lock(&cq->lock);
	while (done < n) {
		struct qroce_cqe *e = qroce_next_cqe(cq);
		struct ibv_wc *w = &wc[done];
		struct qroce_qp *qp;

		if (!e)
			break;
		qp = qroce_cqe_qp(cq, e, &w->wr_id);
		qroce_cq_advance(cq);
		if (!qp)
			continue;
		w->status = e->status <= IBV_WC_GENERAL_ERR ?
			    (enum ibv_wc_status)e->status : IBV_WC_GENERAL_ERR;
		w->opcode = e->opcode < ARRAY_SIZE(qroce_wc_opcode) ?
			    qroce_wc_opcode[e->opcode] : IBV_WC_RECV;
		w->vendor_err = e->vendor_err;
		w->byte_len = le32toh(e->byte_len);
		w->qp_num = qp->qpn;
		w->src_qp = le32toh(e->src_qp);
		w->wc_flags = 0;
		w->imm_data = 0;
		if (e->flags & QROCE_CQE_F_IMM) {
			w->imm_data = e->imm_data;	/* already big-endian */
			w->wc_flags |= IBV_WC_WITH_IMM;
		}
		if (e->flags & QROCE_CQE_F_GRH)
			w->wc_flags |= IBV_WC_GRH;
		w->pkey_index = 0;
		w->slid = 0;
		w->sl = 0;
		w->dlid_path_bits = 0;
		done++;
	}
	pthread_spin_unlock(&cq->lock);
	return done;
}

static int qroce_req_notify_cq(struct ibv_cq *ibcq, int solicited)
{
	struct qroce_cq *cq = to_qcq(ibcq);
	struct qroce_context *ctx = to_qctx(ibcq->context);

	qroce_db(ctx, QROCE_DB_CQ_ARM, cq->cqn,
		 (solicited ? QROCE_CQ_ARM_SOLICITED : QROCE_CQ_ARM_NEXT) |
		 (cq->ci & QROCE_CQ_ARM_CI_MASK));
	return 0;
}

/* ------------------------------------------------------------------ */
/* QP                                                                  */
/* ------------------------------------------------------------------ */

static int qroce_wq_init(struct qroce_wq *wq, uint32_t n, uint32_t stride)
{
	wq->log2 = qroce_log2_up(max_t(uint32_t, n, 1));
	wq->shift = qroce_log2_up(stride);
	wq->buf = qroce_alloc_ring((size_t)1 << (wq->log2 + wq->shift),
				   &wq->buf_size);
	wq->wrid = calloc(1u << wq->log2, sizeof(uint64_t));
	if (!wq->buf || !wq->wrid) {
		free(wq->buf);
		free(wq->wrid);
		return ENOMEM;
	}
	pthread_spin_init(&wq->lock, PTHREAD_PROCESS_PRIVATE);
	return 0;
}

static void qroce_wq_fini(struct qroce_wq *wq)
{
	pthread_spin_destroy(&wq->lock);
	free(wq->buf);
	free(wq->wrid);
}

static struct ibv_qp *qroce_create_qp(struct ibv_pd *pd,
				      struct ibv_qp_init_attr *attr)
{
	struct qroce_context *ctx = to_qctx(pd->context);
	struct uqroce_create_qp cmd = {};
	struct uqroce_create_qp_resp resp = {};
	struct ibv_qp_cap *cap = &attr->cap;
	uint32_t sbytes, rbytes;
	struct qroce_qp *qp;
	int err;

	if (attr->srq || (attr->qp_type != IBV_QPT_RC &&
			  attr->qp_type != IBV_QPT_UC &&
			  attr->qp_type != IBV_QPT_UD)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (cap->max_send_sge > ctx->max_sge ||
	    cap->max_recv_sge > ctx->max_sge ||
	    cap->max_inline_data > ctx->max_inline ||
	    cap->max_send_wr > (1u << QROCE_WQ_MAX_LOG2) ||
	    cap->max_recv_wr > (1u << QROCE_WQ_MAX_LOG2)) {
		errno = EINVAL;
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (!qp) {
		errno = ENOMEM;
		return NULL;
	}
	sbytes = sizeof(struct qroce_send_wqe) +
		 max_t(uint32_t, cap->max_send_sge * sizeof(struct qroce_sge),
		       cap->max_inline_data);
	rbytes = sizeof(struct qroce_recv_wqe) +
		 max_t(uint32_t, 1, cap->max_recv_sge) * sizeof(struct qroce_sge);
	sbytes = max_t(uint32_t, sbytes, 1u << QROCE_SQ_WQE_MIN_SHIFT);
	rbytes = max_t(uint32_t, rbytes, 1u << QROCE_RQ_WQE_MIN_SHIFT);
	err = qroce_wq_init(&qp->sq, cap->max_send_wr, sbytes);
	if (err)
		goto err_free;
	err = qroce_wq_init(&qp->rq, cap->max_recv_wr, rbytes);
	if (err)
		goto err_sq;
	/* Report what the rings really hold. */
	cap->max_send_wr = 1u << qp->sq.log2;
	cap->max_recv_wr = 1u << qp->rq.log2;
	cap->max_send_sge = min_t(uint32_t, ctx->max_sge,
				  ((1u << qp->sq.shift) -
				   sizeof(struct qroce_send_wqe)) /
				  sizeof(struct qroce_sge));
	cap->max_recv_sge = min_t(uint32_t, ctx->max_sge,
				  ((1u << qp->rq.shift) -
				   sizeof(struct qroce_recv_wqe)) /
				  sizeof(struct qroce_sge));
	cap->max_inline_data = min_t(uint32_t, ctx->max_inline,
				     (1u << qp->sq.shift) -
				     sizeof(struct qroce_send_wqe));
	qp->max_send_sge = cap->max_send_sge;
	qp->max_recv_sge = cap->max_recv_sge;
	qp->max_inline = cap->max_inline_data;
	qp->sig_all = attr->sq_sig_all;

	cmd.sq_buf_addr = (uintptr_t)qp->sq.buf;
	cmd.rq_buf_addr = (uintptr_t)qp->rq.buf;
	cmd.sq_buf_size = qp->sq.buf_size;
	cmd.rq_buf_size = qp->rq.buf_size;
	cmd.sq_log2_entries = qp->sq.log2;
	cmd.rq_log2_entries = qp->rq.log2;
	cmd.sq_wqe_shift = qp->sq.shift;
	cmd.rq_wqe_shift = qp->rq.shift;
	err = ibv_cmd_create_qp(pd, &qp->vqp.qp, attr, &cmd.ibv_cmd,
				sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	if (err)
		goto err_rq;
	qp->qpn = resp.qpn;
	if (qp->qpn >= ctx->qp_table_size) {
		ibv_cmd_destroy_qp(&qp->vqp.qp);
		err = EINVAL;
		goto err_rq;
	}
	pthread_mutex_lock(&ctx->qp_table_mutex);
	ctx->qp_table[qp->qpn] = qp;
	pthread_mutex_unlock(&ctx->qp_table_mutex);
	return &qp->vqp.qp;

err_rq:
	qroce_wq_fini(&qp->rq);
err_sq:
	qroce_wq_fini(&qp->sq);
err_free:
	free(qp);
	errno = err;
	return NULL;
}

static int qroce_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
			   int mask)
{
	struct qroce_qp *qp = to_qqp(ibqp);
	struct ibv_modify_qp cmd = {};
	int err;

	err = ibv_cmd_modify_qp(ibqp, attr, mask, &cmd, sizeof(cmd));
	if (err)
		return err;
	if ((mask & IBV_QP_STATE) && attr->qp_state == IBV_QPS_RESET) {
		pthread_spin_lock(&qp->sq.lock);
		qp->sq.pi = qp->sq.ci = 0;
		pthread_spin_unlock(&qp->sq.lock);
		pthread_spin_lock(&qp->rq.lock);
		qp->rq.pi = qp->rq.ci = 0;
		pthread_spin_unlock(&qp->rq.lock);
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
	int err;

	err = ibv_cmd_destroy_qp(ibqp);
	if (err)
		return err;
	pthread_mutex_lock(&ctx->qp_table_mutex);
	ctx->qp_table[qp->qpn] = NULL;
	pthread_mutex_unlock(&ctx->qp_table_mutex);
	qroce_wq_fini(&qp->sq);
	qroce_wq_fini(&qp->rq);
	free(qp);
	return 0;
}

static const uint8_t qroce_wr_opcode[] = {
	[IBV_WR_SEND] = QROCE_WR_SEND,
	[IBV_WR_SEND_WITH_IMM] = QROCE_WR_SEND_IMM,
	[IBV_WR_SEND_WITH_INV] = QROCE_WR_SEND_INV,
	[IBV_WR_RDMA_WRITE] = QROCE_WR_RDMA_WRITE,
	[IBV_WR_RDMA_WRITE_WITH_IMM] = QROCE_WR_RDMA_WRITE_IMM,
	[IBV_WR_RDMA_READ] = QROCE_WR_RDMA_READ,
	[IBV_WR_ATOMIC_CMP_AND_SWP] = QROCE_WR_ATOMIC_CMP_SWP,
	[IBV_WR_ATOMIC_FETCH_AND_ADD] = QROCE_WR_ATOMIC_FETCH_ADD,
};

static int qroce_write_send_wqe(struct qroce_qp *qp, struct ibv_send_wr *wr)
{
	struct qroce_wq *wq = &qp->sq;
	struct qroce_send_wqe *w;
	int i;

	if (wq->pi - wq->ci >= (1u << wq->log2))
		return ENOMEM;
	if ((unsigned int)wr->opcode >= ARRAY_SIZE(qroce_wr_opcode) ||
	    (wr->opcode != IBV_WR_SEND && !qroce_wr_opcode[wr->opcode]))
		return EINVAL;
	w = (void *)((uint8_t *)wq->buf +
		     ((size_t)(wq->pi & ((1u << wq->log2) - 1)) << wq->shift));
	memset(w, 0, sizeof(*w));
	w->opcode = qroce_wr_opcode[wr->opcode];
	w->flags = ((wr->send_flags & IBV_SEND_SIGNALED) || qp->sig_all ?
		    QROCE_WQE_SIGNALED : 0) |
		   (wr->send_flags & IBV_SEND_SOLICITED ? QROCE_WQE_SOLICITED : 0) |
		   (wr->send_flags & IBV_SEND_FENCE ? QROCE_WQE_FENCE : 0);
	if (wr->opcode == IBV_WR_SEND_WITH_INV)
		w->imm_data = htole32(wr->invalidate_rkey);
	else
		w->imm_data = wr->imm_data;	/* raw big-endian */
	switch (wr->opcode) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_RDMA_READ:
		w->rdma.remote_addr = htole64(wr->wr.rdma.remote_addr);
		w->rdma.rkey = htole32(wr->wr.rdma.rkey);
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		w->rdma.remote_addr = htole64(wr->wr.atomic.remote_addr);
		w->rdma.rkey = htole32(wr->wr.atomic.rkey);
		w->rdma.compare_add = htole64(wr->wr.atomic.compare_add);
		w->rdma.swap = htole64(wr->wr.atomic.swap);
		break;
	default:
		break;
	}
	if (qp->vqp.qp.qp_type == IBV_QPT_UD) {
		struct qroce_ah *ah = container_of(wr->wr.ud.ah,
						   struct qroce_ah, ibv_ah);

		w->ud.ahn = htole32(ah->ahn);
		w->ud.remote_qpn = htole32(wr->wr.ud.remote_qpn);
		w->ud.remote_qkey = htole32(wr->wr.ud.remote_qkey);
	}
	if (wr->send_flags & IBV_SEND_INLINE) {
		uint8_t *p = (uint8_t *)(w + 1);
		uint32_t len = 0;

		for (i = 0; i < wr->num_sge; i++) {
			if (len + wr->sg_list[i].length > qp->max_inline)
				return EINVAL;
			memcpy(p + len, (void *)(uintptr_t)wr->sg_list[i].addr,
			       wr->sg_list[i].length);
			len += wr->sg_list[i].length;
		}
		w->flags |= QROCE_WQE_INLINE;
		w->inline_len = htole32(len);
	} else {
		struct qroce_sge *sge = (struct qroce_sge *)(w + 1);

		if ((uint32_t)wr->num_sge > qp->max_send_sge)
			return EINVAL;
		for (i = 0; i < wr->num_sge; i++) {
			sge[i].addr = htole64(wr->sg_list[i].addr);
			sge[i].length = htole32(wr->sg_list[i].length);
			sge[i].lkey = htole32(wr->sg_list[i].lkey);
		}
		w->num_sge = wr->num_sge;
	}
	wq->wrid[wq->pi & ((1u << wq->log2) - 1)] = wr->wr_id;
	wq->pi++;
	return 0;
}

static int qroce_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
			   struct ibv_send_wr **bad)
{
	struct qroce_context *ctx = to_qctx(ibqp->context);
	struct qroce_qp *qp = to_qqp(ibqp);
	uint32_t start;
	int err = 0;

	/* As on rxe: the SQ takes work from RTS on (ERR flushes it). */
	if (ibqp->state == IBV_QPS_RESET || ibqp->state == IBV_QPS_INIT ||
	    ibqp->state == IBV_QPS_RTR) {
		*bad = wr;
		return EINVAL;
	}
	pthread_spin_lock(&qp->sq.lock);
	start = qp->sq.pi;
	for (; wr; wr = wr->next) {
		err = qroce_write_send_wqe(qp, wr);
		if (err) {
			*bad = wr;
			break;
		}
	}
	if (qp->sq.pi != start) {
		udma_to_device_barrier();
		qroce_db(ctx, QROCE_DB_SQ, qp->qpn, qp->sq.pi);
	}
	pthread_spin_unlock(&qp->sq.lock);
	return err;
}

static int qroce_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
			   struct ibv_recv_wr **bad)
{
	struct qroce_context *ctx = to_qctx(ibqp->context);
	struct qroce_qp *qp = to_qqp(ibqp);
	struct qroce_wq *wq = &qp->rq;
	uint32_t start;
	int err = 0, i;

	if (ibqp->state == IBV_QPS_RESET) {
		*bad = wr;
		return EINVAL;
	}
	pthread_spin_lock(&wq->lock);
	start = wq->pi;
	for (; wr; wr = wr->next) {
		struct qroce_recv_wqe *w;
		struct qroce_sge *sge;

		if (wq->pi - wq->ci >= (1u << wq->log2)) {
			err = ENOMEM;
			*bad = wr;
			break;
		}
		if ((uint32_t)wr->num_sge > qp->max_recv_sge) {
			err = EINVAL;
			*bad = wr;
			break;
		}
		w = (void *)((uint8_t *)wq->buf +
			     ((size_t)(wq->pi & ((1u << wq->log2) - 1)) << wq->shift));
		memset(w, 0, sizeof(*w));
		w->num_sge = wr->num_sge;
		sge = (struct qroce_sge *)(w + 1);
		for (i = 0; i < wr->num_sge; i++) {
			sge[i].addr = htole64(wr->sg_list[i].addr);
			sge[i].length = htole32(wr->sg_list[i].length);
			sge[i].lkey = htole32(wr->sg_list[i].lkey);
		}
		wq->wrid[wq->pi & ((1u << wq->log2) - 1)] = wr->wr_id;
		wq->pi++;
	}
	if (wq->pi != start) {
		udma_to_device_barrier();
		qroce_db(ctx, QROCE_DB_RQ, qp->qpn, wq->pi);
	}
	pthread_spin_unlock(&wq->lock);
	return err;
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

const struct verbs_context_ops qroce_ctx_ops = {
	.alloc_pd = qroce_alloc_pd,
	.create_ah = qroce_create_ah,
	.create_cq = qroce_create_cq,
	.create_qp = qroce_create_qp,
	.dealloc_pd = qroce_dealloc_pd,
	.dereg_mr = qroce_dereg_mr,
	.destroy_ah = qroce_destroy_ah,
	.destroy_cq = qroce_destroy_cq,
	.destroy_qp = qroce_destroy_qp,
	.free_context = qroce_free_context,
	.modify_qp = qroce_modify_qp,
	.poll_cq = qroce_poll_cq,
	.post_recv = qroce_post_recv,
	.post_send = qroce_post_send,
	.query_device_ex = qroce_query_device,
	.query_port = qroce_query_port,
	.query_qp = qroce_query_qp,
	.reg_mr = qroce_reg_mr,
	.req_notify_cq = qroce_req_notify_cq,
};
