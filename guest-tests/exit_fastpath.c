// SPDX-License-Identifier: BSD-2-Clause
/*
 * exit_fastpath: the exits tickvisor resumes without its generic
 * pre-entry work when nothing is pending (CPUID, WRMSR to
 * IA32_TSC_DEADLINE, WRMSR to the x2APIC ICR with a fixed IPI to itself
 * or one physical destination; vmm/exit/exit_fast.c) behave as the SDM says in
 * the cases where something *is* pending or the instruction is special.
 * Each case runs after a warm-up of the same exit, so the fast path is the
 * one taken; every check also holds on a CPU without any hypervisor.
 *
 * - Single-step (SDM Vol. 3B, "Single-Step Exception Condition"): TF over
 *   the exiting instruction gives one #DB with DR6.BS at the next RIP; a
 *   self-IPI the stepped ICR write sends comes after the #DB ("Priority
 *   Among Concurrent Events": the trap of the previous instruction first).
 * - STI shadow (SDM Vol. 3A, "Interrupt Recognition" and STI: "interrupts
 *   are recognized after the instruction following STI"): an interrupt
 *   pending behind STI is taken right after the exiting instruction that
 *   follows it, not one instruction later.
 * - IF=0: an interrupt that became pending stays pending across any
 *   number of fast exits and is taken at the first boundary after STI's
 *   shadow.
 * - TSC-deadline timer (SDM Vol. 3A, "TSC-Deadline Mode"): a deadline in
 *   the past fires at once, exactly once, and the MSR then reads 0; a
 *   deadline that comes due while the guest does nothing but CPUID exits
 *   still fires on time (the preemption timer is re-loaded on each entry);
 *   writes outside TSC-deadline mode are ignored.
 * - The timer's other registers (LVTT, TMICT, TDCR), resumed at once on
 *   the preemption-timer and posted backends: a one-shot that comes due
 *   while the guest does only CPUID exits fires once, not early and on
 *   time (SDM Vol. 3A, "APIC Timer": it starts at the TMICT write and
 *   counts at the bus clock over the divide); a switch into or out of
 *   TSC-deadline mode disarms the timer ("TSC-Deadline Mode": TMICT,
 *   TMCCT and IA32_TSC_DEADLINE then read 0, and nothing fires). KVM
 *   (lapic.c, apic_update_lvtt: a mode change cancels the timer and
 *   zeroes TMICT and the deadline) and Bochs (apic.cc, set_lvt_entry on
 *   the timer's mode bits) do the same.
 * - x2APIC ICR (SDM Vol. 3A, "x2APIC Register Address Space", "Reserved
 *   Bit Checking", "Error Handling"): reserved bits raise #GP and send
 *   nothing; an illegal vector sets ESR bit 5 and sends nothing; an ICR
 *   write while the APIC is in xAPIC mode (or x2APIC is hidden,
 *   x2apic=off) raises #GP.
 * - Every fast exit is counted as an exit of its reason.
 * KVM (handle_fastpath_set_msr_irqoff falls back for anything but a fixed
 * physical ICR and the deadline MSR; kvm_skip_emulated_instruction owes
 * the single-step trap) and Bochs (event.cc: interrupt inhibition by STI
 * for one instruction, the DR6.BS trap after each completed instruction)
 * agree with the SDM on each of these.
 */
#include "lib/apic_util.h"
#include "lib/guest.h"

#define IPI_VEC         0x51u
#define TIMER_VEC       0x52u
#define WARM_UP         64u
#define ABSENT_ID       0x7fu           /* no vCPU of this guest has it */
#define ICR_SH(sh)      ((uint64_t)FIELD_PREP(LAPIC_ICR_SHORTHAND, sh))
#define DUE_DELTA       20000u          /* TSC cycles ahead for "comes due" */
#define DUE_LATE_MAX    2000u           /* cycles after the deadline, at most */

static volatile uint32_t ipi_hits, timer_hits, db_hits;
static volatile uint64_t ipi_rip, timer_rip, timer_tsc, db_rip, db_dr6;
static volatile char events[4];         /* 'D' #DB, 'I' interrupt, in order */
static volatile unsigned nevents;

static void record(char what)
{
	if (nevents < sizeof(events))
		events[nevents] = what;
	nevents++;
}

static void ipi_handler(struct ex_regs *r)
{
	if (!ipi_hits++)
		ipi_rip = r->rip;
	record('I');
	apic_eoi();
}

static void timer_handler(struct ex_regs *r)
{
	if (!timer_hits++) {
		timer_tsc = rdtsc();
		timer_rip = r->rip;
	}
	apic_eoi();
}

static void db_handler(struct ex_regs *r)
{
	if (!db_hits++) {
		db_rip = r->rip;
		db_dr6 = read_dr6();
	}
	record('D');
	r->rflags &= ~(uint64_t)X86_EFLAGS_TF;         /* one step only */
	write_dr6(DR6_INIT);
}

static void reset_counts(void)
{
	ipi_hits = timer_hits = db_hits = 0;
	ipi_rip = timer_rip = timer_tsc = db_rip = db_dr6 = 0;
	nevents = 0;
	write_dr6(DR6_INIT);
}

static void cpuid0(void)
{
	uint32_t a = 0, b, c = 0, d;

	asm volatile("cpuid" : "+a"(a), "=b"(b), "+c"(c), "=d"(d) : : "memory");
}

static void warm_up(uint32_t msr, uint64_t val)
{
	for (unsigned i = 0; i < WARM_UP; i++) {
		if (msr)
			wrmsr(msr, val);
		else
			cpuid0();
	}
}

/* A fixed IPI to this CPU that the fast path takes, and one to nobody. */
static uint64_t icr_self(void)
{
	return ICR_SH(LAPIC_DEST_SELF) | IPI_VEC;
}

static uint64_t icr_absent(void)
{
	return (uint64_t)ABSENT_ID << 32 | IPI_VEC;
}

static void tscdl_mode(bool on)
{
	apic_write(LAPIC_LVT_TIMER, on ? (LAPIC_TIMER_TSC_DEADLINE << 17) | TIMER_VEC :
			       LAPIC_LVT_MASKED | TIMER_VEC);
}

/* Sets TF with POPF: the instruction after it runs, then the trap. */
#define TF_ON   "pushfq\n\torq $0x100, (%%rsp)\n\tpopfq\n\t"

static void check_step(const char *what, uint64_t after)
{
	report(db_hits == 1 && db_rip == after && (db_dr6 & DR6_BS),
	       "TF over %s: one #DB (%u) at the next RIP (0x%lx, want 0x%lx), DR6.BS (0x%lx)",
	       what, db_hits, db_rip, after, db_dr6);
}

static void step_cpuid(void)
{
	uint64_t after;
	uint32_t a = 0, b, c = 0, d;

	warm_up(0, 0);
	reset_counts();
	asm volatile("lea 2f(%%rip), %0\n\t" TF_ON "cpuid\n2:"
		     : "=&r"(after), "+a"(a), "=&b"(b), "+c"(c), "=&d"(d) : : "memory");
	check_step("CPUID", after);
}

static void step_wrmsr(const char *what, uint32_t msr, uint64_t val)
{
	uint64_t after;

	warm_up(msr, val);
	reset_counts();
	asm volatile("lea 2f(%%rip), %0\n\t" TF_ON "wrmsr\n2:"
		     : "=&r"(after) : "c"(msr), "a"((uint32_t)val), "d"((uint32_t)(val >> 32))
		     : "memory");
	check_step(what, after);
}

/* TF and IF over an ICR write to itself: #DB, then the interrupt. */
static void step_icr_self(void)
{
	uint64_t after, val = icr_self();

	cli();
	warm_up(MSR_X2APIC_ICR, icr_absent());
	reset_counts();
	asm volatile("lea 2f(%%rip), %0\n\t"
		     "pushfq\n\torq $0x300, (%%rsp)\n\tpopfq\n\t"     /* TF and IF */
		     "wrmsr\n2:\n\tcli"
		     : "=&r"(after) : "c"(MSR_X2APIC_ICR), "a"((uint32_t)val),
		       "d"((uint32_t)(val >> 32)) : "memory");
	check_step("WRMSR ICR self-IPI", after);
	report(nevents == 2 && events[0] == 'D' && events[1] == 'I',
	       "TF over WRMSR ICR self-IPI: #DB before the interrupt (%u events: %c %c)",
	       nevents, nevents > 0 ? events[0] : '-', nevents > 1 ? events[1] : '-');
}

static void test_single_step(void)
{
	report_prefix_push("single-step");
	step_cpuid();
	tscdl_mode(true);
	step_wrmsr("WRMSR TSC_DEADLINE", MSR_IA32_TSC_DEADLINE, rdtsc() + (1ull << 40));
	wrmsr(MSR_IA32_TSC_DEADLINE, 0);
	tscdl_mode(false);
	step_wrmsr("WRMSR ICR to an absent APIC ID", MSR_X2APIC_ICR, icr_absent());
	step_icr_self();
	report_prefix_pop();
}

/*
 * IPI_VEC pending with IF=0, then STI and the exiting instruction in its
 * shadow: the interrupt comes right after that instruction (label 2).
 */
#define STI_SHADOW(insn)        "lea 2f(%%rip), %0\n\tsti\n\t" insn "\n2:\n\tnop\n\tcli"

static void pend_self_ipi(void)
{
	cli();
	reset_counts();
	wrmsr(MSR_X2APIC_ICR, icr_self());
	report(ipi_hits == 0, "IF=0: the self-IPI waits");
}

static void check_shadow(const char *what, uint64_t after)
{
	report(ipi_hits == 1 && ipi_rip == after,
	       "STI; %s: the pending interrupt right after %s (%u, RIP 0x%lx, want 0x%lx)",
	       what, what, ipi_hits, ipi_rip, after);
}

static void test_sti_shadow(void)
{
	uint64_t after, far;
	uint32_t a, b, c, d;

	report_prefix_push("STI shadow");
	warm_up(0, 0);
	pend_self_ipi();
	a = 0;
	c = 0;
	asm volatile(STI_SHADOW("cpuid")
		     : "=&r"(after), "+a"(a), "=&b"(b), "+c"(c), "=&d"(d) : : "memory");
	check_shadow("CPUID", after);

	tscdl_mode(true);
	far = rdtsc() + (1ull << 40);
	warm_up(MSR_IA32_TSC_DEADLINE, far);
	pend_self_ipi();
	asm volatile(STI_SHADOW("wrmsr")
		     : "=&r"(after) : "c"(MSR_IA32_TSC_DEADLINE), "a"((uint32_t)far),
		       "d"((uint32_t)(far >> 32)) : "memory");
	check_shadow("WRMSR TSC_DEADLINE", after);
	wrmsr(MSR_IA32_TSC_DEADLINE, 0);
	tscdl_mode(false);

	warm_up(MSR_X2APIC_ICR, icr_absent());
	pend_self_ipi();
	asm volatile(STI_SHADOW("wrmsr")
		     : "=&r"(after) : "c"(MSR_X2APIC_ICR), "a"((uint32_t)icr_absent()),
		       "d"((uint32_t)(icr_absent() >> 32)) : "memory");
	check_shadow("WRMSR ICR", after);
	report_prefix_pop();
}

/* Pending with IF=0 across many fast exits, taken after STI's shadow:
 * "sti; nop" and the interrupt comes at the instruction after the NOP. */
static void test_if0_pending(void)
{
	uint64_t after;

	report_prefix_push("IF=0");
	pend_self_ipi();
	for (unsigned i = 0; i < WARM_UP; i++) {
		cpuid0();
		wrmsr(MSR_X2APIC_ICR, icr_absent());
	}
	report(ipi_hits == 0 && apic_vec_test(LAPIC_IRR, IPI_VEC),
	       "still pending in IRR after %u CPUID and ICR exits", 2 * WARM_UP);
	asm volatile("lea 2f(%%rip), %0\n\tsti\n\tnop\n2:\n\tnop\n\tcli" : "=&r"(after) : : "memory");
	report(ipi_hits == 1 && ipi_rip == after,
	       "taken once, at the first boundary after STI's shadow (%u, RIP 0x%lx, want 0x%lx)",
	       ipi_hits, ipi_rip, after);
	report_prefix_pop();
}

static bool wait_timer(uint32_t n)
{
	return apic_util_wait(&timer_hits, n, APIC_WAIT_US);
}

static void test_tscdl(void)
{
	uint64_t dl, after, late;

	report_prefix_push("TSC deadline");
	tscdl_mode(true);
	warm_up(MSR_IA32_TSC_DEADLINE, rdtsc() + (1ull << 40));

	/* In the past, IF=1: fires at once, once; the MSR reads 0. */
	reset_counts();
	sti();
	wrmsr(MSR_IA32_TSC_DEADLINE, 1);
	report(wait_timer(1), "deadline 1: fires (%u)", timer_hits);
	tsc_delay_us(APIC_QUIET_US);
	cli();
	report(timer_hits == 1, "deadline 1: exactly once (%u)", timer_hits);
	if (tickvisor_present())        /* Bochs's own APIC keeps it (PLATFORM.md) */
		report(rdmsr(MSR_IA32_TSC_DEADLINE) == 0, "reads 0 after it fired");

	/* In the past, IF=0: pending across fast exits, taken after STI. */
	reset_counts();
	wrmsr(MSR_IA32_TSC_DEADLINE, rdtsc() - 1);
	for (unsigned i = 0; i < WARM_UP; i++)
		cpuid0();
	report(timer_hits == 0, "deadline passed with IF=0: held (%u)", timer_hits);
	asm volatile("lea 2f(%%rip), %0\n\tsti\n\tnop\n2:\n\tnop\n\tcli" : "=&r"(after) : : "memory");
	report(timer_hits == 1 && timer_rip == after,
	       "taken after STI's shadow (%u, RIP 0x%lx, want 0x%lx)", timer_hits, timer_rip, after);

	/* Comes due while the guest does only CPUID exits, IF=1. */
	reset_counts();
	dl = rdtsc() + DUE_DELTA;
	wrmsr(MSR_IA32_TSC_DEADLINE, dl);
	sti();
	while (!timer_hits && (int64_t)(rdtsc() - dl) < 100 * (int64_t)DUE_DELTA)
		cpuid0();
	cli();
	late = timer_tsc - dl;
	report(timer_hits == 1 && (int64_t)late >= 0 && late <= DUE_LATE_MAX,
	       "due during a CPUID loop: fires once, %ld cycles after the deadline (at most %u)",
	       (long)late, DUE_LATE_MAX);

	/* Disarmed by 0; ignored outside TSC-deadline mode. */
	reset_counts();
	wrmsr(MSR_IA32_TSC_DEADLINE, rdtsc() + DUE_DELTA);
	wrmsr(MSR_IA32_TSC_DEADLINE, 0);
	sti();
	tsc_delay_us(2 * DUE_DELTA / (tsc_hz() / 1000000 + 1) + APIC_QUIET_US);
	cli();
	report(timer_hits == 0 && rdmsr(MSR_IA32_TSC_DEADLINE) == 0, "0 disarms (%u)", timer_hits);
	tscdl_mode(false);
	wrmsr(MSR_IA32_TSC_DEADLINE, 1);
	sti();
	tsc_delay_us(APIC_QUIET_US);
	cli();
	report(timer_hits == 0 && rdmsr(MSR_IA32_TSC_DEADLINE) == 0,
	       "one-shot mode: a write is ignored (%u)", timer_hits);
	report_prefix_pop();
}

/* TSC cycles per APIC timer tick at divide 1: CPUID 0x15's ratio,
 * which tickvisor makes exact (DESIGN.md; timer_oneshot checks it); 0
 * where the leaf does not say. */
static uint64_t tsc_per_tick(void)
{
	struct cpuid c = cpuid(0x15);

	return c.a && c.b && c.b % c.a == 0 ? c.b / c.a : 0;
}

static void test_timer_regs(void)
{
	uint64_t tpt = tsc_per_tick(), t0, len, late;
	uint32_t ticks;

	report_prefix_push("timer registers");
	apic_write(LAPIC_TDCR, 0xb);                    /* divide by 1 */
	apic_write(LAPIC_LVT_TIMER, TIMER_VEC);         /* one-shot */
	for (unsigned i = 0; i < WARM_UP; i++) {
		apic_write(LAPIC_TMICT, 0xffffffffu);
		apic_write(LAPIC_TMICT, 0);
	}

	/* Comes due while the guest does only CPUID exits, IF=1. */
	reset_counts();
	ticks = tpt ? (uint32_t)(DUE_DELTA / tpt) : DUE_DELTA;
	len = (uint64_t)ticks * tpt;
	t0 = rdtsc();
	apic_write(LAPIC_TMICT, ticks);
	sti();
	while (!timer_hits && rdtsc() - t0 < 100ull * DUE_DELTA * (tpt ? 1 : 64))
		cpuid0();
	tsc_delay_us(APIC_QUIET_US);
	cli();
	report(timer_hits == 1, "TMICT one-shot due during a CPUID loop: fires once (%u)",
	       timer_hits);
	if (!tpt) {
		report_skip("TMICT one-shot: on time (CPUID 0x15 gives no TSC/APIC ratio)");
	} else {
		late = timer_tsc - t0 - len;
		report(timer_tsc - t0 >= len && late <= DUE_LATE_MAX,
		       "TMICT one-shot: %ld cycles after %lu ticks of %lu cycles (at most %u)",
		       (long)(timer_tsc - t0 - len), (unsigned long)ticks, tpt, DUE_LATE_MAX);
	}
	report(apic_read(LAPIC_TMCCT) == 0, "TMCCT reads 0 after it fired");

	/* Into TSC-deadline mode: the counting one-shot is disarmed. */
	reset_counts();
	apic_write(LAPIC_TMICT, ticks);
	tscdl_mode(true);
	sti();
	tsc_delay_us(2 * DUE_DELTA / (tsc_hz() / 1000000 + 1) + APIC_QUIET_US);
	cli();
	report(timer_hits == 0 && apic_read(LAPIC_TMICT) == 0 && apic_read(LAPIC_TMCCT) == 0,
	       "LVTT into TSC-deadline mode disarms a one-shot (%u, TMICT %u)", timer_hits,
	       apic_read(LAPIC_TMICT));

	/* Out of it: the deadline is disarmed. */
	reset_counts();
	wrmsr(MSR_IA32_TSC_DEADLINE, rdtsc() + DUE_DELTA);
	apic_write(LAPIC_LVT_TIMER, TIMER_VEC);         /* one-shot */
	sti();
	tsc_delay_us(2 * DUE_DELTA / (tsc_hz() / 1000000 + 1) + APIC_QUIET_US);
	cli();
	tscdl_mode(true);
	report(timer_hits == 0 && rdmsr(MSR_IA32_TSC_DEADLINE) == 0,
	       "LVTT out of TSC-deadline mode disarms the deadline (%u)", timer_hits);
	tscdl_mode(false);
	apic_write(LAPIC_TMICT, 0);
	report_prefix_pop();
}

static void expect_icr_gp(uint64_t val, const char *what)
{
	uint64_t before = rdmsr(MSR_X2APIC_ICR);
	int vec;

	reset_counts();
	vec = wrmsr_safe(MSR_X2APIC_ICR, val);
	apic_util_let_in(NULL, 0);
	report(vec == GP_VECTOR && ipi_hits == 0 && rdmsr(MSR_X2APIC_ICR) == before,
	       "ICR %s (0x%lx): #GP, nothing sent, ICR unchanged (vector %d, %u hits)", what, val,
	       vec, ipi_hits);
}

static void test_icr(void)
{
	static const unsigned reserved[] = { 12, 13, 16, 17, 20, 31 };
	uint64_t val;

	report_prefix_push("ICR");
	warm_up(MSR_X2APIC_ICR, icr_absent());
	for (unsigned i = 0; i < ARRAY_SIZE(reserved); i++) {
		char what[24];

		snprintf(what, sizeof(what), "reserved bit %u", reserved[i]);
		expect_icr_gp(icr_self() | BIT(reserved[i]), what);
	}
	apic_esr_latch();
	reset_counts();
	val = ICR_SH(LAPIC_DEST_SELF) | 5;      /* vectors 0-15 are illegal */
	report(wrmsr_safe(MSR_X2APIC_ICR, val) == 0, "illegal vector 5: no #GP");
	apic_util_let_in(NULL, 0);
	report(ipi_hits == 0 && (apic_esr_latch() & LAPIC_ESR_SEND_ILLEGAL),
	       "illegal vector 5: nothing sent, ESR send-illegal-vector");
	reset_counts();
	wrmsr(MSR_X2APIC_ICR, (uint64_t)apic_id() << 32 | IPI_VEC);
	apic_util_let_in(&ipi_hits, 1);
	report(ipi_hits == 1 && rdmsr(MSR_X2APIC_ICR) == ((uint64_t)apic_id() << 32 | IPI_VEC),
	       "own physical ID: delivered once (%u), ICR reads back the value", ipi_hits);
	reset_counts();
	wrmsr(MSR_X2APIC_ICR, icr_absent());
	apic_util_let_in(NULL, 0);
	report(ipi_hits == 0 && apic_esr_latch() == 0, "absent APIC ID: nothing, no error");
	report_prefix_pop();
}

static void test_counts(void)
{
	uint64_t c0, w0;

	if (!tickvisor_present()) {
		report_skip("exit counts: not under tickvisor");
		return;
	}
	c0 = tv_exits(VMX_EXIT_CPUID);
	w0 = tv_exits(VMX_EXIT_WRMSR);
	for (unsigned i = 0; i < WARM_UP; i++) {
		cpuid0();
		wrmsr(MSR_X2APIC_ICR, icr_absent());
	}
	report(tv_exits(VMX_EXIT_CPUID) - c0 == WARM_UP && tv_exits(VMX_EXIT_WRMSR) - w0 == WARM_UP,
	       "%u CPUIDs and ICR writes: as many CPUID and WRMSR exits (%lu, %lu)", WARM_UP,
	       tv_exits(VMX_EXIT_CPUID) - c0, tv_exits(VMX_EXIT_WRMSR) - w0);
}

/* The APIC in xAPIC mode (x2apic=off: the only mode): the x2APIC ICR
 * does not exist. */
static void test_xapic_mode(void)
{
	report_prefix_push("xAPIC mode");
	warm_up(0, 0);
	report(wrmsr_safe(MSR_X2APIC_ICR, icr_self()) == GP_VECTOR, "WRMSR x2APIC ICR: #GP");
	apic_util_let_in(NULL, 0);
	report(ipi_hits == 0, "nothing sent (%u)", ipi_hits);
	report_prefix_pop();
}

int main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	if (!apic_test_start("exit_fastpath"))
		return apic_test_end();
	handle_irq(DB_VECTOR, db_handler);
	handle_irq(IPI_VEC, ipi_handler);
	handle_irq(TIMER_VEC, timer_handler);
	cli();
	apic_sw_enable();
	test_xapic_mode();
	if (!apic_x2apic_offered()) {
		/* The TSC-deadline fast path needs no x2APIC: LVTT through
		 * the xAPIC page, the deadline MSR as ever. */
		report_prefix_push("xAPIC mode");
		test_tscdl();
		test_timer_regs();
		report_prefix_pop();
		return apic_test_end();
	}
	if (!apic_enter_x2apic())
		return apic_test_end();
	test_counts();
	test_single_step();
	test_sti_shadow();
	test_if0_pending();
	test_tscdl();
	test_timer_regs();
	test_icr();
	reset_apic();
	return apic_test_end();
}
