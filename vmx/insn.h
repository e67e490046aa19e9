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

static inline uint64_t vmread(uint64_t field)
{
	uint64_t v;

	__asm__ volatile("vmread %1, %0" : "=r"(v) : "r"(field) : "cc");
	return v;
}

static inline void vmwrite(uint64_t field, uint64_t v)
{
	__asm__ volatile("vmwrite %1, %0" : : "r"(field), "r"(v) : "cc", "memory");
}

/* vmwrite that reports failure (set-up paths only). */
enum invept_type { INVEPT_SINGLE = 1, INVEPT_GLOBAL = 2 };
enum invvpid_type { INVVPID_ADDR = 0, INVVPID_SINGLE = 1, INVVPID_ALL = 2 };

static inline void invept(enum invept_type type, uint64_t eptp)
{
	struct { uint64_t eptp, zero; } d = { eptp, 0 };

	__asm__ volatile("invept %0, %1" : : "m"(d), "r"((uint64_t)type) : "cc", "memory");
}

static inline void invvpid(enum invvpid_type type, uint16_t vpid)
{
	struct { uint64_t vpid, addr; } d = { vpid, 0 };

	__asm__ volatile("invvpid %0, %1" : : "m"(d), "r"((uint64_t)type) : "cc", "memory");
}

#endif
