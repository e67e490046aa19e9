/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Local APIC access that follows the CPU's current mode: xAPIC through
 * the MMIO page at 0xFEE00000, x2APIC through MSR 0x800 + (offset >> 4)
 * (Intel SDM Vol. 3A, "Advanced Programmable Interrupt Controller",
 * "x2APIC Register Address Space").
 */
#ifndef GUEST_APIC_H
#define GUEST_APIC_H

#include "lib/bits.h"
#include "lib/processor.h"

#define LAPIC_MMIO_BASE         0xfee00000ull

enum lapic_reg {                 /* byte offset; x2APIC MSR = 0x800 + (off >> 4) */
	LAPIC_ID = 0x020, LAPIC_VERSION = 0x030, LAPIC_TPR = 0x080, LAPIC_APR = 0x090,
	LAPIC_PPR = 0x0a0, LAPIC_EOI = 0x0b0, LAPIC_LDR = 0x0d0, LAPIC_DFR = 0x0e0,
	LAPIC_SVR = 0x0f0, LAPIC_ISR = 0x100, LAPIC_TMR = 0x180, LAPIC_IRR = 0x200,
	LAPIC_ESR = 0x280, LAPIC_LVT_CMCI = 0x2f0, LAPIC_ICR_LO = 0x300,
	LAPIC_ICR_HI = 0x310, LAPIC_LVT_TIMER = 0x320, LAPIC_LVT_THERMAL = 0x330,
	LAPIC_LVT_PERF = 0x340, LAPIC_LVT_LINT0 = 0x350, LAPIC_LVT_LINT1 = 0x360,
	LAPIC_LVT_ERROR = 0x370, LAPIC_TMICT = 0x380, LAPIC_TMCCT = 0x390,
	LAPIC_TDCR = 0x3e0, LAPIC_SELF_IPI = 0x3f0,     /* SELF_IPI: x2APIC only */
};
/* The x2APIC MSR of a register (a byte offset above), and the two written
 * without apic_write(): the 64-bit ICR and SELF IPI (x2APIC only). */
#define X2APIC_MSR(reg)         (MSR_X2APIC_BASE + ((reg) >> 4))
#define MSR_X2APIC_ICR          X2APIC_MSR(LAPIC_ICR_LO)
#define MSR_X2APIC_SELF_IPI     X2APIC_MSR(LAPIC_SELF_IPI)
/* ISR/TMR/IRR are 8 registers of 32 bits, 0x10 apart: bit v of the 256. */
#define LAPIC_VEC_REG(base, v)  ((enum lapic_reg)((base) + ((v) / 32) * 0x10))
#define LAPIC_VEC_BIT(v)        BIT((v) % 32)

#define LAPIC_ID_XAPIC          BITS(31, 24)
#define LAPIC_SVR_VECTOR        BITS(7, 0)
#define LAPIC_SVR_ENABLE        BIT(8)
#define LAPIC_SPURIOUS_VECTOR   0xffu

#define LAPIC_LVT_VECTOR        BITS(7, 0)
#define LAPIC_LVT_DELIVERY      BITS(10, 8)
#define LAPIC_LVT_PENDING       BIT(12)
#define LAPIC_LVT_LEVEL         BIT(15)
#define LAPIC_LVT_MASKED        BIT(16)
#define LAPIC_LVT_TIMER_MODE    BITS(18, 17)
#define   LAPIC_TIMER_ONESHOT       0u
#define   LAPIC_TIMER_PERIODIC      1u
#define   LAPIC_TIMER_TSC_DEADLINE  2u

#define LAPIC_TDCR_DIV1         0xbu
#define LAPIC_TDCR_DIV2         0x0u

#define LAPIC_ICR_VECTOR        BITS(7, 0)
#define LAPIC_ICR_DELIVERY      BITS(10, 8)
#define   LAPIC_DM_FIXED            0u
#define   LAPIC_DM_LOWEST           1u
#define   LAPIC_DM_NMI              4u
#define   LAPIC_DM_INIT             5u
#define   LAPIC_DM_STARTUP          6u
#define LAPIC_ICR_DEST_LOGICAL  BIT(11)
#define LAPIC_ICR_BUSY          BIT(12)         /* xAPIC only */
#define LAPIC_ICR_ASSERT        BIT(14)
#define LAPIC_ICR_LEVEL         BIT(15)
#define LAPIC_ICR_SHORTHAND     BITS(19, 18)
#define   LAPIC_DEST_NONE           0u
#define   LAPIC_DEST_SELF           1u
#define   LAPIC_DEST_ALL            2u
#define   LAPIC_DEST_ALL_BUT_SELF   3u

uint32_t apic_read(enum lapic_reg reg);
void apic_write(enum lapic_reg reg, uint32_t val);
/* Sends an IPI: lo is ICR[31:0], dest the destination APIC ID (xAPIC:
 * ICR[63:56], x2APIC: ICR[63:32]). xAPIC waits for delivery, bounded. */
void apic_icr_write(uint32_t lo, uint32_t dest);
void apic_eoi(void);
/* This CPU's APIC ID in the current mode (xAPIC: 8 bits, x2APIC: 32). */
uint32_t apic_id(void);

/* SVR = enable | spurious vector 0xff, or the vector alone. */
static inline void apic_sw_enable(void)
{
	apic_write(LAPIC_SVR, LAPIC_SVR_ENABLE | LAPIC_SPURIOUS_VECTOR);
}

static inline void apic_sw_disable(void)
{
	apic_write(LAPIC_SVR, LAPIC_SPURIOUS_VECTOR);
}

/* CPUID.1:ECX[21]. */
static inline bool cpu_has_x2apic(void)
{
	return cpuid(1).c & CPUID_1_ECX_X2APIC;
}

/* The logical ID an x2APIC derives from its x2APIC ID (SDM "Deriving
 * Logical x2APIC ID from the Local x2APIC ID"): ID[19:4] << 16 | 1 <<
 * ID[3:0]. */
static inline uint32_t x2apic_ldr(uint32_t id)
{
	return (id >> 4) << 16 | 1u << (id & 0xf);
}

bool apic_is_x2apic(void);
/* false if the CPU has no x2APIC (CPUID.1:ECX[21]). */
bool enable_x2apic(void);
/* Back to a software-enabled xAPIC, through the disabled state that
 * leaving x2APIC mode requires; SVR = enable | spurious vector 0xff. */
void reset_apic(void);

/* Per CPU at boot: learns the mode the loader left. */
void apic_cpu_init(void);

#endif
