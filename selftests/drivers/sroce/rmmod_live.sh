#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rmmod with live devices removes them all and releases the netdevs, which
# can be bound again after the module comes back.
# shellcheck source=selftests/drivers/sroce/lib.sh
source "$(dirname "$0")/lib.sh"
sr_require_sroce

A=sr${SR_TAG}a; B=sr${SR_TAG}b; C=sr${SR_TAG}c; D=sr${SR_TAG}d
sr_dmesg_mark
sr_veth "$A" "$B"
sr_veth "$C" "$D"
rdma link add sroce_x${SR_TAG} type sroce netdev "$A"
rdma link add sroce_y${SR_TAG} type sroce netdev "$B"
rdma link add sroce_z${SR_TAG} type sroce netdev "$C"
sr_check "three devices up" sh -c \
	"ls /sys/class/infiniband | grep -c '^sroce_[xyz]${SR_TAG}\$' | grep -qx 3"

sr_check "rmmod succeeds with live devices" rmmod sroce
sr_check "all devices gone" \
	sh -c "! ls /sys/class/infiniband | grep -q '^sroce_[xyz]${SR_TAG}\$'"
sr_check "netdevs survive" \
	sh -c "ip link show $A >/dev/null && ip link show $C >/dev/null"
sr_check "module loads again" modprobe sroce
sr_check "same netdev can be bound again" \
	rdma link add sroce_x${SR_TAG} type sroce netdev "$A"
sr_on_exit "rdma link del sroce_x${SR_TAG}"
sr_check "rebound device active" \
	test "$(sr_port_field sroce_x${SR_TAG} state)" = PORT_ACTIVE

# Unload while a netdev removal is still being processed.
rdma link add sroce_y${SR_TAG} type sroce netdev "$D"
ip link del "$C"
sr_check "rmmod right after netdev removal" rmmod sroce
sr_check "kernel log clean" sr_dmesg_clean
modprobe sroce
sr_done
