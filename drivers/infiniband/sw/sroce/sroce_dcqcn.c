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

#include "sroce_sq.h"

/* alpha and its gain g are fractions of 2^20. */
#define SROCE_CC_ONE		BIT(20)
/* Bytes the pacer lets go at once after the queue pair was idle. */
#define SROCE_CC_BURST_BYTES	16384
/* A rate for a link whose speed the netdev does not report. */
#define SROCE_CC_UNKNOWN_MBPS	100000
/* Increase events applied one by one; more at once (see below). */
#define SROCE_CC_STEP_EVENTS	64
/*
 * Bounds on the writable parameters, so that no value makes arithmetic
 * overflow or a loop long: rates up to 10 Tb/s, a byte counter of at
 * least 1 KiB, and a threshold no longer than the events applied one by
 * one, so that fast recovery is never applied at once.
 */
#define SROCE_CC_MAX_MBPS	10000000
#define SROCE_CC_MAX_THRESHOLD	SROCE_CC_STEP_EVENTS
#define SROCE_CC_MIN_BYTE_RESET	1024

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

/* A period or byte count: at least 1. */
static u32 sroce_cc_param(const unsigned int *p)
{
	return max_t(u32, READ_ONCE(*p), 1);
}

static u32 sroce_cc_mbps(const unsigned int *p)
{
	return clamp_t(u32, READ_ONCE(*p), 1, SROCE_CC_MAX_MBPS);
}

static u32 sroce_cc_threshold(void)
{
	return min_t(u32, READ_ONCE(dcqcn_threshold), SROCE_CC_MAX_THRESHOLD);
}

static u32 sroce_cc_g_shift(void)
{
	return min_t(u32, READ_ONCE(dcqcn_g_shift), 20);
}

static u32 sroce_cc_max_rate(struct sroce_qp *qp)
{
	u32 mbps = READ_ONCE(dcqcn_max_rate_mbps);

	if (!mbps)
		mbps = READ_ONCE(to_sdev(qp->ibqp.device)->link_mbps);
	return min_t(u32, mbps ?: SROCE_CC_UNKNOWN_MBPS, SROCE_CC_MAX_MBPS);
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

static void sroce_cc_stage_inc(u32 *stage)
{
	if (*stage < U32_MAX)
		(*stage)++;
}

/*
 * How far the next increase event moves the target rate, by the stages
 * counted: not at all in fast recovery (the first dcqcn_threshold events),
 * dcqcn_ai_rate_mbps in additive increase, and a growing multiple of
 * dcqcn_hai_rate_mbps once both the timer and the byte counter have passed
 * the threshold.
 */
static u64 sroce_cc_step(const struct sroce_cc_rp *rp)
{
	u32 f = sroce_cc_threshold();
	u32 lo = min(rp->t_stage, rp->b_stage);
	u32 hi = max(rp->t_stage, rp->b_stage);

	if (hi <= f)
		return 0;
	if (lo > f)
		return (u64)(lo - f) * sroce_cc_mbps(&dcqcn_hai_rate_mbps);
	return sroce_cc_mbps(&dcqcn_ai_rate_mbps);
}

/*
 * One increase event, its stage counted by the caller: the target moves,
 * the rate halves its distance to it. Return true at the line rate.
 */
static bool sroce_cc_increase(struct sroce_cc_rp *rp, u32 max_rate)
{
	rp->target = min_t(u64, rp->target + sroce_cc_step(rp), max_rate);
	rp->rate = ((u64)rp->rate + rp->target + 1) / 2;
	return rp->rate >= max_rate;
}

/*
 * @n rate increase timer events. The first SROCE_CC_STEP_EVENTS go one
 * by one, fast recovery among them; after them the rate trails the target
 * by about one step, so the rest move both by a step each at once (a
 * hyper increase's growing step taken as constant).
 * Return true at the line rate.
 */
static bool sroce_cc_timer_events(struct sroce_cc_rp *rp, u64 n,
				  u32 max_rate)
{
	u64 k, step;

	for (k = 0; k < n && k < SROCE_CC_STEP_EVENTS; k++) {
		sroce_cc_stage_inc(&rp->t_stage);
		if (sroce_cc_increase(rp, max_rate))
			return true;
	}
	n -= k;
	if (!n)
		return false;
	step = min_t(u64, sroce_cc_step(rp) ?: sroce_cc_mbps(&dcqcn_ai_rate_mbps),
		     max_rate);
	rp->t_stage = min_t(u64, (u64)rp->t_stage + n, U32_MAX);
	/* n >= max_rate: past the line rate whatever the step (at least 1). */
	if (n >= max_rate || rp->target + n * step >= max_rate)
		return true;
	rp->target += n * step;
	rp->rate = max_t(u64, rp->rate, rp->target - step);
	return false;
}

static void sroce_cc_unlimit(struct sroce_cc_rp *rp)
{
	WRITE_ONCE(rp->limited, false);
}

/*
 * Apply the alpha and timer periods that passed since the state was last
 * touched. Context: rp->lock held, the rate limited.
 */
static void sroce_cc_advance(struct sroce_qp *qp, u64 now)
{
	struct sroce_cc_rp *rp = &qp->rp;
	u64 period = (u64)sroce_cc_param(&dcqcn_alpha_period_us) *
		     NSEC_PER_USEC;
	u32 max_rate = sroce_cc_max_rate(qp);
	u64 n;

	lockdep_assert_held(&rp->lock);
	if ((s64)(now - rp->alpha_ns) >= (s64)period) {
		n = div64_u64(now - rp->alpha_ns, period);
		rp->alpha = ((u64)rp->alpha *
			     sroce_cc_pow(SROCE_CC_ONE -
					  (SROCE_CC_ONE >> sroce_cc_g_shift()),
					  n)) >> 20;
		rp->alpha_ns += n * period;
	}

	period = (u64)sroce_cc_param(&dcqcn_time_reset_us) * NSEC_PER_USEC;
	if ((s64)(now - rp->timer_ns) >= (s64)period) {
		n = div64_u64(now - rp->timer_ns, period);
		rp->timer_ns += n * period;
		if (sroce_cc_timer_events(rp, n, max_rate)) {
			sroce_cc_unlimit(rp);
			return;
		}
	}
	/* The maximum may have been lowered below the rate. */
	if (rp->rate >= max_rate)
		sroce_cc_unlimit(rp);
}

static enum hrtimer_restart sroce_cc_pace_timer(struct hrtimer *timer);

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
 * sroce_cc_rp_reset() - forget the rate: the queue pair goes to RESET,
 *	or to RTR for a new connection.
 * @qp: the queue pair
 *
 * Its pace timer may still fire; that wakes no one who is not already
 * stopped by the state.
 * Context: req_lock and resp_lock held.
 */
void sroce_cc_rp_reset(struct sroce_qp *qp)
{
	spin_lock(&qp->rp.lock);
	sroce_cc_unlimit(&qp->rp);
	clear_bit(SROCE_TX_PAUSED_REQ, &qp->rp.paced);
	clear_bit(SROCE_TX_PAUSED_RESP, &qp->rp.paced);
	spin_unlock(&qp->rp.lock);
}

/* The first CNP since the queue pair was unlimited: from the line rate. */
static void sroce_cc_start(struct sroce_qp *qp, u64 now)
{
	struct sroce_cc_rp *rp = &qp->rp;

	rp->rate = sroce_cc_max_rate(qp);
	rp->alpha = SROCE_CC_ONE;
	rp->next_tx_ns = now;
	WRITE_ONCE(rp->limited, true);
}

/**
 * sroce_cc_rp_cnp() - a CNP from the peer: cut the rate.
 * @qp: the RC or UC queue pair it names, in a state that sends
 *
 * Context: softirq or BH disabled; no queue pair lock held.
 */
void sroce_cc_rp_cnp(struct sroce_qp *qp)
{
	struct sroce_cc_rp *rp = &qp->rp;
	u64 reduce_ns = (u64)READ_ONCE(dcqcn_rate_reduce_period_us) *
			NSEC_PER_USEC;
	u32 g = sroce_cc_g_shift();
	u64 now;
	u32 floor;

	if (!READ_ONCE(to_sdev(qp->ibqp.device)->cc_rp_enable))
		return;
	spin_lock(&rp->lock);
	now = ktime_get_ns();
	if (rp->limited)
		sroce_cc_advance(qp, now);
	if (!rp->limited) {
		sroce_cc_start(qp, now);
	} else if ((s64)(now - rp->cut_ns) < (s64)reduce_ns) {
		/* Cut a moment ago: this CNP only raises alpha. */
		rp->alpha += (SROCE_CC_ONE - rp->alpha) >> g;
		rp->alpha_ns = now;
		spin_unlock(&rp->lock);
		return;
	}
	/* Rt = Rc, Rc = Rc (1 - alpha / 2), then alpha = (1 - g) alpha + g. */
	rp->target = rp->rate;
	floor = clamp_t(u32, READ_ONCE(dcqcn_min_rate_mbps), 1, rp->target);
	rp->rate = max_t(u32, rp->rate - (((u64)rp->rate * rp->alpha) >> 21),
			 floor);
	rp->alpha += (SROCE_CC_ONE - rp->alpha) >> g;
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
 * Return: true, or false with the pace timer armed to queue @who's work
 * when the packet may go (unless the queue pair is being destroyed).
 * Context: @who's lock held, BH disabled.
 */
bool sroce_cc_may_send(struct sroce_qp *qp, int who)
{
	struct sroce_cc_rp *rp = &qp->rp;
	bool ok = true;
	u64 now;

	spin_lock(&rp->lock);
	now = ktime_get_ns();
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
	u32 reset = max_t(u32, READ_ONCE(dcqcn_byte_reset),
			  SROCE_CC_MIN_BYTE_RESET);
	u32 max_rate = sroce_cc_max_rate(qp);
	u64 now, floor;

	spin_lock(&rp->lock);
	if (!rp->limited)
		goto out;
	now = ktime_get_ns();
	/* Time left unused while idle buys a burst, no more. */
	floor = now - sroce_cc_tx_ns(SROCE_CC_BURST_BYTES, rp->rate);
	if ((s64)(rp->next_tx_ns - floor) < 0)
		rp->next_tx_ns = floor;
	rp->next_tx_ns += sroce_cc_tx_ns(bytes, rp->rate);
	rp->bytes += bytes;
	while (rp->bytes >= reset) {
		rp->bytes -= reset;
		sroce_cc_stage_inc(&rp->b_stage);
		if (sroce_cc_increase(rp, max_rate)) {
			sroce_cc_unlimit(rp);
			break;
		}
	}
out:
	spin_unlock(&rp->lock);
}

/**
 * sroce_cc_ackreq_due() - should a paced packet ask for an ACK?
 * @qp: a queue pair whose rate is limited
 * @payload: payload bytes of the packet
 * @since: packets sent since the last one that asked for an ACK
 *
 * At a low rate, the usual ACK request every SROCE_ACKREQ_EVERY packets
 * can come later than the retransmission timeout, which would then fire
 * although nothing is lost.
 * Context: req_lock held.
 * Return: true when these packets take a quarter of that timeout at the
 * current rate.
 */
bool sroce_cc_ackreq_due(struct sroce_qp *qp, unsigned int payload,
			 u32 since)
{
	u64 rto = sroce_req_rto_ns(qp), pkt_ns;

	lockdep_assert_held(&qp->req_lock);
	if (!rto)
		return false;
	pkt_ns = sroce_cc_tx_ns(payload + ETH_HLEN + SROCE_MAX_WIRE_OVERHEAD,
				READ_ONCE(qp->rp.rate));
	return (since + 1ULL) * pkt_ns >= rto / 4;
}

/* The pacer allows a packet again: wake whoever waits for it. */
static enum hrtimer_restart sroce_cc_pace_timer(struct hrtimer *timer)
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
