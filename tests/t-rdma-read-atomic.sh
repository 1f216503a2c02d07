#!/bin/sh
# RDMA READ and atomics: the correctness program in one guest (device
# loopback), then two guests adding to one counter and sharing a CMP_SWAP
# lock, then perftest's read and atomic tests between the two guests.
. "$(dirname "$0")/lib.sh"
qr_init rdma-read-atomic
qr_boot 2 || { QR_FAIL=$((QR_FAIL + 1)); qr_finish; }
QR_TIMEOUT=600

one_guest() {
	qr_exec 1 'qroce-rdma -d qroce_0 -g 1 -n 100 -s 11' >"$QR_DIR/r.out"
	rc=$?
	cat "$QR_DIR/r.out"
	[ $rc -eq 0 ] && ! grep -q '^FAIL' "$QR_DIR/r.out" &&
		[ "$(grep -c '^PASS' "$QR_DIR/r.out")" -eq 29 ] &&
		grep -q '^PASS 100 of 100 random' "$QR_DIR/r.out"
}

# Both guests: 10000 FETCH_ADDs each on the server's counter, 300
# increments each of another counter under a CMP_SWAP lock.
two_guests() {
	qr_bg 1 atom 'qroce-rdma -d qroce_0 -g 1 -a 10000 -k 300 -l' || return 1
	qr_wait_listen 1 18516 || { qr_bg_wait 1 atom 5; return 1; }
	qr_exec 2 'qroce-rdma -d qroce_0 -g 1 -a 10000 -k 300 10.0.0.1' \
		>"$QR_DIR/a.cli"
	crc=$?
	qr_bg_wait 1 atom 500 >"$QR_DIR/a.srv"
	src=$?
	cat "$QR_DIR/a.cli" "$QR_DIR/a.srv"
	[ $crc -eq 0 ] && [ $src -eq 0 ] && ! grep -q '^FAIL' "$QR_DIR/a.srv" &&
		grep -q '^PASS 2 x 10000 FETCH_ADD on one address: counter 20000$' \
			"$QR_DIR/a.srv" &&
		grep -q '^PASS FETCH_ADD results are 0..19999, each once' "$QR_DIR/a.srv" &&
		grep -q '^PASS CMP_SWAP lock: 2 x 300 increments under it give 600, lock 0$' \
			"$QR_DIR/a.srv"
}

qr_check "READ back random multi-SGE WRITEs, READs in flight, atomics, access errors" one_guest
qr_check "two guests: 2 x 10000 FETCH_ADD = 20000, CMP_SWAP lock" two_guests
qr_check "ib_read_bw -s 65536" qr_perftest ib_read_bw -s 65536 -n 100
qr_check "ib_read_lat -s 8" qr_perftest ib_read_lat -s 8 -n 100
qr_check "ib_atomic_bw (FETCH_ADD)" qr_perftest ib_atomic_bw -n 200
qr_check "ib_atomic_bw -A CMP_AND_SWAP" qr_perftest ib_atomic_bw -A CMP_AND_SWAP -n 200
qr_check "ib_atomic_lat" qr_perftest ib_atomic_lat -n 100
qr_finish
