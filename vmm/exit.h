/* SPDX-License-Identifier: BSD-2-Clause */
/* VM-exit dispatch: one handler per basic exit reason (STYLE.md rule 8). */
#ifndef VMM_EXIT_H
#define VMM_EXIT_H

#include "vmm/vcpu.h"

/* A handler returns 0 to go on running the vCPU, or -1 when it ended the
 * guest (guest_end/vcpu_kill). */
typedef int (*exit_fn)(struct vcpu *v);

void vmm_handle_exit(struct vcpu *v);

int exit_cpuid(struct vcpu *v);
int exit_rdmsr(struct vcpu *v);
int exit_wrmsr(struct vcpu *v);
int exit_io(struct vcpu *v);
int exit_cr_access(struct vcpu *v);
int exit_ept_violation(struct vcpu *v);
int exit_ept_misconfig(struct vcpu *v);
int exit_vmcall(struct vcpu *v);

#endif
