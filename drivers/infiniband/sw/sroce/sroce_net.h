/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Packets: building and sending them (sroce_tx.c, sroce_tx_credit.c),
 * the bound netdev (sroce_net.c), and reception (sroce_recv.c,
 * sroce_icrc.c).
 */
#ifndef SROCE_NET_H
#define SROCE_NET_H

/**
 * struct sroce_pkt - a received packet that passed validation.
 * @skb: the packet, IP header at skb->data, headers through the payload
 *	start in the linear area
 * @hdr: the BTH and extension headers (in the linear area)
 * @opcode: BTH opcode
 * @psn: BTH PSN
 * @ackreq: the sender asks for an acknowledgment
 * @se: solicited event
 * @hdr_len: bytes of BTH and extension headers
 * @payload_off: offset of the payload from skb->data
 * @payload_len: payload bytes, without pad and ICRC
 * @npsn: PSNs it stands for, from @psn on: more than 1 only for a unit of
 *	the device's loop (SROCE_LO_UNIT_NPSN)
 * @saddr: source IP address (IPv4 in its mapped form)
 */
struct sroce_pkt {
	struct sk_buff *skb;
	struct in6_addr saddr;
	const u8 *hdr;
	u8 opcode;
	u32 psn;
	bool ackreq;
	bool se;
	unsigned int hdr_len;
	unsigned int payload_off;
	unsigned int payload_len;
	u32 npsn;
};

/*
 * What a looped-back packet carries besides its bytes: it never leaves
 * the device, so nothing else reads or writes its control buffer. Zeroed
 * by allocation, which stands for one PSN.
 */
struct sroce_lo_cb {
	u32 npsn;
};

/* The last PSN a packet stands for. */
static inline u32 sroce_pkt_last_psn(const struct sroce_pkt *pkt)
{
	return (pkt->psn + pkt->npsn - 1) & SROCE_PSN_MASK;
}

static inline struct sroce_lo_cb *sroce_lo_cb(struct sk_buff *skb)
{
	BUILD_BUG_ON(sizeof(struct sroce_lo_cb) > sizeof(skb->cb));
	return (struct sroce_lo_cb *)skb->cb;
}

/* The PSNs a looped-back packet stands for: a zeroed count means one. */
static inline u32 sroce_lo_npsn(struct sk_buff *skb)
{
	return sroce_lo_cb(skb)->npsn ?: 1;
}

/* sroce_tx.c */
int sroce_path_from_ah(struct sroce_dev *sdev, const struct rdma_ah_attr *av,
		       struct sroce_path *p);
int sroce_path_init(struct sroce_qp *qp);
struct sk_buff *sroce_tx_alloc_to(struct sroce_dev *sdev,
				  const struct sroce_path *p, u32 dqpn,
				  u8 opcode, u32 psn, bool ackreq, bool se,
				  unsigned int ext_len, unsigned int payload,
				  void **ext, void **payload_buf);
int sroce_tx_add_page(struct sk_buff *skb, struct page *page,
		      unsigned int off, unsigned int len);
int sroce_tx_end_frags(struct sk_buff *skb);
void sroce_tx_send_to(struct sroce_qp *qp, const struct sroce_path *p,
		      struct sk_buff *skb);
void sroce_tx_train_add(struct sroce_qp *qp, struct sroce_tx_train *t,
			struct sk_buff *skb);
void sroce_tx_train_flush(struct sroce_qp *qp, struct sroce_tx_train *t);

/* A connected QP's packets go along its path to its one peer. */
static inline struct sk_buff *
sroce_tx_alloc(struct sroce_qp *qp, u8 opcode, u32 psn, bool ackreq, bool se,
	       unsigned int ext_len, unsigned int payload, void **ext,
	       void **payload_buf)
{
	return sroce_tx_alloc_to(to_sdev(qp->ibqp.device), &qp->path,
				 qp->attr.dest_qp_num, opcode, psn, ackreq, se,
				 ext_len, payload, ext, payload_buf);
}

int sroce_tx_credit_init(struct sroce_qp *qp);
void sroce_tx_credit_detach(struct sroce_qp *qp);
void sroce_tx_credit_put(struct sroce_tx_credit *c);
void sroce_tx_credit_release(struct sroce_tx_credit *c);
struct sroce_tx_credit *sroce_tx_credit_of(const struct sk_buff *skb);
void sroce_tx_credit_hold(struct sroce_tx_credit *c);
void sroce_tx_credit_wait_all(void);
bool sroce_tx_may_send(struct sroce_qp *qp, int who);
void sroce_tx_charge(struct sroce_qp *qp, struct sk_buff *skb);

static inline void sroce_tx_send(struct sroce_qp *qp, struct sk_buff *skb)
{
	sroce_tx_charge(qp, skb);
	sroce_tx_send_to(qp, &qp->path, skb);
}

/* Send as part of @t, which the caller flushes before it lets go. */
static inline void sroce_tx_send_train(struct sroce_qp *qp,
				       struct sroce_tx_train *t,
				       struct sk_buff *skb)
{
	sroce_tx_charge(qp, skb);
	sroce_tx_train_add(qp, t, skb);
}

/* sroce_cc.c */
void sroce_cc_ce_rcv(struct sroce_qp *qp);
void sroce_cc_cnp_rcv(struct sroce_qp *qp);
extern const struct attribute_group sroce_cc_attr_group;

/* sroce_dcqcn.c */
void sroce_cc_rp_init(struct sroce_qp *qp);
void sroce_cc_rp_reset(struct sroce_qp *qp);
void sroce_cc_rp_cnp(struct sroce_qp *qp);
bool sroce_cc_may_send(struct sroce_qp *qp, int who);
void sroce_cc_charge(struct sroce_qp *qp, unsigned int bytes);
bool sroce_cc_ackreq_due(struct sroce_qp *qp, unsigned int payload,
			 u32 since);
bool sroce_cc_rp_query(struct sroce_qp *qp, u32 *rate, u32 *target,
		       u32 *alpha);

/* sroce_gid.c */
int sroce_add_gid(const struct ib_gid_attr *attr, void **context);
int sroce_del_gid(const struct ib_gid_attr *attr, void **context);
bool sroce_gid_is_local(struct sroce_dev *sdev, const struct in6_addr *addr);
void sroce_gid_init(struct sroce_dev *sdev);
void sroce_gid_exit(struct sroce_dev *sdev);

/* sroce_loop.c */
bool sroce_lo_queue(struct sroce_dev *sdev, struct sk_buff *skb);
void sroce_lo_init(struct sroce_dev *sdev);
void sroce_lo_will_drain(void);
void sroce_lo_drain(struct sroce_dev *sdev);
void sroce_lo_exit(struct sroce_dev *sdev);

/* sroce_net.c */
enum ib_port_state sroce_port_state(struct net_device *ndev);
enum ib_mtu sroce_active_mtu(struct net_device *ndev);
enum ib_mtu sroce_max_mtu(struct net_device *ndev);
u8 sroce_phys_state(struct net_device *ndev);
int sroce_net_attach(struct sroce_dev *sdev);
void sroce_net_detach(struct sroce_dev *sdev);
struct sroce_dev *sroce_dev_from_netdev_rtnl(struct net_device *ndev);
bool sroce_net_peer_unchecked(struct sroce_dev *sdev,
			      const struct sroce_path *p,
			      netdev_features_t features);
bool sroce_net_may_train(struct sroce_dev *sdev, const struct sroce_path *p,
			 netdev_features_t features);
void sroce_port_sync_rtnl(struct sroce_dev *sdev);
int sroce_net_init(void);
void sroce_net_exit(void);

/* sroce_recv.c, sroce_icrc.c */
void sroce_rcv(struct sroce_dev *sdev, struct sk_buff *skb);
void sroce_rcv_local(struct sroce_dev *sdev, struct sk_buff *skb);
void sroce_rcv_gso(struct sroce_dev *sdev, struct sk_buff *skb);
void sroce_rx_drop(struct sroce_dev *sdev, struct sroce_qp *qp,
		   enum sroce_counter reason, u32 qpn, u32 psn, u8 opcode);

/* @qp drops @pkt for @reason; the caller frees it (sroce_rx_drop()). */
static inline void sroce_qp_rx_drop(struct sroce_qp *qp,
				    enum sroce_counter reason,
				    const struct sroce_pkt *pkt)
{
	sroce_rx_drop(to_sdev(qp->ibqp.device), qp, reason, qp->ibqp.qp_num,
		      pkt->psn, pkt->opcode);
}

__le32 sroce_icrc(struct sk_buff *skb, unsigned int bth_off,
		  unsigned int icrc_off);
void sroce_icrc_init(void);
void sroce_icrc_exit(void);

#endif /* SROCE_NET_H */
