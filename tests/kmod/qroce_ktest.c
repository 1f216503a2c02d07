// SPDX-License-Identifier: GPL-2.0-only
/*
 * qroce_ktest: the kernel post path of qroce, as a kernel ULP uses it.
 * Not part of qroce.ko; tests/t-kverbs.sh loads it in a guest.
 *
 * For each qroce device: a PD, one CQ polled directly, and two RC QPs
 * connected to each other through the device (its own RoCEv2 IPv4 GID);
 * a kernel buffer registered for remote access with a fast-registration
 * MR (ib_alloc_mr, ib_map_mr_sg, IB_WR_REG_MR), as ULPs do (the device
 * gives get_dma_mr no remote access, so no unsafe global rkey).  Then,
 * checking every result:
 *  - FETCH_AND_ADD and CMP_AND_SWP (one that swaps, one that does not) on
 *    the buffer, through the MR's rkey;
 *  - a SEND with IB_SEND_INLINE whose SGE names kernel virtual memory;
 *  - an RDMA READ followed by an IB_SEND_FENCE inline SEND;
 *  - a kernel SRQ resized with IB_SRQ_MAX_WR with receives posted.
 * Each check prints "qroce_ktest: PASS ..." or "qroce_ktest: FAIL ...",
 * and a last line "qroce_ktest: N passed, N failed".
 *
 * With role=target or role=initiator the same atomics, inline SENDs and
 * fenced READ run between two guests instead (the SRQ check stays a
 * loopback one).  Each side makes one QP on insmod and prints its QPN;
 * the script then writes the other side's "QPN IPv4 MAC" (the initiator:
 * also "RKEY ADDR" of the target's buffer) into the parameter "peer":
 * the target connects, registers its buffer and posts two receives and
 * prints the rkey and address; the initiator connects and runs the
 * checks, reading the target's memory back with RDMA READs.  Reading the
 * target's parameter "check" waits for the two SENDs and checks their
 * bytes and the atomics' result in its own memory.
 */
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/sysfs.h>
#include <linux/slab.h>
#include <linux/delay.h>
#include <linux/etherdevice.h>
#include <linux/scatterlist.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_cache.h>
#include <net/ipv6.h>

#define KT_PSN		100
#define KT_BUF		4096
#define KT_INLINE	40
#define KT_RECV_PLAIN	1024	/* the target's receive of the plain SEND */
#define KT_RECV_FENCED	1536	/* and of the fenced one */

struct kt {
	struct ib_device *dev;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *a, *b;
	struct ib_mr *mr;	/* the buffer, for remote access */
	struct scatterlist sg;
	u8 *buf;		/* [0, 64): atomic target, [64, 128): result */
	dma_addr_t dma;
	u32 gid_index;
	union ib_gid gid;
	u8 mac[ETH_ALEN];
	/* the other end: this device (loopback) or the peer guest's */
	union ib_gid dgid;
	u8 dmac[ETH_ALEN];
	u32 rkey;		/* of the atomic target, at raddr */
	u64 raddr;
	bool remote;		/* the initiator of the two-guest mode */
};

static char *role = "";
module_param(role, charp, 0444);
MODULE_PARM_DESC(role, "empty: loopback in one device; target or initiator: two guests");

static int kt_pass, kt_fail;

static void kt_check(bool ok, const char *what)
{
	pr_info("qroce_ktest: %s %s\n", ok ? "PASS" : "FAIL", what);
	if (ok)
		kt_pass++;
	else
		kt_fail++;
}

/* The device's RoCEv2 GID of an IPv4 address, and its MAC. */
static int kt_gid(struct kt *t)
{
	const struct ib_gid_attr *attr;
	u32 i;

	for (i = 0; i < t->dev->port_data[1].immutable.gid_tbl_len; i++) {
		attr = rdma_get_gid_attr(t->dev, 1, i);
		if (IS_ERR(attr))
			continue;
		if (attr->gid_type == IB_GID_TYPE_ROCE_UDP_ENCAP &&
		    ipv6_addr_v4mapped((struct in6_addr *)attr->gid.raw) &&
		    attr->ndev) {
			t->gid = attr->gid;
			t->gid_index = i;
			ether_addr_copy(t->mac, attr->ndev->dev_addr);
			rdma_put_gid_attr(attr);
			return 0;
		}
		rdma_put_gid_attr(attr);
	}
	return -ENOENT;
}

static struct ib_qp *kt_qp(struct kt *t)
{
	struct ib_qp_init_attr ia = {
		.send_cq = t->cq, .recv_cq = t->cq, .qp_type = IB_QPT_RC,
		.sq_sig_type = IB_SIGNAL_ALL_WR,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 2, .max_recv_sge = 2,
			 .max_inline_data = 64 },
	};

	return ib_create_qp(t->pd, &ia);
}

/* @qp to RTS, connected to QP @dqpn at t->dgid and t->dmac. */
static int kt_connect(struct kt *t, struct ib_qp *qp, u32 dqpn)
{
	struct ib_qp_attr a = {};
	int err;

	a.qp_state = IB_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ |
			    IB_ACCESS_REMOTE_ATOMIC;
	err = ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_ACCESS_FLAGS);
	if (err)
		return err;
	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTR;
	a.path_mtu = IB_MTU_1024;
	a.dest_qp_num = dqpn;
	a.rq_psn = KT_PSN;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 12;
	a.ah_attr.type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(&a.ah_attr, 1);
	rdma_ah_set_grh(&a.ah_attr, &t->dgid, 0, t->gid_index, 64, 0);
	ether_addr_copy(a.ah_attr.roce.dmac, t->dmac);
	err = ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU |
			   IB_QP_DEST_QPN | IB_QP_RQ_PSN |
			   IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER);
	if (err)
		return err;
	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTS;
	a.sq_psn = KT_PSN;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 4;
	return ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_SQ_PSN | IB_QP_TIMEOUT |
			    IB_QP_RETRY_CNT | IB_QP_RNR_RETRY |
			    IB_QP_MAX_QP_RD_ATOMIC);
}

/* Poll @n completions of @cq within 5 s; each must succeed.  How many did. */
static int kt_poll_cq(struct ib_cq *cq, int n, struct ib_wc *wc)
{
	int got = 0, i;

	for (i = 0; i < 5000 && got < n; i++) {
		got += ib_poll_cq(cq, n - got, wc + got);
		if (got < n)
			usleep_range(1000, 2000);
	}
	for (i = 0; i < got; i++)
		if (wc[i].status != IB_WC_SUCCESS) {
			pr_info("qroce_ktest: wr_id %llu: %s\n", wc[i].wr_id,
				ib_wc_status_msg(wc[i].status));
			return i;
		}
	return got;
}

static int kt_poll(struct kt *t, int n, struct ib_wc *wc)
{
	return kt_poll_cq(t->cq, n, wc);
}

/* RDMA READ of the target's first 8 bytes into buf + 2048; ~0 on error. */
static u64 kt_read_target(struct kt *t)
{
	struct ib_sge gs = { .addr = t->dma + 2048, .length = 8,
			     .lkey = t->pd->local_dma_lkey };
	struct ib_rdma_wr rd = {
		.wr = { .wr_id = 13, .opcode = IB_WR_RDMA_READ, .sg_list = &gs,
			.num_sge = 1, .send_flags = IB_SEND_SIGNALED },
		.remote_addr = t->raddr, .rkey = t->rkey,
	};
	struct ib_wc wc;

	if (ib_post_send(t->a, &rd.wr, NULL) || kt_poll(t, 1, &wc) != 1)
		return ~0ULL;
	ib_dma_sync_single_for_cpu(t->dev, t->dma, KT_BUF, DMA_BIDIRECTIONAL);
	return *(u64 *)(t->buf + 2048);
}

/* The atomic target's value: in this memory, or read from the peer's. */
static u64 kt_target(struct kt *t)
{
	if (t->remote)
		return kt_read_target(t);
	ib_dma_sync_single_for_cpu(t->dev, t->dma, KT_BUF, DMA_BIDIRECTIONAL);
	return *(u64 *)t->buf;
}

/* One atomic from A on the target; the old value, or ~0 on failure. */
static u64 kt_atomic(struct kt *t, enum ib_wr_opcode op, u64 cmp_add,
		     u64 swap)
{
	struct ib_sge sge = { .addr = t->dma + 64, .length = 8,
			      .lkey = t->pd->local_dma_lkey };
	struct ib_atomic_wr wr = {
		.wr = { .wr_id = 1, .opcode = op, .sg_list = &sge,
			.num_sge = 1, .send_flags = IB_SEND_SIGNALED },
		.remote_addr = t->raddr, .compare_add = cmp_add, .swap = swap,
		.rkey = t->rkey,
	};
	struct ib_wc wc;

	ib_dma_sync_single_for_device(t->dev, t->dma, KT_BUF,
				      DMA_BIDIRECTIONAL);
	if (ib_post_send(t->a, &wr.wr, NULL) || kt_poll(t, 1, &wc) != 1)
		return ~0ULL;
	ib_dma_sync_single_for_cpu(t->dev, t->dma, KT_BUF, DMA_BIDIRECTIONAL);
	return *(u64 *)(t->buf + 64);
}

static void kt_atomics(struct kt *t)
{
	u64 old;
	char msg[96];

	*(u64 *)t->buf = 5;
	old = kt_atomic(t, IB_WR_ATOMIC_FETCH_AND_ADD, 7, 0);
	snprintf(msg, sizeof(msg), "FETCH_AND_ADD 7 to 5: old %llu, now %llu",
		 old, kt_target(t));
	kt_check(old == 5 && kt_target(t) == 12, msg);
	old = kt_atomic(t, IB_WR_ATOMIC_CMP_AND_SWP, 12, 0x1234);
	snprintf(msg, sizeof(msg), "CMP_AND_SWP 12 -> 0x1234: old %llu, now 0x%llx",
		 old, kt_target(t));
	kt_check(old == 12 && kt_target(t) == 0x1234, msg);
	old = kt_atomic(t, IB_WR_ATOMIC_CMP_AND_SWP, 99, 1);
	snprintf(msg, sizeof(msg), "CMP_AND_SWP 99 -> 1 (no match): old 0x%llx, now 0x%llx",
		 old, kt_target(t));
	kt_check(old == 0x1234 && kt_target(t) == 0x1234, msg);
}

/*
 * An inline SEND from A (its SGE a kernel virtual address) into a RECV
 * on B; with @fence, an RDMA READ of the target goes first and the SEND
 * is fenced behind it.
 */
static void kt_inline(struct kt *t, bool fence)
{
	u8 *msg = kmalloc(KT_INLINE, GFP_KERNEL);
	struct ib_sge rs = { .addr = t->dma + 1024, .length = 256,
			     .lkey = t->pd->local_dma_lkey };
	struct ib_recv_wr rwr = { .wr_id = 10, .sg_list = &rs, .num_sge = 1 };
	struct ib_sge ss = { .length = KT_INLINE };
	struct ib_send_wr swr = { .wr_id = 11, .opcode = IB_WR_SEND,
				  .sg_list = &ss, .num_sge = 1,
				  .send_flags = IB_SEND_SIGNALED |
						IB_SEND_INLINE };
	struct ib_sge gs = { .addr = t->dma + 2048, .length = 8,
			     .lkey = t->pd->local_dma_lkey };
	struct ib_rdma_wr read = {
		.wr = { .wr_id = 12, .opcode = IB_WR_RDMA_READ, .sg_list = &gs,
			.num_sge = 1, .send_flags = IB_SEND_SIGNALED },
		.remote_addr = t->raddr, .rkey = t->rkey,
	};
	struct ib_wc wc[3];
	int i, n = (fence ? 3 : 2) - t->remote, got;	/* the RECV: here? */
	bool ok;

	if (!msg) {
		kt_check(false, "inline SEND: no memory");
		return;
	}
	for (i = 0; i < KT_INLINE; i++)
		msg[i] = i * 3 + (fence ? 1 : 2);
	ss.addr = (u64)(uintptr_t)msg;
	memset(t->buf + 1024, 0, 256);
	memset(t->buf + 2048, 0, 8);
	ib_dma_sync_single_for_device(t->dev, t->dma, KT_BUF,
				      DMA_BIDIRECTIONAL);
	if (fence) {
		read.wr.next = &swr;
		swr.send_flags |= IB_SEND_FENCE;
	}
	/* two guests: the target posted its receives and checks the bytes */
	ok = (t->remote || !ib_post_recv(t->b, &rwr, NULL)) &&
	     !ib_post_send(t->a, fence ? &read.wr : &swr, NULL);
	/* the inline bytes were copied into the WQE: reuse the buffer now */
	memset(msg, 0, KT_INLINE);
	got = ok ? kt_poll(t, n, wc) : 0;
	ib_dma_sync_single_for_cpu(t->dev, t->dma, KT_BUF, DMA_BIDIRECTIONAL);
	for (i = 0; i < KT_INLINE && got == n && !t->remote; i++)
		ok &= t->buf[1024 + i] == (u8)(i * 3 + (fence ? 1 : 2));
	for (i = 0; i < got; i++)
		if (wc[i].wr_id == 10)
			ok &= wc[i].byte_len == KT_INLINE;
	if (fence)
		ok &= *(u64 *)(t->buf + 2048) == 0x1234;
	kt_check(ok && got == n, fence ?
		 "RDMA READ then a fenced inline SEND: both complete, data right" :
		 t->remote ? "inline SEND from kernel memory: completed" :
		 "inline SEND from kernel memory: received byte for byte");
	kfree(msg);
}

static int kt_err(const char *what, long err)
{
	pr_info("qroce_ktest: %s: %ld\n", what, err);
	return err;
}

/*
 * SRQ resize (IB_SRQ_MAX_WR) of a kernel SRQ: QP S sends to QP R, which
 * receives from the SRQ into its own CQ.  Receive buffers are 64-byte
 * slots from KT_SRQ_SLOTS; SENDs go from KT_SRQ_SRC.
 */
#define KT_SRQ_SLOTS	2560
#define KT_SRQ_SRC	3200
#define KT_SRQ_LEN	32

struct kt_srq {
	struct ib_srq *srq;
	struct ib_cq *rcq;
	struct ib_qp *s, *r;
	u64 next_id;		/* of the next receive posted */
};

/* Post @n receives on the SRQ; how many it took. */
static int kt_srq_post(struct kt *t, struct kt_srq *q, int n)
{
	int i;

	for (i = 0; i < n; i++, q->next_id++) {
		struct ib_sge sge = {
			.addr = t->dma + KT_SRQ_SLOTS + (q->next_id % 8) * 64,
			.length = 64, .lkey = t->pd->local_dma_lkey,
		};
		struct ib_recv_wr wr = { .wr_id = q->next_id, .sg_list = &sge,
					 .num_sge = 1 };

		if (ib_post_srq_recv(q->srq, &wr, NULL))
			break;
	}
	return i;
}

/* One SEND from S of a pattern of receive @id; true once it completed. */
static bool kt_srq_send(struct kt *t, struct kt_srq *q, u64 id)
{
	struct ib_sge sge = { .addr = t->dma + KT_SRQ_SRC, .length = KT_SRQ_LEN,
			      .lkey = t->pd->local_dma_lkey };
	struct ib_send_wr wr = { .wr_id = 20, .opcode = IB_WR_SEND,
				 .sg_list = &sge, .num_sge = 1,
				 .send_flags = IB_SEND_SIGNALED };
	struct ib_wc wc;
	int k;

	for (k = 0; k < KT_SRQ_LEN; k++)
		t->buf[KT_SRQ_SRC + k] = id * 5 + k;
	ib_dma_sync_single_for_device(t->dev, t->dma, KT_BUF,
				      DMA_BIDIRECTIONAL);
	return !ib_post_send(q->s, &wr, NULL) && kt_poll(t, 1, &wc) == 1;
}

/* Receives @first.. (@n of them) complete in order, each with its data. */
static bool kt_srq_take(struct kt *t, struct kt_srq *q, u64 first, int n)
{
	struct ib_wc wc[8];
	int i, k, got = kt_poll_cq(q->rcq, n, wc);
	bool ok = got == n;

	ib_dma_sync_single_for_cpu(t->dev, t->dma, KT_BUF, DMA_BIDIRECTIONAL);
	for (i = 0; i < got; i++) {
		u8 *p = t->buf + KT_SRQ_SLOTS + (wc[i].wr_id % 8) * 64;

		ok &= wc[i].wr_id == first + i && wc[i].byte_len == KT_SRQ_LEN;
		for (k = 0; k < KT_SRQ_LEN; k++)
			ok &= p[k] == (u8)(wc[i].wr_id * 5 + k);
	}
	return ok && ib_poll_cq(q->rcq, 1, wc) == 0;
}

static int kt_srq_setup(struct kt *t, struct kt_srq *q)
{
	struct ib_srq_init_attr sa = { .attr = { .max_wr = 4, .max_sge = 1 } };
	struct ib_qp_init_attr ia = {
		.send_cq = t->cq, .qp_type = IB_QPT_RC,
		.sq_sig_type = IB_SIGNAL_ALL_WR,
		.cap = { .max_send_wr = 4, .max_send_sge = 1 },
	};
	int err;

	q->srq = ib_create_srq(t->pd, &sa);
	if (IS_ERR(q->srq))
		return kt_err("ib_create_srq", PTR_ERR(q->srq));
	q->rcq = ib_alloc_cq(t->dev, NULL, 16, 0, IB_POLL_DIRECT);
	if (IS_ERR(q->rcq))
		return kt_err("ib_alloc_cq", PTR_ERR(q->rcq));
	q->s = kt_qp(t);
	if (IS_ERR(q->s))
		return kt_err("ib_create_qp", PTR_ERR(q->s));
	ia.recv_cq = q->rcq;
	ia.srq = q->srq;
	q->r = ib_create_qp(t->pd, &ia);
	if (IS_ERR(q->r))
		return kt_err("ib_create_qp on the SRQ", PTR_ERR(q->r));
	err = kt_connect(t, q->s, q->r->qp_num);
	if (!err)
		err = kt_connect(t, q->r, q->s->qp_num);
	return err ? kt_err("connecting the SRQ QPs", err) : 0;
}

static void kt_srq_teardown(struct kt_srq *q)
{
	if (!IS_ERR_OR_NULL(q->r))
		ib_destroy_qp(q->r);
	if (!IS_ERR_OR_NULL(q->s))
		ib_destroy_qp(q->s);
	if (!IS_ERR_OR_NULL(q->rcq))
		ib_free_cq(q->rcq);
	if (!IS_ERR_OR_NULL(q->srq))
		ib_destroy_srq(q->srq);
}

/*
 * A 4-entry kernel SRQ, after one round (receives 96..99), with one receive
 * consumed but not polled grows to 8 (the receives posted move to other
 * slots): it then takes 4 more receives and no fifth, refuses a shrink
 * to 2, and all 8 complete once, in order, with their data.
 */
static void kt_srq_resize(struct kt *t)
{
	struct kt_srq q = { .next_id = 96 };
	struct ib_srq_attr a = { .max_wr = 8 };
	int i, err;
	bool ok;

	if (kt_srq_setup(t, &q)) {
		kt_check(false, "SRQ resize: set-up");
		goto out;
	}
	/* a first round, so that the indexes move to other slots below */
	ok = kt_srq_post(t, &q, 4) == 4;
	for (i = 96; i < 100; i++)
		ok &= kt_srq_send(t, &q, i);
	ok &= kt_srq_take(t, &q, 96, 4);
	ok &= kt_srq_post(t, &q, 5) == 4 && kt_srq_send(t, &q, 100);
	err = ib_modify_srq(q.srq, &a, IB_SRQ_MAX_WR);
	memset(&a, 0, sizeof(a));
	ok &= !err && !ib_query_srq(q.srq, &a) && a.max_wr == 8;
	kt_check(ok, "kernel SRQ grows 4 -> 8 with a receive not yet polled");
	kt_check(kt_srq_post(t, &q, 5) == 4,
		 "then it takes 4 more receives, not 5");
	a.max_wr = 2;
	kt_check(ib_modify_srq(q.srq, &a, IB_SRQ_MAX_WR) == -EINVAL,
		 "a shrink to 2 below the 8 posted: EINVAL");
	for (i = 101, ok = true; i < 108; i++)
		ok &= kt_srq_send(t, &q, i);
	kt_check(ok && kt_srq_take(t, &q, 100, 8),
		 "all 8 receives complete once, in order, with their data");
out:
	kt_srq_teardown(&q);
}

/* The buffer as a fast-registration MR with remote access, from @qp. */
static int kt_reg(struct kt *t, struct ib_qp *qp)
{
	struct ib_reg_wr reg = {
		.wr = { .wr_id = 2, .opcode = IB_WR_REG_MR,
			.send_flags = IB_SEND_SIGNALED },
		.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ |
			  IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC,
	};
	struct ib_wc wc;
	int n;

	t->mr = ib_alloc_mr(t->pd, IB_MR_TYPE_MEM_REG, 1);
	if (IS_ERR(t->mr))
		return kt_err("ib_alloc_mr", PTR_ERR(t->mr));
	sg_init_table(&t->sg, 1);
	sg_dma_address(&t->sg) = t->dma;
	sg_dma_len(&t->sg) = KT_BUF;
	n = ib_map_mr_sg(t->mr, &t->sg, 1, NULL, PAGE_SIZE);
	if (n != 1)
		return kt_err("ib_map_mr_sg", n);
	reg.mr = t->mr;
	reg.key = t->mr->rkey;
	n = ib_post_send(qp, &reg.wr, NULL);
	if (n || kt_poll(t, 1, &wc) != 1)
		return kt_err("IB_WR_REG_MR", n ? n : -EIO);
	t->rkey = t->mr->rkey;
	t->raddr = t->mr->iova;
	return 0;
}

/* PD, CQ, QP A (@a) and B (@b), the buffer mapped, the device's GID. */
static int kt_setup_objs(struct kt *t, bool a, bool b)
{
	t->pd = ib_alloc_pd(t->dev, 0);
	if (IS_ERR(t->pd))
		return kt_err("ib_alloc_pd", PTR_ERR(t->pd));
	t->cq = ib_alloc_cq(t->dev, NULL, 64, 0, IB_POLL_DIRECT);
	if (IS_ERR(t->cq))
		return kt_err("ib_alloc_cq", PTR_ERR(t->cq));
	t->a = a ? kt_qp(t) : NULL;
	if (IS_ERR(t->a))
		return kt_err("ib_create_qp", PTR_ERR(t->a));
	t->b = b ? kt_qp(t) : NULL;
	if (IS_ERR(t->b))
		return kt_err("ib_create_qp", PTR_ERR(t->b));
	t->buf = kzalloc(KT_BUF, GFP_KERNEL);
	if (!t->buf)
		return -ENOMEM;
	t->dma = ib_dma_map_single(t->dev, t->buf, KT_BUF, DMA_BIDIRECTIONAL);
	if (ib_dma_mapping_error(t->dev, t->dma)) {
		t->dma = 0;
		return -ENOMEM;
	}
	if (kt_gid(t)) {
		pr_info("qroce_ktest: no RoCEv2 IPv4 GID\n");
		return -ENOENT;
	}
	return 0;
}

static int kt_setup(struct kt *t)
{
	int err = kt_setup_objs(t, true, true);

	if (err)
		return err;
	t->dgid = t->gid;
	ether_addr_copy(t->dmac, t->mac);
	err = kt_connect(t, t->a, t->b->qp_num);
	if (!err)
		err = kt_connect(t, t->b, t->a->qp_num);
	if (err)
		return kt_err("connecting the QPs", err);
	return kt_reg(t, t->a);	/* a work request: the QP is in RTS */
}

static void kt_teardown(struct kt *t)
{
	if (!IS_ERR_OR_NULL(t->mr))
		ib_dereg_mr(t->mr);
	if (t->dma)
		ib_dma_unmap_single(t->dev, t->dma, KT_BUF, DMA_BIDIRECTIONAL);
	kfree(t->buf);
	if (!IS_ERR_OR_NULL(t->b))
		ib_destroy_qp(t->b);
	if (!IS_ERR_OR_NULL(t->a))
		ib_destroy_qp(t->a);
	if (!IS_ERR_OR_NULL(t->cq))
		ib_free_cq(t->cq);
	if (!IS_ERR_OR_NULL(t->pd))
		ib_dealloc_pd(t->pd);
}

/* ------------------------------------------------------------------ */
/* Two guests (role=target, role=initiator)                            */
/* ------------------------------------------------------------------ */

static struct kt kt_two;		/* this side's objects */
static DEFINE_MUTEX(kt_two_lock);
static bool kt_two_ready;		/* kt_two set up, not yet torn down */

/* The peer from "QPN A.B.C.D MAC [RKEY ADDR]": its QPN, GID and MAC. */
static int kt_parse_peer(struct kt *t, const char *val, u32 *qpn)
{
	u8 ip[4], *m = t->dmac;
	int n;

	n = sscanf(val, "%u %hhu.%hhu.%hhu.%hhu %hhx:%hhx:%hhx:%hhx:%hhx:%hhx %x %llx",
		   qpn, &ip[0], &ip[1], &ip[2], &ip[3], &m[0], &m[1], &m[2],
		   &m[3], &m[4], &m[5], &t->rkey, &t->raddr);
	if (n != 11 && n != 13)
		return -EINVAL;
	ipv6_addr_set_v4mapped(*(__be32 *)ip, (struct in6_addr *)t->dgid.raw);
	return n;
}

/* The target: connect B, register the buffer, post both receives. */
static int kt_target_peer(struct kt *t, u32 qpn)
{
	struct ib_sge rs[2] = {
		{ .addr = t->dma + KT_RECV_PLAIN, .length = 256,
		  .lkey = t->pd->local_dma_lkey },
		{ .addr = t->dma + KT_RECV_FENCED, .length = 256,
		  .lkey = t->pd->local_dma_lkey },
	};
	struct ib_recv_wr rwr[2] = {
		{ .wr_id = 30, .sg_list = &rs[0], .num_sge = 1, .next = &rwr[1] },
		{ .wr_id = 31, .sg_list = &rs[1], .num_sge = 1 },
	};
	int err = kt_connect(t, t->b, qpn);

	if (err)
		return kt_err("connecting to the initiator", err);
	*(u64 *)t->buf = 5;
	ib_dma_sync_single_for_device(t->dev, t->dma, KT_BUF,
				      DMA_BIDIRECTIONAL);
	err = kt_reg(t, t->b);
	if (!err)
		err = ib_post_recv(t->b, rwr, NULL);
	if (err)
		return err;
	pr_info("qroce_ktest: target rkey=0x%x addr=0x%llx\n", t->rkey,
		t->raddr);
	return 0;
}

/* The initiator: connect A and run the checks on the target's memory. */
static int kt_initiator_peer(struct kt *t, u32 qpn)
{
	int err = kt_connect(t, t->a, qpn);

	kt_check(!err, "connected to the target's QP in the other guest");
	if (!err) {
		kt_atomics(t);
		kt_inline(t, false);
		kt_inline(t, true);
	}
	pr_info("qroce_ktest: %d passed, %d failed\n", kt_pass, kt_fail);
	return 0;
}

static int kt_peer_set(const char *val, const struct kernel_param *kp)
{
	struct kt *t = &kt_two;
	u32 qpn;
	int n, err = -ENODEV;

	mutex_lock(&kt_two_lock);
	if (!kt_two_ready)
		goto out;
	n = kt_parse_peer(t, val, &qpn);
	err = n < 0 ? n : t->remote && n != 13 ? -EINVAL : 0;
	if (!err)
		err = t->remote ? kt_initiator_peer(t, qpn) :
				  kt_target_peer(t, qpn);
out:
	mutex_unlock(&kt_two_lock);
	return err;
}

static const struct kernel_param_ops kt_peer_ops = { .set = kt_peer_set };
module_param_cb(peer, &kt_peer_ops, NULL, 0200);
MODULE_PARM_DESC(peer, "two guests: the peer's \"QPN IPv4 MAC [RKEY ADDR]\"");

/*
 * Reading "check" on the target: the two inline SENDs arrived byte for
 * byte (the fenced one after the READ), and the atomics left 0x1234.
 */
static int kt_check_get(char *buf, const struct kernel_param *kp)
{
	struct kt *t = &kt_two;
	struct ib_wc wc[2];
	int i, got;
	bool ok;

	mutex_lock(&kt_two_lock);
	if (!kt_two_ready || t->remote) {
		mutex_unlock(&kt_two_lock);
		return -ENODEV;
	}
	got = kt_poll(t, 2, wc);
	ib_dma_sync_single_for_cpu(t->dev, t->dma, KT_BUF, DMA_BIDIRECTIONAL);
	ok = got == 2 && wc[0].wr_id == 30 && wc[1].wr_id == 31 &&
	     wc[0].byte_len == KT_INLINE && wc[1].byte_len == KT_INLINE;
	for (i = 0; i < KT_INLINE; i++) {
		ok &= t->buf[KT_RECV_PLAIN + i] == (u8)(i * 3 + 2);
		ok &= t->buf[KT_RECV_FENCED + i] == (u8)(i * 3 + 1);
	}
	kt_check(ok, "target: both inline SENDs received byte for byte, in order");
	kt_check(*(u64 *)t->buf == 0x1234,
		 "target: the atomics left 0x1234 in its memory");
	pr_info("qroce_ktest: target: %d passed, %d failed\n", kt_pass, kt_fail);
	i = sysfs_emit(buf, "%d passed, %d failed\n", kt_pass, kt_fail);
	mutex_unlock(&kt_two_lock);
	return i;
}

static const struct kernel_param_ops kt_check_ops = { .get = kt_check_get };
module_param_cb(check, &kt_check_ops, NULL, 0444);
MODULE_PARM_DESC(check, "two guests, target: read to check what arrived");

/* role=target or role=initiator: one QP, waiting for "peer". */
static int kt_two_add(struct ib_device *dev, bool target)
{
	struct kt *t = &kt_two;
	int err;

	mutex_lock(&kt_two_lock);
	if (kt_two_ready) {		/* one device per guest is enough */
		mutex_unlock(&kt_two_lock);
		return -EOPNOTSUPP;
	}
	memset(t, 0, sizeof(*t));
	t->dev = dev;
	t->remote = !target;
	err = kt_setup_objs(t, !target, target);
	kt_check(!err, target ? "target set-up: PD, CQ, an RC QP, a buffer" :
		 "initiator set-up: PD, CQ, an RC QP, a buffer");
	if (err) {
		kt_teardown(t);
		mutex_unlock(&kt_two_lock);
		return err;
	}
	pr_info("qroce_ktest: %s qpn=%u\n", target ? "target" : "initiator",
		(target ? t->b : t->a)->qp_num);
	kt_two_ready = true;
	mutex_unlock(&kt_two_lock);
	return 0;
}

static int kt_add(struct ib_device *dev)
{
	struct kt t = { .dev = dev };
	int err;

	if (strncmp(dev_name(&dev->dev), "qroce", 5))
		return -EOPNOTSUPP;
	if (!strcmp(role, "target") || !strcmp(role, "initiator"))
		return kt_two_add(dev, !strcmp(role, "target"));
	err = kt_setup(&t);
	kt_check(!err, "set-up: PD, CQ, two connected RC QPs, a REG_MR MR");
	if (!err) {
		kt_atomics(&t);
		kt_inline(&t, false);
		kt_inline(&t, true);
		kt_srq_resize(&t);
	}
	kt_teardown(&t);
	pr_info("qroce_ktest: %d passed, %d failed\n", kt_pass, kt_fail);
	return 0;
}

static void kt_remove(struct ib_device *dev, void *data)
{
	mutex_lock(&kt_two_lock);
	if (kt_two_ready && kt_two.dev == dev) {
		kt_teardown(&kt_two);
		kt_two_ready = false;
	}
	mutex_unlock(&kt_two_lock);
}

static struct ib_client kt_client = {
	.name = "qroce_ktest",
	.add = kt_add,
	.remove = kt_remove,
};

static int __init kt_init(void)
{
	return ib_register_client(&kt_client);
}

static void __exit kt_exit(void)
{
	ib_unregister_client(&kt_client);
}

module_init(kt_init);
module_exit(kt_exit);
MODULE_DESCRIPTION("qroce: kernel verbs checks (atomics, inline, fence, SRQ resize)");
MODULE_LICENSE("GPL");
