// SPDX-License-Identifier: BSD-2-Clause
#include "timer/advance.h"
#include "timer/timebase.h"

/* 128-bit product: ns * tsc_hz passes 2^64 from about 3.7 s at 5 GHz. */
static uint64_t ns_to_tsc(uint64_t ns, uint64_t tsc_hz)
{
	return timebase_mul_div(ns, tsc_hz, 1000000000ull);
}

void advance_init(struct timer_advance *a, enum advance_mode mode, uint32_t ns, uint64_t tsc_hz)
{
	a->mode = mode;
	a->max_tsc = ns_to_tsc(ADVANCE_MAX_NS, tsc_hz);
	a->outlier_tsc = ns_to_tsc(ADVANCE_OUTLIER_NS, tsc_hz);
	a->observations = 0;
	if (mode == ADVANCE_AUTO)
		a->tsc = ns_to_tsc(ns ? ns : ADVANCE_AUTO_START_NS, tsc_hz);
	else
		a->tsc = ns_to_tsc(ns, tsc_hz);
	if (mode == ADVANCE_AUTO && a->tsc > a->max_tsc)
		a->tsc = a->max_tsc;
}

void advance_observe(struct timer_advance *a, int64_t delta)
{
	uint64_t mag = delta < 0 ? 0 - (uint64_t)delta : (uint64_t)delta;   /* INT64_MIN too */
	uint64_t step = mag >> ADVANCE_STEP_SHIFT;

	if (a->mode != ADVANCE_AUTO || mag > a->outlier_tsc)
		return;
	a->observations++;
	/* Small errors still move by one cycle, so it settles exactly. */
	if (!step && mag)
		step = 1;
	if (delta > 0)
		a->tsc = a->tsc + step > a->max_tsc ? a->max_tsc : a->tsc + step;
	else
		a->tsc = a->tsc > step ? a->tsc - step : 0;
}
