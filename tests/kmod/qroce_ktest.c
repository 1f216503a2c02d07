// SPDX-License-Identifier: GPL-2.0-only
/*
 * qroce_ktest: the kernel post path of qroce, as a kernel ULP uses it.
 * Not part of the qroce modules; tests/suite/t-kverbs.sh loads it in guests.
 *
 * role=loopback (the default), on insmod, for each qroce device: a PD, one
 * CQ polled directly, and two RC QPs connected to each other through the
 * device (its own RoCEv2 IPv4 GID); a kernel buffer registered for remote
 * access with a fast-registration MR (ib_alloc_mr, ib_map_mr_sg,
 * IB_WR_REG_MR), as ULPs do (the device gives get_dma_mr no remote access,
 * so no unsafe global rkey).  Then, checking every result:
 *  - FETCH_AND_ADD and CMP_AND_SWP (one that swaps, one that does not) on
 *    the buffer, through the MR's rkey;
 *  - a SEND with IB_SEND_INLINE whose SGE names kernel virtual memory;
 *  - an RDMA READ followed by an IB_SEND_FENCE inline SEND;
 *  - a kernel SRQ resized with IB_SRQ_MAX_WR with receives posted.
 * Each check prints "qroce_ktest: PASS ..." or "qroce_ktest: FAIL ...",
 * and a last line "qroce_ktest: N passed, N failed".
 *
 * role=target and role=initiator: the same atomics and SENDs between two
 * guests, one RC QP in each, on the first qroce device.  On insmod each
 * side sets up (the target also maps its buffer into an MR) and prints
 *   qroce_ktest: ROLE: me: QPN GID MAC RKEY ADDR
 * (GID in 32 hex digits; RKEY and ADDR of the target's buffer, 0 on the
 * initiator), and stays loaded, its QP in RESET.  The test script then
 * writes each side's "me:" fields to the other's parameter "peer"
 * (/sys/module/qroce_ktest/parameters/peer), and writes 1 to parameters
 * that run the steps in the writer's process context:
 *  - "run" on the target: connect to the initiator, REG_MR the buffer,
 *    put 5 in its atomic target and post two receives;
 *  - "run" on the initiator: connect to the target, then the atomics on the
 *    target's buffer through its rkey (each old value compared, and the
 *    value left read back with an RDMA READ), an inline SEND from kernel
 *    memory, and an RDMA READ followed by a fenced inline SEND (the bytes
 *    each SEND left in the target's receive buffer read back and compared);
 *  - "check" on the target: both receives completed in order with the
 *    bytes sent, and the atomics left 0x1234.
 * The lines are "qroce_ktest: ROLE: PASS ..." or "... FAIL ...", and each
 * step's last line "qroce_ktest: ROLE: N passed, N failed" (counting since
 * insmod).  A step's write fails only if it could not run (no device, no
 * peer, or run already); rmmod tears down either side.
 */
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/delay.h>
#include <linux/etherdevice.h>
#include <linux/hex.h>
#include <linux/scatterlist.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_cache.h>

#define KT_PSN		100
#define KT_BUF		4096
#define KT_INLINE	40
#define KT_RECV		1024	/* receive buffers, 256 bytes (a target: 2) */
#define KT_RECV_ID	30	/* wr_id of a target's first receive */

enum kt_role { KT_LOOPBACK, KT_TARGET, KT_INITIATOR };

/* the steps of a target or an initiator */
enum kt_state { KT_NONE, KT_READY, KT_RUN, KT_CHECKED };

struct kt {
	struct ib_device *dev;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *a, *b;	/* B in loopback only */
	struct ib_mr *mr;	/* the buffer, for remote access */
	struct scatterlist sg;
	/*
	 * [0, 64): atomic target, [64, 128): result, [128, 136): the
	 * target's value read back, KT_RECV: receive buffers, 2048: READ
	 */
	u8 *buf;
	dma_addr_t dma;
	u32 gid_index;
	union ib_gid gid;
	u8 mac[ETH_ALEN];
	/* the other side: this device in loopback, else the peer guest */
	union ib_gid dgid;
	u8 dmac[ETH_ALEN];
	u32 rkey;		/* its buffer, for atomics and READs */
	u64 raddr;
	enum kt_state state;
};

/* What the other guest printed on its "me:" line, written to "peer". */
struct kt_peer {
	u32 qpn;
	union ib_gid gid;
	u8 mac[ETH_ALEN];
	u32 rkey;
	u64 addr;
	int fields;		/* how many were given; 0: none yet */
};

static char kt_role_name[16] = "loopback";
module_param_string(role, kt_role_name, sizeof(kt_role_name), 0444);
MODULE_PARM_DESC(role, "loopback (default), or target or initiator (two guests)");

static enum kt_role kt_role;
static const char *kt_who = "";	/* "target: ", "initiator: " */
static int kt_pass, kt_fail;

/* a target or an initiator: its device's state, and its peer */
static DEFINE_MUTEX(kt_lock);
static struct kt kt_one;
static struct kt_peer kt_peer;

static void kt_check(bool ok, const char *what)
{
	pr_info("qroce_ktest: %s%s %s\n", kt_who, ok ? "PASS" : "FAIL", what);
	if (ok)
		kt_pass++;
	else
		kt_fail++;
}

static void kt_summary(void)
{
	pr_info("qroce_ktest: %s%d passed, %d failed\n", kt_who, kt_pass,
		kt_fail);
}

/* Byte @i of the inline SEND (@fence: the one behind the RDMA READ). */
static u8 kt_byte(int i, bool fence)
{
	return i * 3 + (fence ? 1 : 2);
}

/* The device's RoCEv2 GID of an IPv4 address, and its MAC. */
static int kt_gid(struct kt *t)
{
	const struct ib_gid_attr *attr;
	struct net_device *ndev;
	int err;
	u32 i;

	for (i = 0; i < t->dev->port_data[1].immutable.gid_tbl_len; i++) {
		attr = rdma_get_gid_attr(t->dev, 1, i);
		if (IS_ERR(attr))
			continue;
		err = -ENOENT;
		if (attr->gid_type == IB_GID_TYPE_ROCE_UDP_ENCAP &&
		    ipv6_addr_v4mapped((struct in6_addr *)attr->gid.raw)) {
			rcu_read_lock();
			ndev = rdma_read_gid_attr_ndev_rcu(attr);
			if (!IS_ERR(ndev)) {
				ether_addr_copy(t->mac, ndev->dev_addr);
				t->gid = attr->gid;
				t->gid_index = i;
				err = 0;
			}
			rcu_read_unlock();
		}
		rdma_put_gid_attr(attr);
		if (!err)
			return 0;
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

/* @qp to RTS, connected to QP @dqpn of the other side (dgid, dmac). */
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

/* An RDMA READ of @len bytes at @roff of the other side's buffer to @loff. */
static bool kt_read(struct kt *t, u32 roff, u32 loff, u32 len)
{
	struct ib_sge sge = { .addr = t->dma + loff, .length = len,
			      .lkey = t->pd->local_dma_lkey };
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = 13, .opcode = IB_WR_RDMA_READ,
			.sg_list = &sge, .num_sge = 1,
			.send_flags = IB_SEND_SIGNALED },
		.remote_addr = t->raddr + roff, .rkey = t->rkey,
	};
	struct ib_wc wc;
	bool ok;

	ib_dma_sync_single_for_device(t->dev, t->dma, KT_BUF,
				      DMA_BIDIRECTIONAL);
	ok = !ib_post_send(t->a, &wr.wr, NULL) && kt_poll(t, 1, &wc) == 1;
	ib_dma_sync_single_for_cpu(t->dev, t->dma, KT_BUF, DMA_BIDIRECTIONAL);
	return ok;
}

/* The atomic target's value: in the buffer, or read from the target's. */
static u64 kt_target(struct kt *t)
{
	if (kt_role == KT_INITIATOR)
		return kt_read(t, 0, 128, 8) ? *(u64 *)(t->buf + 128) : ~0ULL;
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
	u64 old, now;
	char msg[96];

	if (kt_role == KT_LOOPBACK)
		*(u64 *)t->buf = 5;	/* a target puts it in its own */
	old = kt_atomic(t, IB_WR_ATOMIC_FETCH_AND_ADD, 7, 0);
	now = kt_target(t);
	snprintf(msg, sizeof(msg), "FETCH_AND_ADD 7 to 5: old %llu, now %llu",
		 old, now);
	kt_check(old == 5 && now == 12, msg);
	old = kt_atomic(t, IB_WR_ATOMIC_CMP_AND_SWP, 12, 0x1234);
	now = kt_target(t);
	snprintf(msg, sizeof(msg), "CMP_AND_SWP 12 -> 0x1234: old %llu, now 0x%llx",
		 old, now);
	kt_check(old == 12 && now == 0x1234, msg);
	old = kt_atomic(t, IB_WR_ATOMIC_CMP_AND_SWP, 99, 1);
	now = kt_target(t);
	snprintf(msg, sizeof(msg), "CMP_AND_SWP 99 -> 1 (no match): old 0x%llx, now 0x%llx",
		 old, now);
	kt_check(old == 0x1234 && now == 0x1234, msg);
}

/*
 * An inline SEND from A (its SGE a kernel virtual address) into a RECV
 * on B, or on the target's QP (its receive buffer read back); with
 * @fence, an RDMA READ of the target goes first and the SEND is fenced
 * behind it.
 */
static void kt_inline(struct kt *t, bool fence)
{
	u8 *msg = kmalloc(KT_INLINE, GFP_KERNEL);
	struct ib_sge rs = { .addr = t->dma + KT_RECV, .length = 256,
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
	bool loop = kt_role == KT_LOOPBACK, ok;
	int i, n = (fence ? 2 : 1) + loop, got;
	struct ib_wc wc[3];

	if (!msg) {
		kt_check(false, "inline SEND: no memory");
		return;
	}
	for (i = 0; i < KT_INLINE; i++)
		msg[i] = kt_byte(i, fence);
	ss.addr = (u64)(uintptr_t)msg;
	memset(t->buf + KT_RECV, 0, 256);
	memset(t->buf + 2048, 0, 8);
	ib_dma_sync_single_for_device(t->dev, t->dma, KT_BUF,
				      DMA_BIDIRECTIONAL);
	if (fence) {
		read.wr.next = &swr;
		swr.send_flags |= IB_SEND_FENCE;
	}
	ok = (!loop || !ib_post_recv(t->b, &rwr, NULL)) &&
	     !ib_post_send(t->a, fence ? &read.wr : &swr, NULL);
	/* the inline bytes were copied into the WQE: reuse the buffer now */
	memset(msg, 0, KT_INLINE);
	got = ok ? kt_poll(t, n, wc) : 0;
	/* the target's receive buffer (its second one for the fenced SEND) */
	if (!loop && got == n)
		ok &= kt_read(t, KT_RECV + (fence ? 256 : 0), KT_RECV, KT_INLINE);
	ib_dma_sync_single_for_cpu(t->dev, t->dma, KT_BUF, DMA_BIDIRECTIONAL);
	for (i = 0; i < KT_INLINE && got == n; i++)
		ok &= t->buf[KT_RECV + i] == kt_byte(i, fence);
	for (i = 0; i < got; i++)
		if (wc[i].wr_id == 10)
			ok &= wc[i].byte_len == KT_INLINE;
	if (fence)
		ok &= *(u64 *)(t->buf + 2048) == 0x1234;
	kt_check(ok && got == n, fence ?
		 "RDMA READ then a fenced inline SEND: both complete, data right" :
		 "inline SEND from kernel memory: received byte for byte");
	kfree(msg);
}

static int kt_err(const char *what, long err)
{
	pr_info("qroce_ktest: %s%s: %ld\n", kt_who, what, err);
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

/* The buffer in a fast-registration MR, for kt_reg to register. */
static int kt_map(struct kt *t)
{
	int n;

	t->mr = ib_alloc_mr(t->pd, IB_MR_TYPE_MEM_REG, 1);
	if (IS_ERR(t->mr))
		return kt_err("ib_alloc_mr", PTR_ERR(t->mr));
	sg_init_table(&t->sg, 1);
	sg_dma_address(&t->sg) = t->dma;
	sg_dma_len(&t->sg) = KT_BUF;
	n = ib_map_mr_sg(t->mr, &t->sg, 1, NULL, PAGE_SIZE);
	if (n != 1)
		return kt_err("ib_map_mr_sg", n < 0 ? n : -EIO);
	return 0;
}

/* IB_WR_REG_MR of the MR with remote access, from QP A (in RTS). */
static int kt_reg(struct kt *t)
{
	struct ib_reg_wr reg = {
		.wr = { .wr_id = 2, .opcode = IB_WR_REG_MR,
			.send_flags = IB_SEND_SIGNALED },
		.mr = t->mr, .key = t->mr->rkey,
		.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ |
			  IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC,
	};
	struct ib_wc wc;
	int err;

	ib_dma_sync_single_for_device(t->dev, t->dma, KT_BUF,
				      DMA_BIDIRECTIONAL);
	err = ib_post_send(t->a, &reg.wr, NULL);
	if (err || kt_poll(t, 1, &wc) != 1)
		return kt_err("IB_WR_REG_MR", err ? err : -EIO);
	return 0;
}

/* PD, CQ, QP A (and B in loopback), the buffer, our GID and MAC. */
static int kt_setup_qps(struct kt *t)
{
	t->pd = ib_alloc_pd(t->dev, 0);
	if (IS_ERR(t->pd))
		return kt_err("ib_alloc_pd", PTR_ERR(t->pd));
	t->cq = ib_alloc_cq(t->dev, NULL, 64, 0, IB_POLL_DIRECT);
	if (IS_ERR(t->cq))
		return kt_err("ib_alloc_cq", PTR_ERR(t->cq));
	t->a = kt_qp(t);
	if (IS_ERR(t->a))
		return kt_err("ib_create_qp", PTR_ERR(t->a));
	if (kt_role == KT_LOOPBACK) {
		t->b = kt_qp(t);
		if (IS_ERR(t->b))
			return kt_err("ib_create_qp", PTR_ERR(t->b));
	}
	t->buf = kzalloc(KT_BUF, GFP_KERNEL);
	if (!t->buf)
		return -ENOMEM;
	t->dma = ib_dma_map_single(t->dev, t->buf, KT_BUF, DMA_BIDIRECTIONAL);
	if (ib_dma_mapping_error(t->dev, t->dma)) {
		t->dma = 0;
		return -ENOMEM;
	}
	if (kt_gid(t)) {
		pr_info("qroce_ktest: %sno RoCEv2 IPv4 GID\n", kt_who);
		return -ENOENT;
	}
	return 0;
}

/* Loopback: A and B connected through the device, the MR registered. */
static int kt_setup(struct kt *t)
{
	int err = kt_setup_qps(t);

	if (err)
		return err;
	t->dgid = t->gid;
	ether_addr_copy(t->dmac, t->mac);
	err = kt_connect(t, t->a, t->b->qp_num);
	if (!err)
		err = kt_connect(t, t->b, t->a->qp_num);
	if (err)
		return kt_err("connecting the QPs", err);
	err = kt_map(t);
	if (err)
		return err;
	t->rkey = t->mr->rkey;
	t->raddr = t->mr->iova;
	return kt_reg(t);		/* a work request: the QP is in RTS */
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

/* A target or an initiator on @dev: set up, "me:" printed, QP in RESET. */
static int kt_add_one(struct ib_device *dev)
{
	struct kt *t = &kt_one;
	int err;

	mutex_lock(&kt_lock);
	if (t->dev) {		/* the first qroce device only */
		mutex_unlock(&kt_lock);
		return -EOPNOTSUPP;
	}
	t->dev = dev;
	err = kt_setup_qps(t);
	if (!err && kt_role == KT_TARGET)
		err = kt_map(t);
	kt_check(!err, kt_role == KT_TARGET ?
		 "set-up: PD, CQ, an RC QP, the buffer mapped into an MR" :
		 "set-up: PD, CQ, an RC QP");
	if (err) {
		kt_teardown(t);
		memset(t, 0, sizeof(*t));
	} else {
		t->state = KT_READY;
		pr_info("qroce_ktest: %sme: %u %16phN %pM 0x%x 0x%llx\n",
			kt_who, t->a->qp_num, t->gid.raw, t->mac,
			t->mr ? t->mr->rkey : 0, t->mr ? t->mr->iova : 0);
	}
	mutex_unlock(&kt_lock);
	return err;
}

/*
 * "QPN GID MAC [RKEY ADDR]": the other guest's "me:" fields (an initiator
 * needs the target's RKEY and ADDR: its "run" checks there are 5).
 */
static int kt_peer_set(const char *val, const struct kernel_param *kp)
{
	struct kt_peer p = {};
	char gid[33], mac[18];
	int n;

	n = sscanf(val, "%u %32s %17s %x %llx", &p.qpn, gid, mac, &p.rkey,
		   &p.addr);
	if (n < 3 || strlen(gid) != 32 || hex2bin(p.gid.raw, gid, 16) ||
	    !mac_pton(mac, p.mac))
		return -EINVAL;
	p.fields = n;
	mutex_lock(&kt_lock);
	kt_peer = p;
	mutex_unlock(&kt_lock);
	return 0;
}

static int kt_peer_get(char *buf, const struct kernel_param *kp)
{
	int n;

	mutex_lock(&kt_lock);
	n = scnprintf(buf, PAGE_SIZE, "%u %16phN %pM 0x%x 0x%llx\n",
		      kt_peer.qpn, kt_peer.gid.raw, kt_peer.mac, kt_peer.rkey,
		      kt_peer.addr);
	mutex_unlock(&kt_lock);
	return n;
}

static const struct kernel_param_ops kt_peer_ops = {
	.set = kt_peer_set,
	.get = kt_peer_get,
};

module_param_cb(peer, &kt_peer_ops, NULL, 0644);
MODULE_PARM_DESC(peer, "the other guest's \"me:\" fields: QPN GID MAC [RKEY ADDR]");

/* QP A to RTS, connected to the peer; its buffer's rkey and address. */
static int kt_connect_peer(struct kt *t)
{
	t->dgid = kt_peer.gid;
	ether_addr_copy(t->dmac, kt_peer.mac);
	t->rkey = kt_peer.rkey;
	t->raddr = kt_peer.addr;
	return kt_connect(t, t->a, kt_peer.qpn);
}

/* The target: connected, the MR registered, 5 to add to, two receives. */
static void kt_target_run(struct kt *t)
{
	int i, err;

	*(u64 *)t->buf = 5;
	err = kt_connect_peer(t);
	if (!err)
		err = kt_reg(t);	/* syncs the 5 for the device */
	for (i = 0; i < 2 && !err; i++) {
		struct ib_sge sge = { .addr = t->dma + KT_RECV + i * 256,
				      .length = 256,
				      .lkey = t->pd->local_dma_lkey };
		struct ib_recv_wr wr = { .wr_id = KT_RECV_ID + i,
					 .sg_list = &sge, .num_sge = 1 };

		err = ib_post_recv(t->a, &wr, NULL);
	}
	kt_check(!err, "connected to the initiator, REG_MR done, two receives posted");
	kt_summary();
}

/* The initiator: connected, then atomics, inline SEND, READ + fence. */
static void kt_initiator_run(struct kt *t)
{
	int err = kt_connect_peer(t);

	kt_check(!err, "connected to the target");
	if (!err) {
		kt_atomics(t);
		kt_inline(t, false);
		kt_inline(t, true);
	}
	kt_summary();
}

/*
 * The target, after the initiator's run: both inline SENDs arrived in
 * order, byte for byte, and the atomics left 0x1234.
 */
static void kt_target_check(struct kt *t)
{
	struct ib_wc wc[2];
	int got = kt_poll(t, 2, wc), i, k;
	char msg[96];
	bool ok;
	u64 now;

	ib_dma_sync_single_for_cpu(t->dev, t->dma, KT_BUF, DMA_BIDIRECTIONAL);
	for (i = 0; i < 2; i++) {
		ok = i < got && wc[i].wr_id == KT_RECV_ID + i &&
		     wc[i].opcode == IB_WC_RECV && wc[i].byte_len == KT_INLINE;
		for (k = 0; k < KT_INLINE && ok; k++)
			ok = t->buf[KT_RECV + i * 256 + k] == kt_byte(k, i == 1);
		kt_check(ok, i ? "the fenced inline SEND: received byte for byte" :
			 "the inline SEND: received byte for byte");
	}
	now = *(u64 *)t->buf;
	snprintf(msg, sizeof(msg), "the atomics left 0x%llx in the buffer",
		 now);
	kt_check(now == 0x1234, msg);
	kt_summary();
}

/*
 * A step of a target or an initiator, in the writer's process context:
 * "run" (both) from READY, "check" (a target) after "run".
 */
static int kt_step(enum kt_state from, enum kt_state to)
{
	struct kt *t = &kt_one;
	int err = 0;

	mutex_lock(&kt_lock);
	if (kt_role == KT_LOOPBACK || !t->dev)
		err = -ENODEV;
	else if (t->state != from)
		err = -EBUSY;
	else if (kt_peer.fields < (kt_role == KT_INITIATOR ? 5 : 3))
		err = -EDESTADDRREQ;
	if (err)
		goto out;
	t->state = to;
	if (to == KT_CHECKED)
		kt_target_check(t);
	else if (kt_role == KT_TARGET)
		kt_target_run(t);
	else
		kt_initiator_run(t);
out:
	mutex_unlock(&kt_lock);
	return err;
}

static int kt_run_set(const char *val, const struct kernel_param *kp)
{
	return kt_step(KT_READY, KT_RUN);
}

static int kt_check_set(const char *val, const struct kernel_param *kp)
{
	return kt_role == KT_TARGET ? kt_step(KT_RUN, KT_CHECKED) : -EINVAL;
}

static const struct kernel_param_ops kt_run_ops = { .set = kt_run_set };
static const struct kernel_param_ops kt_check_ops = { .set = kt_check_set };

module_param_cb(run, &kt_run_ops, NULL, 0200);
MODULE_PARM_DESC(run, "write 1: connect to the peer and run (target first)");
module_param_cb(check, &kt_check_ops, NULL, 0200);
MODULE_PARM_DESC(check, "write 1 (target, after the initiator's run): check");

static int kt_add(struct ib_device *dev)
{
	struct kt t = { .dev = dev };
	int err;

	if (strncmp(dev_name(&dev->dev), "qroce", 5))
		return -EOPNOTSUPP;
	if (kt_role != KT_LOOPBACK)
		return kt_add_one(dev);
	err = kt_setup(&t);
	kt_check(!err, "set-up: PD, CQ, two connected RC QPs, a REG_MR MR");
	if (!err) {
		kt_atomics(&t);
		kt_inline(&t, false);
		kt_inline(&t, true);
		kt_srq_resize(&t);
	}
	kt_teardown(&t);
	kt_summary();
	return 0;
}

static void kt_remove(struct ib_device *dev, void *data)
{
	mutex_lock(&kt_lock);
	if (kt_role != KT_LOOPBACK && kt_one.dev == dev) {
		kt_teardown(&kt_one);
		memset(&kt_one, 0, sizeof(kt_one));
	}
	mutex_unlock(&kt_lock);
}

static struct ib_client kt_client = {
	.name = "qroce_ktest",
	.add = kt_add,
	.remove = kt_remove,
};

static int __init kt_init(void)
{
	if (sysfs_streq(kt_role_name, "target")) {
		kt_role = KT_TARGET;
		kt_who = "target: ";
	} else if (sysfs_streq(kt_role_name, "initiator")) {
		kt_role = KT_INITIATOR;
		kt_who = "initiator: ";
	} else if (!sysfs_streq(kt_role_name, "loopback")) {
		return -EINVAL;
	}
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
