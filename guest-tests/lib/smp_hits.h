/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Which CPUs an interrupt handler ran on, and how often: for tests that
 * check an IPI reached exactly its destination set, once per CPU.
 *
 * A handler calls smp_hits_record() (lock-free: each CPU writes only its
 * own slot). smp_hits_expect() waits, bounded, until every CPU of the
 * expected set has its hits, then watches a quiet period for strays: a
 * CPU outside the set, or a second delivery. The waiting CPU must have
 * interrupts enabled if it is in the set itself.
 */
#ifndef GUEST_SMP_HITS_H
#define GUEST_SMP_HITS_H

#include "lib/percpu.h"

#define SMP_HITS_TIMEOUT_US     50000u  /* an IPI that takes longer is lost */
#define SMP_HITS_QUIET_US       1000u   /* strays show up within this */

struct smp_hits {
	uint32_t count[MAX_CPUS];       /* handler runs per CPU (APIC ID) */
	uint64_t last_tsc[MAX_CPUS];    /* TSC at the latest run */
};

void smp_hits_clear(struct smp_hits *h);
/* In the handler: one more run on this CPU. */
void smp_hits_record(struct smp_hits *h);
/* Bit n set: CPU n ran the handler at least once. */
uint32_t smp_hits_mask(const struct smp_hits *h);
uint32_t smp_hits_of(const struct smp_hits *h, unsigned cpu);

/* Waits up to timeout_us until each CPU in `want` has `n` runs, then
 * quiet_us more; true if then exactly the CPUs in `want` ran it, n times
 * each. *got (may be NULL) gets smp_hits_mask(). */
bool smp_hits_expect(const struct smp_hits *h, uint32_t want, uint32_t n,
		     uint64_t timeout_us, uint64_t quiet_us, uint32_t *got);

#endif
