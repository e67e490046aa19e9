// SPDX-License-Identifier: BSD-2-Clause
/* EPT exits: the local APIC page goes to the virtual APIC; any other
 * access outside guest RAM ends the guest with the faulting address. */
#include "vmm/exit.h"
#include "vmm/lapic_glue.h"
#include "vmx/vmx.h"

int exit_ept_violation(struct vcpu *v)
{
	uint64_t gpa = vmread(VMCS_GUEST_PHYS_ADDR), q = v->exit.qual;

	if (vcpu_apic_mmio_claims(v, gpa))
		return vcpu_apic_mmio(v, gpa, q);
	return vcpu_kill(v, GUEST_STATUS_BAD_ACCESS,
			 "%s of guest-physical address %#lx outside RAM (%lu MiB) and devices",
			 q & EPT_QUAL_FETCH ? "instruction fetch" : q & EPT_QUAL_WRITE ? "write" : "read",
			 (unsigned long)gpa, (unsigned long)(v->guest->ram_size >> 20));
}

int exit_ept_misconfig(struct vcpu *v)
{
	/* Our own tables are wrong: a host bug, but contained to this guest. */
	return vcpu_kill(v, GUEST_STATUS_KILLED, "EPT misconfiguration at guest-physical %#lx",
			 (unsigned long)vmread(VMCS_GUEST_PHYS_ADDR));
}
