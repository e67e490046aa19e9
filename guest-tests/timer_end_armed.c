// SPDX-License-Identifier: BSD-2-Clause
/*
 * timer_end_armed: a guest ends while every vCPU's APIC timer runs, and
 * the next guest on the same CPUs must see nothing of them (issue 13.6).
 *
 * Two runs of this image, one after the other in the same boot (like
 * cpu_state_leak): role=arm starts a periodic timer at the minimum
 * period on every CPU (TMICT 1: tickvisor clamps it to min_period_us, a
 * storm otherwise) and on the BSP a TSC deadline due right at its exit,
 * waits until every CPU has taken ticks, and exits with all of them
 * armed. role=check starts its CPUs and watches each with IF=1 for
 * 25 periods: no interrupt on the vector role=arm used may arrive, none
 * may wait in IRR, and every timer reads the power-up state (SDM Vol. 3A,
 * "Local APIC State After Power-Up or Reset": LVTs masked, TMICT 0;
 * "TSC-Deadline Mode": the MSR 0).
 *
 * Under timer=posted the arm guest's timers sit in a housekeeping CPU's
 * queue and deliver through its vCPUs' posted-interrupt descriptors:
 * tickvisor must take them out before it frees those vCPUs and starts
 * the next guest (vmm/apic/housekeeper.c), or a late post lands in freed
 * memory, or in the next guest's descriptor.
 */
#include "lib/guest.h"
#include "lib/apic_util.h"
#include "lib/smp.h"
#include "lib/tsc.h"

#define ARMED_VEC               0x66u
#define MIN_TICKS               5u      /* per CPU before role=arm exits */
#define WATCH_US                5000u   /* role=check: 25 periods of 200 us */

static volatile uint32_t ticks[MAX_CPUS];
static volatile bool clean[MAX_CPUS];

static void on_tick(struct ex_regs *r)
{
	(void)r;
	ticks[smp_id()]++;
	apic_eoi();
}

static void arm_periodic(void *arg)
{
	(void)arg;
	apic_write(LAPIC_TDCR, LAPIC_TDCR_DIV1);
	apic_write(LAPIC_LVT_TIMER, (uint32_t)FIELD_PREP(LAPIC_LVT_TIMER_MODE,
							   LAPIC_TIMER_PERIODIC) | ARMED_VEC);
	apic_write(LAPIC_TMICT, 1);
}

static bool all_ticked(unsigned n)
{
	for (unsigned c = 0; c < n; c++)
		if (ticks[c] < MIN_TICKS)
			return false;
	return true;
}

static void role_arm(unsigned n)
{
	uint64_t until = tsc_deadline_us(SMP_CALL_TIMEOUT_US);

	for (unsigned c = 1; c < n; c++)
		report(on_cpu(c, arm_periodic, NULL), "CPU %u armed", c);
	arm_periodic(NULL);
	while (!all_ticked(n) && !tsc_passed(until))
		pause();
	report(all_ticked(n), "every CPU's periodic timer ticks (BSP %u)", ticks[0]);
	/* The BSP leaves with a TSC deadline due about now, on top. */
	apic_write(LAPIC_LVT_TIMER, (uint32_t)FIELD_PREP(LAPIC_LVT_TIMER_MODE,
							   LAPIC_TIMER_TSC_DEADLINE) | ARMED_VEC);
	wrmsr(MSR_IA32_TSC_DEADLINE, tsc_deadline_us(20));
}

static void check_one(void *arg)
{
	unsigned me = smp_id();
	bool regs;

	(void)arg;
	regs = (apic_read(LAPIC_LVT_TIMER) & LAPIC_LVT_MASKED) && apic_read(LAPIC_TMICT) == 0 &&
	       rdmsr(MSR_IA32_TSC_DEADLINE) == 0;
	sti();
	tsc_delay_us(WATCH_US);
	clean[me] = regs && !ticks[me] && !apic_vec_test(LAPIC_IRR, ARMED_VEC) &&
		    !apic_vec_test(LAPIC_ISR, ARMED_VEC);
}

static void role_check(unsigned n)
{
	bool ran = on_cpus(check_one, NULL);

	report(ran, "%u CPUs watched for %u us", n, WATCH_US);
	for (unsigned c = 0; c < n; c++)
		report(clean[c], "CPU %u: timer in reset state, nothing of the last guest's timers "
		       "arrives (%u interrupts on 0x%x)", c, ticks[c], ARMED_VEC);
}

int main(int argc, char **argv)
{
	const char *role = arg_get("role");
	unsigned n = cpu_count();

	(void)argc;
	(void)argv;
	report_prefix_push("timer_end_armed");
	handle_irq(ARMED_VEC, on_tick);
	if (n > 1 && !smp_init_report())
		return report_summary();
	apic_sw_enable();       /* smp_init() does it where there are APs */
	sti();
	if (role && !strcmp(role, "arm"))
		role_arm(n);
	else if (role && !strcmp(role, "check"))
		role_check(n);
	else
		report_fail("role=arm or role=check, not %s", role ? role : "(none)");
	return report_summary();
}
