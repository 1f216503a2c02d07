#!/bin/sh
# Wire interop: guest 1 has qroce, guest 2 has Linux's rdma_rxe on a
# virtio-net NIC on the same segment.  ibv_rc_pingpong between the two
# implementations both ways; every frame either of them sent passes the
# ICRC/length checker and tshark.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/wire-lib.sh"
qr_init interop-rxe
qr_boot 2 peer-rxe pcap || { QR_FAIL=$((QR_FAIL + 1)); qr_finish; }

# cross SRV_GUEST SRV_DEV CLI_DEV SRV_IP ARGS
cross() {
	xg=$1 sdev=$2 cdev=$3 ip=$4
	shift 4
	xo=$((3 - xg))
	qr_bg $xg srv "ibv_rc_pingpong -d $sdev -g 1 $*" || return 1
	qr_wait_listen $xg 18515 || { qr_bg_wait $xg srv 5; return 1; }
	QR_TIMEOUT=300 qr_exec $xo "ibv_rc_pingpong -d $cdev -g 1 $* $ip" >"$QR_DIR/x.cli"
	crc=$?
	qr_bg_wait $xg srv 300 >"$QR_DIR/x.srv"
	src=$?
	cat "$QR_DIR/x.cli" "$QR_DIR/x.srv"
	[ $crc -eq 0 ] && [ $src -eq 0 ] &&
		[ "$(cat "$QR_DIR/x.cli" "$QR_DIR/x.srv" | grep -Ec '^[0-9]+ bytes in [0-9.]+ seconds')" -eq 2 ]
}
peer_is_rxe() {
	qr_exec 2 'ibv_devices; ls /sys/class/infiniband' >"$QR_DIR/devs" || return 1
	cat "$QR_DIR/devs"
	grep -q '^rxe0$' "$QR_DIR/devs" && ! grep -q qroce "$QR_DIR/devs"
}
wire() {
	cp "$QR_DIR/g1/wire.pcap" "$QR_DIR/wire-check.pcap"
	qr_wire_check "$QR_DIR/wire-check.pcap" 2000
}
qr_check "guest 2 runs rdma_rxe, not qroce" peer_is_rxe
qr_check "rxe client -> qroce server, 4096 B x 200" cross 1 qroce_0 rxe0 10.0.0.1 -n 200
qr_check "qroce client -> rxe server, 65536 B x 100" cross 2 rxe0 qroce_0 10.0.0.2 -s 65536 -n 100
qr_check "rxe client -> qroce server, 1 B and events" cross 1 qroce_0 rxe0 10.0.0.1 -s 1 -n 100 -e
qr_check "wire: frames of both implementations pass the checker and tshark" wire
qr_finish
