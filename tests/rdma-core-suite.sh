#!/bin/sh
# make test-rdma-core: rdma-core 65.0's own Python test suite
# (tests/run_tests.py on pyverbs) in one guest, on qroce_0 and on rdma_rxe
# (rxe0, on the guest's virtio-net NIC), one module per python run with a
# time limit each, loopback on one device.  Vendor modules (mlx5, efa) are
# left out.  Prints a table per module (ok/skip/fail/error on each
# device), the reason of every test skipped on qroce, and checks that
# qroce has no failure and no error (but one rxe has the same way) and
# that every test ok on rxe is ok on qroce.  TAP as tests/run.sh prints it, the whole suite one group; ends
# with "N passed, N failed".
#
#   QR_SUITE_TIMEOUT   seconds per module and device (default 300)
#   QR_SUITE_BUDGET    seconds for all modules; modules not started by then
#                      are counted as errors (default 1500)
#   QR_SUITE_MODULES   the modules to run (default: every generic one)
#
# Logs (kept): build/test-logs/rdma-core-suite/{qroce,rxe}/MODULE.log, the
# per-test results in .../results, the table in
# build/test-logs/rdma-core-table.md.
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)

# the outer run: the inner one's checks as a group, then the totals line
# of run.sh
if [ "${1-}" != inner ]; then
	. "$TOP/tests/lib/tap.sh"
	tap_plan 1
	tap_group rdma-core-suite 1800 sh "$0" inner
	tap_total
	exit
fi

. "$TOP/tests/lib/lib.sh"
QR_INITRD=$QR_B/initramfs-pyverbs.cpio.gz
SUITE=$QR_B/test-logs/rdma-core-suite
TABLE=$QR_B/test-logs/rdma-core-table.md
TESTS=$QR_B/rdma-core-py-install/usr/share/doc/rdma-core/tests
RES=$SUITE/results
PYENV='PYTHONUTF8=1 PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1'

# the generic modules of the suite (not mlx5's, efa's or hns's)
suite_modules() {
	for f in "$TESTS"/test_*.py; do
		m=$(basename "$f" .py)
		case $m in
		test_mlx5_* | test_efa* | test_hns*) ;;
		*) echo "$m" ;;
		esac
	done
}

# in the guest: /dev/shm (multiprocessing), 2 MiB huge pages, pyverbs
suite_guest_setup() {
	qr_exec 1 "grep -q ' /dev/shm tmpfs ' /proc/mounts || mount -t tmpfs shm /dev/shm" &&
		qr_exec 1 'echo 64 >/proc/sys/vm/nr_hugepages; cat /proc/sys/vm/nr_hugepages' &&
		qr_exec 1 "$PYENV python3 -c 'import pyverbs.device as d; print([x.name.decode() for x in d.get_device_list()])'"
}

# how many tests the whole suite has, and how many in the modules run here
suite_list() {
	qr_exec 1 "cd /opt/rdma-core && $PYENV python3 tests/run_tests.py --list-tests" \
		>"$SUITE/list" 2>&1
	sr_all=$(grep -c '^tests\.test_' "$SUITE/list")
	sr_run=$(for sr_m in $MODULES; do grep "^tests\.$sr_m\." "$SUITE/list"; done | wc -l)
	qr_log "the suite lists $sr_all tests, $sr_run of them in these modules"
}

# suite_parse DEV MODULE LOG: unittest's verbose lines to result lines
# "DEV<tab>MODULE<tab>ok|skip|fail|error<tab>TEST<tab>REASON"; a run
# without its "Ran N tests" line, or with fewer results than it says, adds
# an error line for the module itself
suite_parse() {
	awk -v dev="$1" -v mod="$2" -v q="'" '
	function testid(line,   n, part, id) {
		match(line, /\(tests\.[A-Za-z0-9_.]+\)/)
		id = substr(line, RSTART + 1, RLENGTH - 2)
		n = split(id, part, ".")
		sub(/^(ERROR|FAIL): /, "", line)
		sub(/ .*/, "", line)
		return part[n] == line ? id : id "." line
	}
	function out(k, reason) {
		got++
		res[got] = k
		name[got] = cur
		why[got] = reason
		cur = ""
		return 1
	}
	function result(r,   c) {
		if (r == "ok" || r == "expected failure") return out("ok", "")
		if (r == "FAIL" || r == "unexpected success") return out("fail", "")
		if (r == "ERROR") return out("error", "")
		if (substr(r, 1, 8) != "skipped ") return 0
		r = substr(r, 9)
		c = substr(r, 1, 1)
		if (c == q || c == "\"") r = substr(r, 2, length(r) - 2)
		return out("skip", r)
	}
	# the traceback of a failure: its last line says why
	function endblock() {
		if (blk != "") exc[blk] = last
		blk = ""
	}
	/^(ERROR|FAIL): [A-Za-z_][A-Za-z0-9_]* \(tests\./ { endblock(); blk = testid($0); last = ""; next }
	/^Ran [0-9]+ tests? in / { endblock(); ran = $2; next }
	blk != "" && $0 !~ /^(=+|-+)$/ && $0 != "" { last = $0; next }
	/^[A-Za-z_][A-Za-z0-9_]* \(tests\.[A-Za-z0-9_.]+\)/ { cur = testid($0) }
	cur != "" {
		p = index($0, " ... ")
		if (p > 0) result(substr($0, p + 5))
		else result($0)
	}
	END {
		endblock()
		cur = "tests." mod
		if (ran == "") out("error", "no summary: python crashed or timed out")
		else if (got < ran) out("error", "ran " ran " tests, " got " results read")
		for (i = 1; i <= got; i++) {
			r = why[i]
			if (r == "" && (name[i] in exc)) r = substr(exc[name[i]], 1, 200)
			gsub(/\t/, " ", r)
			printf "%s\t%s\t%s\t%s\t%s\n", dev, mod, res[i], name[i], r
		}
	}' "$3"
}

# suite_run DEV GID MODULE: one module on one device, into its log and RES
suite_run() {
	sr_log=$SUITE/$(suite_devname "$1")/$3.log
	sr_t=$(date +%s)
	QR_TIMEOUT=${QR_SUITE_TIMEOUT:-300} qr_exec 1 \
		"cd /opt/rdma-core && $PYENV python3 tests/run_tests.py --dev $1 --gid $2 -v $3" \
		>"$sr_log" 2>&1
	echo "@@rc $? $(($(date +%s) - sr_t))s" >>"$sr_log"
	suite_parse "$(suite_devname "$1")" "$3" "$sr_log" >>"$RES"
}

suite_devname() {
	case $1 in
	qroce_0) echo qroce ;;
	*) echo rxe ;;
	esac
}

# suite_notrun DEV MODULE WHY: a module that could not run counts as an error
suite_notrun() {
	printf '%s\t%s\terror\ttests.%s\t%s\n' "$1" "$2" "$2" "$3" >>"$RES"
}

# suite_all: every module, on qroce_0 and then on rxe0, within the budget
suite_all() {
	sr_start=$(date +%s)
	for sr_m in $MODULES; do
		for sr_dev in qroce_0 rxe0; do
			sr_name=$(suite_devname $sr_dev)
			eval "sr_gid=\$GID_$sr_name"
			if [ $(($(date +%s) - sr_start)) -ge "${QR_SUITE_BUDGET:-1500}" ]; then
				suite_notrun "$sr_name" "$sr_m" "not run: time budget spent"
			elif ! qr_alive; then
				suite_notrun "$sr_name" "$sr_m" "not run: the guest is gone"
			elif [ -z "$sr_gid" ]; then
				suite_notrun "$sr_name" "$sr_m" "not run: no IPv4 RoCE v2 GID"
			else
				suite_run $sr_dev "$sr_gid" "$sr_m"
			fi
			suite_count "$sr_name" "$sr_m"
		done
	done
}

# suite_count DEV MODULE: one progress line
suite_count() {
	awk -F'\t' -v d="$1" -v m="$2" '$1 == d && $2 == m { n[$3]++ }
		END { printf "%s on %s: %d ok, %d skipped, %d failed, %d errors\n",
			m, d, n["ok"], n["skip"], n["fail"], n["error"] }' "$RES"
}

# the table, markdown, to stdout
suite_table() {
	awk -F'\t' '
	!($2 in seen) { seen[$2] = 1; mods[++nm] = $2 }
	{ n[$1, $2, $3]++; tot[$1, $3]++ }
	$1 == "qroce" && $3 == "skip" { skips[++ns] = "- `" $4 "`: " $5 }
	$3 == "fail" || $3 == "error" { bad[$1, ++nb[$1]] = "- `" $4 "`: " $3 ($5 == "" ? "" : ": " $5) }
	function cell(d, m) {
		return n[d, m, "ok"] + 0 "/" n[d, m, "skip"] + 0 "/" n[d, m, "fail"] + 0 "/" n[d, m, "error"] + 0
	}
	function total(d) {
		return tot[d, "ok"] + 0 "/" tot[d, "skip"] + 0 "/" tot[d, "fail"] + 0 "/" tot[d, "error"] + 0
	}
	END {
		print "| module | qroce ok/skip/fail/error | rxe ok/skip/fail/error |"
		print "|---|---|---|"
		for (i = 1; i <= nm; i++) print "| " mods[i] " | " cell("qroce", mods[i]) " | " cell("rxe", mods[i]) " |"
		print "| **total** | **" total("qroce") "** | **" total("rxe") "** |"
		if (ns) {
			print ""
			print "Skipped on qroce (" ns "):"
			print ""
			for (i = 1; i <= ns; i++) print skips[i]
		}
		for (d = 1; d <= 2; d++) {
			dev = d == 1 ? "qroce" : "rxe"
			if (!nb[dev]) continue
			print ""
			print "Failed or errored on " dev " (" nb[dev] "):"
			print ""
			for (i = 1; i <= nb[dev]; i++) print bad[dev, i]
		}
	}' "$RES"
}

# check (a): no test failed or errored on qroce, but for one that failed
# or errored on rxe too with the same result and reason: that one is the
# guest kernel's or rdma-core's, not the device's (it is printed, so the
# table's reader sees it; with rdma-core 65 on the 6.12 guest kernel,
# test_rdmacm_async_resolve_addrinfo, whose kernel command 6.12 lacks)
suite_qroce_clean() {
	awk -F'\t' '$1 == "rxe" && ($3 == "fail" || $3 == "error") { r[$4] = $3 "\t" $5 }
		$1 == "qroce" && ($3 == "fail" || $3 == "error") { q[$4] = $3 "\t" $5 }
		END {
			for (t in q) {
				if (t in r && r[t] == q[t]) { print "the same on rxe0 (not counted):", t, q[t]; continue }
				print q[t], t
				bad = 1
			}
			exit bad
		}' "$RES"
}

# check (b): every test ok on rxe is ok on qroce
suite_rxe_subset() {
	awk -F'\t' '$1 == "qroce" { q[$4] = $3 }
		$1 == "rxe" && $3 == "ok" { r[$4] = 1 }
		END { for (t in r) if (q[t] != "ok") { print t ": ok on rxe, " (t in q ? q[t] : "missing") " on qroce"; bad = 1 }
			exit bad }' "$RES"
}

qr_init rdma-core
rm -rf "$SUITE"
mkdir -p "$SUITE/qroce" "$SUITE/rxe"
: >"$RES"
MODULES=${QR_SUITE_MODULES:-$(suite_modules)}
[ -n "$MODULES" ] || { echo "no tests in $TESTS: run 'make pyverbs'"; exit 2; }
SR_T0=$(date +%s)
qr_boot 1 rxe || { qr_fail "boot a guest with qroce_0 and rxe0"; qr_finish; }
qr_check "guest: /dev/shm, huge pages, pyverbs lists the devices" suite_guest_setup
GID_qroce=$(qr_gid_v4 1 qroce_0)
GID_rxe=$(qr_gid_v4 1 rxe0)
qr_log "GID index (IPv4, RoCE v2): qroce_0 ${GID_qroce:-none}, rxe0 ${GID_rxe:-none}"
qr_log "$(echo $MODULES | wc -w) modules: $(echo $MODULES)"
suite_list
suite_all
{
	echo "rdma-core 65.0 tests/run_tests.py, one module per run, $(date -u +%Y-%m-%d)," \
		"$(($(date +%s) - SR_T0)) s: \`make test-rdma-core\`"
	echo
	suite_table
} >"$TABLE"
cat "$TABLE"
qr_check "qroce_0: no test of the suite failed or errored (but as on rxe0)" suite_qroce_clean
qr_check "every test ok on rxe0 is ok on qroce_0" suite_rxe_subset
qr_finish
