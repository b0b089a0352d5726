#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# sroce and rdma_rxe run side by side on different netdevs, each device is
# served by its own libibverbs provider, and rxe traffic keeps working.
# shellcheck source=selftests/drivers/sroce/lib.sh
source "$(dirname "$0")/lib.sh"
sr_require_sroce
[ -n "$SR_CTL" ] || sr_skip "sroce_ctl not built"
modprobe rdma_rxe 2>/dev/null || sr_skip "rdma_rxe not available"

A=sr${SR_TAG}a; B=sr${SR_TAG}b; C=sr${SR_TAG}c; D=sr${SR_TAG}d
DEV=sroce_x${SR_TAG}; RXE=rxe_x${SR_TAG}
N=$(( SR_TAG % 250 ))
sr_dmesg_mark
sr_veth "$A" "$B"
sr_veth "$C" "$D"
ip addr add "198.18.$N.1/24" dev "$A"
ip addr add "198.19.$N.1/24" dev "$C"

sr_link_add "$DEV" "$A"
sr_check "rxe device beside sroce" \
	rdma link add "$RXE" type rxe netdev "$C"
sr_on_exit "rdma link del $RXE"
sr_check "sroce device served by libsroce" \
	sh -c "$SR_CTL provider $DEV | grep -qx 'libsroce-rdmav34.so'"
sr_check "rxe device served by librxe" \
	sh -c "$SR_CTL provider $RXE | grep -qx 'librxe-rdmav34.so'"
sr_check "both ports active" sh -c \
	"[ \"\$(ibv_devinfo -d $DEV | grep -c PORT_ACTIVE)\" = 1 ] && \
	 [ \"\$(ibv_devinfo -d $RXE | grep -c PORT_ACTIVE)\" = 1 ]"
sr_check "sroce cannot take rxe's netdev" \
	sh -c "! rdma link add ${DEV}b type sroce netdev $C 2>/dev/null"
sr_check "kernel names the device in the way" \
	sh -c "dmesg | tail -5 | grep -q '$C already carries RDMA device $RXE'"

# rxe loopback traffic over its own netdev is untouched by sroce.
if command -v ib_write_bw >/dev/null; then
	timeout 150 ib_write_bw -d "$RXE" -x 1 -s 4096 -n 200 -p 18515 \
		>/dev/null 2>&1 &
	srv=$!
	for _ in $(seq 100); do
		ss -ltn | grep -q ':18515 ' && break
		sleep 0.2
	done
	sr_check "rxe ib_write_bw completes with sroce loaded" \
		timeout 120 ib_write_bw -d "$RXE" -x 1 -s 4096 -n 200 -p 18515 \
		"198.19.$N.1"
	wait $srv
fi
sr_check "rmmod sroce leaves rxe alone" rmmod sroce
sr_check "rxe still active" sh -c \
	"ibv_devinfo -d $RXE | grep -q PORT_ACTIVE"
modprobe sroce
sr_check "kernel log clean" sr_dmesg_clean
sr_done
