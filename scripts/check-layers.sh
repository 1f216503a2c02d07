#!/bin/sh
# The device's structure gate (qemu-device/hw/net/qroce):
#
#  1. Calls between files run one way.  Each .c file has a layer (the list
#     below, top first); a file may use a function or variable defined in
#     another .c file only if that file is in a lower layer.  Files of one
#     layer (the transports) may not use each other.  A lower layer that
#     must reach a higher one does so through a pointer the higher one
#     installs (e.g. qroce_port_set_roce_rx()), which is not a use here.
#     The headers' inline functions and macros are code too: a header has
#     the layer of its .c file (qroce_regs.h: qroce_regs), one without
#     (qroce.h, the shared state) the lowest of all, and the body of an
#     inline function or macro in it may use only what .c files of its
#     own or a lower layer define -- a lock helper in qroce.h that calls
#     into the register file closes a circle through every file.
#  2. No function is longer than MAX lines (default 100), from its first
#     line to its closing brace; tables are variables and do not count.
#
# Prints each use across files ("A -> B: symbols") with -v, each violation
# always; exits 1 on a violation, 2 if a tool is missing.
#   check-layers.sh [-v] [-m MAX]
set -eu
cd "$(dirname "$0")/.."
DIR=qemu-device/hw/net/qroce

# One layer per line, top first.
LAYERS='
qroce_pci
qroce_debug
qroce_migration
qroce_regs
qroce_ctrl
qroce_cmd_addr qroce_cmd_cq qroce_cmd_mr qroce_cmd_odp qroce_cmd_qp qroce_cmd_srq
qroce_eth
qroce_data
qroce_data_rc_comp qroce_data_uc qroce_data_ud
qroce_data_rc_req
qroce_data_rc_resp
qroce_data_common
qroce_data_cc
qroce_objects
qroce_ring
qroce_odp
qroce_dma
qroce_port
qroce_wirefault
roce_wire
'

verbose=0
max=100
while [ $# -gt 0 ]; do
	case $1 in
	-v) verbose=1; shift ;;
	-m) max=$2; shift 2 ;;
	*) echo "usage: check-layers.sh [-v] [-m MAX]" >&2; exit 2 ;;
	esac
done
command -v ctags >/dev/null || { echo "check-layers: ctags (universal-ctags) missing" >&2; exit 2; }
CC=${CC:-cc}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# rank of each layer: "name rank"
printf '%s\n' "$LAYERS" | awk 'NF { r++; for (i = 1; i <= NF; i++) print $i, r }' >"$tmp/ranks"

fail=0
: >"$tmp/defs"
for f in "$DIR"/*.c; do
	b=$(basename "$f" .c)
	grep -q "^$b " "$tmp/ranks" || {
		echo "check-layers: $f has no layer: add it to LAYERS in $0"
		fail=1
	}
	# external functions and variables: ctags marks file-scope ones "file:"
	ctags --c-kinds=fv --fields=+nKef -o - --output-format=u-ctags "$f" |
	awk -F'\t' -v b="$b" -v max="$max" -v f="$f" '
		$1 ~ /^!_/ { next }
		{
			kind = ""; line = 0; end = 0; local = 0
			for (i = 4; i <= NF; i++) {
				if ($i == "function" || $i == "variable") kind = $i
				else if ($i ~ /^line:/) line = substr($i, 6)
				else if ($i ~ /^end:/) end = substr($i, 5)
				else if ($i ~ /^file:/) local = 1
			}
			if (kind == "function" && end && end - line + 1 > max)
				printf "LONG %s:%d: %s() is %d lines (max %d)\n", f, line, $1, end - line + 1, max
			if (!local)
				print "DEF", $1, b
		}' >>"$tmp/defs"
done
if grep -q '^LONG ' "$tmp/defs"; then
	grep '^LONG ' "$tmp/defs" | sed 's/^LONG /check-layers: /'
	fail=1
fi
grep '^DEF ' "$tmp/defs" | cut -d' ' -f2- | sort -u >"$tmp/syms"

# uses: every identifier of each file, comments and strings removed
: >"$tmp/uses"
for f in "$DIR"/*.c; do
	b=$(basename "$f" .c)
	"$CC" -fpreprocessed -dD -E -P "$f" 2>/dev/null |
	sed 's/"\([^"\\]\|\\.\)*"/""/g' |
	grep -o '[A-Za-z_][A-Za-z0-9_]*' | sort -u |
	awk -v b="$b" '{ print $1, b }' >>"$tmp/uses"
done

# uses from headers: the bodies of their inline functions and macros,
# as "HEADER.h" units (a header without a .c file ranks below all)
lowest=$(($(awk 'END { print $2 }' "$tmp/ranks") + 1))
for h in "$DIR"/*.h; do
	b=$(basename "$h" .h)
	r=$(awk -v b="$b" '$1 == b { print $2 }' "$tmp/ranks")
	echo "$b.h ${r:-$lowest}" >>"$tmp/ranks"
	ctags --language-force=C --c-kinds=fd --fields=+ne -o - \
		--output-format=u-ctags "$h" |
	awk -F'\t' '$1 !~ /^!_/ {
		line = 0; end = 0
		for (i = 4; i <= NF; i++) {
			if ($i ~ /^line:/) line = substr($i, 6)
			else if ($i ~ /^end:/) end = substr($i, 5)
		}
		if (line) print line, (end ? end : line)
	}' | while read -r from to; do
		# a macro goes on while its lines end in a backslash
		sed -n "$from,\$p" "$h" | awk -v n=$((to - from + 1)) '
			{ print } NR >= n && !/\\$/ { exit }'
	done | "$CC" -fpreprocessed -dD -E -P - 2>/dev/null |
	sed 's/"\([^"\\]\|\\.\)*"/""/g' |
	grep -o '[A-Za-z_][A-Za-z0-9_]*' | sort -u |
	awk -v b="$b.h" '{ print $1, b }' >>"$tmp/uses"
done

# join: symbol defined in D, used in U (U != D)
awk 'NR == FNR { def[$1] = $2; next }
	($1 in def) && def[$1] != $2 { print $2, def[$1], $1 }' \
	"$tmp/syms" "$tmp/uses" | sort >"$tmp/edges"

awk -v verbose="$verbose" 'NR == FNR { rank[$1] = $2; next }
	{
		u = $1; d = $2; s = $3
		key = u " -> " d
		syms[key] = syms[key] " " s
		if (!(u in rank) || !(d in rank))
			next
		if (u ~ /\.h$/ ? rank[d] < rank[u] : rank[d] <= rank[u]) {
			printf "check-layers: %s%s uses %s() of %s.c, which is %s\n", u,
			       u ~ /\.h$/ ? "" : ".c", s, d,
			       rank[d] == rank[u] ? "in the same layer" : "a higher layer"
			bad = 1
		}
		pair[u SUBSEP d] = 1
	}
	END {
		for (k in pair) {
			split(k, p, SUBSEP)
			if ((p[2] SUBSEP p[1]) in pair && p[1] < p[2]) {
				printf "check-layers: %s.c and %s.c use each other\n", p[1], p[2]
				bad = 1
			}
		}
		if (verbose)
			for (k in syms)
				print k ":" syms[k] | "sort"
		exit bad
	}' "$tmp/ranks" "$tmp/edges" || fail=1

[ $fail -eq 0 ] && echo "check-layers: ok ($(wc -l <"$tmp/edges") uses across files, all downwards; no function over $max lines)"
exit $fail
