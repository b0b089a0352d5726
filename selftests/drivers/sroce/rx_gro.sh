#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# UDP GRO on the bound netdevs. With rx-udp-gro-forwarding, then with
# rx-gro-list (fraglist GRO), on both veths of a netns pair, RoCEv2 over
# IPv6 between two sroce devices must still work: IPv6 packets carry a
# UDP checksum, so GRO merges consecutive ones of a flow. rc_verify's
# sends, writes, reads (to 512 KiB) and atomics, every byte checked;
# merged packets are split and counted (rx_gro_segments), none is dropped
# as malformed. (A veth hands a packet to the peer's GRO only when the
# sending veth has TSO off, or the packet comes from a socket: a real NIC
# runs GRO on whatever arrives.)
# shellcheck source=selftests/drivers/sroce/lib.sh
source "$(dirname "$0")/lib.sh"
sr_require_sroce
command -v ethtool >/dev/null || sr_skip "ethtool missing"
sr_tool rc_verify >/dev/null || sr_skip "rc_verify not built"
sr_dmesg_mark
sr_sroce_ns_pair
GA=$(sr_gid_index "$DA" "$IP6") || sr_fail "no IPv6 GID on $DA"
GB=$(sr_gid_index "$DB" "$PEER6") || sr_fail "no IPv6 GID on $DB"
LOGS=$(mktemp -d)
sr_on_exit "rm -rf $LOGS"

sum() { echo $(($(sr_counter "$DA" "$1") + $(sr_counter "$DB" "$1"))); }
[ -n "$(sr_counter "$DA" rx_gro_segments)" ] ||
	sr_fail "the device has no rx_gro_segments counter"

port=18650
for mode in rx-udp-gro-forwarding rx-gro-list; do
	if ! ethtool -K "$A" gro on tso off "$mode" on 2>/dev/null ||
	   ! ip netns exec "$NS" ethtool -K "$B" gro on tso off "$mode" on \
		2>/dev/null; then
		sr_log "$mode: the veth does not offer it"
		continue
	fi
	# The veths restart their receive path; let it settle. rc_verify
	# connects over IPv4 but its QPs resolve the peer's MAC over IPv6,
	# and the core gives neighbour discovery only 1 s: have it done.
	for ((i = 0; i < 50; i++)); do
		ping -c1 -W1 "$PEER4" >/dev/null 2>&1 &&
			ping -6 -c1 -W1 "$PEER6" >/dev/null 2>&1 && break
		sleep 0.1
	done
	seg0=$(sum rx_gro_segments) bad0=$(sum rx_drop_malformed)
	sr_check "$mode: rc_verify over IPv6" \
		sr_rc_verify "$LOGS/$mode" $port "$GA" "$GB"
	seg=$(($(sum rx_gro_segments) - seg0))
	bad=$(($(sum rx_drop_malformed) - bad0))
	sr_log "$mode: $seg packets arrived merged, $bad malformed"
	sr_check "$mode: GRO merged packets and they were taken" test "$seg" -gt 0
	sr_check "$mode: none dropped as malformed" test "$bad" = 0
	ethtool -K "$A" "$mode" off
	ip netns exec "$NS" ethtool -K "$B" "$mode" off
	port=$((port + 1))
done
sr_check "kernel log clean" sr_dmesg_clean
sr_done
