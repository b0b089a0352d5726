#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The receive hook takes UDP/4791 packets for the device off the bound
# netdev (IPv4 and IPv6), counts and drops what it cannot use, and leaves
# every other packet to the network stack. It checks the ICRC of what
# came with its checksum done (as from a NIC), and not of what is still
# CHECKSUM_PARTIAL (sent on this machine, never on a link).
# shellcheck source=selftests/drivers/sroce/lib.sh
source "$(dirname "$0")/lib.sh"
sr_require_sroce

DEV=sroce_h${SR_TAG}
N=$(( SR_TAG % 250 ))
sr_dmesg_mark

sr_ns_pair || sr_skip "cannot build the veth/netns topology"
sr_link_add "$DEV" "$A"
sr_check "IPv4 GID present" sr_wait_gid "$DEV" "$IP4"
sr_check "IPv6 GID present" sr_wait_gid "$DEV" "$IP6"

command -v python3 >/dev/null || sr_skip "python3 missing"
# send ADDR PORT NBYTES [COUNT]: COUNT (1) zero-filled UDP datagrams from
# the peer namespace, all from one interpreter (sr_pipe_start).
sr_pipe_start UDP ip netns exec "$NS" python3 -c '
import socket, sys
print("ready", flush=True)
for line in sys.stdin:
    try:
        a, p, n, c = line.split()
        with socket.socket(socket.AF_INET6 if ":" in a else socket.AF_INET,
                           socket.SOCK_DGRAM) as s:
            for _ in range(int(c)):
                s.sendto(bytes(int(n)), (a, int(p)))
        print("sent", flush=True)
    except Exception as e:
        print("error", e, flush=True)' || sr_fail "the UDP sender did not start"
send() {
	sr_pipe_write UDP "$1 $2 $3 ${4:-1}" && sr_pipe_read UDP 30 &&
		[ "$SR_PIPE_LINE" = sent ] && return 0
	sr_log "UDP sender: '$SR_PIPE_LINE' for $*"
	return 1
}
# ICMP port-unreachables this host sent (the stack saw a datagram).
unreach() { nstat -asz IcmpOutDestUnreachs | awk '$1 == "IcmpOutDestUnreachs" { print $2 }'; }
unreach6() { nstat -asz Icmp6OutDestUnreachs | awk '$1 == "Icmp6OutDestUnreachs" { print $2 }'; }

ping -c1 -W5 "$PEER4" >/dev/null 2>&1	# resolve neighbours first
ping -6 -c1 -W5 "$PEER6" >/dev/null 2>&1

# The peer's checksums computed before the veth, as a NIC's frames come:
# not CHECKSUM_PARTIAL, so the hook checks their ICRC.
command -v ethtool >/dev/null || sr_skip "ethtool missing"
ip netns exec "$NS" ethtool -K "$B" tx off >/dev/null ||
	sr_fail "ethtool -K $B tx off"
pk0=$(sr_counter "$DEV" rx_roce_packets)
ic0=$(sr_counter "$DEV" rx_drop_bad_icrc)
mf0=$(sr_counter "$DEV" rx_drop_malformed)
lo0=$(sr_counter "$DEV" rx_local_no_icrc)
u0=$(unreach); u60=$(unreach6)

send "$IP4" 4791 64 5
send "$IP6" 4791 64 3
send "$IP4" 4791 8		# shorter than BTH + ICRC
send "$IP6" 4791 0
sleep 0.5

sr_check "10 RoCEv2 datagrams seen by the hook" \
	test "$(sr_counter "$DEV" rx_roce_packets)" = "$((pk0 + 10))"
sr_check "8 zero-filled ones dropped for their ICRC" \
	test "$(sr_counter "$DEV" rx_drop_bad_icrc)" = "$((ic0 + 8))"
sr_check "2 short ones dropped as malformed" \
	test "$(sr_counter "$DEV" rx_drop_malformed)" = "$((mf0 + 2))"
sr_check "the stack never saw them (no ICMP unreachable)" \
	test "$(unreach)" = "$u0"
sr_check "nor over IPv6" test "$(unreach6)" = "$u60"
sr_check "none taken as never on a link" \
	test "$(sr_counter "$DEV" rx_local_no_icrc)" = "$lo0"

# With the checksum left to the veth (CHECKSUM_PARTIAL), the same datagrams
# never crossed a link: no ICRC check, and the zeros fail the next one,
# the P_Key.
ip netns exec "$NS" ethtool -K "$B" tx on >/dev/null
pkey0=$(sr_counter "$DEV" rx_drop_bad_pkey)
ic0=$(sr_counter "$DEV" rx_drop_bad_icrc)
send "$IP4" 4791 64 4; send "$IP6" 4791 64 4
sleep 0.5
sr_check "8 local datagrams taken without an ICRC check" \
	test "$(sr_counter "$DEV" rx_local_no_icrc)" = "$((lo0 + 8))"
sr_check "and dropped for their P_Key 0, none for an ICRC" \
	test "$(sr_counter "$DEV" rx_drop_bad_pkey).$(sr_counter "$DEV" rx_drop_bad_icrc)" = \
	"$((pkey0 + 8)).$ic0"

# Other UDP traffic still reaches the stack, which answers port unreachable.
send "$IP4" 4792 64
send "$IP6" 4792 64
sleep 0.5
sr_check "other UDP ports pass to the IPv4 stack" \
	test "$(unreach)" -gt "$u0"
sr_check "and to the IPv6 stack" test "$(unreach6)" -gt "$u60"
# RoCEv2 for an address that is local but not one of the device's GIDs
# (here on a dummy netdev) is not the device's business.
OTHER=198.19.$N.9
ip link add "sr${SR_TAG}d" type dummy && sr_on_exit "ip link del sr${SR_TAG}d"
ip link set "sr${SR_TAG}d" up
ip addr add "$OTHER/32" dev "sr${SR_TAG}d"
ip -n "$NS" route add "$OTHER/32" via "$IP4"
u2=$(unreach)
send "$OTHER" 4791 64
sleep 0.5
sr_check "RoCEv2 for a non-GID local address goes to the stack" \
	test "$(unreach)" -gt "$u2"
sr_check "ping still works across the bound netdev" \
	sh -c "ping -c1 -W5 $PEER4 >/dev/null"
sr_check "hook counted nothing extra" \
	test "$(sr_counter "$DEV" rx_roce_packets)" = "$((pk0 + 18))"

# The hook classifies by its own copy of the device's RoCEv2 GIDs, which
# the core keeps up to date through add_gid and del_gid: an address added
# after the device must be taken, and one removed no longer.
ADD4=${IP4%.1}.3 ADD6=${IP6%::1}::3
rx() { cat "/sys/class/net/$A/statistics/rx_packets"; }
ip addr add "$ADD4/24" dev "$A"
ip addr add "$ADD6/64" dev "$A" nodad
sr_check "a new IPv4 address becomes a GID" sr_wait_gid "$DEV" "$ADD4"
sr_check "a new IPv6 address becomes a GID" sr_wait_gid "$DEV" "$ADD6"
# Pinned neighbours: the frames go out even once the addresses are gone,
# and no resolution traffic mixes with them.
mac=$(cat "/sys/class/net/$A/address")
ip -n "$NS" neigh replace "$ADD4" lladdr "$mac" dev "$B" nud permanent
ip -n "$NS" neigh replace "$ADD6" lladdr "$mac" dev "$B" nud permanent
pk1=$(sr_counter "$DEV" rx_roce_packets)
u3=$(unreach); u63=$(unreach6)
send "$ADD4" 4791 64 3
send "$ADD6" 4791 64 2
sleep 0.5
sr_check "the hook takes RoCEv2 to the new GIDs" \
	test "$(sr_counter "$DEV" rx_roce_packets)" = "$((pk1 + 5))"
sr_check "and the stack does not see them" \
	test "$(unreach)" = "$u3" -a "$(unreach6)" = "$u63"
ip addr del "$ADD4/24" dev "$A"
ip addr del "$ADD6/64" dev "$A"
# gid_gone ADDR: its RoCE v2 GID left the table within 10 s.
gid_gone() {
	local i
	for ((i = 0; i < 100; i++)); do
		sr_gid_index "$DEV" "$1" 1 >/dev/null || return 0
		sleep 0.1
	done
	return 1
}
sr_check "the removed IPv4 address leaves the GIDs" gid_gone "$ADD4"
sr_check "the removed IPv6 address leaves the GIDs" gid_gone "$ADD6"
pk2=$(sr_counter "$DEV" rx_roce_packets)
r0=$(rx)
# The pinned neighbour entries still send them here.
send "$ADD4" 4791 64 3
send "$ADD6" 4791 64 2
sleep 0.5
sr_check "the frames to removed addresses arrived" test "$(rx)" -ge "$((r0 + 5))"
sr_check "the hook no longer takes them" \
	test "$(sr_counter "$DEV" rx_roce_packets)" = "$pk2"

rdma link del "$DEV"
u1=$(unreach)
send "$IP4" 4791 64
sleep 0.5
sr_check "hook is gone with the device: stack sees 4791 again" \
	test "$(unreach)" -gt "$u1"
sr_check "kernel log clean" sr_dmesg_clean
sr_done
