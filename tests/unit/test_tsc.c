// SPDX-License-Identifier: BSD-2-Clause
/*
 * drivers/tsc.c: TSC calibration against reference clocks that may lie
 * (issue 22.4). Linux's arch/x86/kernel/hpet.c uses the HPET only after
 * hpet_counting() saw its counter change within 200000 TSC cycles, and
 * its tsc.c falls back from the HPET to the PM timer and then to CPUID
 * 0x15/0x16 (native_calibrate_tsc); here each of those steps is taken on
 * a fake TSC and fake clocks, and every path must end within a bounded
 * number of TSC cycles (before: a stuck counter stalled calibration for
 * 10^11 cycles, tens of seconds).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "drivers/tsc.h"

#define MHZ 1000000ull
#define GHZ 1000000000ull
/* Cycles a TSC read costs, and so how far the fake TSC moves per read. */
#define READ_COST 200ull

static uint64_t fake_tsc, fake_tsc_hz;

static uint64_t tsc_read(void)
{
	return fake_tsc += READ_COST;
}

enum mode { GOOD, STUCK, STOPS, CRAWLS, RACES, WRAPS32 };

struct fake_clock {
	enum mode mode;
	uint64_t hz;                    /* the rate it claims */
	uint64_t reads;
	uint64_t stop_after;            /* STOPS: reads before it stands still */
	uint64_t frozen;
};

/* The counter a clock of rate hz shows at the fake TSC's present time. */
static uint64_t fake_read(const void *ctx)
{
	struct fake_clock *c = (struct fake_clock *)ctx;
	unsigned __int128 now = (unsigned __int128)fake_tsc * c->hz / fake_tsc_hz;

	fake_tsc += READ_COST;          /* a clock read is slow too */
	c->reads++;
	switch (c->mode) {
	case STUCK:
		return 0x1234;
	case STOPS:
		if (c->reads == c->stop_after)
			c->frozen = (uint64_t)now;
		return c->reads >= c->stop_after ? c->frozen : (uint64_t)now;
	case CRAWLS:
		return (uint64_t)(now / 1000);
	case RACES:
		return (uint64_t)(now * 10000);
	case WRAPS32:
		return (uint32_t)(now + 0xffff0000u);
	default:
		return (uint64_t)now;
	}
}

static uint64_t delta64(const void *ctx, uint64_t a, uint64_t b) { return b - a; }
static uint64_t delta32(const void *ctx, uint64_t a, uint64_t b) { return (uint32_t)(b - a); }

static struct tsc_ref ref(const char *name, struct fake_clock *c)
{
	return (struct tsc_ref){ name, c->hz, fake_read,
				 c->mode == WRAPS32 ? delta32 : delta64, c };
}

static void setup_tsc(uint64_t hz, struct tsc_info *ti)
{
	fake_tsc = 1000;
	fake_tsc_hz = hz;
	*ti = (struct tsc_info){ 0 };
}

/* The longest any path may take: the counting checks and every run of
 * every reference at their bounds, plus slack for the last reads. */
static uint64_t worst_cycles(unsigned nrefs)
{
	return nrefs * (TSC_COUNTING_CYCLES +
			TSC_CAL_RUNS * (TSC_RUN_MAX_CYCLES + 4 * READ_COST)) + 16 * READ_COST;
}

static void test_good_hpet(void **state)
{
	struct fake_clock h = { .mode = GOOD, .hz = 100 * MHZ };
	struct tsc_ref r[] = { ref("HPET", &h) };
	struct tsc_info ti;

	setup_tsc(2600 * MHZ, &ti);
	assert_true(tsc_calibrate_refs(&ti, r, 1, tsc_read));
	assert_string_equal(ti.measured_by, "HPET");
	assert_true(ti.trusted);
	assert_int_equal(ti.nrejected, 0);
	/* to the kHz, within the read cost's error */
	assert_true(tsc_ppm_diff(ti.hz, 2600 * MHZ) < 100);
	assert_int_equal(ti.hz % 1000, 0);
}

/* A 32-bit counter that wraps during a window is still measured right. */
static void test_wrapping_counter(void **state)
{
	struct fake_clock h = { .mode = WRAPS32, .hz = 14318180 };
	struct tsc_ref r[] = { ref("HPET", &h) };
	struct tsc_info ti;

	setup_tsc(3 * GHZ, &ti);
	assert_true(tsc_calibrate_refs(&ti, r, 1, tsc_read));
	assert_true(tsc_ppm_diff(ti.hz, 3 * GHZ) < 100);
}

/* Stuck HPET: seen not counting within TSC_COUNTING_CYCLES, the PM timer
 * measures instead (Linux: hpet_counting() fails, PM timer used). */
static void test_stuck_hpet_falls_back_to_pm(void **state)
{
	struct fake_clock h = { .mode = STUCK, .hz = 100 * MHZ }, pm = { .mode = GOOD, .hz = 3579545 };
	struct tsc_ref r[] = { ref("HPET", &h), ref("ACPI PM timer", &pm) };
	struct tsc_info ti;

	setup_tsc(2 * GHZ, &ti);
	assert_true(tsc_calibrate_refs(&ti, r, 2, tsc_read));
	assert_string_equal(ti.measured_by, "ACPI PM timer");
	assert_int_equal(ti.nrejected, 1);
	assert_string_equal(ti.rejected[0], "HPET");
	assert_string_equal(ti.rejected_why[0], "does not count");
	assert_true(tsc_ppm_diff(ti.hz, 2 * GHZ) < 500);
	/* the stuck HPET cost its counting check, not a stall */
	assert_true(ti.cycles < TSC_COUNTING_CYCLES + 4 * TSC_CAL_RUNS * 2 * GHZ / 20);
}

/* A clock that passes the counting check and stops mid-window. */
static void test_hpet_stops_during_calibration(void **state)
{
	struct fake_clock h = { .mode = STOPS, .hz = 100 * MHZ, .stop_after = 5000 }, pm = { .mode = GOOD, .hz = 3579545 };
	struct tsc_ref r[] = { ref("HPET", &h), ref("ACPI PM timer", &pm) };
	struct tsc_info ti;

	setup_tsc(3 * GHZ, &ti);
	assert_true(tsc_calibrate_refs(&ti, r, 2, tsc_read));
	assert_string_equal(ti.rejected[0], "HPET");
	assert_string_equal(ti.rejected_why[0], "stopped counting during calibration");
	assert_string_equal(ti.measured_by, "ACPI PM timer");
	assert_true(ti.cycles <= worst_cycles(2));
}

/* Both clocks dead: CPUID 0x15, marked untrusted, in bounded time. */
static void test_no_clock_cpuid15(void **state)
{
	struct fake_clock h = { .mode = STUCK, .hz = 100 * MHZ }, pm = { .mode = CRAWLS, .hz = 3579545 };
	struct tsc_ref r[] = { ref("HPET", &h), ref("ACPI PM timer", &pm) };
	struct tsc_info ti;

	setup_tsc(2 * GHZ, &ti);
	ti.cpuid15_hz = 2100 * MHZ;
	ti.cpuid16_hz = 2000 * MHZ;
	assert_true(tsc_calibrate_refs(&ti, r, 2, tsc_read));
	assert_int_equal(ti.hz, 2100 * MHZ);
	assert_false(ti.trusted);
	assert_int_equal(ti.nrejected, 2);
	assert_string_equal(ti.rejected_why[1], "counts too slowly for its stated rate");
	assert_true(ti.cycles <= worst_cycles(2));
}

/* No leaf 0x15 either: the base frequency of leaf 0x16; none: false. */
static void test_cpuid16_then_nothing(void **state)
{
	struct tsc_info ti;

	setup_tsc(2 * GHZ, &ti);
	ti.cpuid16_hz = 2000 * MHZ;
	assert_true(tsc_calibrate_refs(&ti, NULL, 0, tsc_read));
	assert_int_equal(ti.hz, 2000 * MHZ);
	assert_false(ti.trusted);
	setup_tsc(2 * GHZ, &ti);
	assert_false(tsc_calibrate_refs(&ti, NULL, 0, tsc_read));
	assert_int_equal(ti.hz, 0);
}

/* A clock counting far faster than it claims gives a TSC rate no CPU
 * has (300 kHz here): rejected with the figure, not used. */
static void test_implausible_rate(void **state)
{
	struct fake_clock h = { .mode = RACES, .hz = 100 * MHZ }, pm = { .mode = GOOD, .hz = 3579545 };
	struct tsc_ref r[] = { ref("HPET", &h), ref("ACPI PM timer", &pm) };
	struct tsc_info ti;

	setup_tsc(3 * GHZ, &ti);
	assert_true(tsc_calibrate_refs(&ti, r, 2, tsc_read));
	assert_string_equal(ti.rejected_why[0], "gives a TSC rate no CPU has");
	assert_true(ti.rejected_hz[0] < TSC_MIN_HZ);
	assert_string_equal(ti.measured_by, "ACPI PM timer");
}

/* CPUID 0x15 is exact when it agrees within 0.5 %, ignored otherwise. */
static void test_cpuid15_agreement(void **state)
{
	struct fake_clock h = { .mode = GOOD, .hz = 100 * MHZ };
	struct tsc_ref r[] = { ref("HPET", &h) };
	struct tsc_info ti;

	setup_tsc(2592 * MHZ, &ti);
	ti.cpuid15_hz = 2592 * MHZ + 123;
	assert_true(tsc_calibrate_refs(&ti, r, 1, tsc_read));
	assert_int_equal(ti.hz, 2592 * MHZ + 123);
	assert_true(ti.trusted);
	setup_tsc(2592 * MHZ, &ti);
	ti.cpuid15_hz = 2400 * MHZ;
	h.reads = 0;
	assert_true(tsc_calibrate_refs(&ti, r, 1, tsc_read));
	assert_int_not_equal(ti.hz, 2400 * MHZ);
	assert_string_equal(ti.source, "HPET");
}

/* A clock whose stated rate no window can be timed by (0 Hz). */
static void test_zero_rate(void **state)
{
	struct fake_clock h = { .mode = GOOD, .hz = 0 };
	struct tsc_ref r[] = { ref("HPET", &h) };
	struct tsc_info ti;

	setup_tsc(2 * GHZ, &ti);
	ti.cpuid15_hz = 2 * GHZ;
	assert_true(tsc_calibrate_refs(&ti, r, 1, tsc_read));
	assert_int_equal(ti.nrejected, 1);
	assert_int_equal(h.reads, 0);
	assert_false(ti.trusted);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good_hpet),
		cmocka_unit_test(test_wrapping_counter),
		cmocka_unit_test(test_stuck_hpet_falls_back_to_pm),
		cmocka_unit_test(test_hpet_stops_during_calibration),
		cmocka_unit_test(test_no_clock_cpuid15),
		cmocka_unit_test(test_cpuid16_then_nothing),
		cmocka_unit_test(test_implausible_rate),
		cmocka_unit_test(test_cpuid15_agreement),
		cmocka_unit_test(test_zero_rate),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
