#!/bin/sh
# The device's qtests as TAP: QEMU's qos-test runs the libqos graph tests
# whose path goes through the qroce node, and their ok and not ok lines
# are numbered again under one plan (qos-test prints a plan of its own
# after every test asked for with -p).  Run by tests/run.sh and
# tests/asan.sh as their "qtest" group.
#
#   sh tests/qtest.sh QEMU_BUILD LOG SECONDS [AREAS]
#
# QEMU_BUILD is a QEMU build directory (build/qemu, build/qemu-asan); LOG
# gets qos-test's own output; SECONDS limits qos-test; AREAS, an extended
# regular expression, picks the areas to run (e.g. 'rc|srq'; all if not
# given).  With QROCE_QTEST_IOTHREAD=1 in the environment every test's
# QEMU runs the device's engine in an IOThread (-device qroce,iothread=).
# Exit status 0 only if every test passed and at least one ran.
set -u
. "$(dirname "$0")/lib/tap.sh"
qt=$1/tests/qtest/qos-test
out=$2
export QTEST_QEMU_BINARY="$1/qemu-system-x86_64"
echo "TAP version 13"

# give_up WHY: the group's one test, failed
give_up() {
	tap_line 1 "$1"
	tap_end qtest 0 1
	exit 1
}
[ -x "$qt" ] || give_up "$qt missing (run 'make')"

# qos-test holds the graph tests of every device in the build: run
# qroce's, each named with -p
sel=$("$qt" -l 2>/dev/null | grep '/qroce/qroce-tests/' |
	grep -E "/qroce-tests/(${4:-.*})" | sed 's/^/-p /')
# without a selection qos-test would run every device's tests
[ -n "$sel" ] || give_up "qos-test -l lists no qroce test"
# shellcheck disable=SC2086
timeout "$3" "$qt" --tap -k $sel >"$out" 2>&1
rc=$?
grep -E '^(ok|not ok) ' "$out" | grep -E '/qroce/|^not ok' |
	awk '{ st = /^ok/ ? "ok" : "not ok"; sub(/^(not )?ok [0-9]+ /, "")
		print st, NR, "-", $0 }' >"$out.tap"
cat "$out.tap"
TAP_N=$(wc -l <"$out.tap")
p=$(grep '^ok ' "$out.tap" | grep -vc ' # SKIP')
f=$(grep -c '^not ok ' "$out.tap")
rm -f "$out.tap"
if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
	tail -20 "$out" | sed 's/^/# /'
	tap_line 1 "qos-test exited with status $rc"
	f=1
fi
if [ "$p" -eq 0 ] && [ "$f" -eq 0 ]; then
	tap_line 1 "no qroce test ran"
	f=1
fi
tap_end qtest "$p" "$f"
[ "$f" -eq 0 ]
