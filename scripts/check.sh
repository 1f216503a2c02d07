#!/bin/sh
# The style and structure gates (make check; make test runs them first).
# One line per gate, PASS or FAIL, then "RESULT gates P F"; the output of a
# failing gate is printed.  Exit status 0 only if every gate passed.
cd "$(dirname "$0")/.." || exit 2
pass=0
fail=0
gate() {
	name=$1
	shift
	if out=$("$@" 2>&1); then
		echo "PASS check: $name"
		pass=$((pass + 1))
	else
		echo "FAIL check: $name"
		printf '%s\n' "$out" | tail -40 | sed 's/^/    /'
		fail=$((fail + 1))
	fi
}
gate "headers: one copy, padding-free, every value in the spec" sh scripts/check-headers.sh
gate "device: QEMU checkpatch, -Werror" sh scripts/check-qemu.sh
[ -f scripts/check-layers.sh ] &&
	gate "device: calls between files run one way; functions <= 100 lines" sh scripts/check-layers.sh
[ -f scripts/check-driver.sh ] &&
	gate "driver: checkpatch --strict, sparse C=2, -Werror" sh scripts/check-driver.sh
gate "provider: -Werror with rdma-core's warnings; functions <= 100 lines" sh scripts/check-provider.sh
echo "RESULT gates $pass $fail"
[ "$fail" -eq 0 ]
