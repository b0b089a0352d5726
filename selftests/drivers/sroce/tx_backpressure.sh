#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Transmit backpressure: a queue pair stops sending while the stack below
# it still holds SROCE_TX_INFLIGHT_HIGH of its packets, and goes on once
# they drain, instead of overrunning a slow link and losing packets.
#
# Two sroce devices on a veth pair (one end in a netns), each end behind
# a token bucket far slower than sroce with a queue of 768 KiB (about 180
# full-size packets: more than two queue pairs may hold, less than their
# two send windows, far less than a long READ response). Over it:
#  - the RC tests (rc_ops and the rest), every RC operation checked;
#  - ib_write_bw and ib_read_bw with 1 MiB messages, 2 QPs each.
# Then: the token buckets did throttle (overlimits), yet dropped nothing;
# sroce paused (tx_pause) and dropped nothing (tx_drop); the receive
# backlogs dropped nothing (softnet_stat). Sequence NAKs and timeouts are
# only reported: a qdisc on a veth hands packets to the backlog of
# whichever CPU dequeues them, which reorders them now and then (slow
# kernels often), and the queues delay packets by up to about 20 ms.
# Last, both ends of a paused transfer are killed and the module removed
# while their packets are still queued in the buckets.
# shellcheck source=selftests/drivers/sroce/lib.sh
source "$(dirname "$0")/lib.sh"
sr_require_sroce
for t in ib_write_bw ib_read_bw tc; do
	command -v "$t" >/dev/null || sr_skip "$t missing"
done
sr_tool rc_ops >/dev/null || sr_skip "rc_ops not built"
RUN_TIMEOUT=300
RATE=200mbit
LIMIT=768kb

sr_dmesg_mark
TMP=$(mktemp -d)
sr_on_exit "rm -rf $TMP"
PORT=$(( 21000 + (SR_TAG % 400) * 10 ))

sr_sroce_ns_pair
ga=$(sr_gid_index "$DA" "$IP4") || sr_fail "GID of $IP4 on $DA"
gb=$(sr_gid_index "$DB" "$PEER4") || sr_fail "GID of $PEER4 on $DB"
if [ -z "$ga" ] || [ -z "$gb" ]; then sr_done; fi

tc qdisc add dev "$A" root tbf rate $RATE burst 64kb limit $LIMIT ||
	sr_skip "no tbf qdisc (CONFIG_NET_SCH_TBF)"
sr_check "token bucket on $B" \
	tc -n "$NS" qdisc add dev "$B" root tbf rate $RATE burst 64kb limit $LIMIT

# qdisc_stat NS DEV FIELD: "dropped" or "overlimits" of DEV's root qdisc.
qdisc_stat() {
	local nsx=()
	[ -n "$1" ] && nsx=(-n "$1")
	tc "${nsx[@]}" -s qdisc show dev "$2" root |
		sed -n "s/.*$3 \([0-9]*\).*/\1/p" | head -n 1
}

# sum COUNTER: the counter on both devices together.
sum() {
	echo $(( $(sr_counter "$DA" "$1") + $(sr_counter "$DB" "$1") ))
}
COUNTERS="tx_drop tx_pause retransmit_timeout seq_nak_received"
for c in $COUNTERS; do
	[[ "$(sr_counter "$DA" $c).$(sr_counter "$DB" $c)" =~ ^[0-9]+\.[0-9]+$ ]] ||
		sr_fail "no counter $c"
done
[ "$SR_FAILED" = 0 ] || sr_done

# pt NAME TOOL SERVER_NS SERVER_DEV SERVER_GID CLIENT_NS CLIENT_DEV
#    CLIENT_GID HOST: one perftest run, server first.
pt() {
	local name=$1 tool=$2 sns=$3 sdev=$4 sgid=$5 cns=$6 cdev=$7 cgid=$8
	local host=$9 snsx=() cnsx=() srv ok=1 out=$TMP/$1
	local args=(-s 1048576 -n 40 -q 2 -F)
	[ -n "$sns" ] && snsx=(ip netns exec "$sns")
	[ -n "$cns" ] && cnsx=(ip netns exec "$cns")
	PORT=$((PORT + 1))
	"${snsx[@]}" timeout -k 5 $RUN_TIMEOUT "$tool" -d "$sdev" -x "$sgid" \
		-p "$PORT" "${args[@]}" >"$out.server" 2>&1 &
	srv=$!
	if ! sr_wait_listen "$PORT" "$sns" 60; then
		sr_log "$name: the server did not listen"
		ok=0
	elif ! "${cnsx[@]}" timeout -k 5 $RUN_TIMEOUT "$tool" -d "$cdev" \
		-x "$cgid" -p "$PORT" "${args[@]}" "$host" >"$out.client" 2>&1
	then
		ok=0
	fi
	wait "$srv" || ok=0
	if [ $ok = 1 ]; then
		grep -E '^ *[0-9]+ +[0-9]+ ' "$out.client" | sed "s/^/# $name: /"
	else
		sed "s/^/# $name client: /" "$out.client"
		sed "s/^/# $name server: /" "$out.server"
	fi
	sr_check "$name" test $ok = 1
}

declare -A before
for c in $COUNTERS; do
	before[$c]=$(sum $c)
done
backlog_drops0=$(sr_backlog_drops)

sr_log "the RC tests over $RATE links with $LIMIT queues"
sr_check "the RC tests over a slow link" sr_run_indented \
	sr_rc_tests 600 SROCE_DEV_A="$DA" SROCE_GID_A="$ga" \
	SROCE_DEV_B="$DB" SROCE_GID_B="$gb" SROCE_SKIP_MAX_MSG=1
# The RC tests provoke timeouts and NAKs on purpose; count from here.
for c in retransmit_timeout seq_nak_received; do
	before[$c]=$(sum $c)
done
# WRITEs leave A through its bucket; READ responses leave A through it.
pt "ib_write_bw A to B" ib_write_bw "$NS" "$DB" "$gb" "" "$DA" "$ga" "$PEER4"
pt "ib_read_bw B reads A" ib_read_bw "" "$DA" "$ga" "$NS" "$DB" "$gb" "$IP4"

over=$(( $(qdisc_stat "" "$A" overlimits) + $(qdisc_stat "$NS" "$B" overlimits) ))
dropped=$(( $(qdisc_stat "" "$A" dropped) + $(qdisc_stat "$NS" "$B" dropped) ))
sr_log "token buckets: $over overlimits, $dropped dropped"
sr_log "sroce: tx_pause +$(( $(sum tx_pause) - before[tx_pause] ))," \
	"tx_drop +$(( $(sum tx_drop) - before[tx_drop] ))," \
	"retransmit_timeout +$(( $(sum retransmit_timeout) - before[retransmit_timeout] ))," \
	"seq_nak_received +$(( $(sum seq_nak_received) - before[seq_nak_received] ))"
sr_check "the links were the bottleneck (overlimits)" test "$over" -gt 0
sr_check "the token buckets dropped nothing" test "$dropped" = 0
sr_check "sroce paused for queued packets (tx_pause)" \
	test "$(sum tx_pause)" -gt "${before[tx_pause]}"
sr_check "tx_drop stayed put" test "$(sum tx_drop)" = "${before[tx_drop]}"
sr_check "the receive backlogs dropped nothing" \
	test "$(sr_backlog_drops)" = "$backlog_drops0"

# Teardown with packets queued in the buckets: kill both ends of a
# paused transfer, then rmmod, which must wait for those packets (their
# destructor is ours) and then go through.
PORT=$((PORT + 1))
ip netns exec "$NS" timeout -k 5 60 ib_write_bw -d "$DB" -x "$gb" -p "$PORT" \
	-s 1048576 -q 2 -D 20 -F >"$TMP/kill.server" 2>&1 &
srv=$!
if sr_wait_listen "$PORT" "$NS" 60; then
	timeout -k 5 60 ib_write_bw -d "$DA" -x "$ga" -p "$PORT" -s 1048576 \
		-q 2 -D 20 -F "$PEER4" >"$TMP/kill.client" 2>&1 &
	cli=$!
	p0=$(sum tx_pause)
	for _ in $(seq 50); do
		[ "$(sum tx_pause)" -gt "$p0" ] && break
		sleep 0.2
	done
	sr_check "teardown: the transfer is paused on full queues" \
		test "$(sum tx_pause)" -gt "$p0"
	sr_check "teardown: both ends are gone" sr_kill_tool "$cli" "$srv"
	wait "$cli" "$srv" 2>/dev/null
	sr_check "teardown: rmmod with packets queued below" \
		timeout 60 rmmod sroce
	sr_check "teardown: module loads again" modprobe sroce
else
	sr_fail "teardown: the server did not listen"
	sr_kill_tool "$srv"
fi
sr_check "kernel log clean" sr_dmesg_clean
sr_done
