// SPDX-License-Identifier: BSD-2-Clause
#include "timer/timebase.h"

/* Rates kept to the kHz: calibration (drivers/tsc.c) measures no finer,
 * Linux (tsc_khz) and KVM (KVM_SET_TSC_KHZ) carry TSC rates in kHz, and
 * a multiple of 1000 = 2^3 * 5^3 always has a divisor close above
 * TSC / 1 GHz (see timebase_init). A rate below 500 Hz stays as it is. */
static uint64_t round_khz(uint64_t hz)
{
	uint64_t khz = (hz + 500) / 1000 * 1000;

	return khz ? khz : hz;
}

/*
 * The APIC timer ticks every apic_div TSC cycles, so for CPUID 0x15 to
 * state it exactly (TSC = crystal * EBX / EAX with integers) apic_div must
 * divide the TSC rate. The smallest divisor at or above TSC / 1 GHz keeps
 * the clock at or below 1 GHz and as fast as it can be. The search ends:
 * tsc_hz divides itself. It is short: a multiple of 1000 has a divisor of
 * 1000 in [min, 2 * min) for every min <= 1000 (1, 2, 4, 5, 8, 10, 20, 25,
 * 40, 50, 100, ... never more than doubling), so the clock never drops
 * below half of 1 GHz * (min - 1) / min (> 250 MHz for a TSC above 1 GHz);
 * for TSCs up to 10 GHz the divisor is at most min + 2.
 */
void timebase_init(struct timebase *tb, uint64_t tsc_hz)
{
	uint64_t hz = round_khz(tsc_hz < TIMEBASE_TSC_MAX_HZ ? tsc_hz : TIMEBASE_TSC_MAX_HZ);
	uint64_t div = (hz + TIMEBASE_APIC_MAX_HZ - 1) / TIMEBASE_APIC_MAX_HZ;

	if (!div)
		div = 1;
	while (hz % div)
		div++;
	tb->tsc_hz = hz;
	tb->apic_div = (uint32_t)div;
	tb->apic_hz = hz / div;
}

struct timebase_leaf15 timebase_leaf15(const struct timebase *tb)
{
	/* Crystal = APIC timer clock, TSC / crystal = apic_div / 1: exact,
	 * since apic_div divides tsc_hz; apic_hz <= 1 GHz fits ECX. */
	return (struct timebase_leaf15){ 1, tb->apic_div, (uint32_t)tb->apic_hz };
}

/* hi:lo / d for hi < d, so the quotient fits 64 bits: shift-and-subtract,
 * because a 128-bit division would need libgcc, which the freestanding
 * hypervisor does not link. Only delta * rate products above 2^64 (hours
 * of a GHz clock) come here. */
static uint64_t div128(uint64_t hi, uint64_t lo, uint64_t d)
{
	uint64_t q = 0;

	for (int i = 0; i < 64; i++) {
		bool carry = hi >> 63;

		hi = (hi << 1) | (lo >> 63);
		lo <<= 1;
		q <<= 1;
		if (carry || hi >= d) {
			hi -= d;
			q |= 1;
		}
	}
	return q;
}

uint64_t timebase_mul_div(uint64_t a, uint64_t mul, uint64_t div)
{
	unsigned __int128 p = (unsigned __int128)a * mul;
	uint64_t hi = (uint64_t)(p >> 64);

	if (!div || hi >= div)
		return UINT64_MAX;
	if (!hi)
		return (uint64_t)p / div;
	/* a = q * div + r, so a * mul / div = q * mul + r * mul / div, exact,
	 * and r * mul < div * mul fits 64 bits for any two clock rates below
	 * 4 GHz. A far deadline (a guest's IA32_TSC_DEADLINE 2^40 ahead, ~2^66
	 * at an HPET's 100 MHz) is common, and the 64 rounds of div128 cost
	 * ~900 instructions on every such arming; q * mul cannot overflow,
	 * since hi < div bounds the quotient to 64 bits. */
	if (mul <= UINT64_MAX / div)
		return a / div * mul + a % div * mul / div;
	return div128(hi, (uint64_t)p, div);
}

uint64_t timebase_counter_mask(unsigned bits)
{
	return bits >= 64 ? UINT64_MAX : (1ull << bits) - 1;
}

bool timebase_counter_reached(uint64_t now, uint64_t when, unsigned bits)
{
	uint64_t diff = (now - when) & timebase_counter_mask(bits);

	/* Reached when now - when, taken in the counter's width, is not
	 * negative: its top bit is clear. */
	return !(diff >> (bits >= 64 ? 63 : bits - 1));
}

uint64_t timebase_counter_deadline(uint64_t now, uint64_t ticks, unsigned bits, bool *clamped)
{
	uint64_t max = timebase_counter_mask(bits) >> 1;

	*clamped = ticks > max;
	return (now + (*clamped ? max : ticks)) & timebase_counter_mask(bits);
}
