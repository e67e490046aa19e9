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
 *
 * Then coincident TSC deadlines (where CPUID.01H:ECX[24] says the mode
 * exists; SDM Vol. 3A, "TSC-Deadline Mode": the interrupt comes when the
 * TSC reaches IA32_TSC_DEADLINE, on the CPU whose MSR it is): for each of
 * `rounds` (default 200) rounds, every CPU arms its deadline for the same
 * TSC value and spins until its handler ran. Each CPU must take each of
 * its rounds' interrupts, none before the deadline, and none of another
 * CPU's. The latency of every interrupt from the shared deadline is
 * reported (coincident_deadline_lat), and the latest CPU's of each round
 * (coincident_deadline_last): the test of a hypervisor that serves every
 * vCPU's timer from one CPU (timer=posted's housekeeper).
 *
 * masked_every=N (0: never) masks LVTT on CPU c in each round k with
 * (k + c) % N == 0, deadline armed all the same: a masked LVT entry
 * delivers nothing (SDM Vol. 3A, "Local Vector Table": the mask bit
 * inhibits reception of the interrupt; KVM's kvm_apic_local_deliver() and
 * Bochs's apic.cc timer expiry look at it the same way), so that CPU takes
 * no interrupt that round, while the others of the round take theirs on
 * time. Under timer=posted this splits the group of posts due at one TSC
 * (vmm/apic/housekeeper.c, group_size()) at a different place each round.
 */
#include "lib/apic_util.h"
#include "lib/bench.h"
#include "lib/guest.h"
#include "lib/smp.h"
#include "lib/tsc.h"

#define TIMER_VECTOR            0x50u
#define PERIOD_US_DEFAULT       500u
#define WINDOW_MS_DEFAULT       50u
#define START_DELAY_US          2000u   /* all CPUs armed before the window opens */
#define STOP_DELAY_US           100u    /* no CPU stops its timer inside the window's count */
#define DEADLINE_VECTOR         0x51u
#define ROUNDS_DEFAULT          200u
#define ROUNDS_MAX              1000u
#define ROUND_GAP_US            100u    /* between two rounds' deadlines */
#define ROUND_WAIT_US           10000u  /* a round's interrupt not come by then: lost */
#define MASKED_WAIT_US          20u     /* a masked round's CPU waits past the deadline */

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

/* Coincident deadlines: the round each CPU waits on, and what came. */
static volatile uint64_t round_deadline;
static volatile uint32_t round_no;
static volatile uint32_t got_round[MAX_CPUS];          /* the round last taken, +1 */
static volatile int64_t lat[MAX_CPUS][ROUNDS_MAX];
static volatile uint32_t early[MAX_CPUS], lost[MAX_CPUS], doubled[MAX_CPUS];
static volatile bool masked_round[MAX_CPUS];
static volatile uint32_t masked_taken[MAX_CPUS], masked_rounds[MAX_CPUS];
static uint32_t rounds, masked_every;
static int64_t samples[MAX_CPUS * ROUNDS_MAX], last[ROUNDS_MAX];

static void deadline_handler(struct ex_regs *regs)
{
	uint64_t now = rdtsc();
	unsigned me = smp_id();
	uint32_t k = round_no;

	(void)regs;
	if (masked_round[me]) {
		masked_taken[me]++;
	} else if (got_round[me] == k + 1) {
		doubled[me]++;
	} else {
		got_round[me] = k + 1;
		lat[me][k] = (int64_t)(now - round_deadline);
		early[me] += now < round_deadline;
	}
	apic_eoi();
}

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

/* Round k's deadline lies (7k mod 16) cycles further: in Bochs, whose
 * clock moves a round of the CPUs' turns at a time, every deadline at one
 * distance from CPU 0's write would fall at one point of the loops that
 * deliver it, and every round repeat one latency (bench_timer's phases
 * say more). */
static uint64_t round_phase(uint32_t k)
{
	return (k * 7u) & 15u;
}

/* Every CPU: its deadline for each round, the same TSC value on all,
 * set by CPU 0 between rounds (all wait for it); spins until taken. */
static void run_deadlines(void *arg)
{
	uint32_t lvtt = (uint32_t)FIELD_PREP(LAPIC_LVT_TIMER_MODE, LAPIC_TIMER_TSC_DEADLINE) |
			DEADLINE_VECTOR;
	unsigned me = smp_id();

	(void)arg;
	apic_write(LAPIC_LVT_TIMER, lvtt);
	for (uint32_t k = 0; k < rounds; k++) {
		bool masked = masked_every && (k + me) % masked_every == 0;

		while (round_no != k)
			pause();
		if (masked) {
			masked_round[me] = true;
			masked_rounds[me]++;
			apic_write(LAPIC_LVT_TIMER, lvtt | LAPIC_LVT_MASKED);
		}
		wrmsr(MSR_IA32_TSC_DEADLINE, round_deadline);
		if (masked) {
			spin_until(round_deadline + tsc_from_us(MASKED_WAIT_US));
			apic_write(LAPIC_LVT_TIMER, lvtt);
			masked_round[me] = false;
			lat[me][k] = INT64_MIN;         /* no sample */
			got_round[me] = k + 1;
		} else if (!apic_util_wait(&got_round[me], k + 1, ROUND_WAIT_US)) {
			lost[me]++;
			wrmsr(MSR_IA32_TSC_DEADLINE, 0);
		}
		/* CPU 0 opens the next round once every CPU is done. */
		if (me == 0) {
			for (unsigned c = 1; c < cpu_count(); c++)
				apic_util_wait(&got_round[c], k + 1, ROUND_WAIT_US);
			round_deadline = tsc_deadline_us(ROUND_GAP_US) + round_phase(k + 1);
			round_no = k + 1;
		}
	}
	apic_write(LAPIC_LVT_TIMER, LAPIC_LVT_MASKED | DEADLINE_VECTOR);
}

static void coincident_deadlines(unsigned n)
{
	uint32_t taken = 0, bad_early = 0, bad_lost = 0, bad_doubled = 0, bad_masked = 0;
	uint32_t nmasked = 0;
	uint64_t nsamples = 0;

	if (!(cpuid(1).c & CPUID_1_ECX_TSC_DEADLINE)) {
		report_skip("coincident TSC deadlines: no TSC-deadline mode (CPUID.01H:ECX[24])");
		return;
	}
	rounds = (uint32_t)arg_get_ulong("rounds", ROUNDS_DEFAULT);
	if (rounds > ROUNDS_MAX)
		rounds = ROUNDS_MAX;
	masked_every = (uint32_t)arg_get_ulong("masked_every", 0);
	handle_irq(DEADLINE_VECTOR, deadline_handler);
	round_deadline = tsc_deadline_us(START_DELAY_US);
	round_no = 0;
	report(on_cpus(run_deadlines, NULL), "%u CPUs armed %u rounds of one TSC deadline each",
	       n, rounds);
	for (uint32_t k = 0; k < rounds; k++)
		last[k] = INT64_MIN;
	for (unsigned c = 0; c < n; c++) {
		bad_early += early[c];
		bad_lost += lost[c];
		bad_doubled += doubled[c];
		bad_masked += masked_taken[c];
		nmasked += masked_rounds[c];
		for (uint32_t k = 0; k < rounds; k++) {
			if (lat[c][k] == INT64_MIN)
				continue;               /* masked that round */
			samples[nsamples++] = lat[c][k];
			last[k] = lat[c][k] > last[k] ? lat[c][k] : last[k];
		}
		taken += got_round[c] == rounds;
	}
	report(taken == n && !bad_lost, "every CPU took its interrupt in each of %u rounds "
	       "(%u lost)", rounds, bad_lost);
	report(!bad_early, "no coincident deadline came before the TSC reached it (%u early)",
	       bad_early);
	report(!bad_doubled, "one interrupt per CPU and round (%u more)", bad_doubled);
	if (masked_every)
		report(nmasked && !bad_masked, "no interrupt in the %u rounds a CPU had LVTT masked "
		       "(%u came)", nmasked, bad_masked);
	if (!bad_lost && !masked_every) {
		bench_report("coincident_deadline_lat", "cycles", samples, nsamples, false);
		bench_report("coincident_deadline_last", "cycles", last, rounds, false);
	}
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
	if (!smp_init_report())
		return report_summary();
	timer_hz = apic_timer_hz();
	if (!timer_hz) {
		report_skip("APIC timer rate unknown (no tickvisor, no CPUID 0x15 crystal)");
		sti();
		coincident_deadlines(n);
		return report_summary();
	}
	handle_irq(TIMER_VECTOR, timer_handler);
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
	coincident_deadlines(n);
	return report_summary();
}
