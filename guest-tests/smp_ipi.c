// SPDX-License-Identifier: BSD-2-Clause
/*
 * smp_ipi: fixed IPIs between two CPUs with a physical destination
 * (Intel SDM Vol. 3A, "Issuing Interprocessor Interrupts"; DESIGN.md,
 * "IPI rules"), through the xAPIC ICR (ICR_HI, then the ICR_LO write
 * sends) and the x2APIC ICR (one 64-bit WRMSR):
 *
 *  - BSP -> AP and AP -> BSP, one IPI at a time: the handler runs on the
 *    destination, exactly once per IPI, and on no other CPU;
 *  - a burst to one vector: IRR holds one request per vector, so 1..N
 *    handler runs, never more than were sent;
 *  - an AP with interrupts off takes the IPI only after STI;
 *  - the ICR reads back what was written, delivery status idle.
 *
 * peer=N picks the AP (default 1).
 */
#include "lib/guest.h"
#include "lib/smp.h"
#include "lib/smp_hits.h"
#include "lib/tsc.h"

#define IPI_VECTOR              0x41u
#define NR_IPIS                 10u
#define MASKED_WAIT_US          1000u   /* an IPI to a CLI'd CPU stays pending this long */

static struct smp_hits hits;
static unsigned peer;

static void ipi_handler(struct ex_regs *regs)
{
	(void)regs;
	smp_hits_record(&hits);
	apic_eoi();
}

static void send_fixed(unsigned dest)
{
	apic_icr_write(smp_icr(LAPIC_DM_FIXED, IPI_VECTOR, LAPIC_DEST_NONE, false), dest);
}

/* NR_IPIS IPIs to dest, each awaited; how many arrived, once each. */
static unsigned send_each(unsigned dest)
{
	for (unsigned i = 0; i < NR_IPIS; i++) {
		send_fixed(dest);
		if (!smp_hits_expect(&hits, (uint32_t)BIT(dest), i + 1, SMP_HITS_TIMEOUT_US, 0, NULL))
			return i;
	}
	return NR_IPIS;
}

static void ap_to_bsp(void *arg)
{
	*(unsigned *)arg = send_each(0);
}

static void report_one_way(unsigned from, unsigned to, unsigned arrived)
{
	bool ok = arrived == NR_IPIS &&
		  smp_hits_expect(&hits, (uint32_t)BIT(to), NR_IPIS, 0, SMP_HITS_QUIET_US, NULL);

	if (!ok)
		report_info("CPU %u -> %u: %u of %u in order; runs: CPU 0 %u, CPU %u %u", from, to,
			    arrived, NR_IPIS, smp_hits_of(&hits, 0), peer, smp_hits_of(&hits, peer));
	report(ok, "CPU %u -> CPU %u: %u IPIs, one handler run each, on CPU %u only", from, to,
	       NR_IPIS, to);
}

static void test_burst(void)
{
	uint32_t runs, mask;

	smp_hits_clear(&hits);
	for (unsigned i = 0; i < NR_IPIS; i++)
		send_fixed(peer);
	smp_hits_expect(&hits, (uint32_t)BIT(peer), 1, SMP_HITS_TIMEOUT_US, SMP_HITS_QUIET_US, &mask);
	runs = smp_hits_of(&hits, peer);
	report(mask == BIT(peer) && runs >= 1 && runs <= NR_IPIS,
	       "burst of %u: %u handler run(s) on CPU %u (1..%u), none elsewhere", NR_IPIS, runs,
	       peer, NR_IPIS);
}

static volatile uint32_t masked_ready, masked_go, masked_runs_before_sti;

/* On the AP: interrupts off until the BSP says go. */
static void ap_masked(void *arg)
{
	uint64_t deadline = tsc_deadline_us(SMP_HITS_TIMEOUT_US);

	(void)arg;
	cli();
	masked_ready = 1;
	while (!masked_go && !tsc_passed(deadline))
		pause();
	masked_runs_before_sti = smp_hits_of(&hits, peer);
	sti();
	tsc_delay_us(SMP_HITS_QUIET_US);
}

static void test_masked(void)
{
	uint64_t deadline = tsc_deadline_us(SMP_HITS_TIMEOUT_US);
	bool pending_ok;

	smp_hits_clear(&hits);
	masked_ready = masked_go = 0;
	masked_runs_before_sti = ~0u;
	if (!on_cpu_async(peer, ap_masked, NULL))
		return;
	while (!masked_ready && !tsc_passed(deadline))
		pause();
	send_fixed(peer);
	tsc_delay_us(MASKED_WAIT_US);
	masked_go = 1;
	pending_ok = on_cpu_wait(peer) && masked_runs_before_sti == 0;
	report(pending_ok && smp_hits_of(&hits, peer) == 1,
	       "CPU %u with IF=0: IPI held until STI, then one run (%u before, %u after)", peer,
	       masked_runs_before_sti, smp_hits_of(&hits, peer));
}

static void test_icr_readback(bool x2)
{
	uint32_t lo, dest;

	send_fixed(peer);
	if (x2) {
		uint64_t icr = rdmsr(MSR_X2APIC_ICR);

		lo = (uint32_t)icr;
		dest = (uint32_t)(icr >> 32);
	} else {
		lo = apic_read(LAPIC_ICR_LO);
		dest = (uint32_t)FIELD_GET(LAPIC_ID_XAPIC, apic_read(LAPIC_ICR_HI));
	}
	report((lo & ~LAPIC_ICR_BUSY) == smp_icr(LAPIC_DM_FIXED, IPI_VECTOR, LAPIC_DEST_NONE, false) &&
	       !(lo & LAPIC_ICR_BUSY) && dest == peer,
	       "ICR reads back 0x%x, destination %u, delivery status idle", lo, dest);
	tsc_delay_us(SMP_HITS_QUIET_US);        /* let it land before the next test */
}

static void test_mode(bool x2)
{
	unsigned arrived = 0;

	report_prefix_push(x2 ? "x2APIC" : "xAPIC");
	smp_hits_clear(&hits);
	report_one_way(0, peer, send_each(peer));
	smp_hits_clear(&hits);
	if (on_cpu(peer, ap_to_bsp, &arrived))
		report_one_way(peer, 0, arrived);
	test_burst();
	test_masked();
	test_icr_readback(x2);
	report_prefix_pop();
}

int main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	report_prefix_push("smp_ipi");
	handle_irq(IPI_VECTOR, ipi_handler);
	if (!smp_init_peer(&peer))
		return report_summary();
	smp_run_both_modes(test_mode);
	return report_summary();
}
