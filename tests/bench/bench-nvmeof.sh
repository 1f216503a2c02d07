#!/bin/sh
# Benchmark, not a test (make bench-nvmeof): the kernel's block storage
# ULPs -- NVMe over Fabrics, SRP and iSER -- sequential write and read
# with dd, over qroce and over rdma_rxe in the same two guests.  Guest 1
# exports RAM disks (brd): nvmet-rdma the first, and LIO the second
# through ib_srpt (RDMA CM port 5555) and through its iSCSI target with
# iSER portals, each on 10.0.0.1 (qroce's netdev, so the qroce_0 device)
# and 10.0.1.1 (the virtio-net NIC with rdma_rxe).  Guest 2's nvme-rdma,
# ib_srp and open-iscsi connect to each in turn and run dd with O_DIRECT,
# 1 MiB blocks; the table gives MB/s (10^6 B/s, from the guest's clock)
# and the qroce/rxe ratio.
# The table is also written to build/bench-nvmeof.txt and to
# docs/performance.md (scripts/perf-section.sh nvmeof; QR_PERF_DOC=- leaves
# the document alone).
#   sh tests/bench/bench-nvmeof.sh [-m MIB] [-r ROUNDS]   (defaults 64, 2)
. "$(dirname "$0")/../lib/lib.sh"
. "$(dirname "$0")/../ulp/ulp-lib.sh"
# the command, for the table's header in docs/performance.md
CMDLINE="sh tests/bench/bench-nvmeof.sh"
for a; do case $a in '' | *[!A-Za-z0-9_./=:,+-]*) a="'$a'" ;; esac; CMDLINE="$CMDLINE $a"; done
MIB=64
ROUNDS=2
while getopts m:r: o; do
	case $o in
	m) MIB=$OPTARG ;;
	r) ROUNDS=$OPTARG ;;
	*) echo "usage: sh tests/bench/bench-nvmeof.sh [-m MIB] [-r ROUNDS]" >&2; exit 2 ;;
	esac
done
case $MIB$ROUNDS in *[!0-9]* | "") echo "usage: sh tests/bench/bench-nvmeof.sh [-m MIB] [-r ROUNDS]" >&2; exit 2 ;; esac
qr_init bench-nvmeof
QR_TIMEOUT=600
NQN=nqn.2026-11.org.qroce:bench

qr_boot 2 rxe || exit 1
T=/sys/kernel/config/target
IQN=iqn.2026-11.org.qroce:bench
SGUID=0000000000001234          # ib_srpt's id_ext and ioc_guid
DEVS="qroce_0 rxe0"
# GID 0 of a device, as 32 hex digits
GID0='gid0() { tr -d : </sys/class/infiniband/$1/ports/1/gids/0; }'

# nvmet on ram0; LIO's ram1 behind ib_srpt (a port and an ACL per device:
# the initiator's port ID is guest 2's GID 0 interface ID) and behind an
# iSCSI portal with iSER on each address
target() {
	ids=$(qr_exec 2 "$GID0; for d in $DEVS; do echo \$d:\$(gid0 \$d | cut -c17-); done")
	gx 1 "$QLOAD; $GID0; qload brd rd_nr=2 rd_size=$((MIB * 1024 + 1024)) && qload nvmet_rdma &&
		{ grep -q ' /sys/kernel/config ' /proc/mounts || mount -t configfs none /sys/kernel/config; } &&
		cd /sys/kernel/config/nvmet &&
		mkdir subsystems/$NQN && echo 1 >subsystems/$NQN/attr_allow_any_host &&
		mkdir subsystems/$NQN/namespaces/1 &&
		echo -n /dev/ram0 >subsystems/$NQN/namespaces/1/device_path &&
		echo 1 >subsystems/$NQN/namespaces/1/enable &&
		for p in 1 2; do mkdir ports/\$p && echo rdma >ports/\$p/addr_trtype &&
		echo ipv4 >ports/\$p/addr_adrfam && echo 4420 >ports/\$p/addr_trsvcid || exit 1; done &&
		echo 10.0.0.1 >ports/1/addr_traddr && echo 10.0.1.1 >ports/2/addr_traddr &&
		ln -s /sys/kernel/config/nvmet/subsystems/$NQN ports/1/subsystems/$NQN &&
		ln -s /sys/kernel/config/nvmet/subsystems/$NQN ports/2/subsystems/$NQN &&
		qload target_core_iblock && qload ib_srpt srpt_service_guid=0x$SGUID &&
		qload crc32c_generic && qload ib_isert && mkdir -p /etc/target $T/core/iblock_0/ram1 &&
		echo udev_path=/dev/ram1 >$T/core/iblock_0/ram1/control &&
		echo 1 >$T/core/iblock_0/ram1/enable &&
		for x in $(echo $ids); do
			d=\${x%%:*}; i=\${x#*:}; s=$T/srpt/0x\$(gid0 \$d)/tpg_1;
			mkdir -p \$s/lun/lun_0 \$s/acls/0x0000000000000000\$i/lun_0 &&
			ln -s $T/core/iblock_0/ram1 \$s/lun/lun_0/ram1 &&
			ln -s \$s/lun/lun_0 \$s/acls/0x0000000000000000\$i/lun_0/lun_0 &&
			echo 1 >\$s/enable || exit 1;
		done && echo 5555 >$T/srpt/discovery_auth/rdma_cm_port &&
		g=$T/iscsi/$IQN/tpgt_1 && mkdir -p \$g/lun/lun_0 &&
		ln -s $T/core/iblock_0/ram1 \$g/lun/lun_0/ram1 &&
		for a in 10.0.0.1 10.0.1.1; do
			mkdir \$g/np/\$a:3260 && echo 1 >\$g/np/\$a:3260/iser || exit 1;
		done && echo 0 >\$g/attrib/authentication && echo 1 >\$g/attrib/generate_node_acls &&
		echo 0 >\$g/attrib/demo_mode_write_protect && echo 1 >\$g/enable" \
		>"$QR_DIR/target" 2>&1 || { cat "$QR_DIR/target"; return 1; }
}
target || exit 1
gx 2 "$QLOAD; qload nvme_rdma && mkdir -p /etc/nvme &&
	u=\$(cat /proc/sys/kernel/random/uuid) && echo \$u >/etc/nvme/hostid &&
	echo nqn.2014-08.org.nvmexpress:uuid:\$u >/etc/nvme/hostnqn &&
	qload sd_mod && qload ib_srp && qload ib_iser &&
	echo InitiatorName=iqn.2026-11.org.qroce:bench2 >/etc/iscsi/initiatorname.iscsi &&
	mkdir -p /run/lock/iscsi && iscsid" >"$QR_DIR/host" 2>&1 ||
	{ cat "$QR_DIR/host"; exit 1; }

# DISK: guest-2 commands that wait for the LIO disk and set $d to it
DISK='i=0; d=; while [ -z "$d" ] && [ $i -lt 100 ]; do for b in /sys/block/sd*; do [ -e $b/device/vendor ] && grep -q LIO-ORG $b/device/vendor && d=/dev/${b##*/}; done; sleep 0.1; i=$((i + 1)); done; [ -n "$d" ] || exit 1'
# DD: dd write then read of $d (the guest's uptime around each)
DD="t0=\$(cut -d' ' -f1 /proc/uptime);
	dd if=/dev/zero of=\$d bs=1M count=$MIB oflag=direct 2>/dev/null || exit 1;
	t1=\$(cut -d' ' -f1 /proc/uptime);
	dd if=\$d of=/dev/null bs=1M count=$MIB iflag=direct 2>/dev/null || exit 1;
	t2=\$(cut -d' ' -f1 /proc/uptime)"

# one PROTO ADDR DEV: connect, dd, disconnect; prints "t0 t1 t2"
one() {
	case $1 in
	nvme) gx 2 "nvme connect -t rdma -n $NQN -a $2 -s 4420 >/dev/null || exit 1;
		i=0; until [ -b /dev/nvme0n1 ] || [ \$i -ge 100 ]; do sleep 0.1; i=\$((i + 1)); done;
		d=/dev/nvme0n1; $DD; nvme disconnect -n $NQN >/dev/null; echo \$t0 \$t1 \$t2" ;;
	srp) gx 2 "echo id_ext=$SGUID,ioc_guid=$SGUID,dest=$2:5555 >/sys/class/infiniband_srp/srp-$3-1/add_target || exit 1;
		$DISK; $DD; for p in /sys/class/srp_remote_ports/port-*; do echo 1 >\$p/delete; done;
		while [ -e \$d ]; do sleep 0.1; done; echo \$t0 \$t1 \$t2" ;;
	iser) gx 2 "iscsiadm -m discovery -t st -p $2:3260 -I iser >/dev/null &&
		iscsiadm -m node -T $IQN -p $2:3260 -I iser --login >/dev/null || exit 1;
		$DISK; $DD; iscsiadm -m node -T $IQN -p $2:3260 -I iser --logout >/dev/null;
		while [ -e \$d ]; do sleep 0.1; done; echo \$t0 \$t1 \$t2" ;;
	esac
}
rate() { awk -v m="$MIB" -v a="$1" -v b="$2" 'BEGIN { if (b > a) printf "%.1f", m * 1048576 / (b - a) / 1e6; else print "-" }'; }

for proto in nvme srp iser; do
	for dev in qroce rxe; do
		addr=10.0.0.1 ibdev=qroce_0
		[ $dev = rxe ] && addr=10.0.1.1 ibdev=rxe0
		r=1
		while [ "$r" -le "$ROUNDS" ]; do
			set -- $(one $proto $addr $ibdev 2>"$QR_DIR/err.$proto.$dev.$r")
			[ $# -eq 3 ] || { echo "$proto over $dev round $r failed: $(cat "$QR_DIR/err.$proto.$dev.$r")" >&2; exit 1; }
			echo "$proto $dev $(rate "$1" "$2") $(rate "$2" "$3")" >>"$QR_DIR/rates"
			r=$((r + 1))
		done
	done
done
{
	echo "Block storage over RDMA, dd 1 MiB O_DIRECT, $MIB MiB, best of $ROUNDS; $(date -u '+%Y-%m-%d %H:%M') UTC"
	echo "| | qroce | rxe | qroce/rxe |"
	echo "|---|---|---|---|"
	awk '{ k = $1 " " $2; if ($3 > w[k]) w[k] = $3; if ($4 > r[k]) r[k] = $4 }
		END {
			n = split("nvme NVMe-oF srp SRP iser iSER", p, " ")
			for (i = 1; i < n; i += 2) {
				q = p[i] " qroce"; x = p[i] " rxe"
				printf "| %s sequential write, MB/s | %.1f | %.1f | %.1f |\n", p[i + 1], w[q], w[x], w[x] ? w[q] / w[x] : 0
				printf "| %s sequential read, MB/s | %.1f | %.1f | %.1f |\n", p[i + 1], r[q], r[x], r[x] ? r[q] / r[x] : 0
			}
		}' "$QR_DIR/rates"
} | tee "$QR_B/bench-nvmeof.txt"
{
	sed -n '1s/$/;/p' "$QR_B/bench-nvmeof.txt"
	echo "host: $(nproc) CPUs, $(sed -n 's/^model name.*: //p' /proc/cpuinfo | head -1), $(uname -r);"
	printf "\`%s\`\n\n" "$CMDLINE"
	sed 1d "$QR_B/bench-nvmeof.txt"
} >"$QR_DIR/perf.md"
sh "$QR_TOP/scripts/perf-section.sh" nvmeof "$QR_DIR/perf.md" || :
qr_cleanup
rm -rf "$QR_DIR"
