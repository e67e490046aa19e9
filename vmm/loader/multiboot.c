// SPDX-License-Identifier: BSD-2-Clause
/*
 * Multiboot v1 loader (see multiboot.h). Two passes: the first reads the
 * image and works out every range it will write (kernel segments, modules,
 * boot information), checking each against the file, guest RAM and 2^64;
 * the second only copies. A rejected image leaves guest RAM untouched.
 *
 * Guest memory layout, all below min(RAM, 4 GiB):
 *
 *   kernel segments (where the image says) | pad to 4 KiB | module 0 |
 *   pad | module 1 | ... | pad | mb_info, mb_module_entry[], memory map,
 *   command line, loader name, module strings
 */
#include "vmm/loader/multiboot.h"
#include "drivers/fmt.h"
#include "drivers/string.h"

/* ELF "ELF Identification": e_ident indexes and values. */
enum elf_ident {
	EI_MAG0                 = 0,    /* 0x7f 'E' 'L' 'F' */
	EI_CLASS                = 4,
	EI_DATA                 = 5,
	EI_NIDENT               = 16,
};
#define   ELFCLASS32            1u
#define   ELFCLASS64            2u
#define   ELFDATA2LSB           1u

/* ELF "ELF Header": the fields both classes keep at the same offset. */
enum elf_ehdr_off {
	E_TYPE                  = 16,
	E_MACHINE               = 18,
};
#define   ET_EXEC               2u
#define   EM_386                3u
#define   EM_X86_64             62u
#define PN_XNUM                 0xffffu /* real count elsewhere: unsupported */
#define PT_LOAD                 1u

/* The rest of "ELF Header" and "Program Header" move with the class:
 * Elf32_Addr/Off are 4 bytes, Elf64_Addr/Off 8, and ELF64 moves p_flags
 * up next to p_type. One row per class instead of two parsers. */
struct elf_layout {
	const char *name;
	uint16_t machine;
	const char *machine_name;
	uint8_t word;                   /* sizeof(ElfN_Addr), sizeof(ElfN_Off) */
	uint8_t ehdr_len;
	uint8_t e_entry, e_phoff, e_phentsize, e_phnum;
	uint8_t phdr_len;
	uint8_t p_type, p_offset, p_vaddr, p_paddr, p_filesz, p_memsz;
};

static const struct elf_layout elf_layouts[] = {
	[ELFCLASS32] = {
		.name = "ELF32", .machine = EM_386, .machine_name = "EM_386",
		 .word = 4, .ehdr_len = 52,
		.e_entry = 24, .e_phoff = 28, .e_phentsize = 42, .e_phnum = 44,
		.phdr_len = 32, .p_type = 0, .p_offset = 4, .p_vaddr = 8,
		.p_paddr = 12, .p_filesz = 16, .p_memsz = 20,
	},
	[ELFCLASS64] = {
		.name = "ELF64", .machine = EM_X86_64, .machine_name = "EM_X86_64",
		 .word = 8, .ehdr_len = 64,
		.e_entry = 24, .e_phoff = 32, .e_phentsize = 54, .e_phnum = 56,
		.phdr_len = 56, .p_type = 0, .p_offset = 8, .p_vaddr = 16,
		.p_paddr = 24, .p_filesz = 32, .p_memsz = 40,
	},
};

/* One range of the kernel image: file bytes [offset, offset + filesz)
 * go to [paddr, paddr + filesz), the rest up to memsz is zeroed. */
struct mb_seg {
	unsigned index;                 /* program header number, for messages */
	uint64_t offset;
	uint64_t filesz;
	uint64_t vaddr;                 /* where it was linked (ELF only) */
	uint64_t paddr;
	uint64_t memsz;
};

struct mb_ctx {
	const uint8_t *image;
	uint64_t image_size;
	uint64_t limit;                 /* everything placed ends below this */
	char where[40];                 /* "guest RAM (128 MiB)", for messages */
	char *err;
	size_t errlen;
	bool aout;                      /* loaded by the a.out kludge fields */
	struct mb_seg segs[MB_MAX_SEGMENTS];
	unsigned nsegs;
	uint32_t entry;                 /* physical */
	uint64_t kernel_start, kernel_end;
	/* the boot information block and its parts */
	uint64_t info, info_mods, info_mmap, info_strings, info_end;
};

static uint64_t get_word(const uint8_t *p, unsigned word)
{
	return word == 8 ? get_le64(p) : get_le32(p);
}

#define mb_fail(c, ...) fmt_err((c)->err, (c)->errlen, __VA_ARGS__)

static void mb_init(struct mb_ctx *c, uint64_t ram_size, const void *image, uint64_t image_size)
{
	c->image = image;
	c->image_size = image_size;
	/* mb_info holds 32-bit addresses: nothing may be placed above 4 GiB. */
	c->limit = MIN(ram_size, 4 * GiB);
	if (ram_size > 4 * GiB)
		fmt_snprintf(c->where, sizeof(c->where), "the first 4 GiB of guest RAM");
	else if (ram_size % MiB == 0)
		fmt_snprintf(c->where, sizeof(c->where), "guest RAM (%lu MiB)",
			     (uint64_t)(ram_size / MiB));
	else
		fmt_snprintf(c->where, sizeof(c->where), "guest RAM (0x%lx bytes)", ram_size);
}

/* --- "Header layout" ------------------------------------------------------ */

/* The first 4-byte aligned magic whose checksum holds, wholly inside the
 * first 8192 bytes and inside the file. A magic with a bad checksum may be
 * just data (QEMU and GRUB keep looking too), but is the likelier reason
 * when nothing else turns up. */
static int mb_find_header(struct mb_ctx *c, uint64_t *off)
{
	uint64_t end = MIN(c->image_size, (uint64_t)MB_SEARCH_LEN);
	uint64_t bad = UINT64_MAX;

	for (uint64_t i = 0; i + MB_HEADER_LEN <= end; i += MB_HEADER_ALIGN) {
		const uint8_t *h = c->image + i;

		if (get_le32(h) != MB_HEADER_MAGIC)
			continue;
		if ((uint32_t)(get_le32(h) + get_le32(h + 4) + get_le32(h + 8)) == 0) {
			*off = i;
			return 0;
		}
		if (bad == UINT64_MAX)
			bad = i;
	}
	if (bad != UINT64_MAX)
		return mb_fail(c, "header checksum is wrong (magic at offset 0x%lx)", bad);
	return mb_fail(c, "no Multiboot header in the first %u bytes", MB_SEARCH_LEN);
}

/* Bits 0-15 are requirements: "If the boot loader does not understand all
 * the bits set in this field, it must fail". */
static int mb_check_flags(struct mb_ctx *c, uint32_t flags)
{
	uint32_t unknown = flags & (uint32_t)(MB_HF_REQUIRED & ~MB_HF_UNDERSTOOD);

	if (unknown)
		return mb_fail(c, "header requires unsupported features (flags 0x%x, unknown 0x%x)",
			       flags, unknown);
	return 0;
}

/* "The address fields of Multiboot header": the file from the header's
 * offset minus (header_addr - load_addr) is loaded at load_addr. */
static int mb_parse_aout(struct mb_ctx *c, uint64_t hoff, uint64_t *entry)
{
	const uint8_t *h = c->image + hoff;
	struct mb_seg *s = &c->segs[0];
	uint32_t header_addr, load_addr, load_end, bss_end;

	if (hoff + MB_HEADER_AOUT_LEN > MIN(c->image_size, (uint64_t)MB_SEARCH_LEN))
		return mb_fail(c, "a.out kludge: the address fields at 0x%lx end past the file or its first %u bytes",
			       hoff + MB_HEADER_LEN, MB_SEARCH_LEN);
	header_addr = get_le32(h + offsetof(struct mb_header, header_addr));
	load_addr = get_le32(h + offsetof(struct mb_header, load_addr));
	load_end = get_le32(h + offsetof(struct mb_header, load_end_addr));
	bss_end = get_le32(h + offsetof(struct mb_header, bss_end_addr));
	if (load_addr > header_addr)
		return mb_fail(c, "a.out kludge: load_addr 0x%x is above header_addr 0x%x",
			       load_addr, header_addr);
	if (header_addr - load_addr > hoff)
		return mb_fail(c, "a.out kludge: header_addr - load_addr = 0x%x but the header is at file offset 0x%lx",
			       header_addr - load_addr, hoff);
	if (load_end && load_end < load_addr)
		return mb_fail(c, "a.out kludge: load_end_addr 0x%x is below load_addr 0x%x",
			       load_end, load_addr);
	s->index = 0;
	s->offset = hoff - (header_addr - load_addr);
	s->filesz = load_end ? load_end - load_addr : c->image_size - s->offset;
	s->paddr = s->vaddr = load_addr;
	if (bss_end && bss_end < load_addr + s->filesz)
		return mb_fail(c, "a.out kludge: bss_end_addr 0x%x is below the end of the loaded image 0x%lx",
			       bss_end, load_addr + s->filesz);
	s->memsz = bss_end ? bss_end - load_addr : s->filesz;
	c->nsegs = 1;
	c->aout = true;
	*entry = get_le32(h + offsetof(struct mb_header, entry_addr));
	return 0;
}

/* --- ELF ------------------------------------------------------------------ */

static int elf_identify(struct mb_ctx *c, const struct elf_layout **layout)
{
	static const uint8_t magic[4] = { 0x7f, 'E', 'L', 'F' };
	const uint8_t *e = c->image;
	const struct elf_layout *l = NULL;

	if (c->image_size < EI_NIDENT || memcmp(e + EI_MAG0, magic, sizeof(magic)))
		return mb_fail(c, "not an ELF file and no a.out kludge");
	if (e[EI_CLASS] != ELFCLASS32 && e[EI_CLASS] != ELFCLASS64)
		return mb_fail(c, "ELF class %u is neither ELFCLASS32 nor ELFCLASS64", e[EI_CLASS]);
	if (e[EI_DATA] != ELFDATA2LSB)
		return mb_fail(c, "ELF data encoding %u is not little-endian", e[EI_DATA]);
	l = &elf_layouts[e[EI_CLASS]];
	if (c->image_size < l->ehdr_len)
		return mb_fail(c, "file truncated: the %s header needs 0x%x bytes but the file has 0x%lx",
			       l->name, l->ehdr_len, c->image_size);
	if (get_le16(e + E_TYPE) != ET_EXEC)
		return mb_fail(c, "ELF type %u is not ET_EXEC", get_le16(e + E_TYPE));
	if (get_le16(e + E_MACHINE) != l->machine)
		return mb_fail(c, "%s machine %u is not %s", l->name, get_le16(e + E_MACHINE),
			       l->machine_name);
	*layout = l;
	return 0;
}

/* Reads program header i into *s; false for all but PT_LOAD. */
static bool elf_read_phdr(const struct mb_ctx *c, const struct elf_layout *l, uint64_t phoff,
			  unsigned i, struct mb_seg *s)
{
	const uint8_t *p = c->image + phoff;

	if (get_le32(p + l->p_type) != PT_LOAD)
		return false;
	s->index = i;
	s->offset = get_word(p + l->p_offset, l->word);
	s->vaddr = get_word(p + l->p_vaddr, l->word);
	s->paddr = get_word(p + l->p_paddr, l->word);
	s->filesz = get_word(p + l->p_filesz, l->word);
	s->memsz = get_word(p + l->p_memsz, l->word);
	return true;
}

/* Collects the PT_LOAD segments that occupy memory; empty ones load
 * nothing and are skipped. */
static int elf_collect(struct mb_ctx *c, const struct elf_layout *l, uint64_t phoff,
		       unsigned phentsize, unsigned phnum)
{
	struct mb_seg s;

	for (unsigned i = 0; i < phnum; i++) {
		if (!elf_read_phdr(c, l, phoff + (uint64_t)i * phentsize, i, &s))
			continue;
		if (s.filesz > s.memsz)
			return mb_fail(c, "ELF segment %u: p_filesz 0x%lx exceeds p_memsz 0x%lx",
				       i, s.filesz, s.memsz);
		if (!s.memsz)
			continue;
		if (c->nsegs == MB_MAX_SEGMENTS)
			return mb_fail(c, "ELF file has more than %u PT_LOAD segments", MB_MAX_SEGMENTS);
		c->segs[c->nsegs++] = s;
	}
	if (!c->nsegs)
		return mb_fail(c, "ELF file has no PT_LOAD segment to load");
	return 0;
}

/* Fills *entry with e_entry, a virtual address. */
static int mb_parse_elf(struct mb_ctx *c, uint64_t *entry)
{
	const struct elf_layout *l = NULL;
	const uint8_t *e = c->image;
	uint64_t phoff;
	unsigned phentsize, phnum;

	if (elf_identify(c, &l))
		return -1;
	phoff = get_word(e + l->e_phoff, l->word);
	phentsize = get_le16(e + l->e_phentsize);
	phnum = get_le16(e + l->e_phnum);
	if (phnum == PN_XNUM)
		return mb_fail(c, "ELF extended program header numbering (PN_XNUM) is not supported");
	if (phnum && phentsize < l->phdr_len)
		return mb_fail(c, "ELF program header size %u is below the %u bytes of a %s one",
			       phentsize, l->phdr_len, l->name);
	if (phoff > c->image_size || (uint64_t)phnum * phentsize > c->image_size - phoff)
		return mb_fail(c, "file truncated: the program header table (0x%lx bytes at 0x%lx) ends past the file (0x%lx bytes)",
			       (uint64_t)phnum * phentsize, phoff, c->image_size);
	*entry = get_word(e + l->e_entry, l->word);
	return elf_collect(c, l, phoff, phentsize, phnum);
}

/* --- where the kernel goes ------------------------------------------------ */

static void mb_seg_name(const struct mb_ctx *c, const struct mb_seg *s, char *buf, size_t len)
{
	if (c->aout)
		fmt_snprintf(buf, len, "a.out kernel");
	else
		fmt_snprintf(buf, len, "ELF segment %u", s->index);
}

/* Every byte read lies in the file, every byte written in guest RAM, and
 * no sum wraps around 2^64 on the way there. */
static int mb_check_seg(struct mb_ctx *c, const struct mb_seg *s)
{
	char name[32];

	mb_seg_name(c, s, name, sizeof(name));
	if (s->offset > UINT64_MAX - s->filesz)
		return mb_fail(c, "%s: file offset 0x%lx + size 0x%lx overflows", name, s->offset, s->filesz);
	if (s->offset + s->filesz > c->image_size)
		return mb_fail(c, "file truncated: %s needs bytes up to 0x%lx but the file has 0x%lx",
			       name, s->offset + s->filesz, c->image_size);
	if (s->paddr > UINT64_MAX - s->memsz)
		return mb_fail(c, "%s: address 0x%lx + size 0x%lx overflows", name, s->paddr, s->memsz);
	if (s->paddr + s->memsz > c->limit)
		return mb_fail(c, "%s [0x%lx-0x%lx) lies outside %s",
			       name, s->paddr, s->paddr + s->memsz, c->where);
	return 0;
}

static bool mb_seg_overlap(const struct mb_seg *a, const struct mb_seg *b)
{
	return a->paddr < b->paddr + b->memsz && b->paddr < a->paddr + a->memsz;
}

/* Segments must not overlap in memory: which one's bytes win would depend
 * on the loader's order. Also yields the kernel's physical range. */
static int mb_check_segs(struct mb_ctx *c)
{
	c->kernel_start = UINT64_MAX;
	c->kernel_end = 0;
	for (unsigned i = 0; i < c->nsegs; i++) {
		const struct mb_seg *s = &c->segs[i];

		if (mb_check_seg(c, s))
			return -1;
		for (unsigned j = 0; j < i; j++)
			if (mb_seg_overlap(&c->segs[j], s))
				return mb_fail(c, "ELF segments %u and %u overlap",
					       c->segs[j].index, s->index);
		c->kernel_start = MIN(c->kernel_start, s->paddr);
		c->kernel_end = MAX(c->kernel_end, s->paddr + s->memsz);
	}
	return 0;
}

/* The entry point must land on bytes the file provided: zero fill would
 * just execute zeros. e_entry is virtual; like QEMU's load_elf(), it is
 * moved to the physical side through the segment whose file bytes hold it
 * (p_paddr + e_entry - p_vaddr), which is how a higher-half kernel linked
 * at 0xC0100000 and loaded at 0x100000 gets started. The a.out kludge's
 * entry_addr is already physical (vaddr == paddr there). */
static int mb_check_entry(struct mb_ctx *c, uint64_t entry)
{
	for (unsigned i = 0; i < c->nsegs; i++) {
		const struct mb_seg *s = &c->segs[i];

		if (entry >= s->vaddr && entry - s->vaddr < s->filesz) {
			/* below c->limit, so below 4 GiB ("Machine state": EIP) */
			c->entry = (uint32_t)(s->paddr + (entry - s->vaddr));
			return 0;
		}
	}
	if (entry > UINT32_MAX)
		return mb_fail(c, "entry point 0x%lx is above 4 GiB and outside the loaded segments", entry);
	return mb_fail(c, "entry point 0x%lx is outside the loaded segments", entry);
}

static int mb_parse_kernel(struct mb_ctx *c)
{
	uint64_t hoff = 0, entry = 0;
	uint32_t flags;

	if (mb_find_header(c, &hoff))
		return -1;
	flags = get_le32(c->image + hoff + offsetof(struct mb_header, flags));
	if (mb_check_flags(c, flags))
		return -1;
	if (flags & MB_HF_AOUT_KLUDGE) {
		if (mb_parse_aout(c, hoff, &entry))
			return -1;
	} else {
		if (mb_parse_elf(c, &entry))
			return -1;
	}
	if (mb_check_segs(c))
		return -1;
	return mb_check_entry(c, entry);
}

/* --- modules and boot information ----------------------------------------- */

static const char *mb_str(const char *s)
{
	return s ? s : "";
}

/* Module i starts at the first page boundary after everything before it
 * ("Header layout", flags bit 0 asks for that; we always do it). Moves
 * *used past the module; false if it does not fit. */
static bool mb_place_module(const struct mb_ctx *c, uint64_t *used, uint64_t size,
			    uint64_t *start)
{
	*start = ALIGN_UP(*used, PAGE_SIZE);
	if (*start > c->limit || size > c->limit - *start)
		return false;
	*used = *start + size;
	return true;
}

static int mb_plan_modules(struct mb_ctx *c, const struct mb_module *mods, unsigned nmods,
			   uint64_t *used)
{
	uint64_t start;

	for (unsigned i = 0; i < nmods; i++)
		if (!mb_place_module(c, used, mods[i].size, &start))
			return mb_fail(c, "modules do not fit in %s: module %u (%s) has 0x%lx bytes",
				       c->where, i, mb_str(mods[i].string), mods[i].size);
	return 0;
}

/* The boot information block: mb_info, then its arrays, then strings. */
static int mb_plan_info(struct mb_ctx *c, uint64_t used, const char *cmdline,
			const struct mb_module *mods, unsigned nmods)
{
	uint64_t size;

	c->info = ALIGN_UP(used, PAGE_SIZE);
	c->info_mods = c->info + sizeof(struct mb_info);
	c->info_mmap = c->info_mods + (uint64_t)nmods * sizeof(struct mb_module_entry);
	c->info_strings = c->info_mmap + MB_MMAP_ENTRIES * sizeof(struct mb_mmap_entry);
	size = c->info_strings - c->info + sizeof(MB_LOADER_NAME) + strlen(mb_str(cmdline)) + 1;
	for (unsigned i = 0; i < nmods; i++)
		size += strlen(mb_str(mods[i].string)) + 1;
	if (c->info > c->limit || size > c->limit - c->info)
		return mb_fail(c, "boot information (0x%lx bytes after 0x%lx) does not fit in %s",
			       size, used, c->where);
	c->info_end = c->info + size;
	return 0;
}

/* --- writing --------------------------------------------------------------- */

static void mb_write_kernel(const struct mb_ctx *c, uint8_t *ram)
{
	for (unsigned i = 0; i < c->nsegs; i++) {
		const struct mb_seg *s = &c->segs[i];

		memcpy(ram + s->paddr, c->image + s->offset, s->filesz);
		/* RAM comes zeroed, but a reused buffer must not leak into bss */
		memset(ram + s->paddr + s->filesz, 0, s->memsz - s->filesz);
	}
}

/* Copies a C string into guest RAM at *at; returns its guest address. */
static uint32_t mb_put_str(uint8_t *ram, uint64_t *at, const char *s)
{
	uint64_t addr = *at;
	size_t len = strlen(s) + 1;

	memcpy(ram + addr, s, len);
	*at += len;
	return (uint32_t)addr;
}

/* Both builds are x86, so the packed little-endian structures are copied
 * out as they are. */
static void mb_write_modules(const struct mb_ctx *c, uint8_t *ram, const struct mb_module *mods,
			     unsigned nmods, uint64_t *strings)
{
	uint64_t used = c->kernel_end;

	for (unsigned i = 0; i < nmods; i++) {
		struct mb_module_entry m = { 0 };
		uint64_t start;

		mb_place_module(c, &used, mods[i].size, &start);     /* fits: planned */
		if (mods[i].size)
			memcpy(ram + start, mods[i].data, mods[i].size);
		m.mod_start = (uint32_t)start;
		m.mod_end = (uint32_t)used;
		m.string = mb_put_str(ram, strings, mb_str(mods[i].string));
		memcpy(ram + c->info_mods + i * sizeof(m), &m, sizeof(m));
	}
}

/* "Boot information format", mmap: the PC layout QEMU's BIOS reports,
 * with RAM above 1 MiB in one piece. */
static void mb_write_mmap(const struct mb_ctx *c, uint8_t *ram, uint64_t ram_size)
{
	const struct mb_mmap_entry map[MB_MMAP_ENTRIES] = {
		{ MB_MMAP_ENTRY_SIZE, 0, MB_EBDA_START, MB_MMAP_AVAILABLE },
		{ MB_MMAP_ENTRY_SIZE, MB_EBDA_START, MB_EBDA_END - MB_EBDA_START, MB_MMAP_RESERVED },
		{ MB_MMAP_ENTRY_SIZE, MB_BIOS_START, MB_HIGH_START - MB_BIOS_START, MB_MMAP_RESERVED },
		{ MB_MMAP_ENTRY_SIZE, MB_HIGH_START, ram_size - MB_HIGH_START, MB_MMAP_AVAILABLE },
	};

	memcpy(ram + c->info_mmap, map, sizeof(map));
}

static void mb_write_info(const struct mb_ctx *c, uint8_t *ram, uint64_t ram_size,
			  const char *cmdline, const struct mb_module *mods, unsigned nmods)
{
	struct mb_info mbi = { 0 };
	uint64_t strings = c->info_strings;

	memset(ram + c->info, 0, c->info_end - c->info);
	mbi.flags = MB_INFO_MEMORY | MB_INFO_CMDLINE | MB_INFO_MODS | MB_INFO_MEM_MAP |
		    MB_INFO_BOOT_LOADER_NAME;
	mbi.mem_lower = MB_MEM_LOWER_KIB;
	mbi.mem_upper = (uint32_t)MIN((ram_size - MB_HIGH_START) / KiB, (uint64_t)UINT32_MAX);
	mbi.cmdline = mb_put_str(ram, &strings, mb_str(cmdline));
	mbi.boot_loader_name = mb_put_str(ram, &strings, MB_LOADER_NAME);
	mbi.mods_count = nmods;
	mbi.mods_addr = (uint32_t)c->info_mods;
	mbi.mmap_length = MB_MMAP_ENTRIES * sizeof(struct mb_mmap_entry);
	mbi.mmap_addr = (uint32_t)c->info_mmap;
	mb_write_modules(c, ram, mods, nmods, &strings);
	mb_write_mmap(c, ram, ram_size);
	memcpy(ram + c->info, &mbi, sizeof(mbi));
}

int multiboot_load(uint8_t *ram, uint64_t ram_size, const void *image, uint64_t image_size,
		   const char *cmdline, const struct mb_module *mods, unsigned nmods,
		   struct mb_result *out, char *err, size_t errlen)
{
	struct mb_ctx c = { .err = err, .errlen = errlen };
	uint64_t used;

	mb_init(&c, ram_size, image, image_size);
	if (ram_size < MB_MIN_RAM)
		return mb_fail(&c, "guest RAM of 0x%lx bytes is below the 2 MiB minimum", ram_size);
	if (mb_parse_kernel(&c))
		return -1;
	used = c.kernel_end;
	if (mb_plan_modules(&c, mods, nmods, &used) ||
	    mb_plan_info(&c, used, cmdline, mods, nmods))
		return -1;

	mb_write_kernel(&c, ram);
	mb_write_info(&c, ram, ram_size, cmdline, mods, nmods);
	*out = (struct mb_result){
		.entry = c.entry, .mbi = (uint32_t)c.info, .magic = MB_BOOTLOADER_MAGIC,
		.kernel_start = c.kernel_start, .kernel_end = c.kernel_end,
		.used_end = c.info_end,
	};
	if (errlen)
		err[0] = 0;
	return 0;
}
