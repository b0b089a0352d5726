// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce provider: ibv_post_send and ibv_post_recv. Work requests become
 * WQEs (layout in the uapi header) written straight into the rings shared
 * with the kernel. One release store of prod per call publishes them; a
 * system call is made only when the kernel has gone idle and asked for a
 * doorbell.
 */
#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>
#include <rdma/rdma_user_ioctl.h>
#include <rdma/ib_user_ioctl_cmds.h>

#include "sroce.h"

/* WQE opcodes and send flags are ibverbs' values, passed through. */
SROCE_SAME(IBV_WR_RDMA_WRITE, IB_UVERBS_WR_RDMA_WRITE);
SROCE_SAME(IBV_WR_RDMA_WRITE_WITH_IMM, IB_UVERBS_WR_RDMA_WRITE_WITH_IMM);
SROCE_SAME(IBV_WR_SEND, IB_UVERBS_WR_SEND);
SROCE_SAME(IBV_WR_SEND_WITH_IMM, IB_UVERBS_WR_SEND_WITH_IMM);
SROCE_SAME(IBV_WR_RDMA_READ, IB_UVERBS_WR_RDMA_READ);
SROCE_SAME(IBV_WR_ATOMIC_CMP_AND_SWP, IB_UVERBS_WR_ATOMIC_CMP_AND_SWP);
SROCE_SAME(IBV_WR_ATOMIC_FETCH_AND_ADD, IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD);
SROCE_SAME(IBV_WR_LOCAL_INV, IB_UVERBS_WR_LOCAL_INV);
SROCE_SAME(IBV_WR_BIND_MW, IB_UVERBS_WR_BIND_MW);
SROCE_SAME(IBV_WR_SEND_WITH_INV, IB_UVERBS_WR_SEND_WITH_INV);
SROCE_SAME(IBV_WR_ATOMIC_WRITE, SROCE_WR_ATOMIC_WRITE);
SROCE_SAME(SROCE_SEND_F_FENCE, IBV_SEND_FENCE);
SROCE_SAME(SROCE_SEND_F_SIGNALED, IBV_SEND_SIGNALED);
SROCE_SAME(SROCE_SEND_F_SOLICITED, IBV_SEND_SOLICITED);
SROCE_SAME(SROCE_SEND_F_INLINE, IBV_SEND_INLINE);

/* SGEs are copied from struct ibv_sge as they are. */
static_assert(sizeof(struct ibv_sge) == sizeof(struct sroce_sge), "sge");
static_assert(offsetof(struct ibv_sge, addr) ==
	      offsetof(struct sroce_sge, addr), "sge addr");
static_assert(offsetof(struct ibv_sge, length) ==
	      offsetof(struct sroce_sge, length), "sge length");
static_assert(offsetof(struct ibv_sge, lkey) ==
	      offsetof(struct sroce_sge, lkey), "sge lkey");
/* What follows a WQE header stays 8-byte aligned. */
static_assert(sizeof(struct sroce_send_wqe) % 8 == 0, "send wqe");
static_assert(sizeof(struct sroce_recv_wqe) % 8 == 0, "recv wqe");

/*
 * The send queue's doorbell: the module's own method, which takes the
 * QP's handle and nothing else, where the module has it; else the post
 * command with no work requests.
 */
int sroce_sq_doorbell(struct sroce_qp *qp)
{
	struct ibv_context *ctx = qp->vqp.qp.context;
	struct {
		struct ib_uverbs_ioctl_hdr hdr;
		struct ib_uverbs_attr qp;
	} cmd = {
		.hdr = {
			.length = sizeof(cmd),
			.object_id = UVERBS_OBJECT_QP,
			.method_id = SROCE_METHOD_QP_SQ_DOORBELL,
			.num_attrs = 1,
		},
		.qp = {
			.attr_id = SROCE_ATTR_SQ_DOORBELL_QP,
			.data = qp->vqp.qp.handle,
		},
	};
	struct ibv_send_wr *bad;

	if (!(to_sctx(ctx)->caps & SROCE_UCTX_CAP_SQ_DOORBELL_METHOD))
		return ibv_cmd_post_send(&qp->vqp.qp, NULL, &bad);
	return ioctl(ctx->cmd_fd, RDMA_VERBS_IOCTL, &cmd) ? errno : 0;
}

/* The receive queue's: the post command with no work requests. */
static int sroce_rq_doorbell(struct sroce_qp *qp)
{
	struct ibv_recv_wr *bad;

	return ibv_cmd_post_recv(&qp->vqp.qp, NULL, &bad);
}

static int sroce_check_send_wr(const struct sroce_qp *qp,
			       const struct ibv_send_wr *wr)
{
	uint64_t len = 0;
	int i;

	/* Datagrams are sends, each to the address of an AH. */
	if (qp->vqp.qp.qp_type == IBV_QPT_UD &&
	    ((wr->opcode != IBV_WR_SEND && wr->opcode != IBV_WR_SEND_WITH_IMM) ||
	     !wr->wr.ud.ah))
		return EINVAL;
	/* UC: sends, writes and the local operations. */
	if (qp->vqp.qp.qp_type == IBV_QPT_UC &&
	    (wr->opcode == IBV_WR_RDMA_READ ||
	     wr->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
	     wr->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD ||
	     wr->opcode == IBV_WR_SEND_WITH_INV))
		return EINVAL;
	switch (wr->opcode) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
	case IBV_WR_SEND_WITH_INV:
	case IBV_WR_RDMA_READ:
		break;
	case IBV_WR_LOCAL_INV:
		if (wr->num_sge)
			return EINVAL;
		break;
	case IBV_WR_BIND_MW:
		/* Type 2 here; type 1 comes through ibv_bind_mw(). */
		if (wr->num_sge || !wr->bind_mw.mw ||
		    (wr->bind_mw.bind_info.length && !wr->bind_mw.bind_info.mr))
			return EINVAL;
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		/* The original 8-byte value lands in exactly one SGE. */
		if (wr->num_sge != 1 || wr->sg_list[0].length != 8)
			return EINVAL;
		break;
	default:
		return EINVAL;
	}
	if ((wr->send_flags & ~SROCE_SEND_F_ALL) || wr->num_sge < 0)
		return EINVAL;
	if (!(wr->send_flags & IBV_SEND_INLINE))
		return (uint32_t)wr->num_sge > qp->max_send_sge ? EINVAL : 0;

	if (!sroce_wr_inline_ok(wr->opcode))
		return EINVAL;
	for (i = 0; i < wr->num_sge; i++) {
		len += wr->sg_list[i].length;
		if (len > qp->max_inline_data)
			return EINVAL;
	}
	return 0;
}

/* Fill a send WQE from a work request sroce_check_send_wr() accepted. */
static void sroce_write_send_wqe(const struct sroce_qp *qp,
				 struct sroce_send_wqe *wqe,
				 const struct ibv_send_wr *wr)
{
	char *data = (char *)sroce_wqe_sges(wqe, sizeof(*wqe));
	uint32_t len = 0;
	int i;

	*wqe = (struct sroce_send_wqe){
		.wr_id = wr->wr_id,
		.opcode = wr->opcode,
		.send_flags = wr->send_flags,
	};
	if (wr->opcode == IBV_WR_SEND_WITH_IMM ||
	    wr->opcode == IBV_WR_RDMA_WRITE_WITH_IMM)
		wqe->ex = wr->imm_data;
	if (wr->opcode == IBV_WR_SEND_WITH_INV ||
	    wr->opcode == IBV_WR_LOCAL_INV)
		wqe->ex = wr->invalidate_rkey;

	switch (wr->opcode) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_RDMA_READ:
		wqe->wr.rdma.remote_addr = wr->wr.rdma.remote_addr;
		wqe->wr.rdma.rkey = wr->wr.rdma.rkey;
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		wqe->wr.atomic.remote_addr = wr->wr.atomic.remote_addr;
		wqe->wr.atomic.compare_add = wr->wr.atomic.compare_add;
		wqe->wr.atomic.swap = wr->wr.atomic.swap;
		wqe->wr.atomic.rkey = wr->wr.atomic.rkey;
		break;
	case IBV_WR_BIND_MW: {
		const struct ibv_mw_bind_info *b = &wr->bind_mw.bind_info;

		wqe->wr.bind.mw_rkey = wr->bind_mw.mw->rkey;
		wqe->wr.bind.new_rkey = wr->bind_mw.rkey;
		wqe->wr.bind.mr_lkey = b->mr ? b->mr->lkey : 0;
		wqe->wr.bind.addr = b->addr;
		wqe->wr.bind.length = b->length;
		wqe->wr.bind.access = b->mw_access_flags;
		break;
	}
	default:
		if (qp->vqp.qp.qp_type != IBV_QPT_UD)
			break;
		wqe->wr.ud.ah = to_sah(wr->wr.ud.ah)->ah_num;
		wqe->wr.ud.remote_qpn = wr->wr.ud.remote_qpn;
		wqe->wr.ud.remote_qkey = wr->wr.ud.remote_qkey;
		break;
	}

	if (wr->send_flags & IBV_SEND_INLINE) {
		for (i = 0; i < wr->num_sge; i++) {
			memcpy(data + len,
			       (void *)(uintptr_t)wr->sg_list[i].addr,
			       wr->sg_list[i].length);
			len += wr->sg_list[i].length;
		}
		wqe->inline_len = len;
	} else if (wr->num_sge) {
		wqe->num_sge = wr->num_sge;
		memcpy(data, wr->sg_list, wr->num_sge * sizeof(struct ibv_sge));
	}
}

int sroce_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		    struct ibv_send_wr **bad_wr)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	struct ibv_send_wr *first = wr;
	uint32_t prod;
	int ret = 0, err;

	if (!sroce_qp_sq_ready(qp)) {
		*bad_wr = wr;
		return EINVAL;
	}

	pthread_spin_lock(&qp->sq_lock);
	prod = qp->sq_prod;
	for (; wr; wr = wr->next, prod++) {
		ret = sroce_check_send_wr(qp, wr);
		if (!ret)
			ret = sroce_uring_room(&qp->sq, prod);
		if (ret) {
			*bad_wr = wr;
			break;
		}
		sroce_write_send_wqe(qp, sroce_uring_entry(&qp->sq, prod), wr);
	}
	if (prod == qp->sq_prod) {
		pthread_spin_unlock(&qp->sq_lock);
		return ret;
	}
	qp->sq_prod = prod;
	sroce_uring_publish(&qp->sq, prod);
	pthread_spin_unlock(&qp->sq_lock);

	if (sroce_uring_need_doorbell(&qp->sq)) {
		err = sroce_sq_doorbell(qp);
		/* Which of the posted WRs the kernel will run is unknown. */
		if (err && !ret) {
			*bad_wr = first;
			ret = err;
		}
	}
	return ret;
}

int sroce_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		    struct ibv_recv_wr **bad_wr)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	struct ibv_recv_wr *first = wr;
	struct sroce_recv_wqe *wqe;
	uint32_t prod;
	int ret = 0, err;

	/* A QP with an SRQ receives into the SRQ's WQEs alone. */
	if (__atomic_load_n(&qp->state, __ATOMIC_RELAXED) == IBV_QPS_RESET ||
	    ibqp->srq) {
		*bad_wr = wr;
		return EINVAL;
	}

	pthread_spin_lock(&qp->rq_lock);
	prod = qp->rq_prod;
	for (; wr; wr = wr->next, prod++) {
		if (wr->num_sge < 0 ||
		    (uint32_t)wr->num_sge > qp->max_recv_sge)
			ret = EINVAL;
		else
			ret = sroce_uring_room(&qp->rq, prod);
		if (ret) {
			*bad_wr = wr;
			break;
		}
		wqe = sroce_uring_entry(&qp->rq, prod);
		*wqe = (struct sroce_recv_wqe){
			.wr_id = wr->wr_id,
			.num_sge = wr->num_sge,
		};
		if (wr->num_sge)
			memcpy(sroce_wqe_sges(wqe, sizeof(*wqe)), wr->sg_list,
			       wr->num_sge * sizeof(struct ibv_sge));
	}
	if (prod == qp->rq_prod) {
		pthread_spin_unlock(&qp->rq_lock);
		return ret;
	}
	qp->rq_prod = prod;
	sroce_uring_publish(&qp->rq, prod);
	pthread_spin_unlock(&qp->rq_lock);

	if (sroce_uring_need_doorbell(&qp->rq)) {
		err = sroce_rq_doorbell(qp);
		if (err && !ret) {
			*bad_wr = first;
			ret = err;
		}
	}
	return ret;
}
