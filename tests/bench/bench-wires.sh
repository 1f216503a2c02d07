#!/bin/sh
# The wires qr_boot offers for two guests, side by side (not pass/fail):
# one 64 KiB ib_write_bw flow over qroce on each of stream, dgram, switch
# and hub, its goodput and the frames the wire dropped, and the round-trip
# time of 20 pings over qroce's netdev.  The table goes to
# docs/performance.md at the end (scripts/perf-section.sh wires;
# QR_PERF_DOC=- leaves the document alone); docs/harness.md says what it
# showed when the switch became the default.
#   bench-wires.sh [ITERATIONS]   (default 2000)
. "$(dirname "$0")/../lib/lib.sh"
# the command, for the table's header in docs/performance.md
CMDLINE="sh tests/bench/bench-wires.sh"
for a; do case $a in '' | *[!A-Za-z0-9_./=:,+-]*) a="'$a'" ;; esac; CMDLINE="$CMDLINE $a"; done
qr_init bench-wires
N=${1:-2000}
case $N in *[!0-9]* | "") echo "usage: bench-wires.sh [ITERATIONS]" >&2; exit 2 ;; esac
CMD="ib_write_bw -x 1 -F -s 65536 -n $N"
MD=$QR_DIR/perf.md
{
	echo "the wires for two guests, one $CMD flow over qroce on each; $(date -u '+%Y-%m-%d %H:%M UTC');"
	echo "host: $(nproc) CPUs, $(sed -n 's/^model name.*: //p' /proc/cpuinfo | head -1), $(uname -r);"
	printf "\`%s\`\n\n" "$CMDLINE"
} >"$MD"
# out LINE: a line of the table, printed and in $MD
out() {
	echo "$1"
	echo "$1" >>"$MD"
}
out "| wire | ib_write_bw 64 KiB, MB/s | frames dropped | ping avg / max, ms |"
out "|---|---|---|---|"
for w in stream dgram switch hub; do
	o=$w
	[ $w = stream ] && o=""	# the default for two guests
	if ! qr_boot 2 $o; then
		out "| $w | did not boot | | |"
		qr_cleanup
		continue
	fi
	qr_flows "w-$w" qroce_0 10.0.0 300 "$CMD" 1:2 >"$QR_DIR/w-$w.log" 2>&1
	gp=$(awk '$1 == "flow" { print $7 }' "$QR_DIR/w-$w.res")
	dr=$(awk '$1 == "drop" { d = ($3 == "-") ? "-" : d + $3 } END { print d }' "$QR_DIR/w-$w.res")
	qr_exec 1 'ping -c 20 -i 0.2 10.0.0.2' >"$QR_DIR/ping-$w" 2>&1
	rtt=$(sed -n 's|.*= [0-9.]*/\([0-9.]*\)/\([0-9.]*\).*|\1 / \2|p' "$QR_DIR/ping-$w")
	out "| $w | ${gp:--} | ${dr:--} | ${rtt:--} |"
	qr_cleanup
done
sh "$QR_TOP/scripts/perf-section.sh" wires "$MD" || :
rm -rf "$QR_DIR"
