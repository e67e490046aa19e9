// SPDX-License-Identifier: BSD-2-Clause
/*
 * apic_nmi_storm: NMIs sent faster than the handler runs.
 *
 * Intel SDM Vol. 3A, "NMI Handling": "While an NMI interrupt handler is
 * executing, the processor blocks delivery of subsequent NMIs until the
 * next execution of the IRET instruction"; one NMI arriving meanwhile is
 * held pending, and further ones are lost. So a handler that sends itself
 * ten NMIs runs exactly once more, not ten times. KVM (x86.c
 * process_nmi(): at most one NMI pending while NMIs are masked or one is
 * being injected, two otherwise) and Bochs (cpu/event.cc: a
 * single pending-NMI event bit, masked on delivery, unmasked by the
 * IRET in ctrl_xfer*.cc) implement the same.
 *
 * A pending or running NMI does not hold back maskable interrupts beyond
 * what IF says (DESIGN.md "IPI rules"): a one-shot LVTT interrupt reaches
 * a guest that spins with IF=1 and keeps sending itself NMIs, within its
 * deadline plus 1 ms. Under tickvisor the timer's expiry is then mostly
 * found on the way back into the guest from an ICR write whose entry
 * injects the NMI; that entry must also set up the interrupt (RVI, or an
 * interrupt-window exit).
 *
 * Every ICR write is a VM exit (two without APICv, with the busy poll),
 * so the round count is what keeps this test within a few seconds.
 */
#include "lib/guest.h"
#include "lib/apic_util.h"
#include "lib/timer_util.h"

#define ICR_SELF_NMI    ((uint32_t)(FIELD_PREP(LAPIC_ICR_SHORTHAND, LAPIC_DEST_SELF) | \
				    FIELD_PREP(LAPIC_ICR_DELIVERY, LAPIC_DM_NMI)))
#define STORM_ROUNDS    2000u
#define STORM_BURST     10u     /* NMIs the handler sends itself per round */
#define STORM_SETTLE_US 20u     /* after a round, for any late extra run */
#define TIMER_TRIALS    48u
#define TIMER_STEP_TSC  37u     /* one-shot length step between trials */
#define TIMER_COUNT_US  100u    /* one-shot length */
#define TIMER_LATE_US   1000u   /* how late it may be with NMIs going on */

static volatile uint32_t nmi_runs;      /* handler runs in this round */
static volatile uint32_t depth, max_depth;
static volatile bool burst;             /* the first run of a round sends */

static void on_nmi(struct ex_regs *r)
{
	(void)r;
	if (++depth > max_depth)
		max_depth = depth;
	if (++nmi_runs == 1 && burst)
		for (unsigned i = 0; i < STORM_BURST; i++)
			apic_icr_write(ICR_SELF_NMI, 0);
	depth--;
}

/* One NMI from outside the handler; its handler sends STORM_BURST more,
 * of which one is latched and the rest dropped: two runs in all. */
static void test_storm(void)
{
	uint32_t bad = 0, most = 0, first_bad = 0;

	cli();
	burst = true;
	max_depth = 0;
	for (uint32_t round = 0; round < STORM_ROUNDS; round++) {
		nmi_runs = 0;
		apic_icr_write(ICR_SELF_NMI, 0);
		apic_util_wait(&nmi_runs, 2, APIC_WAIT_US);
		tsc_delay_us(STORM_SETTLE_US);
		if (nmi_runs != 2 && !bad++)
			first_bad = round;
		if (nmi_runs > most)
			most = nmi_runs;
	}
	burst = false;
	/* Nothing may be left queued: CPUID exits under tickvisor, and an
	 * entry delivers an NMI that is still waiting. */
	nmi_runs = 0;
	for (unsigned i = 0; i < STORM_BURST; i++)
		cpuid(0);
	tsc_delay_us(APIC_QUIET_US);
	report(nmi_runs == 0, "no NMI left over after the storm (%u arrived)", nmi_runs);
	report(bad == 0, "%u rounds of %u self-NMIs sent by the handler: it ran twice each time "
	       "(%u rounds otherwise, the first %u; at most %u runs)",
	       STORM_ROUNDS, STORM_BURST, bad, first_bad, most);
	report(max_depth == 1, "the NMI handler never nested (depth %u)", max_depth);
	sti();
}

/* IF=1 and self-NMIs back to back until the one-shot interrupt is in. */
static bool timer_through_nmis(uint64_t len_tsc, uint64_t *late)
{
	uint32_t count = tmr_tsc_to_ticks(len_tsc, 1);
	uint64_t len = tmr_ticks_to_tsc(count, 1), t0;
	uint64_t until;

	sti();
	t0 = tmr_arm(LAPIC_TIMER_ONESHOT, false, count);
	until = t0 + len + tmr_us_to_tsc(TIMER_LATE_US);
	while (!tmr_count(TMR_VEC) && rdtsc() < until)
		apic_icr_write(ICR_SELF_NMI, 0);
	cli();
	if (!tmr_count(TMR_VEC))
		return false;
	*late = tmr_stamp(TMR_VEC, 0) - (t0 + len);
	return tmr_stamp(TMR_VEC, 0) <= until;
}

/* The expiry must meet every point of the send loop, also the VM exit of
 * an ICR write: the timer's length steps by a few cycles per trial (the
 * loop runs the same instructions every time, and Bochs's clock counts
 * instructions). In x2APIC mode an ICR write is one WRMSR exit, so every
 * entry of the loop injects an NMI, with APICv or without. */
static void test_timer_behind_nmis(const char *mode)
{
	uint32_t missed = 0, first_missed = 0;
	uint64_t late, worst = 0, base = tmr_us_to_tsc(TIMER_COUNT_US);

	for (uint32_t i = 0; i < TIMER_TRIALS; i++) {
		if (!timer_through_nmis(base + i * TIMER_STEP_TSC, &late)) {
			if (!missed++)
				first_missed = i;
		} else if (late > worst) {
			worst = late;
		}
		tmr_stop();
	}
	report(missed == 0, "%s: one-shot LVTT arrives within %u us of its deadline while the "
	       "guest sends itself NMIs with IF=1 (%u of %u trials late, the first %u)",
	       mode, TIMER_LATE_US, missed, TIMER_TRIALS, first_missed);
	report_info("%s: latest arrival %lu cycles after the deadline", mode, worst);
}

int main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	if (!apic_test_start("apic_nmi_storm"))
		return report_summary();
	if (tmr_init()) {
		handle_irq(NMI_VECTOR, on_nmi);
		test_storm();
		cli();
		apic_run_both_modes(test_timer_behind_nmis);
	}
	return apic_test_end();
}
