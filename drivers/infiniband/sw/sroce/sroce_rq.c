// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A QP's receive queue as the receive side uses it: taking the next
 * receive WQE (from the QP's own ring or from its SRQ), giving its slot
 * back before its completion, flushing what is posted, and discarding it
 * on a move to RESET. The RC/UC responder and UD reception take WQEs only
 * through here, so a bad index meets one policy (sroce_ring.h).
 *
 * A taken WQE is copied into qp->resp.rwqe: the user may rewrite the ring
 * at any time, and the copy is what the kernel validates and follows.
 */
#include "sroce.h"

/**
 * sroce_recv_wqe_copy() - copy a receive WQE out of a ring.
 * @sdev: the device, for the bad-WQE counter
 * @ring: a receive queue's or an SRQ's ring
 * @idx: the entry, published by the producer
 * @max_sge: SGEs a WQE of this ring may carry
 * @dst: room for a WQE with @max_sge SGEs
 *
 * A WQE claiming more SGEs than the ring holds gets none: nothing fits
 * in it, and its message fails with a length error.
 */
void sroce_recv_wqe_copy(struct sroce_dev *sdev, const struct sroce_ring *ring,
			 u32 idx, u32 max_sge, struct sroce_recv_wqe *dst)
{
	const struct sroce_recv_wqe *src = sroce_ring_entry(ring, idx);

	memcpy(dst, src, sizeof(*src));
	if (dst->num_sge > max_sge) {
		sroce_count(sdev, SROCE_CNT_BAD_WQE);
		dst->num_sge = 0;
	}
	memcpy(dst + 1, src + 1, dst->num_sge * sizeof(struct sroce_sge));
}

/**
 * sroce_rq_take() - copy the next posted receive WQE into resp.rwqe.
 * @qp: the queue pair; its responder holds no WQE
 *
 * The slot of the QP's own ring is given back when the WQE completes
 * (sroce_rq_release()); an SRQ's at once.
 * Context: resp_lock held.
 * Return: false when none is posted, or when the ring's indices make no
 * sense (the QP has failed then).
 */
bool sroce_rq_take(struct sroce_qp *qp)
{
	struct sroce_resp *resp = &qp->resp;
	int avail;

	lockdep_assert_held(&qp->resp_lock);
	if (qp->ibqp.srq)
		return sroce_srq_take(qp);
	/* The WQE is copied when taken: no slot stays in use. */
	avail = sroce_ring_avail(&qp->rq, resp->rq_cons, resp->rq_cons);
	if (avail <= 0) {
		if (avail < 0)
			sroce_qp_bad_ring(qp);
		return false;
	}
	sroce_recv_wqe_copy(to_sdev(qp->ibqp.device), &qp->rq, resp->rq_cons,
			    qp->cap.max_recv_sge, resp->rwqe);
	resp->rq_cons++;
	return true;
}

/*
 * The taken WQE is about to complete: give its slot back first, so that a
 * consumer reposting on seeing the completion finds room.
 * Context: resp_lock held.
 */
void sroce_rq_release(struct sroce_qp *qp)
{
	lockdep_assert_held(&qp->resp_lock);
	if (!qp->ibqp.srq)
		sroce_ring_release(&qp->rq, qp->resp.rq_cons);
}

/**
 * sroce_rq_flush() - complete every WQE posted to the QP's own ring.
 * @qp: queue pair in the error state; its responder holds no WQE
 *
 * The SRQ's WQEs are not the QP's to flush (IBA 10.3.1). A broken ring
 * has nothing more to flush: the QP failed already.
 * Context: resp_lock held.
 */
void sroce_rq_flush(struct sroce_qp *qp)
{
	struct sroce_resp *resp = &qp->resp;
	const struct sroce_recv_wqe *src;
	struct sroce_cqe cqe = {
		.status = IB_WC_WR_FLUSH_ERR,
		.opcode = IB_WC_RECV,
		.qp_num = qp->ibqp.qp_num,
		.port_num = SROCE_PORT,
	};
	int avail;

	lockdep_assert_held(&qp->resp_lock);
	/* Ask for doorbells first, so a WQE posted after prod is read rings. */
	sroce_ring_arm(&qp->rq);
	if (qp->ibqp.srq)
		return;
	avail = sroce_ring_avail(&qp->rq, resp->rq_cons, resp->rq_cons);
	for (; avail > 0; avail--) {
		src = sroce_ring_entry(&qp->rq, resp->rq_cons);
		cqe.wr_id = READ_ONCE(src->wr_id);
		/* The slot is read; free it before completing it. */
		sroce_ring_release(&qp->rq, ++resp->rq_cons);
		sroce_cq_post(to_scq(qp->ibqp.recv_cq), &cqe, false);
	}
}

/*
 * A move to RESET: whatever is posted is discarded, and receives need no
 * doorbell (the responder looks when a message arrives).
 * Context: resp_lock held.
 */
void sroce_rq_reset(struct sroce_qp *qp)
{
	lockdep_assert_held(&qp->resp_lock);
	qp->resp.rq_cons = sroce_ring_discard(&qp->rq);
	sroce_ring_disarm(&qp->rq);
}

/**
 * sroce_rq_create() - a receive queue: its ring and the taken WQE's copy.
 * @qp: the queue pair being created
 * @num_wr: WQEs asked for (the ring rounds up)
 * @wqe_size: bytes per WQE of the ring, a power of two
 * @copy_size: room for the largest WQE taken (the SRQ's, if attached)
 * @uctx: the user context, NULL for a kernel QP
 *
 * Return: 0 or -ENOMEM.
 */
int sroce_rq_create(struct sroce_qp *qp, u32 num_wr, u32 wqe_size,
		    u32 copy_size, struct ib_ucontext *uctx)
{
	int err;

	err = sroce_ring_alloc(&qp->rq, max_t(u32, num_wr, 1), wqe_size, uctx);
	if (err)
		return err;
	qp->resp.rwqe = kzalloc(copy_size, GFP_KERNEL_ACCOUNT);
	if (!qp->resp.rwqe) {
		sroce_rq_destroy(qp);
		return -ENOMEM;
	}
	return 0;
}

/* Free what sroce_rq_create() allocated; the QP is quiesced. */
void sroce_rq_destroy(struct sroce_qp *qp)
{
	kfree(qp->resp.rwqe);
	qp->resp.rwqe = NULL;
	sroce_ring_free(&qp->rq);
}
