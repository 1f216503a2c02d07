#!/bin/sh
# RDMA READ and atomics: the correctness program in one guest (device
# loopback), then two guests adding to one counter and sharing a CMP_SWAP
# lock, then FLUSH and ATOMIC WRITE between the two guests (and the
# capability bits ibv_devinfo shows), WRITEs and READs on dma-buf MRs
# between the two guests, then perftest's read and atomic tests between
# the two guests.
. "$(dirname "$0")/../lib/lib.sh"
qr_init rdma-read-atomic
qr_boot 2 || { qr_fail "qr_boot 2: the guests did not boot"; qr_finish; }
QR_TIMEOUT=600

one_guest() {
	qr_exec 1 'qroce-rdma -d qroce_0 -g 1 -n 100 -s 11' >"$QR_DIR/r.out"
	rc=$?
	cat "$QR_DIR/r.out"
	[ $rc -eq 0 ] && ! grep -q '^FAIL' "$QR_DIR/r.out" &&
		[ "$(grep -c '^PASS' "$QR_DIR/r.out")" -eq 29 ] &&
		grep -q '^PASS 100 of 100 random' "$QR_DIR/r.out"
}

# FLUSH and ATOMIC WRITE: qroce-flush's server in guest 1, its client in
# guest 2; each side prints a PASS line per check (client 12, server 5).
flush_guests() {
	qr_server_client f 18520 1 "qroce-flush -d qroce_0 -g 1 -s 7 -l" \
		2 "qroce-flush -d qroce_0 -g 1 -s 7 10.0.0.1" 60 &&
		! grep -q '^FAIL' "$QR_DIR/f.cli" "$QR_DIR/f.srv" &&
		[ "$(grep -c '^PASS' "$QR_DIR/f.cli")" -eq 12 ] &&
		[ "$(grep -c '^PASS' "$QR_DIR/f.srv")" -eq 5 ] &&
		grep -q '^PASS FLUSH of the MR: IBV_WC_FLUSH' "$QR_DIR/f.cli" &&
		grep -q '^PASS ATOMIC WRITE of 8 bytes: IBV_WC_ATOMIC_WRITE' \
			"$QR_DIR/f.cli" &&
		grep -q '^PASS FLUSH to an MR without FLUSH_GLOBAL: IBV_WC_REM_ACCESS_ERR' \
			"$QR_DIR/f.cli" &&
		grep -q '^PASS persistent FLUSH to a FLUSH_GLOBAL MR: IBV_WC_REM_ACCESS_ERR' \
			"$QR_DIR/f.cli" &&
		grep -q '^PASS server: target memory equals' "$QR_DIR/f.srv"
}

# dma-bufs: qroce-rdma -B, its pattern phase on memfds udmabuf exports
# (the server's 1 MiB region, the client's two buffers), registered with
# ibv_reg_dmabuf_mr; WRITEs and READs into and out of them, every byte
# compared, and the region hashed at the end
dmabuf_guests() {
	qr_server_client db 18516 1 "qroce-rdma -d qroce_0 -g 1 -a 100 -k 10 -W 5 -B -l" \
		2 "qroce-rdma -d qroce_0 -g 1 -a 100 -k 10 -W 5 -B 10.0.0.1" 120 &&
		! grep -q '^FAIL' "$QR_DIR/db.cli" "$QR_DIR/db.srv" &&
		grep -q '^dma-buf MR of 1048576 bytes' "$QR_DIR/db.srv" &&
		[ "$(grep -c '^dma-buf MR of 1048576 bytes' "$QR_DIR/db.cli")" -eq 2 ] &&
		grep -q '^PASS the pattern region (1 MiB) is what the client wrote' "$QR_DIR/db.srv" &&
		grep -Eq '^client: [1-9][0-9]* WRITE/READ pattern rounds, each read back the same' "$QR_DIR/db.cli"
}

# on-demand paging: qroce-rdma -O, its pattern phase on untouched memory
# registered with IBV_ACCESS_ON_DEMAND on both guests: WRITEs into the
# server's region and READs back fault pages in on both sides (the
# client's buffers fault at the requester, the region at the responder,
# answered RNR NAK until resolved), every byte compared, the region
# hashed at the end, and both guests' odp_faults counters grew
odp_guests() {
	f1=$(qr_counter 1 odp_faults)
	f2=$(qr_counter 2 odp_faults)
	qr_server_client op 18516 1 "qroce-rdma -d qroce_0 -g 1 -a 100 -k 10 -W 5 -O -l" \
		2 "qroce-rdma -d qroce_0 -g 1 -a 100 -k 10 -W 5 -O 10.0.0.1" 120 &&
		! grep -q '^FAIL' "$QR_DIR/op.cli" "$QR_DIR/op.srv" &&
		grep -q '^ODP MR of 1048576 bytes' "$QR_DIR/op.srv" &&
		[ "$(grep -c '^ODP MR of 1048576 bytes' "$QR_DIR/op.cli")" -eq 2 ] &&
		grep -q '^PASS the pattern region (1 MiB) is what the client wrote' "$QR_DIR/op.srv" &&
		grep -Eq '^client: [1-9][0-9]* WRITE/READ pattern rounds, each read back the same' "$QR_DIR/op.cli" || return 1
	g1=$(qr_counter 1 odp_faults)
	g2=$(qr_counter 2 odp_faults)
	echo "odp_faults: guest 1 $f1 -> $g1, guest 2 $f2 -> $g2"
	[ "$g1" -gt "$f1" ] && [ "$g2" -gt "$f2" ]
}

# ibv_devinfo -v: device_cap_flags_ex has bit 38 (FLUSH_GLOBAL) and bit
# 40 (ATOMIC_WRITE)
devinfo_caps() {
	qr_exec 1 'ibv_devinfo -v -d qroce_0' >"$QR_DIR/devinfo.out" || return 1
	f=$(sed -n 's/.*device_cap_flags_ex:[^0-9]*\(0x[0-9A-Fa-f]*\).*/\1/p' \
		"$QR_DIR/devinfo.out" | head -1)
	echo "device_cap_flags_ex: ${f:-none}"
	[ -n "$f" ] && [ $(((f >> 38) & 1)) -eq 1 ] && [ $(((f >> 40) & 1)) -eq 1 ]
}

qr_check "READ back random multi-SGE WRITEs, READs in flight, atomics, access errors" one_guest
qr_check "two guests: 2 x 10000 FETCH_ADD = 20000, CMP_SWAP lock" qr_atomics 10000 300
qr_check "two guests: FLUSH range and MR, ATOMIC WRITE, READ back, FLUSH access error" flush_guests
qr_check "two guests: WRITE/READ patterns into and out of dma-buf MRs (udmabuf)" dmabuf_guests
qr_check "two guests: WRITE/READ patterns into and out of untouched ODP MRs (page faults on both sides)" odp_guests
qr_check "ibv_devinfo -v: FLUSH_GLOBAL and ATOMIC_WRITE capability bits" devinfo_caps
qr_check "ib_read_bw -s 65536" qr_perftest ib_read_bw -s 65536 -n 100
qr_check "ib_read_lat -s 8" qr_perftest ib_read_lat -s 8 -n 100
qr_check "ib_atomic_bw (FETCH_ADD)" qr_perftest ib_atomic_bw -n 200
qr_check "ib_atomic_bw -A CMP_AND_SWAP" qr_perftest ib_atomic_bw -A CMP_AND_SWAP -n 200
qr_check "ib_atomic_lat" qr_perftest ib_atomic_lat -n 100
qr_finish
