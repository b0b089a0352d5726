#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Verbs fuzzing: verbs_fuzz runs random sequences of verbs calls with
# random attributes, and raw uverbs commands with random driver data, from
# four processes at once against one device, then half of them exit
# without cleaning up. The kernel log must stay clean, the device must
# still carry an RC WRITE and READ, and once the device is deleted the
# module must unload (nothing left holding it).
# SR_VERBS_FUZZ_SECS (default 45) and SR_VERBS_FUZZ_SEED (default: time;
# the log shows it, and the same seed replays the same calls).
# shellcheck source=selftests/drivers/sroce/lib.sh
source "$(dirname "$0")/lib.sh"
sr_require_sroce
FUZZ=$(sr_tool verbs_fuzz) || sr_skip "verbs_fuzz not built"
RC_OPS=$(sr_tool rc_ops) || sr_skip "rc_ops not built"
SECS=${SR_VERBS_FUZZ_SECS:-45}
SEED=${SR_VERBS_FUZZ_SEED:-$(date +%s)}
sr_dmesg_mark
sr_ns_pair || sr_skip "cannot build the veth/netns topology"
DEV=sroce_vf$SR_TAG
sr_link_add "$DEV" "$A" || sr_fail "rdma link add"
sr_wait_gid "$DEV" "$IP4" || sr_fail "IPv4 GID never appeared"

sr_log "seed $SEED"
sr_check "4 processes, $SECS s of random verbs and raw commands" \
	sr_run_indented timeout -k 10 $((SECS + 120)) \
	"$FUZZ" "$DEV" "$SECS" 4 "$SEED"
sr_log "counters after the fuzzing: $(cd "/sys/class/infiniband/$DEV/ports/1/hw_counters" &&
	grep -v '^0$' -- * 2>/dev/null | tr '\n' ' ')"
sr_check "the device still carries RC WRITE and READ" \
	sr_run_indented env SROCE_DEV_A="$DEV" "$RC_OPS" -t rdma_write \
	-t rdma_read
sr_check "kernel log clean" sr_dmesg_clean
sr_check "device deleted" rdma link del "$DEV"
if compgen -G "/sys/class/infiniband/sroce*" >/dev/null; then
	sr_log "other sroce devices exist: module unload not checked"
else
	sr_check "module unloads: nothing holds it" rmmod sroce
	modprobe sroce
fi
sr_done
