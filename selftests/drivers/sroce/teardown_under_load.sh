#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Teardown while RoCEv2 packets stream in: rdma link del, netdev deletion,
# MTU changes and rmmod, each with a flood of valid frames from another
# namespace hitting the receive hook. Everything must end clean: no
# kernel warnings, no leaked devices, no stuck unregister, the module
# unloads. Bounded: each flood is a fixed number of frames.
# shellcheck source=selftests/drivers/sroce/lib.sh
source "$(dirname "$0")/lib.sh"
sr_require_sroce
command -v python3 >/dev/null || sr_skip "python3 missing"
PKT="$SR_DIR/roce_pkt.py"

A=sr${SR_TAG}a; B=sr${SR_TAG}b; DEV=sroce_t${SR_TAG}; NS=srns${SR_TAG}
N=$(( SR_TAG % 250 ))
IP4=198.18.$N.1; PEER4=198.18.$N.2
sr_dmesg_mark
ip netns add "$NS" && sr_on_exit "ip netns del $NS"

# setup: veth pair with the far end in $NS and a device on the near end.
setup() {
	ip link add "$A" type veth peer name "$B" netns "$NS" || return 1
	ip link set "$A" up
	ip -n "$NS" link set "$B" up
	ip addr add "$IP4/24" dev "$A"
	rdma link add "$DEV" type sroce netdev "$A" && sr_wait_gid "$DEV" "$IP4"
}

# flood: stream valid frames at the device in the background.
flood() {
	ip netns exec "$NS" python3 "$PKT" "$B" "$(cat /sys/class/net/$A/address)" \
		"$PEER4" "$IP4" --count 20000 --payload 256 >/dev/null 2>&1 &
	FLOOD=$!
	# Let it start hitting the hook.
	for _ in $(seq 50); do
		[ "$(sr_counter "$DEV" rx_drop_no_qp)" -gt 100 ] 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

finish() { wait "$FLOOD" 2>/dev/null; ip link del "$A" 2>/dev/null; true; }

setup
sr_check "flood reaches the device" flood
sr_check "rdma link del under load" rdma link del "$DEV"
sr_check "device gone" sr_wait_gone "$DEV" 10
finish

setup
flood
ip link del "$A"
sr_check "netdev deleted under load: device gone" sr_wait_gone "$DEV" 10
finish

setup
flood
for m in 1280 9000 600 339 1500 4200 1500; do ip link set "$A" mtu $m; done
sr_check "MTU changes under load leave the port active" \
	sr_wait_port_state "$DEV" PORT_ACTIVE
rdma link del "$DEV"
finish

setup
flood
sr_check "rmmod under load" rmmod sroce
sr_check "device gone with the module" sh -c "! test -e /sys/class/infiniband/$DEV"
finish
sr_check "module loads again" modprobe sroce

# Repeat the fastest path a few times to shake out ordering races.
for i in 1 2 3 4 5; do
	setup && flood
	rdma link del "$DEV" & del=$!
	ip link del "$A"
	wait $del
	if ! sr_wait_gone "$DEV" 10; then
		sr_fail "round $i: device left behind"
	fi
	finish
done
sr_check "link del racing netdev deletion, 5 rounds" true
sr_check "no sroce device left" \
	sh -c "! ls /sys/class/infiniband | grep -q '^sroce_t${SR_TAG}\$'"
sr_check "kernel log clean" sr_dmesg_clean
sr_done
