#!/bin/sh
# Benchmark, not a test (make bench-scale): many QPs at once, qroce against
# rdma_rxe on a virtio-net NIC, in the same two guests of one QEMU build
# and kernel (qr_boot 2 rxe: Ethernet MTU 9000, so RoCE's path MTU is
# 4096), each pair of NICs joined by its own lossless stream.  Every cell
# is the median of RUNS runs; every row gives both devices and the
# qroce/rxe ratio:
#
#   idle QP memory     qroce-scale idle: 1 QP held, then 1 000 (the smallest
#                      RC QP, on an SRQ); the difference / 999 of
#                        guest MemAvailable: what the guest lost (its
#                          kernel and the process): all of rxe's state,
#                          qroce's rings and driver state;
#                        device state: qroce's state in QEMU (x-objects
#                          state_bytes); rxe has none ("n/a");
#                        guest + device: the sum of the two;
#                        QEMU RSS: growth of the guest's QEMU process (its
#                          heap, and guest pages touched for the first
#                          time), measured once, first thing after boot,
#                          qroce in guest 1 and rxe in guest 2 (later runs
#                          reuse freed memory and would read low)
#   QP create+destroy  qroce-scale rate 2000 in guest 1, QPs/s
#   ib_write_bw        perftest -q Q -s 65536 between the guests, server in
#                      guest 1: its "BW average" over the Q QPs, MB/s
#                      (10^6 B/s).  -t 128/Q (at least 1): the 128 WRITEs in
#                      flight of perftest's default depth for one QP, spread
#                      over the QPs.  A cell moves about 1 GiB over qroce and
#                      64 MiB over rxe (a few seconds each; -q: a quarter),
#                      at least 2 WRITEs per QP (perftest's -n is per QP).
#   stream             qroce-scale stream (tests/guest/qroce-scale.c): 64 KiB
#                      RDMA WRITEs on 1 QP, then on the most QPs asked for,
#                      all at once for SECS seconds (128/N in flight per QP,
#                      at least 1), bytes counted per QP: the aggregate, its
#                      ratio to one QP's, the slowest and fastest QP, and
#                      Jain's fairness index (sum x)^2 / (n sum x^2) over the
#                      QPs (1: all equal; 1/n: one QP has it all).  The
#                      goal: 1 000 QPs move at least 80 % of one QP's
#                      aggregate and none starves (Jain >= 0.9).  A run
#                      fails if a completion is not a successful WRITE.
#
#   sh tests/bench/bench-scale.sh [-q] [-r RUNS] [-o PARTS] [QPS...]
#     -q        a quarter of the bytes, 5 s streams instead of 10 (a quick
#               look, noisier)
#     -r RUNS   runs per cell, the median is printed (default 3)
#     -o PARTS  the rows to run, any of "mem rate bw stream" (default all)
#     QPS       ib_write_bw's QP counts (default 1 16 256 1000); stream
#               runs 1 QP and the largest of them
#
# QR_SCALE_TMO (environment): the limit of each run, in seconds (default
# 240, 180 with -q); rxe's cells from 16 QPs on use all of it.
# A cell whose every run failed or ran out of time (each run has a limit)
# is "-" and the benchmark goes on; a cell where only some runs failed is
# the median of the others, marked "*".  Why a run failed is said below
# the table ("note:"), and so is a stream's WRITEs still in flight 10 s
# after its end.  A guest that panics (rxe has run a guest out of memory
# with hundreds of QPs) reboots by itself (panic=-1): the next run waits
# for it, and a note says so.  The table is also written to
# build/bench-scale.txt; the programs' outputs, with the device counters
# that moved in each ib_write_bw and stream run (`rdma statistic`), are
# kept in build/test-logs/bench-scale/.  At the end the table, its goal
# lines and notes go to docs/performance.md (scripts/perf-section.sh
# scale; QR_PERF_DOC=- leaves the document alone).
. "$(dirname "$0")/../lib/lib.sh"
# the command, for the table's header in docs/performance.md
CMDLINE="sh tests/bench/bench-scale.sh"
for a; do case $a in '' | *[!A-Za-z0-9_./=:,+-]*) a="'$a'" ;; esac; CMDLINE="$CMDLINE $a"; done
if [ -n "${QR_SCALE_TMO+set}" ]; then CMDLINE="QR_SCALE_TMO=$QR_SCALE_TMO $CMDLINE"; fi

usage() {
	echo "usage: sh tests/bench/bench-scale.sh [-q] [-r RUNS] [-o \"mem rate bw stream\"] [QPS...]" >&2
	exit 2
}
QUICK=0
RUNS=3
PARTS="mem rate bw stream"
while getopts qr:o: o; do
	case $o in
	q) QUICK=1 ;;
	r) RUNS=$OPTARG ;;
	o) PARTS=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
case $RUNS in '' | *[!0-9]* | 0) usage ;; esac
[ -n "$PARTS" ] || usage
for p in $PARTS; do
	case $p in mem | rate | bw | stream) ;; *) usage ;; esac
done
QPS=${*:-1 16 256 1000}
SMAX=1
for q in $QPS; do
	case $q in '' | *[!0-9]* | 0*) usage ;; esac
	[ "$q" -le 16384 ] || usage
	[ "$q" -gt "$SMAX" ] && SMAX=$q
done

IDLE_N=1000     # idle QPs held for the memory rows
RATE_N=2000     # create+destroy per rate run
SECS=10         # seconds per stream run
TMO=240         # seconds a run's client may take
[ $QUICK = 1 ] && SECS=5 TMO=180
TMO=${QR_SCALE_TMO:-$TMO}

qr_init bench-scale
T0=$(date +%s)
qr_boot 2 rxe mtu=9000 || exit 1
OUT=$QR_B/bench-scale.txt
NOTES=$QR_DIR/notes
: >"$NOTES"

part() { case " $PARTS " in *" $1 "*) return 0 ;; esac; return 1; }

# --- running a cell ----------------------------------------------------

# seen G TEXT: lines with TEXT on guest G's console so far; readies G: its
# agent's starts so far (a guest that panics reboots: panic=-1)
seen() { grep -c "$2" "$QR_DIR/g$1/console.log" 2>/dev/null; }
readies() { grep -c '^@@QRREADY' "$QR_DIR/g$1/agent.log" 2>/dev/null; }

# watch G: before a run, what guest G's console and agent said so far;
# watched G: after it, a note if its kernel ran out of memory or panicked
# (then wait, 5 minutes at most, for the guest to boot again)
watch() {
	eval "bs_oom$1=$(seen "$1" 'Out of memory') bs_pan$1=$(seen "$1" 'Kernel panic') bs_rdy$1=$(readies "$1")"
}
watched() {
	eval "bs_o=\$bs_oom$1 bs_p=\$bs_pan$1 bs_r=\$bs_rdy$1"
	[ "$(seen "$1" 'Out of memory')" -gt "$bs_o" ] &&
		note "guest $1 ran out of memory: $(grep 'Out of memory' "$QR_DIR/g$1/console.log" | tail -1 |
			sed 's/^\[[ 0-9.]*\] //; s/ total-vm.*//')"
	[ "$(seen "$1" 'Kernel panic')" -gt "$bs_p" ] || return 0
	note "guest $1 panicked and rebooted: $(grep 'Kernel panic' "$QR_DIR/g$1/console.log" | tail -1 |
		sed 's/^\[[ 0-9.]*\] //')"
	bs_t=0
	while [ "$(readies "$1")" -le "$bs_r" ] && [ $bs_t -lt 3000 ]; do
		bs_t=$((bs_t + 1))
		sleep 0.1
	done
	sleep 2
}

# runs COLS FUNC ARGS...: FUNC ARGS, RUNS times; each run prints a line of
# COLS figures, or nothing if it failed.  Prints the median of each column
# over the runs that did not fail, with a "*" if some did; "-" if all
# did.  The lines, each after its run's number, are left in
# $QR_DIR/runs.raw.
runs() {
	cols=$1
	shift
	: >"$QR_DIR/runs.raw"
	ri=1
	while [ $ri -le "$RUNS" ]; do
		watch 1
		watch 2
		line=$("$@" 2>>"$QR_DIR/errors.log")
		[ -n "$line" ] && echo "$ri $line" >>"$QR_DIR/runs.raw"
		watched 1
		watched 2
		ri=$((ri + 1))
	done
	awk -v cols="$cols" -v runs="$RUNS" '
		NF == cols + 1 { n++; for (c = 1; c <= cols; c++) v[c, n] = $(c + 1) }
		END {
			for (c = 1; c <= cols; c++) {
				if (!n) { printf "%s-", (c > 1 ? " " : ""); continue }
				for (i = 1; i <= n; i++) s[i] = v[c, i]
				for (i = 2; i <= n; i++)
					for (j = i; j > 1 && s[j - 1] + 0 > s[j] + 0; j--) {
						t = s[j]; s[j] = s[j - 1]; s[j - 1] = t
					}
				printf "%s%s%s", (c > 1 ? " " : ""), s[int((n + 1) / 2)], (n < runs ? "*" : "")
			}
			print ""
		}' "$QR_DIR/runs.raw"
}

# server G NAME PORT CMD: CMD in the background of guest G (its pid in
# /tmp/pid.NAME) until it listens on TCP PORT (2 minutes at most)
server() {
	qr_bg "$1" "$2" "$4 & echo \$! >/tmp/pid.$2; wait \$!; r=\$?; rm -f /tmp/pid.$2; exit \$r" >/dev/null ||
		return 1
	QR_TIMEOUT=$TMO qr_exec "$1" "i=0; until netstat -ltn | grep -q ':$3 '; do [ -e /tmp/bg.$2 ] && exit 1; i=\$((i + 1)); [ \$i -gt 1200 ] && exit 1; sleep 0.1; done" >/dev/null &&
		return 0
	server_end "$1" "$2" 5
	return 1
}

# server_end G NAME [S]: wait S seconds (default 30) for it to end, else
# kill it by its pid; its output is appended to $QR_DIR/NAME.log
server_end() {
	if qr_bg_wait "$1" "$2" "${3:-30}" >"$QR_DIR/$2.out" 2>&1; then
		cat "$QR_DIR/$2.out" >>"$QR_DIR/$2.log"
		return 0
	fi
	stop "$1" "$2"
	return 1
}

# stop G NAME: kill it by its pid, wait for it to end
stop() {
	qr_exec "$1" "[ -e /tmp/pid.$2 ] && kill \$(cat /tmp/pid.$2); true" >/dev/null
	qr_bg_wait "$1" "$2" 30 >>"$QR_DIR/$2.log" 2>&1
}

# --- the rows' runs ----------------------------------------------------

# hold G DEV N: N idle QPs on DEV in guest G; once they all exist, prints
# "QEMU-RSS-kB MemAvailable-kB state_bytes" (state_bytes "-" but on qroce)
hold() {
	qr_bg "$1" idle "qroce-scale -d $2 -g 1 idle $3 600 & echo \$! >/tmp/pid.idle; wait \$!; r=\$?; rm -f /tmp/pid.idle; exit \$r" >/dev/null ||
		return 1
	QR_TIMEOUT=$TMO qr_exec "$1" "i=0; until grep -q '^held' /tmp/bg.idle.out 2>/dev/null; do [ -e /tmp/bg.idle ] && exit 1; i=\$((i + 1)); [ \$i -gt 1800 ] && exit 1; sleep 0.1; done" >/dev/null ||
		{ stop "$1" idle; note "qroce-scale idle $3 did not hold its QPs: $(tail -1 "$QR_DIR/idle.log")"; return 1; }
	sleep 2
	av=$(qr_exec "$1" "awk '/^MemAvailable:/ { print \$2 }' /proc/meminfo")
	eval "qp=\$QR_QPID_$1"
	rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$qp/status")
	st=-
	case $2 in
	qroce*) st=$(qr_qom_get "$1" x-objects | sed -n 's/.*state_bytes[^0-9]*\([0-9][0-9]*\).*/\1/p') ;;
	esac
	stop "$1" idle
	echo "${rss:--} ${av:--} ${st:--}"
}

# mem G DEV: per idle QP, in KiB: "MemAvailable device-state both RSS"
mem() {
	a=$(hold "$1" "$2" 1) && b=$(hold "$1" "$2" $IDLE_N) || return 1
	echo "$a $b" | awk -v n=$((IDLE_N - 1)) '
		$1 == "-" || $2 == "-" || $4 == "-" || $5 == "-" { exit }
		{
			av = ($2 - $5) / n; rss = ($4 - $1) / n
			st = (($3 == "-" || $6 == "-") ? "n/a" : sprintf("%.2f", ($6 - $3) / n / 1024))
			both = (st == "n/a" ? av : av + st)
			printf "%.2f %s %.2f %.2f\n", av, st, both, rss
		}'
}

# rate DEV: QPs created and destroyed per second in guest 1
rate() {
	QR_TIMEOUT=$TMO qr_exec 1 "qroce-scale -d $1 -g 1 rate $RATE_N" >"$QR_DIR/rate.out" 2>&1
	c=$?
	cat "$QR_DIR/rate.out" >>"$QR_DIR/rate-$1.log"
	[ $c -eq 0 ] || { note "qroce-scale rate status $c: $(tail -1 "$QR_DIR/rate.out")"; return 1; }
	sed -n 's/^rate \([0-9][0-9]*\) QPs\/s.*/\1/p' "$QR_DIR/rate.out"
}

# depth Q: WRITEs in flight per QP; bw_iters DEV Q: WRITEs per QP
depth() { echo $((128 / $1 > 0 ? 128 / $1 : 1)); }
bw_iters() {
	case $1 in
	rxe*) m=1024 ;;
	*) m=16384 ;;
	esac
	[ $QUICK = 1 ] && m=$((m / 4))
	m=$((m / $2))
	echo $((m < 2 ? 2 : m))
}

# note TEXT: a line below the table, about this run of this row
note() {
	echo "$WHAT_ROW (run $ri): $*" >>"$NOTES"
}

# counters TAG DEV: DEV's counters in both guests, into $QR_DIR/TAG.G;
# moved LOG: the ones that moved from c0 to c1, per guest, appended to LOG
counters() {
	qr_stats 1 "$2" >"$QR_DIR/$1.1"
	qr_stats 2 "$2" >"$QR_DIR/$1.2"
}
moved() {
	for bs_g in 1 2; do
		awk -v g=$bs_g 'NR == FNR { a[$1] = $2; next }
			($1 in a) { d = $2 - a[$1]; if (d < 0) d += 4294967296; if (d) s = s " " $1 " " d }
			END { print "counters moved in guest " g ":" s }' "$QR_DIR/c0.$bs_g" "$QR_DIR/c1.$bs_g" >>"$1"
	done
}

# bw DEV IP Q: one ib_write_bw -q Q, server guest 1, client guest 2 to
# IP; prints its BW average (MB/s)
bw() {
	a="-d $1 -x 1 -F -s 65536 -q $3 -t $(depth "$3") -n $(bw_iters "$1" "$3")"
	log=$QR_DIR/bw-$1-$3.log
	server 1 srv 18515 "ib_write_bw $a" || { note "the server did not start"; return 1; }
	counters c0 "$1"
	QR_TIMEOUT=$TMO qr_exec 2 "ib_write_bw $a $2" >"$QR_DIR/bw.cli" 2>&1
	c=$?
	server_end 1 srv 60
	counters c1 "$1"
	{ echo "== ib_write_bw $a $2: status $c"; cat "$QR_DIR/bw.cli"; } >>"$log"
	moved "$log"
	if [ $c -ne 0 ]; then
		note "ib_write_bw status $c: $(grep -v '^ *$' "$QR_DIR/bw.cli" | tail -1)"
		return 1
	fi
	awk '$1 == 65536 && NF >= 4 && $2 ~ /^[0-9]+$/ && $4 > 0 { print $4; exit }' "$QR_DIR/bw.cli"
}

# stream DEV IP N: one qroce-scale stream of N QPs for SECS seconds, server
# guest 1; prints "total min max Jain" (MB/s, MB/s, MB/s, index)
stream() {
	log=$QR_DIR/stream-$1-$3.log
	server 1 ssrv 18540 "qroce-scale -d $1 -g 1 -l stream $3 $SECS" ||
		{ note "the server did not start"; return 1; }
	counters c0 "$1"
	QR_TIMEOUT=$TMO qr_exec 2 "qroce-scale -d $1 -g 1 stream $3 $SECS $2" >"$QR_DIR/st.cli" 2>&1
	c=$?
	server_end 1 ssrv 60
	counters c1 "$1"
	{ echo "== stream $3 $SECS $2: status $c"; cat "$QR_DIR/st.cli"; } >>"$log"
	moved "$log"
	left=$(grep 'still in flight' "$QR_DIR/st.cli")
	[ -z "$left" ] || note "$left"
	if [ $c -ne 0 ] || ! grep -q '^PASS stream' "$QR_DIR/st.cli"; then
		note "qroce-scale status $c: $(grep -v '^ *$' "$QR_DIR/st.cli" | grep -v '^stream: client' | head -1)"
		return 1
	fi
	sed -n 's/^stream: [0-9]* QPs [0-9.]* s: total MB\/s \([0-9.]*\), per-QP min \([0-9.]*\) max \([0-9.]*\) MB\/s, Jain \([0-9.]*\)$/\1 \2 \3 \4/p' \
		"$QR_DIR/st.cli"
}

# --- the table ---------------------------------------------------------

row() {
	printf '%-34s %5s %10s %10s %-7s %9s\n' "$@" | tee -a "$OUT"
	printf '| %s | %s | %s | %s | %s | %s |\n' "$@" | sed 's/\*/\\*/g' >>"$MD"
	if [ "$1" = test ]; then echo '|---|---|---|---|---|---|' >>"$MD"; fi
}

# ratio A B: A / B (a trailing "*" ignored), "-" unless both are numbers
ratio() {
	awk -v a="${1%\*}" -v b="${2%\*}" 'BEGIN {
		if (a ~ /^[0-9.]+$/ && b ~ /^[0-9.]+$/ && a > 0 && b > 0) printf "%.2f", a / b
		else print "-" }'
}

# both LABEL QPS UNIT QROCE RXE: a row with the ratio
both() {
	row "$1" "$2" "$4" "$5" "$3" "$(ratio "$4" "$5")"
}

: >"$OUT"
{
	echo "qroce vs rdma_rxe, many QPs at once; $(date -u '+%Y-%m-%d %H:%M UTC'), medians of $RUNS$([ $QUICK = 1 ] && echo ', quick (-q)')"
	echo "host: $(nproc) CPUs, $(sed -n 's/^model name.*: //p' /proc/cpuinfo | head -1), $(uname -r); 2 TCG guests, 1 GiB, MTU 9000"
} | tee -a "$OUT"
MD=$QR_DIR/perf.md
{ sed 's/$/;/' "$OUT"; printf "\`%s\`\n\n" "$CMDLINE"; } >"$MD"
row test qps qroce rxe unit qroce/rxe

if part mem; then
	WHAT_ROW="idle QP memory, qroce"
	# shellcheck disable=SC2046
	set -- $(runs 4 mem 1 qroce_0)
	qa=$1 qs=$2 qb=$3
	qr=$(awk '$1 == 1 { print $5 }' "$QR_DIR/runs.raw")
	WHAT_ROW="idle QP memory, rxe"
	# shellcheck disable=SC2046
	set -- $(runs 4 mem 2 rxe0)
	ra=$1 rb=$3
	rr=$(awk '$1 == 1 { print $5 }' "$QR_DIR/runs.raw")
	both "idle QP: guest MemAvailable" $IDLE_N KiB/QP "$qa" "$ra"
	both "idle QP: device state (QEMU)" $IDLE_N KiB/QP "$qs" n/a
	both "idle QP: guest + device" $IDLE_N KiB/QP "$qb" "$rb"
	both "idle QP: QEMU RSS, first run" $IDLE_N KiB/QP "${qr:--}" "${rr:--}"
fi

if part rate; then
	WHAT_ROW="QP create+destroy, qroce"
	q=$(runs 1 rate qroce_0)
	WHAT_ROW="QP create+destroy, rxe"
	r=$(runs 1 rate rxe0)
	both "QP create+destroy, $RATE_N in turn" - QPs/s "$q" "$r"
fi

if part bw; then
	for n in $QPS; do
		WHAT_ROW="ib_write_bw -q $n, qroce"
		q=$(runs 1 bw qroce_0 10.0.0.1 "$n")
		WHAT_ROW="ib_write_bw -q $n, rxe"
		r=$(runs 1 bw rxe0 10.0.1.1 "$n")
		both "ib_write_bw 64 KiB" "$n" MB/s "$q" "$r"
	done
fi

if part stream; then
	# per device: "total1 totalN minN maxN jainN"
	for dev in qroce_0 rxe0; do
		ip=10.0.0.1
		[ $dev = rxe0 ] && ip=10.0.1.1
		WHAT_ROW="stream 1 QP, $dev"
		one=$(runs 4 stream $dev $ip 1)
		many="- - - -"
		if [ "$SMAX" -gt 1 ]; then
			WHAT_ROW="stream $SMAX QPs, $dev"
			many=$(runs 4 stream $dev $ip "$SMAX")
		fi
		echo "${one%% *} $many" >"$QR_DIR/stream.$dev"
	done
	read -r q1 qn qmin qmax qj <"$QR_DIR/stream.qroce_0"
	read -r r1 rn rmin rmax rj <"$QR_DIR/stream.rxe0"
	both "stream 64 KiB: aggregate" 1 MB/s "$q1" "$r1"
	if [ "$SMAX" -gt 1 ]; then
		both "stream 64 KiB: aggregate" "$SMAX" MB/s "$qn" "$rn"
		qf=$(ratio "$qn" "$q1") rf=$(ratio "$rn" "$r1")
		both "stream: $SMAX QPs / 1 QP" $SMAX ratio "$qf" "$rf"
		both "stream: slowest QP" $SMAX MB/s "$qmin" "$rmin"
		both "stream: fastest QP" $SMAX MB/s "$qmax" "$rmax"
		both "stream: Jain's fairness index" $SMAX index "$qj" "$rj"
		for d in qroce rxe; do
			if [ $d = qroce ]; then f=$qf j=$qj; else f=$rf j=$rj; fi
			awk -v d=$d -v n=$SMAX -v f="$f" -v j="${j%\*}" 'BEGIN {
				if (f !~ /^[0-9.]+$/ || j !~ /^[0-9.]+$/) { printf "goal (%s): no figures\n", d; exit }
				printf "goal (%s): %d QPs move %.0f %% of the 1-QP aggregate (>= 80 %%: %s), Jain %.3f (>= 0.9: %s)\n",
					d, n, 100 * f, (f >= 0.8 ? "yes" : "no"), j, (j >= 0.9 ? "yes" : "no") }' | tee -a "$OUT"
		done
	fi
fi

grep -q '\*' "$OUT" && echo "*: some runs of the cell failed, the median of the others" | tee -a "$OUT"
if [ -s "$NOTES" ]; then
	sed 's/^/note: /' "$NOTES" | tee -a "$OUT"
fi
echo "took $(($(date +%s) - T0)) s" | tee -a "$OUT"
qr_cleanup
echo "table saved in $OUT"
{
	echo
	awk '/^goal \(|^\*: |^note: |^took / { gsub(/\*/, "\\*"); print "- " $0 }' "$OUT"
} >>"$MD"
sh "$QR_TOP/scripts/perf-section.sh" scale "$MD" || :
