#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# In-guest test of the sroce provider next to rdma_rxe: each device must be
# driven by its own provider, and sroce's control verbs must work.
#
#   scripts/vm [--kernel 6.12|6.1] -- tools/provider/guest-check.sh [OUTDIR]
#
# Expects scripts/vm to have installed sroce.ko and the provider (it does
# when build/<KREL>/.../sroce.ko and build/user/libsroce-rdmav34.so exist).
# OUTDIR holds sroce_check (default: build/user of this repository).
set -u

here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/../../build/user}
check=$out/sroce_check
fail=0

step() {
	echo "+ $*"
	"$@" || { echo "FAIL: $*"; fail=1; }
}

cleanup() {
	rdma link del sroce0 2>/dev/null
	rdma link del rxe0 2>/dev/null
	ip link del veth0 2>/dev/null
	ip link del veth2 2>/dev/null
}
trap cleanup EXIT

step ip link add veth0 type veth peer name veth1
step ip link set veth0 up
step ip link set veth1 up
step ip addr add 198.18.0.1/24 dev veth0
step ip addr add 2001:db8::1/64 dev veth0
step rdma link add sroce0 type sroce netdev veth0
step modprobe rdma_rxe
step ip addr add 198.18.0.2/24 dev veth1
step rdma link add rxe0 type rxe netdev veth1
step rdma link show

echo "+ IBV_SHOW_WARNINGS=1 ibv_devices"
IBV_SHOW_WARNINGS=1 ibv_devices 2>&1 | tee /tmp/devs
grep -q "couldn't load driver\|no userspace device-specific driver" /tmp/devs &&
	{ echo "FAIL: ibv_devices reported a provider problem"; fail=1; }
for d in sroce0 rxe0; do
	grep -q "^ *$d " /tmp/devs || { echo "FAIL: $d not listed"; fail=1; }
done

step ibv_devinfo -v -d sroce0
step ibv_devinfo -d rxe0

step "$check"
step "$check" -d sroce0 -p sroce
step "$check" -d rxe0 -p rxe

# A sroce device whose name lacks the prefix is unreachable from userspace:
# the provider matches by name only (driver id is RDMA_DRIVER_UNKNOWN).
ip link add veth2 type veth peer name veth3 && ip link set veth2 up &&
	ip addr add 198.18.1.1/24 dev veth2
if rdma link add oddname0 type sroce netdev veth2 2>/dev/null; then
	echo "note: kernel accepted a sroce device named oddname0"
	IBV_SHOW_WARNINGS=1 ibv_devices 2>&1 | grep oddname0
	rdma link del oddname0
else
	echo "ok: kernel refused a sroce device without the sroce prefix"
fi

[ $fail = 0 ] && echo "PASS: guest provider check" ||
	echo "FAIL: guest provider check"
exit $fail
