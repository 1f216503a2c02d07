#!/bin/sh
# Teardown: the driver survives its users.
#  - qroce-stress: threads poll one CQ while others create, connect, use
#    and destroy QPs on it; no crash, no completion of a destroyed QP
#    (CQEs are cleaned out on destroy), none lost, none twice.
#  - rmmod qroce under a long ib_write_bw: the peer's writes end in an
#    error completion and it exits with an error.
#  - rmmod qroce while ib_write_bw runs between the guests, 20 cycles,
#    alternating the guest: the unload completes in bounded time although
#    the application still has the device open (disassociate_ucontext),
#    the applications exit, insmod brings qroce_0 back and a pingpong
#    passes.  Then no WARNING, BUG, Oops or GID leak in either dmesg.
. "$(dirname "$0")/lib.sh"
qr_init teardown
qr_boot 2 rxe || { qr_fail "qr_boot 2 rxe: the guests did not boot"; qr_finish; }
CYCLES=${QR_TEARDOWN_CYCLES:-20}

stress() {
	QR_TIMEOUT=120 qr_exec 1 'qroce-stress -p 2 -w 3 -t 10' >"$QR_DIR/stress.out"
	rc=$?
	cat "$QR_DIR/stress.out"
	[ $rc -eq 0 ] && ! grep -q '^FAIL' "$QR_DIR/stress.out" &&
		[ "$(grep -c '^PASS' "$QR_DIR/stress.out")" -eq 5 ]
}

# In a guest: qroce's netdev up and addressed as /init does it, and its
# IPv4 RoCEv2 GID at index 1 (the GID the tests use).
UP='n=$(ls /sys/bus/pci/drivers/qroce/*/net) && /usr/sbin/ip link set $n up && /usr/sbin/ip addr add $QR_IP dev $n && /usr/sbin/ip -6 addr add $QR_IP6 dev $n nodad && o=${QR_IP%%/*} && o=${o##*.} && i=0 && until grep -q "ffff:0a00:000$o" /sys/class/infiniband/qroce_0/ports/1/gids/1 2>/dev/null; do i=$((i + 1)); [ $i -gt 100 ] && exit 1; sleep 0.1; done'
up() {
	qr_exec "$1" "$UP"
}

# restore: after a failed check, no stray perftest, qroce_0 back with its GID
restore() {
	[ -n "${dirty:-}" ] || return 0
	for h in 1 2; do
		qr_exec $h 'kill $(pidof ib_write_bw) 2>/dev/null; [ -e /sys/class/infiniband/qroce_0 ] || insmod /lib/modules/qroce/qroce.ko; grep -q "ffff:0a00:000'"$h"'" /sys/class/infiniband/qroce_0/ports/1/gids/1' >/dev/null ||
			up $h >/dev/null
	done
	dirty=
}

# start ARGS: ib_write_bw ARGS on qroce_0 (GID index 1), server in guest 1,
# client in guest 2, and wait until the client's RC QP is in RTS.  Its TCP
# side channel runs over the virtio-net NICs (10.0.1.x), which the rmmod
# of qroce leaves alone.
start() {
	dirty=1
	qr_bg 1 srv "ib_write_bw -d qroce_0 -x 1 -F -s 4096 $*" || return 1
	qr_wait_listen 1 18515 || { echo "server did not listen"; qr_bg_wait 1 srv 5; return 1; }
	qr_bg 2 cli "ib_write_bw -d qroce_0 -x 1 -F -s 4096 $* 10.0.1.1" || return 1
	qr_exec 2 'i=0; until rdma resource show qp | grep "qroce_0" | grep -q "type RC state RTS"; do i=$((i + 1)); [ $i -gt 200 ] && { rdma resource show qp; exit 1; }; sleep 0.05; done' ||
		{ echo "no connected QP"; return 1; }
}

# The peer's device goes away under a long run: the client's writes find
# no responder, retry, and end in an error completion; it exits non-zero.
peer_gone() {
	restore
	start -n 1000000 || return 1
	qr_exec 1 'timeout 60 rmmod qroce' || return 1
	qr_bg_wait 2 cli 90 >"$QR_DIR/cli.peer"
	crc=$?
	grep -i "error" "$QR_DIR/cli.peer"
	echo "client exit status $crc"
	qr_bg_wait 1 srv 60 >/dev/null
	src=$?
	qr_exec 1 "insmod /lib/modules/qroce/qroce.ko && $UP" || return 1
	[ $src -ne 124 ] && [ $crc -ne 0 ] && [ $crc -ne 124 ] &&
		grep -qi "completion with error" "$QR_DIR/cli.peer" && dirty=
}

# cycle G N: ib_write_bw from guest 2 to guest 1 (-D: a bounded run); once
# its QPs are connected, rmmod qroce in guest G, which must not wait for
# the process; insmod it again; both ends exit within bounded time
# (rdma-core takes the destroys of a disassociated context as done); a
# pingpong on the new qroce_0.
cycle() {
	restore
	start -D 2 || return 1
	qr_exec "$1" 't0=$(date +%s); timeout 60 rmmod qroce; rc=$?; t=$(($(date +%s) - t0)); echo "rmmod: status $rc in $t s"; [ $rc -eq 0 ] && [ $t -le 30 ] && ! [ -e /sys/class/infiniband/qroce_0 ] && insmod /lib/modules/qroce/qroce.ko && '"$UP" ||
		{ echo "guest $1: rmmod or insmod failed"; return 1; }
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
qr_check "rmmod in guest 1 under ib_write_bw -n: the client gets an error completion and exits" peer_gone
cyc=1
while [ $cyc -le "$CYCLES" ]; do
	cg=$((2 - cyc % 2))
	qr_check "cycle $cyc: rmmod in guest $cg under ib_write_bw, insmod, pingpong" cycle $cg $cyc
	cyc=$((cyc + 1))
done
qr_check "guest 1: dmesg has no WARNING, BUG, Oops or leak" clean_dmesg 1
qr_check "guest 2: dmesg has no WARNING, BUG, Oops or leak" clean_dmesg 2
qr_finish
