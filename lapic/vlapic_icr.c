// SPDX-License-Identifier: BSD-2-Clause
/*
 * IPIs (SDM "Issuing Interprocessor Interrupts", "Determining IPI
 * Destination", "Logical Destination Mode"). Shorthands are expanded
 * here, per vCPU; nothing reaches the host ICR.
 */
#include "lapic/vlapic.h"
#include "lapic/vlapic_impl.h"

#define XAPIC_BROADCAST   0xffu
#define X2APIC_BROADCAST  0xffffffffu

/* Decodes the value written, once: no later re-read of ICR/ICR2. Inlined
 * into its callers, so each computes only the fields it reads. */
static inline __attribute__((always_inline)) void vlapic_icr_decode(uint64_t icr, bool x2apic, struct lapic_ipi *ipi)
{
	ipi->vector = (uint8_t)FIELD_GET(LAPIC_ICR_VECTOR, icr);
	ipi->dm = (uint8_t)FIELD_GET(LAPIC_ICR_DELIVERY, icr);
	ipi->shorthand = (uint8_t)FIELD_GET(LAPIC_ICR_SHORTHAND, icr);
	ipi->logical = icr & LAPIC_ICR_LOGICAL;
	ipi->level_assert = icr & LAPIC_ICR_LEVEL_ASSERT;
	ipi->trigger_level = icr & LAPIC_ICR_TRIGGER_LEVEL;
	ipi->x2apic = x2apic;
	ipi->dest = (uint32_t)(x2apic ? FIELD_GET(LAPIC_ICR_DEST_X2APIC, icr)
				      : FIELD_GET(LAPIC_ICR_DEST_XAPIC, icr));
}

static inline bool match_physical(const struct vlapic *t, const struct lapic_ipi *ipi)
{
	if (ipi->x2apic)
		return ipi->dest == X2APIC_BROADCAST || ipi->dest == t->id;
	return ipi->dest == XAPIC_BROADCAST || ipi->dest == vlapic_get(t, LAPIC_ID) >> 24;
}

static bool match_logical(const struct vlapic *t, const struct lapic_ipi *ipi)
{
	uint32_t ldr = vlapic_get(t, LAPIC_LDR), dest = ipi->dest;

	if (ipi->x2apic) {
		/* x2APIC cluster: cluster ID in 31:16, one bit per APIC in 15:0. */
		if (dest == X2APIC_BROADCAST)
			return true;
		return (ldr >> 16) == (dest >> 16) && (ldr & dest & 0xffff);
	}
	if (dest == XAPIC_BROADCAST)
		return true;
	ldr >>= 24;
	if (FIELD_GET(LAPIC_DFR_MODEL, vlapic_get(t, LAPIC_DFR)) == LAPIC_DFR_FLAT)
		return ldr & dest;
	/* Cluster model: cluster in bits 7:4, member bitmap in 3:0. */
	return (ldr >> 4) == (dest >> 4) && (ldr & dest & 0xf);
}

/* Does `t` match the IPI's destination (shorthand expanded)? */
static bool vlapic_ipi_matches(const struct vlapic *src, const struct vlapic *t,
			       const struct lapic_ipi *ipi)
{
	if (vlapic_mode(t) == VLAPIC_DISABLED)
		return false;
	switch (ipi->shorthand) {
	case LAPIC_SH_SELF:   return t == src;
	case LAPIC_SH_ALL:    return true;
	case LAPIC_SH_OTHERS: return t != src;
	default: break;
	}
	return ipi->logical ? match_logical(t, ipi) : match_physical(t, ipi);
}

/* Lowest priority: the matching APIC with the lowest TPR (first on ties),
 * among those software-enabled. */
static struct vlapic *lowest_priority(struct vlapic *src, const struct lapic_ipi *ipi)
{
	struct vlapic *best = NULL;

	for (uint32_t i = 0; i < src->group->n; i++) {
		struct vlapic *t = src->group->member[i];

		if (!t || !vlapic_sw_enabled(t) || !vlapic_ipi_matches(src, t, ipi))
			continue;
		if (!best || (vlapic_get(t, LAPIC_TPR) & 0xff) < (vlapic_get(best, LAPIC_TPR) & 0xff))
			best = t;
	}
	return best;
}

/* Sends from src to every matching APIC of its group. IPIs arrive
 * edge-triggered: the ICR trigger-mode bit only qualifies INIT level
 * de-assert and is ignored otherwise (SDM "Interrupt Command Register"),
 * so no IPI sets a TMR bit. */
/* The trace point (log=trace:ipi): the send, then each APIC it reaches,
 * found as vlapic_send_ipi() finds them. Apart, so that the delivery
 * loop, traced or not, pays one branch on src->trace_ipi. */
static __attribute__((noinline, cold)) void vlapic_ipi_trace(struct vlapic *src,
							      const struct lapic_ipi *ipi)
{
	struct vlapic *t;

	src->ops->trace_ipi(src, NULL, ipi);
	if (ipi->dm == LAPIC_DM_LOWEST && ipi->shorthand == LAPIC_SH_NONE) {
		if ((t = lowest_priority(src, ipi)))
			src->ops->trace_ipi(src, t, ipi);
		return;
	}
	for (uint32_t i = 0; i < src->group->n; i++) {
		t = src->group->member[i];
		if (t && vlapic_ipi_matches(src, t, ipi))
			src->ops->trace_ipi(src, t, ipi);
	}
}

static void vlapic_send_ipi(struct vlapic *src, const struct lapic_ipi *ipi)
{
	bool fixed = ipi->dm == LAPIC_DM_FIXED || ipi->dm == LAPIC_DM_LOWEST;

	if (fixed && vlapic_illegal_vector(ipi->vector)) {
		/* Not sent at all (SDM "Error Handling"). */
		vlapic_error(src, LAPIC_ESR_SEND_ILLEGAL);
		return;
	}
	/* INIT level de-assert only synchronizes arbitration IDs: no-op. */
	if (ipi->dm == LAPIC_DM_INIT && ipi->trigger_level && !ipi->level_assert)
		return;
	if (unlikely(src->trace_ipi))
		vlapic_ipi_trace(src, ipi);
	if (ipi->dm == LAPIC_DM_LOWEST && ipi->shorthand == LAPIC_SH_NONE) {
		struct vlapic *t = lowest_priority(src, ipi);

		if (t)
			vlapic_accept(t, LAPIC_DM_FIXED, ipi->vector, false);
		return;
	}
	for (uint32_t i = 0; i < src->group->n; i++) {
		struct vlapic *t = src->group->member[i];

		if (t && vlapic_ipi_matches(src, t, ipi))
			vlapic_accept(t, ipi->dm == LAPIC_DM_LOWEST ? LAPIC_DM_FIXED : ipi->dm,
				      ipi->vector, false);
	}
}

void vlapic_icr_written(struct vlapic *l, uint32_t old, uint32_t val)
{
	struct lapic_ipi ipi;
	bool x2 = vlapic_mode(l) == VLAPIC_X2APIC;
	uint64_t icr = ((uint64_t)vlapic_get(l, LAPIC_ICR_HI) << 32) | val;

	/* Delivery is immediate here: delivery status always reads idle. */
	vlapic_icr_decode(icr, x2, &ipi);
	vlapic_send_ipi(l, &ipi);
}

void vlapic_self_ipi_written(struct vlapic *l, uint32_t old, uint32_t val)
{
	struct lapic_ipi ipi = {
		.vector = (uint8_t)val, .dm = LAPIC_DM_FIXED, .shorthand = LAPIC_SH_SELF,
		.x2apic = true,
	};

	vlapic_send_ipi(l, &ipi);
}

/*
 * The ICR write that goes to one APIC (issue 13.4, the exit fast path of
 * vmm/exit/exit_fast.c): fixed delivery of a legal vector, to itself by
 * shorthand or to one physical destination that is not the broadcast
 * one. Decoded by vlapic_icr_decode(), as every ICR write.
 */
static inline __attribute__((always_inline)) bool icr_one_apic(const struct lapic_ipi *ipi)
{
	if (ipi->dm != LAPIC_DM_FIXED || vlapic_illegal_vector(ipi->vector))
		return false;
	if (ipi->shorthand == LAPIC_SH_SELF)
		return true;
	return ipi->shorthand == LAPIC_SH_NONE && !ipi->logical &&
	       ipi->dest != (ipi->x2apic ? X2APIC_BROADCAST : XAPIC_BROADCAST);
}

/*
 * Its destination, NULL for none; false when several APICs match. An
 * x2APIC ID is the initial APIC ID, read-only, and the vlapic's index in
 * its group: one lookup, where vlapic_send_ipi() compares every member
 * (match_physical: the same t->id test, whatever mode the target is in).
 * An xAPIC ID is writable, so that destination is found as
 * vlapic_send_ipi() finds it, by match_physical() on every APIC not
 * disabled (vlapic_ipi_matches() without the shorthand and logical cases
 * this one is not); two APICs that share it are left to it.
 */
static inline __attribute__((always_inline)) bool icr_fast_target(struct vlapic *src,
								  const struct lapic_ipi *ipi,
								  struct vlapic **out)
{
	struct vlapic *t = NULL;

	if (ipi->shorthand == LAPIC_SH_SELF) {
		t = src;
	} else if (ipi->x2apic) {
		t = ipi->dest < src->group->n ? src->group->member[ipi->dest] : NULL;
		if (t && vlapic_mode(t) == VLAPIC_DISABLED)
			t = NULL;
	} else {
		for (uint32_t i = 0; i < src->group->n; i++) {
			struct vlapic *m = src->group->member[i];

			if (!m || vlapic_mode(m) == VLAPIC_DISABLED || !match_physical(m, ipi))
				continue;
			if (t)
				return false;
			t = m;
		}
	}
	*out = t;
	return true;
}

/*
 * Everything else - reserved bits of an x2APIC write (#GP), other
 * delivery modes, logical, broadcast or all/others destinations, illegal
 * vectors (ESR), an xAPIC destination two APICs share, an APIC not in the
 * mode of the interface, the IPI trace point - returns false before any
 * side effect, and the caller takes the register write path
 * (vlapic_wrmsr(), vlapic_apicv_write()), which decides all of them. When
 * it returns true the effect is that path's: ICR stored with delivery
 * status idle, and the destination, if any, vlapic_accept()ed, which
 * posts or sets IRR and notifies it. One body, inlined into each
 * interface's entry point with its mode constant.
 */
static inline __attribute__((always_inline)) bool icr_fast(struct vlapic *l, uint64_t icr,
							   bool x2apic)
{
	struct lapic_ipi ipi;
	struct vlapic *t;

	if (vlapic_mode(l) != (x2apic ? VLAPIC_X2APIC : VLAPIC_XAPIC) || l->trace_ipi ||
	    (x2apic && (icr & ~(uint64_t)X2APIC_ICR_OK)))
		return false;
	vlapic_icr_decode(icr, x2apic, &ipi);
	if (!icr_one_apic(&ipi) || !icr_fast_target(l, &ipi, &t))
		return false;
	vlapic_set(l, LAPIC_ICR_HI, (uint32_t)(icr >> 32));
	vlapic_set(l, LAPIC_ICR_LO, (uint32_t)icr & ~(uint32_t)LAPIC_ICR_STATUS);
	if (t)
		vlapic_accept_fixed(t, ipi.vector, false);
	return true;
}

bool vlapic_x2apic_icr_fast(struct vlapic *l, uint64_t icr)
{
	return icr_fast(l, icr, true);
}

bool vlapic_xapic_icr_fast(struct vlapic *l)
{
	return icr_fast(l, (uint64_t)vlapic_get(l, LAPIC_ICR_HI) << 32 | vlapic_get(l, LAPIC_ICR_LO),
			false);
}
