#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Receive validation: crafted RoCEv2 frames (roce_pkt.py, which computes the
# ICRC on its own) must each be dropped under exactly the right counter.
# Valid packets - including ones whose variant fields (TOS/ECN, TTL, flow
# label, FECN/BECN) routers may rewrite - must pass the ICRC check and only
# then find no queue pair. Over IPv4 and IPv6.
# shellcheck source=selftests/drivers/sroce/lib.sh
source "$(dirname "$0")/lib.sh"
sr_require_sroce
command -v python3 >/dev/null || sr_skip "python3 missing"

DEV=sroce_v${SR_TAG}
sr_dmesg_mark

sr_ns_pair || sr_skip "cannot build the veth/netns topology"
sr_link_add "$DEV" "$A"
MAC=$(cat "/sys/class/net/$A/address")
sr_wait_gid "$DEV" "$IP4" || sr_fail "IPv4 GID never appeared"
sr_wait_gid "$DEV" "$IP6" || sr_fail "IPv6 GID never appeared"
sr_pkt_start "$NS" || sr_fail "roce_pkt.py did not start"

COUNTERS="rx_roce_packets rx_drop_malformed rx_drop_bad_opcode rx_drop_bad_pkey rx_drop_bad_icrc rx_drop_no_qp"
HW=/sys/class/infiniband/$DEV/ports/1/hw_counters

# counters NAME: read COUNTERS into the associative array NAME (with read,
# not a command per counter: this runs hundreds of times under TCG).
counters() {
	# shellcheck disable=SC2034 # written through read
	local -n into=$1
	local c
	for c in $COUNTERS; do read -r "into[$c]" <"$HW/$c"; done
}

# settle COUNTER TARGET: wait (up to 2 s) until COUNTER reaches TARGET, then
# a little longer for the counters a frame moves after it.
settle() {
	local i v
	for ((i = 0; i < 40; i++)); do
		read -r v <"$HW/$1"
		[ "$v" -ge "$2" ] && break
		sleep 0.05
	done
	sleep 0.05
}

# expect COUNTER DESCRIPTION -- roce_pkt.py options: send one frame of each
# address family; COUNTER (and rx_roce_packets) must rise by exactly 2 and
# every other counter stay put.
expect() {
	local want=$1 desc=$2 c ok=1
	local -A before after
	shift 3
	counters before
	sr_pkt "$B" "$MAC" "$PEER4" "$IP4" --also "$PEER6" "$IP6" "$@" || ok=0
	settle rx_roce_packets $((before[rx_roce_packets] + 2))
	counters after
	for c in $COUNTERS; do
		if [ "$c" = "$want" ] || [ "$c" = rx_roce_packets ]; then
			[ "${after[$c]}" = $((before[$c] + 2)) ] || ok=0
		else
			[ "${after[$c]}" = "${before[$c]}" ] || ok=0
		fi
	done
	if [ $ok != 1 ]; then
		sr_log "before: $(declare -p before)"
		sr_log "after:  $(declare -p after)"
	fi
	sr_check "$desc -> $want" test $ok = 1
}

expect rx_drop_no_qp "valid RC SEND_ONLY" --
expect rx_drop_no_qp "valid, zero-length payload" -- --payload 0
expect rx_drop_no_qp "valid, 3 pad bytes" -- --payload 61 --pad 3
expect rx_drop_no_qp "valid RC WRITE_ONLY with RETH" -- --opcode 0x0a
expect rx_drop_no_qp "valid RC READ_REQUEST" -- --opcode 0x0c --payload 0
expect rx_drop_no_qp "valid ACK" -- --opcode 0x11 --payload 0
expect rx_drop_no_qp "valid UD SEND_ONLY_IMM" -- --opcode 0x65
expect rx_drop_no_qp "valid CNP" -- --opcode 0x81 --payload 0
expect rx_drop_no_qp "variant fields rewritten (TOS/TC, TTL, flow)" -- \
	--tos 0xbb --ttl 3 --flow 0xabcde
expect rx_drop_no_qp "FECN/BECN set" -- --resv8a 0xc0
expect rx_drop_no_qp "limited-member default P_Key" -- --pkey 0x7fff
expect rx_drop_bad_icrc "one ICRC bit flipped" -- --bad-icrc
expect rx_drop_bad_icrc "a payload byte changed under a valid header" -- \
	--bad-icrc --payload 1000
expect rx_drop_bad_opcode "reserved RC opcode 0x15" -- --opcode 0x15
expect rx_drop_bad_opcode "RD transport" -- --opcode 0x44
expect rx_drop_bad_opcode "UC READ_REQUEST" -- --opcode 0x2c --payload 0
expect rx_drop_bad_opcode "opcode 0xff" -- --opcode 0xff
expect rx_drop_bad_pkey "P_Key 0x1234" -- --pkey 0x1234
expect rx_drop_malformed "transport version 1" -- --tver 1
expect rx_drop_malformed "payload on a READ_REQUEST" -- --opcode 0x0c
expect rx_drop_malformed "pad on an ACK" -- --opcode 0x11 --payload 0 --pad 2
expect rx_drop_malformed "payload plus pad not a multiple of 4" -- \
	--payload 61
expect rx_drop_malformed "pad longer than the data" -- --payload 0 --pad 3 \
	--pad-bytes 0
expect rx_drop_malformed "RETH cut short" -- --opcode 0x0a --payload 0 \
	--ext-len 8
expect rx_drop_malformed "UDP length beyond the frame" -- --udp-len-delta 8
expect rx_drop_malformed "UDP length short of the IP length" -- \
	--udp-len-delta -4
expect rx_drop_malformed "frame cut short (IP length lies)" -- --truncate 20
expect rx_drop_malformed "nothing after the BTH" -- --payload 0 \
	--truncate 4

# Each ICRC implementation the module offers (sroce_icrc.c), measured
# against roce_pkt.py's own: at least the library's crc32_le(), and the
# crypto API's crc32 wherever the kernel has one.
ICRC=/sys/module/sroce/parameters/icrc
if [ -w "$ICRC" ]; then
	sr_on_exit "echo auto >$ICRC"
	sr_log "ICRC implementation at load: $(cat "$ICRC")"
	n=0
	for impl in lib crypto; do
		if ! echo "$impl" 2>/dev/null >"$ICRC"; then
			sr_log "icrc=$impl is not offered by this kernel"
			continue
		fi
		n=$((n + 1))
		sr_check "icrc=$impl in use" grep -q "^$impl " "$ICRC"
		expect rx_drop_no_qp "icrc=$impl: valid 1000-byte SEND" -- \
			--payload 1000
		expect rx_drop_no_qp "icrc=$impl: valid 4-byte SEND" -- --payload 4
		expect rx_drop_bad_icrc "icrc=$impl: a payload byte changed" -- \
			--bad-icrc --payload 1000
	done
	sr_check "the library's crc32_le is always offered" test "$n" -ge 1
	sr_check "icrc=auto measures and picks one" \
		sh -c "echo auto >$ICRC && grep -Eq '^(lib|crypto) ' $ICRC"
	sr_check "icrc=nonsense refused" sh -c "! echo nonsense 2>/dev/null >$ICRC"
else
	sr_fail "no writable icrc module parameter"
fi

# IPv4 only: a bad header checksum.
before=$(sr_counter "$DEV" rx_drop_malformed)
sr_pkt "$B" "$MAC" "$PEER4" "$IP4" --bad-ip-csum || sr_fail "roce_pkt.py"
settle rx_drop_malformed $((before + 1))
sr_check "IPv4 header checksum wrong -> rx_drop_malformed" \
	test "$(sr_counter "$DEV" rx_drop_malformed)" = $((before + 1))

# Fragments are the IP stack's business, whatever their ports.
declare -A frag_before frag_after
counters frag_before
sr_pkt "$B" "$MAC" "$PEER4" "$IP4" --more-frags || sr_fail "roce_pkt.py"
sleep 0.2
counters frag_after
sr_check "IPv4 fragment left to the stack" \
	test "$(declare -p frag_after | cut -d= -f2-)" = \
	"$(declare -p frag_before | cut -d= -f2-)"

# A burst: every frame is accounted for, none lost or double counted.
before=$(sr_counter "$DEV" rx_drop_no_qp)
sr_pkt "$B" "$MAC" "$PEER4" "$IP4" --count 500 --payload 1024 ||
	sr_fail "roce_pkt.py"
settle rx_drop_no_qp $((before + 500))
sr_check "500-frame burst all counted" \
	test "$(sr_counter "$DEV" rx_drop_no_qp)" = $((before + 500))
sr_check "kernel log clean" sr_dmesg_clean
sr_done
