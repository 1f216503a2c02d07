#!/bin/sh
# qroce-vm (the top of the tree; issue 36, item 4) and the harness's
# accelerator (QR_ACCEL, tests/lib/lib.sh; item 3): the probe's verdict on
# this machine (a /dev/kvm that cannot run the kernel: TCG, with the
# reason in one line), its cache, QR_ACCEL=tcg without a probe, a bad
# QR_ACCEL; qroce-vm's errors (a bad option, a missing file, a guest that
# does not boot), a pingpong between two guests as one command line with
# a file added (its bytes compared in the guests), a failing command's
# status, and the console without --exec on stdin.  qroce-vm checks its
# guests' dmesg itself (as qr_cleanup does): its TAP lines are checked.
. "$(dirname "$0")/../lib/lib.sh"
qr_init qroce-vm
VM=$QR_TOP/qroce-vm
D=$QR_DIR

# acc OUT VAR=VALUE...: qr_accel in a shell of its own with VARs; its
# output, then "args: QR_ACCEL_ARGS" and "ms: its milliseconds", in OUT
acc() {
	o=$1
	shift
	env QR_TOP="$QR_TOP" "$@" sh -c '. "$QR_TOP/tests/lib/lib.sh"
		t0=$(date +%s%N); qr_accel; rc=$?
		echo "args: $QR_ACCEL_ARGS"
		echo "ms: $((($(date +%s%N) - t0) / 1000000))"
		exit $rc' >"$o" 2>&1
	qa_rc=$?
	cat "$o"
	return $qa_rc
}

accel_auto() {
	rm -f "$D/accel.cache"
	acc "$D/auto" QR_ACCEL=auto QR_ACCEL_CACHE="$D/accel.cache" QR_DIR="$D" || return 1
	[ "$(grep -c '^# accel:' "$D/auto")" = 1 ] || { echo "not one note"; return 1; }
	[ "$(sed -n 's/^ms: //p' "$D/auto")" -le 10000 ] || { echo "slower than 10 s"; return 1; }
	if grep -q '^# accel: kvm unusable here (..*), using tcg$' "$D/auto"; then
		grep -qx 'args: -accel tcg -cpu max' "$D/auto" && v=tcg
	else
		grep -q '^# accel: kvm (..*), -cpu host$' "$D/auto" &&
			grep -qx 'args: -accel kvm -cpu host' "$D/auto" && v=kvm
	fi || { echo "the note and the arguments do not match"; return 1; }
	echo "probe's log:"
	head -3 "$D/accel-probe.log"
	# here: /dev/kvm opens and QEMU creates the VM, but stops at the
	# kernel's decompressor with "KVM internal error" (emulation failure)
	if grep -q 'KVM internal error' "$D/accel-probe.log"; then
		grep -qx '# accel: kvm unusable here (KVM internal error: ..*), using tcg' "$D/auto" ||
			return 1
	fi
	[ "$(sed -n 2p "$D/accel.cache")" = $v ] && [ "$(wc -l <"$D/accel.cache")" = 3 ]
}

accel_cached() {
	acc "$D/cached" QR_ACCEL=auto QR_ACCEL_CACHE="$D/accel.cache" QR_DIR="$D/nonesuch" || return 1
	[ "$(grep '^# accel:' "$D/cached")" = "$(grep '^# accel:' "$D/auto")" ] &&
		[ "$(sed -n 's/^ms: //p' "$D/cached")" -lt 1000 ] && [ ! -e "$D/nonesuch" ]
}

accel_forced() {
	acc "$D/tcg" QR_ACCEL=tcg QR_ACCEL_CACHE="$D/tcg.cache" QR_DIR="$D" \
		QR_ACCEL_PROBE_ARGS=--no-such-option || return 1
	[ "$(cat "$D/tcg")" = "args: -accel tcg -cpu max
ms: $(sed -n 's/^ms: //p' "$D/tcg")" ] && [ ! -e "$D/tcg.cache" ] || return 1
	acc "$D/kvm" QR_ACCEL=kvm QR_ACCEL_CACHE="$D/tcg.cache" || return 1
	grep -qx '# accel: kvm (QR_ACCEL=kvm), -cpu host' "$D/kvm" &&
		grep -qx 'args: -accel kvm -cpu host' "$D/kvm" && [ ! -e "$D/tcg.cache" ]
}

# the probe's other answer: a kernel that reaches its banner (TCG stands
# in for a KVM that works, which this machine does not have)
accel_banner() {
	acc "$D/banner" QR_ACCEL=auto QR_ACCEL_CACHE= QR_ACCEL_PROBE_ARGS="-accel tcg -cpu max" || return 1
	grep -qx '# accel: kvm (the kernel reached its banner in [0-9.]* s), -cpu host' "$D/banner" &&
		grep -qx 'args: -accel kvm -cpu host' "$D/banner"
}

# one_line OUT ERR STATUS WANT-STATUS [WANT-ERR]: nothing on stdout (not
# even TAP's version line: it stopped before qr_init, before any guest),
# one line on stderr (WANT-ERR if given), the status wanted
one_line() {
	echo "status $3; stdout:"
	cat "$1"
	echo "stderr:"
	cat "$2"
	[ "$3" = "$4" ] && [ "$(wc -l <"$2")" = 1 ] && [ ! -s "$1" ] &&
		{ [ -z "${5:-}" ] || [ "$(cat "$2")" = "$5" ]; }
}

bad_accel() {
	QR_ACCEL=fast sh -c '. "$1/tests/lib/lib.sh"; qr_init bad; echo after' sh "$QR_TOP" \
		>"$D/ba.out" 2>"$D/ba.err"
	one_line "$D/ba.out" "$D/ba.err" $? 2 "QR_ACCEL=fast: not auto, kvm or tcg" || return 1
	QR_ACCEL=fast "$VM" --exec '1: true' >"$D/bv.out" 2>"$D/bv.err"
	one_line "$D/bv.out" "$D/bv.err" $? 2 || return 1
	"$VM" --accel slow >"$D/bw.out" 2>"$D/bw.err"
	one_line "$D/bw.out" "$D/bw.err" $? 2 "qroce-vm: --accel (or QR_ACCEL) slow: auto, kvm or tcg"
}

errors() {
	"$VM" --help >"$D/help" 2>&1 && grep -q '^usage: qroce-vm \[-n N\]' "$D/help" &&
		grep -q -- '--exec' "$D/help" || { cat "$D/help"; return 1; }
	"$VM" --frobnicate >"$D/e1.out" 2>"$D/e1.err"
	one_line "$D/e1.out" "$D/e1.err" $? 2 "qroce-vm: unknown option --frobnicate (qroce-vm --help)" || return 1
	"$VM" --image fedora >"$D/e2.out" 2>"$D/e2.err"
	one_line "$D/e2.out" "$D/e2.err" $? 2 "qroce-vm: --image fedora: busybox or debian" || return 1
	QR_DEBIAN=$D/nodebian "$VM" --image debian >"$D/e5.out" 2>"$D/e5.err"
	one_line "$D/e5.out" "$D/e5.err" $? 2 "qroce-vm: --image debian: no $D/nodebian/disk.raw (make image-debian)" || return 1
	"$VM" --add "$D/nonesuch:/root/x" --exec '1: true' >"$D/e3.out" 2>"$D/e3.err"
	one_line "$D/e3.out" "$D/e3.err" $? 2 "qroce-vm: --add $D/nonesuch:/root/x: no such file: $D/nonesuch" || return 1
	"$VM" -n 2 --exec '3: true' >"$D/e4.out" 2>"$D/e4.err"
	one_line "$D/e4.out" "$D/e4.err" $? 2 "qroce-vm: --exec: guest 3: a number 1..2"
}

# a kernel that is not one: QEMU refuses it, qroce-vm says so in a line
no_boot() {
	echo "not a kernel" >"$D/bzImage"
	"$VM" -n 1 --accel tcg --kernel "$D/bzImage" --exec '1: true' >"$D/nb.out" 2>"$D/nb.err"
	rc=$?
	one_line /dev/null "$D/nb.err" $rc 1 || return 1
	grep -q '^qroce-vm: the guests did not boot (logs in ' "$D/nb.err" &&
		dir=$(sed -n 's/.*(logs in \([^:]*\):.*/\1/p' "$D/nb.err") &&
		tail -3 "$dir/g1/qemu.log" && rm -rf "$dir"
}

# tap_sane FILE: FILE is TAP as qroce-vm prints it: the version line,
# tests numbered 1..N, the plan 1..N, comments; prove reads it too
tap_sane() {
	awk 'NR == 1 && $0 != "TAP version 13" { print "line 1: " $0; bad = 1 }
		/^(not )?ok / { n++; k = $1 == "not" ? $3 : $2; if (k != n) { print "test " n " numbered " k; bad = 1 } }
		/^1\.\.[0-9]+$/ { plan = substr($0, 4) }
		!/^(TAP version 13$|(not )?ok |1\.\.[0-9]+$|#)/ { print "not TAP: " $0; bad = 1 }
		END { if (plan != n) { print "plan " plan ", " n " tests"; bad = 1 }; exit bad }' "$1" ||
		return 1
	command -v prove >/dev/null || return 0
	prove -e cat "$1" >"$1.prove" 2>&1
	! grep -q 'Parse errors' "$1.prove" || { cat "$1.prove"; return 1; }
}

pingpong() {
	head -c 300000 /dev/urandom >"$D/blob"
	t0=$(date +%s)
	"$VM" --add "$D/blob:/tmp/in/blob" --exec '1: md5sum /tmp/in/blob' --exec '2: md5sum /tmp/in/blob' \
		--exec '2: ibv_rc_pingpong -g $QR_GID &' --exec '1: ibv_rc_pingpong -g $QR_GID $QR_ADDR_2' \
		>"$D/pp.out" 2>&1
	rc=$?
	echo "status $rc in $(($(date +%s) - t0)) s"
	cat "$D/pp.out"
	[ $rc -eq 0 ] && tap_sane "$D/pp.out" &&
		grep -q '^ok 4 - 1: ibv_rc_pingpong -g \$QR_GID \$QR_ADDR_2 ([0-9]*s)$' "$D/pp.out" &&
		grep -q '^ok 5 - 2: ibv_rc_pingpong -g \$QR_GID & (ended)$' "$D/pp.out" &&
		[ "$(grep -Ec '^# \[g[12]\] [0-9]+ bytes in [0-9.]+ seconds' "$D/pp.out")" = 2 ] &&
		grep -q '^# guest 2: qroce_0 on eth0, 10.0.0.2/24 .*; QR_ADDR_2=10.0.0.2 QR_GID=1$' "$D/pp.out" &&
		grep -q '^#   GID 1 0000:0000:0000:0000:0000:ffff:0a00:0001 RoCE v2$' "$D/pp.out" &&
		grep -q '^# qroce-vm: 7 passed, 0 failed$' "$D/pp.out"
}

added() {
	sum=$(md5sum <"$D/blob" | cut -d' ' -f1)
	echo "host: $sum"
	grep "/tmp/in/blob" "$D/pp.out"
	grep -qx "# \[g1\] $sum  /tmp/in/blob" "$D/pp.out" &&
		grep -qx "# \[g2\] $sum  /tmp/in/blob" "$D/pp.out"
}

dmesg_lines() {
	grep 'dmesg' "$D/$1"
	grep -qx 'ok [0-9]* - guest 1: dmesg has no WARNING:, BUG: or Oops ([0-9]*s)' "$D/$1" &&
		{ [ "$2" = 1 ] || grep -qx 'ok [0-9]* - guest 2: dmesg has no WARNING:, BUG: or Oops ([0-9]*s)' "$D/$1"; }
}

# a failing command: the first failure's status is qroce-vm's, the
# commands after it run, a background command's end comes last
failing() {
	"$VM" -n 1 --accel tcg --exec '1: (sleep 1; exit 5) &' --exec '1: true' \
		--exec '1: echo out; exit 7' --exec '1: echo after' >"$D/f.out" 2>&1
	rc=$?
	echo "status $rc"
	cat "$D/f.out"
	[ $rc -eq 7 ] && tap_sane "$D/f.out" &&
		grep -q '^ok 1 - 1: (sleep 1; exit 5) & (started: ' "$D/f.out" &&
		grep -q '^ok 2 - 1: true ([0-9]*s)$' "$D/f.out" &&
		grep -q '^not ok 3 - 1: echo out; exit 7 ([0-9]*s, status 7)$' "$D/f.out" &&
		grep -qx '# \[g1\] out' "$D/f.out" &&
		grep -q '^ok 4 - 1: echo after ' "$D/f.out" && grep -qx '# \[g1\] after' "$D/f.out" &&
		grep -q '^not ok 5 - 1: (sleep 1; exit 5) & (ended, status 5)$' "$D/f.out" &&
		grep -q '^# qroce-vm: 4 passed, 2 failed$' "$D/f.out" &&
		grep -q '^# logs kept in ' "$D/f.out" &&
		rm -rf "$(sed -n 's/^# logs kept in //p' "$D/f.out")"
}

# no --exec, stdin a pipe: a shell on the console reads it; with --rxe,
# rdma_rxe on virtio-net, 10.0.1.G
console() {
	printf '%s\n' 'echo qrvm-$((6 * 7)) $QR_ADDR_1 $QR_DEV' 'exit' |
		"$VM" -n 1 --rxe --accel tcg >"$D/c.out" 2>&1
	rc=$?
	echo "status $rc"
	cat "$D/c.out"
	[ $rc -eq 0 ] && grep -q 'qrvm-42 10.0.1.1 rxe0' "$D/c.out" &&
		grep -q '^# guest 1: rxe0 on eth[0-9], 10.0.1.1/24 .*; QR_ADDR_1=10.0.1.1 QR_GID=1$' "$D/c.out" &&
		grep -q "^# guest 1's console; exit or Ctrl-D ends it$" "$D/c.out"
}

qr_check "QR_ACCEL=auto: the probe decides in 10 s at most; one note naming its reason (here: KVM internal error, so tcg), the arguments to match" accel_auto
qr_check "the verdict is cached (build/accel.cache): the next run reads it, no probe, the same note" accel_cached
qr_check "QR_ACCEL=tcg: no probe, no note; QR_ACCEL=kvm: -cpu host, no probe" accel_forced
qr_check "the probe: a kernel that prints its banner counts as working (TCG standing in for KVM)" accel_banner
qr_check "a bad QR_ACCEL or --accel: one line on stderr, status 2 (lib.sh and qroce-vm)" bad_accel
qr_check "qroce-vm --help; a bad option, a bad --image, --image debian unbuilt, a missing --add file, a guest out of range: one line, status 2, no guest" errors
qr_check "qroce-vm: a guest that does not boot: one line, status 1" no_boot
qr_check "qroce-vm --exec: ibv_rc_pingpong between two guests (server in the background), status 0, TAP" pingpong
qr_check "qroce-vm --add: the file's bytes in both guests are the host's (md5sum)" added
qr_check "qroce-vm --exec: both guests' dmesg checked, no WARNING:, BUG: or Oops" dmesg_lines pp.out 2
qr_check "qroce-vm --exec: a failing command's status is qroce-vm's; later commands run; a background command's end reported" failing
qr_check "qroce-vm --exec, the failing run: the guest's dmesg checked, clean" dmesg_lines f.out 1
qr_check "qroce-vm without --exec: the console's shell reads stdin; --rxe: rxe0 on 10.0.1.1" console
qr_check "qroce-vm without --exec: the guest's dmesg checked, clean" dmesg_lines c.out 1
qr_finish
