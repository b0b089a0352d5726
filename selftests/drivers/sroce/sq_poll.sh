#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Send-ring polling (sroce.sq_poll_us): a user QP's send ring that drained
# is watched from another CPU while that CPU is idle, so a stream of small
# posts needs no doorbell system call; the poller gives its CPU up as soon
# as another task wants it.
#  - Polling off: a stream of 64 B RDMA WRITEs (ib_write_bw, loopback)
#    rings a doorbell for most messages and nothing is polled.
#  - Polling on (the default 50 us), one CPU left idle: the same stream
#    rings fewer than one doorbell per ten messages, and the poller took
#    the posts (sq_polled). One thread posting to 8 QPs in turn (-q 8):
#    the one poller watches several of the rings at once (the QPs'
#    sq_poll_cpu), where it watched one before poll lists.
#  - A busy loop on every CPU: the poller yields (sq_poll_yield) and the
#    stream still completes, on doorbells.
#  - A polled stream, then a busy loop on every CPU but the programs':
#    each poll yields; for 2 s after the last poll that took posts the
#    QP backs off no further than one try in 64 drains, then further;
#    once the loops end, it is polled again.
#  - A real-time busy loop, unthrottled, on every CPU but the one the
#    programs are pinned to: a poller queued there never runs. The ring
#    stays armed until a poller runs, so the stream completes on
#    doorbells, and the watchdog ends the sessions that never ran (their
#    slots would otherwise stay taken).
#  - rc_verify across a netns with a 10 ms poll: every byte checked, the
#    poller took posts of both sides.
#  - A client killed in the middle of a polled stream: its QPs go, the
#    sessions are gone (the next stream is polled), the device
#    is removed, the kernel log stays clean.
# Doorbells send inline throughout (sq_handoff off, see sq_handoff.sh):
# what saves them here is the poller alone.
# shellcheck source=selftests/drivers/sroce/lib.sh
source "$(dirname "$0")/lib.sh"
sr_require_sroce
command -v ib_write_bw >/dev/null || sr_skip "ib_write_bw missing (perftest)"
[ "$(nproc)" -ge 2 ] || sr_skip "the poller needs a second CPU"
POLL=/sys/module/sroce/parameters/sq_poll_us
if [ ! -w "$POLL" ]; then
	sr_fail "no writable sq_poll_us module parameter"
	sr_done
fi
POLL0=$(cat "$POLL")
sr_on_exit "echo $POLL0 >$POLL"
HANDOFF=/sys/module/sroce/parameters/sq_handoff
if [ ! -w "$HANDOFF" ]; then
	sr_fail "no writable sq_handoff module parameter"
	sr_done
fi
sr_on_exit "echo $(cat "$HANDOFF") >$HANDOFF"
echo N >"$HANDOFF"
ITERS=20000

sr_loopback_setup q 27000

# shellcheck disable=SC2317 # called through sr_check
# stream ITERS [CMD...]: ib_write_bw of 64 B messages in loopback, ITERS
# on each of $QPS QPs (1 unless set), both sides run under CMD if given;
# true when both end well. Counters of $LDEV are snapped before.
stream() {
	local iters=$1 srv ok=0 qps=(-q "${QPS:-1}")
	shift
	PORT=$((PORT + 1))
	sr_snap "$LDEV" sq_doorbell sq_polled sq_poll_yield
	"$@" timeout -k 5 60 ib_write_bw -d "$LDEV" -x "$G" -s 64 "${qps[@]}" \
		-n "$iters" -p "$PORT" -F >"$TMP/srv" 2>&1 &
	srv=$!
	sr_wait_listen "$PORT" "" 60 &&
		"$@" timeout -k 5 60 ib_write_bw -d "$LDEV" -x "$G" -s 64 \
			"${qps[@]}" -n "$iters" -p "$PORT" -F "$L4" \
			>"$TMP/cli" 2>&1 && ok=1
	wait "$srv" || ok=0
	sr_log "$iters writes on ${QPS:-1} QPs: doorbells $(sr_grew "$LDEV" sq_doorbell)," \
		"polled $(sr_grew "$LDEV" sq_polled)," \
		"yields $(sr_grew "$LDEV" sq_poll_yield)"
	[ "$ok" = 1 ] && return 0
	sed 's/^/# client: /' "$TMP/cli"
	sed 's/^/# server: /' "$TMP/srv"
	return 1
}

echo 0 >"$POLL"
sr_check "polling off: $ITERS writes complete" stream $ITERS
sr_check "polling off: a doorbell for most messages" \
	test "$(sr_grew "$LDEV" sq_doorbell)" -gt $((ITERS / 2))
sr_check "polling off: nothing polled" \
	test "$(sr_grew "$LDEV" sq_polled)" -eq 0

echo 50 >"$POLL"
sr_check "polling on: $ITERS writes complete" stream $ITERS
sr_check "polling on: under one doorbell per ten messages" \
	test "$(sr_grew "$LDEV" sq_doorbell)" -lt $((ITERS / 10))
sr_check "polling on: the poller took the posts" \
	test "$(sr_grew "$LDEV" sq_polled)" -gt 0

# shellcheck disable=SC2317 # called through sr_check
# watched_max: the most of the client's QPs (those that posted: the
# server's post nothing, but may be watched too) that one poller (one
# sq_poll_cpu) watched at once, in up to 40 looks at the QPs while a
# stream runs in the background (pid $1).
watched_max() {
	local pid=$1 max=0 n i
	local re='.*comm ib_write_bw.*sq_prod [1-9][0-9]*.*sq_poll_cpu \([0-9]*\).*'
	for ((i = 0; i < 40 && max < 2; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		n=$(taskset -c 0 rdma resource show qp link "$LDEV/1" -dd \
			2>/dev/null | sed -n "s/$re/\1/p" |
			sort | uniq -c | sort -rn | awk 'NR == 1 { print $1 }')
		((${n:-0} > max)) && max=$n
		sleep 0.1
	done
	echo "$max"
}
# The programs and the looks on CPU 0, the poller on CPU 1 undisturbed,
# and a window long enough for a post to come to each ring in turn.
echo 1000 >"$POLL"
QPS=8 stream $ITERS taskset -c 0 &
spid=$!
sleep 1
watched=$(watched_max "$spid")
sr_check "8 QPs: $((ITERS * 8)) writes complete" wait "$spid"
PORT=$((PORT + 1))	# the stream's, in its subshell
echo 50 >"$POLL"
sr_log "8 QPs: at most $watched watched at once by one poller"
sr_check "8 QPs: one poller watched several rings at once" \
	test "$watched" -ge 2

# Busy loops that end by themselves after 2 minutes, should this script
# be killed (a real-time one would keep a timeout process off its CPU).
# shellcheck disable=SC2016 # $SECONDS is the hog's own
HOG_LOOP='while [ \$SECONDS -lt 120 ]; do :; done'
HOG="bash -c \": sq_poll_hog; $HOG_LOOP\""
# Stopped ones (below) take the TERM only once continued.
sr_on_exit "pkill -f sq_poll_hog; pkill -CONT -f sq_poll_hog"
HOGS=()
for ((c = 0; c < $(nproc); c++)); do
	eval "taskset -c $c $HOG &"
	HOGS+=($!)
done
sr_check "every CPU busy: 2000 writes complete" stream 2000
kill "${HOGS[@]}" 2>/dev/null
wait "${HOGS[@]}" 2>/dev/null
pkill -f sq_poll_hog
sr_check "every CPU busy: the poller yielded" \
	test "$(sr_grew "$LDEV" sq_poll_yield)" -gt 0
sr_check "every CPU busy: doorbells took over" \
	test "$(sr_grew "$LDEV" sq_doorbell)" -gt 1000

# A polled stream, then every CPU but the programs' busy: each poll finds
# its CPU taken. For a grace of 2 s after the last poll that took posts,
# the QP backs off (sq_poll_backoff) to one try in 64 drains and no
# further, since a CPU busy for a moment says nothing about later (before,
# it reached one try in 16384 within half a second); past the grace it
# backs off further. The cap holds for every fruitless poll, one that
# found its window closed in a moment the loop left the CPU as well (that
# one went past 6 before: a CI run read 7). Once the CPUs are free the
# stream is polled again. The loops run at nice 19: they take the
# poller's CPU all the same, and leave this script's sampling on time.
# They start before the stream and are stopped at once: continued, they
# take their CPUs in an instant, where a loop still starting (its program
# read from disk) would leave the CPU idle for moments. Samples are placed
# against the last read of sq_polled before one that saw it grow, the
# grace's earliest start; a run with no sample inside the grace (a slow
# machine) is tried again. Under TCG every program this script starts
# costs a good part of a second, hence builtins wherever they do.
YIELD_MAX_BACKOFF=6	# SROCE_SQ_POLL_YIELD_MAX_BACKOFF in sroce_sq.c
GRACE_MS=2000		# SROCE_SQ_POLL_YIELD_GRACE_NS in sroce_sq.c
NCPU=$(nproc)
POLLED=/sys/class/infiniband/$LDEV/ports/1/hw_counters/sq_polled
# now_ms: wall-clock milliseconds, into $now.
now_ms() { now=${EPOCHREALTIME//[!0-9]/}; now=$((now / 1000)); }
# qp_backoff: the highest sq_poll_backoff of the ib_write_bw QPs, into
# $backoff; -1 if none is found.
qp_backoff() {
	local line qps
	backoff=-1
	qps=$(rdma resource show qp link "$LDEV/1" -dd 2>/dev/null)
	while read -r line; do
		[[ $line =~ comm\ ib_write_bw.*sq_poll_backoff\ ([0-9]+) ]] ||
			continue
		((BASH_REMATCH[1] > backoff)) && backoff=${BASH_REMATCH[1]}
	done <<<"$qps"
}
# A busy loop that stops itself before it loops.
STOPPED_HOG="bash -c \": sq_poll_hog; kill -STOP \\\$\\\$; $HOG_LOOP\""
# polled_wait N PAUSE: reads sq_polled up to N times, PAUSE seconds apart,
# until it grew from the first read ($seen) to $polled; $t0 is the time
# before the last read that found it unchanged.
polled_wait() {
	local i
	now_ms
	t0=$now
	read -r seen <"$POLLED"
	for ((i = 0; i < $1; i++)); do
		sleep "$2"
		now_ms
		read -r polled <"$POLLED"
		[ "$polled" != "$seen" ] && return
		t0=$now
	done
}
# stopped PID: has PID stopped (state T)?
stopped() {
	local stat
	read -r stat <"/proc/$1/stat" || return 1
	stat=${stat##*) }
	[ "${stat%% *}" = T ]
}
# grace_run: one polled stream under busy loops; sets early (the highest
# backoff read within the grace), late (after it) and polled_after.
grace_run() {
	local srv cli t0 tc now c h polled seen hogs=()

	early=-1 late=-1 polled_after=0
	for ((c = 1; c < NCPU; c++)); do
		eval "taskset -c $c nice -n 19 $STOPPED_HOG &"
		hogs+=($!)
	done
	for h in "${hogs[@]}"; do
		for _ in $(seq 100); do
			stopped "$h" && break
			sleep 0.1
		done
	done
	PORT=$((PORT + 1))
	timeout -k 5 60 taskset -c 0 ib_write_bw -d "$LDEV" -x "$G" -s 64 \
		-D 14 -p "$PORT" -F >"$TMP/srv" 2>&1 &
	srv=$!
	if ! sr_wait_listen "$PORT" "" 60; then
		sr_fail "ib_write_bw server did not listen"
		sr_kill_tool "$srv"
		kill -CONT "${hogs[@]}"
		kill "${hogs[@]}"
		return 1
	fi
	timeout -k 5 60 taskset -c 0 ib_write_bw -d "$LDEV" -x "$G" -s 64 \
		-D 14 -p "$PORT" -F "$L4" >"$TMP/cli" 2>&1 &
	cli=$!
	sleep 2
	polled_wait 60 0.05
	sr_check "a pinned stream is polled" test "$polled" != "$seen"
	kill -CONT "${hogs[@]}"
	now_ms
	tc=$now
	# Samples up to 3 s past the grace, which ends 2 s after the last
	# poll that took posts, before the loops went on.
	while [ "$now" -lt $((tc + GRACE_MS + 3000)) ] &&
		[ "$late" -le "$YIELD_MAX_BACKOFF" ]; do
		qp_backoff
		now_ms
		# Read before $now: inside the grace if $now is (100 ms to
		# spare for the clocks).
		if [ "$now" -lt $((t0 + GRACE_MS - 100)) ]; then
			[ "$backoff" -gt "$early" ] && early=$backoff
		elif [ "$backoff" -gt "$late" ]; then
			late=$backoff
		fi
		sleep 0.1
		now_ms
	done
	kill "${hogs[@]}" 2>/dev/null
	wait "${hogs[@]}" 2>/dev/null
	pkill -f sq_poll_hog
	# Past the grace the next try may be up to 16384 drains away.
	polled_wait 30 0.2
	polled_after=$((polled - seen))
	sr_log "backoff: within the grace $early, after $late;" \
		"then polled $polled_after"
	sr_check "the stream under busy CPUs completes" wait "$cli"
	wait "$srv" 2>/dev/null
	return 0
}
for try in 1 2 3; do
	grace_run || break
	[ "$early" -gt 0 ] && break
	sr_log "try $try: no backoff read within the grace"
done
sr_check "CPUs busy: the QP backed off within the grace" test "$early" -gt 0
sr_check "CPUs busy, grace: backoff at most $YIELD_MAX_BACKOFF" \
	test "$early" -le "$YIELD_MAX_BACKOFF"
sr_check "CPUs busy past the grace: backoff beyond" \
	test "$late" -gt "$YIELD_MAX_BACKOFF"
sr_check "CPUs free again: the stream is polled" \
	test "$polled_after" -gt 0

RT=/proc/sys/kernel/sched_rt_runtime_us
if command -v chrt >/dev/null && [ -w "$RT" ]; then
	sr_on_exit "echo $(cat "$RT") >$RT"
	echo -1 >"$RT"
	[ -d /sys/kernel/debug/sched ] ||
		mount -t debugfs none /sys/kernel/debug 2>/dev/null
	HOGS=()
	for ((c = 1; c < $(nproc); c++)); do
		# 6.12's deadline server would give the poller 5 % anyway.
		FS=/sys/kernel/debug/sched/fair_server/cpu$c/runtime
		if [ -w "$FS" ]; then
			sr_on_exit "echo $(cat "$FS") >$FS"
			echo 0 >"$FS"
		elif [ -d /sys/kernel/debug/sched/fair_server ]; then
			sr_log "cannot stop cpu$c's fair server: pollers may run"
		fi
		eval "chrt -f 10 taskset -c $c $HOG &"
		HOGS+=($!)
	done
	sr_check "real-time hogs: 2000 writes complete" \
		stream 2000 taskset -c 0
	kill "${HOGS[@]}" 2>/dev/null
	wait "${HOGS[@]}" 2>/dev/null
	pkill -f sq_poll_hog
	sr_check "real-time hogs: the watchdog ended sessions" \
		test "$(sr_grew "$LDEV" sq_poll_yield)" -gt 0
else
	sr_log "no chrt or $RT: real-time case skipped"
fi

# A long poll: each post of rc_verify's request-and-answer steps comes
# while the poller still watches.
echo 10000 >"$POLL"
sr_sroce_ns_pair
if GA=$(sr_gid_index "$DA" "$IP4") && GB=$(sr_gid_index "$DB" "$PEER4"); then
	sr_snap "$DA" sq_polled
	sr_snap "$DB" sq_polled
	sr_check "rc_verify with a 10 ms poll" \
		sr_rc_verify "$TMP/verify" $((PORT + 5)) "$GA" "$GB"
	sr_log "polled: server $(sr_grew "$DA" sq_polled)," \
		"client $(sr_grew "$DB" sq_polled)"
	sr_check "rc_verify: the poller took the client's posts" \
		test "$(sr_grew "$DB" sq_polled)" -gt 0
else
	sr_fail "no GIDs for $IP4 and $PEER4"
fi

# Killed while its poller runs: the QP's destruction stops the poller.
PORT=$((PORT + 6))
timeout -k 5 120 ib_write_bw -d "$LDEV" -x "$G" -s 64 -D 30 -p "$PORT" \
	-F >"$TMP/srv" 2>&1 &
srv=$!
if sr_wait_listen "$PORT" "" 60; then
	sr_snap "$LDEV" sq_polled
	ib_write_bw -d "$LDEV" -x "$G" -s 64 -D 30 -p "$PORT" -F "$L4" \
		>"$TMP/cli" 2>&1 &
	cli=$!
	sleep 4
	sr_check "a long stream is being polled" \
		test "$(sr_grew "$LDEV" sq_polled)" -gt 0
	sr_check "client and server killed" sr_kill_tool "$cli" "$srv"
else
	sr_fail "ib_write_bw server did not listen"
	sr_kill_tool "$srv"
fi
wait 2>/dev/null
sr_check "after the kill: 2000 writes complete" stream 2000
sr_check "after the kill: the poller took posts" \
	test "$(sr_grew "$LDEV" sq_polled)" -gt 0
sr_check "device removed after the kill" rdma link del "$LDEV"
sr_check "device gone" sr_wait_gone "$LDEV"
sr_check "kernel log clean" sr_dmesg_clean
sr_done
