// SPDX-License-Identifier: BSD-2-Clause
/* The vCPU run loop and the helpers exit handlers share. */
#include "drivers/apic.h"
#include "drivers/io.h"
#include "vmm/vcpu/vcpu_setup.h"
#include "vmm/host/irq.h"
#include "vmm/host/log.h"
#include "vmm/host/percpu.h"
#include "vmm/guest.h"
#include "vmm/vcpu/vcpu_run.h"
#include "vmm/vcpu/vcpu_xstate.h"
#include "vmx/vmx.h"
#include "vmm/vcpu/vcpu_dump.h"

void vcpu_set_interruptibility(struct vcpu *v, uint64_t val)
{
	vmwrite(VMCS_GUEST_INTERRUPTIBILITY, val);
	v->cached_intr_state = val;
	v->intr_state_valid = true;
}

#define PENDING_DBG_B0_B3       BITS(3, 0)
#define PENDING_DBG_ENABLED_BP  BIT(12)         /* an enabled breakpoint matched */
#define PENDING_DBG_BS          BIT(14)

/*
 * The debug trap an emulated instruction owes the guest: the single step
 * of RFLAGS.TF (SDM Vol. 3B, "Single-Step Exception Condition"; the CPU
 * raises none: the instruction ended in a VM exit, not in completion),
 * and the traps a MOV SS shadow held for the boundary after it, which
 * the exit saved in the pending-debug-exceptions field (Vol. 3C, "Guest
 * Non-Register State": a data breakpoint on the MOV SS load, its single
 * step). They are injected as one #DB rather than left in the field,
 * because a VM entry that injects an event drops that field ("Delivery
 * of Pending Debug Exceptions after VM Entry": none are delivered after
 * a vectoring entry of an external interrupt, NMI or hardware
 * exception): an interrupt tickvisor injected at the same entry would
 * lose them, where on hardware they come first (a trap of the previous
 * instruction outranks interrupts, "Priority Among Concurrent Events").
 * With v->injecting set, vapic_inject() waits for a window instead.
 * DR6 as the CPU writes it for a #DB: B0-B3 say which breakpoints
 * matched this time, BS is added, the other bits stay (Bochs's
 * exception(): DR6 & ~B0-B3 | the new bits; KVM's #DB payload: the same).
 * KVM (kvm_vcpu_do_singlestep: a #DB with DR6.BS) and Bochs (event.cc:
 * TF arms a DR6.BS trap taken once the instruction completes) agree.
 * BTF turns TF into single-step on branches, which none of the emulated
 * instructions is.
 */
static void vcpu_debug_trap(struct vcpu *v, bool tf)
{
	uint64_t pend = vmread(VMCS_GUEST_PENDING_DBG), dr6;
	bool step = (tf && !(vmread(VMCS_GUEST_DEBUGCTL) & DEBUGCTL_BTF)) ||
		    (pend & PENDING_DBG_BS);

	if (pend)
		vmwrite(VMCS_GUEST_PENDING_DBG, 0);
	if (!step && !(pend & PENDING_DBG_ENABLED_BP))
		return;
	/* The guest's DR6 is the CPU's: VMX does not switch it and
	 * tickvisor uses no debug registers. */
	__asm__ volatile("mov %%dr6, %0" : "=r"(dr6));
	dr6 &= ~(uint64_t)PENDING_DBG_B0_B3;
	dr6 |= (pend & PENDING_DBG_B0_B3) | (step ? DR6_BS : 0);
	__asm__ volatile("mov %0, %%dr6" : : "r"(dr6));
	vcpu_inject_exception(v, 1, false, 0);
}

void vcpu_skip_insn_rare(struct vcpu *v, uint64_t intr, uint64_t rflags)
{
	/* The emulated instruction ends any STI/MOV-SS shadow (SDM Vol. 3C,
	 * "Interruptibility State"). */
	if (intr & (INTERRUPTIBILITY_STI | INTERRUPTIBILITY_MOV_SS))
		vcpu_set_interruptibility(v, intr & ~(uint64_t)(INTERRUPTIBILITY_STI |
								 INTERRUPTIBILITY_MOV_SS));
	/* RF lasts one instruction: "The RF Flag is cleared at the start of
	 * the instruction after the check for code breakpoint" (SDM Vol. 3B,
	 * "Instruction-Breakpoint Exception Condition"), so the next one
	 * after an emulated instruction runs with RF = 0 (Bochs clears it at
	 * each fetch, KVM's emulator at writeback). It is 1 here when a fault
	 * handler returned to this instruction, or after an EPT-violation
	 * exit (MMIO), which saves RF = 1 (SDM Vol. 3C, "Saving RIP, RSP,
	 * RFLAGS, and SSP"). */
	if (rflags & RFLAGS_RF)
		vmwrite(VMCS_GUEST_RFLAGS, rflags & ~(uint64_t)RFLAGS_RF);
	/* Only a MOV SS shadow holds traps across the exit. */
	if ((rflags & RFLAGS_TF) || (intr & INTERRUPTIBILITY_MOV_SS))
		vcpu_debug_trap(v, rflags & RFLAGS_TF);
}

/* Vectors of fault class (SDM Vol. 3A, "Exception and Interrupt
 * Reference", each vector's "Exception Class"): all exceptions but #DB
 * (a fault or a trap, and no #DB sets RF), NMI (an interrupt), #BP and
 * #OF (traps), #DF and #MC (aborts). Reserved vectors count as faults,
 * as in KVM's exception_type(). */
static bool exception_is_fault(uint8_t vector)
{
	const uint32_t not_fault = BIT(1) | BIT(2) | BIT(3) | BIT(4) | BIT(8) | BIT(18);

	return vector < 32 && !(BIT(vector) & not_fault);
}

/*
 * A fault tickvisor raises is one the CPU would have raised for the
 * instruction, so the handler must find the RFLAGS image the CPU pushes:
 * "For any fault-class exception except a debug exception generated in
 * response to an instruction breakpoint, the value pushed for RF is 1"
 * (SDM Vol. 3B, "Instruction-Breakpoint Exception Condition"), so that
 * IRET restarts the instruction past its own breakpoint. VM
 * entry pushes the guest RFLAGS field as it is (Vol. 3C, "Event Injection"),
 * so RF is set there first. KVM (inject_pending_event: RF for
 * EXCPT_FAULT, not for any #DB) and Bochs (exception(): assert_RF() for
 * fault class, not #DB) agree. A re-injected event (vcpu_reinject) needs
 * nothing: the exit saved RFLAGS as delivery would have pushed it.
 */
void vcpu_inject_exception(struct vcpu *v, uint8_t vector, bool has_error, uint32_t error)
{
	uint32_t info = vector | (INTR_TYPE_HW_EXC << 8) | INTR_INFO_VALID;

	if (exception_is_fault(vector))
		vmwrite(VMCS_GUEST_RFLAGS, vmread(VMCS_GUEST_RFLAGS) | RFLAGS_RF);
	if (has_error) {
		info |= INTR_INFO_ERROR_VALID;
		vmwrite(VMCS_ENTRY_EXC_ERROR, error);
	}
	vmwrite(VMCS_ENTRY_INTR_INFO, info);
	v->injecting = true;
}

void vcpu_reinject(struct vcpu *v)
{
	/* Bit 12 (NMI unblocking in exit information) is reserved on entry. */
	uint32_t info = v->exit.idt_info & ~(uint32_t)INTR_INFO_NMI_UNBLOCK;
	unsigned type = (unsigned)FIELD_GET(INTR_INFO_TYPE, info);

	if (info & INTR_INFO_ERROR_VALID)
		vmwrite(VMCS_ENTRY_EXC_ERROR, vmread(VMCS_IDT_VECTORING_ERROR));
	/* Software interrupts and exceptions need their instruction length. */
	if (type == INTR_TYPE_SW_INTR || type == INTR_TYPE_PRIV_SW_EXC || type == INTR_TYPE_SW_EXC)
		vmwrite(VMCS_ENTRY_INSN_LEN, v->exit.insn_len);
	vmwrite(VMCS_ENTRY_INTR_INFO, info);
	v->injecting = true;
}

void vcpu_kick(struct vcpu *v)
{
	struct pcpu *p = cpus[v->cpu];

	/* The vCPU re-evaluates before every entry; only one running on
	 * another CPU (or sleeping there) needs an interrupt to notice.
	 * An entry the fast path would make instead sees the flag; one it
	 * made before the flag was set takes the IPI as an exit. */
	__atomic_store_n(&v->kicked, true, __ATOMIC_RELEASE);
	if (p && p != this_cpu())
		apic_send_ipi(p->apic_id, VEC_KICK);
}

int vcpu_time_limit_hit(struct vcpu *v, const char *where)
{
	return vcpu_kill(v, GUEST_STATUS_HUNG, "over its time limit of %u s%s",
			 v->guest->spec->timeout_s, where);
}

/* EFER.LMA -> "IA-32e mode guest" on CPUs whose VM exits do not store
 * it (IA32_VMX_MISC bit 5 clear), so the next entry agrees with EFER. */
void vcpu_sync_ia32e(struct vcpu *v)
{
	bool lma = vmread(VMCS_GUEST_EFER) & EFER_LMA;
	uint32_t ctls = lma ? v->cached_entry_ctls | (uint32_t)BIT(ENTRY_IA32E_GUEST)
			    : v->cached_entry_ctls & ~(uint32_t)BIT(ENTRY_IA32E_GUEST);

	if (ctls != v->cached_entry_ctls) {
		v->cached_entry_ctls = ctls;
		vmwrite(VMCS_ENTRY_CTLS, ctls);
	}
}

/* INIT and SIPI (SDM Vol. 3A, "MP Initialization"): INIT resets the vCPU
 * and its APIC (timer included) and makes it wait for a SIPI, outside the
 * guest; a SIPI starts a waiting vCPU in real mode at its vector and is
 * dropped otherwise. Flags are consumed in that order, so an INIT-SIPI
 * pair that arrived together is never lost. */
static int vcpu_wait_sipi(struct vcpu *v)
{
	struct vlapic *l = v->lapic;
	uint64_t limit = v->guest->deadline_tsc;

	for (;;) {
		if (READ_ONCE(v->guest->ended))
			return -1;
		if (__atomic_exchange_n(&l->init_pending, false, __ATOMIC_ACQ_REL)) {
			/* INIT keeps CD/NW (SDM); a vCPU that never ran keeps
			 * the power-up values. */
			if (v->regs.launched && !v->wait_sipi)
				v->init_cd_nw = vcpu_cr0_guest(v) & (CR0_CD | CR0_NW);
			housekeeper_timer_lock(v);
			vlapic_reset(l, true);
			housekeeper_timer_unlock(v);
			housekeeper_timer_cancel(v);
			vapic_pi_clear(v);
			vcpu_timer_reset(v);
			v->intr_dirty = true;
			v->wait_sipi = true;
		}
		if (__atomic_exchange_n(&l->sipi_pending, false, __ATOMIC_ACQ_REL) && v->wait_sipi) {
			vcpu_reset_sipi(v, READ_ONCE(l->sipi_vector));
			v->wait_sipi = false;
		}
		if (!v->wait_sipi)
			return 0;
		if (vcpu_check_time_limit(v, " (waiting for SIPI)"))
			return -1;
		/* Until a kick (the sender's IPI wakes this CPU) or the time
		 * limit: a vCPU that sent INIT to itself has nobody to send it
		 * a SIPI, and no VM exit comes to end it (issue 10.7). */
		if (limit && !timer_host_sleep_arm(&this_cpu()->timer, limit))
			continue;       /* already due */
		wait_for_interrupt();
	}
}

/*
 * A SIPI is ignored by a CPU not in wait-for-SIPI (SDM Vol. 3A, "MP
 * Initialization Protocol": it is honoured only after an INIT; Bochs's
 * deliver_SIPI, cpu/event.cc, acts on it only in that state, and KVM's
 * kvm_apic_accept_events clears its SIPI bit either way). The run loop
 * drops one at the next entry; a vCPU
 * halted in tickvisor makes no entry until something wakes it, and if
 * that is an INIT, vcpu_wait_sipi() would take the old SIPI as the one
 * the INIT waits for and start the vCPU at once. So the halt drops it
 * as it comes. A SIPI sent after an INIT is stored after it (release,
 * vlapic_accept()), so seeing no INIT after taking the SIPI means the
 * SIPI came first; otherwise it is put back for vcpu_wait_sipi().
 */
void vcpu_drop_stray_sipi(struct vcpu *v)
{
	struct vlapic *l = v->lapic;

	if (!READ_ONCE(l->sipi_pending))
		return;
	if (__atomic_exchange_n(&l->sipi_pending, false, __ATOMIC_ACQ_REL) &&
	    __atomic_load_n(&l->init_pending, __ATOMIC_ACQUIRE))
		__atomic_store_n(&l->sipi_pending, true, __ATOMIC_RELEASE);
}

static int vcpu_init_sipi(struct vcpu *v)
{
	int r = vcpu_wait_sipi(v);

	/* The host timer slept on stood for the time limit, not for the
	 * guest's APIC timer: that one is armed again before the entry. */
	timer_host_disarm_all(&this_cpu()->timer);
	v->timer_dirty = true;
	return r;
}

static __attribute__((noinline, cold)) void vcpu_entry_failed(struct vcpu *v, long r)
{
	bool valid = r == VMX_RUN_FAIL_VALID;
	unsigned err = valid ? (unsigned)vmread(VMCS_INSN_ERROR) : 0;

	vcpu_kill(v, GUEST_STATUS_ENTRY_FAIL, "%s failed: %s%u (%s)",
		  v->regs.launched ? "VMRESUME" : "VMLAUNCH",
		  valid ? "VM-instruction error " : "VMfailInvalid ", err,
		  valid ? vmx_insn_error_name(err) : "no current VMCS");
}

/*
 * The pre-entry work below (up to the kick flag's clearing) runs before
 * every entry but those resumed at once: after a CPUID or WRMSR exit the
 * entry stub's hooks (exit_fast_cpuid, exit_fast_wrmsr) resume, and after a resumable exit
 * of the table vmm_handle_exit() returns 1. vcpu_entry_idle()
 * (vmm/exit/exit_fast.c) decides both and must know every step of this work:
 * a step added here needs its condition there.
 */
void vcpu_run(struct vcpu *v)
{
	struct guest *g = v->guest;
	long reason;
	int r;

	irq_disable();
	this_cpu()->vcpu = v;
	vapic_inject_init(v);
	exit_fast_init(v);
	for (;;) {
		/* Its interrupt window comes before every pending-work check
		 * below; from the ended check to VMRESUME interrupts stay off,
		 * so a kick is either seen by the checks or exits the guest
		 * at once. */
		timer_host_drain(&this_cpu()->timer);
		if (READ_ONCE(g->ended))
			break;
		if (unlikely(vcpu_check_time_limit(v, "")))
			break;
		/* `|`, not `||`: three loads and one branch on every entry. */
		if (unlikely(v->wait_sipi | READ_ONCE(v->lapic->init_pending) |
			     READ_ONCE(v->lapic->sipi_pending)) && vcpu_init_sipi(v))
			break;
		if (v->apic_mode_dirty)
			vapic_mode_sync(v);
		vcpu_timer_before_entry(v);
		vapic_inject(v);
		/* Kicks so far are done with: this work saw what they stand
		 * for, its own included (an expiry it delivered). One from
		 * another CPU after the checks above still has its IPI
		 * coming, which exits the guest as soon as it runs. */
		WRITE_ONCE(v->kicked, false);
enter:
		vcpu_timer_load_preempt(v);
		reason = vmx_run(&v->regs);
		if (unlikely(reason < 0)) {
			if (reason == VMX_RUN_HANDLED)
				continue;       /* by the stub's hook: the pre-entry work is due */
			vcpu_entry_failed(v, reason);
			break;
		}
		vcpu_after_exit(v);
		r = vmm_handle_exit(v, (uint32_t)reason);
		if (unlikely(r)) {
			if (r > 0)
				goto enter;     /* resumable, nothing pending */
			break;
		}
	}
	housekeeper_timer_cancel(v);
	timer_host_disarm_all(&this_cpu()->timer);
	this_cpu()->vcpu = NULL;
}
