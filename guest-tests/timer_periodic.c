// SPDX-License-Identifier: BSD-2-Clause
/*
 * timer_periodic: the APIC timer in periodic mode (Intel SDM Vol. 3A,
 * "APIC Timer"; DESIGN.md, "Timer rules": each period is added to the
 * previous target, never to "now", so there is no drift). N interrupts
 * come one period apart, none early and each late by no more than a fixed
 * slack; TMCCT counts down within a period and reloads at expiry; a TMICT
 * write restarts the count, TMICT = 0 stops it; an expiry while IF=0 is
 * taken at STI. Each timing check runs twice: spinning with IF=1, then
 * halted (STI; HLT).
 *
 * Arguments: slack_us=N (how late an interrupt may be, default 50);
 * drift_max=N (cycles): interrupt 100 - interrupt 1 may differ from 99
 * periods by at most N when spinning (default: the slack). Every tick
 * takes the same path (exit, expiry, entry), so under Bochs - one TSC
 * cycle per instruction - they are all equally late to within a few
 * instructions; a tick whose lateness differs from the rest shows that
 * root-mode work outside that path leaks into when the guest sees it.
 */
#include "lib/guest.h"
#include "lib/timer_util.h"

#define PERIOD_US               500u    /* above tickvisor's 200 us minimum */
#define NR_TICKS                100u
#define NR_RELOADS              5u      /* TMCCT reads after halted wake-ups */

static uint32_t count;                  /* TMICT for PERIOD_US at divide 1 */
static uint64_t len;                    /* that in TSC cycles */
static uint64_t drift_max;              /* drift_max=, 0: the slack */

/* Interrupt k (1-based) is due k periods after the TMICT write at t0. */
static void test_ticks(enum tmr_wait how)
{
	uint64_t t0, first, last, late, max_late = 0, first_late = 0, bound;
	uint32_t n, early = 0, worst = 0;
	int64_t drift;
	bool done;

	t0 = tmr_arm(LAPIC_TIMER_PERIODIC, false, count);
	done = tmr_wait(how, TMR_VEC, NR_TICKS, t0 + (NR_TICKS + 2) * len + tmr_slack_tsc);
	apic_write(LAPIC_TMICT, 0);
	n = tmr_count(TMR_VEC);
	if (!report(done, "%u interrupts in %u periods", n, NR_TICKS))
		return;
	for (uint32_t k = 1; k <= NR_TICKS; k++) {
		uint64_t due = t0 + k * len, at = tmr_stamp(TMR_VEC, k - 1);

		if (at < due) {
			early++;
			continue;
		}
		late = at - due;
		if (k == 1)
			first_late = late;
		if (late > max_late) {
			max_late = late;
			worst = k;
		}
	}
	first = tmr_stamp(TMR_VEC, 0);
	last = tmr_stamp(TMR_VEC, NR_TICKS - 1);
	drift = (int64_t)(last - first) - (int64_t)((NR_TICKS - 1) * len);
	report(!early, "none early: %u of %u before k periods", early, NR_TICKS);
	report(max_late < tmr_slack_tsc, "max lateness %lu cycles (interrupt %u), at most %lu",
	       max_late, worst, tmr_slack_tsc);
	bound = how == TMR_SPIN && drift_max ? drift_max : tmr_slack_tsc;
	report(drift < (int64_t)bound && -drift < (int64_t)bound,
	       "interrupt %u - interrupt 1 = %u periods %+ld cycles (at most %lu)",
	       NR_TICKS, NR_TICKS - 1, drift, bound);
	report_info("lateness max %lu cycles (%lu ns), first %lu, last %lu; drift %ld cycles "
		    "over %u periods of %lu", max_late, tmr_tsc_to_ns(max_late), first_late,
		    last - t0 - NR_TICKS * len, drift, NR_TICKS - 1, len);
}

/* Spinning: TMCCT read back to back over 3.5 periods falls between
 * reloads, one reload per interrupt, never above TMICT, never stuck at 0.
 * Halted: right after each wake-up TMCCT has just reloaded. */
static void test_tmcct(enum tmr_wait how)
{
	struct tmr_tmcct_watch w;
	uint32_t v, lo = count, hi = 0, irqs, slack = tmr_tsc_to_ticks(tmr_slack_tsc, 1);
	uint64_t t0 = tmr_arm(LAPIC_TIMER_PERIODIC, false, count);
	bool woke = true;

	if (how == TMR_SPIN) {
		tmr_watch_tmcct(&w, t0 + 3 * len + len / 2);
		apic_write(LAPIC_TMICT, 0);
		irqs = tmr_count(TMR_VEC);
		report(w.max <= count && !w.zero_pairs, "TMCCT in (0, %u]: %u samples, %u..%u",
		       count, w.samples, w.min, w.max);
		report(w.drops + w.rises + 1 == w.samples && w.rises >= 3 &&
		       w.rises <= irqs + 1 && w.rises + 1 >= irqs,
		       "TMCCT falls, reloads once per interrupt: %u drops, %u reloads, "
		       "%u interrupts", w.drops, w.rises, irqs);
		return;
	}
	for (uint32_t k = 1; k <= NR_RELOADS && woke; k++) {
		woke = tmr_wait(how, TMR_VEC, k, t0 + (k + 1) * len + tmr_slack_tsc);
		v = apic_read(LAPIC_TMCCT);
		lo = v < lo ? v : lo;
		hi = v > hi ? v : hi;
	}
	apic_write(LAPIC_TMICT, 0);
	report(woke && hi <= count && lo + slack >= count,
	       "TMCCT reloaded at each of %u wake-ups: %u..%u of %u", NR_RELOADS, lo, hi, count);
}

/* A TMICT write in the middle of a period starts a new count at once,
 * with the new period; TMICT = 0 then stops the timer. */
static void test_restart_stop(enum tmr_wait how)
{
	uint32_t count2 = count + count / 2, c, tmcct;
	uint64_t len2 = tmr_ticks_to_tsc(count2, 1), t0 = tmr_arm(LAPIC_TIMER_PERIODIC, false, count), tw, first, second;
	bool got, quiet;

	if (!report(tmr_wait(how, TMR_VEC, 1, t0 + 2 * len + tmr_slack_tsc), "runs"))
		return;
	tmr_spin_until(tmr_stamp(TMR_VEC, 0) + len / 2);
	c = tmr_count(TMR_VEC);
	tw = rdtsc();
	apic_write(LAPIC_TMICT, count2);
	got = tmr_wait(how, TMR_VEC, c + 2, tw + 2 * len2 + 2 * tmr_slack_tsc);
	first = tmr_stamp(TMR_VEC, c) - tw;
	second = tmr_stamp(TMR_VEC, c + 1) - tmr_stamp(TMR_VEC, c);
	if (report(got, "TMICT write mid-period: 2 more interrupts")) {
		report(first >= len2 && first < len2 + tmr_slack_tsc,
		       "restarts the count: next after %lu cycles, new count %lu", first, len2);
		report(second + tmr_slack_tsc > len2 && second < len2 + tmr_slack_tsc,
		       "then the new period: %lu cycles", second);
	}
	tmr_spin_until(tmr_stamp(TMR_VEC, c + 1) + len2 / 2);
	apic_write(LAPIC_TMICT, 0);
	tmcct = apic_read(LAPIC_TMCCT);
	quiet = tmr_quiet(how, TMR_VEC, 3 * len2);
	report(tmcct == 0, "TMICT=0: TMCCT reads 0 (%u)", tmcct);
	report(quiet, "TMICT=0: no interrupt within 3 periods");
}

/*
 * An expiry while IF=0 stays pending and is taken as soon as STI lets it
 * in: right after STI, or by waking the STI;HLT at once (SDM: pending
 * interrupts, virtual-interrupt delivery and interrupt-window exits all
 * end the HLT state). Periodic, so a lost wake-up shows up as one period
 * late instead of a halt that never ends.
 */
static void test_pending_at_sti(enum tmr_wait how)
{
	uint64_t t0, ts, at;
	uint32_t masked;

	t0 = tmr_arm(LAPIC_TIMER_PERIODIC, false, count);
	cli();
	tmr_spin_until(t0 + len + len / 2);
	masked = tmr_count(TMR_VEC);
	ts = rdtsc();
	if (how == TMR_HLT) {
		safe_halt();
	} else {
		sti();
		tmr_wait(how, TMR_VEC, 1, ts + len);
	}
	at = tmr_stamp(TMR_VEC, 0) - ts;
	apic_write(LAPIC_TMICT, 0);
	report(!masked && tmr_count(TMR_VEC) && at < tmr_slack_tsc,
	       "expiry while IF=0: taken %lu cycles after STI, at most %lu (%u while IF=0)",
	       at, tmr_slack_tsc, masked);
}

static void test_periodic(enum tmr_wait how)
{
	report_prefix_push(tmr_wait_name[how]);
	test_ticks(how);
	test_tmcct(how);
	test_restart_stop(how);
	test_pending_at_sti(how);
	tmr_stop();
	report_prefix_pop();
}

int main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	report_prefix_push("timer_periodic");
	if (tmr_init()) {
		count = tmr_tsc_to_ticks(tmr_us_to_tsc(PERIOD_US), 1);
		drift_max = arg_get_ulong("drift_max", 0);
		len = tmr_ticks_to_tsc(count, 1);
		for (enum tmr_wait how = 0; how < TMR_NR_WAITS; how++)
			test_periodic(how);
	}
	report_prefix_pop();
	return report_summary();
}
