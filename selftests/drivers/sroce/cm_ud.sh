#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# RDMA CM and UD over sroce: the kernel's CM exchanges its MADs through
# sroce's GSI QP (QP1), so connection setup works as on any RoCE device.
# Over one device (loopback) and across a veth into another netns, each
# with IPv4 and IPv6 addresses:
#  - rping -V (RC, data verified), ucmatose (RC, several connections),
#    udaddy (UD QPs addressed through the CM), rdma_server/rdma_client,
#    and mckey (UD multicast through the CM, IPv4 groups);
#  - perftest over the CM (ib_send_bw -R, ib_write_bw -R), over UD
#    (ib_send_bw -c UD, ib_send_lat -c UD) and over UC (ib_send_bw -c UC,
#    ib_write_bw -c UC), ibv_ud_pingpong and ibv_uc_pingpong -c (data
#    checked), over IPv4.
# shellcheck source=selftests/drivers/sroce/lib.sh
source "$(dirname "$0")/lib.sh"
sr_require_sroce
for t in rping ucmatose udaddy rdma_server rdma_client mckey ibv_ud_pingpong \
	ibv_uc_pingpong ib_send_bw ib_send_lat ib_write_bw; do
	command -v "$t" >/dev/null || sr_skip "$t missing (rdmacm-utils, perftest)"
done
sr_dmesg_mark
TMP=$(mktemp -d)
sr_on_exit "rm -rf $TMP"
n=$(( SR_TAG % 250 + 1 ))
PORT=$(( 21000 + (SR_TAG % 400) * 20 ))
RUN=90
RUNS=0
MC=0

# pair DESC NS READY SERVER... -- CLIENT...: run the server (in netns
# NS if set), wait until it is ready (READY: a TCP port it listens on,
# "cm" for an RDMA CM listener, "mc:GROUP" for a multicast receiver:
# the CM's join puts the IPv4 group on the netdev, and the sender waits
# 3 s after its own join before it sends), run the client (retried: a
# listener may be slow to bind under emulation), and pass if both exit 0.
pair() {
	local desc=$1 netns=$2 ready=$3 srv ok=1 i out cms rc
	local -a scmd=() nsx=()
	shift 3
	while [ "$1" != -- ]; do scmd+=("$1"); shift; done
	shift
	RUNS=$((RUNS + 1))
	out=$TMP/run$RUNS
	[ -n "$netns" ] && nsx=(ip netns exec "$netns")
	cms=$(sr_cm_listeners)
	# Line-buffered: a server killed at its timeout still shows how far
	# it got.
	"${nsx[@]}" timeout -k 5 "$RUN" stdbuf -oL "${scmd[@]}" \
		>"$out.server" 2>&1 &
	srv=$!
	case $ready in
	cm) sr_wait_cm_listen "$cms" 60 || ok=0 ;;
	mc:*) sr_wait_mc_group "${ready#mc:}" "$netns" 60 || ok=0 ;;
	*) sr_wait_listen "$ready" "$netns" 60 || ok=0 ;;
	esac
	# Every attempt's output is kept for the log: the first failure
	# is usually the one that explains the others.
	for i in 1 2 3; do
		timeout -k 5 "$RUN" "$@" >"$out.client" 2>&1
		rc=$?
		{ echo "attempt $i: exit $rc"; cat "$out.client"; } >>"$out.tries"
		[ $rc = 0 ] && break
		[ $i = 3 ] && ok=0
		sleep 2
	done
	wait "$srv" || ok=0
	# Some tools (mckey, udaddy) exit 0 after a failed CM event.
	if grep -qE "RDMA_CM_EVENT_[A-Z_]*ERROR|return status [^0]" \
		"$out.client" "$out.server"; then
		ok=0
	fi
	if [ $ok = 0 ]; then
		sed "s/^/# $desc client: /" "$out.tries"
		sed "s/^/# $desc server: /" "$out.server"
	fi
	sr_check "$desc" test $ok = 1
}

# cm_suite WHERE NS SERVER_ADDR CLIENT_BIND: the CM tools, server in NS.
cm_suite() {
	local w=$1 netns=$2 s=$3 b=$4
	pair "$w: rping -V" "$netns" cm rping -s -a "$s" -C 20 -V -S 1000 -- \
		rping -c -a "$s" -I "$b" -C 20 -V -S 1000
	pair "$w: ucmatose" "$netns" cm ucmatose -b "$s" -c 2 -C 20 -- \
		ucmatose -s "$s" -b "$b" -c 2 -C 20
	pair "$w: udaddy" "$netns" cm udaddy -b "$s" -C 20 -- \
		udaddy -s "$s" -b "$b" -C 20
	pair "$w: rdma_server/rdma_client" "$netns" cm rdma_server -s "$s" -- \
		rdma_client -s "$s"
	case $s in
	*:*) ;;
	*)	# The receiver joins and waits; the sender joins and sends.
		MC=$((MC + 1))
		pair "$w: mckey" "$netns" "mc:239.3.$n.$MC" mckey -m "239.3.$n.$MC" -b "$s" \
			-C 10 -- mckey -m "239.3.$n.$MC" -b "$b" -s -C 10 ;;
	esac
}

# pt_suite WHERE NS SDEV SGID CDEV CGID HOST: perftest over CM and UD.
pt_suite() {
	local w=$1 netns=$2 sd=$3 sg=$4 cd=$5 cg=$6 h=$7
	PORT=$((PORT + 1))
	pair "$w: ib_send_bw -R" "$netns" cm ib_send_bw -d "$sd" -R -n 200 -p "$PORT" -- \
		ib_send_bw -d "$cd" -R -n 200 -p "$PORT" "$h"
	PORT=$((PORT + 1))
	pair "$w: ib_write_bw -R" "$netns" cm ib_write_bw -d "$sd" -R -n 200 -p "$PORT" -- \
		ib_write_bw -d "$cd" -R -n 200 -p "$PORT" "$h"
	PORT=$((PORT + 1))
	pair "$w: ib_send_bw -c UD" "$netns" "$PORT" \
		ib_send_bw -d "$sd" -x "$sg" -c UD -n 200 -p "$PORT" -F -- \
		ib_send_bw -d "$cd" -x "$cg" -c UD -n 200 -p "$PORT" -F "$h"
	PORT=$((PORT + 1))
	pair "$w: ib_send_lat -c UD" "$netns" "$PORT" \
		ib_send_lat -d "$sd" -x "$sg" -c UD -n 200 -p "$PORT" -F -- \
		ib_send_lat -d "$cd" -x "$cg" -c UD -n 200 -p "$PORT" -F "$h"
	PORT=$((PORT + 1))
	pair "$w: ib_send_bw -c UC" "$netns" "$PORT" \
		ib_send_bw -d "$sd" -x "$sg" -c UC -n 200 -p "$PORT" -F -- \
		ib_send_bw -d "$cd" -x "$cg" -c UC -n 200 -p "$PORT" -F "$h"
	PORT=$((PORT + 1))
	pair "$w: ib_write_bw -c UC" "$netns" "$PORT" \
		ib_write_bw -d "$sd" -x "$sg" -c UC -n 200 -p "$PORT" -F -- \
		ib_write_bw -d "$cd" -x "$cg" -c UC -n 200 -p "$PORT" -F "$h"
	PORT=$((PORT + 1))
	pair "$w: ibv_uc_pingpong -c" "$netns" "$PORT" \
		ibv_uc_pingpong -d "$sd" -g "$sg" -n 100 -c -p "$PORT" -- \
		ibv_uc_pingpong -d "$cd" -g "$cg" -n 100 -c -p "$PORT" "$h"
	PORT=$((PORT + 1))
	pair "$w: ibv_ud_pingpong" "$netns" "$PORT" \
		ibv_ud_pingpong -d "$sd" -g "$sg" -n 100 -p "$PORT" -- \
		ibv_ud_pingpong -d "$cd" -g "$cg" -n 100 -p "$PORT" "$h"
}

# ------------------------------------------------------- loopback
L=sr${SR_TAG}c
LDEV=sroce_c$SR_TAG
L4=198.19.$n.1
L6=2001:db8:2:$n::1
sr_veth "$L" "${L}p" || sr_skip "cannot create a veth pair"
ip addr add "$L4/24" dev "$L"
ip addr add "$L6/64" dev "$L" nodad
sr_link_add "$LDEV" "$L" || sr_fail "rdma link add $LDEV"
if g=$(sr_gid_index "$LDEV" "$L4") && sr_wait_gid "$LDEV" "$L6"; then
	cm_suite "loopback IPv4" "" "$L4" "$L4"
	cm_suite "loopback IPv6" "" "$L6" "$L6"
	pt_suite "loopback IPv4" "" "$LDEV" "$g" "$LDEV" "$g" "$L4"
else
	sr_fail "loopback GIDs did not appear"
fi

# ------------------------------------------- across a veth into a netns
sr_sroce_ns_pair
if ga=$(sr_gid_index "$DA" "$IP4") && gb=$(sr_gid_index "$DB" "$PEER4") &&
	sr_wait_gid "$DA" "$IP6" && sr_wait_gid "$DB" "$PEER6"; then
	cm_suite "netns IPv4" "$NS" "$PEER4" "$IP4"
	cm_suite "netns IPv6" "$NS" "$PEER6" "$IP6"
	pt_suite "netns IPv4" "$NS" "$DB" "$gb" "$DA" "$ga" "$PEER4"
else
	sr_fail "netns GIDs did not appear"
fi

sr_check "kernel log clean" sr_dmesg_clean
sr_done
