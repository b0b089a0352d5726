// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce's own fields in "rdma resource show qp|cq|mr -dd": the core calls
 * these fill hooks while it holds a reference on the object. Values are
 * read under the object's locks into a snapshot first, and put into the
 * netlink message after, so no lock is held while the message grows.
 * The core offers no hook for PDs and contexts, which keep nothing of
 * sroce's own worth showing.
 */
#include <net/netlink.h>
#include <rdma/rdma_netlink.h>
#include <rdma/restrack.h>

#include "sroce.h"

struct sroce_res_field {
	const char *name;
	u64 val;
	bool hex;
};

/*
 * Put @n fields into the message's driver table, after the @string field
 * named @string_name if that is set. 64-bit only where a value needs it.
 */
static int sroce_res_put(struct sk_buff *msg, const char *string_name,
			 const char *string, const struct sroce_res_field *f,
			 int n)
{
	struct nlattr *table;
	int i, err = 0;

	table = nla_nest_start_noflag(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!table)
		return -EMSGSIZE;
	if (string_name)
		err = rdma_nl_put_driver_string(msg, string_name, string);
	for (i = 0; i < n && !err; i++) {
		if (f[i].hex)
			err = rdma_nl_put_driver_u32_hex(msg, f[i].name,
							 f[i].val);
		else if (f[i].val > U32_MAX)
			err = rdma_nl_put_driver_u64(msg, f[i].name, f[i].val);
		else
			err = rdma_nl_put_driver_u32(msg, f[i].name, f[i].val);
	}
	if (err) {
		nla_nest_cancel(msg, table);
		return -EMSGSIZE;
	}
	nla_nest_end(msg, table);
	return 0;
}

/* The producer index user space (or a kernel poster) published. */
static u32 sroce_res_prod(const struct sroce_ring *ring)
{
	return ring->hdr ? READ_ONCE(ring->hdr->prod) : 0;
}

/**
 * sroce_fill_res_qp_entry() - requester, responder and ring state of a QP.
 * @msg: the netlink message
 * @ibqp: the queue pair
 *
 * Indices are the free-running ones (see sroce_ring.h); PSNs are 24 bits.
 * Context: process, the core holds a reference on @ibqp.
 * Return: 0 or -EMSGSIZE.
 */
int sroce_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	struct sroce_res_field f[22];
	const struct sroce_req *req = &qp->req;
	const struct sroce_resp *resp = &qp->resp;
	int n = 0;

	spin_lock_bh(&qp->req_lock);
	f[n++] = (struct sroce_res_field){ "sq_prod", sroce_res_prod(&qp->sq) };
	f[n++] = (struct sroce_res_field){ "sq_fetched", req->fetched };
	f[n++] = (struct sroce_res_field){ "sq_next", req->next };
	f[n++] = (struct sroce_res_field){ "sq_head", req->head };
	f[n++] = (struct sroce_res_field){ "sq_need_doorbell",
					   sroce_ring_need_doorbell(&qp->sq) };
	if (ibqp->qp_type == IB_QPT_RC || ibqp->qp_type == IB_QPT_UC) {
		f[n++] = (struct sroce_res_field){ "req_psn", req->psn };
		f[n++] = (struct sroce_res_field){ "req_una", req->una };
		f[n++] = (struct sroce_res_field){ "req_off", req->off };
		f[n++] = (struct sroce_res_field){ "rd_pending",
						   req->rd_pending };
		f[n++] = (struct sroce_res_field){ "retry_left",
						   req->retry_left };
		f[n++] = (struct sroce_res_field){ "rnr_left", req->rnr_left };
		f[n++] = (struct sroce_res_field){ "rnr_wait", req->rnr_wait };
		f[n++] = (struct sroce_res_field){ "timer_armed",
						   hrtimer_active(&qp->timer) };
	}
	spin_unlock_bh(&qp->req_lock);

	spin_lock_bh(&qp->resp_lock);
	if (!ibqp->srq) {
		f[n++] = (struct sroce_res_field){ "rq_prod",
						   sroce_res_prod(&qp->rq) };
		f[n++] = (struct sroce_res_field){ "rq_cons", resp->rq_cons };
	}
	if (ibqp->qp_type == IB_QPT_RC || ibqp->qp_type == IB_QPT_UC) {
		f[n++] = (struct sroce_res_field){ "resp_epsn", resp->epsn };
		f[n++] = (struct sroce_res_field){ "resp_msn", resp->msn };
		f[n++] = (struct sroce_res_field){ "in_send", resp->in_send };
		f[n++] = (struct sroce_res_field){ "in_write", resp->in_write };
		f[n++] = (struct sroce_res_field){ "replies_queued",
					resp->rp_tail - resp->rp_head };
	}
	spin_unlock_bh(&qp->resp_lock);

	/* Packets below it: the credit holds one more while the QP lives. */
	f[n++] = (struct sroce_res_field){ "tx_inflight",
				max(atomic_read(&qp->credit->held) - 1, 0) };
	return sroce_res_put(msg, NULL, NULL, f, n);
}

/**
 * sroce_fill_res_cq_entry() - a CQ's ring: what is in it, and its state.
 * @msg: the netlink message
 * @ibcq: the completion queue
 *
 * Context: process, the core holds a reference on @ibcq.
 * Return: 0 or -EMSGSIZE.
 */
int sroce_fill_res_cq_entry(struct sk_buff *msg, struct ib_cq *ibcq)
{
	struct sroce_cq *cq = to_scq(ibcq);
	struct sroce_res_field f[5];
	unsigned long flags;
	u32 prod, cons;
	int n = 0;

	/* Kernel consumers may poll from hard interrupts. */
	spin_lock_irqsave(&cq->lock, flags);
	prod = cq->prod;
	cons = READ_ONCE(cq->ring.hdr->cons);
	f[n++] = (struct sroce_res_field){ "ring_entries",
					   cq->ring.num_entries };
	f[n++] = (struct sroce_res_field){ "prod", prod };
	f[n++] = (struct sroce_res_field){ "cons", cons };
	/* The consumer's index is the user's word: clamp what it implies. */
	f[n++] = (struct sroce_res_field){ "fill",
				min(prod - cons, cq->ring.num_entries) };
	f[n++] = (struct sroce_res_field){ "overrun", cq->overrun };
	spin_unlock_irqrestore(&cq->lock, flags);
	return sroce_res_put(msg, NULL, NULL, f, n);
}

/**
 * sroce_fill_res_mr_entry() - what an MR is, pins and allows.
 * @msg: the netlink message
 * @ibmr: the memory region
 *
 * Context: process, the core holds a reference on @ibmr.
 * Return: 0 or -EMSGSIZE.
 */
int sroce_fill_res_mr_entry(struct sk_buff *msg, struct ib_mr *ibmr)
{
	struct sroce_mr *mr = to_smr(ibmr);
	const struct sroce_res_field f[] = {
		{ "access", mr->access, true },
		{ "pinned_pages", mr->umem ? mr->npages : 0 },
		{ "page_offset", mr->page_offset },
		{ "valid", READ_ONCE(mr->valid) },
		{ "mw_binds", atomic_read(&mr->mw_binds) },
		{ "fr_max_pages", mr->frmr ? mr->max_pages : 0 },
	};
	const char *kind = mr->dma ? "dma" : mr->frmr ? "fast_reg" : "user";

	return sroce_res_put(msg, "kind", kind, f, ARRAY_SIZE(f));
}
