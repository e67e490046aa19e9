// SPDX-License-Identifier: BSD-2-Clause
/*
 * AP bring-up: where the trampoline goes, the INIT/SIPI sequences, and
 * the AP's first steps in C; at the end, steps the SMP tests share. See
 * smp.h; the work loop is in on_cpu.c.
 */
#include "lib/smp.h"
#include "lib/apic.h"
#include "lib/desc.h"
#include "lib/fwcfg.h"
#include "lib/multiboot.h"
#include "lib/processor.h"
#include "lib/report.h"
#include "lib/setup.h"
#include "lib/string.h"
#include "lib/tickvisor.h"
#include "lib/tsc.h"

#define TRAMP_PAGE_SIZE         4096u
#define TRAMP_PREFERRED         0x8000u /* where OSes traditionally put it */
#define TRAMP_LOWEST            0x1000u /* above the real-mode IVT and BDA */
#define TRAMP_LIMIT             0x100000u       /* SIPI vectors reach below 1 MiB */
#define TRAMP_LOG_SIZE          (MAX_CPUS * sizeof(struct smp_tramp_log))
#define DESC_PTR_SIZE           6u      /* limit16 + base32, or offset32 + selector */
#define HALT_WAIT_US            10000u  /* smp_wait_halted(): the bound */
#define HALT_POLL_US            20u     /* and how often it asks */

/* smp_trampoline.asm: the blob, and the two slots filled from boot.asm. */
extern const uint8_t smp_tramp_start[], smp_tramp_end[], smp_tramp_gdtr[], smp_tramp_far[];
extern const uint8_t gdt_desc[], ap_entry_far[];        /* boot.asm */

/* smp_trampoline.asm stores at these offsets (LOG_*) and LOG_SHIFT 4. */
_Static_assert(offsetof(struct smp_tramp_log, edx) == 0, "LOG_EDX");
_Static_assert(offsetof(struct smp_tramp_log, cr0) == 4, "LOG_CR0");
_Static_assert(offsetof(struct smp_tramp_log, cs) == 8, "LOG_CS");
_Static_assert(offsetof(struct smp_tramp_log, entries) == 12, "LOG_ENTRIES");
_Static_assert(sizeof(struct smp_tramp_log) == 16, "LOG_SHIFT");

static uint32_t tramp_page;             /* physical; 0 until installed */
static struct smp_ap_boot ap_boot[MAX_CPUS];
void (*smp_ap_early_hook)(unsigned apic_id);

/* fw_cfg where there is one (tickvisor, QEMU); bare hardware has none
 * here, so a cpus=N argument says how many to expect. */
unsigned cpu_count(void)
{
	static unsigned n;

	if (!n) {
		unsigned c = fwcfg_present() ? fwcfg_cpu_count()
					     : (unsigned)arg_get_ulong("cpus", 1);

		n = c < MAX_CPUS ? c : MAX_CPUS;
	}
	return n;
}

bool cpu_online(unsigned cpu)
{
	return cpu < MAX_CPUS && __atomic_load_n(&percpu(cpu)->online, __ATOMIC_ACQUIRE);
}

uint32_t smp_trampoline_page(void)
{
	return tramp_page;
}

const volatile struct smp_tramp_log *smp_tramp_log(unsigned cpu)
{
	const uint8_t *page = (const uint8_t *)(uintptr_t)tramp_page;

	if (!tramp_page || cpu >= MAX_CPUS)
		return NULL;
	return (const volatile struct smp_tramp_log *)(page + (smp_tramp_end - smp_tramp_start)) + cpu;
}

const volatile struct smp_ap_boot *smp_ap_boot(unsigned cpu)
{
	return cpu < MAX_CPUS ? &ap_boot[cpu] : NULL;
}

/* A page of RAM below 1 MiB that the loader's data does not use (the
 * Multiboot information may well sit there, as GRUB puts it). */
static uint32_t tramp_find_page(void)
{
	if (boot_range_free(TRAMP_PREFERRED, TRAMP_PREFERRED + TRAMP_PAGE_SIZE))
		return TRAMP_PREFERRED;
	for (uint32_t p = TRAMP_LOWEST; p < TRAMP_LIMIT; p += TRAMP_PAGE_SIZE)
		if (boot_range_free(p, p + TRAMP_PAGE_SIZE))
			return p;
	return 0;
}

static bool tramp_install(void)
{
	size_t size = (size_t)(smp_tramp_end - smp_tramp_start);
	uint32_t p;
	uint8_t *page;

	if (tramp_page)
		return true;
	p = tramp_find_page();
	if (!p || size + TRAMP_LOG_SIZE > TRAMP_PAGE_SIZE) {
		report_fail("smp: no free page below 1 MiB for the AP trampoline");
		return false;
	}
	page = (uint8_t *)(uintptr_t)p;
	memcpy(page, smp_tramp_start, size);
	memcpy(page + (smp_tramp_gdtr - smp_tramp_start), gdt_desc, DESC_PTR_SIZE);
	memcpy(page + (smp_tramp_far - smp_tramp_start), ap_entry_far, DESC_PTR_SIZE);
	memset(page + size, 0, TRAMP_LOG_SIZE);
	tramp_page = p;
	return true;
}

/* The BSP's side of being ready for APs: trampoline, the kick handler,
 * and an enabled local APIC of its own so APs can interrupt it. */
static bool smp_prepare(void)
{
	if (!tramp_install())
		return false;
	smp_call_init();
	if (!(apic_read(LAPIC_SVR) & LAPIC_SVR_ENABLE))
		apic_sw_enable();
	return true;
}

/* INIT and SIPI are edge-triggered asserts (SDM's 000C4500H/000C46XXH,
 * with or without the all-excluding-self shorthand). */
static void send_init_sipi(unsigned dm, unsigned shorthand, unsigned cpu)
{
	uint32_t vector = dm == LAPIC_DM_STARTUP ? tramp_page >> 12 : 0;

	apic_icr_write(smp_icr(dm, vector, shorthand, false), cpu);
}

static bool wait_started(unsigned cpu, uint32_t starts_before, uint64_t deadline)
{
	while (__atomic_load_n(&ap_boot[cpu].starts, __ATOMIC_ACQUIRE) == starts_before ||
	       !cpu_online(cpu))
		if (tsc_passed(deadline))
			return false;
		else
			pause();
	return true;
}

bool smp_start_ap(unsigned cpu)
{
	uint32_t starts;

	if (cpu == smp_id() || cpu >= MAX_CPUS || !smp_prepare())
		return false;
	starts = __atomic_load_n(&ap_boot[cpu].starts, __ATOMIC_ACQUIRE);
	percpu_set_offline(cpu);
	send_init_sipi(LAPIC_DM_INIT, LAPIC_DEST_NONE, cpu);
	tsc_delay_us(SMP_INIT_DELAY_US);
	for (int i = 0; i < 2; i++) {
		send_init_sipi(LAPIC_DM_STARTUP, LAPIC_DEST_NONE, cpu);
		tsc_delay_us(SMP_SIPI_DELAY_US);
	}
	if (wait_started(cpu, starts, tsc_deadline_us(SMP_ONLINE_TIMEOUT_US)))
		return true;
	report_fail("smp: CPU %u not online %u ms after INIT-SIPI-SIPI", cpu,
		    SMP_ONLINE_TIMEOUT_US / 1000);
	return false;
}

static void boot_broadcast(unsigned n)
{
	uint32_t starts[MAX_CPUS];
	uint64_t deadline;

	for (unsigned cpu = 1; cpu < n; cpu++) {
		starts[cpu] = __atomic_load_n(&ap_boot[cpu].starts, __ATOMIC_ACQUIRE);
		percpu_set_offline(cpu);
	}
	send_init_sipi(LAPIC_DM_INIT, LAPIC_DEST_ALL_BUT_SELF, 0);
	tsc_delay_us(SMP_INIT_DELAY_US);
	send_init_sipi(LAPIC_DM_STARTUP, LAPIC_DEST_ALL_BUT_SELF, 0);
	deadline = tsc_deadline_us(SMP_SIPI_DELAY_US + SMP_ONLINE_TIMEOUT_US);
	for (unsigned cpu = 1; cpu < n; cpu++)
		if (!wait_started(cpu, starts[cpu], deadline))
			report_fail("smp: CPU %u not online %u ms after the broadcast SIPI", cpu,
				    SMP_ONLINE_TIMEOUT_US / 1000);
}

/* CPU 0 is the BSP here: tickvisor starts vCPU 0 at the Multiboot entry. */
unsigned smp_boot(enum smp_boot_mode mode)
{
	unsigned n = cpu_count();

	if (n < 2 || smp_id() != 0 || !smp_prepare())
		return cpus_online();
	if (mode == SMP_BOOT_BROADCAST) {
		boot_broadcast(n);
		return cpus_online();
	}
	for (unsigned cpu = 1; cpu < n; cpu++)
		if (!cpu_online(cpu))
			smp_start_ap(cpu);
	return cpus_online();
}

unsigned smp_init(void)
{
	return smp_boot(SMP_BOOT_PER_AP);
}

/* What INIT left in the local APIC, before this CPU writes any of it. */
static void ap_snapshot(struct smp_ap_boot *b)
{
	bool x2 = apic_is_x2apic();
	uint32_t id = apic_read(LAPIC_ID);

	b->apic_base = rdmsr(MSR_IA32_APIC_BASE);
	b->id_reg = x2 ? id : (uint32_t)FIELD_GET(LAPIC_ID_XAPIC, id);
	b->svr = apic_read(LAPIC_SVR);
	b->tpr = apic_read(LAPIC_TPR);
	b->ldr = apic_read(LAPIC_LDR);
	b->dfr = x2 ? 0 : apic_read(LAPIC_DFR);
	b->lvt_timer = apic_read(LAPIC_LVT_TIMER);
	b->tmict = apic_read(LAPIC_TMICT);
}

/* boot.asm's AP path ends here, on this CPU's own stack (strong over
 * the weak parking version in setup.c). */
void ap_start(unsigned apic_id)
{
	struct smp_ap_boot *b = &ap_boot[apic_id];
	uint64_t arrive = rdtsc();

	percpu_bind(apic_id);
	idt_load();
	apic_cpu_init();
	ap_snapshot(b);
	b->arrive_tsc = arrive;
	if (smp_ap_early_hook)
		smp_ap_early_hook(apic_id);
	apic_sw_enable();
	b->online_tsc = rdtsc();
	__atomic_fetch_add(&b->starts, 1, __ATOMIC_RELEASE);
	smp_idle();
}

static void set_apic_mode(void *arg)
{
	if (*(const bool *)arg)
		enable_x2apic();
	else
		reset_apic();
}

bool smp_set_x2apic(bool on)
{
	bool ok = true;

	if (on && !cpu_has_x2apic())
		return false;
	for (unsigned cpu = 0; cpu < MAX_CPUS; cpu++)
		if (cpu != smp_id() && cpu_online(cpu))
			ok &= on_cpu(cpu, set_apic_mode, &on);
	set_apic_mode(&on);
	return ok;
}

bool smp_init_report(void)
{
	return report(smp_init() == cpu_count(), "%u CPUs online", cpu_count());
}

bool smp_init_peer(unsigned *peer)
{
	*peer = (unsigned)arg_get_ulong("peer", 1);
	if (cpu_count() <= *peer) {
		report_skip("needs CPU %u, have %u CPUs", *peer, cpu_count());
		return false;
	}
	if (!smp_init_report())
		return false;
	sti();
	return true;
}

void smp_run_both_modes(void (*test)(bool x2))
{
	test(false);
	if (smp_set_x2apic(true))
		test(true);
	else
		report_skip("x2APIC: not available");
}

uint64_t smp_hlt_exits(void)
{
	return tickvisor_present() ? tv_exits(VMX_EXIT_HLT) : 0;
}

bool smp_wait_halted(uint64_t hlt_before, uint64_t settle_us)
{
	uint64_t deadline = tsc_deadline_us(HALT_WAIT_US);

	if (!tickvisor_present()) {
		tsc_delay_us(settle_us);
		return true;
	}
	while (tv_exits(VMX_EXIT_HLT) == hlt_before)
		if (tsc_passed(deadline))
			return false;
		else
			tsc_delay_us(HALT_POLL_US);
	return true;
}
