#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Send doorbells of a stream go to a worker on the next CPU
# (sroce_sq_doorbell()); a lone message is still sent inside the call.
# Send-ring polling is off throughout: every post that finds the ring idle
# rings.
#  - 64 B SENDs, as fast as ib_send_bw posts them (loopback), the client
#    on CPU 1 and the server on CPU 0: the doorbells hand off
#    (sq_handoff), fewer than one doorbell per four messages is rung, and
#    the worker (sroce_sq_work, traced) runs on CPU 0, the next CPU after
#    the poster's. Sent inline, every message rang its own doorbell.
#  - The same with the sides swapped: the worker runs on CPU 1.
#  - Ping-pongs (ib_write_lat, ib_send_lat): no doorbell hands off; each
#    message waits for the peer's answer before the next is posted.
#  - ib_read_lat: no doorbell hands off either, although each READ
#    completes inside its own doorbell in loopback and the next one comes
#    at once: the client reaped its completion in between.
# shellcheck source=selftests/drivers/sroce/lib.sh
source "$(dirname "$0")/lib.sh"
sr_require_sroce
command -v ib_send_bw >/dev/null || sr_skip "ib_send_bw missing (perftest)"
[ "$(nproc)" -ge 2 ] || sr_skip "a handoff needs a second CPU"
POLL=/sys/module/sroce/parameters/sq_poll_us
[ -w "$POLL" ] || sr_skip "no writable sq_poll_us module parameter"
sr_on_exit "echo $(cat "$POLL") >$POLL"
echo 0 >"$POLL"
sr_tracefs
ITERS=20000
LAT_ITERS=2000

sr_dmesg_mark
TMP=$(mktemp -d)
sr_on_exit "rm -rf $TMP"
n=$(( SR_TAG % 250 + 1 ))
PORT=$(( 29000 + (SR_TAG % 400) * 10 ))
L=sr${SR_TAG}h
LDEV=sroce_h$SR_TAG
L4=198.19.$n.1
sr_loopback_link "$LDEV" "$L" "$L4"
G=$(sr_gid_index "$LDEV" "$L4") || sr_done

# Where sroce_sq_work runs: workqueue_execute_start of that function.
sr_trace_instance "sroce_ho$SR_TAG"
WORK_FN=$(awk '$3 == "sroce_sq_work" { print $1; exit }' /proc/kallsyms)
EV=$INST/events/workqueue/workqueue_execute_start
if [ -z "$WORK_FN" ] || [ "$WORK_FN" = 0000000000000000 ] ||
	! echo "function == 0x$WORK_FN" >"$EV/filter"; then
	sr_fail "cannot trace sroce_sq_work (kallsyms: '$WORK_FN')"
	sr_done
fi

# shellcheck disable=SC2317 # called through sr_check
# perf TEST SIZE ITERS SERVER_CPU CLIENT_CPU: a perftest pair in loopback,
# each side on its CPU, with sroce_sq_work traced; true when both end
# well. Counters are snapped before; the trace is in $TMP/trace.
perf() {
	local test=$1 size=$2 iters=$3 scpu=$4 ccpu=$5 srv ok=0
	PORT=$((PORT + 1))
	sr_snap "$LDEV" sq_doorbell sq_handoff
	echo >"$INST/trace"
	echo 1 >"$EV/enable"
	taskset -c "$scpu" timeout -k 5 90 "$test" -d "$LDEV" -x "$G" \
		-s "$size" -n "$iters" -p "$PORT" -F >"$TMP/srv" 2>&1 &
	srv=$!
	sr_wait_listen "$PORT" "" 60 &&
		taskset -c "$ccpu" timeout -k 5 90 "$test" -d "$LDEV" -x "$G" \
			-s "$size" -n "$iters" -p "$PORT" -F "$L4" \
			>"$TMP/cli" 2>&1 && ok=1
	wait "$srv" || ok=0
	echo 0 >"$EV/enable"
	cat "$INST/trace" >"$TMP/trace"
	sr_log "$test, $iters of $size B, server on CPU $scpu, client on" \
		"CPU $ccpu: doorbells $(sr_grew "$LDEV" sq_doorbell)," \
		"handed off $(sr_grew "$LDEV" sq_handoff)," \
		"sroce_sq_work on CPU 0/1: $(work_on 0)/$(work_on 1)"
	[ "$ok" = 1 ] && return 0
	sed 's/^/# client: /' "$TMP/cli"
	sed 's/^/# server: /' "$TMP/srv"
	return 1
}

# work_on CPU: how many times sroce_sq_work began on CPU in $TMP/trace.
work_on() {
	grep -c "\[$(printf %03d "$1")\].*workqueue_execute_start" \
		"$TMP/trace"
}

# shellcheck disable=SC2317 # called through sr_check
# mostly_on CPU: sroce_sq_work ran at least 100 times, 9 in 10 on CPU.
mostly_on() {
	local on all
	on=$(work_on "$1")
	all=$(grep -c workqueue_execute_start "$TMP/trace")
	[ "$all" -ge 100 ] && [ $((on * 10)) -ge $((all * 9)) ]
}

for sides in "0 1" "1 0"; do
	read -r scpu ccpu <<<"$sides"
	sr_check "stream from CPU $ccpu: $ITERS SENDs complete" \
		perf ib_send_bw 64 $ITERS "$scpu" "$ccpu"
	sr_check "stream from CPU $ccpu: doorbells handed off" \
		test "$(sr_grew "$LDEV" sq_handoff)" -gt 0
	sr_check "stream from CPU $ccpu: under one doorbell per four messages" \
		test "$(sr_grew "$LDEV" sq_doorbell)" -lt $((ITERS / 4))
	sr_check "stream from CPU $ccpu: the worker ran on CPU $scpu" \
		mostly_on "$scpu"
done

for test in ib_write_lat ib_send_lat ib_read_lat; do
	sr_check "$test: $LAT_ITERS messages complete" \
		perf "$test" 2 $LAT_ITERS 0 1
	sr_check "$test: a doorbell per message" \
		test "$(sr_grew "$LDEV" sq_doorbell)" -ge $LAT_ITERS
	sr_check "$test: none handed off" \
		test "$(sr_grew "$LDEV" sq_handoff)" -eq 0
done

sr_check "kernel log clean" sr_dmesg_clean
sr_done
