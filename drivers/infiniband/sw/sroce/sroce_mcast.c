// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * UD multicast (IBA 10.5, A17.4.6): QPs attach to multicast GIDs, which
 * for RoCEv2 are IPv4 (224.0.0.0/4, mapped) or IPv6 (ff00::/8) group
 * addresses. The first attachment to a group adds its Ethernet address to
 * the netdev's filter, the last detachment removes it. A datagram to a
 * group (destination QPN 0xffffff) reaches every QP attached to it on
 * this device; one this device sends to a group it has members of also
 * reaches them, besides going out on the wire.
 *
 * The receive path walks the groups under RCU; attach and detach, which
 * are rare, take mcast_lock.
 */
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <rdma/ib_addr.h>

#include "sroce.h"

/**
 * struct sroce_mcg - a multicast group with attached QPs on this device.
 * @list: entry in the device's group list (RCU)
 * @gid: the group's address
 * @mac: its Ethernet address, in the netdev's filter
 * @nqp: attached QPs
 * @qps: the attached QPs; readers may see one twice or miss one while
 *	the set changes, which a datagram service allows
 * @rcu: frees it after the readers that found it
 */
struct sroce_mcg {
	struct list_head list;
	union ib_gid gid;
	u8 mac[ETH_ALEN];
	u32 nqp;
	struct sroce_qp *qps[SROCE_MAX_MCAST_QP_ATTACH];
	struct rcu_head rcu;
};

/* Context: RCU read side or mcast_lock held. */
static struct sroce_mcg *sroce_mcg_find(struct sroce_dev *sdev,
					const union ib_gid *gid)
{
	struct sroce_mcg *g;

	list_for_each_entry_rcu(g, &sdev->mcast_list, list,
				lockdep_is_held(&sdev->mcast_lock))
		if (!memcmp(&g->gid, gid, sizeof(*gid)))
			return g;
	return NULL;
}

/* Context: RCU read side. */
bool sroce_mcast_has(struct sroce_dev *sdev, const union ib_gid *gid)
{
	return !list_empty(&sdev->mcast_list) && sroce_mcg_find(sdev, gid);
}

int sroce_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	struct sroce_dev *sdev = to_sdev(ibqp->device);
	struct sroce_qp *qp = to_sqp(ibqp);
	struct sroce_mcg *g, *fresh;
	int err = 0;
	u32 i;

	if (ibqp->qp_type != IB_QPT_UD ||
	    !rdma_is_multicast_addr((struct in6_addr *)gid->raw))
		return -EINVAL;
	fresh = kzalloc(sizeof(*fresh), GFP_KERNEL);
	if (!fresh)
		return -ENOMEM;

	spin_lock_bh(&sdev->mcast_lock);
	g = sroce_mcg_find(sdev, gid);
	if (!g) {
		if (sdev->num_mcg >= SROCE_MAX_MCAST_GRP) {
			err = -ENOMEM;
			goto out;
		}
		g = fresh;
		fresh = NULL;
		g->gid = *gid;
		rdma_get_mcast_mac((struct in6_addr *)gid->raw, g->mac);
		err = dev_mc_add(sdev->ndev, g->mac);
		if (err) {
			fresh = g;
			goto out;
		}
		list_add_tail_rcu(&g->list, &sdev->mcast_list);
		sdev->num_mcg++;
	}
	for (i = 0; i < g->nqp; i++)
		if (g->qps[i] == qp)
			goto out;	/* attached already */
	if (g->nqp == SROCE_MAX_MCAST_QP_ATTACH) {
		err = -ENOMEM;
		goto out;
	}
	WRITE_ONCE(g->qps[g->nqp], qp);
	/* Release: a reader that counts the new slot finds the QP in it. */
	smp_store_release(&g->nqp, g->nqp + 1);
	qp->mcast_attached++;
out:
	spin_unlock_bh(&sdev->mcast_lock);
	kfree(fresh);
	return err;
}

/* Remove @qp from @g, and @g when it empties. Context: mcast_lock held. */
static bool sroce_mcg_remove(struct sroce_dev *sdev, struct sroce_mcg *g,
			     struct sroce_qp *qp)
{
	u32 i;

	lockdep_assert_held(&sdev->mcast_lock);
	for (i = 0; i < g->nqp && g->qps[i] != qp; i++)
		;
	if (i == g->nqp)
		return false;
	WRITE_ONCE(g->qps[i], g->qps[g->nqp - 1]);
	WRITE_ONCE(g->nqp, g->nqp - 1);
	qp->mcast_attached--;
	if (!g->nqp) {
		list_del_rcu(&g->list);
		sdev->num_mcg--;
		dev_mc_del(sdev->ndev, g->mac);
		kfree_rcu(g, rcu);
	}
	return true;
}

int sroce_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	struct sroce_dev *sdev = to_sdev(ibqp->device);
	struct sroce_mcg *g;
	int err = -EINVAL;

	spin_lock_bh(&sdev->mcast_lock);
	g = sroce_mcg_find(sdev, gid);
	if (g && sroce_mcg_remove(sdev, g, to_sqp(ibqp)))
		err = 0;
	spin_unlock_bh(&sdev->mcast_lock);
	return err;
}

/**
 * sroce_mcast_detach_all() - a QP being destroyed leaves every group.
 * @qp: the queue pair
 *
 * The caller waits for an RCU grace period afterwards, so no receiver
 * still holds the QP from a group.
 */
void sroce_mcast_detach_all(struct sroce_qp *qp)
{
	struct sroce_dev *sdev = to_sdev(qp->ibqp.device);
	struct sroce_mcg *g, *next;

	if (!qp->mcast_attached)
		return;
	spin_lock_bh(&sdev->mcast_lock);
	list_for_each_entry_safe(g, next, &sdev->mcast_list, list)
		sroce_mcg_remove(sdev, g, qp);
	spin_unlock_bh(&sdev->mcast_lock);
}

/**
 * sroce_mcast_rcv() - a datagram to a multicast group.
 * @sdev: the device
 * @pkt: the packet (UD, destination QPN 0xffffff)
 *
 * Context: softirq, RCU read side.
 */
void sroce_mcast_rcv(struct sroce_dev *sdev, struct sroce_pkt *pkt)
{
	const struct sk_buff *skb = pkt->skb;
	struct sroce_mcg *g;
	union ib_gid dgid;
	u32 i, n;

	if (skb->protocol == htons(ETH_P_IP))
		ipv6_addr_set_v4mapped(ip_hdr(skb)->daddr,
				       (struct in6_addr *)&dgid);
	else
		memcpy(&dgid, &ipv6_hdr(skb)->daddr, sizeof(dgid));
	g = sroce_mcg_find(sdev, &dgid);
	if (!g) {
		sroce_rx_drop(sdev, NULL, SROCE_CNT_RX_DROP_NO_QP, SROCE_MCAST_QPN,
			      pkt->psn, pkt->opcode);
		return;
	}
	/* Acquire: pairs with the release in sroce_attach_mcast(). */
	n = smp_load_acquire(&g->nqp);
	for (i = 0; i < n; i++)
		sroce_ud_rcv(READ_ONCE(g->qps[i]), pkt);
}
