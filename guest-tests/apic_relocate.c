// SPDX-License-Identifier: BSD-2-Clause
/*
 * apic_relocate: moving the xAPIC register page (Intel SDM Vol. 3A,
 * "Relocating the Local APIC Registers"): IA32_APIC_BASE[MAXPHYADDR-1:12]
 * says where the 4-KiB page is. After a move the registers answer at the
 * new address: reads, TPR, a self-IPI and its EOI; then the page moves
 * back. While the APIC is elsewhere the old address has nothing behind it
 * and reads all ones, as unassigned memory on a PC (DESIGN.md).
 */
#include "lib/apic_util.h"
#include "lib/guest.h"

#define NEW_BASE   0xfeb00000ull        /* free MMIO space below the I/O APIC */
#define VEC        0x61u

static volatile uint32_t runs;

static void on_vec(struct ex_regs *r)
{
	volatile uint32_t *eoi = (volatile uint32_t *)(NEW_BASE + LAPIC_EOI);

	(void)r;
	runs++;
	*eoi = 0;                       /* EOI at the page's new place */
}

static uint32_t rd(uint64_t base, uint32_t off)
{
	return *(volatile uint32_t *)(base + off);
}

static void wr(uint64_t base, uint32_t off, uint32_t v)
{
	*(volatile uint32_t *)(base + off) = v;
}

static void test_move(void)
{
	uint64_t old = rdmsr(MSR_IA32_APIC_BASE), moved;
	uint32_t version = apic_read(LAPIC_VERSION), id = apic_read(LAPIC_ID);

	if (!report(apic_base_write_safe((old & ~APIC_BASE_ADDR) | NEW_BASE) == 0,
		    "IA32_APIC_BASE takes the base %#llx", NEW_BASE))
		return;
	moved = rdmsr(MSR_IA32_APIC_BASE);
	report((moved & APIC_BASE_ADDR) == NEW_BASE && (moved & ~APIC_BASE_ADDR) == (old & ~APIC_BASE_ADDR),
	       "IA32_APIC_BASE reads back the new base, other bits kept (%#lx)", moved);
	report(rd(NEW_BASE, LAPIC_VERSION) == version && rd(NEW_BASE, LAPIC_ID) == id,
	       "version and ID read at the new address");
	report(rd(LAPIC_MMIO_BASE, LAPIC_VERSION) == 0xffffffffu,
	       "the old address is unassigned: it reads all ones");
	wr(NEW_BASE, LAPIC_TPR, 0x20);
	report(rd(NEW_BASE, LAPIC_TPR) == 0x20, "TPR written and read at the new address");
	wr(NEW_BASE, LAPIC_TPR, 0);
	wr(NEW_BASE, LAPIC_ICR_HI, 0);
	wr(NEW_BASE, LAPIC_ICR_LO, (LAPIC_DEST_SELF << 18) | VEC);
	sti();
	apic_util_wait(&runs, 1, 1000);
	cli();
	report(runs == 1 && !(rd(NEW_BASE, LAPIC_ISR + 0x30) & LAPIC_VEC_BIT(VEC)),
	       "self-IPI through the moved ICR taken once, EOI at the new address (%u)", runs);
	report(apic_base_write_safe(old) == 0 && rdmsr(MSR_IA32_APIC_BASE) == old,
	       "the page moves back to %#lx", old & APIC_BASE_ADDR);
	report(apic_read(LAPIC_VERSION) == version, "registers answer at the default address again");
}

int main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	report_prefix_push("apic_relocate");
	if (apic_is_x2apic()) {
		report_skip("the loader left x2APIC mode on: no MMIO page to move");
		return report_summary();
	}
	handle_irq(VEC, on_vec);
	cli();
	apic_sw_enable();
	test_move();
	report_prefix_pop();
	return report_summary();
}
