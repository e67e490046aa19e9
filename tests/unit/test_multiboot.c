// SPDX-License-Identifier: BSD-2-Clause
/*
 * vmm/loader/multiboot.c on the host. Kernel images are built in memory from the
 * C library's <elf.h> structures (a second opinion on the ELF layouts), or
 * read from tests/data/multiboot/ (real gcc/ld output of kernel.S there).
 * Guest RAM and every image handed to the loader are heap buffers of
 * exactly their size, so ASan catches any access past either.
 */
#define _GNU_SOURCE             /* memmem */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <elf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vmm/loader/multiboot.h"

#define RAM_SIZE        (8 * MiB)
#define IMG_CAP         (64 * 1024)
#define PHOFF           64u             /* program headers, both classes */
#define MB_OFF          0x1000u         /* Multiboot header: start of text */
#define TEXT_PADDR      0x100000ull
#define DATA_PADDR      0x102000ull
#define ENTRY_OFF       0x10u           /* entry point, from the start of text */

/* --- building images -------------------------------------------------------- */

struct img {
	size_t len;
	uint8_t b[IMG_CAP];
};

struct seg {
	uint32_t type;
	uint64_t offset, vaddr, paddr, filesz, memsz;
};

static void img_put(struct img *im, size_t off, const void *p, size_t n)
{
	assert_true(off <= IMG_CAP && n <= IMG_CAP - off);
	memcpy(im->b + off, p, n);
	im->len = MAX(im->len, off + n);
}

static void img_put32(struct img *im, size_t off, uint32_t v)
{
	img_put(im, off, &v, sizeof(v));
}

/* Recognisable, mostly nonzero file bytes. */
static void img_fill(struct img *im, uint64_t off, uint64_t n)
{
	if (off > IMG_CAP || n > IMG_CAP - off)
		return;                 /* a deliberately impossible segment */
	for (uint64_t i = 0; i < n; i++)
		im->b[off + i] = (uint8_t)((off + i) * 7 + 13);
	im->len = MAX(im->len, off + n);
}

static void img_phdr32(struct img *im, unsigned i, const struct seg *s)
{
	Elf32_Phdr p = {
		.p_type = s->type, .p_offset = (Elf32_Off)s->offset,
		.p_vaddr = (Elf32_Addr)s->vaddr, .p_paddr = (Elf32_Addr)s->paddr,
		.p_filesz = (Elf32_Word)s->filesz, .p_memsz = (Elf32_Word)s->memsz,
		.p_flags = PF_R | PF_W | PF_X, .p_align = 0x1000,
	};

	img_put(im, PHOFF + i * sizeof(p), &p, sizeof(p));
}

static void img_phdr64(struct img *im, unsigned i, const struct seg *s)
{
	Elf64_Phdr p = {
		.p_type = s->type, .p_offset = s->offset, .p_vaddr = s->vaddr,
		.p_paddr = s->paddr, .p_filesz = s->filesz, .p_memsz = s->memsz,
		.p_flags = PF_R | PF_W | PF_X, .p_align = 0x1000,
	};

	img_put(im, PHOFF + i * sizeof(p), &p, sizeof(p));
}

/* An ELF executable with these program headers; segment file bytes are
 * filled with a pattern. */
static void img_elf(struct img *im, int bits, uint64_t entry, const struct seg *segs, unsigned n)
{
	static const unsigned char ident[] = { ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3 };

	memset(im, 0, sizeof(*im));
	for (unsigned i = 0; i < n; i++)
		if (segs[i].type == PT_LOAD)
			img_fill(im, segs[i].offset, segs[i].filesz);
	if (bits == 32) {
		Elf32_Ehdr e = {
			.e_type = ET_EXEC, .e_machine = EM_386, .e_version = EV_CURRENT,
			.e_entry = (Elf32_Addr)entry, .e_phoff = PHOFF, .e_ehsize = sizeof(e),
			.e_phentsize = sizeof(Elf32_Phdr), .e_phnum = (Elf32_Half)n,
		};

		memcpy(e.e_ident, ident, sizeof(ident));
		e.e_ident[EI_CLASS] = ELFCLASS32;
		e.e_ident[EI_DATA] = ELFDATA2LSB;
		e.e_ident[EI_VERSION] = EV_CURRENT;
		img_put(im, 0, &e, sizeof(e));
		for (unsigned i = 0; i < n; i++)
			img_phdr32(im, i, &segs[i]);
	} else {
		Elf64_Ehdr e = {
			.e_type = ET_EXEC, .e_machine = EM_X86_64, .e_version = EV_CURRENT,
			.e_entry = entry, .e_phoff = PHOFF, .e_ehsize = sizeof(e),
			.e_phentsize = sizeof(Elf64_Phdr), .e_phnum = (Elf64_Half)n,
		};

		memcpy(e.e_ident, ident, sizeof(ident));
		e.e_ident[EI_CLASS] = ELFCLASS64;
		e.e_ident[EI_DATA] = ELFDATA2LSB;
		e.e_ident[EI_VERSION] = EV_CURRENT;
		img_put(im, 0, &e, sizeof(e));
		for (unsigned i = 0; i < n; i++)
			img_phdr64(im, i, &segs[i]);
	}
}

/* A Multiboot header with a correct checksum (or one off by `skew`). */
static void img_mb(struct img *im, size_t off, uint32_t flags, uint32_t skew)
{
	img_put32(im, off, MB_HEADER_MAGIC);
	img_put32(im, off + 4, flags);
	img_put32(im, off + 8, -(MB_HEADER_MAGIC + flags) + skew);
}

static void img_mb_aout(struct img *im, size_t off, uint32_t flags, const uint32_t addr[5])
{
	img_mb(im, off, flags | MB_HF_AOUT_KLUDGE, 0);
	for (unsigned i = 0; i < 5; i++)
		img_put32(im, off + MB_HEADER_LEN + 4 * i, addr[i]);
}

/* The usual kernel: text at 1 MiB holding the Multiboot header, data with
 * a bss behind it, linked `voff` above where it is loaded. */
static void img_std(struct img *im, int bits, uint64_t voff)
{
	const struct seg segs[] = {
		{ PT_LOAD, MB_OFF, TEXT_PADDR + voff, TEXT_PADDR, 0x1800, 0x1800 },
		{ PT_NOTE, 0x2800, 0, 0, 0x20, 0x20 },
		{ PT_LOAD, 0x3000, DATA_PADDR + voff, DATA_PADDR, 0x800, 0x3000 },
	};

	img_elf(im, bits, TEXT_PADDR + voff + ENTRY_OFF, segs, ARRAY_SIZE(segs));
	img_mb(im, MB_OFF, MB_HF_PAGE_ALIGN | MB_HF_MEMORY_INFO, 0);
}

/* Program header i's field at `field` (an offsetof into ElfN_Phdr). */
static size_t phdr_off(int bits, unsigned i, size_t field)
{
	return PHOFF + i * (bits == 32 ? sizeof(Elf32_Phdr) : sizeof(Elf64_Phdr)) + field;
}

/* --- running the loader ------------------------------------------------------ */

struct run {
	uint8_t *ram;
	uint64_t ram_size;
	struct mb_result res;
	char err[MB_ERR_LEN];
	int rc;
};

static bool ram_zero(const uint8_t *ram, uint64_t from, uint64_t to)
{
	/* one memcmp of the range against itself shifted by a byte */
	return from >= to || (ram[from] == 0 && !memcmp(ram + from, ram + from + 1, to - from - 1));
}

/* Loads an exact-size copy of `len` bytes of the image. */
static void run_load(struct run *r, uint64_t ram_size, const void *image, size_t len,
		     const char *cmdline, const struct mb_module *mods, unsigned nmods)
{
	void *copy = malloc(len ? len : 1);

	assert_non_null(copy);
	memcpy(copy, image, len);
	if (!r->ram || r->ram_size != ram_size) {
		free(r->ram);
		r->ram = calloc(1, ram_size);
		assert_non_null(r->ram);
		r->ram_size = ram_size;
	}
	memset(r->err, 0x5a, sizeof(r->err));
	memset(&r->res, 0xee, sizeof(r->res));
	r->rc = multiboot_load(r->ram, ram_size, copy, len, cmdline, mods, nmods,
			       &r->res, r->err, sizeof(r->err));
	free(copy);
	assert_non_null(memchr(r->err, 0, sizeof(r->err)));
}

static void run_free(struct run *r)
{
	free(r->ram);
	r->ram = NULL;
}

static void expect_ok(struct run *r, const struct img *im, const char *cmdline,
		      const struct mb_module *mods, unsigned nmods)
{
	run_load(r, RAM_SIZE, im->b, im->len, cmdline, mods, nmods);
	if (r->rc)
		fail_msg("load failed: %s", r->err);
	assert_string_equal(r->err, "");
}

/* Fails with a reason containing `want` and leaves RAM untouched. */
static void expect_fail_ram(const struct img *im, size_t len, uint64_t ram_size,
			    const struct mb_module *mods, unsigned nmods, const char *want)
{
	struct run r = { 0 };

	run_load(&r, ram_size, im->b, len, "cmd", mods, nmods);
	if (r.rc != -1 || !strstr(r.err, want))
		fail_msg("rc %d, err \"%s\", wanted \"%s\"", r.rc, r.err, want);
	assert_true(strlen(r.err) < sizeof(r.err) - 1);        /* not cut short */
	assert_true(ram_zero(r.ram, 0, ram_size));
	run_free(&r);
}

static void expect_fail(const struct img *im, const char *want)
{
	expect_fail_ram(im, im->len, RAM_SIZE, NULL, 0, want);
}

static uint32_t ram32(const struct run *r, uint64_t addr)
{
	uint32_t v;

	assert_true(addr + 4 <= r->ram_size);
	memcpy(&v, r->ram + addr, 4);
	return v;
}

static struct mb_info ram_info(const struct run *r)
{
	struct mb_info mbi;

	assert_true(r->res.mbi + sizeof(mbi) <= r->ram_size);
	memcpy(&mbi, r->ram + r->res.mbi, sizeof(mbi));
	return mbi;
}

static const char *ram_str(const struct run *r, uint32_t addr)
{
	assert_true(addr < r->ram_size);
	assert_non_null(memchr(r->ram + addr, 0, r->ram_size - addr));
	return (const char *)r->ram + addr;
}

/* --- loading ------------------------------------------------------------------ */

/* img_std()'s segments are in RAM: file bytes at p_paddr, bss zeroed. */
static void assert_std_loaded(const struct run *r, const struct img *im)
{
	assert_memory_equal(r->ram + TEXT_PADDR, im->b + MB_OFF, 0x1800);
	assert_memory_equal(r->ram + DATA_PADDR, im->b + 0x3000, 0x800);
	assert_true(ram_zero(r->ram, DATA_PADDR + 0x800, DATA_PADDR + 0x3000));
	assert_int_equal(r->res.entry, TEXT_PADDR + ENTRY_OFF);
	assert_int_equal(r->res.magic, MB_BOOTLOADER_MAGIC);
	assert_int_equal(r->res.kernel_start, TEXT_PADDR);
	assert_int_equal(r->res.kernel_end, DATA_PADDR + 0x3000);
	/* no modules: the boot information is on the next page */
	assert_int_equal(r->res.mbi, DATA_PADDR + 0x3000);
	assert_true(r->res.used_end > r->res.mbi + sizeof(struct mb_info));
	assert_true(ram_zero(r->ram, r->res.used_end, r->ram_size));
	assert_true(ram_zero(r->ram, 0, TEXT_PADDR));
}

static void test_elf32(void **state)
{
	static struct img im;
	struct run r = { 0 };

	img_std(&im, 32, 0);
	r.ram = malloc(RAM_SIZE);
	r.ram_size = RAM_SIZE;
	memset(r.ram, 0xaa, RAM_SIZE);
	/* bss is zeroed even in a reused buffer; the rest is the caller's */
	memset(r.ram, 0, TEXT_PADDR);
	memset(r.ram + DATA_PADDR + 0x3000, 0, RAM_SIZE - DATA_PADDR - 0x3000);
	expect_ok(&r, &im, NULL, NULL, 0);
	assert_std_loaded(&r, &im);
	run_free(&r);
}

static void test_elf64(void **state)
{
	static struct img im;
	struct run r = { 0 };

	img_std(&im, 64, 0);
	expect_ok(&r, &im, NULL, NULL, 0);
	assert_std_loaded(&r, &im);
	run_free(&r);
}

/* e_entry is virtual: a higher-half kernel starts at its physical alias. */
static void test_entry_translated(void **state)
{
	static struct img im;
	struct run r = { 0 };

	img_std(&im, 32, 0xC0000000ull);
	expect_ok(&r, &im, NULL, NULL, 0);
	assert_std_loaded(&r, &im);
	img_std(&im, 64, 0xFFFFFFFF80000000ull);
	memset(r.ram, 0, RAM_SIZE);
	expect_ok(&r, &im, NULL, NULL, 0);
	assert_std_loaded(&r, &im);
	run_free(&r);
}

/* Page 0 is RAM like any other; PT_LOADs with nothing in memory and
 * other program header types are skipped. */
static void test_elf_odd_segments(void **state)
{
	static struct img im;
	struct run r = { 0 };
	const struct seg segs[] = {
		{ PT_LOAD, 0x1000, 0, 0, 0x100, 0x1000 },
		{ PT_LOAD, 0, 0x7000000, 0x7000000, 0, 0 },     /* empty: ignored */
		{ PT_GNU_STACK, 0, 0, 0, 0, 0 },
		{ PT_LOAD, 0x2000, 0x1000, 0x1000, 0x10, 0x10 },  /* just after */
	};

	img_elf(&im, 32, 0x20, segs, ARRAY_SIZE(segs));
	img_mb(&im, 0x1000, 0, 0);
	expect_ok(&r, &im, NULL, NULL, 0);
	assert_int_equal(r.res.entry, 0x20);
	assert_int_equal(r.res.kernel_start, 0);
	assert_int_equal(r.res.kernel_end, 0x1010);
	assert_int_equal(r.res.mbi, 0x2000);
	assert_memory_equal(r.ram, im.b + 0x1000, 0x100);
	assert_memory_equal(r.ram + 0x1000, im.b + 0x2000, 0x10);
	run_free(&r);
}

/* "The address fields of Multiboot header": a flat binary whose header
 * sits 0x40 into the file and says the file from offset 0x20 on belongs
 * at 0x200000. */
static void test_aout_kludge(void **state)
{
	static struct img im;
	struct run r = { 0 };
	const uint32_t whole[5] = { 0x200020, 0x200000, 0, 0, 0x200100 };
	const uint32_t bss[5] = { 0x200020, 0x200000, 0x200800, 0x203000, 0x200100 };

	memset(&im, 0, sizeof(im));
	img_fill(&im, 0, 0x1000);
	img_mb_aout(&im, 0x40, MB_HF_MEMORY_INFO, whole);
	expect_ok(&r, &im, "x", NULL, 0);
	assert_memory_equal(r.ram + 0x200000, im.b + 0x20, 0x1000 - 0x20);
	assert_int_equal(r.res.entry, 0x200100);
	assert_int_equal(r.res.kernel_start, 0x200000);
	assert_int_equal(r.res.kernel_end, 0x200000 + 0x1000 - 0x20);
	assert_int_equal(r.res.mbi, 0x201000);
	assert_true(ram_zero(r.ram, 0, 0x200000));

	/* load_end_addr and bss_end_addr given; bytes past load_end stay out */
	memset(r.ram, 0xaa, RAM_SIZE);
	img_mb_aout(&im, 0x40, MB_HF_MEMORY_INFO, bss);
	expect_ok(&r, &im, "x", NULL, 0);
	assert_memory_equal(r.ram + 0x200000, im.b + 0x20, 0x800);
	assert_true(ram_zero(r.ram, 0x200800, 0x203000));
	assert_int_equal(r.res.kernel_end, 0x203000);
	assert_int_equal(r.res.mbi, 0x203000);
	run_free(&r);
}

/* The a.out kludge wins over ELF, as in QEMU and GRUB. */
static void test_aout_kludge_in_elf(void **state)
{
	static struct img im;
	struct run r = { 0 };
	const uint32_t addr[5] = { 0x300000 + MB_OFF, 0x300000, 0x300000 + 0x2000, 0, 0x300000 + MB_OFF + 0x40 };

	img_std(&im, 32, 0);
	img_mb_aout(&im, MB_OFF, 0, addr);
	expect_ok(&r, &im, "", NULL, 0);
	assert_int_equal(r.res.kernel_start, 0x300000);
	assert_memory_equal(r.ram + 0x300000, im.b, 0x2000);
	assert_true(ram_zero(r.ram, 0, 0x300000));
	run_free(&r);
}

static void test_aout_errors(void **state)
{
	static const struct {
		uint32_t addr[5];
		const char *want;
	} cases[] = {
		{ { 0x200020, 0x200030, 0, 0, 0x200030 }, "load_addr 0x200030 is above header_addr" },
		{ { 0x200100, 0x200000, 0, 0, 0x200100 }, "but the header is at file offset 0x40" },
		{ { 0x200020, 0x200000, 0x1ff000, 0, 0x200100 }, "load_end_addr 0x1ff000 is below" },
		{ { 0x200020, 0x200000, 0x200800, 0x200700, 0x200100 }, "bss_end_addr 0x200700 is below" },
		{ { 0x200020, 0x200000, 0x201000, 0, 0x200100 }, "file truncated: a.out kernel needs bytes up to 0x1020 but the file has 0x1000" },
		{ { 0x7fff020, 0x7fff000, 0, 0x9000000, 0x7fff100 }, "a.out kernel [0x7fff000-0x9000000) lies outside guest RAM (8 MiB)" },
		{ { 0x200020, 0x200000, 0x200800, 0x203000, 0x200900 }, "entry point 0x200900 is outside the loaded segments" },
		{ { 0x200020, 0x200000, 0, 0, 0x1ff000 }, "entry point 0x1ff000 is outside" },
	};
	static struct img im;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		memset(&im, 0, sizeof(im));
		img_fill(&im, 0, 0x1000);
		img_mb_aout(&im, 0x40, 0, cases[i].addr);
		expect_fail(&im, cases[i].want);
	}
	/* the address fields must be in the file and the first 8 KiB */
	memset(&im, 0, sizeof(im));
	img_mb(&im, 8192 - 16, MB_HF_AOUT_KLUDGE, 0);
	img_fill(&im, 8192, 0x100);
	expect_fail(&im, "a.out kludge: the address fields at 0x1ffc end past");
	memset(&im, 0, sizeof(im));
	img_mb(&im, 0x40, MB_HF_AOUT_KLUDGE, 0);
	expect_fail(&im, "a.out kludge: the address fields");
}

/* --- boot information ---------------------------------------------------------- */

static const struct mb_mmap_entry want_mmap[] = {
	{ 20, 0, 0x9FC00, MB_MMAP_AVAILABLE },
	{ 20, 0x9FC00, 0x400, MB_MMAP_RESERVED },
	{ 20, 0xF0000, 0x10000, MB_MMAP_RESERVED },
	{ 20, 0x100000, RAM_SIZE - 0x100000, MB_MMAP_AVAILABLE },
};

static void assert_mbi_common(const struct run *r, const struct mb_info *mbi)
{
	assert_int_equal(r->res.mbi % PAGE_SIZE, 0);
	assert_int_equal(mbi->flags, MB_INFO_MEMORY | MB_INFO_CMDLINE | MB_INFO_MODS |
			 MB_INFO_MEM_MAP | MB_INFO_BOOT_LOADER_NAME);
	assert_int_equal(mbi->mem_lower, 639);
	assert_int_equal(mbi->mem_upper, (RAM_SIZE - MiB) / 1024);
	assert_int_equal(mbi->mmap_length, sizeof(want_mmap));
	assert_memory_equal(r->ram + mbi->mmap_addr, want_mmap, sizeof(want_mmap));
	/* raw bytes too: entry 3 at its spec offsets */
	assert_int_equal(ram32(r, mbi->mmap_addr + 72), 20);
	assert_int_equal(ram32(r, mbi->mmap_addr + 76), 0x100000);
	assert_int_equal(ram32(r, mbi->mmap_addr + 84), RAM_SIZE - 0x100000);
	assert_int_equal(ram32(r, mbi->mmap_addr + 92), 1);
	assert_string_equal(ram_str(r, mbi->boot_loader_name), "tickvisor");
	/* the unused fields stay zero */
	assert_int_equal(mbi->boot_device, 0);
	assert_int_equal(mbi->drives_length, 0);
	assert_int_equal(mbi->config_table, 0);
	assert_int_equal(mbi->apm_table, 0);
	assert_int_equal(mbi->vbe_mode, 0);
	assert_int_equal(mbi->framebuffer_addr, 0);
	/* every pointer lies in the block, the block in RAM */
	assert_true(mbi->cmdline < r->res.used_end && mbi->mmap_addr < r->res.used_end);
	assert_true(r->res.used_end <= r->ram_size);
	assert_true(ram_zero(r->ram, r->res.used_end, r->ram_size));
}

static void test_mbi_no_modules(void **state)
{
	static struct img im;
	struct run r = { 0 };
	struct mb_info mbi;

	img_std(&im, 32, 0);
	expect_ok(&r, &im, NULL, NULL, 0);
	mbi = ram_info(&r);
	assert_mbi_common(&r, &mbi);
	assert_string_equal(ram_str(&r, mbi.cmdline), "");
	assert_int_equal(mbi.mods_count, 0);
	/* raw bytes: flags at 0, mem_lower at 4, cmdline at 16, name at 64 */
	assert_int_equal(ram32(&r, r.res.mbi), 0x24d);
	assert_int_equal(ram32(&r, r.res.mbi + 4), 639);
	assert_int_equal(ram32(&r, r.res.mbi + 16), mbi.cmdline);
	assert_int_equal(ram32(&r, r.res.mbi + 64), mbi.boot_loader_name);
	run_free(&r);
}

static void test_mbi_modules(void **state)
{
	static struct img im;
	static uint8_t a[5000], b[1], d[4096];
	const struct mb_module mods[] = {
		{ a, sizeof(a), "/boot/initrd.img quiet" },
		{ b, sizeof(b), NULL },
		{ NULL, 0, "empty" },
		{ d, sizeof(d), "page" },
	};
	const uint32_t want_start[] = { 0x105000, 0x107000, 0x108000, 0x108000 };
	struct run r = { 0 };
	struct mb_info mbi;

	for (size_t i = 0; i < sizeof(a); i++)
		a[i] = (uint8_t)(i * 31 + 1);
	b[0] = 0x42;
	memset(d, 0x17, sizeof(d));
	img_std(&im, 32, 0);
	expect_ok(&r, &im, "console=ttyS0 tickvisor.test=1", mods, ARRAY_SIZE(mods));
	mbi = ram_info(&r);
	assert_mbi_common(&r, &mbi);
	assert_string_equal(ram_str(&r, mbi.cmdline), "console=ttyS0 tickvisor.test=1");
	assert_int_equal(mbi.mods_count, ARRAY_SIZE(mods));
	assert_int_equal(r.res.mbi, 0x109000);
	for (unsigned i = 0; i < ARRAY_SIZE(mods); i++) {
		struct mb_module_entry m;

		memcpy(&m, r.ram + mbi.mods_addr + i * sizeof(m), sizeof(m));
		assert_int_equal(m.mod_start, want_start[i]);
		assert_int_equal(m.mod_end, m.mod_start + mods[i].size);
		assert_int_equal(m.reserved, 0);
		assert_string_equal(ram_str(&r, m.string), mods[i].string ? mods[i].string : "");
		if (mods[i].size)
			assert_memory_equal(r.ram + m.mod_start, mods[i].data, mods[i].size);
	}
	/* the kernel is intact around them */
	assert_memory_equal(r.ram + TEXT_PADDR, im.b + MB_OFF, 0x1800);
	assert_true(ram_zero(r.ram, 0x105000 + sizeof(a), 0x107000));
	run_free(&r);
}

/* --- the header ---------------------------------------------------------------- */

static void test_header_search(void **state)
{
	static struct img im;
	const struct seg segs[] = { { PT_LOAD, 0x3000, 0x100000, 0x100000, 0x100, 0x100 } };
	struct run r = { 0 };

	/* the last aligned place that holds all 12 bytes in the first 8 KiB */
	img_elf(&im, 32, 0x100000, segs, 1);
	img_mb(&im, 8192 - 12, 0, 0);
	expect_ok(&r, &im, NULL, NULL, 0);
	/* a bad-checksum magic before a good header is skipped */
	img_mb(&im, 0x200, 0, 1);
	expect_ok(&r, &im, NULL, NULL, 0);
	run_free(&r);

	img_elf(&im, 32, 0x100000, segs, 1);
	img_mb(&im, 8192 - 8, 0, 0);            /* straddles 8 KiB */
	expect_fail(&im, "no Multiboot header in the first 8192 bytes");
	img_elf(&im, 32, 0x100000, segs, 1);
	img_mb(&im, 8192, 0, 0);                /* beyond */
	expect_fail(&im, "no Multiboot header in the first 8192 bytes");
	img_elf(&im, 32, 0x100000, segs, 1);
	img_mb(&im, 0x202, 0, 0);               /* unaligned */
	expect_fail(&im, "no Multiboot header");
	img_elf(&im, 32, 0x100000, segs, 1);
	expect_fail(&im, "no Multiboot header");
	/* a header cut by the end of the file */
	img_std(&im, 32, 0);
	expect_fail_ram(&im, MB_OFF + 8, RAM_SIZE, NULL, 0, "no Multiboot header");
	expect_fail_ram(&im, 0, RAM_SIZE, NULL, 0, "no Multiboot header");
}

static void test_header_checksum(void **state)
{
	static struct img im;

	img_std(&im, 32, 0);
	img_mb(&im, MB_OFF, MB_HF_MEMORY_INFO, 1);
	expect_fail(&im, "header checksum is wrong");
	img_mb(&im, MB_OFF, MB_HF_MEMORY_INFO, 0x80000000u);
	expect_fail(&im, "header checksum is wrong (magic at offset 0x1000)");
}

/* Bits 0-15 must be understood; 2 (video mode) is only a wish. */
static void test_header_flags(void **state)
{
	static struct img im;
	struct run r = { 0 };
	char want[64];

	for (unsigned bit = 0; bit < 32; bit++) {
		if (bit == 16)
			continue;       /* a.out kludge: has its own tests */
		img_std(&im, 32, 0);
		img_mb(&im, MB_OFF, (uint32_t)BIT(bit), 0);
		if (bit <= 2 || bit > 16) {
			expect_ok(&r, &im, NULL, NULL, 0);
			continue;
		}
		snprintf(want, sizeof(want), "header requires unsupported features (flags 0x%x",
			 1u << bit);
		expect_fail(&im, want);
	}
	run_free(&r);
}

/* --- rejected kernels ----------------------------------------------------------- */

static void test_not_elf(void **state)
{
	static struct img im;

	img_std(&im, 32, 0);
	im.b[1] = 'X';
	expect_fail(&im, "not an ELF file and no a.out kludge");
	img_std(&im, 32, 0);
	im.b[EI_CLASS] = 3;
	expect_fail(&im, "ELF class 3 is neither");
	img_std(&im, 32, 0);
	im.b[EI_DATA] = ELFDATA2MSB;
	expect_fail(&im, "not little-endian");
	img_std(&im, 32, 0);
	im.b[offsetof(Elf32_Ehdr, e_type)] = ET_DYN;
	expect_fail(&im, "ELF type 3 is not ET_EXEC");
	img_std(&im, 32, 0);
	im.b[offsetof(Elf32_Ehdr, e_machine)] = EM_X86_64;
	expect_fail(&im, "ELF32 machine 62 is not EM_386");
	img_std(&im, 64, 0);
	im.b[offsetof(Elf64_Ehdr, e_machine)] = EM_386;
	expect_fail(&im, "ELF64 machine 3 is not EM_X86_64");
	img_std(&im, 64, 0);
	im.b[offsetof(Elf64_Ehdr, e_phentsize)] = sizeof(Elf32_Phdr);
	expect_fail(&im, "ELF program header size 32 is below the 56 bytes");
	img_std(&im, 64, 0);
	im.b[offsetof(Elf64_Ehdr, e_phnum)] = 0xff;
	im.b[offsetof(Elf64_Ehdr, e_phnum) + 1] = 0xff;
	expect_fail(&im, "PN_XNUM");
}

static void test_truncated(void **state)
{
	static struct img im;

	/* the Multiboot header in the padding between ELF header and table */
	img_std(&im, 32, 0);
	img_mb(&im, 0x34, 0, 0);
	expect_fail_ram(&im, PHOFF + 0x40, RAM_SIZE, NULL, 0,
			"file truncated: the program header table (0x60 bytes at 0x40) ends past the file (0x80 bytes)");
	expect_fail_ram(&im, 0x3400, RAM_SIZE, NULL, 0,
			"file truncated: ELF segment 2 needs bytes up to 0x3800 but the file has 0x3400");
	expect_fail_ram(&im, 0x2000, RAM_SIZE, NULL, 0,
			"file truncated: ELF segment 0 needs bytes up to 0x2800 but the file has 0x2000");
	/* or in the ELF header itself, cut short */
	img_mb(&im, 0x20, 0, 0);
	expect_fail_ram(&im, 0x30, RAM_SIZE, NULL, 0,
			"file truncated: the ELF32 header needs 0x34 bytes but the file has 0x30");
	/* a table offset far past the file */
	img_std(&im, 64, 0);
	memset(im.b + offsetof(Elf64_Ehdr, e_phoff), 0xff, 8);
	expect_fail(&im, "file truncated: the program header table (0xa8 bytes at 0xffffffffffffffff)");
}

static void test_segment_outside_ram(void **state)
{
	static struct img im;
	const struct seg segs[] = {
		{ PT_LOAD, MB_OFF, 0x100000, 0x100000, 0x100, 0x100 },
		{ PT_LOAD, 0, 0, 0, 0, 0 },
		{ PT_LOAD, 0x2000, 0x200000, 0x200000, 0x100, 0x8e00000 },
	};
	struct run r = { 0 };

	img_elf(&im, 32, 0x100000, segs, ARRAY_SIZE(segs));
	img_mb(&im, MB_OFF, 0, 0);
	expect_fail_ram(&im, im.len, 128 * MiB, NULL, 0,
			"ELF segment 2 [0x200000-0x9000000) lies outside guest RAM (128 MiB)");
	expect_fail_ram(&im, im.len, 0x9000000 - 1, NULL, 0,
			"lies outside guest RAM (0x8ffffff bytes)");
	/* with one page more for the boot information it fits */
	run_load(&r, 0x9000000 + PAGE_SIZE, im.b, im.len, NULL, NULL, 0);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.res.kernel_end, 0x9000000);
	assert_int_equal(r.res.mbi, 0x9000000);
	run_free(&r);
}

static void test_segment_overflow(void **state)
{
	static struct img im;
	const struct seg off[] = {
		{ PT_LOAD, 0xfffffffffffff000ull, 0x100000, 0x100000, 0x2000, 0x2000 },
	};
	const struct seg addr[] = {
		{ PT_LOAD, MB_OFF, 0x100000, 0xfffffffffffff000ull, 0x100, 0x2000 },
	};
	const struct seg high[] = {
		{ PT_LOAD, MB_OFF, 0x100000, 0x100000000ull, 0x100, 0x100 },
	};

	img_elf(&im, 64, 0x100000, off, 1);
	img_mb(&im, MB_OFF, 0, 0);
	expect_fail(&im, "ELF segment 0: file offset 0xfffffffffffff000 + size 0x2000 overflows");
	img_elf(&im, 64, 0x100000, addr, 1);
	img_mb(&im, MB_OFF, 0, 0);
	expect_fail(&im, "ELF segment 0: address 0xfffffffffffff000 + size 0x2000 overflows");
	img_elf(&im, 64, 0x100000, high, 1);
	img_mb(&im, MB_OFF, 0, 0);
	expect_fail(&im, "ELF segment 0 [0x100000000-0x100000100) lies outside guest RAM (8 MiB)");
}

static void test_segment_sizes(void **state)
{
	static struct img im;
	const struct seg big[] = { { PT_LOAD, MB_OFF, 0x100000, 0x100000, 0x200, 0x100 } };
	const struct seg empty_big[] = { { PT_LOAD, MB_OFF, 0, 0, 0x10, 0 } };

	img_elf(&im, 32, 0x100000, big, 1);
	img_mb(&im, MB_OFF, 0, 0);
	expect_fail(&im, "ELF segment 0: p_filesz 0x200 exceeds p_memsz 0x100");
	img_elf(&im, 32, 0x100000, empty_big, 1);
	img_mb(&im, MB_OFF, 0, 0);
	expect_fail(&im, "p_filesz 0x10 exceeds p_memsz 0x0");
}

static void test_segments_overlap(void **state)
{
	static struct img im;
	const struct seg segs[] = {
		{ PT_LOAD, MB_OFF, 0x100000, 0x100000, 0x1000, 0x1000 },
		{ PT_LOAD, 0x2000, 0x200000, 0x200000, 0x100, 0x1000 },
		{ PT_LOAD, 0x3000, 0x300000, 0x200f00, 0x100, 0x200 },  /* in 1's bss */
	};
	const struct seg touch[] = {
		{ PT_LOAD, MB_OFF, 0x100000, 0x100000, 0x1000, 0x1000 },
		{ PT_LOAD, 0x2000, 0x101000, 0x101000, 0x100, 0x1000 },
	};
	struct run r = { 0 };

	img_elf(&im, 32, 0x100000, segs, ARRAY_SIZE(segs));
	img_mb(&im, MB_OFF, 0, 0);
	expect_fail(&im, "ELF segments 1 and 2 overlap");
	img_elf(&im, 32, 0x100000, touch, ARRAY_SIZE(touch));
	img_mb(&im, MB_OFF, 0, 0);
	expect_ok(&r, &im, NULL, NULL, 0);       /* adjacent is fine */
	run_free(&r);
}

static void test_no_pt_load(void **state)
{
	static struct img im;
	const struct seg segs[] = {
		{ PT_NOTE, MB_OFF, 0, 0, 0x100, 0x100 },
		{ PT_LOAD, MB_OFF, 0x100000, 0x100000, 0, 0 },
	};

	img_elf(&im, 32, 0x100000, segs, ARRAY_SIZE(segs));
	img_mb(&im, MB_OFF, 0, 0);
	expect_fail(&im, "ELF file has no PT_LOAD segment to load");
	img_elf(&im, 64, 0x100000, segs, 0);
	img_mb(&im, MB_OFF, 0, 0);
	expect_fail(&im, "ELF file has no PT_LOAD segment to load");
}

static void test_too_many_segments(void **state)
{
	static struct img im;
	struct seg segs[MB_MAX_SEGMENTS + 1];
	struct run r = { 0 };

	for (unsigned i = 0; i < ARRAY_SIZE(segs); i++)
		segs[i] = (struct seg){ PT_LOAD, MB_OFF, 0x100000 + i * 0x1000,
					0x100000 + i * 0x1000, 0x10, 0x10 };
	img_elf(&im, 32, 0x100000, segs, MB_MAX_SEGMENTS);
	img_mb(&im, MB_OFF, 0, 0);
	expect_ok(&r, &im, NULL, NULL, 0);
	run_free(&r);
	img_elf(&im, 32, 0x100000, segs, ARRAY_SIZE(segs));
	img_mb(&im, MB_OFF, 0, 0);
	expect_fail(&im, "more than 32 PT_LOAD segments");
}

static void test_entry(void **state)
{
	static struct img im;
	struct run r = { 0 };

	img_std(&im, 32, 0);
	im.b[offsetof(Elf32_Ehdr, e_entry) + 2] = 0x20;        /* 0x200010 */
	expect_fail(&im, "entry point 0x200010 is outside the loaded segments");
	/* in bss: nothing the file provided */
	img_std(&im, 32, 0);
	img_put32(&im, offsetof(Elf32_Ehdr, e_entry), DATA_PADDR + 0x900);
	expect_fail(&im, "entry point 0x102900 is outside the loaded segments");
	/* the physical address of a higher-half kernel is not its entry */
	img_std(&im, 32, 0xC0000000ull);
	img_put32(&im, offsetof(Elf32_Ehdr, e_entry), TEXT_PADDR + ENTRY_OFF);
	expect_fail(&im, "entry point 0x100010 is outside");
	/* the last byte of text is fine */
	img_std(&im, 32, 0);
	img_put32(&im, offsetof(Elf32_Ehdr, e_entry), TEXT_PADDR + 0x17ff);
	expect_ok(&r, &im, NULL, NULL, 0);
	assert_int_equal(r.res.entry, TEXT_PADDR + 0x17ff);
	run_free(&r);
}

static void test_entry_above_4g(void **state)
{
	static struct img im;
	uint64_t e = 0x100000000ull + TEXT_PADDR + ENTRY_OFF;

	img_std(&im, 64, 0);
	memcpy(im.b + offsetof(Elf64_Ehdr, e_entry), &e, sizeof(e));
	expect_fail(&im, "entry point 0x100100010 is above 4 GiB");
}

static void test_modules_do_not_fit(void **state)
{
	static struct img im;
	static uint8_t data[RAM_SIZE];	/* a module may be that big */
	const struct mb_module huge[] = {
		{ data, 64, "a" },
		{ data, 0xffffffffffff0000ull, "huge" },
	};
	struct mb_module big[] = {
		{ data, 64, "a" },
		{ data, RAM_SIZE - 0x106000 + 1, "initrd" },
	};

	struct run r = { 0 };

	img_std(&im, 32, 0);
	expect_fail_ram(&im, im.len, RAM_SIZE, huge, 2,
			"modules do not fit in guest RAM (8 MiB): module 1 (huge) has 0xffffffffffff0000 bytes");
	expect_fail_ram(&im, im.len, RAM_SIZE, big, 2,
			"modules do not fit in guest RAM (8 MiB): module 1 (initrd)");
	/* up to the last page, which the boot information takes */
	big[1].size = RAM_SIZE - 0x106000 - PAGE_SIZE;
	expect_ok(&r, &im, NULL, big, 2);
	assert_int_equal(r.res.mbi, RAM_SIZE - PAGE_SIZE);
	run_free(&r);
	big[1].size++;
	expect_fail_ram(&im, im.len, RAM_SIZE, big, 2,
			"boot information (0x");
}

static void test_info_does_not_fit(void **state)
{
	static struct img im;
	static char longcmd[8192];
	const struct seg segs[] = {
		{ PT_LOAD, MB_OFF, 0x1ff000, 0x1ff000, 0x100, 0x1000 },
	};
	struct run r = { 0 };

	memset(longcmd, 'c', sizeof(longcmd) - 1);
	img_elf(&im, 32, 0x1ff000, segs, 1);
	img_mb(&im, MB_OFF, 0, 0);
	/* RAM ends with the kernel: no page for the boot information */
	expect_fail_ram(&im, im.len, 2 * MiB, NULL, 0,
			"boot information (0x");
	/* one page more holds it, but not an 8 KiB command line */
	run_load(&r, 2 * MiB + PAGE_SIZE, im.b, im.len, NULL, NULL, 0);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.res.mbi, 2 * MiB);
	assert_int_equal(r.res.used_end, 2 * MiB + 116 + 96 + 1 + 10);
	run_free(&r);
	run_load(&r, 2 * MiB + PAGE_SIZE, im.b, im.len, longcmd, NULL, 0);
	assert_int_equal(r.rc, -1);
	assert_non_null(strstr(r.err, "boot information (0x20de bytes after 0x200000) does not fit in guest RAM (0x201000 bytes)"));
	assert_true(ram_zero(r.ram, 0, r.ram_size));
	run_free(&r);
}

static void test_small_ram(void **state)
{
	static struct img im;

	img_std(&im, 32, 0);
	expect_fail_ram(&im, im.len, 2 * MiB - 1, NULL, 0, "below the 2 MiB minimum");
}

/* --- real gcc/ld output ---------------------------------------------------------- */

static size_t load_file(const char *name, uint8_t *buf, size_t cap)
{
	char path[PATH_MAX + 64], exe[PATH_MAX];
	FILE *f;
	size_t n;
	ssize_t len;

	snprintf(path, sizeof(path), "tests/data/multiboot/%s", name);
	f = fopen(path, "rb");
	if (!f) {               /* not run from the top of the tree: try beside build/unit/ */
		len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		assert_true(len > 0);
		exe[len] = 0;
		*strrchr(exe, '/') = 0;
		snprintf(path, sizeof(path), "%s/../../tests/data/multiboot/%s", exe, name);
		f = fopen(path, "rb");
	}
	if (!f)
		fail_msg("cannot open %s", path);
	n = fread(buf, 1, cap, f);
	fclose(f);
	assert_true(n > 0 && n < cap);
	return n;
}

/* kernel.S: header first in .text at 1 MiB, _start right after it, the
 * marker string in .data, a 4 KiB stack in .bss. */
static void check_real_kernel(const char *name)
{
	static const char marker[] = "tickvisor multiboot test kernel";
	static uint8_t buf[IMG_CAP];
	static const uint8_t initrd[] = "initrd bytes";
	const struct mb_module mods[] = { { initrd, sizeof(initrd), "/initrd" } };
	size_t n = load_file(name, buf, sizeof(buf));
	struct run r = { 0 };
	struct mb_info mbi;
	uint8_t *m;

	run_load(&r, RAM_SIZE, buf, n, "kernel.elf arg", mods, 1);
	if (r.rc)
		fail_msg("%s: %s", name, r.err);
	assert_int_equal(r.res.entry, 0x10000c);
	assert_int_equal(r.res.kernel_start, 0x100000);
	assert_int_equal(ram32(&r, 0x100000), MB_HEADER_MAGIC);
	m = memmem(r.ram + 0x100000, r.res.kernel_end - 0x100000, marker, sizeof(marker));
	assert_non_null(m);
	assert_true(r.res.kernel_end - (uint64_t)(m - r.ram) >= sizeof(marker) + 4096);
	mbi = ram_info(&r);
	assert_mbi_common(&r, &mbi);
	assert_int_equal(mbi.mods_count, 1);
	assert_int_equal(ram32(&r, mbi.mods_addr), ALIGN_UP(r.res.kernel_end, PAGE_SIZE));
	assert_memory_equal(r.ram + ram32(&r, mbi.mods_addr), initrd, sizeof(initrd));
	assert_string_equal(ram_str(&r, mbi.cmdline), "kernel.elf arg");
	run_free(&r);
}

static void test_real_kernels(void **state)
{
	check_real_kernel("kernel32.elf");
	check_real_kernel("kernel64.elf");
}

/* --- fuzzing -------------------------------------------------------------------- */

#define FUZZ_RAM        (2 * MiB)
#define FUZZ_ITERS      20000u

static uint64_t fuzz_state = 0x9e3779b97f4a7c15ull;

static uint64_t fuzz_rand(void)
{
	/* xorshift64*: fixed seed, same run every time */
	fuzz_state ^= fuzz_state >> 12;
	fuzz_state ^= fuzz_state << 25;
	fuzz_state ^= fuzz_state >> 27;
	return fuzz_state * 0x2545f4914f6cdd1dull;
}

static uint64_t fuzz_value(void)
{
	static const uint64_t interesting[] = {
		0, 1, 2, 3, 4, 0x34, 0x40, 0x7f, 0x80, 0xff, 0x1000, 0xfff, 0x100000, 0x1ff000,
		0x200000, 0x7fffffff, 0x80000000, 0xfffffff0, 0xffffffff, 0x100000000ull,
		0x7fffffffffffffffull, 0xfffffffffffff000ull, 0xffffffffffffffffull,
	};
	uint64_t r = fuzz_rand();

	switch (r % 4) {
	case 0: return interesting[(r >> 8) % ARRAY_SIZE(interesting)];
	case 1: return (r >> 8) & 0xffff;
	case 2: return TEXT_PADDR + ((r >> 8) % 0x200000) - 0x10000;
	default: return r >> 2;
	}
}

/* One of the fields the loader reads, as (offset, width). */
static void fuzz_field(int bits, size_t *off, size_t *width)
{
	static const size_t e32[][2] = {
		{ 16, 2 }, { 18, 2 }, { 24, 4 }, { 28, 4 }, { 42, 2 }, { 44, 2 },
	};
	static const size_t e64[][2] = {
		{ 16, 2 }, { 18, 2 }, { 24, 8 }, { 32, 8 }, { 54, 2 }, { 56, 2 },
	};
	static const size_t p32[][2] = {
		{ 0, 4 }, { 4, 4 }, { 8, 4 }, { 12, 4 }, { 16, 4 }, { 20, 4 },
	};
	static const size_t p64[][2] = {
		{ 0, 4 }, { 8, 8 }, { 16, 8 }, { 24, 8 }, { 32, 8 }, { 40, 8 },
	};
	uint64_t r = fuzz_rand();
	unsigned k = (unsigned)(r % 6);

	switch ((r >> 8) % 3) {
	case 0:
		*off = bits == 32 ? e32[k][0] : e64[k][0];
		*width = bits == 32 ? e32[k][1] : e64[k][1];
		break;
	case 1:
		*off = phdr_off(bits, (unsigned)((r >> 16) % 4), bits == 32 ? p32[k][0] : p64[k][0]);
		*width = bits == 32 ? p32[k][1] : p64[k][1];
		break;
	default:                /* the Multiboot header and its address fields */
		*off = MB_OFF + 4 * ((r >> 16) % 8);
		*width = 4;
		break;
	}
}

static void fuzz_image(struct img *im, int *bits)
{
	static const uint32_t aout[5] = { 0x100000 + MB_OFF, 0x100000, 0x103800, 0x106000, 0x100000 + MB_OFF + 0x20 };
	uint64_t r = fuzz_rand();
	unsigned n = 1 + (unsigned)((r >> 8) % 6);

	*bits = r % 3 == 1 ? 64 : 32;
	img_std(im, *bits, (r >> 4) % 2 ? 0xC0000000ull : 0);
	if (r % 3 == 2)
		img_mb_aout(im, MB_OFF, MB_HF_MEMORY_INFO, aout);
	for (unsigned i = 0; i < n; i++) {
		uint64_t v = fuzz_value();
		size_t off, width;

		if (fuzz_rand() % 3 == 0) {             /* a random byte anywhere */
			im->b[fuzz_rand() % im->len] = (uint8_t)v;
			continue;
		}
		fuzz_field(*bits, &off, &width);
		memcpy(im->b + off, &v, width);
	}
	/* mostly keep a valid checksum, so the ELF checks get exercised */
	if (fuzz_rand() % 4 && im->b[MB_OFF] == 0x02) {
		uint32_t flags;

		memcpy(&flags, im->b + MB_OFF + 4, 4);
		img_mb(im, MB_OFF, flags, 0);
	}
}

static void fuzz_check_ok(struct run *r, unsigned nmods, const struct mb_module *mods)
{
	struct mb_info mbi = ram_info(r);

	assert_string_equal(r->err, "");
	assert_int_equal(r->res.magic, MB_BOOTLOADER_MAGIC);
	assert_true(r->res.kernel_start < r->res.kernel_end);
	assert_true(r->res.kernel_end <= r->res.mbi);
	assert_true(r->res.mbi + sizeof(mbi) <= r->res.used_end);
	assert_true(r->res.used_end <= r->ram_size);
	assert_true(r->res.entry >= r->res.kernel_start && r->res.entry < r->res.kernel_end);
	assert_int_equal(mbi.mods_count, nmods);
	for (unsigned i = 0; i < nmods; i++) {
		uint32_t start = ram32(r, mbi.mods_addr + 16 * i);

		assert_int_equal(start % PAGE_SIZE, 0);
		assert_true(start >= r->res.kernel_end);
		assert_int_equal(ram32(r, mbi.mods_addr + 16 * i + 4) - start, mods[i].size);
	}
	/* nothing written past the end of what was placed */
	assert_true(ram_zero(r->ram, r->res.used_end, r->ram_size));
	memset(r->ram, 0, r->res.used_end);
}

static void test_fuzz(void **state)
{
	static struct img im;
	static uint8_t mod_data[FUZZ_RAM];
	struct mb_module mods[2];
	struct run r = { 0 };
	unsigned ok = 0;

	memset(mod_data, 0x3c, sizeof(mod_data));
	for (unsigned it = 0; it < FUZZ_ITERS; it++) {
		uint64_t x = fuzz_rand();
		unsigned nmods = (unsigned)(x % 3);
		size_t len;
		int bits;

		fuzz_image(&im, &bits);
		len = x % 5 == 0 ? (size_t)((x >> 8) % (im.len + 1)) : im.len;
		for (unsigned i = 0; i < nmods; i++) {
			uint64_t sz = fuzz_rand() % 4 ? fuzz_rand() % 0x10000 : fuzz_rand() % FUZZ_RAM;

			mods[i] = (struct mb_module){ mod_data, sz, i ? NULL : "mod" };
		}
		run_load(&r, FUZZ_RAM, im.b, len, (x >> 4) % 2 ? "cmd line" : NULL, mods, nmods);
		assert_true(r.rc == 0 || r.rc == -1);
		if (r.rc) {
			assert_true(r.err[0] != 0);
			assert_true(ram_zero(r.ram, 0, r.ram_size));
			continue;
		}
		ok++;
		fuzz_check_ok(&r, nmods, mods);
	}
	/* the mutations leave enough valid images to reach the writing code */
	assert_true(ok > FUZZ_ITERS / 20);
	run_free(&r);
}

#define T(f) cmocka_unit_test(f)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_elf32),
		T(test_elf64),
		T(test_entry_translated),
		T(test_elf_odd_segments),
		T(test_aout_kludge),
		T(test_aout_kludge_in_elf),
		T(test_aout_errors),
		T(test_mbi_no_modules),
		T(test_mbi_modules),
		T(test_header_search),
		T(test_header_checksum),
		T(test_header_flags),
		T(test_not_elf),
		T(test_truncated),
		T(test_segment_outside_ram),
		T(test_segment_overflow),
		T(test_segment_sizes),
		T(test_segments_overlap),
		T(test_no_pt_load),
		T(test_too_many_segments),
		T(test_entry),
		T(test_entry_above_4g),
		T(test_modules_do_not_fit),
		T(test_info_does_not_fit),
		T(test_small_ram),
		T(test_real_kernels),
		T(test_fuzz),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
