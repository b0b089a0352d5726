#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# When a sender may leave the ICRC out. Two sroce devices on a veth pair,
# one in a netns: a packet a veth hands to a sroce device untouched stays
# CHECKSUM_PARTIAL and is taken unchecked, so its sender computes no ICRC
# (tx_local_no_icrc), as TCP over a veth computes no checksum. Anything
# that could change, divert or re-checksum the packet on its way makes the
# sender compute it again. For each such thing on the path from A to B:
# rc_verify still passes (every byte checked), A sends no packet without
# an ICRC while B, where the thing is not on its path, still does, and no
# packet is dropped for its ICRC. Without the rule for each, a packet
# would go out without its ICRC: the counter would grow, and where the
# packet ends up checked (software checksum, GRO) rc_verify would fail.
# (XDP at the peer is ruled out too, untested here: it needs a BPF object.)
# shellcheck source=selftests/drivers/sroce/lib.sh
source "$(dirname "$0")/lib.sh"
sr_require_sroce
command -v ethtool >/dev/null || sr_skip "ethtool missing"
command -v tc >/dev/null || sr_skip "tc missing"
sr_tool rc_verify >/dev/null || sr_skip "rc_verify not built"
sr_dmesg_mark
sr_sroce_ns_pair
[ -n "$(sr_counter "$DA" tx_local_no_icrc)" ] ||
	sr_fail "the device has no tx_local_no_icrc counter"
sr_ns_pair_gids
LOGS=$(mktemp -d)
sr_on_exit "rm -rf $LOGS"
port=18700
inb() { ip netns exec "$NS" "$@"; }

# The neighbour entries both ways, in both families, before a QP needs
# them (the core gives address resolution 1 s).
resolve() {
	local i
	for ((i = 0; i < 50; i++)); do
		ping -c1 -W1 "$PEER4" >/dev/null 2>&1 &&
			ping -6 -c1 -W1 "$PEER6" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	return 1
}

# verify WHAT FAMILY: rc_verify both ways over FAMILY (4 or 6); returns
# the growth of A's and B's tx_local_no_icrc in SKIP_A and SKIP_B.
verify() {
	port=$((port + 1))
	sr_snap "$DA" tx_local_no_icrc rx_drop_bad_icrc
	sr_snap "$DB" tx_local_no_icrc rx_drop_bad_icrc
	resolve || sr_log "$1: the peer does not answer pings"
	sr_check "$1: rc_verify over IPv$2" \
		sr_rc_verify "$LOGS/$port" "$port" "${NS_GID[A$2]}" \
		"${NS_GID[B$2]}"
	SKIP_A=$(sr_grew "$DA" tx_local_no_icrc)
	SKIP_B=$(sr_grew "$DB" tx_local_no_icrc)
	sr_log "$1: sent without an ICRC: $SKIP_A by A, $SKIP_B by B"
	sr_check "$1: no packet dropped for its ICRC" test \
		"$(sr_grew "$DA" rx_drop_bad_icrc).$(sr_grew "$DB" rx_drop_bad_icrc)" = 0.0
}

# guarded WHAT [BOTH]: after verify, with WHAT on the path from A to B:
# A computed every ICRC. Unless BOTH is given, WHAT is not on the path
# from B to A, and B still left them out. (A clsact qdisc hooks both
# directions of its netdev from 6.6 on, whichever its filters are.)
guarded() {
	sr_check "$1: A computed every ICRC" test "$SKIP_A" = 0
	[ -n "${2:-}" ] ||
		sr_check "$1: B, the other way, still left them out" test "$SKIP_B" -gt 0
}

verify "plain veth" 4
sr_check "plain veth: both left the ICRC out" test "$SKIP_A" -gt 0 -a "$SKIP_B" -gt 0
verify "plain veth" 6
sr_check "plain veth: both left the ICRC out" test "$SKIP_A" -gt 0 -a "$SKIP_B" -gt 0

# A qdisc on A could hold, reorder or corrupt the packet (netem does).
tc qdisc add dev "$A" root pfifo limit 1000
verify "a qdisc on A" 4
guarded "a qdisc on A"
tc qdisc del dev "$A" root

# A classifier at B's ingress could rewrite or redirect it. (6.1 hooks
# it in with the first filter, 6.6 and later with the qdisc.)
inb tc qdisc add dev "$B" clsact
sr_check "a classifier at B's ingress: the filter is in" inb tc filter add \
	dev "$B" ingress protocol ip u32 match u32 0 0 action pass
verify "a classifier at B's ingress" 4
guarded "a classifier at B's ingress" both
inb tc qdisc del dev "$B" clsact

# A classifier at A's egress, likewise.
tc qdisc add dev "$A" clsact
sr_check "a classifier at A's egress: the filter is in" tc filter add \
	dev "$A" egress protocol ip u32 match u32 0 0 action pass
verify "a classifier at A's egress" 4
guarded "a classifier at A's egress" both
tc qdisc del dev "$A" clsact

# Without checksum offload the stack checksums the packet in software,
# and B then checks the ICRC: it must be there.
ethtool -K "$A" tx off >/dev/null
verify "A without checksum offload" 6
guarded "A without checksum offload"
ethtool -K "$A" tx on >/dev/null

# GRO at B, which a veth feeds when A cannot do TSO: what UDP GRO merges
# the receive hook splits in software, checksumming each packet, and
# then checks its ICRC (rx-udp-gro-forwarding merges without a socket).
if inb ethtool -K "$B" gro on rx-udp-gro-forwarding on 2>/dev/null; then
	ethtool -K "$A" tso off >/dev/null
	verify "GRO at B" 6
	guarded "GRO at B"
	inb ethtool -K "$B" rx-udp-gro-forwarding off gro off
	ethtool -K "$A" tso on >/dev/null
else
	sr_log "the veth offers no rx-udp-gro-forwarding"
fi

# A netfilter hook at B's ingress, or at A's egress, could drop or
# rewrite it.
if command -v nft >/dev/null; then
	sr_check "netfilter: an ingress chain at B" inb nft -f - <<-EOF
	table netdev srtest {
		chain in { type filter hook ingress device $B priority 0; }
	}
	EOF
	verify "a netfilter ingress hook at B" 4
	guarded "a netfilter ingress hook at B"
	inb nft delete table netdev srtest
	sr_check "netfilter: an egress chain at A" nft -f - <<-EOF
	table netdev srtest {
		chain out { type filter hook egress device $A priority 0; }
	}
	EOF
	verify "a netfilter egress hook at A" 4
	guarded "a netfilter egress hook at A"
	nft delete table netdev srtest
else
	sr_log "nft missing: no netfilter cases"
fi

verify "the path cleared again" 4
sr_check "the path cleared again: both left the ICRC out" test \
	"$SKIP_A" -gt 0 -a "$SKIP_B" -gt 0
sr_check "kernel log clean" sr_dmesg_clean
sr_done
