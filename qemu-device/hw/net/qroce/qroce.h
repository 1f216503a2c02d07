/*
 * qroce: emulated RoCEv2 RDMA NIC -- device state shared by the files of
 * the model.  Each file declares its functions in its own header; a file
 * calls only the files below it in this list:
 *
 *   qroce_pci.c          QOM/PCI shell: realize, reset, properties, MSI-X
 *   qroce_debug.c        run-time knobs, fault injection, x-objects
 *   qroce_migration.c    VMState: what moves, checked as it comes in
 *   qroce_regs.c         register file (BAR0), doorbells (BAR2)
 *   qroce_ctrl.c         control path: the command ring, its handler table
 *   qroce_cmd_*.c        the commands, one file per object family
 *                        (cq, mr, odp, qp, srq, addr); they share qroce_cmd.h
 *   qroce_eth.c          the Ethernet function
 *   qroce_data.c         data path: the scheduler, doorbells, rx demux
 *   qroce_data_rc_comp.c RC transport: completer (ACKs, READ responses)
 *   qroce_data_rc_req.c  RC transport: requester (segmenting, go-back-N)
 *   qroce_data_rc_resp.c RC transport: responder (requests, answers)
 *   qroce_data_uc.c      UC transport
 *   qroce_data_ud.c      UD and GSI transport
 *   qroce_data_common.c  helpers the transports share
 *   qroce_data_cc.c      congestion control: cwnd, ECN/CNP, DCQCN
 *   qroce_objects.c      object and buffer tables (written by the control
 *                        path, read by the data path)
 *   qroce_ring.c         buffer tables' bytes, CQ/EQ posting, interrupts
 *   qroce_odp.c          on-demand paging: ODP tables, QPs' fault state
 *   qroce_dma.c          DMA to guest RAM only (through a vIOMMU)
 *   qroce_port.c         the port: loopback, netdev
 *   qroce_wirefault.c    the wire-fault knobs the port passes frames through
 *   roce_wire.c          the frame codec (no QEMU headers)
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef HW_NET_QROCE_H
#define HW_NET_QROCE_H

#include "hw/pci/pci_device.h"
#include "net/net.h"
#include "qom/object.h"
#include "qemu/queue.h"
#include "qemu/log.h"
#include "qemu/thread.h"
#include "qroce_hw.h"

#define TYPE_QROCE "qroce"
OBJECT_DECLARE_SIMPLE_TYPE(QRoceState, QROCE)

/* A frame kept by the device: loopback queue, reordering. */
/*
 * A guest's mistake, reported once: trace event @trace with the arguments
 * that follow, and the same under -d guest_errors, printed with @fmt (the
 * event's own format) after the event's and the function's names, as
 * hw/nvme's NVME_GUEST_ERR does.  Arguments must have the types @fmt
 * names.
 */
#define QROCE_GUEST_ERR(trace, fmt, ...)                                    \
    do {                                                                    \
        (trace_##trace)(__VA_ARGS__);                                       \
        qemu_log_mask(LOG_GUEST_ERROR, #trace " in %s: " fmt "\n",          \
                      __func__, ## __VA_ARGS__);                            \
    } while (0)

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
    bool dm;                /* QROCE_BT_DM: device memory, no page list */
    uint64_t dm_off, dm_len;    /* dm: the bytes dm[dm_off, +dm_len) */
    /*
     * QROCE_BT_ODP: entries present on demand (qroce_odp.c) in @odp, for
     * @odp_npages pages of 4 KiB; migration moves the kind, not entries.
     */
    bool is_odp;
    uint64_t odp_npages;
    struct QRoceOdp *odp;
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

/*
 * A memory region.  One made by the REG_MR command is always valid.  One
 * made by ALLOC_MR (@frmr, fast registration) is FREE until a REG_MR work
 * request makes it VALID (@frmr_valid): then @bt holds the pages it loaded
 * (bt.pages has room for @max_pages, counted in max-bt-pages) and @key
 * the variant it gave; LOCAL_INV or a SEND with Invalidate frees it.
 */
#define QROCE_MR_GEN_MASK 0xffffff  /* gen: 24 bits, kept in the slot */

typedef struct QRoceMR {
    bool valid;             /* the slot is in use */
    uint32_t idx;           /* its slot: the key's index */
    bool frmr, frmr_valid;
    uint8_t variant;        /* of the last REG_MR command in this slot */
    uint32_t key, pdn, access;
    uint32_t max_pages;     /* frmr */
    uint64_t iova, length;
    uint32_t first_page_offset;
    QRoceBT bt;
    uint32_t mw_refs;       /* MR: windows bound to it now */
    /*
     * MR: moves on at every registration, invalidation and re-registration
     * (and across reuse of the slot), so that a window bound to an earlier
     * one is refused even where the key came back the same.
     */
    uint32_t gen;
    /* a memory window (ALLOC_MW): iova, length, access are its range */
    uint8_t mw_type;        /* 0: an MR; 1 or 2: a window of that type */
    bool mw_bound;
    uint32_t mw_qpn;        /* type 2: the QP it is bound to */
    uint32_t mw_mr_key;     /* the MR it opens, its key at bind time */
    uint64_t mw_base;       /* the MR address of the window's first byte */
    uint32_t mw_mr_gen;     /* ... and its gen at bind time */
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
 * A shared receive queue: commands, doorbell and limit are the control
 * path's (qroce_ctrl.c, qroce_regs.c).  A
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

/*
 * A multicast group: its GID and the UD QPs attached to it (nqp > 0), in
 * room for mcast_max_qp_attach of them.
 */
typedef struct QRoceMcast {
    uint8_t gid[16];
    uint32_t nqp;
    uint32_t *qpn;
} QRoceMcast;

/*
 * The responder's output, in PSN order: READ responses still to stream,
 * atomic ACKs and ACK/NAKs that must not overtake them.  Sized for
 * QROCE_DEF_MAX_RD_ATOM reads/atomics, an ACK after each and spare NAKs.
 */
#define QROCE_RC_RSPQ   40

typedef struct QRoceRcRsp {
    uint8_t kind;           /* RC_RSP_* in qroce_data_rc_resp.c */
    uint8_t syndrome;       /* ACK/NAK: AETH syndrome */
    uint32_t first_psn;     /* PSN of the request */
    uint32_t psn;           /* next PSN to send */
    uint64_t va;            /* READ: remote address of byte 0 */
    uint32_t rkey, len, off;    /* READ: length, bytes already sent */
    uint64_t orig;          /* ATOMIC: value before the operation */
} QRoceRcRsp;

/* Executed atomics, so that a duplicate gets the same answer. */
typedef struct QRoceRcAtomicHist {
    bool valid;
    uint32_t psn;
    uint64_t orig;
} QRoceRcAtomicHist;

/* Per-QP transport state. */
typedef struct QRoceQPXport {
    /* scheduling */
    QTAILQ_ENTRY(QRoceQP) runq_link;
    bool on_runq;           /* queued on the engine's run queue */
    bool mig_runq;          /* migration: on_runq as saved, for post_load */
    bool timer_fired;       /* the retry/RNR timer expired: handle in the BH */
    bool db_fatal;          /* a bad doorbell: to ERR when the engine runs */
    /* requester */
    uint32_t npsn;          /* next PSN to send */
    uint32_t hi_psn;        /* one past the highest PSN ever sent */
    uint32_t una_psn;       /* oldest unacknowledged PSN */
    uint32_t wqe_off;       /* bytes of the current send WQE already sent */
    uint32_t sq_sent;       /* SQ WQEs fully sent (>= sq.ci) */
    /*
     * One past the newest send WQE ever sent, partly or whole: after a
     * rewind sq_sent is below it, but the guest still may not take those
     * WQEs back with a lower producer index (qroce_sq_sent_bound()).
     */
    uint32_t sq_hi;
    uint32_t nsent;         /* entries in the in-flight list */
    uint32_t inflight_n;    /* the in-flight ring's size: the SQ's */
    uint32_t nsent_hi;      /* entries still recorded after a rewind */
    struct QRoceInflight *inflight;   /* ring of sent, unacked WQEs */
    uint32_t inflight_head;
    uint32_t nrd;           /* READs and atomics among them */
    int retry_left, rnr_left;
    bool rnr_wait;          /* resume sending when the timer fires */
    bool resync;            /* rewound: ignore stale responses until progress */
    struct QEMUTimer *timer;
    /*
     * The send WQE being segmented, copied at its first packet (a QP
     * context's copy: the guest may rewrite the ring meanwhile), and the
     * READ/atomic WQE that responses are written to.
     */
    struct QRoceWqe *txw, *rdw;
    uint32_t txw_idx, rdw_idx;
    bool txw_valid, rdw_valid;
    /* loss recovery: congestion window in PSNs (8 fractional bits) */
    uint32_t cwnd, ssthresh;
    uint32_t cut_psn;       /* no window cut by a CNP before una passes it */
    uint32_t walpha;        /* the window's alpha (1/1024), once a window */
    uint32_t wnd_end;       /* the PSN that ends the current window */
    bool wnd_cnp;           /* a CNP in the current window */
    uint32_t backoff;       /* consecutive timeouts: the timeout doubles */
    /* DCQCN reaction point (rates in bit/s, alpha in 1/1024) */
    uint64_t rate_cur, rate_tgt;
    uint32_t alpha;
    uint32_t dc_t, dc_bc;   /* timer and byte-counter stages since a cut */
    uint64_t dc_bytes;
    int64_t dc_alpha_at, dc_timer_at;
    bool dc_cnp_seen;       /* a CNP since the last alpha update */
    int64_t pace_at;        /* earliest time of the next packet */
    int64_t meas_at;        /* start of the current rate measurement */
    uint64_t meas_bytes, meas_rate;
    struct QEMUTimer *pace_timer;
    /* DCQCN notification point */
    int64_t cnp_at;         /* earliest time of the next CNP to send */
    QRoceState *s;
    /* responder */
    uint32_t epsn;          /* expected PSN */
    uint32_t msn;
    uint32_t recv_off;      /* bytes of the current message received */
    bool in_msg;            /* between FIRST and LAST of a message */
    /*
     * The RECV WQE a message is placed in, taken from the RQ or the SRQ
     * at the message's first packet (qroce_dp_recv_take(): its SGEs
     * copied here, the queue advanced) and completed at its last packet,
     * or flushed if the QP fails first.  No other QP sharing the SRQ can
     * take it, and the guest cannot change it under the message.
     */
    bool rwqe_held;
    bool rwqe_srq;          /* taken from the SRQ */
    uint8_t rwqe_nsge;
    uint8_t rwqe_status;    /* QROCE_WC_*: not SUCCESS if it was unreadable */
    uint32_t rwqe_idx;      /* its index in the RQ or SRQ */
    uint32_t rwqe_cqe_idx;  /* what its CQE names: RQ index, SRQ tag */
    uint32_t rwqe_pdn;      /* the PD its SGEs' keys must belong to */
    struct qroce_sge rwqe_sge[QROCE_MAX_SGE];
    bool in_write;          /* ... and that message is an RDMA WRITE */
    uint64_t wr_va;         /* RDMA WRITE target (from the RETH) */
    uint32_t wr_rkey, wr_len;
    bool nak_sent;          /* one sequence NAK per gap */
    QRoceRcRsp rspq[QROCE_RC_RSPQ];
    uint32_t rsp_head, rsp_count;
    QRoceRcAtomicHist ahist[QROCE_DEF_MAX_RD_ATOM];
    uint32_t ahist_next;
    /* x-inject-wqe-err: the send WQE chosen to fail, and its status */
    uint32_t inj_idx;
    uint32_t inj_next;      /* the first send WQE not yet considered */
    uint8_t inj_status;
} QRoceQPXport;

enum { QROCE_DIR_TX, QROCE_DIR_RX };
enum {
    QROCE_FAULT_DROP,
    QROCE_FAULT_DUP,
    QROCE_FAULT_REORDER,
    QROCE_FAULT_CORRUPT,
    QROCE_FAULT_NUM
};

/*
 * A frame received from the wire (@wire) or from the device itself, handed
 * up by the port: to the data path (true if it was RoCE for this device)
 * and, if not, to the Ethernet function.  Installed at realize.
 */
typedef bool QRoceRoceRxFn(QRoceState *s, const uint8_t *frame, size_t len,
                           bool wire);
typedef void QRoceEthRxFn(QRoceState *s, const uint8_t *frame, size_t len);
/* The port takes frames again after it pushed back (qroce_port_busy). */
typedef void QRoceTxReadyFn(QRoceState *s);

/*
 * The objects of one kind by number (QPN, CQN, SRQN, MR index), each
 * allocated at its create command and freed at destroy (qroce_objects.c).
 * Their pointers sit in chunks of QROCE_TBL_CHUNK, made when a number in
 * the chunk is first used; a bitmap says which numbers are in use, and a
 * word per number (@stamp) outlives its objects (an MR key's variant).
 * Objects and chunks are charged to the device's state budget.
 */
#define QROCE_TBL_CHUNK_SHIFT 12
#define QROCE_TBL_CHUNK (1u << QROCE_TBL_CHUNK_SHIFT)

typedef struct QRoceTableChunk {
    void *obj[QROCE_TBL_CHUNK];
    uint32_t stamp[QROCE_TBL_CHUNK];
} QRoceTableChunk;

typedef struct QRoceTable {
    uint32_t max;               /* numbers 0 .. max - 1 */
    uint32_t count;             /* objects now */
    size_t size;                /* bytes of one object */
    QRoceTableChunk **chunk;    /* max / QROCE_TBL_CHUNK, rounded up */
    unsigned long *used;        /* bitmap: numbers with an object */
} QRoceTable;

/*
 * A page fault of one side of a QP (hw-spec §4b): the data path raises
 * it, ODP_QUERY reads it, ODP_RESUME ends it.  Not migrated: after a load
 * the access is tried again and faults again if it must.
 */
typedef struct QRocePF {
    uint8_t state;          /* enum qroce_pf_state */
    bool write;
    uint32_t key, len, token;
    uint64_t va;
} QRocePF;

typedef struct QRoceQP {
    bool valid;
    uint32_t qpn, pdn, type, state, uar, flags;
    uint32_t scqn, rcqn, srqn;
    QRoceWQ sq, rq;
    uint8_t path_mtu, timeout, retry_cnt, rnr_retry, min_rnr_timer;
    uint8_t max_rd_atomic, max_dest_rd_atomic;
    uint32_t access_flags, qkey, sq_psn, rq_psn, dest_qpn;
    QRoceAV av;
    QRoceQPXport xp;           /* transport state, owned by the data path */
    QRocePF pf[2];              /* page faults, by enum qroce_pf_side */
} QRoceQP;

/*
 * What the user sets: the -device properties (qroce_pci.c), some of which
 * (the congestion and fault knobs, x-link-up) qom-set also changes while
 * the guest runs.  Everything else in QRoceState is the device's own.
 */
typedef struct QRoceParams {
    uint32_t max_qp, max_cq, max_mr, max_pd, max_ah, max_srq;
    uint32_t mcast_max_groups, mcast_max_qp_attach;
    uint32_t max_bt_pages;  /* all buffer tables together, in pages */
    uint32_t dm_size;       /* device memory (BAR5), bytes; 0: none */
    uint32_t state_budget_mb;   /* the object tables' memory */
    uint32_t min_ack_timeout_us;    /* floor of the local ACK timeout */
    uint32_t retry_backoff;         /* doublings of the ACK timeout, 0..6 */
    /* congestion control (docs/hw-spec.md §14), settable at run time */
    bool ecn;               /* ECT(0) on RoCE frames sent */
    uint32_t ecn_threshold; /* CP: mark CE above this backlog (frames) */
    uint32_t cnp_interval_us;
    bool dcqcn;
    uint32_t dcqcn_line_mbps, dcqcn_min_mbps, dcqcn_ai_mbps, dcqcn_hai_mbps;
    uint32_t dcqcn_g, dcqcn_alpha_us, dcqcn_timer_us, dcqcn_byte_kb, dcqcn_f;
    uint32_t dcqcn_wnd_g;
    /* wire faults for tests (docs/hw-spec.md §15), parts per million */
    uint64_t fault_seed;
    uint32_t fault_ppm[2][4];   /* [QROCE_DIR_TX/RX][QROCE_FAULT_*] */
    /* fault injection for driver tests (docs/hw-spec.md §17) */
    uint32_t inj_cmd_fail, inj_cmd_opcode, inj_cmd_status, inj_cmd_swallow;
    uint32_t inj_wqe_err, inj_wqe_qpn, inj_wqe_status;
    uint32_t inj_rnr_nak, inj_access_nak, inj_nak_qpn;
    uint32_t inj_stall_qpn, inj_stall_us;
    char *inj_event;        /* x-inject-event: the last event injected */
    bool link_off;          /* x-link-up=off */
} QRoceParams;

/*
 * The BAR0 registers the device keeps (docs/hw-spec.md §2), one 32-bit
 * word each in QRoceState.regs, indexed by offset / 4, as hw/net/e1000e
 * keeps mac[]: a 64-bit register is two words, _LO at its offset and _HI
 * at the next.  The constant and capability registers, PORT_STATUS, the
 * EQ doorbells and the counters are not kept there; MC_HASH_HI is the
 * last register that is.  qroce_regs.c gives them their MMIO semantics.
 */
#define QROCE_NREGS (QROCE_REG_MC_HASH_HI / 4 + 1)

/* Doorbells that found the device's lock busy wait here (qroce_regs.c). */
#define QROCE_DB_BOX 64

typedef struct QRoceDoorbell {
    uint32_t addr;          /* offset in the doorbell BAR */
    uint32_t size;          /* of the write, in bytes */
    uint64_t val;
} QRoceDoorbell;

/*
 * Frames the engine sent or an interrupt it raised from a thread that
 * does not hold the BQL wait in out_q and irq_pending for out_bh, in the
 * main loop; the engine stops filling out_q at this many (port busy).
 */
#define QROCE_OUT_HIGH 64

/*
 * Threads.  Without iothread= the whole device runs in the main loop
 * under the BQL.  With it, the RoCE engine (its bottom halves and timers,
 * qroce_data.c) runs in that IOThread, in parallel with the main loop,
 * which keeps the registers, the command queue, the Ethernet function,
 * received frames, migration and the properties.
 *
 * QRoceState.lock covers all the device's state in both cases.  Every
 * entry point (MMIO, bottom halves, timers, netdev callbacks, migration,
 * properties) takes it with QROCE_LOCKED(), after the BQL where both are
 * held.  Code that runs without the BQL never takes the BQL: the frames
 * it sends and the interrupts it raises wait in out_q and irq_pending
 * for out_bh.  A doorbell never waits for the engine: when the lock is
 * busy, it is left in db_box, which whoever takes the lock first applies
 * (in order, before anything else) through db_drain, the hook the
 * register file installs (qroce_regs_init()): the lock itself knows no
 * doorbell.
 */
struct QRoceState {
    PCIDevice parent_obj;

    QemuRecMutex lock;
    unsigned lock_depth;    /* of the thread holding it */
    QemuSpin db_spin;       /* db_box and db_n */
    uint32_t db_n;
    QRoceDoorbell db_box[QROCE_DB_BOX];
    void (*db_drain)(QRoceState *s);    /* applies db_box; lock held */
    struct IOThread *iothread;  /* iothread=, NULL: the main loop */
    AioContext *eng_ctx;    /* where the engine runs */
    QEMUBH *out_bh;         /* main loop: the interrupts irq_pending holds */
    QEMUBH *wire_bh;        /* main loop: the frames out_q holds (port) */
    GQueue out_q;           /* QRoceLoFrame */
    uint32_t irq_pending;   /* MSI-X vectors, a bit each (atomic) */

    MemoryRegion mmio;
    MemoryRegion db;
    MemoryRegion msix;
    MemoryRegion dm_mr;     /* BAR5: device memory, RAM the guest maps */
    uint8_t *dm;            /* its bytes, params.dm_size of them, or NULL */

    NICState *nic;
    NICConf conf;

    QRoceParams params;     /* the -device properties and qom-set knobs */

    /* wire faults' state (docs/hw-spec.md §15) */
    uint64_t fault_rng, fault_rng_seed;
    struct QRoceLoFrame *fault_held[2];     /* held back by "reorder" */
    QEMUTimer *fault_timer;
    QEMUBH *fault_bh;

    /* buffer tables and object numbers */
    uint64_t bt_pages;      /* pages held by all buffer tables now */
    uint32_t pf_token;      /* the last page fault's token */
    uint32_t bt_work;       /* pages loaded in this command-queue run */
    uint32_t next_qpn, next_mr;     /* allocation cursors: late reuse */

    uint32_t regs[QROCE_NREGS];     /* by offset / 4: qroce_reg() */
    uint32_t cnt[QROCE_CNT_NUM];

    /*
     * The VM is stopped: the device does no work (commands, frames, DMA)
     * until it runs again; what is pending stays pending (§18).
     */
    bool quiesced;
    VMChangeStateEntry *vmse;

    QEMUBH *cmd_bh;
    QEMUBH *tx_bh;
    QEMUBH *lo_bh;          /* frames the device sends to itself */
    GQueue lo_q;
    bool lo_full;           /* lo_q reached its high mark: push back */
    uint32_t wire_queued;   /* frames the netdev holds for later */

    /* objects */
    QRoceEQ eq[QROCE_NUM_EQS];
    QRocePD *pd;
    QRoceTable cqs;
    QRoceTable qps;
    QRoceTable mrs;
    QRoceAH *ah;
    QRoceTable srqs;
    uint64_t state_bytes;       /* charged to state-budget-mb now */
    /* migration: a section is being loaded; one stopped half way */
    bool mig_loading, mig_half;
    QRoceGid gid[QROCE_DEF_MAX_GID];
    QRoceMcast *mcast;      /* mcast_max_groups of them */
    uint32_t *mcast_qpn;    /* their QPN lists, in one allocation */

    struct QRoceEngine *eng;    /* engine-global state, the data path's */

    /* where the port hands received frames up (qroce_port.h) */
    QRoceRoceRxFn *port_roce_rx;
    QRoceEthRxFn *port_eth_rx;
    QRoceTxReadyFn *port_tx_ready;
};

/*
 * One past the newest send WQE of @qp the engine has sent or started to
 * send: an SQ producer index below it is a bad doorbell.
 */
static inline uint32_t qroce_sq_sent_bound(const QRoceQP *qp)
{
    const QRoceQPXport *r = &qp->xp;
    uint32_t sent = r->sq_sent + (r->wqe_off ? 1 : 0);
    uint32_t ahead = r->sq_hi - sent;   /* a stale sq_hi is far behind */

    return ahead && ahead <= (1u << qp->sq.log2) ? r->sq_hi : sent;
}

/*
 * The device's lock was just taken by this thread: the outermost taker
 * first applies the doorbells that found it busy.
 */
static inline QRoceState *qroce_lock_enter(QRoceState *s)
{
    if (!s->lock_depth++ && qatomic_read(&s->db_n)) {
        s->db_drain(s);
    }
    return s;
}

/* Take the device's lock (see "Threads" above). */
static inline QRoceState *qroce_lock(QRoceState *s)
{
    qemu_rec_mutex_lock(&s->lock);
    return qroce_lock_enter(s);
}

static inline void qroce_unlock(QRoceState *s)
{
    s->lock_depth--;
    qemu_rec_mutex_unlock(&s->lock);
}

static inline void qroce_unlock_guard(QRoceState **ps)
{
    qroce_unlock(*ps);
}

/* The device's lock, held to the end of the enclosing block. */
#define QROCE_LOCKED(s) \
    QRoceState *qroce_locked_ G_GNUC_UNUSED \
        __attribute__((cleanup(qroce_unlock_guard))) = qroce_lock(s)

/* Register @reg (a QROCE_REG_* offset) of those QRoceState.regs keeps. */
static inline uint32_t qroce_reg(const QRoceState *s, hwaddr reg)
{
    assert(reg / 4 < QROCE_NREGS);
    return s->regs[reg / 4];
}

/* The 64-bit register whose low half is at @lo. */
static inline uint64_t qroce_reg64(const QRoceState *s, hwaddr lo)
{
    return qroce_reg(s, lo) | (uint64_t)qroce_reg(s, lo + 4) << 32;
}

static inline void qroce_reg_set(QRoceState *s, hwaddr reg, uint32_t val)
{
    assert(reg / 4 < QROCE_NREGS);
    s->regs[reg / 4] = val;
}

/* Bits @set on, bits @clear off in register @reg. */
static inline void qroce_reg_mask(QRoceState *s, hwaddr reg, uint32_t clear,
                                  uint32_t set)
{
    qroce_reg_set(s, reg, (qroce_reg(s, reg) & ~clear) | set);
}

/* STATUS.READY: enabled, and not failed since */
static inline bool qroce_ready(const QRoceState *s)
{
    return qroce_reg(s, QROCE_REG_STATUS) & QROCE_STATUS_READY;
}

static inline void qroce_count(QRoceState *s, enum qroce_counter c)
{
    s->cnt[c]++;
}

static inline const uint8_t *qroce_mac(QRoceState *s)
{
    return s->conf.macaddr.a;
}

static inline bool qroce_link_up(QRoceState *s)
{
    NetClientState *nc = qemu_get_queue(s->nic);

    return nc->peer && !nc->link_down;
}

#endif
