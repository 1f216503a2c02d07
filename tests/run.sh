#!/bin/sh
# Run the gates of make check, the qtests and every tests/t-*.sh; print one
# line per check and end with "N passed, N failed".  Exit status 0 only if
# nothing failed.
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
B=$TOP/build
pass=0
fail=0
cd "$TOP" || exit 2

# counted NAME TIMEOUT CMD...: run CMD, show its lines but the last
# "RESULT name P F", and add P and F to the totals
counted() {
	cname=$1 ctime=$2
	shift 2
	cres=$(mktemp)
	timeout "$ctime" "$@" 2>&1 | tee "$cres" | grep -v '^RESULT '
	cline=$(grep '^RESULT ' "$cres" | tail -1)
	rm -f "$cres"
	if [ -z "$cline" ]; then
		echo "FAIL $cname: ended without a result"
		fail=$((fail + 1))
		return
	fi
	set -- $cline
	pass=$((pass + $3))
	fail=$((fail + $4))
}

# the gates of make check, one line each
counted scripts/check.sh 900 sh scripts/check.sh

# qtests: libqos graph tests in QEMU's qos-test (TAP); the device's are
# those whose path runs through the qroce node
qt=$B/qemu/tests/qtest/qos-test
if [ -x "$qt" ]; then
	out=$B/qtest.log
	# qos-test holds the graph tests of every device in the build: run
	# qroce's, each named with -p
	sel=$(QTEST_QEMU_BINARY=$B/qemu/qemu-system-x86_64 "$qt" -l 2>/dev/null |
		grep '/qroce/qroce-tests/' | sed 's/^/-p /')
	QTEST_QEMU_BINARY=$B/qemu/qemu-system-x86_64 timeout 300 "$qt" --tap -k $sel >"$out" 2>&1
	rc=$?
	p=$(grep '^ok ' "$out" | grep '/qroce/' | grep -vc '# SKIP')
	f=$(grep -c '^not ok ' "$out")
	grep -E '^(ok|not ok) ' "$out" | grep -E '/qroce/|^not ok' |
		sed 's/^ok /PASS qtest: /; s/^not ok /FAIL qtest: /'
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "FAIL qtest: qos-test exited with status $rc"
		tail -20 "$out"
		f=1
	fi
	if [ "$p" -eq 0 ] && [ "$f" -eq 0 ]; then
		echo "FAIL qtest: no qroce test ran"
		f=1
	fi
	pass=$((pass + p))
	fail=$((fail + f))
else
	echo "FAIL qtest: $qt missing (run 'make')"
	fail=$((fail + 1))
fi

for t in tests/t-*.sh; do
	counted "$t" 1500 sh "$t"
done

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
