#!/bin/sh
# Fail if a shell function in the test shell code (every *.sh under tests/,
# or under the paths given) is longer than MAX lines (default 100), from
# its "NAME() {" line to its closing brace.  A function ends at the first
# line after it that starts with "}" indented as its opening line is (the
# house style: "}" alone, or with a redirection); a function whose opening
# line also closes it is one line.  One that never ends is reported too.
# Here-documents are skipped.
#   check-shfuncs.sh [-m MAX] [PATH...]
set -eu
cd "$(dirname "$0")/.."
max=100
[ "${1-}" = -m ] && { max=$2; shift 2; }
[ $# -gt 0 ] || set -- tests
find "$@" -name '*.sh' -type f -exec awk -v max="$max" '
function indent(s) { match(s, /^[ \t]*/); return substr(s, 1, RLENGTH) }
function report(i, end) {
	if (end - line[i] + 1 > max) {
		printf "%s:%d: %s is %d lines (max %d)\n", FILENAME, line[i], name[i],
			end - line[i] + 1, max
		bad = 1
	}
}
function unended(   i) {
	for (i = sp; i > 0; i--) {
		printf "%s:%d: %s has no closing \"}\" indented as its first line\n",
			file, line[i], name[i]
		bad = 1
	}
	sp = 0
}
FNR == 1 { unended(); file = FILENAME; here = "" }
# a here-document is text (a shell for a guest, a file), not code
here != "" {
	t = $0
	if (tabs)
		sub(/^\t*/, "", t)
	if (t == here)
		here = ""
	next
}
match($0, /<<-?[ \t]*["\047]?[A-Za-z_][A-Za-z0-9_]*/) {
	here = substr($0, RSTART + 2, RLENGTH - 2)
	tabs = here ~ /^-/
	sub(/^-?[ \t]*["\047]?/, "", here)
}
sp > 0 && substr($0, 1, length(ind[sp]) + 1) == ind[sp] "}" {
	report(sp, FNR)
	sp--
	next
}
/^[ \t]*[A-Za-z_][A-Za-z0-9_]*[ \t]*\(\)[ \t]*\{/ {
	if ($0 ~ /\}[ \t;]*$/)
		next
	sp++
	ind[sp] = indent($0)
	n = $0
	sub(/^[ \t]*/, "", n)
	sub(/[ \t]*\(.*/, "", n)
	name[sp] = n
	line[sp] = FNR
}
END { unended(); exit bad }
' {} + || exit 1
