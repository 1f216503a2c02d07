#!/bin/sh
# make test-ulp: the kernel's storage ULPs over qroce that do not fit in
# make test's budget -- every tests/ulp/u-*.sh (SRP, iSER, recovery under
# faults).  TAP as tests/run.sh prints it, a group per file; ends with
# "N passed, N failed".  Exit status 0 only if nothing failed.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
cd "$TOP" || exit 2
. tests/lib/tap.sh

set -- tests/ulp/u-*.sh
tap_plan $#
for t; do
	tap_file "$t" 1500
done
tap_total
