// SPDX-License-Identifier: BSD-2-Clause
/*
 * unassigned_mem: guest-physical addresses with nothing behind them act as
 * on a PC (DESIGN.md, "Guest environment"): a read nobody claims ends in
 * a master abort and returns all ones, a write is dropped, the CPU goes
 * on. Sources that agree: Bochs (memory/memory.cc: a read outside physical
 * memory is memset to 0xff, a write there is ignored), PCI (a master abort
 * completes a read with all ones), and for the xAPIC page KVM (lapic.c,
 * apic_mmio_read: with the APIC hardware-disabled or in x2APIC mode the
 * MMIO page reads 0xff, the KVM_X86_QUIRK_LAPIC_MMIO_HOLE behaviour).
 *
 * - a hole above RAM: loads of 1, 2, 4, 8 bytes, MOVZX and a load into
 *   AH read all ones of their width; stores are dropped;
 * - string instructions: REP STOS over two pages, REP MOVS out of the hole
 *   into RAM (fills ones), into the hole (dropped), LODS, one backwards;
 *   rCX/rSI/rDI end where the CPU leaves them;
 * - the xAPIC page while IA32_APIC_BASE.EN is 0 and in x2APIC mode
 *   (Intel SDM Vol. 3A, "Local APIC State After It Has Been Disabled" and
 *   "x2APIC Register Address Space": the MMIO page is not the APIC then,
 *   on a PC it is unassigned): a memset() and a read of 0xfee00030 give
 *   all ones, CR8/TPR do not change.
 * tickvisor counts and logs these (checked by tests/suites.py).
 */
#include "lib/apic_util.h"
#include "lib/guest.h"

#define HOLE      0xd0000000ul          /* above RAM (64 MiB), below the APIC */
#define HOLE_PAGE ((volatile uint8_t *)HOLE)

static uint8_t ram_buf[256];

static void test_loads(void)
{
	volatile uint8_t *b = HOLE_PAGE + 0x40;
	uint32_t zx;
	uint64_t ax = 0x1234;

	report_prefix_push("loads");
	report(*b == 0xff, "8-bit load reads 0xff");
	report(*(volatile uint16_t *)b == 0xffff, "16-bit load reads 0xffff");
	report(*(volatile uint32_t *)b == 0xffffffffu, "32-bit load reads 0xffffffff");
	report(*(volatile uint64_t *)b == ~0ull, "64-bit load reads all ones");
	asm volatile("movzbl (%1), %0" : "=r"(zx) : "D"(b) : "memory");
	report(zx == 0xff, "MOVZX of a byte reads 0xff zero-extended (%#x)", zx);
	asm volatile("mov (%1), %%ah" : "+a"(ax) : "D"(b) : "memory");
	report(ax == 0xff34, "load into AH fills bits 15:8 only (%#lx)", ax);
	report_prefix_pop();
}

static void test_stores(void)
{
	volatile uint32_t *w = (volatile uint32_t *)(HOLE + 0x80);

	report_prefix_push("stores");
	*w = 0;
	*(volatile uint8_t *)(HOLE + 0x81) = 0x12;
	*(volatile uint64_t *)(HOLE + 0x88) = 0;
	report(*w == 0xffffffffu && *(volatile uint64_t *)(HOLE + 0x88) == ~0ull,
	       "stores are dropped: the words still read all ones");
	report_prefix_pop();
}

static void test_strings(void)
{
	void *d = (void *)(HOLE + 0x1000);
	const void *s;
	size_t n = 2 * 4096;
	uint32_t eax;
	bool ones = true;

	report_prefix_push("strings");
	asm volatile("cld; rep stosb" : "+D"(d), "+c"(n) : "a"(0) : "memory");
	report(d == (void *)(HOLE + 0x3000) && n == 0,
	       "REP STOSB over two pages: rDI and rCX end as on the CPU");
	report(*(volatile uint32_t *)(HOLE + 0x1ffc) == 0xffffffffu, "the stored bytes are dropped");

	memset(ram_buf, 0, sizeof(ram_buf));
	d = ram_buf;
	s = (const void *)(HOLE + 0x20);
	n = sizeof(ram_buf) / 4;
	asm volatile("rep movsl" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
	for (size_t i = 0; i < sizeof(ram_buf); i++)
		ones &= ram_buf[i] == 0xff;
	report(ones && n == 0 && d == ram_buf + sizeof(ram_buf) &&
	       s == (const void *)(HOLE + 0x20 + sizeof(ram_buf)),
	       "REP MOVSD from the hole into RAM copies all ones");

	memset(ram_buf, 0x5a, sizeof(ram_buf));
	d = (void *)(HOLE + 0x100);
	s = ram_buf;
	n = sizeof(ram_buf);
	asm volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
	report(n == 0 && d == (void *)(HOLE + 0x100 + sizeof(ram_buf)) &&
	       *(volatile uint32_t *)(HOLE + 0x100) == 0xffffffffu,
	       "REP MOVSB from RAM into the hole is dropped");

	s = (const void *)(HOLE + 0x200);
	asm volatile("lodsl" : "=a"(eax), "+S"(s) : : "memory");
	report(eax == 0xffffffffu && s == (const void *)(HOLE + 0x204), "LODSD reads all ones");

	d = (void *)(HOLE + 0x10ff);
	n = 0x200;
	asm volatile("std; rep stosb; cld" : "+D"(d), "+c"(n) : "a"(0) : "memory");
	report(n == 0 && d == (void *)(HOLE + 0xeff), "REP STOSB backwards (DF=1) across a page");
	report_prefix_pop();
}

static void test_apic_disabled(void)
{
	uint64_t base = rdmsr(MSR_IA32_APIC_BASE);
	volatile uint32_t *version = (volatile uint32_t *)(LAPIC_MMIO_BASE + LAPIC_VERSION);

	report_prefix_push("APIC disabled");
	if (!report(apic_base_write_safe(base & ~(uint64_t)APIC_BASE_EN) == 0,
		    "IA32_APIC_BASE.EN cleared")) {
		report_prefix_pop();
		return;
	}
	write_cr8(3);
	memset((void *)LAPIC_MMIO_BASE, 0, 4096);
	uint32_t ver = *version;

	report(ver == 0xffffffffu, "after memset() 0xfee00030 reads all ones (%#x)", ver);
	report(read_cr8() == 3, "CR8 kept its value (%lu)", read_cr8());
	write_cr8(0);
	if (report(apic_base_write_safe(base) == 0, "IA32_APIC_BASE.EN set again")) {
		ver = *version;
		report((ver & 0xff) != 0xff, "the page is the APIC again (version %#x)", ver);
	}
	apic_sw_enable();
	report_prefix_pop();
}

static void test_apic_x2apic(void)
{
	volatile uint32_t *version = (volatile uint32_t *)(LAPIC_MMIO_BASE + LAPIC_VERSION);
	volatile uint32_t *tpr = (volatile uint32_t *)(LAPIC_MMIO_BASE + LAPIC_TPR);

	report_prefix_push("x2APIC mode");
	if (!apic_enter_x2apic()) {
		report_prefix_pop();
		return;
	}
	wrmsr(X2APIC_MSR(LAPIC_TPR), 0x20);
	memset((void *)LAPIC_MMIO_BASE, 0, 4096);
	*tpr = 0x70;
	uint32_t ver = *version, tp = *tpr;

	report(ver == 0xffffffffu && tp == 0xffffffffu, "MMIO page reads all ones (%#x, %#x)",
	       ver, tp);
	report(rdmsr(X2APIC_MSR(LAPIC_TPR)) == 0x20 && read_cr8() == 2,
	       "TPR (MSR 0x808) and CR8 untouched by the MMIO stores");
	wrmsr(X2APIC_MSR(LAPIC_TPR), 0);
	reset_apic();
	ver = *version;
	report((ver & 0xff) != 0xff, "back in xAPIC mode the page is the APIC (version %#x)", ver);
	report_prefix_pop();
}

int main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	report_prefix_push("unassigned_mem");
	test_loads();
	test_stores();
	test_strings();
	if (apic_is_x2apic()) {
		report_skip("the loader left x2APIC mode on");
	} else {
		cli();
		apic_sw_enable();
		test_apic_disabled();
		test_apic_x2apic();
	}
	report_prefix_pop();
	return report_summary();
}
