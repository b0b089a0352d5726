#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Teardown while RC traffic flows: ib_write_bw (and rc_verify, whose
# every byte is checked) between two sroce devices across a veth into
# another netns, and then, mid-transfer, in turn:
#   kill -9 of the client, of both ends; rdma link del of one device;
#   deletion of the netdev; MTU changes; rmmod of the module.
# Every case must end clean: the processes exit by themselves within a
# bound (no task stuck in D state), the kernel's resource tracking shows
# no QP, CQ, MR or PD left on our devices, the module's reference count
# is back where it was, the module unloads and loads again at the end,
# and the kernel log stays clean.
# shellcheck source=selftests/drivers/sroce/lib.sh
source "$(dirname "$0")/lib.sh"
sr_require_sroce
command -v ib_write_bw >/dev/null || sr_skip "perftest missing"
VERIFY=$(sr_tool rc_verify) || sr_skip "rc_verify not built"
sr_dmesg_mark

idle_refcnt=$(cat /sys/module/sroce/refcnt)
round=0

# up: a fresh veth pair into a fresh netns with a device on each end.
up() {
	round=$((round + 1))
	SR_TAG=$(( ($$ + round * 7) % 100000 ))
	sr_sroce_ns_pair
	GA=$(sr_gid_index "$DA" "$IP4" 20) && GB=$(sr_gid_index "$DB" "$PEER4" 20)
	up_refcnt=$(cat /sys/module/sroce/refcnt)
	up_res=$(resources)
}

# resources: the kernel's object counts on this round's devices (the MAD
# layer's own QP1, CQs and PD included).
resources() {
	rdma resource show 2>/dev/null | grep -E " ($DA|$DB): " | cut -d' ' -f2-
}

# kill_client TOOL / kill_both TOOL: SIGKILL in the middle of the traffic.
kill_client() {
	if [ "$1" = perftest ]; then
		pkill -9 -f "ib_write_bw -d $DB "
	else
		pkill -9 -f "rc_verify client $DB "
	fi
}
kill_both() {
	if [ "$1" = perftest ]; then
		pkill -9 -f "ib_write_bw -d ($DA|$DB) "
	else
		pkill -9 -f "rc_verify (server|client) ($DA|$DB) "
	fi
}

# start TOOL: server here on DA, client in NS on DB, for up to 30 s.
start() {
	OUT=$(mktemp -d)
	if [ "$1" = perftest ]; then
		timeout -s KILL 60 ib_write_bw -d "$DA" -x "$GA" -F -s 65536 -D 30 \
			>"$OUT/srv" 2>&1 &
		SRV=$!
		sleep 1
		timeout -s KILL 60 ip netns exec "$NS" ib_write_bw -d "$DB" \
			-x "$GB" -F -s 65536 -D 30 "$IP4" >"$OUT/cli" 2>&1 &
		CLI=$!
	else
		timeout -s KILL 60 "$VERIFY" server "$DA" "$GA" 18620 \
			>"$OUT/srv" 2>&1 &
		SRV=$!
		timeout -s KILL 60 ip netns exec "$NS" "$VERIFY" client "$DB" \
			"$GB" "$IP4" 18620 >"$OUT/cli" 2>&1 &
		CLI=$!
	fi
	# Traffic flowing: the device's transmit counter moves.
	local t0 i
	t0=$(sr_counter "$DA" tx_roce_packets)
	for ((i = 0; i < 100; i++)); do
		sleep 0.1
		[ "$(sr_counter "$DA" tx_roce_packets)" -gt $((t0 + 200)) ] && return 0
	done
	return 1
}

# ended: both processes exit within 40 s, by themselves.
ended() {
	local i
	for ((i = 0; i < 400; i++)); do
		if ! kill -0 "$SRV" 2>/dev/null && ! kill -0 "$CLI" 2>/dev/null; then
			wait "$SRV" "$CLI" 2>/dev/null
			rm -rf "$OUT"
			return 0
		fi
		sleep 0.1
	done
	sr_log "still running after 40 s:"
	ps -o pid,stat,wchan:30,cmd -p "$SRV,$CLI" | sed 's/^/#   /'
	return 1
}

# stuck_tasks: true, printing them, if some tasks are in D state in each
# of three looks a second apart.
stuck_tasks() {
	local d i
	d=$(ps -eo pid=,stat=,comm= | awk '$2 ~ /^D/ { print $1, $3 }')
	for i in 1 2; do
		[ -n "$d" ] || return 1
		sleep 1
		# Those still in D state. (No "<(...)": a guest has no /dev/fd.)
		d=$({ echo "$d"; echo --; ps -eo pid=,stat=,comm=; } | awk '
			$0 == "--" { now = 1; next }
			!now { was[$1 " " $2] = 1; next }
			$2 ~ /^D/ && ($1 " " $3) in was { print $1, $3 }')
	done
	[ -n "$d" ] && sr_log "stuck in D state: $d"
}

# clean REFCNT RESOURCES: our devices' object counts are RESOURCES (what
# they were before the traffic, or nothing once the devices are gone), no
# task stays in D state (the same one in three looks a second apart; a
# worker may pass through it), the module's reference count is REFCNT.
clean() {
	local now
	now=$(resources)
	[ "$now" = "$2" ] || { sr_log "objects: '$now', want '$2'"; return 1; }
	! stuck_tasks || return 1
	[ "$(cat /sys/module/sroce/refcnt)" = "$1" ] ||
		{ sr_log "refcnt $(cat /sys/module/sroce/refcnt), want $1"; return 1; }
}

# down: remove what up made (what the case left).
down() {
	sr_cleanup
}

for tool in perftest rc_verify; do
	up || sr_fail "topology ($tool, kill client)"
	sr_check "$tool: traffic flows" start $tool
	kill_client $tool
	sr_check "$tool: client killed: both ends exit" ended
	sr_check "$tool: client killed: nothing left" clean "$up_refcnt" "$up_res"
	down

	up || sr_fail "topology ($tool, kill both)"
	sr_check "$tool: traffic flows again" start $tool
	kill_both $tool
	sr_check "$tool: both killed: exit" ended
	sr_check "$tool: both killed: nothing left" clean "$up_refcnt" "$up_res"
	down
done

up || sr_fail "topology (link del)"
sr_check "link del: traffic flows" start perftest
sr_check "rdma link del under traffic" rdma link del "$DA"
sr_check "link del: both ends exit" ended
sr_check "link del: device gone" sr_wait_gone "$DA" 10
down
sr_check "link del: nothing left" clean "$idle_refcnt" ""

up || sr_fail "topology (netdev deletion)"
sr_check "netdev deletion: traffic flows" start rc_verify
sr_check "netdev deleted under traffic" ip link del "$A"
sr_check "netdev deletion: both ends exit" ended
sr_check "netdev deletion: devices gone" sh -c \
	"! test -e /sys/class/infiniband/$DA && ! test -e /sys/class/infiniband/$DB"
down
sr_check "netdev deletion: nothing left" clean "$idle_refcnt" ""

up || sr_fail "topology (MTU)"
sr_check "MTU changes: traffic flows" start perftest
for m in 1500 9000 1200 9000; do
	ip link set "$A" mtu $m
	ip -n "$NS" link set "$B" mtu $m
	sleep 1
done
sr_check "MTU changes: both ends exit" ended
sr_check "MTU changes: port active again" sr_wait_port_state "$DA" PORT_ACTIVE
down
sr_check "MTU changes: nothing left" clean "$idle_refcnt" ""

up || sr_fail "topology (rmmod)"
sr_check "rmmod: traffic flows" start perftest
# uverbs may hold the module while user contexts exist; rmmod then must
# fail cleanly, and succeed once the processes are gone. When it goes
# through, the busy-polling client learns from its dead rings (a failed
# poll) within seconds, not when its 30 s run ends.
tenths=400
if rmmod sroce 2>/dev/null; then
	sr_log "rmmod went through under traffic"
	tenths=100
fi
sr_check "rmmod: both ends exit within $((tenths / 10)) s" sh -c \
	"for i in \$(seq $tenths); do kill -0 $SRV 2>/dev/null || kill -0 $CLI 2>/dev/null || exit 0; sleep 0.1; done; exit 1"
sed 's/^/# client: /' "$OUT/cli" | tail -n 3
rm -rf "$OUT"
down
if lsmod | grep -q '^sroce '; then
	sr_check "rmmod after the traffic" rmmod sroce
fi
sr_check "no sroce device left" bash -c "! compgen -G '/sys/class/infiniband/sroce_[ab]*'"
sr_check "module loads again" modprobe sroce
sr_check "kernel log clean" sr_dmesg_clean
sr_done
