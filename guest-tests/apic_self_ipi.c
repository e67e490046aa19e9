// SPDX-License-Identifier: BSD-2-Clause
/*
 * apic_self_ipi: a CPU interrupting itself (Intel SDM Vol. 3A, "Issuing
 * Interprocessor Interrupts", "Determining IPI Destination", "SELF IPI
 * Register"). Every route must deliver the vector exactly once: ICR with
 * the self and all-including shorthands, physical destination = own ID
 * and broadcast, logical destination (flat and cluster models), and in
 * x2APIC mode the 64-bit ICR and the SELF IPI MSR. The all-excluding
 * shorthand and non-matching destinations must not reach this CPU.
 * Inside the handler the vector is in service (ISR), not requested (IRR),
 * and edge-triggered (TMR clear); after the EOI nothing is left.
 */
#include "lib/guest.h"
#include "lib/apic_util.h"

#define VEC             0x70u
#define ICR_SH(sh)      ((uint32_t)FIELD_PREP(LAPIC_ICR_SHORTHAND, sh))

static volatile uint32_t hits, isr_in, irr_in, tmr_in;

static void on_vec(struct ex_regs *r)
{
	(void)r;
	hits++;
	isr_in = apic_vec_test(LAPIC_ISR, VEC);
	irr_in = apic_vec_test(LAPIC_IRR, VEC);
	tmr_in = apic_vec_test(LAPIC_TMR, VEC);
	apic_eoi();
}

/* Sending is done with interrupts off by the caller; this lets it in. */
static void expect_once(const char *how)
{
	apic_util_let_in(&hits, 1);
	report(hits == 1, "%s: delivered exactly once (%u)", how, hits);
	report(isr_in && !irr_in && !tmr_in, "%s: in the handler ISR 1, IRR 0, TMR 0 (%u %u %u)",
	       how, isr_in, irr_in, tmr_in);
	report(apic_vec_none(LAPIC_ISR) && apic_vec_none(LAPIC_IRR),
	       "%s: after EOI ISR and IRR empty", how);
	hits = isr_in = irr_in = tmr_in = 0;
}

static void expect_none(const char *how)
{
	apic_util_let_in(NULL, 0);
	report(hits == 0 && apic_vec_none(LAPIC_IRR), "%s: not delivered (%u)", how, hits);
	hits = 0;
}

static void test_xapic_shorthand_self(void)
{
	uint32_t icr;

	apic_icr_write(ICR_SH(LAPIC_DEST_SELF) | VEC, 0);
	icr = apic_read(LAPIC_ICR_LO);
	report(!(icr & LAPIC_ICR_BUSY), "ICR delivery status reads 0 (ICR 0x%x)", icr);
	report((icr & ~(uint32_t)LAPIC_ICR_BUSY) == (ICR_SH(LAPIC_DEST_SELF) | VEC),
	       "ICR reads back what was written");
	report(hits == 0 && apic_vec_test(LAPIC_IRR, VEC), "IF=0: pending in IRR, not delivered");
	expect_once("shorthand self");
}

static void test_xapic_routes(void)
{
	uint32_t id = apic_id();

	apic_icr_write(VEC, id);
	expect_once("physical destination = own ID");
	apic_icr_write(VEC, 0xff);
	expect_once("physical broadcast 0xff");
	apic_icr_write(ICR_SH(LAPIC_DEST_ALL) | VEC, 0);
	expect_once("shorthand all-including self");
	apic_icr_write(ICR_SH(LAPIC_DEST_ALL_BUT_SELF) | VEC, 0);
	expect_none("shorthand all-excluding self");
	apic_icr_write(VEC, id == 0x0e ? 0x0d : 0x0e);
	expect_none("physical destination = another ID");
	/* "Trigger Mode ... ignored for all other delivery modes" than INIT
	 * level de-assert: a fixed IPI is edge-triggered whatever bit 15 says. */
	apic_icr_write(LAPIC_ICR_LEVEL | LAPIC_ICR_ASSERT | VEC, id);
	expect_once("ICR trigger mode level (ignored)");
}

static void test_xapic_logical(void)
{
	apic_write(LAPIC_DFR, 0xffffffff);              /* flat model */
	apic_write(LAPIC_LDR, 0x01u << 24);
	apic_icr_write(LAPIC_ICR_DEST_LOGICAL | VEC, 0x01);
	expect_once("logical flat, LDR 0x01, destination 0x01");
	apic_icr_write(LAPIC_ICR_DEST_LOGICAL | VEC, 0x03);
	expect_once("logical flat, destination 0x03");
	apic_icr_write(LAPIC_ICR_DEST_LOGICAL | VEC, 0x02);
	expect_none("logical flat, destination 0x02");

	apic_write(LAPIC_DFR, 0x0fffffff);              /* cluster model */
	report(apic_read(LAPIC_DFR) == 0x0fffffff, "DFR 0x%x: cluster model, bits 27:0 read 1",
	       apic_read(LAPIC_DFR));
	apic_write(LAPIC_LDR, 0x21u << 24);             /* cluster 2, member bit 0 */
	apic_icr_write(LAPIC_ICR_DEST_LOGICAL | VEC, 0x23);
	expect_once("logical cluster, LDR 0x21, destination 0x23");
	apic_icr_write(LAPIC_ICR_DEST_LOGICAL | VEC, 0x31);
	expect_none("logical cluster, destination 0x31 (other cluster)");
	apic_icr_write(LAPIC_ICR_DEST_LOGICAL | VEC, 0x22);
	expect_none("logical cluster, destination 0x22 (other member)");
	apic_write(LAPIC_DFR, 0xffffffff);
	apic_write(LAPIC_LDR, 0);
}

static void test_x2apic(void)
{
	uint32_t id;
	uint64_t icr;

	if (!apic_enter_x2apic())
		return;
	report_prefix_push("x2APIC");
	id = apic_id();
	wrmsr(MSR_X2APIC_ICR, (uint64_t)id << 32 | VEC);
	icr = rdmsr(MSR_X2APIC_ICR);
	report(icr == ((uint64_t)id << 32 | VEC), "ICR reads 0x%lx: destination in 63:32, bit 12 0",
	       icr);
	expect_once("64-bit ICR, physical destination = own ID");
	wrmsr(MSR_X2APIC_ICR, ICR_SH(LAPIC_DEST_SELF) | VEC);
	expect_once("ICR shorthand self");
	wrmsr(MSR_X2APIC_ICR, 0xffffffffull << 32 | VEC);
	expect_once("ICR broadcast 0xffffffff");
	wrmsr(MSR_X2APIC_SELF_IPI, VEC);
	report(hits == 0 && apic_vec_test(LAPIC_IRR, VEC), "SELF IPI: IF=0, pending in IRR");
	expect_once("SELF IPI register");
	reset_apic();
	report_prefix_pop();
}

int main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	if (!apic_test_start("apic_self_ipi"))
		return report_summary();
	handle_irq(VEC, on_vec);
	cli();
	apic_sw_enable();
	test_xapic_shorthand_self();
	test_xapic_routes();
	test_xapic_logical();
	test_x2apic();
	return apic_test_end();
}
