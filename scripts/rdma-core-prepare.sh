#!/bin/sh
# Unpack rdma-core into $1 (once) and add the qroce provider: providers/qroce
# and kernel-headers/rdma/qroce-abi.h are symlinks into this tree.
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

link() {
	[ "$(readlink "$2" 2>/dev/null)" = "$1" ] || ln -sfn "$1" "$2"
}
link "$TOP/rdma-core-provider" "$SRC/providers/qroce"
link "$TOP/include/qroce-abi.h" "$SRC/kernel-headers/rdma/qroce-abi.h"

# enum rdma_driver_id gains qroce's value, as the kernel series adds it
grep -qF 'RDMA_DRIVER_QROCE' "$SRC/kernel-headers/rdma/ib_user_ioctl_verbs.h" ||
	sed -i 's|^\tRDMA_DRIVER_MANA,$|\tRDMA_DRIVER_MANA,\n\tRDMA_DRIVER_QROCE,|' \
		"$SRC/kernel-headers/rdma/ib_user_ioctl_verbs.h"
grep -qxF 'add_subdirectory(providers/qroce)' "$SRC/CMakeLists.txt" ||
	sed -i '/^add_subdirectory(providers\/erdma)$/a add_subdirectory(providers/qroce)' "$SRC/CMakeLists.txt"
# Both header lists in kernel-headers/CMakeLists.txt name erdma-abi.h.
grep -qF 'rdma/qroce-abi.h' "$SRC/kernel-headers/CMakeLists.txt" ||
	sed -i 's|^  rdma/erdma-abi.h$|  rdma/erdma-abi.h\n  rdma/qroce-abi.h|' "$SRC/kernel-headers/CMakeLists.txt"
