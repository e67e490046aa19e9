// SPDX-License-Identifier: BSD-2-Clause
/*
 * apic_esr: the error status register and the error LVT (Intel SDM Vol.
 * 3A, "Error Handling"). Vectors 0-15 are illegal for fixed interrupts:
 * an IPI with one is not delivered and sets "send illegal vector" (bit 5;
 * for a self-IPI the receiving side may add bit 6), an LVT entry with one
 * sets "receive illegal vector" (bit 6). Reserved register offsets set
 * "illegal register address" (bit 7). Errors become visible only through
 * the write-before-read sequence: a write latches the errors since the
 * previous write and starts collecting anew. An unmasked error LVT raises
 * its interrupt when an error is detected.
 */
#include "lib/guest.h"
#include "lib/apic_util.h"

#define ILLEGAL         3u      /* any of 0..15 */
#define FIRST_LEGAL     16u
#define ERR_VEC         0xe5u
#define TIMER_COUNT     1000u   /* APIC timer clocks at divide 1 */

static volatile uint32_t illegal_hits, legal_hits, err_hits, err_esr;

static void on_illegal(struct ex_regs *r)
{
	(void)r;
	illegal_hits++;
	apic_eoi();
}

static void on_legal(struct ex_regs *r)
{
	(void)r;
	legal_hits++;
	apic_eoi();
}

/* The usual error handler: write-before-read, then EOI. */
static void on_error(struct ex_regs *r)
{
	(void)r;
	err_hits++;
	err_esr = apic_esr_latch();
	apic_eoi();
}

static bool is_send_illegal(uint32_t esr)
{
	return (esr & ~(uint32_t)LAPIC_ESR_RECV_ILLEGAL) == LAPIC_ESR_SEND_ILLEGAL;
}

static void test_illegal_ipi(void)
{
	uint32_t esr;

	apic_esr_latch();
	report(apic_esr_latch() == 0, "ESR reads 0 after two writes");
	apic_self_ipi(ILLEGAL);
	report(apic_read(LAPIC_IRR) == 0, "self-IPI vector %u: IRR bits 31:0 stay 0", ILLEGAL);
	report(apic_read(LAPIC_ESR) == 0, "before the next ESR write the error is not visible");
	esr = apic_esr_latch();
	report(is_send_illegal(esr), "after write + read: ESR 0x%x, send illegal vector", esr);
	apic_util_let_in(NULL, 0);
	report(illegal_hits == 0, "vector %u not delivered (%u)", ILLEGAL, illegal_hits);
	report(apic_esr_latch() == 0, "another write: ESR reads 0 again");

	apic_self_ipi(FIRST_LEGAL);
	apic_util_let_in(NULL, 0);
	report(legal_hits == 1, "vector %u is legal: delivered once (%u)", FIRST_LEGAL, legal_hits);
	report(apic_esr_latch() == 0, "and no error");
}

static void test_error_lvt(void)
{
	uint32_t lvt;

	apic_write(LAPIC_LVT_ERROR, ERR_VEC);
	lvt = apic_read(LAPIC_LVT_ERROR);
	report(lvt == ERR_VEC, "error LVT 0x%x: unmasked, delivery status 0", lvt);
	apic_self_ipi(ILLEGAL);
	report(apic_vec_test(LAPIC_IRR, ERR_VEC), "illegal IPI: error vector 0x%x requested",
	       ERR_VEC);
	apic_util_let_in(&err_hits, 1);
	report(err_hits == 1, "error interrupt delivered once (%u)", err_hits);
	report(is_send_illegal(err_esr), "its handler reads ESR 0x%x", err_esr);
	report(illegal_hits == 0 && apic_esr_latch() == 0, "nothing else, ESR clean");

	apic_write(LAPIC_LVT_ERROR, LAPIC_LVT_MASKED | ERR_VEC);
	apic_self_ipi(ILLEGAL);
	apic_util_let_in(NULL, 0);
	report(err_hits == 1 && apic_vec_none(LAPIC_IRR), "masked error LVT: no interrupt");
	report(is_send_illegal(apic_esr_latch()), "the error is still recorded");
}

static void test_illegal_register(void)
{
	volatile uint32_t *reserved = (volatile uint32_t *)(uintptr_t)(LAPIC_MMIO_BASE + 0x040);
	uint32_t esr, v;

	v = *reserved;
	esr = apic_esr_latch();
	report(v == 0 && esr == LAPIC_ESR_ILLEGAL_REG, "read of offset 0x040: ESR 0x%x", esr);
	*reserved = 0x12345678;
	esr = apic_esr_latch();
	report(esr == LAPIC_ESR_ILLEGAL_REG, "write to offset 0x040: ESR 0x%x", esr);
	report(*reserved == 0, "offset 0x040 still reads 0");
	apic_esr_latch();
}

/* A one-shot timer whose LVT holds an illegal vector. */
static void test_illegal_lvt(void)
{
	uint64_t deadline = tsc_deadline_us(APIC_WAIT_US);
	uint32_t esr;

	apic_write(LAPIC_TDCR, LAPIC_TDCR_DIV1);
	apic_write(LAPIC_LVT_TIMER, ILLEGAL);
	apic_write(LAPIC_TMICT, TIMER_COUNT);
	while (apic_read(LAPIC_TMCCT) && !tsc_passed(deadline))
		tsc_delay_us(20);
	apic_util_let_in(NULL, 0);
	report(apic_read(LAPIC_TMCCT) == 0, "one-shot timer with vector %u expired", ILLEGAL);
	report(illegal_hits == 0 && apic_read(LAPIC_IRR) == 0, "its vector not delivered");
	esr = apic_esr_latch();
	report(esr == LAPIC_ESR_RECV_ILLEGAL, "ESR 0x%x: receive illegal vector", esr);
	apic_write(LAPIC_LVT_TIMER, LAPIC_LVT_MASKED);
	apic_write(LAPIC_TMICT, 0);
}

/* "x2APIC Error Handling": the same errors through the MSR interface,
 * where the ESR only takes 0 and SELF IPI is one more way to send. */
static void test_x2apic(void)
{
	uint32_t esr;

	if (!apic_enter_x2apic())
		return;
	report_prefix_push("x2APIC");
	apic_esr_latch();
	wrmsr(MSR_X2APIC_ICR, (uint64_t)apic_id() << 32 | ILLEGAL);
	esr = apic_esr_latch();
	report(is_send_illegal(esr), "ICR with vector %u: ESR 0x%x", ILLEGAL, esr);
	wrmsr(MSR_X2APIC_SELF_IPI, ILLEGAL);
	esr = apic_esr_latch();
	report(is_send_illegal(esr), "SELF IPI with vector %u: ESR 0x%x", ILLEGAL, esr);
	apic_util_let_in(NULL, 0);
	report(illegal_hits == 0 && apic_read(LAPIC_IRR) == 0, "neither delivered");
	report(apic_esr_latch() == 0, "ESR clean again");
	reset_apic();
	report_prefix_pop();
}

int main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	if (!apic_test_start("apic_esr"))
		return report_summary();
	handle_irq(ILLEGAL, on_illegal);
	handle_irq(FIRST_LEGAL, on_legal);
	handle_irq(ERR_VEC, on_error);
	cli();
	apic_sw_enable();
	test_illegal_ipi();
	test_error_lvt();
	test_illegal_register();
	test_illegal_lvt();
	test_x2apic();
	return apic_test_end();
}
