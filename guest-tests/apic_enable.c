// SPDX-License-Identifier: BSD-2-Clause
/*
 * apic_enable: the two ways to turn a local APIC off and on (Intel SDM
 * Vol. 3A, "Enabling or Disabling the Local APIC", "Local APIC State After
 * It Has Been Software Disabled", "x2APIC State Transitions"):
 *
 * - software: SVR bit 8. Disabling sets every LVT mask bit and clearing
 *   one while disabled is ignored; fixed interrupts are not accepted
 *   (only INIT, NMI, SMI and SIPI are, see apic_nmi); what was already in
 *   IRR is held.
 * - hardware: IA32_APIC_BASE.EN. While 0 the APIC is gone, CPUID.1:EDX[9]
 *   included; it can be set again (processors with FSB/system-bus
 *   delivery), in xAPIC mode. The SDM says the APIC "may" then be in its
 *   power-up state; tickvisor promises it (disabling resets its APIC), so
 *   those checks are mandatory under tickvisor and skipped elsewhere when
 *   they do not hold. The xAPIC page is not touched while disabled: what
 *   it reads as then is platform-specific.
 */
#include "lib/guest.h"
#include "lib/apic_util.h"

#define VEC             0x61u
#define LVT_VEC_BASE    0x50u   /* LVT i gets vector LVT_VEC_BASE + i */
#define APIC_BASE_XAPIC (LAPIC_MMIO_BASE | APIC_BASE_EN)

static const struct {
	const char *name;
	enum lapic_reg reg;
	unsigned min_maxlvt;            /* exists if max LVT entry >= this */
} lvts[] = {
	{ "timer", LAPIC_LVT_TIMER, 0 }, { "thermal", LAPIC_LVT_THERMAL, 5 },
	{ "perf", LAPIC_LVT_PERF, 0 }, { "LINT0", LAPIC_LVT_LINT0, 0 },
	{ "LINT1", LAPIC_LVT_LINT1, 0 }, { "error", LAPIC_LVT_ERROR, 0 },
	{ "CMCI", LAPIC_LVT_CMCI, 6 },
};

static volatile uint32_t hits;
static unsigned maxlvt;

static void on_vec(struct ex_regs *r)
{
	(void)r;
	hits++;
	apic_eoi();
}

/* A power-up value after re-enabling: see the header comment. */
static void __printf(2, 3) check_reset(bool ok, const char *fmt, ...)
{
	char msg[120];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (ok || tickvisor_present())
		report(ok, "%s", msg);
	else
		report_skip("%s: not the power-up value, which the SDM allows", msg);
}

static bool lvt_exists(unsigned i)
{
	return maxlvt >= lvts[i].min_maxlvt;
}

/* Interrupts stay off here: LINT0/LINT1 unmasked must not let a platform
 * interrupt in (natively the PIC sits on LINT0). */
static void test_sw_disable_masks_lvts(void)
{
	uint32_t v;

	apic_sw_enable();
	report(apic_read(LAPIC_SVR) == (LAPIC_SVR_ENABLE | LAPIC_SPURIOUS_VECTOR),
	       "SVR 0x%x after software enable", apic_read(LAPIC_SVR));
	for (unsigned i = 0; i < ARRAY_SIZE(lvts); i++)
		if (lvt_exists(i))
			apic_write(lvts[i].reg, LVT_VEC_BASE + i);
	for (unsigned i = 0; i < ARRAY_SIZE(lvts); i++) {
		if (!lvt_exists(i))
			continue;
		v = apic_read(lvts[i].reg);
		report(v == LVT_VEC_BASE + i, "%s LVT unmasked while enabled (0x%x)",
		       lvts[i].name, v);
	}
	apic_sw_disable();
	for (unsigned i = 0; i < ARRAY_SIZE(lvts); i++) {
		if (!lvt_exists(i))
			continue;
		v = apic_read(lvts[i].reg);
		report(v == (LAPIC_LVT_MASKED | (LVT_VEC_BASE + i)),
		       "software disable sets the %s LVT mask, keeps the rest (0x%x)",
		       lvts[i].name, v);
	}
	apic_write(LAPIC_LVT_ERROR, 0xe0);
	v = apic_read(LAPIC_LVT_ERROR);
	report(v == (LAPIC_LVT_MASKED | 0xe0),
	       "unmasking the error LVT while disabled is ignored (0x%x)", v);
	apic_sw_enable();
	v = apic_read(LAPIC_LVT_ERROR);
	report(v == (LAPIC_LVT_MASKED | 0xe0),
	       "error LVT still masked after software enable (0x%x)", v);
	apic_write(LAPIC_LVT_ERROR, 0xe0);
	v = apic_read(LAPIC_LVT_ERROR);
	report(v == 0xe0, "error LVT unmasks once enabled (0x%x)", v);
	for (unsigned i = 0; i < ARRAY_SIZE(lvts); i++)
		if (lvt_exists(i))
			apic_write(lvts[i].reg, LAPIC_LVT_MASKED);
}

static void test_sw_disable_ipi(void)
{
	hits = 0;
	cli();
	apic_sw_disable();
	apic_self_ipi(VEC);
	report(!apic_vec_test(LAPIC_IRR, VEC),
	       "software-disabled: fixed self-IPI not accepted (IRR clear)");
	apic_util_let_in(NULL, 0);
	report(hits == 0, "software-disabled: fixed self-IPI not delivered (%u)", hits);
	hits = 0;
	apic_sw_enable();
	apic_util_let_in(NULL, 0);
	report(hits == 0, "the refused IPI does not come back after software enable (%u)", hits);

	/* Pending before the disable: held in IRR, delivered once enabled. */
	hits = 0;
	apic_self_ipi(VEC);
	apic_sw_disable();
	report(apic_vec_test(LAPIC_IRR, VEC), "IRR bit accepted before software disable is held");
	apic_sw_enable();
	sti();
	apic_util_wait(&hits, 1, APIC_WAIT_US);
	report(hits >= 1, "held interrupt delivered once enabled (%u)", hits);
	tsc_delay_us(APIC_QUIET_US);
	cli();
	report(hits == 1 && apic_vec_none(LAPIC_ISR) && apic_vec_none(LAPIC_IRR),
	       "exactly once, IRR and ISR empty afterwards (%u)", hits);
}

/* The x2APIC SELF IPI register is another way to send a fixed self-IPI. */
static void test_sw_disable_x2apic_self_ipi(void)
{
	if (!apic_x2apic_offered())     /* SKIP, or FAIL where offered */
		return;
	enable_x2apic();
	hits = 0;
	apic_sw_disable();
	wrmsr(MSR_X2APIC_SELF_IPI, VEC);
	report(!apic_vec_test(LAPIC_IRR, VEC), "x2APIC, software-disabled: SELF IPI not accepted");
	apic_util_let_in(NULL, 0);
	report(hits == 0, "x2APIC, software-disabled: SELF IPI not delivered (%u)", hits);
	hits = 0;
	apic_sw_enable();
	wrmsr(MSR_X2APIC_SELF_IPI, VEC);
	apic_util_let_in(&hits, 1);
	report(hits == 1, "x2APIC, enabled again: SELF IPI delivered once (%u)", hits);
	reset_apic();
}

/* IA32_APIC_BASE: bits 12..MAXPHYADDR-1 are the base address, bits 9,
 * 7:0 and MAXPHYADDR..63 reserved (#GP). Relocation is only written and
 * read back; nothing touches the page while it is elsewhere. */
static void test_base_msr(void)
{
	uint64_t base = rdmsr(MSR_IA32_APIC_BASE), high, after;
	uint32_t maxphy = cpuid(0x80000000).a >= 0x80000008 ? cpuid(0x80000008).a & 0xff : 36;
	static const unsigned reserved[] = { 0, 7, 9 };
	int vec;

	report_info("MAXPHYADDR %u", maxphy);
	for (unsigned i = 0; i < ARRAY_SIZE(reserved); i++) {
		vec = apic_base_write_safe(base | BIT(reserved[i]));
		report(vec == GP_VECTOR && rdmsr(MSR_IA32_APIC_BASE) == base,
		       "IA32_APIC_BASE reserved bit %u: #GP (vector %d)", reserved[i], vec);
	}
	vec = apic_base_write_safe(base | BIT(maxphy));
	report(vec == GP_VECTOR && rdmsr(MSR_IA32_APIC_BASE) == base,
	       "IA32_APIC_BASE bit %u (MAXPHYADDR): #GP (vector %d)", maxphy, vec);
	high = base | BIT(maxphy - 1);
	vec = apic_base_write_safe(high);
	after = rdmsr(MSR_IA32_APIC_BASE);
	report(vec == 0 && after == high,
	       "base address bit %u (MAXPHYADDR-1) writable: 0x%lx (vector %d)",
	       maxphy - 1, after, vec);
	vec = apic_base_write_safe(base);
	report(vec == 0 && rdmsr(MSR_IA32_APIC_BASE) == base && apic_read(LAPIC_VERSION) != 0,
	       "base moved back to 0x%lx", base & APIC_BASE_ADDR);
}

/* Leaves the APIC dirty, disables and re-enables it, checks power-up state. */
static void test_hw_disable(void)
{
	uint64_t base = rdmsr(MSR_IA32_APIC_BASE), bsp = base & APIC_BASE_BSP;
	uint32_t version = apic_read(LAPIC_VERSION), id = apic_initial_id();

	cli();
	apic_sw_enable();
	apic_write(LAPIC_TPR, 0x20);
	apic_write(LAPIC_LVT_ERROR, 0xe0);
	apic_write(LAPIC_LDR, 0x01000000);
	apic_write(LAPIC_DFR, 0x0fffffff);
	apic_self_ipi(VEC);                     /* pending in IRR: class 6 > TPR */
	report(apic_vec_test(LAPIC_IRR, VEC), "IRR bit pending before the hardware disable");

	report(apic_base_write_safe(base & ~(uint64_t)APIC_BASE_EN) == 0, "WRMSR EN=0: no #GP");
	report(rdmsr(MSR_IA32_APIC_BASE) == (LAPIC_MMIO_BASE | bsp),
	       "IA32_APIC_BASE 0x%lx: EN and EXTD clear", rdmsr(MSR_IA32_APIC_BASE));
	report(!(cpuid(1).d & CPUID_1_EDX_APIC), "disabled: CPUID.1:EDX[9] reads 0");

	report(apic_base_write_safe(APIC_BASE_XAPIC | bsp) == 0, "WRMSR EN=1: no #GP");
	report(rdmsr(MSR_IA32_APIC_BASE) == (APIC_BASE_XAPIC | bsp),
	       "IA32_APIC_BASE 0x%lx: xAPIC mode again", rdmsr(MSR_IA32_APIC_BASE));
	report(cpuid(1).d & CPUID_1_EDX_APIC, "re-enabled: CPUID.1:EDX[9] reads 1");

	report_prefix_push("after re-enable");
	check_reset(apic_read(LAPIC_SVR) == 0xff, "SVR 0x%x (software-disabled)",
		    apic_read(LAPIC_SVR));
	check_reset(apic_read(LAPIC_LVT_ERROR) == LAPIC_LVT_MASKED, "error LVT 0x%x (masked)",
		    apic_read(LAPIC_LVT_ERROR));
	check_reset(apic_read(LAPIC_TPR) == 0, "TPR 0x%x", apic_read(LAPIC_TPR));
	check_reset(apic_read(LAPIC_LDR) == 0, "LDR 0x%x", apic_read(LAPIC_LDR));
	check_reset(apic_read(LAPIC_DFR) == 0xffffffff, "DFR 0x%x", apic_read(LAPIC_DFR));
	check_reset(apic_vec_none(LAPIC_IRR) && apic_vec_none(LAPIC_ISR), "IRR and ISR empty");
	report(apic_read(LAPIC_ID) == id << 24, "ID 0x%x = initial APIC ID << 24",
	       apic_read(LAPIC_ID));
	report(apic_read(LAPIC_VERSION) == version, "version 0x%x unchanged",
	       apic_read(LAPIC_VERSION));
	apic_sw_enable();
	hits = 0;
	sti();
	tsc_delay_us(APIC_QUIET_US);
	check_reset(hits == 0, "the IPI pending before the disable is gone (%u)", hits);
	hits = 0;
	apic_self_ipi(VEC);
	apic_util_wait(&hits, 1, APIC_WAIT_US);
	report(hits == 1, "a new self-IPI is delivered (%u)", hits);
	cli();
	report_prefix_pop();
}

int main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	report_prefix_push("apic_enable");
	if (!(cpuid(1).d & CPUID_1_EDX_APIC) || apic_is_x2apic()) {
		report_fail("needs a local APIC in xAPIC mode");
		return report_summary();
	}
	maxlvt = (unsigned)FIELD_GET(LAPIC_VERSION_MAXLVT, apic_read(LAPIC_VERSION));
	apic_catch_spurious();
	handle_irq(VEC, on_vec);
	cli();
	test_sw_disable_masks_lvts();
	test_sw_disable_ipi();
	test_sw_disable_x2apic_self_ipi();
	test_base_msr();
	test_hw_disable();
	return apic_test_end();
}
