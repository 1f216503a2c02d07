// SPDX-License-Identifier: GPL-2.0-only
/*
 * qroce ib_device: the control verbs.  Objects are created by commands to
 * the device; user rings live in user memory (pinned with ib_umem,
 * described to the device by a buffer table, qroce_bt.c); kernel rings are
 * DMA-coherent buffers.  Here: device and port queries, GIDs, user
 * contexts and the doorbell page, PDs, MRs, AHs, hardware counters and
 * registration.  CQs, QPs and SRQs, each with its kernel data path, are in
 * qroce_cq.c, qroce_qp.c and qroce_srq.c.
 */
#include <linux/dma-mapping.h>
#include <net/addrconf.h>
#include <net/if_inet6.h>
#include <net/ip.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/uverbs_ioctl.h>
#define UVERBS_MODULE_NAME qroce_ib
#include <rdma/uverbs_named_ioctl.h>
#include "qroce_verbs.h"

/*
 * Copy a verb's request from the provider.  A shorter request reads as
 * zeros past its end; a longer one (a newer provider) is accepted only if
 * what this driver does not know is zero.  Reserved fields are MBZ too;
 * the callers check them.
 */
int qroce_get_req(struct ib_udata *udata, void *req, size_t len)
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
int qroce_no_req(struct ib_udata *udata)
{
	if (udata && udata->inlen &&
	    !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EINVAL;
	return 0;
}

/* A command whose only input is an object handle. */
int qroce_simple_cmd_out(struct qroce_dev *dev, u8 opcode, u32 handle,
			 u32 *out)
{
	struct qroce_cmd cmd = {};

	cmd.hdr.opcode = opcode;
	cmd.handle.handle = cpu_to_le32(handle);
	return qroce_cmd_exec(dev, &cmd, out);
}

int qroce_simple_cmd(struct qroce_dev *dev, u8 opcode, u32 handle)
{
	return qroce_simple_cmd_out(dev, opcode, handle, NULL);
}

int qroce_destroy_cmd(struct qroce_dev *dev, u8 opcode, u32 handle)
{
	return qroce_destroyed(dev, qroce_simple_cmd(dev, opcode, handle),
			       true);
}

/*
 * Make a new object findable by its number (for CQEs and events) and give
 * userspace its response; the store is undone if the copy fails.
 */
int qroce_publish(struct xarray *xa, u32 id, void *obj,
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

/* ------------------------------------------------------------------ */
/* Device and port                                                     */
/* ------------------------------------------------------------------ */

/*
 * On-demand paging (qroce_odp.c): explicit and implicit MRs, every RC and
 * UD operation; a UD or UC packet that meets an absent page is dropped
 * while the page comes in, as on hardware.  The responder faults an ODP
 * page in for an ATOMIC WRITE as for a WRITE, and a FLUSH only checks the
 * range.
 */
static void qroce_query_odp(struct qroce_dev *dev, struct ib_device_attr *a)
{
	struct ib_odp_caps *odp = &a->odp_caps;

	a->kernel_cap_flags |= IBK_ON_DEMAND_PAGING;
	odp->general_caps = IB_ODP_SUPPORT | IB_ODP_SUPPORT_IMPLICIT;
	odp->per_transport_caps.rc_odp_caps =
		IB_ODP_SUPPORT_SEND | IB_ODP_SUPPORT_RECV |
		IB_ODP_SUPPORT_WRITE | IB_ODP_SUPPORT_READ |
		IB_ODP_SUPPORT_ATOMIC | IB_ODP_SUPPORT_SRQ_RECV;
	if (dev->caps.features & QROCE_FEAT_FLUSH)
		odp->per_transport_caps.rc_odp_caps |= IB_ODP_SUPPORT_FLUSH;
	if (dev->caps.features & QROCE_FEAT_ATOMIC_WRITE)
		odp->per_transport_caps.rc_odp_caps |=
			IB_ODP_SUPPORT_ATOMIC_WRITE;
	odp->per_transport_caps.ud_odp_caps =
		IB_ODP_SUPPORT_SEND | IB_ODP_SUPPORT_RECV |
		IB_ODP_SUPPORT_SRQ_RECV;
	odp->per_transport_caps.uc_odp_caps =
		IB_ODP_SUPPORT_SEND | IB_ODP_SUPPORT_RECV |
		IB_ODP_SUPPORT_WRITE;
}

static int qroce_query_device(struct ib_device *ibdev,
			      struct ib_device_attr *a, struct ib_udata *udata)
{
	struct qroce_dev *dev = to_qdev(ibdev);

	/* the core's own query at registration has no udata */
	if (udata && (udata->inlen || udata->outlen))
		return -EINVAL;
	memset(a, 0, sizeof(*a));
	a->vendor_id = dev->pdev->vendor;
	a->vendor_part_id = dev->pdev->device;
	a->hw_ver = dev->pdev->revision;
	a->fw_ver = QROCE_SPEC_VERSION;
	addrconf_addr_eui48((u8 *)&a->sys_image_guid, dev->caps.mac);
	a->max_mr_size = dev->caps.max_mr_size;
	a->page_size_cap = dev->caps.page_sizes;
	a->max_qp = dev->caps.max_qp - 2;
	a->max_qp_wr = dev->caps.max_qp_wr;
	a->device_cap_flags = IB_DEVICE_RC_RNR_NAK_GEN |
			      IB_DEVICE_CHANGE_PHY_PORT |
			      IB_DEVICE_PORT_ACTIVE_EVENT;
	a->max_send_sge = dev->caps.max_sge;
	a->max_recv_sge = dev->caps.max_sge;
	a->max_sge_rd = dev->caps.max_sge;
	a->max_cq = dev->caps.max_cq - 1;
	a->max_cqe = dev->caps.max_cqe;
	a->max_mr = dev->caps.max_mr - 1;
	a->max_pd = dev->caps.max_pd - 1;
	a->max_qp_rd_atom = dev->caps.max_rd_atom;
	a->max_qp_init_rd_atom = dev->caps.max_rd_atom;
	a->max_res_rd_atom = dev->caps.max_rd_atom * a->max_qp;
	/* atomics are atomic against the device's other QPs, not the CPU */
	a->atomic_cap = (dev->caps.features & QROCE_FEAT_ATOMIC) ? IB_ATOMIC_HCA :
							      IB_ATOMIC_NONE;
	a->max_ah = dev->caps.max_ah - 1;
	if (dev->caps.features & QROCE_FEAT_SRQ) {
		a->max_srq = dev->caps.max_srq - 1;
		a->max_srq_wr = dev->caps.max_qp_wr;
		a->max_srq_sge = dev->caps.max_sge;
		/* ibv_modify_srq(IBV_SRQ_MAX_WR); QPs are not resized */
		if (dev->caps.features & QROCE_FEAT_RESIZE_SRQ)
			a->device_cap_flags |= IB_DEVICE_SRQ_RESIZE;
	}
	/*
	 * Fast registration (FRWR) is what NVMe-oF, NFS/RDMA and iSER need.
	 * No kernel capability flag goes with it: there is no device-wide
	 * local DMA lkey (each PD's comes from get_dma_mr), and page lists
	 * have no gaps (no IBK_SG_GAPS_REG).
	 */
	if (dev->caps.features & QROCE_FEAT_FRMR) {
		a->device_cap_flags |= IB_DEVICE_MEM_MGT_EXTENSIONS;
		a->max_fast_reg_page_list_len = dev->caps.max_frmr_pages;
	}
	/* windows of type 1 and 2B, bound by BIND_MW work requests */
	if (dev->caps.features & QROCE_FEAT_MW) {
		a->device_cap_flags |= IB_DEVICE_MEM_WINDOW |
				       IB_DEVICE_MEM_WINDOW_TYPE_2B;
		a->max_mw = dev->caps.max_mr - 1;
	}
	/* RDMA FLUSH (global placement only: no persistent memory) */
	if (dev->caps.features & QROCE_FEAT_FLUSH)
		a->device_cap_flags |= IB_DEVICE_FLUSH_GLOBAL;
	if (dev->caps.features & QROCE_FEAT_ATOMIC_WRITE)
		a->device_cap_flags |= IB_DEVICE_ATOMIC_WRITE;
	if (dev->caps.features & QROCE_FEAT_MCAST) {
		a->max_mcast_grp = dev->caps.max_mcast_grp;
		a->max_mcast_qp_attach = dev->caps.max_mcast_qp_attach;
		a->max_total_mcast_qp_attach =
			dev->caps.max_mcast_grp * dev->caps.max_mcast_qp_attach;
		a->kernel_cap_flags |= IBK_BLOCK_MULTICAST_LOOPBACK;
	}
	/* device memory, if BAR 5 has any (qroce_dm.c) */
	if (dev->dm_map)
		a->max_dm_size = dev->caps.dm_size;
	if (dev->caps.features & QROCE_FEAT_ODP)
		qroce_query_odp(dev, a);
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
	a->gid_tbl_len = dev->caps.max_gid;
	a->port_cap_flags = IB_PORT_CM_SUP;
	a->max_msg_sz = dev->caps.max_msg;
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

/* What a user context learns of itself (get_context, query_context). */
static void qroce_ucontext_resp(struct ib_ucontext *ibuc,
				struct qroce_alloc_ucontext_resp *resp)
{
	struct qroce_dev *dev = to_qdev(ibuc->device);
	struct qroce_ucontext *uc = to_quc(ibuc);

	resp->db_mmap_key = rdma_user_mmap_get_offset(uc->db_entry);
	resp->db_page_size = QROCE_DB_PAGE_SIZE;
	resp->uar = uc->uar;
	resp->max_sge = dev->caps.max_sge;
	resp->max_inline = dev->caps.max_inline;
	resp->sq_wqe_max_shift = QROCE_SQ_WQE_MAX_SHIFT;
	resp->rq_wqe_max_shift = QROCE_RQ_WQE_MAX_SHIFT;
}

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
	e = kzalloc_obj(*e, GFP_KERNEL);
	if (!e) {
		err = -ENOMEM;
		goto err_ida;
	}
	e->address = dev->core->db_bar_start + (u64)uar * QROCE_DB_PAGE_SIZE;
	err = rdma_user_mmap_entry_insert(ibuc, &e->rdma_entry,
					  QROCE_DB_PAGE_SIZE);
	if (err) {
		kfree(e);
		goto err_ida;
	}
	uc->db_entry = &e->rdma_entry;
	qroce_ucontext_resp(ibuc, &resp);
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

/*
 * ibv_import_device(): another process (or a dup of the command fd)
 * asks what ibv_get_context() answered: the same response.
 */
static int qroce_query_ucontext(struct ib_ucontext *ibuc,
				struct uverbs_attr_bundle *attrs)
{
	struct qroce_alloc_ucontext_resp resp = {};

	qroce_ucontext_resp(ibuc, &resp);
	return uverbs_copy_to_struct_or_zero(attrs,
					     QROCE_IB_ATTR_QUERY_CONTEXT_RESP_UCTX,
					     &resp, sizeof(resp));
}

#define QROCE_UCTX_RESP \
	UVERBS_ATTR_STRUCT(struct qroce_alloc_ucontext_resp, rq_wqe_max_shift)

ADD_UVERBS_ATTRIBUTES_SIMPLE(qroce_ib_query_context, UVERBS_OBJECT_DEVICE,
			     UVERBS_METHOD_QUERY_CONTEXT,
			     UVERBS_ATTR_PTR_OUT(QROCE_IB_ATTR_QUERY_CONTEXT_RESP_UCTX,
						 QROCE_UCTX_RESP, UA_OPTIONAL));

/* ibv_import_pd() checks the handle and learns the pdn */
static int UVERBS_HANDLER(QROCE_IB_METHOD_PD_QUERY)(struct uverbs_attr_bundle *attrs)
{
	struct ib_pd *ibpd =
		uverbs_attr_get_obj(attrs, QROCE_IB_ATTR_QUERY_PD_REQ_HANDLE);

	return uverbs_copy_to(attrs, QROCE_IB_ATTR_QUERY_PD_RESP_PDN,
			      &to_qpd(ibpd)->pdn, sizeof(u32));
}

DECLARE_UVERBS_NAMED_METHOD(QROCE_IB_METHOD_PD_QUERY,
			    UVERBS_ATTR_IDR(QROCE_IB_ATTR_QUERY_PD_REQ_HANDLE,
					    UVERBS_OBJECT_PD,
					    UVERBS_ACCESS_READ, UA_MANDATORY),
			    UVERBS_ATTR_PTR_OUT(QROCE_IB_ATTR_QUERY_PD_RESP_PDN,
						UVERBS_ATTR_TYPE(u32),
						UA_MANDATORY));

ADD_UVERBS_METHODS(qroce_ib_pd, UVERBS_OBJECT_PD,
		   &UVERBS_METHOD(QROCE_IB_METHOD_PD_QUERY));

const struct uapi_definition qroce_ib_defs[] = {
	UAPI_DEF_CHAIN_OBJ_TREE(UVERBS_OBJECT_DEVICE, &qroce_ib_query_context),
	UAPI_DEF_CHAIN_OBJ_TREE(UVERBS_OBJECT_PD, &qroce_ib_pd),
	UAPI_DEF_CHAIN(qroce_dm_defs),
	{},
};

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
	/* the entry's size, which rdma_user_mmap_entry_get() matched */
	err = rdma_user_mmap_io(ibuc, vma, PFN_DOWN(e->address),
				vma->vm_end - vma->vm_start,
				e->dm ? pgprot_writecombine(vma->vm_page_prot) :
					pgprot_noncached(vma->vm_page_prot),
				re);
	rdma_user_mmap_entry_put(re);
	return err;
}

static void qroce_mmap_free(struct rdma_user_mmap_entry *re)
{
	struct qroce_mmap_entry *e =
		container_of(re, struct qroce_mmap_entry, rdma_entry);

	if (e->dm)
		qroce_dm_mmap_free(e);
	kfree(e);
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
/* MR                                                                  */
/* ------------------------------------------------------------------ */

static struct ib_mr *qroce_get_dma_mr(struct ib_pd *ibpd, int access)
{
	struct qroce_dev *dev = to_qdev(ibpd->device);
	struct qroce_cmd cmd = {};
	struct qroce_mr *mr;

	if (access & ~IB_ACCESS_LOCAL_WRITE)
		return ERR_PTR(-EOPNOTSUPP);
	mr = kzalloc_obj(*mr, GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	cmd.hdr.opcode = QROCE_CMD_REG_MR;
	cmd.reg_mr.pdn = cpu_to_le32(to_qpd(ibpd)->pdn);
	cmd.reg_mr.access = cpu_to_le32(access & QROCE_ACCESS_MASK);
	cmd.reg_mr.length = cpu_to_le64(U64_MAX);
	cmd.reg_mr.pages.level = QROCE_BT_PHYS;
	return qroce_reg_mr_nopin(dev, &cmd, mr, access);
}

/* What the device was given for @mr's pages, for qroce_fill_res_mr_entry. */
static void qroce_mr_keep_bt(struct qroce_mr *mr, const struct qroce_bt *bt)
{
	mr->bt_npages = le32_to_cpu(bt->npages);
	mr->bt_page_shift = bt->page_shift;
	mr->bt_level = bt->level;
}

/*
 * What a user registration starts with: the checks, and the MR.  A
 * length of 0 is allowed, as on hardware (qroce_mr_empty()).
 */
static struct qroce_mr *qroce_mr_new(struct ib_pd *ibpd, u64 len, int access)
{
	struct qroce_dev *dev = to_qdev(ibpd->device);
	struct qroce_mr *mr;

	if (!qroce_access_ok(access))
		return ERR_PTR(-EOPNOTSUPP);
	if (len > dev->caps.max_mr_size)
		return ERR_PTR(-EINVAL);
	mr = kzalloc_obj(*mr, GFP_KERNEL);
	return mr ? mr : ERR_PTR(-ENOMEM);
}

/*
 * REG_MR of @mr on @umem (pinned user memory; an error pointer, or
 * released on failure) at @virt for @len bytes: its keys.
 */
static struct ib_mr *qroce_mr_on_umem(struct ib_pd *ibpd, struct qroce_mr *mr,
				      struct ib_umem *umem, u64 len, u64 virt,
				      int access)
{
	struct qroce_dev *dev = to_qdev(ibpd->device);
	struct qroce_cmd cmd = {};
	struct qroce_bt_tmp t;
	unsigned long pgsz;
	u32 out[6];
	int err;

	if (IS_ERR(umem)) {
		kfree(mr);
		return ERR_CAST(umem);
	}
	mr->umem = umem;
	pgsz = ib_umem_find_best_pgsz(umem, dev->caps.page_sizes, virt);
	err = -EINVAL;
	if (!pgsz)
		goto err_umem;
	cmd.hdr.opcode = QROCE_CMD_REG_MR;
	cmd.reg_mr.pdn = cpu_to_le32(to_qpd(ibpd)->pdn);
	cmd.reg_mr.access = cpu_to_le32(qroce_hw_access(access));
	cmd.reg_mr.iova = cpu_to_le64(virt);
	cmd.reg_mr.length = cpu_to_le64(len);
	cmd.reg_mr.first_page_offset = cpu_to_le32(ib_umem_dma_offset(umem, pgsz));
	err = qroce_bt_from_umem(dev, umem, pgsz, &cmd.reg_mr.pages,
				 cmd.reg_mr.inline_pages, &t);
	if (err)
		goto err_umem;
	err = qroce_cmd_exec(dev, &cmd, out);
	qroce_bt_tmp_free(dev, &t);
	if (err)
		goto err_umem;
	mr->ibmr.lkey = out[0];
	mr->ibmr.rkey = out[0];
	mr->access = access;
	qroce_mr_keep_bt(mr, &cmd.reg_mr.pages);
	return &mr->ibmr;

err_umem:
	ib_umem_release(umem);
	kfree(mr);
	return ERR_PTR(err);
}

/*
 * An MR of 0 bytes at @virt: no memory to pin, an empty page table
 * (hw-spec §4: only accesses of 0 bytes reach it).
 */
static struct ib_mr *qroce_mr_empty(struct ib_pd *ibpd, struct qroce_mr *mr,
				    u64 virt, int access)
{
	struct qroce_cmd cmd = {};

	cmd.hdr.opcode = QROCE_CMD_REG_MR;
	cmd.reg_mr.pdn = cpu_to_le32(to_qpd(ibpd)->pdn);
	cmd.reg_mr.access = cpu_to_le32(qroce_hw_access(access));
	cmd.reg_mr.iova = cpu_to_le64(virt);
	cmd.reg_mr.pages.level = QROCE_BT_CONTIG;
	cmd.reg_mr.pages.page_shift = PAGE_SHIFT;
	return qroce_reg_mr_nopin(to_qdev(ibpd->device), &cmd, mr, access);
}

struct ib_mr *qroce_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 len,
				u64 virt, int access, struct ib_dmah *dmah,
				struct ib_udata *udata)
{
	struct qroce_mr *mr;

	if (dmah)
		return ERR_PTR(-EOPNOTSUPP);
	if (access & IB_ACCESS_ON_DEMAND)
		return qroce_reg_user_mr_odp(ibpd, start, len, virt, access);
	mr = qroce_mr_new(ibpd, len, access);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	if (!len)
		return qroce_mr_empty(ibpd, mr, virt, access);
	return qroce_mr_on_umem(ibpd, mr,
				ib_umem_get_va(ibpd->device, start, len,
					       access),
				len, virt, access);
}

/* REREG_MR's TRANS part: the new range pinned in *@umem, its pages. */
static int qroce_rereg_trans(struct qroce_mr *mr, u64 start, u64 len,
			     u64 virt, int access, struct qroce_cmd *cmd,
			     struct ib_umem **umem, struct qroce_bt_tmp *t)
{
	struct qroce_dev *dev = to_qdev(mr->ibmr.device);
	unsigned long pgsz;
	int err;

	if (!len || len > dev->caps.max_mr_size)
		return -EINVAL;
	*umem = ib_umem_get_va(mr->ibmr.device, start, len, access);
	if (IS_ERR(*umem)) {
		err = PTR_ERR(*umem);
		*umem = NULL;
		return err;
	}
	pgsz = ib_umem_find_best_pgsz(*umem, dev->caps.page_sizes, virt);
	if (!pgsz)
		return -EINVAL;
	cmd->rereg_mr.mr.iova = cpu_to_le64(virt);
	cmd->rereg_mr.mr.length = cpu_to_le64(len);
	cmd->rereg_mr.mr.first_page_offset =
		cpu_to_le32(ib_umem_dma_offset(*umem, pgsz));
	return qroce_bt_from_umem(dev, *umem, pgsz, &cmd->rereg_mr.mr.pages,
				  cmd->rereg_mr.mr.inline_pages, t);
}

/*
 * A user MR changed in place (its key stays): new pages and range, PD
 * or access.  NULL on success, as ib_uverbs expects of an in-place
 * re-registration; ib_uverbs moves the MR to the new PD itself.
 */
static struct ib_mr *qroce_rereg_user_mr(struct ib_mr *ibmr, int flags,
					 u64 start, u64 len, u64 virt,
					 int access, struct ib_pd *ibpd,
					 struct ib_udata *udata)
{
	struct qroce_dev *dev = to_qdev(ibmr->device);
	struct qroce_mr *mr = to_qmr(ibmr);
	struct ib_umem *umem = NULL;
	struct qroce_cmd cmd = {};
	struct qroce_bt_tmp t = {};
	int err;

	if (!(dev->caps.features & QROCE_FEAT_REREG_MR) || !mr->umem ||
	    mr->umem->is_dmabuf ||
	    (flags & ~(IB_MR_REREG_TRANS | IB_MR_REREG_PD |
		       IB_MR_REREG_ACCESS)))
		return ERR_PTR(-EOPNOTSUPP);
	if (!(flags & IB_MR_REREG_ACCESS))
		access = mr->access;
	if (!qroce_access_ok(access))
		return ERR_PTR(-EOPNOTSUPP);
	cmd.hdr.opcode = QROCE_CMD_REREG_MR;
	cmd.rereg_mr.key = cpu_to_le32(ibmr->lkey);
	cmd.rereg_mr.flags = cpu_to_le32((flags & IB_MR_REREG_TRANS ?
					  QROCE_REREG_TRANS : 0) |
					 (flags & IB_MR_REREG_PD ?
					  QROCE_REREG_PD : 0) |
					 (flags & IB_MR_REREG_ACCESS ?
					  QROCE_REREG_ACCESS : 0));
	if (flags & IB_MR_REREG_PD)
		cmd.rereg_mr.mr.pdn = cpu_to_le32(to_qpd(ibpd)->pdn);
	cmd.rereg_mr.mr.access = cpu_to_le32(qroce_hw_access(access));
	if (flags & IB_MR_REREG_TRANS) {
		err = qroce_rereg_trans(mr, start, len, virt, access, &cmd,
					&umem, &t);
		if (err)
			goto err_umem;
	}
	err = qroce_cmd_exec(dev, &cmd, NULL);
	qroce_bt_tmp_free(dev, &t);
	if (err)
		goto err_umem;
	if (umem) {
		ib_umem_release(mr->umem);
		mr->umem = umem;
		qroce_mr_keep_bt(mr, &cmd.rereg_mr.mr.pages);
	}
	mr->access = access;
	return NULL;

err_umem:
	if (umem)
		ib_umem_release(umem);
	return ERR_PTR(err);
}

/*
 * An MR for fast registration (IB_MR_TYPE_MEM_REG): ALLOC_MR reserves it
 * in the device, FREE until a REG_MR work request loads it from the page
 * list here.  Its key has variant 0; the ULP changes the variant with
 * ib_update_fast_reg_key() for each registration.
 */
static struct ib_mr *qroce_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
				    u32 max_num_sg)
{
	struct qroce_dev *dev = to_qdev(ibpd->device);
	struct qroce_cmd cmd = {};
	struct qroce_mr *mr;
	u32 out[6];
	int err;

	if (type != IB_MR_TYPE_MEM_REG || !(dev->caps.features & QROCE_FEAT_FRMR))
		return ERR_PTR(-EOPNOTSUPP);
	if (!max_num_sg || max_num_sg > dev->caps.max_frmr_pages)
		return ERR_PTR(-EINVAL);
	mr = kzalloc_obj(*mr, GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->max_pages = max_num_sg;
	mr->pbl = dma_alloc_coherent(&dev->pdev->dev,
				     max_num_sg * sizeof(*mr->pbl),
				     &mr->pbl_dma, GFP_KERNEL);
	if (!mr->pbl) {
		err = -ENOMEM;
		goto err_free;
	}
	cmd.hdr.opcode = QROCE_CMD_ALLOC_MR;
	cmd.alloc_mr.pdn = cpu_to_le32(to_qpd(ibpd)->pdn);
	cmd.alloc_mr.max_pages = cpu_to_le32(max_num_sg);
	err = qroce_cmd_exec(dev, &cmd, out);
	if (err)
		goto err_pbl;
	mr->ibmr.lkey = out[0];
	mr->ibmr.rkey = out[0];
	return &mr->ibmr;

err_pbl:
	dma_free_coherent(&dev->pdev->dev, max_num_sg * sizeof(*mr->pbl),
			  mr->pbl, mr->pbl_dma);
err_free:
	kfree(mr);
	return ERR_PTR(err);
}

static int qroce_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct qroce_mr *mr = to_qmr(ibmr);

	if (mr->npages == mr->max_pages)
		return -ENOMEM;
	mr->pbl[mr->npages++] = cpu_to_le64(addr);
	return 0;
}

/*
 * Fill a fast-registration MR's page list (ib_map_mr_sg() has set
 * page_size; ib_sg_to_pages() sets iova and length).  The device reads
 * the list when it executes the REG_MR work request, so the ULP must not
 * map the MR again before that has completed, which the verbs require.
 */
static int qroce_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg,
			   int sg_nents, unsigned int *sg_offset)
{
	struct qroce_dev *dev = to_qdev(ibmr->device);
	struct qroce_mr *mr = to_qmr(ibmr);

	if (!mr->pbl || !is_power_of_2(ibmr->page_size) ||
	    !(ibmr->page_size & dev->caps.page_sizes))
		return -EINVAL;
	mr->npages = 0;
	return ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset, qroce_set_page);
}

static int qroce_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct qroce_mr *mr = to_qmr(ibmr);
	struct qroce_dev *dev = to_qdev(ibmr->device);
	struct qroce_cmd cmd = {};
	int err;

	/* the device finds a fast-registration MR whatever its key's variant */
	cmd.hdr.opcode = QROCE_CMD_DEREG_MR;
	cmd.key.key = cpu_to_le32(ibmr->lkey);
	if (mr->odp || mr->dmabuf)
		qroce_odp_dereg_prepare(mr);
	err = qroce_destroyed(dev, qroce_cmd_exec(dev, &cmd, NULL), true);
	if (err) {
		if (mr->odp || mr->dmabuf)
			qroce_odp_dereg_undo(mr);
		return err;
	}
	if (mr->odp || mr->dmabuf)
		qroce_odp_dereg_done(mr);
	if (mr->umem)
		ib_umem_release(mr->umem);
	if (mr->pbl)
		dma_free_coherent(&dev->pdev->dev,
				  mr->max_pages * sizeof(*mr->pbl), mr->pbl,
				  mr->pbl_dma);
	kfree(mr);
	return 0;
}

/*
 * Memory windows: the device keeps them in the MR key space.  Binding is
 * a work request (the provider's ibv_bind_mw and IBV_WR_BIND_MW); the
 * kernel's ULPs have no window verbs to post.
 */
static int qroce_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata)
{
	struct qroce_dev *dev = to_qdev(ibmw->device);
	struct qroce_cmd cmd = {};
	u32 out[6];
	int err;

	if (!(dev->caps.features & QROCE_FEAT_MW))
		return -EOPNOTSUPP;
	cmd.hdr.opcode = QROCE_CMD_ALLOC_MW;
	cmd.alloc_mw.pdn = cpu_to_le32(to_qpd(ibmw->pd)->pdn);
	cmd.alloc_mw.type = cpu_to_le32(ibmw->type == IB_MW_TYPE_1 ? 1 : 2);
	err = qroce_cmd_exec(dev, &cmd, out);
	if (err)
		return err;
	ibmw->rkey = out[0];
	return 0;
}

static int qroce_dealloc_mw(struct ib_mw *ibmw)
{
	struct qroce_dev *dev = to_qdev(ibmw->device);
	struct qroce_cmd cmd = {};

	/* the device finds the window whatever its key's variant */
	cmd.hdr.opcode = QROCE_CMD_DEALLOC_MW;
	cmd.key.key = cpu_to_le32(ibmw->rkey);
	return qroce_destroyed(dev, qroce_cmd_exec(dev, &cmd, NULL), true);
}

/* ------------------------------------------------------------------ */
/* AH                                                                  */
/* ------------------------------------------------------------------ */

void qroce_fill_av(struct qroce_av *av, struct rdma_ah_attr *ah)
{
	const struct ib_global_route *grh = rdma_ah_read_grh(ah);
	struct in6_addr dgid;

	memcpy(av->dgid, grh->dgid.raw, 16);
	memcpy(&dgid, grh->dgid.raw, sizeof(dgid));
	/* a group's MAC follows from its address (the device checks it) */
	if (ipv6_addr_v4mapped(&dgid) &&
	    ipv4_is_multicast(dgid.s6_addr32[3]))
		ip_eth_mc_map(dgid.s6_addr32[3], (char *)av->dmac);
	else if (ipv6_addr_is_multicast(&dgid))
		ipv6_eth_mc_map(&dgid, (char *)av->dmac);
	else
		memcpy(av->dmac, ah->roce.dmac, ETH_ALEN);
	av->sgid_index = grh->sgid_index;
	av->hop_limit = grh->hop_limit;
	av->traffic_class = grh->traffic_class;
	av->flow_label = cpu_to_le32(grh->flow_label);
	av->net_type = rdma_gid_attr_network_type(grh->sgid_attr) ==
		       RDMA_NETWORK_IPV4 ? QROCE_NET_IPV4 : QROCE_NET_IPV6;
}

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

/* The names are the Ethernet driver's (ethtool -S shows the same). */
static struct rdma_hw_stats *
qroce_alloc_hw_port_stats(struct ib_device *ibdev, u32 port)
{
	return rdma_alloc_hw_stats_struct(to_qdev(ibdev)->stat_descs,
					  QROCE_CNT_NUM,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

static int qroce_get_hw_stats(struct ib_device *ibdev,
			      struct rdma_hw_stats *stats, u32 port, int index)
{
	struct qroce_core *core = to_qdev(ibdev)->core;

	core->ops->stats_read(core, stats->value);
	return QROCE_CNT_NUM;
}

/* the device, its ports, contexts, PDs, MRs, MWs and AHs */
const struct ib_device_ops qroce_dev_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_QROCE,
	.uverbs_abi_ver = QROCE_UVERBS_ABI_VERSION,

	.add_gid = qroce_add_gid,
	.alloc_hw_port_stats = qroce_alloc_hw_port_stats,
	.alloc_mr = qroce_alloc_mr,
	.alloc_mw = qroce_alloc_mw,
	.alloc_pd = qroce_alloc_pd,
	.alloc_ucontext = qroce_alloc_ucontext,
	.create_ah = qroce_create_ah,
	.create_user_ah = qroce_create_ah,
	.dealloc_mw = qroce_dealloc_mw,
	.dealloc_pd = qroce_dealloc_pd,
	.dealloc_ucontext = qroce_dealloc_ucontext,
	.del_gid = qroce_del_gid,
	.dereg_mr = qroce_dereg_mr,
	.disassociate_ucontext = qroce_disassociate_ucontext,
	.destroy_ah = qroce_destroy_ah,
	.get_dma_mr = qroce_get_dma_mr,
	.get_hw_stats = qroce_get_hw_stats,
	.get_link_layer = qroce_get_link_layer,
	.get_port_immutable = qroce_get_port_immutable,
	.map_mr_sg = qroce_map_mr_sg,
	.mmap = qroce_mmap,
	.mmap_free = qroce_mmap_free,
	.query_device = qroce_query_device,
	.query_pkey = qroce_query_pkey,
	.query_port = qroce_query_port,
	.query_ucontext = qroce_query_ucontext,
	.reg_user_mr = qroce_reg_user_mr,
	.rereg_user_mr = qroce_rereg_user_mr,

	INIT_RDMA_OBJ_SIZE(ib_ah, qroce_ah, ibah),
	INIT_RDMA_OBJ_SIZE(ib_mw, qroce_mw, ibmw),
	INIT_RDMA_OBJ_SIZE(ib_pd, qroce_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, qroce_ucontext, ibuc),
};
