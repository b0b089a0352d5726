#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# NFS over RDMA on sroce: nfsd exports a directory on port 20049 over an
# sroce device, and the NFSv4 client in the same guest mounts it with
# proto=rdma (so through the device's loopback). Both ends register
# memory with FRWR (REG_MR, LOCAL_INV) and move data with RDMA READ and
# WRITE. Then:
#  - 32 MiB of random data written through the mount, unmounted, mounted
#    again and read back: the checksum matches, here and on the server;
#  - "rdma link del" with the mount live: the removal ends within a bound,
#    the device is gone, and the mount can be taken down (lazily);
#  - the device back: the detached client finishes its session with the
#    server and lets go of it (else its transport would retry for the
#    rest of the boot), and the kernel log stays clean.
# SR_NFS_LINK=rxe runs it over rdma_rxe instead, for comparison.
# shellcheck source=selftests/drivers/sroce/lib.sh
source "$(dirname "$0")/lib.sh"
TYPE=${SR_NFS_LINK:-sroce}
if [ "$TYPE" = sroce ]; then
	sr_require_sroce
else
	sr_require_root
	sr_require_rxe || sr_skip "rdma_rxe not available"
fi
for t in rpc.nfsd rpc.mountd exportfs mount.nfs4; do
	command -v "$t" >/dev/null || sr_skip "$t missing (nfs-kernel-server)"
done
modprobe -a nfsd rpcrdma 2>/dev/null || sr_skip "nfsd or rpcrdma missing"
pgrep -x nfsd >/dev/null && sr_skip "an NFS server already runs here"

sr_dmesg_mark
n=$(( SR_TAG % 250 + 1 ))
L=sr${SR_TAG}f
DEV=${TYPE}_f$SR_TAG
ADDR=198.19.$n.1
WORK=$(mktemp -d)
EXP=$WORK/export
MNT=$WORK/mnt
mkdir -p "$EXP" "$MNT"
sr_on_exit "rm -rf $WORK"

# The server's state lives in tmpfs: the guest's root is read-only.
mount -t tmpfs tmpfs /var/lib/nfs || sr_skip "cannot mount /var/lib/nfs"
sr_on_exit "umount /var/lib/nfs"
mkdir -p /var/lib/nfs/rpc_pipefs /var/lib/nfs/v4recovery
touch /var/lib/nfs/etab /var/lib/nfs/rmtab
if ! mountpoint -q /proc/fs/nfsd; then
	mount -t nfsd nfsd /proc/fs/nfsd || sr_skip "cannot mount nfsd"
	sr_on_exit "umount /proc/fs/nfsd"
fi
mount -t rpc_pipefs rpc_pipefs /var/lib/nfs/rpc_pipefs
sr_on_exit "umount /var/lib/nfs/rpc_pipefs"
# A short grace period: the first OPEN waits for its end.
for t in nfsv4gracetime nfsv4leasetime; do
	sr_on_exit "echo $(cat /proc/fs/nfsd/$t) >/proc/fs/nfsd/$t"
	echo 10 >/proc/fs/nfsd/$t
done

sr_loopback_link "$DEV" "$L" "$ADDR" "$TYPE"

exportfs -o rw,no_root_squash,insecure,fsid=0 "$ADDR/24:$EXP" ||
	sr_fail "exportfs"
sr_on_exit "exportfs -ua"
rpc.mountd -N 3 || sr_fail "rpc.mountd"
sr_on_exit "pkill -x rpc.mountd"
rpc.nfsd -N 3 -H "$ADDR" 4 || sr_fail "rpc.nfsd"
sr_on_exit "rpc.nfsd 0"
echo "rdma 20049" >/proc/fs/nfsd/portlist
sr_check "nfsd listens on RDMA port 20049" \
	grep -q '^rdma 20049' /proc/fs/nfsd/portlist
# umount_mnt SECS: unmount, if need be after SECS forced and lazy. With
# the server's device gone, an NFSv4 umount waits for the server to
# answer the RPCs that end the session, forced or not, as over any
# transport: only a lazy one detaches the mount then.
umount_mnt() {
	timeout "$1" umount "$MNT" || timeout 60 umount -f -l "$MNT"
	! mountpoint -q "$MNT"
}
sr_on_exit "umount -f -l $MNT"

# The grace period ends 10 s after nfsd starts: mount and write then.
mnt() {
	timeout 120 mount -t nfs4 -o proto=rdma,port=20049,vers=4.2 \
		"$ADDR:/" "$MNT"
}
sr_check "mount -t nfs4 -o proto=rdma over $TYPE" mnt
dd if=/dev/urandom of="$WORK/data" bs=1M count=32 status=none
want=$(md5sum <"$WORK/data")
sr_check "mounted over RDMA" grep -q " $MNT nfs4 .*proto=rdma" /proc/mounts
cp_in() { timeout 180 cp "$WORK/data" "$MNT/data" && sync; }
sr_check "32 MiB written through the mount" cp_in
sr_check "unmount" umount_mnt 60
sr_check "mount again" mnt
sr_check "read back through the mount: same checksum" \
	test "$(timeout 180 md5sum <"$MNT/data")" = "$want"
sr_check "the server's copy: same checksum" \
	test "$(md5sum <"$EXP/data")" = "$want"
sr_log "$TYPE counters: rx_qp_packets $(sr_counter "$DEV" rx_qp_packets)"

# The device goes away under a live mount.
start=$(date +%s)
sr_check "rdma link del with the mount live" timeout 120 rdma link del "$DEV"
sr_log "link del took $(( $(date +%s) - start )) s"
sr_check "device gone" sr_wait_gone "$DEV" 30
sr_check "the mount can be taken down" umount_mnt 5

# Detached, the client still owes the server the RPCs that end its
# session, and retries them for as long as the server is away: left so,
# its transport would go on reconnecting to the end of the guest's life.
# With the device back, nfsd listens again, the client finishes, and
# lets go of the server, as after any link that comes back.
# client_gone SECS: within SECS, the client forgot the server and its
# state manager thread ("ADDR-manager", a name cut to 15 characters) ended.
client_gone() {
	local i
	for ((i = 0; i < $1; i++)); do
		grep -q " $ADDR\$" /proc/fs/nfsfs/servers 2>/dev/null ||
			ps -eo comm= | grep -qF -- "$ADDR-" || return 0
		sleep 1
	done
	return 1
}
back() {
	rdma link add "$DEV" type "$TYPE" netdev "$L" &&
		sr_wait_gid "$DEV" "$ADDR" &&
		{ grep -q '^rdma 20049' /proc/fs/nfsd/portlist ||
			echo "rdma 20049" >/proc/fs/nfsd/portlist; }
}
start=$(date +%s)
sr_check "the device back, nfsd listens on it again" back
sr_check "the client finished with the server and let go of it" \
	client_gone 120
sr_log "the client let go $(( $(date +%s) - start )) s after the device came back"
sr_check "kernel log clean" sr_dmesg_clean
sr_done
