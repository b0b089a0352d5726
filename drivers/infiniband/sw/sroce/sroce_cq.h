/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Completion queues (sroce_cq.c; kernel polling in sroce_kverbs.c).
 */
#ifndef SROCE_CQ_H
#define SROCE_CQ_H

/**
 * struct sroce_cq - a completion queue.
 * @ibcq: the core's CQ
 * @lock: serialises producers, arming and resizing
 * @ring: the CQE ring
 * @prod: the kernel's own producer index; the shared copy is output only
 * @notify: armed event type (IB_CQ_SOLICITED or IB_CQ_NEXT_COMP), or 0
 * @overrun: a completion was lost (CQ overrun, or a consumer index from
 *	user space that makes no sense) and IB_EVENT_CQ_ERR was raised; it
 *	is raised once, so a consumer that never reads its events cannot
 *	make the kernel queue one per lost completion
 * @user: user space made it (it counts against the users' share)
 * @kernel_events: a kernel CQ's SROCE_CQ_EV_* bits raised, not delivered
 * @notify_work: delivers them from interrupt context, away from the data
 *	path's locks, as a hardware CQ's interrupt would
 */
struct sroce_cq {
	struct ib_cq ibcq;
	spinlock_t lock;	/* producers, arming and resize */
	struct sroce_ring ring;
	u32 prod;
	u8 notify;
	bool overrun;
	bool user;
	unsigned long kernel_events;
	struct irq_work notify_work;
};

enum {
	SROCE_CQ_EV_COMP,	/* comp_handler */
	SROCE_CQ_EV_ERR,	/* IB_EVENT_CQ_ERR */
};

static inline struct sroce_cq *to_scq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct sroce_cq, ibcq);
}

/* sroce_cq.c */
int sroce_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		    sroce_create_cq_arg_t *arg);
int sroce_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata);
int sroce_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);
void sroce_cq_purge_qp(struct sroce_cq *cq, u32 qpn);
int sroce_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata);
void sroce_cq_post(struct sroce_cq *cq, const struct sroce_cqe *cqe,
		   bool solicited);

#endif /* SROCE_CQ_H */
