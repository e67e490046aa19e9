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
 * one. Read from the value's bits (vlapic_icr_decode()'s fields) by
 * icr_fast(); test_vlapic.c's twin tests and fuzz_icr hold it to the
 * register path, which decodes.
 *
 * The destination, NULL for none; false when several APICs match. An
 * x2APIC ID is the initial APIC ID, read-only, and the vlapic's index in
 * its group: one lookup, where vlapic_send_ipi() compares every member
 * (match_physical: the same t->id test, whatever mode the target is in).
 * An xAPIC ID is writable: the group's xapic_one[] names the one APIC
 * not disabled that held it when an ID or mode last changed (or none),
 * and that APIC is checked as vlapic_send_ipi() would check it
 * (match_physical(), vlapic_ipi_matches() without the shorthand and
 * logical cases this one is not). An ID two APICs share is left to
 * vlapic_send_ipi(), as is one whose APIC moved since (the check fails).
 * The map changes in the handler of the exit that changed an ID (an
 * APIC-write exit is trap-like: before the guest's next instruction), so
 * an IPI sent after it, as the guest orders things, finds the new map.
 * One lookup, where vlapic_send_ipi() compares every member: KVM keeps
 * such a map of physical IDs too (kvm_recalculate_apic_map()); bhyve and
 * Xen loop over the vCPUs.
 */
static inline __attribute__((always_inline)) bool icr_fast_target(struct vlapic *src,
								  uint32_t dest, bool x2apic,
								  struct vlapic **out)
{
	struct vlapic *t = NULL;

	if (x2apic) {
		if (dest == X2APIC_BROADCAST)
			return false;
		t = dest < src->group->n ? src->group->member[dest] : NULL;
		if (t && vlapic_mode(t) == VLAPIC_DISABLED)
			t = NULL;
	} else {
		uint8_t one;

		if (dest == XAPIC_BROADCAST)
			return false;
		one = READ_ONCE(src->group->xapic_one[dest]);
		if (one == VLAPIC_XAPIC_SHARED)
			return false;
		if (one) {
			t = READ_ONCE(src->group->member[one - 1]);
			if (!t || vlapic_mode(t) == VLAPIC_DISABLED ||
			    vlapic_get(t, LAPIC_ID) >> 24 != dest)
				return false;
		}
	}
	*out = t;
	return true;
}

static void group_lock(struct vlapic_group *g)
{
	while (__atomic_exchange_n(&g->lock, 1, __ATOMIC_ACQUIRE))
		while (__atomic_load_n(&g->lock, __ATOMIC_RELAXED))
			__builtin_ia32_pause();
}

/* Under the lock, so that the last change is the one the map shows; an
 * IPI sent meanwhile reads each entry whole (one byte), the old or the
 * new, and icr_fast_target() checks the APIC it names. */
void vlapic_group_changed(struct vlapic_group *g)
{
	uint8_t one[256] = { 0 };

	group_lock(g);
	for (uint32_t i = 0; i < g->n; i++) {
		const struct vlapic *m = READ_ONCE(g->member[i]);
		uint32_t id;

		if (!m || vlapic_mode(m) == VLAPIC_DISABLED)
			continue;
		id = vlapic_get(m, LAPIC_ID) >> 24;
		one[id] = one[id] ? VLAPIC_XAPIC_SHARED : (uint8_t)(i + 1);
	}
	for (uint32_t id = 0; id < 256; id++)
		WRITE_ONCE(g->xapic_one[id], one[id]);
	__atomic_store_n(&g->lock, 0, __ATOMIC_RELEASE);
}

void vlapic_group_add(struct vlapic_group *g, uint32_t i, struct vlapic *l)
{
	__atomic_store_n(&g->member[i], l, __ATOMIC_RELEASE);
	if (g->n <= i)
		g->n = i + 1;
	vlapic_group_changed(g);
}

/* Every write (an APIC-write exit's `old` is the new value). */
void vlapic_id_written(struct vlapic *l, uint32_t old, uint32_t val)
{
	vlapic_group_changed(l->group);
}

/*
 * Everything else - reserved bits of an x2APIC write (#GP), other
 * delivery modes, logical, broadcast or all/others destinations, illegal
 * vectors (ESR), an xAPIC destination two APICs share, an APIC not in the
 * mode of the interface, the IPI trace point - returns false before any
 * side effect, and the caller takes the register write path
 * (vlapic_wrmsr(), vlapic_apicv_write()), which decides all of them. When
 * it returns true the effect is that path's: ICR stored with delivery
 * status idle (xAPIC: as the CPU stored it, the status bit cleared), and
 * the destination, if any, vlapic_accept()ed, which posts or sets IRR and
 * notifies it. One body, inlined into each interface's entry
 * point with its mode constant.
 */
static inline __attribute__((always_inline)) bool icr_fast(struct vlapic *l, uint64_t icr,
							   bool x2apic)
{
	uint32_t lo = (uint32_t)icr;
	uint8_t vec = (uint8_t)FIELD_GET(LAPIC_ICR_VECTOR, lo);
	struct vlapic *t;

	if (vlapic_mode(l) != (x2apic ? VLAPIC_X2APIC : VLAPIC_XAPIC) || l->trace_ipi ||
	    (x2apic && (icr & ~(uint64_t)X2APIC_ICR_OK)))
		return false;
	if ((lo & LAPIC_ICR_DELIVERY) != FIELD_PREP(LAPIC_ICR_DELIVERY, LAPIC_DM_FIXED) ||
	    vlapic_illegal_vector(vec))
		return false;
	switch (lo & LAPIC_ICR_SHORTHAND) {
	case FIELD_PREP(LAPIC_ICR_SHORTHAND, LAPIC_SH_SELF):
		t = l;
		break;
	case FIELD_PREP(LAPIC_ICR_SHORTHAND, LAPIC_SH_NONE):
		if (lo & LAPIC_ICR_LOGICAL)
			return false;
		if (!icr_fast_target(l, (uint32_t)(x2apic ? FIELD_GET(LAPIC_ICR_DEST_X2APIC, icr)
							 : FIELD_GET(LAPIC_ICR_DEST_XAPIC, icr)),
				     x2apic, &t))
			return false;
		break;
	default:
		return false;
	}
	if (x2apic) {
		vlapic_set(l, LAPIC_ICR_HI, (uint32_t)(icr >> 32));
		vlapic_set(l, LAPIC_ICR_LO, lo);        /* X2APIC_ICR_OK: no status bit */
	} else if (lo & LAPIC_ICR_STATUS) {
		vlapic_set(l, LAPIC_ICR_LO, lo & ~(uint32_t)LAPIC_ICR_STATUS);
	}
	if (t)
		vlapic_accept_fixed(t, vec, false);
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
