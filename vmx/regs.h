/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Guest general-purpose registers, saved and restored by vmx/entry.asm
 * around every VM entry (RSP and RIP live in the VMCS). The assembly
 * reaches the fields through offsets generated from this struct
 * (vmx/offsets.c -> offsets.inc), never typed by hand.
 */
#ifndef VMX_REGS_H
#define VMX_REGS_H

#include "drivers/base.h"

/* Indices follow the x86 register encoding (ModRM/REX), so instruction
 * emulation can index gpr[] directly. */
enum gpr {
	GPR_RAX, GPR_RCX, GPR_RDX, GPR_RBX, GPR_RSP, GPR_RBP, GPR_RSI, GPR_RDI,
	GPR_R8, GPR_R9, GPR_R10, GPR_R11, GPR_R12, GPR_R13, GPR_R14, GPR_R15,
	GPR_NR,
};

struct guest_regs {
	uint64_t gpr[GPR_NR];   /* gpr[GPR_RSP] is unused: RSP is in the VMCS */
	uint64_t cr2;           /* not in the VMCS: switched by the stub */
	uint64_t host_rsp;      /* cached VMCS HOST_RSP, rewritten when it changes */
	uint64_t spin_until;    /* host TSC to wait for right before entry, 0: none
				   (timer advance: the last thing before VMRESUME) */
	uint64_t spin_arrival;  /* host TSC when the stub reached that wait */
	/* With spin_until: called by the stub as it reaches the wait, before
	 * waiting (then cleared), so that what it does costs one expiry no
	 * more than another: the wait absorbs it. NULL: none. */
	void (*spin_observe)(struct guest_regs *regs);
	/* With spin_until and preempt_load: after the wait, the stub loads
	 * the VMX-preemption-timer count for host TSC deadline preempt_at
	 * again, at rate preempt_rate (IA32_VMX_MISC[4:0]): the timer counts
	 * in non-root mode only, and the wait is root-mode time. preempt_load
	 * is the CPU's having the timer, the same on every entry, so the path
	 * from the wait to the guest (entry_tsc) is too. */
	uint64_t preempt_at;
	uint8_t preempt_load;
	uint8_t preempt_rate;
	uint64_t exit_tsc;      /* host TSC as the stub took the last VM exit
				   vmx_run() returned for (cr2 likewise) */
	uint8_t launched;       /* VMRESUME instead of VMLAUNCH */
	/* Called by the stub on a CPUID exit (cpuid_exit), a WRMSR exit
	 * (wrmsr_exit) and an APIC-write exit (apic_write_exit), with the
	 * guest's GPRs saved here (and but for CPUID exit_tsc; cr2 is saved
	 * only after a hook that returned 0). The hooks find rax, rcx, (but
	 * for CPUID) rdx and the C ABI's scratch registers only: exit_cpuid()
	 * reads rax and rcx and writes rax-rdx, exit_wrmsr() reads rax, rcx
	 * and rdx, exit_apic_write() none, none of them ends the guest (no
	 * dump), and the stub saves the callee-saved ones when the hook
	 * returns 0. The hook
	 * handles the exit; nonzero: enter the guest again at once (nothing
	 * else is pending, spin_until is 0), 0: vmx_run() returns
	 * VMX_RUN_HANDLED. NULL: it returns the exit like any other. */
	int (*cpuid_exit)(struct guest_regs *regs);
	int (*wrmsr_exit)(struct guest_regs *regs);
	int (*apic_write_exit)(struct guest_regs *regs);
};

/* What vmx_run() returns besides an exit reason. */
enum vmx_run_result {
	VMX_RUN_FAIL_INVALID = -1,      /* VMfailInvalid: no current VMCS */
	VMX_RUN_FAIL_VALID = -2,        /* VMfailValid: see VMCS_INSN_ERROR */
	VMX_RUN_HANDLED = -3,           /* an exit a hook (cpuid_exit ...) handled */
};

/* Enters the guest whose VMCS is current, and again after each exit
 * cpuid_exit or wrmsr_exit resumes. Returns the full exit reason (32 bits, bit 31 the
 * entry failure; SDM Vol. 3C, "Basic VM-Exit Information") of the exit it
 * comes back for, or a negative vmx_run_result: the stub reads the reason
 * anyway to find CPUID and WRMSR, and the caller then needs no VMREAD. */
long vmx_run(struct guest_regs *regs);

#endif
