// SPDX-License-Identifier: GPL-2.0 or OpenIB.org BSD (MIT) See COPYING file
/*
 * libqroce control path, completion queues: create (the ring in this
 * process's memory, or a parent domain's), resize and destroy.  Polling
 * and arming are the data path's (qroce_poll.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <util/util.h>
#include <ccan/minmax.h>

#include "qroce.h"
#include "qroce_abi.h"

#define QROCE_CQ_WC_FLAGS	IBV_WC_STANDARD_FLAGS

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
	/* a CQ's domain must be a parent domain */
	if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) &&
	    (!attr->parent_domain || !qroce_parent(attr->parent_domain) ||
	     attr->parent_domain->context != ibctx)) {
		errno = EINVAL;
		return NULL;
	}
	cq = calloc(1, sizeof(*cq));
	if (!cq) {
		errno = ENOMEM;
		return NULL;
	}
	if (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD)
		cq->pd = qroce_parent(attr->parent_domain);
	log2 = max_t(uint32_t, 1, qroce_log2_up(attr->cqe + 1));
	cq->log2 = log2;
	cq->buf = qroce_alloc_ring(cq->pd, QROCE_RES_TYPE_CQ,
				   (sizeof(struct qroce_cqe) << log2) +
				   sizeof(struct qroce_cq_rec), &cq->buf_size,
				   &cq->mem);
	if (!cq->buf)
		goto err_free;
	cq->cqes = cq->buf;
	cq->rec = (struct qroce_cq_rec *)(cq->cqes + (1u << log2));
	qroce_spin_init(&cq->lock,
			((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
			 (attr->flags & IBV_CREATE_CQ_ATTR_SINGLE_THREADED)) ||
			(cq->pd && cq->pd->td));
	cmd.buf_addr = (uintptr_t)cq->buf;
	cmd.buf_size = cq->buf_size;
	cmd.log2_entries = log2;
	/* The ring holds 2^n - 1 usable entries' worth of what was asked. */
	attr->cqe = (1u << log2) - 1;
	/*
	 * The ring's address goes in the driver data, not in the core's
	 * CQ buffer attributes: no prov_attr, no CREATE_CQ_CMD_FLAGS_WITH_MEM_*.
	 */
	err = ibv_cmd_create_cq_ex(ibctx, attr, NULL, &cq->vcq, &cmd.ibv_cmd,
				   sizeof(cmd), &resp.ibv_resp, sizeof(resp), 0);
	if (err) {
		errno = err;
		goto err_ring;
	}
	cq->cqn = resp.cqn;
	qroce_cq_ex_ops(cq);
	qroce_parent_get(cq->pd);
	return &cq->vcq.cq_ex;

err_ring:
	qroce_spin_destroy(&cq->lock);
	qroce_free_ring(cq->buf, &cq->mem);
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

/*
 * A new ring for the CQ: the device moves the CQEs not yet polled to its
 * start.  The CQ's lock is held throughout, so no poll moves the
 * consumer index under the device.
 */
static int qroce_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	struct qroce_cq *cq = to_qcq(ibcq);
	struct uqroce_resize_cq cmd = {};
	struct ib_uverbs_resize_cq_resp resp = {};
	struct qroce_ring_mem mem;
	uint32_t log2;
	size_t size;
	void *buf;
	int err;

	if (cqe < 1 || cqe >= (1 << QROCE_CQ_MAX_LOG2))
		return EINVAL;
	log2 = max_t(uint32_t, 1, qroce_log2_up(cqe + 1));
	buf = qroce_alloc_ring(cq->pd, QROCE_RES_TYPE_CQ,
			       (sizeof(struct qroce_cqe) << log2) +
			       sizeof(struct qroce_cq_rec), &size, &mem);
	if (!buf)
		return errno;
	qroce_spin_lock(&cq->lock);
	cmd.buf_addr = (uintptr_t)buf;
	cmd.buf_size = size;
	cmd.log2_entries = log2;
	cmd.ci = cq->ci;
	err = ibv_cmd_resize_cq(ibcq, (1 << log2) - 1, &cmd.ibv_cmd,
				sizeof(cmd), &resp, sizeof(resp));
	if (!err) {
		struct qroce_ring_mem omem = cq->mem;
		void *obuf = cq->buf;

		cq->buf = buf;
		cq->mem = mem;
		buf = obuf;
		mem = omem;
		cq->buf_size = size;
		cq->log2 = log2;
		cq->cqes = cq->buf;
		cq->rec = (struct qroce_cq_rec *)(cq->cqes + (1u << log2));
		cq->ci = 0;
	}
	qroce_spin_unlock(&cq->lock);
	qroce_free_ring(buf, &mem);
	return err;
}

static int qroce_destroy_cq(struct ibv_cq *ibcq)
{
	struct qroce_cq *cq = to_qcq(ibcq);
	int err = ibv_cmd_destroy_cq(ibcq);

	if (err)
		return err;
	qroce_spin_destroy(&cq->lock);
	qroce_free_ring(cq->buf, &cq->mem);
	qroce_parent_put(cq->pd);
	free(cq);
	return 0;
}

const struct verbs_context_ops qroce_cq_ops = {
	.create_cq = qroce_create_cq,
	.create_cq_ex = qroce_create_cq_ex,
	.destroy_cq = qroce_destroy_cq,
	.resize_cq = qroce_resize_cq,
};
