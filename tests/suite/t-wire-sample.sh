#!/bin/sh
# The wire checker against the hand-built frames of roce-sample.pcap: it
# must flag frame 8 (flipped ICRC byte) and only frame 8; tshark decodes
# frames 1-7 as InfiniBand.
. "$(dirname "$0")/../lib/lib.sh"
. "$(dirname "$0")/../lib/wire-lib.sh"
qr_init wire-sample
# A copy of shared/roce-sample.pcap (eight hand-built frames, roce-notes.md).
SAMPLE=$QR_TOP/tests/data/roce-sample.pcap

only_frame_8() {
	out=$("$QR_B/tools/roce-check" "$SAMPLE")
	rc=$?
	echo "$out"
	[ $rc -eq 1 ] && [ "$(echo "$out" | grep -c '^frame ')" -eq 1 ] &&
		echo "$out" | grep -q '^frame 8: .*bad ICRC' &&
		echo "$out" | grep -q '^frames=8 roce=8 bad=1$'
}
# Frame 4 carries a made-up MAD and frame 7 IPv6 with a zero UDP checksum:
# tshark decodes both as InfiniBand but complains about their contents.
good_frames_decode() {
	tshark -r "$SAMPLE" -Y 'frame.number <= 7' -w "$QR_DIR/seven.pcap" -F pcap 2>/dev/null
	n=$(tshark -n -r "$QR_DIR/seven.pcap" -Y 'infiniband.bth' 2>/dev/null | wc -l)
	echo "$n of 7 decoded as InfiniBand"
	"$QR_B/tools/roce-check" --min-roce 7 "$QR_DIR/seven.pcap" && [ "$n" -eq 7 ]
}
clean_frames_expert() {
	tshark -r "$SAMPLE" -Y 'frame.number <= 6 && frame.number != 4' \
		-w "$QR_DIR/five.pcap" -F pcap 2>/dev/null
	qr_wire_check "$QR_DIR/five.pcap" 5
}
qr_check "roce-check flags frame 8 of roce-sample.pcap and only it" only_frame_8
qr_check "frames 1-7 pass roce-check and all decode as InfiniBand" good_frames_decode
qr_check "frames 1-3, 5, 6 have no malformed or error expert info" clean_frames_expert
qr_finish
