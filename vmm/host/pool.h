/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Physical memory pool: a sorted array of free ranges taken from the UEFI
 * memory map, first-fit allocation with alignment, freeing with merge.
 * Pure logic (host-tested); vmm/host/mem.c wraps one global instance with a
 * lock. Memory is identity mapped, so an address is also a pointer.
 *
 * Frees in any order can cut free memory into more ranges than any fixed
 * table holds (EPT tables freed in address order, allocated in another:
 * issue 15.1). The pool starts with a table of its own; before it runs
 * out, its owner hands it a larger one (pool_needs_table, pool_set_table),
 * taken from the pool itself in vmm/host/mem.c. Only a pool never given one
 * drops a range it has no slot for, and counts it.
 */
#ifndef VMM_HOST_POOL_H
#define VMM_HOST_POOL_H

#include "drivers/base.h"

#define POOL_MAX_RANGES 256u            /* entries of the table a pool starts with */
/* One pool_add/pool_free of a block not overlapping free memory, or one
 * pool_alloc, adds at most one range: with this many slots left, the
 * owner can still allocate a new table and free the old one. */
#define POOL_TABLE_SLACK 4u

struct pool_range {
	uint64_t base;
	uint64_t end;           /* exclusive */
};

struct pool {
	uint32_t n;
	uint32_t cap;           /* entries r can hold */
	uint64_t free_bytes;
	uint64_t dropped_bytes; /* lost because the range table was full */
	struct pool_range *r;   /* the sorted free ranges: first[], or a table handed in */
	struct pool_range first[POOL_MAX_RANGES];
};

void pool_init(struct pool *p);
/* Adds [base, base+size) rounded inward to pages; overlaps with free
 * ranges are merged, never counted twice. */
void pool_add(struct pool *p, uint64_t base, uint64_t size);
/* First fit at or above `min` (0: anywhere); size rounded up to pages,
 * align a power of two >= 4 KiB. Returns 0 when nothing fits. */
uint64_t pool_alloc(struct pool *p, uint64_t size, uint64_t align, uint64_t min);
void pool_free(struct pool *p, uint64_t base, uint64_t size);
/* Fewer than POOL_TABLE_SLACK free entries left: time for a larger table. */
static inline bool pool_needs_table(const struct pool *p)
{
	return p->cap - p->n < POOL_TABLE_SLACK;
}

/* Moves the ranges into table (cap entries). Returns the table now
 * unused, for the caller to free: the one replaced if it was handed in,
 * NULL if it was the pool's own, or table itself if cap <= p->n. */
struct pool_range *pool_set_table(struct pool *p, struct pool_range *table, uint32_t cap);
/* Largest free range, for messages. */
uint64_t pool_largest(const struct pool *p);

#endif
