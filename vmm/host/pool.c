// SPDX-License-Identifier: BSD-2-Clause
#include "vmm/host/pool.h"

void pool_init(struct pool *p)
{
	p->n = 0;
	p->cap = POOL_MAX_RANGES;
	p->r = p->first;
	p->free_bytes = 0;
	p->dropped_bytes = 0;
}

static void pool_remove_at(struct pool *p, uint32_t i)
{
	for (; i + 1 < p->n; i++)
		p->r[i] = p->r[i + 1];
	p->n--;
}

static bool pool_insert_at(struct pool *p, uint32_t i, uint64_t base, uint64_t end)
{
	if (p->n == p->cap)
		return false;
	for (uint32_t j = p->n; j > i; j--)
		p->r[j] = p->r[j - 1];
	p->r[i] = (struct pool_range){ base, end };
	p->n++;
	return true;
}

/* Inserts a range known not to overlap any free range, merging with its
 * neighbours when adjacent. */
static void pool_insert(struct pool *p, uint64_t base, uint64_t end)
{
	uint32_t i = 0;

	while (i < p->n && p->r[i].end < base)
		i++;
	if (i < p->n && p->r[i].end == base) {
		p->r[i].end = end;
		if (i + 1 < p->n && p->r[i + 1].base == end) {
			p->r[i].end = p->r[i + 1].end;
			pool_remove_at(p, i + 1);
		}
	} else if (i < p->n && p->r[i].base == end) {
		p->r[i].base = base;
	} else if (!pool_insert_at(p, i, base, end)) {
		p->dropped_bytes += end - base;
		return;
	}
	p->free_bytes += end - base;
}

void pool_add(struct pool *p, uint64_t base, uint64_t size)
{
	uint64_t end = base + size < base ? UINT64_MAX : base + size;

	end = ALIGN_DOWN(end, PAGE_SIZE);
	if (base > end)         /* no whole page; in the last one ALIGN_UP would wrap */
		return;
	base = ALIGN_UP(base, PAGE_SIZE);
	/* Insert only the parts not already free, so nothing counts twice. */
	while (base < end) {
		uint32_t i = 0;
		uint64_t next;

		while (i < p->n && p->r[i].end <= base)
			i++;
		if (i == p->n || p->r[i].base >= end) {
			pool_insert(p, base, end);
			return;
		}
		next = p->r[i].end;
		if (p->r[i].base > base)
			pool_insert(p, base, p->r[i].base);
		base = next;
	}
}

uint64_t pool_alloc(struct pool *p, uint64_t size, uint64_t align, uint64_t min)
{
	size = ALIGN_UP(size, PAGE_SIZE);
	if (align < PAGE_SIZE)
		align = PAGE_SIZE;
	if (!size || (align & (align - 1)))
		return 0;
	for (uint32_t i = 0; i < p->n; i++) {
		struct pool_range *r = &p->r[i];
		uint64_t a = ALIGN_UP(MAX(r->base, min), align);

		if (a < r->base || a >= r->end || r->end - a < size)
			continue;
		if (a > r->base && a + size < r->end) {
			/* Split in three: keep head and tail. */
			if (!pool_insert_at(p, i + 1, a + size, r->end))
				continue;
			p->r[i].end = a;
		} else if (a > r->base) {
			r->end = a;
		} else if (a + size < r->end) {
			r->base = a + size;
		} else {
			pool_remove_at(p, i);
		}
		p->free_bytes -= size;
		return a;
	}
	return 0;
}

void pool_free(struct pool *p, uint64_t base, uint64_t size)
{
	if (size)
		pool_add(p, base, ALIGN_UP(size, PAGE_SIZE));
}

uint64_t pool_largest(const struct pool *p)
{
	uint64_t best = 0;

	for (uint32_t i = 0; i < p->n; i++)
		best = MAX(best, p->r[i].end - p->r[i].base);
	return best;
}

struct pool_range *pool_set_table(struct pool *p, struct pool_range *table, uint32_t cap)
{
	struct pool_range *old = p->r;

	if (cap <= p->n)
		return table;
	for (uint32_t i = 0; i < p->n; i++)
		table[i] = p->r[i];
	p->r = table;
	p->cap = cap;
	return old == p->first ? NULL : old;
}
