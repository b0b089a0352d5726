// SPDX-License-Identifier: GPL-2.0
/*
 * Completion queue selftests for sroce: sizes and limits, the mapped ring,
 * polling an empty CQ, arming, completion channels, resizing, and that a
 * ring mapping outlives its CQ safely.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <sys/mman.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/sroce-abi.h>

#include "kselftest_harness.h"
#include "sroce_test.h"

FIXTURE(cq) {
	struct sroce_tdev d;
	struct ibv_device_attr attr;
};

FIXTURE_SETUP(cq)
{
	const char *why;
	int ret = sroce_tdev_up(&self->d, "q", &why);

	if (ret == -1)
		SKIP(return, "%s", why);
	ASSERT_EQ(0, ret) TH_LOG("%s", why);
	ASSERT_EQ(0, ibv_query_device(self->d.ctx, &self->attr));
}

FIXTURE_TEARDOWN(cq)
{
	sroce_tdev_down(&self->d);
}

TEST_F(cq, sizes_round_up_to_powers_of_two)
{
	static const int asked[] = { 1, 2, 3, 100, 1024, 1025, 16385 };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(asked); i++) {
		struct ibv_cq *cq = ibv_create_cq(self->d.ctx, asked[i], NULL,
						  NULL, 0);

		ASSERT_NE(NULL, cq) TH_LOG("cqe %d: %s", asked[i],
					   strerror(errno));
		EXPECT_LE(asked[i], cq->cqe);
		EXPECT_EQ(0, cq->cqe & (cq->cqe - 1));
		EXPECT_GT(2 * asked[i], cq->cqe);
		EXPECT_EQ(0, ibv_destroy_cq(cq));
	}
}

TEST_F(cq, bad_arguments)
{
	errno = 0;
	EXPECT_EQ(NULL, ibv_create_cq(self->d.ctx, 0, NULL, NULL, 0));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(NULL, ibv_create_cq(self->d.ctx, self->attr.max_cqe + 1,
				      NULL, NULL, 0));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(NULL, ibv_create_cq(self->d.ctx, 16, NULL, NULL,
				      self->d.ctx->num_comp_vectors));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(NULL, ibv_create_cq(self->d.ctx, -1, NULL, NULL, 0));
	EXPECT_NE(0, errno);
}

TEST_F(cq, max_cqe_is_honoured)
{
	struct ibv_cq *cq = ibv_create_cq(self->d.ctx, self->attr.max_cqe,
					  NULL, NULL, 0);

	ASSERT_NE(NULL, cq) TH_LOG("max_cqe %d: %s", self->attr.max_cqe,
				   strerror(errno));
	EXPECT_EQ(self->attr.max_cqe, cq->cqe);
	EXPECT_EQ(0, ibv_destroy_cq(cq));
}

TEST_F(cq, empty_poll_and_arm)
{
	struct ibv_cq *cq = ibv_create_cq(self->d.ctx, 64, NULL, NULL, 0);
	struct ibv_wc wc[8];

	ASSERT_NE(NULL, cq);
	EXPECT_EQ(0, ibv_poll_cq(cq, 8, wc));
	EXPECT_EQ(0, ibv_req_notify_cq(cq, 0));
	EXPECT_EQ(0, ibv_req_notify_cq(cq, 1));
	EXPECT_EQ(0, ibv_poll_cq(cq, 8, wc));
	EXPECT_EQ(0, ibv_destroy_cq(cq));
}

TEST_F(cq, completion_channel)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(self->d.ctx);
	struct ibv_cq *cq;
	void *ctx_out;

	ASSERT_NE(NULL, ch);
	cq = ibv_create_cq(self->d.ctx, 16, (void *)0x1234, ch, 0);
	ASSERT_NE(NULL, cq);
	EXPECT_EQ((void *)0x1234, cq->cq_context);
	EXPECT_EQ(0, ibv_req_notify_cq(cq, 0));
	/* Nothing completes, so no event may be pending. */
	ASSERT_EQ(0, fcntl(ch->fd, F_SETFL, O_NONBLOCK));
	EXPECT_NE(0, ibv_get_cq_event(ch, &cq, &ctx_out));
	EXPECT_EQ(EAGAIN, errno);
	/* A channel in use by a CQ cannot go. */
	EXPECT_NE(0, ibv_destroy_comp_channel(ch));
	EXPECT_EQ(0, ibv_destroy_cq(cq));
	EXPECT_EQ(0, ibv_destroy_comp_channel(ch));
}

TEST_F(cq, resize)
{
	struct ibv_cq *cq = ibv_create_cq(self->d.ctx, 16, NULL, NULL, 0);
	struct ibv_wc wc;

	ASSERT_NE(NULL, cq);
	EXPECT_EQ(0, ibv_resize_cq(cq, 1000));
	EXPECT_EQ(1024, cq->cqe);
	EXPECT_EQ(0, ibv_poll_cq(cq, 1, &wc));
	EXPECT_EQ(0, ibv_resize_cq(cq, 2));
	EXPECT_EQ(2, cq->cqe);
	EXPECT_EQ(0, ibv_poll_cq(cq, 1, &wc));
	EXPECT_NE(0, ibv_resize_cq(cq, 0));
	EXPECT_NE(0, ibv_resize_cq(cq, self->attr.max_cqe + 1));
	EXPECT_EQ(2, cq->cqe);
	EXPECT_EQ(0, ibv_destroy_cq(cq));
}

TEST_F(cq, many_cqs_with_rings)
{
	struct ibv_cq *cqs[256];
	int i;

	for (i = 0; i < 256; i++) {
		cqs[i] = ibv_create_cq(self->d.ctx, 128, NULL, NULL, 0);
		ASSERT_NE(NULL, cqs[i]) TH_LOG("cq %d: %s", i,
					       strerror(errno));
	}
	for (i = 0; i < 256; i++)
		EXPECT_EQ(0, ibv_destroy_cq(cqs[i]));
}

/*
 * Below the provider: create a CQ with the raw command, look at the ring
 * mapping the kernel describes, and check the mapping rules.
 */
struct raw_create_cq {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_create_cq cmd;
};

struct raw_create_cq_resp {
	struct ib_uverbs_create_cq_resp base;
	struct sroce_create_cq_resp drv;
};

static int raw_create_cq(struct ibv_context *ctx, int cqe,
			 struct raw_create_cq_resp *resp)
{
	struct raw_create_cq req = {
		.hdr.command = IB_USER_VERBS_CMD_CREATE_CQ,
		.hdr.in_words = sizeof(req) / 4,
		.hdr.out_words = sizeof(*resp) / 4,
		.cmd.response = (uintptr_t)resp,
		.cmd.cqe = cqe,
		.cmd.comp_channel = -1,
	};

	return uverbs_write(ctx, &req, sizeof(req));
}

static int raw_destroy_cq(struct ibv_context *ctx, __u32 handle)
{
	struct ib_uverbs_destroy_cq_resp resp;
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_destroy_cq cmd;
	} req = {
		.hdr.command = IB_USER_VERBS_CMD_DESTROY_CQ,
		.hdr.in_words = sizeof(req) / 4,
		.hdr.out_words = sizeof(resp) / 4,
		.cmd.response = (uintptr_t)&resp,
		.cmd.cq_handle = handle,
	};

	return uverbs_write(ctx, &req, sizeof(req));
}

static int raw_req_notify_cq(struct ibv_context *ctx, __u32 handle)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_req_notify_cq cmd;
	} req = {
		.hdr.command = IB_USER_VERBS_CMD_REQ_NOTIFY_CQ,
		.hdr.in_words = sizeof(req) / 4,
		.cmd.cq_handle = handle,
	};

	return uverbs_write(ctx, &req, sizeof(req));
}

TEST_F(cq, ring_mapping_rules)
{
	struct raw_create_cq_resp r;
	struct sroce_ring_hdr *hdr;
	size_t len;
	void *map;

	ASSERT_EQ(0, raw_create_cq(self->d.ctx, 100, &r));
	EXPECT_EQ(128, r.drv.num_entries);
	EXPECT_EQ(128, r.base.cqe);
	len = r.drv.mmap_length;
	EXPECT_LE(SROCE_RING_HDR_SIZE + 128 * sizeof(struct sroce_cqe), len);
	EXPECT_EQ(0, len % 4096);

	/* Part of a ring, or a ring at a made-up offset, is refused. */
	EXPECT_EQ(MAP_FAILED, mmap(NULL, len - 4096, PROT_READ | PROT_WRITE,
				   MAP_SHARED, self->d.ctx->cmd_fd,
				   r.drv.mmap_offset));
	EXPECT_EQ(MAP_FAILED, mmap(NULL, len, PROT_READ | PROT_WRITE,
				   MAP_SHARED, self->d.ctx->cmd_fd,
				   r.drv.mmap_offset + (1 << 24) * 4096ULL));

	map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
		   self->d.ctx->cmd_fd, r.drv.mmap_offset);
	ASSERT_NE(MAP_FAILED, map);
	hdr = map;
	EXPECT_EQ(0, hdr->prod);
	EXPECT_EQ(0, hdr->cons);
	/* Garbage in the consumer index must not upset the kernel. */
	hdr->cons = 0xdeadbeef;
	EXPECT_EQ(0, raw_req_notify_cq(self->d.ctx, r.base.cq_handle));

	/* Destroying the CQ leaves our mapping readable until munmap. */
	EXPECT_EQ(0, raw_destroy_cq(self->d.ctx, r.base.cq_handle));
	EXPECT_EQ(0xdeadbeef, hdr->cons);
	memset(map, 0xa5, len);
	EXPECT_EQ(0, munmap(map, len));
	/* And the offset is gone with the CQ. */
	EXPECT_EQ(MAP_FAILED, mmap(NULL, len, PROT_READ | PROT_WRITE,
				   MAP_SHARED, self->d.ctx->cmd_fd,
				   r.drv.mmap_offset));
}

static int raw_resize_cq(struct ibv_context *ctx, __u32 handle, int cqe,
			 void *resp, size_t resp_len)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_resize_cq cmd;
	} req = {
		.hdr.command = IB_USER_VERBS_CMD_RESIZE_CQ,
		.hdr.in_words = sizeof(req) / 4,
		.hdr.out_words = resp_len / 4,
		.cmd.response = (uintptr_t)resp,
		.cmd.cq_handle = handle,
		.cmd.cqe = cqe,
	};

	return uverbs_write(ctx, &req, sizeof(req));
}

TEST_F(cq, resize_distrusts_the_consumer_index)
{
	struct {
		struct ib_uverbs_resize_cq_resp base;
		struct sroce_resize_cq_resp drv;
	} rr;
	struct raw_create_cq_resp r;
	struct sroce_ring_hdr *hdr;
	void *map;

	ASSERT_EQ(0, raw_create_cq(self->d.ctx, 64, &r));
	map = mmap(NULL, r.drv.mmap_length, PROT_READ | PROT_WRITE,
		   MAP_SHARED, self->d.ctx->cmd_fd, r.drv.mmap_offset);
	ASSERT_NE(MAP_FAILED, map);
	hdr = map;

	/* A response too short for the new ring's place changes nothing. */
	EXPECT_EQ(-EINVAL, raw_resize_cq(self->d.ctx, r.base.cq_handle, 256,
					 &rr, sizeof(rr.base)));

	/*
	 * Nothing was ever produced, so a consumer index claiming five
	 * pending entries is a lie: the resize must neither copy them nor
	 * refuse a ring too small for them.
	 */
	hdr->cons = (__u32)-5;
	ASSERT_EQ(0, raw_resize_cq(self->d.ctx, r.base.cq_handle, 4, &rr,
				   sizeof(rr)));
	EXPECT_EQ(4, rr.drv.num_entries);
	EXPECT_EQ(4, rr.base.cqe);
	EXPECT_EQ(0, munmap(map, r.drv.mmap_length));
	map = mmap(NULL, rr.drv.mmap_length, PROT_READ | PROT_WRITE,
		   MAP_SHARED, self->d.ctx->cmd_fd, rr.drv.mmap_offset);
	ASSERT_NE(MAP_FAILED, map);
	hdr = map;
	EXPECT_EQ(0, hdr->prod);
	EXPECT_EQ(0, hdr->cons);
	/* The old ring's offset died with the old ring. */
	EXPECT_EQ(MAP_FAILED, mmap(NULL, r.drv.mmap_length,
				   PROT_READ | PROT_WRITE, MAP_SHARED,
				   self->d.ctx->cmd_fd, r.drv.mmap_offset));
	EXPECT_EQ(0, munmap(map, rr.drv.mmap_length));
	EXPECT_EQ(0, raw_destroy_cq(self->d.ctx, r.base.cq_handle));
}

TEST_F(cq, private_mappings_refused)
{
	struct raw_create_cq_resp r;

	ASSERT_EQ(0, raw_create_cq(self->d.ctx, 16, &r));
	/* A private copy would never see the kernel's completions. */
	EXPECT_EQ(MAP_FAILED, mmap(NULL, r.drv.mmap_length,
				   PROT_READ | PROT_WRITE, MAP_PRIVATE,
				   self->d.ctx->cmd_fd, r.drv.mmap_offset));
	EXPECT_EQ(0, raw_destroy_cq(self->d.ctx, r.base.cq_handle));
}

TEST_F(cq, device_removal_with_live_cqs)
{
	struct ibv_cq *cq = NULL;
	struct ibv_wc wc;
	int i;

	for (i = 0; i < 16; i++) {
		cq = ibv_create_cq(self->d.ctx, 256, NULL, NULL, 0);
		ASSERT_NE(NULL, cq);
	}
	/* The device goes while the CQs and their rings are live... */
	ASSERT_EQ(0, sh("rdma link del %s", self->d.ibdev));
	/*
	 * ...the ring mappings stay readable, a poll says the CQ is gone
	 * (its ring is dead), and cleanup still works.
	 */
	errno = 0;
	EXPECT_EQ(-1, ibv_poll_cq(cq, 1, &wc));
	EXPECT_EQ(EIO, errno);
	EXPECT_EQ(0, ibv_destroy_cq(cq));
	ibv_close_device(self->d.ctx);
	self->d.ctx = NULL;
}

TEST_HARNESS_MAIN
