#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rdma link add/del: the module auto-loads, devices appear and disappear,
# names and netdevs can be reused, and several devices coexist.
# shellcheck source=selftests/drivers/sroce/lib.sh
source "$(dirname "$0")/lib.sh"
sr_require_root
command -v rdma >/dev/null || sr_skip "iproute2 rdma tool missing"
modinfo sroce >/dev/null 2>&1 || sr_skip "sroce module not installed"

A=sr${SR_TAG}a; B=sr${SR_TAG}b; C=sr${SR_TAG}c; D=sr${SR_TAG}d
DEV=sroce_l${SR_TAG}; DEV2=sroce_m${SR_TAG}
sr_dmesg_mark

# Start unloaded so "rdma link add" has to load the module by its alias.
if ! grep -q '^sroce ' /proc/modules || rmmod sroce 2>/dev/null; then
	sr_check "module not loaded before first link add" \
		sh -c '! grep -q "^sroce " /proc/modules'
fi
sr_veth "$A" "$B"
sr_veth "$C" "$D"

sr_check "rdma link add creates $DEV" \
	rdma link add "$DEV" type sroce netdev "$A"
sr_check "module auto-loaded through its rdma-link alias" \
	grep -q '^sroce ' /proc/modules
sr_check "$DEV in sysfs" sr_ibdev_exists "$DEV"
sr_check "rdma link show names the netdev" \
	sh -c "rdma link show $DEV/1 | grep -q 'netdev $A'"
sr_check "ibv_devices lists $DEV" sh -c "ibv_devices | grep -qw $DEV"
sr_check "ibv_devinfo shows PORT_ACTIVE" \
	test "$(sr_port_field "$DEV" state)" = PORT_ACTIVE
sr_check "ibv_devinfo shows link layer Ethernet" \
	test "$(sr_port_field "$DEV" link_layer)" = Ethernet
sr_check "node type is CA" \
	sh -c "grep -q '^1: CA' /sys/class/infiniband/$DEV/node_type"

sr_check "second device on another netdev" \
	rdma link add "$DEV2" type sroce netdev "$C"
sr_check "both devices listed" \
	sh -c "ibv_devices | grep -qw $DEV && ibv_devices | grep -qw $DEV2"

sr_check "rdma link del removes $DEV" rdma link del "$DEV"
sr_check "$DEV gone from sysfs" sh -c "! test -e /sys/class/infiniband/$DEV"
sr_check "$DEV2 unaffected" \
	test "$(sr_port_field "$DEV2" state)" = PORT_ACTIVE
sr_check "name and netdev reusable after del" \
	rdma link add "$DEV" type sroce netdev "$A"
sr_check "reused device is active" \
	test "$(sr_port_field "$DEV" state)" = PORT_ACTIVE
for i in 1 2 3 4 5; do
	if ! rdma link del "$DEV" ||
	   ! rdma link add "$DEV" type sroce netdev "$A"; then
		sr_fail "add/del cycle $i"
	fi
done
sr_check "10 add/del cycles leave one working device" \
	test "$(sr_port_field "$DEV" state)" = PORT_ACTIVE
if [ -n "$SR_CTL" ]; then
	ODD=myrdma${SR_TAG}
	rdma link add "$ODD" type sroce netdev "$D" && sr_on_exit "rdma link del $ODD"
	sr_check "a device with any name gets the sroce provider" \
		sh -c "$SR_CTL provider $ODD | grep -qx libsroce-rdmav34.so"
	rdma dev set "$ODD" name "${ODD}r" && sr_on_exit "rdma link del ${ODD}r"
	sr_check "and keeps it when renamed" \
		sh -c "$SR_CTL provider ${ODD}r | grep -qx libsroce-rdmav34.so"
	rdma link del "${ODD}r"
fi
sr_check "del both" sh -c "rdma link del $DEV && rdma link del $DEV2"
sr_check "no sroce devices left" \
	sh -c "! ls /sys/class/infiniband | grep -q -e $DEV -e $DEV2"
sr_check "kernel log clean" sr_dmesg_clean
sr_done
