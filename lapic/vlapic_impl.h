/* SPDX-License-Identifier: BSD-2-Clause */
/* Internal interfaces between the lapic/ files (not for vmm/). */
#ifndef LAPIC_VLAPIC_IMPL_H
#define LAPIC_VLAPIC_IMPL_H

#include "lapic/vlapic.h"

/* Side-effect helpers, called after the register was stored. */
void vlapic_id_written(struct vlapic *l, uint32_t old, uint32_t val);
void vlapic_tpr_written(struct vlapic *l, uint32_t old, uint32_t val);
void vlapic_eoi_written(struct vlapic *l, uint32_t old, uint32_t val);
void vlapic_dfr_written(struct vlapic *l, uint32_t old, uint32_t val);
void vlapic_svr_written(struct vlapic *l, uint32_t old, uint32_t val);
void vlapic_esr_written(struct vlapic *l, uint32_t old, uint32_t val);
void vlapic_lvt_written(struct vlapic *l, uint32_t old, uint32_t val);
void vlapic_lvtt_written(struct vlapic *l, uint32_t old, uint32_t val);
void vlapic_icr_written(struct vlapic *l, uint32_t old, uint32_t val);
void vlapic_tmict_written(struct vlapic *l, uint32_t old, uint32_t val);
void vlapic_tdcr_written(struct vlapic *l, uint32_t old, uint32_t val);
void vlapic_self_ipi_written(struct vlapic *l, uint32_t old, uint32_t val);

/* The bits an x2APIC ICR write may set; any other is reserved and raises
 * #GP (SDM "Reserved Bit Checking"). ICR is 64 bits: vector, delivery
 * mode, destination mode, level, trigger, shorthand and the 32-bit
 * destination; its delivery-status bit does not exist. */
#define X2APIC_ICR_OK (LAPIC_ICR_VECTOR | LAPIC_ICR_DELIVERY | LAPIC_ICR_LOGICAL | \
		       LAPIC_ICR_LEVEL_ASSERT | LAPIC_ICR_TRIGGER_LEVEL | LAPIC_ICR_SHORTHAND | \
		       LAPIC_ICR_DEST_X2APIC)

/* x2APIC MSR access (mode already checked by the caller or here). */
int vlapic_x2apic_access(struct vlapic *l, uint32_t msr, uint64_t *val, bool write);
/* Vectors 0-15 are illegal for fixed interrupts (SDM "Valid Interrupt
 * Vectors"): not sent, not accepted, an error in the ESR instead. */
static inline bool vlapic_illegal_vector(uint32_t vec)
{
	return vec < 16;
}
/* Records errors in the ESR (and raises the error LVT). */
void vlapic_error(struct vlapic *l, uint32_t esr_bits);

/* The word of a 256-bit register (IRR, ISR, TMR) that holds vec, and
 * vec's bit in it. */
#define VLAPIC_VEC_BIT(vec)     (1u << ((vec) & 31))
static inline uint32_t *vlapic_vec_reg(struct vlapic *l, uint32_t base, int vec)
{
	return (uint32_t *)(l->page + base + ((uint32_t)vec >> 5 << 4));
}

/* vlapic_accept() of a fixed or lowest-priority interrupt. Inline, the
 * usual case first: icr_fast() delivers every IPI between vCPUs through
 * it, and with posted interrupts the notification is its last step. */
static inline __attribute__((always_inline)) void vlapic_accept_fixed(struct vlapic *l,
									uint8_t vec, bool level)
{
	/* A software-disabled APIC takes no fixed interrupts. */
	if (unlikely(!vlapic_sw_enabled(l)))
		return;
	if (unlikely(vlapic_illegal_vector(vec))) {
		vlapic_error(l, LAPIC_ESR_RECV_ILLEGAL);
		return;
	}
	if (unlikely(level)) {
		__atomic_fetch_or(vlapic_vec_reg(l, LAPIC_TMR, vec), VLAPIC_VEC_BIT(vec),
				  __ATOMIC_RELAXED);
	} else {
		__atomic_fetch_and(vlapic_vec_reg(l, LAPIC_TMR, vec), ~VLAPIC_VEC_BIT(vec),
				   __ATOMIC_RELAXED);
		if (l->ops->post && l->ops->post(l, vec))
			return;
	}
	__atomic_fetch_or(vlapic_vec_reg(l, LAPIC_IRR, vec), VLAPIC_VEC_BIT(vec), __ATOMIC_RELEASE);
	l->ops->notify(l);
}
/* Stores PPR as TPR and ISR make it, and returns it. */
uint32_t vlapic_update_ppr(struct vlapic *l);
/* Sets the mask bit of every LVT entry. */
void vlapic_mask_lvts(struct vlapic *l);
/* Delivers the interrupt an LVT entry describes (unless masked). */
void vlapic_lvt_deliver(struct vlapic *l, uint32_t lvt_off);
/* Timer state after a mode change, reset or divide change. */
void vlapic_timer_reset(struct vlapic *l);

#endif
