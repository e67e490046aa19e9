// SPDX-License-Identifier: BSD-2-Clause
/* TSC calibration against reference clocks that may lie (drivers/tsc.h). */
#include "drivers/tsc.h"

bool tsc_ref_counting(const struct tsc_ref *r, tsc_read_fn tsc, uint64_t cycles)
{
	uint64_t first = r->read(r->ctx), t0 = tsc();

	do {
		if (r->read(r->ctx) != first)
			return true;
	} while (tsc() - t0 < cycles);
	return false;
}

/* One measurement: TSC ticks over TSC_CAL_WINDOW_US of the reference, each
 * reference read bracketed by two TSC reads (midpoint taken). 0 with *why
 * set when the reference stops or crawls. */
static uint64_t measure_once(const struct tsc_ref *r, tsc_read_fn tsc, const char **why)
{
	uint64_t window = r->hz * TSC_CAL_WINDOW_US / 1000000, t0, t1, c0, c1, n;
	uint64_t last = 0, moved;

	t0 = tsc();
	c0 = r->read(r->ctx);
	t0 = (t0 + tsc()) / 2;
	moved = t0;
	do {
		t1 = tsc();
		c1 = r->read(r->ctx);
		n = r->delta(r->ctx, c0, c1);
		if (n != last) {
			last = n;
			moved = t1;
		} else if (t1 - moved > TSC_STALL_CYCLES) {
			*why = "stopped counting during calibration";
			return 0;
		}
		if (t1 - t0 > TSC_RUN_MAX_CYCLES) {
			*why = "counts too slowly for its stated rate";
			return 0;
		}
	} while (n < window);
	t1 = (t1 + tsc()) / 2;
	/* (t1 - t0) <= 2^31 and hz < 2^32 for any clock we take: no overflow. */
	return (t1 - t0) * r->hz / n;
}

static uint64_t measure(const struct tsc_ref *r, tsc_read_fn tsc, const char **why,
			uint64_t *implausible)
{
	uint64_t v[TSC_CAL_RUNS], tmp, hz;

	for (unsigned i = 0; i < TSC_CAL_RUNS; i++)
		if (!(v[i] = measure_once(r, tsc, why)))
			return 0;
	for (unsigned i = 0; i < TSC_CAL_RUNS; i++)          /* median */
		for (unsigned j = i + 1; j < TSC_CAL_RUNS; j++)
			if (v[j] < v[i]) {
				tmp = v[i];
				v[i] = v[j];
				v[j] = tmp;
			}
	hz = (v[TSC_CAL_RUNS / 2] + 500) / 1000 * 1000;   /* nearest kHz */
	if (hz < TSC_MIN_HZ || hz > TSC_MAX_HZ) {
		*why = "gives a TSC rate no CPU has";
		*implausible = hz;
		return 0;
	}
	return hz;
}

uint64_t tsc_ppm_diff(uint64_t a, uint64_t b)
{
	uint64_t d = a > b ? a - b : b - a;

	return b ? d * 1000000 / b : UINT64_MAX;
}

static void reject(struct tsc_info *ti, const struct tsc_ref *r, const char *why, uint64_t hz)
{
	if (ti->nrejected >= TSC_MAX_REFS)
		return;
	ti->rejected[ti->nrejected] = r->name;
	ti->rejected_why[ti->nrejected] = why;
	ti->rejected_hz[ti->nrejected++] = hz;
}

bool tsc_calibrate_refs(struct tsc_info *ti, const struct tsc_ref *refs, unsigned nrefs,
			tsc_read_fn tsc)
{
	uint64_t start = tsc();

	ti->nrejected = 0;
	ti->measured_hz = 0;
	ti->measured_by = NULL;
	for (unsigned i = 0; i < nrefs && !ti->measured_hz; i++) {
		const struct tsc_ref *r = &refs[i];
		const char *why = NULL;
		uint64_t bad = 0;

		/* A reference this slow (or fast) cannot time a window. */
		if (r->hz < 1000 || r->hz > (1ull << 32)) {
			reject(ti, r, "has a rate it cannot be timed by", 0);
			continue;
		}
		if (!tsc_ref_counting(r, tsc, TSC_COUNTING_CYCLES)) {
			reject(ti, r, "does not count", 0);
			continue;
		}
		if ((ti->measured_hz = measure(r, tsc, &why, &bad)))
			ti->measured_by = r->name;
		else
			reject(ti, r, why, bad);
	}
	ti->trusted = true;
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
		ti->trusted = false;
	} else if (ti->cpuid16_hz) {
		ti->hz = ti->cpuid16_hz;
		ti->source = "CPUID 0x16 base frequency (no reference clock to check it)";
		ti->trusted = false;
	} else {
		ti->hz = 0;
		ti->source = NULL;
	}
	ti->cycles = tsc() - start;
	return ti->hz != 0;
}
