// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Transmit: RoCEv2 packets built straight into an skb (Ethernet, IP, UDP,
 * BTH, extension headers, payload, ICRC) and handed to the bound netdev,
 * without the IP layer: the destination MAC comes from the QP's address
 * vector, which the core resolved in the netdev's own namespace. Packets
 * for this same device are looped back (sroce_loop.c).
 */
#include <linux/etherdevice.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <net/inet_ecn.h>
#include <net/ip.h>
#include <net/ip6_checksum.h>
#include <net/ipv6.h>
#include <net/udp.h>

#include <rdma/ib_addr.h>

#include "sroce.h"
#include "sroce_hdr.h"

/**
 * sroce_path_from_ah() - packet addressing from an address vector.
 * @sdev: the sending device
 * @av: the address vector, its source GID attribute set
 * @p: the path to fill; the UDP source port is left to the caller
 *
 * Return: 0, or -EINVAL when source and destination GIDs are of different
 * IP families.
 */
int sroce_path_from_ah(struct sroce_dev *sdev, const struct rdma_ah_attr *av,
		       struct sroce_path *p)
{
	const struct ib_global_route *grh = rdma_ah_read_grh(av);

	memcpy(&p->saddr, &grh->sgid_attr->gid, sizeof(p->saddr));
	memcpy(&p->daddr, &grh->dgid, sizeof(p->daddr));
	p->ipv6 = !ipv6_addr_v4mapped(&p->saddr);
	if (p->ipv6 == ipv6_addr_v4mapped(&p->daddr))
		return -EINVAL;
	memcpy(p->dmac, av->roce.dmac, ETH_ALEN);
	p->mcast = rdma_is_multicast_addr(&p->daddr);
	p->loopback = !p->mcast &&
		      (ipv6_addr_equal(&p->saddr, &p->daddr) ||
		       ether_addr_equal(p->dmac, sdev->ndev->dev_addr));
	if (p->loopback)
		ether_addr_copy(p->dmac, sdev->ndev->dev_addr);
	/* ECN-capable transport, so switches can mark instead of drop. */
	p->tos = (grh->traffic_class & ~INET_ECN_MASK) | INET_ECN_ECT_0;
	p->ttl = grh->hop_limit ? grh->hop_limit : 64;
	p->flow_label = grh->flow_label;
	p->sgid_index = grh->sgid_attr->index;
	return 0;
}

/**
 * sroce_path_init() - derive a connected QP's packet addressing.
 * @qp: queue pair on its way to RTR, @av and the destination QPN set
 *
 * Return: 0, or -EINVAL when source and destination GIDs are of different
 * IP families.
 */
int sroce_path_init(struct sroce_qp *qp)
{
	struct sroce_path *p = &qp->path;
	int err;

	err = sroce_path_from_ah(to_sdev(qp->ibqp.device), &qp->av, p);
	if (err)
		return err;
	p->sport = cpu_to_be16(rdma_get_udp_sport(p->flow_label,
						  qp->ibqp.qp_num,
						  qp->attr.dest_qp_num));
	return 0;
}

static unsigned int sroce_l3_len(const struct sroce_path *p)
{
	return p->ipv6 ? sizeof(struct ipv6hdr) : sizeof(struct iphdr);
}

static void sroce_tx_ip(const struct sroce_path *p, struct sk_buff *skb,
			unsigned int len)
{
	if (p->ipv6) {
		struct ipv6hdr *ip6h = ipv6_hdr(skb);

		ip6_flow_hdr(ip6h, p->tos, cpu_to_be32(p->flow_label));
		ip6h->payload_len = cpu_to_be16(len - sizeof(*ip6h));
		ip6h->nexthdr = IPPROTO_UDP;
		ip6h->hop_limit = p->ttl;
		ip6h->saddr = p->saddr;
		ip6h->daddr = p->daddr;
	} else {
		struct iphdr *iph = ip_hdr(skb);

		iph->version = 4;
		iph->ihl = sizeof(*iph) / 4;
		iph->tos = p->tos;
		iph->tot_len = cpu_to_be16(len);
		/* Never fragmented (DF), so the ID carries no meaning. */
		iph->id = 0;
		iph->frag_off = htons(IP_DF);
		iph->ttl = p->ttl;
		iph->protocol = IPPROTO_UDP;
		iph->saddr = p->saddr.s6_addr32[3];
		iph->daddr = p->daddr.s6_addr32[3];
		iph->check = 0;
		ip_send_check(iph);
	}
}

/**
 * sroce_tx_alloc_to() - allocate a packet and fill its IP, UDP and BTH.
 * @sdev: the sending device
 * @p: where the packet goes
 * @dqpn: destination QP number
 * @opcode: BTH opcode
 * @psn: BTH PSN
 * @ackreq: ask the responder for an acknowledgment
 * @se: solicited event
 * @ext_len: bytes of extension headers after the BTH
 * @payload: payload bytes
 * @ext: set to where the extension headers go
 * @payload_buf: set to where the payload goes; NULL when the caller
 *	attaches the payload as page fragments (sroce_tx_add_page()) and
 *	then ends the packet with sroce_tx_end_frags()
 *
 * The caller fills the extension headers and payload, then sends the
 * packet with sroce_tx_send_to(), which adds the ICRC.
 * Return: the packet, or NULL when memory is short.
 */
struct sk_buff *sroce_tx_alloc_to(struct sroce_dev *sdev,
				  const struct sroce_path *p, u32 dqpn,
				  u8 opcode, u32 psn, bool ackreq, bool se,
				  unsigned int ext_len, unsigned int payload,
				  void **ext, void **payload_buf)
{
	struct net_device *ndev = sdev->ndev;
	unsigned int pad = -payload & 3;
	unsigned int l3 = sroce_l3_len(p);
	unsigned int hdrs = l3 + sizeof(struct udphdr) + SROCE_BTH_BYTES +
			    ext_len;
	unsigned int len = hdrs + payload + pad + SROCE_ICRC_BYTES;
	unsigned int linear = payload_buf ? len : hdrs;
	struct sroce_bth *bth;
	struct udphdr *uh;
	struct sk_buff *skb;

	/* A packet head from the per-CPU cache where loopback frees it. */
	skb = __alloc_skb(LL_RESERVED_SPACE(ndev) + linear +
			  ndev->needed_tailroom, GFP_ATOMIC,
			  sroce_in_bh() ? SKB_ALLOC_NAPI : 0, NUMA_NO_NODE);
	if (!skb)
		return NULL;
	skb_reserve(skb, LL_RESERVED_SPACE(ndev));
	skb_reset_network_header(skb);
	skb_put(skb, linear);
	skb_set_transport_header(skb, l3);
	skb->protocol = p->ipv6 ? htons(ETH_P_IPV6) : htons(ETH_P_IP);
	sroce_tx_ip(p, skb, len);

	uh = udp_hdr(skb);
	uh->source = p->sport;
	uh->dest = htons(SROCE_UDP_PORT);
	uh->len = cpu_to_be16(len - l3);
	uh->check = 0;

	bth = (struct sroce_bth *)(uh + 1);
	bth->opcode = opcode;
	bth->flags = (se ? SROCE_BTH_SE : 0) | pad << SROCE_BTH_PAD_SHIFT;
	bth->pkey = cpu_to_be16(SROCE_BTH_PKEY_DEFAULT);
	bth->qpn = cpu_to_be32(dqpn & SROCE_BTH_QPN_MASK);
	bth->apsn = cpu_to_be32((psn & SROCE_BTH_PSN_MASK) |
				(ackreq ? SROCE_BTH_ACKREQ : 0));
	*ext = bth + 1;
	if (payload_buf) {
		*payload_buf = (u8 *)(bth + 1) + ext_len;
		memset((u8 *)*payload_buf + payload, 0, pad);
	}
	return skb;
}

/**
 * sroce_tx_add_page() - attach payload bytes to a packet without copying.
 * @skb: a packet from sroce_tx_alloc_to() without a payload buffer
 * @page: the page holding the bytes; a reference is taken for the packet
 * @off: their offset in @page
 * @len: their length
 *
 * The page must stay valid memory, whoever owns it later: only pages with
 * an ordinary reference count qualify (user pages, not slab memory).
 * Return: 0, or -E2BIG when the packet has no fragment left for them and
 * for the trailer that sroce_tx_end_frags() adds.
 */
int sroce_tx_add_page(struct sk_buff *skb, struct page *page,
		      unsigned int off, unsigned int len)
{
	struct skb_shared_info *shinfo = skb_shinfo(skb);
	int i = shinfo->nr_frags;

	if (i && skb_can_coalesce(skb, i, page, off)) {
		skb_frag_size_add(&shinfo->frags[i - 1], len);
	} else {
		if (i >= MAX_SKB_FRAGS - 1)
			return -E2BIG;
		get_page(page);
		skb_fill_page_desc_noacc(skb, i, page, off, len);
	}
	skb_len_add(skb, len);
	/* Others' pages: whoever would write into the payload copies first. */
	shinfo->flags |= SKBFL_SHARED_FRAG;
	return 0;
}

/**
 * sroce_tx_end_frags() - add the pad and ICRC after an attached payload.
 * @skb: the packet, its payload attached
 *
 * Return: 0, or -ENOMEM.
 */
int sroce_tx_end_frags(struct sk_buff *skb)
{
	const struct sroce_bth *bth = (const struct sroce_bth *)
		(skb_transport_header(skb) + sizeof(struct udphdr));
	unsigned int len = ((bth->flags & SROCE_BTH_PAD_MASK) >>
			    SROCE_BTH_PAD_SHIFT) + SROCE_ICRC_BYTES;
	void *tail = netdev_alloc_frag(SMP_CACHE_BYTES);

	if (!tail)
		return -ENOMEM;
	memset(tail, 0, len);
	skb_fill_page_desc(skb, skb_shinfo(skb)->nr_frags,
			   virt_to_head_page(tail),
			   tail - page_address(virt_to_head_page(tail)), len);
	skb->len += len;
	skb->data_len += len;
	skb->truesize += SMP_CACHE_BYTES;
	return 0;
}

/*
 * The ICRC and the UDP checksum of a packet from sroce_tx_alloc_to(),
 * decided on @features as the caller read them once. @unchecked: the
 * caller found that a sroce device behind a veth takes it unchecked
 * (sroce_net_peer_unchecked()), so it needs no ICRC.
 */
static void sroce_tx_seal(struct sroce_qp *qp, const struct sroce_path *p,
			  struct sk_buff *skb, netdev_features_t features,
			  bool unchecked)
{
	unsigned int bth_off = skb_transport_offset(skb) +
			       sizeof(struct udphdr);
	unsigned int icrc_off = skb->len - SROCE_ICRC_BYTES;
	__le32 icrc = 0;

	/*
	 * A looped-back packet never leaves this device's memory, so nothing
	 * can damage it: it goes without an ICRC, and the receive side of
	 * the loop does not check one (sroce_rcv_local()). Nor is one
	 * checked by a sroce device a veth hands the packet to untouched.
	 */
	if (!p->loopback) {
		if (unchecked)
			sroce_qp_count(qp, SROCE_CNT_TX_LOCAL_NO_ICRC);
		else
			icrc = sroce_icrc(skb, bth_off, icrc_off);
	}
	/* In the trailer fragment when the payload is attached pages. */
	skb_store_bits(skb, icrc_off, &icrc, sizeof(icrc));
	/*
	 * IPv6 forbids a zero UDP checksum. Over IPv4 we send one when the
	 * netdev computes it (the ICRC leaves it out, RoCEv2 receivers
	 * accept it): the packet then stays CHECKSUM_PARTIAL as long as it
	 * is only in memory, which tells a receiver on a veth that it never
	 * crossed a link (sroce_rcv()).
	 */
	if (p->ipv6)
		udp6_set_csum(false, skb, &p->saddr, &p->daddr,
			      skb->len - skb_transport_offset(skb));
	else
		udp_set_csum(!(features & (NETIF_F_HW_CSUM | NETIF_F_IP_CSUM)),
			     skb, p->saddr.s6_addr32[3], p->daddr.s6_addr32[3],
			     skb->len - skb_transport_offset(skb));
}

/* Hand a sealed packet, or a train of @npkts, to the netdev. */
static void sroce_tx_xmit(struct sroce_qp *qp, const struct sroce_path *p,
			  struct sk_buff *skb, u32 npkts)
{
	struct net_device *ndev = to_sdev(qp->ibqp.device)->ndev;
	struct ethhdr *eth;
	int ret;

	eth = skb_push(skb, ETH_HLEN);
	skb_reset_mac_header(skb);
	ether_addr_copy(eth->h_dest, p->dmac);
	ether_addr_copy(eth->h_source, ndev->dev_addr);
	eth->h_proto = skb->protocol;
	skb->dev = ndev;

	ret = dev_queue_xmit(skb);
	sroce_qp_count_add(qp, ret == NET_XMIT_SUCCESS || ret == NET_XMIT_CN ?
			   SROCE_CNT_TX_PACKETS : SROCE_CNT_TX_DROP, npkts);
}

/**
 * sroce_tx_send_to() - finish a packet from sroce_tx_alloc_to(), send it.
 * @qp: the sending queue pair, whose counters count it
 * @p: the path the packet was built for
 * @skb: the packet; consumed
 *
 * Context: BH disabled or softirq.
 */
void sroce_tx_send_to(struct sroce_qp *qp, const struct sroce_path *p,
		      struct sk_buff *skb)
{
	struct sroce_dev *sdev = to_sdev(qp->ibqp.device);
	netdev_features_t features = READ_ONCE(sdev->ndev->features);

	sroce_tx_seal(qp, p, skb, features, !p->loopback &&
		      sroce_net_peer_unchecked(sdev, p, features));
	if (p->loopback) {
		sroce_qp_count(qp, sroce_lo_queue(sdev, skb) ?
			       SROCE_CNT_TX_PACKETS : SROCE_CNT_TX_DROP);
		return;
	}
	/* A group with members here: they get a copy, the wire the rest. */
	if (p->mcast && sroce_mcast_has(sdev, (const union ib_gid *)&p->daddr)) {
		struct sk_buff *copy = skb_copy(skb, GFP_ATOMIC);

		sroce_qp_count(qp, copy && sroce_lo_queue(sdev, copy) ?
			       SROCE_CNT_TX_PACKETS : SROCE_CNT_TX_DROP);
	}
	sroce_tx_xmit(qp, p, skb, 1);
}

/**
 * sroce_tx_train_add() - send a connected queue pair's packet in a train.
 * @qp: the sending queue pair; the packet goes along qp->path
 * @t: the train of the sending side, under that side's lock; the caller
 *	flushes it (sroce_tx_train_flush()) before it lets go of the lock
 * @skb: the packet, from sroce_tx_alloc() and charged; consumed
 *
 * Packets to the peer that one pass sends go as one UDP GSO fraglist
 * packet: each is complete with its own headers, chained on the first
 * one's frag_list, and the receiving sroce device splits them again into
 * the same packets (skb_segment_list() in sroce_rcv_gso()). So the stack
 * below, the veth and the peer's backlog are crossed once a train
 * instead of once a packet. Where a train may not go
 * (sroce_net_may_train()), packets go one by one.
 * Context: BH disabled or softirq.
 */
void sroce_tx_train_add(struct sroce_qp *qp, struct sroce_tx_train *t,
			struct sk_buff *skb)
{
	struct sroce_dev *sdev = to_sdev(qp->ibqp.device);
	const struct sroce_path *p = &qp->path;
	netdev_features_t features;
	bool unchecked;

	if (p->loopback || p->mcast) {
		sroce_tx_send_to(qp, p, skb);
		return;
	}
	if (t->head && (t->segs >= SROCE_TX_TRAIN_SEGS ||
			t->head->len + skb->len > SROCE_TX_TRAIN_BYTES))
		sroce_tx_train_flush(qp, t);
	features = READ_ONCE(sdev->ndev->features);
	if (t->head) {
		unchecked = sroce_net_peer_unchecked(sdev, p, features);
	} else if (sroce_net_may_train(sdev, p, features)) {
		/* A train goes only where the ICRC is left out. */
		unchecked = true;
	} else {
		sroce_tx_send_to(qp, p, skb);
		return;
	}
	sroce_tx_seal(qp, p, skb, features, unchecked);
	/* Only a checksum left to the netdev can be split: it stays one. */
	if (skb->ip_summed != CHECKSUM_PARTIAL) {
		sroce_tx_train_flush(qp, t);
		sroce_tx_xmit(qp, p, skb, 1);
		return;
	}
	if (!t->head) {
		t->head = skb;
		t->tail = NULL;
		t->segs = 1;
		t->head_len = skb->len;
		return;
	}
	if (t->tail)
		t->tail->next = skb;
	else
		skb_shinfo(t->head)->frag_list = skb;
	t->tail = skb;
	t->segs++;
	t->head->len += skb->len;
	t->head->data_len += skb->len;
	t->head->truesize += skb->truesize;
}

/**
 * sroce_tx_train_flush() - send what a train holds.
 * @qp: the sending queue pair
 * @t: its train; empty afterwards
 *
 * Until it is split, a train is one datagram whose IP and UDP lengths
 * cover all of it; splitting gives every packet its own lengths back,
 * the ones its ICRC was computed over.
 * Context: BH disabled or softirq, the lock that @t is under held.
 */
void sroce_tx_train_flush(struct sroce_qp *qp, struct sroce_tx_train *t)
{
	struct sk_buff *skb = t->head;
	struct skb_shared_info *shinfo;
	unsigned int l3;

	if (!skb)
		return;
	t->head = NULL;
	if (t->segs > 1) {
		l3 = skb_transport_offset(skb);
		if (qp->path.ipv6) {
			ipv6_hdr(skb)->payload_len = htons(skb->len - l3);
		} else {
			ip_hdr(skb)->tot_len = htons(skb->len);
			ip_send_check(ip_hdr(skb));
		}
		udp_hdr(skb)->len = htons(skb->len - l3);
		shinfo = skb_shinfo(skb);
		shinfo->gso_type = SKB_GSO_UDP_L4 | SKB_GSO_FRAGLIST;
		shinfo->gso_size = t->head_len - l3 - sizeof(struct udphdr);
		shinfo->gso_segs = t->segs;
		sroce_qp_count(qp, SROCE_CNT_TX_TRAINS);
	}
	sroce_tx_xmit(qp, &qp->path, skb, t->segs);
}
