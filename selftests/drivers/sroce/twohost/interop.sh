#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Two hosts (scripts/twohost): sroce against sroce, and sroce against the
# kernel's rdma_rxe in both directions, over real virtio NICs joined by a
# QEMU socket link.
#
#   link 1 (eth0): guest a sroce  <->  guest b sroce
#   link 2 (eth1): guest a sroce  <->  guest b rdma_rxe
#
# Over each pairing (link 2 with each guest as the server in turn):
# ib_write_bw, ib_read_lat, ib_send_bw and ib_atomic_bw (perftest, both
# ends must finish and agree), rping -V and ibv_rc_pingpong -c (data
# verified by the tools), and rc_verify (every byte of SEND, WRITE and
# READ, and every atomic's returned and final value, checked). Guest a
# captures both links (dumpcap, then tshark): every frame must dissect as InfiniBand
# with no error-level expert note.
#
# On link 1, guest a marks every RoCEv2 frame it receives Congestion
# Experienced (tc pedit, before its device sees them), so it answers with
# CNPs throughout, which guest b's sroce must take and count, over real
# NICs, and act on: its rate is cut again and again (to a floor of 100
# Mb/s here, not the default 1, to keep the test short) while every
# step's data still checks out. Not on link 2: with CNPs going to
# rdma_rxe over these virtio NICs, guest b (rxe, 6.12) double-faulted in
# kmalloc in 5 of 17 runs (and once without CNPs). That was QEMU 7.2's
# CMPXCHG16B flags, not rxe or sroce (Documentation/testing.rst); guests
# now boot without CMPXCHG16B. cc_rxe.sh sends rxe CNPs in one guest.
# rxe's frames are not ECN-capable, so no network marks them and sroce
# sends rxe no CNPs outside these tests.
#
# usage (in a guest): interop.sh ROLE SYNC_DIR    ROLE: a or b
# shellcheck source=selftests/drivers/sroce/lib.sh
source "$(dirname "$0")/../lib.sh"
ROLE=${1:?role a or b} SYNC=${2:?sync directory}
case $ROLE in a) OTHER=b ME=1 PEER=2 ;; b) OTHER=a ME=2 PEER=1 ;;
*) sr_fail "role must be a or b"; sr_done ;; esac
sr_require_sroce
VERIFY=$(sr_tool rc_verify) || sr_skip "rc_verify not built"

# Rendezvous through SYNC_DIR, which both guests see.
# The other guest's test has ended, or its kernel died (scripts/twohost
# then leaves the abort file for it).
peer_gone() { [ -e "$SYNC/$OTHER.abort" ]; }
mark() { : >"$SYNC/$ROLE.$1"; }
await() {
	local i
	for ((i = 0; i < ${2:-600} * 5; i++)); do
		[ -e "$SYNC/$OTHER.$1" ] && return 0
		peer_gone && return 1
		sleep 0.2
	done
	return 1
}
sr_on_exit "mark abort"
# watched OUT CMD...: CMD with a 180 s limit and its output in OUT; CMD's
# exit status, or WATCH_GONE when the other guest went away and CMD was
# killed for it (timeout(1) runs CMD in its own process group).
WATCH_GONE=200
watched() {
	local out=$1 pid i=0
	shift
	timeout -k 5 180 "$@" >"$out" 2>&1 &
	pid=$!
	while kill -0 $pid 2>/dev/null; do
		if peer_gone; then
			kill $pid
			while kill -0 $pid 2>/dev/null && ((i++ < 25)); do
				sleep 0.2
			done
			kill -KILL -- -$pid 2>/dev/null
			wait $pid
			return $WATCH_GONE
		fi
		sleep 0.2
	done
	wait $pid
}

modprobe virtio_net
for ((i = 0; i < 100; i++)); do
	[ -e /sys/class/net/eth1 ] && break
	sleep 0.1
done
[ -e /sys/class/net/eth1 ] || { sr_fail "no eth0/eth1 (virtio NICs)"; sr_done; }
for l in 1 2; do
	nic=eth$((l - 1))
	ip link set "$nic" mtu 9000 up
	ip addr add "198.18.20$l.$ME/24" dev "$nic"
	ip addr add "2001:db8:20$l::$ME/64" dev "$nic" nodad
done

DEV1=sroce_l1
if [ "$ROLE" = a ]; then
	DEV2=sroce_l2 TYPE2=sroce
else
	modprobe rdma_rxe || sr_skip "rdma_rxe not available"
	DEV2=rxe_l2 TYPE2=rxe
fi
MIN_RATE=/sys/module/sroce/parameters/dcqcn_min_rate_mbps
if [ "$ROLE" = a ]; then
	sr_check "eth0: incoming RoCEv2 frames marked CE" sr_mark_ce eth0
else
	sr_on_exit "echo $(cat $MIN_RATE) > $MIN_RATE"
	echo 100 >$MIN_RATE
fi
sr_link_add "$DEV1" eth0 || sr_fail "rdma link add $DEV1"
rdma link add "$DEV2" type $TYPE2 netdev eth1 || sr_fail "rdma link add $DEV2"
sr_on_exit "rdma link del $DEV2"
sr_dmesg_mark

if [ "$ROLE" = a ]; then
	CAP=$(mktemp -d)
	sr_capture_start eth0 "$CAP/link1.pcap" || sr_fail "capture link 1"
	cap1=$SR_CAPTURE_PID
	sr_capture_start eth1 "$CAP/link2.pcap" || sr_fail "capture link 2"
	cap2=$SR_CAPTURE_PID
fi
# Both ends up, addresses and GIDs in place, before the first step.
for l in 1 2; do
	dev=DEV$l
	GIDX[l]=$(sr_gid_index "${!dev}" "198.18.20$l.$ME" 20) ||
		sr_fail "no RoCEv2 GID on ${!dev}"
done
mark up
await up 300 || sr_fail "guest $OTHER never came up"
ping -c 1 -W 5 "198.18.201.$PEER" >/dev/null || sr_fail "link 1 ping"
ping -c 1 -W 5 "198.18.202.$PEER" >/dev/null || sr_fail "link 2 ping"

# The steps: "NAME SERVER_ARGS ||| CLIENT_ARGS"; @DEV@, @GID@, @ME@ and
# @PEER@ (addresses) are filled in per link and side. perftest runs with
# its defaults: it sets each side's initiator depth from the peer's
# responder depth (rxe 128, sroce 16), which sroce's requester accepts.
STEPS=(
	"ib_write_bw ib_write_bw -d @DEV@ -x @GID@ -F -s 65536 -n 300 ||| ib_write_bw -d @DEV@ -x @GID@ -F -s 65536 -n 300 @PEER@"
	"ib_read_lat ib_read_lat -d @DEV@ -x @GID@ -F -s 64 -n 300 ||| ib_read_lat -d @DEV@ -x @GID@ -F -s 64 -n 300 @PEER@"
	"ib_send_bw ib_send_bw -d @DEV@ -x @GID@ -F -s 4096 -n 300 ||| ib_send_bw -d @DEV@ -x @GID@ -F -s 4096 -n 300 @PEER@"
	"ib_atomic_bw ib_atomic_bw -d @DEV@ -x @GID@ -F -n 300 ||| ib_atomic_bw -d @DEV@ -x @GID@ -F -n 300 @PEER@"
	"rping rping -s -a @ME@ -C 20 -S 4096 -V ||| rping -c -a @PEER@ -C 20 -S 4096 -V"
	"ibv_rc_pingpong ibv_rc_pingpong -d @DEV@ -g @GID@ -s 4096 -n 200 -c ||| ibv_rc_pingpong -d @DEV@ -g @GID@ -s 4096 -n 200 -c @PEER@"
	"rc_verify $VERIFY server @DEV@ @GID@ ||| $VERIFY client @DEV@ @GID@ @PEER@"
)

NSTEP=0
GONE_REPORTED=0
# report_gone DESC NAME: one failure for the other guest's going, however
# many steps it takes with it.
report_gone() {
	[ $GONE_REPORTED = 1 ] ||
		sr_fail "$1: guest $OTHER has gone; the steps from $2 on not run"
	GONE_REPORTED=1
}
# pairing LINK SERVER_ROLE DESC: every step over LINK, SERVER_ROLE serving;
# none once the other guest has gone.
pairing() {
	local l=$1 srv=$2 desc=$3 s name cmd out rc i dev=DEV$1
	for s in "${STEPS[@]}"; do
		name=${s%% *}
		peer_gone && { report_gone "$desc" "$name"; return; }
		NSTEP=$((NSTEP + 1))
		if [ "$ROLE" = "$srv" ]; then
			cmd=${s#* }
			cmd=${cmd%% |||*}
		else
			cmd=${s#*||| }
		fi
		cmd=${cmd//@DEV@/${!dev}}
		cmd=${cmd//@GID@/${GIDX[l]}}
		cmd=${cmd//@ME@/198.18.20$l.$ME}
		cmd=${cmd//@PEER@/198.18.20$l.$PEER}
		out=$(mktemp)
		if [ "$ROLE" = "$srv" ]; then
			(sleep 1 && mark "srv$NSTEP") &
			# shellcheck disable=SC2086 # cmd is a word list
			watched "$out" $cmd
			rc=$?
		else
			await "srv$NSTEP" 300 || { sr_fail "$desc: $name: no server"; continue; }
			# The server may still be on its way to listen.
			for ((i = 0; i < 10; i++)); do
				# shellcheck disable=SC2086 # cmd is a word list
				watched "$out" $cmd
				rc=$?
				{ [ $rc = 0 ] || [ $rc = $WATCH_GONE ]; } && break
				grep -qiE "couldn't connect|unable to connect|connection refused|rdma_connect|REJECTED|Couldn't read remote address" \
					"$out" || break
				sleep 1
			done
		fi
		if [ $rc = $WATCH_GONE ]; then
			rm -f "$out"
			report_gone "$desc" "$name"
			return
		fi
		[ $rc = 0 ] || sed 's/^/#   /' "$out" | tail -20
		sr_check "$desc: $name ($([ "$ROLE" = "$srv" ] && echo server || echo client))" \
			test $rc = 0
		rm -f "$out"
		mark "done$NSTEP"
		await "done$NSTEP" 300 || peer_gone ||
			sr_fail "$desc: $name: peer never finished"
	done
}

pairing 1 a "sroce<->sroce, a serving"
pairing 2 a "link 2 (a sroce, b rxe), a serving"
pairing 2 b "link 2 (a sroce, b rxe), b serving"

if [ "$ROLE" = a ]; then
	SR_CAPTURE_PID=$cap1 sr_capture_stop
	SR_CAPTURE_PID=$cap2 sr_capture_stop
	for l in 1 2; do
		read -r frames roce bad _ <<<"$(sr_capture_summary "$CAP/link$l.pcap")"
		sr_log "link $l capture: $frames frames, $roce InfiniBand, $bad with errors"
		sr_check "link $l: every RoCEv2 frame dissects cleanly" \
			test "$frames" -gt 1000 -a "$roce" = "$frames" -a "$bad" = 0
	done
	rm -rf "$CAP"
	# The marks went back as CNPs.
	sr_log "$DEV1: rx_ecn_ce $(sr_counter "$DEV1" rx_ecn_ce)," \
		"tx_cnp $(sr_counter "$DEV1" tx_cnp)"
	sr_check "$DEV1 answered the marks with CNPs" \
		test "$(sr_counter "$DEV1" tx_cnp)" -gt 0
else
	sr_log "$DEV1: rx_cnp $(sr_counter "$DEV1" rx_cnp)," \
		"cc_rate_cut $(sr_counter "$DEV1" cc_rate_cut)," \
		"cc_pace_wait $(sr_counter "$DEV1" cc_pace_wait)"
	sr_check "$DEV1 took a's CNPs" test "$(sr_counter "$DEV1" rx_cnp)" -gt 0
	sr_check "and slowed down" \
		test "$(sr_counter "$DEV1" cc_rate_cut)" -gt 0 -a \
		"$(sr_counter "$DEV1" cc_pace_wait)" -gt 0
fi
# Frames to and from the other guest cross a NIC: every one was checked,
# and every one sent carried its ICRC.
ours=("$DEV1")
[ "$TYPE2" = sroce ] && ours+=("$DEV2")
for dev in "${ours[@]}"; do
	sr_check "$dev: the ICRC of every packet from the other host checked" \
		test "$(sr_counter "$dev" rx_local_no_icrc)" = 0
	sr_check "$dev: every packet to the other host had its ICRC" \
		test "$(sr_counter "$dev" tx_local_no_icrc)" = 0
done
sr_check "kernel log clean" sr_dmesg_clean
mark end
await end 120
sr_done
