#!/bin/sh
# make fuzz: run each of $FUZZ_TARGETS (default: generic-fuzz-qroce
# qroce-frames qroce-migstream) for $FUZZ_MINUTES minutes (default 10)
# with libFuzzer, on build/qemu-fuzz/qemu-fuzz-x86_64 (ASAN+UBSAN).  One
# core, one target at a time.  Inputs are at most 8 KiB, but 64 KiB for
# qroce-migstream (a device section with objects of every kind is 27 KiB).
#
#   seeds     tests/fuzz-corpus/TARGET/      (in the repo, read only)
#   corpus    build/fuzz/TARGET/             (grows; kept between runs)
#   crashes   tests/fuzz-corpus/crashes/TARGET-crash-SHA1 (and leak-,
#             timeout-, oom-): each is a reproducer, replayed with
#             build/qemu-fuzz/qemu-fuzz-x86_64 --fuzz-target=TARGET FILE
#   log       build/fuzz/TARGET.log; a summary line per target at the end
#
# After a crash the run goes on (a new libFuzzer process) until the time is
# up, at most 20 restarts.  Exit status 1 if anything crashed.
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
BIN=${FUZZ_BIN:-$TOP/build/qemu-fuzz/qemu-fuzz-x86_64}
MIN=${FUZZ_MINUTES:-10}
TARGETS=${FUZZ_TARGETS:-generic-fuzz-qroce qroce-frames qroce-migstream}
SEEDS=$TOP/tests/fuzz-corpus
WORK=$TOP/build/fuzz
CRASHES=$SEEDS/crashes
[ -x "$BIN" ] || { echo "fuzz: $BIN missing: run 'make qemu-fuzz'" >&2; exit 2; }
mkdir -p "$WORK" "$CRASHES"

# Leaks are not findings here (QEMU keeps state across inputs); everything
# else ASAN or UBSAN sees is.
export ASAN_OPTIONS=${ASAN_OPTIONS:-"detect_leaks=0:print_stacktrace=1:halt_on_error=1"}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-"halt_on_error=1:abort_on_error=1:print_stacktrace=1"}

found=0
for t in $TARGETS; do
	mkdir -p "$WORK/$t" "$SEEDS/$t"
	log=$WORK/$t.log
	: >"$log"
	case $t in
	qroce-migstream) maxlen=65536 ;;
	*) maxlen=8192 ;;
	esac
	end=$(($(date +%s) + MIN * 60))
	runs=0
	while :; do
		left=$((end - $(date +%s)))
		[ "$left" -gt 5 ] && [ "$runs" -lt 20 ] || break
		runs=$((runs + 1))
		echo "==== $(date -u +%FT%TZ) run $runs, ${left}s" >>"$log"
		"$BIN" --fuzz-target="$t" -max_total_time="$left" \
			-timeout=20 -rss_limit_mb=4096 -max_len=$maxlen \
			-print_final_stats=1 -artifact_prefix="$CRASHES/$t-" \
			"$WORK/$t" "$SEEDS/$t" >>"$log" 2>&1
		rc=$?
		[ "$rc" -eq 0 ] && break
		found=1
		echo "fuzz: $t: libFuzzer exit $rc; see $log" >&2
		grep -E '^(==[0-9]+==ERROR|SUMMARY|.*runtime error:)' "$log" | tail -3 >&2
	done
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" |
		awk '{ s += $1 } END { print s + 0 }')
	last=$(grep -E '^#[0-9]+.*cov: ' "$log" | tail -1)
	echo "fuzz: $t: ${MIN} min, $runs run(s), $execs executions; last: $last;" \
		"corpus $(ls "$WORK/$t" | wc -l) files"
done
ls "$CRASHES" 2>/dev/null | grep -q . && echo "fuzz: reproducers in $CRASHES:" && ls "$CRASHES"
exit $found
