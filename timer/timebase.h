/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The guest's time base: the TSC, and the emulated APIC timer clock that
 * ticks once every `apic_div` TSC cycles (DESIGN.md: an exact integer
 * divisor of the TSC, never faster). The same numbers go to the guest in
 * CPUID 0x15/0x16. Also the wrap- and overflow-safe arithmetic the host
 * timers need (STYLE.md: time is compared by signed difference; a delta
 * times a rate uses 128-bit math). Pure arithmetic, host-tested.
 */
#ifndef TIMER_TIMEBASE_H
#define TIMER_TIMEBASE_H

#include "drivers/base.h"

/* The APIC timer runs at most at this rate: 1 GHz keeps TMICT's 32 bits
 * good for > 4 s at divide 1 and is far finer than real APIC buses. */
#define TIMEBASE_APIC_MAX_HZ 1000000000ull
/* No TSC comes near 1 THz; only a lying CPUID 0x15 could say more. The
 * cap keeps apic_div (<= 1000) and the divisor search small. */
#define TIMEBASE_TSC_MAX_HZ  1000000000000ull

struct timebase {
	uint64_t tsc_hz;        /* the TSC rate given, to the nearest kHz */
	uint32_t apic_div;      /* TSC cycles per APIC timer tick (>= 1) */
	uint64_t apic_hz;       /* tsc_hz / apic_div, exactly */
};

/* tsc_hz rounded to the kHz; apic_div the smallest integer >= tsc_hz /
 * 1 GHz that divides it, so tsc_hz % apic_hz == 0 and apic_hz <= 1 GHz
 * and <= tsc_hz, whatever rate calibration found. */
void timebase_init(struct timebase *tb, uint64_t tsc_hz);

/* CPUID 0x15 as the guest reads it (SDM Vol. 2A, CPUID, "Time Stamp
 * Counter and Nominal Core Crystal Clock Information Leaf"): TSC =
 * ECX * EBX / EAX, the crystal being the APIC timer clock. */
struct timebase_leaf15 {
	uint32_t eax;           /* denominator of the TSC / crystal ratio */
	uint32_t ebx;           /* numerator */
	uint32_t ecx;           /* crystal (APIC timer) Hz */
};
struct timebase_leaf15 timebase_leaf15(const struct timebase *tb);

/* floor(a * mul / div) with a 128-bit product, saturated at UINT64_MAX
 * (also for div 0): a delta of seconds times a GHz rate overflows 64 bits. */
uint64_t timebase_mul_div(uint64_t a, uint64_t mul, uint64_t div);

/*
 * TSC cycles from now_tsc until deadline_tsc, 0 once it has passed. The
 * TSC counts 64 bits from reset and does not wrap in a machine's life
 * (2^64 cycles at 5 GHz are 117 years), but a deadline can lie anywhere
 * ahead, because the guest chooses it: IA32_TSC_DEADLINE = ~0 means
 * "never" and must not read as "past" the way a signed difference would
 * take it. KVM's start_sw_tscdeadline compares the same way (unsigned,
 * deadline > guest TSC).
 */
static inline uint64_t timebase_tsc_until(uint64_t deadline_tsc, uint64_t now_tsc)
{
	return deadline_tsc > now_tsc ? deadline_tsc - now_tsc : 0;
}

/* For two nearby 64-bit times (values we armed ourselves, loop ends):
 * t has come, by signed difference (Xen vpt.c: (int64_t)(now - t) >= 0). */
static inline bool timebase_reached(uint64_t now, uint64_t t)
{
	return (int64_t)(now - t) >= 0;
}

/* A free-running counter `bits` wide (1..64) that wraps, such as a 32-bit
 * HPET comparator's view of the main counter (~43 s at 100 MHz). */
uint64_t timebase_counter_mask(unsigned bits);
/* The counter at `now` has reached `when`: by signed difference in the
 * counter's width, so across a wrap too (when at most half a wrap ahead). */
bool timebase_counter_reached(uint64_t now, uint64_t when, unsigned bits);
/* The comparator value `ticks` after `now`, wrapped into the counter's
 * width. At most half a wrap ahead: beyond, a match could not be told
 * from a passed one, so it is clamped there and *clamped set (the timer
 * then fires early and the caller re-arms from its absolute deadline). */
uint64_t timebase_counter_deadline(uint64_t now, uint64_t ticks, unsigned bits, bool *clamped);

#endif
