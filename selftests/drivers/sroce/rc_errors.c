// SPDX-License-Identifier: GPL-2.0
/*
 * RC error paths: bad keys, bounds and rights, misaligned atomics, short
 * receives, RNR and retry exhaustion, oversized messages, and the state
 * each leaves the queue pairs in (IBA 9.9, 10.8).
 * The fixture, and how to point the tests at other devices: rc_fixture.h.
 */
#define _GNU_SOURCE
#include "rc_fixture.h"

/* -------------------------------------------------------- error paths */

#define FRESH	(DST + (1536u << 10))	/* where check_fresh_pair lands */

/*
 * Side @i of @p had an error completion: its QP is in ERR, and a WR
 * posted now completes with IBV_WC_WR_FLUSH_ERR.
 */
static void check_err_flush(struct __test_metadata *_metadata,
			    rc_fixture *self, struct pair *p, int i)
{
	struct ibv_sge s = sge(&self->s[i], 0, 64);

	EXPECT_EQ(IBV_QPS_ERR, sroce_wait_qp_state(p->qp[i], IBV_QPS_ERR, 1000))
		TH_LOG("QP %s after the error", i ? "B" : "A");
	ASSERT_EQ(0, post_op(p->qp[i], IBV_WR_SEND, 0xf1, &s, 1, 0, 0, 0))
		TH_LOG("posting to a QP in ERR");
	check_wc(_metadata, "WR posted in ERR", p->cq[i],
		 WANT(.wr_id = 0xf1, .status = IBV_WC_WR_FLUSH_ERR,
		      .qp_num = QPN(p, i)));
}

/*
 * The IBA's class C responder errors (remote access error, invalid
 * request) move the responder's QP to ERR as well: the receive posted
 * there is flushed.
 */
static void check_responder_err(struct __test_metadata *_metadata,
				struct pair *p, uint64_t recv_wr_id)
{
	EXPECT_EQ(IBV_QPS_ERR, sroce_wait_qp_state(p->qp[1], IBV_QPS_ERR, 1000))
		TH_LOG("responder's QP after a class C error");
	check_wc(_metadata, "responder's pending receive", p->cq[1],
		 WANT(.wr_id = recv_wr_id, .status = IBV_WC_WR_FLUSH_ERR,
		      .qp_num = QPN(p, 1)));
}

/* After an error, a new pair between the same two sides works. */
static void check_fresh_pair(struct __test_metadata *_metadata,
			     rc_fixture *self)
{
	struct ibv_sge rs = sge(B_, FRESH, 4096), ss = sge(A_, 11, 777);
	struct pair f;
	const char *step = pair_up(self, &f, NULL);

	ASSERT_EQ(NULL, step) TH_LOG("new pair: %s: %s", step,
				     strerror(errno));
	ASSERT_EQ(0, post_recv(f.qp[1], 0x11, &rs, 1));
	ASSERT_EQ(0, post_op(f.qp[0], IBV_WR_SEND, 0x22, &ss, 1, 0, 0, 0));
	check_wc(_metadata, "new pair SEND, requester", f.cq[0],
		 WANT(.wr_id = 0x22, .opcode = IBV_WC_SEND, .qp_num = QPN(&f, 0)));
	check_wc(_metadata, "new pair SEND, responder", f.cq[1],
		 WANT(.wr_id = 0x11, .opcode = IBV_WC_RECV, .qp_num = QPN(&f, 1),
		      .check_len = true, .byte_len = 777));
	check_landed(_metadata, "new pair SEND", B_->buf + FRESH, A_->buf + 11,
		     777);
	ss = sge(A_, 1000, 555);
	ASSERT_EQ(0, post_op(f.qp[0], IBV_WR_RDMA_WRITE, 0x33, &ss, 1,
			     raddr(B_, FRESH + 8192), B_->mr->rkey, 0));
	check_wc(_metadata, "new pair WRITE", f.cq[0],
		 WANT(.wr_id = 0x33, .opcode = IBV_WC_RDMA_WRITE,
		      .qp_num = QPN(&f, 0)));
	check_landed(_metadata, "new pair WRITE", B_->buf + FRESH + 8192,
		     A_->buf + 1000, 555);
	pair_down(&f);
}

/* An rkey that was valid on @s and is no more. */
static uint32_t dead_rkey(struct side *s)
{
	struct ibv_mr *mr = ibv_reg_mr(s->pd, s->buf, 4096, ALL_ACCESS);
	uint32_t rkey;

	if (!mr)
		return s->mr->rkey ^ 0x5a5a5a00;
	rkey = mr->rkey;
	ibv_dereg_mr(mr);
	return rkey;
}

TEST_F_TIMEOUT(rc, err_bad_rkey_write, T_SECS)
{
	struct ibv_sge rs = sge(B_, DST + 8192, 256), ss = sge(A_, 0, 100);
	uint32_t bad = dead_rkey(B_);

	ASSERT_EQ(0, post_recv(P_->qp[1], 0x11, &rs, 1));
	ASSERT_EQ(0, post_op(P_->qp[0], IBV_WR_RDMA_WRITE, 1, &ss, 1,
			     raddr(B_, DST + 4096), bad, 0));
	ASSERT_EQ(0, post_op(P_->qp[0], IBV_WR_RDMA_WRITE, 2, &ss, 1,
			     raddr(B_, DST + 16384), B_->mr->rkey, 0));
	check_wc(_metadata, "WRITE with a bad rkey", P_->cq[0],
		 WANT(.wr_id = 1, .status = IBV_WC_REM_ACCESS_ERR,
		      .qp_num = QPN(P_, 0)));
	check_wc(_metadata, "WR behind the failed one", P_->cq[0],
		 WANT(.wr_id = 2, .status = IBV_WC_WR_FLUSH_ERR,
		      .qp_num = QPN(P_, 0)));
	check_err_flush(_metadata, self, P_, 0);
	check_responder_err(_metadata, P_, 0x11);
	check_untouched(_metadata, "responder memory", B_->buf + DST,
			BUF_SIZE - DST);
	check_fresh_pair(_metadata, self);
}

TEST_F_TIMEOUT(rc, err_bad_rkey_read, T_SECS)
{
	struct ibv_sge rs = sge(B_, DST + 8192, 256);
	struct ibv_sge ls = sge(A_, DST + 4096, 100);
	uint32_t bad = dead_rkey(B_);

	ASSERT_EQ(0, post_recv(P_->qp[1], 0x11, &rs, 1));
	ASSERT_EQ(0, post_op(P_->qp[0], IBV_WR_RDMA_READ, 1, &ls, 1,
			     raddr(B_, 0), bad, 0));
	check_wc(_metadata, "READ with a bad rkey", P_->cq[0],
		 WANT(.wr_id = 1, .status = IBV_WC_REM_ACCESS_ERR,
		      .qp_num = QPN(P_, 0)));
	check_untouched(_metadata, "READ with a bad rkey, local buffer",
			A_->buf + DST, BUF_SIZE - DST);
	check_err_flush(_metadata, self, P_, 0);
	check_responder_err(_metadata, P_, 0x11);
	check_fresh_pair(_metadata, self);
}

TEST_F_TIMEOUT(rc, err_beyond_mr_end, T_SECS)
{
	struct ibv_sge rs = sge(B_, DST + 8192, 256), ss = sge(A_, 0, 32);
	struct ibv_sge ls = sge(A_, DST + 4096, 16);

	/* A WRITE running 16 bytes past the end of the remote MR... */
	ASSERT_EQ(0, post_recv(P_->qp[1], 0x11, &rs, 1));
	ASSERT_EQ(0, post_op(P_->qp[0], IBV_WR_RDMA_WRITE, 1, &ss, 1,
			     raddr(B_, BUF_SIZE - 16), B_->mr->rkey, 0));
	check_wc(_metadata, "WRITE past the MR's end", P_->cq[0],
		 WANT(.wr_id = 1, .status = IBV_WC_REM_ACCESS_ERR,
		      .qp_num = QPN(P_, 0)));
	check_err_flush(_metadata, self, P_, 0);
	check_responder_err(_metadata, P_, 0x11);
	check_untouched(_metadata, "WRITE past the MR's end, MR's tail",
			B_->buf + DST, BUF_SIZE - DST);

	/* ...and a READ starting 8 bytes before its start. */
	PAIR_UP(&self->q, NULL);
	ASSERT_EQ(0, post_recv(self->q.qp[1], 0x12, &rs, 1));
	ASSERT_EQ(0, post_op(self->q.qp[0], IBV_WR_RDMA_READ, 2, &ls, 1,
			     raddr(B_, 0) - 8, B_->mr->rkey, 0));
	check_wc(_metadata, "READ before the MR's start", self->q.cq[0],
		 WANT(.wr_id = 2, .status = IBV_WC_REM_ACCESS_ERR,
		      .qp_num = QPN(&self->q, 0)));
	check_untouched(_metadata, "READ before the MR's start",
			A_->buf + DST, BUF_SIZE - DST);
	check_err_flush(_metadata, self, &self->q, 0);
	check_responder_err(_metadata, &self->q, 0x12);
	check_fresh_pair(_metadata, self);
}

TEST_F_TIMEOUT(rc, err_lkey_other_pd, T_SECS)
{
	struct ibv_sge rs = sge(B_, DST + 8192, 256), ss;
	struct ibv_pd *pd2 = ibv_alloc_pd(A_->ctx);
	struct ibv_mr *mr2;

	ASSERT_NE(NULL, pd2);
	mr2 = ibv_reg_mr(pd2, A_->buf, 4096, IBV_ACCESS_LOCAL_WRITE);
	ASSERT_NE(NULL, mr2);
	/* The buffer is fine, the lkey belongs to another PD than the QP. */
	ss = (struct ibv_sge){ (uintptr_t)A_->buf, 100, mr2->lkey };
	ASSERT_EQ(0, post_recv(P_->qp[1], 0x11, &rs, 1));
	ASSERT_EQ(0, post_op(P_->qp[0], IBV_WR_SEND, 1, &ss, 1, 0, 0, 0));
	check_wc(_metadata, "SEND with another PD's lkey", P_->cq[0],
		 WANT(.wr_id = 1, .status = IBV_WC_LOC_PROT_ERR,
		      .qp_num = QPN(P_, 0)));
	check_err_flush(_metadata, self, P_, 0);
	/* Nothing reached the responder. */
	check_no_wc(_metadata, "responder", P_->cq[1]);
	EXPECT_EQ(IBV_QPS_RTS, sroce_qp_state(P_->qp[1]));
	check_untouched(_metadata, "responder memory", B_->buf + DST,
			BUF_SIZE - DST);
	pair_down(P_);
	EXPECT_EQ(0, ibv_dereg_mr(mr2));
	EXPECT_EQ(0, ibv_dealloc_pd(pd2));
	check_fresh_pair(_metadata, self);
}

TEST_F_TIMEOUT(rc, err_no_remote_write, T_SECS)
{
	struct ibv_sge rs = sge(B_, DST + 8192, 256), ss = sge(A_, 0, 100);
	struct ibv_sge ls = sge(A_, DST + 4096, 100);
	char *ro = B_->buf + DST + 65536, want[4096];
	struct ibv_mr *mr;

	fill_random(ro, sizeof(want), 77);
	memcpy(want, ro, sizeof(want));
	mr = ibv_reg_mr(B_->pd, ro, sizeof(want),
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	ASSERT_NE(NULL, mr);
	/* Reading it is allowed... */
	ASSERT_EQ(0, post_op(P_->qp[0], IBV_WR_RDMA_READ, 1, &ls, 1,
			     (uintptr_t)ro, mr->rkey, 0));
	check_wc(_metadata, "READ of a read-only MR", P_->cq[0],
		 WANT(.wr_id = 1, .opcode = IBV_WC_RDMA_READ,
		      .qp_num = QPN(P_, 0), .check_len = true,
		      .byte_len = 100));
	check_landed(_metadata, "READ of a read-only MR", A_->buf + DST + 4096,
		     want, 100);
	/* ...writing it is not. */
	ASSERT_EQ(0, post_recv(P_->qp[1], 0x11, &rs, 1));
	ASSERT_EQ(0, post_op(P_->qp[0], IBV_WR_RDMA_WRITE, 2, &ss, 1,
			     (uintptr_t)ro + 8, mr->rkey, 0));
	check_wc(_metadata, "WRITE to an MR without REMOTE_WRITE", P_->cq[0],
		 WANT(.wr_id = 2, .status = IBV_WC_REM_ACCESS_ERR,
		      .qp_num = QPN(P_, 0)));
	check_err_flush(_metadata, self, P_, 0);
	check_responder_err(_metadata, P_, 0x11);
	check_mem(_metadata, "MR without REMOTE_WRITE", ro, want,
		  sizeof(want));
	pair_down(P_);
	EXPECT_EQ(0, ibv_dereg_mr(mr));
	check_fresh_pair(_metadata, self);
}

/*
 * The IBA requires an atomic's remote address to be 8-byte aligned and
 * lists a misaligned atomic among the responder's invalid request errors
 * (class C, NAK code Invalid Request), so the requester completes with
 * IBV_WC_REM_INV_REQ_ERR - not a remote access error, which is for
 * R_Key and bounds violations. The check is the responder's: posting
 * must succeed.
 */
TEST_F_TIMEOUT(rc, err_misaligned_atomic, T_SECS)
{
	struct ibv_sge rs = sge(B_, DST + 8192, 256);
	struct ibv_sge ls = sge(A_, DST + 4096, 8);
	char *word = B_->buf + DST + 4096;

	if (no_atomics(A_))
		SKIP(return, "the device has no atomics");
	ASSERT_EQ(0, post_recv(P_->qp[1], 0x11, &rs, 1));
	ASSERT_EQ(0, post_atomic(P_->qp[0], IBV_WR_ATOMIC_CMP_AND_SWP, 1, &ls,
				 raddr(B_, DST + 4096 + 4), B_->mr->rkey,
				 0x5a5a5a5a5a5a5a5aull, 1))
		TH_LOG("the provider refused the WR: alignment is the responder's check");
	check_wc(_metadata, "misaligned CMP_AND_SWP", P_->cq[0],
		 WANT(.wr_id = 1, .status = IBV_WC_REM_INV_REQ_ERR,
		      .qp_num = QPN(P_, 0)));
	check_err_flush(_metadata, self, P_, 0);
	check_responder_err(_metadata, P_, 0x11);
	check_untouched(_metadata, "misaligned CMP_AND_SWP, remote", word - 8,
			24);
	check_untouched(_metadata, "misaligned CMP_AND_SWP, local",
			A_->buf + DST + 4096, 8);
	check_fresh_pair(_metadata, self);
}

/* A SEND longer than the receive buffer: each side's own status. */
TEST_F_TIMEOUT(rc, err_recv_too_small, T_SECS)
{
	struct ibv_sge r1 = sge(B_, DST + 4096, 100);
	struct ibv_sge r2 = sge(B_, DST + 8192, 4096), ss = sge(A_, 0, 200);

	ASSERT_EQ(0, post_recv(P_->qp[1], 0x11, &r1, 1));
	ASSERT_EQ(0, post_recv(P_->qp[1], 0x12, &r2, 1));
	ASSERT_EQ(0, post_op(P_->qp[0], IBV_WR_SEND, 1, &ss, 1, 0, 0, 0));
	check_wc(_metadata, "SEND longer than the receive, requester",
		 P_->cq[0], WANT(.wr_id = 1, .status = IBV_WC_REM_INV_REQ_ERR,
				 .qp_num = QPN(P_, 0)));
	check_wc(_metadata, "SEND longer than the receive, responder",
		 P_->cq[1], WANT(.wr_id = 0x11, .status = IBV_WC_LOC_LEN_ERR,
				 .qp_num = QPN(P_, 1)));
	check_err_flush(_metadata, self, P_, 0);
	check_responder_err(_metadata, P_, 0x12);
	check_untouched(_metadata, "past the short receive buffer",
			B_->buf + DST + 4096 + 100, BUF_SIZE - DST - 4096 - 100);
	check_fresh_pair(_metadata, self);
}

/*
 * A SEND of @len bytes with no receive posted for @wait_us: RNR NAKs are
 * retried (rnr_retry 7 = for ever) until the receive comes.
 */
static void send_after_rnr(struct __test_metadata *_metadata,
			   rc_fixture *self, uint32_t len,
			   useconds_t wait_us)
{
	struct ibv_sge rs = sge(B_, DST + 4096, len), ss = sge(A_, 0, len);

	ASSERT_EQ(0, post_op(P_->qp[0], IBV_WR_SEND, 0x22, &ss, 1, 0, 0, 0));
	usleep(wait_us);
	ASSERT_EQ(0, post_recv(P_->qp[1], 0x11, &rs, 1));
	check_wc(_metadata, "SEND after RNR, requester", P_->cq[0],
		 WANT(.wr_id = 0x22, .opcode = IBV_WC_SEND, .qp_num = QPN(P_, 0)));
	check_wc(_metadata, "SEND after RNR, responder", P_->cq[1],
		 WANT(.wr_id = 0x11, .opcode = IBV_WC_RECV, .qp_num = QPN(P_, 1),
		      .check_len = true, .byte_len = len));
	check_landed(_metadata, "SEND after RNR", B_->buf + DST + 4096,
		     A_->buf, len);
}

TEST_F_TIMEOUT(rc, rnr_retry_recovers, T_SECS)
{
	send_after_rnr(_metadata, self, 1000, 300000);
}

/*
 * A SEND beyond the responder's credits (the first one is: no ACK gave
 * any yet) only probes for a receive WQE: with none posted, each RNR NAK
 * refuses its first packet alone. The packets of the rest of the message,
 * sent behind it, would arrive out of sequence and be dropped, with every
 * retry. Counted on sroce devices only. Only two devices can tell: in
 * loopback the message goes as one unit (path MTU 1024) or two, and the
 * NAK is back before a second is built, so nothing went behind it even
 * without the rule.
 */
TEST_F_TIMEOUT(rc, rnr_probe_sends_one_packet, T_SECS)
{
	const char *dev_b = ibv_get_device_name(B_->ctx->device);
	long long oos = sroce_counter(dev_b, "rx_out_of_sequence");
	long long rnr = sroce_counter(dev_b, "rnr_nak_sent");

	/* An rdma_rxe requester knows no credits and sends it whole. */
	if (oos < 0 || rnr < 0 ||
	    sroce_counter(ibv_get_device_name(A_->ctx->device),
			  "rx_out_of_sequence") < 0)
		SKIP(return, "not sroce devices: no counters");
	send_after_rnr(_metadata, self, 32 * self->mtu_bytes, 100000);
	EXPECT_LT(rnr, sroce_counter(dev_b, "rnr_nak_sent"));
	EXPECT_EQ(oos, sroce_counter(dev_b, "rx_out_of_sequence"));
}

/*
 * End-to-end credits across a READ: with one receive posted, SEND, READ,
 * SEND. The second SEND waits for credits (sroce), or draws RNR NAKs,
 * until the second receive comes; the READ between them must neither be
 * held back nor leave the limit stuck (its response's MSN counts it).
 */
TEST_F_TIMEOUT(rc, credits_across_a_read, T_SECS)
{
	struct ibv_sge r0 = sge(B_, DST, 64), r1 = sge(B_, DST + 8192, 64);
	struct ibv_sge s0 = sge(A_, 0, 64), s1 = sge(A_, 64, 64);
	struct ibv_sge rd = sge(A_, DST + 4096, 256);

	ASSERT_EQ(0, post_recv(P_->qp[1], 0x51, &r0, 1));
	ASSERT_EQ(0, post_op(P_->qp[0], IBV_WR_SEND, 0x61, &s0, 1, 0, 0, 0));
	ASSERT_EQ(0, post_op(P_->qp[0], IBV_WR_RDMA_READ, 0x62, &rd, 1,
			     raddr(B_, 8192), B_->mr->rkey, 0));
	ASSERT_EQ(0, post_op(P_->qp[0], IBV_WR_SEND, 0x63, &s1, 1, 0, 0, 0));
	check_wc(_metadata, "first SEND", P_->cq[0],
		 WANT(.wr_id = 0x61, .opcode = IBV_WC_SEND, .qp_num = QPN(P_, 0)));
	check_wc(_metadata, "READ behind it", P_->cq[0],
		 WANT(.wr_id = 0x62, .opcode = IBV_WC_RDMA_READ,
		      .qp_num = QPN(P_, 0)));
	usleep(200000);
	check_no_wc(_metadata, "second SEND, no receive for it", P_->cq[0]);
	ASSERT_EQ(0, post_recv(P_->qp[1], 0x52, &r1, 1));
	check_wc(_metadata, "second SEND once a receive came", P_->cq[0],
		 WANT(.wr_id = 0x63, .opcode = IBV_WC_SEND, .qp_num = QPN(P_, 0)));
	check_wc(_metadata, "first receive", P_->cq[1],
		 WANT(.wr_id = 0x51, .opcode = IBV_WC_RECV, .qp_num = QPN(P_, 1),
		      .check_len = true, .byte_len = 64));
	check_wc(_metadata, "second receive", P_->cq[1],
		 WANT(.wr_id = 0x52, .opcode = IBV_WC_RECV, .qp_num = QPN(P_, 1),
		      .check_len = true, .byte_len = 64));
	check_landed(_metadata, "READ", A_->buf + DST + 4096, B_->buf + 8192,
		     256);
	check_landed(_metadata, "second SEND", B_->buf + DST + 8192,
		     A_->buf + 64, 64);
	EXPECT_EQ(IBV_QPS_RTS, sroce_qp_state(P_->qp[0]));
}

/*
 * WRITE with immediate meeting an empty receive queue is flow control
 * too: an RNR NAK, then the retried WRITE succeeds. Once as one packet
 * (WRITE_ONLY_IMM) and once as several (the RNR comes at WRITE_LAST_IMM).
 */
TEST_F_TIMEOUT(rc, rnr_write_with_imm_recovers, T_SECS)
{
	static const unsigned int lens[] = { 64, 5000 };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(lens); i++) {
		struct ibv_sge rs = sge(B_, DST + (1 << 20), 16);
		struct ibv_sge ss = sge(A_, i, lens[i]);

		ASSERT_EQ(0, post_op(P_->qp[0], IBV_WR_RDMA_WRITE_WITH_IMM,
				     0x30 + i, &ss, 1, raddr(B_, DST + 4096 + 8192 * i),
				     B_->mr->rkey, 0xabc0 + i));
		usleep(50000);
		ASSERT_EQ(0, post_recv(P_->qp[1], 0x40 + i, &rs, 1));
		check_wc(_metadata, "WRITE_WITH_IMM after RNR, requester",
			 P_->cq[0],
			 WANT(.wr_id = 0x30 + i, .opcode = IBV_WC_RDMA_WRITE,
			      .qp_num = QPN(P_, 0)));
		check_wc(_metadata, "WRITE_WITH_IMM after RNR, responder",
			 P_->cq[1],
			 WANT(.wr_id = 0x40 + i,
			      .opcode = IBV_WC_RECV_RDMA_WITH_IMM,
			      .qp_num = QPN(P_, 1), .check_len = true,
			      .byte_len = lens[i], .imm = true,
			      .imm_data = 0xabc0 + i));
		check_landed(_metadata, "WRITE_WITH_IMM after RNR",
			     B_->buf + DST + 4096 + 8192 * i, A_->buf + i, lens[i]);
	}
	EXPECT_EQ(IBV_QPS_RTS, sroce_qp_state(P_->qp[0]));
	EXPECT_EQ(IBV_QPS_RTS, sroce_qp_state(P_->qp[1]));
}

TEST_F_TIMEOUT(rc, err_rnr_retry_exceeded, T_SECS)
{
	struct conn c = { .rnr_retry_zero = true };
	struct ibv_sge ss = sge(A_, 0, 100);
	struct pair *q = &self->q;

	PAIR_UP(q, &c);
	/* No receive posted, no RNR retry allowed. */
	ASSERT_EQ(0, post_op(q->qp[0], IBV_WR_SEND, 1, &ss, 1, 0, 0, 0));
	check_wc(_metadata, "SEND without a receive, rnr_retry 0", q->cq[0],
		 WANT(.wr_id = 1, .status = IBV_WC_RNR_RETRY_EXC_ERR,
		      .qp_num = QPN(q, 0)));
	check_err_flush(_metadata, self, q, 0);
	/* Receiver not ready is no error for the responder. */
	EXPECT_EQ(IBV_QPS_RTS, sroce_qp_state(q->qp[1]));
	check_no_wc(_metadata, "responder", q->cq[1]);
	check_fresh_pair(_metadata, self);
}

TEST_F_TIMEOUT(rc, err_retry_exceeded, T_SECS)
{
	struct conn c = { .timeout = 10, .retry_cnt = 1 };
	struct ibv_qp_attr reset = { .qp_state = IBV_QPS_RESET };
	struct ibv_sge ss = sge(A_, 0, 100);
	struct pair *q = &self->q;

	PAIR_UP(q, &c);
	/* The peer is gone: nothing answers (4.1 ms timeout, one retry). */
	ASSERT_EQ(0, ibv_modify_qp(q->qp[1], &reset, IBV_QP_STATE));
	ASSERT_EQ(0, post_op(q->qp[0], IBV_WR_SEND, 1, &ss, 1, 0, 0, 0));
	check_wc(_metadata, "SEND to a reset QP", q->cq[0],
		 WANT(.wr_id = 1, .status = IBV_WC_RETRY_EXC_ERR,
		      .qp_num = QPN(q, 0), .ms = 60000));
	check_err_flush(_metadata, self, q, 0);
	check_fresh_pair(_metadata, self);
}

/*
 * One byte more than max_msg_sz: a local length error, nothing sent. The
 * QP_SGE gather entries all point into one alias MR a quarter that size.
 */
TEST_F_TIMEOUT(rc, over_max_msg_size, T_SECS)
{
	uint64_t max = A_->port.max_msg_sz, piece = (max + QP_SGE) / QP_SGE;
	struct ibv_sge s[QP_SGE], r = sge(B_, DST + 4096, 4096);
	struct ibv_mr *amr;
	struct alias al;
	int i;

	ASSERT_GT(0xffffffffull, piece) TH_LOG("max_msg_sz %llu is too big for %d SGEs",
					       (unsigned long long)max, QP_SGE);
	ASSERT_EQ(0, alias_map(&al, piece));
	amr = ibv_reg_mr(A_->pd, al.base, al.len, IBV_ACCESS_LOCAL_WRITE);
	ASSERT_NE(NULL, amr) TH_LOG("alias MR: %s", strerror(errno));
	for (i = 0; i < QP_SGE; i++)
		s[i] = (struct ibv_sge){ (uintptr_t)al.base,
					 i ? piece : max + 1 - 3 * piece,
					 amr->lkey };
	ASSERT_EQ(0, post_recv(P_->qp[1], 0x11, &r, 1));
	ASSERT_EQ(0, post_op(P_->qp[0], IBV_WR_SEND, 0x22, s, QP_SGE, 0, 0, 0))
		TH_LOG("a too long message is a completion error, not a post error");
	check_wc(_metadata, "SEND of max_msg_sz + 1", P_->cq[0],
		 WANT(.wr_id = 0x22, .status = IBV_WC_LOC_LEN_ERR,
		      .qp_num = QPN(P_, 0)));
	check_err_flush(_metadata, self, P_, 0);
	check_no_wc(_metadata, "responder of a too long SEND", P_->cq[1]);
	EXPECT_EQ(IBV_QPS_RTS, sroce_qp_state(P_->qp[1]));
	check_untouched(_metadata, "responder of a too long SEND",
			B_->buf + DST, BUF_SIZE - DST);
	pair_down(P_);
	ibv_dereg_mr(amr);
	munmap(al.base, al.len);
	check_fresh_pair(_metadata, self);
}

TEST_HARNESS_MAIN
