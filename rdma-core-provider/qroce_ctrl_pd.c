// SPDX-License-Identifier: GPL-2.0 or OpenIB.org BSD (MIT) See COPYING file
/*
 * libqroce control path, protection domains: PDs (allocated or imported),
 * thread domains, parent domains, and the ring memory a parent domain's
 * allocator may give the CQs, QPs and SRQs made through it.  As in all of
 * the control path (qroce_ctrl_*.c), what the kernel must know goes to it
 * through ibv_cmd_*(); the data path (qroce_post.c, qroce_poll.c) never
 * makes a system call.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <util/util.h>
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
void *qroce_alloc_ring(struct qroce_pd *pd, uint64_t type, size_t size,
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

void qroce_free_ring(void *p, const struct qroce_ring_mem *m)
{
	if (p && m->pd)
		m->pd->free(&m->pd->ibv_pd, m->pd->pd_context, p, m->type);
	else
		free(p);
}

/* The parent domain @pd is, or NULL for a plain protection domain. */
struct qroce_pd *qroce_parent(struct ibv_pd *pd)
{
	struct qroce_pd *qpd = pd ? to_qpd(pd) : NULL;

	return qpd && qpd->pd ? qpd : NULL;
}

/*
 * A CQ, QP or SRQ made through parent domain @pd (NULL: none) holds it
 * until it is destroyed: its rings go back through the domain's
 * allocator, so the domain cannot go first (EBUSY, as mlx5).
 */
void qroce_parent_get(struct qroce_pd *pd)
{
	if (pd)
		atomic_fetch_add(&pd->refcount, 1);
}

void qroce_parent_put(struct qroce_pd *pd)
{
	if (pd)
		atomic_fetch_sub(&pd->refcount, 1);
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

const struct verbs_context_ops qroce_pd_ops = {
	.alloc_parent_domain = qroce_alloc_parent_domain,
	.alloc_pd = qroce_alloc_pd,
	.alloc_td = qroce_alloc_td,
	.dealloc_pd = qroce_dealloc_pd,
	.dealloc_td = qroce_dealloc_td,
	.import_pd = qroce_import_pd,
	.unimport_pd = qroce_unimport_pd,
};
