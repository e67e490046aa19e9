// SPDX-License-Identifier: BSD-2-Clause
/*
 * apic_narrow: xAPIC accesses narrower or wider than the 32 bits the SDM
 * defines ("Local APIC Register Address Space": others are undefined).
 * tickvisor gives them one meaning with APICv on and off: each register
 * is a 16-byte slot holding its 32 bits, then zeros; loads return the
 * bytes they cover, stores merge their bytes into the register (bytes
 * past it are dropped), and the result is an ordinary register write.
 */
#include "lib/apic_util.h"
#include "lib/guest.h"

#define PAGE ((volatile uint8_t *)LAPIC_MMIO_BASE)

static void test_loads(void)
{
	uint32_t version = apic_read(LAPIC_VERSION), lvt = apic_read(LAPIC_LVT_TIMER);
	uint64_t wide = *(volatile uint64_t *)(PAGE + LAPIC_LVT_TIMER);

	report(PAGE[LAPIC_VERSION] == (uint8_t)version, "byte load: low byte of version");
	report(*(volatile uint16_t *)(PAGE + LAPIC_VERSION + 2) == (uint16_t)(version >> 16),
	       "16-bit load at offset +2: high half of version");
	report(wide == lvt, "64-bit load of LVT timer: the register, then zeros (%#lx)", wide);
	report(PAGE[LAPIC_VERSION + 4] == 0 && PAGE[LAPIC_VERSION + 15] == 0,
	       "bytes past a register read 0");
}

static void test_stores(void)
{
	apic_write(LAPIC_TPR, 0);
	PAGE[LAPIC_TPR] = 0x20;
	report(apic_read(LAPIC_TPR) == 0x20, "byte store sets TPR (%#x)", apic_read(LAPIC_TPR));
	*(volatile uint16_t *)(PAGE + LAPIC_TPR) = 0x0030;
	report(apic_read(LAPIC_TPR) == 0x30, "16-bit store sets TPR (%#x)", apic_read(LAPIC_TPR));
	PAGE[LAPIC_TPR + 8] = 0x55;
	report(apic_read(LAPIC_TPR) == 0x30, "a byte past the register changes nothing (%#x)",
	       apic_read(LAPIC_TPR));
	/* AH, CH, DH, BH are bits 15:8 of their register (SDM Vol. 2, "REX
	 * Prefixes"); tickvisor once stored AL instead (issue 15.3). */
	asm volatile("mov %%ah, (%1)" : : "a"(0x4010u), "D"(PAGE + LAPIC_TPR) : "memory");
	report(apic_read(LAPIC_TPR) == 0x40, "store of AH sets TPR to bits 15:8 of EAX (%#x)",
	       apic_read(LAPIC_TPR));
	asm volatile("mov %%bh, (%1)" : : "b"(0x5020u), "D"(PAGE + LAPIC_TPR) : "memory");
	report(apic_read(LAPIC_TPR) == 0x50, "store of BH sets TPR to bits 15:8 of EBX (%#x)",
	       apic_read(LAPIC_TPR));
	*(volatile uint64_t *)(PAGE + LAPIC_TDCR) = 0x0000000100000003ull;
	report(apic_read(LAPIC_TDCR) == 0x3, "64-bit store into TDCR: its low 32 bits (%#x)",
	       apic_read(LAPIC_TDCR));
	apic_write(LAPIC_TPR, 0);
}

int main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	report_prefix_push("apic_narrow");
	if (apic_is_x2apic()) {
		report_skip("x2APIC mode: no MMIO page");
		return report_summary();
	}
	cli();
	apic_sw_enable();
	test_loads();
	test_stores();
	return report_summary();
}
