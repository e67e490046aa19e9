// SPDX-License-Identifier: BSD-2-Clause
/*
 * timer_masked: a masked LVTT (bit 16) stops delivery, not counting
 * (Intel SDM Vol. 3A, "APIC Timer", "Local Vector Table"): TMCCT still
 * runs down to 0 (one-shot) or reloads (periodic), no interrupt comes,
 * and unmasking after a one-shot ran out delivers nothing stale.
 * Unmasking before the expiry delivers it at its programmed time; a
 * periodic timer unmasked mid-period fires on its original phase.
 *
 * A halted CPU cannot wait for a masked expiry (nothing would wake it;
 * tickvisor ends a guest that halts so), so the masked stretches are
 * spun through in both passes and checked in the spinning one; the waits
 * after unmasking are done spinning, then halted (STI; HLT).
 *
 * Arguments: slack_us=N (how late an interrupt may be, default 50).
 */
#include "lib/guest.h"
#include "lib/timer_util.h"

#define PERIOD_US               1000u

static uint32_t count;                  /* TMICT for PERIOD_US at divide 1 */
static uint64_t len;                    /* that in TSC cycles */

static void unmask(unsigned mode)
{
	apic_write(LAPIC_LVT_TIMER, tmr_lvtt(mode, TMR_VEC, false));
}

static void test_oneshot_runs_out(enum tmr_wait how)
{
	uint64_t t0 = tmr_arm(LAPIC_TIMER_ONESHOT, true, count);
	struct tmr_tmcct_watch w;
	uint32_t end;

	tmr_watch_tmcct(&w, t0 + len / 4);
	tmr_spin_until(t0 + len + len / 2);
	end = apic_read(LAPIC_TMCCT);
	if (how == TMR_SPIN) {
		report(w.samples > 1 && w.drops + 1 == w.samples && w.min && w.max <= count,
		       "masked one-shot: TMCCT counts down from %u: %u reads, %u..%u",
		       count, w.samples, w.min, w.max);
		report(end == 0, "masked one-shot: TMCCT reaches 0 (%u)", end);
		report(tmr_count(TMR_VEC) == 0, "masked one-shot: no interrupt");
	}
	unmask(LAPIC_TIMER_ONESHOT);
	report(tmr_quiet(how, TMR_VEC, 3 * len),
	       "unmasked after expiry: no stale interrupt within 3 counts");
}

static void test_oneshot_unmask_early(enum tmr_wait how)
{
	uint64_t t0 = tmr_arm(LAPIC_TIMER_ONESHOT, true, 2 * count), at;
	uint32_t before;
	bool fired;

	tmr_spin_until(t0 + len);
	before = tmr_count(TMR_VEC);
	unmask(LAPIC_TIMER_ONESHOT);
	fired = tmr_wait(how, TMR_VEC, 1, t0 + 3 * len + tmr_slack_tsc);
	at = tmr_stamp(TMR_VEC, 0) - t0;
	if (how == TMR_SPIN)
		report(!before, "masked one-shot, half-way: no interrupt");
	report(fired && at >= 2 * len && at < 2 * len + tmr_slack_tsc,
	       "unmasked before expiry: fires at the programmed time, after %lu cycles of %lu",
	       fired ? at : 0, 2 * len);
}

static void test_periodic(enum tmr_wait how)
{
	struct tmr_tmcct_watch w;
	uint64_t t0 = tmr_arm(LAPIC_TIMER_PERIODIC, true, count), due, at;
	uint32_t before;
	bool fired;

	tmr_watch_tmcct(&w, t0 + 3 * len + len / 2);
	before = tmr_count(TMR_VEC);
	unmask(LAPIC_TIMER_PERIODIC);
	/* Unmasked half-way through period 4: the next one is due at 4. */
	due = t0 + 4 * len;
	fired = tmr_wait(how, TMR_VEC, 1, due + len);
	apic_write(LAPIC_TMICT, 0);
	at = tmr_stamp(TMR_VEC, 0);
	if (how == TMR_SPIN) {
		report(w.max <= count && !w.zero_pairs && w.rises == 3 &&
		       w.drops + w.rises + 1 == w.samples,
		       "masked periodic: TMCCT falls and reloads: %u samples %u..%u, %u reloads "
		       "in 3.5 periods", w.samples, w.min, w.max, w.rises);
		report(!before, "masked periodic: no interrupt in 3.5 periods");
	}
	report(fired && at >= due && at < due + tmr_slack_tsc,
	       "unmasked mid-period: next interrupt on the original phase, %+ld cycles",
	       fired ? (int64_t)(at - due) : 0);
}

static void test_masked(enum tmr_wait how)
{
	report_prefix_push(tmr_wait_name[how]);
	test_oneshot_runs_out(how);
	test_oneshot_unmask_early(how);
	test_periodic(how);
	tmr_stop();
	report_prefix_pop();
}

int main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	report_prefix_push("timer_masked");
	if (tmr_init()) {
		count = tmr_tsc_to_ticks(tmr_us_to_tsc(PERIOD_US), 1);
		len = tmr_ticks_to_tsc(count, 1);
		for (enum tmr_wait how = 0; how < TMR_NR_WAITS; how++)
			test_masked(how);
	}
	report_prefix_pop();
	return report_summary();
}
