# Wire checks on a pcap (sourced).  roce-notes section 6.
#
# qr_wire_check PCAP MIN: every RoCE frame has a correct ICRC, lengths and
# IPv4 checksum (build/tools/roce-check), there are at least MIN of them, and
# tshark decodes every UDP/4791 frame as InfiniBand with no malformed or
# error-level expert info.
qr_wire_check() {
	"$QR_B/tools/roce-check" --min-roce "$2" "$1" || return 1
	command -v tshark >/dev/null || { echo "tshark missing: run 'make deps'"; return 1; }
	notib=$(tshark -n -r "$1" -Y 'udp.port==4791 && !infiniband.bth' 2>/dev/null | wc -l)
	ib=$(tshark -n -r "$1" -Y 'infiniband.bth' 2>/dev/null | wc -l)
	bad=$(tshark -n -r "$1" --disable-heuristic rpcrdma_infiniband \
		--disable-heuristic eth_over_ib --disable-heuristic mellanox_eoib \
		-Y '_ws.malformed || _ws.expert.severity >= "Error"' 2>/dev/null)
	echo "tshark: $ib InfiniBand frames, $notib UDP/4791 frames not decoded"
	[ -n "$bad" ] && { echo "tshark: malformed or error frames:"; echo "$bad" | head -5; }
	[ "$notib" -eq 0 ] && [ "$ib" -ge "$2" ] && [ -z "$bad" ]
}
