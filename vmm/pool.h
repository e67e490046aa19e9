/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Physical memory pool: a sorted array of free ranges taken from the UEFI
 * memory map, first-fit allocation with alignment, freeing with merge.
 * Pure logic (host-tested); vmm/mem.c wraps one global instance with a
 * lock. Memory is identity mapped, so an address is also a pointer.
 */
#ifndef VMM_POOL_H
#define VMM_POOL_H

#include "drivers/base.h"

#define POOL_MAX_RANGES 256u

struct pool_range {
	uint64_t base;
	uint64_t end;           /* exclusive */
};

struct pool {
	uint32_t n;
	uint64_t free_bytes;
	uint64_t dropped_bytes; /* lost because the range table was full */
	struct pool_range r[POOL_MAX_RANGES];
};

void pool_init(struct pool *p);
/* Adds [base, base+size) rounded inward to pages; overlaps with free
 * ranges are merged, never counted twice. */
void pool_add(struct pool *p, uint64_t base, uint64_t size);
/* First fit at or above `min` (0: anywhere); size rounded up to pages,
 * align a power of two >= 4 KiB. Returns 0 when nothing fits. */
uint64_t pool_alloc(struct pool *p, uint64_t size, uint64_t align, uint64_t min);
void pool_free(struct pool *p, uint64_t base, uint64_t size);
/* Largest free range, for messages. */
uint64_t pool_largest(const struct pool *p);

#endif
