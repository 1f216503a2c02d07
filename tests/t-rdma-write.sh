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
# perftest T ARGS: server in guest 1, client in guest 2; both exit 0 and
# print a result row whose first column is the message size.
perftest() {
	t=$1
	shift
	qr_bg 1 srv "$t -d qroce_0 -x 1 -F $*" || return 1
	qr_wait_listen 1 18515 || { qr_bg_wait 1 srv 5; return 1; }
	qr_exec 2 "$t -d qroce_0 -x 1 -F $* 10.0.0.1" >"$QR_DIR/pt.cli"
	crc=$?
	qr_bg_wait 1 srv 120 >"$QR_DIR/pt.srv"
	src=$?
	cat "$QR_DIR/pt.cli"
	sed 's/^/server: /' "$QR_DIR/pt.srv"
	size=$(echo "$*" | sed -n 's/.*-s \([0-9]*\).*/\1/p')
	[ $crc -eq 0 ] && [ $src -eq 0 ] &&
		grep -Eq "^ *$size +[0-9]+ +[0-9.]+ +[0-9.]+" "$QR_DIR/pt.cli" &&
		grep -Eq "^ *$size +[0-9]+ +[0-9.]+ +[0-9.]+" "$QR_DIR/pt.srv"
}

qr_check "random multi-SGE RDMA WRITEs, WRITE with immediate, access errors" write_program
qr_check "ib_write_bw -s 65536" perftest ib_write_bw -s 65536 -n 100
qr_check "ib_write_lat -s 8" perftest ib_write_lat -s 8 -n 100
qr_check "ib_send_bw -s 65536" perftest ib_send_bw -s 65536 -n 100
qr_check "ib_send_lat -s 8" perftest ib_send_lat -s 8 -n 100
qr_finish
