#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Limits. With the module loaded with small object limits (max_qp,
# max_cq, max_mr), query_device reports them and the device refuses the
# object beyond each with ENOMEM, counting the kernel's own (the MAD
# layer's QP1 and CQ); freeing one makes room for one. Memory keys do
# not come back within 13000 registrations and are not a counter. Without
# CAP_IPC_LOCK, RLIMIT_MEMLOCK bounds the pages regions pin, and
# deregistering gives the allowance back. Then a stress run: stress
# (thousands of QPs in loopback pairs, mixed operations, every byte
# checked) for a bounded time with the default limits.
# SR_STRESS_PAIRS (default 1000) and SR_STRESS_SECS (default 60).
# shellcheck source=selftests/drivers/sroce/lib.sh
source "$(dirname "$0")/lib.sh"
sr_require_sroce
LIM=$(sr_tool sroce_limits) || sr_skip "sroce_limits not built"
STRESS=$(sr_tool stress) || sr_skip "stress not built"
command -v setpriv >/dev/null || sr_skip "setpriv missing"
sr_dmesg_mark

# Only devices of this test exist while the module is reloaded.
compgen -G "/sys/class/infiniband/sroce*" >/dev/null &&
	sr_skip "other sroce devices exist"
sr_check "module unloads" rmmod sroce
sr_check "module loads with limits" modprobe sroce max_qp=40 max_cq=20 max_mr=50
sr_on_exit "rmmod sroce; modprobe sroce"
sr_ns_pair || sr_skip "cannot build the veth/netns topology"
DEV=sroce_lim$SR_TAG
sr_link_add "$DEV" "$A" || sr_fail "rdma link add"
sr_wait_gid "$DEV" "$IP4"

sr_check "query_device reports the limits" \
	test "$("$LIM" "$DEV" attrs)" = "max_qp 40 max_cq 20 max_mr 50"
# kernel COUNTER: objects the kernel itself holds on the device.
kernel() {
	rdma resource show 2>/dev/null | awk -v d="$DEV:" -v k="$1" \
		'$2 == d { for (i = 3; i < NF; i++) if ($i == k) print $(i + 1) }'
}
# limit KIND MAX EXTRA: made + the kernel's own + EXTRA (the helper's own
# CQ) must be exactly MAX, the next refused with ENOMEM (12), and one
# more made after one was freed.
limit() {
	local kind=$1 max=$2 extra=$3 own out made err
	own=$(kernel "$kind")
	out=$("$LIM" "$DEV" "$kind")
	read -r _ made _ err <<<"$(head -1 <<<"$out")"
	sr_log "$kind: kernel's own $own, made $made, then errno $err; $(tail -1 <<<"$out")"
	sr_check "$kind limit $max enforced" \
		test $((made + own + extra)) = "$max" -a "$err" = 12
	sr_check "$kind: a freed one makes room" \
		test "$(tail -1 <<<"$out")" = "again made"
}
limit qp 40 0
limit cq 20 1
limit mr 50 0

# Keys: with max_mr 50, a table index that cycled over 50 slots and a
# key byte counting up would hand a key out again within 50 * 256
# registrations, each the last one's plus one.
out=$("$LIM" "$DEV" keys 13000)
sr_log "13000 registrations one after another: $out"
read -r _ _ _ repeated _ stepped <<<"$out"
sr_check "no memory key handed out twice in 13000 registrations" \
	test "${repeated:-x}" = 0
sr_check "key bytes do not count up (fewer than 1 in 20 steps of one)" \
	test "${stepped:-13000}" -lt 650

# RLIMIT_MEMLOCK: 256 KiB, without CAP_IPC_LOCK; regions of 96 KiB.
out=$(ulimit -l 256 && setpriv --inh-caps=-ipc_lock --bounding-set=-ipc_lock \
	"$LIM" "$DEV" memlock 96)
sr_log "memlock 256 KiB, 96 KiB regions: $(echo "$out" | tr '\n' ' ')"
sr_check "RLIMIT_MEMLOCK: the third 96 KiB region refused (ENOMEM)" \
	test "$(head -1 <<<"$out")" = "made 2 errno 12"
sr_check "RLIMIT_MEMLOCK: deregistering gives the pages back" \
	test "$(tail -1 <<<"$out")" = "again made"
out=$(ulimit -l 256 && "$LIM" "$DEV" memlock 96 | head -1)
sr_check "CAP_IPC_LOCK lifts RLIMIT_MEMLOCK" test "${out%% *}" = made -a \
	"$(echo "$out" | cut -d' ' -f2)" -gt 2

# Stress with the default limits.
sr_cleanup
sr_check "module reloads with default limits" sh -c "rmmod sroce; modprobe sroce"
sr_ns_pair || sr_skip "cannot build the veth/netns topology"
sr_link_add "$DEV" "$A" || sr_fail "rdma link add"
sr_wait_gid "$DEV" "$IP4"
sr_check "stress: ${SR_STRESS_PAIRS:-1000} QP pairs, mixed operations" \
	sr_run_indented timeout -k 10 600 env SROCE_DEV="$DEV" \
	SROCE_STRESS_PAIRS="${SR_STRESS_PAIRS:-1000}" \
	SROCE_STRESS_SECS="${SR_STRESS_SECS:-60}" "$STRESS"
sr_check "kernel log clean" sr_dmesg_clean
sr_done
