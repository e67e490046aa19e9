// SPDX-License-Identifier: BSD-2-Clause
/*
 * The two fixed costs around the guest, on this CPU, measured rather than
 * guessed. The vCPU runs "RDTSC; VMCALL" a few times, with the entry stub
 * told to wait until a known TSC:
 * - entry_tsc: end of that wait -> the guest's RDTSC. An advanced timer's
 *   wait ends that much before its target.
 * - exit_tsc: the guest's RDTSC -> the stub's TSC at the exit. A register
 *   access happened that long before the stub saw its exit: TMICT starts
 *   counting, and TMCCT is read, at the access.
 * The smallest of the runs counts.
 *
 * The code runs from a page of tickvisor's own, seen through a private
 * EPT that maps nothing else, with the vCPU's VMCS pointed at that EPT
 * for the runs: the vCPUs of a guest calibrate when their CPUs start,
 * while vCPU 0 may already run the guest, so no guest byte may be
 * borrowed for it (issue 10.8). The private tables never change after
 * boot, so every CPU can use them at once and no INVEPT is needed:
 * cached EPT translations are tagged by the EPTP they came from (SDM
 * Vol. 3C, "Information That May Be Cached"), so switching back to the
 * guest's EPTP finds none of them.
 *
 * The same page serves the IF=0 errata probes (vcpu_calib_probe_if0(),
 * below): what the CPU does with a guest that has interrupts disabled,
 * asked rather than assumed too.
 */
#include "drivers/apic.h"
#include "drivers/io.h"
#include "drivers/string.h"
#include "lapic/vlapic.h"
#include "vmm/host/irq.h"
#include "vmm/host/log.h"
#include "vmm/host/mem.h"
#include "vmm/host/percpu.h"
#include "vmm/host/platform.h"
#include "vmm/vcpu/vcpu_calib.h"
#include "vmm/vcpu/vcpu_run.h"
#include "vmm/vcpu/vcpu_setup.h"
#include "vmx/vmx.h"

#define CALIB_GPA   0x1000u     /* where the private EPT shows the code */
#define CALIB_RUNS  8u
#define PROBE_GPA   (CALIB_GPA + 0x10u)  /* the erratum probe's code */
#define PROBE_STI_HLT_GPA (CALIB_GPA + 0x18u) /* probe 5's code */
#define PROBE_VECTOR 0x80u              /* its virtual interrupt (RVI) */
#define PROBE_SPINS 1000000u            /* for the self-IPI to reach IRR */
#define PROBE_HLT_BOUND_TSC 200000u     /* probe 3's way out: the preemption timer */

static struct {
	struct ept ept;
	uint64_t eptp;          /* 0: no private EPT, no calibration */
} calib;

static void *calib_alloc_page(void *ctx)
{
	(void)ctx;
	return mem_try_alloc(PAGE_SIZE, PAGE_SIZE);
}

static void calib_free_page(void *ctx, void *page)
{
	(void)ctx;
	mem_free(page, PAGE_SIZE);
}

void vcpu_calib_init(void)
{
	static const uint8_t code[] = { 0x0f, 0x31, 0x0f, 0x01, 0xc1 };  /* rdtsc; vmcall */
	static const uint8_t probe[] = { 0xfa, 0x0f, 0x01, 0xc1 };       /* cli; vmcall */
	static const uint8_t probe_sti_hlt[] = { 0xfb, 0xf4, 0x0f, 0x01, 0xc1 };  /* sti; hlt; vmcall */
	uint8_t *page = mem_try_alloc(PAGE_SIZE, PAGE_SIZE);

	calib.ept = (struct ept){ .alloc_page = calib_alloc_page, .free_page = calib_free_page };
	if (!page || !ept_init(&calib.ept) ||
	    !ept_map(&calib.ept, CALIB_GPA, (uint64_t)page, PAGE_SIZE, EPT_R | EPT_X | EPT_MT_WB)) {
		pr_warn("no memory for the entry/exit calibration: timers without entry/exit "
			"compensation");
		return;
	}
	memcpy(page, code, sizeof(code));
	memcpy(page + (PROBE_GPA - CALIB_GPA), probe, sizeof(probe));
	memcpy(page + (PROBE_STI_HLT_GPA - CALIB_GPA), probe_sti_hlt, sizeof(probe_sti_hlt));
	calib.eptp = ept_pointer(&calib.ept);
}

/* A host interrupt that came while the guest ran, handled as the exit
 * table's row does it (exit_host_irq()). True if that was the exit. */
static bool ext_intr_handled(long reason)
{
	if (reason != VMX_EXIT_EXT_INTR)
		return false;
	exit_host_irq((uint32_t)vmread(VMCS_EXIT_INTR_INFO));
	return true;
}

/* One run: the guest's RDTSC minus the wait's end, the exit's TSC minus
 * the guest's RDTSC; false if the vCPU did not come back by its VMCALL.
 * A host interrupt on the way (a kick, with the guest's IF = 0 as here:
 * "external-interrupt exiting" exits for it whatever IF) is handled and
 * the run made again, a few times at most. */
static bool calib_run(struct vcpu *v, uint64_t *entry, uint64_t *exit)
{
	uint64_t start, guest;
	long reason;
	unsigned tries = 0;

	do {
		vmwrite(VMCS_GUEST_RIP, CALIB_GPA);
		start = rdtsc() + 2000;
		v->regs.spin_until = start;
		reason = vmx_run(&v->regs);
		if (reason < 0)
			return false;
		v->regs.launched = 1;
	} while (ext_intr_handled(reason) && ++tries < CALIB_RUNS);
	if (reason != VMX_EXIT_VMCALL)
		return false;
	guest = (v->regs.gpr[GPR_RDX] << 32) | (uint32_t)v->regs.gpr[GPR_RAX];
	*entry = guest - start;
	*exit = v->regs.exit_tsc - guest;
	return true;
}

void vcpu_calib_measure(struct vcpu *v)
{
	uint64_t best_entry = ~0ull, best_exit = ~0ull, entry, exit;

	v->entry_tsc = v->exit_tsc = 0;
	/* The stub's path from the wait to the guest, measured here, is
	 * that of every entry that waits: with the preemption-timer count
	 * loaded after the wait wherever the CPU has the timer (vmx/regs.h). */
	v->regs.preempt_load = timer_caps.preempt;
	v->regs.preempt_rate = (uint8_t)timer_caps.preempt_rate;
	v->regs.preempt_at = ~0ull;
	if (!calib.eptp)
		return;
	vmwrite(VMCS_EPT_POINTER, calib.eptp);
	vcpu_reset_multiboot(v, CALIB_GPA, 0);  /* flat 32-bit, paging off */
	for (unsigned i = 0; i < CALIB_RUNS; i++) {
		if (!calib_run(v, &entry, &exit)) {
			pr_warn("guest %s: vcpu%u: entry calibration failed (exit %lu): timers "
				"without entry/exit compensation", v->guest->spec->name, v->id,
				(unsigned long)vmread(VMCS_EXIT_REASON));
			best_entry = best_exit = 0;
			break;
		}
		best_entry = MIN(best_entry, entry);
		best_exit = MIN(best_exit, exit);
	}
	vmwrite(VMCS_EPT_POINTER, v->guest->eptp);
	v->entry_tsc = best_entry;
	v->exit_tsc = best_exit;
	pr_debug("guest %s: vcpu%u: %lu TSC cycles from the entry wait to the guest, %lu from the "
		 "guest to the exit", v->guest->spec->name, v->id, (unsigned long)best_entry,
		 (unsigned long)best_exit);
}

/*
 * Three errata of a CPU's interrupt handling with the guest's RFLAGS.IF = 0
 * under "external-interrupt exiting", each worked around at a cost, so
 * asked of the CPU, not assumed: every vCPU probes its own CPU at start,
 * in the private page, with a self-IPI (VEC_KICK) waiting in the host
 * APIC's IRR all along, so a physical interrupt is pending from the entry
 * on. The SDM's CPU leaves with an external-interrupt exit, whatever the
 * guest's IF (Vol. 3C, "Pin-Based VM-Execution Controls").
 *
 * 1. kick_if0_erratum: entered with IF = 0, the guest runs on, to the
 *    VMCALL. Bochs 3.0 without scripts/bochs-patches/0003 does: VMenter
 *    judged IF by root-mode rules, all physical interrupts masked until
 *    the guest changes IF itself. Costs the stop poll (vmm/apic/vcpu_timer.c).
 * 2. vid_if0_erratum: a virtual interrupt pending (RVI = PROBE_VECTOR
 *    above VPPR: VTPR 0, nothing in service), entered with IF = 1 in an
 *    STI shadow, which holds it back for one instruction, a CLI (the
 *    guest clears IF itself: Bochs unmasks the physical interrupt for the
 *    control only then, flag_ctrl_pro.cc). The SDM delivers a virtual
 *    interrupt only with IF = 1 (Vol. 3C, "Delivery of Pending Virtual
 *    Interrupts"): the external-interrupt exit comes, in the shadow or
 *    after the CLI. Bochs 3.0 without 0002 delivers PROBE_VECTOR after
 *    the CLI instead, through an IDT of limit 0: a #GP, which the
 *    exception bitmap makes an exit, with SVI = PROBE_VECTOR. Costs the
 *    interrupt window of vmm/apic/vapic_inject.c. Asked only with
 *    virtual-interrupt delivery (apicv=on on a CPU that has it); without,
 *    there is nothing to guard.
 * 3. hlt_if0_erratum: entered in the HLT activity state with IF = 0 (what
 *    hlt=guest leaves a guest in after CLI; HLT), the guest stays halted
 *    until the VMX-preemption timer, armed PROBE_HLT_BOUND_TSC ahead for
 *    that, ends the probe. The SDM's CPU leaves HLT for the
 *    external-interrupt exit (an external interrupt is not blocked by IF
 *    under the control, and the HLT state ends for an exit; Vol. 3C,
 *    "Activity State" and "Pin-Based VM-Execution Controls"). Bochs 3.0
 *    does not: handleWaitForEvent (cpu/event.cc) wakes for an external
 *    interrupt only with IF = 1, VMX or not; the preemption timer and an
 *    NMI do wake it (scripts/bochs-patches/0007 says why it leaves
 *    this). Asked only with hlt=guest (only it lets a guest sit in
 *    HLT) of several vCPUs (only those have a stop poll) on a CPU with
 *    the preemption timer (the bound, and the stop poll that is the
 *    workaround). Costs the stop poll on every entry of
 *    a hlt=guest vCPU with others, IF = 1 included: the guest clears IF
 *    itself before its HLT, no exit between (vmm/apic/vcpu_timer.c).
 * Anything else (a VMCALL in 2 or 3, a failed entry, an IPI that never
 * showed) proves nothing, and the workaround stays. The probes change only what
 * they restore: the controls, the VMCS fields they write, the four words
 * of the APIC page that an entry and a delivery touch.
 */
#define PROBE_NO_IPI    (-100)  /* probe_run(): the self-IPI never reached IRR */

/* One probe entry at rip with rflags and the interruptibility state intr,
 * a self-IPI of vector vec pending in the host APIC's IRR; the exit
 * reason, or < 0. An external-interrupt exit's vector is handled here
 * (ext_intr_handled()); if it was another interrupt than the probe's, the
 * probe is made again (the self-IPI still waits in IRR). */
static long probe_run_vec(struct vcpu *v, uint8_t vec, uint64_t rip, uint64_t rflags,
			  uint64_t intr)
{
	const uint32_t vec_irr = APIC_IRR + (vec / 32) * 16;
	unsigned spins = 0, tries = 0;
	uint64_t flags;
	long r = PROBE_NO_IPI;

	flags = irq_save();
	apic_send_ipi(this_cpu()->apic_id, vec);
	while (!(apic_read(vec_irr) & BIT(vec % 32)) && ++spins < PROBE_SPINS)
		cpu_relax();
	while (spins < PROBE_SPINS) {
		vcpu_reset_multiboot(v, (uint32_t)rip, 0);
		vmwrite(VMCS_GUEST_IDTR_LIMIT, 0);      /* a delivery faults (#GP exit) */
		vmwrite(VMCS_GUEST_RFLAGS, rflags);
		vmwrite(VMCS_GUEST_INTERRUPTIBILITY, intr);
		r = vmx_run(&v->regs);
		if (r < 0)
			break;
		v->regs.launched = 1;
		if (!ext_intr_handled(r) ||
		    FIELD_GET(INTR_INFO_VECTOR, vmread(VMCS_EXIT_INTR_INFO)) == vec ||
		    ++tries == CALIB_RUNS)
			break;
	}
	irq_restore(flags);     /* an IPI the guest did not exit for is taken now */
	vmwrite(VMCS_GUEST_INTERRUPTIBILITY, 0);
	return r;
}

static long probe_run(struct vcpu *v, uint64_t rip, uint64_t rflags, uint64_t intr)
{
	return probe_run_vec(v, VEC_KICK, rip, rflags, intr);
}

static const char *probe_failed(long r)
{
	return r == PROBE_NO_IPI ? "the self-IPI never arrived" :
	       r < 0 ? "the entry failed" : "an exit that proves nothing";
}

/* What the virtual-interrupt probes (2, 4, 5) change, saved so that each
 * leaves the vCPU as it found it: the controls, the guest interrupt
 * status, and the APIC page's TPR, PPR and the IRR and ISR words of the
 * probe's vector. */
struct probe_apic {
	uint64_t proc, proc2, pin, status;
	uint32_t irr_word, isr_word, tpr, ppr, irr, isr;
};

static void probe_apic_save(struct vcpu *v, uint8_t vec, struct probe_apic *s)
{
	struct vlapic *l = v->lapic;

	s->proc = vmread(VMCS_PROC_CTLS);
	s->proc2 = vmread(VMCS_PROC_CTLS2);
	s->pin = vmread(VMCS_PIN_CTLS);
	s->status = vmread(VMCS_GUEST_INTR_STATUS);
	s->irr_word = LAPIC_IRR + (vec / 32) * 16;
	s->isr_word = LAPIC_ISR + (vec / 32) * 16;
	s->tpr = vlapic_get(l, LAPIC_TPR);
	s->ppr = vlapic_get(l, LAPIC_PPR);
	s->irr = vlapic_get(l, s->irr_word);
	s->isr = vlapic_get(l, s->isr_word);
}

static void probe_apic_restore(struct vcpu *v, const struct probe_apic *s)
{
	struct vlapic *l = v->lapic;

	vmwrite(VMCS_PROC_CTLS, s->proc);
	vmwrite(VMCS_PROC_CTLS2, s->proc2);
	vmwrite(VMCS_PIN_CTLS, s->pin);
	vmwrite(VMCS_GUEST_INTR_STATUS, s->status);
	vlapic_set(l, LAPIC_TPR, s->tpr);
	vlapic_set(l, LAPIC_PPR, s->ppr);
	vlapic_set(l, s->irr_word, s->irr);
	vlapic_set(l, s->isr_word, s->isr);
}

/* SVI after a probe's exit: the vector the CPU delivered last. */
static unsigned probe_svi(void)
{
	return (vmread(VMCS_GUEST_INTR_STATUS) >> 8) & 0xff;
}

/* Probe 2 (above), with the APIC page and controls it needs: its exit
 * reason (or < 0), *erratum set only when the exit proves something. */
static long probe_vid(struct vcpu *v, bool *erratum, bool *known)
{
	struct vlapic *l = v->lapic;
	struct probe_apic s;
	long r;

	probe_apic_save(v, PROBE_VECTOR, &s);
	vmwrite(VMCS_PROC_CTLS2, s.proc2 | BIT(PROC2_VIRT_INTR_DELIVERY));
	vmwrite(VMCS_GUEST_INTR_STATUS, PROBE_VECTOR);
	vlapic_set(l, LAPIC_TPR, 0);
	vlapic_set(l, s.isr_word, s.isr & ~BIT(PROBE_VECTOR % 32));
	r = probe_run(v, PROBE_GPA, RFLAGS_FIXED | RFLAGS_IF, INTERRUPTIBILITY_STI);
	*known = true;
	if (r == VMX_EXIT_EXT_INTR)
		*erratum = false;
	else if (r >= 0 && probe_svi() == PROBE_VECTOR)
		*erratum = true;
	else
		*known = false;
	probe_apic_restore(v, &s);
	return r;
}

/* Probe 3 (above): its exit reason (or < 0). The HLT state and the
 * preemption timer are this probe's alone: the vCPU's own controls and
 * activity state come back before its first entry. */
static long probe_hlt(struct vcpu *v)
{
	uint64_t pin = vmread(VMCS_PIN_CTLS);
	long r;

	vmwrite(VMCS_PIN_CTLS, pin | BIT(PIN_PREEMPT_TIMER));
	vmwrite(VMCS_PREEMPT_TIMER_VALUE, PROBE_HLT_BOUND_TSC >> platform.vmx.preempt_rate);
	vmwrite(VMCS_GUEST_ACTIVITY_STATE, ACTIVITY_HLT);
	r = probe_run(v, PROBE_GPA + 1, RFLAGS_FIXED, 0);
	vmwrite(VMCS_GUEST_ACTIVITY_STATE, ACTIVITY_ACTIVE);
	vmwrite(VMCS_PIN_CTLS, pin);
	return r;
}

/* Whether probe 3 is asked (above). */
static bool probe_hlt_asked(const struct vcpu *v)
{
	return v->guest->hlt == HLT_GUEST && v->guest->nvcpus > 1 && platform.vmx.preempt_timer &&
	       platform.vmx.act_hlt;
}

/* Probe 3; *erratum stays set unless it proves the CPU right. */
static long probe_hlt_if0(struct vcpu *v, bool *erratum)
{
	long r = probe_hlt(v);

	if (r == VMX_EXIT_EXT_INTR || r == VMX_EXIT_PREEMPT_TIMER)
		*erratum = r == VMX_EXIT_PREEMPT_TIMER;
	else
		pr_warn("guest %s: vcpu%u: IF=0 HLT probe inconclusive (%s, %ld): stop poll kept "
			"on every entry", v->guest->spec->name, v->id, probe_failed(r), r);
	return r;
}

/*
 * Probe 4, of posted interrupts, asked where they would be used (a
 * descriptor: apicv=on on a CPU with posted-interrupt processing):
 * pi_empty_erratum. A notification that finds PIR empty is normal (a
 * root-mode fold took PIR after a second sender had set ON again and
 * sent its IPI, vmm/apic/vapic_pi.c), and the SDM's CPU then leaves RVI as it
 * was: RVI := max{RVI, PIRV}, nothing posted, nothing delivered (Vol. 3C,
 * "Posted-Interrupt Processing"). Bochs 3.0 without
 * scripts/bochs-patches/0006 sets RVI to 0xff and delivers vector 0xff,
 * which no one sent (the guest's spurious vector, never EOIed: the vCPU
 * wedges). The probe enters at the VMCALL with IF = 1, RVI 0, VIRR
 * empty, ON set, PIR empty and the notification vector pending in the
 * host APIC: the CPU processes it (clears ON) and the VMCALL exits with
 * RVI 0, or it delivers 0xff (a #GP exit through the IDT of limit 0,
 * SVI 0xff) or leaves RVI 0xff. Costs posted interrupts: they stay off
 * and IPIs to a running vCPU go by kick.
 */
static long probe_pi_empty(struct vcpu *v, bool *erratum, bool *known)
{
	struct vlapic *l = v->lapic;
	struct probe_apic s;
	uint64_t now;
	long r;

	probe_apic_save(v, 0xff, &s);
	vmwrite(VMCS_PROC_CTLS2, s.proc2 | BIT(PROC2_VIRT_INTR_DELIVERY));
	vmwrite(VMCS_PIN_CTLS, s.pin | BIT(PIN_POSTED_INTR));
	vmwrite(VMCS_GUEST_INTR_STATUS, 0);
	vlapic_set(l, LAPIC_TPR, 0);
	vlapic_set(l, LAPIC_PPR, 0);
	vlapic_set(l, s.irr_word, s.irr & ~BIT(0xff % 32));
	vlapic_set(l, s.isr_word, s.isr & ~BIT(0xff % 32));
	vapic_pi_arm_empty(v);
	r = probe_run_vec(v, VEC_POSTED, PROBE_GPA + 1, RFLAGS_FIXED | RFLAGS_IF, 0);
	now = vmread(VMCS_GUEST_INTR_STATUS);
	*known = true;
	if (r == VMX_EXIT_VMCALL && !vapic_pi_pending(v) && (now & 0xff) == 0 &&
	    ((now >> 8) & 0xff) == 0)
		*erratum = false;
	else if ((r == VMX_EXIT_VMCALL && (now & 0xff) == 0xff) ||
		 (r == VMX_EXIT_EXCEPTION_NMI && ((now >> 8) & 0xff) == 0xff))
		*erratum = true;
	else
		*known = false;
	vapic_pi_clear(v);
	WRITE_ONCE(v->pi_notified, false);
	probe_apic_restore(v, &s);
	return r;
}

/*
 * Probe 5, asked where a guest would keep HLT in non-root mode beside
 * posted timers (hlt=guest, a housekeeper, virtual-interrupt delivery, a
 * preemption timer for the bound): hlt_vintr_erratum. An expiry posted
 * while the guest has IF = 0 becomes a pending virtual interrupt (the
 * notification is processed whatever IF is), and the guest's next STI;
 * HLT must wake for it: a recognized virtual interrupt "wakes a logical
 * processor from the same inactive activity states as would an external
 * interrupt" (SDM Vol. 3C, "Virtual-Interrupt Delivery"; KVM, for its
 * part, counts a pending RVI as a reason to wake a halted vCPU). The
 * probe enters at STI; HLT; VMCALL with IF = 0, RVI = PROBE_VECTOR above
 * VPPR, HLT exiting off, no host interrupt pending: the SDM's CPU halts,
 * wakes at once and delivers PROBE_VECTOR through the IDT of limit 0 (a
 * #GP exit, SVI = PROBE_VECTOR); Bochs 3.0 without
 * scripts/bochs-patches/0007 sleeps until the preemption timer, armed
 * PROBE_HLT_BOUND_TSC ahead. A second entry asks the same of an
 * interrupt-window exit (below). Costs exitless idle: that vCPU's HLT exits
 * (vmm/apic/vapic_inject.c) and the halted vCPU sleeps in root mode.
 */
static bool probe_hlt_vintr_asked(const struct vcpu *v)
{
	return v->guest->hlt == HLT_GUEST && v->guest->hk && v->guest->apicv && platform.vmx.vid &&
	       platform.vmx.preempt_timer && platform.vmx.act_hlt;
}

/* One probe 5 entry at STI; HLT; VMCALL with IF = 0 and RVI rvi, the
 * controls as set; a host interrupt on the way is handled and the entry
 * made again. */
static long probe_sti_hlt_run(struct vcpu *v, uint16_t rvi)
{
	unsigned tries = 0;
	uint64_t flags = irq_save();
	long r;

	do {
		vcpu_reset_multiboot(v, PROBE_STI_HLT_GPA, 0);
		vmwrite(VMCS_GUEST_IDTR_LIMIT, 0);      /* a delivery faults (#GP exit) */
		vmwrite(VMCS_GUEST_RFLAGS, RFLAGS_FIXED);
		vmwrite(VMCS_GUEST_INTERRUPTIBILITY, 0);
		vmwrite(VMCS_GUEST_INTR_STATUS, rvi);
		vmwrite(VMCS_PREEMPT_TIMER_VALUE, PROBE_HLT_BOUND_TSC >> platform.vmx.preempt_rate);
		r = vmx_run(&v->regs);
		if (r < 0)
			break;
		v->regs.launched = 1;
	} while (ext_intr_handled(r) && ++tries < CALIB_RUNS);
	irq_restore(flags);
	vmwrite(VMCS_GUEST_ACTIVITY_STATE, ACTIVITY_ACTIVE);
	vmwrite(VMCS_GUEST_INTERRUPTIBILITY, 0);
	return r;
}

static long probe_hlt_vintr(struct vcpu *v, bool *erratum, bool *known)
{
	struct vlapic *l = v->lapic;
	struct probe_apic s;
	long r;

	probe_apic_save(v, PROBE_VECTOR, &s);
	vmwrite(VMCS_PROC_CTLS, s.proc & ~BIT(PROC_HLT_EXIT));
	vmwrite(VMCS_PROC_CTLS2, s.proc2 | BIT(PROC2_VIRT_INTR_DELIVERY));
	vmwrite(VMCS_PIN_CTLS, s.pin | BIT(PIN_PREEMPT_TIMER));
	vlapic_set(l, LAPIC_TPR, 0);
	vlapic_set(l, LAPIC_PPR, 0);
	vlapic_set(l, s.isr_word, s.isr & ~BIT(PROBE_VECTOR % 32));
	r = probe_sti_hlt_run(v, PROBE_VECTOR);
	*known = true;
	if (r == VMX_EXIT_EXCEPTION_NMI && probe_svi() == PROBE_VECTOR)
		*erratum = false;
	else if (r == VMX_EXIT_PREEMPT_TIMER)
		*erratum = true;        /* still halted at the bound */
	else
		*known = false;
	/* And an interrupt window armed with IF = 0 (tickvisor arms one for
	 * an interrupt behind an event it injects): its exit must end the
	 * guest's STI; HLT too (SDM Vol. 3C, "Other Causes of VM Exits":
	 * these exits "wake a logical processor from the same inactive
	 * states as would an external interrupt"). */
	if (*known && !*erratum) {
		vmwrite(VMCS_PROC_CTLS, (s.proc & ~BIT(PROC_HLT_EXIT)) | BIT(PROC_INTR_WINDOW));
		r = probe_sti_hlt_run(v, 0);
		if (r == VMX_EXIT_PREEMPT_TIMER)
			*erratum = true;
		else if (r != VMX_EXIT_INTR_WINDOW)
			*known = false;
	}
	probe_apic_restore(v, &s);
	return r;
}

void vcpu_calib_probe_if0(struct vcpu *v)
{
	const char *name = v->guest->spec->name;
	bool vid = v->guest->apicv && platform.vmx.vid, known = true;
	uint64_t excb, idtr;
	bool hlt_asked = probe_hlt_asked(v), vintr_asked = probe_hlt_vintr_asked(v);
	long kick, hlt = 0, r = 0, pi = 0, hv = 0;

	/* Until the CPU says otherwise. */
	v->kick_if0_erratum = true;
	v->hlt_if0_erratum = true;
	v->vid_if0_erratum = vid;
	v->pi_empty_erratum = v->pi != NULL;
	v->hlt_vintr_erratum = true;
	if (!calib.eptp) {
		pr_warn("guest %s: vcpu%u: IF=0 probes impossible (no private page): stop poll "
			"and interrupt window kept", name, v->id);
		return;
	}
	excb = vmread(VMCS_EXCEPTION_BITMAP);
	idtr = vmread(VMCS_GUEST_IDTR_LIMIT);
	vmwrite(VMCS_EPT_POINTER, calib.eptp);
	vmwrite(VMCS_EXCEPTION_BITMAP, ~0ull);

	kick = probe_run(v, PROBE_GPA + 1, RFLAGS_FIXED, 0);     /* the VMCALL */
	if (kick == VMX_EXIT_EXT_INTR || kick == VMX_EXIT_VMCALL)
		v->kick_if0_erratum = kick == VMX_EXIT_VMCALL;
	else
		pr_warn("guest %s: vcpu%u: IF=0 kick probe inconclusive (%s, %ld): stop poll kept",
			name, v->id, probe_failed(kick), kick);
	if (vid) {
		r = probe_vid(v, &v->vid_if0_erratum, &known);
		if (!known)
			pr_warn("guest %s: vcpu%u: IF=0 virtual-interrupt probe inconclusive (%s, %ld): "
				"interrupt window kept", name, v->id, probe_failed(r), r);
	}
	if (hlt_asked) {
		hlt = probe_hlt_if0(v, &v->hlt_if0_erratum);
		if ((hlt == VMX_EXIT_EXT_INTR || hlt == VMX_EXIT_PREEMPT_TIMER) &&
		    v->hlt_if0_erratum)
			pr_warn("guest %s: vcpu%u: HLT_IF0_ERRATUM: a kick does not end a guest's HLT "
				"with IF=0 on this CPU (Bochs without scripts/bochs-patches/0008?): "
				"the stop poll of vmm/apic/vcpu_timer.c, a VM exit per millisecond "
				"while the vCPU halts in the guest", name, v->id);
	}
	if (v->pi) {
		pi = probe_pi_empty(v, &v->pi_empty_erratum, &known);
		if (!known)
			pr_warn("guest %s: vcpu%u: posted-interrupt probe inconclusive (%s, %ld): "
				"posted interrupts off", name, v->id, probe_failed(pi), pi);
		else if (v->pi_empty_erratum)
			pr_warn("guest %s: vcpu%u: PI_EMPTY_ERRATUM: this CPU delivers vector 0xff "
				"for a notification with nothing posted (Bochs without "
				"scripts/bochs-patches/0006?): posted interrupts off", name, v->id);
	}
	if (vintr_asked && platform.inject.hlt_vintr_erratum) {
		pr_warn("guest %s: vcpu%u: inject=hlt-vintr-erratum: probe 5 not made, its erratum "
			"assumed", name, v->id);
	} else if (vintr_asked) {
		hv = probe_hlt_vintr(v, &v->hlt_vintr_erratum, &known);
		if (!known)
			pr_warn("guest %s: vcpu%u: HLT wake probe inconclusive (%s, %ld): HLT exits "
				"beside posted timers", name, v->id, probe_failed(hv), hv);
		else if (v->hlt_vintr_erratum)
			pr_warn("guest %s: vcpu%u: HLT_VINTR_ERRATUM: a pending virtual interrupt (or an "
				"interrupt window) does "
				"not end HLT on this CPU (Bochs without scripts/bochs-patches/0007?): "
				"HLT exits beside posted timers", name, v->id);
	}

	vmwrite(VMCS_EXCEPTION_BITMAP, excb);
	vmwrite(VMCS_GUEST_IDTR_LIMIT, idtr);
	vmwrite(VMCS_EPT_POINTER, v->guest->eptp);
	pr_debug("guest %s: vcpu%u: with IF=0 a kick %s (exit %ld); virtual interrupts %s "
		 "(exit %ld); a kick in HLT %s (exit %ld); a notification with nothing posted "
		 "%s (exit %ld); a pending virtual interrupt in HLT %s (exit %ld)", name, v->id,
		 v->kick_if0_erratum ? "is held back (erratum)" : "exits", kick,
		 !vid ? "not used" : v->vid_if0_erratum ? "are delivered (erratum)" :
		 "are held back", r, !hlt_asked ? "not asked" :
		 v->hlt_if0_erratum ? "is held back (erratum)" : "exits", hlt,
		 !v->pi ? "not asked" : v->pi_empty_erratum ? "delivers 0xff (erratum)" :
		 "delivers nothing", pi, !vintr_asked ? "not asked" :
		 v->hlt_vintr_erratum ? "sleeps on (erratum)" : "wakes it", hv);
}
