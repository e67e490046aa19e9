// SPDX-License-Identifier: BSD-2-Clause
/*
 * The ICR decoder and IPI routing of lapic/vlapic_icr.c. Two identical
 * groups of 1 to 4 vlapics take the same random operations
 * (tests/fuzz/fuzz_vlapic.h); every ICR write goes to group A by the exit
 * fast path (vlapic_x2apic_icr_fast(), vlapic_xapic_icr_fast() after the
 * CPU stored the value, falling back to vlapic_wrmsr() and
 * vlapic_apicv_write() as vmm/ does) and to group B by the plain register
 * write (WRMSR, MMIO) with the IPI trace point on. Invariants:
 *  - both groups end every operation in the same state, register page,
 *    pending NMI/INIT/SIPI, timer and callbacks alike (the fast path's
 *    contract: "the effect is that path's");
 *  - the IPI traced is the ICR value decoded as the SDM's "Interrupt
 *    Command Register (ICR)" lays it out, and it reaches exactly the APICs
 *    "Determining IPI Destination" names (physical, logical flat and
 *    cluster, x2APIC cluster, shorthands, lowest priority);
 *  - and every invariant of fuzz_vlapic.c (on group B: A is the same).
 */
#include "tests/fuzz/fuzz_vlapic.h"

#define MAX_STEPS       2048u

static struct fv_group a, b;

/* "Logical Destination Mode" and "Physical Destination Mode". */
static bool sdm_match(const struct vlapic *src, const struct vlapic *t, uint64_t icr, bool x2)
{
	uint32_t sh = (uint32_t)FIELD_GET(LAPIC_ICR_SHORTHAND, icr);
	uint32_t dest = x2 ? (uint32_t)(icr >> 32) : (uint32_t)(icr >> 56);
	uint32_t ldr = vlapic_get(t, LAPIC_LDR), bcast = x2 ? 0xffffffffu : 0xffu;

	if (vlapic_mode(t) == VLAPIC_DISABLED)
		return false;
	if (sh == LAPIC_SH_SELF)
		return t == src;
	if (sh == LAPIC_SH_ALL)
		return true;
	if (sh == LAPIC_SH_OTHERS)
		return t != src;
	if (dest == bcast)
		return true;
	if (!(icr & LAPIC_ICR_LOGICAL))
		return x2 ? dest == t->id : dest == vlapic_get(t, LAPIC_ID) >> 24;
	if (x2)
		return (ldr >> 16) == (dest >> 16) && (ldr & dest & 0xffff);
	ldr >>= 24;
	if ((vlapic_get(t, LAPIC_DFR) >> 28) == 0xf)            /* flat */
		return ldr & dest;
	return (ldr >> 4) == (dest >> 4) && (ldr & dest & 0xf); /* cluster */
}

/* Where the SDM says the IPI goes: a bit per member. */
static uint32_t sdm_targets(struct fv_group *g, unsigned s, uint64_t icr, bool x2)
{
	uint32_t dm = (uint32_t)FIELD_GET(LAPIC_ICR_DELIVERY, icr), set = 0;
	int best = -1;

	for (unsigned i = 0; i < g->n; i++) {
		if (!sdm_match(g->l[s], g->l[i], icr, x2))
			continue;
		set |= 1u << i;
		/* lowest priority without shorthand: the lowest TPR among the
		 * software-enabled ones, the first on a tie */
		if (dm == LAPIC_DM_LOWEST && vlapic_sw_enabled(g->l[i]) &&
		    (best < 0 || (vlapic_get(g->l[i], LAPIC_TPR) & 0xff) <
				 (vlapic_get(g->l[best], LAPIC_TPR) & 0xff)))
			best = (int)i;
	}
	if (dm == LAPIC_DM_LOWEST && !FIELD_GET(LAPIC_ICR_SHORTHAND, icr))
		return best < 0 ? 0 : 1u << best;
	return set;
}

/* "Interrupt Command Register (ICR)": the fields of the value written. */
static void check_decoded(const struct lapic_ipi *ipi, uint64_t icr, bool x2)
{
	FUZZ_CHECK(ipi->vector == (icr & 0xff));
	FUZZ_CHECK(ipi->dm == ((icr >> 8) & 7));
	FUZZ_CHECK(ipi->logical == !!(icr & BIT(11)));
	FUZZ_CHECK(ipi->level_assert == !!(icr & BIT(14)));
	FUZZ_CHECK(ipi->trigger_level == !!(icr & BIT(15)));
	FUZZ_CHECK(ipi->shorthand == ((icr >> 18) & 3));
	FUZZ_CHECK(ipi->x2apic == x2);
	FUZZ_CHECK(ipi->dest == (x2 ? (uint32_t)(icr >> 32) : (uint32_t)(icr >> 56)));
}

static bool sends(uint64_t icr)
{
	uint32_t dm = (uint32_t)FIELD_GET(LAPIC_ICR_DELIVERY, icr);

	if ((dm == LAPIC_DM_FIXED || dm == LAPIC_DM_LOWEST) && (icr & 0xff) < 16)
		return false;                           /* send illegal vector */
	/* INIT level de-assert */
	return !(dm == LAPIC_DM_INIT && (icr & BIT(15)) && !(icr & BIT(14)));
}

/* ICR values an OS writes, and any. */
static uint64_t icr_value(struct fuzz_in *in)
{
	uint8_t k = fuzz_u8(in);
	uint64_t dest = fuzz_u8(in) & 1 ? fuzz_u8(in) % 6 : fuzz_u32(in);

	if (k < 0x80)                   /* fixed, physical, no shorthand */
		return fuzz_u8(in) | dest << 32;
	if (k < 0xc0)                   /* a shorthand or logical, any mode */
		return (fuzz_u32(in) & 0x000ccfffu) | dest << 32;
	return fuzz_u64(in);
}

static void icr_write(unsigned s, struct fuzz_in *in)
{
	struct vlapic *la = a.l[s], *lb = b.l[s];
	bool x2 = vlapic_mode(lb) == VLAPIC_X2APIC;
	uint64_t icr = icr_value(in);
	uint32_t hi_b;
	int ra, rb;

	if (vlapic_mode(lb) == VLAPIC_DISABLED)
		return;
	if (!x2) {                      /* xAPIC: ICR_HI first, as an OS does */
		vlapic_mmio_write(la, LAPIC_ICR_HI, (uint32_t)(icr >> 32));
		vlapic_mmio_write(lb, LAPIC_ICR_HI, (uint32_t)(icr >> 32));
		icr = (uint32_t)icr | (uint64_t)vlapic_get(lb, LAPIC_ICR_HI) << 32;
	}
	hi_b = vlapic_get(lb, LAPIC_ICR_HI);
	b.cpu[s].traced_sends = 0;
	b.cpu[s].traced_targets = 0;
	lb->trace_ipi = true;
	if (x2) {
		ra = vlapic_x2apic_icr_fast(la, icr) ? 0 : vlapic_wrmsr(la, LAPIC_MSR(LAPIC_ICR_LO), icr);
		rb = vlapic_wrmsr(lb, LAPIC_MSR(LAPIC_ICR_LO), icr);
		FUZZ_CHECK(ra == rb);
		FUZZ_CHECK(rb == 0 || (icr & ~(uint64_t)X2APIC_ICR_OK));
	} else {
		/* the APIC-write exit: the CPU stored ICR_LO (all of it) */
		vlapic_set(la, LAPIC_ICR_LO, (uint32_t)icr);
		if (!vlapic_xapic_icr_fast(la))
			vlapic_apicv_write(la, LAPIC_ICR_LO);
		vlapic_mmio_write(lb, LAPIC_ICR_LO, (uint32_t)icr);
		rb = 0;
	}
	lb->trace_ipi = false;
	if (rb)
		return;
	if (!sends(icr)) {
		FUZZ_CHECK(b.cpu[s].traced_sends == 0);
		return;
	}
	FUZZ_SAY("icr: vCPU %u %s ICR %#llx -> targets %#x\n", s, x2 ? "x2APIC" : "xAPIC",
		 (unsigned long long)icr, b.cpu[s].traced_targets);
	FUZZ_CHECK(b.cpu[s].traced_sends == 1);
	check_decoded(&b.cpu[s].traced, x2 ? icr : (uint32_t)icr | (uint64_t)hi_b << 32, x2);
	FUZZ_CHECK(b.cpu[s].traced_targets == sdm_targets(&b, s, icr, x2));
}

static void same_state(void)
{
	for (unsigned i = 0; i < a.n; i++) {
		const struct vlapic *x = a.l[i], *y = b.l[i];
		const struct fv_cpu *p = &a.cpu[i], *q = &b.cpu[i];

		FUZZ_CHECK(!memcmp(x->page, y->page, sizeof(x->page)));
		FUZZ_CHECK(x->base_msr == y->base_msr && x->esr_pending == y->esr_pending);
		FUZZ_CHECK(x->nmi_pending == y->nmi_pending && x->init_pending == y->init_pending);
		FUZZ_CHECK(x->sipi_pending == y->sipi_pending && x->sipi_vector == y->sipi_vector);
		FUZZ_CHECK(x->tsc_deadline == y->tsc_deadline);
		FUZZ_CHECK(x->timer.armed == y->timer.armed && x->timer.target == y->timer.target &&
			   x->timer.mode == y->timer.mode && x->timer.period == y->timer.period);
		FUZZ_CHECK(x->cached_timer_mode == y->cached_timer_mode &&
			   x->cached_divide == y->cached_divide);
		FUZZ_CHECK(p->notifies == q->notifies && p->timer_updates == q->timer_updates &&
			   p->mode_changes == q->mode_changes && p->notices == q->notices);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	unsigned n = 1 + fuzz_u8(&in) % FV_MAX_CPU, op, cpu;
	uint64_t min_period = fuzz_u8(&in) * 100ull;

	fv_clk = 1000000;
	fv_init(&a, n, min_period);
	fv_init(&b, n, min_period);
	for (unsigned step = 0; step < MAX_STEPS && in.n; step++) {
		/* Each operation on both groups from the same bytes. */
		struct fuzz_in again = in;
		uint8_t kind = fuzz_u8(&in);

		if (kind < 0x60) {
			icr_write(fuzz_u8(&in) % n, &in);
		} else {
			uint64_t clk = fv_clk;

			fv_step(&a, &in, &op, &cpu);
			fv_clk = clk;
			again.p++, again.n--;
			fv_step(&b, &again, &op, &cpu);
			FUZZ_CHECK(again.p == in.p);
		}
		same_state();
		for (unsigned i = 0; i < n; i++)
			fv_check(b.l[i]);               /* a.l[i] is the same */
	}
	return 0;
}
