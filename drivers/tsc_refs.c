// SPDX-License-Identifier: BSD-2-Clause
/* The machine's TSC calibration: CPUID and the HPET / PM timer as the
 * reference clocks of drivers/tsc.c. */
#include "drivers/hpet.h"
#include "drivers/io.h"
#include "drivers/pmtimer.h"
#include "drivers/tsc.h"
#include "drivers/x86.h"

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
static uint64_t tsc_now(void) { return rdtsc_ordered(); }

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

bool tsc_calibrate(struct tsc_info *ti, const struct hpet *hpet, const struct pmtimer *pm)
{
	struct tsc_ref refs[TSC_MAX_REFS];
	unsigned n = 0;

	*ti = (struct tsc_info){ 0 };
	read_cpuid(ti);
	if (hpet)
		refs[n++] = (struct tsc_ref){ "HPET", hpet->freq_hz, hpet_ref_read, hpet_ref_delta,
					      hpet };
	if (pm)
		refs[n++] = (struct tsc_ref){ "ACPI PM timer", PMTIMER_HZ, pm_ref_read,
					      pm_ref_delta, pm };
	return tsc_calibrate_refs(ti, refs, n, tsc_now);
}
