#!/bin/sh
# iSER (make test-ulp): LIO's iSCSI target with its iSER transport
# (ib_isert, configured through configfs by hand) exports a 128 MiB RAM
# disk from guest 1; guest 2 runs Debian's open-iscsi (iscsid, iscsiadm)
# with the iser interface: SendTargets discovery and login over iSER.  The
# same data check as SRP (64 MiB, O_DIRECT, 16 at once, checksums against
# the data and the target's disk); a login to a target name the portal
# does not have, or to a portal nobody listens on, fails with iscsiadm's
# error and the next works; the same I/O while guest 2's link is down for
# 2 s, and again while the session's QP is moved to the error state:
# iscsid recovers the session and the data compares equal; and again
# while the initiator's guest migrates live to a new QEMU (ib_iser
# fast-registers each command's pages there too); logout and the
# modules' unload are clean.
. "$(dirname "$0")/../lib/lib.sh"
. "$(dirname "$0")/ulp-lib.sh"
qr_init iser
QR_TIMEOUT=300
T=$ULP_T
IQN=iqn.2026-11.org.qroce:ram0
TG=$T/iscsi/$IQN/tpgt_1
NP=10.0.0.1:3260

# Ethernet MTU 1500 (path MTU 1024): the recovery checks put their fault
# a second into a 64 MiB round trip, and at 9000 the I/O can be over by
# then (CI saw it for iSER and NVMe-oF); t-nvmeof and t-nfs run at 9000
# (on the switch, where the initiator can move: qr_migrate)
qr_boot 2 mtu=1500 switch || { qr_fail "qr_boot 2: the guests did not boot"; qr_finish; }

# any initiator may log in (generated ACLs), and write
target_up() {
	gx 1 "$QLOAD; $ULP_BACKSTORE && qload crc32c_generic && qload ib_isert &&
		mkdir -p $TG/lun/lun_0 && ln -s $T/core/iblock_0/ram0 $TG/lun/lun_0/ram0 &&
		mkdir $TG/np/$NP && echo 1 >$TG/np/$NP/iser &&
		echo 0 >$TG/attrib/authentication && echo 1 >$TG/attrib/generate_node_acls &&
		echo 0 >$TG/attrib/demo_mode_write_protect && echo 1 >$TG/enable &&
		echo iser \$(cat $TG/np/$NP/iser) && echo target up" >"$QR_DIR/target.out" 2>&1
	rc=$?
	cat "$QR_DIR/target.out"
	[ $rc -eq 0 ] && grep -q '^iser 1' "$QR_DIR/target.out" &&
		grep -q 'target up' "$QR_DIR/target.out"
}

host_up() {
	gx 2 "$QLOAD; qload sd_mod && qload ib_iser &&
		echo InitiatorName=iqn.2026-11.org.qroce:guest2 >/etc/iscsi/initiatorname.iscsi &&
		mkdir -p /run/lock/iscsi && iscsid && sleep 1 && pidof iscsid" \
		>"$QR_DIR/host.out" 2>&1 && ulp_data >>"$QR_DIR/host.out"
	rc=$?
	cat "$QR_DIR/host.out"
	[ $rc -eq 0 ]
}

# SendTargets discovery through the iser interface lists the target
discover() {
	qr_exec 2 "iscsiadm -m discovery -t st -p $NP -I iser" >"$QR_DIR/disc.out" 2>&1
	rc=$?
	cat "$QR_DIR/disc.out"
	[ $rc -eq 0 ] && grep -q "^$NP,1 $IQN\$" "$QR_DIR/disc.out"
}

# login_refused IQN PORTAL: iscsiadm fails (a new node record for it
# first, as an administrator would add it by hand)
login_refused() {
	t0=$(date +%s)
	gx 2 "iscsiadm -m node -o new -T $1 -p $2 -I iser >/dev/null &&
		iscsiadm -m node -o update -T $1 -p $2 -I iser -n node.session.initial_login_retry_max -v 1 &&
		iscsiadm -m node -T $1 -p $2 -I iser --login; r=\$?;
		iscsiadm -m node -o delete -T $1 -p $2 -I iser; exit \$r" \
		>"$QR_DIR/refused.out" 2>&1
	rc=$?
	cat "$QR_DIR/refused.out"
	echo "ended with status $rc after $(($(date +%s) - t0)) s"
	[ $rc -ne 0 ] && [ $rc -ne 124 ] && ! grep -q successful "$QR_DIR/refused.out" &&
		grep -q "Could not login to \[iface: iser, target: $1, portal: ${2%:*},${2#*:}\]" \
			"$QR_DIR/refused.out"
}

login() {
	gx 2 "iscsiadm -m node -T $IQN -p $NP -I iser --login &&
		iscsiadm -m session | grep iser && $(ulp_disk LIO-ORG)" >"$QR_DIR/login.out" 2>&1
	rc=$?
	cat "$QR_DIR/login.out"
	[ $rc -eq 0 ] && grep -q '^disk sd' "$QR_DIR/login.out" &&
		grep -q "^iser: .*$IQN" "$QR_DIR/login.out"
}

logout() {
	gx 2 "iscsiadm -m node -T $IQN -p $NP -I iser --logout &&
		! iscsiadm -m session 2>/dev/null | grep -q $IQN &&
		d=\$(basename \$(cat /tmp/ulp.disk)) && [ ! -e /sys/block/\$d ] &&
		kill \$(pidof iscsid) && sleep 1 && rmmod ib_iser &&
		! [ -d /sys/module/ib_iser ] && echo logged out" >"$QR_DIR/logout.out" 2>&1
	rc=$?
	cat "$QR_DIR/logout.out"
	[ $rc -eq 0 ] && grep -q 'logged out' "$QR_DIR/logout.out"
}

target_down() {
	gx 1 "echo 0 >$TG/enable && rmdir $TG/np/$NP && rm $TG/lun/lun_0/ram0 &&
		rmdir $TG/lun/lun_0 $TG $T/iscsi/$IQN && $ULP_BACKSTORE_DOWN &&
		rmmod ib_isert && echo target down" >"$QR_DIR/tdown.out" 2>&1
	rc=$?
	cat "$QR_DIR/tdown.out"
	[ $rc -eq 0 ] && grep -q 'target down' "$QR_DIR/tdown.out"
}

qr_check "target: LIO iSCSI with iSER on $NP, iblock on a 128 MiB brd" target_up
qr_check "initiator: ib_iser, iscsid, $ULP_MIB MiB of random data ready" host_up
qr_check "iscsiadm SendTargets discovery over iSER lists $IQN" discover
qr_check "login to a target name the portal does not have fails" login_refused iqn.2026-11.org.qroce:nothing $NP
qr_check "login to a portal nobody listens on fails" login_refused $IQN 10.0.0.1:3261
qr_check "login over iSER: the LIO disk appears" login
qr_check "$ULP_MIB MiB written and read back, O_DIRECT, 16 at once: checksums equal" ulp_roundtrip
qr_check "recovery: link down 2 s during the I/O: it completes (RC retries or a reconnect), data equal" \
	ulp_recover link 'detected conn error'
qr_check "recovery: ib_iser's QP to ERR (qp-fatal) during the I/O, the session recovers, data equal" \
	ulp_recover qp 'detected conn error'
qr_check "recovery: the initiator's guest (fast registration per command) migrated live during the I/O, registers again, data equal" \
	ulp_recover move-host 'detected conn error'
ulp_move_log host
qr_check "logout: the session and the disk go, ib_iser unloads" logout
qr_check "target: configfs taken down, ib_isert unloads" target_down
qr_finish
