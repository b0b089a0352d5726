#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# iSER on sroce: LIO, configured with targetcli-fb, exports a 128 MiB RAM
# disk through an iSCSI portal with iSER enabled on an sroce device;
# open-iscsi logs in to it in the same guest through an iface whose
# transport is iser (so over the device's loopback). Then fio writes the
# disk with crc32c checksums and reads it back, verifying every block; a
# logout and a second login find the data still there. The kernel log
# must stay clean. SR_ISER_LINK=rxe runs it over rdma_rxe instead.
# shellcheck source=selftests/drivers/sroce/lib.sh
source "$(dirname "$0")/lib.sh"
TYPE=${SR_ISER_LINK:-sroce}
if [ "$TYPE" = sroce ]; then
	sr_require_sroce
else
	sr_require_root
	sr_require_rxe || sr_skip "rdma_rxe not available"
fi
for t in targetcli iscsiadm iscsid fio dbus-daemon; do
	command -v "$t" >/dev/null || sr_skip "$t missing"
done
modprobe -a target_core_mod ib_isert ib_iser sd_mod 2>/dev/null ||
	sr_skip "LIO's isert or the iser initiator is not available"
pgrep -x iscsid >/dev/null && sr_skip "an iscsid already runs here"

sr_dmesg_mark
n=$(( SR_TAG % 250 + 1 ))
L=sr${SR_TAG}i
DEV=${TYPE}_i$SR_TAG
ADDR=198.19.$n.1
IQN=iqn.2026-11.org.example.sroce:t$SR_TAG
RD=rd$SR_TAG
WORK=$(mktemp -d)
sr_on_exit "rm -rf $WORK"
FIO_VERIFY=(--ioengine=libaio --direct=1 --bs=4k --iodepth=16
	--verify=crc32c --verify_fatal=1 --do_verify=1 --verify_state_save=0)

mountpoint -q /sys/kernel/config ||
	mount -t configfs none /sys/kernel/config || sr_skip "no configfs"
# targetcli asks the system bus for user-backed stores, and keeps its
# preferences in $HOME: give it both, in tmpfs.
export HOME=$WORK
if [ ! -S /run/dbus/system_bus_socket ]; then
	mkdir -p /run/dbus
	dbus-daemon --system --fork --print-pid >"$WORK/dbus.pid" ||
		sr_skip "cannot start a system bus for targetcli"
	sr_on_exit "kill $(cat "$WORK/dbus.pid"); rm -f /run/dbus/system_bus_socket /run/dbus/pid"
fi
# tcli LINE...: one targetcli process for all the command lines (each
# start of targetcli takes seconds under emulation); its session in
# $WORK/targetcli.log. Its shell reads on after a failed command, so what
# the commands built is checked in configfs.
tcli() {
	printf '%s\n' "$@" exit |
		timeout -k 5 120 targetcli >>"$WORK/targetcli.log" 2>&1
}
target_down() {
	tcli "/iscsi delete $IQN" "/backstores/ramdisk delete $RD"
}

sr_loopback_link "$DEV" "$L" "$ADDR" "$TYPE"

# The target.
T=/iscsi/$IQN/tpg1
CT=/sys/kernel/config/target
TPG=$CT/iscsi/$IQN/tpgt_1
sr_on_exit target_down
failed_before=$SR_FAILED
SR_FAILED=0
tcli "set global auto_save_on_exit=false auto_add_default_portal=false" \
	"/backstores/ramdisk create name=$RD size=128M" \
	"/iscsi create $IQN" \
	"$T/luns create /backstores/ramdisk/$RD" \
	"$T/portals create $ADDR 3260" \
	"$T set attribute authentication=0 demo_mode_write_protect=0 generate_node_acls=1 cache_dynamic_acls=1" \
	"$T/portals/$ADDR:3260 enable_iser true" ||
	sr_fail "targetcli did not finish its commands"
# attr FILE VALUE: a configfs attribute of the target portal group.
attr() { { [ "$(<"$TPG/$1")" = "$2" ]; } 2>/dev/null; }
ramdisk_up() {
	local d
	for d in "$CT"/core/rd_mcp_*/"$RD"; do
		[ "$(<"$d/enable")" = 1 ] && return 0
	done 2>/dev/null
	return 1
}
target_up() {
	local l
	attr enable 1 || return 1
	for l in "$TPG"/lun/lun_0/*; do
		[ -L "$l" ] && return 0
	done
	return 1
}
open_access() {
	attr attrib/authentication 0 && attr attrib/generate_node_acls 1 &&
		attr attrib/demo_mode_write_protect 0
}
sr_check "targetcli: a RAM disk" ramdisk_up
sr_check "targetcli: an iSCSI target, enabled, with the disk as LUN 0" target_up
sr_check "targetcli: open access" open_access
sr_check "targetcli: iSER on the portal" attr "np/$ADDR:3260/iser" 1
[ "$SR_FAILED" = 0 ] || sed 's/^/# targetcli: /' "$WORK/targetcli.log"
SR_FAILED=$((SR_FAILED | failed_before))

# The initiator: its node database lives in /etc/iscsi, read-only here.
mkdir -p "$WORK/iscsi"
cp -a /etc/iscsi/. "$WORK/iscsi/"
mount --bind "$WORK/iscsi" /etc/iscsi
sr_on_exit "umount /etc/iscsi"
mkdir -p /run/lock/iscsi
iscsid || sr_fail "iscsid"
sr_on_exit "pkill -x iscsid"
NODE=(-m node -T "$IQN" -p "$ADDR:3260" -I "iser$SR_TAG")
iscsiadm -m iface -I "iser$SR_TAG" -o new >/dev/null &&
	iscsiadm -m iface -I "iser$SR_TAG" -o update \
		-n iface.transport_name -v iser >/dev/null
sr_check "iscsiadm: node on an iser iface" \
	iscsiadm "${NODE[@]}" -o new
sr_on_exit "timeout 60 iscsiadm ${NODE[*]} --logout"

# login: log in and find the session's disk, in $BDEV.
login() {
	local i d
	BDEV=
	timeout 120 iscsiadm "${NODE[@]}" --login >/dev/null || return 1
	for ((i = 0; i < 100; i++)); do
		for d in /sys/class/iscsi_session/session*/device/target*/*/block/*; do
			[ -e "$d" ] || continue
			grep -qx "$IQN" "${d%%/device/*}/targetname" || continue
			BDEV=/dev/$(basename "$d")
			[ -b "$BDEV" ] && return 0
		done
		sleep 0.1
	done
	return 1
}
session_is_iser() {
	iscsiadm -m session -P 1 2>/dev/null | grep -q "Iface Transport: iser"
}
# fio_run NAME ARGS...: fio with its summary kept as comments.
fio_run() {
	local name=$1 out rc
	shift
	out=$(cd "$WORK" && fio --name="$name" --filename="$BDEV" "$@" 2>&1)
	rc=$?
	echo "$out" | grep -E "^ *(READ|WRITE):|err=|verify" |
		sed "s/^/# $name: /"
	return "$rc"
}

sr_check "iscsiadm --login over iser on $TYPE" login
if [ -b "$BDEV" ]; then
	sr_log "disk at $BDEV"
	sr_check "the session runs over iser" session_is_iser
	sr_check "fio: write 48 MiB with checksums, read back and verify" \
		fio_run write_verify "${FIO_VERIFY[@]}" --rw=randwrite --size=48M
	sr_check "logout" timeout 60 iscsiadm "${NODE[@]}" --logout
	sr_check "login again" login
	sr_check "data written before the new login verifies" \
		fio_run reverify "${FIO_VERIFY[@]}" --rw=randwrite --size=48M \
		--verify_only
	sr_check "logout" timeout 60 iscsiadm "${NODE[@]}" --logout
fi
sr_log "$TYPE counters: rx_qp_packets $(sr_counter "$DEV" rx_qp_packets)"
sr_check "kernel log clean" sr_dmesg_clean
sr_done
