// SPDX-License-Identifier: BSD-2-Clause
/*
 * The APIC timer registers (SDM "APIC Timer"): LVTT mode, TMICT, TMCCT,
 * TDCR and IA32_TSC_DEADLINE. The arithmetic and the re-arm policy are in
 * timer/vtimer.c; the hardware that turns the target into an exit is
 * chosen by vmm/ when ops->timer_update tells it the target moved.
 */
#include "lapic/vlapic.h"
#include "lapic/vlapic_impl.h"

static uint64_t tsc_per_tick(const struct vlapic *l)
{
	/* 64 bits: clock_div x divide 128 can exceed 32. */
	return (uint64_t)l->clock_div * l->cached_divide;
}

static enum vtimer_mode vtimer_mode_of(uint32_t lvtt_mode)
{
	return lvtt_mode == LAPIC_TIMER_PERIODIC ? VTIMER_PERIODIC
	       : lvtt_mode == LAPIC_TIMER_TSC_DEADLINE ? VTIMER_TSC_DEADLINE : VTIMER_ONESHOT;
}

void vlapic_timer_reset(struct vlapic *l)
{
	vtimer_stop(&l->timer);
	l->tsc_deadline = 0;
	vlapic_set(l, LAPIC_TMICT, 0);
	l->ops->timer_update(l);
}

static bool is_deadline_mode(uint32_t lvtt_mode)
{
	return lvtt_mode == LAPIC_TIMER_TSC_DEADLINE;
}

/* One-shot <-> periodic (DESIGN.md "Timer rules"): the running count and
 * TMICT stay, the new mode decides what happens at 0. An expiry already
 * due belongs to the old mode: delivered first (a one-shot that reached
 * 0 stays stopped). KVM's apic_update_lvtt and Bochs's apic.cc disarm
 * only across TSC-deadline mode, as real parts do. */
static void notice_clamped(struct vlapic *l)
{
	if (l->timer.clamped)
		l->ops->notice(l, "periodic APIC timer period below min_period_us: clamped");
}

static void switch_count_mode(struct vlapic *l, uint32_t mode)
{
	vlapic_timer_expired(l, l->ops->now(l));
	l->cached_timer_mode = mode;
	vtimer_switch_count_mode(&l->timer, vtimer_mode_of(mode), vlapic_get(l, LAPIC_TMICT));
	notice_clamped(l);
	l->ops->timer_update(l);
}

void vlapic_lvtt_written(struct vlapic *l, uint32_t old, uint32_t val)
{
	uint32_t lvtt, mode;

	/* Mask first (software-disabled APIC): the mode-3 fix-up below
	 * stores the register back and must not undo the mask. */
	vlapic_lvt_written(l, old, val);
	lvtt = vlapic_get(l, LAPIC_LVT_TIMER);
	mode = (uint32_t)FIELD_GET(LAPIC_LVT_TIMER_MODE, lvtt);
	if (mode == LAPIC_TIMER_RESERVED) {
		/* Reserved: run it as one-shot, and say so. */
		l->ops->notice(l, "LVT timer mode 3 is reserved: using one-shot");
		mode = LAPIC_TIMER_ONESHOT;
		vlapic_set(l, LAPIC_LVT_TIMER, lvtt & ~(uint32_t)LAPIC_LVT_TIMER_MODE);
	}
	if (mode == l->cached_timer_mode)
		return;
	/* Into or out of TSC-deadline mode disarms the timer (SDM
	 * "TSC-Deadline Mode"): TMICT and the deadline read 0. */
	if (is_deadline_mode(mode) != is_deadline_mode(l->cached_timer_mode)) {
		l->cached_timer_mode = mode;
		vlapic_timer_reset(l);
		return;
	}
	switch_count_mode(l, mode);
}

void vlapic_tmict_written(struct vlapic *l, uint32_t old, uint32_t val)
{
	uint64_t now;

	/* In TSC-deadline mode TMICT writes are ignored. */
	if (l->cached_timer_mode == LAPIC_TIMER_TSC_DEADLINE) {
		vlapic_set(l, LAPIC_TMICT, 0);
		return;
	}
	now = l->ops->now(l);
	/* A count that already reached 0 has fired before this write. */
	vlapic_timer_expired(l, now);
	vtimer_start_count(&l->timer, vtimer_mode_of(l->cached_timer_mode), now,
			   val, tsc_per_tick(l));
	notice_clamped(l);
	l->ops->timer_update(l);
}

void vlapic_tdcr_written(struct vlapic *l, uint32_t old, uint32_t val)
{
	uint64_t now = l->ops->now(l);
	uint32_t left;
	bool running;

	/* An expiry already due belongs to the old divide: deliver it now,
	 * or the restart below would drop it (one-shot left = 0). */
	vlapic_timer_expired(l, now);
	left = vtimer_current_count(&l->timer, now);
	running = l->timer.armed && l->timer.mode != VTIMER_TSC_DEADLINE;
	l->cached_divide = vtimer_tdcr_divide(vlapic_get(l, LAPIC_TDCR));
	if (!running)
		return;
	/* The SDM leaves a divide change mid-count undefined; we let the
	 * remaining ticks run at the new rate, and the period follow. */
	vtimer_resume_count(&l->timer, l->timer.mode, now, left, vlapic_get(l, LAPIC_TMICT),
			    tsc_per_tick(l));
	l->ops->timer_update(l);
}

bool vlapic_timer_fire(struct vlapic *l, uint64_t now)
{
	if (!vtimer_due(&l->timer, now))
		return false;
	/* false: a step toward a far deadline, nothing to deliver yet */
	if (vtimer_expire(&l->timer, now)) {
		if (l->timer.mode == VTIMER_TSC_DEADLINE)
			l->tsc_deadline = 0;    /* the MSR reads 0 after expiry */
		/* A masked LVTT still counts; it only does not deliver. */
		vlapic_lvt_deliver(l, LAPIC_LVT_TIMER);
	}
	return true;
}

/* vlapic_timer_fire() without its last step, which vlapic_timer_deliver()
 * is. Not shared with it by an inline helper: that made the compiler
 * inline vlapic_timer_expired() into the TMICT and TDCR writes, 10
 * cycles dearer each (make bench-budget). */
bool vlapic_timer_fire_state(struct vlapic *l, uint64_t now, bool *deliver)
{
	*deliver = false;
	if (!vtimer_due(&l->timer, now))
		return false;
	if (vtimer_expire(&l->timer, now)) {
		if (l->timer.mode == VTIMER_TSC_DEADLINE)
			l->tsc_deadline = 0;
		*deliver = true;
	}
	return true;
}

void vlapic_timer_deliver(struct vlapic *l)
{
	vlapic_lvt_deliver(l, LAPIC_LVT_TIMER);
}

int vlapic_timer_post_vector(struct vlapic *l)
{
	uint32_t lvt = vlapic_get(l, LAPIC_LVT_TIMER);
	uint8_t vec = (uint8_t)lvt;

	/* vlapic_lvt_deliver() and vlapic_accept_fixed()'s tests, in order;
	 * the timer LVT has no delivery mode and is always edge. */
	if ((lvt & LAPIC_LVT_MASKED) || !vlapic_sw_enabled(l) || vlapic_illegal_vector(vec))
		return -1;
	__atomic_fetch_and(vlapic_vec_reg(l, LAPIC_TMR, vec), ~VLAPIC_VEC_BIT(vec), __ATOMIC_RELAXED);
	return vec;
}

void vlapic_timer_expired(struct vlapic *l, uint64_t now)
{
	if (vlapic_timer_fire(l, now))
		l->ops->timer_update(l);
}

void vlapic_tsc_moved(struct vlapic *l, int64_t delta)
{
	/* A count (one-shot, periodic) runs on the APIC clock, in real time:
	 * when the guest's TSC jumps, its target moves with it. A TSC
	 * deadline is a TSC value and stays where the guest put it; a jump
	 * to or past it makes it due at once. */
	if (!l->timer.armed)
		return;
	vtimer_tsc_moved(&l->timer, delta, l->ops->now(l));
	l->ops->timer_update(l);
}
