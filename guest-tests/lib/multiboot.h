/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The Multiboot v1 boot information (Multiboot Specification 0.6.96,
 * "Boot information format"), and what the runtime keeps of it.
 */
#ifndef GUEST_MULTIBOOT_H
#define GUEST_MULTIBOOT_H

#include "lib/bits.h"

/* mb_info.flags: which fields the loader filled in. */
#define MB_INFO_MEMORY          BIT(0)
#define MB_INFO_CMDLINE         BIT(2)
#define MB_INFO_MODS            BIT(3)
#define MB_INFO_MEM_MAP         BIT(6)
#define MB_INFO_BOOT_LOADER_NAME BIT(9)

struct mb_info {
	uint32_t flags;
	uint32_t mem_lower;             /* KiB from 0 */
	uint32_t mem_upper;             /* KiB from 1 MiB to the first hole */
	uint32_t boot_device;
	uint32_t cmdline;               /* physical address of a C string */
	uint32_t mods_count;
	uint32_t mods_addr;
	uint32_t syms[4];
	uint32_t mmap_length;           /* bytes */
	uint32_t mmap_addr;
	uint32_t drives_length;
	uint32_t drives_addr;
	uint32_t config_table;
	uint32_t boot_loader_name;
} __packed;

struct mb_module_entry {
	uint32_t mod_start;
	uint32_t mod_end;               /* one past the last byte */
	uint32_t string;
	uint32_t reserved;
} __packed;

/* `size` counts the bytes after itself: an entry takes size + 4. */
struct mb_mmap_entry {
	uint32_t size;
	uint64_t base_addr;
	uint64_t length;
	uint32_t type;                  /* MB_MMAP_* */
} __packed;
#define MB_MMAP_AVAILABLE       1u

#define BOOT_MAX_MODULES        8u
#define BOOT_MAX_MMAP           32u

struct boot_module {
	uint64_t start, end;            /* physical, [start, end) */
	const char *cmdline;            /* "" if none */
};

struct boot_mmap {
	uint64_t base, length;
	uint32_t type;                  /* MB_MMAP_AVAILABLE is RAM */
};

/* What the loader told us, in plain form. Strings point into the
 * loader's memory, which the guest never reuses: boot_range_free() keeps
 * the SMP trampoline off it. */
struct boot_info {
	uint32_t mb_flags;              /* mb_info.flags as given */
	uint32_t mbi_phys;              /* struct mb_info itself */
	uint32_t mbi_mmap_addr, mbi_mmap_length;        /* the raw memory map */
	uint32_t mbi_mods_addr, mbi_mods_count;         /* the raw module list */
	uint32_t mem_lower_kib;         /* valid with MB_INFO_MEMORY */
	uint32_t mem_upper_kib;
	const char *cmdline;            /* "" if none */
	const char *loader_name;        /* "" if none */
	unsigned nr_modules;
	struct boot_module modules[BOOT_MAX_MODULES];
	unsigned nr_mmap;
	struct boot_mmap mmap[BOOT_MAX_MMAP];
};

extern struct boot_info boot_info;

void multiboot_parse(uint32_t mbi_phys);

/* RAM below the first hole above 1 MiB: 1 MiB + mem_upper; 0 if the
 * loader gave no memory information. */
uint64_t boot_ram_size(void);

/* [start, end) is RAM (an available memory map entry, else below
 * mem_lower) and holds nothing the loader handed over: the boot
 * information, its arrays and strings, the modules. false without any
 * memory information. */
bool boot_range_free(uint64_t start, uint64_t end);

#endif
