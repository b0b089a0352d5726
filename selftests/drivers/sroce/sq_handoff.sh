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
#  - A real-time busy loop, unthrottled, on the CPU the worker would use,
#    begun before a stream of 64 B WRITEs from the other CPU, and begun
#    once another stream handed off ten doorbells: both complete, the
#    poster's CPU sending what the worker could not (sq_handoff_late).
#    The second one's teardown waits for the worker the loop preempted
#    (cancel_work_sync()), until the loop ends: an unthrottled real-time
#    task starves every per-CPU worker of its CPU.
#  - sq_handoff off: the stream rings a doorbell per message.
# shellcheck source=selftests/drivers/sroce/lib.sh
source "$(dirname "$0")/lib.sh"
sr_require_sroce
command -v ib_send_bw >/dev/null || sr_skip "ib_send_bw missing (perftest)"
[ "$(nproc)" -ge 2 ] || sr_skip "a handoff needs a second CPU"
POLL=/sys/module/sroce/parameters/sq_poll_us
[ -w "$POLL" ] || sr_skip "no writable sq_poll_us module parameter"
sr_on_exit "echo $(cat "$POLL") >$POLL"
echo 0 >"$POLL"
HANDOFF=/sys/module/sroce/parameters/sq_handoff
[ -w "$HANDOFF" ] || sr_skip "no writable sq_handoff module parameter"
sr_on_exit "echo $(cat "$HANDOFF") >$HANDOFF"
echo Y >"$HANDOFF"
sr_tracefs
ITERS=20000
LAT_ITERS=2000

sr_loopback_setup h 29000

# Where sroce_sq_work runs: workqueue_execute_start of that function.
sr_trace_instance "sroce_ho$SR_TAG"
WORK_FN=$(awk '$3 == "sroce_sq_work" { print $1; exit }' /proc/kallsyms)
EV=$INST/events/workqueue/workqueue_execute_start
[ -n "$WORK_FN" ] && [ "$WORK_FN" != 0000000000000000 ] ||
	sr_skip "no address of sroce_sq_work in /proc/kallsyms"
if ! echo "function == 0x$WORK_FN" >"$EV/filter"; then
	sr_fail "cannot trace sroce_sq_work"
	sr_done
fi

# shellcheck disable=SC2317 # called through sr_check
# perf TEST SIZE ITERS SERVER_CPU CLIENT_CPU: a perftest pair in loopback,
# each side on its CPU, with sroce_sq_work traced; true when both end
# well. Counters are snapped before; the trace is in $TMP/trace.
perf() {
	local test=$1 size=$2 iters=$3 scpu=$4 ccpu=$5 srv ok=0
	PORT=$((PORT + 1))
	sr_snap "$LDEV" sq_doorbell sq_handoff sq_handoff_late
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

# Both sides post in the write and send ping-pongs, the client only in
# the READ one. A post may find the kernel sending already, the peer's
# answer just in on the other CPU, and need no doorbell: 1 in 100 may
# (CI, 6.1, 2026-12-08: 3,999 doorbells for 4,000 writes).
for test in ib_write_lat:2 ib_send_lat:2 ib_read_lat:1; do
	sides=${test#*:}
	test=${test%:*}
	sr_check "$test: $LAT_ITERS messages complete" \
		perf "$test" 2 $LAT_ITERS 0 1
	sr_check "$test: a doorbell per message" \
		test "$(sr_grew "$LDEV" sq_doorbell)" -ge \
		$((LAT_ITERS * sides * 99 / 100))
	sr_check "$test: none handed off" \
		test "$(sr_grew "$LDEV" sq_handoff)" -eq 0
done

RT=/proc/sys/kernel/sched_rt_runtime_us
if command -v chrt >/dev/null && [ -w "$RT" ]; then
	# This script and its helpers must not share CPU 0 with the loop.
	mask=$(taskset -p $$ | awk '{ print $NF }')
	taskset -p -c 1 $$ >/dev/null
	sr_on_exit "echo $(cat "$RT") >$RT"
	echo -1 >"$RT"
	[ -d /sys/kernel/debug/sched ] ||
		mount -t debugfs none /sys/kernel/debug 2>/dev/null
	# 6.12's deadline server would give the worker 5 % anyway.
	FS=/sys/kernel/debug/sched/fair_server/cpu0/runtime
	if [ -w "$FS" ]; then
		sr_on_exit "echo $(cat "$FS") >$FS"
		echo 0 >"$FS"
	fi
	sr_on_exit "pkill -f sq_handoff_hog$SR_TAG"
	# Ends by itself after 2 minutes, should this script be killed.
	HOG="chrt -f 10 taskset -c 0 bash -c \
		\": sq_handoff_hog$SR_TAG; while [ \\\$SECONDS -lt 120 ]; do :; done\""

	# Before the stream: no worker ever begins.
	eval "$HOG &"
	hog=$!
	sr_check "real-time loop on CPU 0: $ITERS WRITEs from CPU 1 complete" \
		perf ib_write_bw 64 $ITERS 1 1
	kill "$hog"
	wait "$hog" 2>/dev/null
	sr_log "stalled handoffs sent from CPU 1: $(sr_grew "$LDEV" sq_handoff_late)"
	sr_check "real-time loop on CPU 0: CPU 1 sent for stalled handoffs" \
		test "$(sr_grew "$LDEV" sq_handoff_late)" -gt 0
	# In the middle of a stream: workers that began lose their CPU too.
	sr_snap "$LDEV" sq_handoff_late
	ho0=$(sr_counter "$LDEV" sq_handoff)
	perf ib_write_bw 64 $((ITERS * 4)) 1 1 &
	stream=$!
	for ((i = 0; i < 300; i++)); do
		[ "$(sr_counter "$LDEV" sq_handoff)" -gt $((ho0 + 10)) ] && break
		sleep 0.1
	done
	sr_log "the loop began after $(( $(sr_counter "$LDEV" sq_handoff) - ho0 ))" \
		"handoffs of the stream"
	eval "$HOG &"
	hog=$!
	grep -qE "^ *64 +$((ITERS * 4)) " "$TMP/cli" && i=300	# ended already
	# The client's result line: every WRITE completed. Its teardown
	# waits for the worker it preempted, which runs once the loop ends.
	sr_check "real-time loop from mid-stream: $((ITERS * 4)) WRITEs complete" \
		sr_wait_output "$TMP/cli" "^ *64 +$((ITERS * 4)) " 55
	kill "$hog"
	wait "$hog" 2>/dev/null
	sr_check "real-time loop from mid-stream: both ends close" \
		wait "$stream"
	PORT=$((PORT + 1))	# the stream's, in its subshell
	sr_log "stalled handoffs sent from CPU 1: $(sr_grew "$LDEV" sq_handoff_late)"
	sr_check "real-time loop from mid-stream: CPU 1 sent for stalled handoffs" \
		test "$(sr_grew "$LDEV" sq_handoff_late)" -gt 0
	sr_check "real-time loop from mid-stream: it began before the end" \
		test "$i" -lt 300
	taskset -p "$mask" $$ >/dev/null
else
	sr_log "no chrt or $RT: real-time case skipped"
fi

echo N >"$HANDOFF"
sr_check "sq_handoff off: $ITERS SENDs complete" \
	perf ib_send_bw 64 $ITERS 0 1
sr_check "sq_handoff off: a doorbell per message, none handed off" \
	test "$(sr_grew "$LDEV" sq_doorbell)" -ge $ITERS -a \
	"$(sr_grew "$LDEV" sq_handoff)" -eq 0

sr_check "kernel log clean" sr_dmesg_clean
sr_done
