// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Rings shared with user space (layout in the uapi header): allocation in
 * vmalloc memory and mapping through the rdma core's mmap entries.
 *
 * The ring memory belongs to its mmap entry. Destroying the object only
 * removes the entry; the core frees it (sroce_mmap_free) once no mmap()
 * call is using it, and pages a process still has mapped stay alive
 * through their page references until munmap.
 */
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/vmalloc.h>

#include "sroce.h"

struct sroce_mmap_entry {
	struct rdma_user_mmap_entry rdma_entry;
	void *buf;
	size_t size;
};

static struct sroce_mmap_entry *to_smmap(struct rdma_user_mmap_entry *e)
{
	return container_of(e, struct sroce_mmap_entry, rdma_entry);
}

/**
 * sroce_ring_alloc() - allocate a ring and, for user objects, its mapping.
 * @ring: ring to fill in
 * @num_entries: entries wanted; rounded up to a power of two
 * @entry_size: bytes per entry
 * @uctx: user context to map it into, or NULL for a kernel object
 *
 * Return: 0 or a negative errno. On success a user ring's mapping is
 * described by @ring->mmap_offset and @ring->mmap_length.
 */
int sroce_ring_alloc(struct sroce_ring *ring, u32 num_entries,
		     u32 entry_size, struct ib_ucontext *uctx)
{
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
	buf = vmalloc_user(size);	/* zeroed, and mappable */
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

	me = kzalloc(sizeof(*me), GFP_KERNEL);
	if (!me) {
		err = -ENOMEM;
		goto err_free;
	}
	me->buf = buf;
	me->size = size;
	err = rdma_user_mmap_entry_insert(uctx, &me->rdma_entry, size);
	if (err) {
		kfree(me);
		goto err_free;
	}
	ring->mmap = &me->rdma_entry;
	ring->mmap_offset = rdma_user_mmap_get_offset(&me->rdma_entry);
	ring->mmap_length = size;
	return 0;

err_free:
	vfree(buf);
	return err;
}

/* Release a ring; user memory lives on until unmapped (see above). */
void sroce_ring_free(struct sroce_ring *ring)
{
	if (ring->mmap)
		rdma_user_mmap_entry_remove(ring->mmap);
	else
		vfree(ring->hdr);
	ring->hdr = NULL;
	ring->mmap = NULL;
}

int sroce_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *e;
	struct sroce_mmap_entry *me;
	int err;

	e = rdma_user_mmap_entry_get(uctx, vma);
	if (!e)
		return -EINVAL;
	me = to_smmap(e);
	/* Whole rings only: a partial view would hide the indices. */
	if (vma->vm_end - vma->vm_start != me->size)
		err = -EINVAL;
	else
		err = remap_vmalloc_range(vma, me->buf, 0);
	rdma_user_mmap_entry_put(e);
	return err;
}

void sroce_mmap_free(struct rdma_user_mmap_entry *e)
{
	struct sroce_mmap_entry *me = to_smmap(e);

	vfree(me->buf);
	kfree(me);
}
