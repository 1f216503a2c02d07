// SPDX-License-Identifier: GPL-2.0-only
/*
 * qroce buffer tables: the pages of a pinned user buffer described to the
 * device, and the rings of CQs, QPs and SRQs (user: pinned provider memory;
 * kernel: a DMA-coherent buffer).
 */
#include <linux/module.h>
#include <linux/dma-mapping.h>
#include <linux/log2.h>
#include <rdma/iter.h>
#include "qroce_verbs.h"

void qroce_bt_tmp_free(struct qroce_dev *dev, struct qroce_bt_tmp *t)
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
int qroce_bt_from_umem(struct qroce_dev *dev, struct ib_umem *umem,
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
int qroce_ring_get(struct qroce_dev *dev, struct qroce_ring *r,
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
		r->umem = ib_umem_get_va(&dev->ibdev, uaddr, r->size,
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

void qroce_ring_put(struct qroce_dev *dev, struct qroce_ring *r)
{
	if (r->umem)
		ib_umem_release(r->umem);
	if (r->va)
		dma_free_coherent(&dev->pdev->dev, r->size, r->va, r->dma);
	memset(r, 0, sizeof(*r));
}

/*
 * The module's identity is with its first file, so that the module links
 * whichever of its files a build has.
 */
MODULE_DESCRIPTION("qroce emulated RoCEv2 NIC: RDMA (auxiliary driver)");
MODULE_LICENSE("GPL");
MODULE_AUTHOR("qroce");
