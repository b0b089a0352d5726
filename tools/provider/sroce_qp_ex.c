// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce provider: the ibv_wr_* work request API of QPs made by
 * ibv_create_qp_ex() with IBV_QP_INIT_ATTR_SEND_OPS_FLAGS.
 *
 * ibv_wr_start() takes the send queue lock, which the batch holds until
 * ibv_wr_complete() or ibv_wr_abort(). Each builder writes its WQE straight
 * into the next free ring entry, and the setters that follow fill in its
 * data. The kernel sees nothing before ibv_wr_complete() publishes prod, so
 * an aborted batch, or one in which a call failed (the first error is kept
 * for ibv_wr_complete() to return), is dropped just by not publishing it.
 */
#include <errno.h>
#include <string.h>

#include "sroce.h"

static inline struct sroce_qp *qpx_to_sqp(struct ibv_qp_ex *qpx)
{
	return container_of(qpx, struct sroce_qp, vqp.qp_ex);
}

static void sroce_wr_fail(struct sroce_qp *qp, int err)
{
	if (!qp->wr_err)
		qp->wr_err = err;
	qp->wr_cur = NULL;
}

/* Finish the WQE being built: an atomic needs its one 8-byte SGE. */
static void sroce_wr_close(struct sroce_qp *qp)
{
	if (qp->wr_cur && sroce_wr_is_atomic(qp->wr_opcode) &&
	    !qp->wr_has_data)
		sroce_wr_fail(qp, EINVAL);
	qp->wr_cur = NULL;
}

/* Start a WQE in the next free entry; NULL once the batch has failed. */
static struct sroce_send_wqe *sroce_wr_new(struct ibv_qp_ex *qpx,
					   uint32_t opcode)
{
	struct sroce_qp *qp = qpx_to_sqp(qpx);
	struct sroce_send_wqe *wqe;
	int err;

	sroce_wr_close(qp);
	if (qp->wr_err)
		return NULL;
	if (qpx->wr_flags & ~SROCE_SEND_F_ALL) {
		sroce_wr_fail(qp, EINVAL);
		return NULL;
	}
	err = sroce_uring_room(&qp->sq, qp->wr_prod);
	if (err) {
		sroce_wr_fail(qp, err);
		return NULL;
	}

	wqe = sroce_uring_entry(&qp->sq, qp->wr_prod++);
	/* Whether the data is inline is up to the setter that comes next. */
	*wqe = (struct sroce_send_wqe){
		.wr_id = qpx->wr_id,
		.opcode = opcode,
		.send_flags = qpx->wr_flags & ~SROCE_SEND_F_INLINE,
	};
	qp->wr_cur = wqe;
	qp->wr_opcode = opcode;
	qp->wr_has_data = false;
	return wqe;
}

static void sroce_wr_send(struct ibv_qp_ex *qpx)
{
	sroce_wr_new(qpx, IBV_WR_SEND);
}

static void sroce_wr_send_imm(struct ibv_qp_ex *qpx, __be32 imm_data)
{
	struct sroce_send_wqe *wqe = sroce_wr_new(qpx, IBV_WR_SEND_WITH_IMM);

	if (wqe)
		wqe->ex = imm_data;
}

static void sroce_wr_rdma(struct ibv_qp_ex *qpx, uint32_t opcode,
			  uint32_t rkey, uint64_t remote_addr, __be32 imm_data)
{
	struct sroce_send_wqe *wqe = sroce_wr_new(qpx, opcode);

	if (!wqe)
		return;
	wqe->ex = imm_data;
	wqe->wr.rdma.remote_addr = remote_addr;
	wqe->wr.rdma.rkey = rkey;
}

static void sroce_wr_rdma_write(struct ibv_qp_ex *qpx, uint32_t rkey,
				uint64_t remote_addr)
{
	sroce_wr_rdma(qpx, IBV_WR_RDMA_WRITE, rkey, remote_addr, 0);
}

static void sroce_wr_rdma_write_imm(struct ibv_qp_ex *qpx, uint32_t rkey,
				    uint64_t remote_addr, __be32 imm_data)
{
	sroce_wr_rdma(qpx, IBV_WR_RDMA_WRITE_WITH_IMM, rkey, remote_addr,
		      imm_data);
}

static void sroce_wr_rdma_read(struct ibv_qp_ex *qpx, uint32_t rkey,
			       uint64_t remote_addr)
{
	sroce_wr_rdma(qpx, IBV_WR_RDMA_READ, rkey, remote_addr, 0);
}

static void sroce_wr_atomic(struct ibv_qp_ex *qpx, uint32_t opcode,
			    uint32_t rkey, uint64_t remote_addr,
			    uint64_t compare_add, uint64_t swap)
{
	struct sroce_send_wqe *wqe = sroce_wr_new(qpx, opcode);

	if (!wqe)
		return;
	wqe->wr.atomic.remote_addr = remote_addr;
	wqe->wr.atomic.compare_add = compare_add;
	wqe->wr.atomic.swap = swap;
	wqe->wr.atomic.rkey = rkey;
}

static void sroce_wr_atomic_cmp_swp(struct ibv_qp_ex *qpx, uint32_t rkey,
				    uint64_t remote_addr, uint64_t compare,
				    uint64_t swap)
{
	sroce_wr_atomic(qpx, IBV_WR_ATOMIC_CMP_AND_SWP, rkey, remote_addr,
			compare, swap);
}

static void sroce_wr_atomic_fetch_add(struct ibv_qp_ex *qpx, uint32_t rkey,
				      uint64_t remote_addr, uint64_t add)
{
	sroce_wr_atomic(qpx, IBV_WR_ATOMIC_FETCH_AND_ADD, rkey, remote_addr,
			add, 0);
}

/* Atomic write (IBA annex A19): its 8 bytes travel in the WQE. */
static void sroce_wr_atomic_write(struct ibv_qp_ex *qpx, uint32_t rkey,
				  uint64_t remote_addr, const void *atomic_wr)
{
	struct sroce_send_wqe *wqe = sroce_wr_new(qpx, SROCE_WR_ATOMIC_WRITE);

	if (!wqe)
		return;
	wqe->wr.atomic.remote_addr = remote_addr;
	wqe->wr.atomic.rkey = rkey;
	memcpy(&wqe->wr.atomic.swap, atomic_wr, sizeof(wqe->wr.atomic.swap));
}

/* Send with invalidate: the peer invalidates @invalidate_rkey on arrival. */
static void sroce_wr_send_inv(struct ibv_qp_ex *qpx, uint32_t invalidate_rkey)
{
	struct sroce_send_wqe *wqe = sroce_wr_new(qpx, IBV_WR_SEND_WITH_INV);

	if (wqe)
		wqe->ex = invalidate_rkey;
}

/* Local operations carry no data: no setter may follow them. */
static bool sroce_wr_is_local(uint32_t opcode)
{
	return opcode == IBV_WR_LOCAL_INV || opcode == IBV_WR_BIND_MW;
}

static void sroce_wr_local_inv(struct ibv_qp_ex *qpx, uint32_t invalidate_rkey)
{
	struct sroce_send_wqe *wqe = sroce_wr_new(qpx, IBV_WR_LOCAL_INV);

	if (wqe)
		wqe->ex = invalidate_rkey;
}

/*
 * Bind a type 2 window under @rkey (type 1 windows are bound through
 * ibv_bind_mw(), as with ibv_post_send()). A zero length with no region
 * is refused: a type 2 window is unbound by invalidation.
 */
static void sroce_wr_bind_mw(struct ibv_qp_ex *qpx, struct ibv_mw *mw,
			     uint32_t rkey,
			     const struct ibv_mw_bind_info *bind_info)
{
	struct sroce_qp *qp = qpx_to_sqp(qpx);
	struct sroce_send_wqe *wqe;

	if (!mw || mw->type != IBV_MW_TYPE_2 || !bind_info->mr) {
		sroce_wr_close(qp);
		sroce_wr_fail(qp, EINVAL);
		return;
	}
	wqe = sroce_wr_new(qpx, IBV_WR_BIND_MW);
	if (!wqe)
		return;
	wqe->wr.bind.mw_rkey = mw->rkey;
	wqe->wr.bind.new_rkey = rkey;
	wqe->wr.bind.mr_lkey = bind_info->mr->lkey;
	wqe->wr.bind.addr = bind_info->addr;
	wqe->wr.bind.length = bind_info->length;
	wqe->wr.bind.access = bind_info->mw_access_flags;
}

static void sroce_wr_set_sge_list(struct ibv_qp_ex *qpx, size_t num_sge,
				  const struct ibv_sge *sg_list)
{
	struct sroce_qp *qp = qpx_to_sqp(qpx);
	struct sroce_send_wqe *wqe = qp->wr_cur;

	if (!wqe || num_sge > qp->max_send_sge ||
	    sroce_wr_is_local(qp->wr_opcode) ||
	    (sroce_wr_is_atomic(qp->wr_opcode) &&
	     (num_sge != 1 || sg_list[0].length != 8))) {
		sroce_wr_fail(qp, EINVAL);
		return;
	}
	wqe->send_flags &= ~SROCE_SEND_F_INLINE;
	wqe->inline_len = 0;
	wqe->num_sge = num_sge;
	if (num_sge)
		memcpy(sroce_wqe_sges(wqe, sizeof(*wqe)), sg_list,
		       num_sge * sizeof(*sg_list));
	qp->wr_has_data = true;
}

static void sroce_wr_set_sge(struct ibv_qp_ex *qpx, uint32_t lkey,
			     uint64_t addr, uint32_t length)
{
	const struct ibv_sge sge = {
		.addr = addr,
		.length = length,
		.lkey = lkey,
	};

	sroce_wr_set_sge_list(qpx, 1, &sge);
}

static void sroce_wr_set_inline_data_list(struct ibv_qp_ex *qpx,
					  size_t num_buf,
					  const struct ibv_data_buf *buf_list)
{
	struct sroce_qp *qp = qpx_to_sqp(qpx);
	struct sroce_send_wqe *wqe = qp->wr_cur;
	char *data;
	size_t i, len = 0;

	if (!wqe || !sroce_wr_inline_ok(qp->wr_opcode)) {
		sroce_wr_fail(qp, EINVAL);
		return;
	}
	data = (char *)sroce_wqe_sges(wqe, sizeof(*wqe));
	for (i = 0; i < num_buf; i++) {
		/* A failed batch is dropped, so a partial copy is harmless. */
		if (buf_list[i].length > qp->max_inline_data - len) {
			sroce_wr_fail(qp, EINVAL);
			return;
		}
		memcpy(data + len, buf_list[i].addr, buf_list[i].length);
		len += buf_list[i].length;
	}
	wqe->send_flags |= SROCE_SEND_F_INLINE;
	wqe->num_sge = 0;
	wqe->inline_len = len;
	qp->wr_has_data = true;
}

static void sroce_wr_set_inline_data(struct ibv_qp_ex *qpx, void *addr,
				     size_t length)
{
	const struct ibv_data_buf buf = {
		.addr = addr,
		.length = length,
	};

	sroce_wr_set_inline_data_list(qpx, 1, &buf);
}

static void sroce_wr_start(struct ibv_qp_ex *qpx)
{
	struct sroce_qp *qp = qpx_to_sqp(qpx);

	pthread_spin_lock(&qp->sq_lock);
	qp->wr_prod = qp->sq_prod;
	qp->wr_cur = NULL;
	qp->wr_err = 0;
}

static int sroce_wr_complete(struct ibv_qp_ex *qpx)
{
	struct sroce_qp *qp = qpx_to_sqp(qpx);
	int ret;

	sroce_wr_close(qp);
	ret = qp->wr_err;
	if (!ret && !sroce_qp_sq_ready(qp))
		ret = EINVAL;
	if (ret || qp->wr_prod == qp->sq_prod) {
		pthread_spin_unlock(&qp->sq_lock);
		return ret;
	}
	qp->sq_prod = qp->wr_prod;
	sroce_uring_publish(&qp->sq, qp->sq_prod);
	pthread_spin_unlock(&qp->sq_lock);

	if (sroce_uring_need_doorbell(&qp->sq))
		return sroce_sq_doorbell(qp);
	return 0;
}

static void sroce_wr_set_ud_addr(struct ibv_qp_ex *qpx, struct ibv_ah *ah,
				 uint32_t remote_qpn, uint32_t remote_qkey)
{
	struct sroce_qp *qp = qpx_to_sqp(qpx);

	if (!qp->wr_cur)
		return;
	if (qp->vqp.qp.qp_type != IBV_QPT_UD || !ah) {
		sroce_wr_fail(qp, EINVAL);
		return;
	}
	qp->wr_cur->wr.ud.ah = to_sah(ah)->ah_num;
	qp->wr_cur->wr.ud.remote_qpn = remote_qpn;
	qp->wr_cur->wr.ud.remote_qkey = remote_qkey;
}

static void sroce_wr_abort(struct ibv_qp_ex *qpx)
{
	pthread_spin_unlock(&qpx_to_sqp(qpx)->sq_lock);
}

/*
 * Every supported builder is installed whatever send_ops_flags named:
 * the flags only say what the application means to use, and creation
 * already refused any we cannot build.
 */
void sroce_qp_ex_init(struct sroce_qp *qp)
{
	struct ibv_qp_ex *qpx = &qp->vqp.qp_ex;

	qpx->wr_atomic_cmp_swp = sroce_wr_atomic_cmp_swp;
	qpx->wr_atomic_fetch_add = sroce_wr_atomic_fetch_add;
	qpx->wr_atomic_write = sroce_wr_atomic_write;
	qpx->wr_bind_mw = sroce_wr_bind_mw;
	qpx->wr_local_inv = sroce_wr_local_inv;
	qpx->wr_rdma_read = sroce_wr_rdma_read;
	qpx->wr_rdma_write = sroce_wr_rdma_write;
	qpx->wr_rdma_write_imm = sroce_wr_rdma_write_imm;
	qpx->wr_send = sroce_wr_send;
	qpx->wr_send_imm = sroce_wr_send_imm;
	qpx->wr_send_inv = sroce_wr_send_inv;
	qpx->wr_set_inline_data = sroce_wr_set_inline_data;
	qpx->wr_set_inline_data_list = sroce_wr_set_inline_data_list;
	qpx->wr_set_sge = sroce_wr_set_sge;
	qpx->wr_set_sge_list = sroce_wr_set_sge_list;
	qpx->wr_set_ud_addr = sroce_wr_set_ud_addr;
	qpx->wr_start = sroce_wr_start;
	qpx->wr_complete = sroce_wr_complete;
	qpx->wr_abort = sroce_wr_abort;
	qp->vqp.comp_mask |= VERBS_QP_EX;
}
