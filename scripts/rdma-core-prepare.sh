#!/bin/sh
# Unpack rdma-core into $1 (once) and apply qroce's rdma-core series to it:
# providers/qroce, kernel-headers/rdma/qroce-abi.h and RDMA_DRIVER_QROCE,
# the CMake, debian/, redhat/ and suse/ entries.
set -eu
SRC=$1
TOP=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${QROCE_CACHE:-/var/cache/qroce}
TAR=$CACHE/rdma-core_56.1.orig.tar.gz

if [ ! -f "$SRC/.unpacked" ]; then
	[ -f "$TAR" ] || { echo "rdma-core-prepare: $TAR missing: run 'make deps'" >&2; exit 1; }
	rm -rf "$SRC" "$SRC.tmp"
	mkdir -p "$(dirname "$SRC")"
	mkdir -p "$SRC.tmp"
	tar -xzf "$TAR" -C "$SRC.tmp" --strip-components=1
	mv "$SRC.tmp" "$SRC"
	touch "$SRC/.unpacked"
fi

# the provider, its kernel headers and its packaging: the rdma-core series
# of scripts/series.sh (make patches), applied with git am to the
# pristine files and copied in where they changed
sh "$TOP/scripts/series.sh" export rdma-core
sh "$TOP/scripts/series.sh" apply rdma-core "$SRC"
