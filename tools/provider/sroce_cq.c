// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce provider: completion queues. The kernel writes completions into a
 * ring mapped from the context's command fd; polling reads them with no
 * system call, through ibv_poll_cq() or, on a CQ made by
 * ibv_create_cq_ex(), also the ibv_start_poll() iterator. Ordering: the
 * kernel publishes prod with a release store after writing the entry, we
 * read it with an acquire load, and we hand entries back by publishing
 * cons with a release store.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sroce.h"

/* Completion opcodes pass through: the uapi ones are ibverbs' values. */
SROCE_SAME(IBV_WC_SEND, IB_UVERBS_WC_SEND);
SROCE_SAME(IBV_WC_RDMA_WRITE, IB_UVERBS_WC_RDMA_WRITE);
SROCE_SAME(IBV_WC_RDMA_READ, IB_UVERBS_WC_RDMA_READ);
SROCE_SAME(IBV_WC_COMP_SWAP, IB_UVERBS_WC_COMP_SWAP);
SROCE_SAME(IBV_WC_FETCH_ADD, IB_UVERBS_WC_FETCH_ADD);
SROCE_SAME(IBV_WC_ATOMIC_WRITE, SROCE_WC_ATOMIC_WRITE);

/* The ex CQ's driver data starts right after the ex core response. */
static_assert(offsetof(struct usroce_create_cq_ex_resp, drv_payload) == 16,
	      "cq udata must start after ib_uverbs_ex_create_cq_resp");
static_assert(sizeof(struct usroce_create_cq_ex) == 0x38,
	      "create_cq_ex carries no driver request");

static inline uint32_t load_acquire(const uint32_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static inline void store_release(uint32_t *p, uint32_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

static inline struct sroce_cq *to_scq(struct ibv_cq *ibcq)
{
	return container_of(ibcq, struct sroce_cq, vcq.cq);
}

static int sroce_cq_map(struct sroce_cq *cq, int cmd_fd, uint64_t offset,
			uint64_t length, uint32_t num_entries)
{
	int ret = sroce_uring_map(&cq->ring, cmd_fd, offset, length,
				  num_entries, sizeof(struct sroce_cqe));

	if (!ret)
		cq->cons = __atomic_load_n(&cq->ring.hdr->cons,
					   __ATOMIC_RELAXED);
	return ret;
}

static struct sroce_cq *sroce_cq_alloc(void)
{
	struct sroce_cq *cq = calloc(1, sizeof(*cq));

	if (cq)
		pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);
	return cq;
}

static void sroce_cq_free(struct sroce_cq *cq)
{
	pthread_spin_destroy(&cq->lock);
	free(cq);
}

/* Map the ring of a CQ the kernel just made, or destroy the CQ again. */
static int sroce_cq_setup(struct sroce_cq *cq, struct ibv_context *ctx,
			  const struct sroce_create_cq_resp *r)
{
	int ret = sroce_cq_map(cq, ctx->cmd_fd, r->mmap_offset,
			       r->mmap_length, r->num_entries);

	if (ret)
		ibv_cmd_destroy_cq(&cq->vcq.cq);
	return ret;
}

struct ibv_cq *sroce_create_cq(struct ibv_context *ctx, int cqe,
			       struct ibv_comp_channel *channel,
			       int comp_vector)
{
	struct usroce_create_cq_resp resp = {};
	struct usroce_create_cq cmd = {};
	struct sroce_cq *cq;
	int ret;

	cq = sroce_cq_alloc();
	if (!cq)
		return NULL;
	ret = ibv_cmd_create_cq(ctx, cqe, channel, comp_vector, &cq->vcq.cq,
				&cmd.ibv_cmd, sizeof(cmd), &resp.ibv_resp,
				sizeof(resp));
	if (!ret)
		ret = sroce_cq_setup(cq, ctx, &resp.drv_payload);
	if (ret) {
		sroce_cq_free(cq);
		errno = ret;
		return NULL;
	}
	return &cq->vcq.cq;
}

int sroce_destroy_cq(struct ibv_cq *ibcq)
{
	struct sroce_cq *cq = to_scq(ibcq);
	int ret;

	ret = ibv_cmd_destroy_cq(ibcq);
	if (ret)
		return ret;
	sroce_uring_unmap(&cq->ring);
	sroce_cq_free(cq);
	return 0;
}

static void sroce_cqe_to_wc(const struct sroce_cqe *cqe, struct ibv_wc *wc)
{
	wc->wr_id = cqe->wr_id;
	wc->status = cqe->status;
	wc->opcode = cqe->opcode;
	wc->vendor_err = cqe->vendor_err;
	wc->byte_len = cqe->byte_len;
	wc->imm_data = cqe->ex;		/* or invalidated_rkey, its union */
	wc->qp_num = cqe->qp_num;
	wc->src_qp = cqe->src_qp;
	wc->wc_flags = sroce_wc_flags(cqe->wc_flags);
	wc->pkey_index = cqe->pkey_index;
	wc->slid = cqe->slid;
	wc->sl = cqe->sl;
	wc->dlid_path_bits = cqe->dlid_path_bits;
}

/*
 * Whether the empty ring of @cq is dead (uapi header): nothing more will
 * come, and nothing the kernel wrote before is left unread.
 */
static bool sroce_cq_dead(struct sroce_cq *cq)
{
	/* Acquire: the kernel's last prod comes before its dead flag. */
	return sroce_uring_dead(&cq->ring) &&
	       cq->cons == load_acquire(&cq->ring.hdr->prod);
}

int sroce_poll_cq(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc)
{
	struct sroce_cq *cq = to_scq(ibcq);
	uint32_t prod;
	int n = 0;

	pthread_spin_lock(&cq->lock);
	if (cq->broken) {
		pthread_spin_unlock(&cq->lock);
		return -1;
	}
	prod = load_acquire(&cq->ring.hdr->prod);
	if (cq->cons == prod && sroce_cq_dead(cq)) {
		pthread_spin_unlock(&cq->lock);
		errno = EIO;
		return -1;
	}
	while (n < num_entries && cq->cons != prod) {
		sroce_cqe_to_wc(sroce_uring_entry(&cq->ring, cq->cons),
				&wc[n++]);
		cq->cons++;
	}
	if (n)
		store_release(&cq->ring.hdr->cons, cq->cons);
	pthread_spin_unlock(&cq->lock);
	return n;
}

int sroce_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	return ibv_cmd_req_notify_cq(ibcq, solicited_only);
}

int sroce_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	struct sroce_cq *cq = to_scq(ibcq);
	struct usroce_resize_cq_resp resp = {};
	struct usroce_resize_cq cmd = {};
	struct sroce_uring old;
	int ret;

	pthread_spin_lock(&cq->lock);
	/* The kernel reads our consumer index from the old ring. */
	store_release(&cq->ring.hdr->cons, cq->cons);
	ret = ibv_cmd_resize_cq(ibcq, cqe, &cmd.ibv_cmd, sizeof(cmd),
				&resp.ibv_resp, sizeof(resp));
	if (!ret) {
		old = cq->ring;
		ret = sroce_cq_map(cq, ibcq->context->cmd_fd,
				   resp.drv_payload.mmap_offset,
				   resp.drv_payload.mmap_length,
				   resp.drv_payload.num_entries);
		/*
		 * The kernel already writes to the new ring; without it
		 * completions would vanish, so polling fails from now on.
		 */
		if (ret) {
			cq->broken = 1;
			cq->ring.map = NULL;
		}
		sroce_uring_unmap(&old);
	}
	pthread_spin_unlock(&cq->lock);
	return ret;
}

/* The completion fields an extended CQ can report. */
#define SROCE_CQ_EX_WC_FLAGS						\
	(IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM |			\
	 IBV_WC_EX_WITH_QP_NUM | IBV_WC_EX_WITH_SRC_QP |		\
	 IBV_WC_EX_WITH_SLID | IBV_WC_EX_WITH_SL |			\
	 IBV_WC_EX_WITH_DLID_PATH_BITS)

static inline struct sroce_cq *cqx_to_scq(struct ibv_cq_ex *cqx)
{
	return container_of(cqx, struct sroce_cq, vcq.cq_ex);
}

static inline const struct sroce_cqe *cqx_cur(struct ibv_cq_ex *cqx)
{
	return cqx_to_scq(cqx)->cur;
}

/* Point the iterator at the completion at cons, if there is one. */
static int sroce_cq_ex_load(struct sroce_cq *cq)
{
	const struct sroce_cqe *cqe;

	if (cq->cons == load_acquire(&cq->ring.hdr->prod)) {
		cq->cur = NULL;
		return ENOENT;
	}
	cqe = sroce_uring_entry(&cq->ring, cq->cons);
	cq->cur = cqe;
	cq->vcq.cq_ex.wr_id = cqe->wr_id;
	cq->vcq.cq_ex.status = cqe->status;
	return 0;
}

/* On success the lock stays held until sroce_end_poll(). */
static int sroce_start_poll(struct ibv_cq_ex *cqx,
			    struct ibv_poll_cq_attr *attr)
{
	struct sroce_cq *cq = cqx_to_scq(cqx);
	int ret;

	(void)attr;
	pthread_spin_lock(&cq->lock);
	ret = cq->broken ? EIO : sroce_cq_ex_load(cq);
	if (ret == ENOENT && sroce_cq_dead(cq))
		ret = EIO;
	if (ret)
		pthread_spin_unlock(&cq->lock);
	return ret;
}

static int sroce_next_poll(struct ibv_cq_ex *cqx)
{
	struct sroce_cq *cq = cqx_to_scq(cqx);

	if (cq->cur)
		cq->cons++;
	return sroce_cq_ex_load(cq);
}

static void sroce_end_poll(struct ibv_cq_ex *cqx)
{
	struct sroce_cq *cq = cqx_to_scq(cqx);

	if (cq->cur)
		cq->cons++;
	cq->cur = NULL;
	store_release(&cq->ring.hdr->cons, cq->cons);
	pthread_spin_unlock(&cq->lock);
}

static enum ibv_wc_opcode sroce_wc_read_opcode(struct ibv_cq_ex *cqx)
{
	return cqx_cur(cqx)->opcode;
}

static uint32_t sroce_wc_read_vendor_err(struct ibv_cq_ex *cqx)
{
	return cqx_cur(cqx)->vendor_err;
}

static uint32_t sroce_wc_read_byte_len(struct ibv_cq_ex *cqx)
{
	return cqx_cur(cqx)->byte_len;
}

/* Also ibv_wc_read_invalidated_rkey(): the kernel puts either in ex. */
static __be32 sroce_wc_read_imm_data(struct ibv_cq_ex *cqx)
{
	return cqx_cur(cqx)->ex;
}

static uint32_t sroce_wc_read_qp_num(struct ibv_cq_ex *cqx)
{
	return cqx_cur(cqx)->qp_num;
}

static uint32_t sroce_wc_read_src_qp(struct ibv_cq_ex *cqx)
{
	return cqx_cur(cqx)->src_qp;
}

static unsigned int sroce_wc_read_wc_flags(struct ibv_cq_ex *cqx)
{
	return sroce_wc_flags(cqx_cur(cqx)->wc_flags);
}

static uint32_t sroce_wc_read_slid(struct ibv_cq_ex *cqx)
{
	return cqx_cur(cqx)->slid;
}

static uint8_t sroce_wc_read_sl(struct ibv_cq_ex *cqx)
{
	return cqx_cur(cqx)->sl;
}

static uint8_t sroce_wc_read_dlid_path_bits(struct ibv_cq_ex *cqx)
{
	return cqx_cur(cqx)->dlid_path_bits;
}

/* Every reader of a field the ring carries, whatever wc_flags asked for. */
static void sroce_cq_ex_set_ops(struct ibv_cq_ex *cqx)
{
	cqx->start_poll = sroce_start_poll;
	cqx->next_poll = sroce_next_poll;
	cqx->end_poll = sroce_end_poll;
	cqx->read_opcode = sroce_wc_read_opcode;
	cqx->read_vendor_err = sroce_wc_read_vendor_err;
	cqx->read_byte_len = sroce_wc_read_byte_len;
	cqx->read_imm_data = sroce_wc_read_imm_data;
	cqx->read_qp_num = sroce_wc_read_qp_num;
	cqx->read_src_qp = sroce_wc_read_src_qp;
	cqx->read_wc_flags = sroce_wc_read_wc_flags;
	cqx->read_slid = sroce_wc_read_slid;
	cqx->read_sl = sroce_wc_read_sl;
	cqx->read_dlid_path_bits = sroce_wc_read_dlid_path_bits;
}

/*
 * ibv_create_cq_ex(): the kernel gets the same driver data as for
 * ibv_create_cq() (none in, struct sroce_create_cq_resp out).
 */
struct ibv_cq_ex *sroce_create_cq_ex(struct ibv_context *ctx,
				     struct ibv_cq_init_attr_ex *attr)
{
	struct usroce_create_cq_ex_resp resp = {};
	struct usroce_create_cq_ex cmd = {};
	struct sroce_cq *cq;
	int ret;

	if ((attr->wc_flags & ~(uint64_t)SROCE_CQ_EX_WC_FLAGS) ||
	    (attr->comp_mask & ~IBV_CQ_INIT_ATTR_MASK_FLAGS) ||
	    ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) && attr->flags)) {
		errno = EOPNOTSUPP;
		return NULL;
	}

	cq = sroce_cq_alloc();
	if (!cq)
		return NULL;
	ret = ibv_cmd_create_cq_ex(ctx, attr, &cq->vcq, &cmd.ibv_cmd,
				   sizeof(cmd), &resp.ibv_resp, sizeof(resp),
				   0);
	if (!ret)
		ret = sroce_cq_setup(cq, ctx, &resp.drv_payload);
	if (ret) {
		sroce_cq_free(cq);
		errno = ret;
		return NULL;
	}

	sroce_cq_ex_set_ops(&cq->vcq.cq_ex);
	return &cq->vcq.cq_ex;
}
