#!/bin/sh
# The kernel driver's style gate: Linux's checkpatch.pl --strict on
# linux-driver/ (the Ethernet driver qroce_en.ko and the RDMA driver
# qroce_ib.ko) and tests/kmod/, then the driver's two modules and the test
# module built with W=1, sparse (C=2) and -Werror in a scratch copy, and
# no driver function over 100 lines (check-funcs.sh).  Any diagnostic
# fails it.
#
#   sh scripts/check-driver.sh      (run from the top of the tree; make check)
set -eu

CACHE=${QROCE_CACHE:-/var/cache/qroce}
CHECKPATCH=$CACHE/checkpatch/checkpatch.pl
TOP=$(cd "$(dirname "$0")/.." && pwd)

die() { echo "check-driver: $*" >&2; exit 1; }

[ -f "$CHECKPATCH" ] || die "$CHECKPATCH missing: run 'make deps'"
[ -f "$CACHE/kernel-version" ] || die "$CACHE/kernel-version missing: run 'make deps'"
KDIR=/lib/modules/$(cat "$CACHE/kernel-version")/build
[ -d "$KDIR" ] || die "$KDIR missing: run 'make deps'"
command -v sparse >/dev/null 2>&1 || die "sparse missing: run 'make deps'"

fail=0

# checkpatch: the sources only (not the build's generated *.mod.c) and
# the kernel test module of tests/kmod
cd "$TOP"
set --
for f in linux-driver/qroce*.c linux-driver/qroce*.h tests/kmod/qroce*.c; do
	case $f in *.mod.c | */qroce_compat.h) ;; *) set -- "$@" "$f" ;; esac
done
# qroce_compat.h, the out-of-tree build's shims for older kernels, is the
# one file that tests LINUX_VERSION_CODE (not part of the Linux series)
if out=$(perl "$CHECKPATCH" --strict --no-tree --terse --show-types -f "$@" 2>&1 &&
	 perl "$CHECKPATCH" --strict --no-tree --terse --show-types \
		--ignore LINUX_VERSION_CODE,CONSTANT_COMPARISON -f linux-driver/qroce_compat.h 2>&1) &&
   [ -z "$out" ]; then
	echo "PASS: checkpatch --strict ($# files)"
else
	echo "$out"
	echo "FAIL: checkpatch --strict"
	fail=1
fi

# build: a scratch copy, so that every file is compiled and checked
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
mkdir "$tmp/linux-driver"
cp linux-driver/Kbuild linux-driver/Makefile linux-driver/qroce*.c \
	linux-driver/qroce*.h "$tmp/linux-driver/"
rm -f "$tmp"/linux-driver/*.mod.c
cp -r include "$tmp/include"
mkdir "$tmp/kmod"
cp tests/kmod/Kbuild tests/kmod/qroce*.c "$tmp/kmod/"
# build DIR WHAT: one module directory with W=1 and sparse; any diagnostic
# (beyond make's own lines) fails it
build() {
	log=$tmp/build.log
	if ! make -C "$KDIR" M="$1" W=1 C=2 KCFLAGS=-Werror modules >"$log" 2>&1; then
		cat "$log"
		echo "FAIL: $2 build (W=1 C=2 -Werror)"
		fail=1
	elif grep -Ev '^make(\[[0-9]+\])?: (Entering|Leaving) directory|^  [A-Z]+ *(\[M\])? +' \
		"$log" >"$tmp/diag"; then
		cat "$tmp/diag"
		echo "FAIL: $2 build (W=1 C=2 -Werror): diagnostics above"
		fail=1
	else
		echo "PASS: $2 build (W=1 C=2 -Werror, sparse clean)"
	fi
}
build "$tmp/linux-driver" "qroce_en.ko and qroce_ib.ko"
for m in qroce_en qroce_ib; do
	[ -f "$tmp/linux-driver/$m.ko" ] || { echo "FAIL: $m.ko was not built"; fail=1; }
done
build "$tmp/kmod" "tests/kmod module"

# functions: none over 100 lines in either module
if out=$(sh "$TOP/scripts/check-funcs.sh" linux-driver 2>&1); then
	echo "PASS: no function over 100 lines (linux-driver)"
else
	echo "$out"
	echo "FAIL: functions over 100 lines"
	fail=1
fi

[ $fail -eq 0 ] && echo "RESULT: check-driver passed" || echo "RESULT: check-driver failed"
exit $fail
