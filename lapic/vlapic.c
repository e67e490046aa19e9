// SPDX-License-Identifier: BSD-2-Clause
/* Lifecycle, IA32_APIC_BASE and the MSR interface of the virtual APIC. */
#include "drivers/apic_dest.h"
#include "drivers/string.h"
#include "lapic/vlapic.h"
#include "lapic/vlapic_impl.h"

#define APIC_BASE_RESERVED(maxphy) (BITS(7, 0) | BIT(9) | ~(BIT(maxphy) - 1))
#define DEFAULT_MAXPHYADDR 36u          /* until vmm/ says what the guest's CPUID reports */

static enum vlapic_mode mode_of(uint64_t base_msr)
{
	if (!(base_msr & APIC_BASE_EN))
		return VLAPIC_DISABLED;
	return (base_msr & APIC_BASE_EXTD) ? VLAPIC_X2APIC : VLAPIC_XAPIC;
}

/* The ID register as the initial APIC ID sets it: in bits 31:24, or
 * whole in x2APIC mode (the x2APIC ID). */
static uint32_t id_reg(const struct vlapic *l, enum vlapic_mode mode)
{
	return mode == VLAPIC_X2APIC ? l->id : l->id << 24;
}

void vlapic_init(struct vlapic *l, uint32_t id, struct vlapic_group *group,
		 const struct vlapic_ops *ops, void *owner, uint32_t clock_div,
		 uint64_t min_period_tsc)
{
	memset(l, 0, sizeof(*l));
	l->id = id;
	l->group = group;
	l->ops = ops;
	l->owner = owner;
	l->clock_div = clock_div ? clock_div : 1;
	l->maxphyaddr = DEFAULT_MAXPHYADDR;
	l->timer.min_period = min_period_tsc;
	vlapic_reset(l, false);
}

/* SDM "Local APIC State After Power-Up/Reset": everything 0 except the
 * DFR (all ones), the LVTs (masked) and the SVR (0xff, disabled). */
void vlapic_reset(struct vlapic *l, bool keep_base)
{
	/* INIT preserves the (software-writable) xAPIC ID register (SDM
	 * "x2APIC State Transitions": "The state of the local APIC ID
	 * register is preserved"). */
	uint32_t kept_id = vlapic_get(l, LAPIC_ID);
	bool keep_id = keep_base && vlapic_mode(l) == VLAPIC_XAPIC;
	enum vlapic_mode mode;

	memset(l->page, 0, sizeof(l->page));
	if (!keep_base)
		l->base_msr = LAPIC_DEFAULT_BASE | APIC_BASE_EN | (l->id == 0 ? APIC_BASE_BSP : 0);
	mode = vlapic_mode(l);
	vlapic_set(l, LAPIC_ID, keep_id ? kept_id : id_reg(l, mode));
	vlapic_set(l, LAPIC_VERSION, LAPIC_VERSION_ID |
		   FIELD_PREP(LAPIC_VERSION_MAXLVT, LAPIC_NR_LVT - 1));
	vlapic_set(l, LAPIC_DFR, 0xffffffffu);
	vlapic_set(l, LAPIC_SVR, 0xff);
	vlapic_mask_lvts(l);
	if (mode == VLAPIC_X2APIC)
		vlapic_set(l, LAPIC_LDR, apic_x2apic_ldr(l->id));
	__atomic_store_n(&l->esr_pending, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&l->nmi_pending, 0, __ATOMIC_RELAXED);
	l->cached_timer_mode = LAPIC_TIMER_ONESHOT;
	l->cached_divide = vtimer_tdcr_divide(0);
	vlapic_timer_reset(l);
	/* SVR is 0xff now: software-disabled (ops contract). With APIC
	 * virtualization vmm/ then stops the CPU from taking interrupts for
	 * this APIC itself (virtual-interrupt delivery, posted interrupts). */
	if (l->group)
		vlapic_group_changed(l->group);
	if (l->ops && l->ops->mode_changed)
		l->ops->mode_changed(l);
}

uint64_t vlapic_base_addr(const struct vlapic *l)
{
	return l->base_msr & ~(uint64_t)(PAGE_SIZE - 1) & (BIT(l->maxphyaddr) - 1);
}

static void enter_x2apic(struct vlapic *l)
{
	vlapic_set(l, LAPIC_ID, id_reg(l, VLAPIC_X2APIC));
	vlapic_set(l, LAPIC_LDR, apic_x2apic_ldr(l->id));
	vlapic_set(l, LAPIC_DFR, 0);
	vlapic_set(l, LAPIC_ICR_HI, 0);
}

/* SDM "x2APIC State Transitions": disabled -> xAPIC -> x2APIC -> disabled;
 * EN=0 with EXTD=1 and x2APIC -> xAPIC are invalid and raise #GP. */
static int set_base(struct vlapic *l, uint64_t val)
{
	enum vlapic_mode from = vlapic_mode(l), to;

	if (val & APIC_BASE_RESERVED(l->maxphyaddr))
		return -1;
	if ((val & APIC_BASE_EXTD) && !(val & APIC_BASE_EN))
		return -1;
	to = mode_of(val);
	if ((from == VLAPIC_DISABLED && to == VLAPIC_X2APIC) ||
	    (from == VLAPIC_X2APIC && to == VLAPIC_XAPIC))
		return -1;
	/* BSP is read-only. */
	l->base_msr = (val & ~(uint64_t)APIC_BASE_BSP) | (l->base_msr & APIC_BASE_BSP);
	if (to == VLAPIC_DISABLED && from != VLAPIC_DISABLED)
		vlapic_reset(l, true);          /* disabling resets the APIC */
	else if (to == VLAPIC_X2APIC && from == VLAPIC_XAPIC)
		enter_x2apic(l);
	else if (to == VLAPIC_XAPIC && from == VLAPIC_DISABLED)
		vlapic_set(l, LAPIC_ID, id_reg(l, VLAPIC_XAPIC));
	if (to != from && to != VLAPIC_DISABLED)        /* vlapic_reset() did it then */
		vlapic_group_changed(l->group);
	if (l->ops->mode_changed)
		l->ops->mode_changed(l);
	return 0;
}

/* SDM "TSC-Deadline Mode": reads return 0 and writes are ignored unless
 * LVTT selects TSC-deadline mode; writing 0 disarms. */
static bool tsc_deadline_on(const struct vlapic *l)
{
	return l->cached_timer_mode == LAPIC_TIMER_TSC_DEADLINE &&
	       vlapic_mode(l) != VLAPIC_DISABLED;
}

void vlapic_write_tsc_deadline_at(struct vlapic *l, uint64_t val, uint64_t now)
{
	if (!tsc_deadline_on(l))
		return;
	/* A deadline that already passed has fired before this write. */
	if (l->timer.armed)
		vlapic_timer_expired(l, now);
	l->tsc_deadline = val;
	vtimer_start_deadline(&l->timer, val, now);
	l->ops->timer_update(l);
}

int vlapic_rdmsr(struct vlapic *l, uint32_t msr, uint64_t *val)
{
	if (msr == MSR_IA32_APIC_BASE) {
		*val = l->base_msr;
		return 0;
	}
	if (msr == MSR_IA32_TSC_DEADLINE) {
		*val = tsc_deadline_on(l) ? l->tsc_deadline : 0;
		return 0;
	}
	if (msr >= LAPIC_MSR_BASE && msr <= LAPIC_MSR_LAST)
		return vlapic_x2apic_access(l, msr, val, false);
	return -1;
}

int vlapic_wrmsr(struct vlapic *l, uint32_t msr, uint64_t val)
{
	if (msr == MSR_IA32_APIC_BASE)
		return set_base(l, val);
	if (msr == MSR_IA32_TSC_DEADLINE) {
		vlapic_write_tsc_deadline_at(l, val, l->ops->now(l));
		return 0;
	}
	if (msr >= LAPIC_MSR_BASE && msr <= LAPIC_MSR_LAST)
		return vlapic_x2apic_access(l, msr, &val, true);
	return -1;
}
