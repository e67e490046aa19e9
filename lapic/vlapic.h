/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The virtual local APIC of one vCPU. The register page is the single
 * source of truth (STYLE.md rule 5): it is laid out like the hardware's,
 * in x2APIC format while in x2APIC mode, and with APIC virtualization it
 * is also the CPU's virtual-APIC page. Everything else here is a cache of
 * it or state the page has no room for (pending NMI/INIT/SIPI, the
 * timer's target). Pure C: the services it needs from vmm/ come through
 * struct vlapic_ops, so it is unit-tested on the host.
 */
#ifndef LAPIC_VLAPIC_H
#define LAPIC_VLAPIC_H

#include "lapic/lapic_regs.h"
#include "timer/vtimer.h"

struct vlapic;

/* An IPI as decoded from one ICR write (or SELF IPI register write). */
struct lapic_ipi {
	uint8_t vector;
	uint8_t dm;             /* LAPIC_DM_* */
	uint8_t shorthand;      /* LAPIC_SH_* */
	bool logical;
	bool level_assert;
	bool trigger_level;
	uint32_t dest;          /* 8-bit (xAPIC) or 32-bit (x2APIC) */
	bool x2apic;            /* decoded in x2APIC format */
};

enum vlapic_mode {
	VLAPIC_DISABLED,        /* IA32_APIC_BASE.EN = 0 */
	VLAPIC_XAPIC,
	VLAPIC_X2APIC,
};

struct vlapic_ops {
	/* Guest TSC now. */
	uint64_t (*now)(struct vlapic *l);
	/* The timer target changed (armed, moved or stopped). */
	void (*timer_update)(struct vlapic *l);
	/* Something became pending for l (interrupt, NMI, INIT, SIPI): its
	 * vCPU must notice (kick it if it runs elsewhere, wake it if halted). */
	void (*notify)(struct vlapic *l);
	/* Mode, base address or software-enable changed. */
	void (*mode_changed)(struct vlapic *l);
	/* A notice for the log (rate-limited by the caller). */
	void (*notice)(struct vlapic *l, const char *msg);
	/* Optional: deliver an edge-triggered fixed interrupt to l another
	 * way (posted interrupts, when l's vCPU runs elsewhere); true if it
	 * did, and then IRR and notify() are its business. */
	bool (*post)(struct vlapic *l, uint8_t vec);
	/* Trace point, called only while l->trace_ipi is set: l sends ipi
	 * (t NULL), then once for each APIC it reaches (t). */
	void (*trace_ipi)(struct vlapic *l, const struct vlapic *t, const struct lapic_ipi *ipi);
};

/* The vlapics of one guest, for IPI routing (index = APIC ID = vCPU).
 * Members join by vlapic_group_add(). */
struct vlapic_group {
	uint32_t n;
	struct vlapic *member[TV_MAX_CPUS];
	/* For the ICR fast path, kept by vlapic_group_changed(): for each
	 * 8-bit xAPIC ID, the index + 1 of the one member, not disabled, whose
	 * ID register holds it in bits 31:24; 0 for none, VLAPIC_XAPIC_SHARED
	 * for several. */
	uint8_t xapic_one[256];
	uint32_t lock;          /* serializes vlapic_group_changed() */
};

#define VLAPIC_XAPIC_SHARED 0xffu
_Static_assert(TV_MAX_CPUS < VLAPIC_XAPIC_SHARED, "xapic_one holds a member's index + 1");

struct vlapic {
	uint8_t page[LAPIC_PAGE_SIZE] __aligned(4096); /* register page */
	struct vlapic_group *group;
	const struct vlapic_ops *ops;
	void *owner;                    /* the vCPU, for ops */
	uint32_t id;                    /* initial APIC ID = vCPU index */
	uint64_t base_msr;              /* IA32_APIC_BASE */
	bool hw_vid;                    /* the CPU moves IRR->ISR and does EOI itself */
	bool trace_ipi;                 /* report IPIs to ops->trace_ipi (set by vmm/) */
	uint32_t clock_div;             /* TSC cycles per APIC clock at divide 1 */
	uint8_t maxphyaddr;             /* CPUID.80000008H:EAX[7:0] as the guest sees it */
	uint32_t esr_pending;           /* errors since the last ESR write (atomic) */
	uint32_t nmi_pending;           /* NMIs waiting, 0..VLAPIC_NMI_MAX (atomic) */
	bool init_pending;
	bool sipi_pending;
	uint8_t sipi_vector;
	uint64_t tsc_deadline;          /* IA32_TSC_DEADLINE as the guest reads it */
	struct vtimer timer;
	/* caches, rebuilt when their register is written */
	uint32_t cached_timer_mode;     /* LVTT mode field */
	uint32_t cached_divide;         /* TDCR as a divide value */
};

_Static_assert(__builtin_offsetof(struct vlapic, page) == 0, "page first, 4 KiB aligned");

void vlapic_init(struct vlapic *l, uint32_t id, struct vlapic_group *group,
		 const struct vlapic_ops *ops, void *owner, uint32_t clock_div,
		 uint64_t min_period_tsc);
/* Power-on/INIT state (SDM "Local APIC State After Power-Up/Reset" and
 * "After an INIT Reset"): `keep_base` keeps IA32_APIC_BASE and the ID. */
void vlapic_reset(struct vlapic *l, bool keep_base);

static inline uint32_t vlapic_get(const struct vlapic *l, uint32_t off)
{
	return *(const volatile uint32_t *)(l->page + off);
}

static inline void vlapic_set(struct vlapic *l, uint32_t off, uint32_t v)
{
	*(volatile uint32_t *)(l->page + off) = v;
}

/* Inline, as vlapic_sw_enabled(): every IPI asks them of the sender and
 * of each APIC it reaches. */
static inline enum vlapic_mode vlapic_mode(const struct vlapic *l)
{
	if (!(l->base_msr & APIC_BASE_EN))
		return VLAPIC_DISABLED;
	return (l->base_msr & APIC_BASE_EXTD) ? VLAPIC_X2APIC : VLAPIC_XAPIC;
}

static inline bool vlapic_sw_enabled(const struct vlapic *l)
{
	return vlapic_mode(l) != VLAPIC_DISABLED && (vlapic_get(l, LAPIC_SVR) & LAPIC_SVR_ENABLE);
}

uint64_t vlapic_base_addr(const struct vlapic *l);

/* xAPIC MMIO: a 32-bit access to the register at page offset `off` (bits
 * 1:0 ignored); the caller turns other widths into these. An offset with
 * no xAPIC register raises an illegal-register error (ESR) and reads as 0;
 * write-only registers read as 0, read-only ones ignore writes. Both
 * always return 0. */
int vlapic_mmio_read(struct vlapic *l, uint32_t off, uint32_t *val);
int vlapic_mmio_write(struct vlapic *l, uint32_t off, uint32_t val);
/* MSRs: IA32_APIC_BASE, IA32_TSC_DEADLINE and the x2APIC range.
 * Returns 0, or -1 for #GP. */
int vlapic_rdmsr(struct vlapic *l, uint32_t msr, uint64_t *val);
int vlapic_wrmsr(struct vlapic *l, uint32_t msr, uint64_t val);
/* vlapic_wrmsr() of IA32_TSC_DEADLINE, which never raises #GP, with
 * `now` the guest TSC of the write (what ops->now gives): the write a
 * guest makes per timer it programs, called by the exit path directly,
 * which knows the time without the op. */
void vlapic_write_tsc_deadline_at(struct vlapic *l, uint64_t val, uint64_t now);
/* An ICR write that is a fixed IPI to itself or to one physical
 * destination: true when done, as the register write would have done it,
 * false with nothing done for every other value. x2APIC: WRMSR to its
 * ICR with value icr (else vlapic_wrmsr()). xAPIC: the APIC-write exit
 * of an ICR_LO write, ICR_HI and ICR_LO as the CPU stored them in the
 * page (else vlapic_apicv_write()). */
bool vlapic_x2apic_icr_fast(struct vlapic *l, uint64_t icr);
bool vlapic_xapic_icr_fast(struct vlapic *l);
/* Publishes l as member i of g (other members' IPIs may reach it from
 * here on). */
void vlapic_group_add(struct vlapic_group *g, uint32_t i, struct vlapic *l);
/* A member's xAPIC ID register or mode changed, or a member joined:
 * recomputes g->xapic_one. */
void vlapic_group_changed(struct vlapic_group *g);
/* APIC-write VM exit (APIC-register virtualization): the CPU already
 * stored the value; run the register's side effects. */
void vlapic_apicv_write(struct vlapic *l, uint32_t off);
/* Does the x2APIC register at `off` exist (for the MSR bitmap)? */
bool vlapic_x2apic_reg_exists(uint32_t off);

/* Interrupt state */
int vlapic_highest_irr(const struct vlapic *l);         /* -1: none */
int vlapic_highest_isr(const struct vlapic *l);
uint32_t vlapic_ppr(const struct vlapic *l);
/* Highest IRR vector above PPR, or -1 (APIC software-enabled or not:
 * a software-disabled APIC still delivers what is already in IRR). */
int vlapic_pending_vector(const struct vlapic *l);
/* Injection of `vec` started: IRR -> ISR, PPR follows (software path). */
void vlapic_ack(struct vlapic *l, int vec);
void vlapic_eoi(struct vlapic *l);
/* TPR changed behind the register interface (CR8): PPR follows. */
void vlapic_tpr_changed(struct vlapic *l);
/* An interrupt arrives at l (from its LVT, itself or another vCPU). */
void vlapic_accept(struct vlapic *l, uint32_t dm, uint8_t vec, bool level);
/* NMIs: at most VLAPIC_NMI_MAX wait (one to deliver, one latched behind
 * it); vmm/ trims them to one while the guest blocks NMIs (SDM "NMI
 * Handling"). take: one leaves for injection, false if none waits. */
#define VLAPIC_NMI_MAX 2u
bool vlapic_take_nmi(struct vlapic *l);
void vlapic_nmi_limit(struct vlapic *l, uint32_t max);

/* The guest TSC jumped by delta (IA32_TSC or IA32_TSC_ADJUST write). */
void vlapic_tsc_moved(struct vlapic *l, int64_t delta);
/* Timer expiry processing once the target has passed: delivers LVTT
 * (unless masked) and re-arms a periodic timer. */
void vlapic_timer_expired(struct vlapic *l, uint64_t now);
/* The same without ops->timer_update, for a caller on another CPU that
 * re-arms the expiry itself (timer=posted: the housekeeper, holding the
 * lock that serializes it with every other access to l's timer). Only
 * cross-CPU-safe paths follow: LVTT delivery through vlapic_accept(),
 * posted or with ops->notify. false if nothing was due. */
bool vlapic_timer_fire(struct vlapic *l, uint64_t now);
/* vlapic_timer_fire() in its two steps, for the housekeeper's expiries
 * due together (several vCPUs' at one TSC): the state change first - the
 * count, a periodic timer's next period, IA32_TSC_DEADLINE reading 0 -
 * with *deliver true where LVTT is to be delivered, which
 * vlapic_timer_deliver() then does. Both under the same lock hold, the
 * guest never sees the state between them. */
bool vlapic_timer_fire_state(struct vlapic *l, uint64_t now, bool *deliver);
void vlapic_timer_deliver(struct vlapic *l);
/* vlapic_timer_deliver() split once more, for posts whose last step must
 * be short (several vCPUs' at one TSC, vmm/apic/housekeeper.c): where
 * LVTT's delivery is an edge-triggered fixed interrupt to take - not
 * masked, the APIC software-enabled, the vector legal - its TMR bit is
 * cleared as vlapic_accept() does, and the vector returned for the
 * caller to post (no IRR, no notify); else -1, and vlapic_timer_deliver()
 * does whatever that case asks (nothing, or the error LVT). */
int vlapic_timer_post_vector(struct vlapic *l);

#endif
