#!/bin/sh
# The device's gate: qroce's QEMU sources compiled with -Werror using the
# exact commands of the QEMU build (compile_commands.json), so a warning
# fails even though QEMU as a whole is configured with --disable-werror.
# QEMU's own checkpatch runs on the QEMU series (scripts/check-series.sh).
set -eu
cd "$(dirname "$0")/.."
TOP=$(pwd)
QSRC=build/src/qemu
QBLD=build/qemu
fail=0

[ -f $QSRC/scripts/checkpatch.pl ] || { echo "check-qemu: $QSRC missing: run 'make'" >&2; exit 1; }
[ -f $QBLD/compile_commands.json ] || { echo "check-qemu: $QBLD not configured: run 'make'" >&2; exit 1; }

# -Werror: recompile each qroce translation unit of the QEMU build
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
# one line per entry: directory<TAB>command<TAB>file (the JSON that meson
# writes has one key per line)
awk -F'"' '/"directory":/ { d = $4 } /"command":/ { c = $0; sub(/^[^:]*: *"/, "", c); sub(/",? *$/, "", c) }
	/"file":/ { if ($4 ~ /hw\/net\/qroce\/|qtest\/(libqos\/)?qroce/) print d "\t" c "\t" $4 }' \
	$QBLD/compile_commands.json >"$tmp/cmds"
while IFS="$(printf '\t')" read -r dir cmd file; do
	n=$((n + 1))
	# drop the output and dependency arguments; compile to a scratch object
	cmd=$(printf '%s\n' "$cmd" | sed 's/\\"/"/g; s/ -MD -MQ [^ ]* -MF [^ ]*//; s/ -o [^ ]*/ -o \/dev\/null/')
	if ! (cd "$dir" && eval "$cmd -Werror") >"$tmp/log" 2>&1; then
		cat "$tmp/log" >&2
		echo "check-qemu: $file does not build with -Werror" >&2
		fail=1
	fi
done <"$tmp/cmds"
[ $n -gt 0 ] || { echo "check-qemu: no qroce sources in $QBLD/compile_commands.json" >&2; fail=1; }

# the qtests and their libqos driver: functions <= 100 lines, as the
# device's (the fuzz targets are not held to it)
if ! sh scripts/check-funcs.sh qemu-device/tests/qtest/qroce-*-test.c \
	qemu-device/tests/qtest/libqos; then
	echo "check-qemu: a qtest function is too long" >&2
	fail=1
fi
[ $fail = 0 ] && echo "check-qemu: $n translation units -Werror clean, qtest functions <= 100 lines"
exit $fail
