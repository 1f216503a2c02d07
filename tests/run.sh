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

# qtests: TAP from the QEMU build
qt=$B/qemu/tests/qtest/qroce-test
if [ -x "$qt" ]; then
	out=$B/qtest.log
	QTEST_QEMU_BINARY=$B/qemu/qemu-system-x86_64 timeout 300 "$qt" --tap -k >"$out" 2>&1
	rc=$?
	p=$(grep -c '^ok ' "$out")
	f=$(grep -c '^not ok ' "$out")
	grep -E '^(ok|not ok) ' "$out" | sed 's/^ok /PASS qtest: /; s/^not ok /FAIL qtest: /'
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "FAIL qtest: qroce-test exited with status $rc"
		tail -20 "$out"
		f=1
	fi
	if [ "$p" -eq 0 ] && [ "$f" -eq 0 ]; then
		echo "FAIL qtest: no test ran"
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
