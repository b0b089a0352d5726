// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Congestion control, the reaction point: DCQCN (Zhu et al., "Congestion
 * Control for Large-Scale RDMA Deployments", SIGCOMM 2015). A connected
 * queue pair sends at will until a CNP from its peer says that its packets
 * met a congested queue. From then on it has a rate, and a pacer in
 * sroce_tx_may_send() holds each packet until the rate allows it:
 *
 * - a CNP cuts the rate Rc by alpha/2 and makes the old rate the target
 *   Rt; alpha, the estimate of how congested the path is, rises on every
 *   CNP and decays over each alpha period without one;
 * - the rate increase timer and the byte counter each raise the rate: the
 *   first dcqcn_threshold events halve the distance to Rt (fast
 *   recovery), after that Rt itself rises by dcqcn_ai_rate_mbps (additive
 *   increase), and by multiples of dcqcn_hai_rate_mbps once both have
 *   passed the threshold (hyper increase);
 * - back at the line rate, the queue pair is unlimited again and its
 *   packets pay nothing for any of this.
 *
 * The timer and alpha periods are applied in arrears when the state is
 * next touched (a packet, a CNP, a query), so no timer runs for them; the
 * only timer is the pacer's, armed while a packet waits.
 *
 * Lock order: req_lock or resp_lock, then sroce_cc_rp.lock.
 */
#include <linux/moduleparam.h>

#include "sroce.h"

/* alpha and its gain g are fractions of 2^20. */
#define SROCE_CC_ONE		BIT(20)
/* Bytes the pacer lets go at once after the queue pair was idle. */
#define SROCE_CC_BURST_BYTES	16384
/* A rate for a link whose speed the netdev does not report. */
#define SROCE_CC_UNKNOWN_MBPS	100000

static unsigned int dcqcn_g_shift = 8;
module_param(dcqcn_g_shift, uint, 0644);
MODULE_PARM_DESC(dcqcn_g_shift,
		 "DCQCN: alpha's gain g is 2^-shift (default 8: g = 1/256)");

static unsigned int dcqcn_alpha_period_us = 55;
module_param(dcqcn_alpha_period_us, uint, 0644);
MODULE_PARM_DESC(dcqcn_alpha_period_us,
		 "DCQCN: alpha decays once per this many microseconds without a CNP (default 55)");

static unsigned int dcqcn_time_reset_us = 300;
module_param(dcqcn_time_reset_us, uint, 0644);
MODULE_PARM_DESC(dcqcn_time_reset_us,
		 "DCQCN: rate increase timer period in microseconds (default 300)");

static unsigned int dcqcn_byte_reset = 32767;
module_param(dcqcn_byte_reset, uint, 0644);
MODULE_PARM_DESC(dcqcn_byte_reset,
		 "DCQCN: bytes sent between two byte counter rate increases (default 32767)");

static unsigned int dcqcn_threshold = 5;
module_param(dcqcn_threshold, uint, 0644);
MODULE_PARM_DESC(dcqcn_threshold,
		 "DCQCN: increase events of fast recovery before additive increase (F, default 5)");

static unsigned int dcqcn_ai_rate_mbps = 5;
module_param(dcqcn_ai_rate_mbps, uint, 0644);
MODULE_PARM_DESC(dcqcn_ai_rate_mbps,
		 "DCQCN: additive increase of the target rate, Mb/s (default 5)");

static unsigned int dcqcn_hai_rate_mbps = 50;
module_param(dcqcn_hai_rate_mbps, uint, 0644);
MODULE_PARM_DESC(dcqcn_hai_rate_mbps,
		 "DCQCN: hyper increase step of the target rate, Mb/s (default 50)");

static unsigned int dcqcn_min_rate_mbps = 1;
module_param(dcqcn_min_rate_mbps, uint, 0644);
MODULE_PARM_DESC(dcqcn_min_rate_mbps,
		 "DCQCN: the rate is never cut below this, Mb/s (default 1)");

static unsigned int dcqcn_max_rate_mbps;
module_param(dcqcn_max_rate_mbps, uint, 0644);
MODULE_PARM_DESC(dcqcn_max_rate_mbps,
		 "DCQCN: the rate at which a queue pair is unlimited again, Mb/s (default 0: the netdev's link speed)");

static unsigned int dcqcn_rate_reduce_period_us = 4;
module_param(dcqcn_rate_reduce_period_us, uint, 0644);
MODULE_PARM_DESC(dcqcn_rate_reduce_period_us,
		 "DCQCN: least time between two rate cuts of a queue pair, microseconds (default 4)");

/* A parameter that divides or is a period: at least 1. */
static u32 sroce_cc_param(const unsigned int *p)
{
	return max_t(u32, READ_ONCE(*p), 1);
}

static u32 sroce_cc_max_rate(struct sroce_qp *qp)
{
	u32 mbps = READ_ONCE(dcqcn_max_rate_mbps);

	if (!mbps)
		mbps = READ_ONCE(to_sdev(qp->ibqp.device)->link_mbps);
	return mbps ?: SROCE_CC_UNKNOWN_MBPS;
}

/* f^n for a fraction f of SROCE_CC_ONE, by squaring. */
static u32 sroce_cc_pow(u32 f, u64 n)
{
	u64 r = SROCE_CC_ONE, b = f;

	while (n && r) {
		if (n & 1)
			r = (r * b) >> 20;
		b = (b * b) >> 20;
		n >>= 1;
	}
	return r;
}

/* Time @bytes take at @mbps, in ns: 8 bits a byte, 1000 ns a microsecond. */
static u64 sroce_cc_tx_ns(u64 bytes, u32 mbps)
{
	return div_u64(bytes * 8000, max_t(u32, mbps, 1));
}

/*
 * One increase event: the timer's or the byte counter's, whose stage the
 * caller counted. Return true when the line rate is reached.
 */
static bool sroce_cc_increase(struct sroce_cc_rp *rp, u32 max_rate)
{
	u32 f = READ_ONCE(dcqcn_threshold);
	u32 lo = min(rp->t_stage, rp->b_stage);
	u32 hi = max(rp->t_stage, rp->b_stage);

	if (hi < f)
		;	/* fast recovery: towards the rate before the cut */
	else if (lo > f)
		rp->target += (lo - f) * READ_ONCE(dcqcn_hai_rate_mbps);
	else
		rp->target += READ_ONCE(dcqcn_ai_rate_mbps);
	rp->target = min(rp->target, max_rate);
	rp->rate = (rp->rate + rp->target + 1) / 2;
	return rp->rate >= max_rate;
}

static void sroce_cc_unlimit(struct sroce_cc_rp *rp)
{
	WRITE_ONCE(rp->limited, false);
}

/*
 * Apply the alpha and timer periods that passed since the state was last
 * touched. Context: rp->lock held.
 */
static void sroce_cc_advance(struct sroce_qp *qp, u64 now)
{
	struct sroce_cc_rp *rp = &qp->rp;
	u64 period = (u64)sroce_cc_param(&dcqcn_alpha_period_us) *
		     NSEC_PER_USEC;
	u32 max_rate = sroce_cc_max_rate(qp);
	u64 n;

	lockdep_assert_held(&rp->lock);
	if (now > rp->alpha_ns + period) {
		n = div64_u64(now - rp->alpha_ns, period);
		rp->alpha = ((u64)rp->alpha *
			     sroce_cc_pow(SROCE_CC_ONE -
					  (SROCE_CC_ONE >>
					   min(READ_ONCE(dcqcn_g_shift), 20U)),
					  n)) >> 20;
		rp->alpha_ns += n * period;
	}

	period = (u64)sroce_cc_param(&dcqcn_time_reset_us) * NSEC_PER_USEC;
	if (now > rp->timer_ns + period) {
		n = div64_u64(now - rp->timer_ns, period);
		rp->timer_ns += n * period;
		/*
		 * So many events bring the rate to the line rate: fast
		 * recovery, additive increases up to it, halvings after.
		 */
		if (n > READ_ONCE(dcqcn_threshold) + 64 +
			max_rate / sroce_cc_param(&dcqcn_ai_rate_mbps)) {
			sroce_cc_unlimit(rp);
			return;
		}
		while (n--) {
			rp->t_stage++;
			if (sroce_cc_increase(rp, max_rate)) {
				sroce_cc_unlimit(rp);
				return;
			}
		}
	}
	/* The link may have become slower than the rate, or the maximum. */
	if (rp->rate >= max_rate)
		sroce_cc_unlimit(rp);
}

/**
 * sroce_cc_rp_init() - a queue pair's rate limiter, unlimited.
 * @qp: the queue pair being created
 */
void sroce_cc_rp_init(struct sroce_qp *qp)
{
	spin_lock_init(&qp->rp.lock);
	hrtimer_init(&qp->rp.pace_timer, CLOCK_MONOTONIC,
		     HRTIMER_MODE_ABS_SOFT);
	qp->rp.pace_timer.function = sroce_cc_pace_timer;
}

/**
 * sroce_cc_rp_reset() - forget the rate: the queue pair goes to RESET.
 * @qp: the queue pair, quiesced
 */
void sroce_cc_rp_reset(struct sroce_qp *qp)
{
	spin_lock_bh(&qp->rp.lock);
	sroce_cc_unlimit(&qp->rp);
	qp->rp.paced = 0;
	spin_unlock_bh(&qp->rp.lock);
}

/**
 * sroce_cc_rp_cnp() - a CNP from the peer: cut the rate.
 * @qp: the RC or UC queue pair it names
 *
 * Context: softirq or BH disabled; no queue pair lock held.
 */
void sroce_cc_rp_cnp(struct sroce_qp *qp)
{
	struct sroce_cc_rp *rp = &qp->rp;
	u32 g = min(READ_ONCE(dcqcn_g_shift), 20U);
	u64 now = ktime_get_ns();
	u32 min_rate, cut;

	if (!READ_ONCE(to_sdev(qp->ibqp.device)->cc_rp_enable))
		return;
	spin_lock(&rp->lock);
	if (!rp->limited) {
		rp->rate = sroce_cc_max_rate(qp);
		rp->alpha = SROCE_CC_ONE;
		rp->cut_ns = 0;
		rp->next_tx_ns = now;
		WRITE_ONCE(rp->limited, true);
	} else {
		sroce_cc_advance(qp, now);
		if (!rp->limited) {
			/* Recovered meanwhile: start from the line rate. */
			rp->rate = sroce_cc_max_rate(qp);
			WRITE_ONCE(rp->limited, true);
		}
		/* Every CNP counts for alpha; the rate is cut at most so often. */
		rp->alpha += (SROCE_CC_ONE - rp->alpha) >> g;
		if (rp->cut_ns && now - rp->cut_ns <
		    (u64)READ_ONCE(dcqcn_rate_reduce_period_us) * NSEC_PER_USEC) {
			rp->alpha_ns = now;
			spin_unlock(&rp->lock);
			return;
		}
	}
	rp->target = rp->rate;
	cut = ((u64)rp->rate * rp->alpha) >> 21;
	min_rate = min(READ_ONCE(dcqcn_min_rate_mbps), rp->target);
	rp->rate = max(rp->rate - cut, max(min_rate, 1U));
	rp->alpha_ns = now;
	rp->cut_ns = now;
	rp->timer_ns = now;
	rp->bytes = 0;
	rp->t_stage = 0;
	rp->b_stage = 0;
	spin_unlock(&rp->lock);
	sroce_qp_count(qp, SROCE_CNT_CC_RATE_CUT);
}

/**
 * sroce_cc_may_send() - does the rate limiter let a packet go now?
 * @qp: a queue pair whose rate is limited (sroce_cc_rp.limited)
 * @who: SROCE_TX_PAUSED_REQ or SROCE_TX_PAUSED_RESP, the caller
 *
 * Return: true, or false with @who's work queued for when it may.
 * Context: @who's lock held, BH disabled.
 */
bool sroce_cc_may_send(struct sroce_qp *qp, int who)
{
	struct sroce_cc_rp *rp = &qp->rp;
	u64 now = ktime_get_ns();
	bool ok = true;

	spin_lock(&rp->lock);
	if (!READ_ONCE(to_sdev(qp->ibqp.device)->cc_rp_enable))
		sroce_cc_unlimit(rp);
	else if (rp->limited)
		sroce_cc_advance(qp, now);
	if (rp->limited && (s64)(rp->next_tx_ns - now) > 0) {
		ok = false;
		set_bit(who, &rp->paced);
		if (!qp->dead)
			hrtimer_start(&rp->pace_timer,
				      ns_to_ktime(rp->next_tx_ns),
				      HRTIMER_MODE_ABS_SOFT);
	}
	spin_unlock(&rp->lock);
	if (!ok)
		sroce_qp_count(qp, SROCE_CNT_CC_PACE_WAIT);
	return ok;
}

/**
 * sroce_cc_charge() - account a packet a rate-limited queue pair sends.
 * @qp: the queue pair
 * @bytes: the packet's bytes on the wire
 *
 * ACKs and CNPs are charged too (they take the same link) but never held.
 * Context: BH disabled.
 */
void sroce_cc_charge(struct sroce_qp *qp, unsigned int bytes)
{
	struct sroce_cc_rp *rp = &qp->rp;
	u32 reset = sroce_cc_param(&dcqcn_byte_reset);
	u32 max_rate = sroce_cc_max_rate(qp);
	u64 now = ktime_get_ns();
	u64 floor;

	spin_lock(&rp->lock);
	if (!rp->limited)
		goto out;
	/* Time left unused while idle buys a burst, no more. */
	floor = now - sroce_cc_tx_ns(SROCE_CC_BURST_BYTES, rp->rate);
	if ((s64)(rp->next_tx_ns - floor) < 0)
		rp->next_tx_ns = floor;
	rp->next_tx_ns += sroce_cc_tx_ns(bytes, rp->rate);
	rp->bytes += bytes;
	while (rp->bytes >= reset) {
		rp->bytes -= reset;
		rp->b_stage++;
		if (sroce_cc_increase(rp, max_rate)) {
			sroce_cc_unlimit(rp);
			break;
		}
	}
out:
	spin_unlock(&rp->lock);
}

/**
 * sroce_cc_holds_next() - will the pacer hold the packet after this one?
 * @qp: a queue pair whose rate is limited
 * @payload: payload bytes of the packet about to be sent
 *
 * A paced requester asks for an ACK on such a packet: at a low rate its
 * usual every SROCE_ACKREQ_EVERY packets can take longer than the
 * retransmission timeout, which would then fire although nothing is lost.
 * Context: req_lock held, BH disabled.
 * Return: true when a packet of @payload bytes sent now makes the next
 * one wait.
 */
bool sroce_cc_holds_next(struct sroce_qp *qp, unsigned int payload)
{
	struct sroce_cc_rp *rp = &qp->rp;
	u64 now = ktime_get_ns();
	u64 next;
	bool holds;

	spin_lock(&rp->lock);
	next = max_t(s64, rp->next_tx_ns - now,
		     -(s64)sroce_cc_tx_ns(SROCE_CC_BURST_BYTES, rp->rate));
	holds = rp->limited &&
		(s64)(next + sroce_cc_tx_ns(payload + ETH_HLEN +
					    SROCE_MAX_WIRE_OVERHEAD,
					    rp->rate)) > 0;
	spin_unlock(&rp->lock);
	return holds;
}

/* The pacer allows a packet again: wake whoever waits for it. */
enum hrtimer_restart sroce_cc_pace_timer(struct hrtimer *timer)
{
	struct sroce_qp *qp = container_of(timer, struct sroce_qp,
					   rp.pace_timer);

	if (READ_ONCE(qp->dead))
		return HRTIMER_NORESTART;
	if (test_and_clear_bit(SROCE_TX_PAUSED_REQ, &qp->rp.paced))
		queue_work(sroce_data_wq, &qp->req_work);
	if (test_and_clear_bit(SROCE_TX_PAUSED_RESP, &qp->rp.paced))
		queue_work(sroce_data_wq, &qp->resp_work);
	return HRTIMER_NORESTART;
}

/**
 * sroce_cc_rp_query() - the rate limiter's state, brought up to date.
 * @qp: the queue pair
 * @rate: set to the current rate in Mb/s (the line rate when unlimited)
 * @target: set to the target rate in Mb/s
 * @alpha: set to alpha in 1/1024ths
 *
 * Return: whether the rate is limited.
 */
bool sroce_cc_rp_query(struct sroce_qp *qp, u32 *rate, u32 *target,
		       u32 *alpha)
{
	struct sroce_cc_rp *rp = &qp->rp;
	bool limited;

	spin_lock_bh(&rp->lock);
	if (rp->limited)
		sroce_cc_advance(qp, ktime_get_ns());
	limited = rp->limited;
	*rate = limited ? rp->rate : sroce_cc_max_rate(qp);
	*target = limited ? rp->target : *rate;
	*alpha = limited ? rp->alpha >> 10 : 0;
	spin_unlock_bh(&rp->lock);
	return limited;
}
