#!/bin/sh
# Lay qroce's fuzz targets over the unpacked QEMU tree in $1 (after
# scripts/qemu-prepare.sh).  Used by 'make fuzz' only; every edit to an
# upstream file is idempotent, and none changes a build without
# --enable-fuzzing (tests/qtest/fuzz/meson.build stops at its first line
# when fuzzing is off; generic_fuzz_configs.h is compiled only by fuzzers).
#
#   generic-fuzz-qroce   QEMU's generic fuzzer over qroce's BARs, PCI config
#                        space and every DMA read the device makes
#   qroce-frames         a set-up device (command queue, EQ, CQ, PD, MR, QPs
#                        of each type in RTS, an SRQ, the Ethernet rings) fed
#                        the fuzzer's bytes as frames from the wire
set -eu
SRC=$1
TOP=$(cd "$(dirname "$0")/.." && pwd)
F=$SRC/tests/qtest/fuzz

sh "$TOP/scripts/qemu-prepare.sh" "$SRC"

link() { # link TARGET LINKNAME
	[ "$(readlink "$2" 2>/dev/null)" = "$1" ] || ln -sfn "$1" "$2"
}
addline() { # addline FILE AFTER-PATTERN LINE (GNU sed keeps the indent after a\)
	grep -qF "$3" "$1" || sed -i "/$2/a\\$3" "$1"
}

link "$TOP/qemu-device/tests/qtest/fuzz/qroce_frames_fuzz.c" "$F/qroce_frames_fuzz.c"
addline "$F/meson.build" "^specific_fuzz_ss.add(files('generic_fuzz.c'))$" \
	"specific_fuzz_ss.add(when: 'CONFIG_QROCE', if_true: files('qroce_frames_fuzz.c'))"

# generic-fuzz-qroce: the device on a hub port with no other port (frames
# to other MACs are dropped; frames to its own MAC loop back inside the
# device, so two QPs of the fuzzed device talk to each other).
grep -qF '.name = "qroce",' "$F/generic_fuzz_configs.h" ||
	sed -i '/^const generic_fuzz_config predefined_configs\[\] = {$/a\
    {\
        .name = "qroce",\
        .args = "-machine q35 -nodefaults "\
        "-device qroce,netdev=n0,mac=52:54:00:12:34:56 "\
        "-netdev hubport,id=n0,hubid=0",\
        .objects = "qroce*",\
    },' "$F/generic_fuzz_configs.h"
