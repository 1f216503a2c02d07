#!/bin/sh
# Benchmark, not a test (make bench-fabric): many flows on one segment.
# Four guests, each with a qroce NIC and a virtio-net NIC with rdma_rxe;
# on each wire the two kinds of NIC have segments of their own, of the same
# kind (two bridges in the switch's namespace, or two multicast hubs).  Two
# patterns of ib_write_bw flows started at once:
#
#   ring    1 -> 2 -> 3 -> 1        (guest 4 idle)
#   incast  2 -> 1, 3 -> 1, 4 -> 1
#
# Each cell: goodput per flow (perftest's "BW average", MB/s = 10^6 B/s;
# 0 for a flow that did not end within the limit), their sum, Jain's
# fairness index (sum x)^2 / (n sum x^2) (1 = fair, 1/n = one flow has it
# all), RoCE packets sent / needed and retransmitted / needed over all
# guests.  Needed: one request packet per path-MTU chunk of each message
# and one ACK per message (see tests/suite/t-fabric.sh); "retransmitted" is
# sent - needed, the packets beyond that minimum (the same measure for both
# devices: rxe has no retransmission counter); qroce's own count of
# retransmitted packets (roce_retrans) is in the last column.  "drops":
# frames the wire dropped towards the guests (qr_drops).
#
#   sh tests/bench/bench-fabric.sh [-n ITERS] [-t SECONDS] [-w "WIRES"] [-v "VARIANTS"]
#     -n  iterations per flow, 64 KiB each (default 1000)
#     -t  time limit per pattern (default 150 s)
#     -w  wires: switch, hub (default "switch hub")
#     -v  qroce variants, each a list of extra -device qroce properties
#         (QR_DEVOPTS) or "default"; default: "dcqcn=on dcqcn=off" if the
#         device has a dcqcn property, else "default".  rxe is measured in
#         the first variant's guests.
#
# The table is also written to build/bench-fabric.txt, and to
# docs/performance.md (scripts/perf-section.sh fabric; QR_PERF_DOC=-
# leaves the document alone).
. "$(dirname "$0")/../lib/lib.sh"
# the command, for the table's header in docs/performance.md
CMDLINE="sh tests/bench/bench-fabric.sh"
for a; do case $a in '' | *[!A-Za-z0-9_./=:,+-]*) a="'$a'" ;; esac; CMDLINE="$CMDLINE $a"; done

usage() {
	echo "usage: sh tests/bench/bench-fabric.sh [-n ITERS] [-t SECONDS] [-w WIRES] [-v VARIANTS]" >&2
	exit 2
}
ITERS=1000
LIMIT=150
WIRES="switch hub"
VARIANTS=""
while getopts n:t:w:v: o; do
	case $o in
	n) ITERS=$OPTARG ;;
	t) LIMIT=$OPTARG ;;
	w) WIRES=$OPTARG ;;
	v) VARIANTS=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
case $ITERS in '' | *[!0-9]* | 0) usage ;; esac
case $LIMIT in '' | *[!0-9]* | 0) usage ;; esac
for w in $WIRES; do
	case $w in switch | hub) ;; *) usage ;; esac
done
S=65536
CMD="ib_write_bw -x 1 -F -s $S -n $ITERS"

qr_init bench-fabric
QR_TIMEOUT=$((LIMIT + 60))
if [ -z "$VARIANTS" ]; then
	if "$QR_QEMU" -nodefaults -device qroce,help 2>/dev/null | grep -q '^ *dcqcn='; then
		VARIANTS="dcqcn=on dcqcn=off"
	else
		VARIANTS=default
	fi
fi
OUT=$QR_B/bench-fabric.txt

RING="1:2 2:3 3:1"
INCAST="2:1 3:1 4:1"

# cell WIRE DEVICE-LABEL DEV NET PATTERN-NAME FLOWS...: one row of the table
cell() {
	cw=$1 label=$2 dev=$3 net=$4 pat=$5
	shift 5
	tag=$cw-$(echo "$label" | tr -c 'a-zA-Z0-9\n' -)-$pat
	qr_flows "$tag" "$dev" "$net" "$LIMIT" "$CMD" "$@" >"$QR_DIR/$tag.log" 2>&1
	mtu=$(qr_mtu 1 "$dev")
	case $dev in
	rxe*) tx=sent_pkts rtx=- ;;
	*) tx=roce_tx_pkts rtx=roce_retrans ;;
	esac
	p=$(((S + ${mtu:-1024} - 1) / ${mtu:-1024}))
	# needed over all guests: every flow's requests and its ACKs
	need=$(($# * ITERS * (p + 1)))
	awk -v wire="$cw" -v label="$label" -v pat="$pat" -v need="$need" -v tx="$tx" \
		-v rtx="$rtx" -v nf=$# -v md="$MD" '
		$1 == "flow" { n++; x = ($5 == 0 && $7 ~ /^[0-9.]+$/) ? $7 : 0; if ($5 == 0) done++
			s += x; s2 += x * x; fl = fl (fl == "" ? "" : " ") (x ? sprintf("%.1f", x) : "x") }
		$1 == "cnt" && $3 == tx { sent += $4 }
		$1 == "cnt" && $3 == rtx { re += $4 }
		$1 == "drop" && $3 != "-" { dr += $3; hasdr = 1 }
		END {
			j = s2 > 0 ? s * s / (n * s2) : 0
			printf "%-6s %-16s %-6s %5s %-20s %7.1f %5.2f %6.2f %6.2f %8s %8s\n",
				wire, label, pat, done + 0 "/" nf, fl, s, j,
				sent / need, (sent - need) / need,
				rtx == "-" ? "-" : re + 0, hasdr ? dr : "-"
			printf "| %s | %s | %s | %s | %s | %.1f | %.2f | %.2f | %.2f | %s | %s |\n",
				wire, label, pat, done + 0 "/" nf, fl, s, j,
				sent / need, (sent - need) / need,
				(rtx == "-" ? "-" : re + 0), (hasdr ? dr : "-") >>md
		}' "$QR_DIR/$tag.res" | tee -a "$OUT"
}

: >"$OUT"
{
	echo "qroce vs rdma_rxe, ib_write_bw -s $S -n $ITERS flows at once; $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "host: $(nproc) CPUs, $(sed -n 's/^model name.*: //p' /proc/cpuinfo | head -1), $(uname -r)"
	printf '%-6s %-16s %-6s %5s %-20s %7s %5s %6s %6s %8s %8s\n' wire device flows done \
		"MB/s per flow" sum Jain sent/nd retr/nd qr-retr drops
} | tee -a "$OUT"
MD=$QR_DIR/perf.md
{
	sed -n '1,2s/$/;/p' "$OUT"
	printf "\`%s\`\n\n" "$CMDLINE"
	echo "| wire | device | flows | done | MB/s per flow | sum | Jain | sent/nd | retr/nd | qr-retr | drops |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|"
} >"$MD"
for w in $WIRES; do
	first=1
	for v in $VARIANTS; do
		if [ "$v" = default ]; then
			QR_DEVOPTS="" label=qroce
		else
			QR_DEVOPTS=$(echo "$v" | tr + ,) label="qroce $v"
		fi
		export QR_DEVOPTS
		if ! qr_boot 4 "$w" rxe; then
			echo "$w: guests did not boot ($label)" | tee -a "$OUT"
			echo "| $w | $label | did not boot | | | | | | | | |" >>"$MD"
			qr_cleanup
			continue
		fi
		cell "$w" "$label" qroce_0 10.0.0 ring $RING
		cell "$w" "$label" qroce_0 10.0.0 incast $INCAST
		if [ $first = 1 ]; then
			cell "$w" rxe rxe0 10.0.1 ring $RING
			cell "$w" rxe rxe0 10.0.1 incast $INCAST
			first=0
		fi
		qr_cleanup
	done
done
echo "table saved in $OUT"
sh "$QR_TOP/scripts/perf-section.sh" fabric "$MD" || :
