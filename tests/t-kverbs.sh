#!/bin/sh
# The driver's kernel post path as a kernel ULP uses it (issue 15):
# tests/kmod/qroce_ktest.ko, built with the driver but not part of it.
#
# In one guest (loopback through the device) it connects two RC QPs and
# checks FETCH_AND_ADD, CMP_AND_SWP (a swap and a miss) through a
# fast-registration MR's rkey, a SEND with IB_SEND_INLINE from kernel
# virtual memory, an RDMA READ followed by an IB_SEND_FENCE inline SEND,
# and a kernel SRQ grown with IB_SRQ_MAX_WR while receives are posted.
#
# Between two guests (role=target in guest 1, role=initiator in guest 2)
# the same atomics, inline SENDs and fenced READ cross the wire: each
# side prints its QPN, the script hands each the other's "QPN IPv4 MAC"
# (and the initiator the target's rkey and address) through the
# parameter "peer", the initiator checks every result by reading the
# target's memory back, and reading the target's parameter "check" has
# the target compare the SENDs' bytes and the atomics' result in its own
# memory.  The initiator's RoCE counters must show the traffic.  Each
# module prints PASS/FAIL lines and a summary into dmesg.
. "$(dirname "$0")/lib.sh"
qr_init kverbs
qr_boot 2 || { QR_FAIL=$((QR_FAIL + 1)); qr_finish; }

KT=/lib/modules/qroce/qroce_ktest.ko
P=/sys/module/qroce_ktest/parameters

kverbs() {
	QR_TIMEOUT=120 qr_exec 1 "insmod $KT && rmmod qroce_ktest; dmesg | grep 'qroce_ktest:'" >"$QR_DIR/kt.out" 2>&1
	rc=$?
	cat "$QR_DIR/kt.out"
	[ $rc -eq 0 ] && ! grep -q 'qroce_ktest: FAIL' "$QR_DIR/kt.out" &&
		grep -q 'qroce_ktest: 10 passed, 0 failed' "$QR_DIR/kt.out"
}

# kt_line G PATTERN: the last dmesg line of qroce_ktest in guest G with it
kt_line() {
	qr_exec "$1" "dmesg | grep 'qroce_ktest: $2' | tail -1"
}

# field NAME LINE: the value of NAME=... in LINE
field() {
	echo "$2" | sed -n "s/.*$1=\([0-9a-fx]*\).*/\1/p"
}

kverbs2() {
	qr_exec 1 "insmod $KT role=target" || return 1
	qr_exec 2 "insmod $KT role=initiator" || return 1
	tq=$(field qpn "$(kt_line 1 'target qpn')")
	iq=$(field qpn "$(kt_line 2 'initiator qpn')")
	echo "target QPN $tq, initiator QPN $iq"
	[ -n "$tq" ] && [ -n "$iq" ] || return 1
	qr_exec 1 "echo '$iq 10.0.0.2 52:54:00:00:00:02' >$P/peer" || return 1
	tl=$(kt_line 1 'target rkey')
	rkey=$(field rkey "$tl") addr=$(field addr "$tl")
	echo "target: rkey $rkey, address $addr"
	[ -n "$rkey" ] && [ -n "$addr" ] || return 1
	tx0=$(qr_counter 2 roce_tx_pkts)
	QR_TIMEOUT=120 qr_exec 2 "echo '$tq 10.0.0.1 52:54:00:00:00:01 ${rkey#0x} ${addr#0x}' >$P/peer" || return 1
	tx1=$(qr_counter 2 roce_tx_pkts)
	QR_TIMEOUT=60 qr_exec 1 "cat $P/check" >"$QR_DIR/check" 2>&1
	qr_exec 1 "rmmod qroce_ktest; dmesg | grep 'qroce_ktest:'" >"$QR_DIR/kt1.out" 2>&1
	qr_exec 2 "rmmod qroce_ktest; dmesg | grep 'qroce_ktest:'" >"$QR_DIR/kt2.out" 2>&1
	sed 's/^/guest 1: /' "$QR_DIR/kt1.out"
	sed 's/^/guest 2: /' "$QR_DIR/kt2.out"
	echo "initiator: $((tx1 - tx0)) RoCE packets sent during the checks"
	! grep -q 'qroce_ktest: FAIL' "$QR_DIR/kt1.out" "$QR_DIR/kt2.out" &&
		grep -q 'qroce_ktest: 7 passed, 0 failed' "$QR_DIR/kt2.out" &&
		grep -q 'qroce_ktest: target: 3 passed, 0 failed' "$QR_DIR/kt1.out" &&
		grep -q '^3 passed, 0 failed' "$QR_DIR/check" &&
		[ $((tx1 - tx0)) -ge 7 ]
}

qr_check "kernel verbs: atomics, inline SEND from kernel memory, fence, SRQ resize" kverbs
qr_check "kernel verbs between two guests: atomics, inline SENDs, fenced READ" kverbs2
qr_finish
