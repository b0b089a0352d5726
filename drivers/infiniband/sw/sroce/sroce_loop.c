// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Loopback: packets a device sends to one of its own queue pairs. They
 * take the same receive path as packets from the wire, but never through
 * the netdev: netif_rx() would put them in the sending CPU's backlog, and
 * a queue pair that sends from two CPUs would see its packets overtake
 * each other.
 *
 * Packets wait in one of SROCE_LO_SHARDS queues, chosen by destination QP
 * number, so everything one queue pair receives is in one queue. A queue
 * has one drainer at a time (its drain_lock), which keeps it in order;
 * different queues drain in parallel, so queue pairs spread over as many
 * CPUs as send to them and no device-wide lock is on the path.
 *
 * Every user of a queue has BH disabled and none is a hard interrupt, so
 * its lock is taken without disabling interrupts (skb_queue_tail() and
 * skb_dequeue() would, twice per packet, which is dear under a
 * hypervisor), and a drainer takes a budget's worth in one hold.
 *
 * Senders in process context deliver right after sending, skipping queues
 * another CPU drains (sroce_lo_drain()); they say so first
 * (sroce_lo_will_drain()), and what they queue meanwhile wakes no one.
 * Anything else queued wakes the queue's work item, on the data path's
 * high-priority workqueue. Not a tasklet: one raised from softirq work
 * that ksoftirqd runs (a timer's), or past __do_softirq()'s restart
 * limits, runs in ksoftirqd, which at normal priority waits behind busy
 * work items of the data path, on 6.1 for longer than a retransmission
 * timeout.
 */
#include "sroce.h"
#include "sroce_hdr.h"

/*
 * Packets one queue waits for at most; beyond, they are dropped. Each
 * queue pair has at most SROCE_TX_INFLIGHT_HIGH packets per half in
 * flight, so this takes 8 busy queue pairs per queue, 128 per device,
 * before a drop.
 */
#define SROCE_LO_QUEUE_MAX	1024
/*
 * PSNs one drainer delivers before letting others in: a unit of several
 * (SROCE_LO_UNIT_NPSN) weighs as the packets it stands for.
 */
#define SROCE_LO_BUDGET		256
/* PSNs one sroce_lo_drain() call delivers, softirqs held off (about). */
#define SROCE_LO_DRAIN_MAX	(4 * SROCE_LO_BUDGET)

/*
 * For tests of recovery inside the loop, which loses nothing by itself
 * until a queue is full: drop every Nth packet a queue is given.
 */
static unsigned int lo_drop_every;
module_param(lo_drop_every, uint, 0644);
MODULE_PARM_DESC(lo_drop_every, "Testing: drop every Nth packet looped back inside a device, per queue, counted in tx_drop (default 0: none)");

/* This CPU's task will call sroce_lo_drain() before it enables BH. */
static DEFINE_PER_CPU(bool, sroce_lo_drain_owed);

static struct sroce_lo_shard *sroce_lo_shard_of(struct sroce_dev *sdev,
						struct sk_buff *skb)
{
	const struct sroce_bth *bth = (const struct sroce_bth *)
		(skb_transport_header(skb) + sizeof(struct udphdr));
	u32 qpn = be32_to_cpu(bth->qpn) & SROCE_BTH_QPN_MASK;

	return &sdev->lo[qpn % SROCE_LO_SHARDS];
}

/*
 * Wake @shard's work item. One already pending has not yet taken the
 * queue's lock (the workqueue clears the pending bit, with a full barrier,
 * before it runs the item), so it will find what was queued before this
 * call: skip queue_work()'s atomic and its interrupt toggling, which were
 * 1.8 % of a 64 B READ stream's time. This holds because every packet is
 * queued under the queue's lock, which the item takes: work_pending()
 * alone orders nothing.
 */
static void sroce_lo_wake(struct sroce_lo_shard *shard)
{
	if (!work_pending(&shard->work))
		queue_work(sroce_data_wq, &shard->work);
}

/**
 * sroce_lo_will_drain() - the caller delivers what it loops back itself.
 *
 * Packets this task queues until its sroce_lo_drain() wake no work item.
 * Context: process, BH disabled until that sroce_lo_drain() returns.
 */
void sroce_lo_will_drain(void)
{
	lockdep_assert_once(in_task() && in_softirq());
	__this_cpu_write(sroce_lo_drain_owed, true);
}

/**
 * sroce_lo_queue() - loop a finished packet back to this device.
 * @sdev: the device
 * @skb: the packet, IP header at skb->data; consumed
 *
 * The caller counts it as sent or dropped.
 * Context: BH disabled.
 * Return: false when the queue was full and the packet dropped.
 */
bool sroce_lo_queue(struct sroce_dev *sdev, struct sk_buff *skb)
{
	struct sroce_lo_shard *shard = sroce_lo_shard_of(sdev, skb);
	unsigned int drop_every = READ_ONCE(lo_drop_every);

	if (skb_queue_len_lockless(&shard->queue) >= SROCE_LO_QUEUE_MAX) {
		kfree_skb(skb);
		return false;
	}
	lockdep_assert_once(in_softirq() && !in_hardirq());
	skb->dev = sdev->ndev;
	skb->pkt_type = PACKET_HOST;
	spin_lock(&shard->queue.lock);
	if (unlikely(drop_every) && ++shard->queued % drop_every == 0) {
		spin_unlock(&shard->queue.lock);
		kfree_skb(skb);
		return false;
	}
	__skb_queue_tail(&shard->queue, skb);
	spin_unlock(&shard->queue.lock);
	/* Only a task that owes a drain delivers what it queues itself. */
	if (!in_task() || !__this_cpu_read(sroce_lo_drain_owed))
		sroce_lo_wake(shard);
	return true;
}

/*
 * Deliver up to a budget from @shard, taken off its queue in one hold of
 * the lock; what the deliveries send queues behind it. The drain lock
 * keeps the order. Return: PSNs delivered (the budget's unit).
 */
static int sroce_lo_deliver_locked(struct sroce_lo_shard *shard)
{
	struct sroce_dev *sdev = shard->sdev;
	struct sk_buff_head batch;
	struct sk_buff *skb;
	int n;

	lockdep_assert_held(&shard->drain_lock);
	__skb_queue_head_init(&batch);
	spin_lock(&shard->queue.lock);
	n = 0;
	while (n < SROCE_LO_BUDGET && (skb = __skb_dequeue(&shard->queue))) {
		__skb_queue_tail(&batch, skb);
		n += sroce_lo_npsn(skb);
	}
	spin_unlock(&shard->queue.lock);
	while ((skb = __skb_dequeue(&batch))) {
		sroce_count(sdev, SROCE_CNT_RX_ROCE_PACKETS);
		sroce_rcv_local(sdev, skb);
	}
	return n;
}

/*
 * One budget of a queue, then the CPU's other data-path items get a turn.
 * A packet queued after the emptiness check queues the item again: it is
 * no longer pending once it runs.
 */
static void sroce_lo_work(struct work_struct *work)
{
	struct sroce_lo_shard *shard =
		container_of(work, struct sroce_lo_shard, work);

	spin_lock_bh(&shard->drain_lock);
	sroce_lo_deliver_locked(shard);
	spin_unlock_bh(&shard->drain_lock);
	if (!skb_queue_empty_lockless(&shard->queue))
		sroce_lo_wake(shard);
}

/**
 * sroce_lo_drain() - deliver looped-back packets, from the sender's context.
 * @sdev: the device
 *
 * Senders call this right after sending, so a reply does not wait for a
 * work item. It goes on while packets come (what it delivers produces
 * replies), up to SROCE_LO_DRAIN_MAX. A queue another CPU is draining is
 * skipped rather than waited for: spinning there cost a sender of many
 * queue pairs a sixth of its time, while the other drainer was already
 * delivering. What is left, past the limit or in a skipped queue, goes to
 * the queues' work items. Ends what sroce_lo_will_drain() began.
 *
 * Context: process, BH disabled.
 */
void sroce_lo_drain(struct sroce_dev *sdev)
{
	DECLARE_BITMAP(skipped, SROCE_LO_SHARDS);
	int done = 0, i, n;

	bitmap_zero(skipped, SROCE_LO_SHARDS);
	do {
		n = 0;
		for (i = 0; i < SROCE_LO_SHARDS && done + n < SROCE_LO_DRAIN_MAX;
		     i++) {
			if (skb_queue_empty_lockless(&sdev->lo[i].queue))
				continue;
			if (!spin_trylock(&sdev->lo[i].drain_lock)) {
				__set_bit(i, skipped);
				continue;
			}
			n += sroce_lo_deliver_locked(&sdev->lo[i]);
			spin_unlock(&sdev->lo[i].drain_lock);
		}
		done += n;
	} while (n && done < SROCE_LO_DRAIN_MAX);
	__this_cpu_write(sroce_lo_drain_owed, false);
	/*
	 * A last pass that delivered nothing produced nothing, and packets
	 * queued since woke their queue's item. Stopped at the limit, any
	 * queue may hold what this call's deliveries sent without a wakeup;
	 * so may a skipped queue, whose drainer may have finished before
	 * this call's packets arrived.
	 */
	if (done >= SROCE_LO_DRAIN_MAX)
		bitmap_fill(skipped, SROCE_LO_SHARDS);
	for_each_set_bit(i, skipped, SROCE_LO_SHARDS)
		if (!skb_queue_empty_lockless(&sdev->lo[i].queue))
			sroce_lo_wake(&sdev->lo[i]);
}

void sroce_lo_init(struct sroce_dev *sdev)
{
	struct sroce_lo_shard *shard;

	for (shard = sdev->lo; shard < sdev->lo + SROCE_LO_SHARDS; shard++) {
		shard->sdev = sdev;
		skb_queue_head_init(&shard->queue);
		spin_lock_init(&shard->drain_lock);
		INIT_WORK(&shard->work, sroce_lo_work);
	}
}

/* Context: no queue pair of the device is left to queue packets. */
void sroce_lo_exit(struct sroce_dev *sdev)
{
	struct sroce_lo_shard *shard;

	for (shard = sdev->lo; shard < sdev->lo + SROCE_LO_SHARDS; shard++) {
		cancel_work_sync(&shard->work);
		skb_queue_purge(&shard->queue);
	}
}
