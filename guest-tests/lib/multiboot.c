// SPDX-License-Identifier: BSD-2-Clause
/* Copies the Multiboot information into boot_info. All of the first
 * 4 GiB is identity mapped, so physical addresses are pointers. */
#include "lib/multiboot.h"
#include "lib/string.h"

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
	boot_info.mbi_phys = mbi_phys;
	if (mbi->flags & MB_INFO_MEMORY) {
		boot_info.mem_lower_kib = mbi->mem_lower;
		boot_info.mem_upper_kib = mbi->mem_upper;
	}
	if (mbi->flags & MB_INFO_CMDLINE)
		boot_info.cmdline = mb_string(mbi->cmdline);
	if (mbi->flags & MB_INFO_BOOT_LOADER_NAME)
		boot_info.loader_name = mb_string(mbi->boot_loader_name);
	if (mbi->flags & MB_INFO_MODS) {
		boot_info.mbi_mods_addr = mbi->mods_addr;
		boot_info.mbi_mods_count = mbi->mods_count;
		parse_modules(mbi);
	}
	if (mbi->flags & MB_INFO_MEM_MAP) {
		boot_info.mbi_mmap_addr = mbi->mmap_addr;
		boot_info.mbi_mmap_length = mbi->mmap_length;
		parse_mmap(mbi);
	}
}

uint64_t boot_ram_size(void)
{
	if (!(boot_info.mb_flags & MB_INFO_MEMORY))
		return 0;
	return 1 * MiB + (uint64_t)boot_info.mem_upper_kib * KiB;
}

static bool overlaps(uint64_t start, uint64_t end, uint64_t a, uint64_t len)
{
	return len && start < a + len && a < end;
}

static bool overlaps_str(uint64_t start, uint64_t end, const char *str)
{
	return *str && overlaps(start, end, (uintptr_t)str, strlen(str) + 1);
}

static bool range_is_ram(uint64_t start, uint64_t end)
{
	if (!boot_info.nr_mmap)
		return (boot_info.mb_flags & MB_INFO_MEMORY) &&
		       end <= (uint64_t)boot_info.mem_lower_kib * KiB;
	for (unsigned i = 0; i < boot_info.nr_mmap; i++) {
		const struct boot_mmap *m = &boot_info.mmap[i];

		if (m->type == MB_MMAP_AVAILABLE && m->base <= start && end <= m->base + m->length)
			return true;
	}
	return false;
}

bool boot_range_free(uint64_t start, uint64_t end)
{
	const struct boot_info *b = &boot_info;

	if (!range_is_ram(start, end) ||
	    overlaps(start, end, b->mbi_phys, sizeof(struct mb_info)) ||
	    overlaps(start, end, b->mbi_mmap_addr, b->mbi_mmap_length) ||
	    overlaps(start, end, b->mbi_mods_addr,
		     (uint64_t)b->mbi_mods_count * sizeof(struct mb_module_entry)) ||
	    overlaps_str(start, end, b->cmdline) || overlaps_str(start, end, b->loader_name))
		return false;
	for (unsigned i = 0; i < b->nr_modules; i++)
		if (overlaps(start, end, b->modules[i].start, b->modules[i].end - b->modules[i].start) ||
		    overlaps_str(start, end, b->modules[i].cmdline))
			return false;
	return true;
}
