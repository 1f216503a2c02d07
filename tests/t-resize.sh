#!/bin/sh
# CQ resize (issue 15, docs/hw-spec.md §3 RESIZE_CQ): qroce-resize grows
# and shrinks a CQ with completions outstanding and checks that each one
# arrives exactly once and in order, that a resize below what is
# outstanding fails with EINVAL and loses nothing, and that traffic goes
# on afterwards; ibv_devinfo reports the CQ limits.
. "$(dirname "$0")/lib.sh"
qr_init resize
qr_boot 1 || { QR_FAIL=$((QR_FAIL + 1)); qr_finish; }

resize() {
	qr_exec 1 'qroce-resize' >"$QR_DIR/resize.out" 2>&1
	rc=$?
	cat "$QR_DIR/resize.out"
	[ $rc -eq 0 ] && ! grep -q '^FAIL' "$QR_DIR/resize.out" &&
		[ "$(grep -c '^PASS' "$QR_DIR/resize.out")" -eq 13 ]
}

qr_check "ibv_resize_cq: grow and shrink with CQEs outstanding, EINVAL below them" resize
qr_finish
