/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Paths and address handles (sroce_ah.c; paths: sroce_tx.c).
 */
#ifndef SROCE_AH_H
#define SROCE_AH_H

/**
 * struct sroce_path - how packets of a connected QP are addressed.
 * @dmac: destination MAC from the address vector
 * @ipv6: the GIDs are IPv6 (else IPv4-mapped)
 * @loopback: the destination is this device: bypass the wire
 * @saddr: source address (an IPv4 address in its mapped form)
 * @daddr: destination address
 * @tos: traffic class, with ECT(0) set
 * @ttl: hop limit
 * @flow_label: IPv6 flow label
 * @sport: UDP source port, spreading QPs over flows
 * @sgid_index: index of the source GID (for query_ah)
 * @mcast: the destination is a multicast group
 */
struct sroce_path {
	u8 dmac[ETH_ALEN];
	bool ipv6;
	bool loopback;
	struct in6_addr saddr;
	struct in6_addr daddr;
	u8 tos;
	u8 ttl;
	u32 flow_label;
	__be16 sport;
	u8 sgid_index;
	bool mcast;
};

/**
 * struct sroce_av - the address an AH stands for; see sroce_ah.c.
 * @rcu: frees it after the senders that found it are done
 * @pd: protection domain of the AH
 * @path: packet addressing (the UDP source port is set per packet)
 */
struct sroce_av {
	struct rcu_head rcu;
	struct ib_pd *pd;
	struct sroce_path path;
};

struct sroce_ah {
	struct ib_ah ibah;
	u32 ah_num;
	struct sroce_av *av;
	bool user;
};

/* sroce_ah.c */
int sroce_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		    struct ib_udata *udata);
int sroce_destroy_ah(struct ib_ah *ibah, u32 flags);
int sroce_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr);
u32 sroce_ah_num(struct ib_ah *ibah);
const struct sroce_av *sroce_av_lookup_rcu(struct sroce_dev *sdev,
					   u32 ah_num, struct ib_pd *pd);

#endif /* SROCE_AH_H */
