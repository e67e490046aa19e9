/* SPDX-License-Identifier: BSD-2-Clause */
/* Basic exit reasons (SDM Vol. 3D, appendix "VMX Basic Exit Reasons") and
 * the exit information read once per exit. */
#ifndef VMX_VMX_EXIT_H
#define VMX_VMX_EXIT_H

#include "drivers/base.h"
#include "vmx/vmx_insn.h"
#include "vmx/vmcs.h"

enum vmx_exit_reason {
	VMX_EXIT_EXCEPTION_NMI    = 0,
	VMX_EXIT_EXT_INTR         = 1,
	VMX_EXIT_TRIPLE_FAULT     = 2,
	VMX_EXIT_INIT             = 3,
	VMX_EXIT_SIPI             = 4,
	VMX_EXIT_IO_SMI           = 5,
	VMX_EXIT_OTHER_SMI        = 6,
	VMX_EXIT_INTR_WINDOW      = 7,
	VMX_EXIT_NMI_WINDOW       = 8,
	VMX_EXIT_TASK_SWITCH      = 9,
	VMX_EXIT_CPUID            = 10,
	VMX_EXIT_GETSEC           = 11,
	VMX_EXIT_HLT              = 12,
	VMX_EXIT_INVD             = 13,
	VMX_EXIT_INVLPG           = 14,
	VMX_EXIT_RDPMC            = 15,
	VMX_EXIT_RDTSC            = 16,
	VMX_EXIT_RSM              = 17,
	VMX_EXIT_VMCALL           = 18,
	VMX_EXIT_VMCLEAR          = 19,
	VMX_EXIT_VMLAUNCH         = 20,
	VMX_EXIT_VMPTRLD          = 21,
	VMX_EXIT_VMPTRST          = 22,
	VMX_EXIT_VMREAD           = 23,
	VMX_EXIT_VMRESUME         = 24,
	VMX_EXIT_VMWRITE          = 25,
	VMX_EXIT_VMXOFF           = 26,
	VMX_EXIT_VMXON            = 27,
	VMX_EXIT_CR_ACCESS        = 28,
	VMX_EXIT_DR_ACCESS        = 29,
	VMX_EXIT_IO               = 30,
	VMX_EXIT_RDMSR            = 31,
	VMX_EXIT_WRMSR            = 32,
	VMX_EXIT_INVALID_STATE    = 33,
	VMX_EXIT_MSR_LOADING      = 34,
	VMX_EXIT_MWAIT            = 36,
	VMX_EXIT_MTF              = 37,
	VMX_EXIT_MONITOR          = 39,
	VMX_EXIT_PAUSE            = 40,
	VMX_EXIT_MCE_DURING_ENTRY = 41,
	VMX_EXIT_TPR_BELOW        = 43,
	VMX_EXIT_APIC_ACCESS      = 44,
	VMX_EXIT_EOI_INDUCED      = 45,
	VMX_EXIT_GDTR_IDTR        = 46,
	VMX_EXIT_LDTR_TR          = 47,
	VMX_EXIT_EPT_VIOLATION    = 48,
	VMX_EXIT_EPT_MISCONFIG    = 49,
	VMX_EXIT_INVEPT           = 50,
	VMX_EXIT_RDTSCP           = 51,
	VMX_EXIT_PREEMPT_TIMER    = 52,
	VMX_EXIT_INVVPID          = 53,
	VMX_EXIT_WBINVD           = 54,
	VMX_EXIT_XSETBV           = 55,
	VMX_EXIT_APIC_WRITE       = 56,
	VMX_EXIT_RDRAND           = 57,
	VMX_EXIT_INVPCID          = 58,
	VMX_EXIT_VMFUNC           = 59,
	VMX_EXIT_ENCLS            = 60,
	VMX_EXIT_RDSEED           = 61,
	VMX_EXIT_PML_FULL         = 62,
	VMX_EXIT_XSAVES           = 63,
	VMX_EXIT_XRSTORS          = 64,
	VMX_EXIT_NR               = 70,
};

#define VMX_EXIT_REASON_BASIC      BITS(15, 0)
#define VMX_EXIT_REASON_ENTRY_FAIL BIT(31)

/* VM-exit interruption information / VM-entry interruption information /
 * IDT-vectoring information share this layout. */
#define INTR_INFO_VECTOR       BITS(7, 0)
#define INTR_INFO_TYPE         BITS(10, 8)
#define   INTR_TYPE_EXT_INTR   0u
#define   INTR_TYPE_NMI        2u
#define   INTR_TYPE_HW_EXC     3u
#define   INTR_TYPE_SW_INTR    4u
#define   INTR_TYPE_PRIV_SW_EXC 5u
#define   INTR_TYPE_SW_EXC     6u
#define INTR_INFO_ERROR_VALID  BIT(11)
#define INTR_INFO_NMI_UNBLOCK  BIT(12)
#define INTR_INFO_VALID        BIT(31)

/* Guest interruptibility state */
#define INTERRUPTIBILITY_STI       BIT(0)
#define INTERRUPTIBILITY_MOV_SS    BIT(1)
#define INTERRUPTIBILITY_SMI       BIT(2)
#define INTERRUPTIBILITY_NMI       BIT(3)

enum vmx_activity {
	ACTIVITY_ACTIVE = 0,
	ACTIVITY_HLT = 1,
	ACTIVITY_SHUTDOWN = 2,
	ACTIVITY_WAIT_SIPI = 3,
};

/*
 * What an exit's handler needs from the VMCS besides the exit reason. The
 * exit table (vmm/exit/exit.c) says it per basic exit reason and
 * vmx_read_exit() reads exactly that: VMREADs cost tens of cycles each on
 * hardware, and the frequent exits (CPUID, MSRs, timer) need one or two.
 * IDT-vectoring information is worth reading only for exits that can
 * happen in the middle of delivering an event (SDM Vol. 3C, "Information
 * for VM Exits During Event Delivery"), not for instruction exits or
 * those taken at an instruction boundary.
 */
#define VMX_NEED_QUAL       BIT(0)      /* exit qualification */
#define VMX_NEED_INSN_LEN   BIT(1)      /* VM-exit instruction length */
#define VMX_NEED_RIP        BIT(2)      /* guest RIP (of the exiting instruction) */
#define VMX_NEED_INTR_INFO  BIT(3)      /* VM-exit interruption information */
#define VMX_NEED_IDT_INFO   BIT(4)      /* IDT-vectoring information */
#define VMX_NEED_GPA        BIT(5)      /* guest-physical address (EPT exits) */
/* An instruction to emulate or skip. */
#define VMX_NEED_INSN       (VMX_NEED_INSN_LEN | VMX_NEED_RIP)
/* An exit caused by an event (external interrupt, exception, NMI): its
 * interruption information, and, as it can come in the middle of
 * delivering another event, the IDT-vectoring information and the
 * instruction length to deliver that one again. */
#define VMX_NEED_EVENT_EXIT (VMX_NEED_INTR_INFO | VMX_NEED_IDT_INFO | VMX_NEED_INSN_LEN)
/* Everything but the guest-physical address: exits whose handlers only
 * report them, and exits tickvisor has no handler for. */
#define VMX_NEED_ALL        (VMX_NEED_QUAL | VMX_NEED_INSN | VMX_NEED_INTR_INFO | \
			     VMX_NEED_IDT_INFO)

/* Fields a handler did not ask for read 0. */
struct vmx_exit {
	uint32_t reason;        /* full exit reason (vmx_exit_basic(): its basic reason) */
	uint32_t insn_len;
	uint64_t qual;          /* exit qualification */
	uint64_t rip;
	uint32_t intr_info;     /* VM-exit interruption information */
	uint32_t idt_info;      /* IDT-vectoring information */
	uint64_t gpa;           /* guest-physical address */
};

/* The basic exit reason, bits 15:0 of the full one. */
static inline uint16_t vmx_exit_basic(const struct vmx_exit *e)
{
	return (uint16_t)FIELD_GET(VMX_EXIT_REASON_BASIC, e->reason);
}

static inline uint32_t vmx_read_exit_reason(void)
{
	return (uint32_t)vmread(VMCS_EXIT_REASON);
}

void vmx_read_exit_info(struct vmx_exit *e, unsigned needs);

/* VMX_NEED_EVENT_EXIT, read straight (vmx_read_exit). */
static inline void vmx_read_exit_event(struct vmx_exit *e)
{
	e->qual = 0;
	e->rip = 0;
	e->gpa = 0;
	e->insn_len = (uint32_t)vmread(VMCS_EXIT_INSN_LEN);
	e->intr_info = (uint32_t)vmread(VMCS_EXIT_INTR_INFO);
	e->idt_info = (uint32_t)vmread(VMCS_IDT_VECTORING_INFO);
}

/*
 * Fills `e` for the exit `reason` (from vmx_read_exit_reason()) with the
 * information `needs` (VMX_NEED_*) asks for; what it does not ask for
 * reads 0. With vmx_read_exit_info() the one place that reads exit
 * information, so the cost per exit is visible here. Inline, and the
 * exits that need at most the instruction or the qualification (CPUID,
 * MSRs, HLT, timers, interrupt windows, APIC writes - every xAPIC IPI
 * with APICv: the frequent ones) take the short way; external
 * interrupts (the host-timer backends' expiries, kicks) a second one,
 * without testing the six VMX_NEED_* bits one by one.
 */
static inline void vmx_read_exit(struct vmx_exit *e, uint32_t reason, unsigned needs)
{
	e->reason = reason;
	if (unlikely(needs & ~(unsigned)(VMX_NEED_INSN | VMX_NEED_QUAL))) {
		if (needs == VMX_NEED_EVENT_EXIT)
			vmx_read_exit_event(e);
		else
			vmx_read_exit_info(e, needs);
		return;
	}
	e->qual = needs & VMX_NEED_QUAL ? vmread(VMCS_EXIT_QUALIFICATION) : 0;
	e->intr_info = 0;
	e->idt_info = 0;
	e->gpa = 0;
	e->insn_len = needs & VMX_NEED_INSN_LEN ? (uint32_t)vmread(VMCS_EXIT_INSN_LEN) : 0;
	e->rip = needs & VMX_NEED_RIP ? vmread(VMCS_GUEST_RIP) : 0;
}

const char *vmx_exit_name(unsigned basic);
/* VM-instruction error numbers (SDM Vol. 3C, "VM Instruction Error Numbers"). */
const char *vmx_insn_error_name(unsigned err);

/* The qualification of APIC-access and APIC-write exits (SDM Vol. 3C,
 * "Exit Qualification for APIC-Access VM Exits from Linear Accesses and
 * Guest-Physical Accesses"; an APIC-write exit has the offset only). */
#define APIC_ACCESS_OFFSET  BITS(11, 0)
#define APIC_ACCESS_TYPE    BITS(15, 12)
#define   APIC_ACCESS_READ  0u
#define   APIC_ACCESS_WRITE 1u

#endif
