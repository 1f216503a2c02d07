#!/bin/sh
# Unpack rdma-core into $1 (once) and apply qroce's rdma-core series to it:
# providers/qroce, kernel-headers/rdma/qroce-abi.h and RDMA_DRIVER_QROCE,
# the CMake, debian/, redhat/ and suse/ entries.
set -eu
SRC=$1
TOP=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${QROCE_CACHE:-/var/cache/qroce}
TAR=$CACHE/rdma-core_65.0.orig.tar.gz

die() { echo "rdma-core-prepare: $*" >&2; exit 1; }

# sync_tree NEW DST: DST's files made NEW's by content; a file that did not
# change keeps its time, so that ninja rebuilds only what did
sync_tree() {
	mkdir -p "$2"
	(cd "$1" && find . ! -type d) | while read -r f; do
		if [ -L "$1/$f" ]; then
			[ -L "$2/$f" ] && [ "$(readlink "$1/$f")" = "$(readlink "$2/$f")" ] && continue
		elif [ ! -L "$2/$f" ] && cmp -s "$1/$f" "$2/$f"; then
			continue
		fi
		mkdir -p "$2/$(dirname "$f")"
		rm -f "$2/$f"
		cp -pP "$1/$f" "$2/$f"
	done
	(cd "$2" && find . ! -type d) | while read -r f; do
		[ -e "$1/$f" ] || [ -L "$1/$f" ] || rm -f "$2/$f"
	done
}

# RDMA_CORE_SRC (make RDMA_CORE_SRC=DIR): a user's rdma-core tree, its
# working files as they are (not .git, not build/), copied and the series
# applied to the copy with patch(1), unless the tree has providers/qroce
# already; then synced into $1
if [ -n "${RDMA_CORE_SRC:-}" ]; then
	U=$RDMA_CORE_SRC
	[ -f "$U/CMakeLists.txt" ] && [ -d "$U/providers" ] ||
		die "RDMA_CORE_SRC=$U: not an rdma-core tree (no CMakeLists.txt and providers/)"
	N=$SRC.new
	rm -rf "$N"
	mkdir -p "$N"
	tar -C "$U" --exclude=./.git --exclude=./build -cf - . | tar -C "$N" -xf -
	if [ -d "$N/providers/qroce" ]; then
		echo "rdma-core-prepare: $U has providers/qroce: built as it is" >&2
	else
		sh "$TOP/scripts/series.sh" export rdma-core
		for p in "$TOP"/build/patches/rdma-core/0*.patch; do
			case $p in */0000-cover-letter.patch) continue ;; esac
			(cd "$N" && patch -p1 -s -f --no-backup-if-mismatch -r - <"$p") >"$N.log" 2>&1 ||
				die "RDMA_CORE_SRC=$U: ${p##*/} does not apply: $(head -n 3 "$N.log" | tr '\n' ' ')"
		done
		echo "rdma-core-prepare: $U with the rdma-core series applied" >&2
	fi
	sync_tree "$N" "$SRC"
	rm -rf "$N" "$N.log"
	exit 0
fi

# unpacked again when the pinned tarball changes; the builds and installs
# of the old version (build/rdma-core*, see the Makefile) go with it, so
# that none of its libraries reaches the guest images
if [ "$(cat "$SRC/.unpacked" 2>/dev/null)" != "${TAR##*/}" ]; then
	[ -f "$TAR" ] || die "$TAR missing: run 'make deps'"
	B=$TOP/build
	rm -rf "$SRC" "$SRC.tmp" "$B/rdma-core" "$B/rdma-core-install" \
		"$B/rdma-core-py" "$B/rdma-core-py-install"
	mkdir -p "$(dirname "$SRC")"
	mkdir -p "$SRC.tmp"
	echo "rdma-core-prepare: unpacking ${TAR##*/}" >&2
	tar -xzf "$TAR" -C "$SRC.tmp" --strip-components=1
	echo "${TAR##*/}" >"$SRC.tmp/.unpacked"
	mv "$SRC.tmp" "$SRC"
fi

# the provider, its kernel headers and its packaging: the rdma-core series
# of scripts/series.sh (make patches), applied with git am to the
# pristine files and copied in where they changed
sh "$TOP/scripts/series.sh" export rdma-core
sh "$TOP/scripts/series.sh" apply rdma-core "$SRC"
