// SPDX-License-Identifier: BSD-2-Clause
/*
 * event_hole: an exception whose frame the CPU pushes onto unassigned
 * guest-physical memory. The EPT violation then comes with valid
 * IDT-vectoring information (Intel SDM Vol. 3C, "Information for VM Exits
 * During Event Delivery"): the access was the CPU's own, not the
 * instruction at RIP. KVM (vmx.c, handle_ept_violation/
 * vmx_complete_interrupts) and Xen (vmx_idtv_reinject) keep the event to
 * deliver it again instead of emulating that instruction; tickvisor cannot
 * complete the delivery to unassigned memory and must end the guest
 * (status 252) rather than emulate the faulting store at RIP as if it had
 * run, which would let the guest go on past an exception it never took.
 */
#include "lib/guest.h"

#define HOLE_STACK 0xd0001000ul         /* above RAM: nothing behind it */

int main(int argc, char **argv)
{
	uint64_t noncanonical = 0x8000000000000000ull;

	(void)argc;
	(void)argv;
	cli();
	report_info("event_hole: #GP with the stack in unassigned memory");
	/* The store raises #GP (non-canonical); delivering it pushes onto
	 * HOLE_STACK. */
	asm volatile("mov %%rsp, %%rbx\n\t"
		     "mov %1, %%rsp\n\t"
		     "movl $0, (%0)\n\t"
		     "mov %%rbx, %%rsp"
		     : : "r"(noncanonical), "r"(HOLE_STACK) : "rbx", "memory");
	report_fail("event_hole: went on past a #GP it could not have delivered");
	return report_summary();
}
