#!/bin/sh
# make walkthrough: run one ibv_rc_pingpong -n 2 between two guests with
# the device's trace and a capture, and write docs/walkthrough.md (or
# $1): the control path (each command, with the verb, the provider's and
# the driver's function and the device's handler) and the data path (each
# doorbell, WQE, frame and CQE with the functions that made it), a
# sequence diagram, and the frames as tshark decodes them.
#
# Every function name comes from the sources as they are now (the tables
# of ops, the device's command table, the functions holding a trace point
# or a doorbell), not from a list kept by hand; tests/suite/t-walkthrough.sh
# regenerates the file and checks it against the code.
. "$(dirname "$0")/../lib/lib.sh"
OUT=${1:-$QR_TOP/docs/walkthrough.md}
DEV=$QR_TOP/qemu-device/hw/net/qroce
DRV=$QR_TOP/linux-driver
PRV=$QR_TOP/rdma-core-provider
HDR=$QR_TOP/include/qroce_hw.h

# fn_using FILES... -- PATTERN: "file:function" for each function whose body
# has a line matching PATTERN (ERE); a function starts at a line in column
# 0 holding "name(" that is not a declaration
fn_using() {
	files=""
	while [ "$1" != -- ]; do files="$files $1"; shift; done
	awk -v pat="$2" -v top="$QR_TOP/" '
	FNR == 1 { cur = "" }
	/^[A-Za-z_][^;]*[A-Za-z_0-9]\(/ && !/;[ \t]*$/ && !/^[A-Z_]+\(/ {
		l = $0; sub(/\(.*/, "", l); n = split(l, w, /[ \t*]+/); cur = w[n]
	}
	cur != "" && $0 ~ pat { f = FILENAME; if (index(f, top) == 1) f = substr(f, length(top) + 1); print f ":" cur }' $files | awk '!seen[$0]++'
}

# op_member DIR FUNCTION: the ops-table member FUNCTION is assigned to
op_member() {
	sed -n "s/^[ \t]*\.\([a-z_]*\) *= *$2,.*/\1/p" "$1"/*.c | head -1
}

# drv_entry OPNAME: "member file:function[ -> helper]" for the driver
# function that sends command OPNAME, through one level of callers if
# needed.  Of several (a create's error path also destroys), the one
# whose ops member is named like the command wins, then one whose member
# has a verb.
drv_entry() {
	want=$(echo "$1" | tr 'A-Z' 'a-z')
	for fu in $(fn_using "$DRV"/*.c -- "QROCE_CMD_$1([^A-Z_]|$)"); do
		f=${fu#*:}
		m=$(op_member "$DRV" "$f")
		[ -n "$m" ] && { echo "$m ${fu%%:*}:$f"; continue; }
		for cu in $(fn_using "$DRV"/*.c -- "[^a-z_]$f\\("); do
			c=${cu#*:}
			m=$(op_member "$DRV" "$c")
			[ -n "$m" ] && echo "$m ${cu%%:*}:$c -> $f"
		done
	done >"$QR_DIR/cand"
	awk -v w="$want" '$1 == w { print; exit }' "$QR_DIR/cand" | grep . && return
	while read -r m rest; do
		set -- $(verb_of "$m")
		[ "$1" != - ] && { echo "$m $rest"; return; }
	done <"$QR_DIR/cand"
	head -1 "$QR_DIR/cand"
}

# dev_handler OPNAME: file:function of the device's handler (command table)
dev_handler() {
	h=$(sed -n "s/.*\[QROCE_CMD_$1\] = \([a-z_0-9]*\),.*/\1/p" "$DEV"/*.c | head -1)
	[ -n "$h" ] && fn_using "$DEV"/*.c -- "^[a-z].*[ *]$h\(" | head -1 | sed 's/:.*//' | sed "s/\$/:$h/"
}

# the verb an application calls for an ib_device_ops member, and the
# member of the provider's verbs_context_ops that serves it
verb_of() {
	case $1 in
	alloc_pd) echo "ibv_alloc_pd alloc_pd" ;;
	dealloc_pd) echo "ibv_dealloc_pd dealloc_pd" ;;
	reg_user_mr) echo "ibv_reg_mr reg_mr" ;;
	dereg_mr) echo "ibv_dereg_mr dereg_mr" ;;
	create_cq) echo "ibv_create_cq create_cq" ;;
	destroy_cq) echo "ibv_destroy_cq destroy_cq" ;;
	create_qp) echo "ibv_create_qp create_qp" ;;
	modify_qp) echo "ibv_modify_qp modify_qp" ;;
	query_qp) echo "ibv_query_qp query_qp" ;;
	destroy_qp) echo "ibv_destroy_qp destroy_qp" ;;
	create_ah | create_user_ah) echo "ibv_create_ah create_ah" ;;
	destroy_ah) echo "ibv_destroy_ah destroy_ah" ;;
	create_srq) echo "ibv_create_srq create_srq" ;;
	destroy_srq) echo "ibv_destroy_srq destroy_srq" ;;
	*) echo "- -" ;;
	esac
}

# prv_fn MEMBER: file:function of the provider's op
prv_fn() {
	f=$(op_member_rev "$PRV" "$1")
	[ -n "$f" ] && fn_using "$PRV"/*.c -- "^[a-z].*[ *]$f\(" | head -1 | sed 's/:.*//' | sed "s/\$/:$f/"
}
op_member_rev() {
	sed -n "s/^[ \t]*\.$2 *= *\([a-z_0-9]*\),.*/\1/p" "$1"/*.c | head -1
}

# opname HEX: the command's name from the header
opname() {
	sed -n "s/^[ \t]*QROCE_CMD_\([A-Z_]*\) = 0x0*$(printf '%x' "$1")\(,\| \).*/\1/p" "$HDR" | head -1
}
qpstate() {
	sed -n "s/^[ \t]*QROCE_QPS_\([A-Z]*\) = $1,.*/\1/p" "$HDR" | head -1
}
dbname() { # offset in the doorbell page -> SQ, RQ, ...
	sed -n "s/^#define QROCE_DB_\([A-Z_]*\)[ \t]*0x0*$(printf '%x' "$1")[ \t].*/\1/p" "$HDR" | head -1
}
# trace_fn EVENT [FILE-PATTERN]: `file:function` for each function
# holding trace_EVENT(, comma-separated
trace_fn() {
	fn_using "$DEV"/${2:-*}.c -- "trace_$1\\(" | sed 's/.*/`&`/' | paste -sd, - | sed 's/,/, /g'
}
vector() { # MSI-X vector -> what it serves (docs/hw-spec.md)
	case $1 in
	0) echo "0 (commands, async events)" ;;
	1) echo "1 (Ethernet function)" ;;
	*) echo "$1 (completion events)" ;;
	esac
}

qr_init walkthrough
qr_boot 2 trace pcap || { echo "walkthrough: guests did not boot" >&2; qr_cleanup; exit 1; }
T=$QR_DIR/g2/trace.log
skip=$(wc -l <"$T")
qr_pingpong ibv_rc_pingpong -n 2 -s 64 -r 4 >"$QR_DIR/pp.out" 2>&1 || {
	cat "$QR_DIR/pp.out" >&2
	echo "walkthrough: the pingpong failed" >&2
	qr_cleanup
	exit 1
}
sleep 1
tail -n +$((skip + 1)) "$T" | sed 's/^[0-9]*@[0-9.]*://' >"$QR_DIR/run.trace"
tshark -n -r "$QR_DIR/g2/wire.pcap" -Y 'udp.port == 4791' 2>/dev/null |
	sed 's/^ *//' >"$QR_DIR/frames.txt"
qr_cleanup
[ "$QR_FAIL" -eq 0 ] || { echo "walkthrough: a guest's dmesg is not clean" >&2; exit 1; }

R=$QR_DIR/run.trace
cmdrows=$QR_DIR/cmd.rows
datarows=$QR_DIR/data.rows
seq=$QR_DIR/seq.mmd
: >"$cmdrows"
: >"$datarows"
: >"$seq"
n=0
dn=0
state=control
while read -r ev rest; do
	set -- $rest
	case $ev in
	qroce_qp_state)
		# qp N state A -> B mask M
		trans="qp $2: $(qpstate "$4") -> $(qpstate "$6")"
		;;
	qroce_cmd)
		# #IDX opcode 0xOP cookie 0xC status S out0 0xO
		op=$(opname "$(($3))")
		n=$((n + 1))
		[ "$op" = DESTROY_QP ] && state=teardown
		set -- $(drv_entry "$op")
		member=${1:--} drv=${2:--}
		shift 2 2>/dev/null
		[ $# -gt 0 ] && drv="$drv $*"
		set -- $(verb_of "$member")
		verb=$1 pmember=$2
		prv=$(prv_fn "$pmember")
		hnd=$(dev_handler "$op")
		what=$op
		[ "$op" = MODIFY_QP ] && [ -n "${trans:-}" ] && what="$op ($trans)"
		st=$(echo "$rest" | sed -n 's/.* status \([0-9-]*\) .*/\1/p')
		echo "| $n | $what | $st | \`$verb\` | \`${prv:--}\` | \`$drv\` | \`${hnd:--}\` |" >>"$cmdrows"
		echo "    App->>Provider: $verb" >>"$seq"
		echo "    Provider->>Driver: ib_uverbs: $member" >>"$seq"
		echo "    Driver->>Device: command $op" >>"$seq"
		echo "    Device-->>Driver: completion, status $st" >>"$seq"
		trans=""
		[ "$op" = CREATE_QP ] && state=data
		;;
	qroce_doorbell | qroce_sq_wqe | qroce_roce_tx | qroce_roce_rx | qroce_rc_ack_tx | qroce_rc_ack_rx | qroce_cqe | qroce_eqe | qroce_irq)
		[ $state = data ] || continue
		dn=$((dn + 1))
		case $ev in
		qroce_doorbell) # page P offset 0xOFF object O value V
			db=$(dbname "$(($4))")
			pf=$(fn_using "$PRV"/*.c -- "QROCE_DB_$db([^A-Z_]|$)" | head -1)
			df=$(trace_fn qroce_doorbell)
			echo "| $dn | doorbell $db | object $6, index $8 | \`${pf:--}\` | $df |" >>"$datarows"
			echo "    Provider->>Device: doorbell $db, index $8" >>"$seq"
			;;
		qroce_sq_wqe) # qp N wqe I opcode O len L
			echo "| $dn | send WQE fetched | qp $2, WQE $4, opcode $6, $8 bytes | \`$(prv_fn post_send)\` | $(trace_fn qroce_sq_wqe qroce_data_rc_req) |" >>"$datarows"
			echo "    Device->>Device: fetch send WQE $4 (DMA)" >>"$seq"
			;;
		qroce_roce_tx)
			echo "| $dn | frame sent | qp $2, BTH opcode $4, PSN $6, $8 bytes | - | $(trace_fn qroce_roce_tx) |" >>"$datarows"
			echo "    Device->>Wire: RoCEv2 opcode $4, PSN $6" >>"$seq"
			;;
		qroce_roce_rx)
			echo "| $dn | frame received | qp $2, BTH opcode $4, PSN $6, $8 bytes | - | $(trace_fn qroce_roce_rx) |" >>"$datarows"
			echo "    Wire->>Device: RoCEv2 opcode $4, PSN $6" >>"$seq"
			;;
		qroce_rc_ack_tx)
			echo "| $dn | ACK sent | qp $2, syndrome $4, PSN $6 | - | $(trace_fn qroce_rc_ack_tx) |" >>"$datarows"
			echo "    Device->>Wire: ACK PSN $6" >>"$seq"
			;;
		qroce_rc_ack_rx)
			echo "| $dn | ACK received | qp $2, syndrome $4, PSN $6 | - | $(trace_fn qroce_rc_ack_rx qroce_data_rc_comp) |" >>"$datarows"
			echo "    Wire->>Device: ACK PSN $6" >>"$seq"
			;;
		qroce_cqe) # cq C #I qp Q wqe W opcode O status S len L
			echo "| $dn | CQE written | cq $2, entry ${3#\#}, qp $5, WQE $7, opcode $9, status ${11} | \`$(prv_fn poll_cq)\` | $(trace_fn qroce_cqe) |" >>"$datarows"
			echo "    Device-->>Provider: CQE (qp $5, status ${11})" >>"$seq"
			;;
		qroce_eqe) # eq E #I type T handle H
			echo "| $dn | EQE written | eq $2, type $5, handle $7 | - | $(trace_fn qroce_eqe) |" >>"$datarows"
			echo "    Device-->>Driver: EQE type $5" >>"$seq"
			;;
		qroce_irq)
			echo "| $dn | MSI-X | vector $(vector "$2") | - | $(trace_fn qroce_irq) |" >>"$datarows"
			;;
		esac
		;;
	esac
done <"$R"

[ -s "$cmdrows" ] && [ -s "$datarows" ] || { echo "walkthrough: no commands or no data path events in the trace" >&2; exit 1; }

{
	cat <<'EOF'
# Walkthrough: one `ibv_rc_pingpong -n 2`, control path and data path

Generated by `make walkthrough` (`tests/demo/walkthrough.sh`); do not edit by
hand. Two guests, `ibv_rc_pingpong -n 2 -s 64 -r 4` (four receives
posted, not 500) with the server in guest 1
and the client in guest 2; everything below is what guest 2's device
traced (`-trace qroce_*`) and captured (`filter-dump`) during that run.
Every function name is looked up in the sources as they are: the device's
command table, the driver's `ib_device_ops`, the provider's
`verbs_context_ops`, and the functions that hold each trace point or
doorbell. `tests/suite/t-walkthrough.sh` regenerates this file and checks that
the commands are the same and that every function it names exists.

The picture behind it is `docs/architecture.md`: the control path goes
application → provider → `ib_uverbs` → driver → command queue → device;
the data path goes application → provider → rings in guest memory and a
doorbell → device → wire, and back through CQEs the provider polls, with no
system call.

## Control path: from `ibv_open_device` to RTS and back

Each row is one command on the command queue (`docs/hw-spec.md` §3), in
the order the device ran them. *Provider* is the function in
`rdma-core-provider/` that the verb reaches, *driver* the `ib_device_ops`
member and the function in `linux-driver/` that built the command,
*device* the handler in `qemu-device/hw/net/qroce/` that served it.

| # | command | status | verb | provider | driver | device |
|---|---|---|---|---|---|---|
EOF
	cat "$cmdrows"
	cat <<'EOF'

## Data path: doorbells, WQEs, frames and CQEs

From the client QP's creation until its destruction (the receives are
posted before the QP is connected, so the RQ doorbells come first). No system call
is made: the provider writes WQEs into the send and receive rings, rings a
doorbell in the page mapped from BAR2, and polls CQEs from the CQ ring.

| # | event | details | provider | device |
|---|---|---|---|---|
EOF
	# a run of the same event of the same object is one row, "(N times)"
	awk -F'|' '
	function flush() { if (key != "") { n++; ev = pev; sub(/ +$/, "", ev); if (cnt > 1) ev = ev " (" cnt " times) "; else ev = ev " "; printf "| %d |%s|%s|%s|%s|\n", n, ev, pdet, pprov, pdev } }
	{
		k = $3 "|" $5 "|" $6
		det = $4; sub(/, index [0-9]+/, "", det)
		if ($3 ~ /doorbell|MSI-X/ && k "|" det == key) { cnt++; next }
		flush(); key = k "|" det; cnt = 1; pev = $3; pdet = $4; pprov = $5; pdev = $6
	}
	END { flush() }' "$datarows"
	cat <<'EOF'

## Sequence

```mermaid
sequenceDiagram
    participant App as ibv_rc_pingpong
    participant Provider as libqroce (provider)
    participant Driver as qroce_ib.ko
    participant Device as qroce (QEMU)
    participant Wire as wire (peer)
EOF
	cat "$seq"
	cat <<'EOF'
```

## The frames, as tshark decodes them

Guest 2's wire during the run (`tshark -n -r wire.pcap -Y 'udp.port == 4791'`):

```
EOF
	cat "$QR_DIR/frames.txt"
	echo '```'
} >"$OUT.tmp" && mv "$OUT.tmp" "$OUT"
echo "walkthrough: wrote $OUT ($(wc -l <"$cmdrows") commands, $(wc -l <"$datarows") data path events, $(wc -l <"$QR_DIR/frames.txt") frames)"
rm -rf "$QR_DIR"
