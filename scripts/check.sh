#!/bin/sh
# The style and structure gates (make check; make test runs them first).
# TAP (tests/lib/tap.sh): one test per gate, the output of a failing gate as
# comments, the plan at the end.  Exit status 0 only if every gate passed.
cd "$(dirname "$0")/.." || exit 2
. tests/lib/tap.sh
gate() {
	name=$1
	shift
	out=$("$@" 2>&1)
	rc=$?
	tap_test $rc "$name"
	[ $rc -eq 0 ] || printf '%s\n' "$out" | tail -40 | sed 's/^/# | /'
}
echo "TAP version 13"
gate "headers: one copy, padding-free, every value in the spec" sh scripts/check-headers.sh
gate "series: make patches; each applies; each tree's checkpatch" sh scripts/check-series.sh
gate "device: -Werror" sh scripts/check-qemu.sh
[ -f scripts/check-layers.sh ] &&
	gate "device: calls between files run one way; functions <= 100 lines" sh scripts/check-layers.sh
[ -f scripts/check-driver.sh ] &&
	gate "driver: checkpatch --strict, sparse C=2, -Werror" sh scripts/check-driver.sh
gate "provider: -Werror with rdma-core's warnings; functions <= 100 lines" sh scripts/check-provider.sh
gate "tests: shell functions <= 100 lines" sh scripts/check-shfuncs.sh
gate "tests: guest programs, tools, kernel module, fuzz targets: functions <= 100 lines" \
	sh scripts/check-funcs.sh tests/guest tests/tools tests/kmod qemu-device/tests/qtest/fuzz
tap_end gates "$TAP_PASS" "$TAP_FAIL"
[ "$TAP_FAIL" -eq 0 ]
