// SPDX-License-Identifier: GPL-2.0
/*
 * UD queue pairs from user space: two UD QPs of one sroce device (its own
 * veth, IPv4 GID, netdev MTU 1500 so a 1024-byte port MTU) exchange
 * datagrams through an address handle. Checked: payload and GRH (the IPv4
 * header in the GRH's last 20 bytes), completion fields, immediate data,
 * Q_Key checks (a wrong one is dropped and counted, a "controlled" one
 * means the sender's own), datagrams larger than the MTU, receive buffers
 * that are too small, datagrams with no receive posted, and an AH of
 * another PD.
 */
#include <arpa/inet.h>
#include <time.h>

#include "kselftest_harness.h"
#include "sroce_test.h"

#define QKEY		0x11110000u
#define BUF_SIZE	8192
#define GRH		40
/* A UD receive's SL: its packet type in mlx5's encoding (UCX reads it). */
#define UD_SL_ROCEV2_IPV4	0xa
#define UD_SL_ROCEV2_IPV6	0x9
#define RECV_OFF	4096

FIXTURE(ud) {
	struct sroce_tdev d;
	struct ibv_pd *pd;
	struct ibv_cq *cq[2];
	struct ibv_qp *qp[2];
	struct ibv_mr *mr;
	struct ibv_ah *ah;
	char *buf;
	char addr[32];
	int gid_index;
	uint32_t mtu;
};

static struct ibv_qp *make_ud_qp(struct ibv_pd *pd, struct ibv_cq *cq,
				 uint32_t qkey)
{
	struct ibv_qp_init_attr init = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 2, .max_recv_sge = 2 },
	};
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qkey = qkey };
	struct ibv_qp *qp = ibv_create_qp(pd, &init);

	if (!qp)
		return NULL;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_QKEY))
		goto err;
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		goto err;
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 77;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		goto err;
	return qp;
err:
	ibv_destroy_qp(qp);
	return NULL;
}

static struct ibv_ah *make_ah(struct ibv_pd *pd, struct ibv_context *ctx,
			      int gid_index)
{
	struct ibv_ah_attr a = { .is_global = 1, .port_num = 1 };

	if (ibv_query_gid(ctx, 1, gid_index, &a.grh.dgid))
		return NULL;
	a.grh.sgid_index = gid_index;
	a.grh.hop_limit = 64;
	return ibv_create_ah(pd, &a);
}

FIXTURE_SETUP(ud)
{
	struct ibv_port_attr pa;
	const char *why;
	int ret, i;

	memset(self, 0, sizeof(*self));
	ret = sroce_tdev_up(&self->d, "u", &why);
	if (ret == -1)
		SKIP(return, "%s", why);
	ASSERT_EQ(0, ret) TH_LOG("%s", why);
	snprintf(self->addr, sizeof(self->addr), "198.19.%d.1",
		 getpid() % 250 + 1);
	ASSERT_EQ(0, sh("ip addr add %s/24 dev %s", self->addr, self->d.veth));
	self->gid_index = sroce_find_gid(self->d.ctx, AF_INET, self->addr, 5000, NULL);
	ASSERT_LE(0, self->gid_index) TH_LOG("no RoCEv2 GID for %s",
					     self->addr);
	ASSERT_EQ(0, ibv_query_port(self->d.ctx, 1, &pa));
	self->mtu = 128u << pa.active_mtu;
	self->pd = ibv_alloc_pd(self->d.ctx);
	ASSERT_NE(NULL, self->pd);
	self->buf = calloc(1, BUF_SIZE);
	ASSERT_NE(NULL, self->buf);
	self->mr = ibv_reg_mr(self->pd, self->buf, BUF_SIZE,
			      IBV_ACCESS_LOCAL_WRITE);
	ASSERT_NE(NULL, self->mr);
	for (i = 0; i < 2; i++) {
		self->cq[i] = ibv_create_cq(self->d.ctx, 32, NULL, NULL, 0);
		ASSERT_NE(NULL, self->cq[i]);
		self->qp[i] = make_ud_qp(self->pd, self->cq[i], QKEY);
		ASSERT_NE(NULL, self->qp[i]);
	}
	self->ah = make_ah(self->pd, self->d.ctx, self->gid_index);
	ASSERT_NE(NULL, self->ah);
}

FIXTURE_TEARDOWN(ud)
{
	int i;

	if (self->ah)
		ibv_destroy_ah(self->ah);
	for (i = 0; i < 2; i++) {
		if (self->qp[i])
			ibv_destroy_qp(self->qp[i]);
		if (self->cq[i])
			ibv_destroy_cq(self->cq[i]);
	}
	if (self->mr)
		ibv_dereg_mr(self->mr);
	if (self->pd)
		ibv_dealloc_pd(self->pd);
	free(self->buf);
	sroce_tdev_down(&self->d);
}

/* A receive of @len bytes at buf + @off on @qp. */
static int post_recv_on(struct _test_data_ud *self, struct ibv_qp *qp,
			uint64_t id, size_t off, uint32_t len)
{
	struct ibv_sge s = { (uintptr_t)self->buf + off, len, self->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &s, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return ibv_post_recv(qp, &wr, &bad);
}

/* A receive of @len bytes on the receiving QP, at RECV_OFF. */
static int post_recv(struct _test_data_ud *self, uint64_t id, uint32_t len)
{
	return post_recv_on(self, self->qp[1], id, RECV_OFF, len);
}

static int post_send(struct _test_data_ud *self, struct ibv_ah *ah,
		     uint32_t len, uint32_t qkey, bool imm)
{
	struct ibv_sge s = { (uintptr_t)self->buf, len, self->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 0x5e, .sg_list = &s, .num_sge = 1,
		.opcode = imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
		.imm_data = htonl(0xfeedbeef),
	};
	struct ibv_send_wr *bad;

	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = self->qp[1]->qp_num;
	wr.wr.ud.remote_qkey = qkey;
	return ibv_post_send(self->qp[0], &wr, &bad);
}

static void fill(char *p, uint32_t len, int seed)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		p[i] = (char)(seed + i * 13);
}

TEST_F(ud, send_recv_with_grh)
{
	struct ibv_wc wc;
	struct in_addr in;
	uint8_t *grh = (uint8_t *)self->buf + RECV_OFF;

	fill(self->buf, 1000, 3);
	ASSERT_EQ(0, post_recv(self, 0x77, GRH + BUF_SIZE / 4));
	ASSERT_EQ(0, post_send(self, self->ah, 1000, QKEY, false));
	ASSERT_EQ(1, sroce_wait_wc(self->cq[0], &wc, 2000));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(IBV_WC_SEND, wc.opcode);
	EXPECT_EQ(0x5e, wc.wr_id);
	ASSERT_EQ(1, sroce_wait_wc(self->cq[1], &wc, 2000));
	ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(IBV_WC_RECV, wc.opcode);
	EXPECT_EQ(0x77, wc.wr_id);
	EXPECT_EQ(GRH + 1000, wc.byte_len);
	EXPECT_TRUE(wc.wc_flags & IBV_WC_GRH);
	EXPECT_FALSE(wc.wc_flags & IBV_WC_WITH_IMM);
	EXPECT_EQ(self->qp[0]->qp_num, wc.src_qp);
	EXPECT_EQ(self->qp[1]->qp_num, wc.qp_num);
	EXPECT_EQ(0, memcmp(self->buf, self->buf + RECV_OFF + GRH, 1000));
	/* RoCEv2 over IPv4: the IPv4 header in the GRH's last 20 bytes. */
	EXPECT_EQ(0x45, grh[20]);
	EXPECT_EQ(17, grh[20 + 9]);
	inet_pton(AF_INET, self->addr, &in);
	EXPECT_EQ(0, memcmp(&grh[20 + 12], &in, 4));
	EXPECT_EQ(0, memcmp(&grh[20 + 16], &in, 4));
	/*
	 * The SL gives the packet type as mlx5 reports it (RoCEv2, IPv4):
	 * UCX's ud_verbs finds the destination GID by it.
	 */
	EXPECT_EQ(UD_SL_ROCEV2_IPV4, wc.sl);
}

TEST_F(ud, send_with_imm)
{
	struct ibv_wc wc;

	ASSERT_EQ(0, post_recv(self, 1, GRH + 64));
	ASSERT_EQ(0, post_send(self, self->ah, 0, QKEY, true));
	ASSERT_EQ(1, sroce_wait_wc(self->cq[1], &wc, 2000));
	ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(GRH, wc.byte_len);
	EXPECT_TRUE(wc.wc_flags & IBV_WC_WITH_IMM);
	EXPECT_EQ(htonl(0xfeedbeef), wc.imm_data);
}

TEST_F(ud, wrong_qkey_is_dropped_and_counted)
{
	long long before = sroce_counter(self->d.ibdev, "rx_drop_bad_qkey");
	struct ibv_wc wc;

	ASSERT_LE(0, before);
	ASSERT_EQ(0, post_recv(self, 1, GRH + 2048));
	ASSERT_EQ(0, post_send(self, self->ah, 100, QKEY + 1, false));
	ASSERT_EQ(1, sroce_wait_wc(self->cq[0], &wc, 2000));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(0, sroce_wait_wc(self->cq[1], &wc, 300));
	EXPECT_EQ(before + 1, sroce_counter(self->d.ibdev, "rx_drop_bad_qkey"));
	/* The receive was not used up: the right Q_Key still finds it. */
	ASSERT_EQ(0, post_send(self, self->ah, 100, QKEY, false));
	ASSERT_EQ(1, sroce_wait_wc(self->cq[1], &wc, 2000));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(1, wc.wr_id);
}

/* A Q_Key with the high bit set means the sending QP's own (0x1111...). */
TEST_F(ud, controlled_qkey_uses_the_qps_own)
{
	struct ibv_wc wc;

	ASSERT_EQ(0, post_recv(self, 2, GRH + 2048));
	ASSERT_EQ(0, post_send(self, self->ah, 10, 0x80000000u, false));
	ASSERT_EQ(1, sroce_wait_wc(self->cq[1], &wc, 2000));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(2, wc.wr_id);
}

/*
 * A datagram longer than the path MTU fails locally. IBA 10.3.1: the send
 * queue stops (SQE) and flushes what is posted, receives go on, and the
 * consumer moves the QP back to RTS (as the MAD layer does for QP1).
 */
TEST_F(ud, larger_than_mtu_fails_locally)
{
	struct ibv_sge s = { (uintptr_t)self->buf, 64, self->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 0x77, .sg_list = &s, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_qp_attr rts = { .qp_state = IBV_QPS_RTS,
				   .cur_qp_state = IBV_QPS_SQE };
	struct ibv_wc wc;

	ASSERT_EQ(0, post_recv(self, 3, GRH + 4096));
	ASSERT_EQ(0, post_send(self, self->ah, self->mtu + 1, QKEY, false));
	ASSERT_EQ(1, sroce_wait_wc(self->cq[0], &wc, 2000));
	EXPECT_EQ(IBV_WC_LOC_LEN_ERR, wc.status);
	EXPECT_EQ(0, sroce_wait_wc(self->cq[1], &wc, 300));
	EXPECT_EQ(IBV_QPS_SQE, sroce_qp_state(self->qp[0]));

	/* Receives go on: a datagram from the other QP arrives. */
	ASSERT_EQ(0, post_recv_on(self, self->qp[0], 0x31, RECV_OFF, GRH + 64));
	wr.wr.ud.ah = self->ah;
	wr.wr.ud.remote_qpn = self->qp[0]->qp_num;
	wr.wr.ud.remote_qkey = QKEY;
	ASSERT_EQ(0, ibv_post_send(self->qp[1], &wr, &bad));
	ASSERT_EQ(1, sroce_wait_wc(self->cq[1], &wc, 2000));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	ASSERT_EQ(1, sroce_wait_wc(self->cq[0], &wc, 2000));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status) TH_LOG("receive in SQE");
	EXPECT_EQ(0x31, wc.wr_id);

	/* Sends posted meanwhile are flushed. */
	ASSERT_EQ(0, post_send(self, self->ah, 64, QKEY, false));
	ASSERT_EQ(1, sroce_wait_wc(self->cq[0], &wc, 2000));
	EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, wc.status);

	/* Back to RTS, sending works again; the first receive takes it. */
	ASSERT_EQ(0, ibv_modify_qp(self->qp[0], &rts,
				   IBV_QP_STATE | IBV_QP_CUR_STATE));
	EXPECT_EQ(IBV_QPS_RTS, sroce_qp_state(self->qp[0]));
	ASSERT_EQ(0, post_send(self, self->ah, 64, QKEY, false));
	ASSERT_EQ(1, sroce_wait_wc(self->cq[0], &wc, 2000));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	ASSERT_EQ(1, sroce_wait_wc(self->cq[1], &wc, 2000));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(3, wc.wr_id);
}

TEST_F(ud, receive_too_small_fails_that_receive_only)
{
	struct ibv_wc wc;

	ASSERT_EQ(0, post_recv(self, 4, GRH + 100));
	ASSERT_EQ(0, post_send(self, self->ah, 500, QKEY, false));
	ASSERT_EQ(1, sroce_wait_wc(self->cq[1], &wc, 2000));
	EXPECT_EQ(IBV_WC_LOC_LEN_ERR, wc.status);
	EXPECT_EQ(4, wc.wr_id);
	/* The QP lives on. */
	ASSERT_EQ(0, post_recv(self, 5, GRH + 1000));
	ASSERT_EQ(0, post_send(self, self->ah, 500, QKEY, false));
	ASSERT_EQ(1, sroce_wait_wc(self->cq[1], &wc, 2000));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(5, wc.wr_id);
}

TEST_F(ud, no_receive_posted_is_dropped_and_counted)
{
	long long before = sroce_counter(self->d.ibdev, "rx_drop_no_recv_wqe");
	struct ibv_wc wc;

	ASSERT_LE(0, before);
	ASSERT_EQ(0, post_send(self, self->ah, 64, QKEY, false));
	ASSERT_EQ(1, sroce_wait_wc(self->cq[0], &wc, 2000));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	usleep(200000);
	EXPECT_EQ(before + 1, sroce_counter(self->d.ibdev, "rx_drop_no_recv_wqe"));
}

TEST_F(ud, ah_of_another_pd_is_refused)
{
	struct ibv_pd *pd2 = ibv_alloc_pd(self->d.ctx);
	struct ibv_ah *ah2;
	struct ibv_wc wc;

	ASSERT_NE(NULL, pd2);
	ah2 = make_ah(pd2, self->d.ctx, self->gid_index);
	ASSERT_NE(NULL, ah2);
	ASSERT_EQ(0, post_recv(self, 6, GRH + 1000));
	ASSERT_EQ(0, post_send(self, ah2, 10, QKEY, false));
	ASSERT_EQ(1, sroce_wait_wc(self->cq[0], &wc, 2000));
	EXPECT_EQ(IBV_WC_LOC_QP_OP_ERR, wc.status);
	EXPECT_EQ(0, sroce_wait_wc(self->cq[1], &wc, 300));
	EXPECT_EQ(0, ibv_destroy_ah(ah2));
	EXPECT_EQ(0, ibv_dealloc_pd(pd2));
}

/* A multicast GID, ::ffff:239.1.x.1, and an AH to it. */
static struct ibv_ah *mcast_ah(struct _test_data_ud *self, union ibv_gid *g)
{
	struct ibv_ah_attr a = { .is_global = 1, .port_num = 1 };

	memset(g, 0, sizeof(*g));
	g->raw[10] = 0xff;
	g->raw[11] = 0xff;
	g->raw[12] = 239;
	g->raw[13] = 1;
	g->raw[14] = getpid() % 250 + 1;
	g->raw[15] = 1;
	a.grh.dgid = *g;
	a.grh.sgid_index = self->gid_index;
	a.grh.hop_limit = 1;
	return ibv_create_ah(self->pd, &a);
}

/*
 * Two QPs attached to a group both receive one datagram sent to it (QPN
 * 0xffffff); once one detaches, only the other does. Attaching a unicast
 * GID, or an RC QP, is refused.
 */
TEST_F(ud, multicast_attach_send_detach)
{
	struct ibv_qp *third = make_ud_qp(self->pd, self->cq[1], QKEY);
	struct ibv_sge s = { (uintptr_t)self->buf, 100, self->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 9, .sg_list = &s, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr *bad;
	union ibv_gid mgid, ugid;
	struct ibv_ah *ah;
	struct ibv_wc wc;
	int got1 = 0, got3 = 0, i;

	ASSERT_NE(NULL, third);
	ah = mcast_ah(self, &mgid);
	ASSERT_NE(NULL, ah);
	ASSERT_EQ(0, ibv_query_gid(self->d.ctx, 1, self->gid_index, &ugid));
	EXPECT_NE(0, ibv_attach_mcast(self->qp[1], &ugid, 0));
	ASSERT_EQ(0, ibv_attach_mcast(self->qp[1], &mgid, 0));
	ASSERT_EQ(0, ibv_attach_mcast(third, &mgid, 0));
	ASSERT_EQ(0, post_recv_on(self, self->qp[1], 1, RECV_OFF, GRH + 512));
	ASSERT_EQ(0, post_recv_on(self, third, 3, RECV_OFF + 1024, GRH + 512));
	fill(self->buf, 100, 5);
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = 0xffffff;
	wr.wr.ud.remote_qkey = QKEY;
	ASSERT_EQ(0, ibv_post_send(self->qp[0], &wr, &bad));
	ASSERT_EQ(1, sroce_wait_wc(self->cq[0], &wc, 2000));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	/* Both receives complete on cq[1], in either order. */
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(1, sroce_wait_wc(self->cq[1], &wc, 2000));
		EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
		EXPECT_EQ(GRH + 100, wc.byte_len);
		EXPECT_EQ(self->qp[0]->qp_num, wc.src_qp);
		if (wc.wr_id == 1)
			got1++;
		if (wc.wr_id == 3)
			got3++;
	}
	EXPECT_EQ(1, got1);
	EXPECT_EQ(1, got3);
	EXPECT_EQ(0, memcmp(self->buf, self->buf + RECV_OFF + GRH, 100));
	EXPECT_EQ(0, memcmp(self->buf, self->buf + RECV_OFF + 1024 + GRH,
			    100));

	/* The third QP leaves: only QP 1 gets the next one. */
	ASSERT_EQ(0, ibv_detach_mcast(third, &mgid, 0));
	EXPECT_NE(0, ibv_detach_mcast(third, &mgid, 0));
	ASSERT_EQ(0, post_recv_on(self, self->qp[1], 4, RECV_OFF, GRH + 512));
	ASSERT_EQ(0, post_recv_on(self, third, 5, RECV_OFF + 1024, GRH + 512));
	ASSERT_EQ(0, ibv_post_send(self->qp[0], &wr, &bad));
	ASSERT_EQ(1, sroce_wait_wc(self->cq[0], &wc, 2000));
	ASSERT_EQ(1, sroce_wait_wc(self->cq[1], &wc, 2000));
	EXPECT_EQ(4, wc.wr_id);
	EXPECT_EQ(0, sroce_wait_wc(self->cq[1], &wc, 300));

	EXPECT_EQ(0, ibv_detach_mcast(self->qp[1], &mgid, 0));
	EXPECT_EQ(0, ibv_destroy_ah(ah));
	EXPECT_EQ(0, ibv_destroy_qp(third));
}

/* The same over IPv6: a group ff0e::..., its MAC 33:33:..., the GRH. */
TEST_F(ud, multicast_ipv6)
{
	struct ibv_sge s = { (uintptr_t)self->buf, 200, self->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 9, .sg_list = &s, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED };
	struct ibv_ah_attr a = { .is_global = 1, .port_num = 1 };
	uint8_t *grh = (uint8_t *)self->buf + RECV_OFF;
	char addr6[64];
	struct ibv_send_wr *bad;
	union ibv_gid mgid = {};
	struct ibv_ah *ah;
	struct ibv_wc wc;
	int idx;

	snprintf(addr6, sizeof(addr6), "2001:db8:3:%x::1", getpid() % 250 + 1);
	ASSERT_EQ(0, sh("ip addr add %s/64 dev %s nodad", addr6,
			self->d.veth));
	idx = sroce_find_gid(self->d.ctx, AF_INET6, addr6, 5000, NULL);
	ASSERT_LE(0, idx) TH_LOG("no RoCEv2 GID for %s", addr6);
	mgid.raw[0] = 0xff;
	mgid.raw[1] = 0x0e;
	mgid.raw[14] = getpid() % 250 + 1;
	mgid.raw[15] = 6;
	a.grh.dgid = mgid;
	a.grh.sgid_index = idx;
	a.grh.hop_limit = 1;
	ah = ibv_create_ah(self->pd, &a);
	ASSERT_NE(NULL, ah);
	ASSERT_EQ(0, ibv_attach_mcast(self->qp[1], &mgid, 0));
	ASSERT_EQ(0, post_recv(self, 0x66, GRH + 512));
	fill(self->buf, 200, 9);
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = 0xffffff;
	wr.wr.ud.remote_qkey = QKEY;
	ASSERT_EQ(0, ibv_post_send(self->qp[0], &wr, &bad));
	ASSERT_EQ(1, sroce_wait_wc(self->cq[0], &wc, 2000));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	ASSERT_EQ(1, sroce_wait_wc(self->cq[1], &wc, 2000));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(0x66, wc.wr_id);
	EXPECT_EQ(GRH + 200, wc.byte_len);
	EXPECT_EQ(0, memcmp(self->buf, self->buf + RECV_OFF + GRH, 200));
	/* The GRH is the IPv6 header: version 6, UDP, to the group. */
	EXPECT_EQ(6, grh[0] >> 4);
	EXPECT_EQ(17, grh[6]);
	EXPECT_EQ(0, memcmp(&grh[24], mgid.raw, 16));
	EXPECT_EQ(UD_SL_ROCEV2_IPV6, wc.sl);
	EXPECT_EQ(0, ibv_detach_mcast(self->qp[1], &mgid, 0));
	EXPECT_EQ(0, ibv_destroy_ah(ah));
}

TEST_HARNESS_MAIN
