/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Time in TSC cycles: the rate, microsecond conversion, delays and
 * deadlines. All bounded waits of the SMP runtime (INIT/SIPI delays,
 * on_cpu() answers) are measured here, so a lost IPI ends in a FAIL
 * after a known time instead of a hang.
 */
#ifndef GUEST_TSC_H
#define GUEST_TSC_H

#include "lib/processor.h"

/* TSC rate in Hz: tickvisor's TV_HC_INFO, else CPUID 0x15 (crystal *
 * ratio), else 0x16 (base MHz), else a high guess, so that delays last
 * longer than asked, never shorter. Cached after the first call (CPUID
 * and VMCALL are VM exits). */
uint64_t tsc_hz(void);

static inline uint64_t tsc_from_us(uint64_t us)
{
	return us * tsc_hz() / 1000000;
}

/* Cycles to microseconds, for reports. */
static inline uint64_t tsc_to_us(uint64_t cycles)
{
	return cycles * 1000000 / tsc_hz();
}

/* The TSC value `us` from now. */
static inline uint64_t tsc_deadline_us(uint64_t us)
{
	return rdtsc() + tsc_from_us(us);
}

static inline bool tsc_passed(uint64_t deadline)
{
	return rdtsc() >= deadline;
}

/* Spins (PAUSE, interrupts as they are) for `us` microseconds. */
void tsc_delay_us(uint64_t us);

#endif
