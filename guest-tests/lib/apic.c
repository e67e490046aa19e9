// SPDX-License-Identifier: BSD-2-Clause
/*
 * Local APIC register access. The mode (xAPIC or x2APIC) is cached per
 * CPU in percpu.x2apic, rebuilt whenever this file changes IA32_APIC_BASE,
 * so a register access costs one MMIO access or one MSR access and never
 * an extra RDMSR: under tickvisor each of those is a VM exit, and timer
 * tests measure them.
 */
#include "lib/apic.h"
#include "lib/desc.h"
#include "lib/percpu.h"
#include "lib/processor.h"

#define APIC_ICR_POLL_LIMIT     1000000u

static volatile uint32_t *xapic_reg(enum lapic_reg reg)
{
	return (volatile uint32_t *)(uintptr_t)(LAPIC_MMIO_BASE + reg);
}

bool apic_is_x2apic(void)
{
	return this_cpu()->x2apic;
}

uint32_t apic_read(enum lapic_reg reg)
{
	if (apic_is_x2apic())
		return (uint32_t)rdmsr(X2APIC_MSR(reg));
	return *xapic_reg(reg);
}

void apic_write(enum lapic_reg reg, uint32_t val)
{
	if (apic_is_x2apic())
		wrmsr(X2APIC_MSR(reg), val);
	else
		*xapic_reg(reg) = val;
}

void apic_icr_write(uint32_t lo, uint32_t dest)
{
	if (apic_is_x2apic()) {
		wrmsr(MSR_X2APIC_ICR, (uint64_t)dest << 32 | lo);
		return;
	}
	*xapic_reg(LAPIC_ICR_HI) = (uint32_t)FIELD_PREP(LAPIC_ID_XAPIC, dest);
	*xapic_reg(LAPIC_ICR_LO) = lo;
	for (unsigned i = 0; i < APIC_ICR_POLL_LIMIT; i++)
		if (!(*xapic_reg(LAPIC_ICR_LO) & LAPIC_ICR_BUSY))
			break;
}

void apic_eoi(void)
{
	apic_write(LAPIC_EOI, 0);
}

uint32_t apic_id(void)
{
	uint32_t id = apic_read(LAPIC_ID);

	return apic_is_x2apic() ? id : (uint32_t)FIELD_GET(LAPIC_ID_XAPIC, id);
}

bool enable_x2apic(void)
{
	if (!cpu_has_x2apic())
		return false;
	wrmsr(MSR_IA32_APIC_BASE, rdmsr(MSR_IA32_APIC_BASE) | APIC_BASE_EN | APIC_BASE_EXTD);
	this_cpu()->x2apic = true;
	return true;
}

void reset_apic(void)
{
	uint64_t base = rdmsr(MSR_IA32_APIC_BASE) & ~(APIC_BASE_EN | APIC_BASE_EXTD);

	wrmsr(MSR_IA32_APIC_BASE, base);
	wrmsr(MSR_IA32_APIC_BASE, base | APIC_BASE_EN);
	this_cpu()->x2apic = false;
	apic_sw_enable();
}

/* No APIC (CPUID.1:EDX[9]) or no readable APIC base: treat as xAPIC,
 * the reset state; tests that need an APIC check for one themselves. */
void apic_cpu_init(void)
{
	uint64_t base = 0;

	this_cpu()->x2apic = false;
	if (!(cpuid(1).d & CPUID_1_EDX_APIC) || rdmsr_safe(MSR_IA32_APIC_BASE, &base))
		return;
	this_cpu()->x2apic = (base & (APIC_BASE_EN | APIC_BASE_EXTD)) ==
			     (APIC_BASE_EN | APIC_BASE_EXTD);
}
