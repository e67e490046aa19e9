/* SPDX-License-Identifier: BSD-2-Clause */
/* A vCPU's APIC timer on the hardware: expiry before entry, the backend
 * that brings the next expiry back as an exit, sleeping a halted vCPU. */
#ifndef VMM_VCPU_TIMER_H
#define VMM_VCPU_TIMER_H

#include "timer/host.h"
#include "vmm/vcpu.h"
#include "vmm/vcpu/vcpu_run.h"

/* vcpu_timer_before_entry(), vcpu_timer_load_preempt() and
 * vcpu_timer_reset(), which the run loop calls, are declared in
 * vmm/vcpu/vcpu_run.h. */

void vcpu_timer_init(struct vcpu *v);
/* TV_HC_INFO encoding: 1 preempt, 2 lapic, 3 hpet, 4 posted. */
unsigned vcpu_timer_backend(const struct vcpu *v);
/* vcpu_timer_before_entry() for the exit fast path after the guest moved
 * its timer (a TSC-deadline write), on the preemption-timer backend and
 * with timer tracing off. */
void vcpu_timer_rearm_preempt(struct vcpu *v);
/* The guest executed HLT (exit policy): wait here until it has something
 * to take (with IF clear: an NMI or INIT only). */
int vcpu_timer_block(struct vcpu *v, bool if_set);
int exit_preempt_timer(struct vcpu *v);
/* TV_HC_HPET_STRAYS (inject=hpet-strays): stray HPET interrupts on this
 * CPU until its input is masked; 0 once it is, ~0 where not possible. */
uint64_t vcpu_timer_hpet_strays(struct vcpu *v);
/* Registers the host-timer backends' interrupt handlers (once, at boot). */
void vcpu_timer_host_init(void);

#endif
