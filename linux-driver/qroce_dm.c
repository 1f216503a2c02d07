// SPDX-License-Identifier: GPL-2.0-only
/*
 * Device memory (docs/hw-spec.md section 4a): the pages of BAR 5, handed
 * to user contexts by ibv_alloc_dm() and mapped into them write-combining,
 * and MRs on them (ibv_reg_dm_mr()), whose bytes the device reads and
 * writes in its own memory, never in guest RAM.
 *
 * The driver keeps the pool: a bit per page.  An allocation takes whole
 * pages (its mapping cannot share a page with another process's), zeroed
 * before it is handed out; they go back when the last mapping of them goes
 * (qroce_dm_mmap_free), not at ibv_free_dm, so a process that still maps
 * them never sees the next owner's bytes.
 */
#include <linux/bitmap.h>
#include <rdma/ib_user_ioctl_cmds.h>
#define UVERBS_MODULE_NAME qroce_ib
#include <rdma/uverbs_ioctl.h>
#include <rdma/uverbs_named_ioctl.h>
#include "qroce_verbs.h"

static_assert(QROCE_IB_NS == (1U << UVERBS_ID_NS_SHIFT));

struct qroce_dm {
	struct ib_dm ibdm;
	struct qroce_mmap_entry *entry;	/* owns the pages */
	u64 offset;			/* in device memory, page aligned */
};

static struct qroce_dm *to_qdm(struct ib_dm *ibdm)
{
	return container_of(ibdm, struct qroce_dm, ibdm);
}

static void qroce_dm_pages_put(struct qroce_dev *dev, u32 first, u32 n)
{
	mutex_lock(&dev->dm_lock);
	bitmap_clear(dev->dm_map, first, n);
	mutex_unlock(&dev->dm_lock);
}

/* The last mapping of an allocation's pages is gone: back to the pool. */
void qroce_dm_mmap_free(struct qroce_mmap_entry *e)
{
	struct qroce_dev *dev = to_qdev(e->rdma_entry.ucontext->device);

	qroce_dm_pages_put(dev, e->dm_first, e->dm_npages);
}

static struct ib_dm *qroce_alloc_dm(struct ib_device *ibdev,
				    struct ib_ucontext *ibuc,
				    struct ib_dm_alloc_attr *attr,
				    struct uverbs_attr_bundle *attrs)
{
	struct qroce_dev *dev = to_qdev(ibdev);
	unsigned long first, align = 1;
	struct qroce_mmap_entry *e;
	struct qroce_dm *dm;
	u32 npages;
	u64 key;
	int err;

	if (attr->flags)
		return ERR_PTR(-EOPNOTSUPP);
	if (!attr->length || attr->length > dev->caps.dm_size ||
	    attr->alignment > ilog2(dev->caps.dm_size))
		return ERR_PTR(-EINVAL);
	if (attr->alignment > PAGE_SHIFT)
		align = 1UL << (attr->alignment - PAGE_SHIFT);
	npages = DIV_ROUND_UP(attr->length, PAGE_SIZE);
	dm = kzalloc_obj(*dm, GFP_KERNEL);
	e = kzalloc_obj(*e, GFP_KERNEL);
	if (!dm || !e) {
		err = -ENOMEM;
		goto err_free;
	}
	mutex_lock(&dev->dm_lock);
	first = bitmap_find_next_zero_area(dev->dm_map, dev->dm_pages, 0,
					   npages, align - 1);
	if (first < dev->dm_pages)
		bitmap_set(dev->dm_map, first, npages);
	mutex_unlock(&dev->dm_lock);
	if (first >= dev->dm_pages) {
		err = -ENOMEM;
		goto err_free;
	}
	/* nothing of an earlier owner's */
	memset_io(dev->dm_kva + first * PAGE_SIZE, 0, npages * PAGE_SIZE);
	e->address = dev->core->dm_bar_start + first * PAGE_SIZE;
	e->dm = true;
	e->dm_first = first;
	e->dm_npages = npages;
	err = rdma_user_mmap_entry_insert(ibuc, &e->rdma_entry,
					  (size_t)npages * PAGE_SIZE);
	if (err) {
		qroce_dm_pages_put(dev, first, npages);
		goto err_free;
	}
	dm->entry = e;
	dm->offset = (u64)first * PAGE_SIZE;
	key = rdma_user_mmap_get_offset(&e->rdma_entry);
	err = uverbs_copy_to(attrs, QROCE_IB_ATTR_ALLOC_DM_RESP_MMAP_OFFSET,
			     &key, sizeof(key));
	if (err) {
		/* the pages go back through qroce_dm_mmap_free() */
		rdma_user_mmap_entry_remove(&e->rdma_entry);
		kfree(dm);
		return ERR_PTR(err);
	}
	return &dm->ibdm;

err_free:
	kfree(e);
	kfree(dm);
	return ERR_PTR(err);
}

/* ib_uverbs refuses while MRs use it (usecnt); mappings may remain. */
static int qroce_dealloc_dm(struct ib_dm *ibdm,
			    struct uverbs_attr_bundle *attrs)
{
	struct qroce_dm *dm = to_qdm(ibdm);

	rdma_user_mmap_entry_remove(&dm->entry->rdma_entry);
	kfree(dm);
	return 0;
}

/*
 * An MR on device memory: zero-based (ib_uverbs insists), its bytes
 * dm[offset, offset + length) of the allocation, which ib_uverbs has
 * checked lie inside it.  No pages to pin: the REG_MR command names the
 * range in the device's memory (QROCE_BT_DM).
 */
static struct ib_mr *qroce_reg_dm_mr(struct ib_pd *ibpd, struct ib_dm *ibdm,
				     struct ib_dm_mr_attr *attr,
				     struct uverbs_attr_bundle *attrs)
{
	struct qroce_dev *dev = to_qdev(ibpd->device);
	int access = attr->access_flags & ~IB_ZERO_BASED;
	struct qroce_dm *dm = to_qdm(ibdm);
	struct qroce_cmd cmd = {};
	struct qroce_mr *mr;

	if (!qroce_access_ok(access) || (access & IB_ACCESS_MW_BIND))
		return ERR_PTR(-EOPNOTSUPP);
	mr = kzalloc_obj(*mr, GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	cmd.hdr.opcode = QROCE_CMD_REG_MR;
	cmd.reg_mr.pdn = cpu_to_le32(to_qpd(ibpd)->pdn);
	cmd.reg_mr.access = cpu_to_le32(qroce_hw_access(access));
	cmd.reg_mr.iova = 0;
	cmd.reg_mr.length = cpu_to_le64(attr->length);
	cmd.reg_mr.pages.level = QROCE_BT_DM;
	cmd.reg_mr.pages.addr = cpu_to_le64(dm->offset + attr->offset);
	return qroce_reg_mr_nopin(dev, &cmd, mr, access);
}

/*
 * ibv_import_dm() in another context of the same file (a dup of the
 * command fd): the mmap offset of the allocation's pages, which that
 * context shares, and the length asked for.
 */
static int UVERBS_HANDLER(QROCE_IB_METHOD_DM_QUERY)(struct uverbs_attr_bundle *attrs)
{
	struct ib_dm *ibdm =
		uverbs_attr_get_obj(attrs, QROCE_IB_ATTR_QUERY_DM_REQ_HANDLE);
	struct qroce_dm *dm = to_qdm(ibdm);
	u64 key = rdma_user_mmap_get_offset(&dm->entry->rdma_entry);
	int err;

	err = uverbs_copy_to(attrs, QROCE_IB_ATTR_QUERY_DM_RESP_MMAP_OFFSET,
			     &key, sizeof(key));
	if (err)
		return err;
	return uverbs_copy_to(attrs, QROCE_IB_ATTR_QUERY_DM_RESP_LENGTH,
			      &ibdm->length, sizeof(ibdm->length));
}

DECLARE_UVERBS_NAMED_METHOD(QROCE_IB_METHOD_DM_QUERY,
			    UVERBS_ATTR_IDR(QROCE_IB_ATTR_QUERY_DM_REQ_HANDLE,
					    UVERBS_OBJECT_DM,
					    UVERBS_ACCESS_READ, UA_MANDATORY),
			    UVERBS_ATTR_PTR_OUT(QROCE_IB_ATTR_QUERY_DM_RESP_MMAP_OFFSET,
						UVERBS_ATTR_TYPE(u64),
						UA_MANDATORY),
			    UVERBS_ATTR_PTR_OUT(QROCE_IB_ATTR_QUERY_DM_RESP_LENGTH,
						UVERBS_ATTR_TYPE(u64),
						UA_MANDATORY));

ADD_UVERBS_ATTRIBUTES_SIMPLE(qroce_ib_dm, UVERBS_OBJECT_DM,
			     UVERBS_METHOD_DM_ALLOC,
			     UVERBS_ATTR_PTR_OUT(QROCE_IB_ATTR_ALLOC_DM_RESP_MMAP_OFFSET,
						 UVERBS_ATTR_TYPE(u64),
						 UA_MANDATORY));

DECLARE_UVERBS_GLOBAL_METHODS(UVERBS_OBJECT_DM,
			      &UVERBS_METHOD(QROCE_IB_METHOD_DM_QUERY));

/* Chained by qroce_ctrl.c; the core leaves them out without alloc_dm. */
const struct uapi_definition qroce_dm_defs[] = {
	UAPI_DEF_CHAIN_OBJ_TREE(UVERBS_OBJECT_DM, &qroce_ib_dm),
	UAPI_DEF_CHAIN_OBJ_TREE_NAMED(UVERBS_OBJECT_DM),
	{},
};

static const struct ib_device_ops qroce_dm_ops = {
	.alloc_dm = qroce_alloc_dm,
	.dealloc_dm = qroce_dealloc_dm,
	.reg_dm_mr = qroce_reg_dm_mr,
};

/*
 * Before the ib_device is registered: with device memory, its pool, a
 * kernel mapping (to zero pages) and the verbs.  0 or an errno.
 */
int qroce_dm_init(struct qroce_dev *dev)
{
	mutex_init(&dev->dm_lock);
	if (!dev->caps.dm_size)
		return 0;
	dev->dm_pages = dev->caps.dm_size >> PAGE_SHIFT;
	dev->dm_map = bitmap_zalloc(dev->dm_pages, GFP_KERNEL);
	if (!dev->dm_map)
		return -ENOMEM;
	dev->dm_kva = ioremap_wc(dev->core->dm_bar_start, dev->caps.dm_size);
	if (!dev->dm_kva) {
		bitmap_free(dev->dm_map);
		dev->dm_map = NULL;
		return -ENOMEM;
	}
	ib_set_device_ops(&dev->ibdev, &qroce_dm_ops);
	return 0;
}

/* After unregistration, when no context (and so no mapping) is left. */
void qroce_dm_fini(struct qroce_dev *dev)
{
	if (dev->dm_kva)
		iounmap(dev->dm_kva);
	bitmap_free(dev->dm_map);
	dev->dm_map = NULL;
	dev->dm_kva = NULL;
	mutex_destroy(&dev->dm_lock);
}
