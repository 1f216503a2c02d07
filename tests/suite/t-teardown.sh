#!/bin/sh
# Teardown: the driver survives its users, and its two modules (qroce_en,
# the Ethernet PCI driver; qroce_ib, the RDMA driver bound to its
# auxiliary device) go and come back in either order.
#  - qroce-stress: threads poll one CQ while others create, connect, use
#    and destroy QPs on it; no crash, no completion of a destroyed QP
#    (CQEs are cleaned out on destroy), none lost, none twice.
#  - rmmod qroce_ib under a long ib_write_bw: the peer's writes end in an
#    error completion and it exits with an error; the netdev stays.
#  - 10 cycles (each way once on each guest) while ib_write_bw runs
#    between the guests, alternating the
#    guest, each taking the RDMA device away one of five ways:
#      ib:   rmmod qroce_ib; the netdev stays (same ifindex) and pings;
#            insmod qroce_ib
#      en:   rmmod qroce_en with qroce_ib loaded; the auxiliary device and
#            the netdev go, qroce_ib stays; insmod qroce_en, and qroce_ib
#            binds the new auxiliary device
#      aux:  unbind qroce_ib from the auxiliary device in sysfs; the netdev
#            stays and pings; bind it again
#      pci:  unbind qroce_en from the PCI function in sysfs; netdev and
#            qroce_0 go; bind it again
#      both: rmmod qroce_ib, then qroce_en; insmod qroce_ib first (it binds
#            nothing), then qroce_en, and it binds
#    Each removal completes in bounded time although the application still
#    has the device open (disassociate_ucontext), qroce_0 is gone after
#    it, the applications exit, qroce_0 comes back with its GID and a
#    pingpong passes.  Then no WARNING, BUG, Oops or GID leak in either
#    dmesg.
. "$(dirname "$0")/../lib/lib.sh"
qr_init teardown
qr_boot 2 rxe || { qr_fail "qr_boot 2 rxe: the guests did not boot"; qr_finish; }
CYCLES=${QR_TEARDOWN_CYCLES:-10}

stress() {
	QR_TIMEOUT=120 qr_exec 1 'qroce-stress -p 2 -w 3 -t 10' >"$QR_DIR/stress.out"
	rc=$?
	cat "$QR_DIR/stress.out"
	[ $rc -eq 0 ] && ! grep -q '^FAIL' "$QR_DIR/stress.out" &&
		[ "$(grep -c '^PASS' "$QR_DIR/stress.out")" -eq 5 ]
}

# Guest-side helpers, put in front of a guest command (each runs in a
# shell of its own; the agent takes one line):
#  qnet   the qroce netdev's name (nothing if there is none)
#  qpci   the qroce PCI function's address
#  qaux   the auxiliary device's name (nothing if there is none)
#  qup    the netdev up and addressed as /init does it, unless it has its
#         address still, then qroce_0's IPv4 RoCEv2 GID at index 1 (the
#         GID the tests use) within 10 s
#  qback  both modules loaded and bound, then qup
#  qgone WHAT CMD...: CMD (a removal) within 30 s, and qroce_0 gone after
G=$(tr '\n' ' ' <<'EOF'
qnet() { ls /sys/bus/pci/drivers/qroce_en/*/net 2>/dev/null; };
qpci() { for d in /sys/bus/pci/devices/*; do
	[ "$(cat $d/vendor):$(cat $d/device)" = 0x1b36:0x0015 ] && echo ${d##*/}; done; };
qaux() { ls /sys/bus/auxiliary/devices 2>/dev/null | grep '^qroce_en\.rdma\.'; };
qup() { n=$(qnet); [ -n "$n" ] || { echo "no qroce netdev"; return 1; };
	if ! /usr/sbin/ip -4 addr show dev $n | grep -q inet; then
		/usr/sbin/ip link set $n up && /usr/sbin/ip addr add $QR_IP dev $n &&
		/usr/sbin/ip -6 addr add $QR_IP6 dev $n nodad || return 1; fi;
	o=${QR_IP%%/*}; o=${o##*.}; i=0;
	until grep -q "ffff:0a00:000$o" /sys/class/infiniband/qroce_0/ports/1/gids/1 2>/dev/null; do
		i=$((i + 1)); [ $i -gt 100 ] && { echo "no GID at index 1"; return 1; }; sleep 0.1; done; };
qback() { [ -d /sys/module/qroce_en ] || insmod /lib/modules/qroce/qroce_en.ko || return 1;
	p=$(qpci); [ -e /sys/bus/pci/devices/$p/driver ] || echo $p >/sys/bus/pci/drivers/qroce_en/bind;
	[ -d /sys/module/qroce_ib ] || insmod /lib/modules/qroce/qroce_ib.ko || return 1;
	a=$(qaux); [ -n "$a" ] && ! [ -e /sys/bus/auxiliary/devices/$a/driver ] &&
		echo $a >/sys/bus/auxiliary/drivers/qroce_ib/bind; qup; };
qgone() { w=$1; shift; t0=$(date +%s); timeout 60 "$@"; rc=$?; t=$(($(date +%s) - t0));
	echo "$w: status $rc in $t s"; [ $rc -eq 0 ] && [ $t -le 30 ] &&
	! [ -e /sys/class/infiniband/qroce_0 ] || { echo "$w: failed, or qroce_0 still there"; return 1; }; };
EOF
)

# restore: after a failed check, no stray perftest, both modules bound,
# qroce_0 back with its GID
restore() {
	[ -n "${dirty:-}" ] || return 0
	for h in 1 2; do
		qr_exec $h "$G"'kill $(pidof ib_write_bw) 2>/dev/null; qback' >/dev/null
	done
	dirty=
}

# start ARGS: ib_write_bw ARGS on qroce_0 (GID index 1), server in guest 1,
# client in guest 2, and wait until the client's RC QP is in RTS.  Its TCP
# side channel runs over the virtio-net NICs (10.0.1.x), which the removal
# of qroce's modules leaves alone.
start() {
	dirty=1
	qr_bg 1 srv "ib_write_bw -d qroce_0 -x 1 -F -s 4096 $*" || return 1
	qr_wait_listen 1 18515 || { echo "server did not listen"; qr_bg_wait 1 srv 5; return 1; }
	qr_bg 2 cli "ib_write_bw -d qroce_0 -x 1 -F -s 4096 $* 10.0.1.1" || return 1
	qr_exec 2 'i=0; until rdma resource show qp | grep "qroce_0" | grep -q "type RC state RTS"; do i=$((i + 1)); [ $i -gt 200 ] && { rdma resource show qp; exit 1; }; sleep 0.05; done' ||
		{ echo "no connected QP"; return 1; }
}

# The peer's RDMA device goes away under a long run (its netdev stays):
# the client's writes find no responder, retry, and end in an error
# completion; it exits non-zero.
peer_gone() {
	restore
	start -n 1000000 || return 1
	qr_exec 1 "$G"'qgone "rmmod qroce_ib" rmmod qroce_ib && [ -n "$(qnet)" ]' || return 1
	qr_bg_wait 2 cli 90 >"$QR_DIR/cli.peer"
	crc=$?
	grep -i "error" "$QR_DIR/cli.peer"
	echo "client exit status $crc"
	qr_bg_wait 1 srv 60 >/dev/null
	src=$?
	qr_exec 1 "$G"'insmod /lib/modules/qroce/qroce_ib.ko && qup' || return 1
	[ $src -ne 124 ] && [ $crc -ne 0 ] && [ $crc -ne 124 ] &&
		grep -qi "completion with error" "$QR_DIR/cli.peer" && dirty=
}

# The guest command of each way (qgone's checks first, then the way's
# own): $peer is the other guest's qroce address, $n and $x the netdev's
# name and ifindex before.
KEEPS='[ "$(qnet)" = "$n" ] && [ "$(cat /sys/class/net/$n/ifindex)" = "$x" ] && ping -c 2 -W 5 $peer | grep -q " 0% packet loss" || { echo "the netdev did not stay, or does not ping"; exit 1; };'
GOES='[ -z "$(qnet)" ] && [ -z "$(qaux)" ] || { echo "the netdev or the auxiliary device stayed"; exit 1; };'
WAY_ib='qgone "rmmod qroce_ib" rmmod qroce_ib || exit 1; '"$KEEPS"' insmod /lib/modules/qroce/qroce_ib.ko'
WAY_en='qgone "rmmod qroce_en" rmmod qroce_en || exit 1; '"$GOES"' [ -d /sys/module/qroce_ib ] || { echo "qroce_ib went too"; exit 1; }; insmod /lib/modules/qroce/qroce_en.ko'
WAY_aux='a=$(qaux); qgone "unbind $a" sh -c "echo $a >/sys/bus/auxiliary/drivers/qroce_ib/unbind" || exit 1; '"$KEEPS"' echo $a >/sys/bus/auxiliary/drivers/qroce_ib/bind'
WAY_pci='p=$(qpci); qgone "unbind $p" sh -c "echo $p >/sys/bus/pci/drivers/qroce_en/unbind" || exit 1; '"$GOES"' echo $p >/sys/bus/pci/drivers/qroce_en/bind'
WAY_both='qgone "rmmod qroce_ib" rmmod qroce_ib || exit 1; rmmod qroce_en || exit 1; ! grep -q "^qroce" /proc/modules || { echo "a module stayed"; exit 1; }; insmod /lib/modules/qroce/qroce_ib.ko && ! [ -e /sys/class/infiniband/qroce_0 ] || exit 1; insmod /lib/modules/qroce/qroce_en.ko'

# cycle G N WAY: ib_write_bw from guest 2 to guest 1 (-D: a bounded run);
# once its QPs are connected, take qroce_0 away in guest G by WAY, which
# must not wait for the process; bring it back; both ends exit within
# bounded time (rdma-core takes the destroys of a disassociated context as
# done); a pingpong on the new qroce_0.
cycle() {
	restore
	start -D 2 || return 1
	eval "way=\$WAY_$3"
	qr_exec "$1" "$G"'peer=10.0.0.'"$((3 - $1))"'; n=$(qnet); x=$(cat /sys/class/net/$n/ifindex); '"$way"' && qup' ||
		{ echo "guest $1: $3: taking qroce_0 away or bringing it back failed"; return 1; }
	qr_bg_wait 1 srv 60 >"$QR_DIR/srv.$2"
	src=$?
	qr_bg_wait 2 cli 60 >"$QR_DIR/cli.$2"
	crc=$?
	echo "ib_write_bw exits: server $src, client $crc"
	[ $src -ne 124 ] && [ $crc -ne 124 ] ||
		{ tail -n 5 "$QR_DIR/srv.$2" "$QR_DIR/cli.$2"; return 1; }
	qr_pingpong ibv_rc_pingpong -n 100 >"$QR_DIR/pp.$2" || { cat "$QR_DIR/pp.$2"; return 1; }
	dirty=
}

clean_dmesg() {
	qr_exec "$1" 'dmesg' >"$QR_DIR/dmesg.$1" || return 1
	! grep -v "module verification failed" "$QR_DIR/dmesg.$1" |
		grep -E "WARNING:|BUG:|Oops|leak"
}

qr_check "qroce-stress: 3 threads create and destroy QPs on a CQ 2 threads poll" stress
qr_check "guest 1: dmesg clean after the stress" clean_dmesg 1
qr_check "rmmod qroce_ib in guest 1 under ib_write_bw -n: the client gets an error completion and exits" peer_gone
WAYS="ib en aux pci both"
set -- $WAYS
cyc=1
while [ $cyc -le "$CYCLES" ]; do
	cg=$((2 - cyc % 2))
	way=$1
	shift
	[ $# -gt 0 ] || set -- $WAYS
	case $way in
	ib) what="rmmod qroce_ib, insmod" ;;
	en) what="rmmod qroce_en (qroce_ib stays), insmod" ;;
	aux) what="unbind qroce_ib from the auxiliary device, bind" ;;
	pci) what="unbind qroce_en from the PCI function, bind" ;;
	both) what="rmmod both, insmod qroce_ib before qroce_en" ;;
	esac
	qr_check "cycle $cyc: guest $cg under ib_write_bw: $what, pingpong" cycle $cg $cyc $way
	cyc=$((cyc + 1))
done
qr_check "guest 1: dmesg has no WARNING, BUG, Oops or leak" clean_dmesg 1
qr_check "guest 2: dmesg has no WARNING, BUG, Oops or leak" clean_dmesg 2
qr_finish
