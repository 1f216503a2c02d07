/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * qroce_compat.h: what the out-of-tree build needs on kernels older than
 * the one the driver is written for (Linux 7.3).  It is not part of the
 * Linux series (scripts/series.sh leaves it out) and no source includes
 * it: the out-of-tree Kbuild, and the build of the series on a Linux 6.12
 * base, put it before everything else with -include.  So every shim here
 * is a macro or an inline under the newer name; the driver's own code
 * stays as it would be upstream.
 */
#ifndef QROCE_COMPAT_H
#define QROCE_COMPAT_H

#include <linux/version.h>
#include <rdma/ib_user_ioctl_verbs.h>

/*
 * The driver id: the series adds RDMA_DRIVER_QROCE to the uapi enum after
 * RDMA_DRIVER_IONIC (21); a kernel without the series has none.  Defined
 * after the enum was read, the macro only shadows the enumerator where
 * there is one.  22 is QROCE_RDMA_DRIVER_ID of include/qroce-abi.h.
 */
#define RDMA_DRIVER_QROCE	22

#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 13, 0)

#include <linux/dma-buf.h>
#include <linux/hmm.h>
#include <linux/slab.h>
#include <rdma/ib_umem_odp.h>
#include <rdma/ib_verbs.h>

/*
 * 6.12: no kzalloc_obj(), the allocation by the pointed-to type; the
 * driver always names its GFP flags, so the shim takes them as given
 */
#define kzalloc_obj(P, GFP)	kzalloc(sizeof(P), GFP)

/*
 * 6.12: no ODP capability bits for FLUSH and ATOMIC WRITE (7.3 has them,
 * with ODP in rxe); 6.12's uverbs has no field to report them in
 */
#define IB_ODP_SUPPORT_FLUSH		0
#define IB_ODP_SUPPORT_ATOMIC_WRITE	0

/* 6.12: ib_umem_get() is ib_umem_get_va() */
#define ib_umem_get_va	ib_umem_get

/* 6.12: dma_buf_attach_ops.invalidate_mappings is move_notify */
#define invalidate_mappings	move_notify

/*
 * 6.12: reg_user_mr and reg_user_mr_dmabuf have no DMA handle.  The
 * driver's functions take one (and refuse any); under their names the
 * ops get wrappers of the older type, which pass none.
 */
struct ib_dmah;

#define qroce_reg_user_mr(pd, start, len, virt, access, dmah, udata) \
	qroce_reg_user_mr_dmah(pd, start, len, virt, access, dmah, udata)
struct ib_mr *qroce_reg_user_mr_dmah(struct ib_pd *ibpd, u64 start, u64 len,
				     u64 virt, int access,
				     struct ib_dmah *dmah,
				     struct ib_udata *udata);
static inline struct ib_mr *(qroce_reg_user_mr)(struct ib_pd *ibpd, u64 start,
						 u64 len, u64 virt, int access,
						 struct ib_udata *udata)
{
	return qroce_reg_user_mr_dmah(ibpd, start, len, virt, access, NULL,
				      udata);
}

#define qroce_reg_user_mr_dmabuf(pd, off, len, virt, fd, access, dmah, attrs) \
	qroce_reg_user_mr_dmabuf_dmah(pd, off, len, virt, fd, access, dmah, attrs)
struct ib_mr *qroce_reg_user_mr_dmabuf_dmah(struct ib_pd *ibpd, u64 offset,
					    u64 len, u64 virt, int fd,
					    int access, struct ib_dmah *dmah,
					    struct uverbs_attr_bundle *attrs);
static inline struct ib_mr *
(qroce_reg_user_mr_dmabuf)(struct ib_pd *ibpd, u64 offset, u64 len, u64 virt,
			   int fd, int access, struct uverbs_attr_bundle *attrs)
{
	return qroce_reg_user_mr_dmabuf_dmah(ibpd, offset, len, virt, fd,
					     access, NULL, attrs);
}

/*
 * 6.12: resize_user_cq is resize_cq, its cqe an int; the kernel's own
 * ib_resize_cq() calls it too.
 */
#define resize_user_cq	resize_cq
#define qroce_resize_cq(cq, cqe, udata)	qroce_resize_cq_uint(cq, cqe, udata)
int qroce_resize_cq_uint(struct ib_cq *ibcq, unsigned int cqe,
			 struct ib_udata *udata);
static inline int (qroce_resize_cq)(struct ib_cq *ibcq, int cqe,
				    struct ib_udata *udata)
{
	return cqe < 1 ? -EINVAL : qroce_resize_cq_uint(ibcq, cqe, udata);
}

/*
 * 6.12: ib_umem_odp_map_dma_and_lock() takes ODP_READ_ALLOWED_BIT and
 * ODP_WRITE_ALLOWED_BIT (7.3: HMM_PFN_WRITE or not) and DMA-maps the
 * pages itself, into umem_odp->dma_list (7.3: the driver maps each page
 * of umem_odp->map).  This stands in for qroce_odp.h's
 * qroce_odp_page_dma(), and keeps qroce_odp.h out.
 */
#define ib_umem_odp_map_dma_and_lock(odp, start, bcnt, mask, fault) \
	ib_umem_odp_map_dma_and_lock(odp, start, bcnt, \
				     ODP_READ_ALLOWED_BIT | \
				     ((mask) & HMM_PFN_WRITE ? \
				      ODP_WRITE_ALLOWED_BIT : 0), fault)

#define QROCE_ODP_H
static inline int qroce_odp_page_dma(struct ib_umem_odp *odp, size_t idx,
				     dma_addr_t *dma, bool *write)
{
	dma_addr_t d = odp->dma_list[idx];

	if (!(d & ODP_READ_ALLOWED_BIT))
		return -ENOENT;
	*dma = d & ODP_DMA_ADDR_MASK;
	*write = d & ODP_WRITE_ALLOWED_BIT;
	return 0;
}

#endif /* 6.12 */

#endif /* QROCE_COMPAT_H */
