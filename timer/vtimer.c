// SPDX-License-Identifier: BSD-2-Clause
#include "timer/vtimer.h"
#include "timer/timebase.h"

uint64_t vtimer_ticks_to_tsc(uint64_t ticks, uint64_t tsc_per_tick)
{
	uint64_t cycles;

	if (__builtin_mul_overflow(ticks, tsc_per_tick, &cycles) || cycles > VTIMER_HORIZON_TSC)
		return VTIMER_HORIZON_TSC;
	return cycles;
}

/* A periodic countdown is never shorter than min_period. */
static uint64_t clamp_period(const struct vtimer *t, uint64_t cycles)
{
	return cycles < t->min_period ? t->min_period : cycles;
}

void vtimer_resume_count(struct vtimer *t, enum vtimer_mode mode, uint64_t now,
			 uint32_t left, uint32_t count, uint64_t tsc_per_tick)
{
	uint64_t cycles = vtimer_ticks_to_tsc(left, tsc_per_tick);
	bool periodic = mode == VTIMER_PERIODIC;

	t->mode = mode;
	t->tsc_per_tick = tsc_per_tick;
	/* The count TMCCT runs down from: one-shot, only `left` remains. */
	t->count_tsc = periodic ? vtimer_ticks_to_tsc(count, tsc_per_tick) : cycles;
	t->clamped = false;
	if (!left) {
		t->armed = false;
		return;
	}
	if (periodic) {
		t->clamped = cycles < t->min_period;
		cycles = clamp_period(t, cycles);
	}
	t->period = periodic ? clamp_period(t, t->count_tsc) : 0;
	t->target = now + cycles;       /* may wrap past 2^64: see vtimer_reached */
	t->armed = true;
}

void vtimer_start_count(struct vtimer *t, enum vtimer_mode mode, uint64_t now,
			uint32_t count, uint64_t tsc_per_tick)
{
	vtimer_resume_count(t, mode, now, count, count, tsc_per_tick);
}

void vtimer_switch_count_mode(struct vtimer *t, enum vtimer_mode mode, uint32_t count)
{
	t->mode = mode;
	t->clamped = false;
	if (!t->armed)
		return;
	if (mode != VTIMER_PERIODIC) {
		t->period = 0;
		return;
	}
	t->count_tsc = vtimer_ticks_to_tsc(count, t->tsc_per_tick);
	t->clamped = t->count_tsc < t->min_period;
	t->period = clamp_period(t, t->count_tsc);
}


void vtimer_tsc_moved(struct vtimer *t, int64_t delta, uint64_t now)
{
	if (!t->armed)
		return;
	if (t->mode == VTIMER_TSC_DEADLINE)
		t->target = vtimer_deadline_target(t->deadline, now);
	else
		t->target += (uint64_t)delta;
}

void vtimer_stop(struct vtimer *t)
{
	t->armed = false;
}

bool vtimer_expire(struct vtimer *t, uint64_t now)
{
	/* A step toward a far deadline (the target is not the deadline, and
	 * the TSC has not reached it): take the next step. */
	if (t->mode == VTIMER_TSC_DEADLINE && t->target != t->deadline && t->deadline > now) {
		t->target = vtimer_deadline_target(t->deadline, now);
		return false;
	}
	if (t->mode != VTIMER_PERIODIC || !t->period) {
		t->armed = false;
		return true;
	}
	/* From the previous target, not from now: no drift. If the host was
	 * so late that the next target is past too, restart the phase at now
	 * instead of delivering a burst of stale ticks. */
	t->target += t->period;
	if (vtimer_reached(now, t->target))
		t->target = now;
	return true;
}

uint32_t vtimer_current_count(const struct vtimer *t, uint64_t now)
{
	uint64_t left;

	if (!t->armed || t->mode == VTIMER_TSC_DEADLINE || !t->tsc_per_tick)
		return 0;
	if (!vtimer_reached(now, t->target)) {
		left = t->target - now;
	} else if (t->mode == VTIMER_PERIODIC && t->period) {
		/* Expired but not yet re-armed: the count has reloaded. */
		left = t->period - (now - t->target) % t->period;
	} else {
		return 0;
	}
	/* Round up: the count is 1 until the last tick has elapsed. When the
	 * period was clamped, the count still runs from the programmed value.
	 * left < 2^63 and tsc_per_tick < 2^40: the sum cannot overflow. */
	left = (left + t->tsc_per_tick - 1) / t->tsc_per_tick;
	if (left > t->count_tsc / t->tsc_per_tick)
		left = t->count_tsc / t->tsc_per_tick;
	return (uint32_t)left;
}

uint32_t vtimer_tdcr_divide(uint32_t tdcr)
{
	/* SDM: bits 0, 1 and 3; 111b divides by 1, else 2^(value+1). */
	uint32_t v = (tdcr & 3) | ((tdcr >> 1) & 4);

	return v == 7 ? 1 : 2u << v;
}
