// SPDX-License-Identifier: BSD-2-Clause
/*
 * time_limit: the guest's time limit (timeout= in tickvisor.cfg) ends it
 * in every state a guest can leave its vCPU in, with status 254, and the
 * next guest still runs (issue 10.7; DESIGN.md, "Guest environment": "the
 * guest's time limit ends it in every state"). mode= picks the state:
 *
 *   spin       CLI; JMP $ - running, no exit ever
 *   cli_hlt    CLI; HLT - halted with IF=0 (in the guest with hlt=guest,
 *              in tickvisor with hlt=exit)
 *   init_self  xAPIC ICR_HI = own APIC ID, ICR_LO = 0x4500: INIT to
 *              itself, physical destination. tickvisor puts every vCPU
 *              that takes an INIT into wait-for-SIPI (vmm/vcpu/vcpu_run.c);
 *              nobody sends a SIPI here, so only the time limit can end
 *              it. (An AP does the same on hardware, SDM Vol. 3A, "MP
 *              Initialization Protocol"; a real BSP instead restarts at
 *              the reset vector - Bochs cpu/init.cc reset() and KVM's
 *              kvm_apic_accept_events both do that - where a tickvisor
 *              guest has no firmware. Either way the boot must go on.)
 *   smp_hlt    CLI; HLT on the BSP and on an AP (vcpus=2): with hlt=exit
 *              both sleep in tickvisor, with hlt=guest both sit in the
 *              guest's HLT activity state.
 *
 * Each says which state it enters (an INFO line: nothing is checked by
 * the guest there; the suite checks status 254 and tickvisor's line);
 * anything after that line means the state was left and is a FAIL.
 */
#include "lib/guest.h"
#include "lib/smp.h"

#define INIT_SELF_ICR   0x4500u         /* INIT, assert, physical, no shorthand */

static void __noreturn enter_spin(void)
{
	__asm__ volatile("cli; 1: jmp 1b" ::: "memory");
	__builtin_unreachable();
}

static void enter_cli_hlt(void)
{
	for (int i = 0; i < 4; i++) {
		cli();
		hlt();
	}
}

static void __noreturn ap_cli_hlt(void *arg)
{
	(void)arg;
	for (;;) {
		cli();
		hlt();
	}
}

static void enter_smp_hlt(void)
{
	unsigned peer;

	if (!smp_init_peer(&peer) || !on_cpu_async(peer, ap_cli_hlt, NULL)) {
		report_fail("no AP to halt");
		return;
	}
	enter_cli_hlt();
}

static void enter_init_self(void)
{
	if (apic_is_x2apic()) {
		report_fail("the loader left x2APIC mode on: no xAPIC ICR to write");
		return;
	}
	cli();
	apic_sw_enable();
	apic_write(LAPIC_ICR_HI, apic_id() << 24);
	apic_write(LAPIC_ICR_LO, INIT_SELF_ICR);
	for (int i = 0; i < 1000000; i++)
		pause();
}

int main(int argc, char **argv)
{
	const char *mode = arg_get("mode");

	(void)argc;
	(void)argv;
	report_prefix_push("time_limit");
	if (!mode)
		mode = "spin";
	report_info("entering state %s; the time limit must end it", mode);
	if (!strcmp(mode, "spin"))
		enter_spin();
	else if (!strcmp(mode, "cli_hlt"))
		enter_cli_hlt();
	else if (!strcmp(mode, "smp_hlt"))
		enter_smp_hlt();
	else if (!strcmp(mode, "init_self"))
		enter_init_self();
	else
		report_fail("unknown mode=%s", mode);
	report_fail("state %s was left: the guest runs on", mode);
	return report_summary();
}
