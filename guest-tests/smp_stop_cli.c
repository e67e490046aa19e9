// SPDX-License-Identifier: BSD-2-Clause
/*
 * smp_stop_cli: the guest ends (the BSP exits with a status) while an AP
 * spins in CLI; JMP $ (issue 15.7). tickvisor must take the AP's vCPU
 * out of the guest whatever its IF: a host interrupt (the kick) does not
 * bring it out on Bochs while the guest has IF=0, although the SDM says
 * an external interrupt causes a VM exit with "external-interrupt
 * exiting" regardless of RFLAGS.IF (SDM Vol. 3C, "Pin-Based VM-Execution
 * Controls"). Before the fix the boot ended in "PANIC: cpu1 did not stop
 * running guest"; now the guest ends with its own status and the next
 * guest of the boot runs and passes. That fix was the 1 ms stop poll
 * (vmm/apic/vcpu_timer.c); the Bochs tickvisor builds now has the erratum
 * fixed (scripts/bochs-patches/0003: VMenter judged the entry's IF by
 * root-mode rules), the probe of vmm/vcpu/vcpu_calib.c finds it gone and the
 * stop poll off, so ap=spin checks that the kick itself brings the AP
 * out; ap=hlt (hlt=guest) keeps the stop poll, and checks that.
 *
 * ap=spin (default): the AP spins in CLI; JMP $. ap=hlt: CLI; HLT - with
 * hlt=guest the AP sits in the HLT activity state with IF=0, which Bochs
 * does not leave for an external interrupt either (event.cc,
 * handleWaitForEvent wants IF); with hlt=exit it sleeps in tickvisor.
 * peer=N picks the AP (default 1).
 */
#include "lib/guest.h"
#include "lib/smp.h"
#include "lib/tsc.h"

#define SPIN_WAIT_US    100000u

static volatile uint32_t spinning;

/* CLI, then CPUID (a VM exit: the vCPU is entered again with IF=0
 * already clear, which is what Bochs mishandles - it unmasks external
 * interrupts for "external-interrupt exiting" only when the guest itself
 * changes IF, flag_ctrl_pro.cc handleInterruptMaskChange), then spin. */
static void __noreturn ap_spin_cli(void *arg)
{
	(void)arg;
	cli();
	cpuid(0);
	spinning = 1;
	__asm__ volatile("1: jmp 1b" ::: "memory");
	__builtin_unreachable();
}

static void __noreturn ap_hlt_cli(void *arg)
{
	(void)arg;
	cli();
	cpuid(0);
	spinning = 1;
	for (;;)
		hlt();
}

int main(int argc, char **argv)
{
	const char *ap = arg_get("ap");
	bool hlt = ap && !strcmp(ap, "hlt");
	uint64_t deadline;
	unsigned peer;

	(void)argc;
	(void)argv;
	report_prefix_push("smp_stop_cli");
	if (smp_init_peer(&peer) && report(on_cpu_async(peer, hlt ? ap_hlt_cli : ap_spin_cli,
							NULL), "work posted to cpu%u", peer)) {
		deadline = tsc_deadline_us(SPIN_WAIT_US);
		while (!spinning && !tsc_passed(deadline))
			pause();
		report(spinning, "cpu%u %s with IF=0; the BSP ends the guest now", peer,
		       hlt ? "halts" : "spins");
	}
	report_prefix_pop();
	return report_summary();
}
