/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * qroce ib_device: the verbs' private objects and the helpers the verb
 * files (qroce_ctrl.c, qroce_bt.c, qroce_cq.c, qroce_qp.c, qroce_srq.c)
 * share.
 */
#ifndef QROCE_VERBS_H
#define QROCE_VERBS_H

#include <rdma/uverbs_ioctl.h>
#include "qroce.h"

struct qroce_ucontext {
	struct ib_ucontext ibuc;
	u32 uar;
	struct rdma_user_mmap_entry *db_entry;
};

/*
 * What a user context may mmap: its doorbell page (uncached), or the
 * pages of a device memory allocation (write-combining), which go back to
 * the device's pool when the last mapping of them goes.
 */
struct qroce_mmap_entry {
	struct rdma_user_mmap_entry rdma_entry;
	u64 address;
	bool dm;
	u32 dm_first, dm_npages;	/* dm: its pages of device memory */
};

struct qroce_pd {
	struct ib_pd ibpd;
	u32 pdn;
};

struct qroce_ring {		/* a kernel ring or a pinned user ring */
	struct ib_umem *umem;
	void *va;
	dma_addr_t dma;
	size_t size;
};

/* How a kernel CQ was last armed; an event disarms it. */
enum qroce_cq_arm {
	QROCE_CQ_DISARMED,
	QROCE_CQ_ARMED_NEXT,
	QROCE_CQ_ARMED_SOLICITED,
};

struct qroce_cq {
	struct ib_cq ibcq;
	u32 cqn;
	u32 eqn;		/* the completion EQ its events go to */
	u32 log2;
	u32 ci;
	struct qroce_ring ring;
	spinlock_t lock;	/* kernel CQ polling */
	bool resizing;		/* a kernel CQ's ring is being replaced */
	u8 armed;		/* kernel CQs: enum qroce_cq_arm */
};

struct qroce_wq {
	u32 log2, shift;
	u32 pi, ci;
	u64 *wrid;
	struct qroce_ring ring;
};

/* One side of a QP that can wait on a page fault, and its work (qroce_odp.c). */
struct qroce_pf {
	struct work_struct work;
	struct qroce_qp *qp;
	u32 side;			/* enum qroce_pf_side */
};

struct qroce_qp {
	struct ib_qp ibqp;
	u32 qpn;
	struct qroce_wq sq, rq;
	spinlock_t sq_lock, rq_lock;	/* kernel QPs */
	bool sig_all;
	struct ib_qp_attr attr;		/* what was last set */
	int attr_mask;
	u32 max_send_sge, max_recv_sge, max_inline;
	struct qroce_pf pf[2];		/* by enum qroce_pf_side */
};

/* A kernel SRQ WQE's tag (docs/hw-spec.md §8): what its CQE names. */
struct qroce_srq_tag {
	u64 wr_id;
	u32 idx;			/* the ring index it was posted at */
	bool busy;			/* posted, its CQE not yet polled */
};

/*
 * A shared receive queue.  The device takes its WQEs in order, but their
 * CQEs may be polled in any order (from several CQs, and a QP holds the
 * WQE its message took until the message ends).  A kernel SRQ's WQEs
 * carry tags from tags[] (free ones on free_tags[]); wq.ci is one past
 * the newest WQE a polled CQE proves taken, so a ring slot is reused as
 * soon as the device has copied its WQE.
 */
struct qroce_srq {
	struct ib_srq ibsrq;
	u32 srqn;
	struct qroce_wq wq;
	struct qroce_srq_tag *tags;	/* kernel SRQs */
	u32 *free_tags;
	u32 ntags, nfree;
	spinlock_t lock;		/* kernel SRQs: wq.pi, wq.ci, the tags */
	bool resizing;			/* kernel SRQs: the ring is being replaced */
	u32 max_sge;
};

/*
 * An MR: registered by command (a user MR, or the kernel's DMA MR), or
 * made for fast registration by alloc_mr.  A fast-registration MR has a
 * page list the device reads when it executes a REG_MR work request;
 * map_mr_sg fills it.
 */
struct qroce_mr {
	struct ib_mr ibmr;
	struct ib_umem *umem;
	__le64 *pbl;			/* fast registration: page addresses */
	dma_addr_t pbl_dma;
	u32 npages;			/* in pbl, by the last map_mr_sg */
	u32 max_pages;
	int access;			/* a user or DMA MR's IB_ACCESS_* */
	/* a user or DMA MR: its page table as REG_MR (REREG_MR) gave it */
	u32 bt_npages;
	u8 bt_page_shift;
	u8 bt_level;			/* enum qroce_bt_level */
	/* on-demand paging (qroce_odp.c) */
	struct ib_umem_odp *odp;	/* explicit, or the implicit root */
	struct ib_umem_dmabuf *dmabuf;	/* a dma-buf MR: also an ODP table */
	u64 odp_va, odp_len;		/* the user range the table covers */
	u64 odp_base_pfn;		/* user page of the table's entry 0 */
	refcount_t odp_refs;		/* fault work using it, and 1 */
	struct completion odp_done;
	struct xarray odp_children;	/* implicit: 64 MiB children */
	struct mutex odp_child_lock;
	bool odp_dead;			/* deregistered: no ODP_UNMAP */
};

struct qroce_mw {
	struct ib_mw ibmw;
};

struct qroce_ah {
	struct ib_ah ibah;
	u32 ahn;
};

static inline struct qroce_pd *to_qpd(struct ib_pd *p)
{
	return container_of(p, struct qroce_pd, ibpd);
}

static inline struct qroce_cq *to_qcq(struct ib_cq *c)
{
	return container_of(c, struct qroce_cq, ibcq);
}

static inline struct qroce_qp *to_qqp(struct ib_qp *q)
{
	return container_of(q, struct qroce_qp, ibqp);
}

static inline struct qroce_srq *to_qsrq(struct ib_srq *s)
{
	return container_of(s, struct qroce_srq, ibsrq);
}

static inline struct qroce_mr *to_qmr(struct ib_mr *m)
{
	return container_of(m, struct qroce_mr, ibmr);
}

static inline struct qroce_ucontext *to_quc(struct ib_ucontext *u)
{
	return container_of(u, struct qroce_ucontext, ibuc);
}

/* Page lists that exist only until the command that reads them is done. */
struct qroce_bt_tmp {
	void *l1;
	dma_addr_t l1_dma;
	size_t l1_size;
	void **l2;
	dma_addr_t *l2_dma;
	u32 nl2;
};

static inline void qroce_db_ring(struct qroce_dev *dev, u32 off, u32 obj,
				 u32 val)
{
	writeq(qroce_db_value(obj, val), dev->core->db + off);
}

/*
 * MR access: the device's bits are IB's (local and remote access,
 * MW_BIND, FLUSH_GLOBAL); the others, ZERO_BASED among them, it does
 * not do.  Optional flags (relaxed ordering and the rest of the range)
 * are hints a device may ignore; only the others must be supported.
 */
static inline bool qroce_access_ok(int access)
{
	return !(access & ~(QROCE_ACCESS_MASK | IB_ACCESS_OPTIONAL));
}

static inline u32 qroce_hw_access(int access)
{
	static_assert((int)QROCE_ACCESS_MW_BIND == IB_ACCESS_MW_BIND);
	static_assert((int)QROCE_ACCESS_FLUSH_GLOBAL == IB_ACCESS_FLUSH_GLOBAL);
	return access & QROCE_ACCESS_MASK;
}

/*
 * REG_MR @cmd for @mr, an MR with no pages to pin (PHYS, DM): its keys,
 * or an error and @mr freed.
 */
static inline struct ib_mr *qroce_reg_mr_nopin(struct qroce_dev *dev,
					       struct qroce_cmd *cmd,
					       struct qroce_mr *mr, int access)
{
	u32 out[6];
	int err = qroce_cmd_exec(dev, cmd, out);

	if (err) {
		kfree(mr);
		return ERR_PTR(err);
	}
	mr->ibmr.lkey = out[0];
	mr->ibmr.rkey = out[0];
	mr->access = access;
	mr->bt_level = cmd->reg_mr.pages.level;
	return &mr->ibmr;
}

/*
 * The verbs each file implements, as the ib_device_ops it gives
 * qroce_ib_register() (qroce_ib_main.c)
 */
extern const struct ib_device_ops qroce_dev_ops;	/* qroce_ctrl.c */
extern const struct ib_device_ops qroce_cq_ops;
extern const struct ib_device_ops qroce_qp_ops;
extern const struct ib_device_ops qroce_srq_ops;
extern const struct ib_device_ops qroce_odp_ops;
extern const struct ib_device_ops qroce_restrack_ops;
extern const struct uapi_definition qroce_ib_defs[];	/* qroce_ctrl.c */

/* qroce_ctrl.c */
int qroce_get_req(struct ib_udata *udata, void *req, size_t len);
int qroce_no_req(struct ib_udata *udata);
int qroce_destroy_cmd(struct qroce_dev *dev, u8 opcode, u32 handle);
int qroce_publish(struct xarray *xa, u32 id, void *obj, struct ib_udata *udata,
		  void *resp, size_t len);
void qroce_fill_av(struct qroce_av *av, struct rdma_ah_attr *ah);
struct ib_mr *qroce_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 len,
				u64 virt, int access, struct ib_dmah *dmah,
				struct ib_udata *udata);

/* qroce_bt.c */
void qroce_bt_tmp_free(struct qroce_dev *dev, struct qroce_bt_tmp *t);
int qroce_bt_from_umem(struct qroce_dev *dev, struct ib_umem *umem,
		       unsigned long pgsz, struct qroce_bt *bt,
		       __le64 *inline_pages, struct qroce_bt_tmp *t);
int qroce_ring_get(struct qroce_dev *dev, struct qroce_ring *r, bool user,
		   u64 uaddr, size_t size, struct qroce_bt *bt,
		   struct qroce_bt_tmp *t);
void qroce_ring_put(struct qroce_dev *dev, struct qroce_ring *r);

/* qroce_wq.c: below the QP, SRQ and CQ files */
void *qroce_wq_slot(struct qroce_wq *wq);
void qroce_put_sges(struct qroce_sge *sge, const struct ib_sge *sg, int n);
int qroce_post_recv_wq(struct qroce_dev *dev, struct qroce_wq *wq,
		       struct qroce_srq *srq, u32 max_sge, u32 db, u32 obj,
		       const struct ib_recv_wr *wr,
		       const struct ib_recv_wr **bad);
int qroce_srq_retire(struct qroce_srq *srq, u32 tag, u64 *wr_id);
void qroce_srq_tags_grow(struct qroce_srq *srq, u32 n,
			 struct qroce_srq_tag **tags, u32 **free_tags);

/* qroce_cq.c */
int qroce_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		    struct uverbs_attr_bundle *attrs);
int qroce_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata);
int qroce_resize_cq(struct ib_cq *ibcq, unsigned int cqe,
		    struct ib_udata *udata);
int qroce_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags fl);
int qroce_poll_cq(struct ib_cq *ibcq, int n, struct ib_wc *wc);
void qroce_kick_cq(struct qroce_cq *cq);
void qroce_cq_clean(struct qroce_cq *cq, u32 qpn, struct qroce_srq *srq);

/* qroce_qp.c */
int qroce_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		    struct ib_udata *udata);
int qroce_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata);
int qroce_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
int qroce_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
int qroce_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		    struct ib_udata *udata);
int qroce_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_qp_init_attr *init);
int qroce_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad);
int qroce_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		    const struct ib_recv_wr **bad);
int qroce_qp_query_hw(struct qroce_dev *dev, u32 qpn, u32 *out);

/* qroce_srq.c */
int qroce_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		     struct ib_udata *udata);
int qroce_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata);
int qroce_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		     enum ib_srq_attr_mask mask, struct ib_udata *udata);
int qroce_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr);
int qroce_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			const struct ib_recv_wr **bad);

/* qroce_restrack.c: the driver's view in rdma resource show -dd */
int qroce_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp);
int qroce_fill_res_qp_entry_raw(struct sk_buff *msg, struct ib_qp *ibqp);
int qroce_fill_res_cq_entry(struct sk_buff *msg, struct ib_cq *ibcq);
int qroce_fill_res_mr_entry(struct sk_buff *msg, struct ib_mr *ibmr);

/* qroce_dm.c */
int qroce_dm_init(struct qroce_dev *dev);
void qroce_dm_fini(struct qroce_dev *dev);
void qroce_dm_mmap_free(struct qroce_mmap_entry *e);
extern const struct uapi_definition qroce_dm_defs[];

/* on-demand paging (qroce_odp.c) */
struct ib_mr *qroce_reg_user_mr_dmabuf(struct ib_pd *ibpd, u64 offset,
				       u64 len, u64 virt, int fd, int access,
				       struct ib_dmah *dmah,
				       struct uverbs_attr_bundle *attrs);
struct ib_mr *qroce_reg_user_mr_odp(struct ib_pd *ibpd, u64 start, u64 len,
				    u64 virt, int access);
void qroce_odp_dereg_prepare(struct qroce_mr *mr);
void qroce_odp_dereg_done(struct qroce_mr *mr);
void qroce_odp_dereg_undo(struct qroce_mr *mr);
int qroce_advise_mr(struct ib_pd *pd, enum ib_uverbs_advise_mr_advice advice,
		    u32 flags, struct ib_sge *sg_list, u32 num_sge,
		    struct uverbs_attr_bundle *attrs);
void qroce_odp_event(struct qroce_dev *dev, u32 qpn, u32 side);
void qroce_odp_qp_init(struct qroce_qp *qp);
void qroce_odp_qp_fini(struct qroce_qp *qp);

#endif
