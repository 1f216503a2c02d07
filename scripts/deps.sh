#!/bin/sh
# Install what qroce needs to build and test, and fetch the pinned source
# tarballs.  Idempotent: a second run only checks.
#
# The package mirror is never named here: it is read from the machine's own
# apt configuration (the URI serving "bookworm main").
set -eu

CACHE=${QROCE_CACHE:-/var/cache/qroce}
# QEMU 11.1.1: the newest 11.1 whose tarball the archive's pool serves
# (11.1.2 and 11.1.3 are in the Sources indexes but not in the pool); the
# sha256 is the one qemu_11.1.1+ds-1.dsc gives
QEMU_TAR=qemu_11.1.1+ds.orig.tar.xz
QEMU_SHA=0b1376e75dbe3e2fea4e408f8669f88a723f419f36a5b7d74cc6a4cfe07e4f5e
# QEMU 11.1's configure wants the qemu.qmp Python package, which Debian's
# +ds tarball does not carry (no python/wheels/) and bookworm does not
# have: trixie-backports' python3-qemu-qmp (Architecture: all).
QMP_DEB=python3-qemu-qmp_0.0.6-1~bpo13+1_all.deb
QMP_SHA=a6a2432c436c7b2244d2255ce899e6c3907fb671676f8c90844738d271f4572f
RDMA_TAR=rdma-core_65.0.orig.tar.gz
RDMA_SHA=f6ba3d8b2c4aa334c5c883c1ad0772de339011123cff4fb1db32ae7a443fb7ca
# The guests' Linux 7.3 (scripts/kernel-build.sh builds it): Debian's
# linux-source-7.3 binary package of trixie-backports, for the kernel
# tarball it carries (the pool has no linux_7.3.4.orig.tar.xz); sha256
# from trixie-backports' Packages index
L7_VER=7.3.4-1~bpo13+1
L7_DEB=linux-source-7.3_${L7_VER}_all.deb
L7_SHA=703e369ddd4cce971452f5a593ee55df3a5c10c83caf0fa0df039633ed181ee3
RDMA_DEB=rdma-core_65.0-1.debian.tar.xz
RDMA_DEB_SHA=66ec058af7057627356941b85752e3642bd9f405527dcef8f0c9fb92519f8fb8

die() { echo "deps: $*" >&2; exit 1; }

command -v apt-get >/dev/null 2>&1 && command -v dpkg-query >/dev/null 2>&1 ||
	die "apt-get/dpkg not found: qroce builds on Debian 12 (bookworm)"
if [ -r /etc/os-release ] && ! grep -q '^VERSION_CODENAME=bookworm' /etc/os-release; then
	echo "deps: warning: this is not Debian 12 (bookworm); continuing" >&2
fi

SUDO=
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null 2>&1 || die "run as root, or install sudo"
	SUDO=sudo
fi

mirror() {
	apt-get indextargets --format '$(REPO_URI) $(RELEASE) $(COMPONENT)' |
		awk '$2 == "bookworm" && $3 == "main" { print $1; exit }'
}

MIRROR=$(mirror)
if [ -z "$MIRROR" ]; then
	$SUDO apt-get update -q >/dev/null
	MIRROR=$(mirror)
fi
[ -n "$MIRROR" ] || die "no 'bookworm main' source in the apt configuration; this needs Debian 12"
MIRROR=${MIRROR%/}

# bookworm-backports (kernel 6.12, meson 1.7, pycotap) from the same mirror.
# deb822, with the archive keyring named as Debian's own entries name it.
LIST=/etc/apt/sources.list.d/qroce.sources
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
WANT="Types: deb
URIs: $MIRROR
Suites: bookworm-backports
Components: main
Signed-By: $KEYRING

Types: deb-src
URIs: $MIRROR
Suites: bookworm bookworm-backports
Components: main
Signed-By: $KEYRING"
if [ ! -f $LIST ] || [ "$(cat $LIST)" != "$WANT" ]; then
	echo "$WANT" | $SUDO tee $LIST >/dev/null
	$SUDO apt-get update -q >/dev/null
fi

PKGS="build-essential ninja-build pkg-config flex bison xz-utils bzip2 curl ca-certificates
      libglib2.0-dev libpixman-1-dev libslirp-dev zlib1g-dev libfdt-dev python3 python3-venv
      cmake libnl-3-dev libnl-route-3-dev libudev-dev
      busybox-static cpio kmod seabios qemu-system-data perftest iproute2 libpci3 ccache
      tshark sparse nvme-cli ethtool cython3 python3-dev
      libelf-dev dwarves bc libssl-dev pandoc"
BPO_PKGS="meson python3-pycotap linux-image-amd64 linux-headers-amd64"
# make fuzz (sh scripts/deps.sh fuzz): clang with libFuzzer and its sanitizers
[ "${1-}" != fuzz ] || PKGS="$PKGS clang libclang-rt-dev"

missing=
for p in $PKGS; do
	dpkg-query -W -f '${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed' ||
		missing="$missing $p"
done
if [ -n "$missing" ]; then
	echo "deps: installing$missing"
	echo "wireshark-common wireshark-common/install-setuid boolean false" |
		$SUDO debconf-set-selections
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends $missing >/dev/null ||
		die "apt-get install failed for:$missing"
fi

# meson and pycotap come from backports.  The guest kernel's headers are
# installed (to build the module), the image itself is only downloaded.
KVER_PKG=$(apt-cache depends -t bookworm-backports linux-image-amd64 2>/dev/null |
	awk '/Depends: linux-image-[0-9]/ { print $2; exit }')
[ -n "$KVER_PKG" ] || die "cannot resolve linux-image-amd64 in bookworm-backports"
KVER=${KVER_PKG#linux-image-}
KVER=${KVER%-unsigned}
need=
dpkg --compare-versions "$(dpkg-query -W -f '${Version}' meson 2>/dev/null || echo 0)" ge 1.5 || need="$need meson"
dpkg-query -W -f '${Status}\n' python3-pycotap 2>/dev/null | grep -q 'ok installed' || need="$need python3-pycotap"
dpkg-query -W -f '${Status}\n' "linux-headers-$KVER" 2>/dev/null | grep -q 'ok installed' || need="$need linux-headers-$KVER"
if [ -n "$need" ]; then
	echo "deps: installing from bookworm-backports:$need"
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends \
		-t bookworm-backports $need >/dev/null || die "apt-get install failed for:$need"
fi

$SUDO mkdir -p "$CACHE"
[ -w "$CACHE" ] || $SUDO chown "$(id -u)" "$CACHE"

fetch() { # fetch FILE POOL-PATH SHA256
	if [ -f "$CACHE/$1" ] && echo "$3  $CACHE/$1" | sha256sum -c --status; then
		return 0
	fi
	echo "deps: fetching $1"
	curl -fsS -o "$CACHE/$1.part" "$MIRROR/pool/main/$2/$1" || die "download of $1 failed"
	echo "$3  $CACHE/$1.part" | sha256sum -c --status || die "$1: sha256 mismatch"
	mv "$CACHE/$1.part" "$CACHE/$1"
}
fetch $QEMU_TAR q/qemu $QEMU_SHA
fetch $RDMA_TAR r/rdma-core $RDMA_SHA
fetch $RDMA_DEB r/rdma-core $RDMA_DEB_SHA
fetch $QMP_DEB p/python-qemu-qmp $QMP_SHA
if [ ! -f "$CACHE/linux-source-$L7_VER.tar.xz" ]; then
	fetch "$L7_DEB" l/linux $L7_SHA
	tmp=$(mktemp -d)
	dpkg-deb --fsys-tarfile "$CACHE/$L7_DEB" |
		tar -xf - -C "$tmp" ./usr/src/linux-source-7.3.tar.xz ||
		{ rm -rf "$tmp"; die "no kernel tarball in $L7_DEB"; }
	mv "$tmp/usr/src/linux-source-7.3.tar.xz" "$CACHE/linux-source-$L7_VER.tar.xz"
	rm -rf "$tmp" "$CACHE/$L7_DEB"
fi
echo "$L7_VER" >"$CACHE/linux7-source-version"
if ! dpkg-query -W -f '${Status}\n' python3-qemu-qmp 2>/dev/null | grep -q 'ok installed'; then
	echo "deps: installing $QMP_DEB"
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends \
		"$CACHE/$QMP_DEB" >/dev/null || die "apt-get install $QMP_DEB failed"
fi

# Guest kernel image: downloaded, not installed.  Its sha256 is checked by apt.
if [ ! -f "$CACHE/kernel-$KVER.deb" ]; then
	echo "deps: downloading $KVER_PKG"
	tmp=$(mktemp -d)
	chmod 755 "$tmp"	# apt's _apt user downloads into it
	(cd "$tmp" && apt-get download -q "$KVER_PKG/bookworm-backports" >/dev/null) ||
		die "apt-get download $KVER_PKG failed"
	mv "$tmp"/*.deb "$CACHE/kernel-$KVER.deb"
	rmdir "$tmp"
fi

# The kernel tree the driver is built in (scripts/linux-prepare.sh):
# Debian's linux-source-6.12 of the guest kernel's own version (that of its
# headers package), kept as the tarball the package carries.
LVER=$(dpkg-query -W -f '${Version}' "linux-headers-$KVER")
[ -n "$LVER" ] || die "no version for linux-headers-$KVER"
if [ ! -f "$CACHE/linux-source-$LVER.tar.xz" ]; then
	echo "deps: downloading linux-source-6.12 $LVER"
	tmp=$(mktemp -d)
	chmod 755 "$tmp"	# apt's _apt user downloads into it
	(cd "$tmp" && apt-get download -q "linux-source-6.12=$LVER" >/dev/null) ||
		{ rm -rf "$tmp"; die "apt-get download linux-source-6.12=$LVER failed"; }
	deb=$(ls "$tmp"/linux-source-6.12_*.deb)
	dpkg-deb --fsys-tarfile "$deb" |
		tar -xf - -C "$tmp" ./usr/src/linux-source-6.12.tar.xz ||
		{ rm -rf "$tmp"; die "no kernel tarball in $deb"; }
	mv "$tmp/usr/src/linux-source-6.12.tar.xz" "$CACHE/linux-source-$LVER.tar.xz"
	rm -rf "$tmp"
fi
echo "$LVER" >"$CACHE/linux-source-version"

# checkpatch.pl for the driver's style gate (scripts/check-driver.sh): Linux's
# own, from the kernel source package; only the script and the data files it
# reads are kept.
CP=$CACHE/checkpatch
if [ ! -f "$CP/checkpatch.pl" ]; then
	echo "deps: fetching checkpatch.pl from linux-source-6.12"
	tmp=$(mktemp -d)
	chmod 755 "$tmp"	# apt's _apt user downloads into it
	(cd "$tmp" && apt-get download -q linux-source-6.12 >/dev/null) ||
		{ rm -rf "$tmp"; die "apt-get download linux-source-6.12 failed"; }
	deb=$(ls "$tmp"/linux-source-6.12_*.deb)
	dpkg-deb --fsys-tarfile "$deb" |
		tar -xf - -C "$tmp" ./usr/src/linux-source-6.12.tar.xz ||
		{ rm -rf "$tmp"; die "no kernel tarball in $deb"; }
	rm -f "$deb"
	want=
	for f in checkpatch.pl spelling.txt const_structs.checkpatch; do
		want="$want linux-source-6.12/scripts/$f"
	done
	tar -xJf "$tmp/usr/src/linux-source-6.12.tar.xz" -C "$tmp" $want ||
		{ rm -rf "$tmp"; die "checkpatch files missing from the kernel tarball"; }
	mkdir -p "$CP.part"
	mv "$tmp"/linux-source-6.12/scripts/* "$CP.part/"
	rm -rf "$tmp" "$CP"
	mv "$CP.part" "$CP"
fi
# NFS over RDMA in the guests (NFSv4, which needs no rpcbind): the server
# and client tools (rpc.nfsd, rpc.mountd, exportfs, mount.nfs) from
# nfs-kernel-server and nfs-common, with libwrap0 that rpc.mountd links.  Only
# downloaded and unpacked into $CACHE/nfs-root: installing them would
# start NFS services on the host.
NFS_ROOT=$CACHE/nfs-root
if [ ! -f "$NFS_ROOT/.done" ]; then
	echo "deps: fetching the NFS tools (nfs-kernel-server nfs-common libwrap0)"
	tmp=$(mktemp -d)
	chmod 755 "$tmp"	# apt's _apt user downloads into it
	(cd "$tmp" && apt-get download -q nfs-kernel-server nfs-common libwrap0 >/dev/null 2>&1) ||
		{ rm -rf "$tmp"; die "apt-get download of the NFS tools failed"; }
	rm -rf "$NFS_ROOT"
	mkdir -p "$NFS_ROOT"
	for deb in "$tmp"/*.deb; do
		dpkg-deb -x "$deb" "$NFS_ROOT" || { rm -rf "$tmp"; die "cannot unpack $deb"; }
	done
	rm -rf "$tmp"
	touch "$NFS_ROOT/.done"
fi
# iSER in the guests: Debian's open-iscsi initiator (iscsid, iscsiadm)
# with the libraries only it uses, unpacked into $CACHE/iscsi-root like
# the NFS tools (installing it would start iscsid on the host).
ISCSI_ROOT=$CACHE/iscsi-root
if [ ! -f "$ISCSI_ROOT/.done" ]; then
	echo "deps: fetching the iSCSI initiator (open-iscsi libisns0 libopeniscsiusr)"
	tmp=$(mktemp -d)
	chmod 755 "$tmp"
	(cd "$tmp" && apt-get download -q open-iscsi libisns0 libopeniscsiusr >/dev/null 2>&1) ||
		{ rm -rf "$tmp"; die "apt-get download of open-iscsi failed"; }
	rm -rf "$ISCSI_ROOT"
	mkdir -p "$ISCSI_ROOT"
	for deb in "$tmp"/*.deb; do
		dpkg-deb -x "$deb" "$ISCSI_ROOT" || { rm -rf "$tmp"; die "cannot unpack $deb"; }
	done
	rm -rf "$tmp"
	touch "$ISCSI_ROOT/.done"
fi
echo "$KVER" >"$CACHE/kernel-version"
echo "deps: ok (kernel $KVER, cache $CACHE)"
