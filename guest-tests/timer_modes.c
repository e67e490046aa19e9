// SPDX-License-Identifier: BSD-2-Clause
/*
 * timer_modes: changes of the LVTT timer mode (bits 18:17). DESIGN.md,
 * "Timer rules": one-shot <-> periodic keeps the running count and TMICT,
 * and the new mode decides what happens at 0; only a change into or out
 * of TSC-deadline mode disarms (SDM "TSC-Deadline Mode"). Real parts,
 * Bochs (apic.cc set_lvt_entry: "Transition between TSC-Deadline and
 * other timer modes disarm the timer"; its periodic reload looks at the
 * LVTT mode when the count reaches 0) and KVM (apic_update_lvtt cancels
 * the timer only when the TSC-deadline bit changes) agree. Mode 3 is
 * reserved: tickvisor runs it as one-shot and stores mode 0, so LVTT
 * reads back one-shot. Each timing check runs twice: spinning with IF=1,
 * then halted (STI; HLT).
 *
 * Arguments: slack_us=N (how late an interrupt may be, default 50).
 */
#include "lib/guest.h"
#include "lib/timer_util.h"

#define COUNT_US                1000u
#define LONG_COUNT              0x999999u       /* runs ~10^7 ticks: never reached here */

static uint32_t count;                  /* TMICT for COUNT_US at divide 1 */
static uint64_t len;                    /* that in TSC cycles */

static void set_lvtt(unsigned mode)
{
	apic_write(LAPIC_LVT_TIMER, tmr_lvtt(mode, TMR_VEC, false));
}

/* The interrupt k (1-based) arrived no earlier than `delay` after t0 and
 * no later than the slack after that. */
static bool on_time(uint32_t k, uint64_t t0, uint64_t delay, uint64_t *at)
{
	*at = tmr_stamp(TMR_VEC, k - 1) - t0;
	return *at >= delay && *at < delay + tmr_slack_tsc;
}

/* A long one-shot switched to periodic: TMICT stays, TMCCT goes on
 * counting down from where it was instead of reloading. */
static void test_switch_keeps_count(void)
{
	uint32_t before, after, later, tmict;

	tmr_arm(LAPIC_TIMER_ONESHOT, false, LONG_COUNT);
	tmr_spin_until(rdtsc() + len);
	before = apic_read(LAPIC_TMCCT);
	set_lvtt(LAPIC_TIMER_PERIODIC);
	after = apic_read(LAPIC_TMCCT);
	tmict = apic_read(LAPIC_TMICT);
	tmr_spin_until(rdtsc() + len);
	later = apic_read(LAPIC_TMCCT);
	report(tmict == LONG_COUNT, "one-shot -> periodic: TMICT unchanged (0x%x)", tmict);
	report(before < LONG_COUNT && after <= before && after > 0,
	       "one-shot -> periodic: TMCCT not reloaded (0x%x, then 0x%x)", before, after);
	report(later < after, "one-shot -> periodic: TMCCT counts on (0x%x)", later);
	set_lvtt(LAPIC_TIMER_ONESHOT);
	tmict = apic_read(LAPIC_TMICT);
	after = apic_read(LAPIC_TMCCT);
	report(tmict == LONG_COUNT && after <= later && after > 0,
	       "periodic -> one-shot: TMICT 0x%x and TMCCT 0x%x run on", tmict, after);
	tmr_stop();
}

/* One-shot started at t0, switched to periodic half-way: the interrupt
 * comes when the first count reaches 0 (t0 + len, not len after the
 * switch), then the count reloads (t0 + 2 len). Switched back to one-shot,
 * the running count fires once more (t0 + 3 len) and stops. */
static void test_switch_modes_fire(enum tmr_wait how)
{
	uint64_t t0, at[3] = { 0 };
	bool ok[3], quiet;

	/* Timed part first: a report line takes longer than a count. */
	t0 = tmr_arm(LAPIC_TIMER_ONESHOT, false, count);
	tmr_spin_until(t0 + len / 2);
	set_lvtt(LAPIC_TIMER_PERIODIC);
	ok[0] = tmr_wait(how, TMR_VEC, 1, t0 + 3 * len) && on_time(1, t0, len, &at[0]);
	ok[1] = tmr_wait(how, TMR_VEC, 2, t0 + 4 * len) && on_time(2, t0, 2 * len, &at[1]);
	set_lvtt(LAPIC_TIMER_ONESHOT);
	ok[2] = tmr_wait(how, TMR_VEC, 3, t0 + 5 * len) && on_time(3, t0, 3 * len, &at[2]);
	quiet = tmr_quiet(how, TMR_VEC, 3 * len) && tmr_count(TMR_VEC) == 3;
	report(ok[0], "one-shot -> periodic mid-count: fires when the running count ends (%lu "
	       "cycles, count %lu)", at[0], len);
	report(ok[1], "then reloads TMICT: second interrupt after %lu cycles (%lu)", at[1],
	       2 * len);
	report(ok[2], "periodic -> one-shot: the running count fires once more (%lu cycles, %lu)",
	       at[2], 3 * len);
	report(quiet, "periodic -> one-shot: then stops (no interrupt within 3 counts)");
}

/* A one-shot that reached 0 stays at 0 when switched to periodic. */
static void test_switch_after_expiry(enum tmr_wait how)
{
	uint64_t t0;
	uint32_t tmcct;
	bool fired, quiet;

	t0 = tmr_arm(LAPIC_TIMER_ONESHOT, false, count);
	fired = tmr_wait(how, TMR_VEC, 1, t0 + 3 * len);
	set_lvtt(LAPIC_TIMER_PERIODIC);
	tmcct = apic_read(LAPIC_TMCCT);
	quiet = tmr_quiet(how, TMR_VEC, 3 * len);
	report(fired && tmcct == 0, "expired one-shot -> periodic: TMCCT stays 0 (%u)", tmcct);
	report(quiet && tmr_count(TMR_VEC) == 1,
	       "expired one-shot -> periodic: no reload, no interrupt within 3 counts");
}

static void test_count_modes(enum tmr_wait how)
{
	if (how == TMR_SPIN)
		test_switch_keeps_count();
	test_switch_modes_fire(how);
	test_switch_after_expiry(how);
}

/* One-shot -> TSC-deadline -> one-shot: each switch disarms what ran
 * before, and the new mode then works. */
static void test_deadline_roundtrip(enum tmr_wait how)
{
	uint64_t t0, at = 0, msr;
	bool fired, quiet;

	if (!tmr_has_tsc_deadline()) {
		report_skip("no TSC-deadline mode (CPUID.1:ECX[24])");
		return;
	}
	tmr_arm(LAPIC_TIMER_ONESHOT, false, count);
	set_lvtt(LAPIC_TIMER_TSC_DEADLINE);
	msr = rdmsr(MSR_IA32_TSC_DEADLINE) | apic_read(LAPIC_TMCCT);
	quiet = tmr_quiet(how, TMR_VEC, 3 * len);
	report(msr == 0, "one-shot -> TSC-deadline: MSR and TMCCT read 0 (0x%lx)", msr);
	report(quiet, "one-shot -> TSC-deadline: the count is disarmed, no interrupt within "
	       "3 counts");

	t0 = rdtsc();
	wrmsr(MSR_IA32_TSC_DEADLINE, t0 + len);
	fired = tmr_wait(how, TMR_VEC, 1, t0 + 3 * len);
	fired = fired && on_time(1, t0, len, &at);
	report(fired, "then a deadline fires on time: after %lu cycles", at);

	wrmsr(MSR_IA32_TSC_DEADLINE, rdtsc() + len);
	set_lvtt(LAPIC_TIMER_ONESHOT);
	msr = rdmsr(MSR_IA32_TSC_DEADLINE);
	quiet = tmr_quiet(how, TMR_VEC, 3 * len);
	report(msr == 0, "TSC-deadline -> one-shot: MSR reads 0 (0x%lx)", msr);
	report(quiet && tmr_count(TMR_VEC) == 1,
	       "TSC-deadline -> one-shot: the deadline is disarmed, no interrupt within 3 delays");

	t0 = rdtsc();
	apic_write(LAPIC_TMICT, count);
	fired = tmr_wait(how, TMR_VEC, 2, t0 + 3 * len);
	fired = fired && on_time(2, t0, len, &at);
	report(fired, "then a one-shot count fires on time: after %lu cycles", at);
}

/* tickvisor's answer to the reserved mode 3 (SDM: "11b: Reserved"). */
static void test_reserved(enum tmr_wait how)
{
	uint32_t lvtt;
	uint64_t t0, at = 0;
	bool fired;

	if (!tickvisor_present()) {
		report_skip("LVTT mode 3: reserved, only tickvisor's answer is known");
		return;
	}
	tmr_stop();
	set_lvtt(LAPIC_TIMER_RESERVED);
	lvtt = apic_read(LAPIC_LVT_TIMER);
	t0 = rdtsc();
	apic_write(LAPIC_TMICT, count);
	fired = tmr_wait(how, TMR_VEC, 1, t0 + 3 * len);
	report(lvtt == tmr_lvtt(LAPIC_TIMER_ONESHOT, TMR_VEC, false),
	       "LVTT mode 3 reads back as one-shot: 0x%x", lvtt);
	fired = fired && on_time(1, t0, len, &at);
	report(fired, "mode 3 runs as one-shot: fires after %lu cycles, count %lu", at, len);
	report(tmr_quiet(how, TMR_VEC, 3 * len) && tmr_count(TMR_VEC) == 1,
	       "mode 3: no reload, no second interrupt within 3 counts");

	t0 = tmr_arm(LAPIC_TIMER_PERIODIC, false, count);
	set_lvtt(LAPIC_TIMER_RESERVED);
	fired = tmr_wait(how, TMR_VEC, 1, t0 + 3 * len);
	fired = fired && on_time(1, t0, len, &at);
	report(fired, "periodic -> mode 3 is a change to one-shot: the running count fires (%lu "
	       "cycles)", at);
	report(tmr_quiet(how, TMR_VEC, 3 * len) && tmr_count(TMR_VEC) == 1,
	       "periodic -> mode 3: then stops, no interrupt within 3 counts");
}

static void test_modes(enum tmr_wait how)
{
	report_prefix_push(tmr_wait_name[how]);
	test_count_modes(how);
	test_deadline_roundtrip(how);
	test_reserved(how);
	tmr_stop();
	report_prefix_pop();
}

int main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	report_prefix_push("timer_modes");
	if (tmr_init()) {
		count = tmr_tsc_to_ticks(tmr_us_to_tsc(COUNT_US), 1);
		len = tmr_ticks_to_tsc(count, 1);
		for (enum tmr_wait how = 0; how < TMR_NR_WAITS; how++)
			test_modes(how);
	}
	report_prefix_pop();
	return report_summary();
}
