// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce provider: mapping the rings the kernel allocates for CQs and QPs
 * (layout in the uapi header), after checking the shape the kernel
 * describes.
 */
#include <errno.h>
#include <sys/mman.h>

#include "sroce.h"

/*
 * Map a ring: @num_entries entries @stride bytes apart after the header
 * page. Returns 0 or a positive errno; @r is untouched on failure.
 */
int sroce_uring_map(struct sroce_uring *r, int cmd_fd, uint64_t off,
		    uint64_t len, uint32_t num_entries, uint32_t stride)
{
	void *map;

	if (!num_entries || (num_entries & (num_entries - 1)) ||
	    !stride || (stride & (stride - 1)) ||
	    len < SROCE_RING_HDR_SIZE + (uint64_t)num_entries * stride)
		return EPROTO;
	map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, cmd_fd, off);
	if (map == MAP_FAILED)
		return errno;
	r->map = map;
	r->map_len = len;
	r->hdr = map;
	r->entries = (char *)map + SROCE_RING_HDR_SIZE;
	r->mask = num_entries - 1;
	r->stride = stride;
	return 0;
}

void sroce_uring_unmap(struct sroce_uring *r)
{
	if (r->map)
		munmap(r->map, r->map_len);
	r->map = NULL;
}
