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
 * tickvisor counts and logs these, one per element a string instruction
 * moves; the guest counts the accesses it makes the same way and prints
 * them last ("unassigned_mem: made R reads, W writes to unassigned
 * memory"): tests/suites.py matches tickvisor's counts against that line.
 * Every access to a hole goes through HOLE_RD/HOLE_WR or names its count
 * beside the instruction, so none is made without being counted.
 */
#include "lib/apic_util.h"
#include "lib/guest.h"

#define HOLE      0xd0000000ul          /* above RAM (64 MiB), below the APIC */
#define HOLE_PAGE ((volatile uint8_t *)HOLE)

static uint8_t ram_buf[256];
static unsigned long nreads, nwrites;   /* accesses made to unassigned memory */

/* One load or store to unassigned memory, counted. */
#define HOLE_RD(p)      (nreads++, *(p))
#define HOLE_WR(p, v)   (nwrites++, *(p) = (v))

/* REP STOSB of n bytes at d (DF as set): n counted stores. */
static void *hole_stosb(void *d, size_t *n)
{
	nwrites += *n;
	asm volatile("rep stosb" : "+D"(d), "+c"(*n) : "a"(0) : "memory");
	return d;
}

static void test_loads(void)
{
	volatile uint8_t *b = HOLE_PAGE + 0x40;
	uint32_t zx;
	uint64_t ax = 0x1234;

	report_prefix_push("loads");
	report(HOLE_RD(b) == 0xff, "8-bit load reads 0xff");
	report(HOLE_RD((volatile uint16_t *)b) == 0xffff, "16-bit load reads 0xffff");
	report(HOLE_RD((volatile uint32_t *)b) == 0xffffffffu, "32-bit load reads 0xffffffff");
	report(HOLE_RD((volatile uint64_t *)b) == ~0ull, "64-bit load reads all ones");
	nreads++;
	asm volatile("movzbl (%1), %0" : "=r"(zx) : "D"(b) : "memory");
	report(zx == 0xff, "MOVZX of a byte reads 0xff zero-extended (%#x)", zx);
	nreads++;
	asm volatile("mov (%1), %%ah" : "+a"(ax) : "D"(b) : "memory");
	report(ax == 0xff34, "load into AH fills bits 15:8 only (%#lx)", ax);
	report_prefix_pop();
}

static void test_stores(void)
{
	volatile uint32_t *w = (volatile uint32_t *)(HOLE + 0x80);
	volatile uint64_t *q = (volatile uint64_t *)(HOLE + 0x88);
	uint32_t wv;
	uint64_t qv;

	report_prefix_push("stores");
	HOLE_WR(w, 0);
	HOLE_WR((volatile uint8_t *)(HOLE + 0x81), 0x12);
	HOLE_WR(q, 0);
	wv = HOLE_RD(w);
	qv = HOLE_RD(q);
	report(wv == 0xffffffffu && qv == ~0ull,
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
	asm volatile("cld" ::: "memory");
	d = hole_stosb(d, &n);
	report(d == (void *)(HOLE + 0x3000) && n == 0,
	       "REP STOSB over two pages: rDI and rCX end as on the CPU");
	report(HOLE_RD((volatile uint32_t *)(HOLE + 0x1ffc)) == 0xffffffffu,
	       "the stored bytes are dropped");

	memset(ram_buf, 0, sizeof(ram_buf));
	d = ram_buf;
	s = (const void *)(HOLE + 0x20);
	n = sizeof(ram_buf) / 4;
	nreads += n;                    /* the dword loads; the stores go to RAM */
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
	nwrites += n;                   /* the byte stores; the loads are from RAM */
	asm volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
	eax = HOLE_RD((volatile uint32_t *)(HOLE + 0x100));
	report(n == 0 && d == (void *)(HOLE + 0x100 + sizeof(ram_buf)) && eax == 0xffffffffu,
	       "REP MOVSB from RAM into the hole is dropped");

	s = (const void *)(HOLE + 0x200);
	nreads++;
	asm volatile("lodsl" : "=a"(eax), "+S"(s) : : "memory");
	report(eax == 0xffffffffu && s == (const void *)(HOLE + 0x204), "LODSD reads all ones");

	d = (void *)(HOLE + 0x10ff);
	n = 0x200;
	asm volatile("std" ::: "memory");
	d = hole_stosb(d, &n);
	asm volatile("cld" ::: "memory");
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
	size_t n = 4096;                /* memset() as a kernel would */

	hole_stosb((void *)LAPIC_MMIO_BASE, &n);
	uint32_t ver = HOLE_RD(version);

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
	size_t n = 4096;

	hole_stosb((void *)LAPIC_MMIO_BASE, &n);
	HOLE_WR(tpr, 0x70);
	uint32_t ver = HOLE_RD(version), tp = HOLE_RD(tpr);

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
	/* No access to a hole after this line; the suite compares it with
	 * tickvisor's count. */
	printf("unassigned_mem: made %lu reads, %lu writes to unassigned memory\n", nreads,
	       nwrites);
	return report_summary();
}
