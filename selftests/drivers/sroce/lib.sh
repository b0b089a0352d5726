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
# ::2), with IP4/PEER4/IP6/PEER6 holding the addresses.
sr_ns_pair() {
	A=sr${SR_TAG}a B=sr${SR_TAG}b NS=srns${SR_TAG}
	local n=$(( SR_TAG % 250 ))
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

# sr_link_add IBDEV NETDEV: create an sroce device, removed at exit.
sr_link_add() {
	rdma link add "$1" type sroce netdev "$2" || return 1
	sr_on_exit "rdma link del $1"
}

sr_ibdev_exists() { [ -e "/sys/class/infiniband/$1" ]; }

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

# sr_counter IBDEV NAME: an sroce hw counter of port 1.
sr_counter() {
	cat "/sys/class/infiniband/$1/ports/1/hw_counters/$2" 2>/dev/null
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

# sr_wait_gid IBDEV ADDR [SECONDS]: the RoCEv2 GID of an IPv4 or IPv6
# address is in the device's table (the core adds GIDs from a workqueue).
sr_wait_gid() {
	local gid=$2 i
	case $gid in *:*) ;; *) gid=::ffff:$gid ;; esac
	for ((i = 0; i < ${3:-10} * 10; i++)); do
		ibv_devinfo -v -d "$1" 2>/dev/null |
			grep -qiE "[[:space:]]$gid, RoCE v2" && return 0
		sleep 0.1
	done
	return 1
}

# The kernel must not have complained while the test ran.
sr_dmesg_mark() { SR_DMESG_LINES=$(dmesg | wc -l); }
sr_dmesg_clean() {
	! dmesg | tail -n +"$((SR_DMESG_LINES + 1))" |
		grep -E 'BUG:|WARNING:|Oops|general protection|refcount_t|unregister_netdevice: waiting|blocked for more than'
}
