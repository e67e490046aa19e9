/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Resetting the machine (end=reset, issue 22.7): the ways to try, in
 * order, as Linux's reboot code orders them for a PC whose firmware may
 * not help: the FADT's reset register (ACPI spec, "Reset Register": an
 * 8-bit register at bit offset 0 in system I/O, system memory or PCI
 * configuration space of bus 0, written with RESET_VALUE, only where
 * RESET_REG_SUP says so), the chipset's reset control register at 0xCF9,
 * the 8042's reset line, and only then the firmware's ResetSystem(),
 * which on some PCs returns or touches memory long reused. The choice is
 * pure (reset_plan); doing it is vmm/host/power.c's.
 */
#ifndef DRIVERS_RESET_H
#define DRIVERS_RESET_H

#include "drivers/acpi.h"

enum reset_method {
	RESET_FADT,             /* the FADT's RESET_REG <- RESET_VALUE */
	RESET_CF9,              /* 0xCF9: system reset, then full reset */
	RESET_KBC,              /* 8042 command 0xFE: pulse the reset line */
	RESET_EFI,              /* UEFI ResetSystem(EfiResetCold) */
	RESET_METHODS,
};

/* "FADT reset register", "0xCF9", ... */
const char *reset_method_name(enum reset_method m);
/* Why the FADT's register cannot be used, or NULL when it can. */
const char *reset_fadt_unusable(const struct acpi_info *a);
/* The methods to try, from `first` on (a later start skips the earlier
 * ones: inject=reset-from:), the FADT's only where usable; returns how
 * many were written to out. */
unsigned reset_plan(const struct acpi_info *a, enum reset_method first,
		    enum reset_method out[RESET_METHODS]);
/* The PCI configuration address (mechanism #1, 0xCF8) of a RESET_REG in
 * PCI configuration space: the GAS address holds device (47:32),
 * function (31:16) and register (15:0), of bus 0. */
uint32_t reset_pci_cf8(uint64_t gas_address);

#endif
