/* SPDX-License-Identifier: BSD-2-Clause */
/* HPET (IA-PC HPET specification 1.0a): main counter and comparators. */
#ifndef DRIVERS_HPET_H
#define DRIVERS_HPET_H

#include "drivers/base.h"

#define HPET_DEFAULT_BASE 0xfed00000ull

enum hpet_reg {
	HPET_GCAP_ID   = 0x000,
	HPET_GEN_CONF  = 0x010,
	HPET_GINTR_STA = 0x020,
	HPET_MAIN_CNT  = 0x0f0,
	HPET_TN_CONF   = 0x100,     /* comparator 0; comparator n: HPET_TN(reg, n) */
	HPET_TN_CMP    = 0x108,
	HPET_TN_FSB    = 0x110,
};
/* Comparator n's registers follow comparator 0's at a 0x20-byte stride
 * (IA-PC HPET specification, "Register Overview"). */
#define HPET_TN_STRIDE          0x20u
#define HPET_TN(reg, n)         ((reg) + HPET_TN_STRIDE * (n))
#define HPET_GCAP_REV           BITS(7, 0)
#define HPET_GCAP_NUM_TIM       BITS(12, 8)     /* number of comparators - 1 */
#define HPET_GCAP_COUNT_64      BIT(13)
#define HPET_GCAP_LEG_RT        BIT(15)
#define HPET_GCAP_VENDOR        BITS(31, 16)
#define HPET_GCAP_PERIOD        BITS(63, 32)    /* femtoseconds per tick */
#define HPET_CONF_ENABLE        BIT(0)
#define HPET_CONF_LEG_RT        BIT(1)
#define HPET_TN_INT_LEVEL       BIT(1)
#define HPET_TN_INT_ENB         BIT(2)
#define HPET_TN_PERIODIC        BIT(3)
#define HPET_TN_SIZE_64         BIT(5)
#define HPET_TN_32MODE          BIT(8)
#define HPET_TN_INT_ROUTE       BITS(13, 9)
#define HPET_TN_FSB_EN          BIT(14)
#define HPET_TN_FSB_CAP         BIT(15)
#define HPET_TN_ROUTE_CAP       BITS(63, 32)

/* NUM_TIM_CAP is 5 bits: at most 32 comparators. */
#define HPET_MAX_COMPARATORS    32u

/* Spec: the period is at most 100 ns (10^8 fs) and not zero. */
#define HPET_MAX_PERIOD_FS      100000000ull

struct hpet {
	uint64_t base;
	uint64_t period_fs;
	uint64_t freq_hz;
	uint32_t ncomparators;
	bool counter_64;
	uint16_t vendor;
};

/* Reads and sanity-checks the capabilities at base; false if no HPET. */
bool hpet_probe(struct hpet *h, uint64_t base);
/* Starts the main counter (it is stopped after reset). */
void hpet_enable(const struct hpet *h);
/* The main counter stops (GEN_CONF.ENABLE clear), as a chipset may leave it. */
void hpet_halt(const struct hpet *h);
uint64_t hpet_read_counter(const struct hpet *h);
uint64_t hpet_comparator_caps(const struct hpet *h, unsigned n);
/* Width of comparator n's match, in bits: 64 only when both the main
 * counter (COUNT_SIZE_CAP) and the comparator (Tn_SIZE_CAP) are 64-bit; a
 * 32-bit comparator matches the counter's low 32 bits, which wrap. */
unsigned hpet_comparator_bits(const struct hpet *h, unsigned n);
/* Comparator n interrupts by the MSI (FSB) message addr/data when
 * fsb_addr != 0, else on I/O APIC input `gsi`, edge- or level-triggered
 * (Tn_INT_TYPE_CNF) as that input is wired. Disabled, status cleared. */
void hpet_route(const struct hpet *h, unsigned n, uint32_t fsb_addr, uint32_t fsb_data,
		unsigned gsi, bool level);
/* One-shot interrupt when the counter reaches `when`. */
void hpet_arm(const struct hpet *h, unsigned n, uint64_t when);
void hpet_disarm(const struct hpet *h, unsigned n);
/* A level-triggered comparator's interrupt: whether its status bit in
 * General Interrupt Status was set (false: the input was asserted by
 * something else), cleared so the comparator releases the line (IA-PC
 * HPET 1.0a: "in level-triggered mode, this bit is set ... and
 * software must clear it by writing a 1"). */
bool hpet_ack(const struct hpet *h, unsigned n);

#endif
