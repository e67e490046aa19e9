/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The guest APIC timer's arithmetic and policy, in guest TSC units
 * (DESIGN.md, "Timer rules"): one canonical target expiration; periodic
 * re-arm adds the period to the previous target (no drift) and never
 * fires a catch-up burst; TMCCT derived from target - now; a minimum
 * periodic period against interrupt storms. Pure C, host-tested. Which
 * hardware timer turns the target into an exit is the backends' business.
 */
#ifndef TIMER_VTIMER_H
#define TIMER_VTIMER_H

#include "drivers/base.h"

enum vtimer_mode {
	VTIMER_ONESHOT,
	VTIMER_PERIODIC,
	VTIMER_TSC_DEADLINE,
};

struct vtimer {
	bool armed;
	enum vtimer_mode mode;
	uint64_t target;        /* guest TSC of the next expiration (when armed) */
	uint64_t period;        /* periodic: TSC cycles per period, after the clamp */
	uint64_t count_tsc;     /* one-shot/periodic: TSC cycles of the programmed count */
	uint32_t tsc_per_tick;  /* APIC timer tick in TSC cycles (divide x clock divisor) */
	uint64_t min_period;    /* TSC cycles; 0: no minimum */
	bool clamped;           /* the last start was clamped to min_period */
};

/* A count of `count` APIC ticks of which `left` are still to run (0 stops
 * the timer): the next expiry is `left` ticks from now, then a periodic
 * timer reloads `count`. Both countdowns are clamped to min_period when
 * periodic; `clamped` tells about the first. */
void vtimer_resume_count(struct vtimer *t, enum vtimer_mode mode, uint64_t now,
			 uint32_t left, uint32_t count, uint32_t tsc_per_tick);
/* TMICT written: count in APIC ticks (0 stops the timer). */
void vtimer_start_count(struct vtimer *t, enum vtimer_mode mode, uint64_t now,
			uint32_t count, uint32_t tsc_per_tick);
/* TSC-deadline written (0 disarms). A deadline in the past fires at the
 * next check, exactly once. */
void vtimer_start_deadline(struct vtimer *t, uint64_t deadline);
void vtimer_stop(struct vtimer *t);
/* Has the target passed? */
static inline bool vtimer_due(const struct vtimer *t, uint64_t now)
{
	return t->armed && now >= t->target;
}
/* Consumes one expiration at `now` (>= target): periodic re-arms at
 * target + period (or now, if that is already past), others disarm. */
void vtimer_expire(struct vtimer *t, uint64_t now);
/* Current count for TMCCT: 0 when stopped or expired. */
uint32_t vtimer_current_count(const struct vtimer *t, uint64_t now);
/* TDCR -> divide value (1..128); the reserved bit 2 is ignored. */
uint32_t vtimer_tdcr_divide(uint32_t tdcr);

#endif
