// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unreliable datagram transport (IBA 9.8) for UD QPs and the GSI QP (QP1):
 * every message is one packet of at most the path MTU with a DETH, sent
 * to the address an AH names; a send completes once its packet is handed
 * to the netdev. A receive takes the next receive WQE and fills it with a
 * 40-byte GRH (for RoCEv2: the IPv6 header, or the IPv4 header in its last
 * 20 bytes) and the payload. Datagrams with the wrong Q_Key, or for a QP
 * with no receive posted, are dropped and counted: that is UD.
 */
#include <linux/etherdevice.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <rdma/ib_mad.h>

#include "sroce_sq.h"
#include "sroce_hdr.h"

#define SROCE_GRH_BYTES	40

/* The SL of a UD receive: its packet type, in mlx5's encoding. */
#define SROCE_UD_SL_ROCEV2	0x8
#define SROCE_UD_SL_IPV6	0x1
#define SROCE_UD_SL_IPV4	0x2

/*
 * Build and send the datagram of the WQE at req->next. Return a completion
 * status, or -ENOMEM to try again later.
 * Context: req_lock held, BH disabled (so an RCU read side).
 */
static int sroce_ud_send_one(struct sroce_qp *qp, struct sroce_send_wqe *w,
			     u32 len)
{
	struct sroce_dev *sdev = to_sdev(qp->ibqp.device);
	bool imm = w->opcode == IB_UVERBS_WR_SEND_WITH_IMM;
	u32 dqpn = w->wr.ud.remote_qpn & SROCE_BTH_QPN_MASK;
	const struct sroce_av *av;
	struct sroce_deth *deth;
	struct sroce_path path;
	struct sk_buff *skb;
	void *ext, *payload;
	u32 qkey, sge = 0, sge_off = 0;

	av = sroce_av_lookup_rcu(sdev, w->wr.ud.ah, qp->ibqp.pd);
	if (!av)
		return IB_WC_LOC_QP_OP_ERR;
	if (len > qp->mtu)
		return IB_WC_LOC_LEN_ERR;
	path = av->path;
	path.sport = cpu_to_be16(rdma_get_udp_sport(path.flow_label,
						    qp->ibqp.qp_num, dqpn));
	skb = sroce_tx_alloc_to(sdev, &path, dqpn,
				SROCE_TRANSPORT_UD |
				(imm ? SROCE_OP_SEND_ONLY_IMM :
				       SROCE_OP_SEND_ONLY),
				qp->req.psn, false,
				w->send_flags & SROCE_SEND_F_SOLICITED,
				SROCE_DETH_BYTES +
				(imm ? SROCE_IMMDT_BYTES : 0),
				len, &ext, &payload);
	if (!skb)
		return -ENOMEM;
	deth = ext;
	qkey = w->wr.ud.remote_qkey & SROCE_QKEY_CONTROLLED ?
	       qp->attr.qkey : w->wr.ud.remote_qkey;
	deth->qkey = cpu_to_be32(qkey);
	deth->sqpn = cpu_to_be32(qp->ibqp.qp_num);
	if (imm)
		memcpy(deth + 1, &w->ex, SROCE_IMMDT_BYTES);
	if (w->send_flags & SROCE_SEND_F_INLINE) {
		memcpy(payload, w + 1, len);
	} else if (sroce_sgl_gather(qp, (const struct sroce_sge *)(w + 1),
				    w->num_sge, &sge, &sge_off, payload,
				    len)) {
		kfree_skb(skb);
		return IB_WC_LOC_PROT_ERR;
	}
	sroce_tx_charge(qp, skb);
	sroce_tx_send_to(qp, &path, skb);
	qp->req.psn = (qp->req.psn + 1) & SROCE_PSN_MASK;
	return IB_WC_SUCCESS;
}

/**
 * sroce_ud_progress() - send posted datagrams, at most @budget.
 * @qp: a UD or GSI queue pair
 * @budget: packets to send at most
 *
 * A WQE that fails locally completes in error and stops the send queue
 * (SQE), which then flushes what is posted until the consumer moves the
 * QP back to RTS; receives go on.
 * Context: req_lock held, BH disabled.
 * Return: true when it stopped only for the budget (or for memory).
 */
bool sroce_ud_progress(struct sroce_qp *qp, int budget)
{
	struct sroce_req *req = &qp->req;
	struct sroce_send_wqe *w;
	int status;

	lockdep_assert_held(&qp->req_lock);
	while (budget > 0) {
		if (sroce_qp_state(qp) == IB_QPS_SQE && !qp->dead) {
			sroce_sq_flush(qp);
			return false;
		}
		if (sroce_qp_state(qp) != IB_QPS_RTS || qp->dead)
			return false;
		if (!sroce_sq_next_ready(qp))
			return false;
		w = sroce_swqe(qp, req->next);
		status = sroce_sst(qp, req->next)->status;
		if (status == IB_WC_SUCCESS &&
		    !sroce_tx_may_send(qp, SROCE_TX_PAUSED_REQ))
			return false;
		if (status == IB_WC_SUCCESS)
			status = sroce_ud_send_one(qp, w,
						   sroce_sst(qp, req->next)->length);
		if (status == -ENOMEM)
			return true;
		req->next++;
		req->started = req->next;
		if (status != IB_WC_SUCCESS) {
			/* SQE first: a consumer seeing the error moves it on. */
			sroce_qp_set_sq_error(qp);
			sroce_sq_complete(qp, status);
			return false;
		}
		sroce_sq_complete(qp, IB_WC_SUCCESS);
		budget--;
	}
	return true;
}

/* The GRH a receive buffer starts with, from the packet's IP header. */
static void sroce_ud_grh(const struct sk_buff *skb, u8 *grh, u8 *hdr_type)
{
	memset(grh, 0, SROCE_GRH_BYTES);
	if (skb->protocol == htons(ETH_P_IP)) {
		memcpy(grh + SROCE_GRH_BYTES - sizeof(struct iphdr),
		       skb->data, sizeof(struct iphdr));
		*hdr_type = SROCE_NETWORK_IPV4;
	} else {
		memcpy(grh, skb->data, sizeof(struct ipv6hdr));
		*hdr_type = SROCE_NETWORK_IPV6;
	}
}

static void sroce_ud_complete(struct sroce_qp *qp, struct sroce_cqe *cqe,
			      bool se)
{
	struct sroce_resp *resp = &qp->resp;

	cqe->wr_id = resp->rwqe->wr_id;
	resp->in_send = false;
	sroce_rq_release(qp);
	sroce_cq_post(to_scq(qp->ibqp.recv_cq), cqe, se);
}

/**
 * sroce_ud_rcv() - a datagram for a UD or GSI queue pair.
 * @qp: the queue pair
 * @pkt: the packet, validated, opcode UD SEND_ONLY(_IMM)
 *
 * Context: softirq, RCU read side.
 */
void sroce_ud_rcv(struct sroce_qp *qp, struct sroce_pkt *pkt)
{
	struct sroce_dev *sdev = to_sdev(qp->ibqp.device);
	const struct sroce_deth *deth = (const void *)(pkt->hdr +
						       SROCE_BTH_BYTES);
	struct sk_buff *skb = pkt->skb;
	struct sroce_cqe cqe = {
		.status = IB_WC_SUCCESS,
		.opcode = IB_WC_RECV,
		.qp_num = qp->ibqp.qp_num,
		.src_qp = be32_to_cpu(deth->sqpn) & SROCE_BTH_QPN_MASK,
		.wc_flags = SROCE_WC_F_GRH,
		.port_num = SROCE_PORT,
	};
	u8 grh[SROCE_GRH_BYTES];
	enum ib_qp_state state;
	u32 qkey;
	int err;

	spin_lock(&qp->resp_lock);
	state = sroce_qp_state(qp);
	if ((state != IB_QPS_RTR && state != IB_QPS_RTS &&
	     state != IB_QPS_SQE) || qp->dead) {
		sroce_qp_rx_drop(qp, SROCE_CNT_RX_DROP_QP_STATE, pkt);
		goto out;
	}
	qkey = qp->ibqp.qp_type == IB_QPT_GSI ? SROCE_QP1_QKEY :
						 qp->attr.qkey;
	if (be32_to_cpu(deth->qkey) != qkey) {
		sroce_qp_rx_drop(qp, SROCE_CNT_RX_DROP_BAD_QKEY, pkt);
		goto out;
	}
	if (!sroce_rq_take(qp)) {
		sroce_qp_rx_drop(qp, SROCE_CNT_RX_DROP_NO_RECV, pkt);
		goto out;
	}
	qp->resp.in_send = true;

	sroce_ud_grh(skb, grh, &cqe.network_hdr_type);
	/*
	 * RoCE carries no SL. A UD receive reports its L3 header type there
	 * as mlx5 does (bit 3: UDP, bits 2:0: 1 IPv6, 2 IPv4): UCX's ud_verbs
	 * reads it to find the destination GID in the GRH area and drops
	 * every datagram without it. The GSI QP keeps 0, as the CM copies
	 * wc.sl into the paths it builds.
	 */
	if (qp->ibqp.qp_type == IB_QPT_UD)
		cqe.sl = SROCE_UD_SL_ROCEV2 |
			 (cqe.network_hdr_type == SROCE_NETWORK_IPV4 ?
			  SROCE_UD_SL_IPV4 : SROCE_UD_SL_IPV6);
	if (skb_mac_header_was_set(skb))
		ether_addr_copy(cqe.smac, eth_hdr(skb)->h_source);
	else	/* looped back: never had an Ethernet header */
		ether_addr_copy(cqe.smac, sdev->ndev->dev_addr);
	if ((pkt->opcode & SROCE_OP_MASK) == SROCE_OP_SEND_ONLY_IMM) {
		memcpy(&cqe.ex, deth + 1, sizeof(cqe.ex));
		cqe.wc_flags |= SROCE_WC_F_WITH_IMM;
	}
	cqe.byte_len = SROCE_GRH_BYTES + pkt->payload_len;
	err = sroce_sgl_place_buf(qp, (const struct sroce_sge *)(qp->resp.rwqe + 1),
				  qp->resp.rwqe->num_sge, 0, grh,
				  SROCE_GRH_BYTES);
	if (!err)
		err = sroce_sgl_place(qp,
				      (const struct sroce_sge *)(qp->resp.rwqe + 1),
				      qp->resp.rwqe->num_sge, SROCE_GRH_BYTES,
				      skb, pkt->payload_off, pkt->payload_len);
	if (err) {
		/* One bad datagram fails its receive, not the QP. */
		cqe.status = err == -EMSGSIZE ? IB_WC_LOC_LEN_ERR :
						IB_WC_LOC_PROT_ERR;
		cqe.byte_len = 0;
	}
	sroce_ud_complete(qp, &cqe, pkt->se);
out:
	spin_unlock(&qp->resp_lock);
}
