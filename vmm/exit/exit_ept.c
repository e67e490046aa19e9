// SPDX-License-Identifier: BSD-2-Clause
/*
 * EPT exits. RAM is mapped, so a violation is the local APIC page (the
 * virtual APIC), or memory with nothing behind it (vmm/dev/dev_mmio_hole.c).
 */
#include "vmm/exit/exit.h"
#include "vmm/apic/vapic.h"
#include "vmm/dev/dev_mmio_hole.h"
#include "vmx/vmx.h"
#include "vmm/vcpu/vcpu_dump.h"

/*
 * SDM Vol. 3C, "Information for VM Exits During Event Delivery": with the
 * IDT-vectoring information valid, the access was the CPU's own while it
 * delivered an event (the exception frame pushed onto the stack, an IDT
 * or GDT read), not the instruction at RIP: decoding that instruction
 * would emulate the wrong access. tickvisor cannot complete the delivery
 * for the CPU, so the guest ends with what happened.
 */
static int ept_during_delivery(struct vcpu *v, uint64_t gpa, uint64_t qual)
{
	return vcpu_kill(v, GUEST_STATUS_BAD_ACCESS,
			 "%s of guest-physical address %#lx (no RAM) while delivering vector %u "
			 "(IDT-vectoring info %#x): the CPU's own access, not emulated",
			 qual & EPT_QUAL_WRITE ? "write" : "read", (unsigned long)gpa,
			 (unsigned)FIELD_GET(INTR_INFO_VECTOR, v->exit.idt_info), v->exit.idt_info);
}

int exit_ept_violation(struct vcpu *v)
{
	uint64_t gpa = v->exit.gpa, q = v->exit.qual;

	if (v->exit.idt_info & INTR_INFO_VALID)
		return ept_during_delivery(v, gpa, q);
	if (vapic_mmio_claims(v, gpa))
		return vapic_mmio(v, gpa, q);
	return mmio_hole_access(v, gpa, q);
}

int exit_ept_misconfig(struct vcpu *v)
{
	/* Our own tables are wrong: a host bug, but contained to this guest. */
	return vcpu_kill(v, GUEST_STATUS_KILLED, "EPT misconfiguration at guest-physical %#lx",
			 (unsigned long)v->exit.gpa);
}
