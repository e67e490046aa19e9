// SPDX-License-Identifier: BSD-2-Clause
/*
 * smp_timer_init: INIT reaches an AP whose APIC timer is due, or just
 * about to be (issue 13.6).
 *
 * Intel SDM Vol. 3A, "Local APIC State After an INIT Reset ('Wait-for-
 * SIPI' State)": INIT resets the local APIC as power-up does (except ID
 * and base): IRR and ISR 0, every LVT masked, TMICT 0 - the timer stops -
 * and IA32_TSC_DEADLINE 0 ("TSC-Deadline Mode": the MSR is cleared by
 * reset). So a timer armed before the INIT may deliver at most before it,
 * never after the SIPI. KVM (lapic.c kvm_lapic_reset(): the hrtimer
 * cancelled, LVTs masked, tscdeadline 0, the PIR dropped) and Bochs
 * (cpu/apic.cc bx_local_apic_c::init(): timer deactivated, lvt[] masked,
 * ticksInitial and tsc deadline 0) agree.
 *
 * With timer=posted a housekeeping CPU delivers the AP's expiry into its
 * posted-interrupt descriptor while the AP runs on: the INIT must cancel
 * that for good, also when the housekeeper is already spinning toward
 * the target it is about to post (vmm/apic/housekeeper.c). So the BSP sends
 * INIT at offsets around the AP's target - a TSC deadline, and a periodic
 * timer that keeps coming due - while the AP holds its interrupts back
 * (IF=0, as a busy kernel would), restarts the AP and watches it: no
 * timer interrupt may arrive, its IRR bit stays clear, and its timer
 * registers read their reset values. Each round uses a vector of its own
 * so a late one is told from the round that sent it. In xAPIC and x2APIC
 * mode; any backend runs it, posted is what it is for.
 */
#include "lib/guest.h"
#include "lib/apic_util.h"
#include "lib/smp.h"
#include "lib/tsc.h"

#define VEC_BASE                0x70u   /* + round: 0x70..0x7f */
#define ROUNDS                  8u
#define AHEAD_US                400u    /* the AP's target, after it arms */
#define WATCH_US                3000u   /* the restarted AP, IF=1: 7 periods */

enum kind { KIND_DEADLINE, KIND_PERIODIC, KIND_NR };
static const char *const kind_name[KIND_NR] = { "TSC deadline", "periodic" };

/* INIT this long after (negative: before) the AP's first target. */
static const int32_t init_offset_us[ROUNDS] = { -40, -10, -2, 0, 2, 10, 40, 150 };

static unsigned peer;
static uint64_t timer_hz;
static volatile uint32_t hits[ROUNDS];          /* per round's vector */
static volatile uint64_t target_tsc;            /* the AP's first expiry */
static volatile bool armed;

/* One handler per vector, so the count says which round it belongs to. */
#define VEC_HANDLER(n) static void on_vec##n(struct ex_regs *r) { (void)r; hits[n]++; apic_eoi(); }
VEC_HANDLER(0) VEC_HANDLER(1) VEC_HANDLER(2) VEC_HANDLER(3)
VEC_HANDLER(4) VEC_HANDLER(5) VEC_HANDLER(6) VEC_HANDLER(7)
static void (*const vec_handler[ROUNDS])(struct ex_regs *) = {
	on_vec0, on_vec1, on_vec2, on_vec3, on_vec4, on_vec5, on_vec6, on_vec7,
};

struct arm_req {
	enum kind kind;
	unsigned vec;
};

/* On the AP: arm, then hold interrupts back until the INIT takes this
 * CPU away (bounded). CPUID exits under tickvisor, so the INIT is seen at
 * the next exit (smp_init_stale.c says why IF=0 needs that). */
static void ap_arm(void *arg)
{
	const struct arm_req *q = arg;
	uint64_t deadline = tsc_deadline_us(SMP_CALL_TIMEOUT_US);

	cli();
	if (q->kind == KIND_DEADLINE) {
		apic_write(LAPIC_LVT_TIMER, (uint32_t)FIELD_PREP(LAPIC_LVT_TIMER_MODE,
								   LAPIC_TIMER_TSC_DEADLINE) | q->vec);
		target_tsc = tsc_deadline_us(AHEAD_US);
		wrmsr(MSR_IA32_TSC_DEADLINE, target_tsc);
	} else {
		apic_write(LAPIC_TDCR, LAPIC_TDCR_DIV1);
		apic_write(LAPIC_LVT_TIMER, (uint32_t)FIELD_PREP(LAPIC_LVT_TIMER_MODE,
								   LAPIC_TIMER_PERIODIC) | q->vec);
		target_tsc = tsc_deadline_us(AHEAD_US);
		apic_write(LAPIC_TMICT, (uint32_t)(AHEAD_US * timer_hz / 1000000));
	}
	armed = true;
	while (!tsc_passed(deadline))
		cpuid(0);
}

static volatile bool irr_clear, lvtt_reset, tmict_zero, deadline_zero;

/* On the restarted AP, IF=1 (on_cpu work): reset state, then anything a
 * late post would bring arrives now. */
static void ap_watch(void *arg)
{
	unsigned vec = *(const unsigned *)arg;

	irr_clear = !apic_vec_test(LAPIC_IRR, vec) && !apic_vec_test(LAPIC_ISR, vec);
	lvtt_reset = apic_read(LAPIC_LVT_TIMER) & LAPIC_LVT_MASKED;
	tmict_zero = apic_read(LAPIC_TMICT) == 0;
	deadline_zero = rdmsr(MSR_IA32_TSC_DEADLINE) == 0;
	tsc_delay_us(WATCH_US);
}

static bool run_round(enum kind kind, unsigned round, const char *mode)
{
	struct arm_req q = { kind, VEC_BASE + round };
	int32_t off = init_offset_us[round];
	uint64_t init_at;
	bool watched;

	armed = false;
	if (!on_cpu_async(peer, ap_arm, &q)) {
		report_fail("%s, %s: CPU %u took no work", mode, kind_name[kind], peer);
		return false;
	}
	init_at = tsc_deadline_us(SMP_CALL_TIMEOUT_US);
	while (!armed && !tsc_passed(init_at))
		pause();
	if (!armed) {
		report_fail("%s, %s: CPU %u did not arm its timer", mode, kind_name[kind], peer);
		return false;
	}
	init_at = target_tsc + (uint64_t)((int64_t)off * (int64_t)tsc_from_us(1));
	while (!tsc_passed(init_at))
		pause();
	/* Up to here the AP may have taken its expiry (IF=0: into IRR or
	 * the descriptor); from the INIT on, nothing may come of it. */
	if (!smp_start_ap(peer)) {
		report_fail("%s, %s: INIT-SIPI did not restart CPU %u", mode, kind_name[kind], peer);
		return false;
	}
	/* The AP held IF=0 up to the INIT and idles with IF=1 after the
	 * SIPI: any delivery of this round's vector is a late one. */
	/* Flags from an earlier round must not stand in for this one's. */
	irr_clear = lvtt_reset = tmict_zero = deadline_zero = false;
	watched = on_cpu(peer, ap_watch, &q.vec);
	return report(watched && irr_clear && lvtt_reset && tmict_zero && deadline_zero && !hits[round],
		      "%s, %s: INIT %d us from the target: nothing delivered after it "
		      "(%u times; %s; IRR/ISR %s, LVTT %s, TMICT %s, deadline %s)",
		      mode, kind_name[kind], off, hits[round],
		      watched ? "AP looked" : "on_cpu() did not reach the AP",
		      irr_clear ? "clear" : "set", lvtt_reset ? "masked" : "unmasked",
		      tmict_zero ? "0" : "not 0", deadline_zero ? "0" : "not 0");
}

static void test_mode(bool x2)
{
	const char *mode = x2 ? "x2APIC" : "xAPIC";

	for (enum kind k = 0; k < KIND_NR; k++) {
		bool all = true;

		for (unsigned r = 0; r < ROUNDS; r++) {
			hits[r] = 0;
			all &= run_round(k, r, mode);
		}
		report_info("%s, %s: %s", mode, kind_name[k], all ? "all rounds clean" : "FAILED");
	}
}

int main(int argc, char **argv)
{
	struct tv_info info;

	(void)argc;
	(void)argv;
	report_prefix_push("smp_timer_init");
	if (tickvisor_present() && tv_get_info(&info))
		timer_hz = info.apic_timer_hz;
	else if (cpuid(0).a >= 0x15)
		timer_hz = cpuid(0x15).c;
	if (!timer_hz) {
		report_skip("APIC timer rate unknown");
		return report_summary();
	}
	for (unsigned r = 0; r < ROUNDS; r++)
		handle_irq(VEC_BASE + r, vec_handler[r]);
	if (smp_init_peer(&peer))
		smp_run_both_modes(test_mode);
	report_prefix_pop();
	return report_summary();
}
