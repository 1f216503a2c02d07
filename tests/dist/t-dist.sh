#!/bin/sh
# make test-dist: the bundle of make dist where nothing was built.  A
# Debian 12 root with only the packages the bundle's RUNTIME-PACKAGES
# lists (mmdebstrap minbase from the machine's apt sources; cached in
# $CACHE keyed by that list), the bundle unpacked into an empty directory
# in it, and qroce-vm run there in a chroot: two guests, ibv_rc_pingpong
# between them, from the bundle's files alone (no QR_TOP, no tree).
#
#   QR_DIST   the bundle (default build/dist/qroce.tar.gz)
. "$(dirname "$0")/../lib/lib.sh"
QR_DIST=${QR_DIST:-$QR_B/dist/qroce.tar.gz}
CACHE=${QROCE_CACHE:-/var/cache/qroce}
QR_NEED="$QR_DIST"
qr_init dist
T=""

dist_cleanup() {
	[ -n "$T" ] || return 0
	for m in "$T/root/dev" "$T/root/proc" "$T/root/sys"; do
		mountpoint -q "$m" && umount -l "$m"
	done
	rm -rf "$T"
}
trap 'dist_cleanup; QR_IN_TRAP=1; qr_cleanup' EXIT
trap 'dist_cleanup; QR_IN_TRAP=1; qr_cleanup; exit 130' INT TERM HUP

# the bundle's runtime list, read from the tarball itself
list() {
	tar -xzOf "$QR_DIST" --wildcards '*/RUNTIME-PACKAGES' | grep -v '^#' | sort -u
}

# root: a bookworm minbase root with the runtime packages, cached
root() {
	pk=$(list | tr '\n' ',' | sed 's/,$//')
	[ -n "$pk" ] || { echo "the bundle lists no runtime package"; return 1; }
	key=$(printf '%s\n' "$pk" | sha256sum | cut -c1-12)
	tar=$CACHE/dist-root-bookworm-$key.tar
	if [ ! -f "$tar" ]; then
		mirror=$(apt-get indextargets --format '$(REPO_URI) $(RELEASE) $(COMPONENT)' |
			awk '$2 == "bookworm" && $3 == "main" { print $1; exit }')
		[ -n "$mirror" ] || { echo "no 'bookworm main' in the apt sources"; return 1; }
		command -v mmdebstrap >/dev/null 2>&1 ||
			DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
				--no-install-recommends mmdebstrap >/dev/null || return 1
		nice -n 19 mmdebstrap --quiet --variant=minbase --format=tar \
			--aptopt='APT::Install-Recommends "false"' --include="$pk" \
			bookworm "$tar.part" "deb ${mirror%/} bookworm main" ||
			{ rm -f "$tar.part"; return 1; }
		mv "$tar.part" "$tar"
		for t in "$CACHE"/dist-root-bookworm-*.tar; do
			[ "$t" = "$tar" ] || rm -f "$t"
		done
	fi
	T=$(mktemp -d /tmp/qroce-dist.XXXXXX)
	mkdir "$T/root"
	tar -C "$T/root" -xf "$tar" || return 1
	mkdir -p "$T/root/opt/q"
	tar -C "$T/root/opt/q" -xzf "$QR_DIST" || return 1
	mount --bind /dev "$T/root/dev" && mount -t proc proc "$T/root/proc" &&
		mount -t sysfs sys "$T/root/sys" || return 1
	echo "root: $pk; bundle unpacked into /opt/q: $(ls "$T/root/opt/q")"
	echo "$(find "$T/root/opt/q" -type f | wc -l) files, $(du -sh "$T/root/opt/q" | cut -f1)"
}

# in the root: no library missing for the two binaries, and the packages
# qemu-system, rdma-core, perftest absent (nothing of a build or of the
# host's QEMU helps)
bare() {
	chroot "$T/root" sh -c 'cd /opt/q/qroce-*/ &&
		ldd build/qemu/qemu-system-x86_64 build/tools/qmp | grep "not found";
		for p in qemu-system-x86 seabios ibverbs-utils perftest build-essential; do
			dpkg -s $p >/dev/null 2>&1 && echo "$p is installed"; done;
		command -v gcc make ninja 2>/dev/null' | tee "$QR_DIR/bare.out"
	[ ! -s "$QR_DIR/bare.out" ]
}

# the bundle's own README command: two guests, ibv_rc_pingpong
pingpong() {
	t0=$(date +%s)
	env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
		chroot "$T/root" sh -c 'cd /opt/q/qroce-*/ &&
		./qroce-vm --exec "2: ibv_rc_pingpong -g \$QR_GID -n 100 &" \
			--exec "1: ibv_rc_pingpong -g \$QR_GID -n 100 \$QR_ADDR_2"' \
		>"$QR_DIR/vm.out" 2>&1
	rc=$?
	cat "$QR_DIR/vm.out"
	echo "qroce-vm exited $rc after $(($(date +%s) - t0)) s"
	echo "$(($(date +%s) - t0))" >"$QR_DIR/vm.secs"
	# both ends' result lines: "N bytes in S seconds = R Mbit/sec" and
	# "100 iters in ...", and no failed TAP line
	[ $rc -eq 0 ] &&
		[ "$(grep -c ' bytes in .* seconds = ' "$QR_DIR/vm.out")" -ge 2 ] &&
		[ "$(grep -c '100 iters in ' "$QR_DIR/vm.out")" -ge 2 ] &&
		! grep -q '^not ok' "$QR_DIR/vm.out"
}

qr_check "a Debian 12 root with the bundle's runtime packages only, the bundle unpacked into /opt/q" root
qr_check "in it, no library missing, no QEMU, rdma-core, perftest or compiler installed" bare
qr_check "qroce-vm from the bundle: two guests, ibv_rc_pingpong -n 100 between them" pingpong
[ -f "$QR_DIR/vm.secs" ] && qr_log "qroce-vm --exec pingpong from the bundle: $(cat "$QR_DIR/vm.secs") s wall"
qr_finish
