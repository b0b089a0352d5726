// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Shared receive queues: one ring of receive WQEs that the responders of
 * every QP attached to it take from. User space posts into the ring
 * directly (no doorbell: responders look when a message arrives); kernel
 * consumers post through post_srq_recv. A responder copies the WQE it
 * takes and frees its slot at once, and raises IB_EVENT_SRQ_LIMIT_REACHED
 * when what is left drops below the armed limit (IBA 10.2.9.3).
 */
#include "sroce.h"

static u32 sroce_srq_wqe_size(u32 max_sge)
{
	return roundup_pow_of_two(sizeof(struct sroce_recv_wqe) +
				  max_t(u32, max_sge, 1) *
				  sizeof(struct sroce_sge));
}

int sroce_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		     struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibsrq->device);
	struct sroce_srq *srq = to_ssrq(ibsrq);
	struct ib_srq_attr *attr = &init->attr;
	struct sroce_create_srq_resp resp = {};
	u32 wqe_size;
	int err;

	if (init->srq_type != IB_SRQT_BASIC)
		return -EOPNOTSUPP;
	if (!attr->max_wr || attr->max_wr > SROCE_MAX_SRQ_WR ||
	    attr->max_sge > SROCE_MAX_SGE || attr->srq_limit > attr->max_wr)
		return -EINVAL;
	if (udata &&
	    (!sroce_udata_input_ok(udata) || udata->outlen < sizeof(resp)))
		return -EINVAL;
	srq->user = udata;
	if (!sroce_budget_take(&sdev->num_srq, SROCE_MAX_SRQ, srq->user))
		return -ENOMEM;
	spin_lock_init(&srq->lock);
	spin_lock_init(&srq->post_lock);
	wqe_size = sroce_srq_wqe_size(attr->max_sge);
	err = sroce_ring_alloc(&srq->ring, attr->max_wr, wqe_size,
			       udata ? sroce_udata_ucontext(udata) : NULL);
	if (err)
		goto err_count;
	srq->max_sge = min_t(u32, SROCE_MAX_SGE,
			     (wqe_size - sizeof(struct sroce_recv_wqe)) /
			     sizeof(struct sroce_sge));
	srq->limit = attr->srq_limit;
	attr->max_wr = srq->ring.num_entries;
	attr->max_sge = srq->max_sge;
	if (!udata)
		return 0;

	resp.mmap_offset = srq->ring.mmap_offset;
	resp.mmap_length = srq->ring.mmap_length;
	resp.num_entries = srq->ring.num_entries;
	resp.wqe_size = wqe_size;
	err = ib_copy_to_udata(udata, &resp, sizeof(resp));
	if (err)
		goto err_ring;
	return 0;

err_ring:
	sroce_ring_free(&srq->ring);
err_count:
	sroce_budget_put(&sdev->num_srq, srq->user);
	return err;
}

int sroce_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);

	/* The core refuses while a QP is attached: no responder is left. */
	sroce_ring_free(&srq->ring);
	sroce_budget_put(&to_sdev(ibsrq->device)->num_srq, srq->user);
	return 0;
}

int sroce_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		     enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);
	int err = 0;

	if (!sroce_udata_input_ok(udata))
		return -EINVAL;
	/* A ring does not grow in place. */
	if (mask & IB_SRQ_MAX_WR)
		return -EOPNOTSUPP;
	if (!(mask & IB_SRQ_LIMIT))
		return 0;
	spin_lock_bh(&srq->lock);
	if (attr->srq_limit > srq->ring.num_entries)
		err = -EINVAL;
	else
		srq->limit = attr->srq_limit;
	spin_unlock_bh(&srq->lock);
	return err;
}

int sroce_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);

	spin_lock_bh(&srq->lock);
	attr->max_wr = srq->ring.num_entries;
	attr->max_sge = srq->max_sge;
	attr->srq_limit = srq->limit;
	spin_unlock_bh(&srq->lock);
	return 0;
}

static void sroce_srq_event(struct sroce_srq *srq, enum ib_event_type type)
{
	struct ib_event ev = {
		.device = srq->ibsrq.device,
		.element.srq = &srq->ibsrq,
		.event = type,
	};

	if (srq->ibsrq.event_handler)
		srq->ibsrq.event_handler(&ev, srq->ibsrq.srq_context);
}

/**
 * sroce_srq_take() - copy the next WQE of a QP's SRQ into resp->rwqe.
 * @qp: the queue pair whose responder needs a receive WQE
 *
 * A producer index from user space that makes no sense breaks the SRQ for
 * good (IB_EVENT_SRQ_ERR, once), and each QP that takes from it fails as
 * it would on its own receive queue (sroce_qp_bad_ring()).
 * Context: softirq, resp_lock held.
 * Return: false when the SRQ is empty or broken (the QP has failed then).
 */
bool sroce_srq_take(struct sroce_qp *qp)
{
	struct sroce_srq *srq = to_ssrq(qp->ibqp.srq);
	bool limit_reached = false;
	int avail;

	lockdep_assert_held(&qp->resp_lock);
	spin_lock(&srq->lock);
	/* The WQE is copied when taken: no slot stays in use. */
	avail = srq->broken ? -EPROTO :
		sroce_ring_avail(&srq->ring, srq->cons, srq->cons);
	if (!avail) {
		spin_unlock(&srq->lock);
		return false;
	}
	if (avail < 0) {
		bool first = !srq->broken;

		srq->broken = true;
		spin_unlock(&srq->lock);
		if (first)
			sroce_srq_event(srq, IB_EVENT_SRQ_ERR);
		sroce_qp_bad_ring(qp);
		return false;
	}
	sroce_recv_wqe_copy(to_sdev(qp->ibqp.device), &srq->ring, srq->cons,
			    srq->max_sge, qp->resp.rwqe);
	srq->cons++;
	/* The slot is copied; the producer may reuse it. */
	sroce_ring_release(&srq->ring, srq->cons);
	if (srq->limit && (u32)(avail - 1) < srq->limit) {
		srq->limit = 0;		/* one event per arming */
		limit_reached = true;
	}
	spin_unlock(&srq->lock);

	if (limit_reached)
		sroce_srq_event(srq, IB_EVENT_SRQ_LIMIT_REACHED);
	return true;
}

/**
 * sroce_post_srq_recv() - post receive WQEs of a kernel consumer.
 * @ibsrq: the shared receive queue
 * @wr: the work requests
 * @bad_wr: set to the first one not posted
 *
 * Context: any.
 * Return: 0; -ENOMEM when the SRQ is full; -EINVAL for too many SGEs or a
 * user SRQ (which posts through its ring).
 */
int sroce_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			const struct ib_recv_wr **bad_wr)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);

	if (srq->ring.mmap) {
		*bad_wr = wr;
		return -EINVAL;
	}
	return sroce_kpost_recv_ring(&srq->ring, &srq->post_lock,
				     srq->max_sge, wr, bad_wr);
}
