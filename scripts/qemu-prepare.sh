#!/bin/sh
# Unpack QEMU into $1 (once) and lay qemu-device/ over it.  The overlay is
# symlinks, so editing a file in qemu-device/ needs only an incremental
# ninja run.  Every edit to an upstream file is idempotent.
set -eu
SRC=$1
TOP=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${QROCE_CACHE:-/var/cache/qroce}
TAR=$CACHE/qemu_10.0.13+ds.orig.tar.xz

if [ ! -f "$SRC/.unpacked" ]; then
	[ -f "$TAR" ] || { echo "qemu-prepare: $TAR missing: run 'make deps'" >&2; exit 1; }
	rm -rf "$SRC" "$SRC.tmp"
	mkdir -p "$(dirname "$SRC")"
	mkdir -p "$SRC.tmp"
	tar -xJf "$TAR" -C "$SRC.tmp" --strip-components=1
	mv "$SRC.tmp" "$SRC"
	# Debian stripped the edk2 images; never try to unpack them.
	sed -i "s/unpack_edk2_blobs = bzip2.found()$/unpack_edk2_blobs = bzip2.found() and get_option('install_blobs')/" \
		"$SRC/meson.build"
	touch "$SRC/.unpacked"
fi

link() { # link TARGET LINKNAME
	[ "$(readlink "$2" 2>/dev/null)" = "$1" ] || ln -sfn "$1" "$2"
}
addline() { # addline FILE AFTER-PATTERN LINE (GNU sed keeps the indent after a\)
	grep -qF "$3" "$1" || sed -i "/$2/a\\$3" "$1"
}

link "$TOP/qemu-device/hw/net/qroce" "$SRC/hw/net/qroce"
link "$TOP/qemu-device/configs/devices/x86_64-softmmu/qroce.mak" \
	"$SRC/configs/devices/x86_64-softmmu/qroce.mak"
link "$TOP/qemu-device/tests/qtest/qroce-test.c" "$SRC/tests/qtest/qroce-test.c"
link "$TOP/qemu-device/tests/qtest/libqos/qroce.c" "$SRC/tests/qtest/libqos/qroce.c"
link "$TOP/qemu-device/tests/qtest/libqos/qroce.h" "$SRC/tests/qtest/libqos/qroce.h"

grep -qxF "subdir('qroce')" "$SRC/hw/net/meson.build" ||
	echo "subdir('qroce')" >>"$SRC/hw/net/meson.build"
grep -qxF "source qroce/Kconfig" "$SRC/hw/net/Kconfig" ||
	printf '\nsource qroce/Kconfig\n' >>"$SRC/hw/net/Kconfig"
addline "$SRC/meson.build" "^    'hw\/net',$" "    'hw/net/qroce',"
# the qtests are libqos graph tests: the qroce node in libqos, the tests
# in qos-test (a tree prepared before they were has them as a qtest of
# their own: that line goes)
sed -i "/\['qroce-test'\]/d" "$SRC/tests/qtest/meson.build"
addline "$SRC/tests/qtest/libqos/meson.build" "^        'igb.c',$" "        'qroce.c',"
addline "$SRC/tests/qtest/meson.build" "^qos_test_ss = ss.source_set()$" \
	"qos_test_ss.add(files('qroce-test.c'))"
