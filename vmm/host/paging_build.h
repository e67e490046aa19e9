/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The host's identity map and its memory types (issue 22.5), as pure
 * code (host-tested in tests/unit/test_paging.c). RAM the UEFI memory map
 * names (usable, boot services, loader, runtime, ACPI) is write-back;
 * the GOP framebuffer write-combining; everything else - the local and
 * I/O APIC, the HPET, PCIe ECAM, BARs, holes - uncached. A 1 GiB page
 * maps only RAM; MMIO gets pages of at most 2 MiB, and a 2 MiB region
 * that mixes types gets 4 KiB pages.
 *
 * The PTE bits select IA32_PAT entries (SDM Vol. 3A, "PAT"): tickvisor
 * keeps the power-on PAT but for entry 1, write-combining instead of
 * write-through (as Linux's does), so PWT alone is WC, PCD|PWT UC.
 */
#ifndef VMM_HOST_PAGING_BUILD_H
#define VMM_HOST_PAGING_BUILD_H

#include "vmm/host/boot_info.h"

#define PTE_P    BIT(0)
#define PTE_W    BIT(1)
#define PTE_PWT  BIT(3)
#define PTE_PCD  BIT(4)
#define PTE_PS   BIT(7)
#define PTE_ADDR BITS(51, 12)

/* Power-on IA32_PAT with entry 1 WC (01h) for WT (04h). */
#define TV_PAT   0x0007040600070106ull

enum pg_type { PG_WB, PG_WC, PG_UC, PG_MIXED };

struct pg_env {
	const struct mem_range *mem;    /* sorted by base, not overlapping */
	uint32_t nmem;
	uint64_t fb_base, fb_size;      /* 0 size: no framebuffer */
	bool gb_pages;                  /* CPUID 80000001H:EDX[26] */
	void *(*alloc_page)(void *ctx); /* zeroed 4 KiB, identity-mapped */
	void *ctx;
};

/* What [base, base+size) holds as far as memory types go. */
enum pg_type paging_range_type(const struct pg_env *env, uint64_t base, uint64_t size);
/* The PTE bits of a type (PG_MIXED maps UC). */
uint64_t paging_type_bits(enum pg_type t);
/* Builds the identity map of [0, top) (top a multiple of 1 GiB); returns
 * the PML4, NULL when a page could not be had. */
uint64_t *paging_build(const struct pg_env *env, uint64_t top);
/* Adds the 4 KiB page holding a, of type t, to the map (for a device
 * beyond its top: an MMIO UART in a 64-bit BAR); a page already mapped
 * large stays as it is. False when a table could not be had. */
bool paging_map_page(const struct pg_env *env, uint64_t *pml4, uint64_t a, enum pg_type t);

#endif
