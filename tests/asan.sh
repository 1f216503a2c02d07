#!/bin/sh
# make test-asan: the qtests and the two-guest RC tests on a QEMU built with
# AddressSanitizer and UndefinedBehaviorSanitizer (build/qemu-asan).  Every
# sanitizer report stops the QEMU that made it (halt_on_error) and is also
# written to build/asan-logs/, so a report fails the run even when the test
# around it would have passed; the guests' qemu.log are searched too.
# Prints TAP as tests/run.sh does (the qtests and each test file a group,
# each sanitizer check a test of its own) and ends with "N passed, N
# failed" and the time taken.  Not part of 'make test'.
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
B=$TOP/build
A=$B/qemu-asan
LOGS=$B/asan-logs
TESTS=${ASAN_TESTS:-"tests/suite/t-rc-pingpong.sh tests/suite/t-rdma-write.sh tests/suite/t-rdma-read-atomic.sh"}
cd "$TOP" || exit 2
. tests/lib/tap.sh
start=$(date +%s)

for f in "$A/qemu-system-x86_64" "$A/tests/qtest/qos-test"; do
	[ -x "$f" ] || { echo "asan: $f missing (run 'make qemu-asan')"; exit 1; }
done
rm -rf "$LOGS"
mkdir -p "$LOGS"

# Leak checking is off: QEMU does not free everything at exit, and a guest
# QEMU ends by signal.  Every other report is fatal.
export ASAN_OPTIONS="halt_on_error=1:abort_on_error=1:print_stacktrace=1:detect_leaks=0:log_path=$LOGS/asan"
export UBSAN_OPTIONS="halt_on_error=1:abort_on_error=1:print_stacktrace=1:log_path=$LOGS/ubsan"

# reports LOG...: the files among LOG... and build/asan-logs/* holding a
# sanitizer report (the logs also get ASAN's harmless warning about
# makecontext, QEMU's coroutines)
reports() {
	grep -l -E 'ERROR: AddressSanitizer|runtime error:|ERROR: LeakSanitizer' \
		"$@" "$LOGS"/* 2>/dev/null
}

# the qtests, then each test file, each followed by its sanitizer check,
# a top-level test of its own
set -- $TESTS
tap_plan $((2 + 2 * $#))
out=$B/asan-qtest.log
t0=$(date +%s)
tap_group qtest 1260 sh tests/qtest.sh "$A" "$out" 1200
if r=$(reports "$out"); then
	tap_test 1 "asan qtest: sanitizer reports in: $(echo $r)"
else
	tap_test 0 "asan qtest: no sanitizer report"
fi
echo "# qtests: $(($(date +%s) - t0)) s"

# guest tests: the harness boots $QR_QEMU; keep their logs to search them
export QR_QEMU=$A/qemu-system-x86_64
for t in $TESTS; do
	t0=$(date +%s)
	name=$(sed -n 's/^qr_init \([^ ]*\).*/\1/p' "$t" | head -1)
	n_before=$(reports | wc -l)
	tap_file "$t" 3000
	# the harness keeps build/test-logs/NAME only when a check failed
	qlogs=$(ls "$B/test-logs/$name"/g*/qemu.log 2>/dev/null)
	if [ "$(reports | wc -l)" -ne "$n_before" ] ||
		{ [ -n "$qlogs" ] && reports $qlogs >/dev/null; }; then
		tap_test 1 "asan $t: sanitizer reports: $(echo $(reports $qlogs))"
	else
		tap_test 0 "asan $t: no sanitizer report"
	fi
	echo "# $t: $(($(date +%s) - t0)) s"
done

for r in $(reports); do
	echo "# ---- $r"
	head -40 "$r" | sed 's/^/# /'
done
tap_total " ($(($(date +%s) - start)) s)"
