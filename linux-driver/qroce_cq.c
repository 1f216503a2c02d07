// SPDX-License-Identifier: GPL-2.0-only
/*
 * qroce CQs: create and destroy, and the kernel data path next to them:
 * arming, polling (with software flush completions on a dead device),
 * cleaning a destroyed QP's CQEs; completion and async event dispatch.
 */
#include <linux/log2.h>
#include <rdma/uverbs_ioctl.h>
#include "qroce_verbs.h"

int qroce_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		    struct uverbs_attr_bundle *attrs)
{
	struct ib_udata *udata = attrs ? &attrs->driver_udata : NULL;
	struct qroce_dev *dev = to_qdev(ibcq->device);
	struct qroce_cq *cq = to_qcq(ibcq);
	struct qroce_ucontext *uc = rdma_udata_to_drv_context(udata,
					struct qroce_ucontext, ibuc);
	struct qroce_create_cq_req req = {};
	struct qroce_create_cq_resp resp = {};
	struct qroce_cmd cmd = {};
	struct qroce_bt_tmp t;
	u64 uaddr = 0;
	u32 out[6];
	int err;

	if (attr->flags || attr->cqe < 1 || attr->cqe > dev->caps.max_cqe)
		return -EINVAL;
	if (udata) {
		err = qroce_get_req(udata, &req, sizeof(req));
		if (err)
			return err;
		if (req.log2_entries < 1 || req.log2_entries > QROCE_CQ_MAX_LOG2 ||
		    (1u << req.log2_entries) < attr->cqe ||
		    req.buf_size < (32u << req.log2_entries) + 64)
			return -EINVAL;
		cq->log2 = req.log2_entries;
		uaddr = req.buf_addr;
	} else {
		cq->log2 = max(1, order_base_2(attr->cqe + 1));
	}
	spin_lock_init(&cq->lock);
	err = qroce_ring_get(dev, &cq->ring, !!udata, uaddr,
			     (sizeof(struct qroce_cqe) << cq->log2) +
			     sizeof(struct qroce_cq_rec),
			     &cmd.create_cq.ring, &t);
	if (err)
		goto err_ring;
	cq->eqn = 1 + attr->comp_vector % QROCE_NUM_CEQS;
	cmd.hdr.opcode = QROCE_CMD_CREATE_CQ;
	cmd.create_cq.eqn = cpu_to_le32(cq->eqn);
	cmd.create_cq.uar = cpu_to_le32(uc ? uc->uar : 0);
	cmd.create_cq.log2_entries = cq->log2;
	err = qroce_cmd_exec(dev, &cmd, out);
	qroce_bt_tmp_free(dev, &t);
	if (err)
		goto err_ring;
	cq->cqn = out[0];
	ibcq->cqe = (1u << cq->log2) - 1;
	resp.cqn = cq->cqn;
	resp.log2_entries = cq->log2;
	err = qroce_publish(&dev->cq_xa, cq->cqn, cq, udata, &resp,
			    sizeof(resp));
	if (err)
		goto err_destroy;
	return 0;

err_destroy:
	qroce_destroy_cmd(dev, QROCE_CMD_DESTROY_CQ, cq->cqn);
err_ring:
	qroce_ring_put(dev, &cq->ring);
	return err;
}

int qroce_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct qroce_dev *dev = to_qdev(ibcq->device);
	struct qroce_cq *cq = to_qcq(ibcq);
	int err;

	err = qroce_destroy_cmd(dev, QROCE_CMD_DESTROY_CQ, cq->cqn);
	if (err)
		return err;
	xa_erase_irq(&dev->cq_xa, cq->cqn);
	qroce_ring_put(dev, &cq->ring);
	return 0;
}

/* The new ring's log2 and, for a user CQ, its address and the index. */
static int qroce_resize_args(struct qroce_dev *dev, unsigned int cqe,
			     struct ib_udata *udata,
			     struct qroce_resize_cq_req *req)
{
	int err;

	if (!cqe || cqe > dev->caps.max_cqe)
		return -EINVAL;
	if (!udata) {
		req->log2_entries = max(1, order_base_2(cqe + 1));
		return 0;
	}
	err = qroce_get_req(udata, req, sizeof(*req));
	if (err)
		return err;
	if (req->reserved || req->log2_entries < 1 ||
	    req->log2_entries > QROCE_CQ_MAX_LOG2 ||
	    (1u << req->log2_entries) < cqe ||
	    req->buf_size < (32u << req->log2_entries) + 64)
		return -EINVAL;
	return 0;
}

/*
 * A new ring: the device moves the CQEs not yet polled to its start.  A
 * kernel CQ is not polled meanwhile (its consumer index must not move
 * under the device); the provider holds its user CQ's lock the same way.
 */
int qroce_resize_cq(struct ib_cq *ibcq, unsigned int cqe,
		    struct ib_udata *udata)
{
	struct qroce_dev *dev = to_qdev(ibcq->device);
	struct qroce_cq *cq = to_qcq(ibcq);
	struct qroce_resize_cq_req req = {};
	struct qroce_cmd cmd = {};
	struct qroce_ring ring = {}, old;
	struct qroce_bt_tmp t;
	unsigned long flags;
	int err;

	if (!(dev->caps.features & QROCE_FEAT_RESIZE_CQ))
		return -EOPNOTSUPP;
	err = qroce_resize_args(dev, cqe, udata, &req);
	if (err)
		return err;
	err = qroce_ring_get(dev, &ring, !!udata, req.buf_addr,
			     (sizeof(struct qroce_cqe) << req.log2_entries) +
			     sizeof(struct qroce_cq_rec),
			     &cmd.resize_cq.ring, &t);
	if (err)
		return err;
	spin_lock_irqsave(&cq->lock, flags);
	cq->resizing = true;
	if (!udata)
		req.ci = cq->ci;
	spin_unlock_irqrestore(&cq->lock, flags);
	cmd.hdr.opcode = QROCE_CMD_RESIZE_CQ;
	cmd.resize_cq.cqn = cpu_to_le32(cq->cqn);
	cmd.resize_cq.ci = cpu_to_le32(req.ci);
	cmd.resize_cq.log2_entries = req.log2_entries;
	err = qroce_cmd_exec(dev, &cmd, NULL);
	qroce_bt_tmp_free(dev, &t);
	spin_lock_irqsave(&cq->lock, flags);
	old = cq->ring;
	if (!err) {
		cq->ring = ring;
		cq->log2 = req.log2_entries;
		cq->ci = 0;
		ibcq->cqe = (1u << cq->log2) - 1;
	}
	cq->resizing = false;
	spin_unlock_irqrestore(&cq->lock, flags);
	qroce_ring_put(dev, err ? &ring : &old);
	return err;
}

void qroce_handle_comp(struct qroce_dev *dev, u32 cqn)
{
	struct qroce_cq *cq;
	unsigned long flags;

	xa_lock_irqsave(&dev->cq_xa, flags);
	cq = xa_load(&dev->cq_xa, cqn);
	if (cq)		/* the event used up the arm; the handler may rearm */
		WRITE_ONCE(cq->armed, QROCE_CQ_DISARMED);
	if (cq && cq->ibcq.comp_handler)
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
	else if (!cq)
		ibdev_warn_ratelimited(&dev->ibdev,
				       "completion event for unknown CQ %u\n",
				       cqn);
	xa_unlock_irqrestore(&dev->cq_xa, flags);
}

/*
 * Call @cq's completion handler without a device event: on a dead device
 * the CQ's consumer is woken to poll the flush completions that
 * qroce_poll_cq makes up.  Not for IB_POLL_DIRECT CQs, whose owner polls
 * by itself (their handler warns).
 */
void qroce_kick_cq(struct qroce_cq *cq)
{
	if (cq->ring.umem || !cq->ibcq.comp_handler ||
	    cq->ibcq.poll_ctx == IB_POLL_DIRECT)
		return;
	cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
}

/* The device was reset: wake the consumers of every kernel CQ. */
void qroce_kick_cqs(struct qroce_dev *dev)
{
	struct qroce_cq *cq;
	unsigned long flags, i;

	xa_lock_irqsave(&dev->cq_xa, flags);
	xa_for_each(&dev->cq_xa, i, cq)
		qroce_kick_cq(cq);
	xa_unlock_irqrestore(&dev->cq_xa, flags);
}

static void qroce_dispatch(struct ib_event *ev)
{
	if (ev->element.qp && ev->element.qp->event_handler)
		ev->element.qp->event_handler(ev, ev->element.qp->qp_context);
}

void qroce_handle_async(struct qroce_dev *dev, const struct qroce_eqe *e)
{
	u32 handle = le32_to_cpu(e->handle);
	struct ib_event ev = { .device = &dev->ibdev };
	struct qroce_srq *srq;
	struct qroce_qp *qp;
	struct qroce_cq *cq;
	unsigned long flags;

	switch (e->type) {
	case QROCE_EQE_QP_FATAL:
	case QROCE_EQE_QP_REQ_ERR:
	case QROCE_EQE_QP_ACCESS_ERR:
	case QROCE_EQE_QP_LAST_WQE:
	case QROCE_EQE_SQ_DRAINED:
	case QROCE_EQE_COMM_EST:
		ev.event = e->type == QROCE_EQE_QP_FATAL ? IB_EVENT_QP_FATAL :
			   e->type == QROCE_EQE_QP_REQ_ERR ? IB_EVENT_QP_REQ_ERR :
			   e->type == QROCE_EQE_QP_ACCESS_ERR ?
				IB_EVENT_QP_ACCESS_ERR :
			   e->type == QROCE_EQE_QP_LAST_WQE ?
				IB_EVENT_QP_LAST_WQE_REACHED :
			   e->type == QROCE_EQE_SQ_DRAINED ? IB_EVENT_SQ_DRAINED :
			   IB_EVENT_COMM_EST;
		xa_lock_irqsave(&dev->qp_xa, flags);
		qp = xa_load(&dev->qp_xa, handle);
		if (qp) {
			ev.element.qp = &qp->ibqp;
			qroce_dispatch(&ev);
		}
		xa_unlock_irqrestore(&dev->qp_xa, flags);
		break;
	case QROCE_EQE_PAGE_FAULT:
		qroce_odp_event(dev, handle, le32_to_cpu(e->data));
		break;
	case QROCE_EQE_CQ_ERR:
		xa_lock_irqsave(&dev->cq_xa, flags);
		cq = xa_load(&dev->cq_xa, handle);
		if (cq && cq->ibcq.event_handler) {
			ev.event = IB_EVENT_CQ_ERR;
			ev.element.cq = &cq->ibcq;
			cq->ibcq.event_handler(&ev, cq->ibcq.cq_context);
		}
		xa_unlock_irqrestore(&dev->cq_xa, flags);
		break;
	case QROCE_EQE_SRQ_LIMIT:
		xa_lock_irqsave(&dev->srq_xa, flags);
		srq = xa_load(&dev->srq_xa, handle);
		if (srq && srq->ibsrq.event_handler) {
			ev.event = IB_EVENT_SRQ_LIMIT_REACHED;
			ev.element.srq = &srq->ibsrq;
			srq->ibsrq.event_handler(&ev, srq->ibsrq.srq_context);
		}
		xa_unlock_irqrestore(&dev->srq_xa, flags);
		break;
	case QROCE_EQE_PORT_ACTIVE:
	case QROCE_EQE_PORT_DOWN:
		if (!dev->ib_registered)
			break;
		ev.event = e->type == QROCE_EQE_PORT_ACTIVE ?
			   IB_EVENT_PORT_ACTIVE : IB_EVENT_PORT_ERR;
		ev.element.port_num = 1;
		ib_dispatch_event(&ev);
		break;
	default:
		ibdev_warn_ratelimited(&dev->ibdev,
				       "async event type 0x%x handle %u\n",
				       e->type, handle);
	}
}

int qroce_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags fl)
{
	struct qroce_cq *cq = to_qcq(ibcq);
	u32 v = (fl & IB_CQ_SOLICITED_MASK) == IB_CQ_SOLICITED ?
		QROCE_CQ_ARM_SOLICITED : QROCE_CQ_ARM_NEXT;
	unsigned long flags;
	int ret = 0;

	spin_lock_irqsave(&cq->lock, flags);
	WRITE_ONCE(cq->armed, v == QROCE_CQ_ARM_SOLICITED ?
		   QROCE_CQ_ARMED_SOLICITED : QROCE_CQ_ARMED_NEXT);
	qroce_db_ring(to_qdev(ibcq->device), QROCE_DB_CQ_ARM, cq->cqn,
		      v | (cq->ci & QROCE_CQ_ARM_CI_MASK));
	if (fl & IB_CQ_REPORT_MISSED_EVENTS) {
		struct qroce_cqe *e = (struct qroce_cqe *)cq->ring.va +
				      (cq->ci & ((1u << cq->log2) - 1));

		if ((READ_ONCE(e->owner) & QROCE_OWNER_BIT) ==
		    qroce_owner_for(cq->ci, cq->log2))
			ret = 1;
	}
	spin_unlock_irqrestore(&cq->lock, flags);
	return ret;
}

static const enum ib_wc_opcode qroce_wc_opcode[] = {
	[QROCE_CQE_SEND] = IB_WC_SEND,
	[QROCE_CQE_RDMA_WRITE] = IB_WC_RDMA_WRITE,
	[QROCE_CQE_RDMA_READ] = IB_WC_RDMA_READ,
	[QROCE_CQE_CMP_SWP] = IB_WC_COMP_SWAP,
	[QROCE_CQE_FETCH_ADD] = IB_WC_FETCH_ADD,
	[QROCE_CQE_BIND_MW] = IB_WC_BIND_MW,
	[QROCE_CQE_LOCAL_INV] = IB_WC_LOCAL_INV,
	[QROCE_CQE_REG_MR] = IB_WC_REG_MR,
	[QROCE_CQE_ATOMIC_WRITE] = IB_WC_ATOMIC_WRITE,
	[QROCE_CQE_FLUSH] = IB_WC_FLUSH,
	[QROCE_CQE_RECV] = IB_WC_RECV,
	[QROCE_CQE_RECV_RDMA_IMM] = IB_WC_RECV_RDMA_WITH_IMM,
};

static int qroce_poll_one(struct qroce_dev *dev, struct qroce_cq *cq,
			  struct ib_wc *wc)
{
	struct qroce_cqe *e = (struct qroce_cqe *)cq->ring.va +
			      (cq->ci & ((1u << cq->log2) - 1));
	struct qroce_cq_rec *rec = (struct qroce_cq_rec *)
		((struct qroce_cqe *)cq->ring.va + (1u << cq->log2));
	struct qroce_qp *qp;
	struct qroce_wq *wq;
	u32 idx;

	if ((READ_ONCE(e->owner) & QROCE_OWNER_BIT) !=
	    qroce_owner_for(cq->ci, cq->log2))
		return 0;
	dma_rmb();
	cq->ci++;
	WRITE_ONCE(rec->ci, cpu_to_le32(cq->ci));
	memset(wc, 0, sizeof(*wc));
	qp = xa_load(&dev->qp_xa, le32_to_cpu(e->qpn));
	if (!qp) {
		ibdev_warn_ratelimited(&dev->ibdev, "CQE for unknown QP %u\n",
				       le32_to_cpu(e->qpn));
		return -EAGAIN;
	}
	idx = le32_to_cpu(e->wqe_index);
	if (e->flags & QROCE_CQE_F_SRQ) {
		if (!qp->ibqp.srq ||
		    qroce_srq_retire(to_qsrq(qp->ibqp.srq), idx, &wc->wr_id)) {
			ibdev_warn_ratelimited(&dev->ibdev,
					       "CQE names SRQ WQE %u of QP %u, not outstanding\n",
					       idx, qp->qpn);
			return -EAGAIN;
		}
	} else {
		wq = (e->flags & QROCE_CQE_F_SQ) ? &qp->sq : &qp->rq;
		if (idx - wq->ci >= wq->pi - wq->ci) {
			ibdev_warn_ratelimited(&dev->ibdev,
					       "CQE names WQE %u outside [%u, %u)\n",
					       idx, wq->ci, wq->pi);
			return -EAGAIN;
		}
		wc->wr_id = wq->wrid[idx & ((1u << wq->log2) - 1)];
		wq->ci = idx + 1;
	}
	wc->qp = &qp->ibqp;
	wc->status = e->status <= IB_WC_GENERAL_ERR ? e->status :
		     IB_WC_GENERAL_ERR;
	wc->vendor_err = e->vendor_err;
	wc->opcode = e->opcode < ARRAY_SIZE(qroce_wc_opcode) ?
		     qroce_wc_opcode[e->opcode] : IB_WC_RECV;
	wc->byte_len = le32_to_cpu(e->byte_len);
	wc->src_qp = le32_to_cpu(e->src_qp);
	if (e->flags & QROCE_CQE_F_IMM) {
		wc->ex.imm_data = (__force __be32)e->imm_data;
		wc->wc_flags |= IB_WC_WITH_IMM;
	} else if (e->flags & QROCE_CQE_F_INV) {
		/* a SEND with Invalidate invalidated this rkey */
		wc->ex.invalidate_rkey = le32_to_cpu(e->imm_data);
		wc->wc_flags |= IB_WC_WITH_INVALIDATE;
	}
	if (e->flags & QROCE_CQE_F_GRH)
		wc->wc_flags |= IB_WC_GRH;
	if (qp->ibqp.qp_type == IB_QPT_GSI || qp->ibqp.qp_type == IB_QPT_UD) {
		memcpy(wc->smac, e->smac, ETH_ALEN);
		wc->wc_flags |= IB_WC_WITH_SMAC;
		wc->network_hdr_type = (e->flags & QROCE_CQE_F_IPV4) ?
				       RDMA_NETWORK_IPV4 : RDMA_NETWORK_IPV6;
		wc->wc_flags |= IB_WC_WITH_NETWORK_HDR_TYPE;
	}
	wc->pkey_index = 0;
	wc->port_num = 1;
	return 1;
}

/*
 * Flush completions for the outstanding WQEs of @wq, made up in software
 * because the device is dead (as mlx5's internal-error state does).
 */
static int qroce_flush_wq(struct qroce_qp *qp, struct qroce_wq *wq, bool sq,
			  struct ib_wc *wc, int n)
{
	int done = 0;

	while (done < n && wq->ci != READ_ONCE(wq->pi)) {
		memset(&wc[done], 0, sizeof(wc[done]));
		wc[done].wr_id = wq->wrid[wq->ci & ((1u << wq->log2) - 1)];
		wc[done].status = IB_WC_WR_FLUSH_ERR;
		wc[done].opcode = sq ? IB_WC_SEND : IB_WC_RECV;
		wc[done].qp = &qp->ibqp;
		wc[done].port_num = 1;
		wq->ci++;
		done++;
	}
	return done;
}

/*
 * A dead device completes nothing: every WQE still outstanding on a kernel
 * QP of @cq completes with a flush error, so that ULPs draining their QPs
 * (ib_drain_qp) and waiting for their work requests are not left hanging.
 * A QP found here cannot be destroyed meanwhile: destroy_qp takes the lock
 * of @cq, which the caller holds.
 */
static int qroce_poll_sw(struct qroce_dev *dev, struct qroce_cq *cq, int n,
			 struct ib_wc *wc)
{
	struct qroce_qp *qp;
	unsigned long i;
	int done = 0;

	xa_for_each(&dev->qp_xa, i, qp) {
		if (done == n)
			break;
		if (qp->ibqp.uobject)
			continue;
		if (qp->ibqp.send_cq == &cq->ibcq)
			done += qroce_flush_wq(qp, &qp->sq, true, wc + done,
					       n - done);
		if (qp->ibqp.recv_cq == &cq->ibcq && !qp->ibqp.srq)
			done += qroce_flush_wq(qp, &qp->rq, false, wc + done,
					       n - done);
	}
	return done;
}

int qroce_poll_cq(struct ib_cq *ibcq, int n, struct ib_wc *wc)
{
	struct qroce_dev *dev = to_qdev(ibcq->device);
	struct qroce_cq *cq = to_qcq(ibcq);
	unsigned long flags;
	int done = 0, r;

	spin_lock_irqsave(&cq->lock, flags);
	while (done < n && !cq->resizing) {
		r = qroce_poll_one(dev, cq, &wc[done]);
		if (r == 0)
			break;
		if (r > 0)
			done++;
	}
	if (done < n && qroce_dead(dev))
		done += qroce_poll_sw(dev, cq, n - done, wc + done);
	spin_unlock_irqrestore(&cq->lock, flags);
	return done;
}

/*
 * Take the CQEs of QP @qpn, which is gone, out of kernel CQ @cq, as mlx5
 * does: the valid CQEs from the consumer index on are walked backwards and
 * those of other QPs are moved up over the dropped ones (each slot keeps
 * its owner byte), then the consumer index skips the freed slots.  SRQ
 * WQEs the dropped CQEs consumed are retired.  A poll can then never hand
 * out a completion of a QP that no longer exists, or of a later QP that
 * reuses its number.  The caller holds cq->lock; the device has destroyed
 * the QP, so it writes no more CQEs for it.
 */
void qroce_cq_clean(struct qroce_cq *cq, u32 qpn, struct qroce_srq *srq)
{
	struct qroce_cqe *ring = cq->ring.va;
	struct qroce_cq_rec *rec = (struct qroce_cq_rec *)(ring +
							   (1u << cq->log2));
	u32 mask = (1u << cq->log2) - 1;
	u32 pi, nfreed = 0;
	u64 wr_id;

	for (pi = cq->ci; pi - cq->ci <= mask; pi++)
		if ((READ_ONCE(ring[pi & mask].owner) & QROCE_OWNER_BIT) !=
		    qroce_owner_for(pi, cq->log2))
			break;
	dma_rmb();
	while (pi != cq->ci) {
		struct qroce_cqe *e = &ring[--pi & mask];

		if (le32_to_cpu(e->qpn) == qpn) {
			if (srq && (e->flags & QROCE_CQE_F_SRQ))
				qroce_srq_retire(srq, le32_to_cpu(e->wqe_index),
						 &wr_id);
			nfreed++;
		} else if (nfreed) {
			memcpy(&ring[(pi + nfreed) & mask], e,
			       offsetof(struct qroce_cqe, owner));
		}
	}
	if (nfreed) {
		cq->ci += nfreed;
		WRITE_ONCE(rec->ci, cpu_to_le32(cq->ci));
	}
}

/* the verbs of completion queues, set by qroce_ib_register() */
const struct ib_device_ops qroce_cq_ops = {
	.create_cq = qroce_create_cq,
	.destroy_cq = qroce_destroy_cq,
	.poll_cq = qroce_poll_cq,
	.req_notify_cq = qroce_req_notify_cq,
	.resize_user_cq = qroce_resize_cq,

	INIT_RDMA_OBJ_SIZE(ib_cq, qroce_cq, ibcq),
};
