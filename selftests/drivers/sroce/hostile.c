// SPDX-License-Identifier: GPL-2.0
/*
 * Hostile user space: work requests no honest consumer posts, and garbage
 * written straight into the rings the kernel shares with us (through the
 * provider's own mappings). Whatever we do, the kernel must not crash, must
 * touch no memory outside what we registered, and may at worst put our
 * own QP in the error state; a new QP pair must then work.
 *
 * The region is the middle two pages of four; the outer two are guard
 * pages, filled with a pattern, that every test checks at its end. All
 * traffic is loopback between two RC QPs of one device.
 */
#include <fcntl.h>
#include <stdint.h>
#include <sys/mman.h>
#include "sroce_test.h"
#include "kselftest_harness.h"
#include "sroce.h"		/* the provider's QP: its rings */

#define PAGE		4096
#define GUARD_BYTE	0x5a
#define ROUNDS		60

FIXTURE(hostile) {
	struct sroce_tdev d;
	struct ibv_pd *pd;
	struct ibv_cq *cq[2];
	struct ibv_qp *qp[2];
	unsigned char *area;	/* guard, region (2 pages), guard */
	struct ibv_mr *mr;
	struct ibv_srq *srq;	/* the second QP's, when a test sets it */
	unsigned char timeout;	/* local ACK timeout, when a test sets it */
	int gidx;
	uint64_t seed;
};

static unsigned char *region(struct _test_data_hostile *self)
{
	return self->area + PAGE;
}

static uint64_t rnd(struct _test_data_hostile *self)
{
	/* xorshift64*: reproducible from the seed the test prints. */
	self->seed ^= self->seed >> 12;
	self->seed ^= self->seed << 25;
	self->seed ^= self->seed >> 27;
	return self->seed * 0x2545f4914f6cdd1dull;
}

static int pair_failed(const char *step, int err)
{
	ksft_print_msg("new QP pair: %s failed: %s\n", step, strerror(err));
	return -1;
}

/* A fresh pair of connected RC QPs (the old pair, if any, destroyed). */
static int new_pair(struct _test_data_hostile *self)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 64, .max_recv_wr = 64,
			 .max_send_sge = 4, .max_recv_sge = 4 },
	};
	struct sroce_rc_path path = {
		.sgid_index = self->gidx, .mtu = IBV_MTU_1024, .rd_atomic = 4,
		.timeout = self->timeout ? self->timeout : 8, .retry = 1,
		.hop_limit = 1,
	};
	int i, err;

	for (i = 0; i < 2; i++) {
		if (self->qp[i])
			ibv_destroy_qp(self->qp[i]);
		ia.send_cq = self->cq[i];
		ia.recv_cq = self->cq[i];
		ia.srq = i ? self->srq : NULL;
		self->qp[i] = ibv_create_qp(self->pd, &ia);
		if (!self->qp[i])
			return pair_failed("ibv_create_qp", errno);
		err = to_init(self->qp[i]);
		if (err)
			return pair_failed("INIT", err);
	}
	if (ibv_query_gid(self->d.ctx, 1, self->gidx, &path.dgid))
		return pair_failed("ibv_query_gid", errno);
	for (i = 0; i < 2; i++) {
		path.dest_qpn = self->qp[!i]->qp_num;
		err = sroce_rc_rtr_rts(self->qp[i], &path);
		if (err)
			return pair_failed("RTR/RTS", err);
	}
	return 0;
}

FIXTURE_SETUP(hostile)
{
	const char *why;
	int ret = sroce_tdev_up(&self->d, "h", &why);

	if (ret == -1)
		SKIP(return, "%s", why);
	ASSERT_EQ(0, ret) TH_LOG("%s", why);
	ASSERT_EQ(0, sh("ip addr add 198.18.250.1/24 dev %s", self->d.veth));
	self->gidx = sroce_find_gid(self->d.ctx, AF_INET, NULL, 10000, NULL);
	ASSERT_LE(0, self->gidx);
	self->area = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->area);
	memset(self->area, GUARD_BYTE, 4 * PAGE);
	memset(region(self), 0, 2 * PAGE);
	self->pd = ibv_alloc_pd(self->d.ctx);
	ASSERT_NE(NULL, self->pd);
	self->mr = ibv_reg_mr(self->pd, region(self), 2 * PAGE,
			      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			      IBV_ACCESS_REMOTE_READ |
			      IBV_ACCESS_REMOTE_ATOMIC);
	ASSERT_NE(NULL, self->mr);
	self->cq[0] = ibv_create_cq(self->d.ctx, 256, NULL, NULL, 0);
	self->cq[1] = ibv_create_cq(self->d.ctx, 256, NULL, NULL, 0);
	ASSERT_NE(NULL, self->cq[0]);
	ASSERT_NE(NULL, self->cq[1]);
	ASSERT_EQ(0, new_pair(self));
	self->seed = (uint64_t)getpid() * 0x9e3779b97f4a7c15ull | 1;
	TH_LOG("seed %#llx", (unsigned long long)self->seed);
}

static bool guards_intact(struct _test_data_hostile *self)
{
	int i;

	for (i = 0; i < PAGE; i++)
		if (self->area[i] != GUARD_BYTE ||
		    self->area[3 * PAGE + i] != GUARD_BYTE)
			return false;
	return true;
}

static int drain(struct ibv_cq *cq, int ms)
{
	struct ibv_wc wc[16];
	int n, total = 0;

	for (;;) {
		while ((n = ibv_poll_cq(cq, 16, wc)) > 0)
			total += n;
		if (ms <= 0)
			return total;
		usleep(10000);
		ms -= 10;
	}
}

/* An honest SEND and WRITE over a new pair, checked byte for byte. */
static bool pair_works(struct _test_data_hostile *self)
{
	unsigned char *r = region(self);
	struct ibv_sge rs = { (uintptr_t)r + PAGE, 512, self->mr->lkey };
	struct ibv_sge ss = { (uintptr_t)r, 512, self->mr->lkey };
	struct ibv_recv_wr rwr = { .sg_list = &rs, .num_sge = 1 }, *brw;
	struct ibv_send_wr swr = { .sg_list = &ss, .num_sge = 1,
				   .opcode = IBV_WR_SEND,
				   .send_flags = IBV_SEND_SIGNALED }, *bsw;
	struct ibv_wc wc;
	int i, n = 0;

	drain(self->cq[0], 0);
	drain(self->cq[1], 0);
	if (new_pair(self))
		return false;
	for (i = 0; i < 512; i++) {
		r[i] = i * 7;
		r[PAGE + i] = 0;
	}
	if (ibv_post_recv(self->qp[1], &rwr, &brw) ||
	    ibv_post_send(self->qp[0], &swr, &bsw))
		return false;
	for (i = 0; i < 500 && n < 1; i++) {
		n = ibv_poll_cq(self->cq[1], 1, &wc);
		if (!n)
			usleep(10000);
	}
	return n == 1 && wc.status == IBV_WC_SUCCESS &&
	       !memcmp(r, r + PAGE, 512);
}

FIXTURE_TEARDOWN(hostile)
{
	int i;

	if (self->area)
		EXPECT_TRUE(guards_intact(self));
	for (i = 0; i < 2; i++)
		if (self->qp[i])
			ibv_destroy_qp(self->qp[i]);
	if (self->srq)
		ibv_destroy_srq(self->srq);
	for (i = 0; i < 2; i++)
		if (self->cq[i])
			ibv_destroy_cq(self->cq[i]);
	if (self->mr)
		ibv_dereg_mr(self->mr);
	if (self->pd)
		ibv_dealloc_pd(self->pd);
	sroce_tdev_down(&self->d);
}

/* One posted WR, its first completion's status on the requester. */
static int post_one(struct _test_data_hostile *self, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;
	struct ibv_wc wc;
	int i;

	wr->send_flags |= IBV_SEND_SIGNALED;
	if (ibv_post_send(self->qp[0], wr, &bad))
		return -errno;
	for (i = 0; i < 1000; i++) {
		if (ibv_poll_cq(self->cq[0], 1, &wc) == 1)
			return wc.status;
		usleep(10000);
	}
	return -ETIMEDOUT;
}

TEST_F(hostile, addresses_and_lengths_that_wrap)
{
	uint64_t base = (uintptr_t)region(self);
	struct {
		enum ibv_wr_opcode op;
		uint64_t laddr;
		uint32_t len;
		uint64_t raddr;
		int want;
	} c[] = {
		{ IBV_WR_SEND, UINT64_MAX - 15, 64, 0, IBV_WC_LOC_PROT_ERR },
		/* Longer than any message may be. */
		{ IBV_WR_SEND, base + 2 * PAGE - 8, UINT32_MAX, 0,
		  IBV_WC_LOC_LEN_ERR },
		{ IBV_WR_RDMA_WRITE, base, 64, UINT64_MAX - 15,
		  IBV_WC_REM_ACCESS_ERR },
		{ IBV_WR_RDMA_WRITE, base, 64, base - 64,
		  IBV_WC_REM_ACCESS_ERR },
		{ IBV_WR_RDMA_READ, base, 64, base + 2 * PAGE - 32,
		  IBV_WC_REM_ACCESS_ERR },
		{ IBV_WR_RDMA_READ, base, 64, UINT64_MAX - 7,
		  IBV_WC_REM_ACCESS_ERR },
		{ IBV_WR_RDMA_READ, base + 2 * PAGE - 32, 64, base,
		  IBV_WC_LOC_PROT_ERR },
		{ IBV_WR_ATOMIC_FETCH_AND_ADD, base, 8, UINT64_MAX - 7,
		  IBV_WC_REM_ACCESS_ERR },
	};
	struct ibv_recv_wr rwr = { 0 }, *brw;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(c); i++) {
		struct ibv_sge sge = { c[i].laddr, c[i].len, self->mr->lkey };
		struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
					  .opcode = c[i].op };

		ASSERT_EQ(0, new_pair(self));
		ASSERT_EQ(0, ibv_post_recv(self->qp[1], &rwr, &brw));
		wr.wr.rdma.remote_addr = c[i].raddr;
		wr.wr.rdma.rkey = self->mr->rkey;
		if (c[i].op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
			wr.wr.atomic.remote_addr = c[i].raddr;
			wr.wr.atomic.rkey = self->mr->rkey;
		}
		EXPECT_EQ(c[i].want, post_one(self, &wr)) TH_LOG("case %u", i);
		EXPECT_EQ(IBV_QPS_ERR, sroce_qp_state(self->qp[0])) TH_LOG("case %u", i);
		EXPECT_TRUE(guards_intact(self)) TH_LOG("case %u", i);
	}
	EXPECT_TRUE(pair_works(self));
}

TEST_F(hostile, bad_keys)
{
	uint64_t base = (uintptr_t)region(self);
	int i;

	for (i = 0; i < 6; i++) {
		uint32_t key = (uint32_t)rnd(self);
		struct ibv_sge sge = { base, 64, i < 3 ? key :
						      self->mr->lkey };
		struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
					  .opcode = IBV_WR_RDMA_WRITE };

		if (key == self->mr->lkey)
			continue;
		ASSERT_EQ(0, new_pair(self));
		wr.wr.rdma.remote_addr = base;
		wr.wr.rdma.rkey = i < 3 ? self->mr->rkey : key;
		EXPECT_EQ(i < 3 ? IBV_WC_LOC_PROT_ERR : IBV_WC_REM_ACCESS_ERR,
			  post_one(self, &wr)) TH_LOG("key %#x", key);
	}
	EXPECT_TRUE(pair_works(self));
}

static struct sroce_qp *prov_qp(struct ibv_qp *qp)
{
	size_t off = offsetof(struct sroce_qp, vqp.qp);

	return (struct sroce_qp *)((char *)qp - off);
}

/* Ring the send doorbell whatever the ring's flags say. */
static void sq_doorbell(struct ibv_qp *qp)
{
	struct ibv_send_wr *bad;

	ibv_cmd_post_send(qp, NULL, &bad);
}

TEST_F(hostile, sge_count_beyond_the_limit)
{
	struct sroce_qp *q = prov_qp(self->qp[0]);
	struct ibv_sge sge[8];
	struct ibv_send_wr wr = { .sg_list = sge, .num_sge = 5,
				  .opcode = IBV_WR_SEND }, *bad;
	struct sroce_send_wqe *w;
	uint32_t prod, before;
	int i;

	for (i = 0; i < 8; i++)
		sge[i] = (struct ibv_sge){ (uintptr_t)region(self), 8,
					   self->mr->lkey };
	/* The provider refuses it ... */
	EXPECT_NE(0, ibv_post_send(self->qp[0], &wr, &bad));
	/* ... so write it into the ring ourselves. */
	before = drain(self->cq[0], 0);
	prod = q->sq.hdr->prod;
	w = (void *)((char *)q->sq.entries + (prod & q->sq.mask) * q->sq.stride);
	memset(w, 0, q->sq.stride);
	w->wr_id = 77;
	w->opcode = IBV_WR_SEND;
	w->send_flags = IBV_SEND_SIGNALED;
	w->num_sge = 0x7fffffff;
	__atomic_store_n(&q->sq.hdr->prod, prod + 1, __ATOMIC_RELEASE);
	sq_doorbell(self->qp[0]);
	EXPECT_LE(1, before + drain(self->cq[0], 500));
	EXPECT_EQ(IBV_QPS_ERR, sroce_qp_state(self->qp[0]));
	EXPECT_TRUE(pair_works(self));
}

/* Fill a send WQE with garbage, or with nasty but plausible values. */
static void nasty_swqe(struct _test_data_hostile *self, struct sroce_send_wqe *w,
		       uint32_t stride)
{
	static const uint32_t lens[] = { 0, 1, 8, 4095, 4096, 8192,
					 0x80000000u, UINT32_MAX };
	uint64_t base = (uintptr_t)region(self);
	struct sroce_sge *sge = (void *)(w + 1);
	uint32_t i, nsge;

	for (i = 0; i < stride / 8; i++)
		((uint64_t *)w)[i] = rnd(self);
	if (rnd(self) % 4 == 0)
		return;		/* pure garbage */
	w->opcode = rnd(self) % 17;
	w->send_flags &= 0xf;
	nsge = rnd(self) % 6;
	w->num_sge = nsge;
	w->inline_len = rnd(self) % 2 ? (uint32_t)rnd(self) % 512 :
					(uint32_t)rnd(self);
	for (i = 0; i < nsge && (char *)(sge + i + 1) <= (char *)w + stride;
	     i++) {
		sge[i].addr = base + (int64_t)(rnd(self) % (4 * PAGE)) - PAGE;
		sge[i].length = lens[rnd(self) % 8];
		sge[i].lkey = rnd(self) % 4 ? self->mr->lkey :
					      (uint32_t)rnd(self);
	}
	w->wr.rdma.remote_addr = rnd(self) % 2 ? base +
		(int64_t)(rnd(self) % (4 * PAGE)) - PAGE : rnd(self);
	w->wr.rdma.rkey = rnd(self) % 4 ? self->mr->rkey : (uint32_t)rnd(self);
}

TEST_F(hostile, garbage_in_the_send_ring)
{
	int round, state, errors = 0;

	for (round = 0; round < ROUNDS; round++) {
		struct sroce_qp *q = prov_qp(self->qp[0]);
		uint32_t n = q->sq.mask + 1, i, prod;

		for (i = 0; i < n; i++)
			nasty_swqe(self, (void *)((char *)q->sq.entries +
						  i * q->sq.stride),
				   q->sq.stride);
		/* Indices: a few entries, the whole ring, or nonsense. */
		prod = q->sq.hdr->prod;
		switch (rnd(self) % 4) {
		case 0:
			prod += 1 + rnd(self) % 4;
			break;
		case 1:
			prod += n;
			break;
		case 2:
			prod += n + 1 + rnd(self) % 1000;
			break;
		default:
			prod = (uint32_t)rnd(self);
			q->sq.hdr->cons = (uint32_t)rnd(self);
			break;
		}
		__atomic_store_n(&q->sq.hdr->prod, prod, __ATOMIC_RELEASE);
		sq_doorbell(self->qp[0]);
		drain(self->cq[0], 100);
		drain(self->cq[1], 0);
		state = sroce_qp_state(self->qp[0]);
		ASSERT_TRUE(state == IBV_QPS_RTS || state == IBV_QPS_ERR)
			TH_LOG("round %d: state %d", round, state);
		errors += state == IBV_QPS_ERR;
		ASSERT_TRUE(guards_intact(self)) TH_LOG("round %d", round);
		if (state == IBV_QPS_ERR)
			ASSERT_EQ(0, new_pair(self));
	}
	TH_LOG("%d of %d rounds ended with the QP in error", errors, ROUNDS);
	EXPECT_LT(0, errors);
	EXPECT_TRUE(pair_works(self));
}

TEST_F(hostile, garbage_in_the_receive_ring)
{
	uint64_t base = (uintptr_t)region(self);
	int round, state, errors = 0;

	for (round = 0; round < ROUNDS; round++) {
		struct sroce_qp *q = prov_qp(self->qp[1]);
		uint32_t n = q->rq.mask + 1, i, k;
		struct ibv_sge sge = { base, 1 + rnd(self) % (2 * PAGE),
				       self->mr->lkey };
		struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
					  .opcode = IBV_WR_SEND,
					  .send_flags = IBV_SEND_SIGNALED },
				   *bad;
		struct ibv_recv_wr *rbad;

		for (i = 0; i < n; i++) {
			struct sroce_recv_wqe *r = (void *)((char *)q->rq.entries +
							    i * q->rq.stride);
			struct sroce_sge *s = (void *)(r + 1);

			for (k = 0; k < q->rq.stride / 8; k++)
				((uint64_t *)r)[k] = rnd(self);
			if (rnd(self) % 4 == 0)
				continue;
			r->num_sge = rnd(self) % 6;
			for (k = 0; k < r->num_sge &&
			     (char *)(s + k + 1) <= (char *)r + q->rq.stride;
			     k++) {
				s[k].addr = base + (int64_t)(rnd(self) %
							     (4 * PAGE)) - PAGE;
				s[k].length = (uint32_t)rnd(self) % (3 * PAGE);
				s[k].lkey = self->mr->lkey;
			}
		}
		__atomic_store_n(&q->rq.hdr->prod, rnd(self) % 3 ?
				 q->rq.hdr->prod + 1 + rnd(self) % n :
				 (uint32_t)rnd(self), __ATOMIC_RELEASE);
		ibv_cmd_post_recv(self->qp[1], NULL, &rbad);
		ibv_post_send(self->qp[0], &wr, &bad);
		drain(self->cq[0], 100);
		drain(self->cq[1], 0);
		state = sroce_qp_state(self->qp[1]);
		ASSERT_TRUE(state == IBV_QPS_RTS || state == IBV_QPS_ERR)
			TH_LOG("round %d: state %d", round, state);
		errors += state == IBV_QPS_ERR;
		ASSERT_TRUE(guards_intact(self)) TH_LOG("round %d", round);
		ASSERT_EQ(0, new_pair(self));
	}
	TH_LOG("%d of %d rounds ended with the QP in error", errors, ROUNDS);
	EXPECT_LT(0, errors);
	EXPECT_TRUE(pair_works(self));
}

/* Asynchronous events of @type waiting on the device; the rest dropped. */
static int async_events(struct _test_data_hostile *self,
			enum ibv_event_type type)
{
	struct ibv_async_event ev;
	int n = 0, fl = fcntl(self->d.ctx->async_fd, F_GETFL);

	fcntl(self->d.ctx->async_fd, F_SETFL, fl | O_NONBLOCK);
	while (!ibv_get_async_event(self->d.ctx, &ev)) {
		n += ev.event_type == type;
		ibv_ack_async_event(&ev);
	}
	fcntl(self->d.ctx->async_fd, F_SETFL, fl);
	return n;
}

/*
 * The send producer index moved back behind WQEs the kernel has already
 * taken (into [head, fetched)): the kernel must refuse it, not take that
 * many WQEs again around the ring. Both WRITEs are sent and unanswered
 * (the peer is in error, the timer seconds away), so the doorbell makes
 * the kernel fetch at once. WRITEs, not SENDs: a second SEND would wait
 * for the credits of an ACK that never comes, fetched but not sent, and
 * the kernel would have no reason to look at the index again.
 */
TEST_F(hostile, send_producer_moved_back)
{
	struct ibv_qp_attr err = { .qp_state = IBV_QPS_ERR };
	struct ibv_sge ss = { (uintptr_t)region(self), 64, self->mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &ss, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_WRITE,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	long long bad_wqe = sroce_counter(self->d.ibdev, "bad_wqe");
	struct sroce_qp *q;
	int i;

	wr.wr.rdma.remote_addr = ss.addr;
	wr.wr.rdma.rkey = self->mr->rkey;

	self->timeout = 20;	/* 4 s */
	ASSERT_EQ(0, new_pair(self));
	self->timeout = 0;
	q = prov_qp(self->qp[0]);
	async_events(self, 0);
	ASSERT_EQ(0, ibv_modify_qp(self->qp[1], &err, IBV_QP_STATE));
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, ibv_post_send(self->qp[0], &wr, &bad));
	usleep(200000);
	ASSERT_EQ(IBV_QPS_RTS, sroce_qp_state(self->qp[0]));
	__atomic_store_n(&q->sq.hdr->prod, q->sq.hdr->prod - 1,
			 __ATOMIC_RELEASE);
	sq_doorbell(self->qp[0]);
	EXPECT_EQ(IBV_QPS_ERR,
		  sroce_wait_qp_state(self->qp[0], IBV_QPS_ERR, 2000));
	EXPECT_EQ(1, async_events(self, IBV_EVENT_QP_FATAL));
	EXPECT_LT(bad_wqe, sroce_counter(self->d.ibdev, "bad_wqe"));
	EXPECT_TRUE(pair_works(self));
}

/*
 * An SRQ producer index that makes no sense breaks the SRQ: one
 * IB_EVENT_SRQ_ERR, and every QP that takes from it fails as on a bad
 * receive queue of its own (no endless RNR NAKs).
 */
TEST_F(hostile, srq_producer_nonsense)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 16,
						  .max_sge = 1 } };
	struct ibv_sge ss = { (uintptr_t)region(self), 64, self->mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &ss, .num_sge = 1,
				  .opcode = IBV_WR_SEND }, *bad;
	struct sroce_srq *s;
	int round;

	self->srq = ibv_create_srq(self->pd, &sa);
	ASSERT_NE(NULL, self->srq);
	s = to_ssrq(self->srq);
	async_events(self, 0);
	__atomic_store_n(&s->ring.hdr->prod, s->ring.hdr->prod + s->ring.mask +
			 8, __ATOMIC_RELEASE);
	for (round = 0; round < 2; round++) {
		ASSERT_EQ(0, new_pair(self));
		ASSERT_EQ(0, ibv_post_send(self->qp[0], &wr, &bad));
		EXPECT_EQ(IBV_QPS_ERR,
			  sroce_wait_qp_state(self->qp[1], IBV_QPS_ERR, 2000))
			TH_LOG("QP %d of the SRQ", round);
	}
	EXPECT_EQ(1, async_events(self, IBV_EVENT_SRQ_ERR));
	ibv_destroy_qp(self->qp[0]);
	ibv_destroy_qp(self->qp[1]);
	self->qp[0] = NULL;
	self->qp[1] = NULL;
	ibv_destroy_srq(self->srq);
	self->srq = NULL;
	EXPECT_TRUE(pair_works(self));
}

/*
 * A CQ consumer index that makes no sense reads as a full CQ: completions
 * are lost and counted, and IB_EVENT_CQ_ERR comes once, not once per
 * completion (a user who never reads events would otherwise have the
 * kernel queue them without bound).
 */
TEST_F(hostile, cq_consumer_nonsense)
{
	struct sroce_cq *c = container_of(self->cq[0], struct sroce_cq,
					  vcq.cq);
	struct ibv_sge ss = { (uintptr_t)region(self), 64, self->mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &ss, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_WRITE,
				  .send_flags = IBV_SEND_SIGNALED,
				  .wr.rdma = { (uintptr_t)region(self) + PAGE,
					       self->mr->rkey } }, *bad;
	long long lost = sroce_counter(self->d.ibdev, "cq_overflow");
	uint32_t cons = c->ring.hdr->cons;
	int i;

	async_events(self, 0);
	__atomic_store_n(&c->ring.hdr->cons, c->ring.hdr->prod + 1000,
			 __ATOMIC_RELEASE);
	for (i = 0; i < 8; i++)
		ASSERT_EQ(0, ibv_post_send(self->qp[0], &wr, &bad));
	for (i = 0; i < 100 &&
	     sroce_counter(self->d.ibdev, "cq_overflow") < lost + 8; i++)
		usleep(10000);
	EXPECT_EQ(lost + 8, sroce_counter(self->d.ibdev, "cq_overflow"));
	EXPECT_EQ(1, async_events(self, IBV_EVENT_CQ_ERR));
	__atomic_store_n(&c->ring.hdr->cons, cons, __ATOMIC_RELEASE);
	EXPECT_TRUE(pair_works(self));
}

TEST_HARNESS_MAIN
