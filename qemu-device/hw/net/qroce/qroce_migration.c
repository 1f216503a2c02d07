/*
 * qroce: migration and snapshots -- the whole device as VMState.
 *
 * Registers, counters, the event queues, PDs, AHs, GIDs and multicast
 * groups are plain fields.  The object tables (CQs, SRQs, MRs and memory
 * windows, QPs: docs/hw-spec.md §18) are sparse: each is sent as the
 * number of objects, then each object's number and fields, then the
 * numbers' stamps (an MR key's variant outlives its object).  A QP takes
 * its transport state along: PSNs, the in-flight ring, the WQEs being
 * sent and read into, the responder's queue and atomic history, the
 * congestion window and DCQCN rates, its timers as deadlines on the
 * virtual clock.
 *
 * Nothing is taken from guest memory again on the destination, and the
 * stream is not trusted: every count is bounded before it sizes an
 * allocation or an array, and every index, number and ring size is
 * checked after an object is loaded; a stream that fails a check is
 * refused.  Frames held in the device (sent to itself, held back by the
 * wire-fault knobs) are not sent: RC's retransmission covers them.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/bitops.h"
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "migration/vmstate.h"
#include "migration/qemu-file-types.h"
#include "hw/pci/msix.h"
#include "net/net.h"
#include "qroce.h"
#include "qroce_objects.h"
#include "qroce_data.h"
#include "qroce_data_state.h"
#include "qroce_migration.h"
#include "qroce_odp.h"
#include "qroce_regs.h"
#include "trace.h"

/* the largest buffer table a stream may describe: 2^22 pages, 16 GiB */
#define QROCE_MIG_BT_PAGES  (1u << 22)

static bool qroce_mig_bt_ok(void *opaque, int version_id)
{
    QRoceBT *bt = opaque;

    return bt->npages <= QROCE_MIG_BT_PAGES && !(bt->phys && bt->npages) &&
           bt->page_shift <= QROCE_BT_MAX_PAGE_SHIFT &&
           (!bt->npages || bt->page_shift >= QROCE_BT_MIN_PAGE_SHIFT);
}

static bool qroce_mig_bt_dm_needed(void *opaque)
{
    return ((QRoceBT *)opaque)->dm;
}

/* an MR on device memory: its range there (checked in qroce_mig_mr_ok) */
static const VMStateDescription vmstate_qroce_bt_dm = {
    .name = "qroce/bt/dm",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = qroce_mig_bt_dm_needed,
    .fields = (const VMStateField[]) {
        VMSTATE_BOOL(dm, QRoceBT),
        VMSTATE_UINT64(dm_off, QRoceBT),
        VMSTATE_UINT64(dm_len, QRoceBT),
        VMSTATE_END_OF_LIST()
    },
};

static bool qroce_mig_bt_odp_needed(void *opaque)
{
    return ((QRoceBT *)opaque)->is_odp;
}

/*
 * An ODP MR: its kind and size move, its entries do not.  The destination
 * starts with every page absent; the first accesses fault and the driver
 * maps the pages again (hw-spec §4b).
 */
static const VMStateDescription vmstate_qroce_bt_odp = {
    .name = "qroce/bt/odp",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = qroce_mig_bt_odp_needed,
    .fields = (const VMStateField[]) {
        VMSTATE_BOOL(is_odp, QRoceBT),
        VMSTATE_UINT64(odp_npages, QRoceBT),
        VMSTATE_END_OF_LIST()
    },
};

static const VMStateDescription vmstate_qroce_bt = {
    .name = "qroce/bt",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(npages, QRoceBT),
        VMSTATE_UINT8(page_shift, QRoceBT),
        VMSTATE_BOOL(phys, QRoceBT),
        VMSTATE_VALIDATE("qroce: buffer table size", qroce_mig_bt_ok),
        VMSTATE_VARRAY_UINT32_ALLOC(pages, QRoceBT, npages, 0,
                                    vmstate_info_uint64, uint64_t),
        VMSTATE_END_OF_LIST()
    },
    .subsections = (const VMStateDescription * const []) {
        &vmstate_qroce_bt_dm,
        &vmstate_qroce_bt_odp,
        NULL
    },
};

static const VMStateDescription vmstate_qroce_wq = {
    .name = "qroce/wq",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_STRUCT(bt, QRoceWQ, 1, vmstate_qroce_bt, QRoceBT),
        VMSTATE_UINT8(log2, QRoceWQ),
        VMSTATE_UINT8(wqe_shift, QRoceWQ),
        VMSTATE_UINT32(pi, QRoceWQ),
        VMSTATE_UINT32(ci, QRoceWQ),
        VMSTATE_END_OF_LIST()
    },
};

static const VMStateDescription vmstate_qroce_eq = {
    .name = "qroce/eq",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_BOOL(valid, QRoceEQ),
        VMSTATE_UINT8(log2, QRoceEQ),
        VMSTATE_STRUCT(bt, QRoceEQ, 1, vmstate_qroce_bt, QRoceBT),
        VMSTATE_UINT32(pi, QRoceEQ),
        VMSTATE_UINT32(ci, QRoceEQ),
        VMSTATE_BOOL(overflowed, QRoceEQ),
        VMSTATE_END_OF_LIST()
    },
};

static const VMStateDescription vmstate_qroce_av = {
    .name = "qroce/av",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT8_ARRAY(dgid, QRoceAV, 16),
        VMSTATE_UINT8_ARRAY(dmac, QRoceAV, 6),
        VMSTATE_UINT8(sgid_index, QRoceAV),
        VMSTATE_UINT8(hop_limit, QRoceAV),
        VMSTATE_UINT8(traffic_class, QRoceAV),
        VMSTATE_UINT8(net_type, QRoceAV),
        VMSTATE_UINT32(flow_label, QRoceAV),
        VMSTATE_END_OF_LIST()
    },
};

static const VMStateDescription vmstate_qroce_pd = {
    .name = "qroce/pd",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_BOOL(valid, QRocePD),
        VMSTATE_UINT32(refs, QRocePD),
        VMSTATE_END_OF_LIST()
    },
};

static const VMStateDescription vmstate_qroce_ah = {
    .name = "qroce/ah",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_BOOL(valid, QRoceAH),
        VMSTATE_UINT32(pdn, QRoceAH),
        VMSTATE_STRUCT(av, QRoceAH, 1, vmstate_qroce_av, QRoceAV),
        VMSTATE_END_OF_LIST()
    },
};

static const VMStateDescription vmstate_qroce_gid = {
    .name = "qroce/gid",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_BOOL(valid, QRoceGid),
        VMSTATE_UINT8(type, QRoceGid),
        VMSTATE_UINT8_ARRAY(gid, QRoceGid, 16),
        VMSTATE_END_OF_LIST()
    },
};

/*
 * A group's QPN list lives in QRoceState.mcast_qpn, mcast-max-qp-attach
 * entries a group, which realize sized; nqp is checked against that
 * before the list is loaded into it.
 */
static uint32_t qroce_mig_attach_max;


static bool qroce_mig_mcast_ok(void *opaque, int version_id)
{
    return ((QRoceMcast *)opaque)->nqp <= qroce_mig_attach_max;
}

static const VMStateDescription vmstate_qroce_mcast = {
    .name = "qroce/mcast",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT8_ARRAY(gid, QRoceMcast, 16),
        VMSTATE_UINT32(nqp, QRoceMcast),
        VMSTATE_VALIDATE("qroce: multicast group size", qroce_mig_mcast_ok),
        {
            .name = "qpn",
            .version_id = 0,
            .num_offset = vmstate_offset_value(QRoceMcast, nqp, uint32_t),
            .info = &vmstate_info_uint32,
            .size = sizeof(uint32_t),
            .flags = VMS_VARRAY_UINT32 | VMS_POINTER,
            .offset = vmstate_offset_pointer(QRoceMcast, qpn, uint32_t),
        },
        VMSTATE_END_OF_LIST()
    },
};

static const VMStateDescription vmstate_qroce_cq = {
    .name = "qroce/cq",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_BOOL(valid, QRoceCQ),
        VMSTATE_UINT32(cqn, QRoceCQ),
        VMSTATE_UINT32(uar, QRoceCQ),
        VMSTATE_UINT32(eqn, QRoceCQ),
        VMSTATE_UINT8(log2, QRoceCQ),
        VMSTATE_STRUCT(bt, QRoceCQ, 1, vmstate_qroce_bt, QRoceBT),
        VMSTATE_UINT32(pi, QRoceCQ),
        VMSTATE_UINT32(ci_seen, QRoceCQ),
        VMSTATE_UINT32(arm, QRoceCQ),
        VMSTATE_BOOL(error, QRoceCQ),
        VMSTATE_UINT32(refs, QRoceCQ),
        VMSTATE_END_OF_LIST()
    },
};

static const VMStateDescription vmstate_qroce_srq = {
    .name = "qroce/srq",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_BOOL(valid, QRoceSRQ),
        VMSTATE_UINT32(srqn, QRoceSRQ),
        VMSTATE_UINT32(pdn, QRoceSRQ),
        VMSTATE_UINT32(uar, QRoceSRQ),
        VMSTATE_UINT32(limit, QRoceSRQ),
        VMSTATE_STRUCT(wq, QRoceSRQ, 1, vmstate_qroce_wq, QRoceWQ),
        VMSTATE_UINT32(refs, QRoceSRQ),
        VMSTATE_END_OF_LIST()
    },
};

static const VMStateDescription vmstate_qroce_mr = {
    .name = "qroce/mr",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_BOOL(valid, QRoceMR),
        VMSTATE_UINT32(idx, QRoceMR),
        VMSTATE_BOOL(frmr, QRoceMR),
        VMSTATE_BOOL(frmr_valid, QRoceMR),
        VMSTATE_UINT8(variant, QRoceMR),
        VMSTATE_UINT32(key, QRoceMR),
        VMSTATE_UINT32(pdn, QRoceMR),
        VMSTATE_UINT32(access, QRoceMR),
        VMSTATE_UINT32(max_pages, QRoceMR),
        VMSTATE_UINT64(iova, QRoceMR),
        VMSTATE_UINT64(length, QRoceMR),
        VMSTATE_UINT32(first_page_offset, QRoceMR),
        VMSTATE_STRUCT(bt, QRoceMR, 1, vmstate_qroce_bt, QRoceBT),
        VMSTATE_UINT32(mw_refs, QRoceMR),
        VMSTATE_UINT32(gen, QRoceMR),
        VMSTATE_UINT8(mw_type, QRoceMR),
        VMSTATE_BOOL(mw_bound, QRoceMR),
        VMSTATE_UINT32(mw_qpn, QRoceMR),
        VMSTATE_UINT32(mw_mr_key, QRoceMR),
        VMSTATE_UINT32(mw_mr_gen, QRoceMR),
        VMSTATE_UINT64(mw_base, QRoceMR),
        VMSTATE_END_OF_LIST()
    },
};

static const VMStateDescription vmstate_qroce_inflight = {
    .name = "qroce/inflight",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(idx, QRoceInflight),
        VMSTATE_UINT32(first_psn, QRoceInflight),
        VMSTATE_UINT32(last_psn, QRoceInflight),
        VMSTATE_UINT32(len, QRoceInflight),
        VMSTATE_UINT32(resp_off, QRoceInflight),
        VMSTATE_UINT8(cqe_opcode, QRoceInflight),
        VMSTATE_UINT8(wqe_opcode, QRoceInflight),
        VMSTATE_UINT8(kind, QRoceInflight),
        VMSTATE_BOOL(signaled, QRoceInflight),
        VMSTATE_BOOL(done, QRoceInflight),
        VMSTATE_END_OF_LIST()
    },
};

/* a WQE copy: the guest's little-endian bytes, as they were read */
static const VMStateDescription vmstate_qroce_wqe = {
    .name = "qroce/wqe",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_BUFFER_UNSAFE(hdr, QRoceWqe, 0, sizeof(struct qroce_send_wqe)),
        VMSTATE_BUFFER_UNSAFE(sge, QRoceWqe, 0,
                              sizeof(struct qroce_sge) * QROCE_MAX_SGE),
        VMSTATE_UINT8_ARRAY(inl, QRoceWqe, QROCE_MAX_INLINE),
        VMSTATE_UINT32(len, QRoceWqe),
        VMSTATE_END_OF_LIST()
    },
};

static const VMStateDescription vmstate_qroce_rsp = {
    .name = "qroce/rc-rsp",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT8(kind, QRoceRcRsp),
        VMSTATE_UINT8(syndrome, QRoceRcRsp),
        VMSTATE_UINT32(first_psn, QRoceRcRsp),
        VMSTATE_UINT32(psn, QRoceRcRsp),
        VMSTATE_UINT64(va, QRoceRcRsp),
        VMSTATE_UINT32(rkey, QRoceRcRsp),
        VMSTATE_UINT32(len, QRoceRcRsp),
        VMSTATE_UINT32(off, QRoceRcRsp),
        VMSTATE_UINT64(orig, QRoceRcRsp),
        VMSTATE_END_OF_LIST()
    },
};

static const VMStateDescription vmstate_qroce_ahist = {
    .name = "qroce/rc-atomic",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_BOOL(valid, QRoceRcAtomicHist),
        VMSTATE_UINT32(psn, QRoceRcAtomicHist),
        VMSTATE_UINT64(orig, QRoceRcAtomicHist),
        VMSTATE_END_OF_LIST()
    },
};

static bool qroce_mig_inflight_ok(void *opaque, int version_id)
{
    QRoceQP *qp = opaque;

    return qp->sq.log2 <= QROCE_WQ_MAX_LOG2 &&
           qp->xp.inflight_n == 1u << qp->sq.log2;
}

/*
 * Whether the QP is on the run queue moves as a wish (xp.mig_runq): the
 * destination's queue links are its own, and a QP is queued there only
 * once the whole stream was accepted (qroce_data_qp_loaded()).
 */
static bool qroce_mig_qp_pre_save(void *opaque, Error **errp)
{
    QRoceQP *qp = opaque;

    qp->xp.mig_runq = qp->xp.on_runq;
    return true;
}

/*
 * A stream may carry a subsection twice: the in-flight ring a first copy
 * allocated goes before the next one allocates its own.
 */
static bool qroce_mig_qp_req_pre_load(void *opaque, Error **errp)
{
    QRoceQP *qp = opaque;

    g_free(qp->xp.inflight);
    qp->xp.inflight = NULL;
    return true;
}

/* The requester's half of a QP's transport state. */
static const VMStateDescription vmstate_qroce_qp_req = {
    .name = "qroce/qp-requester",
    .version_id = 1,
    .minimum_version_id = 1,
    .pre_save_errp = qroce_mig_qp_pre_save,
    .pre_load_errp = qroce_mig_qp_req_pre_load,
    .fields = (const VMStateField[]) {
        VMSTATE_BOOL(xp.mig_runq, QRoceQP),
        VMSTATE_BOOL(xp.timer_fired, QRoceQP),
        VMSTATE_BOOL(xp.db_fatal, QRoceQP),
        VMSTATE_UINT32(xp.npsn, QRoceQP),
        VMSTATE_UINT32(xp.hi_psn, QRoceQP),
        VMSTATE_UINT32(xp.una_psn, QRoceQP),
        VMSTATE_UINT32(xp.wqe_off, QRoceQP),
        VMSTATE_UINT32(xp.sq_sent, QRoceQP),
        VMSTATE_UINT32(xp.sq_hi, QRoceQP),
        VMSTATE_UINT32(xp.nsent, QRoceQP),
        VMSTATE_UINT32(xp.nsent_hi, QRoceQP),
        VMSTATE_UINT32(xp.inflight_n, QRoceQP),
        VMSTATE_VALIDATE("qroce: in-flight ring size", qroce_mig_inflight_ok),
        {
            .name = "xp.inflight",
            .vmsd = &vmstate_qroce_inflight,
            .num_offset = vmstate_offset_value(QRoceQP, xp.inflight_n,
                                               uint32_t),
            .size = sizeof(QRoceInflight),
            .flags = VMS_STRUCT | VMS_VARRAY_UINT32 | VMS_ALLOC | VMS_POINTER,
            .offset = vmstate_offset_pointer(QRoceQP, xp.inflight,
                                             QRoceInflight),
        },
        VMSTATE_UINT32(xp.inflight_head, QRoceQP),
        VMSTATE_UINT32(xp.nrd, QRoceQP),
        VMSTATE_INT32(xp.retry_left, QRoceQP),
        VMSTATE_INT32(xp.rnr_left, QRoceQP),
        VMSTATE_BOOL(xp.rnr_wait, QRoceQP),
        VMSTATE_BOOL(xp.resync, QRoceQP),
        VMSTATE_TIMER_PTR(xp.timer, QRoceQP),
        VMSTATE_STRUCT_POINTER(xp.txw, QRoceQP, vmstate_qroce_wqe, QRoceWqe),
        VMSTATE_STRUCT_POINTER(xp.rdw, QRoceQP, vmstate_qroce_wqe, QRoceWqe),
        VMSTATE_UINT32(xp.txw_idx, QRoceQP),
        VMSTATE_UINT32(xp.rdw_idx, QRoceQP),
        VMSTATE_BOOL(xp.txw_valid, QRoceQP),
        VMSTATE_BOOL(xp.rdw_valid, QRoceQP),
        VMSTATE_UINT32(xp.inj_idx, QRoceQP),
        VMSTATE_UINT32(xp.inj_next, QRoceQP),
        VMSTATE_UINT8(xp.inj_status, QRoceQP),
        VMSTATE_END_OF_LIST()
    },
};

/* Loss recovery and congestion control (docs/hw-spec.md §14). */
static const VMStateDescription vmstate_qroce_qp_cc = {
    .name = "qroce/qp-congestion",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(xp.cwnd, QRoceQP),
        VMSTATE_UINT32(xp.ssthresh, QRoceQP),
        VMSTATE_UINT32(xp.cut_psn, QRoceQP),
        VMSTATE_UINT32(xp.walpha, QRoceQP),
        VMSTATE_UINT32(xp.wnd_end, QRoceQP),
        VMSTATE_BOOL(xp.wnd_cnp, QRoceQP),
        VMSTATE_UINT32(xp.backoff, QRoceQP),
        VMSTATE_UINT64(xp.rate_cur, QRoceQP),
        VMSTATE_UINT64(xp.rate_tgt, QRoceQP),
        VMSTATE_UINT32(xp.alpha, QRoceQP),
        VMSTATE_UINT32(xp.dc_t, QRoceQP),
        VMSTATE_UINT32(xp.dc_bc, QRoceQP),
        VMSTATE_UINT64(xp.dc_bytes, QRoceQP),
        VMSTATE_INT64(xp.dc_alpha_at, QRoceQP),
        VMSTATE_INT64(xp.dc_timer_at, QRoceQP),
        VMSTATE_BOOL(xp.dc_cnp_seen, QRoceQP),
        VMSTATE_INT64(xp.pace_at, QRoceQP),
        VMSTATE_INT64(xp.meas_at, QRoceQP),
        VMSTATE_UINT64(xp.meas_bytes, QRoceQP),
        VMSTATE_UINT64(xp.meas_rate, QRoceQP),
        VMSTATE_TIMER_PTR(xp.pace_timer, QRoceQP),
        VMSTATE_INT64(xp.cnp_at, QRoceQP),
        VMSTATE_END_OF_LIST()
    },
};

/* The responder's half. */
static const VMStateDescription vmstate_qroce_qp_resp = {
    .name = "qroce/qp-responder",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(xp.epsn, QRoceQP),
        VMSTATE_UINT32(xp.msn, QRoceQP),
        VMSTATE_UINT32(xp.recv_off, QRoceQP),
        VMSTATE_BOOL(xp.in_msg, QRoceQP),
        VMSTATE_BOOL(xp.rwqe_held, QRoceQP),
        VMSTATE_BOOL(xp.rwqe_srq, QRoceQP),
        VMSTATE_UINT8(xp.rwqe_nsge, QRoceQP),
        VMSTATE_UINT8(xp.rwqe_status, QRoceQP),
        VMSTATE_UINT32(xp.rwqe_idx, QRoceQP),
        VMSTATE_UINT32(xp.rwqe_cqe_idx, QRoceQP),
        VMSTATE_UINT32(xp.rwqe_pdn, QRoceQP),
        VMSTATE_BUFFER_UNSAFE(xp.rwqe_sge, QRoceQP, 0,
                              sizeof(struct qroce_sge) * QROCE_MAX_SGE),
        VMSTATE_BOOL(xp.in_write, QRoceQP),
        VMSTATE_UINT64(xp.wr_va, QRoceQP),
        VMSTATE_UINT32(xp.wr_rkey, QRoceQP),
        VMSTATE_UINT32(xp.wr_len, QRoceQP),
        VMSTATE_BOOL(xp.nak_sent, QRoceQP),
        VMSTATE_STRUCT_ARRAY(xp.rspq, QRoceQP, QROCE_RC_RSPQ, 1,
                             vmstate_qroce_rsp, QRoceRcRsp),
        VMSTATE_UINT32(xp.rsp_head, QRoceQP),
        VMSTATE_UINT32(xp.rsp_count, QRoceQP),
        VMSTATE_STRUCT_ARRAY(xp.ahist, QRoceQP, QROCE_DEF_MAX_RD_ATOM, 1,
                             vmstate_qroce_ahist, QRoceRcAtomicHist),
        VMSTATE_UINT32(xp.ahist_next, QRoceQP),
        VMSTATE_END_OF_LIST()
    },
};

static const VMStateDescription vmstate_qroce_qp = {
    .name = "qroce/qp",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_BOOL(valid, QRoceQP),
        VMSTATE_UINT32(qpn, QRoceQP),
        VMSTATE_UINT32(pdn, QRoceQP),
        VMSTATE_UINT32(type, QRoceQP),
        VMSTATE_UINT32(state, QRoceQP),
        VMSTATE_UINT32(uar, QRoceQP),
        VMSTATE_UINT32(flags, QRoceQP),
        VMSTATE_UINT32(scqn, QRoceQP),
        VMSTATE_UINT32(rcqn, QRoceQP),
        VMSTATE_UINT32(srqn, QRoceQP),
        VMSTATE_STRUCT(sq, QRoceQP, 1, vmstate_qroce_wq, QRoceWQ),
        VMSTATE_STRUCT(rq, QRoceQP, 1, vmstate_qroce_wq, QRoceWQ),
        VMSTATE_UINT8(path_mtu, QRoceQP),
        VMSTATE_UINT8(timeout, QRoceQP),
        VMSTATE_UINT8(retry_cnt, QRoceQP),
        VMSTATE_UINT8(rnr_retry, QRoceQP),
        VMSTATE_UINT8(min_rnr_timer, QRoceQP),
        VMSTATE_UINT8(max_rd_atomic, QRoceQP),
        VMSTATE_UINT8(max_dest_rd_atomic, QRoceQP),
        VMSTATE_UINT32(access_flags, QRoceQP),
        VMSTATE_UINT32(qkey, QRoceQP),
        VMSTATE_UINT32(sq_psn, QRoceQP),
        VMSTATE_UINT32(rq_psn, QRoceQP),
        VMSTATE_UINT32(dest_qpn, QRoceQP),
        VMSTATE_STRUCT(av, QRoceQP, 1, vmstate_qroce_av, QRoceAV),
        VMSTATE_END_OF_LIST()
    },
    .subsections = (const VMStateDescription * const []) {
        &vmstate_qroce_qp_req,
        &vmstate_qroce_qp_cc,
        &vmstate_qroce_qp_resp,
        NULL
    },
};

/* ------------------------------------------------------------------ */
/* Checks after each object is loaded                                   */
/* ------------------------------------------------------------------ */

static bool qroce_mig_bt_fits(const QRoceBT *bt, uint64_t bytes)
{
    if (bt->phys) {
        return true;
    }
    return bt->page_shift >= QROCE_BT_MIN_PAGE_SHIFT &&
           bt->page_shift <= 30 &&
           ((uint64_t)bt->npages << bt->page_shift) >= bytes;
}

static bool qroce_mig_wq_ok(const QRoceWQ *wq)
{
    return wq->log2 <= QROCE_WQ_MAX_LOG2 && wq->wqe_shift <= 12 &&
           (!wq->bt.npages ||
            qroce_mig_bt_fits(&wq->bt, (uint64_t)1 << (wq->log2 +
                                                       wq->wqe_shift)));
}

/* A WQE copy: what qroce_dp_wqe_copy() relies on, as at its first read */
static bool qroce_mig_wqe_ok(const QRoceWqe *w)
{
    if (w->hdr.flags & QROCE_WQE_INLINE) {
        return w->len <= QROCE_MAX_INLINE;
    }
    return w->hdr.num_sge <= QROCE_MAX_SGE && w->len <= QROCE_DEF_MAX_MSG;
}

/* Each check returns what is wrong with the object, or NULL. */
#define QROCE_MIG_CHECK(cond) do {                                      \
        if (!(cond)) {                                                  \
            return #cond;                                               \
        }                                                               \
    } while (0)

static const char *qroce_mig_cq_ok(QRoceState *s, void *obj, uint32_t n)
{
    QRoceCQ *cq = obj;

    QROCE_MIG_CHECK(cq->valid && cq->cqn == n);
    QROCE_MIG_CHECK(cq->eqn < QROCE_NUM_EQS);
    QROCE_MIG_CHECK(cq->log2 >= 1 && cq->log2 <= QROCE_CQ_MAX_LOG2);
    QROCE_MIG_CHECK(qroce_mig_bt_fits(&cq->bt,
                                      sizeof(struct qroce_cqe) << cq->log2));
    return NULL;
}

static const char *qroce_mig_srq_ok(QRoceState *s, void *obj, uint32_t n)
{
    QRoceSRQ *srq = obj;

    QROCE_MIG_CHECK(srq->valid && srq->srqn == n);
    QROCE_MIG_CHECK(qroce_pd_get(s, srq->pdn));
    QROCE_MIG_CHECK(qroce_mig_wq_ok(&srq->wq));
    return NULL;
}

static const char *qroce_mig_mr_ok(QRoceState *s, void *obj, uint32_t n)
{
    QRoceMR *mr = obj;

    QROCE_MIG_CHECK(mr->valid && mr->idx == n);
    QROCE_MIG_CHECK(mr->mw_type <= 2);
    QROCE_MIG_CHECK(qroce_pd_get(s, mr->pdn));
    /* REG_MR's rule: a PHYS MR (the kernel's DMA MR) is local only */
    QROCE_MIG_CHECK(!mr->bt.phys ||
                    !(mr->access & ~QROCE_ACCESS_LOCAL_WRITE));
    /*
     * Fast registration: room for max_pages entries (ALLOC_MR's bound),
     * of which the registration in force uses bt.npages.
     */
    QROCE_MIG_CHECK(!mr->frmr ||
                    (!mr->mw_type && !mr->bt.phys && mr->max_pages >= 1 &&
                     mr->max_pages <= QROCE_DEF_MAX_FRMR_PAGES &&
                     mr->bt.npages <= mr->max_pages));
    /* on device memory: no page list, and inside this device's memory */
    QROCE_MIG_CHECK(!mr->bt.dm ||
                    (s->dm && !mr->bt.npages && !mr->bt.phys && !mr->frmr &&
                     mr->bt.dm_off <= s->params.dm_size &&
                     mr->bt.dm_len <= s->params.dm_size - mr->bt.dm_off));
    /* ODP: no page list; the table comes back empty (0 pages: length 0) */
    QROCE_MIG_CHECK(!mr->bt.is_odp ||
                    (!mr->bt.npages && !mr->bt.phys && !mr->bt.dm &&
                     !mr->frmr && !mr->mw_type &&
                     mr->bt.odp_npages <= 1ull << (64 - QROCE_ODP_PAGE_SHIFT)));
    if (mr->frmr) {
        /* the stream carries the entries in use; the rest starts zeroed */
        mr->bt.pages = g_renew(uint64_t, mr->bt.pages, mr->max_pages);
        memset(mr->bt.pages + mr->bt.npages, 0,
               (mr->max_pages - mr->bt.npages) * sizeof(uint64_t));
    }
    if (mr->bt.is_odp && !mr->bt.odp) {
        qroce_odp_init(s, &mr->bt, mr->bt.odp_npages);
    }
    return NULL;
}

/* The requester's and responder's state, as the engine relies on it. */
static const char *qroce_mig_xport_ok(const QRoceQP *qp)
{
    const QRoceQPXport *r = &qp->xp;

    QROCE_MIG_CHECK(r->nsent <= r->inflight_n &&
                    r->nsent_hi <= r->inflight_n &&
                    r->inflight_head < r->inflight_n);
    QROCE_MIG_CHECK(r->rsp_head < QROCE_RC_RSPQ &&
                    r->rsp_count <= QROCE_RC_RSPQ);
    QROCE_MIG_CHECK(r->ahist_next < QROCE_DEF_MAX_RD_ATOM);
    QROCE_MIG_CHECK(r->rwqe_nsge <= QROCE_MAX_SGE);
    QROCE_MIG_CHECK(qroce_mig_wqe_ok(r->txw) && qroce_mig_wqe_ok(r->rdw));
    /* congestion control divides by the window; alphas are fractions */
    QROCE_MIG_CHECK(r->cwnd >= CC_CWND_ONE &&
                    r->cwnd <= QROCE_WINDOW * CC_CWND_ONE);
    QROCE_MIG_CHECK(r->ssthresh <= QROCE_WINDOW * CC_CWND_ONE);
    QROCE_MIG_CHECK(r->walpha <= 1024 && r->alpha <= 1024);
    return NULL;
}

static const char *qroce_mig_qp_ok(QRoceState *s, void *obj, uint32_t n)
{
    QRoceQP *qp = obj;

    QROCE_MIG_CHECK(qp->valid && qp->qpn == n);
    QROCE_MIG_CHECK(qp->type <= QROCE_QPT_GSI);
    QROCE_MIG_CHECK(qroce_pd_get(s, qp->pdn));
    QROCE_MIG_CHECK(qp->state <= QROCE_QPS_ERR);
    QROCE_MIG_CHECK(qp->path_mtu <= 5);
    /* MODIFY_QP's bounds */
    QROCE_MIG_CHECK(qp->timeout <= 31 && qp->min_rnr_timer <= 31 &&
                    qp->retry_cnt <= 7 && qp->rnr_retry <= 7);
    QROCE_MIG_CHECK(qp->max_rd_atomic <= QROCE_DEF_MAX_RD_ATOM &&
                    qp->max_dest_rd_atomic <= QROCE_DEF_MAX_RD_ATOM);
    QROCE_MIG_CHECK(qroce_cq_get(s, qp->scqn) && qroce_cq_get(s, qp->rcqn));
    QROCE_MIG_CHECK(!(qp->flags & QROCE_CREATE_QP_SRQ) ||
                    qroce_srq_get(s, qp->srqn));
    QROCE_MIG_CHECK(qroce_mig_wq_ok(&qp->sq) && qroce_mig_wq_ok(&qp->rq));
    return qroce_mig_xport_ok(qp);
}

/*
 * What each object holds of the device's translation memory (max-bt-pages)
 * and of its state budget beyond its table slot (state-budget-mb), so that
 * an accepted object is charged as if the guest had made it here; and how
 * a refused one is let go, uncharged.
 */
static uint64_t qroce_mig_bt_held(const QRoceBT *bt)
{
    return bt->pages ? bt->npages : 0;
}

static uint64_t qroce_mig_cq_pages(void *obj)
{
    return qroce_mig_bt_held(&((QRoceCQ *)obj)->bt);
}

static uint64_t qroce_mig_srq_pages(void *obj)
{
    return qroce_mig_bt_held(&((QRoceSRQ *)obj)->wq.bt);
}

static uint64_t qroce_mig_mr_pages(void *obj)
{
    QRoceMR *mr = obj;

    return mr->frmr ? mr->max_pages : qroce_mig_bt_held(&mr->bt);
}

static uint64_t qroce_mig_qp_pages(void *obj)
{
    QRoceQP *qp = obj;

    return qroce_mig_bt_held(&qp->sq.bt) + qroce_mig_bt_held(&qp->rq.bt);
}

static void qroce_mig_cq_drop(QRoceState *s, void *obj)
{
    g_free(((QRoceCQ *)obj)->bt.pages);
}

static void qroce_mig_srq_drop(QRoceState *s, void *obj)
{
    g_free(((QRoceSRQ *)obj)->wq.bt.pages);
}

static void qroce_mig_mr_drop(QRoceState *s, void *obj)
{
    QRoceMR *mr = obj;

    qroce_odp_clear(s, &mr->bt, true);
    g_free(mr->bt.pages);
}

static void qroce_mig_qp_drop(QRoceState *s, void *obj)
{
    QRoceQP *qp = obj;

    qroce_data_qp_destroy(s, qp);
    g_free(qp->sq.bt.pages);
    g_free(qp->rq.bt.pages);
}

/* ------------------------------------------------------------------ */
/* The object tables                                                    */
/* ------------------------------------------------------------------ */

typedef struct QRoceMigTable {
    size_t offset;                      /* of the QRoceTable in QRoceState */
    const VMStateDescription *vmsd;
    const char *(*ok)(QRoceState *s, void *obj, uint32_t n);
    uint64_t (*pages)(void *obj);       /* translation pages it holds */
    void (*drop)(QRoceState *s, void *obj);
    bool qp;
} QRoceMigTable;

static const QRoceMigTable qroce_mig_cqs = {
    offsetof(QRoceState, cqs), &vmstate_qroce_cq, qroce_mig_cq_ok,
    qroce_mig_cq_pages, qroce_mig_cq_drop, false,
};
static const QRoceMigTable qroce_mig_srqs = {
    offsetof(QRoceState, srqs), &vmstate_qroce_srq, qroce_mig_srq_ok,
    qroce_mig_srq_pages, qroce_mig_srq_drop, false,
};
static const QRoceMigTable qroce_mig_mrs = {
    offsetof(QRoceState, mrs), &vmstate_qroce_mr, qroce_mig_mr_ok,
    qroce_mig_mr_pages, qroce_mig_mr_drop, false,
};
static const QRoceMigTable qroce_mig_qps = {
    offsetof(QRoceState, qps), &vmstate_qroce_qp, qroce_mig_qp_ok,
    qroce_mig_qp_pages, qroce_mig_qp_drop, true,
};

static bool qroce_mig_tbl_save(QEMUFile *f, void *pv, size_t size,
                               const VMStateField *field, JSONWriter *vmdesc,
                               Error **errp)
{
    const QRoceMigTable *m = (const void *)field->vmsd;
    QRoceTable *t = pv;
    uint32_t n, c, i, nstamp = 0;

    qemu_put_be32(f, t->count);
    QROCE_TBL_FOREACH(t, n) {
        qemu_put_be32(f, n);
        if (!vmstate_save_vmsd(f, m->vmsd, qroce_tbl_get(t, n), NULL, errp)) {
            return false;
        }
    }
    for (c = 0; c < DIV_ROUND_UP(t->max, QROCE_TBL_CHUNK); c++) {
        for (i = 0; t->chunk[c] && i < QROCE_TBL_CHUNK; i++) {
            nstamp += t->chunk[c]->stamp[i] != 0;
        }
    }
    qemu_put_be32(f, nstamp);
    for (c = 0; c < DIV_ROUND_UP(t->max, QROCE_TBL_CHUNK); c++) {
        for (i = 0; t->chunk[c] && i < QROCE_TBL_CHUNK; i++) {
            if (t->chunk[c]->stamp[i]) {
                qemu_put_be32(f, c * QROCE_TBL_CHUNK + i);
                qemu_put_be32(f, t->chunk[c]->stamp[i]);
            }
        }
    }
    return true;
}

/*
 * An accepted object is charged what it holds, as the command that made
 * it was; over this destination's max-bt-pages or state-budget-mb the
 * stream is refused.
 */
static const char *qroce_mig_charge(QRoceState *s, const QRoceMigTable *m,
                                    void *obj)
{
    uint64_t pages = m->pages(obj);

    if (pages > s->params.max_bt_pages ||
        s->bt_pages > s->params.max_bt_pages - pages) {
        return "max-bt-pages";
    }
    if (m->qp && !qroce_state_take(s, qroce_data_qp_bytes(obj))) {
        return "state-budget-mb";
    }
    s->bt_pages += pages;
    return NULL;
}

static bool qroce_mig_tbl_load_one(QEMUFile *f, QRoceState *s,
                                   const QRoceMigTable *m, QRoceTable *t,
                                   Error **errp)
{
    uint32_t n = qemu_get_be32(f);
    const char *why = NULL;
    void *obj;
    bool ok;

    if (n >= t->max || qroce_tbl_get(t, n)) {
        error_setg(errp, "qroce: object number %u refused", n);
        return false;
    }
    obj = qroce_tbl_alloc(s, t, n);
    if (!obj) {
        error_setg(errp, "qroce: object %u exceeds state-budget-mb", n);
        return false;
    }
    if (m->qp) {
        qroce_data_qp_load_prepare(s, obj);
    }
    ok = vmstate_load_vmsd(f, m->vmsd, obj, m->vmsd->version_id, errp);
    if (ok) {
        why = m->ok(s, obj, n);
        why = why ? why : qroce_mig_charge(s, m, obj);
    }
    if (!ok || why) {
        /* not half there: what it allocated goes, uncharged */
        m->drop(s, obj);
        qroce_tbl_free(s, t, n);
    }
    if (why) {
        error_setg(errp, "qroce: %s %u refused: %s", m->vmsd->name, n, why);
        return false;
    }
    return ok;
}

static bool qroce_mig_tbl_load(QEMUFile *f, QRoceState *s,
                               const QRoceMigTable *m, QRoceTable *t,
                               Error **errp)
{
    uint32_t count, i, n, *stamp;
    int ret;

    count = qemu_get_be32(f);
    if (count > t->max || t->count) {
        error_setg(errp, "qroce: %u objects refused", count);
        return false;
    }
    for (i = 0; i < count; i++) {
        if (!qroce_mig_tbl_load_one(f, s, m, t, errp)) {
            return false;
        }
    }
    count = qemu_get_be32(f);
    if (count > t->max) {
        error_setg(errp, "qroce: %u stamps refused", count);
        return false;
    }
    for (i = 0; i < count; i++) {
        n = qemu_get_be32(f);
        if (n >= t->max) {
            error_setg(errp, "qroce: stamp of number %u refused", n);
            return false;
        }
        stamp = qroce_tbl_stamp_make(s, t, n);
        if (!stamp) {
            error_setg(errp, "qroce: stamp of number %u exceeds "
                       "state-budget-mb", n);
            return false;
        }
        *stamp = qemu_get_be32(f);
    }
    ret = qemu_file_get_error(f);
    if (ret) {
        error_setg_errno(errp, -ret, "qroce: %s table cut short",
                         m->vmsd->name);
        return false;
    }
    return true;
}

/*
 * A refused stream leaves no object behind: everything loaded so far is
 * freed as a reset frees it (each accepted object was charged, and what
 * it names exists), and the device is as a reset leaves it: its
 * registers too, which the stream set before any table (a ring's log2
 * shifts).
 */
static void qroce_mig_discard(QRoceState *s)
{
    qroce_reset_state(s);
    trace_qroce_mig_refused(s->bt_pages, s->state_bytes);
}

/*
 * A section that stops half way (cut short, a check that fails outside
 * the tables, another dm-size) leaves what it loaded so far in the
 * device, unchecked: VMState tells the device nothing, and post_load
 * does not run.  loadvm leaves the VM stopped, but "cont" runs it: the
 * device, told first (qroce_vm_state_change()), is reset then instead
 * (QRoceState.mig_half, set by pre_load, cleared by post_load).
 */
void qroce_mig_resume(QRoceState *s)
{
    if (s->mig_half) {
        s->mig_half = false;
        error_report("qroce: migration: the device's section did not load "
                     "whole: the device is reset");
        qroce_mig_discard(s);
    }
}

static bool qroce_mig_tbl_load_field(QEMUFile *f, void *pv, size_t size,
                                     const VMStateField *field, Error **errp)
{
    const QRoceMigTable *m = (const void *)field->vmsd;
    QRoceState *s = (QRoceState *)((char *)pv - m->offset);
    QROCE_LOCKED(s);
    bool ok = qroce_mig_tbl_load(f, s, m, pv, errp);

    if (!ok) {
        qroce_mig_discard(s);
    }
    return ok;
}

static const VMStateInfo qroce_mig_tbl_info = {
    .name = "qroce-table",
    .load = qroce_mig_tbl_load_field,
    .save = qroce_mig_tbl_save,
};

/* A table field: its QRoceMigTable rides in the field's vmsd pointer. */
#define QROCE_VMSTATE_TABLE(_f, _m) {                                   \
    .name = #_f,                                                        \
    .info = &qroce_mig_tbl_info,                                        \
    .vmsd = (const VMStateDescription *)&(_m),                          \
    .size = sizeof(QRoceTable),                                         \
    .flags = VMS_SINGLE,                                                \
    .offset = offsetof(QRoceState, _f),                                 \
}

/* ------------------------------------------------------------------ */
/* The device                                                           */
/* ------------------------------------------------------------------ */

static bool qroce_pre_load(void *opaque, Error **errp)
{
    QRoceState *s = opaque;

    qroce_mig_attach_max = s->params.mcast_max_qp_attach;
    s->mig_loading = s->mig_half = true;
    return true;
}

/* The checks run on save too: this device's bound, and no charging. */
static bool qroce_pre_save(void *opaque, Error **errp)
{
    QRoceState *s = opaque;

    qroce_mig_attach_max = s->params.mcast_max_qp_attach;
    s->mig_loading = false;
    return true;
}

static bool qroce_mig_regs_ok(QRoceState *s)
{
    return qroce_reg(s, QROCE_REG_CMDQ_LOG2) <= QROCE_CMDQ_MAX_LOG2 &&
           qroce_reg(s, QROCE_REG_TXQ_LOG2) <= QROCE_ETH_RING_MAX_LOG2 &&
           qroce_reg(s, QROCE_REG_RXQ_LOG2) <= QROCE_ETH_RING_MAX_LOG2;
}

/*
 * The event queues, loaded before the tables: sizes in range, rings that
 * fit, charged their pages.
 */
static bool qroce_mig_eqs_ok(void *opaque, int version_id)
{
    QRoceState *s = opaque;
    uint64_t pages = 0;
    bool ok = true;
    int i;

    if (!s->mig_loading) {
        return true;            /* saving: they were charged when made */
    }
    for (i = 0; i < QROCE_NUM_EQS; i++) {
        QRoceEQ *eq = &s->eq[i];

        if (eq->log2 > QROCE_EQ_MAX_LOG2 ||
            (!eq->valid && (eq->bt.npages || eq->bt.pages)) ||
            (eq->valid && !qroce_mig_bt_fits(&eq->bt, sizeof(struct qroce_eqe)
                                             << eq->log2))) {
            error_report("qroce: migration: EQ %d refused: log2 or its ring",
                         i);
            ok = false;
        }
        pages += qroce_mig_bt_held(&eq->bt);
    }
    if (ok && pages > s->params.max_bt_pages - MIN(s->bt_pages,
                                                   s->params.max_bt_pages)) {
        error_report("qroce: migration: EQs refused: max-bt-pages");
        ok = false;
    }
    if (!ok) {
        /* refused: their rings go, uncharged */
        for (i = 0; i < QROCE_NUM_EQS; i++) {
            g_free(s->eq[i].bt.pages);
        }
        memset(s->eq, 0, sizeof(s->eq));
        return false;
    }
    s->bt_pages += pages;
    return true;
}

/* Address handles name a PD of this stream and a GID slot of the device. */
static const char *qroce_mig_ahs_ok(QRoceState *s)
{
    uint32_t i;

    for (i = 0; i < s->params.max_ah; i++) {
        QRoceAH *ah = &s->ah[i];

        if (ah->valid && !qroce_pd_get(s, ah->pdn)) {
            return "AH pdn";
        }
        if (ah->valid && ah->av.sgid_index >= QROCE_DEF_MAX_GID) {
            return "AH sgid_index";
        }
    }
    return NULL;
}

/*
 * A window bound to the registration of an MR that is still in force
 * opens that MR's memory only as BIND_MW allowed: not a PHYS MR, and a
 * range inside the MR's.
 */
static const char *qroce_mig_windows_ok(QRoceState *s)
{
    uint32_t i;

    QROCE_TBL_FOREACH(&s->mrs, i) {
        QRoceMR *mw = qroce_tbl_get(&s->mrs, i), *mr;

        if (!mw->mw_type || !mw->mw_bound) {
            continue;
        }
        mr = qroce_tbl_get(&s->mrs, mw->mw_mr_key >> QROCE_MR_KEY_INDEX_SHIFT);
        if (!mr || mr->mw_type || mr->gen != mw->mw_mr_gen) {
            continue;           /* unusable: every access is refused */
        }
        if (mr->bt.phys || mw->mw_base < mr->iova ||
            mw->length > mr->length ||
            mw->mw_base - mr->iova > mr->length - mw->length) {
            return "a window's MR or range";
        }
    }
    return NULL;
}

/*
 * Derive, do not trust: the reference counts are what the objects say,
 * not what the stream says.  A PD counts its MRs and windows, QPs, AHs
 * and SRQs; a CQ its QPs' send and receive sides; an SRQ its QPs; an MR
 * the windows bound to its current generation.
 */
static void qroce_mig_recount(QRoceState *s)
{
    uint32_t i;

    for (i = 0; i < s->params.max_pd; i++) {
        s->pd[i].refs = 0;
    }
    for (i = 0; i < s->params.max_ah; i++) {
        if (s->ah[i].valid) {
            s->pd[s->ah[i].pdn].refs++;
        }
    }
    QROCE_TBL_FOREACH(&s->cqs, i) {
        qroce_cq_get(s, i)->refs = 0;
    }
    QROCE_TBL_FOREACH(&s->srqs, i) {
        QRoceSRQ *srq = qroce_srq_get(s, i);

        srq->refs = 0;
        s->pd[srq->pdn].refs++;
    }
    QROCE_TBL_FOREACH(&s->mrs, i) {
        QRoceMR *mr = qroce_tbl_get(&s->mrs, i);

        mr->mw_refs = 0;
        s->pd[mr->pdn].refs++;
    }
    QROCE_TBL_FOREACH(&s->mrs, i) {
        QRoceMR *mw = qroce_tbl_get(&s->mrs, i);
        QRoceMR *mr = mw->mw_type && mw->mw_bound ?
                      qroce_tbl_get(&s->mrs,
                                    mw->mw_mr_key >> QROCE_MR_KEY_INDEX_SHIFT) :
                      NULL;

        if (mr && !mr->mw_type && mr->gen == mw->mw_mr_gen) {
            mr->mw_refs++;
        }
    }
    QROCE_TBL_FOREACH(&s->qps, i) {
        QRoceQP *qp = qroce_tbl_get(&s->qps, i);

        s->pd[qp->pdn].refs++;
        qroce_cq_get(s, qp->scqn)->refs++;
        qroce_cq_get(s, qp->rcqn)->refs++;
        if (qp->flags & QROCE_CREATE_QP_SRQ) {
            qroce_srq_get(s, qp->srqn)->refs++;
        }
    }
}

static bool qroce_post_load(void *opaque, int version_id, Error **errp)
{
    QRoceState *s = opaque;
    QROCE_LOCKED(s);
    const char *why;
    uint32_t n;

    s->mig_loading = s->mig_half = false;
    why = !qroce_mig_regs_ok(s) ? "a ring register" : qroce_mig_ahs_ok(s);
    why = why ? why : qroce_mig_windows_ok(s);
    if (why) {
        error_setg(errp, "qroce: refused: %s out of range", why);
        qroce_mig_discard(s);
        return false;
    }
    qroce_mig_recount(s);
    QROCE_TBL_FOREACH(&s->qps, n) {
        qroce_data_qp_loaded(s, qroce_tbl_get(&s->qps, n));
    }
    qemu_get_queue(s->nic)->link_down = s->params.link_off;
    qemu_bh_schedule(s->cmd_bh);
    qemu_bh_schedule(s->tx_bh);
    qemu_flush_queued_packets(qemu_get_queue(s->nic));
    trace_qroce_migrated(s->qps.count, s->cqs.count, s->mrs.count,
                         s->srqs.count);
    return true;
}

/* What qom-set may have changed since the -device line was read. */
static const VMStateDescription vmstate_qroce_knobs = {
    .name = "qroce/knobs",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_BOOL(params.ecn, QRoceState),
        VMSTATE_UINT32(params.ecn_threshold, QRoceState),
        VMSTATE_UINT32(params.cnp_interval_us, QRoceState),
        VMSTATE_BOOL(params.dcqcn, QRoceState),
        VMSTATE_UINT32(params.dcqcn_line_mbps, QRoceState),
        VMSTATE_UINT32(params.dcqcn_min_mbps, QRoceState),
        VMSTATE_UINT32(params.dcqcn_ai_mbps, QRoceState),
        VMSTATE_UINT32(params.dcqcn_hai_mbps, QRoceState),
        VMSTATE_UINT32(params.dcqcn_g, QRoceState),
        VMSTATE_UINT32(params.dcqcn_alpha_us, QRoceState),
        VMSTATE_UINT32(params.dcqcn_timer_us, QRoceState),
        VMSTATE_UINT32(params.dcqcn_byte_kb, QRoceState),
        VMSTATE_UINT32(params.dcqcn_f, QRoceState),
        VMSTATE_UINT32(params.dcqcn_wnd_g, QRoceState),
        VMSTATE_UINT64(params.fault_seed, QRoceState),
        VMSTATE_UINT32_2DARRAY(params.fault_ppm, QRoceState, 2, 4),
        VMSTATE_UINT64(fault_rng, QRoceState),
        VMSTATE_UINT64(fault_rng_seed, QRoceState),
        VMSTATE_UINT32(params.inj_cmd_fail, QRoceState),
        VMSTATE_UINT32(params.inj_cmd_opcode, QRoceState),
        VMSTATE_UINT32(params.inj_cmd_status, QRoceState),
        VMSTATE_UINT32(params.inj_cmd_swallow, QRoceState),
        VMSTATE_UINT32(params.inj_wqe_err, QRoceState),
        VMSTATE_UINT32(params.inj_wqe_qpn, QRoceState),
        VMSTATE_UINT32(params.inj_wqe_status, QRoceState),
        VMSTATE_UINT32(params.inj_rnr_nak, QRoceState),
        VMSTATE_UINT32(params.inj_access_nak, QRoceState),
        VMSTATE_UINT32(params.inj_nak_qpn, QRoceState),
        VMSTATE_BOOL(params.link_off, QRoceState),
        VMSTATE_UINT32(params.retry_backoff, QRoceState),
        VMSTATE_END_OF_LIST()
    },
};

/*
 * An object limit: the stream's value must be this device's, or the
 * stream is refused with the property's name (a be32, as
 * VMSTATE_UINT32_EQUAL puts it).
 */
static bool qroce_mig_limit_load(QEMUFile *f, void *pv, size_t size,
                                 const VMStateField *field, Error **errp)
{
    uint32_t *v = pv;
    uint32_t v2 = qemu_get_be32(f);

    if (*v != v2) {
        error_setg(errp, "qroce: %s is %u here, %u in the stream: the "
                   "destination's qroce properties (max-*, mcast-max-*, "
                   "max-bt-pages, state-budget-mb, dm-size) must be the "
                   "source's", field->name, *v, v2);
        return false;
    }
    return true;
}

static bool qroce_mig_limit_save(QEMUFile *f, void *pv, size_t size,
                                 const VMStateField *field, JSONWriter *vmdesc,
                                 Error **errp)
{
    qemu_put_be32(f, *(uint32_t *)pv);
    return true;
}

static const VMStateInfo qroce_mig_limit_info = {
    .name = "qroce-limit",
    .load = qroce_mig_limit_load,
    .save = qroce_mig_limit_save,
};

#define QROCE_VMSTATE_LIMIT(_f) \
    VMSTATE_SINGLE(params._f, QRoceState, 0, qroce_mig_limit_info, uint32_t)

static bool qroce_mig_dm_needed(void *opaque)
{
    return ((QRoceState *)opaque)->params.dm_size != 0;
}

/*
 * Device memory's bytes move as the RAM block "qroce-dm"; this says its
 * size, so that a destination with another dm-size refuses the stream
 * with the message the other properties give.
 */
static const VMStateDescription vmstate_qroce_dm = {
    .name = "qroce/dm",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = qroce_mig_dm_needed,
    .fields = (const VMStateField[]) {
        QROCE_VMSTATE_LIMIT(dm_size),
        VMSTATE_END_OF_LIST()
    },
};

/*
 * Version 2 (2026-11-27): the FAST_REGS counter, the retry-backoff knob
 * and a window's base (mw_base); a version 1 stream is refused.
 */
const VMStateDescription vmstate_qroce = {
    .name = "qroce",
    .version_id = 2,
    .minimum_version_id = 2,
    .pre_load_errp = qroce_pre_load,
    .post_load_errp = qroce_post_load,
    .pre_save_errp = qroce_pre_save,
    .fields = (const VMStateField[]) {
        VMSTATE_PCI_DEVICE(parent_obj, QRoceState),
        VMSTATE_MSIX(parent_obj, QRoceState),
        QROCE_VMSTATE_LIMIT(max_qp),
        QROCE_VMSTATE_LIMIT(max_cq),
        QROCE_VMSTATE_LIMIT(max_mr),
        QROCE_VMSTATE_LIMIT(max_pd),
        QROCE_VMSTATE_LIMIT(max_ah),
        QROCE_VMSTATE_LIMIT(max_srq),
        QROCE_VMSTATE_LIMIT(mcast_max_groups),
        QROCE_VMSTATE_LIMIT(mcast_max_qp_attach),
        QROCE_VMSTATE_LIMIT(max_bt_pages),
        QROCE_VMSTATE_LIMIT(state_budget_mb),
        VMSTATE_UINT32_ARRAY(regs, QRoceState, QROCE_NREGS),
        VMSTATE_UINT32_ARRAY(cnt, QRoceState, QROCE_CNT_NUM),
        VMSTATE_UINT32(next_qpn, QRoceState),
        VMSTATE_UINT32(next_mr, QRoceState),
        VMSTATE_STRUCT_ARRAY(eq, QRoceState, QROCE_NUM_EQS, 1,
                             vmstate_qroce_eq, QRoceEQ),
        VMSTATE_VALIDATE("qroce: event queues", qroce_mig_eqs_ok),
        VMSTATE_STRUCT_VARRAY_POINTER_UINT32(pd, QRoceState, params.max_pd,
                                             vmstate_qroce_pd, QRocePD),
        VMSTATE_STRUCT_VARRAY_POINTER_UINT32(ah, QRoceState, params.max_ah,
                                             vmstate_qroce_ah, QRoceAH),
        VMSTATE_STRUCT_ARRAY(gid, QRoceState, QROCE_DEF_MAX_GID, 1,
                             vmstate_qroce_gid, QRoceGid),
        VMSTATE_STRUCT_VARRAY_POINTER_UINT32(mcast, QRoceState,
                                             params.mcast_max_groups,
                                             vmstate_qroce_mcast, QRoceMcast),
        QROCE_VMSTATE_TABLE(cqs, qroce_mig_cqs),
        QROCE_VMSTATE_TABLE(srqs, qroce_mig_srqs),
        QROCE_VMSTATE_TABLE(mrs, qroce_mig_mrs),
        QROCE_VMSTATE_TABLE(qps, qroce_mig_qps),
        /*
         * Once bt_pages and state_bytes; each object loaded is charged
         * here as it is accepted, so the stream's figures are skipped.
         */
        VMSTATE_UNUSED(2 * sizeof(uint64_t)),
        VMSTATE_END_OF_LIST()
    },
    .subsections = (const VMStateDescription * const []) {
        &vmstate_qroce_knobs,
        &vmstate_qroce_dm,
        NULL
    },
};
