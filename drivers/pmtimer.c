// SPDX-License-Identifier: BSD-2-Clause
#include "drivers/io.h"
#include "drivers/pci.h"
#include "drivers/pmtimer.h"

#define PIIX4_PM_DEV       1u
#define PIIX4_PM_FN        3u
#define PIIX4_PMBA         0x40u
#define PIIX4_VENDOR_DEV   0x71138086u  /* Intel 82371AB PIIX4 ACPI */
#define PMTMR_OFFSET       8u

bool pmtimer_probe_piix4(struct pmtimer *t)
{
	uint32_t base;

	if (pci_read32(0, PIIX4_PM_DEV, PIIX4_PM_FN, 0) != PIIX4_VENDOR_DEV)
		return false;
	base = pci_read32(0, PIIX4_PM_DEV, PIIX4_PM_FN, PIIX4_PMBA) & 0xffc0u;
	if (!base)
		return false;
	t->port = (uint16_t)(base + PMTMR_OFFSET);
	t->is_32bit = false;
	return pmtimer_check(t);
}

uint32_t pmtimer_read(const struct pmtimer *t)
{
	return inl(t->port) & (t->is_32bit ? 0xffffffffu : 0xffffffu);
}

uint32_t pmtimer_delta(const struct pmtimer *t, uint32_t a, uint32_t b)
{
	return (b - a) & (t->is_32bit ? 0xffffffffu : 0xffffffu);
}

bool pmtimer_check(const struct pmtimer *t)
{
	uint32_t first = pmtimer_read(t);

	for (unsigned i = 0; i < 100000; i++)
		if (pmtimer_read(t) != first)
			return true;
	return false;
}
