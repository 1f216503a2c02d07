#!/bin/sh
# Run the gates of make check, the qtests and every tests/suite/t-*.sh;
# print TAP (tests/lib/tap.sh: one test per group, each group's checks nested under
# it) and end with "N passed, N failed", counting the checks.  Exit status
# 0 only if nothing failed.
#
#   QR_ONLY   the groups to run instead of all of them, by word: "gates",
#             "qtest", "qtest-iothread" (the transfer, migration and
#             hostile-input qtests again, the engine in an IOThread) or a
#             test file, e.g.
#             QR_ONLY="tests/suite/t-headers.sh tests/suite/t-harness.sh" sh tests/run.sh
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
B=$TOP/build
cd "$TOP" || exit 2
. tests/lib/tap.sh

groups=${QR_ONLY:-gates qtest qtest-iothread tests/suite/t-*.sh}
# shellcheck disable=SC2086
set -- $groups
tap_plan $#
for g; do
	case $g in
	gates) tap_group gates 900 sh scripts/check.sh ;;
	qtest) tap_group qtest 360 sh tests/qtest.sh "$B/qemu" "$B/qtest.log" 300 ;;
	qtest-iothread)
		QROCE_QTEST_IOTHREAD=1 tap_group qtest-iothread 360 sh tests/qtest.sh \
			"$B/qemu" "$B/qtest-iothread.log" 300 ;;
	*) tap_file "$g" 1500 ;;
	esac
done
tap_total
