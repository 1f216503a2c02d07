#!/bin/sh
# The walkthrough (docs/walkthrough.md) still matches the code: it is
# generated again from a new run (tests/demo/walkthrough.sh), and
#  - the new one shows the control path (the pingpong's commands, each
#    with a verb, provider, driver and device function) and the data path
#    (SQ and RQ doorbells, a WQE fetch, frames, ACKs, CQEs) and frames
#    decoded by tshark;
#  - it runs the same commands in the same order as the checked-in one;
#  - every function either file names exists, in the file it is said to
#    be in.
. "$(dirname "$0")/../lib/lib.sh"
qr_init twalk
NEW=$QR_DIR/walkthrough.md
OLD=$QR_TOP/docs/walkthrough.md

generate() {
	sh "$QR_TOP/tests/demo/walkthrough.sh" "$NEW"
}

# commands FILE: the command column of the control path table
commands() {
	sed -n '/^## Control path/,/^## Data path/p' "$1" |
		awk -F'|' '$2 ~ /^ [0-9]+ $/ { split($3, w, " "); print w[1] }'
}

shape() {
	c=$(commands "$NEW" | wc -l)
	unresolved=$(sed -n '/^## Control path/,/^## Data path/p' "$NEW" | grep '^| [0-9]' | grep -c '`-`')
	echo "$c commands, $unresolved with a function not found"
	commands "$NEW" | tr '\n' ' '
	echo
	[ "$c" -gt 5 ] && [ "$unresolved" -eq 0 ] &&
		commands "$NEW" | grep -qx CREATE_QP &&
		[ "$(commands "$NEW" | grep -cx MODIFY_QP)" -ge 3 ] || return 1
	for e in 'doorbell SQ' 'doorbell RQ' 'send WQE fetched' 'frame sent' \
		'frame received' 'ACK' 'CQE written'; do
		grep -q "^| [0-9]* | $e" "$NEW" || { echo "no '$e' row"; return 1; }
	done
	sed -n '/^## The frames/,$p' "$NEW" | grep -q 'RRoCE\|RoCE' ||
		{ echo "no decoded frames"; return 1; }
}

same_commands() {
	commands "$OLD" >"$QR_DIR/old.cmds"
	commands "$NEW" >"$QR_DIR/new.cmds"
	diff "$QR_DIR/old.cmds" "$QR_DIR/new.cmds" && [ -s "$QR_DIR/old.cmds" ]
}

# names_exist FILE: every `path/file.c:function` and "-> function" it
# names is defined in that file
names_exist() {
	bad=0 n=0
	for ref in $(grep -o '[a-z_/-]*[a-z_0-9]*\.c:[a-z_0-9]*\( -> [a-z_0-9]*\)*' "$1" | sed 's/ -> /->/g' | sort -u); do
		path=$QR_TOP/${ref%%:*}
		fns=$(echo "${ref#*:}" | sed 's/->/ /g')
		[ -f "$path" ] || { echo "$ref: no file ${ref%%:*}"; bad=1; continue; }
		for f in $fns; do
			n=$((n + 1))
			grep -q "^[a-zA-Z].*[ *]$f(" "$path" || { echo "$ref: $f is not defined there"; bad=1; }
		done
	done
	echo "$n function names checked in $(basename "$1")"
	[ $bad = 0 ] && [ $n -gt 10 ]
}

qr_check "walkthrough generated from a new pingpong run" generate
qr_check "new walkthrough: commands with their functions, doorbells, WQE, frames, CQEs" shape
qr_check "checked-in walkthrough runs the same commands in the same order" same_commands
qr_check "every function the new walkthrough names exists" names_exist "$NEW"
qr_check "every function the checked-in walkthrough names exists" names_exist "$OLD"
qr_finish
