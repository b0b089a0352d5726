#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# qperf and libfabric over sroce, each on a device looping back on its own
# veth:
#  - qperf with the RDMA CM (-cm1): RC bandwidth, RDMA read bandwidth and
#    latency, and its verified atomics (ver_rc_compare_swap,
#    ver_rc_fetch_add), which check every value they read back;
#  - qperf without the CM addresses the peer by LID only, which no RoCE
#    device can take: the RDMA core refuses the AH without a GRH before
#    any driver sees it. Checked to fail the same way on rdma_rxe;
#  - fi_pingpong over libfabric's verbs provider, message endpoints, and
#    over verbs;ofi_rxm, reliable datagram endpoints (the test
#    fi_rdm_pingpong makes; Debian ships no fabtests), all sizes to 1 MiB
#    with data integrity checks (-c).
# shellcheck source=selftests/drivers/sroce/lib.sh
source "$(dirname "$0")/lib.sh"
sr_require_sroce
command -v qperf >/dev/null || sr_skip "qperf missing"
command -v fi_pingpong >/dev/null || sr_skip "libfabric-bin missing"

sr_dmesg_mark
n=$(( SR_TAG % 250 + 1 ))
PORT=$(( 19000 + SR_TAG % 10000 ))
LOG=$(mktemp -d)
sr_on_exit "rm -rf $LOG"

# device TYPE SUBNET: a device of TYPE on its own veth; sets DEV, ADDR.
device() {
	local l=sr${SR_TAG}${1:0:1}q
	DEV=${1}_q$SR_TAG ADDR=$2.$n.1
	sr_veth "$l" "${l}p" || return 1
	ip link set "$l" mtu 9000
	ip link set "${l}p" mtu 9000
	ip addr add "$ADDR/24" dev "$l"
	# The port goes active when the core sees the veth's carrier, which
	# the kernel reports up to a second late.
	sr_link_add "$DEV" "$l" "$1" && sr_wait_gid "$DEV" "$ADDR" &&
		sr_wait_port_state "$DEV" PORT_ACTIVE
}

# pair NAME SERVER_CMD -- CLIENT_CMD: a fi_pingpong server in the
# background, the client against it; true when both end well. Output kept
# in $LOG/NAME.*, shown as comments on failure; the client's becomes $OUT.
pair() {
	local name=$1 spid rc src=0 i
	local -a srv=()
	shift
	while [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	timeout -k 5 120 "${srv[@]}" >"$LOG/$name.srv" 2>&1 &
	spid=$!
	for ((i = 0; i < 20; i++)); do
		ss -Hltn | grep -q ":47592 " && break
		sleep 0.1
	done
	timeout -k 5 110 "$@" >"$LOG/$name.cli" 2>&1
	rc=$?
	wait "$spid" || src=$?
	OUT=$(cat "$LOG/$name.cli")
	[ "$rc" = 0 ] && [ "$src" = 0 ] && return 0
	sed "s/^/# $name client: /" "$LOG/$name.cli"
	sed "s/^/# $name server: /" "$LOG/$name.srv"
	return 1
}

# qperf_client NAME ARGS...: a qperf client against the qperf server
# (which serves one test after another until killed); its output in $OUT.
qperf_client() {
	local name=$1 rc
	shift
	timeout -k 5 120 qperf -lp "$PORT" "$ADDR" "$@" >"$LOG/$name" 2>&1
	rc=$?
	OUT=$(cat "$LOG/$name")
	return "$rc"
}

# qperf_cm: bandwidths, latency and verified atomics with the CM.
qperf_cm() {
	qperf_client qperf_cm -cm1 -t 2 -m 65536 rc_bw rc_rdma_read_bw \
		rc_lat ver_rc_compare_swap ver_rc_fetch_add
	local rc=$?
	echo "$OUT" | sed 's/^/# /'
	[ "$rc" = 0 ] && [ "$(echo "$OUT" | grep -c ' = ')" = 5 ] &&
		! echo "$OUT" | grep -qi "mismatch\|fail"
}

# qperf_no_cm: what qperf says without the CM (it must fail: no GRH).
# Its whole output stays in $LOG/qperf_nocm_DEV for the failure report.
# Asked up to three times: right after rxe's device appears, qperf's
# server has been seen to fail on it without a word ("server: ").
qperf_no_cm() {
	local i said
	for ((i = 0; i < 3; i++)); do
		said=$(! qperf_client "qperf_nocm_$DEV" -i "$DEV:1" -t 1 rc_bw &&
			echo "$OUT" | grep -o "failed to .*" | sort -u | head -n 1)
		[ -n "$said" ] && break
		sleep 1
	done
	echo "$said"
}

fi_pp() {
	pair "fi_$2" fi_pingpong -p "$1" -e "$2" -d "$DEV" -I 50 -c -- \
		fi_pingpong -p "$1" -e "$2" -d "$DEV" -I 50 -c "$ADDR" &&
		echo "$OUT" | tail -n 3 | sed 's/^/# /' &&
		echo "$OUT" | grep -qE '^1m +50 +=50 '
}

sr_require_rxe || sr_fail "rdma_rxe, to compare with, cannot load"
qperf --listen_port "$PORT" >"$LOG/qperf.srv" 2>&1 &
sr_on_exit "kill $!"
sr_wait_listen "$PORT" "" 30 || sr_fail "qperf server listens"
sr_check "an rxe device" device rxe 198.18
rxe_no_cm=$(qperf_no_cm)
sr_check "sroce device on its own veth" device sroce 198.19
sr_check "qperf -cm1: rc_bw, rc_rdma_read_bw, rc_lat, verified atomics" \
	qperf_cm
sroce_no_cm=$(qperf_no_cm)
sr_log "qperf without the CM: sroce: ${sroce_no_cm:-nothing}; rxe: ${rxe_no_cm:-nothing}"
same=false
if [ -n "$sroce_no_cm" ] && [ "$sroce_no_cm" = "$rxe_no_cm" ]; then
	same=true
else
	for f in "$LOG"/qperf_nocm_*; do sed "s|^|# ${f##*/}: |" "$f"; done
fi
sr_check "qperf without the CM: refused by the core, as on rxe" $same
sr_check "fi_pingpong verbs, msg endpoints, data checked" fi_pp verbs msg
sr_check "fi_pingpong verbs;ofi_rxm, rdm endpoints, data checked" \
	fi_pp "verbs;ofi_rxm" rdm
sr_check "kernel log clean" sr_dmesg_clean
sr_done
