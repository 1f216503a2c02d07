#!/bin/sh
# Unpack QEMU into $1 (once) and apply qroce's QEMU series to it
# (scripts/series.sh, make patches): the device, its header and spec, the
# libqos driver, the qtests and the fuzz targets.  The series is applied
# with git am to the pristine files, and a file is copied into the tree
# only when its content changed, so an edit in qemu-device/ needs only an
# incremental ninja run.
set -eu
SRC=$1
TOP=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${QROCE_CACHE:-/var/cache/qroce}
TAR=$CACHE/qemu_11.1.1+ds.orig.tar.xz

# unpacked again when the pinned tarball changes
if [ "$(cat "$SRC/.unpacked" 2>/dev/null)" != "${TAR##*/}" ]; then
	[ -f "$TAR" ] || { echo "qemu-prepare: $TAR missing: run 'make deps'" >&2; exit 1; }
	rm -rf "$SRC" "$SRC.tmp"
	mkdir -p "$(dirname "$SRC")"
	mkdir -p "$SRC.tmp"
	tar -xJf "$TAR" -C "$SRC.tmp" --strip-components=1
	mv "$SRC.tmp" "$SRC"
	# Debian stripped the edk2 images; never try to unpack them.
	sed -i "s/unpack_edk2_blobs = bzip2.found()$/unpack_edk2_blobs = bzip2.found() and get_option('install_blobs')/" \
		"$SRC/meson.build"
	# Nor the prebuilt device trees: they are built with dtc if it is
	# there, and without it installed only when blobs are.
	sed -i "s/^else$/elif get_option('install_blobs')/" "$SRC/pc-bios/dtb/meson.build"
	echo "${TAR##*/}" >"$SRC/.unpacked"
fi

sh "$TOP/scripts/series.sh" export qemu
sh "$TOP/scripts/series.sh" apply qemu "$SRC"

# the one file outside the series: this build's device list
# (--with-devices-x86_64=qroce)
f=configs/devices/x86_64-softmmu/qroce.mak
[ ! -L "$SRC/$f" ] || rm -f "$SRC/$f"
cmp -s "$TOP/qemu-device/$f" "$SRC/$f" || cp "$TOP/qemu-device/$f" "$SRC/$f"
