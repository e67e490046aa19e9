// SPDX-License-Identifier: BSD-2-Clause
/*
 * smp_exc_exit: a VM exit that comes right after the CPU delivered an
 * exception must save the state after the delivery, all of it: the
 * handler's CS, RSP and RFLAGS and the handler's first instruction as
 * RIP (SDM Vol. 3C, "Saving RIP, RSP, RFLAGS, and SSP": after an external
 * interrupt or the VMX-preemption timer, the RIP of the instruction that
 * would have executed next; "Event Delivery and VM Exits").
 *
 * Every CPU runs UD2 in a loop, its #UD handler stepping over it, while a
 * periodic APIC timer fires on it (under tickvisor each tick is a VM exit
 * of the timer backend: the preemption timer or a host interrupt), and
 * checks that each UD2 took exactly one #UD and left RSP where it was. An
 * exit that records the faulting UD2's RIP with the handler's stack sends
 * the CPU back to UD2 on that stack before the handler ran: the second #UD
 * is handled and returns past UD2 with the first one's frame still pushed,
 * RSP 40 or more bytes below where it was (seen: 13 and 14 times per CPU
 * in 20,000 rounds, and timer ticks lost the same way).
 *
 * That is what Bochs 3.0 did with more than one CPU, and the crashes of the
 * Linux guest (issue 14, docs/linux-guest.md): exception() and VMexit()
 * longjmp to the SMP loop of bx_begin_simulation() (main.cc), which - unlike
 * cpu_loop() (cpu/cpu.cc) - does not commit RIP to prev_rip, and a fault-
 * like VM exit (VMX-preemption timer, external interrupt; cpu/vmx.cc
 * VMexit) restores RIP from prev_rip. scripts/bochs-patches/ fixes it; with
 * Debian's unpatched source this test fails on 2 CPUs within its first
 * ticks, on 1 CPU (cpu_loop) it passes.
 */
#include "lib/guest.h"
#include "lib/smp.h"
#include "lib/timer_util.h"

#define TICK_VEC                0x52u
#define ROUNDS_DEFAULT          20000u
#define PERIOD_US_DEFAULT       50u
#define MIN_TICKS               20u     /* fewer: the loop saw too few exits to tell */
#define UD2_LEN                 2u

struct ud_run {
	volatile uint64_t ud;           /* #UDs taken */
	volatile uint64_t ticks;        /* timer interrupts taken */
	uint64_t moved;                 /* UD2s after which RSP had moved */
	uint64_t first_moved;           /* ... the first one's round, +1 */
};

static struct ud_run runs[MAX_CPUS];
static uint64_t rounds;
static uint32_t tmict;

static void ud_handler(struct ex_regs *regs)
{
	runs[smp_id()].ud++;
	regs->rip += UD2_LEN;
}

static void tick_handler(struct ex_regs *regs)
{
	(void)regs;
	runs[smp_id()].ticks++;
	apic_eoi();
}

/* One UD2 with RSP compared around it; RSP is put back either way, so a
 * frame left behind by a second #UD is dropped, not returned into. */
static bool ud2_keeps_rsp(void)
{
	uint64_t before, after;

	__asm__ volatile("mov %%rsp, %0\n\t"
			 "ud2\n\t"
			 "mov %%rsp, %1\n\t"
			 "mov %0, %%rsp"
			 : "=&r"(before), "=&r"(after) : : "memory");
	return before == after;
}

static void run_ud_loop(void *arg)
{
	struct ud_run *r = &runs[smp_id()];

	(void)arg;
	apic_write(LAPIC_TDCR, LAPIC_TDCR_DIV1);
	apic_write(LAPIC_LVT_TIMER, (uint32_t)FIELD_PREP(LAPIC_LVT_TIMER_MODE,
							   LAPIC_TIMER_PERIODIC) | TICK_VEC);
	apic_write(LAPIC_TMICT, tmict);
	sti();
	for (uint64_t i = 0; i < rounds; i++) {
		if (!ud2_keeps_rsp() && !r->moved++)
			r->first_moved = i + 1;
	}
	apic_write(LAPIC_LVT_TIMER, LAPIC_LVT_MASKED | TICK_VEC);
	apic_write(LAPIC_TMICT, 0);
}

int main(int argc, char **argv)
{
	uint64_t period_us = arg_get_ulong("period_us", PERIOD_US_DEFAULT);
	unsigned n;

	(void)argc;
	(void)argv;
	report_prefix_push("smp_exc_exit");
	rounds = arg_get_ulong("rounds", ROUNDS_DEFAULT);
	if (!tmr_init())
		return report_summary();
	tmict = (uint32_t)(period_us * tmr_clock.apic_hz / 1000000);
	handle_irq(UD_VECTOR, ud_handler);
	handle_irq(TICK_VEC, tick_handler);
	if (!smp_init_report())
		return report_summary();
	n = cpu_count();
	report(on_cpus(run_ud_loop, NULL), "%u CPUs ran %lu UD2s each under a %lu us periodic timer",
	       n, rounds, period_us);
	for (unsigned cpu = 0; cpu < n; cpu++) {
		struct ud_run *r = &runs[cpu];

		report(r->ticks >= MIN_TICKS, "CPU %u: %lu timer ticks during the loop (at least %u)",
		       cpu, r->ticks, MIN_TICKS);
		report(r->ud == rounds, "CPU %u: one #UD per UD2 (%lu for %lu)", cpu, r->ud, rounds);
		report(!r->moved, "CPU %u: RSP unchanged across every UD2 (moved after %lu, first in "
		       "round %lu)", cpu, r->moved, r->first_moved);
	}
	return report_summary();
}
