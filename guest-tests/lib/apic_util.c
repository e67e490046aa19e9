// SPDX-License-Identifier: BSD-2-Clause
/* Helpers for the local APIC tests; see apic_util.h. */
#include "lib/apic_util.h"
#include "lib/desc.h"
#include "lib/percpu.h"
#include "lib/processor.h"
#include "lib/report.h"
#include "lib/tickvisor.h"

bool apic_util_wait(const volatile uint32_t *count, uint32_t target, uint64_t us)
{
	uint64_t deadline = tsc_deadline_us(us);

	while (*count < target) {
		if (tsc_passed(deadline))
			return *count >= target;
		pause();
	}
	return true;
}

void apic_util_let_in(const volatile uint32_t *count, uint32_t target)
{
	sti();
	if (count)
		apic_util_wait(count, target, APIC_WAIT_US);
	tsc_delay_us(APIC_QUIET_US);
	cli();
}

bool apic_vec_test(enum lapic_reg base, unsigned vec)
{
	return apic_read(LAPIC_VEC_REG(base, vec)) & LAPIC_VEC_BIT(vec);
}

bool apic_vec_none(enum lapic_reg base)
{
	uint32_t any = 0;

	for (unsigned v = 0; v < 256; v += 32)
		any |= apic_read(LAPIC_VEC_REG(base, v));
	return !any;
}

void apic_self_ipi(unsigned vec)
{
	apic_icr_write((uint32_t)FIELD_PREP(LAPIC_ICR_SHORTHAND, LAPIC_DEST_SELF) |
		       (uint32_t)FIELD_PREP(LAPIC_ICR_DELIVERY, LAPIC_DM_FIXED) | (vec & 0xffu), 0);
}

uint32_t apic_esr_latch(void)
{
	apic_write(LAPIC_ESR, 0);
	return apic_read(LAPIC_ESR);
}

static volatile uint32_t spurious_hits;

static void on_spurious(struct ex_regs *r)
{
	(void)r;
	spurious_hits++;
}

void apic_catch_spurious(void)
{
	handle_irq(LAPIC_SPURIOUS_VECTOR, on_spurious);
}

static void apic_report_spurious(void)
{
	report(spurious_hits == 0, "no spurious interrupt (vector 0x%x): %u", LAPIC_SPURIOUS_VECTOR,
	       spurious_hits);
}

bool apic_test_start(const char *name)
{
	report_prefix_push(name);
	if (apic_is_x2apic()) {
		report_fail("the loader left x2APIC mode on");
		return false;
	}
	apic_catch_spurious();
	return true;
}

int apic_test_end(void)
{
	apic_report_spurious();
	report_prefix_pop();
	return report_summary();
}

/* Where tickvisor's configuration offers x2APIC, CPUID must show it:
 * the x2APIC half of a test is then mandatory, and a missing one a FAIL
 * rather than a SKIP that leaves the guest exiting 0. Elsewhere (bare
 * hardware, other hypervisors, x2apic=off) a CPU without it is a SKIP. */
bool apic_x2apic_offered(void)
{
	struct tv_info info;

	if (cpu_has_x2apic())
		return true;
	if (tickvisor_present() && tv_get_info(&info) && (info.flags & TV_INFO_X2APIC))
		report_fail("x2APIC: tickvisor offers it (x2apic=on) but CPUID.1:ECX[21] = 0");
	else
		report_skip("x2APIC: CPUID.1:ECX[21] = 0");
	return false;
}

bool apic_enter_x2apic(void)
{
	if (!apic_x2apic_offered())
		return false;
	enable_x2apic();
	if (!(rdmsr(MSR_IA32_APIC_BASE) & APIC_BASE_EXTD)) {
		report_fail("x2APIC: IA32_APIC_BASE.EXTD did not stick (0x%lx)",
			    rdmsr(MSR_IA32_APIC_BASE));
		apic_cpu_init();        /* the runtime's mode: what the MSR says */
		return false;
	}
	apic_sw_enable();
	return true;
}

void apic_run_both_modes(void (*run)(const char *mode))
{
	cli();
	apic_sw_enable();
	run("xAPIC");
	if (apic_enter_x2apic()) {
		run("x2APIC");
		reset_apic();
	}
}

uint32_t apic_initial_id(void)
{
	return cpuid(1).b >> 24;
}

int apic_base_write_safe(uint64_t val)
{
	int vec = wrmsr_safe(MSR_IA32_APIC_BASE, val);

	apic_cpu_init();        /* re-reads IA32_APIC_BASE into percpu.x2apic */
	return vec;
}
