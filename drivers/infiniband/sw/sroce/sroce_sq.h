/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The send side, in the order a WQE travels: the send queue engine
 * (sroce_sq.c) fetches and completes WQEs for every QP type and hands
 * them to a transmitter, the RC/UC requester (sroce_req.c) or UD
 * (sroce_ud.c); for RC, the completer (sroce_comp.c) takes what comes
 * back and rewinds the requester. All of it runs under req_lock.
 */
#ifndef SROCE_SQ_H
#define SROCE_SQ_H

#include "sroce.h"

/* The kernel's copy of send WQE @idx, and its state. */
static inline struct sroce_send_wqe *sroce_swqe(struct sroce_qp *qp, u32 idx)
{
	return qp->req.shadow + (size_t)(idx & qp->sq.mask) * qp->sq.entry_size;
}

static inline struct sroce_swqe_state *sroce_sst(struct sroce_qp *qp, u32 idx)
{
	return &qp->req.st[idx & qp->sq.mask];
}

static inline const struct sroce_sge *
sroce_swqe_sge(const struct sroce_send_wqe *w)
{
	return (const struct sroce_sge *)(w + 1);
}

/* Operations answered by responses, holding a responder resource. */
static inline bool sroce_op_is_rdatomic(u32 op)
{
	return op == IB_UVERBS_WR_RDMA_READ || op == SROCE_WR_ATOMIC_WRITE ||
	       op == IB_UVERBS_WR_ATOMIC_CMP_AND_SWP ||
	       op == IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD;
}

/* Operations on this side only: no packets, no PSNs. */
static inline bool sroce_op_is_local(u32 op)
{
	return op == IB_UVERBS_WR_LOCAL_INV || op == SROCE_WR_REG_MR ||
	       op == IB_UVERBS_WR_BIND_MW;
}

/* Operations that take a receive WQE at the responder (credits). */
static inline bool sroce_op_takes_recv(u32 op)
{
	return op == IB_UVERBS_WR_SEND || op == IB_UVERBS_WR_SEND_WITH_IMM ||
	       op == IB_UVERBS_WR_SEND_WITH_INV ||
	       op == IB_UVERBS_WR_RDMA_WRITE_WITH_IMM;
}

static inline bool sroce_op_is_atomic(u32 op)
{
	return op == IB_UVERBS_WR_ATOMIC_CMP_AND_SWP ||
	       op == IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD;
}

static inline u32 sroce_swqe_last_psn(const struct sroce_swqe_state *st)
{
	return (st->first_psn + st->npsn - 1) & SROCE_PSN_MASK;
}

/* PSN of a read's first response not yet placed. */
static inline u32 sroce_read_next_psn(struct sroce_qp *qp,
				      const struct sroce_swqe_state *st)
{
	return (st->first_psn + st->read_off / qp->mtu) & SROCE_PSN_MASK;
}

/* sroce_sq.c */
bool sroce_sq_fetch(struct sroce_qp *qp);
bool sroce_sq_next_ready(struct sroce_qp *qp);
void sroce_sq_complete(struct sroce_qp *qp, int status);
void sroce_sq_fail(struct sroce_qp *qp, int status);
void sroce_sq_progress_bh(struct sroce_qp *qp);
void sroce_sq_kick(struct sroce_qp *qp);
void sroce_sq_kick_any(struct sroce_qp *qp);
void sroce_sq_doorbell(struct sroce_qp *qp);
void sroce_sq_work(struct work_struct *work);
void sroce_sq_poll_init(void);
enum hrtimer_restart sroce_sq_poll_watchdog(struct hrtimer *timer);
enum hrtimer_restart sroce_sq_handoff_watchdog(struct hrtimer *timer);
void sroce_sq_poll_cancel(struct sroce_qp *qp);
void sroce_sq_reset(struct sroce_qp *qp);
void sroce_sq_flush(struct sroce_qp *qp);
int sroce_sq_create(struct sroce_qp *qp, u32 num_wr, u32 wqe_size,
		    struct ib_ucontext *uctx);
void sroce_sq_destroy(struct sroce_qp *qp);

/* sroce_req.c */
bool sroce_req_progress(struct sroce_qp *qp, int budget);
void sroce_req_arm_timer(struct sroce_qp *qp);
u64 sroce_req_rto_ns(struct sroce_qp *qp);
bool sroce_req_has_more(struct sroce_qp *qp);
void sroce_req_seek(struct sroce_qp *qp, struct sroce_send_wqe *w, u32 off);
void sroce_req_init(struct sroce_qp *qp);
void sroce_req_credit_update(struct sroce_qp *qp, u32 aeth);

/* sroce_comp.c */
void sroce_comp_rcv(struct sroce_qp *qp, struct sroce_pkt *pkt);
enum hrtimer_restart sroce_comp_timer(struct hrtimer *timer);
u64 sroce_comp_pto_ns(struct sroce_qp *qp, u64 rto_ns);
u32 sroce_comp_read_ask_len(struct sroce_qp *qp, u32 idx);

/* sroce_ud.c */
bool sroce_ud_progress(struct sroce_qp *qp, int budget);

#endif /* SROCE_SQ_H */
