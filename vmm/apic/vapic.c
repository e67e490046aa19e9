// SPDX-License-Identifier: BSD-2-Clause
/*
 * vCPU <-> virtual local APIC: creation, the services lapic/ asks for
 * (struct vlapic_ops), the MSR interface, and APIC virtualization.
 *
 * With APICv the vlapic's register page is the CPU's virtual-APIC page:
 * the CPU reads registers from it, tracks IRR/ISR/PPR in it (virtual-
 * interrupt delivery) and traps writes for us (APIC-write exits). Without
 * it every access exits and lapic/ does the same work in software. The
 * guest sees the same APIC either way.
 */
#include "drivers/io.h"
#include "drivers/string.h"
#include "vmm/apic/housekeeper.h"
#include "vmm/apic/vapic.h"
#include "vmm/host/log.h"
#include "vmm/host/mem.h"
#include "vmm/vcpu/msr_bitmap.h"
#include "vmm/host/percpu.h"
#include "vmm/host/platform.h"
#include "vmm/trace.h"
#include "vmm/apic/vcpu_timer.h"
#include "vmx/vmx.h"
#include "vmm/guest.h"
#include "vmm/vcpu/vcpu_run.h"

#define PROC2_APICV_XAPIC  (BIT(PROC2_VIRT_APIC_ACCESS) | BIT(PROC2_APIC_REG_VIRT) | \
			    BIT(PROC2_VIRT_INTR_DELIVERY))
#define PROC2_APICV_X2APIC (BIT(PROC2_VIRT_X2APIC) | BIT(PROC2_APIC_REG_VIRT) | \
			    BIT(PROC2_VIRT_INTR_DELIVERY))
#define PROC2_APICV_ALL    (PROC2_APICV_XAPIC | PROC2_APICV_X2APIC)
#define NOTICE_LIMIT       4u

static struct vcpu *owner(struct vlapic *l)
{
	return l->owner;
}

/* Register accesses happen at the guest's instruction, not when tickvisor
 * gets round to them: a TMICT write starts counting, and TMCCT is read,
 * when the instruction ran, the measured exit cost before the stub's
 * exit TSC. */
/* The guest TSC when the guest left for the current exit. */
static inline uint64_t guest_now(const struct vcpu *v)
{
	return v->regs.exit_tsc - v->exit_tsc + v->tsc_offset;
}

static uint64_t op_now(struct vlapic *l)
{
	return guest_now(owner(l));
}

static void op_timer_update(struct vlapic *l)
{
	owner(l)->timer_dirty = true;
}

static void op_notify(struct vlapic *l)
{
	WRITE_ONCE(owner(l)->intr_dirty, true);
	vcpu_kick(owner(l));
}

static void op_mode_changed(struct vlapic *l)
{
	owner(l)->apic_mode_dirty = true;
}

static void op_notice(struct vlapic *l, const char *msg)
{
	struct vcpu *v = owner(l);

	if (v->notices++ < NOTICE_LIMIT)
		pr_info("guest %s: vcpu%u: %s%s", v->guest->spec->name, v->id, msg,
			v->notices == NOTICE_LIMIT ? " (further notices suppressed)" : "");
}

static const struct vlapic_ops vapic_ops = {
	.now = op_now, .timer_update = op_timer_update, .notify = op_notify,
	.mode_changed = op_mode_changed, .notice = op_notice, .post = vapic_pi_post,
	.trace_ipi = trace_ipi,
};

bool vapic_apicv_usable(const struct guest *g, const char **why_not)
{
	const struct vmx_caps *c = &platform.vmx;

	*why_not = NULL;
	if (!g->spec->opts.apicv)
		*why_not = "off by option";
	else if (!c->tpr_shadow || !c->apic_access || !c->apic_reg_virt || !c->vid ||
		 !c->x2apic_virt)
		*why_not = "the CPU lacks TPR shadow, APIC-access, APIC-register virtualization, "
			   "virtual-interrupt delivery or x2APIC virtualization";
	return !*why_not;
}

/* x2APIC MSRs in the bitmap: with APICv, reads of existing registers come
 * from the virtual-APIC page, except TMCCT (derived) and ICR (the CPU
 * would read its high half from the wrong offset); writes exit except
 * TPR, EOI and SELF IPI, which the CPU virtualizes. */
static void msr_bitmap_x2apic_build(uint8_t *bm, bool x2apic_apicv, bool vid)
{
	for (uint32_t msr = LAPIC_MSR_BASE; msr <= LAPIC_MSR_LAST; msr++) {
		uint32_t off = LAPIC_OFF(msr);
		bool exists = vlapic_x2apic_reg_exists(off);
		bool rd = !x2apic_apicv || !exists || off == LAPIC_TMCCT || off == LAPIC_ICR_LO ||
			  off == LAPIC_EOI || off == LAPIC_SELF_IPI;
		/* EOI and SELF IPI are the CPU's only with virtual-interrupt
		 * delivery; without it they would reach the real APIC. */
		bool wr = !x2apic_apicv || !(off == LAPIC_TPR ||
					     (vid && (off == LAPIC_EOI || off == LAPIC_SELF_IPI)));

		msr_bitmap_set(bm, msr, rd, wr);
	}
}

/* Where the x2APIC range's bits sit in an MSR bitmap: the read-low and
 * write-low quarters (msr_bitmap_set()), one bit per MSR from 0x800. */
#define X2APIC_RD_AT    (LAPIC_MSR_BASE / 8)
#define X2APIC_WR_AT    (2048 + LAPIC_MSR_BASE / 8)
#define X2APIC_BYTES    ((LAPIC_MSR_LAST - LAPIC_MSR_BASE + 1) / 8)

/* The x2APIC range of an MSR bitmap, by x2APIC mode with APICv and by
 * virtual-interrupt delivery: its read bits, then its write bits. Built
 * once at boot (vapic_host_init()): a vCPU's APIC mode change copies 64
 * bytes. Built bit by bit (256 MSRs, each vlapic_x2apic_reg_exists() and
 * two bit updates) it cost ~17,000 instructions at the entry after the
 * change: the first IPI to a vCPU that had just entered x2APIC mode and
 * halted came back 17,000 cycles late (smp_pingpong's x2APIC round trip
 * max, make bench). */
static uint8_t x2apic_msr_bits[2][2][2 * X2APIC_BYTES];

void vapic_host_init(void)
{
	uint8_t *scratch = mem_alloc(PAGE_SIZE);

	for (unsigned a = 0; a < 2; a++)
		for (unsigned d = 0; d < 2; d++) {
			uint8_t *bits = x2apic_msr_bits[a][d];

			msr_bitmap_x2apic_build(scratch, a, d);
			memcpy(bits, scratch + X2APIC_RD_AT, X2APIC_BYTES);
			memcpy(bits + X2APIC_BYTES, scratch + X2APIC_WR_AT, X2APIC_BYTES);
		}
	mem_free(scratch, PAGE_SIZE);
}

static void msr_bitmap_x2apic(struct vcpu *v, bool x2apic_apicv, bool vid)
{
	const uint8_t *bits = x2apic_msr_bits[x2apic_apicv][vid];

	memcpy(v->msr_bitmap + X2APIC_RD_AT, bits, X2APIC_BYTES);
	memcpy(v->msr_bitmap + X2APIC_WR_AT, bits + X2APIC_BYTES, X2APIC_BYTES);
}

void vapic_guest_init(struct guest *g)
{
	const char *why;

	g->apic_access_gpa = ~0ull;
	g->ept_pages_ram = g->ept.pages;
	g->apicv = vapic_apicv_usable(g, &why);
	if (g->apicv)
		g->apic_access_page = mem_alloc(PAGE_SIZE);
	else if (g->spec->opts.apicv)
		pr_info("guest %s: APIC virtualization unavailable (%s): emulating in software",
			g->spec->name, why);
}

void vapic_guest_destroy(struct guest *g)
{
	if (g->apic_access_page)
		mem_free(g->apic_access_page, PAGE_SIZE);
}


/*
 * One EPT serves all vCPUs of a guest, but each vCPU has its own APIC base
 * (SDM Vol. 3A, "Relocating the Local APIC Registers": the base is per
 * processor). What the EPT maps at a page that is some vCPU's base:
 * - the APIC-access page, when APICv is used and every vCPU's xAPIC sits
 *   there (the usual case): the CPU virtualizes the accesses;
 * - nothing otherwise: each access is an EPT violation, and the exit
 *   handler asks the vCPU that made it whether the page is its APIC
 *   (vapic_mmio_claims), else it is unassigned memory or RAM hidden
 *   from the EPT (vmm/dev/dev_mmio_hole.c). A vCPU in x2APIC mode or with its APIC
 *   disabled must not reach the APIC-access page: with "virtualize APIC
 *   accesses" off for it, it would read and write that page as memory.
 * A page no vCPU uses any more is RAM again, or nothing outside RAM.
 */
#define EPT_APIC_TABLES_PER_VCPU 4u     /* PDPT, PD, PT of one base, + a split */

static void ept_apic_page_apply(struct vcpu *v, uint64_t gpa)
{
	struct guest *g = v->guest;
	bool used = false, all = true;
	uint64_t hpa = 0, flags = 0;

	for (uint32_t i = 0; i < g->nvcpus; i++) {
		if (READ_ONCE(g->vcpus[i]->apic_mapped_base) == gpa)
			used = true;
		else
			all = false;
	}
	if (used && all && g->apicv) {
		hpa = (uint64_t)g->apic_access_page;
		flags = EPT_RWX | EPT_MT_UC;
		g->apic_access_gpa = gpa;
	} else {
		if (g->apic_access_gpa == gpa)
			g->apic_access_gpa = ~0ull;
		if (!used && gpa < g->ram_size) {
			hpa = (uint64_t)g->ram + gpa;
			flags = EPT_RWX | EPT_MT_WB;
		}
	}
	/* Unmapping frees the tables it empties (vmx/ept.c), so a guest
	 * moving its base around holds tables for its current bases only;
	 * the bound below is what that allows, a backstop. */
	if (!ept_map(&g->ept, gpa, hpa, PAGE_SIZE, flags) ||
	    g->ept.pages > g->ept_pages_ram + EPT_APIC_TABLES_PER_VCPU * g->nvcpus)
		guest_end(g, GUEST_STATUS_KILLED, "out of EPT tables for APIC pages (%u held)",
			  g->ept.pages);
}

/*
 * INVEPT acts on the CPU that executes it. The other vCPUs of the guest
 * flush in vapic_mode_sync() before their next entry: the kick makes a
 * running one exit at once (its CPU's interrupts are off from the pending
 * work checks to VM entry, so the IPI cannot be missed), one halted or
 * waiting for SIPI flushes before it enters again.
 */
static void ept_flush_all(struct vcpu *v)
{
	struct guest *g = v->guest;

	__atomic_add_fetch(&g->ept_gen, 1, __ATOMIC_SEQ_CST);
	v->ept_gen_seen = g->ept_gen;
	invept(INVEPT_SINGLE, g->eptp);
	for (uint32_t i = 0; i < g->nvcpus; i++) {
		struct vcpu *o = g->vcpus[i];

		if (o != v) {
			WRITE_ONCE(o->apic_mode_dirty, true);
			vcpu_kick(o);
		}
	}
}

static void ept_flush_if_stale(struct vcpu *v)
{
	uint32_t gen = __atomic_load_n(&v->guest->ept_gen, __ATOMIC_SEQ_CST);

	if (v->ept_gen_seen != gen) {
		v->ept_gen_seen = gen;
		invept(INVEPT_SINGLE, v->guest->eptp);
	}
}

/* v's xAPIC base is now `base` (~0: not in xAPIC mode): publish it and
 * bring the pages it left and reached up to date, for every vCPU. */
static void ept_apic_base_moved(struct vcpu *v, uint64_t base)
{
	struct guest *g = v->guest;
	uint64_t old = v->apic_mapped_base;

	spin_lock(&g->ept_lock);
	WRITE_ONCE(v->apic_mapped_base, base);
	if (old != ~0ull && old != base)
		ept_apic_page_apply(v, old);
	if (base != ~0ull)
		ept_apic_page_apply(v, base);
	ept_flush_all(v);
	spin_unlock(&g->ept_lock);
}

static uint64_t vapic_xapic_base(struct vlapic *l)
{
	return vlapic_mode(l) == VLAPIC_XAPIC ? vlapic_base_addr(l) : ~0ull;
}

static void apicv_controls(struct vcpu *v, enum vlapic_mode mode, bool vid)
{
	uint32_t proc2 = (uint32_t)vmread(VMCS_PROC_CTLS2) & ~(uint32_t)PROC2_APICV_ALL;

	proc2 |= mode == VLAPIC_X2APIC ? PROC2_APICV_X2APIC : PROC2_APICV_XAPIC;
	if (!vid)
		proc2 &= ~(uint32_t)BIT(PROC2_VIRT_INTR_DELIVERY);
	vmwrite(VMCS_PROC_CTLS2, proc2);
}

void vapic_mode_sync(struct vcpu *v)
{
	struct vlapic *l = v->lapic;
	struct guest *g = v->guest;
	enum vlapic_mode mode = vlapic_mode(l);
	uint64_t base = vapic_xapic_base(l);
	bool apicv = g->apicv;

	/* Cleared before the generation is read: a flush asked for after
	 * this point sets it again. */
	WRITE_ONCE(v->apic_mode_dirty, false);
	if (base != v->apic_mapped_base)
		ept_apic_base_moved(v, base);
	else
		ept_flush_if_stale(v);
	/* Virtual-interrupt delivery only while the APIC is software-enabled:
	 * the CPU's self-IPI virtualization does not look at SVR, and a
	 * disabled APIC must not take fixed interrupts. Without it the same
	 * page is driven by lapic/ in software. */
	l->hw_vid = apicv && vlapic_sw_enabled(l);
	v->intr_dirty = true;
	msr_bitmap_x2apic(v, apicv && mode == VLAPIC_X2APIC, l->hw_vid);
	if (!l->hw_vid)
		vapic_pi_enable(v, false);
	if (apicv)
		apicv_controls(v, mode, l->hw_vid);
	if (l->hw_vid)
		vapic_pi_enable(v, true);
	vapic_pi_sync(v);
}

void vapic_create(struct vcpu *v)
{
	struct guest *g = v->guest;
	struct vlapic *l = mem_alloc_aligned(sizeof(*l), PAGE_SIZE);
	uint64_t min_period = (uint64_t)g->spec->opts.min_period_us * platform.tb.tsc_hz / 1000000;

	v->lapic = l;
	vlapic_init(l, v->id, &g->lapics, &vapic_ops, v, platform.tb.apic_div, min_period);
	l->trace_ipi = log_trace_on(TRACE_IPI);
	/* Published before any vCPU runs, so the first to map its page
	 * sees where all the others' are. */
	v->apic_mapped_base = vapic_xapic_base(l);
	/* The guest's physical-address width (CPUID is passed through). */
	l->maxphyaddr = (uint8_t)cpuid(0x80000008, 0).eax;
	/* Published last: from here on other vCPUs' IPIs may reach it. */
	vlapic_group_add(&g->lapics, v->id, l);
}

void vapic_vcpu_init(struct vcpu *v)
{
	struct guest *g = v->guest;
	struct vlapic *l = v->lapic;

	if (g->apicv) {
		vmwrite(VMCS_VIRT_APIC_PAGE, (uint64_t)l->page);
		vmwrite(VMCS_APIC_ACCESS_ADDR, (uint64_t)g->apic_access_page);
		vmwrite(VMCS_TPR_THRESHOLD, 0);
		for (unsigned i = 0; i < 4; i++)
			vmwrite(VMCS_EOI_EXIT_BITMAP0 + 2 * i, 0);
		vmwrite(VMCS_GUEST_INTR_STATUS, 0);
		vapic_pi_init(v);
	}
	/* The EPT at this vCPU's (published) base, once. */
	spin_lock(&g->ept_lock);
	if (v->apic_mapped_base != ~0ull)
		ept_apic_page_apply(v, v->apic_mapped_base);
	ept_flush_all(v);
	spin_unlock(&g->ept_lock);
	vapic_mode_sync(v);
}

int vapic_msr_read(struct vcpu *v, uint32_t msr, uint64_t *val)
{
	int r;

	housekeeper_timer_lock(v);      /* TMCCT, IA32_TSC_DEADLINE */
	r = vlapic_rdmsr(v->lapic, msr, val);
	housekeeper_timer_unlock(v);
	return r;
}

/*
 * After an emulated APIC register write: RVI/SVI are synced from the page
 * (vapic_inject.c, intr_dirty) when the write may have moved IRR or ISR
 * (an EOI, an ICR or SELF IPI write). The timer's LVT, count, divide and
 * deadline registers cannot, but by an expiry (a count that ran out
 * before the write, or before a mode switch), whose interrupt reaches
 * IRR through vlapic_accept(), and that marks intr_dirty itself
 * (op_notify; an expiry on the vCPU's own CPU is never posted, see
 * vapic_pi_post()).
 * Those writes, the ones a guest makes for every timer it programs, skip
 * the sync: two IRR/ISR scans and a VMWRITE before the entry.
 */
bool vapic_timer_reg(uint32_t off)
{
	return off == LAPIC_TMICT || off == LAPIC_TDCR || off == LAPIC_LVT_TIMER;
}

/*
 * A write that moved the guest's timer (IA32_TSC_DEADLINE, LVTT, TMICT,
 * TDCR) is resumable on the preemption-timer backend (EXIT_RESUMABLE,
 * vmm/exit/exit_fast.c): the timer is re-armed here, as
 * vcpu_timer_before_entry() would before the next entry (nothing moved
 * when the write was ignored). A host-timer backend has its host timer to
 * reprogram and drain before the entry: 0. (The x2APIC ICR writes that
 * are resumable never come here: exit_wrmsr() takes them.)
 */
static inline __attribute__((always_inline)) int timer_moved(struct vcpu *v)
{
	if (v->timer_kind != TIMER_PREEMPT) {
		if (unlikely(log_trace_on(TRACE_TIMER)))
			trace_timer_arm(v);
		return 0;
	}
	if (unlikely(log_trace_on(TRACE_TIMER))) {
		trace_timer_arm(v);
		if (v->timer_dirty)
			vcpu_timer_before_entry(v);
	} else if (v->timer_dirty) {
		vcpu_timer_rearm_preempt(v);
	}
	return EXIT_RESUMABLE;
}

static int deadline_write(struct vcpu *v, uint64_t val)
{
	vlapic_write_tsc_deadline_at(v->lapic, val, guest_now(v));
	return timer_moved(v);
}

/*
 * After a write to LVTT, TMICT or TDCR (an APIC-write exit or an x2APIC
 * WRMSR), the housekeeper's lock released: timer=posted is resumable as
 * the TSC-deadline write is (housekeeper_deadline_write()), the others as
 * timer_moved() says. Linux writes LVTT whenever its clockevent leaves
 * or re-enters the oneshot-stopped state, on a tickless CPU about every
 * other wake-up.
 */
static inline __attribute__((always_inline)) int timer_reg_written(struct vcpu *v)
{
	if (v->timer_kind == TIMER_POSTED) {
		if (log_trace_on(TRACE_TIMER))
			trace_timer_arm(v);
		return EXIT_RESUMABLE;
	}
	return timer_moved(v);
}

int vapic_timer_reg_written(struct vcpu *v)
{
	return timer_reg_written(v);
}

static __attribute__((noinline)) int apic_msr_write(struct vcpu *v, uint32_t msr, uint64_t val)
{
	int r;

	housekeeper_timer_lock(v);
	r = vlapic_wrmsr(v->lapic, msr, val);
	housekeeper_timer_unlock(v);
	if (msr != LAPIC_MSR(LAPIC_TMICT) && msr != LAPIC_MSR(LAPIC_TDCR) &&
	    msr != LAPIC_MSR(LAPIC_LVT_TIMER)) {        /* vapic_timer_reg()'s */
		v->intr_dirty = true;   /* an EOI or ICR write may have moved IRR/ISR */
		return r;               /* a mode change is synced before the next entry */
	}
	return r ? r : timer_reg_written(v);
}

int vapic_deadline_write(struct vcpu *v, uint64_t val)
{
	/* timer=posted is the backend of every vCPU of a guest with a
	 * housekeeper (vcpu_timer_init()). */
	return unlikely(v->timer_kind == TIMER_POSTED)
		       ? housekeeper_deadline_write(v, val, guest_now(v))
		       : deadline_write(v, val);
}

/* A dispatch without a frame: each write pays for its own. */
int vapic_msr_write(struct vcpu *v, uint32_t msr, uint64_t val)
{
	if (msr == MSR_IA32_TSC_DEADLINE)
		return vapic_deadline_write(v, val);
	return apic_msr_write(v, msr, val);
}

uint64_t vapic_read_cr8(struct vcpu *v)
{
	return (vlapic_get(v->lapic, LAPIC_TPR) >> 4) & 0xf;
}

void vapic_write_cr8(struct vcpu *v, uint64_t val)
{
	/* CR8[3:0] is TPR[7:4] (SDM "Task Priority in IA-32e Mode"). */
	vlapic_set(v->lapic, LAPIC_TPR, (uint32_t)(val & 0xf) << 4);
	vlapic_tpr_changed(v->lapic);
}

uint32_t vapic_info_flags(struct vcpu *v)
{
	return (v->guest->apicv ? TV_INFO_APICV : 0) |
	       ((uint32_t)vcpu_timer_backend(v) << TV_INFO_TIMER_SHIFT) |
	       (v->guest->spec->opts.x2apic ? TV_INFO_X2APIC : 0);
}
