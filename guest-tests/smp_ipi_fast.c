// SPDX-License-Identifier: BSD-2-Clause
/*
 * smp_ipi_fast: x2APIC fixed IPIs with a physical destination - the ICR
 * writes tickvisor takes on its exit fast path (vmm/exit/exit_fast.c) - to a
 * vCPU in each state the guest can put it in (Intel SDM Vol. 3A, "Issuing
 * Interprocessor Interrupts", "Interrupt Handling"; DESIGN.md, "IPI
 * rules"):
 *
 *  - running with IF=1, busy with exits that are themselves resumed at
 *    once (a CPUID loop, a TSC-deadline WRMSR loop): every IPI is
 *    delivered, once, while it keeps exiting;
 *  - a CPUID loop with IF=0: the IPI waits (no handler run while IF=0,
 *    whatever the exits in between) and runs once right after STI;
 *  - halted (STI; HLT with the HLT exit): woken, one run;
 *  - APIC software-disabled (SVR bit 8 clear): the fixed IPI is not
 *    accepted, so nothing runs, not even once the APIC is enabled again
 *    (SDM "Local APIC State After It Has Been Software Disabled"; KVM's
 *    __apic_accept_irq and Bochs's local APIC drop it too);
 *  - an x2APIC ID no vCPU has: nothing anywhere, no error;
 *  - in an interrupt handler (IF=0): the handler's own first exit is a
 *    CPUID resumed at once, then two more IPIs come while it spins with
 *    IF=0; neither may run before its IRET. In Bochs 3.0 a physical
 *    interrupt in non-root mode can deliver a pending virtual interrupt
 *    whatever IF is (cpu/event.cc, HandleExtInterrupt), which tickvisor's
 *    entries with IF=0 hold back with interrupt-window exiting
 *    (vmm/apic/vapic_inject.c), those resumed at once included. Back-to-back
 *    rounds, so that the stop poll the first round's slow entry armed
 *    lets the later ones resume at once (vmm/exit/exit_fast.c).
 *
 * The sender's ICR write is itself a fast exit when it qualifies; each
 * case also counts that the handler ran on the destination only.
 * peer=N picks the AP (default 1).
 */
#include "lib/guest.h"
#include "lib/smp.h"
#include "lib/smp_hits.h"
#include "lib/tsc.h"

#define IPI_VECTOR              0x47u
#define NR_IPIS                 8u
#define HELD_US                 1000u   /* an IPI to a CLI'd CPU stays pending this long */
#define HALT_SETTLE_US          100u
#define ABSENT_ID               0x7eu
#define HANDLER_VECTOR          0x48u   /* the AP spins with IF=0 in its handler */
#define LATE_VECTOR_1           0x4cu   /* then these two come, a class above */
#define LATE_VECTOR_2           0x4du
#define HANDLER_ROUNDS          8u
#define LATE_GAP_US             20u

enum ap_mode { AP_CPUID, AP_TSCDL, AP_CPUID_IF0, AP_HALT, AP_SW_DISABLED, AP_SPIN };

static struct smp_hits hits, late_hits;
static unsigned peer;
static struct ap_task task;
static volatile uint32_t ap_runs_before;
static volatile uint32_t in_handler, late_sent, late_in_handler;

static void ipi_handler(struct ex_regs *regs)
{
	(void)regs;
	smp_hits_record(&hits);
	apic_eoi();
}

/* On the AP, IF=0 from here to its IRET: EOI, a CPUID exit (resumed at
 * once), then spin until the BSP has sent both late IPIs. */
static void spinning_handler(struct ex_regs *regs)
{
	uint64_t deadline = tsc_deadline_us(SMP_HITS_TIMEOUT_US);

	(void)regs;
	smp_hits_record(&hits);
	apic_eoi();
	(void)cpuid(0);
	in_handler = 1;
	while (!late_sent && !tsc_passed(deadline))
		pause();
	tsc_delay_us(LATE_GAP_US);
	in_handler = 0;
}

static void late_handler(struct ex_regs *regs)
{
	(void)regs;
	if (in_handler)
		late_in_handler++;
	smp_hits_record(&late_hits);
	apic_eoi();
}

static void send_to(uint32_t dest)
{
	wrmsr(MSR_X2APIC_ICR, (uint64_t)dest << 32 | IPI_VECTOR);
}

static bool ap_wait_go(void)
{
	return ap_task_wait_go(&task, SMP_HITS_TIMEOUT_US * (NR_IPIS + 2));
}

/* On the AP: the state to be in until the BSP says go. */
static void ap_busy(void *arg)
{
	enum ap_mode mode = *(const enum ap_mode *)arg;
	uint64_t deadline = tsc_deadline_us(SMP_HITS_TIMEOUT_US * (NR_IPIS + 2));

	switch (mode) {
	case AP_CPUID:
	case AP_CPUID_IF0:
		if (mode == AP_CPUID_IF0)
			cli();
		else
			sti();
		ap_task_ready(&task);
		while (!task.go && !tsc_passed(deadline))
			(void)cpuid(0);
		ap_runs_before = smp_hits_of(&hits, peer);
		sti();
		tsc_delay_us(SMP_HITS_QUIET_US);
		break;
	case AP_TSCDL:
		/* TSC-deadline mode, masked: the writes arm a timer that
		 * never interrupts. */
		apic_write(LAPIC_LVT_TIMER, LAPIC_LVT_MASKED | (LAPIC_TIMER_TSC_DEADLINE << 17));
		sti();
		ap_task_ready(&task);
		while (!task.go && !tsc_passed(deadline))
			wrmsr(MSR_IA32_TSC_DEADLINE, rdtsc() + (1ull << 40));
		wrmsr(MSR_IA32_TSC_DEADLINE, 0);
		apic_write(LAPIC_LVT_TIMER, LAPIC_LVT_MASKED);
		break;
	case AP_HALT:
		cli();
		ap_task_ready(&task);
		safe_halt();                    /* STI; HLT: the IPI ends it */
		ap_runs_before = smp_hits_of(&hits, peer);
		cli();
		break;
	case AP_SPIN:
		sti();
		ap_task_ready(&task);
		ap_wait_go();
		cli();
		break;
	case AP_SW_DISABLED:
		cli();
		apic_sw_disable();
		sti();
		ap_task_ready(&task);
		ap_wait_go();
		apic_sw_enable();
		tsc_delay_us(SMP_HITS_QUIET_US);
		break;
	}
}

static bool start_ap(enum ap_mode *mode)
{
	smp_hits_clear(&hits);
	ap_runs_before = ~0u;
	return ap_task_start(&task, peer, ap_busy, mode, SMP_HITS_TIMEOUT_US);
}

static bool finish_ap(void)
{
	return ap_task_finish(&task, peer);
}

/* The AP keeps exiting (fast) with IF=1: NR_IPIS IPIs, each awaited. */
static void test_busy(enum ap_mode mode, const char *what)
{
	unsigned got = 0;
	bool done;

	if (!start_ap(&mode)) {
		report_fail("%s: the AP did not start", what);
		return;
	}
	while (got < NR_IPIS) {
		send_to(peer);
		if (!smp_hits_expect(&hits, (uint32_t)BIT(peer), got + 1, SMP_HITS_TIMEOUT_US, 0,
				     NULL))
			break;
		got++;
	}
	done = finish_ap();
	report(done && got == NR_IPIS &&
	       smp_hits_expect(&hits, (uint32_t)BIT(peer), NR_IPIS, 0, SMP_HITS_QUIET_US, NULL),
	       "AP in a %s loop, IF=1: %u of %u IPIs, one run each, on CPU %u only", what, got,
	       NR_IPIS, peer);
}

static void test_cpuid_if0(void)
{
	enum ap_mode mode = AP_CPUID_IF0;
	bool done;

	if (!start_ap(&mode)) {
		report_fail("CPUID loop, IF=0: the AP did not start");
		return;
	}
	send_to(peer);
	tsc_delay_us(HELD_US);
	done = finish_ap();
	report(done && ap_runs_before == 0 && smp_hits_of(&hits, peer) == 1 &&
	       smp_hits_mask(&hits) == BIT(peer),
	       "AP in a CPUID loop with IF=0: the IPI waits through its exits (%u runs), then "
	       "one run after STI (%u)", ap_runs_before, smp_hits_of(&hits, peer));
}

static void test_halted(void)
{
	enum ap_mode mode = AP_HALT;
	uint64_t hlt_before = smp_hlt_exits();
	bool halted, done;

	if (!start_ap(&mode)) {
		report_fail("halted: the AP did not start");
		return;
	}
	halted = smp_wait_halted(hlt_before, HALT_SETTLE_US);
	send_to(peer);
	done = finish_ap();
	report(done && halted && ap_runs_before == 1 &&
	       smp_hits_expect(&hits, (uint32_t)BIT(peer), 1, 0, SMP_HITS_QUIET_US, NULL),
	       "AP halted (STI; HLT): woken, one run before the instruction after HLT (%u)",
	       ap_runs_before);
}

static void test_sw_disabled(void)
{
	enum ap_mode mode = AP_SW_DISABLED;
	bool done;

	if (!start_ap(&mode)) {
		report_fail("software-disabled: the AP did not start");
		return;
	}
	send_to(peer);
	tsc_delay_us(HELD_US);
	done = finish_ap();
	report(done && smp_hits_mask(&hits) == 0,
	       "AP with its APIC software-disabled: the IPI is not accepted, not even after "
	       "the APIC is enabled again (%u runs)", smp_hits_of(&hits, peer));
}

static bool handler_round(unsigned n)
{
	uint64_t deadline = tsc_deadline_us(SMP_HITS_TIMEOUT_US);

	late_sent = 0;
	wrmsr(MSR_X2APIC_ICR, (uint64_t)peer << 32 | HANDLER_VECTOR);
	while (!in_handler && !tsc_passed(deadline))
		pause();
	wrmsr(MSR_X2APIC_ICR, (uint64_t)peer << 32 | LATE_VECTOR_1);
	tsc_delay_us(LATE_GAP_US);
	wrmsr(MSR_X2APIC_ICR, (uint64_t)peer << 32 | LATE_VECTOR_2);
	late_sent = 1;
	return smp_hits_expect(&hits, (uint32_t)BIT(peer), n + 1, SMP_HITS_TIMEOUT_US, 0, NULL) &&
	       smp_hits_expect(&late_hits, (uint32_t)BIT(peer), 2 * (n + 1), SMP_HITS_TIMEOUT_US,
			       0, NULL);
}

static void test_in_handler(void)
{
	enum ap_mode mode = AP_SPIN;
	unsigned done_rounds = 0;
	bool done;

	smp_hits_clear(&late_hits);
	late_in_handler = 0;
	if (!start_ap(&mode)) {
		report_fail("in a handler: the AP did not start");
		return;
	}
	while (done_rounds < HANDLER_ROUNDS && handler_round(done_rounds))
		done_rounds++;
	done = finish_ap();
	report(done && done_rounds == HANDLER_ROUNDS && late_in_handler == 0 &&
	       smp_hits_expect(&late_hits, (uint32_t)BIT(peer), 2 * HANDLER_ROUNDS, 0,
			       SMP_HITS_QUIET_US, NULL),
	       "AP in a handler (IF=0) after a CPUID exit: %u rounds of two IPIs, none run "
	       "before its IRET (%u), each once after", done_rounds, late_in_handler);
}

static void test_absent(void)
{
	smp_hits_clear(&hits);
	report(wrmsr_safe(MSR_X2APIC_ICR, (uint64_t)ABSENT_ID << 32 | IPI_VECTOR) == 0,
	       "x2APIC ID 0x%x (no such CPU): no #GP", ABSENT_ID);
	sti();
	tsc_delay_us(HELD_US);
	cli();
	report(smp_hits_mask(&hits) == 0, "x2APIC ID 0x%x: no handler ran anywhere", ABSENT_ID);
}

int main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	report_prefix_push("smp_ipi_fast");
	handle_irq(IPI_VECTOR, ipi_handler);
	handle_irq(HANDLER_VECTOR, spinning_handler);
	handle_irq(LATE_VECTOR_1, late_handler);
	handle_irq(LATE_VECTOR_2, late_handler);
	if (!smp_init_peer(&peer))
		return report_summary();
	if (!smp_set_x2apic(true)) {
		report_skip("no x2APIC");
		return report_summary();
	}
	cli();
	test_busy(AP_CPUID, "CPUID");
	test_busy(AP_TSCDL, "TSC-deadline WRMSR");
	test_cpuid_if0();
	test_halted();
	test_sw_disabled();
	test_in_handler();
	test_absent();
	return report_summary();
}
