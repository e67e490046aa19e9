/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The entry-time timer decision (DESIGN.md, "Data flow of one guest timer
 * tick", steps 3-4), as pure functions of the vtimer, the host TSC, the
 * advance and the backend: is the expiry due (inside the advance window)?
 * If so, at which guest TSC is it dated and until which host TSC does the
 * entry stub hold VMRESUME? Then, for whatever is armed after it: which
 * host LAPIC/HPET deadline, and which VMX-preemption-timer deadline. vmm/
 * only applies the plan (VMCS write, host timer), in this order:
 *
 *   timer_plan_due()?  -> timer_plan_expiry(), deliver the expiry
 *   timer_plan_arm()   -> the preemption timer, or timer_host_arm()
 *   right before VMRESUME: preempt_value() of the plan's preempt_at
 *
 * The arming plan is made on the vtimer as the expiry left it (a periodic
 * timer has its next target then), and never expires a second time in
 * the same entry: a target that is due again comes back as an immediate
 * exit. The preemption-timer count is worked out from the plan's absolute
 * deadline at the last moment, because the timer counts in non-root mode
 * only (vcpu_timer_load_preempt(), declared in vmm/vcpu/vcpu_run.h).
 *
 * Everything is inline: this is the path of every VM entry, and the
 * compiler keeps the plan in registers. Pure C, host-tested
 * (tests/unit/test_entry_plan.c).
 */
#ifndef TIMER_ENTRY_PLAN_H
#define TIMER_ENTRY_PLAN_H

#include "drivers/base.h"
#include "timer/host.h"
#include "timer/preempt.h"
#include "timer/vtimer.h"

/* No VMX-preemption-timer deadline: the timer is off. */
#define TIMER_PLAN_NEVER        (~0ull)

/* What the entry path knows when it decides. Host TSC unless said. */
struct timer_plan_in {
	bool armed;                     /* the guest's APIC timer (struct vtimer) */
	uint64_t target;                /* ... and its target, guest TSC */
	uint64_t host_now;              /* host TSC read for this decision */
	uint64_t tsc_offset;            /* guest TSC = host TSC + tsc_offset */
	uint64_t advance_tsc;           /* how early the backend fires (advance_get) */
	uint64_t entry_tsc;             /* measured: end of the entry wait -> guest */
	enum timer_kind backend;        /* serving this vCPU's guest timer */
};

/* The decision. */
struct timer_entry_plan {
	uint64_t expire_at;             /* guest TSC the due expiry is dated */
	uint64_t spin_until;            /* the entry stub's wait, 0: none */
	enum timer_kind hw;             /* the timer that brings the next expiry back */
	uint64_t hw_at;                 /* its deadline; none: TIMER_PLAN_NEVER for the
					 * preemption timer (off), 0 for a host timer
					 * (disarmed) */
};

/* Is the expiry due at this entry: the target reached within the advance,
 * so the backend's early firing brought us here (or a target in the past)? */
static inline __attribute__((always_inline)) bool timer_plan_due(const struct timer_plan_in *in)
{
	return in->armed && vtimer_reached(in->host_now + in->tsc_offset + in->advance_tsc,
					   in->target);
}

/*
 * The host TSC the entry stub waits for: the target's, less the measured
 * entry cost (entry_tsc: end of the wait -> the guest's first
 * instruction), distances taken as signed so that a target far in the
 * past (a TSC deadline of 1, SDM "TSC-Deadline Mode": it fires at once)
 * cannot wrap below 0 into a wait of 2^64 cycles in root mode, where no
 * time limit reaches (issue 10.7). The wait is never longer than the
 * advance that brought us here early; 0 means no wait at all.
 */
static inline __attribute__((always_inline)) uint64_t
timer_plan_spin_until(uint64_t target_host, uint64_t entry_tsc, uint64_t host_now, uint64_t adv)
{
	int64_t wait = (int64_t)(target_host - host_now) - (int64_t)entry_tsc;

	if (wait > (int64_t)adv)
		wait = (int64_t)adv;
	if (wait < 0 && (uint64_t)-wait >= host_now)
		return 0;
	return host_now + (uint64_t)wait;
}

/* A due expiry (timer_plan_due) is dated now, or at its target while
 * that is still ahead (inside the advance window: the stub holds the
 * entry until the exact target, which is when the guest sees it). Fills
 * expire_at and spin_until. */
static inline __attribute__((always_inline)) void
timer_plan_expiry(const struct timer_plan_in *in, struct timer_entry_plan *p)
{
	uint64_t target = in->target, now = in->host_now + in->tsc_offset;

	p->expire_at = vtimer_reached(now, target) ? now : target;
	p->spin_until = timer_plan_spin_until(target - in->tsc_offset, in->entry_tsc,
					      in->host_now, in->advance_tsc);
}

/*
 * What to arm for the next expiry: the backend's deadline is the target
 * in host TSC, `advance` early. The preemption-timer backend takes it as
 * the preemption timer's; a host-timer backend (LAPIC, HPET) as its host
 * deadline. The preemption timer has other duties in vmm/ (the guest's
 * time limit, the IF=0 stop poll, a host deadline that has passed), which
 * vmm/ adds to whatever this plan gives it. A new backend is one more
 * case here.
 */
static inline __attribute__((always_inline)) struct timer_entry_plan
timer_plan_arm(const struct timer_plan_in *in)
{
	uint64_t deadline = in->target - in->tsc_offset - in->advance_tsc;
	struct timer_entry_plan p = { .hw = in->backend };

	/* The preemption-timer backend first: it is the one of every entry
	 * of the usual configuration, and then the only test. */
	if (in->backend == TIMER_PREEMPT) {
		p.hw_at = in->armed ? deadline : TIMER_PLAN_NEVER;
		return p;
	}
	/* Posted (vmm/apic/housekeeper.c): the housekeeping CPU's host timer
	 * serves the target and the expiry arrives without an exit; this
	 * CPU's preemption timer keeps only its own duties. */
	if (in->backend == TIMER_POSTED) {
		p.hw = TIMER_PREEMPT;
		p.hw_at = TIMER_PLAN_NEVER;
		return p;
	}
	p.hw_at = in->armed ? deadline : 0;
	return p;
}

#endif
