#!/bin/sh
# Fault injection seen from the guest (docs/fault-injection.md): each knob
# is set with qom-set on a running guest's device, and the driver and the
# application react as they would to real hardware doing the same.
#  - a failed command: the verb returns the errno the status maps to, and
#    the next one succeeds;
#  - an injected WQE error: the application gets the chosen status;
#  - injected RNR NAKs: the SEND is retried (rnr_retry 7) and succeeds;
#  - port down/up events: IBV_EVENT_PORT_ERR, IBV_EVENT_PORT_ACTIVE;
#  - a swallowed command and a device-fatal event: the driver's command
#    timeout runs (or the FATAL interrupt), IBV_EVENT_DEVICE_FATAL reaches
#    the application, the driver resets the device and probes it again,
#    and a pingpong passes without a reboot;
#  - a CREATE_QP whose response cannot be copied out (EFAULT): the driver
#    takes back the QP it had published, the device keeps no QP of it;
#  - ODP memory unmapped while the device is dead (its ODP_UNMAP timed
#    out, or a device-fatal event came first): munmap returns only after
#    the device has been reset, then recovery as above.
# Every injected fault is counted (injected_faults) and used up.
. "$(dirname "$0")/../lib/lib.sh"
qr_init inject
qr_boot 2 || { qr_fail "qr_boot 2: the guests did not boot"; qr_finish; }

# after a recovery: the new netdev addressed as /init does it, and its
# IPv4 RoCEv2 GID at index 1 (what an administrator's network set-up
# does for a new interface)
# $OLD is the ifindex of the netdev before the failure.
UP='i=0; until n=$(ls /sys/bus/pci/drivers/qroce_en/*/net 2>/dev/null) && [ "$(cat /sys/class/net/$n/ifindex)" != $OLD ] && [ -e /sys/class/infiniband/qroce_0 ]; do i=$((i + 1)); [ $i -gt 300 ] && exit 1; sleep 0.1; done; /usr/sbin/ip link set $n up && /usr/sbin/ip addr add $QR_IP dev $n && /usr/sbin/ip -6 addr add $QR_IP6 dev $n nodad && o=${QR_IP%%/*} && o=${o##*.} && i=0 && until grep -q "ffff:0a00:000$o" /sys/class/infiniband/qroce_0/ports/1/gids/1 2>/dev/null; do i=$((i + 1)); [ $i -gt 100 ] && exit 1; sleep 0.1; done'

# injected G N: guest G's injected_faults counter grew by N since $inj0
injected() {
	now=$(qr_counter "$1" injected_faults)
	echo "injected_faults: $inj0 -> $now (want +$2)"
	[ -n "$now" ] && [ "$now" -eq $((inj0 + $2)) ]
}
mark() { inj0=$(qr_counter "$1" injected_faults); }

# cmd_fail OPCODE STATUS OBJECT ERRNO: the next command (of OPCODE, 256:
# any) fails with STATUS; qroce-verb OBJECT reports ERRNO, then succeeds
cmd_fail() {
	mark 1
	qr_qom_set 1 x-inject-cmd-opcode "$1" && qr_qom_set 1 x-inject-cmd-status "$2" &&
		qr_qom_set 1 x-inject-cmd-fail 1 || return 1
	qr_exec 1 "qroce-verb $3" >"$QR_DIR/verb.out"
	trc=$?
	cat "$QR_DIR/verb.out"
	left=$(qr_qom_get 1 x-inject-cmd-fail)
	echo "x-inject-cmd-fail left: $left"
	[ $trc -eq 1 ] && grep -q "failed, errno $4 " "$QR_DIR/verb.out" &&
		[ "$left" = 0 ] && injected 1 1 || return 1
	qr_qom_set 1 x-inject-cmd-opcode 256 || return 1
	qr_exec 1 "qroce-verb $3"
}

# wqe_err: guest 2's next send WQE completes with LOC_PROT_ERR (4), the
# pingpong client reports exactly that status
wqe_err() {
	mark 2
	qr_qom_set 2 x-inject-wqe-status 4 && qr_qom_set 2 x-inject-wqe-err 1 || return 1
	qr_bg 1 srv "ibv_rc_pingpong -d qroce_0 -g 1 -n 5" || return 1
	qr_wait_listen 1 18515 || return 1
	qr_exec 2 "ibv_rc_pingpong -d qroce_0 -g 1 -n 5 10.0.0.1" >"$QR_DIR/wqe.cli"
	trc=$?
	qr_exec 1 'kill $(pidof ibv_rc_pingpong) 2>/dev/null; true'
	qr_bg_wait 1 srv 30 >/dev/null
	cat "$QR_DIR/wqe.cli"
	[ $trc -ne 0 ] && grep -q 'Failed status local protection error (4)' "$QR_DIR/wqe.cli" &&
		injected 2 1
}

# rnr: guest 1's responder answers the next 3 SENDs with RNR NAKs; the
# client retries them and the pingpong passes
rnr() {
	mark 1
	qr_qom_set 1 x-inject-rnr-nak 3 || return 1
	qr_pingpong ibv_rc_pingpong -n 20 -c || return 1
	left=$(qr_qom_get 1 x-inject-rnr-nak)
	echo "x-inject-rnr-nak left: $left"
	[ "$left" = 0 ] && injected 1 3
}

# events: port-down then port-up reach ibv_asyncwatch as PORT_ERR and
# PORT_ACTIVE
events() {
	qr_bg 1 watch "ibv_asyncwatch -d qroce_0" || return 1
	sleep 1
	qr_qom_set 1 x-inject-event port-down && sleep 1 &&
		qr_qom_set 1 x-inject-event port-up && sleep 1
	trc=$?
	echo "qom-set: status $trc"
	watch_for 1 IBV_EVENT_PORT_ACTIVE >"$QR_DIR/events.out"
	cat "$QR_DIR/events.out"
	down=$(sed -n '/IBV_EVENT_PORT_ERR/=' "$QR_DIR/events.out" | head -1)
	up=$(sed -n '/IBV_EVENT_PORT_ACTIVE/=' "$QR_DIR/events.out" | tail -1)
	[ $trc -eq 0 ] && [ -n "$down" ] && [ -n "$up" ] && [ "$down" -lt "$up" ]
}

# watch_for G EVENT: wait (30 s at most) until guest G's ibv_asyncwatch
# has printed EVENT, end it, print what it printed
watch_for() {
	QR_TIMEOUT=60 qr_exec "$1" "i=0; until grep -q $2 /tmp/bg.watch.out; do i=\$((i + 1)); [ \$i -gt 300 ] && break; sleep 0.1; done; kill \$(pidof ibv_asyncwatch) 2>/dev/null; sleep 0.2; cat /tmp/bg.watch.out"
}

# ifindex G: the ifindex of guest G's qroce netdev (a new one after a
# recovery)
ifindex() {
	old=$(qr_exec "$1" 'cat /sys/bus/pci/drivers/qroce_en/*/net/*/ifindex')
	echo "guest $1: netdev ifindex $old before the failure"
}

# recovered G: guest G's device came back (a new qroce_0, addressed), and
# a pingpong between the guests passes
recovered() {
	QR_TIMEOUT=120 qr_exec "$1" "OLD=$old; $UP" || { echo "guest $1: qroce_0 did not come back"; return 1; }
	qr_exec "$1" 'dmesg | grep -E "qroce.*(recover|resetting)"'
	qr_pingpong ibv_rc_pingpong -n 20 -c
}

# swallow: the next command gets no completion; the verb waits for the
# driver's command timeout and fails, the application sees DEVICE_FATAL,
# and the driver recovers
swallow() {
	ifindex 1
	qr_bg 1 watch "ibv_asyncwatch -d qroce_0" || return 1
	sleep 1
	qr_qom_set 1 x-inject-cmd-swallow 1 || return 1
	QR_TIMEOUT=60 qr_exec 1 'qroce-verb pd' >"$QR_DIR/verb.out"
	trc=$?
	cat "$QR_DIR/verb.out"
	watch_for 1 IBV_EVENT_DEVICE_FATAL >"$QR_DIR/swallow.out"
	cat "$QR_DIR/swallow.out"
	# the swallowed command is the first the program sends (the context's
	# or the PD's): either fails after the timeout
	[ $trc -ne 0 ] && grep -Eq 'failed, errno|cannot open' "$QR_DIR/verb.out" &&
		grep -q 'IBV_EVENT_DEVICE_FATAL' "$QR_DIR/swallow.out" || return 1
	left=$(qr_qom_get 1 x-inject-cmd-swallow)
	echo "x-inject-cmd-swallow left: $left"
	[ "$left" = 0 ] && qr_exec 1 'dmesg | grep -E "command 0x[0-9a-f]+ timed out"' || return 1
	recovered 1
}

# fatal: a device-fatal event: DEVICE_FATAL, reset, recovery
fatal() {
	ifindex 2
	qr_bg 2 watch "ibv_asyncwatch -d qroce_0" || return 1
	sleep 1
	qr_qom_set 2 x-inject-event device-fatal || return 1
	watch_for 2 IBV_EVENT_DEVICE_FATAL >"$QR_DIR/fatal.out"
	cat "$QR_DIR/fatal.out"
	grep -q 'IBV_EVENT_DEVICE_FATAL' "$QR_DIR/fatal.out" || return 1
	recovered 2
}

# qps G: how many QPs guest G's device holds (x-objects)
qps() { qr_qom_get "$1" x-objects | grep -o '\\"qpn\\"' | wc -l; }

# qp_efault: CREATE_QP by write() with the driver's part of the response
# on a read-only page: the driver has made and published the QP when the
# copy fails, and takes it back (out of qp_xa, its fault work cancelled,
# DESTROY_QP, rings unpinned); the command fails with EFAULT, the next
# ibv_create_qp succeeds, and the device holds as many QPs as before
qp_efault() {
	n0=$(qps 1)
	qr_exec 1 'qroce-verb qp-efault' >"$QR_DIR/efault.out"
	trc=$?
	cat "$QR_DIR/efault.out"
	n1=$(qps 1)
	echo "QPs in the device: $n0 before, $n1 after"
	[ $trc -eq 0 ] &&
		grep -q '^create_qp (response not writable): failed, errno 14 ' "$QR_DIR/efault.out" &&
		grep -q '^create_qp: ok' "$QR_DIR/efault.out" &&
		[ "${n0:-0}" -gt 0 ] && [ "$n0" = "$n1" ]
}

# dmesg_count G PATTERN: lines of guest G's kernel log matching PATTERN
dmesg_count() { qr_exec "$1" "dmesg | grep -c '$2'"; }

# odp_dead G swallow|fatal: qroce-odp-dead in guest G (ODP traffic, then
# munmap of its ODP region with the next command swallowed: the munmap's
# ODP_UNMAP).  swallow: the driver's command timeout declares the device
# dead; fatal: once the ODP_UNMAP is swallowed, a device-fatal event, which
# the driver's health check finds first.  The program checks that munmap
# returned only after the device's reset, and that DEVICE_FATAL came;
# then the device recovers and a pingpong passes.
odp_dead() {
	ifindex "$1"
	tmo0=$(dmesg_count "$1" 'command 0x1d timed out')
	fat0=$(dmesg_count "$1" 'device failed (device reports FATAL)')
	qr_bg "$1" odpdead "rm -f /tmp/odp.go; qroce-odp-dead -d qroce_0 -g 1 -f /tmp/odp.go" || return 1
	QR_TIMEOUT=120 qr_exec "$1" 'i=0; until grep -q "^READY" /tmp/bg.odpdead.out; do [ -e /tmp/bg.odpdead ] && exit 1; i=$((i + 1)); [ $i -gt 900 ] && exit 1; sleep 0.1; done' ||
		{ qr_exec "$1" 'cat /tmp/bg.odpdead.out'; return 1; }
	qr_qom_set "$1" x-inject-cmd-swallow 1 && qr_exec "$1" 'touch /tmp/odp.go' || return 1
	if [ "$2" = fatal ]; then
		i=0
		until [ "$(qr_qom_get "$1" x-inject-cmd-swallow)" = 0 ]; do
			i=$((i + 1))
			[ $i -gt 30 ] && { echo "the swallow was not used"; return 1; }
			sleep 0.1
		done
		qr_qom_set "$1" x-inject-event device-fatal || return 1
	fi
	qr_bg_wait "$1" odpdead 90 >"$QR_DIR/odpdead.$2.out"
	trc=$?
	cat "$QR_DIR/odpdead.$2.out"
	tmo1=$(dmesg_count "$1" 'command 0x1d timed out')
	fat1=$(dmesg_count "$1" 'device failed (device reports FATAL)')
	echo "ODP_UNMAP timeouts in dmesg: $tmo0 -> $tmo1; FATAL found by the health check: $fat0 -> $fat1"
	[ $trc -eq 0 ] && ! grep -q '^FAIL' "$QR_DIR/odpdead.$2.out" &&
		[ "$(grep -c '^PASS' "$QR_DIR/odpdead.$2.out")" -eq 5 ] || return 1
	if [ "$2" = fatal ]; then
		[ "$fat1" -eq $((fat0 + 1)) ] && [ "$tmo1" -eq "$tmo0" ] || return 1
	else
		[ "$tmo1" -eq $((tmo0 + 1)) ] || return 1
	fi
	recovered "$1"
}

qr_check "failed CREATE_QP (ERR_NORES): ibv_create_qp gives ENOMEM, the next succeeds" cmd_fail 7 4 qp 12
qr_check "failed command (ERR_PARAM, any opcode): ibv_alloc_pd gives EINVAL" cmd_fail 256 2 pd 22
qr_check "CREATE_QP whose response cannot be copied out: EFAULT, the published QP taken back, the next succeeds" qp_efault
qr_check "injected WQE error: the pingpong client gets local protection error" wqe_err
qr_check "3 injected RNR NAKs: the SENDs are retried, the pingpong passes" rnr
qr_check "port down/up events: IBV_EVENT_PORT_ERR, then IBV_EVENT_PORT_ACTIVE" events
qr_check "swallowed command: timeout, DEVICE_FATAL, recovery, pingpong passes" swallow
qr_check "device-fatal event: DEVICE_FATAL, recovery, pingpong passes" fatal
qr_check "ODP region unmapped, its ODP_UNMAP timed out: munmap returns after the reset, DEVICE_FATAL, recovery, pingpong passes" odp_dead 1 swallow
qr_check "ODP region unmapped, device-fatal event: munmap returns after the reset, DEVICE_FATAL, recovery, pingpong passes" odp_dead 2 fatal
qr_finish
