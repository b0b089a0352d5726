#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rdma-core's own test suite (pyverbs, shipped gzipped in the rdma-core
# package's documentation) against sroce and against rdma_rxe in the same
# boot, each device looping back on its own veth. Fails when a test fails
# or errors on sroce, when a test listed in pyverbs.expect does not pass
# on sroce (a regression: it failed or now skips), or when a test passes
# on rxe and not on sroce. Prints both devices' counts. A test that passes
# on sroce and is not listed is reported, to be added to the list. The
# tests of mlx5's and EFA's direct verbs are left out.
# SR_PYVERBS_EXPECT_OUT=FILE writes sroce's passing tests to FILE (to
# regenerate pyverbs.expect); see Documentation for what the skips are.
# shellcheck source=selftests/drivers/sroce/lib.sh
source "$(dirname "$0")/lib.sh"
sr_require_sroce
python3 -c 'import pyverbs' 2>/dev/null || sr_skip "python3-pyverbs missing"
SRC=/usr/share/doc/rdma-core/tests
[ -f "$SRC/run_tests.py" ] || sr_skip "rdma-core's tests are not installed"
EXPECT=$SR_DIR/pyverbs.expect
RUN=$SR_DIR/pyverbs_run.py
sr_require_rxe || sr_fail "rdma_rxe, to compare with, cannot load"

sr_dmesg_mark
WORK=$(mktemp -d)
sr_on_exit "rm -rf $WORK"
cp -r "$SRC" "$WORK/tests" && gunzip -f "$WORK"/tests/*.gz ||
	sr_skip "cannot unpack rdma-core's tests"
# The tests of mlx5's and EFA's direct verbs check the device's driver and
# skip on any other: not loaded, they cost nothing (about 15 s a device).
vendor=()
for f in "$WORK"/tests/test_mlx5_*.py "$WORK"/tests/test_efa*.py; do
	[ -e "$f" ] && vendor+=("$f")
done
rm -f "${vendor[@]}"
sr_log "left out ${#vendor[@]} files of mlx5 and EFA tests"
n=$(( SR_TAG % 250 + 1 ))

# run TYPE SUBNET: a device of TYPE looping back on its own veth; its
# results in $WORK/TYPE.res, rdma-core's tracebacks in $WORK/TYPE.log.
run() {
	local type=$1 l=sr${SR_TAG}${1:0:1} dev=${1}_p$SR_TAG
	sr_veth "$l" "${l}p" || return 1
	ip addr add "$2.$n.1/24" dev "$l"
	sr_link_add "$dev" "$l" "$type" || return 1
	sr_wait_gid "$dev" "$2.$n.1" || return 1
	(cd "$WORK" && timeout -k 10 300 python3 "$RUN" "$WORK/tests" \
		"$WORK/$type.res" -- --dev "$dev" >"$WORK/$type.log" 2>&1)
	rdma link del "$dev"
	[ -s "$WORK/$type.res" ]
}

# count FILE STATUS
count() { grep -c "^$2 " "$1"; }

sr_check "rdma-core's tests ran on sroce" run sroce 198.19
sr_check "rdma-core's tests ran on rxe" run rxe 198.18
touch "$WORK/sroce.res" "$WORK/rxe.res"
for t in sroce rxe; do
	sr_log "$t: $(count "$WORK/$t.res" ok) ok, $(count "$WORK/$t.res" skip) skipped, $(count "$WORK/$t.res" fail) failed, $(count "$WORK/$t.res" error) errors"
done

bad=$(grep -E '^(fail|error) ' "$WORK/sroce.res")
[ -z "$bad" ] || sed -n '/^\(FAIL\|ERROR\): /,/^$/p' "$WORK/sroce.log" |
	sed 's/^/# /'
sr_check "no test fails or errors on sroce" test -z "$bad"

awk '$1 == "ok" { print $2 }' "$WORK/sroce.res" | sort >"$WORK/sroce.ok"
awk '$1 == "ok" { print $2 }' "$WORK/rxe.res" | sort >"$WORK/rxe.ok"
grep -v '^#' "$EXPECT" | sort >"$WORK/expect"
lost=$(comm -23 "$WORK/expect" "$WORK/sroce.ok")
[ -z "$lost" ] && sr_log "all $(wc -l <"$WORK/expect") tests of pyverbs.expect pass"
for t in $lost; do sr_log "regression: $(grep " $t\$" "$WORK/sroce.res" || echo "missing $t")"; done
sr_check "every test in pyverbs.expect passes on sroce" test -z "$lost"
behind=$(comm -23 "$WORK/rxe.ok" "$WORK/sroce.ok")
for t in $behind; do sr_log "passes on rxe, not on sroce: $t"; done
sr_check "every test that passes on rxe passes on sroce" test -z "$behind"
for t in $(comm -13 "$WORK/expect" "$WORK/sroce.ok"); do
	sr_log "passes, not in pyverbs.expect yet: $t"
done
for t in $(comm -13 "$WORK/rxe.ok" "$WORK/sroce.ok"); do
	sr_log "passes on sroce, not on rxe: $t ($(grep " $t\$" "$WORK/rxe.res" | cut -d' ' -f1))"
done
[ -n "${SR_PYVERBS_EXPECT_OUT:-}" ] && cp "$WORK/sroce.ok" "$SR_PYVERBS_EXPECT_OUT"
sr_check "kernel log clean" sr_dmesg_clean
sr_done
