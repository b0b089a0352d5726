#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Congestion control on a shared, shaped link. Two sroce devices on a
# veth (the far one in a netns); the near end's egress is a 50 Mb/s token
# bucket over one FIFO that marks ECN-capable packets Congestion
# Experienced once they have waited 1 ms (fq_codel with a single flow
# queue: its per-flow queues would share the link fairly and let the probe
# past the queue by themselves, hiding what congestion control does).
# Over it, with congestion control on and then off (cc/np_enable and
# cc/rp_enable 0 on both devices):
#  - two RC flows, ib_write_bw of 64 KiB WRITEs, one queue pair each;
#  - a latency probe beside them, ib_write_lat of 64 B, 1000 iterations;
#  - with it on, rc_verify beside them too: every byte of its SENDs,
#    WRITEs, READs and atomics checked.
# First with a deep queue (1000 packets): with congestion control on, CNPs
# are sent and taken and rates cut, the probe's 99th percentile is under
# half of what it is with it off, and the two flows share the link fairly
# (Jain's index of the messages they moved above 0.9). Then with a
# shallow queue (40 packets, less than one flow may have in flight): the
# queue drops packets without congestion control, and under a tenth as
# many with it.
#
# The DCQCN parameters are the tuning page's profile for slow links: the
# published defaults assume a CNP every 50 us, where a queue pair moving a
# few thousand packets a second gets one every millisecond or so, and
# alpha decays between them. All figures are printed.
# shellcheck source=selftests/drivers/sroce/lib.sh
source "$(dirname "$0")/lib.sh"
sr_require_sroce
for t in ib_write_bw ib_write_lat tc; do
	command -v "$t" >/dev/null || sr_skip "$t missing"
done
sr_tool rc_verify >/dev/null || sr_skip "rc_verify not built"
# Slow enough that the link, not the emulated CPUs, limits the flows:
# at 200 Mb/s they moved about 70 Mb/s under TCG, the queue filled only
# in bursts, and the probe's p99 without congestion control was at times
# no worse than with it.
RATE=50mbit
FLOW_SECS=8
# The probe's 99th percentile is its 10th worst: a single burst of the
# flows does not decide it. Without congestion control the 1000 take
# about 3.3 s (a mean of 6.9M cycles at 2.1 GHz), well inside the flows.
PROBE_N=1000

sr_dmesg_mark
LOGS=$(mktemp -d)
sr_on_exit "rm -rf $LOGS"
PORT=$(( 22000 + (SR_TAG % 400) * 10 ))

sr_sroce_ns_pair
sr_check "GID of $IP4 on $DA" sr_wait_gid "$DA" "$IP4"
sr_check "GID of $PEER4 on $DB" sr_wait_gid "$DB" "$PEER4"
GA=$(sr_gid_index "$DA" "$IP4")
GB=$(sr_gid_index "$DB" "$PEER4")

sr_cc_shape "$A" $RATE 1000 ||
	sr_skip "no tbf, or no fq_codel with ce_threshold"

COUNTERS=(tx_cnp rx_cnp cc_rate_cut cc_pace_wait retransmit_timeout
	  seq_nak_received)
# snap: remember the counters of both devices (grew: sr_grew) and the
# queue's drops (DROPS0).
snap() {
	sr_snap "$DA" "${COUNTERS[@]}"
	sr_snap "$DB" "${COUNTERS[@]}"
	DROPS0=$(sr_cc_drops "$A")
}
grew() { sr_grew "$@"; }

# cc_switch 0|1: congestion control off or on, on both devices.
cc_switch() {
	local d k
	for d in "$DA" "$DB"; do
		for k in np_enable rp_enable; do
			echo "$1" >"/sys/class/infiniband/$d/cc/$k"
		done
	done
}
sr_on_exit "cc_switch 1"

# Perftest converts CPU cycles to time with a clock rate that it often
# fails to measure under emulation (printing 0.00 or inf), so this test
# uses what needs no rate: messages completed in the flows' fixed time,
# and the probe's latency in cycles (-C). Both are compared only with
# each other.
# msgs FILE: messages ib_write_bw completed (its 2nd column).
msgs() { awk '/^ *65536 +[0-9]+ /{ print $2 }' "$1"; }
# p99 FILE: ib_write_lat's 99th percentile, in cycles.
p99() { awk '/^ *64 +[0-9]+ /{ print $8 }' "$1"; }

# run TAG: the two flows (for SECS seconds, default FLOW_SECS), the probe
# and (with VERIFY=1) rc_verify, all with the local ACK timeout QP_TIMEOUT
# (perftest's -u). Sets P99[TAG], JAIN[TAG], DROPS[TAG] and MSGS[TAG]
# (both flows' messages).
declare -A P99 JAIN DROPS MSGS
run() {
	local tag=$1 i pids=() spids=() port ok=1 b1 b2 secs=${SECS:-$FLOW_SECS}
	local tmo=(-u "$QP_TIMEOUT") rc
	local -A name
	snap
	for i in 1 2; do
		port=$((PORT + i))
		ip netns exec "$NS" timeout -k 5 120 ib_write_bw -d "$DB" \
			-x "$GB" -p $port -D "$secs" -s 65536 -F "${tmo[@]}" \
			>"$LOGS/$tag.flow$i.server" 2>&1 &
		spids+=($!) name[$!]=flow$i.server
	done
	port=$((PORT + 3))
	ip netns exec "$NS" timeout -k 5 120 ib_write_lat -d "$DB" -x "$GB" \
		-p $port -s 64 -n "$PROBE_N" -F -C "${tmo[@]}" \
		>"$LOGS/$tag.probe.server" 2>&1 &
	spids+=($!) name[$!]=probe.server
	for i in 1 2 3; do
		sr_wait_listen $((PORT + i)) "$NS" 60 || ok=0
	done
	for i in 1 2; do
		timeout -k 5 120 ib_write_bw -d "$DA" -x "$GA" -p $((PORT + i)) \
			-D "$secs" -s 65536 -F "${tmo[@]}" "$PEER4" \
			>"$LOGS/$tag.flow$i" 2>&1 &
		pids+=($!) name[$!]=flow$i
	done
	# The probe once the flows have filled the queue.
	sleep 2
	timeout -k 5 120 ib_write_lat -d "$DA" -x "$GA" -p $((PORT + 3)) \
		-s 64 -n "$PROBE_N" -F -C "${tmo[@]}" "$PEER4" \
		>"$LOGS/$tag.probe" 2>&1 || { rc=$?; ok=0
		sr_log "$tag: probe exited with $rc"; }
	if [ "${VERIFY:-0}" = 1 ]; then
		sr_check "$tag: rc_verify beside the flows" \
			sr_rc_verify "$LOGS/$tag.verify" $((PORT + 4)) "$GA" "$GB"
	fi
	for i in "${pids[@]}" "${spids[@]}"; do
		wait "$i" && continue
		rc=$?
		sr_log "$tag: ${name[$i]} exited with $rc"
		ok=0
	done
	# Without congestion control over a shallow queue, go-back-N may not
	# get the flows through: that is what is measured, not a failure.
	[ "${MAY_FAIL:-0}" = 1 ] || sr_check "$tag: the flows and the probe ran" test $ok = 1
	if [ $ok != 1 ]; then
		for i in "$LOGS/$tag".*; do
			sed "s|^|# $(basename "$i"): |" "$i" | tail -n 15
		done
	fi
	for i in "$LOGS/$tag".flow[12] "$LOGS/$tag".probe; do
		grep -E '^ *(65536|64) +[0-9]+ ' "$i" |
			sed "s|^|# $(basename "$i"): |"
	done
	b1=$(msgs "$LOGS/$tag.flow1") b2=$(msgs "$LOGS/$tag.flow2")
	P99[$tag]=$(p99 "$LOGS/$tag.probe")
	MSGS[$tag]=$(( ${b1:-0} + ${b2:-0} ))
	JAIN[$tag]=$(awk -v a="${b1:-0}" -v b="${b2:-0}" \
		'BEGIN { s = a + b; q = a * a + b * b
			 printf "%.3f", (q > 0 ? s * s / (2 * q) : 0) }')
	DROPS[$tag]=$(( $(sr_cc_drops "$A") - DROPS0 ))
	sr_log "$tag: flows $b1 and $b2 messages (Jain ${JAIN[$tag]})," \
		"probe p99 ${P99[$tag]} cycles, queue drops ${DROPS[$tag]}; $DA: cc_rate_cut +$(grew "$DA" cc_rate_cut)" \
		"cc_pace_wait +$(grew "$DA" cc_pace_wait)" \
		"rx_cnp +$(grew "$DA" rx_cnp)" \
		"retransmit_timeout +$(grew "$DA" retransmit_timeout)" \
		"seq_nak_received +$(grew "$DA" seq_nak_received);" \
		"$DB: tx_cnp +$(grew "$DB" tx_cnp)"
}

PARAMS=/sys/module/sroce/parameters
for p in $SR_CC_SLOW_LINK; do
	sr_on_exit "echo $(cat "$PARAMS/${p%%=*}") > $PARAMS/${p%%=*}"
	echo "${p#*=}" >"$PARAMS/${p%%=*}"
done

# The deep queue holds 1000 packets of 4 KiB, 0.67 s at 50 Mb/s: the
# local ACK timeout is 1 s (-u 18), above any wait in it. With perftest's
# 67 ms (-u 14) the flows without congestion control, whose packets wait
# up to 80 ms, timed out some 75 times a run, each timeout resending the
# window into the same queue; now and then a queue pair ran out of
# retries, which measured the retry count, not congestion control. The
# shallow queue keeps the default: its drops are what is measured there.
QP_TIMEOUT=18
cc_switch 1
VERIFY=1 run on
sr_check "on: $DB sent CNPs" test "$(grew "$DB" tx_cnp)" -gt 0
sr_check "on: $DA took them" test "$(grew "$DA" rx_cnp)" -gt 0
sr_check "on: and cut its rates" test "$(grew "$DA" cc_rate_cut)" -gt 0
cc_switch 0
run off
sr_check "off: no CNP" test "$(grew "$DB" tx_cnp)" = 0
sr_check "probe p99 with congestion control under half of without" \
	awk -v on="${P99[on]}" -v off="${P99[off]}" \
	'BEGIN { exit !(on > 0 && off > 0 && 2 * on < off) }'
sr_check "the two flows share the link fairly (Jain > 0.9)" \
	awk -v j="${JAIN[on]}" 'BEGIN { exit !(j > 0.9) }'
# Rates cut to nothing would pass the checks above on an idle link.
sr_check "and use it: at least half the messages moved without it" \
	test "$((2 * MSGS[on]))" -ge "${MSGS[off]}" -a "${MSGS[off]}" -gt 0

sr_check "a queue of 40 packets" sr_cc_shape "$A" $RATE 40
QP_TIMEOUT=14
cc_switch 1
SECS=5 run shallow_on
cc_switch 0
SECS=5 MAY_FAIL=1 run shallow_off
tc -s qdisc show dev "$A" | sed 's/^/# /'
sr_check "the shallow queue dropped without congestion control" \
	test "${DROPS[shallow_off]}" -gt 0
sr_check "and under a tenth of that with it" \
	test "$((10 * DROPS[shallow_on]))" -lt "${DROPS[shallow_off]}"
sr_check "kernel log clean" sr_dmesg_clean
sr_done
