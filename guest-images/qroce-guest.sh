# qroce guest: the per-guest config, the NICs' addresses and the command
# agent, shared by the busybox initramfs's /init and the Debian image's
# qroce-agent.service (guest-images/debian/).  Sourced, not run: the
# caller defines load NAME (insmod from the initramfs's lists, or
# modprobe) and QR_GUEST_TAG (its name on the console) and calls
#
#   qr_guest_config   fw_cfg's opt/qroce/config into /etc/qroce.conf
#   qr_guest_net      the NICs found, addressed, rxe, their names appended
#   qr_guest_agent    the agent on /dev/ttyS1, until it is closed
#
# in that order, with the modules of the NICs loaded before qr_guest_net.

qr_guest_config() {
	CFG=/sys/firmware/qemu_fw_cfg/by_name/opt/qroce/config/raw
	: >/etc/qroce.conf
	if [ -r $CFG ]; then
		cat $CFG >/etc/qroce.conf
		. /etc/qroce.conf
	fi
}

# NIC names: qroce's netdev, and a virtio-net one if present
nic_of() { # vendor:device -> netdev name
	for d in /sys/class/net/*; do
		[ -e "$d/device/vendor" ] || continue
		v=$(cat "$d/device/vendor"):$(cat "$d/device/device")
		[ "$v" = "$1" ] && { basename "$d"; return 0; }
	done
	return 1
}

qr_guest_net() {
	QR_IF=$(nic_of 0x1b36:0x0015 || true)
	QR_VIF=""
	QR_MIF=""
	for d in /sys/class/net/*; do
		[ "$(basename "$(readlink "$d/device/driver" 2>/dev/null)")" = virtio_net ] || continue
		# the management NIC (user networking) has MACs 52:54:00:00:02:xx
		case $(cat "$d/address") in
		52:54:00:00:02:*) QR_MIF=$(basename "$d") ;;
		*) QR_VIF=$(basename "$d") ;;
		esac
	done
	if [ -n "$QR_IF" ]; then
		[ -n "${QR_MTU:-}" ] && /usr/sbin/ip link set "$QR_IF" mtu "$QR_MTU"
		/usr/sbin/ip link set "$QR_IF" up
		[ -n "${QR_IP:-}" ] && /usr/sbin/ip addr add "$QR_IP" dev "$QR_IF"
		[ -n "${QR_IP6:-}" ] && /usr/sbin/ip -6 addr add "$QR_IP6" dev "$QR_IF" nodad
	fi
	if [ -n "$QR_VIF" ]; then
		[ -n "${QR_MTU:-}" ] && /usr/sbin/ip link set "$QR_VIF" mtu "$QR_MTU"
		/usr/sbin/ip link set "$QR_VIF" up
		[ -n "${QR_VIP:-}" ] && /usr/sbin/ip addr add "$QR_VIP" dev "$QR_VIF"
	fi
	if [ "${QR_MGMT:-0}" = 1 ] && [ -n "$QR_MIF" ]; then
		# user networking: fixed addresses, as slirp hands them out; a web
		# server on /srv for the host to fetch files from (hostfwd to :80)
		/usr/sbin/ip link set "$QR_MIF" up
		/usr/sbin/ip addr add 10.0.2.15/24 dev "$QR_MIF"
		/usr/sbin/ip route add default via 10.0.2.2 dev "$QR_MIF"
		mkdir -p /srv
		busybox httpd -p 80 -h /srv
	fi
	if [ "${QR_RXE:-0}" = 1 ] && [ -n "$QR_VIF" ]; then
		load rdma_rxe && /usr/sbin/rdma link add rxe0 type rxe netdev "$QR_VIF"
	fi
	{ echo "QR_IF=$QR_IF"; echo "QR_VIF=$QR_VIF"; echo "QR_MIF=$QR_MIF"; } >>/etc/qroce.conf
	echo "$QR_GUEST_TAG: ready (qroce netdev ${QR_IF:-none}, virtio ${QR_VIF:-none})"
}

# The agent: one command per line, "ID SECONDS COMMAND"; answers with the
# command's output and a line "@@QREND ID STATUS".  The command runs in a
# session of its own; if it has not ended after SECONDS (the harness's own
# time limit), the whole session is killed and the line is "@@QREND ID 124
# killed" (a command that exits 124 itself has no "killed"), so that a hung
# command does not block every later one.
#
# The agent reaps every child before it reads the next line: busybox's
# read, interrupted by a SIGCHLD in the middle of a line, starts again
# and drops what it had read of it (seen as a command that lost its
# first 200 bytes, 2026-11-26).  A line whose ID is not one the harness
# makes ("c" SEQ "." PID) was damaged on the way: it is not run, and the
# answer "@@QRBAD" lets the harness send it again.
qr_guest_agent() {
	[ -c /dev/ttyS1 ] || return 0
	stty -F /dev/ttyS1 raw -echo -icrnl -onlcr 2>/dev/null
	exec 3</dev/ttyS1 4>/dev/ttyS1
	echo "@@QRREADY" >&4
	while read -r id tmo cmd <&3; do
		[ -n "$id" ] || continue
		case $id in
		c[0-9]*.[0-9]*) ;;
		*)
			echo "@@QRBAD" >&4
			continue
			;;
		esac
		case $tmo in '' | *[!0-9]*) tmo=180 ;; esac
		setsid sh -c 'cd /root && . /etc/qroce.conf && eval "$1"' sh "$cmd" \
			</dev/null >/tmp/agent.out 2>&1 &
		pid=$!
		# the watchdog, in a session of its own too (its sleep goes with
		# it); the pid may not lead that session yet when it is killed
		setsid sh -c 'sleep "$1" && : >/tmp/agent.killed.$2 && kill -KILL -- "-$2"' \
			sh "$tmo" "$pid" </dev/null >/dev/null 2>&1 &
		dog=$!
		wait $pid
		rc=$?
		kill -- "-$dog" 2>/dev/null
		kill "$dog" 2>/dev/null
		wait "$dog" 2>/dev/null
		[ -e /tmp/agent.killed.$pid ] && rc="124 killed"
		rm -f /tmp/agent.killed.$pid
		cat /tmp/agent.out >&4
		echo "@@QREND $id $rc" >&4
	done
}
