#!/bin/sh
# The Debian guest: a Debian 13 (trixie) root file system on a virtio disk,
# with trixie's kernel (6.12), systemd and udev, and qroce as a user gets
# it: rdma-core 65.0 with the qroce provider and qroce-dkms from
# build/debs/ (make debs), installed with apt so their dependencies
# resolve, DKMS building the modules for the image's kernel at install.
#
#   build/debian/disk.raw     ext4, the whole disk (LABEL=qroce-root); the
#                             harness boots a qcow2 overlay of it per guest
#   build/debian/vmlinuz      the image's kernel and initramfs, for -kernel
#   build/debian/initrd.img   and -initrd
#
# The bootstrap (mmdebstrap, the packages, DKMS) is the slow part: its
# tarball is cached in $CACHE keyed by the package list and the hashes of
# the debs; the files of this repository (the agent, its unit) are laid
# over it each time, so changing them rebuilds the disk in a minute.
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${QROCE_CACHE:-/var/cache/qroce}
D=$TOP/build/debs
OUT=$TOP/build/debian
SUITE=trixie
# bump when the bootstrap below changes what the tarball holds
RECIPE=1
PKGS="systemd,systemd-sysv,udev,iproute2,kmod,linux-image-amd64,linux-headers-amd64,dkms,perftest,busybox,procps,util-linux"
LOCAL="libibverbs1 ibverbs-providers ibverbs-utils rdma-core librdmacm1t64 rdmacm-utils qroce-dkms"
SIZE=${QR_DEBIAN_SIZE:-4G}

die() { echo "mkimage-debian: $*" >&2; exit 1; }
log() { echo "mkimage-debian: $*"; }
now() { date +%s; }

[ "$(id -u)" -eq 0 ] || die "run as root: mmdebstrap and the image's owners need it"
command -v mmdebstrap >/dev/null 2>&1 ||
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
		mmdebstrap >/dev/null || die "apt-get install mmdebstrap failed"
command -v mke2fs >/dev/null 2>&1 || die "mke2fs missing: install e2fsprogs"
# the harness makes each guest's overlay of the disk with qemu-img (the
# tree's QEMU is built without its tools)
command -v qemu-img >/dev/null 2>&1 ||
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
		qemu-utils >/dev/null || die "apt-get install qemu-utils failed"

# the mirror serving "bookworm main" here also serves trixie (never
# written into the repository)
MIRROR=$(apt-get indextargets --format '$(REPO_URI) $(RELEASE) $(COMPONENT)' |
	awk '$2 == "bookworm" && $3 == "main" { print $1; exit }')
[ -n "$MIRROR" ] || die "no 'bookworm main' source in the apt configuration"
MIRROR=${MIRROR%/}

debs=""
for p in $LOCAL; do
	f=$(ls "$D/${p}"_*.deb 2>/dev/null | head -n 1)
	[ -n "$f" ] || die "no $p package in $D: run 'make debs'"
	debs="$debs $f"
done
# shellcheck disable=SC2086
KEY=$( { echo "$RECIPE $SUITE $PKGS"; sha256sum $debs | cut -d' ' -f1; } |
	sha256sum | cut -c1-12)
TAR=$CACHE/debian-root-$SUITE-$KEY.tar
mkdir -p "$CACHE" "$OUT"

t0=$(now)
if [ ! -f "$TAR" ]; then
	log "bootstrapping $SUITE ($TAR): $PKGS and$LOCAL"
	# the local debs with apt in the chroot (dependencies resolve from
	# the mirror), after the kernel headers: qroce-dkms's postinst has
	# DKMS build the modules; the hook checks that it did for the
	# image's kernel and keeps the qroce-dkms deb for reinstall tests
	rm -rf "$OUT/debs"
	mkdir -p "$OUT/debs"
	# shellcheck disable=SC2086
	cp $debs "$OUT/debs/"
	nice -n 19 mmdebstrap --quiet --variant=minbase --format=tar \
		--include="$PKGS" \
		--keyring=/usr/share/keyrings/debian-archive-keyring.gpg \
		--customize-hook="mkdir -p \"\$1/root/debs\" && cp $OUT/debs/*.deb \"\$1/root/debs/\"" \
		--customize-hook='chroot "$1" sh -ec "
			export DEBIAN_FRONTEND=noninteractive
			cd /root/debs
			apt-get install -y -q --no-install-recommends ./*.deb
			kver=\$(ls /lib/modules | sort -V | tail -n 1)
			dkms status qroce -k \$kver | grep -q \": installed\" ||
				dkms autoinstall -k \$kver
			dkms status
			dkms status qroce -k \$kver | grep -q \": installed\" ||
				{ echo \"qroce is not installed by DKMS for \$kver\" >&2; exit 1; }
			modinfo -k \$kver -F filename qroce_en qroce_ib
			apt-get clean
			# the reinstall test needs the qroce-dkms deb only
			find /root/debs -name \"*.deb\" ! -name \"qroce-dkms_*\" -delete"' \
		"$SUITE" "$TAR.part" "deb $MIRROR $SUITE main" >"$OUT/bootstrap.log" 2>&1 ||
		{ tail -n 20 "$OUT/bootstrap.log" >&2; rm -f "$TAR.part"; die "mmdebstrap failed: see $OUT/bootstrap.log"; }
	mv "$TAR.part" "$TAR"
	rm -rf "$OUT/debs"
	for t in "$CACHE"/debian-root-$SUITE-*.tar; do
		[ "$t" = "$TAR" ] || rm -f "$t"
	done
	log "bootstrap took $(($(now) - t0)) s"
fi

# --- the disk: the cached root, this repository's files over it ---------
t1=$(now)
R=$OUT/root
rm -rf "$R"
mkdir -p "$R"
tar --numeric-owner -xpf "$TAR" -C "$R" || die "cannot unpack $TAR"
install -D -m 755 "$TOP/guest-images/qroce-guest.sh" "$R/usr/lib/qroce/qroce-guest.sh"
install -D -m 755 "$TOP/guest-images/debian/qroce-agent" "$R/usr/lib/qroce/qroce-agent"
install -D -m 644 "$TOP/guest-images/debian/qroce-agent.service" \
	"$R/etc/systemd/system/qroce-agent.service"
mkdir -p "$R/etc/systemd/system/multi-user.target.wants"
ln -sf ../qroce-agent.service "$R/etc/systemd/system/multi-user.target.wants/"
# by label: the disk is /dev/vda on virtio-blk, /dev/sda on AHCI (the
# harness's QEMU is built without virtio-blk: tests/lib/lib.sh, qr_boot_disk)
printf 'LABEL=qroce-root / ext4 rw,errors=remount-ro 0 1\n' >"$R/etc/fstab"
echo qroce-guest >"$R/etc/hostname"
# the harness waits for listeners with netstat (tests/lib/lib.sh), which
# busybox has
[ -e "$R/usr/bin/netstat" ] || ln -s /bin/busybox "$R/usr/local/bin/netstat"
printf '127.0.0.1 localhost\n' >"$R/etc/hosts"
# one machine id for every guest of the image: an empty one would make
# each boot a first boot (systemd presets every unit anew)
echo "$KEY$KEY$KEY" | cut -c1-32 >"$R/etc/machine-id"
kver=$(ls "$R/lib/modules" | sort -V | tail -n 1)
cp "$R/boot/vmlinuz-$kver" "$OUT/vmlinuz.tmp" && mv "$OUT/vmlinuz.tmp" "$OUT/vmlinuz"
cp "$R/boot/initrd.img-$kver" "$OUT/initrd.img.tmp" && mv "$OUT/initrd.img.tmp" "$OUT/initrd.img"
echo "$kver" >"$OUT/release"
rm -f "$OUT/disk.raw.tmp"
mke2fs -q -t ext4 -L qroce-root -d "$R" "$OUT/disk.raw.tmp" "$SIZE" ||
	die "mke2fs -d failed"
mv "$OUT/disk.raw.tmp" "$OUT/disk.raw"
rm -rf "$R"
log "disk $OUT/disk.raw (kernel $kver) in $(($(now) - t1)) s, $(($(now) - t0)) s in all"
