#!/bin/sh
# make test-ulp: the kernel's storage ULPs over qroce that do not fit in
# make test's budget -- every tests/u-*.sh (SRP, iSER, recovery under
# faults).  One line per check; ends with "N passed, N failed".  Exit
# status 0 only if nothing failed.
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
pass=0
fail=0
cd "$TOP" || exit 2

for t in tests/u-*.sh; do
	res=$(mktemp)
	timeout 1500 sh "$t" 2>&1 | tee "$res" | grep -v '^RESULT '
	line=$(grep '^RESULT ' "$res" | tail -1)
	rm -f "$res"
	if [ -z "$line" ]; then
		echo "FAIL $t: ended without a result"
		fail=$((fail + 1))
		continue
	fi
	set -- $line
	pass=$((pass + $3))
	fail=$((fail + $4))
done

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
