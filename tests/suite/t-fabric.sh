#!/bin/sh
# RC on a shared segment (issue 12): rings of ib_write_bw flows started at
# once, on the switch (a Linux bridge, qr_boot's default for 3 guests and
# more), on the hub (QEMU's multicast socket, which drops under load) and
# on a switch of two hosts joined by VXLAN (qr_boot hosts2, at the end),
# and an incast of three senders into one receiver whose switch port has a
# shallow buffer (128 frames, about 140 KB: three 128-packet windows do not
# fit).  Every flow must end within a bound, without congestion collapse:
#
#   RoCE packets sent <= 1.5 x the packets needed, by every guest that
#   sends data and by all guests together
#   duplicate requests a guest receives <= 10 % of the packets it receives
#
# from the device's counters (roce_tx_pkts, roce_rx_pkts, roce_dup_reqs)
# across the flows.  Packets needed: a guest that sends F flows and
# receives R of them, each of -n N messages of S bytes at path MTU M
# (ibv_devinfo's active_mtu, 4096 with the guests' Ethernet MTU 9000),
# needs F x N x ceil(S / M) request packets and R x N acknowledgements:
# one ACK per message, which is what a responder owes a requester that sets
# AckReq on each message's last packet (coalescing may send fewer; today's
# engine also asks for one every 64 PSNs, so 2 per 64 KiB message, 1.5 %
# of the data; perftest's connection set-up goes over TCP, not RoCE).  An
# incast's receiver sends ACKs only: it counts in the total, not alone.
# So an engine that ACKs every packet, or retransmits more than about half
# of its data, fails.
#
# If the device has CNP counters, the receiver must have sent CNPs and the
# senders handled some.  With a dcqcn property, the incast then runs again
# with DCQCN off (qom-set, same guests): with it on the senders must have
# cut their rates (rate_cuts), with it off handled CNPs and cut nothing.
# The receiver's drops (the switch's tail drops on its port and the
# device's receive drops) with it on and off are logged as figures: on 2
# cores part of them is CPU starvation of the receiver's QEMU, not
# congestion alone, and the sums of four pairs came out either way.
# tests/bench/bench-fabric.sh measures them (docs/performance.md).
#
#   QR_FABRIC_N     iterations per flow (default 1000)
#   QR_FABRIC_T     seconds every flow of a step must end in (default 60:
#                   64 MB per flow at 1.1 MB/s; rxe does 2 MB/s a flow in
#                   this ring on the hub)
#   QR_FABRIC_QLEN  the incast receiver's switch port buffer, in frames
#                   (default 128; the rings keep qr_boot's 1000)
#   QR_FABRIC_IN    iterations per flow of the incasts (default 2000)
#   QR_FABRIC_PARTS the boots to run, of "switch hub hosts" (default all)
#   QR_FABRIC_HN    iterations per flow of the two hosts' ring and incast
#                   (default 400)
#   QR_FABRIC_A2A   iterations per flow of the all-to-all (default 200)
. "$(dirname "$0")/../lib/lib.sh"
qr_init fabric
QR_TIMEOUT=300
N=${QR_FABRIC_N:-1000}
T=${QR_FABRIC_T:-60}
S=65536
CMD="ib_write_bw -x 1 -F -s $S -n $N"

# run TAG SRC:DST...: the flows at once, and the checks on them
run() {
	tag=$1
	shift
	nf=$#
	qr_flows "$tag" qroce_0 10.0.0 "$T" "$CMD" "$@" >"$QR_DIR/$tag.log" 2>&1
	mtu=$(qr_mtu 1 qroce_0)
	# guest: flows out, flows in
	g=1
	: >"$QR_DIR/$tag.need"
	while [ $g -le "$QR_N" ]; do
		out=0 in=0
		for f in "$@"; do
			[ "${f%:*}" = $g ] && out=$((out + 1))
			[ "${f#*:}" = $g ] && in=$((in + 1))
		done
		p=$(((S + ${mtu:-1024} - 1) / ${mtu:-1024}))
		echo "$g $((out * N * p + in * N)) $((out * N * p))" >>"$QR_DIR/$tag.need"
		g=$((g + 1))
	done
	summary "$tag"
	qr_check "$tag: $nf ib_write_bw -s $S -n $N flows at once all end within $T s" flows_done "$tag" "$nf"
	qr_check "$tag: RoCE packets sent <= 1.5 x needed, every sender and the segment" sent_bound "$tag"
	qr_check "$tag: duplicate requests <= 10 % of packets received, every guest" dup_bound "$tag"
}

# the figures, printed whether the checks pass or not
summary() {
	awk -v tag="$1" 'FILENAME ~ /need$/ { need[$1] = $2; next }
		$1 == "flow" { printf "[fabric] %s: flow %s->%s status %s, %s s, %s MB/s\n", tag, $3, $4, $5, $6, $7 }
		$1 == "cnt" { c[$2, $3] = $4; if ($2 > ng) ng = $2 }
		$1 == "drop" { d[$2] = $3 }
		END {
			for (g = 1; g <= ng; g++)
				printf "[fabric] %s: guest %d: tx %d (needed %d, %.2fx), rx %d, dup %d, retrans %d, seq NAKs %d, wire drops %s\n",
					tag, g, c[g, "roce_tx_pkts"], need[g],
					need[g] ? c[g, "roce_tx_pkts"] / need[g] : 0,
					c[g, "roce_rx_pkts"], c[g, "roce_dup_reqs"], c[g, "roce_retrans"],
					c[g, "roce_seq_naks"], (g in d) ? d[g] : "-"
		}' "$QR_DIR/$1.need" "$QR_DIR/$1.res"
}

flows_done() {
	cat "$QR_DIR/$1.log" "$QR_DIR/$1.res"
	awk -v n="$2" -v t="$T" '$1 == "flow" && $5 == 0 && $6 ~ /^[0-9.]+$/ && $6 <= t && $7 ~ /^[0-9.]+$/ && $7 > 0 { ok++ }
		END { print ok + 0, "of", n, "flows ended in time with a result row"; exit !(ok == n) }' "$QR_DIR/$1.res"
}

# every guest that sends data, and the segment as a whole (an incast's
# receiver sends ACKs only: one ACK per 64 packets instead of one per
# message is no collapse, and counts for 1 % of the segment's packets)
sent_bound() {
	awk 'FILENAME ~ /need$/ { need[$1] = $2; data[$1] = $3; next }
		$1 == "cnt" && $3 == "roce_tx_pkts" { tx[$2] = $4; seen[$2] = 1 }
		END {
			bad = 0
			for (g in need) {
				printf "guest %s: %d RoCE packets sent, %d needed (%.2fx)%s\n", g, tx[g], need[g],
					need[g] ? tx[g] / need[g] : 0, data[g] ? "" : ", ACKs only: in the total only"
				if (!(g in seen) || (data[g] && tx[g] > 1.5 * need[g])) bad = 1
				st += tx[g]; sn += need[g]
			}
			printf "segment: %d RoCE packets sent, %d needed (%.2fx)\n", st, sn, sn ? st / sn : 0
			exit bad || st > 1.5 * sn
		}' "$QR_DIR/$1.need" "$QR_DIR/$1.res"
}

dup_bound() {
	awk '$1 == "cnt" { c[$2, $3] = $4; g[$2] = 1 }
		END {
			bad = 0; n = 0
			for (i in g) {
				n++
				printf "guest %s: %d duplicate requests, %d RoCE packets received\n",
					i, c[i, "roce_dup_reqs"], c[i, "roce_rx_pkts"]
				if (!((i, "roce_dup_reqs") in c) || c[i, "roce_dup_reqs"] > 0.1 * c[i, "roce_rx_pkts"]) bad = 1
			}
			exit bad || n == 0
		}' "$QR_DIR/$1.res"
}

# incast_cnp TAG RECEIVER: CNPs sent by the receiver and handled by the
# senders, from the counters whose names say so (cnp ... sent/tx,
# cnp ... handled/rx)
incast_cnp() {
	awk -v r="$2" '$1 == "cnt" && $3 ~ /cnp/ {
			if ($3 ~ /sent|tx/) { if ($2 == r) sent += $4; ns++ }
			else if ($3 ~ /handled|rx|rcvd/) { if ($2 != r) handled += $4; nh++ }
		}
		END {
			printf "%d CNPs sent by the receiver, %d handled by the senders\n", sent, handled
			exit !(ns && nh && sent > 0 && handled > 0)
		}' "$QR_DIR/$1.res"
}

# drops TAG G: frames lost on the way into guest G: the switch's tail drops
# on its port and the device's own receive drops
drops() {
	awk -v g="$2" '($1 == "drop" && $2 == g && $3 != "-") { d += $3 }
		($1 == "cnt" && $2 == g && ($3 == "eth_rx_drops" || $3 == "roce_rx_drops")) { d += $4 }
		END { print d + 0 }' "$QR_DIR/$1.res"
}

# incast_off TAG: the incast again with DCQCN off on every guest (the
# same guests, flows and port buffer), then DCQCN back on
incast_off() {
	for g in 1 2 3 4; do
		qr_qom_set $g dcqcn false
	done
	qr_flows "$1" qroce_0 10.0.0 "$T" "$CMD" 2:1 3:1 4:1 >"$QR_DIR/$1.log" 2>&1
	for g in 1 2 3 4; do
		qr_qom_set $g dcqcn true
	done
	qr_log "$1 (DCQCN off): receiver's drops $(drops "$1" 1); $(awk '$1 == "flow" { printf "flow %s->%s status %s, %s MB/s; ", $3, $4, $5, $7 }' "$QR_DIR/$1.res")"
}

# rate_cuts TAG RECEIVER on|off: the senders' CNPs handled and rate cuts
# in incast TAG (counters cnp_handled and rate_cuts): with DCQCN on they
# cut on the CNPs they handled, with it off they handled CNPs and cut
# none; with it on every flow ended with status 0 (with it off a flow may
# starve past the bound, once on 2026-11-26: that is what DCQCN is for)
rate_cuts() {
	awk -v r="$2" -v mode="$3" '$1 == "cnt" && $2 != r {
			if ($3 == "cnp_handled") { h += $4; nh++ }
			if ($3 == "rate_cuts") { c += $4; nc++ }
		}
		$1 == "flow" && $5 != 0 { bad++ }
		END {
			printf "DCQCN %s: senders handled %d CNPs and cut their rates %d times; %d flows did not end\n", mode, h, c, bad
			if (!nh || !nc || h == 0 || (mode == "on" && bad)) exit 1
			exit mode == "on" ? !(c > 0) : !(c == 0)
		}' "$QR_DIR/$1.res"
}

boot() {
	qr_boot "$@" || { qr_fail "qr_boot $*: the guests did not boot"; return 1; }
}

QLEN=${QR_FABRIC_QLEN:-128}

# part NAME: is boot NAME (switch, hub, hosts) to run?
part() {
	case " ${QR_FABRIC_PARTS:-switch hub hosts} " in
	*" $1 "*) return 0 ;;
	esac
	return 1
}

# one boot of four guests on the switch for the ring of three (guest 4
# idles), the ring of four and the incast; a boot costs 30-50 s here
if part switch && boot 4; then
	[ "$QR_WIRE" = switch ] || qr_fail "qr_boot 4 gave a $QR_WIRE, not the switch"
	run ring3-switch 1:2 2:3 3:1
	run ring4-switch 1:2 2:3 3:4 4:1
	qr_port_buffer "$QLEN" 1
	# DCQCN on (the device's default) for the incast, off for its re-run
	dcqcn=0
	qr_qom_get 1 dcqcn >/dev/null 2>&1 && dcqcn=1
	for g in 1 2 3 4; do
		[ $dcqcn = 1 ] && qr_qom_set $g dcqcn true
	done
	# the incast moves twice the data of a ring flow: the drops with
	# DCQCN off grow with it, those with it on mostly come from the
	# flows' start (slow start, before the first CNP comes back)
	RN=$N
	N=${QR_FABRIC_IN:-2000}
	CMD="ib_write_bw -x 1 -F -s $S -n $N"
	run incast-switch 2:1 3:1 4:1
	if grep -q '^cnt 1 [a-z_]*cnp' "$QR_DIR/incast-switch.res"; then
		qr_check "incast-switch: CNPs sent by the receiver and handled by the senders" \
			incast_cnp incast-switch 1
	else
		qr_log "incast: the device has no CNP counters: CNPs not checked"
	fi
	if [ $dcqcn = 1 ]; then
		# the same incast with DCQCN off, in the same guests.  What is
		# checked is the reaction point itself: with DCQCN on the
		# senders cut their rates on the CNPs they handled, with it off
		# they handle CNPs (the receiver still notifies) and cut
		# nothing, and with it on every flow ends.  Whether the cuts
		# lower the receiver's drops is a figure, not a check: on 2
		# cores those drops measure how long the receiver's QEMU waits
		# for a core as much as congestion, and the sums of four pairs
		# came out either way (2026-11-25: 924 off, 677 on; a CI run
		# of 2026-11-28: 1225 off, 1262 on).  It is logged here, and
		# tests/bench/bench-fabric.sh measures it with rxe beside it
		# (docs/performance.md).
		incast_off incast-off1
		qr_check "incast: with DCQCN on the senders cut their rates on the receiver's CNPs" \
			rate_cuts incast-switch 1 on
		qr_check "incast: with DCQCN off (qom-set dcqcn false) the senders handle CNPs and cut nothing" \
			rate_cuts incast-off1 1 off
		qr_log "incast: receiver's drops with DCQCN on $(drops incast-switch 1), off $(drops incast-off1 1) (a figure: see above)"
	elif [ $dcqcn = 0 ]; then
		qr_log "the device has no dcqcn property: the incast with DCQCN off not run"
	fi
	N=$RN
	CMD="ib_write_bw -x 1 -F -s $S -n $N"
fi
qr_cleanup
if part hub && boot 3 hub; then
	run ring3-hub 1:2 2:3 3:1
fi
qr_cleanup

# two hosts (qr_boot hosts2): two namespaces, each with its bridge, joined
# by a VXLAN tunnel over a veth pair; guests 1 and 2 on the first, 3 and
# 4 on the second.  The ring of four, the incast and an all-to-all (each
# guest to each other, as gloo's collectives do) across the tunnel, then
# guest 2 moves to the second host while ibv_rc_pingpong runs between it
# and guest 1: both end with status 0, and both bridges forward its MAC
# the new way (the second host's to the new tap, the first's into the
# tunnel), learned from what the moved guest announced
if part hosts && boot 4 hosts2; then
	RN=$N
	N=${QR_FABRIC_HN:-400}
	CMD="ib_write_bw -x 1 -F -s $S -n $N"
	run ring4-hosts 1:2 2:3 3:4 4:1
	run incast-hosts 2:1 3:1 4:1
	N=${QR_FABRIC_A2A:-200}
	CMD="ib_write_bw -x 1 -F -s $S -n $N"
	run a2a-hosts 1:2 1:3 1:4 2:1 2:3 2:4 3:1 3:2 3:4 4:1 4:2 4:3
	N=$RN
	CMD="ib_write_bw -x 1 -F -s $S -n $N"
	qr_bg 1 srv "ibv_rc_pingpong -d qroce_0 -g 1 -n 20000"
	qr_wait_listen 1 18515
	qr_bg 2 cli "ibv_rc_pingpong -d qroce_0 -g 1 -n 20000 10.0.0.1"
	sleep 2
	if qr_migrate 2 2 >"$QR_DIR/move.mig" 2>&1; then
		qr_log "guest 2 moved to host 2: $(cat "$QR_DIR/move.mig")"
		qr_check "guest 2 under ibv_rc_pingpong moved to the other host" \
			qr_exec 2 "[ ! -e /tmp/bg.cli ]"
	else
		qr_fail "guest 2 could not move to the other host: $(cat "$QR_DIR/move.mig")"
	fi
	qr_bg_wait 2 cli 300 >"$QR_DIR/move.cli"
	crc=$?
	qr_bg_wait 1 srv 300 >"$QR_DIR/move.srv"
	src=$?
	qr_check "ibv_rc_pingpong -n 20000 across the move between hosts: both exit 0, 20000 iters" \
		sh -c "[ $crc = 0 ] && [ $src = 0 ] && grep -q '^20000 iters in' '$QR_DIR/move.cli' && grep -q '^20000 iters in' '$QR_DIR/move.srv'"
	qr_check "host 2's bridge forwards guest 2's MAC to its new port, host 1's into the tunnel" \
		sh -c "ip netns exec '$QR_NS2' bridge fdb show br br0 | grep -q '^52:54:00:00:00:02 dev tap2m$QR_MIGN ' &&
			ip netns exec '$QR_NS' bridge fdb show br br0 | grep -q '^52:54:00:00:00:02 dev vx0 '"
fi
qr_finish
