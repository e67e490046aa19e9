// SPDX-License-Identifier: BSD-2-Clause
/*
 * timer_tsc_adjust: APIC timers when the guest moves its own TSC (Intel
 * SDM Vol. 3B, "Time-Stamp Counter"; DESIGN.md: deadlines respect the
 * guest's TSC offset and IA32_TSC_ADJUST). Writing IA32_TSC_ADJUST moves
 * the TSC by the difference, and writing IA32_TSC moves IA32_TSC_ADJUST
 * by the same amount. A TSC deadline is a TSC value: moving the TSC
 * toward it makes it fire sooner in real time. A one-shot count runs on
 * the APIC clock: it takes the same real time whatever the TSC does.
 *
 * Arguments: slack_us=N (how late an interrupt may be, default 50).
 */
#include "lib/guest.h"
#include "lib/timer_util.h"

#define SHORT_US            1000u       /* time the timers are set for */
#define JUMP_US             5000u       /* how far the TSC is moved */

static uint64_t len, jump;

static void test_adjust_msrs(void)
{
	uint64_t a0 = rdmsr(MSR_IA32_TSC_ADJUST), t0, t1, a1, tsc;

	report(a0 == 0, "IA32_TSC_ADJUST starts at 0 (%ld)", (int64_t)a0);
	t0 = rdtsc();
	wrmsr(MSR_IA32_TSC_ADJUST, a0 + jump);
	t1 = rdtsc();
	report(t1 - t0 >= jump && t1 - t0 < jump + tmr_slack_tsc,
	       "TSC_ADJUST += %lu moves the TSC by as much (%lu)", jump, t1 - t0);
	tsc = rdtsc();
	wrmsr(MSR_IA32_TSC, tsc + jump);
	a1 = rdmsr(MSR_IA32_TSC_ADJUST);
	/* The write lands a little after `tsc` was read: the TSC moves by
	 * slightly less than `jump`, and TSC_ADJUST by exactly that much. */
	report(a1 - (a0 + jump) <= jump && a1 - (a0 + jump) > jump - tmr_slack_tsc,
	       "a TSC write moves TSC_ADJUST by the same amount (%+ld)",
	       (int64_t)(a1 - a0 - jump));
	wrmsr(MSR_IA32_TSC_ADJUST, a0);
}

/* Deadline 'len + jump' ahead, then the TSC jumps by 'jump': it fires
 * 'len' later in real time, at or after its TSC value. */
static void test_deadline(enum tmr_wait how)
{
	uint64_t a0 = rdmsr(MSR_IA32_TSC_ADJUST), dl, moved, at;
	bool fired;

	tmr_stop();
	apic_write(LAPIC_LVT_TIMER, tmr_lvtt(LAPIC_TIMER_TSC_DEADLINE, TMR_VEC, false));
	dl = rdtsc() + len + jump;
	wrmsr(MSR_IA32_TSC_DEADLINE, dl);
	wrmsr(MSR_IA32_TSC_ADJUST, a0 + jump);
	moved = rdtsc();
	fired = tmr_wait(how, TMR_VEC, 1, dl + 3 * len);
	at = tmr_stamp(TMR_VEC, 0);
	wrmsr(MSR_IA32_TSC_ADJUST, a0);
	if (report(fired, "%s: deadline fires after the TSC jumped toward it",
		   tmr_wait_name[how])) {
		report(at >= dl, "%s: not before its TSC value (%+ld)", tmr_wait_name[how],
		       (int64_t)(at - dl));
		report(at - moved < len + tmr_slack_tsc, "%s: %lu cycles after the jump, not %lu",
		       tmr_wait_name[how], at - moved, len + jump);
	}
}

/* One-shot for 'len', then the TSC jumps: the interrupt still comes 'len'
 * of real time after the write, i.e. 'len + jump' of the moved TSC. */
static void test_count(enum tmr_wait how)
{
	uint64_t a0 = rdmsr(MSR_IA32_TSC_ADJUST), t0, at;
	uint32_t count = tmr_tsc_to_ticks(len, 1);
	bool fired;

	tmr_stop();
	apic_write(LAPIC_TDCR, tmr_tdcr(1));
	apic_write(LAPIC_LVT_TIMER, tmr_lvtt(LAPIC_TIMER_ONESHOT, TMR_VEC, false));
	t0 = rdtsc();
	apic_write(LAPIC_TMICT, count);
	wrmsr(MSR_IA32_TSC_ADJUST, a0 + jump);
	fired = tmr_wait(how, TMR_VEC, 1, t0 + jump + 3 * len);
	at = tmr_stamp(TMR_VEC, 0);
	wrmsr(MSR_IA32_TSC_ADJUST, a0);
	if (report(fired, "%s: one-shot fires after a TSC jump", tmr_wait_name[how])) {
		report(at - t0 >= len + jump, "%s: not early in real time (%lu >= %lu)",
		       tmr_wait_name[how], at - t0, len + jump);
		report(at - t0 < len + jump + tmr_slack_tsc, "%s: not late in real time (%lu)",
		       tmr_wait_name[how], at - t0);
	}
}

int main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	report_prefix_push("timer_tsc_adjust");
	if (!(cpuid_indexed(7, 0).b & BIT(1))) {
		report_skip("no IA32_TSC_ADJUST (CPUID.7:EBX[1])");
	} else if (tmr_init()) {
		len = tmr_us_to_tsc(SHORT_US);
		jump = tmr_us_to_tsc(JUMP_US);
		test_adjust_msrs();
		for (enum tmr_wait how = 0; how < TMR_NR_WAITS; how++) {
			tmr_log_clear();
			test_count(how);
			if (tmr_has_tsc_deadline()) {
				tmr_log_clear();
				test_deadline(how);
			}
		}
	}
	report_prefix_pop();
	return report_summary();
}
