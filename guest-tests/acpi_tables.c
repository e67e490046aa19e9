// SPDX-License-Identifier: BSD-2-Clause
/*
 * acpi_tables: the ACPI tables tickvisor puts in every guest's memory
 * (vmm/dev/acpi_tables.c), found the way an operating system without a
 * boot_params pointer finds them and checked from ACPI 6.4 alone:
 * "Finding the RSDP on IA-PC Systems" (first KiB of the EBDA, then
 * 16-byte boundaries of 0xE0000-0xFFFFF), every checksum, the XSDT and
 * RSDT, a MADT with one enabled local APIC per vCPU whose IDs are the
 * vCPUs' own, a hardware-reduced FADT with RESET_REG, and a DSDT that
 * names \_S5. The Multiboot memory map must call the tables' area
 * reserved, or a guest could allocate over them.
 */
#include "lib/guest.h"

#define BIOS_AREA_START         0xe0000u
#define BIOS_AREA_END           0x100000u
#define EBDA_SEG_PTR            0x40eu
#define RSDP_V2_LEN             36u
#define SDT_HDR_LEN             36u
#define FADT_FLAGS              112u
#define FADT_RESET_REG          116u
#define FADT_RESET_VALUE        128u
#define FADT_X_DSDT             140u
#define FADT_HW_REDUCED         BIT(20)
#define FADT_RESET_REG_SUP      BIT(10)
#define MADT_ENTRIES            44u
#define MADT_LAPIC              0u
#define MADT_X2APIC             9u
#define MAX_IDS                 16u

static uint8_t sum(const uint8_t *p, uint32_t len)
{
	uint8_t s = 0;

	while (len--)
		s += *p++;
	return s;
}

static uint32_t le32(const uint8_t *p)
{
	return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const uint8_t *p)
{
	return le32(p) | (uint64_t)le32(p + 4) << 32;
}

static bool rsdp_at(uintptr_t a)
{
	const uint8_t *p = (const uint8_t *)a;

	return !memcmp(p, "RSD PTR ", 8) && sum(p, 20) == 0;
}

/* "Finding the RSDP on IA-PC Systems". */
static const uint8_t *find_rsdp(void)
{
	uintptr_t bda = EBDA_SEG_PTR, ebda;

	__asm__("" : "+r"(bda));        /* a low address, not an object GCC knows */
	ebda = (uintptr_t)*(volatile uint16_t *)bda << 4;

	if (ebda >= 0x80000 && ebda < 0xa0000)
		for (uintptr_t a = ebda; a < ebda + 1024; a += 16)
			if (rsdp_at(a))
				return (const uint8_t *)a;
	for (uintptr_t a = BIOS_AREA_START; a < BIOS_AREA_END; a += 16)
		if (rsdp_at(a))
			return (const uint8_t *)a;
	return NULL;
}

/* A table's header: signature, and all Length bytes summing to 0. */
static const uint8_t *sdt(uint64_t addr, const char *sig)
{
	const uint8_t *t = (const uint8_t *)(uintptr_t)addr;

	if (!addr || addr >= BIOS_AREA_END || memcmp(t, sig, 4) || le32(t + 4) < SDT_HDR_LEN)
		return NULL;
	return sum(t, le32(t + 4)) == 0 ? t : NULL;
}

/* The table with signature sig among the root table's entries. */
static const uint8_t *root_find(const uint8_t *root, unsigned entry_len, const char *sig)
{
	uint32_t n = (le32(root + 4) - SDT_HDR_LEN) / entry_len;

	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *e = root + SDT_HDR_LEN + i * entry_len;
		uint64_t a = entry_len == 8 ? le64(e) : le32(e);
		const uint8_t *t = (const uint8_t *)(uintptr_t)a;

		if (a && a < BIOS_AREA_END && !memcmp(t, sig, 4))
			return sdt(a, sig);
	}
	return NULL;
}

/* Enabled processors of the MADT; their APIC IDs in ids[]. */
static unsigned madt_cpus(const uint8_t *m, uint32_t *ids)
{
	uint32_t len = le32(m + 4), n = 0;

	for (uint32_t off = MADT_ENTRIES; off + 2 <= len && m[off + 1] >= 2; off += m[off + 1]) {
		const uint8_t *s = m + off;

		if (s[0] == MADT_LAPIC && (le32(s + 4) & 1) && n < MAX_IDS)
			ids[n++] = s[3];
		else if (s[0] == MADT_X2APIC && (le32(s + 8) & 1) && n < MAX_IDS)
			ids[n++] = le32(s + 4);
	}
	return n;
}

static bool contains(const uint8_t *p, uint32_t len, const char *what, uint32_t n)
{
	for (uint32_t i = 0; i + n <= len; i++)
		if (!memcmp(p + i, what, n))
			return true;
	return false;
}

/* The Multiboot memory map does not offer [start, end) as RAM. */
static bool mmap_reserves(uint64_t start, uint64_t end)
{
	for (unsigned i = 0; i < boot_info.nr_mmap; i++) {
		const struct boot_mmap *e = &boot_info.mmap[i];

		if (e->type == MB_MMAP_AVAILABLE && e->base < end && start < e->base + e->length)
			return false;
	}
	return boot_info.nr_mmap > 0;
}

static void test_madt(const uint8_t *xsdt)
{
	const uint8_t *madt = root_find(xsdt, 8, "APIC");
	unsigned want = fwcfg_cpu_count(), n;
	uint32_t ids[MAX_IDS];
	bool in_order = true;

	report(madt != NULL, "XSDT lists a MADT (\"APIC\") with a valid checksum");
	if (!madt)
		return;
	n = madt_cpus(madt, ids);
	report(n == want, "MADT: %u enabled local APICs, fw_cfg says %u CPUs", n, want);
	for (unsigned i = 0; i < n; i++)
		in_order &= ids[i] == i;
	report(in_order, "MADT: APIC IDs 0..%u, vCPU n has ID n", n - 1);
	report(n && ids[0] == (cpuid(1).b >> 24), "MADT: the first entry is this CPU (APIC ID %u)",
	       cpuid(1).b >> 24);
	report(le32(madt + 36) == 0xfee00000u, "MADT: local APIC address 0xfee00000");
}

static void test_fadt(const uint8_t *xsdt, const uint8_t *rsdt)
{
	const uint8_t *fadt = root_find(xsdt, 8, "FACP"), *dsdt;
	uint32_t flags;

	report(fadt != NULL, "XSDT lists a FADT (\"FACP\") with a valid checksum");
	report(rsdt && root_find(rsdt, 4, "FACP") == fadt, "RSDT lists the same FADT");
	if (!fadt)
		return;
	flags = le32(fadt + FADT_FLAGS);
	report(fadt[8] >= 5 && le32(fadt + 4) >= 268, "FADT revision %u, %u bytes (ACPI 5+)",
	       fadt[8], le32(fadt + 4));
	report(flags & FADT_HW_REDUCED, "FADT: HW_REDUCED_ACPI (no PM timer, no SCI)");
	report((flags & FADT_RESET_REG_SUP) && fadt[FADT_RESET_REG] == 1 &&
	       le64(fadt + FADT_RESET_REG + 4) == 0xcf9 && fadt[FADT_RESET_VALUE] == 6,
	       "FADT: RESET_REG is I/O port 0xcf9, value 6");
	dsdt = sdt(le64(fadt + FADT_X_DSDT), "DSDT");
	report(dsdt != NULL, "FADT: X_DSDT leads to a DSDT with a valid checksum");
	report(dsdt && contains(dsdt + SDT_HDR_LEN, le32(dsdt + 4) - SDT_HDR_LEN, "_S5_", 4),
	       "DSDT: names \\_S5");
}

int main(int argc, char **argv)
{
	const uint8_t *rsdp, *xsdt, *rsdt;

	(void)argc;
	(void)argv;
	report_prefix_push("acpi_tables");
	rsdp = find_rsdp();
	report(rsdp != NULL, "RSDP found on a 16-byte boundary of the EBDA or 0xe0000-0xfffff");
	if (!rsdp)
		return report_summary();
	report(rsdp[15] >= 2 && le32(rsdp + 20) == RSDP_V2_LEN && sum(rsdp, RSDP_V2_LEN) == 0,
	       "RSDP: revision %u, extended checksum over 36 bytes", rsdp[15]);
	report(mmap_reserves((uintptr_t)rsdp & ~0xffffu, BIOS_AREA_END),
	       "Multiboot memory map: the tables' area is not RAM");
	xsdt = sdt(le64(rsdp + 24), "XSDT");
	rsdt = sdt(le32(rsdp + 16), "RSDT");
	report(xsdt != NULL, "XSDT at 0x%x: valid checksum", (unsigned)le64(rsdp + 24));
	report(rsdt != NULL, "RSDT at 0x%x: valid checksum", le32(rsdp + 16));
	if (xsdt) {
		test_madt(xsdt);
		test_fadt(xsdt, rsdt);
	}
	return report_summary();
}
