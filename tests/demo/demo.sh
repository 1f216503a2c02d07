#!/bin/sh
# The main job: two guests, each with a qroce NIC, joined by a loopback
# netdev; address them, ping across, show the RDMA device, and run
# ibv_rc_pingpong between them, polling and with completion events.
. "$(dirname "$0")/../lib/lib.sh"
qr_init demo
echo "== booting two guests (qroce NIC each, -netdev dgram on 127.0.0.1)"
# shellcheck disable=SC2086
qr_boot 2 ${QR_DEMO_OPTS-} || { echo "demo: guests did not boot"; exit 1; }
show() { # run in guest $1, prefix its output
	g=$1
	shift
	echo "== guest $g: $*"
	qr_exec "$g" "$@" >"$QR_DIR/out" 2>&1
	rc=$?
	sed "s/^/[g$g] /" "$QR_DIR/out"
	return $rc
}
fail=0
show 1 '/usr/sbin/ip -br addr show dev $QR_IF' || fail=1
show 2 '/usr/sbin/ip -br addr show dev $QR_IF' || fail=1
show 1 'ping -c 3 10.0.0.2' || fail=1
show 1 'ibv_devices' || fail=1
show 1 'ibv_devinfo -d qroce_0' || fail=1
echo "== ibv_rc_pingpong: server in guest 1, client in guest 2 (GID 1 = ::ffff:10.0.0.x)"
qr_bg 1 srv 'ibv_rc_pingpong -d qroce_0 -g 1 -n 1000' || fail=1
qr_wait_listen 1 18515 || fail=1
show 2 'ibv_rc_pingpong -d qroce_0 -g 1 -n 1000 10.0.0.1' || fail=1
echo "== guest 1: ibv_rc_pingpong (server)"
qr_bg_wait 1 srv >"$QR_DIR/out" 2>&1 || fail=1
sed "s/^/[g1] /" "$QR_DIR/out"
echo "== the same with completion events (-e)"
qr_bg 1 srv 'ibv_rc_pingpong -d qroce_0 -g 1 -n 1000 -e' || fail=1
qr_wait_listen 1 18515 || fail=1
show 2 'ibv_rc_pingpong -d qroce_0 -g 1 -n 1000 -e 10.0.0.1' || fail=1
qr_bg_wait 1 srv >"$QR_DIR/out" 2>&1 || fail=1
sed "s/^/[g1] /" "$QR_DIR/out"
case " ${QR_DEMO_OPTS-} " in
*" mgmt "*)
	echo "== the management NIC: guest 1's dmesg, fetched by the host over user networking"
	qr_exec 1 'dmesg >/srv/dmesg.txt' || fail=1
	busybox wget -q -O "$QR_DIR/dmesg.txt" "http://127.0.0.1:$QR_MGMT_PORT_1/dmesg.txt" || fail=1
	echo "host: $(wc -l <"$QR_DIR/dmesg.txt") lines from http://127.0.0.1:$QR_MGMT_PORT_1/dmesg.txt"
	;;
esac
qr_cleanup
if [ $fail -ne 0 ]; then
	echo "demo: FAILED (logs in $QR_DIR)"
	exit 1
fi
rm -rf "$QR_DIR"
echo "demo: OK"
