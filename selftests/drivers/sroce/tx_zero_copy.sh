#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# RC payloads of user QPs leave as references to the user's pinned pages
# (sroce_sgl_attach()). Those packets may outlive everything the user
# had: here netem holds them for 300 ms on the veth while the sender is
# killed, so its QP, its MR (unpinned) and its memory go while the qdisc
# still holds packets that point into them. Nothing may complain when the
# packets leave later, and a second run over the same link must work.
# shellcheck source=selftests/drivers/sroce/lib.sh
source "$(dirname "$0")/lib.sh"
sr_require_sroce
command -v ib_write_bw >/dev/null || sr_skip "ib_write_bw missing"
sr_dmesg_mark
TMP=$(mktemp -d)
sr_on_exit "rm -rf $TMP"
PORT=$(( 22000 + (SR_TAG % 400) * 10 ))

sr_sroce_ns_pair
GA=$(sr_gid_index "$DA" "$IP4") || sr_fail "no GID of $IP4 on $DA"
GB=$(sr_gid_index "$DB" "$PEER4") || sr_fail "no GID of $PEER4 on $DB"
ping -c 1 -W 5 "$PEER4" >/dev/null || sr_log "no ping answer from $PEER4"
tc qdisc add dev "$A" root netem delay 300ms limit 100000 ||
	sr_skip "no netem qdisc"

# backlog: packets the qdisc on $A holds now.
backlog() {
	tc -s qdisc show dev "$A" | awk '/backlog/ { sub(/p$/, "", $3); print $3; exit }'
}

PORT=$((PORT + 1))
ip netns exec "$NS" timeout -k 5 60 ib_write_bw -d "$DB" -x "$GB" -F \
	-s 1048576 -D 20 -p "$PORT" >"$TMP/server" 2>&1 &
srv=$!
sr_wait_listen "$PORT" "$NS" 60 || sr_fail "server did not listen"
timeout -k 5 60 ib_write_bw -d "$DA" -x "$GA" -F -s 1048576 -D 20 \
	-p "$PORT" "$PEER4" >"$TMP/client" 2>&1 &
cli=$!
held=0
for ((i = 0; i < 100; i++)); do
	held=$(backlog)
	[ "${held:-0}" -gt 16 ] && break
	sleep 0.1
done
sr_log "packets held by netem when the sender died: $held"
sr_check "the qdisc held the sender's packets" test "${held:-0}" -gt 16
kill -9 "$cli" 2>/dev/null
wait "$cli" 2>/dev/null
kill "$srv" 2>/dev/null
wait "$srv" 2>/dev/null
sr_check "the held packets drained" \
	sh -c "for i in \$(seq 50); do [ \"\$(tc -s qdisc show dev $A |
		awk '/backlog/ { print \$3; exit }')\" = 0p ] && exit 0; sleep 0.1; done; exit 1"

# The link still carries data, checked end to end.
tc qdisc del dev "$A" root
sr_check "rc_verify across the link afterwards" \
	sr_rc_verify "$TMP/verify" $((PORT + 1)) "$GA" "$GB"
sr_check "kernel log clean" sr_dmesg_clean
sr_done
