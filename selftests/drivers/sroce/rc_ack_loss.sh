#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# ACKs lost, not requests: after a retransmission timeout the responder
# has everything the requester would send again. Between a sroce
# requester and a responder on a veth (one end in another netns), a tc
# filter on the responder's side drops every ACK while a stream of 64 KiB
# RDMA WRITEs (ib_write_bw, path MTU 1024: 64 packets a message) fills
# the window, and is taken away after two timeouts.
#  - After a timeout the requester sends the oldest unacknowledged packet
#    alone, asking for an ACK, and holds the rest. Once ACKs pass again,
#    the answer acknowledges all the responder has, and the requester
#    goes on past it (ack_past_resend): packets sent again, beyond the
#    stream's own, stay within two per timeout or probe (before, every
#    timeout sent the window again: 128 packets).
#  - The same with rdma_rxe as the responder (on the near end: it listens
#    in init_net only), which answers a duplicate with an ACK of the last
#    PSN it took.
# shellcheck source=selftests/drivers/sroce/lib.sh
source "$(dirname "$0")/lib.sh"
sr_require_sroce
for t in ib_write_bw tc; do
	command -v "$t" >/dev/null || sr_skip "$t missing"
done
sr_dmesg_mark
LOGS=$(mktemp -d)
sr_on_exit "rm -rf $LOGS"
PORT=$(( 28400 + (SR_TAG % 400) * 4 ))
ITERS=20
SIZE=65536
MTU=1024
# 134 ms: seven retries are about a second, time enough to lift the
# filter after two under emulation.
TIMEOUT=15

sr_sroce_ns_pair
if ! GA=$(sr_gid_index "$DA" "$IP4") || ! GB=$(sr_gid_index "$DB" "$PEER4")
then
	sr_fail "GIDs of $IP4 and $PEER4"
	sr_done
fi

C=(retransmit_timeout tlp_probe seq_nak_received tx_roce_packets
	ack_past_resend)

# stream TAG REQ_DEV REQ_GID RESP_DEV RESP_GID RESP_IP: ib_write_bw from
# REQ_DEV (the client) to RESP_DEV, the server, in NS when RESP_IP is
# PEER4, with the responder's ACKs dropped until REQ_DEV timed out twice.
stream() {
	local tag=$1 req=$2 sip=$6 ok=1 c i rto=0 spid cpid line again
	local resends sns=$NS fdev=$B
	local -a sx=(ip netns exec "$NS") cx=()
	local -a sargs=(-d "$4" -x "$5") cargs=(-d "$2" -x "$3")
	local -a opts=(-s "$SIZE" -n "$ITERS" -m "$MTU" -u "$TIMEOUT" -F)

	if [ "$sip" != "$PEER4" ]; then
		cx=("${sx[@]}") sx=() fdev=$A sns=
	fi
	sr_snap "$req" "${C[@]}"
	# Every RC Acknowledge (BTH opcode 0x11) the responder (the server)
	# sends.
	if ! sr_roce_egress_filter "$fdev" "$sns" "u8 0x11 0xff at 28" \
		action drop; then
		sr_skip "no prio qdisc, u32 filter or gact action"
	fi
	"${sx[@]}" timeout -k 5 120 ib_write_bw "${sargs[@]}" -p "$PORT" \
		"${opts[@]}" >"$LOGS/$tag.server" 2>&1 &
	spid=$!
	sr_wait_listen "$PORT" "$sns" 60 || ok=0
	"${cx[@]}" timeout -k 5 120 ib_write_bw "${cargs[@]}" -p "$PORT" \
		"${opts[@]}" "$sip" >"$LOGS/$tag.client" 2>&1 &
	cpid=$!
	for ((i = 0; i < 600 && rto < 2; i++)); do
		sleep 0.05
		rto=$(sr_grew "$req" retransmit_timeout)
	done
	"${sx[@]}" tc qdisc del dev "$fdev" root
	wait "$cpid" || ok=0
	wait "$spid" || ok=0
	PORT=$((PORT + 1))
	line="$tag:"
	for c in "${C[@]}"; do line="$line $c +$(sr_grew "$req" "$c")"; done
	sr_log "$line"
	if [ $ok = 0 ]; then
		sed "s/^/# $tag client: /" "$LOGS/$tag.client"
		sed "s/^/# $tag server: /" "$LOGS/$tag.server"
	fi
	sr_check "$tag: ib_write_bw ran" test $ok = 1
	sr_check "$tag: ACKs lost long enough for two timeouts" \
		test "$(sr_grew "$req" retransmit_timeout)" -ge 2
	sr_check "$tag: an ACK took the requester past its resend" \
		test "$(sr_grew "$req" ack_past_resend)" -gt 0
	resends=$(( $(sr_grew "$req" retransmit_timeout) +
		$(sr_grew "$req" tlp_probe) + $(sr_grew "$req" seq_nak_received) ))
	again=$(( $(sr_grew "$req" tx_roce_packets) - ITERS * SIZE / MTU ))
	sr_check "$tag: $again packets sent again, within two per resend ($resends)" \
		test "$again" -le $((2 * resends))
}

stream "sroce responder" "$DA" "$GA" "$DB" "$GB" "$PEER4"

if ! sr_require_rxe; then
	sr_log "rdma_rxe not available: no run against it"
elif sr_rxe_near "rxe_al$SR_TAG"; then
	if GR=$(sr_gid_index "$DA" "$IP4"); then
		stream "rxe responder" "$DB" "$GB" "$DA" "$GR" "$IP4"
	else
		sr_fail "no IPv4 GID on $DA"
	fi
fi
sr_check "kernel log clean" sr_dmesg_clean
sr_done
