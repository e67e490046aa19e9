// SPDX-License-Identifier: BSD-2-Clause
/*
 * apic_storm: moves the xAPIC page (Intel SDM Vol. 3A, "Relocating the
 * Local APIC Registers") to `moves=` different 2 MiB regions (default
 * 1,500) from 256 MiB up, in scattered order, then back. Each new base is
 * a place tickvisor's EPT must map differently (the APIC-access page, or
 * nothing); a guest doing this once made tickvisor hold ~1,500 EPT table
 * pages, and their out-of-order free at teardown overflowed the memory
 * pool's range table, so every later 64 MiB guest failed to load (issue
 * 15.1). The guests after this one in the same boot are the real check;
 * this one checks the page answers at some of the bases on the way.
 */
#include "lib/apic_util.h"
#include "lib/guest.h"

#define FIRST_BASE 0x10000000ull        /* 256 MiB: above this guest's RAM */
#define STRIDE     (2ull << 20)
#define CHECK_EVERY 100u
#define SCATTER    577u         /* prime: a permutation for moves= not a multiple */

int main(int argc, char **argv)
{
	unsigned long moves = arg_get_ulong("moves", 1500);
	uint64_t orig = rdmsr(MSR_IA32_APIC_BASE), base = 0;
	uint32_t version, answered = 0, checked = 0;

	(void)argc;
	(void)argv;
	report_prefix_push("apic_storm");
	if (apic_is_x2apic()) {
		report_skip("the loader left x2APIC mode on: no MMIO page to move");
		return report_summary();
	}
	cli();
	version = apic_read(LAPIC_VERSION);
	for (unsigned long i = 0; i < moves; i++) {
		/* Visit the regions out of address order, as a guest would not
		 * care to: tickvisor frees EPT tables in address order. */
		base = FIRST_BASE + (i * SCATTER % moves) * STRIDE;
		wrmsr(MSR_IA32_APIC_BASE, (orig & ~APIC_BASE_ADDR) | base);
		if (i % CHECK_EVERY == 0) {
			checked++;
			answered += *(volatile uint32_t *)(base + LAPIC_VERSION) == version;
		}
	}
	report(answered == checked && checked, "the page answered at %u of %u checked bases (last %#lx)",
	       answered, checked, base);
	report(apic_base_write_safe(orig) == 0 && apic_read(LAPIC_VERSION) == version,
	       "after %lu moves the page is back at %#lx", moves, orig & APIC_BASE_ADDR);
	report_prefix_pop();
	return report_summary();
}
