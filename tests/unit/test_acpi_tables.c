// SPDX-License-Identifier: BSD-2-Clause
/*
 * vmm/dev/acpi_tables.c on the host: the tables a guest gets are built
 * into a buffer standing for guest memory at 0xF0000 and read back by the
 * project's own parser (drivers/acpi.c) and by byte checks written from
 * ACPI 6.4 here. The FADT offsets the parser does not share are checked
 * against a hardware-reduced FADT another VMM made (Firecracker's, in
 * tests/data/acpi/host-FACP.bin).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "drivers/acpi.h"
#include "vmm/dev/acpi_tables.h"

#define BASE            ACPI_TABLES_BASE
#define ERR_LEN         160u

static uint8_t mem[ACPI_TABLES_SIZE];

static const void *map(uint64_t phys, size_t len, void *ctx)
{
	(void)ctx;
	if (phys < BASE || phys - BASE > sizeof(mem) || len > sizeof(mem) - (phys - BASE))
		return NULL;
	return mem + (phys - BASE);
}

static const uint8_t *at(uint64_t phys)
{
	assert_true(phys >= BASE && phys < BASE + sizeof(mem));
	return mem + (phys - BASE);
}

static uint8_t sum(const uint8_t *p, size_t len)
{
	uint8_t s = 0;

	while (len--)
		s += *p++;
	return s;
}

static void build(const uint32_t *ids, uint32_t n, struct acpi_tables_layout *l)
{
	char err[ERR_LEN] = "";

	memset(mem, 0xa5, sizeof(mem));
	assert_int_equal(acpi_tables_build(mem, sizeof(mem), BASE, ids, n, l, err, sizeof(err)), 0);
	assert_string_equal(err, "");
}

static void parse(struct acpi_info *info, uint64_t rsdp)
{
	char err[ERR_LEN] = "";

	memset(info, 0, sizeof(*info));
	assert_int_equal(acpi_parse(info, rsdp, map, NULL, err, sizeof(err)), 0);
	if (info->nnotes)
		fail_msg("parser note: %s", info->notes[0]);
}

static void build_n(uint32_t n, struct acpi_tables_layout *l)
{
	uint32_t ids[ACPI_TV_MAX_CPUS];

	for (uint32_t i = 0; i < n; i++)
		ids[i] = i;
	build(ids, n, l);
}

/* The parser finds every table, the MADT lists each vCPU once. */
static void test_parse_cpus(void **state)
{
	static const uint32_t counts[] = { 1, 2, 4, 16 };
	struct acpi_tables_layout l;
	struct acpi_info info;

	(void)state;
	for (unsigned c = 0; c < ARRAY_SIZE(counts); c++) {
		build_n(counts[c], &l);
		parse(&info, l.rsdp);
		assert_true(info.present);
		assert_true(info.xsdt);
		assert_int_equal(info.rsdp_revision, 2);
		assert_string_equal(info.oem_id, "TICKVI");
		assert_true(info.has_madt);
		assert_int_equal(info.ncpus, counts[c]);
		for (uint32_t i = 0; i < counts[c]; i++)
			assert_int_equal(info.apic_ids[i], i);
		assert_int_equal(info.lapic_addr, 0xfee00000u);
		assert_false(info.pcat_compat);
		assert_false(info.has_ioapic);
		assert_false(info.has_hpet);
	}
}

/* Hardware-reduced FADT with the reset register the linux-dev models. */
static void test_parse_fadt(void **state)
{
	struct acpi_tables_layout l;
	struct acpi_info info;

	(void)state;
	build_n(2, &l);
	parse(&info, l.rsdp);
	assert_true(info.has_fadt);
	assert_int_equal(info.fadt_revision, 6);
	assert_true(info.hw_reduced);
	assert_int_equal(info.pm_tmr_port, 0);
	assert_int_equal(info.pm1a_cnt_port, 0);
	assert_true(info.reset_supported);
	assert_int_equal(info.reset_reg.space_id, ACPI_GAS_IO);
	assert_int_equal(info.reset_reg.bit_width, 8);
	assert_int_equal(info.reset_reg.address, 0xcf9);
	assert_int_equal(info.reset_value, 6);
}

/* Every table's bytes sum to 0 over its Length; the RSDP over its first
 * 20 bytes and over all 36. */
static void test_checksums(void **state)
{
	struct acpi_tables_layout l;
	uint64_t addr[5];

	(void)state;
	build_n(16, &l);
	assert_int_equal(l.rsdp % 16, 0);
	assert_memory_equal(at(l.rsdp), "RSD PTR ", 8);
	assert_int_equal(sum(at(l.rsdp), 20), 0);
	assert_int_equal(sum(at(l.rsdp), 36), 0);
	addr[0] = l.rsdt, addr[1] = l.xsdt, addr[2] = l.fadt, addr[3] = l.dsdt, addr[4] = l.madt;
	for (unsigned i = 0; i < ARRAY_SIZE(addr); i++) {
		uint32_t len;

		memcpy(&len, at(addr[i]) + 4, 4);
		assert_true(len >= 36 && addr[i] + len <= l.end);
		assert_int_equal(sum(at(addr[i]), len), 0);
	}
	assert_true(l.end - BASE <= ACPI_TABLES_SIZE);
}

/* RSDT and XSDT list the same two tables; the RSDT is there for OSes
 * that read ACPI 1.0 tables only. */
static void test_root_tables(void **state)
{
	struct acpi_tables_layout l;
	uint32_t r[2];
	uint64_t x[2];

	(void)state;
	build_n(1, &l);
	memcpy(r, at(l.rsdt) + 36, sizeof(r));
	memcpy(x, at(l.xsdt) + 36, sizeof(x));
	assert_int_equal(r[0], l.fadt);
	assert_int_equal(r[1], l.madt);
	assert_int_equal(x[0], l.fadt);
	assert_int_equal(x[1], l.madt);
	assert_memory_equal(at(l.fadt), "FACP", 4);
	assert_memory_equal(at(l.madt), "APIC", 4);
}

/* ACPI 6.4 "Processor Local x2APIC Structure": IDs an 8-bit xAPIC entry
 * cannot carry (255 is its broadcast) get a type 9 entry; the parser sees
 * all of them. */
static void test_x2apic_entries(void **state)
{
	static const uint32_t ids[] = { 0, 1, 254, 255, 300, 0x10000 };
	struct acpi_tables_layout l;
	struct acpi_info info;
	const uint8_t *t;
	uint32_t len, off = 44, x2 = 0;

	(void)state;
	build(ids, ARRAY_SIZE(ids), &l);
	parse(&info, l.rsdp);
	assert_int_equal(info.ncpus, ARRAY_SIZE(ids));
	for (unsigned i = 0; i < ARRAY_SIZE(ids); i++)
		assert_int_equal(info.apic_ids[i], ids[i]);
	t = at(l.madt);
	memcpy(&len, t + 4, 4);
	for (unsigned i = 0; off < len; i++, off += t[off + 1]) {
		uint32_t id, uid;

		if (ids[i] < 255) {
			assert_int_equal(t[off], 0);
			assert_int_equal(t[off + 1], 8);
			assert_int_equal(t[off + 3], ids[i]);
			assert_int_equal(t[off + 2], i);        /* ACPI Processor UID */
			continue;
		}
		x2++;
		assert_int_equal(t[off], 9);
		assert_int_equal(t[off + 1], 16);
		memcpy(&id, t + off + 4, 4);
		memcpy(&uid, t + off + 12, 4);
		assert_int_equal(id, ids[i]);
		assert_int_equal(uid, i);
	}
	assert_int_equal(x2, 3);
}

/* The DSDT, decoded here from the AML encodings (ACPI 6.4 "AML
 * Specification"): Name(_S5, Package(4) {5, 5, 0, 0}), and both of the
 * FADT's DSDT pointers lead to it. */
static void test_dsdt_s5(void **state)
{
	struct acpi_tables_layout l;
	const uint8_t *t, *f, *a;
	uint32_t len, dsdt32;
	uint64_t dsdt64;

	(void)state;
	build_n(2, &l);
	f = at(l.fadt);
	memcpy(&dsdt32, f + 40, 4);
	memcpy(&dsdt64, f + 140, 8);
	assert_int_equal(dsdt32, l.dsdt);
	assert_int_equal(dsdt64, l.dsdt);
	t = at(l.dsdt);
	assert_memory_equal(t, "DSDT", 4);
	assert_int_equal(t[8], 2);              /* revision 2: 64-bit integers */
	memcpy(&len, t + 4, 4);
	a = t + 36;
	assert_int_equal(len - 36, 14 + 42);    /* \_S5, then \_SB.RTC */
	assert_int_equal(a[0], 0x08);           /* NameOp */
	assert_memory_equal(a + 1, "_S5_", 4);
	assert_int_equal(a[5], 0x12);           /* PackageOp */
	assert_int_equal(a[6], 8);              /* PkgLength: itself to the package's end */
	assert_int_equal(a[7], 4);              /* NumElements */
	assert_int_equal(a[8], 0x0a);           /* BytePrefix */
	assert_int_equal(a[9], ACPI_TV_SLP_TYP_S5);
	assert_int_equal(a[10], 0x0a);
	assert_int_equal(a[11], ACPI_TV_SLP_TYP_S5);
	assert_int_equal(a[12], 0x00);          /* ZeroOp */
	assert_int_equal(a[13], 0x00);
}

/* The CMOS RTC in the DSDT (after \_S5), decoded by hand as above and
 * checked against `iasl -d` of the table: Scope (\_SB) { Device (RTC) {
 * Name (_HID, EisaId ("PNP0B00")), Name (_CRS, ResourceTemplate () {
 * IO (Decode16, 0x70, 0x70, 1, 2) }) } }, and no IRQ descriptor: the
 * guest has no legacy IRQ 8 (Linux's rtc-cmos then runs without one). */
static void test_dsdt_rtc(void **state)
{
	struct acpi_tables_layout l;
	const uint8_t *t, *s, *d, *crs;
	uint32_t len;

	(void)state;
	build_n(1, &l);
	t = at(l.dsdt);
	memcpy(&len, t + 4, 4);
	s = t + 36 + 14;
	assert_int_equal(s[0], 0x10);                   /* ScopeOp */
	assert_int_equal(s[1], len - 36 - 14 - 1);      /* PkgLength: to the table's end */
	assert_memory_equal(s + 2, "_SB_", 4);
	d = s + 6;
	assert_int_equal(d[0], 0x5b);                   /* DeviceOp */
	assert_int_equal(d[1], 0x82);
	assert_int_equal(d[2], len - 36 - 14 - 6 - 2);  /* PkgLength: to the Scope's end */
	assert_memory_equal(d + 3, "RTC_", 4);
	assert_memory_equal(d + 7, "\x08_HID\x0c", 6);  /* NameOp, DWordPrefix */
	assert_memory_equal(d + 13, "\x41\xd0\x0b\x00", 4); /* EisaId ("PNP0B00") */
	crs = d + 17;
	assert_memory_equal(crs, "\x08_CRS\x11", 6);   /* NameOp, BufferOp */
	assert_int_equal(crs[6], 13);                   /* PkgLength */
	assert_memory_equal(crs + 7, "\x0a\x0a", 2);     /* BufferSize 10 */
	/* I/O Port Descriptor: decode16, 0x70..0x70, align 1, length 2. */
	assert_memory_equal(crs + 9, "\x47\x01\x70\x00\x70\x00\x01\x02", 8);
	assert_memory_equal(crs + 17, "\x79\x00", 2);    /* End Tag */
	assert_ptr_equal(crs + 19, t + len);
}

/* "Sleep Control and Status Registers" of the hardware-reduced FADT:
 * 8-bit I/O ports at 244 and 256; flags, boot-architecture flags. */
static void test_fadt_sleep_regs(void **state)
{
	struct acpi_tables_layout l;
	const uint8_t *f;
	uint64_t ctl, sts;
	uint32_t flags, len;
	uint16_t boot;

	(void)state;
	build_n(1, &l);
	f = at(l.fadt);
	memcpy(&len, f + 4, 4);
	assert_int_equal(len, 276);
	assert_int_equal(f[131], 4);            /* FADT Minor Version */
	assert_int_equal(f[244], ACPI_GAS_IO);
	assert_int_equal(f[245], 8);
	memcpy(&ctl, f + 248, 8);
	assert_int_equal(ctl, ACPI_TV_SLEEP_CTL_PORT);
	assert_int_equal(f[256], ACPI_GAS_IO);
	memcpy(&sts, f + 260, 8);
	assert_int_equal(sts, ACPI_TV_SLEEP_STS_PORT);
	memcpy(&flags, f + 112, 4);
	assert_int_equal(flags & (1u << 20), 1u << 20);         /* HW_REDUCED_ACPI */
	assert_int_equal(flags & (1u << 10), 1u << 10);         /* RESET_REG_SUP */
	memcpy(&boot, f + 109, 2);
	assert_int_equal(boot, 1u << 2);                        /* VGA Not Present only */
	assert_memory_equal(f + 268, "TICKVISR", 8);
	/* No FACS, no SCI: both allowed only with HW_REDUCED_ACPI. */
	assert_int_equal(get_le32(f + 36), 0);
	assert_int_equal(get_le64(f + 132), 0);
	assert_int_equal(get_le16(f + 46), 0);
}

/* The offsets this builder names itself, read from the hardware-reduced
 * FADT Firecracker makes (its OEM ID "FIRECK"): revision 6, 276 bytes,
 * HW_REDUCED_ACPI in the flags at 112, the DSDT only through X_DSDT at
 * 140, "VGA Not Present" in IAPC_BOOT_ARCH at 109, the minor version at
 * 131 and the hypervisor vendor at 268. */
static void test_fadt_offsets_match_firmware(void **state)
{
	char path[PATH_MAX + 64], exe[PATH_MAX];
	const char *rel = "tests/data/acpi/host-FACP.bin";
	uint8_t buf[512];
	FILE *f = fopen(rel, "rb");
	ssize_t len;
	size_t n;

	(void)state;
	if (!f) {               /* not run from the top of the tree: beside build/unit/ */
		len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		assert_true(len > 0);
		exe[len] = 0;
		*strrchr(exe, '/') = 0;
		snprintf(path, sizeof(path), "%s/../../%s", exe, rel);
		f = fopen(path, "rb");
	}
	if (!f)
		fail_msg("cannot open %s", rel);
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	assert_int_equal(n, 276);
	assert_memory_equal(buf, "FACP", 4);
	assert_memory_equal(buf + 10, "FIRECK", 6);
	assert_int_equal(get_le32(buf + 4), 276);
	assert_int_equal(buf[8], 6);
	assert_int_equal(get_le32(buf + 112) & (1u << 20), 1u << 20);
	assert_int_equal(get_le32(buf + 40), 0);
	assert_true(get_le64(buf + 140) > 0 && get_le64(buf + 140) < 0x100000);
	assert_int_equal(get_le16(buf + 109), 1u << 2);
	assert_true(buf[131] >= 4);
	assert_memory_equal(buf + 268, "FIRECKVM", 8);
}

/* A request that cannot be met fails with its reason, buffer untouched. */
static void test_errors(void **state)
{
	static uint8_t small[200];
	uint32_t ids[2] = { 0, 1 }, bad[1] = { 0xffffffffu };
	struct acpi_tables_layout l;
	char err[ERR_LEN];

	(void)state;
	memset(small, 0x5a, sizeof(small));
	assert_int_equal(acpi_tables_build(small, sizeof(small), BASE, ids, 2, &l, err,
					   sizeof(err)), -1);
	assert_non_null(strstr(err, "need 0x"));
	for (size_t i = 0; i < sizeof(small); i++)
		assert_int_equal(small[i], 0x5a);
	assert_int_equal(acpi_tables_build(mem, sizeof(mem), BASE, ids, 0, &l, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "0 CPUs"));
	assert_int_equal(acpi_tables_build(mem, sizeof(mem), BASE + 8, ids, 2, &l, err,
					   sizeof(err)), -1);
	assert_non_null(strstr(err, "aligned"));
	assert_int_equal(acpi_tables_build(mem, sizeof(mem), BASE, bad, 1, &l, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "broadcast"));
	assert_int_equal(acpi_tables_build(mem, sizeof(mem), 0xffffff00ull, ids, 2, &l, err,
					   sizeof(err)), -1);
	assert_non_null(strstr(err, "4 GiB"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_cpus),
		cmocka_unit_test(test_parse_fadt),
		cmocka_unit_test(test_checksums),
		cmocka_unit_test(test_root_tables),
		cmocka_unit_test(test_x2apic_entries),
		cmocka_unit_test(test_dsdt_s5),
		cmocka_unit_test(test_dsdt_rtc),
		cmocka_unit_test(test_fadt_sleep_regs),
		cmocka_unit_test(test_fadt_offsets_match_firmware),
		cmocka_unit_test(test_errors),
	};

	return cmocka_run_group_tests_name("acpi_tables", tests, NULL, NULL);
}
