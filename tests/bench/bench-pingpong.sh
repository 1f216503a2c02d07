#!/bin/sh
# Benchmark, not a test: ibv_rc_pingpong over qroce and over rdma_rxe on a
# virtio-net NIC, in the same two guests of the same QEMU build, both
# directions; prints µs/iteration (median of RUNS) and the rxe/qroce ratio,
# and writes the table to docs/performance.md (scripts/perf-section.sh
# pingpong; QR_PERF_DOC=- leaves the document alone).
#   sh tests/bench/bench-pingpong.sh [SIZE] [ITERS] [RUNS]
. "$(dirname "$0")/../lib/lib.sh"
# the command, for the table's header in docs/performance.md
CMDLINE="sh tests/bench/bench-pingpong.sh"
for a; do case $a in '' | *[!A-Za-z0-9_./=:,+-]*) a="'$a'" ;; esac; CMDLINE="$CMDLINE $a"; done
SIZE=${1:-4096}
ITERS=${2:-1000}
RUNS=${3:-3}
qr_init bench-pingpong
qr_boot 2 rxe || exit 1
QR_TIMEOUT=600

# one DEV SRV CLI SRV_IP: µs/iter reported by the client
one() {
	qr_bg "$2" srv "ibv_rc_pingpong -d $1 -g 1 -s $SIZE -n $ITERS" >/dev/null
	qr_wait_listen "$2" 18515 || return 1
	qr_exec "$3" "ibv_rc_pingpong -d $1 -g 1 -s $SIZE -n $ITERS $4" |
		sed -n 's/.* = \([0-9.]*\) usec\/iter$/\1/p'
	qr_bg_wait "$2" srv >/dev/null
}
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

printf '%-8s %-10s %14s %14s %8s\n' size direction "qroce us/iter" "rxe us/iter" "rxe/qroce"
MD=$QR_DIR/perf.md
{
	echo "ibv_rc_pingpong, qroce vs rdma_rxe between two guests, medians of $RUNS; $(date -u '+%Y-%m-%d %H:%M UTC');"
	echo "host: $(nproc) CPUs, $(sed -n 's/^model name.*: //p' /proc/cpuinfo | head -1), $(uname -r);"
	printf "\`%s\`\n\n" "$CMDLINE"
	echo "| size | direction | qroce us/iter | rxe us/iter | rxe/qroce |"
	echo "|---|---|---|---|---|"
} >"$MD"
for dir in "1 2" "2 1"; do
	set -- $dir
	q=$(i=0; while [ $i -lt "$RUNS" ]; do one qroce_0 $1 $2 10.0.0.$1; i=$((i + 1)); done | median)
	r=$(i=0; while [ $i -lt "$RUNS" ]; do one rxe0 $1 $2 10.0.1.$1; i=$((i + 1)); done | median)
	x=$(awk -v q="$q" -v r="$r" 'BEGIN { if (q > 0) printf "%.1f", r / q; else print "-" }')
	printf '%-8s %-10s %14s %14s %8s\n' "$SIZE" "g$2->g$1" "$q" "$r" "$x"
	echo "| $SIZE | g$2->g$1 | $q | $r | $x |" >>"$MD"
done
qr_cleanup
sh "$QR_TOP/scripts/perf-section.sh" pingpong "$MD" || :
