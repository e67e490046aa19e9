// SPDX-License-Identifier: BSD-2-Clause
/*
 * vmm/loader/linux.c on the host. bzImages are built in memory from the
 * field table of Documentation/arch/x86/boot.rst (offsets written out
 * here again, not taken from linux.h), and the real kernel Debian ships
 * is loaded from $TICKVISOR_LINUX_KERNEL, which make test's harness sets
 * to the kernel of scripts/linux-guest.py's image; that test is skipped,
 * with a message, only where the variable is unset (a declared skip of
 * tests/harness.py), and fails on a kernel it cannot load. Guest RAM and every image are
 * heap buffers of exactly their size, so ASan catches any access past
 * either; a rejected image must leave RAM as it was.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/loader/linux.h"

#define RAM_SIZE        (64 * MiB)
#define SETUP_SECTS     4u
#define PM_OFF          ((SETUP_SECTS + 1) * 512u)
#define PM_SIZE         (64 * 1024u)
#define IMG_SIZE        (PM_OFF + PM_SIZE)
#define PREF            0x1000000ull
#define INIT_SIZE       (8 * MiB)
#define ERR_LEN         LX_ERR_LEN
#define RAM_FILL        0x5a

static void put16(uint8_t *p, uint16_t v) { memcpy(p, &v, 2); }
static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static void put64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }
static uint16_t rd16(const uint8_t *p) { uint16_t v; memcpy(&v, p, 2); return v; }
static uint32_t rd32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint64_t rd64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }

/* A protocol 2.15 bzImage as a 64-bit kernel's header has it. */
static uint8_t *make_image(size_t size)
{
	uint8_t *im = malloc(size);

	assert_non_null(im);
	for (size_t i = 0; i < size; i++)
		im[i] = (uint8_t)(i * 13 + 7);
	memset(im + 0x1f1, 0, 0x270 - 0x1f1);
	im[0x1f1] = SETUP_SECTS;                        /* setup_sects */
	put32(im + 0x1f4, PM_SIZE / 16);                /* syssize */
	put16(im + 0x1fe, 0xaa55);                      /* boot_flag */
	im[0x200] = 0xeb;                               /* jump ... */
	im[0x201] = 0x6a;                               /* ... to 0x26c: header end */
	memcpy(im + 0x202, "HdrS", 4);
	put16(im + 0x206, 0x020f);                      /* version */
	im[0x211] = 0x01;                               /* loadflags: LOADED_HIGH */
	put32(im + 0x214, 0x100000);                    /* code32_start */
	put32(im + 0x22c, 0x7fffffff);                  /* initrd_addr_max */
	put32(im + 0x230, 0x200000);                    /* kernel_alignment */
	im[0x234] = 1;                                  /* relocatable_kernel */
	im[0x235] = 21;                                 /* min_alignment */
	put16(im + 0x236, 0x7f);                        /* xloadflags */
	put32(im + 0x238, 2047);                        /* cmdline_size */
	put64(im + 0x258, PREF);                        /* pref_address */
	put32(im + 0x260, INIT_SIZE);                   /* init_size */
	put32(im + 0x268, 0x1234);                      /* kernel_info_offset */
	return im;
}

static uint8_t *make_ram(uint64_t size)
{
	uint8_t *ram = malloc(size);

	assert_non_null(ram);
	memset(ram, RAM_FILL, size);
	return ram;
}

static void assert_ram_untouched(const uint8_t *ram, uint64_t size)
{
	for (uint64_t i = 0; i < size; i += 4096)
		if (ram[i] != RAM_FILL || ram[i + 4095] != RAM_FILL)
			fail_msg("guest RAM written at 0x%lx by a rejected image", (unsigned long)i);
}

/* Loads, expecting failure with `why` in the message and RAM untouched. */
static void expect_fail(uint8_t *im, size_t size, uint64_t ram_size, const struct linux_boot *b,
			const char *why)
{
	static const struct linux_boot none;
	uint8_t *ram = make_ram(ram_size);
	struct linux_result r;
	char err[ERR_LEN] = "";

	assert_int_equal(linux_load(ram, ram_size, im, size, b ? b : &none, &r, err, sizeof(err)), -1);
	if (!strstr(err, why))
		fail_msg("expected \"%s\" in \"%s\"", why, err);
	assert_ram_untouched(ram, ram_size);
	free(ram);
}

/* A GDT descriptor (SDM Vol. 3A, "Segment Descriptors"): base, limit in
 * bytes with G applied, type, S, P, D/B. */
static void assert_flat_desc(uint64_t d, unsigned type)
{
	uint32_t base = (uint32_t)(((d >> 16) & 0xffffff) | ((d >> 56) << 24));
	uint32_t limit = (uint32_t)((d & 0xffff) | ((d >> 32) & 0xf0000));

	assert_int_equal(base, 0);
	assert_true((d >> 55) & 1);                     /* G: 4 KiB units */
	assert_int_equal(((uint64_t)limit << 12) | 0xfff, 0xffffffffull);
	assert_int_equal((d >> 40) & 0xf, type);
	assert_true((d >> 44) & 1);                     /* S: code or data */
	assert_true((d >> 47) & 1);                     /* P */
	assert_true((d >> 54) & 1);                     /* D/B: 32-bit */
}

static void test_is_bzimage(void **state)
{
	uint8_t *im = make_image(IMG_SIZE);
	static const uint8_t elf[0x300] = { 0x7f, 'E', 'L', 'F' };

	(void)state;
	assert_true(linux_is_bzimage(im, IMG_SIZE));
	assert_false(linux_is_bzimage(im, 0x205));
	assert_false(linux_is_bzimage(elf, sizeof(elf)));
	free(im);
}

/* The whole 32-bit boot protocol set-up of a synthetic bzImage. */
static void test_load_synthetic(void **state)
{
	uint8_t *im = make_image(IMG_SIZE), *ram = make_ram(RAM_SIZE), *bp;
	uint8_t part0[1001], part1[2000];
	const struct linux_initrd parts[] = {
		{ part0, sizeof(part0), "a.cpio" }, { part1, sizeof(part1), "b.cpio" },
	};
	const struct linux_boot boot = {
		.cmdline = "console=ttyS0 quiet", .initrd = parts, .ninitrd = 2,
		.acpi_rsdp = 0xf0000,
	};
	struct linux_result r;
	char err[ERR_LEN];
	uint64_t rd;

	(void)state;
	memset(part0, 0x11, sizeof(part0));
	memset(part1, 0x22, sizeof(part1));
	assert_int_equal(linux_load(ram, RAM_SIZE, im, IMG_SIZE, &boot, &r, err, sizeof(err)), 0);
	assert_string_equal(err, "");
	/* "Loading The Rest of The Kernel": the file from (setup_sects+1)*512
	 * at pref_address, which is also the 32-bit entry. */
	assert_int_equal(r.entry, PREF);
	assert_int_equal(r.kernel_start, PREF);
	assert_int_equal(r.kernel_end, PREF + PM_SIZE);
	assert_int_equal(r.runtime_start, PREF);
	assert_int_equal(r.runtime_end, PREF + INIT_SIZE);
	assert_memory_equal(ram + PREF, im + PM_OFF, PM_SIZE);
	assert_int_equal(r.protocol, 0x020f);
	/* The zero page: header copied from 0x1f1 to 0x26c, loader fields. */
	bp = ram + r.boot_params;
	assert_int_equal(r.boot_params, 0x7000);
	assert_memory_equal(bp + 0x1f1, im + 0x1f1, 0x210 - 0x1f1);
	assert_memory_equal(bp + 0x22c, im + 0x22c, 0x26c - 0x22c);
	assert_int_equal(bp[0x26c], 0);                 /* past the header: zero */
	assert_int_equal(bp[0x210], 0xff);              /* type_of_loader */
	assert_int_equal(bp[0x211], 0x01);              /* LOADED_HIGH, no heap */
	assert_int_equal(rd32(bp + 0x214), PREF);       /* code32_start */
	assert_int_equal(rd32(bp + 0x228), 0x8000);     /* cmd_line_ptr */
	assert_string_equal((char *)ram + 0x8000, "console=ttyS0 quiet");
	assert_int_equal(rd64(bp + 0x070), 0xf0000);    /* acpi_rsdp_addr */
	assert_int_equal(bp[0x1ef], 0);                 /* sentinel */
	/* The initrd: both files, the second 4-byte aligned, at the top of
	 * RAM on a page boundary. */
	rd = rd32(bp + 0x218);
	assert_int_equal(rd, r.initrd_start);
	assert_int_equal(rd32(bp + 0x21c), 1004 + 2000);
	assert_int_equal(r.initrd_size, 1004 + 2000);
	assert_int_equal(rd % 4096, 0);
	assert_true(rd + 3004 <= RAM_SIZE && RAM_SIZE - (rd + 3004) < 4096);
	assert_true(rd >= r.runtime_end);
	assert_memory_equal(ram + rd, part0, sizeof(part0));
	assert_int_equal(ram[rd + 1001] | ram[rd + 1002] | ram[rd + 1003], 0);
	assert_memory_equal(ram + rd + 1004, part1, sizeof(part1));
	/* BIOS data area: EBDA at 0x9FC00, 639 KiB of base memory. */
	assert_int_equal(rd16(ram + 0x40e), 0x9fc0);
	assert_int_equal(rd16(ram + 0x413), 639);
	/* "32-bit Boot Protocol": __BOOT_CS (0x10) execute/read, __BOOT_DS
	 * (0x18) read/write, both 4 GiB flat. */
	assert_int_equal(r.gdt, 0x6000);
	assert_flat_desc(rd64(ram + r.gdt + 0x10), 0xb);        /* code, read, accessed */
	assert_flat_desc(rd64(ram + r.gdt + 0x18), 0x3);        /* data, write, accessed */
	free(ram);
	free(im);
}

/* zero-page.rst, e820_table: RAM below the EBDA and from 1 MiB, the EBDA
 * and the BIOS area (where the ACPI tables are) reserved. */
static void test_e820(void **state)
{
	static const uint64_t want[][3] = {
		{ 0, 0x9fc00, 1 }, { 0x9fc00, 0x400, 2 }, { 0xf0000, 0x10000, 2 },
		{ 0x100000, RAM_SIZE - 0x100000, 1 },
	};
	uint8_t *im = make_image(IMG_SIZE), *ram = make_ram(RAM_SIZE), *bp;
	const struct linux_boot boot = { 0 };
	struct linux_result r;
	char err[ERR_LEN];

	(void)state;
	assert_int_equal(linux_load(ram, RAM_SIZE, im, IMG_SIZE, &boot, &r, err, sizeof(err)), 0);
	bp = ram + r.boot_params;
	assert_int_equal(bp[0x1e8], 4);
	for (unsigned i = 0; i < 4; i++) {
		const uint8_t *e = bp + 0x2d0 + 20 * i;

		assert_int_equal(rd64(e), want[i][0]);
		assert_int_equal(rd64(e + 8), want[i][1]);
		assert_int_equal(rd32(e + 16), want[i][2]);
	}
	assert_int_equal(r.initrd_start, 0);
	assert_int_equal(rd32(bp + 0x218) | rd32(bp + 0x21c), 0);
	assert_string_equal((char *)ram + rd32(bp + 0x228), "");
	free(ram);
	free(im);
}

/* A non-relocatable kernel is loaded at 1 MiB and runs at pref_address:
 * init_size is counted from there. */
static void test_not_relocatable(void **state)
{
	uint8_t *im = make_image(IMG_SIZE), *ram = make_ram(RAM_SIZE);
	const struct linux_boot boot = { 0 };
	struct linux_result r;
	char err[ERR_LEN];

	(void)state;
	im[0x234] = 0;
	assert_int_equal(linux_load(ram, RAM_SIZE, im, IMG_SIZE, &boot, &r, err, sizeof(err)), 0);
	assert_int_equal(r.entry, 0x100000);
	assert_int_equal(r.runtime_start, PREF);
	assert_int_equal(r.runtime_end, PREF + INIT_SIZE);
	assert_memory_equal(ram + 0x100000, im + PM_OFF, PM_SIZE);
	free(ram);
	/* ... and one that wants to run below 1 MiB cannot be moved. */
	put64(im + 0x258, 0x10000);
	expect_fail(im, IMG_SIZE, RAM_SIZE, NULL, "not relocatable");
	free(im);
}

/* The kernel Debian ships: protocol 2.15, 16 MiB preferred, 2 MiB
 * aligned, init_size from its header. */
static void test_real_kernel(void **state)
{
	const char *path = getenv("TICKVISOR_LINUX_KERNEL");
	FILE *f;
	uint8_t *im, *ram;
	long size;
	uint32_t init_size;
	struct linux_result r;
	const struct linux_boot boot = { .cmdline = "console=ttyS0" };
	char err[ERR_LEN];

	(void)state;
	if (!path || !*path) {
		print_message("SKIP: TICKVISOR_LINUX_KERNEL is unset (make test sets it to "
			      "scripts/linux-guest.py's kernel)\n");
		skip();
	}
	f = fopen(path, "rb");
	if (!f)
		fail_msg("TICKVISOR_LINUX_KERNEL=%s: cannot open it", path);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	size = ftell(f);
	assert_true(size > 0);
	rewind(f);
	im = malloc((size_t)size);
	assert_non_null(im);
	assert_int_equal(fread(im, 1, (size_t)size, f), (size_t)size);
	fclose(f);
	assert_true(linux_is_bzimage(im, (uint64_t)size));
	init_size = rd32(im + 0x260);
	ram = make_ram(256 * MiB);
	assert_int_equal(linux_load(ram, 256 * MiB, im, (uint64_t)size, &boot, &r, err,
				    sizeof(err)), 0);
	assert_true(r.protocol >= 0x020f);
	assert_int_equal(r.entry, rd64(im + 0x258));
	assert_int_equal(r.runtime_end - r.runtime_start, init_size);
	assert_memory_equal(ram + r.entry, im + (im[0x1f1] + 1) * 512,
			    (size_t)size - (im[0x1f1] + 1) * 512u);
	assert_memory_equal(ram + r.boot_params + 0x202, "HdrS", 4);
	free(ram);
	/* 48 MiB cannot hold 16 MiB + init_size. */
	expect_fail(im, (size_t)size, 48 * MiB, &boot, "kernel does not fit");
	free(im);
}

static void test_bad_headers(void **state)
{
	uint8_t *im = make_image(IMG_SIZE);
	char longline[40];
	const struct linux_boot lb = { .cmdline = longline };

	(void)state;
	put16(im + 0x206, 0x0209);
	expect_fail(im, IMG_SIZE, RAM_SIZE, NULL, "boot protocol 2.09 is older than 2.10");
	put16(im + 0x206, 0x020f);
	im[0x211] = 0;
	expect_fail(im, IMG_SIZE, RAM_SIZE, NULL, "not a bzImage");
	im[0x211] = 1;
	memcpy(im + 0x202, "HdrT", 4);
	expect_fail(im, IMG_SIZE, RAM_SIZE, NULL, "HdrS");
	memcpy(im + 0x202, "HdrS", 4);
	put16(im + 0x1fe, 0x55aa);
	expect_fail(im, IMG_SIZE, RAM_SIZE, NULL, "boot_flag");
	put16(im + 0x1fe, 0xaa55);
	im[0x201] = 0x20;                       /* header ends at 0x222 */
	expect_fail(im, IMG_SIZE, RAM_SIZE, NULL, "before the protocol 2.10 fields");
	im[0x201] = 0x6a;
	put32(im + 0x1f4, PM_SIZE / 16 + 1);    /* syssize beyond the file */
	expect_fail(im, IMG_SIZE, RAM_SIZE, NULL, "file truncated");
	put32(im + 0x1f4, PM_SIZE / 16);
	put32(im + 0x230, 0x3000);
	expect_fail(im, IMG_SIZE, RAM_SIZE, NULL, "kernel_alignment");
	put32(im + 0x230, 0x200000);
	put64(im + 0x258, 5 * GiB);
	expect_fail(im, IMG_SIZE, RAM_SIZE, NULL, "4 GiB");
	put64(im + 0x258, PREF);
	expect_fail(im, PM_OFF, RAM_SIZE, NULL, "file truncated");
	expect_fail(im, 0x230, RAM_SIZE, NULL, "file truncated");
	put32(im + 0x238, 16);                  /* cmdline_size */
	memset(longline, 'x', sizeof(longline) - 1);
	longline[sizeof(longline) - 1] = 0;
	expect_fail(im, IMG_SIZE, RAM_SIZE, &lb, "command line has 39 characters, the kernel takes at most 16");
	free(im);
}

/* Guest RAM that cannot hold the kernel or the initrd. */
static void test_does_not_fit(void **state)
{
	uint8_t *im = make_image(IMG_SIZE);
	uint8_t *big = calloc(1, 41 * MiB);
	const struct linux_initrd part = { big, 41 * MiB, "big.cpio" };
	const struct linux_boot b = { .initrd = &part, .ninitrd = 1 };

	(void)state;
	assert_non_null(big);
	expect_fail(im, IMG_SIZE, 20 * MiB, NULL, "kernel does not fit: it runs at 0x1000000");
	expect_fail(im, IMG_SIZE, RAM_SIZE, &b, "initrd too big: 0x2900000 bytes");
	/* initrd_addr_max below the kernel's end leaves no room either. */
	put32(im + 0x22c, 0x017fffff);
	expect_fail(im, IMG_SIZE, RAM_SIZE, &b, "initrd too big");
	free(big);
	free(im);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_is_bzimage),
		cmocka_unit_test(test_load_synthetic),
		cmocka_unit_test(test_e820),
		cmocka_unit_test(test_not_relocatable),
		cmocka_unit_test(test_real_kernel),
		cmocka_unit_test(test_bad_headers),
		cmocka_unit_test(test_does_not_fit),
	};

	return cmocka_run_group_tests_name("linux", tests, NULL, NULL);
}
