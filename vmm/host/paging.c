// SPDX-License-Identifier: BSD-2-Clause
/*
 * The host's own page tables: an identity map of the whole physical
 * address range in use (at least 4 GiB, so the local APIC, I/O APIC, HPET
 * and firmware runtime regions are covered), with 1 GiB pages where the
 * CPU has them, else 2 MiB. Memory types come from the MTRRs.
 */
#include "drivers/io.h"
#include "vmm/host/log.h"
#include "vmm/host/mem.h"
#include "vmm/host/paging.h"

#define PTE_P    BIT(0)
#define PTE_W    BIT(1)
#define PTE_PS   BIT(7)

static uint64_t host_cr3;

static uint64_t map_top(const struct boot_info *bi)
{
	uint64_t top = 4 * GiB;

	for (uint32_t i = 0; i < bi->nmem; i++)
		top = MAX(top, bi->mem[i].base + bi->mem[i].size);
	/* The GOP framebuffer may sit above 4 GiB and outside the memory map
	 * (a 64-bit BAR). */
	if (bi->screen.format != FB_NONE)
		top = MAX(top, bi->screen.base + bi->screen.size);
	return ALIGN_UP(top, GiB);
}

void paging_init(const struct boot_info *bi)
{
	bool gb = cpuid(0x80000001, 0).edx & CPUID_80000001_EDX_PDPE1GB;
	uint64_t top = map_top(bi), *pml4 = mem_alloc(PAGE_SIZE);
	uint64_t ngb = top / GiB;

	for (uint64_t g = 0; g < ngb; g++) {
		uint64_t *pdpt, *pd;

		if (!(pml4[g / 512] & PTE_P))
			pml4[g / 512] = (uint64_t)mem_alloc(PAGE_SIZE) | PTE_P | PTE_W;
		pdpt = (uint64_t *)(pml4[g / 512] & ~0xfffull);
		if (gb) {
			pdpt[g % 512] = (g * GiB) | PTE_P | PTE_W | PTE_PS;
			continue;
		}
		pd = mem_alloc(PAGE_SIZE);
		for (uint64_t m = 0; m < 512; m++)
			pd[m] = (g * GiB + m * 2 * MiB) | PTE_P | PTE_W | PTE_PS;
		pdpt[g % 512] = (uint64_t)pd | PTE_P | PTE_W;
	}
	host_cr3 = (uint64_t)pml4;
	write_cr3(host_cr3);
	pr_debug("identity map 0-%lu GiB with %s pages", (unsigned long)ngb, gb ? "1 GiB" : "2 MiB");
}

uint64_t paging_cr3(void)
{
	return host_cr3;
}
