// SPDX-License-Identifier: BSD-2-Clause
/* TSC rate and delays; see tsc.h. */
#include "lib/tsc.h"
#include "lib/tickvisor.h"

#define TSC_HZ_GUESS            (5ull * 1000 * 1000 * 1000)     /* above any real TSC */

static uint64_t tsc_hz_probe(void)
{
	uint32_t max = cpuid(0).a;
	struct tv_info info;
	struct cpuid r;

	if (tickvisor_present() && tv_get_info(&info) && info.tsc_hz)
		return info.tsc_hz;
	if (max >= 0x15 && (r = cpuid(0x15)).a && r.b && r.c)
		return (uint64_t)r.c * r.b / r.a;
	if (max >= 0x16 && (r = cpuid(0x16)).a)
		return (uint64_t)r.a * 1000000;
	return TSC_HZ_GUESS;
}

/* Racing first callers on several CPUs compute the same value. */
uint64_t tsc_hz(void)
{
	static uint64_t hz;
	uint64_t v = __atomic_load_n(&hz, __ATOMIC_RELAXED);

	if (!v) {
		v = tsc_hz_probe();
		__atomic_store_n(&hz, v, __ATOMIC_RELAXED);
	}
	return v;
}

void tsc_delay_us(uint64_t us)
{
	uint64_t end = tsc_deadline_us(us);

	while (!tsc_passed(end))
		pause();
}
