// SPDX-License-Identifier: BSD-2-Clause
/*
 * A vCPU's APIC timer on the hardware (DESIGN.md, "Data flow of one guest
 * timer tick", steps 3-4). Before every VM entry the one canonical target
 * (guest TSC) becomes the VMX-preemption-timer value or a host LAPIC/HPET
 * deadline, `advance` early; an expiry found on the way in is delivered,
 * after waiting out the advance so the guest never sees it early.
 */
#include "drivers/apic.h"
#include "drivers/io.h"
#include "drivers/ioapic.h"
#include "timer/entry_plan.h"
#include "timer/timebase.h"
#include "vmm/apic/housekeeper.h"
#include "vmm/host/irq.h"
#include "vmm/apic/vapic.h"
#include "vmm/host/log.h"
#include "vmm/host/percpu.h"
#include "vmm/host/platform.h"
#include "vmm/vcpu/vcpu_run.h"
#include "vmm/trace.h"
#include "vmm/vcpu/vcpu_setup.h"
#include "vmm/apic/vcpu_timer.h"
#include "vmm/vcpu/vcpu_tsc.h"
#include "vmx/vmx.h"
#include "vmm/vcpu/vcpu_dump.h"

static void set_before_entry(struct vcpu *v);
static void vcpu_timer_spin_observe(struct guest_regs *r);

void vcpu_timer_init(struct vcpu *v)
{
	const struct tv_options *o = &v->guest->spec->opts;
	const char *why;

	/* timer=posted (or auto that found it possible): housekeeper_plan()
	 * gave the guest a housekeeper, and every vCPU is its client - but
	 * under timer=auto with hlt=guest only where probe 5 (run before
	 * this) found that the CPU ends a guest's HLT for a pending virtual
	 * interrupt: elsewhere a posted expiry would cost an HLT exit, and
	 * auto keeps hlt=guest exitless with the vCPU's own backend. */
	if (v->guest->hk && !(o->timer == TIMER_SEL_AUTO && v->guest->hlt == HLT_GUEST &&
			      v->hlt_vintr_erratum)) {
		v->timer_kind = TIMER_POSTED;
		why = NULL;
	} else {
		v->timer_kind = timer_select(o->timer, &this_cpu()->timer, &why);
		if (v->guest->hk)
			why = "this CPU does not end a guest's HLT for a pending virtual interrupt";
	}
	for (unsigned m = 0; m < VTIMER_MODES; m++)
		advance_init(&v->advance[m], o->advance, o->advance_ns, platform.tb.tsc_hz);
	advance_init(&v->advance_halt, o->advance, o->advance_ns, platform.tb.tsc_hz);
	set_before_entry(v);
	/* Every vCPU says where its timer runs: a suite checks each one, and
	 * a silent fallback on one CPU would otherwise pass as the backend
	 * asked for. */
	pr_info("guest %s: vcpu%u: APIC timer on the %s%s%s%s", v->guest->spec->name, v->id,
		timer_kind_name(v->timer_kind), why ? " (fallback: " : "", why ? why : "",
		why ? ")" : "");
}

unsigned vcpu_timer_backend(const struct vcpu *v)
{
	return v->timer_kind;
}

/* The advance of a running vCPU's expiry, by its timer's mode. */
static inline __attribute__((always_inline)) struct timer_advance *running_advance(struct vcpu *v)
{
	return &v->advance[v->lapic->timer.mode];
}

/* The count itself is written last before the entry, from v->preempt_at
 * (vcpu_timer_load_preempt). */
static inline __attribute__((always_inline)) void set_preempt(struct vcpu *v, bool on)
{
	vcpu_set_ctl(&v->cached_pin_ctls, VMCS_PIN_CTLS, PIN_PREEMPT_TIMER, on);
}

/* Applies the expiry part of a plan: deliver the expiry, and have the
 * entry stub hold VMRESUME until the exact target (not at all when it is
 * already past), so the guest never sees it early. When the backend's
 * firing brought us here, the stub calls vcpu_timer_spin_observe() as it
 * gets to the wait: that, not this point, is what tunes the advance, so
 * everything between the host interrupt and the entry - this expiry,
 * re-arming the backend, the injection - counts. `traced` is a constant
 * of each caller (log=trace:timer or trace:late picks the traced entry
 * variant once, vcpu_timer_init), so an untraced expiry does not even
 * test the mask. */
static inline __attribute__((always_inline)) void expire(struct vcpu *v,
							   const struct timer_plan_in *in,
							   struct timer_advance *a, bool traced)
{
	struct timer_entry_plan p;

	timer_plan_expiry(in, &p);
	vlapic_timer_expired(v->lapic, p.expire_at);
	if (traced)
		trace_timer_expire(v, in->target, p.expire_at, p.spin_until,
				   a == &v->advance_halt);
	v->spin_target = p.spin_until;
	v->regs.spin_observe = v->timer_exit && p.spin_until && a->mode == ADVANCE_AUTO ?
			       vcpu_timer_spin_observe : NULL;
	if (!v->regs.spin_observe) {
		v->observe_start = 0;   /* the stub's next arrival is not after one */
		/* A wait already over, with nothing to tune (advance=off:
		 * every one): none at all, and the stub goes the short way. */
		if ((int64_t)(p.spin_until - in->host_now) <= 0)
			p.spin_until = 0;
	}
	v->regs.spin_until = p.spin_until;
	v->advance_seen = a;
}

/*
 * Called by the entry stub as it reaches the wait of an expiry that the
 * backend's firing brought (regs->spin_observe): the advance is tuned by
 * how early the stub got there. It runs in the wait's slack, alike for
 * every such expiry. It once ran at the next exit instead, ~60 cycles in
 * Bochs; a periodic timer's next exit is its next tick's, so every tick
 * but the first paid it between its backend's firing and its entry, the
 * advance settled to that, and the first tick - armed by an entry with
 * nothing to tune - came out of line with the rest (issue 24.3). Its own
 * cost lies between the arrival and the wait, so the arrival it reports
 * is its start plus what that took the last time (start to the stub's
 * spin_arrival, recorded after it returns).
 */
static void vcpu_timer_spin_observe(struct guest_regs *r)
{
	struct vcpu *v = (struct vcpu *)((char *)r - offsetof(struct vcpu, regs));
	uint64_t start = rdtsc();

	if (v->observe_start && r->spin_arrival - v->observe_start < v->advance_seen->max_tsc)
		v->observe_cost = r->spin_arrival - v->observe_start;
	v->observe_start = start;
	advance_observe(v->advance_seen, (int64_t)(start + v->observe_cost - v->spin_target));
	/* The advance moved: so does the next hardware deadline. */
	v->timer_dirty = true;
}

/*
 * Another vCPU may end the guest at any time, and this one must then come
 * out of non-root mode (vmm/guest.c waits for it). The kick IPI does that
 * with "external-interrupt exiting", whatever the guest's IF (SDM Vol. 3C,
 * "Pin-Based VM-Execution Controls"), but Debian's Bochs 3.0 unmasks
 * external interrupts for that control only when the guest itself changes
 * IF (cpu/vmx.cc judged the entry's IF by root-mode rules; fixed by
 * scripts/bochs-patches/0003): a vCPU entered with IF=0 never exits for
 * the kick. Nor does Debian's Bochs wake a guest from HLT with IF=0 for
 * it (event.cc, handleWaitForEvent wants IF; fixed by
 * scripts/bochs-patches/0008), which only hlt=guest lets a guest enter.
 * So where the probes of vmm/vcpu/vcpu_calib.c find the first
 * (kick_if0_erratum) or, with hlt=guest, the second (hlt_if0_erratum),
 * or with if0_quirks=on, a vCPU of a multi-vCPU guest
 * entered with IF=0 always has the VMX-preemption timer - which ends
 * non-root operation whatever the guest's IF or activity state - armed
 * at most VCPU_STOP_POLL_US ahead (issue 15.7; cached_stop_poll).
 * Entered with IF=1 it needs none for the first: a guest that clears IF
 * itself unmasks the kick on Bochs (flag_ctrl_pro.cc). For the second it
 * does (cached_stop_poll_any_if): CLI; HLT puts the guest in HLT with
 * IF=0 with no exit in between, and before the poll covered IF=1 entries
 * too an AP doing that slept through every NMI and the guest's end
 * (guest-tests/smp_nmi.c, hlt_exits=0). The same bound holds for an NMI
 * or INIT another vCPU sends it, which also only arrive by the kick.
 * Cost: at most one exit per 1 ms of IF=0 (with the second erratum, per
 * 1 ms of hlt=guest).
 * Every slow entry of such a vCPU comes here (arm() ends in
 * apply_preempt() on every backend), and records in stop_poll_armed
 * whether it armed the poll: the entries vmm/exit/exit_fast.c resumes at once
 * until the next slow one keep that preempt_at, and rely on it.
 */
#define VCPU_STOP_POLL_US 1000u

static inline __attribute__((always_inline)) uint64_t stop_poll_deadline(struct vcpu *v,
									   uint64_t host_now)
{
	v->stop_poll_armed = timer_caps.preempt && (v->cached_stop_poll_any_if ||
						    !(vmread(VMCS_GUEST_RFLAGS) & RFLAGS_IF));
	if (!v->stop_poll_armed)
		return TIMER_PLAN_NEVER;
	return host_now + VCPU_STOP_POLL_US * (platform.tb.tsc_hz / 1000000);
}

/* The VMX-preemption timer serves the guest timer (preempt backend), a
 * host deadline that is already past, the guest's time limit and the
 * stop poll above: it is armed for the earliest of them, `pre` being the
 * first (TIMER_PLAN_NEVER: none). It counts only in non-root mode, so it
 * is recomputed from the absolute deadline on every entry and root-mode
 * time is never lost. apply_preempt() makes no call, so the entries of
 * the preemption-timer backend run it without a frame. */
static inline __attribute__((always_inline)) void apply_preempt(struct vcpu *v, uint64_t pre,
								 uint64_t host_now)
{
	uint64_t limit = v->guest->deadline_tsc;

	if (limit && timer_caps.preempt)
		pre = MIN(pre, limit);
	/* Last, as the earliest of the three: a single vCPU skips it in one
	 * compare. */
	if (v->cached_stop_poll) {
		uint64_t poll = stop_poll_deadline(v, host_now);

		pre = MIN(pre, poll);
	}
	if (pre == TIMER_PLAN_NEVER) {
		set_preempt(v, false);
		return;
	}
	v->preempt_at = pre;
	set_preempt(v, true);
}

/* The host LAPIC/HPET backends: the host timer, then the preemption
 * timer for what is left to it. */
static __attribute__((noinline)) void apply_host(struct vcpu *v, enum timer_kind k,
						 uint64_t host_at, uint64_t host_now)
{
	uint64_t pre = TIMER_PLAN_NEVER;

	if (!timer_host_arm(&this_cpu()->timer, k, host_at))
		pre = host_now;         /* HPET deadline already past: exit at once */
	apply_preempt(v, pre, host_now);
}

/* Plans the arming for the guest timer and applies it. */
static inline __attribute__((always_inline)) void arm(struct vcpu *v,
						       const struct timer_plan_in *in)
{
	struct timer_entry_plan p = timer_plan_arm(in);

	if (p.hw == TIMER_PREEMPT)
		apply_preempt(v, p.hw_at, in->host_now);
	else
		apply_host(v, p.hw, p.hw_at, in->host_now);
}

/* The expiry is due: deliver it, then arm the backend for whatever is
 * armed next. Out of line (timer_expire_and_arm*), so that an entry with
 * the timer armed and not yet due runs timer_before_entry_armed*()
 * without a frame. */
static inline __attribute__((always_inline)) void expire_and_arm(struct vcpu *v,
								   uint64_t host_now,
								   struct timer_advance *a,
								   bool traced)
{
	struct vtimer *t = &v->lapic->timer;
	struct timer_plan_in in = {
		.armed = true, .target = t->target, .host_now = host_now,
		.tsc_offset = v->tsc_offset, .advance_tsc = advance_get(a),
		.entry_tsc = v->entry_tsc,
	};

	expire(v, &in, a, traced);
	in.host_now = rdtsc();
	in.advance_tsc = advance_get(running_advance(v)); /* periodic: the next one runs */
	v->timer_exit = false;
	v->timer_dirty = false;
	/* The vtimer as the expiry left it. */
	in.armed = t->armed;
	in.target = t->target;
	in.backend = v->timer_kind;
	arm(v, &in);
}

static __attribute__((noinline)) void timer_expire_and_arm(struct vcpu *v, uint64_t host_now,
							   struct timer_advance *a)
{
	expire_and_arm(v, host_now, a, false);
}

static __attribute__((noinline, cold)) void timer_expire_and_arm_traced(struct vcpu *v,
									 uint64_t host_now,
									 struct timer_advance *a)
{
	expire_and_arm(v, host_now, a, true);
}

/* The guest's APIC timer is armed: expire it if due, then arm the
 * backend for it. */
static inline __attribute__((always_inline)) void before_entry_armed(struct vcpu *v, bool traced)
{
	/* Woken from a halt for this expiry: the halt path's advance says
	 * whether it is due; the entry wait then tunes that one. */
	struct timer_advance *a = v->halt_wake ? &v->advance_halt : running_advance(v);
	struct timer_plan_in in = {
		.armed = true, .target = v->lapic->timer.target, .tsc_offset = v->tsc_offset,
		.backend = v->timer_kind,
	};

	v->halt_wake = false;
	in.advance_tsc = advance_get(a);
	in.host_now = rdtsc();
	if (timer_plan_due(&in)) {
		if (traced)
			timer_expire_and_arm_traced(v, in.host_now, a);
		else
			timer_expire_and_arm(v, in.host_now, a);
		return;
	}
	v->timer_exit = false;
	v->timer_dirty = false;
	arm(v, &in);
}

static __attribute__((noinline)) void timer_before_entry_armed(struct vcpu *v)
{
	before_entry_armed(v, false);
}

static __attribute__((noinline, cold)) void timer_before_entry_armed_traced(struct vcpu *v)
{
	before_entry_armed(v, true);
}

/*
 * The re-arm after an exit handler moved the guest's timer (vapic.c's
 * TSC-deadline write): before_entry_armed() for a vCPU on the
 * preemption-timer backend, untraced (the caller's test), whose timer is
 * armed and not due - the same plan, without the choice of advance (no
 * halt woke it: halt_wake is set by vcpu_timer_block() and cleared by the
 * entry right after, no exit handler runs in between), the expiry and
 * the backend dispatch. Anything else goes the whole way.
 */
void vcpu_timer_rearm_preempt(struct vcpu *v)
{
	const struct vtimer *t = &v->lapic->timer;
	struct timer_plan_in in = {
		.armed = t->armed, .target = t->target, .tsc_offset = v->tsc_offset,
		.advance_tsc = advance_get(running_advance(v)), .backend = TIMER_PREEMPT,
	};

	if (unlikely(!in.armed)) {
		vcpu_timer_before_entry(v);
		return;
	}
	in.host_now = rdtsc();
	if (unlikely(timer_plan_due(&in))) {
		timer_before_entry_armed(v);
		return;
	}
	v->timer_dirty = false;
	apply_preempt(v, timer_plan_arm(&in).hw_at, in.host_now);
}

/* Posted, woken from a halt in root mode by its own host timer inside
 * the advance window (vcpu_timer_block, the timer parked): deliver here
 * and wait in the entry stub to the exact target as the other backends
 * do, then give the housekeeper back what is armed next. */
static __attribute__((noinline)) void timer_posted_halt_wake(struct vcpu *v)
{
	struct timer_plan_in in = {
		.tsc_offset = v->tsc_offset, .advance_tsc = advance_get(&v->advance_halt),
		.entry_tsc = v->entry_tsc, .backend = TIMER_POSTED,
	};

	housekeeper_timer_lock(v);
	in.armed = v->lapic->timer.armed;
	in.target = v->lapic->timer.target;
	in.host_now = rdtsc();
	if (timer_plan_due(&in)) {
		/* A halt's wake, not an entry's: it tests the mask itself. */
		if (trace_expiry_on())
			expire(v, &in, &v->advance_halt, true);
		else
			expire(v, &in, &v->advance_halt, false);
	}
	v->timer_dirty = true;
	housekeeper_timer_unlock(v);
}

/* timer=posted: the housekeeper delivers every expiry; the preemption
 * timer only serves the time limit and the stop poll. The timer state is
 * the housekeeper's to read (under its lock), not ours. */
static void timer_before_entry_posted(struct vcpu *v)
{
	struct timer_plan_in in = { .backend = TIMER_POSTED };

	if (unlikely(v->halt_wake))
		timer_posted_halt_wake(v);
	v->halt_wake = false;
	v->timer_exit = false;
	in.host_now = rdtsc();
	arm(v, &in);
}

/* The unarmed case (most entries: a guest that polls, or waits with its
 * timer off) stays without a frame: arm() is its tail, and the flags it
 * clears are not read there. Nothing to plan when nothing can have
 * changed since the last entry: no new target, no preemption timer on,
 * no time limit and no stop poll. */
static inline __attribute__((always_inline)) void before_entry(struct vcpu *v, bool traced)
{
	if (v->lapic->timer.armed) {
		if (traced)
			timer_before_entry_armed_traced(v);
		else
			timer_before_entry_armed(v);
		return;
	}
	v->halt_wake = false;
	v->timer_exit = false;
	if (v->timer_dirty || (v->cached_pin_ctls & BIT(PIN_PREEMPT_TIMER)) ||
	    v->guest->deadline_tsc || v->guest->nvcpus > 1) {
		struct timer_plan_in in = {
			.armed = false, .tsc_offset = v->tsc_offset, .backend = v->timer_kind,
		};

		v->timer_dirty = false;
		in.host_now = rdtsc();
		arm(v, &in);
		return;
	}
	v->timer_dirty = false;
}

static void timer_before_entry(struct vcpu *v)
{
	before_entry(v, false);
}

static void timer_before_entry_traced(struct vcpu *v)
{
	before_entry(v, true);
}

/* The entry-time variant for v's backend and trace mask, chosen once:
 * the run loop calls it through v->timer_before_entry (one indirect call
 * where a direct one was), so no entry tests either on its way. */
static void set_before_entry(struct vcpu *v)
{
	if (v->timer_kind == TIMER_POSTED)
		v->timer_before_entry = timer_before_entry_posted;
	else if (trace_expiry_on())
		v->timer_before_entry = timer_before_entry_traced;
	else
		v->timer_before_entry = timer_before_entry;
}

void vcpu_timer_reset(struct vcpu *v)
{
	/* INIT/reset: no preemption timer, no host deadline, no stale expiry. */
	set_preempt(v, false);
	timer_host_disarm_all(&this_cpu()->timer);
	v->timer_exit = false;
	v->timer_dirty = true;
}

int exit_preempt_timer(struct vcpu *v)
{
	v->timer_exit = true;
	return 0;
}

/*
 * This CPU's HPET comparator was given up (timer_hpet_irq() masked its
 * input) while v ran on it: v moves to the next backend of its option's
 * order, keeping its one target (DESIGN.md, "Timer rules"): the next
 * entry arms the new backend for it. Interrupts are taken in root mode
 * only in windows before the entry path plans (the run loop's drain, a
 * halt, a hypercall), so no plan is half made with the old kind.
 */
static void reselect(struct vcpu *v)
{
	const char *why;

	v->timer_kind = timer_select(v->guest->spec->opts.timer, &this_cpu()->timer, &why);
	v->timer_dirty = true;
	v->timer_exit = true;
	pr_warn("guest %s: vcpu%u: APIC timer moves to the %s (the HPET input was masked)",
		v->guest->spec->name, v->id, timer_kind_name(v->timer_kind));
}

/*
 * For tests of a shared HPET line (inject=hpet-strays, TV_HC_HPET_STRAYS):
 * this CPU's HPET vector, sent to itself until the input is masked, each
 * without its comparator's status bit, as a device sharing the line would
 * raise it. Bounded: HPET_STRAYS_MAX interrupts, each waited for 1 ms.
 * 0 when the input ended masked (v then runs on its next backend), ~0
 * where the fault is not injected or v's timer is not on a level HPET
 * comparator of this CPU.
 */
uint64_t vcpu_timer_hpet_strays(struct vcpu *v)
{
	struct timer_cpu *tc = &this_cpu()->timer;

	if (!platform.inject.hpet_strays || v->timer_kind != TIMER_HPET ||
	    !(tc->hpet_pin_mode & IOAPIC_REDIR_LEVEL))
		return ~0ull;
	for (unsigned i = 0; i < HPET_STRAYS_MAX && tc->hpet_comparator >= 0; i++) {
		uint32_t before = READ_ONCE(tc->hpet_strays);
		uint64_t end = rdtsc() + platform.tb.tsc_hz / 1000;

		apic_send_ipi(this_cpu()->apic_id, APIC_ICR_DELIV_FIXED | VEC_HPET);
		irq_enable();
		while (READ_ONCE(tc->hpet_strays) == before && tc->hpet_comparator >= 0 &&
		       !timebase_reached(rdtsc(), end))
			cpu_relax();
		irq_disable();
	}
	return tc->hpet_comparator < 0 ? 0 : ~0ull;
}

/* timer_hpet_irq() gave this CPU's comparator up: say so, and move the
 * vCPU on it. Out of line: the HPET's interrupt path stays as short as
 * without it. */
static __attribute__((noinline, cold)) void hpet_masked(struct pcpu *p)
{
	pr_warn("HPET: I/O APIC input %d stays asserted while comparator %d is idle (a device "
		"shares the line?): input masked, this CPU's HPET timer is lost; use "
		"timer=preempt or timer=lapic", p->timer.hpet_ioapic_pin, p->timer.hpet_given_up);
	if (p->vcpu && p->vcpu->timer_kind == TIMER_HPET)
		reselect(p->vcpu);
}

/* The host LAPIC timer or this CPU's HPET comparator fired. */
static void backend_irq(uint8_t vector)
{
	struct pcpu *p = this_cpu();

	if (vector == VEC_HPET) {
		enum hpet_irq r = timer_hpet_irq(&p->timer);

		if (r != HPET_IRQ_OURS) {
			if (r == HPET_IRQ_MASKED)
				hpet_masked(p);
			apic_eoi();
			return;
		}
		p->timer.hpet_armed = 0;
	} else
		p->timer.lapic_armed = 0;
	if (p->vcpu)
		p->vcpu->timer_exit = true;
	apic_eoi();
}

void vcpu_timer_host_init(void)
{
	irq_register(VEC_HOST_TIMER, backend_irq);
	irq_register(VEC_HPET, backend_irq);
}

/*
 * Whether a halted vCPU can never be woken, so that ending its guest now
 * loses nothing; `wake` is the next host-timer deadline the halt would
 * sleep to (the guest timer's, the time limit's), ~0: none. The SDM's HLT
 * ends for an enabled interrupt, an NMI, SMI or INIT (Vol. 2A, HLT), and
 * IF does not block NMIs ("NMI Interrupt Handling", Vol. 3A). So:
 * - a time limit always ends the halt: `wake` is finite, never hopeless
 *   (the limit's status and line then say what happened);
 * - another vCPU can always send an NMI or INIT (or, with IF set, any
 *   IPI): never hopeless, whatever IF;
 * - a lone vCPU with IF set waits for its timer or a post made before the
 *   park, not yet taken (timer=posted);
 * - a lone vCPU with IF clear has no NMI or INIT source left: those come
 *   from its ICR (it is halted, it writes none) or from an LVT with a
 *   delivery-mode field (LINT0/1, thermal, performance counters, CMCI),
 *   none of which anything in tickvisor asserts (no PIC output, CPUID
 *   0xA: no PMU). The LVT timer has no delivery-mode field (SDM "Local
 *   Vector Table"; lapic/vlapic_irq.c delivers it fixed), so its expiry
 *   only sets IRR, which IF holds back; a periodic one would wake the
 *   host forever to no end, so that vCPU is ended at once. KVM keeps
 *   any halted vCPU until kvm_vcpu_has_events() (a queued NMI, INIT, an
 *   interrupt IF allows) and seL4's vm_hlt_handler only warns "halted
 *   forever": neither has a time limit to fall back on.
 */
static bool halt_hopeless(struct vcpu *v, bool if_set, uint64_t wake)
{
	if (v->guest->deadline_tsc || v->guest->nvcpus > 1)
		return false;
	if (!if_set)
		return true;
	return wake == ~0ull && !vapic_pi_pending(v);
}

int vcpu_timer_block(struct vcpu *v, bool if_set)
{
	struct vtimer *t = &v->lapic->timer;
	struct timer_cpu *tc = &this_cpu()->timer;
	/* With IF clear nothing is injected, so no advance: plain expiry. */
	uint64_t limit = v->guest->deadline_tsc, adv = if_set ? advance_get(&v->advance_halt) : 0;

	/* Posted: in root mode there is no exit left to save, so the timer
	 * is served here while the vCPU halts, as with any backend (the
	 * housekeeper's post would also wake a halted CPU later than its
	 * own host timer with advance_halt does). */
	if (v->timer_kind == TIMER_POSTED)
		housekeeper_timer_park(v);
	for (;;) {
		uint64_t now = vcpu_tsc_read(v), wake = ~0ull;

		/* Inside the advance window: the entry path waits out the rest
		 * and delivers on time. With IF clear the expiry only sets IRR. */
		if (vtimer_due(t, now + adv)) {
			uint64_t target = t->target;

			if (if_set) {
				v->halt_wake = true;
				break;
			}
			vlapic_timer_expired(v->lapic, now);
			if (trace_expiry_on())
				trace_timer_expire(v, target, now, 0, true);
			continue;
		}
		vcpu_drop_stray_sipi(v);
		if (vapic_has_event(v, if_set))
			break;
		if (READ_ONCE(v->guest->ended) || vcpu_check_time_limit(v, " (halted)"))
			return -1;
		if (t->armed)
			wake = t->target - v->tsc_offset - adv;
		if (limit)
			wake = MIN(wake, limit);
		if (halt_hopeless(v, if_set, wake))
			return vcpu_kill(v, GUEST_STATUS_HUNG, "HLT with %s, no time limit and no "
					 "other vCPU: nothing can wake it",
					 if_set ? "no timer armed" : "interrupts disabled");
		/* Same target, other hardware: sleep on a host timer until it
		 * (or a kick from another CPU), interrupts on, then look again. */
		if (wake != ~0ull && !timer_host_sleep_arm(tc, wake))
			continue;       /* already due */
		wait_for_interrupt();
	}
	timer_host_disarm_all(tc);
	v->timer_dirty = true;
	/* Woken for the expiry: timer_posted_halt_wake() delivers it and
	 * hands the housekeeper what comes next; else it takes it back now. */
	if (v->timer_kind == TIMER_POSTED && !v->halt_wake)
		housekeeper_timer_unpark(v);
	return 0;
}
