// SPDX-License-Identifier: BSD-2-Clause
/* Helpers for the local APIC tests; see apic_util.h. */
#include "lib/apic_util.h"
#include "lib/desc.h"
#include "lib/percpu.h"
#include "lib/processor.h"
#include "lib/report.h"
#include "lib/tickvisor.h"

#define TSC_HZ_GUESS            (4000ull * 1000 * 1000)

/* Cached: CPUID and VMCALL are VM exits. */
uint64_t apic_util_tsc_hz(void)
{
	static uint64_t hz;
	struct tv_info info;
	struct cpuid r;
	uint32_t max;

	if (hz)
		return hz;
	max = cpuid(0).a;
	if (tickvisor_present() && tv_get_info(&info) && info.tsc_hz)
		hz = info.tsc_hz;
	else if (max >= 0x15 && (r = cpuid(0x15)).a && r.b && r.c)
		hz = (uint64_t)r.c * r.b / r.a;         /* crystal * ratio */
	else if (max >= 0x16 && (r = cpuid(0x16)).a)
		hz = (uint64_t)r.a * 1000000;           /* base MHz */
	else
		hz = TSC_HZ_GUESS;
	return hz;
}

static uint64_t us_to_tsc(uint64_t us)
{
	return us * apic_util_tsc_hz() / 1000000;
}

void apic_util_delay_us(uint64_t us)
{
	uint64_t end = rdtsc() + us_to_tsc(us);

	while (rdtsc() < end)
		pause();
}

bool apic_util_wait(const volatile uint32_t *count, uint32_t target, uint64_t us)
{
	uint64_t end = rdtsc() + us_to_tsc(us);

	while (*count < target) {
		if (rdtsc() >= end)
			return *count >= target;
		pause();
	}
	return true;
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

void apic_sw_enable(void)
{
	apic_write(LAPIC_SVR, LAPIC_SVR_ENABLE | LAPIC_SPURIOUS_VECTOR);
}

void apic_sw_disable(void)
{
	apic_write(LAPIC_SVR, LAPIC_SPURIOUS_VECTOR);
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

void apic_report_spurious(void)
{
	report(spurious_hits == 0, "no spurious interrupt (vector 0x%x): %u", LAPIC_SPURIOUS_VECTOR,
	       spurious_hits);
}

uint32_t apic_initial_id(void)
{
	return cpuid(1).b >> 24;
}

bool cpu_has_x2apic(void)
{
	return cpuid(1).c & CPUID_1_ECX_X2APIC;
}

int apic_base_write_safe(uint64_t val)
{
	int vec = wrmsr_safe(MSR_IA32_APIC_BASE, val);

	apic_cpu_init();        /* re-reads IA32_APIC_BASE into percpu.x2apic */
	return vec;
}
