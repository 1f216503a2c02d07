#!/bin/sh
# make test-asan: the qtests and the two-guest RC tests on a QEMU built with
# AddressSanitizer and UndefinedBehaviorSanitizer (build/qemu-asan).  Every
# sanitizer report stops the QEMU that made it (halt_on_error) and is also
# written to build/asan-logs/, so a report fails the run even when the test
# around it would have passed; the guests' qemu.log are searched too.
# Prints the same PASS/FAIL lines as tests/run.sh and ends with
# "N passed, N failed" and the time taken.  Not part of 'make test'.
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
B=$TOP/build
A=$B/qemu-asan
LOGS=$B/asan-logs
TESTS=${ASAN_TESTS:-"tests/t-rc-pingpong.sh tests/t-rdma-write.sh tests/t-rdma-read-atomic.sh"}
cd "$TOP" || exit 2
start=$(date +%s)
pass=0
fail=0

for f in "$A/qemu-system-x86_64" "$A/tests/qtest/qos-test"; do
	[ -x "$f" ] || { echo "FAIL asan: $f missing (run 'make qemu-asan')"; exit 1; }
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

# qtests
out=$B/asan-qtest.log
t0=$(date +%s)
sel=$(QTEST_QEMU_BINARY=$A/qemu-system-x86_64 "$A/tests/qtest/qos-test" -l 2>/dev/null |
	grep '/qroce/qroce-tests/' | sed 's/^/-p /')
QTEST_QEMU_BINARY=$A/qemu-system-x86_64 timeout 1200 \
	"$A/tests/qtest/qos-test" --tap -k $sel >"$out" 2>&1
rc=$?
p=$(grep "^ok " "$out" | grep "/qroce/" | grep -vc "# SKIP")
f=$(grep -c '^not ok ' "$out")
grep -E '^(ok|not ok) ' "$out" | sed 's/^ok /PASS asan qtest: /; s/^not ok /FAIL asan qtest: /'
if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
	echo "FAIL asan qtest: qos-test exited with status $rc"
	tail -20 "$out"
	f=1
fi
[ "$p" -eq 0 ] && [ "$f" -eq 0 ] && { echo "FAIL asan qtest: no test ran"; f=1; }
if r=$(reports "$out"); then
	echo "FAIL asan qtest: sanitizer reports in:" $r
	f=$((f + 1))
fi
echo "qtests: $(($(date +%s) - t0)) s"
pass=$((pass + p))
fail=$((fail + f))

# guest tests: the harness boots $QR_QEMU; keep their logs to search them
export QR_QEMU=$A/qemu-system-x86_64
for t in $TESTS; do
	t0=$(date +%s)
	res=$(mktemp)
	name=$(sed -n 's/^qr_init \([^ ]*\).*/\1/p' "$t" | head -1)
	n_before=$(reports | wc -l)
	timeout 3000 sh "$t" 2>&1 | tee "$res" | grep -v '^RESULT '
	line=$(grep '^RESULT ' "$res" | tail -1)
	if [ -z "$line" ]; then
		echo "FAIL $t: ended without a result"
		fail=$((fail + 1))
	else
		set -- $line
		pass=$((pass + $3))
		fail=$((fail + $4))
	fi
	rm -f "$res"
	# the harness keeps build/test-logs/NAME only when a check failed
	qlogs=$(ls "$B/test-logs/$name"/g*/qemu.log 2>/dev/null)
	if [ "$(reports | wc -l)" -ne "$n_before" ] ||
		{ [ -n "$qlogs" ] && reports $qlogs >/dev/null; }; then
		echo "FAIL asan $t: sanitizer reports:" $(reports $qlogs)
		fail=$((fail + 1))
	else
		echo "PASS asan $t: no sanitizer report"
		pass=$((pass + 1))
	fi
	echo "$t: $(($(date +%s) - t0)) s"
done

for r in $(reports); do
	echo "---- $r"
	head -40 "$r"
done
echo "$pass passed, $fail failed ($(($(date +%s) - start)) s)"
[ "$fail" -eq 0 ]
