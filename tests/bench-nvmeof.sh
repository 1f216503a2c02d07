#!/bin/sh
# Benchmark, not a test (make bench-nvmeof): NVMe over Fabrics sequential
# write and read with dd, over qroce and over rdma_rxe in the same two
# guests.  Guest 1's nvmet-rdma exports a RAM disk (brd) on two ports:
# 10.0.0.1 (qroce's netdev, so the qroce_0 device) and 10.0.1.1 (the
# virtio-net NIC with rdma_rxe).  Guest 2's nvme-rdma connects to each in
# turn and runs dd with O_DIRECT, 1 MiB blocks; the table gives MB/s
# (10^6 B/s, from the guest's clock) and the qroce/rxe ratio.
#   sh tests/bench-nvmeof.sh [-m MIB] [-r ROUNDS]   (defaults 64, 2)
. "$(dirname "$0")/lib.sh"
MIB=64
ROUNDS=2
while getopts m:r: o; do
	case $o in
	m) MIB=$OPTARG ;;
	r) ROUNDS=$OPTARG ;;
	*) echo "usage: sh tests/bench-nvmeof.sh [-m MIB] [-r ROUNDS]" >&2; exit 2 ;;
	esac
done
case $MIB$ROUNDS in *[!0-9]* | "") echo "usage: sh tests/bench-nvmeof.sh [-m MIB] [-r ROUNDS]" >&2; exit 2 ;; esac
qr_init bench-nvmeof
QR_TIMEOUT=600
NQN=nqn.2026-11.org.qroce:bench
QLOAD='qload() { n=$1; shift; for m in $(cat /lib/modules/qroce/$n.list); do [ -d /sys/module/$(echo ${m%.ko} | tr - _) ] && continue; if [ ${m%.ko} = $(echo $n | tr _ -) ]; then insmod /lib/modules/qroce/$m "$@" || return 1; else insmod /lib/modules/qroce/$m || return 1; fi; done; }'
gx() { qr_exec "$1" "$(printf '%s' "$2" | tr '\n\t' '  ')"; }

qr_boot 2 rxe || exit 1
gx 1 "$QLOAD; qload brd rd_nr=1 rd_size=$((MIB * 1024 + 1024)) && qload nvmet_rdma &&
	mount -t configfs none /sys/kernel/config && cd /sys/kernel/config/nvmet &&
	mkdir subsystems/$NQN && echo 1 >subsystems/$NQN/attr_allow_any_host &&
	mkdir subsystems/$NQN/namespaces/1 &&
	echo -n /dev/ram0 >subsystems/$NQN/namespaces/1/device_path &&
	echo 1 >subsystems/$NQN/namespaces/1/enable &&
	for p in 1 2; do mkdir ports/\$p && echo rdma >ports/\$p/addr_trtype &&
	echo ipv4 >ports/\$p/addr_adrfam && echo 4420 >ports/\$p/addr_trsvcid || exit 1; done &&
	echo 10.0.0.1 >ports/1/addr_traddr && echo 10.0.1.1 >ports/2/addr_traddr &&
	ln -s /sys/kernel/config/nvmet/subsystems/$NQN ports/1/subsystems/$NQN &&
	ln -s /sys/kernel/config/nvmet/subsystems/$NQN ports/2/subsystems/$NQN" >"$QR_DIR/target" 2>&1 ||
	{ cat "$QR_DIR/target"; exit 1; }
gx 2 "$QLOAD; qload nvme_rdma && mkdir -p /etc/nvme &&
	u=\$(cat /proc/sys/kernel/random/uuid) && echo \$u >/etc/nvme/hostid &&
	echo nqn.2014-08.org.nvmexpress:uuid:\$u >/etc/nvme/hostnqn" >"$QR_DIR/host" 2>&1 ||
	{ cat "$QR_DIR/host"; exit 1; }

# one ADDR: connect, dd write then read (the guest's uptime around each),
# disconnect; prints "write-seconds read-seconds" and the RDMA device used
one() {
	gx 2 "nvme connect -t rdma -n $NQN -a $1 -s 4420 >/dev/null || exit 1;
		i=0; until [ -b /dev/nvme0n1 ] || [ \$i -ge 100 ]; do sleep 0.1; i=\$((i + 1)); done;
		t0=\$(cut -d' ' -f1 /proc/uptime);
		dd if=/dev/zero of=/dev/nvme0n1 bs=1M count=$MIB oflag=direct 2>/dev/null || exit 1;
		t1=\$(cut -d' ' -f1 /proc/uptime);
		dd if=/dev/nvme0n1 of=/dev/null bs=1M count=$MIB iflag=direct 2>/dev/null || exit 1;
		t2=\$(cut -d' ' -f1 /proc/uptime);
		nvme disconnect -n $NQN >/dev/null; echo \$t0 \$t1 \$t2"
}
rate() { awk -v m="$MIB" -v a="$1" -v b="$2" 'BEGIN { if (b > a) printf "%.1f", m * 1048576 / (b - a) / 1e6; else print "-" }'; }

for dev in qroce rxe; do
	addr=10.0.0.1
	[ $dev = rxe ] && addr=10.0.1.1
	r=1
	while [ "$r" -le "$ROUNDS" ]; do
		set -- $(one $addr 2>"$QR_DIR/err.$dev.$r")
		[ $# -eq 3 ] || { echo "$dev round $r failed: $(cat "$QR_DIR/err.$dev.$r")" >&2; exit 1; }
		echo "$dev $(rate "$1" "$2") $(rate "$2" "$3")" >>"$QR_DIR/rates"
		r=$((r + 1))
	done
done
{
	echo "NVMe-oF over RDMA, dd 1 MiB O_DIRECT, $MIB MiB, best of $ROUNDS; $(date -u '+%Y-%m-%d %H:%M') UTC"
	echo "| | qroce | rxe | qroce/rxe |"
	echo "|---|---|---|---|"
	awk '{ if ($2 > w[$1]) w[$1] = $2; if ($3 > r[$1]) r[$1] = $3 }
		END {
			printf "| sequential write, MB/s | %.1f | %.1f | %.1f |\n", w["qroce"], w["rxe"], w["rxe"] ? w["qroce"] / w["rxe"] : 0
			printf "| sequential read, MB/s | %.1f | %.1f | %.1f |\n", r["qroce"], r["rxe"], r["rxe"] ? r["qroce"] / r["rxe"] : 0
		}' "$QR_DIR/rates"
} | tee "$QR_B/bench-nvmeof.txt"
qr_cleanup
rm -rf "$QR_DIR"
