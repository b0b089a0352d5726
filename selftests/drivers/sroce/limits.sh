#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Limits. With the module loaded with small object limits (max_qp,
# max_cq, max_mr, max_ah, max_pd), query_device reports them and user
# space gets each limit less the share kept for kernel consumers (an
# eighth, at least 16 or half), then ENOMEM; freeing one makes room for
# one. A user who takes all it may (sroce_limits hog) leaves the kernel
# its share: NVMe over Fabrics still connects through the RDMA CM and
# moves data. Ring memory is charged: a process in a memory cgroup, or
# under RLIMIT_MEMLOCK without CAP_IPC_LOCK, cannot make the kernel hold
# more ring memory than either allows. Memory keys do
# not come back within 13000 registrations and are not a counter. Without
# CAP_IPC_LOCK, RLIMIT_MEMLOCK bounds the pages regions pin, and
# deregistering gives the allowance back. Then a stress run: stress
# (thousands of QPs in loopback pairs, mixed operations, every byte
# checked) for a bounded time with the default limits.
# SR_STRESS_PAIRS (default 1000) and SR_STRESS_SECS (default 30).
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
sr_check "module loads with limits" \
	modprobe sroce max_qp=40 max_cq=20 max_mr=512 max_ah=64 max_pd=32
sr_on_exit "rmmod sroce; modprobe sroce"
sr_ns_pair || sr_skip "cannot build the veth/netns topology"
DEV=sroce_lim$SR_TAG
sr_link_add "$DEV" "$A" || sr_fail "rdma link add"
sr_wait_gid "$DEV" "$IP4"

sr_check "query_device reports the limits" \
	test "$("$LIM" "$DEV" attrs)" = "max_qp 40 max_cq 20 max_mr 512"
# kernel COUNTER: objects the kernel itself holds on the device.
kernel() {
	rdma resource show 2>/dev/null | awk -v d="$DEV:" -v k="$1" \
		'$2 == d { for (i = 3; i < NF; i++) if ($i == k) print $(i + 1) }'
}
# user_share MAX: what user space may hold of a limit MAX.
user_share() {
	local share=$(($1 / 8)) floor=$(($1 / 2 < 16 ? $1 / 2 : 16))
	echo $(($1 - (share > floor ? share : floor)))
}
# limit KIND MAX EXTRA: made + EXTRA (the helper's own CQ) must be exactly
# the user share of MAX (the kernel's own objects do not count against
# it), the next refused with ENOMEM (12), and one more made after one was
# freed.
limit() {
	local kind=$1 max=$2 extra=$3 own out made err
	own=$(kernel "$kind")
	out=$("$LIM" "$DEV" "$kind")
	read -r _ made _ err <<<"$(head -1 <<<"$out")"
	sr_log "$kind: kernel's own $own, made $made, then errno $err; $(tail -1 <<<"$out")"
	sr_check "$kind: user share $(user_share "$max") of $max enforced" \
		test $((made + extra)) = "$(user_share "$max")" -a "$err" = 12
	sr_check "$kind: a freed one makes room" \
		test "$(tail -1 <<<"$out")" = "again made"
}
limit qp 40 0
limit cq 20 1
limit mr 512 0

# The kernel's share: a user holds all it may of everything while NVMe over
# Fabrics (kernel QPs, CQs, fast-register MRs, and the RDMA CM's MADs with
# their kernel AHs) connects over the same device and moves data.
if (sr_nvmeof_require) >/dev/null 2>&1; then
	sr_nvmeof_require
	coproc HOG { "$LIM" "$DEV" hog; }
	read -r -t 120 hogged <&"${HOG[0]}"
	sr_log "one user took: $hogged"
	sr_check "the user got every user share" test "$hogged" = \
		"hog cq $(($(user_share 20) - 1)) qp $(user_share 40) mr $(user_share 512) ah $(user_share 64) pd $(($(user_share 32) - 1))"
	NQN=nqn.2026-11.sroce:limits$SR_TAG
	sr_nvmet_export "$IP4" 4420 "$NQN" $((900 + SR_TAG % 90)) ||
		sr_fail "nvmet export"
	sr_check "NVMe-oF connects beside the user (1 I/O queue of 16)" \
		sr_nvme_connect "$IP4" 4420 "$NQN" -i 1 -Q 16
	if [ -b "$BDEV" ]; then
		data=$(mktemp)
		sr_on_exit "rm -f $data"
		dd if=/dev/urandom of="$data" bs=1M count=4 status=none
		sr_check "NVMe-oF: 4 MiB written and read back intact" sh -c \
			"dd if=$data of=$BDEV bs=1M oflag=direct status=none &&
			 cmp -n 4194304 $data $BDEV"
	fi
	nvme disconnect -n "$NQN" >/dev/null 2>&1
	echo "let go" >&"${HOG[1]}"
	wait "$HOG_PID"
	sr_check "the user let go of all of it" test $? = 0
else
	sr_log "NVMe over Fabrics not available: kernel share check skipped"
fi

# Ring memory is charged to the memory cgroup and to RLIMIT_MEMLOCK.
CG=/sys/fs/cgroup
[ -e $CG/cgroup.controllers ] || mount -t cgroup2 none $CG
if grep -qw memory $CG/cgroup.controllers 2>/dev/null; then
	echo +memory >$CG/cgroup.subtree_control 2>/dev/null
	mkdir -p "$CG/sroce$SR_TAG"
	sr_on_exit "rmdir $CG/sroce$SR_TAG"
	echo 16M >"$CG/sroce$SR_TAG/memory.max"
	out=$(sh -c 'echo $$ >"$1/cgroup.procs" && exec "$2" "$3" rings 100' \
		- "$CG/sroce$SR_TAG" "$LIM" "$DEV")
	sr_log "memory cgroup of 16 MiB, CQs of 2 MiB: $out"
	read -r _ _ made _ bytes _ err <<<"$out"
	sr_check "memory cgroup: ring memory stops at its 16 MiB (ENOMEM)" \
		test "${bytes:-0}" -le $((16 << 20)) -a "${made:-0}" -gt 0 -a "$err" = 12
else
	sr_log "no memory cgroup controller: cgroup check skipped"
fi
out=$(ulimit -l 4096 && setpriv --inh-caps=-ipc_lock --bounding-set=-ipc_lock \
	"$LIM" "$DEV" rings 100)
sr_log "RLIMIT_MEMLOCK 4 MiB, CQs of 2 MiB: $out"
read -r _ _ made _ bytes _ err <<<"$out"
sr_check "RLIMIT_MEMLOCK: ring memory stops at 4 MiB (ENOMEM)" \
	test "${bytes:-0}" -le $((4 << 20)) -a "${made:-0}" -gt 0 -a "$err" = 12

# Keys: a table index that cycled over max_mr slots and a key byte
# counting up would hand a key out again within max_mr * 256
# registrations (max_mr 50 did in 6400), each the last one's plus one.
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
	SROCE_STRESS_SECS="${SR_STRESS_SECS:-30}" "$STRESS"
sr_check "kernel log clean" sr_dmesg_clean
sr_done
