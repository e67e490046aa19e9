// SPDX-License-Identifier: BSD-2-Clause
#include "timer/vtimer.h"

/* A periodic countdown is never shorter than min_period. */
static uint64_t clamp_period(const struct vtimer *t, uint64_t cycles)
{
	return cycles < t->min_period ? t->min_period : cycles;
}

void vtimer_resume_count(struct vtimer *t, enum vtimer_mode mode, uint64_t now,
			 uint32_t left, uint32_t count, uint32_t tsc_per_tick)
{
	uint64_t cycles = (uint64_t)left * tsc_per_tick;
	bool periodic = mode == VTIMER_PERIODIC;

	t->mode = mode;
	t->tsc_per_tick = tsc_per_tick;
	/* The count TMCCT runs down from: one-shot, only `left` remains. */
	t->count_tsc = periodic ? (uint64_t)count * tsc_per_tick : cycles;
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
	t->target = now + cycles;
	t->armed = true;
}

void vtimer_start_count(struct vtimer *t, enum vtimer_mode mode, uint64_t now,
			uint32_t count, uint32_t tsc_per_tick)
{
	vtimer_resume_count(t, mode, now, count, count, tsc_per_tick);
}

void vtimer_start_deadline(struct vtimer *t, uint64_t deadline)
{
	t->mode = VTIMER_TSC_DEADLINE;
	t->period = 0;
	t->target = deadline;
	t->armed = deadline != 0;
}

void vtimer_stop(struct vtimer *t)
{
	t->armed = false;
}

void vtimer_expire(struct vtimer *t, uint64_t now)
{
	if (t->mode != VTIMER_PERIODIC || !t->period) {
		t->armed = false;
		return;
	}
	/* From the previous target, not from now: no drift. If the host was
	 * so late that the next target is past too, restart the phase at now
	 * instead of delivering a burst of stale ticks. */
	t->target += t->period;
	if (t->target <= now)
		t->target = now;
}

uint32_t vtimer_current_count(const struct vtimer *t, uint64_t now)
{
	uint64_t left;

	if (!t->armed || t->mode == VTIMER_TSC_DEADLINE || !t->tsc_per_tick)
		return 0;
	if (now < t->target) {
		left = t->target - now;
	} else if (t->mode == VTIMER_PERIODIC && t->period) {
		/* Expired but not yet re-armed: the count has reloaded. */
		left = t->period - (now - t->target) % t->period;
	} else {
		return 0;
	}
	/* Round up: the count is 1 until the last tick has elapsed. When the
	 * period was clamped, the count still runs from the programmed value. */
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
