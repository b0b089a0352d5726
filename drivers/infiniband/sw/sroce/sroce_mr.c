// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Memory regions over user memory. Registration pins the pages through
 * ib_umem (which charges them to RLIMIT_MEMLOCK) and keeps one page
 * pointer per page, so the data path can find the page behind any byte of
 * the region in O(1) without walking scatterlists.
 *
 * Kernel consumers address memory by kernel virtual address: sroce has
 * no DMA device, so ib_dma_map_*() hands out those (ib_uses_virt_dma()).
 * They reach it through the local DMA lkey 0, valid only in kernel PDs and
 * only for local access, or through a DMA MR (get_dma_mr), whose rkey
 * reaches all of memory when the consumer asked for that with
 * IB_PD_UNSAFE_GLOBAL_RKEY. Either way only addresses in the kernel's
 * direct map are accepted: what a DMA device could reach, no more.
 *
 * Keys: the upper 24 bits index the device's MR table (never 0, so no key
 * equals the reserved local DMA lkey 0), the low byte is random. Indices
 * are handed out cyclically over the whole 24-bit space, not only over
 * max_mr, so a key kept after deregistration can name a later region only
 * after 2^24 - 1 more registrations, and then by a 1 in 256 chance; and a
 * peer cannot guess a key from one it saw.
 *
 * A fast-register MR changes its pages and range with each registration,
 * and its consumer may re-register it the moment an invalidation
 * completes. An access admitted under one registration must end in that
 * registration's pages, so every access counts itself in @users from
 * sroce_mr_lookup() to sroce_mr_put() (one packet's copy, never a sleep),
 * and invalidation, having cleared @valid, waits for the count to drain:
 *
 *   access:      users++; smp_mb(); valid and key still ours?
 *   invalidate:  valid = false; smp_mb(); wait until users == 0
 *
 * Either the access sees the registration ended and backs off, or the
 * invalidation sees it counted and waits. Regions of user memory and DMA
 * MRs never change in place (deregistration waits for RCU), so only
 * fast-register MRs are counted.
 */
#include <linux/highmem.h>
#include <linux/overflow.h>
#include <linux/random.h>
#include <linux/scatterlist.h>
#include <rdma/ib_umem.h>

#include "sroce.h"

/* Access flags sroce implements for memory regions. */
#define SROCE_MR_ACCESS_SUPPORTED					\
	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |		\
	 IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC |		\
	 IB_ACCESS_MW_BIND | IB_ACCESS_RELAXED_ORDERING |		\
	 SROCE_ACCESS_FLUSH_GLOBAL)

static int sroce_mr_check_access(int access)
{
	/* Optional flags are hints a device may ignore (ib_verbs.h). */
	access &= ~IB_ACCESS_OPTIONAL;
	if (access & ~SROCE_MR_ACCESS_SUPPORTED)
		return -EOPNOTSUPP;
	/* IBA 10.6.3.1: remote writers need local write permission. */
	if ((access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IB_ACCESS_LOCAL_WRITE))
		return -EINVAL;
	return 0;
}

#define SROCE_MR_INDEX_MAX	(BIT(24) - 1)

/**
 * sroce_mr_insert() - give a region or a memory window its slot in the MR
 *	table and the key that names it (see the file comment).
 * @sdev: the device
 * @mr: the region or window record
 * @user: user space asks (see sroce_budget_take())
 *
 * Sets @mr->key and, for a region, the ib_mr's lkey and rkey alike.
 * Return: 0, -ENOMEM when the device has max_mr entries, or another
 * negative errno.
 */
int sroce_mr_insert(struct sroce_dev *sdev, struct sroce_mr *mr, bool user)
{
	u32 idx;
	int err;

	mr->user = user;
	if (!sroce_budget_take(&sdev->num_mr, sdev->max_mr, user))
		return -ENOMEM;
	err = xa_alloc_cyclic(&sdev->mr_xa, &idx, mr,
			      XA_LIMIT(1, SROCE_MR_INDEX_MAX), &sdev->mr_next,
			      GFP_KERNEL);
	if (err < 0)
		goto err_count;
	mr->key = idx << 8 | get_random_u8();
	mr->ibmr.lkey = mr->key;
	mr->ibmr.rkey = mr->key;
	return 0;

err_count:
	sroce_budget_put(&sdev->num_mr, user);
	return err == -EBUSY ? -ENOMEM : err;
}

/* Take a region or window out of the MR table: its key names nothing. */
void sroce_mr_remove(struct sroce_dev *sdev, struct sroce_mr *mr)
{
	xa_erase(&sdev->mr_xa, mr->key >> 8);
	sroce_budget_put(&sdev->num_mr, mr->user);
}

/* Fill the page array from the pinned scatterlist, first page first. */
static int sroce_mr_collect_pages(struct sroce_mr *mr, size_t npages)
{
	struct sg_page_iter iter;
	size_t i = 0;

	mr->pages = kvmalloc_array(npages, sizeof(*mr->pages),
				   GFP_KERNEL_ACCOUNT);
	if (!mr->pages)
		return -ENOMEM;
	for_each_sgtable_page(&mr->umem->sgt_append.sgt, &iter, 0) {
		if (i == npages)
			break;
		mr->pages[i++] = sg_page_iter_page(&iter);
	}
	mr->npages = i;
	return i == npages ? 0 : -EFAULT;
}

struct ib_mr *sroce_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				u64 iova, int access, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibpd->device);
	struct sroce_mr *mr;
	u64 end;
	int err;

	err = sroce_mr_check_access(access);
	if (err)
		return ERR_PTR(err);
	/* The page array maps iova through start: same offset in a page. */
	if (!length || length > SROCE_MAX_MR_SIZE ||
	    check_add_overflow(iova, length, &end) ||
	    check_add_overflow(start, length, &end) ||
	    ((start ^ iova) & ~PAGE_MASK))
		return ERR_PTR(-EINVAL);
	if (!sroce_udata_input_ok(udata))
		return ERR_PTR(-EINVAL);

	mr = kzalloc(sizeof(*mr), GFP_KERNEL_ACCOUNT);
	if (!mr)
		return ERR_PTR(-ENOMEM);

	mr->umem = ib_umem_get(ibpd->device, start, length, access);
	if (IS_ERR(mr->umem)) {
		err = PTR_ERR(mr->umem);
		mr->umem = NULL;
		goto err_free;
	}
	err = sroce_mr_collect_pages(mr, ib_umem_num_pages(mr->umem));
	if (err)
		goto err_release;
	mr->page_offset = start & ~PAGE_MASK;
	mr->iova = iova;
	mr->length = length;
	mr->access = access;

	err = sroce_mr_insert(sdev, mr, udata);
	if (err)
		goto err_release;
	return &mr->ibmr;

err_release:
	kvfree(mr->pages);
	ib_umem_release(mr->umem);
err_free:
	kfree(mr);
	return ERR_PTR(err);
}

/*
 * The data path looks regions up under RCU and uses them without a
 * reference: wait for those users, then unpin, so that the pages are
 * unpinned (and uncharged) when deregistration returns.
 */
int sroce_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibmr->device);
	struct sroce_mr *mr = to_smr(ibmr);

	/* IBA 10.6.7.2.1: not while memory windows are bound to it. */
	if (!sroce_mr_unbindable(sdev, mr))
		return -EBUSY;
	sroce_mr_remove(sdev, mr);
	synchronize_rcu_expedited();
	kvfree(mr->map);
	kvfree(mr->pages);
	ib_umem_release(mr->umem);
	kfree(mr);
	return 0;
}

/* Page by page: a direct-map range can span a hole in physical memory. */
static bool sroce_mr_dma_range_ok(u64 va, u64 end)
{
	u64 p;

	for (p = va & PAGE_MASK; p < end; p += PAGE_SIZE)
		if (!virt_addr_valid((void *)(uintptr_t)p))
			return false;
	return true;
}

struct ib_mr *sroce_get_dma_mr(struct ib_pd *ibpd, int access)
{
	struct sroce_dev *sdev = to_sdev(ibpd->device);
	struct sroce_mr *mr;
	int err;

	/*
	 * The core asks for remote rights alone when the device has a local
	 * DMA lkey (IB_PD_UNSAFE_GLOBAL_RKEY): local write goes with them.
	 */
	if (access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC))
		access |= IB_ACCESS_LOCAL_WRITE;
	err = sroce_mr_check_access(access);
	if (err)
		return ERR_PTR(err);
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->dma = true;
	mr->length = U64_MAX;
	mr->access = access;
	err = sroce_mr_insert(sdev, mr, false);
	if (err) {
		kfree(mr);
		return ERR_PTR(err);
	}
	return &mr->ibmr;
}

/**
 * sroce_alloc_mr() - a fast-register MR, free until IB_WR_REG_MR.
 * @ibpd: its protection domain
 * @type: only IB_MR_TYPE_MEM_REG
 * @max_num_sg: pages it may map at most
 *
 * Return: the MR or an ERR_PTR.
 */
struct ib_mr *sroce_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			     u32 max_num_sg)
{
	struct sroce_dev *sdev = to_sdev(ibpd->device);
	struct sroce_mr *mr;
	int err;

	if (type != IB_MR_TYPE_MEM_REG)
		return ERR_PTR(-EOPNOTSUPP);
	if (!max_num_sg || max_num_sg > SROCE_MAX_FRMR_PAGES)
		return ERR_PTR(-EINVAL);
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->frmr = true;
	mr->max_pages = max_num_sg;
	mr->map = kvcalloc(max_num_sg, sizeof(*mr->map), GFP_KERNEL);
	mr->pages = kvcalloc(max_num_sg, sizeof(*mr->pages), GFP_KERNEL);
	err = -ENOMEM;
	if (!mr->map || !mr->pages)
		goto err_free;
	err = sroce_mr_insert(sdev, mr, false);
	if (err)
		goto err_free;
	return &mr->ibmr;

err_free:
	kvfree(mr->pages);
	kvfree(mr->map);
	kfree(mr);
	return ERR_PTR(err);
}

static int sroce_mr_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct sroce_mr *mr = to_smr(ibmr);

	if (mr->map_len == mr->max_pages)
		return -ENOMEM;
	/* What ib_dma_map_*() gave out: direct-map addresses only. */
	if (!virt_addr_valid((void *)(uintptr_t)addr))
		return -EINVAL;
	mr->map[mr->map_len++] = addr;
	return 0;
}

int sroce_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		    unsigned int *sg_offset)
{
	struct sroce_mr *mr = to_smr(ibmr);

	/* The data path steps through a region one kernel page at a time. */
	if (ibmr->page_size != PAGE_SIZE)
		return -EINVAL;
	mr->map_len = 0;
	return ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset,
			      sroce_mr_set_page);
}

/**
 * sroce_mr_fast_reg() - execute an IB_WR_REG_MR.
 * @qp: the kernel QP it was posted to
 * @mr_index: the MR's table index
 * @key: the key to register it under; its upper 24 bits are the index
 * @access: IB_ACCESS_* rights
 *
 * The MR must be free (IBA 10.7.2.2): the range and pages of a valid one
 * never change under the data path.
 * Context: req_lock held, BH disabled.
 * Return: a completion status.
 */
int sroce_mr_fast_reg(struct sroce_qp *qp, u32 mr_index, u32 key, int access)
{
	struct sroce_mr *mr = xa_load(&to_sdev(qp->ibqp.device)->mr_xa,
				      mr_index);
	u64 span, end;
	u32 i;

	lockdep_assert_held(&qp->req_lock);
	if (!mr || !mr->frmr || mr->ibmr.pd != qp->ibqp.pd ||
	    key >> 8 != mr_index || mr->valid ||
	    sroce_mr_check_access(access))
		return IB_WC_LOC_PROT_ERR;
	/*
	 * The range must lie within the mapped pages, or pages[] overflows.
	 * Only the iova's offset in its page ties it to the pages: a consumer
	 * may set the rest as it likes after ib_map_mr_sg() (xprtrdma puts
	 * the RPC's XID in the upper 32 bits).
	 */
	span = (u64)mr->map_len << PAGE_SHIFT;
	if (!mr->map_len ||
	    check_add_overflow(mr->ibmr.iova & ~PAGE_MASK, mr->ibmr.length,
			       &end) || end > span)
		return IB_WC_LOC_PROT_ERR;
	for (i = 0; i < mr->map_len; i++)
		mr->pages[i] = virt_to_page((void *)(uintptr_t)mr->map[i]);
	mr->npages = mr->map_len;
	mr->iova = mr->ibmr.iova;
	mr->length = mr->ibmr.length;
	mr->page_offset = mr->ibmr.iova & ~PAGE_MASK;
	mr->access = access;
	WRITE_ONCE(mr->key, key);
	/* Release: the range and pages are set before the MR is valid. */
	smp_store_release(&mr->valid, true);
	return IB_WC_SUCCESS;
}

/**
 * sroce_mr_invalidate() - invalidate a fast-register MR or a type 2 memory
 *	window by its key.
 * @qp: the QP asking (LOCAL_INV, or the receiver of SEND_WITH_INV)
 * @key: the current key
 *
 * Context: RCU read side.
 * Return: 0, or -EINVAL when the key names nothing @qp may invalidate.
 */
int sroce_mr_invalidate(struct sroce_qp *qp, u32 key)
{
	struct sroce_mr *mr = xa_load(&to_sdev(qp->ibqp.device)->mr_xa,
				      key >> 8);

	if (!mr || mr->ibmr.pd != qp->ibqp.pd || READ_ONCE(mr->key) != key)
		return -EINVAL;
	if (mr->mw)
		return sroce_mw_invalidate(qp, mr);
	if (!mr->frmr)
		return -EINVAL;
	WRITE_ONCE(mr->valid, false);
	/*
	 * Pairs with sroce_mr_frmr_get(). Accesses admitted before end
	 * within a packet's copy, on other CPUs (this one has BH disabled):
	 * wait, so that a re-registration never moves pages under them.
	 */
	smp_mb();
	while (atomic_read_acquire(&mr->users))
		cpu_relax();
	return 0;
}

/**
 * sroce_mr_init_local_dma() - the region behind the local DMA lkey 0.
 * @sdev: the device it belongs to
 */
void sroce_mr_init_local_dma(struct sroce_dev *sdev)
{
	struct sroce_mr *mr = &sdev->local_dma_mr;

	mr->dma = true;
	mr->length = U64_MAX;
	mr->access = IB_ACCESS_LOCAL_WRITE;
}

/*
 * Admit an access to a fast-register MR under @key (see the file comment);
 * true when it is registered under that key, and then counted.
 */
static bool sroce_mr_frmr_get(struct sroce_mr *mr, u32 key)
{
	atomic_inc(&mr->users);
	/* Pairs with the barrier in sroce_mr_invalidate(). */
	smp_mb__after_atomic();
	/* Acquire: the range and pages are those sroce_mr_fast_reg() set. */
	if (smp_load_acquire(&mr->valid) && READ_ONCE(mr->key) == key)
		return true;
	atomic_dec(&mr->users);
	return false;
}

/**
 * sroce_mr_lookup() - find the region a key names and check an access.
 * @qp: the queue pair the access comes through (its PD, its number)
 * @key: lkey, or rkey (of a region or of a memory window)
 * @va: first byte accessed
 * @len: bytes accessed; zero checks the key alone
 * @access: IB_ACCESS_* rights the access needs (0 for a local read)
 *
 * An rkey of a memory window is checked against the window (its range,
 * rights, PD and, for type 2, the QP it was bound through) and resolves
 * to the region the window is bound to, which then needs no remote rights
 * of its own.
 * Context: RCU read side (softirq or BH disabled); the region stays valid
 * until the caller leaves it. The caller ends the access with
 * sroce_mr_put(), before it sleeps, takes a lock or sends a packet.
 * Return: the region, or NULL when the key is unknown or stale, the PD
 * differs, a right is missing or the range leaves the region.
 */
struct sroce_mr *sroce_mr_lookup(struct sroce_qp *qp, u32 key, u64 va,
				 u64 len, int access)
{
	struct sroce_dev *sdev = to_sdev(qp->ibqp.device);
	struct ib_pd *pd = qp->ibqp.pd;
	struct sroce_mr *mr;
	u64 end;

	if (check_add_overflow(va, len, &end))
		return NULL;
	if (key) {
		mr = xa_load(&sdev->mr_xa, key >> 8);
		if (!mr || READ_ONCE(mr->key) != key || mr->ibmr.pd != pd)
			return NULL;
		if (mr->mw) {
			mr = sroce_mw_resolve(mr, qp, va, end, access);
			if (!mr || mr->ibmr.pd != pd)
				return NULL;
			access = 0;
		}
		if (mr->frmr && !sroce_mr_frmr_get(mr, key))
			return NULL;
	} else {
		/* The local DMA lkey: kernel PDs only. */
		if (pd->uobject)
			return NULL;
		mr = &sdev->local_dma_mr;
	}
	if ((mr->access & access) != access ||
	    /* Both ends inside [iova, iova + length), without wrapping. */
	    va < mr->iova || end - mr->iova > mr->length ||
	    (mr->dma && !sroce_mr_dma_range_ok(va, end))) {
		sroce_mr_put(mr);
		return NULL;
	}
	return mr;
}

/**
 * sroce_mr_put() - end an access that sroce_mr_lookup() admitted.
 * @mr: the region it returned
 *
 * Every use of the region's pages must come before: a fast-register MR
 * may be re-registered right after.
 */
void sroce_mr_put(struct sroce_mr *mr)
{
	if (mr->frmr)
		atomic_dec_return_release(&mr->users);
}

/* Whether @key grants an access, checked without using the region. */
bool sroce_mr_check(struct sroce_qp *qp, u32 key, u64 va, u64 len,
		    int access)
{
	struct sroce_mr *mr = sroce_mr_lookup(qp, key, va, len, access);

	if (mr)
		sroce_mr_put(mr);
	return mr;
}

/**
 * sroce_mr_lookup_region() - find a region by key alone, for an operation
 *	on all of it (a FLUSH of the whole region).
 * @qp: the queue pair the access comes through
 * @key: rkey of a region; a window's rkey names no whole region
 * @access: IB_ACCESS_* rights needed
 *
 * Context: RCU read side.
 * Return: the region, or NULL as for sroce_mr_lookup().
 */
struct sroce_mr *sroce_mr_lookup_region(struct sroce_qp *qp, u32 key,
					int access)
{
	struct sroce_mr *mr;

	mr = key ? xa_load(&to_sdev(qp->ibqp.device)->mr_xa, key >> 8) : NULL;
	if (!mr || mr->mw)
		return NULL;
	return sroce_mr_lookup(qp, key, READ_ONCE(mr->iova), 0, access);
}

/* The page holding a byte of the region (range-checked), and its offset. */
static struct page *sroce_mr_page(struct sroce_mr *mr, u64 va,
				  unsigned int *off)
{
	u64 pos;

	if (mr->dma) {
		*off = va & ~PAGE_MASK;
		return virt_to_page((void *)(uintptr_t)va);
	}
	pos = va - mr->iova + mr->page_offset;
	*off = pos & ~PAGE_MASK;
	return mr->pages[pos >> PAGE_SHIFT];
}

/* Copy bytes out of a region whose range the caller checked. */
void sroce_mr_copy_from(struct sroce_mr *mr, u64 va, void *dst, u32 len)
{
	struct page *page;
	unsigned int off, n;
	void *src;

	while (len) {
		page = sroce_mr_page(mr, va, &off);
		n = min_t(u32, len, PAGE_SIZE - off);
		src = kmap_local_page(page);
		memcpy(dst, src + off, n);
		kunmap_local(src);
		dst += n;
		va += n;
		len -= n;
	}
}

/* Copy bytes into a region whose range the caller checked. */
void sroce_mr_write(struct sroce_mr *mr, u64 va, const void *src, u32 len)
{
	struct page *page;
	unsigned int off, n;
	void *dst;

	while (len) {
		page = sroce_mr_page(mr, va, &off);
		n = min_t(u32, len, PAGE_SIZE - off);
		dst = kmap_local_page(page);
		memcpy(dst + off, src, n);
		kunmap_local(dst);
		flush_dcache_page(page);
		src += n;
		va += n;
		len -= n;
	}
}

/**
 * sroce_mr_copy_to_skb() - place packet payload into a region.
 * @mr: region whose range the caller checked
 * @va: where the bytes go
 * @skb: the packet
 * @off: offset of the bytes in @skb (from skb->data)
 * @len: bytes to copy
 *
 * Return: 0, or -EFAULT when the packet is shorter than claimed.
 */
int sroce_mr_copy_to_skb(struct sroce_mr *mr, u64 va,
			 const struct sk_buff *skb, int off, u32 len)
{
	struct page *page;
	unsigned int poff, n;
	void *dst;
	int err = 0;

	while (len && !err) {
		page = sroce_mr_page(mr, va, &poff);
		n = min_t(u32, len, PAGE_SIZE - poff);
		dst = kmap_local_page(page);
		err = skb_copy_bits(skb, off, dst + poff, n);
		kunmap_local(dst);
		flush_dcache_page(page);
		off += n;
		va += n;
		len -= n;
	}
	return err ? -EFAULT : 0;
}

/*
 * The 8 bytes an atomic targets; @va is 8-byte aligned, so they sit in one
 * page. Unmap with kunmap_local().
 */
u64 *sroce_mr_map_u64(struct sroce_mr *mr, u64 va)
{
	unsigned int off;
	struct page *page = sroce_mr_page(mr, va, &off);

	return kmap_local_page(page) + off;
}

/*
 * Place @len message bytes, from @buf if set or else from @skb at @off,
 * at message offset @pos of a scatter/gather list.
 */
static int sroce_sgl_place_from(struct sroce_qp *qp,
				const struct sroce_sge *sge, u32 nsge, u32 pos,
				const void *buf, const struct sk_buff *skb,
				int off, u32 len)
{
	struct sroce_mr *mr;
	int err = 0;
	u32 i, n;

	for (i = 0; i < nsge && len; i++) {
		if (pos >= sge[i].length) {
			pos -= sge[i].length;
			continue;
		}
		n = min(len, sge[i].length - pos);
		mr = sroce_mr_lookup(qp, sge[i].lkey,
				     sge[i].addr + pos, n,
				     IB_ACCESS_LOCAL_WRITE);
		if (!mr)
			return -EACCES;
		if (buf) {
			sroce_mr_write(mr, sge[i].addr + pos, buf, n);
			buf += n;
		} else {
			err = sroce_mr_copy_to_skb(mr, sge[i].addr + pos, skb,
						   off, n);
			off += n;
		}
		sroce_mr_put(mr);
		if (err)
			return err;
		len -= n;
		pos = 0;
	}
	return len ? -EMSGSIZE : 0;
}

/**
 * sroce_sgl_place() - place packet payload into a scatter/gather list.
 * @qp: queue pair whose PD the local keys must belong to
 * @sge: the list (a kernel copy)
 * @nsge: entries in @sge
 * @pos: message offset of the first byte
 * @skb: the packet
 * @off: offset of the bytes in @skb
 * @len: bytes to place
 *
 * Context: RCU read side.
 * Return: 0; -EMSGSIZE when the list is too short for the message;
 * -EACCES when an lkey is bad, lacks local write access or its range does
 * not cover the SGE; -EFAULT when the packet is short.
 */
int sroce_sgl_place(struct sroce_qp *qp, const struct sroce_sge *sge,
		    u32 nsge, u32 pos, const struct sk_buff *skb, int off,
		    u32 len)
{
	return sroce_sgl_place_from(qp, sge, nsge, pos, NULL, skb, off, len);
}

/* The same as sroce_sgl_place(), with the bytes taken from @buf. */
int sroce_sgl_place_buf(struct sroce_qp *qp, const struct sroce_sge *sge,
			u32 nsge, u32 pos, const void *buf, u32 len)
{
	return sroce_sgl_place_from(qp, sge, nsge, pos, buf, NULL, 0, len);
}

/**
 * sroce_sgl_gather() - copy message bytes out of a scatter/gather list.
 * @qp: queue pair whose PD the local keys must belong to
 * @sge: the list (a kernel copy)
 * @nsge: entries in @sge
 * @sge_idx: cursor: the SGE to start in; advanced
 * @sge_off: cursor: offset within that SGE; advanced
 * @dst: where the bytes go
 * @len: bytes to copy; the list holds at least that many from the cursor
 *
 * Context: RCU read side.
 * Return: 0, or -EACCES when an lkey does not cover its SGE.
 */
int sroce_sgl_gather(struct sroce_qp *qp, const struct sroce_sge *sge,
		     u32 nsge, u32 *sge_idx, u32 *sge_off, void *dst, u32 len)
{
	u32 i = *sge_idx, pos = *sge_off, n;
	struct sroce_mr *mr;

	while (len && i < nsge) {
		n = min(len, sge[i].length - pos);
		if (n) {
			mr = sroce_mr_lookup(qp, sge[i].lkey,
					     sge[i].addr + pos, n, 0);
			if (!mr)
				return -EACCES;
			sroce_mr_copy_from(mr, sge[i].addr + pos, dst, n);
			sroce_mr_put(mr);
			dst += n;
			len -= n;
			pos += n;
		}
		if (pos == sge[i].length) {
			i++;
			pos = 0;
		}
	}
	*sge_idx = i;
	*sge_off = pos;
	return len ? -EACCES : 0;
}

/**
 * sroce_mr_attach() - attach bytes of a region to a packet as page
 *	fragments, without copying them.
 * @mr: region whose range the caller checked
 * @va: the first byte
 * @len: bytes to attach
 * @skb: the packet, from sroce_tx_alloc_to() without a payload buffer
 *
 * Only regions of pinned user pages qualify: the packet takes a reference
 * on each page, so the bytes stay valid memory however long it lives,
 * across deregistration too.
 * Return: 0; -EOPNOTSUPP for a region without user pages; -E2BIG when the
 * packet runs out of fragments (the caller drops it with what it holds).
 */
int sroce_mr_attach(struct sroce_mr *mr, u64 va, u32 len, struct sk_buff *skb)
{
	unsigned int poff, step;
	struct page *page;
	int err = 0;
	u32 done;

	if (!mr->umem)
		return -EOPNOTSUPP;
	for (done = 0; done < len && !err; done += step) {
		page = sroce_mr_page(mr, va + done, &poff);
		step = min_t(u32, len - done, PAGE_SIZE - poff);
		err = sroce_tx_add_page(skb, page, poff, step);
	}
	return err;
}

/**
 * sroce_sgl_attach() - attach message bytes of a scatter/gather list to a
 *	packet as page fragments, without copying them.
 * @qp: queue pair whose PD the local keys must belong to
 * @sge: the list (a kernel copy)
 * @nsge: entries in @sge
 * @sge_idx: cursor: the SGE to start in; advanced on success only
 * @sge_off: cursor: offset within that SGE; advanced on success only
 * @skb: the packet, from sroce_tx_alloc_to() without a payload buffer
 * @len: bytes to attach; the list holds at least that many from the cursor
 *
 * Through sroce_mr_attach(). The caller sends only what completes after
 * the peer has the bytes (RC), so the user cannot change them before.
 * Context: RCU read side.
 * Return: 0; -EACCES when an lkey does not cover its SGE; -EOPNOTSUPP for
 * a region without user pages; -E2BIG when the packet runs out of
 * fragments. On error the caller drops the packet, and with it whatever
 * was attached.
 */
int sroce_sgl_attach(struct sroce_qp *qp, const struct sroce_sge *sge,
		     u32 nsge, u32 *sge_idx, u32 *sge_off, struct sk_buff *skb,
		     u32 len)
{
	u32 i = *sge_idx, pos = *sge_off, n;
	struct sroce_mr *mr;
	int err = 0;
	u64 va;

	while (len && i < nsge && !err) {
		n = min(len, sge[i].length - pos);
		if (n) {
			va = sge[i].addr + pos;
			mr = sroce_mr_lookup(qp, sge[i].lkey, va, n, 0);
			if (!mr)
				return -EACCES;
			err = sroce_mr_attach(mr, va, n, skb);
			sroce_mr_put(mr);
			len -= n;
			pos += n;
		}
		if (pos == sge[i].length) {
			i++;
			pos = 0;
		}
	}
	if (err)
		return err;
	if (len)
		return -EACCES;
	*sge_idx = i;
	*sge_off = pos;
	return 0;
}
