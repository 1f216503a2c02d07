#!/bin/sh
# SRP over RoCE (make test-ulp): Linux's SRP target (ib_srpt, LIO,
# configured through configfs by hand) exports a 128 MiB RAM disk from
# guest 1; guest 2's ib_srp logs in through RDMA CM (add_target with
# dest=IP:port).  64 MiB of random data written with O_DIRECT by 16
# writers at once (queue depth 16), read back the same way, checksums
# compared with the data and with the target's disk; a login to a wrong
# port, a wrong address or a wrong target ID fails with an error and the
# next one works; the same I/O while guest 2's link is down for 2 s, and
# again while one of ib_srp's QPs is moved to the error state: ib_srp
# reconnects and the data compares equal; logout and the modules' unload
# are clean.
. "$(dirname "$0")/../lib/lib.sh"
. "$(dirname "$0")/ulp-lib.sh"
qr_init srp
QR_TIMEOUT=300
PORT=5555
T=$ULP_T
TPG=tpg_1

# Ethernet MTU 1500 (path MTU 1024), as in u-iser.sh: the recovery
# checks put their fault a second into a 64 MiB round trip, and at 9000
# the I/O can be over by then (t-nvmeof and t-nfs run at 9000)
qr_boot 2 mtu=1500 || { qr_fail "qr_boot 2: the guests did not boot"; qr_finish; }

# The target port's name: its GID 0 as ib_srpt spells it (0x and 32 hex
# digits).  Logins through RDMA CM come to this port with the initiator's
# port ID: 8 bytes of initiator extension (0) and the interface ID of the
# initiator's GID 0; the ACL is named after it.
PORTNAME='p=0x$(tr -d : </sys/class/infiniband/qroce_0/ports/1/gids/0)'

target_up() {
	iid=$(qr_exec 2 'cut -d: -f5- /sys/class/infiniband/qroce_0/ports/1/gids/0 | tr -d :')
	INIT=0x0000000000000000$iid
	echo "initiator port ID $INIT"
	gx 1 "$QLOAD; $PORTNAME; $ULP_BACKSTORE && qload ib_srpt &&
		mkdir -p $T/srpt/\$p/$TPG/lun/lun_0 &&
		ln -s $T/core/iblock_0/ram0 $T/srpt/\$p/$TPG/lun/lun_0/ram0 &&
		mkdir -p $T/srpt/\$p/$TPG/acls/$INIT/lun_0 &&
		ln -s $T/srpt/\$p/$TPG/lun/lun_0 $T/srpt/\$p/$TPG/acls/$INIT/lun_0/lun_0 &&
		echo $PORT >$T/srpt/discovery_auth/rdma_cm_port &&
		echo 1 >$T/srpt/\$p/$TPG/enable &&
		echo target \$p up on port \$(cat $T/srpt/discovery_auth/rdma_cm_port) &&
		echo guid \$(tr -d : </sys/class/infiniband/qroce_0/node_guid)" \
		>"$QR_DIR/target.out" 2>&1
	rc=$?
	cat "$QR_DIR/target.out"
	GUID=$(sed -n 's/^guid //p' "$QR_DIR/target.out")
	[ $rc -eq 0 ] && grep -q "up on port $PORT" "$QR_DIR/target.out" &&
		[ -n "$GUID" ]
}

host_up() {
	gx 2 "$QLOAD; qload sd_mod && qload ib_srp && ls /sys/class/infiniband_srp/" \
		>"$QR_DIR/host.out" 2>&1 && ulp_data >>"$QR_DIR/host.out"
	rc=$?
	cat "$QR_DIR/host.out"
	[ $rc -eq 0 ] && grep -q srp-qroce_0-1 "$QR_DIR/host.out"
}

# login DEST: add_target to DEST (IP:port); the SCSI disk of the target
# (vendor LIO-ORG) must appear.  ib_srpt's IDs are its node GUID.
login() {
	gx 2 "echo id_ext=$GUID,ioc_guid=$GUID,dest=$1,queue_size=32,max_cmd_per_lun=32 \
			>/sys/class/infiniband_srp/srp-qroce_0-1/add_target || exit 1;
		$(ulp_disk LIO-ORG)" >"$QR_DIR/login.out" 2>&1
	rc=$?
	cat "$QR_DIR/login.out"
	[ $rc -eq 0 ] && grep -q '^disk sd' "$QR_DIR/login.out"
}

# login_refused DEST [ID]: the write to add_target ends with an error
login_refused() {
	t0=$(date +%s)
	gx 2 "echo id_ext=${2:-$GUID},ioc_guid=${2:-$GUID},dest=$1 \
		>/sys/class/infiniband_srp/srp-qroce_0-1/add_target && echo accepted" \
		>"$QR_DIR/refused.out" 2>&1
	rc=$?
	cat "$QR_DIR/refused.out"
	echo "ended with status $rc after $(($(date +%s) - t0)) s"
	[ $rc -ne 0 ] && ! grep -q accepted "$QR_DIR/refused.out"
}

# logout: delete the remote port, the disk goes; ib_srp unloads
logout() {
	gx 2 "for p in /sys/class/srp_remote_ports/port-*; do echo 1 >\$p/delete; done;
		i=0; while ls /sys/class/srp_remote_ports/ | grep -q port- && [ \$i -lt 100 ]; do
			sleep 0.1; i=\$((i + 1)); done;
		d=\$(basename \$(cat /tmp/ulp.disk)); [ ! -e /sys/block/\$d ] && rmmod ib_srp &&
		! [ -d /sys/module/ib_srp ] && echo logged out" >"$QR_DIR/logout.out" 2>&1
	rc=$?
	cat "$QR_DIR/logout.out"
	[ $rc -eq 0 ] && grep -q 'logged out' "$QR_DIR/logout.out"
}

# the target comes down in the reverse order and ib_srpt unloads
target_down() {
	gx 1 "$PORTNAME; s=$T/srpt/\$p/$TPG;
		echo 0 >\$s/enable && rm \$s/acls/$INIT/lun_0/lun_0 &&
		rmdir \$s/acls/$INIT/lun_0 \$s/acls/$INIT &&
		rm \$s/lun/lun_0/ram0 && rmdir \$s/lun/lun_0 \$s $T/srpt/\$p &&
		echo 0 >$T/srpt/discovery_auth/rdma_cm_port && rmdir $T/srpt &&
		$ULP_BACKSTORE_DOWN && rmmod ib_srpt && echo target down" \
		>"$QR_DIR/tdown.out" 2>&1
	rc=$?
	cat "$QR_DIR/tdown.out"
	[ $rc -eq 0 ] && grep -q 'target down' "$QR_DIR/tdown.out"
}

qr_check "target: ib_srpt on qroce_0, LIO iblock on a 128 MiB brd, RDMA CM port $PORT" target_up
qr_check "initiator: ib_srp on qroce_0, $ULP_MIB MiB of random data ready" host_up
qr_check "login to a port nobody listens on fails with an error" login_refused 10.0.0.1:5556
qr_check "login to an address nobody has fails with an error" login_refused 10.0.0.9:$PORT
qr_check "login with a target ID the target does not have is rejected" login_refused 10.0.0.1:$PORT 1234
qr_check "login through RDMA CM to 10.0.0.1:$PORT: the LIO disk appears" login 10.0.0.1:$PORT
qr_check "$ULP_MIB MiB written and read back, O_DIRECT, 16 at once: checksums equal" ulp_roundtrip
qr_check "recovery: link down 2 s during the I/O: it completes (RC retries or a reconnect), data equal" \
	ulp_recover link 'reconnect succeeded'
qr_check "recovery: ib_srp's QP to ERR (qp-fatal) during the I/O, reconnects, data equal" \
	ulp_recover qp 'reconnect succeeded'
qr_check "logout: the remote port and the disk go, ib_srp unloads" logout
qr_check "target: configfs taken down, ib_srpt unloads" target_down
qr_finish
