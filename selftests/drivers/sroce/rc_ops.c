// SPDX-License-Identifier: GPL-2.0
/*
 * RC data path selftests: every RC operation between two queue pairs, the
 * data checked byte for byte (and the bytes around it left alone), every
 * completion field the verbs define for the operation, the extended post
 * and poll APIs, and the IBA error paths with the state they leave behind.
 *
 * Only standard libibverbs is used, so the same binary runs on any RoCE
 * device, rdma_rxe included. Environment:
 *
 *   SROCE_DEV_A, SROCE_GID_A   requester's device and GID index
 *   SROCE_DEV_B, SROCE_GID_B   responder's (default: the same as A, which
 *                              is loopback between two QPs of one device)
 *   SROCE_MTU                  path MTU in bytes (default: the smaller
 *                              active MTU of the two ports)
 *   SROCE_SKIP_MAX_MSG=1       skip max_msg_size, which needs max_msg_sz
 *                              bytes of memory (1 GiB on sroce)
 *
 * A missing GID index means the device's first RoCE v2 GID, IPv4 ones
 * first. Without SROCE_DEV_A every test makes its own sroce device on a
 * veth with a 198.18.x.1 address (loopback over IPv4), and skips when the
 * sroce module is not available.
 *
 * Side A sends and side B receives unless a test says otherwise. Each side
 * has one buffer registered with every access right: random bytes in the
 * first half, FILL in the second half, where data lands.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <endian.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>
#include <time.h>

#include "kselftest_harness.h"
#include "sroce_test.h"

#define BUF_SIZE	(4u << 20)
#define DST		(2u << 20)	/* offset of the landing half */
#define FILL		0x5a
#define GUARD		64		/* bytes checked around landed data */
#define QP_DEPTH	256
#define QP_SGE		4
#define QP_INLINE	64
#define WC_MS		20000		/* wait for a completion, TCG is slow */
#define QUIET_MS	200		/* "no completion" means none in this */
#define T_SECS		120		/* per test, for the harness */

/* Default connection attributes. */
#define TIMEOUT		14
#define RETRY_CNT	7
#define RNR_RETRY	7
#define MIN_RNR_TIMER	12		/* 0.64 ms */
#define RD_ATOMIC	16
#define PSN_A		0x1a2b3c	/* A's send PSN = B's receive PSN */
#define PSN_B		0x0c0ffe
#define ALL_ACCESS	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

struct side {
	struct ibv_context *ctx;
	struct ibv_device_attr dev;
	struct ibv_port_attr port;
	int gid_index;
	union ibv_gid gid;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	char *buf;
};

/* Two connected QPs, one per side, each with its own CQ. */
struct pair {
	struct ibv_cq *cq[2];
	struct ibv_cq_ex *cqx[2];	/* set when made with the ex API */
	struct ibv_qp *qp[2];
	uint32_t max_inline;
};

/* What a pair is connected with; zero means the default. */
struct conn {
	uint8_t timeout;
	uint8_t retry_cnt;
	bool rnr_retry_zero;		/* rnr_retry 0 instead of 7 */
	uint32_t psn_a;
	uint32_t psn_b;
	struct ibv_comp_channel *chan_b;
	bool ex;			/* ibv_create_{cq,qp}_ex on side A */
	struct ibv_srq *srq_b;		/* side B receives through this SRQ */
	bool uc;			/* unreliable connected instead of RC */
};

FIXTURE(rc) {
	struct sroce_tdev d;
	bool own;			/* d is ours, made by the setup */
	struct side s[2];
	enum ibv_mtu mtu;
	uint32_t mtu_bytes;
	struct pair p;			/* the default pair, connected */
	struct pair q;			/* a test's own pair */
	struct ibv_comp_channel *chan;	/* a test's channel */
};

/* The fixture's type, for the helpers. */
typedef FIXTURE_DATA(rc) rc_fixture;

/* ---------------------------------------------------------- helpers */

static uint32_t min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ull + ts.tv_nsec / 1000000;
}

/* Pseudo-random bytes, different for each seed. */
static void fill_random(void *p, size_t len, uint32_t seed)
{
	unsigned char *c = p;
	uint32_t x = seed * 2654435761u | 1;
	size_t i;

	for (i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		c[i] = x >> 24;
	}
}

/* Offset of the first byte where @a and @b differ, or -1. */
static long first_diff(const void *a, const void *b, size_t len)
{
	const unsigned char *x = a, *y = b;
	size_t i;

	if (!memcmp(a, b, len))
		return -1;
	for (i = 0; i < len; i++)
		if (x[i] != y[i])
			return i;
	return -1;
}

/* Offset of the first byte in @p that is not @c, or -1. */
static long first_not(const void *p, int c, size_t len)
{
	const unsigned char *x = p;
	size_t i;

	for (i = 0; i < len; i++)
		if (x[i] != (unsigned char)c)
			return i;
	return -1;
}

static void check_mem(struct __test_metadata *_metadata, const char *what,
		      const void *got, const void *want, size_t len)
{
	long off = first_diff(got, want, len);

	EXPECT_EQ(-1, off) TH_LOG("%s: data differs at byte %ld of %zu: %#x, want %#x",
				  what, off, len,
				  off < 0 ? 0 : ((unsigned char *)got)[off],
				  off < 0 ? 0 : ((unsigned char *)want)[off]);
}

static void check_untouched(struct __test_metadata *_metadata,
			    const char *what, const void *p, size_t len)
{
	long off = first_not(p, FILL, len);

	EXPECT_EQ(-1, off) TH_LOG("%s: byte %ld of %zu overwritten (%#x)",
				  what, off, len,
				  off < 0 ? 0 : ((unsigned char *)p)[off]);
}

/* @len bytes of @want landed at @dst, the GUARD bytes around stayed FILL. */
static void check_landed(struct __test_metadata *_metadata, const char *what,
			 const char *dst, const void *want, size_t len)
{
	check_mem(_metadata, what, dst, want, len);
	check_untouched(_metadata, what, dst - GUARD, GUARD);
	check_untouched(_metadata, what, dst + len, GUARD);
}

static struct ibv_sge sge(struct side *s, size_t off, uint32_t len)
{
	return (struct ibv_sge){ .addr = (uintptr_t)s->buf + off,
				 .length = len, .lkey = s->mr->lkey };
}

static uint64_t raddr(struct side *s, size_t off)
{
	return (uintptr_t)s->buf + off;
}

static int post_recv(struct ibv_qp *qp, uint64_t wr_id, struct ibv_sge *sg,
		     int nsge)
{
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = sg,
				  .num_sge = nsge }, *bad;

	return ibv_post_recv(qp, &wr, &bad);
}

/* One send-queue WR: SEND, WRITE or READ, with or without immediate. */
static int post_wr(struct ibv_qp *qp, enum ibv_wr_opcode op, uint64_t wr_id,
		   unsigned int flags, struct ibv_sge *sg, int nsge,
		   uint64_t rva, uint32_t rkey, uint32_t imm)
{
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = sg, .num_sge = nsge, .opcode = op,
		.send_flags = flags, .imm_data = htobe32(imm),
		.wr.rdma = { .remote_addr = rva, .rkey = rkey },
	}, *bad;

	return ibv_post_send(qp, &wr, &bad);
}

/* The same, signaled. */
static int post_op(struct ibv_qp *qp, enum ibv_wr_opcode op, uint64_t wr_id,
		   struct ibv_sge *sg, int nsge, uint64_t rva, uint32_t rkey,
		   uint32_t imm)
{
	return post_wr(qp, op, wr_id, IBV_SEND_SIGNALED, sg, nsge, rva, rkey,
		       imm);
}

static int post_atomic(struct ibv_qp *qp, enum ibv_wr_opcode op,
		       uint64_t wr_id, struct ibv_sge *sg, uint64_t rva,
		       uint32_t rkey, uint64_t compare_add, uint64_t swap)
{
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = sg, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.atomic = { .remote_addr = rva, .rkey = rkey,
			       .compare_add = compare_add, .swap = swap },
	}, *bad;

	return ibv_post_send(qp, &wr, &bad);
}

/* Poll one completion within @ms: 1 got one, 0 none, -1 poll failed. */
static int wait_wc(struct ibv_cq *cq, struct ibv_wc *wc, int ms)
{
	uint64_t end = now_ms() + ms;
	int n;

	for (;;) {
		n = ibv_poll_cq(cq, 1, wc);
		if (n)
			return n < 0 ? -1 : 1;
		if (now_ms() > end)
			return 0;
		usleep(50);
	}
}

/* The completion a test expects; zero fields mean SUCCESS, no imm. */
struct want {
	uint64_t wr_id;
	enum ibv_wc_status status;
	enum ibv_wc_opcode opcode;
	uint32_t qp_num;
	bool check_len;
	uint32_t byte_len;
	bool imm;
	uint32_t imm_data;		/* host order, as posted */
	int ms;				/* wait, 0 = WC_MS */
};

/*
 * The wc_flags a receive completion must have exactly as expected. The
 * others (IBV_WC_GRH is for UD, IBV_WC_IP_CSUM_OK for raw packets) and
 * all flags of send-side completions mean nothing on RC.
 */
#define WC_FLAGS_CHECKED (IBV_WC_WITH_IMM | IBV_WC_WITH_INV)
#define WANT(...)	(&(struct want){ __VA_ARGS__ })
#define QPN(p, i)	((p)->qp[i]->qp_num)

/*
 * Check a completion against @w. Only the status, wr_id and qp_num of an
 * error completion are defined; byte_len only where the verbs define it
 * (receives, READ, atomics), wc_flags and imm_data only for receives.
 */
static void match_wc(struct __test_metadata *_metadata, const char *what,
		     const struct ibv_wc *wc, const struct want *w)
{
	bool ok = wc->status == w->status && wc->wr_id == w->wr_id &&
		  wc->qp_num == w->qp_num;

	if (ok && w->status == IBV_WC_SUCCESS)
		ok = wc->opcode == w->opcode &&
		     (!w->check_len || wc->byte_len == w->byte_len);
	if (ok && w->status == IBV_WC_SUCCESS && (w->opcode & IBV_WC_RECV))
		ok = (wc->wc_flags & WC_FLAGS_CHECKED) ==
		     (w->imm ? IBV_WC_WITH_IMM : 0) &&
		     (!w->imm || wc->imm_data == htobe32(w->imm_data));
	EXPECT_TRUE(ok) {
		TH_LOG("%s: got  %s (%d) wr_id %#llx qp %u vendor_err %#x",
		       what, ibv_wc_status_str(wc->status), wc->status,
		       (unsigned long long)wc->wr_id, wc->qp_num,
		       wc->vendor_err);
		TH_LOG("%s: got  opcode %d byte_len %u wc_flags %#x imm %#x",
		       what, wc->opcode, wc->byte_len, wc->wc_flags,
		       be32toh(wc->imm_data));
		TH_LOG("%s: want %s (%d) wr_id %#llx qp %u", what,
		       ibv_wc_status_str(w->status), w->status,
		       (unsigned long long)w->wr_id, w->qp_num);
		TH_LOG("%s: want opcode %d byte_len %s%u imm %s%#x", what,
		       w->opcode, w->check_len ? "" : "any, not ",
		       w->byte_len, w->imm ? "" : "none, not ", w->imm_data);
	}
}

/* Wait for the next completion on @cq and check it. */
static void check_wc(struct __test_metadata *_metadata, const char *what,
		     struct ibv_cq *cq, const struct want *w)
{
	struct ibv_wc wc;
	int got;

	memset(&wc, 0, sizeof(wc));
	got = wait_wc(cq, &wc, w->ms ?: WC_MS);
	ASSERT_EQ(1, got) TH_LOG("%s: %s (want wr_id %#llx, %s)", what,
				 got ? "ibv_poll_cq failed" : "no completion",
				 (unsigned long long)w->wr_id,
				 ibv_wc_status_str(w->status));
	match_wc(_metadata, what, &wc, w);
}

static void check_no_wc(struct __test_metadata *_metadata, const char *what,
			struct ibv_cq *cq)
{
	struct ibv_wc wc;
	int got = wait_wc(cq, &wc, QUIET_MS);

	EXPECT_EQ(0, got) TH_LOG("%s: unexpected completion: status %s wr_id %#llx opcode %d",
				 what, ibv_wc_status_str(wc.status),
				 (unsigned long long)wc.wr_id, wc.opcode);
}

static int qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &init))
		return -1;
	return a.qp_state;
}

/* The QP reaches @state within a second (error transitions may lag). */
static int wait_state(struct ibv_qp *qp, int state)
{
	uint64_t end = now_ms() + 1000;
	int st;

	while ((st = qp_state(qp)) != state && now_ms() < end)
		usleep(1000);
	return st;
}

/* ------------------------------------------------------ making pairs */

static struct ibv_cq *make_cq(struct side *s, struct ibv_comp_channel *ch,
			      struct ibv_cq_ex **cqx)
{
	struct ibv_cq_init_attr_ex ax = {
		.cqe = 2 * QP_DEPTH, .cq_context = s, .channel = ch,
		.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM |
			    IBV_WC_EX_WITH_QP_NUM,
	};

	if (!cqx)
		return ibv_create_cq(s->ctx, 2 * QP_DEPTH, s, ch, 0);
	*cqx = ibv_create_cq_ex(s->ctx, &ax);
	return *cqx ? ibv_cq_ex_to_cq(*cqx) : NULL;
}

/*
 * An RC QP with room for every test; the extended one can post with the
 * ibv_wr_*() API. *@max_inline gets the inline size granted.
 */
static struct ibv_qp *make_qp(struct side *s, struct ibv_cq *cq, bool ex,
			      uint32_t *max_inline, struct ibv_srq *srq,
			      bool uc)
{
	struct ibv_qp_init_attr_ex ax = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = QP_DEPTH, .max_recv_wr = QP_DEPTH,
			 .max_send_sge = QP_SGE, .max_recv_sge = QP_SGE,
			 .max_inline_data = QP_INLINE },
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = s->pd,
		.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE |
				  IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
				  IBV_QP_EX_WITH_SEND |
				  IBV_QP_EX_WITH_RDMA_READ |
				  IBV_QP_EX_WITH_ATOMIC_WRITE |
				  IBV_QP_EX_WITH_BIND_MW |
				  IBV_QP_EX_WITH_LOCAL_INV |
				  IBV_QP_EX_WITH_SEND_WITH_INV,
	};
	struct ibv_qp_init_attr a = {
		.send_cq = cq, .recv_cq = cq,
		.qp_type = uc ? IBV_QPT_UC : IBV_QPT_RC,
		.cap = ax.cap, .srq = srq,
	};
	struct ibv_qp *qp;

	if (ex) {
		qp = ibv_create_qp_ex(s->ctx, &ax);
		*max_inline = ax.cap.max_inline_data;
	} else {
		qp = ibv_create_qp(s->pd, &a);
		*max_inline = a.cap.max_inline_data;
	}
	return qp;
}

static int to_rtr(struct ibv_qp *qp, struct side *me, struct side *peer,
		  uint32_t dest_qpn, uint32_t rq_psn, enum ibv_mtu mtu)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = mtu,
		.dest_qp_num = dest_qpn,
		.rq_psn = rq_psn,
		.max_dest_rd_atomic = min_u32(me->dev.max_qp_rd_atom,
					      RD_ATOMIC),
		.min_rnr_timer = MIN_RNR_TIMER,
		.ah_attr = {
			.is_global = 1,
			.grh = { .dgid = peer->gid,
				 .sgid_index = me->gid_index,
				 .hop_limit = 64 },
			.port_num = 1,
		},
	};

	/* UC has no reads, atomics or RNR: fewer attributes. */
	if (qp->qp_type == IBV_QPT_UC)
		return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV |
				     IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				     IBV_QP_RQ_PSN);
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV |
			     IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			     IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			     IBV_QP_MIN_RNR_TIMER);
}

static int to_rts(struct ibv_qp *qp, struct side *me, uint32_t sq_psn,
		  const struct conn *c)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTS,
		.sq_psn = sq_psn,
		.timeout = c->timeout ?: TIMEOUT,
		.retry_cnt = c->retry_cnt ?: RETRY_CNT,
		.rnr_retry = c->rnr_retry_zero ? 0 : RNR_RETRY,
		.max_rd_atomic = min_u32(me->dev.max_qp_init_rd_atom,
					 RD_ATOMIC),
	};

	if (qp->qp_type == IBV_QPT_UC)
		return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			     IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			     IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
}

static void pair_down(struct pair *p)
{
	int i;

	for (i = 0; i < 2; i++) {
		if (p->qp[i])
			ibv_destroy_qp(p->qp[i]);
		if (p->cq[i])
			ibv_destroy_cq(p->cq[i]);
	}
	memset(p, 0, sizeof(*p));
}

/*
 * Create and connect a pair: QP 0 on side A, QP 1 on side B. Returns
 * NULL, or the step that failed (errno tells why).
 */
static const char *pair_up(rc_fixture *self, struct pair *p,
			   const struct conn *c)
{
	static const struct conn dflt;
	struct side *a = &self->s[0], *b = &self->s[1];
	uint32_t psn_a, psn_b, inl;
	int i;

	memset(p, 0, sizeof(*p));
	c = c ?: &dflt;
	psn_a = c->psn_a ?: PSN_A;
	psn_b = c->psn_b ?: PSN_B;
	for (i = 0; i < 2; i++) {
		p->cq[i] = make_cq(&self->s[i], i ? c->chan_b : NULL,
				   c->ex ? &p->cqx[i] : NULL);
		if (!p->cq[i])
			return c->ex ? "ibv_create_cq_ex" : "ibv_create_cq";
		p->qp[i] = make_qp(&self->s[i], p->cq[i], c->ex && !i, &inl,
				   i ? c->srq_b : NULL, c->uc);
		if (!p->qp[i])
			return c->ex && !i ? "ibv_create_qp_ex" :
			       "ibv_create_qp";
		if (!i)
			p->max_inline = inl;
	}
	if (to_init(p->qp[0]) || to_init(p->qp[1]))
		return "modify to INIT";
	if (to_rtr(p->qp[0], a, b, QPN(p, 1), psn_b, self->mtu) ||
	    to_rtr(p->qp[1], b, a, QPN(p, 0), psn_a, self->mtu))
		return "modify to RTR";
	if (to_rts(p->qp[0], a, psn_a, c) || to_rts(p->qp[1], b, psn_b, c))
		return "modify to RTS";
	return NULL;
}

#define PAIR_UP(p, c) do { \
	const char *__step = pair_up(self, p, c); \
	ASSERT_EQ(NULL, __step) TH_LOG("%s: %s", __step, strerror(errno)); \
} while (0)

/* ------------------------------------------------------------ fixture */

/*
 * The GID index to use on @ctx: @env if given, else the first RoCE v2
 * GID, IPv4 ones first. With @v4_wait, wait up to 5 s for an IPv4 one
 * (the core adds GIDs from a workqueue). -1 if there is none.
 */
static int pick_gid(struct ibv_context *ctx, const char *env, bool v4_wait,
		    union ibv_gid *gid)
{
	struct ibv_gid_entry e[64];
	int tries, idx;
	ssize_t n, i;

	if (env) {
		if (ibv_query_gid_ex(ctx, 1, atoi(env), &e[0], 0))
			return -1;
		*gid = e[0].gid;
		return e[0].gid_index;
	}
	for (tries = 0; tries < 100; tries++) {
		n = ibv_query_gid_table(ctx, e, 64, 0);
		idx = -1;
		for (i = n - 1; i >= 0; i--) {
			if (e[i].port_num != 1 ||
			    e[i].gid_type != IBV_GID_TYPE_ROCE_V2)
				continue;
			if (idx < 0 || sroce_gid_is_v4(&e[i].gid) ||
			    !sroce_gid_is_v4(&e[idx].gid))
				idx = i;
		}
		if (idx >= 0 && (!v4_wait || sroce_gid_is_v4(&e[idx].gid))) {
			*gid = e[idx].gid;
			return e[idx].gid_index;
		}
		if (!v4_wait)
			break;
		usleep(50000);
	}
	return -1;
}

static int env_mtu(const char *env, enum ibv_mtu *mtu)
{
	int bytes = atoi(env), m;

	for (m = IBV_MTU_256; m <= IBV_MTU_4096; m++)
		if (bytes == 128 << m) {
			*mtu = m;
			return 0;
		}
	return -1;
}

/* Open, query and set up one side; NULL or what failed. */
static const char *side_up(struct side *s, const char *name,
			   const char *gid_env, bool own, int seed)
{
	if (!s->ctx)
		s->ctx = open_by_name(name);
	if (!s->ctx)
		return "cannot open the device (is its provider installed?)";
	if (ibv_query_device(s->ctx, &s->dev) ||
	    ibv_query_port(s->ctx, 1, &s->port))
		return "cannot query the device";
	if (s->port.state != IBV_PORT_ACTIVE)
		return "port 1 is not active";
	s->gid_index = pick_gid(s->ctx, gid_env, own, &s->gid);
	if (s->gid_index < 0)
		return "no usable RoCE v2 GID (set SROCE_GID_A/B)";
	s->pd = ibv_alloc_pd(s->ctx);
	if (!s->pd)
		return "ibv_alloc_pd";
	s->buf = mmap(NULL, BUF_SIZE, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (s->buf == MAP_FAILED) {
		s->buf = NULL;
		return "mmap";
	}
	fill_random(s->buf, DST, seed);
	memset(s->buf + DST, FILL, BUF_SIZE - DST);
	s->mr = ibv_reg_mr(s->pd, s->buf, BUF_SIZE, ALL_ACCESS);
	return s->mr ? NULL : "ibv_reg_mr";
}

/* 0 ready, -1 skip, -2 failure; @why says what happened. */
static int rc_prepare(rc_fixture *self, const char **why)
{
	const char *dev_a = getenv("SROCE_DEV_A");
	const char *dev_b = getenv("SROCE_DEV_B");
	const char *gid_a = getenv("SROCE_GID_A");
	const char *gid_b = getenv("SROCE_GID_B");
	const char *mtu = getenv("SROCE_MTU");
	char path[128], ip4[32];
	int i, ret;

	if (!dev_a) {
		/* Our own sroce device, loopback over IPv4. */
		self->own = true;
		ret = sroce_tdev_up(&self->d, "r", why);
		if (ret) {
			self->own = ret != -1;
			return ret;
		}
		snprintf(ip4, sizeof(ip4), "198.18.%d.1", getpid() % 250);
		*why = "cannot add an IPv4 address to the veth";
		if (sh("ip addr add %s/24 dev %s", ip4, self->d.veth))
			return -2;
		dev_a = self->d.ibdev;
		self->s[0].ctx = self->d.ctx;
		self->d.ctx = NULL;
	}
	if (!dev_b || !strcmp(dev_b, dev_a)) {
		dev_b = dev_a;
		gid_b = gid_b ?: gid_a;
	}
	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "/sys/class/infiniband/%s",
			 i ? dev_b : dev_a);
		if (access(path, F_OK)) {
			*why = "no such RDMA device (SROCE_DEV_A/B)";
			return -1;
		}
		*why = side_up(&self->s[i], i ? dev_b : dev_a,
			       i ? gid_b : gid_a, self->own, i + 1);
		if (*why)
			return -2;
	}
	self->mtu = self->s[0].port.active_mtu < self->s[1].port.active_mtu ?
		    self->s[0].port.active_mtu : self->s[1].port.active_mtu;
	*why = "SROCE_MTU must be 256, 512, 1024, 2048 or 4096";
	if (mtu && env_mtu(mtu, &self->mtu))
		return -2;
	self->mtu_bytes = 128 << self->mtu;
	*why = pair_up(self, &self->p, NULL);
	return *why ? -2 : 0;
}

static void rc_cleanup(rc_fixture *self)
{
	int i;

	pair_down(&self->q);
	pair_down(&self->p);
	if (self->chan)
		ibv_destroy_comp_channel(self->chan);
	self->chan = NULL;
	for (i = 0; i < 2; i++) {
		struct side *s = &self->s[i];

		if (s->mr)
			ibv_dereg_mr(s->mr);
		if (s->buf)
			munmap(s->buf, BUF_SIZE);
		if (s->pd)
			ibv_dealloc_pd(s->pd);
		if (s->ctx)
			ibv_close_device(s->ctx);
		memset(s, 0, sizeof(*s));
	}
	if (self->own)
		sroce_tdev_down(&self->d);
	self->own = false;
}

FIXTURE_TEARDOWN(rc)
{
	rc_cleanup(self);
}

FIXTURE_SETUP(rc)
{
	const char *why = NULL;
	int ret = rc_prepare(self, &why);

	if (ret == -1)
		SKIP(return, "%s", why);
	if (ret) {
		int err = errno;

		rc_cleanup(self);
		ASSERT_EQ(0, ret) TH_LOG("setup: %s (%s)", why, strerror(err));
	}
}

/* ------------------------------------------------------ basic operations */

#define A_	(&self->s[0])
#define B_	(&self->s[1])
#define P_	(&self->p)

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

static bool no_atomics(struct side *s)
{
	return s->dev.atomic_cap == IBV_ATOMIC_NONE;
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
	uint64_t end = now_ms() + ms;
	int got = 0, ret;

	while (got < n) {
		ret = ibv_start_poll(cq, &attr);
		if (ret == ENOENT) {
			if (now_ms() > end)
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
	n = poll_ex(q->cqx[0], wc, 2, 2000);
	ASSERT_EQ(1, n) TH_LOG("after an abort");
	match_wc(_metadata, "ex WRITE after an abort", &wc[0],
		 WANT(.wr_id = 6, .opcode = IBV_WC_RDMA_WRITE,
		      .qp_num = QPN(q, 0)));
	check_untouched(_metadata, "aborted WRITE", B_->buf + DST + 65536,
			100);
	check_landed(_metadata, "ex WRITE after an abort",
		     B_->buf + DST + 98304, A_->buf, 100);
}

/* ----------------------------------------------------- message size */

/*
 * A source of @len bytes that costs little memory: a memfd of ALIAS_PAGES
 * pages mapped over and over. The page count is prime so that data put
 * at a wrong offset cannot match by chance unless the error is a multiple
 * of the whole chunk.
 */
#define ALIAS_PAGES 509

struct alias {
	char *base;
	size_t len;			/* mapped, whole pages */
	size_t chunk;			/* bytes, repeated from base */
};

static int alias_map(struct alias *al, size_t len)
{
	size_t pg = sysconf(_SC_PAGESIZE), off, n;
	int fd, ret = -1;

	al->chunk = ALIAS_PAGES * pg;
	al->len = (len + pg - 1) / pg * pg;
	al->base = mmap(NULL, al->len, PROT_NONE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (al->base == MAP_FAILED)
		return -1;
	fd = memfd_create("rc_ops", 0);
	if (fd < 0 || ftruncate(fd, al->chunk))
		goto out;
	for (off = 0; off < al->len; off += al->chunk) {
		n = al->len - off < al->chunk ? al->len - off : al->chunk;
		if (mmap(al->base + off, n, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED)
			goto out;
	}
	ret = 0;
out:
	if (fd >= 0)
		close(fd);
	return ret;
}

/* @len bytes at @p hold the alias pattern; offset of a wrong byte or -1. */
static long alias_diff(const struct alias *al, const char *p, size_t len)
{
	size_t off, n;
	long d;

	for (off = 0; off < len; off += n) {
		n = len - off < al->chunk ? len - off : al->chunk;
		d = first_diff(p + off, al->base, n);
		if (d >= 0)
			return off + d;
	}
	return -1;
}

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
 * A message of exactly the port's max_msg_sz, as SEND, WRITE and READ.
 * The sender's side is an alias mapping; the landing buffer is real
 * memory, which SROCE_SKIP_MAX_MSG=1 avoids.
 */
TEST_F_TIMEOUT(rc, max_msg_size, 1800)
{
	uint64_t max = A_->port.max_msg_sz < B_->port.max_msg_sz ?
		       A_->port.max_msg_sz : B_->port.max_msg_sz;
	struct ibv_mr *amr, *bmr;
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
			ASSERT_EQ(0, post_recv(P_->qp[1], 0x11, &r, 1));
			ASSERT_EQ(0, post_op(P_->qp[0], IBV_WR_SEND, 0x22, &s,
					     1, 0, 0, 0));
			check_wc(_metadata, "max SEND", P_->cq[1],
				 WANT(.wr_id = 0x11, .opcode = IBV_WC_RECV,
				      .qp_num = QPN(P_, 1), .check_len = true,
				      .byte_len = max, .ms = MAX_MSG_MS));
			check_wc(_metadata, "max SEND", P_->cq[0],
				 WANT(.wr_id = 0x22, .opcode = IBV_WC_SEND,
				      .qp_num = QPN(P_, 0)));
		} else if (i == 1) {
			ASSERT_EQ(0, post_op(P_->qp[0], IBV_WR_RDMA_WRITE, 0x33,
					     &s, 1, (uintptr_t)dst, bmr->rkey,
					     0));
			check_wc(_metadata, "max WRITE", P_->cq[0],
				 WANT(.wr_id = 0x33,
				      .opcode = IBV_WC_RDMA_WRITE,
				      .qp_num = QPN(P_, 0), .ms = MAX_MSG_MS));
		} else {
			/* B reads A's alias into its real buffer. */
			ASSERT_EQ(0, post_op(P_->qp[1], IBV_WR_RDMA_READ, 0x44,
					     &r, 1, (uintptr_t)al.base,
					     amr->rkey, 0));
			check_wc(_metadata, "max READ", P_->cq[1],
				 WANT(.wr_id = 0x44, .opcode = IBV_WC_RDMA_READ,
				      .qp_num = QPN(P_, 1), .check_len = true,
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

	EXPECT_EQ(IBV_QPS_ERR, wait_state(p->qp[i], IBV_QPS_ERR))
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
	EXPECT_EQ(IBV_QPS_ERR, wait_state(p->qp[1], IBV_QPS_ERR))
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
	EXPECT_EQ(IBV_QPS_RTS, qp_state(P_->qp[1]));
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

/* RNR NAKs are retried (rnr_retry 7 = for ever) until a receive comes. */
TEST_F_TIMEOUT(rc, rnr_retry_recovers, T_SECS)
{
	struct ibv_sge rs = sge(B_, DST + 4096, 4096), ss = sge(A_, 0, 1000);

	ASSERT_EQ(0, post_op(P_->qp[0], IBV_WR_SEND, 0x22, &ss, 1, 0, 0, 0));
	usleep(300000);
	ASSERT_EQ(0, post_recv(P_->qp[1], 0x11, &rs, 1));
	check_wc(_metadata, "SEND after RNR, requester", P_->cq[0],
		 WANT(.wr_id = 0x22, .opcode = IBV_WC_SEND, .qp_num = QPN(P_, 0)));
	check_wc(_metadata, "SEND after RNR, responder", P_->cq[1],
		 WANT(.wr_id = 0x11, .opcode = IBV_WC_RECV, .qp_num = QPN(P_, 1),
		      .check_len = true, .byte_len = 1000));
	check_landed(_metadata, "SEND after RNR", B_->buf + DST + 4096,
		     A_->buf, 1000);
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
	EXPECT_EQ(IBV_QPS_RTS, qp_state(P_->qp[0]));
	EXPECT_EQ(IBV_QPS_RTS, qp_state(P_->qp[1]));
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
	EXPECT_EQ(IBV_QPS_RTS, qp_state(q->qp[1]));
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
	EXPECT_EQ(IBV_QPS_RTS, qp_state(P_->qp[1]));
	check_untouched(_metadata, "responder of a too long SEND",
			B_->buf + DST, BUF_SIZE - DST);
	pair_down(P_);
	ibv_dereg_mr(amr);
	munmap(al.base, al.len);
	check_fresh_pair(_metadata, self);
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
	ASSERT_EQ(1, wait_wc(q->cq[1], &wc, WC_MS));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(IBV_WC_RECV_RDMA_WITH_IMM, wc.opcode);
	EXPECT_EQ(0x33, wc.wr_id);
	EXPECT_EQ(htonl(0x600dcafe), wc.imm_data);
	check_landed(_metadata, "UC WRITE_WITH_IMM", B_->buf + DST + 32768,
		     A_->buf + 4096, len);

	EXPECT_EQ(EINVAL, post_op(q->qp[0], IBV_WR_RDMA_READ, 1, &ss, 1,
				  raddr(B_, DST), B_->mr->rkey, 0));
	EXPECT_EQ(IBV_QPS_RTS, qp_state(q->qp[0]));
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
	return wait_wc(cq, wc, WC_MS) == 1 ? 0 : -1;
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
	ASSERT_EQ(1, wait_wc(q->cq[1], &wc, WC_MS));
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
	ASSERT_EQ(1, wait_wc(q->cq[1], &wc, WC_MS));
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
	ASSERT_EQ(1, wait_wc(q->cq[1], &wc, WC_MS));
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
		ASSERT_EQ(1, wait_wc(q->cq[1], &wc, WC_MS));
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
	uint64_t end = now_ms() + ms;
	int flags = fcntl(ctx->async_fd, F_GETFL);
	int ret = -1;

	fcntl(ctx->async_fd, F_SETFL, flags | O_NONBLOCK);
	while (now_ms() < end) {
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
		ASSERT_EQ(1, wait_wc(i & 1 ? q2.cq[1] : self->q.cq[1], &wc,
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
		ASSERT_EQ(1, wait_wc(self->q.cq[1], &wc, WC_MS));
	}
	/* 4 left: not below the limit yet. */
	EXPECT_EQ(-1, wait_async(B_->ctx, IBV_EVENT_SRQ_LIMIT_REACHED, srq,
				 QUIET_MS));
	ASSERT_EQ(0, post_op(self->q.qp[0], IBV_WR_SEND, 9, &ss, 1, 0, 0, 0));
	ASSERT_EQ(1, wait_wc(self->q.cq[1], &wc, WC_MS));
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
		ASSERT_EQ(1, wait_wc(self->q.cq[1], &wc, WC_MS));
		EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	}
	for (i = 0; i < n; i++) {
		ASSERT_EQ(1, wait_wc(self->q.cq[0], &wc, WC_MS));
		EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	}
	ASSERT_EQ(1, wait_wc(self->q.cq[0], &wc, WC_MS));
	EXPECT_EQ(IBV_WC_RNR_RETRY_EXC_ERR, wc.status);
	EXPECT_EQ(n, wc.wr_id);

	ASSERT_EQ(0, ibv_modify_qp(self->q.qp[1], &qa, IBV_QP_STATE));
	EXPECT_EQ(0, wait_async(B_->ctx, IBV_EVENT_QP_LAST_WQE_REACHED, NULL,
				WC_MS));
	pair_down(&self->q);
	EXPECT_EQ(0, ibv_destroy_srq(srq));
}

TEST_HARNESS_MAIN
