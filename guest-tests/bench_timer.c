// SPDX-License-Identifier: BSD-2-Clause
/*
 * bench_timer: APIC timer latency, drift and cost, the same image under
 * tickvisor and natively (GRUB) so the two can be compared figure by
 * figure (tests/bench.py). Every figure is in TSC cycles.
 *
 * Latency is the TSC read first thing in the interrupt handler minus the
 * expected expiration. For TSC-deadline mode that is exact. For one-shot
 * and periodic TMICT it is only known within [TSC before the write,
 * TSC after the write] + the count (shared/seeds/000_*), so both bounds
 * are reported: *_before overstates the latency, *_after understates it.
 *
 * Arguments: n=<iterations> (1000), periods=<n> (10000), delta_us=<us>
 * (100: how far ahead one-shot and TSC-deadline timers are set; well
 * beyond one exit and entry, so the expiry is the backend's to deliver
 * and not folded into the exit that programmed it),
 * period_us=<us> (200), apic=xapic (default x2APIC where the CPU has it),
 * tsc_hz=<Hz> when not under tickvisor (tickvisor reports its own).
 *
 * cold=tscdeadline|oneshot|periodic (issue 24.2): only a fresh guest's
 * first COLD_N expiries of that one kind, spinning, reported as
 * cold_<kind>_lat (periodic: the first tick of COLD_N fresh starts). Each
 * kind needs a guest of its own: tickvisor's advance tuner is per vCPU,
 * so the second kind a guest uses is no longer its first.
 * cold_first=1: all three kinds first, then every other figure - for the
 * native run, which has no tuner to warm (tests/bench.py).
 */
#include "lib/bench.h"
#include "lib/guest.h"

#define TIMER_VEC   0x40u
#define IPI_VEC     0x41u
#define MAX_N       4000u
#define MAX_PERIODS 20000u
#define WAIT_LIMIT  100000000ull        /* TSC cycles before a wait gives up */
#define COLD_N      20u

static volatile uint64_t irq_tsc, irq_count;
static int64_t samples[MAX_N], samples2[MAX_N];
static uint64_t ticks_tsc[MAX_PERIODS];
static int64_t series[MAX_PERIODS];
static uint64_t tsc_per_tick;           /* TSC cycles per APIC timer tick, divide 1 */
static uint64_t record_limit;           /* periodic: store tick times up to this many */

static void timer_irq(struct ex_regs *r)
{
	uint64_t t = rdtsc();
	uint64_t n = irq_count;

	(void)r;
	if (n < record_limit)
		ticks_tsc[n] = t;
	irq_tsc = t;
	irq_count = n + 1;
	apic_eoi();
}

/* Waits for the interrupt count to pass `seen`, spinning or halting. */
static bool wait_irq(uint64_t seen, bool halt)
{
	uint64_t start = rdtsc();

	if (halt) {
		cli();
		while (irq_count == seen && rdtsc() - start < WAIT_LIMIT)
			asm volatile("sti; hlt; cli" ::: "memory");
		sti();
	} else {
		while (irq_count == seen && rdtsc() - start < WAIT_LIMIT)
			pause();
	}
	return irq_count != seen;
}

/* TSC cycles per APIC timer tick at divide 1, measured (CPUID 0x15 is not
 * trustworthy on every platform this runs on). */
static uint64_t calibrate(void)
{
	uint64_t t0, t1;
	uint32_t left;

	apic_write(LAPIC_TDCR, LAPIC_TDCR_DIV1);
	apic_write(LAPIC_LVT_TIMER, LAPIC_LVT_MASKED | TIMER_VEC);
	apic_write(LAPIC_TMICT, 0xffffffffu);
	t0 = rdtsc();
	while (rdtsc() - t0 < 2000000)
		pause();
	left = apic_read(LAPIC_TMCCT);
	t1 = rdtsc();
	apic_write(LAPIC_TMICT, 0);
	return ((t1 - t0) + (0xffffffffu - left) / 2) / (0xffffffffu - left);
}

static uint64_t exits_now(void)
{
	return tickvisor_present() ? tv_exits(TV_EXITS_TOTAL) : 0;
}

/* The exits between two exits_now() readings, less the second reading's
 * own hypercall exit. */
static void report_exits_between(const char *name, uint64_t before, uint64_t after,
				 uint64_t ops)
{
	if (tickvisor_present())
		bench_report_value(name, "exits", ops, (int64_t)(after - before - 1));
}

static void report_exits(const char *name, uint64_t before, uint64_t ops)
{
	report_exits_between(name, before, exits_now(), ops);
}

static void bench_cpuid(unsigned n)
{
	uint64_t e = exits_now();

	for (unsigned i = 0; i < n; i++) {
		uint64_t t0 = rdtsc();

		cpuid(0);
		samples[i] = (int64_t)(rdtsc() - t0);
	}
	report_exits("exits_cpuid", e, n);
	bench_report("cpuid_roundtrip", "cycles", samples, n, false);
}

static void bench_program_cost(unsigned n)
{
	apic_write(LAPIC_LVT_TIMER, LAPIC_LVT_MASKED | TIMER_VEC);
	for (unsigned i = 0; i < n; i++) {
		uint64_t t0 = rdtsc();

		apic_write(LAPIC_TMICT, 1000000000u);
		samples[i] = (int64_t)(rdtsc() - t0);
		apic_write(LAPIC_TMICT, 0);
	}
	bench_report("program_tmict", "cycles", samples, n, false);
	apic_write(LAPIC_LVT_TIMER, LAPIC_LVT_MASKED | (LAPIC_TIMER_TSC_DEADLINE << 17) | TIMER_VEC);
	for (unsigned i = 0; i < n; i++) {
		uint64_t t0 = rdtsc();

		wrmsr(MSR_IA32_TSC_DEADLINE, t0 + (1ull << 40));
		samples[i] = (int64_t)(rdtsc() - t0);
		wrmsr(MSR_IA32_TSC_DEADLINE, 0);
	}
	bench_report("program_tscdeadline", "cycles", samples, n, false);
}

static void bench_oneshot(unsigned n, bool halt, uint32_t count)
{
	char name[48];
	uint64_t e = exits_now();
	unsigned got = 0;

	apic_write(LAPIC_TDCR, LAPIC_TDCR_DIV1);
	apic_write(LAPIC_LVT_TIMER, TIMER_VEC);
	for (unsigned i = 0; i < n; i++) {
		uint64_t seen = irq_count, t0, t1, d = count * tsc_per_tick;

		t0 = rdtsc();
		apic_write(LAPIC_TMICT, count);
		t1 = rdtsc();
		if (!wait_irq(seen, halt))
			continue;
		samples[got] = (int64_t)(irq_tsc - (t0 + d));
		samples2[got++] = (int64_t)(irq_tsc - (t1 + d));
	}
	snprintf(name, sizeof(name), "exits_oneshot_%s", halt ? "halt" : "spin");
	report_exits(name, e, n);
	snprintf(name, sizeof(name), "oneshot_%s_lat_before", halt ? "halt" : "spin");
	bench_report(name, "cycles", samples, got, true);
	snprintf(name, sizeof(name), "oneshot_%s_lat_after", halt ? "halt" : "spin");
	bench_report(name, "cycles", samples2, got, true);
	report(got == n, "oneshot %s: %u of %u interrupts arrived", halt ? "halt" : "spin", got, n);
}

/*
 * The i-th deadline's offset, 0-15 cycles in a stride that visits each
 * value once per 16. Bochs's clock is instruction-driven: every deadline
 * at the same distance from the write falls at the same point of the
 * loops that deliver it (the housekeeper's spin under timer=posted, the
 * guest's own wait), so the same latency repeats n times and p50, p99 and
 * max say where one phase fell, not how late an expiry comes: posted/auto
 * read a p50 of 30-36 cycles for delta_us 100-105 on one build, on
 * hardware the phase is never the same twice.
 */
static uint64_t phase(unsigned i)
{
	return (i * 7u) & 15u;
}

static void bench_tscdeadline(unsigned n, bool halt, uint64_t delta)
{
	char name[48];
	uint64_t e;
	unsigned got = 0;

	apic_write(LAPIC_LVT_TIMER, (LAPIC_TIMER_TSC_DEADLINE << 17) | TIMER_VEC);
	e = exits_now();        /* the n operations' exits, not the LVTT write's */
	for (unsigned i = 0; i < n; i++) {
		uint64_t seen = irq_count, deadline = rdtsc() + delta + phase(i);

		wrmsr(MSR_IA32_TSC_DEADLINE, deadline);
		if (wait_irq(seen, halt))
			samples[got++] = (int64_t)(irq_tsc - deadline);
	}
	snprintf(name, sizeof(name), "exits_tscdeadline_%s", halt ? "halt" : "spin");
	report_exits(name, e, n);
	snprintf(name, sizeof(name), "tscdeadline_%s_lat", halt ? "halt" : "spin");
	bench_report(name, "cycles", samples, got, true);
	report(got == n, "tscdeadline %s: %u of %u interrupts arrived", halt ? "halt" : "spin",
	       got, n);
}

/* Periodic: per-period durations and the cumulative drift against the
 * ideal t0 + k*P, over `periods` periods. */
static void bench_periodic(unsigned periods, uint32_t count)
{
	uint64_t p = count * tsc_per_tick, t_write, e, e_end, start;
	int64_t max_drift = 0;
	unsigned n, every = periods / 100 ? periods / 100 : 1;

	irq_count = 0;
	record_limit = periods;
	apic_write(LAPIC_TDCR, LAPIC_TDCR_DIV1);
	apic_write(LAPIC_LVT_TIMER, (LAPIC_TIMER_PERIODIC << 17) | TIMER_VEC);
	t_write = rdtsc();
	apic_write(LAPIC_TMICT, count);
	/* The ticks' exits only: counted from after the TMICT write that
	 * arms the timer to before the one that stops it (each an APIC-write
	 * exit of its own, not a tick's); a tick during either hypercall is
	 * counted with its exit. */
	e = exits_now();
	start = rdtsc();
	while (irq_count < periods && rdtsc() - start < (uint64_t)periods * p * 4)
		pause();
	e_end = exits_now();
	n = (unsigned)(irq_count < periods ? irq_count : periods);
	apic_write(LAPIC_TMICT, 0);
	record_limit = 0;
	report_exits_between("exits_periodic_tick", e, e_end, n);
	report(n == periods, "periodic: %u of %u ticks arrived", n, periods);
	if (n < 2)
		return;
	for (unsigned k = 1; k < n; k++) {
		int64_t drift = (int64_t)(ticks_tsc[k] - ticks_tsc[0]) - (int64_t)(k * p);

		series[k - 1] = (int64_t)(ticks_tsc[k] - ticks_tsc[k - 1]) - (int64_t)p;
		if (drift > max_drift || -drift > max_drift)
			max_drift = drift < 0 ? -drift : drift;
	}
	bench_report_value("periodic_first_lat_before", "cycles", 1,
			   (int64_t)(ticks_tsc[0] - (t_write + p)));
	bench_report_value("periodic_drift_final", "cycles", n - 1,
			   (int64_t)(ticks_tsc[n - 1] - ticks_tsc[0]) - (int64_t)((n - 1) * p));
	bench_report_value("periodic_drift_maxabs", "cycles", n - 1, max_drift);
	for (unsigned k = 0; k * every < n; k++)
		samples[k] = (int64_t)(ticks_tsc[k * every] - ticks_tsc[0]) - (int64_t)(k * every * p);
	bench_series("periodic_drift", samples, (n + every - 1) / every, every);
	bench_report("periodic_period_error", "cycles", series, n - 1, true);
}

static void bench_self_ipi(unsigned n)
{
	uint64_t e = exits_now();
	unsigned got = 0;

	for (unsigned i = 0; i < n; i++) {
		uint64_t seen = irq_count, t0 = rdtsc();

		if (apic_is_x2apic())
			wrmsr(MSR_X2APIC_SELF_IPI, IPI_VEC);
		else
			apic_icr_write((LAPIC_DEST_SELF << 18) | IPI_VEC, 0);
		if (wait_irq(seen, false))
			samples[got++] = (int64_t)(irq_tsc - t0);
	}
	report_exits("exits_self_ipi", e, n);
	bench_report("self_ipi", "cycles", samples, got, false);
}

/* A fresh guest's first expiries of one kind (cold=KIND): the latency
 * of each as in the warm figures (one-shot and periodic from the TSC
 * before the TMICT write: tickvisor starts the count at the access). */
static bool bench_cold(const char *kind, uint64_t delta, uint64_t period)
{
	char name[48];
	unsigned got = 0;
	uint64_t e = exits_now();

	apic_write(LAPIC_TDCR, LAPIC_TDCR_DIV1);
	for (unsigned i = 0; i < COLD_N; i++) {
		uint64_t seen = irq_count, t0 = rdtsc(), due;

		if (!strcmp(kind, "tscdeadline")) {
			apic_write(LAPIC_LVT_TIMER, (LAPIC_TIMER_TSC_DEADLINE << 17) | TIMER_VEC);
			due = t0 + delta;
			wrmsr(MSR_IA32_TSC_DEADLINE, due);
		} else if (!strcmp(kind, "oneshot") || !strcmp(kind, "periodic")) {
			bool periodic = kind[0] == 'p';
			uint32_t count = (uint32_t)((periodic ? period : delta) / tsc_per_tick);

			apic_write(LAPIC_LVT_TIMER, (periodic ? LAPIC_TIMER_PERIODIC << 17 : 0) |
				   TIMER_VEC);
			t0 = rdtsc();
			apic_write(LAPIC_TMICT, count);
			due = t0 + count * tsc_per_tick;
		} else {
			report(false, "cold=%s: not tscdeadline, oneshot or periodic", kind);
			return false;
		}
		if (wait_irq(seen, false))
			samples[got++] = (int64_t)(irq_tsc - due);
		apic_write(LAPIC_TMICT, 0);
		wrmsr(MSR_IA32_TSC_DEADLINE, 0);
	}
	apic_write(LAPIC_LVT_TIMER, LAPIC_LVT_MASKED | TIMER_VEC);
	snprintf(name, sizeof(name), "exits_cold_%s", kind);
	report_exits(name, e, COLD_N);
	snprintf(name, sizeof(name), "cold_%s_lat", kind);
	bench_report(name, "cycles", samples, got, false);
	report(got == COLD_N, "cold %s: %u of %u interrupts arrived", kind, got, COLD_N);
	return true;
}

static uint64_t tsc_hz(void)
{
	struct tv_info info;

	if (tickvisor_present() && tv_get_info(&info))
		return info.tsc_hz;
	return arg_get_ulong("tsc_hz", 50000000);
}

int main(int argc, char **argv)
{
	unsigned n = (unsigned)arg_get_ulong("n", 1000), periods;
	const char *mode = arg_get("apic");
	uint64_t hz = tsc_hz(), delta, period;

	(void)argc;
	(void)argv;
	report_prefix_push("bench_timer");
	n = n > MAX_N ? MAX_N : n;
	periods = (unsigned)arg_get_ulong("periods", 10000);
	periods = periods > MAX_PERIODS ? MAX_PERIODS : periods;
	if (!(mode && !strcmp(mode, "xapic")))
		enable_x2apic();
	/* Software-enable the APIC: after reset SVR.8 is clear and every LVT
	 * stays masked (SDM "Spurious-Interrupt Vector Register"). */
	apic_sw_enable();
	handle_irq(TIMER_VEC, timer_irq);
	handle_irq(IPI_VEC, timer_irq);
	sti();
	tsc_per_tick = calibrate();
	delta = arg_get_ulong("delta_us", 100) * hz / 1000000;
	period = arg_get_ulong("period_us", 200) * hz / 1000000;
	printf("INFO: bench_timer: %s, TSC %lu Hz, %lu TSC cycles per APIC tick, %s\n",
	       apic_is_x2apic() ? "x2APIC" : "xAPIC", hz, tsc_per_tick,
	       tickvisor_present() ? "under tickvisor" : "native");
	report(tsc_per_tick >= 1, "APIC timer calibrated");
	if (arg_get("cold")) {
		bench_cold(arg_get("cold"), delta, period);
		return report_summary();
	}
	if (arg_get_ulong("cold_first", 0)) {
		static const char *const kinds[] = { "tscdeadline", "oneshot", "periodic" };

		for (unsigned i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
			bench_cold(kinds[i], delta, period);
	}
	bench_cpuid(n);
	bench_program_cost(n);
	bench_oneshot(n, false, (uint32_t)(delta / tsc_per_tick));
	bench_oneshot(n, true, (uint32_t)(delta / tsc_per_tick));
	bench_tscdeadline(n, false, delta);
	bench_tscdeadline(n, true, delta);
	bench_periodic(periods, (uint32_t)(period / tsc_per_tick));
	bench_self_ipi(n);
	return report_summary();
}
