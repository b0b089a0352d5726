#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Kernel consumers: the sroce_kverbs_test module (kverbs/) is a kernel ULP
# in miniature. Loading it connects two kernel RC QPs and moves data
# between kmalloc buffers through the local DMA lkey and a DMA MR's
# global rkey: SEND with immediate over two SGEs, inline SEND, WRITE and
# READ of 64 KiB buffers, WRITE with immediate, a list posted with
# interrupts off, a full send queue, an address outside the direct map
# (local protection error), an atomic through the global rkey (which has
# no atomic right: remote access error), a bad rkey (NAK, remote access
# error, flushed receive), and after each error ib_drain_qp(), a reset
# and a new connection that works; an FRMR re-registered while the peer's
# WRITEs and READs through it are mid-copy (kprobes hold the copies) must
# keep every byte in the old pages; a destroyed QP's unpolled completions
# go with it; a completion handler of the test's own posts the next
# WRITE to the QP it handles. It runs over one device
# (loopback) and between two devices across a veth into another netns.
# The module's load status is the verdict; its log lines are shown.
# shellcheck source=selftests/drivers/sroce/lib.sh
source "$(dirname "$0")/lib.sh"
sr_require_sroce
KO=
for d in "$SR_DIR/kverbs" "$SR_DIR/../../../build/$(uname -r)/selftests/drivers/sroce/kverbs"; do
	[ -f "$d/sroce_kverbs_test.ko" ] && KO=$d/sroce_kverbs_test.ko && break
done
[ -n "$KO" ] || sr_skip "sroce_kverbs_test.ko not built for $(uname -r)"

sr_dmesg_mark
n=$(( SR_TAG % 250 + 1 ))

# kverbs DESCRIPTION PARAM...: load the module with PARAMs; pass if it
# loads (every test passed). Its report is printed either way.
kverbs() {
	local desc=$1 mark rc
	shift
	mark=$(dmesg | wc -l)
	insmod "$KO" "$@"
	rc=$?
	dmesg | tail -n +"$((mark + 1))" | grep 'sroce_kverbs_test' |
		sed 's/^/#   /'
	[ $rc = 0 ] && rmmod sroce_kverbs_test
	sr_check "$desc" test $rc = 0
}

# Loopback: both QPs on one device.
L=sr${SR_TAG}k
LDEV=sroce_k$SR_TAG
sr_veth "$L" "${L}p" || sr_skip "cannot create a veth pair"
ip addr add "198.19.$n.1/24" dev "$L"
sr_link_add "$LDEV" "$L" || sr_fail "rdma link add $LDEV"
sr_check "loopback GID present" sr_wait_gid "$LDEV" "198.19.$n.1"
kverbs "kernel verbs over loopback" ibdev="$LDEV"

# The verdict can fail: no such device means no test ran.
! insmod "$KO" ibdev=sroce_missing$SR_TAG 2>/dev/null
sr_check "load fails without a device" test $? = 0
rmmod sroce_kverbs_test 2>/dev/null

# Two devices, the second in another netns.
sr_sroce_ns_pair
sr_check "GIDs present" sr_wait_gid "$DA" "$IP4"
sr_check "peer GID present" sr_wait_gid "$DB" "$PEER4"
kverbs "kernel verbs across a veth into another netns" ibdev="$DA" peer="$DB"

# Nothing of the test's is left behind on the devices.
sr_check "no kernel RC QPs left" \
	bash -c "! rdma resource show qp 2>/dev/null | grep -E '($LDEV|$DA|$DB)/' | grep -q 'type RC'"
sr_check "kernel log clean" sr_dmesg_clean
sr_done
