/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The trace points' lines (log=trace:timer,ipi,exit,late), out of line: a
 * hot path asks log_trace_on() first and calls these only when it is on.
 */
#ifndef VMM_TRACE_H
#define VMM_TRACE_H

#include "vmm/host/log.h"
#include "vmm/vcpu.h"

/* Either trace point of an expiry (timer, late): still one test of the
 * mask, one branch. */
static inline __attribute__((always_inline)) bool trace_expiry_on(void)
{
	return unlikely(trace_mask & (BIT(TRACE_TIMER) | BIT(TRACE_LATE)));
}

/* timer: the guest armed, moved or stopped its APIC timer (a TMICT,
 * TDCR or IA32_TSC_DEADLINE write just handled). */
void trace_timer_arm(struct vcpu *v);
/* timer: an expiry was delivered to IRR (unless LVTT is masked) and is
 * injected from there, by virtual-interrupt delivery or by tickvisor at
 * this entry (or at the interrupt window IF opens); the entry waits until
 * host TSC spin_until (0: none). One trace point for expiry and
 * injection, so that a traced tick's path pays one branch when off.
 * late: the same expiry, if dated (expire_at, guest TSC) more than
 * late_us after its target; halted: found by a vCPU halted in root mode,
 * not at an entry after an exit. Called on the vCPU's own CPU. */
void trace_timer_expire(struct vcpu *v, uint64_t target, uint64_t expire_at,
			uint64_t spin_until, bool halted);
/* late, for an expiry the housekeeper posts (timer=posted): on its CPU,
 * so the vCPU's VMCS is not read. */
void trace_timer_late_posted(struct vcpu *v, uint64_t target, uint64_t expire_at);
/* ipi: lapic/'s trace op: l sends ipi (t NULL) and reaches t. */
void trace_ipi(struct vlapic *l, const struct vlapic *t, const struct lapic_ipi *ipi);
/* exit: every VM exit, with its reason (v->exit, as just read). */
void trace_exit(struct vcpu *v);

#endif
