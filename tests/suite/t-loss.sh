#!/bin/sh
# Loss recovery: the two guests on a UDP wire (dgram), which drops frames
# when a receiving socket buffer overflows under bursts.  Bulk WRITEs and
# READs must still complete (go-back-N, READ resumption), and atomics must
# be executed exactly once: a retransmitted atomic is answered from the
# responder's history, so 2 x N FETCH_ADDs still end at 2N.
. "$(dirname "$0")/../lib/lib.sh"
qr_init loss
qr_boot 2 dgram trace || { qr_fail "qr_boot 2 dgram trace: the guests did not boot"; qr_finish; }
QR_TIMEOUT=600

qr_check "ib_write_bw -s 65536 over a lossy wire" qr_perftest ib_write_bw -s 65536 -n 500
qr_check "ib_read_bw -s 65536 over a lossy wire" qr_perftest ib_read_bw -s 65536 -n 300
qr_check "ib_send_bw -s 65536 over a lossy wire" qr_perftest ib_send_bw -s 65536 -n 300
qr_check "two guests: atomics exactly once over a lossy wire" qr_atomics 3000 200
# the checks above mean something only if frames were lost and recovered
recovered() {
	naks=$(cat "$QR_DIR"/g*/trace.log | grep -c 'qroce_rc_ack_tx.*syndrome 0x60')
	tmo=$(cat "$QR_DIR"/g*/trace.log | grep -c 'qroce_rc_timeout')
	echo "$naks sequence NAKs sent, $tmo retry timeouts"
	[ $((naks + tmo)) -gt 0 ]
}
qr_check "frames were lost and recovered (sequence NAKs or timeouts in the trace)" recovered
# the guests see the same through the device's counters (rdma statistic)
counted() {
	naks=$(( $(qr_counter 1 roce_seq_naks) + $(qr_counter 2 roce_seq_naks) ))
	rtx=$(( $(qr_counter 1 roce_retrans) + $(qr_counter 2 roce_retrans) ))
	trace=$(cat "$QR_DIR"/g*/trace.log | grep -c 'qroce_rc_ack_tx.*syndrome 0x60')
	echo "counters: $naks sequence NAKs, $rtx packets retransmitted; trace: $trace NAKs"
	[ "$naks" -ge "$trace" ] && [ "$rtx" -gt 0 ]  # the trace file may lag
}
qr_check "rdma statistic: every traced NAK counted, retransmissions counted" counted
qr_finish
