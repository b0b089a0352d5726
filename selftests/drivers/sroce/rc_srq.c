// SPDX-License-Identifier: GPL-2.0
/*
 * Shared receive queues over RC: shared by two QPs, the limit event,
 * overrun and the last-WQE event.
 * The fixture, and how to point the tests at other devices: rc_fixture.h.
 */
#define _GNU_SOURCE
#include "rc_fixture.h"

/* ------------------------------------------------ shared receive queues */

static struct ibv_srq *make_srq(struct side *s, uint32_t max_wr)
{
	struct ibv_srq_init_attr a = {
		.attr = { .max_wr = max_wr, .max_sge = 2 },
	};

	return ibv_create_srq(s->pd, &a);
}

static int post_srq(struct ibv_srq *srq, uint64_t wr_id, struct ibv_sge *sg)
{
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = sg, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return ibv_post_srq_recv(srq, &wr, &bad);
}

/* Wait up to @ms for an async event of @type on @ctx; 0 when it came. */
static int wait_async(struct ibv_context *ctx, enum ibv_event_type type,
		      void *element, int ms)
{
	struct ibv_async_event ev;
	uint64_t end = sroce_now_ms() + ms;
	int flags = fcntl(ctx->async_fd, F_GETFL);
	int ret = -1;

	fcntl(ctx->async_fd, F_SETFL, flags | O_NONBLOCK);
	while (sroce_now_ms() < end) {
		if (ibv_get_async_event(ctx, &ev)) {
			usleep(1000);
			continue;
		}
		if (ev.event_type == type &&
		    (!element || ev.element.srq == element))
			ret = 0;
		ibv_ack_async_event(&ev);
		if (!ret)
			break;
	}
	fcntl(ctx->async_fd, F_SETFL, flags);
	return ret;
}

/* Two QPs of side B take their receives from one SRQ, in posting order. */
TEST_F_TIMEOUT(rc, srq_shared_by_two_qps, T_SECS)
{
	struct ibv_srq *srq = make_srq(B_, 16);
	struct pair q2 = {};
	struct conn c = {};
	struct ibv_sge rs, ss;
	struct ibv_qp *qp;
	struct ibv_wc wc;
	int i;

	ASSERT_NE(NULL, srq);
	c.srq_b = srq;
	PAIR_UP(&self->q, &c);
	c.psn_a = 0x123;
	c.psn_b = 0x456;
	{
		const char *step = pair_up(self, &q2, &c);

		ASSERT_EQ(NULL, step) TH_LOG("%s", step);
	}
	/* A QP with an SRQ has no receive queue of its own. */
	rs = sge(B_, DST, 64);
	EXPECT_EQ(EINVAL, post_recv(self->q.qp[1], 1, &rs, 1));
	for (i = 0; i < 4; i++) {
		rs = sge(B_, DST + 4096 + i * 8192, 8192 - GUARD);
		ASSERT_EQ(0, post_srq(srq, 0x100 + i, &rs));
	}
	for (i = 0; i < 4; i++) {
		qp = i & 1 ? q2.qp[0] : self->q.qp[0];
		ss = sge(A_, i * 4096, 3000 + i);
		ASSERT_EQ(0, post_op(qp, IBV_WR_SEND, 0x200 + i, &ss, 1, 0, 0,
				     0));
		ASSERT_EQ(1, sroce_wait_wc(i & 1 ? q2.cq[1] : self->q.cq[1], &wc,
					   WC_MS));
		EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
		EXPECT_EQ(0x100 + i, wc.wr_id);
		EXPECT_EQ(3000 + i, wc.byte_len);
		EXPECT_EQ(i & 1 ? QPN(&q2, 1) : QPN(&self->q, 1), wc.qp_num);
		check_landed(_metadata, "SEND into an SRQ WQE",
			     B_->buf + DST + 4096 + i * 8192, A_->buf + i * 4096,
			     3000 + i);
	}
	pair_down(&q2);
	pair_down(&self->q);
	EXPECT_EQ(0, ibv_destroy_srq(srq));
}

/* Armed at 4 with 8 posted: the fifth message raises the limit event. */
TEST_F_TIMEOUT(rc, srq_limit_event, T_SECS)
{
	struct ibv_srq *srq = make_srq(B_, 16);
	struct ibv_srq_attr attr = { .srq_limit = 4 };
	struct conn c = {};
	struct ibv_sge rs, ss = sge(A_, 0, 100);
	struct ibv_wc wc;
	int i;

	ASSERT_NE(NULL, srq);
	c.srq_b = srq;
	PAIR_UP(&self->q, &c);
	for (i = 0; i < 8; i++) {
		rs = sge(B_, DST + i * 256, 256);
		ASSERT_EQ(0, post_srq(srq, i, &rs));
	}
	ASSERT_EQ(0, ibv_modify_srq(srq, &attr, IBV_SRQ_LIMIT));
	memset(&attr, 0, sizeof(attr));
	ASSERT_EQ(0, ibv_query_srq(srq, &attr));
	EXPECT_EQ(4, attr.srq_limit);
	EXPECT_LE(16, attr.max_wr);
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, post_op(self->q.qp[0], IBV_WR_SEND, i, &ss, 1, 0,
				     0, 0));
		ASSERT_EQ(1, sroce_wait_wc(self->q.cq[1], &wc, WC_MS));
	}
	/* 4 left: not below the limit yet. */
	EXPECT_EQ(-1, wait_async(B_->ctx, IBV_EVENT_SRQ_LIMIT_REACHED, srq,
				 QUIET_MS));
	ASSERT_EQ(0, post_op(self->q.qp[0], IBV_WR_SEND, 9, &ss, 1, 0, 0, 0));
	ASSERT_EQ(1, sroce_wait_wc(self->q.cq[1], &wc, WC_MS));
	EXPECT_EQ(0, wait_async(B_->ctx, IBV_EVENT_SRQ_LIMIT_REACHED, srq,
				WC_MS));
	/* One event per arming: the limit reads 0 now. */
	ASSERT_EQ(0, ibv_query_srq(srq, &attr));
	EXPECT_EQ(0, attr.srq_limit);
	pair_down(&self->q);
	EXPECT_EQ(0, ibv_destroy_srq(srq));
}

/*
 * An SRQ takes no more than it holds, and an empty SRQ makes the sender
 * retry (RNR), failing with rnr_retry 0; a QP of the SRQ in error raises
 * IBV_EVENT_QP_LAST_WQE_REACHED.
 */
TEST_F_TIMEOUT(rc, srq_overrun_and_last_wqe, T_SECS)
{
	struct ibv_srq *srq = make_srq(B_, 4);
	struct ibv_recv_wr wr[9] = {}, *bad = NULL;
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_ERR };
	struct conn c = { .rnr_retry_zero = true };
	struct ibv_sge rs = sge(B_, DST, 256), ss = sge(A_, 0, 100);
	struct ibv_srq_attr attr;
	struct ibv_wc wc;
	uint32_t i, n;

	ASSERT_NE(NULL, srq);
	ASSERT_EQ(0, ibv_query_srq(srq, &attr));
	n = attr.max_wr;
	ASSERT_GE(8, n);
	for (i = 0; i <= n; i++) {
		wr[i].wr_id = i;
		wr[i].sg_list = &rs;
		wr[i].num_sge = 1;
		wr[i].next = i < n ? &wr[i + 1] : NULL;
	}
	/* The first n are posted, the one beyond is refused. */
	EXPECT_EQ(ENOMEM, ibv_post_srq_recv(srq, wr, &bad));
	EXPECT_EQ(&wr[n], bad);

	c.srq_b = srq;
	PAIR_UP(&self->q, &c);
	/* The n posted receives are used up, then the SRQ is empty. */
	for (i = 0; i <= n; i++)
		ASSERT_EQ(0, post_op(self->q.qp[0], IBV_WR_SEND, i, &ss, 1, 0,
				     0, 0));
	for (i = 0; i < n; i++) {
		ASSERT_EQ(1, sroce_wait_wc(self->q.cq[1], &wc, WC_MS));
		EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	}
	for (i = 0; i < n; i++) {
		ASSERT_EQ(1, sroce_wait_wc(self->q.cq[0], &wc, WC_MS));
		EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	}
	ASSERT_EQ(1, sroce_wait_wc(self->q.cq[0], &wc, WC_MS));
	EXPECT_EQ(IBV_WC_RNR_RETRY_EXC_ERR, wc.status);
	EXPECT_EQ(n, wc.wr_id);

	ASSERT_EQ(0, ibv_modify_qp(self->q.qp[1], &qa, IBV_QP_STATE));
	EXPECT_EQ(0, wait_async(B_->ctx, IBV_EVENT_QP_LAST_WQE_REACHED, NULL,
				WC_MS));
	pair_down(&self->q);
	EXPECT_EQ(0, ibv_destroy_srq(srq));
}

TEST_HARNESS_MAIN
