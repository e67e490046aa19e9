// SPDX-License-Identifier: BSD-2-Clause
/*
 * apic_x2apic_off: a guest started with tickvisor's option x2apic=off
 * (issue 10.6) sees a CPU without x2APIC, as QEMU's -cpu ...,-x2apic:
 * CPUID.1:ECX[21] reads 0; IA32_APIC_BASE.EXTD is reserved, so setting it
 * raises #GP (Intel SDM Vol. 3A, "x2APIC Initialization" and the
 * IA32_APIC_BASE layout: EXTD exists only where CPUID shows x2APIC); the
 * x2APIC MSRs 0x800-0x8ff do not exist and raise #GP ("x2APIC Register
 * Address Space"). The xAPIC interface keeps working: a self-IPI through
 * the MMIO ICR arrives. KVM (kvm_apic_set_base: EXTD reserved without
 * guest X2APIC) and Bochs (msr.cc: the x2APIC range only with x2APIC
 * support) agree. Meant to run with x2apic=off (unittests.cfg); with
 * x2APIC shown it fails on purpose.
 */
#include "lib/guest.h"
#include "lib/apic_util.h"

#define VEC 0x41

static volatile unsigned hits;

static void self_ipi_handler(struct ex_regs *regs)
{
	(void)regs;
	hits++;
	apic_eoi();
}

static void expect_msr_gp(uint32_t msr, const char *what)
{
	uint64_t v;
	int rd = rdmsr_safe(msr, &v), wr = wrmsr_safe(msr, 0);

	report(rd == GP_VECTOR && wr == GP_VECTOR, "x2APIC MSR 0x%x (%s): RDMSR and WRMSR #GP "
	       "(vectors %d, %d)", msr, what, rd, wr);
}

static void test_extd(void)
{
	uint64_t base = rdmsr(MSR_IA32_APIC_BASE);
	int vec = apic_base_write_safe(base | APIC_BASE_EXTD);

	report(vec == GP_VECTOR && rdmsr(MSR_IA32_APIC_BASE) == base && !apic_is_x2apic(),
	       "IA32_APIC_BASE.EXTD=1: #GP, base stays 0x%lx (vector %d)", base, vec);
	report(!enable_x2apic(), "the runtime's enable_x2apic() declines");
}

static void test_xapic_still_works(void)
{
	uint64_t t0;

	apic_sw_enable();
	handle_irq(VEC, self_ipi_handler);
	hits = 0;
	sti();
	apic_icr_write(FIELD_PREP(LAPIC_ICR_SHORTHAND, LAPIC_DEST_SELF) | VEC, 0);
	t0 = rdtsc();
	while (!hits && rdtsc() - t0 < 1000000000ull)
		cpu_relax();
	cli();
	report(hits == 1, "xAPIC self-IPI through the MMIO ICR arrives (%u)", hits);
	report((apic_read(LAPIC_VERSION) & 0xff) >= 0x10, "xAPIC version register reads 0x%x",
	       apic_read(LAPIC_VERSION));
}

int main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	report(!cpu_has_x2apic(), "CPUID.1:ECX[21] (x2APIC) reads 0");
	test_extd();
	expect_msr_gp(0x802, "ID");
	expect_msr_gp(0x808, "TPR");
	expect_msr_gp(0x80f, "SVR");
	expect_msr_gp(0x83f, "self IPI");
	expect_msr_gp(0x8ff, "end of range");
	test_xapic_still_works();
	return report_summary();
}
