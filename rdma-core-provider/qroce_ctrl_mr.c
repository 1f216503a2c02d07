// SPDX-License-Identifier: GPL-2.0 or OpenIB.org BSD (MIT) See COPYING file
/*
 * libqroce control path, memory: MRs (registered, on a dma-buf, on device
 * memory, imported), memory windows (bound by work requests in
 * qroce_post.c) and device memory, mapped here for ibv_memcpy_*_dm().
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <util/mmio.h>
#include <util/util.h>
#include <infiniband/cmd_write.h>

#include "qroce.h"
#include "qroce_abi.h"

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

const struct verbs_context_ops qroce_mr_ops = {
	.advise_mr = qroce_advise_mr,
	.alloc_dm = qroce_alloc_dm,
	.alloc_mw = qroce_alloc_mw,
	.dealloc_mw = qroce_dealloc_mw,
	.dereg_mr = qroce_dereg_mr,
	.free_dm = qroce_free_dm,
	.import_dm = qroce_import_dm,
	.import_mr = qroce_import_mr,
	.reg_dm_mr = qroce_reg_dm_mr,
	.reg_dmabuf_mr = qroce_reg_dmabuf_mr,
	.reg_mr = qroce_reg_mr,
	.rereg_mr = qroce_rereg_mr,
	.unimport_dm = qroce_unimport_dm,
	.unimport_mr = qroce_unimport_mr,
};
