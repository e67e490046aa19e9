/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The exit fast path (issue 13.4; shared/seeds/001, "Micro optimize IPI
 * latency"): the frequent exits whose handling touches nothing the run
 * loop's pre-entry work looks at are handled right after the exit, and
 * the vCPU resumes at once when that work has nothing to do.
 */
#ifndef VMM_EXIT_FAST_H
#define VMM_EXIT_FAST_H

#include "vmm/vcpu.h"

enum exit_fast {
	EXIT_FAST_NONE,         /* not one of them: vmm_handle_exit() */
	EXIT_FAST_DONE,         /* handled; the pre-entry work has something to do */
	EXIT_FAST_RESUME,       /* handled; nothing pending: enter again at once */
};

/* CPUID, WRMSR to IA32_TSC_DEADLINE, and WRMSR to the x2APIC ICR when
 * vlapic_x2apic_icr_fast() takes it: handled exactly as their exit-table
 * handlers do. Any other exit (and any other ICR value) is left alone. */
enum exit_fast exit_fast(struct vcpu *v, uint32_t reason);

/* Nothing for the run loop to do before the next entry (vmm/exit_fast.c
 * says condition by condition why). */
bool vcpu_entry_idle(struct vcpu *v);

#endif
