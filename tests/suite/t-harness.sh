#!/bin/sh
# The harness's own output (no guest): TAP as tests/lib/tap.sh describes it.
# Fake test files run alone and through tests/run.sh (QR_ONLY), and the
# qtest group runs on a fake qos-test; every line of their output must be
# the one expected (times aside), the counts and exit statuses right, and
# prove, when installed, must read the TAP without a parse error.
. "$(dirname "$0")/../lib/lib.sh"
QR_NEED=""
qr_init harness
F=$QR_DIR/fake
mkdir -p "$F"

# fake NAME BODY: test file F/t-NAME.sh running BODY with lib.sh; its logs
# go to build/test-logs/harness/NAME, inside this test's own
fake() {
	printf '%s\n' "QR_TOP='$QR_TOP'" '. "$QR_TOP/tests/lib/lib.sh"' 'QR_NEED=""' \
		"qr_init harness/$1" "$2" >"$F/t-$1.sh"
}
fake mixed 'qr_log "a comment"
echo "a guest'"'"'s chatter"
qr_check "first passes" true
qr_check "second passes" true
qr_check "third fails" sh -c "echo why; exit 1"
qr_finish'
fake noplan 'qr_check "passes, then the file stops" true
exit 3'
fake pass 'qr_check "passes" true
qr_finish'

# same OUT STATUS WANT: OUT, with a check's time as (Ns), is WANT's text
# (stdin), and the command behind it exited with STATUS
same() {
	sed -E 's/\([0-9]+s\)$/(Ns)/' "$1" >"$1.n"
	diff -u - "$1.n" || return 1
	[ "$2" = "$3" ] || { echo "exit status $2, not $3"; return 1; }
}

alone() {
	sh "$F/t-mixed.sh" >"$F/alone" 2>&1
	same "$F/alone" $? 1 <<EOF
TAP version 13
# [harness/mixed] a comment
a guest's chatter
ok 1 - first passes (Ns)
ok 2 - second passes (Ns)
not ok 3 - third fails (Ns)
# | why
1..3
# harness/mixed: 2 passed, 1 failed
# logs kept in $QR_B/test-logs/harness/mixed
EOF
}

runner() {
	QR_ONLY="$F/t-mixed.sh $F/t-noplan.sh $F/t-pass.sh" sh "$QR_TOP/tests/run.sh" >"$F/top" 2>&1
	same "$F/top" $? 1 <<EOF
TAP version 13
1..3
    # Subtest: t-mixed
    # [harness/mixed] a comment
    # a guest's chatter
    ok 1 - first passes (Ns)
    ok 2 - second passes (Ns)
    not ok 3 - third fails (Ns)
    # | why
    1..3
    # harness/mixed: 2 passed, 1 failed
    # logs kept in $QR_B/test-logs/harness/mixed
not ok 1 - t-mixed (Ns)
    # Subtest: t-noplan
    ok 1 - passes, then the file stops (Ns)
    # t-noplan: stopped early: 1 tests ran, plan: none
not ok 2 - t-noplan (Ns)
    # Subtest: t-pass
    ok 1 - passes (Ns)
    1..1
    # harness/pass: 1 passed, 0 failed
ok 3 - t-pass (Ns)
4 passed, 2 failed
EOF
}

# a qos-test that lists two qroce tests and one of another device, and
# prints a plan after each test as the real one does with -p
fake_qos() {
	mkdir -p "$F/qemu/tests/qtest"
	cat >"$F/qemu/tests/qtest/qos-test" <<'EOF'
#!/bin/sh
if [ "$1" = -l ]; then
	printf '%s\n' /x86_64/pc/qroce/qroce-tests/a /x86_64/pc/qroce/qroce-tests/b /x86_64/pc/e1000e/x
	exit 0
fi
echo "# args: $*"
echo "ok 1 /x86_64/pc/qroce/qroce-tests/a"
echo "1..1"
echo "qemu-system-x86_64: warning: chatter"
echo "ok 2 /x86_64/pc/qroce/qroce-tests/b # SKIP no wire"
echo "1..2"
echo "not ok 3 /x86_64/pc/qroce/qroce-tests/c"
echo "1..3"
exit 1
EOF
	chmod +x "$F/qemu/tests/qtest/qos-test"
}

qtest() {
	fake_qos
	sh -c '. "$1/tests/lib/tap.sh"; tap_plan 1
		tap_group qtest 30 sh "$1/tests/qtest.sh" "$2/qemu" "$2/qtest.log" 20
		tap_total' sh "$QR_TOP" "$F" >"$F/qtest" 2>&1
	same "$F/qtest" $? 1 <<EOF &&
TAP version 13
1..1
    # Subtest: qtest
    ok 1 - /x86_64/pc/qroce/qroce-tests/a
    ok 2 - /x86_64/pc/qroce/qroce-tests/b # SKIP no wire
    not ok 3 - /x86_64/pc/qroce/qroce-tests/c
    1..3
    # qtest: 1 passed, 1 failed
not ok 1 - qtest (Ns)
1 passed, 1 failed
EOF
		grep -qx '# args: --tap -k -p /x86_64/pc/qroce/qroce-tests/a -p /x86_64/pc/qroce/qroce-tests/b' \
			"$F/qtest.log"
}

# read FILE FAILED: prove reads FILE's TAP without a parse error and
# names the tests FAILED as failed ("" for none: it passes)
read_tap() {
	prove -e cat "$1" >"$1.prove" 2>&1
	rc=$?
	cat "$1.prove"
	! grep -q 'Parse errors' "$1.prove" || return 1
	if [ -z "$2" ]; then
		[ $rc -eq 0 ] && grep -q '^Result: PASS' "$1.prove"
	else
		[ $rc -ne 0 ] && grep -Eq "^  Failed tests?: +$2\$" "$1.prove"
	fi
}

proved() {
	sh "$F/t-pass.sh" >"$F/pass" 2>&1
	read_tap "$F/alone" 3 && read_tap "$F/top" 1-2 && read_tap "$F/qtest" 1 &&
		read_tap "$F/pass" ""
}

qr_check "a test file alone prints TAP: its checks, comments, the plan last" alone
qr_check "tests/run.sh nests each file, counts its checks, fails one without a plan" runner
qr_check "the qtest group: qos-test's lines numbered again under one plan" qtest
if command -v prove >/dev/null; then
	qr_check "prove reads all of it: no parse error, the failed tests named" proved
else
	qr_log "prove is not installed: its check is left out"
fi
qr_finish
