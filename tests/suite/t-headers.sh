#!/bin/sh
# One hardware header, one ABI header: no copies, padding-free, and every
# register and command in them is in docs/hw-spec.md with the same value.
. "$(dirname "$0")/../lib/lib.sh"
qr_init headers
qr_check "make check-headers" make -s -C "$QR_TOP" check-headers
qr_finish
