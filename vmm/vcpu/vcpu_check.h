/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef VMM_VCPU_CHECK_H
#define VMM_VCPU_CHECK_H

#include "vmm/vcpu.h"

/* After "VM-entry failure: invalid guest state": names the broken rules. */
void vcpu_check_guest_state(struct vcpu *v);

#endif
