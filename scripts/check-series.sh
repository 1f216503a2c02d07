#!/bin/sh
# The series gate: the three patch series (scripts/series.sh, make patches)
# are written from the sources as they are, each applies to its pristine
# tree with git am, and each tree's own checkpatch passes on it:
#
#   qemu       QEMU's scripts/checkpatch.pl; errors and warnings fail but
#              for the reviewed exceptions in scripts/checkpatch-qemu.allow
#              ("FILE: message", "-" for a message about the whole patch)
#   linux      Linux's scripts/checkpatch.pl --strict in the tree the
#              driver is built in, ignoring FILE_PATH_CHANGES (MAINTAINERS
#              comes in a patch of its own), BIT_MACRO (qroce_hw.h is
#              shared with QEMU and userspace, which have no BIT()) and
#              CAMELCASE (the C11 keyword _Static_assert in qroce-abi.h)
#   rdma-core  rdma-core has no checkpatch of its own and takes the
#              kernel's style: Linux's checkpatch.pl --no-tree, ignoring
#              USE_NEGATIVE_ERRNO (the verbs API returns positive errno
#              values) and FILE_PATH_CHANGES
#
#   sh scripts/check-series.sh      (make check; needs 'make' done first)
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
cd "$TOP" || exit 2
fail=0
QCP=build/src/qemu/scripts/checkpatch.pl
LCP=build/src/linux/scripts/checkpatch.pl
[ -f $QCP ] || { echo "check-series: $QCP missing: run 'make'" >&2; exit 1; }
[ -f $LCP ] || { echo "check-series: $LCP missing: run 'make driver'" >&2; exit 1; }

for t in qemu linux rdma-core; do
	sh scripts/series.sh export $t >/dev/null || { echo "check-series: $t: export failed" >&2; fail=1; }
	sh scripts/series.sh verify $t || fail=1
done

patches() { ls build/patches/"$1"/0*.patch | grep -v '/0000-cover-letter.patch$'; }

# QEMU: "FILE: SEVERITY: message" per diagnostic ("-" when it names no file)
# shellcheck disable=SC2046
out=$(perl $QCP $(patches qemu) 2>&1 | awk '
	/^(ERROR|WARNING): / { if (msg != "") print "-: " msg; msg = $0; next }
	msg != "" && /^#[0-9]+: FILE: / { f = $3; sub(/:.*/, "", f); print f ": " msg; msg = ""; next }
	/^$/ { if (msg != "") print "-: " msg; msg = "" }
	END { if (msg != "") print "-: " msg }')
bad=$(printf '%s\n' "$out" | grep -E ': (ERROR|WARNING): ' | grep -v -F -f scripts/checkpatch-qemu.allow)
if [ -n "$bad" ]; then
	printf '%s\n' "$bad" >&2
	echo "check-series: QEMU's checkpatch found problems in build/patches/qemu" >&2
	fail=1
fi

# shellcheck disable=SC2046
out=$(cd build/src/linux && perl scripts/checkpatch.pl --strict --terse --show-types \
	--ignore FILE_PATH_CHANGES,BIT_MACRO,CAMELCASE $(cd "$TOP" && patches linux | sed "s|^|$TOP/|") 2>&1 |
	grep -v '^total: 0 errors, 0 warnings, 0 checks')
if [ -n "$out" ]; then
	printf '%s\n' "$out" >&2
	echo "check-series: Linux's checkpatch --strict found problems in build/patches/linux" >&2
	fail=1
fi

# shellcheck disable=SC2046
out=$(perl $LCP --no-tree --terse --show-types --ignore USE_NEGATIVE_ERRNO,FILE_PATH_CHANGES \
	$(patches rdma-core) 2>&1 | grep -v '^total: 0 errors, 0 warnings')
if [ -n "$out" ]; then
	printf '%s\n' "$out" >&2
	echo "check-series: checkpatch found problems in build/patches/rdma-core" >&2
	fail=1
fi
[ $fail = 0 ] && echo "check-series: three series apply and pass their trees' checkpatch"
exit $fail
