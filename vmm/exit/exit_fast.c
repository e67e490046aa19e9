// SPDX-License-Identifier: BSD-2-Clause
/*
 * The exit fast path (issue 13.4). CPUID, WRMSR to IA32_TSC_DEADLINE and
 * the ICR writes of vlapic_x2apic_icr_fast() and vlapic_xapic_icr_fast()
 * are the exits a guest takes in a loop (a TSC-deadline timer per tick,
 * an IPI per message), and, on a CPU with the IF=0 erratum
 * (vapic_inject.c), the interrupt window one per IPI sent from a handler.
 * Their handlers in the exit table say so (EXIT_RESUMABLE), and
 * vmm_handle_exit() asks vcpu_entry_idle() whether the run loop's
 * pre-entry work (vcpu_run.c, vcpu_timer.c, vapic_inject.c) has anything
 * to do; if not, the vCPU re-enters at once. KVM handles the same two
 * MSR writes before re-enabling interrupts and re-enters the guest
 * straight away when no request is pending (handle_fastpath_set_msr_irqoff,
 * EXIT_FASTPATH_REENTER_GUEST), for the same reason.
 */
#include "drivers/io.h"
#include "vmm/exit/exit.h"
#include "vmm/exit/exit_fast.h"
#include "vmm/host/log.h"
#include "vmm/host/percpu.h"
#include "vmm/apic/vapic.h"
#include "vmm/vcpu/vcpu_run.h"
#include "vmm/apic/vcpu_timer.h"
#include "vmm/trace.h"
#include "vmm/vcpu/vcpu_xstate.h"
#include "vmx/vmx.h"

/* vlapic_highest_irr() < 0 without the call: eight loads, no search. */
static inline bool irr_empty(const struct vlapic *l)
{
	uint32_t any = 0;

	for (uint32_t w = 0; w < 8; w++)
		any |= vlapic_get(l, LAPIC_IRR + w * 16);
	return !any;
}

/*
 * An entry with RFLAGS.IF = 0 where it matters (cached_if0_check: the
 * stop poll or vapic_inject_init()'s guard): a vCPU with a stop poll
 * needs it armed (below), and where the guard is on (a CPU with the
 * IF=0 erratum, vmm/vcpu/vcpu_calib.c) and with virtual-interrupt delivery the
 * interrupt window - the one step of the pre-entry work done here, as
 * vid_window_if_blocked() does it, a control an earlier window exit
 * cleared. Out of line: the usual entry has IF = 1. (In an SMP
 * machine Bochs runs each CPU a trace at a time, and a taken branch ends
 * a trace: with another CPU idle each one on this path costs about half a
 * quantum of TSC cycles, so the usual case here falls through.)
 */
static __attribute__((noinline)) bool entry_if_clear(struct vcpu *v)
{
	if (v->cached_stop_poll && !v->stop_poll_armed)
		return false;
	if (vapic_vid_guard(v))
		vapic_vid_window(v);
	return true;
}

/*
 * Each condition stands for steps of the pre-entry work (vcpu_run.c,
 * vcpu_timer.c, vapic_inject.c); a step that finds its condition false
 * may have work. Everything is read with interrupts off, as the slow path
 * reads it, so a kick that comes after a check exits the guest at once,
 * as there. One step is repeated instead (entry_if_clear()): with
 * virtual-interrupt delivery an entry with IF=0 arms the interrupt window
 * where the CPU could deliver with IF=0 (the erratum of Debian's Bochs
 * 3.0, vapic_inject.c).
 *
 * - kicked: every change another CPU makes for this vCPU and every
 *   interrupt, NMI, INIT or SIPI that reaches its APIC (vlapic_accept ->
 *   op_notify, also from this CPU) comes with vcpu_kick(), which sets it;
 *   the pre-entry work clears it once it has looked (after
 *   vapic_inject()). So since the last slow entry there is: no INIT or
 *   SIPI, no new NMI, no mode, base or EPT change (vapic_mode_sync;
 *   ept_flush_all kicks), no change to IRR, and RVI/SVI are still in step
 *   (intr_dirty is set only by op_notify, by vapic_mode_sync and by the
 *   handlers of slow exits). wait_sipi is never set while the vCPU runs.
 *   An interrupt left pending then, held back by the guest, has its
 *   window exit armed, which comes as soon as the guest can take it,
 *   also right after this entry.
 * - timer_dirty: the target moved (the handler of this exit, or the
 *   advance tuned by the last entry's wait): the timer is re-armed the
 *   slow way. timer_exit and halt_wake are false here: set only by the
 *   preemption-timer exit, the host timer interrupt (it runs with
 *   interrupts on: in the drain, a halt, or an external-interrupt exit)
 *   and the halt path, all slow, and cleared by every slow entry.
 * - injecting: the handler injected an exception (a #DB for TF): the
 *   slow path orders interrupts behind it.
 * - hlt_managed: hlt=guest on a CPU where a pending virtual interrupt
 *   does not end HLT (probe 5 of vmm/vcpu/vcpu_calib.c, or not probed:
 *   hlt=guest without posted timers), whose HLT exiting the pre-entry work
 *   sets from what is pending and IF (vapic_inject.c,
 *   hlt_exit_if_blocked()). Elsewhere hlt=guest leaves the pre-entry work
 *   only wake_halted(), for a guest halted in non-root mode; an exit this
 *   path takes is an instruction's (CPUID, WRMSR, an APIC write), so the
 *   guest is active.
 * - nmi_pending: an NMI latched behind one being handled has no window
 *   armed yet; the slow path arms it (inject_nmi), so that it comes at
 *   the handler's IRET.
 * - a host-timer backend (timer=lapic/hpet) with a host timer armed on
 *   this CPU has the drain to run and a host deadline to keep: slow.
 * - ended: guest_end() kicks nobody; read it.
 * - the APIC without virtual-interrupt delivery: nothing in IRR (a vector
 *   waiting there goes the slow way, which injects it or arms its
 *   window), and not APICv with the APIC software-disabled (the slow path
 *   keeps the TPR threshold then). Posted requests need no fold:
 *   pi_notified is set only by the notification's host interrupt handler
 *   (interrupts on, as above) and cleared by every slow entry's
 *   vapic_inject(); posting is on exactly while virtual-interrupt delivery
 *   is (vapic_mode_sync), and a request posted as it went off brings its
 *   notification IPI, which exits.
 * - a vCPU with others and RFLAGS.IF clear needs the stop poll of
 *   vcpu_timer.c armed where it has one (cached_stop_poll: a CPU with the
 *   kick erratum, hlt=guest, if0_quirks=on): a slow entry with IF clear
 *   arms it, and entries made here keep its deadline (stop_poll_armed,
 *   set where vcpu_timer.c arms it); else slow. An IPI sent from an interrupt handler (IF=0),
 *   the pong of every IPI round trip, so re-enters at once.
 * - the VMX-preemption timer: armed by the last slow entry for
 *   preempt_at, the earliest of the guest timer's target less the
 *   advance, the time limit and the stop poll, all unchanged (above):
 *   vcpu_timer_load_preempt() loads its count before the entry, and
 *   when one of them is due (now >= preempt_at, *now the TSC read) the
 *   slow way delivers the expiry or ends the guest. Without the
 *   preemption timer nothing may be armed: no time limit, and no guest
 *   timer but a posted one (timer=posted: the housekeeper's to serve).
 */
static inline __attribute__((always_inline)) bool vcpu_entry_idle_inline(struct vcpu *v,
								   uint64_t *now)
{
	const struct guest *g = v->guest;
	struct vlapic *l = v->lapic;

	if (READ_ONCE(v->entry_slow))   /* kicked, timer_dirty, injecting, hlt_managed */
		return false;
	if (READ_ONCE(l->nmi_pending))
		return false;
	if (v->timer_kind != TIMER_PREEMPT &&
	    (READ_ONCE(this_cpu()->timer.lapic_armed) | READ_ONCE(this_cpu()->timer.hpet_armed)))
		return false;
	if (READ_ONCE(g->ended))
		return false;
	if (!l->hw_vid && (g->apicv || !irr_empty(l)))
		return false;
	/* Falls through for the vCPUs that test IF (SMP: Bochs ends a trace
	 * only at a taken branch); alone on the preemption timer, no VMREAD. */
	if (likely(v->cached_if0_check) && unlikely(!(vmread(VMCS_GUEST_RFLAGS) & RFLAGS_IF)) &&
	    !entry_if_clear(v))
		return false;
	if (!(v->cached_pin_ctls & BIT(PIN_PREEMPT_TIMER)))
		return !g->deadline_tsc && (v->timer_kind == TIMER_POSTED || !l->timer.armed);
	*now = rdtsc();
	return *now < v->preempt_at;
}

bool vcpu_entry_idle(struct vcpu *v)
{
	uint64_t now;

	return vcpu_entry_idle_inline(v, &now);
}

void exit_fast_init(struct vcpu *v)
{
	/* hlt_guest and hlt_vintr_erratum are set by vapic_inject_init()
	 * and the probes, called first. */
	v->hlt_managed = v->hlt_guest && v->hlt_vintr_erratum;
	v->cached_x2apic = v->guest->spec->opts.x2apic;
	/* Traced exits (log=trace:exit) all go through vmm_handle_exit(),
	 * which prints them: no hooks in the stub then. */
	if (log_trace_on(TRACE_EXIT))
		return;
	v->regs.cpuid_exit = exit_fast_cpuid;
	v->regs.wrmsr_exit = exit_fast_wrmsr;
	/* Only with APICv is there an APIC-write exit. */
	if (v->guest->apicv)
		v->regs.apic_write_exit = exit_fast_apic_write;
}

/*
 * CPUID, WRMSR and APIC write (with APICv, every xAPIC IPI), the exits a
 * guest makes in loops, are handed to these functions by the entry stub
 * itself (guest_regs.cpuid_exit, .wrmsr_exit, .apic_write_exit), before
 * vmx_run() returns: the exit-table row's handler with the exit
 * information it reads (CPUID's and WRMSR's rows ask for the instruction,
 * APIC write's for the qualification: it is trap-like, RIP already
 * past), counted as the table counts, and the guest goes straight back in
 * when the handler says EXIT_RESUMABLE and vcpu_entry_idle() agrees.
 * Nonzero: resume now (XCR0 and the preemption-timer count loaded); 0:
 * the exit is handled and the run loop's pre-entry work is due, as after
 * any other. One body (fast_exit_begin(), the handler, fast_exit_end()),
 * inlined into each with its reason constant.
 */
_Static_assert(__builtin_offsetof(struct vcpu, regs) == 0, "a vCPU begins with its registers");
_Static_assert(sizeof(((struct vcpu *)0)->entry_slow) == 4 * sizeof(bool),
	       "entry_slow covers the four flags");

/* The bookkeeping every exit needs before its handler, and the exit's
 * reason for a dump (no handler reads another field). */
static inline __attribute__((always_inline)) void fast_exit_begin(struct vcpu *v,
								   uint32_t reason)
{
	vcpu_after_exit(v);
	v->stats.exits[reason]++;
	v->exit.reason = reason;
}

/* After the handler, which returned r: nonzero to resume now. */
static inline __attribute__((always_inline)) int fast_exit_end(struct vcpu *v, uint32_t reason,
								int r)
{
	uint64_t now = 0;

	/* exit_cpuid() is always resumable and arms no timer. A WRMSR or
	 * an APIC write may not be; and the stub enters without its wait,
	 * so none may be due: a resumable TSC-deadline write whose expiry is
	 * due sets one (expire(); with LVTT masked nothing is delivered,
	 * nothing kicks). */
	if (reason != VMX_EXIT_CPUID) {
		if (unlikely(r != EXIT_RESUMABLE)) {
			if (r < 0)
				vmm_exit_ended(v);
			return 0;
		}
		if (v->regs.spin_until)
			return 0;
	}
	if (!vcpu_entry_idle_inline(v, &now))
		return 0;
	/* vcpu_timer_load_preempt() from the same TSC: the stub enters
	 * within a few dozen instructions, fewer than after the run loop
	 * loads it. */
	if (v->cached_pin_ctls & BIT(PIN_PREEMPT_TIMER))
		vmwrite(VMCS_PREEMPT_TIMER_VALUE,
			preempt_value(v->preempt_at, now, timer_caps.preempt_rate));
	return 1;
}

static inline __attribute__((always_inline)) int fast_exit(struct guest_regs *regs,
							   uint32_t reason, exit_fn handler)
{
	struct vcpu *v = (struct vcpu *)regs;

	fast_exit_begin(v, reason);
	v->exit.insn_len = (uint32_t)vmread(VMCS_EXIT_INSN_LEN);
	v->exit.rip = vmread(VMCS_GUEST_RIP);
	return fast_exit_end(v, reason, handler(v));
}

int exit_fast_cpuid(struct guest_regs *regs)
{
	return fast_exit(regs, VMX_EXIT_CPUID, exit_cpuid);
}

int exit_fast_wrmsr(struct guest_regs *regs)
{
	return fast_exit(regs, VMX_EXIT_WRMSR, exit_wrmsr);
}

/*
 * An xAPIC IPI (the ICR_LO write) is sent first, before the exit's
 * bookkeeping: vlapic_xapic_icr_fast() reads and changes none of it
 * (vcpu_after_exit(), the counters, the exit's reason and qualification),
 * and the notification reaches the other CPU that much sooner. Every
 * other write (or an IPI it declines) is exit_apic_write()'s.
 */
int exit_fast_apic_write(struct guest_regs *regs)
{
	struct vcpu *v = (struct vcpu *)regs;
	uint64_t qual = vmread(VMCS_EXIT_QUALIFICATION);
	uint32_t off = (uint32_t)FIELD_GET(APIC_ACCESS_OFFSET, qual);
	bool sent = off == LAPIC_ICR_LO && vlapic_xapic_icr_fast(v->lapic);

	fast_exit_begin(v, VMX_EXIT_APIC_WRITE);
	v->exit.qual = qual;
	return fast_exit_end(v, VMX_EXIT_APIC_WRITE,
			     sent ? EXIT_RESUMABLE : exit_apic_write_reg(v, off));
}
