// SPDX-License-Identifier: BSD-2-Clause
/*
 * intr_if0_periodic: a periodic APIC timer runs on while the CPU keeps
 * RFLAGS.IF = 0 through a loop of VM exits - CPUID, which tickvisor
 * resumes at once from its exit fast path (vmm/exit/exit_fast.c), and
 * VMCALLs, which take the full pre-entry work. No timer interrupt may be
 * taken before STI (Intel SDM Vol. 3A, "Maskable Hardware Interrupts";
 * Vol. 3C, "Delivery of Pending Virtual Interrupts": only with IF = 1);
 * after STI the held tick arrives, and the timer goes on ticking. (How
 * many ticks the IF = 0 periods leave is not checked: on the SDM's CPU
 * one IRR bit, but Bochs 3.0 holds host interrupts and notifications
 * back while a guest entered with IF = 0, so tickvisor may see an expiry
 * of that stretch only after STI, as a tick of its own.)
 *
 * The backend changes how the expiries come: a VMX-preemption-timer exit,
 * a host-timer interrupt (timer=lapic/hpet), or a posted interrupt from
 * the housekeeping CPU (timer=posted), which reaches the vCPU in non-root
 * mode without an exit. In Bochs 3.0 a physical interrupt arriving in
 * non-root mode delivers a pending virtual interrupt whatever IF is
 * (cpu/event.cc, HandleExtInterrupt), so tickvisor holds it back with
 * interrupt-window exiting on an entry with IF = 0 (vmm/apic/vapic_inject.c);
 * an entry resumed at once must arm it as the slow one does. With
 * timer=posted it did not, and the second post of a CLI stretch ran the
 * handler with IF = 0. On hardware that follows the SDM none of this
 * shows.
 *
 * Arguments: slack_us=N (how late the ticks after STI may be, default 50).
 */
#include "lib/guest.h"
#include "lib/tickvisor.h"
#include "lib/timer_util.h"

#define PERIOD_US               200u    /* tickvisor's default minimum period */
#define CLI_PERIODS             12u
#define ROUNDS                  3u
#define AFTER_PERIODS           4u

static uint32_t count;                  /* TMICT of PERIOD_US at divide 1 */
static uint64_t len;                    /* that in TSC cycles */
static volatile bool in_cli;
static volatile uint32_t ticks, taken_in_cli;

static void cpuid0(void)
{
	uint32_t a = 0, b, c = 0, d;

	asm volatile("cpuid" : "+a"(a), "=b"(b), "+c"(c), "=d"(d) : : "memory");
}

static void on_tick(struct ex_regs *r)
{
	(void)r;
	ticks++;
	if (in_cli)
		taken_in_cli++;
	apic_eoi();
}

static bool wait_ticks(uint32_t want, uint64_t until)
{
	sti();
	while (ticks < want && rdtsc() < until)
		pause();
	cli();
	return ticks >= want;
}

static void round_if0(unsigned n)
{
	uint64_t end;
	uint32_t before;
	unsigned exits = 0;

	cli();
	in_cli = true;
	taken_in_cli = 0;
	before = ticks;
	end = rdtsc() + CLI_PERIODS * len;
	while (rdtsc() < end) {
		cpuid0();
		if (!(++exits % 16))
			tv_hypercall(TV_HC_PING, 0, 0, 0, NULL);
	}
	in_cli = false;
	report(taken_in_cli == 0 && ticks == before,
	       "round %u: %u periods with IF=0 through %u exits: no tick taken (%u)", n,
	       CLI_PERIODS, exits, taken_in_cli);
	/* From now: the report line took VM exits of its own. */
	report(wait_ticks(before + 1, rdtsc() + len + tmr_slack_tsc),
	       "round %u: after STI the held tick arrives within a period", n);
	report(wait_ticks(before + 1 + AFTER_PERIODS, rdtsc() + (AFTER_PERIODS + 1) * len +
			  tmr_slack_tsc),
	       "round %u: then it ticks on (%u more periods)", n, AFTER_PERIODS);
}

int main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	report_prefix_push("intr_if0_periodic");
	if (!tmr_init())
		return report_summary();
	cli();
	handle_irq(TMR_VEC, on_tick);
	count = tmr_tsc_to_ticks(tmr_us_to_tsc(PERIOD_US), 1);
	len = tmr_ticks_to_tsc(count, 1);
	tmr_arm(LAPIC_TIMER_PERIODIC, false, count);
	for (unsigned n = 0; n < ROUNDS; n++)
		round_if0(n);
	tmr_stop();
	return report_summary();
}
