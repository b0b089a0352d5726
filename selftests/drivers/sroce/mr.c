// SPDX-License-Identifier: GPL-2.0
/*
 * Memory region selftests for sroce: registration pins pages and returns
 * usable keys, access flags and ranges are validated, keys are not reused,
 * and deregistration unpins.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <sys/mman.h>

#include "kselftest_harness.h"
#include "sroce_test.h"

/* VmPin from /proc/self/status, in kB: what ib_umem pinned for us. */
static long vm_pinned_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmPin: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

FIXTURE(mr) {
	struct sroce_tdev d;
	struct ibv_pd *pd;
	char *buf;
	size_t len;
};

FIXTURE_SETUP(mr)
{
	const char *why;
	int ret = sroce_tdev_up(&self->d, "m", &why);

	if (ret == -1)
		SKIP(return, "%s", why);
	ASSERT_EQ(0, ret) TH_LOG("%s", why);
	self->pd = ibv_alloc_pd(self->d.ctx);
	ASSERT_NE(NULL, self->pd);
	self->len = 16 * 4096;
	self->buf = mmap(NULL, self->len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->buf);
	memset(self->buf, 0x5a, self->len);
}

FIXTURE_TEARDOWN(mr)
{
	if (self->pd)
		ibv_dealloc_pd(self->pd);
	if (self->buf && self->buf != MAP_FAILED)
		munmap(self->buf, self->len);
	sroce_tdev_down(&self->d);
}

TEST_F(mr, reg_pins_and_dereg_unpins)
{
	long before = vm_pinned_kb();
	struct ibv_mr *mr;

	ASSERT_LE(0, before);
	mr = ibv_reg_mr(self->pd, self->buf, self->len,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_REMOTE_READ);
	ASSERT_NE(NULL, mr) TH_LOG("reg_mr: %s", strerror(errno));
	EXPECT_EQ(self->buf, mr->addr);
	EXPECT_EQ(self->len, mr->length);
	EXPECT_NE(0, mr->lkey);		/* 0 is the local DMA lkey */
	EXPECT_EQ(mr->lkey, mr->rkey);
	EXPECT_EQ(before + 64, vm_pinned_kb());
	EXPECT_EQ(0, ibv_dereg_mr(mr));
	EXPECT_EQ(before, vm_pinned_kb());
}

TEST_F(mr, unaligned_range_pins_every_touched_page)
{
	long before = vm_pinned_kb();
	struct ibv_mr *mr;

	/* 2 bytes straddling a page boundary touch two pages. */
	mr = ibv_reg_mr(self->pd, self->buf + 4095, 2, IBV_ACCESS_LOCAL_WRITE);
	ASSERT_NE(NULL, mr);
	EXPECT_EQ(before + 8, vm_pinned_kb());
	EXPECT_EQ(0, ibv_dereg_mr(mr));
}

TEST_F(mr, keys_unique_and_not_reused)
{
	struct ibv_mr *a, *b;
	uint32_t old;

	a = ibv_reg_mr(self->pd, self->buf, 4096, IBV_ACCESS_LOCAL_WRITE);
	b = ibv_reg_mr(self->pd, self->buf, 4096, IBV_ACCESS_LOCAL_WRITE);
	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, b);
	EXPECT_NE(a->lkey, b->lkey);
	old = a->lkey;
	EXPECT_EQ(0, ibv_dereg_mr(a));
	/* The freed slot comes back with another generation byte. */
	a = ibv_reg_mr(self->pd, self->buf, 4096, IBV_ACCESS_LOCAL_WRITE);
	ASSERT_NE(NULL, a);
	EXPECT_NE(old, a->lkey);
	EXPECT_EQ(0, ibv_dereg_mr(a));
	EXPECT_EQ(0, ibv_dereg_mr(b));
}

TEST_F(mr, iova_differs_from_address)
{
	struct ibv_mr *mr;

	mr = ibv_reg_mr_iova(self->pd, self->buf, self->len, 0x10000000000ULL,
			     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	ASSERT_NE(NULL, mr) TH_LOG("reg_mr_iova: %s", strerror(errno));
	EXPECT_EQ(0, ibv_dereg_mr(mr));
}

TEST_F(mr, access_rules)
{
	static const struct {
		int access;
		int err;
		int alt_err;	/* also right: what the core says first */
	} bad[] = {
		/* Remote writers need local write (IBA 10.6.3.1). */
		{ IBV_ACCESS_REMOTE_WRITE, EINVAL, EINVAL },
		{ IBV_ACCESS_REMOTE_ATOMIC, EINVAL, EINVAL },
		/* Not implemented: refused, never silently ignored. */
		/* 6.1's core refuses ODP itself, with EINVAL. */
		{ IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_ON_DEMAND, EOPNOTSUPP,
		  EINVAL },
		{ IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_HUGETLB, EOPNOTSUPP,
		  EOPNOTSUPP },
	};
	struct ibv_mr *mr;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		errno = 0;
		mr = ibv_reg_mr(self->pd, self->buf, 4096, bad[i].access);
		EXPECT_EQ(NULL, mr) TH_LOG("access 0x%x accepted",
					   bad[i].access);
		if (mr)
			ibv_dereg_mr(mr);
		else
			EXPECT_TRUE(errno == bad[i].err ||
				    errno == bad[i].alt_err)
				TH_LOG("access 0x%x: %s", bad[i].access,
				       strerror(errno));
	}
	/* Read-only and remote-read-only regions are fine. */
	mr = ibv_reg_mr(self->pd, self->buf, 4096, 0);
	ASSERT_NE(NULL, mr);
	EXPECT_EQ(0, ibv_dereg_mr(mr));
	/* So is one that memory windows may bind to (rc_ops binds some). */
	mr = ibv_reg_mr(self->pd, self->buf, 4096,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	ASSERT_NE(NULL, mr);
	EXPECT_EQ(0, ibv_dereg_mr(mr));
	mr = ibv_reg_mr(self->pd, self->buf, 4096, IBV_ACCESS_REMOTE_READ);
	ASSERT_NE(NULL, mr);
	EXPECT_EQ(0, ibv_dereg_mr(mr));
}

TEST_F(mr, bad_ranges)
{
	struct ibv_device_attr a;
	char *ro;

	ASSERT_EQ(0, ibv_query_device(self->d.ctx, &a));
	errno = 0;
	EXPECT_EQ(NULL, ibv_reg_mr(self->pd, self->buf, 0,
				   IBV_ACCESS_LOCAL_WRITE));
	EXPECT_EQ(EINVAL, errno);
	/* iova + length wraps around 2^64. */
	errno = 0;
	EXPECT_EQ(NULL, ibv_reg_mr_iova(self->pd, self->buf, 8192,
					UINT64_MAX - 4095,
					IBV_ACCESS_LOCAL_WRITE));
	EXPECT_EQ(EINVAL, errno);
	/* Longer than max_mr_size. */
	errno = 0;
	EXPECT_EQ(NULL, ibv_reg_mr(self->pd, self->buf, a.max_mr_size + 4096,
				   IBV_ACCESS_LOCAL_WRITE));
	EXPECT_EQ(EINVAL, errno);
	/* Memory that is not mapped cannot be pinned. */
	ASSERT_EQ(0, munmap(self->buf + 8 * 4096, 4096));
	errno = 0;
	EXPECT_EQ(NULL, ibv_reg_mr(self->pd, self->buf, 16 * 4096,
				   IBV_ACCESS_LOCAL_WRITE));
	EXPECT_EQ(EFAULT, errno);
	/* Read-only memory cannot be registered for writing. */
	ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, ro);
	errno = 0;
	EXPECT_EQ(NULL, ibv_reg_mr(self->pd, ro, 4096, IBV_ACCESS_LOCAL_WRITE));
	EXPECT_EQ(EFAULT, errno);
	munmap(ro, 4096);
}

TEST_F(mr, pd_with_mr_is_busy)
{
	struct ibv_mr *mr;

	mr = ibv_reg_mr(self->pd, self->buf, 4096, IBV_ACCESS_LOCAL_WRITE);
	ASSERT_NE(NULL, mr);
	/* The core keeps the PD while a region uses it. */
	EXPECT_EQ(EBUSY, ibv_dealloc_pd(self->pd));
	EXPECT_EQ(0, ibv_dereg_mr(mr));
}

TEST_F(mr, close_with_live_mrs_unpins)
{
	long before = vm_pinned_kb();
	int i;

	for (i = 0; i < 8; i++)
		ASSERT_NE(NULL, ibv_reg_mr(self->pd, self->buf, self->len,
					   IBV_ACCESS_LOCAL_WRITE));
	EXPECT_EQ(before + 8 * 64, vm_pinned_kb());
	/* Closing the context releases everything it owned. */
	ibv_close_device(self->d.ctx);
	self->d.ctx = NULL;
	self->pd = NULL;
	EXPECT_EQ(before, vm_pinned_kb());
}

TEST_HARNESS_MAIN
