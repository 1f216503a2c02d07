#!/bin/sh
# make patches-check: the three series as a maintainer would receive them.
#
#   1. each is written from the sources, applies to its pinned base with
#      git am and passes that tree's checkpatch at its strictest
#      (scripts/check-series.sh);
#   2. no patch adds more than MAX lines (default 1500): one logical step
#      a patch, small enough to review;
#   3. every file a patch names is a file of its tree (series.sh refs);
#   4. every prefix of each series builds on its own
#      (scripts/series-bisect.sh).
#
#   sh scripts/patches-check.sh [-n]     (-n: skip step 4, the builds)
#
# Step 4 builds in the build's own trees: not while the harness runs.
# Prints what failed and a last line "patches-check: passed" or
# "patches-check: N steps failed".
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
cd "$TOP" || exit 2
MAX=${MAX:-1500}
build=1
[ "${1-}" != -n ] || build=0
bad=0

sh scripts/check-series.sh || bad=$((bad + 1))

big=0
for t in qemu linux rdma-core; do
	for p in build/patches/"$t"/0*.patch; do
		case $p in */0000-cover-letter.patch) continue ;; esac
		n=$(sed -n '/^diff --git /,$p' "$p" | grep -c '^+[^+]')
		if [ "$n" -gt "$MAX" ]; then
			echo "patches-check: $t/${p##*/} adds $n lines (at most $MAX)" >&2
			big=1
		fi
	done
done
bad=$((bad + big))

for t in qemu linux rdma-core; do
	out=$(sh scripts/series.sh refs "$t" 2>&1) || {
		printf '%s\n' "$out" | sed "s|^|patches-check: $t: names a file the tree lacks: |" >&2
		bad=$((bad + 1))
	}
done

if [ $build = 1 ]; then
	sh scripts/series-bisect.sh || bad=$((bad + 1))
fi

if [ $bad = 0 ]; then
	echo "patches-check: passed"
else
	echo "patches-check: $bad steps failed"
	exit 1
fi
