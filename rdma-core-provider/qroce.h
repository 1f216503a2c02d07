/* SPDX-License-Identifier: GPL-2.0 or OpenIB.org BSD (MIT) See COPYING file */
/*
 * libqroce: rdma-core provider for the qroce emulated RoCEv2 NIC.
 * Control path: qroce.c (device, context, the verbs tables) and
 * qroce_ctrl_*.c (ibv_cmd_* verbs by object family: _pd PDs, thread and
 * parent domains, ring memory; _mr MRs, MWs, device memory; _cq CQs; _qp
 * QPs, SRQs, AHs, multicast).  Data path: qroce_post.c and qroce_poll.c,
 * which touch only memory and the mmapped doorbell page.  Calls run one
 * way: qroce.c to the families, _qp and _cq to _pd, control to data, and
 * never back.  The hardware interface is qroce_hw.h.
 */
#ifndef QROCE_PROVIDER_H
#define QROCE_PROVIDER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <infiniband/driver.h>
#include <stdatomic.h>
#include <util/mmio.h>
#include <util/udma_barrier.h>
#include <ccan/ilog.h>
#include "qroce_hw.h"

/*
 * QPs by QPN, two-level as erdma's provider keeps them: 4096 chunks of
 * 4096 pointers cover the 24-bit QPN space; a chunk is made when a QP
 * first needs it and kept until the context goes.
 */
#define QROCE_QP_TABLE_SIZE	(1u << 24)
#define QROCE_QP_CHUNK_SHIFT	12
#define QROCE_QP_CHUNK		(1u << QROCE_QP_CHUNK_SHIFT)
#define QROCE_QP_CHUNKS		(QROCE_QP_TABLE_SIZE / QROCE_QP_CHUNK)

struct qroce_device {
	struct verbs_device ibv_dev;
};

/*
 * A lock a thread domain (or IBV_CREATE_CQ_ATTR_SINGLE_THREADED) turns
 * off: the application has promised that one thread at a time uses the
 * object, so the data path takes no lock for it.
 */
struct qroce_spin {
	pthread_spinlock_t lock;
	bool off;
};

static inline void qroce_spin_init(struct qroce_spin *s, bool off)
{
	s->off = off;
	pthread_spin_init(&s->lock, PTHREAD_PROCESS_PRIVATE);
}

static inline void qroce_spin_destroy(struct qroce_spin *s)
{
	pthread_spin_destroy(&s->lock);
}

static inline void qroce_spin_lock(struct qroce_spin *s)
{
	if (!s->off)
		pthread_spin_lock(&s->lock);
}

static inline void qroce_spin_unlock(struct qroce_spin *s)
{
	if (!s->off)
		pthread_spin_unlock(&s->lock);
}

/* A thread domain: objects made through it are used by one thread. */
struct qroce_td {
	struct ibv_td ibv_td;
	atomic_int refcount;		/* parent domains that name it */
};

/*
 * A protection domain, or a parent domain (pd set): the protection
 * domain it stands for, a thread domain, and the application's allocator
 * for the rings of the QPs, SRQs and CQs made through it.  A parent
 * domain has its protection domain's handle, so every ibv_cmd_*() call
 * made with it acts on that domain.
 */
struct qroce_pd {
	struct ibv_pd ibv_pd;
	struct qroce_pd *pd;		/* a parent domain's protection domain */
	struct qroce_td *td;
	void *(*alloc)(struct ibv_pd *pd, void *pd_context, size_t size,
		       size_t alignment, uint64_t resource_type);
	void (*free)(struct ibv_pd *pd, void *pd_context, void *ptr,
		     uint64_t resource_type);
	void *pd_context;
	/*
	 * a protection domain: the parent domains made over it; a parent
	 * domain: the CQs, QPs and SRQs made through it
	 */
	atomic_int refcount;
};

/*
 * The resource_type a parent domain's allocator is called with: which
 * ring it is for, QROCE_RES_TYPE_BASE | one of the values below.
 */
#define QROCE_RES_TYPE_BASE	0x71726f6300000000ull	/* "qroc" */
enum {
	QROCE_RES_TYPE_SQ = 1,
	QROCE_RES_TYPE_RQ = 2,
	QROCE_RES_TYPE_SRQ = 3,
	QROCE_RES_TYPE_CQ = 4,
};

/*
 * Memory a ring lives in: from a parent domain's allocator (pd set) or
 * from the heap.
 */
struct qroce_ring_mem {
	struct qroce_pd *pd;		/* whose allocator made it, or NULL */
	uint64_t type;
};

struct qroce_context {
	struct verbs_context ibv_ctx;
	void *db;			/* mmapped doorbell page */
	uint32_t db_size;
	uint32_t max_sge, max_inline;
	uint32_t sq_wqe_max_shift, rq_wqe_max_shift;
	pthread_mutex_t qp_table_mutex;	/* taken to change the table */
	struct qroce_qp **qp_table[QROCE_QP_CHUNKS];
};

/* The QP numbered @qpn in this context, or NULL (a poller's lookup). */
static inline struct qroce_qp *qroce_qp_find(struct qroce_context *ctx,
					     uint32_t qpn)
{
	struct qroce_qp **chunk;

	if (qpn >= QROCE_QP_TABLE_SIZE)
		return NULL;
	chunk = atomic_load_explicit(
		(_Atomic(struct qroce_qp **) *)&ctx->qp_table[qpn >>
							       QROCE_QP_CHUNK_SHIFT],
		memory_order_acquire);
	if (!chunk)
		return NULL;
	return atomic_load_explicit(
		(_Atomic(struct qroce_qp *) *)&chunk[qpn & (QROCE_QP_CHUNK - 1)],
		memory_order_acquire);
}

struct qroce_cq {
	struct verbs_cq vcq;
	uint32_t cqn;
	uint32_t log2;
	uint32_t ci;
	struct qroce_cqe *cqes;
	struct qroce_cq_rec *rec;
	void *buf;
	size_t buf_size;
	struct qroce_ring_mem mem;
	struct qroce_pd *pd;		/* its parent domain, or NULL */
	struct qroce_spin lock;
	/* extended poll state: a copy of the CQE being read */
	struct qroce_cqe cur;
	struct qroce_qp *cur_qp;
};

struct qroce_wq {
	void *buf;
	size_t buf_size;
	struct qroce_ring_mem mem;
	uint32_t log2, shift;
	uint32_t pi, ci;
	uint64_t *wrid;
	struct qroce_spin lock;
};

/* An SRQ WQE's tag (docs/hw-spec.md §8): what its CQE names. */
struct qroce_srq_tag {
	uint64_t wr_id;
	uint32_t idx;			/* the ring index it was posted at */
	uint8_t busy;			/* posted, its CQE not yet polled */
};

/*
 * Shared receive queue: a ring the device consumes in order, but whose
 * WQEs complete on any QP's CQ in any order (a QP holds the WQE its
 * message took until the message ends).  Each WQE carries a tag from
 * tags[] (free ones on free_tags[]); wq.ci is one past the newest WQE a
 * polled CQE proves taken, so ring slots come back as soon as the
 * device has copied them, whatever is still outstanding.
 */
struct qroce_srq {
	struct verbs_srq vsrq;
	uint32_t srqn;
	struct qroce_wq wq;		/* wq.lock also guards the tags */
	struct qroce_srq_tag *tags;
	uint32_t *free_tags;
	uint32_t ntags, nfree;
	uint32_t max_sge;
	struct qroce_pd *pd;		/* its parent domain, or NULL */
};

struct qroce_qp {
	struct verbs_qp vqp;
	uint32_t qpn;
	struct qroce_wq sq, rq;		/* rq unused with an SRQ */
	struct qroce_srq *srq;
	struct qroce_pd *pd;		/* its parent domain, or NULL */
	uint32_t max_send_sge, max_recv_sge, max_inline;
	bool sig_all;
	/*
	 * extended post state (ibv_wr_*), valid between wr_start and
	 * wr_complete/wr_abort, under sq.lock
	 */
	struct qroce_send_wqe *cur_wqe;
	uint32_t ex_start;
	int ex_err;
};

struct qroce_ah {
	struct ibv_ah ibv_ah;
	uint32_t ahn;
};

/* Device memory: whole pages of BAR 5, mapped into this process. */
struct qroce_dm {
	struct verbs_dm vdm;
	uint8_t *va;			/* the mapping */
	size_t length;			/* what ibv_alloc_dm() asked for */
	size_t map_size;		/* the mapping's, in pages */
};

static inline struct qroce_context *to_qctx(struct ibv_context *c)
{
	return container_of(c, struct qroce_context, ibv_ctx.context);
}

static inline struct qroce_pd *to_qpd(struct ibv_pd *p)
{
	return container_of(p, struct qroce_pd, ibv_pd);
}

static inline struct qroce_td *to_qtd(struct ibv_td *t)
{
	return container_of(t, struct qroce_td, ibv_td);
}

static inline struct qroce_dm *to_qdm(struct ibv_dm *d)
{
	return container_of(d, struct qroce_dm, vdm.dm);
}

static inline struct qroce_cq *to_qcq(struct ibv_cq *c)
{
	return container_of(c, struct qroce_cq, vcq.cq);
}

static inline struct qroce_srq *to_qsrq(struct ibv_srq *s)
{
	return container_of(s, struct qroce_srq, vsrq.srq);
}

static inline struct qroce_qp *to_qqp(struct ibv_qp *q)
{
	return container_of(q, struct qroce_qp, vqp.qp);
}

/*
 * A work queue's pi is moved by its poster (under wq->lock), its ci by the
 * poller of its CQ (under the CQ's lock); each side reads the other's.
 */
static inline uint32_t qroce_wq_ci(struct qroce_wq *wq)
{
	return atomic_load_explicit((_Atomic(uint32_t) *)&wq->ci,
				    memory_order_acquire);
}

static inline uint32_t qroce_wq_pi(struct qroce_wq *wq)
{
	return atomic_load_explicit((_Atomic(uint32_t) *)&wq->pi,
				    memory_order_relaxed);
}

/* The data path's only access to the device: a 64-bit doorbell write. */
static inline void qroce_db(struct qroce_context *ctx, uint32_t off,
			    uint32_t obj, uint32_t val)
{
	mmio_write64_le((uint8_t *)ctx->db + off,
			htole64(qroce_db_value(obj, val)));
}

/* The n of the smallest 2^n >= @n (0 for 0 and 1). */
static inline unsigned int qroce_log2_up(uint32_t n)
{
	return n <= 1 ? 0 : ilog32(n - 1);
}

/* Control path: each family's verbs (qroce.c installs them). */
extern const struct verbs_context_ops qroce_pd_ops;	/* qroce_ctrl_pd.c */
extern const struct verbs_context_ops qroce_mr_ops;	/* qroce_ctrl_mr.c */
extern const struct verbs_context_ops qroce_cq_ops;	/* qroce_ctrl_cq.c */
extern const struct verbs_context_ops qroce_qp_ops;	/* qroce_ctrl_qp.c */

/* Ring memory and parent domains, for CQs, QPs and SRQs (qroce_ctrl_pd.c). */
void *qroce_alloc_ring(struct qroce_pd *pd, uint64_t type, size_t size,
		       size_t *out_size, struct qroce_ring_mem *m);
void qroce_free_ring(void *p, const struct qroce_ring_mem *m);
struct qroce_pd *qroce_parent(struct ibv_pd *pd);
void qroce_parent_get(struct qroce_pd *pd);
void qroce_parent_put(struct qroce_pd *pd);

/* Data path, completions (qroce_poll.c). */
int qroce_poll_cq(struct ibv_cq *ibcq, int n, struct ibv_wc *wc);
int qroce_req_notify_cq(struct ibv_cq *ibcq, int solicited);
void qroce_cq_ex_ops(struct qroce_cq *cq);
void qroce_cq_clean(struct qroce_cq *cq, uint32_t qpn, struct qroce_srq *srq);

/* Data path, work requests (qroce_post.c). */
int qroce_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		    struct ibv_send_wr **bad);
int qroce_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		    struct ibv_recv_wr **bad);
int qroce_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
			struct ibv_recv_wr **bad);
void qroce_qp_ex_ops(struct qroce_qp *qp, uint64_t ops);
uint64_t qroce_send_ops(enum ibv_qp_type type);
int qroce_bind_mw(struct ibv_qp *ibqp, struct ibv_mw *mw,
		  struct ibv_mw_bind *mw_bind);

#endif
