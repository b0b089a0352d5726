#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The port follows its netdev: active_mtu tracks the MTU, carrier loss and
# admin down give PORT_DOWN, and each change raises a port event.
# shellcheck source=selftests/drivers/sroce/lib.sh
source "$(dirname "$0")/lib.sh"
sr_require_sroce

A=sr${SR_TAG}a; B=sr${SR_TAG}b; DEV=sroce_u${SR_TAG}
sr_dmesg_mark
sr_veth "$A" "$B"
sr_link_add "$DEV" "$A"

# netdev MTU -> IB MTU: largest of 256..4096 within MTU - 84 bytes.
for pair in 1500:1024 9000:4096 4180:4096 4179:2048 2132:2048 1108:1024 \
	    1107:512 596:512 595:256 340:256; do
	ip link set "$A" mtu "${pair%%:*}"
	sr_check "netdev mtu ${pair%%:*} gives active_mtu ${pair##*:}" \
		test "$(sr_port_field "$DEV" active_mtu)" = "${pair##*:}"
done
ip link set "$A" mtu 1500

events=$(sr_counter "$DEV" port_events)
ip link set "$B" down
sr_check "peer down: carrier lost, PORT_DOWN" \
	sr_wait_port_state "$DEV" PORT_DOWN
sr_check "sysfs state agrees" \
	grep -q DOWN "/sys/class/infiniband/$DEV/ports/1/state"
ip link set "$B" up
sr_check "peer up: PORT_ACTIVE again" sr_wait_port_state "$DEV" PORT_ACTIVE
ip link set "$A" down
sr_check "admin down: PORT_DOWN" sr_wait_port_state "$DEV" PORT_DOWN
ip link set "$A" up
sr_check "admin up: PORT_ACTIVE" sr_wait_port_state "$DEV" PORT_ACTIVE
ip link set "$A" mtu 339
sr_check "MTU too small for RoCE: PORT_DOWN" \
	sr_wait_port_state "$DEV" PORT_DOWN
ip link set "$A" mtu 1500
sr_check "MTU restored: PORT_ACTIVE" sr_wait_port_state "$DEV" PORT_ACTIVE
sr_check "six port events counted" \
	test "$(sr_counter "$DEV" port_events)" = "$((events + 6))"
sr_check "kernel log clean" sr_dmesg_clean
sr_done
