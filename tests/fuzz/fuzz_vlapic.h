/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The virtual LAPIC driven by fuzzer bytes, shared by fuzz_vlapic.c and
 * fuzz_icr.c: a group of vlapics with a fake hypervisor (struct
 * vlapic_ops: a clock the input moves, counters of every callback), an
 * interpreter of operations read from the input (register reads and
 * writes through MMIO, MSRs and APIC-write exits, IA32_APIC_BASE, TSC
 * deadline, time passing with expiries, interrupts arriving and taken,
 * EOI, CR8, NMI/INIT/SIPI, resets), and the invariants of the Intel SDM
 * Vol. 3A chapter "Advanced Programmable Interrupt Controller (APIC)",
 * written here from the SDM, checked after every operation.
 */
#ifndef TESTS_FUZZ_FUZZ_VLAPIC_H
#define TESTS_FUZZ_FUZZ_VLAPIC_H

#include <stdlib.h>

#include "lapic/vlapic.h"
#include "lapic/vlapic_impl.h"
#include "tests/fuzz/fuzz.h"

#define FV_MAX_CPU      4u
#define FV_CLOCK_DIV    3u
#define FV_MAXPHYADDR   39u

struct fv_cpu {
	unsigned notifies, timer_updates, mode_changes, notices;
	unsigned traced_sends;
	uint32_t traced_targets;        /* bit i: trace_ipi reached member i */
	struct lapic_ipi traced;        /* the last IPI traced */
};

struct fv_group {
	struct vlapic_group group;
	struct vlapic *l[FV_MAX_CPU];
	struct fv_cpu cpu[FV_MAX_CPU];
	unsigned n;
};

static uint64_t fv_clk;                 /* guest TSC, shared by every group */

static struct fv_cpu *fv_cpu_of(struct vlapic *l) { return l->owner; }
static uint64_t fv_now(struct vlapic *l) { return fv_clk; }
static void fv_timer_update(struct vlapic *l) { fv_cpu_of(l)->timer_updates++; }
static void fv_notify(struct vlapic *l) { fv_cpu_of(l)->notifies++; }
static void fv_mode_changed(struct vlapic *l) { fv_cpu_of(l)->mode_changes++; }

static void fv_notice(struct vlapic *l, const char *msg)
{
	FUZZ_CHECK(msg && *msg);
	fv_cpu_of(l)->notices++;
}

static void fv_trace_ipi(struct vlapic *l, const struct vlapic *t, const struct lapic_ipi *ipi)
{
	struct fv_cpu *c = fv_cpu_of(l);

	if (t)
		c->traced_targets |= 1u << t->id;
	else
		c->traced_sends++;
	c->traced = *ipi;
}

static const struct vlapic_ops fv_ops = {
	.now = fv_now, .timer_update = fv_timer_update, .notify = fv_notify,
	.mode_changed = fv_mode_changed, .notice = fv_notice, .trace_ipi = fv_trace_ipi,
};

static void fv_init(struct fv_group *g, unsigned n, uint64_t min_period)
{
	memset(&g->group, 0, sizeof(g->group));
	memset(g->cpu, 0, sizeof(g->cpu));
	g->n = n;
	g->group.n = n;
	for (unsigned i = 0; i < n; i++) {
		if (!g->l[i])
			g->l[i] = aligned_alloc(PAGE_SIZE, ALIGN_UP(sizeof(struct vlapic), PAGE_SIZE));
		memset(g->l[i], 0xa5, sizeof(struct vlapic));  /* init must not need zeros */
		g->group.member[i] = g->l[i];
		vlapic_init(g->l[i], i, &g->group, &fv_ops, &g->cpu[i], FV_CLOCK_DIV, min_period);
		g->l[i]->maxphyaddr = FV_MAXPHYADDR;
	}
}

/* --- the SDM's rules, independently of lapic/ ----------------------------- */

/* "Processor Priority Register (PPR)": PPR[7:4] = max(TPR[7:4], ISRV[7:4]),
 * PPR[3:0] = TPR[3:0] when TPR wins, else 0. */
static uint32_t fv_sdm_ppr(uint32_t tpr, int isrv)
{
	uint32_t v = isrv < 0 ? 0 : (uint32_t)isrv;

	return (tpr & 0xf0) >= (v & 0xf0) ? tpr & 0xff : v & 0xf0;
}

static bool fv_vec_set(const struct vlapic *l, uint32_t base, unsigned vec)
{
	return vlapic_get(l, base + (vec / 32) * 16) & (1u << (vec % 32));
}

static int fv_highest(const struct vlapic *l, uint32_t base)
{
	for (int w = 7; w >= 0; w--) {
		uint32_t bits = vlapic_get(l, base + (uint32_t)w * 16);

		if (bits)
			return w * 32 + 31 - __builtin_clz(bits);
	}
	return -1;
}

/* "Local APIC Register Address Map": the xAPIC registers, 16-byte slots. */
static bool fv_xapic_reg(uint32_t off)
{
	if (off >= 0x100 && off < 0x280)
		return true;                            /* ISR, TMR, IRR */
	if (off >= 0x320 && off <= 0x390)
		return true;                            /* LVTs, TMICT, TMCCT */
	switch (off) {
	case 0x020: case 0x030: case 0x080: case 0x090: case 0x0a0: case 0x0b0:
	case 0x0c0: case 0x0d0: case 0x0e0: case 0x0f0: case 0x280: case 0x2f0:
	case 0x300: case 0x310: case 0x3e0:
		return true;
	}
	return false;
}

/* "x2APIC State Transitions": the IA32_APIC_BASE writes that do not #GP. */
static bool fv_base_legal(enum vlapic_mode from, uint64_t v)
{
	bool en = v & APIC_BASE_EN, ext = v & APIC_BASE_EXTD;

	if (v & (BITS(7, 0) | BIT(9) | BITS(63, FV_MAXPHYADDR)))
		return false;
	if (ext && !en)
		return false;
	if (from == VLAPIC_DISABLED && en && ext)
		return false;
	return !(from == VLAPIC_X2APIC && en && !ext);
}

static const uint32_t fv_lvts[] = {
	LAPIC_LVT_CMCI, LAPIC_LVT_TIMER, LAPIC_LVT_THERMAL, LAPIC_LVT_PERF,
	LAPIC_LVT_LINT0, LAPIC_LVT_LINT1, LAPIC_LVT_ERROR,
};

static void fv_check(struct vlapic *l)
{
	enum vlapic_mode mode = vlapic_mode(l);
	uint32_t tpr = vlapic_get(l, LAPIC_TPR), ppr, lvtt_mode, last_class = 0x100;
	int isrv = fv_highest(l, LAPIC_ISR), pend;
	uint64_t v;

	/* No vector below 16 is ever pending, in service or level-latched
	 * ("Valid Interrupt Vectors"). */
	FUZZ_CHECK((vlapic_get(l, LAPIC_IRR) & 0xffff) == 0);
	FUZZ_CHECK((vlapic_get(l, LAPIC_ISR) & 0xffff) == 0);
	FUZZ_CHECK((vlapic_get(l, LAPIC_TMR) & 0xffff) == 0);
	/* ISR nests: each vector taken was above PPR, so at most one vector
	 * per priority class is in service. */
	for (int w = 7; w >= 0; w--) {
		uint32_t bits = vlapic_get(l, LAPIC_ISR + (uint32_t)w * 16);

		while (bits) {
			uint32_t vec = (uint32_t)w * 32 + 31 - (uint32_t)__builtin_clz(bits);

			FUZZ_CHECK((vec >> 4) < last_class);
			last_class = vec >> 4;
			bits &= ~(1u << (vec % 32));
		}
	}
	FUZZ_CHECK(tpr <= 0xff);
	ppr = fv_sdm_ppr(tpr, isrv);
	FUZZ_CHECK(vlapic_ppr(l) == ppr);
	FUZZ_CHECK(vlapic_get(l, LAPIC_PPR) == ppr);    /* PPR kept up to date */
	FUZZ_CHECK(vlapic_highest_isr(l) == isrv);
	FUZZ_CHECK(vlapic_highest_irr(l) == fv_highest(l, LAPIC_IRR));
	pend = vlapic_pending_vector(l);
	if (fv_highest(l, LAPIC_IRR) >= 0 && ((uint32_t)fv_highest(l, LAPIC_IRR) >> 4) > (ppr >> 4))
		FUZZ_CHECK(pend == fv_highest(l, LAPIC_IRR));
	else
		FUZZ_CHECK(pend == -1);
	/* "Error Status Register": only the errors this APIC can make. */
	FUZZ_CHECK(!(vlapic_get(l, LAPIC_ESR) & ~0xe0u));
	FUZZ_CHECK(!(l->esr_pending & ~0xe0u));
	FUZZ_CHECK(l->nmi_pending <= VLAPIC_NMI_MAX);
	/* Masks: a software-disabled APIC keeps every LVT masked. */
	if (!vlapic_sw_enabled(l))
		for (unsigned i = 0; i < ARRAY_SIZE(fv_lvts); i++)
			FUZZ_CHECK(vlapic_get(l, fv_lvts[i]) & LAPIC_LVT_MASKED);
	lvtt_mode = (uint32_t)FIELD_GET(LAPIC_LVT_TIMER_MODE, vlapic_get(l, LAPIC_LVT_TIMER));
	FUZZ_CHECK(lvtt_mode != LAPIC_TIMER_RESERVED);
	FUZZ_CHECK((vlapic_get(l, LAPIC_ICR_LO) & LAPIC_ICR_STATUS) == 0);
	FUZZ_CHECK(!(l->base_msr & (BITS(7, 0) | BIT(9) | BITS(63, FV_MAXPHYADDR))));
	FUZZ_CHECK(!!(l->base_msr & APIC_BASE_BSP) == (l->id == 0));
	if (mode == VLAPIC_X2APIC) {
		FUZZ_CHECK(vlapic_get(l, LAPIC_ID) == l->id);
		FUZZ_CHECK(vlapic_get(l, LAPIC_LDR) == (((l->id >> 4) << 16) | (1u << (l->id & 0xf))));
		FUZZ_CHECK(vlapic_rdmsr(l, LAPIC_MSR(LAPIC_PPR), &v) == 0 && v == ppr);
	} else {
		FUZZ_CHECK(vlapic_rdmsr(l, LAPIC_MSR(LAPIC_ID), &v) == -1);
	}
	if (mode == VLAPIC_XAPIC) {
		uint32_t r = 0;

		FUZZ_CHECK((vlapic_get(l, LAPIC_DFR) & 0x0fffffffu) == 0x0fffffffu);
		FUZZ_CHECK(vlapic_mmio_read(l, LAPIC_PPR, &r) == 0 && r == ppr);
	}
	/* "APIC Timer": TMCCT counts down from TMICT; TSC-deadline mode has
	 * neither. */
	FUZZ_CHECK(vlapic_rdmsr(l, MSR_IA32_TSC_DEADLINE, &v) == 0);
	if (lvtt_mode != LAPIC_TIMER_TSC_DEADLINE || mode == VLAPIC_DISABLED) {
		FUZZ_CHECK(v == 0);
		FUZZ_CHECK(vtimer_current_count(&l->timer, fv_clk) <= vlapic_get(l, LAPIC_TMICT));
	} else {
		FUZZ_CHECK(vlapic_get(l, LAPIC_TMICT) == 0);
	}
}

/* --- operations ------------------------------------------------------------ */

static const uint32_t fv_hot[] = {
	LAPIC_ID, LAPIC_TPR, LAPIC_EOI, LAPIC_LDR, LAPIC_DFR, LAPIC_SVR, LAPIC_ESR,
	LAPIC_LVT_CMCI, LAPIC_ICR_LO, LAPIC_ICR_HI, LAPIC_LVT_TIMER, LAPIC_LVT_THERMAL,
	LAPIC_LVT_PERF, LAPIC_LVT_LINT0, LAPIC_LVT_LINT1, LAPIC_LVT_ERROR, LAPIC_TMICT,
	LAPIC_TMCCT, LAPIC_TDCR, LAPIC_SELF_IPI, LAPIC_PPR, LAPIC_IRR, LAPIC_ISR, LAPIC_TMR,
};

/* A register offset: mostly a real one, sometimes any 16-byte slot or any
 * byte of the page. */
static uint32_t fv_off(struct fuzz_in *in)
{
	uint8_t b = fuzz_u8(in);

	if (b < 0xc0)
		return fv_hot[b % ARRAY_SIZE(fv_hot)];
	if (b < 0xf0)
		return (uint32_t)fuzz_u8(in) << 4;
	return fuzz_u16(in) & 0xfffu;
}

/* "Error Status Register": a fixed or lowest-priority IPI with a vector
 * below 16 is not sent, a send illegal vector error instead. */
static void fv_check_send(struct vlapic *l, uint32_t icr_lo)
{
	uint32_t dm = (uint32_t)FIELD_GET(LAPIC_ICR_DELIVERY, icr_lo);

	if ((dm == LAPIC_DM_FIXED || dm == LAPIC_DM_LOWEST) && (icr_lo & 0xff) < 16)
		FUZZ_CHECK(l->esr_pending & LAPIC_ESR_SEND_ILLEGAL);
}

/* The ESR write path, with "write before read" checked: it latches the
 * errors collected since the last write and starts collecting anew. */
static void fv_esr_write(struct vlapic *l, bool x2)
{
	uint32_t pending = l->esr_pending;
	uint64_t zero = 0;

	if (x2)
		FUZZ_CHECK(vlapic_wrmsr(l, LAPIC_MSR(LAPIC_ESR), zero) == 0);
	else
		vlapic_mmio_write(l, LAPIC_ESR, 0);
	FUZZ_CHECK(vlapic_get(l, LAPIC_ESR) == pending && l->esr_pending == 0);
}

static void fv_mmio(struct vlapic *l, struct fuzz_in *in, bool write)
{
	uint32_t off = fv_off(in), val = write ? fuzz_u32(in) : 0;

	if (vlapic_mode(l) != VLAPIC_XAPIC)
		return;                         /* vmm/ routes MMIO only then */
	if (write && off == LAPIC_ESR) {
		fv_esr_write(l, false);
		return;
	}
	if (write)
		FUZZ_CHECK(vlapic_mmio_write(l, off, val) == 0);
	if (write && off == LAPIC_ICR_LO)
		fv_check_send(l, val);
	else
		FUZZ_CHECK(vlapic_mmio_read(l, off, &val) == 0);
	/* "Error Status Register": an access to a reserved register
	 * address is an illegal register address error. */
	if (!(off & 0xf) && !fv_xapic_reg(off))
		FUZZ_CHECK(l->esr_pending & LAPIC_ESR_ILLEGAL_REG);
	if (!write && !(off & 0xf) && !fv_xapic_reg(off))
		FUZZ_CHECK(val == 0);
}

static void fv_wrmsr(struct vlapic *l, struct fuzz_in *in)
{
	uint32_t off = fv_off(in) & ~0xfu, msr = LAPIC_MSR(off);
	uint64_t v = fuzz_u8(in) & 1 ? fuzz_u64(in) : fuzz_u32(in);
	enum vlapic_mode mode = vlapic_mode(l);
	int r;

	if (off == LAPIC_ESR && !v && mode == VLAPIC_X2APIC) {
		fv_esr_write(l, true);
		return;
	}
	r = vlapic_wrmsr(l, msr, v);
	FUZZ_CHECK(r == 0 || r == -1);
	if (!r && off == LAPIC_ICR_LO)
		fv_check_send(l, (uint32_t)v);
	if (!r && off == LAPIC_SELF_IPI)
		fv_check_send(l, (uint32_t)v & 0xff);       /* fixed, to itself */
	/* "x2APIC Register Address Space": no x2APIC MSR outside x2APIC
	 * mode; EOI and ESR take only 0; no 64-bit register but the ICR. */
	if (mode != VLAPIC_X2APIC || ((off == LAPIC_EOI || off == LAPIC_ESR) && v) ||
	    (off != LAPIC_ICR_LO && (v >> 32)))
		FUZZ_CHECK(r == -1);
}

static void fv_rdmsr(struct vlapic *l, struct fuzz_in *in)
{
	uint32_t off = fv_off(in) & ~0xfu;
	uint64_t v = 0;
	int r = vlapic_rdmsr(l, LAPIC_MSR(off), &v);

	FUZZ_CHECK(r == 0 || r == -1);
	if (vlapic_mode(l) != VLAPIC_X2APIC)
		FUZZ_CHECK(r == -1);
	if (!r && off != LAPIC_ICR_LO)
		FUZZ_CHECK(v >> 32 == 0);
	if (off == LAPIC_EOI || off == LAPIC_SELF_IPI)        /* write-only */
		FUZZ_CHECK(r == -1);
}

static void fv_base(struct vlapic *l, struct fuzz_in *in)
{
	static const uint64_t common[] = {
		LAPIC_DEFAULT_BASE | APIC_BASE_EN, LAPIC_DEFAULT_BASE | APIC_BASE_EN | APIC_BASE_EXTD,
		LAPIC_DEFAULT_BASE, LAPIC_DEFAULT_BASE | APIC_BASE_EXTD,
		0xfed00000ull | APIC_BASE_EN,
	};
	uint8_t b = fuzz_u8(in);
	uint64_t v = b < 0xf0 ? common[b % ARRAY_SIZE(common)] : fuzz_u64(in);
	enum vlapic_mode from = vlapic_mode(l);

	FUZZ_CHECK(vlapic_wrmsr(l, MSR_IA32_APIC_BASE, v) == (fv_base_legal(from, v) ? 0 : -1));
	if (fv_base_legal(from, v))
		FUZZ_CHECK((l->base_msr & ~(uint64_t)APIC_BASE_BSP) == (v & ~(uint64_t)APIC_BASE_BSP));
}

static void fv_accept(struct vlapic *l, struct fuzz_in *in)
{
	uint8_t dm = fuzz_u8(in) & 7, vec = fuzz_u8(in), lvl = fuzz_u8(in) & 1;
	bool fixed = dm == LAPIC_DM_FIXED || dm == LAPIC_DM_LOWEST, enabled = vlapic_sw_enabled(l);

	vlapic_accept(l, dm, vec, lvl);
	if (fixed && enabled && vec < 16)
		FUZZ_CHECK(l->esr_pending & LAPIC_ESR_RECV_ILLEGAL);
	if (fixed && enabled && vec >= 16) {
		FUZZ_CHECK(fv_vec_set(l, LAPIC_IRR, vec));
		FUZZ_CHECK(fv_vec_set(l, LAPIC_TMR, vec) == lvl);
	}
}

/* The CPU takes the highest pending vector, as vmm/ injects it. */
static void fv_take(struct vlapic *l)
{
	int vec = vlapic_pending_vector(l);

	if (vec < 0)
		return;
	FUZZ_CHECK(vec >= 16);                  /* no vector below 16 delivered */
	vlapic_ack(l, vec);
	FUZZ_CHECK(fv_vec_set(l, LAPIC_ISR, (unsigned)vec) && !fv_vec_set(l, LAPIC_IRR, (unsigned)vec));
}

static void fv_time(struct fv_group *g, struct fuzz_in *in)
{
	uint8_t b = fuzz_u8(in);

	fv_clk += b < 0xc0 ? b : b < 0xf0 ? fuzz_u16(in) : fuzz_u32(in);
	for (unsigned i = 0; i < g->n; i++)
		if (vtimer_due(&g->l[i]->timer, fv_clk)) {
			vlapic_timer_expired(g->l[i], fv_clk);
			/* not due again before time moves, but a periodic
			 * timer that fell behind may re-arm at now */
			FUZZ_CHECK(!g->l[i]->timer.armed ||
				   (int64_t)(g->l[i]->timer.target - fv_clk) >= 0);
		}
}

/* APIC-write exit: the CPU stored the value, then vmm/ runs the effects. */
static void fv_apicv(struct vlapic *l, struct fuzz_in *in)
{
	uint32_t off = fv_hot[fuzz_u8(in) % ARRAY_SIZE(fv_hot)], val = fuzz_u32(in);

	if (vlapic_mode(l) != VLAPIC_XAPIC || off == LAPIC_TMCCT || off == LAPIC_PPR ||
	    off == LAPIC_IRR || off == LAPIC_ISR || off == LAPIC_TMR || off == LAPIC_SELF_IPI ||
	    off == LAPIC_ESR)
		return;                 /* the CPU does not trap-write those */
	vlapic_set(l, off, val);
	vlapic_apicv_write(l, off);
}

/* One operation on vCPU `i` of g; false when the input is used up. The
 * ICR is left to the caller (fuzz_icr.c compares its two paths). */
static bool fv_step(struct fv_group *g, struct fuzz_in *in, unsigned *op_out, unsigned *cpu_out)
{
	uint8_t op, cpu;
	struct vlapic *l;
	uint64_t v;

	if (!in->n)
		return false;
	op = fuzz_u8(in);
	cpu = fuzz_u8(in);
	l = g->l[cpu % g->n];
	*op_out = op % 20;
	*cpu_out = cpu % g->n;
	switch (op % 20) {
	case 0: case 1: case 2:
		fv_mmio(l, in, true);
		break;
	case 3:
		fv_mmio(l, in, false);
		break;
	case 4: case 5:
		fv_wrmsr(l, in);
		break;
	case 6:
		fv_rdmsr(l, in);
		break;
	case 7:
		fv_base(l, in);
		break;
	case 8: case 9:
		fv_accept(l, in);
		break;
	case 10: case 11:
		fv_take(l);
		break;
	case 12:
		vlapic_eoi(l);
		break;
	case 13:
		fv_time(g, in);
		break;
	case 14:                                        /* TSC deadline */
		v = fuzz_u8(in) & 1 ? fv_clk + fuzz_u16(in) : fuzz_u64(in);
		FUZZ_CHECK(vlapic_wrmsr(l, MSR_IA32_TSC_DEADLINE, v) == 0);
		break;
	case 15:
		vlapic_take_nmi(l);
		if (fuzz_u8(in) & 1)
			l->init_pending = l->sipi_pending = false;
		break;
	case 16:
		fv_apicv(l, in);
		break;
	case 17:                                        /* MOV to CR8 */
		vlapic_set(l, LAPIC_TPR, (fuzz_u8(in) & 0xfu) << 4);
		vlapic_tpr_changed(l);
		break;
	case 18:                                        /* the guest TSC jumps */
		v = fuzz_u32(in);
		vlapic_tsc_moved(l, (int64_t)(int32_t)(uint32_t)v);
		break;
	default:
		if (fuzz_u8(in) < 8)
			vlapic_reset(l, fuzz_u8(in) & 1);
		break;
	}
	return true;
}

#endif
