#!/bin/sh
# RC SEND/RECV: ibv_rc_pingpong between two guests (sizes, events, many
# iterations), in one guest against itself (device loopback), a wire check
# of the frames, and the negative program.
. "$(dirname "$0")/../lib/lib.sh"
. "$(dirname "$0")/../lib/wire-lib.sh"
qr_init rc-pingpong
qr_boot 2 pcap mtu=1500 || { qr_fail "qr_boot 2 pcap: the guests did not boot"; qr_finish; }
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
qr_check "Ethernet MTU 1500: both guests' qroce_0 at path MTU 1024" \
	[ "$(qr_mtu 1 qroce_0) $(qr_mtu 2 qroce_0)" = "1024 1024" ]
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
# pair_start, pair_stop: that pair; both must stop (124: still running)
pair_start() {
	qr_bg 1 rsrv "ibv_rc_pingpong -d qroce_0 -g $GID -n 100000000" || return 1
	qr_wait_listen 1 18515 || return 1
	qr_bg 2 rcli "ibv_rc_pingpong -d qroce_0 -g $GID -n 100000000 10.0.0.1"
}
pair_stop() {
	qr_exec 2 'killall ibv_rc_pingpong' >/dev/null
	qr_exec 1 'killall ibv_rc_pingpong' >/dev/null
	qr_bg_wait 2 rcli 30 >/dev/null 2>&1
	c=$?
	qr_bg_wait 1 rsrv 30 >/dev/null 2>&1
	r=$?
	[ $c != 124 ] && [ $r != 124 ]
}
rc_listed() {
	qr_exec "$1" 'rdma resource show qp link qroce_0/1' >"$QR_DIR/res.g$1" 2>&1 &&
		grep -E 'type RC .*state RTS .*comm ibv_rc_pingpong' "$QR_DIR/res.g$1" >/dev/null
}
pair_seen() { # both RC QPs listed in RTS, within 20 s
	i=0
	while [ $i -lt 40 ]; do
		rc_listed 1 && rc_listed 2 && return 0
		sleep 0.5
		i=$((i + 1))
	done
	return 1
}
resources() {
	pair_start || return 1
	pair_seen
	seen=$?
	pair_stop
	s=$?
	cat "$QR_DIR/res.g1" "$QR_DIR/res.g2"
	[ $seen = 0 ] && [ $s = 0 ]
}
qr_check "rdma resource show qp: the RC QPs of a running pingpong, in RTS" resources
# rdma resource show -dd: the driver's own view beside the core's, of the
# running pair's QP, CQ and MR and of the kernel's GSI QP and its CQ
# (drv_hw_*: the device's numbers and what QUERY_QP reads now; iproute2
# prefixes the driver's names with drv_); -r: QUERY_QP's words, raw
val() { # LINE NAME: the word after NAME in LINE
	printf '%s\n' "$1" | awk -v k="$2" '{ for (i = 1; i < NF; i++) if ($i == k) { print $(i + 1); exit } }'
}
isnum() { case $1 in '' | *[!0-9]*) return 1 ;; esac; }
expect() { # WHAT TEST...: one expectation; a miss is printed and counted
	w=$1
	shift
	"$@" || { echo "driver view: expected $w"; dd_bad=1; }
}
dd_qp() { # the RC QP (a user QP) and the GSI QP (a kernel QP)
	lqpn=$(val "$qp" lqpn) hwqpn=$(val "$qp" drv_hw_qpn)
	expect "RC QP: drv_hw_qpn ($hwqpn) = lqpn ($lqpn)" eval 'isnum "$lqpn" && [ "$hwqpn" = "$lqpn" ]'
	expect "RC QP: drv_hw_state RTS" [ "$(val "$qp" drv_hw_state)" = RTS ]
	for k in drv_hw_sq_psn drv_hw_rq_psn drv_sq_depth drv_rq_depth drv_hw_sq_ci \
		drv_hw_rq_ci drv_hw_pdn drv_hw_send_cqn drv_hw_recv_cqn; do
		expect "RC QP: $k a number" isnum "$(val "$qp" $k)"
	done
	expect "RC QP: PSNs of 24 bits" eval '[ "$(val "$qp" drv_hw_sq_psn)" -lt 16777216 ] &&
		[ "$(val "$qp" drv_hw_rq_psn)" -lt 16777216 ]'
	expect "RC QP: the device has taken receives (drv_hw_rq_ci > 0)" [ "$(val "$qp" drv_hw_rq_ci)" -gt 0 ]
	expect "RC QP: no drv_sq_pi (a user QP's indexes are the provider's)" \
		eval '! printf "%s\n" "$qp" | grep -q drv_sq_pi'
	expect "GSI QP: drv_hw_qpn 1, drv_hw_state RTS" \
		eval '[ "$(val "$gsi" drv_hw_qpn)" = 1 ] && [ "$(val "$gsi" drv_hw_state)" = RTS ]'
	for k in drv_sq_pi drv_sq_ci drv_rq_pi drv_rq_ci; do
		expect "GSI QP (a kernel QP): $k a number" isnum "$(val "$gsi" $k)"
	done
}
dd_cq_mr() { # the pair's CQ and MR, and the kernel CQ of the GSI QP
	cqe=$(val "$cq" cqe) ci=$(val "$cq" drv_ci)
	expect "CQ: drv_hw_cqn = the QP's drv_hw_send_cqn" [ "$(val "$cq" drv_hw_cqn)" = "$(val "$qp" drv_hw_send_cqn)" ]
	expect "CQ: drv_depth = cqe + 1 ($cqe + 1)" eval 'isnum "$cqe" && [ "$(val "$cq" drv_depth)" = $((cqe + 1)) ]'
	expect "CQ: drv_hw_eqn a number" isnum "$(val "$cq" drv_hw_eqn)"
	expect "CQ: the provider's consumer index has moved (drv_ci $ci > 0)" eval 'isnum "$ci" && [ "$ci" -gt 0 ]'
	expect "kernel CQ: drv_pi, drv_ci numbers" eval 'isnum "$(val "$kcq" drv_pi)" && isnum "$(val "$kcq" drv_ci)"'
	expect "kernel CQ: drv_armed next, solicited or no" \
		eval 'case $(val "$kcq" drv_armed) in next | solicited | no) ;; *) false ;; esac'
	expect "MR: drv_type user" [ "$(val "$mr" drv_type)" = user ]
	expect "MR: drv_hw_pdn = the QP's" [ "$(val "$mr" drv_hw_pdn)" = "$(val "$qp" drv_hw_pdn)" ]
	expect "MR: drv_pages >= 1, drv_page_size >= 4096" eval 'isnum "$(val "$mr" drv_pages)" &&
		[ "$(val "$mr" drv_pages)" -ge 1 ] && isnum "$(val "$mr" drv_page_size)" &&
		[ "$(val "$mr" drv_page_size)" -ge 4096 ]'
	expect "MR: drv_access in hex" eval 'case $(val "$mr" drv_access) in 0x[0-9a-f]*) ;; *) false ;; esac'
}
dd_raw() { # -r: 20 bytes, state RTS, a 24-bit SQ PSN, RQ WQEs consumed
	expect "raw: QUERY_QP's 5 words, RTS, SQ PSN < 2^24, RQ consumed > 0" eval 'grep -o "\"data\":\[[0-9,]*\]" "$f.raw" |
		awk -F "[][,]" "NF == 22 && \$2 == 3 && \$9 == 0 && \$18 + \$19 * 256 > 0 { n++ } END { exit n != 1 }"'
}
driver_view() { # G: guest G's objects, the pair running
	f=$QR_DIR/dd.g$1
	qr_exec "$1" 'rdma resource show qp -dd; rdma resource show cq -dd; rdma resource show mr -dd' >"$f" 2>&1 ||
		return 1
	qp=$(grep 'type RC .*comm ibv_rc_pingpong' "$f" | head -1)
	gsi=$(grep 'type GSI ' "$f" | head -1)
	cq=$(grep ' cqn .*comm ibv_rc_pingpong' "$f" | head -1)
	kcq=$(grep ' cqn .*comm \[ib_core\]' "$f" | head -1)
	mr=$(grep ' mrn .*comm ibv_rc_pingpong' "$f" | head -1)
	qr_exec "$1" "rdma -j -r resource show qp link qroce_0/1 lqpn $(val "$qp" lqpn)" >"$f.raw" 2>&1
	cat "$f" "$f.raw"
	dd_bad=0
	dd_qp
	dd_cq_mr
	dd_raw
	[ $dd_bad = 0 ]
}
driver_views() {
	pair_start || return 1
	pair_seen
	seen=$?
	driver_view 1
	v1=$?
	driver_view 2
	v2=$?
	pair_stop
	s=$?
	[ $seen = 0 ] && [ $v1 = 0 ] && [ $v2 = 0 ] && [ $s = 0 ]
}
qr_check "rdma resource show -dd: the driver's view of QP, CQ and MR (device QPN = lqpn, RTS, PSNs, indexes)" driver_views
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
