/* SPDX-License-Identifier: BSD-2-Clause */
/* The guest's TSC: IA32_TSC and IA32_TSC_ADJUST as the guest sees them. */
#ifndef VMM_VCPU_TSC_H
#define VMM_VCPU_TSC_H

#include "vmm/vcpu.h"

/* SDM Vol. 3B, "Time-Stamp Counter": writing IA32_TSC moves
 * IA32_TSC_ADJUST by the same amount and vice versa. */
void vcpu_tsc_write(struct vcpu *v, uint64_t tsc);
void vcpu_tsc_write_adjust(struct vcpu *v, uint64_t adjust);
uint64_t vcpu_tsc_read(const struct vcpu *v);

#endif
