#!/bin/sh
# The QEMU tree of 'make fuzz': qroce's fuzz targets are part of its QEMU
# series (tests/qtest/fuzz/, applied by scripts/qemu-prepare.sh), and none
# of them changes a build without --enable-fuzzing
# (tests/qtest/fuzz/meson.build stops at its first line when fuzzing is off;
# generic_fuzz_configs.h is compiled only by fuzzers).
#
#   generic-fuzz-qroce   QEMU's generic fuzzer over qroce's BARs, PCI config
#                        space and every DMA read the device makes
#   qroce-frames         a set-up device (command queue, EQ, CQ, PD, MR, QPs
#                        of each type in RTS, an SRQ, the Ethernet rings) fed
#                        the fuzzer's bytes as frames from the wire
#   qroce-migstream      the fuzzer's bytes loaded as the device's migration
#                        section into a reset device, which is then driven
#                        (doorbells, frames, the clock, destroy commands)
#                        and reset
set -eu
exec sh "$(dirname "$0")/qemu-prepare.sh" "$1"
