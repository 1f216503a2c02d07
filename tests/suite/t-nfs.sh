#!/bin/sh
# NFS over RDMA on qroce (issue 15): guest 1 runs the kernel's NFS server
# (nfsd, NFSv4 only) with an RDMA listener on port 20049 as the kernel's
# NFS/RDMA documentation sets it up (rpc.nfsd, then "rdma 20049" into
# /proc/fs/nfsd/portlist); guest 2 mounts its export with proto=rdma,
# copies a 32 MiB file to the server and another one back, and every copy
# is compared by checksum on both sides.  The transfer must have gone
# over qroce's RoCE (its packet counters grew by at least the data's
# size in 4 KiB packets), and the client unmounts cleanly.  Then the
# same over IPv6: a mount of [fd00::1] with proto=rdma6 (nfsd's RDMA
# listener takes both families), both copies again, and an unmount.  The
# tools are
# Debian's (nfs-kernel-server, nfs-common), unpacked into the
# image by 'make deps'.
. "$(dirname "$0")/../lib/lib.sh"
qr_init nfs
QR_TIMEOUT=300
MIB=${QR_NFS_MIB:-32}

qr_boot 2 || { qr_fail "qr_boot 2: the guests did not boot"; qr_finish; }

# gx G CMD: qr_exec of a command written over several lines
gx() {
	qr_exec "$1" "$(printf '%s' "$2" | tr '\n\t' '  ')"
}
LOAD='load() { for m in $(cat /lib/modules/qroce/$1.list); do n=${m%.ko}; [ -d /sys/module/$(echo "$n" | tr - _) ] && continue; insmod /lib/modules/qroce/$m || return 1; done; }'

# the server: a tmpfs export, a short grace period (ended at once: no
# client has state to reclaim), NFSv4 on TCP 2049 and RDMA 20049
server() {
	gx 1 "$LOAD; load nfsd && load rpcrdma && mkdir -p /srv/nfs &&
		mount -t tmpfs -o size=256m nfs /srv/nfs &&
		mount -t nfsd nfsd /proc/fs/nfsd &&
		echo 10 >/proc/fs/nfsd/nfsv4leasetime && echo 10 >/proc/fs/nfsd/nfsv4gracetime &&
		echo '/srv/nfs *(rw,no_root_squash,insecure,fsid=0,no_subtree_check)' >/etc/exports &&
		exportfs -ra && rpc.mountd -N 2 -N 3 && rpc.nfsd -N 3 4 &&
		echo 'rdma 20049' >/proc/fs/nfsd/portlist &&
		echo Y >/proc/fs/nfsd/v4_end_grace && cat /proc/fs/nfsd/portlist" >"$QR_DIR/server.out" 2>&1
	rc=$?
	cat "$QR_DIR/server.out"
	[ $rc -eq 0 ] && grep -qx 'rdma 20049' "$QR_DIR/server.out"
}

# the client: mount with proto=rdma, which /proc/mounts must show
client() {
	gx 2 "$LOAD; load nfsv4 && load rpcrdma && mkdir -p /mnt/nfs &&
		timeout 120 mount.nfs4 10.0.0.1:/ /mnt/nfs -o proto=rdma,port=20049,vers=4.2 &&
		grep ' /mnt/nfs ' /proc/mounts" >"$QR_DIR/client.out" 2>&1
	rc=$?
	cat "$QR_DIR/client.out"
	[ $rc -eq 0 ] && grep -q 'proto=rdma' "$QR_DIR/client.out" &&
		grep -q 'port=20049' "$QR_DIR/client.out"
}

# sums G FILE...: "sum file" lines from guest G
sums() {
	g=$1
	shift
	qr_exec "$g" "md5sum $*"
}

# to_server: guest 2 writes a file into the mount; the server's copy on
# its disk has the same checksum
to_server() {
	tx0=$(qr_counter 2 roce_tx_pkts)
	qr_exec 2 "dd if=/dev/urandom of=/tmp/up bs=1M count=$MIB 2>/dev/null && cp /tmp/up /mnt/nfs/up && sync" || return 1
	tx1=$(qr_counter 2 roce_tx_pkts)
	a=$(sums 2 /tmp/up | cut -d' ' -f1)
	b=$(sums 1 /srv/nfs/up | cut -d' ' -f1)
	echo "client $a, server $b; client RoCE packets sent: $((tx1 - tx0))"
	[ -n "$a" ] && [ "$a" = "$b" ] && [ $((tx1 - tx0)) -ge $((MIB * 256)) ]
}

# from_server: the server makes a file on its disk; the client reads it
# through the mount (after dropping its page cache) and compares
from_server() {
	r0=$(qr_counter 2 roce_rx_pkts)
	qr_exec 1 "dd if=/dev/urandom of=/srv/nfs/down bs=1M count=$MIB 2>/dev/null" || return 1
	qr_exec 2 "echo 3 >/proc/sys/vm/drop_caches; cp /mnt/nfs/down /tmp/down" || return 1
	r1=$(qr_counter 2 roce_rx_pkts)
	a=$(sums 1 /srv/nfs/down | cut -d' ' -f1)
	b=$(sums 2 /tmp/down | cut -d' ' -f1)
	echo "server $a, client $b; client RoCE packets received: $((r1 - r0))"
	[ -n "$a" ] && [ "$a" = "$b" ] && [ $((r1 - r0)) -ge $((MIB * 256)) ]
}

unmount() {
	qr_exec 2 "umount /mnt/nfs && ! grep -q ' /mnt/nfs ' /proc/mounts"
}

# the client again, over IPv6
client6() {
	gx 2 "timeout 120 mount.nfs4 '[fd00::1]:/' /mnt/nfs -o proto=rdma6,port=20049,vers=4.2 &&
		grep ' /mnt/nfs ' /proc/mounts" >"$QR_DIR/client6.out" 2>&1
	rc=$?
	cat "$QR_DIR/client6.out"
	[ $rc -eq 0 ] && grep -q 'proto=rdma6' "$QR_DIR/client6.out" &&
		grep -q 'fd00::1' "$QR_DIR/client6.out"
}

qr_check "server: nfsd with an RDMA listener on port 20049" server
qr_check "client: mount -o proto=rdma,port=20049,vers=4.2" client
qr_check "client -> server: $MIB MiB copied, checksums equal, over RoCE" to_server
qr_check "server -> client: $MIB MiB copied, checksums equal, over RoCE" from_server
qr_check "client: umount" unmount
qr_check "client: mount [fd00::1]:/ -o proto=rdma6 (IPv6)" client6
qr_check "IPv6: client -> server: $MIB MiB, checksums equal, over RoCE" to_server
qr_check "IPv6: server -> client: $MIB MiB, checksums equal, over RoCE" from_server
qr_check "IPv6: client: umount" unmount
qr_finish
