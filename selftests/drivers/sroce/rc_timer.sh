#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The requester's timer is not armed for every message. Each RC message
# needs the tail-loss probe's timer while it is unacknowledged; arming it
# for every message and cancelling it at every ACK reprograms the CPU's
# timer twice per message, which under a hypervisor costs more than a
# small message's whole trip. All acknowledged, sroce leaves a probe
# timer queued to expire with nothing to do, and the messages sent until
# then need not arm it. On a loopback device, a 2-byte ib_write_lat
# ping-pong and a 64-byte ib_write_bw stream (each message a few tens of
# microseconds, the probe's timeout at least 10 ms) must arm the timer
# (hrtimer_start of sroce_comp_timer, from a tracefs instance of the
# test's own) for at most a quarter of their messages; the module that
# cancelled at every ACK armed it once per message or more. That the
# probe still recovers lost tails is rc_tail_loss.sh's part.
# shellcheck source=selftests/drivers/sroce/lib.sh
source "$(dirname "$0")/lib.sh"
sr_require_sroce
command -v ib_write_lat >/dev/null || sr_skip "perftest missing"
sr_dmesg_mark
TMP=$(mktemp -d)
sr_on_exit "rm -rf $TMP"
PORT=$(( 24000 + (SR_TAG % 400) * 10 ))
sr_tracefs
[ -d "$TRACEFS/events/timer/hrtimer_start" ] || sr_skip "no hrtimer events"

DEV=sroce_tm$SR_TAG NET=srtm$SR_TAG ADDR=198.18.$(( SR_TAG % 250 + 1 )).1
sr_loopback_link "$DEV" "$NET" "$ADDR"
GID=$(sr_gid_index "$DEV" "$ADDR") || sr_fail "no GID of $ADDR"
sr_trace_instance "sroce_tm$SR_TAG"

# run NAME TOOL ARGS...: TOOL's server and client on $DEV, with the
# hrtimer_start events recorded; sets ARMS, those of sroce_comp_timer.
run() {
	local name=$1 tool=$2 spid st=0
	shift 2
	PORT=$((PORT + 1))
	"$tool" -d "$DEV" -x "$GID" -F -p "$PORT" "$@" >"$TMP/$name.srv" 2>&1 &
	spid=$!
	sleep 1
	echo >"$INST/trace"
	echo 1 >"$INST/events/timer/hrtimer_start/enable"
	timeout -k 5 120 "$tool" -d "$DEV" -x "$GID" -F -p "$PORT" "$@" \
		"$ADDR" >"$TMP/$name.cli" 2>&1 || st=1
	echo 0 >"$INST/events/timer/hrtimer_start/enable"
	wait "$spid" || st=1
	sr_check "$name ran" test "$st" = 0
	[ "$st" = 0 ] || sed 's/^/# /' "$TMP/$name.cli" "$TMP/$name.srv"
	ARMS=$(grep -c "function=sroce_comp_timer" "$INST/trace")
	sr_check "$name: no trace event lost" test "$(sr_trace_overrun)" = 0
}

run lat ib_write_lat -s 2 -n 2000
# Both sides write: 2000 messages each.
sr_log "ib_write_lat: timer armed $ARMS times for 4000 messages"
sr_check "ib_write_lat: timer armed, for at most a quarter of the messages" \
	test "$ARMS" -gt 0 -a "$ARMS" -le 1000
run bw ib_write_bw -s 64 -n 8000
sr_log "ib_write_bw: timer armed $ARMS times for 8000 messages"
sr_check "ib_write_bw: timer armed, for at most a quarter of the messages" \
	test "$ARMS" -gt 0 -a "$ARMS" -le 2000
sr_check "kernel log clean" sr_dmesg_clean
sr_done
