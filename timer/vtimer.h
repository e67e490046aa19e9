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
#include "timer/timebase.h"

enum vtimer_mode {
	VTIMER_ONESHOT,
	VTIMER_PERIODIC,
	VTIMER_TSC_DEADLINE,
	VTIMER_MODES
};

/* The furthest a target ever lies ahead of now, in TSC cycles (2^62:
 * 48 years at 3 GHz). Targets are compared with now by signed difference
 * (vtimer_reached), which needs them within 2^63 of now; a longer count
 * or deadline is reached in steps of this size. */
#define VTIMER_HORIZON_TSC      BIT(62)

struct vtimer {
	bool armed;
	enum vtimer_mode mode;
	uint64_t target;        /* guest TSC of the next expiration (when armed), at
				 * most VTIMER_HORIZON_TSC ahead; it may wrap past 2^64 */
	uint64_t deadline;      /* TSC-deadline mode: IA32_TSC_DEADLINE as written */
	uint64_t period;        /* periodic: TSC cycles per period, after the clamp */
	uint64_t count_tsc;     /* one-shot/periodic: TSC cycles of the programmed count */
	uint64_t tsc_per_tick;  /* APIC timer tick in TSC cycles (divide x clock divisor) */
	uint64_t min_period;    /* TSC cycles; 0: no minimum */
	bool clamped;           /* the last start was clamped to min_period */
};

/* Has guest TSC `now` reached `target`? By signed difference, as Xen's
 * vpt.c does ((int64_t)(now - last) >= 0): right across the 2^64 wrap of
 * a guest TSC (a guest may write IA32_TSC near 2^64), where `now >=
 * target` would call a target just past the wrap due at once. */
static inline bool vtimer_reached(uint64_t now, uint64_t target)
{
	return (int64_t)(now - target) >= 0;
}

/* APIC ticks -> TSC cycles, saturated at VTIMER_HORIZON_TSC (TMICT
 * 0xffffffff x divide 128 x a large clock divisor exceeds 64 bits). */
uint64_t vtimer_ticks_to_tsc(uint64_t ticks, uint64_t tsc_per_tick);

/* A count of `count` APIC ticks of which `left` are still to run (0 stops
 * the timer): the next expiry is `left` ticks from now, then a periodic
 * timer reloads `count`. Both countdowns are clamped to min_period when
 * periodic; `clamped` tells about the first. */
void vtimer_resume_count(struct vtimer *t, enum vtimer_mode mode, uint64_t now,
			 uint32_t left, uint32_t count, uint64_t tsc_per_tick);
/* TMICT written: count in APIC ticks (0 stops the timer). */
void vtimer_start_count(struct vtimer *t, enum vtimer_mode mode, uint64_t now,
			uint32_t count, uint64_t tsc_per_tick);
/* LVTT switched between one-shot and periodic: a running count keeps its
 * target; only what happens at 0 changes (a periodic timer reloads
 * `count`, clamped to min_period: `clamped` tells). A stopped one stays
 * stopped. */
void vtimer_switch_count_mode(struct vtimer *t, enum vtimer_mode mode, uint32_t count);
/* The target for a deadline: the deadline itself, `now` when the TSC is
 * already at or past it (absolute, as the SDM compares), or a step of
 * the horizon toward one so far ahead that a signed difference could not
 * tell it from the past. */
static inline uint64_t vtimer_deadline_target(uint64_t deadline, uint64_t now)
{
	return now + MIN(timebase_tsc_until(deadline, now), VTIMER_HORIZON_TSC);
}
/* TSC-deadline written at guest TSC `now` (0 disarms). SDM "TSC-Deadline
 * Mode": the timer fires when the TSC is greater than or equal to the
 * deadline, an absolute comparison: a deadline at or below `now` fires at
 * the next check, exactly once. Inline: the write a guest makes for every
 * TSC-deadline timer it programs. */
static inline void vtimer_start_deadline(struct vtimer *t, uint64_t deadline, uint64_t now)
{
	t->mode = VTIMER_TSC_DEADLINE;
	t->period = 0;
	t->deadline = deadline;
	t->target = vtimer_deadline_target(deadline, now);
	t->armed = deadline != 0;
}
/* The guest TSC jumped by `delta` (now reads `now`): a count moves with
 * it, a deadline stays where it is and is compared anew. */
void vtimer_tsc_moved(struct vtimer *t, int64_t delta, uint64_t now);
void vtimer_stop(struct vtimer *t);
/* Has the target passed? */
static inline bool vtimer_due(const struct vtimer *t, uint64_t now)
{
	return t->armed && vtimer_reached(now, t->target);
}
/* Consumes one expiration at `now` (the target reached): periodic re-arms
 * at target + period (or now, if that is already past), others disarm.
 * false when it was only a step toward a deadline beyond the horizon:
 * nothing to deliver, re-armed. */
bool vtimer_expire(struct vtimer *t, uint64_t now);
/* Current count for TMCCT: 0 when stopped or expired. */
uint32_t vtimer_current_count(const struct vtimer *t, uint64_t now);
/* TDCR -> divide value (1..128); the reserved bit 2 is ignored. */
uint32_t vtimer_tdcr_divide(uint32_t tdcr);

#endif
