// SPDX-License-Identifier: BSD-2-Clause
/*
 * Event injection before VM entry (SDM Vol. 3C, "Event Injection" and
 * "Interrupt-Window Exiting and Virtual-Interrupt Delivery"). NMIs first,
 * then the highest interrupt above PPR when RFLAGS.IF and the
 * interruptibility state allow it, else a window exit to come back when
 * they do. With virtual-interrupt delivery the CPU does the last step
 * itself from RVI; we keep RVI/SVI in step with the page.
 *
 * An entry that injects an NMI still does the maskable part: RVI/SVI in
 * step, or an interrupt-window exit for the interrupt that has to wait
 * behind the NMI (DESIGN.md "IPI rules": a pending NMI never delays
 * maskable interrupts). Otherwise a guest spinning with IF=1 would not
 * see an interrupt that became pending on the NMI's entry until some
 * later, unrelated VM exit.
 */
#include "drivers/io.h"
#include "vmm/apic/vapic.h"
#include "vmm/vcpu/vcpu_setup.h"
#include "vmx/vmx.h"
#include "vmm/vcpu/vcpu_run.h"

#define BLOCKING_STI_MOVSS (INTERRUPTIBILITY_STI | INTERRUPTIBILITY_MOV_SS)

static void set_proc_ctl(struct vcpu *v, unsigned bit, bool on)
{
	vcpu_set_ctl(&v->cached_proc_ctls, VMCS_PROC_CTLS, bit, on);
}

/* NMI blocking as the guest has it now: virtual-NMI blocking (from the
 * delivery of an NMI to the IRET of its handler; SDM Vol. 3C, "Virtual
 * NMIs"), or an NMI in this entry's injection (one whose delivery exited
 * and is delivered again). */
static bool nmi_blocked(struct vcpu *v)
{
	if (v->injecting &&
	    FIELD_GET(INTR_INFO_TYPE, vmread(VMCS_ENTRY_INTR_INFO)) == INTR_TYPE_NMI)
		return true;
	return vcpu_interruptibility(v) & INTERRUPTIBILITY_NMI;
}

/* While NMIs are blocked one more can be latched, and no more (SDM Vol.
 * 3A, "NMI Handling"); lapic/ holds up to two for an unblocked guest,
 * the one to deliver now and the one behind it. KVM's process_nmi()
 * (x86.c: the limit is 1 when NMIs are masked or one is being injected,
 * else 2) and Bochs (cpu/event.cc: one pending-NMI event bit,
 * masked on delivery, unmasked by IRET in ctrl_xfer*.cc) agree. */
static void nmi_trim(struct vcpu *v)
{
	if (READ_ONCE(v->lapic->nmi_pending) > 1 && nmi_blocked(v))
		vlapic_nmi_limit(v->lapic, 1);
}

static bool inject_nmi(struct vcpu *v)
{
	if (!READ_ONCE(v->lapic->nmi_pending))
		return false;
	if (vcpu_interruptibility(v) & (INTERRUPTIBILITY_NMI | BLOCKING_STI_MOVSS)) {
		set_proc_ctl(v, PROC_NMI_WINDOW, true);
		return false;
	}
	if (!vlapic_take_nmi(v->lapic))
		return false;
	vmwrite(VMCS_ENTRY_INTR_INFO, 2u | (INTR_TYPE_NMI << 8) | INTR_INFO_VALID);
	v->injecting = true;
	return true;
}

static bool irq_blocked(struct vcpu *v)
{
	return !(vmread(VMCS_GUEST_RFLAGS) & RFLAGS_IF) ||
	       (vcpu_interruptibility(v) & BLOCKING_STI_MOVSS);
}

/*
 * Virtual-interrupt delivery with the guest entered with RFLAGS.IF = 0:
 * interrupt-window exiting is set, so that a virtual interrupt waits for
 * the window exit, not in RVI alone. The SDM delivers a virtual interrupt
 * only with RFLAGS.IF=1, no STI/MOV-SS blocking and interrupt-window
 * exiting 0 (Vol. 3C, "Delivery of Pending Virtual Interrupts"), so where
 * the CPU follows it this changes no delivery: the window exit comes when
 * IF is 1 again, and the next entry delivers from RVI. Bochs 3.0 does
 * not: a physical interrupt that arrives in non-root mode (a kick, a
 * posted-interrupt notification, a host timer) reaches HandleExtInterrupt
 * (cpu/event.cc), which delivers any pending virtual interrupt first, IF=0
 * or not. A Linux guest with PTI then takes an interrupt on its entry
 * trampoline with the user CR3 still loaded and dies in a #PF loop (issue
 * 14, guest-tests/intr_if_blocked.c). With the window control set, Bochs's
 * evaluation (cpu/vapic.cc, VMX_Evaluate_Pending_Virtual_Interrupts) holds
 * the virtual interrupt back, also when posted-interrupt processing or a
 * virtualized EOI moves RVI/VPPR in non-root mode. The cost is one window
 * exit where a guest entered with IF=0 sets IF again: on a 2-vCPU Linux
 * guest some 20,000 per boot, and one per IPI round trip (the answer is
 * sent from a handler).
 *
 * So the window is only armed on a CPU that has the erratum: every vCPU's
 * CPU is asked at its start (vcpu_calib_probe_vid_if0(), vmm/vcpu/vcpu_calib.c,
 * which makes the erratum happen or not in a private page). The Bochs
 * tickvisor builds carries the fix (scripts/bochs-patches/0002, which
 * has HandleExtInterrupt deliver only an unmasked virtual interrupt);
 * Debian's Bochs 3.0 and 2.7 have the erratum. if0_quirks=on arms it on
 * every CPU (guest-tests/intr_if_blocked.c's _if0_quirks run), and the
 * stop poll of vcpu_timer.c too.
 *
 * And only where the erratum can bite, which takes both, read from Bochs's
 * source:
 * - IF = 0. An STI or MOV-SS shadow with IF = 1 needs no window:
 *   handleAsyncEvent (cpu/event.cc) skips its whole external-interrupt
 *   step, HandleExtInterrupt included, while interrupts_inhibited() (the
 *   shadow VM entry loads, vmx.cc), and after the shadow IF is 1: the
 *   delivery is the SDM's.
 * - a physical interrupt that can arrive while the guest runs, the only
 *   way into HandleExtInterrupt: from another vCPU (its IPI is a kick or
 *   a posted-interrupt notification), from the housekeeper (timer=posted)
 *   or from a host timer (timer=lapic/hpet). A guest of one vCPU on the
 *   VMX-preemption timer gets none: its timer and a host NMI leave
 *   through steps of handleAsyncEvent ahead of HandleExtInterrupt
 *   (preemption-timer exit, NMI exiting), its host timers are armed only
 *   while it waits in root mode (vcpu_timer_block, vcpu_wait_sipi: both
 *   disarm before the entry), and nothing else of tickvisor's IPIs that
 *   guest's CPU while it runs.
 * RVI at entry narrows nothing: with RVI = 0 (IRR empty) a virtual
 * interrupt still becomes pending in non-root mode without an exit, by
 * posted-interrupt processing (vapic.cc, VMX_Posted_Interrupt_Processing,
 * then the evaluation), a self-IPI, or a virtualized EOI or TPR write
 * uncovering a vector, and the next physical interrupt delivers it.
 * intr_if_blocked enters with IF = 0 and IRR empty, and it is its peer's
 * posted IPIs that Bochs delivered then (the second onwards).
 * vapic_vid_guard() (vapic.h) is the erratum and that second condition,
 * cached here once per vCPU; entries resumed at once (vmm/exit/exit_fast.c)
 * ask it too. cached_stop_poll, the other IF=0 workaround, is cached here
 * too (vcpu_timer.c says why), and cached_if0_check is what those entries
 * look at RFLAGS.IF for: either.
 */
void vapic_inject_init(struct vcpu *v)
{
	const struct guest *g = v->guest;
	bool quirks = g->spec->opts.if0_quirks;

	v->cached_vid_guard = (v->vid_if0_erratum || quirks) &&
			      (g->nvcpus > 1 || v->timer_kind != TIMER_PREEMPT);
	/* vcpu_timer.c says why: a kick must reach a vCPU of a guest with
	 * others; with hlt=guest it may wait in HLT with IF = 0, which Bochs
	 * does not leave for it either (event.cc, handleWaitForEvent; the
	 * third probe of vcpu_calib.c), and it may get there from an entry
	 * with IF = 1. */
	bool hlt_stuck;

	/* Beside posted timers a halted guest must wake for a virtual
	 * interrupt that became pending while it had IF = 0 (probe 5 of
	 * vcpu_calib.c); where the CPU does not, HLT exits, and the halted
	 * vCPU sleeps in root mode, where any notification wakes it. */
	v->hlt_guest = g->hlt == HLT_GUEST &&
		       !(v->timer_kind == TIMER_POSTED && v->hlt_vintr_erratum);
	if (g->hlt == HLT_GUEST && !v->hlt_guest)
		set_proc_ctl(v, PROC_HLT_EXIT, true);
	hlt_stuck = v->hlt_guest && (v->hlt_if0_erratum || quirks);

	v->cached_stop_poll = g->nvcpus > 1 && (v->kick_if0_erratum || quirks || hlt_stuck);
	v->cached_stop_poll_any_if = g->nvcpus > 1 && hlt_stuck;
	v->cached_if0_check = v->cached_stop_poll || v->cached_vid_guard;
}

static void vid_window_if_blocked(struct vcpu *v)
{
	if (vapic_vid_guard(v) && !(vmread(VMCS_GUEST_RFLAGS) & RFLAGS_IF))
		vapic_vid_window(v);
}

/* RVI/SVI from the page, after tickvisor changed IRR or ISR (an accepted
 * interrupt, an emulated APIC write, INIT). The CPU keeps the field in
 * step itself as it delivers and EOIs, so otherwise there is nothing to
 * write; and when there is, it is written whatever we wrote last. */
static __attribute__((noinline)) void sync_intr_status_dirty(struct vcpu *v)
{
	int irr, isr;

	/* Clear before reading IRR: an IPI landing meanwhile sets it again
	 * (after its IRR bit) and is picked up at the next entry. */
	if (!__atomic_exchange_n(&v->intr_dirty, false, __ATOMIC_SEQ_CST))
		return;
	irr = vlapic_highest_irr(v->lapic);
	isr = vlapic_highest_isr(v->lapic);
	vmwrite(VMCS_GUEST_INTR_STATUS, (uint16_t)((irr < 0 ? 0 : irr) | (isr < 0 ? 0 : isr) << 8));
}

/* The clean case, every entry without a change, is one inlined load. */
static inline void sync_intr_status(struct vcpu *v)
{
	if (READ_ONCE(v->intr_dirty))
		sync_intr_status_dirty(v);
}

/* TPR shadow without virtual-interrupt delivery: guest TPR writes do not
 * exit, so ask for an exit when TPR drops below the class of an interrupt
 * it holds back. Only TPR's own blocking: an in-service vector is lifted
 * by an EOI, which exits. SDM: the threshold must not exceed VTPR[7:4]. */
static void tpr_threshold(struct vcpu *v, int vec)
{
	uint32_t tpr_class = (vlapic_get(v->lapic, LAPIC_TPR) >> 4) & 0xf;
	uint32_t th = 0;

	if (vec < 0) {
		int irr = vlapic_highest_irr(v->lapic);

		if (irr >= 0 && ((uint32_t)irr >> 4) <= tpr_class)
			th = (uint32_t)irr >> 4;
	}
	vmwrite(VMCS_TPR_THRESHOLD, th);
}

/* hlt=guest: a vCPU halted in non-root mode with an interrupt it can take
 * is made active. Event injection does that by itself; a pending virtual
 * interrupt (RVI) only wakes it on some CPUs, so we do not rely on it. */
static void wake_halted(struct vcpu *v, int vec)
{
	if (vec >= 0 && vmread(VMCS_GUEST_ACTIVITY_STATE) == ACTIVITY_HLT &&
	    (vmread(VMCS_GUEST_RFLAGS) & RFLAGS_IF))
		vmwrite(VMCS_GUEST_ACTIVITY_STATE, ACTIVITY_ACTIVE);
}

/* hlt=guest with an interrupt pending that IF or an STI shadow holds
 * back: the guest's next "sti; hlt" must not sleep past it. The SDM says
 * the pending interrupt (or interrupt-window exit) ends that HLT, but not
 * every implementation does (Bochs 3.0 does not), so for as long as this
 * lasts HLT exits, and tickvisor's HLT handling delivers at once. */
static void hlt_exit_if_blocked(struct vcpu *v, int vec)
{
	if (v->hlt_guest)
		set_proc_ctl(v, PROC_HLT_EXIT, vec >= 0 && irq_blocked(v));
}

/* Virtual-interrupt delivery: the CPU delivers from RVI itself, also
 * after an NMI injected on the same entry (once its handler's IRET
 * restores IF). */
static void inject_vid(struct vcpu *v)
{
	int vec;

	sync_intr_status(v);
	vid_window_if_blocked(v);
	if (v->hlt_guest) {
		vec = vlapic_pending_vector(v->lapic);
		wake_halted(v, vec);
		/* Where probe 5 found that a pending virtual interrupt ends
		 * HLT, the CPU itself wakes the guest's next STI; HLT. */
		if (v->hlt_vintr_erratum)
			hlt_exit_if_blocked(v, vec);
	}
}

/* Software delivery. One event per entry: an interrupt behind an NMI
 * injected now waits for the interrupt window, which opens when IF is
 * 1 again (at the latest at the NMI handler's IRET). */
static void inject_intr(struct vcpu *v, bool behind_nmi)
{
	int vec = vlapic_pending_vector(v->lapic);

	if (v->guest->apicv)
		tpr_threshold(v, vec);
	hlt_exit_if_blocked(v, vec);
	if (vec < 0)
		return;
	if (behind_nmi || irq_blocked(v)) {
		set_proc_ctl(v, PROC_INTR_WINDOW, true);
		return;
	}
	vmwrite(VMCS_ENTRY_INTR_INFO, (uint32_t)vec | (INTR_TYPE_EXT_INTR << 8) | INTR_INFO_VALID);
	v->injecting = true;
	vlapic_ack(v->lapic, vec);
}

/* VMCS fields are read only when something is pending: most entries
 * have nothing to inject, and every VMREAD costs. */
static __attribute__((noinline)) void vapic_inject_pending(struct vcpu *v)
{
	bool nmi;

	if (!vapic_pi_idle(v))          /* what vapic_pi_sync() asks first, without the call */
		vapic_pi_sync(v);
	nmi_trim(v);
	/* Something is already being injected (a re-injected event or an
	 * exception from emulation): it goes first, we come back after. */
	if (v->injecting) {
		if (vlapic_pending_vector(v->lapic) >= 0 || READ_ONCE(v->lapic->nmi_pending))
			set_proc_ctl(v, PROC_INTR_WINDOW, true);
		if (v->lapic->hw_vid) {
			sync_intr_status(v);
			vid_window_if_blocked(v);
		}
		return;
	}
	nmi = inject_nmi(v);
	if (v->lapic->hw_vid)
		inject_vid(v);
	else
		inject_intr(v, nmi);
}

/*
 * The usual APICv entry: nothing being injected, no NMI (nmi_trim() and
 * inject_nmi() do nothing), no HLT to manage and no posted request to
 * fold (vapic_pi_sync() would return at once). All that is left of the
 * full path then is inject_vid()'s RVI/SVI sync, done here without the
 * full path's frame and calls. Anything else takes the full path, which
 * looks at everything again. Virtual-interrupt delivery is tested first:
 * without it this costs the full path three instructions.
 */
void vapic_inject(struct vcpu *v)
{
	struct vlapic *l = v->lapic;

	if (l->hw_vid && !(v->injecting | v->hlt_guest) && !READ_ONCE(l->nmi_pending) &&
	    vapic_pi_idle(v)) {
		sync_intr_status(v);
		vid_window_if_blocked(v);
		return;
	}
	vapic_inject_pending(v);
}

/*
 * A pending NMI ends a halt only where it can be delivered: one latched
 * while the guest's NMI handler runs waits for the handler's IRET (SDM
 * Vol. 3A, "NMI Handling"), and a CPU halted in that handler stays
 * halted, as it does for an interrupt IF holds back. KVM (x86.c,
 * kvm_vcpu_has_events: nmi_pending counts only if nmi_allowed()) and
 * Bochs (event.cc, handleWaitForEvent: an unmasked NMI only; the NMI
 * mask is set at delivery and cleared by IRET) agree.
 */
bool vapic_has_event(struct vcpu *v, bool if_set)
{
	struct vlapic *l = v->lapic;

	vapic_pi_sync(v);
	if (READ_ONCE(l->init_pending))
		return true;
	if (READ_ONCE(l->nmi_pending) && !nmi_blocked(v))
		return true;
	/* With APICv the CPU compares RVI with VPPR the same way. */
	return if_set && vlapic_pending_vector(l) >= 0;
}

/*
 * The window is open: IF is 1 and no shadow blocks. Resumable (vmm/
 * exit_fast.c): what the pre-entry work would do now is deliver what
 * waited, and vcpu_entry_idle() sends every such case the slow way - an
 * interrupt tickvisor injects itself is in IRR without virtual-interrupt
 * delivery, an NMI is nmi_pending, a change since the last entry kicked.
 * With virtual-interrupt delivery and nothing changed, RVI and SVI are in
 * step and the CPU delivers from RVI at the entry (VM entry is one of the
 * events that evaluate it, SDM Vol. 3C, "Evaluation of Pending Virtual
 * Interrupts"; Bochs's VMenter ends in TPR, then PPR virtualization and
 * that evaluation, vmx.cc), as after the slow path, which writes nothing
 * then.
 * The pong of an IPI sent from a handler (smp_pingpong) takes this exit
 * at the handler's IRET.
 */
int exit_intr_window(struct vcpu *v)
{
	set_proc_ctl(v, PROC_INTR_WINDOW, false);
	return EXIT_RESUMABLE;
}

int exit_nmi_window(struct vcpu *v)
{
	set_proc_ctl(v, PROC_NMI_WINDOW, false);
	return 0;
}
