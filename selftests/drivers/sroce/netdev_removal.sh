#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Removing the netdev under a live device removes the device, also while a
# process holds it open; moving the netdev to another netns does the same.
# shellcheck source=selftests/drivers/sroce/lib.sh
source "$(dirname "$0")/lib.sh"
sr_require_sroce
[ -n "$SR_CTL" ] || sr_skip "sroce_ctl not built"

A=sr${SR_TAG}a; B=sr${SR_TAG}b; C=sr${SR_TAG}c; D=sr${SR_TAG}d
DEV=sroce_r${SR_TAG}; NS=srns${SR_TAG}
sr_dmesg_mark

sr_veth "$A" "$B"
sr_link_add "$DEV" "$A"
ip link del "$A"
sr_check "device gone after netdev deletion" sr_wait_gone "$DEV" 10

# With a user context and a PD open: the holder sees DEVICE_FATAL and can
# still release everything.
sr_veth "$A" "$B"
sr_link_add "$DEV" "$A"
out=$(mktemp); sr_on_exit "rm -f $out"
"$SR_CTL" hold "$DEV" 20 >"$out" 2>&1 &
holder=$!
sr_check "holder opened the device" sr_wait_output "$out" ready 5
ip link del "$A"
sr_check "device gone with a context open" sr_wait_gone "$DEV" 15
wait $holder
rc=$?
sr_check "holder got DEVICE_FATAL and released cleanly (rc=$rc)" \
	sh -c "[ $rc = 0 ] && grep -q 'event local catastrophic error' $out && grep -q released $out"

# Moving the netdev to another namespace unregisters it here.
ip netns add "$NS" && sr_on_exit "ip netns del $NS"
sr_veth "$C" "$D"
sr_link_add "$DEV" "$C"
ip link set "$C" netns "$NS"
sr_check "device gone after netdev moved to another netns" \
	sr_wait_gone "$DEV" 10
sr_check "netdev alive in the other netns" ip -n "$NS" link show "$C"
ip -n "$NS" link del "$C"
sr_check "kernel log clean" sr_dmesg_clean
sr_done
