// SPDX-License-Identifier: GPL-2.0 or OpenIB.org BSD (MIT) See COPYING file
/*
 * libqroce verbs.  Control verbs go to the kernel (ibv_cmd_*); post, poll
 * and arm write rings in this process's memory and the doorbell page.
 */
#include <errno.h>
#include <stddef.h>
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

/*
 * A work queue's pi is moved by its poster (under wq->lock), its ci by the
 * poller of its CQ (under the CQ's lock); each side reads the other's.
 */
static uint32_t qroce_wq_ci(struct qroce_wq *wq)
{
	return atomic_load_explicit((_Atomic(uint32_t) *)&wq->ci,
				    memory_order_acquire);
}

static uint32_t qroce_wq_pi(struct qroce_wq *wq)
{
	return atomic_load_explicit((_Atomic(uint32_t) *)&wq->pi,
				    memory_order_relaxed);
}

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

#define QROCE_CQ_WC_FLAGS	IBV_WC_STANDARD_FLAGS

static void qroce_cq_ex_ops(struct qroce_cq *cq);

static struct ibv_cq_ex *qroce_create_cq_common(struct ibv_context *ibctx,
						struct ibv_cq_init_attr_ex *attr)
{
	struct uqroce_create_cq_ex cmd = {};
	struct uqroce_create_cq_ex_resp resp = {};
	struct qroce_cq *cq;
	uint32_t log2;
	int err;

	if (attr->comp_mask & ~(uint32_t)(IBV_CQ_INIT_ATTR_MASK_FLAGS |
					  IBV_CQ_INIT_ATTR_MASK_PD) ||
	    attr->wc_flags & ~(uint64_t)QROCE_CQ_WC_FLAGS ||
	    ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	     attr->flags & ~(uint32_t)IBV_CREATE_CQ_ATTR_SINGLE_THREADED)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (attr->cqe < 1 || attr->cqe >= (1u << QROCE_CQ_MAX_LOG2)) {
		errno = EINVAL;
		return NULL;
	}
	cq = calloc(1, sizeof(*cq));
	if (!cq) {
		errno = ENOMEM;
		return NULL;
	}
	log2 = max_t(uint32_t, 1, qroce_log2_up(attr->cqe + 1));
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
	/* The ring holds 2^n - 1 usable entries' worth of what was asked. */
	attr->cqe = (1u << log2) - 1;
	err = ibv_cmd_create_cq_ex(ibctx, attr, &cq->vcq, &cmd.ibv_cmd,
				   sizeof(cmd), &resp.ibv_resp, sizeof(resp), 0);
	if (err) {
		errno = err;
		goto err_ring;
	}
	cq->cqn = resp.cqn;
	qroce_cq_ex_ops(cq);
	return &cq->vcq.cq_ex;

err_ring:
	pthread_spin_destroy(&cq->lock);
	free(cq->buf);
err_free:
	free(cq);
	return NULL;
}

static struct ibv_cq *qroce_create_cq(struct ibv_context *ibctx, int cqe,
				      struct ibv_comp_channel *channel,
				      int comp_vector)
{
	struct ibv_cq_init_attr_ex attr = {
		.cqe = cqe < 0 ? 0 : cqe,
		.channel = channel,
		.comp_vector = comp_vector,
		.wc_flags = IBV_WC_STANDARD_FLAGS,
	};
	struct ibv_cq_ex *cq_ex;

	if (cqe < 1) {
		errno = EINVAL;
		return NULL;
	}
	cq_ex = qroce_create_cq_common(ibctx, &attr);
	return cq_ex ? ibv_cq_ex_to_cq(cq_ex) : NULL;
}

static struct ibv_cq_ex *qroce_create_cq_ex(struct ibv_context *ibctx,
					    struct ibv_cq_init_attr_ex *attr)
{
	return qroce_create_cq_common(ibctx, attr);
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

static enum ibv_wc_opcode qroce_cqe_wc_opcode(const struct qroce_cqe *e)
{
	if (e->opcode < ARRAY_SIZE(qroce_wc_opcode) &&
	    (e->opcode == QROCE_CQE_SEND || qroce_wc_opcode[e->opcode]))
		return qroce_wc_opcode[e->opcode];
	return (e->flags & QROCE_CQE_F_SQ) ? IBV_WC_SEND : IBV_WC_RECV;
}

static enum ibv_wc_status qroce_cqe_wc_status(const struct qroce_cqe *e)
{
	return e->status <= QROCE_WC_GENERAL_ERR ?
	       (enum ibv_wc_status)e->status : IBV_WC_GENERAL_ERR;
}

static unsigned int qroce_cqe_wc_flags(const struct qroce_cqe *e)
{
	unsigned int f = 0;

	if (e->flags & QROCE_CQE_F_IMM)
		f |= IBV_WC_WITH_IMM;
	if (e->flags & QROCE_CQE_F_INV)
		f |= IBV_WC_WITH_INV;
	if (e->flags & QROCE_CQE_F_GRH)
		f |= IBV_WC_GRH;
	return f;
}

/*
 * An SRQ WQE completed (on any CQ): take its wr_id, mark it done and hand
 * back every slot up to the first one still outstanding.  EINVAL for an
 * index that names no outstanding WQE.
 */
static int qroce_srq_retire(struct qroce_srq *srq, uint32_t idx,
			    uint64_t *wr_id)
{
	struct qroce_wq *wq = &srq->wq;
	uint32_t mask = (1u << wq->log2) - 1, ci;
	int err = 0;

	pthread_spin_lock(&wq->lock);
	ci = wq->ci;
	if (idx - ci >= wq->pi - ci || srq->done[idx & mask]) {
		err = EINVAL;
	} else {
		*wr_id = wq->wrid[idx & mask];
		srq->done[idx & mask] = 1;
		while (ci != wq->pi && srq->done[ci & mask])
			srq->done[ci++ & mask] = 0;
		atomic_store_explicit((_Atomic(uint32_t) *)&wq->ci, ci,
				      memory_order_release);
	}
	pthread_spin_unlock(&wq->lock);
	return err;
}

/*
 * Take the next CQE off the ring: copy it out, find its QP and wr_id, and
 * hand the slot back (cq_rec.ci).  CQEs that name no WQE of this context
 * are skipped.  Returns ENOENT when the ring is empty.  Called with the CQ
 * lock held.
 */
static int qroce_cq_pop(struct qroce_cq *cq, struct qroce_cqe *out,
			struct qroce_qp **qpp, uint64_t *wr_id)
{
	struct qroce_context *ctx = to_qctx(cq->vcq.cq.context);
	uint32_t mask = (1u << cq->log2) - 1;

	for (;;) {
		struct qroce_cqe *e = &cq->cqes[cq->ci & mask];
		struct qroce_qp *qp = NULL;
		struct qroce_wq *wq;
		uint32_t qpn, idx, ci;

		if ((atomic_load_explicit((_Atomic(uint8_t) *)&e->owner,
					  memory_order_relaxed) &
		     QROCE_OWNER_BIT) != qroce_owner_for(cq->ci, cq->log2))
			return ENOENT;
		/* the owner byte is written last: read the rest after it */
		udma_from_device_barrier();
		memcpy(out, e, sizeof(*out));
		cq->ci++;
		atomic_store_explicit((_Atomic(uint32_t) *)&cq->rec->ci,
				      htole32(cq->ci), memory_order_release);

		qpn = le32toh(out->qpn);
		idx = le32toh(out->wqe_index);
		if (qpn < ctx->qp_table_size)
			qp = atomic_load_explicit(
				(_Atomic(struct qroce_qp *) *)&ctx->qp_table[qpn],
				memory_order_acquire);
		if (!qp) {
			verbs_debug(verbs_get_ctx(cq->vcq.cq.context),
				    "qroce: CQ %u: CQE for unknown QP %u\n",
				    cq->cqn, qpn);
			continue;
		}
		if (out->flags & QROCE_CQE_F_SRQ) {
			if (!qp->srq || qroce_srq_retire(qp->srq, idx, wr_id)) {
				verbs_debug(verbs_get_ctx(cq->vcq.cq.context),
					    "qroce: CQ %u: QP %u: stale SRQ index %u\n",
					    cq->cqn, qpn, idx);
				continue;
			}
			*qpp = qp;
			return 0;
		}
		wq = (out->flags & QROCE_CQE_F_SQ) ? &qp->sq : &qp->rq;
		ci = wq->ci;	/* only this CQ's poller moves ci */
		if (idx - ci >= qroce_wq_pi(wq) - ci) {
			verbs_debug(verbs_get_ctx(cq->vcq.cq.context),
				    "qroce: CQ %u: QP %u: stale WQE index %u\n",
				    cq->cqn, qpn, idx);
			continue;
		}
		*wr_id = wq->wrid[idx & ((1u << wq->log2) - 1)];
		/* a send CQE also retires the unsignaled WQEs before it;
		 * release: wrid is read before the slot is handed back */
		atomic_store_explicit((_Atomic(uint32_t) *)&wq->ci, idx + 1,
				      memory_order_release);
		*qpp = qp;
		return 0;
	}
}

static int qroce_poll_cq(struct ibv_cq *ibcq, int n, struct ibv_wc *wc)
{
	struct qroce_cq *cq = to_qcq(ibcq);
	int done;

	pthread_spin_lock(&cq->lock);
	for (done = 0; done < n; done++) {
		struct ibv_wc *w = &wc[done];
		struct qroce_cqe e;
		struct qroce_qp *qp;

		if (qroce_cq_pop(cq, &e, &qp, &w->wr_id))
			break;
		w->status = qroce_cqe_wc_status(&e);
		w->opcode = qroce_cqe_wc_opcode(&e);
		w->vendor_err = e.vendor_err;
		w->byte_len = le32toh(e.byte_len);
		w->qp_num = qp->qpn;
		w->src_qp = le32toh(e.src_qp);
		w->wc_flags = qroce_cqe_wc_flags(&e);
		if (e.flags & QROCE_CQE_F_INV)
			w->invalidated_rkey = le32toh(e.imm_data);
		else
			w->imm_data = e.imm_data;	/* already big-endian */
		w->pkey_index = 0;
		w->slid = 0;
		w->sl = 0;
		w->dlid_path_bits = 0;
	}
	pthread_spin_unlock(&cq->lock);
	return done;
}

/* Extended CQ polling (ibv_start_poll ...): the same ring, one CQE at a time. */

static inline struct qroce_cq *to_qcq_ex(struct ibv_cq_ex *c)
{
	return container_of(c, struct qroce_cq, vcq.cq_ex);
}

static int qroce_cq_ex_load(struct qroce_cq *cq)
{
	int err = qroce_cq_pop(cq, &cq->cur, &cq->cur_qp, &cq->vcq.cq_ex.wr_id);

	if (!err)
		cq->vcq.cq_ex.status = qroce_cqe_wc_status(&cq->cur);
	return err;
}

static int qroce_start_poll(struct ibv_cq_ex *ibcq,
			    struct ibv_poll_cq_attr *attr)
{
	struct qroce_cq *cq = to_qcq_ex(ibcq);
	int err;

	if (attr->comp_mask)
		return EINVAL;
	pthread_spin_lock(&cq->lock);
	err = qroce_cq_ex_load(cq);
	if (err)
		pthread_spin_unlock(&cq->lock);
	return err;
}

static int qroce_next_poll(struct ibv_cq_ex *ibcq)
{
	return qroce_cq_ex_load(to_qcq_ex(ibcq));
}

static void qroce_end_poll(struct ibv_cq_ex *ibcq)
{
	struct qroce_cq *cq = to_qcq_ex(ibcq);

	cq->cur_qp = NULL;
	pthread_spin_unlock(&cq->lock);
}

static enum ibv_wc_opcode qroce_read_opcode(struct ibv_cq_ex *ibcq)
{
	return qroce_cqe_wc_opcode(&to_qcq_ex(ibcq)->cur);
}

static uint32_t qroce_read_vendor_err(struct ibv_cq_ex *ibcq)
{
	return to_qcq_ex(ibcq)->cur.vendor_err;
}

static uint32_t qroce_read_byte_len(struct ibv_cq_ex *ibcq)
{
	return le32toh(to_qcq_ex(ibcq)->cur.byte_len);
}

static __be32 qroce_read_imm_data(struct ibv_cq_ex *ibcq)
{
	struct qroce_cq *cq = to_qcq_ex(ibcq);

	/*
	 * The immediate is raw big-endian; an invalidated rkey (LE in the
	 * CQE) is returned in host order, as ibv_wc_read_invalidated_rkey()
	 * expects.
	 */
	if (cq->cur.flags & QROCE_CQE_F_INV)
		return (__force __be32)le32toh(cq->cur.imm_data);
	return cq->cur.imm_data;
}

static uint32_t qroce_read_qp_num(struct ibv_cq_ex *ibcq)
{
	return to_qcq_ex(ibcq)->cur_qp->qpn;
}

static uint32_t qroce_read_src_qp(struct ibv_cq_ex *ibcq)
{
	return le32toh(to_qcq_ex(ibcq)->cur.src_qp);
}

static unsigned int qroce_read_wc_flags(struct ibv_cq_ex *ibcq)
{
	return qroce_cqe_wc_flags(&to_qcq_ex(ibcq)->cur);
}

static uint32_t qroce_read_slid(struct ibv_cq_ex *ibcq)
{
	return 0;	/* RoCE has no LIDs */
}

static uint8_t qroce_read_sl(struct ibv_cq_ex *ibcq)
{
	return 0;
}

static uint8_t qroce_read_dlid_path_bits(struct ibv_cq_ex *ibcq)
{
	return 0;
}

static void qroce_cq_ex_ops(struct qroce_cq *cq)
{
	struct ibv_cq_ex *c = &cq->vcq.cq_ex;

	c->start_poll = qroce_start_poll;
	c->next_poll = qroce_next_poll;
	c->end_poll = qroce_end_poll;
	c->read_opcode = qroce_read_opcode;
	c->read_vendor_err = qroce_read_vendor_err;
	c->read_byte_len = qroce_read_byte_len;
	c->read_imm_data = qroce_read_imm_data;
	c->read_qp_num = qroce_read_qp_num;
	c->read_src_qp = qroce_read_src_qp;
	c->read_wc_flags = qroce_read_wc_flags;
	c->read_slid = qroce_read_slid;
	c->read_sl = qroce_read_sl;
	c->read_dlid_path_bits = qroce_read_dlid_path_bits;
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
	if (!wq->wrid)
		return;		/* never set up (a QP's RQ with an SRQ) */
	pthread_spin_destroy(&wq->lock);
	free(wq->buf);
	free(wq->wrid);
}

static void qroce_qp_ex_ops(struct qroce_qp *qp, uint64_t ops);

#define QROCE_RC_SEND_OPS (IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | \
			   IBV_QP_EX_WITH_SEND_WITH_INV | \
			   IBV_QP_EX_WITH_RDMA_WRITE | \
			   IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | \
			   IBV_QP_EX_WITH_RDMA_READ | \
			   IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | \
			   IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD)
#define QROCE_UC_SEND_OPS (IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | \
			   IBV_QP_EX_WITH_RDMA_WRITE | \
			   IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM)
#define QROCE_UD_SEND_OPS (IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM)

static uint64_t qroce_send_ops(enum ibv_qp_type type)
{
	switch (type) {
	case IBV_QPT_RC:
		return QROCE_RC_SEND_OPS;
	case IBV_QPT_UC:
		return QROCE_UC_SEND_OPS;
	case IBV_QPT_UD:
		return QROCE_UD_SEND_OPS;
	default:
		return 0;
	}
}

static struct ibv_qp *qroce_create_qp_common(struct ibv_context *ibctx,
					     struct ibv_qp_init_attr_ex *attr)
{
	struct qroce_context *ctx = to_qctx(ibctx);
	struct uqroce_create_qp cmd = {};
	struct uqroce_create_qp_resp resp = {};
	struct ibv_qp_cap *cap = &attr->cap;
	uint32_t sbytes, rbytes;
	struct qroce_qp *qp;
	int err;

	if (attr->comp_mask & ~(uint32_t)(IBV_QP_INIT_ATTR_PD |
					  IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) ||
	    !(attr->comp_mask & IBV_QP_INIT_ATTR_PD) ||
	    !qroce_send_ops(attr->qp_type)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if ((attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
	    attr->send_ops_flags & ~qroce_send_ops(attr->qp_type)) {
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
	if (qroce_log2_up(sbytes) > ctx->sq_wqe_max_shift ||
	    qroce_log2_up(rbytes) > ctx->rq_wqe_max_shift) {
		free(qp);
		errno = EINVAL;
		return NULL;
	}
	err = qroce_wq_init(&qp->sq, cap->max_send_wr, sbytes);
	if (err)
		goto err_free;
	if (attr->srq) {
		/* receives come from the SRQ: no RQ ring */
		qp->srq = to_qsrq(attr->srq);
		cap->max_recv_wr = 0;
		cap->max_recv_sge = 0;
	} else {
		err = qroce_wq_init(&qp->rq, cap->max_recv_wr, rbytes);
		if (err)
			goto err_sq;
		cap->max_recv_wr = 1u << qp->rq.log2;
		cap->max_recv_sge = min_t(uint32_t, ctx->max_sge,
					  ((1u << qp->rq.shift) -
					   sizeof(struct qroce_recv_wqe)) /
					  sizeof(struct qroce_sge));
	}
	/* Report what the rings really hold. */
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

	cmd.sq_buf_addr = (uintptr_t)qp->sq.buf;
	cmd.rq_buf_addr = (uintptr_t)qp->rq.buf;
	cmd.sq_buf_size = qp->sq.buf_size;
	cmd.rq_buf_size = qp->rq.buf_size;
	cmd.sq_log2_entries = qp->sq.log2;
	cmd.rq_log2_entries = qp->rq.log2;
	cmd.sq_wqe_shift = qp->sq.shift;
	cmd.rq_wqe_shift = qp->srq ? QROCE_RQ_WQE_MIN_SHIFT : qp->rq.shift;
	err = ibv_cmd_create_qp_ex(ibctx, &qp->vqp, attr, &cmd.ibv_cmd,
				   sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	if (err)
		goto err_rq;
	qp->qpn = resp.qpn;
	if (qp->qpn >= ctx->qp_table_size) {
		verbs_err(&ctx->ibv_ctx, "qroce: QPN %u out of range\n",
			  qp->qpn);
		ibv_cmd_destroy_qp(&qp->vqp.qp);
		err = EINVAL;
		goto err_rq;
	}
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		qroce_qp_ex_ops(qp, attr->send_ops_flags);
		qp->vqp.comp_mask |= VERBS_QP_EX;
	}
	pthread_mutex_lock(&ctx->qp_table_mutex);
	atomic_store_explicit((_Atomic(struct qroce_qp *) *)&ctx->qp_table[qp->qpn],
			      qp, memory_order_release);
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
		if (!qp->srq) {
			pthread_spin_lock(&qp->rq.lock);
			qp->rq.pi = qp->rq.ci = 0;
			pthread_spin_unlock(&qp->rq.lock);
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

/* Lock a QP's send and receive CQs in CQN order; once if they are one. */
static void qroce_lock_cqs(struct qroce_cq *scq, struct qroce_cq *rcq)
{
	if (scq == rcq) {
		pthread_spin_lock(&scq->lock);
	} else if (scq->cqn < rcq->cqn) {
		pthread_spin_lock(&scq->lock);
		pthread_spin_lock(&rcq->lock);
	} else {
		pthread_spin_lock(&rcq->lock);
		pthread_spin_lock(&scq->lock);
	}
}

static void qroce_unlock_cqs(struct qroce_cq *scq, struct qroce_cq *rcq)
{
	pthread_spin_unlock(&scq->lock);
	if (rcq != scq)
		pthread_spin_unlock(&rcq->lock);
}

/*
 * Take the CQEs of QP @qpn, which is gone, out of @cq (as mlx5 does): the
 * valid CQEs from the consumer index on are walked backwards, those of
 * other QPs are moved up over the dropped ones (each slot keeps its owner
 * byte), and the consumer index skips the freed slots.  SRQ WQEs that the
 * dropped CQEs consumed are retired.  No poll can then return a completion
 * of a destroyed QP, or hand a stale wr_id to a later QP with the same
 * number.  Called with cq->lock held, after the device destroyed the QP.
 */
static void qroce_cq_clean(struct qroce_cq *cq, uint32_t qpn,
			   struct qroce_srq *srq)
{
	uint32_t mask = (1u << cq->log2) - 1;
	uint32_t pi, nfreed = 0;
	uint64_t wr_id;

	for (pi = cq->ci; pi - cq->ci <= mask; pi++)
		if ((atomic_load_explicit(
			     (_Atomic(uint8_t) *)&cq->cqes[pi & mask].owner,
			     memory_order_relaxed) & QROCE_OWNER_BIT) !=
		    qroce_owner_for(pi, cq->log2))
			break;
	udma_from_device_barrier();
	while (pi != cq->ci) {
		struct qroce_cqe *e = &cq->cqes[--pi & mask];

		if (le32toh(e->qpn) == qpn) {
			if (srq && (e->flags & QROCE_CQE_F_SRQ))
				qroce_srq_retire(srq, le32toh(e->wqe_index),
						 &wr_id);
			nfreed++;
		} else if (nfreed) {
			memcpy(&cq->cqes[(pi + nfreed) & mask], e,
			       offsetof(struct qroce_cqe, owner));
		}
	}
	if (nfreed) {
		cq->ci += nfreed;
		atomic_store_explicit((_Atomic(uint32_t) *)&cq->rec->ci,
				      htole32(cq->ci), memory_order_release);
	}
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
	atomic_store_explicit((_Atomic(struct qroce_qp *) *)&ctx->qp_table[qp->qpn],
			      NULL, memory_order_relaxed);
	qroce_cq_clean(rcq, qp->qpn, qp->srq);
	if (scq != rcq)
		qroce_cq_clean(scq, qp->qpn, NULL);
	qroce_unlock_cqs(scq, rcq);
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

/* As on rxe: the SQ takes work from RTS on (ERR flushes it). */
static bool qroce_sq_open(struct qroce_qp *qp)
{
	enum ibv_qp_state s = qp->vqp.qp.state;

	return s != IBV_QPS_RESET && s != IBV_QPS_INIT && s != IBV_QPS_RTR;
}

/*
 * Start the send WQE at the SQ's producer index: clear its header, set
 * opcode and flags, remember wr_id.  The caller fills the rest and then
 * advances sq.pi.  NULL when the SQ is full.
 */
static struct qroce_send_wqe *qroce_sq_wqe(struct qroce_qp *qp, uint8_t op,
					   unsigned int send_flags,
					   uint64_t wr_id)
{
	struct qroce_wq *wq = &qp->sq;
	uint32_t slot = wq->pi & ((1u << wq->log2) - 1);
	struct qroce_send_wqe *w;

	if (wq->pi - qroce_wq_ci(wq) >= (1u << wq->log2))
		return NULL;
	w = (void *)((uint8_t *)wq->buf + ((size_t)slot << wq->shift));
	memset(w, 0, sizeof(*w));
	w->opcode = op;
	w->flags = ((send_flags & IBV_SEND_SIGNALED) || qp->sig_all ?
		    QROCE_WQE_SIGNALED : 0) |
		   (send_flags & IBV_SEND_SOLICITED ? QROCE_WQE_SOLICITED : 0) |
		   (send_flags & IBV_SEND_FENCE ? QROCE_WQE_FENCE : 0);
	wq->wrid[slot] = wr_id;
	return w;
}

static void qroce_wqe_set_sge(struct qroce_send_wqe *w, uint32_t i,
			      uint64_t addr, uint32_t length, uint32_t lkey)
{
	struct qroce_sge *sge = (struct qroce_sge *)(w + 1) + i;

	sge->addr = htole64(addr);
	sge->length = htole32(length);
	sge->lkey = htole32(lkey);
}

/* Append inline bytes to w's payload; EINVAL past the QP's inline limit. */
static int qroce_wqe_add_inline(struct qroce_qp *qp, struct qroce_send_wqe *w,
				const void *addr, size_t length)
{
	uint32_t len = le32toh(w->inline_len);

	if (length > qp->max_inline - len)
		return EINVAL;
	memcpy((uint8_t *)(w + 1) + len, addr, length);
	w->inline_len = htole32(len + length);
	w->flags |= QROCE_WQE_INLINE;
	return 0;
}

static void qroce_wqe_set_ud(struct qroce_send_wqe *w, struct ibv_ah *ibah,
			     uint32_t remote_qpn, uint32_t remote_qkey)
{
	struct qroce_ah *ah = container_of(ibah, struct qroce_ah, ibv_ah);

	w->ud.ahn = htole32(ah->ahn);
	w->ud.remote_qpn = htole32(remote_qpn);
	w->ud.remote_qkey = htole32(remote_qkey);
}

static int qroce_write_send_wqe(struct qroce_qp *qp, struct ibv_send_wr *wr)
{
	struct qroce_send_wqe *w;
	int i, err;

	if ((unsigned int)wr->opcode >= ARRAY_SIZE(qroce_wr_opcode) ||
	    !((1ull << wr->opcode) & qroce_send_ops(qp->vqp.qp.qp_type)))
		return EINVAL;
	if (wr->num_sge < 0 ||
	    (!(wr->send_flags & IBV_SEND_INLINE) &&
	     (uint32_t)wr->num_sge > qp->max_send_sge))
		return EINVAL;
	if (qp->vqp.qp.qp_type == IBV_QPT_UD && !wr->wr.ud.ah)
		return EINVAL;
	w = qroce_sq_wqe(qp, qroce_wr_opcode[wr->opcode], wr->send_flags,
			 wr->wr_id);
	if (!w)
		return ENOMEM;
	if (wr->opcode == IBV_WR_SEND_WITH_INV)
		w->imm_data = htole32(wr->invalidate_rkey);
	else if (wr->opcode == IBV_WR_SEND_WITH_IMM ||
		 wr->opcode == IBV_WR_RDMA_WRITE_WITH_IMM)
		w->imm_data = (__force __le32)wr->imm_data; /* raw big-endian */
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
	if (qp->vqp.qp.qp_type == IBV_QPT_UD)
		qroce_wqe_set_ud(w, wr->wr.ud.ah, wr->wr.ud.remote_qpn,
				 wr->wr.ud.remote_qkey);
	if (wr->send_flags & IBV_SEND_INLINE) {
		for (i = 0; i < wr->num_sge; i++) {
			err = qroce_wqe_add_inline(qp, w,
				(void *)(uintptr_t)wr->sg_list[i].addr,
				wr->sg_list[i].length);
			if (err)
				return err;
		}
		/* a zero-length inline send is still inline */
		w->flags |= QROCE_WQE_INLINE;
	} else {
		for (i = 0; i < wr->num_sge; i++)
			qroce_wqe_set_sge(w, i, wr->sg_list[i].addr,
					  wr->sg_list[i].length,
					  wr->sg_list[i].lkey);
		w->num_sge = wr->num_sge;
	}
	qp->sq.pi++;
	return 0;
}

static void qroce_ring_sq(struct qroce_qp *qp)
{
	/* WQEs must be visible before the device hears of them */
	udma_to_device_barrier();
	qroce_db(to_qctx(qp->vqp.qp.context), QROCE_DB_SQ, qp->qpn, qp->sq.pi);
}

static int qroce_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
			   struct ibv_send_wr **bad)
{
	struct qroce_qp *qp = to_qqp(ibqp);
	uint32_t start;
	int err = 0;

	if (!qroce_sq_open(qp)) {
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
	if (qp->sq.pi != start)
		qroce_ring_sq(qp);
	pthread_spin_unlock(&qp->sq.lock);
	return err;
}

/* ------------------------------------------------------------------ */
/* Extended send API (ibv_wr_*): WQEs are built in place between        */
/* wr_start and wr_complete, which rings the doorbell once.  The first  */
/* error sticks and makes wr_complete drop the whole batch.             */
/* ------------------------------------------------------------------ */

static inline struct qroce_qp *to_qqp_ex(struct ibv_qp_ex *q)
{
	return container_of(q, struct qroce_qp, vqp.qp_ex);
}

static void qroce_wr_start(struct ibv_qp_ex *ibqp)
{
	struct qroce_qp *qp = to_qqp_ex(ibqp);

	pthread_spin_lock(&qp->sq.lock);
	qp->ex_start = qp->sq.pi;
	qp->cur_wqe = NULL;
	qp->ex_err = qroce_sq_open(qp) ? 0 : EINVAL;
}

static int qroce_wr_complete(struct ibv_qp_ex *ibqp)
{
	struct qroce_qp *qp = to_qqp_ex(ibqp);
	int err = qp->ex_err;

	if (err)
		qp->sq.pi = qp->ex_start;
	else if (qp->sq.pi != qp->ex_start)
		qroce_ring_sq(qp);
	qp->cur_wqe = NULL;
	pthread_spin_unlock(&qp->sq.lock);
	return err;
}

static void qroce_wr_abort(struct ibv_qp_ex *ibqp)
{
	struct qroce_qp *qp = to_qqp_ex(ibqp);

	qp->sq.pi = qp->ex_start;
	qp->cur_wqe = NULL;
	pthread_spin_unlock(&qp->sq.lock);
}

/* Open a new WQE for opcode op; NULL (and the error recorded) if it cannot. */
static struct qroce_send_wqe *qroce_wr_new(struct qroce_qp *qp, uint8_t op)
{
	struct qroce_send_wqe *w;

	qp->cur_wqe = NULL;
	if (qp->ex_err)
		return NULL;
	w = qroce_sq_wqe(qp, op, qp->vqp.qp_ex.wr_flags, qp->vqp.qp_ex.wr_id);
	if (!w) {
		qp->ex_err = ENOMEM;
		return NULL;
	}
	if (qp->vqp.qp_ex.wr_flags & IBV_SEND_INLINE)
		w->flags |= QROCE_WQE_INLINE;
	qp->sq.pi++;
	qp->cur_wqe = w;
	return w;
}

static void qroce_wr_rdma(struct qroce_qp *qp, uint8_t op, uint32_t rkey,
			  uint64_t remote_addr, __le32 imm)
{
	struct qroce_send_wqe *w = qroce_wr_new(qp, op);

	if (!w)
		return;
	w->rdma.remote_addr = htole64(remote_addr);
	w->rdma.rkey = htole32(rkey);
	w->imm_data = imm;
}

static void qroce_wr_send(struct ibv_qp_ex *ibqp)
{
	qroce_wr_new(to_qqp_ex(ibqp), QROCE_WR_SEND);
}

static void qroce_wr_send_imm(struct ibv_qp_ex *ibqp, __be32 imm_data)
{
	struct qroce_send_wqe *w = qroce_wr_new(to_qqp_ex(ibqp),
						QROCE_WR_SEND_IMM);

	if (w)
		w->imm_data = (__force __le32)imm_data;	/* raw big-endian */
}

static void qroce_wr_send_inv(struct ibv_qp_ex *ibqp, uint32_t rkey)
{
	struct qroce_send_wqe *w = qroce_wr_new(to_qqp_ex(ibqp),
						QROCE_WR_SEND_INV);

	if (w)
		w->imm_data = htole32(rkey);
}

static void qroce_wr_rdma_write(struct ibv_qp_ex *ibqp, uint32_t rkey,
				uint64_t remote_addr)
{
	qroce_wr_rdma(to_qqp_ex(ibqp), QROCE_WR_RDMA_WRITE, rkey, remote_addr,
		      0);
}

static void qroce_wr_rdma_write_imm(struct ibv_qp_ex *ibqp, uint32_t rkey,
				    uint64_t remote_addr, __be32 imm_data)
{
	qroce_wr_rdma(to_qqp_ex(ibqp), QROCE_WR_RDMA_WRITE_IMM, rkey,
		      remote_addr, (__force __le32)imm_data);
}

static void qroce_wr_rdma_read(struct ibv_qp_ex *ibqp, uint32_t rkey,
			       uint64_t remote_addr)
{
	qroce_wr_rdma(to_qqp_ex(ibqp), QROCE_WR_RDMA_READ, rkey, remote_addr,
		      0);
}

static void qroce_wr_atomic_cmp_swp(struct ibv_qp_ex *ibqp, uint32_t rkey,
				    uint64_t remote_addr, uint64_t compare,
				    uint64_t swap)
{
	struct qroce_qp *qp = to_qqp_ex(ibqp);

	qroce_wr_rdma(qp, QROCE_WR_ATOMIC_CMP_SWP, rkey, remote_addr, 0);
	if (qp->cur_wqe) {
		qp->cur_wqe->rdma.compare_add = htole64(compare);
		qp->cur_wqe->rdma.swap = htole64(swap);
	}
}

static void qroce_wr_atomic_fetch_add(struct ibv_qp_ex *ibqp, uint32_t rkey,
				      uint64_t remote_addr, uint64_t add)
{
	struct qroce_qp *qp = to_qqp_ex(ibqp);

	qroce_wr_rdma(qp, QROCE_WR_ATOMIC_FETCH_ADD, rkey, remote_addr, 0);
	if (qp->cur_wqe)
		qp->cur_wqe->rdma.compare_add = htole64(add);
}

static void qroce_wr_set_ud_addr(struct ibv_qp_ex *ibqp, struct ibv_ah *ah,
				 uint32_t remote_qpn, uint32_t remote_qkey)
{
	struct qroce_qp *qp = to_qqp_ex(ibqp);

	if (!qp->cur_wqe)
		return;
	if (!ah) {
		qp->ex_err = EINVAL;
		return;
	}
	qroce_wqe_set_ud(qp->cur_wqe, ah, remote_qpn, remote_qkey);
}

static void qroce_wr_set_sge_list(struct ibv_qp_ex *ibqp, size_t num_sge,
				  const struct ibv_sge *sg_list)
{
	struct qroce_qp *qp = to_qqp_ex(ibqp);
	struct qroce_send_wqe *w = qp->cur_wqe;
	size_t i;

	if (!w)
		return;
	if (num_sge > qp->max_send_sge) {
		qp->ex_err = EINVAL;
		return;
	}
	w->flags &= ~QROCE_WQE_INLINE;
	w->inline_len = 0;
	for (i = 0; i < num_sge; i++)
		qroce_wqe_set_sge(w, i, sg_list[i].addr, sg_list[i].length,
				  sg_list[i].lkey);
	w->num_sge = num_sge;
}

static void qroce_wr_set_sge(struct ibv_qp_ex *ibqp, uint32_t lkey,
			     uint64_t addr, uint32_t length)
{
	struct ibv_sge sge = { .addr = addr, .length = length, .lkey = lkey };

	qroce_wr_set_sge_list(ibqp, 1, &sge);
}

static void qroce_wr_set_inline_data_list(struct ibv_qp_ex *ibqp,
					  size_t num_buf,
					  const struct ibv_data_buf *buf_list)
{
	struct qroce_qp *qp = to_qqp_ex(ibqp);
	struct qroce_send_wqe *w = qp->cur_wqe;
	size_t i;

	if (!w)
		return;
	w->num_sge = 0;
	w->inline_len = 0;
	w->flags |= QROCE_WQE_INLINE;
	for (i = 0; i < num_buf; i++) {
		if (qroce_wqe_add_inline(qp, w, buf_list[i].addr,
					 buf_list[i].length)) {
			qp->ex_err = EINVAL;
			return;
		}
	}
}

static void qroce_wr_set_inline_data(struct ibv_qp_ex *ibqp, void *addr,
				     size_t length)
{
	struct ibv_data_buf buf = { .addr = addr, .length = length };

	qroce_wr_set_inline_data_list(ibqp, 1, &buf);
}

static void qroce_qp_ex_ops(struct qroce_qp *qp, uint64_t ops)
{
	struct ibv_qp_ex *q = &qp->vqp.qp_ex;

	q->wr_start = qroce_wr_start;
	q->wr_complete = qroce_wr_complete;
	q->wr_abort = qroce_wr_abort;
	if (ops & IBV_QP_EX_WITH_SEND)
		q->wr_send = qroce_wr_send;
	if (ops & IBV_QP_EX_WITH_SEND_WITH_IMM)
		q->wr_send_imm = qroce_wr_send_imm;
	if (ops & IBV_QP_EX_WITH_SEND_WITH_INV)
		q->wr_send_inv = qroce_wr_send_inv;
	if (ops & IBV_QP_EX_WITH_RDMA_WRITE)
		q->wr_rdma_write = qroce_wr_rdma_write;
	if (ops & IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM)
		q->wr_rdma_write_imm = qroce_wr_rdma_write_imm;
	if (ops & IBV_QP_EX_WITH_RDMA_READ)
		q->wr_rdma_read = qroce_wr_rdma_read;
	if (ops & IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP)
		q->wr_atomic_cmp_swp = qroce_wr_atomic_cmp_swp;
	if (ops & IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD)
		q->wr_atomic_fetch_add = qroce_wr_atomic_fetch_add;
	if (qp->vqp.qp.qp_type == IBV_QPT_UD)
		q->wr_set_ud_addr = qroce_wr_set_ud_addr;
	q->wr_set_sge = qroce_wr_set_sge;
	q->wr_set_sge_list = qroce_wr_set_sge_list;
	q->wr_set_inline_data = qroce_wr_set_inline_data;
	q->wr_set_inline_data_list = qroce_wr_set_inline_data_list;
}

/*
 * Write a chain of receive WRs into @wq (an RQ or an SRQ) and ring
 * @db_off for object @obj once.  Called without wq->lock held.
 */
static int qroce_post_recv_wq(struct qroce_context *ctx, struct qroce_wq *wq,
			      uint32_t max_sge, uint32_t db_off, uint32_t obj,
			      struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	uint32_t start, mask = (1u << wq->log2) - 1;
	int err = 0, i;

	pthread_spin_lock(&wq->lock);
	start = wq->pi;
	for (; wr; wr = wr->next) {
		struct qroce_recv_wqe *w;
		struct qroce_sge *sge;

		if (wq->pi - qroce_wq_ci(wq) >= (1u << wq->log2)) {
			err = ENOMEM;
			*bad = wr;
			break;
		}
		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > max_sge) {
			err = EINVAL;
			*bad = wr;
			break;
		}
		w = (void *)((uint8_t *)wq->buf +
			     ((size_t)(wq->pi & mask) << wq->shift));
		memset(w, 0, sizeof(*w));
		w->num_sge = wr->num_sge;
		sge = (struct qroce_sge *)(w + 1);
		for (i = 0; i < wr->num_sge; i++) {
			sge[i].addr = htole64(wr->sg_list[i].addr);
			sge[i].length = htole32(wr->sg_list[i].length);
			sge[i].lkey = htole32(wr->sg_list[i].lkey);
		}
		wq->wrid[wq->pi & mask] = wr->wr_id;
		wq->pi++;
	}
	if (wq->pi != start) {
		udma_to_device_barrier();
		qroce_db(ctx, db_off, obj, wq->pi);
	}
	pthread_spin_unlock(&wq->lock);
	return err;
}

static int qroce_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
			   struct ibv_recv_wr **bad)
{
	struct qroce_qp *qp = to_qqp(ibqp);

	if (ibqp->state == IBV_QPS_RESET || qp->srq) {
		*bad = wr;
		return EINVAL;
	}
	return qroce_post_recv_wq(to_qctx(ibqp->context), &qp->rq,
				  qp->max_recv_sge, QROCE_DB_RQ, qp->qpn, wr,
				  bad);
}

/* ------------------------------------------------------------------ */
/* SRQ                                                                 */
/* ------------------------------------------------------------------ */

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
	err = qroce_wq_init(&srq->wq, attr->max_wr, bytes);
	if (err)
		goto err_free;
	srq->done = calloc(1u << srq->wq.log2, 1);
	if (!srq->done) {
		err = ENOMEM;
		goto err_wq;
	}
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
		goto err_done;
	srq->srqn = resp.srqn;
	return &srq->vsrq.srq;

err_done:
	free(srq->done);
err_wq:
	qroce_wq_fini(&srq->wq);
err_free:
	free(srq);
	errno = err;
	return NULL;
}

static int qroce_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr,
			    int mask)
{
	struct ibv_modify_srq cmd;

	/* the ring is the provider's: it cannot be resized behind its back */
	if (mask & IBV_SRQ_MAX_WR)
		return EINVAL;
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
	free(srq->done);
	qroce_wq_fini(&srq->wq);
	free(srq);
	return 0;
}

static int qroce_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
			       struct ibv_recv_wr **bad)
{
	struct qroce_srq *srq = to_qsrq(ibsrq);

	return qroce_post_recv_wq(to_qctx(ibsrq->context), &srq->wq,
				  srq->max_sge, QROCE_DB_SRQ, srq->srqn, wr,
				  bad);
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
	.create_cq_ex = qroce_create_cq_ex,
	.create_qp = qroce_create_qp,
	.create_qp_ex = qroce_create_qp_ex,
	.create_srq = qroce_create_srq,
	.dealloc_pd = qroce_dealloc_pd,
	.dereg_mr = qroce_dereg_mr,
	.destroy_ah = qroce_destroy_ah,
	.destroy_cq = qroce_destroy_cq,
	.destroy_qp = qroce_destroy_qp,
	.destroy_srq = qroce_destroy_srq,
	.free_context = qroce_free_context,
	.modify_qp = qroce_modify_qp,
	.modify_srq = qroce_modify_srq,
	.poll_cq = qroce_poll_cq,
	.post_recv = qroce_post_recv,
	.post_send = qroce_post_send,
	.post_srq_recv = qroce_post_srq_recv,
	.query_device_ex = qroce_query_device,
	.query_port = qroce_query_port,
	.query_qp = qroce_query_qp,
	.query_srq = qroce_query_srq,
	.reg_mr = qroce_reg_mr,
	.req_notify_cq = qroce_req_notify_cq,
};
