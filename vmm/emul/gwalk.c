// SPDX-License-Identifier: BSD-2-Clause
/*
 * Software walk of the guest's page tables (SDM Vol. 3A, "Paging"): the
 * four modes the guest's CR0.PG, CR4.PAE, EFER.LMA and CR4.LA57 select,
 * with their large pages. MAXPHYADDR is taken as 52 (40 for PSE-36): a
 * frame beyond guest RAM is caught by read_phys, not by reserved bits.
 */
#include "drivers/x86.h"         /* CR0.PG, CR4.PSE/PAE/LA57, EFER.LMA/NXE */
#include "vmm/emul/gwalk.h"

/* Bits common to every paging-structure entry. */
#define PTE_P           BIT(0)
#define PTE_PS          BIT(7)          /* maps a page (levels 2, 3); PAT at level 1 */
#define PTE_XD          BIT(63)         /* reserved unless EFER.NXE */
#define PTE_ADDR        BITS(51, 12)
#define PTE_PAE_RSVD    BITS(62, 52)    /* PAE paging: 62:MAXPHYADDR */
#define PTE_INDEX       0x1ffu          /* 9 linear-address bits per level */

/* SDM Vol. 3A, "32-Bit Paging". */
#define PTE32_ADDR      BITS(31, 12)
#define PDE32_4M_ADDR   BITS(31, 22)
#define PDE32_4M_HI     BITS(20, 13)    /* PSE-36: physical bits 39:32 */
#define PDE32_4M_RSVD   BIT(21)
#define LA32_DIR        BITS(31, 22)
#define LA32_TABLE      BITS(21, 12)
#define LA32_4M_OFFSET  BITS(21, 0)
#define LA_PAGE_OFFSET  BITS(11, 0)

/* SDM Vol. 3A, "PAE Paging": CR3 holds a 32-byte aligned PDPT. */
#define CR3_PAE_PDPT    BITS(31, 5)
#define LA_PAE_PDPT     BITS(31, 30)
#define PDPTE_PAE_RSVD  (BITS(63, 52) | BITS(8, 5) | BITS(2, 1))

static const char *const why_not_present[] = {
	[1] = "not present at level 1", [2] = "not present at level 2",
	[3] = "not present at level 3", [4] = "not present at level 4",
	[5] = "not present at level 5",
};

static const char *const why_reserved[] = {
	[1] = "reserved bit set at level 1", [2] = "reserved bit set at level 2",
	[3] = "reserved bit set at level 3", [4] = "reserved bit set at level 4",
	[5] = "reserved bit set at level 5",
};

static int gw_fail(const char **why, const char *reason)
{
	if (why)
		*why = reason;
	return -1;
}

/* One entry, 4 or 8 bytes, little-endian like the guest. */
static int gw_read(const struct gwalk_env *env, uint64_t gpa, size_t size, uint64_t *e)
{
	*e = 0;
	return env->read_phys(env->ctx, gpa, e, size) ? 0 : -1;
}

/* The lowest linear-address bit a level of 8-byte entries translates. */
static unsigned gw_shift(unsigned level)
{
	return 12 + 9 * (level - 1);
}

/* Reserved bits of an 8-byte entry (SDM Vol. 3A, "Formats of Paging
 * Structure Entries", PAE and 4-level tables); bits 51:MAXPHYADDR are
 * left to read_phys. */
static uint64_t gw_reserved(const struct gwalk_env *env, unsigned level, uint64_t e)
{
	uint64_t rsvd = env->efer & EFER_NXE ? 0 : PTE_XD;

	if (!(env->efer & EFER_LMA))
		rsvd |= PTE_PAE_RSVD;
	if (level >= 4)
		rsvd |= PTE_PS;
	else if (level > 1 && (e & PTE_PS))
		rsvd |= BITS(gw_shift(level) - 1, 13);  /* between PAT and the frame */
	return rsvd;
}

/* Walks 8-byte tables from table (at level) down to a page. */
static int gw_walk(const struct gwalk_env *env, uint64_t gla, uint64_t table,
		   unsigned level, uint64_t *gpa, const char **why)
{
	for (;; level--) {
		unsigned shift = gw_shift(level);
		uint64_t e;

		if (gw_read(env, table + 8 * ((gla >> shift) & PTE_INDEX), 8, &e))
			return gw_fail(why, "page table outside RAM");
		if (!(e & PTE_P))
			return gw_fail(why, why_not_present[level]);
		if (e & gw_reserved(env, level, e))
			return gw_fail(why, why_reserved[level]);
		if (level == 1 || (e & PTE_PS)) {
			*gpa = (e & BITS(51, shift)) | (gla & (BIT(shift) - 1));
			return 0;
		}
		table = e & PTE_ADDR;
	}
}

/* SDM Vol. 3A, "4-Level Paging and 5-Level Paging": a linear address
 * must be canonical, bits 63:48 (63:57) copies of bit 47 (56). */
static int gw_walk_long(const struct gwalk_env *env, uint64_t gla, uint64_t *gpa,
			const char **why)
{
	unsigned levels = env->cr4 & CR4_LA57 ? 5 : 4;
	unsigned unused = 63 - (gw_shift(levels) + 8);

	if ((uint64_t)((int64_t)(gla << unused) >> unused) != gla)
		return gw_fail(why, "non-canonical address");
	return gw_walk(env, gla, env->cr3 & PTE_ADDR, levels, gpa, why);
}

/* SDM Vol. 3A, "PAE Paging": four PDPTEs, then 2-level 8-byte tables. */
static int gw_walk_pae(const struct gwalk_env *env, uint32_t gla, uint64_t *gpa,
		       const char **why)
{
	unsigned i = FIELD_GET(LA_PAE_PDPT, gla);
	uint64_t pdpte;

	if (env->pdptes)
		pdpte = env->pdptes[i];
	else if (gw_read(env, (env->cr3 & CR3_PAE_PDPT) + 8 * i, 8, &pdpte))
		return gw_fail(why, "page table outside RAM");
	if (!(pdpte & PTE_P))
		return gw_fail(why, why_not_present[3]);
	if (pdpte & PDPTE_PAE_RSVD)
		return gw_fail(why, why_reserved[3]);
	return gw_walk(env, gla, pdpte & PTE_ADDR, 2, gpa, why);
}

/* SDM Vol. 3A, "32-Bit Paging": 4-byte entries; a PDE with PS maps 4 MiB
 * if CR4.PSE, its bits 20:13 giving physical bits 39:32 (PSE-36). */
static int gw_walk32(const struct gwalk_env *env, uint32_t gla, uint64_t *gpa,
		     const char **why)
{
	uint64_t pde, pte;

	if (gw_read(env, (env->cr3 & PTE32_ADDR) + 4 * FIELD_GET(LA32_DIR, gla), 4, &pde))
		return gw_fail(why, "page table outside RAM");
	if (!(pde & PTE_P))
		return gw_fail(why, why_not_present[2]);
	if ((env->cr4 & CR4_PSE) && (pde & PTE_PS)) {
		if (pde & PDE32_4M_RSVD)
			return gw_fail(why, why_reserved[2]);
		*gpa = (pde & PDE32_4M_ADDR) | FIELD_GET(PDE32_4M_HI, pde) << 32 |
		       (gla & LA32_4M_OFFSET);
		return 0;
	}
	if (gw_read(env, (pde & PTE32_ADDR) + 4 * FIELD_GET(LA32_TABLE, gla), 4, &pte))
		return gw_fail(why, "page table outside RAM");
	if (!(pte & PTE_P))
		return gw_fail(why, why_not_present[1]);
	*gpa = (pte & PTE32_ADDR) | (gla & LA_PAGE_OFFSET);
	return 0;
}

int gwalk_translate(const struct gwalk_env *env, uint64_t gla, uint64_t *gpa, const char **why)
{
	/* Outside IA-32e mode linear addresses are 32 bits wide; without
	 * paging (hence without IA-32e mode) they are physical. */
	if (!(env->cr0 & CR0_PG)) {
		*gpa = (uint32_t)gla;
		return 0;
	}
	if (!(env->cr4 & CR4_PAE))
		return gw_walk32(env, (uint32_t)gla, gpa, why);
	if (!(env->efer & EFER_LMA))
		return gw_walk_pae(env, (uint32_t)gla, gpa, why);
	return gw_walk_long(env, gla, gpa, why);
}

int gwalk_read_linear(const struct gwalk_env *env, uint64_t gla, void *buf, size_t len,
		      const char **why)
{
	uint8_t *p = buf;

	while (len) {
		size_t chunk = MIN(len, PAGE_SIZE - (gla & LA_PAGE_OFFSET));
		uint64_t gpa;

		if (gwalk_translate(env, gla, &gpa, why))
			return -1;
		if (!env->read_phys(env->ctx, gpa, p, chunk))
			return gw_fail(why, "page outside RAM");
		gla += chunk;
		p += chunk;
		len -= chunk;
	}
	return 0;
}
