#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Binding errors: the same netdev twice, non-Ethernet netdevs, a netdev that
# another driver owns, a missing netdev and a duplicate name all fail with a
# clear error and change nothing.
# shellcheck source=selftests/drivers/sroce/lib.sh
source "$(dirname "$0")/lib.sh"
sr_require_sroce

A=sr${SR_TAG}a; B=sr${SR_TAG}b; BR=sr${SR_TAG}br; P=sr${SR_TAG}p; Q=sr${SR_TAG}q
DEV=sroce_e${SR_TAG}
sr_dmesg_mark
sr_veth "$A" "$B"
sr_link_add "$DEV" "$A"
count() { ls /sys/class/infiniband | wc -l; }
before=$(count)

sr_check "same netdev twice is refused" \
	sh -c "! rdma link add ${DEV}x type sroce netdev $A 2>/dev/null"
sr_check "kernel says why" \
	sh -c "dmesg | tail -5 | grep -q '$A is already bound'"
sr_check "the first device still works" \
	test "$(sr_port_field "$DEV" state)" = PORT_ACTIVE
sr_check "loopback netdev is refused" \
	sh -c "! rdma link add ${DEV}y type sroce netdev lo 2>/dev/null"
sr_check "kernel says lo is not Ethernet" \
	sh -c "dmesg | tail -5 | grep -q 'lo is not an Ethernet netdev'"
if ip link add "sr${SR_TAG}t" type ipip local 198.18.0.1 remote 198.18.0.2 2>/dev/null; then
	sr_on_exit "ip link del sr${SR_TAG}t"
	sr_check "IP tunnel netdev is refused" \
		sh -c "! rdma link add ${DEV}z type sroce netdev sr${SR_TAG}t 2>/dev/null"
fi
sr_check "missing netdev is refused" \
	sh -c "! rdma link add ${DEV}w type sroce netdev nosuch${SR_TAG} 2>/dev/null"

# A bridge port's receive hook belongs to the bridge.
if ip link add "$BR" type bridge 2>/dev/null; then
	sr_on_exit "ip link del $BR"
	sr_veth "$P" "$Q"
	ip link set "$P" master "$BR"
	sr_check "bridge port is refused" \
		sh -c "! rdma link add ${DEV}v type sroce netdev $P 2>/dev/null"
	sr_check "bridge still owns the port" \
		sh -c "ip -d link show $P | grep -q 'bridge_slave'"
fi
sr_check "duplicate device name is refused" \
	sh -c "! rdma link add $DEV type sroce netdev $B 2>/dev/null"
sr_check "peer netdev left unbound by the failed add" \
	rdma link add "${DEV}u" type sroce netdev "$B"
rdma link del "${DEV}u"
sr_check "no device was left behind" test "$(count)" = "$before"
sr_check "kernel log clean" sr_dmesg_clean
sr_done
