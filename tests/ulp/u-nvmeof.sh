#!/bin/sh
# NVMe over Fabrics recovery (make test-ulp): nvmet-rdma in guest 1
# exports a 128 MiB RAM disk, guest 2's nvme-rdma connects (t-nvmeof.sh
# covers discovery, IPv6 and port bounces); the data check of the other
# ULP tests (64 MiB, O_DIRECT, 16 at once) runs once plainly, once while
# guest 2's link is down for 2 s, once while one of nvme-rdma's QPs
# is moved to the error state: the host reconnects ("Successfully
# reconnected") and the data compares equal, and once while the target's
# guest migrates live to a new QEMU on a new port of the switch, and once
# while the host's guest does (the side that registers memory: nvme-rdma
# fast-registers each I/O's pages, and must go on doing so on the new
# QEMU): the I/O ends and the data compares equal; disconnect is clean.
. "$(dirname "$0")/../lib/lib.sh"
. "$(dirname "$0")/ulp-lib.sh"
qr_init u-nvmeof
QR_TIMEOUT=300
NQN=nqn.2026-11.org.qroce:recover

# Ethernet MTU 1500 (path MTU 1024), as in u-iser.sh: the recovery
# checks put their fault a second into a 64 MiB round trip, and at 9000
# the I/O can be over by then (t-nvmeof and t-nfs run at 9000)
# (on the switch, where a guest can move: qr_migrate)
qr_boot 2 mtu=1500 switch || { qr_fail "qr_boot 2: the guests did not boot"; qr_finish; }

target_up() {
	gx 1 "$QLOAD; qload brd rd_nr=1 rd_size=131072 && qload nvmet_rdma && $ULP_CONFIGFS &&
		cd /sys/kernel/config/nvmet && mkdir subsystems/$NQN &&
		echo 1 >subsystems/$NQN/attr_allow_any_host &&
		mkdir subsystems/$NQN/namespaces/1 &&
		echo -n /dev/ram0 >subsystems/$NQN/namespaces/1/device_path &&
		echo 1 >subsystems/$NQN/namespaces/1/enable &&
		mkdir ports/1 && echo rdma >ports/1/addr_trtype && echo ipv4 >ports/1/addr_adrfam &&
		echo 10.0.0.1 >ports/1/addr_traddr && echo 4420 >ports/1/addr_trsvcid &&
		ln -s /sys/kernel/config/nvmet/subsystems/$NQN ports/1/subsystems/$NQN &&
		echo target up" >"$QR_DIR/target.out" 2>&1
	rc=$?
	cat "$QR_DIR/target.out"
	[ $rc -eq 0 ] && grep -q 'target up' "$QR_DIR/target.out"
}

# connect with a short reconnect delay; the namespace is the data's path
connect() {
	gx 2 "$QLOAD; qload nvme_rdma && mkdir -p /etc/nvme &&
		u=\$(cat /proc/sys/kernel/random/uuid) && echo \$u >/etc/nvme/hostid &&
		echo nqn.2014-08.org.nvmexpress:uuid:\$u >/etc/nvme/hostnqn &&
		nvme connect -t rdma -n $NQN -a 10.0.0.1 -s 4420 --reconnect-delay=1 &&
		i=0; until [ -b /dev/nvme0n1 ] || [ \$i -ge 100 ]; do sleep 0.1; i=\$((i + 1)); done;
		[ -b /dev/nvme0n1 ] && echo /dev/nvme0n1 >/tmp/ulp.disk &&
		cat /sys/class/nvme/nvme0/transport" >"$QR_DIR/connect.out" 2>&1 &&
		ulp_data >>"$QR_DIR/connect.out"
	rc=$?
	cat "$QR_DIR/connect.out"
	[ $rc -eq 0 ] && grep -qx rdma "$QR_DIR/connect.out"
}

disconnect() {
	gx 2 "nvme disconnect -n $NQN && sleep 0.5 && [ ! -b /dev/nvme0n1 ] && echo gone" \
		>"$QR_DIR/disc.out" 2>&1
	rc=$?
	cat "$QR_DIR/disc.out"
	[ $rc -eq 0 ] && grep -q gone "$QR_DIR/disc.out"
}

qr_check "target: nvmet-rdma on 10.0.0.1:4420, a 128 MiB brd namespace" target_up
qr_check "host: nvme connect over RDMA, $ULP_MIB MiB of random data ready" connect
qr_check "$ULP_MIB MiB written and read back, O_DIRECT, 16 at once: checksums equal" ulp_roundtrip
qr_check "recovery: link down 2 s during the I/O: it completes (RC retries or a reconnect), data equal" \
	ulp_recover link 'Successfully reconnected'
qr_check "recovery: an nvme-rdma QP to ERR (qp-fatal) during the I/O, the host reconnects, data equal" \
	ulp_recover qp 'Successfully reconnected'
qr_check "recovery: the target's guest migrated live during the I/O, data equal" \
	ulp_recover move 'Successfully reconnected'
ulp_move_log
qr_check "recovery: the host's guest (fast registration per I/O) migrated live during 16-deep O_DIRECT I/O, registers again, data equal" \
	ulp_recover move-host 'Successfully reconnected'
ulp_move_log host
qr_check "nvme disconnect: the namespace goes" disconnect
qr_finish
