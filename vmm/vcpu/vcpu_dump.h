/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef VMM_VCPU_DUMP_H
#define VMM_VCPU_DUMP_H

#include "vmm/vcpu.h"

/* Guest register dump on serial (the vCPU's VMCS must be current). */
void vcpu_dump(struct vcpu *v);
/* Ends the guest with a register dump of v. */
int vcpu_kill(struct vcpu *v, int status, const char *fmt, ...) __printf(3, 4);

#endif
