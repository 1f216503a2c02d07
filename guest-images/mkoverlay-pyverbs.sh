#!/bin/sh
# The image for rdma-core's own Python test suite (make test-rdma-core):
# the normal image with a second cpio archive appended (the kernel unpacks
# both, in order).  The second archive holds python3.11 with the host's
# standard library (no test/, idlelib/, static library), every shared
# library it and its extension modules need, pyverbs and rdma-core's tests
# from build/rdma-core-py-install.  libibverbs, librdmacm and the providers
# are NOT in it: pyverbs uses the image's own (same sonames, same source).
#
#   sh guest-images/mkoverlay-pyverbs.sh OUT
set -eu
OUT=$1
TOP=$(cd "$(dirname "$0")/.." && pwd)
B=$TOP/build
BASE=$B/initramfs.cpio.gz
RDMA=${QR_RDMA_DST:-$B/rdma-core-install}
PYI=${QR_RDMA_PYDST:-$B/rdma-core-py-install}
ROOT=$B/initramfs-pyverbs-root
PY=python3.11
PYLIB=/usr/lib/$PY
MULTI=lib/x86_64-linux-gnu

die() { echo "mkoverlay-pyverbs: $*" >&2; exit 1; }
[ -f "$BASE" ] || die "$BASE missing: run 'make initramfs'"
[ -d "$RDMA/usr" ] || die "$RDMA missing: run 'make rdma-core'"
[ -d "$PYI/usr" ] || die "$PYI missing: run 'make pyverbs'"
[ -x /usr/bin/$PY ] && [ -d $PYLIB/lib-dynload ] || die "/usr/bin/$PY missing: install python3-dev"

# the interpreter and its standard library
copy_python() {
	mkdir -p "$ROOT/usr/bin" "$ROOT$PYLIB"
	cp -L /usr/bin/$PY "$ROOT/usr/bin/$PY"
	ln -sf $PY "$ROOT/usr/bin/python3"
	(cd $PYLIB && tar -cf - --exclude=./test --exclude=./idlelib \
		--exclude='./config-3*' --exclude=./ensurepip --exclude=./tkinter \
		--exclude=./turtledemo --exclude=./lib2to3 --exclude=__pycache__ .) |
		(cd "$ROOT$PYLIB" && tar -xf -)
}

# pyverbs (wherever its install put it) and the tests, as /opt/rdma-core/tests
copy_pyverbs() {
	pv=$(cd "$PYI" && find . -type d -name pyverbs -path '*-packages/*' | head -1)
	[ -n "$pv" ] || die "no pyverbs package under $PYI"
	mkdir -p "$ROOT/${pv%/pyverbs}"
	cp -a "$PYI/$pv" "$ROOT/$pv"
	[ -f "$PYI/usr/share/doc/rdma-core/tests/run_tests.py" ] ||
		die "no tests/run_tests.py under $PYI/usr/share/doc/rdma-core"
	mkdir -p "$ROOT/opt/rdma-core"
	cp -a "$PYI/usr/share/doc/rdma-core/tests" "$ROOT/opt/rdma-core/tests"
}

# the shared libraries of the interpreter and of every extension module,
# resolved against the image's rdma-core; those of rdma-core are not copied
copy_libs() {
	find "$ROOT" -name '*.so' -o -name "$PY" -type f | while read -r f; do
		LD_LIBRARY_PATH=$RDMA/usr/$MULTI ldd "$f" 2>/dev/null |
			awk '/=> \// { print $3 }'
	done | sort -u | while read -r lib; do
		case $lib in
		"$RDMA"/*) continue ;;
		esac
		mkdir -p "$ROOT/usr/$MULTI"
		cp -L "$lib" "$ROOT/usr/$MULTI/$(basename "$lib")"
	done
	find "$ROOT" -name '*.so' -o -name "$PY" -type f | while read -r f; do
		m=$(LD_LIBRARY_PATH=$RDMA/usr/$MULTI ldd "$f" 2>/dev/null | grep 'not found' || true)
		[ -z "$m" ] || die "$f: unresolved libraries: $m"
	done
}

# byte code compiled here (a guest under TCG compiles slowly); unchecked-hash
# pyc files do not depend on the sources' timestamps, which cpio keeps anyway
compile() {
	/usr/bin/$PY -m compileall -q -j 0 --invalidation-mode unchecked-hash \
		"$ROOT$PYLIB" "$ROOT/opt/rdma-core/tests" \
		"$ROOT/$(cd "$ROOT" && find . -type d -name pyverbs -path '*-packages/*' | head -1)" \
		>/dev/null || die "compileall failed"
}

rm -rf "$ROOT"
mkdir -p "$ROOT"
copy_python
copy_pyverbs
copy_libs
compile
(cd "$ROOT" && find . | sort | cpio -o -H newc --quiet) | gzip -1 >"$OUT.overlay"
cat "$BASE" "$OUT.overlay" >"$OUT.tmp"
rm -f "$OUT.overlay"
mv "$OUT.tmp" "$OUT"
echo "mkoverlay-pyverbs: $OUT ($(du -h "$OUT" | cut -f1))"
