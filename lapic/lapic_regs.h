/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Local APIC registers (Intel SDM Vol. 3A, "Advanced Programmable
 * Interrupt Controller (APIC)"; revision pinned in docs/references.md).
 * Offsets are xAPIC byte offsets; the x2APIC MSR is 0x800 + (off >> 4).
 */
#ifndef LAPIC_LAPIC_REGS_H
#define LAPIC_LAPIC_REGS_H

#include "drivers/apic.h"       /* IA32_APIC_BASE: the MSR and its bits */
#include "drivers/base.h"

enum lapic_reg {
	LAPIC_ID        = 0x020,
	LAPIC_VERSION   = 0x030,
	LAPIC_TPR       = 0x080,
	LAPIC_APR       = 0x090,
	LAPIC_PPR       = 0x0a0,
	LAPIC_EOI       = 0x0b0,
	LAPIC_RRD       = 0x0c0,
	LAPIC_LDR       = 0x0d0,
	LAPIC_DFR       = 0x0e0,
	LAPIC_SVR       = 0x0f0,
	LAPIC_ISR       = 0x100,    /* 8 registers, 0x100-0x170 */
	LAPIC_TMR       = 0x180,
	LAPIC_IRR       = 0x200,
	LAPIC_ESR       = 0x280,
	LAPIC_LVT_CMCI  = 0x2f0,
	LAPIC_ICR_LO    = 0x300,
	LAPIC_ICR_HI    = 0x310,
	LAPIC_LVT_TIMER = 0x320,
	LAPIC_LVT_THERMAL = 0x330,
	LAPIC_LVT_PERF  = 0x340,
	LAPIC_LVT_LINT0 = 0x350,
	LAPIC_LVT_LINT1 = 0x360,
	LAPIC_LVT_ERROR = 0x370,
	LAPIC_TMICT     = 0x380,
	LAPIC_TMCCT     = 0x390,
	LAPIC_TDCR      = 0x3e0,
	LAPIC_SELF_IPI  = 0x3f0,    /* x2APIC only */
	LAPIC_PAGE_SIZE = 0x1000,
};

#define LAPIC_MSR_BASE          MSR_X2APIC_FIRST        /* drivers/x86.h */
#define LAPIC_MSR_LAST          MSR_X2APIC_LAST
#define LAPIC_MSR(off)          (LAPIC_MSR_BASE + ((off) >> 4))
#define LAPIC_OFF(msr)          (((msr) - LAPIC_MSR_BASE) << 4)
#define LAPIC_DEFAULT_BASE      0xfee00000ull

/* IA32_APIC_BASE (bits BSP, EXTD, EN: drivers/apic.h) */
#define APIC_BASE_ADDR_SHIFT    12

/* Version (SDM "Local APIC Version Register"): 0x14, the integrated
 * APIC of Intel's parts (Bochs's xAPIC and KVM report it too); max LVT =
 * the 7 LVTs implemented (timer, thermal, perfmon, LINT0, LINT1, error,
 * CMCI) - 1. The CMCI LVT is a register that never fires: the guest's
 * IA32_MCG_CAP[10] reads 0 (KVM drops the entry and reports 5 then).
 * Bit 24 (EOI-broadcast suppression) stays clear: guests have no I/O
 * APIC to broadcast to, so SVR bit 12 would change nothing, and it is
 * reserved ("Spurious-Interrupt Vector Register"). */
#define LAPIC_VERSION_ID        0x14u
#define LAPIC_VERSION_MAXLVT    BITS(23, 16)
#define LAPIC_VERSION_EOI_SUPP  BIT(24)
#define LAPIC_NR_LVT            7u

#define LAPIC_TPR_MASK          0xffu
#define LAPIC_DFR_MODEL         BITS(31, 28)
#define   LAPIC_DFR_FLAT        0xfu
#define   LAPIC_DFR_CLUSTER     0x0u
#define LAPIC_DFR_RESERVED_ONES 0x0fffffffu
#define LAPIC_LDR_XAPIC_ID      BITS(31, 24)

#define LAPIC_SVR_VECTOR        BITS(7, 0)
#define LAPIC_SVR_ENABLE        BIT(8)
#define LAPIC_SVR_FOCUS         BIT(9)
#define LAPIC_SVR_EOI_SUPP      BIT(12)     /* reserved here: version bit 24 is 0 */

/* ESR */
#define LAPIC_ESR_SEND_CS       BIT(0)
#define LAPIC_ESR_RECV_CS       BIT(1)
#define LAPIC_ESR_SEND_ACCEPT   BIT(2)
#define LAPIC_ESR_RECV_ACCEPT   BIT(3)
#define LAPIC_ESR_REDIR_IPI     BIT(4)
#define LAPIC_ESR_SEND_ILLEGAL  BIT(5)
#define LAPIC_ESR_RECV_ILLEGAL  BIT(6)
#define LAPIC_ESR_ILLEGAL_REG   BIT(7)

/* LVT fields */
#define LAPIC_LVT_VECTOR        BITS(7, 0)
#define LAPIC_LVT_DELIVERY      BITS(10, 8)
#define LAPIC_LVT_STATUS        BIT(12)     /* delivery status, read-only */
#define LAPIC_LVT_POLARITY      BIT(13)
#define LAPIC_LVT_REMOTE_IRR    BIT(14)     /* read-only */
#define LAPIC_LVT_TRIGGER       BIT(15)
#define LAPIC_LVT_MASKED        BIT(16)
#define LAPIC_LVT_TIMER_MODE    BITS(18, 17)
#define   LAPIC_TIMER_ONESHOT   0u
#define   LAPIC_TIMER_PERIODIC  1u
#define   LAPIC_TIMER_TSC_DEADLINE 2u
#define   LAPIC_TIMER_RESERVED  3u

/* Delivery modes (ICR and LVT) */
#define LAPIC_DM_FIXED          0u
#define LAPIC_DM_LOWEST         1u
#define LAPIC_DM_SMI            2u
#define LAPIC_DM_NMI            4u
#define LAPIC_DM_INIT           5u
#define LAPIC_DM_SIPI           6u
#define LAPIC_DM_EXTINT         7u

/* ICR */
#define LAPIC_ICR_VECTOR        BITS(7, 0)
#define LAPIC_ICR_DELIVERY      BITS(10, 8)
#define LAPIC_ICR_LOGICAL       BIT(11)
#define LAPIC_ICR_STATUS        BIT(12)
#define LAPIC_ICR_LEVEL_ASSERT  BIT(14)
#define LAPIC_ICR_TRIGGER_LEVEL BIT(15)
#define LAPIC_ICR_SHORTHAND     BITS(19, 18)
#define   LAPIC_SH_NONE         0u
#define   LAPIC_SH_SELF         1u
#define   LAPIC_SH_ALL          2u
#define   LAPIC_SH_OTHERS       3u
#define LAPIC_ICR_DEST_XAPIC    BITS(63, 56)
#define LAPIC_ICR_DEST_X2APIC   BITS(63, 32)

/* TDCR: divide value encoded in bits 3, 1, 0 */
#define LAPIC_TDCR_MASK         (BIT(3) | BITS(1, 0))

#endif
