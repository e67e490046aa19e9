// SPDX-License-Identifier: BSD-2-Clause
#include "drivers/hpet.h"
#include "timer/host_route.h"

static uint32_t free_inputs(uint64_t caps, uint32_t taken, unsigned ioapic_pins)
{
	uint32_t usable = ioapic_pins >= 32 ? ~0u : (uint32_t)BIT(ioapic_pins) - 1;

	return (uint32_t)FIELD_GET(HPET_TN_ROUTE_CAP, caps) & usable & ~taken;
}

int host_route_pin(const uint64_t *caps, unsigned n, unsigned ioapic_pins)
{
	uint32_t taken = 0;

	for (unsigned i = 0; i <= n; i++) {
		uint32_t avail;
		unsigned pin;

		if (caps[i] & HPET_TN_FSB_CAP)
			continue;
		avail = free_inputs(caps[i], taken, ioapic_pins);
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
