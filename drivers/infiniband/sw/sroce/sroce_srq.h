/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Shared receive queues (sroce_srq.c).
 */
#ifndef SROCE_SRQ_H
#define SROCE_SRQ_H

/**
 * struct sroce_srq - a shared receive queue.
 * @ibsrq: the core's SRQ
 * @lock: serialises the responders taking WQEs, and the limit
 * @post_lock: serialises kernel posters
 * @ring: the receive WQE ring (user or kernel consumer produces)
 * @cons: the kernel's own consumer index
 * @limit: armed limit, 0 when not armed
 * @max_sge: SGEs a WQE may carry
 * @broken: its producer index made no sense once; nothing more is taken
 *	from it, and every QP that tries fails (IB_EVENT_SRQ_ERR was raised)
 * @user: user space made it (it counts against the users' share)
 */
struct sroce_srq {
	struct ib_srq ibsrq;
	spinlock_t lock;	/* consumers and limit */
	spinlock_t post_lock;	/* kernel posters */
	struct sroce_ring ring;
	u32 cons;
	u32 limit;
	u32 max_sge;
	bool broken;
	bool user;
};

static inline struct sroce_srq *to_ssrq(struct ib_srq *ibsrq)
{
	return container_of(ibsrq, struct sroce_srq, ibsrq);
}

/* sroce_srq.c */
int sroce_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		     struct ib_udata *udata);
int sroce_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata);
int sroce_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		     enum ib_srq_attr_mask mask, struct ib_udata *udata);
int sroce_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr);
int sroce_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			const struct ib_recv_wr **bad_wr);
bool sroce_srq_take(struct sroce_qp *qp);

#endif /* SROCE_SRQ_H */
