# Helpers of the kernel ULP tests (tests/ulp/u-*.sh), sourced after lib.sh:
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

# Where the data lands: guest 2 writes to the path in its /tmp/ulp.disk
# (a disk, or a file on a mount); guest 1 holds it at ULP_TGT.
ULP_TGT=/dev/ram0

# ulp_disk VENDOR: guest-2 commands that wait (10 s) for the SCSI disk of
# VENDOR and write its path to /tmp/ulp.disk
ulp_disk() {
	echo "i=0; d=; while [ -z \"\$d\" ] && [ \$i -lt 100 ]; do
		for b in /sys/block/sd*; do [ -e \$b/device/vendor ] &&
			grep -q $1 \$b/device/vendor && d=\${b##*/}; done;
		sleep 0.1; i=\$((i + 1)); done;
		[ -n \"\$d\" ] && echo disk \$d && echo /dev/\$d >/tmp/ulp.disk"
}

# ULP_RT: guest-2 commands that write /tmp/data to the path in
# /tmp/ulp.disk by 16 dd at once, each O_DIRECT on its own slice (queue
# depth 16), read it back the same way into /tmp/back and print both
# checksums
ULP_RT="d=\$(cat /tmp/ulp.disk); n=16; s=$((ULP_MIB / 16));
	for i in \$(seq 0 \$((n - 1))); do
		dd if=/tmp/data of=\$d bs=1M count=\$s skip=\$((i * s)) seek=\$((i * s)) oflag=direct conv=notrunc 2>/dev/null &
	done; wait;
	for i in \$(seq 0 \$((n - 1))); do
		dd if=\$d of=/tmp/back.\$i bs=1M count=\$s skip=\$((i * s)) iflag=direct 2>/dev/null &
	done; wait;
	for i in \$(seq 0 \$((n - 1))); do cat /tmp/back.\$i; done >/tmp/back;
	rm -f /tmp/back.*; md5sum /tmp/data /tmp/back"

# ulp_tgt_dd i|o ARGS: a guest-1 dd of ULP_MIB MiB with ARGS, reading
# (i) or writing (o) ULP_TGT with O_DIRECT where it is a disk
ulp_tgt_dd() {
	f=
	case $ULP_TGT in
	/dev/*) f=" ${1}flag=direct" ;;
	esac
	shift
	echo "dd bs=1M count=$ULP_MIB $*$f 2>/dev/null"
}

# ulp_compare FILE: FILE (guest 2's output of ULP_RT) has equal checksums
# of the data and of what came back, and guest 1's copy has them too
ulp_compare() {
	cat "$1"
	want=$(awk '$2 == "/tmp/data" { print $1 }' "$1")
	back=$(awk '$2 == "/tmp/back" { print $1 }' "$1")
	qr_exec 1 "$(ulp_tgt_dd i if=$ULP_TGT) | md5sum" >"$QR_DIR/disk.out" 2>&1
	disk=$(cut -d' ' -f1 "$QR_DIR/disk.out")
	echo "written $want, read back $back, target's disk $disk"
	[ -n "$want" ] && [ "$want" = "$back" ] && [ "$want" = "$disk" ]
}

# ulp_roundtrip: ULP_RT in guest 2, then ulp_compare; guest 1's disk is
# cleared first so that the round proves itself
ulp_roundtrip() {
	qr_exec 1 "$(ulp_tgt_dd o if=/dev/zero of=$ULP_TGT conv=notrunc)" || return 1
	gx 2 "$ULP_RT" >"$QR_DIR/rt.out" 2>&1 || { cat "$QR_DIR/rt.out"; return 1; }
	ulp_compare "$QR_DIR/rt.out"
}

# ulp_recover FAULT PATTERN: ulp_roundtrip with FAULT (link, qp, move or
# move-host): guest 2's link down for 2 s from the I/O's start; or, a
# second in, the ULP's first RC QP of guest 2 (rdma resource show qp)
# moved to ERR by x-inject-event qp-fatal; or, a second in, guest 1 (the
# target) migrated live to a new QEMU (qr_migrate, on the switch), which
# may lose no frame at all; or guest 2 (the initiator, the side that
# registers memory: fast registration for each I/O) migrated the same
# way, which must then go on registering: after that I/O one more round
# trip, and its fast_regs counter grows on the new QEMU.  The I/O must end and compare equal, with no hung
# task in guest 2's dmesg.  After a QP error its dmesg must show PATTERN
# (the ULP's reconnect); if the error came after the I/O's last command
# (the rest of the round trip is local), one more round trip must compare
# equal and PATTERN show within 60 s of it (the ULP notices at its next
# command or by its own timer: ib_srp's reconnect delay); a link outage of 2 s may instead be covered by
# the RC transport's own retries (its QPs never leave RTS), which the
# retransmission counters then show: guest 2's, or guest 1's (the
# target's RDMA WRITEs of read data into guest 2 are what the outage
# loses when the I/O is reading).
# ulp_connects: how many connections the ULP has made (0 where dmesg
# tells instead); a ULP test may redefine it
ulp_connects() { echo 0; }

# ulp_move_log: the figures of the last move (qr_migrate's, the
# retransmissions, the registrations after it) as a TAP comment
ulp_move_log() {
	qr_log "move: $(cat "$QR_DIR/move.mig" 2>/dev/null); $(cat "$QR_DIR/recover.retrans" 2>/dev/null)${1:+; $(cat "$QR_DIR/move.regs" 2>/dev/null)}"
}

# ulp_reconnected PATTERN C0: guest 2's dmesg since ulp_recover began,
# into recover.dmesg, with a line "reconnected: C0 -> C1 connections" if
# ulp_connects grew past C0; true if PATTERN is in it
ulp_reconnected() {
	c1=$(ulp_connects)
	qr_exec 2 dmesg >"$QR_DIR/recover.dmesg"
	[ "$c1" -gt "$2" ] && echo "reconnected: $2 -> $c1 connections" >>"$QR_DIR/recover.dmesg"
	grep -Eq "$1" "$QR_DIR/recover.dmesg"
}

ulp_recover() {
	qr_exec 2 'dmesg -c >/dev/null'
	r0=$(($(qr_counter 1 roce_retrans) + $(qr_counter 2 roce_retrans)))
	c0=$(ulp_connects)
	qr_exec 1 "$(ulp_tgt_dd o if=/dev/zero of=$ULP_TGT conv=notrunc)" || return 1
	qr_bg 2 io "$(printf '%s' "$ULP_RT" | tr '\n\t' '  ')" || return 1
	# the link goes down and a QP goes to ERR as the I/O starts, so that
	# neither can miss it (a fast round trip can be over a second in: the
	# I/O must still run after the QP error, checked below); a move half
	# a second in, once the ULP's QPs are busy (the I/O must outlast the
	# move, about a second and a half here)
	[ "$1" = link ] || [ "$1" = qp ] || sleep 0.5
	if [ "$1" = link ]; then
		qr_qom_set 2 x-link-up false && sleep 2 && qr_qom_set 2 x-link-up true ||
			return 1
		echo "guest 2's link down for 2 s"
	elif [ "$1" = move ] || [ "$1" = move-host ]; then
		mg=1
		[ "$1" = move ] || mg=2
		f0=$(qr_counter 2 fast_regs)
		qr_migrate $mg >"$QR_DIR/move.mig" 2>&1 || { cat "$QR_DIR/move.mig"; return 1; }
		f1=$(qr_counter 2 fast_regs)
		qr_exec 2 "[ ! -e /tmp/bg.io ]" || { echo "the I/O was over before the move"; return 1; }
		echo "guest $mg moved to a new QEMU during the I/O: $(cat "$QR_DIR/move.mig")"
		echo "guest 2's fast registrations: $f0 before the move, $f1 after it"
	else
		qpn=$(qr_exec 2 "rdma resource show qp link qroce_0/1 | awk '/type RC/ && /state RTS/ { for (i = 1; i < NF; i++) if (\$i == \"lqpn\") print \$(i + 1) }' | head -1")
		qr_exec 2 "rdma resource show qp link qroce_0/1" | sed 's/^/guest 2: /'
		[ -n "$qpn" ] || { echo "no RC QP in RTS"; return 1; }
		qr_qom_set 2 x-inject-event "qp-fatal:$qpn" || return 1
		qr_exec 2 "[ ! -e /tmp/bg.io ]" || { echo "the I/O was over before the QP error"; return 1; }
		echo "QP $qpn of guest 2 moved to ERR during the I/O"
	fi
	qr_bg_wait 2 io 300 >"$QR_DIR/io.out" 2>&1
	rc=$?
	r1=$(($(qr_counter 1 roce_retrans) + $(qr_counter 2 roce_retrans)))
	ulp_reconnected "$2" "$c0"
	if [ "$1" = qp ] && [ $rc -eq 0 ] && ! grep -Eq "$2" "$QR_DIR/recover.dmesg"; then
		# the QP error came after the ULP's last command of the I/O
		# (what was left was local: the read-back's checksums), so
		# nothing of it waited on the QP: the ULP must still notice,
		# at its next command or by its own timer, and reconnect
		echo "no reconnect when the I/O ended: one more round trip, then up to 60 s for the ULP's reconnect"
		ulp_compare "$QR_DIR/io.out" || return 1
		ulp_roundtrip || return 1
		i=0
		until ulp_reconnected "$2" "$c0" || [ $i -ge 30 ]; do
			sleep 2
			i=$((i + 1))
		done
	fi
	grep -E "$2|blocked for more than" "$QR_DIR/recover.dmesg"
	echo "the two guests retransmitted $((r1 - r0)) packets" |
		tee "$QR_DIR/recover.retrans"
	[ $rc -eq 0 ] && ulp_compare "$QR_DIR/io.out" &&
		! grep -q 'blocked for more than' "$QR_DIR/recover.dmesg" || return 1
	if [ "$1" = move-host ]; then
		# much of the I/O ran while the move copied memory; one more
		# round on the new QEMU registers memory there for certain
		ulp_roundtrip || return 1
		f2=$(qr_counter 2 fast_regs)
		echo "guest 2 registered memory $((f2 - f1)) times on the new QEMU" |
			tee "$QR_DIR/move.regs"
		[ "$f2" -gt "$f1" ] || return 1
	fi
	if grep -Eq "$2" "$QR_DIR/recover.dmesg"; then
		echo "the ULP reconnected"
	elif [ "$1" != qp ] && [ "$r1" -gt "$r0" ]; then
		echo "the RC retries covered the outage: no reconnect needed"
	elif [ "$1" = move ] || [ "$1" = move-host ]; then
		# nothing was in flight towards the moved guest while it was stopped
		echo "the move lost no frame: no retry, no reconnect needed"
	else
		echo "no reconnect ('$2') and no retries"
		return 1
	fi
}
