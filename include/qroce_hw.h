/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * qroce hardware interface, spec version 1.
 *
 * This is the one description of the device's interface: the QEMU model,
 * the Linux driver, the rdma-core provider and the qtests all include it.
 * docs/hw-spec.md is the prose for it and changes in the same commit.
 *
 * Everything the device and its driver exchange is little-endian.  Bit
 * fields are given as mask constants (contiguous bits) usable with the
 * kernel's FIELD_GET/FIELD_PREP and with plain shifts elsewhere.
 */
#ifndef QROCE_HW_H
#define QROCE_HW_H

#include <linux/types.h>

#define QROCE_HW_ASSERT_SIZE(type, size) \
	_Static_assert(sizeof(type) == (size), "sizeof(" #type ") != " #size)

/* ------------------------------------------------------------------ */
/* PCI identity                                                        */
/* ------------------------------------------------------------------ */

#define QROCE_PCI_VENDOR_ID		0x1b36	/* Red Hat / QEMU */
#define QROCE_PCI_DEVICE_ID		0x0015	/* the next free Red Hat ID */
#define QROCE_PCI_SUBSYS_VENDOR_ID	0x1af4
#define QROCE_PCI_SUBSYS_ID		0x1100
#define QROCE_PCI_REVISION		0x01
#define QROCE_PCI_CLASS			0x0200	/* Ethernet controller */

#define QROCE_BAR_REGS		0	/* 64 KiB MMIO: the register file */
#define QROCE_BAR_DB		2	/* doorbell pages, 64-bit MMIO */
#define QROCE_BAR_MSIX		4	/* MSI-X table and PBA */
#define QROCE_BAR_DM		5	/* device memory, 32-bit, prefetchable (§4a) */

#define QROCE_REGS_SIZE		0x10000
#define QROCE_DB_PAGE_SHIFT	12
#define QROCE_DB_PAGE_SIZE	(1u << QROCE_DB_PAGE_SHIFT)
#define QROCE_DB_PAGES		1024	/* BAR2 = 4 MiB */
#define QROCE_DB_BAR_SIZE	(QROCE_DB_PAGES * QROCE_DB_PAGE_SIZE)

/*
 * MSI-X vectors.  Vector 0: command completions and the async event queue
 * (EQ 0).  Vector 1: the Ethernet function (TX and RX).  Vector 2 + k:
 * completion event queue k + 1.
 */
#define QROCE_MSIX_VECTORS	8
#define QROCE_MSIX_VEC_CMD	0
#define QROCE_MSIX_VEC_ETH	1
#define QROCE_MSIX_VEC_COMP0	2
#define QROCE_NUM_EQS		(QROCE_MSIX_VECTORS - 1)	/* EQ 0..6 */
#define QROCE_EQN_ASYNC		0

/* the MSI-X vector of event queue @eqn */
static inline unsigned int qroce_eq_vector(unsigned int eqn)
{
	return eqn == QROCE_EQN_ASYNC ? QROCE_MSIX_VEC_CMD : eqn + 1;
}

/* ------------------------------------------------------------------ */
/* Register file (BAR0).  32-bit accesses only; 64-bit addresses are    */
/* written as _LO then _HI.  Unlisted offsets read 0, ignore writes.   */
/* ------------------------------------------------------------------ */

#define QROCE_REG_MAGIC		0x000	/* RO  "QROC" */
#define QROCE_MAGIC_VALUE	0x51524f43u
#define QROCE_REG_VERSION	0x004	/* RO  spec version */
#define QROCE_SPEC_VERSION	1
#define QROCE_REG_FEATURES	0x008	/* RO  QROCE_FEAT_* */
#define QROCE_REG_STATUS	0x00c	/* RO  QROCE_STATUS_* */
#define QROCE_REG_CTRL		0x010	/* RW  QROCE_CTRL_* */
#define QROCE_REG_MAC_LO	0x018	/* RO  MAC bytes 0..3 (byte 0 in bits 7:0) */
#define QROCE_REG_MAC_HI	0x01c	/* RO  MAC bytes 4..5 in bits 15:0 */
#define QROCE_REG_PORT_STATUS	0x020	/* RO  QROCE_PORT_* */
#define QROCE_REG_ETH_MTU	0x024	/* RW  Ethernet MTU, 68..9000 (default 1500) */
#define QROCE_REG_FATAL_CODE	0x028	/* RO  why STATUS.FATAL was set */

/* Command queue (section "Command queue" in docs/hw-spec.md). */
#define QROCE_REG_CMDQ_BASE_LO	0x040	/* RW  ring of struct qroce_cmd, 4 KiB aligned */
#define QROCE_REG_CMDQ_BASE_HI	0x044
#define QROCE_REG_CMDQ_LOG2	0x048	/* RW  log2(entries), 1..12 */
#define QROCE_REG_CMDQ_PI	0x04c	/* WO  doorbell: producer index (free-running u32) */
#define QROCE_REG_CMDQ_CI	0x050	/* RO  device consumer index (free-running) */
#define QROCE_REG_CMDQ_CQ_LO	0x054	/* RW  ring of struct qroce_cmd_comp, same entry count */
#define QROCE_REG_CMDQ_CQ_HI	0x058

/* Ethernet function. */
#define QROCE_REG_ETH_CTRL	0x080	/* RW  QROCE_ETH_CTRL_* */
#define QROCE_REG_TXQ_BASE_LO	0x084	/* RW  ring of struct qroce_eth_desc */
#define QROCE_REG_TXQ_BASE_HI	0x088
#define QROCE_REG_TXQ_LOG2	0x08c	/* RW  log2(entries), 3..12 */
#define QROCE_REG_TXQ_PI	0x090	/* WO  doorbell: producer index (free-running u32) */
#define QROCE_REG_TXQ_CI	0x094	/* RO  descriptors consumed */
#define QROCE_REG_RXQ_BASE_LO	0x098
#define QROCE_REG_RXQ_BASE_HI	0x09c
#define QROCE_REG_RXQ_LOG2	0x0a0
#define QROCE_REG_RXQ_PI	0x0a4	/* WO  buffers posted (free-running u32) */
#define QROCE_REG_RXQ_CI	0x0a8	/* RO  buffers filled */
#define QROCE_REG_ETH_IRQ	0x0ac	/* RW1C QROCE_ETH_IRQ_* causes; write 1 to clear */
#define QROCE_REG_MC_HASH_LO	0x0b0	/* RW  multicast hash filter, bits 31:0 */
#define QROCE_REG_MC_HASH_HI	0x0b4	/* RW  bits 63:32 (ETH_CTRL_MC_FILTER) */

/* Capabilities (RO). */
#define QROCE_REG_CAP_MAX_QP	0x100
#define QROCE_REG_CAP_MAX_CQ	0x104
#define QROCE_REG_CAP_MAX_MR	0x108
#define QROCE_REG_CAP_MAX_PD	0x10c
#define QROCE_REG_CAP_MAX_SRQ	0x110
#define QROCE_REG_CAP_MAX_AH	0x114
#define QROCE_REG_CAP_MAX_QP_WR	0x118	/* per SQ/RQ/SRQ */
#define QROCE_REG_CAP_MAX_CQE	0x11c
#define QROCE_REG_CAP_MAX_SGE	0x120	/* per send and per receive WQE */
#define QROCE_REG_CAP_MAX_INLINE 0x124
#define QROCE_REG_CAP_MAX_RD_ATOM 0x128	/* max_qp_rd_atom and max_qp_init_rd_atom */
#define QROCE_REG_CAP_MAX_MR_SIZE_LO 0x12c
#define QROCE_REG_CAP_MAX_MR_SIZE_HI 0x130
#define QROCE_REG_CAP_PAGE_SIZES 0x134	/* bit n set: 2^n byte pages accepted */
#define QROCE_REG_CAP_MAX_GID	0x138	/* GID table entries */
#define QROCE_REG_CAP_MAX_MSG	0x13c	/* largest message, bytes */
#define QROCE_REG_CAP_MAX_MTU	0x140	/* largest IB path MTU, bytes (4096) */
#define QROCE_REG_CAP_MAX_FRMR_PAGES 0x144 /* pages of a fast-registration MR */
#define QROCE_REG_CAP_LINK_MBPS	0x148	/* port line rate, Mb/s */
#define QROCE_REG_CAP_MAX_MCAST_GRP 0x14c	/* multicast groups */
#define QROCE_REG_CAP_MAX_MCAST_QP_ATTACH 0x150 /* UD QPs in one group */
#define QROCE_REG_CAP_DM_SIZE	0x154	/* bytes of device memory (BAR5), 0: none */

/* Event queue consumer doorbells: EQ n at QROCE_REG_EQ_CI(n), WO. */
#define QROCE_REG_EQ_CI_BASE	0x200
#define QROCE_REG_EQ_CI(n)	(QROCE_REG_EQ_CI_BASE + 4 * (n))

/* Device counters (RO, 32-bit wrapping), for ethtool and hw_counters. */
#define QROCE_REG_CNT_BASE	0x400
enum qroce_counter {
	QROCE_CNT_ETH_TX_FRAMES,
	QROCE_CNT_ETH_RX_FRAMES,
	QROCE_CNT_ETH_RX_DROPS,		/* no RX buffer, too long, disabled */
	QROCE_CNT_ROCE_TX_PKTS,
	QROCE_CNT_ROCE_RX_PKTS,
	QROCE_CNT_ROCE_RX_DROPS,	/* failed a header check or the ICRC */
	QROCE_CNT_ROCE_ICRC_ERRS,
	QROCE_CNT_ROCE_SEQ_NAKS,	/* PSN sequence NAKs sent */
	QROCE_CNT_ROCE_RNR_NAKS,	/* RNR NAKs sent */
	QROCE_CNT_ROCE_RETRANS,		/* request packets sent again */
	QROCE_CNT_ROCE_DUP_REQS,	/* duplicate requests received */
	QROCE_CNT_CMDS,
	QROCE_CNT_CMD_ERRS,
	QROCE_CNT_BAD_DOORBELLS,
	QROCE_CNT_CQE_ERRS,		/* CQEs written with a status other than SUCCESS */
	QROCE_CNT_CNP_SENT,		/* CNPs sent (notification point) */
	QROCE_CNT_CNP_HANDLED,		/* CNPs received for a QP (reaction point) */
	QROCE_CNT_ECN_MARKED,		/* frames marked CE by the congestion point */
	QROCE_CNT_RATE_CUTS,		/* DCQCN rate cuts */
	QROCE_CNT_WIRE_FAULTS,		/* wire faults injected (drop, dup, ...) */
	QROCE_CNT_INJECTED_FAULTS,	/* faults injected by the inject-* knobs */
	QROCE_CNT_ETH_RX_FILTERED,	/* multicast frames the MC_HASH filter refused */
	QROCE_CNT_ODP_FAULTS,		/* page-fault events raised */
	QROCE_CNT_ODP_PAGES_MAPPED,	/* ODP entries ODP_MAP made present */
	QROCE_CNT_ODP_PAGES_UNMAPPED,	/* present ODP entries ODP_UNMAP cleared */
	QROCE_CNT_FAST_REGS,		/* REG_MR work requests that loaded an MR */
	QROCE_CNT_NUM
};

#define QROCE_REG_CNT(n)	(QROCE_REG_CNT_BASE + 4 * (n))

/* QROCE_REG_FEATURES */
#define QROCE_FEAT_RC		0x00000001u
#define QROCE_FEAT_UD		0x00000002u
#define QROCE_FEAT_UC		0x00000004u
#define QROCE_FEAT_SRQ		0x00000008u
#define QROCE_FEAT_ATOMIC	0x00000010u
#define QROCE_FEAT_IPV6		0x00000020u
#define QROCE_FEAT_FRMR		0x00000040u	/* ALLOC_MR, REG_MR/LOCAL_INV WQEs, SEND_INV */
#define QROCE_FEAT_MCAST	0x00000080u	/* ATTACH_MCAST, DETACH_MCAST */
#define QROCE_FEAT_RESIZE_CQ	0x00000100u	/* RESIZE_CQ */
#define QROCE_FEAT_REREG_MR	0x00000200u	/* REREG_MR */
#define QROCE_FEAT_RESIZE_SRQ	0x00000400u	/* MODIFY_SRQ MAX_WR */
#define QROCE_FEAT_MW		0x00000800u	/* ALLOC_MW, DEALLOC_MW, BIND_MW WQEs */
#define QROCE_FEAT_FLUSH	0x00001000u	/* FLUSH WQEs, ACCESS_FLUSH_GLOBAL */
#define QROCE_FEAT_ATOMIC_WRITE	0x00002000u	/* ATOMIC_WRITE WQEs */
#define QROCE_FEAT_DM		0x00004000u	/* device memory, QROCE_BT_DM MRs */
#define QROCE_FEAT_ODP		0x00008000u	/* on-demand paging: QROCE_BT_ODP, ODP_* */

/*
 * multicast: the largest values of CAP_MAX_MCAST_GRP (groups the device
 * holds) and CAP_MAX_MCAST_QP_ATTACH (UD QPs attached to one group)
 */
#define QROCE_MCAST_MAX_GROUPS	4096
#define QROCE_MCAST_MAX_QP_ATTACH	64

/* QROCE_REG_STATUS */
#define QROCE_STATUS_READY	0x00000001u	/* CTRL.ENABLE accepted, CMDQ running */
#define QROCE_STATUS_FATAL	0x00000002u	/* stopped; only CTRL.RESET helps */
#define QROCE_STATUS_RESETTING	0x00000004u

/* QROCE_REG_CTRL */
#define QROCE_CTRL_ENABLE	0x00000001u
#define QROCE_CTRL_RESET	0x00000002u	/* self-clearing; resets all state */

/* QROCE_REG_PORT_STATUS */
#define QROCE_PORT_LINK_UP	0x00000001u
#define QROCE_PORT_SPEED_MASK	0x0000ff00u	/* Gb/s */

/* QROCE_REG_ETH_CTRL */
#define QROCE_ETH_CTRL_TX_EN	0x00000001u
#define QROCE_ETH_CTRL_RX_EN	0x00000002u
#define QROCE_ETH_CTRL_PROMISC	0x00000004u
#define QROCE_ETH_CTRL_ALLMULTI	0x00000008u
#define QROCE_ETH_CTRL_MC_FILTER 0x00000010u	/* multicast through MC_HASH only */
/* the MC_HASH bit of a MAC: ether_crc_le(6, mac) >> 26 */
#define QROCE_MC_HASH_SHIFT	26

/* QROCE_REG_ETH_IRQ */
#define QROCE_ETH_IRQ_TX	0x00000001u
#define QROCE_ETH_IRQ_RX	0x00000002u
#define QROCE_ETH_IRQ_LINK	0x00000004u

/* QROCE_REG_FATAL_CODE */
enum qroce_fatal_code {
	QROCE_FATAL_NONE,
	/* the command ring or its completion ring is not readable/writable */
	QROCE_FATAL_CMDQ_DMA,
	QROCE_FATAL_CMDQ_CONFIG,	/* bad CMDQ base or size at CTRL.ENABLE */
	QROCE_FATAL_INJECTED,	/* raised by the x-inject-event knob (tests) */
};

/* ------------------------------------------------------------------ */
/* Ownership of ring entries                                            */
/*                                                                     */
/* Every device-written ring (command completions, EQs, CQs) uses one  */
/* owner bit.  For entry counter c (free-running) in a ring of 2^n     */
/* entries, the device writes owner = ((c >> n) & 1) ^ 1: 1 on the     */
/* first pass, 0 on the second, ...  Rings start zeroed, so an entry   */
/* is valid when its owner bit equals ((c >> n) & 1) ^ 1.  The device  */
/* writes every other byte of the entry before the owner byte.         */
/* ------------------------------------------------------------------ */

#define QROCE_OWNER_BIT		0x01u

static inline unsigned int qroce_owner_for(__u32 counter, unsigned int log2)
{
	return ((counter >> log2) & 1u) ^ 1u;
}

/* ------------------------------------------------------------------ */
/* Buffer tables: how queue rings and MRs describe guest memory.        */
/* ------------------------------------------------------------------ */

enum qroce_bt_level {
	QROCE_BT_CONTIG = 0,	/* addr: start of npages physically contiguous pages */
	QROCE_BT_INLINE = 1,	/* page addresses are in the command (REG_MR only) */
	QROCE_BT_LIST1 = 2,	/* addr: contiguous array of npages __le64 page addresses */
	/*
	 * addr: contiguous array of __le64 addresses of 4 KiB pages, each
	 * holding 512 __le64 page addresses
	 */
	QROCE_BT_LIST2 = 3,
	/*
	 * REG_MR from the kernel's page 0 context only: iova is a bus
	 * address, no translation, local access only (get_dma_mr)
	 */
	QROCE_BT_PHYS = 4,
	/*
	 * REG_MR only: the MR's bytes are device memory (BAR5), addr is the
	 * offset of the first one; npages and page_shift 0
	 */
	QROCE_BT_DM = 5,
	/*
	 * REG_MR only: on-demand paging (hw-spec §4b).  No page list (addr,
	 * npages 0; page_shift 12): every page starts absent, ODP_MAP fills
	 * entries, ODP_UNMAP clears them.  iova 0 with length 2^64 - 1 is an
	 * implicit MR: the whole address space, page n at address n << 12.
	 */
	QROCE_BT_ODP = 6,
};

/*
 * An entry of an ODP MR's table (ODP_MAP's list): the bus address of a
 * 4 KiB page with QROCE_ODP_PRESENT (reads allowed) and QROCE_ODP_WRITE
 * (writes allowed), or 0: absent.
 */
#define QROCE_ODP_PAGE_SHIFT	12
#define QROCE_ODP_PRESENT	0x1ull
#define QROCE_ODP_WRITE		0x2ull
#define QROCE_ODP_FLAGS		0x3ull
#define QROCE_ODP_MAX_MAP	512	/* entries in one ODP_MAP */

/* device memory (BAR5): its size, a power of two, when there is any */
#define QROCE_DM_MIN_SIZE	4096u
#define QROCE_DM_MAX_SIZE	(64u << 20)

#define QROCE_BT_MIN_PAGE_SHIFT	12
#define QROCE_BT_MAX_PAGE_SHIFT	21
#define QROCE_BT_L2_ENTRIES	512	/* page addresses per second-level page */
#define QROCE_BT_MAX_PAGES	(1u << 20)
#define QROCE_BT_MAX_INLINE	4	/* page addresses inline in REG_MR */

struct qroce_bt {
	__le64 addr;
	__le32 npages;
	__u8 page_shift;	/* 12..21 */
	__u8 level;		/* enum qroce_bt_level */
	__le16 rsvd;
};

QROCE_HW_ASSERT_SIZE(struct qroce_bt, 16);

/* ------------------------------------------------------------------ */
/* Command queue                                                        */
/* ------------------------------------------------------------------ */

enum qroce_cmd_opcode {
	QROCE_CMD_NOP = 0x00,
	QROCE_CMD_CREATE_EQ = 0x01,
	QROCE_CMD_DESTROY_EQ = 0x02,
	QROCE_CMD_ALLOC_PD = 0x03,
	QROCE_CMD_DEALLOC_PD = 0x04,
	QROCE_CMD_CREATE_CQ = 0x05,
	QROCE_CMD_DESTROY_CQ = 0x06,
	QROCE_CMD_CREATE_QP = 0x07,
	QROCE_CMD_MODIFY_QP = 0x08,
	QROCE_CMD_QUERY_QP = 0x09,
	QROCE_CMD_DESTROY_QP = 0x0a,
	QROCE_CMD_REG_MR = 0x0b,
	QROCE_CMD_DEREG_MR = 0x0c,
	QROCE_CMD_CREATE_SRQ = 0x0d,
	QROCE_CMD_MODIFY_SRQ = 0x0e,
	QROCE_CMD_DESTROY_SRQ = 0x0f,
	QROCE_CMD_CREATE_AH = 0x10,
	QROCE_CMD_DESTROY_AH = 0x11,
	QROCE_CMD_SET_GID = 0x12,	/* add or replace one GID table entry */
	QROCE_CMD_DEL_GID = 0x13,
	QROCE_CMD_QUERY_SRQ = 0x14,
	QROCE_CMD_ALLOC_MR = 0x15,	/* an MR for fast registration, FREE */
	QROCE_CMD_ATTACH_MCAST = 0x16,	/* a UD QP joins a multicast GID */
	QROCE_CMD_DETACH_MCAST = 0x17,
	QROCE_CMD_RESIZE_CQ = 0x18,	/* a new ring; outstanding CQEs move to it */
	QROCE_CMD_REREG_MR = 0x19,	/* new pages, PD or access; same key */
	QROCE_CMD_ALLOC_MW = 0x1a,	/* a memory window of type 1 or 2, unbound */
	QROCE_CMD_DEALLOC_MW = 0x1b,
	QROCE_CMD_ODP_MAP = 0x1c,	/* fill entries of an ODP MR's table */
	QROCE_CMD_ODP_UNMAP = 0x1d,	/* clear them; no access uses them after */
	QROCE_CMD_ODP_QUERY = 0x1e,	/* a QP's page fault: key, range, token */
	QROCE_CMD_ODP_RESUME = 0x1f,	/* the fault is resolved, or cannot be */
	QROCE_CMD_MAX
};

enum qroce_cmd_status {
	QROCE_CMD_OK = 0,
	QROCE_CMD_ERR_OPCODE = 1,	/* unknown opcode */
	QROCE_CMD_ERR_PARAM = 2,	/* a field is out of range or reserved bits set */
	QROCE_CMD_ERR_HANDLE = 3,	/* a PD/CQ/QP/MR/SRQ/AH/EQ number names no object */
	QROCE_CMD_ERR_NORES = 4,	/* table full */
	QROCE_CMD_ERR_STATE = 5,	/* transition or attribute mask not allowed */
	QROCE_CMD_ERR_DMA = 6,		/* a page list or buffer could not be read */
	QROCE_CMD_ERR_BUSY = 7,		/* object still referenced */
	QROCE_CMD_ERR_INTERNAL = 8,
};

#define QROCE_CMD_SIZE		128
#define QROCE_CMD_COMP_SIZE	32
#define QROCE_CMDQ_MAX_LOG2	12

struct qroce_cmd_hdr {
	__u8 opcode;
	__u8 flags;		/* MBZ */
	__le16 rsvd;
	__le32 cookie;		/* echoed in the completion */
};

QROCE_HW_ASSERT_SIZE(struct qroce_cmd_hdr, 8);

struct qroce_cmd_create_eq {
	__le32 eqn;		/* 0 = async EQ; 1..QROCE_NUM_EQS-1 completion EQs */
	__u8 log2_entries;	/* 4..16 */
	__u8 rsvd[3];
	struct qroce_bt ring;	/* log2_entries * 16 bytes, CONTIG/LIST1/LIST2 */
};

struct qroce_cmd_create_cq {
	__le32 eqn;		/* completion EQ that receives this CQ's events (1..) */
	__le32 uar;		/* doorbell page allowed to arm it */
	__u8 log2_entries;	/* 1..QROCE_CQ_MAX_LOG2 */
	__u8 rsvd[7];
	struct qroce_bt ring;	/* entries * 32 bytes then struct qroce_cq_rec */
};

struct qroce_cmd_resize_cq {
	__le32 cqn;
	/* the consumer's free-running index: CQEs from here to the PI move */
	__le32 ci;
	__u8 log2_entries;	/* 1..QROCE_CQ_MAX_LOG2 */
	__u8 rsvd[7];
	struct qroce_bt ring;	/* the new ring, zeroed, as CREATE_CQ's */
};

enum qroce_qp_type {
	QROCE_QPT_RC = 0,
	QROCE_QPT_UC = 1,
	QROCE_QPT_UD = 2,
	QROCE_QPT_GSI = 3,
};

struct qroce_cmd_create_qp {
	__le32 pdn;
	__le32 send_cqn;
	__le32 recv_cqn;
	__le32 srqn;		/* valid when QROCE_CREATE_QP_SRQ */
	__le32 uar;		/* doorbell page allowed to ring it */
	__u8 type;		/* enum qroce_qp_type */
	__u8 flags;		/* QROCE_CREATE_QP_* */
	__u8 sq_log2_entries;	/* 0..QROCE_WQ_MAX_LOG2 (0 only with no SQ use) */
	__u8 rq_log2_entries;
	__u8 sq_wqe_shift;	/* SQ WQE stride = 1 << shift, 6..10 */
	__u8 rq_wqe_shift;	/* RQ WQE stride, 5..9 */
	__u8 rsvd[6];
	struct qroce_bt sq;
	struct qroce_bt rq;	/* npages 0 when SRQ */
};

#define QROCE_CREATE_QP_SRQ	0x01
#define QROCE_CREATE_QP_SIG_ALL	0x02	/* every send WQE generates a CQE */
#define QROCE_CREATE_QP_BLOCK_MCAST_LB 0x04 /* UD: no copy of its own mcast sends */

/* MODIFY_QP attribute mask: the same bits as enum ib_qp_attr_mask. */
#define QROCE_QP_ATTR_STATE		(1u << 0)
#define QROCE_QP_ATTR_CUR_STATE		(1u << 1)
#define QROCE_QP_ATTR_EN_SQD_ASYNC	(1u << 2)
#define QROCE_QP_ATTR_ACCESS_FLAGS	(1u << 3)
#define QROCE_QP_ATTR_PKEY_INDEX	(1u << 4)
#define QROCE_QP_ATTR_PORT		(1u << 5)
#define QROCE_QP_ATTR_QKEY		(1u << 6)
#define QROCE_QP_ATTR_AV		(1u << 7)
#define QROCE_QP_ATTR_PATH_MTU		(1u << 8)
#define QROCE_QP_ATTR_TIMEOUT		(1u << 9)
#define QROCE_QP_ATTR_RETRY_CNT		(1u << 10)
#define QROCE_QP_ATTR_RNR_RETRY		(1u << 11)
#define QROCE_QP_ATTR_RQ_PSN		(1u << 12)
#define QROCE_QP_ATTR_MAX_QP_RD_ATOMIC	(1u << 13)
#define QROCE_QP_ATTR_ALT_PATH		(1u << 14)
#define QROCE_QP_ATTR_MIN_RNR_TIMER	(1u << 15)
#define QROCE_QP_ATTR_SQ_PSN		(1u << 16)
#define QROCE_QP_ATTR_MAX_DEST_RD_ATOMIC (1u << 17)
#define QROCE_QP_ATTR_PATH_MIG_STATE	(1u << 18)
#define QROCE_QP_ATTR_CAP		(1u << 19)
#define QROCE_QP_ATTR_DEST_QPN		(1u << 20)

/* QP states: the same values as enum ib_qp_state. */
enum qroce_qp_state {
	QROCE_QPS_RESET = 0,
	QROCE_QPS_INIT = 1,
	QROCE_QPS_RTR = 2,
	QROCE_QPS_RTS = 3,
	QROCE_QPS_SQD = 4,
	QROCE_QPS_SQE = 5,
	QROCE_QPS_ERR = 6,
};

/* Access flags: the same values as enum ib_access_flags (low bits). */
#define QROCE_ACCESS_LOCAL_WRITE	(1u << 0)
#define QROCE_ACCESS_REMOTE_WRITE	(1u << 1)
#define QROCE_ACCESS_REMOTE_READ	(1u << 2)
#define QROCE_ACCESS_REMOTE_ATOMIC	(1u << 3)
#define QROCE_ACCESS_MW_BIND		(1u << 4)	/* MRs: windows may be bound */
#define QROCE_ACCESS_ZERO_BASED		(1u << 5)	/* BIND_MW: addresses from 0 */
#define QROCE_ACCESS_FLUSH_GLOBAL	(1u << 8)	/* MRs: FLUSH (global) target */
#define QROCE_ACCESS_MASK		0x11fu	/* MRs */
#define QROCE_QP_ACCESS_MASK		0x0fu	/* QPs: bits 0..3 */

/* Path MTU: enum ib_mtu, 1 = 256 ... 5 = 4096. */
#define QROCE_MTU_256	1
#define QROCE_MTU_4096	5

/* Network type of an address vector. */
#define QROCE_NET_IPV4	1
#define QROCE_NET_IPV6	2

struct qroce_av {
	__u8 dgid[16];		/* IPv4-mapped (::ffff:a.b.c.d) or IPv6 */
	__u8 dmac[6];
	__u8 sgid_index;
	__u8 hop_limit;
	__u8 traffic_class;
	__u8 net_type;		/* QROCE_NET_* */
	__le16 rsvd;
	__le32 flow_label;
};

QROCE_HW_ASSERT_SIZE(struct qroce_av, 32);

struct qroce_cmd_modify_qp {
	__le32 qpn;
	__le32 attr_mask;	/* QROCE_QP_ATTR_* */
	__u8 cur_state;		/* checked when QROCE_QP_ATTR_CUR_STATE */
	__u8 new_state;		/* when QROCE_QP_ATTR_STATE */
	__u8 path_mtu;		/* QROCE_MTU_* */
	__u8 timeout;		/* 4.096 us * 2^timeout, 0 = infinite */
	__u8 retry_cnt;		/* 0..7 */
	__u8 rnr_retry;		/* 0..7, 7 = infinite */
	__u8 min_rnr_timer;	/* 0..31 */
	__u8 max_rd_atomic;	/* outstanding reads/atomics as requester */
	__u8 max_dest_rd_atomic; /* responder resources */
	__u8 rsvd0[3];
	__le32 access_flags;	/* QROCE_ACCESS_* (remote ones) */
	__le32 qkey;
	__le32 sq_psn;		/* 24 bits */
	__le32 rq_psn;		/* 24 bits */
	__le32 dest_qpn;	/* 24 bits */
	__le32 rsvd1;
	struct qroce_av av;
};

struct qroce_cmd_qpn {		/* QUERY_QP, DESTROY_QP */
	__le32 qpn;
};

struct qroce_cmd_reg_mr {
	__le32 pdn;
	__le32 access;		/* QROCE_ACCESS_* */
	__le64 iova;		/* first byte's address as the verbs consumer sees it */
	__le64 length;
	__le32 first_page_offset; /* offset of iova within the first page */
	__le32 rsvd;
	struct qroce_bt pages;
	__le64 inline_pages[QROCE_BT_MAX_INLINE];	/* for QROCE_BT_INLINE */
};

/*
 * REREG_MR: an MR made by REG_MR gets new pages and range (TRANS), PD or
 * access, as @flags say; the fields not named keep their values, and
 * the key stays the same.
 */
#define QROCE_REREG_TRANS	0x1u
#define QROCE_REREG_PD		0x2u
#define QROCE_REREG_ACCESS	0x4u

struct qroce_cmd_rereg_mr {
	__le32 key;
	__le32 flags;		/* QROCE_REREG_* */
	struct qroce_cmd_reg_mr mr;	/* as REG_MR: the parts @flags name */
};

/*
 * ALLOC_MR: an MR whose pages and range a REG_MR work request loads later
 * (fast registration).  It starts FREE: no access until registered.
 */
struct qroce_cmd_alloc_mr {
	__le32 pdn;
	__le32 max_pages;	/* 1..CAP_MAX_FRMR_PAGES */
};

struct qroce_cmd_alloc_mw {
	__le32 pdn;
	__le32 type;		/* 1 or 2 (IB type 2B) */
};

struct qroce_cmd_key {		/* DEREG_MR, DEALLOC_MW */
	__le32 key;
};

struct qroce_cmd_mcast {	/* ATTACH_MCAST, DETACH_MCAST */
	__le32 qpn;		/* a UD QP */
	__le32 rsvd;		/* MBZ */
	__u8 gid[16];		/* ff00::/8, or ::ffff:224.0.0.0/100 (IPv4) */
};

struct qroce_cmd_create_srq {
	__le32 pdn;
	__le32 uar;
	__le32 cqn;		/* unused by RC/UD, reserved for XRC */
	__u8 log2_entries;
	__u8 wqe_shift;		/* stride of struct qroce_rq_wqe entries */
	__le16 rsvd;
	__le32 limit;		/* SRQ limit event threshold (0 = off) */
	__le32 rsvd1;
	struct qroce_bt ring;
};

/*
 * MODIFY_SRQ: the attributes @attr_mask names, the bits of enum
 * ib_srq_attr_mask; 0 reads as LIMIT (the command had no mask before).
 * MAX_WR gives the SRQ a new ring of 2^log2_entries WQEs of the same
 * stride: the WQEs posted and not yet consumed move to it, each to the
 * slot of its free-running index.
 */
#define QROCE_SRQ_ATTR_MAX_WR	0x1u
#define QROCE_SRQ_ATTR_LIMIT	0x2u

struct qroce_cmd_modify_srq {
	__le32 srqn;
	__le32 limit;		/* with QROCE_SRQ_ATTR_LIMIT */
	__le32 attr_mask;	/* QROCE_SRQ_ATTR_* */
	__u8 log2_entries;	/* with MAX_WR: 1..QROCE_WQ_MAX_LOG2 */
	__u8 rsvd[3];
	struct qroce_bt ring;	/* with MAX_WR: the new ring, as CREATE_SRQ's */
};

struct qroce_cmd_create_ah {
	__le32 pdn;
	__le32 rsvd;
	struct qroce_av av;
};

enum qroce_gid_type {
	QROCE_GID_ROCE_V2 = 1,
};

struct qroce_cmd_set_gid {
	__le32 index;		/* 0..CAP_MAX_GID-1 */
	__u8 type;		/* QROCE_GID_ROCE_V2 */
	__u8 rsvd[3];
	__u8 gid[16];
};

/*
 * ODP_MAP: @npages (1..QROCE_ODP_MAX_MAP) entries of the MR's table from
 * page @first, read from the __le64 array at bus address @list.
 */
struct qroce_cmd_odp_map {
	__le32 key;
	__le32 npages;
	__le64 first;
	__le64 list;
};

/* ODP_UNMAP: pages [@first, @first + @npages) absent (any count). */
struct qroce_cmd_odp_unmap {
	__le32 key;
	__le32 rsvd;
	__le64 first;
	__le64 npages;
};

/* The two sides of a QP that can wait on a page fault. */
enum qroce_pf_side {
	QROCE_PF_REQ = 0,	/* its send queue: stopped at a WQE or packet */
	QROCE_PF_RESP = 1,	/* incoming requests: answered RNR NAK (RC) */
};

enum qroce_pf_state {
	QROCE_PF_NONE = 0,
	QROCE_PF_PENDING = 1,	/* event raised, waiting for ODP_RESUME */
	QROCE_PF_FAILED = 2,	/* resumed with an error: the access fails */
};

/* ODP_RESUME @status */
#define QROCE_PF_RESUME_OK	0
#define QROCE_PF_RESUME_ERR	1

/*
 * ODP_QUERY (@status unused) and ODP_RESUME: the fault of @side of
 * @qpn; RESUME names it by the @token QUERY gave.
 */
struct qroce_cmd_odp_pf {
	__le32 qpn;
	__le32 side;		/* enum qroce_pf_side */
	__le32 token;
	__le32 status;		/* QROCE_PF_RESUME_* */
};

struct qroce_cmd_handle {	/* DESTROY_EQ/CQ/SRQ/AH, DEALLOC_PD, DEL_GID, QUERY_SRQ */
	__le32 handle;
};

struct qroce_cmd {
	struct qroce_cmd_hdr hdr;
	union {
		struct qroce_cmd_create_eq create_eq;
		struct qroce_cmd_create_cq create_cq;
		struct qroce_cmd_create_qp create_qp;
		struct qroce_cmd_modify_qp modify_qp;
		struct qroce_cmd_qpn qpn;
		struct qroce_cmd_reg_mr reg_mr;
		struct qroce_cmd_key key;
		struct qroce_cmd_alloc_mr alloc_mr;
		struct qroce_cmd_alloc_mw alloc_mw;
		struct qroce_cmd_create_srq create_srq;
		struct qroce_cmd_modify_srq modify_srq;
		struct qroce_cmd_create_ah create_ah;
		struct qroce_cmd_set_gid set_gid;
		struct qroce_cmd_mcast mcast;
		struct qroce_cmd_resize_cq resize_cq;
		struct qroce_cmd_rereg_mr rereg_mr;
		struct qroce_cmd_handle handle;
		struct qroce_cmd_odp_map odp_map;
		struct qroce_cmd_odp_unmap odp_unmap;
		struct qroce_cmd_odp_pf odp_pf;
		__u8 raw[QROCE_CMD_SIZE - 8];
	};
};

QROCE_HW_ASSERT_SIZE(struct qroce_cmd, QROCE_CMD_SIZE);
QROCE_HW_ASSERT_SIZE(struct qroce_cmd_create_eq, 24);
QROCE_HW_ASSERT_SIZE(struct qroce_cmd_create_cq, 32);
QROCE_HW_ASSERT_SIZE(struct qroce_cmd_create_qp, 64);
QROCE_HW_ASSERT_SIZE(struct qroce_cmd_modify_qp, 76);
QROCE_HW_ASSERT_SIZE(struct qroce_cmd_reg_mr, 80);
QROCE_HW_ASSERT_SIZE(struct qroce_cmd_alloc_mr, 8);
QROCE_HW_ASSERT_SIZE(struct qroce_cmd_alloc_mw, 8);
QROCE_HW_ASSERT_SIZE(struct qroce_cmd_create_srq, 40);
QROCE_HW_ASSERT_SIZE(struct qroce_cmd_create_ah, 40);
QROCE_HW_ASSERT_SIZE(struct qroce_cmd_set_gid, 24);
QROCE_HW_ASSERT_SIZE(struct qroce_cmd_mcast, 24);
QROCE_HW_ASSERT_SIZE(struct qroce_cmd_resize_cq, 32);
QROCE_HW_ASSERT_SIZE(struct qroce_cmd_rereg_mr, 88);
QROCE_HW_ASSERT_SIZE(struct qroce_cmd_odp_map, 24);
QROCE_HW_ASSERT_SIZE(struct qroce_cmd_odp_unmap, 24);
QROCE_HW_ASSERT_SIZE(struct qroce_cmd_odp_pf, 16);

/*
 * Command completion.  Output words by command:
 *   ALLOC_PD      out[0] = pdn
 *   CREATE_CQ     out[0] = cqn
 *   CREATE_QP     out[0] = qpn
 *   REG_MR        out[0] = key (lkey == rkey)
 *   ALLOC_MR      out[0] = key (lkey == rkey; variant byte 0)
 *   CREATE_SRQ    out[0] = srqn
 *   CREATE_AH     out[0] = ahn
 *   QUERY_QP      out[0] = state, out[1] = sq_psn (next to send),
 *                 out[2] = rq_psn (expected), out[3] = SQ WQEs consumed,
 *                 out[4] = RQ WQEs consumed
 *   QUERY_SRQ     out[0] = limit, out[1] = WQEs consumed
 *   ODP_QUERY     out[0] = enum qroce_pf_state, out[1] = key,
 *                 out[2] = va low, out[3] = va high, out[4] = length,
 *                 out[5] = token | QROCE_PF_WRITE (a write was refused)
 */
#define QROCE_PF_WRITE		0x80000000u
#define QROCE_PF_TOKEN_MASK	0x7fffffffu

struct qroce_cmd_comp {
	__le32 cookie;
	__u8 status;		/* enum qroce_cmd_status */
	__u8 opcode;		/* the command's opcode */
	__u8 rsvd;
	__u8 owner;		/* QROCE_OWNER_BIT */
	__le32 out[6];
};

QROCE_HW_ASSERT_SIZE(struct qroce_cmd_comp, QROCE_CMD_COMP_SIZE);

/* ------------------------------------------------------------------ */
/* Event queues                                                         */
/* ------------------------------------------------------------------ */

enum qroce_eqe_type {
	QROCE_EQE_COMP = 0x01,		/* handle = cqn */
	QROCE_EQE_CQ_ERR = 0x02,	/* handle = cqn (overrun, bad ring) */
	QROCE_EQE_QP_FATAL = 0x03,	/* handle = qpn (IB_EVENT_QP_FATAL) */
	QROCE_EQE_QP_REQ_ERR = 0x04,	/* handle = qpn (IB_EVENT_QP_REQ_ERR) */
	QROCE_EQE_QP_ACCESS_ERR = 0x05,	/* handle = qpn */
	QROCE_EQE_QP_LAST_WQE = 0x06,	/* handle = qpn */
	QROCE_EQE_SQ_DRAINED = 0x07,	/* handle = qpn */
	QROCE_EQE_COMM_EST = 0x08,	/* handle = qpn */
	QROCE_EQE_SRQ_LIMIT = 0x09,	/* handle = srqn */
	QROCE_EQE_PORT_ACTIVE = 0x0a,
	QROCE_EQE_PORT_DOWN = 0x0b,
	QROCE_EQE_EQ_OVERFLOW = 0x0c,	/* handle = eqn whose events were lost */
	QROCE_EQE_PAGE_FAULT = 0x0d,	/* handle = qpn, data = enum qroce_pf_side */
};

struct qroce_eqe {
	__u8 type;		/* enum qroce_eqe_type */
	__u8 rsvd[3];
	__le32 handle;
	__le32 data;		/* type specific (CQ_ERR/QP errors: enum qroce_wc_status) */
	__u8 rsvd1[3];
	__u8 owner;		/* QROCE_OWNER_BIT */
};

QROCE_HW_ASSERT_SIZE(struct qroce_eqe, 16);

#define QROCE_EQ_MIN_LOG2	4
#define QROCE_EQ_MAX_LOG2	16

/* ------------------------------------------------------------------ */
/* Doorbell page (BAR2, one 4 KiB page per user context; page 0 is the  */
/* kernel's).  Each doorbell is one 64-bit write: low 32 bits name the */
/* object, high 32 bits carry the value.  32-bit writes are ignored.   */
/* ------------------------------------------------------------------ */

#define QROCE_DB_SQ		0x000	/* lo: qpn, hi: SQ producer index (free-running) */
#define QROCE_DB_RQ		0x008	/* lo: qpn, hi: RQ producer index */
#define QROCE_DB_SRQ		0x010	/* lo: srqn, hi: SRQ producer index */
#define QROCE_DB_CQ_ARM		0x018	/* lo: cqn, hi: QROCE_CQ_ARM_* | ci */
#define QROCE_DB_CQ_CI		0x020	/* lo: cqn, hi: consumer index (no arm) */

#define QROCE_CQ_ARM_NEXT	0x80000000u	/* event on the next CQE */
#define QROCE_CQ_ARM_SOLICITED	0x40000000u	/* event on the next solicited or error CQE */
#define QROCE_CQ_ARM_CI_MASK	0x00ffffffu	/* consumer index, 24 low bits */

static inline __u64 qroce_db_value(__u32 obj, __u32 val)
{
	return ((__u64)val << 32) | obj;
}

/* ------------------------------------------------------------------ */
/* Work queues                                                          */
/* ------------------------------------------------------------------ */

#define QROCE_WQ_MAX_LOG2	14	/* 16384 WQEs */
#define QROCE_CQ_MAX_LOG2	16	/* 65536 CQEs */
#define QROCE_MAX_SGE		16
#define QROCE_MAX_INLINE	256
#define QROCE_SQ_WQE_MIN_SHIFT	6
#define QROCE_SQ_WQE_MAX_SHIFT	10
#define QROCE_RQ_WQE_MIN_SHIFT	5
#define QROCE_RQ_WQE_MAX_SHIFT	9

struct qroce_sge {
	__le64 addr;
	__le32 length;
	__le32 lkey;
};

QROCE_HW_ASSERT_SIZE(struct qroce_sge, 16);

enum qroce_wr_opcode {
	QROCE_WR_SEND = 0x00,
	QROCE_WR_SEND_IMM = 0x01,
	QROCE_WR_SEND_INV = 0x02,
	QROCE_WR_RDMA_WRITE = 0x03,
	QROCE_WR_RDMA_WRITE_IMM = 0x04,
	QROCE_WR_RDMA_READ = 0x05,
	QROCE_WR_ATOMIC_CMP_SWP = 0x06,
	QROCE_WR_ATOMIC_FETCH_ADD = 0x07,
	QROCE_WR_REG_MR = 0x08,		/* local: load a fast-registration MR */
	QROCE_WR_LOCAL_INV = 0x09,	/* local: invalidate the key in imm_data */
	QROCE_WR_BIND_MW = 0x0a,	/* local: bind a memory window */
	QROCE_WR_FLUSH = 0x0b,		/* RC: make earlier writes visible */
	QROCE_WR_ATOMIC_WRITE = 0x0c,	/* RC: 8 bytes written at once */
	QROCE_WR_MAX
};

#define QROCE_WQE_SIGNALED	0x01u	/* generate a CQE on success */
#define QROCE_WQE_SOLICITED	0x02u	/* set SE in the last packet */
#define QROCE_WQE_INLINE	0x04u	/* payload follows the header, not SGEs */
#define QROCE_WQE_FENCE		0x08u	/* wait for outstanding reads/atomics */

/*
 * Send WQE: a 48-byte header, then num_sge struct qroce_sge or, with
 * QROCE_WQE_INLINE, inline_len payload bytes.  Stride 1 << sq_wqe_shift.
 * The provider keeps wr_id itself; CQEs name the WQE by its index.
 */
struct qroce_send_wqe {
	__u8 opcode;		/* enum qroce_wr_opcode */
	__u8 flags;		/* QROCE_WQE_* */
	__u8 num_sge;
	__u8 rsvd0;
	__le32 imm_data;	/* raw big-endian immediate, or the rkey to invalidate */
	__le32 inline_len;	/* bytes of inline payload */
	__le32 rsvd1;
	union {
		struct {
			__le64 remote_addr;
			__le32 rkey;
			__le32 rsvd;
			/*
			 * CMP_SWP compare, FETCH_ADD add; ATOMIC_WRITE:
			 * the 8 bytes as they go on the wire
			 */
			__le64 compare_add;
			__le64 swap;		/* CMP_SWP swap */
		} rdma;
		struct {
			__le32 ahn;
			__le32 remote_qpn;
			__le32 remote_qkey;
			__le32 rsvd[5];
		} ud;
		struct {		/* QROCE_WR_REG_MR */
			__le64 iova;		/* first byte's address */
			__le64 pbl_addr;	/* npages __le64 page addresses */
			__le32 length;		/* bytes from iova */
			__le32 key;		/* the MR's key, new variant byte */
			__le32 access;		/* QROCE_ACCESS_* */
			__le16 npages;
			__u8 page_shift;	/* log2 of the page size */
			__u8 rsvd;
		} reg;
		struct {		/* QROCE_WR_BIND_MW */
			__le32 mw_key;		/* the window's key now */
			__le32 new_key;		/* same index, new variant byte */
			__le32 mr_lkey;		/* the MR the window opens */
			__le32 access;		/* QROCE_ACCESS_REMOTE_* */
			__le64 addr;		/* first byte (an iova of the MR) */
			__le64 length;		/* 0: unbind (type 1 only) */
		} bind;
		struct {		/* QROCE_WR_FLUSH */
			__le64 remote_addr;
			__le32 rkey;
			__le32 length;
			__u8 type;		/* QROCE_FLUSH_GLOBAL, _PERSISTENT */
			__u8 level;		/* QROCE_FLUSH_RANGE or _MR */
			__u8 rsvd[14];
		} flush;
	};
};

QROCE_HW_ASSERT_SIZE(struct qroce_send_wqe, 48);

/* FLUSH: placement type and selectivity level, as in the FETH. */
#define QROCE_FLUSH_GLOBAL	1u
#define QROCE_FLUSH_PERSISTENT	2u	/* no MR qualifies: an access NAK */
#define QROCE_FLUSH_RANGE	0u
#define QROCE_FLUSH_MR		1u

/* Receive WQE: 16-byte header, then num_sge SGEs.  Stride 1 << rq_wqe_shift. */
struct qroce_recv_wqe {
	__u8 num_sge;
	__u8 rsvd0[3];
	__le32 srq_tag;		/* SRQ: the CQE's wqe_index (§9), any value */
	__u8 rsvd[8];
};

QROCE_HW_ASSERT_SIZE(struct qroce_recv_wqe, 16);

/* ------------------------------------------------------------------ */
/* Completion queues                                                    */
/* ------------------------------------------------------------------ */

/* Status values equal enum ibv_wc_status / enum ib_wc_status. */
enum qroce_wc_status {
	QROCE_WC_SUCCESS = 0,
	QROCE_WC_LOC_LEN_ERR = 1,
	QROCE_WC_LOC_QP_OP_ERR = 2,
	QROCE_WC_LOC_EEC_OP_ERR = 3,
	QROCE_WC_LOC_PROT_ERR = 4,
	QROCE_WC_WR_FLUSH_ERR = 5,
	QROCE_WC_MW_BIND_ERR = 6,
	QROCE_WC_BAD_RESP_ERR = 7,
	QROCE_WC_LOC_ACCESS_ERR = 8,
	QROCE_WC_REM_INV_REQ_ERR = 9,
	QROCE_WC_REM_ACCESS_ERR = 10,
	QROCE_WC_REM_OP_ERR = 11,
	QROCE_WC_RETRY_EXC_ERR = 12,
	QROCE_WC_RNR_RETRY_EXC_ERR = 13,
	QROCE_WC_LOC_RDD_VIOL_ERR = 14,
	QROCE_WC_REM_INV_RD_REQ_ERR = 15,
	QROCE_WC_REM_ABORT_ERR = 16,
	QROCE_WC_INV_EECN_ERR = 17,
	QROCE_WC_INV_EEC_STATE_ERR = 18,
	QROCE_WC_FATAL_ERR = 19,
	QROCE_WC_RESP_TIMEOUT_ERR = 20,
	QROCE_WC_GENERAL_ERR = 21,
};

enum qroce_cqe_opcode {
	QROCE_CQE_SEND = 0x00,
	QROCE_CQE_RDMA_WRITE = 0x01,
	QROCE_CQE_RDMA_READ = 0x02,
	QROCE_CQE_CMP_SWP = 0x03,
	QROCE_CQE_FETCH_ADD = 0x04,
	QROCE_CQE_BIND_MW = 0x05,
	QROCE_CQE_LOCAL_INV = 0x06,
	QROCE_CQE_REG_MR = 0x08,
	QROCE_CQE_ATOMIC_WRITE = 0x09,
	QROCE_CQE_FLUSH = 0x0c,
	QROCE_CQE_RECV = 0x10,
	QROCE_CQE_RECV_RDMA_IMM = 0x11,
};

/*
 * The work-request opcodes' properties, one row each: the device, the
 * driver and the provider all read them here.  Adding an opcode is a row
 * here plus its handler in the device.
 */
#define QROCE_WROP_RC		0x0001u	/* valid on an RC QP */
#define QROCE_WROP_UC		0x0002u	/* valid on a UC QP */
#define QROCE_WROP_UD		0x0004u	/* valid on a UD (and GSI) QP */
#define QROCE_WROP_REMOTE	0x0008u	/* names remote memory (rdma.*) */
#define QROCE_WROP_PAYLOAD	0x0010u	/* its SGEs or inline bytes go out */
#define QROCE_WROP_READS	0x0020u	/* the response fills its SGEs */
#define QROCE_WROP_RD_ATOMIC	0x0040u	/* counts against max_rd_atomic */
#define QROCE_WROP_ATOMIC	0x0080u	/* 8 aligned bytes at the peer */
#define QROCE_WROP_IMM		0x0100u	/* carries imm_data */
#define QROCE_WROP_INV		0x0200u	/* invalidates the rkey in imm_data */
#define QROCE_WROP_LOCAL	0x0400u	/* done by the device, not sent */
#define QROCE_WROP_NO_SGE	0x0800u	/* num_sge must be 0 */

#define QROCE_WROP_CONNECTED	(QROCE_WROP_RC | QROCE_WROP_UC)
#define QROCE_WROP_ANY_QP	(QROCE_WROP_CONNECTED | QROCE_WROP_UD)

struct qroce_wr_op_info {
	const char *name;
	__u32 flags;		/* QROCE_WROP_* */
	__u32 cqe_opcode;	/* enum qroce_cqe_opcode of its send CQE */
};

static const struct qroce_wr_op_info qroce_wr_ops[QROCE_WR_MAX] = {
	[QROCE_WR_SEND] = { "SEND",
		QROCE_WROP_ANY_QP | QROCE_WROP_PAYLOAD, QROCE_CQE_SEND },
	[QROCE_WR_SEND_IMM] = { "SEND_IMM",
		QROCE_WROP_ANY_QP | QROCE_WROP_PAYLOAD | QROCE_WROP_IMM,
		QROCE_CQE_SEND },
	[QROCE_WR_SEND_INV] = { "SEND_INV",
		QROCE_WROP_RC | QROCE_WROP_PAYLOAD | QROCE_WROP_INV,
		QROCE_CQE_SEND },
	[QROCE_WR_RDMA_WRITE] = { "RDMA_WRITE",
		QROCE_WROP_CONNECTED | QROCE_WROP_REMOTE | QROCE_WROP_PAYLOAD,
		QROCE_CQE_RDMA_WRITE },
	[QROCE_WR_RDMA_WRITE_IMM] = { "RDMA_WRITE_IMM",
		QROCE_WROP_CONNECTED | QROCE_WROP_REMOTE | QROCE_WROP_PAYLOAD |
		QROCE_WROP_IMM, QROCE_CQE_RDMA_WRITE },
	[QROCE_WR_RDMA_READ] = { "RDMA_READ",
		QROCE_WROP_RC | QROCE_WROP_REMOTE | QROCE_WROP_READS |
		QROCE_WROP_RD_ATOMIC, QROCE_CQE_RDMA_READ },
	[QROCE_WR_ATOMIC_CMP_SWP] = { "ATOMIC_CMP_SWP",
		QROCE_WROP_RC | QROCE_WROP_REMOTE | QROCE_WROP_READS |
		QROCE_WROP_RD_ATOMIC | QROCE_WROP_ATOMIC, QROCE_CQE_CMP_SWP },
	[QROCE_WR_ATOMIC_FETCH_ADD] = { "ATOMIC_FETCH_ADD",
		QROCE_WROP_RC | QROCE_WROP_REMOTE | QROCE_WROP_READS |
		QROCE_WROP_RD_ATOMIC | QROCE_WROP_ATOMIC, QROCE_CQE_FETCH_ADD },
	[QROCE_WR_REG_MR] = { "REG_MR",
		QROCE_WROP_ANY_QP | QROCE_WROP_LOCAL | QROCE_WROP_NO_SGE,
		QROCE_CQE_REG_MR },
	[QROCE_WR_LOCAL_INV] = { "LOCAL_INV",
		QROCE_WROP_ANY_QP | QROCE_WROP_LOCAL | QROCE_WROP_NO_SGE,
		QROCE_CQE_LOCAL_INV },
	[QROCE_WR_BIND_MW] = { "BIND_MW",
		QROCE_WROP_CONNECTED | QROCE_WROP_LOCAL | QROCE_WROP_NO_SGE,
		QROCE_CQE_BIND_MW },
	[QROCE_WR_FLUSH] = { "FLUSH",
		QROCE_WROP_RC | QROCE_WROP_REMOTE | QROCE_WROP_RD_ATOMIC |
		QROCE_WROP_NO_SGE, QROCE_CQE_FLUSH },
	[QROCE_WR_ATOMIC_WRITE] = { "ATOMIC_WRITE",
		QROCE_WROP_RC | QROCE_WROP_REMOTE | QROCE_WROP_RD_ATOMIC |
		QROCE_WROP_ATOMIC | QROCE_WROP_NO_SGE, QROCE_CQE_ATOMIC_WRITE },
};

/* The flags of opcode @op, 0 for one the device does not know. */
static inline unsigned int qroce_wr_op_flags(unsigned int op)
{
	return op < QROCE_WR_MAX ? qroce_wr_ops[op].flags : 0;
}

#define QROCE_CQE_F_IMM		0x01u	/* imm_data valid */
#define QROCE_CQE_F_INV		0x02u	/* imm_data holds the invalidated rkey */
#define QROCE_CQE_F_GRH		0x04u	/* UD: 40-byte GRH area written first */
#define QROCE_CQE_F_SQ		0x08u	/* completion of a send WQE */
#define QROCE_CQE_F_SRQ		0x10u	/* wqe_index is an SRQ WQE's srq_tag */
#define QROCE_CQE_F_IPV4	0x20u	/* UD/GSI: the packet came over IPv4 */

struct qroce_cqe {
	__le32 wqe_index;	/* free-running WQE counter of the SQ or RQ; SRQ: tag */
	__le32 qpn;
	__le32 byte_len;
	__le32 imm_data;	/* raw big-endian immediate or invalidated rkey */
	__le32 src_qp;		/* UD/GSI */
	__u8 opcode;		/* enum qroce_cqe_opcode */
	__u8 status;		/* enum qroce_wc_status */
	__u8 flags;		/* QROCE_CQE_F_* */
	__u8 vendor_err;
	__u8 smac[6];		/* UD/GSI */
	__u8 rsvd;
	__u8 owner;		/* QROCE_OWNER_BIT */
};

QROCE_HW_ASSERT_SIZE(struct qroce_cqe, 32);

/*
 * After the 2^n CQEs, the CQ ring buffer holds this record.  The consumer
 * writes how many CQEs it has consumed; the device reads it only when the
 * ring looks full, and raises QROCE_EQE_CQ_ERR on a real overrun.
 */
struct qroce_cq_rec {
	__le32 ci;		/* free-running consumer index */
	__le32 rsvd[15];
};

QROCE_HW_ASSERT_SIZE(struct qroce_cq_rec, 64);

/* ------------------------------------------------------------------ */
/* Ethernet function                                                    */
/* ------------------------------------------------------------------ */

#define QROCE_ETH_MIN_MTU	68
#define QROCE_ETH_MAX_MTU	9000
#define QROCE_ETH_MAX_FRAME	(QROCE_ETH_MAX_MTU + 14 + 4)
#define QROCE_ETH_RING_MIN_LOG2	3
#define QROCE_ETH_RING_MAX_LOG2	12

/*
 * One descriptor per frame, both directions.  TX: the driver fills addr,
 * len; the device sets QROCE_ETH_DESC_DONE when the frame is gone.  RX:
 * the driver fills addr, len (buffer size); the device writes the frame,
 * sets len to its length, and sets DONE (and ERR if it was truncated).
 */
struct qroce_eth_desc {
	__le64 addr;
	__le16 len;
	__le16 flags;
	__le32 rsvd;
};

QROCE_HW_ASSERT_SIZE(struct qroce_eth_desc, 16);

#define QROCE_ETH_DESC_DONE	0x0001u
#define QROCE_ETH_DESC_ERR	0x0002u

/* ------------------------------------------------------------------ */
/* Limits the device model implements (also readable as CAP registers). */
/* ------------------------------------------------------------------ */

#define QROCE_DEF_MAX_QP	65536	/* QPNs 2..65535; 1 is the GSI QP */
#define QROCE_DEF_MAX_CQ	1024
#define QROCE_DEF_MAX_MR	8192
#define QROCE_DEF_MAX_PD	1024
#define QROCE_DEF_MAX_SRQ	256
#define QROCE_DEF_MAX_AH	4096
#define QROCE_DEF_MAX_GID	16
#define QROCE_DEF_MAX_RD_ATOM	16
#define QROCE_DEF_MAX_MSG	0x80000000u	/* 2 GiB */
#define QROCE_DEF_MAX_BT_PAGES	(1u << 22)	/* all buffer tables: 32 MiB */
#define QROCE_DEF_STATE_BUDGET_MB 512	/* QEMU memory for objects' state */
#define QROCE_MR_KEY_INDEX_SHIFT 8	/* key = index << 8 | 8-bit variant */
#define QROCE_MR_VARIANT_MASK	0xffu	/* the key portion a consumer chooses */
#define QROCE_DEF_MAX_FRMR_PAGES 512	/* 2 MiB in 4 KiB pages */
#define QROCE_DEF_MCAST_GROUPS	64	/* CAP_MAX_MCAST_GRP */
#define QROCE_DEF_MCAST_QP_ATTACH 8	/* CAP_MAX_MCAST_QP_ATTACH */
#define QROCE_DEF_DM_SIZE	(256u << 10)	/* CAP_DM_SIZE: device memory */

#endif /* QROCE_HW_H */
