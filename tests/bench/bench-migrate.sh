#!/bin/sh
# Benchmark, not a test (make bench-migrate): live migration of a guest
# with RDMA traffic.  Two guests on the switch, each with a qroce NIC and
# a virtio-net NIC carrying rdma_rxe (qr_boot rxe); guest 2 moves to a new
# QEMU on this host (qr_migrate) each time:
#
#   idle    nothing runs
#   qroce   qroce-rdma's two-guest mode on qroce_0: guest 1 (the client)
#           WRITEs random patterns (up to 64 KiB) into guest 2 and READs
#           each back, compared, round after round for 20 s
#   rxe     the same on rxe0 (over virtio-net): a guest of the same size
#           whose RDMA traffic crosses a NIC QEMU has migrated for years
#
# For each: QEMU's total time and downtime of the move (query-migrate), and
# the peer's stall: the longest WRITE+READ round guest 1 timed (its clock
# runs through the move; guest 2's stops with its VM), against the mean.
# The table is also written to build/bench-migrate.txt and to
# docs/performance.md (scripts/perf-section.sh migrate; QR_PERF_DOC=- leaves
# the document alone).
#   sh tests/bench/bench-migrate.sh [-r ROUNDS]     (default 2; medians)
. "$(dirname "$0")/../lib/lib.sh"
# the command, for the table's header in docs/performance.md
CMDLINE="sh tests/bench/bench-migrate.sh"
for a; do case $a in '' | *[!A-Za-z0-9_./=:,+-]*) a="'$a'" ;; esac; CMDLINE="$CMDLINE $a"; done
ROUNDS=2
while getopts r: o; do
	case $o in
	r) ROUNDS=$OPTARG ;;
	*) echo "usage: sh tests/bench/bench-migrate.sh [-r ROUNDS]" >&2; exit 2 ;;
	esac
done
case $ROUNDS in *[!0-9]* | "" | 0) echo "usage: sh tests/bench/bench-migrate.sh [-r ROUNDS]" >&2; exit 2 ;; esac
qr_init bench-migrate
QR_TIMEOUT=300

qr_boot 2 switch rxe || exit 1

# flow DEV IP: qroce-rdma's two-guest mode on DEV for 20 s of WRITE/READ
# pattern rounds, server in guest 2, client in guest 1 to IP
flow() {
	qr_bg 2 srv "qroce-rdma -d $1 -g 1 -a 100 -k 10 -W 20 -l" || return 1
	qr_wait_listen 2 18516 || return 1
	qr_bg 1 cli "qroce-rdma -d $1 -g 1 -a 100 -k 10 -W 20 $2" || return 1
}

# flow_end: wait for it; prints the client's longest and mean round in us
flow_end() {
	qr_bg_wait 1 cli 300 >"$QR_DIR/flow.cli" || { cat "$QR_DIR/flow.cli" >&2; return 1; }
	qr_bg_wait 2 srv 120 >"$QR_DIR/flow.srv" || { cat "$QR_DIR/flow.srv" >&2; return 1; }
	! grep -q '^FAIL' "$QR_DIR/flow.srv" "$QR_DIR/flow.cli" || return 1
	sed -n 's/^client: rounds took \([0-9]*\) us at most, \([0-9]*\) us on average$/\1 \2/p' "$QR_DIR/flow.cli" | grep .
}

# move KIND: one move of guest 2; a line "KIND total downtime longest
# mean" (qr_migrate in this shell, not a subshell: it updates the
# harness's record of the guest's QEMU)
move() {
	case $1 in
	idle)
		qr_migrate 2 >"$QR_DIR/mig" || return 1
		set -- idle $(cat "$QR_DIR/mig")
		echo "idle $3 $5 - -" ;;
	*)
		dev=qroce_0 ip=10.0.0.2
		[ "$1" = rxe ] && dev=rxe0 ip=10.0.1.2
		flow $dev $ip || return 1
		sleep 8
		qr_migrate 2 >"$QR_DIR/mig" || return 1
		qr_exec 1 "[ ! -e /tmp/bg.cli ]" ||
			{ echo "qroce-rdma on $dev ended before the move did" >&2; return 1; }
		row=$(flow_end) || return 1
		set -- "$1" $(cat "$QR_DIR/mig")
		echo "$1 $3 $5 $row" ;;
	esac
}

r=1
while [ $r -le "$ROUNDS" ]; do
	for k in idle qroce rxe; do
		move $k >"$QR_DIR/move" 2>"$QR_DIR/err" && cat "$QR_DIR/move" >>"$QR_DIR/moves" ||
			{ echo "the $k move of round $r failed: $(cat "$QR_DIR/err")" >&2; exit 1; }
	done
	r=$((r + 1))
done
{
	echo "Live migration of a 1 GiB TCG guest (one of two on the switch), medians of $ROUNDS; $(date -u '+%Y-%m-%d %H:%M') UTC"
	echo "| | idle | under qroce traffic | under rxe traffic | qroce/rxe |"
	echo "|---|---|---|---|---|"
	awk '
		function med(k, c,   a, i, m) {
			m = 0
			for (i = 1; i <= cnt[k]; i++) a[i] = v[k, c, i]
			# insertion sort: a few values
			for (i = 2; i <= cnt[k]; i++) { x = a[i]; j = i - 1; while (j > 0 && a[j] > x) { a[j + 1] = a[j]; j-- } a[j + 1] = x }
			if (!cnt[k]) return 0; return a[int((cnt[k] + 1) / 2)]
		}
		{ k = $1; cnt[k]++; for (c = 2; c <= 5; c++) v[k, c, cnt[k]] = $c }
		END {
			printf "| move, total ms | %d | %d | %d | %.2f |\n", med("idle", 2), med("qroce", 2), med("rxe", 2), (med("rxe", 2) ? med("qroce", 2) / med("rxe", 2) : 0)
			printf "| move, downtime ms | %d | %d | %d | %.2f |\n", med("idle", 3), med("qroce", 3), med("rxe", 3), (med("rxe", 3) ? med("qroce", 3) / med("rxe", 3) : 0)
			printf "| the peer'"'"'s longest WRITE+READ round, ms | - | %.1f | %.1f | %.2f |\n", med("qroce", 4) / 1000, med("rxe", 4) / 1000, (med("rxe", 4) ? med("qroce", 4) / med("rxe", 4) : 0)
			printf "| its mean round, ms | - | %.2f | %.2f | %.2f |\n", med("qroce", 5) / 1000, med("rxe", 5) / 1000, (med("rxe", 5) ? med("qroce", 5) / med("rxe", 5) : 0)
		}' "$QR_DIR/moves"
} | tee "$QR_B/bench-migrate.txt"
{
	sed -n '1s/$/;/p' "$QR_B/bench-migrate.txt"
	echo "host: $(nproc) CPUs, $(sed -n 's/^model name.*: //p' /proc/cpuinfo | head -1), $(uname -r);"
	printf "\`%s\`\n\n" "$CMDLINE"
	sed 1d "$QR_B/bench-migrate.txt"
} >"$QR_DIR/perf.md"
sh "$QR_TOP/scripts/perf-section.sh" migrate "$QR_DIR/perf.md" || :
qr_cleanup
rm -rf "$QR_DIR"
