// SPDX-License-Identifier: BSD-2-Clause
/*
 * vmm/host/paging_build.c: the host identity map's memory types (issue
 * 22.5). SDM Vol. 3A, "Memory Types": a page whose PAT type is UC is
 * uncached whatever the MTRRs say, and a large page spanning ranges of
 * different MTRR types is a problem the SDM leaves undefined ("Large Page
 * Size Considerations"), so MMIO must not share a 1 GiB page with RAM.
 * Linux maps the same way (arch/x86/mm/init.c splits its direct map at
 * the memory map's RAM boundaries; ioremap() uses UC- for MMIO).
 *
 * The test walks the tables as the CPU would and checks every 4 KiB page
 * of a PC-like memory map: its address, its type from PWT/PCD, and the
 * size of the page holding it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "vmm/host/paging_build.h"

#define MAXPAGES 4096

struct pool {
	void *pages[MAXPAGES];
	unsigned n, budget;
};

static void *alloc(void *ctx)
{
	struct pool *p = ctx;
	void *page;

	if (p->n >= p->budget)
		return NULL;
	page = aligned_alloc(PAGE_SIZE, PAGE_SIZE);
	assert_non_null(page);
	memset(page, 0, PAGE_SIZE);
	return p->pages[p->n++] = page;
}

static void release(struct pool *p)
{
	for (unsigned i = 0; i < p->n; i++)
		free(p->pages[i]);
	p->n = 0;
}

/* A PC: low RAM, the legacy hole, RAM to 2 GiB - 12 MiB + 4 KiB (an
 * unaligned end), ACPI tables, a reserved gap, the 32-bit MMIO window
 * (ECAM at 0xb0000000 is nowhere in the map: a hole), flash, and RAM
 * from 4 GiB to 6 GiB + 1 MiB. */
static const struct mem_range pc_map[] = {
	{ 0x0, 0x9f000, MEM_USABLE },
	{ 0x9f000, 0x61000, MEM_RESERVED },
	{ 0x100000, 0x7f401000 - 0x100000, MEM_USABLE },
	{ 0x7f401000, 0x1ff000, MEM_BOOT_SERVICES },
	{ 0x7f600000, 0x100000, MEM_RUNTIME },
	{ 0x7f700000, 0x80000, MEM_ACPI },
	{ 0x7f780000, 0x80000, MEM_RESERVED },
	{ 0xffc00000, 0x400000, MEM_MMIO },
	{ 0x100000000ull, 0x40100000ull, MEM_LOADER },
};

static enum pg_type expected(uint64_t a, uint64_t fb, uint64_t fbn)
{
	if (a >= fb && a < fb + fbn)
		return PG_WC;
	for (unsigned i = 0; i < ARRAY_SIZE(pc_map); i++)
		if (a >= pc_map[i].base && a < pc_map[i].base + pc_map[i].size)
			return pc_map[i].type == MEM_RESERVED || pc_map[i].type == MEM_MMIO ? PG_UC
											    : PG_WB;
	return PG_UC;
}

static enum pg_type type_of(uint64_t pte)
{
	switch (pte & (PTE_PCD | PTE_PWT)) {
	case 0:
		return PG_WB;
	case PTE_PWT:
		return PG_WC;
	case PTE_PCD | PTE_PWT:
		return PG_UC;
	default:
		fail_msg("PCD without PWT: PAT entry 2 (UC-) is not used");
		return PG_MIXED;
	}
}

/* The leaf for a, and the size of its page. */
static uint64_t leaf(const uint64_t *pml4, uint64_t a, uint64_t *size)
{
	const uint64_t *t = pml4;

	for (int level = 3; level >= 0; level--) {
		uint64_t e = t[(a >> (12 + 9 * level)) & 511];

		assert_true(e & PTE_P);
		assert_true(e & PTE_W);
		if (level == 0 || (e & PTE_PS)) {
			assert_true(level < 3);
			*size = 1ull << (12 + 9 * level);
			assert_int_equal(e & PTE_ADDR & (*size - 1), 0);
			return e;
		}
		assert_int_equal(e & (PTE_PCD | PTE_PWT), 0);
		t = (const uint64_t *)(uintptr_t)(e & PTE_ADDR);
	}
	return 0;
}

static void check_map(bool gb, uint64_t fb, uint64_t fbn, uint64_t top)
{
	struct pool pool = { .budget = MAXPAGES };
	struct pg_env env = { pc_map, ARRAY_SIZE(pc_map), fb, fbn, gb, alloc, &pool };
	uint64_t *pml4 = paging_build(&env, top), size = 0, gb_seen = 0;

	assert_non_null(pml4);
	for (uint64_t a = 0; a < top; a += PAGE_SIZE) {
		uint64_t e = leaf(pml4, a, &size);
		enum pg_type want = expected(a, fb, fbn);

		assert_int_equal((e & PTE_ADDR & ~(size - 1)) + (a & (size - 1)), a);
		if (type_of(e) != want)
			fail_msg("%#llx: type %d, want %d", (unsigned long long)a, type_of(e), want);
		/* Only RAM in 1 GiB pages; MMIO in at most 2 MiB. */
		if (size == GiB) {
			assert_true(gb);
			assert_int_equal(want, PG_WB);
			gb_seen++;
		}
		if (want != PG_WB)
			assert_true(size <= 2 * MiB);
		/* Every page of a large one has the one type (checked above);
		 * skip the rest of it. */
		a += size - PAGE_SIZE - (a & (size - 1));
	}
	/* 4..5 GiB is all RAM: a 1 GiB page where the CPU has them. */
	assert_int_equal(gb_seen > 0, gb);
	/* A few dozen tables, not one per 4 KiB. */
	assert_true(pool.n < 64);
	release(&pool);
}

static void test_pc_map_2m(void **state)
{
	check_map(false, 0, 0, 8 * GiB);
}

static void test_pc_map_1g(void **state)
{
	check_map(true, 0, 0, 8 * GiB);
}

/* A framebuffer in the 32-bit window, and one above 4 GiB past the RAM,
 * its end not 2 MiB aligned: write-combining, the rest of its 2 MiB UC. */
static void test_framebuffer(void **state)
{
	check_map(true, 0xc0000000, 8 * MiB, 8 * GiB);
	check_map(true, 0x180000000ull, 3 * MiB + 0x4000, 8 * GiB);
}

static void test_range_type(void **state)
{
	struct pg_env env = { pc_map, ARRAY_SIZE(pc_map), 0xc0000000, 8 * MiB, true, NULL, NULL };

	assert_int_equal(paging_range_type(&env, 0, PAGE_SIZE), PG_WB);
	assert_int_equal(paging_range_type(&env, 0, 2 * MiB), PG_MIXED);
	assert_int_equal(paging_range_type(&env, 0xa0000, PAGE_SIZE), PG_UC);
	assert_int_equal(paging_range_type(&env, 0x7f400000, 2 * MiB), PG_WB);
	assert_int_equal(paging_range_type(&env, 0x7f600000, 2 * MiB), PG_MIXED);
	assert_int_equal(paging_range_type(&env, 0xfee00000, 2 * MiB), PG_UC);
	assert_int_equal(paging_range_type(&env, 0xc0000000, 2 * MiB), PG_WC);
	assert_int_equal(paging_range_type(&env, 0xc0000000, GiB), PG_MIXED);
	assert_int_equal(paging_range_type(&env, 4 * GiB, GiB), PG_WB);
	assert_int_equal(paging_range_type(&env, 5 * GiB, GiB), PG_MIXED);
	assert_int_equal(paging_range_type(&env, 7 * GiB, GiB), PG_UC);
}

/* No page to be had: NULL, never a half-built map in use. */
static void test_out_of_pages(void **state)
{
	for (unsigned budget = 0; budget < 12; budget++) {
		struct pool pool = { .budget = budget };
		struct pg_env env = { pc_map, ARRAY_SIZE(pc_map), 0, 0, false, alloc, &pool };

		assert_null(paging_build(&env, 8 * GiB));
		release(&pool);
	}
}

/* A device beyond the map's top (an MMIO UART in a 64-bit BAR): its
 * 4 KiB page alone, uncached, tables added; a page below the top that a
 * large page holds stays as it was. */
static void test_map_page(void **state)
{
	struct pool pool = { .budget = MAXPAGES };
	struct pg_env env = { pc_map, ARRAY_SIZE(pc_map), 0, 0, true, alloc, &pool };
	uint64_t *pml4 = paging_build(&env, 8 * GiB), size = 0, e, before;
	uint64_t uart = 0x6000001000ull;        /* 384 GiB + 4 KiB */

	assert_non_null(pml4);
	before = pool.n;
	assert_true(paging_map_page(&env, pml4, uart + 0x20, PG_UC));
	assert_int_equal(pool.n - before, 2);  /* a PD and a PT (the PDPT is there) */
	e = leaf(pml4, uart, &size);
	assert_int_equal(size, PAGE_SIZE);
	assert_int_equal(e & PTE_ADDR, uart);
	assert_int_equal(type_of(e), PG_UC);
	assert_int_equal(pml4[(uart + PAGE_SIZE) >> 39 & 511] & PTE_P, PTE_P);
	/* A second page next to it: no new table. */
	assert_true(paging_map_page(&env, pml4, uart + PAGE_SIZE, PG_UC));
	assert_int_equal(pool.n - before, 2);
	/* Below the top, in a 1 GiB RAM page: left alone. */
	assert_true(paging_map_page(&env, pml4, 4 * GiB + 0x1000, PG_UC));
	e = leaf(pml4, 4 * GiB, &size);
	assert_int_equal(size, GiB);
	assert_int_equal(type_of(e), PG_WB);
	/* No table to be had: false. */
	pool.budget = pool.n;
	assert_false(paging_map_page(&env, pml4, 0x7000000000ull, PG_UC));
	release(&pool);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_range_type),
		cmocka_unit_test(test_pc_map_2m),
		cmocka_unit_test(test_pc_map_1g),
		cmocka_unit_test(test_framebuffer),
		cmocka_unit_test(test_out_of_pages),
		cmocka_unit_test(test_map_page),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
