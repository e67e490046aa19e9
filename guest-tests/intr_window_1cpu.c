// SPDX-License-Identifier: BSD-2-Clause
/*
 * intr_window_1cpu: one vCPU, an interrupt held back by RFLAGS.IF = 0
 * across VM exits. It waits in IRR while IF = 0 (Intel SDM Vol. 3A,
 * "Maskable Hardware Interrupts"; Vol. 3C, "Delivery of Pending Virtual
 * Interrupts": only with IF = 1) and is delivered once, right after STI.
 *
 * With virtual-interrupt delivery it also costs no interrupt-window exit.
 * tickvisor arms one at an IF = 0 entry only where Bochs 3.0's
 * HandleExtInterrupt (cpu/event.cc) could deliver the pending virtual
 * interrupt with IF = 0, which takes a physical interrupt arriving while
 * the guest runs (vmm/apic/vapic.h, vapic_vid_guard): from another
 * vCPU, a housekeeper or a host timer. A guest of one vCPU on the
 * VMX-preemption timer gets none, and the CPU itself delivers from RVI
 * once IF is 1 (SDM: a pending virtual interrupt is evaluated and
 * delivered without a VM exit). Without APICv tickvisor injects the
 * interrupt itself and needs the window exit to learn that IF is 1: one
 * such exit, whatever the number of IF = 0 exits before it.
 *
 * The exits with IF = 0: the self-IPI's own (x2APIC: its ICR WRMSR; xAPIC
 * with APICv the CPU takes it without one), then VMCALLs and port writes
 * (both go through the run loop's full pre-entry work, where the window
 * would be armed).
 */
#include "lib/guest.h"
#include "lib/apic_util.h"
#include "lib/tickvisor.h"

#define VEC             0x66u
#define IF0_EXITS       4u
#define POST_PORT       0x80u           /* POST code port: ignored, but an exit */

static volatile uint32_t hits;
static bool apicv;

static void on_vec(struct ex_regs *r)
{
	(void)r;
	hits++;
	apic_eoi();
}

static void exits_with_if0(void)
{
	for (unsigned i = 0; i < IF0_EXITS; i++) {
		tv_hypercall(TV_HC_PING, 0, 0, 0, NULL);
		outb(POST_PORT, (uint8_t)i);
	}
}

static void run(const char *mode)
{
	uint64_t windows;

	hits = 0;
	apic_self_ipi(VEC);
	exits_with_if0();
	windows = tv_exits(VMX_EXIT_INTR_WINDOW);
	exits_with_if0();
	report(hits == 0 && apic_vec_test(LAPIC_IRR, VEC),
	       "%s: IF=0 through %u exits: pending in IRR, not delivered (%u)", mode,
	       2 * IF0_EXITS + 2, hits);
	asm volatile("sti; nop; nop; cli" ::: "memory");
	windows = tv_exits(VMX_EXIT_INTR_WINDOW) - windows;
	report(hits == 1, "%s: delivered once, right after STI (%u)", mode, hits);
	if (apicv)
		report(windows == 0, "%s: with virtual-interrupt delivery no interrupt-window "
		       "exit (%lu)", mode, windows);
	else
		report(windows == 1, "%s: injected by tickvisor after one interrupt-window exit "
		       "(%lu)", mode, windows);
	apic_util_let_in(NULL, 0);
	report(hits == 1 && apic_vec_none(LAPIC_IRR) && apic_vec_none(LAPIC_ISR),
	       "%s: nothing more, IRR and ISR empty", mode);
}

int main(int argc, char **argv)
{
	struct tv_info info;

	(void)argc;
	(void)argv;
	if (!apic_test_start("intr_window_1cpu"))
		return apic_test_end();
	if (!tickvisor_present() || !tv_get_info(&info)) {
		report_skip("counts tickvisor's VM exits: not under tickvisor");
		return apic_test_end();
	}
	if (info.nr_vcpus != 1 || FIELD_GET(TV_INFO_TIMER, info.flags) != TV_TIMER_PREEMPT) {
		report_skip("one vCPU on the VMX-preemption timer only (%lu vCPUs, backend %lu)",
			    info.nr_vcpus, FIELD_GET(TV_INFO_TIMER, info.flags));
		return apic_test_end();
	}
	apicv = info.flags & TV_INFO_APICV;
	handle_irq(VEC, on_vec);
	apic_run_both_modes(run);
	return apic_test_end();
}
