#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Tail losses and the tail-loss probe. Between two sroce devices on a veth
# (the far one in another netns), a tc filter on the near end drops every
# DROP_EVERY-th RoCEv2 packet that asks for an ACK, and so does one on the
# far end: in a ping-pong of three-packet RDMA WRITEs (ib_write_lat) each
# of those is the last packet its sender has out, so no later packet
# reveals the loss.
#  - With the probe off (sroce.tlp=0) each loss costs the retransmission
#    timeout: the test's load does lose tails.
#  - With it on: every loss is recovered by a probe (tlp_probe grows by at
#    least the drops, and hardly more) that resends the last packet only
#    (no duplicates), and no timeout expires; the requester measured its
#    round-trip time (srtt_us in rdma resource -dd); and rc_verify, every
#    byte checked, passes through the same losses, probes among its
#    recoveries.
# shellcheck source=selftests/drivers/sroce/lib.sh
source "$(dirname "$0")/lib.sh"
sr_require_sroce
for t in ib_write_lat tc; do
	command -v "$t" >/dev/null || sr_skip "$t missing"
done
sr_tool rc_verify >/dev/null || sr_skip "rc_verify not built"
TLP=/sys/module/sroce/parameters/tlp
if [ ! -w "$TLP" ]; then
	sr_fail "no writable tlp module parameter"
	sr_done
fi
DROP_EVERY=10
ITERS=200
SIZE=12000

sr_dmesg_mark
LOGS=$(mktemp -d)
sr_on_exit "rm -rf $LOGS"
sr_on_exit "echo 1 >$TLP"
PORT=$(( 26000 + (SR_TAG % 400) * 10 ))
sr_sroce_ns_pair
if ! GA=$(sr_gid_index "$DA" "$IP4") || ! GB=$(sr_gid_index "$DB" "$PEER4")
then
	sr_fail "GIDs of $IP4 and $PEER4"
	sr_done
fi
# Address resolution must not depend on what the filter drops.
ip neigh replace "$PEER4" lladdr \
	"$(ip netns exec "$NS" cat "/sys/class/net/$B/address")" dev "$A" \
	nud permanent

# The BTH follows a 20-byte IPv4 and an 8-byte UDP header; its AckReq bit
# is the top bit of its 9th byte: offset 36 from the IP header. The same
# filter on both ends.
# dropper NETNS_EXEC... DEV: install it on DEV.
dropper() {
	local dev=${*: -1}
	local -a x=("${@:1:$#-1}")
	"${x[@]}" tc qdisc add dev "$dev" root handle 1: prio &&
		"${x[@]}" tc filter add dev "$dev" parent 1: protocol ip prio 1 \
			u32 match ip protocol 17 0xff match ip dport 4791 0xffff \
			match u8 0x80 0x80 at 36 \
			action gact pass random determ drop "$DROP_EVERY"
}
# droppers: (re)install both, so that each run counts from its first
# packet: the first ones must pass, to give the requesters a round trip.
droppers() {
	tc qdisc del dev "$A" root 2>/dev/null
	ip netns exec "$NS" tc qdisc del dev "$B" root 2>/dev/null
	dropper "$A" || sr_skip "no prio qdisc, u32 filter or gact action"
	dropper ip netns exec "$NS" "$B" || sr_skip "no filter in $NS"
}

# drops: packets the filters dropped so far, on both ends.
drops() {
	{
		tc -s filter show dev "$A" parent 1:
		ip netns exec "$NS" tc -s filter show dev "$B" parent 1:
	} | sed -n 's/.*(dropped \([0-9]*\),.*/\1/p' |
		awk '{ n += $1 } END { print n + 0 }'
}

C=(retransmit_timeout tlp_probe seq_nak_received rx_duplicate_request)
# grew COUNTER: its growth on both devices since snap.
snap() { sr_snap "$DA" "${C[@]}"; sr_snap "$DB" "${C[@]}"; }
grew() { echo $(( $(sr_grew "$DA" "$1") + $(sr_grew "$DB" "$1") )); }
# pingpong TAG PERFTEST_OPTION...: ib_write_lat between DA and DB, of
# three-packet messages (only the last asks for an ACK, so a probe that
# resent more than it would show as duplicates); logs counters and drops.
pingpong() {
	local tag=$1 d0 ok=1 c line
	shift
	droppers
	d0=$(drops)
	snap
	ip netns exec "$NS" timeout -k 5 120 ib_write_lat -d "$DB" -x "$GB" \
		-p "$PORT" -s "$SIZE" -n "$ITERS" -F "$@" \
		>"$LOGS/$tag.server" 2>&1 &
	sr_wait_listen "$PORT" "$NS" 60 || ok=0
	timeout -k 5 120 ib_write_lat -d "$DA" -x "$GA" -p "$PORT" -s "$SIZE" \
		-n "$ITERS" -F "$@" "$PEER4" >"$LOGS/$tag.client" 2>&1 || ok=0
	wait $! || ok=0
	PORT=$((PORT + 1))
	DROPPED=$(( $(drops) - d0 ))
	line="$tag: $DROPPED dropped;"
	for c in "${C[@]}"; do line="$line $c +$(grew "$c")"; done
	sr_log "$line"
	if [ $ok = 0 ]; then
		sed "s/^/# $tag client: /" "$LOGS/$tag.client"
		sed "s/^/# $tag server: /" "$LOGS/$tag.server"
	fi
	sr_check "$tag: ib_write_lat ran" test $ok = 1
}

echo 0 >"$TLP"
pingpong "probe off"
sr_check "probe off: tails were lost" test "$DROPPED" -gt 0
sr_check "probe off: each cost a timeout" \
	test "$(grew retransmit_timeout)" -ge "$DROPPED"
sr_check "probe off: no probe" test "$(grew tlp_probe)" = 0

# With the probe, a local ACK timeout of 4 s (-u 20): a stall of the
# emulated guest cannot pass for a timeout the probe failed to prevent.
echo 1 >"$TLP"
pingpong "probe on" -u 20
sr_check "probe on: tails were lost" test "$DROPPED" -gt 0
sr_check "probe on: a probe for each" \
	test "$(grew tlp_probe)" -ge "$DROPPED"
sr_check "probe on: no timeout" \
	test "$(grew retransmit_timeout)" = 0
# Slack for a rare probe of a tail that was only slow.
sr_check "probe on: no needless probes" \
	test "$(grew tlp_probe)" -le $((DROPPED + 4))
sr_check "probe on: probes resent the last packet only" \
	test "$(grew rx_duplicate_request)" -le 4

# While a queue pair lives: its round-trip time as rdma resource shows it.
droppers
ip netns exec "$NS" timeout -k 5 60 ib_write_lat -d "$DB" -x "$GB" \
	-p "$PORT" -s 64 -n 2000 -F >/dev/null 2>&1 &
spid=$!
sr_wait_listen "$PORT" "$NS" 60
timeout -k 5 60 ib_write_lat -d "$DA" -x "$GA" -p "$PORT" -s 64 -n 2000 \
	-F "$PEER4" >/dev/null 2>&1 &
cpid=$!
srtt=
for _ in $(seq 100); do
	srtt=$(rdma resource show qp link "$DA/1" -dd 2>/dev/null |
		sed -n 's/.*comm ib_write_lat.*srtt_us \([0-9]*\).*/\1/p' | head -n 1)
	[ -n "$srtt" ] && [ "$srtt" -gt 0 ] && break
	sleep 0.1
done
wait "$cpid" "$spid"
PORT=$((PORT + 1))
sr_log "srtt_us while ib_write_lat ran: ${srtt:-none}"
sr_check "the requester measured its round trip" test "${srtt:-0}" -gt 0

d0=$(drops)
snap
sr_check "probe on: rc_verify through the same losses" \
	sr_rc_verify "$LOGS/verify" "$PORT" "$GA" "$GB"
sr_log "rc_verify: $(( $(drops) - d0 )) dropped; tlp_probe +$(grew tlp_probe) retransmit_timeout +$(grew retransmit_timeout)"
sr_check "rc_verify: probes sent" test "$(grew tlp_probe)" -gt 0
sr_check "kernel log clean" sr_dmesg_clean
sr_done
