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

# stream TOOL: one run of TOOL, 1 MiB messages, with the client migrating.
stream() {
	local tool=$1 srv cli ok=1 c
	local -A before
	for c in $COUNTERS; do before[$c]=$(sum "$c"); done
	PORT=$((PORT + 1))
	ip netns exec "$NS" timeout -k 5 120 "$tool" -d "$DB" -x "$GB" -F \
		-s 1048576 -n 300 -p "$PORT" >"$TMP/$tool.server" 2>&1 &
	srv=$!
	sr_wait_listen "$PORT" "$NS" 60 || ok=0
	timeout -k 5 120 "$tool" -d "$DA" -x "$GA" -F -s 1048576 -n 300 \
		-p "$PORT" "$PEER4" >"$TMP/$tool.client" 2>&1 &
	cli=$!
	migrate "$cli" &
	wait "$cli" || ok=0
	wait "$srv" || ok=0
	wait
	grep -E '^ *1048576 ' "$TMP/$tool.client" | sed "s/^/# $tool: /"
	if [ $ok != 1 ]; then
		sed "s/^/# $tool client: /" "$TMP/$tool.client"
		sed "s/^/# $tool server: /" "$TMP/$tool.server"
	fi
	sr_check "$tool with a migrating client completes" test $ok = 1
	for c in $COUNTERS; do
		sr_log "$tool: $c +$(( $(sum "$c") - before[$c] ))"
	done
	for c in rx_out_of_sequence seq_nak_received retransmit_timeout read_gap_reask; do
		sr_check "$tool: no $c" test "$(sum "$c")" = "${before[$c]}"
	done
}

stream ib_write_bw
stream ib_send_bw
stream ib_read_bw
sr_check "kernel log clean" sr_dmesg_clean
sr_done
