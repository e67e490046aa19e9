// SPDX-License-Identifier: BSD-2-Clause
/*
 * The exit cost tickvisor reports (TV_HC_EXIT_COST, issue 22.10) is the
 * one it measured at this vCPU's start, and the guests' timer slack is
 * scaled by it (lib/timer_util.h: at least TMR_SLACK_EXITS round trips).
 *
 * What must hold wherever tickvisor runs (Bochs, nested KVM, hardware):
 * - the entry and the exit part are both measured (nonzero) and RAX is
 *   their sum: a calibration that failed leaves the slack unscaled, which
 *   under nested KVM makes every timer test flaky;
 * - one exit and one entry cannot cost more than the cheapest CPUID round
 *   trip the guest times itself (RDTSC, CPUID, RDTSC: an exit, tickvisor's
 *   handler and an entry), so the figure is not inflated: an inflated one
 *   would widen the slack until the timer tests cannot fail;
 * - the slack tmr_init() chose is the larger of slack_us and
 *   TMR_SLACK_EXITS times that cost.
 */
#include "lib/guest.h"
#include "lib/timer_util.h"

#define ROUND_TRIPS     64u

/* CPUID is serializing: neither RDTSC moves across it. */
static uint64_t cpuid_round_trip(void)
{
	uint64_t best = ~0ull;

	for (unsigned i = 0; i < ROUND_TRIPS; i++) {
		uint64_t t0 = rdtsc(), t1;

		cpuid(0);
		t1 = rdtsc();
		if (t1 - t0 < best)
			best = t1 - t0;
	}
	return best;
}

int main(int argc, char **argv)
{
	uint64_t out[4], cost, cpuid_min, want;

	(void)argc;
	(void)argv;
	if (!tickvisor_present()) {
		report_fail("not under tickvisor: this test asks tickvisor for its exit cost");
		return report_summary();
	}
	cost = tv_hypercall(TV_HC_EXIT_COST, 0, 0, 0, out);
	report(cost != TV_HC_ERROR && out[1] && out[2] && cost == out[1] + out[2],
	       "TV_HC_EXIT_COST: entry %lu + exit %lu = %lu TSC cycles, both measured",
	       out[1], out[2], cost);
	cpuid_min = cpuid_round_trip();
	report(cost != TV_HC_ERROR && cost <= cpuid_min,
	       "exit cost %lu cycles is at most the cheapest CPUID round trip (%lu cycles)",
	       cost, cpuid_min);
	if (!tmr_init())
		return report_summary();
	want = tmr_us_to_tsc(TMR_SLACK_US);
	if (tmr_exit_cost * TMR_SLACK_EXITS > want)
		want = tmr_exit_cost * TMR_SLACK_EXITS;
	report(tmr_exit_cost == cost && tmr_slack_tsc == want,
	       "timer slack %lu cycles = max(%u us, %u x %lu cycles)", tmr_slack_tsc,
	       TMR_SLACK_US, TMR_SLACK_EXITS, tmr_exit_cost);
	return report_summary();
}
