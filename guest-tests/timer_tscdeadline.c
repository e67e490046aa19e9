// SPDX-License-Identifier: BSD-2-Clause
/*
 * timer_tscdeadline: the APIC timer in TSC-deadline mode (Intel SDM Vol.
 * 3A, "TSC-Deadline Mode"; DESIGN.md, "Timer rules"). With LVTT mode 2 a
 * WRMSR IA32_TSC_DEADLINE arms the timer: it fires once, not before the
 * deadline, and the MSR then reads 0; a deadline already past fires at
 * once; 0 disarms. Outside that mode the MSR reads 0 and ignores writes;
 * inside it TMICT writes are ignored and TMCCT reads 0. Each timing check
 * runs twice: spinning with IF=1, then halted (STI; HLT).
 *
 * Arguments: slack_us=N (how late an interrupt may be, default 50).
 */
#include "lib/guest.h"
#include "lib/timer_util.h"

#define DELAY_US                1000u

static uint64_t len;                    /* DELAY_US in TSC cycles */

static void set_mode(unsigned mode)
{
	tmr_stop();
	apic_write(LAPIC_LVT_TIMER, tmr_lvtt(mode, TMR_VEC, false));
}

static void test_fire(enum tmr_wait how)
{
	uint64_t before, armed, after, dl, at;
	uint32_t tmcct;
	bool fired;

	set_mode(LAPIC_TIMER_TSC_DEADLINE);
	before = rdmsr(MSR_IA32_TSC_DEADLINE);
	dl = rdtsc() + len;
	wrmsr(MSR_IA32_TSC_DEADLINE, dl);
	armed = rdmsr(MSR_IA32_TSC_DEADLINE);
	tmcct = apic_read(LAPIC_TMCCT);
	fired = tmr_wait(how, TMR_VEC, 1, dl + 3 * len);
	after = rdmsr(MSR_IA32_TSC_DEADLINE);
	at = tmr_stamp(TMR_VEC, 0);
	report(before == 0, "MSR reads 0 while disarmed (0x%lx)", before);
	report(armed == dl, "MSR reads the armed deadline (0x%lx)", armed);
	report(tmcct == 0, "TMCCT reads 0 in TSC-deadline mode (%u)", tmcct);
	if (report(fired, "fires")) {
		report(at >= dl, "not before the deadline: %+ld cycles", (int64_t)(at - dl));
		report(at < dl + tmr_slack_tsc, "late by %lu cycles, at most %lu",
		       at - dl, tmr_slack_tsc);
		report_info("lateness %lu cycles (%lu ns) after the deadline", at - dl,
			    tmr_tsc_to_ns(at - dl));
	}
	report(after == 0, "MSR reads 0 after expiry (0x%lx)", after);
	report(tmr_quiet(how, TMR_VEC, 3 * len) && tmr_count(TMR_VEC) == 1,
	       "no second interrupt within 3 delays");
}

static void test_past(enum tmr_wait how)
{
	uint64_t t, at;
	bool fired;

	set_mode(LAPIC_TIMER_TSC_DEADLINE);
	t = rdtsc();
	wrmsr(MSR_IA32_TSC_DEADLINE, t - len);
	fired = tmr_wait(how, TMR_VEC, 1, t + 2 * tmr_slack_tsc);
	at = tmr_stamp(TMR_VEC, 0) - t;
	report(fired && at < tmr_slack_tsc, "a deadline in the past fires at once: %lu cycles "
	       "after the WRMSR, at most %lu", fired ? at : 0, tmr_slack_tsc);
	report(rdmsr(MSR_IA32_TSC_DEADLINE) == 0, "past deadline: MSR reads 0 after expiry");
	report(tmr_quiet(how, TMR_VEC, 3 * len) && tmr_count(TMR_VEC) == 1,
	       "past deadline: fires exactly once");
}

static void test_disarm(enum tmr_wait how)
{
	uint64_t msr;
	bool quiet;

	set_mode(LAPIC_TIMER_TSC_DEADLINE);
	wrmsr(MSR_IA32_TSC_DEADLINE, rdtsc() + len);
	wrmsr(MSR_IA32_TSC_DEADLINE, 0);
	msr = rdmsr(MSR_IA32_TSC_DEADLINE);
	quiet = tmr_quiet(how, TMR_VEC, 3 * len);
	report(msr == 0, "writing 0: MSR reads 0 (0x%lx)", msr);
	report(quiet, "writing 0 disarms: no interrupt within 3 delays");
}

/*
 * Outside TSC-deadline mode the MSR reads 0 and a write must not disturb
 * a running one-shot count: it still fires after its count, not at the
 * deadline. Inside it, a TMICT write must not disturb the deadline.
 */
static void test_other_mode(enum tmr_wait how)
{
	uint64_t t, at, ignored;
	uint32_t tmcct;
	bool fired, quiet;

	set_mode(LAPIC_TIMER_ONESHOT);
	t = rdtsc();
	apic_write(LAPIC_TMICT, tmr_tsc_to_ticks(3 * len, 1));
	wrmsr(MSR_IA32_TSC_DEADLINE, t + len);
	ignored = rdmsr(MSR_IA32_TSC_DEADLINE);
	fired = tmr_wait(how, TMR_VEC, 1, t + 4 * len + tmr_slack_tsc);
	at = tmr_stamp(TMR_VEC, 0) - t;
	report(ignored == 0, "one-shot mode: MSR reads 0 after a write (0x%lx)", ignored);
	report(fired && at >= 3 * len, "one-shot mode: a WRMSR leaves the count alone: fires "
	       "after %lu cycles, count %lu, deadline %lu", fired ? at : 0, 3 * len, len);

	set_mode(LAPIC_TIMER_PERIODIC);
	wrmsr(MSR_IA32_TSC_DEADLINE, rdtsc() + len);
	ignored = rdmsr(MSR_IA32_TSC_DEADLINE);
	quiet = tmr_quiet(how, TMR_VEC, 3 * len);
	report(ignored == 0, "periodic mode: MSR reads 0 after a write (0x%lx)", ignored);
	report(quiet, "periodic mode: the write arms nothing");

	set_mode(LAPIC_TIMER_TSC_DEADLINE);
	t = rdtsc();
	wrmsr(MSR_IA32_TSC_DEADLINE, t + 3 * len);
	apic_write(LAPIC_TMICT, tmr_tsc_to_ticks(len, 1));
	tmcct = apic_read(LAPIC_TMCCT);
	fired = tmr_wait(how, TMR_VEC, 1, t + 4 * len + tmr_slack_tsc);
	at = tmr_stamp(TMR_VEC, 0) - t;
	report(tmcct == 0, "TSC-deadline mode: TMCCT reads 0 after a TMICT write (%u)", tmcct);
	report(fired && at >= 3 * len, "TSC-deadline mode: a TMICT write is ignored: fires after "
	       "%lu cycles, deadline %lu, count %lu", fired ? at : 0, 3 * len, len);
}

static void test_deadline(enum tmr_wait how)
{
	report_prefix_push(tmr_wait_name[how]);
	test_fire(how);
	test_past(how);
	test_disarm(how);
	test_other_mode(how);
	tmr_stop();
	report_prefix_pop();
}

int main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	report_prefix_push("timer_tscdeadline");
	if (!tmr_has_tsc_deadline()) {
		report_skip("no TSC-deadline mode (CPUID.1:ECX[24])");
	} else if (tmr_init()) {
		len = tmr_us_to_tsc(DELAY_US);
		for (enum tmr_wait how = 0; how < TMR_NR_WAITS; how++)
			test_deadline(how);
	}
	report_prefix_pop();
	return report_summary();
}
