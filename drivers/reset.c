// SPDX-License-Identifier: BSD-2-Clause
#include "drivers/reset.h"

static const char *const names[RESET_METHODS] = {
	[RESET_FADT] = "FADT reset register", [RESET_CF9] = "0xCF9 reset control",
	[RESET_KBC] = "8042 reset line", [RESET_EFI] = "UEFI ResetSystem",
};

const char *reset_method_name(enum reset_method m)
{
	return (unsigned)m < RESET_METHODS ? names[m] : "?";
}

const char *reset_fadt_unusable(const struct acpi_info *a)
{
	const struct acpi_gas *g = &a->reset_reg;

	if (!a->has_fadt)
		return "no FADT";
	if (!a->reset_supported)
		return "the FADT does not set RESET_REG_SUP";
	if (!g->address)
		return "RESET_REG is at address 0";
	if (g->bit_width != 8 || g->bit_offset != 0)
		return "RESET_REG is not 8 bits wide at bit offset 0";
	switch (g->space_id) {
	case ACPI_GAS_IO:
		return g->address > 0xffff ? "RESET_REG is beyond the I/O space" : NULL;
	case ACPI_GAS_MEMORY:
		return NULL;
	case ACPI_GAS_PCI_CFG:
		/* Device 0-31, function 0-7, a register of the 256-byte space. */
		if ((g->address >> 32 & 0xffff) > 31 || (g->address >> 16 & 0xffff) > 7 ||
		    (g->address & 0xffff) > 0xff)
			return "RESET_REG's PCI configuration address is out of range";
		return NULL;
	default:
		return "RESET_REG is in an address space other than I/O, memory or PCI";
	}
}

unsigned reset_plan(const struct acpi_info *a, enum reset_method first,
		    enum reset_method out[RESET_METHODS])
{
	unsigned n = 0;

	for (unsigned m = first; m < RESET_METHODS; m++)
		if (m != RESET_FADT || !reset_fadt_unusable(a))
			out[n++] = (enum reset_method)m;
	return n;
}

uint32_t reset_pci_cf8(uint64_t gas_address)
{
	uint32_t dev = (uint32_t)(gas_address >> 32) & 0x1f, fn = (uint32_t)(gas_address >> 16) & 7;

	return (uint32_t)BIT(31) | dev << 11 | fn << 8 | ((uint32_t)gas_address & 0xfc);
}
