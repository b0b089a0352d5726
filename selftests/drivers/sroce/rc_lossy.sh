#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# RC over lossy links. netem on both ends of a veth between two sroce
# devices (the far one in another netns) drops, duplicates, reorders and
# corrupts frames, at each loss rate in turn (SR_LOSS_RATES, default 0.1%
# 1% 5% 10%); rc_ops's data-carrying tests and rc_verify (large reads
# among them) must pass at every rate, data checked byte for byte. Each
# run's recovery counters and time are reported. Over the sweep the
# counters must show the recovery: requesters restarted (timeout or
# sequence NAK), tails lost were probed for, reads were asked again at a gap in their responses
# without waiting for the timer, responders answered duplicate requests
# (re-executed reads, replayed atomics, re-ACKed writes), and corrupted
# frames were dropped and counted, not delivered; at the highest rate
# losses must have been met and recovered from.
# shellcheck source=selftests/drivers/sroce/lib.sh
source "$(dirname "$0")/lib.sh"
sr_require_sroce
RC_OPS=$(sr_tool rc_ops) || sr_skip "rc_ops not built"
sr_tool rc_verify >/dev/null || sr_skip "rc_verify not built"
command -v tc >/dev/null || sr_skip "tc missing"
command -v ibv_devinfo >/dev/null || sr_skip "ibv_devinfo missing"
RATES=${SR_LOSS_RATES:-0.1% 1% 5% 10%}
NETEM="delay 200us duplicate 1% reorder 10% 50% corrupt 1%"

sr_dmesg_mark
sr_sroce_ns_pair
# Address resolution must not depend on ARP getting through the loss.
mac_a=$(cat "/sys/class/net/$A/address")
mac_b=$(ip netns exec "$NS" cat "/sys/class/net/$B/address")
ip neigh replace "$PEER4" lladdr "$mac_b" dev "$A" nud permanent
ip -n "$NS" neigh replace "$IP4" lladdr "$mac_a" dev "$B" nud permanent
# Reordering needs a delay to reorder against.
# shellcheck disable=SC2086 # NETEM is a word list
tc qdisc add dev "$A" root netem $NETEM || sr_skip "netem not available"
# shellcheck disable=SC2086
ip netns exec "$NS" tc qdisc add dev "$B" root netem $NETEM

# sum COUNTER: the counter over both devices.
sum() {
	echo $(( $(sr_counter "$DA" "$1") + $(sr_counter "$DB" "$1") ))
}

RECOVERY="retransmit_timeout tlp_probe seq_nak_received read_gap_reask rx_duplicate_request rx_out_of_sequence rx_drop_bad_icrc rx_drop_malformed"
for c in $RECOVERY; do
	[ -n "$(sr_counter "$DA" "$c")" ] || sr_fail "no counter $c on $DA"
done

LOGS=$(mktemp -d)
sr_on_exit "rm -rf $LOGS"

# delta TITLE START: elapsed time and the counters' growth since START.
declare -A was
delta() {
	local line c
	line="$1: $(( ($(date +%s%N) - $2) / 1000000 )) ms"
	for c in tx_roce_packets $RECOVERY; do
		line="$line $c +$(( $(sum "$c") - was[$c] ))"
	done
	sr_log "$line"
}
if ga=$(sr_gid_index "$DA" "$IP4") && gb=$(sr_gid_index "$DB" "$PEER4"); then
	for rate in $RATES; do
		# shellcheck disable=SC2086
		tc qdisc change dev "$A" root netem $NETEM loss "$rate"
		# shellcheck disable=SC2086
		ip netns exec "$NS" tc qdisc change dev "$B" root netem $NETEM \
			loss "$rate"
		for c in $RECOVERY tx_roce_packets; do was[$c]=$(sum "$c"); done
		start=$(date +%s%N)
		sr_check "loss $rate: rc_ops data tests" sr_run_indented \
			timeout -k 10 900 env SROCE_DEV_A="$DA" SROCE_GID_A="$ga" \
			SROCE_DEV_B="$DB" SROCE_GID_B="$gb" SROCE_MTU=1024 \
			SROCE_SKIP_MAX_MSG=1 "$RC_OPS" \
			-t send -t send_with_imm -t rdma_write \
			-t rdma_write_with_imm -t rdma_read -t atomic_cmp_and_swp \
			-t atomic_fetch_and_add -t multi_sge \
			-t many_mtus_odd_length -t psn_wrap -t unsignaled_batch
		delta "loss $rate" "$start"
		last_restarts=$(( $(sum retransmit_timeout) + $(sum seq_nak_received) - was[retransmit_timeout] - was[seq_nak_received] ))
		for c in $RECOVERY tx_roce_packets; do was[$c]=$(sum "$c"); done
		start=$(date +%s%N)
		sr_check "loss $rate: rc_verify (reads of up to 512 KiB)" \
			sr_rc_verify "$LOGS/${rate%\%}" 18612 "$ga" "$gb"
		delta "loss $rate: rc_verify" "$start"
	done
	sr_log "$(rdma statistic show link "$DA/1")"
	sr_log "$(ip netns exec "$NS" rdma statistic show link "$DB/1")"
	sr_check "requesters restarted after losses" \
		test $(( $(sum retransmit_timeout) + $(sum seq_nak_received) )) -gt 0
	sr_check "at the highest rate too ($last_restarts restarts)" \
		test "$last_restarts" -gt 0
	sr_check "tail-loss probes sent" test "$(sum tlp_probe)" -gt 0
	sr_check "reads asked again at a gap, not only by the timer" \
		test "$(sum read_gap_reask)" -gt 0
	sr_check "responders answered duplicate requests" \
		test "$(sum rx_duplicate_request)" -gt 0
	sr_check "corrupted frames were dropped and counted" \
		test $(( $(sum rx_drop_bad_icrc) + $(sum rx_drop_malformed) )) -gt 0
else
	sr_fail "GIDs of $IP4 and $PEER4"
fi
sr_check "kernel log clean" sr_dmesg_clean
sr_done
