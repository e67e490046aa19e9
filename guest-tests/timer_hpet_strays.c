// SPDX-License-Identifier: BSD-2-Clause
/*
 * timer_hpet_strays: a vCPU whose APIC timer runs on a level-triggered
 * HPET comparator keeps its timer when the comparator's I/O APIC input is
 * taken over by a device that shares the line (issue 22.6).
 *
 * A PCH routes HPET timers 0-1 only to I/O APIC inputs 20-23, which PCI
 * devices share, level-triggered and active low (Intel 6-series and Jasper
 * Lake PCH datasheets); a level interrupt whose comparator status bit is
 * clear is someone else's. tickvisor counts such strays and, after
 * HPET_STRAYS_MAX in a row (timer/host.h), masks the input, gives the
 * comparator up and moves the vCPU's timer to the next backend of its
 * option (timer=hpet: the host local APIC timer) with the same target
 * (DESIGN.md, "Timer rules": switching backend keeps the one target).
 *
 * The strays come from TV_HC_HPET_STRAYS, which tickvisor answers only
 * with the global option inject=hpet-strays (a guest must not be able to
 * cost the host its HPET otherwise):
 *   expect=refused (default): the hypercall is refused, the HPET timer
 *     keeps working;
 *   expect=masked: the input ends masked, the backend is the host LAPIC
 *     timer, a one-shot armed across the switch fires at its programmed
 *     time, and periodic ticks keep their period after it.
 * Runs with timer=hpet (unittests.cfg); elsewhere it skips.
 *
 * Arguments: expect=refused|masked, slack_us=N (default 50).
 */
#include "lib/guest.h"
#include "lib/tickvisor.h"
#include "lib/timer_util.h"

#define PERIOD_US               1000u
#define ONESHOT_US              200000u /* outlives the strays (~20 ms in Bochs) */

static uint64_t backend(void)
{
	struct tv_info info;

	return tv_get_info(&info) ? FIELD_GET(TV_INFO_TIMER, info.flags) : 0;
}

/* n periodic ticks of PERIOD_US, halted between them: each on its period. */
static void check_periodic(const char *when, unsigned n)
{
	uint32_t count = tmr_tsc_to_ticks(tmr_us_to_tsc(PERIOD_US), 1);
	uint64_t len = tmr_ticks_to_tsc(count, 1), t0, worst = 0;
	bool fired;

	t0 = tmr_arm(LAPIC_TIMER_PERIODIC, false, count);
	fired = tmr_wait(TMR_HLT, TMR_VEC, n, t0 + n * len + tmr_slack_tsc);
	/* Read before tmr_stop(), which clears the stamps. Never early: the
	 * count starts at the TMICT write, after t0. */
	for (uint32_t i = 0; fired && i < n; i++) {
		uint64_t due = t0 + (i + 1) * len, at = tmr_stamp(TMR_VEC, i);
		uint64_t late = at >= due ? at - due : ~0ull;

		worst = late > worst ? late : worst;
	}
	tmr_stop();
	report(fired && worst < tmr_slack_tsc, "%s: %u periodic ticks, each on time "
	       "(latest %lu cycles after its due time)", when, n, fired ? worst : 0);
}

static void test_refused(void)
{
	check_periodic("on the HPET", 5);
	report(tv_hypercall(TV_HC_HPET_STRAYS, 0, 0, 0, NULL) == TV_HC_ERROR,
	       "TV_HC_HPET_STRAYS refused without inject=hpet-strays");
	report(backend() == TV_TIMER_HPET, "the timer stays on the HPET");
	check_periodic("still on the HPET", 5);
}

static void test_masked(void)
{
	uint64_t len = tmr_us_to_tsc(ONESHOT_US), t0, at;
	uint64_t r;
	bool fired;

	check_periodic("on the HPET", 5);
	t0 = tmr_arm(LAPIC_TIMER_ONESHOT, false, tmr_tsc_to_ticks(len, 1));
	r = tv_hypercall(TV_HC_HPET_STRAYS, 0, 0, 0, NULL);
	report(r == 0, "strays on the HPET's input: input masked (%#lx)", r);
	report(backend() == TV_TIMER_LAPIC, "the timer moved to the host local APIC timer "
	       "(backend %lu)", backend());
	report(tmr_count(TMR_VEC) == 0 && rdtsc() - t0 < len,
	       "the one-shot armed before the strays has not fired yet");
	fired = tmr_wait(TMR_HLT, TMR_VEC, 1, t0 + len + tmr_slack_tsc);
	at = fired ? tmr_stamp(TMR_VEC, 0) - t0 : 0;
	report(fired && at >= len && at < len + tmr_slack_tsc,
	       "that one-shot fires at its programmed time on the new backend "
	       "(after %lu cycles of %lu)", at, len);
	tmr_stop();
	check_periodic("on the host LAPIC timer", 5);
}

int main(int argc, char **argv)
{
	const char *expect = arg_get("expect");

	(void)argc;
	(void)argv;
	report_prefix_push("timer_hpet_strays");
	if (!tmr_init())
		goto out;
	if (!tickvisor_present() || backend() != TV_TIMER_HPET)
		report_skip("needs tickvisor with timer=hpet (backend %lu)", backend());
	else if (expect && !strcmp(expect, "masked"))
		test_masked();
	else
		test_refused();
out:
	report_prefix_pop();
	return report_summary();
}
