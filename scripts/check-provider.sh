#!/bin/sh
# The provider's gate: each of its sources compiled again with the exact
# command of the rdma-core build (rdma-core's own warning set) and
# -Werror, to a scratch object; then no function over 100 lines, the
# device matched by driver id only, and -DRDMA_STATIC_PROVIDERS=qroce.  The
# product's build files leave -Werror out, as rdma-core's do (its CI
# adds it); this gate is where warnings fail.
#
#   sh scripts/check-provider.sh     (run from the top of the tree; make check)
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
BLD=$TOP/build/rdma-core
fail=0
n=0

[ -f "$BLD/build.ninja" ] || { echo "check-provider: $BLD missing: run 'make rdma-core'" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
for obj in $(ninja -C "$BLD" -t targets all 2>/dev/null |
	     sed -n 's|^\(providers/qroce/CMakeFiles/[^:]*\.c\.o\):.*|\1|p'); do
	n=$((n + 1))
	# the compile is the last command of the object's chain; drop its
	# dependency file, compile to a scratch object
	cmd=$(ninja -C "$BLD" -t commands "$obj" | tail -1 |
	      sed 's/ -MD -MT [^ ]* -MF [^ ]*//; s/ -o [^ ]*/ -o \/dev\/null/')
	if ! (cd "$BLD" && eval "$cmd -Werror") >"$tmp/log" 2>&1; then
		cat "$tmp/log" >&2
		echo "check-provider: $obj does not build with -Werror" >&2
		fail=1
	fi
done
[ $n -gt 0 ] || { echo "check-provider: no qroce objects in $BLD" >&2; fail=1; }
sh "$TOP/scripts/check-funcs.sh" "$TOP/rdma-core-provider" || fail=1
# the device is matched by its driver id only (docs/abi.md), as erdma's
if grep -n 'VERBS_PCI_MATCH\|VERBS_NAME_MATCH\|VERBS_MODALIAS_MATCH' \
	"$TOP"/rdma-core-provider/*.c; then
	echo "check-provider: the provider must match by driver id only" >&2
	fail=1
fi
grep -q 'VERBS_DRIVER_ID(RDMA_DRIVER_QROCE)' "$TOP"/rdma-core-provider/qroce.c || {
	echo "check-provider: no VERBS_DRIVER_ID(RDMA_DRIVER_QROCE) match" >&2
	fail=1
}
# a program linked statically names the provider in RDMA_STATIC_PROVIDERS:
# libibverbs/verbs.h must declare verbs_provider_qroce
printf '#include <infiniband/verbs.h>\nint main(void) { return !ibv_get_device_list(0); }\n' |
	cc -Wall -Werror -DRDMA_STATIC_PROVIDERS=qroce -I"$BLD/include" -fsyntax-only -x c - || {
	echo "check-provider: -DRDMA_STATIC_PROVIDERS=qroce does not compile" >&2
	fail=1
}
[ $fail = 0 ] && echo "check-provider: $n translation units -Werror clean"
exit $fail
