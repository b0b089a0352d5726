// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce provider: queue pairs. Creation maps the send and receive rings
 * the kernel allocated; state changes and queries go to the kernel.
 * Posting work requests is not implemented yet.
 */
#include <errno.h>
#include <stdlib.h>

#include "sroce.h"

static inline struct sroce_qp *to_sqp(struct ibv_qp *ibqp)
{
	return container_of(ibqp, struct sroce_qp, vqp.qp);
}

struct ibv_qp *sroce_create_qp(struct ibv_pd *pd,
			       struct ibv_qp_init_attr *attr)
{
	struct usroce_create_qp_resp resp = {};
	struct usroce_create_qp cmd = {};
	struct sroce_create_qp_resp *r = &resp.drv_payload;
	int fd = pd->context->cmd_fd;
	struct sroce_qp *qp;
	int ret;

	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;
	ret = ibv_cmd_create_qp(pd, &qp->vqp.qp, attr, &cmd.ibv_cmd,
				sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	if (ret)
		goto err_free;
	ret = sroce_uring_map(&qp->sq, fd, r->sq_mmap_offset, r->sq_mmap_length,
			      r->sq_num_entries, r->sq_wqe_size);
	if (!ret)
		ret = sroce_uring_map(&qp->rq, fd, r->rq_mmap_offset,
				      r->rq_mmap_length, r->rq_num_entries,
				      r->rq_wqe_size);
	if (ret) {
		sroce_uring_unmap(&qp->sq);
		ibv_cmd_destroy_qp(&qp->vqp.qp);
		goto err_free;
	}
	return &qp->vqp.qp;

err_free:
	free(qp);
	errno = ret;
	return NULL;
}

int sroce_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
		    int attr_mask)
{
	struct ibv_modify_qp cmd = {};

	return ibv_cmd_modify_qp(qp, attr, attr_mask, &cmd, sizeof(cmd));
}

int sroce_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
		   struct ibv_qp_init_attr *init_attr)
{
	struct ibv_query_qp cmd = {};

	return ibv_cmd_query_qp(qp, attr, attr_mask, init_attr, &cmd,
				sizeof(cmd));
}

int sroce_destroy_qp(struct ibv_qp *ibqp)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	int ret;

	ret = ibv_cmd_destroy_qp(ibqp);
	if (ret)
		return ret;
	sroce_uring_unmap(&qp->rq);
	sroce_uring_unmap(&qp->sq);
	free(qp);
	return 0;
}
