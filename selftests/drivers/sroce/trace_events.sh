#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The "sroce" trace events, read from a tracefs instance of the test's
# own: crafted packets that must be dropped appear as sroce_rx_drop with
# their reason, QPN, PSN and opcode; a transfer over a lossy veth shows
# the client QP's state changes and doorbells, its retransmissions with
# their cause, the server's sequence NAKs, and one rx_drop event for
# every packet the rx_out_of_sequence counter counted.
# shellcheck source=selftests/drivers/sroce/lib.sh
source "$(dirname "$0")/lib.sh"
sr_require_sroce
command -v python3 >/dev/null || sr_skip "python3 missing"
command -v ib_write_bw >/dev/null || sr_skip "ib_write_bw missing"
sr_dmesg_mark
TMP=$(mktemp -d)
sr_on_exit "rm -rf $TMP"
PORT=$(( 23000 + (SR_TAG % 400) * 10 ))

sr_tracefs

# trace_on / trace_off: record the sroce events into $TMP/trace.
trace_on() {
	echo >"$INST/trace"
	echo 1 >"$INST/events/sroce/enable"
}
trace_off() {
	echo 0 >"$INST/events/sroce/enable"
	cat "$INST/trace" >"$TMP/trace"
}
# events EVENT PATTERN: how many EVENT lines match the extended regex.
events() {
	grep -E " sroce_$1: .*$2" "$TMP/trace" | grep -c .
}

sr_sroce_ns_pair
# Before any check, so that a skip never hides a failure.
tc qdisc add dev "$A" root netem loss 3% || sr_skip "no netem qdisc"
tc qdisc del dev "$A" root

[ -d "$TRACEFS/events/sroce" ] || sr_fail "no sroce events in $TRACEFS"
for e in qp_state retransmit rx_drop nak_sent doorbell; do
	sr_check "event sroce_$e exists" \
		test -d "$TRACEFS/events/sroce/sroce_$e"
done
sr_trace_instance "sroce_t$SR_TAG"
GA=$(sr_gid_index "$DA" "$IP4") || sr_fail "no GID of $IP4 on $DA"
GB=$(sr_gid_index "$DB" "$PEER4") || sr_fail "no GID of $PEER4 on $DB"
ping -c 1 -W 5 "$PEER4" >/dev/null || sr_log "no ping answer from $PEER4"
MAC=$(cat "/sys/class/net/$A/address")

# Drops: crafted frames from the peer's side of the veth to $DA.
noqp0=$(sr_counter "$DA" rx_drop_no_qp)
icrc0=$(sr_counter "$DA" rx_drop_bad_icrc)
trace_on
ip netns exec "$NS" python3 "$SR_DIR/roce_pkt.py" "$B" "$MAC" "$PEER4" \
	"$IP4" --qpn 0x123 --psn 77 || sr_fail "roce_pkt.py"
ip netns exec "$NS" python3 "$SR_DIR/roce_pkt.py" "$B" "$MAC" "$PEER4" \
	"$IP4" --qpn 0x456 --psn 99 --opcode 0x0a --bad-icrc ||
	sr_fail "roce_pkt.py"
for ((i = 0; i < 50; i++)); do
	[ "$(sr_counter "$DA" rx_drop_no_qp)" -gt "$noqp0" ] &&
		[ "$(sr_counter "$DA" rx_drop_bad_icrc)" -gt "$icrc0" ] && break
	sleep 0.1
done
trace_off
sr_check "a packet to no QP: reason, QPN, PSN and opcode" \
	test "$(events rx_drop "dev=$DA reason=rx_drop_no_qp qpn=291 psn=77 opcode=0x04$")" = 1
sr_check "a packet with a bad ICRC: its reason" \
	test "$(events rx_drop "dev=$DA reason=rx_drop_bad_icrc qpn=1110 psn=99 opcode=0x0a$")" = 1

# A transfer over a lossy link: retransmissions, NAKs, state changes.
tc qdisc add dev "$A" root netem loss 3% || sr_fail "netem"
ooo0=$(sr_counter "$DB" rx_out_of_sequence)
trace_on
PORT=$((PORT + 1))
ip netns exec "$NS" timeout -k 5 120 ib_write_bw -d "$DB" -x "$GB" -F \
	-s 65536 -n 200 -p "$PORT" >"$TMP/server" 2>&1 &
srv=$!
sr_wait_listen "$PORT" "$NS" 60 || sr_fail "the server did not listen"
timeout -k 5 120 ib_write_bw -d "$DA" -x "$GA" -F -s 65536 -n 200 \
	-p "$PORT" "$PEER4" >"$TMP/client" 2>&1
cli_rc=$?
wait "$srv"
srv_rc=$?
trace_off
tc qdisc del dev "$A" root
ooo=$(( $(sr_counter "$DB" rx_out_of_sequence) - ooo0 ))
sr_check "ib_write_bw across 3% loss" test "$cli_rc$srv_rc" = 00
# perftest: "local address: LID 0000 QPN 0x0011 PSN ...", in hex.
local_qpn() {
	local h
	h=$(sed -n 's/.*local address:.* QPN \(0x[0-9a-fA-F]*\) .*/\1/p' "$1" |
		head -n 1)
	[ -n "$h" ] && echo $((h))
}
qpn=$(local_qpn "$TMP/client")
sqpn=$(local_qpn "$TMP/server")
sr_log "client QPN $qpn, server QPN $sqpn; out of sequence: $ooo; trace" \
	"lines: $(grep -c . "$TMP/trace"); lost: $(sr_trace_overrun)"
for e in qp_state doorbell retransmit nak_sent rx_drop; do
	sr_log "$(grep -m 1 " sroce_$e: " "$TMP/trace" | sed 's/^ *//')"
done
{ [ -n "$qpn" ] && [ -n "$sqpn" ]; } || sr_fail "no QPN in perftest's output"
for t in "RESET -> INIT" "INIT -> RTR" "RTR -> RTS"; do
	sr_check "client QP: $t" \
		test "$(events qp_state "dev=$DA qpn=$qpn $t$")" = 1
done
sr_check "client QP: send doorbells" \
	test "$(events doorbell "dev=$DA qpn=$qpn queue=send$")" -gt 0
sr_check "client QP: retransmissions for NAKs or timeouts" \
	test "$(events retransmit "dev=$DA qpn=$qpn psn=[0-9]+ cause=(seq_nak|timeout)$")" -gt 0
sr_check "server QP: sequence NAKs sent" \
	test "$(events nak_sent "dev=$DB qpn=$sqpn psn=[0-9]+ kind=nak code=psn_seq value=0$")" -gt 0
retx_nak=$(events retransmit "dev=$DA qpn=$qpn .* cause=seq_nak$")
naks=$(events nak_sent "dev=$DB qpn=$sqpn .* code=psn_seq value=0$")
sr_check "client QP: retransmissions for NAKs ($retx_nak), at most $naks" \
	test "$retx_nak" -gt 0 -a "$retx_nak" -le "$naks"
if [ "$(sr_trace_overrun)" = 0 ]; then
	sr_check "one rx_drop event per packet out of sequence ($ooo)" \
		test "$(events rx_drop "dev=$DB reason=rx_out_of_sequence qpn=$sqpn ")" = "$ooo"
else
	sr_fail "the trace buffer overflowed"
fi
sr_check "kernel log clean" sr_dmesg_clean
sr_done
