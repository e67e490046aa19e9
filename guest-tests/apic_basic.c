// SPDX-License-Identifier: BSD-2-Clause
/*
 * apic_basic: what a local APIC looks like before anyone programs it
 * (Intel SDM Vol. 3A, "Advanced Programmable Interrupt Controller (APIC)":
 * "Presence of the Local APIC", "Local APIC Status and Location", "Local
 * APIC Version Register", "Local APIC State After Power-Up or Reset",
 * "Local APIC Register Address Map").
 *
 * The power-up values are only mandatory under tickvisor, which starts
 * every guest on a freshly reset APIC; elsewhere firmware ran first (QEMU's
 * SeaBIOS programs LINT0/LINT1 and the SVR), so they are skipped there.
 */
#include "lib/guest.h"
#include "lib/apic_util.h"

#define APIC_BASE_RESERVED      (BITS(7, 0) | BIT(9))
#define VERSION_RESERVED        (BITS(15, 8) | BITS(31, 25))
#define LVT_RESET               LAPIC_LVT_MASKED
#define DFR_RESET               0xffffffffu
#define SVR_RESET               0xffu
/* tickvisor's version register: 0x14 like Intel's integrated APICs (Bochs
 * reports 0x14 as well, KVM's APIC_VERSION is 0x14), max LVT entry 6 for
 * its 7 LVTs (timer, thermal, perfmon, LINT0, LINT1, error, CMCI), bit 24
 * clear: its guests have no I/O APIC, so no EOI-broadcast suppression. */
#define TICKVISOR_VERSION       0x00060014u

static uint32_t version;

static uint32_t mmio_read(uint32_t off)
{
	return *(volatile uint32_t *)(uintptr_t)(LAPIC_MMIO_BASE + off);
}

static void test_presence(void)
{
	uint64_t base = rdmsr(MSR_IA32_APIC_BASE);

	report(cpuid(1).d & CPUID_1_EDX_APIC, "CPUID.1:EDX[9] APIC present");
	report((base & APIC_BASE_ADDR) == LAPIC_MMIO_BASE, "IA32_APIC_BASE address 0x%lx",
	       base & APIC_BASE_ADDR);
	report(base & APIC_BASE_EN, "IA32_APIC_BASE.EN set (0x%lx)", base);
	report(base & APIC_BASE_BSP, "IA32_APIC_BASE.BSP set on the boot CPU");
	report(!(base & APIC_BASE_EXTD), "IA32_APIC_BASE.EXTD clear: xAPIC mode after reset");
	report(!(base & APIC_BASE_RESERVED), "IA32_APIC_BASE bits 9 and 7:0 read 0");
}

static void test_version(void)
{
	uint32_t ver, maxlvt, svr;
	bool eoi_supp;

	ver = (uint32_t)FIELD_GET(LAPIC_VERSION_VER, version);
	maxlvt = (uint32_t)FIELD_GET(LAPIC_VERSION_MAXLVT, version);
	eoi_supp = version & LAPIC_VERSION_EOI_SUPP;
	report(ver >= 0x10 && ver <= 0x15, "version 0x%x: integrated APIC (0x10..0x15)", ver);
	report(maxlvt >= 5, "max LVT entry %u >= 5", maxlvt);
	report(!(version & VERSION_RESERVED), "version register reserved bits read 0 (0x%08x)",
	       version);
	svr = mmio_read(LAPIC_SVR);
	apic_write(LAPIC_SVR, svr | LAPIC_SVR_EOI_SUPP);
	report(!!(mmio_read(LAPIC_SVR) & LAPIC_SVR_EOI_SUPP) == eoi_supp,
	       "SVR bit 12 %s, as version bit 24 (%u) says",
	       eoi_supp ? "writable" : "stays 0", eoi_supp);
	apic_write(LAPIC_SVR, svr);
	report(mmio_read(LAPIC_SVR) == svr, "SVR restored to 0x%x", svr);
	if (!tickvisor_present()) {
		report_skip("tickvisor's exact version value");
		return;
	}
	report(version == TICKVISOR_VERSION, "tickvisor: version register 0x%08x (want 0x%08x: "
	       "0x14, max LVT 6, no EOI-broadcast suppression)", version, TICKVISOR_VERSION);
}

static void check_reset_lvt(const char *name, enum lapic_reg reg)
{
	uint32_t v = mmio_read(reg);

	report(v == LVT_RESET, "%s LVT 0x%08x: masked, all else 0", name, v);
}

static void check_vec_regs(const char *name, enum lapic_reg base)
{
	report(apic_vec_none(base), "%s: all 256 bits 0", name);
}

static void test_reset_state(void)
{
	uint32_t maxlvt = (uint32_t)FIELD_GET(LAPIC_VERSION_MAXLVT, version);

	if (!tickvisor_present()) {
		report_skip("power-up values: firmware programmed the APIC before this image");
		return;
	}
	report_prefix_push("reset");
	report(mmio_read(LAPIC_TPR) == 0, "TPR 0x%x", mmio_read(LAPIC_TPR));
	report(mmio_read(LAPIC_PPR) == 0, "PPR 0x%x", mmio_read(LAPIC_PPR));
	check_vec_regs("ISR", LAPIC_ISR);
	check_vec_regs("TMR", LAPIC_TMR);
	check_vec_regs("IRR", LAPIC_IRR);
	report(mmio_read(LAPIC_ICR_LO) == 0 && mmio_read(LAPIC_ICR_HI) == 0, "ICR 0");
	report(mmio_read(LAPIC_LDR) == 0, "LDR 0x%x", mmio_read(LAPIC_LDR));
	report(mmio_read(LAPIC_DFR) == DFR_RESET, "DFR 0x%x", mmio_read(LAPIC_DFR));
	report(mmio_read(LAPIC_SVR) == SVR_RESET, "SVR 0x%x: software-disabled, vector 0xff",
	       mmio_read(LAPIC_SVR));
	check_reset_lvt("timer", LAPIC_LVT_TIMER);
	check_reset_lvt("thermal", LAPIC_LVT_THERMAL);
	check_reset_lvt("perf", LAPIC_LVT_PERF);
	check_reset_lvt("LINT0", LAPIC_LVT_LINT0);
	check_reset_lvt("LINT1", LAPIC_LVT_LINT1);
	check_reset_lvt("error", LAPIC_LVT_ERROR);
	if (maxlvt >= 6)
		check_reset_lvt("CMCI", LAPIC_LVT_CMCI);
	report(mmio_read(LAPIC_TMICT) == 0 && mmio_read(LAPIC_TMCCT) == 0 &&
	       mmio_read(LAPIC_TDCR) == 0, "timer initial/current count and divide 0");
	report(apic_esr_latch() == 0, "ESR 0");
	report_prefix_pop();
}

/* Table "Local APIC Register Address Map": writes to read-only registers
 * change nothing. The ISR/TMR/IRR words written are the ones of vectors
 * 0-31, which no interrupt can set (vectors 0-15 are illegal). */
static void test_read_only(void)
{
	static const struct {
		const char *name;
		enum lapic_reg reg;
	} ro[] = {
		{ "version", LAPIC_VERSION }, { "PPR", LAPIC_PPR }, { "ISR[31:0]", LAPIC_ISR },
		{ "TMR[31:0]", LAPIC_TMR }, { "IRR[31:0]", LAPIC_IRR }, { "TMCCT", LAPIC_TMCCT },
	};

	for (unsigned i = 0; i < ARRAY_SIZE(ro); i++) {
		uint32_t before = mmio_read(ro[i].reg), after;

		apic_write(ro[i].reg, ~before);
		after = mmio_read(ro[i].reg);
		report(after == before, "%s is read-only: 0x%x after writing 0x%x", ro[i].name,
		       after, ~before);
	}
}

/* LVT LINT0: delivery status (12) and remote IRR (14) are read-only,
 * polarity (13) and trigger mode (15) read/write. Masked throughout. */
static void test_lvt_bits(void)
{
	uint32_t rw = LAPIC_LVT_MASKED | LAPIC_LVT_LEVEL | BIT(13) | 0x40;
	uint32_t v;

	apic_write(LAPIC_LVT_LINT0, rw | LAPIC_LVT_PENDING | BIT(14));
	v = mmio_read(LAPIC_LVT_LINT0);
	report(v == rw, "LINT0 LVT 0x%x: bits 12 and 14 stay 0, 13 and 15 writable", v);
	apic_write(LAPIC_LVT_LINT0, LAPIC_LVT_MASKED);
}

/* Table "Local APIC Register Address Map": reserved offsets. 0x3f0 is
 * SELF IPI only in x2APIC mode. */
static void test_reserved_offsets(void)
{
	static const uint32_t offs[] = { 0x040, 0x050, 0x060, 0x070, 0x3a0, 0x3b0, 0x3c0,
					 0x3d0, 0x3f0 };

	for (unsigned i = 0; i < ARRAY_SIZE(offs); i++) {
		uint32_t v = mmio_read(offs[i]);

		report(v == 0, "reserved offset 0x%03x reads 0 (0x%x)", offs[i], v);
	}
}

int main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	report_prefix_push("apic_basic");
	if (apic_is_x2apic()) {
		report_skip("the loader left the APIC in x2APIC mode");
		report_prefix_pop();
		return report_summary();
	}
	test_presence();
	version = mmio_read(LAPIC_VERSION);
	test_reset_state();             /* first: nothing written yet */
	test_version();
	test_read_only();
	test_lvt_bits();
	test_reserved_offsets();
	report_prefix_pop();
	return report_summary();
}
