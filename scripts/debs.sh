#!/bin/sh
# Debian packages of qroce for Debian 13 (trixie) guests, in build/debs/:
#
#   - rdma-core rebuilt from Debian's own source package of the pinned
#     version (make deps fetched it) with the rdma-core series applied:
#     every binary package the source builds, the qroce provider in
#     ibverbs-providers, versioned above Debian's (RDMA_DEBVER);
#   - qroce-dkms: the driver's sources in /usr/src/qroce-VERSION/, built
#     by DKMS for every installed kernel (packaging in linux-driver/dkms/).
#
# Debian's 65.0 packaging targets trixie (t64 names, debhelper 14), so the
# build runs in a trixie root made by mmdebstrap from the mirror the
# machine's apt configuration uses.  That root is cached as a tarball in
# $CACHE, keyed by its package list; the packages are rebuilt only when
# the series, the packaging or the root changed (build/debs/*.key), and
# what was built is kept in $CACHE too (debs-NAME-KEY/): a clean clone
# with the same sources copies them from there.
#
#   sh scripts/debs.sh          build (if anything changed), then lintian
#   sh scripts/debs.sh verify   install them with dkms and trixie's kernel
#                               headers in a fresh copy of the root: DKMS
#                               builds the modules, ibv_devices runs
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${QROCE_CACHE:-/var/cache/qroce}
D=$TOP/build/debs
SUITE=trixie
RDMA_TAR=$CACHE/rdma-core_65.0.orig.tar.gz
RDMA_DEB=$CACHE/rdma-core_65.0-1.debian.tar.xz
RDMA_DIR=linux-rdma-rdma-core-58e4080
# Debian's 65.0-1 rebuilt with the series: above it and above sid's NMU
# 65.0-1.1 (whose packaging the pool does not serve), below Debian's next
# revision 65.0-2 (trixie has 56.1-1, trixie-backports none)
RDMA_DEBVER=65.0-2~qroce1
# bump when the steps below change what lands in build/debs/
RECIPE=1

die() { echo "debs: $*" >&2; exit 1; }
log() { echo "debs: $*"; }

case ${1:-build} in
build | verify) ;;
*) die "usage: debs.sh [build|verify]" ;;
esac
[ "$(id -u)" -eq 0 ] || die "run as root: the packages are built in a chroot"
if ! command -v mmdebstrap >/dev/null 2>&1; then
	log "installing mmdebstrap"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
		mmdebstrap >/dev/null || die "apt-get install mmdebstrap failed"
fi
[ -f "$RDMA_TAR" ] && [ -f "$RDMA_DEB" ] ||
	die "$RDMA_TAR or $RDMA_DEB missing: run 'make deps'"

# the mirror serving "bookworm main" here also serves trixie (as deps.sh
# finds it; never written into the repository)
MIRROR=$(apt-get indextargets --format '$(REPO_URI) $(RELEASE) $(COMPONENT)' |
	awk '$2 == "bookworm" && $3 == "main" { print $1; exit }')
[ -n "$MIRROR" ] || die "no 'bookworm main' source in the apt configuration"
MIRROR=${MIRROR%/}

# --- the trixie build root ----------------------------------------------

# rdma-core's Build-Depends as package names (versions, architecture
# lists and :native dropped: dpkg-buildpackage checks the versions), with
# lintian and dh-dkms (qroce-dkms).  Debian's 65.0 packaging wants
# debhelper compat 14, which trixie's debhelper 13.24 lacks: debhelper
# (and the debhelper-compat and dh-sequence-* it provides) comes from
# trixie-backports.  What the packages depend on is trixie's alone
# (verify installs them without backports).
build_deps() {
	tar -xJOf "$RDMA_DEB" debian/control |
	awk '/^Build-Depends:/ { bd = 1; sub(/^Build-Depends:/, ""); print; next }
		bd && /^[^ \t]/ { bd = 0 } bd' |
	tr ',' '\n' |
	sed -E 's/\|.*//; s/\[[^]]*\]//g; s/\([^)]*\)//g; s/:native//; s/[[:space:]]//g' |
	grep -v -e '^$' -e '^debhelper' -e '^dh-sequence-' | sort -u
}
PKGS=$(printf '%s\n' lintian dh-dkms $(build_deps) | sort -u | tr '\n' ' ')
PKGS="${PKGS}debhelper/$SUITE-backports libdebhelper-perl/$SUITE-backports"
ROOT_KEY=$(printf '%s\n' "$SUITE" "$PKGS" | sha256sum | cut -c1-12)
ROOT_TAR=$CACHE/debs-root-$SUITE-$ROOT_KEY.tar

make_root() {
	[ -f "$ROOT_TAR" ] && return 0
	log "creating the $SUITE build root ($ROOT_TAR): $PKGS"
	t=$(date +%s)
	# trixie's Release files are signed with keys bookworm's
	# debian-archive-keyring carries since its point-release updates
	[ -f /usr/share/keyrings/debian-archive-trixie-stable.gpg ] ||
		die "debian-archive-keyring has no trixie keys: apt-get install debian-archive-keyring (bookworm's current one)"
	# trixie-backports only for debhelper
	nice -n 19 mmdebstrap --quiet --variant=buildd --format=tar \
		--include="$PKGS" \
		--keyring=/usr/share/keyrings/debian-archive-keyring.gpg \
		"$SUITE" "$ROOT_TAR.part" "deb $MIRROR $SUITE main" \
		"deb $MIRROR $SUITE-backports main" ||
		{ rm -f "$ROOT_TAR.part"; die "mmdebstrap of $SUITE failed"; }
	mv "$ROOT_TAR.part" "$ROOT_TAR"
	log "build root made in $(($(date +%s) - t)) s"
	# an older package list's root is not needed any more
	for t in "$CACHE"/debs-root-$SUITE-*.tar; do
		[ "$t" = "$ROOT_TAR" ] || rm -f "$t"
	done
}


# --- running in a root ----------------------------------------------------

# unpack_root DIR: a fresh copy of the build root in DIR
unpack_root() {
	! grep -q " $1/" /proc/mounts || die "$1 has mounts; unmount them first"
	rm -rf "$1"
	mkdir -p "$1"
	tar --numeric-owner -xpf "$ROOT_TAR" -C "$1" || die "cannot unpack $ROOT_TAR into $1"
	mkdir -p "$1/build"
	echo "$ROOT_KEY" >"$1/.qroce-root-key"
}

# in_root DIR CMD...: CMD in the root DIR with /proc, /sys, /dev and
# build/debs/ as /build, niced; the mounts live in a mount namespace of
# their own, so they go with it and nothing is left to unmount
in_root() {
	r=$1
	shift
	unshare --mount --propagation private -- sh -ec '
		r=$1 d=$2
		shift 2
		mount --rbind /dev "$r/dev"
		mount -t proc proc "$r/proc"
		mount -t sysfs sysfs "$r/sys"
		mount --bind "$d" "$r/build"
		exec nice -n 19 chroot "$r" /usr/bin/env -i \
			PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "$@"' \
		sh "$r" "$D" "$@"
}

# the file names a .changes lists
changes_files() {
	awk '/^Files:/ { f = 1; next } f && /^ / { print $5; next } { f = 0 }' "$1"
}

# collect NAME [DIR [cp]]: the .changes of source NAME in DIR (default
# $W, where it was built) and the files it lists go to build/debs/
# (moved, or copied with cp), replacing those of the build before
collect() {
	from=${2:-$W} op=${3:-mv}
	for c in "$D/$1"_*.changes; do
		[ -f "$c" ] || continue
		for f in $(changes_files "$c"); do rm -f "$D/$f"; done
		rm -f "$c"
	done
	for c in "$from/$1"_*.changes; do
		[ -f "$c" ] || die "no $1 .changes in $from"
		for f in $(changes_files "$c"); do
			$op "$from/$f" "$D/" || die "$f, listed in ${c##*/}, is not in $from"
		done
		$op "$c" "$D/"
	done
}

# cache_get NAME KEY: the packages of source NAME built before with KEY
# (their .changes and its files) copied from $CACHE to build/debs/;
# status 1 when there are none
cache_get() {
	[ -d "$CACHE/debs-$1-$2" ] || return 1
	collect "$1" "$CACHE/debs-$1-$2" cp
	echo "$2" >"$D/$1.key"
	log "$1: the packages of $CACHE/debs-$1-$2"
}

# cache_put NAME KEY: build/debs/'s packages of NAME kept in $CACHE under
# KEY, the previous key's dropped
cache_put() {
	rm -rf "$CACHE/debs-$1-$2.part"
	mkdir -p "$CACHE/debs-$1-$2.part"
	for c in "$D/$1"_*.changes; do
		for f in $(changes_files "$c"); do cp "$D/$f" "$CACHE/debs-$1-$2.part/"; done
		cp "$c" "$CACHE/debs-$1-$2.part/"
	done
	for o in "$CACHE/debs-$1"-*; do
		[ "$o" = "$CACHE/debs-$1-$2.part" ] || rm -rf "$o"
	done
	mv "$CACHE/debs-$1-$2.part" "$CACHE/debs-$1-$2"
}

# need_root: the build root unpacked in $R (made first if not cached)
need_root() {
	make_root
	[ "$(cat "$R/.qroce-root-key" 2>/dev/null)" = "$ROOT_KEY" ] || unpack_root "$R"
}

# trailer [PATHS]: a changelog trailer: the repository's git identity, as
# the series has it, and the date of the last commit (of PATHS if given)
trailer() {
	name=$(git -C "$TOP" config user.name 2>/dev/null || true)
	email=$(git -C "$TOP" config user.email 2>/dev/null || true)
	[ -n "$name" ] && [ -n "$email" ] || { name="qroce developers"; email=qroce@example.com; }
	# shellcheck disable=SC2086
	echo " -- $name <$email>  $(git -C "$TOP" log -1 --format=%cD HEAD ${1:+-- $1})"
}

now() { date +%s; }

# --- rdma-core ----------------------------------------------------------

W=$D/work
P=$TOP/build/patches/rdma-core
# what the series is made of: the changelog's date is their last commit's
# (a commit elsewhere in the tree makes no new package)
RDMA_PATHS="rdma-core-provider include scripts/series.sh scripts/debs.sh"

build_rdma_core() {
	sh "$TOP/scripts/series.sh" export rdma-core >/dev/null ||
		die "series.sh export rdma-core failed"
	ls "$P"/0001-*.patch >/dev/null 2>&1 || die "no patches in $P"
	key=$( { echo "$RECIPE $RDMA_DEBVER $ROOT_KEY ${RDMA_TAR##*/} ${RDMA_DEB##*/}"
		trailer "$RDMA_PATHS"; cat "$P"/0*.patch; } | sha256sum | cut -c1-16)
	if [ "$(cat "$D/rdma-core.key" 2>/dev/null)" = "$key" ] &&
		[ -f "$D/rdma-core_${RDMA_DEBVER}_amd64.changes" ]; then
		log "rdma-core $RDMA_DEBVER: up to date"
		return 0
	fi
	cache_get rdma-core "$key" && return 0
	need_root
	log "rdma-core $RDMA_DEBVER: building (log: $D/rdma-core.log)"
	t0=$(now)
	S=$W/rdma-core-65.0
	rm -rf "$W"/rdma-core* "$D/rdma-core.key"
	mkdir -p "$W"
	tar -xzf "$RDMA_TAR" -C "$W" && mv "$W/$RDMA_DIR" "$S" ||
		die "cannot unpack $RDMA_TAR"
	# Debian's packaging replaces upstream's debian/, as dpkg-source does
	rm -rf "$S/debian"
	tar -xJf "$RDMA_DEB" -C "$S" || die "cannot unpack $RDMA_DEB"
	for p in "$P"/0*.patch; do
		case $p in */0000-cover-letter.patch) continue ;; esac
		patch -d "$S" -p1 -s -N --fuzz=0 --no-backup-if-mismatch -i "$p" >/dev/null ||
			die "${p##*/} does not apply to Debian's rdma-core 65.0"
	done
	# rdma_topo (new in 65.0) is a python3 script; Debian's 65.0-1 does
	# not depend on python3, which is a lintian error (sid's 65.0-1.1 adds
	# the same dependency)
	sed -i '/^Package: rdma-core$/,/^$/ s/^Depends: udev$/Depends: udev, python3:any/' \
		"$S/debian/control"
	grep -q '^Depends: udev, python3:any$' "$S/debian/control" ||
		die "cannot add python3:any to rdma-core's Depends in debian/control"
	n=$(ls "$P"/0*.patch | grep -vc '/0000-')
	{
		echo "rdma-core ($RDMA_DEBVER) $SUITE; urgency=medium"
		echo
		echo "  * The qroce provider (providers/qroce/) for QEMU's emulated RoCEv2"
		echo "    NIC in ibverbs-providers: qroce's rdma-core series ($n patches)."
		echo "  * rdma-core: depend on python3:any for rdma_topo."
		echo
		trailer "$RDMA_PATHS"
		echo
		cat "$S/debian/changelog"
	} >"$S/debian/changelog.new"
	mv "$S/debian/changelog.new" "$S/debian/changelog"
	in_root "$R" sh -c 'cd /build/work/rdma-core-65.0 &&
		DEB_BUILD_OPTIONS="nocheck parallel=2" dpkg-buildpackage -b -uc -us' \
		>"$D/rdma-core.log" 2>&1 ||
		die "dpkg-buildpackage of rdma-core failed: see $D/rdma-core.log"
	collect rdma-core
	# the provider and its driver file must be in ibverbs-providers
	c=$(dpkg-deb -c "$D/ibverbs-providers_${RDMA_DEBVER}_amd64.deb") ||
		die "no ibverbs-providers_${RDMA_DEBVER}_amd64.deb"
	echo "$c" | grep -q '/libibverbs/libqroce-rdmav[0-9]*\.so$' &&
		echo "$c" | grep -q '/etc/libibverbs.d/qroce\.driver$' ||
		die "ibverbs-providers has no libqroce or no qroce.driver"
	rm -rf "$S"
	log "rdma-core $RDMA_DEBVER: built in $(($(now) - t0)) s"
	lint rdma-core
	echo "$key" >"$D/rdma-core.key"
	cache_put rdma-core "$key"
}

# --- qroce-dkms ---------------------------------------------------------

# the packaged files' last commit (the driver, its packaging, the two
# shared headers): a commit elsewhere in the tree makes no new version, and
# so no new Debian image
DKMS_PATHS="linux-driver include/qroce_hw.h include/qroce-abi.h"

# 0.1 and that commit: its date (UTC) and hash
dkms_version() {
	# shellcheck disable=SC2086
	v=$(TZ=UTC git -C "$TOP" log -1 --date=format-local:%Y%m%d.%H%M%S \
		--format='0.1+git%cd.%h' HEAD -- $DKMS_PATHS 2>/dev/null)
	[ -n "$v" ] || die "cannot read the commit of $TOP: qroce-dkms takes its version from git"
	echo "$v"
}

build_dkms() {
	V=$(dkms_version)
	Q=$W/qroce-dkms-$V
	rm -rf "$W"/qroce-dkms*
	mkdir -p "$Q/src"
	cp -R "$TOP/linux-driver/dkms/debian" "$Q/"
	cp "$TOP/linux-driver/dkms/dkms.conf" "$Q/"
	# the driver's sources as git has them (not the build's .o, .mod.c),
	# its Kbuild (not the Makefile, which is the harness's), the two
	# shared headers beside them, where the Kbuild's -I$(src) finds them
	files=$(git -C "$TOP" ls-files -- 'linux-driver/*.[ch]' linux-driver/Kbuild \
		include/qroce_hw.h include/qroce-abi.h | grep -v '^linux-driver/dkms/')
	[ -n "$files" ] || die "no driver sources in git"
	for f in $files; do cp "$TOP/$f" "$Q/src/" || die "cannot copy $f"; done
	{
		echo "qroce-dkms ($V) $SUITE; urgency=medium"
		echo
		# shellcheck disable=SC2086
		echo "  * qroce $(git -C "$TOP" log -1 --format=%h HEAD -- $DKMS_PATHS): qroce_en and qroce_ib for DKMS."
		echo
		trailer "$DKMS_PATHS"
	} >"$Q/debian/changelog"
	key=$( { echo "$RECIPE $ROOT_KEY"; cd "$Q" && find . -type f | LC_ALL=C sort |
		xargs sha256sum; } | sha256sum | cut -c1-16)
	if [ "$(cat "$D/qroce-dkms.key" 2>/dev/null)" = "$key" ] &&
		[ -f "$D/qroce-dkms_${V}_amd64.changes" ]; then
		rm -rf "$Q"
		log "qroce-dkms $V: up to date"
		return 0
	fi
	if cache_get qroce-dkms "$key"; then
		rm -rf "$Q"
		return 0
	fi
	need_root
	t0=$(now)
	rm -f "$D/qroce-dkms.key"
	in_root "$R" sh -c "cd /build/work/qroce-dkms-$V && dpkg-buildpackage -b -uc -us" \
		>"$D/qroce-dkms.log" 2>&1 ||
		die "dpkg-buildpackage of qroce-dkms failed: see $D/qroce-dkms.log"
	collect qroce-dkms
	rm -rf "$Q"
	log "qroce-dkms $V: built in $(($(now) - t0)) s"
	lint qroce-dkms
	echo "$key" >"$D/qroce-dkms.key"
	cache_put qroce-dkms "$key"
}

# --- lintian --------------------------------------------------------------

# lint NAME: trixie's lintian (it knows the t64 names and debhelper 14), as
# nobody, on the .changes of source NAME and the packages it lists; errors
# fail (the package is then rebuilt next time), the rest is in the log
lint() {
	in_root "$R" sh -c "cd /build && HOME=/tmp setpriv --reuid=nobody --regid=nogroup \
		--clear-groups lintian --fail-on error --tag-display-limit 0 $1_*.changes" \
		>"$D/lintian-$1.log" 2>&1 || {
		grep '^E:' "$D/lintian-$1.log" >&2 || tail -n 5 "$D/lintian-$1.log" >&2
		die "lintian found errors in $1: see $D/lintian-$1.log"
	}
	log "lintian $1: $(grep -c '^E:' "$D/lintian-$1.log") errors, $(grep -c '^W:' "$D/lintian-$1.log") warnings ($D/lintian-$1.log)"
}

# --- verify ---------------------------------------------------------------

# a fresh root, the packages installed with dkms and trixie's kernel
# headers: DKMS builds the modules for that kernel, the provider is there
verify() {
	VR=$D/verify-root
	list=
	for p in libibverbs1 ibverbs-providers ibverbs-utils rdma-core librdmacm1t64 \
		rdmacm-utils qroce-dkms; do
		f=$(ls "$D/${p}"_*.deb 2>/dev/null | head -n 1)
		[ -n "$f" ] || die "no $p package in $D: run 'make debs'"
		list="$list /build/${f##*/}"
	done
	t0=$(now)
	make_root
	unpack_root "$VR"
	# shellcheck disable=SC2086
	in_root "$VR" sh -ec '
		export DEBIAN_FRONTEND=noninteractive
		# trixie alone: the packages must not need backports
		sed -i "/-backports /d" /etc/apt/sources.list
		! grep -rqs -- "-backports" /etc/apt/sources.list.d ||
			{ echo "verify: backports in sources.list.d" >&2; exit 1; }
		apt-get update -q
		apt-get install -y -q --no-install-recommends "$@" dkms linux-headers-amd64
		kver=$(dpkg-query -W -f "\${Depends}" linux-headers-amd64 |
			sed -n "s/.*linux-headers-\([0-9][^ ,]*\).*/\1/p")
		echo "verify: kernel headers $kver"
		# the install built it already (dkms postinst): built again here,
		# for that kernel by name, as after a kernel update
		v=$(dpkg-query -W -f "\${Version}" qroce-dkms)
		dkms unbuild "qroce/$v" -k "$kver"
		t=$(date +%s)
		dkms autoinstall -k "$kver"
		echo "verify: dkms autoinstall took $(($(date +%s) - t)) s"
		dkms status
		dkms status qroce -k "$kver" | grep -q ": installed" ||
			{ echo "verify: qroce is not installed for $kver" >&2; exit 1; }
		for m in qroce_en qroce_ib; do modinfo -k "$kver" -F alias "$m"; done
		ls /usr/lib/x86_64-linux-gnu/libibverbs/libqroce*
		cat /etc/libibverbs.d/qroce.driver
		# the provider loads with this libibverbs (its private symbols)
		python3 -c "import ctypes, glob
ctypes.CDLL(glob.glob(\"/usr/lib/x86_64-linux-gnu/libibverbs/libqroce-rdmav*.so\")[0])"
		echo "verify: libqroce loads"
		# no RDMA devices here; without the RDMA core loaded in this
		# kernel the device list is ENOSYS, which is no fault of ours
		ibv_devices || [ ! -d /sys/class/infiniband_verbs ]
		echo "verify: ibv_devices ran"' sh $list >"$D/verify.log" 2>&1 ||
		{ tail -n 5 "$D/verify.log" >&2; die "verify failed: see $D/verify.log"; }
	rm -rf "$VR"
	grep '^verify:' "$D/verify.log"
	log "verify: ok in $(($(now) - t0)) s ($D/verify.log)"
}

# --- main -----------------------------------------------------------------

mkdir -p "$D" "$CACHE"
R=$D/root
case ${1:-build} in
build)
	build_rdma_core
	build_dkms
	rm -rf "$W"
	ls "$D"/*.deb | sed "s|^$TOP/||" ;;
verify) verify ;;
esac
