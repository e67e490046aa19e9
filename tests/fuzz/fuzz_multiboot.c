// SPDX-License-Identifier: BSD-2-Clause
/*
 * vmm/loader/multiboot.c: a 9-byte header (RAM size in pages, LE16; the
 * module count and command line; three module sizes, LE16), then the
 * kernel image, loaded into fake guest RAM (tests/fuzz/fuzz_ram.h).
 * Invariants:
 *  - a rejected image has a one-line reason and left RAM untouched;
 *  - an accepted one wrote only inside [kernel_start, used_end), below
 *    min(RAM, 4 GiB); its entry lies in the kernel; the boot information
 *    at EBX is as "Boot information format" says: memory sizes from the
 *    RAM, the command line and loader name, one entry per module, page
 *    aligned, with the module's bytes, apart from each other, the kernel
 *    and the boot information, and the four memory map entries.
 */
#include <stdlib.h>

#include "tests/fuzz/fuzz.h"
#include "tests/fuzz/fuzz_ram.h"
#include "vmm/loader/multiboot.h"

#define HDR_LEN         9u
#define MOD_MAX         3u

static uint8_t mod_data[MOD_MAX][64 * KiB];
static const char *const mod_names[MOD_MAX] = { "initrd.cpio", "", "mod2 arg=1" };
static char long_cmdline[600];

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_ram_init();
	for (unsigned m = 0; m < MOD_MAX; m++)
		for (size_t i = 0; i < sizeof(mod_data[m]); i++)
			mod_data[m][i] = (uint8_t)(i * 7 + m + 1);
	memset(long_cmdline, 'c', sizeof(long_cmdline) - 1);
	return 0;
}

static bool overlap(uint64_t a, uint64_t a_end, uint64_t b, uint64_t b_end)
{
	return a < b_end && b < a_end;
}

static const char *guest_str(uint32_t addr, uint64_t end)
{
	FUZZ_CHECK(addr < end);
	FUZZ_CHECK(memchr(fuzz_ram + addr, 0, end - addr));
	return (const char *)fuzz_ram + addr;
}

static void check_loaded(const struct mb_result *r, uint64_t ram_size, const char *cmdline,
			 const struct mb_module *mods, unsigned nmods)
{
	uint64_t limit = MIN(ram_size, 4 * GiB);
	struct mb_info mbi;
	struct mb_module_entry me[MOD_MAX];

	FUZZ_CHECK(r->magic == MB_BOOTLOADER_MAGIC);
	FUZZ_CHECK(r->kernel_start < r->kernel_end && r->kernel_end <= r->used_end);
	FUZZ_CHECK(r->used_end <= limit);
	FUZZ_CHECK(r->entry >= r->kernel_start && r->entry < r->kernel_end);
	FUZZ_CHECK(r->mbi % PAGE_SIZE == 0 && r->mbi >= r->kernel_end);
	FUZZ_CHECK(r->mbi + sizeof(mbi) <= r->used_end);
	FUZZ_CHECK(!fuzz_ram_wrote_outside(r->kernel_start, r->used_end));

	memcpy(&mbi, fuzz_ram + r->mbi, sizeof(mbi));
	FUZZ_CHECK(mbi.flags == (MB_INFO_MEMORY | MB_INFO_CMDLINE | MB_INFO_MODS |
				 MB_INFO_MEM_MAP | MB_INFO_BOOT_LOADER_NAME));
	FUZZ_CHECK(mbi.mem_lower == MB_MEM_LOWER_KIB);
	FUZZ_CHECK(mbi.mem_upper == (ram_size - MB_HIGH_START) / KiB);
	FUZZ_CHECK(!strcmp(guest_str(mbi.cmdline, r->used_end), cmdline));
	FUZZ_CHECK(!strcmp(guest_str(mbi.boot_loader_name, r->used_end), MB_LOADER_NAME));
	FUZZ_CHECK(mbi.mmap_length == MB_MMAP_ENTRIES * sizeof(struct mb_mmap_entry));
	FUZZ_CHECK(mbi.mmap_addr >= r->mbi && mbi.mmap_addr + mbi.mmap_length <= r->used_end);
	FUZZ_CHECK(mbi.mods_count == nmods);
	FUZZ_CHECK(mbi.mods_addr + nmods * sizeof(me[0]) <= r->used_end);
	memcpy(me, fuzz_ram + mbi.mods_addr, nmods * sizeof(me[0]));
	for (unsigned i = 0; i < nmods; i++) {
		FUZZ_CHECK(me[i].mod_start % PAGE_SIZE == 0);
		FUZZ_CHECK(me[i].mod_end - me[i].mod_start == mods[i].size);
		FUZZ_CHECK(me[i].mod_start >= r->kernel_end && me[i].mod_end <= r->mbi);
		FUZZ_CHECK(!memcmp(fuzz_ram + me[i].mod_start, mods[i].data, mods[i].size));
		FUZZ_CHECK(!strcmp(guest_str(me[i].string, r->used_end), mods[i].string));
		for (unsigned j = 0; j < i; j++)
			FUZZ_CHECK(!overlap(me[i].mod_start, me[i].mod_end,
					    me[j].mod_start, me[j].mod_end));
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	uint64_t ram_size = (uint64_t)fuzz_u16(&in) * PAGE_SIZE;
	uint8_t sel = fuzz_u8(&in);
	unsigned nmods = sel % (MOD_MAX + 1);
	const char *cmdline = sel & 0x10 ? long_cmdline : sel & 0x20 ? NULL : "console=ttyS0 -x";
	struct mb_module mods[MOD_MAX];
	struct mb_result res;
	char err[MB_ERR_LEN];
	int r;

	for (unsigned i = 0; i < MOD_MAX; i++)
		mods[i] = (struct mb_module){
			mod_data[i], fuzz_u16(&in) % (sizeof(mod_data[i]) + 1),
			sel & 0x40 ? NULL : mod_names[i],
		};
	if (size < HDR_LEN)
		return 0;
	ram_size = MIN(ram_size, (uint64_t)FUZZ_RAM_MAX);
	memset(err, 0x5a, sizeof(err));
	fuzz_ram_begin(ram_size);
	r = multiboot_load(fuzz_ram, ram_size, data + HDR_LEN, size - HDR_LEN, cmdline, mods,
			   nmods, &res, err, sizeof(err));
	FUZZ_CHECK(r == 0 || r == -1);
	FUZZ_CHECK(memchr(err, 0, sizeof(err)));
	FUZZ_SAY("multiboot_load: %d %s (%u pages written)\n", r, r ? err : "", fuzz_ram_ndirty);
	if (r) {
		FUZZ_CHECK(err[0]);
		FUZZ_CHECK(fuzz_ram_ndirty == 0);       /* "guest RAM left untouched" */
	} else {
		for (unsigned i = 0; i < MOD_MAX; i++)
			if (!mods[i].string)
				mods[i].string = "";
		check_loaded(&res, ram_size, cmdline ? cmdline : "", mods, nmods);
	}
	fuzz_ram_end();
	return 0;
}
