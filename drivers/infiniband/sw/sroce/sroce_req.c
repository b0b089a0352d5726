// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The RC and UC requester (IBA 9.7): the send queue's WQEs cut into
 * packets of the path MTU (or, to a queue pair of the same device, units
 * of several, SROCE_LO_UNIT_NPSN) and sent within a window of
 * SROCE_TX_WINDOW unacknowledged PSNs, local operations (REG_MR,
 * LOCAL_INV, BIND_MW) executed in order, and the retransmission timer
 * armed. What comes back is the completer's (sroce_comp.c).
 *
 * ACKs are requested only where they matter: on a message's last packet
 * when it is signaled, or when no packet follows at once (nothing more is
 * posted, a local operation is next, or the next waits for end-to-end
 * credits, which only an ACK brings), every SROCE_ACKREQ_EVERY packets
 * to keep the window moving, and more often when congestion control
 * paces the queue pair so slowly that those would come too late. One ACK
 * completes everything before it.
 */
#include "sroce_sq.h"
#include "sroce_hdr.h"

/* The local ACK timeout, 4.096 us * 2^timeout; 0: none (wait forever). */
u64 sroce_req_rto_ns(struct sroce_qp *qp)
{
	u8 t = READ_ONCE(qp->attr.timeout);

	return t ? 4096ULL << t : 0;
}

/**
 * sroce_req_arm_timer() - arm the timer for what is unacknowledged.
 * @qp: RC queue pair
 *
 * For the tail-loss probe's timeout when one is due (sroce_comp.c), else
 * for the retransmission timeout. A timer already queued is left alone:
 * its expiry looks at what changed since it was armed.
 * Context: req_lock held.
 */
void sroce_req_arm_timer(struct sroce_qp *qp)
{
	struct sroce_req *req = &qp->req;
	u64 rto = sroce_req_rto_ns(qp), pto;

	lockdep_assert_held(&qp->req_lock);
	/* Timeout 0 means wait forever (IBA 9.7.6.1.3). */
	if (!rto || qp->dead || hrtimer_is_queued(&qp->timer))
		return;
	pto = sroce_comp_pto_ns(qp, rto);
	req->timer_una = req->una;
	req->timer_psn = req->psn;
	req->timer_probe = pto != 0;
	req->timer_ns = pto ?: rto;
	hrtimer_start(&qp->timer, ns_to_ktime(req->timer_ns),
		      HRTIMER_MODE_REL_SOFT);
}

/* Position the SGE cursor of the WQE being sent at byte @off. */
void sroce_req_seek(struct sroce_qp *qp, struct sroce_send_wqe *w,
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
 * End-to-end credits (IBA 9.7.7.2). Each ACK of a responder without an
 * SRQ tells how many receive WQEs it has posted beyond the messages it
 * completed; the last message they cover is the LSN. A message that takes
 * a receive WQE starts only up to one past the LSN: that one probes (an
 * RNR NAK at worst), the rest would only be refused and sent again, and
 * all the packets behind them dropped. Messages that take none (writes,
 * reads, atomics) move the limit on by one each. A responder that gives
 * no count lifts the limit for good.
 *
 * May the WQE at @idx start, as far as credits go?
 */
static bool sroce_req_credit_ok(struct sroce_qp *qp, u32 idx)
{
	const struct sroce_req *req = &qp->req;

	/* Started already: resent on the credit it had. */
	if (idx != req->started || req->credit_unlimited ||
	    qp->ibqp.qp_type != IB_QPT_RC)
		return true;
	return !sroce_op_takes_recv(sroce_swqe(qp, idx)->opcode) ||
	       sroce_psn_cmp(req->ssn + 1, req->lsn + 1) <= 0;
}

/*
 * The WQE at req->next starts: it is the next message. One beyond the
 * LSN probes: its packet that takes a receive WQE (a SEND's first, a
 * WRITE with immediate's last) asks for an ACK, and nothing goes past it
 * until that comes (sroce_req_window_open()). An RNR NAK then refuses
 * that packet alone: the rest of the message, sent behind it, would
 * arrive out of sequence and be dropped, at every retry.
 */
static void sroce_req_credit_take(struct sroce_qp *qp,
				  const struct sroce_send_wqe *w,
				  const struct sroce_swqe_state *st)
{
	struct sroce_req *req = &qp->req;

	req->ssn = (req->ssn + 1) & SROCE_AETH_MSN_MASK;
	if (!sroce_op_takes_recv(w->opcode)) {
		req->lsn = (req->lsn + 1) & SROCE_AETH_MSN_MASK;
		return;
	}
	if (req->credit_unlimited || qp->ibqp.qp_type != IB_QPT_RC ||
	    sroce_psn_cmp(req->ssn, req->lsn) <= 0)
		return;
	req->credit_probe = true;
	req->credit_probe_psn = w->opcode == IB_UVERBS_WR_RDMA_WRITE_WITH_IMM ?
				sroce_swqe_last_psn(st) : st->first_psn;
	req->credit_probe_end = (req->credit_probe_psn + 1) & SROCE_PSN_MASK;
}

/* Does the packet of @npsn PSNs from req->psn hold the probe's PSN? */
static bool sroce_req_sends_probe(const struct sroce_req *req, u32 npsn)
{
	return req->credit_probe &&
	       sroce_psn_cmp(req->credit_probe_psn, req->psn) >= 0 &&
	       sroce_psn_cmp(req->credit_probe_psn, req->psn + npsn) < 0;
}

/**
 * sroce_req_credit_update() - take the credit count of an ACK.
 * @qp: RC queue pair
 * @aeth: the AETH of an ACK, a read response or an atomic ACK, host order;
 *	a NAK's carries none and is passed over
 *
 * Context: req_lock held.
 */
void sroce_req_credit_update(struct sroce_qp *qp, u32 aeth)
{
	struct sroce_req *req = &qp->req;
	u8 syn = aeth >> SROCE_AETH_SYN_SHIFT;
	u8 code = syn & SROCE_AETH_VAL_MASK;
	u32 lsn;

	lockdep_assert_held(&qp->req_lock);
	if (req->credit_unlimited ||
	    (syn & SROCE_AETH_KIND_MASK) != SROCE_AETH_ACK)
		return;
	if (code == SROCE_AETH_CREDIT_INVALID) {
		req->credit_unlimited = true;
		req->credit_wait = false;
		return;
	}
	lsn = (aeth + sroce_aeth_credits(code)) & SROCE_AETH_MSN_MASK;
	if (sroce_psn_cmp(lsn, req->lsn) > 0) {
		req->lsn = lsn;
		req->credit_wait = false;
	}
}

/*
 * Will a packet follow the last one of the message at req->next at once?
 * Not when nothing more is posted, nor when the next WQE is a local
 * operation (REG_MR, LOCAL_INV, BIND_MW: what FRWR users such as NFS over
 * RDMA post between their sends), which sends nothing, nor when it waits
 * for credits, which only an ACK brings. Then the last
 * packet must ask for an ACK: nothing else would before the retransmission
 * timer. Fetches the next WQE to look at it.
 * Context: req_lock held.
 */
static bool sroce_req_more_to_send(struct sroce_qp *qp)
{
	struct sroce_req *req = &qp->req;

	lockdep_assert_held(&qp->req_lock);
	if (req->next + 1 == req->fetched && !sroce_sq_fetch(qp))
		return false;
	/* A WQE that failed its checks sends nothing either. */
	return sroce_sst(qp, req->next + 1)->status == IB_WC_SUCCESS &&
	       !sroce_op_is_local(sroce_swqe(qp, req->next + 1)->opcode) &&
	       sroce_req_credit_ok(qp, req->next + 1);
}

/*
 * Payload bytes the next packet of a SEND or WRITE may take: to a queue
 * pair of this device, when @may_unit says its payload may go as the
 * user's pages, a unit of several path MTUs (SROCE_LO_UNIT_NPSN), else
 * one. One SGE only: the pieces of several may need more fragments than a
 * packet has. Not a tail-loss probe: the responder may hold the PSNs
 * before the one it probes, and takes a unit that begins before its
 * expected PSN as a duplicate, dropping the rest.
 */
static u32 sroce_req_max_payload(const struct sroce_qp *qp,
				 const struct sroce_send_wqe *w, bool may_unit)
{
	if (!may_unit || !qp->path.loopback || qp->req.probe_ackreq ||
	    w->num_sge != 1)
		return qp->mtu;
	return sroce_lo_unit_bytes(qp);
}

/*
 * Send the next packet of the WQE at req->next, its payload attached
 * rather than copied where @may_zcopy allows, a unit of several PSNs
 * where @may_unit does. Return 0, -ENOMEM to try again later, or -EACCES
 * when a local key does not cover the data.
 */
static int sroce_req_build_packet(struct sroce_qp *qp, bool may_zcopy,
				  bool may_unit)
{
	struct sroce_req *req = &qp->req;
	struct sroce_send_wqe *w = sroce_swqe(qp, req->next);
	struct sroce_swqe_state *st = sroce_sst(qp, req->next);
	u32 op = w->opcode, plen = 0, ext_len = 0, npsn = 1;
	bool first = req->off == 0, last = true, ackreq = false, se;
	bool probe = false;
	bool rdatomic = sroce_op_is_rdatomic(op);
	bool imm = op == IB_UVERBS_WR_SEND_WITH_IMM ||
		   op == IB_UVERBS_WR_RDMA_WRITE_WITH_IMM;
	bool inv = op == IB_UVERBS_WR_SEND_WITH_INV;
	bool uc = qp->ibqp.qp_type == IB_QPT_UC;
	/*
	 * A user's RC payload may go as references to its pinned pages: the
	 * WQE completes only once the peer acknowledged it, so the bytes
	 * cannot change before they are read. UC completes at once, and
	 * kernel consumers' memory need not be pages one may reference.
	 */
	bool may_attach = may_zcopy && !uc && !qp->kernel &&
			  op != SROCE_WR_ATOMIC_WRITE &&
			  !(w->send_flags & SROCE_SEND_F_INLINE);
	bool write = op == IB_UVERBS_WR_RDMA_WRITE ||
		     op == IB_UVERBS_WR_RDMA_WRITE_WITH_IMM;
	struct sk_buff *skb;
	void *ext, *payload = NULL;
	bool zcopy;
	u8 *hdr_end;
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
		u32 max = sroce_req_max_payload(qp, w, may_attach && may_unit);

		/*
		 * Units end at multiples of their size into the message,
		 * whatever PSN a resend starts from: the responder holds
		 * whole units, and one that starts before its expected PSN
		 * would be a duplicate whose rest it drops.
		 */
		plen = min(st->length - req->off, max - req->off % max);
		npsn = sroce_msg_npsn(qp, plen);
		last = req->off + plen == st->length;
		if (write && first)
			ext_len += SROCE_RETH_BYTES;
		if ((imm || inv) && last)
			ext_len += SROCE_IMMDT_BYTES;
		probe = sroce_req_sends_probe(req, npsn);
		/* UC has no acknowledgments to ask for. */
		ackreq = !uc &&
			 (req->probe_ackreq || probe ||
			  req->since_ackreq + npsn >= SROCE_ACKREQ_EVERY ||
			  (last && (qp->sq_sig_all ||
				    (w->send_flags & SROCE_SEND_F_SIGNALED) ||
				    !sroce_req_more_to_send(qp))) ||
			  (READ_ONCE(qp->rp.limited) &&
			   sroce_cc_ackreq_due(qp, plen, req->since_ackreq)));
	}
	se = last && (w->send_flags & SROCE_SEND_F_SOLICITED) &&
	     (op == IB_UVERBS_WR_SEND || imm || inv);
	zcopy = may_attach && plen >= SROCE_TX_ZCOPY_MIN;

	skb = sroce_tx_alloc(qp, sroce_req_opcode(uc ? SROCE_TRANSPORT_UC :
						       SROCE_TRANSPORT_RC,
						  op, first, last),
			     op == IB_UVERBS_WR_RDMA_READ ?
			     sroce_read_next_psn(qp, st) : req->psn,
			     ackreq, se, ext_len, plen, &ext,
			     zcopy ? NULL : &payload);
	if (!skb)
		return -ENOMEM;
	sroce_lo_cb(skb)->npsn = npsn;
	hdr_end = (u8 *)ext + ext_len;

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
		r->len = cpu_to_be32(sroce_comp_read_ask_len(qp, req->next));
	} else if (first && write) {
		struct sroce_reth *r = ext;

		r->va = cpu_to_be64(w->wr.rdma.remote_addr);
		r->rkey = cpu_to_be32(w->wr.rdma.rkey);
		r->len = cpu_to_be32(st->length);
	}
	if (imm && last)
		memcpy(hdr_end - SROCE_IMMDT_BYTES, &w->ex, SROCE_IMMDT_BYTES);
	if (inv && last) {
		/* The IETH: the rkey to invalidate, in the ImmDt's place. */
		__be32 rkey = cpu_to_be32(w->ex);

		memcpy(hdr_end - SROCE_IETH_BYTES, &rkey, SROCE_IETH_BYTES);
	}

	if (op == SROCE_WR_ATOMIC_WRITE) {
		/* Its payload is in place already. */
	} else if (zcopy) {
		/* The SGE cursor moves only with a packet that goes. */
		u32 sge = req->sge, sge_off = req->sge_off;

		err = sroce_sgl_attach(qp, sroce_swqe_sge(w), w->num_sge,
				       &sge, &sge_off, skb, plen);
		if (!err)
			err = sroce_tx_end_frags(skb);
		if (err) {
			kfree_skb(skb);
			/* A unit in more pieces than fragments: one packet. */
			if (err == -E2BIG && npsn > 1)
				return sroce_req_build_packet(qp, true, false);
			/* Pages that cannot be referenced: copy them. */
			if (err == -E2BIG || err == -EOPNOTSUPP)
				return sroce_req_build_packet(qp, false, false);
			return err;
		}
		req->sge = sge;
		req->sge_off = sge_off;
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
	if (npsn > 1)
		sroce_qp_count(qp, SROCE_CNT_TX_LOCAL_UNITS);
	sroce_tx_send_train(qp, &req->train, skb);

	/*
	 * Time one round trip at a time, on a packet that draws an answer at
	 * once and was never sent before, and at most one a jiffy: a stream
	 * of small messages would otherwise read the clock twice for each
	 * (4 % of a 64 B SEND stream's time under emulation), and SRTT, which
	 * only sets the probe's timeout, needs no more.
	 */
	if ((ackreq || rdatomic) && !uc && !req->rtt_start_ns &&
	    sroce_psn_cmp(req->psn, req->high_psn) >= 0) {
		unsigned long now = jiffies;

		if (now != req->rtt_jiffy) {
			req->rtt_jiffy = now;
			req->rtt_psn = req->psn;
			req->rtt_start_ns = ktime_get_ns();
		}
	}
	/*
	 * The hold ends after the widest packet that carried the probe's
	 * PSN: a tail-loss probe resends the last PSN of a unit alone, and
	 * the ACK of a whole unit is taken only up to the PSN sent last.
	 */
	if (probe && sroce_psn_cmp(req->psn + npsn, req->credit_probe_end) > 0)
		req->credit_probe_end = (req->psn + npsn) & SROCE_PSN_MASK;
	req->probe_ackreq = false;
	req->rto_sent = req->rto_hold;
	req->since_ackreq = ackreq ? 0 : req->since_ackreq + npsn;
	if (rdatomic) {
		req->psn = (st->first_psn + st->npsn) & SROCE_PSN_MASK;
		req->rd_pending++;
	} else {
		req->psn = (req->psn + npsn) & SROCE_PSN_MASK;
	}
	if (sroce_psn_cmp(req->psn, req->high_psn) > 0)
		req->high_psn = req->psn;
	req->off += plen;
	if (last) {
		req->next++;
		req->off = 0;
	}
	return 0;
}

static int sroce_req_send_packet(struct sroce_qp *qp)
{
	return sroce_req_build_packet(qp, true, true);
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
				sroce_sq_fail(qp, status);
			return false;
		}
	}
	req->next++;
	/* Nothing before it is outstanding: it completes at once. */
	if (req->head + 1 == req->next)
		sroce_sq_complete(qp, IB_WC_SUCCESS);
	return true;
}

/*
 * May the WQE @w at req->next start or go on, as far as the window (one
 * packet after a timeout, see sroce_comp_timer()), credits, the
 * read/atomic limit and fences go (not the pacer, nor the queues below)?
 */
static bool sroce_req_window_open(struct sroce_qp *qp,
				  const struct sroce_send_wqe *w)
{
	struct sroce_req *req = &qp->req;
	u32 max_rd = max_t(u32, qp->attr.max_rd_atomic, 1);

	if (sroce_psn_cmp(req->psn, req->una + SROCE_TX_WINDOW) >= 0 ||
	    (req->rto_hold && req->rto_sent))
		return false;
	/*
	 * With nothing unacknowledged, no ACK is coming to move the limit: a
	 * peer whose MSN or credits undercount would stall the QP for good.
	 * Never so with a correct one (all acknowledged, LSN >= SSN).
	 */
	if (!sroce_req_credit_ok(qp, req->next) && req->una != req->psn) {
		if (!req->credit_wait) {
			req->credit_wait = true;
			sroce_qp_count(qp, SROCE_CNT_CREDIT_WAIT);
		}
		return false;
	}
	/*
	 * Nothing past a probe until it found a receive; after the credit
	 * check, so that a message credits hold back counts as a wait.
	 */
	if (req->credit_probe &&
	    sroce_psn_cmp(req->psn, req->credit_probe_end) >= 0)
		return false;
	if (req->off == 0 && sroce_op_is_rdatomic(w->opcode) &&
	    req->rd_pending >= max_rd)
		return false;
	return !(req->off == 0 && (w->send_flags & SROCE_SEND_F_FENCE) &&
		 req->rd_pending);
}

/**
 * sroce_req_has_more() - has the requester more to do right now?
 * @qp: RC queue pair in RTS
 *
 * Context: req_lock held, BH disabled.
 * Return: true when a WQE is posted and the window, credits, the
 * read/atomic limit and fences allow it: only the pacer or the queues
 * below may hold it.
 */
bool sroce_req_has_more(struct sroce_qp *qp)
{
	struct sroce_req *req = &qp->req;

	lockdep_assert_held(&qp->req_lock);
	return sroce_sq_next_ready(qp) &&
	       sroce_sst(qp, req->next)->status == IB_WC_SUCCESS &&
	       sroce_req_window_open(qp, sroce_swqe(qp, req->next));
}

/* sroce_req_progress() but for the train it leaves to its caller. */
static bool sroce_req_send_pass(struct sroce_qp *qp, int budget)
{
	struct sroce_req *req = &qp->req;
	struct sroce_swqe_state *st;
	struct sroce_send_wqe *w;
	int err;

	lockdep_assert_held(&qp->req_lock);
	while (budget > 0) {
		if (sroce_qp_state(qp) != IB_QPS_RTS || req->rnr_wait ||
		    qp->dead)
			return false;
		if (!sroce_sq_next_ready(qp))
			return false;
		w = sroce_swqe(qp, req->next);
		st = sroce_sst(qp, req->next);
		if (st->status != IB_WC_SUCCESS) {
			/* Completions stay in order: wait for the rest. */
			if (req->head == req->next)
				sroce_sq_fail(qp, st->status);
			return false;
		}
		if (!sroce_req_window_open(qp, w))
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
			sroce_req_credit_take(qp, w, st);
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
			sroce_sq_complete(qp, IB_WC_SUCCESS);
	}
	return true;
}

/*
 * Send what the window, the read/atomic limit and fences allow, at most
 * @budget packets, the packets to the peer in trains. Return true when it
 * stopped only for the budget.
 * Context: req_lock held, BH disabled.
 */
bool sroce_req_progress(struct sroce_qp *qp, int budget)
{
	bool more = sroce_req_send_pass(qp, budget);

	sroce_tx_train_flush(qp, &qp->req.train);
	return more;
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

	lockdep_assert_held(&qp->req_lock);
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
	req->read_held = 0;
	req->timer_probe = false;
	req->probe_ackreq = false;
	req->probed = false;
	req->rto_hold = false;
	req->stalled_ns = 0;
	req->nak_recovery = false;
	req->srtt_ns = 0;
	req->rtt_start_ns = 0;
	/* The first round trip is timed at once. */
	req->rtt_jiffy = jiffies - 1;
	req->high_psn = req->psn;
	/* Until the first ACK, one message may go (IBA 9.7.7.2). */
	req->ssn = 0;
	req->lsn = 0;
	req->credit_unlimited = false;
	req->credit_wait = false;
	req->credit_probe = false;
}
