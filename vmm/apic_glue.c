// SPDX-License-Identifier: BSD-2-Clause
/* APIC MSRs of a guest, until the virtual local APIC takes them over. */
#include "drivers/io.h"
#include "vmm/lapic_glue.h"
#include "vmm/msr.h"

int vcpu_msr_read_apic(struct vcpu *v, uint32_t msr, uint64_t *val)
{
	if (msr != MSR_IA32_APIC_BASE)
		return -1;
	*val = 0xfee00000ull | BIT(11) | (v->id == 0 ? BIT(8) : 0);
	return 0;
}

int vcpu_msr_write_apic(struct vcpu *v, uint32_t msr, uint64_t val)
{
	return -1;
}

bool vcpu_apic_mmio_claims(struct vcpu *v, uint64_t gpa)
{
	return false;
}

int vcpu_apic_mmio(struct vcpu *v, uint64_t gpa, uint64_t qual)
{
	return -1;
}

uint32_t vcpu_info_flags(struct vcpu *v)
{
	return 0;
}
