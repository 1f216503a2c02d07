/*
 * qroce: emulated PCIe RoCEv2 RDMA NIC -- the QOM/PCI shell: the type,
 * realize, exit and reset, the properties, the BARs, MSI-X and the netdev
 * glue.  The run-time knobs, fault injection and the x-objects dump are
 * qroce_debug.c's.  The model's files and their layers are
 * listed in qroce.h; the interface is docs/hw-spec.md and
 * include/qroce_hw.h.
 *
 * Every value the guest supplies is checked before use: bad input ends in
 * a command error status, an error CQE, a QP in ERR or a counted drop,
 * logged with LOG_GUEST_ERROR -- never an abort.
 *
 * Its state moves with the VM (live migration and snapshots): the
 * VMState is qroce_migration.c's.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/module.h"
#include "qemu/main-loop.h"
#include "qemu/cutils.h"
#include "qapi/error.h"
#include "qapi/visitor.h"
#include "qobject/qdict.h"
#include "qobject/qlist.h"
#include "qobject/qjson.h"
#include "hw/pci/pci_device.h"
#include "hw/pci/msix.h"
#include "hw/pci/pcie.h"
#include "hw/core/qdev-properties.h"
#include "migration/vmstate.h"
#include "system/runstate.h"
#include "system/iothread.h"
#include "qroce.h"
#include "qroce_regs.h"
#include "qroce_ctrl.h"
#include "qroce_eth.h"
#include "qroce_data.h"
#include "qroce_migration.h"
#include "qroce_debug.h"
#include "qroce_ring.h"
#include "qroce_port.h"
#include "qroce_data_common.h"
#include "qroce_objects.h"
#include "trace.h"

/* ------------------------------------------------------------------ */
/* Network client                                                      */
/* ------------------------------------------------------------------ */

static bool qroce_can_receive(NetClientState *nc)
{
    QRoceState *s = qemu_get_nic_opaque(nc);
    QROCE_LOCKED(s);

    /*
     * RoCE frames never wait for Ethernet buffers; others are dropped.
     * A stopped VM's device takes nothing: the netdev keeps it.
     */
    return !s->quiesced;
}

/*
 * The VM stops (pause, the last pass of a migration, a snapshot) or runs
 * again.  Stopped, the device does no work: every bottom half returns at
 * once and leaves what is pending, so a command, a doorbell or a frame
 * that came before the stop is done once, after it, by whichever QEMU
 * runs the guest on (§18).  Running again, each is kicked, after a
 * migration section that did not load whole has reset the device.
 */
static void qroce_vm_state_change(void *opaque, bool running, RunState state)
{
    QRoceState *s = opaque;
    QROCE_LOCKED(s);

    s->quiesced = !running;
    trace_qroce_quiesce(!running, RunState_str(state));
    if (!running) {
        /* the engine is done: what it left for the main loop goes now */
        qroce_port_out(s);
        qroce_irq_flush(s);
    } else {
        qroce_mig_resume(s);
        qemu_bh_schedule(s->cmd_bh);
        qemu_bh_schedule(s->tx_bh);
        qroce_data_resume(s);
        qroce_port_resume(s);
    }
}

static void qroce_set_link_status(NetClientState *nc)
{
    QRoceState *s = qemu_get_nic_opaque(nc);
    QROCE_LOCKED(s);
    bool up = qroce_link_up(s);

    trace_qroce_link(up);
    if (qroce_ready(s)) {
        qroce_async_event(s, up ? QROCE_EQE_PORT_ACTIVE : QROCE_EQE_PORT_DOWN,
                          1, 0);
        qroce_eth_irq(s, QROCE_ETH_IRQ_LINK);
    }
}

static NetClientInfo qroce_net_info = {
    .type = NET_CLIENT_DRIVER_NIC,
    .size = sizeof(NICState),
    .can_receive = qroce_can_receive,
    .receive = qroce_port_receive,
    .link_status_changed = qroce_set_link_status,
    .announce = qroce_port_announce,
};

/* ------------------------------------------------------------------ */
/* Device                                                              */
/* ------------------------------------------------------------------ */

/* The properties' values: false, with @errp set, if one is out of range. */
static bool qroce_params_ok(const QRoceParams *p, Error **errp)
{
    if (p->max_qp < 16 || p->max_qp > (1u << 24) ||
        p->max_cq < 16 || p->max_cq > (1u << 24) ||
        p->max_mr < 16 || p->max_mr > (1u << 24) ||
        p->max_pd < 16 || p->max_pd > (1u << 24) ||
        p->max_ah < 16 || p->max_ah > (1u << 24) ||
        p->max_srq < 16 || p->max_srq > (1u << 24)) {
        error_setg(errp, "qroce: max-qp, max-cq, max-mr, max-pd, max-ah and "
                   "max-srq must be between 16 and 16777216");
        return false;
    }
    if (p->mcast_max_groups < 1 ||
        p->mcast_max_groups > QROCE_MCAST_MAX_GROUPS ||
        p->mcast_max_qp_attach < 1 ||
        p->mcast_max_qp_attach > QROCE_MCAST_MAX_QP_ATTACH) {
        error_setg(errp, "qroce: mcast-max-groups must be between 1 and %u, "
                   "mcast-max-qp-attach between 1 and %u",
                   QROCE_MCAST_MAX_GROUPS, QROCE_MCAST_MAX_QP_ATTACH);
        return false;
    }

    if (p->dm_size && (p->dm_size < QROCE_DM_MIN_SIZE ||
                       p->dm_size > QROCE_DM_MAX_SIZE ||
                       (p->dm_size & (p->dm_size - 1)))) {
        error_setg(errp, "qroce: dm-size must be 0 or a power of two "
                   "between %u and %u", QROCE_DM_MIN_SIZE, QROCE_DM_MAX_SIZE);
        return false;
    }
    return true;
}

/* BAR0 registers, BAR2 doorbells, BAR4 MSI-X, BAR5 device memory. */
static bool qroce_bars_init(QRoceState *s, Error **errp)
{
    PCIDevice *pdev = PCI_DEVICE(s);
    const QRoceParams *p = &s->params;

    memory_region_init_io(&s->mmio, OBJECT(s), &qroce_reg_ops, s,
                          "qroce-regs", QROCE_REGS_SIZE);
    pci_register_bar(pdev, QROCE_BAR_REGS, PCI_BASE_ADDRESS_SPACE_MEMORY,
                     &s->mmio);
    qroce_regs_init(s);
    memory_region_init_io(&s->db, OBJECT(s), &qroce_db_ops, s,
                          "qroce-doorbells", QROCE_DB_BAR_SIZE);
    pci_register_bar(pdev, QROCE_BAR_DB, PCI_BASE_ADDRESS_SPACE_MEMORY |
                     PCI_BASE_ADDRESS_MEM_TYPE_64, &s->db);
    memory_region_init(&s->msix, OBJECT(s), "qroce-msix", 0x2000);
    pci_register_bar(pdev, QROCE_BAR_MSIX, PCI_BASE_ADDRESS_SPACE_MEMORY,
                     &s->msix);
    /*
     * Device memory: RAM behind BAR5, which the guest maps and the engine
     * reads and writes for MRs on it; migrated as the device's RAM block
     */
    if (p->dm_size) {
        if (!memory_region_init_ram(&s->dm_mr, OBJECT(s), "qroce-dm",
                                    p->dm_size, errp)) {
            return false;
        }
        s->dm = memory_region_get_ram_ptr(&s->dm_mr);
        pci_register_bar(pdev, QROCE_BAR_DM, PCI_BASE_ADDRESS_SPACE_MEMORY |
                         PCI_BASE_ADDRESS_MEM_PREFETCH, &s->dm_mr);
    }
    return true;
}

static void qroce_realize(PCIDevice *pdev, Error **errp)
{
    QRoceState *s = QROCE(pdev);
    DeviceState *dev = DEVICE(pdev);
    const QRoceParams *p = &s->params;
    int i;

    if (!qroce_params_ok(p, errp)) {
        return;
    }
    pci_set_word(pdev->config + PCI_SUBSYSTEM_VENDOR_ID,
                 QROCE_PCI_SUBSYS_VENDOR_ID);
    pci_set_word(pdev->config + PCI_SUBSYSTEM_ID, QROCE_PCI_SUBSYS_ID);
    pdev->config[PCI_INTERRUPT_PIN] = 1;

    if (!qroce_bars_init(s, errp)) {
        return;
    }

    if (pcie_endpoint_cap_init(pdev, 0xa0) < 0) {
        error_setg(errp, "qroce: cannot add the PCIe capability");
        return;
    }
    if (msix_init(pdev, QROCE_MSIX_VECTORS, &s->msix, QROCE_BAR_MSIX, 0,
                  &s->msix, QROCE_BAR_MSIX, 0x1000, 0x70, errp) < 0) {
        return;
    }
    for (i = 0; i < QROCE_MSIX_VECTORS; i++) {
        msix_vector_use(pdev, i);
    }

    s->pd = g_new0(QRocePD, p->max_pd);
    qroce_tbl_init(&s->cqs, p->max_cq, sizeof(QRoceCQ));
    qroce_tbl_init(&s->qps, p->max_qp, sizeof(QRoceQP));
    qroce_tbl_init(&s->mrs, p->max_mr, sizeof(QRoceMR));
    s->ah = g_new0(QRoceAH, p->max_ah);
    qroce_tbl_init(&s->srqs, p->max_srq, sizeof(QRoceSRQ));
    s->mcast = g_new0(QRoceMcast, p->mcast_max_groups);
    s->mcast_qpn = g_new0(uint32_t, p->mcast_max_groups *
                                    p->mcast_max_qp_attach);
    for (i = 0; i < p->mcast_max_groups; i++) {
        s->mcast[i].qpn = s->mcast_qpn + i * p->mcast_max_qp_attach;
    }

    s->eng_ctx = s->iothread ? iothread_get_aio_context(s->iothread) :
                 qemu_get_aio_context();
    if (s->iothread) {
        object_ref(OBJECT(s->iothread));
    }
    s->out_bh = qemu_bh_new_guarded(qroce_out_bh, s,
                                    &dev->mem_reentrancy_guard);
    s->cmd_bh = qemu_bh_new_guarded(qroce_cmd_bh, s,
                                    &dev->mem_reentrancy_guard);
    s->tx_bh = qemu_bh_new_guarded(qroce_eth_tx_bh, s,
                                   &dev->mem_reentrancy_guard);
    qroce_port_init(s);
    qroce_port_set_eth_rx(s, qroce_eth_receive);
    s->next_qpn = 2;
    s->next_mr = 1;

    qemu_macaddr_default_if_unset(&s->conf.macaddr);
    s->nic = qemu_new_nic(&qroce_net_info, &s->conf,
                          object_get_typename(OBJECT(s)), dev->id,
                          &dev->mem_reentrancy_guard, s);
    qemu_format_nic_info_str(qemu_get_queue(s->nic), s->conf.macaddr.a);

    qroce_data_init(s);
    qroce_reset_state(s);
    qemu_get_queue(s->nic)->link_down = p->link_off;
    s->quiesced = !runstate_is_running();
    s->vmse = qemu_add_vm_change_state_handler(qroce_vm_state_change, s);
    if (p->inj_stall_us) {
        qroce_data_stall(s, p->inj_stall_qpn, p->inj_stall_us);
    }
}

static void qroce_exit(PCIDevice *pdev)
{
    QRoceState *s = QROCE(pdev);
    int i;

    qemu_del_vm_change_state_handler(s->vmse);
    qroce_lock(s);
    qroce_reset_state(s);
    qroce_unlock(s);
    qroce_data_fini(s);     /* waits for a run of the engine to end */
    qemu_bh_delete(s->out_bh);
    if (s->iothread) {
        object_unref(OBJECT(s->iothread));
    }
    qemu_del_nic(s->nic);
    qemu_bh_delete(s->cmd_bh);
    qemu_bh_delete(s->tx_bh);
    qroce_port_fini(s);
    for (i = 0; i < QROCE_MSIX_VECTORS; i++) {
        msix_vector_unuse(pdev, i);
    }
    msix_uninit(pdev, &s->msix, &s->msix);
    g_free(s->pd);
    qroce_tbl_fini(&s->cqs);
    qroce_tbl_fini(&s->qps);
    qroce_tbl_fini(&s->mrs);
    g_free(s->ah);
    qroce_tbl_fini(&s->srqs);
    g_free(s->mcast);
    g_free(s->mcast_qpn);
    g_free(s->params.inj_event);
}

/*
 * Resettable's hold phase: the device and every object go back to their
 * power-on state (the enter phase has nothing to do; the exit phase
 * nothing to release).
 */
static void qroce_reset_hold(Object *obj, ResetType type)
{
    QROCE_LOCKED(QROCE(obj));

    qroce_reset_state(QROCE(obj));
}

static const Property qroce_properties[] = {
    DEFINE_NIC_PROPERTIES(QRoceState, conf),
    DEFINE_PROP_LINK("iothread", QRoceState, iothread, TYPE_IOTHREAD,
                     IOThread *),
    DEFINE_PROP_UINT32("max-bt-pages", QRoceState, params.max_bt_pages,
                       QROCE_DEF_MAX_BT_PAGES),
    DEFINE_PROP_UINT32("dm-size", QRoceState, params.dm_size,
                       QROCE_DEF_DM_SIZE),
    DEFINE_PROP_UINT32("max-qp", QRoceState, params.max_qp, QROCE_DEF_MAX_QP),
    DEFINE_PROP_UINT32("max-cq", QRoceState, params.max_cq, QROCE_DEF_MAX_CQ),
    DEFINE_PROP_UINT32("max-mr", QRoceState, params.max_mr, QROCE_DEF_MAX_MR),
    DEFINE_PROP_UINT32("max-pd", QRoceState, params.max_pd, QROCE_DEF_MAX_PD),
    DEFINE_PROP_UINT32("max-ah", QRoceState, params.max_ah, QROCE_DEF_MAX_AH),
    DEFINE_PROP_UINT32("max-srq", QRoceState, params.max_srq,
                       QROCE_DEF_MAX_SRQ),
    DEFINE_PROP_UINT32("state-budget-mb", QRoceState, params.state_budget_mb,
                       QROCE_DEF_STATE_BUDGET_MB),
    DEFINE_PROP_UINT32("mcast-max-groups", QRoceState,
                       params.mcast_max_groups, QROCE_DEF_MCAST_GROUPS),
    DEFINE_PROP_UINT32("mcast-max-qp-attach", QRoceState,
                       params.mcast_max_qp_attach, QROCE_DEF_MCAST_QP_ATTACH),
};

static bool qroce_get_ecn(Object *obj, Error **errp)
{
    return QROCE(obj)->params.ecn;
}

static void qroce_set_ecn(Object *obj, bool value, Error **errp)
{
    QROCE_LOCKED(QROCE(obj));

    QROCE(obj)->params.ecn = value;
}

static bool qroce_get_dcqcn(Object *obj, Error **errp)
{
    return QROCE(obj)->params.dcqcn;
}

static void qroce_set_dcqcn(Object *obj, bool value, Error **errp)
{
    QROCE_LOCKED(QROCE(obj));

    QROCE(obj)->params.dcqcn = value;
}

static bool qroce_get_link_up(Object *obj, Error **errp)
{
    QRoceState *s = QROCE(obj);

    /* the netdev's state: set_link changes it too */
    return DEVICE(obj)->realized ? !qemu_get_queue(s->nic)->link_down :
           !s->params.link_off;
}

/* x-link-up: as the set_link monitor command (§17) */
static void qroce_set_link_up(Object *obj, bool value, Error **errp)
{
    QRoceState *s = QROCE(obj);
    QROCE_LOCKED(s);

    s->params.link_off = !value;
    if (DEVICE(obj)->realized) {
        NetClientState *nc = qemu_get_queue(s->nic);

        qroce_count(s, QROCE_CNT_INJECTED_FAULTS);
        trace_qroce_inject(value ? "link-up" : "link-down", 1, 0);
        nc->link_down = !value;
        qroce_set_link_status(nc);
    }
}

static void qroce_instance_init(Object *obj)
{
    QRoceState *s = QROCE(obj);

    qemu_rec_mutex_init(&s->lock);
    qemu_spin_init(&s->db_spin);

    qroce_debug_init(obj);
    object_property_add_bool(obj, "x-link-up", qroce_get_link_up,
                             qroce_set_link_up);
    s->params.ecn = true;
    s->params.dcqcn = true;
    object_property_add_bool(obj, "ecn", qroce_get_ecn, qroce_set_ecn);
    object_property_add_bool(obj, "dcqcn", qroce_get_dcqcn, qroce_set_dcqcn);
}

static void qroce_instance_finalize(Object *obj)
{
    qemu_rec_mutex_destroy(&QROCE(obj)->lock);
}

static void qroce_class_init(ObjectClass *klass, const void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    ResettableClass *rc = RESETTABLE_CLASS(klass);
    PCIDeviceClass *k = PCI_DEVICE_CLASS(klass);

    k->realize = qroce_realize;
    k->exit = qroce_exit;
    k->vendor_id = QROCE_PCI_VENDOR_ID;
    k->device_id = QROCE_PCI_DEVICE_ID;
    k->revision = QROCE_PCI_REVISION;
    k->class_id = QROCE_PCI_CLASS;
    dc->desc = "qroce RoCEv2 RDMA NIC";
    dc->vmsd = &vmstate_qroce;
    rc->phases.hold = qroce_reset_hold;
    device_class_set_props(dc, qroce_properties);
    set_bit(DEVICE_CATEGORY_NETWORK, dc->categories);
}

static const TypeInfo qroce_info = {
    .name = TYPE_QROCE,
    .parent = TYPE_PCI_DEVICE,
    .instance_size = sizeof(QRoceState),
    .instance_init = qroce_instance_init,
    .instance_finalize = qroce_instance_finalize,
    .class_init = qroce_class_init,
    .interfaces = (InterfaceInfo[]) {
        { INTERFACE_PCIE_DEVICE },
        { },
    },
};

static void qroce_register_types(void)
{
    type_register_static(&qroce_info);
}

type_init(qroce_register_types)
