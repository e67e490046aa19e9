/* SPDX-License-Identifier: BSD-2-Clause */
/* What the exit handlers ask of a vCPU's local APIC. */
#ifndef VMM_LAPIC_GLUE_H
#define VMM_LAPIC_GLUE_H

#include "vmm/vcpu.h"

/* Is gpa inside the vCPU's xAPIC MMIO page (when the APIC is in xAPIC mode)? */
bool vcpu_apic_mmio_claims(struct vcpu *v, uint64_t gpa);
/* Emulates the access that caused an EPT violation on the APIC page. */
int vcpu_apic_mmio(struct vcpu *v, uint64_t gpa, uint64_t qual);

/* TV_HC_INFO flags: APICv in use, timer backend. */
uint32_t vcpu_info_flags(struct vcpu *v);

#endif
