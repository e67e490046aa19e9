// SPDX-License-Identifier: BSD-2-Clause
#include "vmx/vmx_exit.h"

/* Every field of the exit information `needs` asks for, 0 for the rest. */
void vmx_read_exit_info(struct vmx_exit *e, unsigned needs)
{
	e->qual = needs & VMX_NEED_QUAL ? vmread(VMCS_EXIT_QUALIFICATION) : 0;
	e->insn_len = needs & VMX_NEED_INSN_LEN ? (uint32_t)vmread(VMCS_EXIT_INSN_LEN) : 0;
	e->rip = needs & VMX_NEED_RIP ? vmread(VMCS_GUEST_RIP) : 0;
	e->intr_info = needs & VMX_NEED_INTR_INFO ? (uint32_t)vmread(VMCS_EXIT_INTR_INFO) : 0;
	e->idt_info = needs & VMX_NEED_IDT_INFO ? (uint32_t)vmread(VMCS_IDT_VECTORING_INFO) : 0;
	e->gpa = needs & VMX_NEED_GPA ? vmread(VMCS_GUEST_PHYS_ADDR) : 0;
}

static const char *const exit_names[VMX_EXIT_NR] = {
	[VMX_EXIT_EXCEPTION_NMI] = "exception or NMI", [VMX_EXIT_EXT_INTR] = "external interrupt",
	[VMX_EXIT_TRIPLE_FAULT] = "triple fault", [VMX_EXIT_INIT] = "INIT signal",
	[VMX_EXIT_SIPI] = "SIPI", [VMX_EXIT_IO_SMI] = "I/O SMI", [VMX_EXIT_OTHER_SMI] = "other SMI",
	[VMX_EXIT_INTR_WINDOW] = "interrupt window", [VMX_EXIT_NMI_WINDOW] = "NMI window",
	[VMX_EXIT_TASK_SWITCH] = "task switch", [VMX_EXIT_CPUID] = "CPUID",
	[VMX_EXIT_GETSEC] = "GETSEC", [VMX_EXIT_HLT] = "HLT", [VMX_EXIT_INVD] = "INVD",
	[VMX_EXIT_INVLPG] = "INVLPG", [VMX_EXIT_RDPMC] = "RDPMC", [VMX_EXIT_RDTSC] = "RDTSC",
	[VMX_EXIT_RSM] = "RSM", [VMX_EXIT_VMCALL] = "VMCALL", [VMX_EXIT_VMCLEAR] = "VMCLEAR",
	[VMX_EXIT_VMLAUNCH] = "VMLAUNCH", [VMX_EXIT_VMPTRLD] = "VMPTRLD",
	[VMX_EXIT_VMPTRST] = "VMPTRST", [VMX_EXIT_VMREAD] = "VMREAD",
	[VMX_EXIT_VMRESUME] = "VMRESUME", [VMX_EXIT_VMWRITE] = "VMWRITE",
	[VMX_EXIT_VMXOFF] = "VMXOFF", [VMX_EXIT_VMXON] = "VMXON",
	[VMX_EXIT_CR_ACCESS] = "control-register access", [VMX_EXIT_DR_ACCESS] = "MOV DR",
	[VMX_EXIT_IO] = "I/O instruction", [VMX_EXIT_RDMSR] = "RDMSR", [VMX_EXIT_WRMSR] = "WRMSR",
	[VMX_EXIT_INVALID_STATE] = "VM-entry failure: invalid guest state",
	[VMX_EXIT_MSR_LOADING] = "VM-entry failure: MSR loading", [VMX_EXIT_MWAIT] = "MWAIT",
	[VMX_EXIT_MTF] = "monitor trap flag", [VMX_EXIT_MONITOR] = "MONITOR",
	[VMX_EXIT_PAUSE] = "PAUSE", [VMX_EXIT_MCE_DURING_ENTRY] = "machine check during VM entry",
	[VMX_EXIT_TPR_BELOW] = "TPR below threshold", [VMX_EXIT_APIC_ACCESS] = "APIC access",
	[VMX_EXIT_EOI_INDUCED] = "virtualized EOI", [VMX_EXIT_GDTR_IDTR] = "GDTR/IDTR access",
	[VMX_EXIT_LDTR_TR] = "LDTR/TR access", [VMX_EXIT_EPT_VIOLATION] = "EPT violation",
	[VMX_EXIT_EPT_MISCONFIG] = "EPT misconfiguration", [VMX_EXIT_INVEPT] = "INVEPT",
	[VMX_EXIT_RDTSCP] = "RDTSCP", [VMX_EXIT_PREEMPT_TIMER] = "VMX-preemption timer",
	[VMX_EXIT_INVVPID] = "INVVPID", [VMX_EXIT_WBINVD] = "WBINVD", [VMX_EXIT_XSETBV] = "XSETBV",
	[VMX_EXIT_APIC_WRITE] = "APIC write", [VMX_EXIT_RDRAND] = "RDRAND",
	[VMX_EXIT_INVPCID] = "INVPCID", [VMX_EXIT_VMFUNC] = "VMFUNC", [VMX_EXIT_ENCLS] = "ENCLS",
	[VMX_EXIT_RDSEED] = "RDSEED", [VMX_EXIT_PML_FULL] = "page-modification log full",
	[VMX_EXIT_XSAVES] = "XSAVES", [VMX_EXIT_XRSTORS] = "XRSTORS",
};

const char *vmx_exit_name(unsigned basic)
{
	return basic < VMX_EXIT_NR && exit_names[basic] ? exit_names[basic] : "unknown";
}

static const char *const insn_errors[] = {
	[1] = "VMCALL executed in VMX root operation",
	[2] = "VMCLEAR with invalid physical address",
	[3] = "VMCLEAR with VMXON pointer",
	[4] = "VMLAUNCH with non-clear VMCS",
	[5] = "VMRESUME with non-launched VMCS",
	[6] = "VMRESUME after VMXOFF",
	[7] = "VM entry with invalid control field(s)",
	[8] = "VM entry with invalid host-state field(s)",
	[9] = "VMPTRLD with invalid physical address",
	[10] = "VMPTRLD with VMXON pointer",
	[11] = "VMPTRLD with incorrect VMCS revision identifier",
	[12] = "VMREAD/VMWRITE from/to unsupported VMCS component",
	[13] = "VMWRITE to read-only VMCS component",
	[15] = "VMXON executed in VMX root operation",
	[16] = "VM entry with invalid executive-VMCS pointer",
	[17] = "VM entry with non-launched executive VMCS",
	[18] = "VM entry with executive-VMCS pointer not VMXON pointer",
	[19] = "VMCALL with non-clear VMCS",
	[20] = "VMCALL with invalid VM-exit control fields",
	[22] = "VMCALL with incorrect MSEG revision identifier",
	[23] = "VMXOFF under dual-monitor treatment of SMIs and SMM",
	[24] = "VMCALL with invalid SMM-monitor features",
	[25] = "VM entry with invalid VM-execution control fields in executive VMCS",
	[26] = "VM entry with events blocked by MOV SS",
	[28] = "invalid operand to INVEPT/INVVPID",
};

const char *vmx_insn_error_name(unsigned err)
{
	return err < ARRAY_SIZE(insn_errors) && insn_errors[err] ? insn_errors[err] : "unknown error";
}
