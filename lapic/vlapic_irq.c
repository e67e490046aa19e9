// SPDX-License-Identifier: BSD-2-Clause
/*
 * IRR, ISR, TMR, PPR and EOI (SDM "Interrupt, Task, and Processor
 * Priority", "Interrupt Acceptance for Fixed Interrupts", "Signaling
 * Interrupt Servicing Completion"), LVT delivery and the error register.
 * IRR and the pending errors may be set by other CPUs (IPIs), so their
 * bits change atomically; everything else belongs to the vCPU's own CPU.
 */
#include "lapic/vlapic.h"
#include "lapic/vlapic_impl.h"

static int highest_in(const struct vlapic *l, uint32_t base)
{
	for (int w = 7; w >= 0; w--) {
		uint32_t v = vlapic_get(l, base + (uint32_t)w * 16);

		if (v)
			return w * 32 + 31 - __builtin_clz(v);
	}
	return -1;
}

int vlapic_highest_irr(const struct vlapic *l) { return highest_in(l, LAPIC_IRR); }
int vlapic_highest_isr(const struct vlapic *l) { return highest_in(l, LAPIC_ISR); }

uint32_t vlapic_ppr(const struct vlapic *l)
{
	uint32_t tpr = vlapic_get(l, LAPIC_TPR) & 0xff;
	int isr = vlapic_highest_isr(l);
	uint32_t isrv = isr < 0 ? 0 : (uint32_t)isr;

	/* SDM: PPR = TPR if TPR[7:4] >= ISRV[7:4], else ISRV[7:4] << 4. */
	return (tpr & 0xf0) >= (isrv & 0xf0) ? tpr : isrv & 0xf0;
}

uint32_t vlapic_update_ppr(struct vlapic *l)
{
	uint32_t ppr = vlapic_ppr(l);

	vlapic_set(l, LAPIC_PPR, ppr);
	return ppr;
}

/* Is vector `vec` in a priority class above PPR's? */
static bool above_ppr(int vec, uint32_t ppr)
{
	return ((uint32_t)vec & 0xf0) > (ppr & 0xf0);
}

int vlapic_pending_vector(const struct vlapic *l)
{
	int irr = vlapic_highest_irr(l);

	/* PPR (an ISR scan) only when IRR holds something: this runs before
	 * every VM entry. */
	if (irr < 0 || !above_ppr(irr, vlapic_ppr(l)))
		return -1;
	return irr;
}

/* TPR or ISR changed: PPR follows, and an interrupt it now lets through
 * must be noticed. */
static void priority_changed(struct vlapic *l)
{
	uint32_t ppr = vlapic_update_ppr(l);
	int irr = vlapic_highest_irr(l);

	if (irr >= 0 && above_ppr(irr, ppr))
		l->ops->notify(l);
}

void vlapic_ack(struct vlapic *l, int vec)
{
	__atomic_fetch_and(vlapic_vec_reg(l, LAPIC_IRR, vec), ~VLAPIC_VEC_BIT(vec), __ATOMIC_ACQ_REL);
	*vlapic_vec_reg(l, LAPIC_ISR, vec) |= VLAPIC_VEC_BIT(vec);
	vlapic_update_ppr(l);
}

void vlapic_eoi(struct vlapic *l)
{
	int vec = vlapic_highest_isr(l);

	/* An EOI with nothing in service is ignored (SDM). A level-triggered
	 * vector would be broadcast to I/O APICs, of which guests have none. */
	if (vec < 0)
		return;
	*vlapic_vec_reg(l, LAPIC_ISR, vec) &= ~VLAPIC_VEC_BIT(vec);
	priority_changed(l);
}

/* An NMI arrives. The CPU holds at most one being delivered and one
 * latched behind it (SDM Vol. 3A, "NMI Handling": "while an NMI
 * interrupt handler is executing, the processor blocks delivery of
 * subsequent NMIs until the next execution of the IRET instruction"; one
 * more is held pending, never more): a flood of NMI IPIs never counts up.
 * Whether the guest blocks NMIs right now only vmm/ knows (the VMCS), so
 * it trims the count to one before entry then (vlapic_nmi_limit()). */
static void nmi_latch(struct vlapic *l)
{
	uint32_t n = __atomic_load_n(&l->nmi_pending, __ATOMIC_RELAXED);

	while (n < VLAPIC_NMI_MAX &&
	       !__atomic_compare_exchange_n(&l->nmi_pending, &n, n + 1, false,
					    __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		;
}

void vlapic_accept(struct vlapic *l, uint32_t dm, uint8_t vec, bool level)
{
	switch (dm) {
	case LAPIC_DM_FIXED:
	case LAPIC_DM_LOWEST:
		vlapic_accept_fixed(l, vec, level);
		return;
	case LAPIC_DM_NMI:
		nmi_latch(l);
		break;
	case LAPIC_DM_INIT:
		WRITE_ONCE(l->init_pending, true);
		break;
	case LAPIC_DM_SIPI:
		WRITE_ONCE(l->sipi_vector, vec);
		__atomic_store_n(&l->sipi_pending, true, __ATOMIC_RELEASE);
		break;
	default:                /* SMI, ExtINT: nothing to deliver them to */
		return;
	}
	l->ops->notify(l);
}

bool vlapic_take_nmi(struct vlapic *l)
{
	uint32_t n = __atomic_load_n(&l->nmi_pending, __ATOMIC_ACQUIRE);

	while (n && !__atomic_compare_exchange_n(&l->nmi_pending, &n, n - 1, false,
						 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		;
	return n != 0;
}

void vlapic_nmi_limit(struct vlapic *l, uint32_t max)
{
	uint32_t n = __atomic_load_n(&l->nmi_pending, __ATOMIC_ACQUIRE);

	while (n > max && !__atomic_compare_exchange_n(&l->nmi_pending, &n, max, false,
						       __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		;
}

void vlapic_lvt_deliver(struct vlapic *l, uint32_t lvt_off)
{
	uint32_t lvt = vlapic_get(l, lvt_off);
	uint32_t dm = (uint32_t)FIELD_GET(LAPIC_LVT_DELIVERY, lvt);

	if (lvt & LAPIC_LVT_MASKED)
		return;
	if (lvt_off == LAPIC_LVT_TIMER || lvt_off == LAPIC_LVT_ERROR)
		dm = LAPIC_DM_FIXED;    /* these LVTs have no delivery mode field */
	vlapic_accept(l, dm, (uint8_t)lvt, lvt & LAPIC_LVT_TRIGGER && lvt_off != LAPIC_LVT_TIMER);
}

void vlapic_error(struct vlapic *l, uint32_t esr_bits)
{
	/* Atomic: an IPI sender on another CPU (receive errors) and this
	 * vCPU (send and register errors, the ESR write) update it at once;
	 * a plain read-modify-write would lose one side's bits (Xen's
	 * vlapic_error: test_and_set_bit on pending_esr, xchg on the write). */
	uint32_t before = __atomic_fetch_or(&l->esr_pending, esr_bits, __ATOMIC_RELAXED);
	bool fresh = (before & esr_bits) != esr_bits;

	/* Raise the error LVT once per new error; an illegal vector in the
	 * error LVT itself must not loop back here forever. */
	if (fresh && !(esr_bits == LAPIC_ESR_RECV_ILLEGAL &&
		       vlapic_illegal_vector((uint8_t)vlapic_get(l, LAPIC_LVT_ERROR))))
		vlapic_lvt_deliver(l, LAPIC_LVT_ERROR);
}

/* --- side effects of register writes --------------------------------- */

void vlapic_tpr_changed(struct vlapic *l)
{
	priority_changed(l);
}

void vlapic_tpr_written(struct vlapic *l, uint32_t old, uint32_t val)
{
	vlapic_tpr_changed(l);
}

void vlapic_eoi_written(struct vlapic *l, uint32_t old, uint32_t val)
{
	vlapic_eoi(l);
}

void vlapic_dfr_written(struct vlapic *l, uint32_t old, uint32_t val)
{
	/* Bits 27:0 are reserved and read as ones. */
	vlapic_set(l, LAPIC_DFR, vlapic_get(l, LAPIC_DFR) | LAPIC_DFR_RESERVED_ONES);
}

void vlapic_esr_written(struct vlapic *l, uint32_t old, uint32_t val)
{
	/* Write-before-read: a write latches the errors collected since the
	 * last write, and starts collecting anew. */
	vlapic_set(l, LAPIC_ESR, __atomic_exchange_n(&l->esr_pending, 0, __ATOMIC_RELAXED));
}

void vlapic_mask_lvts(struct vlapic *l)
{
	static const uint32_t lvts[] = {
		LAPIC_LVT_CMCI, LAPIC_LVT_TIMER, LAPIC_LVT_THERMAL, LAPIC_LVT_PERF,
		LAPIC_LVT_LINT0, LAPIC_LVT_LINT1, LAPIC_LVT_ERROR,
	};
	_Static_assert(ARRAY_SIZE(lvts) == LAPIC_NR_LVT, "the LVTs the version register reports");

	for (unsigned i = 0; i < ARRAY_SIZE(lvts); i++)
		vlapic_set(l, lvts[i], vlapic_get(l, lvts[i]) | LAPIC_LVT_MASKED);
}

void vlapic_svr_written(struct vlapic *l, uint32_t old, uint32_t val)
{
	/* Software disable masks every LVT, and they stay masked while the
	 * APIC is disabled (vlapic_lvt_written enforces that). */
	if (!(val & LAPIC_SVR_ENABLE))
		vlapic_mask_lvts(l);
	/* ops contract: software-enable changes are reported. `old` is not
	 * reliable on the APIC-write path, so report every SVR write. */
	if (l->ops->mode_changed)
		l->ops->mode_changed(l);
}

/* Which LVT was just written is found by the caller's store: the helpers
 * share one rule, so they look at every LVT (seven loads). */
void vlapic_lvt_written(struct vlapic *l, uint32_t old, uint32_t val)
{
	if (!vlapic_sw_enabled(l))
		vlapic_mask_lvts(l);
}
