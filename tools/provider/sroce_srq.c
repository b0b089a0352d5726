// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce provider: shared receive queues. ibv_post_srq_recv writes receive
 * WQEs straight into the SRQ's ring; the kernel's responders take them as
 * messages arrive, so posting never makes a system call.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sroce.h"

struct ibv_srq *sroce_create_srq(struct ibv_pd *pd,
				 struct ibv_srq_init_attr *attr)
{
	struct usroce_create_srq_resp resp = {};
	struct ibv_create_srq cmd = {};
	struct sroce_create_srq_resp *r = &resp.drv_payload;
	struct sroce_srq *srq;
	int ret;

	srq = calloc(1, sizeof(*srq));
	if (!srq)
		return NULL;
	ret = ibv_cmd_create_srq(pd, &srq->ibv_srq, attr, &cmd, sizeof(cmd),
				 &resp.ibv_resp, sizeof(resp));
	if (ret)
		goto err_free;
	ret = sroce_uring_map(&srq->ring, pd->context->cmd_fd, r->mmap_offset,
			      r->mmap_length, r->num_entries, r->wqe_size);
	if (!ret && (r->wqe_size < sizeof(struct sroce_recv_wqe) ||
		     attr->attr.max_sge >
		     (r->wqe_size - sizeof(struct sroce_recv_wqe)) /
		     sizeof(struct sroce_sge)))
		ret = EPROTO;
	if (ret)
		goto err_destroy;
	srq->max_sge = attr->attr.max_sge;
	srq->prod = __atomic_load_n(&srq->ring.hdr->prod, __ATOMIC_RELAXED);
	pthread_spin_init(&srq->lock, PTHREAD_PROCESS_PRIVATE);
	return &srq->ibv_srq;

err_destroy:
	sroce_uring_unmap(&srq->ring);
	ibv_cmd_destroy_srq(&srq->ibv_srq);
err_free:
	free(srq);
	errno = ret;
	return NULL;
}

int sroce_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr,
		     int mask)
{
	struct ibv_modify_srq cmd = {};

	return ibv_cmd_modify_srq(srq, attr, mask, &cmd, sizeof(cmd));
}

int sroce_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr)
{
	struct ibv_query_srq cmd = {};

	return ibv_cmd_query_srq(srq, attr, &cmd, sizeof(cmd));
}

int sroce_destroy_srq(struct ibv_srq *ibsrq)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);
	int ret = ibv_cmd_destroy_srq(ibsrq);

	if (ret)
		return ret;
	sroce_uring_unmap(&srq->ring);
	pthread_spin_destroy(&srq->lock);
	free(srq);
	return 0;
}

int sroce_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
			struct ibv_recv_wr **bad_wr)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);
	struct sroce_recv_wqe *wqe;
	uint32_t prod;
	int ret = 0;

	/* No doorbell to fail here: a dead ring says it (uapi header). */
	if (sroce_uring_dead(&srq->ring)) {
		*bad_wr = wr;
		return EIO;
	}
	pthread_spin_lock(&srq->lock);
	prod = srq->prod;
	for (; wr; wr = wr->next, prod++) {
		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > srq->max_sge)
			ret = EINVAL;
		else
			ret = sroce_uring_room(&srq->ring, prod);
		if (ret) {
			*bad_wr = wr;
			break;
		}
		wqe = sroce_uring_entry(&srq->ring, prod);
		*wqe = (struct sroce_recv_wqe){
			.wr_id = wr->wr_id,
			.num_sge = wr->num_sge,
		};
		if (wr->num_sge)
			memcpy(sroce_wqe_sges(wqe, sizeof(*wqe)), wr->sg_list,
			       wr->num_sge * sizeof(struct ibv_sge));
	}
	if (prod != srq->prod) {
		srq->prod = prod;
		sroce_uring_publish(&srq->ring, prod);
	}
	pthread_spin_unlock(&srq->lock);
	return ret;
}
