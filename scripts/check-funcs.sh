#!/bin/sh
# Fail if a C function in the given directories is longer than MAX lines
# (default 100) from its opening line to its closing brace.  Tables and
# other definitions that are not functions are not counted; a program's
# main() is a function like any other.
#   check-funcs.sh [-m MAX] DIR...
set -eu
max=100
[ "${1-}" = -m ] && { max=$2; shift 2; }
[ $# -gt 0 ] || { echo "usage: check-funcs.sh [-m MAX] DIR..." >&2; exit 2; }
command -v ctags >/dev/null || { echo "check-funcs: ctags (universal-ctags) missing" >&2; exit 2; }
bad=0
for f in $(find "$@" -name '*.c' | sort); do
	# function name, first line, last line (ctags' end: field)
	ctags --c-kinds=f --fields=+ne -o - --output-format=u-ctags "$f" 2>/dev/null |
	awk -F'\t' -v max="$max" -v file="$f" '{
			name = $1; line = 0; end = 0
			for (i = 4; i <= NF; i++) {
				if ($i ~ /^line:/) line = substr($i, 6)
				if ($i ~ /^end:/) end = substr($i, 5)
			}
			if (line && end && end - line + 1 > max)
				printf "%s:%d: %s is %d lines (max %d)\n", file, line, name, end - line + 1, max
		}'
done >"${TMPDIR:-/tmp}/check-funcs.$$"
if [ -s "${TMPDIR:-/tmp}/check-funcs.$$" ]; then
	cat "${TMPDIR:-/tmp}/check-funcs.$$" >&2
	bad=1
fi
rm -f "${TMPDIR:-/tmp}/check-funcs.$$"
exit $bad
