#!/bin/sh
# Where the verbs leave a choice, qroce does what RDMA hardware does
# (issue 34; docs/hw-spec.md): tests/guest/qroce-hw-rules in one guest,
# on qroce_0 and on Linux's rdma_rxe (rxe0, on the guest's virtio-net
# NIC) with the same expectations.  Every check must pass on qroce; rxe's
# results are printed beside them (it fails some: they are its choices,
# not the rules).  The checks: a type 2 bind takes the key byte of the
# new rkey; a zero-based type 2 window; a zero-length MR with 0-byte
# SEND, WRITE and READ; a bad local key of an atomic is caught when the
# answer is placed; arming for any completion then for solicited keeps
# "any"; a UD message longer than the RECV is dropped and the RECV kept;
# retry exhaustion within timeout x (retry_cnt + 1).
. "$(dirname "$0")/../lib/lib.sh"
qr_init hw-rules
QR_TIMEOUT=120
qr_boot 1 rxe || { qr_fail "qr_boot 1 rxe: the guest did not boot"; qr_finish; }

# rules DEV: qroce-hw-rules on DEV with its IPv4 RoCE v2 GID; its output
# in $QR_DIR/DEV.out, its status in $rc
rules() {
	g=$(qr_gid_v4 1 "$1")
	[ -n "$g" ] || { echo "no IPv4 RoCE v2 GID on $1" >"$QR_DIR/$1.out"; rc=2; return; }
	qr_exec 1 "qroce-hw-rules -d $1 -g $g" >"$QR_DIR/$1.out" 2>&1
	rc=$?
}

rules rxe0
sed 's/^/# rxe0: /' "$QR_DIR/rxe0.out"
qr_log "rxe0: $(grep -c '^PASS' "$QR_DIR/rxe0.out") passed, $(grep -c '^FAIL' "$QR_DIR/rxe0.out") failed (rxe's own choices)"
rules qroce_0
sed 's/^/# qroce_0: /' "$QR_DIR/qroce_0.out"
for c in mw-key-byte mw-zero-based zero-length-mr local-key-order \
	arm-any-then-solicited ud-too-long retry-timing; do
	qr_check "qroce_0: $(grep -m1 "^[A-Z]* $c:" "$QR_DIR/qroce_0.out" | cut -d' ' -f2-) (rxe0: $(grep -m1 "^[A-Z]* $c:" "$QR_DIR/rxe0.out" | cut -d' ' -f1))" \
		sh -c "grep '^[A-Z]* $c:' '$QR_DIR/qroce_0.out' | grep -qv '^PASS' && exit 1; grep -q '^PASS $c:' '$QR_DIR/qroce_0.out'"
done
qr_check "qroce-hw-rules on qroce_0 exits 0" [ "$rc" = 0 ]
qr_finish
