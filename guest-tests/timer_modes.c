// SPDX-License-Identifier: BSD-2-Clause
/*
 * timer_modes: changes of the LVTT timer mode (bits 18:17). DESIGN.md,
 * "Timer rules": a mode change stops the timer (the SDM says so for
 * switches into and out of TSC-deadline mode, "TSC-Deadline Mode";
 * tickvisor does it for every change, as its design says). Mode 3 is
 * reserved: tickvisor runs it as one-shot and stores mode 0, so LVTT
 * reads back one-shot. Each timing check runs twice: spinning with IF=1,
 * then halted (STI; HLT).
 *
 * Arguments: slack_us=N (how late an interrupt may be, default 50).
 */
#include "lib/guest.h"
#include "lib/timer_util.h"

#define COUNT_US                1000u

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

static void test_count_modes(enum tmr_wait how)
{
	static const unsigned from[] = { LAPIC_TIMER_ONESHOT, LAPIC_TIMER_PERIODIC };
	static const char *const change[] = { "one-shot -> periodic", "periodic -> one-shot" };
	uint32_t tmcct;
	bool quiet;

	for (unsigned i = 0; i < ARRAY_SIZE(from); i++) {
		tmr_arm(from[i], false, count);
		set_lvtt(from[i] ^ 1);
		tmcct = apic_read(LAPIC_TMCCT);
		quiet = tmr_quiet(how, TMR_VEC, 3 * len);
		report(tmcct == 0, "%s: TMCCT reads 0 (%u)", change[i], tmcct);
		report(quiet, "%s without a TMICT write: no interrupt within 3 counts", change[i]);
	}
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
	report(fired && on_time(1, t0, len, &at), "then a deadline fires on time: after %lu cycles",
	       fired ? at : 0);

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
	report(fired && on_time(2, t0, len, &at), "then a one-shot count fires on time: after "
	       "%lu cycles", fired ? at : 0);
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
	report(fired && on_time(1, t0, len, &at), "mode 3 runs as one-shot: fires after %lu "
	       "cycles, count %lu", fired ? at : 0, len);
	report(tmr_quiet(how, TMR_VEC, 3 * len) && tmr_count(TMR_VEC) == 1,
	       "mode 3: no reload, no second interrupt within 3 counts");

	tmr_arm(LAPIC_TIMER_PERIODIC, false, count);
	set_lvtt(LAPIC_TIMER_RESERVED);
	report(tmr_quiet(how, TMR_VEC, 3 * len),
	       "periodic -> mode 3 is a change to one-shot: disarmed, no interrupt within "
	       "3 counts");
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
