/* SPDX-License-Identifier: GPL-2.0 or OpenIB.org BSD (MIT) See COPYING file */
#ifndef QROCE_PROVIDER_ABI_H
#define QROCE_PROVIDER_ABI_H

#include <infiniband/kern-abi.h>
#include <rdma/qroce-abi.h>
#include <kernel-abi/qroce-abi.h>

DECLARE_DRV_CMD(uqroce_alloc_context, IB_USER_VERBS_CMD_GET_CONTEXT, empty,
		qroce_alloc_ucontext_resp);
DECLARE_DRV_CMD(uqroce_alloc_pd, IB_USER_VERBS_CMD_ALLOC_PD, empty,
		qroce_alloc_pd_resp);
DECLARE_DRV_CMD(uqroce_create_cq_ex, IB_USER_VERBS_EX_CMD_CREATE_CQ,
		qroce_create_cq_req, qroce_create_cq_resp);
DECLARE_DRV_CMD(uqroce_resize_cq, IB_USER_VERBS_CMD_RESIZE_CQ,
		qroce_resize_cq_req, empty);
DECLARE_DRV_CMD(uqroce_create_qp, IB_USER_VERBS_CMD_CREATE_QP,
		qroce_create_qp_req, qroce_create_qp_resp);
DECLARE_DRV_CMD(uqroce_create_qp_ex, IB_USER_VERBS_EX_CMD_CREATE_QP,
		qroce_create_qp_req, qroce_create_qp_resp);
DECLARE_DRV_CMD(uqroce_create_srq, IB_USER_VERBS_CMD_CREATE_SRQ,
		qroce_create_srq_req, qroce_create_srq_resp);
DECLARE_DRV_CMD(uqroce_modify_srq, IB_USER_VERBS_CMD_MODIFY_SRQ,
		qroce_modify_srq_req, empty);
DECLARE_DRV_CMD(uqroce_create_ah, IB_USER_VERBS_CMD_CREATE_AH, empty,
		qroce_create_ah_resp);

#endif
