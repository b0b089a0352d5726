// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The RC responder (IBA 9.7.4, 9.7.5): executes requests in PSN order in
 * the receive softirq, straight from the packet into the target memory.
 * Requests ahead of the expected PSN earn one sequence NAK; duplicates are
 * answered again (reads re-executed, atomics replayed from a record of
 * what was executed, sends and writes re-acknowledged), and a duplicate
 * read or atomic that matches nothing executed is dropped. ACKs are sent
 * only when the requester asks. UC drops what it cannot execute.
 *
 * Replies with data (read responses, atomic ACKs) go out in PSN order from
 * a small queue; an ACK for a later request waits behind them. Long reads
 * are answered in passes of SROCE_TX_BUDGET packets, the rest from
 * resp_work, so the receive backlog is never flooded.
 */
#include "sroce.h"
#include "sroce_hdr.h"
#include "sroce_trace.h"

/*
 * The credit code of an ACK (IBA 9.7.7.2): the receive WQEs posted and not
 * yet taken, as they are when the ACK leaves. None from an SRQ's QP: the
 * SRQ's WQEs are not its own to promise.
 */
static u8 sroce_resp_credit_code(struct sroce_qp *qp)
{
	int posted;

	if (qp->ibqp.srq)
		return SROCE_AETH_CREDIT_INVALID;
	lockdep_assert_held(&qp->resp_lock);
	posted = sroce_ring_avail(&qp->rq, qp->resp.rq_cons,
				  qp->resp.rq_cons);
	return sroce_aeth_credit_code(max(posted, 0));
}

/* An AETH with @syn (an ACK's: with its credit code) and the current MSN. */
static __be32 sroce_resp_aeth_value(struct sroce_qp *qp, u8 syn)
{
	if ((syn & SROCE_AETH_KIND_MASK) == SROCE_AETH_ACK)
		syn = SROCE_AETH_ACK | sroce_resp_credit_code(qp);
	return cpu_to_be32((u32)syn << SROCE_AETH_SYN_SHIFT |
			   (qp->resp.msn & SROCE_AETH_MSN_MASK));
}

static void sroce_resp_send_aeth(struct sroce_qp *qp, u8 syn, u32 psn)
{
	struct sk_buff *skb;
	void *ext, *payload;
	__be32 aeth;

	skb = sroce_tx_alloc(qp, SROCE_TRANSPORT_RC | SROCE_OP_ACKNOWLEDGE,
			     psn, false, false, SROCE_AETH_BYTES, 0, &ext,
			     &payload);
	if (!skb) {
		sroce_qp_count(qp, SROCE_CNT_TX_DROP);
		return;
	}
	aeth = sroce_resp_aeth_value(qp, syn);
	memcpy(ext, &aeth, sizeof(aeth));
	if ((syn & SROCE_AETH_KIND_MASK) != SROCE_AETH_ACK)
		trace_sroce_nak_sent(&qp->ibqp, psn, syn);
	sroce_tx_send(qp, skb);
}

/* An ACK or RNR NAK: after any queued replies, which precede it. */
static void sroce_resp_aeth(struct sroce_qp *qp, u8 syn, u32 psn)
{
	struct sroce_resp *resp = &qp->resp;

	/* UC acknowledges nothing. */
	if (qp->ibqp.qp_type == IB_QPT_UC)
		return;
	if (resp->rp_head != resp->rp_tail) {
		resp->aeth_valid = true;
		resp->aeth_syn = syn;
		resp->aeth_psn = psn;
		return;
	}
	sroce_resp_send_aeth(qp, syn, psn);
}

static void sroce_resp_ack(struct sroce_qp *qp, u32 psn)
{
	sroce_resp_aeth(qp, SROCE_AETH_ACK, psn);
}

/*
 * Complete the receive WQE being filled; @wc_flags (SROCE_WC_F_WITH_IMM or
 * _WITH_INV) says what @ex holds.
 */
static void sroce_resp_complete_recv_ex(struct sroce_qp *qp, int status,
					enum ib_wc_opcode opcode, u32 len,
					u32 ex, u32 wc_flags, bool se)
{
	struct sroce_resp *resp = &qp->resp;
	struct sroce_cqe cqe = {
		.wr_id = resp->rwqe->wr_id,
		.status = status,
		.opcode = opcode,
		.byte_len = len,
		.qp_num = qp->ibqp.qp_num,
		.src_qp = qp->attr.dest_qp_num,
		.port_num = SROCE_PORT,
	};

	if (status == IB_WC_SUCCESS) {
		cqe.ex = ex;
		cqe.wc_flags = wc_flags;
	}
	resp->in_send = false;
	sroce_rq_release(qp);
	sroce_cq_post(to_scq(qp->ibqp.recv_cq), &cqe, se);
}

/* The same with the immediate data, if any, as it came off the wire. */
static void sroce_resp_complete_recv(struct sroce_qp *qp, int status,
				     enum ib_wc_opcode opcode, u32 len,
				     const __be32 *imm, bool se)
{
	u32 ex = 0;

	if (imm)
		memcpy(&ex, imm, sizeof(ex));
	sroce_resp_complete_recv_ex(qp, status, opcode, len, ex,
				    imm ? SROCE_WC_F_WITH_IMM : 0, se);
}

/*
 * UC: give up the message in progress. A receive WQE it took serves the
 * next message; the rest of this one is dropped as it comes.
 */
static void sroce_resp_uc_drop_msg(struct sroce_resp *resp)
{
	if (resp->in_send) {
		resp->in_send = false;
		resp->uc_reuse = true;
	}
	resp->in_write = false;
}

/*
 * A request the responder cannot execute: NAK it and fail the QP. The NAK
 * goes out at once; the QP is dead, so ordering no longer matters.
 */
static void sroce_resp_nak(struct sroce_qp *qp, u8 code,
			   const struct sroce_pkt *pkt, int recv_status)
{
	struct sroce_resp *resp = &qp->resp;
	u32 psn = pkt->psn;

	/*
	 * UC has no NAK: the request is dropped with its message, and the
	 * QP lives on (IBA 9.9.2, class D). Only a fault of the local
	 * receive WQE fails it.
	 */
	if (qp->ibqp.qp_type == IB_QPT_UC && recv_status != IB_WC_LOC_PROT_ERR) {
		sroce_qp_rx_drop(qp, SROCE_CNT_RX_DROP_UC_ERROR, pkt);
		sroce_resp_uc_drop_msg(resp);
		resp->epsn = (psn + 1) & SROCE_PSN_MASK;
		return;
	}
	if (qp->ibqp.qp_type != IB_QPT_UC) {
		sroce_qp_count(qp, SROCE_CNT_NAK_SENT);
		sroce_resp_send_aeth(qp, SROCE_AETH_NAK | code, psn);
	}
	/* A receive WQE the message was filling completes in error too. */
	if (resp->in_send)
		sroce_resp_complete_recv(qp, recv_status ? recv_status :
					 IB_WC_REM_INV_REQ_ERR, IB_WC_RECV,
					 resp->recv_off, NULL, false);
	sroce_qp_set_error(qp);
}

static void sroce_resp_rnr(struct sroce_qp *qp, u32 psn)
{
	sroce_qp_count(qp, SROCE_CNT_RNR_NAK_SENT);
	sroce_resp_aeth(qp, SROCE_AETH_RNR_NAK |
			(qp->attr.min_rnr_timer & SROCE_AETH_VAL_MASK), psn);
}

/*
 * Take the next receive WQE for the message @pkt starts. False if there
 * is none: then the request earns an RNR NAK, unless the QP has failed.
 */
static bool sroce_resp_fetch_rwqe(struct sroce_qp *qp,
				  const struct sroce_pkt *pkt)
{
	struct sroce_resp *resp = &qp->resp;

	/* UC: the WQE of a message lost midway serves the next one. */
	if (resp->uc_reuse) {
		resp->uc_reuse = false;
		resp->in_send = true;
		resp->recv_off = 0;
		return true;
	}
	if (sroce_rq_take(qp)) {
		resp->in_send = true;
		resp->recv_off = 0;
		return true;
	}
	if (qp->ibqp.qp_type == IB_QPT_UC)	/* no RNR: dropped */
		sroce_qp_rx_drop(qp, SROCE_CNT_RX_DROP_NO_RECV, pkt);
	else if (sroce_qp_state(qp) != IB_QPS_ERR)
		sroce_resp_rnr(qp, pkt->psn);
	return false;
}

/*
 * UC ordering (IBA 9.8.3): a PSN other than the expected one means packets
 * were lost; the message they belonged to is dropped, and a new one may
 * start with this packet. Return false when the packet is to be dropped.
 */
static bool sroce_resp_uc_in_order(struct sroce_qp *qp, struct sroce_pkt *pkt,
				   u8 op)
{
	struct sroce_resp *resp = &qp->resp;
	bool starts = op == SROCE_OP_SEND_FIRST || op == SROCE_OP_SEND_ONLY ||
		      op == SROCE_OP_SEND_ONLY_IMM ||
		      op == SROCE_OP_WRITE_FIRST || op == SROCE_OP_WRITE_ONLY ||
		      op == SROCE_OP_WRITE_ONLY_IMM;

	if (pkt->psn != resp->epsn) {
		sroce_qp_count(qp, SROCE_CNT_RX_OUT_OF_SEQ);
		sroce_resp_uc_drop_msg(resp);
		resp->epsn = pkt->psn;
	}
	if (!starts && !resp->in_send && !resp->in_write) {
		resp->epsn = (pkt->psn + 1) & SROCE_PSN_MASK;
		return false;
	}
	return true;
}

/*
 * Does the payload of a SEND or WRITE packet fit: a path MTU's worth in
 * one that does not end the message, at most that in one that does? A
 * unit of the device's loop must fill as many packets as it stands for,
 * all but the last full.
 */
static bool sroce_resp_len_ok(const struct sroce_qp *qp,
			      const struct sroce_pkt *pkt, bool last)
{
	u32 full = pkt->npsn * qp->mtu;

	if (!last)
		return pkt->payload_len == full;
	return pkt->payload_len <= full &&
	       (pkt->npsn == 1 || pkt->payload_len > full - qp->mtu);
}

static void sroce_resp_send(struct sroce_qp *qp, struct sroce_pkt *pkt,
			    u8 op)
{
	struct sroce_resp *resp = &qp->resp;
	bool first = op == SROCE_OP_SEND_FIRST || op == SROCE_OP_SEND_ONLY ||
		     op == SROCE_OP_SEND_ONLY_IMM || op == SROCE_OP_SEND_ONLY_INV;
	bool last = op != SROCE_OP_SEND_FIRST && op != SROCE_OP_SEND_MIDDLE;
	bool imm = op == SROCE_OP_SEND_ONLY_IMM ||
		   op == SROCE_OP_SEND_LAST_IMM;
	bool inv = op == SROCE_OP_SEND_ONLY_INV || op == SROCE_OP_SEND_LAST_INV;
	__be32 ieth;
	int err;

	if (first != !resp->in_send || resp->in_write ||
	    !sroce_resp_len_ok(qp, pkt, last)) {
		sroce_resp_nak(qp, SROCE_NAK_INV_REQ, pkt,
			       IB_WC_REM_INV_REQ_ERR);
		return;
	}
	if (first && !sroce_resp_fetch_rwqe(qp, pkt))
		return;
	err = sroce_sgl_place(qp, (struct sroce_sge *)(resp->rwqe + 1),
			      resp->rwqe->num_sge, resp->recv_off, pkt->skb,
			      pkt->payload_off, pkt->payload_len);
	if (err == -EMSGSIZE) {
		sroce_resp_nak(qp, SROCE_NAK_INV_REQ, pkt,
			       IB_WC_LOC_LEN_ERR);
		return;
	}
	if (err) {
		sroce_resp_nak(qp, SROCE_NAK_REM_OP, pkt,
			       IB_WC_LOC_PROT_ERR);
		return;
	}
	resp->recv_off += pkt->payload_len;
	resp->epsn = (resp->epsn + pkt->npsn) & SROCE_PSN_MASK;
	if (last && inv) {
		/* SEND with invalidate: an FRMR or type 2 MW, by rkey. */
		memcpy(&ieth, pkt->hdr + SROCE_BTH_BYTES, sizeof(ieth));
		if (sroce_mr_invalidate(qp, be32_to_cpu(ieth))) {
			sroce_resp_nak(qp, SROCE_NAK_INV_REQ, pkt,
				       IB_WC_LOC_ACCESS_ERR);
			return;
		}
		resp->msn++;
		sroce_resp_complete_recv_ex(qp, IB_WC_SUCCESS, IB_WC_RECV,
					    resp->recv_off, be32_to_cpu(ieth),
					    SROCE_WC_F_WITH_INV, pkt->se);
	} else if (last) {
		resp->msn++;
		sroce_resp_complete_recv(qp, IB_WC_SUCCESS, IB_WC_RECV,
					 resp->recv_off,
					 imm ? (const __be32 *)(pkt->hdr +
							       SROCE_BTH_BYTES) :
					       NULL,
					 pkt->se);
	}
	if (pkt->ackreq)
		sroce_resp_ack(qp, sroce_pkt_last_psn(pkt));
}

static void sroce_resp_write(struct sroce_qp *qp, struct sroce_pkt *pkt,
			     u8 op)
{
	struct sroce_resp *resp = &qp->resp;
	bool first = op == SROCE_OP_WRITE_FIRST || op == SROCE_OP_WRITE_ONLY ||
		     op == SROCE_OP_WRITE_ONLY_IMM;
	bool last = op != SROCE_OP_WRITE_FIRST && op != SROCE_OP_WRITE_MIDDLE;
	bool imm = op == SROCE_OP_WRITE_ONLY_IMM ||
		   op == SROCE_OP_WRITE_LAST_IMM;
	u32 len = pkt->payload_len;
	struct sroce_mr *mr;

	if (first != !resp->in_write || resp->in_send ||
	    !sroce_resp_len_ok(qp, pkt, last)) {
		sroce_resp_nak(qp, SROCE_NAK_INV_REQ, pkt, 0);
		return;
	}
	if (first) {
		const struct sroce_reth *reth = (const void *)(pkt->hdr +
							       SROCE_BTH_BYTES);
		u32 rlen = be32_to_cpu(reth->len);

		if (!(qp->attr.qp_access_flags & IB_ACCESS_REMOTE_WRITE)) {
			sroce_resp_nak(qp, SROCE_NAK_REM_ACCESS, pkt, 0);
			return;
		}
		if (rlen > SROCE_MAX_MSG_SIZE || (last && rlen != len) ||
		    (!last && rlen <= len)) {
			sroce_resp_nak(qp, SROCE_NAK_INV_REQ, pkt, 0);
			return;
		}
		/* A zero-length write checks no key (IBA 9.7.4.1.4). */
		if (rlen && !sroce_mr_check(qp, be32_to_cpu(reth->rkey),
					    be64_to_cpu(reth->va), rlen,
					    IB_ACCESS_REMOTE_WRITE)) {
			sroce_resp_nak(qp, SROCE_NAK_REM_ACCESS, pkt, 0);
			return;
		}
		resp->write_va = be64_to_cpu(reth->va);
		resp->write_rkey = be32_to_cpu(reth->rkey);
		resp->write_left = rlen;
		resp->write_len = rlen;
	} else if (len > resp->write_left || (last && len != resp->write_left)) {
		sroce_resp_nak(qp, SROCE_NAK_INV_REQ, pkt, 0);
		return;
	}
	/*
	 * With immediate data the message needs a receive WQE: check before
	 * the message counts as started, so that the retry after an RNR NAK
	 * starts it again.
	 */
	if (imm && !resp->in_send && !sroce_resp_fetch_rwqe(qp, pkt))
		return;
	resp->in_write = true;
	if (len) {
		/* The region may have gone since the first packet. */
		int err = -EACCES;

		mr = sroce_mr_lookup(qp, resp->write_rkey,
				     resp->write_va, len,
				     IB_ACCESS_REMOTE_WRITE);
		if (mr) {
			err = sroce_mr_copy_to_skb(mr, resp->write_va,
						   pkt->skb, pkt->payload_off,
						   len);
			sroce_mr_put(mr);
		}
		if (err) {
			sroce_resp_nak(qp, SROCE_NAK_REM_ACCESS, pkt,
				       IB_WC_REM_ACCESS_ERR);
			return;
		}
		resp->write_va += len;
		resp->write_left -= len;
	}
	resp->epsn = (resp->epsn + pkt->npsn) & SROCE_PSN_MASK;
	if (last) {
		resp->in_write = false;
		resp->msn++;
		if (imm)
			sroce_resp_complete_recv(qp, IB_WC_SUCCESS,
						 IB_WC_RECV_RDMA_WITH_IMM,
						 resp->write_len,
						 (const __be32 *)(pkt->hdr +
								  pkt->hdr_len -
								  SROCE_IMMDT_BYTES),
						 pkt->se);
	}
	if (pkt->ackreq)
		sroce_resp_ack(qp, sroce_pkt_last_psn(pkt));
}

/*
 * Send one packet of a queued reply; true when the reply is done. A read
 * answered to a queue pair of this device goes, as the user's pages, in
 * units of several PSNs (SROCE_LO_UNIT_NPSN), counted from the reply's
 * first PSN, which for a read asked again is its first missing response.
 * @may_unit false sends one MTU, after a unit failed to attach.
 */
static bool sroce_resp_reply_step(struct sroce_qp *qp, struct sroce_reply *r,
				  bool may_unit)
{
	u32 plen = min(r->left, qp->mtu);
	bool last, zcopy;
	u32 ext_len = 0, npsn = 1;
	struct sroce_mr *mr = NULL;
	struct sk_buff *skb;
	void *ext, *payload;
	__be32 aeth;
	__be64 orig;
	int err;
	u8 op;

	if (may_unit && qp->path.loopback && !qp->kernel &&
	    r->kind == SROCE_REPLY_READ && r->left > qp->mtu) {
		u32 unit = min(r->left, sroce_lo_unit_bytes(qp));

		if (unit >= SROCE_TX_ZCOPY_MIN) {
			plen = unit;
			npsn = sroce_msg_npsn(qp, plen);
		}
	}
	/*
	 * A user's read data goes as references to its pinned pages. Bytes
	 * its owner changes meanwhile are a race the owner made, as on any
	 * RNIC; on a wire the ICRC then fails and the requester asks again.
	 */
	zcopy = !qp->kernel && plen >= SROCE_TX_ZCOPY_MIN;
	last = plen == r->left;
	if (r->kind == SROCE_REPLY_ATOMIC) {
		op = SROCE_OP_ATOMIC_ACKNOWLEDGE;
		ext_len = SROCE_AETH_BYTES + SROCE_ATMACK_BYTES;
		plen = 0;
	} else {
		if (r->first && last)
			op = SROCE_OP_READ_RESPONSE_ONLY;
		else if (r->first)
			op = SROCE_OP_READ_RESPONSE_FIRST;
		else if (last)
			op = SROCE_OP_READ_RESPONSE_LAST;
		else
			op = SROCE_OP_READ_RESPONSE_MIDDLE;
		if (op != SROCE_OP_READ_RESPONSE_MIDDLE)
			ext_len = SROCE_AETH_BYTES;
	}
again:
	skb = sroce_tx_alloc(qp, SROCE_TRANSPORT_RC | op, r->psn, false, false,
			     ext_len, plen, &ext, zcopy ? NULL : &payload);
	if (!skb) {
		sroce_qp_count(qp, SROCE_CNT_TX_DROP);
		return false;
	}
	sroce_lo_cb(skb)->npsn = npsn;
	/* After the allocation: an FRMR access spans only the copy. */
	if (plen) {
		mr = sroce_mr_lookup(qp, r->rkey, r->va, plen,
				     IB_ACCESS_REMOTE_READ);
		/* Deregistered mid-read: the requester will retry. */
		if (!mr) {
			kfree_skb(skb);
			return true;
		}
	}
	if (zcopy) {
		err = sroce_mr_attach(mr, r->va, plen, skb);
		sroce_mr_put(mr);
		if (!err)
			err = sroce_tx_end_frags(skb);
		if (err) {
			kfree_skb(skb);
			if (err == -ENOMEM) {
				sroce_qp_count(qp, SROCE_CNT_TX_DROP);
				return false;
			}
			/* A unit in more pieces than fragments: one packet. */
			if (npsn > 1)
				return sroce_resp_reply_step(qp, r, false);
			/* Pages that cannot be referenced: copy them. */
			zcopy = false;
			goto again;
		}
	}
	if (ext_len) {
		aeth = sroce_resp_aeth_value(qp, SROCE_AETH_ACK);
		memcpy(ext, &aeth, sizeof(aeth));
	}
	if (r->kind == SROCE_REPLY_ATOMIC) {
		orig = cpu_to_be64(r->orig);
		memcpy(ext + SROCE_AETH_BYTES, &orig, sizeof(orig));
	} else if (plen && !zcopy) {
		sroce_mr_copy_from(mr, r->va, payload, plen);
		sroce_mr_put(mr);
	}
	if (npsn > 1)
		sroce_qp_count(qp, SROCE_CNT_TX_LOCAL_UNITS);
	sroce_tx_send_train(qp, &qp->resp.train, skb);
	r->first = false;
	r->psn = (r->psn + npsn) & SROCE_PSN_MASK;
	r->va += plen;
	r->left -= plen;
	return r->kind == SROCE_REPLY_ATOMIC || last;
}

/*
 * Send packets of queued replies, at most @budget, in a train the caller
 * flushes. Return true when it stopped for the budget with replies left.
 */
static bool sroce_resp_reply_pass(struct sroce_qp *qp, int budget)
{
	struct sroce_resp *resp = &qp->resp;
	struct sroce_reply *r;

	while (resp->rp_head != resp->rp_tail) {
		if (qp->dead || sroce_qp_state(qp) == IB_QPS_ERR) {
			resp->rp_head = resp->rp_tail;
			resp->aeth_valid = false;
			return false;
		}
		if (budget-- <= 0)
			return true;
		if (!sroce_tx_may_send(qp, SROCE_TX_PAUSED_RESP))
			return false;
		r = &resp->replies[resp->rp_head % SROCE_REPLY_SLOTS];
		if (sroce_resp_reply_step(qp, r, true))
			resp->rp_head++;
	}
	return false;
}

/*
 * Send queued replies, then a waiting ACK once none is left; at most
 * @budget packets. Return true when replies remain for another pass.
 */
static bool sroce_resp_send_replies(struct sroce_qp *qp, int budget)
{
	struct sroce_resp *resp = &qp->resp;
	bool more = sroce_resp_reply_pass(qp, budget);

	sroce_tx_train_flush(qp, &resp->train);
	if (resp->rp_head == resp->rp_tail && resp->aeth_valid) {
		resp->aeth_valid = false;
		sroce_resp_send_aeth(qp, resp->aeth_syn, resp->aeth_psn);
	}
	return more;
}

void sroce_resp_work(struct work_struct *work)
{
	struct sroce_qp *qp = container_of(work, struct sroce_qp, resp_work);
	int passes = SROCE_WORK_PASSES;
	bool more, loops;

	do {
		/* Once: a path being set may change it (INIT to RTR). */
		loops = READ_ONCE(qp->path.loopback);
		local_bh_disable();
		if (loops)
			sroce_lo_will_drain();
		spin_lock(&qp->resp_lock);
		more = sroce_resp_send_replies(qp, SROCE_TX_BUDGET);
		spin_unlock(&qp->resp_lock);
		/* Like a sender's doorbell, deliver what went to this device. */
		if (loops)
			sroce_lo_drain(to_sdev(qp->ibqp.device));
		local_bh_enable();
		if (more)
			cond_resched();
	} while (more && --passes);
	/* Yield to the pool's other items, as sroce_sq_work() does. */
	if (more && !qp->dead)
		queue_work_on(raw_smp_processor_id(), sroce_data_wq,
			      &qp->resp_work);
}

static bool sroce_resp_replies_full(const struct sroce_resp *resp)
{
	return resp->rp_tail - resp->rp_head >= SROCE_REPLY_SLOTS;
}

/* Queue a reply; false when the queue is full (the requester retries). */
static bool sroce_resp_queue(struct sroce_qp *qp, const struct sroce_reply *r)
{
	struct sroce_resp *resp = &qp->resp;

	if (sroce_resp_replies_full(resp))
		return false;
	resp->replies[resp->rp_tail++ % SROCE_REPLY_SLOTS] = *r;
	if (sroce_resp_send_replies(qp, SROCE_TX_BUDGET))
		queue_work_on(raw_smp_processor_id(), sroce_data_wq,
			      &qp->resp_work);
	return true;
}

/* Remember an executed read, atomic, ATOMIC WRITE or FLUSH. */
static void sroce_resp_record(struct sroce_resp *resp,
			      const struct sroce_rd_record *rec)
{
	struct sroce_rd_record *slot =
		&resp->rd_done[resp->rd_next++ % SROCE_RD_RECORDS];

	*slot = *rec;
	slot->valid = true;
}

/* The remembered request of opcode @op whose PSNs hold @psn, or NULL. */
static const struct sroce_rd_record *
sroce_resp_find_record(const struct sroce_resp *resp, u32 psn, u8 op)
{
	const struct sroce_rd_record *rec;
	unsigned int i;

	for (i = 0; i < SROCE_RD_RECORDS; i++) {
		rec = &resp->rd_done[i];
		if (rec->valid && rec->op == op &&
		    ((psn - rec->psn) & SROCE_PSN_MASK) < rec->npsn)
			return rec;
	}
	return NULL;
}

/*
 * A read asked again may start past the first byte (the requester got
 * part of the answer), never outside what was asked first, nor with
 * another key.
 */
static bool sroce_resp_read_within(const struct sroce_rd_record *rec,
				   const struct sroce_pkt *pkt)
{
	const struct sroce_reth *reth = (const void *)(pkt->hdr +
						       SROCE_BTH_BYTES);
	u64 va = be64_to_cpu(reth->va);
	u32 len = be32_to_cpu(reth->len);

	return be32_to_cpu(reth->rkey) == rec->rkey && va >= rec->va &&
	       va - rec->va <= rec->len && len <= rec->len - (va - rec->va);
}

/* Check a read request and fill in its reply; false (NAKed) if refused. */
static bool sroce_resp_read_check(struct sroce_qp *qp, struct sroce_pkt *pkt,
				  struct sroce_reply *r)
{
	const struct sroce_reth *reth = (const void *)(pkt->hdr +
						       SROCE_BTH_BYTES);

	*r = (struct sroce_reply){
		.kind = SROCE_REPLY_READ,
		.psn = pkt->psn,
		.va = be64_to_cpu(reth->va),
		.rkey = be32_to_cpu(reth->rkey),
		.left = be32_to_cpu(reth->len),
		.first = true,
	};
	if (!(qp->attr.qp_access_flags & IB_ACCESS_REMOTE_READ) ||
	    (r->left && !sroce_mr_check(qp, r->rkey, r->va, r->left,
					IB_ACCESS_REMOTE_READ))) {
		sroce_resp_nak(qp, SROCE_NAK_REM_ACCESS, pkt, 0);
		return false;
	}
	if (r->left > SROCE_MAX_MSG_SIZE) {
		sroce_resp_nak(qp, SROCE_NAK_INV_REQ, pkt, 0);
		return false;
	}
	return true;
}

/*
 * A new read: counted (PSNs, MSN, the record a duplicate is matched
 * against) before its first response leaves, whose AETH carries the MSN
 * that the requester's credits count from. Without room to answer, it is
 * dropped for the requester to ask again.
 */
static void sroce_resp_read(struct sroce_qp *qp, struct sroce_pkt *pkt)
{
	struct sroce_resp *resp = &qp->resp;
	struct sroce_rd_record rec = { .psn = pkt->psn,
				       .op = SROCE_OP_READ_REQUEST };
	struct sroce_reply r;

	if (!sroce_resp_read_check(qp, pkt, &r) ||
	    sroce_resp_replies_full(resp))
		return;
	rec.rkey = r.rkey;
	rec.va = r.va;
	rec.len = r.left;
	rec.npsn = sroce_msg_npsn(qp, rec.len);
	sroce_resp_record(resp, &rec);
	resp->epsn = (resp->epsn + rec.npsn) & SROCE_PSN_MASK;
	resp->msn++;
	sroce_resp_queue(qp, &r);
}

static void sroce_resp_atomic(struct sroce_qp *qp, struct sroce_pkt *pkt,
			      u8 op)
{
	const struct sroce_atmeth *a = (const void *)(pkt->hdr +
						      SROCE_BTH_BYTES);
	struct sroce_resp *resp = &qp->resp;
	u64 va = be64_to_cpu(a->va);
	struct sroce_reply r = {
		.kind = SROCE_REPLY_ATOMIC,
		.psn = pkt->psn,
	};
	struct sroce_rd_record rec = { .psn = pkt->psn, .npsn = 1, .op = op };
	struct sroce_mr *mr;
	u64 *target;

	if (!(qp->attr.qp_access_flags & IB_ACCESS_REMOTE_ATOMIC)) {
		sroce_resp_nak(qp, SROCE_NAK_REM_ACCESS, pkt, 0);
		return;
	}
	/* Atomics need a naturally aligned target (IBA 9.4.5). */
	if (va & 7) {
		sroce_resp_nak(qp, SROCE_NAK_INV_REQ, pkt, 0);
		return;
	}
	mr = sroce_mr_lookup(qp, be32_to_cpu(a->rkey), va, 8,
			     IB_ACCESS_REMOTE_ATOMIC);
	if (!mr) {
		sroce_resp_nak(qp, SROCE_NAK_REM_ACCESS, pkt, 0);
		return;
	}
	if (sroce_resp_replies_full(resp)) {
		sroce_mr_put(mr);
		return;	/* no room to answer: let the requester retry */
	}

	target = sroce_mr_map_u64(mr, va);
	if (op == SROCE_OP_COMPARE_SWAP)
		r.orig = cmpxchg64(target, be64_to_cpu(a->compare),
				   be64_to_cpu(a->swap_add));
	else
		r.orig = atomic64_fetch_add(be64_to_cpu(a->swap_add),
					    (atomic64_t *)target);
	kunmap_local(target);
	sroce_mr_put(mr);

	rec.orig = r.orig;
	sroce_resp_record(resp, &rec);
	resp->epsn = (resp->epsn + 1) & SROCE_PSN_MASK;
	resp->msn++;
	sroce_resp_queue(qp, &r);
}

/*
 * ATOMIC WRITE (IBA annex A19): its eight bytes are stored at once, and
 * the answer is an empty read response, queued in order with the others.
 */
static void sroce_resp_atomic_write(struct sroce_qp *qp,
				    struct sroce_pkt *pkt)
{
	const struct sroce_reth *reth = (const void *)(pkt->hdr +
						       SROCE_BTH_BYTES);
	struct sroce_resp *resp = &qp->resp;
	u64 va = be64_to_cpu(reth->va);
	struct sroce_reply r = {
		.kind = SROCE_REPLY_READ,
		.psn = pkt->psn,
		.first = true,
	};
	struct sroce_mr *mr;
	u64 value, *target;

	if (!(qp->attr.qp_access_flags & IB_ACCESS_REMOTE_WRITE)) {
		sroce_resp_nak(qp, SROCE_NAK_REM_ACCESS, pkt, 0);
		return;
	}
	if (be32_to_cpu(reth->len) != sizeof(value) ||
	    pkt->payload_len != sizeof(value) || (va & 7) ||
	    skb_copy_bits(pkt->skb, pkt->payload_off, &value, sizeof(value))) {
		sroce_resp_nak(qp, SROCE_NAK_INV_REQ, pkt, 0);
		return;
	}
	mr = sroce_mr_lookup(qp, be32_to_cpu(reth->rkey), va, sizeof(value),
			     IB_ACCESS_REMOTE_WRITE);
	if (!mr) {
		sroce_resp_nak(qp, SROCE_NAK_REM_ACCESS, pkt, 0);
		return;
	}
	if (sroce_resp_replies_full(resp)) {
		sroce_mr_put(mr);
		return;	/* no room to answer: let the requester retry */
	}
	target = sroce_mr_map_u64(mr, va);
	WRITE_ONCE(*target, value);
	kunmap_local(target);
	sroce_mr_put(mr);
	sroce_resp_record(resp, &(struct sroce_rd_record){
		.psn = pkt->psn, .npsn = 1, .op = SROCE_OP_ATOMIC_WRITE });
	resp->epsn = (resp->epsn + 1) & SROCE_PSN_MASK;
	resp->msn++;
	sroce_resp_queue(qp, &r);
}

/*
 * FLUSH (IBA annex A19). Every earlier request of this QP was stored by
 * the CPU into coherent memory before this one was taken, so global
 * visibility takes only a barrier ahead of the answer, an empty read
 * response. Persistence is not offered: no region can hold that right.
 */
static void sroce_resp_flush_op(struct sroce_qp *qp, struct sroce_pkt *pkt)
{
	const struct sroce_feth *fh = (const void *)(pkt->hdr +
						     SROCE_BTH_BYTES);
	const struct sroce_reth *reth = (const void *)(fh + 1);
	u32 feth = be32_to_cpu(fh->bits);
	u32 plt = feth & SROCE_FETH_PLT_MASK;
	u32 sel = (feth & SROCE_FETH_SEL_MASK) >> SROCE_FETH_SEL_SHIFT;
	u32 rkey = be32_to_cpu(reth->rkey);
	struct sroce_resp *resp = &qp->resp;
	struct sroce_reply r = {
		.kind = SROCE_REPLY_READ,
		.psn = pkt->psn,
		.first = true,
	};
	struct sroce_mr *mr;

	if (!plt || (plt & ~(SROCE_FLUSH_PLT_GLOBAL |
			     SROCE_FLUSH_PLT_PERSISTENT)) ||
	    sel > SROCE_FLUSH_SEL_REGION) {
		sroce_resp_nak(qp, SROCE_NAK_INV_REQ, pkt, 0);
		return;
	}
	if (!SROCE_ACCESS_FLUSH_GLOBAL || (plt & SROCE_FLUSH_PLT_PERSISTENT) ||
	    !(qp->attr.qp_access_flags & SROCE_ACCESS_FLUSH_GLOBAL)) {
		sroce_resp_nak(qp, SROCE_NAK_REM_ACCESS, pkt, 0);
		return;
	}
	if (sel == SROCE_FLUSH_SEL_REGION)
		mr = sroce_mr_lookup_region(qp, rkey, SROCE_ACCESS_FLUSH_GLOBAL);
	else
		mr = sroce_mr_lookup(qp, rkey, be64_to_cpu(reth->va),
				     be32_to_cpu(reth->len),
				     SROCE_ACCESS_FLUSH_GLOBAL);
	if (!mr) {
		sroce_resp_nak(qp, SROCE_NAK_REM_ACCESS, pkt, 0);
		return;
	}
	sroce_mr_put(mr);
	if (sroce_resp_replies_full(resp))
		return;	/* no room to answer: let the requester retry */
	wmb();
	sroce_resp_record(resp, &(struct sroce_rd_record){
		.psn = pkt->psn, .npsn = 1, .op = SROCE_OP_FLUSH });
	resp->epsn = (resp->epsn + 1) & SROCE_PSN_MASK;
	resp->msn++;
	sroce_resp_queue(qp, &r);
}

/*
 * A read or atomic asked again means, but for a duplicate the network
 * made, that the requester went back to @psn and ignores every answer
 * past it: queued answers from @psn on are stale. Drop them, or the new
 * answer waits behind them all, long enough for the requester to give up.
 */
static void sroce_resp_drop_replies_from(struct sroce_resp *resp, u32 psn)
{
	u32 i;

	for (i = resp->rp_head; i != resp->rp_tail; i++) {
		if (sroce_psn_cmp(resp->replies[i % SROCE_REPLY_SLOTS].psn,
				  psn) >= 0) {
			resp->rp_tail = i;
			return;
		}
	}
}

/*
 * A request before the expected PSN: answer it again, change nothing. A
 * read, atomic, ATOMIC WRITE or FLUSH is answered only if it is one the
 * responder executed; anything else behind the PSN (a forgery, or a
 * request older than it remembers) is dropped, so that one packet cannot
 * fail the QP or cut the answers it still owes.
 */
static void sroce_resp_duplicate(struct sroce_qp *qp, struct sroce_pkt *pkt,
				 u8 op)
{
	struct sroce_resp *resp = &qp->resp;
	const struct sroce_rd_record *rec;
	struct sroce_reply r = {
		.kind = SROCE_REPLY_READ,
		.psn = pkt->psn,
		.first = true,
	};

	switch (op) {
	case SROCE_OP_READ_REQUEST:
	case SROCE_OP_ATOMIC_WRITE:
	case SROCE_OP_FLUSH:
	case SROCE_OP_COMPARE_SWAP:
	case SROCE_OP_FETCH_ADD:
		rec = sroce_resp_find_record(resp, pkt->psn, op);
		if (!rec || (op == SROCE_OP_READ_REQUEST &&
			     !sroce_resp_read_within(rec, pkt))) {
			sroce_qp_rx_drop(qp, SROCE_CNT_RX_DROP_DUP_UNMATCHED,
					 pkt);
			return;
		}
		sroce_qp_count(qp, SROCE_CNT_RX_DUPLICATE);
		sroce_resp_drop_replies_from(resp, pkt->psn);
		if (op == SROCE_OP_READ_REQUEST) {
			if (sroce_resp_read_check(qp, pkt, &r))
				sroce_resp_queue(qp, &r);
		} else if (op == SROCE_OP_COMPARE_SWAP ||
			   op == SROCE_OP_FETCH_ADD) {
			r.kind = SROCE_REPLY_ATOMIC;
			r.orig = rec->orig;
			sroce_resp_queue(qp, &r);
		} else {
			/* Done once; the answer carries nothing to replay. */
			sroce_resp_queue(qp, &r);
		}
		break;
	default:
		/*
		 * A SEND or WRITE again: its ACK was lost or never asked for,
		 * and the requester waits for one. ACK whatever the AckReq
		 * bit says (C9-105, as rxe does).
		 */
		sroce_qp_count(qp, SROCE_CNT_RX_DUPLICATE);
		sroce_resp_ack(qp, (resp->epsn - 1) & SROCE_PSN_MASK);
		break;
	}
}

/*
 * A single-packet request (READ, atomic, FLUSH) inside a SEND or WRITE
 * that has not ended is invalid: NAK it and report true.
 */
static bool sroce_resp_mid_message(struct sroce_qp *qp, struct sroce_pkt *pkt)
{
	if (!qp->resp.in_send && !qp->resp.in_write)
		return false;
	sroce_resp_nak(qp, SROCE_NAK_INV_REQ, pkt, 0);
	return true;
}

/**
 * sroce_resp_rcv() - a request for this QP's responder.
 * @qp: the queue pair
 * @pkt: SEND, WRITE, READ request, atomic or FLUSH, validated
 *
 * Context: softirq, RCU read side.
 */
void sroce_resp_rcv(struct sroce_qp *qp, struct sroce_pkt *pkt)
{
	struct sroce_resp *resp = &qp->resp;
	u8 op = pkt->opcode & SROCE_OP_MASK;
	enum ib_qp_state state;
	int diff;

	spin_lock_bh(&qp->resp_lock);
	state = sroce_qp_state(qp);
	if (state != IB_QPS_RTR && state != IB_QPS_RTS &&
	    state != IB_QPS_SQD) {
		sroce_qp_rx_drop(qp, SROCE_CNT_RX_DROP_QP_STATE, pkt);
		goto out;
	}
	if (qp->ibqp.qp_type == IB_QPT_UC) {
		if (!sroce_resp_uc_in_order(qp, pkt, op))
			goto out;
		goto execute;
	}
	diff = sroce_psn_cmp(pkt->psn, resp->epsn);
	if (diff < 0) {
		sroce_resp_duplicate(qp, pkt, op);
		goto out;
	}
	if (diff > 0) {
		sroce_qp_rx_drop(qp, SROCE_CNT_RX_OUT_OF_SEQ, pkt);
		if (!resp->nak_seq_sent) {
			resp->nak_seq_sent = true;
			sroce_resp_aeth(qp, SROCE_AETH_NAK | SROCE_NAK_PSN_SEQ,
					resp->epsn);
		}
		goto out;
	}
	resp->nak_seq_sent = false;

execute:
	switch (op) {
	case SROCE_OP_SEND_FIRST:
	case SROCE_OP_SEND_MIDDLE:
	case SROCE_OP_SEND_LAST:
	case SROCE_OP_SEND_LAST_IMM:
	case SROCE_OP_SEND_ONLY:
	case SROCE_OP_SEND_ONLY_IMM:
	case SROCE_OP_SEND_LAST_INV:
	case SROCE_OP_SEND_ONLY_INV:
		sroce_resp_send(qp, pkt, op);
		break;
	case SROCE_OP_WRITE_FIRST:
	case SROCE_OP_WRITE_MIDDLE:
	case SROCE_OP_WRITE_LAST:
	case SROCE_OP_WRITE_LAST_IMM:
	case SROCE_OP_WRITE_ONLY:
	case SROCE_OP_WRITE_ONLY_IMM:
		sroce_resp_write(qp, pkt, op);
		break;
	case SROCE_OP_READ_REQUEST:
		if (sroce_resp_mid_message(qp, pkt))
			break;
		sroce_resp_read(qp, pkt);
		break;
	case SROCE_OP_COMPARE_SWAP:
	case SROCE_OP_FETCH_ADD:
		if (sroce_resp_mid_message(qp, pkt))
			break;
		sroce_resp_atomic(qp, pkt, op);
		break;
	case SROCE_OP_ATOMIC_WRITE:
		if (sroce_resp_mid_message(qp, pkt))
			break;
		sroce_resp_atomic_write(qp, pkt);
		break;
	case SROCE_OP_FLUSH:
		if (sroce_resp_mid_message(qp, pkt))
			break;
		sroce_resp_flush_op(qp, pkt);
		break;
	default:
		/* Opcodes of other transports never get here. */
		sroce_resp_nak(qp, SROCE_NAK_INV_REQ, pkt, 0);
		break;
	}
out:
	spin_unlock_bh(&qp->resp_lock);
}

/**
 * sroce_resp_init() - start the responder at the QP's receive PSN.
 * @qp: queue pair entering RTR
 *
 * Context: resp_lock held.
 */
void sroce_resp_init(struct sroce_qp *qp)
{
	struct sroce_resp *resp = &qp->resp;

	lockdep_assert_held(&qp->resp_lock);
	resp->epsn = qp->attr.rq_psn;
	resp->msn = 0;
	resp->nak_seq_sent = false;
	resp->in_send = false;
	resp->in_write = false;
	resp->rp_head = 0;
	resp->rp_tail = 0;
	resp->aeth_valid = false;
	resp->last_wqe_event = false;
	resp->uc_reuse = false;
	memset(resp->rd_done, 0, sizeof(resp->rd_done));
}

/**
 * sroce_resp_reset() - drop the taken and posted receive WQEs (to RESET).
 * @qp: the queue pair
 *
 * Context: resp_lock held.
 */
void sroce_resp_reset(struct sroce_qp *qp)
{
	lockdep_assert_held(&qp->resp_lock);
	qp->resp.in_send = false;
	sroce_rq_reset(qp);
}

/**
 * sroce_resp_flush() - complete every taken and posted receive WQE.
 * @qp: queue pair in the error state
 *
 * Context: resp_lock held.
 */
void sroce_resp_flush(struct sroce_qp *qp)
{
	struct sroce_resp *resp = &qp->resp;

	lockdep_assert_held(&qp->resp_lock);
	/* Taken WQEs first: one being filled, or UC's kept for reuse. */
	if (resp->in_send || resp->uc_reuse)
		sroce_resp_complete_recv(qp, IB_WC_WR_FLUSH_ERR, IB_WC_RECV, 0,
					 NULL, false);
	resp->uc_reuse = false;
	if (qp->ibqp.srq && !resp->last_wqe_event) {
		resp->last_wqe_event = true;
		sroce_qp_event(qp, IB_EVENT_QP_LAST_WQE_REACHED);
	}
	sroce_rq_flush(qp);
	resp->in_write = false;
	resp->rp_head = resp->rp_tail;
	resp->aeth_valid = false;
}
