// SPDX-License-Identifier: BSD-2-Clause
/*
 * smp_ipi_masked2: two IPIs of different vectors to a CPU that runs with
 * RFLAGS.IF = 0. Neither handler may run before that CPU's STI (Intel SDM
 * Vol. 3A, "Maskable Hardware Interrupts": IF = 0 masks them; Vol. 3C,
 * "Evaluation and Delivery of Pending Virtual Interrupts": a pending
 * virtual interrupt is delivered only when RFLAGS.IF = 1). smp_ipi checks
 * one IPI; the second matters because it arrives while the first is
 * already pending.
 *
 * Under APICv in Debian's Bochs 3.0 this fails: the second IPI's
 * posted-interrupt notification reaches the CPU in VMX non-root mode, and
 * Bochs's HandleExtInterrupt() (cpu/event.cc) delivers the pending
 * virtual interrupt through the guest's IDT whenever it is pending,
 * without looking at its IF mask (is_pending() where
 * is_unmasked_event_pending() is due), so the first vector's handler runs
 * with IF = 0. Linux guests on 2 vCPUs crash from it now and then (an
 * interrupt taken between the return-to-user SWAPGS and IRET). No
 * interrupt-window exit of tickvisor's can help here: the guest clears
 * IF without an exit. The Bochs tickvisor builds carries the fix
 * (scripts/bochs-patches/0002), so unittests.cfg runs the test with APICv
 * (smp_ipi_masked2) and without (smp_ipi_masked2_apicv_off, tickvisor's
 * own injection); on Debian's Bochs 3.0 the first fails.
 */
#include "lib/guest.h"
#include "lib/smp.h"
#include "lib/smp_hits.h"
#include "lib/tsc.h"

#define VEC_FIRST               0x41u
#define VEC_SECOND              0x42u
#define PENDING_US              500u    /* each IPI has landed by then */
#define ROUNDS                  3u

static volatile uint32_t runs_first, runs_second, ready, go;
static volatile uint32_t before_first, before_second;
static unsigned peer;

static void first_handler(struct ex_regs *regs)
{
	(void)regs;
	runs_first++;
	apic_eoi();
}

static void second_handler(struct ex_regs *regs)
{
	(void)regs;
	runs_second++;
	apic_eoi();
}

/* On the AP: interrupts off until the BSP says go; what ran meanwhile. */
static void ap_masked(void *arg)
{
	uint64_t deadline = tsc_deadline_us(SMP_HITS_TIMEOUT_US);

	(void)arg;
	cli();
	ready = 1;
	while (!go && !tsc_passed(deadline))
		pause();
	before_first = runs_first;
	before_second = runs_second;
	sti();
	tsc_delay_us(PENDING_US);
}

static void send(unsigned vector)
{
	apic_icr_write(smp_icr(LAPIC_DM_FIXED, vector, LAPIC_DEST_NONE, false), peer);
}

static void one_round(unsigned round)
{
	uint64_t deadline = tsc_deadline_us(SMP_HITS_TIMEOUT_US);
	bool done;

	runs_first = runs_second = ready = go = 0;
	before_first = before_second = ~0u;
	if (!on_cpu_async(peer, ap_masked, NULL))
		return;
	while (!ready && !tsc_passed(deadline))
		pause();
	send(VEC_FIRST);
	tsc_delay_us(PENDING_US);
	send(VEC_SECOND);
	tsc_delay_us(PENDING_US);
	go = 1;
	done = on_cpu_wait(peer);       /* before the counts are read for the report */
	report(done && before_first == 0 && before_second == 0 &&
	       runs_first == 1 && runs_second == 1,
	       "round %u: CPU %u with IF=0 runs neither handler before STI (%u, %u), each once "
	       "after (%u, %u)", round, peer, before_first, before_second, runs_first, runs_second);
}

static void test_mode(bool x2)
{
	report_prefix_push(x2 ? "x2APIC" : "xAPIC");
	for (unsigned i = 0; i < ROUNDS; i++)
		one_round(i);
	report_prefix_pop();
}

int main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	report_prefix_push("smp_ipi_masked2");
	handle_irq(VEC_FIRST, first_handler);
	handle_irq(VEC_SECOND, second_handler);
	if (!smp_init_peer(&peer))
		return report_summary();
	smp_run_both_modes(test_mode);
	return report_summary();
}
