#!/bin/sh
# Many QPs: the device's default of 65 536 QPs, each one's state allocated
# at CREATE_QP and freed at DESTROY_QP; the provider's QP table as large
# as the QPN space.  One guest creates and destroys 70 000 QPs (QPNs
# wrap), holds 20 000 at once; 1 000 RC pairs between two guests move a
# message each way with every byte compared.  Then a device with a small
# state budget: ibv_create_qp fails with ENOMEM past it, and the device
# goes on working.
. "$(dirname "$0")/../lib/lib.sh"
qr_init scale
QR_TIMEOUT=600

scale() { # scale G ARGS: qroce-scale ARGS in guest G, all its checks PASS
	qr_exec "$1" "qroce-scale -d qroce_0 -g 1 $2" >"$QR_DIR/scale.out"
	rc=$?
	cat "$QR_DIR/scale.out"
	[ $rc -eq 0 ] && ! grep -q '^FAIL' "$QR_DIR/scale.out" &&
		grep -q '^PASS' "$QR_DIR/scale.out"
}

caps() { # the device's 65536 QPNs: 0 is none, 1 the GSI QP, 65534 for use
	qr_exec 1 'ibv_devinfo -v -d qroce_0 | grep -w max_qp' | tee "$QR_DIR/caps.out"
	grep -q 'max_qp:[[:space:]]*65534$' "$QR_DIR/caps.out"
}

pairs() {
	qr_server_client pairs 18540 1 "qroce-scale -d qroce_0 -g 1 -l pairs $1" \
		2 "qroce-scale -d qroce_0 -g 1 pairs $1 10.0.0.1" 600 &&
		grep -q "^PASS pairs: $1 RC QPs" "$QR_DIR/pairs.srv" &&
		grep -q "^PASS pairs: $1 RC QPs" "$QR_DIR/pairs.cli" &&
		! grep -q '^FAIL' "$QR_DIR/pairs.srv" "$QR_DIR/pairs.cli"
}

if qr_boot 2; then
	qr_check "ibv_devinfo: max_qp 65534 (device max-qp 65536, QPNs 2..65535)" caps
	qr_check "70 000 QPs created and destroyed in turn; QPNs wrap at max_qp" \
		scale 1 "churn 70000"
	qr_check "20 000 QPs held at once, every QPN different" scale 1 "hold 20000"
	qr_check "1 000 RC pairs between two guests, 4 KiB each way on each, every byte compared" \
		pairs 1000
	qr_cleanup
else
	qr_fail "qr_boot 2: the guests did not boot"
fi

# 8 MiB of device state: a few thousand small QPs
if QR_DEVOPTS="state-budget-mb=8" qr_boot 2; then
	qr_check "state-budget-mb=8: ibv_create_qp fails with ENOMEM past it; a freed QP makes room" \
		scale 1 budget
	qr_check "after the budget ran out: ibv_rc_pingpong between the guests" \
		qr_pingpong ibv_rc_pingpong -n 200
else
	qr_fail "qr_boot 2 with state-budget-mb=8: the guests did not boot"
fi
qr_finish
