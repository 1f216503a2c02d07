#!/bin/sh
# Benchmark, not a test: ibv_rc_pingpong over qroce and over rdma_rxe on a
# virtio-net NIC, in the same two guests of the same QEMU build, both
# directions; prints µs/iteration (median of RUNS) and the rxe/qroce ratio.
#   sh tests/bench/bench-pingpong.sh [SIZE] [ITERS] [RUNS]
. "$(dirname "$0")/../lib/lib.sh"
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
for dir in "1 2" "2 1"; do
	set -- $dir
	q=$(i=0; while [ $i -lt "$RUNS" ]; do one qroce_0 $1 $2 10.0.0.$1; i=$((i + 1)); done | median)
	r=$(i=0; while [ $i -lt "$RUNS" ]; do one rxe0 $1 $2 10.0.1.$1; i=$((i + 1)); done | median)
	printf '%-8s %-10s %14s %14s %8s\n' "$SIZE" "g$2->g$1" "$q" "$r" \
		"$(awk -v q="$q" -v r="$r" 'BEGIN { if (q > 0) printf "%.1f", r / q; else print "-" }')"
done
qr_cleanup
