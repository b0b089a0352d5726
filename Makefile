# SPDX-License-Identifier: GPL-2.0
#
# sroce top-level build.
#
#   make                 module (for KVER), provider and selftests
#   make KVER=6.1        build the module against the 6.1 headers
#   make modules-all     the module for every supported kernel
#   make run             the main job (see README)
#   make check           the whole test suite on both kernels (see README)
#   make bench           sroce against rdma_rxe, perftest matrix (see README);
#                        BENCH_ARGS=--quick for a smoke test
#   make debug-kernel    opt-in: build a KASAN/lockdep/kmemleak kernel from
#                        linux-source-6.12 and run the selftests on it
#                        (scripts/debug-kernel; about two hours)
#   make checkpatch      scripts/checkpatch.pl --strict over the sources
#   make sparse          sparse with endianness checks
#   make htmldocs        Documentation/ as HTML in build/htmldocs (Sphinx)
#   make deb             Debian packages sroce-dkms and ibverbs-provider-sroce
#                        in build/deb (dpkg-buildpackage, lintian-checked)
#
# Kbuild writes objects next to the sources, so each kernel gets its own
# tree of symlinks under build/<release>/ and the two builds never mix.

KVER ?= 6.12
KVERS := 6.12 6.1
KREL = $(shell scripts/kver $(KVER))
KDIR = /lib/modules/$(KREL)/build
BUILD := $(CURDIR)/build
KBUILD_TREE = $(BUILD)/$(KREL)
USER_OUT := $(BUILD)/user
W ?= 1

.PHONY: all tree module modules-all provider selftests run check bench debug-kernel \
	checkpatch sparse htmldocs deb clean

all: module provider selftests

# The per-kernel tree of symlinks Kbuild works in.
tree:
	@test -d $(KDIR) || { echo "no kernel headers at $(KDIR): run scripts/setup" >&2; exit 1; }
	@mkdir -p $(KBUILD_TREE)
	@cp -rsf $(CURDIR)/drivers $(CURDIR)/include $(CURDIR)/Kbuild $(KBUILD_TREE)/
	@mkdir -p $(KBUILD_TREE)/selftests/drivers/sroce
	@cp -rsf $(CURDIR)/selftests/drivers/sroce/kverbs $(KBUILD_TREE)/selftests/drivers/sroce/

module: tree
	$(MAKE) -C $(KDIR) M=$(KBUILD_TREE) W=$(W) modules

modules-all:
	@set -e; for v in $(KVERS); do $(MAKE) --no-print-directory module KVER=$$v; done

provider:
	$(MAKE) -C tools/provider O=$(USER_OUT)

selftests:
	$(MAKE) -C selftests/drivers/sroce O=$(USER_OUT)/selftests

run:
	scripts/run

check:
	scripts/check

BENCH_ARGS ?=
bench:
	scripts/bench --kernel $(KVER) $(BENCH_ARGS)

debug-kernel:
	scripts/debug-kernel all

checkpatch:
	scripts/lint checkpatch

htmldocs:
	scripts/lint docs

deb:
	scripts/deb

sparse: tree
	$(MAKE) -C $(KDIR) M=$(KBUILD_TREE) C=2 CF="-D__CHECK_ENDIAN__" modules

clean:
	rm -rf $(BUILD)/*-amd64 $(USER_OUT)
	-$(MAKE) -C tools/provider O=$(USER_OUT) clean
