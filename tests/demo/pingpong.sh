#!/bin/sh
# The edit loop's last step (make pingpong): boot two guests from the
# given initramfs (the base image with an overlay of the freshly built
# qroce_en.ko, qroce_ib.ko and libqroce), run one ibv_rc_pingpong between
# them, check both guests' dmesg, and print the seconds from START (the
# loop's first step).
#   pingpong.sh INITRD START
. "$(dirname "$0")/../lib/lib.sh"
QR_INITRD=$1
QR_PP_START=$2
qr_init pingpong
qr_boot 2 || { echo "pingpong: guests did not boot (logs in $QR_DIR)"; exit 1; }
fail=0
qr_bg 1 srv 'ibv_rc_pingpong -d qroce_0 -g 1 -n 100' || fail=1
qr_wait_listen 1 18515 || fail=1
qr_exec 2 'ibv_rc_pingpong -d qroce_0 -g 1 -n 100 10.0.0.1' >"$QR_DIR/cli" 2>&1 || fail=1
qr_bg_wait 1 srv >"$QR_DIR/srv" 2>&1 || fail=1
sed 's/^/[g2] /' "$QR_DIR/cli"
grep -q 'iters in' "$QR_DIR/cli" || fail=1
# the modules the guests loaded are the ones just built
for m in qroce_en qroce_ib; do
	qr_exec 1 "md5sum /lib/modules/qroce/$m.ko" >"$QR_DIR/md5" 2>&1 || fail=1
	want=$(md5sum "$QR_TOP/build/driver/$m.ko" | cut -d' ' -f1)
	if [ "$(cut -d' ' -f1 "$QR_DIR/md5")" != "$want" ]; then
		echo "pingpong: the guest's $m.ko is not the one just built"
		fail=1
	fi
done
qr_cleanup
[ "$QR_FAIL" -gt 0 ] && fail=1
QR_PP_END=$(date +%s)
if [ $fail -ne 0 ]; then
	echo "pingpong: FAILED after $((QR_PP_END - QR_PP_START)) s (logs in $QR_DIR)"
	exit 1
fi
rm -rf "$QR_DIR"
echo "pingpong: OK, $((QR_PP_END - QR_PP_START)) s from the build to the pingpong's end"
