#!/bin/sh
# The kernel tree the driver is built in: the guest kernel's own source
# (LINUX=7.3: Debian's linux-source-7.3, the kernel scripts/kernel-build.sh
# builds; LINUX=6.12: Debian's linux-source-6.12 of the packaged kernel's
# version), unpacked into $1 (once), with qroce's Linux series applied
# (scripts/series.sh), configured as the guest kernel (build/kernel/build's
# .config) with the two qroce modules added, and made ready for external
# modules (make modules_prepare).  The Makefile then builds
# drivers/net/ethernet/qroce and drivers/infiniband/hw/qroce with M=.
#
# Modules built here load into the guest kernel only if the configuration
# is that kernel's: the script stops if olddefconfig changed anything but
# the qroce symbols, and the symbol versions come from that kernel's
# Module.symvers.
#
#   [LINUX=7.3|6.12] sh scripts/linux-prepare.sh SRC
#                         prints the make variables to build in SRC (KMAKE)
set -eu
SRC=$1
TOP=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${QROCE_CACHE:-/var/cache/qroce}
KERNEL=$TOP/build/kernel

die() { echo "linux-prepare: $*" >&2; exit 1; }

case ${LINUX:-7.3} in
7.3) vfile=linux7-source-version ;;
6.12) vfile=linux-source-version ;;
*) die "LINUX must be 7.3 or 6.12, not '$LINUX'" ;;
esac
[ -f "$CACHE/$vfile" ] || die "$CACHE/$vfile missing: run 'make deps'"
[ -f "$KERNEL/release" ] || die "$KERNEL/release missing: run 'make kernel'"
KVER=$(cat "$KERNEL/release")
LVER=$(cat "$CACHE/$vfile")
TAR=$CACHE/linux-source-$LVER.tar.xz
HDR=$(readlink -f "$KERNEL/build")
[ -f "$TAR" ] || die "$TAR missing: run 'make deps'"
[ -f "$HDR/.config" ] && [ -f "$HDR/Module.symvers" ] ||
	die "$HDR (.config, Module.symvers) missing: run 'make kernel'"
# the compiler the kernel was built with (its configuration names it)
CC=$(sed -n 's/^CONFIG_CC_VERSION_TEXT="\([^ ]*\) .*/\1/p' "$HDR/.config")
command -v "$CC" >/dev/null 2>&1 || die "$CC (the kernel's compiler) missing: run 'make deps'"
# no Rust: Debian's kernel has none, and a host rustc would change the
# configuration's toolchain symbols
KMAKE="KERNELRELEASE=$KVER CC=$CC RUSTC=false"

if [ "$(cat "$SRC/.unpacked" 2>/dev/null)" != "$LVER" ]; then
	rm -rf "$SRC" "$SRC.tmp"
	mkdir -p "$SRC.tmp"
	echo "linux-prepare: unpacking linux-source $LVER" >&2
	tar -xJf "$TAR" -C "$SRC.tmp" --strip-components=1 ||
		die "cannot unpack $TAR"
	echo "$LVER" >"$SRC.tmp/.unpacked"
	mv "$SRC.tmp" "$SRC"
fi

sh "$TOP/scripts/series.sh" export linux >&2
sh "$TOP/scripts/series.sh" apply linux "$SRC" >&2

# the guest kernel's configuration plus the qroce symbols; anything else olddefconfig
# changes would make modules the guest kernel refuses or misreads
cfg=$SRC/.config
want=$SRC/.config.qroce
{
	cat "$HDR/.config"
	echo CONFIG_NET_VENDOR_QROCE=y
	echo CONFIG_QROCE_EN=m
	echo CONFIG_INFINIBAND_QROCE=m
} >"$want.new"
if ! cmp -s "$want.new" "$want" || [ ! -f "$cfg" ] ||
   [ "$SRC/drivers/net/ethernet/qroce/Kconfig" -nt "$cfg" ] ||
   [ "$SRC/drivers/infiniband/hw/qroce/Kconfig" -nt "$cfg" ]; then
	cp "$want.new" "$cfg"
	# shellcheck disable=SC2086
	make -s -C "$SRC" $KMAKE olddefconfig >&2 || die "olddefconfig failed"
	grep '^CONFIG_' "$HDR/.config" | sort >"$SRC/.config.debian"
	grep '^CONFIG_' "$cfg" | sort >"$SRC/.config.sorted"
	extra=$(comm -13 "$SRC/.config.debian" "$SRC/.config.sorted")
	gone=$(comm -23 "$SRC/.config.debian" "$SRC/.config.sorted")
	rm -f "$SRC/.config.debian" "$SRC/.config.sorted"
	if [ -n "$gone" ] || [ "$(printf '%s\n' "$extra" | sort)" != "$(printf '%s\n' \
		CONFIG_INFINIBAND_QROCE=m CONFIG_NET_VENDOR_QROCE=y CONFIG_QROCE_EN=m | sort)" ]; then
		printf 'added:\n%s\nlost:\n%s\n' "$extra" "$gone" >&2
		rm -f "$cfg"
		die "the configuration differs from the guest kernel's ($HDR/.config)"
	fi
	mv "$want.new" "$want"
else
	rm -f "$want.new"
fi
cmp -s "$HDR/Module.symvers" "$SRC/Module.symvers" || cp "$HDR/Module.symvers" "$SRC/Module.symvers"
# shellcheck disable=SC2086
make -s -C "$SRC" $KMAKE -j"${JOBS:-2}" modules_prepare >&2 || die "modules_prepare failed"
grep -qF "\"$KVER\"" "$SRC/include/generated/utsrelease.h" ||
	die "the tree's release is not $KVER"
echo "$KMAKE"
