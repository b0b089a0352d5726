// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Rings shared with user space (layout in the uapi header): allocation in
 * vmalloc memory and mapping through the rdma core's mmap entries. How
 * each side reads and writes a ring: sroce_ring.h.
 *
 * The ring memory belongs to its mmap entry. Destroying the object marks
 * the ring dead and removes the entry; the core frees it (sroce_mmap_free)
 * once no mmap() call is using it, and pages a process still has mapped
 * stay alive through their page references until munmap.
 *
 * A user ring is memory a user makes the kernel keep, like the queues a
 * hardware RNIC's provider pins: it is charged to the caller's memory
 * cgroup, and to its RLIMIT_MEMLOCK (mm->pinned_vm, as ib_umem charges
 * pinned regions) until the memory is freed.
 */
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/vmalloc.h>

#include "sroce.h"

/**
 * struct sroce_mmap_entry - a user ring's memory and what it is charged to.
 * @rdma_entry: the core's mmap entry
 * @buf: the ring memory
 * @size: its bytes, whole pages
 * @owning_mm: the mm whose pinned_vm holds @size, referenced
 */
struct sroce_mmap_entry {
	struct rdma_user_mmap_entry rdma_entry;
	void *buf;
	size_t size;
	struct mm_struct *owning_mm;
};

static struct sroce_mmap_entry *to_smmap(struct rdma_user_mmap_entry *e)
{
	return container_of(e, struct sroce_mmap_entry, rdma_entry);
}

/* Count @size bytes against current's RLIMIT_MEMLOCK; see the file top. */
static int sroce_ring_charge(struct sroce_mmap_entry *me)
{
	unsigned long npages = me->size >> PAGE_SHIFT;
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;

	if (atomic64_add_return(npages, &current->mm->pinned_vm) > limit &&
	    !capable(CAP_IPC_LOCK)) {
		atomic64_sub(npages, &current->mm->pinned_vm);
		return -ENOMEM;
	}
	me->owning_mm = current->mm;
	mmgrab(me->owning_mm);
	return 0;
}

static void sroce_ring_uncharge(struct sroce_mmap_entry *me)
{
	atomic64_sub(me->size >> PAGE_SHIFT, &me->owning_mm->pinned_vm);
	mmdrop(me->owning_mm);
}

/**
 * sroce_ring_alloc() - allocate a ring and, for user objects, its mapping.
 * @ring: ring to fill in
 * @num_entries: entries wanted; rounded up to a power of two
 * @entry_size: bytes per entry
 * @uctx: user context to map it into, or NULL for a kernel object
 *
 * Return: 0 or a negative errno (-ENOMEM also when the memory cgroup or
 * RLIMIT_MEMLOCK has no room). On success a user ring's mapping is
 * described by @ring->mmap_offset and @ring->mmap_length.
 */
int sroce_ring_alloc(struct sroce_ring *ring, u32 num_entries,
		     u32 entry_size, struct ib_ucontext *uctx)
{
	/* A user over its memory cgroup's limit gets ENOMEM, not the OOM killer. */
	gfp_t gfp = uctx ? GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL | __GFP_NOWARN :
		    GFP_KERNEL;
	struct sroce_mmap_entry *me;
	size_t size;
	void *buf;
	int err;

	if (!num_entries || num_entries > SROCE_RING_MAX_ENTRIES ||
	    !entry_size)
		return -EINVAL;
	num_entries = roundup_pow_of_two(num_entries);
	if (check_mul_overflow((size_t)num_entries, (size_t)entry_size, &size) ||
	    check_add_overflow(size, (size_t)SROCE_RING_HDR_SIZE, &size))
		return -EINVAL;
	size = PAGE_ALIGN(size);
	/* Zeroed, so a mapping shows nothing of the kernel's. */
	buf = __vmalloc(size, gfp | __GFP_ZERO);
	if (!buf)
		return -ENOMEM;

	ring->hdr = buf;
	ring->entries = buf + SROCE_RING_HDR_SIZE;
	ring->num_entries = num_entries;
	ring->mask = num_entries - 1;
	ring->entry_size = entry_size;
	ring->mmap = NULL;
	if (!uctx)
		return 0;

	me = kzalloc(sizeof(*me), GFP_KERNEL_ACCOUNT);
	if (!me) {
		err = -ENOMEM;
		goto err_free;
	}
	me->buf = buf;
	me->size = size;
	err = sroce_ring_charge(me);
	if (err)
		goto err_free_entry;
	err = rdma_user_mmap_entry_insert(uctx, &me->rdma_entry, size);
	if (err)
		goto err_uncharge;
	ring->mmap = &me->rdma_entry;
	ring->mmap_offset = rdma_user_mmap_get_offset(&me->rdma_entry);
	ring->mmap_length = size;
	return 0;

err_uncharge:
	sroce_ring_uncharge(me);
err_free_entry:
	kfree(me);
err_free:
	vfree(buf);
	return err;
}

/*
 * Release a ring; user memory lives on until unmapped (see above), marked
 * dead for a process that still uses it (the uapi header says how).
 */
void sroce_ring_free(struct sroce_ring *ring)
{
	if (ring->mmap) {
		/* Release: what we wrote to the ring before comes first. */
		smp_store_release(&ring->hdr->flags,
				  SROCE_RING_DEAD | SROCE_RING_NEED_DOORBELL);
		rdma_user_mmap_entry_remove(ring->mmap);
	} else {
		vfree(ring->hdr);
	}
	ring->hdr = NULL;
	ring->mmap = NULL;
}

int sroce_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *e;
	struct sroce_mmap_entry *me;
	unsigned long off;
	int err = 0;

	e = rdma_user_mmap_entry_get(uctx, vma);
	if (!e)
		return -EINVAL;
	me = to_smmap(e);
	/* Whole rings only: a partial view would hide the indices. */
	if (vma->vm_end - vma->vm_start != me->size)
		err = -EINVAL;
	/* Page by page: the memory is vmalloc'ed, not vmalloc_user()'s. */
	for (off = 0; !err && off < me->size; off += PAGE_SIZE)
		err = vm_insert_page(vma, vma->vm_start + off,
				     vmalloc_to_page(me->buf + off));
	if (!err)
		sroce_vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);
	rdma_user_mmap_entry_put(e);
	return err;
}

void sroce_mmap_free(struct rdma_user_mmap_entry *e)
{
	struct sroce_mmap_entry *me = to_smmap(e);

	vfree(me->buf);
	sroce_ring_uncharge(me);
	kfree(me);
}
