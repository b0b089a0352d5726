/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Memory regions (sroce_mr.c) and memory windows (sroce_mw.c).
 */
#ifndef SROCE_MR_H
#define SROCE_MR_H

/**
 * struct sroce_mr - a memory region: pinned user pages, or kernel memory.
 * @ibmr: the core's MR
 * @key: the key the data path accepts (lkey and rkey alike); a fast-reg
 *	MR's consumer changes @ibmr's keys before it posts the registration
 * @dma: a DMA MR: addresses are kernel virtual addresses (no pages)
 * @frmr: a fast-register MR: @pages and the range change with IB_WR_REG_MR
 * @valid: a fast-register MR is registered (not free or invalidated)
 * @users: a fast-register MR's accesses between sroce_mr_lookup() and
 *	sroce_mr_put(): invalidation waits for them (see sroce_mr.c)
 * @map: a fast-register MR's page addresses from map_mr_sg, for the next
 *	registration
 * @map_len: entries in @map
 * @max_pages: room in @map and @pages
 * @mw: this is the record of a memory window (see sroce_mw.c): @key is its
 *	rkey, @iova, @length and @access its binding, @valid whether bound
 * @mw_type: IB_MW_TYPE_1 or IB_MW_TYPE_2
 * @mw_qpn: type 2: the QP it was bound through, the only one it serves
 * @mw_qp_entry: type 2, bound: entry in that QP's &sroce_qp.mw_bound
 * @mw_mr: the region it is bound to
 * @mw_binds: windows bound to this region (deregistration is refused)
 * @dying: being deregistered or deallocated: no new binding (mw_lock)
 * @umem: the pinned user memory
 * @pages: the page behind each PAGE_SIZE step of the region
 * @npages: entries in @pages
 * @page_offset: offset of the region's first byte in @pages[0]
 * @iova: address the region is accessed by
 * @length: bytes in the region
 * @access: IB_ACCESS_* flags
 * @user: user space made it (it counts against the users' share)
 */
struct sroce_mr {
	struct ib_mr ibmr;
	u32 key;
	bool dma;
	bool frmr;
	bool valid;
	atomic_t users;
	u64 *map;
	u32 map_len;
	u32 max_pages;
	bool mw;
	u8 mw_type;
	u32 mw_qpn;
	struct list_head mw_qp_entry;
	struct sroce_mr *mw_mr;
	atomic_t mw_binds;
	bool dying;
	struct ib_umem *umem;
	struct page **pages;
	size_t npages;
	unsigned int page_offset;
	u64 iova;
	u64 length;
	int access;
	bool user;
};

/* A memory window: the core's object, and its record in the MR table. */
struct sroce_mw {
	struct ib_mw ibmw;
	struct sroce_mr *win;
};

static inline struct sroce_mr *to_smr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct sroce_mr, ibmr);
}

/* sroce_mr.c */
struct ib_mr *sroce_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				u64 iova, int access, struct ib_udata *udata);
int sroce_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata);
struct ib_mr *sroce_get_dma_mr(struct ib_pd *ibpd, int access);
struct ib_mr *sroce_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			     u32 max_num_sg);
int sroce_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		    unsigned int *sg_offset);
int sroce_mr_fast_reg(struct sroce_qp *qp, u32 mr_index, u32 key, int access);
int sroce_mr_invalidate(struct sroce_qp *qp, u32 key);
void sroce_mr_init_local_dma(struct sroce_dev *sdev);
int sroce_mr_insert(struct sroce_dev *sdev, struct sroce_mr *mr, bool user);
void sroce_mr_remove(struct sroce_dev *sdev, struct sroce_mr *mr);
struct sroce_mr *sroce_mr_lookup(struct sroce_qp *qp, u32 key, u64 va,
				 u64 len, int access);
void sroce_mr_put(struct sroce_mr *mr);
bool sroce_mr_check(struct sroce_qp *qp, u32 key, u64 va, u64 len, int access);
struct sroce_mr *sroce_mr_lookup_region(struct sroce_qp *qp, u32 key,
					int access);
void sroce_mr_copy_from(struct sroce_mr *mr, u64 va, void *dst, u32 len);
void sroce_mr_write(struct sroce_mr *mr, u64 va, const void *src, u32 len);
int sroce_mr_copy_to_skb(struct sroce_mr *mr, u64 va,
			 const struct sk_buff *skb, int off, u32 len);
u64 *sroce_mr_map_u64(struct sroce_mr *mr, u64 va);
int sroce_sgl_place(struct sroce_qp *qp, const struct sroce_sge *sge,
		    u32 nsge, u32 pos, const struct sk_buff *skb, int off,
		    u32 len);
int sroce_sgl_place_buf(struct sroce_qp *qp, const struct sroce_sge *sge,
			u32 nsge, u32 pos, const void *buf, u32 len);
int sroce_sgl_gather(struct sroce_qp *qp, const struct sroce_sge *sge,
		     u32 nsge, u32 *sge_idx, u32 *sge_off, void *dst, u32 len);
int sroce_mr_attach(struct sroce_mr *mr, u64 va, u32 len, struct sk_buff *skb);
int sroce_sgl_attach(struct sroce_qp *qp, const struct sroce_sge *sge,
		     u32 nsge, u32 *sge_idx, u32 *sge_off, struct sk_buff *skb,
		     u32 len);

/* sroce_mw.c */
int sroce_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata);
int sroce_dealloc_mw(struct ib_mw *ibmw);
int sroce_mw_bind(struct sroce_qp *qp, const struct sroce_send_wqe *w);
void sroce_mw_unbind_qp(struct sroce_qp *qp);
int sroce_mw_invalidate(struct sroce_qp *qp, struct sroce_mr *win);
struct sroce_mr *sroce_mw_resolve(struct sroce_mr *win, struct sroce_qp *qp,
				  u64 va, u64 end, int access);
bool sroce_mr_unbindable(struct sroce_dev *sdev, struct sroce_mr *mr);

#endif /* SROCE_MR_H */
