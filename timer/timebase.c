// SPDX-License-Identifier: BSD-2-Clause
#include "timer/timebase.h"

void timebase_init(struct timebase *tb, uint64_t tsc_hz)
{
	uint64_t div = (tsc_hz + TIMEBASE_APIC_MAX_HZ - 1) / TIMEBASE_APIC_MAX_HZ;

	tb->tsc_hz = tsc_hz;
	tb->apic_div = (uint32_t)(div ? div : 1);
	tb->apic_hz = tsc_hz / tb->apic_div;
}
