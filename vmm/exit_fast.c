// SPDX-License-Identifier: BSD-2-Clause
/*
 * The exit fast path (issue 13.4). CPUID, WRMSR to IA32_TSC_DEADLINE and
 * the x2APIC ICR writes of vlapic_x2apic_icr_fast() are the exits a guest
 * takes in a loop (a TSC-deadline timer per tick, an IPI per message);
 * KVM handles the same set before re-enabling interrupts
 * (handle_fastpath_set_msr_irqoff, vmx_exit_handlers_fastpath) for the
 * same reason. They are handled here by the same code the exit table
 * uses, and the run loop re-enters at once when vcpu_entry_idle() says
 * its pre-entry work (vcpu_run.c, vcpu_timer.c, vapic_inject.c) has
 * nothing to do; otherwise it does that work as after any other exit.
 */
#include "drivers/io.h"
#include "vmm/exit.h"
#include "vmm/exit_fast.h"
#include "vmm/host/percpu.h"
#include "vmm/lapic_glue.h"
#include "vmm/vcpu_run.h"
#include "vmm/vcpu_timer.h"
#include "vmx/vmx.h"

#define MSR_X2APIC_ICR LAPIC_MSR(LAPIC_ICR_LO)

/*
 * Each condition stands for a step of the pre-entry work, in the order
 * vcpu_run() takes them; a step that finds its condition false has work.
 * Everything is read with interrupts off, as the slow path reads it, so a
 * kick that comes after a check exits the guest at once, as there.
 *
 * - timer_host_drain(), and the host LAPIC/HPET backends: no host timer
 *   armed on this CPU. With one armed the drain may have an interrupt to
 *   let in, and its backend re-arms on each entry: slow path.
 * - the ended flag, the time limit, INIT/SIPI, vapic_mode_sync(): flags
 *   other CPUs set before they kick. An EPT change elsewhere reaches this
 *   vCPU as apic_mode_dirty (vapic.c, ept_flush_all), so that one check
 *   covers the EPT generation too. The time limit is in preempt_at below.
 * - vcpu_timer_before_entry(): its inputs are the target (timer_dirty
 *   when it moved), the advance (changed only by vcpu_timer_after_entry,
 *   which then sets timer_dirty), timer_exit/halt_wake (set only by the
 *   preemption-timer exit, the host timer interrupt and the halt path,
 *   all slow) and, for a vCPU with others, RFLAGS.IF (the stop poll).
 *   With those unchanged it would arm the preemption timer for the same
 *   preempt_at again, and vcpu_timer_load_preempt() reloads the count
 *   from it before every entry. An expiry due within the advance, or the
 *   time limit, makes now >= preempt_at (preempt_at is the earliest of
 *   target - advance, the limit and the stop poll): slow path, which
 *   delivers it. Without the preemption timer nothing may be armed.
 * - vapic_inject(): nothing injected since the exit (an exception from
 *   the handler, a #DB for TF), no NMI, no posted request to fold, not
 *   hlt=guest (whose HLT-exiting and wake-up depend on what is pending);
 *   with virtual-interrupt delivery RVI/SVI in step with the page (the
 *   CPU delivers from them), without it nothing in IRR: a pending vector,
 *   injectable now or not, goes the slow way, which injects it or asks
 *   for its window (also right after an exit that ended an STI shadow).
 *   With APICv but the APIC software-disabled the slow path also keeps
 *   the TPR threshold: slow.
 */
bool vcpu_entry_idle(struct vcpu *v)
{
	const struct timer_cpu *tc = &this_cpu()->timer;
	const struct guest *g = v->guest;
	struct vlapic *l = v->lapic;

	if (READ_ONCE(tc->lapic_armed) | READ_ONCE(tc->hpet_armed))
		return false;
	if (READ_ONCE(g->ended) || v->wait_sipi || READ_ONCE(l->init_pending) ||
	    READ_ONCE(l->sipi_pending) || READ_ONCE(v->apic_mode_dirty))
		return false;
	if (v->timer_dirty || v->timer_exit || v->halt_wake)
		return false;
	if (v->pin_ctls & BIT(PIN_PREEMPT_TIMER)) {
		if (rdtsc() >= v->preempt_at)
			return false;
	} else if (g->deadline_tsc || l->timer.armed) {
		return false;
	}
	if (g->nvcpus > 1 && !(vmread(VMCS_GUEST_RFLAGS) & RFLAGS_IF))
		return false;
	if (v->injecting || READ_ONCE(l->nmi_pending) || g->spec->opts.hlt == HLT_GUEST ||
	    !vapic_pi_idle(v))
		return false;
	if (l->hw_vid)
		return !READ_ONCE(v->intr_dirty);
	return !g->apicv && vlapic_highest_irr(l) < 0;
}

/* The ICR write vlapic_x2apic_icr_fast() takes: exit_wrmsr() without the
 * MSR dispatch. It does not set intr_dirty as vcpu_msr_write_apic() does
 * for every APIC write: an IPI changes this vCPU's IRR only when it is
 * its own target, and then vlapic_accept() notifies it (op_notify sets
 * intr_dirty). false: not taken, nothing done. */
static bool fast_icr(struct vcpu *v, uint32_t reason, uint64_t val)
{
	if (!vlapic_x2apic_icr_fast(v->lapic, val))
		return false;
	vmx_read_exit(&v->exit, reason, VMX_NEED_INSN);
	vcpu_skip_insn(v);
	return true;
}

/* Both WRMSR and CPUID rows of the exit table need the instruction and
 * nothing more; it is read once the exit is known to be taken here. */
static bool fast_wrmsr(struct vcpu *v, uint32_t reason)
{
	uint64_t *g = v->regs.gpr;
	uint32_t msr = (uint32_t)g[GPR_RCX];

	if (msr == MSR_X2APIC_ICR)
		return fast_icr(v, reason, (g[GPR_RDX] << 32) | (uint32_t)g[GPR_RAX]);
	if (msr != MSR_IA32_TSC_DEADLINE)
		return false;
	vmx_read_exit(&v->exit, reason, VMX_NEED_INSN);
	exit_wrmsr(v);
	/* The one timer this exit may have moved: re-armed here as the
	 * pre-entry work would (the host-timer backends go that way). */
	if (v->timer_dirty && v->timer_kind == TIMER_PREEMPT)
		vcpu_timer_before_entry(v);
	return true;
}

enum exit_fast exit_fast(struct vcpu *v, uint32_t reason)
{
	bool done;

	/* The full reason: an entry failure (bit 31) never matches. */
	if (reason != VMX_EXIT_CPUID && reason != VMX_EXIT_WRMSR)
		return EXIT_FAST_NONE;
	if (reason == VMX_EXIT_CPUID) {
		vmx_read_exit(&v->exit, reason, VMX_NEED_INSN);
		done = !exit_cpuid(v);
	} else {
		done = fast_wrmsr(v, reason);
	}
	if (!done)
		return EXIT_FAST_NONE;
	v->stats.exits[reason]++;
	v->stats.total++;
	return vcpu_entry_idle(v) ? EXIT_FAST_RESUME : EXIT_FAST_DONE;
}
