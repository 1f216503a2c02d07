/*
 * qroce's node in the libqos graph: a driver node "qroce" on any PCI bus,
 * so that the tests run on every machine that has one.  The tests map the
 * BARs and enable MSI-X themselves, as the driver's probe does.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qroce_hw.h"
#include "qroce.h"

static void qroce_foreach(QPCIDevice *dev, int devfn, void *data)
{
    *(QPCIDevice *)data = *dev;
    g_free(dev);
}

static void *qroce_get_driver(void *obj, const char *interface)
{
    QRocePCI *q = obj;

    if (!g_strcmp0(interface, "qroce")) {
        return q;
    }
    if (!g_strcmp0(interface, "pci-device")) {
        return &q->dev;
    }
    fprintf(stderr, "%s not present in qroce\n", interface);
    g_assert_not_reached();
}

static void *qroce_create(void *pci_bus, QGuestAllocator *alloc, void *addr)
{
    QRocePCI *q = g_new0(QRocePCI, 1);
    QPCIAddress *a = addr;

    qpci_device_foreach(pci_bus, a->vendor_id, a->device_id, qroce_foreach,
                        &q->dev);
    g_assert(q->dev.bus);
    q->obj.get_driver = qroce_get_driver;
    return &q->obj;
}

static void qroce_register_nodes(void)
{
    QPCIAddress addr = {
        .vendor_id = QROCE_PCI_VENDOR_ID,
        .device_id = QROCE_PCI_DEVICE_ID,
    };
    QOSGraphEdgeOptions opts = {
        .extra_device_opts = "id=qroce0,mac=52:54:00:12:34:56",
    };

    add_qpci_address(&opts, &addr);
    qos_node_create_driver("qroce", qroce_create);
    qos_node_consumes("qroce", "pci-bus", &opts);
}

libqos_init(qroce_register_nodes);
