#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A clean link delivers a queue pair's packets in order, whichever CPUs
# its sends come from. Two sroce devices on a veth into another netns;
# ib_write_bw, ib_send_bw and ib_read_bw stream 1 MiB messages while the
# client is moved between the CPUs every 50 ms, so that its doorbells come
# from both, and from another CPU than the acknowledgments that open the
# send window and the freed packets that end a transmit pause.
# A packet sent from one CPU waits in that CPU's receive backlog, and
# without care one sent next from the other CPU overtakes it. Neither
# device may count a request out of sequence, a sequence NAK or a
# retransmission (the module before the fix counted hundreds of the first).
# How often sends were handed to the CPU that held packets in flight
# (tx_cpu_handoff) is logged.
# The same three runs then loop back inside device A, four queue pairs
# at once, client and server both migrating: looped-back packets wait in
# per-QP-number queues that any CPU may drain, and each queue pair's must
# still arrive in sending order.
# shellcheck source=selftests/drivers/sroce/lib.sh
source "$(dirname "$0")/lib.sh"
sr_require_sroce
for t in ib_write_bw ib_send_bw ib_read_bw taskset; do
	command -v "$t" >/dev/null || sr_skip "$t missing"
done
[ "$(nproc)" -ge 2 ] || sr_skip "needs two CPUs"
sr_dmesg_mark
TMP=$(mktemp -d)
sr_on_exit "rm -rf $TMP"
PORT=$(( 21000 + (SR_TAG % 400) * 10 ))
COUNTERS="rx_out_of_sequence seq_nak_received retransmit_timeout read_gap_reask tx_cpu_handoff"

sr_sroce_ns_pair
GA=$(sr_gid_index "$DA" "$IP4") || sr_fail "no GID of $IP4 on $DA"
GB=$(sr_gid_index "$DB" "$PEER4") || sr_fail "no GID of $PEER4 on $DB"
ping -c 1 -W 5 "$PEER4" >/dev/null || sr_log "no ping answer from $PEER4"

sum() { echo $(( $(sr_counter "$DA" "$1") + $(sr_counter "$DB" "$1") )); }

# migrate PID: move PID between CPU 0 and CPU 1 until it ends.
migrate() {
	local cpu=0
	while kill -0 "$1" 2>/dev/null; do
		taskset -p -c "$cpu" "$1" >/dev/null 2>&1 || true
		cpu=$((1 - cpu))
		sleep 0.05
	done
}

# stream TOOL [loop]: one run of TOOL, 1 MiB messages, with the client
# migrating; with "loop", inside device A with 4 QPs, the server migrating
# too.
stream() {
	local tool=$1 name=$1 srv cli ok=1 c
	local sns=(ip netns exec "$NS") sdev=$DB sgid=$GB host=$PEER4 more=()
	local -A before
	if [ "${2:-}" = loop ]; then
		name="$tool loopback"
		sns=() sdev=$DA sgid=$GA host=$IP4 more=(-q 4)
	fi
	for c in $COUNTERS; do before[$c]=$(sum "$c"); done
	PORT=$((PORT + 1))
	"${sns[@]}" timeout -k 5 120 "$tool" -d "$sdev" -x "$sgid" -F \
		-s 1048576 -n 300 "${more[@]}" -p "$PORT" \
		>"$TMP/$tool.server" 2>&1 &
	srv=$!
	if [ "${2:-}" = loop ]; then
		sr_wait_listen "$PORT" "" 60 || ok=0
		migrate "$srv" &
	else
		sr_wait_listen "$PORT" "$NS" 60 || ok=0
	fi
	timeout -k 5 120 "$tool" -d "$DA" -x "$GA" -F -s 1048576 -n 300 \
		"${more[@]}" -p "$PORT" "$host" >"$TMP/$tool.client" 2>&1 &
	cli=$!
	migrate "$cli" &
	wait "$cli" || ok=0
	wait "$srv" || ok=0
	wait
	grep -E '^ *1048576 ' "$TMP/$tool.client" | sed "s/^/# $name: /"
	if [ $ok != 1 ]; then
		sed "s/^/# $name client: /" "$TMP/$tool.client"
		sed "s/^/# $name server: /" "$TMP/$tool.server"
	fi
	sr_check "$name with a migrating client completes" test $ok = 1
	for c in $COUNTERS; do
		sr_log "$name: $c +$(( $(sum "$c") - before[$c] ))"
	done
	for c in rx_out_of_sequence seq_nak_received retransmit_timeout read_gap_reask; do
		sr_check "$name: no $c" test "$(sum "$c")" = "${before[$c]}"
	done
}

for tool in ib_write_bw ib_send_bw ib_read_bw; do
	stream $tool
done
for tool in ib_write_bw ib_send_bw ib_read_bw; do
	stream $tool loop
done
sr_check "kernel log clean" sr_dmesg_clean
sr_done
