/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The guest's time base: the TSC, and the emulated APIC timer clock that
 * ticks once every `apic_div` TSC cycles (DESIGN.md: an exact integer
 * divisor of the TSC, never faster). The same numbers go to the guest in
 * CPUID 0x15/0x16. Pure arithmetic, host-tested.
 */
#ifndef TIMER_TIMEBASE_H
#define TIMER_TIMEBASE_H

#include "drivers/base.h"

/* The APIC timer runs at most at this rate: 1 GHz keeps TMICT's 32 bits
 * good for > 4 s at divide 1 and is far finer than real APIC buses. */
#define TIMEBASE_APIC_MAX_HZ 1000000000ull

struct timebase {
	uint64_t tsc_hz;
	uint32_t apic_div;      /* TSC cycles per APIC timer tick (>= 1) */
	uint64_t apic_hz;       /* floor(tsc_hz / apic_div) */
};

void timebase_init(struct timebase *tb, uint64_t tsc_hz);

#endif
