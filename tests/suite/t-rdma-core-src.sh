#!/bin/sh
# make RDMA_CORE_SRC=DIR (docs/harness.md, "Your own rdma-core"): the
# preparation of a user's tree, on the host, without building it (the
# build and the guests' use of it were tried by hand; an rdma-core build
# is 3 minutes here): the pinned 65.0 unpacked stands in for the user's
# tree.  The copy gets the series (providers/qroce, RDMA_DRIVER_QROCE);
# the tree's own uncommitted edit is in it; a second run changes nothing
# that did not change (file times kept: ninja rebuilds nothing); an edit
# and a deleted file in the tree reach the copy; a tree the series does
# not apply to stops with the patch's name; a tree with
# providers/qroce already is taken as it is; a directory that is no
# rdma-core tree is one line and status 1.
. "$(dirname "$0")/../lib/lib.sh"
QR_NEED=""
qr_init rdma-core-src
CACHE=${QROCE_CACHE:-/var/cache/qroce}
TAR=$CACHE/rdma-core_65.0.orig.tar.gz
P=$QR_TOP/scripts/rdma-core-prepare.sh
U=$QR_DIR/user
S=$QR_DIR/src

prep() {
	RDMA_CORE_SRC=$1 sh "$P" "$2"
}

first() {
	[ -f "$TAR" ] || { echo "$TAR missing: make deps"; return 1; }
	mkdir -p "$U" && tar -xzf "$TAR" -C "$U" --strip-components=1 || return 1
	# the user's uncommitted edit, and a build directory of theirs
	echo '/* user-edit-1 */' >>"$U/libibverbs/verbs.c"
	mkdir -p "$U/build" && echo junk >"$U/build/CMakeCache.txt"
	prep "$U" "$S" || return 1
	ls "$S/providers/qroce" && grep -n 'RDMA_DRIVER_QROCE' "$S/kernel-headers/rdma/ib_user_ioctl_verbs.h" &&
		grep -q 'user-edit-1' "$S/libibverbs/verbs.c" && [ ! -e "$S/build" ] &&
		[ ! -d "$U/providers/qroce" ]
}

again() {
	touch -d '2000-01-01' "$S/libibverbs/verbs.c" "$S/providers/qroce/qroce.c" "$S/README.md"
	prep "$U" "$S" >/dev/null 2>&1 || return 1
	n=$(find "$S/libibverbs/verbs.c" "$S/providers/qroce/qroce.c" "$S/README.md" -newermt '2000-01-02' | wc -l)
	echo "files rewritten by a second run of an unchanged tree: $n"
	[ "$n" -eq 0 ]
}

edits() {
	echo '/* user-edit-2 */' >>"$U/libibverbs/verbs.c"
	gone=$(cd "$U" && ls Documentation/*.md | head -n 1)
	echo "deleted: $gone"
	rm "$U/$gone" && [ -e "$S/$gone" ] || return 1
	prep "$U" "$S" >/dev/null 2>&1 || return 1
	grep -c 'user-edit-' "$S/libibverbs/verbs.c"
	[ "$(grep -c 'user-edit-' "$S/libibverbs/verbs.c")" -eq 2 ] && [ ! -e "$S/$gone" ]
}

# a tree the series does not apply to (README.md, which it edits, gone):
# one line naming the patch, status 1, the last good copy left alone
conflict() {
	cp -a "$U" "$QR_DIR/conf" && rm "$QR_DIR/conf/README.md" || return 1
	prep "$QR_DIR/conf" "$S" >"$QR_DIR/c.out" 2>"$QR_DIR/c.err"
	rc=$?
	cat "$QR_DIR/c.err"
	[ $rc -eq 1 ] && [ "$(wc -l <"$QR_DIR/c.err")" -eq 1 ] &&
		grep -Eq '0[0-9]{3}-[^ ]*\.patch does not apply' "$QR_DIR/c.err" &&
		[ -e "$S/README.md" ] && [ -d "$S/providers/qroce" ]
}

has_provider() {
	# the copy (with the series) as a user's branch that has it: no
	# patch applied twice, the provider's files as they are there
	cp -a "$S" "$QR_DIR/branch" && echo '/* branch-edit */' >>"$QR_DIR/branch/providers/qroce/qroce.c" &&
		prep "$QR_DIR/branch" "$QR_DIR/src2" >"$QR_DIR/b.out" 2>&1
	rc=$?
	cat "$QR_DIR/b.out"
	[ $rc -eq 0 ] && grep -q 'built as it is' "$QR_DIR/b.out" &&
		grep -q 'branch-edit' "$QR_DIR/src2/providers/qroce/qroce.c"
}

not_a_tree() {
	mkdir -p "$QR_DIR/empty"
	prep "$QR_DIR/empty" "$QR_DIR/src3" >"$QR_DIR/e.out" 2>"$QR_DIR/e.err"
	rc=$?
	cat "$QR_DIR/e.err"
	[ $rc -eq 1 ] && [ "$(wc -l <"$QR_DIR/e.err")" -eq 1 ] && [ ! -s "$QR_DIR/e.out" ] &&
		grep -q 'not an rdma-core tree' "$QR_DIR/e.err"
}

qr_check "a user's tree copied with its own edit, the series applied to the copy (providers/qroce, RDMA_DRIVER_QROCE), not to the tree, not its build/" first
qr_check "a second run of an unchanged tree rewrites no file (ninja rebuilds nothing)" again
qr_check "an edit and a deleted file in the tree reach the copy" edits
qr_check "a tree the series does not apply to: one line naming the patch, status 1, the copy as it was" conflict
qr_check "a tree with providers/qroce is built as it is, its own provider files kept" has_provider
qr_check "a directory that is no rdma-core tree: one line on stderr, status 1" not_a_tree
rm -rf "$U" "$S" "$QR_DIR/branch" "$QR_DIR/src2" "$QR_DIR/conf" "$S.new"
qr_finish
