/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * CPU instructions and registers a test needs: CPUID, MSRs, TSC, control
 * registers, interrupt flag. Everything is `asm volatile` with a memory
 * clobber where ordering against surrounding code matters (CPUID, MSRs,
 * TSC): tests count exits and time instructions, so the compiler must not
 * move or merge them.
 */
#ifndef GUEST_PROCESSOR_H
#define GUEST_PROCESSOR_H

#include "lib/bits.h"

/* Architectural MSRs (Intel SDM Vol. 4, "Architectural MSRs"). */
enum msr_index {
	MSR_IA32_TSC            = 0x010,
	MSR_IA32_APIC_BASE      = 0x01b,
	MSR_IA32_FEATURE_CONTROL = 0x03a,
	MSR_IA32_TSC_ADJUST     = 0x03b,
	MSR_MISC_ENABLE         = 0x1a0,
	MSR_IA32_TSC_DEADLINE   = 0x6e0,
	MSR_X2APIC_BASE         = 0x800,
	MSR_EFER                = 0xc0000080,
	MSR_STAR                = 0xc0000081,
	MSR_LSTAR               = 0xc0000082,
	MSR_CSTAR               = 0xc0000083,
	MSR_SFMASK              = 0xc0000084,
	MSR_FS_BASE             = 0xc0000100,
	MSR_GS_BASE             = 0xc0000101,
	MSR_KERNEL_GS_BASE      = 0xc0000102,
	MSR_TSC_AUX             = 0xc0000103,
};
#define APIC_BASE_BSP           BIT(8)
#define APIC_BASE_EXTD          BIT(10)          /* x2APIC mode */
#define APIC_BASE_EN            BIT(11)
#define APIC_BASE_ADDR          BITS(51, 12)

#define EFER_LME                BIT(8)
#define EFER_NXE                BIT(11)

#define X86_CR0_PE              BIT(0)
#define X86_CR0_MP              BIT(1)
#define X86_CR0_EM              BIT(2)
#define X86_CR0_TS              BIT(3)
#define X86_CR0_NE              BIT(5)
#define X86_CR0_WP              BIT(16)
#define X86_CR0_NW              BIT(29)
#define X86_CR0_CD              BIT(30)
#define X86_CR0_PG              BIT(31)
#define X86_CR4_PAE             BIT(5)
#define X86_CR4_OSFXSR          BIT(9)
#define X86_CR4_OSXMMEXCPT      BIT(10)
#define X86_CR4_VMXE            BIT(13)
#define X86_CR4_OSXSAVE         BIT(18)

#define X86_EFLAGS_TF           BIT(8)
#define X86_EFLAGS_IF           BIT(9)
#define X86_EFLAGS_RF           BIT(16)         /* resume: no instruction breakpoint */

#define DR6_INIT                0xffff0ff0ul    /* after reset */
#define DR7_INIT                0x400ul
#define DR6_BS                  BIT(14)         /* single-step trap */

/* XCR0 state components (SDM Vol. 1, "Enabling the XSAVE Feature Set"). */
#define XCR0_X87                BIT(0)
#define XCR0_SSE                BIT(1)
#define XCR0_AVX                BIT(2)
#define XCR0_AVX512             (BIT(5) | BIT(6) | BIT(7))

/* CPUID feature bits used by the runtime and tests. */
#define CPUID_1_ECX_VMX         BIT(5)
#define CPUID_1_ECX_X2APIC      BIT(21)
#define CPUID_1_ECX_TSC_DEADLINE BIT(24)
#define CPUID_1_ECX_XSAVE       BIT(26)
#define CPUID_1_ECX_OSXSAVE     BIT(27)
#define CPUID_1_ECX_AVX         BIT(28)
#define CPUID_1_ECX_HYPERVISOR  BIT(31)
#define CPUID_1_EDX_APIC        BIT(9)
#define CPUID_7_EBX_TSC_ADJUST  BIT(1)
#define CPUID_80000001_EDX_RDTSCP BIT(27)
#define CPUID_HV_BASE           0x40000000u  /* hypervisor vendor leaf */

struct cpuid {
	uint32_t a, b, c, d;
};

static inline struct cpuid cpuid_indexed(uint32_t leaf, uint32_t subleaf)
{
	struct cpuid r;

	asm volatile("cpuid"
		     : "=a"(r.a), "=b"(r.b), "=c"(r.c), "=d"(r.d)
		     : "a"(leaf), "c"(subleaf) : "memory");
	return r;
}

static inline struct cpuid cpuid(uint32_t leaf)
{
	return cpuid_indexed(leaf, 0);
}

static inline uint64_t rdmsr(uint32_t msr)
{
	uint32_t lo, hi;

	asm volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr) : "memory");
	return lo | (uint64_t)hi << 32;
}

static inline void wrmsr(uint32_t msr, uint64_t v)
{
	asm volatile("wrmsr" : : "c"(msr), "a"((uint32_t)v), "d"((uint32_t)(v >> 32))
		     : "memory");
}

static inline uint64_t rdtsc(void)
{
	uint32_t lo, hi;

	asm volatile("rdtsc" : "=a"(lo), "=d"(hi) : : "memory");
	return lo | (uint64_t)hi << 32;
}

#define DEFINE_CR(n)								\
static inline uint64_t read_cr##n(void)						\
{										\
	uint64_t v;								\
										\
	asm volatile("mov %%cr" #n ", %0" : "=r"(v) : : "memory");		\
	return v;								\
}										\
static inline void write_cr##n(uint64_t v)					\
{										\
	asm volatile("mov %0, %%cr" #n : : "r"(v) : "memory");			\
}
DEFINE_CR(0)
DEFINE_CR(2)
DEFINE_CR(3)
DEFINE_CR(4)
DEFINE_CR(8)
#undef DEFINE_CR

#define DEFINE_DR(n)								\
static inline uint64_t read_dr##n(void)						\
{										\
	uint64_t v;								\
										\
	asm volatile("mov %%dr" #n ", %0" : "=r"(v) : : "memory");		\
	return v;								\
}										\
static inline void write_dr##n(uint64_t v)					\
{										\
	asm volatile("mov %0, %%dr" #n : : "r"(v) : "memory");			\
}
DEFINE_DR(0)
DEFINE_DR(1)
DEFINE_DR(2)
DEFINE_DR(3)
DEFINE_DR(6)
DEFINE_DR(7)
#undef DEFINE_DR

/* XGETBV/XSETBV of XCR `xcr` (needs CR4.OSXSAVE; XSETBV at CPL 0). */
static inline uint64_t xgetbv(uint32_t xcr)
{
	uint32_t lo, hi;

	asm volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(xcr) : "memory");
	return lo | (uint64_t)hi << 32;
}

static inline void xsetbv(uint32_t xcr, uint64_t v)
{
	asm volatile("xsetbv" : : "c"(xcr), "a"((uint32_t)v), "d"((uint32_t)(v >> 32)) : "memory");
}

static inline uint64_t read_rflags(void)
{
	uint64_t f;

	asm volatile("pushfq; popq %0" : "=r"(f) : : "memory");
	return f;
}

static inline void cli(void)
{
	asm volatile("cli" : : : "memory");
}

static inline void sti(void)
{
	asm volatile("sti" : : : "memory");
}

static inline void hlt(void)
{
	asm volatile("hlt" : : : "memory");
}

/* STI's one-instruction interrupt shadow covers the HLT: no wakeup lost. */
static inline void safe_halt(void)
{
	asm volatile("sti; hlt" : : : "memory");
}

static inline void pause(void)
{
	asm volatile("pause" : : : "memory");
}

static inline void cpu_relax(void)
{
	pause();
}

#endif
