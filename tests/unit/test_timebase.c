// SPDX-License-Identifier: BSD-2-Clause
/*
 * timer/timebase.c: the emulated APIC timer clock is the TSC divided by
 * the smallest integer that keeps it at or below 1 GHz (DESIGN.md "Timer
 * rules": an exact integer divisor of the TSC, never faster than it).
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
	uint64_t div;

	timebase_init(&tb, tsc_hz);
	div = tb.apic_div;
	assert_int_equal(tb.tsc_hz, tsc_hz);
	assert_true(div >= 1);
	/* apic_div = ceil(tsc_hz / 1 GHz), at least 1. */
	assert_int_equal(div, tsc_hz <= GHZ ? 1 : (tsc_hz + GHZ - 1) / GHZ);
	/* exact integer division, rounded down, and never above 1 GHz or the TSC */
	assert_int_equal(tb.apic_hz, tsc_hz / div);
	assert_true(tb.apic_hz * div <= tsc_hz);
	assert_true((tb.apic_hz + 1) * div > tsc_hz);
	assert_true(tb.apic_hz <= TIMEBASE_APIC_MAX_HZ);
	assert_true(tb.apic_hz <= tsc_hz);
	/* the smallest such divisor: one less would run faster than 1 GHz
	 * (exactly: tsc_hz / (div - 1) > 1 GHz) */
	if (div > 1)
		assert_true(tsc_hz > (div - 1) * TIMEBASE_APIC_MAX_HZ);
}

static void test_known_values(void **state)
{
	static const struct { uint64_t tsc_hz; uint32_t div; uint64_t apic_hz; } v[] = {
		{ 50 * MHZ, 1, 50 * MHZ },              /* slow TSC: APIC clock = TSC */
		{ 1 * MHZ, 1, 1 * MHZ },
		{ 999999999, 1, 999999999 },
		{ GHZ, 1, GHZ },
		{ GHZ + 1, 2, (GHZ + 1) / 2 },
		{ 2 * GHZ, 2, GHZ },
		{ 2500 * MHZ, 3, 833333333 },           /* rounds the divisor up */
		{ 3 * GHZ, 3, GHZ },
		{ 3 * GHZ + 1, 4, (3 * GHZ + 1) / 4 },
		{ 3700 * MHZ, 4, 925 * MHZ },
		{ 5 * GHZ, 5, GHZ },
	};

	for (unsigned i = 0; i < ARRAY_SIZE(v); i++) {
		struct timebase tb;

		timebase_init(&tb, v[i].tsc_hz);
		assert_int_equal(tb.apic_div, v[i].div);
		assert_int_equal(tb.apic_hz, v[i].apic_hz);
		check_props(v[i].tsc_hz);
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
	/* Calibrated TSCs are not round: sweep odd values 1 MHz .. 10 GHz. */
	for (uint64_t hz = MHZ; hz <= 10 * GHZ; hz += 7777777)
		check_props(hz);
	for (uint64_t n = 1; n <= 10; n++) {
		check_props(n * GHZ - 1);
		check_props(n * GHZ);
		check_props(n * GHZ + 1);
	}
}

static void test_zero(void **state)
{
	struct timebase tb;

	/* An uncalibrated TSC must not divide by zero later. */
	timebase_init(&tb, 0);
	assert_int_equal(tb.apic_div, 1);
	assert_int_equal(tb.apic_hz, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_known_values),
		cmocka_unit_test(test_exact_multiples),
		cmocka_unit_test(test_range),
		cmocka_unit_test(test_zero),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
