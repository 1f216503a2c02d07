# qroce test harness (POSIX sh), sourced by tests/t-*.sh and tests/demo.sh.
#
#   qr_init NAME            log directory build/test-logs/NAME, cleanup traps
#   qr_boot N [OPTS...]     boot N guests joined by a loopback netdev; OPTS:
#                           rxe (also a virtio-net NIC with rdma_rxe on it),
#                           peer-rxe (the last guest has no qroce: a virtio-net
#                           NIC with rdma_rxe takes its place on the segment),
#                           noqroce-driver, mtu=N, pcap (filter-dump per guest),
#                           dgram (two guests: a UDP wire that can drop frames
#                           instead of the default lossless stream on a
#                           Unix socket),
#                           trace (QEMU trace of qroce_* events)
#   qr_exec G CMD           run CMD in guest G (1-based) through its agent;
#                           prints the output, returns CMD's exit status
#   qr_check DESC CMD...    run CMD...; count and print a PASS or FAIL line
#   qr_finish               print the counts; exit 0 only if nothing failed
#   qr_bg, qr_bg_wait, qr_wait_listen, qr_wait_cm_listen, qr_pingpong,
#   qr_counter, qr_perftest, qr_atomics: see below
#
# Every QEMU started here is killed by its pid on exit or interruption.
# Logs are kept when a check failed, removed otherwise.

QR_TOP=${QR_TOP:-$(cd "$(dirname "$0")/.." && pwd)}
QR_B=$QR_TOP/build
QR_QEMU=$QR_B/qemu/qemu-system-x86_64
QR_KVER=$(cat "${QROCE_CACHE:-/var/cache/qroce}/kernel-version" 2>/dev/null)
QR_KERNEL=$QR_B/kernel/boot/vmlinuz-$QR_KVER
QR_INITRD=$QR_B/initramfs.cpio.gz
QR_PIDS=""
QR_PASS=0
QR_FAIL=0
QR_SEQ=0
QR_N=0

qr_log() { echo "[$QR_NAME] $*"; }

qr_cleanup() {
	for p in $QR_PIDS; do
		kill "$p" 2>/dev/null
	done
	for p in $QR_PIDS; do
		wait "$p" 2>/dev/null
	done
	QR_PIDS=""
}

qr_init() {
	QR_NAME=$1
	QR_DIR=$QR_B/test-logs/$QR_NAME
	rm -rf "$QR_DIR"
	mkdir -p "$QR_DIR"
	for f in ${QR_NEED-"$QR_QEMU" "$QR_KERNEL" "$QR_INITRD"}; do
		[ -e "$f" ] || { echo "$QR_NAME: $f missing: run 'make'" >&2; exit 2; }
	done
	trap 'qr_cleanup' EXIT
	trap 'qr_cleanup; exit 130' INT TERM HUP
}

# A UDP port pair that nothing listens on, derived from our pid.
qr_ports() {
	base=$((20000 + ($$ * 7 + QR_SEQ * 131) % 30000))
	while ss -Hlnut 2>/dev/null | awk '{print $5}' | grep -q ":$base\$\|:$((base + 1))\$"; do
		base=$((base + 2))
	done
	echo "$base"
}

qr_boot() {
	n=$1
	shift
	rxe=0 drv=1 mtu="" pcap=0 trace=0 rxepeer=0 wire=stream
	for o in "$@"; do
		case $o in
		dgram) wire=dgram ;;
		rxe) rxe=1 ;;
		peer-rxe) rxepeer=1 ;;
		noqroce-driver) drv=0 ;;
		mtu=*) mtu=${o#mtu=} ;;
		pcap) pcap=1 ;;
		trace) trace=1 ;;
		*) echo "qr_boot: unknown option $o" >&2; return 2 ;;
		esac
	done
	QR_N=$n
	port=$(qr_ports)
	mcast=$((40000 + $$ % 20000))
	i=1
	while [ $i -le "$n" ]; do
		d=$QR_DIR/g$i
		mkdir -p "$d"
		rm -f "$d/agent.in" "$d/agent.out"
		mkfifo "$d/agent.in" "$d/agent.out"
		cat >"$d/config" <<CFG
QR_NAME=g$i
QR_IP=10.0.0.$i/24
QR_IP6=fd00::$i/64
QR_VIP=10.0.1.$i/24
QR_RXE=$rxe
QR_QROCE=$drv
QR_MTU=$mtu
CFG
		if [ "$n" -eq 2 ] && [ "$wire" = dgram ]; then
			me=$((port + i - 1))
			peer=$((port + 2 - i))
			net="-netdev dgram,id=n0,local.type=inet,local.host=127.0.0.1,local.port=$me,remote.type=inet,remote.host=127.0.0.1,remote.port=$peer"
			vnet="-netdev dgram,id=n1,local.type=inet,local.host=127.0.0.1,local.port=$((me + 2)),remote.type=inet,remote.host=127.0.0.1,remote.port=$((peer + 2))"
		elif [ "$n" -eq 2 ]; then
			# a lossless wire, as RoCE fabrics are (PFC): guest 1
			# listens, guest 2 connects.  A Unix socket: TCP's
			# Nagle delays would add 40 ms to small frames.
			if [ $i -eq 1 ]; then
				side="server=on"
			else
				side="server=off,reconnect-ms=100"
			fi
			net="-netdev stream,id=n0,$side,addr.type=unix,addr.path=$QR_DIR/wire0.sock"
			vnet="-netdev stream,id=n1,$side,addr.type=unix,addr.path=$QR_DIR/wire1.sock"
		else
			net="-netdev socket,id=n0,mcast=230.0.0.1:$mcast,localaddr=127.0.0.1"
			vnet="-netdev socket,id=n1,mcast=230.0.0.1:$((mcast + 1)),localaddr=127.0.0.1"
		fi
		extra=""
		nic="-device qroce,netdev=n0,mac=52:54:00:00:00:0$i"
		if [ $rxepeer = 1 ] && [ $i -eq "$n" ]; then
			# rdma_rxe on virtio-net, on the qroce segment, same addresses
			nic="-device virtio-net-pci,netdev=n0,romfile=,mac=52:54:00:00:00:0$i"
			printf 'QR_RXE=1\nQR_QROCE=0\nQR_VIP=10.0.0.%s/24\n' $i >>"$d/config"
		fi
		[ $rxe = 1 ] && extra="$vnet -device virtio-net-pci,netdev=n1,romfile=,mac=52:54:00:00:01:0$i"
		[ $pcap = 1 ] && extra="$extra -object filter-dump,id=f0,netdev=n0,file=$d/wire.pcap"
		[ $trace = 1 ] && extra="$extra -trace qroce_*,file=$d/trace.log"
		# shellcheck disable=SC2086
		"$QR_QEMU" -nodefaults -machine q35 -accel tcg -cpu max -m 1024 \
			-smp 1 -display none \
			-kernel "$QR_KERNEL" -initrd "$QR_INITRD" \
			-append "console=ttyS0 panic=-1 quiet" \
			-serial "file:$d/console.log" \
			-chardev "pipe,id=agent,path=$d/agent" \
			-device isa-serial,chardev=agent \
			-fw_cfg "name=opt/qroce/config,file=$d/config" \
			$net $nic $extra \
			>"$d/qemu.log" 2>&1 &
		QR_PIDS="$QR_PIDS $!"
		cat "$d/agent.out" >"$d/agent.log" &
		QR_PIDS="$QR_PIDS $!"
		i=$((i + 1))
	done
	i=1
	while [ $i -le "$n" ]; do
		d=$QR_DIR/g$i
		t=0
		until grep -q '@@QRREADY' "$d/agent.log" 2>/dev/null; do
			t=$((t + 1))
			if [ $t -gt 600 ] || ! qr_alive; then
				qr_log "guest $i did not come up; console:"
				tail -20 "$d/console.log" "$d/qemu.log"
				return 1
			fi
			sleep 0.1
		done
		i=$((i + 1))
	done
	return 0
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
	printf '%s %s\n' "$id" "$*" >"$d/agent.in"
	limit=$(($(date +%s) + ${QR_TIMEOUT:-180}))
	while ! tail -c +$((start + 1)) "$d/agent.log" | grep -q "^@@QREND $id "; do
		if [ "$(date +%s)" -ge $limit ]; then
			echo "qr_exec: guest $g: timed out: $*" >&2
			return 124
		fi
		sleep 0.1
	done
	tail -c +$((start + 1)) "$d/agent.log" | sed "/^@@QREND $id /,\$d"
	rc=$(tail -c +$((start + 1)) "$d/agent.log" |
		sed -n "s/^@@QREND $id \([0-9]*\)\$/\1/p" | head -1)
	return "${rc:-1}"
}

qr_check() {
	desc=$1
	shift
	t0=$(date +%s)
	if "$@" >"$QR_DIR/check.out" 2>&1; then
		QR_PASS=$((QR_PASS + 1))
		echo "PASS $QR_NAME: $desc ($(($(date +%s) - t0))s)"
	else
		QR_FAIL=$((QR_FAIL + 1))
		echo "FAIL $QR_NAME: $desc ($(($(date +%s) - t0))s)"
		sed 's/^/    | /' "$QR_DIR/check.out" | tail -30
	fi
}

qr_finish() {
	qr_cleanup
	echo "RESULT $QR_NAME $QR_PASS $QR_FAIL"
	if [ "$QR_FAIL" -eq 0 ]; then
		rm -rf "$QR_DIR"
		exit 0
	fi
	echo "logs kept in $QR_DIR"
	exit 1
}

# qr_bg G NAME CMD: start CMD in the background in guest G.
qr_bg() {
	qr_exec "$1" "rm -f /tmp/bg.$2; (($3) >/tmp/bg.$2.out 2>&1; echo \$? >/tmp/bg.$2) </dev/null >/dev/null 2>&1 &"
}

# qr_bg_wait G NAME [SECONDS]: wait for it; print its output, return its status.
qr_bg_wait() {
	QR_TIMEOUT=$((${3:-120} + 30)) qr_exec "$1" "i=0; while [ ! -e /tmp/bg.$2 ] && [ \$i -lt $((${3:-120} * 10)) ]; do sleep 0.1; i=\$((i + 1)); done; cat /tmp/bg.$2.out; [ -e /tmp/bg.$2 ] || { echo 'still running: timed out'; exit 124; }; exit \$(cat /tmp/bg.$2)"
}

# qr_wait_listen G PORT: wait until guest G listens on TCP PORT.
qr_wait_listen() {
	qr_exec "$1" "i=0; until netstat -ltn | grep -q ':$2 '; do i=\$((i + 1)); [ \$i -gt 100 ] && exit 1; sleep 0.1; done"
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

# qr_atomics ADDS LOCKS: qroce-rdma's two-guest mode.  The counter and the
# lock live in the server's memory; both sides do ADDS FETCH_ADDs and LOCKS
# increments under a CMP_SWAP lock.  QR_PT as for qr_perftest.  The counter
# must be exactly 2 x ADDS with every old value returned once, the locked
# counter 2 x LOCKS and the lock free.
qr_atomics() {
	set -- ${QR_PT:-1 qroce_0 qroce_0 10.0.0.1} "$@"
	ag=$1 asd=$2 acd=$3 aip=$4 an=$5 ak=$6
	qr_bg "$ag" atom "qroce-rdma -d $asd -g 1 -a $an -k $ak -l" || return 1
	qr_wait_listen "$ag" 18516 || { qr_bg_wait "$ag" atom 5; return 1; }
	qr_exec $((3 - ag)) "qroce-rdma -d $acd -g 1 -a $an -k $ak $aip" >"$QR_DIR/a.cli"
	crc=$?
	qr_bg_wait "$ag" atom 500 >"$QR_DIR/a.srv"
	src=$?
	cat "$QR_DIR/a.cli" "$QR_DIR/a.srv"
	[ $crc -eq 0 ] && [ $src -eq 0 ] && ! grep -q '^FAIL' "$QR_DIR/a.srv" &&
		grep -q "^PASS 2 x $an FETCH_ADD on one address: counter $((2 * an))\$" \
			"$QR_DIR/a.srv" &&
		grep -q "^PASS FETCH_ADD results are 0..$((2 * an - 1)), each once" \
			"$QR_DIR/a.srv" &&
		grep -q "^PASS CMP_SWAP lock: 2 x $ak increments under it give $((2 * ak)), lock 0\$" \
			"$QR_DIR/a.srv"
}
