/*
 * qroce-migstream: libFuzzer target for the device's migration stream,
 * its VMState section "qroce" (docs/hw-spec.md §18).
 *
 * Each input is a device section as a stream carries it.  The device is
 * made new first: CTRL.RESET (it holds no object), then the section it
 * had at start is loaded (the knobs, counters and registers a stream set
 * go back; the PCI core's version_id too).  The VM is stopped as loadvm
 * stops it, the input is loaded with the device's own VMStateDescription
 * (vmstate_load_vmsd() on a QEMUFile over a memory buffer) and the VM
 * runs again.  A refused load is a normal outcome (the device is reset
 * when the VM runs: qroce_mig_resume()); whatever the stream said, the
 * device is then driven as a guest drives it after a move:
 *   - the BARs, the command register and the INTx levels are put back
 *     (the PCI bus's section, which goes with the levels, is not in the
 *     input), and the guest memory of the set-up below is written again
 *     (receive WQEs and requests, through the key of the loaded MR at
 *     A_MR);
 *   - doorbells: each loaded QP's SQ and RQ one WQE on, each CQ armed
 *     and its consumer index written, each SRQ one WQE on;
 *   - frames from the wire: to each QP a SEND at the PSN it expects, to
 *     each RC QP an ACK of all it sent and a CNP; what the device sends
 *     goes (qroce_fuzz_flush());
 *   - the virtual clock steps 3 x 10 ms (retransmission, RNR, pacing);
 *   - the command queue moves to this target's ring (CTRL.ENABLE cleared
 *     and set again; commands go on from the loaded CMDQ_CI) and destroy
 *     commands run: first in an order that references must refuse (CQs,
 *     SRQs, MRs, PDs while QPs hold them), then every handle of each
 *     kind in an order that frees (QPs, windows, MRs, SRQs, CQs, AHs,
 *     PDs, EQs);
 *   - CTRL.RESET and the command queue again: the device must be READY
 *     and hold no object.
 * None of it may crash, assert, hang or trip ASAN/UBSAN.  The device has
 * small object limits (the -device line below) so that a section with
 * objects of every kind is 6-27 KiB; make fuzz runs this target with
 * -max_len=65536.
 *
 * Seeds: real saved sections, one per set-up variant, made through the
 * command queue as a driver makes them (set_up_*() below):
 *   full     PD, EQs 0 and 1, two CQs, GIDs 10.0.0.1 and fd00::1, an MR
 *            with every right, an AH, an SRQ, QPs in RTS (RC, UC, UD,
 *            GSI, RC on the SRQ) with receives posted, a multicast group,
 *            an ODP MR with 4 of its pages mapped, a fast-registration MR
 *            registered by a REG_MR work request, windows of type 1 and 2
 *            (zero-based) bound, an MR on device memory, the Ethernet RX
 *            ring; in flight: a SEND, a WRITE, a READ and two atomics on
 *            RC, a SEND on UC and on UD (the peer never answers)
 *   retry    full, then 3 x 100 ms of virtual time: RC retransmitted
 *   mrs      the memory kinds alone, on one RC QP, nothing in flight
 *   states   full, then UC and GSI in ERR, UD in RESET, RC on SRQ in SQD
 *   eth      no object: GIDs and the Ethernet RX ring
 * Each seed is loaded back once before it is written (it must be
 * accepted).  After a change to the stream (qroce_migration.c), make them
 * again:
 *   QROCE_MIGSTREAM_SEED=SEED-DIRECTORY \
 *       ./qemu-fuzz-x86_64 --fuzz-target=qroce-migstream -runs=1
 *
 * A crashing input replays with
 *   ./qemu-fuzz-x86_64 --fuzz-target=qroce-migstream FILE
 * The messages of a refused load (the device's and VMState's, one input
 * after another) are not printed; QROCE_MIGSTREAM_LOG=1 prints them, the
 * objects loaded (x-objects) and the frames delivered;
 * QROCE_MIGSTREAM_ARGS adds to QEMU's command line (e.g. -trace qroce_*).
 * Keep the reproducers of the bugs it finds (repro-*) beside the seeds,
 * so that each later run loads them again.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "qapi/error.h"
#include "qobject/qdict.h"
#include "qobject/qlist.h"
#include "qobject/qjson.h"
#include "hw/core/qdev.h"
#include "hw/pci/pci_device.h"
#include "migration/vmstate.h"
#include "migration/qemu-file.h"
#include "io/channel-buffer.h"
#include "system/runstate.h"
#include "fuzz.h"
#include "qroce_fuzz.h"
#include "hw/net/qroce/roce_wire.h"

#define NQP         5
#define CQ_LOG2     6               /* 2 KiB of CQEs and the record */

/* Guest-physical layout (the command queue: qroce_fuzz.h). */
#define A_EQ(i)     (0x01002000ULL + (i) * 0x1000ULL)
#define A_CQ(i)     (0x01004000ULL + (i) * 0x1000ULL)
#define A_SRQ       0x01006000ULL
#define A_PBL       0x01007000ULL   /* the fast-registration MR's pages */
#define A_ODPL      0x01008000ULL   /* ODP_MAP's list */
#define A_ETH_RX    0x01009000ULL
#define A_ETH_BUF   0x0100a000ULL   /* 4 x 1 KiB */
#define A_QP(i)     (0x01010000ULL + (i) * 0x2000ULL)    /* SQ, then RQ */
#define A_MR        0x01100000ULL
#define MR_LEN      (16 * 4096)
#define A_FR        0x01200000ULL   /* 4 pages under the fast-reg. MR */
#define A_ODP       0x01300000ULL   /* 4 pages under the ODP MR */
#define FR_IOVA     0x40000000ULL
#define ODP_IOVA    0x50000000ULL
#define RC_LOCAL    3               /* local WQEs before RC's requests */
#define PEER_QPN(i) (0x21 + (i))
#define MAX_OBJ     16              /* the -device line's max-* */
#define SEED_AHN    1               /* the seeds' AH: the first CREATE_AH's */

enum { Q_RC, Q_UC, Q_UD, Q_GSI, Q_SRQ };

static const uint8_t qp_type[NQP] = {
    QROCE_QPT_RC, QROCE_QPT_UC, QROCE_QPT_UD, QROCE_QPT_GSI, QROCE_QPT_RC,
};

static const uint8_t mcast_gid[16] = { 0xff, 0x0e, [15] = 0x42 };

#define ACC_RW  (QROCE_ACCESS_LOCAL_WRITE | QROCE_ACCESS_REMOTE_WRITE | \
                 QROCE_ACCESS_REMOTE_READ)

static QRoceFuzz qf = { .name = "qroce-migstream" };

static struct {
    Object *obj;                    /* the device */
    const VMStateDescription *vmsd;
    FILE *devnull;                  /* stderr while a stream loads */
    GByteArray *pristine;           /* the section of a new device */
    int32_t pci_version_id;         /* the PCI core's, of a new device */
    bool cmdq;                      /* commands complete */
    uint32_t pdn, key, ahn, srqn, cqn[2];
    uint32_t qpn[NQP], sqi[NQP];
} m;

/* ------------------------------------------------------------------ */
/* Commands                                                           */
/* ------------------------------------------------------------------ */

/* A set-up command that must succeed: its first output word. */
static uint32_t mk(struct qroce_cmd *c, uint8_t opcode, const char *what)
{
    uint32_t out[6];

    c->hdr.opcode = opcode;
    qroce_fuzz_must(&qf, qroce_fuzz_cmd(&qf, c, out), what);
    return out[0];
}

/*
 * A command on one handle (a PD, CQ, SRQ, AH or EQ number, a QPN or a
 * key: the first word of each of those commands), while commands
 * complete.
 */
static void on_handle(uint8_t opcode, uint32_t handle)
{
    struct qroce_cmd c = { .hdr.opcode = opcode };

    c.handle.handle = cpu_to_le32(handle);
    m.cmdq = m.cmdq && qroce_fuzz_cmd(&qf, &c, NULL) != 0xff;
}

/* The key of a variant of @key: same index, variant byte plus @n. */
static uint32_t variant(uint32_t key, uint32_t n)
{
    return (key & ~QROCE_MR_VARIANT_MASK) |
           ((key + n) & QROCE_MR_VARIANT_MASK);
}

/* ------------------------------------------------------------------ */
/* Guest memory                                                       */
/* ------------------------------------------------------------------ */

/*
 * What the guest keeps in its rings for the set-up: 16 receive WQEs in
 * each RQ and the SRQ, the requests in flight (on RC after the local
 * WQEs, on UC a SEND, on UD a SEND to AH @ahn), all through @key.
 */
static void image(uint32_t key, uint32_t ahn)
{
    struct {
        struct qroce_send_wqe h;
        struct qroce_sge sge;
    } w = {};
    int i;

    for (i = 0; i < NQP; i++) {
        if (i != Q_SRQ) {
            qroce_fuzz_put_recvs(&qf, A_QP(i) + 0x1000, A_MR, key);
        }
    }
    qroce_fuzz_put_recvs(&qf, A_SRQ, A_MR, key);
    qroce_fuzz_put_requests(&qf, A_QP(Q_RC), RC_LOCAL, A_MR, key);
    w.h.opcode = QROCE_WR_SEND;
    w.h.flags = QROCE_WQE_SIGNALED;
    w.h.num_sge = 1;
    w.sge.addr = cpu_to_le64(A_MR + 0xe000);
    w.sge.length = cpu_to_le32(200);
    w.sge.lkey = cpu_to_le32(key);
    qtest_memwrite(qf.qts, A_QP(Q_UC), &w, sizeof(w));
    w.h.ud.ahn = cpu_to_le32(ahn);
    w.h.ud.remote_qpn = cpu_to_le32(PEER_QPN(Q_UD));
    w.h.ud.remote_qkey = cpu_to_le32(QROCE_FUZZ_QKEY);
    qtest_memwrite(qf.qts, A_QP(Q_UD), &w, sizeof(w));
}

/* A send WQE in the next slot of QP @i's SQ (not yet rung). */
static void put_wqe(int i, const struct qroce_send_wqe *h)
{
    qtest_memwrite(qf.qts, A_QP(i) + (m.sqi[i]++ & 15) * 64, h, sizeof(*h));
}

/* ------------------------------------------------------------------ */
/* Set-up variants (seed mode)                                        */
/* ------------------------------------------------------------------ */

/* PD, EQs, CQs, GIDs, the MR at A_MR, an AH and an SRQ. */
static void set_up_base(void)
{
    struct qroce_cmd c = {};
    int i;

    qroce_fuzz_enable(&qf);
    memset(m.sqi, 0, sizeof(m.sqi));
    m.pdn = mk(&c, QROCE_CMD_ALLOC_PD, "ALLOC_PD");
    for (i = 0; i < 2; i++) {
        c = (struct qroce_cmd){};
        c.create_eq.eqn = cpu_to_le32(i);
        c.create_eq.log2_entries = 6;
        c.create_eq.ring = qroce_fuzz_bt(A_EQ(i), 1);
        qroce_fuzz_zero(&qf, A_EQ(i), 4096);
        mk(&c, QROCE_CMD_CREATE_EQ, "CREATE_EQ");
        c = (struct qroce_cmd){};
        c.set_gid.type = QROCE_GID_ROCE_V2;
        c.set_gid.index = cpu_to_le32(i);
        memcpy(c.set_gid.gid, i ? qroce_fuzz_gid_v6 : qroce_fuzz_gid_v4, 16);
        mk(&c, QROCE_CMD_SET_GID, "SET_GID");
    }
    for (i = 0; i < 2; i++) {
        c = (struct qroce_cmd){};
        c.create_cq.eqn = cpu_to_le32(1);
        c.create_cq.log2_entries = CQ_LOG2;
        c.create_cq.ring = qroce_fuzz_bt(A_CQ(i), 1);
        qroce_fuzz_zero(&qf, A_CQ(i), 4096);
        m.cqn[i] = mk(&c, QROCE_CMD_CREATE_CQ, "CREATE_CQ");
        qroce_fuzz_ring(&qf, QROCE_DB_CQ_ARM, m.cqn[i], QROCE_CQ_ARM_NEXT);
    }
    c = (struct qroce_cmd){};
    c.reg_mr.pdn = cpu_to_le32(m.pdn);
    c.reg_mr.access = cpu_to_le32(QROCE_ACCESS_MASK);
    c.reg_mr.iova = cpu_to_le64(A_MR);
    c.reg_mr.length = cpu_to_le64(MR_LEN);
    c.reg_mr.pages = qroce_fuzz_bt(A_MR, MR_LEN / 4096);
    m.key = mk(&c, QROCE_CMD_REG_MR, "REG_MR");
    c = (struct qroce_cmd){};
    c.create_ah.pdn = cpu_to_le32(m.pdn);
    qroce_fuzz_peer_av(&c.create_ah.av, false);
    m.ahn = mk(&c, QROCE_CMD_CREATE_AH, "CREATE_AH");
    c = (struct qroce_cmd){};
    c.create_srq.pdn = cpu_to_le32(m.pdn);
    c.create_srq.log2_entries = 4;
    c.create_srq.wqe_shift = 6;
    c.create_srq.limit = cpu_to_le32(4);
    c.create_srq.ring = qroce_fuzz_bt(A_SRQ, 1);
    m.srqn = mk(&c, QROCE_CMD_CREATE_SRQ, "CREATE_SRQ");
    image(m.key, m.ahn);
    qroce_fuzz_ring(&qf, QROCE_DB_SRQ, m.srqn, 16);
}

/* QP @i in RTS on CQ @i % 2, its receives posted. */
static void set_up_qp(int i)
{
    m.qpn[i] = qroce_fuzz_mk_qp(&qf, qp_type[i], m.pdn, m.cqn[i % 2],
                                i == Q_SRQ ? m.srqn : 0, A_QP(i));
    qroce_fuzz_connect(&qf, m.qpn[i], qp_type[i], false, PEER_QPN(i));
    if (i != Q_SRQ) {
        qroce_fuzz_ring(&qf, QROCE_DB_RQ, m.qpn[i], 16);
    }
}

/* An ODP MR with pages 2..5 of its 16 mapped, and an MR on device memory. */
static void set_up_odp_dm(void)
{
    struct qroce_cmd c = {};
    uint64_t e[4];
    uint32_t key;
    int i;

    c.reg_mr.pdn = cpu_to_le32(m.pdn);
    c.reg_mr.access = cpu_to_le32(ACC_RW);
    c.reg_mr.iova = cpu_to_le64(ODP_IOVA);
    c.reg_mr.length = cpu_to_le64(16 * 4096);
    c.reg_mr.pages.level = QROCE_BT_ODP;
    c.reg_mr.pages.page_shift = QROCE_ODP_PAGE_SHIFT;
    key = mk(&c, QROCE_CMD_REG_MR, "REG_MR (ODP)");
    for (i = 0; i < 4; i++) {
        e[i] = cpu_to_le64((A_ODP + i * 4096) | QROCE_ODP_PRESENT |
                           QROCE_ODP_WRITE);
    }
    qtest_memwrite(qf.qts, A_ODPL, e, sizeof(e));
    c = (struct qroce_cmd){};
    c.odp_map.key = cpu_to_le32(key);
    c.odp_map.npages = cpu_to_le32(4);
    c.odp_map.first = cpu_to_le64(2);
    c.odp_map.list = cpu_to_le64(A_ODPL);
    mk(&c, QROCE_CMD_ODP_MAP, "ODP_MAP");
    c = (struct qroce_cmd){};
    c.reg_mr.pdn = cpu_to_le32(m.pdn);
    c.reg_mr.access = cpu_to_le32(ACC_RW);
    c.reg_mr.length = cpu_to_le64(4096);
    c.reg_mr.pages.addr = cpu_to_le64(4096);
    c.reg_mr.pages.level = QROCE_BT_DM;
    mk(&c, QROCE_CMD_REG_MR, "REG_MR (device memory)");
}

/*
 * A fast-registration MR registered by a REG_MR WQE on RC, windows of
 * type 1 and 2 (zero-based) bound by BIND_MW WQEs to the MR at A_MR:
 * the local WQEs in RC's first RC_LOCAL slots.
 */
static void set_up_fr_mw(void)
{
    struct qroce_cmd c = {};
    struct qroce_send_wqe h = { .flags = QROCE_WQE_SIGNALED };
    uint64_t pages[4];
    uint32_t fr, mw;
    int i;

    for (i = 0; i < 4; i++) {
        pages[i] = cpu_to_le64(A_FR + (3 - i) * 4096);
    }
    qtest_memwrite(qf.qts, A_PBL, pages, sizeof(pages));
    c.alloc_mr.pdn = cpu_to_le32(m.pdn);
    c.alloc_mr.max_pages = cpu_to_le32(8);
    fr = mk(&c, QROCE_CMD_ALLOC_MR, "ALLOC_MR");
    h.opcode = QROCE_WR_REG_MR;
    h.reg.iova = cpu_to_le64(FR_IOVA);
    h.reg.pbl_addr = cpu_to_le64(A_PBL);
    h.reg.length = cpu_to_le32(4 * 4096 - 100);
    h.reg.key = cpu_to_le32(variant(fr, 1));
    h.reg.access = cpu_to_le32(ACC_RW | QROCE_ACCESS_MW_BIND);
    h.reg.npages = cpu_to_le16(4);
    h.reg.page_shift = 12;
    put_wqe(Q_RC, &h);
    for (i = 1; i <= 2; i++) {
        c = (struct qroce_cmd){};
        c.alloc_mw.pdn = cpu_to_le32(m.pdn);
        c.alloc_mw.type = cpu_to_le32(i);
        mw = mk(&c, QROCE_CMD_ALLOC_MW, "ALLOC_MW");
        h = (struct qroce_send_wqe){ .opcode = QROCE_WR_BIND_MW,
                                     .flags = QROCE_WQE_SIGNALED };
        h.bind.mw_key = cpu_to_le32(mw);
        h.bind.new_key = cpu_to_le32(variant(mw, 1));
        h.bind.mr_lkey = cpu_to_le32(m.key);
        h.bind.access = cpu_to_le32(QROCE_ACCESS_REMOTE_WRITE |
                                    QROCE_ACCESS_REMOTE_READ |
                                    (i == 2 ? QROCE_ACCESS_ZERO_BASED : 0));
        h.bind.addr = cpu_to_le64(A_MR + i * 4096);
        h.bind.length = cpu_to_le64(i * 4096);
        put_wqe(Q_RC, &h);
    }
    qroce_fuzz_ring(&qf, QROCE_DB_SQ, m.qpn[Q_RC], m.sqi[Q_RC]);
    qroce_fuzz_flush(&qf);
}

/* The Ethernet function's RX ring: 4 buffers of 1 KiB. */
static void set_up_eth(void)
{
    struct qroce_eth_desc desc;
    int j;

    for (j = 0; j < 4; j++) {
        desc = (struct qroce_eth_desc){ cpu_to_le64(A_ETH_BUF + j * 1024),
                                        cpu_to_le16(1024), 0, 0 };
        qtest_memwrite(qf.qts, A_ETH_RX + j * sizeof(desc), &desc,
                       sizeof(desc));
    }
    qroce_fuzz_wr(&qf, QROCE_REG_RXQ_BASE_LO, A_ETH_RX);
    qroce_fuzz_wr(&qf, QROCE_REG_RXQ_BASE_HI, 0);
    qroce_fuzz_wr(&qf, QROCE_REG_RXQ_LOG2, 3);
    qroce_fuzz_wr(&qf, QROCE_REG_ETH_CTRL, QROCE_ETH_CTRL_RX_EN);
    qroce_fuzz_wr(&qf, QROCE_REG_RXQ_PI, 4);
}

static void set_up_mrs(void)
{
    set_up_base();
    set_up_qp(Q_RC);
    set_up_odp_dm();
    set_up_fr_mw();
}

static void set_up_full(void)
{
    struct qroce_cmd c = {};
    int i;

    set_up_base();
    for (i = 0; i < NQP; i++) {
        set_up_qp(i);
    }
    c.mcast.qpn = cpu_to_le32(m.qpn[Q_UD]);
    memcpy(c.mcast.gid, mcast_gid, 16);
    mk(&c, QROCE_CMD_ATTACH_MCAST, "ATTACH_MCAST");
    set_up_odp_dm();
    set_up_fr_mw();
    set_up_eth();
    /* the requests image() wrote: 5 on RC, a SEND on UC and UD */
    qroce_fuzz_ring(&qf, QROCE_DB_SQ, m.qpn[Q_RC], RC_LOCAL + 5);
    qroce_fuzz_ring(&qf, QROCE_DB_SQ, m.qpn[Q_UC], 1);
    qroce_fuzz_ring(&qf, QROCE_DB_SQ, m.qpn[Q_UD], 1);
    qroce_fuzz_flush(&qf);
}

static void set_up_retry(void)
{
    int i;

    set_up_full();
    for (i = 0; i < 3; i++) {
        qtest_clock_step(qf.qts, 100 * 1000 * 1000);
        qroce_fuzz_flush(&qf);
    }
}

static void set_up_states(void)
{
    struct qroce_cmd c = {};

    set_up_full();
    qroce_fuzz_modify(&qf, m.qpn[Q_UC], QROCE_QP_ATTR_STATE, QROCE_QPS_ERR,
                      &c);
    qroce_fuzz_modify(&qf, m.qpn[Q_GSI], QROCE_QP_ATTR_STATE, QROCE_QPS_ERR,
                      &c);
    qroce_fuzz_modify(&qf, m.qpn[Q_UD], QROCE_QP_ATTR_STATE,
                      QROCE_QPS_RESET, &c);
    c = (struct qroce_cmd){ .hdr.opcode = QROCE_CMD_MODIFY_QP };
    c.modify_qp.qpn = cpu_to_le32(m.qpn[Q_SRQ]);
    c.modify_qp.attr_mask = cpu_to_le32(QROCE_QP_ATTR_STATE);
    c.modify_qp.new_state = QROCE_QPS_SQD;
    qroce_fuzz_cmd(&qf, &c, NULL);          /* taken or not */
    qroce_fuzz_flush(&qf);
}

static void set_up_eth_only(void)
{
    struct qroce_cmd c;
    int i;

    qroce_fuzz_enable(&qf);
    for (i = 0; i < 2; i++) {
        c = (struct qroce_cmd){};
        c.set_gid.type = QROCE_GID_ROCE_V2;
        c.set_gid.index = cpu_to_le32(i);
        memcpy(c.set_gid.gid, i ? qroce_fuzz_gid_v6 : qroce_fuzz_gid_v4, 16);
        mk(&c, QROCE_CMD_SET_GID, "SET_GID");
    }
    set_up_eth();
    qroce_fuzz_flush(&qf);
}

/* ------------------------------------------------------------------ */
/* The stream                                                         */
/* ------------------------------------------------------------------ */

/*
 * Load @size bytes as the device's section, as loadvm does: 0, or
 * -EINVAL with @errp set.
 */
static int load(const uint8_t *data, size_t size, Error **errp)
{
    QIOChannelBuffer *bioc = qio_channel_buffer_new(size);
    FILE *err = stderr;
    QEMUFile *f;
    bool ok;

    if (size) {
        memcpy(bioc->data, data, size);
    }
    bioc->usage = size;
    f = qemu_file_new_input(QIO_CHANNEL(bioc));
    vm_stop(RUN_STATE_RESTORE_VM);
    if (m.devnull) {
        stderr = m.devnull;
    }
    ok = vmstate_load_vmsd(f, m.vmsd, m.obj, m.vmsd->version_id, errp);
    stderr = err;
    qemu_fclose(f);
    object_unref(OBJECT(bioc));
    return ok ? 0 : -EINVAL;
}

/*
 * The device's section as a stream carries it (the VM stopped for it).
 * Copied out before the QEMUFile closes: closing a QIOChannelBuffer frees
 * its data.
 */
static GByteArray *save_section(void)
{
    QIOChannelBuffer *bioc = qio_channel_buffer_new(65536);
    QEMUFile *f = qemu_file_new_output(QIO_CHANNEL(bioc));
    GByteArray *sec;
    bool ok;

    vm_stop(RUN_STATE_SAVE_VM);
    ok = vmstate_save_vmsd(f, m.vmsd, m.obj, NULL, &error_abort);
    qemu_fflush(f);
    g_assert(ok && !qemu_file_get_error(f));
    sec = g_byte_array_new();
    g_byte_array_append(sec, bioc->data, bioc->usage);
    qemu_fclose(f);
    object_unref(OBJECT(bioc));
    vm_start();
    return sec;
}

/*
 * CTRL.RESET, then the section of the device as it was at start: the
 * knobs a stream may have set (fault injection, link, congestion
 * control), counters and registers as a new device has them.
 */
static void fresh(void)
{
    Error *err = NULL;
    int ret;

    /*
     * The PCI core loads its section's version_id over the device's own
     * (VMSTATE_INT32_POSITIVE_LE), a stream cut short with 0: a new
     * destination has the one it was made with.
     */
    PCI_DEVICE(m.obj)->version_id = m.pci_version_id;
    qroce_fuzz_wr(&qf, QROCE_REG_CTRL, QROCE_CTRL_RESET);
    ret = load(m.pristine->data, m.pristine->len, &err);
    vm_start();
    if (ret) {
        fprintf(stderr, "qroce-migstream: a new device's section refused "
                "after CTRL.RESET: %s\n", error_get_pretty(err));
        abort();
    }
}

/* Save the device's section to @dir/@name, and check that it loads. */
static void save(const char *dir, const char *name)
{
    g_autoptr(GByteArray) sec = save_section();
    g_autofree char *path = g_build_filename(dir, name, NULL);
    Error *err = NULL;
    int ret;

    if (!g_file_set_contents(path, (char *)sec->data, sec->len, NULL)) {
        fprintf(stderr, "qroce-migstream: cannot write %s\n", path);
        exit(1);
    }
    qroce_fuzz_wr(&qf, QROCE_REG_CTRL, QROCE_CTRL_RESET);
    ret = load(sec->data, sec->len, &err);
    vm_start();
    if (ret) {
        fprintf(stderr, "qroce-migstream: %s does not load: %s\n", path,
                error_get_pretty(err));
        exit(1);
    }
    fprintf(stderr, "qroce-migstream: %s: %u bytes\n", path, sec->len);
}

static void write_seeds(const char *dir)
{
    static const struct {
        const char *name;
        void (*set_up)(void);
    } v[] = {
        { "seed-full", set_up_full },
        { "seed-retry", set_up_retry },
        { "seed-mrs", set_up_mrs },
        { "seed-states", set_up_states },
        { "seed-eth", set_up_eth_only },
    };
    size_t i;

    g_mkdir_with_parents(dir, 0755);
    for (i = 0; i < ARRAY_SIZE(v); i++) {
        qroce_fuzz_open(&qf, qf.qts);
        v[i].set_up();
        save(dir, v[i].name);
        qroce_fuzz_close(&qf);
    }
}

/* ------------------------------------------------------------------ */
/* After the load                                                     */
/* ------------------------------------------------------------------ */

/* The device's objects as x-objects describes them. */
static QDict *objects(void)
{
    g_autofree char *js = object_property_get_str(m.obj, "x-objects",
                                                  &error_abort);

    return qobject_to(QDict, qobject_from_json(js, &error_abort));
}

/* Field @name of entry @e of a list in objects(), or of its dict @sub. */
static uint32_t field(QListEntry *e, const char *sub, const char *name)
{
    QDict *d = qobject_to(QDict, qlist_entry_obj(e));

    return qdict_get_int(sub ? qdict_get_qdict(d, sub) : d, name);
}

#define FOR_EACH(o, list, e) \
    QLIST_FOREACH_ENTRY(qdict_get_qlist(o, list), e)

/* The key of the loaded MR at A_MR (0: none). */
static uint32_t main_key(QDict *o)
{
    QListEntry *e;

    FOR_EACH(o, "mrs", e) {
        if (!field(e, NULL, "mw_type") && field(e, NULL, "iova") == A_MR) {
            return field(e, NULL, "key");
        }
    }
    return 0;
}

/* A frame of @opcode from the peer to @qpn at @psn. */
static void send_frame(uint8_t opcode, uint32_t qpn, uint32_t psn,
                       uint32_t qkey)
{
    static uint8_t buf[ROCE_MAX_HDRS + 64 + 64];
    RocePktOut p = {
        .dmac = qroce_fuzz_dev_mac, .smac = qroce_fuzz_peer_mac,
        .sgid = qroce_fuzz_peer_v4, .dgid = qroce_fuzz_gid_v4,
        .hop_limit = 64, .sport = 0xc000, .opcode = opcode, .ackreq = true,
        .dqpn = qpn, .psn = psn & 0xffffff, .aeth_msn = 1,
        .deth_qkey = qkey, .deth_sqp = PEER_QPN(Q_UD),
    };
    uint32_t paylen = opcode == ROCE_ACK || opcode == ROCE_CNP ? 0 : 64;

    memset(buf + roce_hdr_len(opcode, false), 0x5a, paylen);
    qroce_fuzz_deliver(&qf, buf, roce_build(buf, &p, paylen));
}

/* Doorbells and frames on every loaded object, then 30 ms of time. */
static void drive(QDict *o)
{
    QListEntry *e;
    uint32_t n, epsn;
    const char *type;
    int i;

    FOR_EACH(o, "qps", e) {
        n = field(e, NULL, "qpn");
        qroce_fuzz_ring(&qf, QROCE_DB_SQ, n, field(e, "sq", "pi") + 1);
        qroce_fuzz_ring(&qf, QROCE_DB_RQ, n, field(e, "rq", "pi") + 1);
    }
    FOR_EACH(o, "cqs", e) {
        n = field(e, NULL, "cqn");
        qroce_fuzz_ring(&qf, QROCE_DB_CQ_ARM, n, QROCE_CQ_ARM_NEXT |
                        (field(e, NULL, "pi") & QROCE_CQ_ARM_CI_MASK));
        qroce_fuzz_ring(&qf, QROCE_DB_CQ_CI, n, field(e, NULL, "pi"));
    }
    FOR_EACH(o, "srqs", e) {
        qroce_fuzz_ring(&qf, QROCE_DB_SRQ, field(e, NULL, "srqn"),
                        field(e, NULL, "pi") + 1);
    }
    qroce_fuzz_flush(&qf);
    FOR_EACH(o, "qps", e) {
        n = field(e, NULL, "qpn");
        epsn = field(e, NULL, "epsn");
        type = qdict_get_str(qobject_to(QDict, qlist_entry_obj(e)), "type");
        if (!strcmp(type, "UD") || !strcmp(type, "GSI")) {
            send_frame(ROCE_UD_SEND_ONLY, n, epsn, type[0] == 'G' ?
                       QROCE_FUZZ_GSI_QKEY : QROCE_FUZZ_QKEY);
            continue;
        }
        send_frame(strcmp(type, "UC") ? ROCE_SEND_ONLY :
                   ROCE_SEND_ONLY | ROCE_UC, n, epsn, 0);
        if (!strcmp(type, "RC")) {
            send_frame(ROCE_ACK, n, field(e, NULL, "npsn") - 1, 0);
            send_frame(ROCE_CNP, n, 0, 0);
        }
    }
    for (i = 0; i < 3; i++) {
        qtest_clock_step(qf.qts, 10 * 1000 * 1000);
        qroce_fuzz_flush(&qf);
    }
}

/*
 * The command queue in this target's ring again, commands going on from
 * the loaded consumer index (ENABLE cleared and set keeps the objects):
 * whether the device is READY.  Each completion slot starts with the
 * owner bit its next command does not write.
 */
static bool rehome(void)
{
    struct qroce_cmd_comp comp = {};
    uint32_t mask = (1u << QROCE_FUZZ_CMDQ_LOG2) - 1, ci, j;

    qroce_fuzz_wr(&qf, QROCE_REG_CTRL, 0);
    ci = qroce_fuzz_rd(&qf, QROCE_REG_CMDQ_CI);
    qroce_fuzz_zero(&qf, QROCE_FUZZ_CMDQ, 0x1000);
    for (j = 0; j <= mask; j++) {
        comp.owner = qroce_owner_for(ci + ((j - ci) & mask),
                                     QROCE_FUZZ_CMDQ_LOG2) ^ 1;
        qtest_memwrite(qf.qts, QROCE_FUZZ_COMP + j * sizeof(comp), &comp,
                       sizeof(comp));
    }
    qroce_fuzz_wr(&qf, QROCE_REG_CMDQ_BASE_LO, QROCE_FUZZ_CMDQ);
    qroce_fuzz_wr(&qf, QROCE_REG_CMDQ_BASE_HI, 0);
    qroce_fuzz_wr(&qf, QROCE_REG_CMDQ_CQ_LO, QROCE_FUZZ_COMP);
    qroce_fuzz_wr(&qf, QROCE_REG_CMDQ_CQ_HI, 0);
    qroce_fuzz_wr(&qf, QROCE_REG_CMDQ_LOG2, QROCE_FUZZ_CMDQ_LOG2);
    qroce_fuzz_wr(&qf, QROCE_REG_CTRL, QROCE_CTRL_ENABLE);
    /* nothing pending: the stream's CMDQ_PI is not this ring's */
    qroce_fuzz_wr(&qf, QROCE_REG_CMDQ_PI, ci);
    qf.pi = ci;
    return qroce_fuzz_rd(&qf, QROCE_REG_STATUS) & QROCE_STATUS_READY;
}

/* Destroy commands: first those references must refuse, then all. */
static void destroy(QDict *o)
{
    QListEntry *e;
    uint32_t h;

    FOR_EACH(o, "cqs", e) {
        on_handle(QROCE_CMD_DESTROY_CQ, field(e, NULL, "cqn"));
    }
    FOR_EACH(o, "srqs", e) {
        on_handle(QROCE_CMD_DESTROY_SRQ, field(e, NULL, "srqn"));
    }
    FOR_EACH(o, "mrs", e) {
        if (!field(e, NULL, "mw_type")) {
            on_handle(QROCE_CMD_DEREG_MR, field(e, NULL, "key"));
        }
    }
    for (h = 0; h < MAX_OBJ; h++) {
        on_handle(QROCE_CMD_DEALLOC_PD, h);
    }
    for (h = 0; h < MAX_OBJ; h++) {
        on_handle(QROCE_CMD_DESTROY_QP, h);
    }
    FOR_EACH(o, "mrs", e) {
        if (field(e, NULL, "mw_type")) {
            on_handle(QROCE_CMD_DEALLOC_MW, field(e, NULL, "key"));
        }
    }
    FOR_EACH(o, "mrs", e) {
        on_handle(QROCE_CMD_DEREG_MR, field(e, NULL, "key"));
    }
    for (h = 0; h < MAX_OBJ; h++) {
        on_handle(QROCE_CMD_DESTROY_SRQ, h);
        on_handle(QROCE_CMD_DESTROY_CQ, h);
        on_handle(QROCE_CMD_DESTROY_AH, h);
        on_handle(QROCE_CMD_DEALLOC_PD, h);
    }
    for (h = 0; h < QROCE_NUM_EQS; h++) {
        on_handle(QROCE_CMD_DESTROY_EQ, h);
    }
}

/*
 * CTRL.RESET: no object left, and READY again with the command queue.
 * (Not a command: the stream's fault-injection knobs may swallow it.)
 */
static void check_reset(void)
{
    QDict *o;
    bool empty;

    qroce_fuzz_enable(&qf);
    if (!(qroce_fuzz_rd(&qf, QROCE_REG_STATUS) & QROCE_STATUS_READY)) {
        fprintf(stderr, "qroce-migstream: not READY after CTRL.RESET\n");
        abort();
    }
    o = objects();
    empty = qlist_empty(qdict_get_qlist(o, "eqs")) &&
            qlist_empty(qdict_get_qlist(o, "cqs")) &&
            qlist_empty(qdict_get_qlist(o, "qps")) &&
            qlist_empty(qdict_get_qlist(o, "mrs")) &&
            qlist_empty(qdict_get_qlist(o, "srqs"));
    qobject_unref(o);
    if (!empty) {
        fprintf(stderr, "qroce-migstream: objects left after CTRL.RESET\n");
        abort();
    }
}

/* The PCI configuration registers this target mapped the BARs with. */
static const uint8_t cfg_regs[] = {
    PCI_BASE_ADDRESS_0, PCI_BASE_ADDRESS_1, PCI_BASE_ADDRESS_2,
    PCI_BASE_ADDRESS_3, PCI_BASE_ADDRESS_4, PCI_BASE_ADDRESS_5,
};

/*
 * The input as the device's section, the VM stopped (left stopped);
 * what the PCI core took from it that this target maps the device with
 * put back.
 */
static int load_input(const uint8_t *data, size_t size)
{
    uint32_t cfg[ARRAY_SIZE(cfg_regs)];
    PCIDevice *pdev = PCI_DEVICE(m.obj);
    uint8_t irq_state = pdev->irq_state;
    uint16_t command;
    size_t i;
    int ret;

    for (i = 0; i < ARRAY_SIZE(cfg_regs); i++) {
        cfg[i] = qpci_config_readl(qf.dev, cfg_regs[i]);
    }
    command = qpci_config_readw(qf.dev, PCI_COMMAND);
    ret = load(data, size, NULL);
    /*
     * The INTx levels go with the bus's counts, in the PCI bus's section,
     * which is not in the input: a level the bus did not count asserts
     * at the next system reset.
     */
    pdev->irq_state = irq_state;
    for (i = 0; i < ARRAY_SIZE(cfg_regs); i++) {
        qpci_config_writel(qf.dev, cfg_regs[i], cfg[i]);
    }
    qpci_config_writew(qf.dev, PCI_COMMAND, command);
    return ret;
}

static void qroce_migstream_fuzz(QTestState *s, const unsigned char *data,
                                 size_t size)
{
    QDict *o;
    int ret;

    qroce_fuzz_open(&qf, s);
    fresh();
    ret = load_input(data, size);
    vm_start();
    /* what runs now: a section that did not load whole was reset */
    o = objects();
    if (qf.log) {
        g_autoptr(GString) js = qobject_to_json(QOBJECT(o));

        fprintf(stderr, "[loaded: %d] %s\n", ret, js->str);
    }
    image(main_key(o), SEED_AHN);
    qroce_fuzz_flush(&qf);

    drive(o);
    m.cmdq = rehome();
    destroy(o);
    qobject_unref(o);
    check_reset();
    qroce_fuzz_close(&qf);
}

static GString *qroce_migstream_cmdline(FuzzTarget *t)
{
    return qroce_fuzz_cmdline(",max-qp=16,max-cq=16,max-mr=16,max-pd=16,"
                              "max-ah=16,max-srq=16,mcast-max-groups=2,"
                              "mcast-max-qp-attach=2,max-bt-pages=1024,"
                              "state-budget-mb=16,dm-size=8192",
                              "QROCE_MIGSTREAM_ARGS");
}

static void qroce_migstream_pre_fuzz(QTestState *s)
{
    const char *seed_dir = getenv("QROCE_MIGSTREAM_SEED");

    m.obj = object_resolve_path_type("", "qroce", NULL);
    g_assert(m.obj);
    m.vmsd = DEVICE_GET_CLASS(m.obj)->vmsd;
    g_assert(m.vmsd);
    m.pci_version_id = PCI_DEVICE(m.obj)->version_id;
    qf.qts = s;
    qf.log = getenv("QROCE_MIGSTREAM_LOG") != NULL;
    if (!qf.log) {
        m.devnull = fopen("/dev/null", "w");
    }
    if (seed_dir) {
        write_seeds(seed_dir);
        _exit(0);           /* not libFuzzer's "target exited" */
    }
    qroce_fuzz_open(&qf, s);
    qroce_fuzz_wr(&qf, QROCE_REG_CTRL, QROCE_CTRL_RESET);
    m.pristine = save_section();
    qroce_fuzz_close(&qf);
}

static void register_qroce_migstream(void)
{
    fuzz_add_target(&(FuzzTarget){
        .name = "qroce-migstream",
        .description = "qroce: the input loaded as the device's migration "
                       "section, then commands, doorbells and frames",
        .get_init_cmdline = qroce_migstream_cmdline,
        .pre_fuzz = qroce_migstream_pre_fuzz,
        .fuzz = qroce_migstream_fuzz,
    });
}

fuzz_target_init(register_qroce_migstream);
