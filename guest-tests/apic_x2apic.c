// SPDX-License-Identifier: BSD-2-Clause
/*
 * apic_x2apic: x2APIC mode (Intel SDM Vol. 3A, "Extended XAPIC (x2APIC)"):
 * the mode switch through IA32_APIC_BASE.EXTD and its illegal transitions,
 * the read-only 32-bit x2APIC ID and derived logical ID, and the MSR
 * interface's #GP rules ("x2APIC Register Address Space", "Reserved Bit
 * Checking"). Skipped where CPUID.1:ECX[21] is 0 (QEMU TCG).
 */
#include "lib/guest.h"
#include "lib/apic_util.h"

#define MSR_ID          X2APIC_MSR(LAPIC_ID)
#define MSR_VERSION     X2APIC_MSR(LAPIC_VERSION)
#define MSR_TPR         X2APIC_MSR(LAPIC_TPR)
#define MSR_PPR         X2APIC_MSR(LAPIC_PPR)
#define MSR_EOI         X2APIC_MSR(LAPIC_EOI)
#define MSR_LDR         X2APIC_MSR(LAPIC_LDR)
#define MSR_SVR         X2APIC_MSR(LAPIC_SVR)
#define MSR_ESR         X2APIC_MSR(LAPIC_ESR)
#define MSR_ICR         X2APIC_MSR(LAPIC_ICR_LO)
#define MSR_LVT_ERROR   X2APIC_MSR(LAPIC_LVT_ERROR)
#define MSR_TMCCT       X2APIC_MSR(LAPIC_TMCCT)
#define MSR_SELF_IPI    X2APIC_MSR(LAPIC_SELF_IPI)

static uint64_t base_xapic;             /* IA32_APIC_BASE as the loader left it */

static const char *vec_name(int vec)
{
	return vec == GP_VECTOR ? "#GP" : vec ? exception_mnemonic((unsigned)vec) : "no fault";
}

static void expect_rd_gp(uint32_t msr, const char *what)
{
	uint64_t v;
	int vec = rdmsr_safe(msr, &v);

	report(vec == GP_VECTOR, "RDMSR 0x%x (%s): #GP (got %s)", msr, what, vec_name(vec));
}

static void expect_wr_gp(uint32_t msr, uint64_t val, const char *what)
{
	int vec = wrmsr_safe(msr, val);

	report(vec == GP_VECTOR, "WRMSR 0x%x <- 0x%lx (%s): #GP (got %s)", msr, val, what,
	       vec_name(vec));
}

/* A refused IA32_APIC_BASE write: #GP and the MSR unchanged. */
static void expect_base_gp(uint64_t val, const char *what)
{
	uint64_t before = rdmsr(MSR_IA32_APIC_BASE);
	int vec = apic_base_write_safe(val);

	report(vec == GP_VECTOR && rdmsr(MSR_IA32_APIC_BASE) == before,
	       "%s (0x%lx): #GP, IA32_APIC_BASE stays 0x%lx (got %s)", what, val, before,
	       vec_name(vec));
}

static void test_xapic_mode_msrs(void)
{
	report_prefix_push("xAPIC mode");
	expect_rd_gp(MSR_ID, "ID");
	expect_rd_gp(MSR_VERSION, "version");
	expect_wr_gp(MSR_TPR, 0, "TPR");
	expect_wr_gp(MSR_ICR, 0, "ICR");
	report_prefix_pop();
}

static void test_enter(void)
{
	uint32_t id = apic_initial_id(), x2id;
	uint32_t version = apic_read(LAPIC_VERSION);
	uint32_t ldr;

	report(apic_base_write_safe(base_xapic | APIC_BASE_EXTD) == 0 && apic_is_x2apic(),
	       "xAPIC -> x2APIC: EXTD=1 accepted");
	report(rdmsr(MSR_IA32_APIC_BASE) == (base_xapic | APIC_BASE_EXTD),
	       "IA32_APIC_BASE 0x%lx", rdmsr(MSR_IA32_APIC_BASE));
	x2id = (uint32_t)rdmsr(MSR_ID);
	report(x2id == id, "x2APIC ID %u = initial APIC ID %u (CPUID.1:EBX[31:24])", x2id, id);
	if (cpuid(0).a >= 0xb && cpuid_indexed(0xb, 0).b)
		report(x2id == cpuid_indexed(0xb, 0).d, "x2APIC ID = CPUID.0xB:EDX (%u)",
		       cpuid_indexed(0xb, 0).d);
	else
		report_skip("CPUID leaf 0xB absent");
	ldr = (uint32_t)rdmsr(MSR_LDR);
	report(ldr == x2apic_ldr(x2id),
	       "LDR 0x%x: cluster ID << 16 | 1 << (ID & 0xf)", ldr);
	report((uint32_t)rdmsr(MSR_VERSION) == version, "version 0x%x as in xAPIC mode",
	       (uint32_t)rdmsr(MSR_VERSION));
}

static void test_read_only(void)
{
	uint32_t id = (uint32_t)rdmsr(MSR_ID), ldr = (uint32_t)rdmsr(MSR_LDR);

	expect_wr_gp(MSR_ID, id ^ 1, "ID is read-only");
	report((uint32_t)rdmsr(MSR_ID) == id, "ID unchanged (%u)", (uint32_t)rdmsr(MSR_ID));
	expect_wr_gp(MSR_LDR, ldr ^ 1, "LDR is read-only");
	report((uint32_t)rdmsr(MSR_LDR) == ldr, "LDR unchanged");
	expect_wr_gp(MSR_VERSION, 0, "version");
	expect_wr_gp(MSR_PPR, 0, "PPR");
	expect_wr_gp(X2APIC_MSR(LAPIC_ISR), 0, "ISR");
	expect_wr_gp(X2APIC_MSR(LAPIC_TMR), 0, "TMR");
	expect_wr_gp(X2APIC_MSR(LAPIC_IRR), 0, "IRR");
	expect_wr_gp(MSR_TMCCT, 0, "TMCCT");
}

static void test_nonexistent(void)
{
	static const struct {
		uint32_t msr;
		const char *what;
	} regs[] = {
		{ 0x800, "reserved" }, { 0x801, "reserved" }, { 0x804, "reserved" },
		{ 0x809, "APR: not in x2APIC" }, { 0x80c, "RRD: not in x2APIC" },
		{ 0x80e, "DFR: not in x2APIC" }, { 0x829, "reserved" },
		{ 0x831, "ICR high half: not in x2APIC" }, { 0x83a, "reserved" },
		{ 0x840, "reserved" }, { 0x8ff, "reserved" },
	};

	for (unsigned i = 0; i < ARRAY_SIZE(regs); i++)
		expect_rd_gp(regs[i].msr, regs[i].what);
	expect_wr_gp(0x809, 0, "APR");
	expect_wr_gp(0x80e, 0, "DFR");
	expect_wr_gp(0x831, 0, "ICR high half");
	expect_rd_gp(MSR_EOI, "EOI is write-only");
	expect_rd_gp(MSR_SELF_IPI, "SELF IPI is write-only");
	/* "x2APIC Error Handling": the #GP replaces the illegal-register error. */
	report(wrmsr_safe(MSR_ESR, 0) == 0 && rdmsr(MSR_ESR) == 0,
	       "no illegal-register error logged in the ESR");
}

static void test_value_checks(void)
{
	uint32_t tpr, svr, lvt;

	wrmsr(MSR_TPR, 0x35);
	report(rdmsr(MSR_TPR) == 0x35 && rdmsr(MSR_PPR) == 0x35,
	       "TPR 0x35 reads back, PPR follows");
	wrmsr(MSR_TPR, 0);
	tpr = (uint32_t)rdmsr(MSR_TPR);
	svr = (uint32_t)rdmsr(MSR_SVR);
	lvt = (uint32_t)rdmsr(MSR_LVT_ERROR);

	expect_wr_gp(MSR_EOI, 1, "EOI of a nonzero value");
	report(wrmsr_safe(MSR_EOI, 0) == 0, "WRMSR EOI <- 0 with nothing in service: no #GP");
	expect_wr_gp(MSR_ESR, 1, "ESR of a nonzero value");
	report(wrmsr_safe(MSR_ESR, 0) == 0 && rdmsr(MSR_ESR) == 0,
	       "WRMSR ESR <- 0, then ESR reads 0");
	/* "Reserved Bit Checking": nonzero reserved bits raise #GP. */
	expect_wr_gp(MSR_TPR, 0x100, "TPR reserved bit 8");
	expect_wr_gp(MSR_TPR, BIT(32), "TPR reserved bit 32");
	report((uint32_t)rdmsr(MSR_TPR) == tpr, "TPR unchanged (0x%x)", (uint32_t)rdmsr(MSR_TPR));
	expect_wr_gp(MSR_SVR, svr | BIT(13), "SVR reserved bit 13");
	report((uint32_t)rdmsr(MSR_SVR) == svr, "SVR unchanged (0x%x)", (uint32_t)rdmsr(MSR_SVR));
	expect_wr_gp(MSR_LVT_ERROR, lvt | BIT(17), "error LVT reserved bit 17");
	report((uint32_t)rdmsr(MSR_LVT_ERROR) == lvt, "error LVT unchanged (0x%x)",
	       (uint32_t)rdmsr(MSR_LVT_ERROR));
	expect_wr_gp(MSR_SELF_IPI, 0x100 | 0x40, "SELF IPI reserved bit 8");
	expect_wr_gp(MSR_ICR, (uint64_t)apic_initial_id() << 32 | BIT(20) | 0x41,
		     "ICR reserved bit 20");
	report(apic_vec_none(LAPIC_IRR), "nothing became pending");
}

static void test_transitions(void)
{
	uint64_t x2 = base_xapic | APIC_BASE_EXTD;
	uint64_t off = base_xapic & ~(uint64_t)APIC_BASE_EN;

	expect_base_gp(base_xapic, "x2APIC -> xAPIC");
	expect_base_gp(off | APIC_BASE_EXTD, "x2APIC -> EN=0 with EXTD=1");
	expect_base_gp(x2 | BIT(9), "reserved bit 9");
	expect_base_gp(x2 | BIT(63), "reserved bit 63");
	report(apic_is_x2apic() && (uint32_t)rdmsr(MSR_ID) == apic_initial_id(),
	       "still in x2APIC mode");

	report(apic_base_write_safe(off) == 0 && rdmsr(MSR_IA32_APIC_BASE) == off,
	       "x2APIC -> disabled: accepted (0x%lx)", rdmsr(MSR_IA32_APIC_BASE));
	expect_rd_gp(MSR_ID, "disabled APIC");
	expect_base_gp(x2, "disabled -> x2APIC directly");
	expect_base_gp(off | APIC_BASE_EXTD, "disabled -> EN=0 with EXTD=1");
	report(apic_base_write_safe(base_xapic) == 0 && rdmsr(MSR_IA32_APIC_BASE) == base_xapic,
	       "disabled -> xAPIC: accepted (0x%lx)", rdmsr(MSR_IA32_APIC_BASE));
	report(!apic_is_x2apic() && apic_read(LAPIC_ID) == apic_initial_id() << 24,
	       "xAPIC ID 0x%x back in the MMIO page", apic_read(LAPIC_ID));
	expect_rd_gp(MSR_ID, "xAPIC mode again");
	expect_base_gp(off | APIC_BASE_EXTD, "xAPIC -> EN=0 with EXTD=1");
	report(apic_base_write_safe(x2) == 0 && apic_is_x2apic(), "and into x2APIC mode again");
	report(apic_base_write_safe(off) == 0 && apic_base_write_safe(base_xapic) == 0 &&
	       !apic_is_x2apic(), "back to xAPIC through the disabled state");
}

int main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	report_prefix_push("apic_x2apic");
	if (!apic_x2apic_offered())     /* SKIP, or FAIL where offered */
		return report_summary();
	if (apic_is_x2apic()) {
		report_fail("the loader left x2APIC mode on");
		return report_summary();
	}
	base_xapic = rdmsr(MSR_IA32_APIC_BASE);
	cli();
	test_xapic_mode_msrs();
	test_enter();
	test_read_only();
	test_nonexistent();
	apic_sw_enable();
	test_value_checks();
	test_transitions();
	report_prefix_pop();
	return report_summary();
}
