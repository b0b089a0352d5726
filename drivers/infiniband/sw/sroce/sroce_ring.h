/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Rings of fixed-size entries shared with user space (layout: the uapi
 * header), and the one place that says how either side may touch them.
 *
 * Each ring has one producer and one consumer, one of them possibly a
 * user process. The rules, and why they are enough:
 *
 * - The producer writes entries, then publishes prod with a release; the
 *   consumer reads prod with an acquire before it reads those entries
 *   (sroce_ring_publish(), sroce_ring_avail()).
 * - The consumer copies what it needs out of an entry, then releases cons;
 *   the producer reads cons with an acquire before it overwrites a slot
 *   (sroce_ring_release(), sroce_ring_full()).
 * - Doorbells: a consumer about to go idle sets SROCE_RING_NEED_DOORBELL,
 *   issues a full barrier and reads prod again; a producer publishes prod,
 *   issues a full barrier and reads the flag (sroce_ring_idle(),
 *   sroce_ring_need_doorbell()). Each side stores, then loads the other's
 *   word, with a full barrier between: one of them sees the other's store,
 *   so either the consumer finds the new entry or the producer rings.
 *   A consumer that keeps reading prod instead (the send queue's poller,
 *   sroce_sq.c) is not idle and sets no flag until it stops.
 * - An index read from user memory is never trusted. A producer index
 *   must lie in [next, base + entries], where next is the consumer's next
 *   entry and base the oldest whose slot it still uses; anything else
 *   breaks the ring (-EPROTO from sroce_ring_avail()), and the owner fails
 *   the object once (sroce_qp_bad_ring(), SRQ_ERR). A consumer index the
 *   producer cannot make sense of reads as a full ring when it produces
 *   (the entry is lost and counted), and as an empty one when it only
 *   counts (sroce_ring_pending()). No loop runs over more than
 *   num_entries entries on the strength of a user's index.
 */
#ifndef SROCE_RING_H
#define SROCE_RING_H

#include <linux/compiler.h>
#include <linux/errno.h>
#include <linux/minmax.h>
#include <linux/types.h>
#include <asm/barrier.h>
#include <rdma/ib_verbs.h>
#include <rdma/sroce-abi.h>

/**
 * struct sroce_ring - a ring of fixed-size entries (layout: uapi header).
 * @hdr: start of the ring memory: producer and consumer indices
 * @entries: the entries, right after the header page
 * @num_entries: a power of two
 * @mask: @num_entries - 1
 * @entry_size: bytes per entry
 * @mmap: the user mapping's entry, NULL for kernel rings
 * @mmap_offset: where user space maps the ring
 * @mmap_length: bytes user space maps
 */
struct sroce_ring {
	struct sroce_ring_hdr *hdr;
	void *entries;
	u32 num_entries;
	u32 mask;
	u32 entry_size;
	struct rdma_user_mmap_entry *mmap;
	u64 mmap_offset;
	u64 mmap_length;
};

static inline void *sroce_ring_entry(const struct sroce_ring *ring, u32 idx)
{
	return ring->entries + (size_t)(idx & ring->mask) * ring->entry_size;
}

/* The consumer's side. */

/**
 * sroce_ring_avail() - entries published past the consumer's next one.
 * @ring: a ring the kernel consumes
 * @base: the oldest entry whose slot the consumer still uses
 * @next: the next entry the consumer will read
 *
 * Return: how many entries from @next on are ready to read, or -EPROTO
 * when the producer index lies outside [@next, @base + num_entries]: one
 * behind @next would have entries read twice, one too far ahead has
 * overwritten slots still in use.
 */
static inline int sroce_ring_avail(const struct sroce_ring *ring, u32 base,
				   u32 next)
{
	/* Acquire: the entries before prod are written. */
	u32 prod = smp_load_acquire(&ring->hdr->prod);

	if (prod - base > ring->num_entries || prod - base < next - base)
		return -EPROTO;
	return prod - next;
}

/* Hand the slots before @cons back to the producer; they are read. */
static inline void sroce_ring_release(struct sroce_ring *ring, u32 cons)
{
	/* Release: our reads of the slots come first. */
	smp_store_release(&ring->hdr->cons, cons);
}

/*
 * Ask for doorbells without looking at prod: when the consumer reads the
 * ring after this (a flush), or will not read it until a doorbell comes
 * (a new or reset queue, a QP not yet sending).
 */
static inline void sroce_ring_arm(struct sroce_ring *ring)
{
	WRITE_ONCE(ring->hdr->flags, SROCE_RING_NEED_DOORBELL);
	/* Between our flag and their prod: see the top of the file. */
	smp_mb();
}

/**
 * sroce_ring_idle() - ask for a doorbell before going idle.
 * @ring: a ring the kernel consumes
 * @next: the next entry the consumer would read
 *
 * Return: true when the consumer may go idle (the producer will ring);
 * false when entries arrived meanwhile (nothing armed: read on).
 */
static inline bool sroce_ring_idle(struct sroce_ring *ring, u32 next)
{
	sroce_ring_arm(ring);
	if (READ_ONCE(ring->hdr->prod) == next)
		return true;
	WRITE_ONCE(ring->hdr->flags, 0);
	return false;
}

/* A doorbell came: no more are needed until the consumer idles again. */
static inline void sroce_ring_disarm(struct sroce_ring *ring)
{
	WRITE_ONCE(ring->hdr->flags, 0);
	/* Between our flag and their prod: see the top of the file. */
	smp_mb();
}

/*
 * Drop whatever is posted (a move to RESET): the consumer starts again at
 * the producer's index, which it returns.
 */
static inline u32 sroce_ring_discard(struct sroce_ring *ring)
{
	u32 prod = READ_ONCE(ring->hdr->prod);

	sroce_ring_release(ring, prod);
	return prod;
}

/* The producer's side. */

/*
 * Whether slot @prod is still the consumer's. A consumer index that
 * claims more than was produced makes the difference huge: full.
 */
static inline bool sroce_ring_full(const struct sroce_ring *ring, u32 prod)
{
	/* Acquire: the consumer is done with the slots before cons. */
	return prod - smp_load_acquire(&ring->hdr->cons) >= ring->num_entries;
}

/* The entries before @prod are written: hand them to the consumer. */
static inline void sroce_ring_publish(struct sroce_ring *ring, u32 prod)
{
	/* Release: the entries are written before prod says so. */
	smp_store_release(&ring->hdr->prod, prod);
}

/*
 * Entries produced before @prod and not yet consumed. A consumer index
 * that claims more than the ring holds, or more than was ever produced,
 * reads as an empty ring.
 */
static inline u32 sroce_ring_pending(const struct sroce_ring *ring, u32 prod)
{
	u32 pending = prod - READ_ONCE(ring->hdr->cons);

	return pending > min(ring->num_entries, prod) ? 0 : pending;
}

/* After publishing: whether the consumer went idle and wants a doorbell. */
static inline bool sroce_ring_need_doorbell(const struct sroce_ring *ring)
{
	/* Between our prod and their flag: see the top of the file. */
	smp_mb();
	return READ_ONCE(ring->hdr->flags) & SROCE_RING_NEED_DOORBELL;
}

int sroce_ring_alloc(struct sroce_ring *ring, u32 num_entries,
		     u32 entry_size, struct ib_ucontext *uctx);
void sroce_ring_free(struct sroce_ring *ring);
int sroce_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma);
void sroce_mmap_free(struct rdma_user_mmap_entry *e);

#endif /* SROCE_RING_H */
