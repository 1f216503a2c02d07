/*
 * qroce: emulated PCIe RoCEv2 RDMA NIC -- the QOM/PCI shell: the type,
 * realize, exit and reset, the properties and run-time knobs, the BARs,
 * MSI-X and the netdev glue.  The model's files and their layers are
 * listed in qroce.h; the interface is docs/hw-spec.md and
 * include/qroce_hw.h.
 *
 * Every value the guest supplies is checked before use: bad input ends in
 * a command error status, an error CQE, a QP in ERR or a counted drop,
 * logged with LOG_GUEST_ERROR -- never an abort.
 *
 * The device is not migratable (its objects and transport state have no
 * VMState yet).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/module.h"
#include "qemu/main-loop.h"
#include "qapi/error.h"
#include "hw/pci/pci_device.h"
#include "hw/pci/msix.h"
#include "hw/pci/pcie.h"
#include "hw/qdev-properties.h"
#include "migration/vmstate.h"
#include "qroce.h"
#include "qroce_regs.h"
#include "qroce_ctrl.h"
#include "qroce_eth.h"
#include "qroce_data.h"
#include "qroce_ring.h"
#include "qroce_port.h"
#include "trace.h"

/* ------------------------------------------------------------------ */
/* Network client                                                      */
/* ------------------------------------------------------------------ */

static bool qroce_can_receive(NetClientState *nc)
{
    /* RoCE frames never wait for Ethernet buffers; others are dropped. */
    return true;
}

static void qroce_set_link_status(NetClientState *nc)
{
    QRoceState *s = qemu_get_nic_opaque(nc);
    bool up = qroce_link_up(s);

    trace_qroce_link(up);
    if (s->status & QROCE_STATUS_READY) {
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
};

/* ------------------------------------------------------------------ */
/* Device                                                              */
/* ------------------------------------------------------------------ */

static void qroce_realize(PCIDevice *pdev, Error **errp)
{
    QRoceState *s = QROCE(pdev);
    DeviceState *dev = DEVICE(pdev);
    int i;

    if (s->max_qp < 16 || s->max_qp > (1u << 24) ||
        s->max_cq < 16 || s->max_cq > (1u << 24) ||
        s->max_mr < 16 || s->max_mr > (1u << 24) ||
        s->max_pd < 16 || s->max_pd > (1u << 24) ||
        s->max_ah < 16 || s->max_ah > (1u << 24) ||
        s->max_srq < 16 || s->max_srq > (1u << 24)) {
        error_setg(errp, "qroce: max-qp, max-cq, max-mr, max-pd, max-ah and "
                   "max-srq must be between 16 and 16777216");
        return;
    }

    pci_set_word(pdev->config + PCI_SUBSYSTEM_VENDOR_ID,
                 QROCE_PCI_SUBSYS_VENDOR_ID);
    pci_set_word(pdev->config + PCI_SUBSYSTEM_ID, QROCE_PCI_SUBSYS_ID);
    pdev->config[PCI_INTERRUPT_PIN] = 1;

    memory_region_init_io(&s->regs, OBJECT(s), &qroce_reg_ops, s,
                          "qroce-regs", QROCE_REGS_SIZE);
    pci_register_bar(pdev, QROCE_BAR_REGS, PCI_BASE_ADDRESS_SPACE_MEMORY,
                     &s->regs);
    memory_region_init_io(&s->db, OBJECT(s), &qroce_db_ops, s,
                          "qroce-doorbells", QROCE_DB_BAR_SIZE);
    pci_register_bar(pdev, QROCE_BAR_DB, PCI_BASE_ADDRESS_SPACE_MEMORY |
                     PCI_BASE_ADDRESS_MEM_TYPE_64, &s->db);
    memory_region_init(&s->msix, OBJECT(s), "qroce-msix", 0x2000);
    pci_register_bar(pdev, QROCE_BAR_MSIX, PCI_BASE_ADDRESS_SPACE_MEMORY,
                     &s->msix);

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

    s->pd = g_new0(QRocePD, s->max_pd);
    s->cq = g_new0(QRoceCQ, s->max_cq);
    s->qp = g_new0(QRoceQP, s->max_qp);
    s->mr = g_new0(QRoceMR, s->max_mr);
    s->ah = g_new0(QRoceAH, s->max_ah);
    s->srq = g_new0(QRoceSRQ, s->max_srq);

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
}

static void qroce_exit(PCIDevice *pdev)
{
    QRoceState *s = QROCE(pdev);
    int i;

    qroce_reset_state(s);
    qroce_data_fini(s);
    qemu_del_nic(s->nic);
    qemu_bh_delete(s->cmd_bh);
    qemu_bh_delete(s->tx_bh);
    qroce_port_fini(s);
    for (i = 0; i < QROCE_MSIX_VECTORS; i++) {
        msix_vector_unuse(pdev, i);
    }
    msix_uninit(pdev, &s->msix, &s->msix);
    g_free(s->pd);
    g_free(s->cq);
    g_free(s->qp);
    g_free(s->mr);
    g_free(s->ah);
    g_free(s->srq);
}

static void qroce_reset(DeviceState *dev)
{
    qroce_reset_state(QROCE(dev));
}

static const VMStateDescription qroce_vmstate = {
    .name = "qroce",
    .unmigratable = 1,
};

static const Property qroce_properties[] = {
    DEFINE_NIC_PROPERTIES(QRoceState, conf),
    DEFINE_PROP_UINT32("max-bt-pages", QRoceState, max_bt_pages,
                       QROCE_DEF_MAX_BT_PAGES),
    DEFINE_PROP_UINT32("max-qp", QRoceState, max_qp, QROCE_DEF_MAX_QP),
    DEFINE_PROP_UINT32("max-cq", QRoceState, max_cq, QROCE_DEF_MAX_CQ),
    DEFINE_PROP_UINT32("max-mr", QRoceState, max_mr, QROCE_DEF_MAX_MR),
    DEFINE_PROP_UINT32("max-pd", QRoceState, max_pd, QROCE_DEF_MAX_PD),
    DEFINE_PROP_UINT32("max-ah", QRoceState, max_ah, QROCE_DEF_MAX_AH),
    DEFINE_PROP_UINT32("max-srq", QRoceState, max_srq, QROCE_DEF_MAX_SRQ),
};

static bool qroce_get_ecn(Object *obj, Error **errp)
{
    return QROCE(obj)->ecn;
}

static void qroce_set_ecn(Object *obj, bool value, Error **errp)
{
    QROCE(obj)->ecn = value;
}

static bool qroce_get_dcqcn(Object *obj, Error **errp)
{
    return QROCE(obj)->dcqcn;
}

static void qroce_set_dcqcn(Object *obj, bool value, Error **errp)
{
    QROCE(obj)->dcqcn = value;
}

/*
 * The knobs a test or a developer turns while the guest runs (qom-set),
 * or sets at start (-device qroce,NAME=VALUE): congestion control, the
 * ACK timeout floor, wire faults.  docs/hw-spec.md §14 and §15.
 */
typedef struct QRoceKnob {
    const char *name;
    size_t off;
    uint32_t def;
} QRoceKnob;

#define KNOB(n, f, d) { n, offsetof(QRoceState, f), d }

static const QRoceKnob qroce_knobs[] = {
    KNOB("min-ack-timeout-us", min_ack_timeout_us, 4000),
    KNOB("ecn-threshold", ecn_threshold, 16),
    KNOB("cnp-interval-us", cnp_interval_us, 50),
    KNOB("dcqcn-line-mbps", dcqcn_line_mbps, 100000),
    KNOB("dcqcn-min-mbps", dcqcn_min_mbps, 10),
    KNOB("dcqcn-ai-mbps", dcqcn_ai_mbps, 5),
    KNOB("dcqcn-hai-mbps", dcqcn_hai_mbps, 50),
    KNOB("dcqcn-g", dcqcn_g, 4),
    KNOB("dcqcn-alpha-us", dcqcn_alpha_us, 55),
    KNOB("dcqcn-timer-us", dcqcn_timer_us, 55),
    KNOB("dcqcn-byte-kb", dcqcn_byte_kb, 1024),
    KNOB("dcqcn-f", dcqcn_f, 5),
    KNOB("tx-drop-ppm", fault_ppm[QROCE_DIR_TX][QROCE_FAULT_DROP], 0),
    KNOB("tx-dup-ppm", fault_ppm[QROCE_DIR_TX][QROCE_FAULT_DUP], 0),
    KNOB("tx-reorder-ppm", fault_ppm[QROCE_DIR_TX][QROCE_FAULT_REORDER], 0),
    KNOB("tx-corrupt-ppm", fault_ppm[QROCE_DIR_TX][QROCE_FAULT_CORRUPT], 0),
    KNOB("rx-drop-ppm", fault_ppm[QROCE_DIR_RX][QROCE_FAULT_DROP], 0),
    KNOB("rx-dup-ppm", fault_ppm[QROCE_DIR_RX][QROCE_FAULT_DUP], 0),
    KNOB("rx-reorder-ppm", fault_ppm[QROCE_DIR_RX][QROCE_FAULT_REORDER], 0),
    KNOB("rx-corrupt-ppm", fault_ppm[QROCE_DIR_RX][QROCE_FAULT_CORRUPT], 0),
};

#undef KNOB

static void qroce_instance_init(Object *obj)
{
    QRoceState *s = QROCE(obj);
    size_t i;

    for (i = 0; i < ARRAY_SIZE(qroce_knobs); i++) {
        uint32_t *v = (uint32_t *)((uint8_t *)s + qroce_knobs[i].off);

        *v = qroce_knobs[i].def;
        object_property_add_uint32_ptr(obj, qroce_knobs[i].name, v,
                                       OBJ_PROP_FLAG_READWRITE);
    }
    s->ecn = true;
    s->dcqcn = true;
    object_property_add_bool(obj, "ecn", qroce_get_ecn, qroce_set_ecn);
    object_property_add_bool(obj, "dcqcn", qroce_get_dcqcn, qroce_set_dcqcn);
    object_property_add_uint64_ptr(obj, "fault-seed", &s->fault_seed,
                                   OBJ_PROP_FLAG_READWRITE);
}

static void qroce_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    PCIDeviceClass *k = PCI_DEVICE_CLASS(klass);

    k->realize = qroce_realize;
    k->exit = qroce_exit;
    k->vendor_id = QROCE_PCI_VENDOR_ID;
    k->device_id = QROCE_PCI_DEVICE_ID;
    k->revision = QROCE_PCI_REVISION;
    k->class_id = QROCE_PCI_CLASS;
    dc->desc = "qroce RoCEv2 RDMA NIC";
    dc->vmsd = &qroce_vmstate;
    device_class_set_legacy_reset(dc, qroce_reset);
    device_class_set_props(dc, qroce_properties);
    set_bit(DEVICE_CATEGORY_NETWORK, dc->categories);
}

static const TypeInfo qroce_info = {
    .name = TYPE_QROCE,
    .parent = TYPE_PCI_DEVICE,
    .instance_size = sizeof(QRoceState),
    .instance_init = qroce_instance_init,
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
