#!/bin/sh
# RC SEND/RECV: ibv_rc_pingpong between two guests (sizes, events, many
# iterations), in one guest against itself (device loopback), a wire check
# of the frames, and the negative program.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/wire-lib.sh"
qr_init rc-pingpong
qr_boot 2 pcap || { QR_FAIL=$((QR_FAIL + 1)); qr_finish; }
GID=1   # the IPv4-mapped RoCEv2 GID (index 0 is the IPv6 link-local one)

# pingpong ARGS: ibv_rc_pingpong, server in guest 1, client in guest 2
pingpong() { qr_pingpong ibv_rc_pingpong "$@"; }
# the same in one guest: both QPs on one device, frames looped back inside it
loopback() {
	QR_TIMEOUT=300 qr_exec 1 "ibv_rc_pingpong -d qroce_0 -g $GID $* >/tmp/lo.srv 2>&1 & s=\$!; i=0; until netstat -ltn | grep -q ':18515 '; do sleep 0.1; i=\$((i+1)); [ \$i -gt 100 ] && break; done; ibv_rc_pingpong -d qroce_0 -g $GID $* 127.0.0.1 >/tmp/lo.cli 2>&1; c=\$?; wait \$s; r=\$?; cat /tmp/lo.cli /tmp/lo.srv; [ \$c -eq 0 ] && [ \$r -eq 0 ]" >"$QR_DIR/lo.out"
	rc=$?
	cat "$QR_DIR/lo.out"
	[ $rc -eq 0 ] && [ "$(grep -Ec '^[0-9]+ bytes in [0-9.]+ seconds' "$QR_DIR/lo.out")" -eq 2 ]
}
wire() { # the frames so far: ICRC, lengths, checksums; tshark decodes them
	cp "$QR_DIR/g1/wire.pcap" "$QR_DIR/wire-check.pcap"
	v6=$(tshark -n -r "$QR_DIR/wire-check.pcap" -Y 'ipv6 && infiniband.bth' 2>/dev/null | wc -l)
	echo "$v6 RoCE frames over IPv6"
	qr_wire_check "$QR_DIR/wire-check.pcap" 1000 && [ "$v6" -ge 400 ]
}
negative() {
	qr_exec 1 "qroce-neg -d qroce_0 -g $GID" >"$QR_DIR/neg.out"
	rc=$?
	cat "$QR_DIR/neg.out"
	[ $rc -eq 0 ] && ! grep -q '^FAIL' "$QR_DIR/neg.out" &&
		[ "$(grep -c '^PASS' "$QR_DIR/neg.out")" -ge 12 ]
}

pingpong -n 200 >"$QR_DIR/warm.out" 2>&1 && pingpong -s 1 -n 20 >>"$QR_DIR/warm.out" 2>&1 &&
	pingpong -s 3001 -n 20 >>"$QR_DIR/warm.out" 2>&1
warm=$?
# IPv6: GID 2 is fd00::N; neighbours are learnt by a ping first
ipv6() {
	qr_exec 1 'ping -c 1 -W 5 fd00::2' && qr_exec 2 'ping -c 1 -W 5 fd00::1' || return 1
	GID=2
	pingpong "$@"
	r=$?
	GID=1
	return $r
}
qr_check "pingpong 4096 B, 1 B and 3001 B messages (frames for the wire check)" [ $warm -eq 0 ]
qr_check "pingpong over the IPv6 GID (fd00::1 <-> fd00::2)" ipv6 -n 200
qr_check "wire: every RoCE frame has a correct ICRC, lengths and checksums; tshark decodes all" wire
# rdma statistic: each side sends and receives at least a packet per iteration
counted_pingpong() {
	t1=$(qr_counter 1 roce_tx_pkts) r1=$(qr_counter 1 roce_rx_pkts)
	t2=$(qr_counter 2 roce_tx_pkts) r2=$(qr_counter 2 roce_rx_pkts)
	pingpong -n 500 || return 1
	dt1=$(($(qr_counter 1 roce_tx_pkts) - t1)) dr1=$(($(qr_counter 1 roce_rx_pkts) - r1))
	dt2=$(($(qr_counter 2 roce_tx_pkts) - t2)) dr2=$(($(qr_counter 2 roce_rx_pkts) - r2))
	echo "guest 1: +$dt1 tx +$dr1 rx; guest 2: +$dt2 tx +$dr2 rx"
	[ $dt1 -ge 1000 ] && [ $dr1 -ge 1000 ] && [ $dt2 -ge 1000 ] && [ $dr2 -ge 1000 ] &&
		[ $dt1 -eq $dr2 ] && [ $dt2 -eq $dr1 ]
}
qr_check "rdma statistic: RoCE packet counters follow a 500-iteration pingpong" counted_pingpong
# rdma resource show qp while a pingpong runs: each side lists its RC QP
# in RTS, owned by ibv_rc_pingpong.  The pair runs until it has been seen
# (or 20 s), then is stopped, so the check does not race its end.
rc_listed() {
	qr_exec "$1" 'rdma resource show qp link qroce_0/1' >"$QR_DIR/res.g$1" 2>&1 &&
		grep -E 'type RC .*state RTS .*comm ibv_rc_pingpong' "$QR_DIR/res.g$1" >/dev/null
}
resources() {
	qr_bg 1 rsrv "ibv_rc_pingpong -d qroce_0 -g $GID -n 100000000" || return 1
	qr_wait_listen 1 18515 || return 1
	qr_bg 2 rcli "ibv_rc_pingpong -d qroce_0 -g $GID -n 100000000 10.0.0.1" || return 1
	seen=0 i=0
	while [ $i -lt 40 ]; do
		if rc_listed 1 && rc_listed 2; then
			seen=1
			break
		fi
		sleep 0.5
		i=$((i + 1))
	done
	qr_exec 2 'killall ibv_rc_pingpong' >/dev/null
	qr_exec 1 'killall ibv_rc_pingpong' >/dev/null
	qr_bg_wait 2 rcli 30 >/dev/null 2>&1
	c=$?
	qr_bg_wait 1 rsrv 30 >/dev/null 2>&1
	r=$?
	cat "$QR_DIR/res.g1" "$QR_DIR/res.g2"
	# seen, and both stopped (124: still running)
	[ $seen = 1 ] && [ $c != 124 ] && [ $r != 124 ]
}
qr_check "rdma resource show qp: the RC QPs of a running pingpong, in RTS" resources
qr_check "pingpong, default size, -n 10000" pingpong -n 10000
qr_check "pingpong with completion events (-e)" pingpong -e -n 1000
qr_check "pingpong -s 1" pingpong -s 1 -n 200
qr_check "pingpong -s 1023" pingpong -s 1023 -n 200
qr_check "pingpong -s 1024 (exactly one MTU)" pingpong -s 1024 -n 200
qr_check "pingpong -s 4096" pingpong -s 4096 -n 200
qr_check "pingpong -s 65536 (64 packets a message)" pingpong -s 65536 -n 100
qr_check "pingpong -s 65536 with events" pingpong -s 65536 -n 50 -e
qr_check "pingpong in one guest (device loopback)" loopback -n 200
qr_check "bad lkey, SGE past its MR, post in INIT: right errors; another pair works" negative
qr_finish
