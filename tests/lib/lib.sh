# qroce test harness (POSIX sh), sourced by the test files (tests/suite/,
# tests/ulp/, tests/bench/, tests/demo/; tests/README.md).
#
#   qr_init NAME            log directory build/test-logs/NAME, cleanup traps
#   qr_boot N [OPTS...]     boot N guests on one L2 segment; OPTS:
#                           switch (a Linux bridge with a tap per guest in a
#                           private network namespace; the default for N >= 3),
#                           hub (QEMU's multicast socket on 127.0.0.1: every
#                           frame to every guest, drops under load),
#                           rxe (also a virtio-net NIC with rdma_rxe on it),
#                           peer-rxe (the last guest has no qroce: a virtio-net
#                           NIC with rdma_rxe takes its place on the segment),
#                           noqroce-driver, mtu=N (the guests' Ethernet MTU:
#                           9000 unless asked, so RoCE's path MTU is 4096;
#                           mtu=1500 gives 1024), pcap (filter-dump per guest),
#                           dgram (two guests: a UDP wire that can drop frames
#                           instead of the default lossless stream on a
#                           Unix socket),
#                           trace (QEMU trace of qroce_* events),
#                           iothread (each qroce's engine in an IOThread,
#                           -device qroce,iothread=; QR_IOTHREAD=1 in the
#                           environment asks for it in every boot),
#                           iommu (an intel-iommu in front of the devices,
#                           the guest kernel with intel_iommu=on: every DMA
#                           of the device goes through the guest's mappings),
#                           console (a third serial port, ttyS2, on the
#                           pipes gI/con.in and .out, and QEMU in a session
#                           of its own: an interactive console, qroce-vm),
#                           qemu=ARGS (ARGS added to every guest's QEMU),
#                           debian (the Debian image of make image-debian
#                           instead of the busybox initramfs: systemd, udev
#                           and the distribution's packages, each guest on
#                           a qcow2 overlay of build/debian/disk.raw)
#                           QR_DEVOPTS (environment) is appended to every
#                           -device qroce,... (e.g. QR_DEVOPTS=dcqcn=off)
#   qr_exec G CMD           run CMD in guest G (1-based) through its agent;
#                           prints the output, returns CMD's exit status
#   qr_check DESC CMD...    run CMD...; count it, print an "ok" or "not ok"
#                           TAP line, CMD's output as comments if it failed
#   qr_fail DESC            count and print a failure that is not a check
#                           (guests that did not boot)
#   qr_finish               print the plan and the counts; exit 0 only if
#                           nothing failed
#   qr_accel                the guests' accelerator, once a run: QR_ACCEL
#                           (environment) auto (default: KVM if a short
#                           probe boot works, else TCG, with a one-line
#                           note), kvm or tcg; QR_ACCEL_ARGS its QEMU args
#   qr_bg, qr_bg_wait, qr_wait_listen, qr_wait_cm_free, qr_wait_cm_listen,
#   qr_pingpong, qr_counter, qr_perftest, qr_atomics, qr_server_client: see below
#
# Every QEMU started here is killed by its pid on exit or interruption, and
# the network namespace of a switch is removed then.  Logs are kept when a
# check failed, removed otherwise.  The output is TAP (tests/lib/tap.sh):
# "TAP version 13", a line per check, the plan at the end; everything else
# the harness prints is a comment.

# The tree's top: QR_TOP if set, else the nearest directory at or above
# the sourcing script's own that holds tests/lib/lib.sh (a sourced file
# cannot see its own path in POSIX sh; the scripts that source this one
# live at any depth under tests/, and t-harness's fakes outside it).
qr_find_top() {
	qf_d=$(cd "$(dirname "$0")" 2>/dev/null && pwd) || qf_d=$(pwd)
	while [ ! -f "$qf_d/tests/lib/lib.sh" ]; do
		[ "$qf_d" = / ] && return 1
		qf_d=$(dirname "$qf_d")
	done
	echo "$qf_d"
}
QR_TOP=${QR_TOP:-$(qr_find_top)} || {
	echo "tests/lib/lib.sh: no tree above $0 holds tests/lib/lib.sh; set QR_TOP" >&2
	exit 2
}
QR_B=$QR_TOP/build
QR_QEMU=${QR_QEMU:-$QR_B/qemu/qemu-system-x86_64}
# the guests' kernel (make kernel: LINUX=7.3 or 6.12) and its release
QR_KVER=$(cat "$QR_B/kernel/release" 2>/dev/null)
QR_KERNEL=${QR_KERNEL:-$QR_B/kernel/boot/vmlinuz-$QR_KVER}
QR_INITRD=${QR_INITRD:-$QR_B/initramfs.cpio.gz}
# the Debian guest (qr_boot N debian): disk.raw, vmlinuz, initrd.img
QR_DEBIAN=${QR_DEBIAN:-$QR_B/debian}
QR_PIDS=""
QR_PASS=0
QR_FAIL=0
QR_SEQ=0
QR_N=0
QR_NS=""
QR_WIRE=""
QR_ACCEL_ARGS=""
. "$QR_TOP/tests/lib/tap.sh"

qr_log() { echo "# [$QR_NAME] $*"; }

# Every guest test checks its guests' kernel log before they go: a
# WARNING:, BUG: or Oops fails it.  Run by qr_cleanup while the guests are
# still up (not from the exit traps, where nothing can be reported).
qr_dmesg_all() {
	qd=1
	while [ $qd -le "$QR_N" ]; do
		qr_check "guest $qd: dmesg has no WARNING:, BUG: or Oops" qr_dmesg_clean $qd
		qd=$((qd + 1))
	done
}

qr_dmesg_clean() {
	QR_TIMEOUT=30 qr_exec "$1" 'dmesg' >"$QR_DIR/dmesg.g$1" || {
		echo "guest $1 does not answer"; return 1; }
	! grep -E 'WARNING:|BUG:|Oops' "$QR_DIR/dmesg.g$1"
}

qr_cleanup() {
	if [ -n "$QR_PIDS" ] && [ "${QR_IN_TRAP:-0}" = 0 ] && [ "$QR_N" -gt 0 ] &&
		qr_alive; then
		qr_dmesg_all
	fi
	QR_N=0
	for p in $QR_PIDS; do
		kill "$p" 2>/dev/null
	done
	for p in $QR_PIDS; do
		wait "$p" 2>/dev/null
	done
	QR_PIDS=""
	qr_net_down
}

# The switch: a private network namespace qr<pid of this shell> holding a
# bridge br0 with a tap per guest (tapI), and for the rxe NICs a second
# bridge br1 (vtapI).  Nothing in it is connected to the host's network.
# The taps are made persistent before QEMU opens them, so that they are
# enslaved and up before the guest sends its first frame; they go away with
# the namespace.
qr_net_up() { # N RXE [HOSTS]
	qr_net_sweep
	QR_NS=qr$$
	ip netns add "$QR_NS" || { QR_NS=""; return 1; }
	QR_NS2=""
	if [ "${3:-1}" = 2 ]; then
		QR_NS2=qr$$b
		ip netns add "$QR_NS2" || { QR_NS2=""; return 1; }
	fi
	# no IPv6 link-local address (and no router solicitation or DAD
	# frames) on the bridges and taps: the segment carries guests' frames only
	nb=0
	[ "$2" = 1 ] && nb=1
	for ns in $QR_NS $QR_NS2; do
		ip netns exec "$ns" sh -c 'echo 1 >/proc/sys/net/ipv6/conf/default/disable_ipv6' 2>/dev/null
		ip -n "$ns" link set lo up
		b=0
		while [ $b -le $nb ]; do
			# STP off and no forwarding delay: ports forward as
			# soon as they are up; no multicast snooping: multicast
			# is flooded, as on an unmanaged switch
			ip -n "$ns" link add br$b type bridge stp_state 0 \
				forward_delay 0 mcast_snooping 0 || return 1
			ip -n "$ns" link set br$b mtu 9216 up || return 1
			b=$((b + 1))
		done
	done
	if [ -n "$QR_NS2" ]; then
		# two hosts: their own network (a veth pair, 10.99.0.1 and
		# .2, MTU 9266) carries a VXLAN tunnel that joins the two
		# bridges; the tunnel copies the guests' ECN bits out and a CE
		# mark back in
		ip -n "$QR_NS" link add qrul type veth peer name qrul netns "$QR_NS2" || return 1
		h=1
		for ns in $QR_NS $QR_NS2; do
			ip -n "$ns" addr add 10.99.0.$h/24 dev qrul &&
				ip -n "$ns" link set qrul mtu 9266 up &&
				ip -n "$ns" link add vx0 type vxlan id 4242 dstport 4789 \
					local 10.99.0.$h remote 10.99.0.$((3 - h)) dev qrul tos inherit &&
				ip -n "$ns" link set vx0 mtu 9216 master br0 up || return 1
			h=$((h + 1))
		done
	fi
	i=1
	while [ $i -le "$1" ]; do
		ns=$QR_NS
		[ -n "$QR_NS2" ] && [ $i -gt $((($1 + 1) / 2)) ] && ns=$QR_NS2
		eval "QR_GNS_$i=$ns"
		for t in tap$i:br0 vtap$i:br1; do
			tap=${t%:*} br=${t#*:}
			[ "$br" = br1 ] && [ $nb = 0 ] && continue
			ip -n "$ns" tuntap add "$tap" mode tap &&
				ip -n "$ns" link set "$tap" mtu 9216 \
					txqueuelen "${QR_TAPQLEN:-1000}" master "$br" up ||
				return 1
		done
		i=$((i + 1))
	done
}

# qr_gns G: the network namespace of guest G's switch port (its host)
qr_gns() {
	eval "echo \${QR_GNS_$1:-\$QR_NS}"
}

qr_net_down() {
	[ -z "${QR_NS2:-}" ] || ip netns del "$QR_NS2" 2>/dev/null
	QR_NS2=""
	[ -n "$QR_NS" ] || return 0
	ip netns del "$QR_NS" 2>/dev/null
	QR_NS=""
}

# Remove switch namespaces of harness shells that no longer exist (killed
# by SIGKILL, which no trap sees) and in which no process is left.
qr_net_sweep() {
	for ns in $(ip netns list 2>/dev/null | sed -n 's/^\(qr[0-9][0-9]*b\{0,1\}\)\( .*\)\{0,1\}$/\1/p'); do
		p=${ns#qr}
		kill -0 "${p%b}" 2>/dev/null && continue
		[ -z "$(ip netns pids "$ns" 2>/dev/null)" ] && ip netns del "$ns" 2>/dev/null
	done
}

qr_init() {
	qr_accel_valid || exit 2
	QR_NAME=$1
	echo "TAP version 13"
	QR_DIR=$QR_B/test-logs/$QR_NAME
	rm -rf "$QR_DIR"
	mkdir -p "$QR_DIR"
	for f in ${QR_NEED-"$QR_QEMU" "$QR_KERNEL" "$QR_INITRD"}; do
		[ -e "$f" ] || { echo "$QR_NAME: $f missing: run 'make'" >&2; exit 2; }
	done
	trap 'QR_IN_TRAP=1; qr_cleanup' EXIT
	trap 'QR_IN_TRAP=1; qr_cleanup; exit 130' INT TERM HUP
}

# A UDP port pair that nothing listens on, derived from our pid.
qr_ports() {
	base=$((20000 + ($$ * 7 + QR_SEQ * 131) % 30000))
	while ss -Hlnut 2>/dev/null | awk '{print $5}' | grep -q ":$base\$\|:$((base + 1))\$"; do
		base=$((base + 2))
	done
	echo "$base"
}

# qr_boot N [OPTS...]: boot N guests (the options: the head of this file).
# One step per function below, in this order; their state is in the same
# shell variables qr_boot always used (rxe, wire, mtu, ...).
qr_boot() {
	n=$1
	shift
	qr_boot_opts "$n" "$@" || return
	QR_N=$n
	qr_boot_switch "$@" || return
	[ -n "$QR_ACCEL_ARGS" ] || qr_accel || return
	QR_WIRE=$wire
	port=$(qr_ports)
	QR_MGMT_BASE=$((port + 10))
	mcast=$((40000 + $$ % 20000))
	QR_MCAST=$mcast
	i=1
	while [ $i -le "$n" ]; do
		d=$QR_DIR/g$i
		qr_boot_config $i "$d"
		qr_boot_wire $i
		qr_boot_nic $i "$d"
		qr_boot_disk $i "$d" || return
		qr_boot_launch $i "$d"
		i=$((i + 1))
	done
	qr_boot_wait "$n"
}

# qr_boot_opts N OPTS...: qr_boot's options into rxe drv mtu pcap trace
# rxepeer wire mgmt hosts iommu iot con qargs; status 2 for one it does
# not know or a number of guests it cannot join
qr_boot_opts() {
	rxe=0 drv=1 mtu=9000 pcap=0 trace=0 rxepeer=0 wire=stream mgmt=0 hosts=1
	iommu=0 con=0 qargs="" distro=""
	iot=${QR_IOTHREAD:-0}
	[ "$1" -ge 3 ] && wire=switch
	qo_n=$1
	shift
	for o in "$@"; do
		case $o in
		dgram) wire=dgram ;;
		hub) wire=hub ;;
		switch) wire=switch ;;
		rxe) rxe=1 ;;
		peer-rxe) rxepeer=1 ;;
		noqroce-driver) drv=0 ;;
		mtu=*) mtu=${o#mtu=} ;;
		pcap) pcap=1 ;;
		trace) trace=1 ;;
		mgmt) mgmt=1 ;;
		iothread) iot=1 ;;
		iommu) iommu=1 ;;
		hosts2) hosts=2 wire=switch ;;
		console) con=1 ;;
		qemu=*) qargs="$qargs ${o#qemu=}" ;;
		debian) distro=debian ;;
		*) echo "qr_boot: unknown option $o" >&2; return 2 ;;
		esac
	done
	if [ $wire = dgram ] && [ "$qo_n" -ne 2 ]; then
		echo "qr_boot: dgram joins two guests only" >&2
		return 2
	fi
	[ "$qo_n" -le 9 ] || { echo "qr_boot: at most 9 guests" >&2; return 2; }
	[ $wire = stream ] && [ "$qo_n" -ne 2 ] && wire=hub
	return 0
}

# qr_boot_switch OPTS...: on the switch wire, build it (qr_net_up); if
# that fails, the hub instead when the switch was the default, status 1
# when OPTS asked for it
qr_boot_switch() {
	[ $wire = switch ] || return 0
	qr_net_down
	qr_net_up "$n" $rxe $hosts >"$QR_DIR/switch.log" 2>&1 && return 0
	cat "$QR_DIR/switch.log" >&2
	qr_net_down
	# asked for: fail; by default (N >= 3): the hub
	case " $* " in
	*" switch "* | *" hosts2 "*) qr_log "could not build the switch (needs root)"; return 1 ;;
	esac
	qr_log "could not build the switch (needs root): the hub instead"
	wire=hub
}

# qr_boot_config G DIR: guest G's directory, its agent's FIFOs and the
# config /init reads (fw_cfg)
qr_boot_config() {
	mkdir -p "$2"
	rm -f "$2/agent.in" "$2/agent.out" "$2/qmp.sock" "$2/con.in" "$2/con.out"
	mkfifo "$2/agent.in" "$2/agent.out"
	[ "$con" = 1 ] && mkfifo "$2/con.in" "$2/con.out"
	cat >"$2/config" <<CFG
QR_NAME=g$1
QR_IP=10.0.0.$1/24
QR_IP6=fd00::$1/64
QR_VIP=10.0.1.$1/24
QR_RXE=$rxe
QR_QROCE=$drv
QR_MTU=$mtu
CFG
}

# qr_boot_wire G: guest G's two netdevs on the wire kind, net (qroce's)
# and vnet (virtio-net's, for rxe), and netns (the switch's namespace
# command, empty on the other wires)
qr_boot_wire() {
	netns=""
	if [ $wire = switch ]; then
		netns="ip netns exec $(qr_gns "$1")"
		net="-netdev tap,id=n0,ifname=tap$1,script=no,downscript=no"
		vnet="-netdev tap,id=n1,ifname=vtap$1,script=no,downscript=no"
	elif [ $wire = dgram ]; then
		me=$((port + $1 - 1))
		peer=$((port + 2 - $1))
		net="-netdev dgram,id=n0,local.type=inet,local.host=127.0.0.1,local.port=$me,remote.type=inet,remote.host=127.0.0.1,remote.port=$peer"
		vnet="-netdev dgram,id=n1,local.type=inet,local.host=127.0.0.1,local.port=$((me + 2)),remote.type=inet,remote.host=127.0.0.1,remote.port=$((peer + 2))"
	elif [ $wire = stream ]; then
		# a lossless wire, as RoCE fabrics are (PFC): guest 1
		# listens, guest 2 connects.  A Unix socket: TCP's
		# Nagle delays would add 40 ms to small frames.
		if [ "$1" -eq 1 ]; then
			side="server=on"
		else
			side="server=off,reconnect-ms=100"
		fi
		net="-netdev stream,id=n0,$side,addr.type=unix,addr.path=$QR_DIR/wire0.sock"
		vnet="-netdev stream,id=n1,$side,addr.type=unix,addr.path=$QR_DIR/wire1.sock"
	else
		# the hub: QEMU's multicast socket, bound to loopback so
		# that no frame leaves the machine
		net="-netdev socket,id=n0,mcast=230.0.0.1:$mcast,localaddr=127.0.0.1"
		vnet="-netdev socket,id=n1,mcast=230.0.0.1:$((mcast + 1)),localaddr=127.0.0.1"
	fi
	# with a console, QEMU in a session of its own: a terminal's Ctrl-C
	# goes to the console, not to QEMU (setsid execs: $! stays QEMU's)
	[ "$con" = 1 ] && netns="setsid $netns"
	return 0
}

# qr_boot_nic G DIR: guest G's devices: nic (qroce, or virtio-net for
# peer-rxe's last guest), extra (rxe's NIC, pcap, trace, mgmt, console,
# qemu=), pre and append (the vIOMMU); what they add to the config goes
# there
qr_boot_nic() {
	extra=""
	nic="-device qroce,id=qroce0,netdev=n0,mac=52:54:00:00:00:0$1${QR_DEVOPTS:+,$QR_DEVOPTS}"
	if [ "$iot" = 1 ]; then
		# the RoCE engine in an IOThread of its own
		nic="-object iothread,id=qrio0 $nic,iothread=qrio0"
	fi
	if [ $rxepeer = 1 ] && [ "$1" -eq "$n" ]; then
		# rdma_rxe on virtio-net, on the qroce segment, same addresses
		nic="-device virtio-net-pci,netdev=n0,romfile=,mac=52:54:00:00:00:0$1"
		printf 'QR_RXE=1\nQR_QROCE=0\nQR_VIP=10.0.0.%s/24\n' "$1" >>"$2/config"
	fi
	[ $rxe = 1 ] && extra="$vnet -device virtio-net-pci,netdev=n1,romfile=,mac=52:54:00:00:01:0$1"
	[ $pcap = 1 ] && extra="$extra -object filter-dump,id=f0,netdev=n0,file=$2/wire.pcap"
	[ $trace = 1 ] && extra="$extra -trace qroce_*,file=$2/trace.log"
	if [ $mgmt = 1 ]; then
		# a management NIC on user networking: the guest is
		# 10.0.2.15 and reaches the host's loopback as 10.0.2.2;
		# the host reaches the guest's port 80 on QR_MGMT_PORT_i
		mp=$((QR_MGMT_BASE + $1))
		eval "QR_MGMT_PORT_$1=$mp"
		extra="$extra -netdev user,id=m0,restrict=off,hostfwd=tcp:127.0.0.1:$mp-:80"
		extra="$extra -device virtio-net-pci,netdev=m0,romfile=,mac=52:54:00:00:02:0$1"
		echo "QR_MGMT=1" >>"$2/config"
	fi
	[ "$con" = 1 ] && extra="$extra -chardev pipe,id=con,path=$2/con -device isa-serial,chardev=con"
	extra="$extra$qargs"
	# a vIOMMU first (it must exist before the devices behind it),
	# the guest's kernel using it
	pre= append=
	[ $iommu = 1 ] && pre="-device intel-iommu" append="intel_iommu=on iommu=nopt"
	return 0
}

# qr_boot_disk G DIR: the Debian guest's (option debian) kernel, initrd,
# root and disk for qr_qemu: the image's own kernel and initramfs, and a
# qcow2 overlay of its disk for this guest alone (the guests share no
# writes, the base stays as built), and QR_DEBIAN_SMP vCPUs (default 1:
# under TCG on 2 host cores, 2 each made DKMS faster and both boots
# slower, docs/harness.md).  Nothing for the busybox guest.
qr_boot_disk() {
	kernel="" initrd="" root="" disk="" smp=""
	[ "${distro:-}" = debian ] || return 0
	for f in disk.raw vmlinuz initrd.img; do
		[ -f "$QR_DEBIAN/$f" ] || {
			qr_log "$QR_DEBIAN/$f missing: run 'make image-debian'"; return 1; }
	done
	kernel=$QR_DEBIAN/vmlinuz initrd=$QR_DEBIAN/initrd.img
	rm -f "$2/disk.qcow2"
	qemu-img create -q -f qcow2 -b "$QR_DEBIAN/disk.raw" -F raw "$2/disk.qcow2" ||
		{ qr_log "qemu-img create of $2/disk.qcow2 failed"; return 1; }
	# virtio-blk where this QEMU has it; else q35's own AHCI (the tree's
	# QEMU is built with the devices qroce needs, no virtio-blk): the
	# root is found by its label either way
	disk="-drive file=$2/disk.qcow2,format=qcow2,if=none,id=d0"
	if "$QR_QEMU" -device help 2>/dev/null | grep -q '"virtio-blk-pci"'; then
		disk="$disk -device virtio-blk-pci,drive=d0"
	else
		disk="$disk -device ide-hd,drive=d0,bus=ide.0"
	fi
	root="root=LABEL=qroce-root rw"
	smp=${QR_DEBIAN_SMP:-1}
}

# qr_boot_launch G DIR: start guest G's QEMU and the reader of its agent;
# not in a subshell (it records their pids)
qr_boot_launch() {
	# what qr_migrate starts the guest's next QEMU with
	printf "netns='%s'\nnet='%s'\nnic='%s'\nextra='%s'\npre='%s'\nappend='%s'\n" \
		"$netns" "$net" "$nic" "$extra" "$pre" "$append" >"$2/launch"
	printf "kernel='%s'\ninitrd='%s'\nroot='%s'\ndisk='%s'\nsmp='%s'\n" \
		"$kernel" "$initrd" "$root" "$disk" "$smp" >>"$2/launch"
	qr_qemu "$2" agent qmp.sock console.log qemu.log
	QR_PIDS="$QR_PIDS $!"
	eval "QR_QPID_$1=\$!"
	# appended to, also by the agent's next QEMU (qr_migrate)
	: >"$2/agent.log"
	cat "$2/agent.out" >>"$2/agent.log" &
	QR_PIDS="$QR_PIDS $!"
	eval "QR_CPID_$1=\$!"
}

# qr_boot_wait N: every guest's agent ready (60 s each, a Debian guest
# QR_DEBIAN_BOOT, default 300 s: systemd under TCG); status 1, with
# the console's end, for the first that is not or when a QEMU died
qr_boot_wait() {
	i=1
	bw_max=600
	[ "${distro:-}" = debian ] && bw_max=$((${QR_DEBIAN_BOOT:-300} * 10))
	while [ $i -le "$1" ]; do
		d=$QR_DIR/g$i
		t=0
		until grep -q '@@QRREADY' "$d/agent.log" 2>/dev/null; do
			t=$((t + 1))
			# a guest KVM cannot run stops rather than exits
			if [ $t -gt $bw_max ] || ! qr_alive ||
				grep -q 'KVM internal error' "$d/qemu.log" 2>/dev/null; then
				qr_log "guest $i did not come up; console:"
				tail -n 20 "$d/console.log" "$d/qemu.log" 2>&1 | sed 's/^/# /'
				return 1
			fi
			sleep 0.1
		done
		i=$((i + 1))
	done
	return 0
}

# qr_qemu DIR AGENT QMP CONSOLE LOG [ARG...]: a guest's QEMU, in the
# background, as $DIR/launch says (netns, netdevs, NICs), with its agent
# on the pipes DIR/AGENT.in and .out, its monitor on DIR/QMP, its console
# in DIR/CONSOLE, its output in DIR/LOG, and ARGs added.  QEMU itself is
# the background job (the shell and then `ip netns exec` exec it), so $!
# is QEMU's pid.
qr_qemu() {
	qd=$1 qa=$2 qq=$3 qc=$4 ql=$5
	shift 5
	. "$qd/launch"
	[ -n "$QR_ACCEL_ARGS" ] || qr_accel || return
	# shellcheck disable=SC2086
	$netns "$QR_QEMU" -nodefaults -machine q35 $QR_ACCEL_ARGS -m 1024 \
		-smp "${smp:-1}" -display none \
		-kernel "${kernel:-$QR_KERNEL}" -initrd "${initrd:-$QR_INITRD}" \
		-append "console=ttyS0 panic=-1 quiet${root:+ $root}${append:+ $append}" \
		-serial "file:$qd/$qc" \
		-chardev "pipe,id=agent,path=$qd/$qa" \
		-device isa-serial,chardev=agent \
		-fw_cfg "name=opt/qroce/config,file=$qd/config" \
		-qmp "unix:$qd/$qq,server=on,wait=off" \
		$pre $disk $net $nic $extra "$@" \
		>"$qd/$ql" 2>&1 &
}

# The accelerator: QR_ACCEL (environment) auto, kvm or tcg; qr_accel
# sets QR_ACCEL_ARGS, the -accel and -cpu of every guest, once a run.
# tcg: -accel tcg -cpu max, no probe.  kvm: -accel kvm -cpu host, failures
# show (qr_boot_wait stops at a "KVM internal error").  auto (the
# default): KVM if qr_accel_probe boots the guest kernel under it up to
# its banner, else TCG with a one-line note naming the reason.  The
# verdict is cached in QR_ACCEL_CACHE (default build/accel.cache; empty:
# none) keyed by the QEMU binary, the kernel, /dev/kvm and the boot.
qr_accel_valid() {
	case ${QR_ACCEL:-auto} in
	auto | kvm | tcg) return 0 ;;
	esac
	echo "QR_ACCEL=$QR_ACCEL: not auto, kvm or tcg" >&2
	return 2
}

qr_accel() {
	qr_accel_valid || return 2
	case ${QR_ACCEL:-auto} in
	tcg) QR_ACCEL_ARGS="-accel tcg -cpu max" ;;
	kvm) QR_ACCEL_ARGS="-accel kvm -cpu host"
		echo "# accel: kvm (QR_ACCEL=kvm), -cpu host" ;;
	auto)
		qa_key=$(qr_accel_key)
		qa_cache=${QR_ACCEL_CACHE-$QR_B/accel.cache}
		if [ -n "$qa_cache" ] && [ "$(sed -n 1p "$qa_cache" 2>/dev/null)" = "$qa_key" ]; then
			qa_v=$(sed -n 2p "$qa_cache") qa_why=$(sed -n 3p "$qa_cache")
		else
			qr_accel_probe
			if [ -n "$qa_cache" ]; then
				printf '%s\n%s\n%s\n' "$qa_key" "$qa_v" "$qa_why" >"$qa_cache.$$" &&
					mv -f "$qa_cache.$$" "$qa_cache"
			fi
		fi
		if [ "$qa_v" = kvm ]; then
			QR_ACCEL_ARGS="-accel kvm -cpu host"
			echo "# accel: kvm ($qa_why), -cpu host"
		else
			QR_ACCEL_ARGS="-accel tcg -cpu max"
			echo "# accel: kvm unusable here ($qa_why), using tcg"
		fi ;;
	esac
}

# qr_accel_key: what the verdict depends on: QEMU, the kernel, /dev/kvm
# (its device, inode and times), the user and this boot of the host
qr_accel_key() {
	echo "$(stat -Lc '%n %i %s %Y %t:%T %Z' "$QR_QEMU" "$QR_KERNEL" /dev/kvm 2>&1 |
		tr '\n' ' ')uid $(id -u) boot $(cat /proc/sys/kernel/random/boot_id 2>/dev/null)"
}

# qr_accel_probe: boot the guest kernel under KVM (no initramfs: it
# panics after its banner) for QR_ACCEL_PROBE_SECS (default 8) at most;
# qa_v kvm if the serial console shows "Linux version", else tcg, and
# qa_why the reason.  QEMU is killed by its pid.  QR_ACCEL_PROBE_ARGS
# replaces "-accel kvm -cpu host" (t-qroce-vm.sh checks the banner path
# with tcg).
qr_accel_probe() {
	qa_v=tcg
	[ -e /dev/kvm ] || { qa_why="no /dev/kvm"; return 0; }
	if [ ! -r /dev/kvm ] || [ ! -w /dev/kvm ]; then
		qa_why="/dev/kvm: permission denied"
		return 0
	fi
	qa_d=$(mktemp -d "${TMPDIR:-/tmp}/qr-accel.XXXXXX") || { qa_why="no temporary directory"; return 0; }
	# there before the first grep, which may run before QEMU's shell opens it
	: >"$qa_d/qemu.log"
	# shellcheck disable=SC2086
	"$QR_QEMU" -nodefaults -machine q35 ${QR_ACCEL_PROBE_ARGS:--accel kvm -cpu host} \
		-m 256 -smp 1 -display none -no-reboot -kernel "$QR_KERNEL" \
		-append 'console=ttyS0 earlyprintk=serial,ttyS0 panic=-1' \
		-serial "file:$qa_d/console" >"$qa_d/qemu.log" 2>&1 &
	qa_p=$!
	qa_t=0
	qa_why="no kernel banner in ${QR_ACCEL_PROBE_SECS:-8} s"
	while [ $qa_t -lt $((${QR_ACCEL_PROBE_SECS:-8} * 10)) ]; do
		if grep -q 'KVM internal error' "$qa_d/qemu.log"; then
			sleep 0.2
			qa_why="KVM internal error: $(grep -v -e '^KVM internal error' -e '^extra data' \
				"$qa_d/qemu.log" | head -1)"
			break
		elif grep -q 'Linux version' "$qa_d/console" 2>/dev/null; then
			qa_v=kvm qa_why="the kernel reached its banner in $((qa_t / 10)).$((qa_t % 10)) s"
			break
		elif ! kill -0 $qa_p 2>/dev/null; then
			qa_why="QEMU exited: $(head -1 "$qa_d/qemu.log")"
			break
		fi
		qa_t=$((qa_t + 1))
		sleep 0.1
	done
	kill $qa_p 2>/dev/null
	wait $qa_p 2>/dev/null
	[ -n "${QR_DIR:-}" ] && [ -d "$QR_DIR" ] && cat "$qa_d/qemu.log" "$qa_d/console" >"$QR_DIR/accel-probe.log" 2>/dev/null
	rm -rf "$qa_d"
	return 0
}

# qr_migrate G [HOST]: live-migrate guest G, while it runs, to a new QEMU
# (same arguments, -incoming on a UNIX socket) on a new port of the
# switch (a tap of its own, tapGmK, on the bridge; the old tap stays, as
# the port a moved VM leaves) of HOST (1 or 2, qr_boot's hosts2; default:
# the guest's own); then the old QEMU quits and the harness
# talks to the new one (its agent's output goes on in the guest's
# agent.log, so a command running across the move ends as any other).
# Prints "total MS downtime MS setup MS" from query-migrate.  Only on the
# switch: a point-to-point wire has one socket per end.  Not in a
# subshell ($(qr_migrate ...)): it updates the harness's record of the
# guest's QEMU.
qr_migrate() {
	g=$1
	[ "$QR_WIRE" = switch ] && [ -n "$QR_NS" ] || { echo "qr_migrate: guests are not on the switch" >&2; return 1; }
	ns=$(qr_gns "$g")
	case ${2:-} in
	'') ;;
	1) ns=$QR_NS ;;
	2) [ -n "${QR_NS2:-}" ] || { echo "qr_migrate: there is no host 2 (qr_boot hosts2)" >&2; return 1; }
		ns=$QR_NS2 ;;
	*) echo "qr_migrate: host $2: 1 or 2" >&2; return 1 ;;
	esac
	qr_mig_next "$g"
	qr_mig_port "$g" "$ns" || return 1
	rm -f "$d/$m.sock"
	qr_mig_start "$g" -incoming "unix:$d/$m.sock" || return 1
	qr_qmp "$g" migrate-set-parameters '{"max-bandwidth": 4294967296}' >/dev/null || return 1
	qr_qmp "$g" migrate "{\"uri\": \"unix:$d/$m.sock\"}" >/dev/null || return 1
	qr_mig_wait "$g" "$d/qmp.sock" || return 1
	qr_mig_quit "$g" || return 1
	qr_mig_adopt "$g"
	qr_mig_figures "$d/$m.status"
}

# qr_snapshot G FILE: save guest G, running, to FILE (QMP migrate to
# file:), then its QEMU quits: the guest is gone, its peers' frames to it
# are lost, until qr_restore G FILE.  Prints qr_migrate's figures.
qr_snapshot() {
	qr_mig_next "$1"
	qr_qmp "$g" migrate "{\"uri\": \"file:$2\"}" >/dev/null || return 1
	qr_mig_wait "$g" "$d/qmp.sock" || return 1
	qr_mig_quit "$g" || return 1
	qr_mig_figures "$d/$m.status"
}

# qr_restore G FILE: a new QEMU for guest G, on the switch port it had
# (the tap stays) or its own wire, loads FILE (-incoming defer,
# migrate-incoming file:) and runs the guest on from where it was saved.
qr_restore() {
	qr_mig_next "$1"
	qr_mig_start "$g" -incoming defer || return 1
	"$QR_B/tools/qmp" "$d/$m.qmp" migrate-incoming "{\"uri\": \"file:$2\"}" >/dev/null || return 1
	qr_mig_wait "$g" "$d/$m.qmp" || return 1
	qr_mig_adopt "$g"
}

# The steps of qr_migrate, qr_snapshot and qr_restore, for guest G with
# $d its directory and $m the move's name (mK):
# qr_mig_next G: the next move of guest G: $g, $d and $m
qr_mig_next() {
	g=$1
	d=$QR_DIR/g$g
	QR_MIGN=$((${QR_MIGN:-0} + 1))
	m=m$QR_MIGN
}

# qr_mig_port G NS: a new tap (tapGmK, and vtapGmK for an rxe NIC) on the
# bridge of namespace NS, written into the guest's launch file
qr_mig_port() {
	tap=tap$1$m
	ip -n "$2" tuntap add "$tap" mode tap &&
		ip -n "$2" link set "$tap" mtu 9216 \
			txqueuelen "${QR_TAPQLEN:-1000}" master br0 up || return 1
	if grep -q "ifname=vtap" "$d/launch"; then
		# the rxe NIC moves too, to a port of its own on br1
		ip -n "$2" tuntap add "v$tap" mode tap &&
			ip -n "$2" link set "v$tap" mtu 9216 \
				txqueuelen "${QR_TAPQLEN:-1000}" master br1 up || return 1
		sed -i "s/ifname=vtap$1[m0-9]*,/ifname=v$tap,/" "$d/launch"
	fi
	sed -i "s/ifname=tap$1[m0-9]*,/ifname=$tap,/; s/ip netns exec qr[0-9]*b\{0,1\}'/ip netns exec $2'/" "$d/launch"
	eval "QR_GNS_$1=$2"
}

# qr_mig_start G ARG...: the guest's next QEMU, with ARGs (-incoming),
# its agent on the pipes $d/$m.in and .out (appended to agent.log), its
# monitor on $d/$m.qmp; waits until the monitor (and a -incoming unix:
# socket) is there
qr_mig_start() {
	g=$1
	shift
	rm -f "$d/$m.in" "$d/$m.out" "$d/$m.qmp"
	mkfifo "$d/$m.in" "$d/$m.out"
	qr_qemu "$d" "$m" "$m.qmp" "console-$m.log" "qemu-$m.log" \
		-trace qroce_port_announce "$@"
	new=$!
	cat "$d/$m.out" >>"$d/agent.log" &
	newcat=$!
	QR_PIDS="$QR_PIDS $newcat $new"
	sock=
	case $* in
	*unix:*) sock=${*##*unix:} ;;
	esac
	t=0
	until [ -S "$d/$m.qmp" ] && { [ -z "$sock" ] || [ -S "$sock" ]; }; do
		t=$((t + 1))
		if [ $t -gt 300 ] || ! kill -0 "$new" 2>/dev/null; then
			echo "qr_migrate: the new QEMU of guest $g did not start:" >&2
			tail -5 "$d/qemu-$m.log" >&2
			return 1
		fi
		sleep 0.1
	done
}

# qr_mig_wait G SOCK: until query-migrate on monitor SOCK says completed
# (its answer in $d/$m.status); fails on failed or cancelled, or after 300 s
qr_mig_wait() {
	t=0
	while :; do
		st=$("$QR_B/tools/qmp" "$2" query-migrate) || return 1
		case $st in
		*'"status": "completed"'*) break ;;
		*'"status": "failed"'* | *'"status": "cancelled"'*)
			echo "qr_migrate: guest $1: $st" >&2
			return 1 ;;
		esac
		t=$((t + 1))
		[ $t -le 3000 ] || { echo "qr_migrate: guest $1: not done in 300 s: $st" >&2; return 1; }
		sleep 0.1
	done
	echo "$st" >"$d/$m.status"
}

# qr_mig_quit G: the guest's current QEMU quits, and its agent reader ends
# with it; both leave QR_PIDS
qr_mig_quit() {
	eval "old=\$QR_QPID_$1 oldcat=\$QR_CPID_$1"
	qr_qmp "$1" quit >/dev/null 2>&1
	t=0
	while kill -0 "$old" 2>/dev/null && [ $t -lt 100 ]; do
		t=$((t + 1))
		sleep 0.1
	done
	kill -0 "$old" 2>/dev/null && { echo "qr_migrate: the old QEMU of guest $1 did not quit" >&2; return 1; }
	t=0
	while kill -0 "$oldcat" 2>/dev/null && [ $t -lt 50 ]; do
		t=$((t + 1))
		sleep 0.1
	done
	kill "$oldcat" 2>/dev/null
	wait "$oldcat" 2>/dev/null
	QR_PIDS=$(echo " $QR_PIDS " | sed "s/ $old / /; s/ $oldcat / /")
	rm -f "$d/qmp.sock"
}

# qr_mig_adopt G: the harness talks to the new QEMU ($new, $newcat)
qr_mig_adopt() {
	eval "QR_QPID_$1=$new QR_CPID_$1=$newcat"
	mv -f "$d/$m.qmp" "$d/qmp.sock"
	mv -f "$d/$m.in" "$d/agent.in"
	mv -f "$d/$m.out" "$d/agent.out"
}

# qr_mig_figures STATUS-FILE: "total MS downtime MS setup MS"
qr_mig_figures() {
	awk '{
		for (i = 1; i <= NF; i++) {
			k = $i; v = $(i + 1); gsub(/[",:{}]/, "", k); gsub(/[",:{}]/, "", v)
			if (k == "total-time" && !tot) tot = v
			if (k == "downtime" && !down) down = v
			if (k == "setup-time" && !set) set = v
		}
		printf "total %d downtime %d setup %d\n", tot, down, set }' "$1"
}

qr_alive() {
	for p in $QR_PIDS; do
		kill -0 "$p" 2>/dev/null || return 1
	done
	return 0
}

qr_exec() {
	g=$1
	shift
	QR_SEQ=$((QR_SEQ + 1))
	id=c$QR_SEQ.$$
	d=$QR_DIR/g$g
	start=$(wc -c <"$d/agent.log")
	# the guest kills the command after QR_TIMEOUT and answers 124; the
	# host waits a little longer for that answer
	tmo=${QR_TIMEOUT:-180}
	printf '%s %s %s\n' "$id" "$tmo" "$*" >"$d/agent.in"
	limit=$(($(date +%s) + tmo + 20))
	sent=1
	while ! tail -c +$((start + 1)) "$d/agent.log" | grep -q "^@@QREND $id "; do
		if [ "$(date +%s)" -ge $limit ]; then
			echo "qr_exec: guest $g: timed out, no answer: $*" >&2
			return 124
		fi
		# the agent got a damaged line and ran nothing: again, from
		# here, at most twice more
		if tail -c +$((start + 1)) "$d/agent.log" | grep -q '^@@QRBAD$'; then
			if [ $sent -ge 3 ]; then
				echo "qr_exec: guest $g: the command arrived damaged $sent times: $*" >&2
				return 125
			fi
			echo "qr_exec: guest $g: the command arrived damaged, sent again" >&2
			start=$(wc -c <"$d/agent.log")
			printf '%s %s %s\n' "$id" "$tmo" "$*" >"$d/agent.in"
			sent=$((sent + 1))
		fi
		sleep 0.1
	done
	tail -c +$((start + 1)) "$d/agent.log" | sed "/^@@QREND $id /,\$d"
	end=$(tail -c +$((start + 1)) "$d/agent.log" | grep "^@@QREND $id " | head -1)
	rc=$(echo "$end" | sed -n "s/^@@QREND $id \([0-9]*\).*/\1/p")
	case $end in
	*" killed") echo "qr_exec: guest $g: timed out after $tmo s, killed: $*" >&2 ;;
	esac
	return "${rc:-1}"
}

qr_check() {
	desc=$1
	shift
	t0=$(date +%s)
	"$@" >"$QR_DIR/check.out" 2>&1
	qc_rc=$?
	tap_line $qc_rc "$desc ($(($(date +%s) - t0))s)"
	if [ $qc_rc -eq 0 ]; then
		QR_PASS=$((QR_PASS + 1))
	else
		QR_FAIL=$((QR_FAIL + 1))
		sed 's/^/# | /' "$QR_DIR/check.out" | tail -30
	fi
}

qr_fail() {
	QR_FAIL=$((QR_FAIL + 1))
	tap_line 1 "$1"
}

qr_finish() {
	qr_cleanup
	# a failure counted by hand (QR_FAIL=...) still gets its line
	while [ $((QR_PASS + QR_FAIL)) -gt "$TAP_N" ]; do
		tap_line 1 "a failure counted outside qr_check"
	done
	tap_end "$QR_NAME" "$QR_PASS" "$QR_FAIL"
	if [ "$QR_FAIL" -eq 0 ]; then
		rm -rf "$QR_DIR"
		exit 0
	fi
	echo "# logs kept in $QR_DIR"
	exit 1
}

# qr_bg G NAME CMD: start CMD in the background in guest G.
qr_bg() {
	qr_exec "$1" "rm -f /tmp/bg.$2; (($3) >/tmp/bg.$2.out 2>&1; echo \$? >/tmp/bg.$2) </dev/null >/dev/null 2>&1 &"
}

# qr_bg_wait G NAME [SECONDS]: wait for it; print its output, return its status.
qr_bg_wait() {
	# the limit is the guest's clock, not a count of sleeps: a busy guest
	# sleeps longer, and its agent does nothing else meanwhile; the host
	# waits 90 s more for its answer (a guest starved of the CPU by its
	# neighbours answers late, and is not hung for that)
	QR_TIMEOUT=$((${3:-120} + 90)) qr_exec "$1" "read u x </proc/uptime; e=\$((\${u%.*} + ${3:-120})); while [ ! -e /tmp/bg.$2 ]; do read u x </proc/uptime; [ \${u%.*} -ge \$e ] && break; sleep 0.1; done; cat /tmp/bg.$2.out; [ -e /tmp/bg.$2 ] || { echo 'still running: timed out'; exit 124; }; exit \$(cat /tmp/bg.$2)"
}

# qr_wait_listen G PORT: wait until guest G listens on TCP PORT.
qr_wait_listen() {
	qr_exec "$1" "i=0; until netstat -ltn | grep -q ':$2 '; do i=\$((i + 1)); [ \$i -gt 100 ] && exit 1; sleep 0.1; done"
}

# qr_wait_cm_free G PORT: wait until guest G has no RDMA CM id listening on
# PORT any more: a server that just exited may leave its listener for a
# moment, and a client that connects to it then is rejected (REJ reason 8,
# invalid service ID) while the next server waits for ever.  Run it before
# starting a server on a port that an earlier one used.
qr_wait_cm_free() {
	qr_exec "$1" "i=0; while rdma resource show cm_id 2>/dev/null | grep 'state LISTEN' | grep -q ':$2 '; do i=\$((i + 1)); [ \$i -gt 100 ] && { rdma resource show cm_id; exit 1; }; sleep 0.1; done"
}

# qr_wait_cm_listen G PORT: wait until guest G has an RDMA CM id listening
# on PORT (rping, ucmatose, perftest -R listen there, not on a socket).
qr_wait_cm_listen() {
	qr_exec "$1" "i=0; until rdma resource show cm_id 2>/dev/null | grep 'state LISTEN' | grep -q ':$2 '; do i=\$((i + 1)); [ \$i -gt 100 ] && { rdma resource show cm_id; exit 1; }; sleep 0.1; done"
}

# qr_pingpong PROG ARGS...: one of rdma-core's *_pingpong examples on
# qroce_0 with GID index $GID (default 1), server in guest 1, client in
# guest 2; both must exit 0 and print their "bytes in" and "iters in"
# lines, and neither may report invalid data (with -c).
qr_pingpong() {
	pp=$1
	shift
	qr_bg 1 srv "$pp -d qroce_0 -g ${GID:-1} $*" || return 1
	qr_wait_listen 1 18515 || { echo "server did not listen"; qr_bg_wait 1 srv 5; return 1; }
	QR_TIMEOUT=300 qr_exec 2 "$pp -d qroce_0 -g ${GID:-1} $* 10.0.0.1" >"$QR_DIR/pp.cli"
	crc=$?
	qr_bg_wait 1 srv 300 >"$QR_DIR/pp.srv"
	src=$?
	sed 's/^/client: /' "$QR_DIR/pp.cli"
	sed 's/^/server: /' "$QR_DIR/pp.srv"
	[ $crc -eq 0 ] && [ $src -eq 0 ] || return 1
	for f in "$QR_DIR/pp.cli" "$QR_DIR/pp.srv"; do
		grep -Eq '^[0-9]+ bytes in [0-9.]+ seconds = [0-9.]+ Mbit/sec$' "$f" &&
			grep -Eq '^[0-9]+ iters in [0-9.]+ seconds = [0-9.]+ usec/iter$' "$f" || return 1
	done
	! grep -q 'invalid data' "$QR_DIR/pp.srv" "$QR_DIR/pp.cli"
}

# qr_gid_v4 G DEV: the index of DEV's IPv4 RoCE v2 GID on port 1 in guest G
qr_gid_v4() {
	qr_exec "$1" "p=/sys/class/infiniband/$2/ports/1; for t in \$p/gid_attrs/types/*; do i=\${t##*/}; [ \"\$(cat \$t 2>/dev/null)\" = 'RoCE v2' ] || continue; case \$(cat \$p/gids/\$i) in 0000:0000:0000:0000:0000:ffff:*) echo \$i; exit 0;; esac; done; exit 1"
}

# qr_counter G NAME: the value of qroce_0's hardware counter NAME in guest
# G, as `rdma statistic` shows it (device counters, 32-bit, wrapping).
qr_counter() {
	qr_exec "$1" "rdma statistic show link qroce_0/1" |
		sed -n "s/.* $2 \([0-9][0-9]*\).*/\1/p"
}

# qr_perftest T ARGS...: perftest test T with ARGS, server in guest 1,
# client in guest 2 (to 10.0.0.1), both on qroce_0; QR_PT="G SDEV CDEV IP"
# sets the server's guest, the server's and the client's device and the
# address the client connects to.  Both must exit 0 and the client must
# print a result row whose first column is the message size (-s, else 8);
# a server that prints a result header must print a row too.
qr_perftest() {
	t=$1
	shift
	set -- ${QR_PT:-1 qroce_0 qroce_0 10.0.0.1} "$@"
	pg=$1 psd=$2 pcd=$3 pip=$4
	shift 4
	qr_bg "$pg" srv "$t -d $psd -x 1 -F $*" || return 1
	qr_wait_listen "$pg" 18515 || { qr_bg_wait "$pg" srv 5; return 1; }
	qr_exec $((3 - pg)) "$t -d $pcd -x 1 -F $* $pip" >"$QR_DIR/pt.cli"
	crc=$?
	qr_bg_wait "$pg" srv 120 >"$QR_DIR/pt.srv"
	src=$?
	cat "$QR_DIR/pt.cli"
	sed 's/^/server: /' "$QR_DIR/pt.srv"
	size=$(echo "$*" | sed -n 's/.*-s \([0-9]*\).*/\1/p')
	row="^ *${size:-8} +[0-9]+ +[0-9.]+ +[0-9.]+"
	[ $crc -eq 0 ] && [ $src -eq 0 ] && grep -Eq "$row" "$QR_DIR/pt.cli" &&
		{ ! grep -q '#bytes' "$QR_DIR/pt.srv" ||
			grep -Eq "$row" "$QR_DIR/pt.srv"; }
}

# qr_server_client TAG PORT SG SERVER_CMD CG CLIENT_CMD [SECONDS]: a
# two-guest test program: SERVER_CMD in the background in guest SG until
# it listens on TCP PORT, then CLIENT_CMD in guest CG; the server then has
# SECONDS (default 120) to end.  Their outputs go to $QR_DIR/TAG.cli and
# TAG.srv and are printed; 0 if both exited 0.
qr_server_client() {
	qr_bg "$3" "$1" "$4" || return 1
	qr_wait_listen "$3" "$2" || { qr_bg_wait "$3" "$1" 5; return 1; }
	qr_exec "$5" "$6" >"$QR_DIR/$1.cli"
	crc=$?
	qr_bg_wait "$3" "$1" "${7:-120}" >"$QR_DIR/$1.srv"
	src=$?
	cat "$QR_DIR/$1.cli" "$QR_DIR/$1.srv"
	[ $crc -eq 0 ] && [ $src -eq 0 ]
}

# qr_atomics ADDS LOCKS: qroce-rdma's two-guest mode.  The counter and the
# lock live in the server's memory; both sides do ADDS FETCH_ADDs and LOCKS
# increments under a CMP_SWAP lock.  QR_PT as for qr_perftest.  The counter
# must be exactly 2 x ADDS with every old value returned once, the locked
# counter 2 x LOCKS and the lock free.
qr_atomics() {
	set -- ${QR_PT:-1 qroce_0 qroce_0 10.0.0.1} "$@"
	ag=$1 asd=$2 acd=$3 aip=$4 an=$5 ak=$6
	qr_server_client a 18516 "$ag" "qroce-rdma -d $asd -g 1 -a $an -k $ak -l" \
		$((3 - ag)) "qroce-rdma -d $acd -g 1 -a $an -k $ak $aip" 500 &&
		! grep -q '^FAIL' "$QR_DIR/a.srv" &&
		grep -q "^PASS 2 x $an FETCH_ADD on one address: counter $((2 * an))\$" \
			"$QR_DIR/a.srv" &&
		grep -q "^PASS FETCH_ADD results are 0..$((2 * an - 1)), each once" \
			"$QR_DIR/a.srv" &&
		grep -q "^PASS CMP_SWAP lock: 2 x $ak increments under it give $((2 * ak)), lock 0\$" \
			"$QR_DIR/a.srv"
}

# qr_stats G DEV: every hardware counter of RDMA device DEV (port 1) in
# guest G, one "name value" per line (`rdma statistic show link DEV/1`).
qr_stats() {
	qr_exec "$1" "rdma statistic show link $2/1" |
		awk '{ for (i = 1; i < NF; i++) if ($(i + 1) ~ /^[0-9]+$/ && $i ~ /^[a-z_]+$/) print $i, $(i + 1) }'
}

# qr_mtu G DEV: the active RoCE path MTU of DEV in guest G, in bytes.
qr_mtu() {
	qr_exec "$1" "ibv_devinfo -d $2" | sed -n 's/.*active_mtu:[^0-9]*\([0-9][0-9]*\).*/\1/p' | head -1
}

# qr_flows TAG DEV NET LIMIT CMD SRC:DST...: run one perftest flow per
# SRC:DST pair, all at once: CMD (e.g. "ib_write_bw -x 1 -F -s 65536 -n
# 1000") with "-d DEV" and a TCP port of its own, server in guest DST,
# client in guest SRC connecting to NET.DST (NET is 10.0.0 for qroce's
# netdevs, 10.0.1 for the rxe ones).  The servers are started and waited
# for first; then the clients are started one after the other (a fraction
# of a second apart) and every flow must end within LIMIT seconds of the
# first start; what is still running then is killed (by its pid, in the
# guest).  Writes $QR_DIR/TAG.res, lines of
#   flow K SRC DST STATUS SECONDS GOODPUT BW
#        STATUS: the client's and the server's (124: did not end in time);
#        SECONDS: the client's run time in its guest, from its start to its
#        end, connection set-up included; GOODPUT: the bytes it wrote (-s x
#        -n) / SECONDS, in MB/s (10^6 B/s), "-" unless STATUS is 0; BW:
#        perftest's own "BW average", which is 0.00 when its CPU clock
#        estimate fails ("Correlation coefficient r^2 < 0.9", frequent with
#        several TCG guests on few host cores): not to be relied on
#   cnt G NAME DELTA                     (DEV's counters in guest G across
#                                         the flows, every guest, mod 2^32)
#   drop G DELTA                         (frames the wire dropped on their
#                                         way to guest G: see qr_drops)
# and the perftest outputs to $QR_DIR/TAG.K.cli and TAG.K.srv.  Returns 0
# if every flow (client and server) ended with status 0.
qr_flows() {
	ftag=$1 fdev=$2 fnet=$3 flim=$4 fcmd=$5
	shift 5
	fres=$QR_DIR/$ftag.res
	: >"$fres"
	fk=0
	for f in "$@"; do
		fk=$((fk + 1))
		fd=${f#*:}
		qr_flow_bg "$fd" "$ftag.s$fk" "$fcmd -d $fdev -p $((18600 + fk))" >/dev/null
	done
	fk=0
	for f in "$@"; do
		fk=$((fk + 1))
		qr_wait_listen "${f#*:}" $((18600 + fk)) >/dev/null ||
			echo "flow $fk: server did not listen"
	done
	g=1
	while [ $g -le "$QR_N" ]; do
		qr_stats $g "$fdev" >"$QR_DIR/$ftag.c0.$g"
		g=$((g + 1))
	done
	fnic=0
	[ "$fnet" = 10.0.1 ] && fnic=1
	qr_drops $fnic >"$QR_DIR/$ftag.d0"
	fstart=$(date +%s)
	fk=0
	for f in "$@"; do
		fk=$((fk + 1))
		qr_flow_bg "${f%:*}" "$ftag.c$fk" "$fcmd -d $fdev -p $((18600 + fk)) $fnet.${f#*:}" >/dev/null
	done
	fok=0
	fk=0
	for f in "$@"; do
		fk=$((fk + 1))
		left=$((flim - ($(date +%s) - fstart)))
		[ $left -lt 1 ] && left=1
		qr_bg_wait "${f%:*}" "$ftag.c$fk" $left >"$QR_DIR/$ftag.$fk.cli"
		echo $? >"$QR_DIR/$ftag.$fk.rc"
	done
	# whatever is left of the flows (timed out) must not load the next
	# step: killed, by its pid in its guest
	g=1
	while [ $g -le "$QR_N" ]; do
		qr_exec $g "for p in /tmp/pid.$ftag.*; do [ -e \$p ] && kill \$(cat \$p) 2>/dev/null; done; true" >/dev/null
		g=$((g + 1))
	done
	fk=0
	for f in "$@"; do
		fk=$((fk + 1))
		fs=${f%:*} fd=${f#*:}
		fc=$(cat "$QR_DIR/$ftag.$fk.rc")
		qr_bg_wait "$fd" "$ftag.s$fk" 10 >"$QR_DIR/$ftag.$fk.srv" || { [ "$fc" = 0 ] && fc=1; }
		[ "$fc" = 0 ] || fok=1
		secs=$(sed -n 's/^@@flow \([0-9.]*\) \([0-9.]*\)$/\1 \2/p' "$QR_DIR/$ftag.$fk.cli" |
			awk '{ printf "%.2f", $2 - $1 }')
		size=$(echo "$fcmd" | sed -n 's/.*-s \([0-9]*\).*/\1/p')
		iters=$(echo "$fcmd" | sed -n 's/.*-n \([0-9]*\).*/\1/p')
		bw=$(awk -v s="${size:-65536}" '$1 == s && NF >= 4 && $2 ~ /^[0-9]+$/ { print $4; exit }' \
			"$QR_DIR/$ftag.$fk.cli")
		gp=$(awk -v b=$((${size:-65536} * ${iters:-1000})) -v t="${secs:-0}" -v c="$fc" \
			'BEGIN { if (c == 0 && t > 0) printf "%.2f", b / t / 1e6; else print "-" }')
		echo "flow $fk $fs $fd $fc ${secs:--} $gp ${bw:--}" >>"$fres"
	done
	g=1
	while [ $g -le "$QR_N" ]; do
		qr_stats $g "$fdev" >"$QR_DIR/$ftag.c1.$g"
		awk -v g=$g 'NR == FNR { a[$1] = $2; next }
			($1 in a) { d = $2 - a[$1]; if (d < 0) d += 4294967296; print "cnt", g, $1, d }' \
			"$QR_DIR/$ftag.c0.$g" "$QR_DIR/$ftag.c1.$g" >>"$fres"
		g=$((g + 1))
	done
	qr_drops $fnic | awk 'NR == FNR { a[$1] = $2; next }
		{ print "drop", $1, ($2 == "-" || a[$1] == "-") ? "-" : $2 - a[$1] }' "$QR_DIR/$ftag.d0" - >>"$fres"
	return $fok
}

# qr_flow_bg G NAME CMD: qr_bg, with CMD's pid in /tmp/pid.NAME (for
# qr_flows to kill it) and a last line "@@flow START END" (guest uptime).
qr_flow_bg() {
	qr_bg "$1" "$2" "read s x </proc/uptime; $3 & echo \$! >/tmp/pid.$2; wait \$!; r=\$?; rm -f /tmp/pid.$2; read e x </proc/uptime; echo @@flow \$s \$e; exit \$r"
}

# qr_qmp G COMMAND [ARGUMENTS-JSON]: run a QMP command in guest G's QEMU
# (socket gI/qmp.sock); prints its "return" as JSON, fails on an error
# (tests/tools/qmp.c).
qr_qmp() {
	"$QR_B/tools/qmp" "$QR_DIR/g$1/qmp.sock" "$2" "${3:-{\}}"
}

# qr_qom_set G PROPERTY VALUE: set a property of guest G's qroce device
# while it runs (qom-set on /machine/peripheral/qroce0): true/false as
# booleans, digits as numbers, e.g. qr_qom_set 2 dcqcn false or
# qr_qom_set 1 x-rx-drop-ppm 10000; qr_qom_get G PROPERTY prints its value.
qr_qom_set() {
	case $3 in
	true | false) v=$3 ;;
	'' | *[!0-9]*) v="\"$3\"" ;;
	*) v=$3 ;;
	esac
	qr_qmp "$1" qom-set "{\"path\": \"qroce0\", \"property\": \"$2\", \"value\": $v}" >/dev/null
}

qr_qom_get() {
	qr_qmp "$1" qom-get "{\"path\": \"qroce0\", \"property\": \"$2\"}"
}

# qr_port_buffer FRAMES [G...]: on the switch, the egress buffer of the
# ports towards guests G (default: every guest), qroce's and rxe's, in
# frames: what the bridge can queue for a guest whose QEMU has not read
# yet; beyond it, frames are dropped (tail drop).  qr_boot sets
# $QR_TAPQLEN (default 1000, Linux's default, about 1.5 MB of full-size
# frames: a deep buffer; switches built for RoCE have a few hundred KB per
# congested port).  Takes effect at once, also while traffic runs.
qr_port_buffer() {
	[ "$QR_WIRE" = switch ] && [ -n "$QR_NS" ] || { echo "qr_port_buffer: no switch" >&2; return 1; }
	qlen=$1
	shift
	[ $# -gt 0 ] || set -- $(seq 1 "$QR_N")
	for g in "$@"; do
		for tap in tap$g vtap$g; do
			ip -n "$(qr_gns $g)" link show $tap >/dev/null 2>&1 &&
				{ ip -n "$(qr_gns $g)" link set $tap txqueuelen "$qlen" || return 1; }
		done
	done
	return 0
}

# qr_drops NIC: "G FRAMES" per guest: frames the wire dropped on their way
# to guest G's qroce NIC (NIC 0) or virtio-net NIC (NIC 1, rxe).  On the
# switch, the frames the bridge could not queue to the guest's tap (tail
# drop: QEMU did not read them fast enough); on the hub, the datagrams the
# kernel dropped at the guest's QEMU socket (receive buffer full).  "-" on
# the other wires.
qr_drops() {
	g=1
	while [ $g -le "$QR_N" ]; do
		v=-
		if [ "$QR_WIRE" = switch ] && [ -n "$QR_NS" ]; then
			tap=tap$g
			[ "$1" = 1 ] && tap=vtap$g
			v=$(ip netns exec "$(qr_gns $g)" cat /sys/class/net/$tap/statistics/tx_dropped 2>/dev/null)
		elif [ "$QR_WIRE" = hub ]; then
			qp=""
			eval "qp=\$QR_QPID_$g"
			inodes=$(ls -l /proc/"$qp"/fd 2>/dev/null | sed -n 's/.*socket:\[\([0-9]*\)\].*/\1/p' | tr '\n' ' ')
			v=$(awk -v port="$(printf '%04X' $((QR_MCAST + $1)))" -v inodes=" $inodes" '
				NR > 1 { split($2, a, ":"); if (a[2] == port && index(inodes, " " $10 " ")) d += $NF }
				END { print d + 0 }' /proc/net/udp)
		fi
		echo $g "${v:--}"
		g=$((g + 1))
	done
}
