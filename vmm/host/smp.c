// SPDX-License-Identifier: BSD-2-Clause
/*
 * Application processors: tickvisor starts each one itself after
 * ExitBootServices (INIT-SIPI-SIPI, SDM Vol. 3A "MP Initialization
 * Protocol Algorithm"), one at a time, gives it its own GDT/TSS/IDT and
 * stacks, and enables VMX on it. A CPU that does not answer within its
 * time is reported and left out; nothing waits forever.
 *
 * Work is handed to an AP through pcpu->work (a function and its
 * argument, published with release order) plus a kick IPI; the AP runs
 * it and sets pcpu->work_done. Only the BSP hands out work.
 */
#include "drivers/apic.h"
#include "drivers/io.h"
#include "drivers/string.h"
#include "vmm/host/irq.h"
#include "vmm/host/log.h"
#include "vmm/host/mem.h"
#include "vmm/host/paging.h"
#include "vmm/host/panic.h"
#include "vmm/host/percpu.h"
#include "vmm/host/platform.h"
#include "vmm/host/smp.h"
#include "vmm/host/tsc_sync.h"
#include "vmm/host/vmx_cpu.h"

extern const char trampoline_start[], trampoline_end[];
extern const uint32_t tramp_off_gdt, tramp_off_gdtr_base, tramp_off_pm32_ptr,
	tramp_off_lm64_ptr, tramp_off_pm32, tramp_off_lm64, tramp_off_cr3, tramp_off_stack,
	tramp_off_pcpu, tramp_off_entry, tramp_off_alive, tramp_off_owner, tramp_off_id_leaf_b;

/* tr_owner (vmm/host/trampoline.asm): the APIC ID of the one AP the data block
 * is for, until that AP claims it; closed when the BSP gives up. */
#define TRAMP_CLAIMED   0xffffffffu
#define TRAMP_CLOSED    0xfffffffeu

/* tr_gdt (vmm/host/trampoline.asm): selectors 0x08 (32-bit code), 0x10
 * (data, also in long mode) and 0x18 (64-bit code) are its far jumps and
 * segment loads. */
static const uint64_t tramp_gdt[4] = {
	0, SEG_DESC_FLAT(SEG_AR_CODE32), SEG_DESC_FLAT(SEG_AR_DATA32), SEG_DESC_FLAT(SEG_AR_CODE64),
};

#define INIT_DELAY_US    10000u
#define SIPI_DELAY_US    200u
/* Alive in long mode: an AP answers in microseconds, but QEMU's TCG with
 * 80 vCPU threads on two loaded cores has left one unrun past 100 ms. */
#define AP_ANSWER_US     1000000u
/* Through ap_entry(): its host timer check alone may take
 * IRQ_TIMER_CHECK_MS (a timer that never fires), VMXON a little more. */
#define AP_READY_US      (IRQ_TIMER_CHECK_MS * 1000u + 1000000u)

void ap_entry(struct pcpu *p);

/* Listed CPUs in wait-for-SIPI since smp_park_aps(), not started since. */
static uint32_t parked;
/* False: the APs start without VMX, to be counted, checked and wait in
 * tickvisor's loop while tickvisor refuses (issue 21.5). */
static bool aps_vmx;

static void delay_us(uint64_t us)
{
	uint64_t end = rdtsc() + us * platform.tb.tsc_hz / 1000000;

	while (rdtsc() < end)
		cpu_relax();
}

/* Waits for *flag != 0 up to us microseconds. */
static bool wait_flag(volatile uint32_t *flag, uint64_t us)
{
	uint64_t end = rdtsc() + us * platform.tb.tsc_hz / 1000000;

	while (!__atomic_load_n(flag, __ATOMIC_ACQUIRE))
		if (rdtsc() > end)
			return false;
		else
			cpu_relax();
	return true;
}

static void put32(uint8_t *page, uint32_t off, uint32_t v) { memcpy(page + off, &v, 4); }
static void put64(uint8_t *page, uint32_t off, uint64_t v) { memcpy(page + off, &v, 8); }

/* Where the trampoline finds its own APIC ID: CPUID leaf 0BH (x2APIC ID)
 * when the CPU has it, else leaf 1 (8-bit initial APIC ID). */
static bool apic_id_from_leaf_b(void)
{
	return cpuid(0, 0).eax >= 0xb && cpuid(0xb, 0).ebx != 0;
}

static uint32_t *trampoline_owner(uint8_t *page)
{
	return (uint32_t *)(page + tramp_off_owner);
}

/* The copy leaves tr_owner closed; it opens for this AP alone, last. */
static void trampoline_prepare(uint8_t *page, struct pcpu *p)
{
	uint32_t base = (uint32_t)(uint64_t)page;

	memcpy(page, trampoline_start, (size_t)(trampoline_end - trampoline_start));
	memcpy(page + tramp_off_gdt, tramp_gdt, sizeof(tramp_gdt));
	put32(page, tramp_off_gdtr_base, base + tramp_off_gdt);
	put32(page, tramp_off_pm32_ptr, base + tramp_off_pm32);
	put32(page, tramp_off_lm64_ptr, base + tramp_off_lm64);
	put64(page, tramp_off_cr3, paging_cr3());
	put64(page, tramp_off_stack, p->stack_top);
	put64(page, tramp_off_pcpu, (uint64_t)p);
	put64(page, tramp_off_entry, (uint64_t)ap_entry);
	put32(page, tramp_off_alive, 0);
	page[tramp_off_id_leaf_b] = apic_id_from_leaf_b();
	__atomic_store_n(trampoline_owner(page), p->apic_id, __ATOMIC_RELEASE);
}

/*
 * The BSP gives up on an AP: it closes the data block, so that AP - if it
 * runs the trampoline after all, now or while the page is being prepared
 * for the next AP - finds no block of its own and halts (issue 10.8),
 * instead of taking the next AP's stack and pcpu. If the AP claimed the
 * block just before, it is running on it: wait for it after all.
 */
static bool trampoline_close(uint8_t *page, uint32_t apic_id)
{
	volatile uint32_t *alive = (volatile uint32_t *)(page + tramp_off_alive);
	uint32_t expected = apic_id;

	if (__atomic_compare_exchange_n(trampoline_owner(page), &expected, TRAMP_CLOSED, false,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return false;
	return wait_flag(alive, AP_ANSWER_US);
}

/* INIT, then up to two SIPIs until the AP reports it reached long mode. */
static bool ap_wake(uint32_t apic_id, uint8_t *page)
{
	volatile uint32_t *alive = (volatile uint32_t *)(page + tramp_off_alive);
	uint32_t sipi = APIC_ICR_DELIV_SIPI | (uint32_t)((uint64_t)page >> 12);

	apic_send_ipi(apic_id, APIC_ICR_DELIV_INIT | APIC_ICR_ASSERT | APIC_ICR_LEVEL);
	delay_us(INIT_DELAY_US);
	for (int i = 0; i < 2; i++) {
		apic_send_ipi(apic_id, sipi);
		if (wait_flag(alive, i ? AP_ANSWER_US : SIPI_DELAY_US))
			return true;
	}
	return trampoline_close(page, apic_id);
}

/* The firmware's IA32_TSC_ADJUST undone; inject= may set one before (as
 * a firmware) or after (a CPU out of step the warp test must find). */
static void ap_tsc_adjust(struct pcpu *p)
{
	const struct tv_inject *in = &platform.inject;

	if (in->adjust_cpu == (int32_t)p->index && !tsc_adjust_write(in->adjust))
		p->inject_missed = true;
	p->tsc_adjust_was = tsc_adjust_undo();
	if (in->warp_cpu == (int32_t)p->index && !tsc_adjust_write(in->warp))
		p->inject_missed = true;
}

void ap_entry(struct pcpu *p)
{
	cpu_init(p);
	apic_init_cpu(VEC_SPURIOUS);
	platform_lint_nmi(p->apic_id);
	ap_tsc_adjust(p);
	p->timer_irq = irq_timer_check(platform.tb.tsc_hz);
	if (aps_vmx && !vmm_vmx_cpu_on()) {
		__atomic_store_n(&p->ready, 2, __ATOMIC_RELEASE);
		for (;;)
			halt();
	}
	if (aps_vmx)
		timer_cpu_init(&p->timer, p->index, p->apic_id);
	__atomic_store_n(&p->ready, 1, __ATOMIC_RELEASE);
	/* inject=tsc-slow: an AP held up before its turns, as a loaded
	 * host can hold a VM's vCPU thread. */
	if (platform.inject.slow_cpu == (int32_t)p->index)
		delay_us(platform.inject.slow_ms * 1000ull);
	tsc_warp_ap(&p->warp);
	for (;;) {
		void (*fn)(void *);

		irq_disable();
		fn = __atomic_load_n(&p->work, __ATOMIC_ACQUIRE);
		if (!fn) {
			/* sti;hlt is atomic: a kick after the check still wakes us. */
			wait_for_interrupt();
			continue;
		}
		p->work = NULL;
		fn(p->work_arg);
		__atomic_store_n(&p->work_done, 1, __ATOMIC_RELEASE);
	}
}

/*
 * Takes every other CPU out of the firmware: after ExitBootServices the
 * APs sit in the firmware's AP loop, whose code, stack, GDT/IDT or page
 * tables may live in boot-services RAM (edk2 moves its loop to reserved
 * memory at ExitBootServices for this reason; not every firmware does).
 * tickvisor no longer reclaims that RAM (vmm/main.c, host_memory()), but
 * an AP left there runs firmware code on an NMI, SMI or spurious wake-up,
 * against a machine tickvisor now owns (its APIC, its IDT-less NMIs).
 *
 * One INIT, broadcast to all but self, reaches every AP - those tickvisor
 * holds, those beyond TV_MAX_CPUS and those the firmware disabled. After
 * the MP protocol has run, "subsequent INITs (either to a specific
 * processor or system wide) do not cause the MP protocol to be repeated"
 * and an AP "enter[s] a wait-for-SIPI state" (SDM Vol. 3A, "MP
 * Initialization Protocol Requirements and Restrictions"), where it
 * executes nothing until a SIPI: that is the park. Linux parks CPUs the
 * same way for kexec (smp_park_other_cpus_in_init(), "Kicking the
 * secondary CPUs into INIT makes this safe against NMI and SMI"); the
 * SDM's own BSP sequence broadcasts that INIT (000C4500H). The CPUs
 * tickvisor runs leave the park by smp_start_aps()'s INIT-SIPI-SIPI.
 * The wait is the SDM's 10 ms after INIT, so no AP is still on its way
 * out of the firmware loop when tickvisor goes on. (QEMU's
 * TCG latches the INIT of a CPU halted with IF = 0 and acts on it when
 * anything wakes that CPU, before it executes another instruction: an
 * NMI after the INIT finds it at reset state, F000:FFF0, in wait-for-SIPI.)
 */
void smp_park_aps(void)
{
	parked = platform.ncpus_listed - 1;
	apic_send_ipi(0, APIC_ICR_DELIV_INIT | APIC_ICR_ASSERT | APIC_ICR_LEVEL |
		      APIC_ICR_ALL_BUT_SELF);
	delay_us(INIT_DELAY_US);
	if (parked)
		pr_info("%u other CPU%s parked by INIT (wait-for-SIPI), out of the firmware's "
			"AP loop", parked, parked == 1 ? "" : "s");
}

/* The AP's TSC against the BSP's (vmm/host/tsc_sync.h), once it is up. */
static void check_tsc(struct pcpu *p)
{
	struct tsc_warp *w = &p->warp;

	if (p->inject_missed)
		pr_warn("inject=: cpu%u has no IA32_TSC_ADJUST: nothing injected", p->index);
	if (platform.inject.slow_cpu == (int32_t)p->index)
		pr_warn("inject=tsc-slow: cpu%u waits %u ms before its warp-test turns", p->index,
			platform.inject.slow_ms);
	if (p->tsc_adjust_was)
		pr_warn("cpu%u: IA32_TSC_ADJUST was %ld (left by the firmware): set to 0",
			p->index, (long)p->tsc_adjust_was);
	tsc_warp_bsp(w, platform.tb.tsc_hz);
	if (w->timed_out)
		pr_warn("TSC: cpu%u stopped taking its turns in the warp test (after %u of %u "
			"round trips)", p->index, w->rounds, TSC_WARP_ROUNDS);
	else if (w->bsp_back)
		pr_warn("TSC: cpu%u's TSC is at least %lu cycles ahead of cpu0's (warp test)",
			p->index, (unsigned long)w->bsp_back);
	else if (w->ap_back)
		pr_warn("TSC: cpu%u's TSC is at least %lu cycles behind cpu0's (warp test)",
			p->index, (unsigned long)w->ap_back);
	else
		return;
	platform.tsc_unsynced = true;
}

static bool start_one(uint32_t index, uint32_t apic_id, uint8_t *page)
{
	struct pcpu *p = cpu_alloc(index, apic_id);

	/*
	 * Each AP has a test of its own. One shared test, set up again for
	 * each AP, let an AP that had not yet seen its own test end (TCG with
	 * 64 vCPUs on 2 host cores deschedules one for long) take the next
	 * AP's turns too: two APs writing `last` out of order read as a warp
	 * (tcg-smp64/80: "cpu39's TSC is at least 1495 cycles behind").
	 */
	p->warp = (struct tsc_warp){ .turn = TSC_WARP_BSP };
	trampoline_prepare(page, p);
	parked--;               /* INIT again: out of the park, or not answering */
	if (!ap_wake(apic_id, page)) {
		parked++;
		pr_warn("cpu%u (APIC ID %u) did not answer INIT/SIPI: left out", index, apic_id);
		cpus[index] = NULL;
		return false;
	}
	if (!wait_flag(&p->ready, AP_READY_US)) {
		pr_warn("cpu%u (APIC ID %u) started but did not finish its bring-up within %u ms: "
			"left out", index, apic_id, AP_READY_US / 1000);
		cpus[index] = NULL;
		return false;
	}
	if (p->ready != 1) {
		pr_warn("cpu%u (APIC ID %u) started but could not enter VMX operation: left out",
			index, apic_id);
		cpus[index] = NULL;
		return false;
	}
	check_tsc(p);
	return true;
}

/* What became of the CPUs smp_start_aps() did not bring up. */
static void smp_report_parked(void)
{
	if (parked)
		pr_info("%u CPU%s parked (INIT, wait-for-SIPI): beyond the first %u or not "
			"answering", parked, parked == 1 ? "" : "s", TV_MAX_CPUS);
}

/* What the warp tests and the host timer checks found, all told. */
static void smp_report_tsc(uint32_t up)
{
	uint32_t ok = 0;

	for (uint32_t i = 0; i < up; i++)
		if (cpus[i] && cpus[i]->timer_irq)
			ok++;
		else if (cpus[i])
			pr_warn("cpu%u: no host timer interrupt within %u ms of arming its "
				"LAPIC timer", i, IRQ_TIMER_CHECK_MS);
	if (ok == up)
		pr_info("host timer: an interrupt taken on %s%u CPU%s (LAPIC %s)",
			up > 1 ? "every one of the " : "", up, up == 1 ? "" : "s",
			apic_caps.tsc_deadline ? "TSC-deadline" : "one-shot");
	if (up < 2)
		return;
	if (!platform.tsc_unsynced)
		pr_info("TSC: in step on all %u CPUs (warp test against cpu0: %u round trips "
			"each, no read went backwards)", up, TSC_WARP_ROUNDS);
	else
		pr_warn("TSC: unsynchronised across CPUs: guests with more than one vCPU, and "
			"timer=posted, are refused");
}

uint32_t smp_start_aps(bool vmx)
{
	uint64_t low = mem_low_page();
	uint32_t up = 1;

	aps_vmx = vmx;
	this_cpu()->timer_irq = irq_timer_check(platform.tb.tsc_hz);
	if (platform.ncpus < 2) {
		smp_report_tsc(up);
		smp_report_parked();
		return up;
	}
	if (!low || paging_cr3() >> 32) {
		pr_warn("no page below 1 MiB for the AP trampoline (or page tables above 4 GiB): "
			"running on the BSP only");
		smp_report_parked();
		return up;
	}
	for (uint32_t i = 1; i < platform.ncpus; i++) {
		/* Each AP gets the next free index, so CPU n runs vCPU n. */
		if (start_one(up, platform.apic_ids[i], (uint8_t *)low))
			up++;
	}
	pr_info("%u of %u CPUs up (%s)", up, platform.ncpus,
		vmx ? "VMX on all of them" : "no VMX: each waits in tickvisor's loop");
	smp_report_tsc(up);
	smp_report_parked();
	return up;
}

void smp_run_on(uint32_t cpu, void (*fn)(void *), void *arg)
{
	struct pcpu *p = cpus[cpu];

	p->work_arg = arg;
	__atomic_store_n(&p->work_done, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&p->work, fn, __ATOMIC_RELEASE);
	apic_send_ipi(p->apic_id, VEC_KICK);
}

bool smp_wait(uint32_t cpu, uint64_t timeout_us)
{
	return wait_flag(&cpus[cpu]->work_done, timeout_us);
}
