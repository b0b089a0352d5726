// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce netdev glue: the receive hook on the bound netdev, the netdev
 * notifier that drives port state and device removal, and the mapping from
 * netdev properties to port attributes.
 *
 * Receive uses an rx_handler rather than a UDP socket on port 4791: a socket
 * would clash with rdma_rxe (which owns 4791 in init_net), would not see
 * traffic in other network namespaces, and would put every packet through
 * the IP and UDP layers. The handler runs in the netdev's receive softirq,
 * takes only UDP/4791 packets addressed to this host and passes everything
 * else on untouched.
 */
#include <linux/etherdevice.h>
#include <linux/ethtool.h>
#include <linux/if_arp.h>
#include <linux/if_vlan.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <net/ip.h>
#include <net/ipv6.h>
#include <net/sch_generic.h>
#include <rdma/ib_cache.h>

#include <rdma/ib_addr.h>

#include "sroce.h"
#include "sroce_hdr.h"

/**
 * sroce_port_state() - port state implied by a netdev.
 * @ndev: the bound netdev
 *
 * Return: IB_PORT_ACTIVE when the netdev is up, has carrier and its MTU
 * leaves room for at least a 256-byte IB MTU after the RoCEv2 headers;
 * IB_PORT_DOWN otherwise.
 */
enum ib_port_state sroce_port_state(struct net_device *ndev)
{
	if (netif_running(ndev) && netif_carrier_ok(ndev) &&
	    READ_ONCE(ndev->mtu) >= SROCE_MIN_NETDEV_MTU)
		return IB_PORT_ACTIVE;
	return IB_PORT_DOWN;
}

static enum ib_mtu sroce_mtu_from_netdev_mtu(unsigned int mtu)
{
	if (mtu < SROCE_MIN_NETDEV_MTU)
		return IB_MTU_256;	/* port is down; report the floor */
	return ib_mtu_int_to_enum(mtu - SROCE_MAX_WIRE_OVERHEAD);
}

enum ib_mtu sroce_active_mtu(struct net_device *ndev)
{
	return sroce_mtu_from_netdev_mtu(READ_ONCE(ndev->mtu));
}

enum ib_mtu sroce_max_mtu(struct net_device *ndev)
{
	unsigned int max = READ_ONCE(ndev->max_mtu);

	/* A max_mtu of 0 means the netdev sets no upper limit. */
	return max ? sroce_mtu_from_netdev_mtu(max) : IB_MTU_4096;
}

/* IBA physical port state: down, waiting for a link, or up. */
u8 sroce_phys_state(struct net_device *ndev)
{
	if (!netif_running(ndev))
		return IB_PORT_PHYS_STATE_DISABLED;
	if (!netif_carrier_ok(ndev))
		return IB_PORT_PHYS_STATE_POLLING;
	return IB_PORT_PHYS_STATE_LINK_UP;
}

/*
 * Map the netdev's link speed to an IB speed and width once per link
 * change, under RTNL, so that query_port neither takes RTNL nor logs.
 */
static void sroce_update_speed_rtnl(struct sroce_dev *sdev)
{
	struct ethtool_link_ksettings ks = {};
	u32 mbps = 0;
	u16 speed;
	u8 width = IB_WIDTH_1X;

	ASSERT_RTNL();
	if (!__ethtool_get_link_ksettings(sdev->ndev, &ks) &&
	    ks.base.speed != (u32)SPEED_UNKNOWN)
		mbps = ks.base.speed;

	if (mbps <= 2500) {
		speed = IB_SPEED_SDR;
	} else if (mbps <= 5000) {
		speed = IB_SPEED_DDR;
	} else if (mbps <= 10000) {
		speed = IB_SPEED_FDR10;
	} else if (mbps <= 14000) {
		speed = IB_SPEED_FDR;
	} else if (mbps <= 25000) {
		speed = IB_SPEED_EDR;
	} else if (mbps <= 50000) {
		speed = IB_SPEED_HDR;
	} else if (mbps <= 100000) {
		speed = IB_SPEED_EDR;
		width = IB_WIDTH_4X;
	} else if (mbps <= 200000) {
		speed = IB_SPEED_HDR;
		width = IB_WIDTH_4X;
	} else {
		speed = IB_SPEED_NDR;
		width = IB_WIDTH_4X;
	}
	WRITE_ONCE(sdev->active_speed, speed);
	WRITE_ONCE(sdev->active_width, width);
	WRITE_ONCE(sdev->link_mbps, mbps);
}

/*
 * Classify without touching the skb: it may still be shared with taps, and
 * most packets on the netdev are not ours. Ours are unfragmented UDP to
 * port 4791 whose destination address is a GID of the device; anything
 * else, including RoCE traffic this host merely routes, goes to the stack.
 */
static bool sroce_is_roce_packet(struct sroce_dev *sdev,
				 const struct sk_buff *skb)
{
	const struct udphdr *uh;
	struct udphdr _uh;
	unsigned int l4off;
	union ib_gid dgid;

	if (skb->protocol == htons(ETH_P_IP)) {
		const struct iphdr *iph;
		struct iphdr _iph;

		iph = skb_header_pointer(skb, 0, sizeof(_iph), &_iph);
		if (!iph || iph->version != 4 || iph->ihl < 5 ||
		    iph->protocol != IPPROTO_UDP || ip_is_fragment(iph))
			return false;
		l4off = iph->ihl * 4;
		ipv6_addr_set_v4mapped(iph->daddr, (struct in6_addr *)&dgid);
	} else if (skb->protocol == htons(ETH_P_IPV6)) {
		const struct ipv6hdr *ip6h;
		struct ipv6hdr _ip6h;

		ip6h = skb_header_pointer(skb, 0, sizeof(_ip6h), &_ip6h);
		if (!ip6h || ip6h->version != 6 ||
		    ip6h->nexthdr != IPPROTO_UDP)
			return false;
		l4off = sizeof(*ip6h);
		memcpy(&dgid, &ip6h->daddr, sizeof(dgid));
	} else {
		return false;
	}

	uh = skb_header_pointer(skb, l4off, sizeof(_uh), &_uh);
	if (!uh || uh->dest != htons(SROCE_UDP_PORT))
		return false;

	/* Nothing for a device still registering or going away. */
	if (READ_ONCE(sdev->state) != SROCE_DEV_LIVE)
		return false;
	/* A group some QP of this device is attached to. */
	if (rdma_is_multicast_addr((struct in6_addr *)&dgid))
		return sroce_mcast_has(sdev, &dgid);
	return sroce_gid_is_local(sdev, (struct in6_addr *)&dgid);
}

static rx_handler_result_t sroce_rx_handler(struct sk_buff **pskb)
{
	struct sk_buff *skb = *pskb;
	struct sroce_dev *sdev = rcu_dereference(skb->dev->rx_handler_data);

	/*
	 * VLAN frames reach the lower device's handler when no VLAN device
	 * claims their VID; they are not ours (priority tags, VID 0, are).
	 */
	if ((skb->pkt_type != PACKET_HOST &&
	     skb->pkt_type != PACKET_MULTICAST) ||
	    (skb_vlan_tag_present(skb) && skb_vlan_tag_get_id(skb)) ||
	    !sroce_is_roce_packet(sdev, skb)) {
		/*
		 * A train is for a sroce hook to split; the stack would split
		 * it with too little headroom. One meant for this device
		 * while it still took it: dropped, and sent again.
		 */
		if (unlikely(skb_has_frag_list(skb) && sroce_tx_credit_of(skb))) {
			sroce_count(sdev, SROCE_CNT_RX_ROCE_PACKETS);
			sroce_rx_drop(sdev, NULL, SROCE_CNT_RX_DROP_MALFORMED,
				      0, 0, 0);
			kfree_skb(skb);
			return RX_HANDLER_CONSUMED;
		}
		return RX_HANDLER_PASS;
	}

	/* From here on the packet is ours to modify and to free. */
	skb = skb_share_check(skb, GFP_ATOMIC);
	if (!skb) {
		sroce_count(sdev, SROCE_CNT_RX_ROCE_PACKETS);
		sroce_rx_drop(sdev, NULL, SROCE_CNT_RX_DROP_MALFORMED, 0, 0, 0);
		return RX_HANDLER_CONSUMED;
	}
	skb_reset_network_header(skb);
	/* Merged packets and trains are counted one by one as they are split. */
	if (skb_is_gso(skb)) {
		sroce_rcv_gso(sdev, skb);
		return RX_HANDLER_CONSUMED;
	}
	sroce_count(sdev, SROCE_CNT_RX_ROCE_PACKETS);
	sroce_rcv(sdev, skb);
	return RX_HANDLER_CONSUMED;
}

/* Whether a qdisc (netem, say) would take packets sent on @dev. */
static bool sroce_net_queued(struct net_device *dev)
{
	unsigned int i;

	for (i = 0; i < dev->real_num_tx_queues; i++)
		if (rcu_dereference(netdev_get_tx_queue(dev, i)->qdisc)->enqueue)
			return true;
	return false;
}

/*
 * Nothing on @ndev's way out can hold back, change or divert a packet: no
 * qdisc, no tc or netfilter hook.
 * Context: RCU read side.
 */
static bool sroce_net_egress_bare(struct net_device *ndev)
{
	if (sroce_tc_egress_hooked(ndev) || sroce_net_queued(ndev))
		return false;
#ifdef CONFIG_NETFILTER_EGRESS
	if (rcu_access_pointer(ndev->nf_hooks_egress))
		return false;
#endif
	return true;
}

/*
 * Nothing on @dev's way in can change or divert a packet before its
 * rx_handler: no tc or netfilter hook, no XDP program.
 * Context: RCU read side.
 */
static bool sroce_net_ingress_bare(struct net_device *dev)
{
	if (sroce_tc_ingress_hooked(dev) || dev_xdp_prog_count(dev))
		return false;
#ifdef CONFIG_NETFILTER_INGRESS
	if (rcu_access_pointer(dev->nf_hooks_ingress))
		return false;
#endif
	return true;
}

/**
 * sroce_net_peer_unchecked() - will a sroce device here take the packet
 *	without checking its ICRC?
 * @sdev: the sending device
 * @p: where the packet goes, not this device itself
 * @features: the netdev's features, as the caller read them for the UDP
 *	checksum
 *
 * True when @sdev's netdev is a veth whose peer is bound to another sroce
 * device that owns the destination address, and nothing between the two
 * handlers can change, divert or re-checksum the packet: no qdisc and no
 * classifier or netfilter hook on the way out, no classifier, netfilter
 * hook or XDP program on the way in, no GRO at the peer (the receive
 * hook splits what UDP GRO merged in software, checksumming it), and a
 * netdev that leaves the UDP checksum to "hardware". The packet then
 * reaches the peer still CHECKSUM_PARTIAL, and sroce_rcv() takes such a
 * packet unchecked, as TCP over a veth is never checksummed. So there is
 * no ICRC to compute. Should the setup change while packets are on their
 * way, they reach a receiver that checks and are dropped like damaged
 * ones; RC resends them, computing the ICRC the new setup needs.
 * Context: BH disabled or softirq.
 * Return: true when the packet may go without an ICRC.
 */
bool sroce_net_peer_unchecked(struct sroce_dev *sdev,
			      const struct sroce_path *p,
			      netdev_features_t features)
{
	struct net_device *ndev = sdev->ndev, *peer;
	struct sroce_dev *psdev;
	bool ok = false;

	if (!sdev->ndev_veth || p->mcast || !(features & NETIF_F_HW_CSUM))
		return false;
	rcu_read_lock();
	if (!sroce_net_egress_bare(ndev))
		goto out;
	peer = ndev->netdev_ops->ndo_get_peer_dev(ndev);
	if (!peer || rcu_access_pointer(peer->rx_handler) != sroce_rx_handler ||
	    !ether_addr_equal(p->dmac, peer->dev_addr) ||
	    !sroce_net_ingress_bare(peer))
		goto out;
	/* A veth hands packets to the peer's GRO when it cannot do TSO. */
	if (!(features & NETIF_F_ALL_TSO) && (peer->features & NETIF_F_GRO))
		goto out;
	psdev = rcu_dereference(peer->rx_handler_data);
	ok = psdev && READ_ONCE(psdev->state) == SROCE_DEV_LIVE &&
	     sroce_gid_is_local(psdev, &p->daddr);
out:
	rcu_read_unlock();
	return ok;
}

/**
 * sroce_net_may_train() - may packets to a peer leave as trains?
 * @sdev: the sending device
 * @p: where the packets go, not this device itself
 * @features: the netdev's features, as the caller read them
 *
 * A train (sroce_tx_train_add()) is one packet until it is split, so it
 * goes only where the one who splits it is the receiving sroce device's
 * hook (sroce_rcv_gso()) and nothing before looks at it: to a sroce
 * device behind a veth that takes packets untouched and unchecked
 * (sroce_net_peer_unchecked(): no qdisc, no tc or netfilter hook, no XDP
 * program on the way), the veth taking UDP GSO fraglist packets whole,
 * and no packet capture at either end (it shows the frames a wire would
 * carry). Split anywhere else (in a NIC's transmit path, past a VLAN or
 * tunnel device, in a stack that forwards), every packet would need
 * headroom for headers we cannot know, and qdiscs or hooks on the way
 * would drop, mark or pace a train as one packet.
 * Context: BH disabled or softirq.
 * Return: true when a train may start.
 */
bool sroce_net_may_train(struct sroce_dev *sdev, const struct sroce_path *p,
			 netdev_features_t features)
{
	const netdev_features_t whole = NETIF_F_GSO_FRAGLIST |
					NETIF_F_GSO_UDP_L4 | NETIF_F_FRAGLIST;
	struct net_device *ndev = sdev->ndev, *peer;
	bool ok;

	if ((features & whole) != whole || dev_nit_active(ndev) ||
	    !sroce_net_peer_unchecked(sdev, p, features))
		return false;
	rcu_read_lock();
	peer = ndev->netdev_ops->ndo_get_peer_dev(ndev);
	ok = peer && !dev_nit_active(peer);
	rcu_read_unlock();
	return ok;
}

/**
 * sroce_dev_from_netdev_rtnl() - the sroce device bound to a netdev.
 * @ndev: any netdev
 *
 * The rx_handler doubles as the binding: a netdev is bound to sroce exactly
 * when our handler is installed on it, which also makes binding exclusive.
 * Context: RTNL held.
 * Return: the device, or NULL when the netdev is not bound to sroce.
 */
struct sroce_dev *sroce_dev_from_netdev_rtnl(struct net_device *ndev)
{
	if (rtnl_dereference(ndev->rx_handler) != sroce_rx_handler)
		return NULL;
	return rtnl_dereference(ndev->rx_handler_data);
}

/**
 * sroce_net_attach() - bind a new device to its netdev.
 * @sdev: device whose @ndev is set
 *
 * Return: 0; -EEXIST when the netdev is already bound to sroce, -EBUSY when
 * another subsystem (bridge, bond, macvlan...) owns its receive hook,
 * -EINVAL when the netdev refuses receive hooks (ipvlan, VRF), -ENODEV when
 * the netdev is going away.
 */
int sroce_net_attach(struct sroce_dev *sdev)
{
	struct net_device *ndev = sdev->ndev;
	int err;

	rtnl_lock();
	if (ndev->reg_state != NETREG_REGISTERED) {
		err = -ENODEV;
		goto out;
	}
	if (sroce_dev_from_netdev_rtnl(ndev)) {
		err = -EEXIST;
		goto out;
	}
	err = netdev_rx_handler_register(ndev, sroce_rx_handler, sdev);
	if (err)
		goto out;
	sdev->rx_attached = true;
	sdev->ndev_veth = ndev->rtnl_link_ops &&
			  !strcmp(ndev->rtnl_link_ops->kind, "veth") &&
			  ndev->netdev_ops->ndo_get_peer_dev;
	sdev->last_port_state = sroce_port_state(ndev);
	sroce_update_speed_rtnl(sdev);
out:
	rtnl_unlock();
	return err;
}

static void sroce_net_detach_rtnl(struct sroce_dev *sdev)
{
	ASSERT_RTNL();
	if (!sdev->rx_attached)
		return;
	/* Waits for in-flight receivers (synchronize_net). */
	netdev_rx_handler_unregister(sdev->ndev);
	sdev->rx_attached = false;
}

/* Unhook from the netdev; idempotent, may race with the notifier. */
void sroce_net_detach(struct sroce_dev *sdev)
{
	rtnl_lock();
	sroce_net_detach_rtnl(sdev);
	rtnl_unlock();
}

static void sroce_port_update(struct sroce_dev *sdev)
{
	enum ib_port_state state = sroce_port_state(sdev->ndev);
	struct ib_event ev = {
		.device = &sdev->ibdev,
		.element.port_num = SROCE_PORT,
	};

	sroce_update_speed_rtnl(sdev);
	if (state == sdev->last_port_state)
		return;
	sdev->last_port_state = state;
	/*
	 * The registration reference makes unregistration wait for us, and
	 * so flush the core's event work we queue, before the device goes.
	 */
	if (sdev->state != SROCE_DEV_LIVE || !ib_device_try_get(&sdev->ibdev))
		return;
	ev.event = state == IB_PORT_ACTIVE ? IB_EVENT_PORT_ACTIVE :
					     IB_EVENT_PORT_ERR;
	sroce_count(sdev, SROCE_CNT_PORT_EVENTS);
	ib_dispatch_event(&ev);
	ib_device_put(&sdev->ibdev);
}

/**
 * sroce_port_sync_rtnl() - report a state change missed during registration.
 * @sdev: device that just became live
 *
 * The core caches the port state when it sets the device up; a netdev
 * change between then and going live raised no event.
 * Context: RTNL held.
 */
void sroce_port_sync_rtnl(struct sroce_dev *sdev)
{
	enum ib_port_state cached;

	ASSERT_RTNL();
	if (!ib_get_cached_port_state(&sdev->ibdev, SROCE_PORT, &cached))
		sdev->last_port_state = cached;
	sroce_port_update(sdev);
}

static int sroce_netdev_event(struct notifier_block *nb, unsigned long event,
			      void *ptr)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(ptr);
	struct sroce_dev *sdev = sroce_dev_from_netdev_rtnl(ndev);

	if (!sdev)
		return NOTIFY_DONE;

	switch (event) {
	case NETDEV_UNREGISTER:
		/* Also seen when the netdev moves to another netns. */
		sroce_net_detach_rtnl(sdev);
		sroce_dev_netdev_gone(sdev);
		break;
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
	case NETDEV_CHANGEMTU:
		sroce_port_update(sdev);
		break;
	default:
		break;
	}
	return NOTIFY_DONE;
}

static struct notifier_block sroce_netdev_notifier = {
	.notifier_call = sroce_netdev_event,
};

int sroce_net_init(void)
{
	return register_netdevice_notifier(&sroce_netdev_notifier);
}

void sroce_net_exit(void)
{
	unregister_netdevice_notifier(&sroce_netdev_notifier);
}
