// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce provider: queue pairs. Creation maps the send and receive rings
 * the kernel allocated; state changes and queries go to the kernel, and
 * the state they leave is cached for the posting paths (sroce_post.c,
 * sroce_qp_ex.c).
 */
#include <errno.h>
#include <stdlib.h>

#include "sroce.h"

/* What the ibv_wr_* API builds (sroce_qp_ex.c). */
#define SROCE_QP_EX_SEND_OPS						\
	(IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |	\
	 IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |		\
	 IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |	\
	 IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | IBV_QP_EX_WITH_ATOMIC_WRITE | \
	 IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_LOCAL_INV |		\
	 IBV_QP_EX_WITH_SEND_WITH_INV)

/* The limits the kernel granted must fit the WQE strides it chose. */
static int sroce_qp_check_caps(const struct sroce_qp *qp,
			       const struct ibv_qp_cap *cap)
{
	const size_t sge = sizeof(struct sroce_sge);
	size_t sq_room, rq_room;

	if (qp->sq.stride < sizeof(struct sroce_send_wqe) ||
	    qp->rq.stride < sizeof(struct sroce_recv_wqe))
		return EPROTO;
	sq_room = qp->sq.stride - sizeof(struct sroce_send_wqe);
	rq_room = qp->rq.stride - sizeof(struct sroce_recv_wqe);
	if (cap->max_send_sge > sq_room / sge ||
	    cap->max_inline_data > sq_room ||
	    cap->max_recv_sge > rq_room / sge)
		return EPROTO;
	return 0;
}

/* Both create verbs end here; @attr->cap returns what was granted. */
static struct ibv_qp *sroce_qp_create(struct ibv_context *ctx,
				      struct ibv_qp_init_attr_ex *attr)
{
	struct usroce_create_qp_resp resp = {};
	struct usroce_create_qp cmd = {};
	struct sroce_create_qp_resp *r = &resp.drv_payload;
	int fd = ctx->cmd_fd;
	struct sroce_qp *qp;
	int ret;

	if (attr->qp_type != IBV_QPT_RC && attr->qp_type != IBV_QPT_UC &&
	    attr->qp_type != IBV_QPT_UD) {
		errno = EOPNOTSUPP;
		return NULL;
	}

	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;
	ret = ibv_cmd_create_qp_ex(ctx, &qp->vqp, attr, &cmd.ibv_cmd,
				   sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	if (ret)
		goto err_free;
	ret = sroce_uring_map(&qp->sq, fd, r->sq_mmap_offset, r->sq_mmap_length,
			      r->sq_num_entries, r->sq_wqe_size);
	if (!ret)
		ret = sroce_uring_map(&qp->rq, fd, r->rq_mmap_offset,
				      r->rq_mmap_length, r->rq_num_entries,
				      r->rq_wqe_size);
	if (!ret)
		ret = sroce_qp_check_caps(qp, &attr->cap);
	if (ret)
		goto err_destroy;

	qp->max_send_sge = attr->cap.max_send_sge;
	qp->max_inline_data = attr->cap.max_inline_data;
	qp->max_recv_sge = attr->cap.max_recv_sge;
	qp->state = IBV_QPS_RESET;
	qp->sq_prod = __atomic_load_n(&qp->sq.hdr->prod, __ATOMIC_RELAXED);
	qp->rq_prod = __atomic_load_n(&qp->rq.hdr->prod, __ATOMIC_RELAXED);
	pthread_spin_init(&qp->sq_lock, PTHREAD_PROCESS_PRIVATE);
	pthread_spin_init(&qp->rq_lock, PTHREAD_PROCESS_PRIVATE);
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)
		sroce_qp_ex_init(qp);
	return &qp->vqp.qp;

err_destroy:
	sroce_uring_unmap(&qp->rq);
	sroce_uring_unmap(&qp->sq);
	ibv_cmd_destroy_qp(&qp->vqp.qp);
err_free:
	free(qp);
	errno = ret;
	return NULL;
}

struct ibv_qp *sroce_create_qp(struct ibv_pd *pd,
			       struct ibv_qp_init_attr *attr)
{
	struct ibv_qp_init_attr_ex attr_ex = {
		.qp_context = attr->qp_context,
		.send_cq = attr->send_cq,
		.recv_cq = attr->recv_cq,
		.srq = attr->srq,
		.cap = attr->cap,
		.qp_type = attr->qp_type,
		.sq_sig_all = attr->sq_sig_all,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = pd,
	};
	struct ibv_qp *qp;

	qp = sroce_qp_create(pd->context, &attr_ex);
	if (qp)
		attr->cap = attr_ex.cap;
	return qp;
}

/* ibv_create_qp_ex(): what ibv_create_qp() does, plus the ibv_wr_* API. */
struct ibv_qp *sroce_create_qp_ex(struct ibv_context *ctx,
				  struct ibv_qp_init_attr_ex *attr)
{
	struct ibv_qp_init_attr_ex ex = *attr;
	struct ibv_qp *qp;

	if ((attr->comp_mask & ~(IBV_QP_INIT_ATTR_PD |
				 IBV_QP_INIT_ATTR_CREATE_FLAGS |
				 IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)) ||
	    ((attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) &&
	     attr->create_flags) ||
	    ((attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
	     (attr->send_ops_flags & ~(uint64_t)SROCE_QP_EX_SEND_OPS))) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	/*
	 * No creation flag is supported, but the mask alone asks for nothing
	 * (pyverbs sets it at random); the command layer refuses the mask.
	 */
	ex.comp_mask &= ~IBV_QP_INIT_ATTR_CREATE_FLAGS;
	qp = sroce_qp_create(ctx, &ex);
	if (qp)
		attr->cap = ex.cap;
	return qp;
}

/*
 * On reset the kernel may have emptied the rings, indices included: take
 * the producer indices from the rings rather than keep ours.
 */
static void sroce_qp_reset_rings(struct sroce_qp *qp)
{
	pthread_spin_lock(&qp->sq_lock);
	qp->sq_prod = __atomic_load_n(&qp->sq.hdr->prod, __ATOMIC_RELAXED);
	pthread_spin_unlock(&qp->sq_lock);
	pthread_spin_lock(&qp->rq_lock);
	qp->rq_prod = __atomic_load_n(&qp->rq.hdr->prod, __ATOMIC_RELAXED);
	pthread_spin_unlock(&qp->rq_lock);
}

int sroce_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		    int attr_mask)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	struct ibv_modify_qp cmd = {};
	int ret;

	ret = ibv_cmd_modify_qp(ibqp, attr, attr_mask, &cmd, sizeof(cmd));
	if (ret || !(attr_mask & IBV_QP_STATE))
		return ret;
	if (attr->qp_state == IBV_QPS_RESET)
		sroce_qp_reset_rings(qp);
	__atomic_store_n(&qp->state, attr->qp_state, __ATOMIC_RELAXED);
	return 0;
}

int sroce_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		   int attr_mask, struct ibv_qp_init_attr *init_attr)
{
	struct ibv_query_qp cmd = {};
	int ret;

	ret = ibv_cmd_query_qp(ibqp, attr, attr_mask, init_attr, &cmd,
			       sizeof(cmd));
	/* The kernel may have moved it on by itself (to SQE or ERR). */
	if (!ret && (attr_mask & IBV_QP_STATE))
		__atomic_store_n(&to_sqp(ibqp)->state, attr->qp_state,
				 __ATOMIC_RELAXED);
	return ret;
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
	pthread_spin_destroy(&qp->rq_lock);
	pthread_spin_destroy(&qp->sq_lock);
	free(qp);
	return 0;
}
