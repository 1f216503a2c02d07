// SPDX-License-Identifier: GPL-2.0 or OpenIB.org BSD (MIT) See COPYING file
/*
 * libqroce control path: every verb that creates, changes or destroys an
 * object goes to the kernel through ibv_cmd_*(); the rings those objects
 * use are allocated here, in this process's memory.  The data path
 * (qroce_post.c, qroce_poll.c) never makes a system call.
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
#include <infiniband/cmd_write.h>

#include "qroce.h"
#include "qroce_abi.h"

/*
 * A ring of @size bytes (rounded up to pages, zeroed): from @pd's
 * allocator when @pd is a parent domain that has one and it does not
 * answer IBV_ALLOCATOR_USE_DEFAULT, else from the heap.  The driver pins
 * it as it is, so it must start on a page: an allocator that returns
 * memory off a page boundary fails the verb with EINVAL.  @m says where
 * it came from, for qroce_free_ring().
 */
static void *qroce_alloc_ring(struct qroce_pd *pd, uint64_t type, size_t size,
			      size_t *out_size, struct qroce_ring_mem *m)
{
	size_t psz = sysconf(_SC_PAGESIZE);
	void *p;

	size = (size + psz - 1) & ~(psz - 1);
	m->pd = NULL;
	m->type = QROCE_RES_TYPE_BASE | type;
	if (pd && pd->alloc) {
		p = pd->alloc(&pd->ibv_pd, pd->pd_context, size, psz, m->type);
		if (p != IBV_ALLOCATOR_USE_DEFAULT) {
			if (!p) {
				errno = ENOMEM;
				return NULL;
			}
			if ((uintptr_t)p & (psz - 1)) {
				pd->free(&pd->ibv_pd, pd->pd_context, p,
					 m->type);
				errno = EINVAL;
				return NULL;
			}
			m->pd = pd;
			goto out;
		}
	}
	if (posix_memalign(&p, psz, size)) {
		errno = ENOMEM;
		return NULL;
	}
out:
	memset(p, 0, size);
	*out_size = size;
	return p;
}

static void qroce_free_ring(void *p, const struct qroce_ring_mem *m)
{
	if (p && m->pd)
		m->pd->free(&m->pd->ibv_pd, m->pd->pd_context, p, m->type);
	else
		free(p);
}

/* The parent domain @pd is, or NULL for a plain protection domain. */
static struct qroce_pd *qroce_parent(struct ibv_pd *pd)
{
	struct qroce_pd *qpd = pd ? to_qpd(pd) : NULL;

	return qpd && qpd->pd ? qpd : NULL;
}

/*
 * A CQ, QP or SRQ made through parent domain @pd (NULL: none) holds it
 * until it is destroyed: its rings go back through the domain's
 * allocator, so the domain cannot go first (EBUSY, as mlx5).
 */
static void qroce_parent_get(struct qroce_pd *pd)
{
	if (pd)
		atomic_fetch_add(&pd->refcount, 1);
}

static void qroce_parent_put(struct qroce_pd *pd)
{
	if (pd)
		atomic_fetch_sub(&pd->refcount, 1);
}

static unsigned int qroce_log2_up(uint32_t n)
{
	return n <= 1 ? 0 : ilog32(n - 1);
}

/* ------------------------------------------------------------------ */
/* Device, port, PD, MR                                                */
/* ------------------------------------------------------------------ */

static int qroce_query_device(struct ibv_context *ctx,
			      const struct ibv_query_device_ex_input *input,
			      struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ib_uverbs_ex_query_device_resp resp;
	size_t resp_size = sizeof(resp);

	return ibv_cmd_query_device_any(ctx, input, attr, attr_size, &resp,
					&resp_size);
}

static int qroce_query_port(struct ibv_context *ctx, uint8_t port,
			    struct ibv_port_attr *attr)
{
	struct ibv_query_port cmd;

	return ibv_cmd_query_port(ctx, port, attr, &cmd, sizeof(cmd));
}

static struct ibv_pd *qroce_alloc_pd(struct ibv_context *ctx)
{
	struct uqroce_alloc_pd_resp resp = {};
	struct ibv_alloc_pd cmd;
	struct qroce_pd *pd = calloc(1, sizeof(*pd));
	int err;

	if (!pd) {
		errno = ENOMEM;
		return NULL;
	}
	err = ibv_cmd_alloc_pd(ctx, &pd->ibv_pd, &cmd, sizeof(cmd),
			       &resp.ibv_resp, sizeof(resp));
	if (err) {
		free(pd);
		errno = err;
		return NULL;
	}
	atomic_init(&pd->refcount, 0);
	return &pd->ibv_pd;
}

/*
 * A parent domain goes without a command (the kernel never saw it); one
 * that CQs, QPs or SRQs still use is busy, and so is a protection domain
 * that parent domains still name.
 */
static int qroce_dealloc_pd(struct ibv_pd *ibpd)
{
	struct qroce_pd *pd = to_qpd(ibpd);
	int err;

	if (atomic_load(&pd->refcount))
		return EBUSY;
	if (pd->pd) {
		atomic_fetch_sub(&pd->pd->refcount, 1);
		if (pd->td)
			atomic_fetch_sub(&pd->td->refcount, 1);
		free(pd);
		return 0;
	}
	err = ibv_cmd_dealloc_pd(ibpd);
	if (!err)
		free(pd);
	return err;
}

/*
 * ibv_import_pd(): a PD of another context on the same command file, its
 * handle checked by the kernel.  ibv_unimport_pd() forgets it here and
 * leaves it to its owner.
 */
static struct ibv_pd *qroce_import_pd(struct ibv_context *ctx,
				      uint32_t pd_handle)
{
	DECLARE_COMMAND_BUFFER(cmdb, UVERBS_OBJECT_PD, QROCE_IB_METHOD_PD_QUERY,
			       2);
	struct qroce_pd *pd;
	uint32_t pdn;
	int err;

	fill_attr_in_obj(cmdb, QROCE_IB_ATTR_QUERY_PD_REQ_HANDLE, pd_handle);
	fill_attr_out_ptr(cmdb, QROCE_IB_ATTR_QUERY_PD_RESP_PDN, &pdn);
	err = execute_ioctl(ctx, cmdb);
	if (err) {
		errno = err;
		return NULL;
	}
	pd = calloc(1, sizeof(*pd));
	if (!pd) {
		errno = ENOMEM;
		return NULL;
	}
	pd->ibv_pd.context = ctx;
	pd->ibv_pd.handle = pd_handle;
	atomic_init(&pd->refcount, 0);
	return &pd->ibv_pd;
}

static void qroce_unimport_pd(struct ibv_pd *ibpd)
{
	free(to_qpd(ibpd));
}

/* ibv_import_mr(): the kernel's generic MR query fills it in. */
static struct ibv_mr *qroce_import_mr(struct ibv_pd *pd, uint32_t mr_handle)
{
	struct verbs_mr *vmr = calloc(1, sizeof(*vmr));
	int err;

	if (!vmr) {
		errno = ENOMEM;
		return NULL;
	}
	err = ibv_cmd_query_mr(pd, vmr, mr_handle);
	if (err) {
		free(vmr);
		errno = err;
		return NULL;
	}
	return &vmr->ibv_mr;
}

static void qroce_unimport_mr(struct ibv_mr *ibmr)
{
	free(container_of(ibmr, struct verbs_mr, ibv_mr));
}

static struct ibv_td *qroce_alloc_td(struct ibv_context *ctx,
				     struct ibv_td_init_attr *attr)
{
	struct qroce_td *td;

	if (attr->comp_mask) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	td = calloc(1, sizeof(*td));
	if (!td) {
		errno = ENOMEM;
		return NULL;
	}
	td->ibv_td.context = ctx;
	atomic_init(&td->refcount, 0);
	return &td->ibv_td;
}

static int qroce_dealloc_td(struct ibv_td *ibtd)
{
	struct qroce_td *td = to_qtd(ibtd);

	if (atomic_load(&td->refcount))
		return EBUSY;
	free(td);
	return 0;
}

/*
 * ibv_alloc_parent_domain(): a protection domain (not another parent
 * domain) of this context, optionally a thread domain, optionally the
 * application's allocator for ring memory.
 */
static struct ibv_pd *
qroce_alloc_parent_domain(struct ibv_context *ctx,
			  struct ibv_parent_domain_init_attr *attr)
{
	uint32_t known = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |
			 IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT;
	struct qroce_pd *pd;

	if (attr->comp_mask & ~known) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!attr->pd || attr->pd->context != ctx || to_qpd(attr->pd)->pd ||
	    (attr->td && attr->td->context != ctx) ||
	    ((attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) &&
	     (!attr->alloc || !attr->free))) {
		errno = EINVAL;
		return NULL;
	}
	pd = calloc(1, sizeof(*pd));
	if (!pd) {
		errno = ENOMEM;
		return NULL;
	}
	pd->pd = to_qpd(attr->pd);
	ibv_initialize_parent_domain(&pd->ibv_pd, &pd->pd->ibv_pd);
	if (attr->td) {
		pd->td = to_qtd(attr->td);
		atomic_fetch_add(&pd->td->refcount, 1);
	}
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) {
		pd->alloc = attr->alloc;
		pd->free = attr->free;
	}
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT)
		pd->pd_context = attr->pd_context;
	atomic_fetch_add(&pd->pd->refcount, 1);
	return &pd->ibv_pd;
}

static struct ibv_mr *qroce_reg_mr(struct ibv_pd *pd, void *addr,
				   size_t length, uint64_t hca_va, int access)
{
	struct ib_uverbs_reg_mr_resp resp;
	struct ibv_reg_mr cmd;
	struct verbs_mr *vmr = calloc(1, sizeof(*vmr));
	int err;

	if (!vmr) {
		errno = ENOMEM;
		return NULL;
	}
	err = ibv_cmd_reg_mr(pd, addr, length, hca_va, access, vmr, &cmd,
			     sizeof(cmd), &resp, sizeof(resp));
	if (err) {
		free(vmr);
		errno = err;
		return NULL;
	}
	return &vmr->ibv_mr;
}

/*
 * ibv_advise_mr: prefetch into an ODP MR's table.  The kernel driver
 * faults the pages in and maps them before the call returns.
 */
static int qroce_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
			   uint32_t flags, struct ibv_sge *sg_list,
			   uint32_t num_sge)
{
	return ibv_cmd_advise_mr(pd, advice, flags, sg_list, num_sge);
}

/*
 * An MR on a dma-buf (ibv_reg_dmabuf_mr): the kernel driver attaches it
 * pinned and gives the device its pages like any MR's.
 */
static struct ibv_mr *qroce_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset,
					  size_t length, uint64_t iova, int fd,
					  int access)
{
	struct verbs_mr *vmr = calloc(1, sizeof(*vmr));
	int err;

	if (!vmr) {
		errno = ENOMEM;
		return NULL;
	}
	err = ibv_cmd_reg_dmabuf_mr(pd, offset, length, iova, fd, access, vmr,
				    NULL);
	if (err) {
		free(vmr);
		errno = err;
		return NULL;
	}
	return &vmr->ibv_mr;
}

/* In place: the kernel driver gives the device the new registration. */
static int qroce_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
			  void *addr, size_t length, int access)
{
	struct ib_uverbs_rereg_mr_resp resp;
	struct ibv_rereg_mr cmd;

	return ibv_cmd_rereg_mr(vmr, flags, addr, length, (uintptr_t)addr,
				access, pd, &cmd, sizeof(cmd), &resp,
				sizeof(resp));
}

static int qroce_dereg_mr(struct verbs_mr *vmr)
{
	int err = ibv_cmd_dereg_mr(vmr);

	if (!err)
		free(vmr);
	return err;
}

/* Memory windows: bound by work requests (qroce_post.c). */
static struct ibv_mw *qroce_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct ib_uverbs_alloc_mw_resp resp;
	struct ibv_alloc_mw cmd;
	struct ibv_mw *mw = calloc(1, sizeof(*mw));
	int err;

	if (!mw) {
		errno = ENOMEM;
		return NULL;
	}
	err = ibv_cmd_alloc_mw(pd, type, mw, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (err) {
		free(mw);
		errno = err;
		return NULL;
	}
	return mw;
}

static int qroce_dealloc_mw(struct ibv_mw *mw)
{
	int err = ibv_cmd_dealloc_mw(mw);

	if (!err)
		free(mw);
	return err;
}

/* ------------------------------------------------------------------ */
/* Device memory                                                       */
/* ------------------------------------------------------------------ */

/*
 * Copies to and from device memory: 4-byte aligned offsets and lengths
 * inside the allocation, as on hardware whose device memory takes 32-bit
 * writes; EINVAL otherwise.
 */
static int qroce_dm_range(struct qroce_dm *dm, uint64_t off, size_t len)
{
	if ((off | len) & 3 || off > dm->length || len > dm->length - off)
		return EINVAL;
	return 0;
}

static int qroce_memcpy_to_dm(struct ibv_dm *ibdm, uint64_t off,
			      const void *host, size_t len)
{
	struct qroce_dm *dm = to_qdm(ibdm);
	int err = qroce_dm_range(dm, off, len);

	if (err)
		return err;
	memcpy(dm->va + off, host, len);
	/* write-combined stores reach the device before anything after */
	mmio_flush_writes();
	return 0;
}

static int qroce_memcpy_from_dm(void *host, struct ibv_dm *ibdm, uint64_t off,
				size_t len)
{
	struct qroce_dm *dm = to_qdm(ibdm);
	int err = qroce_dm_range(dm, off, len);

	if (err)
		return err;
	memcpy(host, dm->va + off, len);
	return 0;
}

/*
 * ibv_alloc_dm(): the kernel gives whole pages and the mmap offset of
 * them (the driver attribute QROCE_IB_ATTR_ALLOC_DM_RESP_MMAP_OFFSET);
 * they are mapped here for ibv_memcpy_to_dm()/_from_dm().
 */
static struct ibv_dm *qroce_alloc_dm(struct ibv_context *ctx,
				     struct ibv_alloc_dm_attr *attr)
{
	DECLARE_COMMAND_BUFFER(cmdb, UVERBS_OBJECT_DM, UVERBS_METHOD_DM_ALLOC,
			       1);
	size_t psz = sysconf(_SC_PAGESIZE);
	struct qroce_dm *dm;
	uint64_t key = 0;
	int err;

	if (attr->comp_mask) {
		errno = EINVAL;
		return NULL;
	}
	dm = calloc(1, sizeof(*dm));
	if (!dm) {
		errno = ENOMEM;
		return NULL;
	}
	fill_attr_out(cmdb, QROCE_IB_ATTR_ALLOC_DM_RESP_MMAP_OFFSET, &key,
		      sizeof(key));
	err = ibv_cmd_alloc_dm(ctx, attr, &dm->vdm, cmdb);
	if (err) {
		free(dm);
		errno = err;
		return NULL;
	}
	dm->length = attr->length;
	dm->map_size = (attr->length + psz - 1) & ~(psz - 1);
	dm->va = mmap(NULL, dm->map_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		      ctx->cmd_fd, key);
	if (dm->va == MAP_FAILED) {
		err = errno;
		ibv_cmd_free_dm(&dm->vdm);
		free(dm);
		errno = err;
		return NULL;
	}
	dm->vdm.dm.memcpy_to_dm = qroce_memcpy_to_dm;
	dm->vdm.dm.memcpy_from_dm = qroce_memcpy_from_dm;
	return &dm->vdm.dm;
}

/*
 * ibv_import_dm(): a DM of another context on the same command file; its
 * pages are mapped here too.  ibv_unimport_dm() unmaps them and leaves
 * the DM to its owner.
 */
static struct ibv_dm *qroce_import_dm(struct ibv_context *ctx,
				      uint32_t dm_handle)
{
	DECLARE_COMMAND_BUFFER(cmdb, UVERBS_OBJECT_DM, QROCE_IB_METHOD_DM_QUERY,
			       3);
	size_t psz = sysconf(_SC_PAGESIZE);
	uint64_t key = 0, length = 0;
	struct qroce_dm *dm;
	int err;

	fill_attr_in_obj(cmdb, QROCE_IB_ATTR_QUERY_DM_REQ_HANDLE, dm_handle);
	fill_attr_out(cmdb, QROCE_IB_ATTR_QUERY_DM_RESP_MMAP_OFFSET, &key,
		      sizeof(key));
	fill_attr_out(cmdb, QROCE_IB_ATTR_QUERY_DM_RESP_LENGTH, &length,
		      sizeof(length));
	err = execute_ioctl(ctx, cmdb);
	if (err) {
		errno = err;
		return NULL;
	}
	dm = calloc(1, sizeof(*dm));
	if (!dm) {
		errno = ENOMEM;
		return NULL;
	}
	dm->length = length;
	dm->map_size = (length + psz - 1) & ~(psz - 1);
	dm->va = mmap(NULL, dm->map_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		      ctx->cmd_fd, key);
	if (dm->va == MAP_FAILED) {
		err = errno;
		free(dm);
		errno = err;
		return NULL;
	}
	dm->vdm.dm.context = ctx;
	dm->vdm.dm.handle = dm_handle;
	dm->vdm.handle = dm_handle;
	dm->vdm.dm.memcpy_to_dm = qroce_memcpy_to_dm;
	dm->vdm.dm.memcpy_from_dm = qroce_memcpy_from_dm;
	return &dm->vdm.dm;
}

static void qroce_unimport_dm(struct ibv_dm *ibdm)
{
	struct qroce_dm *dm = to_qdm(ibdm);

	munmap(dm->va, dm->map_size);
	free(dm);
}

static int qroce_free_dm(struct ibv_dm *ibdm)
{
	struct qroce_dm *dm = to_qdm(ibdm);
	int err = ibv_cmd_free_dm(&dm->vdm);

	if (err)
		return err;
	munmap(dm->va, dm->map_size);
	free(dm);
	return 0;
}

/* Zero-based (the kernel insists), bytes [off, off + len) of the DM. */
static struct ibv_mr *qroce_reg_dm_mr(struct ibv_pd *pd, struct ibv_dm *ibdm,
				      uint64_t off, size_t len,
				      unsigned int access)
{
	struct verbs_mr *vmr = calloc(1, sizeof(*vmr));
	int err;

	if (!vmr) {
		errno = ENOMEM;
		return NULL;
	}
	err = ibv_cmd_reg_dm_mr(pd, &to_qdm(ibdm)->vdm, off, len, access, vmr,
				NULL);
	if (err) {
		free(vmr);
		errno = err;
		return NULL;
	}
	return &vmr->ibv_mr;
}

/* ------------------------------------------------------------------ */
/* CQ                                                                  */
/* ------------------------------------------------------------------ */

#define QROCE_CQ_WC_FLAGS	IBV_WC_STANDARD_FLAGS


static struct ibv_cq_ex *qroce_create_cq_common(struct ibv_context *ibctx,
						struct ibv_cq_init_attr_ex *attr)
{
	struct uqroce_create_cq_ex cmd = {};
	struct uqroce_create_cq_ex_resp resp = {};
	struct qroce_cq *cq;
	uint32_t log2;
	int err;

	if (attr->comp_mask & ~(uint32_t)(IBV_CQ_INIT_ATTR_MASK_FLAGS |
					  IBV_CQ_INIT_ATTR_MASK_PD) ||
	    attr->wc_flags & ~(uint64_t)QROCE_CQ_WC_FLAGS ||
	    ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	     attr->flags & ~(uint32_t)IBV_CREATE_CQ_ATTR_SINGLE_THREADED)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (attr->cqe < 1 || attr->cqe >= (1u << QROCE_CQ_MAX_LOG2)) {
		errno = EINVAL;
		return NULL;
	}
	/* a CQ's domain must be a parent domain */
	if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) &&
	    (!attr->parent_domain || !qroce_parent(attr->parent_domain) ||
	     attr->parent_domain->context != ibctx)) {
		errno = EINVAL;
		return NULL;
	}
	cq = calloc(1, sizeof(*cq));
	if (!cq) {
		errno = ENOMEM;
		return NULL;
	}
	if (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD)
		cq->pd = qroce_parent(attr->parent_domain);
	log2 = max_t(uint32_t, 1, qroce_log2_up(attr->cqe + 1));
	cq->log2 = log2;
	cq->buf = qroce_alloc_ring(cq->pd, QROCE_RES_TYPE_CQ,
				   (sizeof(struct qroce_cqe) << log2) +
				   sizeof(struct qroce_cq_rec), &cq->buf_size,
				   &cq->mem);
	if (!cq->buf)
		goto err_free;
	cq->cqes = cq->buf;
	cq->rec = (struct qroce_cq_rec *)(cq->cqes + (1u << log2));
	qroce_spin_init(&cq->lock,
			((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
			 (attr->flags & IBV_CREATE_CQ_ATTR_SINGLE_THREADED)) ||
			(cq->pd && cq->pd->td));
	cmd.buf_addr = (uintptr_t)cq->buf;
	cmd.buf_size = cq->buf_size;
	cmd.log2_entries = log2;
	/* The ring holds 2^n - 1 usable entries' worth of what was asked. */
	attr->cqe = (1u << log2) - 1;
	err = ibv_cmd_create_cq_ex(ibctx, attr, &cq->vcq, &cmd.ibv_cmd,
				   sizeof(cmd), &resp.ibv_resp, sizeof(resp), 0);
	if (err) {
		errno = err;
		goto err_ring;
	}
	cq->cqn = resp.cqn;
	qroce_cq_ex_ops(cq);
	qroce_parent_get(cq->pd);
	return &cq->vcq.cq_ex;

err_ring:
	qroce_spin_destroy(&cq->lock);
	qroce_free_ring(cq->buf, &cq->mem);
err_free:
	free(cq);
	return NULL;
}

static struct ibv_cq *qroce_create_cq(struct ibv_context *ibctx, int cqe,
				      struct ibv_comp_channel *channel,
				      int comp_vector)
{
	struct ibv_cq_init_attr_ex attr = {
		.cqe = cqe < 0 ? 0 : cqe,
		.channel = channel,
		.comp_vector = comp_vector,
		.wc_flags = IBV_WC_STANDARD_FLAGS,
	};
	struct ibv_cq_ex *cq_ex;

	if (cqe < 1) {
		errno = EINVAL;
		return NULL;
	}
	cq_ex = qroce_create_cq_common(ibctx, &attr);
	return cq_ex ? ibv_cq_ex_to_cq(cq_ex) : NULL;
}

static struct ibv_cq_ex *qroce_create_cq_ex(struct ibv_context *ibctx,
					    struct ibv_cq_init_attr_ex *attr)
{
	return qroce_create_cq_common(ibctx, attr);
}

/*
 * A new ring for the CQ: the device moves the CQEs not yet polled to its
 * start.  The CQ's lock is held throughout, so no poll moves the
 * consumer index under the device.
 */
static int qroce_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	struct qroce_cq *cq = to_qcq(ibcq);
	struct uqroce_resize_cq cmd = {};
	struct ib_uverbs_resize_cq_resp resp = {};
	struct qroce_ring_mem mem;
	uint32_t log2;
	size_t size;
	void *buf;
	int err;

	if (cqe < 1 || cqe >= (1 << QROCE_CQ_MAX_LOG2))
		return EINVAL;
	log2 = max_t(uint32_t, 1, qroce_log2_up(cqe + 1));
	buf = qroce_alloc_ring(cq->pd, QROCE_RES_TYPE_CQ,
			       (sizeof(struct qroce_cqe) << log2) +
			       sizeof(struct qroce_cq_rec), &size, &mem);
	if (!buf)
		return errno;
	qroce_spin_lock(&cq->lock);
	cmd.buf_addr = (uintptr_t)buf;
	cmd.buf_size = size;
	cmd.log2_entries = log2;
	cmd.ci = cq->ci;
	err = ibv_cmd_resize_cq(ibcq, (1 << log2) - 1, &cmd.ibv_cmd,
				sizeof(cmd), &resp, sizeof(resp));
	if (!err) {
		struct qroce_ring_mem omem = cq->mem;
		void *obuf = cq->buf;

		cq->buf = buf;
		cq->mem = mem;
		buf = obuf;
		mem = omem;
		cq->buf_size = size;
		cq->log2 = log2;
		cq->cqes = cq->buf;
		cq->rec = (struct qroce_cq_rec *)(cq->cqes + (1u << log2));
		cq->ci = 0;
	}
	qroce_spin_unlock(&cq->lock);
	qroce_free_ring(buf, &mem);
	return err;
}

static int qroce_destroy_cq(struct ibv_cq *ibcq)
{
	struct qroce_cq *cq = to_qcq(ibcq);
	int err = ibv_cmd_destroy_cq(ibcq);

	if (err)
		return err;
	qroce_spin_destroy(&cq->lock);
	qroce_free_ring(cq->buf, &cq->mem);
	qroce_parent_put(cq->pd);
	free(cq);
	return 0;
}

/* ------------------------------------------------------------------ */
/* QP                                                                  */
/* ------------------------------------------------------------------ */

/*
 * A work queue of at least @n WQEs of @stride bytes, its ring from @pd's
 * allocator if it is a parent domain with one (@type says which ring);
 * with a thread domain its lock is off.  0 or an errno.
 */
static int qroce_wq_init(struct qroce_wq *wq, struct qroce_pd *pd,
			 uint64_t type, uint32_t n, uint32_t stride)
{
	wq->log2 = qroce_log2_up(max_t(uint32_t, n, 1));
	wq->shift = qroce_log2_up(stride);
	wq->buf = qroce_alloc_ring(pd, type,
				   (size_t)1 << (wq->log2 + wq->shift),
				   &wq->buf_size, &wq->mem);
	if (!wq->buf)
		return errno;
	wq->wrid = calloc(1u << wq->log2, sizeof(uint64_t));
	if (!wq->wrid) {
		qroce_free_ring(wq->buf, &wq->mem);
		return ENOMEM;
	}
	qroce_spin_init(&wq->lock, pd && pd->td);
	return 0;
}

static void qroce_wq_fini(struct qroce_wq *wq)
{
	if (!wq->wrid)
		return;		/* never set up (a QP's RQ with an SRQ) */
	qroce_spin_destroy(&wq->lock);
	qroce_free_ring(wq->buf, &wq->mem);
	free(wq->wrid);
}


/*
 * Check a QP's requested capabilities against the context's limits and
 * size its WQEs: 0, or the errno for ibv_create_qp().
 */
static int qroce_qp_check(struct qroce_context *ctx,
			  struct ibv_qp_init_attr_ex *attr,
			  uint32_t *sbytes, uint32_t *rbytes)
{
	struct ibv_qp_cap *cap = &attr->cap;

	uint32_t flags = attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS ?
			 attr->create_flags : 0;

	/* a UD QP may block its own multicast copies (the kernel checks) */
	if (attr->qp_type == IBV_QPT_UD)
		flags &= ~(uint32_t)IBV_QP_CREATE_BLOCK_SELF_MCAST_LB;
	/* other create flags: accepted with none set, as rxe does */
	if (attr->comp_mask & ~(uint32_t)(IBV_QP_INIT_ATTR_PD |
					  IBV_QP_INIT_ATTR_SEND_OPS_FLAGS |
					  IBV_QP_INIT_ATTR_CREATE_FLAGS) ||
	    !(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || flags ||
	    !qroce_send_ops(attr->qp_type))
		return EOPNOTSUPP;
	if ((attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
	    attr->send_ops_flags & ~qroce_send_ops(attr->qp_type))
		return EOPNOTSUPP;
	if (cap->max_send_sge > ctx->max_sge ||
	    cap->max_recv_sge > ctx->max_sge ||
	    cap->max_inline_data > ctx->max_inline ||
	    cap->max_send_wr > (1u << QROCE_WQ_MAX_LOG2) ||
	    cap->max_recv_wr > (1u << QROCE_WQ_MAX_LOG2))
		return EINVAL;
	*sbytes = sizeof(struct qroce_send_wqe) +
		  max_t(uint32_t, cap->max_send_sge * sizeof(struct qroce_sge),
			cap->max_inline_data);
	*rbytes = sizeof(struct qroce_recv_wqe) +
		  max_t(uint32_t, 1, cap->max_recv_sge) *
		  sizeof(struct qroce_sge);
	*sbytes = max_t(uint32_t, *sbytes, 1u << QROCE_SQ_WQE_MIN_SHIFT);
	*rbytes = max_t(uint32_t, *rbytes, 1u << QROCE_RQ_WQE_MIN_SHIFT);
	if (qroce_log2_up(*sbytes) > ctx->sq_wqe_max_shift ||
	    qroce_log2_up(*rbytes) > ctx->rq_wqe_max_shift)
		return EINVAL;
	return 0;
}

/*
 * Allocate a QP's rings and report in attr->cap what they really hold.
 * With an SRQ the QP has no RQ ring.
 */
static int qroce_qp_rings(struct qroce_context *ctx, struct qroce_qp *qp,
			  struct ibv_qp_init_attr_ex *attr,
			  uint32_t sbytes, uint32_t rbytes)
{
	struct ibv_qp_cap *cap = &attr->cap;
	struct qroce_pd *pd = qroce_parent(attr->pd);
	int err;

	qp->pd = pd;
	err = qroce_wq_init(&qp->sq, pd, QROCE_RES_TYPE_SQ, cap->max_send_wr,
			    sbytes);
	if (err)
		return err;
	if (attr->srq) {
		/* receives come from the SRQ: no RQ ring */
		qp->srq = to_qsrq(attr->srq);
		cap->max_recv_wr = 0;
		cap->max_recv_sge = 0;
	} else {
		err = qroce_wq_init(&qp->rq, pd, QROCE_RES_TYPE_RQ,
				    cap->max_recv_wr, rbytes);
		if (err) {
			qroce_wq_fini(&qp->sq);
			return err;
		}
		cap->max_recv_wr = 1u << qp->rq.log2;
		cap->max_recv_sge = min_t(uint32_t, ctx->max_sge,
					  ((1u << qp->rq.shift) -
					   sizeof(struct qroce_recv_wqe)) /
					  sizeof(struct qroce_sge));
	}
	cap->max_send_wr = 1u << qp->sq.log2;
	cap->max_send_sge = min_t(uint32_t, ctx->max_sge,
				  ((1u << qp->sq.shift) -
				   sizeof(struct qroce_send_wqe)) /
				  sizeof(struct qroce_sge));
	cap->max_inline_data = min_t(uint32_t, ctx->max_inline,
				     (1u << qp->sq.shift) -
				     sizeof(struct qroce_send_wqe));
	qp->max_send_sge = cap->max_send_sge;
	qp->max_recv_sge = cap->max_recv_sge;
	qp->max_inline = cap->max_inline_data;
	qp->sig_all = attr->sq_sig_all;
	return 0;
}

/* The rings of the request, as the driver's create_qp reads them. */
static void qroce_qp_req(struct qroce_qp *qp, struct qroce_create_qp_req *r)
{
	r->sq_buf_addr = (uintptr_t)qp->sq.buf;
	r->rq_buf_addr = (uintptr_t)qp->rq.buf;
	r->sq_buf_size = qp->sq.buf_size;
	r->rq_buf_size = qp->rq.buf_size;
	r->sq_log2_entries = qp->sq.log2;
	r->rq_log2_entries = qp->rq.log2;
	r->sq_wqe_shift = qp->sq.shift;
	r->rq_wqe_shift = qp->srq ? QROCE_RQ_WQE_MIN_SHIFT : qp->rq.shift;
}

/*
 * CREATE_QP to the kernel; with create flags (even none set) through the
 * extended command, which the plain one cannot carry.  Sets qp->qpn.
 */
/* Enter @qp in the table at @qpn, making its chunk if need be; an errno. */
static int qroce_qp_table_set(struct qroce_context *ctx, uint32_t qpn,
			      struct qroce_qp *qp)
{
	struct qroce_qp **chunk;

	if (qpn >= QROCE_QP_TABLE_SIZE) {
		verbs_err(&ctx->ibv_ctx, "qroce: QPN %u out of range\n", qpn);
		return EINVAL;
	}
	pthread_mutex_lock(&ctx->qp_table_mutex);
	chunk = ctx->qp_table[qpn >> QROCE_QP_CHUNK_SHIFT];
	if (!chunk) {
		chunk = calloc(QROCE_QP_CHUNK, sizeof(*chunk));
		if (!chunk) {
			pthread_mutex_unlock(&ctx->qp_table_mutex);
			return ENOMEM;
		}
		atomic_store_explicit((_Atomic(struct qroce_qp **) *)
				      &ctx->qp_table[qpn >> QROCE_QP_CHUNK_SHIFT],
				      chunk, memory_order_release);
	}
	atomic_store_explicit((_Atomic(struct qroce_qp *) *)
			      &chunk[qpn & (QROCE_QP_CHUNK - 1)],
			      qp, memory_order_release);
	pthread_mutex_unlock(&ctx->qp_table_mutex);
	return 0;
}

/* Take QP @qpn out of the table; the caller holds the table mutex. */
static void qroce_qp_table_clear(struct qroce_context *ctx, uint32_t qpn)
{
	struct qroce_qp **chunk = ctx->qp_table[qpn >> QROCE_QP_CHUNK_SHIFT];

	atomic_store_explicit((_Atomic(struct qroce_qp *) *)
			      &chunk[qpn & (QROCE_QP_CHUNK - 1)],
			      NULL, memory_order_relaxed);
}

static int qroce_qp_cmd(struct ibv_context *ibctx, struct qroce_qp *qp,
			struct ibv_qp_init_attr_ex *attr)
{
	int err;

	if (attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) {
		struct uqroce_create_qp_ex cmd = {};
		struct uqroce_create_qp_ex_resp resp = {};

		qroce_qp_req(qp, &cmd.drv_payload);
		err = ibv_cmd_create_qp_ex2(ibctx, &qp->vqp, attr,
					    &cmd.ibv_cmd, sizeof(cmd),
					    &resp.ibv_resp, sizeof(resp));
		qp->qpn = resp.qpn;
	} else {
		struct uqroce_create_qp cmd = {};
		struct uqroce_create_qp_resp resp = {};

		qroce_qp_req(qp, &cmd.drv_payload);
		err = ibv_cmd_create_qp_ex(ibctx, &qp->vqp, attr, &cmd.ibv_cmd,
					   sizeof(cmd), &resp.ibv_resp,
					   sizeof(resp));
		qp->qpn = resp.qpn;
	}
	return err;
}

static struct ibv_qp *qroce_create_qp_common(struct ibv_context *ibctx,
					     struct ibv_qp_init_attr_ex *attr)
{
	struct qroce_context *ctx = to_qctx(ibctx);
	uint32_t sbytes, rbytes;
	struct qroce_qp *qp;
	int err;

	err = qroce_qp_check(ctx, attr, &sbytes, &rbytes);
	if (err) {
		errno = err;
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (!qp) {
		errno = ENOMEM;
		return NULL;
	}
	err = qroce_qp_rings(ctx, qp, attr, sbytes, rbytes);
	if (err)
		goto err_free;

	err = qroce_qp_cmd(ibctx, qp, attr);
	if (err)
		goto err_rings;
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		qroce_qp_ex_ops(qp, attr->send_ops_flags);
		qp->vqp.comp_mask |= VERBS_QP_EX;
	}
	err = qroce_qp_table_set(ctx, qp->qpn, qp);
	if (err) {
		ibv_cmd_destroy_qp(&qp->vqp.qp);
		goto err_rings;
	}
	qroce_parent_get(qp->pd);
	return &qp->vqp.qp;

err_rings:
	qroce_wq_fini(&qp->rq);
	qroce_wq_fini(&qp->sq);
err_free:
	free(qp);
	errno = err;
	return NULL;
}

static struct ibv_qp *qroce_create_qp(struct ibv_pd *pd,
				      struct ibv_qp_init_attr *attr)
{
	struct ibv_qp_init_attr_ex attr_ex = {};
	struct ibv_qp *qp;

	memcpy(&attr_ex, attr, sizeof(*attr));
	attr_ex.comp_mask = IBV_QP_INIT_ATTR_PD;
	attr_ex.pd = pd;
	qp = qroce_create_qp_common(pd->context, &attr_ex);
	if (qp)
		memcpy(attr, &attr_ex, sizeof(*attr));
	return qp;
}

static struct ibv_qp *qroce_create_qp_ex(struct ibv_context *ibctx,
					 struct ibv_qp_init_attr_ex *attr)
{
	return qroce_create_qp_common(ibctx, attr);
}

/* Lock a QP's send and receive CQs in CQN order; once if they are one. */
static void qroce_lock_cqs(struct qroce_cq *scq, struct qroce_cq *rcq)
{
	if (scq == rcq) {
		qroce_spin_lock(&scq->lock);
	} else if (scq->cqn < rcq->cqn) {
		qroce_spin_lock(&scq->lock);
		qroce_spin_lock(&rcq->lock);
	} else {
		qroce_spin_lock(&rcq->lock);
		qroce_spin_lock(&scq->lock);
	}
}

static void qroce_unlock_cqs(struct qroce_cq *scq, struct qroce_cq *rcq)
{
	qroce_spin_unlock(&scq->lock);
	if (rcq != scq)
		qroce_spin_unlock(&rcq->lock);
}

static int qroce_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
			   int mask)
{
	struct qroce_qp *qp = to_qqp(ibqp);
	struct qroce_cq *scq = to_qcq(ibqp->send_cq);
	struct qroce_cq *rcq = to_qcq(ibqp->recv_cq);
	struct ibv_modify_qp cmd = {};
	int err;

	err = ibv_cmd_modify_qp(ibqp, attr, mask, &cmd, sizeof(cmd));
	if (err)
		return err;
	if ((mask & IBV_QP_STATE) && attr->qp_state == IBV_QPS_RESET) {
		/*
		 * As mlx5: the QP's CQEs still in its CQs go (a WQE flushed
		 * before the reset must not complete in the QP's next life),
		 * and SRQ WQEs they name are retired.
		 */
		qroce_lock_cqs(scq, rcq);
		qroce_cq_clean(rcq, qp->qpn, qp->srq);
		if (scq != rcq)
			qroce_cq_clean(scq, qp->qpn, NULL);
		qroce_unlock_cqs(scq, rcq);
		qroce_spin_lock(&qp->sq.lock);
		qp->sq.pi = qp->sq.ci = 0;
		qroce_spin_unlock(&qp->sq.lock);
		if (!qp->srq) {
			qroce_spin_lock(&qp->rq.lock);
			qp->rq.pi = qp->rq.ci = 0;
			qroce_spin_unlock(&qp->rq.lock);
		}
	}
	return 0;
}

static int qroce_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
			  int mask, struct ibv_qp_init_attr *init)
{
	struct ibv_query_qp cmd;

	return ibv_cmd_query_qp(ibqp, attr, mask, init, &cmd, sizeof(cmd));
}

static int qroce_destroy_qp(struct ibv_qp *ibqp)
{
	struct qroce_context *ctx = to_qctx(ibqp->context);
	struct qroce_qp *qp = to_qqp(ibqp);
	struct qroce_cq *scq = to_qcq(ibqp->send_cq);
	struct qroce_cq *rcq = to_qcq(ibqp->recv_cq);
	int err;

	/*
	 * The device may give this QPN to a new QP as soon as the destroy is
	 * done; the table mutex keeps any new QP of this context out of the
	 * table, and so without CQEs, until this one's are cleaned out.
	 * Pollers look QPs up under their CQ's lock: with both locks held no
	 * poller is using this QP, and afterwards none finds it or its CQEs.
	 */
	pthread_mutex_lock(&ctx->qp_table_mutex);
	err = ibv_cmd_destroy_qp(ibqp);
	if (err) {
		pthread_mutex_unlock(&ctx->qp_table_mutex);
		return err;
	}
	qroce_lock_cqs(scq, rcq);
	qroce_qp_table_clear(ctx, qp->qpn);
	qroce_cq_clean(rcq, qp->qpn, qp->srq);
	if (scq != rcq)
		qroce_cq_clean(scq, qp->qpn, NULL);
	qroce_unlock_cqs(scq, rcq);
	pthread_mutex_unlock(&ctx->qp_table_mutex);
	qroce_wq_fini(&qp->sq);
	qroce_wq_fini(&qp->rq);
	qroce_parent_put(qp->pd);
	free(qp);
	return 0;
}

/* ------------------------------------------------------------------ */
/* SRQ                                                                 */
/* ------------------------------------------------------------------ */

/*
 * Give @srq @n tags (never fewer than it has: outstanding WQEs keep
 * theirs across a resize); the new ones go on the free stack.
 */
static int qroce_srq_tags_grow(struct qroce_srq *srq, uint32_t n)
{
	struct qroce_srq_tag *tags;
	uint32_t *free_tags, i;

	if (n <= srq->ntags)
		return 0;
	tags = realloc(srq->tags, n * sizeof(*tags));
	if (!tags)
		return ENOMEM;
	srq->tags = tags;
	free_tags = realloc(srq->free_tags, n * sizeof(*free_tags));
	if (!free_tags)
		return ENOMEM;
	srq->free_tags = free_tags;
	memset(tags + srq->ntags, 0, (n - srq->ntags) * sizeof(*tags));
	for (i = n; i > srq->ntags; i--)
		free_tags[srq->nfree++] = i - 1;
	srq->ntags = n;
	return 0;
}

static struct ibv_srq *qroce_create_srq(struct ibv_pd *pd,
					struct ibv_srq_init_attr *init)
{
	struct qroce_context *ctx = to_qctx(pd->context);
	struct uqroce_create_srq cmd = {};
	struct uqroce_create_srq_resp resp = {};
	struct ibv_srq_attr *attr = &init->attr;
	struct qroce_srq *srq;
	uint32_t bytes;
	int err;

	if (attr->max_sge > ctx->max_sge ||
	    attr->max_wr > (1u << QROCE_WQ_MAX_LOG2)) {
		errno = EINVAL;
		return NULL;
	}
	bytes = sizeof(struct qroce_recv_wqe) +
		max_t(uint32_t, 1, attr->max_sge) * sizeof(struct qroce_sge);
	bytes = max_t(uint32_t, bytes, 1u << QROCE_RQ_WQE_MIN_SHIFT);
	if (qroce_log2_up(bytes) > ctx->rq_wqe_max_shift) {
		errno = EINVAL;
		return NULL;
	}
	srq = calloc(1, sizeof(*srq));
	if (!srq) {
		errno = ENOMEM;
		return NULL;
	}
	srq->pd = qroce_parent(pd);
	err = qroce_wq_init(&srq->wq, srq->pd, QROCE_RES_TYPE_SRQ,
			    attr->max_wr, bytes);
	if (err)
		goto err_free;
	err = qroce_srq_tags_grow(srq, 1u << srq->wq.log2);
	if (err)
		goto err_wq;
	attr->max_wr = 1u << srq->wq.log2;
	attr->max_sge = min_t(uint32_t, ctx->max_sge,
			      ((1u << srq->wq.shift) -
			       sizeof(struct qroce_recv_wqe)) /
			      sizeof(struct qroce_sge));
	srq->max_sge = attr->max_sge;
	cmd.buf_addr = (uintptr_t)srq->wq.buf;
	cmd.buf_size = srq->wq.buf_size;
	cmd.log2_entries = srq->wq.log2;
	cmd.wqe_shift = srq->wq.shift;
	err = ibv_cmd_create_srq(pd, &srq->vsrq.srq, init, &cmd.ibv_cmd,
				 sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	if (err)
		goto err_tags;
	srq->srqn = resp.srqn;
	qroce_parent_get(srq->pd);
	return &srq->vsrq.srq;

err_tags:
	free(srq->tags);
	free(srq->free_tags);
err_wq:
	qroce_wq_fini(&srq->wq);
err_free:
	free(srq);
	errno = err;
	return NULL;
}

/*
 * After a resize: the new ring (*@buf, @size bytes) replaces the SRQ's,
 * which is handed back to be freed.  The tags stay as they are (the
 * WQEs carry them to the new ring).  Called with the SRQ's lock held.
 */
static void qroce_srq_move(struct qroce_srq *srq, uint32_t log2, size_t size,
			   void **buf, struct qroce_ring_mem *mem)
{
	struct qroce_wq *wq = &srq->wq;
	struct qroce_ring_mem omem = wq->mem;
	void *obuf = wq->buf;

	wq->buf = *buf;
	wq->mem = *mem;
	wq->buf_size = size;
	wq->log2 = log2;
	*buf = obuf;
	*mem = omem;
}

/*
 * IBV_SRQ_MAX_WR: a new ring of the same stride; the device moves the
 * WQEs not yet consumed to it, each to the slot of its free-running
 * index, and wr_ids and polled marks move the same way here.  The SRQ's
 * lock is held throughout, so nothing is posted or retired under the
 * device.
 */
static int qroce_resize_srq(struct qroce_srq *srq, struct ibv_srq_attr *attr,
			    int mask)
{
	struct uqroce_modify_srq cmd = {};
	struct qroce_wq *wq = &srq->wq;
	struct qroce_ring_mem mem;
	uint32_t log2;
	size_t size;
	void *buf;
	int err;

	if (!attr->max_wr || attr->max_wr > (1u << QROCE_WQ_MAX_LOG2))
		return EINVAL;
	log2 = max_t(uint32_t, 1, qroce_log2_up(attr->max_wr));
	if ((mask & IBV_SRQ_LIMIT) && attr->srq_limit >= (1u << log2))
		return EINVAL;
	buf = qroce_alloc_ring(srq->pd, QROCE_RES_TYPE_SRQ,
			       (size_t)1 << (log2 + wq->shift), &size, &mem);
	if (!buf)
		return errno;
	qroce_spin_lock(&wq->lock);
	err = qroce_srq_tags_grow(srq, 1u << log2);
	if (err)
		goto out_unlock;
	err = EINVAL;
	if (wq->pi - wq->ci > (1u << log2))
		goto out_unlock;
	cmd.buf_addr = (uintptr_t)buf;
	cmd.buf_size = size;
	cmd.log2_entries = log2;
	err = ibv_cmd_modify_srq(&srq->vsrq.srq, attr, mask, &cmd.ibv_cmd,
				 sizeof(cmd));
	if (!err)
		qroce_srq_move(srq, log2, size, &buf, &mem);
out_unlock:
	qroce_spin_unlock(&wq->lock);
	qroce_free_ring(buf, &mem);
	return err;
}

static int qroce_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr,
			    int mask)
{
	struct ibv_modify_srq cmd;

	if (mask & IBV_SRQ_MAX_WR)
		return qroce_resize_srq(to_qsrq(ibsrq), attr, mask);
	return ibv_cmd_modify_srq(ibsrq, attr, mask, &cmd, sizeof(cmd));
}

static int qroce_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr)
{
	struct ibv_query_srq cmd;

	return ibv_cmd_query_srq(ibsrq, attr, &cmd, sizeof(cmd));
}

static int qroce_destroy_srq(struct ibv_srq *ibsrq)
{
	struct qroce_srq *srq = to_qsrq(ibsrq);
	int err = ibv_cmd_destroy_srq(ibsrq);

	if (err)
		return err;
	free(srq->tags);
	free(srq->free_tags);
	qroce_wq_fini(&srq->wq);
	qroce_parent_put(srq->pd);
	free(srq);
	return 0;
}

/* ------------------------------------------------------------------ */
/* AH                                                                  */
/* ------------------------------------------------------------------ */

static struct ibv_ah *qroce_create_ah(struct ibv_pd *pd,
				      struct ibv_ah_attr *attr)
{
	struct uqroce_create_ah_resp resp = {};
	struct qroce_ah *ah = calloc(1, sizeof(*ah));
	int err;

	if (!ah) {
		errno = ENOMEM;
		return NULL;
	}
	err = ibv_cmd_create_ah(pd, &ah->ibv_ah, attr, &resp.ibv_resp,
				sizeof(resp));
	if (err) {
		free(ah);
		errno = err;
		return NULL;
	}
	ah->ahn = resp.ahn;
	return &ah->ibv_ah;
}

static int qroce_destroy_ah(struct ibv_ah *ibah)
{
	int err = ibv_cmd_destroy_ah(ibah);

	if (!err)
		free(container_of(ibah, struct qroce_ah, ibv_ah));
	return err;
}

/* Multicast groups: the kernel driver gives them to the device. */
static int qroce_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
			      uint16_t lid)
{
	return ibv_cmd_attach_mcast(qp, gid, lid);
}

static int qroce_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
			      uint16_t lid)
{
	return ibv_cmd_detach_mcast(qp, gid, lid);
}

const struct verbs_context_ops qroce_ctx_ops = {
	.advise_mr = qroce_advise_mr,
	.alloc_dm = qroce_alloc_dm,
	.alloc_mw = qroce_alloc_mw,
	.alloc_parent_domain = qroce_alloc_parent_domain,
	.alloc_pd = qroce_alloc_pd,
	.alloc_td = qroce_alloc_td,
	.bind_mw = qroce_bind_mw,
	.attach_mcast = qroce_attach_mcast,
	.create_ah = qroce_create_ah,
	.create_cq = qroce_create_cq,
	.create_cq_ex = qroce_create_cq_ex,
	.create_qp = qroce_create_qp,
	.create_qp_ex = qroce_create_qp_ex,
	.create_srq = qroce_create_srq,
	.dealloc_mw = qroce_dealloc_mw,
	.dealloc_pd = qroce_dealloc_pd,
	.dealloc_td = qroce_dealloc_td,
	.dereg_mr = qroce_dereg_mr,
	.destroy_ah = qroce_destroy_ah,
	.destroy_cq = qroce_destroy_cq,
	.destroy_qp = qroce_destroy_qp,
	.destroy_srq = qroce_destroy_srq,
	.detach_mcast = qroce_detach_mcast,
	.free_context = qroce_free_context,
	.free_dm = qroce_free_dm,
	.import_dm = qroce_import_dm,
	.import_mr = qroce_import_mr,
	.import_pd = qroce_import_pd,
	.modify_qp = qroce_modify_qp,
	.modify_srq = qroce_modify_srq,
	.poll_cq = qroce_poll_cq,
	.post_recv = qroce_post_recv,
	.post_send = qroce_post_send,
	.post_srq_recv = qroce_post_srq_recv,
	.query_device_ex = qroce_query_device,
	.query_port = qroce_query_port,
	.query_qp = qroce_query_qp,
	.query_srq = qroce_query_srq,
	.reg_dm_mr = qroce_reg_dm_mr,
	.reg_dmabuf_mr = qroce_reg_dmabuf_mr,
	.reg_mr = qroce_reg_mr,
	.req_notify_cq = qroce_req_notify_cq,
	.rereg_mr = qroce_rereg_mr,
	.resize_cq = qroce_resize_cq,
	.unimport_dm = qroce_unimport_dm,
	.unimport_mr = qroce_unimport_mr,
	.unimport_pd = qroce_unimport_pd,
};
