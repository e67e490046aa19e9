// SPDX-License-Identifier: BSD-2-Clause
#include "drivers/apic_dest.h"

uint32_t apic_x2apic_dests(const uint32_t *ids, uint32_t n, struct apic_dest *out)
{
	uint32_t k = 0;

	for (uint32_t i = 0; i < n; i++) {
		uint32_t id = ids[i], j;

		if (id >= APIC_X2APIC_LOGICAL_IDS) {
			for (j = 0; j < k && (out[j].logical || out[j].dest != id); j++)
				;
			if (j == k)
				out[k++] = (struct apic_dest){ .dest = id, .logical = false };
			continue;
		}
		for (j = 0; j < k && !(out[j].logical && out[j].dest >> 16 == id >> 4); j++)
			;
		if (j == k)
			out[k++] = (struct apic_dest){ .dest = apic_x2apic_ldr(id), .logical = true };
		else
			out[j].dest |= apic_x2apic_ldr(id);
	}
	return k;
}
