/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * TSC frequency. Measured against a reference clock (the HPET, else the
 * ACPI PM timer) and cross-checked with CPUID 0x15/0x16, which some CPUs
 * do not report and emulators (Bochs) report wrongly. CPUID 0x15 is taken
 * as exact only when it agrees with the measurement.
 *
 * Clocks may lie (issue 22.4): a reference is used only after it is seen
 * counting, and a measurement that stalls, crawls or gives a rate no CPU
 * has is thrown away for the next reference, so every path ends within
 * a bounded number of TSC cycles. The arithmetic here is pure (the clocks
 * and the TSC are function pointers) and host-tested (tests/unit/test_tsc.c);
 * drivers/tsc_refs.c plugs in the hardware.
 */
#ifndef DRIVERS_TSC_H
#define DRIVERS_TSC_H

#include "drivers/base.h"

#define TSC_CPUID_AGREE_PPM 5000u       /* 0.5 % */
/* The rates a TSC may plausibly run at: Bochs's is 50 MHz, CPUs reach a
 * few GHz. A measurement outside is a reference clock that lies. */
#define TSC_MIN_HZ          1000000ull
#define TSC_MAX_HZ          20000000000ull
/* A reference must change within this many TSC cycles (Linux's
 * hpet_counting() waits 200000): 2^20 cycles are 52 us at 20 GHz, time
 * for 500 ticks of the slowest legal HPET (10 MHz). */
#define TSC_COUNTING_CYCLES (1ull << 20)
/* A measurement in which the reference stands still this long stopped. */
#define TSC_STALL_CYCLES    (1ull << 24)
#define TSC_CAL_RUNS        3u
#define TSC_CAL_WINDOW_US   50000u
/* One measurement gives up after this many TSC cycles (the window at
 * TSC_MAX_HZ, twice): a reference that crawls costs at most this. */
#define TSC_RUN_MAX_CYCLES  (2 * TSC_CAL_WINDOW_US * (TSC_MAX_HZ / 1000000))
#define TSC_MAX_REFS        2u

typedef uint64_t (*tsc_read_fn)(void);

/* A reference clock: its rate, a reader and the wrap-aware difference. */
struct tsc_ref {
	const char *name;               /* "HPET", "ACPI PM timer" */
	uint64_t hz;
	uint64_t (*read)(const void *ctx);
	uint64_t (*delta)(const void *ctx, uint64_t a, uint64_t b);
	const void *ctx;
};

struct tsc_info {
	uint64_t hz;                    /* the frequency in use */
	const char *source;             /* where hz came from */
	bool trusted;                   /* false: a CPUID value no clock checked */
	uint64_t measured_hz;           /* 0: not measured */
	const char *measured_by;        /* the tsc_ref name */
	uint64_t cpuid15_hz;            /* 0: leaf absent or incomplete */
	uint64_t cpuid16_hz;            /* base frequency, 0: absent */
	bool invariant;                 /* CPUID 0x80000007:EDX[8] */
	uint64_t cycles;                /* TSC cycles the calibration took */
	/* References given up on, and why, in the order tried. */
	unsigned nrejected;
	const char *rejected[TSC_MAX_REFS];
	const char *rejected_why[TSC_MAX_REFS];
	uint64_t rejected_hz[TSC_MAX_REFS];     /* an implausible result, else 0 */
};

/* True when r changes within `cycles` TSC cycles. */
bool tsc_ref_counting(const struct tsc_ref *r, tsc_read_fn tsc, uint64_t cycles);
/*
 * Measures against refs[0], then refs[1]... until one gives a plausible
 * rate; falls back to ti->cpuid15_hz, then ti->cpuid16_hz (filled in by
 * the caller, with ti->invariant), marked untrusted. False when nothing
 * gave a rate.
 */
bool tsc_calibrate_refs(struct tsc_info *ti, const struct tsc_ref *refs, unsigned nrefs,
			tsc_read_fn tsc);
/* Differences in parts per million, for messages. */
uint64_t tsc_ppm_diff(uint64_t a, uint64_t b);

#ifndef TV_HOST_TEST
struct hpet;
struct pmtimer;
/* The machine's: CPUID, then the HPET and the PM timer (either NULL). */
bool tsc_calibrate(struct tsc_info *ti, const struct hpet *hpet, const struct pmtimer *pm);
#endif

#endif
