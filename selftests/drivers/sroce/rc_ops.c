// SPDX-License-Identifier: GPL-2.0
/*
 * RC data path selftests: every RC (and UC) operation between two queue
 * pairs, the data checked byte for byte (and the bytes around it left
 * alone), every completion field the verbs define for the operation, the
 * extended post and poll APIs, and message sizes up to the largest.
 * The fixture, and how to point the tests at other devices: rc_fixture.h.
 */
#define _GNU_SOURCE
#include <rdma/sroce-abi.h>

#include "rc_fixture.h"

/* ------------------------------------------------------ basic operations */

TEST_F_TIMEOUT(rc, send, T_SECS)
{
	struct ibv_sge rs = sge(B_, DST + 4096, 8192), ss = sge(A_, 100, 3001);

	ASSERT_EQ(0, post_recv(P_->qp[1], 0x11, &rs, 1));
	ASSERT_EQ(0, post_op(P_->qp[0], IBV_WR_SEND, 0x22, &ss, 1, 0, 0, 0));
	check_wc(_metadata, "SEND, requester", P_->cq[0],
		 WANT(.wr_id = 0x22, .opcode = IBV_WC_SEND, .qp_num = QPN(P_, 0)));
	check_wc(_metadata, "SEND, responder", P_->cq[1],
		 WANT(.wr_id = 0x11, .opcode = IBV_WC_RECV, .qp_num = QPN(P_, 1),
		      .check_len = true, .byte_len = 3001));
	check_landed(_metadata, "SEND", B_->buf + DST + 4096, A_->buf + 100,
		     3001);
	check_untouched(_metadata, "SEND, rest of the receive buffer",
			B_->buf + DST + 4096 + 3001, 8192 - 3001);

	/* And the other way. */
	rs = sge(A_, DST + 4096, 2000);
	ss = sge(B_, 7, 1999);
	ASSERT_EQ(0, post_recv(P_->qp[0], 0x33, &rs, 1));
	ASSERT_EQ(0, post_op(P_->qp[1], IBV_WR_SEND, 0x44, &ss, 1, 0, 0, 0));
	check_wc(_metadata, "SEND B->A, requester", P_->cq[1],
		 WANT(.wr_id = 0x44, .opcode = IBV_WC_SEND, .qp_num = QPN(P_, 1)));
	check_wc(_metadata, "SEND B->A, responder", P_->cq[0],
		 WANT(.wr_id = 0x33, .opcode = IBV_WC_RECV, .qp_num = QPN(P_, 0),
		      .check_len = true, .byte_len = 1999));
	check_landed(_metadata, "SEND B->A", A_->buf + DST + 4096, B_->buf + 7,
		     1999);
}

TEST_F_TIMEOUT(rc, send_with_imm, T_SECS)
{
	struct ibv_sge rs = sge(B_, DST + 4096, 4096), ss = sge(A_, 0, 777);

	ASSERT_EQ(0, post_recv(P_->qp[1], 0x11, &rs, 1));
	ASSERT_EQ(0, post_op(P_->qp[0], IBV_WR_SEND_WITH_IMM, 0x22, &ss, 1,
			     0, 0, 0x80c0ffee));
	check_wc(_metadata, "SEND_WITH_IMM, requester", P_->cq[0],
		 WANT(.wr_id = 0x22, .opcode = IBV_WC_SEND, .qp_num = QPN(P_, 0)));
	check_wc(_metadata, "SEND_WITH_IMM, responder", P_->cq[1],
		 WANT(.wr_id = 0x11, .opcode = IBV_WC_RECV, .qp_num = QPN(P_, 1),
		      .check_len = true, .byte_len = 777, .imm = true,
		      .imm_data = 0x80c0ffee));
	check_landed(_metadata, "SEND_WITH_IMM", B_->buf + DST + 4096, A_->buf,
		     777);
}

TEST_F_TIMEOUT(rc, rdma_write, T_SECS)
{
	struct ibv_sge ss = sge(A_, 3, 10007);

	ASSERT_EQ(0, post_op(P_->qp[0], IBV_WR_RDMA_WRITE, 0x22, &ss, 1,
			     raddr(B_, DST + 4099), B_->mr->rkey, 0));
	check_wc(_metadata, "RDMA_WRITE, requester", P_->cq[0],
		 WANT(.wr_id = 0x22, .opcode = IBV_WC_RDMA_WRITE,
		      .qp_num = QPN(P_, 0)));
	check_landed(_metadata, "RDMA_WRITE", B_->buf + DST + 4099, A_->buf + 3,
		     10007);
	/* A plain WRITE completes nothing at the responder. */
	check_no_wc(_metadata, "RDMA_WRITE, responder", P_->cq[1]);
}

TEST_F_TIMEOUT(rc, rdma_write_with_imm, T_SECS)
{
	struct ibv_sge rs = sge(B_, DST + (1 << 20), 256), ss = sge(A_, 0, 5000);

	/* The receive WQE is consumed, its buffer is not written. */
	ASSERT_EQ(0, post_recv(P_->qp[1], 0x11, &rs, 1));
	ASSERT_EQ(0, post_op(P_->qp[0], IBV_WR_RDMA_WRITE_WITH_IMM, 0x22, &ss,
			     1, raddr(B_, DST + 4096), B_->mr->rkey,
			     0x12345678));
	check_wc(_metadata, "RDMA_WRITE_WITH_IMM, requester", P_->cq[0],
		 WANT(.wr_id = 0x22, .opcode = IBV_WC_RDMA_WRITE,
		      .qp_num = QPN(P_, 0)));
	check_wc(_metadata, "RDMA_WRITE_WITH_IMM, responder", P_->cq[1],
		 WANT(.wr_id = 0x11, .opcode = IBV_WC_RECV_RDMA_WITH_IMM,
		      .qp_num = QPN(P_, 1), .check_len = true, .byte_len = 5000,
		      .imm = true, .imm_data = 0x12345678));
	check_landed(_metadata, "RDMA_WRITE_WITH_IMM", B_->buf + DST + 4096,
		     A_->buf, 5000);
	check_untouched(_metadata, "RDMA_WRITE_WITH_IMM, receive buffer",
			B_->buf + DST + (1 << 20), 256);
}

TEST_F_TIMEOUT(rc, rdma_read, T_SECS)
{
	struct ibv_sge ls = sge(A_, DST + 4096, 12345);

	ASSERT_EQ(0, post_op(P_->qp[0], IBV_WR_RDMA_READ, 0x22, &ls, 1,
			     raddr(B_, 8191), B_->mr->rkey, 0));
	check_wc(_metadata, "RDMA_READ, requester", P_->cq[0],
		 WANT(.wr_id = 0x22, .opcode = IBV_WC_RDMA_READ,
		      .qp_num = QPN(P_, 0), .check_len = true,
		      .byte_len = 12345));
	check_landed(_metadata, "RDMA_READ", A_->buf + DST + 4096,
		     B_->buf + 8191, 12345);
	check_no_wc(_metadata, "RDMA_READ, responder", P_->cq[1]);
}

static uint64_t load64(const char *p)
{
	return __atomic_load_n((const uint64_t *)p, __ATOMIC_SEQ_CST);
}

static void store64(char *p, uint64_t v)
{
	__atomic_store_n((uint64_t *)p, v, __ATOMIC_SEQ_CST);
}

TEST_F_TIMEOUT(rc, atomic_cmp_and_swp, T_SECS)
{
	char *word = B_->buf + DST + 4096, *res = A_->buf + DST + 4096;
	struct ibv_sge ls = sge(A_, DST + 4096, 8);

	if (no_atomics(A_))
		SKIP(return, "the device has no atomics");
	store64(word, 0x1122334455667788ull);
	/* Success: the old value comes back and the swap value is stored. */
	ASSERT_EQ(0, post_atomic(P_->qp[0], IBV_WR_ATOMIC_CMP_AND_SWP, 0x22,
				 &ls, raddr(B_, DST + 4096), B_->mr->rkey,
				 0x1122334455667788ull, 0xfedcba9876543210ull));
	check_wc(_metadata, "CMP_AND_SWP", P_->cq[0],
		 WANT(.wr_id = 0x22, .opcode = IBV_WC_COMP_SWAP,
		      .qp_num = QPN(P_, 0), .check_len = true, .byte_len = 8));
	EXPECT_EQ(0x1122334455667788ull, load64(res));
	EXPECT_EQ(0xfedcba9876543210ull, load64(word));

	/* Mismatch: the current value comes back, memory stays. */
	store64(res, 0);
	ASSERT_EQ(0, post_atomic(P_->qp[0], IBV_WR_ATOMIC_CMP_AND_SWP, 0x33,
				 &ls, raddr(B_, DST + 4096), B_->mr->rkey,
				 0x1122334455667788ull, 0x0badf00d0badf00dull));
	check_wc(_metadata, "CMP_AND_SWP mismatch", P_->cq[0],
		 WANT(.wr_id = 0x33, .opcode = IBV_WC_COMP_SWAP,
		      .qp_num = QPN(P_, 0), .check_len = true, .byte_len = 8));
	EXPECT_EQ(0xfedcba9876543210ull, load64(res));
	EXPECT_EQ(0xfedcba9876543210ull, load64(word));
	check_untouched(_metadata, "CMP_AND_SWP, before the word",
			word - GUARD, GUARD);
	check_untouched(_metadata, "CMP_AND_SWP, after the word", word + 8,
			GUARD);
	check_untouched(_metadata, "CMP_AND_SWP, after the result",
			res + 8, GUARD);
	check_no_wc(_metadata, "atomics, responder", P_->cq[1]);
}

TEST_F_TIMEOUT(rc, atomic_fetch_and_add, T_SECS)
{
	char *word = B_->buf + DST + 4096, *res = A_->buf + DST + 4096;
	struct ibv_sge ls = sge(A_, DST + 4096, 8);

	if (no_atomics(A_))
		SKIP(return, "the device has no atomics");
	/* A carry out of the low 32 bits... */
	store64(word, 0x00000000ffffffffull);
	ASSERT_EQ(0, post_atomic(P_->qp[0], IBV_WR_ATOMIC_FETCH_AND_ADD, 0x22,
				 &ls, raddr(B_, DST + 4096), B_->mr->rkey,
				 1, 0));
	check_wc(_metadata, "FETCH_AND_ADD", P_->cq[0],
		 WANT(.wr_id = 0x22, .opcode = IBV_WC_FETCH_ADD,
		      .qp_num = QPN(P_, 0), .check_len = true, .byte_len = 8));
	EXPECT_EQ(0x00000000ffffffffull, load64(res));
	EXPECT_EQ(0x0000000100000000ull, load64(word));

	/* ...and a wrap of all 64. */
	store64(word, 0xfffffffffffffff0ull);
	ASSERT_EQ(0, post_atomic(P_->qp[0], IBV_WR_ATOMIC_FETCH_AND_ADD, 0x33,
				 &ls, raddr(B_, DST + 4096), B_->mr->rkey,
				 0x0000000100000020ull, 0));
	check_wc(_metadata, "FETCH_AND_ADD wrapping", P_->cq[0],
		 WANT(.wr_id = 0x33, .opcode = IBV_WC_FETCH_ADD,
		      .qp_num = QPN(P_, 0), .check_len = true, .byte_len = 8));
	EXPECT_EQ(0xfffffffffffffff0ull, load64(res));
	EXPECT_EQ(0x0000000100000010ull, load64(word));
	check_untouched(_metadata, "FETCH_AND_ADD, before the word",
			word - GUARD, GUARD);
	check_untouched(_metadata, "FETCH_AND_ADD, after the word", word + 8,
			GUARD);
	check_no_wc(_metadata, "atomics, responder", P_->cq[1]);
}

/* ----------------------------------------------------- message shapes */

/* Gather the bytes @n SGEs point at into @out; their total length. */
static size_t gather(char *out, struct ibv_sge *sg, int n)
{
	size_t len = 0;
	int i;

	for (i = 0; i < n; i++) {
		memcpy(out + len, (void *)(uintptr_t)sg[i].addr,
		       sg[i].length);
		len += sg[i].length;
	}
	return len;
}

/*
 * The first @len bytes of @want were scattered over @sg: check each
 * piece, and that what the message did not fill stayed untouched.
 */
static void check_scattered(struct __test_metadata *_metadata,
			    const char *what, struct ibv_sge *sg, int n,
			    const char *want, size_t len)
{
	size_t off = 0, k;
	int i;

	for (i = 0; i < n; i++) {
		k = len - off < sg[i].length ? len - off : sg[i].length;
		check_mem(_metadata, what, (void *)(uintptr_t)sg[i].addr,
			  want + off, k);
		check_untouched(_metadata, what,
				(char *)(uintptr_t)sg[i].addr + k,
				sg[i].length - k);
		off += k;
	}
}

TEST_F_TIMEOUT(rc, multi_sge, T_SECS)
{
	/* Odd sizes, most pieces across a page boundary... */
	struct ibv_sge ss[QP_SGE] = {
		sge(A_, 4093, 7), sge(A_, 12286, 4099),
		sge(A_, 30001, 1), sge(A_, 40955, 8193),
	};
	/* ...split differently on the receive side, the last one roomy. */
	struct ibv_sge rs[QP_SGE] = {
		sge(B_, DST + 4095, 3000), sge(B_, DST + 16380, 5),
		sge(B_, DST + 20479, 4101), sge(B_, DST + 40000, 5194 + 13),
	};
	char *want = malloc(1 << 16);
	size_t len;

	ASSERT_NE(NULL, want);
	len = gather(want, ss, QP_SGE);
	ASSERT_EQ(12300, len);

	ASSERT_EQ(0, post_recv(P_->qp[1], 0x11, rs, QP_SGE));
	ASSERT_EQ(0, post_op(P_->qp[0], IBV_WR_SEND, 0x22, ss, QP_SGE, 0, 0,
			     0));
	check_wc(_metadata, "multi-SGE SEND, requester", P_->cq[0],
		 WANT(.wr_id = 0x22, .opcode = IBV_WC_SEND, .qp_num = QPN(P_, 0)));
	check_wc(_metadata, "multi-SGE SEND, responder", P_->cq[1],
		 WANT(.wr_id = 0x11, .opcode = IBV_WC_RECV, .qp_num = QPN(P_, 1),
		      .check_len = true, .byte_len = len));
	check_scattered(_metadata, "multi-SGE SEND", rs, QP_SGE, want, len);

	/* A gathering WRITE into one remote range. */
	ASSERT_EQ(0, post_op(P_->qp[0], IBV_WR_RDMA_WRITE, 0x33, ss, QP_SGE,
			     raddr(B_, DST + 65536), B_->mr->rkey, 0));
	check_wc(_metadata, "multi-SGE WRITE", P_->cq[0],
		 WANT(.wr_id = 0x33, .opcode = IBV_WC_RDMA_WRITE,
		      .qp_num = QPN(P_, 0)));
	check_landed(_metadata, "multi-SGE WRITE", B_->buf + DST + 65536,
		     want, len);

	/* A scattering READ from one remote range. */
	rs[0] = sge(A_, DST + 4095, 3000);
	rs[1] = sge(A_, DST + 16380, 5);
	rs[2] = sge(A_, DST + 20479, 4101);
	rs[3] = sge(A_, DST + 40000, 5194);
	ASSERT_EQ(0, post_op(P_->qp[0], IBV_WR_RDMA_READ, 0x44, rs, QP_SGE,
			     raddr(B_, 333), B_->mr->rkey, 0));
	check_wc(_metadata, "multi-SGE READ", P_->cq[0],
		 WANT(.wr_id = 0x44, .opcode = IBV_WC_RDMA_READ,
		      .qp_num = QPN(P_, 0), .check_len = true,
		      .byte_len = len));
	check_scattered(_metadata, "multi-SGE READ", rs, QP_SGE,
			B_->buf + 333, len);
	free(want);
}

TEST_F_TIMEOUT(rc, inline_send_and_write, T_SECS)
{
	uint32_t n = P_->max_inline < 61 ? P_->max_inline : 61;
	struct ibv_sge rs = sge(B_, DST + 4096, 256), ss[2];
	char data[64], want[64];

	if (n < 8)
		SKIP(return, "no inline data (max_inline_data %u)",
		     P_->max_inline);
	fill_random(data, sizeof(data), 99);
	memcpy(want, data, sizeof(data));
	/*
	 * Inline data is copied when posted: no lkey, and the buffer may
	 * change at once.
	 */
	ss[0] = (struct ibv_sge){ .addr = (uintptr_t)data, .length = 5 };
	ss[1] = (struct ibv_sge){ .addr = (uintptr_t)data + 5,
				  .length = n - 5 };
	ASSERT_EQ(0, post_recv(P_->qp[1], 0x11, &rs, 1));
	ASSERT_EQ(0, post_wr(P_->qp[0], IBV_WR_SEND, 0x22,
			     IBV_SEND_SIGNALED | IBV_SEND_INLINE, ss, 2, 0, 0,
			     0));
	memset(data, 0xee, sizeof(data));
	check_wc(_metadata, "inline SEND, requester", P_->cq[0],
		 WANT(.wr_id = 0x22, .opcode = IBV_WC_SEND, .qp_num = QPN(P_, 0)));
	check_wc(_metadata, "inline SEND, responder", P_->cq[1],
		 WANT(.wr_id = 0x11, .opcode = IBV_WC_RECV, .qp_num = QPN(P_, 1),
		      .check_len = true, .byte_len = n));
	check_landed(_metadata, "inline SEND", B_->buf + DST + 4096, want, n);

	memcpy(data, want, sizeof(data));
	ss[0].length = n;
	ASSERT_EQ(0, post_wr(P_->qp[0], IBV_WR_RDMA_WRITE, 0x33,
			     IBV_SEND_SIGNALED | IBV_SEND_INLINE, ss, 1,
			     raddr(B_, DST + 8192 + 1), B_->mr->rkey, 0));
	memset(data, 0xee, sizeof(data));
	check_wc(_metadata, "inline WRITE", P_->cq[0],
		 WANT(.wr_id = 0x33, .opcode = IBV_WC_RDMA_WRITE,
		      .qp_num = QPN(P_, 0)));
	check_landed(_metadata, "inline WRITE", B_->buf + DST + 8192 + 1, want,
		     n);
}

TEST_F_TIMEOUT(rc, zero_length, T_SECS)
{
	struct ibv_sge rs = sge(B_, DST + 4096, 256);

	/* SEND of nothing: no SGE at all. */
	ASSERT_EQ(0, post_recv(P_->qp[1], 0x11, &rs, 1));
	ASSERT_EQ(0, post_op(P_->qp[0], IBV_WR_SEND, 0x22, NULL, 0, 0, 0, 0));
	check_wc(_metadata, "0-byte SEND, requester", P_->cq[0],
		 WANT(.wr_id = 0x22, .opcode = IBV_WC_SEND, .qp_num = QPN(P_, 0)));
	check_wc(_metadata, "0-byte SEND, responder", P_->cq[1],
		 WANT(.wr_id = 0x11, .opcode = IBV_WC_RECV, .qp_num = QPN(P_, 1),
		      .check_len = true, .byte_len = 0));

	/* WRITE of nothing. */
	ASSERT_EQ(0, post_op(P_->qp[0], IBV_WR_RDMA_WRITE, 0x33, NULL, 0,
			     raddr(B_, DST + 8192), B_->mr->rkey, 0));
	check_wc(_metadata, "0-byte WRITE", P_->cq[0],
		 WANT(.wr_id = 0x33, .opcode = IBV_WC_RDMA_WRITE,
		      .qp_num = QPN(P_, 0)));
	check_no_wc(_metadata, "0-byte WRITE, responder", P_->cq[1]);

	/* WRITE_WITH_IMM of nothing: an immediate-only notification. */
	ASSERT_EQ(0, post_recv(P_->qp[1], 0x44, &rs, 1));
	ASSERT_EQ(0, post_op(P_->qp[0], IBV_WR_RDMA_WRITE_WITH_IMM, 0x55, NULL,
			     0, raddr(B_, DST + 8192), B_->mr->rkey, 0xabcd));
	check_wc(_metadata, "0-byte WRITE_WITH_IMM, requester", P_->cq[0],
		 WANT(.wr_id = 0x55, .opcode = IBV_WC_RDMA_WRITE,
		      .qp_num = QPN(P_, 0)));
	check_wc(_metadata, "0-byte WRITE_WITH_IMM, responder", P_->cq[1],
		 WANT(.wr_id = 0x44, .opcode = IBV_WC_RECV_RDMA_WITH_IMM,
		      .qp_num = QPN(P_, 1), .check_len = true, .byte_len = 0,
		      .imm = true, .imm_data = 0xabcd));

	/* READ of nothing. */
	ASSERT_EQ(0, post_op(P_->qp[0], IBV_WR_RDMA_READ, 0x66, NULL, 0,
			     raddr(B_, 0), B_->mr->rkey, 0));
	check_wc(_metadata, "0-byte READ", P_->cq[0],
		 WANT(.wr_id = 0x66, .opcode = IBV_WC_RDMA_READ,
		      .qp_num = QPN(P_, 0), .check_len = true, .byte_len = 0));
	check_untouched(_metadata, "0-byte operations", B_->buf + DST,
			BUF_SIZE - DST);
	check_untouched(_metadata, "0-byte operations", A_->buf + DST,
			BUF_SIZE - DST);
}

/* SEND, WRITE and READ of @len bytes on @p, checked. */
static void three_ops(struct __test_metadata *_metadata,
		      rc_fixture *self, struct pair *p, uint32_t len,
		      const char *what)
{
	struct ibv_sge rs = sge(B_, DST + 4096, len + 1000);
	struct ibv_sge ss = sge(A_, 1, len);
	char msg[128];

	snprintf(msg, sizeof(msg), "%s SEND of %u", what, len);
	ASSERT_EQ(0, post_recv(p->qp[1], 0x11, &rs, 1));
	ASSERT_EQ(0, post_op(p->qp[0], IBV_WR_SEND, 0x22, &ss, 1, 0, 0, 0));
	check_wc(_metadata, msg, p->cq[0],
		 WANT(.wr_id = 0x22, .opcode = IBV_WC_SEND, .qp_num = QPN(p, 0)));
	check_wc(_metadata, msg, p->cq[1],
		 WANT(.wr_id = 0x11, .opcode = IBV_WC_RECV, .qp_num = QPN(p, 1),
		      .check_len = true, .byte_len = len));
	check_landed(_metadata, msg, B_->buf + DST + 4096, A_->buf + 1, len);

	snprintf(msg, sizeof(msg), "%s WRITE of %u", what, len);
	ss = sge(A_, 2, len);
	ASSERT_EQ(0, post_op(p->qp[0], IBV_WR_RDMA_WRITE, 0x33, &ss, 1,
			     raddr(B_, DST + 4096), B_->mr->rkey, 0));
	check_wc(_metadata, msg, p->cq[0],
		 WANT(.wr_id = 0x33, .opcode = IBV_WC_RDMA_WRITE,
		      .qp_num = QPN(p, 0)));
	check_landed(_metadata, msg, B_->buf + DST + 4096, A_->buf + 2, len);

	snprintf(msg, sizeof(msg), "%s READ of %u", what, len);
	ss = sge(A_, DST + 4096, len);
	ASSERT_EQ(0, post_op(p->qp[0], IBV_WR_RDMA_READ, 0x44, &ss, 1,
			     raddr(B_, 3), B_->mr->rkey, 0));
	check_wc(_metadata, msg, p->cq[0],
		 WANT(.wr_id = 0x44, .opcode = IBV_WC_RDMA_READ,
		      .qp_num = QPN(p, 0), .check_len = true, .byte_len = len));
	check_landed(_metadata, msg, A_->buf + DST + 4096, B_->buf + 3, len);
	check_no_wc(_metadata, msg, p->cq[1]);
}

TEST_F_TIMEOUT(rc, many_mtus_odd_length, T_SECS)
{
	three_ops(_metadata, self, P_, 64 * self->mtu_bytes + 333,
		  "many-MTU");
}

/* Both PSN spaces wrap from 0xffffff to 0 in the middle of messages. */
TEST_F_TIMEOUT(rc, psn_wrap, T_SECS)
{
	struct conn c = { .psn_a = 0xfffff8, .psn_b = 0xfffffd };
	struct ibv_sge rs = sge(A_, DST + 4096, 16 * self->mtu_bytes);
	struct ibv_sge ss = sge(B_, 5, 16 * self->mtu_bytes - 9);
	int i;

	PAIR_UP(&self->q, &c);
	for (i = 0; i < 2; i++)
		three_ops(_metadata, self, &self->q, 16 * self->mtu_bytes + 1,
			  "PSN wrap");
	ASSERT_EQ(0, post_recv(self->q.qp[0], 0x55, &rs, 1));
	ASSERT_EQ(0, post_op(self->q.qp[1], IBV_WR_SEND, 0x66, &ss, 1, 0, 0,
			     0));
	check_wc(_metadata, "PSN wrap B->A", self->q.cq[1],
		 WANT(.wr_id = 0x66, .opcode = IBV_WC_SEND,
		      .qp_num = QPN(&self->q, 1)));
	check_wc(_metadata, "PSN wrap B->A", self->q.cq[0],
		 WANT(.wr_id = 0x55, .opcode = IBV_WC_RECV,
		      .qp_num = QPN(&self->q, 0), .check_len = true,
		      .byte_len = ss.length));
	check_mem(_metadata, "PSN wrap B->A", A_->buf + DST + 4096,
		  B_->buf + 5, ss.length);
}

TEST_F_TIMEOUT(rc, unsignaled_batch, T_SECS)
{
	struct ibv_send_wr wr[100], *bad;
	struct ibv_sge ss[200], last;
	int i;

	/* 200 unsignaled WRITEs: 100 posted one by one, 100 in one list. */
	for (i = 0; i < 200; i++)
		ss[i] = sge(A_, i * 523, 500 + i % 7);
	for (i = 0; i < 100; i++)
		ASSERT_EQ(0, post_wr(P_->qp[0], IBV_WR_RDMA_WRITE, i, 0,
				     &ss[i], 1, raddr(B_, DST + 64 + i * 600),
				     B_->mr->rkey, 0)) TH_LOG("WR %d", i);
	memset(wr, 0, sizeof(wr));
	for (i = 0; i < 100; i++) {
		wr[i].wr_id = 100 + i;
		wr[i].next = i < 99 ? &wr[i + 1] : NULL;
		wr[i].sg_list = &ss[100 + i];
		wr[i].num_sge = 1;
		wr[i].opcode = IBV_WR_RDMA_WRITE;
		wr[i].wr.rdma.remote_addr = raddr(B_, DST + 64 +
						  (100 + i) * 600);
		wr[i].wr.rdma.rkey = B_->mr->rkey;
	}
	ASSERT_EQ(0, ibv_post_send(P_->qp[0], wr, &bad));
	/* Then one signaled: its completion is the only one. */
	last = sge(A_, 200 * 523, 4096);
	ASSERT_EQ(0, post_op(P_->qp[0], IBV_WR_RDMA_WRITE, 0x5151, &last, 1,
			     raddr(B_, DST + 200 * 600 + 128), B_->mr->rkey,
			     0));
	check_wc(_metadata, "signaled WRITE after 200 unsignaled", P_->cq[0],
		 WANT(.wr_id = 0x5151, .opcode = IBV_WC_RDMA_WRITE,
		      .qp_num = QPN(P_, 0)));
	check_no_wc(_metadata, "unsignaled WRITEs", P_->cq[0]);
	check_no_wc(_metadata, "unsignaled WRITEs, responder", P_->cq[1]);
	for (i = 0; i < 200; i++)
		check_landed(_metadata, "unsignaled WRITE",
			     B_->buf + DST + 64 + i * 600,
			     (char *)(uintptr_t)ss[i].addr, ss[i].length);
	check_landed(_metadata, "signaled WRITE",
		     B_->buf + DST + 200 * 600 + 128, A_->buf + 200 * 523,
		     4096);
	/* Their send queue slots are free again: 200 more fit. */
	for (i = 0; i < 100; i++)
		wr[i].send_flags = i == 99 ? IBV_SEND_SIGNALED : 0;
	ASSERT_EQ(0, ibv_post_send(P_->qp[0], wr, &bad));
	ASSERT_EQ(0, ibv_post_send(P_->qp[0], wr, &bad));
	check_wc(_metadata, "second batch", P_->cq[0],
		 WANT(.wr_id = 199, .opcode = IBV_WC_RDMA_WRITE,
		      .qp_num = QPN(P_, 0)));
	check_wc(_metadata, "third batch", P_->cq[0],
		 WANT(.wr_id = 199, .opcode = IBV_WC_RDMA_WRITE,
		      .qp_num = QPN(P_, 0)));
	check_no_wc(_metadata, "unsignaled WRITEs", P_->cq[0]);
}

/* Is the channel's fd readable within @ms? */
static int chan_ready(struct ibv_comp_channel *ch, int ms)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };

	return poll(&pfd, 1, ms);
}

static void expect_event(struct __test_metadata *_metadata,
			 const char *what, struct ibv_comp_channel *ch,
			 struct ibv_cq *want_cq, void *want_ctx)
{
	struct ibv_cq *cq;
	void *ctx;

	ASSERT_EQ(1, chan_ready(ch, WC_MS)) TH_LOG("%s: no event", what);
	ASSERT_EQ(0, ibv_get_cq_event(ch, &cq, &ctx));
	EXPECT_EQ(want_cq, cq);
	EXPECT_EQ(want_ctx, ctx);
	ibv_ack_cq_events(cq, 1);
}

TEST_F_TIMEOUT(rc, completion_channel, T_SECS)
{
	struct ibv_sge rs = sge(B_, DST + 4096, 4096), ss = sge(A_, 0, 100);
	struct pair *q = &self->q;
	struct conn c = {};
	int i;

	self->chan = ibv_create_comp_channel(B_->ctx);
	ASSERT_NE(NULL, self->chan);
	c.chan_b = self->chan;
	PAIR_UP(q, &c);

	/* Armed: a receive completion wakes the channel. */
	ASSERT_EQ(0, ibv_req_notify_cq(q->cq[1], 0));
	EXPECT_EQ(0, chan_ready(self->chan, 0));
	ASSERT_EQ(0, post_recv(q->qp[1], 0x11, &rs, 1));
	ASSERT_EQ(0, post_op(q->qp[0], IBV_WR_SEND, 0x22, &ss, 1, 0, 0, 0));
	expect_event(_metadata, "armed CQ", self->chan, q->cq[1], B_);
	check_wc(_metadata, "the event's completion", q->cq[1],
		 WANT(.wr_id = 0x11, .opcode = IBV_WC_RECV, .qp_num = QPN(q, 1),
		      .check_len = true, .byte_len = 100));
	check_wc(_metadata, "sender", q->cq[0],
		 WANT(.wr_id = 0x22, .opcode = IBV_WC_SEND, .qp_num = QPN(q, 0)));

	/* Not armed again: a completion, but no event. */
	ASSERT_EQ(0, post_recv(q->qp[1], 0x33, &rs, 1));
	ASSERT_EQ(0, post_op(q->qp[0], IBV_WR_SEND, 0x44, &ss, 1, 0, 0, 0));
	check_wc(_metadata, "unarmed CQ", q->cq[1],
		 WANT(.wr_id = 0x33, .opcode = IBV_WC_RECV, .qp_num = QPN(q, 1),
		      .check_len = true, .byte_len = 100));
	EXPECT_EQ(0, chan_ready(self->chan, QUIET_MS))
		TH_LOG("event without a request for one");

	/*
	 * Armed for solicited completions only: an unsolicited SEND does not
	 * wake the channel, a solicited one does.
	 */
	ASSERT_EQ(0, ibv_req_notify_cq(q->cq[1], 1));
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, post_recv(q->qp[1], 0x55 + i, &rs, 1));
		ASSERT_EQ(0, post_wr(q->qp[0], IBV_WR_SEND, 0x66 + i,
				     IBV_SEND_SIGNALED |
				     (i ? IBV_SEND_SOLICITED : 0),
				     &ss, 1, 0, 0, 0));
		if (i)
			expect_event(_metadata, "solicited SEND", self->chan,
				     q->cq[1], B_);
		check_wc(_metadata, i ? "solicited" : "unsolicited", q->cq[1],
			 WANT(.wr_id = 0x55 + i, .opcode = IBV_WC_RECV,
			      .qp_num = QPN(q, 1), .check_len = true,
			      .byte_len = 100));
		if (!i)
			EXPECT_EQ(0, chan_ready(self->chan, QUIET_MS))
				TH_LOG("event for an unsolicited SEND");
	}
	for (i = 0; i < 3; i++)
		check_wc(_metadata, "sender", q->cq[0],
			 WANT(.wr_id = i ? 0x65 + i : 0x44,
			      .opcode = IBV_WC_SEND, .qp_num = QPN(q, 0)));
	pair_down(q);
}

/* ------------------------------------------------------- extended API */

/* Collect up to @n completions with ibv_start_poll()/ibv_next_poll(). */
static int poll_ex(struct ibv_cq_ex *cq, struct ibv_wc *out, int n, int ms)
{
	struct ibv_poll_cq_attr attr = {};
	uint64_t end = sroce_now_ms() + ms;
	int got = 0, ret;

	while (got < n) {
		ret = ibv_start_poll(cq, &attr);
		if (ret == ENOENT) {
			if (sroce_now_ms() > end)
				break;
			usleep(50);
			continue;
		}
		if (ret)
			return -1;
		do {
			struct ibv_wc *wc = &out[got++];

			memset(wc, 0, sizeof(*wc));
			wc->wr_id = cq->wr_id;
			wc->status = cq->status;
			wc->opcode = ibv_wc_read_opcode(cq);
			wc->qp_num = ibv_wc_read_qp_num(cq);
			wc->byte_len = ibv_wc_read_byte_len(cq);
			wc->wc_flags = ibv_wc_read_wc_flags(cq);
			if (wc->wc_flags & IBV_WC_WITH_IMM)
				wc->imm_data = ibv_wc_read_imm_data(cq);
		} while (got < n && !(ret = ibv_next_poll(cq)));
		ibv_end_poll(cq);
		if (ret && ret != ENOENT)
			return -1;
	}
	return got;
}

TEST_F_TIMEOUT(rc, extended_api, T_SECS)
{
	struct ibv_sge rs[2] = { sge(B_, DST + (1 << 20), 64),
				 sge(B_, DST + 8192, 4096) };
	struct ibv_sge two[2] = { sge(A_, 10, 1000), sge(A_, 9000, 24) };
	struct conn c = { .ex = true };
	struct pair *q = &self->q;
	struct ibv_qp_ex *qpx;
	char data[40], want[40];
	struct ibv_wc wc[4];
	int n;

	PAIR_UP(q, &c);
	qpx = ibv_qp_to_qp_ex(q->qp[0]);
	ASSERT_NE(NULL, qpx);
	ASSERT_EQ(0, post_recv(q->qp[1], 0x41, &rs[0], 1));
	ASSERT_EQ(0, post_recv(q->qp[1], 0x42, &rs[1], 1));
	fill_random(data, sizeof(data), 42);
	memcpy(want, data, sizeof(data));

	ibv_wr_start(qpx);
	qpx->wr_id = 1;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(qpx, B_->mr->rkey, raddr(B_, DST + 4096));
	ibv_wr_set_sge(qpx, A_->mr->lkey, raddr(A_, 0), 1000);
	qpx->wr_id = 2;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write_imm(qpx, B_->mr->rkey, raddr(B_, DST + 16384),
			      htobe32(0x5eed));
	ibv_wr_set_sge_list(qpx, 2, two);
	/* The flags go with the opcode builder, so they come first. */
	qpx->wr_id = 3;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	if (q->max_inline >= sizeof(data))
		qpx->wr_flags |= IBV_SEND_INLINE;
	ibv_wr_send(qpx);
	if (q->max_inline >= sizeof(data)) {
		ibv_wr_set_inline_data(qpx, data, sizeof(data));
	} else {
		memcpy(A_->buf + DST + 100, data, sizeof(data));
		ibv_wr_set_sge(qpx, A_->mr->lkey, raddr(A_, DST + 100),
			       sizeof(data));
	}
	qpx->wr_id = 4;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_read(qpx, B_->mr->rkey, raddr(B_, 20000));
	ibv_wr_set_sge(qpx, A_->mr->lkey, raddr(A_, DST + 4096), 3000);
	ASSERT_EQ(0, ibv_wr_complete(qpx));
	memset(data, 0, sizeof(data));

	n = poll_ex(q->cqx[0], wc, 4, WC_MS);
	ASSERT_EQ(4, n) TH_LOG("requester completions");
	match_wc(_metadata, "ex WRITE", &wc[0],
		 WANT(.wr_id = 1, .opcode = IBV_WC_RDMA_WRITE,
		      .qp_num = QPN(q, 0)));
	match_wc(_metadata, "ex WRITE_WITH_IMM", &wc[1],
		 WANT(.wr_id = 2, .opcode = IBV_WC_RDMA_WRITE,
		      .qp_num = QPN(q, 0)));
	match_wc(_metadata, "ex SEND", &wc[2],
		 WANT(.wr_id = 3, .opcode = IBV_WC_SEND, .qp_num = QPN(q, 0)));
	match_wc(_metadata, "ex READ", &wc[3],
		 WANT(.wr_id = 4, .opcode = IBV_WC_RDMA_READ,
		      .qp_num = QPN(q, 0), .check_len = true,
		      .byte_len = 3000));
	n = poll_ex(q->cqx[1], wc, 2, WC_MS);
	ASSERT_EQ(2, n) TH_LOG("responder completions");
	match_wc(_metadata, "ex WRITE_WITH_IMM, responder", &wc[0],
		 WANT(.wr_id = 0x41, .opcode = IBV_WC_RECV_RDMA_WITH_IMM,
		      .qp_num = QPN(q, 1), .check_len = true, .byte_len = 1024,
		      .imm = true, .imm_data = 0x5eed));
	match_wc(_metadata, "ex SEND, responder", &wc[1],
		 WANT(.wr_id = 0x42, .opcode = IBV_WC_RECV, .qp_num = QPN(q, 1),
		      .check_len = true, .byte_len = sizeof(want)));
	check_landed(_metadata, "ex WRITE", B_->buf + DST + 4096, A_->buf,
		     1000);
	check_mem(_metadata, "ex WRITE_WITH_IMM", B_->buf + DST + 16384,
		  A_->buf + 10, 1000);
	check_mem(_metadata, "ex WRITE_WITH_IMM", B_->buf + DST + 16384 + 1000,
		  A_->buf + 9000, 24);
	check_untouched(_metadata, "ex WRITE_WITH_IMM, receive buffer",
			B_->buf + DST + (1 << 20), 64);
	check_landed(_metadata, "ex SEND", B_->buf + DST + 8192, want,
		     sizeof(want));
	check_landed(_metadata, "ex READ", A_->buf + DST + 4096,
		     B_->buf + 20000, 3000);

	/* An aborted batch sends nothing; the next one goes through. */
	ibv_wr_start(qpx);
	qpx->wr_id = 5;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(qpx, B_->mr->rkey, raddr(B_, DST + 65536));
	ibv_wr_set_sge(qpx, A_->mr->lkey, raddr(A_, 0), 100);
	ibv_wr_abort(qpx);
	ibv_wr_start(qpx);
	qpx->wr_id = 6;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(qpx, B_->mr->rkey, raddr(B_, DST + 98304));
	ibv_wr_set_sge(qpx, A_->mr->lkey, raddr(A_, 0), 100);
	ASSERT_EQ(0, ibv_wr_complete(qpx));
	/* In order: an aborted WRITE that went anyway would complete first. */
	n = poll_ex(q->cqx[0], wc, 1, WC_MS);
	ASSERT_EQ(1, n) TH_LOG("after an abort");
	match_wc(_metadata, "ex WRITE after an abort", &wc[0],
		 WANT(.wr_id = 6, .opcode = IBV_WC_RDMA_WRITE,
		      .qp_num = QPN(q, 0)));
	EXPECT_EQ(0, poll_ex(q->cqx[0], wc, 1, QUIET_MS))
		TH_LOG("a completion after the one expected");
	check_untouched(_metadata, "aborted WRITE", B_->buf + DST + 65536,
			100);
	check_landed(_metadata, "ex WRITE after an abort",
		     B_->buf + DST + 98304, A_->buf, 100);
}

/* ----------------------------------------------------- message size */

/* MemAvailable in bytes, 0 if unknown. */
static uint64_t mem_available(void)
{
	unsigned long long kb = 0;
	char line[128];
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
			break;
	fclose(f);
	return kb * 1024;
}

#define MAX_MSG_MS	(600 * 1000)

/*
 * On the fixture's own device: raise both veth ends to MTU 9000 and
 * connect a pair at path MTU 4096 (a quarter of the packets of the
 * default 1024: a gigabyte moves several times faster under emulation).
 * Returns the pair to use, the default one when the device is not ours
 * or SROCE_MTU asks for a path MTU.
 * Its assertions end the test (the harness jumps back).
 */
static struct pair *max_msg_pair(struct __test_metadata *_metadata,
				 rc_fixture *self)
{
	struct ibv_port_attr pa;

	if (!self->own || getenv("SROCE_MTU"))
		return &self->p;
	ASSERT_EQ(0, sh("ip link set %s mtu 9000 && ip link set %s mtu 9000",
			self->d.veth, self->d.peer));
	/* The port follows at once (ctrl_path's active_mtu_follows_netdev_mtu). */
	ASSERT_EQ(0, ibv_query_port(A_->ctx, 1, &pa));
	ASSERT_EQ(IBV_MTU_4096, pa.active_mtu)
		TH_LOG("active MTU %d after the netdev's went to 9000",
		       pa.active_mtu);
	self->mtu = IBV_MTU_4096;
	self->mtu_bytes = 4096;
	PAIR_UP(&self->q, NULL);
	return &self->q;
}

/*
 * A message of exactly the port's max_msg_sz, as SEND, WRITE and READ
 * (at path MTU 4096 on the fixture's own device, see max_msg_pair()).
 * The sender's side is an alias mapping; the landing buffer is real
 * memory, which SROCE_SKIP_MAX_MSG=1 avoids.
 */
TEST_F_TIMEOUT(rc, max_msg_size, 1800)
{
	uint64_t max = A_->port.max_msg_sz < B_->port.max_msg_sz ?
		       A_->port.max_msg_sz : B_->port.max_msg_sz;
	struct ibv_mr *amr, *bmr;
	struct pair *p;
	struct ibv_sge s, r;
	struct alias al;
	char *dst;
	int i;

	if (getenv("SROCE_SKIP_MAX_MSG") &&
	    strcmp(getenv("SROCE_SKIP_MAX_MSG"), "0"))
		SKIP(return, "SROCE_SKIP_MAX_MSG is set");
	ASSERT_GE(0xffffffffull, max) TH_LOG("max_msg_sz %llu does not fit an SGE",
					     (unsigned long long)max);
	if (mem_available() < max + (256ull << 20))
		SKIP(return, "needs %llu MiB of free memory for max_msg_sz %llu",
		     (unsigned long long)(max >> 20) + 256,
		     (unsigned long long)max);
	p = max_msg_pair(_metadata, self);
	ASSERT_EQ(0, alias_map(&al, max));
	dst = mmap(NULL, max, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, dst);
	amr = ibv_reg_mr(A_->pd, al.base, al.len, ALL_ACCESS);
	ASSERT_NE(NULL, amr) TH_LOG("alias MR: %s", strerror(errno));
	bmr = ibv_reg_mr(B_->pd, dst, max, ALL_ACCESS);
	ASSERT_NE(NULL, bmr) TH_LOG("landing MR: %s", strerror(errno));
	s = (struct ibv_sge){ (uintptr_t)al.base, max, amr->lkey };
	r = (struct ibv_sge){ (uintptr_t)dst, max, bmr->lkey };

	for (i = 0; i < 3; i++) {
		static const char * const what[] = { "SEND", "WRITE", "READ" };

		fill_random(al.base, al.chunk, 1000 + i);
		if (i == 0) {
			ASSERT_EQ(0, post_recv(p->qp[1], 0x11, &r, 1));
			ASSERT_EQ(0, post_op(p->qp[0], IBV_WR_SEND, 0x22, &s,
					     1, 0, 0, 0));
			check_wc(_metadata, "max SEND", p->cq[1],
				 WANT(.wr_id = 0x11, .opcode = IBV_WC_RECV,
				      .qp_num = QPN(p, 1), .check_len = true,
				      .byte_len = max, .ms = MAX_MSG_MS));
			check_wc(_metadata, "max SEND", p->cq[0],
				 WANT(.wr_id = 0x22, .opcode = IBV_WC_SEND,
				      .qp_num = QPN(p, 0)));
		} else if (i == 1) {
			ASSERT_EQ(0, post_op(p->qp[0], IBV_WR_RDMA_WRITE, 0x33,
					     &s, 1, (uintptr_t)dst, bmr->rkey,
					     0));
			check_wc(_metadata, "max WRITE", p->cq[0],
				 WANT(.wr_id = 0x33,
				      .opcode = IBV_WC_RDMA_WRITE,
				      .qp_num = QPN(p, 0), .ms = MAX_MSG_MS));
		} else {
			/* B reads A's alias into its real buffer. */
			ASSERT_EQ(0, post_op(p->qp[1], IBV_WR_RDMA_READ, 0x44,
					     &r, 1, (uintptr_t)al.base,
					     amr->rkey, 0));
			check_wc(_metadata, "max READ", p->cq[1],
				 WANT(.wr_id = 0x44, .opcode = IBV_WC_RDMA_READ,
				      .qp_num = QPN(p, 1), .check_len = true,
				      .byte_len = max, .ms = MAX_MSG_MS));
		}
		EXPECT_EQ(-1, alias_diff(&al, dst, max))
			TH_LOG("max %s: data differs at byte %ld of %llu",
			       what[i], alias_diff(&al, dst, max),
			       (unsigned long long)max);
	}
	ibv_dereg_mr(bmr);
	ibv_dereg_mr(amr);
	munmap(dst, max);
	munmap(al.base, al.len);
}

/* ------------------------------------------------------------------ UC */

/*
 * UC: multi-packet SEND and WRITE with immediate land byte for byte and
 * complete on both sides; reads and atomics are refused at posting.
 */
TEST_F_TIMEOUT(rc, uc_send_and_write, T_SECS)
{
	struct conn c = { .uc = true };
	uint32_t len = 5 * self->mtu_bytes + 77;
	struct ibv_sge rs = sge(B_, DST + 4096, len), ss = sge(A_, 0, len);
	struct pair *q = &self->q;
	struct ibv_wc wc;

	PAIR_UP(q, &c);
	ASSERT_EQ(0, post_recv(q->qp[1], 0x11, &rs, 1));
	ASSERT_EQ(0, post_op(q->qp[0], IBV_WR_SEND, 0x22, &ss, 1, 0, 0, 0));
	check_wc(_metadata, "UC SEND, requester", q->cq[0],
		 WANT(.wr_id = 0x22, .opcode = IBV_WC_SEND, .qp_num = QPN(q, 0)));
	check_wc(_metadata, "UC SEND, responder", q->cq[1],
		 WANT(.wr_id = 0x11, .opcode = IBV_WC_RECV, .qp_num = QPN(q, 1),
		      .check_len = true, .byte_len = len));
	check_landed(_metadata, "UC SEND", B_->buf + DST + 4096, A_->buf, len);

	ss = sge(A_, 4096, len);
	ASSERT_EQ(0, post_recv(q->qp[1], 0x33, NULL, 0));
	ASSERT_EQ(0, post_op(q->qp[0], IBV_WR_RDMA_WRITE_WITH_IMM, 0x44, &ss,
			     1, raddr(B_, DST + 32768), B_->mr->rkey, 0x600dcafe));
	check_wc(_metadata, "UC WRITE_WITH_IMM, requester", q->cq[0],
		 WANT(.wr_id = 0x44, .opcode = IBV_WC_RDMA_WRITE,
		      .qp_num = QPN(q, 0)));
	ASSERT_EQ(1, sroce_wait_wc(q->cq[1], &wc, WC_MS));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(IBV_WC_RECV_RDMA_WITH_IMM, wc.opcode);
	EXPECT_EQ(0x33, wc.wr_id);
	EXPECT_EQ(htonl(0x600dcafe), wc.imm_data);
	check_landed(_metadata, "UC WRITE_WITH_IMM", B_->buf + DST + 32768,
		     A_->buf + 4096, len);

	EXPECT_EQ(EINVAL, post_op(q->qp[0], IBV_WR_RDMA_READ, 1, &ss, 1,
				  raddr(B_, DST), B_->mr->rkey, 0));
	EXPECT_EQ(IBV_QPS_RTS, sroce_qp_state(q->qp[0]));
}

/* --------------------------------------------------------- atomic write */

/*
 * Atomic write (IBA annex A19, ibv_wr_atomic_write): eight bytes stored
 * at an aligned target, completed with IBV_WC_ATOMIC_WRITE; a misaligned
 * target is refused locally. Only where the kernel advertises it.
 */
TEST_F_TIMEOUT(rc, atomic_write, T_SECS)
{
	const uint8_t value[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	struct ibv_device_attr_ex ax = {};
	struct conn c = { .ex = true };
	struct pair *q = &self->q;
	struct ibv_qp_ex *qpx;
	char *target = B_->buf + DST + 4096;

	ASSERT_EQ(0, ibv_query_device_ex(A_->ctx, NULL, &ax));
	/* IB_UVERBS_DEVICE_ATOMIC_WRITE */
	if (!(ax.device_cap_flags_ex & (1ULL << 40)))
		SKIP(return, "this kernel does not know atomic write");
	PAIR_UP(q, &c);
	qpx = ibv_qp_to_qp_ex(q->qp[0]);
	ASSERT_NE(NULL, qpx);
	ibv_wr_start(qpx);
	qpx->wr_id = 0x77;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_write(qpx, B_->mr->rkey, raddr(B_, DST + 4096), value);
	ASSERT_EQ(0, ibv_wr_complete(qpx));
	check_wc(_metadata, "atomic write", q->cq[0],
		 WANT(.wr_id = 0x77, .opcode = IBV_WC_ATOMIC_WRITE,
		      .qp_num = QPN(q, 0)));
	check_landed(_metadata, "atomic write", target, value, sizeof(value));

	ibv_wr_start(qpx);
	qpx->wr_id = 0x78;
	ibv_wr_atomic_write(qpx, B_->mr->rkey, raddr(B_, DST + 4096 + 4),
			    value);
	ASSERT_EQ(0, ibv_wr_complete(qpx));
	check_wc(_metadata, "misaligned atomic write", q->cq[0],
		 WANT(.wr_id = 0x78, .status = IBV_WC_LOC_QP_OP_ERR,
		      .qp_num = QPN(q, 0)));
}

/* Signaled one-packet WRITEs from @p's side A, each awaited. */
static void writes(struct __test_metadata *_metadata, rc_fixture *self,
		   struct pair *p, uint32_t n)
{
	struct ibv_sge ss;
	uint32_t i;

	for (i = 0; i < n; i++) {
		ss = sge(A_, i * 100, 100);
		ASSERT_EQ(0, post_op(p->qp[0], IBV_WR_RDMA_WRITE, i, &ss, 1,
				     raddr(B_, DST + i * 100), B_->mr->rkey,
				     0));
		check_wc(_metadata, "RDMA_WRITE", p->cq[0],
			 WANT(.wr_id = i, .opcode = IBV_WC_RDMA_WRITE,
			      .qp_num = p->qp[0]->qp_num));
	}
}

/* Driver field drv_@name of a resource line: -1 when it has none. */
/* The number after the token @key in @line (" KEY VALUE "), or -1. */
static long long line_value(const char *line, const char *key)
{
	char tok[80];
	const char *p;

	snprintf(tok, sizeof(tok), " %s ", key);
	p = strstr(line, tok);
	return p ? strtoll(p + strlen(tok), NULL, 0) : -1;
}

/* The driver field drv_@name of an "rdma resource" line, or -1. */
static long long res_field(const char *line, const char *name)
{
	char key[80];

	snprintf(key, sizeof(key), "drv_%s", name);
	return line_value(line, key);
}

static bool res_has(const char *line, const char *a, const char *b)
{
	char tok[160];

	snprintf(tok, sizeof(tok), " %s %s ", a, b);
	return strstr(line, tok);
}

/*
 * A line of "rdma -dd resource show KIND" for device @dev (with or without
 * its port) that has the token pair "@key @val" (any line when @key is
 * NULL) and, when @drv is set, the driver field drv_@drv equal to @drv_val.
 * Return: true when found, copied into @line.
 */
static bool res_line(const char *kind, const char *dev, const char *key,
		     const char *val, const char *drv, long long drv_val,
		     char *line, size_t len)
{
	char cmd[128], port[80], buf[4096];
	bool found = false;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "rdma -dd resource show %s 2>/dev/null",
		 kind);
	snprintf(port, sizeof(port), "%s/1", dev);
	f = popen(cmd, "r");
	if (!f)
		return false;
	while (!found && fgets(buf, sizeof(buf), f)) {
		/* Space-delimited tokens on both sides of every field. */
		snprintf(line, len, " %s ", strtok(buf, "\n") ?: "");
		found = (res_has(line, "dev", dev) ||
			 res_has(line, "link", port)) &&
			(!key || res_has(line, key, val)) &&
			(!drv || res_field(line, drv) == drv_val);
	}
	pclose(f);
	return found;
}

/* A raw dump (struct sroce_res_raw), its values in host order. */
struct res_raw_dump {
	unsigned int version, nfields;
	uint32_t present;
	uint64_t val[32];
};

/*
 * The raw dumps of "rdma -j -r resource show @what", up to @max into @d.
 * The tool prints each as a JSON array "data" of its bytes.
 * Return: how many; a dump whose length disagrees with its nfields has
 * version 0.
 */
static int res_raw(const char *what, struct res_raw_dump *d, int max)
{
	static char buf[1 << 20];
	uint8_t b[8 + 8 * 32];
	char cmd[256], *p;
	size_t len, nb, i;
	int n = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "rdma -j -r resource show %s 2>/dev/null",
		 what);
	f = popen(cmd, "r");
	if (!f)
		return 0;
	len = fread(buf, 1, sizeof(buf) - 1, f);
	pclose(f);
	buf[len] = 0;
	for (p = buf; n < max && (p = strstr(p, "\"data\":[")); n++) {
		p += strlen("\"data\":[");
		for (nb = 0; *p && *p != ']' && nb < sizeof(b); nb++) {
			b[nb] = strtoul(p, &p, 10);
			if (*p == ',')
				p++;
		}
		memset(&d[n], 0, sizeof(d[n]));
		if (nb < 8)
			continue;
		d[n].nfields = b[2] | b[3] << 8;
		d[n].present = b[4] | b[5] << 8 | b[6] << 16 |
			       (uint32_t)b[7] << 24;
		if (d[n].nfields > 32 || nb != 8 + 8 * d[n].nfields)
			continue;
		d[n].version = b[0] | b[1] << 8;
		for (i = 0; i < 8 * d[n].nfields; i++)
			d[n].val[i / 8] |= (uint64_t)b[8 + i] << (8 * (i % 8));
	}
	return n;
}

/*
 * sroce's own fields in "rdma resource show -dd" (sroce_restrack.c): after
 * a known run of WRITEs, the requester's and responder's PSNs and indices,
 * the MR's pinning and access, and a CQ's fill are known exactly. The raw
 * dumps (-r) carry the same values.
 */
TEST_F_TIMEOUT(rc, resource_details, T_SECS)
{
	const char *dev = ibv_get_device_name(A_->ctx->device);
	const char *dev_b = ibv_get_device_name(B_->ctx->device);
	const uint32_t n = 5, psn = (PSN_A + n) & 0xffffff;
	size_t off = (uintptr_t)A_->buf & 4095;
	char line[4096], num[32], what[128];
	struct res_raw_dump raw[16];
	int tries, nraw, i, found;
	struct ibv_sge ss;
	struct ibv_wc wc;

	if (sroce_counter(dev, "sq_doorbell") < 0 ||
	    sroce_counter(dev_b, "sq_doorbell") < 0)
		SKIP(return, "%s or %s is not an sroce device", dev, dev_b);
	if (system("rdma -V >/dev/null 2>&1"))
		SKIP(return, "no rdma tool");
	writes(_metadata, self, P_, n);

	snprintf(num, sizeof(num), "%u", QPN(P_, 0));
	ASSERT_TRUE(res_line("qp", dev, "lqpn", num, NULL, 0, line,
			     sizeof(line)));
	TH_LOG("requester:%s", line);
	EXPECT_EQ(psn, res_field(line, "req_psn"));
	EXPECT_EQ(psn, res_field(line, "req_una"));
	EXPECT_EQ(n, res_field(line, "sq_prod"));
	EXPECT_EQ(n, res_field(line, "sq_fetched"));
	EXPECT_EQ(n, res_field(line, "sq_next"));
	EXPECT_EQ(n, res_field(line, "sq_head"));
	EXPECT_EQ(0, res_field(line, "rd_pending"));
	EXPECT_EQ(RETRY_CNT, res_field(line, "retry_left"));
	EXPECT_EQ(RNR_RETRY, res_field(line, "rnr_left"));
	EXPECT_EQ(0, res_field(line, "rnr_wait"));
	snprintf(what, sizeof(what), "qp link %s/1 lqpn %s", dev, num);
	ASSERT_EQ(1, res_raw(what, raw, 1));
	EXPECT_EQ(SROCE_RES_RAW_VERSION, raw[0].version);
	EXPECT_EQ(SROCE_RES_QP_NFIELDS, raw[0].nfields);
	/*
	 * An RC QP with a receive ring: every field applies, but the
	 * poller's CPU only while a poller watches the send ring.
	 */
	EXPECT_EQ(((1u << SROCE_RES_QP_NFIELDS) - 1) &
		  ~(1u << SROCE_RES_QP_SQ_POLL_CPU),
		  raw[0].present & ~(1u << SROCE_RES_QP_SQ_POLL_CPU));
	EXPECT_EQ(psn, raw[0].val[SROCE_RES_QP_REQ_PSN]);
	EXPECT_EQ(psn, raw[0].val[SROCE_RES_QP_REQ_UNA]);
	EXPECT_EQ(n, raw[0].val[SROCE_RES_QP_SQ_HEAD]);
	EXPECT_EQ(RETRY_CNT, raw[0].val[SROCE_RES_QP_RETRY_LEFT]);
	EXPECT_EQ(0, raw[0].val[SROCE_RES_QP_RD_PENDING]);

	snprintf(num, sizeof(num), "%u", QPN(P_, 1));
	ASSERT_TRUE(res_line("qp", dev_b, "lqpn", num, NULL, 0, line,
			     sizeof(line)));
	TH_LOG("responder:%s", line);
	EXPECT_EQ(psn, res_field(line, "resp_epsn"));
	EXPECT_EQ(n, res_field(line, "resp_msn"));
	EXPECT_EQ(0, res_field(line, "in_write"));
	EXPECT_EQ(0, res_field(line, "replies_queued"));
	EXPECT_EQ(0, res_field(line, "rq_prod"));
	EXPECT_EQ(0, res_field(line, "rq_cons"));
	snprintf(what, sizeof(what), "qp link %s/1 lqpn %s", dev_b, num);
	ASSERT_EQ(1, res_raw(what, raw, 1));
	EXPECT_EQ(psn, raw[0].val[SROCE_RES_QP_RESP_EPSN]);
	EXPECT_EQ(n, raw[0].val[SROCE_RES_QP_RESP_MSN]);

	snprintf(num, sizeof(num), "0x%x", A_->mr->lkey);
	ASSERT_TRUE(res_line("mr", dev, "lkey", num, NULL, 0, line,
			     sizeof(line)));
	TH_LOG("MR:%s", line);
	EXPECT_NE(NULL, strstr(line, " drv_kind user "));
	EXPECT_EQ(ALL_ACCESS, res_field(line, "access"));
	EXPECT_EQ(off, res_field(line, "page_offset"));
	EXPECT_EQ((off + BUF_SIZE + 4095) / 4096,
		  res_field(line, "pinned_pages"));
	snprintf(what, sizeof(what), "mr dev %s", dev);
	nraw = res_raw(what, raw, ARRAY_SIZE(raw));
	for (i = 0, found = 0; i < nraw; i++)
		found += raw[i].version == SROCE_RES_RAW_VERSION &&
			 raw[i].val[SROCE_RES_MR_KIND] == SROCE_RES_MR_USER &&
			 raw[i].val[SROCE_RES_MR_ACCESS] == ALL_ACCESS &&
			 raw[i].val[SROCE_RES_MR_PAGE_OFFSET] == off &&
			 raw[i].val[SROCE_RES_MR_PINNED_PAGES] ==
			 (off + BUF_SIZE + 4095) / 4096;
	EXPECT_LE(1, found) TH_LOG("%d raw MR dumps, none of this MR", nraw);

	/* One completion left in the ring, then consumed. */
	ss = sge(A_, 0, 100);
	ASSERT_EQ(0, post_op(P_->qp[0], IBV_WR_RDMA_WRITE, 99, &ss, 1,
			     raddr(B_, DST), B_->mr->rkey, 0));
	for (tries = 0; tries < 100; tries++) {
		if (res_line("cq", dev, NULL, NULL, "prod", n + 1, line,
			     sizeof(line)))
			break;
		usleep(50000);
	}
	ASSERT_LT(tries, 100);
	TH_LOG("CQ:%s", line);
	EXPECT_EQ(n, res_field(line, "cons"));
	EXPECT_EQ(1, res_field(line, "fill"));
	EXPECT_EQ(0, res_field(line, "overrun"));
	ASSERT_EQ(1, ibv_poll_cq(P_->cq[0], 1, &wc));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	ASSERT_TRUE(res_line("cq", dev, NULL, NULL, "prod", n + 1, line,
			     sizeof(line)));
	EXPECT_EQ(n + 1, res_field(line, "cons"));
	EXPECT_EQ(0, res_field(line, "fill"));
	snprintf(what, sizeof(what), "cq dev %s", dev);
	nraw = res_raw(what, raw, ARRAY_SIZE(raw));
	for (i = 0, found = 0; i < nraw; i++)
		found += raw[i].version == SROCE_RES_RAW_VERSION &&
			 raw[i].nfields == SROCE_RES_CQ_NFIELDS &&
			 raw[i].val[SROCE_RES_CQ_PROD] == n + 1 &&
			 raw[i].val[SROCE_RES_CQ_CONS] == n + 1 &&
			 raw[i].val[SROCE_RES_CQ_FILL] == 0;
	EXPECT_LE(1, found) TH_LOG("%d raw CQ dumps, none of this CQ", nraw);
}

/*
 * Field @name (" NAME VALUE ") of the counter on @dev's port that @qpn is
 * bound to, from "rdma statistic qp show": -1 if there is none. (The
 * tool's lqpn filter skips a counter unless all its QPs match.)
 */
static long long qp_counter_field(const char *dev, uint32_t qpn,
				  const char *name)
{
	char cmd[128], buf[4096], line[4200] = "";
	long long v = -1;
	const char *p;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "rdma statistic qp show link %s/1 2>/dev/null",
		 dev);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (v < 0 && fgets(buf, sizeof(buf), f)) {
		p = strstr(buf, "LQPN: <");
		if (!p) {
			snprintf(line, sizeof(line), " %s ",
				 strtok(buf, "\n") ?: "");
			continue;
		}
		/* The QPs of the counter on the line before. */
		for (p += 7; *p && *p != '>'; p++) {
			if (strtoul(p, (char **)&p, 10) == qpn) {
				/* -2: found, but without the field. */
				v = line_value(line, name);
				if (v < 0)
					v = -2;
				break;
			}
			if (*p != ',')
				break;
		}
	}
	pclose(f);
	return v < 0 ? -1 : v;
}

/* The port's tx_roce_packets, past the core's 10 ms cache of its value. */
static long long port_tx(const char *dev)
{
	usleep(30000);
	return sroce_counter(dev, "tx_roce_packets");
}

/* Packets sent again on @dev: retransmissions and the NAKs behind them. */
static long long resent(const char *dev)
{
	return sroce_counter(dev, "retransmit_timeout") +
	       sroce_counter(dev, "seq_nak_received") +
	       sroce_counter(dev, "rnr_nak_received");
}

/*
 * Exact packet counts hold on a clean link; over a slow shaped one
 * (tx_backpressure runs these tests through token buckets) a timeout
 * may resend, and then only a lower bound does.
 */
#define EXPECT_PACKETS(want, got) do { \
	long long __want = (want), __got = (got); \
	if (resent(dev) + resent(dev_b) == resent0) { \
		EXPECT_EQ(__want, __got); \
	} else { \
		EXPECT_LE(__want, __got); \
	} \
} while (0)

/* "rdma statistic qp VERB link DEV/1 ARGS": its exit status. */
static int qp_stat(const char *dev, const char *verb, const char *args)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "rdma statistic qp %s link %s/1 %s", verb,
		 dev, args);
	return system(cmd);
}

/*
 * Per-QP counters ("rdma statistic qp"): a QP bound by hand counts its
 * packets in its counter alone, the port's figures still count each
 * packet once, bound or not, and keep them after the unbind; in auto
 * mode new QPs are bound as they reach INIT, one counter per QP type.
 */
TEST_F_TIMEOUT(rc, qp_counters, T_SECS)
{
	const char *dev = ibv_get_device_name(A_->ctx->device);
	const char *dev_b = ibv_get_device_name(B_->ctx->device);
	/* With both QPs on one device, its port also counts B's ACKs. */
	const long long n = 5, same = !strcmp(dev, dev_b);
	char qp0[32], args[64];
	long long tx0, cntn, resent0;
	uint32_t qpn0, qpn1;

	if (sroce_counter(dev, "sq_doorbell") < 0 ||
	    sroce_counter(dev_b, "sq_doorbell") < 0)
		SKIP(return, "%s or %s is not an sroce device", dev, dev_b);
	if (system("rdma -V >/dev/null 2>&1"))
		SKIP(return, "no rdma tool");
	/* A run that failed midway may have left a device in auto mode. */
	qp_stat(dev, "set", "auto off");
	qp_stat(dev_b, "set", "auto off");
	resent0 = resent(dev) + resent(dev_b);
	tx0 = port_tx(dev);
	snprintf(qp0, sizeof(qp0), "lqpn %u", QPN(P_, 0));
	ASSERT_EQ(0, qp_stat(dev, "bind", qp0));
	cntn = qp_counter_field(dev, QPN(P_, 0), "cntn");
	ASSERT_LT(0, cntn);

	/* A's WRITEs count in its counter, and in the port's figures. */
	writes(_metadata, self, P_, n);
	EXPECT_PACKETS(n,
		       qp_counter_field(dev, QPN(P_, 0), "tx_roce_packets"));
	EXPECT_PACKETS(n, qp_counter_field(dev, QPN(P_, 0), "rx_qp_packets"));
	EXPECT_PACKETS(n + same * n, port_tx(dev) - tx0);

	snprintf(args, sizeof(args), "cntn %lld %s", cntn, qp0);
	ASSERT_EQ(0, qp_stat(dev, "unbind", args));
	EXPECT_EQ(-1, qp_counter_field(dev, QPN(P_, 0), "cntn"));
	/* The released counter's figures stay in the port's. */
	EXPECT_PACKETS(n + same * n, port_tx(dev) - tx0);
	writes(_metadata, self, P_, 1);
	tx0 += 1 + same;
	EXPECT_PACKETS(n + same * n, port_tx(dev) - tx0);

	/* Auto mode: a new pair's QPs, bound by type as they reach INIT. */
	ASSERT_EQ(0, qp_stat(dev, "set", "auto type on"));
	if (!same)
		ASSERT_EQ(0, qp_stat(dev_b, "set", "auto type on"));
	PAIR_UP((&self->q), NULL);
	writes(_metadata, self, &self->q, n);
	qpn0 = self->q.qp[0]->qp_num;
	qpn1 = self->q.qp[1]->qp_num;
	cntn = qp_counter_field(dev, qpn0, "cntn");
	EXPECT_LT(0, cntn);
	EXPECT_PACKETS(n + same * n,
		       qp_counter_field(dev, qpn0, "tx_roce_packets"));
	EXPECT_PACKETS(n + same * n,
		       qp_counter_field(dev, qpn0, "rx_qp_packets"));
	EXPECT_PACKETS(2 * (n + same * n), port_tx(dev) - tx0);
	if (same) {
		EXPECT_EQ(cntn, qp_counter_field(dev, qpn1, "cntn"));
	} else {
		EXPECT_LT(0, qp_counter_field(dev_b, qpn1, "cntn"));
		EXPECT_PACKETS(n, qp_counter_field(dev_b, qpn1,
						   "tx_roce_packets"));
	}
	EXPECT_EQ(0, qp_stat(dev, "set", "auto off"));
	if (!same)
		EXPECT_EQ(0, qp_stat(dev_b, "set", "auto off"));
}

TEST_HARNESS_MAIN
