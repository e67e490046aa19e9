// SPDX-License-Identifier: BSD-2-Clause
/*
 * vmm/loader/linux.c, the bzImage setup-header parser and loader: an
 * 11-byte header (RAM size in pages, LE16; the initrd count and command
 * line; two initrd sizes, LE16; the RSDP address, LE32), then the image,
 * loaded into fake guest RAM (tests/fuzz/fuzz_ram.h). Invariants:
 *  - a rejected image has a one-line reason and left RAM untouched;
 *  - an accepted one wrote only the BIOS data area words, the GDT, the
 *    zero page, the command line, the kernel and the initrd, each where
 *    the result says and inside RAM; the kernel runs at or above 1 MiB,
 *    init_size fits below RAM and 4 GiB; the initrd is page aligned,
 *    above the kernel, below initrd_addr_max; the bytes are the image's
 *    and the initrd files'; the zero page holds the setup header with the
 *    loader's fields ("32-bit Boot Protocol"), the e820 map and the RSDP.
 */
#include <stdlib.h>

#include "tests/fuzz/fuzz.h"
#include "tests/fuzz/fuzz_ram.h"
#include "vmm/loader/linux.h"

#define HDR_LEN         11u
#define INITRD_MAX      2u

static uint8_t initrd_data[INITRD_MAX][64 * KiB];
static char long_cmdline[LX_CMDLINE_MAX + 2];

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_ram_init();
	for (unsigned m = 0; m < INITRD_MAX; m++)
		for (size_t i = 0; i < sizeof(initrd_data[m]); i++)
			initrd_data[m][i] = (uint8_t)(i * 13 + m + 1);
	memset(long_cmdline, 'c', sizeof(long_cmdline) - 1);
	return 0;
}

struct range { uint64_t start, end; };

static bool wrote_only(const struct range *r, unsigned n)
{
	for (unsigned i = 0; i < fuzz_ram_ndirty; i++) {
		uint64_t p = fuzz_ram_dirty[i] * PAGE_SIZE;
		bool in = false;

		for (unsigned j = 0; j < n && !in; j++)
			in = r[j].start < p + PAGE_SIZE && p < r[j].end;
		if (!in)
			return false;
	}
	return true;
}

static void check_loaded(const struct linux_result *res, const uint8_t *img, uint64_t img_size,
			 uint64_t ram_size, const struct linux_boot *b)
{
	const uint8_t *bp = fuzz_ram + LX_ZERO_PAGE;
	const char *cmdline = b->cmdline ? b->cmdline : "";
	size_t cl = strlen(cmdline);
	unsigned sects = img[LX_SETUP_SECTS] ? img[LX_SETUP_SECTS] : LX_SETUP_SECTS_DEFAULT;
	uint64_t pm_off = (uint64_t)(sects + 1) * LX_SECTOR, pm_size = img_size - pm_off, at;
	uint64_t initrd_max = get_le32(img + LX_INITRD_ADDR_MAX);
	const struct range ok[] = {
		{ LX_BDA_EBDA_SEG, LX_BDA_BASE_MEM_KIB + 2 },
		{ LX_GDT_ADDR, LX_GDT_ADDR + 8 * LX_GDT_ENTRIES },
		{ LX_ZERO_PAGE, LX_ZERO_PAGE + LX_BP_SIZE },
		{ LX_CMDLINE_ADDR, LX_CMDLINE_ADDR + cl + 1 },
		{ res->kernel_start, res->kernel_end },
		{ res->initrd_start, res->initrd_start + res->initrd_size },
	};

	FUZZ_CHECK(res->protocol >= LX_PROTOCOL_MIN);
	FUZZ_CHECK(res->entry == res->kernel_start && res->kernel_start >= LX_HIGH_START);
	FUZZ_CHECK(res->kernel_end - res->kernel_start == pm_size);
	FUZZ_CHECK(res->kernel_end <= ram_size && res->runtime_end <= ram_size);
	FUZZ_CHECK(res->runtime_start >= LX_HIGH_START && res->runtime_end <= 4 * GiB);
	FUZZ_CHECK(res->runtime_end - res->runtime_start >= MAX(pm_size, get_le32(img + LX_INIT_SIZE)));
	FUZZ_CHECK(res->boot_params == LX_ZERO_PAGE && res->gdt == LX_GDT_ADDR);
	if (res->initrd_size) {
		FUZZ_CHECK(res->initrd_start % PAGE_SIZE == 0);
		FUZZ_CHECK(res->initrd_start >= MAX(res->runtime_end, res->kernel_end));
		FUZZ_CHECK(res->initrd_start + res->initrd_size <= ram_size);
		FUZZ_CHECK(res->initrd_start + res->initrd_size - 1 <= initrd_max);
	}
	FUZZ_CHECK(wrote_only(ok, ARRAY_SIZE(ok)));
	FUZZ_CHECK(!memcmp(fuzz_ram + res->kernel_start, img + pm_off, pm_size));
	at = res->initrd_start;
	for (unsigned i = 0; i < b->ninitrd; i++) {
		if (i)
			at = ALIGN_UP(at, LX_INITRD_ALIGN);
		FUZZ_CHECK(!memcmp(fuzz_ram + at, b->initrd[i].data, b->initrd[i].size));
		at += b->initrd[i].size;
	}
	FUZZ_CHECK(at - res->initrd_start == res->initrd_size);
	FUZZ_CHECK(!memcmp(fuzz_ram + LX_CMDLINE_ADDR, cmdline, cl + 1));
	/* the zero page: the header copied, the loader's fields written */
	FUZZ_CHECK(get_le32(bp + LX_HEADER) == LX_HDR_MAGIC);
	FUZZ_CHECK(get_le16(bp + LX_VERSION) == res->protocol);
	FUZZ_CHECK(bp[LX_TYPE_OF_LOADER] == LX_LOADER_UNDEFINED);
	FUZZ_CHECK(!(bp[LX_LOADFLAGS] & LX_CAN_USE_HEAP) && (bp[LX_LOADFLAGS] & LX_LOADED_HIGH));
	FUZZ_CHECK(get_le32(bp + LX_CODE32_START) == res->kernel_start);
	FUZZ_CHECK(get_le32(bp + LX_CMD_LINE_PTR) == LX_CMDLINE_ADDR);
	FUZZ_CHECK(get_le32(bp + LX_RAMDISK_IMAGE) == (res->initrd_size ? res->initrd_start : 0));
	FUZZ_CHECK(get_le32(bp + LX_RAMDISK_SIZE) == res->initrd_size);
	FUZZ_CHECK(get_le64(bp + LX_BP_ACPI_RSDP) == b->acpi_rsdp);
	FUZZ_CHECK(bp[LX_BP_E820_ENTRIES] == LX_E820_ENTRIES);
	FUZZ_CHECK(get_le64(bp + LX_BP_E820_TABLE + 3 * LX_E820_ENTRY_LEN + 8) ==
		   ram_size - LX_HIGH_START);
	FUZZ_CHECK(!memcmp(bp + LX_SETUP_SECTS, img + LX_SETUP_SECTS, LX_TYPE_OF_LOADER - LX_SETUP_SECTS));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	uint64_t ram_size = (uint64_t)fuzz_u16(&in) * PAGE_SIZE;
	uint8_t sel = fuzz_u8(&in);
	struct linux_initrd initrd[INITRD_MAX];
	struct linux_boot boot = {
		.cmdline = sel & 4 ? long_cmdline : sel & 8 ? NULL : "console=ttyS0 quiet",
		.initrd = initrd, .ninitrd = sel % (INITRD_MAX + 1),
	};
	struct linux_result res;
	char err[LX_ERR_LEN];
	int r;

	for (unsigned i = 0; i < INITRD_MAX; i++)
		initrd[i] = (struct linux_initrd){
			initrd_data[i], fuzz_u16(&in) % (sizeof(initrd_data[i]) + 1), "initrd",
		};
	boot.acpi_rsdp = fuzz_u32(&in);
	if (size < HDR_LEN)
		return 0;
	ram_size = MIN(ram_size, (uint64_t)FUZZ_RAM_MAX);
	memset(err, 0x5a, sizeof(err));
	fuzz_ram_begin(ram_size);
	r = linux_load(fuzz_ram, ram_size, data + HDR_LEN, size - HDR_LEN, &boot, &res, err,
		       sizeof(err));
	FUZZ_SAY("linux_load: %d %s (%u pages written)\n", r, r ? err : "", fuzz_ram_ndirty);
	FUZZ_CHECK(r == 0 || r == -1);
	FUZZ_CHECK(memchr(err, 0, sizeof(err)));
	if (r) {
		FUZZ_CHECK(err[0]);
		FUZZ_CHECK(fuzz_ram_ndirty == 0);       /* "guest RAM untouched" */
	} else {
		check_loaded(&res, data + HDR_LEN, size - HDR_LEN, ram_size, &boot);
	}
	fuzz_ram_end();
	return 0;
}
