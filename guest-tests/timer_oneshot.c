// SPDX-License-Identifier: BSD-2-Clause
/*
 * timer_oneshot: the APIC timer in one-shot mode at divide 1 (Intel SDM
 * Vol. 3A, "APIC Timer"): it fires once, no earlier than TMICT ticks
 * after the TMICT write; TMCCT counts down from TMICT and reads 0 once
 * the count has run out. Each timing check runs twice: spinning with
 * IF=1, then halted (STI; HLT).
 *
 * Arguments: slack_us=N (how late an interrupt may be, default 50).
 */
#include "lib/guest.h"
#include "lib/timer_util.h"

#define COUNT_US                1000u   /* the programmed time */

/* DESIGN.md: the APIC timer clock is an exact integer divisor of the
 * TSC, and CPUID 0x15 says so (TSC = crystal * EBX / EAX). */
static void test_timebase(void)
{
	struct cpuid c = cpuid(0x15);

	report_info("TSC %lu Hz, APIC timer %lu Hz (%s), slack %lu cycles (exit round trip %lu)",
		    tmr_clock.tsc_hz, tmr_clock.apic_hz, tmr_clock.source, tmr_slack_tsc,
		    tmr_exit_cost);
	if (!tickvisor_present()) {
		report_skip("time base: not running under tickvisor");
		return;
	}
	report(c.a && c.c == tmr_clock.apic_hz && (uint64_t)c.c * c.b / c.a == tmr_clock.tsc_hz,
	       "CPUID 0x15 (%u/%u, %u Hz) agrees with TV_HC_INFO", c.b, c.a, c.c);
	report(tmr_clock.apic_hz <= tmr_clock.tsc_hz && tmr_clock.tsc_hz % tmr_clock.apic_hz == 0,
	       "APIC timer clock divides the TSC (TSC/%lu)", tmr_clock.tsc_hz / tmr_clock.apic_hz);
}

static void test_oneshot(enum tmr_wait how)
{
	uint32_t count = tmr_tsc_to_ticks(tmr_us_to_tsc(COUNT_US), 1);
	uint64_t len = tmr_ticks_to_tsc(count, 1), t0, elapsed;
	struct tmr_tmcct_watch w;
	bool fired;

	report_prefix_push(tmr_wait_name[how]);
	t0 = tmr_arm(LAPIC_TIMER_ONESHOT, false, count);
	tmr_watch_tmcct(&w, t0 + len / 4);
	fired = tmr_wait(how, TMR_VEC, 1, t0 + 4 * len + tmr_slack_tsc);
	/* Reported once the timer fired: printing is slow (every byte is a
	 * VM exit). At divide 1 a read takes longer than a tick. */
	report(w.samples > 1 && w.drops + 1 == w.samples && w.min && w.max <= count,
	       "TMCCT counts down from TMICT %u: %u reads, %u..%u", count, w.samples, w.min, w.max);
	if (report(fired, "fires")) {
		elapsed = tmr_stamp(TMR_VEC, 0) - t0;
		report(elapsed >= len, "not early: %lu cycles after the write, count %lu",
		       elapsed, len);
		report(elapsed < len + tmr_slack_tsc, "late by %lu cycles, at most %lu",
		       elapsed - len, tmr_slack_tsc);
		report_info("lateness %lu cycles (%lu ns) after the TMICT write",
			    elapsed - len, tmr_tsc_to_ns(elapsed - len));
	}
	report(apic_read(LAPIC_TMCCT) == 0, "TMCCT reads 0 after expiry");
	report(apic_read(LAPIC_TMICT) == count, "TMICT keeps %u", count);
	report(tmr_quiet(how, TMR_VEC, 3 * len) && tmr_count(TMR_VEC) == 1,
	       "no second interrupt within 3 counts");
	tmr_stop();
	report_prefix_pop();
}

int main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	report_prefix_push("timer_oneshot");
	if (tmr_init()) {
		test_timebase();
		for (enum tmr_wait how = 0; how < TMR_NR_WAITS; how++)
			test_oneshot(how);
	}
	report_prefix_pop();
	return report_summary();
}
