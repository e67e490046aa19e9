// SPDX-License-Identifier: BSD-2-Clause
#include "drivers/hpet.h"
#include "timer/host_route.h"

int host_route_pin(const uint64_t *caps, unsigned n, uint32_t usable)
{
	uint32_t taken = 0;

	for (unsigned i = 0; i <= n; i++) {
		uint32_t avail;
		unsigned pin;

		if (caps[i] & HPET_TN_FSB_CAP)
			continue;
		avail = (uint32_t)FIELD_GET(HPET_TN_ROUTE_CAP, caps[i]) & usable & ~taken;
		if (!avail) {
			if (i == n)
				return -1;
			continue;
		}
		pin = 31 - (unsigned)__builtin_clz(avail);
		if (i == n)
			return (int)pin;
		taken |= BIT(pin);
	}
	return -1;      /* comparator n delivers by FSB */
}

#define ISA_GSIS 16u

bool host_route_mode(uint32_t gsi, const struct acpi_iso *isos, unsigned nisos,
		     struct host_route_mode *m)
{
	unsigned pol, trig;
	bool isa = gsi < ISA_GSIS;

	pol = trig = 0;
	for (unsigned i = 0; i < nisos; i++)
		if (isos[i].gsi == gsi) {
			pol = (unsigned)FIELD_GET(ACPI_INTI_POLARITY, isos[i].flags);
			trig = (unsigned)FIELD_GET(ACPI_INTI_TRIGGER, isos[i].flags);
			isa = true;     /* the source is an ISA IRQ */
			break;
		}
	if (pol == 2 || trig == 2)
		return false;   /* reserved */
	m->level = trig ? trig == ACPI_INTI_LEVEL : !isa;
	m->active_low = pol ? pol == ACPI_INTI_ACTIVE_LOW : !isa;
	return m->level || !m->active_low;
}

uint32_t host_route_usable(unsigned pins, uint32_t gsi_base, const struct acpi_iso *isos,
			   unsigned nisos)
{
	struct host_route_mode m;
	uint32_t usable = 0;

	for (unsigned pin = 0; pin < pins && pin < 32; pin++)
		if (host_route_mode(gsi_base + pin, isos, nisos, &m))
			usable |= (uint32_t)BIT(pin);
	return usable;
}
