#!/bin/sh
# The driver's kernel post path as a kernel ULP uses it (issue 15):
# tests/kmod/qroce_ktest.ko, built with the driver but not part of it,
# connects two RC QPs through the device and checks FETCH_AND_ADD,
# CMP_AND_SWP (a swap and a miss) through a PD's global rkey, a SEND with
# IB_SEND_INLINE from kernel virtual memory, and an RDMA READ followed by
# an IB_SEND_FENCE inline SEND, and a kernel SRQ grown with
# IB_SRQ_MAX_WR while receives are posted; each result is compared in
# the module, which prints PASS/FAIL lines and a summary into dmesg.
. "$(dirname "$0")/lib.sh"
qr_init kverbs
qr_boot 1 || { QR_FAIL=$((QR_FAIL + 1)); qr_finish; }

kverbs() {
	QR_TIMEOUT=120 qr_exec 1 'insmod /lib/modules/qroce/qroce_ktest.ko && rmmod qroce_ktest; dmesg | grep "qroce_ktest:"' >"$QR_DIR/kt.out" 2>&1
	rc=$?
	cat "$QR_DIR/kt.out"
	[ $rc -eq 0 ] && ! grep -q 'qroce_ktest: FAIL' "$QR_DIR/kt.out" &&
		grep -q 'qroce_ktest: 10 passed, 0 failed' "$QR_DIR/kt.out"
}

qr_check "kernel verbs: atomics, inline SEND from kernel memory, fence, SRQ resize" kverbs
qr_finish
