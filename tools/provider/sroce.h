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
 * command fd. Polling takes the lock only against resize and other pollers.
 */
struct sroce_cq {
	struct verbs_cq vcq;
	pthread_spinlock_t lock;
	struct sroce_uring ring;
	uint32_t cons;		/* our copy; published to ring.hdr->cons */
	int broken;		/* lost its ring in a failed resize */
};

DECLARE_DRV_CMD(usroce_create_qp, IB_USER_VERBS_CMD_CREATE_QP,
		empty, sroce_create_qp_resp);

/* A queue pair: its send and receive rings, mapped from the kernel. */
struct sroce_qp {
	struct verbs_qp vqp;
	struct sroce_uring sq;
	struct sroce_uring rq;
};

struct ibv_qp *sroce_create_qp(struct ibv_pd *pd,
			       struct ibv_qp_init_attr *attr);
int sroce_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
		    int attr_mask);
int sroce_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
		   struct ibv_qp_init_attr *init_attr);
int sroce_destroy_qp(struct ibv_qp *qp);

struct ibv_cq *sroce_create_cq(struct ibv_context *ctx, int cqe,
			       struct ibv_comp_channel *channel,
			       int comp_vector);
int sroce_destroy_cq(struct ibv_cq *ibcq);
int sroce_poll_cq(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc);
int sroce_req_notify_cq(struct ibv_cq *ibcq, int solicited_only);
int sroce_resize_cq(struct ibv_cq *ibcq, int cqe);

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
