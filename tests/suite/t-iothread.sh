#!/bin/sh
# The RoCE engine in an IOThread (issue 23; -object iothread -device
# qroce,iothread=, docs/architecture.md "Threads in the device").  Two
# guests on the switch, each qroce with an IOThread of its own:
#
#   1. the IOThread exists (query-iothreads) and the engine runs there:
#      while guest 2 WRITEs with ib_write_bw -D 4, guest 2's IOThread uses
#      at least 0.5 s of CPU (its /proc stat), and both perftest sides
#      exit 0 with a result row;
#   2. ibv_rc_pingpong -s 65536 -c (every byte checked) and ib_read_bw;
#   3. qroce-rdma's two-guest mode: FETCH_ADDs, a CMP_SWAP lock, then 6 s
#      of WRITE/READ patterns compared byte by byte, while guest 2 moves
#      live to a new QEMU, its engine in the new QEMU's IOThread;
#   4. a fresh pingpong after the move.
#
# The qtests run in this mode too (tests/run.sh's qtest-iothread group);
# QR_IOTHREAD=1 sh tests/run.sh runs every guest test this way.
. "$(dirname "$0")/../lib/lib.sh"
qr_init iothread
QR_TIMEOUT=300

# iot G: the thread id of guest G's IOThread qrio0 (QMP query-iothreads)
iot() {
	qr_qmp "$1" query-iothreads | tr '{},' '\n\n\n' |
		sed -n 's/^ *"thread-id": *\([0-9][0-9]*\).*/\1/p' | head -1
}

# ticks TID: the CPU time of thread TID of a QEMU, in clock ticks
ticks() {
	awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null
}

if qr_boot 2 switch iothread; then
	t1=$(iot 1)
	t2=$(iot 2)
	qr_check "both QEMUs have the IOThread qrio0 (thread ids ${t1:-none}, ${t2:-none})" \
		sh -c "[ -n '$t1' ] && [ -n '$t2' ] && [ -r /proc/$t2/stat ]"

	# 1. the sender's engine runs in its IOThread
	c0=$(ticks "$t2")
	qr_bg 1 srv "ib_write_bw -d qroce_0 -x 1 -F -s 65536 -D 4"
	qr_wait_listen 1 18515
	qr_exec 2 "ib_write_bw -d qroce_0 -x 1 -F -s 65536 -D 4 10.0.0.1" >"$QR_DIR/bw.cli"
	crc=$?
	qr_bg_wait 1 srv 60 >"$QR_DIR/bw.srv"
	src=$?
	c1=$(ticks "$t2")
	hz=$(getconf CLK_TCK)
	used=$(((${c1:-0} - ${c0:-0}) * 1000 / hz))
	qr_log "bw: $(grep -E '^ *65536 ' "$QR_DIR/bw.cli"); guest 2's IOThread used $used ms of CPU"
	qr_check "ib_write_bw -D 4 with the engine in an IOThread: both exit 0, a result row" \
		sh -c "[ $crc = 0 ] && [ $src = 0 ] && grep -Eq '^ *65536 +[0-9]+ +[0-9.]+ +[0-9.]+' '$QR_DIR/bw.cli'"
	qr_check "the sender's engine ran in its IOThread ($used ms of its CPU during the 4 s)" \
		[ "$used" -ge 500 ]

	# 2. SENDs with every byte checked, READs
	qr_check "ibv_rc_pingpong -s 65536 -n 300 -c" qr_pingpong ibv_rc_pingpong -s 65536 -n 300 -c
	qr_check "ib_read_bw -s 65536 -n 2000" qr_perftest ib_read_bw -s 65536 -n 2000

	# 3. atomics and compared patterns across a live move of guest 2
	qr_bg 1 srv "qroce-rdma -d qroce_0 -g 1 -a 1000 -k 50 -W 6 -l"
	qr_wait_listen 1 18516
	qr_bg 2 cli "qroce-rdma -d qroce_0 -g 1 -a 1000 -k 50 -W 6 10.0.0.1"
	sleep 3
	if qr_migrate 2 >"$QR_DIR/mig.txt" 2>&1; then
		qr_log "guest 2 moved: $(cat "$QR_DIR/mig.txt")"
	else
		qr_fail "guest 2 could not be moved: $(cat "$QR_DIR/mig.txt")"
	fi
	qr_bg_wait 2 cli 200 >"$QR_DIR/rw.cli"
	crc=$?
	qr_bg_wait 1 srv 200 >"$QR_DIR/rw.srv"
	src=$?
	sed 's/^/# client: /' "$QR_DIR/rw.cli"
	sed 's/^/# server: /' "$QR_DIR/rw.srv"
	qr_check "qroce-rdma across the move: FETCH_ADD counter, CMP_SWAP lock, every WRITE/READ pattern right" \
		sh -c "[ $crc = 0 ] && [ $src = 0 ] && ! grep -q '^FAIL' '$QR_DIR/rw.srv' '$QR_DIR/rw.cli' &&
			grep -q '^PASS 2 x 1000 FETCH_ADD on one address: counter 2000\$' '$QR_DIR/rw.srv' &&
			grep -q '^PASS CMP_SWAP lock: 2 x 50 increments under it give 100, lock 0\$' '$QR_DIR/rw.srv' &&
			grep -q '^PASS the pattern region (1 MiB) is what the client wrote' '$QR_DIR/rw.srv' &&
			grep -Eq '^client: [1-9][0-9]* WRITE/READ pattern rounds, each read back the same' '$QR_DIR/rw.cli'"
	t2=$(iot 2)
	qr_check "the new QEMU of guest 2 has its IOThread (thread id ${t2:-none})" [ -n "$t2" ]

	# 4. after the move
	qr_check "after the move: ibv_rc_pingpong -n 200 -c" qr_pingpong ibv_rc_pingpong -n 200 -c
fi
qr_finish
