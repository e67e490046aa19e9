// SPDX-License-Identifier: BSD-2-Clause
/*
 * The host's own page tables: an identity map of the whole physical
 * address range in use (at least 4 GiB, so the local APIC, I/O APIC, HPET
 * and firmware runtime regions are covered), each page typed by what the
 * memory map says is there (vmm/host/paging_build.h): RAM write-back in
 * 1 GiB pages where the CPU has them, MMIO uncached in 2 MiB or 4 KiB.
 */
#include "drivers/io.h"
#include "drivers/serial.h"
#include "vmm/host/log.h"
#include "vmm/host/mem.h"
#include "vmm/host/paging.h"
#include "vmm/host/paging_build.h"
#include "vmm/host/panic.h"

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

static void *alloc_table(void *ctx)
{
	(*(uint32_t *)ctx)++;
	return mem_alloc(PAGE_SIZE);
}

/* An MMIO UART (serial=mmio:, an SPCR's) above the identity map's top
 * gets its page(s) of its own, uncached; below it the map has it
 * uncached already (boot/ refused one in RAM). */
static void map_uart(const struct pg_env *env, uint64_t *pml4, uint64_t top)
{
	struct serial_uart u = serial_current();
	uint64_t end = u.base + serial_span(&u);

	if (u.space == SERIAL_SPACE_IO || !u.base || end <= top)
		return;
	for (uint64_t a = ALIGN_DOWN(MAX(u.base, top), PAGE_SIZE); a < end; a += PAGE_SIZE)
		if (!paging_map_page(env, pml4, a, PG_UC))
			panic("out of memory for the host page tables");
}

void paging_init(const struct boot_info *bi)
{
	uint32_t tables = 0;
	struct pg_env env = {
		.mem = bi->mem, .nmem = bi->nmem,
		.gb_pages = cpuid(0x80000001, 0).edx & CPUID_80000001_EDX_PDPE1GB,
		.alloc_page = alloc_table, .ctx = &tables,
	};
	uint64_t top = map_top(bi), *pml4;

	if (bi->screen.format != FB_NONE) {
		env.fb_base = bi->screen.base;
		env.fb_size = bi->screen.size;
	}
	if (!(pml4 = paging_build(&env, top)))
		panic("out of memory for the host page tables");
	map_uart(&env, pml4, top);
	host_cr3 = (uint64_t)pml4;
	write_cr3(host_cr3);
	pr_debug("identity map 0-%lu GiB: RAM write-back%s, the rest uncached, in %u table pages",
		 (unsigned long)(top / GiB), env.fb_size ? ", framebuffer write-combining" : "",
		 tables);
}

void paging_pat_init(void)
{
	wrmsr(MSR_IA32_PAT, TV_PAT);
}

uint64_t paging_cr3(void)
{
	return host_cr3;
}
