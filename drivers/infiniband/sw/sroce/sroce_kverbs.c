// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Kernel consumers: work requests posted with ib_post_send() and
 * ib_post_recv(), completions read with ib_poll_cq(). Kernel QPs and CQs
 * use the same rings and entry formats as user ones; this file writes and
 * reads them where the provider does for user space, so there is one data
 * path and it checks kernel entries exactly as it checks user ones.
 *
 * Kernel consumers may post from any context, hard interrupts included;
 * see sroce_qp_sq_doorbell() for how the work then gets started.
 */
#include <linux/etherdevice.h>

#include "sroce.h"

static u32 sroce_ksend_flags(int flags)
{
	u32 f = 0;

	if (flags & IB_SEND_FENCE)
		f |= SROCE_SEND_F_FENCE;
	if (flags & IB_SEND_SIGNALED)
		f |= SROCE_SEND_F_SIGNALED;
	if (flags & IB_SEND_SOLICITED)
		f |= SROCE_SEND_F_SOLICITED;
	if (flags & IB_SEND_INLINE)
		f |= SROCE_SEND_F_INLINE;
	return f;
}

/* Inline data: the SGEs hold kernel virtual addresses, not DMA addresses. */
static int sroce_kwqe_inline(struct sroce_qp *qp, struct sroce_send_wqe *w,
			     const struct ib_send_wr *wr)
{
	u8 *dst = (u8 *)(w + 1);
	u32 len = 0;
	int i;

	for (i = 0; i < wr->num_sge; i++) {
		const struct ib_sge *sge = &wr->sg_list[i];

		if (sge->length > qp->cap.max_inline_data - len)
			return -EINVAL;
		memcpy(dst + len, (void *)(uintptr_t)sge->addr, sge->length);
		len += sge->length;
	}
	w->inline_len = len;
	return 0;
}

/* Translate one kernel work request into the ring entry @w. */
static int sroce_kwqe_from_wr(struct sroce_qp *qp, struct sroce_send_wqe *w,
			      const struct ib_send_wr *wr)
{
	struct sroce_sge *sge = (struct sroce_sge *)(w + 1);
	int i;

	if (wr->num_sge < 0 || wr->num_sge > qp->cap.max_send_sge)
		return -EINVAL;
	memset(w, 0, sizeof(*w));
	w->wr_id = wr->wr_id;
	w->send_flags = sroce_ksend_flags(wr->send_flags);
	switch (wr->opcode) {
	case IB_WR_SEND:
		w->opcode = IB_UVERBS_WR_SEND;
		break;
	case IB_WR_SEND_WITH_IMM:
		w->opcode = IB_UVERBS_WR_SEND_WITH_IMM;
		w->ex = (__force u32)wr->ex.imm_data;
		break;
	case IB_WR_SEND_WITH_INV:
		w->opcode = IB_UVERBS_WR_SEND_WITH_INV;
		w->ex = wr->ex.invalidate_rkey;
		break;
	case IB_WR_LOCAL_INV:
		w->opcode = IB_UVERBS_WR_LOCAL_INV;
		w->ex = wr->ex.invalidate_rkey;
		return qp->ibqp.qp_type == IB_QPT_RC ? 0 : -EINVAL;
	case IB_WR_REG_MR:
		/* See SROCE_WR_REG_MR for where the fields go. */
		w->opcode = SROCE_WR_REG_MR;
		w->wr.rdma.remote_addr = reg_wr(wr)->mr->lkey >> 8;
		w->wr.rdma.rkey = reg_wr(wr)->key;
		w->ex = reg_wr(wr)->access;
		return qp->ibqp.qp_type == IB_QPT_RC ? 0 : -EINVAL;
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_RDMA_READ:
		w->opcode = wr->opcode == IB_WR_RDMA_WRITE ?
			    IB_UVERBS_WR_RDMA_WRITE :
			    wr->opcode == IB_WR_RDMA_READ ?
			    IB_UVERBS_WR_RDMA_READ :
			    IB_UVERBS_WR_RDMA_WRITE_WITH_IMM;
		if (wr->opcode == IB_WR_RDMA_WRITE_WITH_IMM)
			w->ex = (__force u32)wr->ex.imm_data;
		w->wr.rdma.remote_addr = rdma_wr(wr)->remote_addr;
		w->wr.rdma.rkey = rdma_wr(wr)->rkey;
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		w->opcode = wr->opcode == IB_WR_ATOMIC_CMP_AND_SWP ?
			    IB_UVERBS_WR_ATOMIC_CMP_AND_SWP :
			    IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD;
		w->wr.atomic.remote_addr = atomic_wr(wr)->remote_addr;
		w->wr.atomic.compare_add = atomic_wr(wr)->compare_add;
		w->wr.atomic.swap = atomic_wr(wr)->swap;
		w->wr.atomic.rkey = atomic_wr(wr)->rkey;
		break;
	default:
		return -EOPNOTSUPP;
	}
	if (qp->ibqp.qp_type == IB_QPT_UD || qp->ibqp.qp_type == IB_QPT_GSI) {
		/* Datagrams: sends only, each to the address of an AH. */
		if ((wr->opcode != IB_WR_SEND &&
		     wr->opcode != IB_WR_SEND_WITH_IMM) || !ud_wr(wr)->ah)
			return -EINVAL;
		w->wr.ud.ah = sroce_ah_num(ud_wr(wr)->ah);
		w->wr.ud.remote_qpn = ud_wr(wr)->remote_qpn;
		w->wr.ud.remote_qkey = ud_wr(wr)->remote_qkey;
	}
	if (wr->send_flags & IB_SEND_INLINE)
		return sroce_kwqe_inline(qp, w, wr);
	w->num_sge = wr->num_sge;
	for (i = 0; i < wr->num_sge; i++) {
		sge[i].addr = wr->sg_list[i].addr;
		sge[i].length = wr->sg_list[i].length;
		sge[i].lkey = wr->sg_list[i].lkey;
	}
	return 0;
}

/**
 * sroce_kpost_send() - post send work requests of a kernel consumer.
 * @qp: a kernel queue pair
 * @wr: the list of work requests
 * @bad_wr: set to the first request not posted
 *
 * Context: any.
 * Return: 0; -EINVAL before RTS or for a malformed request; -ENOMEM when
 * the send queue is full; -EOPNOTSUPP for an operation sroce lacks.
 */
int sroce_kpost_send(struct sroce_qp *qp, const struct ib_send_wr *wr,
		     const struct ib_send_wr **bad_wr)
{
	enum ib_qp_state state = sroce_qp_state(qp);
	unsigned long flags;
	int err = 0;
	u32 prod;

	if (state < IB_QPS_RTS) {
		*bad_wr = wr;
		return -EINVAL;
	}
	spin_lock_irqsave(&qp->sq_post_lock, flags);
	prod = qp->sq.hdr->prod;
	for (; wr; wr = wr->next) {
		if (sroce_ring_full(&qp->sq, prod)) {
			err = -ENOMEM;
			break;
		}
		err = sroce_kwqe_from_wr(qp, sroce_ring_entry(&qp->sq, prod),
					 wr);
		if (err)
			break;
		prod++;
	}
	sroce_ring_publish(&qp->sq, prod);
	spin_unlock_irqrestore(&qp->sq_post_lock, flags);
	if (err)
		*bad_wr = wr;

	/* The provider's protocol: ring only when asked to. */
	if (!sroce_ring_need_doorbell(&qp->sq))
		return err;
	/*
	 * Loopback: the sender would also deliver, execute and complete what
	 * it sends, all in the poster's context (a storage submission path);
	 * a worker on any CPU does it instead, in parallel. Looped-back
	 * packets keep their order whichever CPU sends them; packets for the
	 * wire would not, so those are sent from here.
	 */
	if (qp->path.loopback && sroce_qp_state(qp) == IB_QPS_RTS &&
	    !qp->dead) {
		sroce_ring_disarm(&qp->sq);
		queue_work(sroce_kernel_wq, &qp->req_work);
		return err;
	}
	sroce_qp_sq_doorbell(qp);
	return err;
}

/**
 * sroce_kpost_recv_ring() - write receive work requests into a ring.
 * @ring: a receive queue's or an SRQ's ring, kernel-produced
 * @lock: serialises the ring's producers
 * @max_sge: SGEs a WQE may carry
 * @wr: the work requests
 * @bad_wr: set to the first one not posted
 *
 * Context: any.
 * Return: 0; -ENOMEM when the ring is full; -EINVAL for too many SGEs.
 */
int sroce_kpost_recv_ring(struct sroce_ring *ring, spinlock_t *lock,
			  u32 max_sge, const struct ib_recv_wr *wr,
			  const struct ib_recv_wr **bad_wr)
{
	struct sroce_recv_wqe *w;
	struct sroce_sge *sge;
	unsigned long flags;
	int err = 0, i;
	u32 prod;

	spin_lock_irqsave(lock, flags);
	prod = ring->hdr->prod;
	for (; wr; wr = wr->next) {
		if (sroce_ring_full(ring, prod)) {
			err = -ENOMEM;
			break;
		}
		if (wr->num_sge < 0 || wr->num_sge > max_sge) {
			err = -EINVAL;
			break;
		}
		w = sroce_ring_entry(ring, prod);
		sge = (struct sroce_sge *)(w + 1);
		w->wr_id = wr->wr_id;
		w->num_sge = wr->num_sge;
		w->reserved = 0;
		for (i = 0; i < wr->num_sge; i++) {
			sge[i].addr = wr->sg_list[i].addr;
			sge[i].length = wr->sg_list[i].length;
			sge[i].lkey = wr->sg_list[i].lkey;
		}
		prod++;
	}
	sroce_ring_publish(ring, prod);
	spin_unlock_irqrestore(lock, flags);
	if (err)
		*bad_wr = wr;
	return err;
}

/**
 * sroce_kpost_recv() - post receive work requests of a kernel consumer.
 * @qp: a kernel queue pair
 * @wr: the list of work requests
 * @bad_wr: set to the first request not posted
 *
 * Context: any.
 * Return: 0; -EINVAL in RESET, with an SRQ or for too many SGEs; -ENOMEM
 * when the receive queue is full.
 */
int sroce_kpost_recv(struct sroce_qp *qp, const struct ib_recv_wr *wr,
		     const struct ib_recv_wr **bad_wr)
{
	int err;

	/* With an SRQ, receives go to the SRQ (post_srq_recv). */
	if (sroce_qp_state(qp) == IB_QPS_RESET || qp->ibqp.srq) {
		*bad_wr = wr;
		return -EINVAL;
	}
	err = sroce_kpost_recv_ring(&qp->rq, &qp->rq_post_lock,
				    qp->cap.max_recv_sge, wr, bad_wr);
	if (sroce_ring_need_doorbell(&qp->rq))
		sroce_qp_rq_doorbell(qp);
	return err;
}

static void sroce_cqe_to_wc(struct sroce_dev *sdev, const struct sroce_cqe *cqe,
			    struct ib_wc *wc)
{
	struct sroce_qp *qp;

	memset(wc, 0, sizeof(*wc));
	wc->wr_id = cqe->wr_id;
	wc->status = cqe->status;
	wc->opcode = cqe->opcode;
	wc->vendor_err = cqe->vendor_err;
	wc->byte_len = cqe->byte_len;
	rcu_read_lock();
	qp = sroce_qp_lookup_rcu(sdev, cqe->qp_num);
	/* A QP destroyed before its completions were polled: no QP. */
	wc->qp = qp ? &qp->ibqp : NULL;
	rcu_read_unlock();
	if (cqe->wc_flags & SROCE_WC_F_WITH_IMM) {
		wc->ex.imm_data = (__force __be32)cqe->ex;
		wc->wc_flags |= IB_WC_WITH_IMM;
	}
	if (cqe->wc_flags & SROCE_WC_F_WITH_INV) {
		wc->ex.invalidate_rkey = cqe->ex;
		wc->wc_flags |= IB_WC_WITH_INVALIDATE;
	}
	if (cqe->wc_flags & SROCE_WC_F_GRH)
		wc->wc_flags |= IB_WC_GRH;
	if (cqe->network_hdr_type) {
		wc->network_hdr_type =
			cqe->network_hdr_type == SROCE_NETWORK_IPV4 ?
			RDMA_NETWORK_IPV4 : RDMA_NETWORK_IPV6;
		ether_addr_copy(wc->smac, cqe->smac);
		wc->wc_flags |= IB_WC_WITH_NETWORK_HDR_TYPE | IB_WC_WITH_SMAC;
	}
	wc->src_qp = cqe->src_qp;
	wc->pkey_index = cqe->pkey_index;
	wc->slid = cqe->slid;
	wc->sl = cqe->sl;
	wc->dlid_path_bits = cqe->dlid_path_bits;
	wc->port_num = cqe->port_num;
}

/**
 * sroce_poll_cq() - take completions from a kernel CQ.
 * @ibcq: the completion queue
 * @num_entries: room in @wc
 * @wc: where the completions go
 *
 * Context: any.
 * Return: the number of completions taken, or -EINVAL for a user CQ.
 */
int sroce_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc)
{
	struct sroce_dev *sdev = to_sdev(ibcq->device);
	struct sroce_cq *cq = to_scq(ibcq);
	unsigned long flags;
	int n = 0;
	u32 cons;

	if (cq->ring.mmap)
		return -EINVAL;
	spin_lock_irqsave(&cq->lock, flags);
	cons = cq->ring.hdr->cons;
	for (; n < num_entries && cons != cq->prod; n++, cons++)
		sroce_cqe_to_wc(sdev, sroce_ring_entry(&cq->ring, cons),
				&wc[n]);
	sroce_ring_release(&cq->ring, cons);
	spin_unlock_irqrestore(&cq->lock, flags);
	return n;
}
