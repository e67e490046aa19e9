// SPDX-License-Identifier: BSD-2-Clause
/*
 * timer_stress: hostile values in the timer registers. The longest count
 * (TMICT 0xffffffff at divide 128, hours) does not fire in a short wait
 * and TMCCT runs; a 1-tick periodic count is clamped by tickvisor to its
 * minimum period (DESIGN.md, "Timer rules": 200 us by default, against
 * interrupt storms), so the guest keeps running and gets at most
 * window / min period + 1 interrupts; a TSC deadline 2^60 cycles ahead
 * or at 2^64 - 1 never fires. After each, the timer is re-armed with a
 * sane value and fires on time: nothing stuck.
 *
 * The "never fires" waits are spun through, in the spinning pass only:
 * halting needs the timer itself to wake up. The halted pass (STI; HLT)
 * arms the same hostile values and waits, halted, for the clamped
 * periodic timer and for the sane value that replaces each of them.
 *
 * Arguments: slack_us=N (how late an interrupt may be, default 50),
 * min_period_us=N (tickvisor's min_period_us, default 200).
 */
#include "lib/guest.h"
#include "lib/timer_util.h"

#define WAIT_US                 2000u   /* "does not fire" windows */
#define STORM_WINDOW_US         5000u
#define MIN_PERIOD_US           200u
#define SANE_US                 500u    /* the re-armed timer */
#define PROGRESS_MIN            1000u   /* main-loop rounds in the storm window */
#define FAR_DEADLINE            BIT(60)

static uint64_t wait_len;               /* WAIT_US in TSC cycles */

/* The timer still works: a one-shot (count modes) or a deadline (TSC-
 * deadline mode) of SANE_US fires on time. */
static void check_rearm(enum tmr_wait how, const char *after)
{
	uint64_t len = tmr_us_to_tsc(SANE_US), t0, at;
	uint32_t n = tmr_count(TMR_VEC), lvtt = apic_read(LAPIC_LVT_TIMER);
	bool fired;

	t0 = rdtsc();
	if (FIELD_GET(LAPIC_LVT_TIMER_MODE, lvtt) == LAPIC_TIMER_TSC_DEADLINE) {
		wrmsr(MSR_IA32_TSC_DEADLINE, t0 + len);
	} else {
		apic_write(LAPIC_LVT_TIMER, tmr_lvtt(LAPIC_TIMER_ONESHOT, TMR_VEC, false));
		apic_write(LAPIC_TDCR, tmr_tdcr(1));
		t0 = rdtsc();
		apic_write(LAPIC_TMICT, tmr_tsc_to_ticks(len, 1));
	}
	fired = tmr_wait(how, TMR_VEC, n + 1, t0 + 2 * len + tmr_slack_tsc);
	at = tmr_stamp(TMR_VEC, n) - t0;
	report(fired && at >= len && at < len + tmr_slack_tsc,
	       "after %s: re-armed for %lu cycles, fires after %lu", after, len, fired ? at : 0);
}

static void test_longest_count(enum tmr_wait how)
{
	uint64_t t0, t1, t2, t3, per_tick = tmr_ticks_to_tsc(1, 128);
	uint32_t s1, s2;
	bool quiet;

	tmr_stop();
	apic_write(LAPIC_TDCR, tmr_tdcr(128));
	apic_write(LAPIC_LVT_TIMER, tmr_lvtt(LAPIC_TIMER_ONESHOT, TMR_VEC, false));
	t0 = rdtsc();
	apic_write(LAPIC_TMICT, 0xffffffffu);
	s1 = apic_read(LAPIC_TMCCT);
	t1 = rdtsc();
	if (how == TMR_SPIN) {
		quiet = tmr_quiet(TMR_SPIN, TMR_VEC, wait_len);
		t2 = rdtsc();
		s2 = apic_read(LAPIC_TMCCT);
		t3 = rdtsc();
		report(quiet, "TMICT 0xffffffff at divide 128: no interrupt within %u us", WAIT_US);
		/* The first read was in [t0, t1], the second in [t2, t3]. */
		report(s2 < s1 && s1 - s2 <= (t3 - t0) / per_tick + 1 &&
		       s1 - s2 + 1 >= (t2 - t1) / per_tick,
		       "TMCCT runs at divide 128: 0x%x then 0x%x, %lu cycles later",
		       s1, s2, t2 - t1);
	}
	check_rearm(how, "TMICT 0xffffffff");
}

/*
 * A 1-tick periodic count, clamped to the minimum period. The window
 * starts once the TMICT write is back: tickvisor may take long over it
 * (it logs the clamp), and the first tick after such a delay is late and
 * followed at once by one catch-up tick (DESIGN.md: a periodic target
 * already past moves to now), so the gaps are taken from the second
 * interrupt in the window on.
 */
static void test_tiny_period(enum tmr_wait how)
{
	uint64_t window = tmr_us_to_tsc(STORM_WINDOW_US), tw, t0, end, at, prev = 0;
	uint64_t min_period = tmr_us_to_tsc(arg_get_ulong("min_period_us", MIN_PERIOD_US));
	uint64_t rounds = 0, min_gap = ~0ull;
	uint32_t n = 0, tmcct, most = (uint32_t)(window / min_period) + 1;

	if (!tickvisor_present()) {
		report_skip("1-tick periodic: a storm without tickvisor's minimum period");
		return;
	}
	tw = tmr_arm(LAPIC_TIMER_PERIODIC, false, 1);
	tmcct = apic_read(LAPIC_TMCCT);
	t0 = rdtsc();
	end = t0 + window;
	for (; rdtsc() <= end; rounds++) {
		if (how == TMR_HLT)
			tmr_wait(how, TMR_VEC, tmr_count(TMR_VEC) + 1, end);
		else
			pause();
	}
	apic_write(LAPIC_TMICT, 0);
	for (uint32_t i = 0; i < tmr_count(TMR_VEC) && i < TMR_MAX_STAMPS; i++) {
		at = tmr_stamp(TMR_VEC, i);
		if (at < t0 || at > end)
			continue;
		if (++n > 2 && at - prev < min_gap)
			min_gap = at - prev;
		prev = at;
	}
	report_info("TMICT 1 write took %lu cycles; %u interrupts before the window",
		    t0 - tw, tmr_count(TMR_VEC) - n);
	report(n >= 1 && n <= most, "TMICT 1, periodic: %u interrupts in %u us, at most %u",
	       n, STORM_WINDOW_US, most);
	report(n < 3 || min_gap + tmr_slack_tsc >= min_period,
	       "TMICT 1, periodic: interrupts at least %lu cycles apart (min period %lu)",
	       n < 3 ? 0 : min_gap, min_period);
	report(tmcct <= 1, "TMICT 1, periodic: TMCCT never above TMICT (%u)", tmcct);
	report(how == TMR_HLT ? rounds >= n - 1 : rounds >= PROGRESS_MIN,
	       "TMICT 1, periodic: the guest makes progress (%lu %s)", rounds,
	       how == TMR_HLT ? "wake-ups" : "loop rounds");
	check_rearm(how, "TMICT 1 periodic");
}

/* now + 2^60, and the largest value (where "target - TSC offset" style
 * arithmetic would wrap). */
static void test_far_deadline(enum tmr_wait how)
{
	static const char *const names[] = { "now + 2^60", "2^64 - 1" };
	uint64_t dl, msr;
	bool quiet;

	if (!tmr_has_tsc_deadline()) {
		report_skip("no TSC-deadline mode (CPUID.1:ECX[24])");
		return;
	}
	tmr_stop();
	apic_write(LAPIC_LVT_TIMER, tmr_lvtt(LAPIC_TIMER_TSC_DEADLINE, TMR_VEC, false));
	for (unsigned i = 0; i < ARRAY_SIZE(names); i++) {
		dl = i ? ~0ull : rdtsc() + FAR_DEADLINE;
		wrmsr(MSR_IA32_TSC_DEADLINE, dl);
		if (how != TMR_SPIN)
			continue;
		msr = rdmsr(MSR_IA32_TSC_DEADLINE);
		quiet = tmr_quiet(TMR_SPIN, TMR_VEC, wait_len);
		report(msr == dl, "deadline %s: MSR reads it back (0x%lx)", names[i], msr);
		report(quiet && rdmsr(MSR_IA32_TSC_DEADLINE) == dl,
		       "deadline %s: no interrupt within %u us, still armed", names[i], WAIT_US);
	}
	check_rearm(how, "a deadline 2^64 - 1");
}

static void test_stress(enum tmr_wait how)
{
	report_prefix_push(tmr_wait_name[how]);
	test_longest_count(how);
	test_tiny_period(how);
	test_far_deadline(how);
	tmr_stop();
	report_prefix_pop();
}

int main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	report_prefix_push("timer_stress");
	if (tmr_init()) {
		wait_len = tmr_us_to_tsc(WAIT_US);
		for (enum tmr_wait how = 0; how < TMR_NR_WAITS; how++)
			test_stress(how);
	}
	report_prefix_pop();
	return report_summary();
}
