// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The RC requester and completer (IBA 9.7, 9.9): send WQEs are copied out
 * of the user's ring once and checked, cut into packets of the path MTU
 * and sent within a window of SROCE_TX_WINDOW unacknowledged PSNs. ACKs,
 * NAKs, read responses and atomic acknowledgments complete WQEs in order.
 *
 * Loss recovery is go-back-N from the oldest unacknowledged PSN, driven by
 * a high-resolution timer (the QP's local ACK timeout, 4.096 us * 2^t) or
 * by a sequence NAK; RNR NAKs wait out the responder's timer. The
 * responder answers duplicates, re-executes reads and replays atomics.
 *
 * ACKs are requested only where they matter: on a message's last packet
 * when it is signaled, or when no packet follows at once (nothing more is
 * posted, or a local operation is next), and every SROCE_ACKREQ_EVERY
 * packets to keep the window moving. One ACK completes everything before
 * it.
 *
 * Work runs where it is triggered: in the doorbell system call, in the
 * receive softirq for ACKs, or in the timer; a pass sends at most
 * SROCE_TX_BUDGET packets and leaves the rest to req_work.
 */
#include "sroce.h"
#include "sroce_hdr.h"

/* RNR NAK timer codes in microseconds, IBA table 45. */
static const u32 sroce_rnr_usec[32] = {
	655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960,
	1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720,
	40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
};

struct sroce_send_wqe *sroce_swqe(struct sroce_qp *qp, u32 idx)
{
	return qp->req.shadow + (size_t)(idx & qp->sq.mask) * qp->sq.entry_size;
}

struct sroce_swqe_state *sroce_sst(struct sroce_qp *qp, u32 idx)
{
	return &qp->req.st[idx & qp->sq.mask];
}

static const struct sroce_sge *sroce_swqe_sge(const struct sroce_send_wqe *w)
{
	return (const struct sroce_sge *)(w + 1);
}

/* Operations answered by responses, holding a responder resource. */
static bool sroce_op_is_rdatomic(u32 op)
{
	return op == IB_UVERBS_WR_RDMA_READ || op == SROCE_WR_ATOMIC_WRITE ||
	       op == IB_UVERBS_WR_ATOMIC_CMP_AND_SWP ||
	       op == IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD;
}

/* Operations on this side only: no packets, no PSNs. */
static bool sroce_op_is_local(u32 op)
{
	return op == IB_UVERBS_WR_LOCAL_INV || op == SROCE_WR_REG_MR ||
	       op == IB_UVERBS_WR_BIND_MW;
}

static bool sroce_op_is_atomic(u32 op)
{
	return op == IB_UVERBS_WR_ATOMIC_CMP_AND_SWP ||
	       op == IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD;
}

static enum ib_wc_opcode sroce_wc_opcode(u32 op)
{
	switch (op) {
	case IB_UVERBS_WR_RDMA_WRITE:
	case IB_UVERBS_WR_RDMA_WRITE_WITH_IMM:
		return IB_WC_RDMA_WRITE;
	case IB_UVERBS_WR_RDMA_READ:
		return IB_WC_RDMA_READ;
	case IB_UVERBS_WR_ATOMIC_CMP_AND_SWP:
		return IB_WC_COMP_SWAP;
	case IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD:
		return IB_WC_FETCH_ADD;
	case IB_UVERBS_WR_LOCAL_INV:
		return IB_WC_LOCAL_INV;
	case SROCE_WR_REG_MR:
		return IB_WC_REG_MR;
	case IB_UVERBS_WR_BIND_MW:
		return IB_WC_BIND_MW;
	case SROCE_WR_ATOMIC_WRITE:
		return SROCE_WC_ATOMIC_WRITE;
	default:
		return IB_WC_SEND;
	}
}

static void sroce_req_post_cqe(struct sroce_qp *qp, u64 wr_id, u32 op,
			       u32 len, int status)
{
	struct sroce_cqe cqe = {
		.wr_id = wr_id,
		.status = status,
		.opcode = sroce_wc_opcode(op),
		.byte_len = len,
		.qp_num = qp->ibqp.qp_num,
		.port_num = SROCE_PORT,
	};

	sroce_cq_post(to_scq(qp->ibqp.send_cq), &cqe, false);
}

/*
 * Complete the WQE at the head; successful unsignaled ones stay silent.
 * The slot is released before the completion appears: a consumer that
 * sees the completion may post into the slot at once. The completion is
 * built from the kernel's copy, which the next fetch alone overwrites.
 */
void sroce_req_complete(struct sroce_qp *qp, int status)
{
	struct sroce_req *req = &qp->req;
	struct sroce_send_wqe *w = sroce_swqe(qp, req->head);
	struct sroce_swqe_state *st = sroce_sst(qp, req->head);

	if (sroce_op_is_rdatomic(w->opcode) && req->head != req->next &&
	    req->rd_pending)
		req->rd_pending--;
	req->head++;
	/* The slot's last use (our copy of it) is done. */
	sroce_ring_release(&qp->sq, req->head);
	if (status != IB_WC_SUCCESS || qp->sq_sig_all ||
	    (w->send_flags & SROCE_SEND_F_SIGNALED))
		sroce_req_post_cqe(qp, w->wr_id, w->opcode, st->length, status);
}

/* A locally detected error: complete the head with it, fail the QP. */
void sroce_req_fail(struct sroce_qp *qp, int status)
{
	if (qp->req.head != qp->req.fetched)
		sroce_req_complete(qp, status);
	sroce_qp_set_error(qp);
}

static u32 sroce_wqe_npsn(struct sroce_qp *qp, u32 op, u32 len)
{
	if (sroce_op_is_local(op))
		return 0;
	if (sroce_op_is_atomic(op) || op == SROCE_WR_ATOMIC_WRITE)
		return 1;
	return sroce_msg_npsn(qp, len);
}

static u32 sroce_swqe_last_psn(const struct sroce_swqe_state *st)
{
	return (st->first_psn + st->npsn - 1) & SROCE_PSN_MASK;
}

/* PSN of a read's first response not yet placed. */
static u32 sroce_read_next_psn(struct sroce_qp *qp,
			       const struct sroce_swqe_state *st)
{
	return (st->first_psn + st->read_off / qp->mtu) & SROCE_PSN_MASK;
}

/* Check a copied WQE; return the completion status it earns locally. */
static int sroce_req_check(struct sroce_qp *qp, struct sroce_send_wqe *w,
			   const void *src, u64 *len)
{
	const struct sroce_sge *sge;
	u32 op = w->opcode, i;
	bool data_op;

	data_op = op == IB_UVERBS_WR_SEND ||
		  op == IB_UVERBS_WR_SEND_WITH_IMM ||
		  op == IB_UVERBS_WR_SEND_WITH_INV ||
		  op == IB_UVERBS_WR_RDMA_WRITE ||
		  op == IB_UVERBS_WR_RDMA_WRITE_WITH_IMM;
	*len = 0;
	if (sroce_op_is_local(op)) {
		/* Registrations come from kernel consumers alone. */
		if ((qp->ibqp.qp_type != IB_QPT_RC &&
		     qp->ibqp.qp_type != IB_QPT_UC) ||
		    (op == SROCE_WR_REG_MR && !qp->kernel))
			return IB_WC_LOC_QP_OP_ERR;
		return IB_WC_SUCCESS;
	}
	if (!data_op && !sroce_op_is_rdatomic(op))
		return IB_WC_LOC_QP_OP_ERR;
	/* Its 8 bytes are in the WQE; the target must be aligned (A19). */
	if (op == SROCE_WR_ATOMIC_WRITE)
		return qp->ibqp.qp_type == IB_QPT_RC &&
		       !(w->wr.atomic.remote_addr & 7) ?
		       IB_WC_SUCCESS : IB_WC_LOC_QP_OP_ERR;
	/* Datagrams are sends, one packet each. */
	if ((qp->ibqp.qp_type == IB_QPT_UD ||
	     qp->ibqp.qp_type == IB_QPT_GSI) &&
	    op != IB_UVERBS_WR_SEND && op != IB_UVERBS_WR_SEND_WITH_IMM)
		return IB_WC_LOC_QP_OP_ERR;
	/* UC: sends and writes, no reads, atomics or invalidation. */
	if (qp->ibqp.qp_type == IB_QPT_UC &&
	    (sroce_op_is_rdatomic(op) || op == IB_UVERBS_WR_SEND_WITH_INV))
		return IB_WC_LOC_QP_OP_ERR;

	if (w->send_flags & SROCE_SEND_F_INLINE) {
		if (!data_op || w->inline_len > qp->cap.max_inline_data)
			return IB_WC_LOC_QP_OP_ERR;
		memcpy(w + 1, src + sizeof(*w), w->inline_len);
		*len = w->inline_len;
		return IB_WC_SUCCESS;
	}
	if (w->num_sge > qp->cap.max_send_sge)
		return IB_WC_LOC_QP_OP_ERR;
	memcpy(w + 1, src + sizeof(*w), w->num_sge * sizeof(*sge));
	sge = sroce_swqe_sge(w);
	for (i = 0; i < w->num_sge; i++)
		*len += sge[i].length;
	if (sroce_op_is_atomic(op) && (w->num_sge != 1 || *len != 8))
		return IB_WC_LOC_QP_OP_ERR;
	if (*len > SROCE_MAX_MSG_SIZE)
		return IB_WC_LOC_LEN_ERR;
	return IB_WC_SUCCESS;
}

/* Copy and check the next posted WQE; false when none is posted. */
static bool sroce_req_fetch(struct sroce_qp *qp)
{
	struct sroce_req *req = &qp->req;
	struct sroce_swqe_state *st;
	struct sroce_send_wqe *w;
	const void *src;
	int avail;
	u64 len;

	/* Our copies of the WQEs from head on are in use. */
	avail = sroce_ring_avail(&qp->sq, req->head, req->fetched);
	if (avail <= 0) {
		if (avail < 0)
			sroce_qp_bad_ring(qp);
		return false;
	}
	src = sroce_ring_entry(&qp->sq, req->fetched);
	w = sroce_swqe(qp, req->fetched);
	st = sroce_sst(qp, req->fetched);
	memcpy(w, src, sizeof(*w));
	st->status = sroce_req_check(qp, w, src, &len);
	if (st->status != IB_WC_SUCCESS) {
		sroce_count(to_sdev(qp->ibqp.device), SROCE_CNT_BAD_WQE);
		len = 0;
	}
	st->length = len;
	st->npsn = sroce_wqe_npsn(qp, w->opcode, len);
	st->read_off = 0;
	req->fetched++;
	return true;
}

static void sroce_req_arm_timer(struct sroce_qp *qp)
{
	u8 t = qp->attr.timeout;

	/* Timeout 0 means wait forever (IBA 9.7.6.1.3). */
	if (!t || qp->dead || hrtimer_is_queued(&qp->timer))
		return;
	qp->req.timer_una = qp->req.una;
	hrtimer_start(&qp->timer, ns_to_ktime(4096ULL << t),
		      HRTIMER_MODE_REL_SOFT);
}

/* Position the SGE cursor of the WQE being sent at byte @off. */
static void sroce_req_seek(struct sroce_qp *qp, struct sroce_send_wqe *w,
			   u32 off)
{
	const struct sroce_sge *sge = sroce_swqe_sge(w);
	struct sroce_req *req = &qp->req;
	u32 i = 0;

	if (!(w->send_flags & SROCE_SEND_F_INLINE))
		while (i < w->num_sge && off >= sge[i].length) {
			off -= sge[i].length;
			i++;
		}
	req->sge = i;
	req->sge_off = off;
}

static u8 sroce_req_opcode(u8 transport, u32 op, bool first, bool last)
{
	u8 o;

	switch (op) {
	case IB_UVERBS_WR_SEND_WITH_INV:
		if (first && last)
			o = SROCE_OP_SEND_ONLY_INV;
		else if (first)
			o = SROCE_OP_SEND_FIRST;
		else if (last)
			o = SROCE_OP_SEND_LAST_INV;
		else
			o = SROCE_OP_SEND_MIDDLE;
		break;
	case IB_UVERBS_WR_SEND:
	case IB_UVERBS_WR_SEND_WITH_IMM:
		if (first && last)
			o = op == IB_UVERBS_WR_SEND ? SROCE_OP_SEND_ONLY :
						      SROCE_OP_SEND_ONLY_IMM;
		else if (first)
			o = SROCE_OP_SEND_FIRST;
		else if (last)
			o = op == IB_UVERBS_WR_SEND ? SROCE_OP_SEND_LAST :
						      SROCE_OP_SEND_LAST_IMM;
		else
			o = SROCE_OP_SEND_MIDDLE;
		break;
	case IB_UVERBS_WR_RDMA_WRITE:
	case IB_UVERBS_WR_RDMA_WRITE_WITH_IMM:
		if (first && last)
			o = op == IB_UVERBS_WR_RDMA_WRITE ?
				SROCE_OP_WRITE_ONLY : SROCE_OP_WRITE_ONLY_IMM;
		else if (first)
			o = SROCE_OP_WRITE_FIRST;
		else if (last)
			o = op == IB_UVERBS_WR_RDMA_WRITE ?
				SROCE_OP_WRITE_LAST : SROCE_OP_WRITE_LAST_IMM;
		else
			o = SROCE_OP_WRITE_MIDDLE;
		break;
	case IB_UVERBS_WR_RDMA_READ:
		o = SROCE_OP_READ_REQUEST;
		break;
	case IB_UVERBS_WR_ATOMIC_CMP_AND_SWP:
		o = SROCE_OP_COMPARE_SWAP;
		break;
	case SROCE_WR_ATOMIC_WRITE:
		o = SROCE_OP_ATOMIC_WRITE;
		break;
	default:
		o = SROCE_OP_FETCH_ADD;
		break;
	}
	return transport | o;
}

/*
 * Will a packet follow the last one of the message at req->next at once?
 * Not when nothing more is posted, nor when the next WQE is a local
 * operation (REG_MR, LOCAL_INV, BIND_MW: what FRWR users such as NFS over
 * RDMA post between their sends), which sends nothing. Then the last
 * packet must ask for an ACK: nothing else would before the retransmission
 * timer. Fetches the next WQE to look at it.
 * Context: req_lock held.
 */
static bool sroce_req_more_to_send(struct sroce_qp *qp)
{
	struct sroce_req *req = &qp->req;

	if (req->next + 1 == req->fetched && !sroce_req_fetch(qp))
		return false;
	/* A WQE that failed its checks sends nothing either. */
	return sroce_sst(qp, req->next + 1)->status == IB_WC_SUCCESS &&
	       !sroce_op_is_local(sroce_swqe(qp, req->next + 1)->opcode);
}

/*
 * Send the next packet of the WQE at req->next. Return 0, -ENOMEM to try
 * again later, or -EACCES when a local key does not cover the data.
 */
static int sroce_req_send_packet(struct sroce_qp *qp)
{
	struct sroce_req *req = &qp->req;
	struct sroce_send_wqe *w = sroce_swqe(qp, req->next);
	struct sroce_swqe_state *st = sroce_sst(qp, req->next);
	u32 op = w->opcode, plen = 0, ext_len = 0;
	bool first = req->off == 0, last = true, ackreq = false, se;
	bool rdatomic = sroce_op_is_rdatomic(op);
	bool imm = op == IB_UVERBS_WR_SEND_WITH_IMM ||
		   op == IB_UVERBS_WR_RDMA_WRITE_WITH_IMM;
	bool inv = op == IB_UVERBS_WR_SEND_WITH_INV;
	bool uc = qp->ibqp.qp_type == IB_QPT_UC;
	bool write = op == IB_UVERBS_WR_RDMA_WRITE ||
		     op == IB_UVERBS_WR_RDMA_WRITE_WITH_IMM;
	struct sk_buff *skb;
	void *ext, *payload;
	int err;

	if (first)
		sroce_req_seek(qp, w, 0);
	if (sroce_op_is_atomic(op)) {
		ext_len = SROCE_ATMETH_BYTES;
	} else if (op == SROCE_WR_ATOMIC_WRITE) {
		ext_len = SROCE_RETH_BYTES;
		plen = sizeof(w->wr.atomic.swap);
	} else if (op == IB_UVERBS_WR_RDMA_READ) {
		ext_len = SROCE_RETH_BYTES;
	} else {
		plen = min(st->length - req->off, qp->mtu);
		last = req->off + plen == st->length;
		if (write && first)
			ext_len += SROCE_RETH_BYTES;
		if ((imm || inv) && last)
			ext_len += SROCE_IMMDT_BYTES;
		/* UC has no acknowledgments to ask for. */
		ackreq = !uc &&
			 (req->since_ackreq + 1 >= SROCE_ACKREQ_EVERY ||
			  (last && (qp->sq_sig_all ||
				    (w->send_flags & SROCE_SEND_F_SIGNALED) ||
				    !sroce_req_more_to_send(qp))));
	}
	se = last && (w->send_flags & SROCE_SEND_F_SOLICITED) &&
	     (op == IB_UVERBS_WR_SEND || imm || inv);

	skb = sroce_tx_alloc(qp, sroce_req_opcode(uc ? SROCE_TRANSPORT_UC :
						       SROCE_TRANSPORT_RC,
						  op, first, last),
			     op == IB_UVERBS_WR_RDMA_READ ?
			     sroce_read_next_psn(qp, st) : req->psn,
			     ackreq, se, ext_len, plen, &ext, &payload);
	if (!skb)
		return -ENOMEM;

	if (sroce_op_is_atomic(op)) {
		struct sroce_atmeth *a = ext;
		bool cas = op == IB_UVERBS_WR_ATOMIC_CMP_AND_SWP;

		a->va = cpu_to_be64(w->wr.atomic.remote_addr);
		a->rkey = cpu_to_be32(w->wr.atomic.rkey);
		a->swap_add = cpu_to_be64(cas ? w->wr.atomic.swap :
						w->wr.atomic.compare_add);
		a->compare = cpu_to_be64(cas ? w->wr.atomic.compare_add : 0);
	} else if (op == SROCE_WR_ATOMIC_WRITE) {
		struct sroce_reth *r = ext;

		r->va = cpu_to_be64(w->wr.atomic.remote_addr);
		r->rkey = cpu_to_be32(w->wr.atomic.rkey);
		r->len = cpu_to_be32(plen);
		memcpy(payload, &w->wr.atomic.swap, plen);
	} else if (op == IB_UVERBS_WR_RDMA_READ) {
		struct sroce_reth *r = ext;

		/* Asked again, a read asks only for what is still missing. */
		r->va = cpu_to_be64(w->wr.rdma.remote_addr + st->read_off);
		r->rkey = cpu_to_be32(w->wr.rdma.rkey);
		r->len = cpu_to_be32(st->length - st->read_off);
	} else if (first && write) {
		struct sroce_reth *r = ext;

		r->va = cpu_to_be64(w->wr.rdma.remote_addr);
		r->rkey = cpu_to_be32(w->wr.rdma.rkey);
		r->len = cpu_to_be32(st->length);
	}
	if (imm && last)
		memcpy(payload - SROCE_IMMDT_BYTES, &w->ex, SROCE_IMMDT_BYTES);
	if (inv && last) {
		/* The IETH: the rkey to invalidate, in the ImmDt's place. */
		__be32 rkey = cpu_to_be32(w->ex);

		memcpy(payload - SROCE_IETH_BYTES, &rkey, SROCE_IETH_BYTES);
	}

	if (op == SROCE_WR_ATOMIC_WRITE) {
		/* Its payload is in place already. */
	} else if (plen && (w->send_flags & SROCE_SEND_F_INLINE)) {
		memcpy(payload, (u8 *)(w + 1) + req->off, plen);
	} else if (plen) {
		err = sroce_sgl_gather(qp, sroce_swqe_sge(w), w->num_sge,
				       &req->sge, &req->sge_off, payload, plen);
		if (err) {
			kfree_skb(skb);
			return err;
		}
	}
	sroce_tx_send(qp, skb);

	req->since_ackreq = ackreq ? 0 : req->since_ackreq + 1;
	if (rdatomic) {
		req->psn = (st->first_psn + st->npsn) & SROCE_PSN_MASK;
		req->rd_pending++;
	} else {
		req->psn = (req->psn + 1) & SROCE_PSN_MASK;
	}
	req->off += plen;
	if (last) {
		req->next++;
		req->off = 0;
	}
	return 0;
}

/**
 * sroce_req_next_ready() - make sure a WQE is at req->next.
 * @qp: the queue pair, in RTS
 *
 * Fetches the next posted WQE when req->next has none; with nothing
 * posted, asks for a doorbell (and fetches what arrived meanwhile).
 * Context: req_lock held, BH disabled.
 * Return: false when nothing is posted (the doorbell is armed then).
 */
bool sroce_req_next_ready(struct sroce_qp *qp)
{
	while (qp->req.next == qp->req.fetched && !sroce_req_fetch(qp))
		if (sroce_qp_state(qp) != IB_QPS_RTS ||
		    sroce_ring_idle(&qp->sq, qp->req.fetched))
			return false;
	return true;
}

/*
 * A local operation at req->next: executed once, the first time it is
 * reached (a resend after a rewind passes over it), and completed when
 * everything before it has completed. False when it failed.
 */
static bool sroce_req_local(struct sroce_qp *qp, struct sroce_send_wqe *w,
			    struct sroce_swqe_state *st)
{
	struct sroce_req *req = &qp->req;
	int status = IB_WC_SUCCESS;

	if (req->off == 0 && req->next == req->started) {
		if (w->opcode == SROCE_WR_REG_MR)
			status = sroce_mr_fast_reg(qp, w->wr.rdma.remote_addr,
						   w->wr.rdma.rkey, w->ex);
		else if (w->opcode == IB_UVERBS_WR_BIND_MW)
			status = sroce_mw_bind(qp, w);
		else if (sroce_mr_invalidate(qp, w->ex))
			status = IB_WC_LOC_PROT_ERR;
		st->first_psn = req->psn;
		req->started++;
		if (status != IB_WC_SUCCESS) {
			st->status = status;
			/* Completions stay in order: fail when it is oldest. */
			if (req->head == req->next)
				sroce_req_fail(qp, status);
			return false;
		}
	}
	req->next++;
	/* Nothing before it is outstanding: it completes at once. */
	if (req->head + 1 == req->next)
		sroce_req_complete(qp, IB_WC_SUCCESS);
	return true;
}

/*
 * Send what the window, the read/atomic limit and fences allow, at most
 * @budget packets. Return true when it stopped only for the budget.
 * Context: req_lock held, BH disabled.
 */
static bool sroce_req_progress(struct sroce_qp *qp, int budget)
{
	struct sroce_req *req = &qp->req;
	u32 max_rd = max_t(u32, qp->attr.max_rd_atomic, 1);
	struct sroce_swqe_state *st;
	struct sroce_send_wqe *w;
	int err;

	if (qp->ibqp.qp_type == IB_QPT_UD || qp->ibqp.qp_type == IB_QPT_GSI)
		return sroce_ud_progress(qp, budget);
	while (budget > 0) {
		if (sroce_qp_state(qp) != IB_QPS_RTS || req->rnr_wait ||
		    qp->dead)
			return false;
		if (!sroce_req_next_ready(qp))
			return false;
		w = sroce_swqe(qp, req->next);
		st = sroce_sst(qp, req->next);
		if (st->status != IB_WC_SUCCESS) {
			/* Completions stay in order: wait for the rest. */
			if (req->head == req->next)
				sroce_req_fail(qp, st->status);
			return false;
		}
		if (sroce_psn_cmp(req->psn, req->una + SROCE_TX_WINDOW) >= 0)
			return false;
		if (req->off == 0 && sroce_op_is_rdatomic(w->opcode) &&
		    req->rd_pending >= max_rd)
			return false;
		if (req->off == 0 && (w->send_flags & SROCE_SEND_F_FENCE) &&
		    req->rd_pending)
			return false;
		if (sroce_op_is_local(w->opcode)) {
			if (!sroce_req_local(qp, w, st))
				return false;
			budget--;
			continue;
		}
		if (!sroce_tx_may_send(qp, SROCE_TX_PAUSED_REQ))
			return false;
		/* A first send fixes the PSNs; a resend reuses them. */
		if (req->off == 0 && req->next == req->started) {
			st->first_psn = req->psn;
			req->started++;
		}
		err = sroce_req_send_packet(qp);
		if (err == -ENOMEM)
			return true;
		if (err) {
			st->status = IB_WC_LOC_PROT_ERR;
			continue;
		}
		budget--;
		if (qp->ibqp.qp_type != IB_QPT_UC) {
			sroce_req_arm_timer(qp);
			continue;
		}
		/* UC: a message is done once its last packet is out. */
		req->una = req->psn;
		while (req->head != req->next)
			sroce_req_complete(qp, IB_WC_SUCCESS);
	}
	return true;
}

/* Continue sending from softirq context; the rest goes to req_work. */
static void sroce_req_progress_bh(struct sroce_qp *qp)
{
	if (sroce_req_progress(qp, SROCE_TX_BUDGET) && !qp->dead)
		queue_work_on(raw_smp_processor_id(), sroce_data_wq,
			      &qp->req_work);
}

/**
 * sroce_req_kick() - send what is posted, from process context.
 * @qp: the queue pair
 *
 * Runs in passes of SROCE_TX_BUDGET packets with softirqs allowed in
 * between, so looped-back packets are consumed as they are produced. A
 * user who keeps posting keeps a doorbell call busy only until a signal
 * comes; req_work goes on from there.
 */
void sroce_req_kick(struct sroce_qp *qp)
{
	bool more;

	do {
		if (signal_pending(current)) {
			if (!qp->dead)
				queue_work(sroce_data_wq, &qp->req_work);
			return;
		}
		spin_lock_bh(&qp->req_lock);
		more = sroce_req_progress(qp, SROCE_TX_BUDGET);
		spin_unlock(&qp->req_lock);
		/* Datagrams may go anywhere, this device included. */
		if (qp->path.loopback || qp->ibqp.qp_type == IB_QPT_UD ||
		    qp->ibqp.qp_type == IB_QPT_GSI)
			sroce_lo_drain(to_sdev(qp->ibqp.device));
		local_bh_enable();
		if (more)
			cond_resched();
	} while (more);
}

/**
 * sroce_req_kick_any() - send what is posted, from any context.
 * @qp: the queue pair
 *
 * Where sleeping is allowed this is sroce_req_kick(); with softirqs
 * allowed one budgeted pass runs here and req_work does the rest; in hard
 * interrupt context or with interrupts off, req_work does it all.
 */
void sroce_req_kick_any(struct sroce_qp *qp)
{
	if (preemptible()) {
		sroce_req_kick(qp);
	} else if (sroce_can_disable_bh()) {
		spin_lock_bh(&qp->req_lock);
		sroce_req_progress_bh(qp);
		spin_unlock_bh(&qp->req_lock);
	} else if (!qp->dead) {
		queue_work(sroce_data_wq, &qp->req_work);
	}
}

void sroce_req_work(struct work_struct *work)
{
	sroce_req_kick(container_of(work, struct sroce_qp, req_work));
}

/* Resend from PSN @psn: go back to the WQE and packet holding it. */
static void sroce_req_rewind(struct sroce_qp *qp, u32 psn)
{
	struct sroce_req *req = &qp->req;
	u32 end = req->off ? req->next + 1 : req->next;
	struct sroce_swqe_state *st;
	struct sroce_send_wqe *w;
	u32 i, rd = 0, k;

	for (i = req->head; i != end; i++) {
		st = sroce_sst(qp, i);
		w = sroce_swqe(qp, i);
		k = (psn - st->first_psn) & SROCE_PSN_MASK;
		if (k < st->npsn)
			break;
		if (sroce_op_is_rdatomic(w->opcode))
			rd++;
	}
	if (i == end)
		return;
	if (sroce_op_is_rdatomic(w->opcode)) {
		/* Asked again from the first response still missing. */
		req->off = 0;
		req->psn = st->first_psn;
	} else {
		req->off = k * qp->mtu;
		req->psn = psn;
		sroce_req_seek(qp, w, req->off);
	}
	req->next = i;
	req->rd_pending = rd;
	req->since_ackreq = 0;
}

/* Move the oldest unacknowledged PSN forward: progress resets retries. */
static void sroce_req_advance_una(struct sroce_qp *qp, u32 una)
{
	struct sroce_req *req = &qp->req;

	if (sroce_psn_cmp(una, req->una) <= 0)
		return;
	req->una = una & SROCE_PSN_MASK;
	req->retry_left = qp->attr.retry_cnt;
	req->rnr_left = qp->attr.rnr_retry;
}

/*
 * Complete WQEs all of whose PSNs are acknowledged by @apsn (inclusive).
 * A read or atomic cannot be completed by an ACK: one acknowledged past
 * it means its response was lost, so it is asked again.
 */
static void sroce_req_ack_upto(struct sroce_qp *qp, u32 apsn)
{
	struct sroce_req *req = &qp->req;
	struct sroce_swqe_state *st;
	struct sroce_send_wqe *w;
	u32 last;

	u32 una = apsn + 1;

	while (req->head != req->next) {
		st = sroce_sst(qp, req->head);
		w = sroce_swqe(qp, req->head);
		last = sroce_swqe_last_psn(st);
		if (sroce_op_is_rdatomic(w->opcode) &&
		    sroce_psn_cmp(st->first_psn, apsn) <= 0) {
			/* Only its own responses move past an unfinished read. */
			una = sroce_read_next_psn(qp, st);
			if (sroce_psn_cmp(last, apsn) <= 0)
				sroce_req_rewind(qp, una);
			break;
		}
		if (sroce_psn_cmp(last, apsn) > 0 || st->status)
			break;
		sroce_req_complete(qp, IB_WC_SUCCESS);
	}
	sroce_req_advance_una(qp, una);
}

static int sroce_nak_status(u8 code)
{
	switch (code) {
	case SROCE_NAK_INV_REQ:
		return IB_WC_REM_INV_REQ_ERR;
	case SROCE_NAK_REM_ACCESS:
		return IB_WC_REM_ACCESS_ERR;
	default:
		return IB_WC_REM_OP_ERR;
	}
}

static void sroce_req_rnr(struct sroce_qp *qp, u32 psn, u8 timer)
{
	struct sroce_req *req = &qp->req;

	sroce_count(to_sdev(qp->ibqp.device), SROCE_CNT_RNR_NAK_RCVD);
	if (qp->attr.rnr_retry != 7) {
		if (!req->rnr_left) {
			sroce_req_fail(qp, IB_WC_RNR_RETRY_EXC_ERR);
			return;
		}
		req->rnr_left--;
	}
	sroce_req_rewind(qp, psn);
	if (qp->dead)
		return;
	req->rnr_wait = true;
	hrtimer_start(&qp->timer,
		      ns_to_ktime((u64)sroce_rnr_usec[timer] * NSEC_PER_USEC),
		      HRTIMER_MODE_REL_SOFT);
}

static void sroce_req_aeth(struct sroce_qp *qp, u32 psn, u8 syn)
{
	struct sroce_dev *sdev = to_sdev(qp->ibqp.device);
	u8 val = syn & SROCE_AETH_VAL_MASK;

	switch (syn & SROCE_AETH_KIND_MASK) {
	case SROCE_AETH_ACK:
		sroce_req_ack_upto(qp, psn);
		break;
	case SROCE_AETH_RNR_NAK:
		sroce_req_ack_upto(qp, psn - 1);
		sroce_req_rnr(qp, psn, val);
		break;
	case SROCE_AETH_NAK:
		sroce_req_ack_upto(qp, psn - 1);
		if (val == SROCE_NAK_PSN_SEQ) {
			sroce_count(sdev, SROCE_CNT_SEQ_NAK_RCVD);
			sroce_req_rewind(qp, psn);
		} else {
			sroce_req_fail(qp, sroce_nak_status(val));
		}
		break;
	default:
		break;
	}
}

/*
 * A read response ahead of @expect, the one awaited: that one was lost, or
 * overtaken (paths through several CPUs' backlogs reorder). Responses are
 * taken only in order, so this one is dropped and the read must be asked
 * again from @expect in either case: do it now rather than at the
 * timeout. Once per gap, so the rest of the old answer, still arriving,
 * does not ask again and again; the timer stays armed in case the new
 * request or its answer is lost too.
 */
static void sroce_req_read_gap(struct sroce_qp *qp, u32 expect)
{
	struct sroce_req *req = &qp->req;

	if (req->gap_reasked && req->gap_psn == expect)
		return;
	req->gap_psn = expect;
	req->gap_reasked = true;
	sroce_count(to_sdev(qp->ibqp.device), SROCE_CNT_READ_GAP_REASK);
	sroce_req_rewind(qp, expect);
}

/*
 * A read response: place its payload, complete the read at the end.
 * False when it matches nothing outstanding.
 */
static bool sroce_req_read_resp(struct sroce_qp *qp, struct sroce_pkt *pkt)
{
	struct sroce_req *req = &qp->req;
	u8 op = pkt->opcode & SROCE_OP_MASK;
	struct sroce_swqe_state *st;
	struct sroce_send_wqe *w;
	u32 expect, want;
	bool last, ends;
	int err;

	/* A response acknowledges every request before it. */
	sroce_req_ack_upto(qp, pkt->psn - 1);
	if (req->head == req->next)
		return false;
	w = sroce_swqe(qp, req->head);
	st = sroce_sst(qp, req->head);
	if (w->opcode == SROCE_WR_ATOMIC_WRITE) {
		/* Answered by one empty read response. */
		if (pkt->psn != st->first_psn)
			return false;
		if (op != SROCE_OP_READ_RESPONSE_ONLY || pkt->payload_len) {
			sroce_req_fail(qp, IB_WC_BAD_RESP_ERR);
			return true;
		}
		sroce_req_advance_una(qp, pkt->psn + 1);
		sroce_req_complete(qp, IB_WC_SUCCESS);
		return true;
	}
	if (w->opcode != IB_UVERBS_WR_RDMA_READ)
		return false;
	expect = sroce_read_next_psn(qp, st);
	/* Behind: a duplicate. Ahead: see sroce_req_read_gap(). */
	if (pkt->psn != expect) {
		if (sroce_psn_cmp(pkt->psn, expect) > 0)
			sroce_req_read_gap(qp, expect);
		return false;
	}
	last = pkt->psn == sroce_swqe_last_psn(st);
	want = last ? st->length - st->read_off : qp->mtu;
	/*
	 * A read asked again answers from its first missing response on,
	 * starting over with FIRST (or ONLY): judge the opcode by the
	 * packet's place at the end of the read, not at its start.
	 */
	ends = op == SROCE_OP_READ_RESPONSE_LAST ||
	       op == SROCE_OP_READ_RESPONSE_ONLY;
	if (pkt->payload_len != want || ends != last) {
		sroce_req_fail(qp, IB_WC_BAD_RESP_ERR);
		return true;
	}
	err = sroce_sgl_place(qp, sroce_swqe_sge(w), w->num_sge, st->read_off,
			      pkt->skb, pkt->payload_off, pkt->payload_len);
	if (err) {
		sroce_req_fail(qp, err == -EMSGSIZE ? IB_WC_LOC_LEN_ERR :
						      IB_WC_LOC_PROT_ERR);
		return true;
	}
	st->read_off += pkt->payload_len;
	sroce_req_advance_una(qp, pkt->psn + 1);
	if (last)
		sroce_req_complete(qp, IB_WC_SUCCESS);
	return true;
}

/* An atomic's answer; false when it matches nothing outstanding. */
static bool sroce_req_atomic_ack(struct sroce_qp *qp, struct sroce_pkt *pkt)
{
	struct sroce_req *req = &qp->req;
	struct sroce_swqe_state *st;
	struct sroce_send_wqe *w;
	struct sroce_mr *mr;
	__be64 wire;
	u64 orig;

	sroce_req_ack_upto(qp, pkt->psn - 1);
	if (req->head == req->next)
		return false;
	w = sroce_swqe(qp, req->head);
	st = sroce_sst(qp, req->head);
	if (!sroce_op_is_atomic(w->opcode) || st->first_psn != pkt->psn)
		return false;
	memcpy(&wire, pkt->hdr + SROCE_BTH_BYTES + SROCE_AETH_BYTES,
	       sizeof(wire));
	orig = be64_to_cpu(wire);
	mr = sroce_mr_lookup(qp, sroce_swqe_sge(w)->lkey,
			     sroce_swqe_sge(w)->addr, sizeof(orig),
			     IB_ACCESS_LOCAL_WRITE);
	if (!mr) {
		sroce_req_fail(qp, IB_WC_LOC_PROT_ERR);
		return true;
	}
	sroce_mr_write(mr, sroce_swqe_sge(w)->addr, &orig, sizeof(orig));
	sroce_mr_put(mr);
	sroce_req_advance_una(qp, pkt->psn + 1);
	sroce_req_complete(qp, IB_WC_SUCCESS);
	return true;
}

/**
 * sroce_req_rcv() - a response for this QP's requester.
 * @qp: the queue pair
 * @pkt: ACK, atomic ACK or read response, validated
 *
 * Context: softirq, RCU read side.
 */
void sroce_req_rcv(struct sroce_qp *qp, struct sroce_pkt *pkt)
{
	struct sroce_req *req = &qp->req;
	u8 op = pkt->opcode & SROCE_OP_MASK;
	bool used = true;
	__be32 aeth;

	spin_lock_bh(&qp->req_lock);
	if (sroce_qp_state(qp) != IB_QPS_RTS && qp->state != IB_QPS_SQD) {
		sroce_count(to_sdev(qp->ibqp.device),
			    SROCE_CNT_RX_DROP_QP_STATE);
		goto out;
	}
	/* Only PSNs sent and not yet acknowledged mean anything. */
	if (sroce_psn_cmp(pkt->psn, req->psn) >= 0 ||
	    sroce_psn_cmp(pkt->psn, req->una - 1) < 0) {
		sroce_count(to_sdev(qp->ibqp.device), SROCE_CNT_RX_DROP_STALE);
		goto out;
	}

	if (op != SROCE_OP_READ_RESPONSE_MIDDLE)
		memcpy(&aeth, pkt->hdr + SROCE_BTH_BYTES, sizeof(aeth));
	switch (op) {
	case SROCE_OP_ACKNOWLEDGE:
		sroce_req_aeth(qp, pkt->psn,
			       be32_to_cpu(aeth) >> SROCE_AETH_SYN_SHIFT);
		break;
	case SROCE_OP_ATOMIC_ACKNOWLEDGE:
		used = sroce_req_atomic_ack(qp, pkt);
		break;
	default:
		used = sroce_req_read_resp(qp, pkt);
		break;
	}
	if (!used)
		sroce_count(to_sdev(qp->ibqp.device), SROCE_CNT_RX_DROP_STALE);
	if (req->una == req->psn && !req->rnr_wait)
		hrtimer_try_to_cancel(&qp->timer);
	sroce_req_progress_bh(qp);
out:
	spin_unlock_bh(&qp->req_lock);
}

/* Retransmission timeout or the end of an RNR wait. */
enum hrtimer_restart sroce_req_timer(struct hrtimer *timer)
{
	struct sroce_qp *qp = container_of(timer, struct sroce_qp, timer);
	struct sroce_req *req = &qp->req;

	spin_lock_bh(&qp->req_lock);
	if (qp->dead || sroce_qp_state(qp) != IB_QPS_RTS)
		goto out;
	if (req->rnr_wait) {
		req->rnr_wait = false;
	} else if (req->una == req->psn) {
		goto out;
	} else if (req->una != req->timer_una) {
		/* Progress since the timer was armed: wait once more. */
		sroce_req_arm_timer(qp);
		goto out;
	} else if (!req->retry_left) {
		sroce_req_fail(qp, IB_WC_RETRY_EXC_ERR);
		goto out;
	} else {
		req->retry_left--;
		sroce_count(to_sdev(qp->ibqp.device),
			    SROCE_CNT_RETRANSMIT_TIMEOUT);
		sroce_req_rewind(qp, req->una);
	}
	sroce_req_progress_bh(qp);
out:
	spin_unlock_bh(&qp->req_lock);
	return HRTIMER_NORESTART;
}

/**
 * sroce_req_init() - start the requester at the QP's send PSN.
 * @qp: queue pair entering RTS from RTR
 *
 * Context: req_lock held.
 */
void sroce_req_init(struct sroce_qp *qp)
{
	struct sroce_req *req = &qp->req;

	req->next = req->head;
	req->fetched = req->head;
	req->started = req->head;
	req->off = 0;
	req->psn = qp->attr.sq_psn;
	req->una = qp->attr.sq_psn;
	req->rd_pending = 0;
	req->since_ackreq = 0;
	req->retry_left = qp->attr.retry_cnt;
	req->rnr_left = qp->attr.rnr_retry;
	req->rnr_wait = false;
	req->gap_reasked = false;
}

/**
 * sroce_req_reset() - discard whatever is posted (a move to RESET).
 * @qp: the queue pair
 *
 * The send queue starts idle: the first post rings.
 * Context: req_lock held.
 */
void sroce_req_reset(struct sroce_qp *qp)
{
	struct sroce_req *req = &qp->req;

	req->head = sroce_ring_discard(&qp->sq);
	req->fetched = req->head;
	req->next = req->head;
	req->started = req->head;
	sroce_ring_arm(&qp->sq);
}

/**
 * sroce_req_flush() - complete every outstanding and posted send WQE.
 * @qp: queue pair in the error state
 *
 * In the error state every WQE completes, signaled or not, with a flush
 * error. Entries never copied are read from the ring for their wr_id.
 * Context: req_lock held.
 */
void sroce_req_flush(struct sroce_qp *qp)
{
	struct sroce_req *req = &qp->req;
	const struct sroce_send_wqe *src;
	int avail;
	u32 op;
	u64 wr_id;

	/* Ask for doorbells first, so a WQE posted after prod is read rings. */
	sroce_ring_arm(&qp->sq);
	while (req->head != req->fetched)
		sroce_req_complete(qp, IB_WC_WR_FLUSH_ERR);
	/* A broken ring has nothing more to flush: the QP failed already. */
	avail = sroce_ring_avail(&qp->sq, req->head, req->head);
	for (; avail > 0; avail--) {
		src = sroce_ring_entry(&qp->sq, req->head);
		wr_id = READ_ONCE(src->wr_id);
		op = READ_ONCE(src->opcode);
		/* The slot is read; free it before completing it. */
		sroce_ring_release(&qp->sq, ++req->head);
		sroce_req_post_cqe(qp, wr_id, op, 0, IB_WC_WR_FLUSH_ERR);
	}
	req->fetched = req->head;
	req->next = req->head;
	req->started = req->head;
	req->off = 0;
	req->rd_pending = 0;
	req->una = req->psn;
}
