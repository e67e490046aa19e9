// SPDX-License-Identifier: BSD-2-Clause
#include "drivers/apic.h"
#include "drivers/io.h"

#define X2APIC_MSR(reg)     (MSR_X2APIC_FIRST + ((reg) >> 4))

struct apic_caps apic_caps;

uint32_t apic_read(uint32_t reg)
{
	if (apic_caps.x2apic)
		return (uint32_t)rdmsr(X2APIC_MSR(reg));
	return mmio_read32(apic_caps.mmio_base + reg);
}

void apic_write(uint32_t reg, uint32_t v)
{
	if (apic_caps.x2apic)
		wrmsr(X2APIC_MSR(reg), v);
	else
		mmio_write32(apic_caps.mmio_base + reg, v);
}

void apic_init_cpu(uint8_t spurious_vector)
{
	uint32_t ecx = cpuid(1, 0).ecx;
	uint64_t base = rdmsr(MSR_IA32_APIC_BASE);

	apic_caps.tsc_deadline = (ecx & CPUID_1_ECX_TSCDL) && !apic_caps.tsc_deadline_erratum;
	apic_caps.x2apic = ecx & CPUID_1_ECX_X2APIC;
	apic_caps.mmio_base = base & APIC_BASE_ADDR;
	/* xAPIC -> x2APIC is a legal transition; EN must be set first. */
	base |= APIC_BASE_EN;
	wrmsr(MSR_IA32_APIC_BASE, base);
	if (apic_caps.x2apic)
		wrmsr(MSR_IA32_APIC_BASE, base | APIC_BASE_EXTD);
	apic_write(APIC_LVT_TIMER, APIC_LVT_MASKED);
	apic_write(APIC_LVT_THERMAL, APIC_LVT_MASKED);
	apic_write(APIC_LVT_PERF, APIC_LVT_MASKED);
	apic_write(APIC_LVT_LINT0, APIC_LVT_MASKED);
	apic_write(APIC_LVT_LINT1, APIC_LVT_MASKED);
	apic_write(APIC_LVT_ERROR, APIC_LVT_MASKED);
	apic_write(APIC_TPR, 0);
	apic_write(APIC_SVR, APIC_SVR_ENABLE | spurious_vector);
	apic_write(APIC_ESR, 0);
}

uint32_t apic_id(void)
{
	uint32_t id = apic_read(APIC_ID);

	return apic_caps.x2apic ? id : id >> 24;
}

void apic_eoi(void)
{
	apic_write(APIC_EOI, 0);
}

/*
 * An xAPIC IPI is two stores, ICR_HI (destination) then ICR_LO, which
 * sends (SDM Vol. 3A, "Interrupt Command Register (ICR)"). Anything that
 * sends an IPI between the two on this CPU would redirect the first one.
 * - Interrupts are off across the pair, so no interrupt handler does.
 * - NMIs cannot be held off. tickvisor's NMI handler (vmm/host/irq.c) sends
 *   no IPI; the one IPI sent from NMI context is the panic broadcast,
 *   which uses a shorthand and so writes ICR_LO only (the destination
 *   field is ignored then), and never returns to the code it interrupted.
 *   A future NMI-time IPI must keep to shorthands for the same reason.
 * x2APIC has none of this: the ICR is one 64-bit WRMSR (apic_send_ipi(),
 * apic.h).
 */
void apic_send_ipi_xapic(uint32_t dest, uint32_t icr_lo)
{
	uint64_t flags = irq_save();

	for (unsigned spins = 0; apic_read(APIC_ICR_LO) & APIC_ICR_PENDING && spins < 1000000; spins++)
		cpu_relax();
	if (!(icr_lo & APIC_ICR_SHORTHAND))
		apic_write(APIC_ICR_HI, dest << 24);
	apic_write(APIC_ICR_LO, icr_lo);
	irq_restore(flags);
}

void apic_send_nmi(uint32_t dest)
{
	apic_send_ipi(dest, APIC_ICR_DELIV_NMI | APIC_ICR_ASSERT);
}

void apic_lint_nmi(unsigned pin, bool active_low)
{
	apic_write(pin ? APIC_LVT_LINT1 : APIC_LVT_LINT0,
		   APIC_LVT_DELIV_NMI | (active_low ? APIC_LVT_ACTIVE_LOW : 0));
}

void apic_timer_deadline(uint8_t vector, uint64_t tsc)
{
	apic_write(APIC_LVT_TIMER, APIC_LVT_TIMER_TSCDL | vector);
	/* SDM: the MSR write must be ordered after the LVT write (mfence). */
	__asm__ volatile("mfence" ::: "memory");
	wrmsr(MSR_IA32_TSC_DEADLINE, tsc ? tsc : 1);
}

void apic_timer_oneshot(uint8_t vector, uint32_t count)
{
	apic_write(APIC_TDCR, APIC_TDCR_DIV1);
	apic_write(APIC_LVT_TIMER, vector);
	apic_write(APIC_TMICT, count ? count : 1);
}

void apic_timer_stop(void)
{
	if (apic_caps.tsc_deadline)
		wrmsr(MSR_IA32_TSC_DEADLINE, 0);
	apic_write(APIC_TMICT, 0);
	apic_write(APIC_LVT_TIMER, APIC_LVT_MASKED);
}

uint64_t apic_timer_calibrate(uint64_t tsc_hz)
{
	uint64_t start, window = tsc_hz / 100;          /* 10 ms */
	uint32_t left;

	apic_write(APIC_TDCR, APIC_TDCR_DIV1);
	apic_write(APIC_LVT_TIMER, APIC_LVT_MASKED);    /* counts, never fires */
	apic_write(APIC_TMICT, 0xffffffffu);
	start = rdtsc();
	while (rdtsc() - start < window)
		cpu_relax();
	left = apic_read(APIC_TMCCT);
	apic_write(APIC_TMICT, 0);
	return (uint64_t)(0xffffffffu - left) * 100;
}
