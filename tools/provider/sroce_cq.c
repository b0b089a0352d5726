// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce provider: completion queues. The kernel writes completions into a
 * ring mapped from the context's command fd; polling reads them with no
 * system call. Ordering: the kernel publishes prod with a release store
 * after writing the entry, we read it with an acquire load, and we hand
 * entries back by publishing cons with a release store.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sroce.h"

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

struct ibv_cq *sroce_create_cq(struct ibv_context *ctx, int cqe,
			       struct ibv_comp_channel *channel,
			       int comp_vector)
{
	struct usroce_create_cq_resp resp = {};
	struct usroce_create_cq cmd = {};
	struct sroce_cq *cq;
	int ret;

	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return NULL;
	pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);
	ret = ibv_cmd_create_cq(ctx, cqe, channel, comp_vector, &cq->vcq.cq,
				&cmd.ibv_cmd, sizeof(cmd), &resp.ibv_resp,
				sizeof(resp));
	if (ret)
		goto err_free;
	ret = sroce_cq_map(cq, ctx->cmd_fd, resp.drv_payload.mmap_offset,
			   resp.drv_payload.mmap_length,
			   resp.drv_payload.num_entries);
	if (ret) {
		ibv_cmd_destroy_cq(&cq->vcq.cq);
		goto err_free;
	}
	return &cq->vcq.cq;

err_free:
	pthread_spin_destroy(&cq->lock);
	free(cq);
	errno = ret;
	return NULL;
}

int sroce_destroy_cq(struct ibv_cq *ibcq)
{
	struct sroce_cq *cq = to_scq(ibcq);
	int ret;

	ret = ibv_cmd_destroy_cq(ibcq);
	if (ret)
		return ret;
	sroce_uring_unmap(&cq->ring);
	pthread_spin_destroy(&cq->lock);
	free(cq);
	return 0;
}

static void sroce_cqe_to_wc(const struct sroce_cqe *cqe, struct ibv_wc *wc)
{
	wc->wr_id = cqe->wr_id;
	wc->status = cqe->status;
	wc->opcode = cqe->opcode;
	wc->vendor_err = cqe->vendor_err;
	wc->byte_len = cqe->byte_len;
	wc->imm_data = cqe->ex;
	wc->qp_num = cqe->qp_num;
	wc->src_qp = cqe->src_qp;
	wc->wc_flags = cqe->wc_flags;
	wc->pkey_index = cqe->pkey_index;
	wc->slid = cqe->slid;
	wc->sl = cqe->sl;
	wc->dlid_path_bits = cqe->dlid_path_bits;
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
