// SPDX-License-Identifier: BSD-2-Clause
/*
 * vmm/emul/gwalk.c over page tables built in a heap "guest RAM" of exactly
 * RAM_SIZE bytes (ASan flags any access past it): every paging mode and
 * page size, failures at each level, page-crossing reads, and a seeded
 * fuzz of random table contents.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "drivers/x86.h"
#include "vmm/emul/gwalk.h"

#define RAM_SIZE        (64 * PAGE_SIZE)
#define TABLES          0x1000ull               /* first table page */
#define OUTSIDE         0x100000000ull          /* well past RAM */

#define P               BIT(0)
#define RW              BIT(1)
#define PS              BIT(7)
#define XD              BIT(63)

struct ram {
	uint8_t *mem;
	unsigned reads;                 /* read_phys calls */
};

static bool ram_read(void *ctx, uint64_t gpa, void *buf, size_t len)
{
	struct ram *r = ctx;

	r->reads++;
	if (gpa > RAM_SIZE || len > RAM_SIZE - gpa)
		return false;
	memcpy(buf, r->mem + gpa, len);
	return true;
}

static int setup(void **state)
{
	struct ram *r = calloc(1, sizeof(*r));

	if (!r || !(r->mem = calloc(1, RAM_SIZE)))
		return -1;
	*state = r;
	return 0;
}

static int teardown(void **state)
{
	struct ram *r = *state;

	free(r->mem);
	free(r);
	return 0;
}

static struct gwalk_env env_of(struct ram *r, uint64_t cr0, uint64_t cr3, uint64_t cr4,
			       uint64_t efer)
{
	return (struct gwalk_env){ .cr0 = cr0, .cr3 = cr3, .cr4 = cr4, .efer = efer,
				   .read_phys = ram_read, .ctx = r };
}

static void put64(struct ram *r, uint64_t pa, uint64_t v)
{
	assert_true(pa + 8 <= RAM_SIZE);
	memcpy(r->mem + pa, &v, 8);
}

static void put32(struct ram *r, uint64_t pa, uint32_t v)
{
	assert_true(pa + 4 <= RAM_SIZE);
	memcpy(r->mem + pa, &v, 4);
}

static uint64_t get64(struct ram *r, uint64_t pa)
{
	uint64_t v;

	memcpy(&v, r->mem + pa, 8);
	return v;
}

/* Index of gla in an 8-byte table at level (1 = page table). */
static unsigned idx(uint64_t gla, unsigned level)
{
	return (gla >> (12 + 9 * (level - 1))) & 0x1ff;
}

/* Address of the entry for gla at level, tables one page each from
 * TABLES down from the top level. */
static uint64_t slot(uint64_t gla, unsigned levels, unsigned level)
{
	return TABLES + (levels - level) * PAGE_SIZE + 8 * idx(gla, level);
}

/* 4- or 5-level tables for gla, ending in leaf at leaf_level. */
static void build_long(struct ram *r, uint64_t gla, unsigned levels, unsigned leaf_level,
		       uint64_t leaf)
{
	for (unsigned l = levels; l > leaf_level; l--)
		put64(r, slot(gla, levels, l), (TABLES + (levels - l + 1) * PAGE_SIZE) | P | RW);
	put64(r, slot(gla, levels, leaf_level), leaf);
}

static struct gwalk_env env_long(struct ram *r, unsigned levels)
{
	return env_of(r, CR0_PE | CR0_PG, TABLES, CR4_PAE | (levels == 5 ? CR4_LA57 : 0),
		      EFER_LME | EFER_LMA);
}

#define EXPECT_GPA(env, gla, want) do {                                       \
		uint64_t gpa_ = 0;                                            \
		const char *why_ = NULL;                                      \
		if (gwalk_translate(env, gla, &gpa_, &why_))                  \
			fail_msg("%#llx: %s", (unsigned long long)(gla), why_); \
		assert_int_equal(gpa_, want);                                 \
	} while (0)

#define EXPECT_FAIL(env, gla, reason) do {                                    \
		uint64_t gpa_ = 0x5a5a;                                       \
		const char *why_ = NULL;                                      \
		assert_int_equal(gwalk_translate(env, gla, &gpa_, &why_), -1); \
		assert_non_null(why_);                                        \
		assert_string_equal(why_, reason);                            \
		assert_int_equal(gpa_, 0x5a5a);                               \
	} while (0)

static void test_paging_off(void **state)
{
	struct ram *r = *state;
	struct gwalk_env env = env_of(r, CR0_PE, 0, CR4_PAE, 0);

	EXPECT_GPA(&env, 0xfee00300, 0xfee00300);
	EXPECT_GPA(&env, 0x100001234ull, 0x1234);     /* 32-bit linear addresses */
	env.cr0 = 0;
	EXPECT_GPA(&env, 0xffff0, 0xffff0);
	assert_int_equal(r->reads, 0);
}

/* 32-bit paging: PD at TABLES, PT at the next page. */
static void build_32(struct ram *r, uint32_t gla, uint32_t pte)
{
	put32(r, TABLES + 4 * (gla >> 22), (uint32_t)(TABLES + PAGE_SIZE) | P | RW);
	put32(r, TABLES + PAGE_SIZE + 4 * ((gla >> 12) & 0x3ff), pte);
}

static void test_32bit_4k(void **state)
{
	struct ram *r = *state;
	struct gwalk_env env = env_of(r, CR0_PE | CR0_PG, TABLES | 0x18, 0, 0);

	build_32(r, 0xfee00304, 0x12345000 | P);
	EXPECT_GPA(&env, 0xfee00304, 0x12345304);
	EXPECT_GPA(&env, 0xfffffffffee00304ull, 0x12345304);
	/* Without CR4.PSE the PS bit is ignored: still a page table. */
	put32(r, TABLES + 4 * (0xfee00304 >> 22), (uint32_t)(TABLES + PAGE_SIZE) | P | PS);
	EXPECT_GPA(&env, 0xfee00304, 0x12345304);
	EXPECT_FAIL(&env, 0xfee01304, "not present at level 1");
	EXPECT_FAIL(&env, 0x00001000, "not present at level 2");
	/* A PDE pointing outside RAM. */
	put32(r, TABLES, 0xfff00000 | P);
	EXPECT_FAIL(&env, 0x00001000, "page table outside RAM");
	env.cr3 = 0xfffff000;
	EXPECT_FAIL(&env, 0xfee00304, "page table outside RAM");
}

static void test_32bit_pse36(void **state)
{
	struct ram *r = *state;
	struct gwalk_env env = env_of(r, CR0_PE | CR0_PG, TABLES, CR4_PSE, 0);
	uint64_t pde = TABLES + 4 * (0xfee00300 >> 22);

	put32(r, pde, 0xfec00000 | PS | P);
	EXPECT_GPA(&env, 0xfee00300, 0xfee00300);
	put32(r, pde, 0xfec00000 | (0x12 << 13) | PS | P);
	EXPECT_GPA(&env, 0xfee00300, 0x12fee00300ull);
	put32(r, pde, 0xfec00000 | (0xff << 13) | BIT(12) | PS | P);      /* PAT */
	EXPECT_GPA(&env, 0xfee00300, 0xfffee00300ull);
	put32(r, pde, 0xfec00000 | BIT(21) | PS | P);
	EXPECT_FAIL(&env, 0xfee00300, "reserved bit set at level 2");
	put32(r, pde, 0xfec00000 | PS);
	EXPECT_FAIL(&env, 0xfee00300, "not present at level 2");
}

/* PAE: PDPT at TABLES + 0x20 (32-byte aligned, not page aligned), PD and
 * PT on the next pages. */
#define PAE_CR3         (TABLES + 0x20)
#define PAE_PD          (TABLES + PAGE_SIZE)
#define PAE_PT          (TABLES + 2 * PAGE_SIZE)

static void build_pae(struct ram *r, uint32_t gla, unsigned leaf_level, uint64_t leaf)
{
	put64(r, PAE_CR3 + 8 * (gla >> 30), PAE_PD | P);
	if (leaf_level == 2) {
		put64(r, PAE_PD + 8 * idx(gla, 2), leaf);
		return;
	}
	put64(r, PAE_PD + 8 * idx(gla, 2), PAE_PT | P | RW);
	put64(r, PAE_PT + 8 * idx(gla, 1), leaf);
}

static void test_pae(void **state)
{
	struct ram *r = *state;
	struct gwalk_env env = env_of(r, CR0_PE | CR0_PG, PAE_CR3, CR4_PAE, 0);

	build_pae(r, 0xfee00300, 1, 0x123456000ull | P);
	EXPECT_GPA(&env, 0xfee00300, 0x123456300ull);
	build_pae(r, 0xc0200123, 2, 0x200000000ull | BIT(12) | PS | P);    /* PAT */
	EXPECT_GPA(&env, 0xc0200123, 0x200000123ull);
	EXPECT_GPA(&env, 0x1c0300123ull, 0x200100123ull);

	build_pae(r, 0xfee00300, 1, 0x123456000ull | XD | P);
	EXPECT_FAIL(&env, 0xfee00300, "reserved bit set at level 1");
	env.efer = EFER_NXE;
	EXPECT_GPA(&env, 0xfee00300, 0x123456300ull);
	build_pae(r, 0xfee00300, 1, 0x123456000ull | BIT(52) | P);
	EXPECT_FAIL(&env, 0xfee00300, "reserved bit set at level 1");
	build_pae(r, 0xc0200123, 2, 0x200000000ull | BIT(13) | PS | P);
	EXPECT_FAIL(&env, 0xc0200123, "reserved bit set at level 2");
	build_pae(r, 0xc0200123, 2, 0x200000000ull | BIT(62) | PS | P);
	EXPECT_FAIL(&env, 0xc0200123, "reserved bit set at level 2");
	put64(r, PAE_PD + 8 * idx(0xfee00300, 2), PAE_PT);
	EXPECT_FAIL(&env, 0xfee00300, "not present at level 2");

	/* PDPTEs: reserved bits 2:1, 8:5, 63:52; present bit. */
	put64(r, PAE_CR3 + 24, PAE_PD | RW | P);
	EXPECT_FAIL(&env, 0xfee00300, "reserved bit set at level 3");
	put64(r, PAE_CR3 + 24, PAE_PD | PS | P);
	EXPECT_FAIL(&env, 0xfee00300, "reserved bit set at level 3");
	put64(r, PAE_CR3 + 24, PAE_PD | XD | P);
	EXPECT_FAIL(&env, 0xfee00300, "reserved bit set at level 3");
	put64(r, PAE_CR3 + 24, PAE_PD);
	EXPECT_FAIL(&env, 0xfee00300, "not present at level 3");
	put64(r, PAE_CR3 + 24, OUTSIDE | P);
	EXPECT_FAIL(&env, 0xfee00300, "page table outside RAM");
	env.cr3 = 0xffffffe0;
	EXPECT_FAIL(&env, 0xfee00300, "page table outside RAM");
}

/* Under EPT the CPU walks the VMCS PDPTE registers, not memory. */
static void test_pae_pdpte_registers(void **state)
{
	struct ram *r = *state;
	struct gwalk_env env = env_of(r, CR0_PE | CR0_PG, OUTSIDE, CR4_PAE, 0);
	uint64_t pdptes[4] = { 0, 0, 0, PAE_PD | P };

	build_pae(r, 0xfee00300, 1, 0xabc000 | P);
	env.pdptes = pdptes;
	EXPECT_GPA(&env, 0xfee00300, 0xabc300);
	EXPECT_FAIL(&env, 0x00000300, "not present at level 3");
	pdptes[3] |= BIT(5);
	EXPECT_FAIL(&env, 0xfee00300, "reserved bit set at level 3");
}

static void test_4level(void **state)
{
	struct ram *r = *state;
	struct gwalk_env env = env_long(r, 4);
	uint64_t gla = 0xffff8000fee00300ull;

	build_long(r, gla, 4, 1, 0xfee00000 | P);
	EXPECT_GPA(&env, gla, 0xfee00300);
	env.cr3 = TABLES | 0xabc;                       /* PCID */
	EXPECT_GPA(&env, gla, 0xfee00300);
	/* Bits 62:52 are ignored, bits 51:12 all address. */
	build_long(r, gla, 4, 1, BITS(62, 52) | BITS(51, 12) | P);
	EXPECT_GPA(&env, gla, BITS(51, 12) | 0x300);
	build_long(r, gla, 4, 2, 0x400000000ull | BIT(12) | PS | P);
	EXPECT_GPA(&env, gla, 0x400000000ull | (gla & BITS(20, 0)));
	build_long(r, gla, 4, 3, 0x8040000000ull | PS | P);
	EXPECT_GPA(&env, gla, 0x8040000000ull | (gla & BITS(29, 0)));
	EXPECT_GPA(&env, 0x0000000000001234ull + (gla & ~BITS(29, 0)),
		   0x8040000000ull | 0x1234);
}

static void test_4level_reserved(void **state)
{
	struct ram *r = *state;
	struct gwalk_env env = env_long(r, 4);
	uint64_t gla = 0x00007fffdead0123ull;

	build_long(r, gla, 4, 1, 0x5000 | XD | P);
	EXPECT_FAIL(&env, gla, "reserved bit set at level 1");
	env.efer |= EFER_NXE;
	EXPECT_GPA(&env, gla, 0x5123);
	build_long(r, gla, 4, 2, 0x200000 | BIT(20) | PS | P);
	EXPECT_FAIL(&env, gla, "reserved bit set at level 2");
	build_long(r, gla, 4, 3, 0x40000000 | BIT(13) | PS | P);
	EXPECT_FAIL(&env, gla, "reserved bit set at level 3");
	build_long(r, gla, 4, 3, 0x40000000 | BIT(29) | PS | P);
	EXPECT_FAIL(&env, gla, "reserved bit set at level 3");
	build_long(r, gla, 4, 1, 0x5000 | P);
	put64(r, slot(gla, 4, 4), PS | P);          /* no 512 GiB pages */
	EXPECT_FAIL(&env, gla, "reserved bit set at level 4");
}

static void test_canonical(void **state)
{
	struct ram *r = *state;
	struct gwalk_env env = env_long(r, 4);

	build_long(r, 0x00007ffffffff000ull, 4, 1, 0x7000 | P);
	EXPECT_GPA(&env, 0x00007ffffffff00full, 0x700f);
	EXPECT_FAIL(&env, 0x0000800000000000ull, "non-canonical address");
	EXPECT_FAIL(&env, 0xffff7fffffffffffull, "non-canonical address");
	EXPECT_FAIL(&env, 0x0001000000000000ull, "non-canonical address");
	EXPECT_FAIL(&env, 0x8000000000000000ull, "non-canonical address");
	env.cr4 |= CR4_LA57;
	EXPECT_FAIL(&env, 0x0100000000000000ull, "non-canonical address");
	EXPECT_FAIL(&env, 0xfeffffffffffffffull, "non-canonical address");
	EXPECT_FAIL(&env, 0x7f00000000000000ull, "non-canonical address");
	assert_int_equal(r->reads, 4);         /* the one good walk */
}

static void test_5level(void **state)
{
	struct ram *r = *state;
	struct gwalk_env env = env_long(r, 5);
	static const uint64_t glas[] = {
		0x0001000000000300ull,          /* non-canonical with 4 levels */
		0x00ff8000fee00300ull,
		0xff80000000001300ull,
		0x0012345678abc300ull,
	};

	for (size_t i = 0; i < ARRAY_SIZE(glas); i++) {
		memset(r->mem, 0, RAM_SIZE);
		build_long(r, glas[i], 5, 1, 0xfee00000 | P);
		EXPECT_GPA(&env, glas[i], 0xfee00300);
		build_long(r, glas[i], 5, 3, 0x40000000 | PS | P);
		EXPECT_GPA(&env, glas[i], 0x40000000 | (glas[i] & BITS(29, 0)));
	}
	put64(r, slot(glas[3], 5, 5), PS | P);
	EXPECT_FAIL(&env, glas[3], "reserved bit set at level 5");
}

/* Clearing P at each level of a good walk, in every mode. */
static void test_not_present_each_level(void **state)
{
	static const char *const np[] = { NULL, "not present at level 1",
		"not present at level 2", "not present at level 3",
		"not present at level 4", "not present at level 5" };
	struct ram *r = *state;
	uint64_t gla = 0x00007ffffee00300ull;

	for (unsigned levels = 4; levels <= 5; levels++) {
		struct gwalk_env env = env_long(r, levels);

		for (unsigned l = levels; l >= 1; l--) {
			memset(r->mem, 0, RAM_SIZE);
			build_long(r, gla, levels, 1, 0xfee00000 | P);
			EXPECT_GPA(&env, gla, 0xfee00300);
			put64(r, slot(gla, levels, l), get64(r, slot(gla, levels, l)) & ~P);
			EXPECT_FAIL(&env, gla, np[l]);
		}
	}
	{
		struct gwalk_env env = env_of(r, CR0_PE | CR0_PG, PAE_CR3, CR4_PAE, 0);
		const uint64_t slots[] = { 0, PAE_PT + 8 * idx(0xfee00300, 1),
					   PAE_PD + 8 * idx(0xfee00300, 2), PAE_CR3 + 8 * 3 };

		for (unsigned l = 3; l >= 1; l--) {
			memset(r->mem, 0, RAM_SIZE);
			build_pae(r, 0xfee00300, 1, 0xfee00000 | P);
			EXPECT_GPA(&env, 0xfee00300, 0xfee00300);
			put64(r, slots[l], get64(r, slots[l]) & ~P);
			EXPECT_FAIL(&env, 0xfee00300, np[l]);
		}
	}
}

/* A table pointer past RAM at each level is refused, never read. */
static void test_outside_ram_each_level(void **state)
{
	struct ram *r = *state;
	uint64_t gla = 0xffffff8000201000ull;

	for (unsigned levels = 4; levels <= 5; levels++) {
		struct gwalk_env env = env_long(r, levels);

		for (unsigned l = levels; l >= 2; l--) {
			memset(r->mem, 0, RAM_SIZE);
			build_long(r, gla, levels, 1, 0x3000 | P);
			put64(r, slot(gla, levels, l), OUTSIDE | P);
			EXPECT_FAIL(&env, gla, "page table outside RAM");
			put64(r, slot(gla, levels, l), RAM_SIZE | P);  /* first page past RAM */
			EXPECT_FAIL(&env, gla, "page table outside RAM");
		}
		env.cr3 = RAM_SIZE;
		EXPECT_FAIL(&env, gla, "page table outside RAM");
		env.cr3 = BITS(51, 12);
		EXPECT_FAIL(&env, gla, "page table outside RAM");
	}
}

/* An instruction straddling two pages mapped to unrelated frames. */
static void test_read_linear_cross(void **state)
{
	struct ram *r = *state;
	struct gwalk_env env = env_long(r, 4);
	uint64_t gla = 0x7fffeff9, pa_lo = 0x30000, pa_hi = 0x20000;
	uint8_t buf[15];
	const char *why = NULL;

	build_long(r, gla, 4, 1, pa_lo | P);
	put64(r, slot(gla, 4, 1) + 8, pa_hi | P);       /* next page, same table */
	for (unsigned i = 0; i < 7; i++)
		r->mem[pa_lo + 0xff9 + i] = (uint8_t)(0xa0 + i);
	for (unsigned i = 7; i < 15; i++)
		r->mem[pa_hi + i - 7] = (uint8_t)(0xa0 + i);
	r->reads = 0;
	assert_int_equal(gwalk_read_linear(&env, gla, buf, sizeof(buf), &why), 0);
	for (unsigned i = 0; i < 15; i++)
		assert_int_equal(buf[i], 0xa0 + i);
	assert_int_equal(r->reads, 2 * (4 + 1));        /* two walks, two copies */
	/* Exactly to the end of the first page: one walk. */
	r->reads = 0;
	assert_int_equal(gwalk_read_linear(&env, gla, buf, 7, &why), 0);
	assert_int_equal(gwalk_read_linear(&env, gla, buf, 0, &why), 0);
	assert_int_equal(r->reads, 4 + 1);
	/* Second page gone: the read fails on it. */
	put64(r, slot(gla, 4, 1) + 8, pa_hi);
	assert_int_equal(gwalk_read_linear(&env, gla, buf, sizeof(buf), &why), -1);
	assert_string_equal(why, "not present at level 1");
	/* A frame past RAM. */
	put64(r, slot(gla, 4, 1) + 8, OUTSIDE | P);
	assert_int_equal(gwalk_read_linear(&env, gla, buf, sizeof(buf), &why), -1);
	assert_string_equal(why, "page outside RAM");
	/* Running off the canonical lower half. */
	build_long(r, 0x00007ffffffff000ull, 4, 1, 0x7000 | P);
	assert_int_equal(gwalk_read_linear(&env, 0x00007ffffffffffcull, buf, 8, &why), -1);
	assert_string_equal(why, "non-canonical address");
}

/* The same over 32-bit paging, the pages in different page tables. */
static void test_read_linear_cross_32(void **state)
{
	struct ram *r = *state;
	struct gwalk_env env = env_of(r, CR0_PE | CR0_PG, TABLES, 0, 0);
	uint8_t buf[10];

	put32(r, TABLES + 4 * 0, (uint32_t)(TABLES + PAGE_SIZE) | P);
	put32(r, TABLES + 4 * 1, (uint32_t)(TABLES + 2 * PAGE_SIZE) | P);
	put32(r, TABLES + PAGE_SIZE + 4 * 0x3ff, 0x9000 | P);
	put32(r, TABLES + 2 * PAGE_SIZE + 4 * 0, 0x8000 | P);
	memcpy(r->mem + 0x9ffb, "hello", 5);
	memcpy(r->mem + 0x8000, "world", 5);
	assert_int_equal(gwalk_read_linear(&env, 0x3ffffb, buf, 10, NULL), 0);
	assert_memory_equal(buf, "helloworld", 10);
}

static uint64_t rng_state = 0x2545f4914f6cdd1dull;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* Mostly present entries pointing into (or just past) RAM, so that walks
 * go deep; the rest random. */
static uint64_t fuzz_entry(void)
{
	uint64_t x = rng(), frame = (rng() % (RAM_SIZE / PAGE_SIZE + 4)) * PAGE_SIZE;

	switch (x & 7) {
	case 0:
		return rng();
	case 1:
		return frame | (x & BITS(63, 52)) | (x >> 8 & 0xfff);
	default:
		return frame | (x >> 8 & 0xf7f) | P;
	}
}

static struct gwalk_env fuzz_env(struct ram *r)
{
	static const uint64_t cr4s[] = { 0, CR4_PSE, CR4_PAE, CR4_PAE | CR4_LA57 };
	uint64_t x = rng();
	struct gwalk_env env = env_of(r, x & 15 ? CR0_PE | CR0_PG : CR0_PE,
				      x & 0x10 ? rng() : rng() % (RAM_SIZE + PAGE_SIZE),
				      cr4s[(x >> 8) & 3], 0);

	if ((env.cr4 & CR4_PAE) && (x & BIT(12)))
		env.efer |= EFER_LME | EFER_LMA;
	if (x & BIT(13))
		env.efer |= EFER_NXE;
	return env;
}

static void test_fuzz(void **state)
{
	struct ram *r = *state;
	unsigned ok = 0, deep = 0;

	for (unsigned iter = 0; iter < 50000; iter++) {
		struct gwalk_env env;
		uint64_t gla = rng(), gpa;
		size_t len = rng() % 16;
		uint8_t *buf = malloc(len ? len : 1);
		const char *why = NULL;

		assert_non_null(buf);
		if (iter % 1000 == 0)
			for (size_t i = 0; i < RAM_SIZE; i += 8)
				put64(r, i, fuzz_entry());
		for (unsigned i = 0; i < 16; i++)
			put64(r, (rng() % (RAM_SIZE / 8)) * 8, fuzz_entry());
		if (rng() & 1)
			gla = (uint64_t)((int64_t)(gla << 16) >> 16);
		env = fuzz_env(r);
		r->reads = 0;
		if (gwalk_translate(&env, gla, &gpa, &why) == 0) {
			ok++;
			deep += r->reads >= 4;
		} else {
			assert_non_null(why);
		}
		assert_true(r->reads <= 5);
		r->reads = 0;
		if (gwalk_read_linear(&env, gla, buf, len, &why))
			assert_non_null(why);
		assert_true(r->reads <= 2 * 6);
		free(buf);
	}
	assert_true(ok > 1000);
	assert_true(deep > 100);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_paging_off),
		T(test_32bit_4k),
		T(test_32bit_pse36),
		T(test_pae),
		T(test_pae_pdpte_registers),
		T(test_4level),
		T(test_4level_reserved),
		T(test_canonical),
		T(test_5level),
		T(test_not_present_each_level),
		T(test_outside_ram_each_level),
		T(test_read_linear_cross),
		T(test_read_linear_cross_32),
		T(test_fuzz),
	};
#undef T

	return cmocka_run_group_tests(tests, NULL, NULL);
}
