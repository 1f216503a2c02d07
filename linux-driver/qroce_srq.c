// SPDX-License-Identifier: GPL-2.0-only
/*
 * qroce SRQs: create, modify, query and destroy, and the kernel data path
 * next to them: post_srq_recv (its ring helpers are in qroce_wq.c).
 */
#include <linux/log2.h>
#include <rdma/uverbs_ioctl.h>
#include "qroce_verbs.h"

int qroce_create_srq(struct ib_srq *ibsrq,
		     struct ib_srq_init_attr *init,
		     struct ib_udata *udata)
{
	struct qroce_dev *dev = to_qdev(ibsrq->device);
	struct qroce_srq *srq = to_qsrq(ibsrq);
	struct qroce_ucontext *uc = rdma_udata_to_drv_context(udata,
					struct qroce_ucontext, ibuc);
	struct ib_srq_attr *attr = &init->attr;
	struct qroce_create_srq_req req = {};
	struct qroce_create_srq_resp resp = {};
	struct qroce_cmd cmd = {};
	struct qroce_bt_tmp t;
	u32 out[6];
	int err;

	if (!(dev->caps.features & QROCE_FEAT_SRQ))
		return -EOPNOTSUPP;
	if (init->srq_type != IB_SRQT_BASIC || !attr->max_wr ||
	    attr->max_wr > dev->caps.max_qp_wr ||
	    attr->max_sge > dev->caps.max_sge)
		return -EINVAL;
	spin_lock_init(&srq->lock);
	if (udata) {
		err = qroce_get_req(udata, &req, sizeof(req));
		if (err)
			return err;
		if (req.reserved || req.log2_entries > QROCE_WQ_MAX_LOG2 ||
		    (1u << req.log2_entries) < attr->max_wr ||
		    req.wqe_shift < QROCE_RQ_WQE_MIN_SHIFT ||
		    req.wqe_shift > QROCE_RQ_WQE_MAX_SHIFT ||
		    req.buf_size < (1u << (req.log2_entries + req.wqe_shift)))
			return -EINVAL;
		srq->wq.log2 = req.log2_entries;
		srq->wq.shift = req.wqe_shift;
	} else {
		u32 rb = sizeof(struct qroce_recv_wqe) +
			 attr->max_sge * sizeof(struct qroce_sge);

		srq->wq.log2 = order_base_2(attr->max_wr);
		srq->wq.shift = max_t(u32, QROCE_RQ_WQE_MIN_SHIFT,
				      order_base_2(rb));
		u32 n = 1u << srq->wq.log2;
		struct qroce_srq_tag *tags = kcalloc(n, sizeof(*tags),
						     GFP_KERNEL);
		u32 *free_tags = kcalloc(n, sizeof(*free_tags), GFP_KERNEL);

		if (!tags || !free_tags) {
			kfree(tags);
			kfree(free_tags);
			err = -ENOMEM;
			goto err_mem;
		}
		qroce_srq_tags_grow(srq, n, &tags, &free_tags);
	}
	if (attr->srq_limit >= (1u << srq->wq.log2)) {
		err = -EINVAL;
		goto err_mem;
	}
	srq->max_sge = attr->max_sge;
	err = qroce_ring_get(dev, &srq->wq.ring, !!udata, req.buf_addr,
			     1u << (srq->wq.log2 + srq->wq.shift),
			     &cmd.create_srq.ring, &t);
	if (err)
		goto err_ring;
	cmd.hdr.opcode = QROCE_CMD_CREATE_SRQ;
	cmd.create_srq.pdn = cpu_to_le32(to_qpd(ibsrq->pd)->pdn);
	cmd.create_srq.uar = cpu_to_le32(uc ? uc->uar : 0);
	cmd.create_srq.log2_entries = srq->wq.log2;
	cmd.create_srq.wqe_shift = srq->wq.shift;
	cmd.create_srq.limit = cpu_to_le32(attr->srq_limit);
	err = qroce_cmd_exec(dev, &cmd, out);
	qroce_bt_tmp_free(dev, &t);
	if (err)
		goto err_ring;
	srq->srqn = out[0];
	attr->max_wr = 1u << srq->wq.log2;
	resp.srqn = srq->srqn;
	err = qroce_publish(&dev->srq_xa, srq->srqn, srq, udata, &resp,
			    sizeof(resp));
	if (err)
		goto err_destroy;
	return 0;

err_destroy:
	qroce_destroy_cmd(dev, QROCE_CMD_DESTROY_SRQ, srq->srqn);
err_ring:
	qroce_ring_put(dev, &srq->wq.ring);
err_mem:
	kfree(srq->tags);
	kfree(srq->free_tags);
	return err;
}

int qroce_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct qroce_dev *dev = to_qdev(ibsrq->device);
	struct qroce_srq *srq = to_qsrq(ibsrq);
	int err;

	err = qroce_destroy_cmd(dev, QROCE_CMD_DESTROY_SRQ, srq->srqn);
	if (err)
		return err;
	xa_erase_irq(&dev->srq_xa, srq->srqn);
	qroce_ring_put(dev, &srq->wq.ring);
	kfree(srq->tags);
	kfree(srq->free_tags);
	return 0;
}

/* The new ring's log2 for @max_wr and, for a user SRQ, its address. */
static int qroce_srq_resize_args(struct qroce_dev *dev, struct qroce_srq *srq,
				 u32 max_wr, struct ib_udata *udata,
				 struct qroce_modify_srq_req *req)
{
	int err;

	if (!max_wr || max_wr > dev->caps.max_qp_wr)
		return -EINVAL;
	if (!udata) {
		req->log2_entries = max(1, order_base_2(max_wr));
		return 0;
	}
	err = qroce_get_req(udata, req, sizeof(*req));
	if (err)
		return err;
	if (req->log2_entries < 1 || req->log2_entries > QROCE_WQ_MAX_LOG2 ||
	    (1u << req->log2_entries) < max_wr ||
	    req->buf_size < (1u << (req->log2_entries + srq->wq.shift)))
		return -EINVAL;
	return 0;
}

/*
 * IB_SRQ_MAX_WR: a new ring; the device moves the WQEs not yet consumed
 * to it.  A kernel SRQ takes no posts meanwhile (they fail with EBUSY);
 * the provider holds its user SRQ's lock the same way.
 */
static int qroce_srq_resize(struct qroce_dev *dev, struct qroce_srq *srq,
			    struct ib_srq_attr *attr,
			    enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct qroce_modify_srq_req req = {};
	struct qroce_ring ring = {}, old;
	struct qroce_cmd cmd = {};
	struct qroce_bt_tmp t;
	struct qroce_srq_tag *tags = NULL;
	u32 *free_tags = NULL;
	unsigned long flags;
	int err;

	err = qroce_srq_resize_args(dev, srq, attr->max_wr, udata, &req);
	if (err)
		return err;
	if ((mask & IB_SRQ_LIMIT) &&
	    attr->srq_limit >= (1u << req.log2_entries))
		return -EINVAL;
	if (!udata) {
		tags = kcalloc(1u << req.log2_entries, sizeof(*tags),
			       GFP_KERNEL);
		free_tags = kcalloc(1u << req.log2_entries, sizeof(*free_tags),
				    GFP_KERNEL);
		if (!tags || !free_tags) {
			err = -ENOMEM;
			goto err_mem;
		}
	}
	err = qroce_ring_get(dev, &ring, !!udata, req.buf_addr,
			     1u << (req.log2_entries + srq->wq.shift),
			     &cmd.modify_srq.ring, &t);
	if (err)
		goto err_mem;
	spin_lock_irqsave(&srq->lock, flags);
	if (!udata && srq->wq.pi - srq->wq.ci > (1u << req.log2_entries))
		err = -EINVAL;
	else
		srq->resizing = true;
	spin_unlock_irqrestore(&srq->lock, flags);
	if (err)
		goto err_ring;
	cmd.hdr.opcode = QROCE_CMD_MODIFY_SRQ;
	cmd.modify_srq.srqn = cpu_to_le32(srq->srqn);
	cmd.modify_srq.attr_mask = cpu_to_le32(QROCE_SRQ_ATTR_MAX_WR |
			((mask & IB_SRQ_LIMIT) ? QROCE_SRQ_ATTR_LIMIT : 0));
	cmd.modify_srq.limit = cpu_to_le32(attr->srq_limit);
	cmd.modify_srq.log2_entries = req.log2_entries;
	err = qroce_cmd_exec(dev, &cmd, NULL);
	spin_lock_irqsave(&srq->lock, flags);
	old = srq->wq.ring;
	if (!err) {
		/* the WQEs keep their tags in the new ring */
		if (!udata)
			qroce_srq_tags_grow(srq, 1u << req.log2_entries, &tags,
					    &free_tags);
		srq->wq.ring = ring;
		srq->wq.log2 = req.log2_entries;
	}
	srq->resizing = false;
	spin_unlock_irqrestore(&srq->lock, flags);
	if (!err)
		ring = old;
err_ring:
	qroce_bt_tmp_free(dev, &t);
	qroce_ring_put(dev, &ring);
err_mem:
	kfree(tags);
	kfree(free_tags);
	return err;
}

int qroce_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		     enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct qroce_dev *dev = to_qdev(ibsrq->device);
	struct qroce_srq *srq = to_qsrq(ibsrq);
	struct qroce_cmd cmd = {};

	if (mask & ~(IB_SRQ_LIMIT | IB_SRQ_MAX_WR))
		return -EOPNOTSUPP;
	if (mask & IB_SRQ_MAX_WR) {
		if (!(dev->caps.features & QROCE_FEAT_RESIZE_SRQ))
			return -EOPNOTSUPP;
		return qroce_srq_resize(dev, srq, attr, mask, udata);
	}
	if (!(mask & IB_SRQ_LIMIT))
		return 0;
	if (attr->srq_limit >= (1u << srq->wq.log2))
		return -EINVAL;
	cmd.hdr.opcode = QROCE_CMD_MODIFY_SRQ;
	cmd.modify_srq.srqn = cpu_to_le32(srq->srqn);
	cmd.modify_srq.attr_mask = cpu_to_le32(QROCE_SRQ_ATTR_LIMIT);
	cmd.modify_srq.limit = cpu_to_le32(attr->srq_limit);
	return qroce_cmd_exec(dev, &cmd, NULL);
}

int qroce_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct qroce_srq *srq = to_qsrq(ibsrq);
	u32 out[6];
	int err;

	err = qroce_simple_cmd_out(to_qdev(ibsrq->device), QROCE_CMD_QUERY_SRQ,
				   srq->srqn, out);
	if (err)
		return err;
	attr->max_wr = 1u << srq->wq.log2;
	attr->max_sge = srq->max_sge;
	attr->srq_limit = out[0];
	return 0;
}

int qroce_post_srq_recv(struct ib_srq *ibsrq,
			const struct ib_recv_wr *wr,
			const struct ib_recv_wr **bad)
{
	struct qroce_srq *srq = to_qsrq(ibsrq);
	unsigned long flags;
	int err;

	spin_lock_irqsave(&srq->lock, flags);
	if (srq->resizing) {
		*bad = wr;
		spin_unlock_irqrestore(&srq->lock, flags);
		return -EBUSY;
	}
	err = qroce_post_recv_wq(to_qdev(ibsrq->device), &srq->wq, srq,
				 srq->max_sge, QROCE_DB_SRQ, srq->srqn, wr, bad);
	spin_unlock_irqrestore(&srq->lock, flags);
	return err;
}

/* the verbs of shared receive queues, set by qroce_ib_register() */
const struct ib_device_ops qroce_srq_ops = {
	.create_srq = qroce_create_srq,
	.destroy_srq = qroce_destroy_srq,
	.modify_srq = qroce_modify_srq,
	.query_srq = qroce_query_srq,
	.post_srq_recv = qroce_post_srq_recv,

	INIT_RDMA_OBJ_SIZE(ib_srq, qroce_srq, ibsrq),
};
