/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * The uverbs ABI of qroce_ib (drivers/infiniband/hw/qroce/) and its
 * rdma-core provider (providers/qroce/): the driver data of the verbs
 * commands and responses, and the driver's own ioctl attributes and
 * methods.  Bump QROCE_UVERBS_ABI_VERSION on any incompatible change.
 */
#ifndef QROCE_ABI_USER_H
#define QROCE_ABI_USER_H

#include <linux/types.h>

#define QROCE_UVERBS_ABI_VERSION 1

/*
 * RDMA_DRIVER_QROCE in enum rdma_driver_id (<rdma/ib_user_ioctl_verbs.h>),
 * the value by which the provider matches the device: the one after
 * RDMA_DRIVER_IONIC (21).
 */
#define QROCE_RDMA_DRIVER_ID	22

/*
 * The size of each struct below, checked at compile time in C and C++:
 * with static_assert or _Static_assert where the language has it (C++11,
 * C11), else (C90, C99, C++98) by an array of negative size, an error.
 */
#if defined(__cplusplus) && __cplusplus >= 201103L
#define QROCE_ABI_ASSERT_SIZE(type, size) \
	static_assert(sizeof(type) == (size), "sizeof(" #type ") != " #size)
#elif !defined(__cplusplus) && defined(__STDC_VERSION__) && \
	__STDC_VERSION__ >= 201112L
#define QROCE_ABI_ASSERT_SIZE(type, size) \
	_Static_assert(sizeof(type) == (size), "sizeof(" #type ") != " #size)
#else
#define QROCE_ABI_ASSERT_SIZE(type, size) \
	extern char qroce_abi_assert_size[sizeof(type) == (size) ? 1 : -1]
#endif

/*
 * Driver ioctl attributes and methods, numbered from the first of the
 * driver's namespace, 1 << UVERBS_ID_NS_SHIFT:
 * - ibv_alloc_dm: UVERBS_METHOD_DM_ALLOC's out attribute, a u64, the mmap
 *   offset of the allocation's pages;
 * - ibv_import_device: UVERBS_METHOD_QUERY_CONTEXT's out attribute, the
 *   context's struct qroce_alloc_ucontext_resp;
 * - ibv_import_dm: the method QROCE_IB_METHOD_DM_QUERY on a DM object,
 *   its handle in, the mmap offset of its pages and its length out;
 * - ibv_import_pd: the method QROCE_IB_METHOD_PD_QUERY on a PD object,
 *   its handle in, its pdn out.
 */
#define QROCE_IB_NS				(1U << 12)

enum qroce_ib_dm_alloc_attrs {
	QROCE_IB_ATTR_ALLOC_DM_RESP_MMAP_OFFSET = QROCE_IB_NS,
};

enum qroce_ib_query_context_attrs {
	QROCE_IB_ATTR_QUERY_CONTEXT_RESP_UCTX = QROCE_IB_NS,
};

/* enums, not macros: the kernel's method macros paste the name */
enum qroce_ib_dm_methods {
	QROCE_IB_METHOD_DM_QUERY = QROCE_IB_NS,
};

enum qroce_ib_pd_methods {
	QROCE_IB_METHOD_PD_QUERY = QROCE_IB_NS,
};

enum qroce_ib_query_pd_attrs {
	QROCE_IB_ATTR_QUERY_PD_REQ_HANDLE = QROCE_IB_NS,
	QROCE_IB_ATTR_QUERY_PD_RESP_PDN,
};

enum qroce_ib_query_dm_attrs {
	QROCE_IB_ATTR_QUERY_DM_REQ_HANDLE = QROCE_IB_NS,
	QROCE_IB_ATTR_QUERY_DM_RESP_MMAP_OFFSET,
	QROCE_IB_ATTR_QUERY_DM_RESP_LENGTH,
};

/* ibv_get_context: no request data. */
struct qroce_alloc_ucontext_resp {
	__aligned_u64 db_mmap_key;	/* mmap offset of this context's doorbell page */
	__u32 db_page_size;		/* bytes to mmap (4096) */
	__u32 uar;			/* doorbell page index, for reference */
	__u32 max_sge;			/* send and receive SGEs per WQE */
	__u32 max_inline;		/* inline bytes per send WQE */
	__u32 sq_wqe_max_shift;
	__u32 rq_wqe_max_shift;
};

QROCE_ABI_ASSERT_SIZE(struct qroce_alloc_ucontext_resp, 32);

struct qroce_alloc_pd_resp {
	__u32 pdn;
	__u32 reserved;
};

QROCE_ABI_ASSERT_SIZE(struct qroce_alloc_pd_resp, 8);

/*
 * ibv_create_cq: the provider allocates the ring: 2^log2_entries CQEs of
 * 32 bytes followed by a 64-byte struct qroce_cq_rec, page aligned.
 */
struct qroce_create_cq_req {
	__aligned_u64 buf_addr;
	__u32 buf_size;			/* bytes, >= (32 << log2_entries) + 64 */
	__u32 log2_entries;
};

QROCE_ABI_ASSERT_SIZE(struct qroce_create_cq_req, 16);

struct qroce_create_cq_resp {
	__u32 cqn;
	__u32 log2_entries;
};

QROCE_ABI_ASSERT_SIZE(struct qroce_create_cq_resp, 8);

/*
 * ibv_resize_cq: the provider allocates the new ring as for create_cq and
 * passes the consumer index it has reached; on success the CQEs it had
 * not polled are at the start of the new ring and its index starts at 0.
 */
struct qroce_resize_cq_req {
	__aligned_u64 buf_addr;
	__u32 buf_size;
	__u32 log2_entries;
	__u32 ci;
	__u32 reserved;			/* MBZ */
};

QROCE_ABI_ASSERT_SIZE(struct qroce_resize_cq_req, 24);

/*
 * ibv_create_qp: the provider allocates the SQ and RQ rings (page aligned,
 * separately).  rq_buf_size is 0 when the QP uses an SRQ.
 */
struct qroce_create_qp_req {
	__aligned_u64 sq_buf_addr;
	__aligned_u64 rq_buf_addr;
	__u32 sq_buf_size;
	__u32 rq_buf_size;
	__u8 sq_log2_entries;
	__u8 rq_log2_entries;
	__u8 sq_wqe_shift;
	__u8 rq_wqe_shift;
	__u32 reserved;
};

QROCE_ABI_ASSERT_SIZE(struct qroce_create_qp_req, 32);

struct qroce_create_qp_resp {
	__u32 qpn;
	__u32 reserved;
};

QROCE_ABI_ASSERT_SIZE(struct qroce_create_qp_resp, 8);

struct qroce_create_srq_req {
	__aligned_u64 buf_addr;
	__u32 buf_size;
	__u8 log2_entries;
	__u8 wqe_shift;
	__u16 reserved;
};

QROCE_ABI_ASSERT_SIZE(struct qroce_create_srq_req, 16);

struct qroce_create_srq_resp {
	__u32 srqn;
	__u32 reserved;
};

QROCE_ABI_ASSERT_SIZE(struct qroce_create_srq_resp, 8);

/*
 * ibv_modify_srq with IBV_SRQ_MAX_WR: the provider allocates the new ring
 * as for create_srq, with the same WQE stride; on success the WQEs posted
 * and not yet consumed are in it, each at the slot of its free-running
 * index (index & (2^log2_entries - 1)).
 */
struct qroce_modify_srq_req {
	__aligned_u64 buf_addr;
	__u32 buf_size;			/* >= 2^(log2_entries + wqe_shift) */
	__u32 log2_entries;
};

QROCE_ABI_ASSERT_SIZE(struct qroce_modify_srq_req, 16);

struct qroce_create_ah_resp {
	__u32 ahn;
	__u32 reserved;
};

QROCE_ABI_ASSERT_SIZE(struct qroce_create_ah_resp, 8);

#endif /* QROCE_ABI_USER_H */
