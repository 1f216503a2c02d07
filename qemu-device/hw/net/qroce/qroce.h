/*
 * qroce: emulated RoCEv2 RDMA NIC -- device state shared by the files of
 * the model (qroce.c: PCI, registers, Ethernet, command queue, objects;
 * qroce_rc.c: the RoCE transport engine).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef HW_NET_QROCE_H
#define HW_NET_QROCE_H

#include "hw/pci/pci_device.h"
#include "net/net.h"
#include "qom/object.h"
#include "qroce_hw.h"

#define TYPE_QROCE "qroce"
OBJECT_DECLARE_SIMPLE_TYPE(QRoceState, QROCE)

/* A frame kept by the device: loopback queue, reordering. */
typedef struct QRoceLoFrame {
    size_t len;
    uint8_t data[];
} QRoceLoFrame;

/* A buffer table, copied into device memory when its object is created. */
typedef struct QRoceBT {
    uint64_t *pages;        /* bus address of each page */
    uint32_t npages;
    uint8_t page_shift;
    bool phys;              /* QROCE_BT_PHYS: identity, no page list */
} QRoceBT;

typedef struct QRoceEQ {
    bool valid;
    uint8_t log2;
    QRoceBT bt;
    uint32_t pi;            /* entries written */
    uint32_t ci;            /* consumer index from EQ_CI(n) */
    bool overflowed;
} QRoceEQ;

typedef struct QRoceWQ {
    QRoceBT bt;
    uint8_t log2;
    uint8_t wqe_shift;
    uint32_t pi;            /* producer index from the last doorbell */
    uint32_t ci;            /* WQEs the engine has consumed */
} QRoceWQ;

typedef struct QRoceCQ {
    bool valid;
    uint32_t cqn, uar, eqn;
    uint8_t log2;
    QRoceBT bt;
    uint32_t pi;
    uint32_t ci_seen;       /* last consumer index read or reported */
    uint32_t arm;           /* QROCE_CQ_ARM_NEXT / _SOLICITED pending */
    bool error;
    uint32_t refs;          /* QPs using it */
} QRoceCQ;

typedef struct QRoceMR {
    bool valid;
    uint8_t variant;
    uint32_t key, pdn, access;
    uint64_t iova, length;
    uint32_t first_page_offset;
    QRoceBT bt;
} QRoceMR;

typedef struct QRoceAV {
    uint8_t dgid[16];
    uint8_t dmac[6];
    uint8_t sgid_index, hop_limit, traffic_class, net_type;
    uint32_t flow_label;
} QRoceAV;

typedef struct QRocePD {
    bool valid;
    uint32_t refs;          /* MRs, QPs, AHs, SRQs using it */
} QRocePD;

/*
 * A shared receive queue: commands, doorbell and limit are qroce.c's.  A
 * QP created with QROCE_CREATE_QP_SRQ has no RQ of its own; the engine
 * takes its receives from the SRQ (qroce_qp_recv_wq()).
 */
typedef struct QRoceSRQ {
    bool valid;
    uint32_t srqn, pdn, uar;
    uint32_t limit;         /* SRQ_LIMIT event when fewer WQEs remain; 0 off */
    QRoceWQ wq;             /* pi from the SRQ doorbell, ci = WQEs consumed */
    uint32_t refs;          /* QPs using it */
} QRoceSRQ;

typedef struct QRoceAH {
    bool valid;
    uint32_t pdn;
    QRoceAV av;
} QRoceAH;

typedef struct QRoceGid {
    bool valid;
    uint8_t type;
    uint8_t gid[16];
} QRoceGid;

#include "qroce_rc.h"

enum { QROCE_DIR_TX, QROCE_DIR_RX };
enum {
    QROCE_FAULT_DROP,
    QROCE_FAULT_DUP,
    QROCE_FAULT_REORDER,
    QROCE_FAULT_CORRUPT,
    QROCE_FAULT_NUM
};

typedef struct QRoceQP {
    bool valid;
    uint32_t qpn, pdn, type, state, uar, flags;
    uint32_t scqn, rcqn, srqn;
    QRoceWQ sq, rq;
    uint8_t path_mtu, timeout, retry_cnt, rnr_retry, min_rnr_timer;
    uint8_t max_rd_atomic, max_dest_rd_atomic;
    uint32_t access_flags, qkey, sq_psn, rq_psn, dest_qpn;
    QRoceAV av;
    QRoceRcQP rc;           /* transport state, owned by qroce_rc.c */
} QRoceQP;

struct QRoceState {
    PCIDevice parent_obj;

    MemoryRegion regs;
    MemoryRegion db;
    MemoryRegion msix;

    NICState *nic;
    NICConf conf;

    /* properties */
    uint32_t max_qp, max_cq, max_mr, max_pd, max_ah, max_srq;
    uint32_t max_bt_pages;  /* all buffer tables together, in pages */
    uint32_t min_ack_timeout_us;    /* floor of the local ACK timeout */
    /* congestion control (docs/hw-spec.md §14), settable at run time */
    bool ecn;               /* ECT(0) on RoCE frames sent */
    uint32_t ecn_threshold; /* CP: mark CE above this backlog (frames) */
    uint32_t cnp_interval_us;
    bool dcqcn;
    uint32_t dcqcn_line_mbps, dcqcn_min_mbps, dcqcn_ai_mbps, dcqcn_hai_mbps;
    uint32_t dcqcn_g, dcqcn_alpha_us, dcqcn_timer_us, dcqcn_byte_kb, dcqcn_f;
    /* wire faults for tests (docs/hw-spec.md §15), in parts per million */
    uint64_t fault_seed;
    uint32_t fault_ppm[2][4];   /* [QROCE_DIR_TX/RX][QROCE_FAULT_*] */
    uint64_t fault_rng, fault_rng_seed;
    struct QRoceLoFrame *fault_held[2];     /* held back by "reorder" */
    QEMUTimer *fault_timer;
    QEMUBH *fault_bh;
    uint64_t bt_pages;      /* pages held by all buffer tables now */
    uint32_t bt_work;       /* pages loaded in this command-queue run */
    uint32_t next_qpn, next_mr;     /* allocation cursors: late reuse */

    /* registers */
    uint32_t ctrl, status, fatal_code, eth_mtu;
    uint64_t cmdq_base, cmdq_cq;
    uint32_t cmdq_log2, cmdq_pi, cmdq_ci;
    uint32_t eth_ctrl, eth_irq;
    uint64_t txq_base, rxq_base;
    uint32_t txq_log2, rxq_log2, txq_pi, txq_ci, rxq_pi, rxq_ci;
    uint32_t cnt[QROCE_CNT_NUM];

    QEMUBH *cmd_bh;
    QEMUBH *tx_bh;
    QEMUBH *lo_bh;          /* frames the device sends to itself */
    GQueue lo_q;

    /* objects */
    QRoceEQ eq[QROCE_NUM_EQS];
    QRocePD *pd;
    QRoceCQ *cq;
    QRoceQP *qp;
    QRoceMR *mr;
    QRoceAH *ah;
    QRoceSRQ *srq;
    QRoceGid gid[QROCE_DEF_MAX_GID];

    struct QRoceRc *rc;     /* engine-global state, qroce_rc.c */
};

/* Interface of qroce.c for the engine. */
QRoceQP *qroce_qp_get(QRoceState *s, uint32_t qpn);
QRoceCQ *qroce_cq_get(QRoceState *s, uint32_t cqn);
QRoceAH *qroce_ah_get(QRoceState *s, uint32_t ahn);
QRoceSRQ *qroce_srq_get(QRoceState *s, uint32_t srqn);
/* The WQ @qp receives into: its SRQ's (*srq set) or its own RQ (NULL). */
QRoceWQ *qroce_qp_recv_wq(QRoceState *s, QRoceQP *qp, QRoceSRQ **srq);
/* Call after advancing srq->wq.ci: raises SRQ_LIMIT when it is due. */
void qroce_srq_consumed(QRoceState *s, QRoceSRQ *srq);
int qroce_bt_rw(QRoceState *s, const QRoceBT *bt, uint64_t offset, void *buf,
                uint64_t len, bool to_guest);
int qroce_mr_check(QRoceState *s, uint32_t key, uint32_t pdn, uint64_t va,
                   uint64_t len, uint32_t need_access, QRoceMR **out);
int qroce_mr_rw(QRoceState *s, QRoceMR *mr, uint64_t va, void *buf,
                uint64_t len, bool to_guest);
void qroce_cq_post(QRoceState *s, QRoceCQ *cq, struct qroce_cqe *cqe,
                   bool solicited);
void qroce_async_event(QRoceState *s, uint8_t type, uint32_t handle,
                       uint32_t data);
bool qroce_gid_get(QRoceState *s, unsigned idx, uint8_t gid[16]);
int qroce_gid_find(QRoceState *s, const uint8_t gid[16]);
void qroce_wire_tx(QRoceState *s, const struct iovec *iov, int iovcnt);
const uint8_t *qroce_mac(QRoceState *s);
bool qroce_link_up(QRoceState *s);
void qroce_count(QRoceState *s, enum qroce_counter c);
void qroce_qp_set_error(QRoceState *s, QRoceQP *qp, uint8_t event);
/* Draw a wire fault of @kind in direction @dir (seeded, per million). */
bool qroce_fault(QRoceState *s, int dir, int kind);

#endif
