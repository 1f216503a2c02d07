#!/bin/sh
# Shared receive queues between two guests: ibv_srq_pingpong (several RC
# QPs receiving from one SRQ), perftest's --use-srq for RC and UD, and the
# SRQ limit event.
. "$(dirname "$0")/../lib/lib.sh"
qr_init srq
qr_boot 2 || { qr_fail "qr_boot 2: the guests did not boot"; qr_finish; }

srq_pingpong() { qr_pingpong ibv_srq_pingpong "$@"; }

srq_program() {
	qr_exec 1 'qroce-srq -d qroce_0 -g 1' >"$QR_DIR/srq.out"
	rc=$?
	cat "$QR_DIR/srq.out"
	[ $rc -eq 0 ] && ! grep -q '^FAIL' "$QR_DIR/srq.out" &&
		[ "$(grep -c '^PASS' "$QR_DIR/srq.out")" -eq 13 ]
}

# Two peers (processes in guest 2) send 64 KiB-class messages on four RC
# QPs that share one SRQ in guest 1; the SRQ is small and run dry on
# purpose.  Every byte, length and order checked by the server; guest 1's
# device must have answered with RNR NAKs.
srq_share() {
	r0=$(qr_counter 1 roce_rnr_naks)
	n="qroce-srq-share -d qroce_0 -g 1 -n 120"
	qr_server_client ss 18530 1 "$n -l" 2 \
		"$n -c 0 10.0.0.1 >/tmp/ss0 2>&1 & p=\$!; $n -c 1 10.0.0.1 >/tmp/ss1 2>&1; r=\$?; wait \$p; q=\$?; cat /tmp/ss0 /tmp/ss1; [ \$r -eq 0 ] && [ \$q -eq 0 ]" \
		300 || return 1
	r1=$(qr_counter 1 roce_rnr_naks)
	echo "RNR NAKs sent by guest 1: $r0 -> $r1"
	! grep -q '^FAIL' "$QR_DIR/ss.cli" "$QR_DIR/ss.srv" &&
		[ "$(grep -c '^PASS' "$QR_DIR/ss.srv")" -eq 8 ] &&
		[ "$(grep -c '^PASS' "$QR_DIR/ss.cli")" -eq 4 ] &&
		grep -q '^server: 480 messages' "$QR_DIR/ss.srv" &&
		[ "$r1" -gt "$r0" ]
}

qr_check "SRQ in one guest: order, limit event, LAST_WQE, destroy in use" srq_program
qr_check "4 RC QPs on one SRQ, 2 peers, interleaved 64 KiB SENDs, run dry" srq_share
qr_check "ibv_srq_pingpong: 16 QPs on one SRQ x 500" srq_pingpong -q 16 -n 500
qr_check "ibv_srq_pingpong -s 65536 -q 4 -e" srq_pingpong -s 65536 -q 4 -n 50 -e
qr_check "ib_send_bw --use-srq -s 65536" qr_perftest ib_send_bw --use-srq -s 65536 -n 200
qr_check "ib_send_bw -c UD --use-srq -s 1024" qr_perftest ib_send_bw -c UD --use-srq -s 1024 -n 500
qr_finish
