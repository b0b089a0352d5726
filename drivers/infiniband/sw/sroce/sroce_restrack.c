// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce's own fields in "rdma resource show qp|cq|mr -dd", and the same
 * as raw dumps (-r, struct sroce_res_raw of the uapi header): the core
 * calls these fill hooks while it holds a reference on the object. Values
 * are read under the object's locks into a snapshot first, and put into
 * the netlink message after, so no lock is held while the message grows.
 * The core offers no hook for PDs and contexts, which keep nothing of
 * sroce's own worth showing.
 */
#include <net/netlink.h>
#include <rdma/rdma_netlink.h>
#include <rdma/restrack.h>

#include "sroce.h"

/* Values by their uapi index (enum sroce_res_*_field), and which apply. */
struct sroce_res_snap {
	u64 val[SROCE_RES_QP_NFIELDS];
	u32 present;
};

/* The QP has the most fields; "present" has a bit for each. */
static_assert((int)SROCE_RES_CQ_NFIELDS <= (int)SROCE_RES_QP_NFIELDS);
static_assert((int)SROCE_RES_MR_NFIELDS <= (int)SROCE_RES_QP_NFIELDS);
static_assert(SROCE_RES_QP_NFIELDS <= 32);

/* How the -dd table names an object's fields, by uapi index. */
struct sroce_res_kind {
	const char *const *names;	/* NULL: raw only */
	u32 hex;			/* printed in hex */
	unsigned int nfields;
};

static void sroce_res_set(struct sroce_res_snap *s, unsigned int i, u64 v)
{
	s->val[i] = v;
	s->present |= BIT(i);
}

/*
 * Put the snapshot's fields into the message's driver table, after the
 * @string field named @string_name if that is set. 64-bit only where a
 * value needs it.
 */
static int sroce_res_put(struct sk_buff *msg, const struct sroce_res_kind *k,
			 const struct sroce_res_snap *s,
			 const char *string_name, const char *string)
{
	struct nlattr *table;
	unsigned int i;
	int err = 0;

	table = nla_nest_start_noflag(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!table)
		return -EMSGSIZE;
	if (string_name)
		err = rdma_nl_put_driver_string(msg, string_name, string);
	for (i = 0; i < k->nfields && !err; i++) {
		if (!(s->present & BIT(i)) || !k->names[i])
			continue;
		if (k->hex & BIT(i))
			err = rdma_nl_put_driver_u32_hex(msg, k->names[i],
							 s->val[i]);
		else if (s->val[i] > U32_MAX)
			err = rdma_nl_put_driver_u64(msg, k->names[i],
						     s->val[i]);
		else
			err = rdma_nl_put_driver_u32(msg, k->names[i],
						     s->val[i]);
	}
	if (err) {
		nla_nest_cancel(msg, table);
		return -EMSGSIZE;
	}
	nla_nest_end(msg, table);
	return 0;
}

/* The same snapshot as a raw dump: struct sroce_res_raw. */
static int sroce_res_put_raw(struct sk_buff *msg,
			     const struct sroce_res_kind *k,
			     const struct sroce_res_snap *s)
{
	struct sroce_res_raw *raw;
	struct nlattr *attr;
	unsigned int i;

	attr = nla_reserve(msg, RDMA_NLDEV_ATTR_RES_RAW,
			   struct_size(raw, val, k->nfields));
	if (!attr)
		return -EMSGSIZE;
	raw = nla_data(attr);
	raw->version = cpu_to_le16(SROCE_RES_RAW_VERSION);
	raw->nfields = cpu_to_le16(k->nfields);
	raw->present = cpu_to_le32(s->present);
	for (i = 0; i < k->nfields; i++)
		raw->val[i] = cpu_to_le64(s->present & BIT(i) ? s->val[i] : 0);
	return 0;
}

/* The producer index user space (or a kernel poster) published. */
static u32 sroce_res_prod(const struct sroce_ring *ring)
{
	return ring->hdr ? READ_ONCE(ring->hdr->prod) : 0;
}

static const char *const sroce_res_qp_names[SROCE_RES_QP_NFIELDS] = {
	[SROCE_RES_QP_SQ_PROD] = "sq_prod",
	[SROCE_RES_QP_SQ_FETCHED] = "sq_fetched",
	[SROCE_RES_QP_SQ_NEXT] = "sq_next",
	[SROCE_RES_QP_SQ_HEAD] = "sq_head",
	[SROCE_RES_QP_SQ_NEED_DOORBELL] = "sq_need_doorbell",
	[SROCE_RES_QP_REQ_PSN] = "req_psn",
	[SROCE_RES_QP_REQ_UNA] = "req_una",
	[SROCE_RES_QP_REQ_OFF] = "req_off",
	[SROCE_RES_QP_RD_PENDING] = "rd_pending",
	[SROCE_RES_QP_RETRY_LEFT] = "retry_left",
	[SROCE_RES_QP_RNR_LEFT] = "rnr_left",
	[SROCE_RES_QP_RNR_WAIT] = "rnr_wait",
	[SROCE_RES_QP_TIMER_ARMED] = "timer_armed",
	[SROCE_RES_QP_RQ_PROD] = "rq_prod",
	[SROCE_RES_QP_RQ_CONS] = "rq_cons",
	[SROCE_RES_QP_RESP_EPSN] = "resp_epsn",
	[SROCE_RES_QP_RESP_MSN] = "resp_msn",
	[SROCE_RES_QP_IN_SEND] = "in_send",
	[SROCE_RES_QP_IN_WRITE] = "in_write",
	[SROCE_RES_QP_REPLIES_QUEUED] = "replies_queued",
	[SROCE_RES_QP_TX_INFLIGHT] = "tx_inflight",
	[SROCE_RES_QP_CC_LIMITED] = "cc_limited",
	[SROCE_RES_QP_CC_RATE_MBPS] = "cc_rate_mbps",
	[SROCE_RES_QP_CC_TARGET_MBPS] = "cc_target_mbps",
	[SROCE_RES_QP_CC_ALPHA] = "cc_alpha",
	[SROCE_RES_QP_SRTT_US] = "srtt_us",
	[SROCE_RES_QP_SQ_POLL_BACKOFF] = "sq_poll_backoff",
	[SROCE_RES_QP_SQ_POLL_CPU] = "sq_poll_cpu",
};

static const struct sroce_res_kind sroce_res_qp = {
	.names = sroce_res_qp_names,
	.nfields = SROCE_RES_QP_NFIELDS,
};

/*
 * Requester, responder and ring state of a QP. Indices are the
 * free-running ones (see sroce_ring.h); PSNs are 24 bits.
 */
static void sroce_res_qp_snap(struct sroce_qp *qp, struct sroce_res_snap *s)
{
	const struct sroce_req *req = &qp->req;
	const struct sroce_resp *resp = &qp->resp;
	bool rc_uc = sroce_qp_connected(qp);

	spin_lock_bh(&qp->req_lock);
	sroce_res_set(s, SROCE_RES_QP_SQ_PROD, sroce_res_prod(&qp->sq));
	sroce_res_set(s, SROCE_RES_QP_SQ_FETCHED, req->fetched);
	sroce_res_set(s, SROCE_RES_QP_SQ_NEXT, req->next);
	sroce_res_set(s, SROCE_RES_QP_SQ_HEAD, req->head);
	sroce_res_set(s, SROCE_RES_QP_SQ_NEED_DOORBELL,
		      sroce_ring_need_doorbell(&qp->sq));
	sroce_res_set(s, SROCE_RES_QP_SQ_POLL_BACKOFF, req->poll_backoff);
	if (req->poll_watching)
		sroce_res_set(s, SROCE_RES_QP_SQ_POLL_CPU, req->poll_cpu);
	if (rc_uc) {
		sroce_res_set(s, SROCE_RES_QP_REQ_PSN, req->psn);
		sroce_res_set(s, SROCE_RES_QP_REQ_UNA, req->una);
		sroce_res_set(s, SROCE_RES_QP_REQ_OFF, req->off);
		sroce_res_set(s, SROCE_RES_QP_RD_PENDING, req->rd_pending);
		sroce_res_set(s, SROCE_RES_QP_RETRY_LEFT, req->retry_left);
		sroce_res_set(s, SROCE_RES_QP_RNR_LEFT, req->rnr_left);
		sroce_res_set(s, SROCE_RES_QP_RNR_WAIT, req->rnr_wait);
		sroce_res_set(s, SROCE_RES_QP_TIMER_ARMED,
			      hrtimer_active(&qp->timer));
		sroce_res_set(s, SROCE_RES_QP_SRTT_US,
			      req->srtt_ns / NSEC_PER_USEC);
	}
	spin_unlock_bh(&qp->req_lock);

	spin_lock_bh(&qp->resp_lock);
	if (!qp->ibqp.srq) {
		sroce_res_set(s, SROCE_RES_QP_RQ_PROD, sroce_res_prod(&qp->rq));
		sroce_res_set(s, SROCE_RES_QP_RQ_CONS, resp->rq_cons);
	}
	if (rc_uc) {
		sroce_res_set(s, SROCE_RES_QP_RESP_EPSN, resp->epsn);
		sroce_res_set(s, SROCE_RES_QP_RESP_MSN, resp->msn);
		sroce_res_set(s, SROCE_RES_QP_IN_SEND, resp->in_send);
		sroce_res_set(s, SROCE_RES_QP_IN_WRITE, resp->in_write);
		sroce_res_set(s, SROCE_RES_QP_REPLIES_QUEUED,
			      resp->rp_tail - resp->rp_head);
	}
	spin_unlock_bh(&qp->resp_lock);

	/* Packets below it: the credit holds one more while the QP lives. */
	sroce_res_set(s, SROCE_RES_QP_TX_INFLIGHT,
		      max(atomic_read(&qp->credit->held) - 1, 0));
	if (rc_uc) {
		u32 rate, target, alpha;

		sroce_res_set(s, SROCE_RES_QP_CC_LIMITED,
			      sroce_cc_rp_query(qp, &rate, &target, &alpha));
		sroce_res_set(s, SROCE_RES_QP_CC_RATE_MBPS, rate);
		sroce_res_set(s, SROCE_RES_QP_CC_TARGET_MBPS, target);
		sroce_res_set(s, SROCE_RES_QP_CC_ALPHA, alpha);
	}
}

/**
 * sroce_fill_res_qp_entry() - a QP's fields in "rdma resource show -dd".
 * @msg: the netlink message
 * @ibqp: the queue pair
 *
 * Context: process, the core holds a reference on @ibqp.
 * Return: 0 or -EMSGSIZE.
 */
int sroce_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp)
{
	struct sroce_res_snap s = {};

	sroce_res_qp_snap(to_sqp(ibqp), &s);
	return sroce_res_put(msg, &sroce_res_qp, &s, NULL, NULL);
}

/* The same, raw ("rdma resource show qp -r"). */
int sroce_fill_res_qp_entry_raw(struct sk_buff *msg, struct ib_qp *ibqp)
{
	struct sroce_res_snap s = {};

	sroce_res_qp_snap(to_sqp(ibqp), &s);
	return sroce_res_put_raw(msg, &sroce_res_qp, &s);
}

static const char *const sroce_res_cq_names[SROCE_RES_CQ_NFIELDS] = {
	[SROCE_RES_CQ_RING_ENTRIES] = "ring_entries",
	[SROCE_RES_CQ_PROD] = "prod",
	[SROCE_RES_CQ_CONS] = "cons",
	[SROCE_RES_CQ_FILL] = "fill",
	[SROCE_RES_CQ_OVERRUN] = "overrun",
};

static const struct sroce_res_kind sroce_res_cq = {
	.names = sroce_res_cq_names,
	.nfields = SROCE_RES_CQ_NFIELDS,
};

/* A CQ's ring: what is in it, and its state. */
static void sroce_res_cq_snap(struct sroce_cq *cq, struct sroce_res_snap *s)
{
	unsigned long flags;
	u32 prod, cons;

	/* Kernel consumers may poll from hard interrupts. */
	spin_lock_irqsave(&cq->lock, flags);
	prod = cq->prod;
	cons = READ_ONCE(cq->ring.hdr->cons);
	sroce_res_set(s, SROCE_RES_CQ_RING_ENTRIES, cq->ring.num_entries);
	sroce_res_set(s, SROCE_RES_CQ_PROD, prod);
	sroce_res_set(s, SROCE_RES_CQ_CONS, cons);
	/* The consumer's index is the user's word: clamp what it implies. */
	sroce_res_set(s, SROCE_RES_CQ_FILL,
		      min(prod - cons, cq->ring.num_entries));
	sroce_res_set(s, SROCE_RES_CQ_OVERRUN, cq->overrun);
	spin_unlock_irqrestore(&cq->lock, flags);
}

/**
 * sroce_fill_res_cq_entry() - a CQ's fields in "rdma resource show -dd".
 * @msg: the netlink message
 * @ibcq: the completion queue
 *
 * Context: process, the core holds a reference on @ibcq.
 * Return: 0 or -EMSGSIZE.
 */
int sroce_fill_res_cq_entry(struct sk_buff *msg, struct ib_cq *ibcq)
{
	struct sroce_res_snap s = {};

	sroce_res_cq_snap(to_scq(ibcq), &s);
	return sroce_res_put(msg, &sroce_res_cq, &s, NULL, NULL);
}

/* The same, raw ("rdma resource show cq -r"). */
int sroce_fill_res_cq_entry_raw(struct sk_buff *msg, struct ib_cq *ibcq)
{
	struct sroce_res_snap s = {};

	sroce_res_cq_snap(to_scq(ibcq), &s);
	return sroce_res_put_raw(msg, &sroce_res_cq, &s);
}

/* The kind goes to -dd as a string of its own. */
static const char *const sroce_res_mr_names[SROCE_RES_MR_NFIELDS] = {
	[SROCE_RES_MR_ACCESS] = "access",
	[SROCE_RES_MR_PINNED_PAGES] = "pinned_pages",
	[SROCE_RES_MR_PAGE_OFFSET] = "page_offset",
	[SROCE_RES_MR_VALID] = "valid",
	[SROCE_RES_MR_MW_BINDS] = "mw_binds",
	[SROCE_RES_MR_FR_MAX_PAGES] = "fr_max_pages",
};

static const struct sroce_res_kind sroce_res_mr = {
	.names = sroce_res_mr_names,
	.hex = BIT(SROCE_RES_MR_ACCESS),
	.nfields = SROCE_RES_MR_NFIELDS,
};

static const char *const sroce_res_mr_kinds[] = {
	[SROCE_RES_MR_USER] = "user",
	[SROCE_RES_MR_DMA] = "dma",
	[SROCE_RES_MR_FAST_REG] = "fast_reg",
};

/* What an MR is, pins and allows. */
static void sroce_res_mr_snap(struct sroce_mr *mr, struct sroce_res_snap *s)
{
	sroce_res_set(s, SROCE_RES_MR_KIND,
		      mr->dma ? SROCE_RES_MR_DMA :
		      mr->frmr ? SROCE_RES_MR_FAST_REG : SROCE_RES_MR_USER);
	sroce_res_set(s, SROCE_RES_MR_ACCESS, mr->access);
	sroce_res_set(s, SROCE_RES_MR_PINNED_PAGES, mr->umem ? mr->npages : 0);
	sroce_res_set(s, SROCE_RES_MR_PAGE_OFFSET, mr->page_offset);
	sroce_res_set(s, SROCE_RES_MR_VALID, READ_ONCE(mr->valid));
	sroce_res_set(s, SROCE_RES_MR_MW_BINDS, atomic_read(&mr->mw_binds));
	sroce_res_set(s, SROCE_RES_MR_FR_MAX_PAGES,
		      mr->frmr ? mr->max_pages : 0);
}

/**
 * sroce_fill_res_mr_entry() - an MR's fields in "rdma resource show -dd".
 * @msg: the netlink message
 * @ibmr: the memory region
 *
 * Context: process, the core holds a reference on @ibmr.
 * Return: 0 or -EMSGSIZE.
 */
int sroce_fill_res_mr_entry(struct sk_buff *msg, struct ib_mr *ibmr)
{
	struct sroce_res_snap s = {};

	sroce_res_mr_snap(to_smr(ibmr), &s);
	return sroce_res_put(msg, &sroce_res_mr, &s, "kind",
			     sroce_res_mr_kinds[s.val[SROCE_RES_MR_KIND]]);
}

/* The same, raw ("rdma resource show mr -r"). */
int sroce_fill_res_mr_entry_raw(struct sk_buff *msg, struct ib_mr *ibmr)
{
	struct sroce_res_snap s = {};

	sroce_res_mr_snap(to_smr(ibmr), &s);
	return sroce_res_put_raw(msg, &sroce_res_mr, &s);
}
