#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# RC payloads of user QPs, WRITE and SEND data and READ responses, leave
# as references to the user's pinned pages (sroce_mr_attach()). Those
# packets may outlive everything the user had: here netem holds them for
# 300 ms on the veth while their sender is killed (the WRITE client, the
# READ server), so its QP, its MR (unpinned) and its memory go while the
# qdisc still holds packets that point into them. Nothing may complain
# when the packets leave later, and the link must still carry data.
# shellcheck source=selftests/drivers/sroce/lib.sh
source "$(dirname "$0")/lib.sh"
sr_require_sroce
command -v ib_write_bw >/dev/null || sr_skip "ib_write_bw missing"
sr_dmesg_mark
TMP=$(mktemp -d)
sr_on_exit "rm -rf $TMP"
PORT=$(( 22000 + (SR_TAG % 400) * 10 ))

sr_sroce_ns_pair
GA=$(sr_gid_index "$DA" "$IP4") || sr_fail "no GID of $IP4 on $DA"
GB=$(sr_gid_index "$DB" "$PEER4") || sr_fail "no GID of $PEER4 on $DB"
ping -c 1 -W 5 "$PEER4" >/dev/null || sr_log "no ping answer from $PEER4"

# backlog NS DEV: packets the qdisc on DEV (in netns NS, or here) holds.
backlog() {
	local nsx=()
	[ -n "$1" ] && nsx=(ip netns exec "$1")
	"${nsx[@]}" tc -s qdisc show dev "$2" |
		awk '/backlog/ { sub(/p$/, "", $3); print $3; exit }'
}

# held WHAT TOOL NS DEV VICTIM: run TOOL (1 MiB messages) with netem
# holding DEV's packets for 300 ms (DEV in NS, or here), and kill the
# VICTIM side (client here, or server in $NS) while the packets it sent
# from its own pages are still held.
held() {
	local what=$1 tool=$2 netns=$3 dev=$4 victim=$5 srv cli i n=0 victim_pid t0
	local nsx=()
	[ -n "$netns" ] && nsx=(ip netns exec "$netns")
	if ! "${nsx[@]}" tc qdisc add dev "$dev" root netem delay 300ms \
		limit 100000; then
		sr_skip "no netem qdisc"
	fi
	PORT=$((PORT + 1))
	ip netns exec "$NS" timeout -k 5 60 "$tool" -d "$DB" -x "$GB" -F \
		-s 1048576 -D 20 -p "$PORT" >"$TMP/$tool.server" 2>&1 &
	srv=$!
	sr_wait_listen "$PORT" "$NS" 60 || sr_fail "$what: server did not listen"
	timeout -k 5 60 "$tool" -d "$DA" -x "$GA" -F -s 1048576 -D 20 \
		-p "$PORT" "$PEER4" >"$TMP/$tool.client" 2>&1 &
	cli=$!
	for ((i = 0; i < 100; i++)); do
		n=$(backlog "$netns" "$dev")
		[ "${n:-0}" -gt 16 ] && break
		sleep 0.1
	done
	sr_log "$what: packets held by netem when the $victim died: $n"
	sr_check "$what: the qdisc held the $victim's packets" test "${n:-0}" -gt 16
	# The tool itself, not only its timeout wrapper: a surviving tool
	# keeps its pages and keeps retransmitting into the qdisc.
	if [ "$victim" = client ]; then
		victim_pid=$cli
	else
		victim_pid=$srv
	fi
	sr_check "$what: the $victim is gone, its QP and MR with it" \
		sr_kill_tool "$victim_pid"
	sr_kill_tool "$cli" "$srv"
	wait "$cli" "$srv" 2>/dev/null
	# What netem held leaves 300 ms after it came, but a slow machine's
	# receiver may take seconds for it: bound the wait generously. Once
	# the queue was empty it has drained; a packet sent later (an ARP or
	# neighbour probe) may sit there 300 ms again, so the queue is not
	# read a second time.
	t0=$(date +%s%N)
	for ((i = 0; i < 300; i++)); do
		n=$(backlog "$netns" "$dev")
		[ "$n" = 0 ] && break
		sleep 0.1
	done
	sr_log "$what: backlog after $(( ($(date +%s%N) - t0) / 1000000 )) ms: $n packets"
	if [ "$n" != 0 ]; then
		"${nsx[@]}" tc -s qdisc show dev "$dev" | sed 's/^/# /'
		sr_log "tx_roce_packets $(sr_counter "$DA" tx_roce_packets)" \
			"$(sr_counter "$DB" tx_roce_packets)"
	fi
	sr_check "$what: the held packets drained" test "$n" = 0
	"${nsx[@]}" tc qdisc del dev "$dev" root
}

# WRITE data leaves from the client's pages, READ data from the server's.
held "WRITE" ib_write_bw "" "$A" client
held "READ" ib_read_bw "$NS" "$B" server

# The link still carries data, checked end to end.
sr_check "rc_verify across the link afterwards" \
	sr_rc_verify "$TMP/verify" $((PORT + 1)) "$GA" "$GB"
sr_check "kernel log clean" sr_dmesg_clean
sr_done
