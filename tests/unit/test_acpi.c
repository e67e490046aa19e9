// SPDX-License-Identifier: BSD-2-Clause
/*
 * drivers/acpi.c on the host. Tables are built (or loaded from captured
 * firmware tables in tests/data/acpi/) into a test "physical memory"; the
 * map callback hands the parser a fresh heap copy of exactly the bytes it
 * asked for, so ASan catches any read past a mapping.
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

#define RAM_BASE        0xe0000ull      /* where PC firmware puts the RSDP */
#define RAM_SIZE        (2u << 20)
#define ERR_LEN         128u

/* --- test physical memory ------------------------------------------------- */

struct tmem {
	uint8_t *ram;                   /* RAM_SIZE bytes at RAM_BASE */
	uint64_t next;                  /* next free physical address */
	uint64_t fail_phys;             /* map() of this address fails (0: none) */
	bool fail_all;                  /* every map() fails */
	void **copies;                  /* what map() handed out, freed at teardown */
	size_t ncopies;
};

static const void *tm_map(uint64_t phys, size_t len, void *ctx)
{
	struct tmem *m = ctx;
	void *copy;

	if (m->fail_all || (m->fail_phys && phys == m->fail_phys))
		return NULL;
	if (phys < RAM_BASE || phys - RAM_BASE > RAM_SIZE || len > RAM_SIZE - (phys - RAM_BASE))
		return NULL;
	copy = malloc(len ? len : 1);
	assert_non_null(copy);
	memcpy(copy, m->ram + (phys - RAM_BASE), len);
	m->copies = realloc(m->copies, (m->ncopies + 1) * sizeof(*m->copies));
	assert_non_null(m->copies);
	m->copies[m->ncopies++] = copy;
	return copy;
}

static uint8_t *tm_ptr(struct tmem *m, uint64_t phys)
{
	assert_true(phys >= RAM_BASE && phys < RAM_BASE + RAM_SIZE);
	return m->ram + (phys - RAM_BASE);
}

/* Copies len bytes into test memory, 16-byte aligned; returns the address. */
static uint64_t tm_put(struct tmem *m, const void *p, size_t len)
{
	uint64_t phys = m->next;

	assert_true(phys + len <= RAM_BASE + RAM_SIZE);
	memcpy(tm_ptr(m, phys), p, len);
	m->next = (phys + len + 15) & ~15ull;
	return phys;
}

static int tm_setup(void **state)
{
	struct tmem *m = calloc(1, sizeof(*m));

	assert_non_null(m);
	m->ram = calloc(1, RAM_SIZE);
	assert_non_null(m->ram);
	m->next = RAM_BASE;
	*state = m;
	return 0;
}

static int tm_teardown(void **state)
{
	struct tmem *m = *state;

	for (size_t i = 0; i < m->ncopies; i++)
		free(m->copies[i]);
	free(m->copies);
	free(m->ram);
	free(m);
	return 0;
}

/* --- table builders ------------------------------------------------------- */

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)v);
	put16(p + 2, (uint16_t)(v >> 16));
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

static uint8_t sum8(const uint8_t *p, size_t len)
{
	uint8_t s = 0;

	while (len--)
		s += *p++;
	return s;
}

/* Makes p[0..len) sum to zero through the checksum byte at csum. */
static void fix_sum(uint8_t *p, size_t len, size_t csum)
{
	p[csum] = 0;
	p[csum] = (uint8_t)-sum8(p, len);
}

struct tb {
	uint8_t d[4096];
	uint32_t len;
};

static void tb_init(struct tb *t, const char *sig, uint8_t rev)
{
	memset(t, 0, sizeof(*t));
	memcpy(t->d, sig, 4);
	t->d[ACPI_SDT_REVISION] = rev;
	memcpy(t->d + ACPI_SDT_OEMID, "BOCHS ", 6);
	memcpy(t->d + ACPI_SDT_OEM_TABLE_ID, "BXPC    ", 8);
	t->len = ACPI_SDT_HDR_LEN;
}

static void tb_u8(struct tb *t, uint8_t v)
{
	t->d[t->len++] = v;
}

static void tb_u16(struct tb *t, uint16_t v)
{
	put16(t->d + t->len, v);
	t->len += 2;
}

static void tb_u32(struct tb *t, uint32_t v)
{
	put32(t->d + t->len, v);
	t->len += 4;
}

static void tb_u64(struct tb *t, uint64_t v)
{
	put64(t->d + t->len, v);
	t->len += 8;
}

/* Writes Length and the checksum, then stores the table. */
static uint64_t tb_put(struct tmem *m, struct tb *t)
{
	put32(t->d + ACPI_SDT_LENGTH, t->len);
	fix_sum(t->d, t->len, ACPI_SDT_CHECKSUM);
	return tm_put(m, t->d, t->len);
}

static void gas_at(uint8_t *p, uint8_t space, uint8_t width, uint8_t access, uint64_t addr)
{
	p[ACPI_GAS_SPACE_ID] = space;
	p[ACPI_GAS_BIT_WIDTH] = width;
	p[ACPI_GAS_BIT_OFFSET] = 0;
	p[ACPI_GAS_ACCESS_SIZE] = access;
	put64(p + ACPI_GAS_ADDRESS, addr);
}

static void madt_init(struct tb *t, uint8_t rev, uint32_t lapic_addr, uint32_t flags)
{
	tb_init(t, "APIC", rev);
	tb_u32(t, lapic_addr);
	tb_u32(t, flags);
}

static void madt_lapic(struct tb *t, uint8_t uid, uint8_t id, uint32_t flags)
{
	tb_u8(t, ACPI_MADT_LAPIC);
	tb_u8(t, 8);
	tb_u8(t, uid);
	tb_u8(t, id);
	tb_u32(t, flags);
}

static void madt_x2apic(struct tb *t, uint32_t id, uint32_t flags, uint32_t uid)
{
	tb_u8(t, ACPI_MADT_X2APIC);
	tb_u8(t, 16);
	tb_u16(t, 0);
	tb_u32(t, id);
	tb_u32(t, flags);
	tb_u32(t, uid);
}

static void madt_ioapic(struct tb *t, uint8_t id, uint32_t addr, uint32_t gsi_base)
{
	tb_u8(t, ACPI_MADT_IOAPIC);
	tb_u8(t, 12);
	tb_u8(t, id);
	tb_u8(t, 0);
	tb_u32(t, addr);
	tb_u32(t, gsi_base);
}

static void madt_lapic_ovr(struct tb *t, uint64_t addr)
{
	tb_u8(t, ACPI_MADT_LAPIC_OVR);
	tb_u8(t, 12);
	tb_u16(t, 0);
	tb_u64(t, addr);
}

/* "Interrupt Source Override Structure" (type 2): not used by the parser. */
static void madt_iso(struct tb *t, uint8_t irq, uint32_t gsi, uint16_t flags)
{
	tb_u8(t, 2);
	tb_u8(t, 10);
	tb_u8(t, 0);
	tb_u8(t, irq);
	tb_u32(t, gsi);
	tb_u16(t, flags);
}

/* "Local APIC NMI Structure" (type 4) */
static void madt_lapic_nmi(struct tb *t, uint8_t uid, uint16_t flags, uint8_t lint)
{
	tb_u8(t, 4);
	tb_u8(t, 6);
	tb_u8(t, uid);
	tb_u16(t, flags);
	tb_u8(t, lint);
}

/* "Local x2APIC NMI Structure" (type 10): flags, UID, LINT#, 3 reserved */
static void madt_x2apic_nmi(struct tb *t, uint32_t uid, uint16_t flags, uint8_t lint)
{
	tb_u8(t, 10);
	tb_u8(t, 12);
	tb_u16(t, flags);
	tb_u32(t, uid);
	tb_u8(t, lint);
	tb_u8(t, 0);
	tb_u16(t, 0);
}

static void hpet_init(struct tb *t, uint8_t space, uint64_t addr)
{
	tb_init(t, "HPET", 1);
	tb_u32(t, 0x8086a201);          /* event timer block ID */
	gas_at(t->d + t->len, space, 64, 0, addr);
	t->len += ACPI_GAS_LEN;
	tb_u8(t, 0);                    /* HPET number */
	tb_u16(t, 0x0080);              /* main counter minimum clock tick */
	tb_u8(t, 0);                    /* page protection */
}

/* Fixed-offset FADT of the given total length, zero-filled. */
static void fadt_init(struct tb *t, uint8_t rev, uint32_t len)
{
	tb_init(t, "FACP", rev);
	t->len = len;
}

/* RSDP: rev 0 is the 20-byte ACPI 1.0 form; rev >= 2 adds Length (given)
 * and the XSDT address, with both checksums made valid. */
static void rsdp_build(uint8_t r[ACPI_RSDP_V2_LEN], uint8_t rev, const char *oem,
		       uint32_t rsdt, uint64_t xsdt, uint32_t len)
{
	memset(r, 0, ACPI_RSDP_V2_LEN);
	memcpy(r + ACPI_RSDP_SIGNATURE, "RSD PTR ", 8);
	memcpy(r + ACPI_RSDP_OEMID, oem, 6);
	r[ACPI_RSDP_REVISION] = rev;
	put32(r + ACPI_RSDP_RSDT, rsdt);
	fix_sum(r, ACPI_RSDP_V1_LEN, ACPI_RSDP_CHECKSUM);
	if (rev < 2)
		return;
	put32(r + ACPI_RSDP_LENGTH, len);
	put64(r + ACPI_RSDP_XSDT, xsdt);
	fix_sum(r, MIN(len, ACPI_RSDP_V2_LEN), ACPI_RSDP_XCHECKSUM);
}

static uint64_t rsdp_put(struct tmem *m, uint8_t rev, uint32_t rsdt, uint64_t xsdt)
{
	uint8_t r[ACPI_RSDP_V2_LEN];

	rsdp_build(r, rev, "BOCHS ", rsdt, xsdt, ACPI_RSDP_V2_LEN);
	return tm_put(m, r, rev < 2 ? ACPI_RSDP_V1_LEN : ACPI_RSDP_V2_LEN);
}

static uint64_t root_put(struct tmem *m, bool xsdt, const uint64_t *e, unsigned n)
{
	struct tb t;

	tb_init(&t, xsdt ? "XSDT" : "RSDT", 1);
	for (unsigned i = 0; i < n; i++) {
		if (xsdt)
			tb_u64(&t, e[i]);
		else
			tb_u32(&t, (uint32_t)e[i]);
	}
	return tb_put(m, &t);
}

/* --- a QEMU q35-like table set --------------------------------------------- */

enum { Q_MADT, Q_HPET, Q_FADT, Q_N };

static uint64_t qemu_madt(struct tmem *m)
{
	struct tb t;

	madt_init(&t, 1, 0xfee00000, ACPI_MADT_PCAT_COMPAT);
	madt_lapic(&t, 0, 0, ACPI_LAPIC_ENABLED);
	madt_lapic(&t, 1, 1, ACPI_LAPIC_ENABLED);
	madt_ioapic(&t, 0, 0xfec00000, 0);
	madt_iso(&t, 0, 2, 0);
	madt_iso(&t, 5, 5, 0xd);
	madt_lapic_nmi(&t, 0xff, 0, 1);
	return tb_put(m, &t);
}

static uint64_t qemu_hpet(struct tmem *m)
{
	struct tb t;

	hpet_init(&t, ACPI_GAS_MEMORY, 0xfed00000);
	return tb_put(m, &t);
}

/* Revision 3 (244 bytes) with the ICH9 PM block at 0x600. */
static uint64_t qemu_fadt(struct tmem *m)
{
	struct tb t;

	fadt_init(&t, 3, 244);
	put32(t.d + 56, 0x600);                         /* PM1a_EVT_BLK */
	put32(t.d + ACPI_FADT_PM1A_CNT_BLK, 0x604);
	put32(t.d + ACPI_FADT_PM_TMR_BLK, 0x608);
	t.d[88] = 4;                                    /* PM1_EVT_LEN */
	t.d[89] = 2;                                    /* PM1_CNT_LEN */
	t.d[91] = 4;                                    /* PM_TMR_LEN */
	put32(t.d + ACPI_FADT_FLAGS, BIT(0) | BIT(2) | BIT(5) | BIT(7) |
	      ACPI_FADT_RESET_REG_SUP | BIT(15));
	gas_at(t.d + ACPI_FADT_RESET_REG, ACPI_GAS_IO, 8, 0, 0xcf9);
	t.d[ACPI_FADT_RESET_VALUE] = 0x6;
	gas_at(t.d + ACPI_FADT_X_PM1A_CNT_BLK, ACPI_GAS_IO, 16, 0, 0x604);
	gas_at(t.d + ACPI_FADT_X_PM_TMR_BLK, ACPI_GAS_IO, 32, 0, 0x608);
	return tb_put(m, &t);
}

static void qemu_tables(struct tmem *m, uint64_t e[Q_N])
{
	e[Q_MADT] = qemu_madt(m);
	e[Q_HPET] = qemu_hpet(m);
	e[Q_FADT] = qemu_fadt(m);
}

static uint64_t qemu_xsdt_rsdp(struct tmem *m, uint64_t e[Q_N])
{
	qemu_tables(m, e);
	return rsdp_put(m, 2, 0, root_put(m, true, e, Q_N));
}

static int parse(struct tmem *m, uint64_t rsdp, struct acpi_info *a, char *err)
{
	memset(err, 0, ERR_LEN);
	return acpi_parse(a, rsdp, tm_map, m, err, ERR_LEN);
}

static void assert_qemu_madt(const struct acpi_info *a)
{
	assert_true(a->has_madt);
	assert_int_equal(a->lapic_addr, 0xfee00000);
	assert_true(a->pcat_compat);
	assert_int_equal(a->ncpus, 2);
	assert_int_equal(a->apic_ids[0], 0);
	assert_int_equal(a->apic_ids[1], 1);
	assert_int_equal(a->nids, 2);
	assert_true(a->has_ioapic);
	assert_int_equal(a->nioapics, 1);
	assert_int_equal(a->ioapic_addr, 0xfec00000);
	assert_int_equal(a->ioapic_id, 0);
	assert_int_equal(a->ioapic_gsi_base, 0);
}

static void assert_qemu_hpet(const struct acpi_info *a)
{
	assert_true(a->has_hpet);
	assert_int_equal(a->hpet_addr, 0xfed00000);
	assert_int_equal(a->hpet_number, 0);
	assert_int_equal(a->hpet_min_tick, 0x80);
}

static void assert_qemu_fadt(const struct acpi_info *a)
{
	assert_true(a->has_fadt);
	assert_int_equal(a->fadt_revision, 3);
	assert_false(a->hw_reduced);
	assert_int_equal(a->pm1a_cnt_port, 0x604);
	assert_int_equal(a->pm_tmr_port, 0x608);
	assert_false(a->pm_tmr_32bit);          /* ICH9's PM timer is 24 bits */
	assert_true(a->reset_supported);
	assert_int_equal(a->reset_reg.space_id, ACPI_GAS_IO);
	assert_int_equal(a->reset_reg.bit_width, 8);
	assert_int_equal(a->reset_reg.bit_offset, 0);
	assert_int_equal(a->reset_reg.address, 0xcf9);
	assert_int_equal(a->reset_value, 0x6);
}

/* --- valid table sets ------------------------------------------------------ */

static void test_qemu_rsdt_rev0(void **state)
{
	struct tmem *m = *state;
	struct acpi_info a;
	char err[ERR_LEN];
	uint64_t e[Q_N], rsdp;

	qemu_tables(m, e);
	rsdp = rsdp_put(m, 0, (uint32_t)root_put(m, false, e, Q_N), 0);
	assert_int_equal(parse(m, rsdp, &a, err), 0);
	assert_string_equal(err, "");
	assert_true(a.present);
	assert_false(a.xsdt);
	assert_int_equal(a.rsdp_revision, 0);
	assert_string_equal(a.oem_id, "BOCHS ");
	assert_qemu_madt(&a);
	assert_qemu_hpet(&a);
	assert_qemu_fadt(&a);
	assert_int_equal(a.nnotes, 0);
}

static void test_qemu_xsdt_rev2(void **state)
{
	struct tmem *m = *state;
	struct acpi_info a;
	char err[ERR_LEN];
	uint64_t e[Q_N], rsdt, xsdt, rsdp;
	uint8_t r[ACPI_RSDP_V2_LEN];

	qemu_tables(m, e);
	/* An RSDT listing only the HPET: the XSDT must win when both exist. */
	rsdt = root_put(m, false, &e[Q_HPET], 1);
	xsdt = root_put(m, true, e, Q_N);
	rsdp_build(r, 2, "BOCHS ", (uint32_t)rsdt, xsdt, ACPI_RSDP_V2_LEN);
	rsdp = tm_put(m, r, sizeof(r));
	assert_int_equal(parse(m, rsdp, &a, err), 0);
	assert_true(a.present);
	assert_true(a.xsdt);
	assert_int_equal(a.rsdp_revision, 2);
	assert_qemu_madt(&a);
	assert_qemu_hpet(&a);
	assert_qemu_fadt(&a);
	assert_int_equal(a.nnotes, 0);
}

/* Revision 2 with XsdtAddress 0: the RSDT is used. */
static void test_rev2_without_xsdt_uses_rsdt(void **state)
{
	struct tmem *m = *state;
	struct acpi_info a;
	char err[ERR_LEN];
	uint64_t e[Q_N], rsdp;

	qemu_tables(m, e);
	rsdp = rsdp_put(m, 2, (uint32_t)root_put(m, false, e, Q_N), 0);
	assert_int_equal(parse(m, rsdp, &a, err), 0);
	assert_false(a.xsdt);
	assert_qemu_madt(&a);
	assert_qemu_fadt(&a);
}

/* --- captured tables of the VM this was written on (Firecracker) ----------- */

static size_t load_host(const char *name, uint8_t *buf, size_t cap)
{
	char path[PATH_MAX + 64], exe[PATH_MAX];
	FILE *f;
	size_t n;
	ssize_t len;

	snprintf(path, sizeof(path), "tests/data/acpi/host-%s.bin", name);
	f = fopen(path, "rb");
	if (!f) {               /* not run from the top of the tree: try beside build/unit/ */
		len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		assert_true(len > 0);
		exe[len] = 0;
		*strrchr(exe, '/') = 0;
		snprintf(path, sizeof(path), "%s/../../tests/data/acpi/host-%s.bin", exe, name);
		f = fopen(path, "rb");
	}
	if (!f)
		fail_msg("cannot open %s", path);
	n = fread(buf, 1, cap, f);
	fclose(f);
	assert_true(n >= ACPI_SDT_HDR_LEN && n < cap);
	return n;
}

static uint64_t host_put(struct tmem *m, const char *name)
{
	static uint8_t buf[64 * 1024];
	size_t n = load_host(name, buf, sizeof(buf));

	/* the capture itself is intact */
	assert_memory_equal(buf, name, 4);
	assert_int_equal(buf[ACPI_SDT_LENGTH] | buf[ACPI_SDT_LENGTH + 1] << 8, n);
	assert_int_equal(sum8(buf, n), 0);
	return tm_put(m, buf, n);
}

static void test_host_tables(void **state)
{
	struct tmem *m = *state;
	struct acpi_info a;
	char err[ERR_LEN];
	uint64_t e[3], rsdp;
	uint8_t r[ACPI_RSDP_V2_LEN];

	host_put(m, "DSDT");            /* reached through the FADT only: not parsed */
	e[0] = host_put(m, "FACP");
	e[1] = host_put(m, "APIC");
	e[2] = host_put(m, "MCFG");     /* a table the parser does not use */
	rsdp_build(r, 2, "FIRECK", 0, root_put(m, true, e, 3), ACPI_RSDP_V2_LEN);
	rsdp = tm_put(m, r, sizeof(r));
	assert_int_equal(parse(m, rsdp, &a, err), 0);
	assert_true(a.present);
	assert_string_equal(a.oem_id, "FIRECK");
	/* MADT revision 6: two enabled Local APICs, IDs 0 and 1; one I/O APIC */
	assert_true(a.has_madt);
	assert_int_equal(a.lapic_addr, 0xfee00000);
	assert_false(a.pcat_compat);
	assert_int_equal(a.ncpus, 2);
	assert_int_equal(a.apic_ids[0], 0);
	assert_int_equal(a.apic_ids[1], 1);
	assert_true(a.has_ioapic);
	assert_int_equal(a.ioapic_id, 0);
	assert_int_equal(a.ioapic_addr, 0xfec00000);
	assert_int_equal(a.ioapic_gsi_base, 0);
	assert_false(a.has_hpet);
	/* FADT 6.5, HW_REDUCED_ACPI with power and sleep buttons as control
	 * methods: no fixed PM hardware, no reset register. */
	assert_true(a.has_fadt);
	assert_int_equal(a.fadt_revision, 6);
	assert_true(a.hw_reduced);
	assert_int_equal(a.pm1a_cnt_port, 0);
	assert_int_equal(a.pm_tmr_port, 0);
	assert_false(a.pm_tmr_32bit);
	assert_false(a.reset_supported);
	assert_int_equal(a.nnotes, 0);
}

/* --- RSDP failures ---------------------------------------------------------- */

static void assert_fails(struct tmem *m, uint64_t rsdp, const char *msg)
{
	struct acpi_info a;
	char err[ERR_LEN];

	assert_int_equal(parse(m, rsdp, &a, err), -1);
	assert_string_equal(err, msg);
	assert_false(a.present);
}

static void test_rsdp_bad_signature(void **state)
{
	struct tmem *m = *state;
	uint64_t e[Q_N], rsdp = qemu_xsdt_rsdp(m, e);
	uint8_t *r = tm_ptr(m, rsdp);

	r[3] = 'X';                     /* "RSX PTR " ... */
	r[ACPI_RSDP_CHECKSUM] -= 'X' - ' ';   /* ... with a valid checksum */
	assert_int_equal(sum8(r, ACPI_RSDP_V1_LEN), 0);
	assert_fails(m, rsdp, "RSDP: bad signature");
}

static void test_rsdp_bad_checksum(void **state)
{
	struct tmem *m = *state;
	uint64_t e[Q_N], rsdp = qemu_xsdt_rsdp(m, e);

	tm_ptr(m, rsdp)[ACPI_RSDP_CHECKSUM] ^= 1;
	assert_fails(m, rsdp, "RSDP: bad checksum");
}

/* XsdtAddress lies outside the first 20 bytes: only the extended
 * checksum covers it. */
static void test_rsdp_bad_extended_checksum(void **state)
{
	struct tmem *m = *state;
	uint64_t e[Q_N], rsdp = qemu_xsdt_rsdp(m, e);

	tm_ptr(m, rsdp)[ACPI_RSDP_XSDT + 7] = 0x80;
	assert_fails(m, rsdp, "RSDP: bad extended checksum");
}

static void test_rsdp_bad_length(void **state)
{
	struct tmem *m = *state;
	uint8_t r[ACPI_RSDP_V2_LEN];

	rsdp_build(r, 2, "BOCHS ", 0, 0x1000, 20);
	assert_fails(m, tm_put(m, r, sizeof(r)), "RSDP: bad length 20 (expected 36..4096)");
	rsdp_build(r, 2, "BOCHS ", 0, 0x1000, 0xffffffff);
	assert_fails(m, tm_put(m, r, sizeof(r)), "RSDP: bad length 4294967295 (expected 36..4096)");
}

static void test_rsdp_no_root(void **state)
{
	struct tmem *m = *state;

	assert_fails(m, rsdp_put(m, 0, 0, 0), "RSDP: no RSDT or XSDT address");
}

static void test_map_null(void **state)
{
	struct tmem *m = *state;
	uint64_t e[Q_N], rsdp = qemu_xsdt_rsdp(m, e);
	struct acpi_info a;
	char err[ERR_LEN];

	char msg[ERR_LEN];

	m->fail_all = true;
	snprintf(msg, sizeof(msg), "RSDP: cannot map 20 bytes at %#lx", rsdp);
	assert_fails(m, rsdp, msg);
	/* and no map function at all */
	assert_int_equal(acpi_parse(&a, rsdp, NULL, NULL, err, sizeof(err)), -1);
	assert_false(a.present);
	/* a NULL err is allowed */
	assert_int_equal(acpi_parse(&a, rsdp, tm_map, m, NULL, 0), -1);
	/* nothing is mapped below or beyond the test memory */
	m->fail_all = false;
	assert_fails(m, 0x1000, "RSDP: cannot map 20 bytes at 0x1000");
	assert_fails(m, UINT64_MAX - 4, "RSDP: cannot map 20 bytes at 0xfffffffffffffffb");
}

/* --- root table failures ---------------------------------------------------- */

static void test_root_bad_checksum(void **state)
{
	struct tmem *m = *state;
	uint64_t e[Q_N], xsdt, rsdp;

	qemu_tables(m, e);
	xsdt = root_put(m, true, e, Q_N);
	rsdp = rsdp_put(m, 2, 0, xsdt);
	tm_ptr(m, xsdt)[ACPI_SDT_CHECKSUM] ^= 0x55;
	assert_fails(m, rsdp, "XSDT: bad checksum");
}

static void test_root_bad_signature(void **state)
{
	struct tmem *m = *state;
	uint64_t e[Q_N], rsdt, rsdp;

	qemu_tables(m, e);
	rsdt = root_put(m, false, e, Q_N);
	/* the RSDT given as XsdtAddress */
	assert_fails(m, rsdp_put(m, 2, 0, rsdt), "XSDT: bad signature");
	rsdp = rsdp_put(m, 0, (uint32_t)e[Q_MADT], 0);
	assert_fails(m, rsdp, "RSDT: bad signature");
}

static void test_root_truncated(void **state)
{
	struct tmem *m = *state;
	struct tb t;
	uint64_t xsdt;

	tb_init(&t, "XSDT", 1);
	t.len = 20;                     /* Length below the header */
	put32(t.d + ACPI_SDT_LENGTH, t.len);
	fix_sum(t.d, ACPI_SDT_HDR_LEN, ACPI_SDT_CHECKSUM);
	xsdt = tm_put(m, t.d, ACPI_SDT_HDR_LEN);
	assert_fails(m, rsdp_put(m, 2, 0, xsdt), "XSDT: truncated (length 20 < header 36)");
}

/* Length larger than what can be mapped, and larger than any real table. */
static void test_root_too_long(void **state)
{
	struct tmem *m = *state;
	uint64_t e[Q_N], xsdt, end_xsdt, rsdp;
	uint8_t *p;
	char msg[ERR_LEN];

	qemu_tables(m, e);
	xsdt = root_put(m, true, e, Q_N);
	rsdp = rsdp_put(m, 2, 0, xsdt);
	p = tm_ptr(m, xsdt);
	put32(p + ACPI_SDT_LENGTH, 2u << 20);
	fix_sum(p, ACPI_SDT_HDR_LEN + 8 * Q_N, ACPI_SDT_CHECKSUM);
	assert_fails(m, rsdp, "XSDT: length 2097152 over the 1048576 limit");

	/* the last 64 bytes of test memory hold an XSDT claiming 4 KiB */
	end_xsdt = RAM_BASE + RAM_SIZE - 64;
	memcpy(tm_ptr(m, end_xsdt), p, 64);
	put32(tm_ptr(m, end_xsdt) + ACPI_SDT_LENGTH, 4096);
	snprintf(msg, sizeof(msg), "XSDT: cannot map 4096 bytes at %#lx", end_xsdt);
	assert_fails(m, rsdp_put(m, 2, 0, end_xsdt), msg);
}

/* A Length that ends inside an entry: whole entries are still used. */
static void test_root_partial_entry(void **state)
{
	struct tmem *m = *state;
	struct acpi_info a;
	char err[ERR_LEN];
	uint64_t e[Q_N], rsdp;
	struct tb t;

	qemu_tables(m, e);
	tb_init(&t, "XSDT", 1);
	for (int i = 0; i < Q_N; i++)
		tb_u64(&t, e[i]);
	t.len -= 3;
	rsdp = rsdp_put(m, 2, 0, tb_put(m, &t));
	assert_int_equal(parse(m, rsdp, &a, err), 0);
	assert_true(a.has_madt);
	assert_true(a.has_hpet);
	assert_false(a.has_fadt);
	assert_int_equal(a.nnotes, 1);
	assert_string_equal(a.notes[0], "XSDT: length 57 ends inside an entry, partial entry ignored");
}

/* --- per-table problems are notes --------------------------------------------- */

static void test_madt_bad_checksum(void **state)
{
	struct tmem *m = *state;
	struct acpi_info a;
	char err[ERR_LEN];
	uint64_t e[Q_N], rsdp = qemu_xsdt_rsdp(m, e);

	tm_ptr(m, e[Q_MADT])[ACPI_MADT_ENTRIES + 3] = 7;       /* first APIC ID */
	assert_int_equal(parse(m, rsdp, &a, err), 0);
	assert_true(a.present);
	assert_false(a.has_madt);
	assert_int_equal(a.ncpus, 0);
	assert_false(a.has_ioapic);
	assert_qemu_hpet(&a);
	assert_qemu_fadt(&a);
	assert_int_equal(a.nnotes, 1);
	assert_string_equal(a.notes[0], "MADT: bad checksum, table ignored");
}

/* A table whose header maps but whose Length does not is skipped; so is
 * an entry that does not map at all, or is null. */
static void test_table_map_fails(void **state)
{
	struct tmem *m = *state;
	struct acpi_info a;
	char err[ERR_LEN], note[ACPI_NOTE_LEN];
	uint64_t e[Q_N + 1], rsdp;
	uint8_t *p;

	qemu_tables(m, e);
	e[Q_N] = 0;
	/* the MADT moved to the end of memory with a Length beyond it */
	e[Q_MADT] = RAM_BASE + RAM_SIZE - 64;
	p = tm_ptr(m, e[Q_MADT]);
	memcpy(p, "APIC", 4);
	put32(p + ACPI_SDT_LENGTH, 100);
	rsdp = rsdp_put(m, 2, 0, root_put(m, true, e, Q_N + 1));
	m->fail_phys = e[Q_HPET];
	assert_int_equal(parse(m, rsdp, &a, err), 0);
	assert_false(a.has_madt);
	assert_false(a.has_hpet);
	assert_qemu_fadt(&a);
	assert_int_equal(a.nnotes, 3);
	snprintf(note, sizeof(note), "MADT: cannot map 100 bytes at %#lx, table ignored", e[Q_MADT]);
	assert_string_equal(a.notes[0], note);
	snprintf(note, sizeof(note), "XSDT: entry 1 (%#lx) cannot be mapped, skipped", e[Q_HPET]);
	assert_string_equal(a.notes[1], note);
	assert_string_equal(a.notes[2], "XSDT: entry 3 is null, skipped");
}

/* The first good copy of a table wins; a bad first copy does not count. */
static void test_duplicate_tables(void **state)
{
	struct tmem *m = *state;
	struct acpi_info a;
	char err[ERR_LEN], note[ACPI_NOTE_LEN];
	uint64_t e[5], rsdp;
	struct tb t;

	madt_init(&t, 3, 0xfee00000, 0);
	madt_lapic(&t, 0, 9, ACPI_LAPIC_ENABLED);
	e[0] = tb_put(m, &t);
	tm_ptr(m, e[0])[ACPI_SDT_CHECKSUM] ^= 1;
	e[1] = qemu_madt(m);
	e[2] = qemu_madt(m);
	hpet_init(&t, ACPI_GAS_MEMORY, 0xfed00000);
	t.len = 50;
	e[3] = tb_put(m, &t);
	e[4] = qemu_hpet(m);
	rsdp = rsdp_put(m, 2, 0, root_put(m, true, e, 5));
	assert_int_equal(parse(m, rsdp, &a, err), 0);
	assert_qemu_madt(&a);
	assert_qemu_hpet(&a);
	assert_int_equal(a.nnotes, 3);
	assert_string_equal(a.notes[0], "MADT: bad checksum, table ignored");
	snprintf(note, sizeof(note), "MADT: another table at %#lx ignored", e[2]);
	assert_string_equal(a.notes[1], note);
	assert_string_equal(a.notes[2], "HPET: too short (length 50 < 56), table ignored");
}

/* --- MADT walking ----------------------------------------------------------- */

/* Builds an RSDT holding one MADT, parses it, returns the parse result. */
static void parse_madt(struct tmem *m, struct tb *t, struct acpi_info *a)
{
	char err[ERR_LEN];
	uint64_t madt = tb_put(m, t);
	uint64_t rsdp = rsdp_put(m, 0, (uint32_t)root_put(m, false, &madt, 1), 0);

	assert_int_equal(parse(m, rsdp, a, err), 0);
	assert_true(a->present);
}

static void test_madt_zero_length_subtable(void **state)
{
	struct tmem *m = *state;
	struct acpi_info a;
	struct tb t;

	madt_init(&t, 3, 0xfee00000, 0);
	madt_lapic(&t, 0, 0, ACPI_LAPIC_ENABLED);
	madt_lapic(&t, 1, 1, ACPI_LAPIC_ENABLED);
	t.d[t.len - 7] = 0;                     /* its Length */
	madt_lapic(&t, 2, 2, ACPI_LAPIC_ENABLED);
	parse_madt(m, &t, &a);
	assert_true(a.has_madt);
	assert_int_equal(a.ncpus, 1);
	assert_int_equal(a.apic_ids[0], 0);
	assert_int_equal(a.nnotes, 1);
	assert_string_equal(a.notes[0],
			    "MADT: subtable at offset 52 has bad length 0 (16 left), walk stopped");
}

static void test_madt_subtable_past_end(void **state)
{
	struct tmem *m = *state;
	struct acpi_info a;
	struct tb t;

	madt_init(&t, 3, 0xfee00000, 0);
	madt_lapic(&t, 0, 0, ACPI_LAPIC_ENABLED);
	madt_ioapic(&t, 1, 0xfec00000, 0);
	t.len -= 4;                             /* the I/O APIC is cut short */
	parse_madt(m, &t, &a);
	assert_int_equal(a.ncpus, 1);
	assert_false(a.has_ioapic);
	assert_int_equal(a.nnotes, 1);
	assert_string_equal(a.notes[0],
			    "MADT: subtable at offset 52 has bad length 12 (8 left), walk stopped");

	madt_init(&t, 3, 0xfee00000, 0);
	madt_lapic(&t, 0, 0, ACPI_LAPIC_ENABLED);
	tb_u8(&t, ACPI_MADT_LAPIC);             /* one byte: not even a Length */
	parse_madt(m, &t, &a);
	assert_int_equal(a.ncpus, 1);
	assert_string_equal(a.notes[0], "MADT: stray byte at offset 52, ignored");

	madt_init(&t, 3, 0xfee00000, 0);
	t.len = 40;                             /* no Flags field */
	parse_madt(m, &t, &a);
	assert_false(a.has_madt);
	assert_string_equal(a.notes[0], "MADT: too short (length 40 < 44), table ignored");
}

/* A subtable shorter than its type needs is skipped, the walk goes on. */
static void test_madt_short_subtable(void **state)
{
	struct tmem *m = *state;
	struct acpi_info a;
	struct tb t;

	madt_init(&t, 3, 0xfee00000, 0);
	tb_u8(&t, ACPI_MADT_X2APIC);
	tb_u8(&t, 8);
	tb_u16(&t, 0);
	tb_u32(&t, 0x300);
	madt_lapic(&t, 0, 4, ACPI_LAPIC_ENABLED);
	parse_madt(m, &t, &a);
	assert_int_equal(a.ncpus, 1);
	assert_int_equal(a.apic_ids[0], 4);
	assert_int_equal(a.nnotes, 1);
	assert_string_equal(a.notes[0], "MADT: type 9 subtable at offset 44 too short (8 < 16), skipped");
}

static void test_madt_disabled_cpus(void **state)
{
	struct tmem *m = *state;
	struct acpi_info a;
	struct tb t;

	/* revision 5 defines Online Capable: such CPUs count */
	madt_init(&t, 5, 0xfee00000, 0);
	madt_lapic(&t, 0, 0, ACPI_LAPIC_ENABLED);
	madt_lapic(&t, 1, 1, 0);
	madt_lapic(&t, 2, 2, ACPI_LAPIC_ONLINE_CAP);
	madt_x2apic(&t, 3, 0, 3);
	madt_x2apic(&t, 4, ACPI_LAPIC_ONLINE_CAP, 4);
	madt_lapic(&t, 5, 0xff, 0);             /* unused slot, as firmware leaves them */
	parse_madt(m, &t, &a);
	assert_int_equal(a.ncpus, 3);
	assert_int_equal(a.apic_ids[0], 0);
	assert_int_equal(a.apic_ids[1], 2);
	assert_int_equal(a.apic_ids[2], 4);
	assert_int_equal(a.nnotes, 0);

	/* before revision 5 that bit is reserved */
	madt_init(&t, 4, 0xfee00000, 0);
	madt_lapic(&t, 0, 0, ACPI_LAPIC_ENABLED);
	madt_lapic(&t, 2, 2, ACPI_LAPIC_ONLINE_CAP);
	madt_x2apic(&t, 4, ACPI_LAPIC_ONLINE_CAP, 4);
	parse_madt(m, &t, &a);
	assert_int_equal(a.ncpus, 1);
	assert_int_equal(a.apic_ids[0], 0);
}

static void test_madt_x2apic(void **state)
{
	struct tmem *m = *state;
	struct acpi_info a;
	struct tb t;

	madt_init(&t, 4, 0xfee00000, 0);
	madt_lapic(&t, 0, 0, ACPI_LAPIC_ENABLED);
	madt_x2apic(&t, 0x100, ACPI_LAPIC_ENABLED, 1);
	madt_x2apic(&t, 0x101, 0, 2);
	madt_x2apic(&t, 0xfffe, ACPI_LAPIC_ENABLED, 3);
	madt_x2apic(&t, 0xffffffff, ACPI_LAPIC_ENABLED, 4);
	madt_lapic(&t, 5, 0xff, ACPI_LAPIC_ENABLED);
	parse_madt(m, &t, &a);
	assert_int_equal(a.ncpus, 3);
	assert_int_equal(a.apic_ids[0], 0);
	assert_int_equal(a.apic_ids[1], 0x100);
	assert_int_equal(a.apic_ids[2], 0xfffe);
	assert_int_equal(a.nnotes, 2);
	assert_string_equal(a.notes[0], "MADT: usable CPU with broadcast APIC ID 0xffffffff ignored");
	assert_string_equal(a.notes[1], "MADT: usable CPU with broadcast APIC ID 0xff ignored");
}

/* Issue 22.6: the MADT's NMI wiring. ACPI 6.5, 5.2.12.7 "Local APIC NMI
 * Structure" and 5.2.12.13 "Local x2APIC NMI Structure": each entry names
 * the LINTn input NMI is connected to for the processor with that ACPI
 * UID, 0xff / 0xffffffff meaning all of them; the flags are MPS INTI
 * flags. QEMU lists LINT1 for all CPUs. Linux reads the entries only to
 * warn when one is not LINT1 (arch/x86/kernel/acpi/boot.c,
 * acpi_parse_lapic_nmi) and wires LINT1 as NMI on the boot CPU itself
 * (apic.c, setup_local_APIC); tickvisor follows the table, per CPU. */
static void test_madt_nmi(void **state)
{
	struct tmem *m = *state;
	struct acpi_info a;
	uint16_t flags[2];
	struct tb t;

	madt_init(&t, 4, 0xfee00000, 0);
	madt_lapic(&t, 0, 0, ACPI_LAPIC_ENABLED);
	madt_lapic(&t, 7, 3, ACPI_LAPIC_ENABLED);
	madt_x2apic(&t, 0x100, ACPI_LAPIC_ENABLED, 0x1234);
	madt_lapic_nmi(&t, 7, 0xf, 0);          /* level, active low, CPU with UID 7 */
	madt_x2apic_nmi(&t, 0xffffffff, 0x5, 1);/* edge, active high, every CPU */
	madt_x2apic_nmi(&t, 0x1234, 0, 0);      /* the x2APIC CPU's LINT0 */
	madt_lapic_nmi(&t, 0xff, 0, 2);         /* no such pin */
	parse_madt(m, &t, &a);
	assert_int_equal(a.nnmis, 3);
	assert_int_equal(a.nnotes, 1);
	assert_string_equal(a.notes[0], "MADT: NMI entry names LINT2, which no local APIC has: "
			    "ignored");
	assert_int_equal(acpi_lint_nmis(&a, 0, flags), BIT(1));
	assert_int_equal(flags[1], 0x5);
	memset(flags, 0, sizeof(flags));
	assert_int_equal(acpi_lint_nmis(&a, 3, flags), BIT(0) | BIT(1));
	assert_int_equal(FIELD_GET(ACPI_INTI_POLARITY, flags[0]), ACPI_INTI_ACTIVE_LOW);
	assert_int_equal(FIELD_GET(ACPI_INTI_TRIGGER, flags[0]), ACPI_INTI_LEVEL);
	assert_int_equal(acpi_lint_nmis(&a, 0x100, flags), BIT(0) | BIT(1));
	/* a CPU the MADT does not list gets only the every-CPU entries */
	assert_int_equal(acpi_lint_nmis(&a, 9, flags), BIT(1));

	/* QEMU's table: LINT1 everywhere */
	madt_init(&t, 1, 0xfee00000, 0);
	madt_lapic(&t, 0, 0, ACPI_LAPIC_ENABLED);
	madt_lapic_nmi(&t, 0xff, 0, 1);
	parse_madt(m, &t, &a);
	assert_int_equal(acpi_lint_nmis(&a, 0, flags), BIT(1));
	/* none at all */
	madt_init(&t, 1, 0xfee00000, 0);
	madt_lapic(&t, 0, 0, ACPI_LAPIC_ENABLED);
	parse_madt(m, &t, &a);
	assert_int_equal(acpi_lint_nmis(&a, 0, flags), 0);
}

static void test_madt_duplicate_ids(void **state)
{
	struct tmem *m = *state;
	struct acpi_info a;
	struct tb t;

	madt_init(&t, 4, 0xfee00000, 0);
	madt_lapic(&t, 0, 2, ACPI_LAPIC_ENABLED);
	madt_lapic(&t, 1, 3, ACPI_LAPIC_ENABLED);
	madt_x2apic(&t, 2, ACPI_LAPIC_ENABLED, 0);      /* same CPU, x2APIC form */
	madt_lapic(&t, 2, 3, ACPI_LAPIC_ENABLED);
	madt_x2apic(&t, 7, ACPI_LAPIC_ENABLED, 3);
	parse_madt(m, &t, &a);
	assert_int_equal(a.ncpus, 3);
	assert_int_equal(a.apic_ids[0], 2);
	assert_int_equal(a.apic_ids[1], 3);
	assert_int_equal(a.apic_ids[2], 7);
	assert_int_equal(a.nnotes, 1);
	assert_string_equal(a.notes[0], "MADT: 2 entries with duplicate APIC IDs ignored");
}

/*
 * More CPUs than tickvisor holds (issue 22.1): ncpus counts every usable
 * entry, as "ACPI: MADT lists N CPUs" reports it; apic_ids holds the first
 * TV_MAX_CPUS. Disabled entries do not count, online-capable ones do (MADT
 * revision 5), and a CPU listed again beyond the limit - in x2APIC form,
 * or with an ID of a held x2APIC entry - counts once.
 */
static void test_madt_too_many_cpus(void **state)
{
	struct tmem *m = *state;
	struct acpi_info a;
	struct tb t;
	unsigned want = 0;

	madt_init(&t, 5, 0xfee00000, 0);
	madt_x2apic(&t, 0x300, ACPI_LAPIC_ENABLED, 200);
	want++;
	for (unsigned i = 0; i < TV_MAX_CPUS + 40; i++) {
		uint32_t flags = i % 5 == 4 ? 0 : i % 5 == 3 ? ACPI_LAPIC_ONLINE_CAP
							   : ACPI_LAPIC_ENABLED;

		madt_lapic(&t, (uint8_t)i, (uint8_t)(2 * i), flags);
		want += flags != 0;
	}
	madt_x2apic(&t, 2 * (TV_MAX_CPUS + 29), ACPI_LAPIC_ENABLED, 201);    /* again */
	madt_x2apic(&t, 0x300, ACPI_LAPIC_ENABLED, 202);                      /* again */
	madt_x2apic(&t, 0x200, ACPI_LAPIC_ENABLED, 203);
	madt_x2apic(&t, 0x201, 0, 204);
	want++;
	parse_madt(m, &t, &a);
	assert_true(want > TV_MAX_CPUS);
	assert_int_equal(a.ncpus, want);
	assert_int_equal(a.nids, TV_MAX_CPUS);
	assert_int_equal(a.apic_ids[0], 0x300);
	for (unsigned i = 1, id = 0; i < TV_MAX_CPUS; i++, id += 2) {
		if (id % 10 == 8)               /* entry i % 5 == 4: disabled */
			id += 2;
		assert_int_equal(a.apic_ids[i], id);
	}
	assert_int_equal(a.nnotes, 1);
	assert_string_equal(a.notes[0], "MADT: 2 entries with duplicate APIC IDs ignored");
}

/* The QEMU shape of many CPUs: xAPIC entries up to ID 254, x2APIC ones from
 * 255 on (ACPI "Processor Local x2APIC Structure"), all counted. */
static void test_madt_x2apic_beyond_255(void **state)
{
	struct tmem *m = *state;
	struct acpi_info a;
	struct tb t;

	madt_init(&t, 3, 0xfee00000, 0);
	for (unsigned i = 0; i < 255; i++)
		madt_lapic(&t, (uint8_t)i, (uint8_t)i, ACPI_LAPIC_ENABLED);
	for (unsigned i = 255; i < 288; i++)
		madt_x2apic(&t, i, ACPI_LAPIC_ENABLED, i);
	parse_madt(m, &t, &a);
	assert_int_equal(a.ncpus, 288);
	assert_int_equal(a.nids, TV_MAX_CPUS);
	assert_int_equal(a.apic_ids[TV_MAX_CPUS - 1], TV_MAX_CPUS - 1);
	assert_int_equal(a.nnotes, 0);
}

static void test_madt_lapic_override_and_ioapics(void **state)
{
	struct tmem *m = *state;
	struct acpi_info a;
	struct tb t;

	madt_init(&t, 4, 0xfee00000, 0);
	madt_ioapic(&t, 8, 0xfec00000, 0);
	madt_lapic(&t, 0, 0, ACPI_LAPIC_ENABLED);
	madt_lapic_ovr(&t, 0x12345000000ull);
	madt_ioapic(&t, 9, 0xfec01000, 24);
	madt_lapic_ovr(&t, 0xfee00000);         /* only one may be defined */
	parse_madt(m, &t, &a);
	assert_int_equal(a.lapic_addr, 0x12345000000ull);
	assert_false(a.pcat_compat);
	assert_true(a.has_ioapic);
	assert_int_equal(a.nioapics, 2);
	assert_int_equal(a.ioapic_id, 8);
	assert_int_equal(a.ioapic_addr, 0xfec00000);
	assert_int_equal(a.ioapic_gsi_base, 0);
	/* Every one recorded, for masking at start (issue 22.6). */
	assert_int_equal(a.ioapics[0].addr, 0xfec00000);
	assert_int_equal(a.ioapics[0].id, 8);
	assert_int_equal(a.ioapics[1].addr, 0xfec01000);
	assert_int_equal(a.ioapics[1].id, 9);
	assert_int_equal(a.ioapics[1].gsi_base, 24);
	assert_int_equal(a.nnotes, 1);
	assert_string_equal(a.notes[0], "MADT: Local APIC Address Override 0xfee00000 ignored");
}

/* More I/O APICs than are recorded: all counted, the first
 * ACPI_MAX_IOAPICS kept in order, nothing written past the array. */
static void test_madt_many_ioapics(void **state)
{
	struct tmem *m = *state;
	struct acpi_info a;
	struct tb t;

	madt_init(&t, 4, 0xfee00000, 0);
	madt_lapic(&t, 0, 0, ACPI_LAPIC_ENABLED);
	for (unsigned i = 0; i < ACPI_MAX_IOAPICS + 3; i++)
		madt_ioapic(&t, (uint8_t)(16 + i), 0xfec00000 + 0x1000 * i, 24 * i);
	parse_madt(m, &t, &a);
	assert_int_equal(a.nioapics, ACPI_MAX_IOAPICS + 3);
	assert_int_equal(a.ioapic_addr, 0xfec00000);
	for (unsigned i = 0; i < ACPI_MAX_IOAPICS; i++) {
		assert_int_equal(a.ioapics[i].id, 16 + i);
		assert_int_equal(a.ioapics[i].addr, 0xfec00000 + 0x1000 * i);
		assert_int_equal(a.ioapics[i].gsi_base, 24 * i);
	}
}

/* Interrupt Source Overrides (issue 22.6): recorded in order with their
 * flags; another bus than ISA, and more than ACPI_MAX_ISOS, are noted. */
static void test_madt_isos(void **state)
{
	struct tmem *m = *state;
	struct acpi_info a;
	struct tb t;

	madt_init(&t, 4, 0xfee00000, 0);
	madt_lapic(&t, 0, 0, ACPI_LAPIC_ENABLED);
	madt_ioapic(&t, 0, 0xfec00000, 0);
	madt_iso(&t, 0, 2, 0);
	madt_iso(&t, 9, 9, 0xd);
	t.d[t.len - 8] = 1;             /* this one names bus 1 */
	for (unsigned i = 0; i < ACPI_MAX_ISOS; i++)
		madt_iso(&t, (uint8_t)i, 16 + i, 0xf);
	parse_madt(m, &t, &a);
	assert_int_equal(a.nisos, ACPI_MAX_ISOS);
	assert_int_equal(a.isos[0].irq, 0);
	assert_int_equal(a.isos[0].gsi, 2);
	assert_int_equal(a.isos[0].flags, 0);
	assert_int_equal(a.isos[1].irq, 0);
	assert_int_equal(a.isos[1].gsi, 16);
	assert_int_equal(a.isos[1].flags, 0xf);
	assert_int_equal(a.isos[ACPI_MAX_ISOS - 1].gsi, 16 + ACPI_MAX_ISOS - 2);
	assert_string_equal(a.notes[0], "MADT: interrupt source override for bus 1 ignored (only ISA, bus 0, exists)");
	assert_string_equal(a.notes[1], "MADT: more than 16 interrupt source overrides: the rest ignored");
}

/* --- HPET ------------------------------------------------------------------- */

static void test_hpet_not_memory(void **state)
{
	struct tmem *m = *state;
	struct acpi_info a;
	char err[ERR_LEN];
	struct tb t;
	uint64_t hpet, rsdp;

	hpet_init(&t, ACPI_GAS_IO, 0xfed00000);
	hpet = tb_put(m, &t);
	rsdp = rsdp_put(m, 0, (uint32_t)root_put(m, false, &hpet, 1), 0);
	assert_int_equal(parse(m, rsdp, &a, err), 0);
	assert_false(a.has_hpet);
	assert_int_equal(a.hpet_addr, 0);
	assert_string_equal(a.notes[0], "HPET: base 0xfed00000 in address space 1, table ignored");
}

/* --- SPCR ------------------------------------------------------------------- */

/* Microsoft's SPCR layout: interface type at 36, the UART's GAS at 40,
 * the baud rate code at 58, 80 bytes in all (revision 1). */
static void spcr_init(struct tb *t, uint8_t type, uint8_t space, uint64_t addr, uint8_t baud,
		      uint32_t len)
{
	tb_init(t, "SPCR", 1);
	t->len = len;
	t->d[ACPI_SPCR_TYPE] = type;
	gas_at(t->d + ACPI_SPCR_BASE, space, 8, 0, addr);
	t->d[ACPI_SPCR_BAUD] = baud;
}

static void parse_spcr(struct tmem *m, struct tb *t, struct acpi_info *a)
{
	char err[ERR_LEN];
	uint64_t spcr = tb_put(m, t);
	uint64_t rsdp = rsdp_put(m, 2, 0, root_put(m, true, &spcr, 1));

	assert_int_equal(parse(m, rsdp, a, err), 0);
}

static void test_spcr(void **state)
{
	struct tmem *m = *state;
	struct acpi_info a;
	struct tb t;

	spcr_init(&t, ACPI_SPCR_16550, ACPI_GAS_IO, 0x2f8, 7, ACPI_SPCR_LEN);
	parse_spcr(m, &t, &a);
	assert_true(a.has_spcr);
	assert_int_equal(a.spcr_type, ACPI_SPCR_16550);
	assert_int_equal(a.spcr_base.space_id, ACPI_GAS_IO);
	assert_int_equal(a.spcr_base.address, 0x2f8);
	assert_int_equal(a.spcr_baud, 115200);

	/* 0: the rate the firmware left; 9600 is code 3 */
	spcr_init(&t, ACPI_SPCR_16550_GAS, ACPI_GAS_MEMORY, 0xfe030000, 0, ACPI_SPCR_LEN);
	parse_spcr(m, &t, &a);
	assert_true(a.has_spcr);
	assert_int_equal(a.spcr_baud, 0);
	assert_int_equal(a.spcr_base.space_id, ACPI_GAS_MEMORY);
	spcr_init(&t, ACPI_SPCR_16550, ACPI_GAS_IO, 0x3f8, 3, ACPI_SPCR_LEN);
	parse_spcr(m, &t, &a);
	assert_int_equal(a.spcr_baud, 9600);

	/* codes 1, 2 and 5 are reserved; a short table is dropped */
	spcr_init(&t, ACPI_SPCR_16550, ACPI_GAS_IO, 0x3f8, 5, ACPI_SPCR_LEN);
	parse_spcr(m, &t, &a);
	assert_false(a.has_spcr);
	assert_string_equal(a.notes[0], "SPCR: baud rate code 5 is not one the table defines, "
			    "table ignored");
	spcr_init(&t, ACPI_SPCR_16550, ACPI_GAS_IO, 0x3f8, 7, 79);
	parse_spcr(m, &t, &a);
	assert_false(a.has_spcr);
	assert_string_equal(a.notes[0], "SPCR: too short (length 79 < 80), table ignored");
}

/* An MMIO 16550 (GAS space 0): the register width, which is also the
 * stride, from the GAS's access size where it has one, else its bit
 * width. Intel's LPSS UARTs: 32 bits, dword access; a byte-register
 * 16550 (SPCR revision 2 GAS): 8 bits. */
static void spcr_mmio(struct tmem *m, struct acpi_info *a, uint8_t width, uint8_t access,
		      uint8_t baud)
{
	struct tb t;

	spcr_init(&t, ACPI_SPCR_16550_GAS, ACPI_GAS_MEMORY, 0xfe032000, baud, ACPI_SPCR_LEN);
	gas_at(t.d + ACPI_SPCR_BASE, ACPI_GAS_MEMORY, width, access, 0x4010032000ull);
	parse_spcr(m, &t, a);
	assert_true(a->has_spcr);
	assert_int_equal(a->spcr_type, ACPI_SPCR_16550_GAS);
	assert_int_equal(a->spcr_base.space_id, ACPI_GAS_MEMORY);
	assert_int_equal(a->spcr_base.address, 0x4010032000ull);
}

static void test_spcr_mmio(void **state)
{
	struct tmem *m = *state;
	struct acpi_info a;

	spcr_mmio(m, &a, 32, 3, 7);
	assert_int_equal(a.spcr_reg_bytes, 4);
	assert_int_equal(a.spcr_baud, 115200);
	assert_int_equal(a.spcr_base.bit_width, 32);
	assert_int_equal(a.spcr_base.access_size, 3);
	spcr_mmio(m, &a, 32, 0, 0);             /* access size undefined: the width */
	assert_int_equal(a.spcr_reg_bytes, 4);
	assert_int_equal(a.spcr_baud, 0);
	spcr_mmio(m, &a, 8, 1, 6);
	assert_int_equal(a.spcr_reg_bytes, 1);
	assert_int_equal(a.spcr_baud, 57600);
	spcr_mmio(m, &a, 8, 0, 4);
	assert_int_equal(a.spcr_reg_bytes, 1);
	assert_int_equal(a.spcr_baud, 19200);
	spcr_mmio(m, &a, 32, 1, 7);             /* the access size wins */
	assert_int_equal(a.spcr_reg_bytes, 1);
	spcr_mmio(m, &a, 16, 2, 7);             /* kept, for the caller to refuse */
	assert_int_equal(a.spcr_reg_bytes, 2);
	spcr_mmio(m, &a, 0, 0, 7);              /* says nothing */
	assert_int_equal(a.spcr_reg_bytes, 0);
	spcr_mmio(m, &a, 24, 0, 7);
	assert_int_equal(a.spcr_reg_bytes, 0);
	spcr_mmio(m, &a, 32, 5, 7);             /* not an access size */
	assert_int_equal(a.spcr_reg_bytes, 0);
}

/* --- FADT ------------------------------------------------------------------- */

static void parse_fadt(struct tmem *m, struct tb *t, struct acpi_info *a)
{
	char err[ERR_LEN];
	uint64_t fadt = tb_put(m, t);
	uint64_t rsdp = rsdp_put(m, 2, 0, root_put(m, true, &fadt, 1));

	assert_int_equal(parse(m, rsdp, a, err), 0);
	assert_true(a->has_fadt);
}

/* ACPI 1.0 FADT: 116 bytes, ending with Flags. RESET_REG_SUP is reserved
 * there and no RESET_REG follows, so no reset register is reported. */
static void test_fadt_rev1_short(void **state)
{
	struct tmem *m = *state;
	struct acpi_info a;
	struct tb t;

	fadt_init(&t, 1, 116);
	put32(t.d + ACPI_FADT_PM1A_CNT_BLK, 0x404);
	put32(t.d + ACPI_FADT_PM_TMR_BLK, 0x408);
	put32(t.d + ACPI_FADT_FLAGS, ACPI_FADT_TMR_VAL_EXT | ACPI_FADT_RESET_REG_SUP);
	parse_fadt(m, &t, &a);
	assert_int_equal(a.fadt_revision, 1);
	assert_int_equal(a.pm1a_cnt_port, 0x404);
	assert_int_equal(a.pm_tmr_port, 0x408);
	assert_true(a.pm_tmr_32bit);
	assert_false(a.reset_supported);
	assert_int_equal(a.reset_reg.address, 0);
	assert_int_equal(a.reset_value, 0);
	assert_int_equal(a.nnotes, 0);

	/* shorter still: fields beyond Length are not read */
	fadt_init(&t, 1, 72);
	put32(t.d + ACPI_FADT_PM1A_CNT_BLK, 0x404);
	put32(t.d + ACPI_FADT_PM_TMR_BLK, 0x408);
	parse_fadt(m, &t, &a);
	assert_int_equal(a.pm1a_cnt_port, 0x404);
	assert_int_equal(a.pm_tmr_port, 0);
	assert_false(a.pm_tmr_32bit);
}

/* X_ register blocks: preferred when in System I/O space, and only read
 * when the table is long enough to have them. */
static void test_fadt_x_fields(void **state)
{
	struct tmem *m = *state;
	struct acpi_info a;
	struct tb t;

	/* X_ in I/O space supersedes the 32-bit field */
	fadt_init(&t, 5, 268);
	put32(t.d + ACPI_FADT_PM1A_CNT_BLK, 0x404);
	put32(t.d + ACPI_FADT_PM_TMR_BLK, 0x408);
	gas_at(t.d + ACPI_FADT_X_PM1A_CNT_BLK, ACPI_GAS_IO, 16, 2, 0xb004);
	gas_at(t.d + ACPI_FADT_X_PM_TMR_BLK, ACPI_GAS_MEMORY, 32, 3, 0xfe000008);
	parse_fadt(m, &t, &a);
	assert_int_equal(a.pm1a_cnt_port, 0xb004);
	assert_int_equal(a.pm_tmr_port, 0x408);
	assert_int_equal(a.nnotes, 1);
	assert_string_equal(a.notes[0],
			    "FADT: X_PM_TMR_BLK 0xfe000008 (space 0) is not an I/O port, PM_TMR_BLK used");

	/* X_ zero: the 32-bit field; a 32-bit "port" above 0xffff is none */
	fadt_init(&t, 5, 268);
	put32(t.d + ACPI_FADT_PM1A_CNT_BLK, 0x404);
	put32(t.d + ACPI_FADT_PM_TMR_BLK, 0x12345);
	parse_fadt(m, &t, &a);
	assert_int_equal(a.pm1a_cnt_port, 0x404);
	assert_int_equal(a.pm_tmr_port, 0);
	assert_string_equal(a.notes[0], "FADT: PM_TMR_BLK 0x12345 is not an I/O port, ignored");

	/* the 132-byte "revision 2" FADT some ACPI 1.0b firmware has (up to
	 * the minor version): RESET_REG, but no X_PM1a_CNT_BLK */
	fadt_init(&t, 2, 132);
	put32(t.d + ACPI_FADT_PM1A_CNT_BLK, 0x804);
	put32(t.d + ACPI_FADT_FLAGS, ACPI_FADT_RESET_REG_SUP);
	gas_at(t.d + ACPI_FADT_RESET_REG, ACPI_GAS_MEMORY, 8, 1, 0xfed00100);
	t.d[ACPI_FADT_RESET_VALUE] = 0x0e;
	parse_fadt(m, &t, &a);
	assert_int_equal(a.pm1a_cnt_port, 0x804);
	assert_true(a.reset_supported);
	assert_int_equal(a.reset_reg.space_id, ACPI_GAS_MEMORY);
	assert_int_equal(a.reset_reg.access_size, 1);
	assert_int_equal(a.reset_reg.address, 0xfed00100);
	assert_int_equal(a.reset_value, 0x0e);
}

/* HW_REDUCED_ACPI: the fixed PM registers and TMR_VAL_EXT are ignored,
 * RESET_REG is not. */
static void test_fadt_hw_reduced(void **state)
{
	struct tmem *m = *state;
	struct acpi_info a;
	struct tb t;

	fadt_init(&t, 6, 276);
	put32(t.d + ACPI_FADT_PM1A_CNT_BLK, 0x404);
	put32(t.d + ACPI_FADT_PM_TMR_BLK, 0x408);
	put32(t.d + ACPI_FADT_FLAGS, ACPI_FADT_HW_REDUCED | ACPI_FADT_TMR_VAL_EXT |
	      ACPI_FADT_RESET_REG_SUP);
	gas_at(t.d + ACPI_FADT_RESET_REG, ACPI_GAS_IO, 8, 1, 0xcf9);
	t.d[ACPI_FADT_RESET_VALUE] = 0x6;
	parse_fadt(m, &t, &a);
	assert_true(a.hw_reduced);
	assert_int_equal(a.pm1a_cnt_port, 0);
	assert_int_equal(a.pm_tmr_port, 0);
	assert_false(a.pm_tmr_32bit);
	assert_true(a.reset_supported);
	assert_int_equal(a.reset_reg.address, 0xcf9);
	assert_int_equal(a.reset_value, 0x6);
}

/* --- notes and robustness ------------------------------------------------- */

static void test_notes_overflow(void **state)
{
	struct tmem *m = *state;
	struct acpi_info a;
	struct tb t;

	madt_init(&t, 4, 0xfee00000, 0);
	for (unsigned i = 0; i < ACPI_MAX_NOTES + 3; i++)
		madt_lapic_ovr(&t, 0);
	parse_madt(m, &t, &a);
	assert_int_equal(a.nnotes, ACPI_MAX_NOTES);
	assert_int_equal(a.notes_dropped, 3);
	for (unsigned i = 0; i < ACPI_MAX_NOTES; i++)
		assert_string_equal(a.notes[i], "MADT: Local APIC Address Override 0 ignored");
}

static uint32_t rng_state = 0x2545f491;

static uint32_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 17;
	rng_state ^= rng_state << 5;
	return rng_state;
}

/* Random bytes in otherwise valid tables (checksums fixed up so the
 * walkers run): parsing must neither crash nor read past a mapping. */
static void test_random_tables(void **state)
{
	struct tmem *m = *state;
	struct acpi_info a;
	char err[ERR_LEN];
	uint64_t e[Q_N], rsdp = qemu_xsdt_rsdp(m, e);
	uint8_t saved[Q_N][256];
	uint32_t lens[Q_N];

	for (int i = 0; i < Q_N; i++) {
		uint8_t *p = tm_ptr(m, e[i]);

		lens[i] = p[ACPI_SDT_LENGTH];
		memcpy(saved[i], p, lens[i]);
	}
	for (int iter = 0; iter < 20000; iter++) {
		int i = (int)(rng() % Q_N), n = 1 + (int)(rng() % 6);
		uint8_t *p = tm_ptr(m, e[i]);

		memcpy(p, saved[i], lens[i]);
		while (n--)
			p[ACPI_SDT_HDR_LEN + rng() % (lens[i] - ACPI_SDT_HDR_LEN)] = (uint8_t)rng();
		if (rng() % 8 == 0)
			p[ACPI_SDT_LENGTH] = (uint8_t)rng();
		fix_sum(p, MIN(lens[i], p[ACPI_SDT_LENGTH]), ACPI_SDT_CHECKSUM);
		assert_int_equal(parse(m, rsdp, &a, err), 0);
		assert_true(a.nids <= TV_MAX_CPUS && a.nids <= a.ncpus);
		assert_true(a.nnotes <= ACPI_MAX_NOTES);
		memcpy(p, saved[i], lens[i]);
		for (size_t c = 0; c < m->ncopies; c++)
			free(m->copies[c]);
		m->ncopies = 0;
	}
}

/* \_S5 in AML (ACPI spec, "Definition Block Encoding": NameOp 0x08,
 * RootChar '\\' 0x5c, PackageOp 0x12, PkgLength, NumElements, then data
 * objects: ZeroOp 0x00, OneOp 0x01, BytePrefix 0x0a, WordPrefix 0x0b). */
static void test_aml_s5(void **state)
{
	/* QEMU's form: Name (_S5, Package (0x04) { Zero, Zero, Zero, Zero }) */
	static const uint8_t qemu[] = { 0x10, 0x08, 0x5f, 0x53, 0x35, 0x5f, 0x12, 0x06, 0x04,
					0x00, 0x00, 0x00, 0x00 };
	/* Root-prefixed, BytePrefix values (a typical PC: SLP_TYP 7 and 5) */
	static const uint8_t pc[] = { 0x08, 0x5c, 0x5f, 0x53, 0x35, 0x5f, 0x12, 0x08, 0x02,
				      0x0a, 0x07, 0x0a, 0x05 };
	/* one element only; SLP_TYPb is then 0 */
	static const uint8_t one[] = { 0x08, 0x5f, 0x53, 0x35, 0x5f, 0x12, 0x04, 0x01, 0x0a, 0x05 };
	/* a two-byte PkgLength, WordPrefix and OneOp */
	static const uint8_t wide[] = { 0x08, 0x5f, 0x53, 0x35, 0x5f, 0x12, 0x47, 0x00, 0x02,
					0x0b, 0x06, 0x01, 0x01 };
	/* "_S5_" not named by NameOp (a method's body), then the real one */
	static const uint8_t later[] = { 0x14, 0x5f, 0x53, 0x35, 0x5f, 0x00, 0x08, 0x5f, 0x53,
					 0x35, 0x5f, 0x12, 0x05, 0x02, 0x01, 0x0a, 0x02 };
	static const uint8_t cut1[] = { 0x08, 0x5f, 0x53, 0x35, 0x5f, 0x12 };
	static const uint8_t cut2[] = { 0x08, 0x5f, 0x53, 0x35, 0x5f, 0x12, 0x05, 0x02, 0x0a };
	static const uint8_t empty[] = { 0x08, 0x5f, 0x53, 0x35, 0x5f, 0x12, 0x02, 0x00 };
	static const uint8_t method[] = { 0x08, 0x5f, 0x53, 0x35, 0x5f, 0x12, 0x04, 0x01, 0x70 };
	uint8_t a = 0xee, b = 0xee;

	assert_true(acpi_aml_find_s5(qemu, sizeof(qemu), &a, &b));
	assert_int_equal(a, 0);
	assert_int_equal(b, 0);
	assert_true(acpi_aml_find_s5(pc, sizeof(pc), &a, &b));
	assert_int_equal(a, 7);
	assert_int_equal(b, 5);
	assert_true(acpi_aml_find_s5(one, sizeof(one), &a, &b));
	assert_int_equal(a, 5);
	assert_int_equal(b, 0);
	assert_true(acpi_aml_find_s5(wide, sizeof(wide), &a, &b));
	assert_int_equal(a, 6);         /* 0x0106 & 7 */
	assert_int_equal(b, 1);
	assert_true(acpi_aml_find_s5(later, sizeof(later), &a, &b));
	assert_int_equal(a, 1);
	assert_int_equal(b, 2);
	/* Cut short, empty, or not integers: none, and nothing read past
	 * the end (ASan watches the exact-size arrays). */
	assert_false(acpi_aml_find_s5(cut1, sizeof(cut1), &a, &b));
	assert_false(acpi_aml_find_s5(cut2, sizeof(cut2), &a, &b));
	assert_false(acpi_aml_find_s5(empty, sizeof(empty), &a, &b));
	assert_false(acpi_aml_find_s5(method, sizeof(method), &a, &b));
	assert_false(acpi_aml_find_s5(qemu, 4, &a, &b));
	assert_false(acpi_aml_find_s5(qemu, 0, &a, &b));
}

#define T(f) cmocka_unit_test_setup_teardown(f, tm_setup, tm_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_qemu_rsdt_rev0),
		T(test_qemu_xsdt_rev2),
		T(test_rev2_without_xsdt_uses_rsdt),
		T(test_host_tables),
		T(test_rsdp_bad_signature),
		T(test_rsdp_bad_checksum),
		T(test_rsdp_bad_extended_checksum),
		T(test_rsdp_bad_length),
		T(test_rsdp_no_root),
		T(test_map_null),
		T(test_root_bad_checksum),
		T(test_root_bad_signature),
		T(test_root_truncated),
		T(test_root_too_long),
		T(test_root_partial_entry),
		T(test_madt_bad_checksum),
		T(test_table_map_fails),
		T(test_duplicate_tables),
		T(test_madt_zero_length_subtable),
		T(test_madt_subtable_past_end),
		T(test_madt_short_subtable),
		T(test_madt_disabled_cpus),
		T(test_madt_x2apic),
		T(test_madt_nmi),
		T(test_madt_duplicate_ids),
		T(test_madt_too_many_cpus),
		T(test_madt_x2apic_beyond_255),
		T(test_madt_lapic_override_and_ioapics),
		T(test_madt_many_ioapics),
		T(test_madt_isos),
		T(test_hpet_not_memory),
		T(test_spcr),
		T(test_spcr_mmio),
		T(test_fadt_rev1_short),
		T(test_fadt_x_fields),
		T(test_fadt_hw_reduced),
		T(test_notes_overflow),
		T(test_random_tables),
		cmocka_unit_test(test_aml_s5),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
