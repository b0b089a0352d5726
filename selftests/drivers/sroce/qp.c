// SPDX-License-Identifier: GPL-2.0
/*
 * Queue pair selftests for sroce (control path): creation and granted
 * capabilities, QP numbers, the IBA state machine up to RTS with every
 * attribute perftest and rdma-core set, attribute and transition errors,
 * the error state, and cleanup.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/rdma_user_ioctl.h>
#include <rdma/sroce-abi.h>

#include "kselftest_harness.h"
#include "sroce_test.h"

FIXTURE(qp) {
	struct sroce_tdev d;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	int gid_index;
	union ibv_gid gid;
};

FIXTURE_SETUP(qp)
{
	char ip4[32];
	const char *why;
	int ret = sroce_tdev_up(&self->d, "p", &why);

	if (ret == -1)
		SKIP(return, "%s", why);
	ASSERT_EQ(0, ret) TH_LOG("%s", why);
	self->pd = ibv_alloc_pd(self->d.ctx);
	ASSERT_NE(NULL, self->pd);
	self->cq = ibv_create_cq(self->d.ctx, 64, NULL, NULL, 0);
	ASSERT_NE(NULL, self->cq);
	snprintf(ip4, sizeof(ip4), "198.18.%d.1", getpid() % 250);
	ASSERT_EQ(0, sh("ip addr add %s/24 dev %s", ip4, self->d.veth));
	self->gid_index = sroce_find_gid(self->d.ctx, AF_INET, ip4, 5000, &self->gid);
	ASSERT_LE(0, self->gid_index);
}

FIXTURE_TEARDOWN(qp)
{
	sroce_tdev_down(&self->d);
}

static struct ibv_qp *make_qp(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr a = {
		.send_cq = cq,
		.recv_cq = cq,
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 10, .max_recv_wr = 20,
			 .max_send_sge = 2, .max_recv_sge = 3,
			 .max_inline_data = 64 },
	};

	return ibv_create_qp(pd, &a);
}

static void rtr_attr(struct ibv_qp_attr *a, int *mask, uint32_t dest_qpn,
		     union ibv_gid *gid, int gid_index)
{
	memset(a, 0, sizeof(*a));
	a->qp_state = IBV_QPS_RTR;
	a->path_mtu = IBV_MTU_1024;
	a->dest_qp_num = dest_qpn;
	a->rq_psn = 0x123456;
	a->max_dest_rd_atomic = 4;
	a->min_rnr_timer = 12;
	a->ah_attr.is_global = 1;
	a->ah_attr.grh.dgid = *gid;
	a->ah_attr.grh.sgid_index = gid_index;
	a->ah_attr.grh.hop_limit = 64;
	a->ah_attr.grh.traffic_class = 0x20;
	a->ah_attr.port_num = 1;
	*mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
		IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
		IBV_QP_MIN_RNR_TIMER;
}

/* What RTR->RTS sets, as perftest and rdma-core do. */
#define RTS_MASK (IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | \
		  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC)

static int to_rts(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTS,
		.sq_psn = 0x654321,
		.timeout = 14,
		.retry_cnt = 7,
		.rnr_retry = 7,
		.max_rd_atomic = 4,
	};

	return ibv_modify_qp(qp, &a, RTS_MASK);
}

TEST_F(qp, create_and_query)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a;
	struct ibv_qp *qp;

	qp = make_qp(self->pd, self->cq);
	ASSERT_NE(NULL, qp) TH_LOG("create_qp: %s", strerror(errno));
	EXPECT_LE(16, qp->qp_num);
	EXPECT_GE(0xffffff, qp->qp_num);
	ASSERT_EQ(0, ibv_query_qp(qp, &a, IBV_QP_STATE | IBV_QP_CAP, &init));
	EXPECT_EQ(IBV_QPS_RESET, a.qp_state);
	EXPECT_LE(10, init.cap.max_send_wr);
	EXPECT_LE(20, init.cap.max_recv_wr);
	EXPECT_LE(2, init.cap.max_send_sge);
	EXPECT_LE(3, init.cap.max_recv_sge);
	EXPECT_LE(64, init.cap.max_inline_data);
	EXPECT_EQ(IBV_QPT_RC, init.qp_type);
	EXPECT_EQ(0, ibv_destroy_qp(qp));
}

TEST_F(qp, qp_numbers_unique_and_not_reused_at_once)
{
	struct ibv_qp *a = make_qp(self->pd, self->cq);
	struct ibv_qp *b = make_qp(self->pd, self->cq);
	struct ibv_qp *c;
	uint32_t old;

	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, b);
	EXPECT_NE(a->qp_num, b->qp_num);
	old = a->qp_num;
	EXPECT_EQ(0, ibv_destroy_qp(a));
	c = make_qp(self->pd, self->cq);
	ASSERT_NE(NULL, c);
	EXPECT_NE(old, c->qp_num);
	EXPECT_EQ(0, ibv_destroy_qp(c));
	EXPECT_EQ(0, ibv_destroy_qp(b));
}

/* errno of a QP creation that should fail; 0 if it succeeded. */
static int create_errno(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	struct ibv_qp *qp;

	errno = 0;
	qp = ibv_create_qp(pd, attr);
	if (!qp)
		return errno;
	ibv_destroy_qp(qp);
	return 0;
}

TEST_F(qp, bad_create)
{
	struct ibv_device_attr dev;
	struct ibv_qp_init_attr a = {
		.send_cq = self->cq, .recv_cq = self->cq,
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_init_attr b;
	struct ibv_qp *qp;

	ASSERT_EQ(0, ibv_query_device(self->d.ctx, &dev));
	/* Not implemented yet: refused, not faked. */
	b = a;
	b.qp_type = IBV_QPT_RAW_PACKET;
	EXPECT_EQ(EOPNOTSUPP, create_errno(self->pd, &b));
	b = a;
	b.qp_type = IBV_QPT_XRC_SEND;
	EXPECT_EQ(EOPNOTSUPP, create_errno(self->pd, &b));
	/* Limits. */
	b = a;
	b.cap.max_send_wr = dev.max_qp_wr + 1;
	EXPECT_EQ(EINVAL, create_errno(self->pd, &b));
	b = a;
	b.cap.max_recv_sge = dev.max_sge + 1;
	EXPECT_EQ(EINVAL, create_errno(self->pd, &b));
	b = a;
	b.cap.max_inline_data = 4096;
	EXPECT_EQ(EINVAL, create_errno(self->pd, &b));
	/* The limits themselves are granted. */
	b = a;
	b.cap.max_send_wr = dev.max_qp_wr;
	b.cap.max_send_sge = dev.max_sge;
	qp = ibv_create_qp(self->pd, &b);
	ASSERT_NE(NULL, qp) TH_LOG("at the limits: %s", strerror(errno));
	EXPECT_EQ(0, ibv_destroy_qp(qp));
}

/*
 * The QPs real clients create: qperf's server asks for no send WR and no
 * inline data; pyverbs sets IBV_QP_INIT_ATTR_CREATE_FLAGS with no flag in
 * it, for every QP type. Both are granted; a real flag is refused.
 */
TEST_F(qp, create_as_clients_do)
{
	struct ibv_qp_init_attr a = {
		.send_cq = self->cq, .recv_cq = self->cq,
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 0, .max_recv_wr = 64,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_init_attr_ex ax = {
		.send_cq = self->cq, .recv_cq = self->cq,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_CREATE_FLAGS,
		.pd = self->pd,
	};
	const enum ibv_qp_type types[] = { IBV_QPT_RC, IBV_QPT_UC,
					   IBV_QPT_UD };
	struct ibv_qp_init_attr_ex b;
	struct ibv_qp *qp;
	unsigned int i;

	qp = ibv_create_qp(self->pd, &a);
	ASSERT_NE(NULL, qp) TH_LOG("max_send_wr 0: %s", strerror(errno));
	EXPECT_LE(1, a.cap.max_send_wr);
	EXPECT_LE(64, a.cap.max_recv_wr);
	EXPECT_EQ(0, to_init(qp));
	EXPECT_EQ(0, ibv_destroy_qp(qp));

	for (i = 0; i < ARRAY_SIZE(types); i++) {
		b = ax;
		b.qp_type = types[i];
		qp = ibv_create_qp_ex(self->d.ctx, &b);
		ASSERT_NE(NULL, qp) TH_LOG("type %d, CREATE_FLAGS 0: %s",
					   types[i], strerror(errno));
		EXPECT_EQ(types[i], qp->qp_type);
		EXPECT_EQ(0, ibv_destroy_qp(qp));
		b = ax;
		b.qp_type = types[i];
		b.create_flags = IBV_QP_CREATE_BLOCK_SELF_MCAST_LB;
		qp = ibv_create_qp_ex(self->d.ctx, &b);
		EXPECT_EQ(NULL, qp);
		EXPECT_EQ(EOPNOTSUPP, errno);
		if (qp)
			ibv_destroy_qp(qp);
	}
}

TEST_F(qp, reset_init_rtr_rts)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a;
	struct ibv_qp *qp;
	int mask;

	qp = make_qp(self->pd, self->cq);
	ASSERT_NE(NULL, qp);
	ASSERT_EQ(0, to_init(qp));
	EXPECT_EQ(IBV_QPS_INIT, sroce_qp_state(qp));
	rtr_attr(&a, &mask, qp->qp_num, &self->gid, self->gid_index);
	ASSERT_EQ(0, ibv_modify_qp(qp, &a, mask));
	EXPECT_EQ(IBV_QPS_RTR, sroce_qp_state(qp));
	ASSERT_EQ(0, to_rts(qp));

	memset(&a, 0, sizeof(a));
	ASSERT_EQ(0, ibv_query_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV |
				  IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				  IBV_QP_RQ_PSN | IBV_QP_SQ_PSN |
				  IBV_QP_ACCESS_FLAGS | IBV_QP_TIMEOUT |
				  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				  IBV_QP_MAX_QP_RD_ATOMIC |
				  IBV_QP_MAX_DEST_RD_ATOMIC |
				  IBV_QP_MIN_RNR_TIMER, &init));
	EXPECT_EQ(IBV_QPS_RTS, a.qp_state);
	EXPECT_EQ(IBV_MTU_1024, a.path_mtu);
	EXPECT_EQ(qp->qp_num, a.dest_qp_num);
	EXPECT_EQ(0x123456, a.rq_psn);
	EXPECT_EQ(0x654321, a.sq_psn);
	EXPECT_EQ(IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		  IBV_ACCESS_REMOTE_ATOMIC, a.qp_access_flags);
	EXPECT_EQ(14, a.timeout);
	EXPECT_EQ(7, a.retry_cnt);
	EXPECT_EQ(7, a.rnr_retry);
	EXPECT_EQ(4, a.max_rd_atomic);
	EXPECT_EQ(4, a.max_dest_rd_atomic);
	EXPECT_EQ(12, a.min_rnr_timer);
	EXPECT_EQ(1, a.ah_attr.is_global);
	EXPECT_EQ(0, memcmp(&self->gid, &a.ah_attr.grh.dgid, 16));
	EXPECT_EQ(self->gid_index, a.ah_attr.grh.sgid_index);
	EXPECT_EQ(64, a.ah_attr.grh.hop_limit);
	EXPECT_EQ(0x20, a.ah_attr.grh.traffic_class);
	EXPECT_EQ(0, ibv_destroy_qp(qp));
}

TEST_F(qp, bad_transitions_and_attributes)
{
	struct ibv_qp_attr a;
	struct ibv_qp *qp;
	int mask;

	qp = make_qp(self->pd, self->cq);
	ASSERT_NE(NULL, qp);
	/* Skipping states. */
	rtr_attr(&a, &mask, qp->qp_num, &self->gid, self->gid_index);
	EXPECT_EQ(EINVAL, ibv_modify_qp(qp, &a, mask));
	EXPECT_EQ(EINVAL, to_rts(qp));
	EXPECT_EQ(IBV_QPS_RESET, sroce_qp_state(qp));

	/* Bad INIT attributes. */
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.pkey_index = 1;
	EXPECT_EQ(EINVAL, ibv_modify_qp(qp, &a, IBV_QP_STATE |
					IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					IBV_QP_ACCESS_FLAGS));
	a.pkey_index = 0;
	a.port_num = 2;
	EXPECT_NE(0, ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				   IBV_QP_PORT | IBV_QP_ACCESS_FLAGS));
	/* Mandatory attributes missing. */
	a.port_num = 1;
	EXPECT_EQ(EINVAL, ibv_modify_qp(qp, &a, IBV_QP_STATE));
	EXPECT_EQ(IBV_QPS_RESET, sroce_qp_state(qp));
	ASSERT_EQ(0, to_init(qp));

	/* Bad RTR attributes, each leaving the QP in INIT. */
	rtr_attr(&a, &mask, qp->qp_num, &self->gid, self->gid_index);
	a.max_dest_rd_atomic = 17;
	EXPECT_EQ(EINVAL, ibv_modify_qp(qp, &a, mask));
	rtr_attr(&a, &mask, qp->qp_num, &self->gid, self->gid_index);
	a.min_rnr_timer = 32;
	EXPECT_EQ(EINVAL, ibv_modify_qp(qp, &a, mask));
	rtr_attr(&a, &mask, qp->qp_num, &self->gid, self->gid_index);
	a.ah_attr.is_global = 0;	/* RoCE needs a GRH */
	EXPECT_NE(0, ibv_modify_qp(qp, &a, mask));
	rtr_attr(&a, &mask, qp->qp_num, &self->gid, self->gid_index);
	EXPECT_EQ(EINVAL, ibv_modify_qp(qp, &a, mask & ~IBV_QP_AV));
	EXPECT_EQ(IBV_QPS_INIT, sroce_qp_state(qp));

	rtr_attr(&a, &mask, qp->qp_num, &self->gid, self->gid_index);
	ASSERT_EQ(0, ibv_modify_qp(qp, &a, mask));
	/* Bad RTS attributes. */
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.retry_cnt = 8;
	a.rnr_retry = 7;
	a.timeout = 14;
	EXPECT_EQ(EINVAL, ibv_modify_qp(qp, &a, RTS_MASK));
	a.retry_cnt = 7;
	a.timeout = 32;
	EXPECT_EQ(EINVAL, ibv_modify_qp(qp, &a, RTS_MASK));
	EXPECT_EQ(IBV_QPS_RTR, sroce_qp_state(qp));
	ASSERT_EQ(0, to_rts(qp));
	EXPECT_EQ(0, ibv_destroy_qp(qp));
}

TEST_F(qp, error_state_and_back_to_reset)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	struct ibv_qp *qp;
	int mask;

	qp = make_qp(self->pd, self->cq);
	ASSERT_NE(NULL, qp);
	ASSERT_EQ(0, to_init(qp));
	ASSERT_EQ(0, ibv_modify_qp(qp, &a, IBV_QP_STATE));
	EXPECT_EQ(IBV_QPS_ERR, sroce_qp_state(qp));
	/* Only RESET leads out of ERR. */
	EXPECT_EQ(EINVAL, to_init(qp));
	a.qp_state = IBV_QPS_RESET;
	ASSERT_EQ(0, ibv_modify_qp(qp, &a, IBV_QP_STATE));
	EXPECT_EQ(IBV_QPS_RESET, sroce_qp_state(qp));
	/* And the QP is usable again. */
	ASSERT_EQ(0, to_init(qp));
	rtr_attr(&a, &mask, qp->qp_num, &self->gid, self->gid_index);
	ASSERT_EQ(0, ibv_modify_qp(qp, &a, mask));
	ASSERT_EQ(0, to_rts(qp));
	a.qp_state = IBV_QPS_ERR;
	ASSERT_EQ(0, ibv_modify_qp(qp, &a, IBV_QP_STATE));
	EXPECT_EQ(0, ibv_destroy_qp(qp));
}

/* The verbs API refuses sends before RTS and receives in RESET. */
TEST_F(qp, post_before_rts_fails)
{
	struct ibv_send_wr swr = { .opcode = IBV_WR_SEND }, *bad_s;
	struct ibv_recv_wr rwr = {}, *bad_r;
	struct ibv_qp *qp = make_qp(self->pd, self->cq);

	ASSERT_NE(NULL, qp);
	EXPECT_EQ(EINVAL, ibv_post_send(qp, &swr, &bad_s));
	EXPECT_EQ(&swr, bad_s);
	EXPECT_EQ(EINVAL, ibv_post_recv(qp, &rwr, &bad_r));
	ASSERT_EQ(0, to_init(qp));
	EXPECT_EQ(EINVAL, ibv_post_send(qp, &swr, &bad_s));
	EXPECT_EQ(0, ibv_post_recv(qp, &rwr, &bad_r));
	EXPECT_EQ(0, ibv_destroy_qp(qp));
}

/*
 * User QPs post through their rings; the kernel takes no work requests
 * through the post_send/post_recv commands, only empty doorbells.
 */
TEST_F(qp, kernel_refuses_work_request_lists)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_post_send cmd;
		struct ib_uverbs_send_wr wr;
	} req = {};
	struct ib_uverbs_post_send_resp resp = {};
	struct ibv_qp *qp = make_qp(self->pd, self->cq);

	ASSERT_NE(NULL, qp);
	req.hdr.command = IB_USER_VERBS_CMD_POST_SEND;
	req.hdr.in_words = sizeof(req) / 4;
	req.hdr.out_words = sizeof(resp) / 4;
	req.cmd.response = (uintptr_t)&resp;
	req.cmd.qp_handle = qp->handle;
	req.cmd.wr_count = 1;
	req.cmd.wqe_size = sizeof(req.wr);
	req.wr.opcode = IBV_WR_SEND;
	EXPECT_EQ(-EOPNOTSUPP, uverbs_write(self->d.ctx, &req, sizeof(req)));
	req.cmd.wr_count = 0;
	req.hdr.in_words = (sizeof(req) - sizeof(req.wr)) / 4;
	EXPECT_EQ(0, uverbs_write(self->d.ctx, &req,
				  sizeof(req) - sizeof(req.wr)));
	EXPECT_EQ(0, ibv_destroy_qp(qp));
}

/* The send doorbell method (uapi header) on QP @handle: 0 or -errno. */
static int sq_doorbell_method(struct ibv_context *ctx, uint32_t handle)
{
	struct {
		struct ib_uverbs_ioctl_hdr hdr;
		struct ib_uverbs_attr qp;
	} cmd = {
		.hdr = { .length = sizeof(cmd), .object_id = UVERBS_OBJECT_QP,
			 .method_id = SROCE_METHOD_QP_SQ_DOORBELL,
			 .num_attrs = 1 },
		.qp = { .attr_id = SROCE_ATTR_SQ_DOORBELL_QP, .data = handle },
	};

	return ioctl(ctx->cmd_fd, RDMA_VERBS_IOCTL, &cmd) ? -errno : 0;
}

/*
 * The module's own doorbell method rings the QP's send doorbell (counted)
 * and takes the handle of nothing but a QP of the caller's.
 */
TEST_F(qp, sq_doorbell_method)
{
	struct ibv_qp *qp = make_qp(self->pd, self->cq);
	long long before;
	uint32_t handle;

	ASSERT_NE(NULL, qp);
	handle = qp->handle;
	/* Counted on its port's counters once it has a port. */
	ASSERT_EQ(0, to_init(qp));
	before = sroce_counter(self->d.ibdev, "sq_doorbell");
	ASSERT_LE(0, before);
	EXPECT_EQ(0, sq_doorbell_method(self->d.ctx, handle));
	EXPECT_EQ(0, sq_doorbell_method(self->d.ctx, handle));
	usleep(20000);	/* the core keeps counters it read for 10 ms */
	EXPECT_EQ(before + 2, sroce_counter(self->d.ibdev, "sq_doorbell"));
	/* A CQ's handle, a handle of nothing, a destroyed QP's. */
	EXPECT_EQ(-EINVAL, sq_doorbell_method(self->d.ctx, self->cq->handle));
	EXPECT_EQ(-ENOENT, sq_doorbell_method(self->d.ctx, handle + 1000));
	EXPECT_EQ(0, ibv_destroy_qp(qp));
	EXPECT_EQ(-ENOENT, sq_doorbell_method(self->d.ctx, handle));
	usleep(20000);
	EXPECT_EQ(before + 2, sroce_counter(self->d.ibdev, "sq_doorbell"));
}

TEST_F(qp, cq_and_pd_busy_while_qp_exists)
{
	struct ibv_qp *qp = make_qp(self->pd, self->cq);

	ASSERT_NE(NULL, qp);
	EXPECT_EQ(EBUSY, ibv_destroy_cq(self->cq));
	EXPECT_EQ(EBUSY, ibv_dealloc_pd(self->pd));
	EXPECT_EQ(0, ibv_destroy_qp(qp));
}

TEST_F(qp, many_qps_and_close_with_live_ones)
{
	struct ibv_qp *qps[256];
	int i;

	for (i = 0; i < 256; i++) {
		qps[i] = make_qp(self->pd, self->cq);
		ASSERT_NE(NULL, qps[i]) TH_LOG("qp %d: %s", i,
					       strerror(errno));
		if (i % 2)
			ASSERT_EQ(0, to_init(qps[i]));
	}
	for (i = 0; i < 128; i++)
		EXPECT_EQ(0, ibv_destroy_qp(qps[i]));
	/* The rest go with the context. */
	ibv_close_device(self->d.ctx);
	self->d.ctx = NULL;
}

TEST_HARNESS_MAIN
