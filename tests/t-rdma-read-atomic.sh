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

qr_check "READ back random multi-SGE WRITEs, READs in flight, atomics, access errors" one_guest
qr_check "two guests: 2 x 10000 FETCH_ADD = 20000, CMP_SWAP lock" qr_atomics 10000 300
qr_check "ib_read_bw -s 65536" qr_perftest ib_read_bw -s 65536 -n 100
qr_check "ib_read_lat -s 8" qr_perftest ib_read_lat -s 8 -n 100
qr_check "ib_atomic_bw (FETCH_ADD)" qr_perftest ib_atomic_bw -n 200
qr_check "ib_atomic_bw -A CMP_AND_SWAP" qr_perftest ib_atomic_bw -A CMP_AND_SWAP -n 200
qr_check "ib_atomic_lat" qr_perftest ib_atomic_lat -n 100
qr_finish
