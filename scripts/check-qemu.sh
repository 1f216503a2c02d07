#!/bin/sh
# The device's gates: QEMU's own checkpatch on qemu-device/, and qroce's
# QEMU sources compiled with -Werror using the exact commands of the QEMU
# build (compile_commands.json), so a warning fails even though QEMU as a
# whole is configured with --disable-werror.
set -eu
cd "$(dirname "$0")/.."
TOP=$(pwd)
QSRC=build/src/qemu
QBLD=build/qemu
fail=0

[ -f $QSRC/scripts/checkpatch.pl ] || { echo "check-qemu: $QSRC missing: run 'make'" >&2; exit 1; }
[ -f $QBLD/compile_commands.json ] || { echo "check-qemu: $QBLD not configured: run 'make'" >&2; exit 1; }

# checkpatch: --no-tree, whole files; errors and warnings both fail
files=$(find qemu-device -name '*.[ch]' | sort)
out=$(perl $QSRC/scripts/checkpatch.pl --no-tree --terse -f $files 2>&1 || true)
if printf '%s\n' "$out" | grep -E ': (ERROR|WARNING):' >/dev/null; then
	printf '%s\n' "$out" | grep -E ': (ERROR|WARNING):' >&2
	echo "check-qemu: QEMU checkpatch found problems" >&2
	fail=1
fi

# -Werror: recompile each qroce translation unit of the QEMU build
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
# one line per entry: directory<TAB>command<TAB>file (the JSON that meson
# writes has one key per line)
awk -F'"' '/"directory":/ { d = $4 } /"command":/ { c = $0; sub(/^[^:]*: *"/, "", c); sub(/",? *$/, "", c) }
	/"file":/ { if ($4 ~ /hw\/net\/qroce\/|qtest\/qroce/) print d "\t" c "\t" $4 }' \
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
[ $fail = 0 ] && echo "check-qemu: $n translation units -Werror clean, checkpatch clean"
exit $fail
