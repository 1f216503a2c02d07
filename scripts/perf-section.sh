#!/bin/sh
# Replace one benchmark's current table in docs/performance.md.
#   sh scripts/perf-section.sh NAME FILE
# puts FILE (a markdown table under a line that gives the date and the
# command) between the lines "<!-- bench:NAME begin -->" and
# "<!-- bench:NAME end -->", which must each appear once, in that order.
# The document is rewritten to a temporary file beside it and moved over
# it, so a reader never sees half of it.  QR_PERF_DOC names another
# document (a copy, for a try); QR_PERF_DOC=- writes nothing (a run on a
# busy machine, or a quick look).  Fails with one line on stderr.
me=perf-section.sh
die() {
	echo "$me: $*" >&2
	exit 1
}
[ $# -eq 2 ] || die "usage: sh scripts/perf-section.sh NAME FILE"
NAME=$1
FILE=$2
[ "${QR_PERF_DOC-}" = - ] && exit 0
case $NAME in '' | *[!A-Za-z0-9_-]*) die "bad NAME '$NAME' (letters, digits, - and _)" ;; esac
DOC=${QR_PERF_DOC:-$(dirname "$0")/../docs/performance.md}
[ -f "$DOC" ] || die "$DOC: no such file"
if [ ! -f "$FILE" ] || [ ! -r "$FILE" ]; then
	die "$FILE: no such file"
fi
[ -s "$FILE" ] || die "$FILE: empty"
B="<!-- bench:$NAME begin -->"
E="<!-- bench:$NAME end -->"

TMP=$DOC.tmp.$$
trap 'rm -f "$TMP" "$TMP.err"' EXIT
trap 'exit 1' HUP INT TERM
awk -v b="$B" -v e="$E" -v f="$FILE" '
	$0 == b {
		nb++
		if (nb > 1 || ne) { err = "twice or out of order"; exit }
		print
		while ((r = getline l < f) > 0) print l
		if (r < 0) { err = "cannot read " f; exit }
		close(f)
		inside = 1
		next
	}
	$0 == e {
		ne++
		if (ne > 1 || !inside) { err = "twice or out of order"; exit }
		inside = 0
	}
	!inside { print }
	END {
		if (err == "" && (nb != 1 || ne != 1)) err = "missing"
		if (err != "") { print err > "/dev/stderr"; exit 1 }
	}' "$DOC" >"$TMP" 2>"$TMP.err" || {
	why=$(cat "$TMP.err")
	rm -f "$TMP.err"
	die "$DOC: markers of '$NAME' ${why:-not found}: want one '$B' and one '$E' after it"
}
rm -f "$TMP.err"
mv -f "$TMP" "$DOC" || die "$DOC: cannot replace"
trap - EXIT
