// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Completion queues. A CQ is a ring of struct sroce_cqe shared with the
 * process that owns it: the kernel produces, the provider polls without a
 * system call. Arming for completion events goes through the kernel.
 * Kernel consumers' CQs use the same ring, polled by sroce_kverbs.c.
 */
#include "sroce.h"

static int sroce_cq_check_size(int cqe)
{
	return cqe < 1 || cqe > SROCE_MAX_CQE ? -EINVAL : 0;
}

static_assert(sizeof(struct sroce_cqe) == 64);

/* Create and resize answer alike: where the (new) ring is. */
static_assert(sizeof(struct sroce_create_cq_resp) ==
	      sizeof(struct sroce_resize_cq_resp));

static int sroce_cq_copy_resp(struct ib_udata *udata,
			      const struct sroce_ring *ring)
{
	struct sroce_create_cq_resp resp = {
		.mmap_offset = ring->mmap_offset,
		.mmap_length = ring->mmap_length,
		.num_entries = ring->num_entries,
	};

	return ib_copy_to_udata(udata, &resp, sizeof(resp));
}

/* Refuse requests we could not answer before changing anything. */
static int sroce_cq_check_udata(struct ib_udata *udata)
{
	if (udata->outlen < sizeof(struct sroce_create_cq_resp) ||
	    !sroce_udata_input_ok(udata))
		return -EINVAL;
	return 0;
}

/* Call the consumer's handler for @what (SROCE_CQ_EV_*). */
static void sroce_cq_deliver(struct sroce_cq *cq, int what)
{
	struct ib_event ev = {
		.device = cq->ibcq.device,
		.element.cq = &cq->ibcq,
		.event = IB_EVENT_CQ_ERR,
	};

	if (what == SROCE_CQ_EV_COMP) {
		if (cq->ibcq.comp_handler)
			cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
	} else if (cq->ibcq.event_handler) {
		cq->ibcq.event_handler(&ev, cq->ibcq.cq_context);
	}
}

/* A kernel CQ's completion event and CQ error, in interrupt context. */
static void sroce_cq_notify_work(struct irq_work *work)
{
	struct sroce_cq *cq = container_of(work, struct sroce_cq, notify_work);

	if (test_and_clear_bit(SROCE_CQ_EV_ERR, &cq->kernel_events))
		sroce_cq_deliver(cq, SROCE_CQ_EV_ERR);
	if (test_and_clear_bit(SROCE_CQ_EV_COMP, &cq->kernel_events))
		sroce_cq_deliver(cq, SROCE_CQ_EV_COMP);
}

/*
 * Tell the consumer. The data path posts completions with QP locks held:
 * uverbs's handlers only queue an event, but a kernel consumer's may post
 * to the QP, so it hears from interrupt context instead.
 */
static void sroce_cq_raise(struct sroce_cq *cq, int what)
{
	if (cq->user) {
		sroce_cq_deliver(cq, what);
		return;
	}
	set_bit(what, &cq->kernel_events);
	irq_work_queue(&cq->notify_work);
}

int sroce_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		    sroce_create_cq_arg_t *arg)
{
	struct ib_udata *udata = sroce_create_cq_udata(arg);
	struct sroce_dev *sdev = to_sdev(ibcq->device);
	struct sroce_cq *cq = to_scq(ibcq);
	int err;

	if (attr->flags)
		return -EOPNOTSUPP;
	err = sroce_cq_check_size(attr->cqe);
	if (err)
		return err;
	if (attr->comp_vector >= ibcq->device->num_comp_vectors)
		return -EINVAL;
	if (udata) {
		err = sroce_cq_check_udata(udata);
		if (err)
			return err;
	}
	cq->user = udata;
	if (!sroce_budget_take(&sdev->num_cq, sdev->max_cq, cq->user))
		return -ENOMEM;

	spin_lock_init(&cq->lock);
	init_irq_work(&cq->notify_work, sroce_cq_notify_work);
	err = sroce_ring_alloc(&cq->ring, attr->cqe, sizeof(struct sroce_cqe),
			       udata ? sroce_udata_ucontext(udata) : NULL);
	if (err)
		goto err_count;
	ibcq->cqe = cq->ring.num_entries;
	if (!udata)
		return 0;

	err = sroce_cq_copy_resp(udata, &cq->ring);
	if (err)
		goto err_ring;
	return 0;

err_ring:
	sroce_ring_free(&cq->ring);
err_count:
	sroce_budget_put(&sdev->num_cq, cq->user);
	return err;
}

int sroce_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct sroce_cq *cq = to_scq(ibcq);

	irq_work_sync(&cq->notify_work);
	sroce_ring_free(&cq->ring);
	sroce_budget_put(&to_sdev(ibcq->device)->num_cq, cq->user);
	return 0;
}

static u32 sroce_cq_pending(struct sroce_cq *cq)
{
	return sroce_ring_pending(&cq->ring, cq->prod);
}

int sroce_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct sroce_cq *cq = to_scq(ibcq);
	unsigned long irqflags;
	int missed = 0;

	spin_lock_irqsave(&cq->lock, irqflags);
	/* A request for all completions overrides solicited-only. */
	if (cq->notify != IB_CQ_NEXT_COMP)
		cq->notify = flags & IB_CQ_SOLICITED_MASK;
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) && sroce_cq_pending(cq))
		missed = 1;
	spin_unlock_irqrestore(&cq->lock, irqflags);
	return missed;
}

/**
 * sroce_cq_purge_qp() - remove a destroyed kernel QP's unpolled completions.
 * @cq: a kernel consumer's CQ
 * @qpn: the QP's number
 *
 * A completion polled after its QP was destroyed would name no QP, or,
 * once the number is reused, another one. Hardware drivers clean their
 * kernel CQs the same way. The entries left keep their order.
 * Context: process; the QP produces nothing any more.
 */
void sroce_cq_purge_qp(struct sroce_cq *cq, u32 qpn)
{
	struct sroce_cqe *cqe;
	unsigned long flags;
	u32 idx, cons, gone = 0;

	if (cq->ring.mmap)
		return;
	spin_lock_irqsave(&cq->lock, flags);
	cons = cq->ring.hdr->cons;
	/* Newest first: each kept entry moves up over those removed. */
	for (idx = cq->prod; idx != cons;) {
		cqe = sroce_ring_entry(&cq->ring, --idx);
		if (cqe->qp_num == qpn)
			gone++;
		else if (gone)
			memcpy(sroce_ring_entry(&cq->ring, idx + gone), cqe,
			       sizeof(*cqe));
	}
	sroce_ring_release(&cq->ring, cons + gone);
	spin_unlock_irqrestore(&cq->lock, flags);
}

/*
 * Resize: the unconsumed entries move to the front of a new ring. A user
 * CQ's provider does not poll meanwhile (it holds its CQ lock); kernel
 * pollers take cq->lock, as this does.
 */
int sroce_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata)
{
	struct sroce_cq *cq = to_scq(ibcq);
	struct sroce_ring new, old;
	u32 pending, cons, i;
	int err;

	err = sroce_cq_check_size(cqe);
	if (err)
		return err;
	if (udata) {
		err = sroce_cq_check_udata(udata);
		if (err)
			return err;
	}

	err = sroce_ring_alloc(&new, cqe, sizeof(struct sroce_cqe),
			       udata ? sroce_udata_ucontext(udata) : NULL);
	if (err)
		return err;

	spin_lock_irq(&cq->lock);
	pending = sroce_cq_pending(cq);
	if (pending > new.num_entries) {
		spin_unlock_irq(&cq->lock);
		sroce_ring_free(&new);
		return -EINVAL;
	}
	cons = cq->prod - pending;
	for (i = 0; i < pending; i++)
		memcpy(sroce_ring_entry(&new, i),
		       sroce_ring_entry(&cq->ring, cons + i),
		       sizeof(struct sroce_cqe));
	new.hdr->prod = pending;
	new.hdr->cons = 0;
	old = cq->ring;
	cq->ring = new;
	cq->prod = pending;
	ibcq->cqe = new.num_entries;
	spin_unlock_irq(&cq->lock);

	sroce_ring_free(&old);
	if (!udata)
		return 0;
	/* Only a fault on the response buffer can fail this now. */
	return sroce_cq_copy_resp(udata, &new);
}

/**
 * sroce_cq_post() - add one completion and raise an event if armed.
 * @cq: the completion queue
 * @cqe: the completion
 * @solicited: the completion is for a solicited message
 *
 * A full queue loses the completion: that is a CQ overrun, counted, and
 * reported to the owner as an IB_EVENT_CQ_ERR the first time only.
 * Context: any; the data path calls it with its QP locks held.
 */
void sroce_cq_post(struct sroce_cq *cq, const struct sroce_cqe *cqe,
		   bool solicited)
{
	struct sroce_dev *sdev = to_sdev(cq->ibcq.device);
	unsigned long flags;
	bool notify = false;

	spin_lock_irqsave(&cq->lock, flags);
	/* An impossible consumer index from user space reads as full. */
	if (sroce_ring_full(&cq->ring, cq->prod)) {
		bool first = !cq->overrun;

		cq->overrun = true;
		spin_unlock_irqrestore(&cq->lock, flags);
		sroce_count(sdev, SROCE_CNT_CQ_OVERFLOW);
		if (first)
			sroce_cq_raise(cq, SROCE_CQ_EV_ERR);
		return;
	}
	memcpy(sroce_ring_entry(&cq->ring, cq->prod), cqe, sizeof(*cqe));
	cq->prod++;
	sroce_ring_publish(&cq->ring, cq->prod);
	if (cq->notify == IB_CQ_NEXT_COMP ||
	    (cq->notify == IB_CQ_SOLICITED && solicited)) {
		cq->notify = 0;
		notify = true;
	}
	spin_unlock_irqrestore(&cq->lock, flags);

	if (notify && cq->ibcq.comp_handler)
		sroce_cq_raise(cq, SROCE_CQ_EV_COMP);
}
