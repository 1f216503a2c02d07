#!/bin/sh
# The driver's kernel post path as a kernel ULP uses it (issue 15), with
# tests/kmod/qroce_ktest.ko, built with the driver but not part of it.
# Each result is compared in the module, which prints PASS/FAIL lines and
# a summary into dmesg.  Two guests:
#  - loopback, in guest 1 alone: the module connects two RC QPs through
#    the device and checks FETCH_AND_ADD, CMP_AND_SWP (a swap and a miss)
#    through a fast-registration MR's rkey, a SEND with IB_SEND_INLINE
#    from kernel virtual memory, an RDMA READ followed by an IB_SEND_FENCE
#    inline SEND, and a kernel SRQ grown with IB_SRQ_MAX_WR while
#    receives are posted;
#  - between the guests: guest 1 loads it as the target, guest 2 as the
#    initiator; each prints its QPN, GID and MAC (the target also its
#    buffer's rkey and address), which the script writes to the other's
#    parameter "peer".  Writing "run" connects the target (REG_MR, two
#    receives posted), then the initiator, which runs the atomics on the
#    target's buffer, an inline SEND from kernel memory, and an RDMA READ
#    and a fenced inline SEND, reading back with RDMA READs what each left
#    there; writing "check" on the target checks the two SENDs it received
#    and the value the atomics left.  Both summaries must be clean, the
#    RoCE packet counters must show the traffic on the wire, and rmmod
#    must tear both sides down.
. "$(dirname "$0")/../lib/lib.sh"
qr_init kverbs
qr_boot 2 || { qr_fail "qr_boot 2: the guests did not boot"; qr_finish; }

KT=/lib/modules/qroce/qroce_ktest.ko
KP=/sys/module/qroce_ktest/parameters

kverbs() {
	QR_TIMEOUT=120 qr_exec 1 "insmod $KT && rmmod qroce_ktest; dmesg | grep 'qroce_ktest:'" >"$QR_DIR/kt.out" 2>&1
	rc=$?
	cat "$QR_DIR/kt.out"
	[ $rc -eq 0 ] && ! grep -q 'qroce_ktest: FAIL' "$QR_DIR/kt.out" &&
		grep -q 'qroce_ktest: 10 passed, 0 failed' "$QR_DIR/kt.out"
}

# kt_load G ROLE: insmod in guest G as ROLE; its "me:" fields to
# $QR_DIR/ROLE.me
kt_load() {
	QR_TIMEOUT=120 qr_exec "$1" "insmod $KT role=$2 && dmesg | sed -n 's/.*qroce_ktest: $2: me: //p' | tail -1" >"$QR_DIR/$2.me" &&
		[ -s "$QR_DIR/$2.me" ] && echo "$2: me: $(cat "$QR_DIR/$2.me")"
}

# kt_step G PARAMETER: write 1 to the module's PARAMETER in guest G
kt_step() {
	QR_TIMEOUT=120 qr_exec "$1" "echo 1 >$KP/$2" || { echo "guest $1: $2 failed"; return 1; }
}

# kt_mark: qroce_0's counters in both guests, for kt_delta
kt_mark() {
	qr_stats 1 qroce_0 >"$QR_DIR/c0.1" && qr_stats 2 qroce_0 >"$QR_DIR/c0.2"
}

# kt_delta G COUNTER: how much COUNTER of guest G grew since kt_mark
kt_delta() {
	before=$(sed -n "s/^$2 //p" "$QR_DIR/c0.$1")
	now=$(qr_counter "$1" "$2")
	# nothing if either is missing; 32 bits, wrapping
	[ -n "$before" ] && [ -n "$now" ] &&
		echo $(((now - before + 4294967296) % 4294967296))
}

# kt_unload G ROLE: rmmod in guest G (must succeed and leave no module);
# its ROLE lines of dmesg to $QR_DIR/ROLE.out
kt_unload() {
	qr_exec "$1" "rmmod qroce_ktest && ! lsmod | grep -q qroce_ktest; r=\$?; dmesg | grep 'qroce_ktest: $2:'; exit \$r" >"$QR_DIR/$2.out" 2>&1
}

two_guests() {
	kt_load 1 target && kt_load 2 initiator || return 1
	kt_mark
	qr_exec 1 "echo '$(cat "$QR_DIR/initiator.me")' >$KP/peer" &&
		qr_exec 2 "echo '$(cat "$QR_DIR/target.me")' >$KP/peer" &&
		kt_step 1 run && kt_step 2 run && kt_step 1 check
	ok=$?
	itx=$(kt_delta 2 roce_tx_pkts) irx=$(kt_delta 2 roce_rx_pkts)
	ttx=$(kt_delta 1 roce_tx_pkts) trx=$(kt_delta 1 roce_rx_pkts)
	echo "RoCE packets: initiator tx $itx rx $irx, target tx $ttx rx $trx"
	kt_unload 2 initiator || ok=1
	kt_unload 1 target || ok=1
	cat "$QR_DIR/target.out" "$QR_DIR/initiator.out"
	# the initiator sends 11 requests (3 atomics, 3 READs of the value
	# they left, 2 SENDs, the fenced READ, 2 READs of the receive
	# buffers), each answered (an ACK, an atomic ACK or a READ response)
	[ $ok -eq 0 ] &&
		! grep -q FAIL "$QR_DIR/initiator.out" "$QR_DIR/target.out" &&
		grep -q 'qroce_ktest: initiator: 7 passed, 0 failed' "$QR_DIR/initiator.out" &&
		grep -q 'qroce_ktest: target: 5 passed, 0 failed' "$QR_DIR/target.out" &&
		[ "$itx" -ge 11 ] && [ "$trx" -ge 11 ] && [ "$ttx" -ge 11 ] && [ "$irx" -ge 11 ]
}

qr_check "kernel verbs: atomics, inline SEND from kernel memory, fence, SRQ resize" kverbs
qr_check "kernel verbs between two guests: atomics, inline SENDs, READ + fence" two_guests
qr_finish
