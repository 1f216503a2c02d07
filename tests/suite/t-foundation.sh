#!/bin/sh
# Foundation: two guests boot, qroce binds (the Ethernet driver qroce_en to
# the PCI function, the RDMA driver qroce_ib to its auxiliary device),
# ibv_devinfo reports the port and its RoCEv2 GID, the netdevs ping each
# other, the two modules unload and load again in either order;
# QEMU's own handling of a missing netdev and of a bad property; files
# copied in and out of a running guest over its management NIC (user
# networking: the guest fetches from the host's 10.0.2.2, the host from
# the guest's web server through a hostfwd port).
. "$(dirname "$0")/../lib/lib.sh"
qr_init foundation

qemu_alone() { # run QEMU with a qroce device and no guest for a moment
	timeout 10 "$QR_QEMU" -nodefaults -machine q35 -accel tcg -display none \
		-L /usr/share/qemu -L /usr/share/seabios -S "$@" \
		-qmp "unix:$QR_DIR/qmp.sock,server=on,wait=off" >"$QR_DIR/alone.log" 2>&1 &
	pid=$!
	sleep 2
	if kill -0 $pid 2>/dev/null; then
		kill $pid
		wait $pid 2>/dev/null
		return 0
	fi
	wait $pid
	return $?
}

no_netdev() {
	qemu_alone -device qroce || { cat "$QR_DIR/alone.log"; return 1; }
	grep -i "qroce.*no peer\|has no peer" "$QR_DIR/alone.log"
}
bad_property() {
	timeout 10 "$QR_QEMU" -nodefaults -machine q35 -accel tcg -display none \
		-L /usr/share/qemu -L /usr/share/seabios -device qroce,mac=zz >"$QR_DIR/bad.log" 2>&1
	rc=$?
	cat "$QR_DIR/bad.log"
	[ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -qi "mac" "$QR_DIR/bad.log"
}
bad_limit() {
	timeout 10 "$QR_QEMU" -nodefaults -machine q35 -accel tcg -display none \
		-L /usr/share/qemu -L /usr/share/seabios -device qroce,max-qp=3 >"$QR_DIR/bad2.log" 2>&1
	rc=$?
	cat "$QR_DIR/bad2.log"
	[ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q "max-qp" "$QR_DIR/bad2.log" || return 1
	# device memory: 0 or a power of two, 4 KiB..64 MiB
	timeout 10 "$QR_QEMU" -nodefaults -machine q35 -accel tcg -display none \
		-L /usr/share/qemu -L /usr/share/seabios -device qroce,dm-size=5000 >"$QR_DIR/bad3.log" 2>&1
	rc=$?
	cat "$QR_DIR/bad3.log"
	[ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q "dm-size" "$QR_DIR/bad3.log"
}
# the harness itself: a command that outlives QR_TIMEOUT is killed in
# the guest with everything it started, reported as 124, and the next
# command runs (a hung check must not block every later one)
agent_timeout() {
	t0=$(date +%s)
	QR_TIMEOUT=3 qr_exec 1 'sleep 171 & sleep 172; echo not killed' 2>"$QR_DIR/killed"
	arc=$?
	t=$(($(date +%s) - t0))
	qr_exec 1 'echo next; ps' >"$QR_DIR/after" || return 1
	grep -c 'sleep 17[12]' "$QR_DIR/after"
	# a command's own status 124 is passed on, and is not a time-out
	qr_exec 1 'exit 124' 2>"$QR_DIR/own"
	orc=$?
	cat "$QR_DIR/killed" "$QR_DIR/own"
	echo "status $arc after $t s; own 124: $orc"
	[ $arc = 124 ] && [ $t -lt 15 ] && grep -q '^next$' "$QR_DIR/after" &&
		! grep -q 'sleep 17[12]' "$QR_DIR/after" &&
		grep -q 'timed out after 3 s, killed' "$QR_DIR/killed" &&
		[ $orc = 124 ] && ! grep -q 'timed out' "$QR_DIR/own"
}
# the harness: a command line that lost its start on the way (as
# busybox's read once dropped one) is not run, and the agent says so
agent_damaged() {
	ad=$QR_DIR/g1
	start=$(wc -c <"$ad/agent.log")
	printf '%s\n' '2a4.c2 ] || { echo ran >/tmp/damaged; }' >"$ad/agent.in"
	i=0
	until tail -c +$((start + 1)) "$ad/agent.log" | grep -q '^@@QRBAD$'; do
		i=$((i + 1))
		[ $i -gt 100 ] && { echo "no @@QRBAD"; return 1; }
		sleep 0.1
	done
	qr_exec 1 '[ ! -e /tmp/damaged ] && echo "not run"'
}

qr_check "qemu -device qroce without netdev starts and warns" no_netdev
qr_check "invalid mac property is refused with a message" bad_property
qr_check "invalid max-qp and dm-size properties are refused with a message" bad_limit

qr_boot 2 mgmt || { qr_fail "qr_boot 2 mgmt: the guests did not boot"; qr_finish; }

binds() { # qroce_en bound the PCI function, qroce_ib its auxiliary device, qroce_0
	qr_exec "$1" 'cat /sys/bus/pci/drivers/qroce_en/*/vendor /sys/bus/pci/drivers/qroce_en/*/device; ls /sys/class/infiniband; for a in /sys/bus/auxiliary/devices/*; do echo "aux ${a##*/} $(basename $(readlink $a/driver))"; done' >"$QR_DIR/binds.$1" || return 1
	cat "$QR_DIR/binds.$1"
	grep -qx 0x1b36 "$QR_DIR/binds.$1" && grep -qx 0x0015 "$QR_DIR/binds.$1" &&
		grep -qx qroce_0 "$QR_DIR/binds.$1" &&
		grep -qx "aux qroce_en.rdma.0 qroce_ib" "$QR_DIR/binds.$1"
}
devinfo() { # ibv_devinfo -v: device, active Ethernet port, RoCEv2 GID of our IPv4
	g=$1
	qr_exec $g 'ibv_devinfo -v -d qroce_0' >"$QR_DIR/devinfo.$g" || return 1
	cat "$QR_DIR/devinfo.$g"
	grep -q "hca_id:[[:space:]]*qroce_0" "$QR_DIR/devinfo.$g" &&
		grep -q "state:[[:space:]]*PORT_ACTIVE" "$QR_DIR/devinfo.$g" &&
		grep -q "link_layer:[[:space:]]*Ethernet" "$QR_DIR/devinfo.$g" &&
		grep -q "GID\[ *[0-9]*\]:.*::ffff:10\.0\.0\.$g, RoCE v2" "$QR_DIR/devinfo.$g"
}
gid_sysfs() { # the GID table in sysfs: the IPv4-mapped GID, typed RoCE v2
	qr_exec "$1" 'cd /sys/class/infiniband/qroce_0/ports/1; for i in 0 1 2 3; do echo "$(cat gids/$i) $(cat gid_attrs/types/$i 2>/dev/null)"; done' >"$QR_DIR/gids.$1" || return 1
	cat "$QR_DIR/gids.$1"
	grep -q "^0000:0000:0000:0000:0000:ffff:0a00:000$1 RoCE v2" "$QR_DIR/gids.$1"
}
ping_peer() {
	qr_exec "$1" "ping -c 3 -W 5 10.0.0.$2" >"$QR_DIR/ping.$1" || { cat "$QR_DIR/ping.$1"; return 1; }
	cat "$QR_DIR/ping.$1"
	grep -q " 0% packet loss" "$QR_DIR/ping.$1"
}
# Guest 1's reloads.  In the guest: QUP sets the netdev up with
# 10.0.0.1/24 unless it has that address still, then waits 10 s at most
# for qroce_0's GID ::ffff:10.0.0.1 (index 1, as the pingpongs want);
# QSTATE prints the ib devices, the qroce netdev and its ifindex, the
# auxiliary devices and the qroce modules loaded.
QUP='n=$(ls /sys/bus/pci/drivers/qroce_en/*/net) && { ip -4 addr show dev $n | grep -q 10.0.0.1/ || { ip link set $n up && ip addr add 10.0.0.1/24 dev $n; }; } && i=0 && until grep -q ffff:0a00:0001 /sys/class/infiniband/qroce_0/ports/1/gids/1 2>/dev/null; do i=$((i + 1)); [ $i -gt 100 ] && { echo "no GID"; exit 1; }; sleep 0.1; done'
QSTATE='echo "ib: $(ls /sys/class/infiniband | tr "\n" " ")"; echo "net: $(ls /sys/bus/pci/drivers/qroce_en/*/net 2>/dev/null)"; echo "ifindex: $(cat /sys/bus/pci/drivers/qroce_en/*/net/*/ifindex 2>/dev/null)"; echo "aux: $(ls /sys/bus/auxiliary/devices)"; echo "modules: $(grep -o "^qroce_[a-z]*" /proc/modules | sort | tr "\n" " ")"'
# state FILE LINE...: each LINE is a line of FILE
state() {
	f=$1
	shift
	for l in "$@"; do
		grep -qx "$l" "$f" || { echo "expected '$l'"; return 1; }
	done
}
# reload TAG CMD: guest 1 runs CMD, which prints "removed" and the state,
# then "back" and the state again; TAG.out and TAG.back are the two
# parts, and the second must be all of qroce bound again
reload() {
	qr_exec 1 "$2" >"$QR_DIR/$1" || { cat "$QR_DIR/$1"; return 1; }
	cat "$QR_DIR/$1"
	sed -n '/^removed/,/^back/p' "$QR_DIR/$1" >"$QR_DIR/$1.out"
	sed -n '/^back/,$p' "$QR_DIR/$1" >"$QR_DIR/$1.back"
	state "$QR_DIR/$1.back" "ib: qroce_0 " "aux: qroce_en.rdma.0" \
		"modules: qroce_en qroce_ib "
}
# rmmod qroce_ib: qroce_0 goes, the netdev stays (same ifindex) and pings;
# insmod qroce_ib: qroce_0 is back with its GID
reload_ib() {
	reload reload-ib "$QSTATE; rmmod qroce_ib; echo removed; $QSTATE; ping -c 3 -W 5 10.0.0.2 | grep 'packet loss'; insmod /lib/modules/qroce/qroce_ib.ko && $QUP && echo back && $QSTATE" || return 1
	x=$(sed -n '1,/^removed/s/^ifindex: //p' "$QR_DIR/reload-ib")
	state "$QR_DIR/reload-ib.out" "ib: " "ifindex: $x" "aux: qroce_en.rdma.0" "modules: qroce_en " &&
		grep -q " 0% packet loss" "$QR_DIR/reload-ib.out" &&
		state "$QR_DIR/reload-ib.back" "ifindex: $x" && devinfo 1
}
# rmmod qroce_en with qroce_ib loaded: the auxiliary device, qroce_0 and
# the netdev go, qroce_ib stays; insmod qroce_en: qroce_ib binds the new
# auxiliary device, qroce_0 is back on a new netdev
reload_en() {
	reload reload-en "rmmod qroce_en; echo removed; $QSTATE; insmod /lib/modules/qroce/qroce_en.ko && $QUP && echo back && $QSTATE" &&
		state "$QR_DIR/reload-en.out" "ib: " "net: " "aux: " "modules: qroce_ib " &&
		devinfo 1
}
# both out (qroce_ib first, then qroce_en); qroce_ib in first, which binds
# nothing, then qroce_en: it binds when the auxiliary device appears
reload_ib_first() {
	reload reload-both "rmmod qroce_ib && rmmod qroce_en && insmod /lib/modules/qroce/qroce_ib.ko && echo removed; $QSTATE; insmod /lib/modules/qroce/qroce_en.ko && $QUP && echo back && $QSTATE" &&
		state "$QR_DIR/reload-both.out" "ib: " "net: " "aux: " "modules: qroce_ib " &&
		devinfo 1
}
clean_dmesg() {
	qr_exec "$1" 'dmesg' >"$QR_DIR/dmesg.$1" || return 1
	! grep -v "module verification failed" "$QR_DIR/dmesg.$1" |
		grep -E "BUG|WARNING|Oops|leak|qroce.*(timed out|failed|error)"
}

# the netdev's ethtool answers: driver and PCI address, the device's line
# rate (CAP_LINK_MBPS = the dcqcn-line-mbps property, default below)
QR_LINE_MBPS=100000
ethtool_info() {
	qr_exec "$1" 'ethtool -i $QR_IF; echo pci: $(basename /sys/bus/pci/drivers/qroce_en/0000:*)' >"$QR_DIR/ethtool-i.$1" || return 1
	cat "$QR_DIR/ethtool-i.$1"
	pci=$(sed -n 's/^pci: //p' "$QR_DIR/ethtool-i.$1")
	grep -qx "driver: qroce_en" "$QR_DIR/ethtool-i.$1" && [ -n "$pci" ] &&
		grep -qx "bus-info: $pci" "$QR_DIR/ethtool-i.$1"
}
ethtool_link() {
	qr_exec "$1" 'ethtool $QR_IF' >"$QR_DIR/ethtool.$1" || return 1
	cat "$QR_DIR/ethtool.$1"
	grep -q "Speed: ${QR_LINE_MBPS}Mb/s" "$QR_DIR/ethtool.$1" &&
		grep -q "Duplex: Full" "$QR_DIR/ethtool.$1" &&
		grep -q "Link detected: yes" "$QR_DIR/ethtool.$1"
}
# ethtool -S: the device counters by name; the Ethernet TX count grows
# over a ping
ethtool_stats() {
	qr_exec "$1" 'ethtool -S $QR_IF; ping -c 2 -W 5 10.0.0.'"$2"' >/dev/null; echo again; ethtool -S $QR_IF' >"$QR_DIR/ethtool-S.$1" || return 1
	cat "$QR_DIR/ethtool-S.$1"
	grep -q "^ *roce_tx_pkts: [0-9]" "$QR_DIR/ethtool-S.$1" || return 1
	a=$(sed -n '/^again/q; s/^ *eth_tx_frames: //p' "$QR_DIR/ethtool-S.$1")
	b=$(sed -n '/^again/,$ s/^ *eth_tx_frames: //p' "$QR_DIR/ethtool-S.$1")
	echo "eth_tx_frames $a -> $b"
	[ -n "$a" ] && [ -n "$b" ] && [ "$b" -gt "$a" ]
}
no_unknown_speed() {
	qr_exec "$1" 'dmesg' >"$QR_DIR/dmesg-speed.$1" || return 1
	! grep "speed is unknown" "$QR_DIR/dmesg-speed.$1"
}

# copy_out G: a file the guest wrote, fetched by the host, same bytes
copy_out() {
	qr_exec "$1" 'dd if=/dev/urandom of=/srv/out.bin bs=1024 count=256 2>/dev/null && md5sum /srv/out.bin' >"$QR_DIR/out.md5" || return 1
	eval "mp=\$QR_MGMT_PORT_$1"
	busybox wget -q -O "$QR_DIR/out.bin" "http://127.0.0.1:$mp/out.bin" || return 1
	want=$(cut -d' ' -f1 "$QR_DIR/out.md5") got=$(md5sum <"$QR_DIR/out.bin" | cut -d' ' -f1)
	echo "guest $want, host $got, $(wc -c <"$QR_DIR/out.bin") bytes"
	[ -n "$want" ] && [ "$want" = "$got" ]
}
# copy_in G: a file on the host, fetched by the guest from 10.0.2.2
copy_in() {
	mkdir -p "$QR_DIR/www"
	dd if=/dev/urandom of="$QR_DIR/www/in.bin" bs=1024 count=256 2>/dev/null
	hp=$((QR_MGMT_BASE + 9))
	busybox httpd -f -p "127.0.0.1:$hp" -h "$QR_DIR/www" &
	hpid=$!
	sleep 0.5
	qr_exec "$1" "wget -q -O /tmp/in.bin http://10.0.2.2:$hp/in.bin && md5sum /tmp/in.bin" >"$QR_DIR/in.md5"
	rc=$?
	kill $hpid 2>/dev/null
	wait $hpid 2>/dev/null
	[ $rc = 0 ] || return 1
	want=$(md5sum <"$QR_DIR/www/in.bin" | cut -d' ' -f1) got=$(cut -d' ' -f1 "$QR_DIR/in.md5")
	echo "host $want, guest $got"
	[ "$want" = "$got" ]
}

qr_check "harness: a command past QR_TIMEOUT is killed in the guest, the next runs" agent_timeout
qr_check "harness: a line that lost its start is answered @@QRBAD and not run" agent_damaged
qr_check "guest 1: driver binds 1b36:0015 as qroce_0" binds 1
qr_check "guest 2: driver binds 1b36:0015 as qroce_0" binds 2
qr_check "guest 1: ibv_devinfo -v shows the port and its RoCEv2 GID" devinfo 1
qr_check "guest 2: ibv_devinfo -v shows the port and its RoCEv2 GID" devinfo 2
qr_check "guest 1: sysfs GID table has ::ffff:10.0.0.1 as RoCE v2" gid_sysfs 1
qr_check "guest 1 pings guest 2 over qroce" ping_peer 1 2
qr_check "guest 2 pings guest 1 over qroce" ping_peer 2 1
qr_check "guest 1: ethtool -i names driver qroce_en and its PCI address" ethtool_info 1
qr_check "guest 1: ethtool shows the device's line rate, link detected" ethtool_link 1
qr_check "guest 1: ethtool -S lists the counters, eth_tx_frames grows" ethtool_stats 1 2
qr_check "guest 1: dmesg has no 'speed is unknown'" no_unknown_speed 1
qr_check "guest 2: dmesg has no 'speed is unknown'" no_unknown_speed 2
qr_check "rmmod qroce_ib: qroce_0 goes, the netdev stays and pings; insmod: qroce_0 is back" reload_ib
qr_check "rmmod qroce_en, qroce_ib loaded: all of qroce goes; insmod qroce_en: qroce_ib binds" reload_en
qr_check "rmmod both, insmod qroce_ib before qroce_en: it binds when the auxiliary device appears" reload_ib_first
qr_check "ping after the reloads" ping_peer 1 2
qr_check "ibv_rc_pingpong after the reloads" qr_pingpong ibv_rc_pingpong -n 100
qr_check "management NIC: the host fetches a 256 KiB file from guest 1 (hostfwd)" copy_out 1
qr_check "management NIC: guest 2 fetches a 256 KiB file from the host (10.0.2.2)" copy_in 2
qr_check "guest 1: dmesg has no BUG, WARNING or qroce failure" clean_dmesg 1
qr_check "guest 2: dmesg has no BUG, WARNING or qroce failure" clean_dmesg 2
qr_finish
