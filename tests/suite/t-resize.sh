#!/bin/sh
# CQ resize (issue 15, docs/hw-spec.md §3 RESIZE_CQ): qroce-resize grows
# and shrinks a CQ with completions outstanding and checks that each one
# arrives exactly once and in order, that a resize below what is
# outstanding fails with EINVAL and loses nothing, and that traffic goes
# on afterwards.  MR re-registration (REREG_MR): qroce-rereg moves an MR
# to new memory, takes its remote access away and gives it back, moves
# it to another PD, and checks through RDMA WRITEs that each change is
# what the device enforces, with the key unchanged.  SRQ resize
# (MODIFY_SRQ with MAX_WR): qroce-srq-resize grows an SRQ with receives
# posted and one consumed but not polled, shrinks it, and checks that
# every receive completes once, in order, into its own buffer, and that
# a shrink below what is posted fails with EINVAL and loses none.  Memory
# windows (ALLOC_MW, BIND_MW): qroce-mw binds type 1 and type 2 windows
# over an MR with no remote access of its own, writes through them, and
# checks that every write outside a window, through an old or invalidated
# (LOCAL_INV, SEND with Invalidate) rkey, or from a QP a type 2 window is
# not bound to fails with a remote access error and leaves the target
# unchanged.
. "$(dirname "$0")/../lib/lib.sh"
qr_init resize
qr_boot 1 || { qr_fail "qr_boot 1: the guest did not boot"; qr_finish; }

# prog NAME N: guest program NAME exits 0 with N PASS lines and no FAIL
prog() {
	qr_exec 1 "$1" >"$QR_DIR/$1.out" 2>&1
	rc=$?
	cat "$QR_DIR/$1.out"
	[ $rc -eq 0 ] && ! grep -q '^FAIL' "$QR_DIR/$1.out" &&
		[ "$(grep -c '^PASS' "$QR_DIR/$1.out")" -eq "$2" ]
}

qr_check "ibv_resize_cq: grow and shrink with CQEs outstanding, EINVAL below them" prog qroce-resize 13
qr_check "ibv_rereg_mr: new memory, access and PD in place, the key kept" prog qroce-rereg 11
# ibv_devinfo -v: SRQ_RESIZE, and not RESIZE_MAX_WR (QPs are not resized)
devcap() {
	qr_exec 1 'ibv_devinfo -v -d qroce_0' >"$QR_DIR/devinfo" || return 1
	grep -E 'SRQ_RESIZE|RESIZE_MAX_WR' "$QR_DIR/devinfo"
	grep -qw SRQ_RESIZE "$QR_DIR/devinfo" &&
		! grep -qw RESIZE_MAX_WR "$QR_DIR/devinfo"
}

qr_check "ibv_modify_srq(IBV_SRQ_MAX_WR): grow and shrink with receives posted" prog qroce-srq-resize 14
qr_check "ibv_devinfo -v: SRQ_RESIZE set, RESIZE_MAX_WR not" devcap
qr_check "memory windows type 1 and 2: bind, access, invalidate, refuse" prog qroce-mw 19
mwcap() {
	grep -E 'MEM_WINDOW' "$QR_DIR/devinfo"
	grep -qw MEM_WINDOW "$QR_DIR/devinfo" &&
		grep -qw MEM_WINDOW_TYPE_2B "$QR_DIR/devinfo" &&
		grep -Eq 'max_mw:[[:space:]]*[1-9]' "$QR_DIR/devinfo"
}
qr_check "ibv_devinfo -v: MEM_WINDOW, MEM_WINDOW_TYPE_2B, max_mw" mwcap
qr_finish
