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
#include "vmm/hypercall.h"
#include "vmm/lapic_glue.h"
#include "vmm/log.h"
#include "vmm/mem.h"
#include "vmm/msr.h"
#include "vmm/percpu.h"
#include "vmm/platform.h"
#include "vmm/vcpu_timer.h"
#include "vmx/vmx.h"

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
static uint64_t op_now(struct vlapic *l)
{
	struct vcpu *v = owner(l);

	return v->regs.exit_tsc - v->exit_tsc + v->tsc_offset;
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

static bool op_post(struct vlapic *l, uint8_t vec)
{
	return vapic_pi_post(owner(l), vec);
}

static const struct vlapic_ops vapic_ops = {
	.now = op_now, .timer_update = op_timer_update, .notify = op_notify,
	.mode_changed = op_mode_changed, .notice = op_notice, .post = op_post,
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

void vapic_guest_init(struct guest *g)
{
	const char *why;

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

/* x2APIC MSRs in the bitmap: with APICv, reads of existing registers come
 * from the virtual-APIC page, except TMCCT (derived) and ICR (the CPU
 * would read its high half from the wrong offset); writes exit except
 * TPR, EOI and SELF IPI, which the CPU virtualizes. */
static void msr_bitmap_x2apic(struct vcpu *v, bool x2apic_apicv, bool vid)
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

		msr_bitmap_set(v->msr_bitmap, msr, rd, wr);
	}
}

/* EPT at the guest's APIC base: the APIC-access page with APICv in xAPIC
 * mode, nothing otherwise (accesses exit as EPT violations), RAM again
 * where a base moved away from RAM. */
static void ept_apic_page(struct vcpu *v, uint64_t gpa, bool apic_access)
{
	struct guest *g = v->guest;
	uint64_t hpa = 0, flags = 0;

	if (apic_access) {
		hpa = (uint64_t)g->apic_access_page;
		flags = EPT_RWX | EPT_MT_UC;
	} else if (gpa < g->ram_size) {
		hpa = (uint64_t)g->ram + gpa;
		flags = EPT_RWX | EPT_MT_WB;
	}
	if (!ept_map(&g->ept, gpa, hpa, PAGE_SIZE, flags))
		guest_end(g, GUEST_STATUS_KILLED, "out of memory for EPT tables");
	invept(INVEPT_SINGLE, g->eptp);
}

static void apicv_controls(struct vcpu *v, enum vlapic_mode mode, bool vid)
{
	uint32_t proc2 = (uint32_t)vmread(VMCS_PROC_CTLS2) & ~(uint32_t)PROC2_APICV_ALL;

	proc2 |= mode == VLAPIC_X2APIC ? PROC2_APICV_X2APIC : PROC2_APICV_XAPIC;
	if (!vid)
		proc2 &= ~(uint32_t)BIT(PROC2_VIRT_INTR_DELIVERY);
	vmwrite(VMCS_PROC_CTLS2, proc2);
}

/* Is another vCPU of the guest using the APIC page at gpa? */
static bool base_shared(const struct vcpu *v, uint64_t gpa)
{
	for (uint32_t i = 0; i < v->guest->nvcpus; i++) {
		const struct vcpu *o = v->guest->vcpus[i];

		if (o && o != v && o->apic_mapped_base == gpa)
			return true;
	}
	return false;
}

void vapic_mode_sync(struct vcpu *v)
{
	struct vlapic *l = v->lapic;
	struct guest *g = v->guest;
	enum vlapic_mode mode = vlapic_mode(l);
	uint64_t base = mode == VLAPIC_XAPIC ? vlapic_base_addr(l) : ~0ull;
	bool apicv = g->apicv;

	v->apic_mode_dirty = false;
	if (base != v->apic_mapped_base) {
		/* vCPUs share the EPT: map or unmap under the guest's lock,
		 * and leave a page alone while another vCPU still uses it. */
		spin_lock(&g->ept_lock);
		if (v->apic_mapped_base != ~0ull && !base_shared(v, v->apic_mapped_base))
			ept_apic_page(v, v->apic_mapped_base, false);
		if (base != ~0ull && !base_shared(v, base))
			ept_apic_page(v, base, apicv);
		v->apic_mapped_base = base;
		spin_unlock(&g->ept_lock);
	}
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
	v->apic_mapped_base = ~0ull;
	vlapic_init(l, v->id, &g->lapics, &vapic_ops, v, platform.tb.apic_div, min_period);
	/* The guest's physical-address width (CPUID is passed through). */
	l->maxphyaddr = (uint8_t)cpuid(0x80000008, 0).eax;
	/* Published last: from here on other vCPUs' IPIs may reach it. */
	__atomic_store_n(&g->lapics.member[v->id], l, __ATOMIC_RELEASE);
	if (g->lapics.n <= v->id)
		g->lapics.n = v->id + 1;
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
	vapic_mode_sync(v);
}

int vcpu_msr_read_apic(struct vcpu *v, uint32_t msr, uint64_t *val)
{
	return vlapic_rdmsr(v->lapic, msr, val);
}

int vcpu_msr_write_apic(struct vcpu *v, uint32_t msr, uint64_t val)
{
	int r = vlapic_wrmsr(v->lapic, msr, val);

	v->intr_dirty = true;   /* an EOI or ICR write may have moved IRR/ISR */
	return r;       /* a mode change is synced before the next entry */
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

uint32_t vcpu_info_flags(struct vcpu *v)
{
	return (v->guest->apicv ? TV_INFO_APICV : 0) |
	       ((uint32_t)vcpu_timer_backend(v) << TV_INFO_TIMER_SHIFT);
}
