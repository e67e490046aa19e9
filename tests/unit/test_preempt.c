// SPDX-License-Identifier: BSD-2-Clause
/*
 * timer/preempt.h: the VMX-preemption timer value for an absolute host
 * TSC deadline (SDM Vol. 3C "VMX-Preemption Timer": one tick every 2^rate
 * TSC cycles, 32-bit field). 0 when due; rounded up to whole ticks so the
 * exit never comes before the deadline; saturated at 0xffffffff.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "timer/preempt.h"

#define RATES 32u

/* ceil(left / 2^rate), saturated, computed in 128 bits as the reference. */
static uint64_t ref_value(uint64_t left, unsigned rate)
{
	unsigned __int128 tick = (unsigned __int128)1 << rate;
	unsigned __int128 v = ((unsigned __int128)left + tick - 1) / tick;

	return v > PREEMPT_VALUE_MAX ? PREEMPT_VALUE_MAX : (uint64_t)v;
}

/* The value never lets the timer expire before the deadline and is the
 * smallest that does, unless even 0xffffffff ticks fall short (saturated:
 * it expires early and is re-armed from the deadline at the next entry). */
static void check_bounds(uint64_t left, unsigned rate, uint64_t v)
{
	if ((unsigned __int128)PREEMPT_VALUE_MAX << rate < left) {
		assert_int_equal(v, PREEMPT_VALUE_MAX);
		return;
	}
	assert_true(v >= 1);
	assert_true((unsigned __int128)v << rate >= left);
	assert_true((unsigned __int128)(v - 1) << rate < left);
}

static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void test_due_or_past(void **state)
{
	for (unsigned rate = 0; rate < RATES; rate++) {
		assert_int_equal(preempt_value(1000, 1000, rate), 0);
		assert_int_equal(preempt_value(999, 1000, rate), 0);
		assert_int_equal(preempt_value(0, 1000, rate), 0);
		assert_int_equal(preempt_value(0, UINT64_MAX, rate), 0);
		assert_int_equal(preempt_value(UINT64_MAX, UINT64_MAX, rate), 0);
		assert_int_equal(preempt_value(0, 0, rate), 0);
	}
}

static void test_rate0_exact(void **state)
{
	const uint64_t now = 123456789;
	static const uint64_t left[] = { 1, 2, 3, 1000, 0x7fffffff, 0x80000000, 0xfffffffe,
					 0xffffffff };

	for (size_t i = 0; i < ARRAY_SIZE(left); i++)
		assert_int_equal(preempt_value(now + left[i], now, 0), left[i]);
	assert_int_equal(preempt_value(now + 0x100000000ull, now, 0), PREEMPT_VALUE_MAX);
}

static void test_round_up(void **state)
{
	const uint64_t now = 0x123456789abcull;

	for (unsigned rate = 1; rate < RATES; rate++) {
		uint64_t tick = 1ull << rate;

		/* Less than one tick is still one tick, never 0 (0 = due). */
		assert_int_equal(preempt_value(now + 1, now, rate), 1);
		assert_int_equal(preempt_value(now + tick - 1, now, rate), 1);
		assert_int_equal(preempt_value(now + tick, now, rate), 1);
		assert_int_equal(preempt_value(now + tick + 1, now, rate), 2);
		assert_int_equal(preempt_value(now + 5 * tick, now, rate), 5);
		assert_int_equal(preempt_value(now + 5 * tick - 1, now, rate), 5);
		assert_int_equal(preempt_value(now + 5 * tick + 1, now, rate), 6);
	}
	/* Rate 5 (a common IA32_VMX_MISC value): 100 cycles = 3.125 ticks. */
	assert_int_equal(preempt_value(now + 100, now, 5), 4);
	assert_int_equal(preempt_value(now + 96, now, 5), 3);
}

static void test_never_early_random(void **state)
{
	uint64_t s = 0x9e3779b97f4a7c15ull;

	for (unsigned i = 0; i < 200000; i++) {
		unsigned rate = (unsigned)(rng_next(&s) % RATES);
		/* Spread the distance over every magnitude up to 2^64. */
		uint64_t left = rng_next(&s) >> (rng_next(&s) % 64);
		uint64_t now = rng_next(&s);
		uint64_t v;

		if (left)                       /* now + left stays below 2^64 */
			now %= UINT64_MAX - left + 1;
		v = preempt_value(now + left, now, rate);
		if (!left) {
			assert_int_equal(v, 0);
			continue;
		}
		assert_int_equal(v, ref_value(left, rate));
		check_bounds(left, rate, v);
	}
}

static void test_saturation_every_rate(void **state)
{
	const uint64_t now = 42;

	for (unsigned rate = 0; rate < RATES; rate++) {
		uint64_t exact = PREEMPT_VALUE_MAX << rate;     /* largest exact value */

		assert_int_equal(preempt_value(now + exact, now, rate), PREEMPT_VALUE_MAX);
		assert_int_equal(preempt_value(now + exact - 1, now, rate),
				 rate ? PREEMPT_VALUE_MAX : PREEMPT_VALUE_MAX - 1);
		assert_int_equal(preempt_value(now + exact + 1, now, rate), PREEMPT_VALUE_MAX);
		if (rate < 31)
			assert_int_equal(preempt_value(now + (exact << 1), now, rate),
					 PREEMPT_VALUE_MAX);
		assert_int_equal(preempt_value(UINT64_MAX, now, rate), PREEMPT_VALUE_MAX);
		assert_int_equal(preempt_value(UINT64_MAX, 0, rate), PREEMPT_VALUE_MAX);
	}
}

static void test_no_overflow_near_2_64(void **state)
{
	static const uint64_t left[] = { UINT64_MAX, UINT64_MAX - 1, 1ull << 63,
					 (1ull << 63) + 1, UINT64_MAX - 0xffffffffull };

	for (unsigned rate = 0; rate < RATES; rate++) {
		for (size_t i = 0; i < ARRAY_SIZE(left); i++) {
			uint64_t now = UINT64_MAX - left[i];    /* deadline = UINT64_MAX */

			assert_int_equal(preempt_value(now + left[i], now, rate), PREEMPT_VALUE_MAX);
			assert_int_equal(preempt_value(left[i], 0, rate), PREEMPT_VALUE_MAX);
		}
		/* Wrapping TSC values are not due: deadline is below now. */
		assert_int_equal(preempt_value(5, UINT64_MAX - 5, rate), 0);
	}
	/* A deadline 2^64 - 1 cycles away at the largest rates is still more
	 * than 2^32 ticks: saturated, not wrapped to a small value. */
	assert_int_equal(preempt_value(UINT64_MAX, 0, 31), PREEMPT_VALUE_MAX);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_due_or_past),
		cmocka_unit_test(test_rate0_exact),
		cmocka_unit_test(test_round_up),
		cmocka_unit_test(test_never_early_random),
		cmocka_unit_test(test_saturation_every_rate),
		cmocka_unit_test(test_no_overflow_near_2_64),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
