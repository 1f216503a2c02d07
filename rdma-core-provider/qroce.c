// SPDX-License-Identifier: GPL-2.0 or OpenIB.org BSD (MIT) See COPYING file
/*
 * libqroce: device matching, the context (set-up, device and port
 * queries) and its verbs: this file's, the data path's (qroce_post.c,
 * qroce_poll.c) and each object family's (qroce_ctrl_*.c).
 */
#include <stdlib.h>
#include <sys/mman.h>
#include <ccan/array_size.h>
#include <util/util.h>
#include <ccan/minmax.h>
#include <infiniband/cmd_write.h>

#include "qroce.h"
#include "qroce_abi.h"

static void qroce_free_context(struct ibv_context *ibctx)
{
	struct qroce_context *ctx = to_qctx(ibctx);

	uint32_t i;

	munmap(ctx->db, ctx->db_size);
	for (i = 0; i < QROCE_QP_CHUNKS; i++)
		free(ctx->qp_table[i]);
	pthread_mutex_destroy(&ctx->qp_table_mutex);
	verbs_uninit_context(&ctx->ibv_ctx);
	free(ctx);
}

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

/*
 * The context's own verbs and the data path's here; each object family's
 * in its file (qroce_ctrl_*.c).  verbs_set_ops() takes them in turn.
 */
static const struct verbs_context_ops qroce_context_ops = {
	.bind_mw = qroce_bind_mw,
	.free_context = qroce_free_context,
	.poll_cq = qroce_poll_cq,
	.post_recv = qroce_post_recv,
	.post_send = qroce_post_send,
	.post_srq_recv = qroce_post_srq_recv,
	.query_device_ex = qroce_query_device,
	.query_port = qroce_query_port,
	.req_notify_cq = qroce_req_notify_cq,
};

static const struct verbs_context_ops *const qroce_ctx_ops[] = {
	&qroce_context_ops, &qroce_pd_ops, &qroce_mr_ops, &qroce_cq_ops,
	&qroce_qp_ops,
};

/*
 * The context as the kernel described it (get_context, or query_context
 * for an imported one): limits, and the doorbell page mapped.  0, or -1
 * with errno set.
 */
static int qroce_context_setup(struct qroce_context *ctx, int cmd_fd,
			       const struct qroce_alloc_ucontext_resp *resp)
{
	size_t i;

	if (resp->db_page_size == 0 || resp->max_sge > QROCE_MAX_SGE ||
	    resp->max_inline > QROCE_MAX_INLINE ||
	    resp->sq_wqe_max_shift < QROCE_SQ_WQE_MIN_SHIFT ||
	    resp->rq_wqe_max_shift < QROCE_RQ_WQE_MIN_SHIFT) {
		verbs_err(&ctx->ibv_ctx, "qroce: bad context response\n");
		errno = EINVAL;
		return -1;
	}
	ctx->db_size = resp->db_page_size;
	ctx->max_sge = resp->max_sge;
	ctx->max_inline = resp->max_inline;
	ctx->sq_wqe_max_shift = min_t(uint32_t, resp->sq_wqe_max_shift,
				      QROCE_SQ_WQE_MAX_SHIFT);
	ctx->rq_wqe_max_shift = min_t(uint32_t, resp->rq_wqe_max_shift,
				      QROCE_RQ_WQE_MAX_SHIFT);
	ctx->db = mmap(NULL, ctx->db_size, PROT_WRITE, MAP_SHARED, cmd_fd,
		       resp->db_mmap_key);
	if (ctx->db == MAP_FAILED)
		return -1;
	pthread_mutex_init(&ctx->qp_table_mutex, NULL);
	for (i = 0; i < ARRAY_SIZE(qroce_ctx_ops); i++)
		verbs_set_ops(&ctx->ibv_ctx, qroce_ctx_ops[i]);
	return 0;
}

static struct verbs_context *qroce_alloc_context(struct ibv_device *ibdev,
						 int cmd_fd,
						 void *private_data)
{
	struct uqroce_alloc_context_resp resp = {};
	struct ibv_get_context cmd = {};
	struct qroce_context *ctx;

	ctx = verbs_init_and_alloc_context(ibdev, cmd_fd, ctx, ibv_ctx,
					   RDMA_DRIVER_QROCE);
	if (!ctx)
		return NULL;
	/* no fds passed to the driver (NULL fd_arr) */
	if (ibv_cmd_get_context(&ctx->ibv_ctx, &cmd, sizeof(cmd), NULL,
				&resp.ibv_resp, sizeof(resp)) ||
	    qroce_context_setup(ctx, cmd_fd, &resp.drv_payload))
		goto err_free;
	return &ctx->ibv_ctx;

err_free:
	verbs_uninit_context(&ctx->ibv_ctx);
	free(ctx);
	return NULL;
}

/*
 * ibv_import_device(): a context on a command fd that has one already
 * (another process's, or a dup): the kernel says what get_context said.
 */
static struct verbs_context *qroce_import_context(struct ibv_device *ibdev,
						  int cmd_fd)
{
	DECLARE_COMMAND_BUFFER(cmdb, UVERBS_OBJECT_DEVICE,
			       UVERBS_METHOD_QUERY_CONTEXT, 1);
	struct qroce_alloc_ucontext_resp resp = {};
	struct qroce_context *ctx;

	ctx = verbs_init_and_alloc_context(ibdev, cmd_fd, ctx, ibv_ctx,
					   RDMA_DRIVER_QROCE);
	if (!ctx)
		return NULL;
	fill_attr_out_ptr(cmdb, QROCE_IB_ATTR_QUERY_CONTEXT_RESP_UCTX, &resp);
	if (ibv_cmd_query_context(&ctx->ibv_ctx.context, cmdb) ||
	    qroce_context_setup(ctx, cmd_fd, &resp))
		goto err_free;
	return &ctx->ibv_ctx;

err_free:
	verbs_uninit_context(&ctx->ibv_ctx);
	free(ctx);
	return NULL;
}

static struct verbs_device *qroce_device_alloc(struct verbs_sysfs_dev *sdev)
{
	struct qroce_device *dev = calloc(1, sizeof(*dev));

	return dev ? &dev->ibv_dev : NULL;
}

static void qroce_device_free(struct verbs_device *vdev)
{
	free(container_of(vdev, struct qroce_device, ibv_dev));
}

/* The kernel driver reports its driver id, as erdma's does. */
static_assert(RDMA_DRIVER_QROCE == QROCE_RDMA_DRIVER_ID,
	      "kernel-headers and qroce-abi.h disagree on qroce's driver id");

static const struct verbs_match_ent qroce_match_table[] = {
	VERBS_DRIVER_ID(RDMA_DRIVER_QROCE),
	{},
};

static const struct verbs_device_ops qroce_dev_ops = {
	.name = "qroce",
	.match_min_abi_version = QROCE_UVERBS_ABI_VERSION,
	.match_max_abi_version = QROCE_UVERBS_ABI_VERSION,
	.match_table = qroce_match_table,
	.alloc_device = qroce_device_alloc,
	.uninit_device = qroce_device_free,
	.alloc_context = qroce_alloc_context,
	.import_context = qroce_import_context,
};

PROVIDER_DRIVER(qroce, qroce_dev_ops);
