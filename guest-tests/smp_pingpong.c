// SPDX-License-Identifier: BSD-2-Clause
/*
 * smp_pingpong: IPI round trips between CPU 0 and CPU 1, as a benchmark.
 *
 * CPU 1 spins with interrupts on (an on_cpu() function); its PING handler
 * answers with a PONG IPI to CPU 0 from inside the handler. CPU 0 stamps
 * the TSC, sends PING, spins with interrupts on until its PONG handler
 * has run, and stamps again. rounds=N round trips (default 200); every
 * one must come back (bounded wait), each handler must run once per
 * round on its own CPU only. Reported: min/p50/max cycles, the VM exits
 * per round trip under tickvisor, and the lines
 *
 *   BENCH name=ipi_roundtrip unit=cycles n=200 min=.. p50=.. p99=.. max=.. mean=..
 *   BENCH name=ipi_send unit=cycles ...
 *
 * ipi_send is what an ICR write costs CPU 0 (TSC before and after it),
 * in a second pass of IPIs CPU 1 takes without answering: under a
 * hypervisor, the exit that write takes.
 * apic=x2apic runs both CPUs in x2APIC mode (names ipi_roundtrip_x2apic,
 * ipi_send_x2apic).
 */
#include "lib/bench.h"
#include "lib/guest.h"
#include "lib/smp.h"
#include "lib/smp_hits.h"
#include "lib/tsc.h"

#define PING_VECTOR             0x45u
#define PONG_VECTOR             0x46u
#define SINK_VECTOR             0x47u   /* ipi_send: a PING nobody answers */
#define ROUNDS_DEFAULT          200u
#define ROUNDS_MAX              1000u
#define PEER                    1u

static struct smp_hits pings, pongs, sinks;
static uint64_t rt[ROUNDS_MAX], send[ROUNDS_MAX];
static volatile bool stop;

static void ping_handler(struct ex_regs *regs)
{
	(void)regs;
	smp_hits_record(&pings);
	apic_eoi();
	apic_icr_write(smp_icr(LAPIC_DM_FIXED, PONG_VECTOR, LAPIC_DEST_NONE, false), 0);
}

static void pong_handler(struct ex_regs *regs)
{
	(void)regs;
	smp_hits_record(&pongs);
	apic_eoi();
}

static void sink_handler(struct ex_regs *regs)
{
	(void)regs;
	smp_hits_record(&sinks);
	apic_eoi();
}

/* On CPU 1: answer pings until told to stop (bounded). */
static void responder(void *arg)
{
	uint64_t deadline = tsc_deadline_us(*(const uint64_t *)arg);

	sti();
	while (!stop && !tsc_passed(deadline))
		pause();
}

static bool wait_hits(const struct smp_hits *h, unsigned cpu, unsigned n, uint64_t deadline)
{
	while (smp_hits_of(h, cpu) < n)
		if (tsc_passed(deadline))
			return false;
		else
			pause();
	return true;
}

/* Round i: the round trip into rt[i]; false if the PONG never came. */
static bool one_round(unsigned i)
{
	uint64_t deadline = tsc_deadline_us(SMP_HITS_TIMEOUT_US);
	uint64_t t0 = rdtsc();

	apic_icr_write(smp_icr(LAPIC_DM_FIXED, PING_VECTOR, LAPIC_DEST_NONE, false), PEER);
	if (!wait_hits(&pongs, 0, i + 1, deadline))
		return false;
	rt[i] = rdtsc() - t0;
	return true;
}

/* Send i: the ICR write alone into send[i], with IF=1 as in the round
 * trips, of an IPI the peer takes without answering; false if it never
 * arrived. */
static bool one_send(unsigned i)
{
	uint64_t deadline = tsc_deadline_us(SMP_HITS_TIMEOUT_US);
	uint64_t t0 = rdtsc();

	apic_icr_write(smp_icr(LAPIC_DM_FIXED, SINK_VECTOR, LAPIC_DEST_NONE, false), PEER);
	send[i] = rdtsc() - t0;
	return wait_hits(&sinks, PEER, i + 1, deadline);
}

static void report_bench(const char *name, uint64_t *v, unsigned n)
{
	uint64_t sum = 0;

	sort_u64(v, n);
	for (unsigned i = 0; i < n; i++)
		sum += v[i];
	printf("BENCH name=%s unit=cycles n=%u min=%lu p50=%lu p99=%lu max=%lu mean=%lu\n", name, n,
	       v[0], v[n / 2], v[n * 99 / 100], v[n - 1], sum / n);
}

static void report_stats(bool x2, unsigned n, uint64_t exits)
{

	report_bench(x2 ? "ipi_roundtrip_x2apic" : "ipi_roundtrip", rt, n);
	report_bench(x2 ? "ipi_send_x2apic" : "ipi_send", send, n);
	report_info("round trip over %u rounds: min %lu p50 %lu max %lu cycles (p50 %lu us)", n,
		    rt[0], rt[n / 2], rt[n - 1], tsc_to_us(rt[n / 2]));
	if (exits)
		report_info("%lu VM exits per round trip (both CPUs)", (exits + n / 2) / n);
}

int main(int argc, char **argv)
{
	const char *apic = arg_get("apic");
	bool x2 = apic && !strcmp(apic, "x2apic");
	unsigned rounds = (unsigned)arg_get_ulong("rounds", ROUNDS_DEFAULT), done = 0, sent = 0;
	uint64_t budget_us, exits0 = 0, exits = 0;

	(void)argc;
	(void)argv;
	report_prefix_push("smp_pingpong");
	if (cpu_count() <= PEER) {
		report_skip("needs 2 CPUs, have %u", cpu_count());
		return report_summary();
	}
	rounds = rounds < 1 ? 1 : rounds > ROUNDS_MAX ? ROUNDS_MAX : rounds;
	handle_irq(PING_VECTOR, ping_handler);
	handle_irq(PONG_VECTOR, pong_handler);
	handle_irq(SINK_VECTOR, sink_handler);
	if (!smp_init_report())
		return report_summary();
	if (x2 && !smp_set_x2apic(true)) {
		report_skip("apic=x2apic: no x2APIC");
		return report_summary();
	}
	sti();
	smp_hits_clear(&pings);
	smp_hits_clear(&pongs);
	smp_hits_clear(&sinks);
	budget_us = (uint64_t)rounds * 2 * SMP_HITS_TIMEOUT_US;
	if (!on_cpu_async(PEER, responder, &budget_us))
		return report_summary();
	if (tickvisor_present())
		exits0 = tv_exits(TV_EXITS_TOTAL);
	while (done < rounds && one_round(done))
		done++;
	if (tickvisor_present())
		exits = tv_exits(TV_EXITS_TOTAL) - exits0 - 1;  /* this VMCALL's own exit */
	while (done == rounds && sent < rounds && one_send(sent))
		sent++;
	stop = true;
	on_cpu_wait(PEER);
	report(done == rounds, "%u of %u round trips came back", done, rounds);
	report(sent == rounds, "%u of %u unanswered IPIs arrived", sent, rounds);
	report(smp_hits_expect(&pings, (uint32_t)BIT(PEER), done, 0, SMP_HITS_QUIET_US, NULL) &&
	       smp_hits_expect(&pongs, (uint32_t)BIT(0), done, 0, 0, NULL) &&
	       smp_hits_expect(&sinks, (uint32_t)BIT(PEER), sent, 0, 0, NULL),
	       "PING ran %u times on CPU %u only, PONG %u times on CPU 0 only, the unanswered "
	       "one %u times on CPU %u only", smp_hits_of(&pings, PEER), PEER,
	       smp_hits_of(&pongs, 0), smp_hits_of(&sinks, PEER), PEER);
	if (done)
		report_stats(x2, done, exits);
	return report_summary();
}
