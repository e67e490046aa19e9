/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Per-physical-CPU state, reached through GS base (this_cpu()). The VMCS
 * host-state area restores GS base on every VM exit, so this works in
 * the exit path too.
 */
#ifndef VMM_HOST_PERCPU_H
#define VMM_HOST_PERCPU_H

#include "drivers/base.h"
#include "vmm/host/desc.h"
#include "timer/host.h"
#include "vmm/host/options.h"
#include "vmm/host/tsc_sync.h"

#define CPU_STACK_SIZE   (32 * KiB)
#define CPU_IST_SIZE     (8 * KiB)

struct vcpu;

struct pcpu {
	struct pcpu *self;              /* at offset 0: read by this_cpu() */
	uint32_t index;                 /* 0 is the BSP */
	uint32_t apic_id;
	uint64_t stack_top;
	uint64_t ist_top;               /* #DF/#NMI/#MC stack */
	struct gdt gdt;
	struct tss tss;
	struct vcpu *vcpu;              /* the vCPU this CPU runs, or NULL */
	void *vmx;                      /* VMXON region */
	struct timer_cpu timer;         /* host timers this CPU arms */
	uint32_t ready;                 /* AP: 1 up with VMX, 2 failed (smp.c) */
	void (*work)(void *);           /* work handed out by the BSP (smp.c) */
	void *work_arg;
	uint32_t work_done;
	int64_t tsc_adjust_was;         /* IA32_TSC_ADJUST undone at bring-up (smp.c) */
	bool inject_missed;             /* inject= wanted an IA32_TSC_ADJUST it lacks */
	struct tsc_warp warp;           /* this AP's warp test against the BSP (smp.c) */
	bool timer_irq;                 /* its host timer interrupt came at bring-up */
};

_Static_assert(__builtin_offsetof(struct pcpu, self) == 0, "this_cpu() reads gs:0");

static inline struct pcpu *this_cpu(void)
{
	struct pcpu *p;

	__asm__ volatile("mov %%gs:0, %0" : "=r"(p));
	return p;
}

extern struct pcpu *cpus[TV_MAX_CPUS];
extern uint32_t ncpus_online;

/* Sets up descriptor tables and GS base for the calling CPU. */
void cpu_init(struct pcpu *p);
/* Allocates and initialises a pcpu; index 0 is the BSP. */
struct pcpu *cpu_alloc(uint32_t index, uint32_t apic_id);

#endif
