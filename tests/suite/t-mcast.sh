#!/bin/sh
# UD multicast (issue 15): ATTACH_MCAST and DETACH_MCAST, delivery to
# every QP of a group (docs/hw-spec.md §3).
#  - ibv_devinfo -v reports the multicast limits the device has;
#  - librdmacm's mckey: guest 1 joins a group and receives, guest 2 joins
#    and sends; the receiver gets every message (mckey fails otherwise);
#    the device loops the sender's own copies back to its QP (no RECV:
#    N drops), and with mckey -l (IBV_QP_CREATE_BLOCK_SELF_MCAST_LB) none;
#  - qroce-mcast: guest 1's two UD QPs attached to one group both get
#    each of guest 2's messages, bytes checked; after QP B detaches only A
#    gets the next sender's; attaching twice succeeds, detaching twice
#    fails; the receiver's RoCE drop counter does not move; over
#    an IPv4 group and an IPv6 one;
#  - the driver's Ethernet multicast filter (ndo_set_rx_mode, MC_HASH).
. "$(dirname "$0")/../lib/lib.sh"
qr_init mcast
qr_boot 2 || { qr_fail "qr_boot 2: the guests did not boot"; qr_finish; }
N=${QR_MCAST_N:-50}

devinfo() {
	qr_exec 1 'ibv_devinfo -v -d qroce_0' >"$QR_DIR/devinfo" || return 1
	grep mcast "$QR_DIR/devinfo"
	grep -Eq 'max_mcast_grp:[[:space:]]+64$' "$QR_DIR/devinfo" &&
		grep -Eq 'max_mcast_qp_attach:[[:space:]]+8$' "$QR_DIR/devinfo"
}

# mckey ADDRESS [-l]: receiver in guest 1, sender in guest 2, over IPv4
# or (ADDRESS with a colon) IPv6; the sender
# is a member too and posts no RECV: it drops the N copies of its own sends
# the device loops back (as rxe and mlx5 do), none with -l (its QP blocks
# them)
mckey() {
	case $2 in -l) own=0 ;; *) own=$N ;; esac
	case $1 in
	*:*) b1=fd00::1 b2=fd00::2 dgid=$1 ;;
	*) b1=10.0.0.1 b2=10.0.0.2 dgid=::ffff:$1 ;;
	esac
	d0=$(qr_counter 2 roce_rx_drops)
	qr_bg 1 mck "mckey -m $1 -b $b1 -C $N" || return 1
	# (its output is buffered until it exits: wait for its UD QP, then
	# for the join, which on RoCE completes at once)
	qr_exec 1 'i=0; until rdma resource show qp | grep "comm mckey" | grep -q "type UD state RTS"; do i=$((i + 1)); [ $i -gt 300 ] && exit 1; sleep 0.1; done; sleep 1' ||
		{ echo "the receiver did not join"; qr_bg_wait 1 mck 5; return 1; }
	QR_TIMEOUT=120 qr_exec 2 "mckey -m $1 -b $b2 -s -C $N $2" >"$QR_DIR/mck.snd" 2>&1
	src=$?
	qr_bg_wait 1 mck 60 >"$QR_DIR/mck.rcv" 2>&1
	rrc=$?
	d1=$(qr_counter 2 roce_rx_drops)
	echo "sender's RoCE drops: $d0 -> $d1 (want +$own)"
	sed 's/^/sender: /' "$QR_DIR/mck.snd"
	sed 's/^/receiver: /' "$QR_DIR/mck.rcv"
	[ $src -eq 0 ] && [ $rrc -eq 0 ] &&
		grep -q "joined dgid: $dgid" "$QR_DIR/mck.rcv" &&
		grep -q 'data transfers complete' "$QR_DIR/mck.rcv" &&
		[ $((d1 - d0)) -eq "$own" ]
}

# wait_line G NAME TEXT: until guest G's background NAME printed TEXT
wait_line() {
	qr_exec "$1" "i=0; until grep -qx '$3' /tmp/bg.$2.out 2>/dev/null; do i=\$((i + 1)); [ \$i -gt 600 ] && exit 1; sleep 0.1; done"
}

# two_qps GROUP [SENDER_OPTIONS]
two_qps() {
	d0=$(qr_counter 1 roce_rx_drops)
	qr_bg 1 mrc "qroce-mcast recv $1 $N" || return 1
	wait_line 1 mrc attached || { qr_bg_wait 1 mrc 5; return 1; }
	QR_TIMEOUT=120 qr_exec 2 "qroce-mcast $2 send $1 $N" >"$QR_DIR/s1" 2>&1 ||
		{ cat "$QR_DIR/s1"; qr_bg_wait 1 mrc 5; return 1; }
	wait_line 1 mrc detached || { qr_bg_wait 1 mrc 5; return 1; }
	QR_TIMEOUT=120 qr_exec 2 "qroce-mcast $2 send $1 $N" >"$QR_DIR/s2" 2>&1
	s2=$?
	qr_bg_wait 1 mrc 120 >"$QR_DIR/r" 2>&1
	rrc=$?
	d1=$(qr_counter 1 roce_rx_drops)
	sed 's/^/sender 1: /' "$QR_DIR/s1"
	sed 's/^/sender 2: /' "$QR_DIR/s2"
	sed 's/^/receiver: /' "$QR_DIR/r"
	echo "receiver's RoCE drops: $d0 -> $d1"
	[ $s2 -eq 0 ] && [ $rrc -eq 0 ] && ! grep -q '^FAIL' "$QR_DIR/r" &&
		[ "$(grep -c '^PASS' "$QR_DIR/r")" -eq 8 ] && [ "$d0" = "$d1" ]
}

# filter: guest 1's Ethernet function filters multicast through the bins
# the driver sets from the netdev's list (docs/hw-spec.md §11): guest 2
# reaches fd00::1 with an empty neighbour cache (the solicited-node group
# passes); its pings to ff02::1:2345 (33:33:00:01:23:45, a bin of its
# own) are refused and counted until guest 1 joins that MAC
GRP6=ff02::1:2345
ping_grp() {
	qr_exec 2 "ping -6 -c 3 -i 0.2 -W 1 -I \$QR_IF $GRP6 >/dev/null 2>&1; true"
}
filter() {
	qr_exec 2 'ip -6 neigh flush dev $QR_IF; ping -6 -c 2 -W 3 fd00::1' ||
		return 1
	f0=$(qr_counter 1 eth_rx_filtered)
	ping_grp || return 1
	f1=$(qr_counter 1 eth_rx_filtered)
	qr_exec 1 '/usr/sbin/ip maddr add 33:33:00:01:23:45 dev $QR_IF' || return 1
	ping_grp || return 1
	f2=$(qr_counter 1 eth_rx_filtered)
	qr_exec 1 '/usr/sbin/ip maddr del 33:33:00:01:23:45 dev $QR_IF'
	echo "guest 1's eth_rx_filtered: $f0 -> $f1 (want +3 or more)" \
		"-> $f2 (want less than +3)"
	[ -n "$f0" ] && [ $((f1 - f0)) -ge 3 ] && [ $((f2 - f1)) -lt 3 ]
}

qr_check "ibv_devinfo -v: 64 multicast groups of 8 QPs" devinfo
qr_check "the netdev's multicast filter: ND passes, other groups once joined" filter
qr_check "mckey: $N messages from guest 2 to a group guest 1 joined" mckey 239.255.1.1
qr_check "mckey -l: the sender's QP blocks its own copies" mckey 239.255.1.2 -l
qr_check "two QPs on one group get every message; after a detach only one" two_qps 239.1.2.3
# (rdma_join_multicast has no IPv6 on RoCEv2: ENOTSUPP from the kernel's
# rdma_cm, on rxe as here; verbs take IPv6 groups)
qr_check "the same on the IPv6 group ff0e::1:2:3 (GID 2)" two_qps ff0e::1:2:3 "-g 2"
qr_finish
