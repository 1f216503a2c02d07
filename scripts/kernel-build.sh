#!/bin/sh
# The guest kernel, Linux 7.x, built here: Debian's kernels of that line
# are built with gcc 14, and modules this machine's gcc 12 builds would
# not match them (the compiler's symbols are part of the configuration),
# so the guests boot a kernel built with the same compiler as the driver.
#
# Source: Debian's linux-source-7.x tarball (make deps, pinned); config:
# x86_64_defconfig plus guest-images/linux-guest.config, every line of
# which is checked in the result.  The build is cached under
# $CACHE/kernel/linux-VERSION-KEY/, KEY a hash of the source version, the
# fragment, the compiler and this script's build recipe, so a fresh
# machine builds it once (docs/harness.md gives the time) and a change
# to the fragment builds a new one beside it.
#
# LINUX=6.12 (the LTS line) takes Debian's bookworm-backports kernel as
# packaged instead (make deps downloads it; its headers are installed).
#
#   [LINUX=7.3|6.12] sh scripts/kernel-build.sh OUT
#       puts the guest kernel into OUT (nothing to do if it is there):
#       OUT/boot/vmlinuz-RELEASE, OUT/lib/modules/RELEASE, OUT/release,
#       OUT/build (the tree the driver's modules build against: its
#       .config, Module.symvers and generated headers)
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${QROCE_CACHE:-/var/cache/qroce}
OUT=$1
FRAG=$TOP/guest-images/linux-guest.config
# bump when the steps below change what lands in the cache
RECIPE=1

die() { echo "kernel-build: $*" >&2; exit 1; }

case ${LINUX:-7.3} in
7.3) ;;
6.12)
	[ -f "$CACHE/kernel-version" ] || die "$CACHE/kernel-version missing: run 'make deps'"
	rel=$(cat "$CACHE/kernel-version")
	[ "$(cat "$OUT/key" 2>/dev/null)" != "debian $rel" ] || exit 0
	hdr=/usr/src/linux-headers-$rel
	[ -f "$CACHE/kernel-$rel.deb" ] && [ -f "$hdr/Module.symvers" ] ||
		die "Debian's kernel $rel or its headers missing: run 'make deps'"
	rm -rf "$OUT"
	mkdir -p "$OUT"
	dpkg-deb -x "$CACHE/kernel-$rel.deb" "$OUT"
	/sbin/depmod -b "$OUT" "$rel"
	echo "$rel" >"$OUT/release"
	ln -s "$hdr" "$OUT/build"
	echo "debian $rel" >"$OUT/key"
	exit 0 ;;
*)
	die "LINUX must be 7.3 or 6.12, not '$LINUX'" ;;
esac

[ -f "$CACHE/linux7-source-version" ] ||
	die "$CACHE/linux7-source-version missing: run 'make deps'"
LVER=$(cat "$CACHE/linux7-source-version")
TAR=$CACHE/linux-source-$LVER.tar.xz
[ -f "$TAR" ] || die "$TAR missing: run 'make deps'"
command -v bc >/dev/null && [ -f /usr/include/libelf.h ] ||
	die "bc and libelf-dev are needed: run 'make deps'"
UPV=${LVER%%-*}
KEY=$( { echo "$LVER recipe $RECIPE"; gcc --version | head -1; cat "$FRAG"; } |
	sha256sum | cut -c1-12)
DIR=$CACHE/kernel/linux-$UPV-$KEY
SRC=$DIR/src
KMAKE="CC=gcc RUSTC=false"

# each step is skipped when its result is there, so an interrupted build
# goes on where it stopped
if [ ! -f "$DIR/.done" ]; then
	start=$(date +%s)
	if [ ! -f "$DIR/.unpacked" ]; then
		rm -rf "$DIR"
		mkdir -p "$SRC"
		echo "kernel-build: unpacking Linux $LVER into $DIR" >&2
		tar -xJf "$TAR" -C "$SRC" --strip-components=1 || die "cannot unpack $TAR"
		touch "$DIR/.unpacked"
	fi
	if [ ! -f "$DIR/.configured" ]; then
		# shellcheck disable=SC2086
		make -s -C "$SRC" $KMAKE x86_64_defconfig >&2 || die "defconfig failed"
		# the later assignment of a symbol wins
		cat "$FRAG" >>"$SRC/.config"
		# shellcheck disable=SC2086
		make -s -C "$SRC" $KMAKE olddefconfig >/dev/null 2>&1 || die "olddefconfig failed"
		bad=$(grep -E '^(CONFIG_|# CONFIG_)' "$FRAG" | while read -r l; do
			case $l in
			"# CONFIG_"*)
				s=${l#\# }; s=${s%% *}
				grep -qE "^$s=[ym]" "$SRC/.config" && echo "$l" ;;
			*)
				grep -qxF "$l" "$SRC/.config" || echo "$l" ;;
			esac
		done || :)
		[ -z "$bad" ] || die "the configuration does not hold these lines of $FRAG:
$bad"
		touch "$DIR/.configured"
	fi
	echo "kernel-build: building (make -j${JOBS:-2} bzImage modules)" >&2
	# shellcheck disable=SC2086
	nice make -s -C "$SRC" $KMAKE -j"${JOBS:-2}" bzImage modules >"$DIR/build.log" 2>&1 ||
		{ tail -n 30 "$DIR/build.log" >&2; die "the build failed ($DIR/build.log)"; }
	rel=$(make -s -C "$SRC" $KMAKE kernelrelease)
	mkdir -p "$DIR/out/boot"
	# shellcheck disable=SC2086
	make -s -C "$SRC" $KMAKE INSTALL_MOD_PATH="$DIR/out" INSTALL_MOD_STRIP=1 \
		modules_install >&2 || die "modules_install failed"
	rm -f "$DIR/out/lib/modules/$rel/build" "$DIR/out/lib/modules/$rel/source"
	cp "$SRC/arch/x86/boot/bzImage" "$DIR/out/boot/vmlinuz-$rel"
	echo "$rel" >"$DIR/out/release"
	# the objects are not needed for external modules: the tree keeps
	# its configuration, generated headers, tools and Module.symvers
	find "$SRC" -name '*.o' ! -path '*/scripts/*' ! -path '*/tools/*' -delete
	echo "$(( $(date +%s) - start ))" >"$DIR/build-seconds"
	touch "$DIR/.done"
	echo "kernel-build: Linux $rel built in $(cat "$DIR/build-seconds") s" >&2
fi

[ "$(cat "$OUT/key" 2>/dev/null)" != "$DIR" ] || exit 0
rel=$(cat "$DIR/out/release")
rm -rf "$OUT"
mkdir -p "$OUT"
cp -a "$DIR/out/boot" "$DIR/out/lib" "$OUT/"
echo "$rel" >"$OUT/release"
ln -s "$SRC" "$OUT/build"
/sbin/depmod -b "$OUT" "$rel"
echo "$DIR" >"$OUT/key"
