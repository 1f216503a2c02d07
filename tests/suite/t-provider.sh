#!/bin/sh
# The provider (libqroce): stock ibv_devices/ibv_devinfo, the extended verbs
# program in one guest (ibv_create_cq_ex polling, ibv_wr_* posting, error
# paths), parent and thread domains (qroce-pd), device memory (qroce-dm),
# on-demand paging and prefetch on dma-buf MRs (qroce-odp),
# and ibv_rc_pingpong with the new post-send API (-N) between two guests.
. "$(dirname "$0")/../lib/lib.sh"
qr_init provider
qr_boot 2 || { qr_fail "qr_boot 2: the guests did not boot"; qr_finish; }

devinfo() {
	qr_exec 1 'ibv_devices; ibv_devinfo -v -d qroce_0' >"$QR_DIR/devinfo.out"
	rc=$?
	cat "$QR_DIR/devinfo.out"
	[ $rc -eq 0 ] && grep -q 'qroce_0' "$QR_DIR/devinfo.out" &&
		grep -q 'PORT_ACTIVE' "$QR_DIR/devinfo.out" &&
		grep -q 'GID\[ *1\]:.*::ffff:10\.0\.0\.1' "$QR_DIR/devinfo.out" &&
		grep -q 'active_mtu:.*4096' "$QR_DIR/devinfo.out" &&
		grep -q 'max_mtu:.*4096' "$QR_DIR/devinfo.out"
}
extended() {
	qr_exec 1 'qroce-prov -d qroce_0 -g 1' >"$QR_DIR/prov.out"
	rc=$?
	cat "$QR_DIR/prov.out"
	[ $rc -eq 0 ] && ! grep -q '^FAIL' "$QR_DIR/prov.out" &&
		[ "$(grep -c '^PASS' "$QR_DIR/prov.out")" -ge 30 ]
}
# prog NAME MIN: a PASS/FAIL program in guest 1: exit 0, no FAIL line,
# at least MIN PASS lines
prog() {
	qr_exec 1 "$1 -d qroce_0 -g 1" >"$QR_DIR/$1.out"
	rc=$?
	cat "$QR_DIR/$1.out"
	[ $rc -eq 0 ] && ! grep -q '^FAIL' "$QR_DIR/$1.out" &&
		[ "$(grep -c '^PASS' "$QR_DIR/$1.out")" -ge "$2" ]
}
# pingpong PROG ARGS: server in guest 1, client in guest 2 (lib.sh)
pingpong() { qr_pingpong "$@"; }

qr_check "ibv_devices, ibv_devinfo -v: qroce_0, PORT_ACTIVE, GID ::ffff:10.0.0.1, path MTU 4096 at Ethernet MTU 9000" devinfo
qr_check "extended verbs in one guest (cq_ex polling, ibv_wr_*, errors)" extended
qr_check "parent domains with a thread domain and an allocator: rings from it, traffic, refusals, EBUSY while a CQ, QP or SRQ uses one" prog qroce-pd 30
qr_check "device memory: ibv_alloc_dm, memcpy, pool, MRs on it under WRITE/READ/atomics/SEND/RECV" prog qroce-dm 20
qr_check "on-demand paging: untouched 256 MiB MR, local/remote faults, atomics, madvise/munmap invalidation, a hole, implicit ODP, prefetch, prefetch on dma-buf MRs" prog qroce-odp 62
qr_check "ibv_rc_pingpong -N (ibv_wr_* send API)" pingpong ibv_rc_pingpong -N -n 500
qr_check "ibv_rc_pingpong -N -e" pingpong ibv_rc_pingpong -N -e -n 200
qr_check "ibv_rc_pingpong -N -c -s 65536 (receiver checks the bytes)" pingpong ibv_rc_pingpong -N -c -s 65536 -n 50
qr_check "ibv_rc_pingpong -N -c -s 1" pingpong ibv_rc_pingpong -N -c -s 1 -n 200
qr_finish
