// SPDX-License-Identifier: BSD-2-Clause
/*
 * vmm/host/pool.c: the physical memory pool (sorted free ranges, first fit with
 * alignment, merge on free). Addresses are plain numbers here: nothing is
 * dereferenced. Ends with a randomized run against a page bitmap model.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/host/pool.h"

#define PG      ((uint64_t)PAGE_SIZE)

static struct pool pool;        /* 4 KiB: keep it off the stack */

/* The pool is exactly these ranges (base, end pairs) and counts them. */
static void expect_ranges(const struct pool *p, const uint64_t *be, uint32_t n)
{
	uint64_t sum = 0;

	assert_int_equal(p->n, n);
	for (uint32_t i = 0; i < n; i++) {
		assert_int_equal(p->r[i].base, be[2 * i]);
		assert_int_equal(p->r[i].end, be[2 * i + 1]);
		sum += be[2 * i + 1] - be[2 * i];
	}
	assert_int_equal(p->free_bytes, sum);
}

#define EXPECT(p, ...) do {                                             \
	static const uint64_t be_[] = { __VA_ARGS__ };                  \
	expect_ranges((p), be_, ARRAY_SIZE(be_) / 2);                   \
} while (0)

/* Sorted, page aligned, non-empty, never adjacent (always merged). */
static void check_invariants(const struct pool *p)
{
	uint64_t sum = 0;

	for (uint32_t i = 0; i < p->n; i++) {
		assert_true(p->r[i].base < p->r[i].end);
		assert_int_equal(p->r[i].base % PG, 0);
		assert_int_equal(p->r[i].end % PG, 0);
		if (i)
			assert_true(p->r[i - 1].end < p->r[i].base);
		sum += p->r[i].end - p->r[i].base;
	}
	assert_int_equal(p->free_bytes, sum);
}

static void test_add_rounds_inward(void **state)
{
	struct pool *p = &pool;

	pool_init(p);
	assert_int_equal(p->n, 0);
	assert_int_equal(p->free_bytes, 0);
	assert_int_equal(p->dropped_bytes, 0);
	pool_add(p, 0x1001, 0x3000);                    /* [0x1001, 0x4001) */
	EXPECT(p, 0x2000, 0x4000);
	pool_add(p, 0x10000, 0xfff);                    /* less than a page */
	pool_add(p, 0x20800, 0x1000);                   /* a page, but straddling */
	pool_add(p, 0x30000, 0);
	EXPECT(p, 0x2000, 0x4000);
	pool_add(p, 0x40000, 0x1000);
	EXPECT(p, 0x2000, 0x4000, 0x40000, 0x41000);
	check_invariants(p);
}

static void test_add_top_of_address_space(void **state)
{
	struct pool *p = &pool;

	/* base + size wraps: the end saturates, then rounds down. */
	pool_init(p);
	pool_add(p, 0xfffffffffff00000ull, UINT64_MAX);
	EXPECT(p, 0xfffffffffff00000ull, 0xfffffffffffff000ull);
	/* A range inside the last page rounds to nothing (its base must not
	 * wrap to 0 and claim the whole address space). */
	pool_init(p);
	pool_add(p, 0xfffffffffffff800ull, 0x100);
	pool_add(p, 0xfffffffffffff001ull, UINT64_MAX);
	EXPECT(p);
	assert_int_equal(pool_largest(p), 0);
}

static void test_add_merges(void **state)
{
	struct pool *p = &pool;

	pool_init(p);
	pool_add(p, 0x10000, 0x2000);
	pool_add(p, 0x12000, 0x2000);                   /* adjacent above */
	EXPECT(p, 0x10000, 0x14000);
	pool_add(p, 0xe000, 0x2000);                    /* adjacent below */
	EXPECT(p, 0xe000, 0x14000);
	pool_add(p, 0x20000, 0x1000);
	pool_add(p, 0x18000, 0x1000);
	EXPECT(p, 0xe000, 0x14000, 0x18000, 0x19000, 0x20000, 0x21000);
	pool_add(p, 0x14000, 0x4000);                   /* fills a gap exactly */
	EXPECT(p, 0xe000, 0x19000, 0x20000, 0x21000);
	pool_add(p, 0x19000, 0x7000);
	EXPECT(p, 0xe000, 0x21000);
	check_invariants(p);
}

static void test_add_overlaps_counted_once(void **state)
{
	struct pool *p = &pool;

	pool_init(p);
	pool_add(p, 0x1000, 0x4000);
	pool_add(p, 0x3000, 0x5000);                    /* overlaps the top */
	EXPECT(p, 0x1000, 0x8000);
	pool_add(p, 0x0, 0x2000);                       /* overlaps the bottom */
	EXPECT(p, 0x0, 0x8000);
	pool_add(p, 0x2000, 0x1000);                    /* inside */
	pool_add(p, 0x0, 0x8000);                       /* the same again */
	EXPECT(p, 0x0, 0x8000);

	/* A superset of several ranges and the gaps between them. */
	pool_init(p);
	pool_add(p, 0x11000, 0x1000);
	pool_add(p, 0x13000, 0x2000);
	pool_add(p, 0x17000, 0x1000);
	EXPECT(p, 0x11000, 0x12000, 0x13000, 0x15000, 0x17000, 0x18000);
	pool_add(p, 0x10000, 0xa000);
	EXPECT(p, 0x10000, 0x1a000);
	/* Overlapping two ranges and one gap, leaving another gap. */
	pool_add(p, 0x30000, 0x2000);
	pool_add(p, 0x34000, 0x2000);
	pool_add(p, 0x38000, 0x2000);
	pool_add(p, 0x31000, 0x4000);                   /* [0x31000, 0x35000) */
	EXPECT(p, 0x10000, 0x1a000, 0x30000, 0x36000, 0x38000, 0x3a000);
	check_invariants(p);
}

static void test_alloc_first_fit(void **state)
{
	struct pool *p = &pool;

	pool_init(p);
	pool_add(p, 0x100000, 0x4000);
	pool_add(p, 0x200000, 0x600000);
	assert_int_equal(pool_alloc(p, PG, PG, 0), 0x100000);                 /* tail kept */
	EXPECT(p, 0x101000, 0x104000, 0x200000, 0x800000);
	assert_int_equal(pool_alloc(p, 0x1001, 0, 0), 0x101000);              /* 2 pages */
	EXPECT(p, 0x103000, 0x104000, 0x200000, 0x800000);
	assert_int_equal(pool_alloc(p, 0x2000, PG, 0), 0x200000);             /* too big for the first */
	EXPECT(p, 0x103000, 0x104000, 0x202000, 0x800000);
	assert_int_equal(pool_alloc(p, 1, PG, 0), 0x103000);                  /* exact fit: gone */
	EXPECT(p, 0x202000, 0x800000);
	/* Alignments below a page, 0 included, mean a page. */
	assert_int_equal(pool_alloc(p, PG, 16, 0), 0x202000);
	assert_int_equal(pool_alloc(p, PG, 0, 0), 0x203000);
	EXPECT(p, 0x204000, 0x800000);
	check_invariants(p);
}

static void test_alloc_2m_aligned(void **state)
{
	struct pool *p = &pool;

	pool_init(p);
	pool_add(p, 0x101000, 0x900000 - 0x101000);
	/* Split in three: head below the aligned block, tail above it. */
	assert_int_equal(pool_alloc(p, 2 * MiB, 2 * MiB, 0), 0x200000);
	EXPECT(p, 0x101000, 0x200000, 0x400000, 0x900000);
	assert_int_equal(pool_alloc(p, 0x100000, 2 * MiB, 0x500000), 0x600000);
	EXPECT(p, 0x101000, 0x200000, 0x400000, 0x600000, 0x700000, 0x900000);
	/* Head only: the block ends where the range does. */
	assert_int_equal(pool_alloc(p, 0x100000, 2 * MiB, 0x700000), 0x800000);
	EXPECT(p, 0x101000, 0x200000, 0x400000, 0x600000, 0x700000, 0x800000);
	/* Tail only: the range starts aligned. */
	assert_int_equal(pool_alloc(p, PG, 2 * MiB, 0), 0x400000);
	EXPECT(p, 0x101000, 0x200000, 0x401000, 0x600000, 0x700000, 0x800000);
	/* Nothing 2 MiB aligned is left with 2 MiB free. */
	assert_int_equal(pool_alloc(p, 2 * MiB, 2 * MiB, 0), 0);
	assert_int_equal(pool_alloc(p, PG, 2 * MiB, 0), 0);
	/* 64 KiB alignment lands inside the first range. */
	assert_int_equal(pool_alloc(p, PG, 64 * KiB, 0), 0x110000);
	check_invariants(p);
	assert_int_equal(p->free_bytes, 0xff000 - 0x1000 + 0x1ff000 + 0x100000);
}

static void test_alloc_min(void **state)
{
	struct pool *p = &pool;

	pool_init(p);
	pool_add(p, 0x100000, 0x100000);
	pool_add(p, 0x400000, 0x400000);
	assert_int_equal(pool_alloc(p, PG, PG, 0x500000), 0x500000);
	EXPECT(p, 0x100000, 0x200000, 0x400000, 0x500000, 0x501000, 0x800000);
	/* An unaligned min is rounded up to the alignment. */
	assert_int_equal(pool_alloc(p, PG, PG, 0x500001), 0x501000);
	assert_int_equal(pool_alloc(p, PG, 0x10000, 0x500001), 0x510000);
	/* min in a gap: the next range. */
	assert_int_equal(pool_alloc(p, PG, PG, 0x300000), 0x400000);
	/* min below everything is the same as 0. */
	assert_int_equal(pool_alloc(p, PG, PG, 0x1000), 0x100000);
	/* The block must fit entirely above min. */
	assert_int_equal(pool_alloc(p, 0x2000, PG, 0x7ff000), 0);
	assert_int_equal(pool_alloc(p, PG, PG, 0x800000), 0);
	assert_int_equal(pool_alloc(p, PG, PG, UINT64_MAX - 10), 0);   /* no wrap */
	assert_int_equal(pool_alloc(p, PG, PG, 0x7ff000), 0x7ff000);
	check_invariants(p);
}

static void test_alloc_failures(void **state)
{
	struct pool *p = &pool;

	pool_init(p);
	pool_add(p, 0x100000, 0x10000);
	pool_add(p, 0x200000, 0x20000);
	assert_int_equal(pool_alloc(p, 0x21000, PG, 0), 0);             /* too big */
	assert_int_equal(pool_alloc(p, 0, PG, 0), 0);                   /* empty */
	assert_int_equal(pool_alloc(p, PG, 3 * PG, 0), 0);              /* not a power of two */
	assert_int_equal(pool_alloc(p, PG, PG + 1, 0), 0);
	assert_int_equal(pool_alloc(p, UINT64_MAX, PG, 0), 0);          /* rounds up to 0 */
	assert_int_equal(pool_alloc(p, UINT64_MAX - PG, PG, 0), 0);
	assert_int_equal(pool_alloc(p, PG, 1ull << 63, 0), 0);
	EXPECT(p, 0x100000, 0x110000, 0x200000, 0x220000);
	assert_int_equal(pool_alloc(p, 0x20000, PG, 0), 0x200000);
	EXPECT(p, 0x100000, 0x110000);

	pool_init(p);
	assert_int_equal(pool_alloc(p, PG, PG, 0), 0);
	assert_int_equal(pool_largest(p), 0);
}

static void test_free_merges_back(void **state)
{
	struct pool *p = &pool;
	uint64_t a[6];

	pool_init(p);
	pool_add(p, 0x101000, 0x3ff000);                /* [0x101000, 0x500000) */
	pool_add(p, 0x600000, 0x100000);
	a[0] = pool_alloc(p, PG, PG, 0);
	a[1] = pool_alloc(p, 2 * MiB, 2 * MiB, 0);
	a[2] = pool_alloc(p, 0x1800, PG, 0);            /* freed with the same size */
	a[3] = pool_alloc(p, 0x10000, 0x10000, 0x600000);
	a[4] = pool_alloc(p, PG, PG, 0x6ff000);
	a[5] = pool_alloc(p, PG, PG, 0);
	for (int i = 0; i < 6; i++)
		assert_int_not_equal(a[i], 0);
	assert_int_equal(a[1], 0x200000);
	check_invariants(p);
	/* Free in an order that exercises joining both neighbours. */
	pool_free(p, a[1], 2 * MiB);
	pool_free(p, a[5], PG);
	pool_free(p, a[0], PG);
	pool_free(p, a[3], 0x10000);
	check_invariants(p);
	pool_free(p, a[4], PG);
	pool_free(p, a[2], 0x1800);
	EXPECT(p, 0x101000, 0x500000, 0x600000, 0x700000);
	/* Size 0 frees nothing. */
	pool_free(p, 0x800000, 0);
	EXPECT(p, 0x101000, 0x500000, 0x600000, 0x700000);
	assert_int_equal(p->dropped_bytes, 0);
}

/* POOL_MAX_RANGES separate ranges: page 1..3 of every 64 KiB block. */
static void fill_table(struct pool *p)
{
	pool_init(p);
	for (uint64_t i = 0; i < POOL_MAX_RANGES; i++)
		pool_add(p, 0x1000000 + i * 0x10000 + PG, 3 * PG);
	assert_int_equal(p->n, POOL_MAX_RANGES);
	assert_int_equal(p->free_bytes, POOL_MAX_RANGES * 3 * PG);
	assert_int_equal(p->dropped_bytes, 0);
}

static void test_table_full(void **state)
{
	struct pool *p = &pool;
	const uint64_t top = 0x1000000 + POOL_MAX_RANGES * 0x10000;

	fill_table(p);
	/* One more separate range does not fit: counted as dropped. */
	pool_add(p, top + 0x10000, 2 * PG);
	pool_add(p, 0x100000, PG);
	assert_int_equal(p->n, POOL_MAX_RANGES);
	assert_int_equal(p->free_bytes, POOL_MAX_RANGES * 3 * PG);
	assert_int_equal(p->dropped_bytes, 3 * PG);
	/* Growing an existing range needs no slot. */
	pool_add(p, 0x1000000, PG);
	pool_add(p, 0x1000000 + 4 * PG, PG);
	assert_int_equal(p->n, POOL_MAX_RANGES);
	assert_int_equal(p->free_bytes, (POOL_MAX_RANGES * 3 + 2) * PG);
	assert_int_equal(p->dropped_bytes, 3 * PG);
	check_invariants(p);
}

static void test_alloc_when_table_full(void **state)
{
	struct pool *p = &pool;
	uint64_t a;

	fill_table(p);
	/* 8 KiB alignment puts one page in the middle of every range: a
	 * three-way split, which needs a slot there is not. */
	assert_int_equal(pool_alloc(p, PG, 2 * PG, 0), 0);
	assert_int_equal(p->n, POOL_MAX_RANGES);
	assert_int_equal(p->free_bytes, POOL_MAX_RANGES * 3 * PG);
	/* Head-only and tail-only splits still work. */
	a = pool_alloc(p, 2 * PG, 2 * PG, 0);
	assert_int_equal(a, 0x1000000 + 2 * PG);
	a = pool_alloc(p, PG, PG, 0);
	assert_int_equal(a, 0x1000000 + PG);
	assert_int_equal(p->n, POOL_MAX_RANGES - 1);
	/* Now the middle page of the second range can be split off. */
	a = pool_alloc(p, PG, 2 * PG, 0);
	assert_int_equal(a, 0x1010000 + 2 * PG);
	assert_int_equal(p->n, POOL_MAX_RANGES);
	/* Freeing it merges with both neighbours: no slot needed. */
	pool_free(p, a, PG);
	assert_int_equal(p->n, POOL_MAX_RANGES - 1);
	check_invariants(p);
	assert_int_equal(p->dropped_bytes, 0);
}

static void test_free_when_table_full(void **state)
{
	struct pool *p = &pool;
	const uint64_t top = 0x1000000 + POOL_MAX_RANGES * 0x10000;
	uint64_t a;

	fill_table(p);
	a = pool_alloc(p, 3 * PG, PG, 0);               /* exact fit: frees a slot */
	assert_int_equal(a, 0x1000000 + PG);
	assert_int_equal(p->n, POOL_MAX_RANGES - 1);
	pool_add(p, top + 0x10000, PG);                 /* takes it */
	assert_int_equal(p->n, POOL_MAX_RANGES);
	/* The block touches no free range and there is no slot: dropped,
	 * and counted as such rather than silently lost. */
	pool_free(p, a, 3 * PG);
	assert_int_equal(p->n, POOL_MAX_RANGES);
	assert_int_equal(p->dropped_bytes, 3 * PG);
	assert_int_equal(p->free_bytes, (POOL_MAX_RANGES * 3 - 3 + 1) * PG);
	assert_int_equal(p->r[0].base, 0x1010000 + PG);
	check_invariants(p);
}

/* A larger table handed in: the ranges move over, the table the pool
 * no longer uses comes back to the caller, and more ranges fit. */
static void test_set_table(void **state)
{
	struct pool *p = &pool;
	struct pool_range *t1 = calloc(2 * POOL_MAX_RANGES, sizeof(*t1));
	struct pool_range *t2 = calloc(4 * POOL_MAX_RANGES, sizeof(*t2));
	const uint64_t top = 0x1000000 + POOL_MAX_RANGES * 0x10000;

	assert_non_null(t1);
	assert_non_null(t2);
	fill_table(p);
	assert_true(pool_needs_table(p));
	assert_ptr_equal(pool_set_table(p, t1, POOL_MAX_RANGES), t1);   /* too small: refused */
	assert_null(pool_set_table(p, t1, 2 * POOL_MAX_RANGES));         /* was first[] */
	assert_false(pool_needs_table(p));
	check_invariants(p);
	assert_int_equal(p->r[0].base, 0x1000000 + PG);
	/* The range that was dropped with the pool's own table now fits. */
	pool_add(p, top + 0x10000, 2 * PG);
	assert_int_equal(p->n, POOL_MAX_RANGES + 1);
	assert_int_equal(p->dropped_bytes, 0);
	assert_ptr_equal(pool_set_table(p, t2, 4 * POOL_MAX_RANGES), t1);
	free(t1);
	check_invariants(p);
	assert_int_equal(p->free_bytes, (POOL_MAX_RANGES * 3 + 2) * PG);
	pool_init(p);
	free(t2);
}

/* The owner's side (vmm/host/mem.c): a table twice as large whenever few
 * slots are left. Host memory here; mem.c takes it from the pool. */
static void owner_reserve(struct pool *p)
{
	struct pool_range *t, *old;

	if (!pool_needs_table(p))
		return;
	t = calloc(2 * (size_t)p->cap, sizeof(*t));
	assert_non_null(t);
	old = pool_set_table(p, t, 2 * p->cap);
	free(old);
}

/*
 * Issue 15.1: 1,500 single pages allocated in a row (a guest's EPT tables)
 * and freed in another order (ept_destroy goes by guest address). Every
 * other page freed first leaves 750 separate ranges: more than the 256 of
 * a fixed table, which dropped the frees beyond it for good (and with
 * them, later, the 2 MiB-aligned blocks guests need). With the owner
 * growing the table, nothing is dropped and the pool ends as it began.
 */
static void test_out_of_order_frees_keep_memory(void **state)
{
	static uint64_t a[1500];
	struct pool *p = &pool;
	const uint32_t n = ARRAY_SIZE(a);

	pool_init(p);
	pool_add(p, 0x100000, 64 * MiB);
	for (uint32_t i = 0; i < n; i++) {
		a[i] = pool_alloc(p, PG, PG, 0);
		assert_int_not_equal(a[i], 0);
		owner_reserve(p);
	}
	for (uint32_t i = 0; i < n; i += 2) {           /* every other page */
		pool_free(p, a[i], PG);
		owner_reserve(p);
	}
	assert_int_equal(p->n, n / 2 + 1);
	assert_true(p->n > POOL_MAX_RANGES);
	assert_int_equal(p->dropped_bytes, 0);
	check_invariants(p);
	for (uint32_t i = 0; i < n / 2; i++) {          /* the rest, scattered */
		pool_free(p, a[1 + 2 * (i * 577 % (n / 2))], PG);
		owner_reserve(p);
	}
	assert_int_equal(p->dropped_bytes, 0);
	EXPECT(p, 0x100000, 0x100000 + 64 * MiB);
	/* and a 64 MiB, 2 MiB-aligned block is there again */
	assert_int_equal(pool_alloc(p, 62 * MiB, 2 * MiB, 0), 0x200000);
	free(p->r == p->first ? NULL : p->r);
	pool_init(p);
}

static void test_largest(void **state)
{
	struct pool *p = &pool;

	pool_init(p);
	assert_int_equal(pool_largest(p), 0);
	pool_add(p, 0x100000, 0x3000);
	assert_int_equal(pool_largest(p), 0x3000);
	pool_add(p, 0x200000, 0x8000);
	pool_add(p, 0x300000, 0x1000);
	assert_int_equal(pool_largest(p), 0x8000);
	assert_int_equal(pool_alloc(p, 0x6000, PG, 0), 0x200000);
	assert_int_equal(pool_largest(p), 0x3000);
	pool_add(p, 0x103000, 0x1000);
	assert_int_equal(pool_largest(p), 0x4000);
}

/*
 * Randomized run against a model: one state per page of a 8 MiB window.
 * After every operation the pool's ranges are exactly the model's maximal
 * free runs; while the range table has room, an allocation returns
 * exactly the lowest aligned address at or above min with enough free
 * pages (first fit), and 0 only when there is none. Phases of many small
 * scattered blocks fill the range table, so allocations that cannot split
 * and frees that are dropped are exercised as well.
 */
#define M_BASE  0x40000000ull
#define M_PAGES 2048u
#define M_LIVE  600u
#define M_OPS   100000u

enum { PG_HOLE, PG_FREE, PG_USED };

struct model {
	uint8_t pg[M_PAGES];
	uint32_t runs[M_PAGES + 1];      /* free pages starting at each page */
	struct { uint64_t base, size; } live[M_LIVE];
	uint32_t nlive;
	uint32_t max_live;      /* phase: few large blocks or many small ones */
	unsigned full;          /* allocations tried with the range table full */
	uint32_t max_n;         /* most ranges seen */
	uint64_t s;
};

static struct model m;

static uint64_t rng(void)
{
	m.s ^= m.s << 13;
	m.s ^= m.s >> 7;
	m.s ^= m.s << 17;
	return m.s;
}

static uint32_t page_of(uint64_t a)
{
	return (uint32_t)((a - M_BASE) / PG);
}

static void model_mark(uint64_t base, uint64_t size, uint8_t st)
{
	for (uint64_t a = base; a < base + size; a += PG)
		m.pg[page_of(a)] = st;
}

/* Pool ranges == maximal free runs of the model. */
static void model_compare(const struct pool *p)
{
	uint32_t i = 0, r = 0;
	uint64_t free = 0;

	check_invariants(p);
	while (i < M_PAGES) {
		uint32_t j = i;

		if (m.pg[i] != PG_FREE) {
			i++;
			continue;
		}
		while (j < M_PAGES && m.pg[j] == PG_FREE)
			j++;
		assert_true(r < p->n);
		assert_int_equal(p->r[r].base, M_BASE + i * PG);
		assert_int_equal(p->r[r].end, M_BASE + j * PG);
		free += (j - i) * PG;
		r++;
		i = j;
	}
	assert_int_equal(r, p->n);
	assert_int_equal(p->free_bytes, free);
}

/* Lowest aligned address >= min with `pages` free pages, 0 if none. */
static uint64_t model_first_fit(uint32_t pages, uint64_t align, uint64_t min)
{
	m.runs[M_PAGES] = 0;
	for (uint32_t i = M_PAGES; i-- > 0;)
		m.runs[i] = m.pg[i] == PG_FREE ? m.runs[i + 1] + 1 : 0;
	for (uint64_t a = ALIGN_UP(MAX(min, M_BASE), align); a < M_BASE + M_PAGES * PG; a += align)
		if (m.runs[page_of(a)] >= pages)
			return a;
	return 0;
}

static void model_alloc(struct pool *p)
{
	uint64_t pages = m.max_live > 64 ? 1 + rng() % 3 :
			 rng() % 8 == 0 ? 1 + rng() % 600 : 1 + rng() % 24;
	uint64_t size = pages * PG - (rng() % 2 ? rng() % PG : 0);
	uint64_t align = PG << (rng() % 4 == 0 ? rng() % 10 : 0);       /* up to 2 MiB */
	/* Scattered small blocks fragment the pool until the table fills. */
	uint64_t min = rng() % 4 == 0 || m.max_live > 64 ? M_BASE + rng() % (M_PAGES * PG) : 0;
	bool room = p->n < POOL_MAX_RANGES;
	uint64_t want = model_first_fit((uint32_t)pages, align, min);
	uint64_t a = pool_alloc(p, size, align, min);

	if (room)
		assert_int_equal(a, want);
	else
		m.full++;
	if (!a)
		return;
	assert_int_equal(a % align, 0);
	assert_true(a >= min);
	assert_true(a >= M_BASE && a + pages * PG <= M_BASE + M_PAGES * PG);
	for (uint64_t i = 0; i < pages; i++)            /* inside added memory, no overlap */
		assert_int_equal(m.pg[page_of(a) + i], PG_FREE);
	model_mark(a, pages * PG, PG_USED);
	m.live[m.nlive].base = a;
	m.live[m.nlive].size = size;
	m.nlive++;
}

static void model_free(struct pool *p)
{
	uint32_t k = (uint32_t)(rng() % m.nlive);
	uint64_t dropped = p->dropped_bytes, size = ALIGN_UP(m.live[k].size, PG);

	pool_free(p, m.live[k].base, m.live[k].size);
	/* Only a full table drops; the pages are then outside the pool. */
	model_mark(m.live[k].base, size, p->dropped_bytes == dropped ? PG_FREE : PG_HOLE);
	if (p->dropped_bytes != dropped)
		assert_int_equal(p->dropped_bytes - dropped, size);
	m.live[k] = m.live[--m.nlive];
}

/* Adds a range overlapping free memory and holes, but no live block. */
static void model_add(struct pool *p)
{
	uint32_t first = (uint32_t)(rng() % M_PAGES), n = 1 + (uint32_t)(rng() % 16);
	uint64_t dropped = p->dropped_bytes;

	if (first + n > M_PAGES)
		n = M_PAGES - first;
	for (uint32_t i = first; i < first + n; i++)
		if (m.pg[i] == PG_USED)
			return;
	/* Unaligned ends: rounded inward to exactly these pages. */
	pool_add(p, M_BASE + first * PG - (first ? rng() % PG : 0),
		 n * PG + PG - 1);
	if (p->dropped_bytes != dropped)
		return;                 /* partly dropped: resynced below */
	for (uint32_t i = first; i < first + n; i++)
		m.pg[i] = PG_FREE;
}

/* After a drop inside pool_add only the pool knows which pieces went in:
 * take its ranges as the model's free pages (checked against used ones). */
static void model_resync(const struct pool *p)
{
	for (uint32_t i = 0; i < M_PAGES; i++)
		if (m.pg[i] == PG_FREE)
			m.pg[i] = PG_HOLE;
	for (uint32_t r = 0; r < p->n; r++)
		for (uint64_t a = p->r[r].base; a < p->r[r].end; a += PG) {
			assert_true(a >= M_BASE && a < M_BASE + M_PAGES * PG);
			assert_int_not_equal(m.pg[page_of(a)], PG_USED);
			m.pg[page_of(a)] = PG_FREE;
		}
}

/* Allocate until full with random sizes and alignments, free everything
 * in random order: the pool is again exactly what was added. */
static void test_free_all_restores(void **state)
{
	struct pool *p = &pool;

	m.s = 0xfeedfacecafebeefull;
	for (unsigned round = 0; round < 50; round++) {
		uint32_t n = 0;

		pool_init(p);
		pool_add(p, 0x100800, 0x2ff800);                /* [0x101000, 0x400000) */
		pool_add(p, 0x500000, 0x1234567);
		pool_add(p, 0x2000000, 0x400000);
		for (;;) {
			uint64_t size = 1 + rng() % (64 * PG);
			uint64_t align = PG << (rng() % 10);
			uint64_t a = pool_alloc(p, size, align, 0);

			if (!a)
				break;
			assert_true(n < M_LIVE);
			m.live[n].base = a;
			m.live[n].size = size;
			n++;
		}
		check_invariants(p);
		while (n) {
			uint32_t k = (uint32_t)(rng() % n);

			pool_free(p, m.live[k].base, m.live[k].size);
			m.live[k] = m.live[--n];
		}
		EXPECT(p, 0x101000, 0x400000, 0x500000, 0x1734000, 0x2000000, 0x2400000);
		assert_int_equal(p->dropped_bytes, 0);
	}
}

static void test_random_model(void **state)
{
	struct pool *p = &pool;
	unsigned allocs = 0, failed = 0;

	memset(&m, 0, sizeof(m));
	m.s = 0x5eed5eed12345678ull;
	pool_init(p);
	/* Memory with holes, added with overlaps and unaligned edges. */
	pool_add(p, M_BASE + 0x800, 0x300000);                  /* [+0x1000, +0x300000) */
	pool_add(p, M_BASE + 0x200000, 0x180000);               /* overlaps, grows it */
	pool_add(p, M_BASE + 0x400000, 0x123456);
	pool_add(p, M_BASE + 0x600000, 0x200000);
	pool_add(p, M_BASE + 0x6ff000, 0x2000);                 /* inside */
	model_mark(M_BASE + 0x1000, 0x37f000, PG_FREE);
	model_mark(M_BASE + 0x400000, 0x123000, PG_FREE);
	model_mark(M_BASE + 0x600000, 0x200000, PG_FREE);
	model_compare(p);

	for (unsigned op = 0; op < M_OPS; op++) {
		uint64_t dropped = p->dropped_bytes;
		unsigned r = (unsigned)(rng() % 100);

		if (op % 10000 == 0)
			m.max_live = op % 20000 ? M_LIVE : 64;
		if (r < 2) {
			model_add(p);
		} else if (m.nlive < m.max_live && (r < (m.max_live > 64 ? 70u : 52u) || !m.nlive)) {
			uint32_t before = m.nlive;

			model_alloc(p);
			allocs++;
			failed += m.nlive == before;
		} else if (m.nlive) {
			model_free(p);
		}
		if (p->dropped_bytes != dropped)
			model_resync(p);
		model_compare(p);
		m.max_n = MAX(m.max_n, p->n);
	}
	/* Both outcomes were exercised, then everything goes back. */
	assert_true(failed > 100 && failed < allocs / 2);
	while (m.nlive)
		model_free(p);
	model_compare(p);
	/* The table-full paths (no three-way split, dropped frees) ran too. */
	assert_int_equal(m.max_n, POOL_MAX_RANGES);
	assert_true(m.full > 0);
	assert_true(p->dropped_bytes > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_add_rounds_inward),
		cmocka_unit_test(test_add_top_of_address_space),
		cmocka_unit_test(test_add_merges),
		cmocka_unit_test(test_add_overlaps_counted_once),
		cmocka_unit_test(test_alloc_first_fit),
		cmocka_unit_test(test_alloc_2m_aligned),
		cmocka_unit_test(test_alloc_min),
		cmocka_unit_test(test_alloc_failures),
		cmocka_unit_test(test_free_merges_back),
		cmocka_unit_test(test_table_full),
		cmocka_unit_test(test_alloc_when_table_full),
		cmocka_unit_test(test_free_when_table_full),
		cmocka_unit_test(test_largest),
		cmocka_unit_test(test_set_table),
		cmocka_unit_test(test_out_of_order_frees_keep_memory),
		cmocka_unit_test(test_free_all_restores),
		cmocka_unit_test(test_random_model),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
