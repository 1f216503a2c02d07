#!/bin/sh
# Shared receive queues between two guests: ibv_srq_pingpong (several RC
# QPs receiving from one SRQ), perftest's --use-srq for RC and UD, and the
# SRQ limit event.
. "$(dirname "$0")/lib.sh"
qr_init srq
qr_boot 2 || { QR_FAIL=$((QR_FAIL + 1)); qr_finish; }

srq_pingpong() { qr_pingpong ibv_srq_pingpong "$@"; }

srq_program() {
	qr_exec 1 'qroce-srq -d qroce_0 -g 1' >"$QR_DIR/srq.out"
	rc=$?
	cat "$QR_DIR/srq.out"
	[ $rc -eq 0 ] && ! grep -q '^FAIL' "$QR_DIR/srq.out" &&
		[ "$(grep -c '^PASS' "$QR_DIR/srq.out")" -eq 13 ]
}

qr_check "SRQ in one guest: order, limit event, LAST_WQE, destroy in use" srq_program
qr_check "ibv_srq_pingpong: 16 QPs on one SRQ x 500" srq_pingpong -q 16 -n 500
qr_check "ibv_srq_pingpong -s 65536 -q 4 -e" srq_pingpong -s 65536 -q 4 -n 50 -e
qr_check "ib_send_bw --use-srq -s 65536" qr_perftest ib_send_bw --use-srq -s 65536 -n 200
qr_check "ib_send_bw -c UD --use-srq -s 1024" qr_perftest ib_send_bw -c UD --use-srq -s 1024 -n 500
qr_finish
