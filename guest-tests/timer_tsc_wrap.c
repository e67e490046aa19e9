// SPDX-License-Identifier: BSD-2-Clause
/*
 * timer_tsc_wrap: APIC timers while the guest TSC wraps past 2^64. A guest
 * may write IA32_TSC with any value (Intel SDM Vol. 3B, "Time-Stamp
 * Counter"); the APIC timer counts on the APIC clock, whatever the TSC
 * reads. tickvisor keeps its timer targets in guest TSC units, so they
 * wrap too: compared by signed difference (as Xen's vpt.c does), a
 * periodic timer straddling the wrap still fires once per period. A TSC
 * deadline is compared with the TSC absolutely (SDM "TSC-Deadline Mode":
 * the interrupt comes when the TSC is greater than or equal to the
 * deadline; Bochs's apic.cc and KVM's start_sw_tscdeadline compare the
 * same way): a deadline below a TSC near 2^64 fires at once.
 *
 * The waits here compare TSC values by signed difference too: the
 * runtime's tmr_wait()/tmr_quiet() take an absolute limit, which a wrap
 * would end at once.
 *
 * Arguments: slack_us=N (how late an interrupt may be, default 50).
 */
#include "lib/guest.h"
#include "lib/timer_util.h"

#define PERIOD_US               1000u
#define PERIODS                 6u

static uint32_t count;                  /* TMICT for PERIOD_US at divide 1 */
static uint64_t len;                    /* that in TSC cycles */

/* Until `want` interrupts on TMR_VEC or `cycles` from `t0` have passed;
 * by spinning or halted (a running timer wakes the halt). */
static bool wait_wrapsafe(enum tmr_wait how, uint32_t want, uint64_t t0, uint64_t cycles)
{
	while (tmr_count(TMR_VEC) < want && rdtsc() - t0 < cycles) {
		if (how == TMR_HLT) {
			safe_halt();
			cli();
		} else {
			pause();
		}
	}
	if (how == TMR_HLT)
		sti();
	return tmr_count(TMR_VEC) >= want;
}

/* The TSC jumps to `before` cycles ahead of the wrap. */
static void tsc_near_wrap(uint64_t before)
{
	wrmsr(MSR_IA32_TSC, (uint64_t)0 - before);
}

/* Periodic, started 2.5 periods before the wrap: interrupt k comes k
 * periods after the start (no burst after the wrap), and no other. */
static void test_periodic(enum tmr_wait how)
{
	uint64_t t0, at, worst = 0;
	uint32_t n, extra;
	bool on_time = true;

	tmr_stop();
	tsc_near_wrap(5 * len / 2);
	t0 = tmr_arm(LAPIC_TIMER_PERIODIC, false, count);
	wait_wrapsafe(how, PERIODS, t0, PERIODS * len + len / 2);
	/* half a period more, spinning: a burst would show here too */
	wait_wrapsafe(TMR_SPIN, PERIODS + 1, rdtsc(), len / 2);
	apic_write(LAPIC_TMICT, 0);
	n = tmr_count(TMR_VEC);
	extra = n > PERIODS ? n - PERIODS : 0;
	for (uint32_t i = 0; i < n && i < PERIODS; i++) {
		at = tmr_stamp(TMR_VEC, i) - t0 - (i + 1) * len;       /* lateness */
		worst = at > worst ? at : worst;
		on_time = on_time && at < tmr_slack_tsc;
	}
	report(n >= PERIODS && !extra, "%s: periodic across the wrap: %u interrupts in %u.5 "
	       "periods", tmr_wait_name[how], n, PERIODS);
	report(n >= PERIODS && on_time, "%s: each one period after the one before (latest by %ld "
	       "cycles)", tmr_wait_name[how], (int64_t)worst);
	tmr_stop();
}

/* One-shot started half a count before the wrap: fires one count later. */
static void test_oneshot(enum tmr_wait how)
{
	uint64_t t0, at = 0;
	bool fired, again;

	tmr_stop();
	tsc_near_wrap(len / 2);
	t0 = tmr_arm(LAPIC_TIMER_ONESHOT, false, count);
	fired = wait_wrapsafe(how, 1, t0, 3 * len);
	if (fired)
		at = tmr_stamp(TMR_VEC, 0) - t0;
	again = wait_wrapsafe(TMR_SPIN, 2, rdtsc(), 2 * len);
	report(fired && at >= len && at < len + tmr_slack_tsc,
	       "%s: one-shot across the wrap fires after %lu cycles (count %lu)",
	       tmr_wait_name[how], at, len);
	report(fired && !again, "%s: and only once", tmr_wait_name[how]);
}

/* TSC-deadline near the wrap: one just ahead fires on time, one below
 * the TSC (past the wrap, "small") fires at once. */
static void test_deadline(enum tmr_wait how)
{
	uint64_t t0, t1, at = 0, at2 = 0;
	bool fired, fired2;

	/* Timed part first: a report line takes longer than the TSC has
	 * left before the wrap. */
	tmr_stop();
	apic_write(LAPIC_LVT_TIMER, tmr_lvtt(LAPIC_TIMER_TSC_DEADLINE, TMR_VEC, false));
	tsc_near_wrap(3 * len);
	t0 = rdtsc();
	wrmsr(MSR_IA32_TSC_DEADLINE, t0 + len);
	fired = wait_wrapsafe(how, 1, t0, 3 * len);
	if (fired)
		at = tmr_stamp(TMR_VEC, 0) - t0;
	t1 = rdtsc();
	wrmsr(MSR_IA32_TSC_DEADLINE, len);      /* below the TSC: already reached */
	fired2 = wait_wrapsafe(TMR_SPIN, 2, t1, 3 * len);
	if (fired2)
		at2 = tmr_stamp(TMR_VEC, 1) - t1;
	tmr_stop();
	report(fired && at >= len && at < len + tmr_slack_tsc,
	       "%s: deadline just before the wrap fires after %lu cycles (%lu)",
	       tmr_wait_name[how], at, len);
	report(fired2 && at2 < tmr_slack_tsc, "%s: deadline %lu below TSC 0x%lx fires at once "
	       "(%lu cycles)", tmr_wait_name[how], len, t1, at2);
}

int main(int argc, char **argv)
{
	uint64_t adjust;

	(void)argc;
	(void)argv;
	report_prefix_push("timer_tsc_wrap");
	if (tmr_init()) {
		adjust = rdmsr(MSR_IA32_TSC_ADJUST);
		count = tmr_tsc_to_ticks(tmr_us_to_tsc(PERIOD_US), 1);
		len = tmr_ticks_to_tsc(count, 1);
		for (enum tmr_wait how = 0; how < TMR_NR_WAITS; how++) {
			test_periodic(how);
			test_oneshot(how);
			if (tmr_has_tsc_deadline())
				test_deadline(how);
		}
		wrmsr(MSR_IA32_TSC_ADJUST, adjust);     /* the TSC back where it was */
	}
	report_prefix_pop();
	return report_summary();
}
