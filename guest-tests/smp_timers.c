// SPDX-License-Identifier: BSD-2-Clause
/*
 * smp_timers: local APIC timers of all CPUs firing at the same time
 * (Intel SDM Vol. 3A, "APIC Timer"; DESIGN.md, "Timer rules": one target
 * per vCPU, each on its own CPU's backend).
 *
 * CPU n runs a periodic timer with period (n + 2) * period_us / 2
 * (default period_us 500: 500, 750, 1000, 1250 us), divide by 1. All CPUs
 * count their ticks over the same window of window_ms (default 50) TSC
 * time, starting together; each count must be window / period within +-1,
 * and each CPU's ticks must arrive on that CPU only (the handler counts
 * per CPU). Needs the APIC timer rate: tickvisor's TV_HC_INFO or CPUID
 * 0x15's crystal, else the test is skipped.
 *
 * Under tickvisor it also reports, for tests/bench.py, the VM exits the
 * whole guest took in the window per tick of all its CPUs
 * (exits_smp_periodic_tick: 1 with the preemption timer, 0 when a
 * housekeeping CPU posts them, timer=posted).
 */
#include "lib/bench.h"
#include "lib/guest.h"
#include "lib/smp.h"
#include "lib/tsc.h"

#define TIMER_VECTOR            0x50u
#define PERIOD_US_DEFAULT       500u
#define WINDOW_MS_DEFAULT       50u
#define START_DELAY_US          2000u   /* all CPUs armed before the window opens */
#define STOP_DELAY_US           100u    /* no CPU stops its timer inside the window's count */

struct cpu_run {
	uint64_t period_us;
	uint32_t tmict;
	uint32_t at_start, at_end;      /* ticks seen at the window's edges */
	bool armed;                     /* before the window opened */
};

static volatile uint32_t ticks[MAX_CPUS];
static struct cpu_run runs[MAX_CPUS];
static uint64_t timer_hz;
static uint64_t window_start, window_end;       /* TSC, for every CPU */
static uint64_t exits_at_start, exits_at_end;   /* the whole guest's, under tickvisor */

static void timer_handler(struct ex_regs *regs)
{
	unsigned me = smp_id();

	(void)regs;
	ticks[me]++;
	apic_eoi();
}

static uint64_t apic_timer_hz(void)
{
	struct tv_info info;
	struct cpuid r;

	if (tickvisor_present() && tv_get_info(&info) && info.apic_timer_hz)
		return info.apic_timer_hz;
	if (cpuid(0).a >= 0x15 && (r = cpuid(0x15)).c)
		return r.c;             /* crystal clock = APIC timer clock */
	return 0;
}

static void spin_until(uint64_t tsc)
{
	while (!tsc_passed(tsc))
		pause();
}

/* On every CPU at once: arm, wait for the common window, count, stop. */
static void run_timer(void *arg)
{
	unsigned me = smp_id();
	struct cpu_run *r = &runs[me];

	(void)arg;
	apic_write(LAPIC_TDCR, LAPIC_TDCR_DIV1);
	apic_write(LAPIC_LVT_TIMER, (uint32_t)FIELD_PREP(LAPIC_LVT_TIMER_MODE,
							   LAPIC_TIMER_PERIODIC) | TIMER_VECTOR);
	apic_write(LAPIC_TMICT, r->tmict);
	r->armed = !tsc_passed(window_start);
	spin_until(window_start);
	r->at_start = ticks[me];
	if (me == 0 && tickvisor_present())
		exits_at_start = tv_exits(TV_EXITS_TOTAL);
	spin_until(window_end);
	r->at_end = ticks[me];
	if (me == 0 && tickvisor_present())
		exits_at_end = tv_exits(TV_EXITS_TOTAL);
	/* Stopping takes VM exits (LVTT, TMICT): after CPU 0 has counted. */
	spin_until(window_end + tsc_from_us(STOP_DELAY_US));
	apic_write(LAPIC_LVT_TIMER, LAPIC_LVT_MASKED | TIMER_VECTOR);
	apic_write(LAPIC_TMICT, 0);
}

/* A count n over window w with period p: |n * p - w| <= p. */
static bool count_ok(uint32_t n, uint64_t window_us, uint64_t period_us)
{
	uint64_t span = n * period_us;

	return (span > window_us ? span - window_us : window_us - span) <= period_us;
}

int main(int argc, char **argv)
{
	uint64_t period_us = arg_get_ulong("period_us", PERIOD_US_DEFAULT);
	uint64_t window_us = arg_get_ulong("window_ms", WINDOW_MS_DEFAULT) * 1000;
	unsigned n = cpu_count();
	bool ok, stray = false;

	(void)argc;
	(void)argv;
	report_prefix_push("smp_timers");
	timer_hz = apic_timer_hz();
	if (!timer_hz) {
		report_skip("APIC timer rate unknown (no tickvisor, no CPUID 0x15 crystal)");
		return report_summary();
	}
	handle_irq(TIMER_VECTOR, timer_handler);
	if (!smp_init_report())
		return report_summary();
	for (unsigned cpu = 0; cpu < n; cpu++) {
		runs[cpu].period_us = (cpu + 2) * period_us / 2;
		runs[cpu].tmict = (uint32_t)(runs[cpu].period_us * timer_hz / 1000000);
	}
	sti();
	window_start = tsc_deadline_us(START_DELAY_US);
	window_end = window_start + tsc_from_us(window_us);
	ok = on_cpus(run_timer, NULL);
	report(ok, "%u CPUs ran periodic timers over one %lu ms window", n, window_us / 1000);
	for (unsigned cpu = 0; cpu < n; cpu++) {
		struct cpu_run *r = &runs[cpu];
		uint32_t got = r->at_end - r->at_start;

		report(r->armed && count_ok(got, window_us, r->period_us),
		       "CPU %u: period %lu us: %u ticks in %lu ms (%lu expected +-1)%s", cpu,
		       r->period_us, got, window_us / 1000, window_us / r->period_us,
		       r->armed ? "" : ", armed too late");
	}
	if (exits_at_end) {
		uint32_t all = 0;

		for (unsigned cpu = 0; cpu < n; cpu++)
			all += runs[cpu].at_end - runs[cpu].at_start;
		/* Less the VMCALL that read the count at the window's end. */
		bench_report_value("exits_smp_periodic_tick", "exits", all,
				   (int64_t)(exits_at_end - exits_at_start - 1));
	}
	/* Masked and stopped: nothing more may arrive anywhere. */
	for (unsigned cpu = 0; cpu < n; cpu++)
		runs[cpu].at_start = ticks[cpu];
	tsc_delay_us(4 * period_us);
	for (unsigned cpu = 0; cpu < n; cpu++)
		stray |= ticks[cpu] != runs[cpu].at_start;
	report(!stray, "timers stop with their CPU's window; no ticks after");
	return report_summary();
}
