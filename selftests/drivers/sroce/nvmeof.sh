#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# NVMe over Fabrics on sroce: kernel QPs, fast-register MRs, SEND with
# invalidate and the CM, as a storage stack uses them. nvmet-rdma exports
# a RAM disk (brd) over an sroce device; nvme-rdma connects to it (in the
# same guest, so over the device's loopback). Then:
#  - fio writes the namespace with crc32c checksums and reads it back,
#    verifying every block;
#  - disconnect and reconnect, and the data written before is still there;
#  - "rdma link del" with I/O in flight: the host and the target let go of
#    the device, fio ends, nothing hangs and the kernel log stays clean.
# SR_NVMEOF_LINK=rxe runs it over rdma_rxe instead, for comparison.
# shellcheck source=selftests/drivers/sroce/lib.sh
source "$(dirname "$0")/lib.sh"
# shellcheck disable=SC2317 # called through sr_check
connect() { sr_nvme_connect "$ADDR" "$SVC" "$NQN"; }

# fio_run NAME ARGS...: fio with its summary kept as comments.
# shellcheck disable=SC2317 # called through sr_check
fio_run() {
	local name=$1 out
	shift
	out=$(fio --name="$name" --filename="$BDEV" "$@" 2>&1)
	local rc=$?
	echo "$out" | grep -E "^ *(READ|WRITE):|err=|verify" | sed "s/^/# $name: /"
	return "$rc"
}

TYPE=${SR_NVMEOF_LINK:-sroce}
if [ "$TYPE" = sroce ]; then
	sr_require_sroce
else
	sr_require_root
	modprobe "rdma_$TYPE" 2>/dev/null || sr_skip "rdma_$TYPE not available"
fi
command -v fio >/dev/null || sr_skip "fio missing"
sr_nvmeof_require

sr_dmesg_mark
n=$(( SR_TAG % 250 + 1 ))
NQN=nqn.2026-11.sroce:test$SR_TAG
SVC=$(( 4420 + SR_TAG % 500 ))
PORTID=$(( 100 + SR_TAG % 800 ))
L=sr${SR_TAG}n
DEV=${TYPE}_n$SR_TAG
ADDR=198.19.$n.1
# (No verify state files: they would land in the working directory.)
FIO_VERIFY=(--ioengine=libaio --direct=1 --bs=4k --iodepth=16
	--verify=crc32c --verify_fatal=1 --do_verify=1 --verify_state_save=0)

sr_loopback_link "$DEV" "$L" "$ADDR" "$TYPE"

sr_nvmet_export "$ADDR" "$SVC" "$NQN" "$PORTID" ||
	sr_skip "cannot create an nvmet subsystem or port"

sr_check "nvme connect over $TYPE" connect
if [ -b "$BDEV" ]; then
	sr_log "namespace at $BDEV"
	sr_check "fio: write 64 MiB with checksums, read back and verify" \
		fio_run write_verify "${FIO_VERIFY[@]}" --rw=randwrite --size=64M
	sr_check "fio: mixed read/write with verify" \
		fio_run rw_verify "${FIO_VERIFY[@]}" --rw=randrw --size=32M \
		--offset=64M --bs=16k
	sr_check "nvme disconnect" nvme disconnect -n "$NQN"
	sr_check "nvme connect again" connect
	sr_check "data written before the reconnect verifies" \
		fio_run reverify "${FIO_VERIFY[@]}" --rw=randwrite --size=64M \
		--verify_only
	# rdma link del under I/O: fio fails, the stack lets go.
	fio --name=underload --filename="$BDEV" --ioengine=libaio --direct=1 \
		--bs=64k --iodepth=32 --rw=randrw --size=96M --time_based \
		--runtime=60 >/dev/null 2>&1 &
	fpid=$!
	sleep 3
	sr_check "rdma link del with I/O in flight" rdma link del "$DEV"
	sr_check "device gone" sr_wait_gone "$DEV" 60
	for ((i = 0; i < 900; i++)); do
		kill -0 "$fpid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$fpid" 2>/dev/null; then
		# nvme-rdma keeps reconnecting; a disconnect fails the I/O.
		nvme disconnect -n "$NQN" >/dev/null 2>&1
	fi
	for ((i = 0; i < 300; i++)); do
		kill -0 "$fpid" 2>/dev/null || break
		sleep 0.1
	done
	sr_check "fio ended after the device went" \
		bash -c "! kill -0 $fpid 2>/dev/null"
	kill -9 "$fpid" 2>/dev/null
	wait "$fpid" 2>/dev/null
	nvme disconnect -n "$NQN" >/dev/null 2>&1
fi
sr_check "kernel log clean" sr_dmesg_clean
sr_done
