// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Memory regions over user memory. Registration pins the pages through
 * ib_umem (which charges them to RLIMIT_MEMLOCK) and keeps one page
 * pointer per page, so the data path can find the page behind any byte of
 * the region in O(1) without walking scatterlists.
 *
 * Keys: the low byte is a generation that changes with every registration,
 * the upper 24 bits index the device's MR table (never 0, so no key equals
 * the reserved local DMA lkey 0). Slots are handed out cyclically, so a
 * key kept after deregistration matches a later region only after the
 * whole table and the generation byte have both wrapped.
 */
#include <linux/overflow.h>
#include <linux/scatterlist.h>
#include <rdma/ib_umem.h>

#include "sroce.h"

/* Access flags sroce implements for memory regions. */
#define SROCE_MR_ACCESS_SUPPORTED					\
	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |		\
	 IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC |		\
	 IB_ACCESS_RELAXED_ORDERING)

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
	u32 idx;
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

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
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

	err = xa_alloc_cyclic(&sdev->mr_xa, &idx, mr,
			      XA_LIMIT(1, SROCE_MAX_MR), &sdev->mr_next,
			      GFP_KERNEL);
	if (err < 0) {
		err = err == -EBUSY ? -ENOMEM : err;
		goto err_release;
	}
	mr->ibmr.lkey = idx << 8 | (atomic_inc_return(&sdev->mr_gen) & 0xff);
	mr->ibmr.rkey = mr->ibmr.lkey;
	return &mr->ibmr;

err_release:
	kvfree(mr->pages);
	ib_umem_release(mr->umem);
err_free:
	kfree(mr);
	return ERR_PTR(err);
}

int sroce_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibmr->device);
	struct sroce_mr *mr = to_smr(ibmr);

	xa_erase(&sdev->mr_xa, ibmr->lkey >> 8);
	kvfree(mr->pages);
	ib_umem_release(mr->umem);
	kfree(mr);
	return 0;
}
