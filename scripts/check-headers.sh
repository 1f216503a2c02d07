#!/bin/sh
# Fails when the hardware/ABI headers drift: a second copy in the tree, a
# header that no longer compiles padding-free, an ABI header that C99, C11
# or C++ does not take, an rdma-core copy that differs,
# or a register/opcode in the header that docs/hw-spec.md does not describe
# with the same value.
set -eu
cd "$(dirname "$0")/.."
fail=0
err() { echo "check-headers: $*" >&2; fail=1; }

copies=$(find . -path ./build -prune -o \( -name qroce_hw.h -o -name qroce-abi.h \) -type f -print |
	grep -v '^\./include/' || true)
[ -z "$copies" ] || err "copies of the shared headers outside include/: $copies"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '#include "qroce_hw.h"\n#include "qroce-abi.h"\nint main(void) { return 0; }\n' >"$tmp/t.c"
${CC:-cc} -std=gnu11 -Wall -Wextra -Wpadded -Werror -Iinclude -c "$tmp/t.c" -o "$tmp/t.o" ||
	err "include/ headers do not compile cleanly (-Wpadded: implicit padding)"

# the ABI header is a uapi header and an rdma-core kernel header: C from
# C99 on and C++ take it, warning-free
for std in c99 c11; do
	${CC:-cc} -std=$std -Wall -Wextra -Werror -fsyntax-only -x c include/qroce-abi.h ||
		err "include/qroce-abi.h is not valid C ($std)"
done
for std in c++98 c++11 c++17; do
	${CXX:-g++} -std=$std -Wall -Wextra -Werror -fsyntax-only -x c++ include/qroce-abi.h ||
		err "include/qroce-abi.h is not valid C++ ($std)"
done

for f in build/src/rdma-core/kernel-headers/rdma/qroce-abi.h; do
	[ -e "$f" ] || continue
	cmp -s "$f" include/qroce-abi.h || err "$f differs from include/qroce-abi.h"
done

# Every register offset and command opcode must appear in the spec with the
# same value.
spec=docs/hw-spec.md
sed -n 's/^#define QROCE_REG_\([A-Z0-9_]*\)[[:space:]]*\(0x[0-9a-f]*\).*/\1 \2/p' include/qroce_hw.h |
while read -r name off; do
	base=${name%_LO}; base=${base%_HI}
	grep -q "| $off" "$spec" || grep -q "$off/" "$spec" || grep -q "/$off" "$spec" ||
		{ echo "check-headers: register $name ($off) is not in $spec" >&2; echo x >>"$tmp/bad"; }
	grep -q "$base" "$spec" ||
		{ echo "check-headers: register name $base is not in $spec" >&2; echo x >>"$tmp/bad"; }
done
sed -n 's/^[[:space:]]*QROCE_CMD_\([A-Z_]*\) = \(0x[0-9a-f]*\),.*/\1 \2/p' include/qroce_hw.h |
while read -r name op; do
	grep -q "^| $op | $name |" "$spec" ||
		{ echo "check-headers: command $name ($op) is not in $spec's command table" >&2; echo x >>"$tmp/bad"; }
done
[ ! -s "$tmp/bad" ] || fail=1
[ $fail -eq 0 ] && echo "check-headers: ok"
exit $fail
