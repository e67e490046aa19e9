// SPDX-License-Identifier: BSD-2-Clause
/*
 * timer/timebase.c: the emulated APIC timer clock is the TSC divided by
 * the smallest integer at or above TSC / 1 GHz that divides the TSC rate
 * (DESIGN.md "Timer rules": an exact integer divisor of the TSC, reported
 * in CPUID 0x15, never faster than the TSC; issue 22 item 3: 2.5 and
 * 2.6 GHz gave TSC / 3, which is not exact), the rate kept to the kHz;
 * and the host timers' arithmetic: 128-bit delta x rate, saturating, and
 * time compared by signed difference, also in a 32-bit HPET comparator's
 * width (IA-PC HPET 1.0a, "Timer N Comparator Value Register": a 32-bit
 * timer matches the main counter's low 32 bits and so wraps every 2^32
 * ticks; Bochs's iodev/hpet.cc, hpet_cmp32_to_cmp64, and Linux's
 * arch/x86/kernel/hpet.c, hpet_next_event's (s32)(cmp - counter), agree).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "timer/timebase.h"

#define GHZ 1000000000ull
#define MHZ 1000000ull

/* The properties every result must have, whatever tsc_hz is. */
static void check_props(uint64_t tsc_hz)
{
	struct timebase tb;
	struct timebase_leaf15 l;
	uint64_t hz, div, min;

	timebase_init(&tb, tsc_hz);
	hz = tb.tsc_hz;
	div = tb.apic_div;
	min = hz <= GHZ ? 1 : (hz + GHZ - 1) / GHZ;
	/* the rate given (at most the cap), to the nearest kHz */
	if (tsc_hz > TIMEBASE_TSC_MAX_HZ)
		tsc_hz = TIMEBASE_TSC_MAX_HZ;
	assert_true(hz % 1000 == 0 || tsc_hz < 500);
	assert_true(hz >= tsc_hz ? hz - tsc_hz <= 500 : tsc_hz - hz < 500);
	/* DESIGN.md: TSC % apic_hz == 0, never faster than the TSC or 1 GHz */
	assert_true(div >= 1);
	assert_int_equal(tb.apic_hz * div, hz);
	assert_true(hz == 0 || hz % tb.apic_hz == 0);
	assert_true(tb.apic_hz <= TIMEBASE_APIC_MAX_HZ);
	assert_true(tb.apic_hz <= hz);
	/* the smallest such divisor: none in [ceil(TSC / 1 GHz), div) */
	assert_true(div >= min);
	for (uint64_t d = min; d < div; d++)
		assert_true(hz % d != 0);
	/* ... and never far above it: a TSC above 1 GHz keeps the clock
	 * above 250 MHz, one up to 10 GHz has a divisor of at most min + 2 */
	if (hz > GHZ)
		assert_true(tb.apic_hz > 250 * MHZ);
	if (hz <= 10 * GHZ)
		assert_true(div <= min + 2);
	/* CPUID 0x15 states the TSC exactly: ECX * EBX / EAX, no remainder */
	l = timebase_leaf15(&tb);
	assert_true(l.eax != 0);
	assert_int_equal(l.ecx, tb.apic_hz);
	assert_int_equal((uint64_t)l.ecx * l.ebx % l.eax, 0);
	assert_int_equal((uint64_t)l.ecx * l.ebx / l.eax, hz);
}

static void test_known_values(void **state)
{
	static const struct {
		uint64_t given_hz, tsc_hz;
		uint32_t div;
		uint64_t apic_hz;
	} v[] = {
		{ 50 * MHZ, 50 * MHZ, 1, 50 * MHZ },    /* Bochs: APIC clock = TSC */
		{ 1 * MHZ, 1 * MHZ, 1, 1 * MHZ },
		{ GHZ, GHZ, 1, GHZ },
		{ 2 * GHZ, 2 * GHZ, 2, GHZ },
		/* issue 22: TSC / 3 is not exact, the next divisor is 4 */
		{ 2500 * MHZ, 2500 * MHZ, 4, 625 * MHZ },
		{ 2600 * MHZ, 2600 * MHZ, 4, 650 * MHZ },
		{ 2592 * MHZ, 2592 * MHZ, 3, 864 * MHZ },       /* 3 divides it */
		{ 2100 * MHZ, 2100 * MHZ, 3, 700 * MHZ },
		{ 3 * GHZ, 3 * GHZ, 3, GHZ },
		{ 3700 * MHZ, 3700 * MHZ, 4, 925 * MHZ },
		{ 5 * GHZ, 5 * GHZ, 5, GHZ },
		{ 6100 * MHZ, 6100 * MHZ, 8, 762500 * 1000 },   /* 7 does not divide */
		/* odd calibrated rates: first to the kHz, then divided */
		{ 2592001234ull, 2592001000ull, 4, 648000250 },
		{ 2147483647ull, 2147484000ull, 3, 715828000 }, /* 2^31 - 1, a prime */
		{ 999999999, GHZ, 1, GHZ },
		{ GHZ + 1, GHZ, 1, GHZ },               /* rounding crosses 1 GHz */
		{ 3 * GHZ + 1, 3 * GHZ, 3, GHZ },
		{ 2600000499ull, 2600000000ull, 4, 650 * MHZ },
		{ 2600000500ull, 2600001000ull, 3, 866667000 },
		/* only a lying CPUID 0x15 says more than 1 THz: capped */
		{ UINT64_MAX, TIMEBASE_TSC_MAX_HZ, 1000, GHZ },
	};

	for (unsigned i = 0; i < ARRAY_SIZE(v); i++) {
		struct timebase tb;
		struct timebase_leaf15 l;

		timebase_init(&tb, v[i].given_hz);
		assert_int_equal(tb.tsc_hz, v[i].tsc_hz);
		assert_int_equal(tb.apic_div, v[i].div);
		assert_int_equal(tb.apic_hz, v[i].apic_hz);
		/* what the guest reads in CPUID 0x15: 1, div, apic_hz */
		l = timebase_leaf15(&tb);
		assert_int_equal(l.eax, 1);
		assert_int_equal(l.ebx, v[i].div);
		assert_int_equal(l.ecx, v[i].apic_hz);
		check_props(v[i].given_hz);
	}
}

static void test_exact_multiples(void **state)
{
	/* A TSC that is a multiple of 1 GHz gives exactly 1 GHz. */
	for (uint64_t n = 1; n <= 16; n++) {
		struct timebase tb;

		timebase_init(&tb, n * GHZ);
		assert_int_equal(tb.apic_div, n);
		assert_int_equal(tb.apic_hz, GHZ);
		assert_int_equal((uint64_t)tb.apic_div * tb.apic_hz, tb.tsc_hz);
	}
}

static void test_range(void **state)
{
	/* Calibrated TSCs are not round: sweep odd values 1 MHz .. 10 GHz,
	 * every 100 MHz step of real parts' nominal rates, both sides of
	 * each kHz rounding edge, and rates up to the 1 THz cap. */
	for (uint64_t hz = MHZ; hz <= 10 * GHZ; hz += 7777777)
		check_props(hz);
	for (uint64_t hz = 100 * MHZ; hz <= 10 * GHZ; hz += 100 * MHZ)
		check_props(hz);
	for (uint64_t hz = 2592000000ull; hz < 2592004000ull; hz += 97)
		check_props(hz);
	for (uint64_t n = 1; n <= 10; n++) {
		check_props(n * GHZ - 1);
		check_props(n * GHZ);
		check_props(n * GHZ + 1);
	}
	for (uint64_t hz = 10 * GHZ; hz <= TIMEBASE_TSC_MAX_HZ; hz += 3333333337ull)
		check_props(hz);
	for (uint64_t hz = 1; hz < 3000; hz += 7)
		check_props(hz);
}

static void test_zero(void **state)
{
	struct timebase tb;

	/* An uncalibrated TSC must not divide by zero later. */
	timebase_init(&tb, 0);
	assert_int_equal(tb.apic_div, 1);
	assert_int_equal(tb.apic_hz, 0);
}

/* --- host timer arithmetic (timer/host.c) ---------------------------- */

/* Reference: the exact quotient by the host compiler's 128-bit division
 * (which the freestanding hypervisor cannot link). */
static uint64_t ref_mul_div(uint64_t a, uint64_t mul, uint64_t div)
{
	unsigned __int128 q;

	if (!div)
		return UINT64_MAX;
	q = (unsigned __int128)a * mul / div;
	return q > UINT64_MAX ? UINT64_MAX : (uint64_t)q;
}

/* xorshift64: reproducible operands without libc's rand(). */
static uint64_t next_rand(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* What timer/host.c computed before, delta * hz / tsc_hz in 64 bits:
 * the HPET armed 60 s ahead on a 5 GHz TSC (3e11 cycles x 1e8 Hz = 3e19,
 * past 2^64) came out at 23.1 s instead of 60 s. */
static void test_mul_div_known(void **state)
{
	assert_int_equal(timebase_mul_div(60 * 5 * GHZ, 100 * MHZ, 5 * GHZ), 6000000000ull);
	assert_int_equal(timebase_mul_div(3600 * 3 * GHZ, 3 * GHZ, 3 * GHZ), 3600 * 3 * GHZ);
	assert_int_equal(timebase_mul_div(UINT64_MAX, 1, 1), UINT64_MAX);
	assert_int_equal(timebase_mul_div(UINT64_MAX, 50 * MHZ, 100 * MHZ), UINT64_MAX / 2);
	assert_int_equal(timebase_mul_div(7, 3, 2), 10);                /* rounds down */
	assert_int_equal(timebase_mul_div(0, UINT64_MAX, 1), 0);
	/* Saturates instead of wrapping when the quotient passes 64 bits. */
	assert_int_equal(timebase_mul_div(UINT64_MAX, 2, 1), UINT64_MAX);
	assert_int_equal(timebase_mul_div(1ull << 63, 1ull << 32, 1ull << 31), UINT64_MAX);
	assert_int_equal(timebase_mul_div(5, 5, 0), UINT64_MAX);        /* no #DE */
}

static void test_mul_div_random(void **state)
{
	uint64_t x = 0x9e3779b97f4a7c15ull;

	for (unsigned i = 0; i < 200000; i++) {
		/* Operands of every size: shift each by a random amount. */
		uint64_t a = next_rand(&x) >> (next_rand(&x) & 63);
		uint64_t m = next_rand(&x) >> (next_rand(&x) & 63);
		uint64_t d = next_rand(&x) >> (next_rand(&x) & 63);

		assert_int_equal(timebase_mul_div(a, m, d), ref_mul_div(a, m, d));
	}
}

static void test_tsc_until(void **state)
{
	assert_int_equal(timebase_tsc_until(1000, 400), 600);
	assert_int_equal(timebase_tsc_until(400, 400), 0);
	assert_int_equal(timebase_tsc_until(399, 400), 0);
	/* The guest's "never" (IA32_TSC_DEADLINE = ~0) is far ahead, not
	 * past, as a signed difference would take it. */
	assert_int_equal(timebase_tsc_until(UINT64_MAX, 5), UINT64_MAX - 5);
	assert_int_equal(timebase_tsc_until((1ull << 63) + 100, 50), (1ull << 63) + 50);
}

static void test_reached(void **state)
{
	assert_true(timebase_reached(100, 100));
	assert_true(timebase_reached(101, 100));
	assert_false(timebase_reached(99, 100));
	/* Across the 64-bit wrap, where now >= t gets both wrong. */
	assert_true(timebase_reached(5, UINT64_MAX - 5));
	assert_false(timebase_reached(UINT64_MAX - 5, 5));
}

static void test_counter_reached_32(void **state)
{
	assert_true(timebase_counter_reached(0x1000, 0x1000, 32));
	assert_true(timebase_counter_reached(0x1001, 0x1000, 32));
	assert_false(timebase_counter_reached(0x0fff, 0x1000, 32));
	/* Armed just before the wrap for just after it: the old
	 * "counter >= when" said "passed" at once (0xffffff00 >= 0x100). */
	assert_false(timebase_counter_reached(0xffffff00u, 0x100, 32));
	assert_false(timebase_counter_reached(0xffffffffu, 0x100, 32));
	assert_true(timebase_counter_reached(0x100, 0x100, 32));
	assert_true(timebase_counter_reached(0x180, 0x100, 32));
	/* ... and a match just before the wrap, read just after it, has
	 * passed (the old test said "not yet": 0x10 < 0xfffffff0). */
	assert_true(timebase_counter_reached(0x10, 0xfffffff0u, 32));
	/* Up to half a wrap ahead is ahead; more than that is behind. */
	assert_false(timebase_counter_reached(0, 0x7fffffff, 32));
	assert_false(timebase_counter_reached(0, 0x80000000u, 32));
	assert_true(timebase_counter_reached(0, 0x80000001u, 32));
	/* A 32-bit comparator sees the low half of a 64-bit counter. */
	assert_false(timebase_counter_reached(0x5fffffff0ull, 0x10, 32));
	assert_true(timebase_counter_reached(0x600000010ull, 0x10, 32));
}

static void test_counter_reached_64(void **state)
{
	assert_true(timebase_counter_reached(1ull << 40, 1ull << 40, 64));
	assert_false(timebase_counter_reached((1ull << 40) - 1, 1ull << 40, 64));
	assert_true(timebase_counter_reached(3, UINT64_MAX - 3, 64));
	assert_false(timebase_counter_reached(UINT64_MAX - 3, 3, 64));
}

static void test_counter_deadline(void **state)
{
	bool clamped;

	/* Wraps into the comparator's width. */
	assert_int_equal(timebase_counter_deadline(0xffffff00u, 0x200, 32, &clamped), 0x100);
	assert_false(clamped);
	assert_false(timebase_counter_reached(0xffffff00u, 0x100, 32));
	/* A 64-bit counter read for a 32-bit comparator: only the low bits. */
	assert_int_equal(timebase_counter_deadline(0x1ffffff00ull, 0x200, 32, &clamped), 0x100);
	/* Beyond half a wrap (21 s at 100 MHz) it is clamped there. */
	assert_int_equal(timebase_counter_deadline(0, 0x7fffffff, 32, &clamped), 0x7fffffff);
	assert_false(clamped);
	assert_int_equal(timebase_counter_deadline(0, 0x80000000u, 32, &clamped), 0x7fffffff);
	assert_true(clamped);
	assert_int_equal(timebase_counter_deadline(10, UINT64_MAX, 32, &clamped),
			 10 + 0x7fffffffull);
	assert_true(clamped);
	/* 64-bit: only absurd distances are clamped. */
	assert_int_equal(timebase_counter_deadline(UINT64_MAX - 1, 3, 64, &clamped), 1);
	assert_false(clamped);
	assert_int_equal(timebase_counter_deadline(0, UINT64_MAX, 64, &clamped), INT64_MAX);
	assert_true(clamped);
}

/* Whatever now and ticks: the deadline is never reported as reached
 * before `ticks` (clamped: half a wrap) have gone by, and always after. */
static void test_counter_deadline_random(void **state)
{
	static const unsigned widths[] = { 32, 64 };
	uint64_t x = 0x2545f4914f6cdd1dull;

	for (unsigned w = 0; w < ARRAY_SIZE(widths); w++) {
		unsigned bits = widths[w];
		uint64_t mask = timebase_counter_mask(bits);

		for (unsigned i = 0; i < 100000; i++) {
			uint64_t now = next_rand(&x) & mask;
			uint64_t ticks = next_rand(&x) >> (next_rand(&x) & 63);
			bool clamped;
			uint64_t when = timebase_counter_deadline(now, ticks, bits, &clamped);
			uint64_t go = clamped ? mask >> 1 : ticks;

			assert_true(go > 0 || timebase_counter_reached(now, when, bits));
			if (go)
				assert_false(timebase_counter_reached((now + go - 1) & mask, when, bits));
			assert_true(timebase_counter_reached((now + go) & mask, when, bits));
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_known_values),
		cmocka_unit_test(test_exact_multiples),
		cmocka_unit_test(test_range),
		cmocka_unit_test(test_zero),
		cmocka_unit_test(test_mul_div_known),
		cmocka_unit_test(test_mul_div_random),
		cmocka_unit_test(test_tsc_until),
		cmocka_unit_test(test_reached),
		cmocka_unit_test(test_counter_reached_32),
		cmocka_unit_test(test_counter_reached_64),
		cmocka_unit_test(test_counter_deadline),
		cmocka_unit_test(test_counter_deadline_random),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
