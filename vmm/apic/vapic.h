/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A vCPU's virtual local APIC as vmm/ drives it: creation, the MSR and
 * MMIO interfaces, APIC virtualization (APICv) set-up, event injection
 * before VM entry, posted interrupts (vapic*.c; the handlers of the
 * APIC-related exits are declared with the others in vmm/exit/exit.h).
 */
#ifndef VMM_VAPIC_H
#define VMM_VAPIC_H

#include "lapic/vlapic.h"
#include "vmm/vcpu.h"
#include "vmm/vcpu/vcpu_setup.h"

/* Whether this guest uses APIC virtualization (option and CPU allow it). */
bool vapic_apicv_usable(const struct guest *g, const char **why_not);
void vapic_guest_init(struct guest *g);
void vapic_guest_destroy(struct guest *g);
/* Creates v->lapic and joins the guest's IPI group (before any vCPU runs). */
void vapic_create(struct vcpu *v);
/* Programs the (current) VMCS for the APIC, on the vCPU's own CPU. */
void vapic_vcpu_init(struct vcpu *v);
/* Re-programs EPT, MSR bitmap and VMCS controls after a mode/base change. */
void vapic_mode_sync(struct vcpu *v);

/* APIC MSRs (IA32_APIC_BASE, x2APIC range, TSC deadline): 0 or -1 (#GP);
 * a write may also return EXIT_RESUMABLE (vmm/exit/exit.h). */
int vapic_msr_read(struct vcpu *v, uint32_t msr, uint64_t *val);
int vapic_msr_write(struct vcpu *v, uint32_t msr, uint64_t val);
/* vapic_msr_write() of IA32_TSC_DEADLINE (never #GP): 0 or
 * EXIT_RESUMABLE. */
int vapic_deadline_write(struct vcpu *v, uint64_t val);
/* Is gpa inside the vCPU's xAPIC MMIO page (xAPIC mode, APIC enabled)? */
bool vapic_mmio_claims(struct vcpu *v, uint64_t gpa);
/* Emulates the access that caused an EPT violation on the APIC page. */
int vapic_mmio(struct vcpu *v, uint64_t gpa, uint64_t qual);
/* CR8 <-> TPR when the CPU does not shadow the TPR. */
uint64_t vapic_read_cr8(struct vcpu *v);
void vapic_write_cr8(struct vcpu *v, uint64_t val);

/* Before every VM entry: NMIs and interrupts to inject, or the window
 * exits that will let them in; with APICv the RVI/SVI it evaluates. */
void vapic_inject(struct vcpu *v);
/* Before the vCPU first runs: what vapic_vid_guard() caches. */
void vapic_inject_init(struct vcpu *v);

/* With virtual-interrupt delivery, does an entry with RFLAGS.IF = 0 arm
 * the interrupt window? On a CPU that the probe of vmm/vcpu/vcpu_calib.c found
 * delivering virtual interrupts with IF = 0 (Bochs 3.0 without
 * scripts/bochs-patches/0002), or with if0_quirks=on, where a physical
 * interrupt can reach this vCPU's CPU while its guest runs (another vCPU,
 * a housekeeper, a host timer): cached_vid_guard (vapic_inject.c says
 * why). Inline: the entries resumed at once
 * by vmm/exit/exit_fast.c arm it too. */
static inline bool vapic_vid_guard(const struct vcpu *v)
{
	return v->cached_vid_guard && v->lapic->hw_vid;
}

/* That window, for an entry with IF = 0 that vapic_vid_guard() asks it of. */
static inline void vapic_vid_window(struct vcpu *v)
{
	vcpu_set_ctl(&v->cached_proc_ctls, VMCS_PROC_CTLS, PROC_INTR_WINDOW, true);
}
/* Anything deliverable now (for a halted vCPU)? */
bool vapic_has_event(struct vcpu *v, bool if_set);

/* APIC registers (page offsets) whose writes move neither IRR nor ISR
 * other than through an interrupt lapic/ notifies: the timer's. */
bool vapic_timer_reg(uint32_t off);

/* Posted interrupts (vmm/apic/vapic_pi.c). */
bool vapic_pi_usable(const struct guest *g);
void vapic_pi_init(struct vcpu *v);
void vapic_pi_free(struct vcpu *v);
void vapic_pi_enable(struct vcpu *v, bool on);
/* ops->post of the vCPU's vlapic: vec posted and the notification sent
 * (true), or false when the vCPU takes no posted interrupt now (not
 * running elsewhere with posting on): set IRR and notify instead. */
bool vapic_pi_post(struct vlapic *l, uint8_t vec);
/* Folds posted requests into IRR (before entry, while halted) after a
 * notification the CPU took in root mode, or when posting is off. */
void vapic_pi_sync(struct vcpu *v);
/* Nothing for vapic_pi_sync() to fold: no descriptor, or posting is on
 * and no notification came in root mode. The entry fast path asks too. */
static inline bool vapic_pi_idle(const struct vcpu *v)
{
	return !v->pi || (!READ_ONCE(v->pi_notified) && READ_ONCE(v->pi_on));
}
/* Posted requests not yet folded into IRR (ON set): a post already made
 * whose notification this CPU has not taken yet. */
bool vapic_pi_pending(const struct vcpu *v);
/* In root mode with interrupts off: if a post is outstanding, take its
 * notification here as a host interrupt (it is in this CPU's APIC once
 * the poster's IPI went out), so vapic_pi_sync() folds the descriptor
 * before the next entry instead of leaving it to a notification pending
 * into VM entry (Bochs 3.0 then delivers it late or, with the descriptor
 * emptied meanwhile, as vector 0xff). */
void vapic_pi_take_notification(struct vcpu *v);
/* Registers the host handler of the notification vector (once, at boot). */
void vapic_pi_host_init(void);
/* vcpu_calib.c's probe 4: ON set, nothing posted. */
void vapic_pi_arm_empty(struct vcpu *v);
/* INIT: posted requests die with the rest of the APIC state. */
void vapic_pi_clear(struct vcpu *v);

/* TV_HC_INFO flags: APICv in use, timer backend. */
uint32_t vapic_info_flags(struct vcpu *v);

#endif
