// SPDX-License-Identifier: BSD-2-Clause
#include "vmx/ept.h"

#define EPT_ENTRIES 512u
#define EPT_TABLE   EPT_RWX         /* non-leaf entries grant everything */

static unsigned idx(uint64_t gpa, unsigned level)   /* level 3 = PML4 ... 0 = PT */
{
	return (gpa >> (12 + 9 * level)) & (EPT_ENTRIES - 1);
}

static void *ept_alloc(struct ept *e)
{
	void *t = e->alloc_page(e->ctx);

	if (t)
		e->pages++;
	return t;
}

static void ept_free(struct ept *e, void *t)
{
	e->free_page(e->ctx, t);
	e->pages--;
}

bool ept_init(struct ept *e)
{
	e->pages = 0;
	e->pml4 = ept_alloc(e);
	return e->pml4 != NULL;
}

static bool present(uint64_t pte)
{
	return pte & EPT_RWX;
}

/* Table below entry *pte, allocated on first use. A 2 MiB leaf in the
 * way is split into 512 4 KiB leaves with the same attributes, so one
 * page inside it can be remapped. */
static uint64_t *next_table(struct ept *e, uint64_t *pte)
{
	uint64_t *t;

	if (present(*pte) && !(*pte & EPT_LARGE))
		return (uint64_t *)(*pte & EPT_ADDR);
	if (!(t = ept_alloc(e)))
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

static bool table_empty(const uint64_t *t)
{
	for (unsigned i = 0; i < EPT_ENTRIES; i++)
		if (t[i])
			return false;
	return true;
}

/*
 * After an unmap: tables left without any entry are freed, bottom up
 * (never the PML4), so a guest that maps and unmaps pages all over its
 * address space (an APIC base moved around) holds tables only for what is
 * mapped now. path[level] is the entry pointing to the table of `level`.
 */
static void prune(struct ept *e, uint64_t *const *path, unsigned leaf)
{
	for (unsigned level = leaf; level < 3; level++) {
		uint64_t *t = (uint64_t *)(*path[level] & EPT_ADDR);

		if (!table_empty(t))
			return;
		*path[level] = 0;
		ept_free(e, t);
	}
}

/*
 * After a 4 KiB leaf was written: a page table whose 512 leaves map one
 * 2 MiB-aligned host range in order, all with the same attributes, is what
 * a split 2 MiB leaf became and then got back (an APIC base moved into
 * guest RAM and out again). It becomes that 2 MiB leaf again and the table
 * is freed, so a guest moving its APIC base over all of its RAM holds
 * tables only for the regions a base is in now (issue 23.3). The caller
 * flushes with INVEPT, as for any change of a mapping (SDM Vol. 3C,
 * "Invalidation of TLBs and Paging-Structure Caches").
 */
static void merge(struct ept *e, uint64_t *pde)
{
	const uint64_t *t = (const uint64_t *)(*pde & EPT_ADDR);
	uint64_t base = t[0] & EPT_ADDR, attr = t[0] & ~EPT_ADDR;

	if (!present(t[0]) || base % (2 * MiB))
		return;
	for (unsigned i = 1; i < EPT_ENTRIES; i++)
		if (t[i] != ((base + (uint64_t)i * PAGE_SIZE) | attr))
			return;
	*pde = base | attr | EPT_LARGE;
	ept_free(e, (void *)t);
}

static bool map_one(struct ept *e, uint64_t gpa, uint64_t hpa, unsigned leaf, uint64_t flags)
{
	uint64_t *t = e->pml4, *path[3], old;

	for (unsigned level = 3; level > leaf; level--) {
		uint64_t *pte = &t[idx(gpa, level)];

		/* Nothing mapped below: nothing to unmap, no table to make. */
		if (!flags && !present(*pte))
			return true;
		path[level - 1] = pte;
		t = next_table(e, pte);
		if (!t)
			return false;
	}
	old = t[idx(gpa, leaf)];
	t[idx(gpa, leaf)] = flags ? hpa | flags | (leaf ? EPT_LARGE : 0) : 0;
	/* A 2 MiB leaf (or unmap) that replaced a page table frees it:
	 * nothing points to it any more, and ept_destroy would miss it. */
	if (leaf && present(old) && !(old & EPT_LARGE))
		free_level(e, (uint64_t *)(old & EPT_ADDR), leaf - 1);
	if (!flags)
		prune(e, path, leaf);
	else if (!leaf && !e->small_only)
		merge(e, path[0]);
	return true;
}

bool ept_map(struct ept *e, uint64_t gpa, uint64_t hpa, uint64_t size, uint64_t flags)
{
	const uint64_t big = 2 * MiB;

	while (size) {
		bool large = !e->small_only && !(gpa % big) && !(hpa % big) && size >= big;
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
			if (present(t[i]) && !(t[i] & EPT_LARGE))
				free_level(e, (uint64_t *)(t[i] & EPT_ADDR), level - 1);
	ept_free(e, t);
}

void ept_destroy(struct ept *e)
{
	if (e->pml4)
		free_level(e, e->pml4, 3);
	e->pml4 = NULL;
}
