// SPDX-License-Identifier: GPL-2.0
/*
 * verbs_fuzz: random sequences of verbs calls with random attributes, and
 * raw uverbs commands with random driver data, against one device, from
 * several processes at once, for a bounded time. The kernel must answer
 * every call with a result or an errno; it must not crash, warn, hang or
 * leak (verbs_fuzz.sh checks the log, the device and module unload).
 *
 *   verbs_fuzz DEV SECONDS PROCESSES SEED
 *
 * Each process keeps small pools of objects of every kind and picks an
 * operation at random: create or destroy anything in any order (a PD with
 * live children, a CQ under QPs...), modify QPs to random states with
 * random masks, post random work requests (any opcode, keys and addresses
 * from its own buffer or not), poll, arm, resize, bind windows, attach to
 * multicast groups, and write() raw commands to the uverbs file with
 * random bytes after a valid header. Prints one line per process:
 * "fuzz PID OPS ok OK errno ERR rts QPS_WALKED_TO_RTS" and exits 0 unless
 * a process died.
 */
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <rdma/ib_user_verbs.h>
#include "sroce_test.h"

#define POOL	8
#define BUF_LEN	(64 * 1024)

static uint64_t seed;
static long to_rts;	/* QPs walked into RTS */

static uint64_t rnd(void)
{
	/* xorshift64*: a run is reproducible from the seed it prints. */
	seed ^= seed >> 12;
	seed ^= seed << 25;
	seed ^= seed >> 27;
	return seed * 0x2545f4914f6cdd1dull;
}

/* Mostly small values, sometimes edges, sometimes anything. */
static uint32_t rnd_u32(uint32_t small)
{
	static const uint32_t edges[] = { 0, 1, 0x7fffffff, 0x80000000,
					  0xffffffff, 1u << 15, 1u << 16,
					  (1u << 24) - 1 };

	switch (rnd() % 8) {
	case 0:
		return edges[rnd() % 8];
	case 1:
		return (uint32_t)rnd();
	default:
		return rnd() % (small + 1);
	}
}

struct pools {
	struct ibv_context *ctx;
	struct ibv_pd *pd[POOL];
	struct ibv_cq *cq[POOL];
	struct ibv_qp *qp[POOL];
	struct ibv_mr *mr[POOL];
	struct ibv_mw *mw[POOL];
	struct ibv_ah *ah[POOL];
	struct ibv_srq *srq[POOL];
	char *buf;
	int gid_index;
	union ibv_gid gid;
	long ok, err;
};

#define PICK(arr) ((arr)[rnd() % POOL])

static void count(struct pools *p, int failed)
{
	if (failed)
		p->err++;
	else
		p->ok++;
}

static struct ibv_pd *any_pd(struct pools *p)
{
	struct ibv_pd *pd = PICK(p->pd);

	return pd ? pd : p->pd[0];
}

static void op_pd(struct pools *p)
{
	int i = rnd() % POOL;

	if (!p->pd[i]) {
		p->pd[i] = ibv_alloc_pd(p->ctx);
		count(p, !p->pd[i]);
	} else if (i) {	/* pd[0] stays: the others need one */
		int err = ibv_dealloc_pd(p->pd[i]);

		count(p, err);
		if (!err)
			p->pd[i] = NULL;
	}
}

static void op_cq(struct pools *p)
{
	int i = rnd() % POOL, err;

	if (!p->cq[i]) {
		p->cq[i] = ibv_create_cq(p->ctx, (int)rnd_u32(300), NULL, NULL,
					 (int)rnd_u32(4));
		count(p, !p->cq[i]);
		return;
	}
	switch (rnd() % 4) {
	case 0:
		err = ibv_destroy_cq(p->cq[i]);
		if (!err)
			p->cq[i] = NULL;
		break;
	case 1:
		err = ibv_resize_cq(p->cq[i], (int)rnd_u32(600));
		break;
	case 2:
		err = ibv_req_notify_cq(p->cq[i], rnd() % 2);
		break;
	default: {
		struct ibv_wc wc[8];

		err = ibv_poll_cq(p->cq[i], 8, wc) < 0;
		break;
	}
	}
	count(p, err);
}

/*
 * Half the modifications take a QP one legal step on (RESET, INIT, RTR,
 * RTS) with the attributes of @a, so that traffic, with its random work
 * requests and peers, gets going between the random ones.
 */
static int qp_walk(struct ibv_qp *qp, struct ibv_qp_attr *a)
{
	static const int rc_mask[] = {
		[IBV_QPS_RESET] = IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				  IBV_QP_ACCESS_FLAGS,
		[IBV_QPS_INIT] = IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				 IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				 IBV_QP_MIN_RNR_TIMER,
		[IBV_QPS_RTR] = IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
				IBV_QP_MAX_QP_RD_ATOMIC,
	};
	static const int ud_mask[] = {
		[IBV_QPS_RESET] = IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				  IBV_QP_QKEY,
		[IBV_QPS_INIT] = 0,
		[IBV_QPS_RTR] = IBV_QP_SQ_PSN,
	};
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr cur;

	if (ibv_query_qp(qp, &cur, IBV_QP_STATE, &ia))
		return -1;
	if (cur.qp_state > IBV_QPS_RTR)
		cur.qp_state = IBV_QPS_RESET - 1;	/* back to RESET */
	a->qp_state = cur.qp_state + 1;
	a->port_num = 1;
	a->pkey_index = 0;
	a->max_rd_atomic %= 17;
	a->max_dest_rd_atomic %= 17;
	if (a->qp_state == IBV_QPS_RESET)
		return ibv_modify_qp(qp, a, IBV_QP_STATE);
	if (ibv_modify_qp(qp, a, IBV_QP_STATE |
			  (qp->qp_type == IBV_QPT_UD ? ud_mask :
			   rc_mask)[cur.qp_state]))
		return -1;
	to_rts += a->qp_state == IBV_QPS_RTS;
	return 0;
}

static void op_qp(struct pools *p)
{
	static const enum ibv_qp_type types[] = { IBV_QPT_RC, IBV_QPT_UC,
						  IBV_QPT_UD, IBV_QPT_RAW_PACKET };
	int i = rnd() % POOL, err;

	if (!p->qp[i]) {
		struct ibv_qp_init_attr ia = {
			.send_cq = PICK(p->cq), .recv_cq = PICK(p->cq),
			.srq = rnd() % 4 ? NULL : PICK(p->srq),
			.qp_type = types[rnd() % 4],
			.sq_sig_all = rnd() % 2,
			.cap = { .max_send_wr = rnd_u32(64),
				 .max_recv_wr = rnd_u32(64),
				 .max_send_sge = rnd_u32(8),
				 .max_recv_sge = rnd_u32(8),
				 .max_inline_data = rnd_u32(512) },
		};

		if (!ia.send_cq || !ia.recv_cq)
			return;
		p->qp[i] = ibv_create_qp(any_pd(p), &ia);
		count(p, !p->qp[i]);
		return;
	}
	if (rnd() % 4 == 0 && i > 1) {	/* the anchor pair stays */
		err = ibv_destroy_qp(p->qp[i]);
		if (!err)
			p->qp[i] = NULL;
	} else {
		struct ibv_qp *peer = PICK(p->qp);
		struct ibv_qp_attr a = {
			.qp_state = rnd() % 7, .cur_qp_state = rnd() % 7,
			.path_mtu = 1 + rnd() % 5, .qkey = (uint32_t)rnd(),
			.rq_psn = (uint32_t)rnd(), .sq_psn = (uint32_t)rnd(),
			.dest_qp_num = peer ? peer->qp_num : (uint32_t)rnd(),
			.qp_access_flags = (int)(rnd() & 0x3ff),
			.pkey_index = rnd() % 2, .port_num = 1 + rnd() % 2,
			.max_rd_atomic = rnd() % 20,
			.max_dest_rd_atomic = rnd() % 20,
			.min_rnr_timer = rnd() % 32, .timeout = rnd() % 32,
			.retry_cnt = rnd() % 8, .rnr_retry = rnd() % 8,
			.ah_attr = { .is_global = rnd() % 4 != 0,
				     .port_num = 1,
				     .grh = { .dgid = p->gid,
					      .sgid_index = rnd() % 4 ?
					      p->gid_index : rnd() % 16,
					      .hop_limit = 64 } },
		};

		if (rnd() % 2)
			err = qp_walk(p->qp[i], &a);
		else
			err = ibv_modify_qp(p->qp[i], &a,
					    (int)(rnd() & 0x1fffff));
	}
	count(p, err);
}

static void op_mr(struct pools *p)
{
	int i = 1 + rnd() % (POOL - 1), err;	/* mr[0] stays */

	if (!p->mr[i]) {
		size_t off = rnd() % BUF_LEN, len = rnd_u32(BUF_LEN);
		void *addr = rnd() % 8 ? p->buf + off :
			     (void *)(uintptr_t)rnd();

		p->mr[i] = ibv_reg_mr(any_pd(p), addr, len,
				      (int)(rnd() & 0x1ff));
		count(p, !p->mr[i]);
		return;
	}
	err = ibv_dereg_mr(p->mr[i]);
	if (!err)
		p->mr[i] = NULL;
	count(p, err);
}

static void op_mw(struct pools *p)
{
	struct ibv_qp *qp = PICK(p->qp);
	int i = rnd() % POOL, err;

	if (!p->mw[i]) {
		p->mw[i] = ibv_alloc_mw(any_pd(p), 1 + rnd() % 3);
		count(p, !p->mw[i]);
		return;
	}
	if (rnd() % 2 && qp) {
		struct ibv_mw_bind b = {
			.wr_id = rnd(), .send_flags = (int)(rnd() & 0xf),
			.bind_info = { .mr = PICK(p->mr),
				       .addr = (uintptr_t)p->buf +
					       rnd() % BUF_LEN,
				       .length = rnd_u32(BUF_LEN),
				       .mw_access_flags = (int)(rnd() & 0x1ff) },
		};

		if (!b.bind_info.mr)
			return;
		err = ibv_bind_mw(qp, p->mw[i], &b);
	} else {
		err = ibv_dealloc_mw(p->mw[i]);
		if (!err)
			p->mw[i] = NULL;
	}
	count(p, err);
}

static void op_ah_srq(struct pools *p)
{
	int i = rnd() % POOL, err;

	if (rnd() % 2) {
		if (!p->ah[i]) {
			struct ibv_ah_attr a = {
				.is_global = rnd() % 4 != 0, .port_num = 1,
				.grh = { .dgid = p->gid,
					 .sgid_index = rnd() % 4 ?
						       p->gid_index :
						       rnd() % 16,
					 .hop_limit = 64 },
			};

			if (rnd() % 4 == 0)
				a.grh.dgid.raw[rnd() % 16] = (uint8_t)rnd();
			p->ah[i] = ibv_create_ah(any_pd(p), &a);
			count(p, !p->ah[i]);
			return;
		}
		err = ibv_destroy_ah(p->ah[i]);
		if (!err)
			p->ah[i] = NULL;
	} else {
		if (!p->srq[i]) {
			struct ibv_srq_init_attr a = {
				.attr = { .max_wr = rnd_u32(64),
					  .max_sge = rnd_u32(8),
					  .srq_limit = rnd_u32(64) },
			};

			p->srq[i] = ibv_create_srq(any_pd(p), &a);
			count(p, !p->srq[i]);
			return;
		}
		if (rnd() % 3) {
			struct ibv_srq_attr a = { .max_wr = rnd_u32(64),
						  .srq_limit = rnd_u32(64) };

			err = ibv_modify_srq(p->srq[i], &a, (int)(rnd() % 4));
		} else {
			err = ibv_destroy_srq(p->srq[i]);
			if (!err)
				p->srq[i] = NULL;
		}
	}
	count(p, err);
}

/*
 * A random scatter/gather entry: our buffer and keys, mostly. Only a
 * receive's may point anywhere: the provider copies inline send data
 * itself, and a wild address would fault here, not in the kernel.
 */
static struct ibv_sge rnd_sge(struct pools *p, bool wild)
{
	struct ibv_mr *mr = rnd() % 2 ? p->mr[0] : PICK(p->mr);
	struct ibv_sge s = {
		.addr = (uintptr_t)p->buf + rnd() % (BUF_LEN / 2),
		.length = rnd() % 4 ? rnd() % 4096 : rnd_u32(8192),
		.lkey = mr && rnd() % 4 ? mr->lkey : (uint32_t)rnd(),
	};

	if (wild && rnd() % 8 == 0)
		s.addr = rnd();
	return s;
}

static void op_post(struct pools *p)
{
	struct ibv_qp *qp = rnd() % 2 ? p->qp[rnd() % 2] : PICK(p->qp);
	bool send = rnd() % 3;
	struct ibv_sge sg[4];
	int i, n = rnd() % 5;

	if (!qp)
		return;
	for (i = 0; i < 4; i++)
		sg[i] = rnd_sge(p, !send);
	if (send) {
		struct ibv_mr *mr = rnd() % 2 ? p->mr[0] : PICK(p->mr);
		/* Mostly what a QP can send, so that traffic flows. */
		struct ibv_send_wr wr = {
			.wr_id = rnd(), .sg_list = sg,
			.num_sge = rnd() % 4 ? n % 2 : n,
			.opcode = rnd() % 4 ? rnd() % 7 : rnd() % 16,
			.send_flags = (int)(rnd() & (rnd() % 8 ? 0x7 : 0x1f)),
			.imm_data = (uint32_t)rnd(),
		}, *bad;

		wr.wr.rdma.remote_addr = (uintptr_t)p->buf +
					 (rnd() % (BUF_LEN / 8) & ~7ull);
		wr.wr.rdma.rkey = mr && rnd() % 4 ? mr->rkey : (uint32_t)rnd();
		if (wr.opcode == IBV_WR_SEND && PICK(p->ah)) {
			wr.wr.ud.ah = PICK(p->ah);
			wr.wr.ud.remote_qpn = (uint32_t)rnd() & 0xffffff;
			wr.wr.ud.remote_qkey = (uint32_t)rnd();
		}
		count(p, ibv_post_send(qp, &wr, &bad));
	} else {
		struct ibv_recv_wr wr = { .wr_id = rnd(), .sg_list = sg,
					  .num_sge = n }, *bad;

		count(p, ibv_post_recv(qp, &wr, &bad));
	}
}

static void op_mcast(struct pools *p)
{
	struct ibv_qp *qp = PICK(p->qp);
	union ibv_gid g = { .raw = { 0xff, 0x0e } };

	if (!qp)
		return;
	g.raw[15] = rnd() % 4;
	if (rnd() % 2)
		count(p, ibv_attach_mcast(qp, &g, 0));
	else
		count(p, ibv_detach_mcast(qp, &g, 0));
}

/*
 * A raw legacy uverbs command: a valid header naming a command, then
 * random bytes, with the response pointer (the first word of every
 * command that has one) aimed at a scratch buffer of ours.
 */
static void op_raw(struct pools *p)
{
	static const uint32_t cmds[] = {
		IB_USER_VERBS_CMD_QUERY_DEVICE, IB_USER_VERBS_CMD_QUERY_PORT,
		IB_USER_VERBS_CMD_ALLOC_PD, IB_USER_VERBS_CMD_DEALLOC_PD,
		IB_USER_VERBS_CMD_REG_MR, IB_USER_VERBS_CMD_DEREG_MR,
		IB_USER_VERBS_CMD_CREATE_COMP_CHANNEL,
		IB_USER_VERBS_CMD_CREATE_CQ, IB_USER_VERBS_CMD_RESIZE_CQ,
		IB_USER_VERBS_CMD_DESTROY_CQ, IB_USER_VERBS_CMD_POLL_CQ,
		IB_USER_VERBS_CMD_REQ_NOTIFY_CQ, IB_USER_VERBS_CMD_CREATE_QP,
		IB_USER_VERBS_CMD_QUERY_QP, IB_USER_VERBS_CMD_MODIFY_QP,
		IB_USER_VERBS_CMD_DESTROY_QP, IB_USER_VERBS_CMD_POST_SEND,
		IB_USER_VERBS_CMD_POST_RECV, IB_USER_VERBS_CMD_CREATE_AH,
		IB_USER_VERBS_CMD_DESTROY_AH, IB_USER_VERBS_CMD_ATTACH_MCAST,
		IB_USER_VERBS_CMD_DETACH_MCAST, IB_USER_VERBS_CMD_CREATE_SRQ,
		IB_USER_VERBS_CMD_MODIFY_SRQ, IB_USER_VERBS_CMD_QUERY_SRQ,
		IB_USER_VERBS_CMD_DESTROY_SRQ, IB_USER_VERBS_CMD_POST_SRQ_RECV,
		IB_USER_VERBS_CMD_ALLOC_MW, IB_USER_VERBS_CMD_DEALLOC_MW,
	};
	static uint64_t scratch[512];
	uint32_t words[256];
	unsigned int in_words = 4 + rnd() % 60, i;
	uint64_t ptr;
	struct ib_uverbs_cmd_hdr *h = (void *)words;

	for (i = 0; i < in_words; i++)
		words[i] = rnd() % 4 ? (uint32_t)rnd() : rnd() % 16;
	h->command = cmds[rnd() % ARRAY_SIZE(cmds)];
	h->in_words = in_words;
	h->out_words = rnd() % 64;
	ptr = (uintptr_t)scratch;
	memcpy(&words[2], &ptr, sizeof(ptr));
	count(p, write(p->ctx->cmd_fd, words, in_words * 4) < 0);
}

/* A RoCE v2 GID of the device (index 0 if it has none yet). */
static int find_gid(struct pools *p)
{
	int idx = sroce_find_gid(p->ctx, AF_UNSPEC, NULL, 0, &p->gid);

	return idx < 0 ? 0 : idx;
}

/*
 * Connect pool slots 0 and 1 to each other again, from whatever state the
 * random operations left them in (errors fail them often).
 */
static void op_revive(struct pools *p)
{
	struct ibv_qp_attr a = {
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_ATOMIC,
		.path_mtu = IBV_MTU_1024, .max_dest_rd_atomic = 4,
		.max_rd_atomic = 4, .timeout = 10, .retry_cnt = 1,
		.rnr_retry = 1, .min_rnr_timer = 1,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .dgid = p->gid,
				      .sgid_index = p->gid_index,
				      .hop_limit = 64 } },
	};
	struct ibv_qp_attr reset = { .qp_state = IBV_QPS_RESET };
	int i, steps;

	if (!p->qp[0] || !p->qp[1] || p->qp[0]->qp_type != IBV_QPT_RC ||
	    p->qp[1]->qp_type != IBV_QPT_RC)
		return;
	for (i = 0; i < 2; i++) {
		count(p, ibv_modify_qp(p->qp[i], &reset, IBV_QP_STATE));
		a.dest_qp_num = p->qp[!i]->qp_num;
		for (steps = 0; steps < 3 && !qp_walk(p->qp[i], &a); steps++)
			;
	}
}

/*
 * Pool slots 0 and 1 start as an RC pair connected to each other on pd[0],
 * with a region on pd[0] in mr[0], so that the random work requests find
 * QPs that send. The random operations may modify them (op_revive
 * connects them again), but not destroy them or the region.
 */
static void anchor_pair(struct pools *p)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 64, .max_recv_wr = 64,
			 .max_send_sge = 4, .max_recv_sge = 4 },
	};
	int i;

	p->cq[0] = ibv_create_cq(p->ctx, 256, NULL, NULL, 0);
	p->mr[0] = ibv_reg_mr(p->pd[0], p->buf, BUF_LEN,
			      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			      IBV_ACCESS_REMOTE_READ |
			      IBV_ACCESS_REMOTE_ATOMIC);
	if (!p->cq[0])
		return;
	ia.send_cq = p->cq[0];
	ia.recv_cq = p->cq[0];
	for (i = 0; i < 2; i++)
		p->qp[i] = ibv_create_qp(p->pd[0], &ia);
	if (!p->qp[0] || !p->qp[1])
		return;
	op_revive(p);
}

static int fuzz_process(const char *dev, int secs)
{
	static void (*const ops[])(struct pools *) = {
		op_pd, op_cq, op_cq, op_qp, op_qp, op_qp, op_mr, op_mw,
		op_ah_srq, op_post, op_post, op_post, op_post, op_post,
		op_mcast, op_raw, op_revive,
	};
	struct pools p = {};
	time_t end = time(NULL) + secs;
	long n = 0;

	p.ctx = open_by_name(dev);
	if (!p.ctx)
		return 1;
	p.buf = mmap(NULL, BUF_LEN, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	p.pd[0] = ibv_alloc_pd(p.ctx);
	if (p.buf == MAP_FAILED || !p.pd[0])
		return 1;
	p.gid_index = find_gid(&p);
	anchor_pair(&p);
	while (time(NULL) < end) {
		ops[rnd() % ARRAY_SIZE(ops)](&p);
		n++;
	}
	printf("fuzz %d ops %ld ok %ld errno %ld rts %ld\n", getpid(), n, p.ok,
	       p.err, to_rts);
	fflush(stdout);
	/* Half the processes clean up; the rest leave it to the kernel. */
	if (rnd() % 2)
		_exit(0);
	for (n = 0; n < POOL; n++) {
		if (p.qp[n])
			ibv_destroy_qp(p.qp[n]);
		if (p.mw[n])
			ibv_dealloc_mw(p.mw[n]);
		if (p.ah[n])
			ibv_destroy_ah(p.ah[n]);
	}
	for (n = 0; n < POOL; n++) {
		if (p.srq[n])
			ibv_destroy_srq(p.srq[n]);
		if (p.mr[n])
			ibv_dereg_mr(p.mr[n]);
		if (p.cq[n])
			ibv_destroy_cq(p.cq[n]);
	}
	for (n = POOL - 1; n >= 0; n--)
		if (p.pd[n])
			ibv_dealloc_pd(p.pd[n]);
	ibv_close_device(p.ctx);
	return 0;
}

int main(int argc, char **argv)
{
	int secs, procs, i, status, bad = 0;
	pid_t pid;

	if (argc != 5) {
		fprintf(stderr, "usage: %s DEV SECONDS PROCESSES SEED\n",
			argv[0]);
		return 64;
	}
	secs = atoi(argv[2]);
	procs = atoi(argv[3]);
	for (i = 0; i < procs; i++) {
		pid = fork();
		if (pid < 0)
			return 1;
		if (!pid) {
			seed = strtoull(argv[4], NULL, 0) * 0x9e3779b97f4a7c15ull +
			       i + 1;
			return fuzz_process(argv[1], secs);
		}
	}
	while ((pid = wait(&status)) > 0) {
		if (WIFSIGNALED(status) || WEXITSTATUS(status)) {
			fprintf(stderr, "process %d: %s %d\n", pid,
				WIFSIGNALED(status) ? "signal" : "exit",
				WIFSIGNALED(status) ? WTERMSIG(status) :
						      WEXITSTATUS(status));
			bad++;
		}
	}
	return bad ? 1 : 0;
}
