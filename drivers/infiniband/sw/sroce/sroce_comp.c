// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The RC completer (IBA 9.7.5, 9.9): ACKs, NAKs, read responses and
 * atomic acknowledgments complete send WQEs in order. Loss recovery is
 * go-back-N from the oldest unacknowledged PSN (a rewind of the
 * requester), driven by a high-resolution timer (the QP's local ACK
 * timeout, 4.096 us * 2^t) or by a sequence NAK; RNR NAKs wait out the
 * responder's timer. The responder answers duplicates, re-executes reads
 * and replays atomics. Read responses that come past a missing one are
 * kept, and only what is missing is asked for again.
 *
 * A loss at the tail of a burst reveals itself to nobody: no later packet
 * makes the responder NAK, and the timeout is long (67 ms at perftest's
 * default). So the timer first runs for a tail-loss probe's timeout, 2 *
 * SRTT: if by then nothing was acknowledged and nothing more was sent, the
 * last packet goes again, asking for an ACK (RFC 8985's probe, applied to
 * IBA's go-back-N). If it had arrived, the responder answers the duplicate
 * with an ACK; if it was lost, the probe replaces it; if an earlier one
 * was lost, the probe is ahead and draws a sequence NAK, unless the
 * responder NAKed that gap already (it does once). If that NAK came and
 * the resend after it was lost, the probe goes back to the oldest
 * unacknowledged PSN instead (see sroce_comp_probe()); if the NAK itself
 * was lost, only the timeout helps. Any peer handles a resent packet, so
 * this needs nothing of it.
 *
 * After a timeout only the oldest unacknowledged packet goes, until it is
 * answered, as TCP starts again from one segment: the responder's answer
 * to it (an ACK for all it has, if it had the packet) moves the send
 * position past what arrived before, and only what is missing goes again.
 */
#include "sroce_sq.h"
#include "sroce_hdr.h"
#include "sroce_trace.h"

static bool tlp = true;
module_param(tlp, bool, 0644);
MODULE_PARM_DESC(tlp, "Send tail-loss probes before RC retransmission timeouts (default: on)");

/*
 * A floor for the scheduler, not the wire: an answer that has arrived can
 * wait milliseconds behind busy threads before the completer sees it. At
 * 1 ms, 1 MiB reads over loopback drew 3 to 6 probes per run on a clean
 * link, each one resending a read that had not been lost; at 10 ms, none.
 * Still well inside perftest's default timeout of 67 ms.
 */
static unsigned int tlp_min_us = 10000;
module_param(tlp_min_us, uint, 0644);
MODULE_PARM_DESC(tlp_min_us, "Shortest tail-loss probe timeout, in microseconds (default: 10000)");

/* RNR NAK timer codes in microseconds, IBA table 45. */
static const u32 sroce_rnr_usec[32] = {
	655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960,
	1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720,
	40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
};

/*
 * Move the send position to PSN @psn, held by one of the WQEs from head
 * up to @end: to the packet holding it, a read or atomic to its first
 * response still missing. With @end at req->started, @psn may also be
 * req->high_psn, where the first sends go on. It never passes a WQE that
 * failed its checks: that one fails the queue once it is the oldest.
 * False when no WQE there holds @psn.
 */
static bool sroce_comp_seek(struct sroce_qp *qp, u32 psn, u32 end)
{
	struct sroce_req *req = &qp->req;
	struct sroce_swqe_state *st = NULL;
	struct sroce_send_wqe *w = NULL;
	u32 i, rd = 0, k = 0;

	for (i = req->head; i != end; i++) {
		st = sroce_sst(qp, i);
		w = sroce_swqe(qp, i);
		if (st->status != IB_WC_SUCCESS)
			break;
		k = (psn - st->first_psn) & SROCE_PSN_MASK;
		if (k < st->npsn)
			break;
		if (sroce_op_is_rdatomic(w->opcode))
			rd++;
	}
	if (i == end) {
		if (end != req->started || psn != req->high_psn)
			return false;
		req->off = 0;
		req->psn = psn;
	} else if (st->status != IB_WC_SUCCESS ||
		   sroce_op_is_rdatomic(w->opcode)) {
		/* A read or atomic asked again from its first one missing. */
		req->off = 0;
		req->psn = st->first_psn;
	} else {
		req->off = k * qp->mtu;
		req->psn = psn;
		sroce_req_seek(qp, w, req->off);
	}
	req->next = i;
	req->rd_pending = rd;
	return true;
}

/*
 * Resend from PSN @psn, for @cause: go back, never forward, to the WQE and
 * packet holding it. A round trip being timed no longer can be: its answer
 * may be the resend's (Karn's rule). Any cause but a timeout ends the
 * timeout's hold: the responder answered. False when no WQE sent holds
 * @psn.
 */
static bool sroce_comp_rewind(struct sroce_qp *qp, u32 psn,
			      enum sroce_retx_cause cause)
{
	struct sroce_req *req = &qp->req;
	struct sroce_swqe_state *st;

	if (!sroce_comp_seek(qp, psn, req->off ? req->next + 1 : req->next))
		return false;
	req->rtt_start_ns = 0;
	req->since_ackreq = 0;
	req->rto_hold = false;
	st = sroce_sst(qp, req->next);
	trace_sroce_retransmit(&qp->ibqp,
			       sroce_op_is_rdatomic(sroce_swqe(qp, req->next)->opcode) ?
			       sroce_read_next_psn(qp, st) : psn, cause);
	return true;
}

/*
 * An answer may acknowledge PSNs from the send position on (@apsn, the
 * last one it covers): a resend, after a timeout, drew the responder's
 * answer for all it had from before the rewind. Go on past them instead
 * of sending them again, one duplicate each, which on a link that loses
 * every Nth packet can lose the same one at every try.
 */
static void sroce_comp_skip_acked(struct sroce_qp *qp, u32 apsn)
{
	struct sroce_req *req = &qp->req;
	u32 from = req->psn;

	if (sroce_psn_cmp(apsn, req->psn) < 0)
		return;
	if (sroce_comp_seek(qp, (apsn + 1) & SROCE_PSN_MASK, req->started) &&
	    sroce_psn_cmp(req->psn, from) > 0)
		sroce_qp_count(qp, SROCE_CNT_ACK_PAST_RESEND);
}

/*
 * Fold a round-trip sample into SRTT (RFC 6298, 2.2, 2.3). No RTTVAR: IBA
 * fixes the timeout, and the probe's timeout is 2 * SRTT.
 */
static void sroce_comp_rtt_sample(struct sroce_req *req, u32 rtt)
{
	if (!req->srtt_ns)
		req->srtt_ns = rtt;
	else
		req->srtt_ns = req->srtt_ns - req->srtt_ns / 8 + rtt / 8;
}

/*
 * Move the oldest unacknowledged PSN forward: progress resets retries,
 * allows the next tail its probe, and ends the round trip being timed if
 * it passes that packet.
 */
static void sroce_comp_advance_una(struct sroce_qp *qp, u32 una)
{
	struct sroce_req *req = &qp->req;

	if (sroce_psn_cmp(una, req->una) <= 0)
		return;
	req->una = una & SROCE_PSN_MASK;
	req->retry_left = qp->attr.retry_cnt;
	req->rnr_left = qp->attr.rnr_retry;
	req->stalled_ns = 0;
	req->rto_hold = false;
	if (req->probed) {
		/*
		 * The timeout armed after the probe would outlast this tail:
		 * the next one gets its probe timer now.
		 */
		req->probed = false;
		if (req->una != req->psn && !req->rnr_wait &&
		    hrtimer_try_to_cancel(&qp->timer) == 1)
			sroce_req_arm_timer(qp);
	}
	if (req->nak_recovery && sroce_psn_cmp(req->una, req->nak_psn) > 0)
		req->nak_recovery = false;
	if (req->credit_probe &&
	    sroce_psn_cmp(req->una, req->credit_probe_psn) > 0)
		req->credit_probe = false;
	if (req->rtt_start_ns && sroce_psn_cmp(req->una, req->rtt_psn) > 0) {
		/* Seconds would mean a peer that lost it: no sample. */
		u64 rtt = ktime_get_ns() - req->rtt_start_ns;

		if (rtt < NSEC_PER_SEC)
			sroce_comp_rtt_sample(req, rtt);
		req->rtt_start_ns = 0;
	}
}

/**
 * sroce_comp_pto_ns() - the tail-loss probe's timeout, if one is due.
 * @qp: RC queue pair
 * @rto_ns: its retransmission timeout
 *
 * Context: req_lock held.
 * Return: max(2 * SRTT, tlp_min_us) when that is shorter than @rto_ns and
 * the tail has no probe yet, else 0: no probe, the timeout only.
 */
u64 sroce_comp_pto_ns(struct sroce_qp *qp, u64 rto_ns)
{
	struct sroce_req *req = &qp->req;
	u64 pto;

	lockdep_assert_held(&qp->req_lock);
	if (!READ_ONCE(tlp) || req->probed || !req->srtt_ns)
		return 0;
	pto = max_t(u64, 2ULL * req->srtt_ns,
		    (u64)READ_ONCE(tlp_min_us) * NSEC_PER_USEC);
	return pto < rto_ns ? pto : 0;
}

/*
 * The probe: the last packet sent, again, asking for an ACK. A read or
 * atomic is asked again instead, as the timeout would: a read from its
 * first response still missing, an atomic answered from the responder's
 * record. After a sequence NAK whose PSN has not been taken, the
 * responder drops later packets without a word (it NAKs a gap once, as
 * IBA and rxe do): the resend of that PSN was lost too, so go back to
 * @una instead. False when there is nothing to probe.
 */
static bool sroce_comp_probe(struct sroce_qp *qp)
{
	struct sroce_req *req = &qp->req;
	u32 psn = req->nak_recovery ? req->una : req->psn - 1;

	/* One chance per tail, taken or not. */
	req->probed = true;
	if (!sroce_comp_rewind(qp, psn & SROCE_PSN_MASK, SROCE_RETX_PROBE))
		return false;
	req->probe_ackreq = true;
	sroce_qp_count(qp, SROCE_CNT_TLP_PROBE);
	return true;
}

/*
 * Complete WQEs all of whose PSNs are acknowledged by @apsn (inclusive).
 * A read or atomic cannot be completed by an ACK: one acknowledged past
 * it means its response was lost, so it is asked again.
 */
static void sroce_comp_ack_upto(struct sroce_qp *qp, u32 apsn)
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
				sroce_comp_rewind(qp, una, SROCE_RETX_READ_GAP);
			break;
		}
		if (sroce_psn_cmp(last, apsn) > 0 || st->status)
			break;
		sroce_sq_complete(qp, IB_WC_SUCCESS);
	}
	sroce_comp_advance_una(qp, una);
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

static void sroce_comp_rnr(struct sroce_qp *qp, u32 psn, u8 timer)
{
	struct sroce_req *req = &qp->req;

	sroce_qp_count(qp, SROCE_CNT_RNR_NAK_RCVD);
	if (qp->attr.rnr_retry != 7) {
		if (!req->rnr_left) {
			sroce_sq_fail(qp, IB_WC_RNR_RETRY_EXC_ERR);
			return;
		}
		req->rnr_left--;
	}
	sroce_comp_rewind(qp, psn, SROCE_RETX_RNR);
	if (qp->dead)
		return;
	req->rnr_wait = true;
	req->timer_probe = false;
	hrtimer_start(&qp->timer,
		      ns_to_ktime((u64)sroce_rnr_usec[timer] * NSEC_PER_USEC),
		      HRTIMER_MODE_REL_SOFT);
}

static void sroce_comp_aeth(struct sroce_qp *qp, u32 psn, u8 syn)
{
	u8 val = syn & SROCE_AETH_VAL_MASK;

	/* An ACK covers @psn, a NAK the PSNs before it. */
	switch (syn & SROCE_AETH_KIND_MASK) {
	case SROCE_AETH_ACK:
		sroce_comp_skip_acked(qp, psn);
		sroce_comp_ack_upto(qp, psn);
		break;
	case SROCE_AETH_RNR_NAK:
		sroce_comp_skip_acked(qp, psn - 1);
		sroce_comp_ack_upto(qp, psn - 1);
		sroce_comp_rnr(qp, psn, val);
		break;
	case SROCE_AETH_NAK:
		sroce_comp_skip_acked(qp, psn - 1);
		sroce_comp_ack_upto(qp, psn - 1);
		if (val == SROCE_NAK_PSN_SEQ) {
			sroce_qp_count(qp, SROCE_CNT_SEQ_NAK_RCVD);
			qp->req.nak_recovery = true;
			qp->req.nak_psn = psn;
			sroce_comp_rewind(qp, psn, SROCE_RETX_SEQ_NAK);
		} else {
			sroce_sq_fail(qp, sroce_nak_status(val));
		}
		break;
	default:
		break;
	}
}

/*
 * Responses of a read are kept past a gap while they fall within a 64-bit
 * window of the one awaited. Reordering (paths through several CPUs'
 * backlogs) is told apart from loss as TCP does with duplicate ACKs: the
 * gap is taken for a loss once this many responses came past it, or the
 * read's last one did, since no more of its answer will come.
 */
#define SROCE_READ_HOLD_WINDOW	64
#define SROCE_READ_REORDER	3

/* The responses held past @expect, the one the read at head awaits. */
static u64 sroce_comp_held(struct sroce_qp *qp, u32 expect)
{
	struct sroce_req *req = &qp->req;

	if (req->held_wqe != req->head || req->held_psn != expect)
		return 0;
	return req->read_held;
}

/**
 * sroce_comp_read_ask_len() - the bytes a read request is to ask for.
 * @qp: RC queue pair
 * @idx: SQ index of the RDMA READ
 *
 * A read asked again asks from its first missing response on: to its end,
 * or, when its last response is held already, only up to the last one
 * missing (those held between come again, as duplicates: one request
 * fills every gap). IBA lets a retried read ask for any part of the
 * original not yet answered, on the same PSNs; rxe and sroce answer such
 * a part.
 *
 * Context: req_lock held.
 * Return: the length for the request's RETH.
 */
u32 sroce_comp_read_ask_len(struct sroce_qp *qp, u32 idx)
{
	const struct sroce_swqe_state *st = sroce_sst(qp, idx);
	u32 expect = sroce_read_next_psn(qp, st);
	u32 to_last = (sroce_swqe_last_psn(st) - expect) & SROCE_PSN_MASK;
	u64 held;

	lockdep_assert_held(&qp->req_lock);
	held = idx == qp->req.head ? sroce_comp_held(qp, expect) : 0;
	/* Bit 0, @expect itself, is never held: to_last >= 1 here. */
	if (to_last < SROCE_READ_HOLD_WINDOW && (held & BIT_ULL(to_last)))
		return fls64(~held & GENMASK_ULL(to_last - 1, 0)) * qp->mtu;
	return st->length - st->read_off;
}

/*
 * Responses from @expect on are missing: ask again now rather than at the
 * timeout. Once per gap, so the rest of the old answer,
 * still arriving, does not ask again and again; the timer stays armed in
 * case the new request or its answer is lost too.
 */
static void sroce_comp_read_gap(struct sroce_qp *qp, u32 expect)
{
	struct sroce_req *req = &qp->req;

	if (req->gap_reasked && req->gap_psn == expect)
		return;
	req->gap_psn = expect;
	req->gap_reasked = true;
	sroce_qp_count(qp, SROCE_CNT_READ_GAP_REASK);
	sroce_comp_rewind(qp, expect, SROCE_RETX_READ_GAP);
}

/*
 * Place response @pkt of the read at head where its PSN says. A read asked
 * again answers from its first missing response on, starting over with
 * FIRST (or ONLY), and ends just before a response held when it asked
 * for no more (LAST or ONLY there): judge the opcode by the packet's place,
 * with @next_held saying that the PSN after it is held. A unit of the
 * device's loop stands for several responses, all full but the read's
 * last. False when it does not fit its place, and the QP failed.
 */
static bool sroce_comp_read_place(struct sroce_qp *qp,
				  const struct sroce_send_wqe *w,
				  const struct sroce_swqe_state *st,
				  const struct sroce_pkt *pkt, bool next_held)
{
	u8 op = pkt->opcode & SROCE_OP_MASK;
	u32 off = ((pkt->psn - st->first_psn) & SROCE_PSN_MASK) * qp->mtu;
	int past = sroce_psn_cmp(sroce_pkt_last_psn(pkt),
				 sroce_swqe_last_psn(st));
	bool last = past == 0;
	bool ends = op == SROCE_OP_READ_RESPONSE_LAST ||
		    op == SROCE_OP_READ_RESPONSE_ONLY;
	int err;

	if (past > 0 ||
	    pkt->payload_len != (last ? st->length - off :
				 pkt->npsn * qp->mtu) ||
	    (last && !ends) || (ends && !last && !next_held)) {
		sroce_sq_fail(qp, IB_WC_BAD_RESP_ERR);
		return false;
	}
	err = sroce_sgl_place(qp, sroce_swqe_sge(w), w->num_sge, off,
			      pkt->skb, pkt->payload_off, pkt->payload_len);
	if (err) {
		sroce_sq_fail(qp, err == -EMSGSIZE ? IB_WC_LOC_LEN_ERR :
			      IB_WC_LOC_PROT_ERR);
		return false;
	}
	return true;
}

/*
 * A read response ahead of @expect, the one awaited: it was lost or
 * overtaken. Keep this one, and ask again for the missing ones once the
 * gap looks like a loss (see SROCE_READ_REORDER). Past the window, drop it
 * and ask again at once. A gap that fewer responses come past, with the
 * last one lost too, is left to the tail-loss probe (or, without it, the
 * timeout): the price of not asking again for every reordering. False
 * when it is not used.
 */
static bool sroce_comp_read_hold(struct sroce_qp *qp,
				 const struct sroce_send_wqe *w,
				 const struct sroce_swqe_state *st,
				 const struct sroce_pkt *pkt, u32 expect)
{
	struct sroce_req *req = &qp->req;
	u32 d = (pkt->psn - expect) & SROCE_PSN_MASK;
	u32 end = d + pkt->npsn;	/* the first PSN after it */
	u32 read_last = sroce_swqe_last_psn(st);
	u64 held = sroce_comp_held(qp, expect);
	bool next_held;
	u64 mine;

	/* Past its last: a later read's, and ack_upto() asked again. */
	if (sroce_psn_cmp(pkt->psn, read_last) > 0)
		return false;
	/* A unit running past it fails the read, as in read_place(). */
	if (sroce_psn_cmp(sroce_pkt_last_psn(pkt), read_last) > 0) {
		sroce_sq_fail(qp, IB_WC_BAD_RESP_ERR);
		return true;
	}
	if (end > SROCE_READ_HOLD_WINDOW) {
		sroce_comp_read_gap(qp, expect);
		return false;
	}
	mine = GENMASK_ULL(end - 1, d);
	if ((held & mine) == mine)
		return false;	/* held already: a duplicate */
	next_held = end < SROCE_READ_HOLD_WINDOW && (held & BIT_ULL(end));
	if (!sroce_comp_read_place(qp, w, st, pkt, next_held))
		return true;
	req->read_held = held | mine;
	req->held_wqe = req->head;
	req->held_psn = expect;
	sroce_qp_count(qp, SROCE_CNT_READ_RESP_HELD);
	if (sroce_pkt_last_psn(pkt) == read_last ||
	    hweight64(req->read_held) >= SROCE_READ_REORDER)
		sroce_comp_read_gap(qp, expect);
	return true;
}

/*
 * A read response: place its payload, complete the read at the end.
 * False when it matches nothing outstanding.
 */
static bool sroce_comp_read_resp(struct sroce_qp *qp, struct sroce_pkt *pkt)
{
	struct sroce_req *req = &qp->req;
	u8 op = pkt->opcode & SROCE_OP_MASK;
	struct sroce_swqe_state *st;
	struct sroce_send_wqe *w;
	u32 expect, run, npsn;
	u64 held, after;

	/* A response acknowledges every request before it. */
	sroce_comp_ack_upto(qp, pkt->psn - 1);
	if (req->head == req->next)
		return false;
	w = sroce_swqe(qp, req->head);
	st = sroce_sst(qp, req->head);
	if (w->opcode == SROCE_WR_ATOMIC_WRITE) {
		/* Answered by one empty read response. */
		if (pkt->psn != st->first_psn)
			return false;
		if (op != SROCE_OP_READ_RESPONSE_ONLY || pkt->payload_len) {
			sroce_sq_fail(qp, IB_WC_BAD_RESP_ERR);
			return true;
		}
		sroce_comp_advance_una(qp, pkt->psn + 1);
		sroce_sq_complete(qp, IB_WC_SUCCESS);
		return true;
	}
	if (w->opcode != IB_UVERBS_WR_RDMA_READ)
		return false;
	expect = sroce_read_next_psn(qp, st);
	if (pkt->psn != expect) {
		/* Behind: a duplicate. */
		if (sroce_psn_cmp(pkt->psn, expect) < 0)
			return false;
		return sroce_comp_read_hold(qp, w, st, pkt, expect);
	}
	held = sroce_comp_held(qp, expect);
	/* Held past this one (at most a unit, SROCE_LO_UNIT_NPSN, wide). */
	after = pkt->npsn < SROCE_READ_HOLD_WINDOW ? held >> pkt->npsn : 0;
	if (!sroce_comp_read_place(qp, w, st, pkt, after & 1))
		return true;
	/* This one, and the run held right after it (after's top bit is clear). */
	run = pkt->npsn + __ffs64(~after);
	req->read_held = run < SROCE_READ_HOLD_WINDOW ? held >> run : 0;
	req->held_wqe = req->head;
	req->held_psn = (expect + run) & SROCE_PSN_MASK;
	npsn = ((expect - st->first_psn) & SROCE_PSN_MASK) + run;
	if (npsn >= st->npsn) {
		st->read_off = st->length;
		req->read_held = 0;
		sroce_comp_advance_una(qp, sroce_swqe_last_psn(st) + 1);
		sroce_sq_complete(qp, IB_WC_SUCCESS);
	} else {
		st->read_off = npsn * qp->mtu;
		sroce_comp_advance_una(qp, req->held_psn);
	}
	return true;
}

/* An atomic's answer; false when it matches nothing outstanding. */
static bool sroce_comp_atomic_ack(struct sroce_qp *qp, struct sroce_pkt *pkt)
{
	struct sroce_req *req = &qp->req;
	struct sroce_swqe_state *st;
	struct sroce_send_wqe *w;
	struct sroce_mr *mr;
	__be64 wire;
	u64 orig;

	sroce_comp_ack_upto(qp, pkt->psn - 1);
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
		sroce_sq_fail(qp, IB_WC_LOC_PROT_ERR);
		return true;
	}
	sroce_mr_write(mr, sroce_swqe_sge(w)->addr, &orig, sizeof(orig));
	sroce_mr_put(mr);
	sroce_comp_advance_una(qp, pkt->psn + 1);
	sroce_sq_complete(qp, IB_WC_SUCCESS);
	return true;
}

/**
 * sroce_comp_rcv() - a response for this QP's requester.
 * @qp: the queue pair
 * @pkt: ACK, atomic ACK or read response, validated
 *
 * Context: softirq, RCU read side.
 */
void sroce_comp_rcv(struct sroce_qp *qp, struct sroce_pkt *pkt)
{
	struct sroce_req *req = &qp->req;
	u8 op = pkt->opcode & SROCE_OP_MASK;
	bool used = true, nak;
	__be32 aeth = 0;
	u8 syn;

	spin_lock_bh(&qp->req_lock);
	if (sroce_qp_state(qp) != IB_QPS_RTS && qp->state != IB_QPS_SQD) {
		sroce_qp_rx_drop(qp, SROCE_CNT_RX_DROP_QP_STATE, pkt);
		goto out;
	}
	if (op != SROCE_OP_READ_RESPONSE_MIDDLE)
		memcpy(&aeth, pkt->hdr + SROCE_BTH_BYTES, sizeof(aeth));
	/*
	 * Only PSNs sent and not yet acknowledged mean anything: an ACK may
	 * repeat the last one acknowledged, or answer for packets sent
	 * before a rewind, past req->psn; an RNR or sequence NAK names one
	 * not acknowledged. (An error NAK may name a read's first PSN, when
	 * rdma_rxe fails the read partway: the QP fails either way.)
	 */
	syn = be32_to_cpu(aeth) >> SROCE_AETH_SYN_SHIFT;
	nak = op == SROCE_OP_ACKNOWLEDGE &&
	      ((syn & SROCE_AETH_KIND_MASK) == SROCE_AETH_RNR_NAK ||
	       syn == (SROCE_AETH_NAK | SROCE_NAK_PSN_SEQ));
	if (sroce_psn_cmp(pkt->psn, op == SROCE_OP_ACKNOWLEDGE ?
			  req->high_psn : req->psn) >= 0 ||
	    sroce_psn_cmp(pkt->psn, nak ? req->una : req->una - 1) < 0) {
		sroce_qp_rx_drop(qp, SROCE_CNT_RX_DROP_STALE, pkt);
		goto out;
	}

	switch (op) {
	case SROCE_OP_ACKNOWLEDGE:
		sroce_comp_aeth(qp, pkt->psn, syn);
		break;
	case SROCE_OP_ATOMIC_ACKNOWLEDGE:
		used = sroce_comp_atomic_ack(qp, pkt);
		break;
	default:
		used = sroce_comp_read_resp(qp, pkt);
		break;
	}
	if (!used)
		sroce_qp_rx_drop(qp, SROCE_CNT_RX_DROP_STALE, pkt);
	else if (op != SROCE_OP_READ_RESPONSE_MIDDLE)
		sroce_req_credit_update(qp, be32_to_cpu(aeth));
	/*
	 * All acknowledged: a retransmission timeout has nothing left to
	 * time. A probe timer is left queued instead: its expiry finds
	 * nothing to do, and until then the next messages need not arm it.
	 * Arming and cancelling it for every message reprograms the CPU's
	 * timer twice per message, which under a hypervisor costs more than
	 * a small message's whole trip over loopback. A tail sent meanwhile
	 * is probed one to two probe timeouts after it, so only while two
	 * fit in the retransmission timeout.
	 */
	if (req->una == req->psn && !req->rnr_wait &&
	    (!req->timer_probe || 2 * req->timer_ns > sroce_req_rto_ns(qp)))
		hrtimer_try_to_cancel(&qp->timer);
	sroce_sq_progress_bh(qp);
out:
	spin_unlock_bh(&qp->req_lock);
}

/* Tail-loss probe, retransmission timeout or the end of an RNR wait. */
enum hrtimer_restart sroce_comp_timer(struct hrtimer *timer)
{
	struct sroce_qp *qp = container_of(timer, struct sroce_qp, timer);
	struct sroce_req *req = &qp->req;
	bool probed;

	spin_lock_bh(&qp->req_lock);
	/* Back from SQD, the move to RTS arms it again. */
	if (qp->dead || sroce_qp_state(qp) != IB_QPS_RTS)
		goto out;
	/*
	 * Armed again while this callback waited for the lock (a sender
	 * re-arms a timer that is no longer queued, an RNR NAK restarts it):
	 * timer_una and rnr_wait are that arming's, for its own expiry.
	 */
	if (hrtimer_is_queued(timer))
		goto out;
	if (req->rnr_wait) {
		req->rnr_wait = false;
	} else if (req->una == req->psn) {
		goto out;
	} else if (req->timer_probe) {
		req->timer_probe = false;
		if (req->una != req->timer_una) {
			sroce_req_arm_timer(qp);
			goto out;
		}
		/*
		 * Nothing acknowledged, but still sending, or with more to
		 * send that only the pacer or the queues below hold back: not
		 * a tail. Wait again, but not past the timeout in all. Send
		 * on too: looking may have fetched a WQE no doorbell rang for.
		 */
		if (req->psn != req->timer_psn || sroce_req_has_more(qp)) {
			req->stalled_ns += req->timer_ns;
			if (req->stalled_ns >= sroce_req_rto_ns(qp))
				req->probed = true;
			sroce_req_arm_timer(qp);
			goto progress;
		}
		/* Looking may have found a bad ring index and failed the QP. */
		if (sroce_qp_state(qp) != IB_QPS_RTS)
			goto out;
		/* Quiet: a tail. After its probe, the timeout runs. */
		probed = sroce_comp_probe(qp);
		sroce_req_arm_timer(qp);
		if (!probed)
			goto out;
	} else if (req->una != req->timer_una) {
		/* Progress since the timer was armed: wait once more. */
		sroce_req_arm_timer(qp);
		goto out;
	} else if (!req->retry_left) {
		sroce_sq_fail(qp, IB_WC_RETRY_EXC_ERR);
		goto out;
	} else {
		req->retry_left--;
		sroce_qp_count(qp, SROCE_CNT_RETRANSMIT_TIMEOUT);
		/*
		 * One packet, asking for an ACK, until it is answered (as TCP
		 * starts again from one segment): the whole window again would
		 * meet a loss that repeats every Nth packet at the same place
		 * whenever it is a multiple of N long, every try. The answer
		 * says what the responder has (sroce_comp_skip_acked()).
		 */
		if (sroce_comp_rewind(qp, req->una, SROCE_RETX_TIMEOUT)) {
			req->rto_hold = true;
			req->rto_sent = false;
			req->probe_ackreq = true;
		}
	}
progress:
	sroce_sq_progress_bh(qp);
	/* Nothing sent (a closed window): still, what is out is timed. */
	if (req->una != req->psn && sroce_qp_state(qp) == IB_QPS_RTS)
		sroce_req_arm_timer(qp);
out:
	spin_unlock_bh(&qp->req_lock);
	return HRTIMER_NORESTART;
}
