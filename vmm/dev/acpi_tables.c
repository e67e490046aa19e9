// SPDX-License-Identifier: BSD-2-Clause
/*
 * ACPI tables of a guest (see acpi_tables.h). One pass plans where every
 * table goes and checks the whole lot fits; the second writes them, each
 * closed by its checksum. Offsets the parser in drivers/acpi.h already
 * names are taken from there; the rest of the FADT is named here.
 */
#include "drivers/acpi.h"
#include "drivers/fmt.h"
#include "drivers/string.h"
#include "vmm/dev/acpi_tables.h"

#define ACPI_TV_OEM_ID          "TICKVI"        /* 6 bytes */
#define ACPI_TV_OEM_TABLE_ID    "TICKVISR"      /* 8 bytes */
#define ACPI_TV_CREATOR_ID      "TKVR"          /* 4 bytes */
#define ACPI_TV_HV_VENDOR       "TICKVISR"      /* FADT Hypervisor Vendor Identity */
#define ACPI_TABLE_ALIGN        16u

/* "Fixed ACPI Description Table (FADT)", revision 6: the fields written
 * here that drivers/acpi.h does not name. */
enum acpi_fadt_build_off {
	FADT_FIRMWARE_CTRL      = 36,
	FADT_DSDT               = 40,
	FADT_PREFERRED_PROFILE  = 45,
	FADT_IAPC_BOOT_ARCH     = 109,
	FADT_MINOR_VERSION      = 131,
	FADT_X_DSDT             = 140,
	FADT_SLEEP_CONTROL_REG  = 244,
	FADT_SLEEP_STATUS_REG   = 256,
	FADT_HV_VENDOR          = 268,
	FADT_LEN                = 276,
};
#define FADT_REVISION           6u
#define FADT_MINOR              4u      /* ACPI 6.4 */
/* "Fixed ACPI Description Table Fixed Feature Flags" */
#define FADT_F_WBINVD           BIT(0)  /* WBINVD flushes caches: always on x86 */
#define FADT_F_PWR_BUTTON       BIT(4)  /* no fixed-feature power button */
#define FADT_F_SLP_BUTTON       BIT(5)  /* no fixed-feature sleep button */
/* "IA-PC Boot Architecture Flags": no VGA; no 8042, no legacy (ISA)
 * devices (bits 0, 1 clear); a CMOS RTC exists (bit 5 clear). */
#define FADT_BOOT_VGA_NOT_PRESENT BIT(2)
#define GAS_ACCESS_BYTE         1u      /* "Generic Address Structure": Access Size */

#define RSDT_REVISION           1u
#define XSDT_REVISION           1u
#define MADT_REVISION           5u      /* ACPI 6.4 */
#define DSDT_REVISION           2u      /* 64-bit AML integers */
#define RSDP_REVISION           2u      /* ACPI 2.0+: has the XSDT address */
#define MADT_LAPIC_LEN          8u
#define MADT_X2APIC_LEN         16u
#define XAPIC_ID_MAX            254u    /* 255 is the xAPIC broadcast ID */
#define LAPIC_DEFAULT_BASE      0xfee00000u

/*
 * The DSDT's AML ("ACPI Source Language (ASL) Reference", Name and
 * Package; encodings from "AML Specification"):
 *     Name (_S5, Package (0x04) { 0x05, 0x05, Zero, Zero })
 * NameOp, NameSeg "_S5_", PackageOp, PkgLength 8 (itself included),
 * NumElements 4, BytePrefix 5 twice (SLP_TYPa, SLP_TYPb), ZeroOp twice.
 *
 * Then the CMOS RTC as a device without an interrupt:
 *     Scope (\_SB) { Device (RTC) {
 *         Name (_HID, EisaId ("PNP0B00"))
 *         Name (_CRS, ResourceTemplate () { IO (Decode16, 0x70, 0x70, 1, 2) })
 *     } }
 * A hardware-reduced platform has no legacy IRQs, so the RTC that Linux
 * registers by itself (IRQ 8) fails its probe at request_irq() with
 * -EINVAL; a PNP0B00 device with no IRQ in _CRS is taken without one
 * (drivers/rtc/rtc-cmos.c, cmos_pnp_probe: IRQ 8 is assumed only while
 * legacy IRQs exist). ScopeOp 0x10, DeviceOp 0x5b 0x82, each with a
 * one-byte PkgLength; EisaId is the DWordConst 0x000bd041 ("PNP" in
 * three 5-bit letters, then 0x0b00, stored big-endian); the _CRS buffer
 * holds the I/O Port Descriptor (0x47, decode16, min, max, align 1,
 * length 2) and the End Tag (0x79, checksum 0) ("Resource Data Types").
 */
#define DSDT_RTC_DEVICE_LEN     36u     /* DeviceOp .. the _CRS buffer's end */
static const uint8_t dsdt_aml[] = {
	0x08, '_', 'S', '5', '_', 0x12, 0x08, 0x04,
	0x0a, ACPI_TV_SLP_TYP_S5, 0x0a, ACPI_TV_SLP_TYP_S5, 0x00, 0x00,
	0x10, 1 + 4 + DSDT_RTC_DEVICE_LEN, '_', 'S', 'B', '_',
	0x5b, 0x82, DSDT_RTC_DEVICE_LEN - 2, 'R', 'T', 'C', '_',
	0x08, '_', 'H', 'I', 'D', 0x0c, 0x41, 0xd0, 0x0b, 0x00,
	0x08, '_', 'C', 'R', 'S', 0x11, 0x0d, 0x0a, 0x0a,
	0x47, 0x01, 0x70, 0x00, 0x70, 0x00, 0x01, 0x02, 0x79, 0x00,
};

struct acpi_build {
	uint8_t *buf;
	size_t len;
	uint64_t base;                  /* guest-physical address of buf[0] */
	const uint32_t *apic_ids;
	uint32_t ncpus;
	struct acpi_tables_layout at;
	char *err;
	size_t errlen;
};

#define acpi_build_fail(b, ...) fmt_err((b)->err, (b)->errlen, __VA_ARGS__)

/* The byte that makes all len bytes sum to zero. */
static uint8_t acpi_checksum(const uint8_t *p, size_t len)
{
	uint8_t sum = 0;

	for (size_t i = 0; i < len; i++)
		sum += p[i];
	return (uint8_t)-sum;
}

static uint8_t *acpi_at(const struct acpi_build *b, uint64_t phys)
{
	return b->buf + (phys - b->base);
}

static uint32_t madt_len(const struct acpi_build *b)
{
	uint32_t len = ACPI_MADT_ENTRIES;

	for (uint32_t i = 0; i < b->ncpus; i++)
		len += b->apic_ids[i] <= XAPIC_ID_MAX ? MADT_LAPIC_LEN : MADT_X2APIC_LEN;
	return len;
}

/* Every table in one 16-byte aligned row, RSDP first (it must sit on a
 * 16-byte boundary of the scanned area). */
static int acpi_plan(struct acpi_build *b)
{
	struct acpi_tables_layout *at = &b->at;
	uint64_t next = b->base;
	const struct { uint64_t *addr; uint32_t len; } row[] = {
		{ &at->rsdp, ACPI_RSDP_V2_LEN },
		{ &at->rsdt, ACPI_SDT_HDR_LEN + 2 * 4 },
		{ &at->xsdt, ACPI_SDT_HDR_LEN + 2 * 8 },
		{ &at->fadt, FADT_LEN },
		{ &at->dsdt, ACPI_SDT_HDR_LEN + sizeof(dsdt_aml) },
		{ &at->madt, madt_len(b) },
	};

	for (unsigned i = 0; i < ARRAY_SIZE(row); i++) {
		*row[i].addr = next;
		next = ALIGN_UP(next + row[i].len, ACPI_TABLE_ALIGN);
	}
	at->end = at->madt + row[ARRAY_SIZE(row) - 1].len;
	if (at->end - b->base > b->len)
		return acpi_build_fail(b, "ACPI tables for %u CPUs need 0x%lx bytes, 0x%lx available",
				       b->ncpus, at->end - b->base, (uint64_t)b->len);
	/* RSDT entries are 32-bit addresses. */
	if (at->end > UINT32_MAX)
		return acpi_build_fail(b, "ACPI tables at 0x%lx end above 4 GiB", b->base);
	return 0;
}

/* "System Description Table Header"; the checksum is set by sdt_close(). */
static uint8_t *sdt_open(struct acpi_build *b, uint64_t phys, const char sig[4], uint32_t len,
			 uint8_t revision)
{
	uint8_t *t = acpi_at(b, phys);

	memset(t, 0, len);
	memcpy(t + ACPI_SDT_SIGNATURE, sig, 4);
	put_le32(t + ACPI_SDT_LENGTH, len);
	t[ACPI_SDT_REVISION] = revision;
	memcpy(t + ACPI_SDT_OEMID, ACPI_TV_OEM_ID, 6);
	memcpy(t + ACPI_SDT_OEM_TABLE_ID, ACPI_TV_OEM_TABLE_ID, 8);
	put_le32(t + ACPI_SDT_OEM_REVISION, 1);
	memcpy(t + ACPI_SDT_CREATOR_ID, ACPI_TV_CREATOR_ID, 4);
	put_le32(t + ACPI_SDT_CREATOR_REV, 1);
	return t;
}

static void sdt_close(uint8_t *t)
{
	uint32_t len = get_le32(t + ACPI_SDT_LENGTH);

	t[ACPI_SDT_CHECKSUM] = 0;
	t[ACPI_SDT_CHECKSUM] = acpi_checksum(t, len);
}

/* "Generic Address Structure (GAS)": an 8-bit I/O port. */
static void put_gas_port8(uint8_t *p, uint16_t port)
{
	p[ACPI_GAS_SPACE_ID] = ACPI_GAS_IO;
	p[ACPI_GAS_BIT_WIDTH] = 8;
	p[ACPI_GAS_BIT_OFFSET] = 0;
	p[ACPI_GAS_ACCESS_SIZE] = GAS_ACCESS_BYTE;
	put_le64(p + ACPI_GAS_ADDRESS, port);
}

/* "Root System Description Pointer (RSDP) Structure" */
static void build_rsdp(struct acpi_build *b)
{
	uint8_t *p = acpi_at(b, b->at.rsdp);

	memset(p, 0, ACPI_RSDP_V2_LEN);
	memcpy(p + ACPI_RSDP_SIGNATURE, "RSD PTR ", 8);
	memcpy(p + ACPI_RSDP_OEMID, ACPI_TV_OEM_ID, 6);
	p[ACPI_RSDP_REVISION] = RSDP_REVISION;
	put_le32(p + ACPI_RSDP_RSDT, (uint32_t)b->at.rsdt);
	put_le32(p + ACPI_RSDP_LENGTH, ACPI_RSDP_V2_LEN);
	put_le64(p + ACPI_RSDP_XSDT, b->at.xsdt);
	p[ACPI_RSDP_CHECKSUM] = acpi_checksum(p, ACPI_RSDP_V1_LEN);
	p[ACPI_RSDP_XCHECKSUM] = acpi_checksum(p, ACPI_RSDP_V2_LEN);
}

/* "Root System Description Table (RSDT)" and "Extended System
 * Description Table (XSDT)": the FADT and the MADT (the DSDT is reached
 * through the FADT). */
static void build_root_tables(struct acpi_build *b)
{
	uint8_t *t;

	t = sdt_open(b, b->at.rsdt, "RSDT", ACPI_SDT_HDR_LEN + 2 * 4, RSDT_REVISION);
	put_le32(t + ACPI_SDT_HDR_LEN, (uint32_t)b->at.fadt);
	put_le32(t + ACPI_SDT_HDR_LEN + 4, (uint32_t)b->at.madt);
	sdt_close(t);
	t = sdt_open(b, b->at.xsdt, "XSDT", ACPI_SDT_HDR_LEN + 2 * 8, XSDT_REVISION);
	put_le64(t + ACPI_SDT_HDR_LEN, b->at.fadt);
	put_le64(t + ACPI_SDT_HDR_LEN + 8, b->at.madt);
	sdt_close(t);
}

/* "Fixed ACPI Description Table (FADT)" of the hardware-reduced model
 * ("Hardware-Reduced ACPI"): the PM1/PM2/PM timer/GPE blocks, SCI_INT,
 * SMI_CMD and the FACS stay 0, which that model allows. */
static void build_fadt(struct acpi_build *b)
{
	uint8_t *t = sdt_open(b, b->at.fadt, "FACP", FADT_LEN, FADT_REVISION);

	put_le32(t + FADT_DSDT, (uint32_t)b->at.dsdt);
	put_le64(t + FADT_X_DSDT, b->at.dsdt);
	put_le16(t + FADT_IAPC_BOOT_ARCH, FADT_BOOT_VGA_NOT_PRESENT);
	put_le32(t + ACPI_FADT_FLAGS, (uint32_t)(FADT_F_WBINVD | FADT_F_PWR_BUTTON |
						 FADT_F_SLP_BUTTON | ACPI_FADT_RESET_REG_SUP |
						 ACPI_FADT_HW_REDUCED));
	put_gas_port8(t + ACPI_FADT_RESET_REG, ACPI_TV_RESET_PORT);
	t[ACPI_FADT_RESET_VALUE] = ACPI_TV_RESET_VALUE;
	t[FADT_MINOR_VERSION] = FADT_MINOR;
	put_gas_port8(t + FADT_SLEEP_CONTROL_REG, ACPI_TV_SLEEP_CTL_PORT);
	put_gas_port8(t + FADT_SLEEP_STATUS_REG, ACPI_TV_SLEEP_STS_PORT);
	memcpy(t + FADT_HV_VENDOR, ACPI_TV_HV_VENDOR, 8);
	sdt_close(t);
}

/* "Differentiated System Description Table (DSDT)": \_S5 and the RTC. */
static void build_dsdt(struct acpi_build *b)
{
	uint8_t *t = sdt_open(b, b->at.dsdt, "DSDT", ACPI_SDT_HDR_LEN + sizeof(dsdt_aml),
			      DSDT_REVISION);

	memcpy(t + ACPI_SDT_HDR_LEN, dsdt_aml, sizeof(dsdt_aml));
	sdt_close(t);
}

/* "Processor Local APIC Structure" for xAPIC IDs, "Processor Local
 * x2APIC Structure" for the rest (an xAPIC ID is 8 bits and 0xFF is the
 * broadcast); the ACPI Processor UID is the vCPU's index. */
static uint32_t madt_put_cpu(uint8_t *s, uint32_t uid, uint32_t id)
{
	if (id <= XAPIC_ID_MAX) {
		s[ACPI_MADT_SUB_TYPE] = ACPI_MADT_LAPIC;
		s[ACPI_MADT_SUB_LENGTH] = MADT_LAPIC_LEN;
		s[ACPI_LAPIC_UID] = (uint8_t)uid;
		s[ACPI_LAPIC_ID] = (uint8_t)id;
		put_le32(s + ACPI_LAPIC_FLAGS, ACPI_LAPIC_ENABLED);
		return MADT_LAPIC_LEN;
	}
	s[ACPI_MADT_SUB_TYPE] = ACPI_MADT_X2APIC;
	s[ACPI_MADT_SUB_LENGTH] = MADT_X2APIC_LEN;
	put_le32(s + ACPI_X2APIC_ID, id);
	put_le32(s + ACPI_X2APIC_FLAGS, ACPI_LAPIC_ENABLED);
	put_le32(s + ACPI_X2APIC_UID, uid);
	return MADT_X2APIC_LEN;
}

/* "Multiple APIC Description Table (MADT)": no I/O APIC and no 8259s
 * (PCAT_COMPAT clear), so interrupts are the local APICs' own. */
static void build_madt(struct acpi_build *b)
{
	uint32_t len = madt_len(b), off = ACPI_MADT_ENTRIES;
	uint8_t *t = sdt_open(b, b->at.madt, "APIC", len, MADT_REVISION);

	put_le32(t + ACPI_MADT_LAPIC_ADDR, LAPIC_DEFAULT_BASE);
	put_le32(t + ACPI_MADT_FLAGS, 0);
	for (uint32_t i = 0; i < b->ncpus; i++)
		off += madt_put_cpu(t + off, i, b->apic_ids[i]);
	sdt_close(t);
}

int acpi_tables_build(uint8_t *buf, size_t len, uint64_t base, const uint32_t *apic_ids,
		      uint32_t ncpus, struct acpi_tables_layout *out, char *err, size_t errlen)
{
	struct acpi_build b = {
		.buf = buf, .len = len, .base = base, .apic_ids = apic_ids, .ncpus = ncpus,
		.err = err, .errlen = errlen,
	};

	if (base % ACPI_TABLE_ALIGN)
		return acpi_build_fail(&b, "ACPI tables base 0x%lx is not 16-byte aligned", base);
	if (!ncpus || ncpus > ACPI_TV_MAX_CPUS)
		return acpi_build_fail(&b, "ACPI tables for %u CPUs: 1..%u supported", ncpus,
				       ACPI_TV_MAX_CPUS);
	for (uint32_t i = 0; i < ncpus; i++)
		if (apic_ids[i] == UINT32_MAX)
			return acpi_build_fail(&b, "CPU %u: APIC ID 0xffffffff is the x2APIC broadcast", i);
	if (acpi_plan(&b))
		return -1;
	build_rsdp(&b);
	build_root_tables(&b);
	build_fadt(&b);
	build_dsdt(&b);
	build_madt(&b);
	*out = b.at;
	if (errlen)
		err[0] = 0;
	return 0;
}
