// SPDX-License-Identifier: GPL-2.0-only
/*
 * qroce QPs: create, modify, query and destroy, and the kernel data path
 * next to them: post_send and post_recv (user QPs post in the provider).
 */
#include <linux/log2.h>
#include <rdma/ib_cache.h>
#include <rdma/uverbs_ioctl.h>
#include "qroce_verbs.h"

static int qroce_qp_type(enum ib_qp_type t)
{
	switch (t) {
	case IB_QPT_RC:
		return QROCE_QPT_RC;
	case IB_QPT_UC:
		return QROCE_QPT_UC;
	case IB_QPT_UD:
		return QROCE_QPT_UD;
	case IB_QPT_GSI:
		return QROCE_QPT_GSI;
	default:
		return -EOPNOTSUPP;
	}
}

/* The create attributes against the device's capabilities. */
static int qroce_create_qp_check(struct qroce_dev *dev, int type,
				 struct ib_qp_init_attr *init)
{
	struct ib_qp_cap *cap = &init->cap;
	u32 flags = init->create_flags;

	if (type < 0)
		return type;
	/* a UD QP may block the copies of its own multicast sends */
	if (type == QROCE_QPT_UD && (dev->caps.features & QROCE_FEAT_MCAST))
		flags &= ~IB_QP_CREATE_BLOCK_MULTICAST_LOOPBACK;
	/* a device without their data path: fail here, not hang later */
	if ((type == QROCE_QPT_UC && !(dev->caps.features & QROCE_FEAT_UC)) ||
	    (type == QROCE_QPT_UD && !(dev->caps.features & QROCE_FEAT_UD)))
		return -EOPNOTSUPP;
	if ((init->srq && !(dev->caps.features & QROCE_FEAT_SRQ)) ||
	    (init->srq && type != QROCE_QPT_RC && type != QROCE_QPT_UD) ||
	    flags ||
	    cap->max_send_wr > dev->caps.max_qp_wr ||
	    cap->max_recv_wr > dev->caps.max_qp_wr ||
	    cap->max_send_sge > dev->caps.max_sge ||
	    cap->max_recv_sge > dev->caps.max_sge ||
	    cap->max_inline_data > dev->caps.max_inline)
		return -EINVAL;
	return 0;
}

/* A user QP: the ring sizes the provider chose, in @req, checked. */
static int qroce_qp_size_user(struct qroce_qp *qp,
			      struct ib_qp_init_attr *init,
			      struct ib_udata *udata,
			      struct qroce_create_qp_req *req)
{
	struct ib_qp_cap *cap = &init->cap;
	int err;

	err = qroce_get_req(udata, req, sizeof(*req));
	if (err)
		return err;
	if (req->reserved ||
	    req->sq_log2_entries > QROCE_WQ_MAX_LOG2 ||
	    req->sq_wqe_shift < QROCE_SQ_WQE_MIN_SHIFT ||
	    req->sq_wqe_shift > QROCE_SQ_WQE_MAX_SHIFT ||
	    (1u << req->sq_log2_entries) < cap->max_send_wr ||
	    req->sq_buf_size <
	    (1u << (req->sq_log2_entries + req->sq_wqe_shift)))
		return -EINVAL;
	/* a QP on an SRQ has no RQ ring */
	if (init->srq ? req->rq_log2_entries || req->rq_buf_addr :
	    req->rq_log2_entries > QROCE_WQ_MAX_LOG2 ||
	    req->rq_wqe_shift < QROCE_RQ_WQE_MIN_SHIFT ||
	    req->rq_wqe_shift > QROCE_RQ_WQE_MAX_SHIFT ||
	    (1u << req->rq_log2_entries) < cap->max_recv_wr ||
	    req->rq_buf_size <
	    (1u << (req->rq_log2_entries + req->rq_wqe_shift)))
		return -EINVAL;
	qp->sq.log2 = req->sq_log2_entries;
	qp->sq.shift = req->sq_wqe_shift;
	qp->rq.log2 = req->rq_log2_entries;
	qp->rq.shift = req->rq_wqe_shift;
	return 0;
}

/*
 * A kernel QP: ring sizes from the capabilities asked for, and the wr_id
 * arrays (the caller frees them on failure).
 */
static int qroce_qp_size_kernel(struct qroce_qp *qp,
				struct ib_qp_init_attr *init)
{
	struct ib_qp_cap *cap = &init->cap;
	u32 sb = sizeof(struct qroce_send_wqe) +
		 max_t(u32, cap->max_send_sge * sizeof(struct qroce_sge),
		       cap->max_inline_data);
	u32 rb = sizeof(struct qroce_recv_wqe) +
		 cap->max_recv_sge * sizeof(struct qroce_sge);

	qp->sq.log2 = order_base_2(max(1u, cap->max_send_wr));
	qp->rq.log2 = order_base_2(max(1u, cap->max_recv_wr));
	qp->sq.shift = max_t(u32, QROCE_SQ_WQE_MIN_SHIFT, order_base_2(sb));
	qp->rq.shift = max_t(u32, QROCE_RQ_WQE_MIN_SHIFT, order_base_2(rb));
	if (init->srq)
		qp->rq.log2 = 0;
	qp->sq.wrid = kcalloc(1u << qp->sq.log2, sizeof(u64), GFP_KERNEL);
	qp->rq.wrid = kcalloc(1u << qp->rq.log2, sizeof(u64), GFP_KERNEL);
	if (!qp->sq.wrid || !qp->rq.wrid)
		return -ENOMEM;
	return 0;
}

/*
 * The SQ and RQ rings (a QP on an SRQ has no RQ ring), described in @c;
 * their page lists in @tsq and @trq.  On failure nothing is held.
 */
static int qroce_qp_rings(struct qroce_dev *dev, struct qroce_qp *qp,
			  struct ib_qp_init_attr *init, bool user,
			  const struct qroce_create_qp_req *req,
			  struct qroce_cmd_create_qp *c,
			  struct qroce_bt_tmp *tsq, struct qroce_bt_tmp *trq)
{
	int err;

	err = qroce_ring_get(dev, &qp->sq.ring, user, req->sq_buf_addr,
			     1u << (qp->sq.log2 + qp->sq.shift), &c->sq, tsq);
	if (err)
		return err;
	memset(trq, 0, sizeof(*trq));
	if (init->srq) {
		c->flags |= QROCE_CREATE_QP_SRQ;
		c->srqn = cpu_to_le32(to_qsrq(init->srq)->srqn);
		return 0;
	}
	err = qroce_ring_get(dev, &qp->rq.ring, user, req->rq_buf_addr,
			     1u << (qp->rq.log2 + qp->rq.shift), &c->rq, trq);
	if (err) {
		qroce_bt_tmp_free(dev, tsq);
		qroce_ring_put(dev, &qp->sq.ring);
	}
	return err;
}

/* Issue CREATE_QP; the page lists are freed either way. */
static int qroce_create_qp_cmd(struct qroce_dev *dev, struct qroce_qp *qp,
			       int type, struct ib_qp_init_attr *init,
			       struct qroce_ucontext *uc, struct qroce_cmd *cmd,
			       struct qroce_bt_tmp *tsq,
			       struct qroce_bt_tmp *trq)
{
	struct qroce_cmd_create_qp *c = &cmd->create_qp;
	u32 out[6];
	int err;

	cmd->hdr.opcode = QROCE_CMD_CREATE_QP;
	c->pdn = cpu_to_le32(to_qpd(qp->ibqp.pd)->pdn);
	c->send_cqn = cpu_to_le32(to_qcq(init->send_cq)->cqn);
	c->recv_cqn = cpu_to_le32(to_qcq(init->recv_cq)->cqn);
	c->uar = cpu_to_le32(uc ? uc->uar : 0);
	c->type = type;
	c->flags |= init->sq_sig_type == IB_SIGNAL_ALL_WR ?
		    QROCE_CREATE_QP_SIG_ALL : 0;
	if (init->create_flags & IB_QP_CREATE_BLOCK_MULTICAST_LOOPBACK)
		c->flags |= QROCE_CREATE_QP_BLOCK_MCAST_LB;
	c->sq_log2_entries = qp->sq.log2;
	c->rq_log2_entries = init->srq ? 0 : qp->rq.log2;
	c->sq_wqe_shift = qp->sq.shift;
	c->rq_wqe_shift = qp->rq.shift;
	err = qroce_cmd_exec(dev, cmd, out);
	qroce_bt_tmp_free(dev, trq);
	qroce_bt_tmp_free(dev, tsq);
	if (err)
		return err;
	qp->qpn = out[0];
	return 0;
}

/* The device made the QP: make it findable and answer the provider. */
static int qroce_create_qp_publish(struct qroce_dev *dev, struct qroce_qp *qp,
				   struct ib_qp_init_attr *init,
				   struct ib_udata *udata)
{
	struct qroce_create_qp_resp resp = {};
	struct ib_qp_cap *cap = &init->cap;
	int err;

	qp->ibqp.qp_num = qp->qpn;
	qp->sig_all = init->sq_sig_type == IB_SIGNAL_ALL_WR;
	qp->max_send_sge = cap->max_send_sge;
	qp->max_recv_sge = cap->max_recv_sge;
	qp->max_inline = cap->max_inline_data;
	resp.qpn = qp->qpn;
	mutex_lock(&dev->qp_mutex);	/* see qroce_destroy_qp */
	err = qroce_publish(&dev->qp_xa, qp->qpn, qp, udata, &resp,
			    sizeof(resp));
	mutex_unlock(&dev->qp_mutex);
	return err;
}

int qroce_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		    struct ib_udata *udata)
{
	struct qroce_dev *dev = to_qdev(ibqp->device);
	struct qroce_qp *qp = to_qqp(ibqp);
	struct qroce_ucontext *uc = rdma_udata_to_drv_context(udata,
					struct qroce_ucontext, ibuc);
	struct qroce_create_qp_req req = {};
	struct qroce_cmd cmd = {};
	struct qroce_bt_tmp tsq, trq;
	int type = qroce_qp_type(init->qp_type);
	int err;

	err = qroce_create_qp_check(dev, type, init);
	if (err)
		return err;
	spin_lock_init(&qp->sq_lock);
	spin_lock_init(&qp->rq_lock);
	qroce_odp_qp_init(qp);
	if (udata)
		err = qroce_qp_size_user(qp, init, udata, &req);
	else
		err = qroce_qp_size_kernel(qp, init);
	if (err)
		goto err_wrid;
	err = qroce_qp_rings(dev, qp, init, !!udata, &req, &cmd.create_qp,
			     &tsq, &trq);
	if (err)
		goto err_wrid;
	err = qroce_create_qp_cmd(dev, qp, type, init, uc, &cmd, &tsq, &trq);
	if (err)
		goto err_rings;
	err = qroce_create_qp_publish(dev, qp, init, udata);
	if (err)
		goto err_destroy;
	return 0;

err_destroy:
	/*
	 * Out of qp_xa again (qroce_publish): a page-fault event may have
	 * queued fault work meanwhile, which must be done before the QP goes.
	 */
	qroce_destroy_cmd(dev, QROCE_CMD_DESTROY_QP, qp->qpn);
	qroce_odp_qp_fini(qp);
err_rings:
	qroce_ring_put(dev, &qp->rq.ring);
	qroce_ring_put(dev, &qp->sq.ring);
err_wrid:
	kfree(qp->sq.wrid);
	kfree(qp->rq.wrid);
	return err;
}

/*
 * Lock the send and receive CQs of a QP, in CQN order; one lock when they
 * are the same CQ.
 */
static void qroce_lock_cqs(struct qroce_cq *scq, struct qroce_cq *rcq,
			   unsigned long *flags)
	__acquires(&scq->lock) __acquires(&rcq->lock)
{
	if (scq == rcq) {
		spin_lock_irqsave(&scq->lock, *flags);
		__acquire(&rcq->lock);
	} else if (scq->cqn < rcq->cqn) {
		spin_lock_irqsave(&scq->lock, *flags);
		spin_lock_nested(&rcq->lock, SINGLE_DEPTH_NESTING);
	} else {
		spin_lock_irqsave(&rcq->lock, *flags);
		spin_lock_nested(&scq->lock, SINGLE_DEPTH_NESTING);
	}
}

static void qroce_unlock_cqs(struct qroce_cq *scq, struct qroce_cq *rcq,
			     unsigned long *flags)
	__releases(&scq->lock) __releases(&rcq->lock)
{
	if (scq == rcq) {
		__release(&rcq->lock);
		spin_unlock_irqrestore(&scq->lock, *flags);
	} else if (scq->cqn < rcq->cqn) {
		spin_unlock(&rcq->lock);
		spin_unlock_irqrestore(&scq->lock, *flags);
	} else {
		spin_unlock(&scq->lock);
		spin_unlock_irqrestore(&rcq->lock, *flags);
	}
}

/*
 * A QP moved to RESET starts its rings over, and (a kernel QP; the
 * provider does it for its own) its CQEs still in its CQs are dropped,
 * as mlx5 does: a WQE flushed before the reset must not complete in the
 * QP's next life.  SRQ WQEs those CQEs name are retired.
 */
static void qroce_qp_reset_rings(struct qroce_qp *qp, bool user)
{
	struct ib_qp *ibqp = &qp->ibqp;
	struct qroce_cq *scq = to_qcq(ibqp->send_cq);
	struct qroce_cq *rcq = to_qcq(ibqp->recv_cq);
	unsigned long flags;

	if (!user) {
		qroce_lock_cqs(scq, rcq, &flags);
		qroce_cq_clean(rcq, qp->qpn, ibqp->srq ?
			       to_qsrq(ibqp->srq) : NULL);
		if (scq != rcq)
			qroce_cq_clean(scq, qp->qpn, NULL);
		qroce_unlock_cqs(scq, rcq, &flags);
	}
	qp->sq.pi = 0;
	qp->sq.ci = 0;
	qp->rq.pi = 0;
	qp->rq.ci = 0;
}

int qroce_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct qroce_dev *dev = to_qdev(ibqp->device);
	struct qroce_qp *qp = to_qqp(ibqp);
	struct qroce_cq *scq = to_qcq(ibqp->send_cq);
	struct qroce_cq *rcq = to_qcq(ibqp->recv_cq);
	unsigned long flags;
	int err;

	/*
	 * The device may give this QPN to a new QP as soon as it is destroyed:
	 * qp_mutex keeps a new kernel QP unpublished, and so without CQEs,
	 * until this one's are cleaned out.  Pollers find QPs by number under
	 * their CQ's lock: with both locks held, none is using this QP, and
	 * none will find it or its CQEs.  A user QP's CQEs are in user CQs,
	 * which the provider cleans.
	 */
	mutex_lock(&dev->qp_mutex);
	err = qroce_destroy_cmd(dev, QROCE_CMD_DESTROY_QP, qp->qpn);
	if (err) {
		mutex_unlock(&dev->qp_mutex);
		return err;
	}
	qroce_lock_cqs(scq, rcq, &flags);
	xa_lock(&dev->qp_xa);
	__xa_erase(&dev->qp_xa, qp->qpn);
	xa_unlock(&dev->qp_xa);
	if (!udata) {
		qroce_cq_clean(rcq, qp->qpn, ibqp->srq ?
			       to_qsrq(ibqp->srq) : NULL);
		if (scq != rcq)
			qroce_cq_clean(scq, qp->qpn, NULL);
	}
	qroce_unlock_cqs(scq, rcq, &flags);
	mutex_unlock(&dev->qp_mutex);
	qroce_odp_qp_fini(qp);
	qroce_ring_put(dev, &qp->sq.ring);
	qroce_ring_put(dev, &qp->rq.ring);
	kfree(qp->sq.wrid);
	kfree(qp->rq.wrid);
	/* the source GID reference the last IB_QP_AV took */
	rdma_destroy_ah_attr(&qp->attr.ah_attr);
	return 0;
}

/* The MODIFY_QP command for @attr and @mask, from @cur to @next. */
static int qroce_modify_qp_cmd(struct qroce_qp *qp, struct ib_qp_attr *attr,
			       int mask, enum ib_qp_state cur,
			       enum ib_qp_state next, u32 rd_atomic,
			       struct qroce_cmd *cmd)
{
	struct qroce_cmd_modify_qp *m = &cmd->modify_qp;

	cmd->hdr.opcode = QROCE_CMD_MODIFY_QP;
	m->qpn = cpu_to_le32(qp->qpn);
	m->attr_mask = cpu_to_le32(mask);
	m->cur_state = cur;
	m->new_state = next;
	m->path_mtu = attr->path_mtu;
	m->timeout = attr->timeout;
	m->retry_cnt = attr->retry_cnt;
	m->rnr_retry = attr->rnr_retry;
	m->min_rnr_timer = attr->min_rnr_timer;
	m->max_rd_atomic = rd_atomic;
	m->max_dest_rd_atomic = attr->max_dest_rd_atomic;
	m->access_flags = cpu_to_le32(attr->qp_access_flags &
				      QROCE_QP_ACCESS_MASK);
	m->qkey = cpu_to_le32(attr->qkey);
	m->sq_psn = cpu_to_le32(attr->sq_psn & 0xffffff);
	m->rq_psn = cpu_to_le32(attr->rq_psn & 0xffffff);
	m->dest_qpn = cpu_to_le32(attr->dest_qp_num & 0xffffff);
	if (mask & IB_QP_AV) {
		if (!(rdma_ah_get_ah_flags(&attr->ah_attr) & IB_AH_GRH))
			return -EINVAL;
		qroce_fill_av(&m->av, &attr->ah_attr);
	}
	return 0;
}

/*
 * Keep what was set, for query_qp.  The kept AV holds a reference on
 * its source GID: replacing it drops the old one, destroy_qp the last.
 */
static void qroce_qp_keep_attr(struct qroce_qp *qp, struct ib_qp_attr *attr,
			       int mask, enum ib_qp_state next, u32 rd_atomic)
{
	if (mask & IB_QP_AV)
		rdma_replace_ah_attr(&qp->attr.ah_attr, &attr->ah_attr);
	if (mask & IB_QP_ACCESS_FLAGS)
		qp->attr.qp_access_flags = attr->qp_access_flags;
	if (mask & IB_QP_PKEY_INDEX)
		qp->attr.pkey_index = attr->pkey_index;
	if (mask & IB_QP_PORT)
		qp->attr.port_num = attr->port_num;
	if (mask & IB_QP_QKEY)
		qp->attr.qkey = attr->qkey;
	if (mask & IB_QP_PATH_MTU)
		qp->attr.path_mtu = attr->path_mtu;
	if (mask & IB_QP_TIMEOUT)
		qp->attr.timeout = attr->timeout;
	if (mask & IB_QP_RETRY_CNT)
		qp->attr.retry_cnt = attr->retry_cnt;
	if (mask & IB_QP_RNR_RETRY)
		qp->attr.rnr_retry = attr->rnr_retry;
	if (mask & IB_QP_RQ_PSN)
		qp->attr.rq_psn = attr->rq_psn;
	if (mask & IB_QP_SQ_PSN)
		qp->attr.sq_psn = attr->sq_psn;
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		qp->attr.max_rd_atomic = rd_atomic;
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		qp->attr.max_dest_rd_atomic = attr->max_dest_rd_atomic;
	if (mask & IB_QP_MIN_RNR_TIMER)
		qp->attr.min_rnr_timer = attr->min_rnr_timer;
	if (mask & IB_QP_DEST_QPN)
		qp->attr.dest_qp_num = attr->dest_qp_num;
	qp->attr.qp_state = next;
	qp->attr_mask |= mask;
}

int qroce_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr,
		    int mask, struct ib_udata *udata)
{
	struct qroce_dev *dev = to_qdev(ibqp->device);
	struct qroce_qp *qp = to_qqp(ibqp);
	struct qroce_cmd cmd = {};
	enum ib_qp_state cur, next;
	u32 rd_atomic;
	int err;

	if (mask & ~IB_QP_ATTR_STANDARD_BITS)
		return -EOPNOTSUPP;
	cur = (mask & IB_QP_CUR_STATE) ? attr->cur_qp_state : qp->attr.qp_state;
	next = (mask & IB_QP_STATE) ? attr->qp_state : cur;
	if (!ib_modify_qp_is_ok(cur, next, ibqp->qp_type, mask))
		return -EINVAL;
	if ((mask & IB_QP_PORT) && attr->port_num != 1)
		return -EINVAL;
	if ((mask & IB_QP_PATH_MTU) && attr->path_mtu > IB_MTU_4096)
		return -EINVAL;
	/*
	 * Initiator depth beyond what the device keeps outstanding is clamped,
	 * as several RoCE HCAs do: applications (perftest) pass the peer's
	 * responder resources, which may be larger (rxe offers 128), and
	 * fewer reads in flight is always safe.  Responder resources cannot
	 * be promised beyond the device's, so those are refused.
	 */
	rd_atomic = min_t(u32, attr->max_rd_atomic, dev->caps.max_rd_atom);
	if ((mask & IB_QP_MAX_DEST_RD_ATOMIC) &&
	    attr->max_dest_rd_atomic > dev->caps.max_rd_atom)
		return -EINVAL;

	err = qroce_modify_qp_cmd(qp, attr, mask, cur, next, rd_atomic, &cmd);
	if (err)
		return err;
	err = qroce_cmd_exec(dev, &cmd, NULL);
	/*
	 * A dead device has no QPs left: moving one to ERR or RESET, as a
	 * ULP does to drain or tear it down, succeeds in software (its WQEs
	 * complete with flush errors from qroce_poll_cq).
	 */
	if (err && qroce_dead(dev) &&
	    (next == IB_QPS_ERR || next == IB_QPS_RESET))
		err = 0;
	if (err)
		return err;

	qroce_qp_keep_attr(qp, attr, mask, next, rd_atomic);
	if (next == IB_QPS_RESET)
		qroce_qp_reset_rings(qp, !!udata);
	return 0;
}

/*
 * QUERY_QP: the device's context of QP @qpn in @out[6]: state, SQ PSN, RQ
 * PSN, SQ and RQ WQEs consumed (include/qroce_hw.h).
 */
int qroce_qp_query_hw(struct qroce_dev *dev, u32 qpn, u32 *out)
{
	struct qroce_cmd cmd = {};

	cmd.hdr.opcode = QROCE_CMD_QUERY_QP;
	cmd.qpn.qpn = cpu_to_le32(qpn);
	return qroce_cmd_exec(dev, &cmd, out);
}

int qroce_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr,
		   int mask, struct ib_qp_init_attr *init)
{
	struct qroce_dev *dev = to_qdev(ibqp->device);
	struct qroce_qp *qp = to_qqp(ibqp);
	u32 out[6];
	int err;

	err = qroce_qp_query_hw(dev, qp->qpn, out);
	if (err)
		return err;
	memset(attr, 0, sizeof(*attr));
	memset(init, 0, sizeof(*init));
	*attr = qp->attr;
	/* ib_query_qp's callers take no reference on the GID attribute */
	attr->ah_attr.grh.sgid_attr = NULL;
	attr->qp_state = out[0];
	attr->cur_qp_state = out[0];
	attr->sq_psn = out[1];
	attr->rq_psn = out[2];
	attr->cap.max_send_wr = 1u << qp->sq.log2;
	attr->cap.max_recv_wr = 1u << qp->rq.log2;
	attr->cap.max_send_sge = qp->max_send_sge;
	attr->cap.max_recv_sge = qp->max_recv_sge;
	attr->cap.max_inline_data = qp->max_inline;
	init->cap = attr->cap;
	init->qp_type = ibqp->qp_type;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->sq_sig_type = qp->sig_all ? IB_SIGNAL_ALL_WR : IB_SIGNAL_REQ_WR;
	return 0;
}

/*
 * Kernel QPs: WQEs are written here; user QPs post in the provider
 * (qroce_write_send_wqe).  Which opcode a QP of each type takes is the
 * device's table (qroce_wr_ops, docs/hw-spec.md §9): the kernel adds
 * the local operations REG_MR and LOCAL_INV, on RC, UC and UD send queues
 * but not on the GSI QP's.
 */
static const u32 qroce_qpt_wrop[] = {
	[QROCE_QPT_RC] = QROCE_WROP_RC,
	[QROCE_QPT_UC] = QROCE_WROP_UC,
	[QROCE_QPT_UD] = QROCE_WROP_UD,
	[QROCE_QPT_GSI] = QROCE_WROP_UD,
};

/*
 * The device's opcode for @op on a QP of type @type, or -EINVAL.  A verbs
 * opcode not listed reads 0, QROCE_WR_SEND, which only IB_WR_SEND means.
 */
static int qroce_wr_opcode(enum ib_qp_type type, enum ib_wr_opcode op)
{
	static const u8 ops[] = {
		[IB_WR_RDMA_WRITE] = QROCE_WR_RDMA_WRITE,
		[IB_WR_RDMA_WRITE_WITH_IMM] = QROCE_WR_RDMA_WRITE_IMM,
		[IB_WR_SEND] = QROCE_WR_SEND,
		[IB_WR_SEND_WITH_IMM] = QROCE_WR_SEND_IMM,
		[IB_WR_SEND_WITH_INV] = QROCE_WR_SEND_INV,
		[IB_WR_RDMA_READ] = QROCE_WR_RDMA_READ,
		[IB_WR_ATOMIC_CMP_AND_SWP] = QROCE_WR_ATOMIC_CMP_SWP,
		[IB_WR_ATOMIC_FETCH_AND_ADD] = QROCE_WR_ATOMIC_FETCH_ADD,
		[IB_WR_LOCAL_INV] = QROCE_WR_LOCAL_INV,
		[IB_WR_REG_MR] = QROCE_WR_REG_MR,
	};
	int qpt = qroce_qp_type(type);
	u32 f;

	BUILD_BUG_ON(QROCE_WR_SEND != 0);
	if (qpt < 0 || (u32)op >= ARRAY_SIZE(ops) ||
	    (!ops[op] && op != IB_WR_SEND))
		return -EINVAL;
	f = qroce_wr_op_flags(ops[op]);
	if (!(f & qroce_qpt_wrop[qpt]) ||
	    (qpt == QROCE_QPT_GSI && (f & QROCE_WROP_LOCAL)))
		return -EINVAL;
	return ops[op];
}

/* REG_MR: load a fast-registration MR from the page list map_mr_sg made. */
static int qroce_wqe_reg_mr(struct qroce_send_wqe *w, const struct ib_reg_wr *r)
{
	struct qroce_mr *mr = to_qmr(r->mr);

	if (!mr->pbl || !mr->npages || mr->ibmr.length > U32_MAX ||
	    !qroce_access_ok(r->access))
		return -EINVAL;
	w->reg.iova = cpu_to_le64(mr->ibmr.iova);
	w->reg.pbl_addr = cpu_to_le64(mr->pbl_dma);
	w->reg.length = cpu_to_le32(mr->ibmr.length);
	w->reg.key = cpu_to_le32(r->key);
	w->reg.access = cpu_to_le32(qroce_hw_access(r->access));
	w->reg.npages = cpu_to_le16(mr->npages);
	w->reg.page_shift = ilog2(mr->ibmr.page_size);
	return 0;
}

/*
 * The operation's fields of the WQE header, after the common ones: those
 * of its handler, then those its flags in qroce_wr_ops call for.
 */
static int qroce_wqe_op(struct qroce_qp *qp, struct qroce_send_wqe *w,
			const struct ib_send_wr *wr)
{
	u32 f = qroce_wr_op_flags(w->opcode);

	if (w->opcode == QROCE_WR_REG_MR)
		return qroce_wqe_reg_mr(w, reg_wr(wr));
	if (w->opcode == QROCE_WR_LOCAL_INV) {
		w->imm_data = cpu_to_le32(wr->ex.invalidate_rkey);
		return 0;
	}
	if (f & QROCE_WROP_IMM)
		w->imm_data = (__force __le32)wr->ex.imm_data; /* raw big-endian */
	if (f & QROCE_WROP_INV)
		w->imm_data = cpu_to_le32(wr->ex.invalidate_rkey);
	if (f & QROCE_WROP_ATOMIC) {
		w->rdma.remote_addr = cpu_to_le64(atomic_wr(wr)->remote_addr);
		w->rdma.rkey = cpu_to_le32(atomic_wr(wr)->rkey);
		w->rdma.compare_add = cpu_to_le64(atomic_wr(wr)->compare_add);
		w->rdma.swap = cpu_to_le64(atomic_wr(wr)->swap);
	} else if (f & QROCE_WROP_REMOTE) {
		w->rdma.remote_addr = cpu_to_le64(rdma_wr(wr)->remote_addr);
		w->rdma.rkey = cpu_to_le32(rdma_wr(wr)->rkey);
	} else if (qp->ibqp.qp_type == IB_QPT_UD ||
		   qp->ibqp.qp_type == IB_QPT_GSI) {
		const struct ib_ud_wr *ud = ud_wr(wr);

		if (!ud->ah)
			return -EINVAL;
		w->ud.ahn = cpu_to_le32(container_of(ud->ah, struct qroce_ah,
						     ibah)->ahn);
		w->ud.remote_qpn = cpu_to_le32(ud->remote_qpn);
		w->ud.remote_qkey = cpu_to_le32(ud->remote_qkey);
	}
	return 0;
}

/*
 * The WQE's payload: SGEs or, with IB_SEND_INLINE, the bytes themselves
 * (each SGE's addr is then a kernel virtual address), at most the QP's
 * max_inline_data in all.  Opcodes without SGEs (local ones) have none;
 * those whose response fills their SGEs (READs, atomics) cannot be inline.
 */
static int qroce_wqe_data(struct qroce_qp *qp, struct qroce_send_wqe *w,
			  const struct ib_send_wr *wr)
{
	u8 *dst = (u8 *)(w + 1);
	u32 len = 0;
	int i;

	if (qroce_wr_op_flags(w->opcode) & QROCE_WROP_NO_SGE)
		return 0;
	if (!(wr->send_flags & IB_SEND_INLINE)) {
		if (wr->num_sge < 0 || wr->num_sge > qp->max_send_sge)
			return -EINVAL;
		qroce_put_sges((struct qroce_sge *)dst, wr->sg_list,
			       wr->num_sge);
		w->num_sge = wr->num_sge;
		return 0;
	}
	if (qroce_wr_op_flags(w->opcode) & QROCE_WROP_READS)
		return -EINVAL;
	for (i = 0; i < wr->num_sge; i++) {
		if (wr->sg_list[i].length > qp->max_inline - len)
			return -EINVAL;
		memcpy(dst + len, (void *)(uintptr_t)wr->sg_list[i].addr,
		       wr->sg_list[i].length);
		len += wr->sg_list[i].length;
	}
	/* a zero-length inline send is still inline */
	w->inline_len = cpu_to_le32(len);
	w->flags |= QROCE_WQE_INLINE;
	return 0;
}

/* Write @wr at the SQ's producer index; the caller advances it. */
static int qroce_write_send_wqe(struct qroce_qp *qp,
				const struct ib_send_wr *wr)
{
	struct qroce_wq *wq = &qp->sq;
	struct qroce_send_wqe *w;
	int op, err;

	if (wq->pi - wq->ci >= (1u << wq->log2))
		return -ENOMEM;
	op = qroce_wr_opcode(qp->ibqp.qp_type, wr->opcode);
	if (op < 0)
		return op;
	w = qroce_wq_slot(wq);
	memset(w, 0, sizeof(*w));
	w->opcode = op;
	w->flags = ((wr->send_flags & IB_SEND_SIGNALED) || qp->sig_all ?
		    QROCE_WQE_SIGNALED : 0) |
		   (wr->send_flags & IB_SEND_SOLICITED ?
		    QROCE_WQE_SOLICITED : 0) |
		   (wr->send_flags & IB_SEND_FENCE ? QROCE_WQE_FENCE : 0);
	err = qroce_wqe_op(qp, w, wr);
	if (err)
		return err;
	err = qroce_wqe_data(qp, w, wr);
	if (err)
		return err;
	wq->wrid[wq->pi & ((1u << wq->log2) - 1)] = wr->wr_id;
	return 0;
}

int qroce_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad)
{
	struct qroce_dev *dev = to_qdev(ibqp->device);
	struct qroce_qp *qp = to_qqp(ibqp);
	unsigned long flags;
	u32 start;
	int err = 0;

	spin_lock_irqsave(&qp->sq_lock, flags);
	start = qp->sq.pi;
	for (; wr; wr = wr->next) {
		err = qroce_write_send_wqe(qp, wr);
		if (err) {
			*bad = wr;
			break;
		}
		qp->sq.pi++;
	}
	if (qp->sq.pi != start) {
		dma_wmb();
		qroce_db_ring(dev, QROCE_DB_SQ, qp->qpn, qp->sq.pi);
	}
	spin_unlock_irqrestore(&qp->sq_lock, flags);
	/* a dead device completes nothing: flush what was posted */
	if (unlikely(qroce_dead(dev)))
		qroce_kick_cq(to_qcq(ibqp->send_cq));
	return err;
}

int qroce_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		    const struct ib_recv_wr **bad)
{
	struct qroce_qp *qp = to_qqp(ibqp);
	unsigned long flags;
	int err;

	if (ibqp->srq) {
		*bad = wr;		/* receives are posted to the SRQ */
		return -EINVAL;
	}
	spin_lock_irqsave(&qp->rq_lock, flags);
	err = qroce_post_recv_wq(to_qdev(ibqp->device), &qp->rq, NULL,
				 qp->max_recv_sge, QROCE_DB_RQ, qp->qpn, wr, bad);
	spin_unlock_irqrestore(&qp->rq_lock, flags);
	if (unlikely(qroce_dead(to_qdev(ibqp->device))))
		qroce_kick_cq(to_qcq(ibqp->recv_cq));
	return err;
}

/*
 * A UD QP joins or leaves a multicast group.  The group's MAC needs no
 * filter: the device takes every frame to a multicast MAC whose RoCE
 * destination GID is one of its groups.
 */
static int qroce_mcast_cmd(struct ib_qp *ibqp, union ib_gid *gid, u8 opcode)
{
	struct qroce_dev *dev = to_qdev(ibqp->device);
	struct qroce_cmd cmd = {};

	if (!(dev->caps.features & QROCE_FEAT_MCAST))
		return -EOPNOTSUPP;
	cmd.hdr.opcode = opcode;
	cmd.mcast.qpn = cpu_to_le32(ibqp->qp_num);
	memcpy(cmd.mcast.gid, gid->raw, sizeof(cmd.mcast.gid));
	return qroce_cmd_exec(dev, &cmd, NULL);
}

int qroce_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	return qroce_mcast_cmd(ibqp, gid, QROCE_CMD_ATTACH_MCAST);
}

int qroce_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	return qroce_mcast_cmd(ibqp, gid, QROCE_CMD_DETACH_MCAST);
}

/* the verbs of queue pairs and multicast, set by qroce_ib_register() */
const struct ib_device_ops qroce_qp_ops = {
	.attach_mcast = qroce_attach_mcast,
	.detach_mcast = qroce_detach_mcast,
	.create_qp = qroce_create_qp,
	.destroy_qp = qroce_destroy_qp,
	.modify_qp = qroce_modify_qp,
	.query_qp = qroce_query_qp,
	.post_send = qroce_post_send,
	.post_recv = qroce_post_recv,

	INIT_RDMA_OBJ_SIZE(ib_qp, qroce_qp, ibqp),
};
