#!/bin/sh
# A developer's own kernel: the driver's modules (qroce_en.ko, qroce_ib.ko)
# built against a kernel tree given as KERNEL_SRC, and guests booted from
# KERNEL_IMAGE with the modules of KERNEL_MODULES, through make pingpong.
# The guest kernel's own tree (build/kernel/build: the built Linux 7.3
# tree, or with LINUX=6.12 Debian's headers package) stands in for
# "another tree", and its image and modules for the developer's build.  Both modules must carry that tree's release, the
# pingpong must pass, and a missing image
# or modules directory must be refused by name (each setting is read).
. "$(dirname "$0")/../lib/lib.sh"
qr_init kernel-src
src=$(readlink -f "$QR_B/kernel/build")
img=$QR_B/kernel/boot/vmlinuz-$QR_KVER
mods=$QR_B/kernel/lib/modules/$QR_KVER

built() { # each module's vermagic names the tree's kernel release
	make -s -C "$QR_TOP" driver KERNEL_SRC="$src" >"$QR_DIR/build.log" 2>&1 || { tail "$QR_DIR/build.log"; return 1; }
	rel=$(cat "$src/include/config/kernel.release")
	for m in qroce_en qroce_ib; do
		vm=$(/sbin/modinfo -F vermagic "$QR_TOP/build/driver/$m.ko") || return 1
		echo "tree $src: release $rel; $m.ko vermagic: $vm"
		case $vm in "$rel "*) ;; *) return 1 ;; esac
	done
}
booted() { # make pingpong with the three settings; the guests ran that kernel
	make -s -C "$QR_TOP" pingpong KERNEL_SRC="$src" KERNEL_IMAGE="$img" \
		KERNEL_MODULES="$mods" >"$QR_DIR/pp.log" 2>&1
	rc=$?
	tail -3 "$QR_DIR/pp.log"
	[ $rc = 0 ] && grep -q 'pingpong: OK' "$QR_DIR/pp.log"
}
nomods() { # KERNEL_MODULES reaches the image builder: a missing one is named
	make -s -C "$QR_TOP" initramfs KERNEL_MODULES=/nonexistent/lib/modules/0 >"$QR_DIR/nomods.log" 2>&1 &&
		return 1
	tail -2 "$QR_DIR/nomods.log"
	grep -q '/nonexistent/lib/modules/0 missing' "$QR_DIR/nomods.log"
}
missing() { # a KERNEL_IMAGE that does not exist stops the boot with a message
	QR_KERNEL=/nonexistent/bzImage sh "$QR_TOP/tests/demo/pingpong.sh" "$QR_INITRD" 0 >"$QR_DIR/missing.log" 2>&1 &&
		return 1
	cat "$QR_DIR/missing.log"
	grep -q '/nonexistent/bzImage' "$QR_DIR/missing.log"
}
[ -d "$src" ] || { qr_fail "no kernel tree at $src"; qr_finish; }
qr_check "KERNEL_SRC=$src builds qroce_en.ko and qroce_ib.ko for that tree's release" built
qr_check "make pingpong with KERNEL_SRC, KERNEL_IMAGE and KERNEL_MODULES" booted
qr_check "a KERNEL_IMAGE that does not exist is refused by name" missing
qr_check "make initramfs takes its modules from KERNEL_MODULES" nomods
qr_finish
