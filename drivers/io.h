/* SPDX-License-Identifier: BSD-2-Clause */
/* Port I/O, MSRs, CPUID, control registers: the privileged primitives. */
#ifndef DRIVERS_IO_H
#define DRIVERS_IO_H

#include "drivers/base.h"
#include "drivers/x86.h"

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
	/* 64-bit outputs: RDTSC's 32-bit writes clear the upper halves of
	 * RAX and RDX, so the compiler adds no zero-extension. */
	uint64_t lo, hi;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return (hi << 32) | lo;
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
static inline void irq_enable(void) { __asm__ volatile("sti" ::: "memory"); }
/* Interrupts off; returns RFLAGS from before, for irq_restore(). */
static inline uint64_t irq_save(void)
{
	uint64_t flags;

	__asm__ volatile("pushfq; pop %0; cli" : "=r"(flags) : : "memory");
	return flags;
}
static inline void irq_restore(uint64_t flags)
{
	if (flags & RFLAGS_IF)
		irq_enable();
}
static inline void halt(void) { __asm__ volatile("hlt" ::: "memory"); }
/* With interrupts off: sleep until one arrives, take it, turn them off
 * again. One asm, so nothing slips between STI's shadow and HLT. */
static inline void wait_for_interrupt(void) { __asm__ volatile("sti; hlt; cli" ::: "memory"); }

static inline uint8_t mmio_read8(uint64_t addr) { return *(volatile uint8_t *)addr; }
static inline void mmio_write8(uint64_t addr, uint8_t v) { *(volatile uint8_t *)addr = v; }
static inline uint32_t mmio_read32(uint64_t addr) { return *(volatile uint32_t *)addr; }
static inline void mmio_write32(uint64_t addr, uint32_t v) { *(volatile uint32_t *)addr = v; }
static inline uint64_t mmio_read64(uint64_t addr) { return *(volatile uint64_t *)addr; }
static inline void mmio_write64(uint64_t addr, uint64_t v) { *(volatile uint64_t *)addr = v; }

#endif
