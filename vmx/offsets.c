// SPDX-License-Identifier: BSD-2-Clause
/* Struct offsets for NASM (see Makefile: offsets.inc). Never linked into
 * the image: it is compiled to assembly and the markers are extracted. */
#include "vmx/vmx_exit.h"
#include "vmx/regs.h"
#include "vmx/vmcs.h"

#define OFFSET(name, type, member) \
	__asm__ volatile("\n->" #name " %0" : : "i"(__builtin_offsetof(type, member)))
#define VALUE(name, v) \
	__asm__ volatile("\n->" #name " %0" : : "i"(v))
#define GPR(name, idx) OFFSET(REGS_##name, struct guest_regs, gpr[idx])

void offsets(void);
void offsets(void)
{
	GPR(RAX, GPR_RAX); GPR(RCX, GPR_RCX); GPR(RDX, GPR_RDX); GPR(RBX, GPR_RBX);
	GPR(RBP, GPR_RBP); GPR(RSI, GPR_RSI); GPR(RDI, GPR_RDI);
	GPR(R8, GPR_R8); GPR(R9, GPR_R9); GPR(R10, GPR_R10); GPR(R11, GPR_R11);
	GPR(R12, GPR_R12); GPR(R13, GPR_R13); GPR(R14, GPR_R14); GPR(R15, GPR_R15);
	OFFSET(REGS_CR2, struct guest_regs, cr2);
	OFFSET(REGS_HOST_RSP, struct guest_regs, host_rsp);
	OFFSET(REGS_LAUNCHED, struct guest_regs, launched);
	OFFSET(REGS_SPIN_UNTIL, struct guest_regs, spin_until);
	OFFSET(REGS_SPIN_ARRIVAL, struct guest_regs, spin_arrival);
	OFFSET(REGS_SPIN_OBSERVE, struct guest_regs, spin_observe);
	OFFSET(REGS_PREEMPT_AT, struct guest_regs, preempt_at);
	OFFSET(REGS_PREEMPT_LOAD, struct guest_regs, preempt_load);
	OFFSET(REGS_PREEMPT_RATE, struct guest_regs, preempt_rate);
	OFFSET(REGS_EXIT_TSC, struct guest_regs, exit_tsc);
	OFFSET(REGS_CPUID_EXIT, struct guest_regs, cpuid_exit);
	OFFSET(REGS_WRMSR_EXIT, struct guest_regs, wrmsr_exit);
	OFFSET(REGS_APIC_WRITE_EXIT, struct guest_regs, apic_write_exit);
	VALUE(VMCS_FIELD_HOST_RSP, VMCS_HOST_RSP);
	VALUE(VMCS_FIELD_PREEMPT_TIMER_VALUE, VMCS_PREEMPT_TIMER_VALUE);
	VALUE(PREEMPT_COUNT_MAX, 0xffffffffu);  /* the count field's 32 bits */
	VALUE(VMCS_FIELD_EXIT_REASON, VMCS_EXIT_REASON);
	VALUE(EXIT_REASON_CPUID, VMX_EXIT_CPUID);
	VALUE(EXIT_REASON_WRMSR, VMX_EXIT_WRMSR);
	VALUE(EXIT_REASON_APIC_WRITE, VMX_EXIT_APIC_WRITE);
	VALUE(INSN_KIND_VMREAD, VMX_INSN_VMREAD);
	VALUE(RUN_HANDLED, VMX_RUN_HANDLED);
	VALUE(RUN_FAIL_INVALID, VMX_RUN_FAIL_INVALID);
	VALUE(RUN_FAIL_VALID, VMX_RUN_FAIL_VALID);
}
