// SPDX-License-Identifier: BSD-2-Clause
/*
 * Register access: one write path for both interfaces (STYLE.md rule 6):
 * look the register up in the table, keep only its writable bits, store,
 * then run its side-effect helper. Reads come from the page except for
 * the registers whose value is derived (PPR, TMCCT).
 */
#include "lapic/vlapic.h"
#include "lapic/vlapic_impl.h"

enum reg_flags {
	R_XAPIC  = BIT(0),      /* exists in xAPIC mode */
	R_X2APIC = BIT(1),      /* exists in x2APIC mode */
	R_READ   = BIT(2),
	R_WRITE  = BIT(3),
	R_X2_RO  = BIT(4),      /* read-only in x2APIC mode */
};

#define R_BOTH   (R_XAPIC | R_X2APIC)
#define R_RW     (R_READ | R_WRITE)

struct reg_desc {
	uint8_t flags;
	uint32_t wmask;                         /* writable bits */
	void (*written)(struct vlapic *l, uint32_t old, uint32_t val);
};

#define LVT_COMMON (LAPIC_LVT_VECTOR | LAPIC_LVT_MASKED)
#define LVT_DM     (LVT_COMMON | LAPIC_LVT_DELIVERY)
#define LVT_LINT   (LVT_DM | LAPIC_LVT_POLARITY | LAPIC_LVT_TRIGGER)
#define LVT_TIMER  (LVT_COMMON | LAPIC_LVT_TIMER_MODE)
#define IDX(off)   ((off) >> 4)

static const struct reg_desc regs[64] = {
	[IDX(LAPIC_ID)]          = { R_BOTH | R_RW | R_X2_RO, 0xff000000u, vlapic_id_written },
	[IDX(LAPIC_VERSION)]     = { R_BOTH | R_READ, 0, NULL },
	[IDX(LAPIC_TPR)]         = { R_BOTH | R_RW, LAPIC_TPR_MASK, vlapic_tpr_written },
	[IDX(LAPIC_APR)]         = { R_XAPIC | R_READ, 0, NULL },
	[IDX(LAPIC_PPR)]         = { R_BOTH | R_READ, 0, NULL },
	[IDX(LAPIC_EOI)]         = { R_BOTH | R_WRITE, 0, vlapic_eoi_written },
	[IDX(LAPIC_RRD)]         = { R_XAPIC | R_READ, 0, NULL },
	[IDX(LAPIC_LDR)]         = { R_BOTH | R_RW | R_X2_RO, LAPIC_LDR_XAPIC_ID, NULL },
	[IDX(LAPIC_DFR)]         = { R_XAPIC | R_RW, LAPIC_DFR_MODEL, vlapic_dfr_written },
	[IDX(LAPIC_SVR)]         = { R_BOTH | R_RW, LAPIC_SVR_VECTOR | LAPIC_SVR_ENABLE,
				     vlapic_svr_written },
	[IDX(LAPIC_ISR) + 0]     = { R_BOTH | R_READ, 0, NULL },
	[IDX(LAPIC_ISR) + 1]     = { R_BOTH | R_READ, 0, NULL },
	[IDX(LAPIC_ISR) + 2]     = { R_BOTH | R_READ, 0, NULL },
	[IDX(LAPIC_ISR) + 3]     = { R_BOTH | R_READ, 0, NULL },
	[IDX(LAPIC_ISR) + 4]     = { R_BOTH | R_READ, 0, NULL },
	[IDX(LAPIC_ISR) + 5]     = { R_BOTH | R_READ, 0, NULL },
	[IDX(LAPIC_ISR) + 6]     = { R_BOTH | R_READ, 0, NULL },
	[IDX(LAPIC_ISR) + 7]     = { R_BOTH | R_READ, 0, NULL },
	[IDX(LAPIC_TMR) + 0]     = { R_BOTH | R_READ, 0, NULL },
	[IDX(LAPIC_TMR) + 1]     = { R_BOTH | R_READ, 0, NULL },
	[IDX(LAPIC_TMR) + 2]     = { R_BOTH | R_READ, 0, NULL },
	[IDX(LAPIC_TMR) + 3]     = { R_BOTH | R_READ, 0, NULL },
	[IDX(LAPIC_TMR) + 4]     = { R_BOTH | R_READ, 0, NULL },
	[IDX(LAPIC_TMR) + 5]     = { R_BOTH | R_READ, 0, NULL },
	[IDX(LAPIC_TMR) + 6]     = { R_BOTH | R_READ, 0, NULL },
	[IDX(LAPIC_TMR) + 7]     = { R_BOTH | R_READ, 0, NULL },
	[IDX(LAPIC_IRR) + 0]     = { R_BOTH | R_READ, 0, NULL },
	[IDX(LAPIC_IRR) + 1]     = { R_BOTH | R_READ, 0, NULL },
	[IDX(LAPIC_IRR) + 2]     = { R_BOTH | R_READ, 0, NULL },
	[IDX(LAPIC_IRR) + 3]     = { R_BOTH | R_READ, 0, NULL },
	[IDX(LAPIC_IRR) + 4]     = { R_BOTH | R_READ, 0, NULL },
	[IDX(LAPIC_IRR) + 5]     = { R_BOTH | R_READ, 0, NULL },
	[IDX(LAPIC_IRR) + 6]     = { R_BOTH | R_READ, 0, NULL },
	[IDX(LAPIC_IRR) + 7]     = { R_BOTH | R_READ, 0, NULL },
	[IDX(LAPIC_ESR)]         = { R_BOTH | R_RW, 0, vlapic_esr_written },
	[IDX(LAPIC_LVT_CMCI)]    = { R_BOTH | R_RW, LVT_DM, vlapic_lvt_written },
	[IDX(LAPIC_ICR_LO)]      = { R_BOTH | R_RW, 0xffffffffu & ~(uint32_t)LAPIC_ICR_STATUS,
				     vlapic_icr_written },
	[IDX(LAPIC_ICR_HI)]      = { R_XAPIC | R_RW, 0xff000000u, NULL },
	[IDX(LAPIC_LVT_TIMER)]   = { R_BOTH | R_RW, LVT_TIMER, vlapic_lvtt_written },
	[IDX(LAPIC_LVT_THERMAL)] = { R_BOTH | R_RW, LVT_DM, vlapic_lvt_written },
	[IDX(LAPIC_LVT_PERF)]    = { R_BOTH | R_RW, LVT_DM, vlapic_lvt_written },
	[IDX(LAPIC_LVT_LINT0)]   = { R_BOTH | R_RW, LVT_LINT, vlapic_lvt_written },
	[IDX(LAPIC_LVT_LINT1)]   = { R_BOTH | R_RW, LVT_LINT, vlapic_lvt_written },
	[IDX(LAPIC_LVT_ERROR)]   = { R_BOTH | R_RW, LVT_COMMON, vlapic_lvt_written },
	[IDX(LAPIC_TMICT)]       = { R_BOTH | R_RW, 0xffffffffu, vlapic_tmict_written },
	[IDX(LAPIC_TMCCT)]       = { R_BOTH | R_READ, 0, NULL },
	[IDX(LAPIC_TDCR)]        = { R_BOTH | R_RW, LAPIC_TDCR_MASK, vlapic_tdcr_written },
	[IDX(LAPIC_SELF_IPI)]    = { R_X2APIC | R_WRITE, 0xff, vlapic_self_ipi_written },
};

static const struct reg_desc *lookup(uint32_t off, bool x2apic)
{
	const struct reg_desc *d;

	if (off >= LAPIC_PAGE_SIZE || (off & 0xf))
		return NULL;
	d = off < 0x400 ? &regs[IDX(off)] : NULL;
	if (!d || !(d->flags & (x2apic ? R_X2APIC : R_XAPIC)))
		return NULL;
	return d;
}

bool vlapic_x2apic_reg_exists(uint32_t off)
{
	return lookup(off, true) != NULL;
}

/* The value a read returns; derived registers are computed. */
static uint32_t read_reg(struct vlapic *l, uint32_t off)
{
	switch (off) {
	case LAPIC_PPR:
		vlapic_update_ppr(l);
		break;
	case LAPIC_TMCCT:
		return vtimer_current_count(&l->timer, l->ops->now(l));
	case LAPIC_EOI:
		return 0;
	default:
		break;
	}
	return vlapic_get(l, off);
}

/* Store the writable bits, then the side effects. */
static void write_reg(struct vlapic *l, const struct reg_desc *d, uint32_t off, uint32_t val)
{
	uint32_t old = vlapic_get(l, off);

	vlapic_set(l, off, (old & ~d->wmask) | (val & d->wmask));
	if (d->written)
		d->written(l, old, val);
}

int vlapic_mmio_read(struct vlapic *l, uint32_t off, uint32_t *val)
{
	const struct reg_desc *d = lookup(off & ~3u, false);

	if (!d || !(d->flags & R_READ)) {
		/* Undefined or write-only: reads as 0 (SDM: reserved
		 * register addresses flag an illegal-register error). */
		if (!d)
			vlapic_error(l, LAPIC_ESR_ILLEGAL_REG);
		*val = 0;
		return 0;
	}
	*val = read_reg(l, off & ~3u);
	return 0;
}

int vlapic_mmio_write(struct vlapic *l, uint32_t off, uint32_t val)
{
	const struct reg_desc *d = lookup(off & ~3u, false);

	if (!d) {
		vlapic_error(l, LAPIC_ESR_ILLEGAL_REG);
		return 0;
	}
	if (d->flags & R_WRITE)         /* read-only registers ignore writes */
		write_reg(l, d, off & ~3u, val);
	return 0;
}

static int x2apic_read(struct vlapic *l, uint32_t off, uint64_t *val)
{
	const struct reg_desc *d = lookup(off, true);

	if (!d || !(d->flags & R_READ))
		return -1;
	*val = read_reg(l, off);
	if (off == LAPIC_ICR_LO)        /* one 64-bit register in x2APIC mode */
		*val |= (uint64_t)vlapic_get(l, LAPIC_ICR_HI) << 32;
	return 0;
}

/* Bits a WRMSR may set: the writable ones plus those that are read-only
 * but not reserved (LVT delivery status and remote IRR). Anything else is
 * reserved and raises #GP (SDM "Reserved Bit Checking"); for the ICR see
 * X2APIC_ICR_OK. */
static uint64_t x2apic_allowed(const struct reg_desc *d, uint32_t off)
{
	if (off == LAPIC_ICR_LO)
		return X2APIC_ICR_OK;
	if (off >= LAPIC_LVT_TIMER && off <= LAPIC_LVT_ERROR)
		return d->wmask | LAPIC_LVT_STATUS | LAPIC_LVT_REMOTE_IRR;
	if (off == LAPIC_LVT_CMCI)
		return d->wmask | LAPIC_LVT_STATUS;
	return d->wmask;
}

static int x2apic_write(struct vlapic *l, uint32_t off, uint64_t val)
{
	const struct reg_desc *d = lookup(off, true);

	/* SDM "x2APIC Register Address Space": #GP for registers that do
	 * not exist or are read-only, for nonzero EOI/ESR values and for
	 * reserved bits. */
	if (!d || !(d->flags & R_WRITE) || (d->flags & R_X2_RO))
		return -1;
	if ((off == LAPIC_EOI || off == LAPIC_ESR) && val)
		return -1;
	if (val & ~x2apic_allowed(d, off))
		return -1;
	if (off == LAPIC_ICR_LO)
		vlapic_set(l, LAPIC_ICR_HI, (uint32_t)(val >> 32));
	write_reg(l, d, off, (uint32_t)val);
	return 0;
}

int vlapic_x2apic_access(struct vlapic *l, uint32_t msr, uint64_t *val, bool write)
{
	uint32_t off = LAPIC_OFF(msr);

	if (vlapic_mode(l) != VLAPIC_X2APIC)
		return -1;
	return write ? x2apic_write(l, off, *val) : x2apic_read(l, off, val);
}

void vlapic_apicv_write(struct vlapic *l, uint32_t off)
{
	bool x2 = vlapic_mode(l) == VLAPIC_X2APIC;
	const struct reg_desc *d = lookup(off & ~0xfu, x2);
	uint32_t val = vlapic_get(l, off & ~0xfu);

	/* The CPU stored the whole value: keep only the writable bits (the
	 * read-only bits of writable registers are all 0 in this model) and
	 * run the side effects. The previous value is gone; the helpers rely
	 * on caches (LVTT mode) rather than on `old`. */
	if (!d || !(d->flags & R_WRITE) || (x2 && (d->flags & R_X2_RO)))
		return;
	vlapic_set(l, off & ~0xfu, val & d->wmask);
	if (d->written)
		d->written(l, val & d->wmask, val);
}
