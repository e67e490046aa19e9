// SPDX-License-Identifier: BSD-2-Clause
/*
 * intr_if_blocked: a pending interrupt stays pending while RFLAGS.IF = 0,
 * even when a host interrupt arrives meanwhile (issue 14: Linux with PTI
 * crashed with "BUG: ENTRY_TRAMPOLINE stack guard page was hit").
 *
 * The SDM is plain about it: a maskable interrupt is not taken with IF = 0
 * (Vol. 3A, "Maskable Hardware Interrupts"), and a virtual interrupt is
 * delivered only "if RFLAGS.IF = 1, there is no blocking by STI, there is
 * no blocking by MOV SS or by POP SS, and the interrupt-window exiting
 * VM-execution control is 0" (Vol. 3C, "Delivery of Pending Virtual
 * Interrupts"); an external interrupt that arrives in non-root mode with
 * "external-interrupt exiting" causes a VM exit whatever the guest's IF
 * (Vol. 3C, "Pin-Based VM-Execution Controls"). KVM (vmx.c,
 * vmx_interrupt_blocked: RFLAGS.IF and the interruptibility state) and
 * Bochs's own evaluation (cpu/vapic.cc, VMX_Evaluate_Pending_Virtual_
 * Interrupts, masked by IF in flag_ctrl_pro.cc) agree. Bochs 3.0's
 * HandleExtInterrupt (cpu/event.cc) however, entered for the physical
 * interrupt that is to cause the VM exit, delivers a pending virtual
 * interrupt first without looking at IF: the guest takes its interrupt
 * inside a CLI section. Linux's PTI entry code (user CR3 and GS still
 * loaded, IF = 0) then takes it in kernel mode, its entry code returns
 * through a page the user page tables do not map, and the #PF repeats on
 * the entry trampoline's stack until the guard page.
 *
 * The miniature, on two vCPUs: the BSP takes VM exits with IF=0 (a report
 * line, posting work to the AP, arming its TSC-deadline timer, as Linux
 * programs its timer with interrupts off; Linux's fatal one was the
 * VMX-preemption timer's in its entry code) and spins. Its timer expires
 * in a VM exit, so tickvisor sets IRR and, with APICv, RVI > VPPR at the
 * entry that follows, IF still 0. Meanwhile the AP sends the BSP IPIs,
 * each a physical interrupt on the BSP's CPU (tickvisor's kick or a
 * posted-interrupt notification). No interrupt may be taken before STI;
 * after it the timer's arrives exactly once, and the AP's. Before
 * tickvisor held such interrupts behind interrupt-window exiting
 * (vmm/apic/vapic_inject.c), every round took 4 interrupts with IF=0 in Bochs
 * 3.0 with APICv; without APICv (intr_if_blocked_apicv_off) tickvisor
 * injects itself, checking IF, and it passed before as after.
 *
 * The Bochs tickvisor builds carries the fix (scripts/bochs-patches/0002),
 * and tickvisor probes every vCPU's CPU for the erratum at its start
 * (vmm/vcpu/vcpu_calib.c), arming the window only where it finds it. So here
 * the CPU itself holds the interrupts back (intr_if_blocked, _apicv_off),
 * and intr_if_blocked_if0_quirks runs the workaround (if0_quirks=on) on
 * it. On Debian's unpatched Bochs 3.0 the probe finds the erratum and the
 * window holds them back instead.
 */
#include "lib/guest.h"
#include "lib/apic_util.h"
#include "lib/smp.h"

#define TIMER_VEC       0x60u           /* the BSP's timer, pending across the CLI section */
#define TIMER_US        500u            /* it expires this long into it */
#define PEER_VEC        0x50u           /* the AP's IPIs: a class below, taken after it */
#define CLI_US          4000u           /* how long the BSP keeps IF = 0 */
#define PEER_GAP_US     100u            /* between two of the AP's IPIs */
#define ROUNDS          3u

static volatile uint32_t timer_hits, peer_hits, hits_in_cli;
static volatile bool in_cli, peer_run, peer_done;
static uint32_t bsp_id;

static void on_timer(struct ex_regs *r)
{
	(void)r;
	timer_hits++;
	if (in_cli)
		hits_in_cli++;
	apic_eoi();
}

static void on_peer(struct ex_regs *r)
{
	(void)r;
	peer_hits++;
	if (in_cli)
		hits_in_cli++;
	apic_eoi();
}

/* On the AP: waits for the BSP's CLI section, then IPIs to the BSP for
 * as long as it lasts. */
static void peer_send(void *arg)
{
	(void)arg;
	while (!peer_run)
		pause();
	while (peer_run) {
		apic_icr_write(smp_icr(LAPIC_DM_FIXED, PEER_VEC, LAPIC_DEST_NONE, false), bsp_id);
		tsc_delay_us(PEER_GAP_US);
	}
	peer_done = true;
}

/* Entered with IF=0 (main, and the last round's apic_util_let_in): the
 * report line and the APIC writes below are VM exits with IF=0. */
static void round_blocked(unsigned n, unsigned peer)
{
	uint64_t end;

	timer_hits = peer_hits = hits_in_cli = 0;
	peer_done = peer_run = false;
	if (!report(on_cpu_async(peer, peer_send, NULL), "round %u: work posted to cpu%u", n, peer))
		return;
	apic_write(LAPIC_LVT_TIMER, (uint32_t)FIELD_PREP(LAPIC_LVT_TIMER_MODE,
							 LAPIC_TIMER_TSC_DEADLINE) | TIMER_VEC);
	wrmsr(MSR_IA32_TSC_DEADLINE, rdtsc() + tsc_from_us(TIMER_US));
	cli();
	in_cli = true;
	peer_run = true;
	end = rdtsc() + tsc_from_us(CLI_US);
	while (rdtsc() < end)
		pause();
	in_cli = false;
	peer_run = false;
	report(hits_in_cli == 0, "round %u: IF=0: no interrupt taken (%u of them)", n, hits_in_cli);
	report(apic_vec_test(LAPIC_IRR, TIMER_VEC),
	       "round %u: IF=0: the timer's interrupt waits in IRR", n);
	apic_util_let_in(&timer_hits, 1);
	report(timer_hits == 1, "round %u: after STI the timer's interrupt arrives once (%u)", n,
	       timer_hits);
	report(on_cpu_wait(peer) && peer_done && peer_hits > 0,
	       "round %u: the AP's IPIs arrive after STI (%u)", n, peer_hits);
}

int main(int argc, char **argv)
{
	unsigned peer;

	(void)argc;
	(void)argv;
	if (!apic_test_start("intr_if_blocked"))
		return report_summary();
	if (!smp_init_peer(&peer))
		return apic_test_end();
	bsp_id = apic_id();
	handle_irq(TIMER_VEC, on_timer);
	handle_irq(PEER_VEC, on_peer);
	cli();
	for (unsigned n = 0; n < ROUNDS; n++)
		round_blocked(n, peer);
	return apic_test_end();
}
