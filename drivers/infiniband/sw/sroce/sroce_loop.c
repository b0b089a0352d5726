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
 * CPUs as send to them and no device-wide lock is on the path. Sending
 * calls in process context deliver right after sending, waiting for the
 * lock (sroce_lo_drain()); each queue's tasklet, scheduled with every
 * packet, tries the lock and delivers what no such call does, such as
 * packets queued from softirq context.
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
/* Packets one drainer delivers before letting others in. */
#define SROCE_LO_BUDGET		256
/* Packets one sroce_lo_drain() call delivers, softirqs held off (about). */
#define SROCE_LO_DRAIN_MAX	(4 * SROCE_LO_BUDGET)

static struct sroce_lo_shard *sroce_lo_shard_of(struct sroce_dev *sdev,
						struct sk_buff *skb)
{
	const struct sroce_bth *bth = (const struct sroce_bth *)
		(skb_transport_header(skb) + sizeof(struct udphdr));
	u32 qpn = be32_to_cpu(bth->qpn) & SROCE_BTH_QPN_MASK;

	return &sdev->lo[qpn % SROCE_LO_SHARDS];
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

	if (skb_queue_len_lockless(&shard->queue) >= SROCE_LO_QUEUE_MAX) {
		kfree_skb(skb);
		return false;
	}
	skb->dev = sdev->ndev;
	skb->pkt_type = PACKET_HOST;
	skb_queue_tail(&shard->queue, skb);
	tasklet_schedule(&shard->tasklet);
	return true;
}

/* Deliver up to a budget from @shard. Return: packets delivered. */
static int sroce_lo_deliver_locked(struct sroce_lo_shard *shard)
{
	struct sroce_dev *sdev = shard->sdev;
	struct sk_buff *skb;
	int n;

	lockdep_assert_held(&shard->drain_lock);
	for (n = 0; n < SROCE_LO_BUDGET; n++) {
		skb = skb_dequeue(&shard->queue);
		if (!skb)
			break;
		sroce_count(sdev, SROCE_CNT_RX_ROCE_PACKETS);
		sroce_rcv_local(sdev, skb);
	}
	return n;
}

/* After dropping a drain_lock: what came meanwhile goes to the tasklet. */
static void sroce_lo_hand_on(struct sroce_lo_shard *shard)
{
	/*
	 * Either a drainer's trylock sees the lock free, or the holder,
	 * after unlocking, sees what was queued before it: a full barrier
	 * on each side, as a failed trylock and an unlock order nothing.
	 */
	smp_mb();
	if (!skb_queue_empty_lockless(&shard->queue))
		tasklet_schedule(&shard->tasklet);
}

static void sroce_lo_tasklet(struct tasklet_struct *t)
{
	struct sroce_lo_shard *shard =
		container_of(t, struct sroce_lo_shard, tasklet);

	smp_mb();	/* see sroce_lo_hand_on() */
	if (!spin_trylock(&shard->drain_lock))
		return;	/* the holder hands on what it leaves */
	sroce_lo_deliver_locked(shard);
	spin_unlock(&shard->drain_lock);
	sroce_lo_hand_on(shard);
}

/**
 * sroce_lo_drain() - deliver looped-back packets, from the sender's context.
 * @sdev: the device
 *
 * Senders call this right after sending, so a reply does not wait for
 * softirq processing. It waits for a queue's other drainer rather than
 * leaving the rest to the tasklet, and goes on while packets come (what
 * it delivers produces replies), up to SROCE_LO_DRAIN_MAX: under load a
 * tasklet runs in ksoftirqd, which busy-polling processes of the same
 * priority can hold off for longer than a retransmission timeout. What
 * is left past the limit goes to the tasklets.
 *
 * Context: process, BH disabled.
 */
void sroce_lo_drain(struct sroce_dev *sdev)
{
	DECLARE_BITMAP(touched, SROCE_LO_SHARDS);
	int done = 0, i, n;

	bitmap_zero(touched, SROCE_LO_SHARDS);
	do {
		n = 0;
		for (i = 0; i < SROCE_LO_SHARDS && done + n < SROCE_LO_DRAIN_MAX;
		     i++) {
			if (skb_queue_empty_lockless(&sdev->lo[i].queue))
				continue;
			spin_lock(&sdev->lo[i].drain_lock);
			n += sroce_lo_deliver_locked(&sdev->lo[i]);
			spin_unlock(&sdev->lo[i].drain_lock);
			__set_bit(i, touched);
		}
		done += n;
	} while (n && done < SROCE_LO_DRAIN_MAX);
	if (bitmap_empty(touched, SROCE_LO_SHARDS))
		return;
	/*
	 * A tasklet that failed its trylock meanwhile left its packets to
	 * us: whatever is still queued goes back to the tasklets.
	 */
	smp_mb();	/* see sroce_lo_hand_on() */
	for_each_set_bit(i, touched, SROCE_LO_SHARDS)
		if (!skb_queue_empty_lockless(&sdev->lo[i].queue))
			tasklet_schedule(&sdev->lo[i].tasklet);
}

void sroce_lo_init(struct sroce_dev *sdev)
{
	struct sroce_lo_shard *shard;

	for (shard = sdev->lo; shard < sdev->lo + SROCE_LO_SHARDS; shard++) {
		shard->sdev = sdev;
		skb_queue_head_init(&shard->queue);
		spin_lock_init(&shard->drain_lock);
		tasklet_setup(&shard->tasklet, sroce_lo_tasklet);
	}
}

/* Context: no queue pair of the device is left to queue packets. */
void sroce_lo_exit(struct sroce_dev *sdev)
{
	struct sroce_lo_shard *shard;

	for (shard = sdev->lo; shard < sdev->lo + SROCE_LO_SHARDS; shard++) {
		tasklet_kill(&shard->tasklet);
		skb_queue_purge(&shard->queue);
	}
}
