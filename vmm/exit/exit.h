/* SPDX-License-Identifier: BSD-2-Clause */
/* VM-exit dispatch: one handler per basic exit reason (STYLE.md rule 8). */
#ifndef VMM_EXIT_H
#define VMM_EXIT_H

#include "vmm/vcpu.h"

/* A handler returns 0 to go on running the vCPU, or -1 when it ended the
 * guest (guest_end/vcpu_kill): vmm_handle_exit() passes that on and the
 * run loop stops this vCPU at once. EXIT_RESUMABLE says the exit changed
 * nothing but what vcpu_entry_idle() looks at (vmm/exit/exit_fast.c: CPUID,
 * WRMSR to IA32_TSC_DEADLINE, the ICR writes vlapic_*_icr_fast() take and
 * the interrupt window), so the
 * vCPU may re-enter without the run loop's pre-entry work. */
typedef int (*exit_fn)(struct vcpu *v);
#define EXIT_RESUMABLE 1

/* One row of the exit table: the handler, and the exit information it
 * reads from v->exit (VMX_NEED_*); vmm_handle_exit() reads no more. */
struct exit_entry {
	exit_fn fn;
	unsigned needs;
};

/* Reads the current exit's information and handles it, given its full
 * exit reason (vmx_read_exit_reason()): 0 to go on running the vCPU after
 * the pre-entry work, 1 to enter again at once (a resumable exit that
 * vcpu_entry_idle() let through; it loaded the preemption-timer count),
 * -1 when the guest has ended. */
int vmm_handle_exit(struct vcpu *v, uint32_t reason);
/* After a handler returned -1: the guest has ended (if it has not, that is
 * a tickvisor bug, and it ends now). Returns -1. */
int vmm_exit_ended(struct vcpu *v);
/* Once at boot, after the log options: whether exits are traced. */
void vmm_exit_init(void);

/* The host handler of the interrupt an external-interrupt exit
 * acknowledged (intr_info: its VM-exit interruption information), run
 * now; an acknowledged interrupt left unhandled stays in service and
 * blocks every vector of its priority class. */
void exit_host_irq(uint32_t intr_info);

/* The APIC's (vmm/apic/vapic_inject.c, vmm/apic/vapic_mmio.c). */
int exit_intr_window(struct vcpu *v);
int exit_nmi_window(struct vcpu *v);
int exit_apic_access(struct vcpu *v);
int exit_apic_write(struct vcpu *v);
/* exit_apic_write() but for the IPI vlapic_xapic_icr_fast() takes: the
 * register at `off` written through vlapic_apicv_write(). */
int exit_apic_write_reg(struct vcpu *v, uint32_t off);
int exit_eoi_induced(struct vcpu *v);
int exit_tpr_below(struct vcpu *v);

int exit_cpuid(struct vcpu *v);
int exit_rdmsr(struct vcpu *v);
int exit_wrmsr(struct vcpu *v);
int exit_io(struct vcpu *v);
int exit_cr_access(struct vcpu *v);
int exit_ept_violation(struct vcpu *v);
int exit_ept_misconfig(struct vcpu *v);
int exit_vmcall(struct vcpu *v);

#endif
