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

/* The TSC value at which a timer armed with `value` at `now` expires: the
 * value-th change of TSC bit `rate` after now (SDM "VMX-Preemption Timer":
 * "counts down by 1 every time bit X in the TSC changes"). Bochs computes
 * the same (cpu/apic.cc, set_vmx_preemption_timer). */
static unsigned __int128 fire_sdm(uint64_t now, uint64_t value, unsigned rate)
{
	return ((unsigned __int128)(now >> rate) + value) << rate;
}

/* KVM's nested emulation (arch/x86/kvm/vmx/nested.c,
 * vmx_start_preemption_timer, emulated rate 5): a host timer value << rate
 * cycles after the VM entry, not aligned to the TSC's bit X. */
static unsigned __int128 fire_kvm(uint64_t now, uint64_t value, unsigned rate)
{
	return (unsigned __int128)now + ((unsigned __int128)value << rate);
}

/* ceil(deadline / 2^rate) - floor(now / 2^rate), saturated, computed in
 * 128 bits as the reference. */
static uint64_t ref_value(uint64_t deadline, uint64_t now, unsigned rate)
{
	unsigned __int128 tick = (unsigned __int128)1 << rate;
	unsigned __int128 v = ((unsigned __int128)deadline + tick - 1) / tick - now / tick;

	return v > PREEMPT_VALUE_MAX ? PREEMPT_VALUE_MAX : (uint64_t)v;
}

/* The value never lets the timer expire before the deadline, on the
 * hardware (SDM model) or under nested KVM, and is the smallest that does
 * on the hardware: at most a tick late there, under two ticks late under
 * KVM. Unless even 0xffffffff ticks fall short (saturated: it expires
 * early and is re-armed from the deadline at the next entry). */
static void check_bounds(uint64_t deadline, uint64_t now, unsigned rate, uint64_t v)
{
	unsigned __int128 tick = (unsigned __int128)1 << rate;

	if (fire_sdm(now, PREEMPT_VALUE_MAX, rate) < deadline) {
		assert_int_equal(v, PREEMPT_VALUE_MAX);
		return;
	}
	assert_true(v >= 1);
	assert_true(fire_sdm(now, v, rate) >= deadline);
	assert_true(fire_sdm(now, v - 1, rate) < deadline);
	assert_true(fire_sdm(now, v, rate) - deadline < tick);
	assert_true(fire_kvm(now, v, rate) >= deadline);
	assert_true(fire_kvm(now, v, rate) - deadline < 2 * tick);
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

/* From a tick boundary the value is ceil(left / 2^rate). */
static void test_round_up(void **state)
{
	const uint64_t now = 0x1234ull << 32;   /* a boundary at every rate < 32 */

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
		assert_int_equal(v, ref_value(now + left, now, rate));
		check_bounds(now + left, now, rate, v);
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

/* The rates that matter: 0 (Bochs), 5 (common on real parts, and what
 * nested KVM emulates), 7. */
static const unsigned real_rates[] = { 0, 5, 7 };

struct preempt_case {
	unsigned rate;
	uint64_t now, deadline, value;
};

static void test_rates_0_5_7_values(void **state)
{
	static const struct preempt_case cases[] = {
		{ 0, 1000, 1001, 1 },
		{ 0, 1000, 1000 + 0xffffffffull, 0xffffffff },
		{ 0, 1000, 1000 + 0x100000000ull, PREEMPT_VALUE_MAX },  /* saturated */
		{ 5, 0, 100, 4 },               /* 3.125 ticks: bit 5 changes at 128 */
		{ 5, 31, 63, 2 },               /* bit 5 changes at 32 and 64: 1 is early */
		{ 5, 32, 64, 1 },
		{ 5, 63, 64, 1 },               /* expires at 64 exactly */
		{ 5, 63, 65, 2 },
		{ 5, 0, PREEMPT_VALUE_MAX << 5, PREEMPT_VALUE_MAX },
		{ 5, 1, (PREEMPT_VALUE_MAX << 5) + 1, PREEMPT_VALUE_MAX },  /* saturated */
		{ 7, 127, 128, 1 },
		{ 7, 127, 129, 2 },
		{ 7, 1, 129, 2 },               /* 128 cycles, but two bit-7 changes */
		{ 7, 128 * 1000 + 5, 128 * 1001 + 5, 2 },
		{ 7, 128 * 1000, 128 * 1001, 1 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct preempt_case *c = &cases[i];

		assert_int_equal(preempt_value(c->deadline, c->now, c->rate), c->value);
	}
}

/* Every phase of `now` within a tick, distances around tick multiples and
 * up to saturation: never early, on the hardware or under KVM. */
static void test_rates_0_5_7_never_early(void **state)
{
	for (size_t r = 0; r < ARRAY_SIZE(real_rates); r++) {
		unsigned rate = real_rates[r];
		uint64_t tick = 1ull << rate;
		const uint64_t left[] = { 1, 2, tick - 1 ? tick - 1 : 1, tick, tick + 1,
					  2 * tick - 1, 2 * tick, 2 * tick + 1, 1000, 5000,
					  1000000, 0x7fffffff, (PREEMPT_VALUE_MAX << rate) - tick,
					  (PREEMPT_VALUE_MAX << rate) - 1, PREEMPT_VALUE_MAX << rate,
					  (PREEMPT_VALUE_MAX << rate) + 1 };

		for (uint64_t phase = 0; phase < tick; phase++) {
			uint64_t now = (0xabcdefull << 20) + phase;

			for (size_t i = 0; i < ARRAY_SIZE(left); i++) {
				uint64_t v = preempt_value(now + left[i], now, rate);

				check_bounds(now + left[i], now, rate, v);
				if (rate == 0 && v != PREEMPT_VALUE_MAX)
					assert_true(fire_sdm(now, v, 0) == now + left[i] &&
						    fire_kvm(now, v, 0) == now + left[i]);
			}
		}
	}
}

/* A deadline beyond one saturated timer: each saturated arm runs its full
 * 0xffffffff ticks, the next entry re-arms from the absolute deadline, and
 * the last arm lands on it (never early, under a tick late). */
static void test_rates_0_5_7_saturated_rearm(void **state)
{
	const uint64_t exit_cost = 700;         /* cycles from expiry to the next entry */

	for (size_t r = 0; r < ARRAY_SIZE(real_rates); r++) {
		unsigned rate = real_rates[r];
		/* Three full timers and more than three exit costs beyond. */
		uint64_t now = 12345, deadline = now + 3 * (PREEMPT_VALUE_MAX << rate) + 5000;
		unsigned arms = 0;

		for (;;) {
			uint64_t v = preempt_value(deadline, now, rate);
			unsigned __int128 fire = fire_sdm(now, v, rate);

			assert_true(v >= 1);
			assert_true(++arms <= 4);
			if (fire >= deadline) {
				assert_true(fire - deadline < ((unsigned __int128)1 << rate));
				break;
			}
			assert_int_equal(v, PREEMPT_VALUE_MAX);
			now = (uint64_t)fire + exit_cost;
		}
		assert_int_equal(arms, 4);
	}
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
		cmocka_unit_test(test_rates_0_5_7_values),
		cmocka_unit_test(test_rates_0_5_7_never_early),
		cmocka_unit_test(test_rates_0_5_7_saturated_rearm),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
