// SPDX-License-Identifier: BSD-2-Clause
/*
 * trace_points: one of each event tickvisor's trace points report
 * (log=trace:timer,ipi; issue 11.9), for the harness suite trace-timer-ipi
 * that reads their lines: a one-shot timer and a TSC deadline, each armed,
 * expired and injected, waited for by spinning and by HLT, and a self-IPI
 * sent and delivered. Each event is checked to happen, not when: a traced
 * event costs tickvisor thousands of cycles of output, which would fail
 * the latency bounds of the timer_* tests, so those run untraced.
 */
#include "lib/guest.h"
#include "lib/apic_util.h"
#include "lib/timer_util.h"

#define IPI_VEC         0x70u
#define WAIT_MS         50u             /* generous: tracing is slow */

static volatile uint32_t ipi_hits;

static void on_ipi(struct ex_regs *r)
{
	(void)r;
	ipi_hits++;
	apic_eoi();
}

static void test_oneshot(enum tmr_wait how)
{
	uint64_t t0 = tmr_arm(LAPIC_TIMER_ONESHOT, false, 1000);

	report(tmr_wait(how, TMR_VEC, 1, t0 + tmr_us_to_tsc(WAIT_MS * 1000)),
	       "one-shot, %s: fires", tmr_wait_name[how]);
	tmr_stop();
}

static void test_tsc_deadline(enum tmr_wait how)
{
	uint64_t t0;

	tmr_stop();
	apic_write(LAPIC_LVT_TIMER, tmr_lvtt(LAPIC_TIMER_TSC_DEADLINE, TMR_VEC, false));
	t0 = rdtsc();
	wrmsr(MSR_IA32_TSC_DEADLINE, t0 + 2000);
	report(tmr_wait(how, TMR_VEC, 1, t0 + tmr_us_to_tsc(WAIT_MS * 1000)),
	       "TSC deadline, %s: fires", tmr_wait_name[how]);
	tmr_stop();
}

static void test_self_ipi(void)
{
	handle_irq(IPI_VEC, on_ipi);
	cli();
	apic_icr_write((uint32_t)FIELD_PREP(LAPIC_ICR_SHORTHAND, LAPIC_DEST_SELF) | IPI_VEC, 0);
	apic_util_let_in(&ipi_hits, 1);
	report(ipi_hits == 1, "self-IPI delivered once (%u)", ipi_hits);
}

int main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	report_prefix_push("trace_points");
	if (tmr_init()) {
		for (enum tmr_wait how = 0; how < TMR_NR_WAITS; how++) {
			test_oneshot(how);
			if (tmr_has_tsc_deadline())
				test_tsc_deadline(how);
		}
		test_self_ipi();
	}
	report_prefix_pop();
	return report_summary();
}
