// SPDX-License-Identifier: BSD-2-Clause
/*
 * Posted interrupts (SDM Vol. 3C, "Posted-Interrupt Processing"): an
 * interrupt for a vCPU running on another CPU goes into that vCPU's
 * posted-interrupt descriptor and a notification IPI; a CPU in non-root
 * mode moves it into the virtual APIC itself and delivers it without a
 * VM exit. A notification that finds its CPU in root mode (or halted) is
 * an ordinary host interrupt, and the descriptor is folded into IRR
 * before the next entry. Used with virtual-interrupt delivery only.
 *
 * Software folds the descriptor only after such a root-mode notification:
 * one still in flight is then processed by the CPU with the requests it
 * announces. A notification can still find PIR empty (a fold took it
 * after a second sender set ON again and sent its IPI); Bochs 3.0 without
 * scripts/bochs-patches/0006 then delivers vector 0xff, which wedges the
 * guest, and vcpu_calib.c's probe 4 keeps posted interrupts off there.
 */
#include "drivers/apic.h"
#include "vmm/host/irq.h"
#include "vmm/apic/vapic.h"
#include "vmm/host/mem.h"
#include "vmm/host/percpu.h"
#include "vmm/host/platform.h"
#include "vmm/vcpu/vcpu_setup.h"
#include "vmx/vmx.h"

#define PI_ON        BIT(0)
#define PI_NV_SHIFT  16
#define PI_NDST_SHIFT 32

struct pi_desc {
	uint64_t pir[4];        /* posted-interrupt requests, one bit a vector */
	uint64_t ctl;           /* ON, SN, notification vector, destination */
	uint64_t reserved[3];
} __aligned(64);

_Static_assert(sizeof(struct pi_desc) == 64,
	       "posted-interrupt descriptor is 64 bytes");

bool vapic_pi_usable(const struct guest *g)
{
	return g->apicv && platform.vmx.posted_intr;
}

/* On the vCPU's own CPU: the descriptor names this CPU as destination. */
void vapic_pi_init(struct vcpu *v)
{
	struct pcpu *p = this_cpu();
	uint64_t ndst = apic_caps.x2apic ? p->apic_id : p->apic_id << 8;

	if (!vapic_pi_usable(v->guest))
		return;
	v->pi = mem_alloc(sizeof(*v->pi));
	v->pi->ctl = ((uint64_t)VEC_POSTED << PI_NV_SHIFT) | (ndst << PI_NDST_SHIFT);
	vmwrite(VMCS_POSTED_INTR_NV, VEC_POSTED);
	vmwrite(VMCS_POSTED_INTR_DESC, (uint64_t)v->pi);
}

void vapic_pi_free(struct vcpu *v)
{
	if (v->pi)
		mem_free(v->pi, sizeof(*v->pi));
}

/* Posted-interrupt processing goes with virtual-interrupt delivery. */
void vapic_pi_enable(struct vcpu *v, bool on)
{
	if (!v->pi)
		return;
	on = on && !v->pi_empty_erratum;        /* vcpu_calib.c, probe 4 */
	vcpu_set_ctl(&v->cached_pin_ctls, VMCS_PIN_CTLS, PIN_POSTED_INTR, on);
	WRITE_ONCE(v->pi_on, on);       /* what other CPUs look at */
}

/* vec's bit in v's PIR: a post's request, the notification apart. */
static inline __attribute__((always_inline)) void pir_set(struct vcpu *v, uint8_t vec)
{
	__atomic_fetch_or(&v->pi->pir[vec / 64], BIT(vec % 64), __ATOMIC_RELEASE);
}

/* The post itself, shared by vapic_pi_post() and its dry run: PIR, ON,
 * and the notification to p - one per batch: whoever sets ON sends it.
 * Inlined into each, so vapic_pi_post()'s code is what it was alone. */
static inline __attribute__((always_inline)) bool
pi_post_to(struct vcpu *v, const struct pcpu *p, uint8_t vec)
{
	pir_set(v, vec);
	if (unlikely(__atomic_fetch_or(&v->pi->ctl, PI_ON, __ATOMIC_ACQ_REL) & PI_ON))
		return true;
	apic_send_ipi(p->apic_id, VEC_POSTED);
	return true;
}

/* The vlapic's ops->post itself (vapic.c), no wrapper: it is on the path
 * of every IPI between vCPUs, before the notification. */
bool vapic_pi_post(struct vlapic *l, uint8_t vec)
{
	struct vcpu *v = l->owner;
	struct pcpu *p = cpus[v->cpu];

	if (!READ_ONCE(v->pi_on) || !p || p == this_cpu())
		return false;
	return pi_post_to(v, p, vec);
}

/*
 * A batch's hold sets ON before the post sets PIR, the reverse of
 * pi_post_to()'s order; still no request is stranded, as the release
 * notifies every held CPU whatever ON was before:
 * - a notification processed between the hold and the post (by the CPU
 *   in non-root mode, or vapic_pi_sync()) clears ON without our vector,
 *   and the release's notification delivers it;
 * - another sender that finds ON set sends nothing, and the release's
 *   notification, after its PIR write too, delivers its vector as well.
 * A notification that finds PIR empty is harmless where posting is on
 * (vcpu_calib.c, probe 4). Nothing is sent before the release, so the
 * housekeeper can time it to the target as it times a lone post.
 * A PIR bit set while the vCPU is held stands until the release: a
 * notification another sender had in flight before the hold, arriving
 * then, would deliver it before the target. So the housekeeper sets the
 * PIR bits last, after the holds and the destinations, a few
 * instructions a vCPU before the send (housekeeper.c, post_group()); set
 * as each vCPU was held and posted, the first one's stood (m - 1) posts,
 * ~130 cycles each in Bochs, which read 2-7 cycles earlier (coincident
 * p50, c85ffaa's code; Bochs moves its clock a round of the CPUs' turns
 * at a time, so such figures move with the phase of the deadline).
 */
static inline __attribute__((always_inline)) bool
pi_hold_to(struct vcpu *v, const struct pcpu *p, struct pi_batch *b)
{
	__atomic_fetch_or(&v->pi->ctl, PI_ON, __ATOMIC_ACQ_REL);
	b->apic_id[b->n++] = p->apic_id;
	return true;
}

bool vapic_pi_hold(struct vcpu *v, struct pi_batch *b)
{
	struct pcpu *p = cpus[v->cpu];

	if (!v->pi || !READ_ONCE(v->pi_on) || !p || p == this_cpu())
		return false;
	return pi_hold_to(v, p, b);
}

/* The hold of the dry vCPU of vapic_pi_dry_new(), its checks included
 * (the last turned around): for timing it (housekeeper.c). */
bool vapic_pi_hold_dry(struct vcpu *v, struct pi_batch *b)
{
	struct pcpu *p = cpus[v->cpu];

	if (!v->pi || !READ_ONCE(v->pi_on) || !p || p != this_cpu())
		return false;
	return pi_hold_to(v, p, b);
}

void vapic_pi_post_held(struct vcpu *v, uint8_t vec)
{
	pir_set(v, vec);
}

void vapic_pi_release_prepare(struct pi_batch *b)
{
	b->ndest = apic_caps.x2apic ? apic_x2apic_dests(b->apic_id, b->n, b->dest) : 0;
}

void vapic_pi_release_send(struct pi_batch *b)
{
	if (apic_caps.x2apic) {
		for (uint32_t i = 0; i < b->ndest; i++)
			if (b->dest[i].logical)
				apic_send_ipi_logical(b->dest[i].dest, VEC_POSTED);
			else
				apic_send_ipi(b->dest[i].dest, VEC_POSTED);
	} else {
		for (uint32_t i = 0; i < b->n; i++)
			apic_send_ipi(b->apic_id[i], VEC_POSTED);
	}
	b->n = b->ndest = 0;
}

/* For the housekeeper's first lead (housekeeper.c, lead_seed()): the
 * post vapic_pi_post() makes, its checks included, by the dry vCPU
 * l->owner of vapic_pi_dry_new() - on this CPU, so the last check is
 * turned around and the notification comes here, where vapic_pi_irq()
 * only EOIs it. */
bool vapic_pi_post_dry(struct vlapic *l, uint8_t vec)
{
	struct vcpu *v = l->owner;
	struct pcpu *p = cpus[v->cpu];

	if (!READ_ONCE(v->pi_on) || !p || p != this_cpu())
		return false;
	return pi_post_to(v, p, vec);
}

/* lead_seed()'s dry vCPU: on this CPU, posting on, a descriptor of its
 * own (vapic_pi_clear() empties it between runs); nothing else of it is
 * set or read. */
struct vcpu *vapic_pi_dry_new(void)
{
	struct vcpu *v = mem_alloc(sizeof(*v));

	v->cpu = this_cpu()->index;
	v->pi = mem_alloc(sizeof(*v->pi));
	v->pi_on = true;
	return v;
}

void vapic_pi_dry_free(struct vcpu *v)
{
	mem_free(v->pi, sizeof(*v->pi));
	mem_free(v, sizeof(*v));
}

bool vapic_pi_pending(const struct vcpu *v)
{
	return v->pi && (__atomic_load_n(&v->pi->ctl, __ATOMIC_ACQUIRE) & PI_ON);
}

void vapic_pi_take_notification(struct vcpu *v)
{
	/* One instruction after STI's shadow: the window for an interrupt
	 * already pending. */
	if (vapic_pi_pending(v))
		__asm__ volatile("sti; nop; cli" ::: "memory");
}

/* A notification that found this CPU in root mode (or halted) is an
 * ordinary host interrupt: note it for vapic_pi_sync(). */
static void vapic_pi_irq(uint8_t vector)
{
	struct vcpu *v = this_cpu()->vcpu;

	if (v && v->pi)
		WRITE_ONCE(v->pi_notified, true);
	apic_eoi();
}

void vapic_pi_host_init(void)
{
	irq_register(VEC_POSTED, vapic_pi_irq);
}

void vapic_pi_sync(struct vcpu *v)
{
	uint32_t *irr = (uint32_t *)(v->lapic->page + LAPIC_IRR);

	if (vapic_pi_idle(v))
		return;
	WRITE_ONCE(v->pi_notified, false);
	if (!(READ_ONCE(v->pi->ctl) & PI_ON))
		return;
	__atomic_fetch_and(&v->pi->ctl, ~PI_ON, __ATOMIC_ACQ_REL);
	for (unsigned w = 0; w < 4; w++) {
		uint64_t bits = __atomic_exchange_n(&v->pi->pir[w], 0, __ATOMIC_ACQ_REL);

		if (!bits)
			continue;
		/* IRR registers are 32 bits, 16 bytes apart. */
		__atomic_fetch_or(&irr[(2 * w) * 4], (uint32_t)bits, __ATOMIC_RELEASE);
		__atomic_fetch_or(&irr[(2 * w + 1) * 4], (uint32_t)(bits >> 32), __ATOMIC_RELEASE);
		v->intr_dirty = true;
	}
}

void vapic_pi_arm_empty(struct vcpu *v)
{
	for (unsigned w = 0; w < 4; w++)
		__atomic_store_n(&v->pi->pir[w], 0, __ATOMIC_RELAXED);
	__atomic_fetch_or(&v->pi->ctl, PI_ON, __ATOMIC_RELEASE);
}

void vapic_pi_clear(struct vcpu *v)
{
	if (!v->pi)
		return;
	for (unsigned w = 0; w < 4; w++)
		__atomic_store_n(&v->pi->pir[w], 0, __ATOMIC_RELAXED);
	__atomic_fetch_and(&v->pi->ctl, ~PI_ON, __ATOMIC_RELEASE);
}
