#!/bin/sh
# qroce as a Debian 13 user gets it (make image-debian): two Debian guests
# booted by systemd, the modules built by DKMS and loaded by udev for the
# device's modalias, the RDMA device named by rdma-core's udev rules, and
# the distribution's own binaries (ibverbs-utils, rdmacm-utils, perftest)
# between them; then qroce-dkms reinstalled and the modules reloaded under
# systemd.  make test-distro.
. "$(dirname "$0")/../lib/lib.sh"
QR_NEED="$QR_QEMU $QR_DEBIAN/disk.raw $QR_DEBIAN/vmlinuz $QR_DEBIAN/initrd.img"
qr_init distro
t0=$(date +%s)
qr_boot 2 debian || { qr_fail "qr_boot 2 debian: the guests did not boot"; qr_finish; }
qr_log "both agents ready $(($(date +%s) - t0)) s after the start (TCG: $QR_ACCEL_ARGS)"

# the boot: systemd done and not degraded (the failed units if it is)
running() {
	QR_TIMEOUT=400 qr_exec "$1" 'systemctl is-system-running --wait; s=$(systemctl is-system-running); [ "$s" = running ] || systemctl --failed --no-pager; systemd-analyze 2>/dev/null | head -n 1; [ "$s" = running ]'
}
for g in 1 2; do
	qr_check "guest $g: systemctl is-system-running says running (not degraded)" running $g
done
# systemd's own measure of guest 1's boot, for the record
qr_exec 1 'systemd-analyze' 2>/dev/null | sed -n '1s/^/# [distro] guest 1: /p'

# the device's name: the one RDMA device there is, as rdma-core's rules
# named it (the kernel's name is qroce_0)
DEV=$(qr_exec 1 'ls /sys/class/infiniband' 2>/dev/null | head -n 1)
DEV2=$(qr_exec 2 'ls /sys/class/infiniband' 2>/dev/null | head -n 1)
qr_log "RDMA devices: guest 1 '$DEV', guest 2 '$DEV2'"
named() { # G DEV
	qr_exec "$1" "rdma link show; udevadm info /sys/class/infiniband/$2; d=/sys/class/infiniband/$2/device; if [ -e \$d ]; then readlink -f \$d; else echo 'no parent device in sysfs: rdma_rename has no PCI path to name it by'; fi" || return 1
	case $2 in '' | qroce_*) echo "not renamed by rdma-core's rules: '$2'"; return 1 ;; esac
	qr_exec "$1" "rdma link show | grep -E '^link $2/1 state ACTIVE .*netdev '"
}
modules() { # G: qroce_en and qroce_ib loaded (the agent loads neither: udev
	# did, by modalias), and from DKMS's directory of the running kernel
	qr_exec "$1" 'lsmod | grep -E "^qroce_(en|ib) "; for m in qroce_en qroce_ib; do modinfo -F filename $m; done; modinfo -F alias qroce_en; cat /sys/bus/pci/devices/*/modalias | grep -i v00001B36d00000015' >"$QR_DIR/mod.$1" || return 1
	cat "$QR_DIR/mod.$1"
	[ "$(grep -cE '^qroce_(en|ib) ' "$QR_DIR/mod.$1")" -eq 2 ] &&
		[ "$(grep -c '/updates/dkms/qroce_' "$QR_DIR/mod.$1")" -eq 2 ]
}
devinfo() { # G DEV: PORT_ACTIVE, RoCE v2 GIDs of the guest's IPv4 and IPv6
	qr_exec "$1" "ibv_devinfo -v -d $2" >"$QR_DIR/devinfo.$1" || return 1
	grep -E 'state:|GID\[' "$QR_DIR/devinfo.$1"
	grep -q 'state:.*PORT_ACTIVE' "$QR_DIR/devinfo.$1" &&
		grep -q "GID\[ *[0-9]*\]:.*::ffff:10.0.0.$1, RoCE v2" "$QR_DIR/devinfo.$1" &&
		grep -q "GID\[ *[0-9]*\]:.*fd00::$1, RoCE v2" "$QR_DIR/devinfo.$1"
}
for g in 1 2; do
	dev=$DEV
	[ $g = 2 ] && dev=$DEV2
	qr_check "guest $g: udev loaded qroce_en and qroce_ib (DKMS's) by modalias" modules $g
	qr_check "guest $g: rdma-core's udev rules named the device ($dev), link ACTIVE" named $g "$dev"
	qr_check "guest $g: ibv_devinfo: $dev PORT_ACTIVE with its RoCE v2 GIDs" devinfo $g "$dev"
done

# the binaries are the packages' (ibverbs-utils, rdmacm-utils, perftest)
qr_check "ibv_rc_pingpong, rping, ib_write_bw are /usr/bin's, from the packages" \
	qr_exec 1 'for b in ibv_rc_pingpong rping ib_write_bw; do p=$(command -v $b); echo "$p: $(dpkg -S $p)"; [ $p = /usr/bin/$b ] || exit 1; done'

GID=$(qr_gid_v4 1 "$DEV" 2>/dev/null)
pingpong() {
	qr_bg 1 srv "ibv_rc_pingpong -d $DEV -g $GID $*" || return 1
	qr_wait_listen 1 18515 || { echo "server did not listen"; qr_bg_wait 1 srv 5; return 1; }
	QR_TIMEOUT=300 qr_exec 2 "ibv_rc_pingpong -d $DEV2 -g $GID $* 10.0.0.1" >"$QR_DIR/pp.cli"
	crc=$?
	qr_bg_wait 1 srv 300 >"$QR_DIR/pp.srv"
	src=$?
	sed 's/^/client: /' "$QR_DIR/pp.cli"
	sed 's/^/server: /' "$QR_DIR/pp.srv"
	[ $crc -eq 0 ] && [ $src -eq 0 ] &&
		grep -Eq '^[0-9]+ iters in [0-9.]+ seconds' "$QR_DIR/pp.cli" &&
		grep -Eq '^[0-9]+ iters in [0-9.]+ seconds' "$QR_DIR/pp.srv"
}
rping_pair() {
	qr_bg 1 rping 'rping -s -a 10.0.0.1 -C 20 -S 4096 -v' || return 1
	qr_wait_cm_listen 1 7174 || { qr_bg_wait 1 rping 5; return 1; }
	QR_TIMEOUT=200 qr_exec 2 'rping -c -a 10.0.0.1 -C 20 -S 4096 -v' >"$QR_DIR/rping.cli"
	crc=$?
	qr_bg_wait 1 rping 120 >"$QR_DIR/rping.srv"
	src=$?
	tail -n 2 "$QR_DIR/rping.cli"
	tail -n 2 "$QR_DIR/rping.srv"
	[ $crc -eq 0 ] && [ $src -eq 0 ] &&
		[ "$(grep -c '^ping data: rdma-ping-' "$QR_DIR/rping.cli")" -eq 20 ]
}
qr_check "ibv_rc_pingpong guest 2 -> guest 1 ($DEV, GID $GID), 500 iterations" pingpong -n 500
qr_check "rping guest 2 -> guest 1, 20 pings verified" rping_pair
QR_PT="1 $DEV $DEV2 10.0.0.1"
qr_check "ib_write_bw guest 2 -> guest 1 (perftest's)" qr_perftest ib_write_bw -s 65536 -n 200

# qroce-dkms again from its deb (DKMS rebuilds in the guest), then the
# modules reloaded under systemd: udev loads qroce_ib again for the
# auxiliary device, the link comes back ACTIVE (addressed again: the
# agent addresses at boot)
reinstall() {
	QR_TIMEOUT=1200 qr_exec 1 'cd /root/debs && t=$(date +%s) && DEBIAN_FRONTEND=noninteractive apt-get install -y --reinstall ./qroce-dkms_*.deb >/tmp/reinstall.log 2>&1; r=$?; tail -n 15 /tmp/reinstall.log; echo "reinstall: $(($(date +%s) - t)) s"; dkms status; [ $r -eq 0 ] && dkms status qroce -k $(uname -r) | grep -q ": installed"'
}
# (one line: the agent takes a command a line); the device appears as
# qroce_0 and udev's rdma_rename names it a moment later: wait for it
reload() {
	QR_TIMEOUT=300 qr_exec 1 "modprobe -r qroce_ib qroce_en || exit 1; lsmod | grep -q '^qroce_' && { echo 'still loaded'; exit 1; }; modprobe qroce_en || exit 1; i=0; until [ -n \"\$(ls /sys/class/infiniband_verbs 2>/dev/null | grep uverbs)\" ]; do i=\$((i+1)); [ \$i -gt 600 ] && { echo 'no uverbs device'; exit 1; }; sleep 0.1; done; udevadm settle; i=0; until [ \"\$(ls /sys/class/infiniband)\" = $DEV ]; do i=\$((i+1)); [ \$i -gt 100 ] && break; sleep 0.1; done; d=\$(ls /sys/class/infiniband); echo \"device \$d\"; ip link set \$QR_IF mtu \$QR_MTU && ip link set \$QR_IF up && ip addr add \$QR_IP dev \$QR_IF && ip -6 addr add \$QR_IP6 dev \$QR_IF nodad || exit 1; i=0; until ibv_devinfo -d \$d | grep -q PORT_ACTIVE; do i=\$((i+1)); [ \$i -gt 600 ] && { ibv_devinfo -d \$d; exit 1; }; sleep 0.1; done; lsmod | grep -E '^(qroce_(en|ib)|ib_uverbs) '; rdma link show; [ \$d = $DEV ]" >"$QR_DIR/reload.out"
	rc=$?
	cat "$QR_DIR/reload.out"
	[ $rc -eq 0 ] && grep -q "^device $DEV\$" "$QR_DIR/reload.out" &&
		grep -q "^link $DEV/1 state ACTIVE" "$QR_DIR/reload.out"
}
qr_check "guest 1: apt-get install --reinstall ./qroce-dkms*.deb: DKMS rebuilds and installs qroce" reinstall
qr_check "guest 1: modprobe -r qroce_ib qroce_en; modprobe qroce_en: $DEV back PORT_ACTIVE" reload
qr_check "ibv_rc_pingpong after the reload" pingpong -n 200

journal() {
	qr_exec "$1" 'journalctl -b -p err --no-pager >/tmp/err.log; cat /tmp/err.log; ! grep -Ei "qroce|rdma" /tmp/err.log'
}
for g in 1 2; do
	qr_check "guest $g: journalctl -p err -b has no line of qroce or rdma" journal $g
done
qr_cleanup

# qroce-vm on the same image: the device by its udev name in QR_DEV, the
# distribution's ibv_rc_pingpong between two fresh guests, TAP, status 0
vm_debian() {
	"$QR_TOP/qroce-vm" --image debian \
		--exec '2: ibv_rc_pingpong -d $QR_DEV -g $QR_GID -n 200 &' \
		--exec '1: ibv_rc_pingpong -d $QR_DEV -g $QR_GID -n 200 $QR_ADDR_2' \
		--exec '1: echo "device $QR_DEV"' >"$QR_DIR/vm.out" 2>&1
	rc=$?
	cat "$QR_DIR/vm.out"
	[ $rc -eq 0 ] && ! grep -q '^not ok' "$QR_DIR/vm.out" &&
		[ "$(grep -c '200 iters in ' "$QR_DIR/vm.out")" -eq 2 ] &&
		grep -q "^# \[g1\] device $DEV\$" "$QR_DIR/vm.out"
}
qr_check "qroce-vm --image debian: ibv_rc_pingpong -d \$QR_DEV ($DEV) between two guests, status 0" vm_debian
qr_finish
