// SPDX-License-Identifier: BSD-2-Clause
/* The host's identity map with its memory types (vmm/host/paging_build.h). */
#include "vmm/host/paging_build.h"

static uint64_t overlap(uint64_t a, uint64_t an, uint64_t b, uint64_t bn)
{
	uint64_t lo = MAX(a, b), hi = MIN(a + an, b + bn);

	return hi > lo ? hi - lo : 0;
}

enum pg_type paging_range_type(const struct pg_env *env, uint64_t base, uint64_t size)
{
	uint64_t ram = 0, fb = env->fb_size ? overlap(base, size, env->fb_base, env->fb_size) : 0;

	for (uint32_t i = 0; i < env->nmem; i++) {
		const struct mem_range *m = &env->mem[i];

		if (m->base >= base + size)
			break;
		if (mem_type_is_ram(m->type))
			ram += overlap(base, size, m->base, m->size);
	}
	if (fb == size && !ram)
		return PG_WC;
	if (fb)
		return PG_MIXED;
	if (ram == size)
		return PG_WB;
	return ram ? PG_MIXED : PG_UC;
}

uint64_t paging_type_bits(enum pg_type t)
{
	switch (t) {
	case PG_WB:
		return 0;
	case PG_WC:
		return PTE_PWT;
	default:
		return PTE_PCD | PTE_PWT;
	}
}

static uint64_t *table(const struct pg_env *env)
{
	return env->alloc_page(env->ctx);
}

/* 512 4 KiB pages of one 2 MiB region whose types differ. */
static uint64_t *build_pt(const struct pg_env *env, uint64_t base)
{
	uint64_t *pt = table(env);

	if (!pt)
		return NULL;
	for (uint64_t i = 0; i < 512; i++) {
		uint64_t a = base + i * PAGE_SIZE;

		pt[i] = a | PTE_P | PTE_W | paging_type_bits(paging_range_type(env, a, PAGE_SIZE));
	}
	return pt;
}

static uint64_t *build_pd(const struct pg_env *env, uint64_t base)
{
	uint64_t *pd = table(env), *pt;

	if (!pd)
		return NULL;
	for (uint64_t i = 0; i < 512; i++) {
		uint64_t a = base + i * 2 * MiB;
		enum pg_type t = paging_range_type(env, a, 2 * MiB);

		if (t != PG_MIXED) {
			pd[i] = a | PTE_P | PTE_W | PTE_PS | paging_type_bits(t);
			continue;
		}
		if (!(pt = build_pt(env, a)))
			return NULL;
		pd[i] = (uint64_t)(uintptr_t)pt | PTE_P | PTE_W;
	}
	return pd;
}

uint64_t *paging_build(const struct pg_env *env, uint64_t top)
{
	uint64_t *pml4 = table(env), *pdpt, *pd;

	if (!pml4)
		return NULL;
	for (uint64_t g = 0; g < top / GiB; g++) {
		uint64_t a = g * GiB;

		if (!(pml4[g / 512] & PTE_P)) {
			if (!(pdpt = table(env)))
				return NULL;
			pml4[g / 512] = (uint64_t)(uintptr_t)pdpt | PTE_P | PTE_W;
		}
		pdpt = (uint64_t *)(uintptr_t)(pml4[g / 512] & PTE_ADDR);
		/* Only all-RAM gets a 1 GiB page (issue 22.5). */
		if (env->gb_pages && paging_range_type(env, a, GiB) == PG_WB) {
			pdpt[g % 512] = a | PTE_P | PTE_W | PTE_PS;
			continue;
		}
		if (!(pd = build_pd(env, a)))
			return NULL;
		pdpt[g % 512] = (uint64_t)(uintptr_t)pd | PTE_P | PTE_W;
	}
	return pml4;
}

bool paging_map_page(const struct pg_env *env, uint64_t *pml4, uint64_t a, enum pg_type t)
{
	uint64_t *tbl = pml4, *next;

	for (int level = 3; level > 0; level--) {
		uint64_t *e = &tbl[(a >> (12 + 9 * level)) & 511];

		if (!(*e & PTE_P)) {
			if (!(next = table(env)))
				return false;
			*e = (uint64_t)(uintptr_t)next | PTE_P | PTE_W;
		} else if (*e & PTE_PS) {
			return true;    /* inside the identity map already */
		}
		tbl = (uint64_t *)(uintptr_t)(*e & PTE_ADDR);
	}
	tbl[(a >> 12) & 511] = ALIGN_DOWN(a, PAGE_SIZE) | PTE_P | PTE_W | paging_type_bits(t);
	return true;
}
