// SPDX-License-Identifier: GPL-2.0-only
/*
 * qroce's own view of its QPs, CQs and MRs in the core's resource
 * tracker: the attributes `rdma resource show -dd` prints after the
 * core's (an RDMA_NLDEV_ATTR_DRIVER nest), and a QP's context as the
 * device returns it (`rdma resource show qp -r`).
 *
 * Names starting "hw_" are the device's: the numbers it gave the objects,
 * and what QUERY_QP reads from it now.  The others are what the driver
 * keeps.  Ring indexes are the driver's only for kernel objects: a user
 * object's are the provider's, except a CQ's consumer index, which the
 * provider writes into the CQ record for the device to read.  MR keys are
 * left to the core, which shows them only to CAP_NET_ADMIN.
 */
#include <rdma/restrack.h>
#include <uapi/rdma/rdma_netlink.h>
#include "qroce_verbs.h"

/* QUERY_QP's output words that carry something (include/qroce_hw.h) */
#define QROCE_QUERY_QP_WORDS	5

static const char *const qroce_res_qp_state[] = {
	[QROCE_QPS_RESET] = "RESET",
	[QROCE_QPS_INIT] = "INIT",
	[QROCE_QPS_RTR] = "RTR",
	[QROCE_QPS_RTS] = "RTS",
	[QROCE_QPS_SQD] = "SQD",
	[QROCE_QPS_SQE] = "SQE",
	[QROCE_QPS_ERR] = "ERR",
};

static const char *const qroce_res_cq_arm[] = {
	[QROCE_CQ_DISARMED] = "no",
	[QROCE_CQ_ARMED_NEXT] = "next",
	[QROCE_CQ_ARMED_SOLICITED] = "solicited",
};

static const char *const qroce_res_bt_level[] = {
	[QROCE_BT_CONTIG] = "contig",
	[QROCE_BT_INLINE] = "inline",
	[QROCE_BT_LIST1] = "list1",
	[QROCE_BT_LIST2] = "list2",
	[QROCE_BT_PHYS] = "phys",
};

/* A QP's work queue: its attribute names, SQ or RQ. */
struct qroce_res_wq_names {
	const char *depth, *wqe_size, *pi, *ci, *hw_ci;
};

static const struct qroce_res_wq_names qroce_res_sq = {
	"sq_depth", "sq_wqe_size", "sq_pi", "sq_ci", "hw_sq_ci",
};

static const struct qroce_res_wq_names qroce_res_rq = {
	"rq_depth", "rq_wqe_size", "rq_pi", "rq_ci", "hw_rq_ci",
};

/*
 * One work queue: its size; for a kernel QP the driver's producer index
 * (WQEs posted) and consumer index (WQEs completed, polled); and the
 * device's consumer index (WQEs it has taken), @hw_ci.  All free-running.
 */
static int qroce_res_wq(struct sk_buff *msg, const struct qroce_res_wq_names *n,
			const struct qroce_wq *wq, bool kernel, u32 hw_ci)
{
	if (rdma_nl_put_driver_u32(msg, n->depth, 1u << wq->log2) ||
	    rdma_nl_put_driver_u32(msg, n->wqe_size, 1u << wq->shift))
		return -EMSGSIZE;
	if (kernel &&
	    (rdma_nl_put_driver_u32(msg, n->pi, READ_ONCE(wq->pi)) ||
	     rdma_nl_put_driver_u32(msg, n->ci, READ_ONCE(wq->ci))))
		return -EMSGSIZE;
	return rdma_nl_put_driver_u32(msg, n->hw_ci, hw_ci);
}

/* The device's numbers for the QP and for the objects it was made with. */
static int qroce_res_qp_ids(struct sk_buff *msg, struct qroce_qp *qp)
{
	struct ib_qp *ibqp = &qp->ibqp;

	if (rdma_nl_put_driver_u32(msg, "hw_qpn", qp->qpn) ||
	    rdma_nl_put_driver_u32(msg, "hw_pdn", to_qpd(ibqp->pd)->pdn) ||
	    rdma_nl_put_driver_u32(msg, "hw_send_cqn",
				   to_qcq(ibqp->send_cq)->cqn) ||
	    rdma_nl_put_driver_u32(msg, "hw_recv_cqn",
				   to_qcq(ibqp->recv_cq)->cqn))
		return -EMSGSIZE;
	if (ibqp->srq &&
	    rdma_nl_put_driver_u32(msg, "hw_srqn", to_qsrq(ibqp->srq)->srqn))
		return -EMSGSIZE;
	return 0;
}

/* The state and PSNs QUERY_QP returned in @out (an RQ PSN for RC, UC). */
static int qroce_res_qp_state_psn(struct sk_buff *msg, struct ib_qp *ibqp,
				  const u32 *out)
{
	int err;

	if (out[0] < ARRAY_SIZE(qroce_res_qp_state))
		err = rdma_nl_put_driver_string(msg, "hw_state",
						qroce_res_qp_state[out[0]]);
	else
		err = rdma_nl_put_driver_u32(msg, "hw_state", out[0]);
	if (err || rdma_nl_put_driver_u32(msg, "hw_sq_psn", out[1]))
		return -EMSGSIZE;
	if ((ibqp->qp_type == IB_QPT_RC || ibqp->qp_type == IB_QPT_UC) &&
	    rdma_nl_put_driver_u32(msg, "hw_rq_psn", out[2]))
		return -EMSGSIZE;
	return 0;
}

int qroce_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp)
{
	struct qroce_dev *dev = to_qdev(ibqp->device);
	struct qroce_qp *qp = to_qqp(ibqp);
	bool kernel = rdma_is_kernel_res(&ibqp->res);
	struct nlattr *nest;
	u32 out[6];
	int err;

	err = qroce_qp_query_hw(dev, qp->qpn, out);
	if (err)
		return err;
	nest = nla_nest_start(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!nest)
		return -EMSGSIZE;
	if (qroce_res_qp_ids(msg, qp) ||
	    qroce_res_qp_state_psn(msg, ibqp, out) ||
	    qroce_res_wq(msg, &qroce_res_sq, &qp->sq, kernel, out[3]))
		goto err_cancel;
	/* a QP on an SRQ has no receive queue of its own */
	if (!ibqp->srq &&
	    qroce_res_wq(msg, &qroce_res_rq, &qp->rq, kernel, out[4]))
		goto err_cancel;
	nla_nest_end(msg, nest);
	return 0;

err_cancel:
	nla_nest_cancel(msg, nest);
	return -EMSGSIZE;
}

/*
 * The QP's context as the device returns it: QUERY_QP's output words
 * (state, SQ PSN, RQ PSN, SQ and RQ WQEs consumed), little-endian.
 */
int qroce_fill_res_qp_entry_raw(struct sk_buff *msg, struct ib_qp *ibqp)
{
	struct qroce_qp *qp = to_qqp(ibqp);
	__le32 raw[QROCE_QUERY_QP_WORDS];
	u32 out[6];
	int err, i;

	err = qroce_qp_query_hw(to_qdev(ibqp->device), qp->qpn, out);
	if (err)
		return err;
	for (i = 0; i < QROCE_QUERY_QP_WORDS; i++)
		raw[i] = cpu_to_le32(out[i]);
	return nla_put(msg, RDMA_NLDEV_ATTR_RES_RAW, sizeof(raw), raw);
}

/*
 * A kernel CQ's producer index: past the CQEs the device has written from
 * the consumer index on (their owner bits are this pass's).  Under
 * cq->lock, which keeps the ring and the consumer index still.
 */
static u32 qroce_res_cq_pi(struct qroce_cq *cq)
{
	struct qroce_cqe *ring = cq->ring.va;
	u32 mask = (1u << cq->log2) - 1;
	u32 pi;

	for (pi = cq->ci; pi - cq->ci <= mask; pi++)
		if ((READ_ONCE(ring[pi & mask].owner) & QROCE_OWNER_BIT) !=
		    qroce_owner_for(pi, cq->log2))
			break;
	return pi;
}

/* A CQ's indexes, read together under its lock (a resize moves them). */
struct qroce_res_cq_snap {
	u32 log2, ci, pi;
	u8 armed;
};

static int qroce_res_cq_snap(struct qroce_cq *cq, bool kernel,
			     struct qroce_res_cq_snap *s)
{
	unsigned long flags;
	__le32 ci = 0;
	int err = 0;

	spin_lock_irqsave(&cq->lock, flags);
	s->log2 = cq->log2;
	s->armed = READ_ONCE(cq->armed);
	if (kernel) {
		s->ci = cq->ci;
		s->pi = qroce_res_cq_pi(cq);
	} else {
		/* the consumer index the provider wrote for the device */
		err = ib_umem_copy_from(&ci, cq->ring.umem,
					(sizeof(struct qroce_cqe) << cq->log2) +
					offsetof(struct qroce_cq_rec, ci),
					sizeof(ci));
		s->ci = le32_to_cpu(ci);
	}
	spin_unlock_irqrestore(&cq->lock, flags);
	return err;
}

int qroce_fill_res_cq_entry(struct sk_buff *msg, struct ib_cq *ibcq)
{
	struct qroce_cq *cq = to_qcq(ibcq);
	bool kernel = rdma_is_kernel_res(&ibcq->res);
	struct qroce_res_cq_snap s;
	struct nlattr *nest;
	int err;

	err = qroce_res_cq_snap(cq, kernel, &s);
	if (err)
		return err;
	nest = nla_nest_start(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!nest)
		return -EMSGSIZE;
	if (rdma_nl_put_driver_u32(msg, "hw_cqn", cq->cqn) ||
	    rdma_nl_put_driver_u32(msg, "hw_eqn", cq->eqn) ||
	    rdma_nl_put_driver_u32(msg, "depth", 1u << s.log2) ||
	    rdma_nl_put_driver_u32(msg, "ci", s.ci))
		goto err_cancel;
	/* a user CQ is armed and its CQEs counted by the provider */
	if (kernel &&
	    (rdma_nl_put_driver_u32(msg, "pi", s.pi) ||
	     rdma_nl_put_driver_string(msg, "armed",
				       s.armed < ARRAY_SIZE(qroce_res_cq_arm) ?
				       qroce_res_cq_arm[s.armed] : "?")))
		goto err_cancel;
	nla_nest_end(msg, nest);
	return 0;

err_cancel:
	nla_nest_cancel(msg, nest);
	return -EMSGSIZE;
}

/* A fast-registration MR: its page list as the last map_mr_sg left it. */
static int qroce_res_mr_frmr(struct sk_buff *msg, struct qroce_mr *mr)
{
	u32 npages = READ_ONCE(mr->npages);

	if (rdma_nl_put_driver_string(msg, "type", "frmr") ||
	    rdma_nl_put_driver_u32(msg, "max_pages", mr->max_pages) ||
	    rdma_nl_put_driver_u32(msg, "pages", npages))
		return -EMSGSIZE;
	if (npages &&
	    rdma_nl_put_driver_u32(msg, "page_size",
				   READ_ONCE(mr->ibmr.page_size)))
		return -EMSGSIZE;
	return 0;
}

/* A user or DMA MR: its access and the page table the device was given. */
static int qroce_res_mr_table(struct sk_buff *msg, struct qroce_mr *mr)
{
	u8 level = READ_ONCE(mr->bt_level);

	if (rdma_nl_put_driver_string(msg, "type", mr->umem ? "user" : "dma") ||
	    rdma_nl_put_driver_u32_hex(msg, "access", (u32)mr->access) ||
	    rdma_nl_put_driver_string(msg, "bt",
				      level < ARRAY_SIZE(qroce_res_bt_level) ?
				      qroce_res_bt_level[level] : "?"))
		return -EMSGSIZE;
	if (level == QROCE_BT_PHYS)	/* bus addresses, no pages */
		return 0;
	if (rdma_nl_put_driver_u32(msg, "pages", READ_ONCE(mr->bt_npages)) ||
	    rdma_nl_put_driver_u32(msg, "page_size",
				   1u << READ_ONCE(mr->bt_page_shift)))
		return -EMSGSIZE;
	return 0;
}

int qroce_fill_res_mr_entry(struct sk_buff *msg, struct ib_mr *ibmr)
{
	struct qroce_mr *mr = to_qmr(ibmr);
	struct nlattr *nest;

	nest = nla_nest_start(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!nest)
		return -EMSGSIZE;
	if (rdma_nl_put_driver_u32(msg, "hw_pdn", to_qpd(ibmr->pd)->pdn))
		goto err_cancel;
	if (mr->pbl ? qroce_res_mr_frmr(msg, mr) : qroce_res_mr_table(msg, mr))
		goto err_cancel;
	nla_nest_end(msg, nest);
	return 0;

err_cancel:
	nla_nest_cancel(msg, nest);
	return -EMSGSIZE;
}

/* the verbs of the device's view in rdma resource show -dd, set by qroce_ib_register() */
const struct ib_device_ops qroce_restrack_ops = {
	.fill_res_cq_entry = qroce_fill_res_cq_entry,
	.fill_res_mr_entry = qroce_fill_res_mr_entry,
	.fill_res_qp_entry = qroce_fill_res_qp_entry,
	.fill_res_qp_entry_raw = qroce_fill_res_qp_entry_raw,
};
