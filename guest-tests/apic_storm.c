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
 *
 * mode=random (issue 23.3): `moves=` bases drawn at random, a third each
 * from this guest's own RAM (16 MiB up to mem=), from the holes between
 * its RAM and 4 GiB (below the I/O APIC) and from 4 GiB up to MAXPHYADDR:
 * real parts let a guest move its APIC base as often as it likes (SDM
 * Vol. 3A, "Relocating the Local APIC Registers"; KVM maps the APIC page
 * wherever the base goes). tickvisor must neither run out of EPT tables
 * (it ended this guest after ~900 moves, status 250) nor keep them: the
 * next guests get the whole pool. Checked on the way: the page answers at
 * the bases below 4 GiB (only those are mapped here), and a RAM page the
 * base left holds again what this guest stored there before (the EPT maps
 * the same RAM back, as one 2 MiB page once more).
 */
#include "lib/apic_util.h"
#include "lib/guest.h"

#define FIRST_BASE 0x10000000ull        /* 256 MiB: above this guest's RAM */
#define STRIDE     (2ull << 20)
#define CHECK_EVERY 100u
#define SCATTER    577u         /* prime: a permutation for moves= not a multiple */

#define RAM_FROM   (16ull << 20)
#define HOLES_TO   0xfe000000ull        /* below the I/O APIC and HPET */

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void storm_random(uint64_t orig, uint32_t version, unsigned long moves)
{
	uint64_t ram = arg_get_ulong("mem", 64) << 20, top, base = 0, prev_ram = 0;
	uint32_t maxphy = cpuid(0x80000000).a >= 0x80000008 ? cpuid(0x80000008).a & 0xff : 36;
	unsigned long answered = 0, checked = 0, kept = 0, left = 0, wide = 0;

	top = 1ull << maxphy;
	for (unsigned long i = 0; i < moves; i++) {
		unsigned kind = (unsigned)(rnd() % 3);

		if (kind == 0)
			base = RAM_FROM + rnd() % (ram - RAM_FROM);
		else if (kind == 1)
			base = ram + rnd() % (HOLES_TO - ram);
		else
			base = 4 * GiB + rnd() % (top - 4 * GiB);
		base &= ~0xfffull;
		if (base == (rdmsr(MSR_IA32_APIC_BASE) & APIC_BASE_ADDR))
			continue;               /* the same page twice: no move */
		if (kind == 0)
			*(volatile uint64_t *)base = base ^ 0x5a5a;     /* RAM before the move */
		wrmsr(MSR_IA32_APIC_BASE, (orig & ~APIC_BASE_ADDR) | base);
		if (prev_ram && prev_ram != base) {
			left++;
			kept += *(volatile uint64_t *)prev_ram == (prev_ram ^ 0x5a5a);
		}
		prev_ram = kind == 0 ? base : 0;
		wide += kind == 2;
		if (kind < 2 && i % 16 == 0) {
			checked++;
			answered += *(volatile uint32_t *)(base + LAPIC_VERSION) == version;
		}
	}
	report(checked && answered == checked, "random bases: the page answered at %lu of %lu "
	       "checked bases below 4 GiB", answered, checked);
	report(left && kept == left, "random bases: %lu of %lu RAM pages the base left hold what "
	       "was stored there", kept, left);
	report(wide > moves / 4, "random bases: %lu of %lu moves above 4 GiB, up to MAXPHYADDR %u",
	       wide, moves, maxphy);
}

int main(int argc, char **argv)
{
	unsigned long moves = arg_get_ulong("moves", 1500);
	const char *mode = arg_get("mode");
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
	if (mode && !strcmp(mode, "random")) {
		storm_random(orig, version, moves);
		report(apic_base_write_safe(orig) == 0 && apic_read(LAPIC_VERSION) == version,
		       "after %lu moves the page is back at %#lx", moves, orig & APIC_BASE_ADDR);
		report_prefix_pop();
		return report_summary();
	}
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
