#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A scripted RoCEv2 peer (roce_pkt.py --reply, from a netns with no RDMA
# device) against live sroce RC QPs (sroce_target): requests no libibverbs
# consumer on our targets can post, checked answer by answer.
#
# FLUSH (IBA annex A19): a range or a whole region, placement type global
# visibility, answered with an empty read response, a duplicate answered
# again; refused with the right NAK for persistence, a range outside the
# region, a region or QP without the FLUSH right, and reserved fields.
# Kernels before 6.2 know no FLUSH right: there every FLUSH is refused.
#
# Duplicates (IBA 9.9.1.1): behind the expected PSN, only a read or atomic
# the responder executed is answered again (a read also in part, from a
# later PSN); a forged one - another PSN, opcode, key or range - is
# dropped and counted, and neither fails the QP nor redoes an atomic.
# Answers to the target's own SENDs: an RNR NAK for a PSN acknowledged
# already is dropped as stale, not taken for an RNR NAK.
# UC: a request the responder cannot execute (bad rkey, a SEND longer
# than the receive) is dropped with its message and counted; the QP stays
# in RTS and the receive WQE serves the next message. A WQE kept that way
# is flushed with the rest when the QP fails.
# shellcheck source=selftests/drivers/sroce/lib.sh
source "$(dirname "$0")/lib.sh"
sr_require_sroce
command -v python3 >/dev/null || sr_skip "python3 missing"
sr_tool sroce_target >/dev/null || sr_skip "sroce_target not built"

DEV=sroce_p${SR_TAG}
sr_dmesg_mark
sr_ns_pair || sr_skip "cannot build the veth/netns topology"
sr_link_add "$DEV" "$A"
MAC=$(cat "/sys/class/net/$A/address")
sr_wait_gid "$DEV" "$IP4" || sr_fail "IPv4 GID never appeared"

# IB access bits (ib_user_ioctl_verbs.h).
LW=1 RW=2 RR=4 FLUSH_G=$((1 << 8)) FLUSH_P=$((1 << 9))
PEER_QPN=0x100
IFS=. read -r KMAJ KMIN _ <<<"$(uname -r)"
HAVE_FLUSH=0
[ "$KMAJ" -gt 6 ] || { [ "$KMAJ" = 6 ] && [ "${KMIN%%[!0-9]*}" -ge 2 ]; } &&
	HAVE_FLUSH=1

sr_target_start "$DEV" "$IP4" "$PEER4" || sr_fail "sroce_target did not start"
sr_pkt_start "$NS" || sr_fail "roce_pkt.py did not start"

# new_qp QP_ACCESS MR_ACCESS [TIMEOUT]: sets QPN RKEY VA (and IDX), or
# fails.
new_qp() {
	local ans
	ans=$(tgt qp "$1" "$2" $PEER_QPN ${3:+"$3"})
	read -r kind IDX QPN RKEY VA _ <<<"$ans"
	[ "$kind" = qp ] || { sr_log "qp $1 $2: $ans"; return 1; }
}

# send QPN PSN OPCODE EXT_HEX PAYLOAD: one request, prints the answer
# "OPCODE PSN SYNDROME PAYLOAD_LEN" (or "none", after $WAIT seconds).
WAIT=3
send() {
	local out
	out=$(sr_pkt "$B" "$MAC" "$PEER4" "$IP4" --qpn "$1" --psn "$2" \
		--opcode "$3" --ext "$4" --payload "$5" --ackreq 1 \
		--reply "$WAIT" ${MSN:+--msn})
	echo "${out#reply }"
}

# bytes_hex N: the hex of the bytes 0, 1, ... N - 1, as roce_pkt.py's
# payloads carry them.
bytes_hex() {
	local i hex=
	for ((i = 0; i < $1; i++)); do
		printf -v hex '%s%02x' "$hex" $((i & 0xff))
	done
	echo "$hex"
}

reth() { printf '%016x%08x%08x' "$1" "$2" "$3"; }
atmeth() { printf '%016x%08x%016x%016x' "$1" "$2" "$3" "$4"; } # VA RKEY ADD CMP
feth() { printf '%08x' $(($1 | ($2 << 4))); }	# PLT SEL

# expect DESC WANT QPN PSN OPCODE EXT PAYLOAD
expect() {
	local desc=$1 want=$2 got
	shift 2
	got=$(send "$@")
	[ "$got" = "$want" ] || sr_log "$desc: got '$got', want '$want'"
	sr_check "$desc" test "$got" = "$want"
}

state_is() { [ "$(tgt state "$1")" = "state $1 $2" ]; }

READ_RESP_ONLY=0x10 ACK=0x11 WRITE_ONLY=0x0a FLUSH=0x1c SEND_ONLY=0x04
NAK_INV=0x61 NAK_ACCESS=0x62
QPS_RTS=3 QPS_ERR=6
# The syndrome of an ACK, read response or atomic ACK from a target QP:
# a credit count (IBA 9.7.7.2) for its 32 receives posted, then for 31
# (rounded down to 24).
CR32=0x0a CR31=0x09

# The answers below are the first each request draws; a two-packet READ's
# last packet that comes late must not pass for the next one's.
sr_check "roce_pkt.py passes over a late READ tail" \
	python3 "$SR_DIR/roce_pkt.py" --check-answers

if [ $HAVE_FLUSH = 1 ]; then
	new_qp $((RW | RR | FLUSH_G)) $((LW | RW | RR | FLUSH_G)) ||
		sr_fail "a QP and region with the FLUSH right"
	# A WRITE, then FLUSHes that make it visible.
	got=$(send "$QPN" 0 $WRITE_ONLY "$(reth "$VA" "$RKEY" 64)" 64)
	sr_check "WRITE_ONLY acknowledged" test "${got%% *}" = $ACK
	expect "FLUSH of a range: empty read response" \
		"$READ_RESP_ONLY 1 $CR32 0" "$QPN" 1 $FLUSH \
		"$(feth 1 0)$(reth "$VA" "$RKEY" 64)" 0
	expect "FLUSH of the whole region: empty read response" \
		"$READ_RESP_ONLY 2 $CR32 0" "$QPN" 2 $FLUSH \
		"$(feth 1 1)$(reth 0 "$RKEY" 0)" 0
	expect "duplicate FLUSH answered again" \
		"$READ_RESP_ONLY 1 $CR32 0" "$QPN" 1 $FLUSH \
		"$(feth 1 0)$(reth "$VA" "$RKEY" 64)" 0
	want=$(bytes_hex 64)
	sr_check "written data in the region" \
		test "$(tgt mem "$IDX" 0 64)" = "mem $IDX $want"
	sr_check "QP still in RTS" state_is "$IDX" $QPS_RTS

	# Each refusal puts its QP in the error state: a fresh QP each.
	refuse() {
		local desc=$1 nak=$2 qpa=$3 mra=$4 f=$5 va=$6 len=$7
		new_qp "$qpa" "$mra" || { sr_fail "$desc: no QP"; return; }
		[ "$va" = base ] && va=$VA
		expect "$desc" "$ACK 0 $nak 0" "$QPN" 0 $FLUSH \
			"$f$(reth "$va" "$RKEY" "$len")" 0
		sr_check "$desc: QP in error" state_is "$IDX" $QPS_ERR
	}
	ALL_QP=$((RW | RR | FLUSH_G)) ALL_MR=$((LW | RW | RR | FLUSH_G))
	refuse "FLUSH past the region's end: remote access NAK" $NAK_ACCESS \
		$ALL_QP $ALL_MR "$(feth 1 0)" $((VA + 16384 - 8)) 16
	refuse "FLUSH for persistence: remote access NAK" $NAK_ACCESS \
		$ALL_QP $ALL_MR "$(feth 2 0)" base 64
	refuse "FLUSH into a region without the right: remote access NAK" \
		$NAK_ACCESS $ALL_QP $((LW | RW | RR)) "$(feth 1 0)" base 64
	refuse "FLUSH through a QP without the right: remote access NAK" \
		$NAK_ACCESS $((RW | RR)) $ALL_MR "$(feth 1 0)" base 64
	refuse "FLUSH with no placement type: invalid request NAK" $NAK_INV \
		$ALL_QP $ALL_MR "$(feth 0 0)" base 64
	refuse "FLUSH with reserved selectivity: invalid request NAK" \
		$NAK_INV $ALL_QP $ALL_MR "$(feth 1 2)" base 64
	sr_check "a region cannot claim persistence" \
		test "$(tgt qp $ALL_QP $((LW | FLUSH_P)) $PEER_QPN)" = "err 95"
else
	sr_check "no FLUSH right for regions before 6.2" \
		test "$(tgt qp $((RW | RR)) $((LW | FLUSH_G)) $PEER_QPN)" = "err 22"
	new_qp $((RW | RR)) $((LW | RW | RR)) || sr_fail "a QP"
	expect "FLUSH refused: remote access NAK" "$ACK 0 $NAK_ACCESS 0" \
		"$QPN" 0 $FLUSH "$(feth 1 0)$(reth "$VA" "$RKEY" 64)" 0
fi

# Duplicates: one QP through the whole sequence, so each check also
# shows that the forgeries before it changed nothing.
ATOMIC=8 READ=0x0c FADD=0x14 CSWAP=0x13 ATOMIC_ACK=0x12
READ_RESP_FIRST=0x0d UC_SEND_ONLY=0x24 UC_WRITE_ONLY=0x2a
new_qp $((RW | RR | ATOMIC)) $((LW | RW | RR | ATOMIC)) ||
	sr_fail "a QP for the duplicate checks"
got=$(send "$QPN" 0 $WRITE_ONLY "$(reth "$VA" "$RKEY" 64)" 64)
sr_check "WRITE_ONLY at PSN 0 acknowledged" test "${got% *}" = "$ACK 0 $CR32"
expect "READ at PSN 1 answered" "$READ_RESP_ONLY 1 $CR32 64" \
	"$QPN" 1 $READ "$(reth "$VA" "$RKEY" 64)" 0
expect "FETCH_ADD at PSN 2 answered" "$ATOMIC_ACK 2 $CR32 0" \
	"$QPN" 2 $FADD "$(atmeth $((VA + 64)) "$RKEY" 5 0)" 0
unmatched0=$(sr_counter "$DEV" rx_drop_unmatched_duplicate)
WAIT=1
expect "forged duplicate READ at a WRITE's PSN, bad rkey: dropped" none \
	"$QPN" 0 $READ "$(reth "$VA" $((RKEY ^ 0x5a00)) 64)" 0
expect "forged duplicate READ at the READ's PSN, other rkey: dropped" none \
	"$QPN" 1 $READ "$(reth "$VA" $((RKEY ^ 0x5a00)) 64)" 0
expect "forged duplicate READ at the READ's PSN, other range: dropped" none \
	"$QPN" 1 $READ "$(reth $((VA + 32)) "$RKEY" 64)" 0
expect "forged duplicate READ far behind (PSN wrapped): dropped" none \
	"$QPN" $((0xffffff - 1000)) $READ "$(reth "$VA" 12345 64)" 0
expect "forged duplicate FETCH_ADD at the READ's PSN: dropped" none \
	"$QPN" 1 $FADD "$(atmeth $((VA + 64)) "$RKEY" 5 0)" 0
expect "forged duplicate CMP_SWAP at the atomic's PSN: dropped" none \
	"$QPN" 2 $CSWAP "$(atmeth $((VA + 64)) "$RKEY" 9 5)" 0
WAIT=3
unmatched1=$(sr_counter "$DEV" rx_drop_unmatched_duplicate)
sr_check "six unmatched duplicates counted" \
	test $((unmatched1 - unmatched0)) = 6
sr_check "QP still in RTS after the forgeries" state_is "$IDX" $QPS_RTS
expect "true duplicate READ answered again" "$READ_RESP_ONLY 1 $CR32 64" \
	"$QPN" 1 $READ "$(reth "$VA" "$RKEY" 64)" 0
expect "true duplicate FETCH_ADD answered again" "$ATOMIC_ACK 2 $CR32 0" \
	"$QPN" 2 $FADD "$(atmeth $((VA + 64)) "$RKEY" 5 0)" 0
sr_check "the FETCH_ADD was done once" \
	test "$(tgt mem "$IDX" 64 8)" = "mem $IDX 0500000000000000"
expect "READ of two packets at PSN 3" "$READ_RESP_FIRST 3 $CR32 1024" \
	"$QPN" 3 $READ "$(reth "$VA" "$RKEY" 2048)" 0
expect "its second half asked again from PSN 4" "$READ_RESP_ONLY 4 $CR32 1024" \
	"$QPN" 4 $READ "$(reth $((VA + 1024)) "$RKEY" 1024)" 0
got=$(send "$QPN" 5 $WRITE_ONLY "$(reth $((VA + 128)) "$RKEY" 64)" 64)
sr_check "the next request (PSN 5) acknowledged" \
	test "${got% *}" = "$ACK 5 $CR32"
got=$(send "$QPN" 6 $SEND_ONLY "" 64)
sr_check "a SEND (PSN 6) takes a receive: one credit fewer" \
	test "${got% *}" = "$ACK 6 $CR31"
# The MSN that credits count from (LSN = MSN + credits) includes the
# request answered: here the seventh message (PSN 4 asked again part of
# the READ at PSN 3).
MSN=1
expect "a READ's response (PSN 7) counts it in its MSN" \
	"$READ_RESP_ONLY 7 $CR31 64 7" "$QPN" 7 $READ "$(reth "$VA" "$RKEY" 64)" 0
MSN=
sr_check "QP in RTS at the end" state_is "$IDX" $QPS_RTS

# Answers to the target's own requests. An ACK covers its PSN; a NAK
# names a packet not yet acknowledged, so an RNR NAK for a PSN acknowledged
# already (one that came late, behind the ACK) is stale: taken, it cost an
# RNR retry and restarted the QP's timer as an RNR wait, which could leave
# a packet in flight untimed.
# sent_one: wait (up to 2 s) until $DEV sent more packets than $sent,
# then $sent is their count; false if it did not.
sent_one() {
	local i n
	for ((i = 0; i < 40; i++)); do
		n=$(sr_counter "$DEV" tx_roce_packets)
		[ "$n" -gt "$sent" ] && sent=$n && return 0
		sleep 0.05
	done
	return 1
}
# answer PSN AETH_HEX: an ACKNOWLEDGE to the target's QP, no answer back.
answer() {
	sr_pkt "$B" "$MAC" "$PEER4" "$IP4" --qpn "$QPN" --psn "$1" \
		--opcode $ACK --ext "$2" --payload 0 >/dev/null
}
# one_send_done: wait (up to 2 s) for a completion; true when it is one
# successful SEND's (status 0, opcode 0).
one_send_done() {
	for _ in $(seq 40); do
		got=$(tgt cqes "$IDX")
		[ "$got" != "cqes $IDX 0" ] && break
		sleep 0.05
	done
	[[ $got == "cqes $IDX 1 0:0:"* ]]
}
# No timeout: nothing is sent again while this script takes its time.
new_qp 0 "$LW" 0 || sr_fail "a QP that sends, with no timeout"
sent=$(sr_counter "$DEV" tx_roce_packets)
got=$(tgt send "$IDX" 64)
sent_one || got="$got, not sent"
sr_check "the target's first SEND (PSN 0) went ($got)" \
	test "$got" = "send $IDX 0"
answer 0 1f000001
sr_check "its ACK completed it" one_send_done
sent=$(sr_counter "$DEV" tx_roce_packets)
got=$(tgt send "$IDX" 64)
sent_one || got="$got, not sent"
sr_check "the second SEND (PSN 1) went ($got)" test "$got" = "send $IDX 0"
stale0=$(sr_counter "$DEV" rx_drop_stale_response)
rnr0=$(sr_counter "$DEV" rnr_nak_received)
answer 0 21000001
for _ in $(seq 40); do
	[ "$(sr_counter "$DEV" rx_drop_stale_response)" != "$stale0" ] && break
	sleep 0.05
done
sr_check "an RNR NAK for PSN 0, acknowledged, dropped as stale" \
	test "$(( $(sr_counter "$DEV" rx_drop_stale_response) - stale0 ))" = 1
sr_check "and not taken for an RNR NAK" \
	test "$(sr_counter "$DEV" rnr_nak_received)" = "$rnr0"
answer 1 1f000002
sr_check "the second SEND's ACK completed it" one_send_done

# UC: no answers to wait for.
WAIT=0.2
ans=$(tgt uc "$RW" $((LW | RW)) $PEER_QPN)
read -r kind IDX QPN RKEY VA _ <<<"$ans"
[ "$kind" = qp ] || sr_fail "a UC QP: $ans"
ucerr0=$(sr_counter "$DEV" rx_drop_uc_error)
send "$QPN" 0 $UC_WRITE_ONLY "$(reth "$VA" $((RKEY ^ 0x5a00)) 64)" 64 >/dev/null
send "$QPN" 1 $UC_SEND_ONLY "" 600 >/dev/null	# receives hold 512 bytes
send "$QPN" 2 $UC_WRITE_ONLY "$(reth $((VA + 1024)) "$RKEY" 64)" 64 >/dev/null
send "$QPN" 3 $UC_SEND_ONLY "" 100 >/dev/null
ucerr1=$(sr_counter "$DEV" rx_drop_uc_error)
sr_check "UC: bad rkey and overlong SEND dropped and counted" \
	test $((ucerr1 - ucerr0)) = 2
sr_check "UC: QP still in RTS" state_is "$IDX" $QPS_RTS
want=$(bytes_hex 64)
sr_check "UC: the WRITE after the drops landed" \
	test "$(tgt mem "$IDX" 1024 64)" = "mem $IDX $want"
want=$(bytes_hex 100)
sr_check "UC: the SEND after the drops landed in the first receive" \
	test "$(tgt mem "$IDX" 0 100)" = "mem $IDX $want"
got=$(tgt cqes "$IDX")
sr_check "UC: one receive completion, 100 bytes ($got)" \
	test "$got" = "cqes $IDX 1 0:128:100"
UC_SEND_FIRST=0x20 UC_SEND_LAST=0x22
send "$QPN" 4 $UC_SEND_FIRST "" 1024 >/dev/null
send "$QPN" 6 $UC_SEND_LAST "" 64 >/dev/null	# PSN 5 lost: message dropped
sr_check "UC: QP to the error state" \
	test "$(tgt error "$IDX")" = "error $IDX 0"
got=$(tgt cqes "$IDX")
sr_check "UC: all 31 receives flushed, the one kept for reuse too" \
	test "$got" = "cqes $IDX 31$(printf ' 5:128:0%.0s' $(seq 31))"

sr_check "kernel log clean" sr_dmesg_clean
sr_done
