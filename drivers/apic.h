/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The host's own local APIC (SDM Vol. 3A, "Advanced Programmable Interrupt
 * Controller"): x2APIC when the CPU has it, else xAPIC MMIO. Used for
 * IPIs between physical CPUs and as a guest-timer fallback. The guest's
 * APIC is a different thing entirely (lapic/).
 */
#ifndef DRIVERS_APIC_H
#define DRIVERS_APIC_H

#include "drivers/base.h"
#include "drivers/io.h"
#include "drivers/x86.h"       /* IA32_APIC_BASE, IA32_TSC_DEADLINE */

enum apic_reg {
	APIC_ID      = 0x020,
	APIC_VERSION = 0x030,
	APIC_TPR     = 0x080,
	APIC_EOI     = 0x0b0,
	APIC_SVR     = 0x0f0,
	APIC_IRR     = 0x200,    /* 8 registers, 0x200-0x270 */
	APIC_ESR     = 0x280,
	APIC_ICR_LO  = 0x300,
	APIC_ICR_HI  = 0x310,
	APIC_LVT_TIMER = 0x320,
	APIC_LVT_THERMAL = 0x330,
	APIC_LVT_PERF  = 0x340,
	APIC_LVT_LINT0 = 0x350,
	APIC_LVT_LINT1 = 0x360,
	APIC_LVT_ERROR = 0x370,
	APIC_TMICT   = 0x380,
	APIC_TMCCT   = 0x390,
	APIC_TDCR    = 0x3e0,
};
#define APIC_BASE_BSP       BIT(8)
#define APIC_BASE_EXTD      BIT(10)
#define APIC_BASE_EN        BIT(11)
#define APIC_BASE_ADDR      BITS(51, 12)
#define APIC_SVR_ENABLE     BIT(8)
#define APIC_LVT_MASKED     BIT(16)
#define APIC_LVT_DELIV_NMI  (4u << 8)
#define APIC_LVT_ACTIVE_LOW BIT(13)     /* LINT0/1 input pin polarity */
#define APIC_LVT_TIMER_TSCDL (2u << 17)
#define APIC_ICR_DELIV_FIXED (0u << 8)
#define APIC_ICR_DELIV_NMI   (4u << 8)
#define APIC_ICR_DELIV_INIT  (5u << 8)
#define APIC_ICR_DELIV_SIPI  (6u << 8)
#define APIC_ICR_LOGICAL     BIT(11)
#define APIC_ICR_PENDING     BIT(12)
#define APIC_ICR_ASSERT      BIT(14)
#define APIC_ICR_LEVEL       BIT(15)
#define APIC_ICR_ALL_BUT_SELF (3u << 18)
#define APIC_ICR_SHORTHAND   (3u << 18)
#define APIC_TDCR_DIV1       0xbu

struct apic_caps {
	bool x2apic;            /* running in x2APIC mode */
	bool tsc_deadline;      /* CPUID.1:ECX[24], unless tsc_deadline_erratum */
	const char *tsc_deadline_erratum;       /* why it is not used, or NULL */
	uint64_t mmio_base;     /* xAPIC only */
};

extern struct apic_caps apic_caps;

/* Enables the calling CPU's APIC (x2APIC if possible), masks every LVT
 * entry and sets the spurious vector. Same mode on every CPU. */
void apic_init_cpu(uint8_t spurious_vector);
uint32_t apic_read(uint32_t reg);
void apic_write(uint32_t reg, uint32_t v);
uint32_t apic_id(void);
void apic_eoi(void);
/* LINT0 or LINT1 (pin) delivers an NMI, edge-triggered as the SDM requires
 * of NMI delivery, active low if asked (the MADT's NMI entries). */
void apic_lint_nmi(unsigned pin, bool active_low);
/* apic_send_ipi() in xAPIC mode (see apic.c). */
void apic_send_ipi_xapic(uint32_t dest_apic_id, uint32_t icr_lo);
/* An x2APIC register write is a WRMSR without WRMSR's serializing: it
 * "may complete before all preceding stores are globally visible" (SDM
 * Vol. 3A, "MSR Access in x2APIC Mode"), which MFENCE then LFENCE before
 * it prevent (LFENCE, as MFENCE orders loads and stores only; the SDM's
 * sequence since 2017, and Linux's weak_wrmsr_fence()). An IPI must not
 * overtake what it announces: a posted-interrupt notification its PIR
 * bits, a kick the request it is for. Bochs orders every store anyway. */
static inline void apic_x2apic_icr_fence(void)
{
	__asm__ volatile("mfence; lfence" ::: "memory");
}
/* ICR: `icr_lo` holds vector, delivery mode, level and shorthand bits
 * (with a shorthand the destination is not written). Safe against
 * interrupts and the NMI handler (see apic.c). x2APIC: one WRMSR, no
 * delivery-status polling; inline, as the exit fast path sends the
 * posted-interrupt notification of every IPI between vCPUs, and the
 * fewer branches before it, the sooner the other CPU has it. */
static inline void apic_send_ipi(uint32_t dest_apic_id, uint32_t icr_lo)
{
	if (likely(apic_caps.x2apic)) {
		apic_x2apic_icr_fence();
		wrmsr(MSR_X2APIC_FIRST + (APIC_ICR_LO >> 4), ((uint64_t)dest_apic_id << 32) | icr_lo);
	} else {
		apic_send_ipi_xapic(dest_apic_id, icr_lo);
	}
}
/* x2APIC mode only: an IPI in logical destination mode, to every CPU
 * whose LDR has the cluster of `ldr` (bits 31:16) and any of its 16 mask
 * bits: up to 16 CPUs by one WRMSR (SDM Vol. 3A, "Logical Destination
 * Mode in x2APIC Mode"). */
static inline void apic_send_ipi_logical(uint32_t ldr, uint32_t icr_lo)
{
	apic_x2apic_icr_fence();
	wrmsr(MSR_X2APIC_FIRST + (APIC_ICR_LO >> 4), ((uint64_t)ldr << 32) | icr_lo | APIC_ICR_LOGICAL);
}
/* An NMI to the CPU with this APIC ID (vector field ignored, SDM). */
void apic_send_nmi(uint32_t dest_apic_id);
/* Timer: TSC-deadline (absolute TSC) or one-shot (count at divide 1). */
void apic_timer_deadline(uint8_t vector, uint64_t tsc);
void apic_timer_oneshot(uint8_t vector, uint32_t count);
void apic_timer_stop(void);
/* Host APIC timer frequency at divide 1, measured against the TSC. */
uint64_t apic_timer_calibrate(uint64_t tsc_hz);

#endif
