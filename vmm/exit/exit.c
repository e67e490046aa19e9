// SPDX-License-Identifier: BSD-2-Clause
/*
 * The exit dispatch table and the small handlers. Anything not in the
 * table ends the guest loudly (never `default: break;`): a guest must not
 * be resumed in a state tickvisor does not understand.
 */
#include "drivers/io.h"
#include "vmm/vcpu/vcpu_dump.h"
#include "vmm/exit/exit.h"
#include "vmm/exit/exit_fast.h"
#include "vmm/host/irq.h"
#include "vmm/host/mce.h"
#include "vmm/host/panic.h"
#include "vmm/apic/vapic.h"
#include "vmm/host/log.h"
#include "vmm/trace.h"
#include "vmm/apic/vcpu_timer.h"
#include "vmm/vcpu/vcpu_run.h"
#include "vmm/vcpu/vcpu_xstate.h"
#include "vmx/vmx.h"
#include "vmm/vcpu/vcpu_check.h"

void exit_host_irq(uint32_t intr_info)
{
	/* "Acknowledge interrupt on exit": the vector is in the exit
	 * information and the host handler runs now, as the IDT would. */
	if (intr_info & INTR_INFO_VALID)
		irq_handle((uint8_t)FIELD_GET(INTR_INFO_VECTOR, intr_info));
}

static int exit_ext_intr(struct vcpu *v)
{
	exit_host_irq(v->exit.intr_info);
	return 0;
}

/* A machine check while the guest ran (exception bitmap bit 18): the
 * banks decide whether the guest resumes where it was (RIPV), ends, or
 * tickvisor stops (vmm/host/mce.c). Nothing is injected: the error is
 * the host's hardware, not the guest's virtual CPU, which offers no MCA
 * (vmm/exit/exit_cpuid.c). */
static int exit_machine_check(struct vcpu *v)
{
	enum mce_verdict verdict = mce_handle(true, v->guest->spec->name);

	if (verdict == MCE_FATAL)
		panic("machine check in guest %s: the processor cannot go on",
		      v->guest->spec->name);
	if (verdict == MCE_END_GUEST)
		return vcpu_kill(v, GUEST_STATUS_KILLED, "machine check: the guest cannot resume "
				 "(the banks above)");
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
	if (FIELD_GET(INTR_INFO_VECTOR, info) == EXC_VECTOR_MC &&
	    FIELD_GET(INTR_INFO_TYPE, info) == INTR_TYPE_HW_EXC)
		return exit_machine_check(v);
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
	/* A debug exception ends the halt as an interrupt does ("An enabled
	 * interrupt (including NMI and SMI), a debug exception, ... will
	 * resume execution", SDM Vol. 2A, HLT): the single step of the HLT
	 * or a trap a MOV SS held, injected by vcpu_skip_insn(), is taken
	 * at once, IF set or not. KVM agrees: a queued exception is an
	 * event that keeps a halted vCPU runnable (kvm_vcpu_has_events). */
	if (v->injecting)
		return 0;
	/* RIP is past the HLT: whatever ends the halt (an interrupt, with IF
	 * clear an NMI or INIT; SDM Vol. 2A, HLT) is taken there. Whether
	 * anything still can is vcpu_timer_block()'s question. */
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

	if (vec)
		vcpu_inject_exception(v, (uint8_t)vec, vec == 13, 0);
	else
		vcpu_skip_insn(v);
	return 0;
}

/* A physical INIT or SIPI cannot reach a guest: tickvisor sends neither
 * after boot, the guest's own are virtual (lapic/, vmm/vcpu/vcpu_run.c), and no
 * vCPU is ever put in the wait-for-SIPI activity state. One that arrives
 * anyway means the host is not what tickvisor thinks: end the guest. */
static int exit_init_signal(struct vcpu *v)
{
	return vcpu_kill(v, GUEST_STATUS_KILLED, "physical INIT signal in a guest: "
			 "tickvisor sends none");
}

static int exit_sipi_signal(struct vcpu *v)
{
	return vcpu_kill(v, GUEST_STATUS_KILLED, "physical SIPI in a guest: no vCPU waits "
			 "for one in hardware");
}

static int exit_entry_failure(struct vcpu *v)
{
	bool first = !READ_ONCE(v->guest->ended);

	vcpu_kill(v, GUEST_STATUS_ENTRY_FAIL, "VM entry failed: %s (qualification %lu)",
		  vmx_exit_name(vmx_exit_basic(&v->exit)), (unsigned long)v->exit.qual);
	if (first && vmx_exit_basic(&v->exit) == VMX_EXIT_INVALID_STATE)
		vcpu_check_guest_state(v);
	return -1;
}

/*
 * Per basic exit reason: the handler, and what it needs read from the
 * VMCS (VMX_NEED_*); vmm_handle_exit() reads no more. Instructions that
 * are emulated and skipped need the instruction, those answered with an
 * exception nothing; exits that can interrupt event delivery need the
 * IDT-vectoring information (and the instruction length, to deliver a
 * software interrupt again); the VM-entry failures only report their
 * qualification.
 */
#define EXIT_NEEDS_EVENT (VMX_NEED_IDT_INFO | VMX_NEED_INSN_LEN)
static const struct exit_entry exit_table[VMX_EXIT_NR] = {
	[VMX_EXIT_EXCEPTION_NMI]  = { exit_exception_nmi, VMX_NEED_EVENT_EXIT },
	[VMX_EXIT_EXT_INTR]       = { exit_ext_intr,      VMX_NEED_EVENT_EXIT },
	[VMX_EXIT_TRIPLE_FAULT]   = { exit_triple_fault,  VMX_NEED_ALL },
	[VMX_EXIT_INIT]           = { exit_init_signal,   VMX_NEED_ALL },
	[VMX_EXIT_SIPI]           = { exit_sipi_signal,   VMX_NEED_ALL },
	[VMX_EXIT_CPUID]          = { exit_cpuid,         VMX_NEED_INSN },
	[VMX_EXIT_GETSEC]         = { exit_undefined,     0 },
	[VMX_EXIT_HLT]            = { exit_hlt,           VMX_NEED_INSN },
	[VMX_EXIT_INVD]           = { exit_invd,          VMX_NEED_INSN },
	[VMX_EXIT_RDPMC]          = { exit_rdpmc,         0 },
	[VMX_EXIT_VMCALL]         = { exit_vmcall,        VMX_NEED_INSN },
	[VMX_EXIT_VMCLEAR]        = { exit_undefined,     0 },
	[VMX_EXIT_VMLAUNCH]       = { exit_undefined,     0 },
	[VMX_EXIT_VMPTRLD]        = { exit_undefined,     0 },
	[VMX_EXIT_VMPTRST]        = { exit_undefined,     0 },
	[VMX_EXIT_VMREAD]         = { exit_undefined,     0 },
	[VMX_EXIT_VMRESUME]       = { exit_undefined,     0 },
	[VMX_EXIT_VMWRITE]        = { exit_undefined,     0 },
	[VMX_EXIT_VMXOFF]         = { exit_undefined,     0 },
	[VMX_EXIT_VMXON]          = { exit_undefined,     0 },
	[VMX_EXIT_CR_ACCESS]      = { exit_cr_access,     VMX_NEED_QUAL | VMX_NEED_INSN },
	[VMX_EXIT_IO]             = { exit_io,            VMX_NEED_QUAL | VMX_NEED_INSN },
	[VMX_EXIT_RDMSR]          = { exit_rdmsr,         VMX_NEED_INSN },
	[VMX_EXIT_WRMSR]          = { exit_wrmsr,         VMX_NEED_INSN },
	[VMX_EXIT_INVALID_STATE]  = { exit_entry_failure, VMX_NEED_QUAL },
	[VMX_EXIT_MSR_LOADING]    = { exit_entry_failure, VMX_NEED_QUAL },
	[VMX_EXIT_MCE_DURING_ENTRY] = { exit_entry_failure, VMX_NEED_QUAL },
	[VMX_EXIT_MWAIT]          = { exit_undefined,     0 },
	[VMX_EXIT_MONITOR]        = { exit_undefined,     0 },
	[VMX_EXIT_EPT_VIOLATION]  = { exit_ept_violation, VMX_NEED_QUAL | VMX_NEED_INSN |
							   VMX_NEED_IDT_INFO | VMX_NEED_GPA },
	[VMX_EXIT_EPT_MISCONFIG]  = { exit_ept_misconfig, VMX_NEED_ALL | VMX_NEED_GPA },
	[VMX_EXIT_INVEPT]         = { exit_undefined,     0 },
	[VMX_EXIT_INVVPID]        = { exit_undefined,     0 },
	[VMX_EXIT_XSETBV]         = { exit_xsetbv,        VMX_NEED_INSN },
	[VMX_EXIT_INTR_WINDOW]    = { exit_intr_window,   0 },
	[VMX_EXIT_NMI_WINDOW]     = { exit_nmi_window,    0 },
	[VMX_EXIT_TPR_BELOW]      = { exit_tpr_below,     0 },
	[VMX_EXIT_APIC_ACCESS]    = { exit_apic_access,   VMX_NEED_QUAL | VMX_NEED_RIP | EXIT_NEEDS_EVENT },
	[VMX_EXIT_EOI_INDUCED]    = { exit_eoi_induced,   VMX_NEED_QUAL },
	[VMX_EXIT_APIC_WRITE]     = { exit_apic_write,    VMX_NEED_QUAL },
	[VMX_EXIT_PREEMPT_TIMER]  = { exit_preempt_timer, 0 },
};

/* No handler: the guest did something tickvisor does not expect. The
 * table asked for nothing, so read everything for the report. */
static int exit_unhandled(struct vcpu *v, uint32_t reason)
{
	struct vmx_exit *e = &v->exit;

	vmx_read_exit(e, reason, VMX_NEED_ALL);
	if (reason & VMX_EXIT_REASON_ENTRY_FAIL)
		return exit_entry_failure(v);
	return vcpu_kill(v, GUEST_STATUS_KILLED, "unhandled VM exit %u (%s), qualification %#lx",
			 vmx_exit_basic(e), vmx_exit_name(vmx_exit_basic(e)), (unsigned long)e->qual);
}

/* A handler that says it ended the guest must have: one that did not is
 * a tickvisor bug, and the guest must not run on in that state. */
int vmm_exit_ended(struct vcpu *v)
{
	if (!READ_ONCE(v->guest->ended))
		return vcpu_kill(v, GUEST_STATUS_KILLED, "exit handler for %s failed without "
				 "ending the guest", vmx_exit_name(vmx_exit_basic(&v->exit)));
	return -1;
}

/*
 * The exit table's bound as the dispatch checks it: VMX_EXIT_NR, or 0
 * while exits are traced (log=trace:exit), which sends every exit the
 * long way, through exit_beyond_limit(). The bounds check is there
 * anyway, so tracing exits costs an untraced exit nothing.
 */
static uint16_t exit_limit = VMX_EXIT_NR;

void vmm_exit_init(void)
{
	exit_limit = log_trace_on(TRACE_EXIT) ? 0 : VMX_EXIT_NR;
}

/* One exit with its row of the table (basic < VMX_EXIT_NR): count it,
 * read what the row needs, call the handler. */
static inline __attribute__((always_inline)) int exit_dispatch(struct vcpu *v, uint32_t reason,
								unsigned basic, bool traced)
{
	const struct vmx_exit *e = &v->exit;
	const struct exit_entry *x;
	exit_fn fn;
	int r;

	v->stats.exits[basic]++;
	x = &exit_table[basic];
	fn = x->fn;
	if (unlikely(!fn))
		return exit_unhandled(v, reason);
	vmx_read_exit(&v->exit, reason, x->needs);
	if (traced)
		trace_exit(v);
	/* A failed entry (reasons 33, 34, 41) reaches exit_entry_failure
	 * through its table row. An exit in the middle of delivering an event (an EPT violation
	 * while pushing an interrupt frame, say) must deliver it again. */
	if (unlikely(x->needs & VMX_NEED_IDT_INFO) && (e->idt_info & INTR_INFO_VALID))
		vcpu_reinject(v);
	r = fn(v);
	if (likely(!r))
		return 0;
	if (r == EXIT_RESUMABLE)
		return vcpu_entry_idle(v);
	return vmm_exit_ended(v);
}

/* Past exit_limit: a reason beyond the table, or any exit while exits
 * are traced. */
static __attribute__((noinline)) int exit_beyond_limit(struct vcpu *v, uint32_t reason,
							unsigned basic)
{
	if (basic >= VMX_EXIT_NR)
		return exit_unhandled(v, reason);
	return exit_dispatch(v, reason, basic, true);
}

int vmm_handle_exit(struct vcpu *v, uint32_t reason)
{
	unsigned basic = (unsigned)FIELD_GET(VMX_EXIT_REASON_BASIC, reason);

	if (unlikely(basic >= exit_limit))
		return exit_beyond_limit(v, reason, basic);
	return exit_dispatch(v, reason, basic, false);
}
