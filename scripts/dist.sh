#!/bin/sh
# make dist: a bundle of what qroce-vm needs to boot guests, built once and
# used where nothing is built (a CI job that caches it, a machine without
# the toolchain):
#
#   qroce-vm, tests/lib/ (the harness it sources)
#   build/qemu/qemu-system-x86_64 and its firmware (qemu-bundle/, where
#     the binary looks first: SeaBIOS and the option ROMs, copied)
#   build/kernel/ (the guests' kernel and its release), build/driver/
#     (the modules, also inside the image), build/initramfs.cpio.gz (the
#     busybox image: rdma-core, perftest, the modules), build/tools/qmp
#   build/debs/ (the packages of make debs) when they were built and
#     DIST_DEBS is not 0, and
#     build/debian/ (the Debian guest of make image-debian) when it was
#   RUNTIME-PACKAGES: the Debian 12 packages the binaries link against,
#     found with ldd and dpkg -S here; MANIFEST: every file's sha256;
#     VERSIONS: the pinned versions and the commit
#
# Out: build/dist/qroce-VERSION.tar.gz, VERSION from git describe (the
# tree's hash if it has no git); its sha256 beside it.  Nothing in it
# names this machine: the paths are the tree's own.
#
#   sh scripts/dist.sh [OUT_DIR]
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
B=$TOP/build
OUT=${1:-$B/dist}

die() { echo "dist: $*" >&2; exit 1; }

cd "$TOP"
KVER=$(cat "$B/kernel/release" 2>/dev/null) || die "no build/kernel/release: run 'make'"
for f in "$B/qemu/qemu-system-x86_64" "$B/kernel/boot/vmlinuz-$KVER" \
	"$B/initramfs.cpio.gz" "$B/tools/qmp" "$B/driver/qroce_en.ko" \
	"$B/driver/qroce_ib.ko"; do
	[ -f "$f" ] || die "$f missing: run 'make'"
done
VER=$(git describe --always --dirty 2>/dev/null || echo unversioned)
NAME=qroce-$VER
ST=$OUT/$NAME
rm -rf "$ST"
mkdir -p "$ST/build/qemu/qemu-bundle/usr/local/share/qemu" "$ST/build/kernel/boot" \
	"$ST/build/driver" "$ST/build/tools" "$ST/tests/lib"

cp qroce-vm "$ST/"
cp tests/lib/*.sh "$ST/tests/lib/"
cp "$B/qemu/qemu-system-x86_64" "$ST/build/qemu/"
# the firmware: the build's links into Debian's packages, copied (-L)
for f in "$B"/qemu/qemu-bundle/usr/local/share/qemu/*; do
	[ -f "$f" ] || continue  # not keymaps/ (no display), nor a link to nothing
	cp -RL "$f" "$ST/build/qemu/qemu-bundle/usr/local/share/qemu/"
done
cp "$B/kernel/release" "$ST/build/kernel/"
cp "$B/kernel/boot/vmlinuz-$KVER" "$ST/build/kernel/boot/"
cp "$B"/driver/*.ko "$ST/build/driver/"
cp "$B/initramfs.cpio.gz" "$ST/build/"
cp "$B/tools/qmp" "$ST/build/tools/"
if [ "${DIST_DEBS:-1}" != 0 ] && ls "$B"/debs/*.deb >/dev/null 2>&1; then
	mkdir -p "$ST/build/debs"
	for f in "$B"/debs/*.deb; do
		case $f in *-dbgsym_*) continue ;; esac
		cp "$f" "$ST/build/debs/"
	done
fi
if [ -f "$B/debian/disk.raw" ]; then
	mkdir -p "$ST/build/debian"
	cp --sparse=always "$B"/debian/disk.raw "$ST/build/debian/"
	for f in "$B"/debian/vmlinuz "$B"/debian/initrd.img; do
		[ -f "$f" ] && cp -L "$f" "$ST/build/debian/"
	done
fi

# the Debian packages that hold the libraries the two binaries load
for f in "$ST/build/qemu/qemu-system-x86_64" "$ST/build/tools/qmp"; do
	ldd "$f" | awk '/=>/ && $3 ~ /^\// { print $3 } /^\t\/lib/ { print $1 }'
done | sort -u | while read -r lib; do
	# /lib is a link to /usr/lib on Debian 12: ask for either path
	dpkg -S "$lib" 2>/dev/null || dpkg -S "/usr$lib" 2>/dev/null ||
		dpkg -S "$(readlink -f "$lib")" 2>/dev/null || echo "?: $lib"
done | sed 's/:.*//; s/,.*//' | sort -u >"$ST/RUNTIME-PACKAGES.libs"
! grep -q '^?' "$ST/RUNTIME-PACKAGES.libs" ||
	die "a library of no Debian package: $(grep '^?' "$ST/RUNTIME-PACKAGES.libs")"
{
	echo "# Debian 12 packages qroce-vm needs at run time (apt-get install"
	echo "# --no-install-recommends), one per line: the libraries"
	echo "# qemu-system-x86_64 and build/tools/qmp load, then the tools the"
	echo "# harness runs (iproute2: ip and bridge for 3 guests and more;"
	echo "# tmux: qroce-vm's console windows, optional; qemu-utils: qemu-img"
	echo "# for the Debian guest's overlay)"
	sed 's/:amd64$//' "$ST/RUNTIME-PACKAGES.libs"
	printf '%s\n' iproute2 tmux qemu-utils
} >"$ST/RUNTIME-PACKAGES"
rm "$ST/RUNTIME-PACKAGES.libs"

{
	echo "qroce $VER"
	echo "commit $(git rev-parse HEAD 2>/dev/null || echo none)"
	echo "guest kernel $KVER"
	"$ST/build/qemu/qemu-system-x86_64" --version | head -1
	grep -E '^[A-Z0-9_]+_(TAR|SHA|VER|DEB)=' scripts/deps.sh | sed 's/^/pinned /'
} >"$ST/VERSIONS"

cat >"$ST/README" <<'EOF'
qroce bundle: two or more guests with the qroce RDMA NIC, no build needed.

  apt-get install --no-install-recommends $(grep -v '^#' RUNTIME-PACKAGES)
  ./qroce-vm --exec '2: ibv_rc_pingpong -g $QR_GID &' \
             --exec '1: ibv_rc_pingpong -g $QR_GID $QR_ADDR_2'

./qroce-vm --help says the rest.  Guests run under KVM when /dev/kvm
works and under TCG otherwise (--accel, QR_ACCEL).  build/debs holds
Debian 13 packages (rdma-core with the qroce provider, qroce-dkms) when
the bundle was made after make debs.  MANIFEST lists every file's sha256.
EOF

(cd "$ST" && find . -type f ! -name MANIFEST | sort | xargs sha256sum >MANIFEST)
rm -f "$OUT/$NAME.tar.gz"
tar -C "$OUT" --sparse --owner=0 --group=0 -czf "$OUT/$NAME.tar.gz.part" "$NAME"
mv "$OUT/$NAME.tar.gz.part" "$OUT/$NAME.tar.gz"
(cd "$OUT" && sha256sum "$NAME.tar.gz" >"$NAME.tar.gz.sha256")
rm -rf "$ST"
ln -sf "$NAME.tar.gz" "$OUT/qroce.tar.gz"
echo "dist: $OUT/$NAME.tar.gz ($(du -h "$OUT/$NAME.tar.gz" | cut -f1))"
