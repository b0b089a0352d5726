#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Host-side test of the sroce provider: no RDMA kernel support needed.
#
# First sroce_check -a checks the provider's ABI assumptions (uapi layouts,
# values passed between ibverbs and the rings, CQE flag conversion).
#
# libibverbs finds devices over RDMA netlink, falling back to sysfs (under
# $SYSFS_PATH) when the kernel has no RDMA netlink. This script builds a
# fake sysfs with devices named like sroce and rxe devices and checks that
# the provider loads (all its IBVERBS_PRIVATE_34 symbols resolve, its
# constructor registers it) and that libibverbs hands each device to the
# right provider. libibverbs also stat()s /dev/infiniband/uverbsN, so the
# test runs in a private mount namespace with a scratch /dev.
#
# usage: host-check.sh OUTDIR     (OUTDIR holds libsroce-rdmav34.so)
set -eu

out=$(cd "${1:?usage: $0 OUTDIR}" && pwd)
lib=$out/libsroce
check=$out/sroce_check

if [ "${SROCE_HOST_CHECK_INNER:-}" != 1 ]; then
	# The ABI checks need neither devices nor privileges.
	if ! "$check" -a; then
		echo "FAIL: host provider check"
		exit 1
	fi
	if [ -e /sys/class/infiniband_verbs ]; then
		echo "SKIP: host has real RDMA devices; test in a guest instead"
		exit 0
	fi
	if ! unshare -m true 2>/dev/null; then
		echo "SKIP: needs root for a private mount namespace"
		exit 0
	fi
	exec env SROCE_HOST_CHECK_INNER=1 unshare -m --propagation private \
		"$0" "$out"
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sys=$tmp/sys

# Scratch /dev for this namespace only.
mount -t tmpfs sroce-dev /dev
mknod -m 666 /dev/null c 1 3
mkdir /dev/infiniband

mkdir -p "$sys/class/infiniband_verbs"
echo 6 > "$sys/class/infiniband_verbs/abi_version"

# fakedev INDEX IBDEV UVERBS_ABI [NODE_DESC]
fakedev() {
	uv=$sys/class/infiniband_verbs/uverbs$1
	ib=$sys/class/infiniband/$2
	mkdir -p "$uv" "$ib"
	echo "$2" > "$uv/ibdev"
	echo "231:$((192 + $1))" > "$uv/dev"
	echo "$3" > "$uv/abi_version"
	echo "1: CA" > "$ib/node_type"
	echo "0000:0000:0000:0000" > "$ib/node_guid"
	echo "${4:-}" > "$ib/node_desc"
	: > "/dev/infiniband/uverbs$1"
}

hdr=$(dirname "$0")/../../include/uapi/rdma/sroce-abi.h
SROCE_ABI=$(sed -n 's/^#define[[:space:]]*SROCE_UVERBS_ABI_VERSION[[:space:]]*\([0-9]*\).*/\1/p' "$hdr")
fakedev 0 sroce0 "$SROCE_ABI" sroce		# ours
fakedev 1 rxe0 2 rxe				# stock rxe provider's
fakedev 2 rxe_sroce0 2 rxe			# contains "sroce", rxe's
fakedev 3 xsroce1 "$SROCE_ABI" other		# sroce-like name, not ours
fakedev 4 sroce9 $((SROCE_ABI + 1)) sroce	# ours, ABI we do not speak
fakedev 5 renamed7 "$SROCE_ABI" sroce		# ours under another name

export SYSFS_PATH=$sys RDMAV_DRIVERS=$lib IBV_SHOW_WARNINGS=1

fail=0
expect() {
	got=$(grep "^$1 " "$tmp/list" | cut -d' ' -f2 || true)
	if [ "$got" = "$2" ]; then
		echo "ok: $1 -> ${2:-<no provider>}"
	else
		echo "FAIL: $1 -> ${got:-<no provider>}, want ${2:-<no provider>}"
		fail=1
	fi
}

"$check" > "$tmp/list" 2> "$tmp/err"
cat "$tmp/err"
if grep -q "couldn't load driver" "$tmp/err"; then
	echo "FAIL: libibverbs could not load $lib"
	fail=1
fi
expect sroce0 sroce
expect rxe0 rxe
expect rxe_sroce0 rxe
expect xsroce1 ""
expect sroce9 ""
expect renamed7 sroce
if grep -q "Driver sroce does not support the kernel ABI of $((SROCE_ABI + 1))" \
	"$tmp/err"; then
	echo "ok: sroce9 refused for its ABI version"
else
	echo "FAIL: no ABI-range refusal for sroce9"
	fail=1
fi

# The stock tool must run without provider-load errors too.
ibv_devices > "$tmp/devs" 2> "$tmp/err" || fail=1
cat "$tmp/devs"
if grep -q "couldn't load driver" "$tmp/err"; then
	echo "FAIL: ibv_devices: provider load error"
	fail=1
fi

[ $fail = 0 ] && echo "PASS: host provider check" || echo "FAIL: host provider check"
exit $fail
