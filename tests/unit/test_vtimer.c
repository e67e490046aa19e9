// SPDX-License-Identifier: BSD-2-Clause
/*
 * timer/vtimer.c on its own: TDCR decoding (SDM "APIC Timer", Figure
 * "Divide Configuration Register"), one-shot/periodic/TSC-deadline
 * targets in guest TSC units, TMCCT derived from target - now (rounded
 * up, 0 when stopped or expired), drift-free periodic re-arm without
 * catch-up bursts and the minimum period (DESIGN.md "Timer rules"),
 * targets across the 2^64 wrap of the guest TSC, saturating count -> TSC
 * conversion, and LVTT mode switches between one-shot and periodic.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "timer/vtimer.h"

static void test_tdcr_divide(void **state)
{
	/* Bits 3,1,0: 000b=2 001b=4 010b=8 011b=16 100b=32 101b=64 110b=128 111b=1 */
	static const uint32_t div_of[8] = { 2, 4, 8, 16, 32, 64, 128, 1 };

	for (uint32_t tdcr = 0; tdcr < 16; tdcr++) {
		uint32_t enc = (tdcr & 3) | ((tdcr & 8) >> 1);

		/* bit 2 is reserved and ignored, as are bits 31:4 */
		assert_int_equal(vtimer_tdcr_divide(tdcr), div_of[enc]);
		assert_int_equal(vtimer_tdcr_divide(tdcr | 0xfffffff0u), div_of[enc]);
	}
	assert_int_equal(vtimer_tdcr_divide(0x0), 2);
	assert_int_equal(vtimer_tdcr_divide(0xb), 1);
	assert_int_equal(vtimer_tdcr_divide(0xa), 128);
	assert_int_equal(vtimer_tdcr_divide(0x3), 16);
}

static void test_every_divide_oneshot(void **state)
{
	for (uint32_t tdcr = 0; tdcr < 16; tdcr++) {
		struct vtimer t = { 0 };
		uint32_t tpt = vtimer_tdcr_divide(tdcr) * 3;    /* clock divisor 3 */
		uint64_t now = 12345;

		vtimer_start_count(&t, VTIMER_ONESHOT, now, 1000, tpt);
		assert_true(t.armed);
		assert_int_equal(t.target, now + 1000ull * tpt);
		assert_int_equal(vtimer_current_count(&t, now), 1000);
		assert_int_equal(vtimer_current_count(&t, now + tpt), 999);
		assert_false(vtimer_due(&t, t.target - 1));
		assert_true(vtimer_due(&t, t.target));
	}
}

static void test_no_overflow(void **state)
{
	struct vtimer t = { 0 };
	uint32_t tpt = 128 * 7;
	uint64_t now = 1ull << 40;
	uint64_t cycles = 0xffffffffull * tpt;          /* > 2^32: needs 64 bits */

	vtimer_start_count(&t, VTIMER_PERIODIC, now, 0xffffffffu, tpt);
	assert_int_equal(t.target, now + cycles);
	assert_int_equal(t.period, cycles);
	assert_int_equal(t.count_tsc, cycles);
	assert_int_equal(vtimer_current_count(&t, now), 0xffffffffu);
	assert_int_equal(vtimer_current_count(&t, now + tpt), 0xfffffffeu);
	assert_int_equal(vtimer_current_count(&t, t.target - 1), 1);
	vtimer_expire(&t, t.target);
	assert_int_equal(t.target, now + 2 * cycles);
}

static void test_tmcct_rounding(void **state)
{
	struct vtimer t = { 0 };
	uint64_t now = 1000;

	vtimer_start_count(&t, VTIMER_ONESHOT, now, 10, 4);
	/* The count is 1 until the last tick has fully elapsed (ceil). */
	assert_int_equal(vtimer_current_count(&t, now), 10);
	assert_int_equal(vtimer_current_count(&t, now + 1), 10);
	assert_int_equal(vtimer_current_count(&t, now + 3), 10);
	assert_int_equal(vtimer_current_count(&t, now + 4), 9);
	assert_int_equal(vtimer_current_count(&t, now + 5), 9);
	assert_int_equal(vtimer_current_count(&t, now + 36), 1);
	assert_int_equal(vtimer_current_count(&t, now + 39), 1);
	assert_int_equal(vtimer_current_count(&t, now + 40), 0);
	assert_int_equal(vtimer_current_count(&t, now + 1000000), 0);
	/* Never above the programmed count, even "before" the start. */
	assert_int_equal(vtimer_current_count(&t, 0), 10);
	/* Expired and consumed: 0. */
	vtimer_expire(&t, now + 40);
	assert_false(t.armed);
	assert_int_equal(vtimer_current_count(&t, now + 40), 0);
}

static void test_zero_count_and_stop(void **state)
{
	struct vtimer t = { 0 };

	vtimer_start_count(&t, VTIMER_ONESHOT, 100, 0, 2);
	assert_false(t.armed);
	assert_false(vtimer_due(&t, ~0ull));
	assert_int_equal(vtimer_current_count(&t, 100), 0);
	vtimer_start_count(&t, VTIMER_PERIODIC, 100, 50, 2);
	assert_true(t.armed);
	vtimer_stop(&t);
	assert_false(t.armed);
	assert_false(vtimer_due(&t, ~0ull));
	assert_int_equal(vtimer_current_count(&t, 120), 0);
	vtimer_start_count(&t, VTIMER_PERIODIC, 100, 50, 2);
	vtimer_start_count(&t, VTIMER_PERIODIC, 110, 0, 2);  /* TMICT = 0 stops */
	assert_false(t.armed);
}

static void test_oneshot_fires_once(void **state)
{
	struct vtimer t = { 0 };

	vtimer_start_count(&t, VTIMER_ONESHOT, 0, 5, 1);
	assert_false(vtimer_due(&t, 4));
	assert_true(vtimer_due(&t, 5));
	vtimer_expire(&t, 7);
	assert_false(t.armed);
	assert_false(vtimer_due(&t, 100));
}

static void test_periodic_reload(void **state)
{
	struct vtimer t = { 0 };
	uint64_t start = 500;

	vtimer_start_count(&t, VTIMER_PERIODIC, start, 100, 3);
	assert_int_equal(t.period, 300);
	/* Expired but not yet re-armed: the count has reloaded from TMICT. */
	assert_int_equal(vtimer_current_count(&t, start + 300), 100);
	assert_int_equal(vtimer_current_count(&t, start + 303), 99);
	assert_int_equal(vtimer_current_count(&t, start + 599), 1);
	assert_int_equal(vtimer_current_count(&t, start + 600), 100);
	vtimer_expire(&t, start + 303);
	assert_int_equal(t.target, start + 600);
	assert_int_equal(vtimer_current_count(&t, start + 303), 99);
}

static void test_periodic_no_drift(void **state)
{
	struct vtimer t = { 0 };
	const uint64_t start = 987654321, n = 1000000;
	uint64_t period;

	vtimer_start_count(&t, VTIMER_PERIODIC, start, 12345, 7);
	period = 12345ull * 7;
	assert_int_equal(t.target, start + period);
	for (uint64_t i = 1; i <= n; i++) {
		/* handled late by a varying amount, never a whole period */
		uint64_t now = t.target + (i * 7919) % period;

		assert_true(vtimer_due(&t, now));
		vtimer_expire(&t, now);
		assert_true(t.armed);
		if (t.target != start + (i + 1) * period)
			fail_msg("period %llu: target %llu", (unsigned long long)i,
				 (unsigned long long)t.target);
	}
	assert_int_equal(t.target, start + (n + 1) * period);
}

static void test_periodic_past_target(void **state)
{
	struct vtimer t = { 0 };
	uint64_t start = 0, now;
	unsigned fired = 0;

	vtimer_start_count(&t, VTIMER_PERIODIC, start, 1000, 1);
	/* The host was busy for ten periods: no burst of stale ticks. */
	now = start + 10 * 1000 + 17;
	while (vtimer_due(&t, now) && fired < 100) {
		vtimer_expire(&t, now);
		fired++;
		assert_true(t.target >= now);
	}
	assert_true(fired <= 2);
	/* The phase restarts at now. */
	assert_int_equal(t.target, now + 1000);
	/* A target exactly one period late is not past: keeps the phase. */
	vtimer_start_count(&t, VTIMER_PERIODIC, 0, 1000, 1);
	vtimer_expire(&t, 1500);
	assert_int_equal(t.target, 2000);
}

static void test_past_target_moves_to_now(void **state)
{
	struct vtimer t = { 0 };

	vtimer_start_count(&t, VTIMER_PERIODIC, 0, 100, 1);
	vtimer_expire(&t, 100 + 5 * 100 + 7);
	assert_true(t.armed);
	assert_int_equal(t.target, 607);
}

static void test_min_period(void **state)
{
	struct vtimer t = { .min_period = 20000 };

	vtimer_start_count(&t, VTIMER_PERIODIC, 1000, 10, 3);
	assert_true(t.clamped);
	assert_int_equal(t.period, 20000);
	assert_int_equal(t.target, 21000);
	/* TMCCT still counts from the programmed value. */
	assert_int_equal(vtimer_current_count(&t, 1000), 10);
	for (uint64_t now = 1000; now < 21000; now += 97)
		assert_true(vtimer_current_count(&t, now) <= 10);
	assert_int_equal(vtimer_current_count(&t, 20999), 1);
	vtimer_expire(&t, 21000);
	assert_int_equal(t.target, 41000);
	/* At or above the minimum: untouched. */
	vtimer_start_count(&t, VTIMER_PERIODIC, 0, 20000, 1);
	assert_false(t.clamped);
	assert_int_equal(t.period, 20000);
	/* One-shot is never clamped. */
	vtimer_start_count(&t, VTIMER_ONESHOT, 0, 10, 3);
	assert_false(t.clamped);
	assert_int_equal(t.target, 30);
	/* min_period 0: no minimum */
	t.min_period = 0;
	vtimer_start_count(&t, VTIMER_PERIODIC, 0, 1, 1);
	assert_false(t.clamped);
	assert_int_equal(t.period, 1);
}

static void test_deadline(void **state)
{
	struct vtimer t = { 0 };

	vtimer_start_deadline(&t, 5000, 100);
	assert_true(t.armed);
	assert_int_equal(t.target, 5000);
	assert_false(vtimer_due(&t, 4999));
	assert_true(vtimer_due(&t, 5000));
	assert_int_equal(vtimer_current_count(&t, 100), 0);   /* TMCCT reads 0 */
	assert_true(vtimer_expire(&t, 5000));
	assert_false(t.armed);
	/* Writing 0 disarms. */
	vtimer_start_deadline(&t, 7000, 100);
	vtimer_start_deadline(&t, 0, 100);
	assert_false(t.armed);
	assert_false(vtimer_due(&t, ~0ull));
	/* A deadline in the past is due at once, and fires exactly once. */
	vtimer_start_deadline(&t, 10, 1000);
	assert_true(vtimer_due(&t, 1000));
	assert_true(vtimer_expire(&t, 1000));
	assert_false(vtimer_due(&t, 1000));
	assert_false(vtimer_due(&t, ~0ull));
}

/*
 * Targets straddling 2^64 (a guest may write IA32_TSC near it). Compared
 * by signed difference, as Xen's vpt.c ((int64_t)(now - last) >= 0) and
 * KVM's lapic.c (ktime / signed deltas) do; `now >= target` calls every
 * target past the wrap due at once, and a periodic timer then fires on
 * every check. Fails with `now >= target` in vtimer_due/_expire.
 */
static void test_wrap_oneshot(void **state)
{
	struct vtimer t = { 0 };
	uint64_t now = ~0ull - 9;               /* 10 cycles before the wrap */

	vtimer_start_count(&t, VTIMER_ONESHOT, now, 100, 1);
	assert_int_equal(t.target, 90);         /* wrapped */
	assert_false(vtimer_due(&t, now));
	assert_false(vtimer_due(&t, ~0ull));
	assert_false(vtimer_due(&t, 89));
	assert_true(vtimer_due(&t, 90));
	assert_int_equal(vtimer_current_count(&t, now), 100);
	assert_int_equal(vtimer_current_count(&t, ~0ull), 91);
	assert_int_equal(vtimer_current_count(&t, 0), 90);
	assert_int_equal(vtimer_current_count(&t, 90), 0);
}

static void test_wrap_periodic(void **state)
{
	const uint64_t period = 1000, start = ~0ull - 2500;     /* wraps in period 3 */
	struct vtimer t = { 0 };
	unsigned fired = 0;

	vtimer_start_count(&t, VTIMER_PERIODIC, start, 1000, 1);
	/* Check every 7 cycles for 6 periods: exactly 6 expiries, each at
	 * its own target, none early and no burst after the wrap. */
	for (uint64_t i = 1; i <= 6 * period; i += 7) {
		uint64_t now = start + i, want = start + (fired + 1) * period;

		if (!vtimer_due(&t, now))
			continue;
		assert_int_equal(t.target, want);
		assert_true(now - want < 7);
		assert_true(vtimer_expire(&t, now));
		fired++;
		assert_int_equal(t.target, want + period);
		assert_false(vtimer_due(&t, now));
	}
	assert_int_equal(fired, 6);
	/* TMCCT across the wrap: 1000 - (cycles since the last reload) */
	assert_int_equal(vtimer_current_count(&t, start + 6 * period + 1), 999);
}

/* A re-arm that lands past the wrap must not be taken for "already past"
 * and moved to now. */
static void test_wrap_rearm_not_moved(void **state)
{
	struct vtimer t = { 0 };
	uint64_t start = ~0ull - 1500;

	vtimer_start_count(&t, VTIMER_PERIODIC, start, 1000, 1);
	assert_true(vtimer_expire(&t, start + 1000));
	assert_int_equal(t.target, start + 2000);       /* 499, after the wrap */
	assert_false(vtimer_due(&t, start + 1001));
}

/* SDM "TSC-Deadline Mode": fires when the TSC is >= the deadline, an
 * absolute comparison (Bochs apic.cc and KVM start_sw_tscdeadline compare
 * the deadline with the TSC the same way). */
static void test_deadline_absolute(void **state)
{
	struct vtimer t = { 0 };
	uint64_t now = ~0ull - 100;

	/* below a TSC near 2^64: already reached, due at once */
	vtimer_start_deadline(&t, 50, now);
	assert_true(vtimer_due(&t, now));
	assert_true(vtimer_expire(&t, now));
	assert_false(t.armed);
	/* just ahead of it: exactly then */
	vtimer_start_deadline(&t, ~0ull - 50, now);
	assert_false(vtimer_due(&t, ~0ull - 51));
	assert_true(vtimer_due(&t, ~0ull - 50));
	/* ~0 from a small TSC: far beyond 2^63, never "in the past"; taken
	 * in steps of the horizon, each only re-arms */
	vtimer_start_deadline(&t, ~0ull, 1000);
	assert_false(vtimer_due(&t, 1000));
	assert_false(vtimer_due(&t, 1000 + VTIMER_HORIZON_TSC - 1));
	assert_true(vtimer_due(&t, 1000 + VTIMER_HORIZON_TSC));
	assert_false(vtimer_expire(&t, 1000 + VTIMER_HORIZON_TSC));
	assert_true(t.armed);
	assert_false(vtimer_due(&t, 1000 + VTIMER_HORIZON_TSC));
	now = 1000 + 3 * VTIMER_HORIZON_TSC;
	assert_true(vtimer_due(&t, now));
	assert_false(vtimer_expire(&t, now));
	assert_int_equal(t.target, ~0ull);
	assert_true(vtimer_due(&t, ~0ull));
	assert_true(vtimer_expire(&t, ~0ull));
	assert_false(t.armed);
	/* the TSC jumps past a deadline: due at once; back before it: not */
	vtimer_start_deadline(&t, 5000, 100);
	vtimer_tsc_moved(&t, 10000, 10100);
	assert_true(vtimer_due(&t, 10100));
	vtimer_tsc_moved(&t, -10000, 100);
	assert_false(vtimer_due(&t, 100));
	assert_true(vtimer_due(&t, 5000));
	/* ... and a TSC written near 2^64 is past any small deadline */
	vtimer_tsc_moved(&t, (int64_t)(~0ull - 200), ~0ull - 100);
	assert_true(vtimer_due(&t, ~0ull - 100));
}

/* A count's target moves with the TSC, across the wrap too. */
static void test_wrap_tsc_moved(void **state)
{
	struct vtimer t = { 0 };

	vtimer_start_count(&t, VTIMER_ONESHOT, 1000, 500, 2);
	vtimer_tsc_moved(&t, -2000, ~0ull - 999);       /* now 1000 -> 2^64 - 1000 */
	assert_int_equal(t.target, 0);                  /* 2000 - 2000, wrapped */
	assert_false(vtimer_due(&t, ~0ull - 999));
	assert_int_equal(vtimer_current_count(&t, ~0ull - 999), 500);
	assert_true(vtimer_due(&t, 0));
}

/* Count -> TSC: TMICT 0xffffffff x divide 128 x a clock divisor of 2^26
 * is 2^65 cycles; saturated at the horizon instead of wrapping to a
 * near (or past) target. */
static void test_ticks_to_tsc_saturates(void **state)
{
	struct vtimer t = { 0 };
	uint64_t tpt = 128ull << 26, now = 5000;

	assert_int_equal(vtimer_ticks_to_tsc(1000, tpt), 1000 * tpt);
	assert_int_equal(vtimer_ticks_to_tsc(0xffffffffu, tpt), VTIMER_HORIZON_TSC);
	assert_int_equal(vtimer_ticks_to_tsc(~0ull, ~0ull), VTIMER_HORIZON_TSC);
	assert_int_equal(vtimer_ticks_to_tsc(0, ~0ull), 0);
	vtimer_start_count(&t, VTIMER_PERIODIC, now, 0xffffffffu, tpt);
	assert_int_equal(t.target, now + VTIMER_HORIZON_TSC);
	assert_int_equal(t.period, VTIMER_HORIZON_TSC);
	assert_false(vtimer_due(&t, now + VTIMER_HORIZON_TSC - 1));
	assert_true(vtimer_current_count(&t, now) > 0);
	/* a tick of more than 32 bits is kept whole */
	vtimer_start_count(&t, VTIMER_ONESHOT, now, 1000, tpt);
	assert_int_equal(t.target, now + 1000 * tpt);
	assert_int_equal(vtimer_current_count(&t, now), 1000);
	assert_int_equal(vtimer_current_count(&t, now + tpt), 999);
}

/* LVTT one-shot <-> periodic (DESIGN.md "Timer rules"): same target, the
 * new mode decides what happens at 0. */
static void test_switch_count_mode(void **state)
{
	struct vtimer t = { .min_period = 50 };

	vtimer_start_count(&t, VTIMER_ONESHOT, 0, 1000, 2);
	vtimer_switch_count_mode(&t, VTIMER_PERIODIC, 1000);
	assert_int_equal(t.target, 2000);
	assert_int_equal(t.period, 2000);
	assert_int_equal(vtimer_current_count(&t, 500), 750);   /* not reloaded */
	assert_true(vtimer_expire(&t, 2000));
	assert_int_equal(t.target, 4000);                       /* reloaded */
	vtimer_switch_count_mode(&t, VTIMER_ONESHOT, 1000);
	assert_int_equal(t.target, 4000);
	assert_true(vtimer_expire(&t, 4000));
	assert_false(t.armed);                                  /* fired once more */
	/* stopped stays stopped */
	vtimer_switch_count_mode(&t, VTIMER_PERIODIC, 1000);
	assert_false(t.armed);
	/* the reload is clamped to min_period, and says so */
	vtimer_start_count(&t, VTIMER_ONESHOT, 0, 10, 1);
	vtimer_switch_count_mode(&t, VTIMER_PERIODIC, 10);
	assert_true(t.clamped);
	assert_int_equal(t.target, 10);
	assert_int_equal(t.period, 50);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tdcr_divide),
		cmocka_unit_test(test_every_divide_oneshot),
		cmocka_unit_test(test_no_overflow),
		cmocka_unit_test(test_tmcct_rounding),
		cmocka_unit_test(test_zero_count_and_stop),
		cmocka_unit_test(test_oneshot_fires_once),
		cmocka_unit_test(test_periodic_reload),
		cmocka_unit_test(test_periodic_no_drift),
		cmocka_unit_test(test_periodic_past_target),
		cmocka_unit_test(test_past_target_moves_to_now),
		cmocka_unit_test(test_min_period),
		cmocka_unit_test(test_deadline),
		cmocka_unit_test(test_wrap_oneshot),
		cmocka_unit_test(test_wrap_periodic),
		cmocka_unit_test(test_wrap_rearm_not_moved),
		cmocka_unit_test(test_deadline_absolute),
		cmocka_unit_test(test_wrap_tsc_moved),
		cmocka_unit_test(test_ticks_to_tsc_saturates),
		cmocka_unit_test(test_switch_count_mode),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
