// SPDX-License-Identifier: BSD-2-Clause
/*
 * The exit dispatch table and the small handlers. Anything not in the
 * table ends the guest loudly (never `default: break;`): a guest must not
 * be resumed in a state tickvisor does not understand.
 */
#include "drivers/io.h"
#include "vmm/dump.h"
#include "vmm/exit.h"
#include "vmm/host/irq.h"
#include "vmm/lapic_glue.h"
#include "vmm/host/log.h"
#include "vmm/vcpu_timer.h"
#include "vmm/vcpu_run.h"
#include "vmm/vcpu_xstate.h"
#include "vmx/vmx.h"

static int exit_ext_intr(struct vcpu *v)
{
	uint32_t info = v->exit.intr_info;

	/* "Acknowledge interrupt on exit": the vector is in the exit
	 * information and the host handler runs now, as the IDT would. */
	if (info & INTR_INFO_VALID)
		irq_handle((uint8_t)FIELD_GET(INTR_INFO_VECTOR, info));
	return 0;
}

static int exit_exception_nmi(struct vcpu *v)
{
	uint32_t info = v->exit.intr_info;

	if (FIELD_GET(INTR_INFO_TYPE, info) == INTR_TYPE_NMI) {
		/* A host NMI arrived in non-root mode: handle it as the
		 * host (SDM: it is not delivered to the guest). Through the
		 * IDT, so the handler's IRET unblocks NMIs (vmm/host/irq.c). */
		__asm__ volatile("int $2");
		return 0;
	}
	return vcpu_kill(v, GUEST_STATUS_KILLED, "unexpected exception exit, vector %lu",
			 (unsigned long)FIELD_GET(INTR_INFO_VECTOR, info));
}

static int exit_triple_fault(struct vcpu *v)
{
	return vcpu_kill(v, GUEST_STATUS_TRIPLE_FAULT, "triple fault (shutdown)");
}

static int exit_hlt(struct vcpu *v)
{
	uint64_t rflags = vmread(VMCS_GUEST_RFLAGS);

	vcpu_skip_insn(v);
	/* With IF clear only an NMI or INIT ends the halt: from another vCPU
	 * that can happen, alone it cannot. */
	if (!(rflags & RFLAGS_IF) && v->guest->nvcpus == 1)
		return vcpu_kill(v, GUEST_STATUS_HUNG,
				 "HLT with interrupts disabled: the vCPU would sleep forever");
	return vcpu_timer_block(v, rflags & RFLAGS_IF);
}

/* Instructions a guest without VMX/SMX/monitor may not execute: #UD, as
 * on a CPU whose CPUID says so. */
static int exit_undefined(struct vcpu *v)
{
	vcpu_inject_ud(v);
	return 0;
}

static int exit_invd(struct vcpu *v)
{
	/* INVD would discard dirty lines of memory the guest does not own
	 * (tickvisor's, other guests'): write them back instead. */
	__asm__ volatile("wbinvd" ::: "memory");
	vcpu_skip_insn(v);
	return 0;
}

static int exit_rdpmc(struct vcpu *v)
{
	/* CPUID 0xA reports no PMU: RDPMC raises #GP. */
	vcpu_inject_gp(v);
	return 0;
}

static int exit_xsetbv(struct vcpu *v)
{
	uint64_t *r = v->regs.gpr;
	uint64_t val = (r[GPR_RDX] << 32) | (uint32_t)r[GPR_RAX];
	int vec = vcpu_xsetbv(v, (uint32_t)r[GPR_RCX], val);

	/* The new XCR0 reaches the CPU at the next entry (vcpu_run). */
	if (vec)
		vcpu_inject_exception(v, (uint8_t)vec, vec == 13, 0);
	else
		vcpu_skip_insn(v);
	return 0;
}

static int exit_init_signal(struct vcpu *v)
{
	/* A physical INIT: tickvisor sends none after boot, and the guest's
	 * own INITs are virtual (lapic/). Nothing of the guest's to reset. */
	pr_warn("guest %s: vcpu%u: physical INIT signal ignored", v->guest->spec->name, v->id);
	return 0;
}

static int exit_sipi_signal(struct vcpu *v)
{
	/* Only in the wait-for-SIPI activity state, which tickvisor never
	 * enters (virtual SIPIs are handled in vmm/vcpu_run.c). */
	return 0;
}

static int exit_entry_failure(struct vcpu *v)
{
	bool first = !READ_ONCE(v->guest->ended);

	vcpu_kill(v, GUEST_STATUS_ENTRY_FAIL, "VM entry failed: %s (qualification %lu)",
		  vmx_exit_name(v->exit.basic), (unsigned long)v->exit.qual);
	if (first && v->exit.basic == VMX_EXIT_INVALID_STATE)
		vcpu_check_guest_state(v);
	return -1;
}

static const exit_fn exit_table[VMX_EXIT_NR] = {
	[VMX_EXIT_EXCEPTION_NMI]  = exit_exception_nmi,
	[VMX_EXIT_EXT_INTR]       = exit_ext_intr,
	[VMX_EXIT_TRIPLE_FAULT]   = exit_triple_fault,
	[VMX_EXIT_INIT]           = exit_init_signal,
	[VMX_EXIT_SIPI]           = exit_sipi_signal,
	[VMX_EXIT_CPUID]          = exit_cpuid,
	[VMX_EXIT_GETSEC]         = exit_undefined,
	[VMX_EXIT_HLT]            = exit_hlt,
	[VMX_EXIT_INVD]           = exit_invd,
	[VMX_EXIT_RDPMC]          = exit_rdpmc,
	[VMX_EXIT_VMCALL]         = exit_vmcall,
	[VMX_EXIT_VMCLEAR]        = exit_undefined,
	[VMX_EXIT_VMLAUNCH]       = exit_undefined,
	[VMX_EXIT_VMPTRLD]        = exit_undefined,
	[VMX_EXIT_VMPTRST]        = exit_undefined,
	[VMX_EXIT_VMREAD]         = exit_undefined,
	[VMX_EXIT_VMRESUME]       = exit_undefined,
	[VMX_EXIT_VMWRITE]        = exit_undefined,
	[VMX_EXIT_VMXOFF]         = exit_undefined,
	[VMX_EXIT_VMXON]          = exit_undefined,
	[VMX_EXIT_CR_ACCESS]      = exit_cr_access,
	[VMX_EXIT_IO]             = exit_io,
	[VMX_EXIT_RDMSR]          = exit_rdmsr,
	[VMX_EXIT_WRMSR]          = exit_wrmsr,
	[VMX_EXIT_INVALID_STATE]  = exit_entry_failure,
	[VMX_EXIT_MSR_LOADING]    = exit_entry_failure,
	[VMX_EXIT_MCE_DURING_ENTRY] = exit_entry_failure,
	[VMX_EXIT_MWAIT]          = exit_undefined,
	[VMX_EXIT_MONITOR]        = exit_undefined,
	[VMX_EXIT_EPT_VIOLATION]  = exit_ept_violation,
	[VMX_EXIT_EPT_MISCONFIG]  = exit_ept_misconfig,
	[VMX_EXIT_INVEPT]         = exit_undefined,
	[VMX_EXIT_INVVPID]        = exit_undefined,
	[VMX_EXIT_XSETBV]         = exit_xsetbv,
	[VMX_EXIT_INTR_WINDOW]    = exit_intr_window,
	[VMX_EXIT_NMI_WINDOW]     = exit_nmi_window,
	[VMX_EXIT_TPR_BELOW]      = exit_tpr_below,
	[VMX_EXIT_APIC_ACCESS]    = exit_apic_access,
	[VMX_EXIT_EOI_INDUCED]    = exit_eoi_induced,
	[VMX_EXIT_APIC_WRITE]     = exit_apic_write,
	[VMX_EXIT_PREEMPT_TIMER]  = exit_preempt_timer,
};

void vmm_handle_exit(struct vcpu *v)
{
	const struct vmx_exit *e = &v->exit;
	exit_fn fn;

	if (e->basic < VMX_EXIT_NR) {
		v->stats.exits[e->basic]++;
		v->stats.total++;
	}
	if (e->reason & VMX_EXIT_REASON_ENTRY_FAIL) {
		exit_entry_failure(v);
		return;
	}
	/* An exit in the middle of delivering an event (an EPT violation
	 * while pushing an interrupt frame, say) must deliver it again. */
	if (e->idt_info & INTR_INFO_VALID)
		vcpu_reinject(v);
	fn = e->basic < VMX_EXIT_NR ? exit_table[e->basic] : NULL;
	if (!fn) {
		vcpu_kill(v, GUEST_STATUS_KILLED, "unhandled VM exit %u (%s), qualification %#lx",
			  e->basic, vmx_exit_name(e->basic), (unsigned long)e->qual);
		return;
	}
	fn(v);
}
