/* SPDX-License-Identifier: BSD-2-Clause */
/* The vCPU run loop, the helpers exit handlers share, and what vmm/vcpu/
 * calls in the rooms above it. */
#ifndef VMM_VCPU_RUN_H
#define VMM_VCPU_RUN_H

#include "drivers/io.h"
#include "timer/host.h"
#include "timer/preempt.h"
#include "vmm/vcpu.h"
#include "vmm/vcpu/vcpu_xstate.h"
#include "vmx/vmx.h"

/* The vCPU loop: enters the guest until it ends. */
void vcpu_run(struct vcpu *v);

/* What an exit handler (vmm/exit/, and the APIC's in vmm/apic/) returns:
 * 0 to go on running the vCPU, or -1 when it ended the guest
 * (guest_end/vcpu_kill): vmm_handle_exit() passes that on and the run
 * loop stops this vCPU at once. EXIT_RESUMABLE says the exit changed
 * nothing but what vcpu_entry_idle() looks at (vmm/exit/exit_fast.c:
 * CPUID, WRMSR to IA32_TSC_DEADLINE, the ICR writes vlapic_*_icr_fast()
 * take and the interrupt window), so the vCPU may re-enter without the
 * run loop's pre-entry work. */
#define EXIT_RESUMABLE 1

/*
 * Calls up. vmm/vcpu/ includes nothing of vmm/exit/ and vmm/apic/ (the
 * arrows run exit -> apic -> emul -> vcpu), yet the run loop dispatches
 * exits and does the APIC and timer work before each entry, the calibration
 * probes drive posted interrupts and the guest TSC takes the
 * housekeeper's lock: the call cycles of docs/architecture.md ("Rooms").
 * What vmm/vcpu/ calls up there is declared here, next to its callers;
 * each is defined where its prefix says, and that room's header names
 * the ones it left here.
 */

/* vmm/exit/exit.c. Reads the current exit's information and handles it,
 * given its full exit reason (vmx_read_exit_reason()): 0 to go on running
 * the vCPU after the pre-entry work, 1 to enter again at once (a resumable
 * exit that vcpu_entry_idle() let through; it loaded the preemption-timer
 * count), -1 when the guest has ended. */
int vmm_handle_exit(struct vcpu *v, uint32_t reason);
/* The host handler of the interrupt an external-interrupt exit
 * acknowledged (intr_info: its VM-exit interruption information), run
 * now; an acknowledged interrupt left unhandled stays in service and
 * blocks every vector of its priority class. */
void exit_host_irq(uint32_t intr_info);

/* vmm/exit/exit_fast.c. Before the vCPU first runs: the options the exit
 * path reads (cached in the vCPU) and the entry stub's hooks. */
void exit_fast_init(struct vcpu *v);

/* vmm/apic/vapic.c. Re-programs EPT, MSR bitmap and VMCS controls after a
 * mode/base change. */
void vapic_mode_sync(struct vcpu *v);
/* vmm/apic/vapic_inject.c. Before every VM entry: NMIs and interrupts to
 * inject, or the window exits that will let them in; with APICv the
 * RVI/SVI it evaluates. */
void vapic_inject(struct vcpu *v);
/* Before the vCPU first runs: what vapic_vid_guard() caches. */
void vapic_inject_init(struct vcpu *v);
/* vmm/apic/vapic_pi.c. Posted requests not yet folded into IRR (ON set):
 * a post already made whose notification this CPU has not taken yet. */
bool vapic_pi_pending(const struct vcpu *v);
/* vcpu_calib.c's probe 4: ON set, nothing posted. */
void vapic_pi_arm_empty(struct vcpu *v);
/* INIT: posted requests die with the rest of the APIC state. */
void vapic_pi_clear(struct vcpu *v);

/* vmm/apic/vcpu_timer.c. */
/* Before each entry: deliver a due expiry, arm the backend. Through the
 * variant vcpu_timer_init() chose for the backend (posted or not) and the
 * trace mask, so that the entry path tests neither. */
static inline void vcpu_timer_before_entry(struct vcpu *v)
{
	v->timer_before_entry(v);
}
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
	bool on = v->cached_pin_ctls & BIT(PIN_PREEMPT_TIMER);

	/* An entry that waits loads it again after the wait (vmx/regs.h,
	 * preempt_at): its ticks would otherwise come as much later as the
	 * wait was long, and a periodic timer's first tick, whose entry did
	 * not wait, out of line with the rest (issue 24.3). Timer off: a
	 * count that ends nothing, so the path after the wait is the same. */
	if (v->regs.spin_until)
		v->regs.preempt_at = on ? v->preempt_at : ~0ull;
	if (on)
		vmwrite(VMCS_PREEMPT_TIMER_VALUE,
			preempt_value(v->preempt_at, rdtsc(), timer_caps.preempt_rate));
}
/* vCPU INIT/reset: disarm every hardware timer of this vCPU. */
void vcpu_timer_reset(struct vcpu *v);

/* vmm/apic/housekeeper.c (timer=posted). */
void housekeeper_lock_timer(struct vcpu *v);
void housekeeper_unlock_timer(struct vcpu *v);
/* IA32_TSC_DEADLINE <- val at guest TSC now, between the two:
 * EXIT_RESUMABLE. */
int housekeeper_deadline_write(struct vcpu *v, uint64_t val, uint64_t now);

/* Around every access to v's timer state on v's own CPU. Unlock hands a
 * target that moved (v->timer_dirty) to the queue; for a vCPU whose timer
 * the housekeeper does not serve (none, or timer=auto kept it on its own
 * CPU: vcpu_timer_init()) both are a load and a branch. */
static inline void housekeeper_timer_lock(struct vcpu *v)
{
	if (unlikely(v->timer_kind == TIMER_POSTED))
		housekeeper_lock_timer(v);
}

static inline void housekeeper_timer_unlock(struct vcpu *v)
{
	if (unlikely(v->timer_kind == TIMER_POSTED))
		housekeeper_unlock_timer(v);
}

/* v stops (INIT, or it leaves the guest): its timer leaves the queue, and
 * a notification the housekeeper sent before is taken here in root mode,
 * before anything empties the descriptor it announced. */
void housekeeper_timer_cancel(struct vcpu *v);


/* Makes v notice new pending work: a kick if it runs on another CPU. */
void vcpu_kick(struct vcpu *v);

/* Guest interruptibility state, read from the VMCS once per exit (as a
 * rule by its first reader: the read is the straight path). */
static inline uint64_t vcpu_interruptibility(struct vcpu *v)
{
	if (likely(!v->intr_state_valid)) {
		v->cached_intr_state = vmread(VMCS_GUEST_INTERRUPTIBILITY);
		v->intr_state_valid = true;
	}
	return v->cached_intr_state;
}
void vcpu_set_interruptibility(struct vcpu *v, uint64_t val);

/* vcpu_skip_insn() when the instruction had an STI or MOV-SS shadow, or
 * RFLAGS.TF or RF set: intr and rflags as it read them. */
void vcpu_skip_insn_rare(struct vcpu *v, uint64_t intr, uint64_t rflags);

/* Advances RIP past the exiting instruction. Inline: the CPUID and WRMSR
 * exits of the fast path run it on every exit, and the usual
 * instruction (no shadow, TF and RF clear) costs two VMREADs and a
 * VMWRITE; the rest is vcpu_skip_insn_rare(). */
static inline __attribute__((always_inline)) void vcpu_skip_insn(struct vcpu *v)
{
	/* Read, not cached: nothing on the fast path reads it after the
	 * instruction, and vcpu_skip_insn_rare() caches what it writes. The
	 * VMCS field is never behind the cache (vcpu_set_interruptibility()
	 * writes both), so the cache is not even looked at. */
	uint64_t intr = vmread(VMCS_GUEST_INTERRUPTIBILITY);
	uint64_t rflags;

	vmwrite(VMCS_GUEST_RIP, v->exit.rip + v->exit.insn_len);
	/* Each value tested on its own, the shadow before RFLAGS is read: a
	 * TEST and a branch each (a test of the two ORed costs two copies
	 * more, and the compiler merges two tests that follow each other). */
	if (unlikely(intr & (INTERRUPTIBILITY_STI | INTERRUPTIBILITY_MOV_SS))) {
		vcpu_skip_insn_rare(v, intr, vmread(VMCS_GUEST_RFLAGS));
		return;
	}
	rflags = vmread(VMCS_GUEST_RFLAGS);
	if (unlikely(rflags & (RFLAGS_TF | RFLAGS_RF)))
		vcpu_skip_insn_rare(v, intr, rflags);
}

/* Injects a hardware exception at the next VM entry. */
void vcpu_inject_exception(struct vcpu *v, uint8_t vector, bool has_error, uint32_t error);
static inline void vcpu_inject_gp(struct vcpu *v) { vcpu_inject_exception(v, 13, true, 0); }
static inline void vcpu_inject_ud(struct vcpu *v) { vcpu_inject_exception(v, 6, false, 0); }

int vcpu_time_limit_hit(struct vcpu *v, const char *where);

/* For a vCPU halted in tickvisor (not waiting for a SIPI): drops a SIPI
 * that reached it, unless an INIT it may belong to came meanwhile. */
void vcpu_drop_stray_sipi(struct vcpu *v);

/* Past the guest's time limit (timeout=): ends it, saying where the vCPU
 * was, and returns -1; else 0. Inline: the vCPU loop asks every time. */
static inline int vcpu_check_time_limit(struct vcpu *v, const char *where)
{
	uint64_t deadline = v->guest->deadline_tsc;

	if (likely(!deadline || rdtsc() <= deadline))
		return 0;
	return vcpu_time_limit_hit(v, where);
}

/* Delivers again the event whose delivery the last exit interrupted. */
void vcpu_reinject(struct vcpu *v);

void vcpu_sync_ia32e(struct vcpu *v);

/* The bookkeeping every VM exit needs before its handler: the entry done (VMRESUME from now on, the advance tuned by its
 * wait), the entry's injection gone and the interruptibility unread, the
 * IA-32e mode control in step with EFER. Inline: vcpu_run() and the
 * CPUID hook of the entry stub (vmm/exit/exit_fast.c) both run it on every
 * exit. */
static inline __attribute__((always_inline)) void vcpu_after_exit(struct vcpu *v)
{
	v->regs.launched = 1;
	/* The CPU clears the entry's event injection on every exit. */
	v->injecting = false;
	v->intr_state_valid = false;
	if (!v->lma_by_hw)
		vcpu_sync_ia32e(v);
}

#endif
