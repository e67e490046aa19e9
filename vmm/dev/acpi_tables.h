/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The ACPI tables every guest finds in its memory: RSDP, RSDT, XSDT, a
 * hardware-reduced FADT, a MADT with one local APIC per vCPU and a DSDT
 * that holds only \_S5. References are to ACPI 6.4 by section title.
 *
 * Built in C with their checksums at load time, not compiled from ASL by
 * iasl: the MADT depends on each guest's vCPU count, so at least that
 * table has to be made at run time anyway, and the DSDT body is one
 * 14-byte Name() that is easier to check byte by byte in a unit test
 * than a build-time tool dependency. Pure C with no output: the host unit
 * tests build the tables and read them back with drivers/acpi.c.
 *
 * What the FADT promises, and who models it (vmm/dev/):
 *   - no PM timer, PM1 blocks, GPEs or SCI (HW_REDUCED_ACPI): a guest
 *     calibrates against CPUID 0x15/0x16 and uses the TSC-deadline timer;
 *   - RESET_REG: port 0xCF9, value 6 (the PIIX/ICH reset control
 *     register's hard reset), Linux's first choice to reboot;
 *   - SLEEP_CONTROL_REG / SLEEP_STATUS_REG: two 8-bit I/O ports; a write
 *     of SLP_TYP = 5 (\_S5's value) with SLP_EN set is the power-off
 *     ("Sleep Control and Status Registers" of the hardware-reduced
 *     model).
 */
#ifndef VMM_DEV_ACPI_TABLES_H
#define VMM_DEV_ACPI_TABLES_H

#include "drivers/base.h"

/* Where the tables live in guest-physical memory: the top 64 KiB of the
 * BIOS area, which both loaders report as reserved, and where an OS that
 * is not told the RSDP's address scans for it ("Finding the RSDP on
 * IA-PC Systems": 16-byte boundaries of 0xE0000-0xFFFFF). */
#define ACPI_TABLES_BASE        0xF0000ull
#define ACPI_TABLES_SIZE        0x10000u

/* "Fixed ACPI Description Table (FADT)", the registers it names. */
#define ACPI_TV_RESET_PORT      0xcf9u  /* PIIX/ICH reset control */
#define ACPI_TV_RESET_VALUE     0x06u   /* SYS_RST | RST_CPU: hard reset */
#define ACPI_TV_SLEEP_CTL_PORT  0x600u  /* SLEEP_CONTROL_REG, 8 bits */
#define ACPI_TV_SLEEP_STS_PORT  0x601u  /* SLEEP_STATUS_REG, 8 bits */
/* "Sleep Control Register": SLP_TYPx in bits 4:2, SLP_EN bit 5. */
#define ACPI_SLEEP_CTL_SLP_TYP  BITS(4, 2)
#define ACPI_SLEEP_CTL_SLP_EN   BIT(5)
/* "Sleep Status Register": WAK_STS bit 7 (write 1 to clear). */
#define ACPI_SLEEP_STS_WAK_STS  BIT(7)
/* The SLP_TYP value the DSDT's \_S5 package gives (both elements). */
#define ACPI_TV_SLP_TYP_S5      5u

/* Up to this many processors; each takes at most a 16-byte entry. */
#define ACPI_TV_MAX_CPUS        256u

/* Where each table was put (guest-physical), for the loaders and tests. */
struct acpi_tables_layout {
	uint64_t rsdp, rsdt, xsdt, fadt, dsdt, madt;
	uint64_t end;                   /* one past the last byte used */
};

/*
 * Builds the tables for `ncpus` processors with the given APIC IDs (vCPU
 * n's local APIC ID is apic_ids[n]; IDs of 255 and above get a Local
 * x2APIC structure) into buf, which the guest sees at guest-physical
 * `base` (16-byte aligned) and which holds `len` bytes. Returns 0, or -1
 * with a one-line reason in err when they do not fit or the request is
 * impossible; buf is then untouched.
 */
int acpi_tables_build(uint8_t *buf, size_t len, uint64_t base, const uint32_t *apic_ids,
		      uint32_t ncpus, struct acpi_tables_layout *out, char *err, size_t errlen);

#endif
