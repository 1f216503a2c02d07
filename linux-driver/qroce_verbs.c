// SPDX-License-Identifier: GPL-2.0-only
/*
 * qroce ib_device: the verbs.  Objects are created by commands to the
 * device; user rings live in user memory (pinned with ib_umem, described to
 * the device by a buffer table); kernel rings are DMA-coherent buffers.
 */
#include <linux/dma-mapping.h>
#include <linux/log2.h>
#include <net/addrconf.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_mad.h>
#include <rdma/iter.h>
#include <rdma/uverbs_ioctl.h>
#include "qroce.h"

struct qroce_ucontext {
	struct ib_ucontext ibuc;
	u32 uar;
	struct rdma_user_mmap_entry *db_entry;
};

struct qroce_mmap_entry {
	struct rdma_user_mmap_entry rdma_entry;
	u64 address;
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

struct qroce_cq {
	struct ib_cq ibcq;
	u32 cqn;
	u32 log2;
	u32 ci;
	struct qroce_ring ring;
	spinlock_t lock;	/* kernel CQ polling */
};

struct qroce_wq {
	u32 log2, shift;
	u32 pi, ci;
	u64 *wrid;
	struct qroce_ring ring;
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
};

/*
 * A shared receive queue.  The device consumes its WQEs in order, but
 * their CQEs may be polled in any order (from several CQs): a kernel SRQ
 * frees a slot only once every older one has been polled too.
 */
struct qroce_srq {
	struct ib_srq ibsrq;
	u32 srqn;
	struct qroce_wq wq;
	u8 *done;			/* kernel SRQs: polled, not yet freed */
	spinlock_t lock;		/* kernel SRQs: wq.pi, wq.ci, done */
	u32 max_sge;
};

struct qroce_mr {
	struct ib_mr ibmr;
	struct ib_umem *umem;
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

static inline struct qroce_ucontext *to_quc(struct ib_ucontext *u)
{
	return container_of(u, struct qroce_ucontext, ibuc);
}

/*
 * Copy a verb's request from the provider.  A shorter request reads as
 * zeros past its end; a longer one (a newer provider) is accepted only if
 * what this driver does not know is zero.  Reserved fields are MBZ too;
 * the callers check them.
 */
static int qroce_get_req(struct ib_udata *udata, void *req, size_t len)
{
	int err;

	err = ib_copy_from_udata(req, udata, min(len, udata->inlen));
	if (err)
		return err;
	if (udata->inlen > len &&
	    !ib_is_udata_cleared(udata, len, udata->inlen - len))
		return -EINVAL;
	return 0;
}

/* A verb that takes no request data: nothing but zeros is accepted. */
static int qroce_no_req(struct ib_udata *udata)
{
	if (udata && udata->inlen &&
	    !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EINVAL;
	return 0;
}

/*
 * The result of a destroy command.  Once the command queue is dead, the
 * device has dropped every object with its reset: the destroy succeeds
 * (ULPs must not see "shouldn't fail" destroys fail, and nothing of the
 * host's may leak), but only after that reset (@wait_reset), so that no
 * memory the device could still write is freed before.
 */
static int qroce_destroyed(struct qroce_dev *dev, int err, bool wait_reset)
{
	if (!err || !qroce_dead(dev))
		return err;
	if (wait_reset)
		wait_for_completion(&dev->reset_done);
	return 0;
}

static int qroce_destroy_cmd(struct qroce_dev *dev, u8 opcode, u32 handle)
{
	return qroce_destroyed(dev, qroce_simple_cmd(dev, opcode, handle),
			       true);
}

/* ------------------------------------------------------------------ */
/* Device and port                                                     */
/* ------------------------------------------------------------------ */

static int qroce_query_device(struct ib_device *ibdev,
			      struct ib_device_attr *a, struct ib_udata *udata)
{
	struct qroce_dev *dev = to_qdev(ibdev);

	if (udata->inlen || udata->outlen)
		return -EINVAL;
	memset(a, 0, sizeof(*a));
	a->vendor_id = dev->pdev->vendor;
	a->vendor_part_id = dev->pdev->device;
	a->hw_ver = dev->pdev->revision;
	a->fw_ver = QROCE_SPEC_VERSION;
	addrconf_addr_eui48((u8 *)&a->sys_image_guid, dev->mac);
	a->max_mr_size = dev->cap_max_mr_size;
	a->page_size_cap = dev->cap_page_sizes;
	a->max_qp = dev->cap_max_qp - 2;
	a->max_qp_wr = dev->cap_max_qp_wr;
	a->device_cap_flags = IB_DEVICE_RC_RNR_NAK_GEN |
			      IB_DEVICE_CHANGE_PHY_PORT |
			      IB_DEVICE_PORT_ACTIVE_EVENT;
	a->max_send_sge = dev->cap_max_sge;
	a->max_recv_sge = dev->cap_max_sge;
	a->max_sge_rd = dev->cap_max_sge;
	a->max_cq = dev->cap_max_cq - 1;
	a->max_cqe = dev->cap_max_cqe;
	a->max_mr = dev->cap_max_mr - 1;
	a->max_pd = dev->cap_max_pd - 1;
	a->max_qp_rd_atom = dev->cap_max_rd_atom;
	a->max_qp_init_rd_atom = dev->cap_max_rd_atom;
	a->max_res_rd_atom = dev->cap_max_rd_atom * a->max_qp;
	/* atomics are atomic against the device's other QPs, not the CPU */
	a->atomic_cap = (dev->features & QROCE_FEAT_ATOMIC) ? IB_ATOMIC_HCA :
							      IB_ATOMIC_NONE;
	a->max_ah = dev->cap_max_ah - 1;
	if (dev->features & QROCE_FEAT_SRQ) {
		a->max_srq = dev->cap_max_srq - 1;
		a->max_srq_wr = dev->cap_max_qp_wr;
		a->max_srq_sge = dev->cap_max_sge;
	}
	a->max_pkeys = 1;
	a->local_ca_ack_delay = 15;
	return 0;
}

static int qroce_query_port(struct ib_device *ibdev, u32 port,
			    struct ib_port_attr *a)
{
	struct qroce_dev *dev = to_qdev(ibdev);
	struct net_device *nd = dev->netdev;
	bool up = nd && netif_running(nd) && netif_carrier_ok(nd);

	a->state = up ? IB_PORT_ACTIVE : IB_PORT_DOWN;
	a->phys_state = up ? IB_PORT_PHYS_STATE_LINK_UP :
			     IB_PORT_PHYS_STATE_DISABLED;
	a->max_mtu = IB_MTU_4096;
	a->active_mtu = nd ? iboe_get_mtu(nd->mtu) : IB_MTU_256;
	if (!a->active_mtu)
		a->active_mtu = IB_MTU_256;
	a->gid_tbl_len = dev->cap_max_gid;
	a->port_cap_flags = IB_PORT_CM_SUP;
	a->max_msg_sz = dev->cap_max_msg;
	a->bad_pkey_cntr = 0;
	a->qkey_viol_cntr = 0;
	a->pkey_tbl_len = 1;
	a->lid = 0;
	a->sm_lid = 0;
	a->lmc = 0;
	a->max_vl_num = 1;
	a->sm_sl = 0;
	a->subnet_timeout = 0;
	a->init_type_reply = 0;
	return ib_get_eth_speed(ibdev, port, &a->active_speed,
				&a->active_width);
}

static int qroce_get_port_immutable(struct ib_device *ibdev, u32 port,
				    struct ib_port_immutable *im)
{
	struct ib_port_attr attr = {};
	int err;

	err = ib_query_port(ibdev, port, &attr);
	if (err)
		return err;
	im->pkey_tbl_len = attr.pkey_tbl_len;
	im->gid_tbl_len = attr.gid_tbl_len;
	/* The device speaks RoCEv2 only, so ib_core creates v2 GIDs only. */
	im->core_cap_flags = RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
	im->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

static enum rdma_link_layer qroce_get_link_layer(struct ib_device *ibdev,
						 u32 port)
{
	return IB_LINK_LAYER_ETHERNET;
}

static int qroce_query_pkey(struct ib_device *ibdev, u32 port, u16 index,
			    u16 *pkey)
{
	if (index)
		return -EINVAL;
	*pkey = IB_DEFAULT_PKEY_FULL;
	return 0;
}

static int qroce_add_gid(const struct ib_gid_attr *attr, void **context)
{
	struct qroce_dev *dev = to_qdev(attr->device);
	struct qroce_cmd cmd = {};

	if (attr->gid_type != IB_GID_TYPE_ROCE_UDP_ENCAP)
		return -EINVAL;
	cmd.hdr.opcode = QROCE_CMD_SET_GID;
	cmd.set_gid.index = cpu_to_le32(attr->index);
	cmd.set_gid.type = QROCE_GID_ROCE_V2;
	memcpy(cmd.set_gid.gid, attr->gid.raw, 16);
	return qroce_cmd_exec(dev, &cmd, NULL);
}

static int qroce_del_gid(const struct ib_gid_attr *attr, void **context)
{
	struct qroce_dev *dev = to_qdev(attr->device);

	return qroce_destroyed(dev, qroce_simple_cmd(dev, QROCE_CMD_DEL_GID,
						     attr->index), false);
}

/* ------------------------------------------------------------------ */
/* User contexts and the doorbell page                                 */
/* ------------------------------------------------------------------ */

static int qroce_alloc_ucontext(struct ib_ucontext *ibuc,
				struct ib_udata *udata)
{
	struct qroce_dev *dev = to_qdev(ibuc->device);
	struct qroce_ucontext *uc = to_quc(ibuc);
	struct qroce_alloc_ucontext_resp resp = {};
	struct qroce_mmap_entry *e;
	int uar, err;

	err = qroce_no_req(udata);
	if (err)
		return err;
	uar = ida_alloc_range(&dev->uar_ida, 1, QROCE_DB_PAGES - 1, GFP_KERNEL);
	if (uar < 0)
		return uar;
	uc->uar = uar;
	e = kzalloc(sizeof(*e), GFP_KERNEL);
	if (!e) {
		err = -ENOMEM;
		goto err_ida;
	}
	e->address = dev->db_bar_start + (u64)uar * QROCE_DB_PAGE_SIZE;
	err = rdma_user_mmap_entry_insert(ibuc, &e->rdma_entry,
					  QROCE_DB_PAGE_SIZE);
	if (err) {
		kfree(e);
		goto err_ida;
	}
	uc->db_entry = &e->rdma_entry;
	resp.db_mmap_key = rdma_user_mmap_get_offset(uc->db_entry);
	resp.db_page_size = QROCE_DB_PAGE_SIZE;
	resp.uar = uar;
	resp.max_sge = dev->cap_max_sge;
	resp.max_inline = dev->cap_max_inline;
	resp.sq_wqe_max_shift = QROCE_SQ_WQE_MAX_SHIFT;
	resp.rq_wqe_max_shift = QROCE_RQ_WQE_MAX_SHIFT;
	err = ib_copy_to_udata(udata, &resp, min(sizeof(resp), udata->outlen));
	if (err)
		goto err_entry;
	return 0;

err_entry:
	rdma_user_mmap_entry_remove(uc->db_entry);
err_ida:
	ida_free(&dev->uar_ida, uar);
	return err;
}

static void qroce_dealloc_ucontext(struct ib_ucontext *ibuc)
{
	struct qroce_ucontext *uc = to_quc(ibuc);

	rdma_user_mmap_entry_remove(uc->db_entry);
	ida_free(&to_qdev(ibuc->device)->uar_ida, uc->uar);
}

/*
 * The device is going away while a process still has the context open:
 * ib_uverbs destroys the context's objects through the usual verbs and
 * zaps its mappings (the doorbell page was mapped with rdma_user_mmap_io,
 * so it is tracked).  Nothing else of the device is mapped into the
 * process, so there is nothing left to do here; having the op lets
 * unregistration go on without waiting for the process to exit.
 */
static void qroce_disassociate_ucontext(struct ib_ucontext *ibuc)
{
}

static int qroce_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *re;
	struct qroce_mmap_entry *e;
	int err;

	re = rdma_user_mmap_entry_get(ibuc, vma);
	if (!re)
		return -EINVAL;
	e = container_of(re, struct qroce_mmap_entry, rdma_entry);
	err = rdma_user_mmap_io(ibuc, vma, PFN_DOWN(e->address),
				QROCE_DB_PAGE_SIZE,
				pgprot_noncached(vma->vm_page_prot), re);
	rdma_user_mmap_entry_put(re);
	return err;
}

static void qroce_mmap_free(struct rdma_user_mmap_entry *re)
{
	kfree(container_of(re, struct qroce_mmap_entry, rdma_entry));
}

/* ------------------------------------------------------------------ */
/* Buffer tables                                                       */
/* ------------------------------------------------------------------ */

/* Page lists that exist only until the command that reads them is done. */
struct qroce_bt_tmp {
	void *l1;
	dma_addr_t l1_dma;
	size_t l1_size;
	void **l2;
	dma_addr_t *l2_dma;
	u32 nl2;
};

static void qroce_bt_tmp_free(struct qroce_dev *dev, struct qroce_bt_tmp *t)
{
	u32 i;

	for (i = 0; t->l2 && i < t->nl2; i++)
		if (t->l2[i])
			dma_free_coherent(&dev->pdev->dev, PAGE_SIZE, t->l2[i],
					  t->l2_dma[i]);
	kfree(t->l2);
	kfree(t->l2_dma);
	if (t->l1)
		dma_free_coherent(&dev->pdev->dev, t->l1_size, t->l1, t->l1_dma);
	memset(t, 0, sizeof(*t));
}

/*
 * Describe @umem in @bt with pages of @pgsz; an inline list goes to
 * @inline_pages when it is non-NULL and the list is short.
 */
static int qroce_bt_from_umem(struct qroce_dev *dev, struct ib_umem *umem,
			      unsigned long pgsz, struct qroce_bt *bt,
			      __le64 *inline_pages, struct qroce_bt_tmp *t)
{
	size_t n = ib_umem_num_dma_blocks(umem, pgsz);
	struct ib_block_iter biter;
	__le64 *list;
	size_t i = 0;

	memset(t, 0, sizeof(*t));
	if (!n || n > QROCE_BT_MAX_PAGES)
		return -EINVAL;
	bt->npages = cpu_to_le32(n);
	bt->page_shift = order_base_2(pgsz);
	if (inline_pages && n <= QROCE_BT_MAX_INLINE) {
		bt->level = QROCE_BT_INLINE;
		rdma_umem_for_each_dma_block(umem, &biter, pgsz)
			inline_pages[i++] =
				cpu_to_le64(rdma_block_iter_dma_address(&biter));
		return 0;
	}
	if (n <= QROCE_BT_L2_ENTRIES) {
		t->l1_size = n * sizeof(u64);
		t->l1 = dma_alloc_coherent(&dev->pdev->dev, t->l1_size,
					   &t->l1_dma, GFP_KERNEL);
		if (!t->l1)
			return -ENOMEM;
		list = t->l1;
		rdma_umem_for_each_dma_block(umem, &biter, pgsz)
			list[i++] = cpu_to_le64(rdma_block_iter_dma_address(&biter));
		bt->level = QROCE_BT_LIST1;
		bt->addr = cpu_to_le64(t->l1_dma);
		return 0;
	}
	t->nl2 = DIV_ROUND_UP(n, QROCE_BT_L2_ENTRIES);
	t->l1_size = t->nl2 * sizeof(u64);
	t->l1 = dma_alloc_coherent(&dev->pdev->dev, t->l1_size, &t->l1_dma,
				   GFP_KERNEL);
	t->l2 = kcalloc(t->nl2, sizeof(*t->l2), GFP_KERNEL);
	t->l2_dma = kcalloc(t->nl2, sizeof(*t->l2_dma), GFP_KERNEL);
	if (!t->l1 || !t->l2 || !t->l2_dma)
		goto err_nomem;
	for (i = 0; i < t->nl2; i++) {
		t->l2[i] = dma_alloc_coherent(&dev->pdev->dev, PAGE_SIZE,
					      &t->l2_dma[i], GFP_KERNEL);
		if (!t->l2[i])
			goto err_nomem;
		((__le64 *)t->l1)[i] = cpu_to_le64(t->l2_dma[i]);
	}
	i = 0;
	rdma_umem_for_each_dma_block(umem, &biter, pgsz) {
		list = t->l2[i / QROCE_BT_L2_ENTRIES];
		list[i % QROCE_BT_L2_ENTRIES] =
			cpu_to_le64(rdma_block_iter_dma_address(&biter));
		i++;
	}
	bt->level = QROCE_BT_LIST2;
	bt->addr = cpu_to_le64(t->l1_dma);
	return 0;

err_nomem:
	qroce_bt_tmp_free(dev, t);
	return -ENOMEM;
}

/*
 * A ring: for a user object, the provider's memory at @uaddr, pinned;
 * for a kernel object, a coherent buffer.  On failure nothing is held.
 */
static int qroce_ring_get(struct qroce_dev *dev, struct qroce_ring *r,
			  bool user, u64 uaddr, size_t size, struct qroce_bt *bt,
			  struct qroce_bt_tmp *t)
{
	int err;

	memset(t, 0, sizeof(*t));
	memset(r, 0, sizeof(*r));
	r->size = PAGE_ALIGN(size);
	if (user) {
		/* the kernel never allocates a ring on a process's behalf */
		if (!uaddr || (uaddr & ~PAGE_MASK))
			return -EINVAL;
		r->umem = ib_umem_get(&dev->ibdev, uaddr, r->size,
				      IB_ACCESS_LOCAL_WRITE);
		if (IS_ERR(r->umem)) {
			err = PTR_ERR(r->umem);
			r->umem = NULL;
			return err;
		}
		err = qroce_bt_from_umem(dev, r->umem, PAGE_SIZE, bt, NULL, t);
		if (err) {
			ib_umem_release(r->umem);
			r->umem = NULL;
		}
		return err;
	}
	r->va = dma_alloc_coherent(&dev->pdev->dev, r->size, &r->dma,
				   GFP_KERNEL);
	if (!r->va)
		return -ENOMEM;
	bt->addr = cpu_to_le64(r->dma);
	bt->npages = cpu_to_le32(r->size >> PAGE_SHIFT);
	bt->page_shift = PAGE_SHIFT;
	bt->level = QROCE_BT_CONTIG;
	return 0;
}

static void qroce_ring_put(struct qroce_dev *dev, struct qroce_ring *r)
{
	if (r->umem)
		ib_umem_release(r->umem);
	if (r->va)
		dma_free_coherent(&dev->pdev->dev, r->size, r->va, r->dma);
	memset(r, 0, sizeof(*r));
}

/* ------------------------------------------------------------------ */
/* PD                                                                  */
/* ------------------------------------------------------------------ */

static int qroce_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct qroce_dev *dev = to_qdev(ibpd->device);
	struct qroce_pd *pd = to_qpd(ibpd);
	struct qroce_alloc_pd_resp resp = {};
	struct qroce_cmd cmd = {};
	u32 out[6];
	int err;

	err = qroce_no_req(udata);
	if (err)
		return err;
	cmd.hdr.opcode = QROCE_CMD_ALLOC_PD;
	err = qroce_cmd_exec(dev, &cmd, out);
	if (err)
		return err;
	pd->pdn = out[0];
	if (udata) {
		resp.pdn = pd->pdn;
		err = ib_copy_to_udata(udata, &resp,
				       min(sizeof(resp), udata->outlen));
		if (err) {
			qroce_simple_cmd(dev, QROCE_CMD_DEALLOC_PD, pd->pdn);
			return err;
		}
	}
	return 0;
}

static int qroce_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct qroce_dev *dev = to_qdev(ibpd->device);

	return qroce_destroyed(dev, qroce_simple_cmd(dev, QROCE_CMD_DEALLOC_PD,
						     to_qpd(ibpd)->pdn), false);
}

/* ------------------------------------------------------------------ */
/* CQ                                                                  */
/* ------------------------------------------------------------------ */

/*
 * Make a new object findable by its number (for CQEs and events) and give
 * userspace its response; the store is undone if the copy fails.
 */
static int qroce_publish(struct xarray *xa, u32 id, void *obj,
			 struct ib_udata *udata, void *resp, size_t len)
{
	int err = xa_err(xa_store_irq(xa, id, obj, GFP_KERNEL));

	if (err)
		return err;
	if (udata) {
		err = ib_copy_to_udata(udata, resp, min(len, udata->outlen));
		if (err)
			xa_erase_irq(xa, id);
	}
	return err;
}

static int qroce_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
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

	if (attr->flags || attr->cqe < 1 || attr->cqe > dev->cap_max_cqe)
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
	cmd.hdr.opcode = QROCE_CMD_CREATE_CQ;
	cmd.create_cq.eqn = cpu_to_le32(1 + attr->comp_vector % QROCE_NUM_CEQS);
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

static int qroce_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
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

void qroce_handle_comp(struct qroce_dev *dev, u32 cqn)
{
	struct qroce_cq *cq;
	unsigned long flags;

	xa_lock_irqsave(&dev->cq_xa, flags);
	cq = xa_load(&dev->cq_xa, cqn);
	if (cq && cq->ibcq.comp_handler)
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
	else if (!cq)
		dev_warn_ratelimited(&dev->pdev->dev,
				     "completion event for unknown CQ %u\n", cqn);
	xa_unlock_irqrestore(&dev->cq_xa, flags);
}

/*
 * Call @cq's completion handler without a device event: on a dead device
 * the CQ's consumer is woken to poll the flush completions that
 * qroce_poll_cq makes up.  Not for IB_POLL_DIRECT CQs, whose owner polls
 * by itself (their handler warns).
 */
static void qroce_kick_cq(struct qroce_cq *cq)
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
		dev_warn_ratelimited(&dev->pdev->dev,
				     "async event type 0x%x handle %u\n",
				     e->type, handle);
	}
}

static void qroce_db_ring(struct qroce_dev *dev, u32 off, u32 obj, u32 val)
{
	writeq(qroce_db_value(obj, val), dev->db + off);
}

static int qroce_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags fl)
{
	struct qroce_cq *cq = to_qcq(ibcq);
	u32 v = (fl & IB_CQ_SOLICITED_MASK) == IB_CQ_SOLICITED ?
		QROCE_CQ_ARM_SOLICITED : QROCE_CQ_ARM_NEXT;
	unsigned long flags;
	int ret = 0;

	spin_lock_irqsave(&cq->lock, flags);
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
	[QROCE_CQE_RECV] = IB_WC_RECV,
	[QROCE_CQE_RECV_RDMA_IMM] = IB_WC_RECV_RDMA_WITH_IMM,
};

/*
 * The CQE of SRQ WQE @idx was polled: its wr_id, and free the slots that
 * are now polled in order.  Nonzero if @idx is not outstanding.
 */
static int qroce_srq_retire(struct qroce_srq *srq, u32 idx, u64 *wr_id)
{
	struct qroce_wq *wq = &srq->wq;
	u32 mask = (1u << wq->log2) - 1;
	unsigned long flags;
	int err = 0;

	spin_lock_irqsave(&srq->lock, flags);
	if (idx - wq->ci >= wq->pi - wq->ci || srq->done[idx & mask]) {
		err = -EINVAL;
	} else {
		*wr_id = wq->wrid[idx & mask];
		srq->done[idx & mask] = 1;
		while (wq->ci != wq->pi && srq->done[wq->ci & mask])
			srq->done[wq->ci++ & mask] = 0;
	}
	spin_unlock_irqrestore(&srq->lock, flags);
	return err;
}

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
		dev_warn_ratelimited(&dev->pdev->dev, "CQE for unknown QP %u\n",
				     le32_to_cpu(e->qpn));
		return -EAGAIN;
	}
	idx = le32_to_cpu(e->wqe_index);
	if (e->flags & QROCE_CQE_F_SRQ) {
		if (!qp->ibqp.srq ||
		    qroce_srq_retire(to_qsrq(qp->ibqp.srq), idx, &wc->wr_id)) {
			dev_warn_ratelimited(&dev->pdev->dev,
					     "CQE names SRQ WQE %u of QP %u, not outstanding\n",
					     idx, qp->qpn);
			return -EAGAIN;
		}
	} else {
		wq = (e->flags & QROCE_CQE_F_SQ) ? &qp->sq : &qp->rq;
		if (idx - wq->ci >= wq->pi - wq->ci) {
			dev_warn_ratelimited(&dev->pdev->dev, "CQE names WQE %u outside [%u, %u)\n",
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

static int qroce_poll_cq(struct ib_cq *ibcq, int n, struct ib_wc *wc)
{
	struct qroce_dev *dev = to_qdev(ibcq->device);
	struct qroce_cq *cq = to_qcq(ibcq);
	unsigned long flags;
	int done = 0, r;

	spin_lock_irqsave(&cq->lock, flags);
	while (done < n) {
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

/* ------------------------------------------------------------------ */
/* QP                                                                  */
/* ------------------------------------------------------------------ */

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

static int qroce_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
			   struct ib_udata *udata)
{
	struct qroce_dev *dev = to_qdev(ibqp->device);
	struct qroce_qp *qp = to_qqp(ibqp);
	struct qroce_ucontext *uc = rdma_udata_to_drv_context(udata,
					struct qroce_ucontext, ibuc);
	struct ib_qp_cap *cap = &init->cap;
	struct qroce_create_qp_req req = {};
	struct qroce_create_qp_resp resp = {};
	struct qroce_cmd cmd = {};
	struct qroce_cmd_create_qp *c = &cmd.create_qp;
	struct qroce_bt_tmp tsq, trq;
	int type = qroce_qp_type(init->qp_type);
	u32 out[6];
	int err;

	if (type < 0)
		return type;
	/* a device without their data path: fail here, not hang later */
	if ((type == QROCE_QPT_UC && !(dev->features & QROCE_FEAT_UC)) ||
	    (type == QROCE_QPT_UD && !(dev->features & QROCE_FEAT_UD)))
		return -EOPNOTSUPP;
	if ((init->srq && !(dev->features & QROCE_FEAT_SRQ)) ||
	    (init->srq && type != QROCE_QPT_RC && type != QROCE_QPT_UD) ||
	    init->create_flags ||
	    cap->max_send_wr > dev->cap_max_qp_wr ||
	    cap->max_recv_wr > dev->cap_max_qp_wr ||
	    cap->max_send_sge > dev->cap_max_sge ||
	    cap->max_recv_sge > dev->cap_max_sge ||
	    cap->max_inline_data > dev->cap_max_inline)
		return -EINVAL;
	spin_lock_init(&qp->sq_lock);
	spin_lock_init(&qp->rq_lock);
	if (udata) {
		err = qroce_get_req(udata, &req, sizeof(req));
		if (err)
			return err;
		if (req.reserved ||
		    req.sq_log2_entries > QROCE_WQ_MAX_LOG2 ||
		    req.sq_wqe_shift < QROCE_SQ_WQE_MIN_SHIFT ||
		    req.sq_wqe_shift > QROCE_SQ_WQE_MAX_SHIFT ||
		    (1u << req.sq_log2_entries) < cap->max_send_wr ||
		    req.sq_buf_size < (1u << (req.sq_log2_entries + req.sq_wqe_shift)))
			return -EINVAL;
		/* a QP on an SRQ has no RQ ring */
		if (init->srq ? req.rq_log2_entries || req.rq_buf_addr :
		    req.rq_log2_entries > QROCE_WQ_MAX_LOG2 ||
		    req.rq_wqe_shift < QROCE_RQ_WQE_MIN_SHIFT ||
		    req.rq_wqe_shift > QROCE_RQ_WQE_MAX_SHIFT ||
		    (1u << req.rq_log2_entries) < cap->max_recv_wr ||
		    req.rq_buf_size < (1u << (req.rq_log2_entries + req.rq_wqe_shift)))
			return -EINVAL;
		qp->sq.log2 = req.sq_log2_entries;
		qp->sq.shift = req.sq_wqe_shift;
		qp->rq.log2 = req.rq_log2_entries;
		qp->rq.shift = req.rq_wqe_shift;
	} else {
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
		if (!qp->sq.wrid || !qp->rq.wrid) {
			err = -ENOMEM;
			goto err_wrid;
		}
	}
	err = qroce_ring_get(dev, &qp->sq.ring, !!udata, req.sq_buf_addr,
			     1u << (qp->sq.log2 + qp->sq.shift), &c->sq, &tsq);
	if (err)
		goto err_sq;
	memset(&trq, 0, sizeof(trq));
	if (init->srq) {
		c->flags |= QROCE_CREATE_QP_SRQ;
		c->srqn = cpu_to_le32(to_qsrq(init->srq)->srqn);
	} else {
		err = qroce_ring_get(dev, &qp->rq.ring, !!udata,
				     req.rq_buf_addr,
				     1u << (qp->rq.log2 + qp->rq.shift), &c->rq,
				     &trq);
		if (err)
			goto err_rq;
	}
	cmd.hdr.opcode = QROCE_CMD_CREATE_QP;
	c->pdn = cpu_to_le32(to_qpd(ibqp->pd)->pdn);
	c->send_cqn = cpu_to_le32(to_qcq(init->send_cq)->cqn);
	c->recv_cqn = cpu_to_le32(to_qcq(init->recv_cq)->cqn);
	c->uar = cpu_to_le32(uc ? uc->uar : 0);
	c->type = type;
	c->flags |= init->sq_sig_type == IB_SIGNAL_ALL_WR ?
		    QROCE_CREATE_QP_SIG_ALL : 0;
	c->sq_log2_entries = qp->sq.log2;
	c->rq_log2_entries = init->srq ? 0 : qp->rq.log2;
	c->sq_wqe_shift = qp->sq.shift;
	c->rq_wqe_shift = qp->rq.shift;
	err = qroce_cmd_exec(dev, &cmd, out);
	qroce_bt_tmp_free(dev, &trq);
	qroce_bt_tmp_free(dev, &tsq);
	if (err)
		goto err_cmd;
	qp->qpn = out[0];
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
	if (err)
		goto err_destroy;
	return 0;

err_destroy:
	qroce_destroy_cmd(dev, QROCE_CMD_DESTROY_QP, qp->qpn);
err_cmd:
	qroce_ring_put(dev, &qp->rq.ring);
err_rq:
	qroce_bt_tmp_free(dev, &tsq);
	qroce_ring_put(dev, &qp->sq.ring);
err_sq:
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
 * Take the CQEs of QP @qpn, which is gone, out of kernel CQ @cq, as mlx5
 * does: the valid CQEs from the consumer index on are walked backwards and
 * those of other QPs are moved up over the dropped ones (each slot keeps
 * its owner byte), then the consumer index skips the freed slots.  SRQ
 * WQEs the dropped CQEs consumed are retired.  A poll can then never hand
 * out a completion of a QP that no longer exists, or of a later QP that
 * reuses its number.  The caller holds cq->lock; the device has destroyed
 * the QP, so it writes no more CQEs for it.
 */
static void qroce_cq_clean(struct qroce_cq *cq, u32 qpn, struct qroce_srq *srq)
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

static int qroce_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
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
	qroce_ring_put(dev, &qp->sq.ring);
	qroce_ring_put(dev, &qp->rq.ring);
	kfree(qp->sq.wrid);
	kfree(qp->rq.wrid);
	/* the source GID reference the last IB_QP_AV took */
	rdma_destroy_ah_attr(&qp->attr.ah_attr);
	return 0;
}

static void qroce_fill_av(struct qroce_av *av, struct rdma_ah_attr *ah)
{
	const struct ib_global_route *grh = rdma_ah_read_grh(ah);

	memcpy(av->dgid, grh->dgid.raw, 16);
	memcpy(av->dmac, ah->roce.dmac, ETH_ALEN);
	av->sgid_index = grh->sgid_index;
	av->hop_limit = grh->hop_limit;
	av->traffic_class = grh->traffic_class;
	av->flow_label = cpu_to_le32(grh->flow_label);
	av->net_type = rdma_gid_attr_network_type(grh->sgid_attr) ==
		       RDMA_NETWORK_IPV4 ? QROCE_NET_IPV4 : QROCE_NET_IPV6;
}

static int qroce_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr,
			   int mask, struct ib_udata *udata)
{
	struct qroce_dev *dev = to_qdev(ibqp->device);
	struct qroce_qp *qp = to_qqp(ibqp);
	struct qroce_cmd cmd = {};
	struct qroce_cmd_modify_qp *m = &cmd.modify_qp;
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
	rd_atomic = min_t(u32, attr->max_rd_atomic, dev->cap_max_rd_atom);
	if ((mask & IB_QP_MAX_DEST_RD_ATOMIC) &&
	    attr->max_dest_rd_atomic > dev->cap_max_rd_atom)
		return -EINVAL;

	cmd.hdr.opcode = QROCE_CMD_MODIFY_QP;
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
	m->access_flags = cpu_to_le32(attr->qp_access_flags & QROCE_ACCESS_MASK);
	m->qkey = cpu_to_le32(attr->qkey);
	m->sq_psn = cpu_to_le32(attr->sq_psn & 0xffffff);
	m->rq_psn = cpu_to_le32(attr->rq_psn & 0xffffff);
	m->dest_qpn = cpu_to_le32(attr->dest_qp_num & 0xffffff);
	if (mask & IB_QP_AV) {
		if (!(rdma_ah_get_ah_flags(&attr->ah_attr) & IB_AH_GRH))
			return -EINVAL;
		qroce_fill_av(&m->av, &attr->ah_attr);
	}
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

	/*
	 * Keep what was set, for query_qp.  The kept AV holds a reference on
	 * its source GID: replacing it drops the old one, destroy_qp the last.
	 */
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
	if (next == IB_QPS_RESET) {
		qp->sq.pi = 0;
		qp->sq.ci = 0;
		qp->rq.pi = 0;
		qp->rq.ci = 0;
	}
	return 0;
}

static int qroce_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr,
			  int mask, struct ib_qp_init_attr *init)
{
	struct qroce_dev *dev = to_qdev(ibqp->device);
	struct qroce_qp *qp = to_qqp(ibqp);
	struct qroce_cmd cmd = {};
	u32 out[6];
	int err;

	cmd.hdr.opcode = QROCE_CMD_QUERY_QP;
	cmd.qpn.qpn = cpu_to_le32(qp->qpn);
	err = qroce_cmd_exec(dev, &cmd, out);
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

/* Kernel QPs: WQEs are written here; user QPs post in the provider. */
static const u8 qroce_wr_opcode[] = {
	[IB_WR_SEND] = QROCE_WR_SEND,
	[IB_WR_SEND_WITH_IMM] = QROCE_WR_SEND_IMM,
	[IB_WR_RDMA_WRITE] = QROCE_WR_RDMA_WRITE,
	[IB_WR_RDMA_WRITE_WITH_IMM] = QROCE_WR_RDMA_WRITE_IMM,
	[IB_WR_RDMA_READ] = QROCE_WR_RDMA_READ,
	[IB_WR_ATOMIC_CMP_AND_SWP] = QROCE_WR_ATOMIC_CMP_SWP,
	[IB_WR_ATOMIC_FETCH_AND_ADD] = QROCE_WR_ATOMIC_FETCH_ADD,
};

/* The WQE slot for the next post on @wq. */
static void *qroce_wq_slot(struct qroce_wq *wq)
{
	return wq->ring.va + ((wq->pi & ((1u << wq->log2) - 1)) << wq->shift);
}

static void qroce_put_sges(struct qroce_sge *sge, const struct ib_sge *sg,
			   int n)
{
	int i;

	for (i = 0; i < n; i++) {
		sge[i].addr = cpu_to_le64(sg[i].addr);
		sge[i].length = cpu_to_le32(sg[i].length);
		sge[i].lkey = cpu_to_le32(sg[i].lkey);
	}
}

static int qroce_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
			   const struct ib_send_wr **bad)
{
	struct qroce_dev *dev = to_qdev(ibqp->device);
	struct qroce_qp *qp = to_qqp(ibqp);
	struct qroce_wq *wq = &qp->sq;
	unsigned long flags;
	int err = 0;

	spin_lock_irqsave(&qp->sq_lock, flags);
	for (; wr; wr = wr->next) {
		struct qroce_send_wqe *w;

		if (wq->pi - wq->ci >= (1u << wq->log2)) {
			err = -ENOMEM;
			break;
		}
		if (wr->num_sge > qp->max_send_sge ||
		    wr->opcode >= ARRAY_SIZE(qroce_wr_opcode) ||
		    (wr->opcode != IB_WR_SEND && !qroce_wr_opcode[wr->opcode])) {
			err = -EINVAL;
			break;
		}
		w = qroce_wq_slot(wq);
		memset(w, 0, sizeof(*w));
		w->opcode = qroce_wr_opcode[wr->opcode];
		w->flags = ((wr->send_flags & IB_SEND_SIGNALED) || qp->sig_all ?
			    QROCE_WQE_SIGNALED : 0) |
			   (wr->send_flags & IB_SEND_SOLICITED ?
			    QROCE_WQE_SOLICITED : 0);
		w->num_sge = wr->num_sge;
		w->imm_data = (__force __le32)wr->ex.imm_data;
		if (ibqp->qp_type == IB_QPT_UD || ibqp->qp_type == IB_QPT_GSI) {
			const struct ib_ud_wr *ud = ud_wr(wr);
			struct qroce_ah *ah = container_of(ud->ah,
							   struct qroce_ah, ibah);

			w->ud.ahn = cpu_to_le32(ah->ahn);
			w->ud.remote_qpn = cpu_to_le32(ud->remote_qpn);
			w->ud.remote_qkey = cpu_to_le32(ud->remote_qkey);
		} else if (wr->opcode == IB_WR_RDMA_WRITE ||
			   wr->opcode == IB_WR_RDMA_WRITE_WITH_IMM ||
			   wr->opcode == IB_WR_RDMA_READ) {
			w->rdma.remote_addr = cpu_to_le64(rdma_wr(wr)->remote_addr);
			w->rdma.rkey = cpu_to_le32(rdma_wr(wr)->rkey);
		}
		qroce_put_sges((struct qroce_sge *)(w + 1), wr->sg_list,
			       wr->num_sge);
		wq->wrid[wq->pi & ((1u << wq->log2) - 1)] = wr->wr_id;
		wq->pi++;
	}
	if (err)
		*bad = wr;
	dma_wmb();
	qroce_db_ring(dev, QROCE_DB_SQ, qp->qpn, wq->pi);
	spin_unlock_irqrestore(&qp->sq_lock, flags);
	/* a dead device completes nothing: flush what was posted */
	if (unlikely(qroce_dead(dev)))
		qroce_kick_cq(to_qcq(ibqp->send_cq));
	return err;
}

/*
 * Write receive WQEs for @wr on @wq (of a QP's RQ or an SRQ) and ring
 * doorbell @db for object @obj; the caller holds the queue's lock.
 */
static int qroce_post_recv_wq(struct qroce_dev *dev, struct qroce_wq *wq,
			      u32 max_sge, u32 db, u32 obj,
			      const struct ib_recv_wr *wr,
			      const struct ib_recv_wr **bad)
{
	int err = 0;

	for (; wr; wr = wr->next) {
		struct qroce_recv_wqe *w;

		if (wq->pi - wq->ci >= (1u << wq->log2)) {
			err = -ENOMEM;
			break;
		}
		if (wr->num_sge > max_sge) {
			err = -EINVAL;
			break;
		}
		w = qroce_wq_slot(wq);
		memset(w, 0, sizeof(*w));
		w->num_sge = wr->num_sge;
		qroce_put_sges((struct qroce_sge *)(w + 1), wr->sg_list,
			       wr->num_sge);
		wq->wrid[wq->pi & ((1u << wq->log2) - 1)] = wr->wr_id;
		wq->pi++;
	}
	if (err)
		*bad = wr;
	dma_wmb();
	qroce_db_ring(dev, db, obj, wq->pi);
	return err;
}

static int qroce_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
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
	err = qroce_post_recv_wq(to_qdev(ibqp->device), &qp->rq,
				 qp->max_recv_sge, QROCE_DB_RQ, qp->qpn, wr, bad);
	spin_unlock_irqrestore(&qp->rq_lock, flags);
	if (unlikely(qroce_dead(to_qdev(ibqp->device))))
		qroce_kick_cq(to_qcq(ibqp->recv_cq));
	return err;
}

/* ------------------------------------------------------------------ */
/* SRQ                                                                 */
/* ------------------------------------------------------------------ */

static int qroce_create_srq(struct ib_srq *ibsrq,
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

	if (!(dev->features & QROCE_FEAT_SRQ))
		return -EOPNOTSUPP;
	if (init->srq_type != IB_SRQT_BASIC || !attr->max_wr ||
	    attr->max_wr > dev->cap_max_qp_wr ||
	    attr->max_sge > dev->cap_max_sge)
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
		srq->wq.wrid = kcalloc(1u << srq->wq.log2, sizeof(u64),
				       GFP_KERNEL);
		srq->done = kzalloc(1u << srq->wq.log2, GFP_KERNEL);
		if (!srq->wq.wrid || !srq->done) {
			err = -ENOMEM;
			goto err_mem;
		}
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
	kfree(srq->wq.wrid);
	kfree(srq->done);
	return err;
}

static int qroce_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct qroce_dev *dev = to_qdev(ibsrq->device);
	struct qroce_srq *srq = to_qsrq(ibsrq);
	int err;

	err = qroce_destroy_cmd(dev, QROCE_CMD_DESTROY_SRQ, srq->srqn);
	if (err)
		return err;
	xa_erase_irq(&dev->srq_xa, srq->srqn);
	qroce_ring_put(dev, &srq->wq.ring);
	kfree(srq->wq.wrid);
	kfree(srq->done);
	return 0;
}

static int qroce_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
			    enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct qroce_srq *srq = to_qsrq(ibsrq);
	struct qroce_cmd cmd = {};

	/* the ring cannot be resized; the limit can be (re)armed */
	if (mask & ~IB_SRQ_LIMIT)
		return -EOPNOTSUPP;
	if (!(mask & IB_SRQ_LIMIT))
		return 0;
	if (attr->srq_limit >= (1u << srq->wq.log2))
		return -EINVAL;
	cmd.hdr.opcode = QROCE_CMD_MODIFY_SRQ;
	cmd.modify_srq.srqn = cpu_to_le32(srq->srqn);
	cmd.modify_srq.limit = cpu_to_le32(attr->srq_limit);
	return qroce_cmd_exec(to_qdev(ibsrq->device), &cmd, NULL);
}

static int qroce_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
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

static int qroce_post_srq_recv(struct ib_srq *ibsrq,
			       const struct ib_recv_wr *wr,
			       const struct ib_recv_wr **bad)
{
	struct qroce_srq *srq = to_qsrq(ibsrq);
	unsigned long flags;
	int err;

	spin_lock_irqsave(&srq->lock, flags);
	err = qroce_post_recv_wq(to_qdev(ibsrq->device), &srq->wq,
				 srq->max_sge, QROCE_DB_SRQ, srq->srqn, wr, bad);
	spin_unlock_irqrestore(&srq->lock, flags);
	return err;
}

/* ------------------------------------------------------------------ */
/* MR                                                                  */
/* ------------------------------------------------------------------ */

static struct ib_mr *qroce_get_dma_mr(struct ib_pd *ibpd, int access)
{
	struct qroce_dev *dev = to_qdev(ibpd->device);
	struct qroce_cmd cmd = {};
	struct qroce_mr *mr;
	u32 out[6];
	int err;

	if (access & ~IB_ACCESS_LOCAL_WRITE)
		return ERR_PTR(-EOPNOTSUPP);
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	cmd.hdr.opcode = QROCE_CMD_REG_MR;
	cmd.reg_mr.pdn = cpu_to_le32(to_qpd(ibpd)->pdn);
	cmd.reg_mr.access = cpu_to_le32(access & QROCE_ACCESS_MASK);
	cmd.reg_mr.length = cpu_to_le64(U64_MAX);
	cmd.reg_mr.pages.level = QROCE_BT_PHYS;
	err = qroce_cmd_exec(dev, &cmd, out);
	if (err) {
		kfree(mr);
		return ERR_PTR(err);
	}
	mr->ibmr.lkey = out[0];
	mr->ibmr.rkey = out[0];
	return &mr->ibmr;
}

static struct ib_mr *qroce_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 len,
				       u64 virt, int access,
				       struct ib_udata *udata)
{
	struct qroce_dev *dev = to_qdev(ibpd->device);
	struct qroce_cmd cmd = {};
	struct qroce_bt_tmp t;
	unsigned long pgsz;
	struct qroce_mr *mr;
	u32 out[6];
	int err;

	/*
	 * Optional flags (relaxed ordering and the rest of the range) are
	 * hints a device may ignore; only the others must be supported.
	 */
	if (access & ~(QROCE_ACCESS_MASK | IB_ACCESS_OPTIONAL))
		return ERR_PTR(-EOPNOTSUPP);
	if (!len || len > dev->cap_max_mr_size)
		return ERR_PTR(-EINVAL);
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->umem = ib_umem_get(ibpd->device, start, len, access);
	if (IS_ERR(mr->umem)) {
		err = PTR_ERR(mr->umem);
		goto err_free;
	}
	pgsz = ib_umem_find_best_pgsz(mr->umem, dev->cap_page_sizes, virt);
	if (!pgsz) {
		err = -EINVAL;
		goto err_umem;
	}
	cmd.hdr.opcode = QROCE_CMD_REG_MR;
	cmd.reg_mr.pdn = cpu_to_le32(to_qpd(ibpd)->pdn);
	cmd.reg_mr.access = cpu_to_le32(access & QROCE_ACCESS_MASK);
	cmd.reg_mr.iova = cpu_to_le64(virt);
	cmd.reg_mr.length = cpu_to_le64(len);
	cmd.reg_mr.first_page_offset = cpu_to_le32(ib_umem_dma_offset(mr->umem, pgsz));
	err = qroce_bt_from_umem(dev, mr->umem, pgsz, &cmd.reg_mr.pages,
				 cmd.reg_mr.inline_pages, &t);
	if (err)
		goto err_umem;
	err = qroce_cmd_exec(dev, &cmd, out);
	qroce_bt_tmp_free(dev, &t);
	if (err)
		goto err_umem;
	mr->ibmr.lkey = out[0];
	mr->ibmr.rkey = out[0];
	return &mr->ibmr;

err_umem:
	ib_umem_release(mr->umem);
err_free:
	kfree(mr);
	return ERR_PTR(err);
}

static int qroce_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct qroce_mr *mr = container_of(ibmr, struct qroce_mr, ibmr);
	struct qroce_dev *dev = to_qdev(ibmr->device);
	struct qroce_cmd cmd = {};
	int err;

	cmd.hdr.opcode = QROCE_CMD_DEREG_MR;
	cmd.key.key = cpu_to_le32(ibmr->lkey);
	err = qroce_destroyed(dev, qroce_cmd_exec(dev, &cmd, NULL), true);
	if (err)
		return err;
	if (mr->umem)
		ib_umem_release(mr->umem);
	kfree(mr);
	return 0;
}

/* ------------------------------------------------------------------ */
/* AH                                                                  */
/* ------------------------------------------------------------------ */

static int qroce_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
			   struct ib_udata *udata)
{
	struct qroce_dev *dev = to_qdev(ibah->device);
	struct qroce_ah *ah = container_of(ibah, struct qroce_ah, ibah);
	struct qroce_create_ah_resp resp = {};
	struct qroce_cmd cmd = {};
	u32 out[6];
	int err;

	if (!(rdma_ah_get_ah_flags(init->ah_attr) & IB_AH_GRH) ||
	    qroce_no_req(udata))
		return -EINVAL;
	cmd.hdr.opcode = QROCE_CMD_CREATE_AH;
	cmd.create_ah.pdn = cpu_to_le32(to_qpd(ibah->pd)->pdn);
	qroce_fill_av(&cmd.create_ah.av, init->ah_attr);
	/* ib_cm creates the AHs of its MADs in atomic context */
	if (init->flags & RDMA_CREATE_AH_SLEEPABLE)
		err = qroce_cmd_exec(dev, &cmd, out);
	else
		err = qroce_cmd_exec_atomic(dev, &cmd, out);
	if (err)
		return err;
	ah->ahn = out[0];
	if (udata) {
		resp.ahn = ah->ahn;
		err = ib_copy_to_udata(udata, &resp,
				       min(sizeof(resp), udata->outlen));
		if (err) {
			qroce_simple_cmd(dev, QROCE_CMD_DESTROY_AH, ah->ahn);
			return err;
		}
	}
	return 0;
}

static int qroce_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	struct qroce_dev *dev = to_qdev(ibah->device);
	struct qroce_cmd cmd = {};

	int err;

	cmd.hdr.opcode = QROCE_CMD_DESTROY_AH;
	cmd.handle.handle =
		cpu_to_le32(container_of(ibah, struct qroce_ah, ibah)->ahn);
	if (flags & RDMA_DESTROY_AH_SLEEPABLE) {
		err = qroce_cmd_exec(dev, &cmd, NULL);
	} else {
		err = qroce_cmd_exec_atomic(dev, &cmd, NULL);
		/* still queued: the device destroys the AH when it gets to it */
		if (err == -ETIMEDOUT)
			err = 0;
	}
	/* an AH holds no memory the device writes: nothing to wait for */
	return qroce_destroyed(dev, err, false);
}

/* ------------------------------------------------------------------ */
/* Hardware counters (rdma statistic, sysfs hw_counters)               */
/* ------------------------------------------------------------------ */

static const struct rdma_stat_desc qroce_stat_descs[QROCE_CNT_NUM] = {
	[QROCE_CNT_ETH_TX_FRAMES] = { .name = "eth_tx_frames" },
	[QROCE_CNT_ETH_RX_FRAMES] = { .name = "eth_rx_frames" },
	[QROCE_CNT_ETH_RX_DROPS] = { .name = "eth_rx_drops" },
	[QROCE_CNT_ROCE_TX_PKTS] = { .name = "roce_tx_pkts" },
	[QROCE_CNT_ROCE_RX_PKTS] = { .name = "roce_rx_pkts" },
	[QROCE_CNT_ROCE_RX_DROPS] = { .name = "roce_rx_drops" },
	[QROCE_CNT_ROCE_ICRC_ERRS] = { .name = "roce_icrc_errs" },
	[QROCE_CNT_ROCE_SEQ_NAKS] = { .name = "roce_seq_naks" },
	[QROCE_CNT_ROCE_RNR_NAKS] = { .name = "roce_rnr_naks" },
	[QROCE_CNT_ROCE_RETRANS] = { .name = "roce_retrans" },
	[QROCE_CNT_ROCE_DUP_REQS] = { .name = "roce_dup_reqs" },
	[QROCE_CNT_CMDS] = { .name = "cmds" },
	[QROCE_CNT_CMD_ERRS] = { .name = "cmd_errs" },
	[QROCE_CNT_BAD_DOORBELLS] = { .name = "bad_doorbells" },
	[QROCE_CNT_CQE_ERRS] = { .name = "cqe_errs" },
	[QROCE_CNT_CNP_SENT] = { .name = "cnp_sent" },
	[QROCE_CNT_CNP_HANDLED] = { .name = "cnp_handled" },
	[QROCE_CNT_ECN_MARKED] = { .name = "ecn_marked" },
	[QROCE_CNT_RATE_CUTS] = { .name = "rate_cuts" },
	[QROCE_CNT_WIRE_FAULTS] = { .name = "wire_faults" },
};

static struct rdma_hw_stats *
qroce_alloc_hw_port_stats(struct ib_device *ibdev, u32 port)
{
	return rdma_alloc_hw_stats_struct(qroce_stat_descs, QROCE_CNT_NUM,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

/*
 * The device's counters are 32 bits wide and wrap.  Each read adds the
 * distance from the previous read (modulo 2^32) to a 64-bit sum; the
 * health work reads them every QROCE_HEALTH_PERIOD_MS, far more often than
 * any of them can wrap.
 */
void qroce_stats_update(struct qroce_dev *dev)
{
	unsigned long flags;
	u32 now;
	int i;

	spin_lock_irqsave(&dev->stats_lock, flags);
	for (i = 0; i < QROCE_CNT_NUM; i++) {
		now = qroce_rd(dev, QROCE_REG_CNT(i));
		dev->cnt[i] += (u32)(now - dev->cnt_last[i]);
		dev->cnt_last[i] = now;
	}
	spin_unlock_irqrestore(&dev->stats_lock, flags);
}

/* Take the registers as they are now as the base (probe, after a reset). */
void qroce_stats_resync(struct qroce_dev *dev)
{
	unsigned long flags;
	int i;

	spin_lock_irqsave(&dev->stats_lock, flags);
	for (i = 0; i < QROCE_CNT_NUM; i++)
		dev->cnt_last[i] = qroce_rd(dev, QROCE_REG_CNT(i));
	spin_unlock_irqrestore(&dev->stats_lock, flags);
}

static int qroce_get_hw_stats(struct ib_device *ibdev,
			      struct rdma_hw_stats *stats, u32 port, int index)
{
	struct qroce_dev *dev = to_qdev(ibdev);
	unsigned long flags;
	int i;

	qroce_stats_update(dev);
	spin_lock_irqsave(&dev->stats_lock, flags);
	for (i = 0; i < QROCE_CNT_NUM; i++)
		stats->value[i] = dev->cnt[i];
	spin_unlock_irqrestore(&dev->stats_lock, flags);
	return QROCE_CNT_NUM;
}

static const struct ib_device_ops qroce_dev_ops = {
	.owner = THIS_MODULE,
	/* The stock uapi enum rdma_driver_id has no value for qroce. */
	.driver_id = RDMA_DRIVER_UNKNOWN,
	.uverbs_abi_ver = QROCE_UVERBS_ABI_VERSION,

	.add_gid = qroce_add_gid,
	.alloc_hw_port_stats = qroce_alloc_hw_port_stats,
	.alloc_pd = qroce_alloc_pd,
	.alloc_ucontext = qroce_alloc_ucontext,
	.create_ah = qroce_create_ah,
	.create_user_ah = qroce_create_ah,
	.create_cq = qroce_create_cq,
	.create_qp = qroce_create_qp,
	.create_srq = qroce_create_srq,
	.dealloc_pd = qroce_dealloc_pd,
	.dealloc_ucontext = qroce_dealloc_ucontext,
	.del_gid = qroce_del_gid,
	.dereg_mr = qroce_dereg_mr,
	.disassociate_ucontext = qroce_disassociate_ucontext,
	.destroy_ah = qroce_destroy_ah,
	.destroy_cq = qroce_destroy_cq,
	.destroy_qp = qroce_destroy_qp,
	.destroy_srq = qroce_destroy_srq,
	.get_dma_mr = qroce_get_dma_mr,
	.get_hw_stats = qroce_get_hw_stats,
	.get_link_layer = qroce_get_link_layer,
	.get_port_immutable = qroce_get_port_immutable,
	.mmap = qroce_mmap,
	.mmap_free = qroce_mmap_free,
	.modify_qp = qroce_modify_qp,
	.modify_srq = qroce_modify_srq,
	.poll_cq = qroce_poll_cq,
	.post_recv = qroce_post_recv,
	.post_send = qroce_post_send,
	.post_srq_recv = qroce_post_srq_recv,
	.query_device = qroce_query_device,
	.query_pkey = qroce_query_pkey,
	.query_port = qroce_query_port,
	.query_qp = qroce_query_qp,
	.query_srq = qroce_query_srq,
	.reg_user_mr = qroce_reg_user_mr,
	.req_notify_cq = qroce_req_notify_cq,

	INIT_RDMA_OBJ_SIZE(ib_ah, qroce_ah, ibah),
	INIT_RDMA_OBJ_SIZE(ib_cq, qroce_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_pd, qroce_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_qp, qroce_qp, ibqp),
	INIT_RDMA_OBJ_SIZE(ib_srq, qroce_srq, ibsrq),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, qroce_ucontext, ibuc),
};

int qroce_ib_register(struct qroce_dev *dev)
{
	struct ib_device *ibdev = &dev->ibdev;
	int err;

	ibdev->node_type = RDMA_NODE_IB_CA;
	ibdev->phys_port_cnt = 1;
	ibdev->num_comp_vectors = QROCE_NUM_CEQS;
	strscpy(ibdev->node_desc, "qroce", sizeof(ibdev->node_desc));
	addrconf_addr_eui48((u8 *)&ibdev->node_guid, dev->mac);
	ib_set_device_ops(ibdev, &qroce_dev_ops);
	err = ib_device_set_netdev(ibdev, dev->netdev, 1);
	if (err)
		return err;
	dma_set_max_seg_size(&dev->pdev->dev, UINT_MAX);
	err = ib_register_device(ibdev, "qroce_%d", &dev->pdev->dev);
	if (err)
		goto err_netdev;
	WRITE_ONCE(dev->ib_registered, true);
	return 0;

err_netdev:
	qroce_cmdq_stop_gc(dev);
	/* the port holds a reference that unregister_netdev would wait for */
	ib_device_set_netdev(ibdev, NULL, 1);
	return err;
}

void qroce_ib_unregister(struct qroce_dev *dev)
{
	WRITE_ONCE(dev->ib_registered, false);
	ib_unregister_device(&dev->ibdev);
	/* no AH is created any more: none can be left behind by a timeout */
	qroce_cmdq_stop_gc(dev);
	ib_device_set_netdev(&dev->ibdev, NULL, 1);
}
