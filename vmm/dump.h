/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef VMM_DUMP_H
#define VMM_DUMP_H

#include "vmm/vcpu.h"

/* Guest register dump on serial (the vCPU's VMCS must be current). */
void vcpu_dump(struct vcpu *v);
/* After "VM-entry failure: invalid guest state": names the broken rules. */
void vcpu_check_guest_state(struct vcpu *v);

#endif
