// SPDX-License-Identifier: BSD-2-Clause
/*
 * mce_guest: what a guest sees of machine checks under tickvisor (issue
 * 22.2). tickvisor intercepts #MC (exception bitmap bit 18) so that a
 * host machine check is judged by the host (vmm/host/mce.c), and offers
 * the guest no machine-check architecture (CPUID.1:EDX MCE and MCA clear,
 * IA32_MCG_CAP and IA32_MCG_STATUS read 0). The intercept covers
 * exceptions only: "INT n" is a software interrupt, which the exception
 * bitmap does not affect (SDM Vol. 3C, "Exception Bitmap": it applies to
 * exceptions; software interrupts are not, "Other Causes of VM Exits"),
 * so a guest's INT $18 goes to its own handler, however often (a hostile
 * guest's storm of them never reaches the host's #MC handler).
 */
#include "lib/guest.h"

#define MC_VEC                  18
#define INTS                    1000u

static volatile unsigned mc_hits;
static volatile uint64_t mc_rip;

static void mc_handler(struct ex_regs *r)
{
	mc_hits++;
	mc_rip = r->rip;
}

int main(int argc, char **argv)
{
	irq_handler_fn old;
	uint64_t after, v;
	struct cpuid c = cpuid(1);

	(void)argc;
	(void)argv;
	report(!(c.d & BIT(7)) && !(c.d & BIT(14)),
	       "CPUID.1:EDX: no MCE, no MCA offered (EDX %#x)", c.d);
	report(!rdmsr_safe(0x179, &v) && v == 0, "IA32_MCG_CAP reads 0");
	report(!rdmsr_safe(0x17a, &v) && v == 0, "IA32_MCG_STATUS reads 0");
	old = handle_irq(MC_VEC, mc_handler);
	asm volatile("lea 2f(%%rip), %0\n\tint $18\n2:" : "=&r"(after) : : "memory");
	report(mc_hits == 1 && mc_rip == after,
	       "INT $18 goes to the guest's own handler (%u runs, RIP 0x%lx, want 0x%lx)",
	       mc_hits, mc_rip, after);
	for (unsigned i = 1; i < INTS; i++)
		asm volatile("int $18" : : : "memory");
	report(mc_hits == INTS, "%u more INT $18: all the guest's (%u runs)", INTS - 1, mc_hits);
	handle_irq(MC_VEC, old);
	return report_summary();
}
