# The machine qroce's guests run on: q35 with the qroce NIC, and virtio-net
# for the rdma_rxe comparison.  Nothing else (the harness uses -nodefaults).
# The pc machine (i440FX) too: it is the x86 machine of the libqos graph
# the qtests run on (qos-test).
CONFIG_Q35=y
CONFIG_I440FX=y
CONFIG_VIRTIO_PCI=y
CONFIG_VIRTIO_NET=y
CONFIG_QROCE=y
# intel-iommu: a guest whose driver maps DMA through a vIOMMU
# (qr_boot iommu), as driver developers test their DMA mappings
CONFIG_VTD=y
