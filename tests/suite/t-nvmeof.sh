#!/bin/sh
# NVMe over Fabrics on qroce (issue 15): the kernel's nvmet-rdma target in
# guest 1 exports a 128 MiB RAM disk (brd) through configfs on an rdma
# port; guest 2's nvme-rdma host discovers and connects with Debian's
# nvme-cli, writes 64 MiB of random data, reads it back and compares
# checksums with the data and with the target's disk, then disconnects.
# Over IPv4, over IPv6, and again after the target took its port down and
# up.  nvme-rdma needs fast registration (IB_DEVICE_MEM_MGT_EXTENSIONS):
# every I/O is a REG_MR work request, an RDMA READ or WRITE by the target
# through that rkey, and a SEND with Invalidate or a LOCAL_INV.
. "$(dirname "$0")/../lib/lib.sh"
qr_init nvmeof
QR_TIMEOUT=300
NQN=nqn.2026-11.org.qroce:ramdisk
MIB=${QR_NVMEOF_MIB:-64}

qr_boot 2 || { qr_fail "qr_boot 2: the guests did not boot"; qr_finish; }

# gx G CMD: qr_exec of a command written over several lines (the agent
# takes one line)
gx() {
	qr_exec "$1" "$(printf '%s' "$2" | tr '\n\t' '  ')"
}

# qload: a module of the image with its dependencies; parameters go to
# the module itself (the last of its list)
QLOAD='qload() { n=$1; shift; for m in $(cat /lib/modules/qroce/$n.list); do [ -d /sys/module/$(echo ${m%.ko} | tr - _) ] && continue; if [ ${m%.ko} = $(echo $n | tr _ -) ] || [ ${m%.ko} = $n ]; then insmod /lib/modules/qroce/$m "$@" || return 1; else insmod /lib/modules/qroce/$m || return 1; fi; done; }'

target_up() { # the subsystem, its namespace and two rdma ports
	gx 1 "$QLOAD; qload brd rd_nr=1 rd_size=131072 && qload nvmet_rdma &&
		{ mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config; } &&
		cd /sys/kernel/config/nvmet && mkdir subsystems/$NQN &&
		echo 1 >subsystems/$NQN/attr_allow_any_host &&
		mkdir subsystems/$NQN/namespaces/1 &&
		echo -n /dev/ram0 >subsystems/$NQN/namespaces/1/device_path &&
		echo 1 >subsystems/$NQN/namespaces/1/enable &&
		mkdir ports/1 && echo rdma >ports/1/addr_trtype && echo ipv4 >ports/1/addr_adrfam &&
		echo 10.0.0.1 >ports/1/addr_traddr && echo 4420 >ports/1/addr_trsvcid &&
		ln -s /sys/kernel/config/nvmet/subsystems/$NQN ports/1/subsystems/$NQN &&
		mkdir ports/2 && echo rdma >ports/2/addr_trtype && echo ipv6 >ports/2/addr_adrfam &&
		echo fd00::1 >ports/2/addr_traddr && echo 4420 >ports/2/addr_trsvcid &&
		ln -s /sys/kernel/config/nvmet/subsystems/$NQN ports/2/subsystems/$NQN && echo target up" \
		>"$QR_DIR/target.out" 2>&1
	rc=$?
	cat "$QR_DIR/target.out"
	return $rc
}

host_up() {
	gx 2 "$QLOAD; qload nvme_rdma && mkdir -p /etc/nvme &&
		u=\$(cat /proc/sys/kernel/random/uuid) && echo \$u >/etc/nvme/hostid &&
		echo nqn.2014-08.org.nvmexpress:uuid:\$u >/etc/nvme/hostnqn &&
		dd if=/dev/urandom of=/tmp/data bs=1M count=$MIB 2>/dev/null && md5sum /tmp/data" \
		>"$QR_DIR/host.out" 2>&1
	rc=$?
	cat "$QR_DIR/host.out"
	return $rc
}

discover() { # discover ADDRESS FAMILY-NAME: the log page names our subsystem
	qr_exec 2 "nvme discover -t rdma -a $1 -s 4420" >"$QR_DIR/disc.$2" 2>&1
	rc=$?
	cat "$QR_DIR/disc.$2"
	[ $rc = 0 ] && grep -q "subnqn: *$NQN" "$QR_DIR/disc.$2" && grep -q 'trtype: *rdma' "$QR_DIR/disc.$2"
}

# roundtrip ADDRESS NAME: connect, write the data, read it back, compare
# with the data and with the target's RAM disk, disconnect
roundtrip() {
	gx 2 "i=0; nvme connect -t rdma -n $NQN -a $1 -s 4420 &&
		until [ -b /dev/nvme0n1 ] || [ \$i -ge 100 ]; do sleep 0.1; i=\$((i + 1)); done;
		[ -b /dev/nvme0n1 ] && cat /sys/class/nvme/nvme0/transport &&
		dd if=/tmp/data of=/dev/nvme0n1 bs=1M count=$MIB oflag=direct 2>/dev/null &&
		dd if=/dev/nvme0n1 of=/tmp/back bs=1M count=$MIB iflag=direct 2>/dev/null &&
		md5sum /tmp/data /tmp/back; rc=\$?; nvme disconnect -n $NQN; exit \$rc" \
		>"$QR_DIR/rt.$2" 2>&1
	rc=$?
	cat "$QR_DIR/rt.$2"
	[ $rc = 0 ] || return 1
	grep -qx rdma "$QR_DIR/rt.$2" || { echo "not an rdma controller"; return 1; }
	want=$(awk '$2 == "/tmp/data" { print $1 }' "$QR_DIR/rt.$2")
	back=$(awk '$2 == "/tmp/back" { print $1 }' "$QR_DIR/rt.$2")
	# O_DIRECT: nvmet's bios go to brd past the bdev's page cache, which
	# may still hold what port_bounce wrote or an earlier round read
	qr_exec 1 "dd if=/dev/ram0 bs=1M count=$MIB iflag=direct 2>/dev/null | md5sum" >"$QR_DIR/disk.$2" 2>&1
	disk=$(cut -d' ' -f1 "$QR_DIR/disk.$2")
	echo "written $want, read back $back, target's disk $disk"
	[ -n "$want" ] && [ "$want" = "$back" ] && [ "$want" = "$disk" ]
}

# the target takes its IPv4 port down (the host's controller, if any,
# loses it) and up again; then clear the disk so the next round proves
# itself
port_bounce() {
	gx 1 "cd /sys/kernel/config/nvmet && rm ports/1/subsystems/$NQN && sleep 1 &&
		ln -s /sys/kernel/config/nvmet/subsystems/$NQN ports/1/subsystems/$NQN &&
		dd if=/dev/zero of=/dev/ram0 bs=1M count=$MIB oflag=direct 2>/dev/null && echo bounced" >"$QR_DIR/bounce" 2>&1
	rc=$?
	cat "$QR_DIR/bounce"
	return $rc
}

fastreg() { # the device offers what nvme-rdma needs
	qr_exec 2 'ibv_devinfo -v -d qroce_0' >"$QR_DIR/devinfo" 2>&1 || return 1
	grep -E 'MEM_MGT_EXTENSIONS|max_fast_reg|page_size_cap' "$QR_DIR/devinfo"
	grep -q MEM_MGT_EXTENSIONS "$QR_DIR/devinfo"
}

qr_check "ibv_devinfo -v: MEM_MGT_EXTENSIONS (fast registration)" fastreg
qr_check "target: nvmet-rdma ports on 10.0.0.1 and fd00::1, a 128 MiB brd namespace" target_up
qr_check "host: nvme-rdma loaded, $MIB MiB of random data ready" host_up
qr_check "nvme discover over IPv4 lists the subsystem" discover 10.0.0.1 ipv4
qr_check "nvme connect over IPv4: $MIB MiB written and read back, checksums equal" roundtrip 10.0.0.1 ipv4
qr_check "nvme discover over IPv6 lists the subsystem" discover fd00::1 ipv6
qr_check "nvme connect over IPv6: $MIB MiB written and read back, checksums equal" roundtrip fd00::1 ipv6
qr_check "target port down and up" port_bounce
qr_check "nvme connect after the target's port came back: the same round trip" roundtrip 10.0.0.1 again
qr_finish
