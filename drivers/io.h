/* SPDX-License-Identifier: BSD-2-Clause */
/* Port I/O, MSRs, CPUID, control registers: the privileged primitives. */
#ifndef DRIVERS_IO_H
#define DRIVERS_IO_H

#include "drivers/base.h"

static inline void outb(uint16_t port, uint8_t v) { __asm__ volatile("outb %0, %1" : : "a"(v), "Nd"(port)); }
static inline void outw(uint16_t port, uint16_t v) { __asm__ volatile("outw %0, %1" : : "a"(v), "Nd"(port)); }
static inline void outl(uint16_t port, uint32_t v) { __asm__ volatile("outl %0, %1" : : "a"(v), "Nd"(port)); }
static inline uint8_t inb(uint16_t port) { uint8_t v; __asm__ volatile("inb %1, %0" : "=a"(v) : "Nd"(port)); return v; }
static inline uint16_t inw(uint16_t port) { uint16_t v; __asm__ volatile("inw %1, %0" : "=a"(v) : "Nd"(port)); return v; }
static inline uint32_t inl(uint16_t port) { uint32_t v; __asm__ volatile("inl %1, %0" : "=a"(v) : "Nd"(port)); return v; }

static inline uint64_t rdmsr(uint32_t msr)
{
	uint32_t lo, hi;
	__asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr));
	return ((uint64_t)hi << 32) | lo;
}

static inline void wrmsr(uint32_t msr, uint64_t v)
{
	__asm__ volatile("wrmsr" : : "c"(msr), "a"((uint32_t)v), "d"((uint32_t)(v >> 32)) : "memory");
}

struct cpuid_regs {
	uint32_t eax, ebx, ecx, edx;
};

static inline struct cpuid_regs cpuid(uint32_t leaf, uint32_t sub)
{
	struct cpuid_regs r;
	__asm__ volatile("cpuid" : "=a"(r.eax), "=b"(r.ebx), "=c"(r.ecx), "=d"(r.edx) : "a"(leaf), "c"(sub));
	return r;
}

static inline uint64_t rdtsc(void)
{
	uint32_t lo, hi;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

/* rdtsc ordered after all earlier loads/stores (SDM: LFENCE before RDTSC). */
static inline uint64_t rdtsc_ordered(void)
{
	__asm__ volatile("lfence" ::: "memory");
	return rdtsc();
}

#define DEFINE_CR(n) \
	static inline uint64_t read_cr##n(void) { uint64_t v; __asm__ volatile("mov %%cr" #n ", %0" : "=r"(v)); return v; } \
	static inline void write_cr##n(uint64_t v) { __asm__ volatile("mov %0, %%cr" #n : : "r"(v) : "memory"); }
DEFINE_CR(0)
DEFINE_CR(2)
DEFINE_CR(3)
DEFINE_CR(4)
#undef DEFINE_CR

static inline void cpu_relax(void) { __asm__ volatile("pause" ::: "memory"); }
static inline void irq_disable(void) { __asm__ volatile("cli" ::: "memory"); }
static inline void halt(void) { __asm__ volatile("hlt" ::: "memory"); }
/* With interrupts off: sleep until one arrives, take it, turn them off
 * again. One asm, so nothing slips between STI's shadow and HLT. */
static inline void wait_for_interrupt(void) { __asm__ volatile("sti; hlt; cli" ::: "memory"); }

static inline uint32_t mmio_read32(uint64_t addr) { return *(volatile uint32_t *)addr; }
static inline void mmio_write32(uint64_t addr, uint32_t v) { *(volatile uint32_t *)addr = v; }
static inline uint64_t mmio_read64(uint64_t addr) { return *(volatile uint64_t *)addr; }
static inline void mmio_write64(uint64_t addr, uint64_t v) { *(volatile uint64_t *)addr = v; }

/* Architectural MSRs used by more than one layer. IA32_APIC_BASE and
 * IA32_TSC_DEADLINE are in drivers/apic.h, free of inline assembly, which
 * lapic/ (host-compiled for its unit tests) shares. */
enum msr {
	MSR_IA32_TSC             = 0x010,
	MSR_IA32_FEATURE_CONTROL = 0x03a,
	MSR_IA32_TSC_ADJUST      = 0x03b,
	MSR_IA32_SPEC_CTRL       = 0x048,
	MSR_IA32_BIOS_SIGN_ID    = 0x08b,
	MSR_IA32_MTRRCAP         = 0x0fe,
	MSR_IA32_SYSENTER_CS     = 0x174,
	MSR_IA32_SYSENTER_ESP    = 0x175,
	MSR_IA32_SYSENTER_EIP    = 0x176,
	MSR_IA32_MISC_ENABLE     = 0x1a0,
	MSR_IA32_PAT             = 0x277,
	MSR_IA32_MTRR_DEF_TYPE   = 0x2ff,
	MSR_X2APIC_FIRST         = 0x800,
	MSR_X2APIC_LAST          = 0x8ff,
	MSR_EFER                 = 0xc0000080,
	MSR_STAR                 = 0xc0000081,
	MSR_LSTAR                = 0xc0000082,
	MSR_CSTAR                = 0xc0000083,
	MSR_SFMASK               = 0xc0000084,
	MSR_FS_BASE              = 0xc0000100,
	MSR_GS_BASE              = 0xc0000101,
	MSR_KERNEL_GS_BASE       = 0xc0000102,
	MSR_TSC_AUX              = 0xc0000103,
};

#define EFER_SCE  BIT(0)
#define EFER_LME  BIT(8)
#define EFER_LMA  BIT(10)
#define EFER_NXE  BIT(11)

#define CR0_PE    BIT(0)
#define CR0_MP    BIT(1)
#define CR0_EM    BIT(2)
#define CR0_TS    BIT(3)
#define CR0_ET    BIT(4)
#define CR0_NE    BIT(5)
#define CR0_WP    BIT(16)
#define CR0_AM    BIT(18)
#define CR0_NW    BIT(29)
#define CR0_CD    BIT(30)
#define CR0_PG    BIT(31)

#define CR4_VME        BIT(0)
#define CR4_PSE        BIT(4)
#define CR4_PAE        BIT(5)
#define CR4_PGE        BIT(7)
#define CR4_OSFXSR     BIT(9)
#define CR4_OSXMMEXCPT BIT(10)
#define CR4_VMXE       BIT(13)
#define CR4_FSGSBASE   BIT(16)
#define CR4_PCIDE      BIT(17)
#define CR4_OSXSAVE    BIT(18)

#define RFLAGS_IF  BIT(9)
#define RFLAGS_VM  BIT(17)

#endif
