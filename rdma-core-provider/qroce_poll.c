// SPDX-License-Identifier: GPL-2.0 or OpenIB.org BSD (MIT) See COPYING file
/*
 * libqroce data path, completions: poll the CQ ring (owner bit), read
 * CQEs through the extended poll API, arm the CQ through the doorbell
 * page, and clean a destroyed QP's CQEs out of a CQ.  No system calls.
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

static const enum ibv_wc_opcode qroce_wc_opcode[] = {
	[QROCE_CQE_SEND] = IBV_WC_SEND,
	[QROCE_CQE_RDMA_WRITE] = IBV_WC_RDMA_WRITE,
	[QROCE_CQE_RDMA_READ] = IBV_WC_RDMA_READ,
	[QROCE_CQE_CMP_SWP] = IBV_WC_COMP_SWAP,
	[QROCE_CQE_FETCH_ADD] = IBV_WC_FETCH_ADD,
	[QROCE_CQE_BIND_MW] = IBV_WC_BIND_MW,
	[QROCE_CQE_LOCAL_INV] = IBV_WC_LOCAL_INV,
	[QROCE_CQE_ATOMIC_WRITE] = IBV_WC_ATOMIC_WRITE,
	[QROCE_CQE_FLUSH] = IBV_WC_FLUSH,
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
 * An SRQ WQE completed (on any CQ): the wr_id of its tag @tag, which is
 * free again, and the ring slots up to the one it was posted at (the
 * device takes WQEs in order, so every older one has been taken).
 * EINVAL for a tag that names no outstanding WQE.
 */
static int qroce_srq_retire(struct qroce_srq *srq, uint32_t tag,
			    uint64_t *wr_id)
{
	struct qroce_wq *wq = &srq->wq;
	struct qroce_srq_tag *t;
	int err = 0;

	qroce_spin_lock(&wq->lock);
	if (tag >= srq->ntags || !srq->tags[tag].busy) {
		err = EINVAL;
	} else {
		t = &srq->tags[tag];
		*wr_id = t->wr_id;
		t->busy = 0;
		srq->free_tags[srq->nfree++] = tag;
		if ((int32_t)(t->idx + 1 - wq->ci) > 0)
			atomic_store_explicit((_Atomic(uint32_t) *)&wq->ci,
					      t->idx + 1,
					      memory_order_release);
	}
	qroce_spin_unlock(&wq->lock);
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
		qp = qroce_qp_find(ctx, qpn);
		if (!qp) {
			verbs_debug(verbs_get_ctx(cq->vcq.cq.context),
				    "qroce: CQ %u: CQE for unknown QP %u\n",
				    cq->cqn, qpn);
			continue;
		}
		if (out->flags & QROCE_CQE_F_SRQ) {
			if (!qp->srq || qroce_srq_retire(qp->srq, idx, wr_id)) {
				verbs_debug(verbs_get_ctx(cq->vcq.cq.context),
					    "qroce: CQ %u: QP %u: stale SRQ tag %u\n",
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
		/*
		 * a send CQE also retires the unsignaled WQEs before it;
		 * release: wrid is read before the slot is handed back
		 */
		atomic_store_explicit((_Atomic(uint32_t) *)&wq->ci, idx + 1,
				      memory_order_release);
		*qpp = qp;
		return 0;
	}
}

int qroce_poll_cq(struct ibv_cq *ibcq, int n, struct ibv_wc *wc)
{
	struct qroce_cq *cq = to_qcq(ibcq);
	int done;

	qroce_spin_lock(&cq->lock);
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
	qroce_spin_unlock(&cq->lock);
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
	qroce_spin_lock(&cq->lock);
	err = qroce_cq_ex_load(cq);
	if (err)
		qroce_spin_unlock(&cq->lock);
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
	qroce_spin_unlock(&cq->lock);
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

void qroce_cq_ex_ops(struct qroce_cq *cq)
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

int qroce_req_notify_cq(struct ibv_cq *ibcq, int solicited)
{
	struct qroce_cq *cq = to_qcq(ibcq);
	struct qroce_context *ctx = to_qctx(ibcq->context);

	qroce_db(ctx, QROCE_DB_CQ_ARM, cq->cqn,
		 (solicited ? QROCE_CQ_ARM_SOLICITED : QROCE_CQ_ARM_NEXT) |
		 (cq->ci & QROCE_CQ_ARM_CI_MASK));
	return 0;
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
void qroce_cq_clean(struct qroce_cq *cq, uint32_t qpn,
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
