/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A vCPU's virtual local APIC as vmm/ drives it: creation, the MSR and
 * MMIO interfaces, APIC virtualization (APICv) set-up, event injection
 * before VM entry, posted interrupts (vapic*.c), and the handlers of the
 * APIC-related exits that vmm/exit/exit.c's table calls.
 */
#ifndef VMM_VAPIC_H
#define VMM_VAPIC_H

#include "drivers/apic_dest.h"
#include "lapic/vlapic.h"
#include "vmm/vcpu.h"
#include "vmm/vcpu/vcpu_run.h"
#include "vmm/vcpu/vcpu_setup.h"

/* vapic_mode_sync(), vapic_inject(), vapic_inject_init(), vapic_pi_clear(),
 * vapic_pi_arm_empty() and vapic_pi_pending(), which vmm/vcpu/ calls, are
 * declared in vmm/vcpu/vcpu_run.h. */

/* Whether this guest uses APIC virtualization (option and CPU allow it). */
bool vapic_apicv_usable(const struct guest *g, const char **why_not);
void vapic_guest_init(struct guest *g);
void vapic_guest_destroy(struct guest *g);
/* Creates v->lapic and joins the guest's IPI group (before any vCPU runs). */
void vapic_create(struct vcpu *v);
/* Programs the (current) VMCS for the APIC, on the vCPU's own CPU. */
void vapic_vcpu_init(struct vcpu *v);

/* APIC MSRs (IA32_APIC_BASE, x2APIC range, TSC deadline): 0 or -1 (#GP);
 * a write may also return EXIT_RESUMABLE (vmm/vcpu/vcpu_run.h). */
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

/* The exits of those windows (vmm/apic/vapic_inject.c). */
int exit_intr_window(struct vcpu *v);
int exit_nmi_window(struct vcpu *v);
/* The exits of the APIC page with APICv (vmm/apic/vapic_mmio.c). */
int exit_apic_access(struct vcpu *v);
int exit_apic_write(struct vcpu *v);
/* exit_apic_write() but for the IPI vlapic_xapic_icr_fast() takes: the
 * register at `off` written through vlapic_apicv_write(). */
int exit_apic_write_reg(struct vcpu *v, uint32_t off);
int exit_eoi_induced(struct vcpu *v);
int exit_tpr_below(struct vcpu *v);

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
/* After a write to a timer register (vapic_timer_reg(), not
 * IA32_TSC_DEADLINE), the housekeeper's lock released: EXIT_RESUMABLE
 * where the backend allows it (re-armed), else 0. */
int vapic_timer_reg_written(struct vcpu *v);

/* Posted interrupts (vmm/apic/vapic_pi.c). */
bool vapic_pi_usable(const struct guest *g);
void vapic_pi_init(struct vcpu *v);
void vapic_pi_free(struct vcpu *v);
void vapic_pi_enable(struct vcpu *v, bool on);
/* ops->post of the vCPU's vlapic: vec posted and the notification sent
 * (true), or false when the vCPU takes no posted interrupt now (not
 * running elsewhere with posting on): set IRR and notify instead. */
bool vapic_pi_post(struct vlapic *l, uint8_t vec);
/* The same post, its checks included, by the dry vCPU l->owner of
 * vapic_pi_dry_new(), notifying this CPU: for timing it (housekeeper.c). */
bool vapic_pi_post_dry(struct vlapic *l, uint8_t vec);
/* Posts whose notifications leave together (housekeeper.c,
 * post_group(): timers of several vCPUs due at one TSC): each vCPU held
 * (vapic_pi_hold()), the destinations worked out
 * (vapic_pi_release_prepare()), each request posted
 * (vapic_pi_post_held(), or a post through vlapic_accept(), which finds
 * ON set and sends nothing), then all notified at once
 * (vapic_pi_release_send()). */
struct pi_batch {
	uint32_t n;
	uint32_t apic_id[TV_MAX_CPUS];  /* the held vCPUs' CPUs */
	uint32_t ndest;
	struct apic_dest dest[TV_MAX_CPUS];     /* vapic_pi_release_prepare()'s */
};
/* Before v's post: ON set and v's CPU noted, where vapic_pi_post() would
 * post (else false, and the post takes its own way). */
bool vapic_pi_hold(struct vcpu *v, struct pi_batch *b);
/* The same hold of the dry vCPU of vapic_pi_dry_new(): for timing it. */
bool vapic_pi_hold_dry(struct vcpu *v, struct pi_batch *b);
/* A held vCPU's request: vec's PIR bit, nothing sent. */
void vapic_pi_post_held(struct vcpu *v, uint8_t vec);
/* Every held CPU's notification: one IPI per x2APIC cluster among them
 * (logical destination), or one each in xAPIC mode; in two steps, the
 * destinations worked out first, so that the send is all that follows
 * the last post. The send empties b. */
void vapic_pi_release_prepare(struct pi_batch *b);
void vapic_pi_release_send(struct pi_batch *b);
struct vcpu *vapic_pi_dry_new(void);
void vapic_pi_dry_free(struct vcpu *v);
/* Folds posted requests into IRR (before entry, while halted) after a
 * notification the CPU took in root mode, or when posting is off. */
void vapic_pi_sync(struct vcpu *v);
/* Nothing for vapic_pi_sync() to fold: no descriptor, or posting is on
 * and no notification came in root mode. The entry fast path asks too. */
static inline bool vapic_pi_idle(const struct vcpu *v)
{
	return !v->pi || (!READ_ONCE(v->pi_notified) && READ_ONCE(v->pi_on));
}
/* In root mode with interrupts off: if a post is outstanding, take its
 * notification here as a host interrupt (it is in this CPU's APIC once
 * the poster's IPI went out), so vapic_pi_sync() folds the descriptor
 * before the next entry instead of leaving it to a notification pending
 * into VM entry (Bochs 3.0 then delivers it late or, with the descriptor
 * emptied meanwhile, as vector 0xff). */
void vapic_pi_take_notification(struct vcpu *v);
/* Registers the host handler of the notification vector (once, at boot). */
void vapic_pi_host_init(void);
/* The x2APIC MSR bitmap patterns of vapic.c (once, at boot, before any
 * vCPU). */
void vapic_host_init(void);

/* TV_HC_INFO's flags (RCX; vmm/exit/hypercall.h has the other calls):
 * APICv in use, timer backend, x2APIC offered. */
#define TV_INFO_APICV       (1u << 0)
#define TV_INFO_TIMER_SHIFT 1u          /* bits 3:1: 1 preempt, 2 lapic, 3 hpet, 4 posted */
#define TV_INFO_X2APIC      (1u << 4)   /* x2APIC offered (x2apic=on) */
uint32_t vapic_info_flags(struct vcpu *v);

#endif
