/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The RC selftests' shared fixture (rc_ops.c, rc_errors.c, rc_mw.c,
 * rc_srq.c): two queue pairs on one or two devices, their buffers, and the
 * helpers that post, poll and check.
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
#ifndef RC_FIXTURE_H
#define RC_FIXTURE_H

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

static inline uint32_t min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

/* Pseudo-random bytes, different for each seed. */
static inline void fill_random(void *p, size_t len, uint32_t seed)
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
static inline long first_diff(const void *a, const void *b, size_t len)
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
static inline long first_not(const void *p, int c, size_t len)
{
	const unsigned char *x = p;
	size_t i;

	for (i = 0; i < len; i++)
		if (x[i] != (unsigned char)c)
			return i;
	return -1;
}

static inline void check_mem(struct __test_metadata *_metadata, const char *what,
			     const void *got, const void *want, size_t len)
{
	long off = first_diff(got, want, len);

	EXPECT_EQ(-1, off) TH_LOG("%s: data differs at byte %ld of %zu: %#x, want %#x",
				  what, off, len,
				  off < 0 ? 0 : ((unsigned char *)got)[off],
				  off < 0 ? 0 : ((unsigned char *)want)[off]);
}

static inline void check_untouched(struct __test_metadata *_metadata,
				   const char *what, const void *p, size_t len)
{
	long off = first_not(p, FILL, len);

	EXPECT_EQ(-1, off) TH_LOG("%s: byte %ld of %zu overwritten (%#x)",
				  what, off, len,
				  off < 0 ? 0 : ((unsigned char *)p)[off]);
}

/* @len bytes of @want landed at @dst, the GUARD bytes around stayed FILL. */
static inline void check_landed(struct __test_metadata *_metadata, const char *what,
				const char *dst, const void *want, size_t len)
{
	check_mem(_metadata, what, dst, want, len);
	check_untouched(_metadata, what, dst - GUARD, GUARD);
	check_untouched(_metadata, what, dst + len, GUARD);
}

static inline struct ibv_sge sge(struct side *s, size_t off, uint32_t len)
{
	return (struct ibv_sge){ .addr = (uintptr_t)s->buf + off,
				 .length = len, .lkey = s->mr->lkey };
}

static inline uint64_t raddr(struct side *s, size_t off)
{
	return (uintptr_t)s->buf + off;
}

static inline int post_recv(struct ibv_qp *qp, uint64_t wr_id, struct ibv_sge *sg,
			    int nsge)
{
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = sg,
				  .num_sge = nsge }, *bad;

	return ibv_post_recv(qp, &wr, &bad);
}

/* One send-queue WR: SEND, WRITE or READ, with or without immediate. */
static inline int post_wr(struct ibv_qp *qp, enum ibv_wr_opcode op, uint64_t wr_id,
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
static inline int post_op(struct ibv_qp *qp, enum ibv_wr_opcode op, uint64_t wr_id,
			  struct ibv_sge *sg, int nsge, uint64_t rva, uint32_t rkey,
			  uint32_t imm)
{
	return post_wr(qp, op, wr_id, IBV_SEND_SIGNALED, sg, nsge, rva, rkey,
		       imm);
}

static inline int post_atomic(struct ibv_qp *qp, enum ibv_wr_opcode op,
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
static inline void match_wc(struct __test_metadata *_metadata, const char *what,
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
static inline void check_wc(struct __test_metadata *_metadata, const char *what,
			    struct ibv_cq *cq, const struct want *w)
{
	struct ibv_wc wc;
	int got;

	memset(&wc, 0, sizeof(wc));
	got = sroce_wait_wc(cq, &wc, w->ms ?: WC_MS);
	ASSERT_EQ(1, got) TH_LOG("%s: %s (want wr_id %#llx, %s)", what,
				 got ? "ibv_poll_cq failed" : "no completion",
				 (unsigned long long)w->wr_id,
				 ibv_wc_status_str(w->status));
	match_wc(_metadata, what, &wc, w);
}

static inline void check_no_wc(struct __test_metadata *_metadata, const char *what,
			       struct ibv_cq *cq)
{
	struct ibv_wc wc;
	int got = sroce_wait_wc(cq, &wc, QUIET_MS);

	EXPECT_EQ(0, got) TH_LOG("%s: unexpected completion: status %s wr_id %#llx opcode %d",
				 what, ibv_wc_status_str(wc.status),
				 (unsigned long long)wc.wr_id, wc.opcode);
}

/* ------------------------------------------------------ making pairs */

static inline struct ibv_cq *make_cq(struct side *s, struct ibv_comp_channel *ch,
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
static inline struct ibv_qp *make_qp(struct side *s, struct ibv_cq *cq, bool ex,
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

static inline int to_rtr(struct ibv_qp *qp, struct side *me, struct side *peer,
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

static inline int to_rts(struct ibv_qp *qp, struct side *me, uint32_t sq_psn,
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

static inline void pair_down(struct pair *p)
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
static inline const char *pair_up(rc_fixture *self, struct pair *p,
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
static inline int pick_gid(struct ibv_context *ctx, const char *env, bool v4_wait,
			   union ibv_gid *gid)
{
	struct ibv_gid_entry e;

	if (env) {
		if (ibv_query_gid_ex(ctx, 1, atoi(env), &e, 0))
			return -1;
		*gid = e.gid;
		return e.gid_index;
	}
	return v4_wait ? sroce_find_gid(ctx, AF_INET, NULL, 5000, gid) :
			 sroce_find_gid(ctx, AF_UNSPEC, NULL, 0, gid);
}

static inline int env_mtu(const char *env, enum ibv_mtu *mtu)
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
static inline const char *side_up(struct side *s, const char *name,
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
static inline int rc_prepare(rc_fixture *self, const char **why)
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

static inline void rc_cleanup(rc_fixture *self)
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

static inline bool no_atomics(struct side *s)
{
	return s->dev.atomic_cap == IBV_ATOMIC_NONE;
}

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

static inline int alias_map(struct alias *al, size_t len)
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
static inline long alias_diff(const struct alias *al, const char *p, size_t len)
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

/* In a test: side A, side B, and the pair of QPs between them. */
#define A_	(&self->s[0])
#define B_	(&self->s[1])
#define P_	(&self->p)

#endif /* RC_FIXTURE_H */
