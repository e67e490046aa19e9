/* SPDX-License-Identifier: BSD-2-Clause */
/* The vCPU run loop and the helpers exit handlers share. */
#ifndef VMM_VCPU_RUN_H
#define VMM_VCPU_RUN_H

#include "drivers/io.h"
#include "vmm/apic/vcpu_timer.h"
#include "vmm/vcpu.h"
#include "vmm/vcpu/vcpu_xstate.h"

/* The vCPU loop: enters the guest until it ends. */
void vcpu_run(struct vcpu *v);

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
	 * instruction, and vcpu_skip_insn_rare() caches what it writes. */
	uint64_t intr = likely(!v->intr_state_valid) ? vmread(VMCS_GUEST_INTERRUPTIBILITY)
						     : v->cached_intr_state;
	uint64_t rflags;

	vmwrite(VMCS_GUEST_RIP, v->exit.rip + v->exit.insn_len);
	rflags = vmread(VMCS_GUEST_RFLAGS);
	if (unlikely((intr & (INTERRUPTIBILITY_STI | INTERRUPTIBILITY_MOV_SS)) |
		     (rflags & (RFLAGS_TF | RFLAGS_RF))))
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
	if (v->spin_target) {
		vcpu_timer_after_entry(v);
		/* The advance moved: so does the next hardware deadline. */
		v->timer_dirty = true;
	}
	/* The CPU clears the entry's event injection on every exit. */
	v->injecting = false;
	v->intr_state_valid = false;
	if (!v->lma_by_hw)
		vcpu_sync_ia32e(v);
}

#endif
