#!/bin/sh
# Assemble the guest initramfs: busybox, the guest kernel's RDMA, virtio
# and NVMe over RDMA (host and target) modules, qroce's two modules
# (qroce_en.ko, the Ethernet PCI driver; qroce_ib.ko, the RDMA driver that
# binds to its auxiliary device), the built rdma-core (libibverbs with
# libqroce and librxe), Debian's perftest,
# iproute2 and nvme-cli tools, the NFS tools (nfs-utils) and the iSCSI
# initiator (open-iscsi), both unpacked by make deps, the guest test
# programs, and /init.  Every binary's shared libraries are resolved with ldd.
set -eu
OUT=$1
TOP=$(cd "$(dirname "$0")/.." && pwd)
B=$TOP/build
CACHE=${QROCE_CACHE:-/var/cache/qroce}

die() { echo "mkinitramfs: $*" >&2; exit 1; }
# the guest kernel's modules (make kernel), or a developer's (make KERNEL_MODULES=)
if [ -n "${QR_KMOD-}" ]; then
	KMOD=$QR_KMOD
else
	[ -f "$B/kernel/release" ] || die "$B/kernel/release missing: run 'make kernel'"
	KMOD=$B/kernel/lib/modules/$(cat "$B/kernel/release")
fi
RDMA=${QR_RDMA_DST:-$B/rdma-core-install}
ROOT=$B/initramfs-root
MULTI=lib/x86_64-linux-gnu
[ -d "$KMOD" ] || die "$KMOD missing: run 'make kernel'"
[ -d "$RDMA/usr" ] || die "$RDMA missing: run 'make rdma-core'"
[ -x /bin/busybox ] || die "/bin/busybox missing: install busybox-static ('make deps')"

rm -rf "$ROOT"
mkdir -p "$ROOT"/bin "$ROOT"/sbin "$ROOT"/usr/bin "$ROOT"/usr/sbin \
	"$ROOT"/$MULTI "$ROOT"/usr/$MULTI/libibverbs "$ROOT"/lib64 \
	"$ROOT"/etc/libibverbs.d "$ROOT"/lib/modules/qroce "$ROOT"/proc \
	"$ROOT"/sys "$ROOT"/dev "$ROOT"/tmp "$ROOT"/run "$ROOT"/root
cp /bin/busybox "$ROOT"/bin/busybox

# --- kernel modules: each wanted module with its dependencies, in load
# order, decompressed; /lib/modules/qroce/<name>.list holds the order.
moddep() { # print the dependency closure of module file $1, deps first
	line=$(grep "^$1:" "$KMOD/modules.dep" || true)
	for d in ${line#*:}; do
		moddep "$d"
	done
	echo "$1"
}
modpath() { # module name -> path relative to $KMOD
	awk -F: -v n="$1" '{ f = $1; sub(".*/", "", f); sub("\\.ko.*", "", f);
		gsub("-", "_", f); if (f == n) { print $1; exit } }' "$KMOD/modules.dep"
}
want="qemu_fw_cfg virtio_net virtio_pci crc32_generic ib_core ib_uverbs ib_umad
      ib_cm iw_cm rdma_cm rdma_ucm rdma_rxe
      nvme_rdma nvmet_rdma brd configfs nfsd nfsv4 rpcrdma
      sd_mod ib_srp ib_srpt target_core_iblock ib_iser ib_isert crc32c_generic"
for m in $want; do
	p=$(modpath "$m")
	if [ -z "$p" ]; then
		# built into the kernel: nothing to load; nor for the CRC
		# crypto modules of kernels that have none by that name (7.3:
		# crc32-cryptoapi, and ULPs call the CRC library directly)
		grep -q "/$m\\.ko\$" "$KMOD/modules.builtin" ||
			case $m in crc32_generic | crc32c_generic) ;; *) false ;; esac ||
			die "module $m not found in $KMOD"
		: >"$ROOT/lib/modules/qroce/$m.list"
		continue
	fi
	moddep "$p" | awk '!seen[$0]++' >"$ROOT/lib/modules/qroce/$m.list.tmp"
	: >"$ROOT/lib/modules/qroce/$m.list"
	while read -r f; do
		n=$(basename "$f"); n=${n%.xz}; n=${n%.zst}
		if [ ! -f "$ROOT/lib/modules/qroce/$n" ]; then
			case $f in
			*.xz) xz -dc "$KMOD/$f" >"$ROOT/lib/modules/qroce/$n" ;;
			*.zst) zstd -qdc "$KMOD/$f" >"$ROOT/lib/modules/qroce/$n" ;;
			*) cp "$KMOD/$f" "$ROOT/lib/modules/qroce/$n" ;;
			esac
		fi
		echo "$n" >>"$ROOT/lib/modules/qroce/$m.list"
	done <"$ROOT/lib/modules/qroce/$m.list.tmp"
	rm "$ROOT/lib/modules/qroce/$m.list.tmp"
done
# the kernel verbs checks of tests/suite/t-kverbs.sh (not part of the driver)
[ -f "$TOP/build/driver/qroce_ktest.ko" ] &&
	cp "$TOP/build/driver/qroce_ktest.ko" "$ROOT/lib/modules/qroce/"
# qroce_en.list: the Ethernet driver, which needs nothing of ib_core;
# qroce_ib.list: ib_uverbs and its dependencies, then the RDMA driver.
# Neither module needs the other loaded: /init loads qroce_en first.
if [ -f "$TOP/build/driver/qroce_en.ko" ]; then
	cp "$TOP/build/driver/qroce_en.ko" "$ROOT/lib/modules/qroce/"
	echo qroce_en.ko >"$ROOT/lib/modules/qroce/qroce_en.list"
fi
if [ -f "$TOP/build/driver/qroce_ib.ko" ]; then
	cp "$TOP/build/driver/qroce_ib.ko" "$ROOT/lib/modules/qroce/"
	{ cat "$ROOT/lib/modules/qroce/ib_uverbs.list"; echo qroce_ib.ko; } |
		awk '!seen[$0]++' >"$ROOT/lib/modules/qroce/qroce_ib.list"
fi

# --- rdma-core: libraries, two providers, utilities
cp -a "$RDMA"/usr/$MULTI/*.so* "$ROOT"/usr/$MULTI/
for p in qroce rxe; do
	cp -a "$RDMA"/usr/$MULTI/libibverbs/lib$p-rdmav*.so "$ROOT"/usr/$MULTI/libibverbs/
	cp "$RDMA"/etc/libibverbs.d/$p.driver "$ROOT"/etc/libibverbs.d/
done
bins=""
for b in ibv_devices ibv_devinfo ibv_rc_pingpong ibv_uc_pingpong ibv_ud_pingpong \
	 ibv_srq_pingpong ibv_xsrq_pingpong ibv_asyncwatch rping udaddy ucmatose \
	 rdma_server rdma_client mckey; do
	[ -x "$RDMA/usr/bin/$b" ] || die "rdma-core did not build $b"
	cp "$RDMA/usr/bin/$b" "$ROOT/usr/bin/$b"
	bins="$bins $ROOT/usr/bin/$b"
done
for b in ib_write_bw ib_read_bw ib_send_bw ib_atomic_bw ib_write_lat \
	 ib_read_lat ib_send_lat ib_atomic_lat; do
	[ -x "/usr/bin/$b" ] || die "/usr/bin/$b missing: install perftest ('make deps')"
	cp "/usr/bin/$b" "$ROOT/usr/bin/$b"
	bins="$bins $ROOT/usr/bin/$b"
done
for b in ip rdma nvme ethtool; do
	src=$(command -v $b || true)
	[ -x "/sbin/$b" ] && src=/sbin/$b
	[ -x "/usr/sbin/$b" ] && src=/usr/sbin/$b
	[ -n "$src" ] || die "$b missing: install iproute2, nvme-cli and ethtool ('make deps')"
	cp "$src" "$ROOT/usr/sbin/$b"
	bins="$bins $ROOT/usr/sbin/$b"
done
# NFS server and client tools, unpacked from Debian's packages by 'make deps'
NFS=$CACHE/nfs-root
[ -f "$NFS/.done" ] || die "$NFS missing: run 'make deps'"
for b in usr/sbin/rpc.nfsd usr/sbin/rpc.mountd usr/sbin/exportfs sbin/mount.nfs; do
	[ -x "$NFS/$b" ] || die "$NFS/$b missing"
	cp "$NFS/$b" "$ROOT/usr/sbin/"
	bins="$bins $ROOT/usr/sbin/$(basename "$b")"
done
ln -s mount.nfs "$ROOT/usr/sbin/mount.nfs4"
mkdir -p "$ROOT/var/lib/nfs/rpc_pipefs" "$ROOT/var/lib/nfs/v4recovery"
# the iSCSI initiator (iSER), unpacked from Debian's open-iscsi by 'make deps'
ISCSI=$CACHE/iscsi-root
[ -f "$ISCSI/.done" ] || die "$ISCSI missing: run 'make deps'"
for b in sbin/iscsid sbin/iscsiadm; do
	[ -x "$ISCSI/$b" ] || die "$ISCSI/$b missing"
	cp "$ISCSI/$b" "$ROOT/usr/sbin/"
	bins="$bins $ROOT/usr/sbin/$(basename "$b")"
done
mkdir -p "$ROOT/etc/iscsi" "$ROOT/var/lib/iscsi" "$ROOT/run/lock/iscsi"
cp "$ISCSI/etc/iscsi/iscsid.conf" "$ROOT/etc/iscsi/"
if [ -d "$B/guest-bin" ]; then
	for b in "$B"/guest-bin/*; do
		[ -x "$b" ] || continue
		cp "$b" "$ROOT/usr/bin/"
		bins="$bins $ROOT/usr/bin/$(basename "$b")"
	done
fi

# --- shared libraries: our rdma-core first, the host's for the rest
LIBS=$RDMA/usr/$MULTI:$NFS/$MULTI:$NFS/usr/$MULTI:$ISCSI/$MULTI:$ISCSI/usr/$MULTI
for f in $bins "$ROOT"/usr/$MULTI/libibverbs/*.so; do
	LD_LIBRARY_PATH=$LIBS ldd "$f" 2>/dev/null | awk '/=> \// { print $3 } /^\t\/lib64/ { print $1 }'
done | sort -u | while read -r lib; do
	case $lib in
	"$RDMA/usr/$MULTI"/*) continue ;;	# already copied
	esac
	[ -f "$lib" ] || die "library $lib not found"
	dest=$ROOT$lib
	case $lib in
	"$NFS"/* | "$ISCSI"/*) dest=$ROOT/usr/$MULTI/$(basename "$lib") ;;
	/lib/*) dest=$ROOT/usr$lib ;;
	esac
	mkdir -p "$(dirname "$dest")"
	cp -L "$lib" "$dest"
done
for f in $bins; do
	missing=$(LD_LIBRARY_PATH=$LIBS ldd "$f" 2>/dev/null | grep "not found" || true)
	[ -z "$missing" ] || die "$f: unresolved libraries: $missing"
done
cp -L /lib64/ld-linux-x86-64.so.2 "$ROOT"/lib64/
# glibc loads libgcc_s with dlopen (thread cancellation and pthread_exit
# unwind through it: rping's threads), so ldd never names it
[ -f /usr/$MULTI/libgcc_s.so.1 ] || die "libgcc_s.so.1 missing"
cp -L /usr/$MULTI/libgcc_s.so.1 "$ROOT"/usr/$MULTI/
# Debian's merged /usr: /lib -> usr/lib in the image too
rmdir "$ROOT"/$MULTI 2>/dev/null || true
rm -rf "$ROOT"/lib/x86_64-linux-gnu
ln -s ../usr/lib/x86_64-linux-gnu "$ROOT"/lib/x86_64-linux-gnu

cp "$TOP/guest-images/init" "$ROOT/init"
chmod 755 "$ROOT/init"
# the config, the addresses and the agent, which /init sources
mkdir -p "$ROOT/usr/lib/qroce"
cp "$TOP/guest-images/qroce-guest.sh" "$ROOT/usr/lib/qroce/qroce-guest.sh"
echo "qroce-guest" >"$ROOT/etc/hostname"
printf 'root:x:0:0:root:/root:/bin/sh\n' >"$ROOT/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$ROOT/etc/group"
printf '127.0.0.1 localhost\n' >"$ROOT/etc/hosts"
printf 'sunrpc 111/tcp\nsunrpc 111/udp\nnfs 2049/tcp\nnfs 2049/udp\nnfsrdma 20049/tcp\n' >"$ROOT/etc/services"

(cd "$ROOT" && find . | sort | cpio -o -H newc --quiet) | gzip -1 >"$OUT.tmp"
mv "$OUT.tmp" "$OUT"
echo "mkinitramfs: $OUT ($(du -h "$OUT" | cut -f1))"
