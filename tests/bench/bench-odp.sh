#!/bin/sh
# Benchmark, not a test: on-demand paging against a pinned MR, in one guest
# (tests/guest/qroce-odp-bench.c: two RC QPs on qroce_0 through the device,
# 1 MiB RDMA WRITEs one at a time over a region of MIB MiB).  Prints the
# median of RUNS runs of each figure: MB/s (10^6 B/s) into a pinned MR,
# into an untouched ODP MR (odp-first: every page faults in; also its
# odp_faults and faults/s), into the same MR again (odp-again), and into
# an ODP MR prefetched with ibv_advise_mr (odp-prefetched; the prefetch's
# own time apart), and each one's ratio to pinned MB/s within a run.
# A run that prints a FAIL line (a WRITE failed, or the bytes differ) or
# exits non-zero gives no figures; the programs' outputs are kept in
# build/test-logs/bench-odp/.  With a good run, the table is written to
# docs/performance.md (scripts/perf-section.sh odp; QR_PERF_DOC=- leaves
# the document alone).
#   sh tests/bench/bench-odp.sh [MIB] [RUNS]
. "$(dirname "$0")/../lib/lib.sh"
# the command, for the table's header in docs/performance.md
CMDLINE="sh tests/bench/bench-odp.sh"
for a; do case $a in '' | *[!A-Za-z0-9_./=:,+-]*) a="'$a'" ;; esac; CMDLINE="$CMDLINE $a"; done
MIB=${1:-64}
RUNS=${2:-3}
qr_init bench-odp
qr_boot 1 || exit 1
QR_TIMEOUT=600

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print "-" }'; }
# fig NAME KEY: the median over the good runs of the value after KEY on
# the "odp-bench NAME ..." lines
fig() {
	for f in "$QR_DIR"/run*.ok; do
		[ -e "$f" ] || continue
		awk -v n="$1" -v k="$2" '$1 == "odp-bench" && $2 == n {
			for (i = 3; i < NF; i++) if ($i == k) print $(i + 1) }' "$f"
	done | median
}

ok=0
i=1
while [ $i -le "$RUNS" ]; do
	out=$QR_DIR/run$i.out
	qr_exec 1 "qroce-odp-bench -d qroce_0 -g 1 -s $MIB -m 4096" >"$out" 2>&1
	rc=$?
	if [ $rc -eq 0 ] && ! grep -q '^FAIL' "$out" &&
		grep -q '^odp-bench ratio ' "$out"; then
		cp "$out" "$QR_DIR/run$i.ok"
		ok=$((ok + 1))
	else
		echo "note: run $i failed (exit $rc):"
		grep '^FAIL\|^qroce-odp-bench\|^qroce-neg\|^qr_exec' "$out" | sed 's/^/  /'
	fi
	i=$((i + 1))
done

MD=$QR_DIR/perf.md
# line ROW...: a row of the table, printed and in $MD
line() {
	printf '%-15s %10s %8s %10s %12s %10s\n' "$@"
	printf '| %s | %s | %s | %s | %s | %s |\n' "$@" >>"$MD"
	if [ "$1" = measure ]; then echo '|---|---|---|---|---|---|' >>"$MD"; fi
}
echo "ODP in one guest: $MIB MiB regions, 1 MiB RDMA WRITEs one at a time; medians of $ok good runs of $RUNS"
{
	echo "ODP in one guest: $MIB MiB regions, 1 MiB RDMA WRITEs one at a time; medians of $ok good runs of $RUNS; $(date -u '+%Y-%m-%d %H:%M UTC');"
	echo "host: $(nproc) CPUs, $(sed -n 's/^model name.*: //p' /proc/cpuinfo | head -1), $(uname -r);"
	printf "\`%s\`\n\n" "$CMDLINE"
} >"$MD"
grep -h '^# odp-bench' "$QR_DIR"/run*.out 2>/dev/null | head -1
line measure "MB/s" faults "faults/s" "prefetch ms" "/pinned"
line pinned "$(fig pinned mbps)" - - - 1.00
line odp-first "$(fig odp-first mbps)" \
	"$(fig odp-first faults)" "$(fig odp-first faults_per_s)" - "$(fig ratio first/pinned)"
line odp-again "$(fig odp-again mbps)" - - - \
	"$(fig ratio again/pinned)"
line odp-prefetched "$(fig odp-prefetched mbps)" - - \
	"$(fig odp-prefetched prefetch_ms)" "$(fig ratio prefetched/pinned)"
qr_cleanup
[ "$ok" -gt 0 ] || exit 1
sh "$QR_TOP/scripts/perf-section.sh" odp "$MD" || :
