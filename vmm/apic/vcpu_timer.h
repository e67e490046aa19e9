/* SPDX-License-Identifier: BSD-2-Clause */
/* A vCPU's APIC timer on the hardware: expiry before entry, the backend
 * that brings the next expiry back as an exit, sleeping a halted vCPU. */
#ifndef VMM_VCPU_TIMER_H
#define VMM_VCPU_TIMER_H

#include "timer/host.h"
#include "timer/preempt.h"
#include "vmm/vcpu.h"
#include "vmx/vmx.h"

void vcpu_timer_init(struct vcpu *v);
/* TV_HC_INFO encoding: 1 preempt, 2 lapic, 3 hpet, 4 posted. */
unsigned vcpu_timer_backend(const struct vcpu *v);
/* Before each entry: deliver a due expiry, arm the backend. Through the
 * variant vcpu_timer_init() chose for the backend (posted or not) and the
 * trace mask, so that the entry path tests neither. */
static inline void vcpu_timer_before_entry(struct vcpu *v)
{
	v->timer_before_entry(v);
}
/* vcpu_timer_before_entry() for the exit fast path after the guest moved
 * its timer (a TSC-deadline write), on the preemption-timer backend and
 * with timer tracing off. */
void vcpu_timer_rearm_preempt(struct vcpu *v);
/*
 * The VMX-preemption timer counts in non-root mode only (SDM Vol. 3C,
 * "VMX-Preemption Timer"), so its count is worked out from the deadline
 * arm_preempt() chose at the last moment, right before VMRESUME: root-mode
 * work after the arming (the RVI/SVI sync of vapic_inject, which some
 * entries do and others skip) would otherwise push the exit later by its
 * own cost. A periodic timer's first tick, armed by an entry without that
 * sync, came ~150 cycles earlier than every later tick (armed by entries
 * with it) and showed as a constant drift of the whole series.
 */
static inline void vcpu_timer_load_preempt(struct vcpu *v)
{
	if (v->cached_pin_ctls & BIT(PIN_PREEMPT_TIMER))
		vmwrite(VMCS_PREEMPT_TIMER_VALUE,
			preempt_value(v->preempt_at, rdtsc(), timer_caps.preempt_rate));
}
/* The guest executed HLT (exit policy): wait here until it has something
 * to take (with IF clear: an NMI or INIT only). */
int vcpu_timer_block(struct vcpu *v, bool if_set);
int exit_preempt_timer(struct vcpu *v);
/* After a VM entry that waited for an advanced timer (v->spin_target set):
 * feed the tuner. */
void vcpu_timer_after_entry(struct vcpu *v);
/* vCPU INIT/reset: disarm every hardware timer of this vCPU. */
void vcpu_timer_reset(struct vcpu *v);
/* Registers the host-timer backends' interrupt handlers (once, at boot). */
void vcpu_timer_host_init(void);

#endif
