// SPDX-License-Identifier: BSD-2-Clause
/*
 * timer_tscdl_past: a TSC deadline far in the past, in x2APIC mode
 * (issue 10.7). Intel SDM Vol. 3A, "TSC-Deadline Mode": "If software
 * writes a value ... that is less than or equal to the current value of
 * the TSC, the timer generates an interrupt immediately" - whatever the
 * distance to the past. KVM (vmx.c, vmx_set_hv_timer: the distance is
 * max(deadline, now) - now, so a past deadline is expired at once) and
 * Bochs (cpu/apic.cc, set_tsc_deadline: a deadline not after the current
 * TSC fires one tick later) agree.
 *
 * A deadline of 1 (or a small value below the hypervisor's entry and
 * exit costs) once made tickvisor's entry wait compute its spin target
 * as "deadline - entry cost" on the host TSC, which wrapped below 0 and
 * spun for 2^64 cycles: no more output, no time limit. Each deadline
 * here must fire at once and exactly once, spinning and halted.
 */
#include "lib/apic_util.h"
#include "lib/guest.h"
#include "lib/timer_util.h"

#define PAST_VEC        TMR_VEC_SENTINEL        /* 0x41, as in the report */
#define QUIET_US        1000u

static void past_once(enum tmr_wait how, uint64_t deadline, const char *what)
{
	uint64_t t, at;
	bool fired;

	tmr_stop();
	apic_write(LAPIC_LVT_TIMER, tmr_lvtt(LAPIC_TIMER_TSC_DEADLINE, PAST_VEC, false));
	t = rdtsc();
	wrmsr(MSR_IA32_TSC_DEADLINE, deadline);
	fired = tmr_wait(how, PAST_VEC, 1, t + 2 * tmr_slack_tsc);
	at = fired ? tmr_stamp(PAST_VEC, 0) - t : 0;
	report(fired && at < tmr_slack_tsc, "%s: deadline %#lx fires at once: %lu cycles after "
	       "the WRMSR, at most %lu", what, deadline, at, tmr_slack_tsc);
	report(rdmsr(MSR_IA32_TSC_DEADLINE) == 0, "%s: MSR reads 0 after expiry", what);
	report(tmr_quiet(TMR_SPIN, PAST_VEC, tmr_us_to_tsc(QUIET_US)) &&
	       tmr_count(PAST_VEC) == 1, "%s: fires exactly once", what);
}

static void past_all(enum tmr_wait how)
{
	report_prefix_push(tmr_wait_name[how]);
	past_once(how, 1, "deadline 1");
	past_once(how, 2, "deadline 2");
	/* Below any plausible entry/exit cost, and far behind. */
	past_once(how, 500, "deadline 500");
	past_once(how, rdtsc() / 2, "half of the TSC");
	tmr_stop();
	report_prefix_pop();
}

int main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	report_prefix_push("timer_tscdl_past");
	if (!tmr_has_tsc_deadline()) {
		report_skip("no TSC-deadline mode (CPUID.1:ECX[24])");
	} else if (!apic_x2apic_offered()) {
		/* its SKIP, or FAIL where tickvisor offers x2APIC */
	} else if (tmr_init()) {
		if (report(enable_x2apic(), "x2APIC mode")) {
			apic_sw_enable();
			for (enum tmr_wait how = 0; how < TMR_NR_WAITS; how++)
				past_all(how);
			reset_apic();
		}
	}
	report_prefix_pop();
	return report_summary();
}
