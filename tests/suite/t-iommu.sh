#!/bin/sh
# qroce behind a vIOMMU: both guests boot with an intel-iommu in front of
# their devices and the kernel using it (intel_iommu=on iommu=nopt), so
# every DMA of the device -- command queue, event queues, rings, WQEs,
# payload -- goes through the I/O page tables the driver's DMA mappings
# made, and the device follows the IOMMU's translation and permissions
# (hw-spec §13).  The guest's kernel says the IOMMU is on and the qroce
# function is in an IOMMU group; ibv_rc_pingpong, perftest's WRITE and
# READ bandwidth and qroce-rdma's WRITE/READ patterns (every byte
# compared) pass between them.
. "$(dirname "$0")/../lib/lib.sh"
qr_init iommu
QR_TIMEOUT=180
qr_boot 2 iommu || { qr_fail "qr_boot 2 iommu: the guests did not boot"; qr_finish; }

# on: the kernel's DMA remapping is on and qroce's function is behind it
on() {
	qr_exec "$1" "dmesg | grep 'DMAR: IOMMU enabled'; for g in /sys/bus/pci/drivers/qroce_en/0000:*/iommu_group; do echo qroce group \$(readlink \$g); done" \
		>"$QR_DIR/on.$1" 2>&1
	cat "$QR_DIR/on.$1"
	grep -q 'DMAR: IOMMU enabled' "$QR_DIR/on.$1" &&
		grep -Eq '^qroce group .*/iommu_groups/[0-9]+$' "$QR_DIR/on.$1"
}

# patterns: qroce-rdma's atomics and WRITE/READ patterns, compared
patterns() {
	qr_server_client iom 18516 1 "qroce-rdma -d qroce_0 -g 1 -a 100 -k 10 -W 5 -l" \
		2 "qroce-rdma -d qroce_0 -g 1 -a 100 -k 10 -W 5 10.0.0.1" 120 &&
		! grep -q '^FAIL' "$QR_DIR/iom.cli" "$QR_DIR/iom.srv" &&
		grep -q '^PASS the pattern region (1 MiB) is what the client wrote' "$QR_DIR/iom.srv" &&
		grep -Eq '^client: [1-9][0-9]* WRITE/READ pattern rounds, each read back the same' "$QR_DIR/iom.cli"
}

qr_check "guest 1: DMA remapping on, qroce in an IOMMU group" on 1
qr_check "guest 2: DMA remapping on, qroce in an IOMMU group" on 2
qr_check "ibv_rc_pingpong -n 500 -s 4096 through the vIOMMU" qr_pingpong ibv_rc_pingpong -n 500 -s 4096
qr_check "ib_write_bw -s 65536 -n 200 through the vIOMMU" qr_perftest ib_write_bw -s 65536 -n 200
qr_check "ib_read_bw -s 65536 -n 200 through the vIOMMU" qr_perftest ib_read_bw -s 65536 -n 200
qr_check "qroce-rdma atomics and WRITE/READ patterns through the vIOMMU, every byte compared" patterns
qr_finish
