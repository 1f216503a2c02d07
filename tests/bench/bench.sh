#!/bin/sh
# Benchmark, not a test (make bench): perftest over qroce and over rdma_rxe
# on a virtio-net NIC, in the same two guests of one QEMU build and kernel,
# each pair of NICs joined by its own lossless stream.  Prints one row per
# tool, size and Ethernet MTU with both figures and the qroce/rxe ratio,
# then host memcpy bandwidth as the physical reference; each bandwidth row
# also gives qroce's figure as a percentage of host memcpy at that size,
# measured in the same run (memcpy first, while the guests are idle).
# The "host wire" rows are the second reference: what the harness's wire
# (a Unix stream socket, framed as QEMU's stream netdev frames it) carries
# between two host processes doing nothing else, in full-path-MTU frames
# (payload MB/s), measured with memcpy (tests/tools/wire-bw.c).
# Both devices run at each MTU in turn (the guests' netdevs set to it, so
# RoCE's path MTU is 1024 at 1500 and 4096 at 9000, rxe's as qroce's).
#
#   sh tests/bench/bench.sh [-q] [-r RUNS] [SIZE...]
#     -q       fewer iterations (a quick look, noisier)
#     -r RUNS  runs per cell, the median is printed (default 1)
#     SIZE     message sizes (default 64 4096 65536 1048576)
#   QR_BENCH_MTUS  Ethernet MTUs to run at (default "1500 9000")
#
# Bandwidth is perftest's "BW average" in MB/s (10^6 bytes/s); latency is
# its "t_typical" in µs (lower is better, so the ratio is < 1 when qroce
# wins).  The table is also written to build/bench.txt, and after a run
# that ends to docs/performance.md (scripts/perf-section.sh perftest;
# QR_PERF_DOC=- leaves the document alone).
. "$(dirname "$0")/../lib/lib.sh"
# the command, for the table's header in docs/performance.md
CMDLINE="sh tests/bench/bench.sh"
for a; do case $a in '' | *[!A-Za-z0-9_./=:,+-]*) a="'$a'" ;; esac; CMDLINE="$CMDLINE $a"; done
if [ -n "${QR_BENCH_MTUS+set}" ]; then CMDLINE="QR_BENCH_MTUS='$QR_BENCH_MTUS' $CMDLINE"; fi

usage() {
	echo "usage: sh tests/bench/bench.sh [-q] [-r RUNS] [SIZE...]" >&2
	exit 2
}
QUICK=0
RUNS=1
while getopts qr: o; do
	case $o in
	q) QUICK=1 ;;
	r) RUNS=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
case $RUNS in '' | *[!0-9]* | 0) usage ;; esac
SIZES=${*:-64 4096 65536 1048576}
for s in $SIZES; do
	case $s in '' | *[!0-9]* | 0) usage ;; esac
	[ "$s" -le 8388608 ] || usage
done
MEMCPY=$QR_B/tools/memcpy-bw
WIRE=$QR_B/tools/wire-bw
for t in "$MEMCPY" "$WIRE"; do
	[ -x "$t" ] || { echo "bench: $t missing: run 'make tools'" >&2; exit 2; }
done

MTUS=${QR_BENCH_MTUS:-1500 9000}
for m in $MTUS; do
	case $m in 1500 | 9000) ;; *) usage ;; esac
done

qr_init bench
qr_boot 2 rxe mtu=9000 || exit 1
QR_TIMEOUT=300
OUT=$QR_B/bench.txt

# the length of a cell, as perftest options: a bandwidth cell runs for a
# fixed time (-D, 6 s, 3 with -q; perftest leaves out a warm-up at each
# end), the same for both devices, so that neither's figure is its
# start-up (a fixed count of 64 KiB messages that rxe moves in seconds
# takes qroce well under one, and measured a third less than its steady
# state); a latency cell moves up to 8 MiB, 20 to 5000 iterations
iters() {
	case $1 in
	*_bw)
		[ $QUICK = 1 ] && echo "-D 3" || echo "-D 6"
		return ;;
	esac
	n=$((8 * 1048576 / $2))
	[ $QUICK = 1 ] && n=$((n / 8))
	[ $n -gt 5000 ] && n=5000
	[ $n -lt 20 ] && n=20
	echo "-n $n"
}

# one DEV IP TOOL SIZE: print the figure (bw average or typical latency)
one() {
	n=$(iters "$3" "$4")
	qr_bg 1 srv "$3 -d $1 -x 1 -F -s $4 $n" >/dev/null || return 1
	if ! qr_wait_listen 1 18515 >/dev/null; then
		qr_bg_wait 1 srv 5 >/dev/null
		return 1
	fi
	qr_exec 2 "$3 -d $1 -x 1 -F -s $4 $n $2" >"$QR_DIR/cli.out"
	c=$?
	qr_bg_wait 1 srv 240 >"$QR_DIR/srv.out"
	[ $c -eq 0 ] || return 1
	case $3 in
	*_bw) col=4 ;;
	*) col=5 ;;
	esac
	awk -v s="$4" -v c=$col '$1 == s && NF >= c && $2 ~ /^[0-9]+$/ { print $c; exit }' \
		"$QR_DIR/cli.out"
}

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'; }

cell() {
	i=0
	while [ $i -lt "$RUNS" ]; do
		one "$@"
		i=$((i + 1))
	done | median
}

row() {
	printf '%-13s %8s %5s %12s %12s %-5s %10s %8s\n' "$@" | tee -a "$OUT"
	printf '| %s | %s | %s | %s | %s | %s | %s | %s |\n' "$@" >>"$MD"
	if [ "$1" = test ]; then echo '|---|---|---|---|---|---|---|---|' >>"$MD"; fi
}

# pct Q SIZE: Q (MB/s) as a percentage of host memcpy at SIZE
pct() {
	awk -v q="$1" -v s="$2" '$1 == s { m = $2 } END {
		if (q > 0 && m > 0) printf "%.2f%%", 100 * q / m; else print "-" }' \
		"$QR_DIR/memcpy.txt"
}

# set_mtu M: both guests' qroce and virtio netdevs at Ethernet MTU M; the
# path MTU both RDMA devices then report (1024 or 4096) must follow
set_mtu() {
	want=$(($1 >= 4096 + 78 ? 4096 : 1024))
	for g in 1 2; do
		qr_exec $g "/usr/sbin/ip link set dev \$QR_IF mtu $1 && /usr/sbin/ip link set dev \$QR_VIF mtu $1" ||
			return 1
		for dev in qroce_0 rxe0; do
			got=$(qr_mtu $g $dev)
			[ "$got" = "$want" ] || {
				echo "bench: $dev in guest $g: path MTU ${got:-?}, not $want" >&2
				return 1
			}
		done
	done
}

: >"$OUT"
echo "qroce vs rdma_rxe, perftest between two guests; $(date -u '+%Y-%m-%d %H:%M UTC')" | tee -a "$OUT"
echo "host: $(nproc) CPUs, $(sed -n 's/^model name.*: //p' /proc/cpuinfo | head -1), $(uname -r)" | tee -a "$OUT"
MD=$QR_DIR/perf.md
{ sed 's/$/;/' "$OUT"; printf "\`%s\`\n\n" "$CMDLINE"; } >"$MD"
"$MEMCPY" $SIZES >"$QR_DIR/memcpy.txt" || { qr_cleanup; exit 1; }
# the wire: frames of a message's middle packets (Ethernet 14, IPv4 20,
# UDP 8, BTH 12, payload, ICRC 4), counted as payload
: >"$QR_DIR/wire.txt"
for m in $MTUS; do
	pmtu=$(($m >= 4096 + 78 ? 4096 : 1024))
	"$WIRE" $((pmtu + 58)) 3 |
		awk -v m="$m" -v p="$pmtu" '{ printf "%s %s %.0f\n", m, p, $3 * p / 1e6 }' \
		>>"$QR_DIR/wire.txt" || { qr_cleanup; exit 1; }
done
row test size mtu qroce rxe unit qroce/rxe %memcpy
for t in ib_write_bw ib_read_bw ib_send_bw ib_write_lat ib_send_lat; do
	case $t in
	*_bw) unit=MB/s ;;
	*) unit=us ;;
	esac
	for m in $MTUS; do
		set_mtu "$m" || { qr_cleanup; exit 1; }
		for s in $SIZES; do
			q=$(cell qroce_0 10.0.0.1 $t "$s")
			r=$(cell rxe0 10.0.1.1 $t "$s")
			ratio=$(awk -v q="$q" -v r="$r" \
				'BEGIN { if (q > 0 && r > 0) printf "%.2f", q / r; else print "-" }')
			case $t in
			*_bw) p=$(pct "$q" "$s") ;;
			*) p=- ;;
			esac
			row "$t" "$s" "$m" "${q:--}" "${r:--}" "$unit" "$ratio" "$p"
		done
	done
done
while read -r s bw; do
	row "host memcpy" "$s" "" "$bw" "" "MB/s" "" ""
done <"$QR_DIR/memcpy.txt"
while read -r m p bw; do
	row "host wire" "$p" "$m" "$bw" "" "MB/s" "" ""
done <"$QR_DIR/wire.txt"
qr_cleanup
echo "table saved in $OUT"
sh "$QR_TOP/scripts/perf-section.sh" perftest "$MD" || :
