// SPDX-License-Identifier: GPL-2.0
/*
 * Memory windows over RC (types 1 and 2: bind, access, invalidate), and
 * the ACKs a requester asks for before local operations.
 * The fixture, and how to point the tests at other devices: rc_fixture.h.
 */
#define _GNU_SOURCE
#include "rc_fixture.h"

/* ---------------------------------------------------------- memory windows */

/* Side B's region for windows: MW_BIND and local write, no remote right. */
static struct ibv_mr *mw_region(struct side *s, int extra)
{
	return ibv_reg_mr(s->pd, s->buf + DST, 64 * 1024,
			  IBV_ACCESS_LOCAL_WRITE | extra);
}

/*
 * A signaled BIND_MW work request for type 2 window @mw under @rkey:
 * @len bytes of @mr at @addr, with the window's remote rights @access.
 */
static struct ibv_send_wr bind2_wr(uint64_t wr_id, struct ibv_mw *mw,
				   uint32_t rkey, struct ibv_mr *mr,
				   uint64_t addr, uint64_t len, int access)
{
	struct ibv_send_wr wr = { .wr_id = wr_id, .opcode = IBV_WR_BIND_MW,
				  .send_flags = IBV_SEND_SIGNALED };

	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = rkey;
	wr.bind_mw.bind_info.mr = mr;
	wr.bind_mw.bind_info.addr = addr;
	wr.bind_mw.bind_info.length = len;
	wr.bind_mw.bind_info.mw_access_flags = access;
	return wr;
}

/* Bind type 1 window @mw on QP @qp and wait for the completion. */
static int bind1(struct ibv_qp *qp, struct ibv_cq *cq, struct ibv_mw *mw,
		 struct ibv_mr *mr, uint64_t addr, uint64_t len, int access,
		 struct ibv_wc *wc)
{
	struct ibv_mw_bind b = {
		.wr_id = 0xb1, .send_flags = IBV_SEND_SIGNALED,
		.bind_info = { .mr = mr, .addr = addr, .length = len,
			       .mw_access_flags = access },
	};
	int ret = ibv_bind_mw(qp, mw, &b);

	if (ret)
		return ret;
	return sroce_wait_wc(cq, wc, WC_MS) == 1 ? 0 : -1;
}

/*
 * Type 1: a bound window opens a region that has no remote rights of its
 * own, for exactly its range and rights; the region cannot be
 * deregistered while the window is bound.
 */
TEST_F_TIMEOUT(rc, mw_type1_bind_and_access, T_SECS)
{
	struct ibv_mr *mr = mw_region(B_, IBV_ACCESS_MW_BIND);
	struct ibv_sge ss = sge(A_, 0, 4096);
	struct pair *q = &self->q;
	struct ibv_mw *mw;
	struct ibv_wc wc;

	ASSERT_NE(NULL, mr);
	mw = ibv_alloc_mw(B_->pd, IBV_MW_TYPE_1);
	ASSERT_NE(NULL, mw);
	PAIR_UP(q, NULL);
	ASSERT_EQ(0, bind1(q->qp[1], q->cq[1], mw, mr, raddr(B_, DST + 4096),
			   8192, IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_READ, &wc));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(IBV_WC_BIND_MW, wc.opcode);
	EXPECT_EQ(0xb1, wc.wr_id);
	EXPECT_EQ(EBUSY, ibv_dereg_mr(mr));

	ASSERT_EQ(0, post_op(q->qp[0], IBV_WR_RDMA_WRITE, 1, &ss, 1,
			     raddr(B_, DST + 4096), mw->rkey, 0));
	check_wc(_metadata, "WRITE through the window", q->cq[0],
		 WANT(.wr_id = 1, .opcode = IBV_WC_RDMA_WRITE,
		      .qp_num = QPN(q, 0)));
	check_landed(_metadata, "WRITE through the window",
		     B_->buf + DST + 4096, A_->buf, 4096);
	ss = sge(A_, DST + 4096, 4096);
	ASSERT_EQ(0, post_op(q->qp[0], IBV_WR_RDMA_READ, 2, &ss, 1,
			     raddr(B_, DST + 8192), mw->rkey, 0));
	check_wc(_metadata, "READ through the window", q->cq[0],
		 WANT(.wr_id = 2, .opcode = IBV_WC_RDMA_READ,
		      .qp_num = QPN(q, 0)));
	check_landed(_metadata, "READ through the window",
		     A_->buf + DST + 4096, B_->buf + DST + 8192, 4096);

	/* One byte past the window: a remote access error. */
	ss = sge(A_, 0, 16);
	ASSERT_EQ(0, post_op(q->qp[0], IBV_WR_RDMA_WRITE, 3, &ss, 1,
			     raddr(B_, DST + 4096 + 8192 - 15), mw->rkey, 0));
	check_wc(_metadata, "WRITE past the window", q->cq[0],
		 WANT(.wr_id = 3, .status = IBV_WC_REM_ACCESS_ERR,
		      .qp_num = QPN(q, 0)));
	pair_down(q);
	/* Unbound with its QP's PD still there: the region can go now. */
	EXPECT_EQ(0, ibv_dealloc_mw(mw));
	EXPECT_EQ(0, ibv_dereg_mr(mr));
}

/* A region registered without MW_BIND cannot take a window. */
TEST_F_TIMEOUT(rc, mw_bind_needs_bind_right, T_SECS)
{
	struct ibv_mr *mr = mw_region(B_, 0);
	struct pair *q = &self->q;
	struct ibv_mw *mw;
	struct ibv_wc wc;

	ASSERT_NE(NULL, mr);
	mw = ibv_alloc_mw(B_->pd, IBV_MW_TYPE_1);
	ASSERT_NE(NULL, mw);
	PAIR_UP(q, NULL);
	ASSERT_EQ(0, bind1(q->qp[1], q->cq[1], mw, mr, raddr(B_, DST), 4096,
			   IBV_ACCESS_REMOTE_READ, &wc));
	EXPECT_EQ(IBV_WC_MW_BIND_ERR, wc.status);
	pair_down(q);
	EXPECT_EQ(0, ibv_dealloc_mw(mw));
	EXPECT_EQ(0, ibv_dereg_mr(mr));
}

/*
 * Type 2: bound with a send WQE under a new rkey, used, invalidated by the
 * peer's SEND with invalidate (reported in the receive completion), then
 * refused; bound again and invalidated locally.
 */
TEST_F_TIMEOUT(rc, mw_type2_bind_invalidate, T_SECS)
{
	struct ibv_mr *mr = mw_region(B_, IBV_ACCESS_MW_BIND);
	struct ibv_sge ss = sge(A_, 0, 512), rs = sge(B_, 0, 64);
	struct ibv_send_wr bw = {}, *bad;
	struct pair *q = &self->q;
	struct ibv_send_wr iw = {};
	struct ibv_mw *mw;
	struct ibv_wc wc;
	uint32_t rkey;

	ASSERT_NE(NULL, mr);
	mw = ibv_alloc_mw(B_->pd, IBV_MW_TYPE_2);
	ASSERT_NE(NULL, mw);
	PAIR_UP(q, NULL);

	rkey = ibv_inc_rkey(mw->rkey);
	bw = bind2_wr(0xb2, mw, rkey, mr, raddr(B_, DST + 4096), 4096,
		      IBV_ACCESS_REMOTE_WRITE);
	ASSERT_EQ(0, ibv_post_send(q->qp[1], &bw, &bad));
	check_wc(_metadata, "type 2 bind", q->cq[1],
		 WANT(.wr_id = 0xb2, .opcode = IBV_WC_BIND_MW,
		      .qp_num = QPN(q, 1)));
	ASSERT_EQ(0, post_op(q->qp[0], IBV_WR_RDMA_WRITE, 1, &ss, 1,
			     raddr(B_, DST + 4096), rkey, 0));
	check_wc(_metadata, "WRITE through the type 2 window", q->cq[0],
		 WANT(.wr_id = 1, .opcode = IBV_WC_RDMA_WRITE,
		      .qp_num = QPN(q, 0)));
	check_landed(_metadata, "WRITE through the type 2 window",
		     B_->buf + DST + 4096, A_->buf, 512);

	/* A second bind while bound: refused (invalidate first). */
	ASSERT_EQ(0, ibv_post_send(q->qp[1], &bw, &bad));
	ASSERT_EQ(1, sroce_wait_wc(q->cq[1], &wc, WC_MS));
	EXPECT_EQ(IBV_WC_MW_BIND_ERR, wc.status);
	pair_down(q);
	EXPECT_EQ(0, ibv_dealloc_mw(mw));

	/* A fresh window: bind, use, invalidate locally, refused. */
	mw = ibv_alloc_mw(B_->pd, IBV_MW_TYPE_2);
	ASSERT_NE(NULL, mw);
	PAIR_UP(q, NULL);
	rkey = ibv_inc_rkey(mw->rkey);
	bw.bind_mw.mw = mw;
	bw.bind_mw.rkey = rkey;
	ASSERT_EQ(0, ibv_post_send(q->qp[1], &bw, &bad));
	check_wc(_metadata, "type 2 bind", q->cq[1],
		 WANT(.wr_id = 0xb2, .opcode = IBV_WC_BIND_MW,
		      .qp_num = QPN(q, 1)));
	iw.wr_id = 0x1c;
	iw.opcode = IBV_WR_LOCAL_INV;
	iw.send_flags = IBV_SEND_SIGNALED;
	iw.invalidate_rkey = rkey;
	ASSERT_EQ(0, ibv_post_send(q->qp[1], &iw, &bad));
	check_wc(_metadata, "LOCAL_INV of the window", q->cq[1],
		 WANT(.wr_id = 0x1c, .opcode = IBV_WC_LOCAL_INV,
		      .qp_num = QPN(q, 1)));

	/* Invalidated, it binds again; SEND with invalidate from A. */
	rkey = ibv_inc_rkey(rkey);
	bw.bind_mw.rkey = rkey;
	ASSERT_EQ(0, ibv_post_send(q->qp[1], &bw, &bad));
	check_wc(_metadata, "type 2 bind after LOCAL_INV", q->cq[1],
		 WANT(.wr_id = 0xb2, .opcode = IBV_WC_BIND_MW,
		      .qp_num = QPN(q, 1)));
	ASSERT_EQ(0, post_recv(q->qp[1], 0x11, &rs, 1));
	iw.opcode = IBV_WR_SEND_WITH_INV;
	iw.invalidate_rkey = rkey;
	iw.wr_id = 0x22;
	ASSERT_EQ(0, ibv_post_send(q->qp[0], &iw, &bad));
	check_wc(_metadata, "SEND with invalidate", q->cq[0],
		 WANT(.wr_id = 0x22, .opcode = IBV_WC_SEND,
		      .qp_num = QPN(q, 0)));
	ASSERT_EQ(1, sroce_wait_wc(q->cq[1], &wc, WC_MS));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(0x11, wc.wr_id);
	EXPECT_TRUE(wc.wc_flags & IBV_WC_WITH_INV);
	EXPECT_EQ(rkey, wc.invalidated_rkey);
	ASSERT_EQ(0, post_op(q->qp[0], IBV_WR_RDMA_WRITE, 3, &ss, 1,
			     raddr(B_, DST + 4096), rkey, 0));
	check_wc(_metadata, "WRITE through an invalidated window", q->cq[0],
		 WANT(.wr_id = 3, .status = IBV_WC_REM_ACCESS_ERR,
		      .qp_num = QPN(q, 0)));
	pair_down(q);
	EXPECT_EQ(0, ibv_dealloc_mw(mw));
	EXPECT_EQ(0, ibv_dereg_mr(mr));
}

/*
 * A type 2 window serves only the QP it was bound through: destroying
 * that QP invalidates it, so a later QP cannot use it and its region may
 * be deregistered.
 */
TEST_F_TIMEOUT(rc, mw_type2_dies_with_its_qp, T_SECS)
{
	struct ibv_mr *mr = mw_region(B_, IBV_ACCESS_MW_BIND);
	struct ibv_sge ss = sge(A_, 0, 512);
	struct ibv_send_wr bw = {}, *bad;
	struct pair *q = &self->q;
	struct ibv_mw *mw;
	uint32_t rkey;

	ASSERT_NE(NULL, mr);
	mw = ibv_alloc_mw(B_->pd, IBV_MW_TYPE_2);
	ASSERT_NE(NULL, mw);
	PAIR_UP(q, NULL);
	rkey = ibv_inc_rkey(mw->rkey);
	bw = bind2_wr(0xb2, mw, rkey, mr, raddr(B_, DST + 4096), 4096,
		      IBV_ACCESS_REMOTE_WRITE);
	ASSERT_EQ(0, ibv_post_send(q->qp[1], &bw, &bad));
	check_wc(_metadata, "type 2 bind", q->cq[1],
		 WANT(.wr_id = 0xb2, .opcode = IBV_WC_BIND_MW,
		      .qp_num = QPN(q, 1)));
	EXPECT_EQ(EBUSY, ibv_dereg_mr(mr)) TH_LOG("deregistered while bound");
	pair_down(q);

	PAIR_UP(q, NULL);
	ASSERT_EQ(0, post_op(q->qp[0], IBV_WR_RDMA_WRITE, 1, &ss, 1,
			     raddr(B_, DST + 4096), rkey, 0));
	check_wc(_metadata, "WRITE through the window of a destroyed QP",
		 q->cq[0], WANT(.wr_id = 1, .status = IBV_WC_REM_ACCESS_ERR,
				.qp_num = QPN(q, 0)));
	check_untouched(_metadata, "window of a destroyed QP",
			B_->buf + DST + 4096, 512);
	pair_down(q);
	EXPECT_EQ(0, ibv_dereg_mr(mr)) TH_LOG("region still held by the window");
	EXPECT_EQ(0, ibv_dealloc_mw(mw));
}

/*
 * Windows as rdma-core's own tests (pyverbs) bind them: with the region's
 * access set, LOCAL_WRITE included, which a window ignores; a type 1
 * window unbound by a zero-length bind; a type 2 window bound, invalidated
 * locally and invalidated by the peer through the ibv_wr_*() API; and a
 * window bound with no remote right refusing a remote write.
 */
TEST_F_TIMEOUT(rc, mw_binds_as_pyverbs, T_SECS)
{
	struct ibv_mr *mr_b = mw_region(B_, IBV_ACCESS_MW_BIND);
	struct ibv_mr *mr_a = mw_region(A_, IBV_ACCESS_MW_BIND);
	const int rw_local = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE;
	struct ibv_sge ss = sge(A_, 0, 512), rs = sge(B_, 0, 64);
	struct ibv_mw_bind_info bi = {
		.mr = mr_a, .addr = raddr(A_, DST + 4096), .length = 4096,
		.mw_access_flags = rw_local,
	};
	struct conn c = { .ex = true };
	struct pair *q = &self->q;
	struct ibv_send_wr bw = {}, *bad;
	struct ibv_mw *mw1, *mw2, *mw3;
	struct ibv_qp_ex *qpx;
	struct ibv_wc wc;
	uint32_t rkey;

	ASSERT_NE(NULL, mr_b);
	ASSERT_NE(NULL, mr_a);
	mw1 = ibv_alloc_mw(B_->pd, IBV_MW_TYPE_1);
	mw2 = ibv_alloc_mw(A_->pd, IBV_MW_TYPE_2);
	mw3 = ibv_alloc_mw(B_->pd, IBV_MW_TYPE_2);
	ASSERT_NE(NULL, mw1);
	ASSERT_NE(NULL, mw2);
	ASSERT_NE(NULL, mw3);
	PAIR_UP(q, &c);
	qpx = ibv_qp_to_qp_ex(q->qp[0]);
	ASSERT_NE(NULL, qpx);

	/* Type 1 with LOCAL_WRITE in the set: bound, and it works. */
	ASSERT_EQ(0, bind1(q->qp[1], q->cq[1], mw1, mr_b,
			   raddr(B_, DST + 4096), 4096, rw_local, &wc));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	ASSERT_EQ(0, post_op(q->qp[0], IBV_WR_RDMA_WRITE, 1, &ss, 1,
			     raddr(B_, DST + 4096), mw1->rkey, 0));
	check_wc(_metadata, "WRITE through a type 1 window", q->cq[0],
		 WANT(.wr_id = 1, .opcode = IBV_WC_RDMA_WRITE,
		      .qp_num = QPN(q, 0)));
	check_landed(_metadata, "WRITE through a type 1 window",
		     B_->buf + DST + 4096, A_->buf, 512);
	/* Unbound by a zero-length bind with no rights. */
	ASSERT_EQ(0, bind1(q->qp[1], q->cq[1], mw1, mr_b,
			   raddr(B_, DST + 4096), 0, 0, &wc));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);

	/* Type 2 bound through ibv_wr_bind_mw(), used, LOCAL_INV'd. */
	rkey = ibv_inc_rkey(mw2->rkey);
	ibv_wr_start(qpx);
	qpx->wr_id = 0xb2;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_bind_mw(qpx, mw2, rkey, &bi);
	ASSERT_EQ(0, ibv_wr_complete(qpx));
	check_wc(_metadata, "ibv_wr_bind_mw", q->cq[0],
		 WANT(.wr_id = 0xb2, .opcode = IBV_WC_BIND_MW,
		      .qp_num = QPN(q, 0)));
	ss = sge(B_, 8192, 512);
	ASSERT_EQ(0, post_op(q->qp[1], IBV_WR_RDMA_WRITE, 2, &ss, 1,
			     raddr(A_, DST + 4096), rkey, 0));
	check_wc(_metadata, "WRITE through a type 2 window", q->cq[1],
		 WANT(.wr_id = 2, .opcode = IBV_WC_RDMA_WRITE,
		      .qp_num = QPN(q, 1)));
	check_landed(_metadata, "WRITE through a type 2 window",
		     A_->buf + DST + 4096, B_->buf + 8192, 512);
	ibv_wr_start(qpx);
	qpx->wr_id = 0x1c;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_local_inv(qpx, rkey);
	ASSERT_EQ(0, ibv_wr_complete(qpx));
	check_wc(_metadata, "ibv_wr_local_inv", q->cq[0],
		 WANT(.wr_id = 0x1c, .opcode = IBV_WC_LOCAL_INV,
		      .qp_num = QPN(q, 0)));

	/* B binds a type 2 window; A invalidates it with ibv_wr_send_inv(). */
	rkey = ibv_inc_rkey(mw3->rkey);
	bw = bind2_wr(0xb3, mw3, rkey, mr_b, raddr(B_, DST + 8192), 4096,
		      rw_local);
	ASSERT_EQ(0, ibv_post_send(q->qp[1], &bw, &bad));
	check_wc(_metadata, "type 2 bind by B", q->cq[1],
		 WANT(.wr_id = 0xb3, .opcode = IBV_WC_BIND_MW,
		      .qp_num = QPN(q, 1)));
	ASSERT_EQ(0, post_recv(q->qp[1], 0x11, &rs, 1));
	ss = sge(A_, 0, 32);
	ibv_wr_start(qpx);
	qpx->wr_id = 0x22;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send_inv(qpx, rkey);
	ibv_wr_set_sge(qpx, ss.lkey, ss.addr, ss.length);
	ASSERT_EQ(0, ibv_wr_complete(qpx));
	check_wc(_metadata, "ibv_wr_send_inv", q->cq[0],
		 WANT(.wr_id = 0x22, .opcode = IBV_WC_SEND,
		      .qp_num = QPN(q, 0)));
	ASSERT_EQ(1, sroce_wait_wc(q->cq[1], &wc, WC_MS));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_TRUE(wc.wc_flags & IBV_WC_WITH_INV);
	EXPECT_EQ(rkey, wc.invalidated_rkey);

	/* A local operation takes no data: the batch is refused whole. */
	ibv_wr_start(qpx);
	ibv_wr_local_inv(qpx, rkey);
	ibv_wr_set_sge(qpx, ss.lkey, ss.addr, ss.length);
	EXPECT_EQ(EINVAL, ibv_wr_complete(qpx));

	/* Bound with LOCAL_WRITE alone: no remote right, the write fails. */
	rkey = ibv_inc_rkey(ibv_inc_rkey(mw2->rkey));
	bi.mw_access_flags = IBV_ACCESS_LOCAL_WRITE;
	ibv_wr_start(qpx);
	qpx->wr_id = 0xb4;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_bind_mw(qpx, mw2, rkey, &bi);
	ASSERT_EQ(0, ibv_wr_complete(qpx));
	check_wc(_metadata, "bind with no remote right", q->cq[0],
		 WANT(.wr_id = 0xb4, .opcode = IBV_WC_BIND_MW,
		      .qp_num = QPN(q, 0)));
	ss = sge(B_, 8192, 64);
	ASSERT_EQ(0, post_op(q->qp[1], IBV_WR_RDMA_WRITE, 5, &ss, 1,
			     raddr(A_, DST + 4096), rkey, 0));
	check_wc(_metadata, "WRITE through a window without the right",
		 q->cq[1], WANT(.wr_id = 5, .status = IBV_WC_REM_ACCESS_ERR,
				.qp_num = QPN(q, 1)));
	pair_down(q);
	EXPECT_EQ(0, ibv_dealloc_mw(mw1));
	EXPECT_EQ(0, ibv_dealloc_mw(mw2));
	EXPECT_EQ(0, ibv_dealloc_mw(mw3));
	EXPECT_EQ(0, ibv_dereg_mr(mr_a));
	EXPECT_EQ(0, ibv_dereg_mr(mr_b));
}

/*
 * A SEND followed on the send queue by a local operation, as FRWR users
 * (NFS over RDMA) post them: nothing is sent after the SEND, so its last
 * packet must ask for the ACK, or the bind behind it waits for the
 * retransmission timer (and a resent SEND went unanswered). No timeout,
 * no duplicate: in loopback nothing is lost.
 */
TEST_F_TIMEOUT(rc, ack_asked_before_local_op, T_SECS)
{
	struct ibv_mr *mr = mw_region(A_, IBV_ACCESS_MW_BIND);
	struct ibv_sge ss = sge(A_, 0, 64), rs = sge(B_, 0, 64);
	const char *dev_a = ibv_get_device_name(A_->ctx->device);
	const char *dev_b = ibv_get_device_name(B_->ctx->device);
	struct ibv_send_wr bw = {}, sw = {}, *bad;
	struct ibv_send_wr iw = {
		.wr_id = 0x1c, .opcode = IBV_WR_LOCAL_INV,
		.send_flags = IBV_SEND_SIGNALED,
	};
	long long timeouts, dups;
	struct pair *q = &self->q;
	struct ibv_mw *mw;
	struct ibv_wc wc;
	int i;

	ASSERT_NE(NULL, mr);
	mw = ibv_alloc_mw(A_->pd, IBV_MW_TYPE_2);
	ASSERT_NE(NULL, mw);
	PAIR_UP(q, NULL);
	timeouts = sroce_counter(dev_a, "retransmit_timeout");
	dups = sroce_counter(dev_b, "rx_duplicate_request");
	if (timeouts < 0 || dups < 0)
		SKIP(goto out, "not sroce devices: no counters");

	sw.wr_id = 0x5e;
	sw.opcode = IBV_WR_SEND;
	sw.sg_list = &ss;
	sw.num_sge = 1;
	sw.next = &bw;
	bw = bind2_wr(0xb2, mw, 0, mr, raddr(A_, DST + 4096), 4096,
		      IBV_ACCESS_REMOTE_WRITE);
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, post_recv(q->qp[1], 0x11, &rs, 1));
		bw.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
		ASSERT_EQ(0, ibv_post_send(q->qp[0], &sw, &bad));
		check_wc(_metadata, "bind behind an unsignaled SEND", q->cq[0],
			 WANT(.wr_id = 0xb2, .opcode = IBV_WC_BIND_MW,
			      .qp_num = QPN(q, 0)));
		ASSERT_EQ(1, sroce_wait_wc(q->cq[1], &wc, WC_MS));
		EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
		/* Unbind for the next round. */
		iw.invalidate_rkey = bw.bind_mw.rkey;
		ASSERT_EQ(0, ibv_post_send(q->qp[0], &iw, &bad));
		check_wc(_metadata, "LOCAL_INV of the window", q->cq[0],
			 WANT(.wr_id = 0x1c, .opcode = IBV_WC_LOCAL_INV,
			      .qp_num = QPN(q, 0)));
	}
	EXPECT_EQ(timeouts, sroce_counter(dev_a, "retransmit_timeout"));
	EXPECT_EQ(dups, sroce_counter(dev_b, "rx_duplicate_request"));
out:
	pair_down(q);
	EXPECT_EQ(0, ibv_dealloc_mw(mw));
	EXPECT_EQ(0, ibv_dereg_mr(mr));
}

TEST_HARNESS_MAIN
