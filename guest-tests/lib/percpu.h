/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Per-CPU data, indexed by (initial) APIC ID.
 *
 * Each CPU owns one naturally aligned CPU area: its struct percpu at the
 * bottom and its stack above it, growing down towards it. this_cpu() is
 * then RSP rounded down: no MSR (GS base writes may be VM exits, which
 * would disturb tests that count exits), no CPUID, and it works in
 * exception handlers, which run on the interrupted stack.
 */
#ifndef GUEST_PERCPU_H
#define GUEST_PERCPU_H

#include "lib/bits.h"

/* No u suffix: percpu.c hands both to the assembler (boot.asm). */
#define MAX_CPUS                16        /* APIC IDs 0..15 */
#define CPU_AREA_SIZE           65536     /* struct percpu, then the stack */

struct percpu {
	uint32_t apic_id;               /* initial APIC ID, CPUID.1:EBX[31:24] */
	bool online;                    /* counted in cpus_online(): waits for work */
	bool x2apic;                    /* cached IA32_APIC_BASE.EXTD, kept by apic.c */
	volatile uint32_t ex_vector;    /* last exception fixed up by the extable */
	volatile uint64_t ex_error_code; /* ... its error code (0 if none) */
	volatile uint64_t ex_rflags;    /* ... and the RFLAGS image it pushed */
};

/* One CPU's area: data below, stack above. */
struct cpu_area {
	struct percpu pc;
	uint8_t stack[CPU_AREA_SIZE - sizeof(struct percpu)];
} __aligned(CPU_AREA_SIZE);

_Static_assert(sizeof(struct cpu_area) == CPU_AREA_SIZE, "CPU area is one aligned block");

extern struct cpu_area cpu_areas[MAX_CPUS];

static inline struct percpu *this_cpu(void)
{
	uint64_t sp;

	asm("mov %%rsp, %0" : "=r"(sp));
	return (struct percpu *)(sp & ~(uint64_t)(CPU_AREA_SIZE - 1));
}

static inline struct percpu *percpu(unsigned cpu)
{
	return &cpu_areas[cpu].pc;
}

/* This CPU's APIC ID: the index into cpu_areas. */
static inline unsigned smp_id(void)
{
	return this_cpu()->apic_id;
}

/* Number of CPUs online (1 until smp_init() brings APs up). */
unsigned cpus_online(void);

/* The BSP, first thing in C, on its own stack: percpu_bind() and
 * percpu_set_online(). */
void percpu_init(unsigned apic_id);
/* First thing in C on every CPU: this stack's area belongs to apic_id. */
void percpu_bind(unsigned apic_id);
/* Counts this CPU in or out of cpus_online(); repeats do nothing, so an
 * AP restarted by INIT/SIPI is counted once. */
void percpu_set_online(bool online);
/* For the CPU that takes another one down with INIT. */
void percpu_set_offline(unsigned cpu);

#endif
