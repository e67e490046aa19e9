// SPDX-License-Identifier: BSD-2-Clause
/* Per-CPU handler runs; see smp_hits.h. */
#include "lib/smp_hits.h"
#include "lib/tsc.h"

void smp_hits_clear(struct smp_hits *h)
{
	for (unsigned cpu = 0; cpu < MAX_CPUS; cpu++) {
		__atomic_store_n(&h->count[cpu], 0, __ATOMIC_RELAXED);
		__atomic_store_n(&h->last_tsc[cpu], 0, __ATOMIC_RELAXED);
	}
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

void smp_hits_record(struct smp_hits *h)
{
	unsigned cpu = smp_id();

	__atomic_store_n(&h->last_tsc[cpu], rdtsc(), __ATOMIC_RELAXED);
	__atomic_fetch_add(&h->count[cpu], 1, __ATOMIC_RELEASE);
}

uint32_t smp_hits_of(const struct smp_hits *h, unsigned cpu)
{
	return cpu < MAX_CPUS ? __atomic_load_n(&h->count[cpu], __ATOMIC_ACQUIRE) : 0;
}

uint32_t smp_hits_mask(const struct smp_hits *h)
{
	uint32_t mask = 0;

	for (unsigned cpu = 0; cpu < MAX_CPUS; cpu++)
		if (smp_hits_of(h, cpu))
			mask |= (uint32_t)BIT(cpu);
	return mask;
}

static bool all_reached(const struct smp_hits *h, uint32_t want, uint32_t n)
{
	for (unsigned cpu = 0; cpu < MAX_CPUS; cpu++)
		if ((want & BIT(cpu)) && smp_hits_of(h, cpu) < n)
			return false;
	return true;
}

static bool exactly(const struct smp_hits *h, uint32_t want, uint32_t n)
{
	for (unsigned cpu = 0; cpu < MAX_CPUS; cpu++)
		if (smp_hits_of(h, cpu) != ((want & BIT(cpu)) ? n : 0))
			return false;
	return true;
}

bool smp_hits_expect(const struct smp_hits *h, uint32_t want, uint32_t n,
		     uint64_t timeout_us, uint64_t quiet_us, uint32_t *got)
{
	uint64_t deadline = tsc_deadline_us(timeout_us);
	bool ok;

	while (!all_reached(h, want, n) && !tsc_passed(deadline))
		pause();
	tsc_delay_us(quiet_us);
	ok = exactly(h, want, n);
	if (got)
		*got = smp_hits_mask(h);
	return ok;
}
