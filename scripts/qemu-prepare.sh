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
link "$TOP/qemu-device/tests/qtest/libqos/qroce.c" "$SRC/tests/qtest/libqos/qroce.c"
link "$TOP/qemu-device/tests/qtest/libqos/qroce.h" "$SRC/tests/qtest/libqos/qroce.h"

grep -qxF "subdir('qroce')" "$SRC/hw/net/meson.build" ||
	echo "subdir('qroce')" >>"$SRC/hw/net/meson.build"
grep -qxF "source qroce/Kconfig" "$SRC/hw/net/Kconfig" ||
	printf '\nsource qroce/Kconfig\n' >>"$SRC/hw/net/Kconfig"
addline "$SRC/meson.build" "^    'hw\/net',$" "    'hw/net/qroce',"
# the qtests are libqos graph tests: the qroce driver node in libqos, the
# tests (qroce-*-test.c, one file an area) in qos-test.  A tree prepared
# before has them as a qtest of their own, or in one file: those lines go.
sed -i "/\['qroce-test'\]/d" "$SRC/tests/qtest/meson.build"
addline "$SRC/tests/qtest/libqos/meson.build" "^        'igb.c',$" "        'qroce.c',"
# the driver's peer builds and parses frames with the device's wire codec,
# compiled on its own (no QEMU headers): its objects join libqos's, at the
# end of libqos' meson.build.  Not in a fuzzing build, whose qemu-fuzz
# links libqos with the device, and so with the device's own copy.
libqos_meson=$SRC/tests/qtest/libqos/meson.build
wire="qroce_wire = static_library('qroce-wire', meson.project_source_root() / 'hw/net/qroce/roce_wire.c', c_args: '-DROCE_WIRE_STANDALONE', build_by_default: false)"
wdep="qos = declare_dependency(dependencies: qos, objects: get_option('fuzzing') ? [] : qroce_wire.extract_all_objects(recursive: false))"
if [ "$(tail -2 "$libqos_meson")" != "$(printf '%s\n%s' "$wire" "$wdep")" ]; then
	sed -i "/^qroce_wire = /d; /^qos = declare_dependency(dependencies: qos, /d" \
		"$libqos_meson"
	printf '%s\n%s\n' "$wire" "$wdep" >>"$libqos_meson"
fi
for l in "$SRC"/tests/qtest/qroce-*test.c; do
	[ -e "$l" ] || rm -f "$l"       # a link to a file that has gone
done
files=
for f in "$TOP"/qemu-device/tests/qtest/qroce-*-test.c; do
	link "$f" "$SRC/tests/qtest/${f##*/}"
	files="$files${files:+, }'${f##*/}'"
done
want="qos_test_ss.add(files($files))"
if ! grep -qxF "$want" "$SRC/tests/qtest/meson.build"; then
	sed -i "/^qos_test_ss.add(files('qroce-/d" "$SRC/tests/qtest/meson.build"
	addline "$SRC/tests/qtest/meson.build" "^qos_test_ss = ss.source_set()$" "$want"
fi
