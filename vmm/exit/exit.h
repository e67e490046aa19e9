/* SPDX-License-Identifier: BSD-2-Clause */
/* VM-exit dispatch: one handler per basic exit reason (STYLE.md rule 8). */
#ifndef VMM_EXIT_H
#define VMM_EXIT_H

#include "vmm/vcpu.h"
#include "vmm/vcpu/vcpu_run.h"

/* A handler returns 0, -1 or EXIT_RESUMABLE: the contract is the run
 * loop's (vmm/vcpu/vcpu_run.h), since the handlers of vmm/apic/ keep it
 * too. */
typedef int (*exit_fn)(struct vcpu *v);

/* One row of the exit table: the handler, and the exit information it
 * reads from v->exit (VMX_NEED_*); vmm_handle_exit() reads no more. */
struct exit_entry {
	exit_fn fn;
	unsigned needs;
};

/* vmm_handle_exit(), which the run loop calls, is declared in
 * vmm/vcpu/vcpu_run.h. */
/* After a handler returned -1: the guest has ended (if it has not, that is
 * a tickvisor bug, and it ends now). Returns -1. */
int vmm_exit_ended(struct vcpu *v);
/* Once at boot, after the log options: whether exits are traced. */
void vmm_exit_init(void);

/* exit_host_irq(), which the calibration probes call too: vmm/vcpu/vcpu_run.h. */

/* The handlers of the APIC's exits (interrupt and NMI windows, APIC
 * access and write, EOI, TPR below threshold, the preemption timer) are
 * the APIC glue's: vmm/apic/vapic.h and vmm/apic/vcpu_timer.h. */

int exit_cpuid(struct vcpu *v);
int exit_rdmsr(struct vcpu *v);
int exit_wrmsr(struct vcpu *v);
int exit_io(struct vcpu *v);
int exit_cr_access(struct vcpu *v);
int exit_ept_violation(struct vcpu *v);
int exit_ept_misconfig(struct vcpu *v);
int exit_vmcall(struct vcpu *v);

#endif
