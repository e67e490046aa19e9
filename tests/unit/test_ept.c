// SPDX-License-Identifier: BSD-2-Clause
/*
 * vmx/ept.c: the EPT builder (SDM Vol. 3C "EPT Translation Mechanism",
 * "EPT Paging-Structure Entries", "Extended-Page-Table Pointer"). Table
 * pages are real 4 KiB-aligned host allocations, tracked so that every
 * page is freed exactly once; host physical addresses are plain numbers.
 * The test walks the tables itself to translate guest addresses.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "vmx/ept.h"

#define PG              ((uint64_t)PAGE_SIZE)
#define BIG             (2 * MiB)
#define MAX_TABLES      256u
#define HPA             0x80000000ull   /* 2 MiB aligned host memory */
#define EPT_MT          BITS(5, 3)
#define WB              (EPT_RWX | EPT_MT_WB)

struct pages {
	void *live[MAX_TABLES];
	unsigned nlive;
	unsigned allocs, frees;
	int budget;             /* allocations left before failing, -1: no limit */
};

static void *page_alloc(void *ctx)
{
	struct pages *c = ctx;
	void *p;

	if (c->budget == 0)
		return NULL;
	if (c->budget > 0)
		c->budget--;
	assert_true(c->nlive < MAX_TABLES);
	p = aligned_alloc(PAGE_SIZE, PAGE_SIZE);
	assert_non_null(p);
	memset(p, 0, PAGE_SIZE);
	c->live[c->nlive++] = p;
	c->allocs++;
	return p;
}

static bool page_live(const struct pages *c, const void *p)
{
	for (unsigned i = 0; i < c->nlive; i++)
		if (c->live[i] == p)
			return true;
	return false;
}

/* Fails the test on a page that is not live: never allocated, or freed
 * already. */
static void page_free(void *ctx, void *p)
{
	struct pages *c = ctx;

	for (unsigned i = 0; i < c->nlive; i++) {
		if (c->live[i] == p) {
			c->live[i] = c->live[--c->nlive];
			c->frees++;
			free(p);
			return;
		}
	}
	fail_msg("freeing %p, which is not a live table page", p);
}

static void setup(struct ept *e, struct pages *c, int budget)
{
	memset(c, 0, sizeof(*c));
	c->budget = budget;
	*e = (struct ept){ .alloc_page = page_alloc, .free_page = page_free, .ctx = c };
}

static void teardown(struct ept *e, struct pages *c)
{
	ept_destroy(e);
	assert_null(e->pml4);
	assert_int_equal(c->nlive, 0);
	assert_int_equal(c->frees, c->allocs);
}

struct xlate {
	bool present;
	unsigned level;         /* of the leaf: 1 = 2 MiB, 0 = 4 KiB */
	uint64_t hpa;
	uint64_t attr;          /* leaf bits outside the address */
};

/* The walk the CPU does: non-leaf entries must point to a live table and
 * carry exactly RWX (bits 7:3 reserved there); a 2 MiB leaf has bits 20:12
 * clear. */
static struct xlate walk(const struct ept *e, const struct pages *c, uint64_t gpa)
{
	const uint64_t *t = e->pml4;

	for (unsigned level = 3;; level--) {
		uint64_t pte = t[(gpa >> (12 + 9 * level)) & 511];
		uint64_t size = level ? BIG : PG;

		if (!(pte & EPT_RWX))
			return (struct xlate){ .present = false };
		if (level == 0 || (level == 1 && (pte & EPT_LARGE))) {
			if (level)
				assert_int_equal(pte & EPT_ADDR & (BIG - 1), 0);
			return (struct xlate){
				.present = true, .level = level,
				.hpa = (pte & EPT_ADDR) + (gpa & (size - 1)),
				.attr = pte & ~EPT_ADDR,
			};
		}
		assert_int_equal(pte & ~EPT_ADDR, EPT_RWX);
		t = (const uint64_t *)(uintptr_t)(pte & EPT_ADDR);
		assert_true(page_live(c, t));
	}
}

/* [gpa, gpa+size) translates to hpa.. with these leaf attributes. */
static void expect_map(const struct ept *e, const struct pages *c, uint64_t gpa,
		       uint64_t hpa, uint64_t size, uint64_t attr, unsigned level)
{
	for (uint64_t off = 0; off < size; off += PG) {
		struct xlate x = walk(e, c, gpa + off);

		assert_true(x.present);
		assert_int_equal(x.level, level);
		assert_int_equal(x.hpa, hpa + off);
		assert_int_equal(x.attr, attr | (level ? EPT_LARGE : 0));
		/* Inside the page, the offset is kept. */
		assert_int_equal(walk(e, c, gpa + off + 0x123).hpa, hpa + off + 0x123);
	}
}

static void expect_unmapped(const struct ept *e, const struct pages *c, uint64_t gpa,
			    uint64_t size)
{
	for (uint64_t off = 0; off < size; off += PG)
		assert_false(walk(e, c, gpa + off).present);
}

static void test_init_and_pointer(void **state)
{
	struct pages c;
	struct ept e;
	uint64_t eptp;

	setup(&e, &c, -1);
	assert_true(ept_init(&e));
	assert_int_equal(c.allocs, 1);
	assert_int_equal((uintptr_t)e.pml4 % PAGE_SIZE, 0);
	expect_unmapped(&e, &c, 0, 4 * PG);
	eptp = ept_pointer(&e);
	/* Bits 2:0 memory type (6 = WB), 5:3 walk length minus one (3),
	 * 6 A/D flags off, 11:7 reserved, then the PML4 address. */
	assert_int_equal(eptp & 7, 6);
	assert_int_equal((eptp >> 3) & 7, 3);
	assert_int_equal(eptp & 0xfc0, 0);
	assert_int_equal(eptp & ~0xfffull, (uintptr_t)e.pml4);
	assert_int_equal(eptp, (uintptr_t)e.pml4 | 0x1e);
	teardown(&e, &c);
	ept_destroy(&e);                /* a second destroy is harmless */
	assert_int_equal(c.frees, 1);
}

static void test_large_leaves(void **state)
{
	struct pages c;
	struct ept e;

	setup(&e, &c, -1);
	assert_true(ept_init(&e));
	assert_true(ept_map(&e, 0, HPA, 8 * MiB, WB));
	assert_int_equal(c.allocs, 3);                  /* PML4, PDPT, PD: no PT */
	expect_map(&e, &c, 0, HPA, 8 * MiB, WB, 1);
	expect_unmapped(&e, &c, 8 * MiB, BIG);
	/* Other permissions and types go into the leaf as given. */
	assert_true(ept_map(&e, 16 * MiB, 0x40000000, BIG, EPT_R | EPT_X | EPT_MT_UC));
	expect_map(&e, &c, 16 * MiB, 0x40000000, BIG, EPT_R | EPT_X, 1);
	assert_int_equal(FIELD_GET(EPT_MT, walk(&e, &c, 16 * MiB).attr), 0);
	assert_int_equal(FIELD_GET(EPT_MT, walk(&e, &c, 0).attr), 6);
	assert_true(ept_map(&e, 18 * MiB, 0x40200000, BIG, WB | EPT_IGNORE_PAT));
	expect_map(&e, &c, 18 * MiB, 0x40200000, BIG, WB | EPT_IGNORE_PAT, 1);
	assert_int_equal(c.allocs, 3);
	teardown(&e, &c);
}

static void test_small_leaves(void **state)
{
	struct pages c;
	struct ept e;

	setup(&e, &c, -1);
	assert_true(ept_init(&e));
	/* Host address not 2 MiB aligned: 4 KiB leaves only. */
	assert_true(ept_map(&e, BIG, HPA + PG, 4 * MiB, WB));
	assert_int_equal(c.allocs, 5);                  /* + 2 PTs */
	expect_map(&e, &c, BIG, HPA + PG, 4 * MiB, WB, 0);
	expect_unmapped(&e, &c, 0, BIG);
	expect_unmapped(&e, &c, 6 * MiB, BIG);
	/* Guest address not aligned, host aligned. */
	assert_true(ept_map(&e, 8 * MiB + PG, HPA, BIG, WB));
	expect_map(&e, &c, 8 * MiB + PG, HPA, BIG, WB, 0);
	/* Both aligned but less than 2 MiB. */
	assert_true(ept_map(&e, 12 * MiB, HPA, BIG - PG, WB));
	expect_map(&e, &c, 12 * MiB, HPA, BIG - PG, WB, 0);
	expect_unmapped(&e, &c, 14 * MiB - PG, PG);
	/* A partial last page is mapped whole. */
	assert_true(ept_map(&e, 16 * MiB, HPA, 0x1800, WB));
	expect_map(&e, &c, 16 * MiB, HPA, 2 * PG, WB, 0);
	expect_unmapped(&e, &c, 16 * MiB + 2 * PG, PG);
	/* Size 0 maps nothing. */
	assert_true(ept_map(&e, 20 * MiB, HPA, 0, WB));
	expect_unmapped(&e, &c, 20 * MiB, PG);
	teardown(&e, &c);
}

static void test_mixed_leaves(void **state)
{
	struct pages c;
	struct ept e;

	setup(&e, &c, -1);
	assert_true(ept_init(&e));
	/* 4 KiB up to the 2 MiB boundary, 2 MiB leaves, 4 KiB for the rest. */
	assert_true(ept_map(&e, BIG - PG, HPA + BIG - PG, 2 * BIG + 2 * PG, WB));
	expect_map(&e, &c, BIG - PG, HPA + BIG - PG, PG, WB, 0);
	expect_map(&e, &c, BIG, HPA + BIG, 2 * BIG, WB, 1);
	expect_map(&e, &c, 3 * BIG, HPA + 3 * BIG, PG, WB, 0);
	expect_unmapped(&e, &c, BIG - 2 * PG, PG);
	expect_unmapped(&e, &c, 3 * BIG + PG, PG);
	teardown(&e, &c);
}

/* Mappings that cross PML4 (512 GiB) and PDPT (1 GiB) entries. */
static void test_crosses_tables(void **state)
{
	const uint64_t g512 = 512 * GiB;
	struct pages c;
	struct ept e;

	setup(&e, &c, -1);
	assert_true(ept_init(&e));
	assert_true(ept_map(&e, g512 - BIG, HPA, 2 * BIG, WB));
	assert_int_equal(c.allocs, 1 + 2 + 2);
	expect_map(&e, &c, g512 - BIG, HPA, 2 * BIG, WB, 1);
	assert_true(ept_map(&e, GiB - PG, HPA + PG, 2 * PG, WB));
	expect_map(&e, &c, GiB - PG, HPA + PG, 2 * PG, WB, 0);
	/* The top of a 48-bit guest-physical space. */
	assert_true(ept_map(&e, (1ull << 48) - BIG, HPA, BIG, WB));
	expect_map(&e, &c, (1ull << 48) - BIG, HPA, BIG, WB, 1);
	expect_unmapped(&e, &c, 0, PG);
	teardown(&e, &c);
}

static void test_split_large(void **state)
{
	const uint64_t attr = WB | EPT_IGNORE_PAT;
	struct pages c;
	struct ept e;
	struct xlate x;

	setup(&e, &c, -1);
	assert_true(ept_init(&e));
	assert_true(ept_map(&e, 0, HPA, 2 * BIG, attr));
	assert_int_equal(c.allocs, 3);
	/* One page inside the second 2 MiB leaf, elsewhere and uncached. */
	assert_true(ept_map(&e, BIG + PG, 0xfee00000, PG, EPT_RWX | EPT_MT_UC));
	assert_int_equal(c.allocs, 4);
	x = walk(&e, &c, BIG + PG);
	assert_true(x.present);
	assert_int_equal(x.level, 0);
	assert_int_equal(x.hpa, 0xfee00000);
	assert_int_equal(x.attr, EPT_RWX | EPT_MT_UC);
	/* The other 511 pages: same host pages, same attributes, 4 KiB. */
	expect_map(&e, &c, BIG, HPA + BIG, PG, attr, 0);
	expect_map(&e, &c, BIG + 2 * PG, HPA + BIG + 2 * PG, BIG - 2 * PG, attr, 0);
	/* The first leaf is untouched. */
	expect_map(&e, &c, 0, HPA, BIG, attr, 1);
	/* Another page of the split region needs no new table. */
	assert_true(ept_map(&e, 2 * BIG - PG, 0x1000, PG, EPT_R | EPT_MT_WB));
	assert_int_equal(c.allocs, 4);
	expect_map(&e, &c, 2 * BIG - PG, 0x1000, PG, EPT_R | EPT_MT_WB, 0);
	expect_map(&e, &c, BIG + 2 * PG, HPA + BIG + 2 * PG, BIG - 3 * PG, attr, 0);
	/* And back to a 2 MiB leaf over the split one. */
	assert_true(ept_map(&e, BIG, HPA + BIG, BIG, attr));
	expect_map(&e, &c, 0, HPA, 2 * BIG, attr, 1);
	teardown(&e, &c);
}

static void test_split_keeps_permissions(void **state)
{
	struct pages c;
	struct ept e;

	setup(&e, &c, -1);
	assert_true(ept_init(&e));
	assert_true(ept_map(&e, 4 * BIG, HPA, BIG, EPT_R | EPT_X | EPT_MT_UC));
	assert_true(ept_map(&e, 5 * BIG - PG, HPA, PG, WB));
	expect_map(&e, &c, 4 * BIG, HPA, BIG - PG, EPT_R | EPT_X | EPT_MT_UC, 0);
	expect_map(&e, &c, 5 * BIG - PG, HPA, PG, WB, 0);
	teardown(&e, &c);
}

static void test_unmap(void **state)
{
	struct pages c;
	struct ept e;

	setup(&e, &c, -1);
	assert_true(ept_init(&e));
	assert_true(ept_map(&e, 0, HPA, 2 * BIG, WB));
	/* A page inside a 2 MiB leaf: split, that page gone. */
	assert_true(ept_map(&e, 2 * BIG - PG, 0, PG, 0));
	expect_unmapped(&e, &c, 2 * BIG - PG, PG);
	expect_map(&e, &c, BIG, HPA + BIG, BIG - PG, WB, 0);
	/* A whole 2 MiB leaf. */
	assert_true(ept_map(&e, 0, 0, BIG, 0));
	expect_unmapped(&e, &c, 0, BIG);
	/* Mapping one page back where a 2 MiB leaf was unmapped: only it. */
	assert_true(ept_map(&e, 5 * PG, HPA, PG, WB));
	expect_map(&e, &c, 5 * PG, HPA, PG, WB, 0);
	expect_unmapped(&e, &c, 0, 5 * PG);
	expect_unmapped(&e, &c, 6 * PG, BIG - 6 * PG);
	/* Everything. */
	assert_true(ept_map(&e, 0, 0, 2 * BIG, 0));
	expect_unmapped(&e, &c, 0, 2 * BIG);
	/* Unmapping what was never mapped is fine too. */
	assert_true(ept_map(&e, 64 * GiB + PG, 0, PG, 0));
	expect_unmapped(&e, &c, 64 * GiB, BIG);
	teardown(&e, &c);
}

/* Unmapping where nothing is mapped allocates no table (issue 15.1: every
 * APIC base moved to a new hole used to cost a PD and a PT). */
static void test_unmap_allocates_nothing(void **state)
{
	struct pages c;
	struct ept e;

	setup(&e, &c, -1);
	assert_true(ept_init(&e));
	assert_true(ept_map(&e, 64 * GiB + PG, 0, PG, 0));
	assert_true(ept_map(&e, 0xfee00000, 0, PG, 0));
	assert_true(ept_map(&e, 4 * GiB, 0, 2 * BIG, 0));
	assert_int_equal(c.allocs, 1);
	assert_int_equal(e.pages, 1);
	teardown(&e, &c);
}

/* Tables an unmap leaves empty are freed bottom up; tables still holding
 * an entry stay. */
static void test_unmap_prunes(void **state)
{
	struct pages c;
	struct ept e;

	setup(&e, &c, -1);
	assert_true(ept_init(&e));
	assert_true(ept_map(&e, 0, HPA, 2 * BIG, WB));          /* RAM: PDPT, PD */
	assert_int_equal(e.pages, 3);
	assert_true(ept_map(&e, 5 * GiB + 3 * PG, HPA, PG, WB));        /* PD, PT */
	assert_true(ept_map(&e, 5 * GiB + 9 * PG, HPA + PG, PG, WB));
	assert_int_equal(e.pages, 5);
	assert_true(ept_map(&e, 5 * GiB + 3 * PG, 0, PG, 0));
	assert_int_equal(e.pages, 5);                           /* the PT holds another page */
	expect_map(&e, &c, 5 * GiB + 9 * PG, HPA + PG, PG, WB, 0);
	assert_true(ept_map(&e, 5 * GiB + 9 * PG, 0, PG, 0));
	assert_int_equal(e.pages, 3);
	assert_int_equal(c.nlive, 3);
	expect_unmapped(&e, &c, 5 * GiB, BIG);
	expect_map(&e, &c, 0, HPA, 2 * BIG, WB, 1);
	/* A page split out of a RAM leaf and unmapped: the PT keeps the rest. */
	assert_true(ept_map(&e, BIG + PG, 0, PG, 0));
	assert_int_equal(e.pages, 4);
	expect_map(&e, &c, BIG + 2 * PG, HPA + BIG + 2 * PG, PG, WB, 0);
	teardown(&e, &c);
}

/*
 * The APIC page mapped at 1,500 bases in different 2 MiB regions, one
 * after the other (map the new base, unmap the old one): tables are
 * reused or freed, the guest never holds more than one base's worth.
 */
static void x_level_is(const struct ept *e, const struct pages *c, uint64_t gpa,
		       unsigned level)
{
	struct xlate x = walk(e, c, gpa);

	assert_true(x.present);
	assert_int_equal(x.level, level);
}

static void test_relocation_storm(void **state)
{
	uint64_t old = 0;
	struct pages c;
	struct ept e;

	setup(&e, &c, -1);
	assert_true(ept_init(&e));
	assert_true(ept_map(&e, 0, HPA, BIG, WB));
	for (unsigned i = 0; i < 1500; i++) {
		uint64_t base = 4 * GiB + (uint64_t)i * BIG;

		assert_true(ept_map(&e, base, HPA + BIG, PG, EPT_RWX | EPT_MT_UC));
		if (old)
			assert_true(ept_map(&e, old, 0, PG, 0));
		old = base;
		assert_true(e.pages <= 3 + 3);
	}
	assert_true(ept_map(&e, old, 0, PG, 0));
	assert_int_equal(e.pages, 3);
	assert_int_equal(c.nlive, 3);
	teardown(&e, &c);
}

/*
 * Issue 23.3: an APIC base moved into guest RAM splits a 2 MiB leaf; moved
 * out, the page maps RAM again and the table goes back to a 2 MiB leaf.
 * So 10^5 moves over 1 GiB of RAM hold one split table at most (the
 * current base), where before every region touched kept its table
 * ("out of EPT tables for APIC pages").
 */
static void test_remerge_after_split(void **state)
{
	const uint64_t ram = 1 * GiB;
	uint64_t old = ~0ull, seed = 0x2545f4914f6cdd1dull;
	struct pages c;
	struct ept e;
	unsigned held;

	setup(&e, &c, -1);
	assert_true(ept_init(&e));
	assert_true(ept_map(&e, 0, HPA, ram, WB));
	held = e.pages;
	assert_true(ept_map(&e, BIG + PG, 0xfee00000, PG, EPT_RWX | EPT_MT_UC));
	assert_int_equal(e.pages, held + 1);
	assert_true(ept_map(&e, BIG + PG, HPA + BIG + PG, PG, WB));
	assert_int_equal(e.pages, held);
	expect_map(&e, &c, BIG, HPA + BIG, BIG, WB, 1);
	for (unsigned i = 0; i < 100000; i++) {
		uint64_t gpa;

		seed ^= seed << 13;
		seed ^= seed >> 7;
		seed ^= seed << 17;
		gpa = (seed % ram) & ~(PG - 1);
		assert_true(ept_map(&e, gpa, 0xfee00000, PG, EPT_RWX | EPT_MT_UC));
		if (old != ~0ull && old != gpa)
			assert_true(ept_map(&e, old, HPA + old, PG, WB));
		old = gpa;
		assert_true(e.pages <= held + 1);
	}
	assert_true(ept_map(&e, old, HPA + old, PG, WB));
	assert_int_equal(e.pages, held);
	expect_map(&e, &c, 0, HPA, ram, WB, 1);
	teardown(&e, &c);
}

/* A CPU without 2 MiB EPT pages (IA32_VMX_EPT_VPID_CAP[16] clear, issue
 * 22.5; SDM Vol. 3C, "EPT Translation Mechanism": a PDE with bit 7 set is
 * then a misconfiguration): aligned RAM gets 4 KiB leaves, and a table
 * that could merge back stays a table. */
static void test_small_only(void **state)
{
	struct pages c;
	struct ept e;
	unsigned held;

	setup(&e, &c, -1);
	e.small_only = true;
	assert_true(ept_init(&e));
	assert_true(ept_map(&e, 0, HPA, 4 * MiB, WB));
	expect_map(&e, &c, 0, HPA, 4 * MiB, WB, 0);
	held = e.pages;
	assert_true(ept_map(&e, BIG + PG, 0xfee00000, PG, EPT_RWX | EPT_MT_UC));
	assert_true(ept_map(&e, BIG + PG, HPA + BIG + PG, PG, WB));
	assert_int_equal(e.pages, held);
	expect_map(&e, &c, 0, HPA, 4 * MiB, WB, 0);
	teardown(&e, &c);
}

/* Only a table mapping one aligned 2 MiB host range in order with one set
 * of attributes merges: RAM mapped from an unaligned host address stays
 * 4 KiB pages, and so does a table where one page still differs. */
static void test_no_false_merge(void **state)
{
	struct pages c;
	struct ept e;

	setup(&e, &c, -1);
	assert_true(ept_init(&e));
	assert_true(ept_map(&e, 0, HPA + PG, BIG, WB));
	assert_true(ept_map(&e, PG, 0xfee00000, PG, EPT_RWX | EPT_MT_UC));
	assert_true(ept_map(&e, PG, HPA + 2 * PG, PG, WB));
	expect_map(&e, &c, 0, HPA + PG, BIG, WB, 0);
	assert_true(ept_map(&e, BIG, HPA + BIG, BIG, WB));
	assert_true(ept_map(&e, BIG, 0xfee00000, PG, EPT_RWX | EPT_MT_UC));
	assert_true(ept_map(&e, BIG + PG, 0xfec00000, PG, EPT_RWX | EPT_MT_UC));
	assert_true(ept_map(&e, BIG, HPA + BIG, PG, WB));
	x_level_is(&e, &c, BIG, 0);
	assert_true(ept_map(&e, BIG + PG, HPA + BIG + PG, PG, WB | EPT_IGNORE_PAT));
	x_level_is(&e, &c, BIG, 0);
	assert_true(ept_map(&e, BIG + PG, HPA + BIG + PG, PG, WB));
	expect_map(&e, &c, BIG, HPA + BIG, BIG, WB, 1);
	teardown(&e, &c);
}

/* A 2 MiB leaf (or unmap) over a range mapped with 4 KiB leaves replaces
 * the page table: it is freed then, not leaked until ept_destroy. */
static void test_large_over_small(void **state)
{
	struct pages c;
	struct ept e;

	setup(&e, &c, -1);
	assert_true(ept_init(&e));
	assert_true(ept_map(&e, 0, HPA + PG, BIG, WB));
	assert_int_equal(c.allocs, 4);
	assert_true(ept_map(&e, 0, HPA, BIG, WB | EPT_IGNORE_PAT));
	expect_map(&e, &c, 0, HPA, BIG, WB | EPT_IGNORE_PAT, 1);
	assert_int_equal(c.frees, 1);
	assert_int_equal(c.nlive, 3);
	/* Split it again, then unmap all 2 MiB at once. */
	assert_true(ept_map(&e, PG, HPA, PG, WB));
	assert_int_equal(c.nlive, 4);
	assert_true(ept_map(&e, 0, 0, BIG, 0));
	expect_unmapped(&e, &c, 0, BIG);
	/* The PT, and the PD and PDPT left empty by it: only the PML4. */
	assert_int_equal(c.nlive, 1);
	teardown(&e, &c);
}

/* The series of maps used by the failure and destroy tests. */
static bool build_complex(struct ept *e)
{
	return ept_map(e, 0, HPA, 64 * MiB, WB) &&
	       ept_map(e, 0xfee00000, 0x7000, PG, EPT_RWX | EPT_MT_UC) &&
	       ept_map(e, 3 * MiB, 0, PG, 0) &&
	       ept_map(e, 512 * GiB - PG, HPA + PG, 3 * BIG, WB) &&
	       ept_map(e, 7 * GiB, HPA, 4 * BIG, EPT_R) &&
	       ept_map(e, 7 * GiB + BIG, HPA + PG, PG, WB) &&
	       ept_map(e, 7 * GiB, HPA, BIG, 0) &&
	       ept_map(e, 7 * GiB + BIG, HPA + BIG, BIG, EPT_R);
}

static void test_alloc_failure(void **state)
{
	struct pages c;
	struct ept e;

	setup(&e, &c, 0);
	assert_false(ept_init(&e));
	assert_null(e.pml4);
	teardown(&e, &c);

	/* PDPT, PD, PT missing in turn: false, and nothing half-built that
	 * translates. */
	for (int budget = 1; budget <= 3; budget++) {
		setup(&e, &c, budget);
		assert_true(ept_init(&e));
		assert_false(ept_map(&e, 0, HPA + PG, PG, WB));
		expect_unmapped(&e, &c, 0, PG);
		teardown(&e, &c);
	}

	/* A split that cannot get its table leaves the 2 MiB leaf intact. */
	setup(&e, &c, 3);
	assert_true(ept_init(&e));
	assert_true(ept_map(&e, 0, HPA, BIG, WB));
	assert_false(ept_map(&e, PG, 0x5000, PG, EPT_RWX | EPT_MT_UC));
	expect_map(&e, &c, 0, HPA, BIG, WB, 1);
	assert_false(ept_map(&e, PG, 0, PG, 0));
	expect_map(&e, &c, 0, HPA, BIG, WB, 1);
	teardown(&e, &c);
}

/* Running out at every possible point of a long build: false, never a
 * crash, and destroy still frees every page exactly once. */
static void test_alloc_failure_everywhere(void **state)
{
	struct pages c;
	struct ept e;
	unsigned needed;

	setup(&e, &c, -1);
	assert_true(ept_init(&e));
	assert_true(build_complex(&e));
	needed = c.allocs;
	teardown(&e, &c);
	assert_true(needed > 10);

	for (unsigned budget = 1; budget < needed; budget++) {
		setup(&e, &c, (int)budget);
		assert_true(ept_init(&e));
		assert_false(build_complex(&e));
		assert_int_equal(c.allocs, budget);
		teardown(&e, &c);
	}
}

static void test_destroy_frees_each_once(void **state)
{
	struct pages c;
	struct ept e;

	setup(&e, &c, -1);
	assert_true(ept_init(&e));
	assert_true(build_complex(&e));
	expect_map(&e, &c, 0, HPA, BIG, WB, 1);
	expect_map(&e, &c, BIG, HPA + BIG, MiB, WB, 0);
	expect_unmapped(&e, &c, 3 * MiB, PG);
	expect_map(&e, &c, 3 * MiB + PG, HPA + 3 * MiB + PG, MiB - PG, WB, 0);
	expect_map(&e, &c, 4 * MiB, HPA + 4 * MiB, 60 * MiB, WB, 1);
	expect_map(&e, &c, 0xfee00000, 0x7000, PG, EPT_RWX | EPT_MT_UC, 0);
	expect_map(&e, &c, 512 * GiB - PG, HPA + PG, 3 * BIG, WB, 0);
	expect_unmapped(&e, &c, 7 * GiB, BIG);
	expect_map(&e, &c, 7 * GiB + BIG, HPA + BIG, BIG, EPT_R, 1);
	expect_map(&e, &c, 7 * GiB + 2 * BIG, HPA + 2 * BIG, 2 * BIG, EPT_R, 1);
	/* page_free fails on a page freed twice or never allocated. */
	teardown(&e, &c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init_and_pointer),
		cmocka_unit_test(test_large_leaves),
		cmocka_unit_test(test_small_leaves),
		cmocka_unit_test(test_small_only),
		cmocka_unit_test(test_mixed_leaves),
		cmocka_unit_test(test_crosses_tables),
		cmocka_unit_test(test_split_large),
		cmocka_unit_test(test_split_keeps_permissions),
		cmocka_unit_test(test_unmap),
		cmocka_unit_test(test_unmap_allocates_nothing),
		cmocka_unit_test(test_unmap_prunes),
		cmocka_unit_test(test_relocation_storm),
		cmocka_unit_test(test_large_over_small),
		cmocka_unit_test(test_remerge_after_split),
		cmocka_unit_test(test_no_false_merge),
		cmocka_unit_test(test_alloc_failure),
		cmocka_unit_test(test_alloc_failure_everywhere),
		cmocka_unit_test(test_destroy_frees_each_once),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
