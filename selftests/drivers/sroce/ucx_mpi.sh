#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# UCX and Open MPI over sroce, as an HPC or AI user first tries them: an
# sroce device looping back on its own veth, and no shared memory or TCP
# transport to fall back to.
#  - UCT: ucx_perftest over ud_verbs (am_bw, am_lat) and rc_verbs (put_bw
#    zero-copy, get_bw, am_lat);
#  - UCP: tag_bw and tag_lat with UCX_TLS=rc_verbs,ud_verbs,self (UCP wires
#    RC up through UD);
#  - Open MPI 4.1 with --mca pml ucx: mpi_allreduce, a float allreduce from
#    4 B to 4 MiB with every element checked, on 2 and on 4 ranks.
# Each run must end well and move its traffic through the sroce device.
# shellcheck source=selftests/drivers/sroce/lib.sh
source "$(dirname "$0")/lib.sh"
sr_require_sroce
command -v ucx_perftest >/dev/null || sr_skip "ucx-utils missing"
command -v mpirun >/dev/null || sr_skip "openmpi-bin missing"
ALLREDUCE=$(sr_tool mpi_allreduce) || sr_skip "mpi_allreduce not built (mpicc)"

sr_dmesg_mark
n=$(( SR_TAG % 250 + 1 ))
L=sr${SR_TAG}u
DEV=sroce_u$SR_TAG
ADDR=198.19.$n.1
PORT=$(( 20000 + SR_TAG % 10000 ))
LOG=$(mktemp -d)
sr_on_exit "rm -rf $LOG"
# UCX keeps its shared memory segments in /dev/shm.
if ! mountpoint -q /dev/shm; then
	mkdir -p /dev/shm && mount -t tmpfs -o size=256m tmpfs /dev/shm ||
		sr_skip "no /dev/shm"
	sr_on_exit "umount /dev/shm"
fi

sr_veth "$L" "${L}p" || sr_skip "cannot create a veth pair"
ip link set "$L" mtu 9000
ip link set "${L}p" mtu 9000
ip addr add "$ADDR/24" dev "$L"
sr_link_add "$DEV" "$L" || sr_fail "rdma link add $DEV"
sr_check "GID of $ADDR" sr_wait_gid "$DEV" "$ADDR"
export UCX_NET_DEVICES=$DEV:1
# A UD peer that never answers fails after 10 s rather than UCX's 30.
export UCX_UD_TIMEOUT=10s

# perftest NAME ARGS...: ucx_perftest server and client with ARGS; true
# when both end well, the client printed its final line and the device
# carried packets. The final line becomes a comment.
perftest() {
	local name=$1 spid rc src=0 before
	shift
	before=$(sr_counter "$DEV" rx_qp_packets)
	timeout -k 5 120 ucx_perftest "$@" -p "$PORT" >"$LOG/$name.srv" 2>&1 &
	spid=$!
	sr_wait_listen "$PORT" "" 30
	timeout -k 5 110 ucx_perftest "$@" -p "$PORT" "$ADDR" \
		>"$LOG/$name.cli" 2>&1
	rc=$?
	wait "$spid" || src=$?
	grep '^Final:' "$LOG/$name.cli" | sed "s/^/# $name: /"
	if [ "$rc" != 0 ] || [ "$src" != 0 ] ||
	   ! grep -q '^Final:' "$LOG/$name.cli"; then
		tail -n 5 "$LOG/$name.cli" "$LOG/$name.srv" | sed 's/^/# /'
		return 1
	fi
	[ "$(sr_counter "$DEV" rx_qp_packets)" -gt "$before" ]
}

uct() { perftest "$1" -d "$DEV:1" -x "$2" -t "${@:3}"; }
sr_check "UCT ud_verbs am_bw" uct ud_am_bw ud_verbs am_bw -D bcopy -n 20000 -s 2048
sr_check "UCT ud_verbs am_lat" uct ud_am_lat ud_verbs am_lat -n 5000
sr_check "UCT rc_verbs put_bw zero-copy" \
	uct rc_put_bw rc_verbs put_bw -D zcopy -n 2000 -s 65536
sr_check "UCT rc_verbs get_bw zero-copy" \
	uct rc_get_bw rc_verbs get -D zcopy -n 2000 -s 65536
sr_check "UCT rc_verbs am_lat" uct rc_am_lat rc_verbs am_lat -n 5000

export UCX_TLS=rc_verbs,ud_verbs,self
sr_check "UCP tag_bw (rc_verbs,ud_verbs,self)" \
	perftest tag_bw -t tag_bw -n 2000 -s 65536
sr_check "UCP tag_lat (rc_verbs,ud_verbs,self)" \
	perftest tag_lat -t tag_lat -n 5000

# mpi NP: the allreduce on NP ranks over pml ucx, nothing but UCX's
# verbs transports; true when every element was right.
mpi() {
	local before out rc
	before=$(sr_counter "$DEV" rx_qp_packets)
	out=$(timeout -k 10 300 mpirun --allow-run-as-root --oversubscribe \
		-np "$1" --mca pml ucx --mca btl self --mca osc ucx \
		-x UCX_TLS -x UCX_NET_DEVICES "$ALLREDUCE" </dev/null 2>&1)
	rc=$?
	echo "$out" | sed 's/^/# /'
	[ "$rc" = 0 ] && echo "$out" | grep -q ": 0 wrong elements" &&
		[ "$(sr_counter "$DEV" rx_qp_packets)" -gt "$before" ]
}
sr_check "Open MPI pml ucx: allreduce 4 B to 4 MiB verified, 2 ranks" mpi 2
sr_check "Open MPI pml ucx: allreduce 4 B to 4 MiB verified, 4 ranks" mpi 4
sr_check "kernel log clean" sr_dmesg_clean
sr_done
