// SPDX-License-Identifier: BSD-2-Clause
/*
 * apic_tpr: task and processor priority (Intel SDM Vol. 3A, "Task and
 * Processor Priorities", "Interaction of Task Priorities between CR8 and
 * APIC"). A fixed interrupt is dispatched only if its priority class
 * (vector[7:4]) is above PPR[7:4], where PPR = TPR if TPR[7:4] >=
 * ISRV[7:4], else ISRV[7:4] << 4 (ISRV: highest vector in service). In
 * 64-bit mode CR8[3:0] is TPR[7:4]: reads give TPR[7:4], writes set
 * TPR[7:4] and clear TPR[3:0]; CR8[63:4] are reserved (#GP). All of it
 * in xAPIC mode, then in x2APIC mode where present.
 */
#include "lib/guest.h"
#include "lib/apic_util.h"

#define VEC             0x51u   /* priority class 5 */

static volatile uint32_t hits;
static volatile uint32_t ppr_in, ppr_raised, isr_in;    /* seen by the handler */

static void on_vec(struct ex_regs *r)
{
	(void)r;
	hits++;
	isr_in = apic_vec_test(LAPIC_ISR, VEC);
	ppr_in = apic_read(LAPIC_PPR);
	/* TPR above the class in service: PPR is TPR, low nibble included. */
	apic_write(LAPIC_TPR, 0x65);
	ppr_raised = apic_read(LAPIC_PPR);
	apic_write(LAPIC_TPR, 0x4f);
	apic_eoi();
}

static void test_registers(void)
{
	static const uint32_t vals[] = { 0xff, 0x5a, 0x01, 0x00 };

	for (unsigned i = 0; i < ARRAY_SIZE(vals); i++) {
		apic_write(LAPIC_TPR, vals[i]);
		report(apic_read(LAPIC_TPR) == vals[i] && apic_read(LAPIC_PPR) == vals[i],
		       "TPR 0x%02x reads back, PPR = TPR with nothing in service (0x%x)", vals[i],
		       apic_read(LAPIC_PPR));
	}
}

static bool quiet_then_count(uint32_t want)
{
	apic_util_let_in(NULL, 0);
	return hits == want;
}

static void test_held_by_tpr(void)
{
	hits = 0;
	apic_write(LAPIC_TPR, 0x50);
	apic_self_ipi(VEC);
	report(quiet_then_count(0), "TPR 0x50: vector 0x%x (class 5) held", VEC);
	report(apic_vec_test(LAPIC_IRR, VEC) && !apic_vec_test(LAPIC_ISR, VEC),
	       "held: IRR bit set, ISR bit clear");
	report(apic_read(LAPIC_PPR) == 0x50, "PPR 0x%x = TPR", apic_read(LAPIC_PPR));
	apic_write(LAPIC_TPR, 0x5f);
	report(quiet_then_count(0), "TPR 0x5f: still held (only the class counts)");
	apic_write(LAPIC_TPR, 0x4f);            /* no sti: deliver on the next one */
	sti();
	apic_util_wait(&hits, 1, APIC_WAIT_US);
	report(hits >= 1, "TPR 0x4f: delivered (%u)", hits);
	tsc_delay_us(APIC_QUIET_US);
	cli();
	report(hits == 1, "exactly once (%u)", hits);
	report(isr_in, "in the handler: ISR bit set");
	report(ppr_in == 0x50, "in the handler: PPR 0x%x = class in service, low nibble 0",
	       ppr_in);
	report(ppr_raised == 0x65, "in the handler with TPR 0x65: PPR 0x%x = TPR", ppr_raised);
	report(apic_read(LAPIC_PPR) == 0x4f && apic_vec_none(LAPIC_ISR) &&
	       apic_vec_none(LAPIC_IRR), "after EOI: PPR 0x%x = TPR, ISR and IRR empty",
	       apic_read(LAPIC_PPR));
	apic_write(LAPIC_TPR, 0);
}

/* MOV to CR8 with bits 63:4 set: #GP, TPR unchanged. */
static int write_cr8_safe(uint64_t val)
{
	exception_clear();
	asm volatile(ASM_TRY("1f") "mov %0, %%cr8\n1:" : : "r"(val) : "memory");
	return exception_vector();
}

static void test_cr8(void)
{
	uint64_t cr8;
	int vec;

	write_cr8(3);
	report(apic_read(LAPIC_TPR) == 0x30, "CR8 <- 3: TPR 0x%x", apic_read(LAPIC_TPR));
	apic_write(LAPIC_TPR, 0x7c);
	cr8 = read_cr8();
	report(cr8 == 7, "TPR <- 0x7c: CR8 reads %lu", cr8);
	write_cr8(2);
	report(apic_read(LAPIC_TPR) == 0x20, "CR8 <- 2: TPR 0x%x (bits 3:0 cleared)",
	       apic_read(LAPIC_TPR));
	vec = write_cr8_safe(0x12);
	report(vec == GP_VECTOR, "CR8 <- 0x12 (reserved bit 4): #GP (vector %d)", vec);
	report(apic_read(LAPIC_TPR) == 0x20 && read_cr8() == 2, "TPR and CR8 unchanged");

	hits = 0;
	write_cr8(6);
	apic_self_ipi(VEC);
	report(quiet_then_count(0) && apic_vec_test(LAPIC_IRR, VEC), "CR8 6: vector 0x%x held",
	       VEC);
	write_cr8(4);
	sti();
	apic_util_wait(&hits, 1, APIC_WAIT_US);
	report(hits >= 1, "CR8 4: delivered (%u)", hits);
	tsc_delay_us(APIC_QUIET_US);
	cli();
	report(hits == 1 && ppr_in == 0x50, "exactly once, PPR 0x%x in the handler", ppr_in);
	write_cr8(0);
	report(apic_read(LAPIC_TPR) == 0 && apic_read(LAPIC_PPR) == 0, "CR8 <- 0: TPR and PPR 0");
}

/* The same in either mode: apic_read/apic_write follow it (x2APIC: the
 * TPR and PPR MSRs 0x808 and 0x80a). */
static void run(const char *mode)
{
	report_prefix_push(mode);
	test_registers();
	test_held_by_tpr();
	test_cr8();
	report_prefix_pop();
}

int main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	if (!apic_test_start("apic_tpr"))
		return report_summary();
	handle_irq(VEC, on_vec);
	apic_run_both_modes(run);
	return apic_test_end();
}
