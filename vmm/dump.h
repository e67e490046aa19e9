/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef VMM_DUMP_H
#define VMM_DUMP_H

#include "vmm/vcpu.h"

/* Guest register dump on serial (the vCPU's VMCS must be current). */
void vcpu_dump(struct vcpu *v);

#endif
