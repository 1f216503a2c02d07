#!/bin/sh
# One-sided verbs so far: RDMA WRITE and WRITE with immediate.  The
# correctness program in one guest (device loopback), then perftest's
# send and write tests between two guests (exit 0 and a parsed result).
. "$(dirname "$0")/lib.sh"
qr_init rdma-write
qr_boot 2 || { QR_FAIL=$((QR_FAIL + 1)); qr_finish; }
QR_TIMEOUT=600

write_program() {
	qr_exec 1 'qroce-write -d qroce_0 -g 1 -n 200 -s 7' >"$QR_DIR/w.out"
	rc=$?
	cat "$QR_DIR/w.out"
	[ $rc -eq 0 ] && ! grep -q '^FAIL' "$QR_DIR/w.out" &&
		[ "$(grep -c '^PASS' "$QR_DIR/w.out")" -eq 12 ] &&
		grep -q '^PASS 200 of 200 random' "$QR_DIR/w.out"
}
qr_check "random multi-SGE RDMA WRITEs, WRITE with immediate, access errors" write_program
qr_check "ib_write_bw -s 65536" qr_perftest ib_write_bw -s 65536 -n 100
qr_check "ib_write_lat -s 8" qr_perftest ib_write_lat -s 8 -n 100
qr_check "ib_send_bw -s 65536" qr_perftest ib_send_bw -s 65536 -n 100
qr_check "ib_send_lat -s 8" qr_perftest ib_send_lat -s 8 -n 100

# UD: perftest's UD mode (address handles, one packet per message).
qr_check "ib_send_bw -c UD -s 1024 (the UD MTU)" qr_perftest ib_send_bw -c UD -s 1024 -n 500
qr_check "ib_send_lat -c UD -s 8" qr_perftest ib_send_lat -c UD -s 8 -n 200

# UC has no data path in the device yet: QP creation must fail at once
# (perftest exits non-zero within the timeout) instead of hanging.
unsupported_qp() {
	qr_perftest ib_send_bw -c "$1" -n 10 >"$QR_DIR/u.out" 2>&1
	rc=$?
	cat "$QR_DIR/u.out"
	[ $rc -ne 0 ] && ! grep -q "timed out" "$QR_DIR/u.out" &&
		[ "$(grep -c "Unable to create QP" "$QR_DIR/u.out")" -eq 2 ]
}
QR_TIMEOUT=60
qr_check "UC QP refused with an error, not a hang" unsupported_qp UC
qr_finish
