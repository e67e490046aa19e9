// SPDX-License-Identifier: BSD-2-Clause
/*
 * apic_nmi: NMIs through the ICR (Intel SDM Vol. 3A, "Interrupt Command
 * Register (ICR)", "Local APIC State After It Has Been Software Disabled";
 * "Nonmaskable Interrupt (NMI)" and "Handling Multiple NMIs" in the chapter
 * on interrupt and exception handling). Delivery mode NMI goes to vector 2
 * whatever the vector field says, ignores RFLAGS.IF, needs no EOI, is
 * accepted by a software-disabled APIC, and while an NMI handler runs the
 * next NMI is held until IRET ends it, then delivered.
 */
#include "lib/guest.h"
#include "lib/apic_util.h"

#define ICR_NMI         ((uint32_t)FIELD_PREP(LAPIC_ICR_DELIVERY, LAPIC_DM_NMI))
#define ICR_SELF        ((uint32_t)FIELD_PREP(LAPIC_ICR_SHORTHAND, LAPIC_DEST_SELF))
#define DECOY_VEC       0x33u   /* in the vector field of an NMI: must not be used */

static volatile uint32_t nmi_hits, decoy_hits;
static volatile uint32_t depth, max_depth;      /* NMI handler nesting */
static volatile bool resend;                    /* first NMI sends a second */
static volatile uint32_t hits_while_blocked;    /* seen by the first handler */

static void on_nmi(struct ex_regs *r)
{
	(void)r;
	depth++;
	if (depth > max_depth)
		max_depth = depth;
	nmi_hits++;
	if (resend && nmi_hits == 1) {
		apic_icr_write(ICR_SELF | ICR_NMI, 0);
		tsc_delay_us(APIC_QUIET_US);
		hits_while_blocked = nmi_hits;
	}
	depth--;
}

static void on_decoy(struct ex_regs *r)
{
	(void)r;
	decoy_hits++;
	apic_eoi();
}

static void reset_counts(void)
{
	nmi_hits = decoy_hits = depth = max_depth = hits_while_blocked = 0;
	resend = false;
}

/* IF stays 0 throughout: NMIs do not care. */
static void expect_one_nmi(const char *how)
{
	apic_util_wait(&nmi_hits, 1, APIC_WAIT_US);
	tsc_delay_us(APIC_QUIET_US);
	report(nmi_hits == 1 && decoy_hits == 0, "%s: one NMI with IF=0 (%u)", how, nmi_hits);
	reset_counts();
}

static void test_self_nmi(void)
{
	apic_icr_write(ICR_SELF | ICR_NMI | DECOY_VEC, 0);
	expect_one_nmi("shorthand self");
	report(apic_vec_none(LAPIC_IRR) && apic_vec_none(LAPIC_ISR),
	       "IRR and ISR untouched, vector field 0x%x ignored", DECOY_VEC);
	report(apic_esr_latch() == 0, "no ESR error");
	apic_icr_write(ICR_NMI, apic_id());
	expect_one_nmi("physical destination = own ID");
	apic_icr_write(ICR_SELF | ICR_NMI, 0);  /* vector 0: legal for an NMI */
	expect_one_nmi("vector field 0");
	report(apic_esr_latch() == 0, "vector 0 in an NMI is no ESR error");
}

static void test_blocking(void)
{
	resend = true;
	apic_icr_write(ICR_SELF | ICR_NMI, 0);
	apic_util_wait(&nmi_hits, 2, APIC_WAIT_US);
	tsc_delay_us(APIC_QUIET_US);
	report(hits_while_blocked == 1, "NMI sent inside the NMI handler is held (%u during it)",
	       hits_while_blocked);
	report(nmi_hits == 2, "and delivered after IRET (%u in all)", nmi_hits);
	report(max_depth == 1, "the handler never nested (depth %u)", max_depth);
	reset_counts();
}

static void test_sw_disabled(void)
{
	apic_sw_disable();
	apic_icr_write(ICR_SELF | ICR_NMI, 0);
	expect_one_nmi("software-disabled APIC");
	apic_sw_enable();
}

static void test_x2apic(void)
{
	if (!apic_enter_x2apic())
		return;
	wrmsr(MSR_X2APIC_ICR, ICR_SELF | ICR_NMI | DECOY_VEC);
	expect_one_nmi("x2APIC ICR shorthand self");
	wrmsr(MSR_X2APIC_ICR, (uint64_t)apic_id() << 32 | ICR_NMI);
	expect_one_nmi("x2APIC ICR physical destination");
	reset_apic();
}

int main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	if (!apic_test_start("apic_nmi"))
		return report_summary();
	handle_irq(NMI_VECTOR, on_nmi);
	handle_irq(DECOY_VEC, on_decoy);
	cli();
	apic_sw_enable();
	apic_esr_latch();
	test_self_nmi();
	test_blocking();
	test_sw_disabled();
	test_x2apic();
	return apic_test_end();
}
