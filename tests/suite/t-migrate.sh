#!/bin/sh
# Live migration of a guest in the middle of RDMA traffic (issue 24,
# docs/hw-spec.md section 18).  Two guests on the switch; guest 2 moves to
# a new QEMU on this host, on a new port of the bridge (qr_migrate), while
#
#   1. ibv_rc_pingpong -n 20000 runs between it and guest 1,
#   2. ib_write_bw (guest 2 the client, 64 KiB WRITEs for 15 s) runs,
#   3. qroce-rdma's two-guest mode runs: FETCH_ADDs and a CMP_SWAP lock on
#      guest 1's memory, then for 15 s random patterns WRITTEN into a
#      1 MiB region of guest 1 and READ back, every byte compared, and the
#      region hashed whole at the end;
#      3b. the same while guest 1 (the side whose region is registered
#      for the peer's WRITEs and READs) moves, then guest 2;
#      3c. the same on ODP memory on both sides (qroce-rdma -O): guest 2
#      faults its pages in before the move and again after it;
#
#   4. ib_write_bw (guest 1 the client) runs while guest 2 is saved to a
#      file (a snapshot), its QEMU quits, and 4 s later a new QEMU loads
#      the file: the peer's retries cover the gap (the window is 12.8 s
#      for perftest's QPs)
#
# each time the programs on both sides end with status 0 and their results
# (the pingpong's lines, perftest's row, qroce-rdma's PASS lines) and the
# program was still running when the move ended.  The RoCE retransmissions
# of both guests during a move must stay within the windows the move's
# downtime can cost (window, below): the peer covers the gap by
# retransmitting, nothing more.  After
# each move the new QEMU announced the GIDs (trace qroce_port_announce:
# a gratuitous ARP for each IPv4 GID, a neighbour advertisement for each
# IPv6 one) and the bridge forwards guest 2's MAC to the new port.  The
# migration's total time and downtime are logged (docs/performance.md).
. "$(dirname "$0")/../lib/lib.sh"
qr_init migrate
QR_TIMEOUT=300

# retrans: the RoCE retransmissions of both guests, summed
retrans() {
	echo $(($(qr_counter 1 roce_retrans) + $(qr_counter 2 roce_retrans)))
}

# moved TAG G: the move of guest G with its checks; $QR_DIR/TAG.mig has
# qr_migrate's figures, $QR_DIR/TAG.r0 the retransmissions before
moved() {
	m=m$QR_MIGN
	qr_check "$1: guest $2 moved to a new QEMU while the traffic ran ($(cat "$QR_DIR/$1.mig"))" \
		grep -q '^total [1-9][0-9]* downtime [0-9]' "$QR_DIR/$1.mig"
	qr_check "$1: the new QEMU announced the GIDs: gratuitous ARPs and neighbour advertisements" \
		grep -Eq 'qroce_port_announce .*announced the GIDs: [1-9][0-9]* gratuitous ARPs, [1-9][0-9]* neighbour' \
		"$QR_DIR/g$2/qemu-$m.log"
	qr_check "$1: the bridge forwards guest $2's MAC to its new port (tap$2$m)" \
		sh -c "ip netns exec '$QR_NS' bridge fdb show br br0 | grep -q '^52:54:00:00:00:0$2 dev tap$2$m '"
}

# window TAG: the retransmissions since TAG.r0 within the windows the
# move can cost: the one in flight when the source stopped, one for each
# retransmission timeout that fired while the path was down (the move's
# downtime in TAG.mig, over the QPs' local ACK timeout: 14, 67 ms, for
# the pingpong, perftest and qroce-rdma alike; rounded up), and one more
# for the acknowledgements lost with them; a window is 128 PSNs.  Each
# move of TAG (TAG.migs) adds its windows
window() {
	r=$(($(retrans) - $(cat "$QR_DIR/$1.r0")))
	w=1 dts=
	for dt in $(sed -n 's/.* downtime \([0-9][0-9]*\).*/\1/p' "$QR_DIR/$1.migs"); do
		w=$((w + 1 + (dt + 66) / 67))
		dts="$dts${dts:+, }$dt"
	done
	qr_log "$1: $r RoCE packets retransmitted across the move (downtime $dts ms: $w windows allowed)"
	qr_check "$1: retransmissions across the move within $w windows ($r)" [ "$r" -le $((w * 128)) ]
}

# odp_steady: guest 2's odp_faults counter once two readings a second
# apart agree (its buffers' first faults are over), at most 8 readings
odp_steady() {
	a=$(qr_counter 2 odp_faults)
	for _ in 1 2 3 4 5 6 7; do
		sleep 1
		b=$(qr_counter 2 odp_faults)
		[ "$a" = "$b" ] && break
		a=$b
	done
	echo "$a"
}

# running G NAME: qr_bg job NAME in guest G has not ended yet
running() {
	qr_exec "$1" "[ ! -e /tmp/bg.$2 ]"
}

# across TAG PORT AFTER LIMIT SERVER CLIENT: SERVER in guest 1 until it
# listens on PORT, CLIENT in guest 2 (both with qr_bg), guest 2 moved
# AFTER seconds later with its checks (the guests in $MOVE instead, one
# after the other: "1 2" moves both ends); then both waited for (LIMIT
# seconds), their outputs in TAG.srv and TAG.cli, their statuses in $src
# and $crc; guest 2's odp_faults counter when it stopped growing before
# the move is in $odp_pre, right after the (last) move in $odp_at_move
across() {
	retrans >"$QR_DIR/$1.r0"
	: >"$QR_DIR/$1.migs"
	qr_bg 1 srv "$5"
	qr_wait_listen 1 "$2"
	qr_bg 2 cli "$6"
	sleep "$3"
	odp_pre=0
	[ "$1" != odp ] || odp_pre=$(odp_steady)
	for mg in ${MOVE:-2}; do
		qr_migrate "$mg" >"$QR_DIR/$1.mig" 2>&1
		cat "$QR_DIR/$1.mig" >>"$QR_DIR/$1.migs"
		moved "$1" "$mg"
	done
	odp_at_move=$(qr_counter 2 odp_faults)
	qr_check "$1: ${6%% *} was still running when the move ended" running 2 cli
	qr_bg_wait 2 cli "$4" >"$QR_DIR/$1.cli"
	crc=$?
	qr_bg_wait 1 srv "$4" >"$QR_DIR/$1.srv"
	src=$?
}

if qr_boot 2 switch; then
	# 1. ibv_rc_pingpong
	# (rcpp: qr_pingpong's own logs are pp.cli and pp.srv)
	across rcpp 18515 2 300 "ibv_rc_pingpong -d qroce_0 -g 1 -n 20000" \
		"ibv_rc_pingpong -d qroce_0 -g 1 -n 20000 10.0.0.1"
	qr_check "rcpp: ibv_rc_pingpong -n 20000 across the move: both exit 0, 20000 iters each" \
		sh -c "[ $crc = 0 ] && [ $src = 0 ] && grep -q '^20000 iters in' '$QR_DIR/rcpp.cli' && grep -q '^20000 iters in' '$QR_DIR/rcpp.srv' ||
			{ echo 'exit $crc (client), $src (server)'; tail -n 3 '$QR_DIR/rcpp.cli' '$QR_DIR/rcpp.srv'; exit 1; }"
	window rcpp

	# 2. ib_write_bw
	across bw 18515 4 120 "ib_write_bw -d qroce_0 -x 1 -F -s 65536 -D 15" \
		"ib_write_bw -d qroce_0 -x 1 -F -s 65536 -D 15 10.0.0.1"
	qr_check "bw: ib_write_bw -D 15 across the move: both exit 0, a result row" \
		sh -c "[ $crc = 0 ] && [ $src = 0 ] && grep -Eq '^ *65536 +[0-9]+ +[0-9.]+ +[0-9.]+' '$QR_DIR/bw.cli'"
	qr_log "bw: $(grep -E '^ *65536 ' "$QR_DIR/bw.cli")"
	window bw

	# 3. qroce-rdma: atomics, then WRITE/READ patterns compared
	across rw 18516 6 200 "qroce-rdma -d qroce_0 -g 1 -a 1000 -k 50 -W 15 -l" \
		"qroce-rdma -d qroce_0 -g 1 -a 1000 -k 50 -W 15 10.0.0.1"
	sed 's/^/# client: /' "$QR_DIR/rw.cli"
	sed 's/^/# server: /' "$QR_DIR/rw.srv"
	qr_check "rw: FETCH_ADD counter, CMP_SWAP lock and every WRITE/READ pattern right across the move" \
		sh -c "[ $crc = 0 ] && [ $src = 0 ] && ! grep -q '^FAIL' '$QR_DIR/rw.srv' '$QR_DIR/rw.cli' &&
			grep -q '^PASS 2 x 1000 FETCH_ADD on one address: counter 2000\$' '$QR_DIR/rw.srv' &&
			grep -q '^PASS CMP_SWAP lock: 2 x 50 increments under it give 100, lock 0\$' '$QR_DIR/rw.srv' &&
			grep -q '^PASS the pattern region (1 MiB) is what the client wrote' '$QR_DIR/rw.srv' &&
			grep -Eq '^client: [1-9][0-9]* WRITE/READ pattern rounds, each read back the same' '$QR_DIR/rw.cli'"
	window rw

	# 3b. both ends of the RC pair, one after the other: guest 1 (whose
	# 1 MiB region the client WRITEs into and READs back) moves, then
	# guest 2, while the same pattern traffic runs
	MOVE="1 2"
	across both 18516 4 300 "qroce-rdma -d qroce_0 -g 1 -a 100 -k 10 -W 20 -l" \
		"qroce-rdma -d qroce_0 -g 1 -a 100 -k 10 -W 20 10.0.0.1"
	MOVE=2
	qr_check "both: both ends moved, one after the other: atomics, lock and every WRITE/READ pattern right" \
		sh -c "[ $crc = 0 ] && [ $src = 0 ] && ! grep -q '^FAIL' '$QR_DIR/both.srv' '$QR_DIR/both.cli' &&
			grep -q '^PASS the pattern region (1 MiB) is what the client wrote' '$QR_DIR/both.srv' &&
			grep -Eq '^client: [1-9][0-9]* WRITE/READ pattern rounds, each read back the same' '$QR_DIR/both.cli'"
	window both

	# 3c. on-demand paging: the same patterns on untouched ODP memory on
	# both sides (qroce-rdma -O); guest 2's ODP entries do not move, so
	# its buffers fault again on the new QEMU: its odp_faults counter
	# grows after the move, and every byte still compares
	f0=$(qr_counter 2 odp_faults)
	across odp 18516 4 200 "qroce-rdma -d qroce_0 -g 1 -a 100 -k 10 -W 15 -O -l" \
		"qroce-rdma -d qroce_0 -g 1 -a 100 -k 10 -W 15 -O 10.0.0.1"
	f2=$(qr_counter 2 odp_faults)
	qr_log "odp: guest 2's odp_faults $f0 at the start, $odp_pre before the move (steady), $odp_at_move right after it, $f2 at the end"
	qr_check "odp: ODP patterns right across the move, guest 2 faulted before ($f0 -> $odp_pre) and after it (-> $f2)" \
		sh -c "[ $crc = 0 ] && [ $src = 0 ] && ! grep -q '^FAIL' '$QR_DIR/odp.srv' '$QR_DIR/odp.cli' &&
			grep -q '^PASS the pattern region (1 MiB) is what the client wrote' '$QR_DIR/odp.srv' &&
			[ $odp_pre -gt $f0 ] && [ $f2 -gt $odp_pre ]"
	# (no window check here: a page fault at the responder is answered
	# with an RNR NAK, and the requester sends again, move or not)
	qr_log "odp: $(($(retrans) - $(cat "$QR_DIR/odp.r0"))) RoCE packets retransmitted (page faults' RNR NAKs and the move)"

	# 4. a snapshot: guest 2 saved to a file and gone for 4 s, then a new
	# QEMU loads it, while guest 1 WRITEs into it with ib_write_bw.  Guest
	# 1's QP retries meanwhile: perftest sets timeout 14 (67 ms) and
	# retry_cnt 7, which as on hardware gives up after 8 x 67 ms = 0.54 s;
	# for this step guest 1's device doubles the timeout at each retry
	# (retry-backoff 6: up to x64), so the peer gives up only after
	# 67 ms x (1 + 2 + ... + 64 + 64) = 12.8 s and a 4 s gap is covered
	qr_qom_set 1 retry-backoff 6
	r0=$(qr_counter 1 roce_retrans)
	qr_bg 2 srv "ib_write_bw -d qroce_0 -x 1 -F -s 65536 -D 20"
	qr_wait_listen 2 18515
	qr_bg 1 cli "ib_write_bw -d qroce_0 -x 1 -F -s 65536 -D 20 10.0.0.2"
	sleep 4
	snap=$QR_DIR/g2.snapshot
	if qr_snapshot 2 "$snap" >"$QR_DIR/snap.mig" 2>&1; then
		qr_log "snapshot of guest 2: $(cat "$QR_DIR/snap.mig"), $(($(wc -c <"$snap") / 1048576)) MiB"
		sleep 4
		qr_check "snapshot: guest 2 saved to a file, its QEMU gone for 4 s, restored by a new QEMU" \
			qr_restore 2 "$snap"
	else
		qr_fail "snapshot: guest 2 could not be saved: $(cat "$QR_DIR/snap.mig")"
	fi
	rm -f "$snap"
	qr_check "snapshot: ib_write_bw was still running after the restore" running 1 cli
	qr_bg_wait 1 cli 120 >"$QR_DIR/snap.cli"
	crc=$?
	qr_bg_wait 2 srv 120 >"$QR_DIR/snap.srv"
	src=$?
	qr_check "snapshot: ib_write_bw -D 20 across a 4 s gap: both exit 0, a result row" \
		sh -c "[ $crc = 0 ] && [ $src = 0 ] && grep -Eq '^ *65536 +[0-9]+ +[0-9.]+ +[0-9.]+' '$QR_DIR/snap.cli'"
	r=$(($(qr_counter 1 roce_retrans) - r0))
	qr_check "snapshot: the peer's retries covered the gap (guest 1 retransmitted $r packets)" [ "$r" -gt 0 ]
	qr_qom_set 1 retry-backoff 0

	# the moved guest works as before: a fresh pingpong
	qr_check "after three moves and a snapshot: ibv_rc_pingpong -n 200 -c" qr_pingpong ibv_rc_pingpong -n 200 -c
fi
qr_finish
