// SPDX-License-Identifier: BSD-2-Clause
#include "vmx/ept.h"

#define EPT_ENTRIES 512u
#define EPT_TABLE   EPT_RWX         /* non-leaf entries grant everything */

static unsigned idx(uint64_t gpa, unsigned level)   /* level 3 = PML4 ... 0 = PT */
{
	return (gpa >> (12 + 9 * level)) & (EPT_ENTRIES - 1);
}

bool ept_init(struct ept *e)
{
	e->pml4 = e->alloc_page(e->ctx);
	return e->pml4 != NULL;
}

/* Table below entry *pte, allocated on first use. A 2 MiB leaf in the
 * way is split into 512 4 KiB leaves with the same attributes, so one
 * page inside it can be remapped. */
static uint64_t *next_table(struct ept *e, uint64_t *pte)
{
	uint64_t *t;

	if ((*pte & EPT_RWX) && !(*pte & EPT_LARGE))
		return (uint64_t *)(*pte & EPT_ADDR);
	if (!(t = e->alloc_page(e->ctx)))
		return NULL;
	if (*pte & EPT_LARGE) {
		uint64_t base = *pte & EPT_ADDR, attr = *pte & ~EPT_ADDR & ~EPT_LARGE;

		for (unsigned i = 0; i < EPT_ENTRIES; i++)
			t[i] = (base + (uint64_t)i * PAGE_SIZE) | attr;
	}
	*pte = (uint64_t)t | EPT_TABLE;
	return t;
}

static void free_level(struct ept *e, uint64_t *t, unsigned level);

static bool map_one(struct ept *e, uint64_t gpa, uint64_t hpa, unsigned leaf, uint64_t flags)
{
	uint64_t *t = e->pml4, old;

	for (unsigned level = 3; level > leaf; level--) {
		t = next_table(e, &t[idx(gpa, level)]);
		if (!t)
			return false;
	}
	old = t[idx(gpa, leaf)];
	t[idx(gpa, leaf)] = hpa | flags | (leaf ? EPT_LARGE : 0);
	/* A 2 MiB leaf (or unmap) that replaced a page table frees it:
	 * nothing points to it any more, and ept_destroy would miss it. */
	if (leaf && (old & EPT_RWX) && !(old & EPT_LARGE))
		free_level(e, (uint64_t *)(old & EPT_ADDR), leaf - 1);
	return true;
}

bool ept_map(struct ept *e, uint64_t gpa, uint64_t hpa, uint64_t size, uint64_t flags)
{
	const uint64_t big = 2 * MiB;

	while (size) {
		bool large = !(gpa % big) && !(hpa % big) && size >= big;
		uint64_t step = large ? big : PAGE_SIZE;

		if (!map_one(e, gpa, hpa, large ? 1 : 0, flags))
			return false;
		gpa += step;
		hpa += step;
		size = size > step ? size - step : 0;
	}
	return true;
}

uint64_t ept_pointer(const struct ept *e)
{
	return (uint64_t)e->pml4 | EPTP_WALK_4 | EPTP_MT_WB;
}

static void free_level(struct ept *e, uint64_t *t, unsigned level)
{
	if (level > 0)
		for (unsigned i = 0; i < EPT_ENTRIES; i++)
			if ((t[i] & EPT_RWX) && !(t[i] & EPT_LARGE))
				free_level(e, (uint64_t *)(t[i] & EPT_ADDR), level - 1);
	e->free_page(e->ctx, t);
}

void ept_destroy(struct ept *e)
{
	if (e->pml4)
		free_level(e, e->pml4, 3);
	e->pml4 = NULL;
}
