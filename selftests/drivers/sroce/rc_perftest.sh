#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Standard RDMA tools over sroce RC: the perftest bandwidth and latency
# tests (write, read, send, atomic) and ibv_rc_pingpong -c (checks the
# data it receives), each a short run that must end with exit 0 on both
# sides and print its results. Between two QPs of one device on a veth,
# and between two devices on a veth pair whose far end is in another
# netns (the server runs there, the client here; the tools' TCP handshake
# goes over the veth). Then end-to-end credits on loopback: a sender
# with more sends in flight than the receiver has receives posted waits
# for the ACKs' credits instead of drawing RNR NAKs and resends, and an
# SRQ, which gives no credits, does not hold it back.
#
# SR_RC_LINK_TYPE=rxe runs the loopback case over rdma_rxe instead, to
# compare; the netns case needs sroce (rxe listens in init_net only).
# shellcheck source=selftests/drivers/sroce/lib.sh
source "$(dirname "$0")/lib.sh"
TYPE=${SR_RC_LINK_TYPE:-sroce}
if [ "$TYPE" = sroce ]; then
	sr_require_sroce
else
	sr_require_root
	modprobe "rdma_$TYPE" 2>/dev/null || sr_skip "rdma_$TYPE not available"
fi
TOOLS="ib_write_bw ib_read_bw ib_send_bw ib_atomic_bw ib_write_lat ib_read_lat ib_send_lat ibv_rc_pingpong"
for t in $TOOLS; do
	command -v "$t" >/dev/null || sr_skip "$t missing (perftest, ibverbs-utils)"
done
ITERS=200
RUN_TIMEOUT=180
RESULT_RE='^ *[0-9]+ +[0-9]+ +([0-9]+\.[0-9]+|inf) |iters in [0-9.]+ seconds'

sr_dmesg_mark
TMP=$(mktemp -d)
sr_on_exit "rm -rf $TMP"
n=$(( SR_TAG % 250 + 1 ))
PORT=$(( 20000 + (SR_TAG % 400) * 20 ))

# pt WHERE NS SDEV SGID CDEV CGID HOST TOOL [ARG...]: the server of TOOL
# on SDEV/SGID (in netns NS unless empty), then its client on CDEV/CGID
# connecting to HOST; each run gets its own TCP port.
pt() {
	local where=$1 pns=$2 sdev=$3 sgid=$4 cdev=$5 cgid=$6 host=$7 tool=$8
	local gopt=-x nopt=-n extra=(-F) srv ok=1 out=$TMP/$tool.$where
	local nsx=()
	shift 8
	PORT=$((PORT + 1))
	if [ "$tool" = ibv_rc_pingpong ]; then
		gopt=-g
		extra=(-c)
	fi
	[ -n "$pns" ] && nsx=(ip netns exec "$pns")
	"${nsx[@]}" timeout -k 5 "$RUN_TIMEOUT" "$tool" -d "$sdev" "$gopt" "$sgid" \
		"$nopt" "$ITERS" -p "$PORT" "${extra[@]}" "$@" >"$out.server" 2>&1 &
	srv=$!
	if ! sr_wait_listen "$PORT" "$pns" 60; then
		sr_log "$tool server did not start listening on port $PORT"
		ok=0
	elif ! timeout -k 5 "$RUN_TIMEOUT" "$tool" -d "$cdev" "$gopt" "$cgid" \
		"$nopt" "$ITERS" -p "$PORT" "${extra[@]}" "$@" "$host" \
		>"$out.client" 2>&1; then
		sr_log "$tool client failed"
		ok=0
	fi
	if ! wait "$srv"; then
		sr_log "$tool server failed"
		ok=0
	fi
	# The result lines: perftest's table rows (latencies may read "inf"
	# when its clock calibration fails under emulation), rc_pingpong's
	# summary.
	if ! grep -Eq "$RESULT_RE" "$out.client"; then
		sr_log "$tool client printed no result"
		ok=0
	fi
	if [ $ok = 1 ]; then
		grep -E "$RESULT_RE|bytes in|^ *#bytes" "$out.client" |
			sed "s/^/# $where $tool: /"
	else
		sed "s/^/# $where $tool client: /" "$out.client"
		sed "s/^/# $where $tool server: /" "$out.server"
	fi
	sr_check "$where: $tool${*:+ $*}" test $ok = 1
}

# all WHERE NS SDEV SGID CDEV CGID HOST: every tool once.
all() {
	pt "$@" ib_write_bw
	pt "$@" ib_read_bw
	pt "$@" ib_send_bw
	pt "$@" ib_atomic_bw
	pt "$@" ib_write_lat
	pt "$@" ib_read_lat
	pt "$@" ib_send_lat
	pt "$@" ibv_rc_pingpong -s 8191 -m 1024
}

# ------------------------------------------------ loopback over a veth
L=sr${SR_TAG}l
LDEV=${TYPE}_l$SR_TAG
L4=198.19.$n.1
sr_veth "$L" "${L}p" || sr_skip "cannot create a veth pair"
ip link set "$L" mtu 9000
ip link set "${L}p" mtu 9000
ip addr add "$L4/24" dev "$L"
if ! rdma link add "$LDEV" type "$TYPE" netdev "$L"; then
	sr_fail "rdma link add $LDEV type $TYPE netdev $L"
	sr_done
fi
sr_on_exit "rdma link del $LDEV"
if g=$(sr_gid_index "$LDEV" "$L4"); then
	all loopback "" "$LDEV" "$g" "$LDEV" "$g" "$L4"
else
	sr_fail "loopback: no GID for $L4"
fi

# ------------------------------------------------ end-to-end credits
# A receiver with 4 receives posted against a sender with 128 sends in
# flight. The ACKs' credit counts (IBA 9.7.7.2) hold the sender back:
# at most one send goes past them, to probe, so no packet arrives behind
# an RNR NAK (64-byte sends are one packet each), and the sender counts
# its waits. An SRQ gives no count: nothing holds the sender then, but
# the wait for the first ACK.
cnt() { sr_counter "$LDEV" "$1" || echo 0; }
# credit_run LABEL ARGS...: ib_send_bw with ARGS; sets d_wait, d_oos, d_rnr.
credit_run() {
	local label=$1 w0 o0 r0
	shift
	w0=$(cnt credit_wait); o0=$(cnt rx_out_of_sequence); r0=$(cnt rnr_nak_sent)
	pt "$label" "" "$LDEV" "$g" "$LDEV" "$g" "$L4" ib_send_bw "$@"
	d_wait=$(( $(cnt credit_wait) - w0 ))
	d_oos=$(( $(cnt rx_out_of_sequence) - o0 ))
	d_rnr=$(( $(cnt rnr_nak_sent) - r0 ))
	sr_log "$label: credit waits $d_wait, out of sequence $d_oos, RNR NAKs $d_rnr"
}
if [ "$TYPE" = sroce ] && [ -n "${g:-}" ]; then
	sr_check "credit counters exist" test -n "$(sr_counter "$LDEV" credit_wait)" \
		-a -n "$(sr_counter "$LDEV" rx_out_of_sequence)"
	iters0=$ITERS
	ITERS=2000
	credit_run credits -s 64 -r 4
	# More than the one wait for the first ACK: the receiver fell behind.
	sr_check "credits: the sender waited for credits" test "$d_wait" -gt 1
	sr_check "credits: nothing arrived behind an RNR NAK" test "$d_oos" = 0
	credit_run srq -s 64 -r 4 --use-srq
	sr_check "srq: no credit count, no wait past the first ACK" \
		test "$d_wait" -le 1
	ITERS=$iters0
fi

# ------------------------------------------------ across a netns
if [ "$TYPE" != sroce ]; then
	sr_log "netns case skipped: it needs sroce"
	sr_check "kernel log clean" sr_dmesg_clean
	sr_done
fi
sr_sroce_ns_pair
if ga=$(sr_gid_index "$DA" "$IP4") && gb=$(sr_gid_index "$DB" "$PEER4"); then
	all netns "$NS" "$DB" "$gb" "$DA" "$ga" "$PEER4"
else
	sr_fail "netns: no GIDs for $IP4 and $PEER4"
fi

sr_check "kernel log clean" sr_dmesg_clean
sr_done
