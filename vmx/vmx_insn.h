/* SPDX-License-Identifier: BSD-2-Clause */
/* VMX instructions as inline functions. */
#ifndef VMX_VMX_INSN_H
#define VMX_VMX_INSN_H

#include "drivers/base.h"

/* VMfailInvalid sets CF, VMfailValid sets ZF: "setna" catches both. */
static inline bool vmxon(uint64_t pa)
{
	bool fail;

	__asm__ volatile("vmxon %1; setna %0" : "=q"(fail) : "m"(pa) : "cc", "memory");
	return !fail;
}

static inline bool vmclear(uint64_t pa)
{
	bool fail;

	__asm__ volatile("vmclear %1; setna %0" : "=q"(fail) : "m"(pa) : "cc", "memory");
	return !fail;
}

static inline bool vmptrld(uint64_t pa)
{
	bool fail;

	__asm__ volatile("vmptrld %1; setna %0" : "=q"(fail) : "m"(pa) : "cc", "memory");
	return !fail;
}

/*
 * VMREAD/VMWRITE/INVEPT/INVVPID fail (VMfailInvalid: CF, VMfailValid: ZF;
 * SDM Vol. 3C, "Conventions" of the VMX instruction reference) only when
 * tickvisor is wrong: no current VMCS, a field this CPU does not have or
 * a read-only one, an INVEPT/INVVPID type it does not support. Nothing a
 * guest does leads there, so it is a broken host invariant: the
 * instruction is followed by one JBE into a stub in .text.unlikely that
 * calls vmx_insn_failed() through vmx_insn_fail_thunk (vmx/entry.asm),
 * which keeps every register. To the compiler the instruction is then one
 * asm statement with no call behind it, so the hot path keeps a not-taken
 * branch and nothing else: no register kept alive across a possible call,
 * no spills (an asm goto into a C call cost the CPUID exit ~10
 * instructions of pushes and moves). The stub passes the instruction, the
 * field (or type) and the address after the JBE. The layer above vmx/
 * (vmm/vmx_cpu.c) defines what happens then: a panic - except while the
 * calling CPU sets up a new VMCS, when the first failure is noted, the
 * instruction counts as not done (VMREAD gives 0) and the set-up ends
 * that guest naming the field.
 */
enum vmx_insn_kind { VMX_INSN_VMREAD, VMX_INSN_VMWRITE, VMX_INSN_INVEPT, VMX_INSN_INVVPID };

__attribute__((cold, noinline)) void vmx_insn_failed(enum vmx_insn_kind insn, uint64_t operand,
						     const void *at);

/* After the VMX instruction: JBE to a cold stub that pushes the operand,
 * the kind and the resume address, calls the thunk and resumes ("1:").
 * `fix` runs after the call (a VMREAD zeroes its result there). */
#define VMX_INSN_CHECK(operand, kind, fix)                                      \
	"\n\tjbe 2f\n1:\n\t"                                                    \
	".pushsection .text.unlikely,\"ax\",@progbits\n"                        \
	"2:\tpush " operand "\n\t"                                              \
	"pushq " kind "\n\t"                                                    \
	"push %%rax\n\t"                                                        \
	"lea 1b(%%rip), %%rax\n\t"                                              \
	"xchg %%rax, (%%rsp)\n\t"                                               \
	"call vmx_insn_fail_thunk\n\t"                                          \
	"lea 24(%%rsp), %%rsp\n\t"                                              \
	fix                                                                     \
	"jmp 1b\n\t"                                                            \
	".popsection\n"

static inline uint64_t vmread(uint64_t field)
{
	uint64_t v;

	__asm__ volatile("vmread %[f], %[v]"
			 VMX_INSN_CHECK("%[f]", "%[k]", "xor %k[v], %k[v]\n\t")
			 : [v] "=r"(v) : [f] "r"(field), [k] "i"(VMX_INSN_VMREAD) : "cc");
	return v;
}

static inline void vmwrite(uint64_t field, uint64_t v)
{
	__asm__ volatile("vmwrite %[v], %[f]"
			 VMX_INSN_CHECK("%[f]", "%[k]", "")
			 : : [f] "r"(field), [v] "r"(v), [k] "i"(VMX_INSN_VMWRITE)
			 : "cc", "memory");
}

/* VMREAD that reports failure instead: for the failure path itself. */
static inline bool vmread_checked(uint64_t field, uint64_t *v)
{
	bool fail;

	__asm__ volatile("vmread %2, %0; setna %1" : "=r"(*v), "=q"(fail) : "r"(field) : "cc");
	return !fail;
}

enum invept_type { INVEPT_SINGLE = 1, INVEPT_GLOBAL = 2 };
enum invvpid_type { INVVPID_ADDR = 0, INVVPID_SINGLE = 1, INVVPID_ALL = 2 };

static inline void invept(enum invept_type type, uint64_t eptp)
{
	struct { uint64_t eptp, zero; } d = { eptp, 0 };

	__asm__ volatile("invept %[d], %[t]"
			 VMX_INSN_CHECK("%[t]", "%[k]", "")
			 : : [d] "m"(d), [t] "r"((uint64_t)type), [k] "i"(VMX_INSN_INVEPT)
			 : "cc", "memory");
}

static inline void invvpid(enum invvpid_type type, uint16_t vpid)
{
	struct { uint64_t vpid, addr; } d = { vpid, 0 };

	__asm__ volatile("invvpid %[d], %[t]"
			 VMX_INSN_CHECK("%[t]", "%[k]", "")
			 : : [d] "m"(d), [t] "r"((uint64_t)type), [k] "i"(VMX_INSN_INVVPID)
			 : "cc", "memory");
}

#endif
