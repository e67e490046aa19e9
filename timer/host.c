// SPDX-License-Identifier: BSD-2-Clause
#include "drivers/apic.h"
#include "drivers/io.h"
#include "drivers/ioapic.h"
#include "timer/host.h"
#include "timer/host_route.h"
#include "timer/timebase.h"

struct timer_caps timer_caps;

static const char *const kind_names[] = {
	[TIMER_NONE] = "none", [TIMER_PREEMPT] = "VMX-preemption timer",
	[TIMER_LAPIC] = "host local APIC timer", [TIMER_HPET] = "HPET",
	[TIMER_POSTED] = "housekeeping CPU (posted interrupts)",
};

const char *timer_kind_name(enum timer_kind k)
{
	return (unsigned)k < ARRAY_SIZE(kind_names) ? kind_names[k] : "?";
}

static bool usable(enum timer_kind k, const struct timer_cpu *tc)
{
	switch (k) {
	case TIMER_PREEMPT: return timer_caps.preempt;
	case TIMER_LAPIC:   return timer_caps.lapic_tscdl || timer_caps.lapic_hz;
	case TIMER_HPET:    return timer_caps.hpet != NULL && tc->hpet_comparator >= 0;
	default:            return false;
	}
}

/* The backends to try for each option, in order. A host-interrupt backend
 * that is missing on this CPU falls back to the other one first (the same
 * kind of expiry: a host interrupt, an external-interrupt exit), then to
 * the preemption timer: with 3 HPET comparators, a 4th CPU under
 * timer=hpet runs on its host LAPIC timer and says so. */
static const enum timer_kind select_order[][3] = {
	[TIMER_SEL_AUTO]    = { TIMER_PREEMPT, TIMER_LAPIC, TIMER_HPET },
	[TIMER_SEL_PREEMPT] = { TIMER_PREEMPT, TIMER_LAPIC, TIMER_HPET },
	[TIMER_SEL_LAPIC]   = { TIMER_LAPIC, TIMER_HPET, TIMER_PREEMPT },
	[TIMER_SEL_HPET]    = { TIMER_HPET, TIMER_LAPIC, TIMER_PREEMPT },
};

static const char *unusable_why(enum timer_kind k)
{
	if (k == TIMER_PREEMPT)
		return "this CPU has no VMX-preemption timer";
	if (k == TIMER_LAPIC)
		return "the host local APIC timer is unusable";
	return timer_caps.hpet ? "no HPET comparator can interrupt this CPU" : "there is no HPET";
}

enum timer_kind timer_select(enum timer_backend_sel sel, const struct timer_cpu *tc,
			     const char **why)
{
	const enum timer_kind *order = select_order[(unsigned)sel < ARRAY_SIZE(select_order)
						    ? sel : TIMER_SEL_AUTO];

	*why = NULL;
	for (unsigned i = 0; i < ARRAY_SIZE(select_order[0]); i++) {
		if (usable(order[i], tc))
			return order[i];
		if (!*why)
			*why = unusable_why(order[i]);
	}
	return TIMER_NONE;
}

/* The I/O APIC input comparator n may take: every CPU works this out from
 * the same capability registers (timer/host_route.h). */
static int hpet_ioapic_pin(const struct hpet *h, unsigned n)
{
	uint64_t caps[HPET_MAX_COMPARATORS];
	uint32_t usable;

	if (!timer_caps.ioapic_base)
		return -1;
	for (unsigned i = 0; i <= n; i++)
		caps[i] = hpet_comparator_caps(h, i);
	usable = host_route_usable(ioapic_entries(timer_caps.ioapic_base),
				   timer_caps.ioapic_gsi_base, timer_caps.isos, timer_caps.nisos);
	return host_route_pin(caps, n, usable);
}

/* HPET comparator n serves CPU n, by MSI (FSB) to that CPU where the
 * comparator can (Tn_FSB_INT_DEL_CAP; Bochs's hpet.cc implements FSB
 * delivery but does not advertise it, so it is not used there), else
 * through an I/O APIC input of its own. Both name the CPU by an 8-bit
 * physical APIC ID (FSB address bits 19:12, redirection entry bits
 * 63:56), so a CPU with a wider x2APIC ID gets no comparator. */
static void hpet_route_cpu(struct timer_cpu *tc, unsigned n)
{
	const struct hpet *h = timer_caps.hpet;
	int pin;

	if (tc->apic_id > 0xff || n >= HPET_MAX_COMPARATORS)
		return;
	if (hpet_comparator_caps(h, n) & HPET_TN_FSB_CAP) {
		hpet_route(h, n, 0xfee00000u | (tc->apic_id << 12), timer_caps.vec_hpet, 0, false);
	} else {
		struct host_route_mode m;

		pin = hpet_ioapic_pin(h, n);
		if (pin < 0)
			return;
		/* Usable, so host_route_mode() accepted it: only the mode is new. */
		(void)host_route_mode(timer_caps.ioapic_gsi_base + (unsigned)pin, timer_caps.isos,
				      timer_caps.nisos, &m);
		tc->hpet_pin_mode = (m.level ? IOAPIC_REDIR_LEVEL : 0) |
				    (m.active_low ? IOAPIC_REDIR_LOW : 0);
		hpet_route(h, n, 0, 0, (unsigned)pin, m.level);
		ioapic_route(timer_caps.ioapic_base, (unsigned)pin, timer_caps.vec_hpet, tc->apic_id,
			     tc->hpet_pin_mode);
		tc->hpet_ioapic_pin = pin;
	}
	tc->hpet_comparator = (int)n;
}

void timer_cpu_init(struct timer_cpu *tc, unsigned cpu, uint32_t apic_id)
{
	tc->apic_id = apic_id;
	tc->hpet_comparator = tc->hpet_given_up = -1;
	tc->hpet_ioapic_pin = -1;
	tc->hpet_pin_mode = tc->hpet_strays = 0;
	tc->lapic_armed = tc->hpet_armed = 0;
	if (timer_caps.hpet && cpu < timer_caps.hpet->ncomparators)
		hpet_route_cpu(tc, cpu);
	if (tc->hpet_comparator >= 0)
		tc->hpet_bits = hpet_comparator_bits(timer_caps.hpet, (unsigned)tc->hpet_comparator);
}

enum hpet_irq timer_hpet_irq(struct timer_cpu *tc)
{
	unsigned n = (unsigned)tc->hpet_comparator;

	if (!(tc->hpet_pin_mode & IOAPIC_REDIR_LEVEL))
		return HPET_IRQ_OURS;
	if (tc->hpet_comparator < 0)
		return HPET_IRQ_STRAY;          /* given up: its input is masked */
	if (hpet_ack(timer_caps.hpet, n)) {
		tc->hpet_strays = 0;
		return HPET_IRQ_OURS;
	}
	if (++tc->hpet_strays != HPET_STRAYS_MAX)
		return HPET_IRQ_STRAY;
	/* The input is masked and the comparator given up: this CPU has no
	 * HPET timer from now on (usable() says so to timer_select()). */
	ioapic_mask(timer_caps.ioapic_base, (unsigned)tc->hpet_ioapic_pin);
	hpet_disarm(timer_caps.hpet, n);
	tc->hpet_armed = 0;
	tc->hpet_given_up = tc->hpet_comparator;
	tc->hpet_comparator = -1;
	return HPET_IRQ_MASKED;
}

/* Ticks of a clock running at hz from host TSC now_tsc until host_tsc
 * (0 if that has passed), saturated rather than wrapped. */
static uint64_t ticks_until(uint64_t host_tsc, uint64_t now_tsc, uint64_t hz)
{
	return timebase_mul_div(timebase_tsc_until(host_tsc, now_tsc), hz, timer_caps.tsc_hz);
}

static void lapic_backend_arm(struct timer_cpu *tc, uint64_t host_tsc)
{
	uint64_t ticks;

	if (tc->lapic_armed == host_tsc)
		return;
	tc->lapic_armed = host_tsc;
	if (!host_tsc) {
		apic_timer_stop();
		return;
	}
	if (timer_caps.lapic_tscdl) {
		apic_timer_deadline(timer_caps.vec_lapic, host_tsc);
		return;
	}
	/* Round up by one tick (never early); a count beyond 32 bits fires
	 * early and is re-armed from the absolute deadline. TMICT 0 would
	 * stop the timer, so the saturated count must not wrap to it. */
	ticks = ticks_until(host_tsc, rdtsc(), timer_caps.lapic_hz);
	apic_timer_oneshot(timer_caps.vec_lapic, ticks >= 0xffffffffull ? 0xffffffffu
								   : (uint32_t)ticks + 1);
}

static bool hpet_backend_arm(struct timer_cpu *tc, uint64_t host_tsc)
{
	const struct hpet *h = timer_caps.hpet;
	uint64_t now_tsc, now, when;
	unsigned n;
	bool clamped;

	if (tc->hpet_comparator < 0)
		return false;
	n = (unsigned)tc->hpet_comparator;
	if (!host_tsc) {
		if (tc->hpet_armed)
			hpet_disarm(h, n);
		tc->hpet_armed = 0;
		return true;
	}
	if (tc->hpet_armed == host_tsc)
		return true;
	now_tsc = rdtsc();
	now = hpet_read_counter(h);
	/* A 32-bit comparator wraps every 2^32 ticks (43 s at 100 MHz): a
	 * deadline further than half a wrap fires early, and the vCPU re-arms
	 * from its absolute target, as with a saturated preemption timer. */
	when = timebase_counter_deadline(now, ticks_until(host_tsc, now_tsc, h->freq_hz),
					 tc->hpet_bits, &clamped);
	hpet_arm(h, n, when);
	tc->hpet_armed = host_tsc;
	/* A comparator fires on a match only: if the counter already passed
	 * it while we wrote it, it will not fire for a whole wrap. */
	if (timebase_counter_reached(hpet_read_counter(h), when, tc->hpet_bits)) {
		hpet_disarm(h, n);
		tc->hpet_armed = 0;
		return false;
	}
	return true;
}

/*
 * A host deadline that has already passed has (or is about to have) its
 * interrupt pending. Taken in root mode with a brief interrupt window, it
 * costs a handler; left pending, it forces an exit right after the next
 * VM entry and delays the guest's own interrupt by a whole exit round
 * trip. The window is the only `sti` on the way into the guest, so it is
 * opened by the run loop before its pending-work checks (guest ended,
 * INIT/SIPI), never by the arming below it: a kick taken in the window is
 * then answered by the checks that follow, and one sent after them stays
 * pending in the host APIC and exits the guest at once (bhyve vmx_run:
 * "Interrupts are disabled from this point on until the guest starts
 * executing").
 */
#define DRAIN_MAX_NS 50000u     /* a fired timer's interrupt arrives well within this */

/* The armed values are host TSCs we programmed, near now: signed
 * difference. */
static bool fired(const struct timer_cpu *tc, uint64_t now)
{
	uint64_t l = READ_ONCE(tc->lapic_armed), h = READ_ONCE(tc->hpet_armed);

	return (l && timebase_reached(now, l)) || (h && timebase_reached(now, h));
}

void timer_host_drain_armed(struct timer_cpu *tc)
{
	uint64_t now = rdtsc(), end;

	if (!fired(tc, now))
		return;
	end = now + timer_caps.tsc_hz / (1000000000u / DRAIN_MAX_NS);

	irq_enable();
	while (fired(tc, now) && !timebase_reached(rdtsc(), end))
		cpu_relax();
	irq_disable();
}

bool timer_host_arm(struct timer_cpu *tc, enum timer_kind k, uint64_t host_tsc)
{
	if (k == TIMER_LAPIC) {
		lapic_backend_arm(tc, host_tsc);
		return true;
	}
	if (k == TIMER_HPET)
		return hpet_backend_arm(tc, host_tsc);
	return true;
}

bool timer_host_sleep_arm(struct timer_cpu *tc, uint64_t host_tsc)
{
	if (usable(TIMER_LAPIC, tc)) {
		lapic_backend_arm(tc, host_tsc);
		return true;
	}
	return hpet_backend_arm(tc, host_tsc);
}

/* A deadline that has passed is left alone: its interrupt is pending or on
 * its way (stopping the LAPIC timer cannot take back an interrupt already
 * in IRR), and the run loop's drain takes it before the next entry instead
 * of the guest taking an exit for it. Disarming an HPET comparator whose
 * match is a few ticks off would make that drain wait for nothing. */
void timer_host_disarm_all(struct timer_cpu *tc)
{
	uint64_t now = rdtsc();

	if (tc->lapic_armed && !timebase_reached(now, tc->lapic_armed))
		lapic_backend_arm(tc, 0);
	if (tc->hpet_armed && !timebase_reached(now, tc->hpet_armed))
		hpet_backend_arm(tc, 0);
}
