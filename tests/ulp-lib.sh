# Helpers of the kernel ULP tests (tests/u-*.sh), sourced after lib.sh:
# a LIO block backstore on a RAM disk in guest 1, and the data check that
# every ULP's initiator runs in guest 2.

# gx G CMD: qr_exec of a command written over several lines (the agent
# takes one line)
gx() {
	qr_exec "$1" "$(printf '%s' "$2" | tr '\n\t' '  ')"
}

# qload NAME [PARAMS]: a module of the image with its dependencies, in
# the guest; parameters go to the module itself (the last of its list)
QLOAD='qload() { n=$1; shift; for m in $(cat /lib/modules/qroce/$n.list); do [ -d /sys/module/$(echo ${m%.ko} | tr - _) ] && continue; if [ ${m%.ko} = $(echo $n | tr _ -) ] || [ ${m%.ko} = $n ]; then insmod /lib/modules/qroce/$m "$@" || return 1; else insmod /lib/modules/qroce/$m || return 1; fi; done; }'

ULP_MIB=64
ULP_T=/sys/kernel/config/target
# configfs, mounted once its module is in (init mounts it before)
ULP_CONFIGFS="{ grep -q ' /sys/kernel/config ' /proc/mounts || mount -t configfs none /sys/kernel/config; }"

# ULP_BACKSTORE: guest-1 commands that make iblock_0/ram0 on a 128 MiB brd
ULP_BACKSTORE="qload brd rd_nr=1 rd_size=131072 && qload target_core_iblock &&
	$ULP_CONFIGFS && mkdir -p /etc/target $ULP_T/core/iblock_0/ram0 &&
	echo udev_path=/dev/ram0 >$ULP_T/core/iblock_0/ram0/control &&
	echo 1 >$ULP_T/core/iblock_0/ram0/enable"
ULP_BACKSTORE_DOWN="rmdir $ULP_T/core/iblock_0/ram0 $ULP_T/core/iblock_0"

# ulp_data: guest 2 gets ULP_MIB MiB of random data in /tmp/data
ulp_data() {
	qr_exec 2 "dd if=/dev/urandom of=/tmp/data bs=1M count=$ULP_MIB 2>/dev/null && md5sum /tmp/data"
}

# ulp_disk VENDOR: guest-2 commands that wait (10 s) for the SCSI disk of
# VENDOR and write its name to /tmp/ulp.disk
ulp_disk() {
	echo "i=0; d=; while [ -z \"\$d\" ] && [ \$i -lt 100 ]; do
		for b in /sys/block/sd*; do [ -e \$b/device/vendor ] &&
			grep -q $1 \$b/device/vendor && d=\${b##*/}; done;
		sleep 0.1; i=\$((i + 1)); done;
		[ -n \"\$d\" ] && echo disk \$d && echo \$d >/tmp/ulp.disk"
}

# ulp_roundtrip: guest 2 writes /tmp/data to the disk in /tmp/ulp.disk by
# 16 dd at once, each O_DIRECT on its own slice (queue depth 16), reads it
# back the same way; the checksums of the data, of what came back and of
# guest 1's RAM disk must be equal
ulp_roundtrip() {
	gx 2 "d=/dev/\$(cat /tmp/ulp.disk); n=16; s=$((ULP_MIB / 16));
		for i in \$(seq 0 \$((n - 1))); do
			dd if=/tmp/data of=\$d bs=1M count=\$s skip=\$((i * s)) seek=\$((i * s)) oflag=direct conv=notrunc 2>/dev/null &
		done; wait;
		for i in \$(seq 0 \$((n - 1))); do
			dd if=\$d of=/tmp/back.\$i bs=1M count=\$s skip=\$((i * s)) iflag=direct 2>/dev/null &
		done; wait;
		for i in \$(seq 0 \$((n - 1))); do cat /tmp/back.\$i; done >/tmp/back;
		rm -f /tmp/back.*; md5sum /tmp/data /tmp/back" >"$QR_DIR/rt.out" 2>&1
	rc=$?
	cat "$QR_DIR/rt.out"
	want=$(awk '$2 == "/tmp/data" { print $1 }' "$QR_DIR/rt.out")
	back=$(awk '$2 == "/tmp/back" { print $1 }' "$QR_DIR/rt.out")
	qr_exec 1 "dd if=/dev/ram0 bs=1M count=$ULP_MIB iflag=direct 2>/dev/null | md5sum" >"$QR_DIR/disk.out" 2>&1
	disk=$(cut -d' ' -f1 "$QR_DIR/disk.out")
	echo "written $want, read back $back, target's disk $disk"
	[ $rc -eq 0 ] && [ -n "$want" ] && [ "$want" = "$back" ] && [ "$want" = "$disk" ]
}
