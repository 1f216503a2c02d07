#!/bin/sh
# NFS over RDMA recovery (make test-ulp): guest 1's nfsd exports a tmpfs
# over RDMA (port 20049), guest 2 mounts it with proto=rdma (t-nfs.sh
# covers IPv6 and the copies); the data check of the other ULP tests
# (64 MiB to a file of the export, O_DIRECT, 16 at once, checksums
# against the data and the server's copy) runs once plainly, once while
# guest 2's link is down for 2 s, and once while the mount's QP is moved
# to the error state: the RPC transport reconnects (its connect count in
# /proc/self/mountstats grows) and the data compares equal; the unmount
# is clean.
. "$(dirname "$0")/../lib/lib.sh"
. "$(dirname "$0")/ulp-lib.sh"
qr_init u-nfs
QR_TIMEOUT=300
ULP_TGT=/srv/nfs/ulp.img

# Ethernet MTU 1500 (path MTU 1024), as in u-iser.sh: the recovery
# checks put their fault a second into a 64 MiB round trip, and at 9000
# the I/O can be over by then (t-nvmeof and t-nfs run at 9000)
qr_boot 2 mtu=1500 || { qr_fail "qr_boot 2: the guests did not boot"; qr_finish; }

server() {
	gx 1 "$QLOAD; qload nfsd && qload rpcrdma && mkdir -p /srv/nfs &&
		mount -t tmpfs -o size=256m nfs /srv/nfs &&
		dd if=/dev/zero of=$ULP_TGT bs=1M count=$ULP_MIB 2>/dev/null &&
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

client() {
	gx 2 "$QLOAD; qload nfsv4 && qload rpcrdma && mkdir -p /mnt/nfs &&
		timeout 120 mount.nfs4 10.0.0.1:/ /mnt/nfs -o proto=rdma,port=20049,vers=4.2,hard &&
		grep ' /mnt/nfs ' /proc/mounts && echo /mnt/nfs/ulp.img >/tmp/ulp.disk" \
		>"$QR_DIR/client.out" 2>&1 && ulp_data >>"$QR_DIR/client.out"
	rc=$?
	cat "$QR_DIR/client.out"
	[ $rc -eq 0 ] && grep -q 'proto=rdma' "$QR_DIR/client.out"
}

# the RPC-over-RDMA transport's connect count, from the mount's stats
ulp_connects() {
	n=$(qr_exec 2 "awk '\$1 == \"xprt:\" && \$2 == \"rdma\" { print \$5 }' /proc/self/mountstats")
	echo "${n:-0}"
}

umount_nfs() {
	gx 2 "umount /mnt/nfs && ! grep -q ' /mnt/nfs ' /proc/mounts && echo unmounted" \
		>"$QR_DIR/umount.out" 2>&1
	rc=$?
	cat "$QR_DIR/umount.out"
	[ $rc -eq 0 ] && grep -q unmounted "$QR_DIR/umount.out"
}

qr_check "server: nfsd with an RDMA listener on 20049, a tmpfs export" server
qr_check "client: mount proto=rdma, $ULP_MIB MiB of random data ready" client
qr_check "$ULP_MIB MiB written to a file of the export and read back, O_DIRECT, 16 at once: checksums equal" ulp_roundtrip
qr_check "recovery: link down 2 s during the I/O: it completes (RC retries or a reconnect), data equal" \
	ulp_recover link 'reconnected:'
qr_check "recovery: the mount's QP to ERR (qp-fatal) during the I/O, the transport reconnects, data equal" \
	ulp_recover qp 'reconnected:'
qr_check "umount" umount_nfs
qr_finish
