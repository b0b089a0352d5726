// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Receive-side validation of RoCEv2 packets, before any queue pair sees
 * them. Every check uses lengths taken from the packet itself against what
 * actually arrived, so no later stage has to distrust a header length. A
 * packet that fails is dropped and counted under the first reason found.
 */
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <net/ip.h>
#include <net/inet_ecn.h>
#include <net/ipv6.h>

#include "sroce_sq.h"
#include "sroce_hdr.h"
#include "sroce_trace.h"

/**
 * sroce_rx_drop() - count and trace a received packet that is dropped.
 * @sdev: the receiving device
 * @qp: the queue pair that drops it, whose counters count it; or NULL
 * @reason: the counter it goes to, SROCE_CNT_RX_DROP_*, or _RX_OUT_OF_SEQ
 *	for an RC request (a UC one is counted there but not dropped)
 * @qpn: destination queue pair from its BTH (0 when it had none)
 * @psn: its PSN
 * @opcode: its BTH opcode
 *
 * The one place where dropped packets are counted, so that the
 * sroce_rx_drop trace event sees every one. The caller frees the packet.
 * Context: softirq or BH disabled.
 */
void sroce_rx_drop(struct sroce_dev *sdev, struct sroce_qp *qp,
		   enum sroce_counter reason, u32 qpn, u32 psn, u8 opcode)
{
	if (qp)
		sroce_qp_count(qp, reason);
	else
		sroce_count(sdev, reason);
	if (trace_sroce_rx_drop_enabled())
		trace_sroce_rx_drop(&sdev->ibdev, sroce_counter_name(reason),
				    qpn, psn, opcode);
}

/*
 * Pull the IP and UDP headers into the linear area and check that the IP,
 * UDP and skb lengths agree. Trailing bytes beyond the IP length (Ethernet
 * padding) are trimmed. The rx handler already left fragments to the stack.
 */
static bool sroce_rcv_ip_udp(struct sk_buff *skb, unsigned int *l4off,
			     unsigned int *ulen)
{
	const struct udphdr *uh;
	unsigned int l3len;

	if (skb->protocol == htons(ETH_P_IP)) {
		const struct iphdr *iph;

		if (!pskb_may_pull(skb, sizeof(*iph)))
			return false;
		iph = ip_hdr(skb);
		if (iph->ihl < 5 || !pskb_may_pull(skb, iph->ihl * 4))
			return false;
		iph = ip_hdr(skb);
		if (ip_fast_csum(iph, iph->ihl))
			return false;
		*l4off = iph->ihl * 4;
		l3len = ntohs(iph->tot_len);
	} else {
		if (!pskb_may_pull(skb, sizeof(struct ipv6hdr)))
			return false;
		*l4off = sizeof(struct ipv6hdr);
		l3len = sizeof(struct ipv6hdr) +
			ntohs(ipv6_hdr(skb)->payload_len);
	}
	if (l3len > skb->len || l3len < *l4off + sizeof(*uh) ||
	    pskb_trim_rcsum(skb, l3len) ||
	    !pskb_may_pull(skb, *l4off + sizeof(*uh) + SROCE_BTH_BYTES))
		return false;

	uh = (const struct udphdr *)(skb->data + *l4off);
	*ulen = ntohs(uh->len);
	return *ulen == l3len - *l4off &&
	       *ulen >= sizeof(*uh) + SROCE_BTH_BYTES + SROCE_ICRC_BYTES;
}

/* Source address of the packet, IPv4 in its mapped form. */
static void sroce_rcv_saddr(const struct sk_buff *skb, struct in6_addr *a)
{
	if (skb->protocol == htons(ETH_P_IP))
		ipv6_addr_set_v4mapped(ip_hdr(skb)->saddr, a);
	else
		*a = ipv6_hdr(skb)->saddr;
}

/*
 * A connected QP talks to one peer, its path set before RTR: a packet
 * from any other address is dropped and counted. Fills @pkt->saddr.
 */
static bool sroce_rcv_from_peer(struct sroce_qp *qp, struct sroce_pkt *pkt)
{
	sroce_rcv_saddr(pkt->skb, &pkt->saddr);
	if (ipv6_addr_equal(&pkt->saddr, &qp->path.daddr))
		return true;
	sroce_qp_rx_drop(qp, SROCE_CNT_RX_DROP_WRONG_PEER, pkt);
	return false;
}

/* A packet the network marked Congestion Experienced goes to sroce_cc.c. */
static void sroce_rcv_ecn(struct sroce_qp *qp, const struct sk_buff *skb)
{
	u8 dsfield = skb->protocol == htons(ETH_P_IP) ?
		     ipv4_get_dsfield(ip_hdr(skb)) :
		     ipv6_get_dsfield(ipv6_hdr(skb));

	if (unlikely(INET_ECN_is_ce(dsfield)))
		sroce_cc_ce_rcv(qp);
}

static bool sroce_opcode_is_response(u8 op)
{
	return op == SROCE_OP_ACKNOWLEDGE ||
	       op == SROCE_OP_ATOMIC_ACKNOWLEDGE ||
	       (op >= SROCE_OP_READ_RESPONSE_FIRST &&
		op <= SROCE_OP_READ_RESPONSE_ONLY);
}

/*
 * A CNP names the queue pair whose packets met congestion: any, though a
 * connected one only from its peer.
 */
static void sroce_rcv_cnp(struct sroce_qp *qp, struct sroce_pkt *pkt)
{
	if (sroce_qp_connected(qp) && !sroce_rcv_from_peer(qp, pkt))
		return;
	sroce_qp_count(qp, SROCE_CNT_RX_QP_PACKETS);
	sroce_cc_cnp_rcv(qp);
}

/*
 * Hand a valid packet to its queue pair: datagrams to UD and GSI QPs; for
 * RC QPs responses to the requester, the rest to the responder. A packet
 * of a transport its QP does not speak finds no QP.
 */
static void sroce_rcv_dispatch(struct sroce_dev *sdev, struct sk_buff *skb,
			       unsigned int bth_off, unsigned int hdr_len,
			       unsigned int payload, u32 npsn)
{
	const struct sroce_bth *bth = (const void *)(skb->data + bth_off);
	struct sroce_pkt pkt = {
		.skb = skb,
		.hdr = skb->data + bth_off,
		.opcode = bth->opcode,
		.psn = be32_to_cpu(bth->apsn) & SROCE_BTH_PSN_MASK,
		.ackreq = !!(bth->apsn & cpu_to_be32(SROCE_BTH_ACKREQ)),
		.se = !!(bth->flags & SROCE_BTH_SE),
		.hdr_len = hdr_len,
		.payload_off = bth_off + hdr_len,
		.payload_len = payload,
		.npsn = npsn,
	};
	struct sroce_qp *qp;

	u8 transport = pkt.opcode & SROCE_TRANSPORT_MASK;
	u32 dqpn = be32_to_cpu(bth->qpn) & SROCE_BTH_QPN_MASK;

	rcu_read_lock();
	if (dqpn == SROCE_MCAST_QPN) {
		if (transport == SROCE_TRANSPORT_UD) {
			sroce_count(sdev, SROCE_CNT_RX_QP_PACKETS);
			sroce_mcast_rcv(sdev, &pkt);
		} else {
			sroce_rx_drop(sdev, NULL, SROCE_CNT_RX_DROP_NO_QP, dqpn,
				      pkt.psn, pkt.opcode);
		}
		goto out;
	}
	qp = sroce_qp_lookup_rcu(sdev, dqpn);
	if (qp && transport == SROCE_TRANSPORT_CNP) {
		sroce_rcv_cnp(qp, &pkt);
		goto out;
	}
	if (qp && transport == SROCE_TRANSPORT_UD &&
	    (qp->ibqp.qp_type == IB_QPT_UD || qp->ibqp.qp_type == IB_QPT_GSI)) {
		sroce_qp_count(qp, SROCE_CNT_RX_QP_PACKETS);
		sroce_rcv_ecn(qp, skb);
		sroce_ud_rcv(qp, &pkt);
		goto out;
	}
	if (!qp ||
	    !((transport == SROCE_TRANSPORT_RC &&
	       qp->ibqp.qp_type == IB_QPT_RC) ||
	      (transport == SROCE_TRANSPORT_UC &&
	       qp->ibqp.qp_type == IB_QPT_UC))) {
		sroce_rx_drop(sdev, NULL, SROCE_CNT_RX_DROP_NO_QP, dqpn, pkt.psn,
			      pkt.opcode);
		goto out;
	}
	if (!sroce_rcv_from_peer(qp, &pkt))
		goto out;
	sroce_qp_count(qp, SROCE_CNT_RX_QP_PACKETS);
	sroce_rcv_ecn(qp, skb);
	if (sroce_opcode_is_response(pkt.opcode & SROCE_OP_MASK))
		sroce_comp_rcv(qp, &pkt);
	else
		sroce_resp_rcv(qp, &pkt);
out:
	rcu_read_unlock();
	/* Its head goes back to the per-CPU cache that sending takes from. */
	if (sroce_in_bh())
		napi_consume_skb(skb, 1);
	else
		consume_skb(skb);
}

/*
 * Validate one RoCEv2 packet and hand it on; @check_icrc is false only
 * for packets that never crossed a link, which carry none. @npsn is the
 * PSNs it stands for: more than 1 only for a unit of this device's loop.
 */
static void sroce_rcv_checked(struct sroce_dev *sdev, struct sk_buff *skb,
			      bool check_icrc, u32 npsn)
{
	const struct sroce_opcode_info *info;
	unsigned int l4off, ulen, bth_off, icrc_off, pad, payload;
	const struct sroce_bth *bth;
	bool have_bth = false;
	enum sroce_counter drop;
	__le32 wire_icrc;

	if (!sroce_rcv_ip_udp(skb, &l4off, &ulen)) {
		drop = SROCE_CNT_RX_DROP_MALFORMED;
		goto drop;
	}
	bth_off = l4off + sizeof(struct udphdr);
	/* The BTH is linear now, though trusted only once the ICRC matched. */
	have_bth = true;
	/* UDP payload without the UDP header: BTH ... ICRC. */
	ulen -= sizeof(struct udphdr);

	/* Integrity first, so damage is not counted as a protocol error. */
	icrc_off = bth_off + ulen - SROCE_ICRC_BYTES;
	if (check_icrc &&
	    (skb_copy_bits(skb, icrc_off, &wire_icrc, sizeof(wire_icrc)) ||
	     wire_icrc != sroce_icrc(skb, bth_off, icrc_off))) {
		drop = SROCE_CNT_RX_DROP_BAD_ICRC;
		goto drop;
	}
	bth = (const struct sroce_bth *)(skb->data + bth_off);

	if (bth->flags & SROCE_BTH_TVER_MASK) {
		drop = SROCE_CNT_RX_DROP_MALFORMED;
		goto drop;
	}
	info = &sroce_opcodes[bth->opcode];
	if (!info->name) {
		drop = SROCE_CNT_RX_DROP_BAD_OPCODE;
		goto drop;
	}
	pad = (bth->flags & SROCE_BTH_PAD_MASK) >> SROCE_BTH_PAD_SHIFT;
	/* Headers, payload and pad fill whole 4-byte words (IBA 9.2.2). */
	if (ulen < info->hdr_len + pad + SROCE_ICRC_BYTES || ulen % 4) {
		drop = SROCE_CNT_RX_DROP_MALFORMED;
		goto drop;
	}
	payload = ulen - info->hdr_len - pad - SROCE_ICRC_BYTES;
	if (!info->payload && (payload || pad)) {
		drop = SROCE_CNT_RX_DROP_MALFORMED;
		goto drop;
	}
	/* One partition: the default one, full or limited membership. */
	if ((be16_to_cpu(bth->pkey) & SROCE_BTH_PKEY_LOW15) !=
	    SROCE_BTH_PKEY_LOW15) {
		drop = SROCE_CNT_RX_DROP_BAD_PKEY;
		goto drop;
	}
	/* Later stages read the extension headers from the linear area. */
	if (!pskb_may_pull(skb, bth_off + info->hdr_len)) {
		drop = SROCE_CNT_RX_DROP_MALFORMED;
		goto drop;
	}

	sroce_rcv_dispatch(sdev, skb, bth_off, info->hdr_len, payload, npsn);
	return;
drop:
	if (have_bth) {
		/* Again: a failed pull may have moved skb->data. */
		bth = (const struct sroce_bth *)(skb->data + bth_off);
		sroce_rx_drop(sdev, NULL, drop,
			      be32_to_cpu(bth->qpn) & SROCE_BTH_QPN_MASK,
			      be32_to_cpu(bth->apsn) & SROCE_BTH_PSN_MASK,
			      bth->opcode);
	} else {
		sroce_rx_drop(sdev, NULL, drop, 0, 0, 0);
	}
	kfree_skb(skb);
}

/**
 * sroce_rcv() - validate one RoCEv2 packet from the netdev, hand it on.
 * @sdev: device whose netdev received it
 * @skb: the packet, IP header at skb->data; consumed
 *
 * Context: softirq, the netdev receive path.
 */
void sroce_rcv(struct sroce_dev *sdev, struct sk_buff *skb)
{
	/*
	 * Still CHECKSUM_PARTIAL: built in this machine's memory and never
	 * on a link (a veth from another namespace), so nothing can have
	 * damaged it, as in the device's own loopback: no ICRC to check. A
	 * frame from any NIC, or one a qdisc corrupted, is not marked so.
	 */
	bool local = skb->ip_summed == CHECKSUM_PARTIAL;

	if (local)
		sroce_count(sdev, SROCE_CNT_RX_LOCAL_NO_ICRC);
	sroce_rcv_checked(sdev, skb, !local, 1);
}

/**
 * sroce_rcv_local() - take a packet this device looped back to itself.
 * @sdev: the device
 * @skb: the packet, IP header at skb->data; consumed
 *
 * It was built here and never left memory: no ICRC to check, and it may
 * be a unit of several PSNs (SROCE_LO_UNIT_NPSN).
 * Context: BH disabled.
 */
void sroce_rcv_local(struct sroce_dev *sdev, struct sk_buff *skb)
{
	sroce_rcv_checked(sdev, skb, false, sroce_lo_npsn(skb));
}

/**
 * sroce_rcv_gso() - take RoCEv2 packets that arrived merged into one.
 * @sdev: device whose netdev received it
 * @skb: the merged packet, IP header at skb->data; consumed
 *
 * With UDP GRO on the netdev (rx-udp-gro-forwarding, or rx-gro-list for
 * fraglist GRO), consecutive packets of one flow that carry a UDP checksum
 * (RoCEv2 over IPv6 does) arrive as one; a sroce sender behind a veth
 * sends trains (sroce_tx_train_add()). Split them as transmit would and
 * take each as it came. Anything else that claims segments is malformed.
 * Context: softirq, the netdev receive path.
 */
void sroce_rcv_gso(struct sroce_dev *sdev, struct sk_buff *skb)
{
	/*
	 * Splitting a train gives its packets' holds back at once: hold its
	 * sender's credit until the last is taken, so that sender sends on
	 * behind them from its CPU (sroce_tx_credit_hold()).
	 */
	struct sroce_tx_credit *train = sroce_tx_credit_of(skb);
	struct sk_buff *segs, *next;

	if (!(skb_shinfo(skb)->gso_type & (SKB_GSO_UDP_L4 | SKB_GSO_FRAGLIST)))
		goto malformed;
	if (train)
		sroce_tx_credit_hold(train);
	/* Segmentation starts from the MAC header, as on transmit. */
	__skb_push(skb, skb->data - skb_mac_header(skb));
	segs = __skb_gso_segment(skb, NETIF_F_SG, false);
	if (IS_ERR_OR_NULL(segs)) {
		__skb_pull(skb, skb_network_offset(skb));
		if (train)
			sroce_tx_credit_release(train);
		goto malformed;
	}
	consume_skb(skb);
	skb_list_walk_safe(segs, skb, next) {
		skb_mark_not_on_list(skb);
		__skb_pull(skb, skb_network_offset(skb));
		sroce_count(sdev, SROCE_CNT_RX_ROCE_PACKETS);
		sroce_count(sdev, SROCE_CNT_RX_GRO_SEGMENTS);
		sroce_rcv(sdev, skb);
	}
	if (train)
		sroce_tx_credit_release(train);
	return;

malformed:
	sroce_count(sdev, SROCE_CNT_RX_ROCE_PACKETS);
	sroce_rx_drop(sdev, NULL, SROCE_CNT_RX_DROP_MALFORMED, 0, 0, 0);
	kfree_skb(skb);
}
