// SPDX-License-Identifier: GPL-2.0 or OpenIB.org BSD (MIT) See COPYING file
/*
 * libqroce data path, work requests: write send and receive WQEs into
 * the rings (ibv_post_* and the ibv_wr_* API) and ring the doorbell
 * page.  No system calls.
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

static const uint8_t qroce_wr_opcode[] = {
	[IBV_WR_SEND] = QROCE_WR_SEND,
	[IBV_WR_SEND_WITH_IMM] = QROCE_WR_SEND_IMM,
	[IBV_WR_SEND_WITH_INV] = QROCE_WR_SEND_INV,
	[IBV_WR_RDMA_WRITE] = QROCE_WR_RDMA_WRITE,
	[IBV_WR_RDMA_WRITE_WITH_IMM] = QROCE_WR_RDMA_WRITE_IMM,
	[IBV_WR_RDMA_READ] = QROCE_WR_RDMA_READ,
	[IBV_WR_ATOMIC_CMP_AND_SWP] = QROCE_WR_ATOMIC_CMP_SWP,
	[IBV_WR_ATOMIC_FETCH_AND_ADD] = QROCE_WR_ATOMIC_FETCH_ADD,
	[IBV_WR_LOCAL_INV] = QROCE_WR_LOCAL_INV,
	[IBV_WR_BIND_MW] = QROCE_WR_BIND_MW,
};

/* The device's opcode of each operation of the ibv_wr_* API. */
static const struct {
	uint64_t with;		/* IBV_QP_EX_WITH_* */
	uint8_t op;		/* QROCE_WR_* */
} qroce_qp_ex_opcode[] = {
	{ IBV_QP_EX_WITH_SEND, QROCE_WR_SEND },
	{ IBV_QP_EX_WITH_SEND_WITH_IMM, QROCE_WR_SEND_IMM },
	{ IBV_QP_EX_WITH_SEND_WITH_INV, QROCE_WR_SEND_INV },
	{ IBV_QP_EX_WITH_RDMA_WRITE, QROCE_WR_RDMA_WRITE },
	{ IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM, QROCE_WR_RDMA_WRITE_IMM },
	{ IBV_QP_EX_WITH_RDMA_READ, QROCE_WR_RDMA_READ },
	{ IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP, QROCE_WR_ATOMIC_CMP_SWP },
	{ IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD, QROCE_WR_ATOMIC_FETCH_ADD },
	{ IBV_QP_EX_WITH_LOCAL_INV, QROCE_WR_LOCAL_INV },
	{ IBV_QP_EX_WITH_BIND_MW, QROCE_WR_BIND_MW },
	{ IBV_QP_EX_WITH_FLUSH, QROCE_WR_FLUSH },
	{ IBV_QP_EX_WITH_ATOMIC_WRITE, QROCE_WR_ATOMIC_WRITE },
};

/*
 * Whether a QP of @type takes the device's opcode @op: as the device's
 * table (qroce_wr_ops, docs/hw-spec.md §9) says, but for the local
 * operations, which a UD QP takes in the kernel only.
 */
static bool qroce_qp_takes(enum ibv_qp_type type, unsigned int op)
{
	unsigned int f = qroce_wr_op_flags(op);

	switch (type) {
	case IBV_QPT_RC:
		return f & QROCE_WROP_RC;
	case IBV_QPT_UC:
		return f & QROCE_WROP_UC;
	case IBV_QPT_UD:
		return (f & QROCE_WROP_UD) && !(f & QROCE_WROP_LOCAL);
	default:
		return false;
	}
}

/* The work requests a QP of @type takes, as ibv_qp_ex send_ops_flags. */
uint64_t qroce_send_ops(enum ibv_qp_type type)
{
	uint64_t ops = 0;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(qroce_qp_ex_opcode); i++)
		if (qroce_qp_takes(type, qroce_qp_ex_opcode[i].op))
			ops |= qroce_qp_ex_opcode[i].with;
	return ops;
}

#define QROCE_MW_ACCESS (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
			 IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_ZERO_BASED)
static_assert(IBV_ACCESS_ZERO_BASED == QROCE_ACCESS_ZERO_BASED,
	      "a bind's access goes to the device as it is");
/* A window grants remote rights only: local write is accepted and ignored. */
#define QROCE_MW_ACCESS_IGNORED IBV_ACCESS_LOCAL_WRITE

/*
 * Fill a BIND_MW WQE: @mw gets the key byte of @rkey (its index stays)
 * over @info's range of its MR, zero-based if asked; the device checks
 * the rest and fails the bind with MW_BIND_ERR.  EINVAL for what no
 * device could do.  The window's rkey becomes the one the device will
 * give it, so that the next bind or invalidation of it names it.
 */
static int qroce_wqe_set_bind(struct qroce_send_wqe *w, struct ibv_mw *mw,
			      uint32_t rkey, const struct ibv_mw_bind_info *info)
{
	if (!mw || (info->mw_access_flags &
		    ~(QROCE_MW_ACCESS | QROCE_MW_ACCESS_IGNORED)) ||
	    (!info->mr && info->length))
		return EINVAL;
	w->bind.mw_key = htole32(mw->rkey);
	w->bind.new_key = htole32(rkey);
	w->bind.mr_lkey = htole32(info->mr ? info->mr->lkey : 0);
	w->bind.addr = htole64(info->addr);
	w->bind.length = htole64(info->length);
	w->bind.access = htole32(info->mw_access_flags & QROCE_MW_ACCESS);
	mw->rkey = (mw->rkey & ~QROCE_MR_VARIANT_MASK) |
		   (rkey & QROCE_MR_VARIANT_MASK);
	return 0;
}

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

/* IBV_WR_BIND_MW (type 2 windows; type 1 go through ibv_bind_mw). */
static int qroce_write_bind_wqe(struct qroce_qp *qp, struct qroce_send_wqe *w,
				struct ibv_send_wr *wr)
{
	struct ibv_mw *mw = wr->bind_mw.mw;

	if (!mw || mw->type != IBV_MW_TYPE_2)
		return EINVAL;
	return qroce_wqe_set_bind(w, mw, wr->bind_mw.rkey,
				  &wr->bind_mw.bind_info);
}

/*
 * The operation's fields of the WQE header: those of its handler, then
 * those its flags in qroce_wr_ops call for.
 */
static int qroce_write_send_op(struct qroce_qp *qp, struct qroce_send_wqe *w,
			       struct ibv_send_wr *wr)
{
	unsigned int f = qroce_wr_op_flags(w->opcode);

	if (w->opcode == QROCE_WR_BIND_MW)
		return qroce_write_bind_wqe(qp, w, wr);
	if (w->opcode == QROCE_WR_LOCAL_INV) {
		w->imm_data = htole32(wr->invalidate_rkey);
		return 0;
	}
	if (f & QROCE_WROP_INV)
		w->imm_data = htole32(wr->invalidate_rkey);
	else if (f & QROCE_WROP_IMM)
		w->imm_data = (__force __le32)wr->imm_data; /* raw big-endian */
	if (f & QROCE_WROP_ATOMIC) {
		w->rdma.remote_addr = htole64(wr->wr.atomic.remote_addr);
		w->rdma.rkey = htole32(wr->wr.atomic.rkey);
		w->rdma.compare_add = htole64(wr->wr.atomic.compare_add);
		w->rdma.swap = htole64(wr->wr.atomic.swap);
	} else if (f & QROCE_WROP_REMOTE) {
		w->rdma.remote_addr = htole64(wr->wr.rdma.remote_addr);
		w->rdma.rkey = htole32(wr->wr.rdma.rkey);
	}
	if (qp->vqp.qp.qp_type == IBV_QPT_UD)
		qroce_wqe_set_ud(w, wr->wr.ud.ah, wr->wr.ud.remote_qpn,
				 wr->wr.ud.remote_qkey);
	return 0;
}

static int qroce_write_send_wqe(struct qroce_qp *qp, struct ibv_send_wr *wr)
{
	struct qroce_send_wqe *w;
	int i, err;

	if ((unsigned int)wr->opcode >= ARRAY_SIZE(qroce_wr_opcode) ||
	    !qroce_qp_takes(qp->vqp.qp.qp_type, qroce_wr_opcode[wr->opcode]))
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
	err = qroce_write_send_op(qp, w, wr);
	if (err)
		return err;
	if (qroce_wr_op_flags(w->opcode) & QROCE_WROP_NO_SGE) {
		qp->sq.pi++;
		return 0;
	}
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

int qroce_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		    struct ibv_send_wr **bad)
{
	struct qroce_qp *qp = to_qqp(ibqp);
	uint32_t start;
	int err = 0;

	if (!qroce_sq_open(qp)) {
		*bad = wr;
		return EINVAL;
	}
	qroce_spin_lock(&qp->sq.lock);
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
	qroce_spin_unlock(&qp->sq.lock);
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

	qroce_spin_lock(&qp->sq.lock);
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
	qroce_spin_unlock(&qp->sq.lock);
	return err;
}

static void qroce_wr_abort(struct ibv_qp_ex *ibqp)
{
	struct qroce_qp *qp = to_qqp_ex(ibqp);

	qp->sq.pi = qp->ex_start;
	qp->cur_wqe = NULL;
	qroce_spin_unlock(&qp->sq.lock);
}

/*
 * Open a new WQE for opcode op; NULL (and the error recorded) if it
 * cannot.  An opcode without SGEs takes no inline data either: no
 * wr_set_sge* or wr_set_inline_data* call reaches its WQE.
 */
static struct qroce_send_wqe *qroce_wr_new(struct qroce_qp *qp, uint8_t op)
{
	bool no_sge = qroce_wr_op_flags(op) & QROCE_WROP_NO_SGE;
	struct qroce_send_wqe *w;

	qp->cur_wqe = NULL;
	if (qp->ex_err)
		return NULL;
	w = qroce_sq_wqe(qp, op, qp->vqp.qp_ex.wr_flags, qp->vqp.qp_ex.wr_id);
	if (!w) {
		qp->ex_err = ENOMEM;
		return NULL;
	}
	if ((qp->vqp.qp_ex.wr_flags & IBV_SEND_INLINE) && !no_sge)
		w->flags |= QROCE_WQE_INLINE;
	qp->sq.pi++;
	qp->cur_wqe = no_sge ? NULL : w;
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

/*
 * Any placement type goes on the wire: the responder decides, and a
 * persistent flush to an MR that is not persistent memory (none of a
 * qroce device's is) completes with a remote access error there, as on
 * other devices.
 */
static void qroce_wr_flush(struct ibv_qp_ex *ibqp, uint32_t rkey,
			   uint64_t remote_addr, size_t len, uint8_t type,
			   uint8_t level)
{
	struct qroce_qp *qp = to_qqp_ex(ibqp);
	struct qroce_send_wqe *w;

	if (!qp->ex_err && (!type ||
			    (type & ~(IBV_FLUSH_GLOBAL | IBV_FLUSH_PERSISTENT)) ||
			    len > UINT32_MAX ||
			    (level != IBV_FLUSH_RANGE &&
			     level != IBV_FLUSH_MR))) {
		qp->ex_err = EINVAL;
		qp->cur_wqe = NULL;
		return;
	}
	w = qroce_wr_new(qp, QROCE_WR_FLUSH);
	if (!w)
		return;
	w->flush.remote_addr = htole64(remote_addr);
	w->flush.rkey = htole32(rkey);
	w->flush.length = htole32(len);
	w->flush.type = (type & IBV_FLUSH_GLOBAL ? QROCE_FLUSH_GLOBAL : 0) |
			(type & IBV_FLUSH_PERSISTENT ? QROCE_FLUSH_PERSISTENT : 0);
	w->flush.level = level == IBV_FLUSH_MR ? QROCE_FLUSH_MR :
						 QROCE_FLUSH_RANGE;
}

/* The 8 bytes at @atomic_wr go as they are, in one piece. */
static void qroce_wr_atomic_write(struct ibv_qp_ex *ibqp, uint32_t rkey,
				  uint64_t remote_addr, const void *atomic_wr)
{
	struct qroce_qp *qp = to_qqp_ex(ibqp);
	struct qroce_send_wqe *w = qroce_wr_new(qp, QROCE_WR_ATOMIC_WRITE);

	if (!w)
		return;
	w->rdma.remote_addr = htole64(remote_addr);
	w->rdma.rkey = htole32(rkey);
	memcpy(&w->rdma.compare_add, atomic_wr, 8);
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

static void qroce_wr_bind_mw(struct ibv_qp_ex *ibqp, struct ibv_mw *mw,
			     uint32_t rkey,
			     const struct ibv_mw_bind_info *info)
{
	struct qroce_qp *qp = to_qqp_ex(ibqp);
	struct qroce_send_wqe *w = qroce_wr_new(qp, QROCE_WR_BIND_MW);

	if (!w)
		return;
	if (!mw || mw->type != IBV_MW_TYPE_2 ||
	    qroce_wqe_set_bind(w, mw, rkey, info))
		qp->ex_err = EINVAL;
}

static void qroce_wr_local_inv(struct ibv_qp_ex *ibqp, uint32_t rkey)
{
	struct qroce_qp *qp = to_qqp_ex(ibqp);
	struct qroce_send_wqe *w = qroce_wr_new(qp, QROCE_WR_LOCAL_INV);

	if (w)
		w->imm_data = htole32(rkey);
}

/*
 * ibv_bind_mw: a type 1 window, bound through @ibqp's SQ; its rkey's
 * variant moves on, and the bind completes as IBV_WC_BIND_MW.
 */
int qroce_bind_mw(struct ibv_qp *ibqp, struct ibv_mw *mw,
		  struct ibv_mw_bind *mw_bind)
{
	struct qroce_qp *qp = to_qqp(ibqp);
	uint32_t rkey = ibv_inc_rkey(mw->rkey);
	struct qroce_send_wqe *w;
	int err;

	if (!qroce_qp_takes(ibqp->qp_type, QROCE_WR_BIND_MW) ||
	    !qroce_sq_open(qp))
		return EINVAL;
	qroce_spin_lock(&qp->sq.lock);
	w = qroce_sq_wqe(qp, QROCE_WR_BIND_MW, mw_bind->send_flags,
			 mw_bind->wr_id);
	err = w ? qroce_wqe_set_bind(w, mw, rkey, &mw_bind->bind_info) :
		  ENOMEM;
	if (!err) {
		qp->sq.pi++;
		qroce_ring_sq(qp);
	}
	qroce_spin_unlock(&qp->sq.lock);
	return err;
}

void qroce_qp_ex_ops(struct qroce_qp *qp, uint64_t ops)
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
	if (ops & IBV_QP_EX_WITH_BIND_MW)
		q->wr_bind_mw = qroce_wr_bind_mw;
	if (ops & IBV_QP_EX_WITH_LOCAL_INV)
		q->wr_local_inv = qroce_wr_local_inv;
	if (ops & IBV_QP_EX_WITH_FLUSH)
		q->wr_flush = qroce_wr_flush;
	if (ops & IBV_QP_EX_WITH_ATOMIC_WRITE)
		q->wr_atomic_write = qroce_wr_atomic_write;
	if (qp->vqp.qp.qp_type == IBV_QPT_UD)
		q->wr_set_ud_addr = qroce_wr_set_ud_addr;
	q->wr_set_sge = qroce_wr_set_sge;
	q->wr_set_sge_list = qroce_wr_set_sge_list;
	q->wr_set_inline_data = qroce_wr_set_inline_data;
	q->wr_set_inline_data_list = qroce_wr_set_inline_data_list;
}

/*
 * Keep @wr_id for the receive WQE @w at ring index @idx: by ring slot for
 * an RQ, under a free tag the WQE carries for an SRQ (@srq).  ENOMEM when
 * the SRQ has as many WQEs outstanding as it has tags.
 */
static int qroce_recv_keep(struct qroce_wq *wq, struct qroce_srq *srq,
			   struct qroce_recv_wqe *w, uint32_t idx,
			   uint64_t wr_id)
{
	struct qroce_srq_tag *t;
	uint32_t tag;

	if (!srq) {
		wq->wrid[idx & ((1u << wq->log2) - 1)] = wr_id;
		return 0;
	}
	if (!srq->nfree)
		return ENOMEM;
	tag = srq->free_tags[--srq->nfree];
	t = &srq->tags[tag];
	t->wr_id = wr_id;
	t->idx = idx;
	t->busy = 1;
	w->srq_tag = htole32(tag);
	return 0;
}

/*
 * Write a chain of receive WRs into @wq (an RQ, or the ring of @srq) and
 * ring @db_off for object @obj once.  Called without wq->lock held.
 */
static int qroce_post_recv_wq(struct qroce_context *ctx, struct qroce_wq *wq,
			      struct qroce_srq *srq, uint32_t max_sge,
			      uint32_t db_off, uint32_t obj,
			      struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	uint32_t start, mask;
	int err = 0, i;

	qroce_spin_lock(&wq->lock);
	mask = (1u << wq->log2) - 1;	/* an SRQ resize may change it */
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
		err = qroce_recv_keep(wq, srq, w, wq->pi, wr->wr_id);
		if (err) {
			*bad = wr;
			break;
		}
		w->num_sge = wr->num_sge;
		sge = (struct qroce_sge *)(w + 1);
		for (i = 0; i < wr->num_sge; i++) {
			sge[i].addr = htole64(wr->sg_list[i].addr);
			sge[i].length = htole32(wr->sg_list[i].length);
			sge[i].lkey = htole32(wr->sg_list[i].lkey);
		}
		wq->pi++;
	}
	if (wq->pi != start) {
		udma_to_device_barrier();
		qroce_db(ctx, db_off, obj, wq->pi);
	}
	qroce_spin_unlock(&wq->lock);
	return err;
}

int qroce_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		    struct ibv_recv_wr **bad)
{
	struct qroce_qp *qp = to_qqp(ibqp);

	if (ibqp->state == IBV_QPS_RESET || qp->srq) {
		*bad = wr;
		return EINVAL;
	}
	return qroce_post_recv_wq(to_qctx(ibqp->context), &qp->rq, NULL,
				  qp->max_recv_sge, QROCE_DB_RQ, qp->qpn, wr,
				  bad);
}

int qroce_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
			struct ibv_recv_wr **bad)
{
	struct qroce_srq *srq = to_qsrq(ibsrq);

	return qroce_post_recv_wq(to_qctx(ibsrq->context), &srq->wq, srq,
				  srq->max_sge, QROCE_DB_SRQ, srq->srqn, wr,
				  bad);
}
