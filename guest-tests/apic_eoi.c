// SPDX-License-Identifier: BSD-2-Clause
/*
 * apic_eoi: nesting through ISR and EOI (Intel SDM Vol. 3A, "Interrupt
 * Acceptance for Fixed Interrupts", "Signaling Interrupt Servicing
 * Completion", "Interrupt, Task, and Processor Priority"):
 *
 * - a vector of a higher priority class preempts a handler that re-enabled
 *   interrupts; both are then in service (ISR);
 * - an EOI clears the highest ISR bit, whoever writes it;
 * - a vector of the same or a lower class waits in IRR until the EOI of
 *   the one in service, then the higher of the waiting ones goes first;
 * - an EOI with nothing in service changes nothing.
 *
 * All of it runs in xAPIC mode, then again in x2APIC mode where present.
 */
#include "lib/guest.h"
#include "lib/apic_util.h"

#define LOW             0x40u   /* class 4 */
#define HIGH            0x80u   /* class 8 */
#define SAME            0x4fu   /* class 4, above LOW */
#define LOWER           0x30u   /* class 3 */

static volatile uint32_t order[8], n_order;
static volatile uint32_t high_hits, same_hits, lower_hits, low_hits;

/* What the LOW handler saw, checked after it returned. */
static volatile bool low_isr_in, high_in_low, both_in_service, eoi_took_high;
static volatile bool waited, same_irr, lower_irr, low_isr_after_eoi;
/* What the HIGH handler saw. */
static volatile bool high_saw_low, high_saw_high;

static void record(uint32_t vec)
{
	if (n_order < ARRAY_SIZE(order))
		order[n_order] = vec;
	n_order++;
}

/* No EOI here: the LOW handler writes the EOI that must clear HIGH. */
static void on_high(struct ex_regs *r)
{
	(void)r;
	record(HIGH);
	high_hits++;
	high_saw_low = apic_vec_test(LAPIC_ISR, LOW);
	high_saw_high = apic_vec_test(LAPIC_ISR, HIGH);
}

static void on_low(struct ex_regs *r)
{
	(void)r;
	record(LOW);
	low_hits++;
	low_isr_in = apic_vec_test(LAPIC_ISR, LOW);
	sti();
	apic_self_ipi(HIGH);
	high_in_low = apic_util_wait(&high_hits, 1, APIC_WAIT_US);
	both_in_service = apic_vec_test(LAPIC_ISR, LOW) && apic_vec_test(LAPIC_ISR, HIGH);
	apic_eoi();
	eoi_took_high = !apic_vec_test(LAPIC_ISR, HIGH) && apic_vec_test(LAPIC_ISR, LOW);

	apic_self_ipi(SAME);
	apic_self_ipi(LOWER);
	tsc_delay_us(APIC_QUIET_US);
	waited = same_hits == 0 && lower_hits == 0;
	same_irr = apic_vec_test(LAPIC_IRR, SAME);
	lower_irr = apic_vec_test(LAPIC_IRR, LOWER);
	cli();
	apic_eoi();
	low_isr_after_eoi = apic_vec_test(LAPIC_ISR, LOW);
}       /* IRET sets IF again: SAME, then LOWER */

static void on_same(struct ex_regs *r)
{
	(void)r;
	record(SAME);
	same_hits++;
	apic_eoi();
}

static void on_lower(struct ex_regs *r)
{
	(void)r;
	record(LOWER);
	lower_hits++;
	apic_eoi();
}

static void test_nesting(void)
{
	static const uint32_t want[] = { LOW, HIGH, SAME, LOWER };
	bool in_order;

	apic_self_ipi(LOW);
	apic_util_let_in(&lower_hits, 1);
	report(low_hits == 1 && low_isr_in, "vector 0x%x delivered once, in service", LOW);
	report(high_in_low && high_hits == 1, "vector 0x%x preempts its handler (%u)", HIGH,
	       high_hits);
	report(high_saw_low && high_saw_high, "inside: ISR bits 0x%x and 0x%x both set", LOW, HIGH);
	report(both_in_service, "after the preemption returns without EOI: both still in service");
	report(eoi_took_high, "EOI clears the highest ISR bit (0x%x), 0x%x stays", HIGH, LOW);
	report(waited, "vectors 0x%x (same class) and 0x%x (lower class) wait", SAME, LOWER);
	report(same_irr && lower_irr, "both wait in IRR");
	report(!low_isr_after_eoi, "second EOI clears 0x%x", LOW);
	report(same_hits == 1 && lower_hits == 1, "after the EOI: each delivered once (%u %u)",
	       same_hits, lower_hits);
	in_order = n_order == ARRAY_SIZE(want);
	for (unsigned i = 0; in_order && i < ARRAY_SIZE(want); i++)
		in_order = order[i] == want[i];
	report(in_order, "order 0x%x 0x%x 0x%x 0x%x (%u handlers)", order[0], order[1], order[2],
	       order[3], n_order);
	report(apic_vec_none(LAPIC_ISR) && apic_vec_none(LAPIC_IRR) &&
	       apic_read(LAPIC_PPR) == 0, "ISR, IRR empty, PPR 0");
}

static void reset_state(void)
{
	n_order = high_hits = same_hits = lower_hits = low_hits = 0;
	low_isr_in = high_in_low = both_in_service = eoi_took_high = false;
	waited = same_irr = lower_irr = low_isr_after_eoi = false;
	high_saw_low = high_saw_high = false;
	for (unsigned i = 0; i < ARRAY_SIZE(order); i++)
		order[i] = 0;
}

static void test_eoi_empty_isr(void)
{
	same_hits = 0;
	apic_self_ipi(SAME);
	apic_eoi();
	report(apic_vec_test(LAPIC_IRR, SAME) && apic_vec_none(LAPIC_ISR) &&
	       apic_read(LAPIC_PPR) == 0, "EOI with empty ISR: IRR bit kept, ISR empty, PPR 0");
	apic_util_let_in(&same_hits, 1);
	report(same_hits == 1 && apic_vec_none(LAPIC_ISR) && apic_vec_none(LAPIC_IRR),
	       "the pending vector is still delivered once (%u)", same_hits);
}

/* The same in either mode: apic_read/apic_write/apic_eoi follow it. */
static void run(const char *mode)
{
	report_prefix_push(mode);
	reset_state();
	test_nesting();
	test_eoi_empty_isr();
	report_prefix_pop();
}

int main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	if (!apic_test_start("apic_eoi"))
		return report_summary();
	handle_irq(LOW, on_low);
	handle_irq(HIGH, on_high);
	handle_irq(SAME, on_same);
	handle_irq(LOWER, on_lower);
	apic_run_both_modes(run);
	return apic_test_end();
}
