// SPDX-License-Identifier: BSD-2-Clause
#include "drivers/string.h"
#include "vmm/host/mem.h"
#include "vmm/host/panic.h"
#include "vmm/host/pool.h"
#include "vmm/host/spinlock.h"

#define LOW_MEM_END (1ull << 20)

/* Static on purpose: GNU-EFI folds .bss into .data, and the pool struct is
 * only 4 KiB. */
static struct pool pool;
static struct spinlock pool_lock;
static uint64_t low_page;

/*
 * Keeps free slots in the pool's range table (vmm/host/pool.h): while fewer
 * than POOL_TABLE_SLACK are left, the table doubles, taken from the pool
 * itself, and the old one goes back to it. Called after every change
 * under the lock, so no single change finds the table full.
 */
static void mem_table_reserve(void)
{
	uint64_t cap = 2ull * pool.cap, bytes = cap * sizeof(struct pool_range);
	uint64_t old_bytes = (uint64_t)pool.cap * sizeof(struct pool_range);
	struct pool_range *t, *old;

	if (!pool_needs_table(&pool) || cap > UINT32_MAX)
		return;
	t = (struct pool_range *)pool_alloc(&pool, bytes, PAGE_SIZE, 0);
	if (!t)
		return;         /* no block that large: a free may drop, and counts it */
	old = pool_set_table(&pool, t, (uint32_t)cap);
	if (old)
		pool_free(&pool, (uint64_t)old, old == t ? bytes : old_bytes);
}

static void add_type(const struct boot_info *bi, enum mem_type type)
{
	for (uint32_t i = 0; i < bi->nmem; i++) {
		const struct mem_range *r = &bi->mem[i];
		uint64_t base = r->base, end = r->base + r->size;

		if (r->type != type)
			continue;
		if (base < LOW_MEM_END) {
			/* Remember one low page for the AP trampoline. */
			if (!low_page && base >= 0x1000 && ALIGN_UP(base, PAGE_SIZE) + PAGE_SIZE <= MIN(end, LOW_MEM_END))
				low_page = ALIGN_UP(base, PAGE_SIZE);
			base = LOW_MEM_END;
		}
		if (base < end)
			pool_add(&pool, base, end - base);
		mem_table_reserve();
	}
}

void mem_init(const struct boot_info *bi)
{
	pool_init(&pool);
	add_type(bi, MEM_USABLE);
}

uint64_t mem_type_bytes(const struct boot_info *bi, enum mem_type type)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < bi->nmem; i++)
		if (bi->mem[i].type == type)
			n += bi->mem[i].size;
	return n;
}

void *mem_try_alloc(uint64_t size, uint64_t align)
{
	uint64_t a;

	spin_lock(&pool_lock);
	a = pool_alloc(&pool, size, align, 0);
	mem_table_reserve();
	spin_unlock(&pool_lock);
	if (a)
		memset((void *)a, 0, ALIGN_UP(size, PAGE_SIZE));
	return (void *)a;
}

void *mem_alloc_aligned(uint64_t size, uint64_t align)
{
	void *p = mem_try_alloc(size, align);

	if (!p)
		panic("out of memory: %lu bytes wanted, %lu free", (unsigned long)size,
		      (unsigned long)pool.free_bytes);
	return p;
}

void *mem_alloc(uint64_t size)
{
	return mem_alloc_aligned(size, PAGE_SIZE);
}

void mem_free(void *p, uint64_t size)
{
	spin_lock(&pool_lock);
	pool_free(&pool, (uint64_t)p, size);
	mem_table_reserve();
	spin_unlock(&pool_lock);
}

uint64_t mem_free_bytes(void)
{
	return pool.free_bytes;
}

uint64_t mem_largest_free(void)
{
	return pool_largest(&pool);
}

uint64_t mem_low_page(void)
{
	return low_page;
}
