/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Timer advance (shared/seeds/003_*): arm the hardware early by `advance`,
 * then wait to the exact target before injecting, so the guest sees its
 * interrupt on time despite the exit and entry in between. `auto` tunes
 * the advance from the lateness observed at each timer expiry, by 1/8 of
 * the error per step, within [0, ADVANCE_MAX_NS]; outliers (the host was
 * busy) are ignored. This is the one place advance is computed.
 */
#ifndef TIMER_ADVANCE_H
#define TIMER_ADVANCE_H

#include "drivers/base.h"
#include "timer/timer_opts.h"

#define ADVANCE_MAX_NS        20000u    /* auto never goes beyond 20 us */
#define ADVANCE_OUTLIER_NS    50000u    /* larger errors are not the timer's */
/* auto starts from above, at the ceiling (issue 24.2): an expiry that
 * comes early costs only the host's wait to the exact target, which the
 * entry cost calibrated at vCPU start (vmm/vcpu/vcpu_calib.c) makes exact, so
 * the guest sees even its first interrupts on time; one that comes late
 * costs the guest. From below (1 us, until 2026-12) a fresh guest's first
 * 20 TSC-deadline expiries were up to 614 cycles late in Bochs, where the
 * path to settle on is ~650 cycles of tickvisor's own code and the
 * calibrated exit and entry only 2 and 30. Each early expiry moves the
 * advance down by 1/8 of its error, so it settles from above. */
#define ADVANCE_AUTO_START_NS ADVANCE_MAX_NS
#define ADVANCE_STEP_SHIFT    3u        /* move by error / 8 */

struct timer_advance {
	enum advance_mode mode;
	uint64_t tsc;           /* current advance in TSC cycles */
	uint64_t max_tsc;
	uint64_t outlier_tsc;
	uint64_t observations;  /* expiries seen by auto (for stats) */
};

void advance_init(struct timer_advance *a, enum advance_mode mode, uint32_t ns, uint64_t tsc_hz);

static inline uint64_t advance_get(const struct timer_advance *a)
{
	return a->mode == ADVANCE_OFF ? 0 : a->tsc;
}

/* One expiry: delta = TSC when the expiry was handled minus the target
 * (negative: early, then we waited; positive: late). */
void advance_observe(struct timer_advance *a, int64_t delta);

#endif
