/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The exit fast path (issue 13.4; shared/seeds/001, "Micro optimize IPI
 * latency"): CPUID, WRMSR and APIC-write exits are handled from the
 * entry stub, and after one whose handler returned EXIT_RESUMABLE (CPUID,
 * WRMSR to IA32_TSC_DEADLINE and to the x2APIC ICR, an xAPIC ICR write)
 * the vCPU re-enters at once when the run loop's pre-entry work has
 * nothing to do.
 */
#ifndef VMM_EXIT_FAST_H
#define VMM_EXIT_FAST_H

#include "vmm/vcpu.h"
#include "vmm/vcpu/vcpu_run.h"

/* exit_fast_init(), which the run loop calls: vmm/vcpu/vcpu_run.h. */

/* Nothing for the run loop to do before the next entry but loading the
 * VMX-preemption timer's count (vmm/exit/exit_fast.c says condition by
 * condition why), and then it has armed the interrupt window an IF=0
 * entry needs (vapic_vid_guard()): the caller re-enters at once. */
bool vcpu_entry_idle(struct vcpu *v);

/* The entry stub's hooks for CPUID, WRMSR and APIC-write exits
 * (guest_regs.cpuid_exit, .wrmsr_exit, .apic_write_exit): the exit
 * handled as its exit-table row would; nonzero when the vCPU may enter
 * again at once (vcpu_entry_idle()), else 0. */
int exit_fast_cpuid(struct guest_regs *regs);
int exit_fast_wrmsr(struct guest_regs *regs);
int exit_fast_apic_write(struct guest_regs *regs);

#endif
