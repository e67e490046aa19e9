// SPDX-License-Identifier: BSD-2-Clause
/*
 * Linux bzImage loader (see linux.h). Two passes as in multiboot.c: the
 * first reads the setup header and works out every range it will write
 * (kernel, initrd, zero page, command line), the second only copies.
 *
 * Guest memory layout:
 *
 *   0x400 BDA words | 0x6000 GDT | 0x7000 zero page | 0x8000 command line
 *   | ... | 0x9FC00 EBDA (reserved) | 0xF0000 BIOS area, ACPI (reserved)
 *   | 1 MiB RAM ... | kernel at its run address, init_size long | ...
 *   | initrd, as high as RAM and initrd_addr_max allow
 */
#include "vmm/loader/linux.h"
#include "drivers/fmt.h"
#include "drivers/string.h"

struct lx_ctx {
	const uint8_t *image;
	uint64_t image_size;
	uint64_t ram_size;
	char *err;
	size_t errlen;
	/* from the setup header */
	uint16_t protocol;
	uint64_t hdr_end;               /* 0x202 + the jump's offset byte */
	uint64_t pm_offset;             /* protected-mode code in the file */
	uint64_t pm_size;
	bool relocatable;
	uint64_t align;
	uint64_t pref;
	uint64_t init_size;
	uint64_t initrd_max;            /* highest byte the initrd may use */
	uint64_t cmdline_max;           /* characters, NUL excluded */
	/* the plan */
	uint64_t load;                  /* where the protected-mode code goes */
	uint64_t runtime, runtime_end;
	uint64_t initrd, initrd_size;
	uint64_t cmdline_len;
};

#define lx_fail(c, ...) fmt_err((c)->err, (c)->errlen, __VA_ARGS__)

bool linux_is_bzimage(const void *image, uint64_t image_size)
{
	return image_size >= LX_HEADER + 4 && get_le32((const uint8_t *)image + LX_HEADER) == LX_HDR_MAGIC;
}

/* --- "The Real-Mode Kernel Header" ----------------------------------------- */

/* The header's own extent: "0x0202 + byte value at offset 0x0201", which
 * must cover the 2.10 fields read below and lie within the setup code. */
static int lx_header_bounds(struct lx_ctx *c)
{
	const uint8_t *h = c->image;
	unsigned sects = h[LX_SETUP_SECTS] ? h[LX_SETUP_SECTS] : LX_SETUP_SECTS_DEFAULT;

	if (h[LX_JUMP] != LX_JUMP_OPCODE)
		return lx_fail(c, "setup header: no short jump (0xEB) at 0x200");
	c->hdr_end = LX_HEADER + h[LX_JUMP + 1];
	c->pm_offset = (uint64_t)(sects + 1) * LX_SECTOR;
	if (c->hdr_end < LX_HDR_MIN_END)
		return lx_fail(c, "setup header ends at 0x%lx, before the protocol 2.10 fields (0x%x)",
			       c->hdr_end, LX_HDR_MIN_END);
	if (c->hdr_end > c->pm_offset)
		return lx_fail(c, "setup header ends at 0x%lx, past the %u setup sectors",
			       c->hdr_end, sects);
	if (c->hdr_end > LX_HDR_MAX_END)
		return lx_fail(c, "setup header ends at 0x%lx, past the 0x%x the zero page has for it",
			       c->hdr_end, LX_HDR_MAX_END);
	if (c->pm_offset >= c->image_size)
		return lx_fail(c, "file truncated: %lu bytes, the protected-mode kernel starts at 0x%lx",
			       c->image_size, c->pm_offset);
	c->pm_size = c->image_size - c->pm_offset;
	return 0;
}

static int lx_check_version(struct lx_ctx *c)
{
	const uint8_t *h = c->image;

	c->protocol = get_le16(h + LX_VERSION);
	if (c->protocol < LX_PROTOCOL_MIN)
		return lx_fail(c, "boot protocol %u.%02u is older than 2.10 (no pref_address and "
			       "init_size to place the kernel by)", c->protocol >> 8, c->protocol & 0xff);
	if (!(h[LX_LOADFLAGS] & LX_LOADED_HIGH))
		return lx_fail(c, "not a bzImage: loadflags 0x%x lack LOADED_HIGH (a zImage loads "
			       "below 1 MiB through real-mode setup)", h[LX_LOADFLAGS]);
	return 0;
}

/* syssize counts the protected-mode code in 16-byte paragraphs; a file
 * shorter than that lost part of its kernel. */
static int lx_check_size(struct lx_ctx *c)
{
	uint64_t need = (uint64_t)get_le32(c->image + LX_SYSSIZE) * 16;

	if (need > c->pm_size)
		return lx_fail(c, "file truncated: syssize says 0x%lx bytes of protected-mode code, "
			       "the file has 0x%lx", need, c->pm_size);
	return 0;
}

static int lx_read_placement(struct lx_ctx *c)
{
	const uint8_t *h = c->image;
	uint32_t cmdline_size = get_le32(h + LX_CMDLINE_SIZE);

	c->relocatable = h[LX_RELOCATABLE] != 0;
	c->align = get_le32(h + LX_KERNEL_ALIGNMENT);
	c->pref = get_le64(h + LX_PREF_ADDRESS);
	c->init_size = get_le32(h + LX_INIT_SIZE);
	c->initrd_max = get_le32(h + LX_INITRD_ADDR_MAX);
	c->cmdline_max = MIN((uint64_t)cmdline_size, (uint64_t)LX_CMDLINE_MAX - 1);
	if (c->relocatable && (c->align < PAGE_SIZE || (c->align & (c->align - 1))))
		return lx_fail(c, "kernel_alignment 0x%lx is not a power of two of at least 4 KiB",
			       c->align);
	if (!c->pref)
		c->pref = LX_BZIMAGE_LOAD;
	if (c->pref >= 4 * GiB)
		return lx_fail(c, "pref_address 0x%lx is not below 4 GiB for the 32-bit entry", c->pref);
	return 0;
}

static int lx_parse_header(struct lx_ctx *c)
{
	if (c->image_size < LX_HDR_MIN_END)
		return lx_fail(c, "file truncated: %lu bytes, the setup header needs 0x%x",
			       c->image_size, LX_HDR_MIN_END);
	if (get_le32(c->image + LX_HEADER) != LX_HDR_MAGIC)
		return lx_fail(c, "no setup header magic \"HdrS\" at 0x202");
	if (get_le16(c->image + LX_BOOT_FLAG) != LX_BOOT_FLAG_MAGIC)
		return lx_fail(c, "boot_flag at 0x1fe is 0x%x, not 0xAA55",
			       get_le16(c->image + LX_BOOT_FLAG));
	if (lx_check_version(c) || lx_header_bounds(c) || lx_check_size(c))
		return -1;
	return lx_read_placement(c);
}

/* --- where everything goes ------------------------------------------------- */

static void lx_ram_name(const struct lx_ctx *c, char *buf, size_t len)
{
	if (c->ram_size % MiB == 0)
		fmt_snprintf(buf, len, "guest RAM (%lu MiB)", (uint64_t)(c->ram_size / MiB));
	else
		fmt_snprintf(buf, len, "guest RAM (0x%lx bytes)", c->ram_size);
}

/*
 * "Details of Header Fields", init_size: the kernel needs init_size bytes
 * from its runtime start, which is align_up(load address, kernel_alignment)
 * for a relocatable kernel and pref_address otherwise. A relocatable one
 * is loaded at pref_address ("should attempt to load at this address"),
 * so both readings of the rule agree; a 64-bit decompressor also moves a
 * kernel loaded below pref_address up to it. A non-relocatable one is
 * loaded at 1 MiB and moves itself to pref_address, which then must not
 * lie in the low memory this loader and the BIOS area use.
 */
static int lx_place_kernel(struct lx_ctx *c)
{
	char ram[40];

	lx_ram_name(c, ram, sizeof(ram));
	if (c->relocatable) {
		c->load = ALIGN_UP(MAX(c->pref, LX_HIGH_START), c->align);
		c->runtime = c->load;
	} else {
		if (c->pref < LX_HIGH_START)
			return lx_fail(c, "kernel is not relocatable and must run at pref_address 0x%lx, "
				       "below 1 MiB where the boot data and BIOS area are", c->pref);
		c->load = LX_BZIMAGE_LOAD;
		c->runtime = c->pref;
	}
	c->runtime_end = c->runtime + MAX(c->init_size, c->pm_size);
	if (c->runtime_end > c->ram_size || c->load + c->pm_size > c->ram_size)
		return lx_fail(c, "kernel does not fit: it runs at 0x%lx and needs 0x%lx bytes there "
			       "(init_size) up to 0x%lx, beyond %s", c->runtime,
			       c->runtime_end - c->runtime, c->runtime_end, ram);
	/* The 32-bit entry is the load address: it must fit in EIP. */
	if (c->runtime_end > 4 * GiB)
		return lx_fail(c, "kernel at 0x%lx-0x%lx is not below 4 GiB for the 32-bit entry",
			       c->runtime, c->runtime_end);
	return 0;
}

/* Concatenated files, each but the last padded to 4 bytes. */
static uint64_t lx_initrd_size(const struct linux_boot *b)
{
	uint64_t size = 0;

	for (unsigned i = 0; i < b->ninitrd; i++) {
		if (i)
			size = ALIGN_UP(size, LX_INITRD_ALIGN);
		size += b->initrd[i].size;
	}
	return size;
}

/* "initrd_addr_max": the initrd's last byte may not lie above it. As high
 * as possible (as QEMU and GRUB do), page aligned, above the kernel. */
static int lx_place_initrd(struct lx_ctx *c, const struct linux_boot *b)
{
	uint64_t top = MIN(c->ram_size, MIN(c->initrd_max + 1, 4 * GiB));
	uint64_t low = MAX(c->runtime_end, c->load + c->pm_size);
	char ram[40];

	c->initrd_size = lx_initrd_size(b);
	if (!c->initrd_size)
		return 0;
	lx_ram_name(c, ram, sizeof(ram));
	if (c->initrd_size > top || ALIGN_DOWN(top - c->initrd_size, PAGE_SIZE) < low)
		return lx_fail(c, "initrd too big: 0x%lx bytes do not fit between the kernel's end "
			       "0x%lx and 0x%lx (the lower of %s and initrd_addr_max + 1)",
			       c->initrd_size, low, top, ram);
	c->initrd = ALIGN_DOWN(top - c->initrd_size, PAGE_SIZE);
	return 0;
}

static int lx_plan(struct lx_ctx *c, const struct linux_boot *b)
{
	const char *cmdline = b->cmdline ? b->cmdline : "";

	c->cmdline_len = strlen(cmdline);
	if (c->cmdline_len > c->cmdline_max)
		return lx_fail(c, "command line has %lu characters, the kernel takes at most %lu",
			       c->cmdline_len, c->cmdline_max);
	if (c->ram_size < LX_HIGH_START * 2)
		return lx_fail(c, "guest RAM of 0x%lx bytes is below the 2 MiB minimum", c->ram_size);
	if (lx_place_kernel(c))
		return -1;
	return lx_place_initrd(c, b);
}

/* --- writing ----------------------------------------------------------------- */

static void lx_write_e820(const struct lx_ctx *c, uint8_t *bp)
{
	const struct { uint64_t addr, size; uint32_t type; } map[LX_E820_ENTRIES] = {
		{ 0, LX_EBDA_START, LX_E820_RAM },
		{ LX_EBDA_START, LX_EBDA_END - LX_EBDA_START, LX_E820_RESERVED },
		{ LX_BIOS_START, LX_HIGH_START - LX_BIOS_START, LX_E820_RESERVED },
		{ LX_HIGH_START, c->ram_size - LX_HIGH_START, LX_E820_RAM },
	};

	for (unsigned i = 0; i < LX_E820_ENTRIES; i++) {
		uint8_t *e = bp + LX_BP_E820_TABLE + i * LX_E820_ENTRY_LEN;

		put_le64(e, map[i].addr);
		put_le64(e + 8, map[i].size);
		put_le32(e + 16, map[i].type);
	}
	bp[LX_BP_E820_ENTRIES] = LX_E820_ENTRIES;
}

/* "32-bit Boot Protocol": the zero page, all zero, with the kernel's
 * setup header copied in and the loader's fields written. */
static void lx_write_zero_page(const struct lx_ctx *c, uint8_t *ram, const struct linux_boot *b)
{
	uint8_t *bp = ram + LX_ZERO_PAGE;

	memset(bp, 0, LX_BP_SIZE);
	memcpy(bp + LX_SETUP_SECTS, c->image + LX_SETUP_SECTS, c->hdr_end - LX_SETUP_SECTS);
	bp[LX_TYPE_OF_LOADER] = LX_LOADER_UNDEFINED;
	/* No real-mode setup runs, so there is no setup heap to promise. */
	bp[LX_LOADFLAGS] &= (uint8_t)~LX_CAN_USE_HEAP;
	put_le32(bp + LX_CODE32_START, (uint32_t)c->load);
	put_le32(bp + LX_RAMDISK_IMAGE, (uint32_t)c->initrd);
	put_le32(bp + LX_RAMDISK_SIZE, (uint32_t)c->initrd_size);
	put_le32(bp + LX_CMD_LINE_PTR, (uint32_t)LX_CMDLINE_ADDR);
	put_le64(bp + LX_BP_ACPI_RSDP, b->acpi_rsdp);
	lx_write_e820(c, bp);
}

static void lx_write_initrd(const struct lx_ctx *c, uint8_t *ram, const struct linux_boot *b)
{
	uint64_t at = c->initrd;

	for (unsigned i = 0; i < b->ninitrd; i++) {
		if (i) {
			uint64_t pad = ALIGN_UP(at, LX_INITRD_ALIGN);

			memset(ram + at, 0, pad - at);
			at = pad;
		}
		if (b->initrd[i].size)
			memcpy(ram + at, b->initrd[i].data, b->initrd[i].size);
		at += b->initrd[i].size;
	}
}

/* What a PC BIOS leaves in its data area for the EBDA scan, and a GDT
 * with the two flat descriptors the protocol asks for. */
static void lx_write_low(uint8_t *ram)
{
	static const uint64_t gdt[LX_GDT_ENTRIES] = {
		[LX_BOOT_CS / 8] = LX_GDT_CODE32,
		[LX_BOOT_DS / 8] = LX_GDT_DATA32,
	};

	put_le16(ram + LX_BDA_EBDA_SEG, (uint16_t)(LX_EBDA_START >> 4));
	put_le16(ram + LX_BDA_BASE_MEM_KIB, LX_BASE_MEM_KIB);
	for (unsigned i = 0; i < LX_GDT_ENTRIES; i++)
		put_le64(ram + LX_GDT_ADDR + i * 8, gdt[i]);
}

int linux_load(uint8_t *ram, uint64_t ram_size, const void *image, uint64_t image_size,
	       const struct linux_boot *b, struct linux_result *out, char *err, size_t errlen)
{
	struct lx_ctx c = {
		.image = image, .image_size = image_size, .ram_size = ram_size,
		.err = err, .errlen = errlen,
	};

	if (lx_parse_header(&c) || lx_plan(&c, b))
		return -1;
	memcpy(ram + c.load, c.image + c.pm_offset, c.pm_size);
	lx_write_initrd(&c, ram, b);
	memcpy(ram + LX_CMDLINE_ADDR, b->cmdline ? b->cmdline : "", c.cmdline_len + 1);
	lx_write_low(ram);
	lx_write_zero_page(&c, ram, b);
	*out = (struct linux_result){
		.entry = (uint32_t)c.load, .boot_params = (uint32_t)LX_ZERO_PAGE,
		.gdt = (uint32_t)LX_GDT_ADDR, .protocol = c.protocol,
		.kernel_start = c.load, .kernel_end = c.load + c.pm_size,
		.runtime_start = c.runtime, .runtime_end = c.runtime_end,
		.initrd_start = c.initrd_size ? c.initrd : 0, .initrd_size = c.initrd_size,
	};
	if (errlen)
		err[0] = 0;
	return 0;
}
