#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Hostile packets: roce_fuzz.py sends mutated RoCEv2 frames (bad ICRC,
# truncated and oversized headers, unknown opcodes, reserved bits, PSNs
# in and out of the window, overflowing lengths and addresses, bad pad
# counts) at live RC QPs of an sroce device, at destroyed ones and at
# random QP numbers, while rc_verify runs checked RC traffic between
# that device and a second one over the same link.
#
# Then: the kernel log is clean; the verified traffic never failed; every
# frame the device took is accounted for (rx_roce_packets equals the
# receive-path drop counters plus rx_qp_packets); every frame sent with a
# broken ICRC was counted as such; and the device still works.
# SR_FUZZ_COUNT (default 20000) and SR_FUZZ_SECONDS (default 150) bound
# the run; SR_FUZZ_SEED picks the sequence (default: the test's tag).
# shellcheck source=selftests/drivers/sroce/lib.sh
source "$(dirname "$0")/lib.sh"
sr_require_sroce
command -v python3 >/dev/null || sr_skip "python3 missing"
sr_tool sroce_target >/dev/null || sr_skip "sroce_target not built"
sr_tool rc_verify >/dev/null || sr_skip "rc_verify not built"
COUNT=${SR_FUZZ_COUNT:-20000}
SECONDS_MAX=${SR_FUZZ_SECONDS:-150}
SEED=${SR_FUZZ_SEED:-$SR_TAG}

sr_dmesg_mark
sr_sroce_ns_pair
MAC=$(cat "/sys/class/net/$A/address")
GA=$(sr_gid_index "$DA" "$IP4" 20) || sr_fail "no GID on $DA"
GB=$(sr_gid_index "$DB" "$PEER4" 20) || sr_fail "no GID on $DB"

sr_target_start "$DA" "$IP4" "$PEER4" || sr_fail "sroce_target did not start"

# Eight live QPs with every remote right, two destroyed ones.
live=() dead=()
for i in $(seq 0 9); do
	read -r kind idx qpn _ <<<"$(tgt qp 14 15 $((0x200 + i)))"
	[ "$kind" = qp ] || { sr_fail "target QP $i"; continue; }
	if [ "$i" -ge 8 ]; then
		tgt destroy "$idx" >/dev/null
		dead+=("$qpn")
	else
		live+=("$qpn")
	fi
done
live_csv=$(IFS=,; echo "${live[*]}")
dead_csv=$(IFS=,; echo "${dead[*]}")

COUNTERS="rx_roce_packets rx_drop_malformed rx_drop_bad_opcode rx_drop_bad_pkey rx_drop_bad_icrc rx_drop_no_qp rx_drop_wrong_peer rx_qp_packets"
declare -A before after
for c in $COUNTERS; do before[$c]=$(sr_counter "$DA" "$c"); done

LOGS=$(mktemp -d)
sr_on_exit "rm -rf $LOGS"
# Checked traffic, again and again, for as long as the fuzzer runs.
: >"$LOGS/fuzzing"
(
	n=0 bad=0
	while [ -e "$LOGS/fuzzing" ] && [ $n -lt 200 ]; do
		n=$((n + 1))
		sr_rc_verify "$LOGS/v$n" 18611 "$GA" "$GB" || bad=$((bad + 1))
	done
	echo "$n $bad" >"$LOGS/verify.result"
) &
vpid=$!

ip netns exec "$NS" python3 "$SR_DIR/roce_fuzz.py" "$B" "$MAC" "$PEER4" \
	"$IP4" --qpns "$live_csv" --dead-qpns "$dead_csv" --count "$COUNT" \
	--seconds "$SECONDS_MAX" --seed "$SEED" >"$LOGS/fuzz.out" 2>&1
frc=$?
rm -f "$LOGS/fuzzing"
wait $vpid
sed 's/^/# /' "$LOGS/fuzz.out"
sr_check "fuzzer ran" test $frc = 0
read -r _ sent _ bad_icrc <"$LOGS/fuzz.out"
read -r vruns vbad <"$LOGS/verify.result"
sr_log "rc_verify ran $vruns times during the fuzzing, $vbad failed"
sr_check "checked traffic unaffected ($vruns runs)" \
	test "${vruns:-0}" -ge 1 -a "${vbad:-1}" = 0

sleep 1
for c in $COUNTERS; do after[$c]=$(( $(sr_counter "$DA" "$c") - before[$c] )); done
sr_log "fuzz frames sent: $sent ($bad_icrc with a broken ICRC)"
for c in $COUNTERS; do sr_log "  $c +${after[$c]}"; done
sum=0
for c in $COUNTERS; do
	[ "$c" = rx_roce_packets ] || sum=$((sum + after[$c]))
done
sr_check "every frame taken is accounted for (${after[rx_roce_packets]} = $sum)" \
	test "${after[rx_roce_packets]}" = "$sum"
sr_check "all $sent fuzz frames reached the device" \
	test "${after[rx_roce_packets]}" -ge "${sent:-1}"
sr_check "each broken ICRC counted ($bad_icrc)" \
	test "${after[rx_drop_bad_icrc]}" = "${bad_icrc:-x}"
if kill -0 "$TGT_PID" 2>/dev/null; then
	ans=$(tgt state 0)
	sr_log "target QP 0: $ans"
	sr_check "target QPs still answer queries" test "${ans%% *}" = state
	sr_check "nothing written outside the target regions" \
		test "$(tgt guards)" = "guards ok"
else
	wait "$TGT_PID"
	sr_fail "sroce_target exited during the fuzzing (status $?)"
	sed 's/^/#   /' "$SR_TARGET_ERR"
fi
sr_check "checked traffic still works afterwards" \
	sr_rc_verify "$LOGS/final" 18611 "$GA" "$GB"
sr_check "kernel log clean" sr_dmesg_clean
sr_done
