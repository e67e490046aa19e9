/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * TSC frequency. Measured against the HPET or the ACPI PM timer and
 * cross-checked with CPUID 0x15/0x16, which some CPUs do not report and
 * emulators (Bochs) report wrongly. CPUID 0x15 is taken as exact only
 * when it agrees with the measurement.
 */
#ifndef DRIVERS_TSC_H
#define DRIVERS_TSC_H

#include "drivers/hpet.h"
#include "drivers/pmtimer.h"

#define TSC_CPUID_AGREE_PPM 5000u       /* 0.5 % */

struct tsc_info {
	uint64_t hz;                    /* the frequency in use */
	const char *source;             /* where hz came from */
	uint64_t measured_hz;           /* 0: not measured */
	const char *measured_by;        /* "HPET", "ACPI PM timer" */
	uint64_t cpuid15_hz;            /* 0: leaf absent or incomplete */
	uint64_t cpuid16_hz;            /* base frequency, 0: absent */
	bool invariant;                 /* CPUID 0x80000007:EDX[8] */
};

/* hpet/pm may be NULL. False when no reference and no CPUID value. */
bool tsc_calibrate(struct tsc_info *ti, const struct hpet *hpet, const struct pmtimer *pm);
/* Differences in parts per million, for messages. */
uint64_t tsc_ppm_diff(uint64_t a, uint64_t b);

#endif
