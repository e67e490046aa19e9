/* SPDX-License-Identifier: BSD-2-Clause */
/* VMX instructions as inline functions. */
#ifndef VMX_INSN_H
#define VMX_INSN_H

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
 * instruction is followed by one JBE into a cold call that names the
 * instruction, the field (or type) and the VM-instruction error - the hot
 * path keeps a not-taken branch and nothing else. The layer above vmx/
 * (vmm/vmx_cpu.c) defines what happens then: a panic - except while the
 * calling CPU sets up a new VMCS, when the first failure is noted, the
 * instruction counts as not done (VMREAD gives 0) and the set-up ends
 * that guest naming the field.
 */
__attribute__((cold, noinline)) void vmx_insn_failed(const char *insn, uint64_t operand);

static inline uint64_t vmread(uint64_t field)
{
	uint64_t v;

	__asm__ goto("vmread %1, %0; jbe %l[fail]" : "=r"(v) : "r"(field) : "cc" : fail);
	return v;
fail:
	vmx_insn_failed("VMREAD", field);
	return 0;
}

static inline void vmwrite(uint64_t field, uint64_t v)
{
	__asm__ goto("vmwrite %1, %0; jbe %l[fail]" : : "r"(field), "r"(v) : "cc", "memory"
		     : fail);
	return;
fail:
	vmx_insn_failed("VMWRITE", field);
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

	__asm__ goto("invept %0, %1; jbe %l[fail]" : : "m"(d), "r"((uint64_t)type)
		     : "cc", "memory" : fail);
	return;
fail:
	vmx_insn_failed("INVEPT", type);
}

static inline void invvpid(enum invvpid_type type, uint16_t vpid)
{
	struct { uint64_t vpid, addr; } d = { vpid, 0 };

	__asm__ goto("invvpid %0, %1; jbe %l[fail]" : : "m"(d), "r"((uint64_t)type)
		     : "cc", "memory" : fail);
	return;
fail:
	vmx_insn_failed("INVVPID", type);
}

#endif
