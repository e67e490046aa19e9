// SPDX-License-Identifier: BSD-2-Clause
/* Copies the Multiboot information into boot_info. All of the first
 * 4 GiB is identity mapped, so physical addresses are pointers. */
#include "lib/multiboot.h"

struct boot_info boot_info = { .cmdline = "", .loader_name = "" };

static const char *mb_string(uint32_t phys)
{
	return phys ? (const char *)(uintptr_t)phys : "";
}

static void parse_modules(const struct mb_info *mbi)
{
	const struct mb_module_entry *m = (const void *)(uintptr_t)mbi->mods_addr;

	for (uint32_t i = 0; i < mbi->mods_count && i < BOOT_MAX_MODULES; i++) {
		boot_info.modules[i] = (struct boot_module){
			.start = m[i].mod_start, .end = m[i].mod_end,
			.cmdline = mb_string(m[i].string),
		};
		boot_info.nr_modules++;
	}
}

static void parse_mmap(const struct mb_info *mbi)
{
	uintptr_t p = mbi->mmap_addr, end = p + mbi->mmap_length;

	while (p + sizeof(struct mb_mmap_entry) <= end && boot_info.nr_mmap < BOOT_MAX_MMAP) {
		const struct mb_mmap_entry *e = (const void *)p;

		boot_info.mmap[boot_info.nr_mmap++] = (struct boot_mmap){
			.base = e->base_addr, .length = e->length, .type = e->type,
		};
		p += e->size + sizeof(e->size);
	}
}

void multiboot_parse(uint32_t mbi_phys)
{
	const struct mb_info *mbi = (const void *)(uintptr_t)mbi_phys;

	boot_info.mb_flags = mbi->flags;
	if (mbi->flags & MB_INFO_MEMORY) {
		boot_info.mem_lower_kib = mbi->mem_lower;
		boot_info.mem_upper_kib = mbi->mem_upper;
	}
	if (mbi->flags & MB_INFO_CMDLINE)
		boot_info.cmdline = mb_string(mbi->cmdline);
	if (mbi->flags & MB_INFO_BOOT_LOADER_NAME)
		boot_info.loader_name = mb_string(mbi->boot_loader_name);
	if (mbi->flags & MB_INFO_MODS)
		parse_modules(mbi);
	if (mbi->flags & MB_INFO_MEM_MAP)
		parse_mmap(mbi);
}

uint64_t boot_ram_size(void)
{
	if (!(boot_info.mb_flags & MB_INFO_MEMORY))
		return 0;
	return 1 * MiB + (uint64_t)boot_info.mem_upper_kib * KiB;
}
