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

# checkpatch: --no-tree, whole files, at the paths they have in QEMU's
# tree (its rules differ for tests/); errors and warnings both fail, but
# for the reviewed exceptions in scripts/checkpatch-qemu.allow (one:
# roce_wire.c tests __SSE2__ for its PCLMUL path because the host tools
# also build it, without QEMU's config or host/cpuinfo.h)
ct=$(mktemp -d)
trap 'rm -rf "$ct"' EXIT
mkdir -p "$ct/hw/net" "$ct/tests/qtest"
cp -r qemu-device/hw/net/qroce "$ct/hw/net/"
cp -r qemu-device/tests/qtest/. "$ct/tests/qtest/"
out=$(cd "$ct" && perl "$TOP/$QSRC/scripts/checkpatch.pl" --no-tree --terse -f \
	$(find hw tests -name '*.[ch]' | sort) 2>&1 || true)
bad=$(printf '%s\n' "$out" | grep -E ': (ERROR|WARNING):' |
	grep -v -F -f scripts/checkpatch-qemu.allow || true)
if [ -n "$bad" ]; then
	printf '%s\n' "$bad" >&2
	echo "check-qemu: QEMU checkpatch found problems" >&2
	fail=1
fi

# -Werror: recompile each qroce translation unit of the QEMU build
tmp=$(mktemp -d)
trap 'rm -rf "$tmp" "$ct"' EXIT
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
[ $fail = 0 ] && echo "check-qemu: $n translation units -Werror clean, checkpatch clean, qtest functions <= 100 lines"
exit $fail
