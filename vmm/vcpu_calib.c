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
#include "vmm/vcpu_calib.h"
#include "vmm/vcpu_setup.h"
#include "vmx/vmx.h"

#define CALIB_GPA   0x1000u     /* where the private EPT shows the code */
#define CALIB_RUNS  8u
#define PROBE_GPA   (CALIB_GPA + 0x10u)  /* the erratum probe's code */
#define PROBE_VECTOR 0x80u              /* its virtual interrupt (RVI) */
#define PROBE_SPINS 1000000u            /* for the self-IPI to reach IRR */

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
	calib.eptp = ept_pointer(&calib.ept);
}

/* One run: the guest's RDTSC minus the wait's end, the exit's TSC minus
 * the guest's RDTSC; false if the vCPU did not come back by its VMCALL. */
static bool calib_run(struct vcpu *v, uint64_t *entry, uint64_t *exit)
{
	uint64_t start, guest;
	long reason;

	vmwrite(VMCS_GUEST_RIP, CALIB_GPA);
	start = rdtsc() + 2000;
	v->regs.spin_until = start;
	reason = vmx_run(&v->regs);
	if (reason < 0)
		return false;
	v->regs.launched = 1;
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
 * Does this CPU deliver a pending virtual interrupt while the guest has
 * RFLAGS.IF = 0? The SDM says never (Vol. 3C, "Delivery of Pending
 * Virtual Interrupts": IF = 1, no STI or MOV-SS blocking, interrupt-window
 * exiting 0); Bochs 3.0 does when a physical interrupt arrives in
 * non-root mode, which vmm/vapic_inject.c works around at the cost of an
 * interrupt-window exit per IF=0 entry. So ask the CPU, in the private
 * page:
 * - RVI = PROBE_VECTOR above VPPR (VTPR 0, nothing in service), so a
 *   virtual interrupt is pending from the entry on;
 * - entered with IF = 1 in an STI shadow, which blocks it for one
 *   instruction: CLI, so the guest clears IF itself (Bochs unmasks the
 *   physical interrupt for "external-interrupt exiting" only then,
 *   flag_ctrl_pro.cc);
 * - a self-IPI (VEC_KICK) already in the host APIC's IRR, so a physical
 *   interrupt is waiting all along.
 * The SDM's CPU then leaves with an external-interrupt exit, in the shadow
 * or right after the CLI. The erratum delivers PROBE_VECTOR after the CLI
 * instead: through an IDT of limit 0 that raises #GP, which the exception
 * bitmap turns into an exit, with SVI = PROBE_VECTOR. Anything else (the
 * VMCALL: the interrupt never came; a failed entry) proves nothing, and
 * the workaround stays. The probe changes only what it restores: the
 * controls, the VMCS fields it writes, and the four words of the APIC page
 * that the entry and a delivery touch. It needs virtual-interrupt delivery;
 * a vCPU without it (apicv=off, or a CPU without the control) has nothing
 * to guard.
 */
void vcpu_calib_probe_vid_if0(struct vcpu *v)
{
	const uint32_t irr_word = LAPIC_IRR + (PROBE_VECTOR / 32) * 16;
	const uint32_t isr_word = LAPIC_ISR + (PROBE_VECTOR / 32) * 16;
	const uint32_t vec_irr = APIC_IRR + (VEC_KICK / 32) * 16;
	struct vlapic *l = v->lapic;
	uint64_t proc2, status, excb, intr, idtr, flags, reason = ~0ull;
	uint32_t tpr, ppr, irr, isr;
	const char *what;
	unsigned spins = 0;
	long r;

	v->vid_if0_erratum = false;
	if (!v->guest->apicv || !platform.vmx.vid)
		return;
	v->vid_if0_erratum = true;              /* until the CPU says otherwise */
	if (!calib.eptp) {
		what = "no private page";
		goto unknown;
	}
	proc2 = vmread(VMCS_PROC_CTLS2);
	status = vmread(VMCS_GUEST_INTR_STATUS);
	excb = vmread(VMCS_EXCEPTION_BITMAP);
	intr = vmread(VMCS_GUEST_INTERRUPTIBILITY);
	idtr = vmread(VMCS_GUEST_IDTR_LIMIT);
	tpr = vlapic_get(l, LAPIC_TPR);
	ppr = vlapic_get(l, LAPIC_PPR);
	irr = vlapic_get(l, irr_word);
	isr = vlapic_get(l, isr_word);

	vmwrite(VMCS_EPT_POINTER, calib.eptp);
	vcpu_reset_multiboot(v, PROBE_GPA, 0);
	vmwrite(VMCS_GUEST_RFLAGS, RFLAGS_FIXED | RFLAGS_IF);
	vmwrite(VMCS_GUEST_INTERRUPTIBILITY, INTERRUPTIBILITY_STI);
	vmwrite(VMCS_GUEST_IDTR_LIMIT, 0);
	vmwrite(VMCS_EXCEPTION_BITMAP, ~0ull);
	vmwrite(VMCS_PROC_CTLS2, proc2 | BIT(PROC2_VIRT_INTR_DELIVERY));
	vmwrite(VMCS_GUEST_INTR_STATUS, PROBE_VECTOR);
	vlapic_set(l, LAPIC_TPR, 0);
	vlapic_set(l, isr_word, isr & ~BIT(PROBE_VECTOR % 32));

	flags = irq_save();
	apic_send_ipi(this_cpu()->apic_id, VEC_KICK);
	while (!(apic_read(vec_irr) & BIT(VEC_KICK % 32)) && ++spins < PROBE_SPINS)
		cpu_relax();
	r = spins < PROBE_SPINS ? vmx_run(&v->regs) : VMX_RUN_FAIL_INVALID;
	if (r >= 0) {
		v->regs.launched = 1;
		reason = (uint64_t)r;
		intr = vmread(VMCS_EXIT_INTR_INFO);
		/* "Acknowledge interrupt on exit": the host handler now. */
		if (reason == VMX_EXIT_EXT_INTR && (intr & INTR_INFO_VALID))
			irq_handle((uint8_t)FIELD_GET(INTR_INFO_VECTOR, intr));
		if (reason == VMX_EXIT_EXT_INTR)
			v->vid_if0_erratum = false;
		else if (((vmread(VMCS_GUEST_INTR_STATUS) >> 8) & 0xff) == PROBE_VECTOR)
			v->vid_if0_erratum = true;
		else
			reason |= 1ull << 32;   /* neither */
	}
	irq_restore(flags);             /* the erratum left the self-IPI pending */

	vmwrite(VMCS_PROC_CTLS2, proc2);
	vmwrite(VMCS_GUEST_INTR_STATUS, status);
	vmwrite(VMCS_EXCEPTION_BITMAP, excb);
	vmwrite(VMCS_GUEST_INTERRUPTIBILITY, 0);
	vmwrite(VMCS_GUEST_IDTR_LIMIT, idtr);
	vmwrite(VMCS_EPT_POINTER, v->guest->eptp);
	vlapic_set(l, LAPIC_TPR, tpr);
	vlapic_set(l, LAPIC_PPR, ppr);
	vlapic_set(l, irr_word, irr);
	vlapic_set(l, isr_word, isr);
	if (r >= 0 && !(reason >> 32)) {
		pr_debug("guest %s: vcpu%u: virtual interrupts with IF=0: %s (exit %lu)",
			 v->guest->spec->name, v->id, v->vid_if0_erratum ? "delivered (erratum)" :
			 "held back", (unsigned long)reason);
		return;
	}
	what = r < 0 ? (spins < PROBE_SPINS ? "the entry failed" : "the self-IPI never arrived") :
		       "neither an external-interrupt exit nor the delivery";
unknown:
	pr_warn("guest %s: vcpu%u: virtual-interrupt probe inconclusive (%s): interrupt window "
		"on every IF=0 entry", v->guest->spec->name, v->id, what);
}
