#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The RC data path in real topologies: the RC tests (rc_ops, rc_errors,
# rc_mw, rc_srq: every RC operation checked byte for byte, completions,
# error paths) between
#  - two QPs of one sroce device on a veth, for rc_ops alone: over an IPv6
#    GID, and over an IPv4 one at path MTUs 256 and 512 (the multi-packet
#    cases). The selftests run all four by themselves over IPv4 on such a
#    device (path MTU 1024); SR_RC_LINK_TYPE=rxe runs them here too;
#  - two sroce devices on the ends of a veth pair whose far end is in
#    another netns, over IPv4 (path MTU 4096) and IPv6 (path MTU 1024),
#    with the frames captured on the veth: RoCEv2 really crossed it,
#    tshark dissects every frame without a malformed-packet error, and the
#    frames fit the path MTU.
# Netdev MTUs are 9000, so the ports' active MTU is 4096. Within one
# device, SENDs, WRITEs and READ responses of several MTUs go as units
# that stand for several packets (tx_local_units): each of the three
# must use them in the loopback cases, and the two devices of the netns
# cases must not.
#
# SR_RC_LINK_TYPE=rxe runs the loopback cases over rdma_rxe instead, to
# compare; the netns cases need sroce (rxe listens in init_net only).
# shellcheck source=selftests/drivers/sroce/lib.sh
source "$(dirname "$0")/lib.sh"
TYPE=${SR_RC_LINK_TYPE:-sroce}
if [ "$TYPE" = sroce ]; then
	sr_require_sroce
else
	sr_require_root
	modprobe "rdma_$TYPE" 2>/dev/null || sr_skip "rdma_$TYPE not available"
fi
RC_OPS=$(sr_tool rc_ops) || sr_skip "rc_ops not built"
command -v ibv_devinfo >/dev/null || sr_skip "ibv_devinfo missing"
RC_TIMEOUT=600

sr_dmesg_mark
TMP=$(mktemp -d)
sr_on_exit "rm -rf $TMP"
n=$(( SR_TAG % 250 + 1 ))

# rc DESCRIPTION VAR=VALUE...: the RC test programs with that environment,
# their TAP output kept as comments.
rc() {
	local desc=$1
	shift
	sr_log "$desc: $*"
	sr_check "$desc: the RC tests" sr_run_indented \
		sr_rc_tests "$RC_TIMEOUT" "$@"
}

# ops DESCRIPTION VAR=VALUE... [-t TEST]...: rc_ops alone, with that
# environment, its tests or those named.
ops() {
	local desc=$1 env=()
	shift
	while [ $# -gt 0 ] && [ "$1" != -t ]; do
		env+=("$1")
		shift
	done
	sr_log "$desc"
	sr_check "$desc: rc_ops" sr_run_indented \
		timeout -k 10 "$RC_TIMEOUT" env "${env[@]}" "$RC_OPS" "$@"
}

# ------------------------------------------------ (a), (b): loopback
L=sr${SR_TAG}l
LDEV=${TYPE}_l$SR_TAG
L4=198.19.$n.1
L6=2001:db8:1:$n::1
sr_veth "$L" "${L}p" || sr_skip "cannot create a veth pair"
ip link set "$L" mtu 9000
ip link set "${L}p" mtu 9000
ip addr add "$L4/24" dev "$L"
ip addr add "$L6/64" dev "$L" nodad
if ! rdma link add "$LDEV" type "$TYPE" netdev "$L"; then
	sr_fail "rdma link add $LDEV type $TYPE netdev $L"
	sr_done
fi
sr_on_exit "rdma link del $LDEV"
sr_check "loopback: port active at MTU 4096" \
	test "$(sr_wait_port_state "$LDEV" PORT_ACTIVE &&
		sr_port_field "$LDEV" active_mtu)" = 4096
if ! g4=$(sr_gid_index "$LDEV" "$L4"); then
	g4=
	sr_fail "loopback: no GID for $L4"
elif [ "$TYPE" != sroce ]; then
	rc "loopback IPv4" SROCE_DEV_A="$LDEV" SROCE_GID_A="$g4"
fi
if g6=$(sr_gid_index "$LDEV" "$L6"); then
	# The error, MW and SRQ tests do not depend on the address family.
	ops "loopback IPv6" SROCE_DEV_A="$LDEV" SROCE_GID_A="$g6" \
		SROCE_SKIP_MAX_MSG=1
else
	sr_fail "loopback: no GID for $L6"
fi
# The smallest path MTUs: multi-packet messages of every kind. At 256, a
# unit is 32 MTUs: the single-SGE messages of these three tests (2 to
# 12 KB) go as one or two units each (sroce only).
if [ -n "$g4" ]; then
	for mtu in 256 512; do
		for t in send rdma_write_with_imm rdma_read; do
			units0=$(sr_counter "$LDEV" tx_local_units)
			ops "loopback IPv4 path MTU $mtu, $t" \
				SROCE_DEV_A="$LDEV" SROCE_GID_A="$g4" \
				SROCE_MTU=$mtu -t "$t"
			[ "$TYPE" = sroce ] || continue
			units=$(( $(sr_counter "$LDEV" tx_local_units) -
				  units0 ))
			sr_check "loopback MTU $mtu: $t went as units ($units)" \
				test "$units" -gt 0
		done
		ops "loopback IPv4 path MTU $mtu" SROCE_DEV_A="$LDEV" \
			SROCE_GID_A="$g4" SROCE_MTU=$mtu \
			-t multi_sge -t many_mtus_odd_length -t psn_wrap
	done
fi

# ------------------------------------------------ (c): across a netns
if [ "$TYPE" != sroce ]; then
	sr_log "netns cases skipped: they need sroce"
	sr_check "kernel log clean" sr_dmesg_clean
	sr_done
fi
sr_sroce_ns_pair
HAVE_TSHARK=0
command -v tshark >/dev/null && HAVE_TSHARK=1
[ $HAVE_TSHARK = 1 ] || sr_log "tshark missing: the wire is not checked"

# netns FAMILY MTU LOCAL_ADDR PEER_ADDR: the RC tests between DA and DB
# over that family at that path MTU, and neither device counting a bad
# packet.
netns() {
	local what="netns IPv$1 MTU $2" ga gb c
	local -A before
	if ! ga=$(sr_gid_index "$DA" "$3") || ! gb=$(sr_gid_index "$DB" "$4")
	then
		sr_fail "$what: GIDs of $3 and $4"
		return
	fi
	for c in rx_roce_packets rx_drop_bad_icrc rx_drop_malformed \
		rx_local_no_icrc tx_local_no_icrc tx_local_units; do
		before[$DA.$c]=$(sr_counter "$DA" "$c")
		before[$DB.$c]=$(sr_counter "$DB" "$c")
	done
	rc "$what" SROCE_DEV_A="$DA" SROCE_GID_A="$ga" SROCE_DEV_B="$DB" \
		SROCE_GID_B="$gb" SROCE_MTU="$2" SROCE_SKIP_MAX_MSG=1

	# Both devices received RoCE, none of it bad.
	sr_check "$what: both devices received RoCEv2" test \
		"$(sr_counter "$DA" rx_roce_packets)" -gt "${before[$DA.rx_roce_packets]}" -a \
		"$(sr_counter "$DB" rx_roce_packets)" -gt "${before[$DB.rx_roce_packets]}"
	# The veth kept the senders' packets CHECKSUM_PARTIAL: never on a
	# link, so taken without an ICRC check.
	sr_check "$what: both devices knew the packets never left memory" test \
		"$(sr_counter "$DA" rx_local_no_icrc)" -gt "${before[$DA.rx_local_no_icrc]}" -a \
		"$(sr_counter "$DB" rx_local_no_icrc)" -gt "${before[$DB.rx_local_no_icrc]}"
	# And so neither sender computed one (tx_local_icrc.sh tests when
	# they must).
	sr_check "$what: both devices sent without an ICRC" test \
		"$(sr_counter "$DA" tx_local_no_icrc)" -gt "${before[$DA.tx_local_no_icrc]}" -a \
		"$(sr_counter "$DB" tx_local_no_icrc)" -gt "${before[$DB.tx_local_no_icrc]}"
	# Units stay inside a device: the veth carried packets.
	for c in rx_drop_bad_icrc rx_drop_malformed tx_local_units; do
		sr_check "$what: $c stayed put" test \
			"$(sr_counter "$DA" "$c").$(sr_counter "$DB" "$c")" = \
			"${before[$DA.$c]}.${before[$DB.$c]}"
	done
}

# wire FAMILY MTU ETHERTYPE: the captured frames of that family (one
# capture and one tshark pass for both: tshark is slow to start under
# emulation).
wire() {
	local what="netns IPv$1 MTU $2" n_all=0 n_ib=0 n_bad=0 max=0
	read -r n_all n_ib n_bad max <<<"$(awk -v t="$3" '$1 == t {
		print $2, $3, $4, $5 }' "$TMP/summary")"
	sr_log "$what: $n_all frames captured, $n_ib dissected as InfiniBand, $n_bad with errors, longest $max bytes"
	sr_check "$what: RoCEv2 frames crossed the veth" test "${n_ib:-0}" -gt 0
	sr_check "$what: every UDP 4791 frame dissects as InfiniBand" \
		test "$n_ib" = "$n_all"
	sr_check "$what: no malformed frame, no expert error" test "$n_bad" = 0
	if [ "$n_bad" != 0 ]; then
		sr_tshark_read "$CAP" -Y "eth.type == $3 && _ws.expert.severity >= \"Error\"" \
			-O infiniband | head -n 80 | sed 's/^/# /'
	fi
	# Headers around an IB payload: Ethernet 14, IPv6 40, UDP 8, BTH 12,
	# RETH 16, ImmDt 4, ICRC 4 (and up to 3 pad bytes): under 100.
	sr_check "$what: frames use the path MTU and stay within it" \
		test "$max" -gt "$2" -a "$max" -lt $(( $2 + 100 ))
}

CAP=$TMP/netns.pcapng
if [ $HAVE_TSHARK = 1 ] && ! sr_capture_start "$A" "$CAP"; then
	sr_fail "dumpcap did not start capturing"
	sr_capture_stop
	HAVE_TSHARK=0
fi
netns 4 4096 "$IP4" "$PEER4"
netns 6 1024 "$IP6" "$PEER6"
if [ $HAVE_TSHARK = 1 ]; then
	sr_capture_stop
	sr_capture_summary "$CAP" eth.type >"$TMP/summary"
	wire 4 4096 0x0800
	wire 6 1024 0x86dd
fi

sr_check "kernel log clean" sr_dmesg_clean
sr_done
