# The machine qroce's guests run on: q35 with the qroce NIC, and virtio-net
# for the rdma_rxe comparison.  Nothing else (the harness uses -nodefaults).
CONFIG_Q35=y
CONFIG_VIRTIO_PCI=y
CONFIG_VIRTIO_NET=y
CONFIG_QROCE=y
