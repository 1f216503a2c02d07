#!/bin/sh
# Unpack rdma-core into $1 (once) and apply qroce's rdma-core series to it:
# providers/qroce, kernel-headers/rdma/qroce-abi.h and RDMA_DRIVER_QROCE,
# the CMake, debian/, redhat/ and suse/ entries.
set -eu
SRC=$1
TOP=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${QROCE_CACHE:-/var/cache/qroce}
TAR=$CACHE/rdma-core_65.0.orig.tar.gz

# unpacked again when the pinned tarball changes; the builds and installs
# of the old version (build/rdma-core*, see the Makefile) go with it, so
# that none of its libraries reaches the guest images
if [ "$(cat "$SRC/.unpacked" 2>/dev/null)" != "${TAR##*/}" ]; then
	[ -f "$TAR" ] || { echo "rdma-core-prepare: $TAR missing: run 'make deps'" >&2; exit 1; }
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
