#!/bin/sh
# make patches-bisect: every prefix of each series builds on its own, as a
# maintainer bisecting through it would build it.
#
#   sh scripts/series-bisect.sh [TREE...]     (default: qemu linux rdma-core)
#
# For K = 1..N, the tree's build source (build/src/TREE) is brought to the
# pristine tarball plus the first K patches (scripts/series.sh apply TREE
# SRC K) and built incrementally in the build's own directories:
#
#   qemu       ninja qemu-system-x86_64 and qos-test in build/qemu; the
#              device list (qroce.mak, outside the series) names QROCE only
#              once a patch has added its Kconfig; when build/qemu-fuzz
#              exists (make qemu-fuzz), qemu-fuzz-x86_64 too for a patch
#              of fuzz targets and for the last patch
#   linux      every qroce directory the prefix has, with M=; the uAPI
#              header compiled on its own as userspace sees it; the
#              headers under include/linux/qroce/ compiled in a module of
#              their own (build/series/hdrcheck)
#   rdma-core  ninja in build/rdma-core (all of rdma-core, the provider
#              once it is there)
#
# The full series is applied again at the end, also after a failure, so
# the build trees are as make left them.  Run it when nothing else uses
# the build (the harness, make test).  Prints one line per prefix and a
# last line "N built, N failed".
#
# A tree whose every prefix built is recorded in $CACHE/bisect/ under a
# hash of its patches (with the cover letter, which names the base), the
# compiler, this script and, for Linux, the guest kernel's build: the same
# series is not built again on this machine (a CI run after a change to
# another tree), and a fresh machine builds every prefix.
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
B=$TOP/build
CACHE=${QROCE_CACHE:-/var/cache/qroce}
JOBS=${JOBS:-2}
LOG=$B/series/bisect
mkdir -p "$LOG"
ok=0 bad=0

say() { printf '%s\n' "$*"; }

npatches() { ls "$B/patches/$1"/*.patch | grep -vc '/0000-cover-letter.patch$'; }
patchfile() { ls "$B/patches/$1"/*.patch | grep -v '/0000-cover-letter.patch$' | sed -n "$2p"; }
subject() { basename "$(patchfile "$1" "$2")"; }

# step TREE K: apply the first K patches and build; the log of the build
# in build/series/bisect/TREE-K.log
step() {
	t=$1 k=$2
	log=$LOG/$t-$k.log
	if sh "$TOP/scripts/series.sh" apply "$t" "$B/src/$t" "$k" >"$log" 2>&1 &&
	   "build_$(echo "$t" | tr - _)" "$k" >>"$log" 2>&1; then
		ok=$((ok + 1))
		say "ok   $t $k/$(npatches "$t") $(subject "$t" "$k")"
	else
		bad=$((bad + 1))
		say "FAIL $t $k/$(npatches "$t") $(subject "$t" "$k") (log: $log)"
		tail -15 "$log" | sed 's/^/     | /'
	fi
}

build_qemu() {
	src=$B/src/qemu
	mak=$src/configs/devices/x86_64-softmmu/qroce.mak
	if [ -f "$src/hw/net/qroce/Kconfig" ]; then
		want=$(cat "$TOP/qemu-device/configs/devices/x86_64-softmmu/qroce.mak")
	else
		want=$(grep -v '^CONFIG_QROCE=' "$TOP/qemu-device/configs/devices/x86_64-softmmu/qroce.mak")
	fi
	[ "$(cat "$mak")" = "$want" ] || printf '%s\n' "$want" >"$mak"
	ninja -C "$B/qemu" -j"$JOBS" qemu-system-x86_64 tests/qtest/qos-test || return 1
	# the fuzzing build compiles the same device again with another
	# compiler: only for a patch of fuzz targets and for the last one
	if [ ! -f "$B/qemu-fuzz/build.ninja" ]; then
		echo "bisect: no build/qemu-fuzz (make qemu-fuzz): fuzz targets not built"
	elif [ "$1" = "$(npatches qemu)" ] ||
	     grep -q '^+++ b/tests/qtest/fuzz/' "$(patchfile qemu "$1")"; then
		ninja -C "$B/qemu-fuzz" -j"$JOBS" qemu-fuzz-x86_64 || return 1
	fi
}

build_linux() {
	src=$B/src/linux
	kmake=$KMAKE
	cc=${kmake#*CC=}
	cc=${cc%% *}
	# the uAPI header as userspace sees it: installed with the tree's
	# other uAPI headers (make headers), compiled on its own
	if [ -f "$src/include/uapi/rdma/qroce-abi.h" ]; then
		# shellcheck disable=SC2086
		make -s -C "$src" $kmake headers || return 1
		printf '#include <rdma/qroce-abi.h>\n#include <rdma/ib_user_ioctl_verbs.h>\nint main(void) { return RDMA_DRIVER_QROCE; }\n' |
			"$cc" -Wall -Werror -fsyntax-only -I"$src/usr/include" -x c - || return 1
	fi
	if ls "$src"/include/linux/qroce/*.h >/dev/null 2>&1; then
		h=$B/series/hdrcheck
		rm -rf "$h"
		mkdir -p "$h"
		echo 'obj-m += qroce_hdrcheck.o' >"$h/Makefile"
		{
			for f in "$src"/include/linux/qroce/*.h; do
				echo "#include <linux/qroce/$(basename "$f")>"
			done
			echo '#include <linux/module.h>'
			echo 'MODULE_DESCRIPTION("the headers of include/linux/qroce, compiled");'
			echo 'MODULE_LICENSE("GPL");'
		} >"$h/qroce_hdrcheck.c"
		# shellcheck disable=SC2086
		make -s -C "$src" $kmake -j"$JOBS" M="$h" W=1 modules || return 1
	fi
	for d in drivers/net/ethernet/qroce drivers/infiniband/hw/qroce; do
		[ -f "$src/$d/Makefile" ] || continue
		# shellcheck disable=SC2086
		make -s -C "$src" $kmake -j"$JOBS" M="$d" W=1 modules || return 1
	done
}

build_rdma_core() {
	ninja -C "$B/rdma-core" -j"$JOBS"
}

restore() {
	for t in $TREES; do
		sh "$TOP/scripts/series.sh" apply "$t" "$B/src/$t" >/dev/null 2>&1 || true
	done
	[ ! -f "$B/src/qemu/configs/devices/x86_64-softmmu/qroce.mak" ] ||
		cmp -s "$TOP/qemu-device/configs/devices/x86_64-softmmu/qroce.mak" \
			"$B/src/qemu/configs/devices/x86_64-softmmu/qroce.mak" ||
		cp "$TOP/qemu-device/configs/devices/x86_64-softmmu/qroce.mak" \
			"$B/src/qemu/configs/devices/x86_64-softmmu/qroce.mak"
}

TREES=${*:-qemu linux rdma-core}
for t in $TREES; do
	case $t in
	qemu) [ -f "$B/qemu/build.ninja" ] || { echo "bisect: build/qemu missing: run 'make qemu'" >&2; exit 2; } ;;
	linux) [ -f "$B/src/linux/.config" ] || { echo "bisect: build/src/linux missing: run 'make driver'" >&2; exit 2; } ;;
	rdma-core) [ -f "$B/rdma-core/build.ninja" ] || { echo "bisect: build/rdma-core missing: run 'make rdma-core'" >&2; exit 2; } ;;
	*) echo "usage: series-bisect.sh [qemu|linux|rdma-core]..." >&2; exit 2 ;;
	esac
done
# bkey TREE: the hash the cache records a bisected series under
bkey() {
	{
		cat "$B/patches/$1"/*.patch "$0"
		gcc --version | head -n 1
		[ "$1" != linux ] || cat "$B/kernel/key"
	} | sha256sum | cut -c1-16
}
mkdir -p "$CACHE/bisect"
trap restore EXIT
for t in $TREES; do
	sh "$TOP/scripts/series.sh" export "$t" >/dev/null
	n=$(npatches "$t")
	done_key=$CACHE/bisect/$t-$(bkey "$t")
	if [ -f "$done_key" ]; then
		say "ok   $t 1-$n: every prefix built before ($done_key)"
		ok=$((ok + n))
		continue
	fi
	[ "$t" != linux ] || KMAKE=$(sh "$TOP/scripts/linux-prepare.sh" "$B/src/linux" 2>/dev/null)
	bad0=$bad
	k=1
	while [ "$k" -le "$n" ]; do
		step "$t" "$k"
		k=$((k + 1))
	done
	[ "$bad" -ne "$bad0" ] || touch "$done_key"
done
restore
trap - EXIT
# the trees at the full series, built again (what depends on a file the
# prefixes changed)
for t in $TREES; do
	case $t in
	qemu) ninja -C "$B/qemu" -j"$JOBS" qemu-system-x86_64 tests/qtest/qos-test >/dev/null ;;
	rdma-core) ninja -C "$B/rdma-core" -j"$JOBS" >/dev/null ;;
	linux) ;;
	esac
done
say "$ok built, $bad failed"
[ "$bad" -eq 0 ]
