// SPDX-License-Identifier: GPL-2.0-only
/*
 * On-demand paging (docs/hw-spec.md §4b).  An ODP MR's pages are not
 * pinned: the device's table for it starts empty.  An access that meets
 * an absent page stops and raises a page-fault event; the work it queues
 * asks the device where (ODP_QUERY), faults the pages in with
 * ib_umem_odp_map_dma_and_lock(), writes their DMA addresses into the
 * table (ODP_MAP) and lets the QP go on (ODP_RESUME).  The MMU interval
 * notifier takes pages away again: ODP_UNMAP, which returns only when no
 * access of the device uses them, then the DMA mappings are undone.
 *
 * An implicit MR (address 0, length U64_MAX) covers the process's whole
 * address space: children of QROCE_ODP_CHILD bytes, made on the first
 * fault in them, each with its own interval notifier, as mlx5 does.
 */
#include <linux/dma-buf.h>
#include <linux/dma-resv.h>
#include <linux/sched/mm.h>
#include <rdma/ib_umem_odp.h>
#include <rdma/iter.h>
#include "qroce_odp.h"
#include "qroce_verbs.h"

#define QROCE_ODP_CHILD_SHIFT	26	/* 64 MiB children of an implicit MR */
#define QROCE_ODP_FAULT_MAX	(4u << 20)	/* bytes one fault maps at most */

/* ------------------------------------------------------------------ */
/* MRs by key, for the fault work                                      */
/* ------------------------------------------------------------------ */

static struct qroce_mr *qroce_odp_mr_get(struct qroce_dev *dev, u32 key)
{
	struct qroce_mr *mr;

	xa_lock(&dev->odp_xa);
	mr = xa_load(&dev->odp_xa, key);
	if (mr && !refcount_inc_not_zero(&mr->odp_refs))
		mr = NULL;
	xa_unlock(&dev->odp_xa);
	return mr;
}

static void qroce_odp_mr_put(struct qroce_mr *mr)
{
	if (refcount_dec_and_test(&mr->odp_refs))
		complete(&mr->odp_done);
}

/* The device's page index of user address @va in @mr's table. */
static u64 qroce_odp_index(struct qroce_mr *mr, u64 va)
{
	return (va >> QROCE_ODP_PAGE_SHIFT) - mr->odp_base_pfn;
}

/* ------------------------------------------------------------------ */
/* Invalidation                                                        */
/* ------------------------------------------------------------------ */

/*
 * ODP_UNMAP of @npages entries of @mr's table from @first: once it
 * returns, no access of the device uses them, and their DMA mappings may
 * go.  A dead device answers no command but may still use them until it
 * has been reset: wait for that, as the destroy verbs do.  Sleeps.
 */
static void qroce_odp_unmap_cmd(struct qroce_mr *mr, u64 first, u64 npages)
{
	struct qroce_dev *dev = to_qdev(mr->ibmr.device);
	struct qroce_cmd cmd = {};

	cmd.hdr.opcode = QROCE_CMD_ODP_UNMAP;
	cmd.odp_unmap.key = cpu_to_le32(mr->ibmr.lkey);
	cmd.odp_unmap.first = cpu_to_le64(first);
	cmd.odp_unmap.npages = cpu_to_le64(npages);
	if (qroce_destroyed(dev, qroce_cmd_exec(dev, &cmd, NULL), true))
		ibdev_warn_ratelimited(&dev->ibdev,
				       "ODP_UNMAP of MR 0x%x failed\n",
				       mr->ibmr.lkey);
}

/*
 * A range that cannot block is refused (false): ODP_UNMAP sleeps, and so
 * may the wait for a dead device's reset.
 */
static bool qroce_odp_invalidate(struct mmu_interval_notifier *mni,
				 const struct mmu_notifier_range *range,
				 unsigned long cur_seq)
{
	struct ib_umem_odp *odp = container_of(mni, struct ib_umem_odp,
					       notifier);
	struct qroce_mr *mr = odp->private;
	u64 start, end, first, last;

	if (!mmu_notifier_range_blockable(range))
		return false;
	mutex_lock(&odp->umem_mutex);
	mmu_interval_set_seq(mni, cur_seq);
	start = max_t(u64, ib_umem_start(odp), range->start);
	end = min_t(u64, ib_umem_end(odp), range->end);
	if (start >= end)
		goto out;
	/* the part of the device's table this covers */
	first = max_t(u64, start, mr->odp_va);
	last = min_t(u64, end, mr->odp_va + mr->odp_len);
	if (first < last && !READ_ONCE(mr->odp_dead))
		qroce_odp_unmap_cmd(mr, qroce_odp_index(mr, first),
				    qroce_odp_index(mr, last - 1) -
				    qroce_odp_index(mr, first) + 1);
	ib_umem_odp_unmap_dma_pages(odp, start, end);
out:
	mutex_unlock(&odp->umem_mutex);
	return true;
}

static const struct mmu_interval_notifier_ops qroce_odp_mn_ops = {
	.invalidate = qroce_odp_invalidate,
};

/* ------------------------------------------------------------------ */
/* Mapping                                                             */
/* ------------------------------------------------------------------ */

/* ODP_MAP of entries [@first, @first + @n) of @mr from the list at @list_dma. */
static int qroce_odp_map_cmd(struct qroce_mr *mr, u64 first, u32 n,
			     dma_addr_t list_dma)
{
	struct qroce_cmd cmd = {};

	cmd.hdr.opcode = QROCE_CMD_ODP_MAP;
	cmd.odp_map.key = cpu_to_le32(mr->ibmr.lkey);
	cmd.odp_map.npages = cpu_to_le32(n);
	cmd.odp_map.first = cpu_to_le64(first);
	cmd.odp_map.list = cpu_to_le64(list_dma);
	return qroce_cmd_exec(to_qdev(mr->ibmr.device), &cmd, NULL);
}

/*
 * ODP_MAP the device entries of user pages [@start, @end) of @odp (mapped,
 * umem_mutex held), QROCE_ODP_MAX_MAP entries per command, from @list.
 */
static int qroce_odp_send_map(struct qroce_mr *mr, struct ib_umem_odp *odp,
			      u64 start, u64 end, __le64 *list,
			      dma_addr_t list_dma)
{
	u64 va = max_t(u64, start, mr->odp_va) & ~(u64)(SZ_4K - 1);
	u64 stop = min_t(u64, end, mr->odp_va + mr->odp_len);
	u32 n;
	int err;

	while (va < stop) {
		u64 first = qroce_odp_index(mr, va);

		for (n = 0; n < QROCE_ODP_MAX_MAP && va < stop;
		     n++, va += SZ_4K) {
			u64 i = (va - ib_umem_start(odp)) >> odp->page_shift;
			u64 in = va & ((1ull << odp->page_shift) - 1);
			dma_addr_t d;
			bool w;
			u64 e = 0;

			err = qroce_odp_page_dma(odp, i, &d, &w);
			if (err == -EFAULT)
				return err;
			if (!err)
				e = (d + in) | QROCE_ODP_PRESENT |
				    (w ? QROCE_ODP_WRITE : 0);
			list[n] = cpu_to_le64(e);
		}
		err = qroce_odp_map_cmd(mr, first, n, list_dma);
		if (err)
			return err;
	}
	return 0;
}

/*
 * Fault in (@fault) or only take what is there of user range [@va,
 * @va + @len) of @odp, and give the device its pages.  Write access when
 * @write, or when the MR is writable and the pages allow it.
 */
static int qroce_odp_map_umem(struct qroce_mr *mr, struct ib_umem_odp *odp,
			      u64 va, u64 len, bool write, bool fault,
			      __le64 *list, dma_addr_t list_dma)
{
	u64 start = max_t(u64, va, ib_umem_start(odp));
	u64 end = min_t(u64, va + len, ib_umem_end(odp));
	u64 mask = 0;
	int ret;

	if (start >= end)
		return 0;
	if (write || (fault && odp->umem.writable))
		mask |= HMM_PFN_WRITE;
	ret = ib_umem_odp_map_dma_and_lock(odp, start, end - start, mask,
					   fault);
	if (ret < 0 && fault && !write && mask)
		/* a read-only mapping in a writable MR: read it */
		ret = ib_umem_odp_map_dma_and_lock(odp, start, end - start,
						   0, fault);
	if (ret < 0)
		return ret;
	ret = qroce_odp_send_map(mr, odp, start, end, list, list_dma);
	mutex_unlock(&odp->umem_mutex);
	return ret;
}

/* The child of implicit @mr that holds @va, made if need be. */
static struct ib_umem_odp *qroce_odp_child(struct qroce_mr *mr, u64 va)
{
	unsigned long idx = va >> QROCE_ODP_CHILD_SHIFT;
	struct ib_umem_odp *child;
	int err;

	mutex_lock(&mr->odp_child_lock);
	child = xa_load(&mr->odp_children, idx);
	if (child)
		goto out;
	child = ib_umem_odp_alloc_child(mr->odp,
					(u64)idx << QROCE_ODP_CHILD_SHIFT,
					1ull << QROCE_ODP_CHILD_SHIFT,
					&qroce_odp_mn_ops);
	if (IS_ERR(child))
		goto out;
	child->private = mr;
	err = xa_err(xa_store(&mr->odp_children, idx, child, GFP_KERNEL));
	if (err) {
		ib_umem_odp_release(child);
		child = ERR_PTR(err);
	}
out:
	mutex_unlock(&mr->odp_child_lock);
	return child;
}

/* Map user range [@va, @va + @len) of @mr, implicit or not. */
static int qroce_odp_map_range(struct qroce_mr *mr, u64 va, u64 len,
			       bool write, bool fault)
{
	struct qroce_dev *dev = to_qdev(mr->ibmr.device);
	struct ib_umem_odp *odp;
	dma_addr_t list_dma;
	__le64 *list;
	u64 end, n;
	int err = 0;

	if (va < mr->odp_va || va - mr->odp_va >= mr->odp_len)
		return -EFAULT;
	len = min_t(u64, len, mr->odp_va + mr->odp_len - va);
	list = dma_alloc_coherent(&dev->pdev->dev, QROCE_ODP_MAX_MAP * 8,
				  &list_dma, GFP_KERNEL);
	if (!list)
		return -ENOMEM;
	for (end = va + len; va < end && !err; va += n) {
		if (!mr->odp->is_implicit_odp) {
			n = end - va;
			err = qroce_odp_map_umem(mr, mr->odp, va, n, write,
						 fault, list, list_dma);
			continue;
		}
		if (va >= TASK_SIZE) {
			err = -EFAULT;
			break;
		}
		n = min_t(u64, end, ((va >> QROCE_ODP_CHILD_SHIFT) + 1) <<
				    QROCE_ODP_CHILD_SHIFT) - va;
		odp = qroce_odp_child(mr, va);
		err = IS_ERR(odp) ? PTR_ERR(odp) :
		      qroce_odp_map_umem(mr, odp, va, n, write, fault, list,
					 list_dma);
	}
	dma_free_coherent(&dev->pdev->dev, QROCE_ODP_MAX_MAP * 8, list,
			  list_dma);
	return err;
}

/* ------------------------------------------------------------------ */
/* dma-buf MRs: the exporter may move the buffer                       */
/* ------------------------------------------------------------------ */

/*
 * Map the dma-buf of @mr (its reservation lock held) and give the device
 * every page of it: the table of a dma-buf MR is an ODP table, all
 * present while the exporter leaves the buffer where it is.
 */
static int qroce_dmabuf_map_locked(struct qroce_mr *mr)
{
	struct qroce_dev *dev = to_qdev(mr->ibmr.device);
	u64 flags = QROCE_ODP_PRESENT |
		    (mr->dmabuf->umem.writable ? QROCE_ODP_WRITE : 0);
	struct ib_block_iter biter;
	dma_addr_t list_dma;
	__le64 *list;
	u64 first = 0;
	u32 n = 0;
	int err;

	err = ib_umem_dmabuf_map_pages(mr->dmabuf);
	if (err)
		return err;
	list = dma_alloc_coherent(&dev->pdev->dev, QROCE_ODP_MAX_MAP * 8,
				  &list_dma, GFP_KERNEL);
	if (!list)
		return -ENOMEM;
	rdma_umem_for_each_dma_block(&mr->dmabuf->umem, &biter, SZ_4K) {
		list[n++] = cpu_to_le64(rdma_block_iter_dma_address(&biter) |
					flags);
		if (n == QROCE_ODP_MAX_MAP) {
			err = qroce_odp_map_cmd(mr, first, n, list_dma);
			if (err)
				break;
			first += n;
			n = 0;
		}
	}
	if (!err && n)
		err = qroce_odp_map_cmd(mr, first, n, list_dma);
	dma_free_coherent(&dev->pdev->dev, QROCE_ODP_MAX_MAP * 8, list,
			  list_dma);
	return err;
}

static int qroce_dmabuf_map(struct qroce_mr *mr)
{
	struct dma_resv *resv = mr->dmabuf->attach->dmabuf->resv;
	int err;

	dma_resv_lock(resv, NULL);
	err = qroce_dmabuf_map_locked(mr);
	dma_resv_unlock(resv);
	return err;
}

/*
 * The exporter moves the buffer (reservation lock held): the device's
 * entries go first (ODP_UNMAP: no access uses them after it; a dead
 * device's reset), then the mapping.  The next access faults, and the
 * fault maps the buffer where it is now.
 */
static void qroce_dmabuf_invalidate(struct dma_buf_attachment *attach)
{
	struct ib_umem_dmabuf *umd = attach->importer_priv;
	struct qroce_mr *mr = umd->private;

	if (!READ_ONCE(mr->odp_dead))
		qroce_odp_unmap_cmd(mr, 0, mr->bt_npages);
	ib_umem_dmabuf_unmap_pages(umd);
}

static const struct dma_buf_attach_ops qroce_dmabuf_attach_ops = {
	.allow_peer2peer = true,
	.invalidate_mappings = qroce_dmabuf_invalidate,
};

/*
 * Resolve a fault at @iova for @len bytes of MR @key: up to
 * QROCE_ODP_FAULT_MAX bytes from the first absent one, or failing that
 * the first page alone (the rest may be a hole the process never mapped).
 */
static int qroce_odp_resolve(struct qroce_dev *dev, u32 key, u64 iova,
			     u32 len, bool write)
{
	struct qroce_mr *mr = qroce_odp_mr_get(dev, key);
	u64 va;
	int err;

	if (!mr)
		return -ENOENT;
	if (mr->dmabuf) {
		err = qroce_dmabuf_map(mr);
		qroce_odp_mr_put(mr);
		return err;
	}
	/* the MR's addresses are its iova; the process's are odp_va's */
	va = iova - mr->ibmr.iova + mr->odp_va;
	err = qroce_odp_map_range(mr, va, min_t(u32, len ?: 1,
						QROCE_ODP_FAULT_MAX),
				  write, true);
	if (err && err != -ENOMEM)
		err = qroce_odp_map_range(mr, va, 1, write, true);
	qroce_odp_mr_put(mr);
	return err;
}

/* ------------------------------------------------------------------ */
/* Page-fault events                                                   */
/* ------------------------------------------------------------------ */

static void qroce_pf_work(struct work_struct *w)
{
	struct qroce_pf *pf = container_of(w, struct qroce_pf, work);
	struct qroce_qp *qp = pf->qp;
	struct qroce_dev *dev = to_qdev(qp->ibqp.device);
	struct qroce_cmd cmd = {};
	u32 out[6] = {};
	int err;

	cmd.hdr.opcode = QROCE_CMD_ODP_QUERY;
	cmd.odp_pf.qpn = cpu_to_le32(qp->qpn);
	cmd.odp_pf.side = cpu_to_le32(pf->side);
	if (qroce_cmd_exec(dev, &cmd, out) || out[0] != QROCE_PF_PENDING)
		return;		/* the QP left RTS, or it was resolved */
	err = qroce_odp_resolve(dev, out[1], (u64)out[3] << 32 | out[2],
				out[4], out[5] & QROCE_PF_WRITE);
	if (err)
		ibdev_dbg(&dev->ibdev,
			  "QP %u: page fault at key 0x%x 0x%llx unresolved: %d\n",
			  qp->qpn, out[1], (u64)out[3] << 32 | out[2], err);
	cmd.hdr.opcode = QROCE_CMD_ODP_RESUME;
	cmd.odp_pf.token = cpu_to_le32(out[5] & QROCE_PF_TOKEN_MASK);
	cmd.odp_pf.status = cpu_to_le32(err ? QROCE_PF_RESUME_ERR :
					QROCE_PF_RESUME_OK);
	/* ERR_STATE: the QP moved on meanwhile (reset, ERR): nothing to do */
	qroce_cmd_exec(dev, &cmd, NULL);
}

/* From the async EQ's interrupt: a QP's page fault, resolved in process context. */
void qroce_odp_event(struct qroce_dev *dev, u32 qpn, u32 side)
{
	struct qroce_qp *qp;
	unsigned long flags;

	if (side > QROCE_PF_RESP)
		return;
	xa_lock_irqsave(&dev->qp_xa, flags);
	qp = xa_load(&dev->qp_xa, qpn);
	if (qp)
		queue_work(dev->odp_wq, &qp->pf[side].work);
	xa_unlock_irqrestore(&dev->qp_xa, flags);
}

void qroce_odp_qp_init(struct qroce_qp *qp)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(qp->pf); i++) {
		qp->pf[i].qp = qp;
		qp->pf[i].side = i;
		INIT_WORK(&qp->pf[i].work, qroce_pf_work);
	}
}

/* The QP is destroyed and out of qp_xa: no fault work runs after this. */
void qroce_odp_qp_fini(struct qroce_qp *qp)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(qp->pf); i++)
		cancel_work_sync(&qp->pf[i].work);
}

/* ------------------------------------------------------------------ */
/* Registration                                                        */
/* ------------------------------------------------------------------ */

/*
 * REG_MR of @mr as an ODP table (every entry absent) of @len bytes at
 * @iova, the first one at @fpo in its page, and its key in odp_xa for the
 * fault work.  On error nothing is left registered.
 */
static int qroce_reg_odp_table(struct ib_pd *ibpd, struct qroce_mr *mr,
			       u64 iova, u64 len, u32 fpo, int access)
{
	struct qroce_dev *dev = to_qdev(ibpd->device);
	struct qroce_cmd cmd = {};
	u32 out[6];
	int err;

	refcount_set(&mr->odp_refs, 1);
	init_completion(&mr->odp_done);
	cmd.hdr.opcode = QROCE_CMD_REG_MR;
	cmd.reg_mr.pdn = cpu_to_le32(to_qpd(ibpd)->pdn);
	cmd.reg_mr.access = cpu_to_le32(qroce_hw_access(access));
	cmd.reg_mr.iova = cpu_to_le64(iova);
	cmd.reg_mr.length = cpu_to_le64(len);
	cmd.reg_mr.first_page_offset = cpu_to_le32(fpo);
	cmd.reg_mr.pages.level = QROCE_BT_ODP;
	cmd.reg_mr.pages.page_shift = QROCE_ODP_PAGE_SHIFT;
	err = qroce_cmd_exec(dev, &cmd, out);
	if (err)
		return err;
	mr->ibmr.lkey = out[0];
	mr->ibmr.rkey = out[0];
	mr->ibmr.iova = iova;
	mr->ibmr.length = len;
	mr->access = access;
	mr->bt_level = QROCE_BT_ODP;
	mr->bt_page_shift = QROCE_ODP_PAGE_SHIFT;
	err = xa_err(xa_store(&dev->odp_xa, out[0], mr, GFP_KERNEL));
	if (err) {
		memset(&cmd, 0, sizeof(cmd));
		cmd.hdr.opcode = QROCE_CMD_DEREG_MR;
		cmd.key.key = cpu_to_le32(out[0]);
		qroce_cmd_exec(dev, &cmd, NULL);
	}
	return err;
}

/*
 * A new MR of @ibpd.  ib_core sets its device and PD after reg returns;
 * notifiers and fault work may need them before.
 */
static struct qroce_mr *qroce_odp_mr_alloc(struct ib_pd *ibpd)
{
	struct qroce_mr *mr = kzalloc_obj(*mr, GFP_KERNEL);

	if (mr) {
		mr->ibmr.device = ibpd->device;
		mr->ibmr.pd = ibpd;
	}
	return mr;
}

/*
 * DEREG_MR of a registration that failed half way.  A dead device may
 * use the entries it has until its reset: wait for that, before the
 * caller releases the memory.
 */
static void qroce_odp_dereg_cmd(struct qroce_mr *mr)
{
	struct qroce_dev *dev = to_qdev(mr->ibmr.device);
	struct qroce_cmd cmd = {};

	cmd.hdr.opcode = QROCE_CMD_DEREG_MR;
	cmd.key.key = cpu_to_le32(mr->ibmr.lkey);
	qroce_destroyed(dev, qroce_cmd_exec(dev, &cmd, NULL), true);
	WRITE_ONCE(mr->odp_dead, true);
}

/*
 * An MR on @len bytes of the dma-buf @fd from @offset on, at @virt.  The
 * attachment is dynamic: the exporter may move the buffer, and tells us
 * first (qroce_dmabuf_invalidate).  The device's table for it is an ODP
 * table, filled here and again after each move by the next page fault.
 */
struct ib_mr *qroce_reg_user_mr_dmabuf(struct ib_pd *ibpd, u64 offset,
				       u64 len, u64 virt, int fd, int access,
				       struct ib_dmah *dmah,
				       struct uverbs_attr_bundle *attrs)
{
	struct qroce_dev *dev = to_qdev(ibpd->device);
	struct ib_umem_dmabuf *umd;
	struct qroce_mr *mr;
	int err;

	if (!(dev->caps.features & QROCE_FEAT_ODP) ||
	    !qroce_access_ok(access) || dmah)
		return ERR_PTR(-EOPNOTSUPP);
	if (!len || len > dev->caps.max_mr_size)
		return ERR_PTR(-EINVAL);
	mr = qroce_odp_mr_alloc(ibpd);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	umd = ib_umem_dmabuf_get(ibpd->device, offset, len, fd, access,
				 &qroce_dmabuf_attach_ops);
	if (IS_ERR(umd)) {
		err = PTR_ERR(umd);
		goto err_free;
	}
	umd->private = mr;
	mr->dmabuf = umd;
	mr->umem = &umd->umem;
	mr->bt_npages = DIV_ROUND_UP((offset & (SZ_4K - 1)) + len, SZ_4K);
	err = qroce_reg_odp_table(ibpd, mr, virt, len, offset & (SZ_4K - 1),
				  access);
	if (err)
		goto err_umem;
	err = qroce_dmabuf_map(mr);
	if (err)
		goto err_dereg;
	return &mr->ibmr;

err_dereg:
	qroce_odp_dereg_prepare(mr);
	qroce_odp_dereg_cmd(mr);
err_umem:
	ib_umem_release(&umd->umem);
err_free:
	kfree(mr);
	return ERR_PTR(err);
}

struct ib_mr *qroce_reg_user_mr_odp(struct ib_pd *ibpd, u64 start, u64 len,
				    u64 virt, int access)
{
	struct qroce_dev *dev = to_qdev(ibpd->device);
	bool implicit = !start && len == U64_MAX;
	struct ib_umem_odp *odp;
	struct qroce_mr *mr;
	int err;

	if (!(dev->caps.features & QROCE_FEAT_ODP))
		return ERR_PTR(-EOPNOTSUPP);
	/* HUGETLB: the umem's pages are huge ones; the table stays 4 KiB */
	if (!qroce_access_ok(access & ~(IB_ACCESS_ON_DEMAND | IB_ACCESS_HUGETLB)))
		return ERR_PTR(-EOPNOTSUPP);
	if (!implicit && (!len || len > dev->caps.max_mr_size))
		return ERR_PTR(-EINVAL);
	if (implicit && virt)
		return ERR_PTR(-EINVAL);
	mr = qroce_odp_mr_alloc(ibpd);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	odp = implicit ? ib_umem_odp_alloc_implicit(ibpd->device, access) :
			 ib_umem_odp_get(ibpd->device, start, len, access,
					 &qroce_odp_mn_ops);
	if (IS_ERR(odp)) {
		err = PTR_ERR(odp);
		goto err_free;
	}
	odp->private = mr;
	mr->odp = odp;
	mr->odp_va = start;
	mr->odp_len = implicit ? TASK_SIZE : len;
	mr->odp_base_pfn = implicit ? 0 : start >> QROCE_ODP_PAGE_SHIFT;
	xa_init(&mr->odp_children);
	mutex_init(&mr->odp_child_lock);
	err = qroce_reg_odp_table(ibpd, mr, implicit ? 0 : virt, len,
				  implicit ? 0 : start & (SZ_4K - 1), access);
	if (err)
		goto err_umem;
	return &mr->ibmr;

err_umem:
	ib_umem_odp_release(odp);
err_free:
	kfree(mr);
	return ERR_PTR(err);
}

/*
 * Before DEREG_MR: no new fault work finds the MR, and the running ones
 * are done.
 */
void qroce_odp_dereg_prepare(struct qroce_mr *mr)
{
	struct qroce_dev *dev = to_qdev(mr->ibmr.device);

	xa_erase(&dev->odp_xa, mr->ibmr.lkey);
	qroce_odp_mr_put(mr);
	wait_for_completion(&mr->odp_done);
}

/*
 * After DEREG_MR succeeded: the notifiers go, then the DMA mappings (a
 * dma-buf MR's umem is released by the caller, as any MR's).
 */
void qroce_odp_dereg_done(struct qroce_mr *mr)
{
	struct ib_umem_odp *child;
	unsigned long idx;

	WRITE_ONCE(mr->odp_dead, true);
	if (!mr->odp)
		return;
	xa_for_each(&mr->odp_children, idx, child)
		ib_umem_odp_release(child);
	xa_destroy(&mr->odp_children);
	ib_umem_odp_release(mr->odp);
	mr->odp = NULL;
}

/* DEREG_MR failed: the MR stays, and so does its key's entry. */
void qroce_odp_dereg_undo(struct qroce_mr *mr)
{
	struct qroce_dev *dev = to_qdev(mr->ibmr.device);

	refcount_set(&mr->odp_refs, 1);
	reinit_completion(&mr->odp_done);
	xa_store(&dev->odp_xa, mr->ibmr.lkey, mr, GFP_KERNEL);
}

/* ------------------------------------------------------------------ */
/* Prefetch (ibv_advise_mr)                                            */
/* ------------------------------------------------------------------ */

/*
 * Prefetch @sge of @mr, as mlx5 does: an MR of another PD, or a write
 * prefetch of one not writable, is refused with -EPERM (as the man page
 * says); a dma-buf MR maps all of its buffer, as its page faults do.
 */
static int qroce_odp_prefetch(struct qroce_mr *mr, struct ib_pd *pd,
			      const struct ib_sge *sge, bool write, bool fault)
{
	struct ib_umem *umem = mr->dmabuf ? &mr->dmabuf->umem :
			       &mr->odp->umem;

	if (mr->ibmr.pd != pd || (write && !umem->writable))
		return -EPERM;
	if (mr->dmabuf) {
		if (sge->addr < mr->ibmr.iova ||
		    sge->addr - mr->ibmr.iova >= mr->ibmr.length)
			return -EFAULT;
		return qroce_dmabuf_map(mr);
	}
	return qroce_odp_map_range(mr, sge->addr - mr->ibmr.iova + mr->odp_va,
				   sge->length, write, fault);
}

int qroce_advise_mr(struct ib_pd *pd, enum ib_uverbs_advise_mr_advice advice,
		    u32 flags, struct ib_sge *sg_list, u32 num_sge,
		    struct uverbs_attr_bundle *attrs)
{
	struct qroce_dev *dev = to_qdev(pd->device);
	bool fault = advice != IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT;
	bool write = advice == IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE;
	struct qroce_mr *mr;
	int err = 0;
	u32 i;

	if (advice > IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT ||
	    (flags & ~IB_UVERBS_ADVISE_MR_FLAG_FLUSH))
		return -EOPNOTSUPP;
	/* done before returning, with or without FLUSH */
	for (i = 0; i < num_sge && !err; i++) {
		mr = qroce_odp_mr_get(dev, sg_list[i].lkey);
		if (!mr)
			return -ENOENT;
		err = qroce_odp_prefetch(mr, pd, &sg_list[i], write, fault);
		qroce_odp_mr_put(mr);
	}
	return err;
}

/* the verbs of on-demand paging and dma-buf memory regions, set by qroce_ib_register() */
const struct ib_device_ops qroce_odp_ops = {
	.advise_mr = qroce_advise_mr,
	.reg_user_mr_dmabuf = qroce_reg_user_mr_dmabuf,
};
