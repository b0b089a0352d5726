#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Helpers shared by the sroce shell selftests. Each test sources this file,
# creates what it needs with the sr_* helpers (names derived from the PID so
# tests never collide) and gets everything removed again by sr_cleanup,
# which is installed as the EXIT trap.
#
# Exit codes follow kselftest: 0 pass, 1 fail, 4 skip.

KSFT_PASS=0
KSFT_FAIL=1
KSFT_SKIP=4

# shellcheck disable=SC2034 # used by the tests that source this file
SR_TAG=$(( $$ % 100000 ))
SR_CLEANUP=()
SR_FAILED=0
SR_NTEST=0
SR_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# Tools built next to the tests (installed) or in the repo's build tree.
for d in "$SR_DIR" "$SR_DIR/../../../build/user/selftests"; do
	if [ -x "$d/sroce_ctl" ]; then
		# shellcheck disable=SC2034
		SR_CTL="$d/sroce_ctl"
		break
	fi
done

sr_log() { echo "# $*"; }

sr_skip() {
	echo "ok 1 # SKIP $*"
	exit $KSFT_SKIP
}

# sr_check DESCRIPTION CMD... : one TAP line per check.
sr_check() {
	local desc=$1
	shift
	SR_NTEST=$((SR_NTEST + 1))
	if "$@"; then
		echo "ok $SR_NTEST $desc"
	else
		echo "not ok $SR_NTEST $desc"
		SR_FAILED=1
	fi
}

sr_fail() {
	SR_NTEST=$((SR_NTEST + 1))
	echo "not ok $SR_NTEST $*"
	SR_FAILED=1
}

sr_done() {
	echo "1..$SR_NTEST"
	[ "$SR_FAILED" = 0 ] && exit $KSFT_PASS
	exit $KSFT_FAIL
}

sr_cleanup() {
	local i
	# Undo in reverse order of creation.
	for ((i = ${#SR_CLEANUP[@]} - 1; i >= 0; i--)); do
		eval "${SR_CLEANUP[i]}" >/dev/null 2>&1 || true
	done
	SR_CLEANUP=()
}
trap sr_cleanup EXIT

sr_on_exit() { SR_CLEANUP+=("$*"); }

sr_require_root() {
	[ "$(id -u)" = 0 ] || sr_skip "needs root"
}

# sr_require_rxe: rdma_rxe loaded, to compare with; unloaded again at exit
# if this test loaded it (it owns UDP port 4791 while loaded, which later
# tests of the stack's view of that port would see). False if it cannot.
sr_require_rxe() {
	[ -d /sys/module/rdma_rxe ] && return 0
	modprobe rdma_rxe 2>/dev/null || return 1
	sr_on_exit "modprobe -r rdma_rxe"
}

# Load the module; skip (not fail) when it is not installed.
sr_require_sroce() {
	sr_require_root
	command -v rdma >/dev/null || sr_skip "iproute2 rdma tool missing"
	modprobe sroce 2>/dev/null || sr_skip "sroce module not available"
}

# sr_veth NAME_A NAME_B: a veth pair, both ends up.
sr_veth() {
	ip link add "$1" type veth peer name "$2" || return 1
	sr_on_exit "ip link del $1"
	ip link set "$1" up && ip link set "$2" up
}

# sr_ns_pair: the usual two-host topology, named from the test's tag.
# Sets A (here, 198.18.N.1 and 2001:db8:N::1) and B (in netns NS, .2 and
# ::2), with IP4/PEER4/IP6/PEER6 holding the addresses. N is never 0, so
# the IPv6 addresses are written the way tools print them.
sr_ns_pair() {
	A=sr${SR_TAG}a B=sr${SR_TAG}b NS=srns${SR_TAG}
	local n=$(( SR_TAG % 250 + 1 ))
	IP4=198.18.$n.1 PEER4=198.18.$n.2
	IP6=2001:db8:$n::1 PEER6=2001:db8:$n::2
	ip netns add "$NS" || return 1
	sr_on_exit "ip netns del $NS"
	ip link add "$A" type veth peer name "$B" netns "$NS" || return 1
	sr_on_exit "ip link del $A"
	ip link set "$A" up
	ip addr add "$IP4/24" dev "$A"
	ip addr add "$IP6/64" dev "$A" nodad
	ip -n "$NS" link set lo up
	ip -n "$NS" link set "$B" up
	ip -n "$NS" addr add "$PEER4/24" dev "$B"
	ip -n "$NS" addr add "$PEER6/64" dev "$B" nodad
}

# sr_link_add IBDEV NETDEV [TYPE]: create an RDMA device, removed at exit.
# TYPE: default sroce (rxe for rdma_rxe).
sr_link_add() {
	rdma link add "$1" type "${3:-sroce}" netdev "$2" || return 1
	sr_on_exit "rdma link del $1"
}

# sr_loopback_link IBDEV NETDEV ADDR [TYPE]: a device looping back on its
# own veth (NETDEV, peer NETDEVp, MTU 9000) with the IPv4 ADDR/24, all
# removed at exit; when it returns, the GID of ADDR is there and the port
# is active. Skips the test when the veth cannot be made, fails it when
# rdma link add fails. TYPE: default sroce.
sr_loopback_link() {
	sr_veth "$2" "${2}p" || sr_skip "cannot create a veth pair"
	ip link set "$2" mtu 9000
	ip link set "${2}p" mtu 9000
	ip addr add "$3/24" dev "$2"
	if ! sr_link_add "$1" "$2" "${4:-sroce}"; then
		sr_fail "rdma link add $1"
		sr_done
	fi
	sr_check "GID of $3" sr_wait_gid "$1" "$3"
	sr_wait_port_state "$1" PORT_ACTIVE || sr_log "port of $1 not active"
}

# sr_loopback_setup LETTER PORT_BASE: what a test on one sroce device in
# loopback starts with: a kernel log mark, a temporary directory TMP, its
# own ports from PORT (PORT_BASE plus ten per tag), device LDEV on veth L
# (sroce_LETTER<tag>, sr<tag>LETTER) with address L4, and the GID index
# G of L4; no GID ends the test.
# shellcheck disable=SC2034 # for the scripts that call it
sr_loopback_setup() {
	sr_dmesg_mark
	TMP=$(mktemp -d)
	sr_on_exit "rm -rf $TMP"
	PORT=$(( $2 + (SR_TAG % 400) * 10 ))
	L=sr$SR_TAG$1
	LDEV=sroce_$1$SR_TAG
	L4=198.19.$(( SR_TAG % 250 + 1 )).1
	sr_loopback_link "$LDEV" "$L" "$L4"
	G=$(sr_gid_index "$LDEV" "$L4") || sr_done
}

# sr_link_add_ns NS IBDEV NETDEV [TYPE]: the same for a netdev in netns
# NS (the link is made from inside NS, where the netdev's name resolves).
# The RDMA device is visible in every netns in the default "shared" rdma
# netns mode, so it is used and removed from here. TYPE: default sroce.
sr_link_add_ns() {
	ip netns exec "$1" rdma link add "$2" type "${4:-sroce}" netdev "$3" ||
		return 1
	sr_on_exit "rdma link del $2"
}

# sr_tool NAME: path of a C test or tool built next to the tests (when
# installed) or in the repository's build tree; fails if there is none.
sr_tool() {
	local d
	for d in "$SR_DIR" "$SR_DIR/../../../build/user/selftests"; do
		if [ -x "$d/$1" ]; then
			echo "$d/$1"
			return 0
		fi
	done
	return 1
}

# The RC test programs: they share rc_fixture.h and its environment
# (SROCE_DEV_A, SROCE_GID_A, SROCE_DEV_B, ...).
SR_RC_TESTS="rc_ops rc_errors rc_mw rc_srq"

# sr_rc_tests SECONDS VAR=VALUE...: run every RC test program with that
# environment, each bounded by SECONDS; true when all of them pass.
sr_rc_tests() {
	local secs=$1 t path st=0
	shift
	for t in $SR_RC_TESTS; do
		if ! path=$(sr_tool "$t"); then
			echo "$t not built"
			st=1
			continue
		fi
		timeout -k 10 "$secs" env "$@" "$path" || st=1
	done
	return $st
}

# sr_rc_verify LOG PORT GID_A GID_B [reverse]: rc_verify across
# sr_sroce_ns_pair's link, server on $DA here, client on $DB in $NS (with
# reverse: server on $DB, client on $DA; the client drives, the server
# answers its READs); true when both sides pass. Their output goes to
# LOG.srv and LOG.cli, and on failure into TAP comments too.
sr_rc_verify() {
	local verify spid crc src=0 in_ns=(ip netns exec "$NS")
	local s_dev=$DA s_gid=$3 s_in=() c_dev=$DB c_gid=$4 c_in=("${in_ns[@]}")
	local to=$IP4

	verify=$(sr_tool rc_verify) || return 1
	if [ "${5:-}" = reverse ]; then
		s_dev=$DB s_gid=$4 s_in=("${in_ns[@]}") to=$PEER4
		c_dev=$DA c_gid=$3 c_in=()
	fi
	"${s_in[@]}" timeout -k 5 600 "$verify" server "$s_dev" "$s_gid" "$2" \
		>"$1.srv" 2>&1 &
	spid=$!
	"${c_in[@]}" timeout -k 5 600 "$verify" client "$c_dev" "$c_gid" "$to" \
		"$2" >"$1.cli" 2>&1
	crc=$?
	wait "$spid" || src=$?
	[ "$src" = 0 ] && [ "$crc" = 0 ] && return 0
	sed 's/^/# rc_verify server: /' "$1.srv"
	sed 's/^/# rc_verify client: /' "$1.cli"
	return 1
}

# sr_ns_pair_gids: after sr_sroce_ns_pair, the GID indexes of both ends'
# addresses: NS_GID[A4], NS_GID[B4] (IPv4 of $DA and $DB), NS_GID[A6],
# NS_GID[B6] (IPv6); a missing one fails.
declare -A NS_GID=()
# shellcheck disable=SC2034 # for the scripts that source this file
sr_ns_pair_gids() {
	NS_GID[A4]=$(sr_gid_index "$DA" "$IP4") || sr_fail "no IPv4 GID on $DA"
	NS_GID[B4]=$(sr_gid_index "$DB" "$PEER4") || sr_fail "no IPv4 GID on $DB"
	NS_GID[A6]=$(sr_gid_index "$DA" "$IP6") || sr_fail "no IPv6 GID on $DA"
	NS_GID[B6]=$(sr_gid_index "$DB" "$PEER6") || sr_fail "no IPv6 GID on $DB"
}

# sr_run_indented CMD...: run CMD with its output (stdout and stderr)
# turned into TAP comments; returns CMD's exit status.
sr_run_indented() {
	"$@" 2>&1 | sed 's/^/# /'
	return "${PIPESTATUS[0]}"
}

sr_ibdev_exists() { [ -e "/sys/class/infiniband/$1" ]; }

# sr_alive PID: the process exists and is not a zombie (a zombie has
# already released its memory and files).
sr_alive() {
	local stat
	{ stat=$(<"/proc/$1/stat"); } 2>/dev/null || return 1
	stat=${stat##*) }
	[ "${stat%% *}" != Z ]
}

# sr_kill_tool PID...: SIGKILL each PID's children, its process group
# and the PID, and wait (10 s at most) until the children are gone. PIDs
# are the "timeout"/"ip netns exec" wrappers a test starts tools under
# (timeout leads a process group of its own): killing only a wrapper
# would leave the tool itself running. A process that exited has
# released its memory and files, so its verbs objects are destroyed.
# Fails when a child outlives the wait.
sr_kill_tool() {
	local p kids=() i alive
	command -v pgrep >/dev/null || { sr_log "pgrep missing"; return 1; }
	for p in "$@"; do
		# shellcheck disable=SC2207
		kids+=($(pgrep -P "$p"))
	done
	[ ${#kids[@]} -gt 0 ] && kill -9 "${kids[@]}" 2>/dev/null
	for p in "$@"; do
		kill -9 -- "-$p" 2>/dev/null
	done
	kill -9 "$@" 2>/dev/null
	for ((i = 0; i < 100; i++)); do
		alive=0
		for p in "${kids[@]}"; do
			sr_alive "$p" && alive=1
		done
		[ $alive = 0 ] && return 0
		sleep 0.1
	done
	return 1
}

# sr_wait_gone IBDEV [SECONDS]: device disappears within the bound.
sr_wait_gone() {
	local i
	for ((i = 0; i < ${2:-10} * 10; i++)); do
		sr_ibdev_exists "$1" || return 0
		sleep 0.1
	done
	return 1
}

# sr_port_field IBDEV FIELD: a port field as ibv_devinfo prints it.
sr_port_field() {
	ibv_devinfo -d "$1" 2>/dev/null |
		awk -v f="$2:" '$1 == f { print $2; exit }'
}

# sr_counter IBDEV NAME: an sroce hw counter of port 1. Read by bash
# itself: each program started costs a tenth of a second under emulation.
sr_counter() {
	local v
	read -r v 2>/dev/null <"/sys/class/infiniband/$1/ports/1/hw_counters/$2" &&
		echo "$v"
}

# sr_pipe_start VAR CMD...: start CMD in the background with its stdin
# and stdout on two FIFOs, for a test that talks to a helper line by line
# and pays for starting it once (Python takes 1 to 2 s under TCG). CMD
# says "ready" first; VAR_PID is its process. Use sr_pipe_write and
# sr_pipe_read. At exit its stdin is closed, and it is killed unless it
# ended within 5 s. Not a coprocess: bash keeps one at a time.
sr_pipe_start() {
	local var=$1 d pid
	shift
	d=$(mktemp -d) && mkfifo "$d/in" "$d/out" || return 1
	"$@" <"$d/in" >"$d/out" &
	pid=$!
	# Opened in the order the child opens them, or both would wait.
	eval "exec {${var}_W}>\"\$d/in\" {${var}_R}<\"\$d/out\""
	rm -rf "$d"
	printf -v "${var}_PID" %s "$pid"
	sr_on_exit "sr_pipe_stop $var"
	sr_pipe_read "$var" 30 && [ "$SR_PIPE_LINE" = ready ] && return 0
	sr_log "$*: did not start (${SR_PIPE_LINE:-no answer})"
	kill "$pid" 2>/dev/null
	return 1
}

# sr_pipe_stop VAR: end sr_pipe_start's helper VAR. Later children
# inherit its descriptors (bash sets no close-on-exec), so one that is
# still running keeps its stdin open: hence the kill.
sr_pipe_stop() {
	local w=${1}_W r=${1}_R pid=${1}_PID i
	eval "exec ${!w}>&- ${!r}<&-"
	for ((i = 0; i < 50; i++)); do
		kill -0 "${!pid}" 2>/dev/null || break
		sleep 0.1
	done
	kill -0 "${!pid}" 2>/dev/null && kill -KILL "${!pid}"
	wait "${!pid}"
}

# sr_pipe_write VAR LINE: send LINE to helper VAR; fails, without the
# SIGPIPE that would end the test, if the helper is gone.
sr_pipe_write() {
	local w=${1}_W pid=${1}_PID
	SR_PIPE_LINE=
	kill -0 "${!pid}" 2>/dev/null &&
		(printf '%s\n' "$2" >&"${!w}") 2>/dev/null && return 0
	sr_log "helper $1 is gone" >&2
	return 1
}

# sr_pipe_read VAR SECS: one line from helper VAR into SR_PIPE_LINE, or
# fail after SECS. A helper that did not answer in time is stopped: its
# late answer would be taken for the next request's.
sr_pipe_read() {
	local r=${1}_R pid=${1}_PID
	SR_PIPE_LINE=
	read -r -t "$2" SR_PIPE_LINE <&"${!r}" && return 0
	kill "${!pid}" 2>/dev/null
	return 1
}

# sr_pkt_start NETNS: roce_pkt.py --batch in NETNS, for sr_pkt.
sr_pkt_start() {
	sr_pipe_start SR_PKT ip netns exec "$1" python3 "$SR_DIR/roce_pkt.py" --batch
}

# sr_pkt ARGS...: roce_pkt.py's arguments for one frame set (printable
# ASCII: printf %q's $'...' is not Python's shlex), sent through
# sr_pkt_start's helper; fails if it could not send them. With --reply,
# prints its answer line ("reply ..."). Not for --help.
sr_pkt() {
	sr_pipe_write SR_PKT "$(printf '%q ' "$@")" || return 1
	while sr_pipe_read SR_PKT 60; do
		case $SR_PIPE_LINE in
		sent) return 0 ;;
		"reply "*) echo "$SR_PIPE_LINE" ;;
		*) sr_log "roce_pkt.py: $SR_PIPE_LINE" >&2; return 1 ;;
		esac
	done
	sr_log "roce_pkt.py: no answer (gone, or 60 s passed)" >&2
	return 1
}

# sr_backlog_drops: packets the CPUs' receive backlogs dropped so far,
# all CPUs (/proc/net/softnet_stat; a veth delivers through them).
sr_backlog_drops() {
	local d sum=0
	for d in $(awk '{ print $2 }' /proc/net/softnet_stat); do
		sum=$((sum + 16#$d))
	done
	echo $sum
}

# sr_snap IBDEV COUNTER...: remember those counters of IBDEV for sr_grew.
declare -A SR_SNAP=()
sr_snap() {
	local d=$1 c
	shift
	for c in "$@"; do
		SR_SNAP[$d.$c]=$(sr_counter "$d" "$c")
	done
}

# sr_grew IBDEV COUNTER: how much the counter grew since sr_snap.
sr_grew() { echo $(( $(sr_counter "$1" "$2") - ${SR_SNAP[$1.$2]:-0} )); }

# The DCQCN profile for links slower than about 10 Gb/s, as the tuning
# page gives it (module parameters, NAME=VALUE).
# shellcheck disable=SC2034 # for the scripts that source this file
SR_CC_SLOW_LINK="dcqcn_max_rate_mbps=1000 dcqcn_alpha_period_us=1000 dcqcn_time_reset_us=1500 dcqcn_byte_reset=262144"

# sr_cc_shape NETDEV RATE PACKETS: NETDEV's egress a token bucket at RATE
# over one FIFO of PACKETS that marks ECN-capable packets Congestion
# Experienced once they have waited 1 ms (fq_codel with a single flow
# queue: its per-flow queues would share the link fairly by themselves,
# hiding what congestion control does). Replaces any root qdisc, since
# fq_codel cannot change its limit once it has a flow.
sr_cc_shape() {
	tc qdisc del dev "$1" root 2>/dev/null
	tc qdisc add dev "$1" root handle 1: tbf rate "$2" burst 32kb \
		latency 100ms &&
	tc qdisc add dev "$1" parent 1:1 handle 10: fq_codel flows 1 \
		limit "$3" ce_threshold 1ms ecn
}

# sr_rx_in_order NETDEV [NETNS] [CPU]: every packet NETDEV (in NETNS)
# receives goes to one CPU's receive backlog (RPS; CPU 0 unless given, and
# below 32: one word of mask; a CPU past the last is taken as 0), so
# the stack takes them in the order they were sent, as a wire keeps them.
# A veth queues each packet on the backlog of the CPU that transmits it,
# and that CPU can change within one stream: a qdisc is dequeued by
# whichever CPU runs it (sending, say, an ACK), and rdma_rxe sends from
# whichever CPU ran its tasklet. Two backlogs drain independently, so a
# packet could overtake an earlier one, and the receiver would rightly NAK it.
sr_rx_in_order() {
	local -a x=()
	local cpu=${3:-0}
	[ -n "${2:-}" ] && x=(ip netns exec "$2")
	[ "$cpu" -lt "$(nproc)" ] || cpu=0
	# Read back: a mask of no online CPU is taken without an error.
	"${x[@]}" sh -c "f=/sys/class/net/$1/queues/rx-0/rps_cpus &&
		echo $(printf %x $((1 << cpu))) >\$f &&
		grep -q '[1-9a-f]' \$f"
}

# sr_mark_ce NETDEV [NETNS]: every IPv4 RoCEv2 frame NETDEV (in NETNS)
# receives marked Congestion Experienced before any device sees it,
# ECN-capable or not, its IP checksum fixed after it (the ICRC leaves the
# ECN bits out); undone at exit.
sr_mark_ce() {
	local -a x=()
	[ -n "${2:-}" ] && x=(ip netns exec "$2")
	"${x[@]}" tc qdisc add dev "$1" clsact &&
	sr_on_exit "${x[*]} tc qdisc del dev $1 clsact" &&
	"${x[@]}" tc filter add dev "$1" ingress protocol ip u32 \
		match ip protocol 17 0xff match ip dport 4791 0xffff \
		action pedit ex munge ip tos set 3 retain 3 pipe action csum ip
}

# sr_cc_drops NETDEV: packets sr_cc_shape's FIFO on NETDEV dropped so far.
sr_cc_drops() {
	tc -s qdisc show dev "$1" handle 10: |
		sed -n 's/.*dropped \([0-9]*\).*/\1/p' | head -n 1
}

# sr_wait_port_state IBDEV STATE [SECONDS]
sr_wait_port_state() {
	local i
	for ((i = 0; i < ${3:-5} * 10; i++)); do
		[ "$(sr_port_field "$1" state)" = "$2" ] && return 0
		sleep 0.1
	done
	return 1
}

# sr_gid_of ADDR: the GID of an IPv4 or IPv6 address as sysfs shows it
# (eight groups of four hex digits; IPv4 as ::ffff:a.b.c.d).
sr_gid_of() {
	local a=$1 b1 b2 b3 b4 g i out head=() tail=() all=()
	if [[ $a != *:* ]]; then
		IFS=. read -r b1 b2 b3 b4 <<<"$a"
		printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x\n' \
			"$b1" "$b2" "$b3" "$b4"
		return
	fi
	if [[ $a == *::* ]]; then
		[ -n "${a%%::*}" ] && IFS=: read -ra head <<<"${a%%::*}"
		[ -n "${a#*::}" ] && IFS=: read -ra tail <<<"${a#*::}"
	else
		IFS=: read -ra head <<<"$a"
	fi
	all=("${head[@]}")
	for ((i = ${#head[@]} + ${#tail[@]}; i < 8; i++)); do all+=(0); done
	all+=("${tail[@]}")
	out=
	for ((i = 0; i < 8; i++)); do
		printf -v g '%04x' "0x${all[i]}"
		out+=${out:+:}$g
	done
	echo "$out"
}

# sr_gid_index IBDEV ADDR [SECONDS]: print the index of port 1's RoCE v2
# GID of an IPv4 or IPv6 address, waiting up to SECONDS (default 10) for
# it: the core adds GIDs from a workqueue. One grep over the table: a
# process per entry is slow under emulation.
sr_gid_index() {
	local port=/sys/class/infiniband/$1/ports/1 gid files f i n t
	gid=$(sr_gid_of "$2")
	for ((n = 0; n < ${3:-10} * 10; n++)); do
		files=$(grep -lx "$gid" "$port"/gids/* 2>/dev/null) || files=
		for f in $files; do
			i=${f##*/}
			{ t=$(<"$port/gid_attrs/types/$i"); } 2>/dev/null
			if [ "$t" = "RoCE v2" ]; then
				echo "$i"
				return 0
			fi
		done
		sleep 0.1
	done
	return 1
}

# sr_wait_gid IBDEV ADDR [SECONDS]: the RoCE v2 GID of an IPv4 or IPv6
# address is in the device's table.
sr_wait_gid() { sr_gid_index "$@" >/dev/null; }

# sr_wait_listen PORT [NS] [SECONDS]: a TCP socket listens on PORT (in
# netns NS if not empty) within SECONDS (default 30).
sr_wait_listen() {
	local i ns=()
	[ -n "${2:-}" ] && ns=(ip netns exec "$2")
	for ((i = 0; i < ${3:-30} * 10; i++)); do
		"${ns[@]}" ss -Hltn "sport = :$1" 2>/dev/null | grep -q . &&
			return 0
		sleep 0.1
	done
	return 1
}

# sr_wait_output FILE REGEX [SECONDS]: a line matching REGEX appears in
# FILE (a program's output, line-buffered) within SECONDS (default 30).
sr_wait_output() {
	local i
	for ((i = 0; i < ${3:-30} * 10; i++)); do
		grep -qE -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# sr_wait_mc_group GROUP [NS] [SECONDS]: some netdev (in netns NS if not
# empty) has joined IPv4 multicast GROUP within SECONDS (default 30).
sr_wait_mc_group() {
	local i ns=()
	[ -n "${2:-}" ] && ns=(ip netns exec "$2")
	for ((i = 0; i < ${3:-30} * 10; i++)); do
		"${ns[@]}" ip -4 maddr show 2>/dev/null |
			awk -v g="$1" '$1 == "inet" && $2 == g { f = 1 } END { exit !f }' &&
			return 0
		sleep 0.1
	done
	return 1
}

# sr_cm_listeners: how many RDMA CM IDs listen, on any device.
sr_cm_listeners() {
	rdma resource show cm_id 2>/dev/null | grep -c "state LISTEN"
}

# sr_wait_cm_listen COUNT [SECS]: wait until more than COUNT RDMA CM IDs
# listen (a CM listener shows in no socket table).
sr_wait_cm_listen() {
	local i
	for ((i = 0; i < ${2:-30} * 10; i++)); do
		[ "$(sr_cm_listeners)" -gt "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

# sr_tracefs: tracefs mounted at TRACEFS, with instances (skips the test
# without them).
TRACEFS=/sys/kernel/tracing
sr_tracefs() {
	[ -d "$TRACEFS/events" ] || mount -t tracefs nodev "$TRACEFS" 2>/dev/null
	[ -d "$TRACEFS/instances" ] || sr_skip "no tracefs with instances"
}

# sr_trace_instance NAME: a tracefs instance of the test's own in INST,
# with an 8 MiB buffer per CPU, removed at exit.
sr_trace_instance() {
	INST=$TRACEFS/instances/$1
	mkdir "$INST" || sr_fail "cannot make a trace instance"
	sr_on_exit "rmdir $INST"
	echo 8192 >"$INST/buffer_size_kb" ||
		sr_fail "cannot size the trace buffer"
}

# sr_trace_overrun: events the instance INST lost to a full buffer.
sr_trace_overrun() {
	cat "$INST"/per_cpu/cpu*/stats |
		awk '/^overrun:/ { n += $2 } END { print n + 0 }'
}

# sr_capture_start IFACE FILE: capture the RoCEv2 (UDP 4791) frames on
# IFACE into the pcapng FILE with dumpcap in the background (tshark's
# capturing half: tshark itself would first load every dissector, seconds
# under emulation), and wait, up to a minute, until it captures.
# sr_capture_stop ends it. One capture at a time.
sr_capture_start() {
	local i
	dumpcap -q -i "$1" -f "udp port 4791" -w "$2" >"$2.log" 2>&1 &
	SR_CAPTURE_PID=$!
	sr_on_exit "kill $SR_CAPTURE_PID"
	for ((i = 0; i < 600; i++)); do
		# After "Capturing on", once the interface and file are open.
		grep -q '^File: ' "$2.log" && return 0
		kill -0 "$SR_CAPTURE_PID" 2>/dev/null || break
		sleep 0.1
	done
	sed 's/^/# dumpcap: /' "$2.log"
	return 1
}

sr_capture_stop() {
	[ -n "${SR_CAPTURE_PID:-}" ] || return 1
	kill -INT "$SR_CAPTURE_PID" 2>/dev/null
	wait "$SR_CAPTURE_PID"
	SR_CAPTURE_PID=
}

# sr_tshark_read FILE [TSHARK ARGS...]: tshark -r FILE with the heuristic
# dissectors for InfiniBand payloads (RPC-over-RDMA, iSER, SMB Direct...)
# turned off: they take random test data for their protocols and report
# it malformed. Their names come from tshark itself, once per boot (in
# /tmp: the question takes seconds under emulation).
sr_tshark_read() {
	local f=$1 heur=/tmp/sroce-tshark-heuristics
	shift
	if [ -z "${SR_TSHARK_OPTS+set}" ]; then
		[ -s "$heur" ] || { tshark -G heuristic-decodes 2>/dev/null |
			awk -F '\t' '$1 == "infiniband.payload" && $2 != "ethertype" {
				printf "--disable-protocol %s ", $2 }' >"$heur.$$" &&
			mv -f "$heur.$$" "$heur"; }
		read -r -a SR_TSHARK_OPTS <"$heur"
	fi
	tshark -r "$f" "${SR_TSHARK_OPTS[@]}" "$@" 2>/dev/null
}

# sr_capture_summary FILE [FIELD]: one tshark pass over a capture (tshark
# starts slowly under emulation), printing "FRAMES ROCE BAD MAXLEN": frames
# in all, frames dissected as InfiniBand (tshark's name for RoCEv2 on UDP
# 4791), frames with an error-level expert note (malformed ones always
# have one) other than about checksums (RoCEv2 may send a zero UDP
# checksum even over IPv6, the ICRC protects the packet), and the longest
# frame in bytes. With FIELD (a tshark field such as eth.type), one line
# "VALUE FRAMES ROCE BAD MAXLEN" for each value FIELD takes instead.
sr_capture_summary() {
	sr_tshark_read "$1" -T fields -e frame.len -e infiniband.bth.opcode \
		-e _ws.expert.severity -e _ws.expert.group -e "${2:-frame.number}" |
		awk -F '\t' -v bykey="${2:+1}" '
		{
			key = bykey ? $5 : "all"
			if (!(key in n))
				keys[nk++] = key
			n[key]++
			if ($1 + 0 > max[key])
				max[key] = $1 + 0
			if ($2 != "")
				ib[key]++
			k = split($3, sev, ",")
			split($4, grp, ",")
			for (i = 1; i <= k; i++)
				# PI_ERROR, not PI_CHECKSUM
				if (sev[i] + 0 >= 8388608 && grp[i] + 0 != 16777216) {
					bad[key]++
					break
				}
		}
		END {
			if (!bykey && !nk)
				keys[nk++] = "all"
			for (j = 0; j < nk; j++) {
				key = keys[j]
				printf "%s%d %d %d %d\n", bykey ? key " " : "",
					n[key], ib[key], bad[key], max[key]
			}
		}'
}

# sr_target_start DEV LOCAL_IP PEER_IP: sroce_target (live RC QPs for a
# scripted peer) as sr_pipe_start's helper TGT, which ends when its stdin
# closes at exit; its stderr in $SR_TARGET_ERR. Fails unless it comes up.
sr_target_start() {
	local bin
	bin=$(sr_tool sroce_target) || return 1
	SR_TARGET_ERR=$(mktemp)
	sr_on_exit "rm -f $SR_TARGET_ERR"
	sr_pipe_start TGT "$bin" "$@" 2>"$SR_TARGET_ERR" ||
		{ sed 's/^/# /' "$SR_TARGET_ERR"; return 1; }
}

# tgt CMD: one command to sroce_target, its answer line on stdout.
tgt() {
	sr_pipe_write TGT "$*" && sr_pipe_read TGT 20 || SR_PIPE_LINE="(no answer)"
	echo "$SR_PIPE_LINE"
}

# The kernel must not have complained while the test ran.
sr_dmesg_mark() { SR_DMESG_LINES=$(dmesg | wc -l); }
# Clean: grep found none of the patterns (exit 1); a missing pattern file
# (exit 2) is not clean.
sr_dmesg_clean() {
	dmesg | tail -n +"$((SR_DMESG_LINES + 1))" |
		grep -Ef "$SR_DIR/../../../scripts/kernel-health.re"
	[ "${PIPESTATUS[2]}" = 1 ]
}

# sr_sroce_ns_pair: sr_ns_pair with MTU 9000 on both ends, and sroce
# devices $DA on $A (here) and $DB on $B (in $NS). Skips when the topology
# cannot be built; a device that cannot be added is a failure.
sr_sroce_ns_pair() {
	DA=sroce_a$SR_TAG
	DB=sroce_b$SR_TAG
	sr_ns_pair || sr_skip "cannot build the veth/netns topology"
	ip link set "$A" mtu 9000
	ip -n "$NS" link set "$B" mtu 9000
	sr_link_add "$DA" "$A" || sr_fail "rdma link add $DA on $A"
	sr_link_add_ns "$NS" "$DB" "$B" ||
		sr_fail "rdma link add $DB on $B in $NS"
}

# sr_roce_egress_filter DEV NETNS SELECTOR ACTION...: a prio qdisc at
# DEV's egress (in NETNS; here when empty) whose u32 filter applies ACTION
# to the RoCEv2 packets (UDP to 4791) SELECTOR matches: one u32 match in
# one word, its offset from the IPv4 header (the BTH begins at 28, after
# 20 bytes of IPv4 and 8 of UDP; "u8 0x11 0xff at 28": an RC
# Acknowledge). Gone with `tc qdisc del dev DEV root`.
sr_roce_egress_filter() {
	local dev=$1 sel=$3
	local -a x=()
	[ -n "$2" ] && x=(ip netns exec "$2")
	shift 3
	# shellcheck disable=SC2086 # the selector's words
	"${x[@]}" tc qdisc add dev "$dev" root handle 1: prio &&
		"${x[@]}" tc filter add dev "$dev" parent 1: protocol ip prio 1 \
			u32 match ip protocol 17 0xff match ip dport 4791 0xffff \
			match $sel "$@"
}

# sr_rxe_near NAME: after sr_sroce_ns_pair and sr_require_rxe, rdma_rxe
# named NAME takes the near end ($A) in $DA's place (it listens in init_net
# only); DA becomes NAME. False, the test failed, when it cannot be added.
sr_rxe_near() {
	rdma link del "$DA"
	DA=$1
	sr_link_add "$DA" "$A" rxe && return 0
	sr_fail "rdma link add $DA type rxe netdev $A"
	return 1
}

# sr_nvmeof_require: skip unless nvme-cli, nvmet-rdma, nvme-rdma, the nvmet
# configfs and a RAM disk (/dev/ram0) are there.
sr_nvmeof_require() {
	command -v nvme >/dev/null || sr_skip "nvme-cli missing"
	modprobe -a nvmet nvmet-rdma nvme-rdma 2>/dev/null ||
		sr_skip "nvmet-rdma or nvme-rdma not available"
	[ -d /sys/kernel/config/nvmet ] || sr_skip "nvmet configfs not mounted"
	[ -e /dev/ram0 ] || modprobe brd rd_nr=1 rd_size=131072 2>/dev/null
	[ -b /dev/ram0 ] || sr_skip "no RAM disk (brd)"
}

# sr_nvmet_export ADDR SVC NQN PORTID: an nvmet subsystem NQN exporting
# /dev/ram0 as namespace 1 on an RDMA port at ADDR:SVC, any host allowed;
# undone at exit (after a disconnect of NQN). Fails if configfs refuses.
sr_nvmet_export() {
	local addr=$1 svc=$2 nqn=$3 port=/sys/kernel/config/nvmet/ports/$4
	local sub=/sys/kernel/config/nvmet/subsystems/$3
	mkdir "$sub" || return 1
	sr_on_exit "rmdir $sub"
	echo 1 >"$sub/attr_allow_any_host"
	mkdir "$sub/namespaces/1"
	sr_on_exit "rmdir $sub/namespaces/1"
	echo -n /dev/ram0 >"$sub/namespaces/1/device_path"
	echo 1 >"$sub/namespaces/1/enable"
	sr_on_exit "echo 0 >$sub/namespaces/1/enable"
	mkdir "$port" || return 1
	sr_on_exit "rmdir $port"
	echo rdma >"$port/addr_trtype"
	echo ipv4 >"$port/addr_adrfam"
	echo "$addr" >"$port/addr_traddr"
	echo "$svc" >"$port/addr_trsvcid"
	ln -s "$sub" "$port/subsystems/$nqn"
	sr_on_exit "rm -f $port/subsystems/$nqn"
	sr_on_exit "nvme disconnect -n $nqn >/dev/null 2>&1"
}

# sr_nvme_connect ADDR SVC NQN [OPTION...]: nvme connect over RDMA with
# OPTIONs; the namespace's block device in $BDEV.
sr_nvme_connect() {
	local addr=$1 svc=$2 nqn=$3 i c
	shift 3
	BDEV=
	nvme connect -t rdma -a "$addr" -s "$svc" -n "$nqn" "$@" >/dev/null ||
		return 1
	for ((i = 0; i < 100; i++)); do
		for c in /sys/class/nvme/nvme*; do
			[ "$(cat "$c/subsysnqn" 2>/dev/null)" = "$nqn" ] || continue
			BDEV=$(find /dev -maxdepth 1 -name "$(basename "$c")n*" | head -1)
			[ -b "$BDEV" ] && return 0
		done
		sleep 0.1
	done
	return 1
}
