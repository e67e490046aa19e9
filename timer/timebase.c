// SPDX-License-Identifier: BSD-2-Clause
#include "timer/timebase.h"

void timebase_init(struct timebase *tb, uint64_t tsc_hz)
{
	uint64_t div = (tsc_hz + TIMEBASE_APIC_MAX_HZ - 1) / TIMEBASE_APIC_MAX_HZ;

	tb->tsc_hz = tsc_hz;
	tb->apic_div = (uint32_t)(div ? div : 1);
	tb->apic_hz = tsc_hz / tb->apic_div;
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
