#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Recovery inside one device. Between two queue pairs of one device,
# packets never touch a link, and SENDs, WRITEs and READ responses go as
# units that stand for several PSNs; the loop loses nothing until a
# queue is full, so only the lo_drop_every knob (drop every Nth packet a
# loop queue is given) makes it lose packets: units, single packets,
# requests and ACKs alike. With it at 5, 7, 17 and 19, rc_ops's data
# tests at path MTU 256 (units of 32 MTUs) and rc_verify at 4096 (units
# of 15: 512 KiB reads, 256 KiB writes, SENDs to 64 KiB) must pass, every
# byte checked, and the counters must show units lost and recovered from:
# resends (sequence NAK, probe or timeout), read responses held past a
# lost one and reads asked again at the gap. Then, the knob off, the
# same runs drop, hold and resend nothing: a unit taken for fewer PSNs
# than it stands for would show there as responses held and reads asked
# again. Four periods, because a fault may need one that meets the
# resends' lengths: when a timeout sent the whole window again, the same
# packet could be lost at every try, and rc_ops's multi_sge failed 8 of
# 66 runs at these and 11 and 23 (0 of 66 since only one packet goes
# after a timeout).
# shellcheck source=selftests/drivers/sroce/lib.sh
source "$(dirname "$0")/lib.sh"
sr_require_sroce
RC_OPS=$(sr_tool rc_ops) || sr_skip "rc_ops not built"
VERIFY=$(sr_tool rc_verify) || sr_skip "rc_verify not built"
command -v ibv_devinfo >/dev/null || sr_skip "ibv_devinfo missing"
PARAM=/sys/module/sroce/parameters/lo_drop_every
[ -w "$PARAM" ] || sr_skip "no lo_drop_every parameter"
sr_on_exit "echo 0 > $PARAM"

sr_dmesg_mark
TMP=$(mktemp -d)
sr_on_exit "rm -rf $TMP"
n=$(( SR_TAG % 250 + 1 ))
DEV=sroce_ll$SR_TAG
L=sr${SR_TAG}ll
ADDR=198.19.$n.1
PORT=$(( 23000 + (SR_TAG % 400) * 10 ))
sr_loopback_link "$DEV" "$L" "$ADDR"
G=$(sr_gid_index "$DEV" "$ADDR") || sr_fail "no GID of $ADDR on $DEV"

COUNTERS="tx_drop tx_local_units seq_nak_received tlp_probe retransmit_timeout read_resp_held read_gap_reask rx_duplicate_request"

# runs DESCRIPTION: rc_ops's data tests and rc_verify over $DEV.
runs() {
	local spid src=0 crc
	sr_check "$1: rc_ops at path MTU 256" sr_run_indented \
		timeout -k 10 300 env SROCE_DEV_A="$DEV" SROCE_GID_A="$G" \
		SROCE_MTU=256 "$RC_OPS" -t send -t rdma_write \
		-t rdma_write_with_imm -t rdma_read -t multi_sge \
		-t many_mtus_odd_length -t psn_wrap
	PORT=$((PORT + 1))
	timeout -k 5 300 "$VERIFY" server "$DEV" "$G" "$PORT" \
		>"$TMP/srv" 2>&1 &
	spid=$!
	sr_wait_listen "$PORT" "" 30 || sr_log "$1: rc_verify server not listening"
	timeout -k 5 300 "$VERIFY" client "$DEV" "$G" "$ADDR" "$PORT" \
		>"$TMP/cli" 2>&1
	crc=$?
	wait "$spid" || src=$?
	if [ "$src" != 0 ] || [ "$crc" != 0 ]; then
		sed 's/^/# rc_verify server: /' "$TMP/srv"
		sed 's/^/# rc_verify client: /' "$TMP/cli"
	fi
	sr_check "$1: rc_verify, every byte checked" \
		test "$src" = 0 -a "$crc" = 0
}

# measure DESCRIPTION: runs, then each counter's growth in grew[].
declare -A grew
measure() {
	local c line t0
	sr_snap "$DEV" $COUNTERS
	t0=$(date +%s%N)
	runs "$1"
	line="$1: $(( ($(date +%s%N) - t0) / 1000000 )) ms"
	for c in $COUNTERS; do
		grew[$c]=$(sr_grew "$DEV" "$c")
		line="$line $c +${grew[$c]}"
	done
	sr_log "$line"
}

declare -A total
for every in 5 7 17 19; do
	echo "$every" >"$PARAM"
	measure "drop every $every"
	for c in $COUNTERS; do
		total[$c]=$(( ${total[$c]:-0} + grew[$c] ))
	done
	sr_check "drop every $every: the loop dropped packets" \
		test "${grew[tx_drop]}" -gt 0
	sr_check "drop every $every: units went" \
		test "${grew[tx_local_units]}" -gt 0
done
sr_check "lost packets were sent again" \
	test $(( total[seq_nak_received] + total[tlp_probe] +
		 total[retransmit_timeout] )) -gt 0
sr_check "read responses past a lost one were held" \
	test "${total[read_resp_held]}" -gt 0
sr_check "reads were asked again at the gap" \
	test "${total[read_gap_reask]}" -gt 0
sr_check "duplicate requests were answered" \
	test "${total[rx_duplicate_request]}" -gt 0

echo 0 >"$PARAM"
measure "no drops"
sr_check "no drops: nothing dropped, held or sent again" \
	test $(( grew[tx_drop] + grew[seq_nak_received] + grew[tlp_probe] +
		 grew[retransmit_timeout] + grew[read_resp_held] +
		 grew[read_gap_reask] + grew[rx_duplicate_request] )) = 0
sr_check "kernel log clean" sr_dmesg_clean
sr_done
