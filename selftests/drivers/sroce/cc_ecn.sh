#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Congestion notification (the notification point of RoCEv2 congestion
# control). Between two sroce devices on a veth (the far one in another
# netns), netem marks a fifth of the RoCEv2 frames each way Congestion
# Experienced instead of dropping them (sroce's frames are ECN-capable).
# Each receiving RC queue pair must answer the marks with CNPs to its peer,
# one per mark with cnp_interval_us=0 and at most one per interval with a
# one-second interval; the peer must take and count every CNP (none is
# dropped as unknown), and the data moved meanwhile must arrive intact
# with no retransmission, since a mark is not a loss. (CNPs across real
# NICs: twohost/interop.sh.)
#
# Then the reaction point: under marks, a writer's CNPs must cut its rate
# (rdma resource -dd shows it limited, below the line rate) and its pacer
# must hold packets back, and nothing may be sent again (no tail-loss
# probe, no timeout: ACKs come slowly when paced, but nothing was lost);
# once the marks stop, the rate must recover to the line rate and the
# limit go. Last, the per-device switches: with
# cc/rp_enable 0 CNPs leave the rate alone, with cc/np_enable 0 marks get
# no CNP.
# shellcheck source=selftests/drivers/sroce/lib.sh
source "$(dirname "$0")/lib.sh"
sr_require_sroce
sr_tool rc_verify >/dev/null || sr_skip "rc_verify not built"
command -v tc >/dev/null || sr_skip "tc missing"
command -v ibv_devinfo >/dev/null || sr_skip "ibv_devinfo missing"
command -v tshark >/dev/null || sr_skip "tshark missing"
command -v ib_write_bw >/dev/null || sr_skip "ib_write_bw missing"
PARAM=/sys/module/sroce/parameters/cnp_interval_us
if [ ! -w "$PARAM" ]; then
	sr_fail "sroce has no cnp_interval_us parameter"
	sr_done
fi

sr_dmesg_mark
sr_sroce_ns_pair
sr_check "GID of $IP4 on $DA" sr_wait_gid "$DA" "$IP4"
sr_check "GID of $PEER4 on $DB" sr_wait_gid "$DB" "$PEER4"
GA=$(sr_gid_index "$DA" "$IP4")
GB=$(sr_gid_index "$DB" "$PEER4")

old_interval=$(cat "$PARAM")
sr_on_exit "echo $old_interval > $PARAM"

# mark_roce DEV [NETNS]: netem marks 20 % of DEV's outgoing RoCEv2 frames
# CE. Only those: netem drops what it cannot mark, and the test's TCP
# exchange and ARP must get through.
mark_roce() {
	local dev=$1 ns=()

	[ -n "${2:-}" ] && ns=(ip netns exec "$2")
	"${ns[@]}" tc qdisc add dev "$dev" root handle 1: prio bands 3 \
		priomap 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 &&
	"${ns[@]}" tc qdisc add dev "$dev" parent 1:3 handle 30: \
		netem loss 20% ecn &&
	roce_to_netem "$@"
}
# roce_to_netem DEV [NETNS]: RoCEv2 frames to netem's band (marks on).
roce_to_netem() {
	local ns=()

	[ -n "${2:-}" ] && ns=(ip netns exec "$2")
	"${ns[@]}" tc filter add dev "$1" parent 1: protocol ip u32 \
		match ip protocol 17 0xff match ip dport 4791 0xffff flowid 1:3
}
mark_roce "$A" || sr_skip "cannot set up netem ecn marking"
mark_roce "$B" "$NS" || sr_fail "netem ecn marking in $NS"

LOGS=$(mktemp -d)
sr_on_exit "rm -rf $LOGS"
COUNTERS=(rx_ecn_ce tx_cnp rx_cnp rx_drop_no_qp rx_drop_wrong_peer
	  retransmit_timeout seq_nak_received cc_rate_cut cc_pace_wait
	  tlp_probe)
# snap: remember every counter of both devices (grew: sr_grew).
snap() { sr_snap "$DA" "${COUNTERS[@]}"; sr_snap "$DB" "${COUNTERS[@]}"; }
grew() { sr_grew "$@"; }
# report TITLE: the growth of every counter, as a TAP comment.
report() {
	local d c line="$1:"
	for d in "$DA" "$DB"; do
		for c in "${COUNTERS[@]}"; do
			line="$line $d.$c +$(grew "$d" "$c")"
		done
	done
	sr_log "$line"
}
# cnps_taken FROM TO: every CNP FROM sent was counted by TO's queue pair,
# or (sent as the test's queue pairs went away) dropped for want of one.
cnps_taken() {
	local sent rcvd noqp
	sent=$(grew "$1" tx_cnp) rcvd=$(grew "$2" rx_cnp)
	noqp=$(grew "$2" rx_drop_no_qp)
	[ "$sent" -gt 0 ] && [ "$rcvd" -le "$sent" ] &&
		[ "$rcvd" -ge $((sent - noqp)) ]
}

# One CNP for every mark, on the wire as IBA A17.9.3 has it.
echo 0 >"$PARAM"
sr_check "capture starts" sr_capture_start "$A" "$LOGS/cnp.pcapng"
snap
sr_check "rc_verify passes with 20 % of frames marked" \
	sr_rc_verify "$LOGS/every" 18620 "$GA" "$GB"
report "cnp_interval_us=0"
sleep 1
sr_capture_stop
read -r frames roce bad _ <<<"$(sr_capture_summary "$LOGS/cnp.pcapng")"
sr_log "capture: $frames frames, $roce RoCEv2, $bad with errors"
sr_check "tshark finds no malformed frame" test "$bad" = 0 -a "$roce" -gt 0
sr_log "opcodes (count, opcode): $(sr_tshark_read "$LOGS/cnp.pcapng" \
	-T fields -e infiniband.bth.opcode | sort | uniq -c | tr -s ' \n' ' ')"
# The CNPs' UDP payloads (tshark names no BECN field): BTH, the reserved
# bytes and the ICRC.
sr_tshark_read "$LOGS/cnp.pcapng" -Y "infiniband.bth.opcode == 129" \
	-T fields -e udp.payload >"$LOGS/cnps"
sr_log "CNPs captured: $(wc -l <"$LOGS/cnps")," \
	"sent: $(( $(grew "$DA" tx_cnp) + $(grew "$DB" tx_cnp) ))"
sr_check "CNPs on the wire" test -s "$LOGS/cnps"
# Hex digits: opcode 1-2, BECN alone in the byte at 9-10, PSN 19-24, the
# 16 reserved bytes 25-56, the ICRC 57-64.
sr_check "each with BECN set, PSN 0 and 16 zero reserved bytes" \
	awk '{ gsub(":", "") }
	     length($0) != 64 || substr($0, 9, 2) != "40" ||
	     substr($0, 19, 6) != "000000" ||
	     substr($0, 25, 32) !~ /^0+$/ { bad = 1 }
	     END { exit bad }' "$LOGS/cnps"

sr_check "marks reached $DA" test "$(grew "$DA" rx_ecn_ce)" -gt 0
sr_check "marks reached $DB" test "$(grew "$DB" rx_ecn_ce)" -gt 0
sr_check "$DA answered every mark with a CNP" \
	test "$(grew "$DA" tx_cnp)" = "$(grew "$DA" rx_ecn_ce)"
sr_check "$DB answered every mark with a CNP" \
	test "$(grew "$DB" tx_cnp)" = "$(grew "$DB" rx_ecn_ce)"
sr_check "$DB took $DA's CNPs" cnps_taken "$DA" "$DB"
sr_check "$DA took $DB's CNPs" cnps_taken "$DB" "$DA"
sr_check "no CNP was taken for a stranger's" \
	test "$(grew "$DA" rx_drop_wrong_peer)" = 0 \
	-a "$(grew "$DB" rx_drop_wrong_peer)" = 0
sr_check "marks cost no retransmission" \
	test "$(( $(grew "$DA" retransmit_timeout) + $(grew "$DB" retransmit_timeout) \
		+ $(grew "$DA" seq_nak_received) + $(grew "$DB" seq_nak_received) ))" = 0

# At most one CNP per queue pair per second (rc_verify has one each side).
echo 1000000 >"$PARAM"
snap
t0=$(date +%s%N)
sr_check "rc_verify passes with a one-second CNP interval" \
	sr_rc_verify "$LOGS/spaced" 18621 "$GA" "$GB"
secs=$(( ($(date +%s%N) - t0 + 999999999) / 1000000000 ))
report "cnp_interval_us=1000000, ${secs} s"
# CNPs go at 0, 1, ... s: within secs (rounded up), at most secs + 1.
for d in "$DA" "$DB"; do
	sr_check "$d: at most one CNP a second over $secs s" \
		test "$(grew "$d" tx_cnp)" -ge 1 -a \
		"$(grew "$d" tx_cnp)" -le $((secs + 1))
	sr_check "$d: the interval held back CNPs for later marks" \
		test "$(grew "$d" rx_ecn_ce)" -gt "$(grew "$d" tx_cnp)"
done

# The reaction point. DA writes to DB for a while, its frames marked.
# cc_fields: cc_limited, cc_rate_mbps and cc_alpha of DA's RC queue pair
# in rdma resource -dd, read in one snapshot ("- - -" once it is gone).
cc_fields() {
	rdma -dd resource show qp link "$DA/1" | awk '
		function f(name) { return name in v ? v[name] : "-" }
		/type RC/ && !done {
			for (i = 1; i < NF; i++)
				v[$i] = $(i + 1)
			done = 1
		}
		END { print f("drv_cc_limited"), f("drv_cc_rate_mbps"),
			    f("drv_cc_alpha") }'
}
line_rate=$(ethtool "$A" 2>/dev/null | sed -n 's/.*Speed: \([0-9]*\)Mb.*/\1/p')
echo 0 >"$PARAM"
PORT=$(( 21000 + (SR_TAG % 400) * 10 ))
ip netns exec "$NS" timeout -k 5 120 ib_write_bw -d "$DB" -x "$GB" \
	-p "$PORT" -D 8 -s 65536 -F >"$LOGS/bw.server" 2>&1 &
srv=$!
sr_check "ib_write_bw server listens" sr_wait_listen "$PORT" "$NS" 60
snap
timeout -k 5 120 ib_write_bw -d "$DA" -x "$GA" -p "$PORT" -D 8 -s 65536 \
	-F "$PEER4" >"$LOGS/bw.client" 2>&1 &
cli=$!
sleep 3
read -r limited rate alpha <<<"$(cc_fields)"
sr_log "under marks: cc_limited $limited, cc_rate_mbps $rate," \
	"cc_alpha $alpha, line rate ${line_rate:-unknown}"
# The marks stop; the rate climbs back to the line rate within 3 s,
# while the writer still runs (it has 5 s left).
tc filter del dev "$A" parent 1:
t0=$(date +%s%N)
for _ in $(seq 30); do
	sleep 0.1
	read -r limited2 rate2 _ <<<"$(cc_fields)"
	[ "$limited2" = 1 ] || break
done
sr_log "marks off for $(( ($(date +%s%N) - t0) / 1000000 )) ms:" \
	"cc_limited $limited2, cc_rate_mbps $rate2"
wait "$cli"; crc=$?
wait "$srv"; src=$?
report "ib_write_bw, marks for 3 s"
grep -E '^ *[0-9]+ +[0-9]+ ' "$LOGS/bw.client" | sed 's/^/# ib_write_bw: /'
sr_check "ib_write_bw ran" test "$crc.$src" = 0.0
sr_check "CNPs cut $DA's rate" test "$(grew "$DA" cc_rate_cut)" -gt 0
sr_check "the pacer held $DA's packets back" \
	test "$(grew "$DA" cc_pace_wait)" -gt 0
sr_check "rdma resource shows the queue pair limited" test "$limited" = 1
# below_half RATE: a rate in Mb/s ("-" when the QP was gone) under half
# the line rate.
below_half() {
	[[ $1 =~ ^[0-9]+$ ]] && [ "$((2 * $1))" -lt "${line_rate:-100000}" ]
}
sr_check "cut below half the line rate" below_half "$rate"
sr_check "after the marks, the rate climbed back and the limit went" \
	test "$limited2" = 0 -a "$rate2" = "${line_rate:-$rate2}"
# Paced, packets and ACK requests come further apart than a round trip:
# nothing was lost, so nothing may be sent again.
sr_check "paced, $DA neither probed nor timed out" \
	test "$(grew "$DA" tlp_probe).$(grew "$DA" retransmit_timeout)" = 0.0

# The switches: DA neither slows down for CNPs nor sends any.
sr_check "marks again" roce_to_netem "$A"
echo 0 >"/sys/class/infiniband/$DA/cc/rp_enable"
echo 0 >"/sys/class/infiniband/$DA/cc/np_enable"
sr_on_exit "echo 1 > /sys/class/infiniband/$DA/cc/rp_enable"
sr_on_exit "echo 1 > /sys/class/infiniband/$DA/cc/np_enable"
snap
sr_check "rc_verify passes with $DA's congestion control off" \
	sr_rc_verify "$LOGS/off" 18622 "$GA" "$GB"
report "$DA's np_enable and rp_enable 0"
sr_check "$DA took CNPs" test "$(grew "$DA" rx_cnp)" -gt 0
sr_check "and kept its rate" test "$(grew "$DA" cc_rate_cut)" = 0 \
	-a "$(grew "$DA" cc_pace_wait)" = 0
sr_check "$DA took marks" test "$(grew "$DA" rx_ecn_ce)" -gt 0
sr_check "and sent no CNP" test "$(grew "$DA" tx_cnp)" = 0
sr_check "kernel log clean" sr_dmesg_clean
sr_done
