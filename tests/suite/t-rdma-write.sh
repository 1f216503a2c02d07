#!/bin/sh
# RDMA WRITE and WRITE with immediate: the correctness program in one
# guest (device loopback), then perftest's send and write tests between
# two guests (exit 0 and a parsed result), on RC, UD and UC QPs, and
# ibv_uc_pingpong.
. "$(dirname "$0")/../lib/lib.sh"
qr_init rdma-write
qr_boot 2 || { qr_fail "qr_boot 2: the guests did not boot"; qr_finish; }
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

# UC: SEND and RDMA WRITE without ACKs.
qr_check "ibv_uc_pingpong -s 4096 x 200" qr_pingpong ibv_uc_pingpong -s 4096 -n 200
qr_check "ib_send_bw -c UC -s 65536" qr_perftest ib_send_bw -c UC -s 65536 -n 200
qr_check "ib_write_bw -c UC -s 65536" qr_perftest ib_write_bw -c UC -s 65536 -n 200
qr_check "ib_write_lat -c UC -s 8" qr_perftest ib_write_lat -c UC -s 8 -n 200
qr_finish
