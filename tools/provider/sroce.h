/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sroce rdma-core provider: private types.
 */
#ifndef SROCE_PROVIDER_H
#define SROCE_PROVIDER_H

/*
 * The provider interface. Inside an rdma-core tree (providers/sroce) this
 * line becomes two: #include <infiniband/driver.h> and, for the _STRUCT_
 * helpers its DECLARE_DRV_CMD needs, the generated
 * #include <kernel-abi/sroce-abi.h>.
 */
#include "ibverbs-provider.h"

#include <pthread.h>
#include <rdma/sroce-abi.h>

/* Pin a sroce or uapi constant to the ibverbs one it is passed through as. */
#define SROCE_SAME(a, b) static_assert((int)(a) == (int)(b), #a " != " #b)

/*
 * Driver parts of the commands. Neither request carries driver data; the
 * responses are the structs of the shared uapi header.
 */
DECLARE_DRV_CMD(usroce_get_context, IB_USER_VERBS_CMD_GET_CONTEXT,
		empty, sroce_alloc_ucontext_resp);
DECLARE_DRV_CMD(usroce_alloc_pd, IB_USER_VERBS_CMD_ALLOC_PD,
		empty, sroce_alloc_pd_resp);

DECLARE_DRV_CMD(usroce_create_cq, IB_USER_VERBS_CMD_CREATE_CQ,
		empty, sroce_create_cq_resp);
DECLARE_DRV_CMD(usroce_resize_cq, IB_USER_VERBS_CMD_RESIZE_CQ,
		empty, sroce_resize_cq_resp);
/* ibv_create_cq_ex: same driver data as create_cq, after the ex parts. */
DECLARE_DRV_CMD(usroce_create_cq_ex, IB_USER_VERBS_EX_CMD_CREATE_CQ,
		empty, sroce_create_cq_resp);

DECLARE_DRV_CMD(usroce_create_ah, IB_USER_VERBS_CMD_CREATE_AH,
		empty, sroce_create_ah_resp);

/* An address handle: UD send WQEs name it by the kernel's number. */
struct sroce_ah {
	struct ibv_ah ibv_ah;
	uint32_t ah_num;
};

static inline struct sroce_ah *to_sah(struct ibv_ah *ibah)
{
	return container_of(ibah, struct sroce_ah, ibv_ah);
}

struct ibv_ah *sroce_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr);
int sroce_destroy_ah(struct ibv_ah *ah);

DECLARE_DRV_CMD(usroce_create_srq, IB_USER_VERBS_CMD_CREATE_SRQ,
		empty, sroce_create_srq_resp);

struct ibv_srq *sroce_create_srq(struct ibv_pd *pd,
				 struct ibv_srq_init_attr *attr);
int sroce_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr,
		     int mask);
int sroce_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr);
int sroce_destroy_srq(struct ibv_srq *srq);
int sroce_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr,
			struct ibv_recv_wr **bad_wr);

/* A mapped ring of the kernel's: where it is and how it is laid out. */
struct sroce_uring {
	void *map;
	size_t map_len;
	struct sroce_ring_hdr *hdr;
	void *entries;
	uint32_t mask;
	uint32_t stride;
};

int sroce_uring_map(struct sroce_uring *r, int cmd_fd, uint64_t offset,
		    uint64_t length, uint32_t num_entries, uint32_t stride);
void sroce_uring_unmap(struct sroce_uring *r);

static inline void *sroce_uring_entry(const struct sroce_uring *r,
				      uint32_t idx)
{
	return (char *)r->entries + (size_t)(idx & r->mask) * r->stride;
}

/*
 * A completion queue: the ring the kernel fills, mapped from the context's
 * command fd. Polling takes the lock only against resize and other pollers;
 * an extended CQ's start_poll holds it until end_poll.
 */
struct sroce_cq {
	struct verbs_cq vcq;
	pthread_spinlock_t lock;
	struct sroce_uring ring;
	uint32_t cons;		/* our copy; published to ring.hdr->cons */
	int broken;		/* lost its ring in a failed resize */
	const struct sroce_cqe *cur;	/* ibv_start_poll iterator, or NULL */
};

/* The ibv_wc_flags of a CQE's SROCE_WC_F_* bits. */
static inline unsigned int sroce_wc_flags(uint32_t f)
{
	return (f & SROCE_WC_F_GRH ? IBV_WC_GRH : 0) |
	       (f & SROCE_WC_F_WITH_IMM ? IBV_WC_WITH_IMM : 0) |
	       (f & SROCE_WC_F_WITH_INV ? IBV_WC_WITH_INV : 0);
}

DECLARE_DRV_CMD(usroce_create_qp, IB_USER_VERBS_CMD_CREATE_QP,
		empty, sroce_create_qp_resp);

/*
 * A queue pair: its send and receive rings, mapped from the kernel, each
 * with its own lock and our copy of the producer index (posting never
 * reads the shared one back). The limits are what the kernel granted at
 * creation. The wr_* fields hold an ibv_wr_start() batch; they are
 * protected by sq_lock, which the batch holds until it completes.
 */
struct sroce_qp {
	struct verbs_qp vqp;
	struct sroce_uring sq;
	struct sroce_uring rq;
	int state;		/* enum ibv_qp_state; __atomic accesses */
	uint32_t max_send_sge;
	uint32_t max_inline_data;
	uint32_t max_recv_sge;

	pthread_spinlock_t sq_lock;
	uint32_t sq_prod;
	uint32_t wr_prod;	/* next free SQ entry of the batch */
	struct sroce_send_wqe *wr_cur;	/* WQE being built, or NULL */
	uint32_t wr_opcode;	/* its opcode */
	bool wr_has_data;	/* a data setter filled it */
	int wr_err;		/* first error of the batch */

	pthread_spinlock_t rq_lock;
	uint32_t rq_prod;
};

/*
 * A shared receive queue: its ring, mapped from the kernel, posted to
 * under the lock. The kernel needs no doorbell for it.
 */
struct sroce_srq {
	struct ibv_srq ibv_srq;
	struct sroce_uring ring;
	pthread_spinlock_t lock;
	uint32_t prod;
	uint32_t max_sge;
};

static inline struct sroce_srq *to_ssrq(struct ibv_srq *ibsrq)
{
	return container_of(ibsrq, struct sroce_srq, ibv_srq);
}

static inline struct sroce_qp *to_sqp(struct ibv_qp *ibqp)
{
	return container_of(ibqp, struct sroce_qp, vqp.qp);
}

/* The send_flags a send WQE may carry (the IBV_SEND_* of the same value). */
#define SROCE_SEND_F_ALL	(SROCE_SEND_F_FENCE | SROCE_SEND_F_SIGNALED | \
				 SROCE_SEND_F_SOLICITED | SROCE_SEND_F_INLINE)

static inline struct sroce_sge *sroce_wqe_sges(void *wqe, size_t hdr_size)
{
	return (struct sroce_sge *)((char *)wqe + hdr_size);
}

static inline bool sroce_wr_is_atomic(uint32_t opcode)
{
	return opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
	       opcode == IBV_WR_ATOMIC_FETCH_AND_ADD;
}

/* Inline data goes with the opcodes that send local data. */
static inline bool sroce_wr_inline_ok(uint32_t opcode)
{
	return opcode == IBV_WR_SEND || opcode == IBV_WR_SEND_WITH_IMM ||
	       opcode == IBV_WR_RDMA_WRITE ||
	       opcode == IBV_WR_RDMA_WRITE_WITH_IMM;
}

/* Sends may be posted from RTS on; in ERR the kernel flushes them. */
static inline bool sroce_qp_sq_ready(struct sroce_qp *qp)
{
	int state = __atomic_load_n(&qp->state, __ATOMIC_RELAXED);

	return state == IBV_QPS_RTS || state == IBV_QPS_SQD ||
	       state == IBV_QPS_SQE || state == IBV_QPS_ERR;
}

/* Whether the kernel still owns entry @prod of @r (the ring is full). */
static inline bool sroce_uring_full(const struct sroce_uring *r,
				    uint32_t prod)
{
	return prod - __atomic_load_n(&r->hdr->cons, __ATOMIC_ACQUIRE) >
	       r->mask;
}

/* Whether the kernel destroyed the ring's object (uapi header). */
static inline bool sroce_uring_dead(const struct sroce_uring *r)
{
	return __atomic_load_n(&r->hdr->flags, __ATOMIC_ACQUIRE) &
	       SROCE_RING_DEAD;
}

/*
 * 0 when entry @prod of @r may be filled; else ENOMEM (the ring is full
 * for now) or EIO (it is dead, and full for good).
 */
static inline int sroce_uring_room(const struct sroce_uring *r,
				   uint32_t prod)
{
	if (!sroce_uring_full(r, prod))
		return 0;
	return sroce_uring_dead(r) ? EIO : ENOMEM;
}

/* Hand entries before @prod to the kernel; under the ring's lock. */
static inline void sroce_uring_publish(struct sroce_uring *r, uint32_t prod)
{
	__atomic_store_n(&r->hdr->prod, prod, __ATOMIC_RELEASE);
}

/*
 * After publishing: whether the kernel went idle and wants the doorbell
 * system call. The full barrier pairs with the kernel's between setting
 * the flag and re-reading prod, so one side sees the other's store. Needs
 * no lock: each poster checks after its own store.
 */
static inline bool sroce_uring_need_doorbell(const struct sroce_uring *r)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return __atomic_load_n(&r->hdr->flags, __ATOMIC_RELAXED) &
	       SROCE_RING_NEED_DOORBELL;
}

int sroce_sq_doorbell(struct sroce_qp *qp);

struct ibv_qp *sroce_create_qp(struct ibv_pd *pd,
			       struct ibv_qp_init_attr *attr);
struct ibv_qp *sroce_create_qp_ex(struct ibv_context *ctx,
				  struct ibv_qp_init_attr_ex *attr);
int sroce_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
		    int attr_mask);
int sroce_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
		   struct ibv_qp_init_attr *init_attr);
int sroce_destroy_qp(struct ibv_qp *qp);
int sroce_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		    struct ibv_send_wr **bad_wr);
int sroce_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		    struct ibv_recv_wr **bad_wr);
void sroce_qp_ex_init(struct sroce_qp *qp);

struct ibv_cq *sroce_create_cq(struct ibv_context *ctx, int cqe,
			       struct ibv_comp_channel *channel,
			       int comp_vector);
int sroce_destroy_cq(struct ibv_cq *ibcq);
int sroce_poll_cq(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc);
int sroce_req_notify_cq(struct ibv_cq *ibcq, int solicited_only);
int sroce_resize_cq(struct ibv_cq *ibcq, int cqe);
struct ibv_cq_ex *sroce_create_cq_ex(struct ibv_context *ctx,
				     struct ibv_cq_init_attr_ex *attr);

struct sroce_device {
	struct verbs_device vdev;
	uint32_t abi_version;	/* uverbs ABI of the kernel device */
};

struct sroce_context {
	struct verbs_context vctx;
	uint32_t caps;		/* enum sroce_ucontext_caps */
};

struct sroce_pd {
	struct ibv_pd ibv_pd;
	uint32_t pdn;
};

static inline struct sroce_device *to_sdev(struct ibv_device *ibdev)
{
	return container_of(ibdev, struct sroce_device, vdev.device);
}

static inline struct sroce_context *to_sctx(struct ibv_context *ibctx)
{
	return container_of(ibctx, struct sroce_context, vctx.context);
}

static inline struct sroce_pd *to_spd(struct ibv_pd *ibpd)
{
	return container_of(ibpd, struct sroce_pd, ibv_pd);
}

#endif /* SROCE_PROVIDER_H */
