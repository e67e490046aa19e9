// SPDX-License-Identifier: BSD-2-Clause
#include "drivers/io.h"
#include "drivers/tsc.h"

#define CAL_RUNS      3u
#define CAL_WINDOW_US 50000u
#define CAL_STALL_TSC (100ull * 1000 * 1000 * 1000)   /* give up: reference stopped */

struct ref_clock {
	uint64_t hz;
	uint64_t (*read)(const void *ctx);
	uint64_t (*delta)(const void *ctx, uint64_t a, uint64_t b);
	const void *ctx;
};

static uint64_t hpet_ref_read(const void *ctx) { return hpet_read_counter(ctx); }
static uint64_t hpet_ref_delta(const void *ctx, uint64_t a, uint64_t b)
{
	const struct hpet *h = ctx;

	return h->counter_64 ? b - a : (uint32_t)(b - a);
}
static uint64_t pm_ref_read(const void *ctx) { return pmtimer_read(ctx); }
static uint64_t pm_ref_delta(const void *ctx, uint64_t a, uint64_t b)
{
	return pmtimer_delta(ctx, (uint32_t)a, (uint32_t)b);
}

/* One measurement: TSC ticks over CAL_WINDOW_US of the reference, each
 * reference read bracketed by two TSC reads (midpoint taken). */
static uint64_t measure_once(const struct ref_clock *r)
{
	uint64_t window = r->hz * CAL_WINDOW_US / 1000000, t0, t1, c0, c1, n;

	t0 = rdtsc_ordered();
	c0 = r->read(r->ctx);
	t0 = (t0 + rdtsc_ordered()) / 2;
	do {
		t1 = rdtsc_ordered();
		c1 = r->read(r->ctx);
		n = r->delta(r->ctx, c0, c1);
		if (t1 - t0 > CAL_STALL_TSC)
			return 0;
	} while (n < window);
	t1 = (t1 + rdtsc_ordered()) / 2;
	return (t1 - t0) * r->hz / n;
}

static uint64_t measure(const struct ref_clock *r)
{
	uint64_t v[CAL_RUNS], tmp;

	for (unsigned i = 0; i < CAL_RUNS; i++)
		if (!(v[i] = measure_once(r)))
			return 0;
	for (unsigned i = 0; i < CAL_RUNS; i++)          /* median */
		for (unsigned j = i + 1; j < CAL_RUNS; j++)
			if (v[j] < v[i]) {
				tmp = v[i];
				v[i] = v[j];
				v[j] = tmp;
			}
	return (v[CAL_RUNS / 2] + 500) / 1000 * 1000;   /* nearest kHz */
}

static void read_cpuid(struct tsc_info *ti)
{
	uint32_t max = cpuid(0, 0).eax;
	struct cpuid_regs r;

	if (max >= 0x15) {
		r = cpuid(0x15, 0);
		if (r.eax && r.ebx && r.ecx)
			ti->cpuid15_hz = (uint64_t)r.ecx * r.ebx / r.eax;
	}
	if (max >= 0x16)
		ti->cpuid16_hz = (uint64_t)(cpuid(0x16, 0).eax & 0xffff) * 1000000;
	if (cpuid(0x80000000, 0).eax >= 0x80000007)
		ti->invariant = cpuid(0x80000007, 0).edx & CPUID_80000007_EDX_INVTSC;
}

uint64_t tsc_ppm_diff(uint64_t a, uint64_t b)
{
	uint64_t d = a > b ? a - b : b - a;

	return b ? d * 1000000 / b : UINT64_MAX;
}

bool tsc_calibrate(struct tsc_info *ti, const struct hpet *hpet, const struct pmtimer *pm)
{
	struct ref_clock r = { 0 };

	*ti = (struct tsc_info){ 0 };
	read_cpuid(ti);
	if (hpet) {
		r = (struct ref_clock){ hpet->freq_hz, hpet_ref_read, hpet_ref_delta, hpet };
		ti->measured_by = "HPET";
	} else if (pm) {
		r = (struct ref_clock){ PMTIMER_HZ, pm_ref_read, pm_ref_delta, pm };
		ti->measured_by = "ACPI PM timer";
	}
	if (r.hz)
		ti->measured_hz = measure(&r);
	if (ti->cpuid15_hz && ti->measured_hz &&
	    tsc_ppm_diff(ti->cpuid15_hz, ti->measured_hz) <= TSC_CPUID_AGREE_PPM) {
		ti->hz = ti->cpuid15_hz;
		ti->source = "CPUID 0x15 (agrees with measurement)";
	} else if (ti->measured_hz) {
		ti->hz = ti->measured_hz;
		ti->source = ti->measured_by;
	} else if (ti->cpuid15_hz) {
		ti->hz = ti->cpuid15_hz;
		ti->source = "CPUID 0x15 (no reference clock to check it)";
	} else if (ti->cpuid16_hz) {
		ti->hz = ti->cpuid16_hz;
		ti->source = "CPUID 0x16 base frequency (no reference clock to check it)";
	}
	return ti->hz != 0;
}
