# TAP output of the harness (POSIX sh), sourced by tests/lib/lib.sh, by the
# runners (tests/run.sh, ulp/run-ulp.sh, asan.sh, rdma-core-suite.sh), by
# tests/qtest.sh and by scripts/check.sh.  The shape is KTAP's, the
# kernel's TAP: a runner's groups (the gates, the qtests, one test file
# each) nest, indented 4 spaces, under its own plan, and prove reads the
# top level (it passes over the indented lines):
#
#   TAP version 13
#   1..K                         one test per group, known up front
#       # Subtest: t-srq
#       ok 1 - DESC (3s)
#       not ok 2 - DESC (5s)
#       # | what the failed check printed: comments
#       1..2
#       # srq: 1 passed, 1 failed
#   not ok 1 - t-srq (8s)        ok only if no check failed and the plan came
#                                (the group's wall time in brackets)
#   P passed, F failed           the runner's last line, for people
#
#   tap_line STATUS DESC         one numbered test line; STATUS 0 is ok
#   tap_test STATUS DESC         the same, counted in TAP_PASS or TAP_FAIL
#   tap_end NAME P F             a test file's plan and its summary comment
#   tap_plan K                   a runner's version line and plan
#   tap_group NAME SECS CMD...   run CMD as a nested group, its checks added
#                                to TAP_PASS and TAP_FAIL, then its line
#   tap_file FILE SECS           tap_group for one test file
#   tap_total [TEXT]             "P passed, F failed" (TEXT after it);
#                                status 0 only if nothing failed

TAP_N=0
TAP_PASS=0
TAP_FAIL=0

tap_line() {
	tl_desc=$2
	# a bare '#' would start a directive (SKIP, TODO): escape it
	case $tl_desc in
	*'#'*) tl_desc=$(printf '%s\n' "$tl_desc" | sed 's/#/\\#/g') ;;
	esac
	TAP_N=$((TAP_N + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $TAP_N - $tl_desc"
	else
		echo "not ok $TAP_N - $tl_desc"
	fi
}

tap_test() {
	if [ "$1" -eq 0 ]; then
		TAP_PASS=$((TAP_PASS + 1))
	else
		TAP_FAIL=$((TAP_FAIL + 1))
	fi
	tap_line "$1" "$2"
}

tap_end() {
	echo "1..$TAP_N"
	echo "# $1: $2 passed, $3 failed"
}

tap_plan() {
	echo "TAP version 13"
	echo "1..$1"
}

# tap_nest: a group's output as nested lines: its TAP lines as they are,
# its own version line dropped, anything else (a guest's chatter, a
# message on stderr) made a comment; all indented 4 spaces
tap_nest() {
	sed -E -e '/^TAP version /d' -e '/^(ok |not ok |1\.\.[0-9]|#)/!s/^/# /' \
		-e 's/^/    /'
}

# tap_count FILE: in a group's output, tc_p checks passed (ok, not
# skipped), tc_f failed, tc_n test lines in all, tc_plan its plan's count
tap_count() {
	tc_p=$(grep '^ok ' "$1" | grep -vc ' # SKIP')
	tc_f=$(grep -c '^not ok ' "$1")
	tc_n=$(grep -cE '^(ok|not ok) ' "$1")
	tc_plan=$(sed -n 's/^1\.\.\([0-9][0-9]*\).*/\1/p' "$1" | tail -1)
}

tap_group() {
	tg_name=$1 tg_secs=$2
	shift 2
	tg_out=$(mktemp)
	echo "    # Subtest: $tg_name"
	tg_t0=$(date +%s)
	timeout "$tg_secs" "$@" 2>&1 | tee "$tg_out" | tap_nest
	tap_count "$tg_out"
	rm -f "$tg_out"
	# no plan, or one that does not match: it stopped early (a timeout,
	# a crash, an exit before qr_finish); that is one more failure
	if [ "$tc_plan" != "$tc_n" ]; then
		echo "    # $tg_name: stopped early: $tc_n tests ran, plan: ${tc_plan:+1..}${tc_plan:-none}"
		tc_f=$((tc_f + 1))
	fi
	TAP_PASS=$((TAP_PASS + tc_p))
	TAP_FAIL=$((TAP_FAIL + tc_f))
	tap_line "$tc_f" "$tg_name ($(($(date +%s) - tg_t0))s)"
}

tap_file() {
	tf_name=${1##*/}
	tap_group "${tf_name%.sh}" "$2" sh "$1"
}

tap_total() {
	echo "$TAP_PASS passed, $TAP_FAIL failed${1-}"
	[ "$TAP_FAIL" -eq 0 ]
}
