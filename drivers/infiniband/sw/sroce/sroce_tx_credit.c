// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Transmit backpressure. Each packet a queue pair sends is charged to it
 * until the stack below frees the packet (an skb destructor): after the
 * receiver consumed it on loopback or a veth, after the NIC sent it on a
 * wire. A queue pair holding SROCE_TX_INFLIGHT_HIGH packets pauses, and
 * the destructor that brings it down to SROCE_TX_INFLIGHT_LOW resumes it.
 * Without this, a long READ response or a send window meeting a slow link
 * overflows the qdisc, and go-back-N resends only overflow it again.
 *
 * The count also keeps a stream in order. A packet handed to a veth or to
 * loopback in the stack waits in the sending CPU's receive backlog, and
 * each CPU drains its own: a packet sent from another CPU can overtake
 * it, and go-back-N pays for that with a NAK and a resend. So while any
 * packet of the queue pair is in flight, the requester and the responder
 * each send only from the CPU they last sent from, and a call on another
 * CPU hands the sending to that CPU's work item.
 *
 * The count is a separate object: packets may sit in a qdisc or a NIC ring
 * after their queue pair is destroyed, and their destructor is this
 * module's code, so unloading waits until every such object is gone.
 */
#include <linux/skbuff.h>
#include <linux/wait_bit.h>

#include "sroce.h"

static atomic_t sroce_tx_credits_live = ATOMIC_INIT(0);

int sroce_tx_credit_init(struct sroce_qp *qp)
{
	struct sroce_tx_credit *c = kzalloc(sizeof(*c), GFP_KERNEL);

	if (!c)
		return -ENOMEM;
	atomic_set(&c->held, 1);
	c->cpu[SROCE_TX_PAUSED_REQ] = -1;
	c->cpu[SROCE_TX_PAUSED_RESP] = -1;
	RCU_INIT_POINTER(c->qp, qp);
	atomic_inc(&sroce_tx_credits_live);
	qp->credit = c;
	return 0;
}

static void sroce_tx_credit_free(struct rcu_head *head)
{
	kfree(container_of(head, struct sroce_tx_credit, rcu));
	if (atomic_dec_and_test(&sroce_tx_credits_live))
		wake_up_var(&sroce_tx_credits_live);
}

/* Drop one hold: a freed packet's, or the queue pair's own. */
void sroce_tx_credit_put(struct sroce_tx_credit *c)
{
	if (atomic_dec_and_test(&c->held))
		call_rcu(&c->rcu, sroce_tx_credit_free);
}

/*
 * The queue pair is going: destructors stop resuming it once the caller's
 * RCU grace period has passed. Its own hold goes with
 * sroce_tx_credit_put() after that.
 */
void sroce_tx_credit_detach(struct sroce_qp *qp)
{
	RCU_INIT_POINTER(qp->credit->qp, NULL);
}

/**
 * sroce_tx_credit_wait_all() - wait until no packet of ours is left.
 *
 * Context: module unload, every device gone. A packet stuck below us
 * (a stopped NIC) keeps this waiting, with a warning now and then.
 */
void sroce_tx_credit_wait_all(void)
{
	while (!wait_var_event_timeout(&sroce_tx_credits_live,
				       !atomic_read(&sroce_tx_credits_live),
				       10 * HZ))
		pr_warn("sroce: waiting for network devices to free packets of %d queue pairs\n",
			atomic_read(&sroce_tx_credits_live));
	/* The last frees run as RCU callbacks: let them finish. */
	rcu_barrier();
}

/**
 * sroce_tx_credit_release() - give back one packet's hold.
 * @c: the credit the packet was charged to
 *
 * Resumes a paused sender once its packets below are down to the low mark.
 * Context: any but hard IRQ.
 */
void sroce_tx_credit_release(struct sroce_tx_credit *c)
{
	struct sroce_qp *qp;
	int held;

	held = atomic_dec_return(&c->held);
	if (!held) {
		call_rcu(&c->rcu, sroce_tx_credit_free);
		return;
	}
	/* The queue pair's own hold makes "held" one more than packets. */
	if (held > SROCE_TX_INFLIGHT_LOW + 1 || !READ_ONCE(c->paused))
		return;
	rcu_read_lock();
	qp = rcu_dereference(c->qp);
	if (qp) {
		if (test_and_clear_bit(SROCE_TX_PAUSED_REQ, &c->paused))
			queue_work(sroce_data_wq, &qp->req_work);
		if (test_and_clear_bit(SROCE_TX_PAUSED_RESP, &c->paused))
			queue_work(sroce_data_wq, &qp->resp_work);
	}
	rcu_read_unlock();
}

static void sroce_tx_skb_destructor(struct sk_buff *skb)
{
	/*
	 * Splitting a train (skb_segment_list()) releases its packets' head
	 * state, which runs this, and leaves the destructor set for when
	 * they are freed: give the hold back once.
	 */
	skb->destructor = NULL;
	sroce_tx_credit_release(skb_shinfo(skb)->destructor_arg);
}

/**
 * sroce_tx_credit_of() - the credit a packet of ours is still charged to.
 * @skb: any packet
 *
 * Return: the credit, or NULL when @skb is not a sroce packet still
 * charged (another sender's, or one whose hold went back already).
 */
struct sroce_tx_credit *sroce_tx_credit_of(const struct sk_buff *skb)
{
	if (skb->destructor != sroce_tx_skb_destructor)
		return NULL;
	return skb_shinfo(skb)->destructor_arg;
}

/**
 * sroce_tx_credit_hold() - hold a credit for packets whose own holds go
 *	before they are consumed.
 * @c: a credit a live packet is charged to, so it cannot go meanwhile
 *
 * Splitting a train gives back its packets' holds at once; the receiver
 * holds the credit until it has taken the last of them, so the sender
 * still sees them in flight (sroce_tx_may_send()) and sends the next
 * from the same CPU, behind them. Undone by sroce_tx_credit_release().
 */
void sroce_tx_credit_hold(struct sroce_tx_credit *c)
{
	atomic_inc(&c->held);
}

/**
 * sroce_tx_may_send() - may a queue pair send one more packet now?
 * @qp: the queue pair
 * @who: SROCE_TX_PAUSED_REQ or SROCE_TX_PAUSED_RESP, the caller
 *
 * Context: @who's lock held (req_lock or resp_lock), BH disabled.
 * Return: true, or false after noting that @who waits; the packet that
 * brings the count down to the low mark then queues @who's work. Also
 * false when @who must send from another CPU, whose work is queued, and
 * when the rate limiter holds the packet (sroce_cc_may_send()).
 */
bool sroce_tx_may_send(struct sroce_qp *qp, int who)
{
	struct sroce_tx_credit *c = qp->credit;
	int cpu = smp_processor_id();
	int last = c->cpu[who];

	lockdep_assert_held(who == SROCE_TX_PAUSED_REQ ? &qp->req_lock :
			    &qp->resp_lock);
	/*
	 * Datagrams promise no order, and the device's own loopback queue
	 * keeps it anyway; other packets stay behind their predecessors.
	 */
	if (last != cpu && qp->ibqp.qp_type != IB_QPT_UD &&
	    qp->ibqp.qp_type != IB_QPT_GSI && !qp->path.loopback) {
		if (last >= 0 && atomic_read(&c->held) > 1 && cpu_online(last)) {
			if (!qp->dead)
				queue_work_on(last, sroce_data_wq,
					      who == SROCE_TX_PAUSED_REQ ?
					      &qp->req_work : &qp->resp_work);
			sroce_qp_count(qp, SROCE_CNT_TX_CPU_HANDOFF);
			return false;
		}
	}
	c->cpu[who] = cpu;

	/* Congestion control's pacer, once a CNP limited the rate. */
	if (unlikely(READ_ONCE(qp->rp.limited)) && !sroce_cc_may_send(qp, who))
		return false;
	if (atomic_read(&c->held) <= SROCE_TX_INFLIGHT_HIGH)
		return true;
	set_bit(who, &c->paused);
	/* Pairs with the destructor's atomic_dec_return(). */
	smp_mb__after_atomic();
	if (atomic_read(&c->held) <= SROCE_TX_INFLIGHT_HIGH)
		return true;	/* drained meanwhile; a spurious resume is harmless */
	sroce_qp_count(qp, SROCE_CNT_TX_PAUSE);
	return false;
}

/* Charge @skb to @qp until the stack below frees it. */
void sroce_tx_charge(struct sroce_qp *qp, struct sk_buff *skb)
{
	atomic_inc(&qp->credit->held);
	skb_shinfo(skb)->destructor_arg = qp->credit;
	skb->destructor = sroce_tx_skb_destructor;
	if (unlikely(READ_ONCE(qp->rp.limited)))
		sroce_cc_charge(qp, skb->len + ETH_HLEN);
}
