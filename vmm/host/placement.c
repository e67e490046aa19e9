// SPDX-License-Identifier: BSD-2-Clause
/* vCPU and housekeeper placement by core (vmm/host/placement.h). */
#include "vmm/host/placement.h"

static bool core_taken(const uint32_t *core_key, uint32_t key, const uint32_t *cpus,
		       uint32_t k)
{
	for (uint32_t i = 0; i < k; i++)
		if (core_key[cpus[i]] == key)
			return true;
	return false;
}

void place_order(const uint32_t *core_key, uint32_t n, uint32_t *order)
{
	uint64_t placed = 0;
	uint32_t k = 0;

	if (!n)
		return;
	order[k++] = 0;
	placed |= BIT(0);
	for (uint32_t c = 1; c < n; c++)
		if (!core_taken(core_key, core_key[c], order, k)) {
			order[k++] = c;
			placed |= BIT(c);
		}
	for (uint32_t c = 1; c < n; c++)
		if (!(placed & BIT(c)))
			order[k++] = c;
}

int place_housekeeper(const uint32_t *core_key, uint32_t n, uint64_t free, uint64_t busy,
		      bool *shares_core)
{
	int sibling = -1;

	*shares_core = false;
	for (uint32_t c = 0; c < n && c < 64; c++) {
		bool near_vcpu = false;

		if (!(free & BIT(c)) || (busy & BIT(c)))
			continue;
		for (uint32_t b = 0; b < n && !near_vcpu; b++)
			near_vcpu = (busy & BIT(b)) && core_key[b] == core_key[c];
		if (!near_vcpu)
			return (int)c;
		if (sibling < 0)
			sibling = (int)c;
	}
	*shares_core = sibling >= 0;
	return sibling;
}
